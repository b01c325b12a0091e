#!/bin/sh
# SPDX-License-Identifier: MIT
# Injected faults inside a running rdaxd (tests/integ/faultinj.c preloaded,
# threads=workers: the request path, not start-up or accept): failed
# allocations, failed socket calls (EIO, ECONNRESET, EPIPE) and transient
# ones (EAGAIN, EINTR, short transfers), switched on while rdax CLI clients
# and fio (build/fio-rdax.so, with verify) put and get files.
#
#  - rdaxd never crashes;
#  - a request that fails does so cleanly: the client gets an NTSTATUS or
#    sees its connection closed, and exits with an error (never hangs);
#  - every transfer acknowledged (exit 0) is byte-identical, and a file
#    written before the faults is untouched;
#  - transient socket errors cost nothing: every transfer succeeds;
#  - with the faults off, new clients (rdax, fio, smbclient) are served
#    normally and SIGUSR1 shows no connection, session or open left;
#  - the shim's counters show that faults were injected in each phase.
#
# In a sanitizer build the shim goes in front of the ASan runtime (it is
# never sanitized itself and forwards to the next malloc, ASan's), so
# leaks on the error paths are reported when rdaxd exits.
. "$(dirname "$0")/lib.sh"
FI=$B/tests/faultinj.so
[ -f "$FI" ] || die "$FI not built (make tests)"
E=$B/fio-rdax.so
need fio smbclient
[ -f "$E" ] || die "$E not built (make fio)"

share_dir "$T/pub" "$T/local"
make_user "$T/passdb" alice 'faults pw 1'
cat >"$T/smb.conf" <<CONF
[global]
	passdb file = $T/passdb
[pub]
	path = $T/pub
	guest ok = yes
	read only = no
CONF
CTL=$T/faultinj.ctl
echo off >"$CTL"

# rdaxd through a wrapper that preloads the shim (same pid: exec)
preload=$FI
asan_extra=""
if [ -n "$SAN_PRELOAD" ]; then
	preload="$FI:$SAN_PRELOAD"
	asan_extra="verify_asan_link_order=0"
fi
cat >"$T/rdaxd-fi" <<WRAP
#!/bin/sh
ASAN_OPTIONS="\${ASAN_OPTIONS:+\$ASAN_OPTIONS:}$asan_extra" \\
LD_PRELOAD="$preload" FAULTINJ_CTL="$CTL" exec "$B/rdaxd" "\$@"
WRAP
chmod +x "$T/rdaxd-fi"
RDAXD_REAL=$RDAXD
RDAXD=$T/rdaxd-fi
start_rdaxd srv --config "$T/smb.conf"
RDAXD=$RDAXD_REAL
U="smb://127.0.0.1:$PORT/pub"
log=$T/srv.log
check "rdaxd runs with the shim preloaded" \
	grep -q faultinj.so "/proc/$RDAXD_PID/maps"

head -c $((16 << 20)) /dev/urandom >"$T/local/src.bin"
head -c $((8 << 20)) /dev/urandom >"$T/local/ref.bin"
check "a file is written before the faults" \
	$RDAX --guest -q put "$T/local/ref.bin" "$U/ref.bin"

# fault CTLWORDS: switch the shim (atomically; it rereads within 50 ms)
fault() {
	echo "$*" >"$CTL.new"
	mv "$CTL.new" "$CTL"
	sleep 0.3
}
# counter NAME: from the shim's stats file
counter() {
	sed -n "s/.*\<$1 \([0-9]*\).*/\1/p" "$CTL.stats" 2>/dev/null | head -n 1
}

# client J ROUNDS PHASE: rdax put and get in a loop, as alice or guest;
# one line per transfer: "put|get RC same|differs|-"
client() {
	j=$1 n=$2 ph=$3 k=0
	if [ $((j % 2)) = 0 ]; then
		auth="--user alice --password-file $T/alice.pw"
	else
		auth="--guest"
	fi
	while [ $k -lt "$n" ]; do
		f=$ph.$j.$k.bin
		timeout 60 $RDAX $auth -q put "$T/local/src.bin" "$U/$f" \
			>>"$T/$ph.err" 2>&1
		rc=$?
		if [ $rc = 0 ]; then
			cmp -s "$T/local/src.bin" "$T/pub/$f" && d=same || d=differs
		else
			d=-
		fi
		echo "put $rc $d"
		rm -f "$T/local/$f"
		timeout 60 $RDAX $auth -q get "$U/ref.bin" "$T/local/$f" \
			>>"$T/$ph.err" 2>&1
		rc=$?
		if [ $rc = 0 ]; then
			cmp -s "$T/local/ref.bin" "$T/local/$f" && d=same || d=differs
		else
			d=-
		fi
		echo "get $rc $d"
		rm -f "$T/local/$f" "$T/pub/$f"
		k=$((k + 1))
	done
}

# fio_job NAME: 8 MiB random writes at QD8, checksummed and read back;
# in a sanitizer build with the runtimes preloaded as lib.sh's fio() does
fio_env=""
if [ -n "$SAN_PRELOAD" ]; then
	fio_env="LD_PRELOAD=$SAN_PRELOAD"
	fio_env="$fio_env ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}malloc_context_size=2"
	# fio leaks on its error paths (suppressed, and not worth a report file)
	fio_env="$fio_env LSAN_OPTIONS=${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$T/lsan-fio.supp:print_suppressions=0"
fi
fio_job() {
	(cd "$T/local" && timeout 120 env $fio_env fio --name="$1" --ioengine=external:"$E" \
		--hostname=127.0.0.1 --port="$PORT" --share=pub \
		--user=alice --password_file="$T/alice.pw" --filename="$1.fio" \
		--rw=randwrite --bs=64k --size=8m --iodepth=8 --verify=crc32c \
		--verify_state_save=0 --output-format=json --output="$T/$1.json")
}

# phase NAME ROUNDS CTLWORDS...: faults on, 3 CLI clients (and fio when
# it is installed) at once, faults off; results in $T/NAME.res
phase() {
	ph=$1 rounds=$2
	shift 2
	mf0=$(counter malloc_failed) nf0=$(counter net_failed) ns0=$(counter net_short)
	: >"$T/$ph.err"
	fault "$@"
	cpids=""
	for j in 0 1 2; do
		client $j "$rounds" "$ph" >"$T/$ph.res.$j" &
		cpids="$cpids $!"
	done
	fio_job "$ph" >"$T/$ph.fio.out" 2>&1 &
	fpid=$!
	for p in $cpids; do
		wait "$p"
	done
	wait "$fpid"
	frc=$?
	fault off
	cat "$T/$ph.res".* >"$T/$ph.res"
	mf=$(($(counter malloc_failed) - ${mf0:-0}))
	nf=$(($(counter net_failed) - ${nf0:-0}))
	ns=$(($(counter net_short) - ${ns0:-0}))
	nok=$(grep -c ' 0 same$' "$T/$ph.res")
	nall=$(wc -l <"$T/$ph.res")
	echo "    $ph ($*): $nok of $nall transfers acknowledged; fio exit $frc;" \
		"injected: $mf allocation(s), $nf socket error(s), $ns short transfer(s)"
}

# clean_failures PHASE: as many failed transfers as error lines that
# name an NTSTATUS or a closed connection, and no other error line
# (librdax's notices of a reconnect are no errors)
clean_failures() {
	nbad=$(grep -vc ' 0 same$' "$T/$1.res")
	nmsg=$(grep -Ec "$clean_err" "$T/$1.err")
	grep -Ev "$clean_err|$recon_notice" "$T/$1.err"
	[ "$nmsg" -ge "$nbad" ] && ! grep -Evq "$clean_err|$recon_notice" "$T/$1.err"
}
clean_err='STATUS_[A-Z_]+|connection closed by server|connection to [0-9.]+ is broken|Connection reset by peer|Broken pipe|reconnect failed|handle was lost with the connection'
recon_notice=': connection to [0-9.:]+ lost \(.*\): reconnecting$|: reconnected to [0-9.]+ \(attempt [0-9]+\)|: durable handle of .* not given back'

# the checks every phase passes
phase_checks() {
	ph=$1
	check "$ph: rdaxd is still running" kill -0 "$RDAXD_PID"
	check "$ph: every acknowledged transfer is byte-identical" \
		sh -c "! grep -q ' 0 differs$' '$T/$ph.res'"
	check "$ph: no client hung (timeout) or died of a signal" \
		sh -c "! grep -Eq ' (12[4-9]|1[3-9][0-9]|2[0-9][0-9]) ' '$T/$ph.res'"
	check "$ph: each failure was an NTSTATUS or a closed connection" \
		clean_failures "$ph"
	# fio verified every block it wrote (crc32c), or stopped on an
	# I/O error: never a verify mismatch, never a hang
	check "$ph: fio verified all it wrote or failed cleanly (exit $frc)" \
		sh -c "[ $frc = 0 ] || { [ $frc != 124 ] && \
		! grep -Eiq 'verify failed|bad magic|bad header|crc32c: ' '$T/$ph.fio.out'; }"
}


# (a) allocation failures on the request path, at several rates: every
# Nth allocation of a worker thread fails (N prime so that the failures
# move across call sites from one run to the next)
for n in 11 37 101 307; do
	phase "malloc$n" 4 malloc=$n threads=workers
	phase_checks "malloc$n"
	check "malloc$n: allocations did fail" test "$mf" -gt 0
done
check_output "an allocation failure is answered with a status" \
	"STATUS_INSUFFICIENT_RESOURCES|STATUS_NO_MEMORY" cat "$T"/malloc*.err

# random allocation failures (1 in 50)
phase mallocp 4 malloc_p=20000 seed=7 threads=workers
phase_checks mallocp
check "mallocp: allocations did fail" test "$mf" -gt 0

# (b) hard socket errors: the connection is dropped, the others go on
for n in 7 41 199; do
	phase "net$n" 4 net=$n errors=EIO,ECONNRESET,EPIPE threads=workers
	phase_checks "net$n"
	check "net$n: socket calls did fail" test "$nf" -gt 0
done
check "a failed socket call drops the connection (logged)" \
	grep -Eq 'dropping connection: (Input/output error|Connection reset by peer|Broken pipe)' "$log"

# transient socket errors and short transfers: nothing may fail
for e in EAGAIN EINTR short; do
	phase "tr$e" 2 net=3 errors=$e threads=workers
	phase_checks "tr$e"
	check "tr$e: every transfer succeeded" test "$nok" = "$nall"
	check "tr$e: fio verified everything" test "$frc" = 0
	if [ $e = short ]; then
		check "tr$e: short transfers were injected" test "$ns" -gt 0
	else
		check "tr$e: $e was injected" test "$nf" -gt 0
	fi
done

# everything at once, randomly
phase mixed 4 malloc_p=5000 net_p=2000 seed=11 threads=workers
phase_checks mixed
check "mixed: faults were injected" test $((mf + nf + ns)) -gt 0

# faults off: served normally
fault off
mf_off=$(counter malloc_failed) nf_off=$(counter net_failed) ns_off=$(counter net_short)
check "the file written before the faults is intact" cmp "$T/local/ref.bin" "$T/pub/ref.bin"
check "faults off: rdax put is served" \
	$RDAX --user alice --password-file "$T/alice.pw" -q put "$T/local/src.bin" "$U/after.bin"
check "... and the file is byte-identical" cmp "$T/local/src.bin" "$T/pub/after.bin"
check "faults off: rdax get is served" \
	$RDAX --guest -q get "$U/after.bin" "$T/local/after.bin"
check "... byte-identical" cmp "$T/local/src.bin" "$T/local/after.bin"
check "faults off: fio randwrite + verify passes" fio_job after
check_output "faults off: smbclient lists the share" "after.bin" \
	smbclient -s /dev/null -p "$PORT" //127.0.0.1/pub -U 'alice%faults pw 1' -c ls
sleep 0.2
check "no fault was injected with the shim off" \
	test "$(counter malloc_failed) $(counter net_failed) $(counter net_short)" = "$mf_off $nf_off $ns_off"

check "no connection, session or open is left (SIGUSR1)" rdaxd_idle "$log"
check_output "the shim's counters" "malloc_failed [1-9][0-9]* net_calls [0-9]+ net_failed [1-9]" \
	cat "$CTL.stats"
sed 's/^/    /' "$CTL.stats"
check "SIGTERM stops rdaxd cleanly" stop_rdaxd
finish
