#!/bin/sh
# SPDX-License-Identifier: MIT
# Regenerate the fuzzing seed corpora from real traffic: start rdaxd on a
# loopback port, capture smbclient, smbtorture and rdax CLI sessions with
# tshark, then cut the capture into one seed file per message, security
# token, name, create-context chain ... for each target in tests/fuzz/.
#
# usage: tests/fuzz/capture.sh [OUTDIR]     (default tests/data/corpus)
#        B=build (where rdaxd and rdax are); KEEP=1 copies cap.pcapng
#        and clients.log to the top directory
#
# Needs tshark with permission to capture on lo (root), smbclient,
# python3; smbtorture is used when installed. Existing files in OUTDIR
# are kept; new seeds are named by their SHA-1, so reruns add only what
# is new. cifs.ko traffic needs the VM testbed (see README.md).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
B=${B:-build}
case $B in /*) ;; *) B=$top/$B ;; esac
OUT=${1:-tests/data/corpus}
RDAXD=$B/rdaxd
RDAX=$B/rdax

die() { echo "capture.sh: $*" >&2; exit 1; }
for c in tshark smbclient python3; do
	command -v "$c" >/dev/null 2>&1 || die "$c is not installed (tools/deps.sh test)"
done
[ -x "$RDAXD" ] && [ -x "$RDAX" ] || die "$RDAXD or $RDAX missing: run make first"

T=$(mktemp -d /tmp/rdax-capture.XXXXXX)
chmod 755 "$T"			# tshark may drop privileges to write
pids=""
cleanup() {
	for p in $pids; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	rm -rf "$T"
}
trap cleanup EXIT INT TERM

# ---- a server with a passdb user, a guest share and some files ----
mkdir -p "$T/share/dir/sub" "$T/pub/dir/sub"
printf 'hello from rdax\n' >"$T/share/hello.txt"
printf 'n\303\244me\n' >"$T/share/dir/caf\303\251 \342\202\254.txt"
head -c 3000 /dev/urandom >"$T/share/dir/sub/small.bin"
# the guest share holds what fuzz_server.c's share holds
printf 'hello from rdax\n' >"$T/pub/hello.txt"
printf '0123456789abcdef' >"$T/pub/dir/sub/small.bin"
printf 'n\303\244me\n' >"$T/pub/dir/caf\303\251.txt"
printf 'pw for seeds\n' | "$RDAX" passwd --passdb "$T/passdb" alice >/dev/null ||
	die "rdax passwd failed"
printf 'pw for seeds\n' >"$T/alice.pw"
chmod 600 "$T/alice.pw"
cat >"$T/smb.conf" <<CONF
[global]
	passdb file = $T/passdb
	server signing = auto
	smb encrypt = auto
	server min protocol = SMB2_10
[data]
	path = $T/share
	read only = no
	valid users = alice
[pub]
	path = $T/pub
	guest ok = yes
	read only = no
CONF
PORT=$(python3 "$top/tools/lib/free-port.py")
"$RDAXD" --config "$T/smb.conf" --listen "tcp://127.0.0.1:$PORT" >"$T/rdaxd.log" 2>&1 &
rpid=$!
pids="$pids $rpid"
i=0
until grep -q ready "$T/rdaxd.log" 2>/dev/null; do
	kill -0 $rpid 2>/dev/null || { cat "$T/rdaxd.log"; die "rdaxd did not start"; }
	i=$((i + 1))
	[ $i -gt 100 ] && die "rdaxd not ready after 10 s"
	sleep 0.1
done

tshark -i lo -f "tcp port $PORT" -w "$T/cap.pcapng" >"$T/tshark.log" 2>&1 &
tpid=$!
pids="$pids $tpid"
i=0
until grep -q "Capturing on" "$T/tshark.log" 2>/dev/null; do
	kill -0 $tpid 2>/dev/null || { cat "$T/tshark.log"; die "tshark cannot capture on lo"; }
	i=$((i + 1))
	[ $i -gt 100 ] && die "tshark not capturing after 10 s"
	sleep 0.1
done
sleep 0.5

# ---- traffic ----
echo "capture.sh: rdaxd on port $PORT, capturing"
cd "$T" || exit 1
printf 'local file\n' >local.txt
sc() {
	smbclient -s /dev/null -p "$PORT" "$@" >>"$T/clients.log" 2>&1
}
SCMD='ls; allinfo hello.txt; get hello.txt g.txt; cd dir; ls; ls *.txt;
	cd sub; get small.bin s.bin; cd \; mkdir newdir; put local.txt newdir\up.txt;
	rename newdir\up.txt newdir\moved.txt; allinfo newdir\moved.txt;
	setmode newdir\moved.txt +r; setmode newdir\moved.txt -r;
	del newdir\moved.txt; rmdir newdir; volume; du'
for m in SMB3_11 SMB3_02 SMB3_00 SMB2_10; do
	for prot in off sign encrypt; do
		[ $prot = encrypt ] && [ $m = SMB2_10 ] && continue
		sc //127.0.0.1/data -U 'alice%pw for seeds' -m $m \
			--client-protection=$prot -c "$SCMD"
	done
done
for m in SMB3_11 SMB3_02 SMB3_00 SMB2_10; do
	sc //127.0.0.1/pub -N -m $m -c "$SCMD"
done
sc //127.0.0.1/pub -U 'nobody%x' -c 'ls'
sc //127.0.0.1/data -U 'alice%wrong password' -c 'ls'
sc //127.0.0.1/nosuch -U 'alice%pw for seeds' -c 'ls'
sc //127.0.0.1/data -U 'alice%pw for seeds' -m SMB3_11 -c 'ls dir\sub\*; get nothere.txt x'

U="smb://127.0.0.1:$PORT"
A="--user alice --password-file $T/alice.pw"
rd() {
	"$RDAX" -q "$@" >>"$T/clients.log" 2>&1
}
for extra in "" --sign --encrypt "--max-protocol SMB3_00" "--max-protocol SMB2_10"; do
	# shellcheck disable=SC2086
	{
		rd $A $extra ls "$U/data/dir"
		rd $A $extra stat "$U/data/hello.txt"
		rd $A $extra put local.txt "$U/data/c.txt"
		rd $A $extra get "$U/data/c.txt" c.out
		rd $A $extra touch "$U/data/t.txt"
		rd $A $extra mkdir "$U/data/d2"
		rd $A $extra mv "$U/data/c.txt" d2/c2.txt
		rd $A $extra rm "$U/data/d2/c2.txt"
		rd $A $extra rmdir "$U/data/d2"
		rd $A $extra rm "$U/data/t.txt"
	}
done
for extra in "" "--max-protocol SMB3_00" "--max-protocol SMB2_10"; do
	# shellcheck disable=SC2086
	{
		rd --guest $extra ls "$U/pub/dir"
		rd --guest $extra cat "$U/pub/hello.txt"
		rd --guest $extra stat "$U/pub/dir/sub/small.bin"
		rd --guest $extra put local.txt "$U/pub/g.txt"
		rd --guest $extra touch "$U/pub/t.txt"
		rd --guest $extra mkdir "$U/pub/gd"
		rd --guest $extra mv "$U/pub/g.txt" gd/g2.txt
		rd --guest $extra rm "$U/pub/gd/g2.txt"
		rd --guest $extra rmdir "$U/pub/gd"
		rd --guest $extra rm "$U/pub/t.txt"
	}
done

if command -v smbtorture >/dev/null 2>&1; then
	# create contexts, durable handles, leases, info classes, FSCTLs
	for t in smb2.connect smb2.compound.related1 smb2.compound.related2 \
		smb2.compound.unrelated1 smb2.compound.invalid1 \
		smb2.compound.invalid2 smb2.compound.create-write-close \
		smb2.dir.find smb2.read.position smb2.rename.simple \
		smb2.create.multi smb2.create.blob smb2.create.open \
		smb2.create.leading-slash smb2.durable-open.open-oplock \
		smb2.durable-open.open-lease smb2.durable-v2-open.create-blob \
		smb2.lease.request smb2.getinfo.complex smb2.getinfo.fsinfo \
		smb2.getinfo.qfile_buffercheck smb2.getinfo.qfs_buffercheck \
		smb2.ioctl.bug14788.NETWORK_INTERFACE \
		smb2.ioctl.bug14788.VALIDATE_NEGOTIATE smb2.lock.valid-request \
		smb2.ioctl.req_resume_key smb2.ioctl.copy_chunk_simple \
		smb2.ioctl.copy_chunk_multi smb2.ioctl.copy_chunk_bad_key; do
		timeout 60 smbtorture -s /dev/null "//127.0.0.1/data" -p "$PORT" \
			-U 'alice%pw for seeds' "$t" >>"$T/clients.log" 2>&1
	done
else
	echo "capture.sh: smbtorture not installed, skipped"
fi
cd "$top" || exit 1
sleep 1
kill -INT $tpid
wait $tpid 2>/dev/null
kill -TERM $rpid
wait $rpid 2>/dev/null
pids=""
[ "${KEEP:-0}" = 1 ] && cp "$T/cap.pcapng" "$T/clients.log" "$top/" &&
	echo "capture.sh: kept cap.pcapng and clients.log"

# ---- one payload line per TCP segment, then seeds ----
tshark -r "$T/cap.pcapng" -Y 'tcp.len > 0' -T fields -e tcp.stream \
	-e tcp.srcport -e tcp.seq -e tcp.payload >"$T/segs.txt" ||
	die "tshark could not read the capture"
# The configuration the run used joins the hand-written config seeds.
python3 - "$T/segs.txt" "$PORT" "$OUT" "$T/smb.conf" <<'PY'
import hashlib, os, struct, sys

segs, port, out, conf = sys.argv[1:5]
port = int(port)
SEP = b"\xf0SEP"
MAX_SEED = 64 * 1024

# Reassemble each direction of each stream (loopback: in order; drop
# retransmitted segments by sequence number).
streams = {}
for line in open(segs):
    f = line.rstrip("\n").split("\t")
    if len(f) < 4 or not f[3]:
        continue
    key = (int(f[0]), int(f[1]) != port)     # True: client -> server
    seq, data = int(f[2]), bytes.fromhex(f[3].replace(":", ""))
    buf, nxt = streams.get(key, (bytearray(), None))
    if nxt is not None and seq < nxt:
        continue
    buf += data
    streams[key] = (buf, seq + len(data))

def frames(buf):
    off = 0
    while off + 4 <= len(buf):
        n = struct.unpack(">I", bytes(buf[off:off + 4]))[0] & 0xFFFFFF
        if off + 4 + n > len(buf):
            break
        yield bytes(buf[off + 4:off + 4 + n])
        off += 4 + n

def pdus(msg):
    off = 0
    while off + 64 <= len(msg) and msg[off:off + 4] == b"\xfeSMB":
        nxt = struct.unpack_from("<I", msg, off + 20)[0]
        end = off + nxt if nxt else len(msg)
        yield msg[off:end]
        if not nxt or end >= len(msg):
            break
        off = end

u16 = lambda b, o: struct.unpack_from("<H", b, o)[0]
u32 = lambda b, o: struct.unpack_from("<I", b, o)[0]

def buf_at(p, off, n):
    return p[off:off + n] if n and off >= 64 and off + n <= len(p) else b""

seeds = {}          # target -> {name: bytes}
shapes = {}
def add(target, data, shape=None, limit=6):
    if not data or len(data) > MAX_SEED:
        return
    if shape is not None:
        k = (target, shape)
        if shapes.get(k, 0) >= limit:
            return
    h = hashlib.sha1(data).hexdigest()[:16]
    if h in seeds.setdefault(target, {}):
        return
    if shape is not None:
        shapes[k] = shapes.get(k, 0) + 1
    seeds[target][h] = data

def der_ntlmssp(b, depth=0):
    """Content of the first DER OCTET STRING holding an NTLMSSP message."""
    off = 0
    while off + 2 <= len(b) and depth < 8:
        tag, l = b[off], b[off + 1]
        hl = 2
        if l & 0x80:
            k = l & 0x7f
            if not 1 <= k <= 4:
                return b""
            l = int.from_bytes(b[off + 2:off + 2 + k], "big")
            hl += k
        val = b[off + hl:off + hl + l]
        if len(val) < l:
            return b""
        if tag == 0x04 and val.startswith(b"NTLMSSP\0"):
            return val
        if tag & 0x20:
            m = der_ntlmssp(val, depth + 1)
            if m:
                return m
        off += hl + l
    return b""

def ntlm(blob):
    m = blob if blob.startswith(b"NTLMSSP\0") else der_ntlmssp(blob)
    if not m:
        return
    add("ntlmssp", m, ("t", m[8:9]), limit=30)
    if m[8:9] == b"\x02":
        # a raw CHALLENGE for the client without SPNEGO
        add("auth_client", b"\x00" + SEP + m, ("raw",), 6)

# exchanges: per connection, client tokens and server tokens in order
for (sid, c2s), (buf, _) in sorted(streams.items()):
    for msg in frames(buf):
        tag = msg[:4]
        if tag == b"\xfdSMB":
            add("transform", bytes([2]) + msg, ("enc", c2s, len(msg) // 512))
            add("transform", bytes([1]) + msg, ("enc1", c2s), limit=3)
            continue
        if tag != b"\xfeSMB":
            continue
        ps = list(pdus(msg))
        cmds = tuple(u16(p, 12) for p in ps)
        add("smb2_request", msg, ("m", c2s, cmds, u32(ps[0], 8) != 0 if ps else 0), limit=4)
        if len(ps) > 1:
            add("compound", msg, ("c", c2s, cmds), limit=3)
        else:
            add("compound", msg, ("s", c2s), limit=4)
        # transform round-trip seeds: real plaintext under the fuzz key
        if len(msg) <= 4096:
            add("transform", bytes([0x82, len(msg) & 0xff]) + bytes(16) +
                struct.pack("<Q", 1) + msg, ("rt", cmds[:1]), limit=2)
        for p in ps:
            cmd, status = u16(p, 12), u32(p, 8)
            if c2s:
                if cmd == 1 and len(p) >= 88:
                    sec = buf_at(p, u16(p, 76), u16(p, 78))
                    add("spnego", sec, ("req", sec[:1]), limit=10)
                    ntlm(sec)
                elif cmd == 3 and len(p) >= 72:
                    add("path", b"\x05" + buf_at(p, u16(p, 68), u16(p, 70)))
                elif cmd == 5 and len(p) >= 120:
                    add("path", b"\x05" + buf_at(p, u16(p, 108), u16(p, 110)))
                    ctx = buf_at(p, u32(p, 112), u32(p, 116))
                    add("create_ctx", b"\x10" + ctx)
                elif cmd == 11 and len(p) >= 120:
                    code = u32(p, 68)
                    if code in (0x001440F2, 0x001480F2):
                        add("fsctl", buf_at(p, u32(p, 88), u32(p, 92)),
                            ("cc", len(p) // 256), 6)
                elif cmd == 14 and len(p) >= 96:
                    add("path", b"\x05" + buf_at(p, u16(p, 88), u16(p, 90)))
                elif cmd == 17 and len(p) >= 96:
                    d = buf_at(p, u16(p, 72), u32(p, 68))
                    if p[67] in (10, 11) and len(d) > 20:
                        add("path", b"\x03" + d[20:])
            else:
                if cmd == 0 and len(p) >= 128:
                    add("spnego", buf_at(p, u16(p, 120), u16(p, 122)), ("hint",), 3)
                elif cmd == 1 and len(p) >= 72:
                    sec = buf_at(p, u16(p, 68), u16(p, 70))
                    add("spnego", sec, ("rsp", status, sec[:1]), limit=10)
                    ntlm(sec)
                elif cmd == 5 and len(p) >= 152:
                    add("create_ctx", b"\x10" + buf_at(p, u32(p, 144), u32(p, 148)))
                elif cmd == 11 and len(p) >= 112:
                    if u32(p, 68) in (0x00140078, 0x001440F2, 0x001480F2):
                        add("fsctl", buf_at(p, u32(p, 96), u32(p, 100)),
                            ("rsp", u32(p, 68)), 4)

# auth exchanges: client tokens to the server, server tokens to the client
for sid in sorted({k[0] for k in streams}):
    cli, srv, hint = [], [], b""
    reqs = [p for m in frames(streams.get((sid, True), (b"",))[0]) for p in pdus(m)]
    rsps = [p for m in frames(streams.get((sid, False), (b"",))[0]) for p in pdus(m)]
    for p in rsps:
        if u16(p, 12) == 0 and len(p) >= 128:
            hint = buf_at(p, u16(p, 120), u16(p, 122))
    for p in reqs:
        if u16(p, 12) == 1 and len(p) >= 88:
            tok = buf_at(p, u16(p, 76), u16(p, 78))
            if tok[:1] == b"\x60" or tok.startswith(b"NTLMSSP\0") or not cli:
                cli.append([])
            cli[-1].append(tok)
    for p in rsps:
        if u16(p, 12) == 1 and len(p) >= 72:
            srv.append(buf_at(p, u16(p, 68), u16(p, 70)))
    for ex in cli:
        add("auth_server", b"\x00" + SEP.join(ex[:4]),
            ("x", len(ex), ex[0][:1], len(ex[-1]) // 64), 4)
    for i in range(0, len(srv) - 1, 2):
        add("auth_client", b"\x01" + SEP.join([hint, srv[i], srv[i + 1]]), ("x",), 12)

# exchange mode of auth_server: byte 1 = client settings, no edits
for opt in (0x00, 0x01, 0x41, 0x02, 0x03, 0x04, 0x08, 0x11, 0x21, 0x51):
    add("auth_server", bytes([0x01, opt]))
# SMB-Direct cannot run on this host (no RDMA device): seeds built from
# the [MS-SMBD] 2.2 layouts and from captured READ/WRITE requests given
# an RDMA channel. TODO: capture real ones on the VM testbed.
def smbd_seed(b, shape=None):
    add("smbd", struct.pack("<I", 1 << 20) + b, shape, 6)
smbd_seed(struct.pack("<HHHHIII", 0x100, 0x100, 0, 255, 1364, 8192, 1 << 20))
smbd_seed(struct.pack("<HHHHHHIIIII", 0x100, 0x100, 0x100, 0, 255, 255, 0,
                      1 << 20, 1364, 8192, 1 << 20))
smbd_seed(struct.pack("<HHHHIIII", 255, 1, 1, 0, 0, 0, 0, 0)[:20])
smbd_seed(struct.pack("<HHHHIII", 255, 1, 0, 0, 0, 24, 4) + bytes(4) + b"\xfeSMB")
for (sid, c2s), (buf, _) in sorted(streams.items()):
    for msg in frames(buf):
        if msg[:4] == b"\xfeSMB" and len(msg) <= 1340 and u32(msg, 20) == 0:
            smbd_seed(struct.pack("<HHHHIII", 255, 10, 0, 0, 0, 24, len(msg)) +
                      bytes(4) + msg, ("msg",))
desc = struct.pack("<QII", 0x7f0000001000, 0x1234, 65536)
add("smbd_desc", b"\x40" + desc)
add("smbd_desc", b"\x40" + desc + struct.pack("<QII", 0x7f0000020000, 0x99, 4096))
add("smbd_desc", b"\x01" + desc * 2)
for (sid, c2s), (buf, _) in sorted(streams.items()):
    if not c2s:
        continue
    for msg in frames(buf):
        if msg[:4] != b"\xfeSMB" or u32(msg, 20) or len(msg) < 112:
            continue
        cmd = u16(msg, 12)
        if cmd == 8:		# READ: channel info at 112
            m = bytearray(msg[:112]) + desc
            struct.pack_into("<IIIHH", m, 96, 0, 1, 0, 112, 16)
            add("smb2_request", bytes(m), ("rdma", 8), 1)
        elif cmd == 9 and u32(msg, 68) and u16(msg, 66) == 112:
            m = bytearray(msg[:112]) + desc
            struct.pack_into("<HI", m, 66, 0, 0)
            struct.pack_into("<IIHH", m, 96, 2, 65536, 112, 16)
            add("smb2_request", bytes(m), ("rdma", 9), 1)

# fuzz_server: whole client->server streams, session ids and volatile
# FileIds renumbered as fuzz_server.c's server hands them out.
SID_BASE, VOL_BASE = 0x4000000000000001, 0x0000000010000001
FID_OFF = {6: 72, 7: 72, 8: 80, 9: 80, 10: 72, 11: 72, 14: 72, 15: 72,
           16: 88, 17: 80, 18: 72}
u64 = lambda b, o: struct.unpack_from("<Q", b, o)[0]
for sid in sorted({k[0] for k in streams}):
    c2s = list(frames(streams.get((sid, True), (b"",))[0]))
    s2c = list(frames(streams.get((sid, False), (b"",))[0]))
    if not c2s or any(m[:4] == b"\xfdSMB" for m in c2s + s2c):
        continue
    smap, vmap, guest = {}, {}, False
    for m in s2c:
        for p in pdus(m):
            cmd, sess = u16(p, 12), u64(p, 40)
            # a session that replays: anonymous or guest, never signed
            if cmd == 1 and u32(p, 8) == 0 and len(p) >= 68 and u16(p, 66) & 3:
                guest = True
            if cmd == 1 and sess and sess not in smap:
                smap[sess] = SID_BASE + len(smap)
            if cmd == 5 and u32(p, 8) == 0 and len(p) >= 144:
                v = u64(p, 136)
                vmap.setdefault(v, VOL_BASE + len(vmap))
    stream, cmds = bytearray(), []
    for m in c2s:
        m = bytearray(m)
        if m[:4] == b"\xfeSMB":
            off = 0
            while off + 64 <= len(m):
                cmd, nxt = u16(m, off + 12), u32(m, off + 20)
                cmds.append(cmd)
                if u64(m, off + 40) in smap:
                    struct.pack_into("<Q", m, off + 40, smap[u64(m, off + 40)])
                fo = FID_OFF.get(cmd)
                if fo and off + fo + 16 <= len(m) and u64(m, off + fo + 8) in vmap:
                    struct.pack_into("<Q", m, off + fo + 8, vmap[u64(m, off + fo + 8)])
                if not nxt:
                    break
                off += nxt
        frame = struct.pack(">I", len(m)) + m
        if len(stream) + len(frame) > MAX_SEED:
            break
        stream += frame
    if guest:
        add("server", bytes(stream), ("g", tuple(sorted(set(cmds)))), 3)
    else:
        add("server", bytes(stream), ("a", len(c2s) // 8), 1)

add("config", open(conf, "rb").read().replace(
    os.path.dirname(conf).encode(), b"/srv/rdax"))

total = 0
for target, d in sorted(seeds.items()):
    dst = os.path.join(out, target)
    os.makedirs(dst, exist_ok=True)
    new = 0
    for h, data in sorted(d.items()):
        path = os.path.join(dst, h)
        if not os.path.exists(path):
            with open(path, "wb") as f:
                f.write(data)
            new += 1
    total += new
    print("capture.sh: %-13s %3d seeds (%d new)" % (target, len(d), new))
print("capture.sh: %d new files in %s" % (total, out))
PY
