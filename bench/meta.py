#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Round trips per metadata operation: rdax and Linux cifs.ko, in one boot.

  bench/meta.py guest OUTDIR    inside `tests/vm/run --pmem` (bench/meta)
  bench/meta.py report OUTDIR DEST   on the host: DEST (JSON) + the table

The guest part starts ksmbd (TCP 445), rdaxd (TCP 4450) and, when it is
installed, Samba smbd (a free port), each on a directory of the fsdax
mount, and against each server in turn:

  rdax     `rdax bench meta --json` (COUNT of each of touch, stat,
           truncate, mv, rm, mkdir, rmdir); its own round-trip counter,
           checked against the request chains dumpcap saw on the wire
  cifs.ko  mount -t cifs over TCP (tests/vm/peer cifs-mount --tcp) and
           coreutils touch, stat, truncate -s 4096, mv, rm, mkdir, rmdir
           in the mount's root, each in its own time window, REPS times;
           before each one the guest drops its dentry and inode caches
           (cold: the operation does its own lookups); round trips are the
           client's request chains (NetBIOS messages: one PDU or one
           compound) on the wire in the window, SMB2 ECHO left out, and
           /proc/fs/cifs/Stats gives the PDU count as a cross-check

Environment: RDAX_BENCH_META_COUNT (20), RDAX_BENCH_META_REPS (3),
RDAX_BENCH_META_SETTLE (1.2 s after each cifs operation: cifs.ko may
defer a CLOSE by closetimeo, 1 s by default).
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "vm"))
import smbwire  # noqa: E402

OPS = ["touch", "stat", "truncate", "mv", "rm", "mkdir", "rmdir"]
USER, PASSWORD = "bench", "rdax-Bench1"
COUNT = int(os.environ.get("RDAX_BENCH_META_COUNT", "20"))
REPS = int(os.environ.get("RDAX_BENCH_META_REPS", "3"))
SETTLE = float(os.environ.get("RDAX_BENCH_META_SETTLE", "1.2"))
RDAXD_PORT = 4450
STEP_TIMEOUT = 600


def say(msg):
    print("meta: " + msg, file=sys.stderr, flush=True)


def run(cmd, **kw):
    return subprocess.run(cmd, text=True, capture_output=True, timeout=STEP_TIMEOUT, **kw)


class Guest:
    def __init__(self, out):
        self.out = os.path.abspath(out)
        self.raw = os.path.join(self.out, "raw")
        os.makedirs(self.raw, exist_ok=True)
        self.addr = os.environ["RDAX_VM_ADDR"]
        self.base = os.environ.get("RDAX_VM_FSDAX") or "/tmp"
        self.build = os.environ.get("B", "build")
        self.results = {}
        self.errors = []
        self.notes = []

    def fail(self, msg):
        say("FAILED: " + msg)
        self.errors.append(msg)

    def note(self, msg):
        say(msg)
        self.notes.append(msg)

    # ---- servers: each returns (port, share, user, password file, password)
    def start_ksmbd(self, d):
        r = run(["tests/vm/peer", "ksmbd-start", d, "bench", USER, PASSWORD])
        if r.returncode:
            self.fail("ksmbd-start: " + (r.stdout + r.stderr)[-300:])
            return None
        return {"port": 445, "share": "bench", "user": USER, "password": PASSWORD,
                "pwfile": self.pwfile, "stop": lambda: run(["tests/vm/peer", "ksmbd-stop"])}

    def start_rdaxd(self, d):
        passdb = os.path.join(self.out, "passdb")
        run([self.build + "/rdax", "passwd", "--passdb", passdb, USER], input=PASSWORD + "\n")
        # the bench user acts as root, as ksmbd's force user = root does
        umap = os.path.join(self.out, "map")
        with open(umap, "w") as f:
            f.write("root = %s\n" % USER)
        log = open(os.path.join(self.raw, "rdaxd.log"), "w")
        p = subprocess.Popen([self.build + "/rdaxd", "--share", "bench=" + d, "--passdb", passdb,
                              "--username-map", umap,
                              "--listen", "tcp://%s:%d" % (self.addr, RDAXD_PORT)],
                             stdout=log, stderr=subprocess.STDOUT)
        for _ in range(300):
            with open(log.name) as f:
                if "ready" in f.read():
                    def stop():
                        p.terminate()
                        if p.wait(timeout=60):
                            self.fail("rdaxd exited with %d" % p.returncode)
                    return {"port": RDAXD_PORT, "share": "bench", "user": USER,
                            "password": PASSWORD, "pwfile": self.pwfile, "stop": stop}
            if p.poll() is not None:
                break
            time.sleep(0.1)
        self.fail("rdaxd did not start (raw/rdaxd.log)")
        p.kill()
        return None

    def start_smbd(self, d):
        if not shutil.which("smbd"):
            self.note("smbd not installed: no Samba column")
            return None
        r = run(["sh", "-c", '. tools/lib/smbd.sh && scratch_smbd "$1" bench && '
                 'echo "$SMBD_PORT $SMBD_PID"', "sh", d])
        if r.returncode:
            self.note("Samba smbd did not start in the guest: " + (r.stdout + r.stderr)[-300:])
            return None
        port, pid = (int(x) for x in r.stdout.split()[-2:])
        with open(os.path.join(d, "root.pw")) as f:
            pw = f.read().strip()

        def stop():
            try:
                os.kill(pid, 15)
            except OSError:
                pass
        # the share is DIR/bench, the scratch directories beside it
        return {"port": port, "share": "bench", "user": "root", "password": pw,
                "pwfile": os.path.join(d, "root.pw"), "stop": stop, "addr": "127.0.0.1"}

    # ---- one server: rdax bench meta, then cifs.ko
    def server(self, name, start):
        d = os.path.join(self.base, "rdax-bench-meta-" + name)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        s = start(d)
        if not s:
            return
        addr = s.get("addr", self.addr)
        res = self.results[name] = {"port": s["port"]}
        pcap = os.path.join(self.raw, "rdax-%s.pcap" % name)
        try:
            cap = smbwire.Capture(pcap, [s["port"]])
            cap.start()
            url = "smb://%s:%d/%s" % (addr, s["port"], s["share"])
            say("%s: rdax bench meta --count %d %s" % (name, COUNT, url))
            t0 = time.time()
            # no leases: every operation cold, as cifs.ko's with dropped caches,
            # and no deferred CLOSE on the wire that the bench does not count
            r = run([self.build + "/rdax", "--user", s["user"], "--password-file", s["pwfile"],
                     "--no-leases", "bench", "meta", "--count", str(COUNT), "--json", url])
            t1 = time.time()
            chains = cap.stop()
            if r.returncode:
                self.fail("%s: rdax bench meta: %s" % (name, r.stderr.strip()[-300:]))
            else:
                res["rdax"] = json.loads(r.stdout)
                res["rdax_wire"] = smbwire.rdax_wire(chains, t0, t1, res["rdax"]["jobs"])
                w = res["rdax_wire"]
                if w["wire_total"] != w["counted_total"]:
                    self.fail("%s: rdax counted %d round trips, the wire shows %d chains" % (
                        name, w["counted_total"], w["wire_total"]))
            mnt = "/mnt/rdax-bench-meta"
            opts = "port=%d" % s["port"]
            r = run(["tests/vm/peer", "cifs-mount", "--tcp", "//%s/%s" % (addr, s["share"]),
                     mnt, s["user"], s["password"], opts])
            if r.returncode:
                self.fail("%s: cifs mount: %s" % (name, (r.stdout + r.stderr)[-400:]))
                return
            try:
                say("%s: cifs.ko: %d x %s (cold caches, %.1f s settle)" % (
                    name, REPS, " ".join(OPS), SETTLE))
                c = smbwire.cifs_ops(mnt, [s["port"]], REPS, SETTLE, True,
                                     os.path.join(self.raw, "cifs-%s.pcap" % name))
                res["cifs"] = c
                for e in c["errors"]:
                    self.fail("%s: cifs: %s" % (name, e))
                for o in c["ops"]:
                    say("%s: cifs %-8s round trips %s requests %s (Stats %s): %s" % (
                        name, o["op"], o["round_trips"], o["requests"], o["stats_requests"],
                        " | ".join(o["chains"][0])))
            finally:
                run(["tests/vm/peer", "cifs-umount", mnt])
        finally:
            s["stop"]()
            shutil.rmtree(d, ignore_errors=True)

    def main(self):
        self.pwfile = os.path.join(self.out, "pw")
        with open(self.pwfile, "w") as f:
            f.write(PASSWORD + "\n")
        os.chmod(self.pwfile, 0o600)
        if not shutil.which("dumpcap"):
            self.fail("dumpcap not installed (tshark, tools/deps.sh test)")
        else:
            self.server("ksmbd", self.start_ksmbd)
            self.server("rdaxd", self.start_rdaxd)
            self.server("smbd", self.start_smbd)
        facts = {
            "guest_kernel": os.uname().release, "guest_cpus": os.cpu_count(),
            "share_fs": self.base + (" (ext4 -o dax)" if self.base != "/tmp" else " (tmpfs)"),
            "coreutils": run(["touch", "--version"]).stdout.split("\n")[0],
            "samba": run(["smbd", "--version"]).stdout.strip() if shutil.which("smbd") else None,
            "ksmbd_tools": os.environ.get("RDAX_VM_PEERS", ""),
        }
        with open(os.path.join(self.out, "guest.json"), "w") as f:
            json.dump({"guest": facts, "results": self.results, "errors": self.errors,
                       "notes": self.notes, "count": COUNT, "reps": REPS, "settle_s": SETTLE},
                      f, indent=1)
        return 1 if self.errors else 0


def median(v):
    return statistics.median(v) if v else None


def fmt(v):
    if v is None:
        return "-"
    return "%d" % v if v == int(v) else "%.1f" % v


def report(out, dest):
    with open(os.path.join(out, "guest.json")) as f:
        g = json.load(f)
    servers = [s for s in ("rdaxd", "ksmbd", "smbd") if s in g["results"]]
    jobs = []
    cell = {}
    for s in servers:
        res = g["results"][s]
        rd = res.get("rdax")
        if rd:
            wire = {o["op"]: o for o in res["rdax_wire"]["ops"]}
            for j in rd["jobs"]:
                w = wire.get(j["op"], {})
                job = {"jobname": "rdax-%s/%s" % (s, j["op"]), "client": "rdax", "server": s,
                       "op": j["op"], "round_trips_per_op": j["round_trips_per_op"],
                       "requests_per_op": j["requests_per_op"],
                       "wire_round_trips_per_op": w.get("wire_round_trips", 0) / max(
                           j["total_ios"], 1),
                       "wire_requests_per_op": w.get("wire_requests", 0) / max(
                           j["total_ios"], 1),
                       "chains": w.get("chains", []), "total_ios": j["total_ios"],
                       "error": j["error"], "iops": j["iops"], "runtime_ms": j["runtime_ms"],
                       "lat_ns": j["lat_ns"]}
                jobs.append(job)
                cell[("rdax", s, j["op"])] = job
        c = res.get("cifs")
        if c:
            for o in c["ops"]:
                rt = o["round_trips"]
                job = {"jobname": "cifs-%s/%s" % (s, o["op"]), "client": "cifs", "server": s,
                       "op": o["op"], "command": o["command"],
                       "round_trips_per_op": median(rt), "round_trips": rt,
                       "requests_per_op": median(o["requests"]), "requests": o["requests"],
                       "stats_requests": o["stats_requests"], "stable": min(rt) == max(rt),
                       "late_round_trips": o["late_round_trips"], "chains": o["chains"],
                       "cache": "cold", "total_ios": len(rt), "error": 0}
                jobs.append(job)
                cell[("cifs", s, o["op"])] = job
    cols = [(c, s) for c in ("rdax", "cifs") for s in servers]
    lines = ["round trips per operation (rdax: bench meta, %d of each, its counter = the "
             "wire; cifs.ko: coreutils on a TCP mount, cold dentry/inode cache, median of %d)"
             % (g["count"], g["reps"]),
             "%-9s" % "op" + "".join("%13s" % ("%s>%s" % cs) for cs in cols)]
    for op in OPS:
        row = "%-9s" % op
        for c, s in cols:
            j = cell.get((c, s, op))
            v = fmt(j["round_trips_per_op"]) if j else "-"
            if j and c == "cifs" and not j["stable"]:
                v += "*"
            row += "%13s" % v
        lines.append(row)
    lines.append("%-9s" % "(PDUs)" + "".join("%13s" % "" for _ in cols))
    for op in OPS:
        row = "%-9s" % op
        for c, s in cols:
            j = cell.get((c, s, op))
            row += "%13s" % (fmt(j["requests_per_op"]) if j else "-")
        lines.append(row)
    if any(not j.get("stable", True) for j in jobs):
        lines.append("* varied between repetitions (see round_trips in the JSON)")
    lines.append("cifs.ko chains (first repetition):")
    for s in servers:
        for op in OPS:
            j = cell.get(("cifs", s, op))
            if j:
                lines.append("  %-6s %-9s %s" % (s, op, " | ".join(j["chains"][0])))
    testbed = json.loads(os.environ.get("RDAX_TESTBED", "{}"))
    now = int(time.time())
    doc = {
        "rdax version": os.environ.get("RDAX_DESCRIBE", ""),
        "schema_version": 1, "bench": "meta", "timestamp": now,
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now)),
        "testbed": testbed, "guest": g["guest"],
        "config": {"rdax_count": g["count"], "cifs_reps": g["reps"],
                   "cifs_settle_s": g["settle_s"], "transport": "tcp",
                   "cifs_cache": "cold: dentries and inodes dropped before each operation",
                   "cifs_mount": {s: g["results"][s].get("cifs", {}).get("mount")
                                  for s in servers},
                   "round_trip": "one request chain (NetBIOS message: one SMB2 PDU or one "
                                 "compound) from the client; SMB2 ECHO not counted"},
        "note": "Counts, not speeds: the iops of rdax jobs are emulation figures (TCG).",
        "errors": g["errors"], "notes": g["notes"], "jobs": jobs,
    }
    with open(dest + ".tmp", "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(dest + ".tmp", dest)
    print("\n".join(lines))
    for e in g["errors"]:
        say("error: " + e)
    missing = [("%s>%s" % cs) for cs in cols if not any(
        (cs[0], cs[1], op) in cell for op in OPS)]
    if "rdaxd" not in servers or "ksmbd" not in servers or missing:
        say("missing results: %s" % (", ".join(missing) or "a server"))
        return 1
    return 1 if g["errors"] else 0


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "guest":
        return Guest(sys.argv[2]).main()
    if len(sys.argv) == 4 and sys.argv[1] == "report":
        return report(sys.argv[2], sys.argv[3])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
