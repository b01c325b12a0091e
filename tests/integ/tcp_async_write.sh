#!/bin/sh
# SPDX-License-Identifier: MIT
# "tcp async write = yes": a lone unencrypted TCP WRITE of 64 KiB or more
# is stored by io_uring's workers while rdaxd's worker reads on. The
# bytes land as sent (cmp, fio's verify) and the path is taken (the
# workers' tcp_async_writes in the SIGUSR1 stats): rdax put of 64 MiB,
# four puts at once, fio-rdax at QD8, a signed put (librdax checks each
# answer's signature), raw lone WRITEs; growth of a DAX file too. Never
# taken by a compound WRITE, on an encrypted session, or with the
# option off (the default).
. "$(dirname "$0")/lib.sh"
need fio
[ -f "$B/fio-rdax.so" ] || die "$B/fio-rdax.so not built (make fio)"
[ -x "$B/tests/async_write" ] || die "$B/tests/async_write not built (make tests)"

# the workers' tcp_async_writes, summed
async_sum() { worker_stat "$T/$1.log" tcp_async_writes; }

share_dir "$T/px" "$T/dax"
make_user "$T/passdb" alice 'async write pw'
cat >"$T/smb.conf" <<CONF
[global]
	guest ok = yes
	passdb file = $T/passdb
	tcp async write = yes
[px]
	path = $T/px
	store = posix
	read only = no
[dax]
	path = $T/dax
	store = dax
	read only = no
CONF
PMEM2_FORCE_GRANULARITY=CACHE_LINE start_rdaxd on --config "$T/smb.conf" --workers 2
U="smb://127.0.0.1:$PORT"
check "rdaxd --list-params lists the option" sh -c "'$RDAXD' --list-params | grep -q '^tcp async write'"

head -c $((64 << 20)) /dev/urandom >"$T/big.bin"
a0=$(async_sum on)
check "put 64 MiB onto the posix share" $RDAX --guest put "$T/big.bin" "$U/px/big.bin"
check "... the file is byte-identical" cmp "$T/big.bin" "$T/px/big.bin"
a1=$(async_sum on)
check "... its WRITEs went async ($((a1 - a0)) of them)" test $((a1 - a0)) -ge 8

pids_put=""
for i in 1 2 3 4; do
	$RDAX --guest put "$T/big.bin" "$U/px/c$i.bin" >"$T/put$i.out" 2>&1 &
	pids_put="$pids_put $!"
done
rc=0
for p in $pids_put; do wait "$p" || rc=1; done
check "four puts of 64 MiB at once" test $rc = 0
for i in 1 2 3 4; do
	check "... copy $i is byte-identical" cmp "$T/big.bin" "$T/px/c$i.bin"
done
a2=$(async_sum on)
check "... async ($((a2 - a1)) WRITEs)" test $((a2 - a1)) -ge 32

F="--ioengine=external:$B/fio-rdax.so --hostname=127.0.0.1 --port=$PORT --share=px --guest"
check "fio-rdax: 256 KiB random writes QD8 + crc32c verify" \
	fio --name=aw $F --filename=fio.bin --rw=randwrite --bs=256k --size=32m \
	--iodepth=8 --verify=crc32c --verify_state_save=0
a3=$(async_sum on)
check "... async ($((a3 - a2)) WRITEs)" test $((a3 - a2)) -ge 64

check "a signed put of 64 MiB (librdax checks the answers' signatures)" \
	$RDAX --sign --user alice --password-file "$T/alice.pw" put "$T/big.bin" "$U/px/signed.bin"
check "... byte-identical" cmp "$T/big.bin" "$T/px/signed.bin"
check_output "... rdaxd logged the session signed" "session .* for alice as alice, SMB 3.1.1, signed" \
	cat "$T/on.log"
a4=$(async_sum on)
check "... its WRITEs went async too, answered signed ($((a4 - a3)))" test $((a4 - a3)) -ge 8

check_output "raw: a lone 1 MiB WRITE, read back" "ok: 1048576 bytes at 0 read back" \
	"$B/tests/async_write" 127.0.0.1 "$PORT" px raw.bin lone
a5=$(async_sum on)
check "... async (1 WRITE)" test $((a5 - a4)) = 1
check_output "raw: a compound of two 128 KiB WRITEs, read back" "ok: 262144 bytes at 0 read back" \
	"$B/tests/async_write" 127.0.0.1 "$PORT" px raw.bin compound
a6=$(async_sum on)
check "... never async (a compound is answered whole, inline)" test $((a6 - a5)) = 0

# DAX: growth beyond the mapping goes to the ring (RWF_DSYNC), the rest
# is placed in the mapping
check "put 64 MiB onto the DAX share (growth)" $RDAX --guest put "$T/big.bin" "$U/dax/big.bin"
check "... byte-identical" cmp "$T/big.bin" "$T/dax/big.bin"
check "... read back through rdaxd" $RDAX --guest get "$U/dax/big.bin" "$T/dax.back"
check "... byte-identical" cmp "$T/big.bin" "$T/dax.back"
a7=$(async_sum on)
check "... growth WRITEs went async ($((a7 - a6)))" test $((a7 - a6)) -ge 1
check "rdaxd is still running" kill -0 "$RDAXD_PID"
check "SIGTERM stops rdaxd cleanly" stop_rdaxd

# encrypted sessions keep the inline path
share_dir "$T/enc"
cat >"$T/enc.conf" <<CONF
[global]
	passdb file = $T/passdb
	tcp async write = yes
	smb encrypt = required
[enc]
	path = $T/enc
	read only = no
CONF
start_rdaxd enc --config "$T/enc.conf"
head -c $((16 << 20)) /dev/urandom >"$T/mid.bin"
check "an encrypted put of 16 MiB" \
	$RDAX --user alice --password-file "$T/alice.pw" put "$T/mid.bin" "smb://127.0.0.1:$PORT/enc/mid.bin"
check "... byte-identical" cmp "$T/mid.bin" "$T/enc/mid.bin"
check_output "... rdaxd logged the session encrypted" "session .* for alice as alice, SMB 3.1.1, .*encrypted" \
	cat "$T/enc.log"
check "... never async" test "$(async_sum enc)" = 0
check "SIGTERM stops rdaxd cleanly" stop_rdaxd

# the default: off
share_dir "$T/off"
start_rdaxd off --share data="$T/off" --guest
check "put 16 MiB with the option off" $RDAX --guest put "$T/mid.bin" "smb://127.0.0.1:$PORT/data/mid.bin"
check "... byte-identical" cmp "$T/mid.bin" "$T/off/mid.bin"
check "... never async" test "$(async_sum off)" = 0
check "SIGTERM stops rdaxd cleanly" stop_rdaxd
finish
