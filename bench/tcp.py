#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""SMB3 over TCP on the host: rdaxd and Samba smbd side by side (bench/tcp).

  bench/tcp.py [options] --server NAME,PID,PORT,USER,PASSWORD_FILE ...

bench/tcp starts the servers and calls this; it runs fio with the rdax
engine against each server, interleaved, and writes the JSON and the table.

  --server NAME,PID,PORT,USER,PWFILE   a server on 127.0.0.1:PORT, share
                                       "bench"; PID is its (parent) process
  --work DIR      raw fio output goes to DIR/raw/
  --out FILE      the JSON (build/bench/tcp.json)
  --md FILE       the table (build/bench/tcp.md); also printed
  --runs N --runtime SECS --ramp SECS --size SIZE
  --share-dir DIR the directory holding the shares (for its file system)
  --note TEXT     a note to carry into the JSON (repeatable)

Per job the server's CPU time is utime+stime of PID and all its
descendants (rdaxd: its threads; smbd: the parent, its helpers and the
child serving the connection), read from /proc four times a second and
interpolated to the window fio measured (after the ramp), trimmed at both
ends; CPU per I/O = server CPU rate / IOPS. The client's is fio's own
usr_cpu + sys_cpu over the same window (job_runtime) per I/O.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import threading
import time

BASELINE = "smbd"
SUBJECT = "rdaxd"
OTHER_BUILD = "rdaxd-base"   # bench/tcp's RDAX_BENCH_RDAXD_BASE
# name, fio rw, bs, iodepth, file on the share, direction in fio's JSON
WORKLOADS = [
    ("seqwrite-1m-qd8", "write", 1 << 20, 8, "seq.bin", "write"),
    ("seqread-1m-qd8", "read", 1 << 20, 8, "seq.bin", "read"),
    ("randread-4k-qd1", "randread", 4096, 1, "rand.bin", "read"),
    ("randread-4k-qd32", "randread", 4096, 32, "rand.bin", "read"),
    ("randwrite-4k-qd1", "randwrite", 4096, 1, "rand.bin", "write"),
    ("randwrite-4k-qd32", "randwrite", 4096, 32, "rand.bin", "write"),
]
PERCENTILES = "50:90:99:99.9:99.99"
PCT = {"p50": "50.000000", "p99": "99.000000", "p99.9": "99.900000"}
HZ = os.sysconf("SC_CLK_TCK")
SAMPLE_S = 0.25
TRIM_S = 0.25          # off both ends of fio's measured window
B = os.environ.get("B", "build")
ENGINE = os.path.join(B, "fio-rdax.so")
WIRE = "wire"          # iperf3's loopback TCP limit, beside the bulk rows


def say(msg):
    print("tcp: " + msg, file=sys.stderr, flush=True)


# ---- /proc

def proc_table():
    """pid -> (ppid, utime+stime ticks, comm) for every process."""
    out = {}
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % p) as f:
                st = f.read()
        except OSError:
            continue
        f = st[st.rindex(")") + 2:].split()
        out[int(p)] = (int(f[1]), int(f[11]) + int(f[12]), st[st.index("(") + 1:st.rindex(")")])
    return out


def tree_ticks(table, root):
    """utime+stime of root and all its descendants, and their pids."""
    kids = {}
    for pid, (ppid, _, _) in table.items():
        kids.setdefault(ppid, []).append(pid)
    total, seen, todo = 0, [], [root]
    while todo:
        p = todo.pop()
        if p not in table:
            continue
        seen.append(p)
        total += table[p][1]
        todo += kids.get(p, [])
    return total, seen


def host_busy_ticks():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return sum(v[:8]) - v[3] - v[4]  # all but idle and iowait


class Sampler(threading.Thread):
    """(time, server tree ticks, host busy ticks, {pid: ticks} of the other
    user processes) every SAMPLE_S. "Other" is everything but the server's
    tree, fio, this script and kernel threads: a measure of the noise."""

    def __init__(self, root):
        super().__init__(daemon=True)
        self.root = root
        self.samples = []
        self.stop = threading.Event()

    def sample(self):
        t = time.monotonic()
        tab = proc_table()
        s, pids = tree_ticks(tab, self.root)
        mine = set(pids) | {os.getpid()}
        other = {p: v[1] for p, v in tab.items()
                 if p not in mine and v[2] != "fio" and p != 2 and v[0] != 2}
        self.samples.append((t, s, host_busy_ticks(), other))

    def other_cpu(self, t0, t1):
        """CPU of the other user processes between the samples nearest t0
        and t1, in % of one CPU."""
        if len(self.samples) < 2:
            return None
        a = min(self.samples, key=lambda x: abs(x[0] - t0))
        b = min(self.samples, key=lambda x: abs(x[0] - t1))
        if b[0] <= a[0]:
            return None
        ticks = sum(v - a[3].get(p, 0) for p, v in b[3].items() if v >= a[3].get(p, 0))
        return round(ticks / HZ / (b[0] - a[0]) * 100, 1)

    def run(self):
        while True:
            self.sample()
            if self.stop.wait(SAMPLE_S):
                break
        self.sample()

    def at(self, t, k):
        """Field k (1 server, 2 host) interpolated at time t."""
        s = self.samples
        if not s or t < s[0][0] or t > s[-1][0]:
            return None
        for a, b in zip(s, s[1:]):
            if a[0] <= t <= b[0]:
                if b[0] == a[0]:
                    return a[k]
                return a[k] + (b[k] - a[k]) * (t - a[0]) / (b[0] - a[0])
        return s[-1][k]


def wait_tree_idle(root, idle_pids, timeout=10):
    """Wait until the server's process tree is back to its idle set (smbd's
    connection child has exited), so the next job starts clean."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        _, pids = tree_ticks(proc_table(), root)
        if set(pids) <= set(idle_pids):
            return True
        time.sleep(0.1)
    return False


# ---- statistics

def median(v):
    v = sorted(v)
    n = len(v)
    if not n:
        return None
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def spread(v):
    m = median(v)
    return {"min": min(v), "max": max(v),
            "pct": round((max(v) - min(v)) / m * 100, 1) if m else None}


# ---- host description

def cmd_out(args):
    try:
        r = subprocess.run(args, capture_output=True, text=True, timeout=30)
        return (r.stdout or r.stderr).strip().splitlines()[0]
    except (OSError, IndexError, subprocess.TimeoutExpired):
        return "unknown"


def host_facts(share_dir, top):
    cpu = "unknown"
    with open("/proc/cpuinfo") as f:
        m = re.search(r"^model name\s*:\s*(.*)$", f.read(), re.M)
        if m:
            cpu = m.group(1)
    cores = None
    try:
        lines = subprocess.run(["lscpu", "-p=core,socket"], capture_output=True,
                               text=True).stdout.splitlines()
        cores = len({ln for ln in lines if not ln.startswith("#")}) or None
    except OSError:
        pass
    with open("/proc/meminfo") as f:
        mem = int(re.search(r"MemTotal:\s*(\d+)", f.read()).group(1))
    fs = cmd_out(["findmnt", "-n", "-o", "FSTYPE,SOURCE,OPTIONS", "-T", share_dir])
    ver = "unknown"
    try:
        with open(os.path.join(top, "VERSION")) as f:
            ver = f.read().strip()
    except OSError:
        pass
    git = cmd_out(["git", "-C", top, "describe", "--always", "--dirty"])
    return {
        "cpu": cpu, "cpus": os.cpu_count(), "cores": cores, "mem_kb": mem,
        "kernel": os.uname().release,
        "rdax_version": "%s (%s)" % (ver, git),
        "rdaxd": cmd_out([os.path.join(top, B, "rdaxd"), "--version"]),
        "smbd": cmd_out(["smbd", "--version"]).replace("Version ", "Samba "),
        "fio": cmd_out(["fio", "--version"]),
        "iperf3": cmd_out(["iperf3", "--version"]),
        "share_fs": " ".join(fs.split()), "share_dir": share_dir,
        "loadavg": open("/proc/loadavg").read().split()[:3],
        "placement": placement(),
    }


def free_port():
    """A port below the ephemeral range: tools/lib/free-port.py says why."""
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return int(subprocess.check_output(
        [sys.executable, os.path.join(top, "tools", "lib", "free-port.py")]))


def placement():
    """Where the bench ran: NUMA nodes, and the CPUs and memory nodes the
    servers and fio inherit (none of them is bound by the bench)."""
    def read(path):
        try:
            with open(path) as f:
                return f.read().strip()
        except OSError:
            return None
    status = read("/proc/self/status") or ""
    allowed = dict(re.findall(r"^(Cpus_allowed_list|Mems_allowed_list):\s*(\S+)", status, re.M))
    return {"numa_nodes_online": read("/sys/devices/system/node/online"),
            "cpus": allowed.get("Cpus_allowed_list"), "mems": allowed.get("Mems_allowed_list"),
            "binding": "none: rdaxd, smbd and fio inherit these"}


def background_cpu(secs=1.0):
    """Busy CPU of the whole host over secs before the bench, in % of one CPU."""
    a = host_busy_ticks()
    time.sleep(secs)
    return round((host_busy_ticks() - a) / HZ / secs * 100, 1)


# ---- the bench

class Server:
    def __init__(self, spec):
        name, pid, port, user, pw = spec.split(",", 4)
        self.name, self.pid, self.port, self.user, self.pw = name, int(pid), int(port), user, pw
        _, self.idle_pids = tree_ticks(proc_table(), self.pid)

    def fio_args(self):
        return ["--ioengine=external:" + ENGINE, "--hostname=127.0.0.1",
                "--port=%d" % self.port, "--share=bench", "--user=" + self.user,
                "--password_file=" + self.pw]


class Bench:
    def __init__(self, a):
        self.a = a
        self.raw = os.path.join(a.work, "raw")
        os.makedirs(self.raw, exist_ok=True)
        self.servers = [Server(s) for s in a.server]
        self.errors = []
        self.runs = {}   # (server, workload) -> [per-run dict]
        self.wls = [w for w in WORKLOADS if re.search(a.only, w[0])]
        self.wire = []   # iperf3 runs: bytes/s

    def fail(self, msg):
        say("FAILED: " + msg)
        self.errors.append(msg)

    def fio(self, srv, extra, raw, timeout):
        args = ["fio", "--output-format=json", "--output=" + raw] + srv.fio_args() + extra
        r = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
        with open(raw + ".log", "w") as f:
            f.write(" ".join(args) + "\n" + r.stdout + r.stderr)
        if r.returncode:
            return None, "fio exit %d: %s" % (r.returncode, (r.stdout + r.stderr)[-300:])
        try:
            with open(raw) as f:
                text = f.read()
            j = json.loads(text[text.index("{"):])  # fio may print notes first
        except (OSError, ValueError) as e:
            return None, "fio JSON: %s" % e
        fj = j["jobs"][0]
        if fj.get("error"):
            return None, "fio job error %d" % fj["error"]
        return fj, None

    def layout(self, srv):
        """Write the files every job uses out in full, before any timing, in
        the block size of the jobs that use them: the server's file system
        caches a file written in 1 MiB pieces in large folios, and on ext4
        (Linux 6.x) every 4 KiB write into a large folio then walks all its
        buffer heads (ext4_block_write_begin), which costs more than the
        server's own work and would hide it."""
        for fn in sorted({w[4] for w in self.wls}):
            bs = min(w[2] for w in self.wls if w[4] == fn)
            raw = os.path.join(self.raw, "%s-layout-%s.json" % (srv.name, fn))
            _, err = self.fio(srv, ["--name=layout", "--filename=" + fn, "--rw=write",
                                    "--bs=%d" % bs, "--iodepth=32", "--size=" + self.a.size],
                              raw, 600)
            if err:
                self.fail("%s: laying out %s: %s" % (srv.name, fn, err))
                return False
        return True

    def job(self, srv, wl, run):
        name, rw, bs, depth, fn, ddir = wl
        tag = "%s/%s#%d" % (srv.name, name, run)
        raw = os.path.join(self.raw, "%s-%s-run%d.json" % (srv.name, name, run))
        extra = ["--name=" + name, "--filename=" + fn, "--rw=" + rw, "--bs=%d" % bs,
                 "--iodepth=%d" % depth, "--size=" + self.a.size,
                 "--time_based=1", "--runtime=%dms" % round(self.a.runtime * 1000),
                 "--ramp_time=%dms" % round(self.a.ramp * 1000), "--norandommap=1",
                 "--percentile_list=" + PERCENTILES]
        os.sync()  # no earlier job's writeback in this one
        smp = Sampler(srv.pid)
        smp.start()
        try:
            fj, err = self.fio(srv, extra, raw, self.a.ramp + self.a.runtime + 120)
        except subprocess.TimeoutExpired:
            fj, err = None, "fio timed out"
        t_exit = time.monotonic()
        smp.stop.set()
        smp.join()
        if not wait_tree_idle(srv.pid, srv.idle_pids):
            say("%s: %s still has extra processes after the job" % (tag, srv.name))
        if err:
            self.fail("%s: %s" % (tag, err))
            return
        d = fj[ddir]
        ios = d.get("total_ios") or 0
        meas_s = d["runtime"] / 1000.0
        if not ios or meas_s <= 0:
            self.fail("%s: no I/O measured" % tag)
            return
        iops = ios / meas_s
        # fio's measured window ends when the job stops, just before fio exits
        end = t_exit - 0.05
        w0, w1 = end - fj["job_runtime"] / 1000.0 + TRIM_S, end - TRIM_S
        s0, s1 = smp.at(w0, 1), smp.at(w1, 1)
        h0, h1 = smp.at(w0, 2), smp.at(w1, 2)
        rec = {
            "run": run, "raw": os.path.relpath(raw),
            "io_bytes": d["io_bytes"], "bw_bytes": d["bw_bytes"], "bw": d["bw"],
            "iops": d["iops"], "runtime": d["runtime"], "total_ios": ios,
            "clat_mean_ns": d["clat_ns"]["mean"],
            "usr_cpu": fj["usr_cpu"], "sys_cpu": fj["sys_cpu"],
            "job_runtime": fj["job_runtime"], "ctx": fj.get("ctx"),
        }
        pct = d["clat_ns"].get("percentile", {})
        for k, key in PCT.items():
            if key in pct:
                rec["clat_%s_ns" % k] = pct[key]
        for key in pct:
            rec.setdefault("percentile", {})[key] = pct[key]
        cli_s = (fj["usr_cpu"] + fj["sys_cpu"]) / 100.0 * fj["job_runtime"] / 1000.0
        rec["client_cpu_us_per_io"] = cli_s / ios * 1e6
        if None in (s0, s1) or w1 - w0 < 0.5:
            self.fail("%s: no server CPU samples over the measured window" % tag)
        else:
            rate = (s1 - s0) / HZ / (w1 - w0)       # CPUs busy in the server
            hrate = (h1 - h0) / HZ / (w1 - w0)
            rec["server_cpu"] = round(rate * 100, 2)          # % of one CPU, like usr_cpu
            rec["server_cpu_us_per_io"] = rate / iops * 1e6
            rec["host_cpu"] = round(hrate * 100, 2)
            # the rest: kernel threads (ksoftirqd), interrupts, other processes
            rec["unattributed_cpu"] = round(rec["host_cpu"] - rec["server_cpu"] -
                                     fj["usr_cpu"] - fj["sys_cpu"], 2)
            rec["cpu_window_s"] = round(w1 - w0, 3)
            rec["other_procs_cpu"] = smp.other_cpu(w0, w1)
        self.runs.setdefault((srv.name, name), []).append(rec)
        say("%-24s %10.1f %s  p99 %8.1f us  srv %6.1f us/io  cli %6.1f us/io" % (
            tag, d["bw_bytes"] / 1048576 if bs >= 1 << 20 else iops,
            "MiB/s" if bs >= 1 << 20 else "IOPS ",
            rec.get("clat_p99_ns", 0) / 1000, rec.get("server_cpu_us_per_io", -1),
            rec["client_cpu_us_per_io"]))

    def wire_run(self, run):
        """iperf3's single-stream TCP throughput on loopback, in writes of
        the bulk rows' 1 MiB, for the same time as a fio job: the most one
        SMB connection could move here (iperf3's default 128 KiB writes
        measured 0.43x of that on this host)."""
        raw = os.path.join(self.raw, "wire-run%d.json" % run)
        for _ in range(100):     # until the server listens
            r = subprocess.run(["iperf3", "-c", "127.0.0.1", "-p", str(self.iperf_port),
                                "-t", "%g" % (self.a.ramp + self.a.runtime),
                                "-O", "%g" % self.a.ramp, "-l", "1M", "-J"],
                               capture_output=True, text=True,
                               timeout=self.a.ramp + self.a.runtime + 60)
            if r.returncode == 0 or "Connection refused" not in r.stdout + r.stderr:
                break
            time.sleep(0.1)
        with open(raw, "w") as f:
            f.write(r.stdout)
        try:
            bps = json.loads(r.stdout)["end"]["sum_received"]["bits_per_second"] / 8
        except (ValueError, KeyError):
            self.fail("wire#%d: iperf3: %s" % (run, (r.stdout + r.stderr)[-300:]))
            return
        self.wire.append(bps)
        say("%-24s %10.1f MiB/s" % ("wire#%d" % run, bps / 1048576))

    def main(self):
        ok = [s for s in self.servers if self.layout(s)]
        os.sync()
        bulk = [w for w in self.wls if w[2] >= 1 << 20]
        if self.a.wire and bulk:
            self.iperf_port = free_port()
            log = open(os.path.join(self.a.work, "iperf3.log"), "w")
            iperf = subprocess.Popen(["iperf3", "-s", "-p", str(self.iperf_port)],
                                     stdout=log, stderr=subprocess.STDOUT)
        try:
            for wl in self.wls:
                for run in range(1, self.a.runs + 1):
                    if self.a.wire and bulk and wl == bulk[0]:
                        self.wire_run(run)
                    for srv in ok:           # A/B/A/B
                        self.job(srv, wl, run)
        finally:
            if self.a.wire and bulk:
                iperf.terminate()
                iperf.wait()
        return self.report()

    # ---- report
    def summary(self, srv, wl):
        runs = self.runs.get((srv, wl[0]), [])
        if not runs:
            return None
        name, rw, bs, depth, fn, ddir = wl
        flat = ["io_bytes", "bw_bytes", "bw", "iops", "runtime", "total_ios", "clat_mean_ns",
                "clat_p50_ns", "clat_p99_ns", "clat_p99.9_ns", "usr_cpu", "sys_cpu",
                "job_runtime", "client_cpu_us_per_io", "server_cpu_us_per_io",
                "server_cpu", "host_cpu", "unattributed_cpu", "other_procs_cpu"]
        med, spr = {}, {}
        for k in flat:
            v = [r[k] for r in runs if r.get(k) is not None]
            if v:
                med[k] = median(v)
                spr[k] = spread(v)
        pcts = {}
        for key in runs[0].get("percentile", {}):
            v = [r["percentile"][key] for r in runs if key in r.get("percentile", {})]
            pcts[key] = median(v)
        dd = {k: med[k] for k in ("io_bytes", "bw_bytes", "bw", "iops", "runtime",
                                  "total_ios") if k in med}
        dd["clat_ns"] = {"mean": med.get("clat_mean_ns"), "percentile": pcts}
        job = {
            "jobname": "%s/%s" % (srv, name), "client": "fio-rdax", "server": srv,
            "workload": name, "rw": rw, "bs": bs, "iodepth": depth,
            "runs": len(runs), "error": 0, ddir: dd,
        }
        for k in ("usr_cpu", "sys_cpu", "job_runtime", "client_cpu_us_per_io",
                  "server_cpu_us_per_io", "server_cpu", "host_cpu", "unattributed_cpu",
                  "other_procs_cpu"):
            if k in med:
                job[k] = med[k]
        job["spread"] = spr
        job["per_run"] = runs
        return job

    @staticmethod
    def targets(ratios):
        """Issue 16's host targets: 1 MiB >= 1.3x smbd and >= 0.8x the wire."""
        out = []
        for r in ratios:
            if r["metric"] != "bw_bytes":
                continue
            for key, against, bar in (("ratio", BASELINE, 1.3), ("ratio_" + WIRE, WIRE, 0.8)):
                if r.get(key) is not None:
                    out.append({"workload": r["workload"], "against": against,
                                "value": r[key], "bar": bar, "met": r[key] >= bar})
        return out

    def report(self):
        jobs, ratios, lines = [], [], []
        names = [s.name for s in self.servers]
        complete = 0
        wire = median(self.wire) if self.wire else None
        wcol = wire is not None
        bcol = OTHER_BUILD in names
        lines.append("| workload | metric | " + " | ".join(names) +
                     (" | %s/%s |" % (SUBJECT, BASELINE) if len(names) > 1 else " |") +
                     (" %s/%s |" % (SUBJECT, OTHER_BUILD) if bcol else "") +
                     (" %s | %s/%s |" % (WIRE, SUBJECT, WIRE) if wcol else ""))
        lines.append("|---|---|" + "---:|" * (len(names) + (1 if len(names) > 1 else 0) +
                                              (1 if bcol else 0) + (2 if wcol else 0)))
        for wl in self.wls:
            name, rw, bs, depth, fn, ddir = wl
            bulk = bs >= 1 << 20
            js = {}
            for n in names:
                j = self.summary(n, wl)
                if j:
                    jobs.append(j)
                    js[n] = j
                    if (j["runs"] == self.a.runs and
                            all(len(j["per_run"]) and k in r for r in j["per_run"]
                                for k in ("clat_p50_ns", "clat_p99_ns", "clat_p99.9_ns",
                                          "server_cpu_us_per_io", "client_cpu_us_per_io"))):
                        complete += 1
            metrics = [
                ("bw_bytes" if bulk else "iops", "MiB/s" if bulk else "IOPS", "higher"),
                ("clat_p50_ns", "clat p50 µs", "lower"),
                ("clat_p99_ns", "clat p99 µs", "lower"),
                ("clat_p99.9_ns", "clat p99.9 µs", "lower"),
                ("server_cpu_us_per_io", "server CPU µs/I/O", "lower"),
                ("client_cpu_us_per_io", "client CPU µs/I/O", "lower"),
            ]
            for i, (key, label, better) in enumerate(metrics):
                vals = {}
                cells = []
                for n in names:
                    j = js.get(n)
                    sp = j["spread"].get(key) if j else None
                    if not sp:
                        cells.append("-")
                        continue
                    v = median([r[key] for r in j["per_run"] if key in r])
                    vals[n] = v
                    cells.append("%s ±%s%%" % (fmt(scale(key, v)),
                                              pm(sp["max"] - sp["min"], v)))
                row = "| %s | %s | %s |" % (name if i == 0 else "", label, " | ".join(cells))
                if len(names) > 1:
                    ok = SUBJECT in vals and BASELINE in vals and vals[BASELINE]
                    r = vals[SUBJECT] / vals[BASELINE] if ok else None
                    row += " %s |" % ("%.2f" % r if r is not None else "-")
                    ratios.append({
                        "workload": name, "metric": key, "better": better,
                        SUBJECT: vals.get(SUBJECT), BASELINE: vals.get(BASELINE),
                        "ratio": round(r, 4) if r is not None else None,
                    })
                if bcol:
                    ok = SUBJECT in vals and vals.get(OTHER_BUILD)
                    rb = vals[SUBJECT] / vals[OTHER_BUILD] if ok else None
                    row += " %s |" % ("%.2f" % rb if rb is not None else "-")
                    ratios[-1][OTHER_BUILD] = vals.get(OTHER_BUILD)
                    ratios[-1]["ratio_" + OTHER_BUILD] = round(rb, 4) if rb is not None else None
                if wcol and i == 0 and bulk:
                    rw_ = vals[SUBJECT] / wire if SUBJECT in vals else None
                    row += " %s ±%s%% | %s |" % (
                        fmt(wire / 1048576), pm(max(self.wire) - min(self.wire), wire),
                        "%.2f" % rw_ if rw_ is not None else "-")
                    if len(names) > 1:
                        ratios[-1][WIRE] = wire
                        ratios[-1]["ratio_" + WIRE] = round(rw_, 4) if rw_ is not None else None
                elif wcol:
                    row += " | |"
                lines.append(row)
        noisy = [r for j in jobs for r in j["per_run"] if (r.get("other_procs_cpu") or 0) > 10]
        if noisy:
            self.a.note.append(
                "other processes on the host used up to %.0f%% of a CPU during %d of %d jobs "
                "(other_procs_cpu in the JSON): expect noise" % (
                    max(r["other_procs_cpu"] for r in noisy), len(noisy),
                    sum(len(j["per_run"]) for j in jobs)))
        legend = ("Median of %d runs (%g s each after %g s of ramp), interleaved %s; "
                  "± is half the min-max range of the runs relative to the median. "
                  "Ratio %s/%s: above 1 is better for throughput, below 1 is better "
                  "for latency and CPU per I/O." % (
                      self.a.runs, self.a.runtime, self.a.ramp,
                      "/".join(names * 2), SUBJECT, BASELINE))
        host = self.host
        head = ("rdax %s on %s (%s CPUs), kernel %s; %s; %s; share on %s" % (
            host["rdax_version"], host["cpu"], host["cpus"], host["kernel"],
            host["smbd"], host["fio"], host["share_fs"]))
        md = ["# bench/tcp: SMB3 over TCP on loopback, fio with the rdax engine", "",
              head, "", legend, ""] + lines + [""]
        tg = self.targets(ratios)
        if tg:
            md += ["Targets (issue 16): 1 MiB rows, %s against its bar:" % SUBJECT, "",
                   "| workload | against | measured | bar | met |", "|---|---|---:|---:|---|"]
            md += ["| %s | %s | %.2f | ≥ %.2f | %s |" % (
                t["workload"], t["against"], t["value"], t["bar"],
                "yes" if t["met"] else "**no**") for t in tg]
            md.append("")
        if self.errors or self.a.note:
            md += ["Notes:", ""] + ["- " + e for e in self.a.note + self.errors] + [""]
        doc = {
            "bench": "tcp",
            "rdax version": host["rdax_version"],
            "timestamp": int(time.time()),
            "note": "Client (fio with build/fio-rdax.so) and server share the host and talk "
                    "over loopback TCP: compare the servers side by side, not absolute speeds.",
            "host": host,
            "params": {"runs": self.a.runs, "runtime_s": self.a.runtime,
                       "ramp_time_s": self.a.ramp, "size": self.a.size,
                       "percentile_list": PERCENTILES, "order": "interleaved per workload: " +
                       "/".join(names * 2) + "...",
                       "client": "fio " + ENGINE + " transport=tcp, one job, process mode",
                       "cpu_sample_s": SAMPLE_S, "cpu_trim_s": TRIM_S},
            "servers": names, "baseline": BASELINE, "targets": tg,
            "fields": {
                "read/write, usr_cpu, sys_cpu, job_runtime": "fio's, median of the runs",
                "client_cpu_us_per_io": "(usr_cpu + sys_cpu) x job_runtime / total_ios",
                "server_cpu": "utime+stime of the server's process tree over the measured "
                              "window, % of one CPU",
                "server_cpu_us_per_io": "server CPU time per I/O over that window",
                "host_cpu": "all CPUs busy over the window (/proc/stat), % of one CPU",
                "unattributed_cpu": "host_cpu - server_cpu - usr_cpu - sys_cpu: kernel "
                                    "threads, interrupts, other processes",
                "other_procs_cpu": "user processes other than the server, fio and this "
                                   "script over the window (noise), % of one CPU",
                "spread": "min and max of the runs; pct = (max - min) / median",
                "per_run": "every run, in the order measured",
            },
            "notes": self.a.note, "errors": self.errors,
            "jobs": jobs, "ratios": ratios,
        }
        if wcol:
            doc["wire"] = {"tool": "iperf3, one TCP stream on 127.0.0.1, 1 MiB writes (-l 1M), -O ramp",
                           "bw_bytes": wire, "spread": spread(self.wire),
                           "per_run": self.wire}
        os.makedirs(os.path.dirname(os.path.abspath(self.a.out)), exist_ok=True)
        with open(self.a.out + ".tmp", "w") as f:
            json.dump(doc, f, indent=1)
        os.replace(self.a.out + ".tmp", self.a.out)
        with open(self.a.md, "w") as f:
            f.write("\n".join(md))
        print("\n".join(md[2:]).rstrip())
        if complete != len(self.wls) * 2 or len(names) < 2:
            say("%d of %d server/workload figures complete" % (complete, len(self.wls) * 2))
            return 1
        return 1 if self.errors else 0


def scale(key, v):
    if key == "bw_bytes":
        return v / 1048576
    if key.endswith("_ns"):
        return v / 1000
    return v


def fmt(v):
    if v >= 100:
        return "%.0f" % v
    if v >= 10:
        return "%.1f" % v
    return "%.2f" % v


def pm(rng, v):
    return "%.0f" % (rng / 2 / v * 100) if v else "?"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--server", action="append", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--md", required=True)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--runtime", type=float, default=4)
    p.add_argument("--ramp", type=float, default=1)
    p.add_argument("--size", default="256m")
    p.add_argument("--share-dir", required=True)
    p.add_argument("--note", action="append", default=[])
    p.add_argument("--only", default="", help="workloads matching this regex")
    p.add_argument("--no-wire", dest="wire", action="store_false")
    a = p.parse_args()
    if a.runtime < 2 * TRIM_S + 1 or a.ramp < 0 or a.runs < 1:
        p.error("--runtime must be at least %g s (the CPU window), --ramp >= 0, --runs >= 1"
                % (2 * TRIM_S + 1))
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    os.chdir(top)
    b = Bench(a)
    bg = background_cpu()
    b.host = host_facts(a.share_dir, top)
    b.host["background_cpu"] = bg
    if bg > 20:
        note = ("the host was busy before the bench (%.0f%% of a CPU in 1 s): "
                "expect noise" % bg)
        say(note)
        a.note.append(note)
    return b.main()


if __name__ == "__main__":
    sys.exit(main())
