#!/bin/sh
# SPDX-License-Identifier: MIT
# The DAX store on the host: no pmem here, so rdaxd runs with libpmem2's
# documented test switch PMEM2_FORCE_GRANULARITY=CACHE_LINE, which lets
# it map files on an ordinary file system with user-space persistence.
# Files written, overwritten (through the mapping), grown, truncated by
# an overwriting open and read back with rdax, fio and smbclient; the
# store choice and its reason in the log; `store = dax` refused on a
# non-DAX path without the switch.
. "$(dirname "$0")/lib.sh"
need fio smbclient
[ -f "$B/fio-rdax.so" ] || die "$B/fio-rdax.so not built (make fio)"

share_dir "$T/dax" "$T/auto" "$T/px"
cat >"$T/smb.conf" <<CONF
[global]
	guest ok = yes
[dax]
	path = $T/dax
	store = dax
	read only = no
	guest ok = yes
[px]
	path = $T/px
	store = posix
	read only = no
	guest ok = yes
CONF
PMEM2_FORCE_GRANULARITY=CACHE_LINE start_rdaxd srv --config "$T/smb.conf"
U="smb://127.0.0.1:$PORT"

check "the log names the store and why" \
	grep -q "share \[dax\]: store dax (mapped with libpmem2, cache line granularity (forced" "$T/srv.log"
check "... and a posix share says so" grep -q "share \[px\]: store posix (store = posix)" "$T/srv.log"
check "no RDMA listener: no rung is chosen" sh -c "! grep -q 'rdma registration' '$T/srv.log'"

head -c $((48 << 20)) /dev/urandom >"$T/big.bin"
check "put 48 MiB onto the DAX share" $RDAX --guest put "$T/big.bin" "$U/dax/big.bin"
check "... the file is byte-identical" cmp "$T/big.bin" "$T/dax/big.bin"
check "get it back" $RDAX --guest get "$U/dax/big.bin" "$T/back.bin"
check "... byte-identical" cmp "$T/big.bin" "$T/back.bin"
# overwrite in place: now through the mapping, then read back
head -c $((48 << 20)) /dev/urandom >"$T/big2.bin"
check "overwrite the 48 MiB in place" $RDAX --guest put "$T/big2.bin" "$U/dax/big.bin"
check "... the new content landed" cmp "$T/big2.bin" "$T/dax/big.bin"
# a shorter file over it: an overwriting open truncates a mapped file
head -c 1234567 /dev/urandom >"$T/small.bin"
check "put a shorter file over it (truncating open)" \
	$RDAX --guest put "$T/small.bin" "$U/dax/big.bin"
check "... exactly the short file remains" cmp "$T/small.bin" "$T/dax/big.bin"
check "get the short file back" $RDAX --guest get "$U/dax/big.bin" "$T/small.back"
check "... byte-identical" cmp "$T/small.bin" "$T/small.back"

F="--ioengine=external:$B/fio-rdax.so --hostname=127.0.0.1 --port=$PORT --share=dax --guest"
check "fio: sequential 1 MiB writes growing a file + crc32c verify" \
	fio --name=seq $F --filename=fio.bin --rw=write --bs=1m --size=32m \
	--iodepth=8 --verify=crc32c --verify_state_save=0
check "fio: random 4 KiB overwrites QD16 + md5 verify" \
	fio --name=rnd $F --filename=fio.bin --rw=randwrite --bs=4k --size=32m \
	--iodepth=16 --verify=md5 --verify_state_save=0 --verify_backlog=512 --number_ios=4096
check "fio: random reads and writes, unaligned sizes, QD8 + verify" \
	fio --name=mix $F --filename=mix.bin --rw=randwrite --bsrange=512-96k \
	--size=8m --iodepth=8 --verify=crc32c --verify_state_save=0
# large overwrites are received straight into the mapping
zc_sum() { worker_stat "$T/srv.log" tcp_zero_copy_bytes; }
z0=$(zc_sum)
check "fio: 256 KiB overwrites QD4 received into the mapping + verify" \
	fio --name=place $F --filename=fio.bin --rw=randwrite --bs=256k --size=32m \
	--iodepth=4 --verify=crc32c --verify_state_save=0 --do_verify=0
z1=$(zc_sum)
check "... at least 24 MiB placed without a copy ($((z1 - z0)) bytes)" \
	test $((z1 - z0)) -ge $((24 << 20))
check "fio: ... read back and verified" \
	fio --name=place $F --filename=fio.bin --rw=randwrite --bs=256k --size=32m \
	--iodepth=4 --verify=crc32c --verify_state_save=0 --verify_only

# READs over TCP are sent from the mapping (the transport's second segment)
# (a file opened anew is mapped whole)
check "put a 48 MiB file" $RDAX --guest put "$T/big2.bin" "$U/dax/zc.bin"
z0=$(zc_sum)
check "get a mapped 48 MiB file" $RDAX --guest get "$U/dax/zc.bin" "$T/zc.back"
check "... byte-identical" cmp "$T/big2.bin" "$T/zc.back"
zc=$(($(zc_sum) - z0))
check "... sent from the mapping ($zc bytes zero-copy)" test "$zc" -ge $((32 << 20))

# what went through the mapping (SIGUSR1 share line)
kill -USR1 "$RDAXD_PID"
sleep 0.5
check "stats: DAX files were written through the mapping" \
	sh -c "grep 'stats share \[dax\]' '$T/srv.log' | tail -n 1 | grep -Eq 'dax_mapped_writes [1-9]'"
grep 'stats share' "$T/srv.log" | tail -n 2 | sed 's/^/    /'

check "smbclient put onto the DAX share" \
	smbclient -N -p "$PORT" //127.0.0.1/dax -c "put $T/big.bin sc.bin"
check "... byte-identical" cmp "$T/big.bin" "$T/dax/sc.bin"
check "smbclient get from it" \
	smbclient -N -p "$PORT" //127.0.0.1/dax -c "get sc.bin $T/sc.back"
check "... byte-identical" cmp "$T/big.bin" "$T/sc.back"
check "rdaxd is still running" kill -0 "$RDAXD_PID"
check "SIGTERM stops rdaxd cleanly" stop_rdaxd

# store = dax where there is no DAX (and no test switch): refused at start
cat >"$T/bad.conf" <<CONF
[dax]
	path = $T/dax
	store = dax
CONF
env -u PMEM2_FORCE_GRANULARITY "$RDAXD" --config "$T/bad.conf" --guest --listen tcp://127.0.0.1:1 \
	>"$T/bad.out" 2>&1
rc=$?
check "store = dax on a non-DAX path exits with status 2" test "$rc" = 2
check "... naming the share, the path and the reason" \
	grep -q "share \[dax\]: store = dax, but $T/dax: no MAP_SYNC here: not a DAX file system" "$T/bad.out"
sed 's/^/    /' "$T/bad.out"
cat >"$T/bad2.conf" <<CONF
[dev]
	dax device = /dev/null
CONF
"$RDAXD" --config "$T/bad2.conf" --guest --listen tcp://127.0.0.1:1 >"$T/bad2.out" 2>&1
rc=$?
check "dax device = /dev/null is refused (status 2)" test "$rc" = 2
check "... naming the device" grep -q "dax device = /dev/null" "$T/bad2.out"
sed 's/^/    /' "$T/bad2.out"
finish
