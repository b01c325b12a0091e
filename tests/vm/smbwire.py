#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""SMB2 round trips on the wire, inside the testbed guest.

A packet capture (dumpcap on the guest's loopback: a client and a server
in one guest talk over lo, whatever address they use) is cut into the
NetBIOS session messages of each TCP stream; a message from the client is
one request chain (one PDU, or a compound of several), i.e. one round
trip. The module also drives Linux cifs.ko through a mount, one operation
at a time in its own time window, and reads /proc/fs/cifs/Stats.

  smbwire.py chains PCAP PORT...
      print every chain of the capture: time, direction, commands
  smbwire.py capture PCAP PORT... --ready FILE --stop FILE
      capture until FILE --stop exists (FILE --ready appears once the
      capture runs), then print one line: the client's non-session
      chains, its PDUs by command, the bytes of all SMB messages
  smbwire.py protection PCAP PORT... [--pattern FILE]
      what protected the traffic, as one JSON line: messages sealed in
      a transform header, plain PDUs after the session setup and how
      many of them (and of the READs and WRITEs) were signed (interim
      responses aside: they carry nothing and are not signed), and
      whether the first 64 bytes of FILE appear anywhere on the wire
  smbwire.py channels PCAP PORT...
      one JSON document with a line per TCP connection (a channel of
      SMB3 multichannel): the server and client ends, the SessionIds its
      READ/WRITE requests (or sealed messages) name, how many READs and
      WRITEs it carried, its binding SESSION_SETUPs (Flags BINDING),
      signed requests, requests with SMB2_FLAGS_REPLAY_OPERATION and the
      ChannelSequence values they carried
  smbwire.py leases PCAP PORT...
      the leases on the wire, as one JSON line: CREATE responses that
      grant one (a RqLs context with a LeaseState) by state, the
      server's lease break notifications (those with ACK_REQUIRED
      counted apart) and the client's lease break acknowledgements,
      oplock grants and breaks, and messages it could not read (sealed)
  smbwire.py cifs-ops --mnt DIR --ports P[,P] --out JSON [--reps N]
                      [--settle SECS] [--warm] [--pcap FILE]
      touch, stat, truncate -s 4096, mv, rm, mkdir, rmdir (coreutils) in
      the mount's root, each in its own window; by default the dentry and
      inode caches are dropped before each operation (cold), so every
      operation does its own lookups; writes one JSON document

Used by bench/meta.py, tests/vm/check-meta and the host's interop tests
(tests/integ/lib.sh capture_*).
"""
import argparse
import bisect
import json
import os
import re
import signal
import struct
import subprocess
import sys
import time

CMDS = ["NEGOTIATE", "SESSION_SETUP", "LOGOFF", "TREE_CONNECT", "TREE_DISCONNECT",
        "CREATE", "CLOSE", "FLUSH", "READ", "WRITE", "LOCK", "IOCTL", "CANCEL", "ECHO",
        "QUERY_DIRECTORY", "CHANGE_NOTIFY", "QUERY_INFO", "SET_INFO", "OPLOCK_BREAK"]
# chains that belong to the session, not to a file-system operation
SESSION_CMDS = {"NEGOTIATE", "SESSION_SETUP", "LOGOFF", "TREE_CONNECT", "TREE_DISCONNECT",
                "ECHO"}
STATUS_PENDING = 0x103


def say(msg):
    print("smbwire: " + msg, file=sys.stderr, flush=True)


# ---- pcap ----------------------------------------------------------------

def read_pcap(path):
    """(ts, (src, sport, dst, dport), seq, flags, payload) of each TCP/IPv4 packet."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        return []
    magic = data[:4]
    if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
        end = "<"
    elif magic in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
        end = ">"
    else:
        raise ValueError("%s: not a pcap file (dumpcap -P)" % path)
    nano = magic in (b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d")
    linktype = struct.unpack(end + "I", data[20:24])[0]
    out = []
    off = 24
    while off + 16 <= len(data):
        sec, frac, incl, _ = struct.unpack(end + "IIII", data[off:off + 16])
        pkt = data[off + 16:off + 16 + incl]
        off += 16 + incl
        ts = sec + frac / (1e9 if nano else 1e6)
        if linktype == 1:          # Ethernet (Linux lo)
            if len(pkt) < 14 or pkt[12:14] != b"\x08\x00":
                continue
            ip = pkt[14:]
        elif linktype == 113:      # Linux cooked (any)
            if len(pkt) < 16 or pkt[14:16] != b"\x08\x00":
                continue
            ip = pkt[16:]
        elif linktype in (101, 228):  # raw IPv4
            ip = pkt
        else:
            raise ValueError("%s: link type %d not handled" % (path, linktype))
        if len(ip) < 20 or ip[0] >> 4 != 4 or ip[9] != 6:
            continue
        ihl = (ip[0] & 15) * 4
        total = struct.unpack(">H", ip[2:4])[0]
        src, dst = ip[12:16], ip[16:20]
        tcp = ip[ihl:total]
        if len(tcp) < 20:
            continue
        sport, dport, seq = struct.unpack(">HHI", tcp[:8])
        doff = (tcp[12] >> 4) * 4
        flags = tcp[13]
        out.append((ts, (src, sport, dst, dport), seq, flags, tcp[doff:]))
    return out


class Stream:
    """One direction of a TCP connection, reassembled by sequence number."""

    def __init__(self):
        self.buf = bytearray()
        self.marks = []            # stream offset of each segment's first byte
        self.times = []            # and its capture time
        self.next = None
        self.pending = {}
        self.gaps = 0

    def add(self, ts, seq, flags, payload):
        if flags & 0x02:           # SYN
            self.next = (seq + 1) & 0xffffffff
            return
        if not payload:
            return
        if self.next is None:
            self.next = seq
        self.pending[seq] = (ts, payload)
        while True:
            hit = None
            for s, (t, p) in self.pending.items():
                d = (self.next - s) & 0xffffffff
                if d < len(p) or s == self.next:
                    hit = s
                    break
            if hit is None:
                break
            t, p = self.pending.pop(hit)
            skip = (self.next - hit) & 0xffffffff
            if skip >= len(p):
                continue
            self.marks.append(len(self.buf))
            self.times.append(t)
            self.buf += p[skip:]
            self.next = (self.next + len(p) - skip) & 0xffffffff
        # anything left that lies behind us is a retransmission
        for s in list(self.pending):
            if ((self.next - s) & 0xffffffff) < 0x80000000 and \
               ((self.next - s) & 0xffffffff) >= len(self.pending[s][1]):
                del self.pending[s]

    def ts_at(self, off):
        i = bisect.bisect_right(self.marks, off) - 1
        return self.times[max(i, 0)] if self.times else 0.0

    def messages(self):
        """(ts, message bytes) of each NetBIOS session message."""
        out = []
        off = 0
        b = self.buf
        # a capture that starts mid-stream: resynchronise on an SMB2 header
        while off + 8 <= len(b) and not (b[off] == 0 and b[off + 4:off + 8] in
                                         (b"\xfeSMB", b"\xfdSMB", b"\xfcSMB")):
            off += 1
        while off + 4 <= len(b):
            n = int.from_bytes(b[off + 1:off + 4], "big")
            if off + 4 + n > len(b):
                break
            if b[off] == 0:
                out.append((self.ts_at(off), bytes(b[off + 4:off + 4 + n])))
            off += 4 + n
        return out


def parse_chain(msg):
    """[(command, status, flags), ...] of one message (a compound chain)."""
    if msg[:4] == b"\xfdSMB":
        return [("ENCRYPTED", 0, 0)]
    if msg[:4] == b"\xfcSMB":
        return [("COMPRESSED", 0, 0)]
    out = []
    off = 0
    while off + 64 <= len(msg) and msg[off:off + 4] == b"\xfeSMB":
        status, cmd, _, flags, nxt = struct.unpack("<IHHII", msg[off + 8:off + 24])
        out.append((CMDS[cmd] if cmd < len(CMDS) else "CMD%d" % cmd, status, flags))
        if not nxt:
            break
        off += nxt
    return out


def chains(pcap, ports):
    """Every chain: {"ts", "dir" (req|rsp), "conn", "cmds", "status", "bytes"}."""
    streams = {}
    ports = set(ports)
    for ts, key, seq, flags, payload in read_pcap(pcap):
        src, sport, dst, dport = key
        if dport in ports:
            d = "req"
        elif sport in ports:
            d = "rsp"
        else:
            continue
        streams.setdefault((key, d), Stream()).add(ts, seq, flags, payload)
    out = []
    for (key, d), st in streams.items():
        conn = "%d.%d.%d.%d:%d" % (tuple(key[0]) + (key[1],)) if d == "req" else \
            "%d.%d.%d.%d:%d" % (tuple(key[2]) + (key[3],))
        for ts, msg in st.messages():
            pdus = parse_chain(msg)
            out.append({"ts": ts, "dir": d, "conn": conn,
                        "cmds": [p[0] for p in pdus], "status": [p[1] for p in pdus],
                        "interim": any(p[1] == STATUS_PENDING and p[2] & 2 for p in pdus),
                        "bytes": len(msg) + 4})
    out.sort(key=lambda c: c["ts"])
    return out


SIGNED = 0x8
SETUP_CMDS = {0, 1}                # NEGOTIATE, SESSION_SETUP: never signed nor sealed
IO_CMDS = {8, 9}                   # READ, WRITE


def protection(pcap, ports, pattern=None):
    """How the SMB traffic to ports was protected (see the module's help)."""
    streams = {}
    ports = set(ports)
    for ts, key, seq, flags, payload in read_pcap(pcap):
        src, sport, dst, dport = key
        if dport in ports or sport in ports:
            streams.setdefault(key, Stream()).add(ts, seq, flags, payload)
    r = {"messages": 0, "sealed": 0, "plain_pdus": 0, "signed_pdus": 0,
         "io_pdus": 0, "io_signed": 0, "pattern_seen": False, "unsigned": [],
         "interim": 0}
    for st in streams.values():
        if pattern and pattern in st.buf:
            r["pattern_seen"] = True
        for ts, msg in st.messages():
            r["messages"] += 1
            if msg[:4] == b"\xfdSMB":
                r["sealed"] += 1
                continue
            off = 0
            while off + 64 <= len(msg) and msg[off:off + 4] == b"\xfeSMB":
                cmd, = struct.unpack("<H", msg[off + 12:off + 14])
                flags, nxt = struct.unpack("<II", msg[off + 16:off + 24])
                signed = bool(flags & SIGNED) and any(msg[off + 48:off + 64])
                status, = struct.unpack("<I", msg[off + 8:off + 12])
                if status == STATUS_PENDING and flags & 0x2:
                    r["interim"] += 1      # no data, and not signed ([MS-SMB2] 3.3.4.2)
                elif cmd not in SETUP_CMDS:
                    r["plain_pdus"] += 1
                    r["signed_pdus"] += signed
                    if not signed and len(r["unsigned"]) < 8:
                        mid, = struct.unpack("<Q", msg[off + 24:off + 32])
                        r["unsigned"].append("%s mid %d status 0x%x flags 0x%x" % (
                            CMDS[cmd] if cmd < len(CMDS) else cmd, mid, status, flags))
                    if cmd in IO_CMDS:
                        r["io_pdus"] += 1
                        r["io_signed"] += signed
                if not nxt:
                    break
                off += nxt
    return r


REPLAY = 0x20000000
BINDING = 0x01


def channels(pcap, ports):
    """Per TCP connection to ports: what it carried, for multichannel checks."""
    streams = {}
    ports = set(ports)
    for ts, key, seq, flags, payload in read_pcap(pcap):
        src, sport, dst, dport = key
        if dport in ports:
            streams.setdefault((key, "req"), Stream()).add(ts, seq, flags, payload)
        elif sport in ports:
            streams.setdefault(((dst, dport, src, sport), "rsp"), Stream()).add(
                ts, seq, flags, payload)
    conns = {}
    for (key, d), st in streams.items():
        src, sport, dst, dport = key
        c = conns.setdefault(key, {
            "client": "%d.%d.%d.%d:%d" % (tuple(src) + (sport,)),
            "server": "%d.%d.%d.%d:%d" % (tuple(dst) + (dport,)),
            "sessions": [], "reads": 0, "writes": 0, "bindings": 0,
            "binding_signed": 0, "signed": 0, "plain": 0, "sealed": 0,
            "replays": 0, "replay_seqs": [], "seqs": [], "bytes_c2s": 0,
            "bytes_s2c": 0, "replay_cmds": []})
        for ts, msg in st.messages():
            c["bytes_c2s" if d == "req" else "bytes_s2c"] += len(msg) + 4
            if d != "req":
                continue
            if msg[:4] == b"\xfdSMB":
                c["sealed"] += 1
                sid, = struct.unpack("<Q", msg[44:52])
                if sid and sid not in c["sessions"]:
                    c["sessions"].append(sid)
                continue
            off = 0
            while off + 64 <= len(msg) and msg[off:off + 4] == b"\xfeSMB":
                seqno, = struct.unpack("<H", msg[off + 8:off + 10])
                cmd, = struct.unpack("<H", msg[off + 12:off + 14])
                flags, nxt = struct.unpack("<II", msg[off + 16:off + 24])
                sid, = struct.unpack("<Q", msg[off + 40:off + 48])
                signed = bool(flags & SIGNED) and any(msg[off + 48:off + 64])
                if cmd == 1 and len(msg) > off + 66 and msg[off + 66] & BINDING:
                    c["bindings"] += 1
                    c["binding_signed"] += signed
                elif cmd not in SETUP_CMDS:
                    c["plain"] += 1
                    c["signed"] += signed
                    if seqno not in c["seqs"]:
                        c["seqs"].append(seqno)
                if cmd in IO_CMDS:
                    c["reads" if cmd == 8 else "writes"] += 1
                    if sid not in c["sessions"]:
                        c["sessions"].append(sid)
                if flags & REPLAY:
                    c["replays"] += 1
                    if seqno not in c["replay_seqs"]:
                        c["replay_seqs"].append(seqno)
                    if len(c["replay_cmds"]) < 8:
                        c["replay_cmds"].append(CMDS[cmd] if cmd < len(CMDS) else cmd)
                if not nxt:
                    break
                off += nxt
    return {"conns": sorted(conns.values(), key=lambda x: x["client"])}


CREATE, OPLOCK_BREAK = 5, 18
OPLOCK_LEASE = 0xFF
BREAK_ACK_REQUIRED = 0x01


def lease_state(v):
    return "".join(c for c, bit in (("R", 1), ("H", 2), ("W", 4)) if v & bit) or "none"


def create_lease(msg, off, end):
    """LeaseState of the RqLs context of the CREATE response at off, or None."""
    if end - off < 64 + 88:
        return None
    ctx_off, ctx_len = struct.unpack("<II", msg[off + 64 + 80:off + 64 + 88])
    pos, stop = off + ctx_off, min(off + ctx_off + ctx_len, end)
    while ctx_off and pos + 16 <= stop:
        nxt, noff, nlen, _, doff, dlen = struct.unpack("<IHHHHI", msg[pos:pos + 16])
        if msg[pos + noff:pos + noff + nlen] == b"RqLs" and dlen >= 20:
            return struct.unpack("<I", msg[pos + doff + 16:pos + doff + 20])[0]
        if not nxt:
            break
        pos += nxt
    return None


def leases(pcap, ports):
    """Lease grants, breaks and acknowledgements on the wire (see the module's help)."""
    streams = {}
    ports = set(ports)
    for ts, key, seq, flags, payload in read_pcap(pcap):
        src, sport, dst, dport = key
        if dport in ports:
            streams.setdefault((key, "req"), Stream()).add(ts, seq, flags, payload)
        elif sport in ports:
            streams.setdefault((key, "rsp"), Stream()).add(ts, seq, flags, payload)
    r = {"granted": 0, "granted_states": {}, "breaks": 0, "breaks_ack_required": 0,
         "acks": 0, "oplocks_granted": 0, "oplock_breaks": 0, "oplock_acks": 0,
         "acks_refused": 0, "creates": 0, "unreadable": 0}
    for (key, d), st in streams.items():
        for ts, msg in st.messages():
            if msg[:4] != b"\xfeSMB":
                r["unreadable"] += 1
                continue
            off = 0
            while off + 64 <= len(msg) and msg[off:off + 4] == b"\xfeSMB":
                status, cmd, _, flags, nxt = struct.unpack("<IHHII", msg[off + 8:off + 24])
                end = off + nxt if nxt else len(msg)
                size = struct.unpack("<H", msg[off + 64:off + 66])[0] if end >= off + 66 else 0
                if d == "rsp" and cmd == CREATE and status == 0 and size == 89:
                    r["creates"] += 1
                    if msg[off + 66] == OPLOCK_LEASE:
                        st8 = create_lease(msg, off, end)
                        if st8:
                            r["granted"] += 1
                            k = lease_state(st8)
                            r["granted_states"][k] = r["granted_states"].get(k, 0) + 1
                    elif msg[off + 66]:
                        r["oplocks_granted"] += 1
                elif cmd == OPLOCK_BREAK and d == "rsp" and size == 44:
                    r["breaks"] += 1
                    if struct.unpack("<I", msg[off + 68:off + 72])[0] & BREAK_ACK_REQUIRED:
                        r["breaks_ack_required"] += 1
                elif cmd == OPLOCK_BREAK and d == "rsp" and size == 24 and \
                        struct.unpack("<Q", msg[off + 24:off + 32])[0] == 0xffffffffffffffff:
                    r["oplock_breaks"] += 1
                elif cmd == OPLOCK_BREAK and d == "rsp" and status:
                    r["acks_refused"] += 1
                elif cmd == OPLOCK_BREAK and d == "req" and size == 36:
                    r["acks"] += 1
                elif cmd == OPLOCK_BREAK and d == "req" and size == 24:
                    r["oplock_acks"] += 1
                if not nxt:
                    break
                off += nxt
    return r


def is_session(chain):
    return all(c in SESSION_CMDS for c in chain["cmds"])


def window(all_chains, t0, t1, conn=None):
    """Client request chains in [t0, t1] that are not session traffic."""
    return [c for c in all_chains if c["dir"] == "req" and t0 <= c["ts"] <= t1 and
            not is_session(c) and (conn is None or c["conn"] == conn)]


def sig(chain):
    return "+".join(chain["cmds"])


class Capture:
    """dumpcap on an interface, TCP to the given server ports, into a pcap file."""

    def __init__(self, path, ports, iface="lo"):
        self.path, self.ports, self.iface = path, list(ports), iface
        self.proc = None

    def start(self):
        if os.path.exists(self.path):
            os.unlink(self.path)
        flt = " or ".join("tcp port %d" % p for p in self.ports)
        self.err = open(self.path + ".log", "w")
        self.proc = subprocess.Popen(["dumpcap", "-q", "-i", self.iface, "-f", flt,
                                      "-P", "-w", self.path],
                                     stdout=self.err, stderr=subprocess.STDOUT)
        for _ in range(300):
            if os.path.exists(self.path) and os.path.getsize(self.path) >= 24:
                time.sleep(0.3)    # the filter is attached before the header is written
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        raise RuntimeError("dumpcap did not start: %s" % open(self.path + ".log").read())

    def stop(self):
        if self.proc and self.proc.poll() is None:
            time.sleep(0.3)        # the last packets reach the ring
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.err.close()
        return chains(self.path, self.ports)


# ---- cifs.ko ----------------------------------------------------------------

STAT_RE = re.compile(r"^(\w+): (\d+) total (\d+) failed", re.M)


def cifs_stats():
    """Request counters of /proc/fs/cifs/Stats, summed over the tree connects."""
    try:
        with open("/proc/fs/cifs/Stats") as f:
            text = f.read()
    except OSError:
        return {}
    out = {}
    for name, total, _ in STAT_RE.findall(text):
        out[name] = out.get(name, 0) + int(total)
    out["SMBs"] = sum(int(x) for x in re.findall(r"^SMBs: (\d+)", text, re.M))
    return out


def stats_delta(a, b):
    return {k: b.get(k, 0) - a.get(k, 0) for k in sorted(set(a) | set(b))
            if b.get(k, 0) - a.get(k, 0)}


def drop_caches():
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("2\n")     # dentries and inodes


def cifs_op_list(mnt, rep):
    f = os.path.join(mnt, "meta-f%d" % rep)
    g = os.path.join(mnt, "meta-g%d" % rep)
    d = os.path.join(mnt, "meta-d%d" % rep)
    return [("touch", ["touch", f]), ("stat", ["stat", f]),
            ("truncate", ["truncate", "-s", "4096", f]), ("mv", ["mv", f, g]),
            ("rm", ["rm", g]), ("mkdir", ["mkdir", d]), ("rmdir", ["rmdir", d])]


def cifs_ops(mnt, ports, reps=3, settle=1.2, cold=True, pcap="/tmp/smbwire-cifs.pcap"):
    """Each operation in its own window; returns the JSON-able result."""
    cap = Capture(pcap, ports)
    cap.start()
    wins = []
    errors = []
    try:
        for rep in range(reps):
            for op, cmd in cifs_op_list(mnt, rep):
                if cold:
                    drop_caches()
                time.sleep(0.3)
                s0 = cifs_stats()
                t0 = time.time()
                r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
                t1 = time.time()
                time.sleep(settle)
                t2 = time.time()
                s1 = cifs_stats()
                if r.returncode:
                    errors.append("%s: exit %d: %s" % (" ".join(cmd), r.returncode,
                                                      r.stderr.strip()[-200:]))
                wins.append((op, rep, cmd, t0, t1, t2, stats_delta(s0, s1)))
    finally:
        all_chains = cap.stop()
    ops = {}
    covered = 0
    for op, rep, cmd, t0, t1, t2, sd in wins:
        w = window(all_chains, t0, t2)
        late = [c for c in w if c["ts"] > t1]
        covered += len(w)
        o = ops.setdefault(op, {"op": op, "command": " ".join(
            os.path.basename(x) if x.startswith(mnt) else x for x in cmd).replace(
            "meta-f0", "F").replace("meta-g0", "G").replace("meta-d0", "D"),
            "round_trips": [], "requests": [], "late_round_trips": [], "chains": [],
            "stats_requests": [], "stats": []})
        o["round_trips"].append(len(w))
        o["requests"].append(sum(len(c["cmds"]) for c in w))
        o["late_round_trips"].append(len(late))
        o["chains"].append([sig(c) for c in w])
        o["stats"].append(sd)
        o["stats_requests"].append(sd.get("SMBs", 0))
    req = [c for c in all_chains if c["dir"] == "req"]
    mounts = [l.split() for l in open("/proc/mounts") if l.split()[1] == mnt]
    return {
        "client": "cifs.ko", "mount": {"source": mounts[0][0] if mounts else "",
                                       "options": mounts[0][3] if mounts else ""},
        "reps": reps, "cold": cold, "settle_s": settle, "pcap": pcap,
        "ops": [ops[op] for op, _ in cifs_op_list(mnt, 0) if op in ops],
        "chains_total": len(req), "chains_outside_windows": len(
            [c for c in req if not is_session(c)]) - covered,
        "session_chains": len([c for c in req if is_session(c)]),
        "errors": errors,
    }


def rdax_wire(all_chains, t0, t1, jobs):
    """Cross-check of `rdax bench meta`: its chains on the wire, batch by batch.

    The bench runs each kind of operation in turn, so the non-session
    chains of its connection, in order, are the operations' chains.
    """
    w = window(all_chains, t0, t1)
    out = []
    i = 0
    for j in jobs:
        n = j["round_trips"]
        part = w[i:i + n]
        i += n
        out.append({"op": j["op"], "wire_round_trips": len(part),
                    "wire_requests": sum(len(c["cmds"]) for c in part),
                    "chains": sorted(set(sig(c) for c in part))})
    return {"ops": out, "wire_total": len(w), "counted_total": sum(
        j["round_trips"] for j in jobs)}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("chains")
    c.add_argument("pcap")
    c.add_argument("ports", type=int, nargs="+")
    k = sub.add_parser("capture")
    k.add_argument("pcap")
    k.add_argument("ports", type=int, nargs="+")
    k.add_argument("--ready", required=True)
    k.add_argument("--stop", required=True)
    r = sub.add_parser("protection")
    r.add_argument("pcap")
    r.add_argument("ports", type=int, nargs="+")
    r.add_argument("--pattern")
    ls = sub.add_parser("leases")
    ls.add_argument("pcap")
    ls.add_argument("ports", type=int, nargs="+")
    m = sub.add_parser("channels")
    m.add_argument("pcap")
    m.add_argument("ports", type=int, nargs="+")
    o = sub.add_parser("cifs-ops")
    o.add_argument("--mnt", required=True)
    o.add_argument("--ports", required=True)
    o.add_argument("--out", required=True)
    o.add_argument("--reps", type=int, default=3)
    o.add_argument("--settle", type=float, default=1.2)
    o.add_argument("--warm", action="store_true")
    o.add_argument("--pcap", default="/tmp/smbwire-cifs.pcap")
    a = p.parse_args()
    if a.cmd == "chains":
        for ch in chains(a.pcap, a.ports):
            print("%.6f %s %-22s %s%s" % (ch["ts"], ch["dir"], ch["conn"], sig(ch),
                                           " (interim)" if ch["interim"] else ""))
        return 0
    if a.cmd == "protection":
        pat = None
        if a.pattern:
            with open(a.pattern, "rb") as f:
                pat = f.read(64)
        print(json.dumps(protection(a.pcap, a.ports, pat), sort_keys=True))
        return 0
    if a.cmd == "leases":
        print(json.dumps(leases(a.pcap, a.ports), sort_keys=True))
        return 0
    if a.cmd == "channels":
        print(json.dumps(channels(a.pcap, a.ports), sort_keys=True))
        return 0
    if a.cmd == "capture":
        cap = Capture(a.pcap, a.ports)
        cap.start()
        open(a.ready, "w").close()
        while not os.path.exists(a.stop):
            time.sleep(0.1)
        ch = cap.stop()
        req = [c for c in ch if c["dir"] == "req" and not is_session(c)]
        cmds = {}
        for c in req:
            for x in c["cmds"]:
                cmds[x] = cmds.get(x, 0) + 1
        print(json.dumps({"chains": len(req), "cmds": cmds,
                          "bytes": sum(c["bytes"] for c in ch)}))
        return 0
    res = cifs_ops(a.mnt, [int(x) for x in a.ports.split(",")], a.reps, a.settle,
                   not a.warm, a.pcap)
    with open(a.out, "w") as f:
        json.dump(res, f, indent=1)
    for o in res["ops"]:
        say("%-8s round trips %s, requests %s, late %s; /proc/fs/cifs/Stats SMBs %s; %s" % (
            o["op"], o["round_trips"], o["requests"], o["late_round_trips"],
            o["stats_requests"], " | ".join(o["chains"][0])))
    for e in res["errors"]:
        say("error: " + e)
    return 1 if res["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
