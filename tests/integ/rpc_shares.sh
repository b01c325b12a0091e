#!/bin/sh
# SPDX-License-Identifier: MIT
# Share enumeration and server information over IPC$ (srvsvc, wkssvc):
# smbclient -L, rpcclient and net rpc share list against rdaxd, with
# signing required and without; a "browseable = no" share is not listed
# but still reachable by name; malformed DCE/RPC PDUs (tests/integ/
# rpcbad.c) fail a call or a pipe, never rdaxd.
. "$(dirname "$0")/lib.sh"
need smbclient rpcclient net
[ -x "$B/tests/rpcbad" ] || die "$B/tests/rpcbad not built (make tests)"

share_dir "$T/data" "$T/pub" "$T/hidden"
make_user "$T/passdb" alice 'pa55 word'
echo visible >"$T/hidden/inside.txt"
long="a comment long enough that two dozen of them need more than one fragment"
{
	cat <<CONF
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
	# enough shares for a NetShareEnumAll answer of several fragments
	for i in 01 02 03 04 05 06 07 08 09 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24; do
		printf '[extra%s]\n\tpath = %s\n\tcomment = %s %s\n' "$i" "$T/pub" "$long" "$i"
	done
} >"$T/smb.conf"
start_rdaxd srv --config "$T/smb.conf"

# -s /dev/null: no system smb.conf
user='alice%pa55 word'
sc() { smbclient -s /dev/null -p "$PORT" -U "$user" "$@" 2>&1; }
rc() { rpcclient -s /dev/null -p "$PORT" -U "$user" "$@" 127.0.0.1 2>&1; }
# not_listed PATTERN CMD...: the command succeeds and says nothing matching
not_listed() {
	_pat=$1
	shift
	"$@" >"$T/nl.out" 2>&1 || { cat "$T/nl.out"; return 1; }
	! grep -Eq -- "$_pat" "$T/nl.out"
}
hidden_re='^[[:space:]]*(netname: )?hidden([[:space:]]|$)'

for sign in off required; do
	opt="--option=client signing=$sign"
	n0=$(wc -l <"$T/srv.log")
	check_output "smbclient -L lists data with its comment (signing $sign)" \
		"data +Disk +the data share" sc -L //127.0.0.1 "$opt"
	check_output "smbclient -L lists pub (signing $sign)" "pub +Disk" sc -L //127.0.0.1 "$opt"
	check_output "smbclient -L lists IPC\$ (signing $sign)" \
		'IPC\$ +IPC +IPC Service \(rdax test server\)' sc -L //127.0.0.1 "$opt"
	check_output "smbclient -L lists the last of 27 shares, a reply of several fragments (signing $sign)" \
		"extra24 +Disk +$long 24" sc -L //127.0.0.1 "$opt"
	check "smbclient -L does not list hidden (signing $sign)" \
		not_listed "$hidden_re" sc -L //127.0.0.1 "$opt"
	if [ "$sign" = required ]; then
		check_output "rdaxd logged signed sessions" "for alice as alice, SMB 3.1.1, signed" \
			sh -c "tail -n +$((n0 + 1)) '$T/srv.log'"
	fi
	check_output "rpcclient netshareenumall: path as C:\\... (signing $sign)" \
		"path:[[:space:]]+C:$(printf "%s" "$T/data" | sed 's|/|\\\\|g')\$" rc "$opt" -c netshareenumall
	check_output "rpcclient netshareenumall: remark (signing $sign)" \
		"remark:[[:space:]]+the data share" rc "$opt" -c netshareenumall
	check "rpcclient netshareenumall does not list hidden (signing $sign)" \
		not_listed "$hidden_re" rc "$opt" -c netshareenumall
	check_output "rpcclient netsharegetinfo hidden (level 502) (signing $sign)" \
		"netname:[[:space:]]+hidden" rc "$opt" -c "netsharegetinfo hidden"
	check_output "rpcclient netsharegetinfo hidden 1: its remark (signing $sign)" \
		"remark:[[:space:]]+not listed" rc "$opt" -c "netsharegetinfo hidden 1"
	check_output "rpcclient srvinfo: server string (signing $sign)" \
		"RDAX +Wk Sv .*rdax test server" rc "$opt" -c srvinfo
done
check_output "smbclient -L, encrypted" "data +Disk +the data share" \
	sc -L //127.0.0.1 --client-protection=encrypt
check_output "smbclient -L, SMB 2.1" "data +Disk +the data share" sc -L //127.0.0.1 -m SMB2_10
check_output "rpcclient netshareenum (no special shares)" "netname: extra24" \
	rc -c "netshareenum 1"
check "rpcclient netshareenum leaves IPC\$ out" not_listed 'IPC\$' rc -c "netshareenum 1"
check_fails_output "netsharegetinfo of an unknown share: WERR_INVALID_NAME" "WERR_INVALID_NAME" \
	rc -c "netsharegetinfo nosuch"
check_output "the hidden share is reachable by name" "inside.txt" \
	sc //127.0.0.1/hidden -c ls

# net rpc share list goes through libnetapi, which knows no port but
# 445 (and 139): rdaxd on 445 in a network namespace of its own
if [ "$(id -u)" != 0 ] || ! unshare -n true 2>/dev/null; then
	skip_case "net rpc share list" "not root: no network namespace for rdaxd on port 445"
else
	cat >"$T/ns.sh" <<NS
ip link set lo up || exit 3
"$RDAXD" --listen tcp://127.0.0.1:445 --config "$T/smb.conf" >"$T/ns.log" 2>&1 &
p=\$!
i=0
while ! grep -q ready "$T/ns.log"; do
	i=\$((i + 1))
	[ \$i -gt 100 ] && { cat "$T/ns.log"; kill \$p; exit 4; }
	sleep 0.1
done
net -s /dev/null rpc share list -I 127.0.0.1 -U '$user' "\$@"
rc=\$?
kill \$p
wait \$p || rc=5
exit \$rc
NS
	check_output "net rpc share list" "^extra24\$" unshare -n sh "$T/ns.sh"
	check_output "net rpc share list --long, signing required" \
		"^data +Disk +the data share" unshare -n sh "$T/ns.sh" --long \
		--option='client signing=required'
	check "net rpc share list does not list hidden" \
		not_listed "$hidden_re" unshare -n sh "$T/ns.sh"
fi

# raw DCE/RPC: binds, fragments, malformed PDUs; rdaxd keeps serving
check_output "bad PDUs fault their call or break their pipe only" "^all ok" \
	sh -c "'$B/tests/rpcbad' 127.0.0.1 $PORT alice '$T/alice.pw' | tee '$T/rpcbad.out'"
check_output "responses split at the client's max_recv_frag" \
	"max_recv_frag 1432: NetShareEnumAll in [2-9] fragment" cat "$T/rpcbad.out"
check_output "still serving after the bad input" "data +Disk" sc -L //127.0.0.1
check "rdaxd stops cleanly" stop_rdaxd
finish
