#!/bin/sh
# SPDX-License-Identifier: MIT
# Parallel opens on rdaxd: 64 client processes at once each create, write,
# close and read back their own files and open-close one shared file many
# times. Afterwards every file exists exactly once with its content, the
# shared file is intact, no open is left behind (rdaxd's fd count is back
# where it was) and rdaxd still serves and stops cleanly. Then a small
# bench/opentest run (8 clients x 64 creates) checks its JSON.
. "$(dirname "$0")/lib.sh"

NCLI=64 NFILES=4 NSHARED=8
share_dir "$T/share" "$T/local"
start_rdaxd srv --share data="$T/share" --guest
U="smb://127.0.0.1:$PORT"
G="--guest -q"
head -c 100000 /dev/urandom >"$T/share/shared.bin"
cp "$T/share/shared.bin" "$T/shared.ref"
fds() { ls "/proc/$RDAXD_PID/fd" | wc -l; }
check "rdaxd answers before the run" $RDAX $G ls "$U/data"
fd0=$(fds)

client() { # N: one client process's work; failures go to $T/fail.N
	n=$1
	j=0
	while [ $j -lt $NFILES ]; do
		f="c${n}_f$j.bin"
		{ echo "client $n file $j"; head -c $((4096 * (j + 1) + n)) /dev/urandom; } \
			>"$T/local/$f"
		$RDAX $G put "$T/local/$f" "$U/data/$f" || echo "put $f" >>"$T/fail.$n"
		$RDAX $G get "$U/data/$f" "$T/local/$f.back" &&
			cmp -s "$T/local/$f" "$T/local/$f.back" || echo "verify $f" >>"$T/fail.$n"
		j=$((j + 1))
	done
	k=0
	while [ $k -lt $NSHARED ]; do
		$RDAX $G get "$U/data/shared.bin" "$T/local/shared.$n" &&
			cmp -s "$T/shared.ref" "$T/local/shared.$n" ||
			echo "shared read $k" >>"$T/fail.$n"
		k=$((k + 1))
	done
}

i=0
cpids=""
while [ $i -lt $NCLI ]; do
	client $i &
	cpids="$cpids $!"
	i=$((i + 1))
done
for p in $cpids; do
	wait "$p"
done
if ls "$T"/fail.* >/dev/null 2>&1; then
	not_ok "$(cat "$T"/fail.* | wc -l) client operation(s) failed:"
	cat "$T"/fail.* | head -n 20 | sed 's/^/    | /'
else
	ok "$NCLI clients x ($NFILES create/write/close/verify + $NSHARED shared opens)"
fi

$RDAX $G ls "$U/data" >"$T/ls.out" 2>&1
check_output "ls lists every file once" "^$((NCLI * NFILES + 1))\$" \
	sh -c "awk '{ print \$NF }' '$T/ls.out' | sort -u | wc -l"
check_output "... and no name twice" "^$((NCLI * NFILES + 1))\$" \
	sh -c "wc -l <'$T/ls.out'"
check_output "the share holds exactly those files" "^$((NCLI * NFILES + 1))\$" \
	sh -c "ls '$T/share' | wc -l"
bad=0
i=0
while [ $i -lt $NCLI ]; do
	j=0
	while [ $j -lt $NFILES ]; do
		f="c${i}_f$j.bin"
		cmp -s "$T/local/$f" "$T/share/$f" || bad=$((bad + 1))
		j=$((j + 1))
	done
	i=$((i + 1))
done
check "every file has its content on the server" test "$bad" = 0
check_output "stat of a client's file" "Size: $((4096 * 2 + 7 + 1 + $(printf 'client 7 file 1' | wc -c)))" \
	$RDAX $G stat "$U/data/c7_f1.bin"
check "the shared file is intact" cmp "$T/shared.ref" "$T/share/shared.bin"
check_output "stat of the shared file" "Size: 100000" $RDAX $G stat "$U/data/shared.bin"
# creates and closes of 64 clients at once: no lost, no duplicated opens
PC=$B/tests/parallel_creates
[ -x "$PC" ] || die "$PC not built (make tests)"
check "parallel_creates: 64 clients x 16 held creates, 32 raced names, 1 common file" \
	"$PC" --guest "$U/data/pc" 64 16 32
sed 's/^/    | /' "$T/check.out"
check_output "... the directory holds 64 x 16 + 32 + 1 names" "^$((64 * 16 + 32 + 1))\$" \
	sh -c "ls '$T/share/pc' | wc -l"
check_output "... each own file once, 64 bytes" "^$((64 * 16))\$" \
	sh -c "find '$T/share/pc' -name 'c*_f*' -size 64c | wc -l"
check_output "... each raced name once, the winner's 64 bytes" "^32\$" \
	sh -c "find '$T/share/pc' -name 'shared_*' -size 64c | wc -l"
check_output "... the common file has all 64 writes" "^$((64 * 64))\$" \
	sh -c "wc -c <'$T/share/pc/common'"
# rdaxd's own count of opens (SIGUSR1 stats, summed over its workers)
n0=$(wc -l <"$T/srv.log")
kill -USR1 "$RDAXD_PID"
sleep 0.5
check_output "rdaxd holds no open afterwards (stats: opens 0, sessions 0)" "^0 0\$" \
	sh -c "tail -n +$((n0 + 1)) '$T/srv.log' | grep 'stats worker' |
		sed -n 's/.* sessions \([0-9]*\) opens \([0-9]*\) .*/\1 \2/p' |
		awk '{ s += \$1; o += \$2; n++ } END { if (n) print s, o }'"

# every open was closed: rdaxd holds no more descriptors than before
sleep 0.5
fd1=$(fds)
check "no open left behind (rdaxd fds $fd0 -> $fd1)" test "$fd1" -le "$fd0"

# the opens benchmark, small: every create lands, figures in the JSON
check "bench/opentest 8 clients x 64 creates" "$top/bench/opentest" \
	--target "rdaxd=$U/data" --clients 8 --files 64 --out "$T/opentest.json"
sed 's/^/    | /' "$T/check.out"
check_output "opentest.json has 4 jobs without errors" "^4 0\$" \
	sh -c "echo \$(grep -c '\"error\": 0' '$T/opentest.json') \$(grep -c '\"error\": [1-9]' '$T/opentest.json')"
check_output "opentest created 1+2+4+8 x 64 files" "^960\$" \
	sh -c "find '$T/share' -path '*opentest-*' -type f | wc -l"
check "rdaxd still serves" $RDAX $G ls "$U/data"
check "SIGTERM stops rdaxd cleanly" stop_rdaxd
finish
