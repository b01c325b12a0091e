# SPDX-License-Identifier: MIT
# Start a scratch Samba smbd on a loopback port with its own smb.conf,
# for tests and benchmarks that run it side by side with rdaxd (sourced).
#
#   scratch_smbd DIR NAME[:guest]...
#
# Each share NAME is the directory DIR/NAME (":guest" adds guest ok).
# User root gets the password in DIR/root.pw (mode 0600). Sets SMBD_PORT
# and SMBD_PID; returns non-zero (with smbd's output on stderr) if smbd
# does not start. smbd must run as root to switch to the session user.
#
# Optional, for multichannel tests:
#   SMBD_ADDRS   addresses to listen on and list as interfaces (default
#                127.0.0.1); the first is where readiness is checked
#   SMBD_IFOPTS  appended to each, e.g. ";speed=1000000000,capability=RSS"
#   SMBD_GLOBAL  more [global] lines, e.g. "server multi channel support = yes"
#   SMBD_NETNS   a network namespace to run smbd in

scratch_smbd() {
	_d=$1
	shift
	mkdir -p "$_d/private" "$_d/lock" "$_d/state" "$_d/cache" "$_d/run" \
		"$_d/ncalrpc" || return 1
	_addrs=${SMBD_ADDRS:-127.0.0.1}
	_a0=${_addrs%% *}
	_ns=""
	[ -n "${SMBD_NETNS:-}" ] && _ns="ip netns exec $SMBD_NETNS"
	# sourced from the tree's top (or with $top set): its port helper
	_fp=${top:-.}/tools/lib/free-port.py
	[ -f "$_fp" ] || _fp=tools/lib/free-port.py
	SMBD_PORT=$($_ns python3 "$_fp" "$_a0") || return 1
	_ifs=""
	for _a in $_addrs; do
		_ifs="$_ifs \"$_a${SMBD_IFOPTS:-}\""
	done
	cat >"$_d/smb.conf" <<CONF
[global]
	smb ports = $SMBD_PORT
	interfaces =$_ifs
	bind interfaces only = yes
	private dir = $_d/private
	lock directory = $_d/lock
	state directory = $_d/state
	cache directory = $_d/cache
	pid directory = $_d/run
	ncalrpc dir = $_d/ncalrpc
	log file = $_d/log.%m
	passdb backend = tdbsam:$_d/private/passdb.tdb
	server role = standalone server
	map to guest = bad user
	load printers = no
	printcap name = /dev/null
	disable spoolss = yes
	server min protocol = SMB2_10
CONF
	[ -n "${SMBD_GLOBAL:-}" ] && printf '\t%s\n' "$SMBD_GLOBAL" >>"$_d/smb.conf"
	for _s in "$@"; do
		_n=${_s%:guest}
		mkdir -p "$_d/$_n" || return 1
		printf '[%s]\n\tpath = %s\n\tread only = no\n' "$_n" "$_d/$_n" >>"$_d/smb.conf"
		if [ "$_n" != "$_s" ]; then
			# the guest account (nobody) must reach the share
			chmod 777 "$_d/$_n"
			chmod 711 "$_d" "$(dirname "$_d")"
			printf '\tguest ok = yes\n' >>"$_d/smb.conf"
		fi
	done
	_pw=scratch-$$-pw
	printf '%s\n%s\n' "$_pw" "$_pw" |
		smbpasswd -c "$_d/smb.conf" -s -a root >/dev/null || return 1
	printf '%s\n' "$_pw" >"$_d/root.pw"
	chmod 600 "$_d/root.pw"
	# its own session: smbd signals its whole process group on exit
	$_ns setsid smbd --foreground --no-process-group --configfile="$_d/smb.conf" \
		--debug-stdout -d 1 >"$_d/smbd.out" 2>&1 &
	SMBD_PID=$!
	_i=0
	until $_ns python3 -c "import socket; socket.create_connection(('$_a0', $SMBD_PORT), 1)" 2>/dev/null; do
		_i=$((_i + 1))
		if [ $_i -gt 100 ] || ! kill -0 "$SMBD_PID" 2>/dev/null; then
			cat "$_d/smbd.out" >&2
			return 1
		fi
		sleep 0.1
	done
}
