#!/bin/sh
# SPDX-License-Identifier: MIT
# multichannel_client.sh with rdaxd as the server: rdaxd in the server's
# namespace listens on the three addresses and lists them (interfaces =,
# Samba's syntax); the multichannel-off case uses
# "server multi channel support = no". This file is both the test (run,
# it hands itself to multichannel_client.sh as MC_SERVER_SH) and the
# definitions that test sources.
if [ -z "${MC_RDAXD_DEFS:-}" ]; then
	here=$(cd "$(dirname "$0")" && pwd)
	MC_RDAXD_DEFS=1 MC_SERVER_SH=$here/$(basename "$0") exec sh "$here/multichannel_client.sh"
fi

rdaxd_mc() {
	_mc=$1
	share_dir "$T/rshare"
	make_user "$T/passdb" bob 'mc pass 1'
	PORT=$(ip netns exec "$NS_S" python3 "$top/tools/lib/free-port.py" "$SA")
	cat >"$T/rdaxd.$_mc.conf" <<CONF
[global]
	listen = tcp://$SA:$PORT, tcp://$SB:$PORT, tcp://$SC:$PORT
	passdb file = $T/passdb
	server multi channel support = $_mc
	interfaces = $SA;speed=10000000000,capability=RSS $SB;speed=10000000000,capability=RSS $SC;speed=10000000000,capability=RSS
[data]
	path = $T/rshare
	read only = no
CONF
	rm -f "$T/rdaxd.$_mc.log"
	ip netns exec "$NS_S" "$RDAXD" --config "$T/rdaxd.$_mc.conf" >"$T/rdaxd.$_mc.log" 2>&1 &
	SRV_PID=$!
	pids="$pids $SRV_PID"
	_i=0
	until grep -q ready "$T/rdaxd.$_mc.log"; do
		kill -0 $SRV_PID 2>/dev/null || die "rdaxd did not start: $(cat "$T/rdaxd.$_mc.log")"
		_i=$((_i + 1)); [ $_i -gt 100 ] && die "rdaxd not ready"
		sleep 0.1
	done
	AUTH="--user bob --password-file $T/bob.pw"
	FIO_AUTH="--user=bob --password_file=$T/bob.pw"
	SHARE=data
	SHARE_DIR=$T/rshare
}
mc_server_start() { rdaxd_mc yes; }
mc_server_nomc_start() { rdaxd_mc no; }
