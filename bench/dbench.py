#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""dbench on a cifs.ko mount, rdaxd next to ksmbd, in one boot.

  bench/dbench.py guest OUTDIR        inside `tests/vm/run --pmem` (bench/dbench)
  bench/dbench.py report OUTDIR DEST  on the host: DEST (JSON), DEST's .md, the table

The guest part serves two backings, each from rdaxd (TCP 4450, its
defaults: leases, directory leases, oplocks) and from ksmbd (TCP 445,
`smb2 leases = yes`, oplocks), one server at a time, rdaxd first:

  posix  an ext4 on a loop device in the guest's tmpfs (the guest has no
         disk); rdaxd `store = posix`, ksmbd the kernel VFS; one
         directory each on the same file system
  dax    the fsdax mount (ext4 -o dax on the emulated NVDIMM); rdaxd
         `store = dax` (libpmem2 mappings), ksmbd the kernel VFS (DAX I/O)

For each (backing, server): `mount -t cifs` over TCP with cifs.ko's
defaults (cache=strict, leases), then `dbench -D MOUNT -t TIME CLIENTS`
(Debian's dbench 4.0 with its client.txt load), unmount. All of
rdaxd's runs come first, then ksmbd's. dbench's throughput is
1e-6 x the bytes its clients read and wrote after the warmup (TIME / 5)
per second of the run. The guest's /proc/stat over each run gives how busy
its CPUs were (dbench, cifs.ko and the server together): under TCG the
emulated CPUs, not the wire, are the limit.

Environment: RDAX_BENCH_DBENCH_TIME (30 s), RDAX_BENCH_DBENCH_CLIENTS (4),
RDAX_BENCH_DBENCH_BACKINGS ("posix dax"), RDAX_BENCH_DBENCH_SERVERS ("rdaxd
ksmbd"), RDAX_BENCH_DBENCH_KSMBD_GLOBAL (a
line for ksmbd.conf's [global]: "smb2 leases = yes"; empty: its defaults),
RDAX_BENCH_DBENCH_PERF (e.g. "perf record -a -g": each dbench run under it,
the data in OUTDIR/raw/perf-SERVER-BACKING.data).

rdaxd runs first on every backing, then ksmbd: the testbed's 6.1 ksmbd
panics the guest under this load (smb2_open, list_add corruption; 6.12's
does not, bench/dbench boots 6.12 when installed), and guest.json is
written before and after each run, so the host still reports what ran
and names the run the guest died in.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import time

USER, PASSWORD = "bench", "rdax-Bench1"
TIME = int(os.environ.get("RDAX_BENCH_DBENCH_TIME", "30"))
CLIENTS = int(os.environ.get("RDAX_BENCH_DBENCH_CLIENTS", "4"))
BACKINGS = os.environ.get("RDAX_BENCH_DBENCH_BACKINGS", "posix dax").split()
SERVERS = os.environ.get("RDAX_BENCH_DBENCH_SERVERS", "rdaxd ksmbd").split()
# a profiler command to run each dbench under, e.g. "perf record -a -g":
# its data goes to OUTDIR/raw/perf-SERVER-BACKING.data
PERF = os.environ.get("RDAX_BENCH_DBENCH_PERF", "")
RDAXD_PORT = 4450
MNT = "/mnt/rdax-bench-dbench"
# leases, as rdaxd grants them (ksmbd's default is oplocks only). The
# testbed's 6.1 ksmbd (Debian's 6.1.192, rebuilt with SMB-Direct) panicked
# the guest in smb2_open (list_add corruption) within a minute of dbench,
# with "smb2 leases = yes" and with its defaults alike
KSMBD_GLOBAL = os.environ.get("RDAX_BENCH_DBENCH_KSMBD_GLOBAL", "smb2 leases = yes")


def say(msg):
    print("dbench: " + msg, file=sys.stderr, flush=True)


def run(cmd, timeout=600, **kw):
    return subprocess.run(cmd, text=True, capture_output=True, timeout=timeout, **kw)


def cpu_ticks():
    """the guest's /proc/stat "cpu" line: {field: ticks}"""
    names = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
    with open("/proc/stat") as f:
        w = f.readline().split()
    return dict(zip(names, (int(x) for x in w[1:9])))


def cpu_share(t0, t1):
    """percent of the guest's CPU time between two cpu_ticks(): busy and its parts"""
    d = {k: t1[k] - t0[k] for k in t0}
    total = sum(d.values()) or 1
    pct = {k: round(100.0 * v / total, 1) for k, v in d.items()}
    pct["busy"] = round(100.0 - pct["idle"] - pct["iowait"], 1)
    return pct


def parse_dbench(text):
    """dbench 4.0's result: throughput, max latency and its op table"""
    res = {"ops": {}}
    m = re.search(r"^Throughput ([0-9.]+) MB/sec.*?(\d+) clients\s+(\d+) procs\s+"
                  r"max_latency=([0-9.]+) ms", text, re.M)
    if m:
        res["throughput_MBps"] = float(m.group(1))
        res["clients"] = int(m.group(2))
        res["max_latency_ms"] = float(m.group(4))
    for m in re.finditer(r"^\s*([A-Za-z]+)\s+(\d+)\s+([0-9.]+)\s+([0-9.]+)\s*$", text, re.M):
        res["ops"][m.group(1)] = {"count": int(m.group(2)), "avg_lat_ms": float(m.group(3)),
                                  "max_lat_ms": float(m.group(4))}
    m = re.search(r"minimum warmup (\d+) secs", text)
    if m:
        res["warmup_s"] = int(m.group(1))
    return res


class Guest:
    def __init__(self, out):
        self.out = os.path.abspath(out)
        self.raw = os.path.join(self.out, "raw")
        os.makedirs(self.raw, exist_ok=True)
        self.addr = os.environ["RDAX_VM_ADDR"]
        self.build = os.environ.get("B", "build")
        self.results = []
        self.errors = []
        self.backing = {}
        self.rdaxd = None
        self.running = None

    def fail(self, msg):
        say("FAILED: " + msg)
        self.errors.append(msg)

    # ---- backings: name -> directory holding the servers' share dirs
    def make_posix(self):
        d, img = "/mnt/rdax-bench-dbench-ext4", "/tmp/dbench-ext4.img"
        run(["truncate", "-s", "1536M", img])
        os.makedirs(d, exist_ok=True)
        run(["modprobe", "loop"])
        r = run(["mkfs.ext4", "-q", "-F", img])
        if r.returncode or run(["mount", "-o", "loop", img, d]).returncode:
            self.fail("no ext4 on a loop device for the posix backing: " + r.stderr[-200:])
            return None
        self.backing["posix"] = "ext4 on a loop device on the guest's tmpfs"
        return d

    def make_dax(self):
        fsdax = os.environ.get("RDAX_VM_FSDAX")
        if not fsdax:
            self.fail("no fsdax mount (tests/vm/run --pmem)")
            return None
        d = os.path.join(fsdax, "rdax-bench-dbench")
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        self.backing["dax"] = "ext4 -o dax on the emulated NVDIMM (%s)" % fsdax
        return d

    # ---- servers
    def start_rdaxd(self, dirs):
        passdb = os.path.join(self.out, "passdb")
        run([self.build + "/rdax", "passwd", "--passdb", passdb, USER], input=PASSWORD + "\n")
        # the bench user acts as root, as ksmbd's force user = root does
        umap = os.path.join(self.out, "map")
        with open(umap, "w") as f:
            f.write("root = %s\n" % USER)
        conf = os.path.join(self.out, "rdaxd.conf")
        with open(conf, "w") as f:
            f.write("[global]\n\tpassdb file = %s\n\tusername map = %s\n\tlisten = tcp://%s:%d\n"
                    % (passdb, umap, self.addr, RDAXD_PORT))
            for b, d in dirs.items():
                os.makedirs(os.path.join(d, "rdaxd"), exist_ok=True)
                f.write("[%s]\n\tpath = %s\n\tstore = %s\n\tread only = no\n" % (
                    b, os.path.join(d, "rdaxd"), b))
        self.rdaxd_log = os.path.join(self.raw, "rdaxd.log")
        log = open(self.rdaxd_log, "w")
        p = subprocess.Popen([self.build + "/rdaxd", "--config", conf], stdout=log,
                             stderr=subprocess.STDOUT)
        for _ in range(300):
            with open(self.rdaxd_log) as f:
                if "ready" in f.read():
                    self.rdaxd = p
                    return True
            if p.poll() is not None:
                break
            time.sleep(0.1)
        self.fail("rdaxd did not start (raw/rdaxd.log)")
        p.kill()
        return False

    def rdaxd_caching(self):
        """SIGUSR1: rdaxd's caching counters (leases, breaks)"""
        with open(self.rdaxd_log) as f:
            n0 = len(f.readlines())
        self.rdaxd.send_signal(10)
        time.sleep(1)
        with open(self.rdaxd_log) as f:
            lines = f.readlines()[n0:]
        c = [l for l in lines if "stats caching" in l]
        return c[-1].split("stats caching: ", 1)[-1].strip() if c else None

    def server(self, name, backing, d):
        """(unc, mount options, stop) of NAME serving backing's dir"""
        if name == "rdaxd":
            return "//%s/%s" % (self.addr, backing), "port=%d" % RDAXD_PORT, lambda: None
        kd = os.path.join(d, "ksmbd")
        os.makedirs(kd, exist_ok=True)
        env = dict(os.environ)
        if KSMBD_GLOBAL:
            env["RDAX_KSMBD_GLOBAL"] = KSMBD_GLOBAL
        r = run(["tests/vm/peer", "ksmbd-start", kd, "bench", USER, PASSWORD], env=env)
        if r.returncode:
            self.fail("ksmbd-start: " + (r.stdout + r.stderr)[-300:])
            return None
        return "//%s/bench" % self.addr, "", lambda: run(["tests/vm/peer", "ksmbd-stop"])

    def one(self, name, backing, d):
        s = self.server(name, backing, d)
        if not s:
            return
        unc, opts, stop = s
        job = {"server": name, "backing": backing, "unc": unc}
        # on disk before the run: the host names the run a crash ended
        self.running = "%s/%s" % (name, backing)
        self.write()
        try:
            r = run(["tests/vm/peer", "cifs-mount", "--tcp", unc, MNT, USER, PASSWORD, opts])
            if r.returncode:
                self.fail("%s/%s: cifs mount: %s" % (name, backing, (r.stdout + r.stderr)[-300:]))
                return
            with open("/proc/mounts") as f:
                job["mount"] = next((l.split()[3] for l in f if l.split()[1] == MNT), "")
            run(["sync"])
            with open("/proc/sys/vm/drop_caches", "w") as f:
                f.write("3\n")
            say("%s/%s: dbench -t %d %d on %s (%s)" % (name, backing, TIME, CLIENTS, unc,
                                                       job["mount"]))
            t0, c0 = time.time(), cpu_ticks()
            try:
                r = run(PERF.split() + ["-o", os.path.join(self.raw, "perf-%s-%s.data" % (
                    name, backing)), "--"] * bool(PERF) +
                    ["dbench", "-D", MNT, "-t", str(TIME), str(CLIENTS)],
                    timeout=TIME * 4 + 120)
            except subprocess.TimeoutExpired as e:
                r = subprocess.CompletedProcess(e.cmd, 124, e.stdout or "", e.stderr or "")
                if isinstance(r.stdout, bytes):
                    r.stdout, r.stderr = r.stdout.decode(errors="replace"), ""
            job["guest_cpu_pct"] = cpu_share(c0, cpu_ticks())
            job["wall_s"] = round(time.time() - t0, 1)
            with open(os.path.join(self.raw, "dbench-%s-%s.out" % (name, backing)), "w") as f:
                f.write(r.stdout + r.stderr)
            job.update(parse_dbench(r.stdout))
            job["exit"] = r.returncode
            if r.returncode or "throughput_MBps" not in job:
                tail = (r.stdout + r.stderr).strip().splitlines()[-3:]
                self.fail("%s/%s: dbench exit %d: %s" % (name, backing, r.returncode,
                                                         " | ".join(tail)))
            else:
                say("%s/%s: %.2f MB/s, max latency %.1f ms, guest CPU %.0f%% busy" % (
                    name, backing, job["throughput_MBps"], job["max_latency_ms"],
                    job["guest_cpu_pct"]["busy"]))
            if name == "rdaxd":
                job["rdaxd_caching"] = self.rdaxd_caching()
                say("rdaxd: " + str(job["rdaxd_caching"]))
            job["dmesg"] = [l for l in run(["dmesg"]).stdout.splitlines()[-400:]
                            if re.search(r"CIFS|cifs|ksmbd", l)][-10:]
        finally:
            run(["tests/vm/peer", "cifs-umount", MNT])
            stop()
            self.results.append(job)
            self.running = None
            # each result on disk at once: a guest that dies keeps the ones before
            self.write()

    def main(self):
        if not shutil.which("dbench"):
            self.fail("dbench is not installed (tools/deps.sh vm)")
            return self.write()
        dirs = {}
        for b in BACKINGS:
            d = {"posix": self.make_posix, "dax": self.make_dax}[b]()
            if d:
                dirs[b] = d
        # rdaxd's runs first: the testbed's ksmbd (Linux 6.1) has panicked
        # the guest under this load, and a panic ends the boot
        if dirs and "rdaxd" in SERVERS and self.start_rdaxd(dirs):
            for b in dirs:
                self.one("rdaxd", b, dirs[b])
            self.rdaxd.terminate()
            if self.rdaxd.wait(timeout=60):
                self.fail("rdaxd exited with %d" % self.rdaxd.returncode)
        for b in dirs if "ksmbd" in SERVERS else ():
            self.one("ksmbd", b, dirs[b])
        for b, d in dirs.items():
            if b == "posix":
                run(["umount", d])
            else:
                shutil.rmtree(d, ignore_errors=True)
        return self.write()

    def write(self):
        facts = {
            "guest_kernel": os.uname().release, "guest_cpus": os.cpu_count(),
            "dbench": (run(["dpkg-query", "-W", "-f", "${Version}", "dbench"]).stdout
                       if shutil.which("dpkg-query") else None),
            "loadfile": "/usr/share/dbench/client.txt",
            "ksmbd_tools": os.environ.get("RDAX_VM_PEERS", ""),
            "ksmbd_global": KSMBD_GLOBAL,
            "backings": self.backing,
        }
        with open(os.path.join(self.out, "guest.json"), "w") as f:
            json.dump({"guest": facts, "results": self.results, "errors": self.errors,
                       "time_s": TIME, "clients": CLIENTS, "running": self.running},
                      f, indent=1)
            f.flush()
            os.fsync(f.fileno())
        return 1 if self.errors else 0


def _busy(job):
    c = job and job.get("guest_cpu_pct")
    return "%.0f%%" % c["busy"] if c else "-"


def report(out, dest):
    with open(os.path.join(out, "guest.json")) as f:
        g = json.load(f)
    jobs, cell = [], {}
    for r in g["results"]:
        if "throughput_MBps" not in r:
            continue
        bw = r["throughput_MBps"] * 1e6
        runtime_ms = int((g["time_s"] - r.get("warmup_s", 0)) * 1000)
        job = {
            "jobname": "cifs-%s/%s" % (r["server"], r["backing"]),
            "client": "cifs.ko", "server": r["server"], "store": r["backing"],
            "backing": g["guest"]["backings"].get(r["backing"]), "transport": "tcp",
            "workload": "dbench %d clients" % r["clients"], "numjobs": r["clients"],
            "mount": r.get("mount"),
            # dbench counts bytes read and written together: fio's "mixed"
            "mixed": {"io_bytes": int(bw * runtime_ms / 1000), "bw_bytes": int(bw),
                      "bw": int(bw / 1024), "runtime": runtime_ms,
                      "lat_ns": {"max": int(r["max_latency_ms"] * 1e6)}},
            "dbench": {"throughput_MBps": r["throughput_MBps"],
                       "max_latency_ms": r["max_latency_ms"], "warmup_s": r.get("warmup_s"),
                       "ops": {k: {"count": v["count"],
                                   "lat_ns": {"mean": int(v["avg_lat_ms"] * 1e6),
                                              "max": int(v["max_lat_ms"] * 1e6)}}
                               for k, v in r["ops"].items()}},
            "job_runtime": runtime_ms, "wall_s": r.get("wall_s"), "error": r.get("exit", 0),
        }
        if r.get("guest_cpu_pct"):
            # the whole guest (dbench, cifs.ko, the server) over the run
            job["guest_cpu_pct"] = r["guest_cpu_pct"]
        if r.get("rdaxd_caching"):
            job["rdaxd_caching"] = r["rdaxd_caching"]
        if r.get("dmesg"):
            job["warnings"] = r["dmesg"]
        jobs.append(job)
        cell[(r["server"], r["backing"])] = job
    backings = [b for b in ("posix", "dax") if any(k[1] == b for k in cell)]
    ratios = []
    for b in backings:
        a, k = cell.get(("rdaxd", b)), cell.get(("ksmbd", b))
        if a and k:
            ratios.append({"workload": "dbench %d clients" % g["clients"], "store": b,
                           "metric": "bw_bytes", "rdaxd": a["mixed"]["bw_bytes"],
                           "ksmbd": k["mixed"]["bw_bytes"],
                           "ratio": a["mixed"]["bw_bytes"] / k["mixed"]["bw_bytes"]})
    testbed = json.loads(os.environ.get("RDAX_TESTBED", "{}"))
    # the guest died in a run (a kernel panic): that run, and the console's words
    crash = []
    if g.get("running"):
        console = os.environ.get("RDAX_GUEST_CONSOLE", "").strip()
        crash.append("the guest stopped during %s (guest exit %s)%s" % (
            g["running"], os.environ.get("RDAX_GUEST_RC", "?"),
            ": " + " | ".join(console.splitlines()[:6]) if console else ""))
    now = int(time.time())
    doc = {
        "rdax version": os.environ.get("RDAX_DESCRIBE", ""),
        "schema_version": 1, "bench": "dbench", "timestamp": now,
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now)),
        "testbed": testbed, "guest": g["guest"],
        "config": {"dbench_time_s": g["time_s"], "clients": g["clients"],
                   "client": "cifs.ko over TCP, default options (cache=strict, leases)",
                   "rdaxd": "defaults: smb2 leases, directory leases, oplocks on; durable "
                            "handles granted to opens that hold handle caching",
                   "ksmbd": "%s; oplocks = yes (default). Durable handles: none (%s; "
                            "ksmbd-tools 3.4.7 has no 'durable handles')" % (
                                g["guest"].get("ksmbd_global") or
                                "its defaults: smb2 leases = no",
                                "Linux 6.1 parses no DHnQ/DH2Q"
                                if g["guest"]["guest_kernel"].startswith("6.1.") else
                                "this ksmbd grants them only when mountd sets its "
                                "durable-handle flag"),
                   "throughput": "dbench: 1e-6 x bytes read+written after the warmup "
                                 "(time / 5) per second; bw_bytes = that x 1e6"},
        "note": "qemu (%s) guest: dbench's %d clients, cifs.ko and the server share %s "
                "emulated CPUs (guest_cpu_pct: how busy they were); compare the servers "
                "in one run, not absolute rates"
                % (testbed.get("accel", "?"), g["clients"], g["guest"].get("guest_cpus", "?")),
        "errors": g["errors"] + crash, "jobs": jobs, "ratios": ratios,
    }
    with open(dest + ".tmp", "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(dest + ".tmp", dest)

    md = ["| backing | rdaxd MB/s | ksmbd MB/s | rdaxd/ksmbd | max latency rdaxd / ksmbd (ms) "
          "| guest CPU busy rdaxd / ksmbd |",
          "|---|---:|---:|---:|---:|---:|"]
    for b in backings:
        a, k = cell.get(("rdaxd", b)), cell.get(("ksmbd", b))
        ratio = next((r["ratio"] for r in ratios if r["store"] == b), None)
        md.append("| %s | %s | %s | %s | %s / %s | %s / %s |" % (
            g["guest"]["backings"].get(b, b),
            "%.2f" % a["dbench"]["throughput_MBps"] if a else "-",
            "%.2f" % k["dbench"]["throughput_MBps"] if k else "-",
            "%.2f×" % ratio if ratio else "-",
            "%.0f" % a["dbench"]["max_latency_ms"] if a else "-",
            "%.0f" % k["dbench"]["max_latency_ms"] if k else "-",
            _busy(a), _busy(k)))
    with open(os.path.splitext(dest)[0] + ".md", "w") as f:
        f.write("dbench %d clients, %d s, cifs.ko over TCP (%s)\n\n" % (
            g["clients"], g["time_s"], doc["time"]) + "\n".join(md) + "\n")
    print("dbench %d clients, %d s, cifs.ko over TCP" % (g["clients"], g["time_s"]))
    print("\n".join(md))
    for e in doc["errors"]:
        say("error: " + e)
    if not ratios or len(ratios) < len(BACKINGS):
        say("missing results: %d of %d backings have both servers" % (len(ratios),
                                                                      len(BACKINGS)))
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
