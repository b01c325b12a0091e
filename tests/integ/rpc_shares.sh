#!/bin/sh
# SPDX-License-Identifier: MIT
# Share enumeration and server information over IPC$ (srvsvc, wkssvc):
# smbclient -L, rpcclient and net rpc against rdaxd, signed and not; a
# "browseable = no" share is not listed but still reachable; malformed
# DCE/RPC PDUs break a request or a pipe, never rdaxd.
. "$(dirname "$0")/lib.sh"
need smbclient rpcclient net python3

share_dir "$T/data" "$T/pub" "$T/hidden"
make_user "$T/passdb" alice 'pa55 word'
echo visible >"$T/hidden/inside.txt"
cat >"$T/smb.conf" <<CONF
[global]
	passdb file = $T/passdb
	server string = rdax test server
[data]
	path = $T/data
	comment = the data share
[pub]
	path = $T/pub
[hidden]
	path = $T/hidden
	browseable = no
	comment = not listed
CONF
start_rdaxd srv --config "$T/smb.conf"

# -s /dev/null: no system smb.conf
user='alice%pa55 word'
sc() { smbclient -s /dev/null -p "$PORT" -U "$user" "$@" 2>&1; }
rc() { rpcclient -s /dev/null -p "$PORT" -U "$user" "$@" 127.0.0.1 2>&1; }
nr() { net -s /dev/null rpc -I 127.0.0.1 -p "$PORT" -U "$user" "$@" 2>&1; }

for sign in off required; do
	opt="--option=client signing=$sign"
	n0=$(wc -l <"$T/srv.log")
	check_output "smbclient -L lists data with its comment (signing $sign)" \
		"data +Disk +the data share" sc -L //127.0.0.1 "$opt"
	check_output "smbclient -L lists pub (signing $sign)" "pub +Disk" sc -L //127.0.0.1 "$opt"
	check_output "smbclient -L lists IPC\$ as IPC (signing $sign)" \
		'IPC\$ +IPC +IPC Service \(rdax test server\)' sc -L //127.0.0.1 "$opt"
	check_fails_output "smbclient -L does not list hidden (signing $sign)" "hidden" \
		sh -c "smbclient -s /dev/null -p $PORT -U '$user' -L //127.0.0.1 '$opt' 2>&1 | grep -q hidden && echo hidden && exit 1; exit 1"
	if [ "$sign" = required ]; then
		check_output "rdaxd logged a signed session" "for alice as alice, SMB 3.1.1, signed" \
			sh -c "tail -n +$((n0 + 1)) '$T/srv.log'"
	fi
	check_output "rpcclient netshareenumall: data's path (signing $sign)" \
		"path: +C:$(echo "$T/data" | sed 's|/|\\\\\\\\|g')" rc "$opt" -c netshareenumall
	check_output "rpcclient netshareenumall: remark (signing $sign)" \
		"remark: +the data share" rc "$opt" -c netshareenumall
	check_output "rpcclient netsharegetinfo hidden (signing $sign)" \
		"netname: +hidden" rc "$opt" -c "netsharegetinfo hidden"
	check_output "rpcclient netsharegetinfo level 1 (signing $sign)" \
		"remark: +not listed" rc "$opt" -c "netsharegetinfo hidden 1"
	check_output "rpcclient srvinfo (signing $sign)" "rdax test server" rc "$opt" -c srvinfo
	check_output "net rpc share list (signing $sign)" "^data\$" nr "$opt" share list
done
check_fails_output "net rpc share list hides hidden" "^hidden\$" \
	sh -c "net -s /dev/null rpc -I 127.0.0.1 -p $PORT -U '$user' share list 2>&1 | grep -x hidden; exit 1"
check_fails "netsharegetinfo of an unknown share fails" rc -c "netsharegetinfo nosuch"
check_output "the hidden share is reachable by name" "inside.txt" \
	sc //127.0.0.1/hidden -c ls

# raw DCE/RPC over SMB2: malformed PDUs, then the server still serves
check_output "malformed PDUs: faults or a broken pipe, rdaxd lives" "^all ok" \
	python3 "$top/tests/integ/rpc_raw.py" 127.0.0.1 "$PORT" alice 'pa55 word'
check_output "still serving after the bad input" "data +Disk" sc -L //127.0.0.1
finish
