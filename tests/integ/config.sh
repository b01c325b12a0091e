#!/bin/sh
# SPDX-License-Identifier: MIT
# rdaxd configuration: smb.conf syntax through inih, errors naming
# file and line with exit status 2, and the password database.
. "$(dirname "$0")/lib.sh"

mkdir -p "$T/a" "$T/b"
cat >"$T/good.conf" <<CONF
; comment
# another comment
[global]
	server signing = mandatory
	server min protocol = SMB3_00
	smb encrypt = desired
	unknown thing = 1
[alpha]
	path = $T/a
	read only = yes
	valid users = alice, bob
[beta]
	path = $T/b
	writeable = yes
	guest ok = yes
CONF
check_output "--test-config lists the shares" "\\[alpha\\] $T/a read-only" \
	$RDAXD --config "$T/good.conf" --test-config
check_output "guest ok is read" "\\[beta\\] $T/b guest-ok" \
	$RDAXD --config "$T/good.conf" --test-config
check_output "an unknown parameter is a warning with file:line" \
	"good.conf:7: unknown parameter 'unknown thing'" \
	$RDAXD --config "$T/good.conf" --test-config

printf '[global]\n\tserver signing = auto\n[x]\n\tpath = %s\n\tread only = maybe\n' "$T/a" >"$T/bad.conf"
$RDAXD --config "$T/bad.conf" --test-config >"$T/out" 2>&1
rc=$?
check "bad value exits 2" test $rc = 2
check_output "bad value names file and line" "bad.conf:5: invalid value 'maybe' for 'read only'" \
	cat "$T/out"

printf '[x]\n\tpath = %s\n[y]\n\tpath = %s\n[x]\n\tread only = yes\n' "$T/a" "$T/b" >"$T/dup.conf"
check_output "a repeated section adds to the first (as in Samba)" \
	"\\[x\\] $T/a read-only" $RDAXD --config "$T/dup.conf" --test-config --guest
printf '[bad/name]\n\tpath = %s\n' "$T/a" >"$T/badname.conf"
$RDAXD --config "$T/badname.conf" --test-config --guest >"$T/out" 2>&1
rc=$?
check "invalid share name exits 2" test $rc = 2
check_output "... naming file and line" "badname.conf:2: invalid share name" cat "$T/out"

printf '[x]\n\tread only = no\n' >"$T/nopath.conf"
$RDAXD --config "$T/nopath.conf" --test-config --guest >"$T/out" 2>&1
rc=$?
check "share without path exits 2" test $rc = 2
check_output "... and names the share" "share \\[x\\] has no path" cat "$T/out"

$RDAXD --share x="$T/missing" --guest --test-config >"$T/out" 2>&1
rc=$?
check "missing share directory exits 2" test $rc = 2
check_output "... and names the path" "$T/missing: No such file" cat "$T/out"

$RDAXD --config "$T/nonexistent.conf" >"$T/out" 2>&1
rc=$?
check "missing config file exits 2" test $rc = 2
check_output "... and names it" "nonexistent.conf: No such file" cat "$T/out"

$RDAXD --share x="$T/a" >"$T/out" 2>&1
rc=$?
check "no passdb and no guest exits 2" test $rc = 2
$RDAXD --bogus >"$T/out" 2>&1
rc=$?
check "unknown option exits 2" test $rc = 2
check_output "usage hint" "Try 'rdaxd --help'" cat "$T/out"

# password database
printf 'pw one\n' | $RDAX passwd --passdb "$T/pdb" alice
check "rdax passwd creates the db" test -f "$T/pdb"
check_output "passdb is mode 0600" "^600$" stat -c %a "$T/pdb"
check_output "passdb holds the NT hash" "^alice:[0-9A-F]{32}$" cat "$T/pdb"
printf 'pw two\n' | $RDAX passwd --passdb "$T/pdb" bob
printf 'pw three\n' | $RDAX passwd --passdb "$T/pdb" alice
check_output "replacing a user keeps one line" "^2$" sh -c "wc -l <'$T/pdb'"
check_fails "empty password refused" sh -c "printf '\\n' | $RDAX passwd --passdb '$T/pdb' carol"
check_fails "user name with ':' refused" sh -c "printf 'x\\n' | $RDAX passwd --passdb '$T/pdb' 'a:b'"
chmod 644 "$T/pdb"
$RDAXD --share x="$T/a" --passdb "$T/pdb" --listen tcp://127.0.0.1:1 >"$T/out" 2>&1
rc=$?
check "a group/world-readable passdb is refused" test $rc != 0
check_output "... with the fix" "chmod 600" cat "$T/out"
# the command line overrides the file; [global] guest ok is every share's default
mkdir -p "$T/b" "$T/c"
cat >"$T/ovr.conf" <<CONF
[global]
	guest ok = yes
	workers = 3
[a]
	path = $T/a
[b]
	path = $T/b
	guest ok = no
CONF
check_output "--share overrides a section's path" "\\[a\\] $T/c guest-ok" \
	$RDAXD --config "$T/ovr.conf" --share a="$T/c" --test-config
check_output "[global] guest ok is a default a share can turn off" "\\[b\\] $T/b store" \
	$RDAXD --config "$T/ovr.conf" --test-config
check_fails "a share given twice on the command line is refused" \
	$RDAXD --config "$T/ovr.conf" --share d="$T/a" --share d="$T/b" --test-config
for bad in "max connections = 0" "max open files = 0" "workers = 300"; do
	printf '[global]\n\t%s\n[x]\n\tpath = %s\n' "$bad" "$T/a" >"$T/bad.conf"
	check_fails "'$bad' is refused" $RDAXD --config "$T/bad.conf" --guest --test-config
done
check_fails "--test-config checks the passdb" \
	$RDAXD --share x="$T/a" --passdb "$T/nonexistent.pdb" --test-config
check_fails_output "... and names it" "passdb $T/nonexistent.pdb: No such file" \
	$RDAXD --share x="$T/a" --passdb "$T/nonexistent.pdb" --test-config
printf '[global]\n\tnuma node = 99\n[x]\n\tpath = %s\n' "$T/a" >"$T/numa.conf"
$RDAXD --config "$T/numa.conf" --guest --listen tcp://127.0.0.1:1 >"$T/out" 2>&1
rc=$?
check "numa node = 99 on this machine exits 2" test $rc = 2
check_output "... naming the nodes it has" "numa node = 99: this machine has nodes 0-" cat "$T/out"
printf '[global]\n\tnuma node = 0\n[x]\n\tpath = %s\n' "$T/a" >"$T/numa0.conf"
# it serves until the timeout stops it (status 124)
timeout 2 $RDAXD --config "$T/numa0.conf" --guest --listen tcp://127.0.0.1:$(free_port) \
	>"$T/out" 2>&1
rc=$?
check "numa node = 0: rdaxd serves until stopped" test $rc = 124
check_output "... with its workers on node 0" "NUMA: workers, their queues and buffers on node 0" \
	cat "$T/out"
finish
