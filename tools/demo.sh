#!/bin/sh
# SPDX-License-Identifier: MIT
# make demo: rdaxd on a temporary share, a large put and get through the
# rdax CLI, and what was measured.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
B=${B:-$top/build}
SIZE_MB=${DEMO_SIZE_MB:-256}
T=$(mktemp -d /tmp/rdax-demo.XXXXXX)
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT INT TERM

mkdir "$T/share"
# SMB user demo acts as whoever runs the demo (rdaxd(8): username map)
printf '%s = demo\n' "$(id -un)" >"$T/map"
printf 'demo-password\n' | "$B/rdax" passwd --passdb "$T/passdb" demo 2>/dev/null
printf 'demo-password\n' >"$T/pw"
chmod 600 "$T/pw"
port=$(python3 "$top/tools/lib/free-port.py")
"$B/rdaxd" --share demo="$T/share" --passdb "$T/passdb" --username-map "$T/map" \
	--listen "tcp://127.0.0.1:$port" >"$T/rdaxd.log" 2>&1 &
pid=$!
i=0
until grep -q ready "$T/rdaxd.log"; do
	i=$((i + 1))
	[ $i -gt 50 ] && { cat "$T/rdaxd.log"; exit 1; }
	sleep 0.1
done
url="smb://127.0.0.1:$port/demo"
echo "rdaxd $(sed -n 's/.*rdaxd \([^ ]*\) ready.*/\1/p' "$T/rdaxd.log") serving $T/share at $url"
echo "creating a ${SIZE_MB} MiB file of random data..."
head -c $((SIZE_MB << 20)) /dev/urandom >"$T/in.bin"

R="$B/rdax --user demo --password-file $T/pw --stats -q"
run() { # LABEL CMD...
	label=$1
	shift
	printf '  %-28s %s\n' "$label" "$("$@" 2>&1 >/dev/null | tail -n 1)"
}
echo
echo "transfers (SMB 3.1.1 over TCP loopback, 8 MiB multi-credit I/O):"
run "put" $R put "$T/in.bin" "$url/big.bin"
run "get" $R get "$url/big.bin" "$T/out.bin"
cmp "$T/in.bin" "$T/out.bin" && echo "  get is byte-identical to what was put"
run "get, signed (AES-GMAC)" $R --sign get "$url/big.bin" "$T/out.bin"
run "get, encrypted (AES-GCM)" $R --encrypt get "$url/big.bin" "$T/out.bin"
echo
echo "metadata: each operation is one compound round trip:"
run "touch" $R touch "$url/f.txt"
run "stat" $R stat "$url/f.txt"
run "mkdir" $R mkdir "$url/d"
run "mv" $R mv "$url/f.txt" d/g.txt
run "rm" $R rm "$url/d/g.txt"
run "rmdir" $R rmdir "$url/d"
