#!/bin/sh
# SPDX-License-Identifier: MIT
# fio with the rdax ioengine (build/fio-rdax.so) against rdaxd and Samba
# smbd over TCP: fio's own verify (checksummed, numbered blocks) on
# sequential and random writes at several queue depths, fsync, layout of
# a read job's file, the bytes on the server's disk, and clear errors.
. "$(dirname "$0")/lib.sh"
need fio
E=$B/fio-rdax.so
[ -f "$E" ] || die "$E not built (make)"

share_dir "$T/share"
make_user "$T/passdb" bob 'fio pass 1'
start_rdaxd srv --share data="$T/share" --passdb "$T/passdb"
A="--ioengine=external:$E --hostname=127.0.0.1 --port=$PORT --share=data"
A="$A --user=bob --password_file=$T/bob.pw"
cd "$T" || die "cd $T"

# fio FILE ARGS...: one job, JSON out in $T/FILE.json; fails on any error
runfio() {
	f=$1
	shift
	fio --output-format=json --output="$T/$f.json" --name="$f" $A \
		--filename="$f" "$@" || return 1
	python3 - "$T/$f.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
if j["error"]:
    sys.exit("job error %d" % j["error"])
print("read %d B, write %d B" % (j["read"]["io_bytes"], j["write"]["io_bytes"]))
PY
}

check "seq write 1 MiB blocks QD8 + crc32c verify" \
	runfio seq.bin --rw=write --bs=1m --size=32m --iodepth=8 --verify=crc32c --verify_state_save=0
check "... the file on the share is 32 MiB" test "$(stat -c %s "$T/share/seq.bin")" = 33554432
for qd in 1 16 64; do
	check "randwrite 4 KiB QD$qd + md5 verify (backlog)" \
		runfio rand$qd.bin --rw=randwrite --bs=4k --size=4m --iodepth=$qd \
		--verify=md5 --verify_state_save=0 --verify_backlog=256
done
check "randrw 16 KiB QD8 with fsync every 16 writes" \
	runfio rw.bin --rw=randrw --bs=16k --size=8m --iodepth=8 --fsync=16
check "mixed block sizes 4k-256k QD4 + sha256 verify" \
	runfio bsr.bin --rw=randwrite --bsrange=4k-256k --size=8m --iodepth=4 \
	--verify=sha256 --verify_state_save=0
check "nrfiles=4 sequential write + verify" \
	fio --name=multi $A --nrfiles=4 --size=8m --bs=64k --rw=write \
	--iodepth=4 --verify=crc32c --verify_state_save=0 --filename_format='multi.$filenum'
check "... four 2 MiB files on the share" \
	test "$(cat "$T"/share/multi.* | wc -c)" = 8388608

# what fio wrote is what the server's disk holds
check "pattern write" runfio pat.bin --rw=write --bs=128k --size=4m \
	--iodepth=4 --buffer_pattern=0x5a5aa5a5
python3 -c 'import sys; sys.stdout.buffer.write(bytes.fromhex("5a5aa5a5") * (1 << 20))' >"$T/pat.want"
check "... the share holds exactly that pattern" cmp "$T/pat.want" "$T/share/pat.bin"

check_output "randread of a missing file lays it out first" "laying out lay.bin" \
	fio --name=lay $A --filename=lay.bin --rw=randread --bs=4k --size=2m --iodepth=16
cp "$T/check.out" "$T/lay.out"
check "... 2 MiB on the share" test "$(stat -c %s "$T/share/lay.bin")" = 2097152
check "... and all 2 MiB were read" grep -q "io=2048KiB" "$T/lay.out"

# errors name the server, share or file and the reason
check_fails_output "a missing share is named" "fio-rdax: nosuch: .*STATUS_BAD_NETWORK_NAME" \
	fio --name=e1 --ioengine=external:$E --hostname=127.0.0.1 --port=$PORT \
	--share=nosuch --user=bob --password_file="$T/bob.pw" --filename=x --size=1m
printf 'wrong\n' >"$T/bad.pw"
chmod 600 "$T/bad.pw"
check_fails_output "a wrong password says so" "STATUS_LOGON_FAILURE" \
	fio --name=e2 --ioengine=external:$E --hostname=127.0.0.1 --port=$PORT \
	--share=data --user=bob --password_file="$T/bad.pw" --filename=x --size=1m
chmod 644 "$T/bad.pw"
check_fails_output "a world-readable password file is refused" "bad.pw: readable by group or others" \
	fio --name=e3 --ioengine=external:$E --hostname=127.0.0.1 --port=$PORT \
	--share=data --user=bob --password_file="$T/bad.pw" --filename=x --size=1m
check_fails_output "a block size above the server's maximum is refused" "above the server's" \
	fio --name=e4 $A --filename=big.bin --rw=write --bs=16m --size=16m
check_fails_output "--readonly read of a missing file fails and names it" \
	"fio-rdax: none.bin: .*OBJECT_NAME_NOT_FOUND" \
	fio --readonly --name=e5 $A --filename=none.bin --rw=read --size=1m
check "rdaxd is still running" kill -0 "$RDAXD_PID"

# the same engine against Samba smbd
need smbd
if [ "$(id -u)" = 0 ]; then
	. "$top/tools/lib/smbd.sh"
	if scratch_smbd "$T/smbd" data; then
		pids="$pids $SMBD_PID"
		check "smbd: randwrite 4 KiB QD16 + crc32c verify" \
			fio --name=smbd --ioengine=external:$E --hostname=127.0.0.1 \
			--port=$SMBD_PORT --share=data --user=root \
			--password_file="$T/smbd/root.pw" --filename=s.bin \
			--rw=randwrite --bs=4k --size=4m --iodepth=16 --verify=crc32c --verify_state_save=0
		check "smbd: 1 MiB seq write QD8 + verify" \
			fio --name=smbd2 --ioengine=external:$E --hostname=127.0.0.1 \
			--port=$SMBD_PORT --share=data --user=root \
			--password_file="$T/smbd/root.pw" --filename=s2.bin \
			--rw=write --bs=1m --size=16m --iodepth=8 --verify=crc32c --verify_state_save=0
	else
		not_ok "smbd did not start"
	fi
else
	skip_case smbd "smbd must run as root to switch to the session user"
fi
check "SIGTERM stops rdaxd cleanly" stop_rdaxd
finish
