#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""RDMA into DAX: every way the testbed can move file data over rxe, in one boot.

  bench/rdma-to-dax.py guest OUTDIR   inside `tests/vm/run --pmem` (bench/rdma-to-dax)
  bench/rdma-to-dax.py report OUTDIR JSON MD   on the host: JSON + ratio tables

Subjects (over the same rxe link, in the same boot):

  wire               ib_write_bw / ib_read_bw at the same size and depth
                     (ib_write_lat / ib_read_lat for the QD1 latency)
  fio-rdma           fio's built-in rdma engine, client -> a second fio
                     listening (memory to memory, no file, no SMB)
  rdax-rdaxd-fsdax   fio + build/fio-rdax.so, transport=rdma -> rdaxd,
                     share on the fsdax ext4 (store dax, rung bounce on rxe)
  rdax-rdaxd-devdax  ... -> rdaxd, `dax device = /dev/daxX.Y` (rung direct)
  cifs-rdaxd-fsdax   fio libaio O_DIRECT on mount -t cifs -o rdma -> rdaxd
  cifs-rdaxd-devdax  ... onto the device-DAX share's one file
  rdax-ksmbd         fio + rdax engine -> ksmbd on the fsdax mount
  cifs-ksmbd         cifs.ko -> ksmbd on the same fsdax mount (the kernel
                     pair: the baseline of every ratio)

Workloads: 1 MiB sequential write and read at QD8, 4 KiB random read and
write at QD1 and QD32. A READ's data moves server -> client, so reads are
held against ib_write_bw (the server RDMA-Writes), writes against
ib_read_bw. Per job: fio's read/write object (bw_bytes, iops, clat_ns
percentiles 50/99/99.9), usr_cpu/sys_cpu, and CPU time per I/O:

  client_cpu_us_per_io  (usr_cpu + sys_cpu) x job_runtime / total_ios (fio's)
  server_cpu_us_per_io  utime+stime of the server (rdaxd's process tree,
                        ksmbd's kernel threads, the listening fio) sampled
                        from /proc four times a second, interpolated to the
                        window fio measured (bench/tcp.py's Sampler) / IOPS
  guest_cpu_us_per_io   all the guest's busy CPU (/proc/stat) over that
                        window per I/O: client, server, rxe and cifs.ko's
                        kernel threads, which neither of the above sees

This module reuses bench/smbdirect.py's guest code (users, fio runner
conventions, rdma_cm listener wait) and bench/tcp.py's CPU sampler.
"""
import fnmatch
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import smbdirect as sd  # noqa: E402
import tcp as tcpb  # noqa: E402

NAME = "rdma-to-dax"
BASE = "cifs-ksmbd"
# name, fio rw, bs, iodepth, direction in fio's JSON
WORKLOADS = [
    ("seqwrite-1m-qd8", "write", 1 << 20, 8, "write"),
    ("seqread-1m-qd8", "read", 1 << 20, 8, "read"),
    ("randread-4k-qd1", "randread", 4096, 1, "read"),
    ("randwrite-4k-qd1", "randwrite", 4096, 1, "write"),
    ("randread-4k-qd32", "randread", 4096, 32, "read"),
    ("randwrite-4k-qd32", "randwrite", 4096, 32, "write"),
    ("randwrite-4k-qd16", "randwrite", 4096, 16, "write"),
]
# the librpma anchor runs 4 KiB persistent writes at QD1 and QD16 only; the
# QD16 workload runs for it and for the rdax subjects it is held against
RPMA_WORKLOADS = ("randwrite-4k-qd1", "randwrite-4k-qd16")
QD16_SUBJECTS = ("rdax-rdaxd-fsdax", "rdax-rdaxd-devdax", "librpma-apm-fsdax",
                 "librpma-apm-devdax", "librpma-gpspm-fsdax", "librpma-gpspm-devdax")
# the inline/RDMA threshold sweep (issue 16 part 5): rdax -> rdaxd on device
# DAX, QD1, each size once inline (threshold above it) and once by RDMA
SWEEP_SIZES = [k << 10 for k in (1, 2, 4, 8, 16, 32, 64)]
SWEEP = os.environ.get("RDAX_BENCH_SWEEP", "1") != "0"
SWEEP_RUNTIME = float(os.environ.get("RDAX_BENCH_SWEEP_RUNTIME", "2"))
RPMA_FIO = os.environ.get("RDAX_BENCH_FIO_RPMA", "build/fio-rpma/fio")
RPMA_PORT = 7204
# key, client, server, store, description
SUBJECTS = [
    ("fio-rdma", "fio-rdma", "fio-rdma", None,
     "fio rdma engine -> fio rdma engine listening (memory to memory)"),
    ("rdax-rdaxd-fsdax", "rdax", "rdaxd", "fsdax", "fio + rdax engine -> rdaxd, fsdax share"),
    ("rdax-rdaxd-devdax", "rdax", "rdaxd", "devdax", "fio + rdax engine -> rdaxd, device-DAX share"),
    ("cifs-rdaxd-fsdax", "cifs", "rdaxd", "fsdax", "fio on cifs.ko -o rdma -> rdaxd, fsdax share"),
    ("cifs-rdaxd-devdax", "cifs", "rdaxd", "devdax",
     "fio on cifs.ko -o rdma -> rdaxd, device-DAX share"),
    ("rdax-rdaxd-fsdax-event", "rdax", "rdaxd", "fsdax",
     "as rdax-rdaxd-fsdax, rdaxd and librdax with rdma poll = event"),
    ("rdax-rdaxd-devdax-event", "rdax", "rdaxd", "devdax",
     "as rdax-rdaxd-devdax, rdaxd and librdax with rdma poll = event"),
    ("rdax-rdaxd-fsdax-busy", "rdax", "rdaxd", "fsdax",
     "as rdax-rdaxd-fsdax, rdaxd and librdax with rdma poll = busy"),
    ("rdax-rdaxd-devdax-busy", "rdax", "rdaxd", "devdax",
     "as rdax-rdaxd-devdax, rdaxd and librdax with rdma poll = busy"),
    ("librpma-apm-fsdax", "librpma-apm", "librpma-apm", "fsdax",
     "fio librpma_apm_client -> librpma_apm_server, a file on the fsdax mount"),
    ("librpma-apm-devdax", "librpma-apm", "librpma-apm", "devdax",
     "fio librpma_apm_client -> librpma_apm_server, the device-DAX namespace"),
    ("librpma-gpspm-fsdax", "librpma-gpspm", "librpma-gpspm", "fsdax",
     "fio librpma_gpspm_client -> librpma_gpspm_server (busy-polling), a file on fsdax"),
    ("librpma-gpspm-devdax", "librpma-gpspm", "librpma-gpspm", "devdax",
     "fio librpma_gpspm_client -> librpma_gpspm_server (busy-polling), device DAX"),
    ("rdax-ksmbd", "rdax", "ksmbd", "fsdax", "fio + rdax engine -> ksmbd, fsdax mount"),
    ("cifs-ksmbd", "cifs", "ksmbd", "fsdax", "fio on cifs.ko -o rdma -> ksmbd, fsdax mount"),
]
SUBJECT_KEYS = [s[0] for s in SUBJECTS]
LABEL = {
    "fio-rdma": "fio rdma engine", "rdax-rdaxd-fsdax": "rdax→rdaxd fsdax",
    "rdax-rdaxd-devdax": "rdax→rdaxd devdax", "cifs-rdaxd-fsdax": "cifs.ko→rdaxd fsdax",
    "cifs-rdaxd-devdax": "cifs.ko→rdaxd devdax", "rdax-ksmbd": "rdax→ksmbd",
    "cifs-ksmbd": "cifs.ko→ksmbd",
    "librpma-apm-fsdax": "librpma APM fsdax", "librpma-apm-devdax": "librpma APM devdax",
    "librpma-gpspm-fsdax": "librpma GPSPM fsdax",
    "librpma-gpspm-devdax": "librpma GPSPM devdax",
    "rdax-rdaxd-fsdax-event": "rdax→rdaxd fsdax, event",
    "rdax-rdaxd-devdax-event": "rdax→rdaxd devdax, event",
    "rdax-rdaxd-fsdax-busy": "rdax→rdaxd fsdax, busy",
    "rdax-rdaxd-devdax-busy": "rdax→rdaxd devdax, busy",
}
POLL_MODES = ("event", "busy")   # besides the default (adaptive)
IDLE_S = 3                       # how long rdaxd's idle CPU is measured


def planned(key, wl):
    """Does subject key run workload wl?"""
    if WL_ONLY and wl[0] not in WL_ONLY:
        return False
    if key.startswith("librpma-"):
        return wl[0] in RPMA_WORKLOADS
    return wl[0] != "randwrite-4k-qd16" or key in QD16_SUBJECTS


def poll_of(key):
    """The polling mode a subject runs with (None: the defaults)."""
    m = key.rsplit("-", 1)[-1]
    return m if m in POLL_MODES else None
USER, PASSWORD = sd.USER, sd.PASSWORD
SIZE = os.environ.get("RDAX_BENCH_FIO_SIZE", "64m")
RUNTIME = float(os.environ.get("RDAX_BENCH_FIO_RUNTIME", "3"))
RAMP = float(os.environ.get("RDAX_BENCH_FIO_RAMP", "1"))
PT_DURATION = int(os.environ.get("RDAX_BENCH_PT_DURATION", "3"))
PT_LAT_ITERS = int(os.environ.get("RDAX_BENCH_PT_LAT_ITERS", "1000"))
ONLY = [s for s in os.environ.get("RDAX_BENCH_SUBJECTS", "").split(",") if s]
# a row filter: only these workloads (comma list of names; default all)
WL_ONLY = [s for s in os.environ.get("RDAX_BENCH_WORKLOADS", "").split(",") if s]
# the profiler (opt in): each chosen row runs a second time under
# `perf record -a` (the whole guest), after its measured run; "1" takes
# PERF_DEFAULT, anything else is the perf record command itself. The rows:
# RDAX_BENCH_PERF_ROWS, comma list of SUBJECT/WORKLOAD shell patterns.
PERF_DEFAULT = "perf record -a -g -e cpu-clock -F 499"
PERF = os.environ.get("RDAX_BENCH_PERF", "")
PERF = PERF_DEFAULT if PERF == "1" else PERF
PERF_ROWS = [s for s in os.environ.get("RDAX_BENCH_PERF_ROWS", "*").split(",") if s]
PERCENTILES = "50:99:99.9"
PCT = {"p50": "50.000000", "p99": "99.000000", "p99.9": "99.900000"}
FIO_RDMA_PORT = 19000
HZ = tcpb.HZ
STEP_TIMEOUT = 240


def say(msg):
    print(NAME + ": " + msg, file=sys.stderr, flush=True)


sd.say = say  # smbdirect.Guest's messages carry our name


def run(cmd, **kw):
    return subprocess.run(cmd, text=True, capture_output=True,
                          timeout=kw.pop("timeout", STEP_TIMEOUT), **kw)


class KsmbdTicks:
    """utime+stime of ksmbd's kernel threads, cumulative across threads that
    come and go: its listener and per-connection threads (comm ksmbd*) and
    the kworkers whose comm names ksmbd's workqueue (kworker/..-ksmbd-io:
    the kernel shows the last workqueue a worker served), so attribution of
    the shared kworkers is best effort. A thread's ticks count from the
    first sample that sees it; one that exits loses its last interval."""

    def __init__(self):
        self.last, self.cum, self.primed = {}, 0, False

    def __call__(self):
        cur = {pid: v[1] for pid, v in tcpb.proc_table().items()
               if v[2].startswith("ksmbd") or (v[2].startswith("kworker") and "ksmbd" in v[2])}
        for pid, t in cur.items():
            if pid in self.last:
                self.cum += max(0, t - self.last[pid])
            elif self.primed:
                self.cum += t
        self.last.update(cur)
        self.primed = True
        return self.cum


def ksmbd_ticks():
    return KsmbdTicks()


ksmbd_ticks.factory = True   # a fresh counter per job


def _read(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def placement_facts(dev):
    """Where the clients ran: NUMA nodes, the RDMA device's node, the
    CPUs and memory nodes fio and perftest inherit from this process."""
    status = _read("/proc/self/status") or ""
    allowed = dict(re.findall(r"^(Cpus_allowed_list|Mems_allowed_list):\s*(\S+)", status, re.M))
    node = _read("/sys/class/infiniband/%s/device/numa_node" % dev)
    return {"numa_nodes_online": _read("/sys/devices/system/node/online"),
            "rdma_dev_numa_node": int(node) if node and node.lstrip("-").isdigit() else None,
            "client_cpus": allowed.get("Cpus_allowed_list"),
            "client_mems": allowed.get("Mems_allowed_list"),
            "client_binding": "none (inherits the whole guest)"}


def tree_ticks_of(pid):
    return lambda: tcpb.tree_ticks(tcpb.proc_table(), pid)[0]


class Sampler(tcpb.Sampler):
    """bench/tcp.py's sampler with the server's ticks from a function
    (ksmbd is kernel threads, not a process tree)."""

    def __init__(self, ticks):
        super().__init__(0)
        self.ticks = ticks

    def sample(self):
        self.samples.append((time.monotonic(), self.ticks(), tcpb.host_busy_ticks(), {}))


def rusage_wait(p, timeout):
    """Wait for Popen p (timeout s), return (rc, user+sys CPU seconds)."""
    end = time.monotonic() + timeout
    while True:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            p.returncode = os.waitstatus_to_exitcode(status)
            return p.returncode, ru.ru_utime + ru.ru_stime
        if time.monotonic() > end:
            p.kill()
            pid, status, ru = os.wait4(p.pid, 0)
            p.returncode = -9
            return None, ru.ru_utime + ru.ru_stime
        time.sleep(0.05)


# kernel messages of an orderly end of a connection, not trouble: ksmbd logs
# every SMB-Direct disconnect (the previous job's shows up in the next one),
# cifs.ko tries the iWARP port first
BENIGN = [r"ksmbd: smb_direct: disconnected$", r"rdma_connect failed port=5445"]


def benign(line):
    return any(re.search(b, line) for b in BENIGN)


def summarize(text):
    """fio's complaints in a line: distinct messages, io_u errors counted."""
    lines, ioerr, first = [], 0, None
    for ln in text.splitlines():
        ln = ln.strip()
        if not ln or ln.startswith("{"):
            continue
        if "io_u error" in ln:
            ioerr += 1
            first = first or re.sub(r" offset=\d+, buflen=\d+", "", ln)
            continue
        if ln not in lines:
            lines.append(ln)
    out = ([first + " (%d I/Os)" % ioerr] if first else []) + lines
    return "; ".join(out)[:600]


class Guest(sd.Guest):
    def __init__(self, out):
        super().__init__(out)
        self.devdax = os.environ.get("RDAX_VM_DEVDAX", "")
        self.subjects = {}       # key -> facts (rung, store, stats)
        self.rdaxd_log = os.path.join(self.raw, "rdaxd.log")
        self.rdaxd_numa = []     # rdaxd's "NUMA: ..." start-up lines
        self.rdaxd_workers = {}  # worker -> {node, cpu} (SIGUSR1)
        self.rdaxd_cpu = {}      # worker -> its thread's CPU time, us (SIGUSR1)
        self.sweep_results = []  # the inline/RDMA threshold sweep
        self.profiles = []       # the profiled reruns (RDAX_BENCH_PERF)
        self.kallsyms = (None, None)   # (/proc/modules text, saved copy)

    # ---- the wire: perftest
    def perftest(self, tool, size, depth=None):
        lat = tool.endswith("_lat")
        name = "%s-%d" % (tool, size) + ("" if lat else "-t%d" % depth)
        args = [tool, "-d", self.dev, "-R", "-F", "-s", str(size)]
        args += ["-n", str(PT_LAT_ITERS)] if lat else ["-t", str(depth), "-D", str(PT_DURATION)]
        say("%s %d-byte messages%s" % (tool, size, "" if lat else ", tx depth %d" % depth))
        sfile = os.path.join(self.raw, name + ".server.txt")
        cfile = os.path.join(self.raw, name + ".txt")
        with open(sfile, "w") as so:
            srv = subprocess.Popen(args, stdout=so, stderr=subprocess.STDOUT)
        if not self.wait_listen(18515):
            srv.kill()
            srv.wait()
            self.fail(name + ": server did not listen")
            self.anchors.append({"jobname": name, "tool": tool, "bs": size, "iodepth": depth or 1,
                                 "error": -1, "error_text": "server did not listen"})
            return
        with open(cfile, "w") as co:
            co.write(" ".join(args + [self.addr]) + "\n")
            co.flush()
            cli = subprocess.Popen(args + [self.addr], stdout=co, stderr=subprocess.STDOUT)
        crc, ccpu = rusage_wait(cli, STEP_TIMEOUT)
        src, scpu = rusage_wait(srv, 30)
        with open(cfile) as f:
            cout = f.read()
        rec = {"jobname": name, "tool": tool, "bs": size, "iodepth": depth or 1,
               "cmdline": " ".join(args)}
        ddir = "write" if "write" in tool else "read"
        if lat:
            m = re.search(r"#bytes.*\n\s*(\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+"
                          r"([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)", cout)
            if crc or not m:
                self.fail(name + ": no result (see raw/%s.txt)" % name)
                rec.update(error=-1, error_text="no result (raw/%s.txt)" % name)
                self.anchors.append(rec)
                return
            it = int(m.group(2))
            us = [float(m.group(i)) for i in range(3, 10)]
            rec[ddir] = {
                "total_ios": it,
                "lat_ns": {"min": us[0] * 1e3, "max": us[1] * 1e3, "mean": us[3] * 1e3,
                           "stddev": us[4] * 1e3,
                           "percentile": {"50.000000": us[2] * 1e3, "99.000000": us[5] * 1e3,
                                          "99.900000": us[6] * 1e3}},
            }
            rec["note"] = ("perftest latency: t_typical is given as p50; ib_write_lat is a "
                           "ping-pong and reports half the round trip, ib_read_lat one RDMA Read")
        else:
            m = re.search(r"#bytes.*\n\s*(\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)", cout)
            if crc or not m:
                self.fail(name + ": no result (see raw/%s.txt)" % name)
                rec.update(error=-1, error_text="no result (raw/%s.txt)" % name)
                self.anchors.append(rec)
                return
            it = int(m.group(2))
            bw = float(m.group(4)) * 1048576
            rec[ddir] = {"io_bytes": it * size, "bw_bytes": int(bw), "bw": int(bw / 1024),
                         "iops": bw / size, "total_ios": it}
        # perftest busy-polls both ends: these are whole-process CPU times
        # (connection setup included) per message, not comparable to a sleeping peer
        rec["client_cpu_s"] = round(ccpu, 3)
        rec["server_cpu_s"] = round(scpu, 3)
        if it:
            rec["client_cpu_us_per_io"] = ccpu / it * 1e6
            rec["server_cpu_us_per_io"] = scpu / it * 1e6
        rec["error"] = 0
        self.anchors.append(rec)

    # ---- rdaxd with an fsdax and a device-DAX share
    def start_rdaxd(self, fsdir, poll=None):
        os.makedirs(fsdir, exist_ok=True)
        passdb = os.path.join(self.out, "passdb")
        subprocess.run([self.build + "/rdax", "passwd", "--passdb", passdb, USER],
                       input=PASSWORD + "\n", text=True, check=True, capture_output=True)
        conf = os.path.join(self.out, "smb.conf")
        # the bench user acts as root, as ksmbd's force user = root does
        umap = os.path.join(self.out, "map")
        with open(umap, "w") as f:
            f.write("root = %s\n" % USER)
        with open(conf, "w") as f:
            f.write("[global]\n\tlisten = rdma://%s:445\n\tpassdb file = %s\n"
                    "\tusername map = %s\n" % (self.addr, passdb, umap))
            if poll:
                f.write("\trdma poll = %s\n" % poll)
            f.write("[fs]\n\tpath = %s\n\tread only = no\n" % fsdir)
            if self.devdax:
                f.write("[raw]\n\tdax device = %s\n\tread only = no\n" % self.devdax)
        log = open(self.rdaxd_log, "w")
        rdaxd = os.environ.get("RDAX_BENCH_RDAXD") or self.build + "/rdaxd"
        self.rdaxd = subprocess.Popen([rdaxd, "--config", conf],
                                      stdout=log, stderr=subprocess.STDOUT)
        for _ in range(300):
            with open(self.rdaxd_log) as f:
                if "ready" in f.read():
                    return True
            if self.rdaxd.poll() is not None:
                break
            time.sleep(0.1)
        self.fail("rdaxd did not start (raw/rdaxd.log)")
        return False

    def rdaxd_shares(self):
        """share -> {store, store_why, rung, rung_why} from rdaxd's startup log."""
        out = {}
        with open(self.rdaxd_log) as f:
            for line in f:
                m = re.search(r"\]: share \[(\w+)\]: store (\w+) \((.*)\)$", line.rstrip()) or \
                    re.search(r" share \[(\w+)\]: store (\w+) \((.*)\)$", line.rstrip())
                if m:
                    out.setdefault(m.group(1), {}).update(store=m.group(2), store_why=m.group(3))
                m = re.search(r" share \[(\w+)\]: rdma registration (\w+) \((.*)\)$", line.rstrip())
                if m:
                    out.setdefault(m.group(1), {}).update(rung=m.group(2), rung_why=m.group(3))
                m = re.search(r"rdaxd\[\w+\]: (NUMA: .*)$", line.rstrip())
                if m:
                    self.rdaxd_numa.append(m.group(1))
        return out

    def rdaxd_stats(self):
        """SIGUSR1: worker counters summed, and each share's stats line."""
        with open(self.rdaxd_log) as f:
            n0 = len(f.readlines())
        self.rdaxd.send_signal(signal.SIGUSR1)
        time.sleep(1)
        with open(self.rdaxd_log) as f:
            new = f.readlines()[n0:]
        workers, shares = {}, {}
        for line in new:
            m = re.search(r"stats worker (\d+): .* node (-?\d+) cpu (-?\d+)", line)
            if m:
                self.rdaxd_workers[int(m.group(1))] = {"worker": int(m.group(1)),
                                                       "node": int(m.group(2)),
                                                       "cpu": int(m.group(3))}
            if "stats worker" in line:
                m = re.search(r"stats worker (\d+): .* cpu_us (\d+)", line)
                if m:
                    self.rdaxd_cpu[int(m.group(1))] = int(m.group(2))
                for k in ("rdma_reads", "rdma_writes", "rdma_bytes", "zero_copy_bytes",
                          "tcp_zero_copy_bytes", "uring_ops", "poll_hits", "poll_sleeps"):
                    m = re.search(r" %s (\d+)" % k, line)
                    if m:
                        workers[k] = workers.get(k, 0) + int(m.group(1))
            m = re.search(r"stats share \[(\w+)\]: (.*)$", line.rstrip())
            if m:
                kv = m.group(2).split()
                shares[m.group(1)] = {kv[i]: (int(kv[i + 1]) if kv[i + 1].isdigit() else kv[i + 1])
                                      for i in range(0, len(kv) - 1, 2)}
        return workers, shares

    def cifs_mount_share(self, share, mnt):
        os.makedirs(mnt, exist_ok=True)
        r = run(["tests/vm/peer", "cifs-mount", "//%s/%s" % (self.addr, share), mnt,
                 USER, PASSWORD, "cache=none"])
        tr = run(["tests/vm/peer", "transport", mnt]).stdout.strip() if not r.returncode else ""
        if r.returncode or tr != "rdma":
            msg = "cifs mount -o rdma of %s: %s transport=%s" % (
                share, (r.stdout + r.stderr)[-300:], tr)
            self.fail(msg)
            run(["tests/vm/peer", "cifs-umount", mnt])
            return msg
        return None

    # ---- one fio job
    def fio(self, subj, wl, target, ticks, prof=False):
        """One job; prof: the profiled rerun of a row (RDAX_BENCH_PERF), kept
        apart from the measured jobs."""
        key, client, server, store, _ = subj
        name, rw, bs, depth, ddir = wl
        job = "%s/%s" % (key, name)
        raw = os.path.join(self.raw, "%s-%s%s.json" % (key, name, "-perf" if prof else ""))
        rec = {"jobname": job, "subject": key, "client": client, "server": server,
               "store": store, "workload": name, "rw": rw, "bs": bs, "iodepth": depth,
               "raw": os.path.relpath(raw)}
        if prof:
            rec["profile"] = True
        if server == "rdaxd" and getattr(self, "rdaxd", None):
            rec["server_pid"] = self.rdaxd.pid
        rung = self.subjects.get(key, {}).get("rung")
        if rung:
            rec["rung"] = rung
        ramp = 0 if name.startswith("seqwrite") else RAMP
        args = ["fio", "--name=" + name, "--bs=%d" % bs, "--iodepth=%d" % depth,
                "--size=" + SIZE, "--output-format=json", "--output=" + raw,
                "--runtime=%dms" % round(RUNTIME * 1000), "--time_based=1", "--thread",
                "--percentile_list=" + PERCENTILES]
        if ramp:
            # the first job (seqwrite) lays the file out; it runs without ramp
            args.append("--ramp_time=%dms" % round(ramp * 1000))
        srv = None
        if client == "fio-rdma":
            # the engine has no file and refuses random I/O ("RDMA network IO
            # can't be random"); the client is always rw=write, verb picks
            # RDMA Write (client -> server) or RDMA Read (server -> client)
            verb = "read" if ddir == "read" else "write"
            rec.update(verb=verb, fio_rw="write", note=(
                "fio's rdma engine: memory to memory, sequential stream of %d-byte RDMA %s "
                "ops (the engine refuses random I/O and has no file); fio reports it as "
                "'write', recorded here under '%s'" % (bs, "Reads" if verb == "read" else
                                                       "Writes", ddir)))
            args += ["--ioengine=rdma", "--hostname=" + self.addr,
                     "--port=%d" % FIO_RDMA_PORT, "--verb=" + verb, "--rw=write"]
            sraw = raw[:-5] + ".server.json"
            sargs = ["fio", "--name=server", "--ioengine=rdma", "--port=%d" % FIO_RDMA_PORT,
                     "--rw=read", "--bs=%d" % bs, "--iodepth=%d" % depth, "--size=" + SIZE,
                     "--thread", "--output-format=json", "--output=" + sraw]
            slog = open(raw[:-5] + ".server.log", "w")
            srv = subprocess.Popen(sargs, stdout=slog, stderr=subprocess.STDOUT)
            rec["server_pid"] = srv.pid
            if not self.wait_listen(FIO_RDMA_PORT):
                srv.kill()
                srv.wait()
                return self.job_error(rec, "the fio rdma server did not listen")
            ticks = tree_ticks_of(srv.pid)
        elif client.startswith("librpma-"):
            # the server's workspace is the device, or a file on the fsdax
            # mount; direct_write_to_pmem: rxe writes with the CPU, no DDIO
            method = client.split("-")[1]
            args[0] = RPMA_FIO
            args += ["--ioengine=librpma_%s_client" % method, "--create_serialize=0",
                     "--serverip=" + self.addr, "--port=%d" % RPMA_PORT, "--rw=" + rw,
                     "--norandommap=1", "--sync=%d" % (depth == 1),
                     "--iodepth_batch_submit=1"]
            sraw = raw[:-5] + ".server.json"
            sargs = [RPMA_FIO, "--name=server", "--ioengine=librpma_%s_server" % method,
                     "--create_serialize=0", "--kb_base=1000", "--serverip=" + self.addr,
                     "--port=%d" % RPMA_PORT, "--thread", "--direct_write_to_pmem=1",
                     "--numjobs=1", "--size=" + SIZE, "--filename=" + target,
                     "--output-format=json", "--output=" + sraw]
            if method == "gpspm":
                # it serves until the client goes; APM's server has nothing to do
                sargs += ["--iodepth=%d" % depth, "--busy_wait_polling=1", "--time_based",
                          "--runtime=3600"]
            slog = open(raw[:-5] + ".server.log", "w")
            srv = subprocess.Popen(sargs, stdout=slog, stderr=subprocess.STDOUT)
            rec["server_pid"] = srv.pid
            listening = False
            for _ in range(100):
                if srv.poll() is not None:
                    break
                r = run(["rdma", "resource", "show", "cm_id"])
                if re.search(r"LISTEN.* src-addr [^ ]*:%d( |$)" % RPMA_PORT, r.stdout, re.M):
                    listening = True
                    break
                time.sleep(0.1)
            # it registers its workspace after listening: give it a moment to fail
            time.sleep(0.5)
            if not listening or srv.poll() is not None:
                srv.kill()
                srv.wait()
                slog.close()
                with open(raw[:-5] + ".server.log") as f:
                    why = summarize(f.read())
                if "On-Demand Paging" in why:
                    # fsdax pages take no long-term pin, and rxe here has no ODP
                    return self.job_skip(rec, "librpma cannot register this store here: " + why)
                return self.job_error(rec, "the librpma server did not serve: " + why)
            ticks = tree_ticks_of(srv.pid)
        elif client == "rdax":
            args += ["--rw=" + rw, "--norandommap=1",
                     "--ioengine=external:" + self.build + "/fio-rdax.so",
                     "--hostname=" + self.addr, "--share=" + target[0], "--transport=rdma",
                     "--user=" + USER, "--password_file=" + self.pwfile,
                     "--filename=" + target[1]]
            if poll_of(key):
                args.append("--poll=" + poll_of(key))
        else:
            args += ["--rw=" + rw, "--norandommap=1", "--ioengine=libaio", "--direct=1",
                     "--filename=" + target]
        if isinstance(ticks, type) or getattr(ticks, "factory", False):
            ticks = ticks()
        say("%s: fio %s bs=%d QD%d%s" % (job, rw, bs, depth, " under perf" if prof else ""))
        mark = self.log_mark()
        os.sync()
        perf = self.perf_start(rec) if prof else None
        smp = Sampler(ticks)
        smp.start()
        t0 = time.monotonic()
        try:
            r = run(args, timeout=RAMP + RUNTIME + 120)
            with open(raw[:-5] + ".log", "w") as f:
                f.write(" ".join(args) + "\n" + r.stdout + r.stderr)
            err = None if not r.returncode and os.path.exists(raw) else \
                "fio exit %d: %s" % (r.returncode, summarize(r.stdout + r.stderr))
        except subprocess.TimeoutExpired:
            err = "fio timed out"
        t_exit = time.monotonic()
        smp.stop.set()
        smp.join()
        if perf:
            self.perf_stop(perf, rec)
        if srv:
            try:
                srv.wait(timeout=30)
            except subprocess.TimeoutExpired:
                srv.kill()
                srv.wait()
                rec["server_note"] = "the fio rdma server did not exit by itself; killed"
        rec["wall_ms"] = int((t_exit - t0) * 1000)
        warn = self.log_since(mark)
        if warn:
            # the job may still finish (cifs.ko reconnects): its figures
            # then include the stall, so say so next to them
            rec["warnings"] = warn
            say("%s: %d warning(s) during the job: %s" % (job, len(warn), warn[0]))
        fj = None
        if not err:
            try:
                with open(raw) as f:
                    text = f.read()
                fj = json.loads(text[text.index("{"):])["jobs"][0]
            except (ValueError, KeyError, IndexError) as e:
                err = "unreadable fio JSON: %s" % e
        if err:
            return self.job_error(rec, err)
        d = fj["write"] if client == "fio-rdma" else fj[ddir]
        rec["error"] = fj.get("error", 0)
        if rec["error"]:
            self.fail("%s: fio job error %d" % (job, rec["error"]))
        rec[ddir] = {k: d[k] for k in ("io_bytes", "bw_bytes", "bw", "iops", "runtime",
                                       "total_ios", "lat_ns", "clat_ns") if k in d}
        for k in ("usr_cpu", "sys_cpu", "job_runtime", "ctx"):
            rec[k] = fj.get(k)
        ios = d.get("total_ios") or 0
        if not ios or d["runtime"] <= 0:
            return self.job_error(rec, "no I/O measured")
        iops = ios / (d["runtime"] / 1000.0)
        pct = d.get("clat_ns", {}).get("percentile", {})
        for k, pk in PCT.items():
            if pk in pct:
                rec["clat_%s_ns" % k] = pct[pk]
        rec["client_cpu_us_per_io"] = (fj["usr_cpu"] + fj["sys_cpu"]) / 100.0 * \
            fj["job_runtime"] / 1000.0 / ios * 1e6
        end = t_exit - 0.05
        w0, w1 = end - fj["job_runtime"] / 1000.0 + tcpb.TRIM_S, end - tcpb.TRIM_S
        s0, s1, h0, h1 = smp.at(w0, 1), smp.at(w1, 1), smp.at(w0, 2), smp.at(w1, 2)
        if None in (s0, s1, h0, h1) or w1 - w0 < 0.5:
            self.fail("%s: no server CPU samples over the measured window" % job)
        else:
            rate, grate = (s1 - s0) / HZ / (w1 - w0), (h1 - h0) / HZ / (w1 - w0)
            rec["server_cpu"] = round(rate * 100, 2)           # % of one CPU, like usr_cpu
            rec["server_cpu_us_per_io"] = rate / iops * 1e6
            rec["guest_cpu"] = round(grate * 100, 2)
            rec["guest_cpu_us_per_io"] = grate / iops * 1e6
            rec["cpu_window_s"] = round(w1 - w0, 3)
        if prof:
            # the profile's window, on perf's clock (-k CLOCK_MONOTONIC)
            rec["window_mono"] = [w0, w1]
        (self.profiles if prof else self.jobs).append(rec)
        say("%-34s %9.1f %s  p99 %9.1f us  srv %7.1f  cli %7.1f  guest %7.1f us/io" % (
            job, d["bw_bytes"] / 1048576 if bs >= 1 << 20 else iops,
            "MiB/s" if bs >= 1 << 20 else "IOPS ", rec.get("clat_p99_ns", 0) / 1000,
            rec.get("server_cpu_us_per_io", -1), rec["client_cpu_us_per_io"],
            rec.get("guest_cpu_us_per_io", -1)))

    # ---- the profiler (RDAX_BENCH_PERF)
    def profiled(self, key, wname):
        return bool(PERF) and any(fnmatch.fnmatchcase("%s/%s" % (key, wname), p)
                                  for p in PERF_ROWS)

    def perf_start(self, rec):
        """perf record of the whole guest into tmpfs (not the 9p repository
        mount) on CLOCK_MONOTONIC, so the host can cut fio's window out.
        It starts disabled and is enabled through its control FIFO once it
        has synthesized every task's maps (seconds under TCG); fio starts
        after perf's ack."""
        base = "/tmp/perf-%s-%s" % (rec["subject"], rec["workload"])
        data, ctl, ack = base + ".data", base + ".ctl", base + ".ack"
        for f in (ctl, ack):
            if os.path.exists(f):
                os.unlink(f)
            os.mkfifo(f)
        log = open(os.path.join(self.raw, "perf-%s-%s.log" % (rec["subject"], rec["workload"])), "w")
        cmd = PERF.split() + ["-k", "CLOCK_MONOTONIC", "-D", "-1", "--control",
                              "fifo:%s,%s" % (ctl, ack), "-o", data]
        rec["perf_cmd"] = " ".join(PERF.split())
        p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        p.data, p.logf = data, log
        t0 = time.monotonic()
        # perf holds both FIFOs open read-write: neither open blocks once it runs
        cfd = afd = None
        while time.monotonic() - t0 < 60 and p.poll() is None:
            try:
                cfd = os.open(ctl, os.O_WRONLY | os.O_NONBLOCK)
                break
            except OSError:
                time.sleep(0.1)
        if cfd is not None:
            afd = os.open(ack, os.O_RDONLY | os.O_NONBLOCK)
            os.write(cfd, b"enable\n")
            got = b""
            while time.monotonic() - t0 < 60 and b"ack" not in got and p.poll() is None:
                r, _, _ = select.select([afd], [], [], 1)
                if r:
                    got += os.read(afd, 64)
            os.close(cfd)
            os.close(afd)
            if b"ack" in got:
                rec["perf_start_s"] = round(time.monotonic() - t0, 2)
                return p
        say("%s: perf did not start recording (raw/%s)" % (rec["jobname"],
                                                        os.path.basename(log.name)))
        return p

    def perf_stop(self, p, rec):
        p.send_signal(signal.SIGINT)
        try:
            p.wait(timeout=120)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        p.logf.close()
        dest = os.path.join(self.raw, os.path.basename(p.data))
        if p.returncode not in (0, -signal.SIGINT) or not os.path.exists(p.data):
            rec["perf_error"] = "perf record exit %s (raw/%s)" % (
                p.returncode, os.path.basename(p.logf.name))
            self.fail("%s: %s" % (rec["jobname"], rec["perf_error"]))
            return
        shutil.move(p.data, dest)
        for f in (".ctl", ".ack"):
            os.unlink(p.data[:-5] + f)
        rec["perf_data"] = os.path.relpath(dest, self.out)
        # the symbols of the guest's kernel and modules, for perf script on
        # the host (a copy per set of loaded modules)
        mods = " ".join(sorted(ln.split()[0] for ln in (_read("/proc/modules") or "").splitlines()))
        if mods != self.kallsyms[0]:
            path = os.path.join(self.raw, "kallsyms-%d" % len(self.profiles))
            shutil.copyfile("/proc/kallsyms", path)
            self.kallsyms = (mods, os.path.relpath(path, self.out))
        rec["kallsyms"] = self.kallsyms[1]
        rec["guest_cpus"] = os.cpu_count()

    def log_mark(self):
        """Where rdaxd's log and the kernel log stand now."""
        n = 0
        if os.path.exists(self.rdaxd_log) and getattr(self, "rdaxd", None) and \
                self.rdaxd.poll() is None:
            with open(self.rdaxd_log) as f:
                n = len(f.readlines())
        return n, len(run(["dmesg"]).stdout.splitlines())

    def log_since(self, mark):
        """Warnings and disconnects rdaxd or the kernel (cifs.ko, ksmbd,
        rxe) logged since mark."""
        out = []
        n, k = mark
        if n or (getattr(self, "rdaxd", None) and self.rdaxd.poll() is None):
            with open(self.rdaxd_log) as f:
                out += ["rdaxd: " + ln.strip() for ln in f.readlines()[n:]
                        if re.search(r"\[(warning|error)\]|dropping connection", ln)]
        for ln in run(["dmesg"]).stdout.splitlines()[k:]:
            if re.search(r"(?i)cifs|ksmbd|smbd|rxe", ln) and \
                    re.search(r"(?i)err|fail|reconnect|disconnect|timeout|retry|warn", ln):
                out.append("kernel: " + ln.strip())
        return [w for w in out if not benign(w)][:20]

    def job_skip(self, rec, why):
        """A job this testbed cannot run at all: no figure, not an error."""
        say("SKIPPED: %s: %s" % (rec["jobname"], why))
        rec["skip_text"] = why
        (self.profiles if rec.get("profile") else self.jobs).append(rec)

    def job_error(self, rec, err):
        self.fail("%s: %s" % (rec["jobname"], err))
        rec["error"] = rec.get("error") or -1
        rec["error_text"] = err
        (self.profiles if rec.get("profile") else self.jobs).append(rec)

    def subject(self, key, target, ticks, error=None):
        subj = next(s for s in SUBJECTS if s[0] == key)
        if ONLY and key not in ONLY:
            return
        self.subjects.setdefault(key, {"desc": subj[4]})
        for wl in WORKLOADS:
            if not planned(key, wl):
                continue
            if error:
                self.job_error({"jobname": "%s/%s" % (key, wl[0]), "subject": key,
                                "client": subj[1], "server": subj[2], "store": subj[3],
                                "workload": wl[0], "rw": wl[1], "bs": wl[2],
                                "iodepth": wl[3]}, error)
            else:
                self.fio(subj, wl, target, ticks)
                if self.profiled(key, wl[0]):
                    self.fio(subj, wl, target, ticks, prof=True)

    def rdaxd_subject(self, key, target, share):
        if ONLY and key not in ONLY:
            return
        sh = self.shares.get(share, {})
        self.subjects[key] = {"desc": next(s[4] for s in SUBJECTS if s[0] == key),
                              "share": share, **sh}
        w0, _ = self.rdaxd_stats()
        self.subject(key, target, tree_ticks_of(self.rdaxd.pid))
        w1, st = self.rdaxd_stats()
        self.subjects[key]["rdaxd_counters"] = {k: w1.get(k, 0) - w0.get(k, 0) for k in w1}
        # idle: each worker's CPU over IDLE_S s with no client, in % of a CPU
        c0, t0 = dict(self.rdaxd_cpu), time.monotonic()
        time.sleep(IDLE_S)
        self.rdaxd_stats()
        dt = time.monotonic() - t0 - 1   # rdaxd_stats waits 1 s after its signal
        self.subjects[key]["idle_cpu_pct_per_worker"] = {
            str(w): round((self.rdaxd_cpu[w] - c0[w]) / 1e6 / dt * 100, 3)
            for w in self.rdaxd_cpu if w in c0}
        self.subjects[key]["share_stats"] = st.get(share)
        # where rdaxd ran: its NUMA decision and each worker's node and CPU
        self.subjects[key]["placement"] = {"numa": list(self.rdaxd_numa),
                                           "workers": sorted(self.rdaxd_workers.values(),
                                                             key=lambda w: w["worker"])}

    def sweep(self, share, fname):
        """QD1 random writes and reads of 1-64 KiB, inline and by RDMA."""
        out = []
        for rw, ddir in (("randwrite", "write"), ("randread", "read")):
            for bs in SWEEP_SIZES:
                for how, thr_b in (("inline", 1 << 30), ("rdma", 1)):
                    name = "sweep-%s-%dk-%s" % (rw, bs >> 10, how)
                    raw = os.path.join(self.raw, name + ".json")
                    args = ["fio", "--name=" + name, "--bs=%d" % bs, "--iodepth=1",
                            "--size=" + SIZE, "--output-format=json", "--output=" + raw,
                            "--runtime=%dms" % round(SWEEP_RUNTIME * 1000),
                            "--ramp_time=500ms", "--time_based=1", "--thread",
                            "--rw=" + rw, "--norandommap=1",
                            "--ioengine=external:" + self.build + "/fio-rdax.so",
                            "--hostname=" + self.addr, "--share=" + share,
                            "--transport=rdma", "--user=" + USER,
                            "--password_file=" + self.pwfile, "--filename=" + fname,
                            "--rdma_threshold=%d" % thr_b]
                    r = run(args, timeout=SWEEP_RUNTIME + 120)
                    rec = {"rw": rw, "bs": bs, "how": how}
                    try:
                        with open(raw) as f:
                            text = f.read()
                        d = json.loads(text[text.index("{"):])["jobs"][0][ddir]
                        rec.update(iops=d["iops"], clat_p50_ns=d.get("clat_ns", {}).get(
                            "percentile", {}).get("50.000000"))
                    except (OSError, ValueError, KeyError, IndexError) as e:
                        rec["error_text"] = "fio exit %d: %s %s" % (
                            r.returncode, e, summarize(r.stdout + r.stderr))
                        self.fail("%s: %s" % (name, rec["error_text"]))
                    say("%s: %s IOPS" % (name, fmt(rec.get("iops"))))
                    out.append(rec)
        return out

    def want(self, *keys):
        return not ONLY or any(k in ONLY for k in keys)

    def main(self):
        t_start = time.monotonic()
        self.pwfile = os.path.join(self.out, "pw")
        with open(self.pwfile, "w") as f:
            f.write(PASSWORD + "\n")
        os.chmod(self.pwfile, 0o600)
        mnt = "/mnt/rdax-bench-cifs"
        if not ONLY or "wire" in ONLY:
            for size, depth in ((1 << 20, 8), (4096, 1), (4096, 32)):
                if WL_ONLY and not any(w[2] == size and w[3] == depth and w[0] in WL_ONLY
                                       for w in WORKLOADS):
                    continue
                self.perftest("ib_write_bw", size, depth)
                self.perftest("ib_read_bw", size, depth)
            if not WL_ONLY or any(w in WL_ONLY for w in ("randread-4k-qd1", "randwrite-4k-qd1")):
                self.perftest("ib_write_lat", 4096)
                self.perftest("ib_read_lat", 4096)

        self.subject("fio-rdma", None, None)

        devname = os.path.basename(self.devdax)
        fsdir = os.path.join(self.fsdax, "bench-rdaxd")
        shutil.rmtree(fsdir, ignore_errors=True)
        if self.want("rdax-rdaxd-fsdax", "rdax-rdaxd-devdax", "cifs-rdaxd-fsdax",
                     "cifs-rdaxd-devdax"):
            if self.start_rdaxd(fsdir):
                self.shares = self.rdaxd_shares()
                say("rdaxd shares: %s" % json.dumps(self.shares))
                self.rdaxd_subject("rdax-rdaxd-fsdax", ("fs", "fio-rdax.bin"), "fs")
                if self.devdax:
                    self.rdaxd_subject("rdax-rdaxd-devdax", ("raw", devname), "raw")
                    if SWEEP and self.want("sweep"):
                        self.sweep_results = self.sweep("raw", devname)
                else:
                    self.subject("rdax-rdaxd-devdax", None, None, "no RDAX_VM_DEVDAX")
                if self.want("cifs-rdaxd-fsdax"):
                    err = self.cifs_mount_share("fs", mnt)
                    if err:
                        self.subject("cifs-rdaxd-fsdax", None, None, err)
                    else:
                        self.rdaxd_subject("cifs-rdaxd-fsdax", mnt + "/fio-cifs.bin", "fs")
                        run(["tests/vm/peer", "cifs-umount", mnt])
                if self.want("cifs-rdaxd-devdax"):
                    err = self.cifs_mount_share("raw", mnt) if self.devdax else "no devdax"
                    if err:
                        self.subject("cifs-rdaxd-devdax", None, None, err)
                    else:
                        self.rdaxd_subject("cifs-rdaxd-devdax", mnt + "/" + devname, "raw")
                        run(["tests/vm/peer", "cifs-umount", mnt])
                self.stop_rdaxd()
            else:
                for k in ("rdax-rdaxd-fsdax", "rdax-rdaxd-devdax", "cifs-rdaxd-fsdax",
                          "cifs-rdaxd-devdax"):
                    self.subject(k, None, None, "rdaxd did not start")
        for mode in POLL_MODES:
            kf, kd = "rdax-rdaxd-fsdax-" + mode, "rdax-rdaxd-devdax-" + mode
            if not self.want(kf, kd):
                continue
            if not self.start_rdaxd(fsdir, mode):
                self.subject(kf, None, None, "rdaxd did not start")
                self.subject(kd, None, None, "rdaxd did not start")
                continue
            self.shares = self.rdaxd_shares()
            self.rdaxd_subject(kf, ("fs", "fio-rdax.bin"), "fs")
            if self.devdax:
                self.rdaxd_subject(kd, ("raw", devname), "raw")
            else:
                self.subject(kd, None, None, "no RDAX_VM_DEVDAX")
            self.stop_rdaxd()
        shutil.rmtree(fsdir, ignore_errors=True)

        rpma_ok = os.access(RPMA_FIO, os.X_OK)
        for method in ("apm", "gpspm"):
            for store in ("fsdax", "devdax"):
                key = "librpma-%s-%s" % (method, store)
                if not self.want(key):
                    continue
                if not rpma_ok:
                    self.subject(key, None, None, "%s not built (make fio-rpma)" % RPMA_FIO)
                    continue
                if store == "devdax":
                    if not self.devdax:
                        self.subject(key, None, None, "no RDAX_VM_DEVDAX")
                        continue
                    target = self.devdax
                else:
                    target = os.path.join(self.fsdax, "bench-rpma.bin")
                    with open(target, "wb") as f:
                        f.truncate(64 << 20)
                self.subjects[key] = {"store": store, "target": target}
                self.subject(key, target, None)
                if store == "fsdax":
                    os.unlink(target)

        if self.want("rdax-ksmbd", "cifs-ksmbd"):
            share = os.path.join(self.fsdax, "bench-ksmbd")
            shutil.rmtree(share, ignore_errors=True)
            r = run(["tests/vm/peer", "ksmbd-start", share, "bench", USER, PASSWORD])
            if r.returncode:
                err = "ksmbd-start: " + (r.stdout + r.stderr)[-300:]
                self.subject("rdax-ksmbd", None, None, err)
                self.subject("cifs-ksmbd", None, None, err)
            else:
                for k in ("rdax-ksmbd", "cifs-ksmbd"):
                    if not ONLY or k in ONLY:
                        self.subjects[k] = {"share": share, "store": "ksmbd (vfs on ext4 -o dax)"}
                self.subject("rdax-ksmbd", ("bench", "fio-rdax.bin"), ksmbd_ticks)
                if self.want("cifs-ksmbd"):
                    err = self.cifs_mount_share("bench", mnt)
                    if err:
                        self.subject("cifs-ksmbd", None, None, err)
                    else:
                        self.subject("cifs-ksmbd", mnt + "/fio-cifs.bin", ksmbd_ticks)
                        run(["tests/vm/peer", "cifs-umount", mnt])
            run(["tests/vm/peer", "ksmbd-stop"])
            shutil.rmtree(share, ignore_errors=True)

        facts = {
            "guest_kernel": os.uname().release, "guest_cpus": os.cpu_count(),
            "placement": placement_facts(self.dev),
            "rdma_dev": self.dev, "fio": run(["fio", "--version"]).stdout.strip(),
            "perftest": run(["dpkg-query", "-W", "-f=${Version}", "perftest"]).stdout.strip(),
            "fio_size": SIZE, "fio_runtime_s": RUNTIME, "fio_ramp_time_s": RAMP,
            "perftest_duration_s": PT_DURATION, "perftest_lat_iters": PT_LAT_ITERS,
            "fsdax": self.fsdax + " (ext4 -o dax)", "devdax": self.devdax,
            "share": self.fsdax + " (ext4 -o dax); " + self.devdax + " (device DAX)",
            "guest_seconds": round(time.monotonic() - t_start, 1),
        }
        with open(os.path.join(self.out, "guest.json"), "w") as f:
            json.dump({"guest": facts, "jobs": self.jobs, "anchors": self.anchors,
                       "subjects": self.subjects, "errors": self.errors,
                       "sweep": self.sweep_results, "profiles": self.profiles}, f, indent=1)
        say("%d jobs, %d anchors, %d errors, %.0f s in the guest" % (
            len(self.jobs), len(self.anchors), len(self.errors), facts["guest_seconds"]))
        return 1 if self.errors else 0


# ---- report (host)

def wire_anchor(anchors, wl, lat=False):
    name, rw, bs, depth, ddir = wl
    # a READ's data goes server -> client (the server RDMA-Writes), a WRITE's
    # client -> server (the server RDMA-Reads)
    tool = ("ib_write" if ddir == "read" else "ib_read") + ("_lat" if lat else "_bw")
    for a in anchors:
        if a["tool"] == tool and a["bs"] == bs and (lat or a["iodepth"] == depth) \
                and not a.get("error") and (a.get("read") or a.get("write")):
            return a
    return None


def thr(j, wl):
    d = j.get(wl[4]) if j else None
    if not d or "iops" not in d:
        return None
    return d["bw_bytes"] / 1048576 if wl[2] >= 1 << 20 else d["iops"]


def fmt(v, digits=None):
    if v is None:
        return "-"
    if digits is not None:
        return "%.*f" % (digits, v)
    return "%.0f" % v if abs(v) >= 100 else "%.1f" % v if abs(v) >= 10 else "%.2f" % v


def md_table(head, rows):
    out = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out


RDAX_RUNGS = ("rdax-rdaxd-fsdax", "rdax-rdaxd-devdax")


def targets(jobs, anchors):
    """Issue 16's targets, each measured ratio against its bar (rdax->rdaxd
    on both rungs): a list of dicts, in the JSON and the report."""
    wls = {w[0]: w for w in WORKLOADS}
    out = []

    def ratio(k, wname, other, metric):
        j, o = jobs.get("%s/%s" % (k, wname)), jobs.get("%s/%s" % (other, wname))
        if metric == "thr":
            v, b = thr(j, wls[wname]), thr(o, wls[wname])
        else:
            v, b = (j or {}).get(metric), (o or {}).get(metric)
        return v / b if v and b else None

    def add(what, k, wname, value, bar, higher):
        out.append({"target": what, "pair": k, "workload": wname,
                    "value": round(value, 3) if value is not None else None,
                    "bar": bar, "higher_is_better": higher,
                    "met": None if value is None else
                    (value >= bar if higher else value <= bar)})

    for k in RDAX_RUNGS:
        for w in ("randread-4k-qd1", "randwrite-4k-qd1"):
            add("4 KiB QD1 IOPS ÷ cifs.ko→ksmbd", k, w, ratio(k, w, BASE, "thr"), 2.0, True)
        add("4 KiB QD32 read IOPS ÷ fio rdma engine", k, "randread-4k-qd32",
            ratio(k, "randread-4k-qd32", "fio-rdma", "thr"), 1.0, True)
        add("4 KiB QD32 write IOPS ÷ fio rdma engine", k, "randwrite-4k-qd32",
            ratio(k, "randwrite-4k-qd32", "fio-rdma", "thr"), 0.6, True)
        for w in ("seqwrite-1m-qd8", "seqread-1m-qd8"):
            a = wire_anchor(anchors, wls[w])
            v = thr(jobs.get("%s/%s" % (k, w)), wls[w])
            wire = None
            if a:
                ad = a.get("write") or a.get("read")
                wire = ad["bw_bytes"] / 1048576
            add("1 MiB QD8 MiB/s ÷ wire (perftest)", k, w, v / wire if v and wire else None,
                0.95, True)
        store = k.rsplit("-", 1)[1]
        # fio's clat of the librpma engines is not per I/O (its p50 comes out
        # at 17 s): at QD1 the mean latency is 1/IOPS on both sides
        r = ratio(k, "randwrite-4k-qd1", "librpma-gpspm-" + store, "thr")
        add("4 KiB QD1 persistent write latency (1/IOPS) ÷ librpma GPSPM", k,
            "randwrite-4k-qd1", 1 / r if r else None, 1.2, False)
        for w in ("randread-4k-qd32", "randwrite-4k-qd32"):
            add("guest CPU per I/O at QD32 ÷ cifs.ko→ksmbd", k, w,
                ratio(k, w, BASE, "guest_cpu_us_per_io"), 0.5, False)
    return out


# ---- the profiles (RDAX_BENCH_PERF), summarized on the host

# kernel modules that name what a kernel sample works for: the frame nearest
# the leaf in one of these decides (a memcpy called by rxe is rxe's work)
KMODS = {"rdma_rxe": "rxe", "ib_core": "rdma core", "ib_uverbs": "rdma core",
         "rdma_cm": "rdma core", "ib_cm": "rdma core", "iw_cm": "rdma core",
         "rdma_ucm": "rdma core", "cifs": "cifs.ko", "ksmbd": "ksmbd.ko",
         "nd_pmem": "pmem/dax", "device_dax": "pmem/dax", "dax_pmem": "pmem/dax",
         "libnvdimm": "pmem/dax"}
# user DSOs by file name (prefix) -> code
UDSOS = [("rdaxd", "rdaxd"), ("fio-rdax.so", "librdax (fio engine)"),
         ("librdax.so", "librdax (fio engine)"), ("fio", "fio"),
         ("libc.so", "libc"), ("libibverbs.so", "ibverbs/rxe provider/rdmacm"),
         ("librxe-rdmav", "ibverbs/rxe provider/rdmacm"),
         ("librdmacm.so", "ibverbs/rxe provider/rdmacm"), ("liburcu", "liburcu"),
         ("librpma", "librpma"), ("libpmem", "libpmem/libpmem2"),
         ("libaio", "libaio")]
IDLE_SYMS = ("default_idle", "native_safe_halt", "pv_native_safe_halt", "arch_cpu_idle",
             "cpu_idle_poll", "mwait_idle", "intel_idle", "acpi_idle")
KTHREADS = ("kworker", "ksoftirqd", "cifsd", "ksmbd", "rcu_", "migration", "kthreadd",
            "jbd2", "irq/", "kcompactd", "khugepaged", "cpuhp")


def perf_samples(data, kallsyms):
    """perf script on the host: yields (comm, pid, time, period_ns, chain),
    chain a list of (sym, dso) from the leaf up."""
    cmd = ["perf", "script", "-f", "-i", data, "-F", "comm,pid,tid,time,period,ip,sym,dso"]
    if kallsyms:
        cmd += ["--kallsyms", kallsyms]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                         errors="replace")
    head, chain = None, []
    hre = re.compile(r"^\s*(\S.*?)\s+(\d+)/(\d+)\s+([\d.]+):\s+(\d+)")
    fre = re.compile(r"^\s+[0-9a-f]+\s+(.*?)\s+\((.*)\)$")
    for line in p.stdout:
        m = hre.match(line)
        if m:
            if head:
                yield head + (chain,)
            head, chain = (m.group(1), int(m.group(2)), float(m.group(4)), int(m.group(5))), []
            continue
        m = fre.match(line)
        if m and head:
            chain.append((m.group(1), m.group(2)))
    if head:
        yield head + (chain,)
    p.wait()


def prof_role(comm, pid, prof):
    if pid == 0:
        return "idle task"
    if pid == prof.get("server_pid") or (prof["server"] == "ksmbd" and comm.startswith("ksmbd")):
        return "server (%s)" % prof["server"]
    if comm.startswith("fio"):
        return "client (fio)"
    if comm.startswith(KTHREADS):
        return "kernel threads"
    return "other (bench, perf)"


def prof_code(chain):
    if not chain:
        return "unknown", None
    sym, dso = chain[0]
    if dso.startswith("["):
        kern = [f for f in chain if f[1].startswith("[")]
        soft = any(f[0].startswith(("__do_softirq", "do_softirq", "net_rx_action"))
                   for f in kern)
        for fs, fd in kern:
            mod = KMODS.get(fd.strip("[]"))
            if mod:
                return "kernel: " + mod + (" (softirq)" if soft else ""), sym
        if sym.startswith(IDLE_SYMS) or (any(f[0].startswith("do_idle") for f in kern)
                                         and not soft):
            return "idle", sym
        return "kernel: other" + (" (softirq)" if soft else ""), sym
    base = os.path.basename(dso)
    for pre, code in UDSOS:
        if base.startswith(pre):
            return "user: " + code, sym
    return "user: " + ("other libs" if base != "unknown" else "unknown"), sym


def prof_path(chain):
    """How a kernel sample got there: the system call, else softirq, an
    interrupt, the scheduler or the kernel thread's loop."""
    kern = [f[0] for f in chain if f[1].startswith("[")]
    for f in kern:
        m = re.match(r"(?:__x64_sys|__do_sys|__se_sys|ksys)_(\w+)", f)
        if m:
            return "syscall " + m.group(1)
    for marks, what in ((("__do_softirq", "handle_softirqs", "do_softirq", "net_rx_action"),
                         "softirq"),
                        (("asm_sysvec", "sysvec_", "asm_common_interrupt", "common_interrupt"),
                         "interrupt"),
                        (("exc_page_fault", "asm_exc_page_fault"), "page fault"),
                        (("worker_thread",), "workqueue"),
                        (("smpboot_thread_fn",), "per-CPU kthread"),
                        (("do_idle",), "idle loop"),
                        (("schedule", "__schedule", "finish_task_switch"), "scheduler"),
                        (("exit_to_user_mode", "syscall_exit"), "return to user")):
        if any(f.startswith(marks) for f in kern):
            return what
    return "other"


def profile_summary(out, prof, plain):
    """One profiled row: CPU per I/O by role (whose thread) and code."""
    d = prof[next(w[4] for w in WORKLOADS if w[0] == prof["workload"])]
    w0, w1 = prof["window_mono"]
    iops = d["total_ios"] / (d["runtime"] / 1000.0)
    ios = iops * (w1 - w0)
    cells, syms, ksyms, paths, total, n, tmin, tmax = {}, {}, {}, {}, 0, 0, None, None
    ks = os.path.join(out, prof["kallsyms"]) if prof.get("kallsyms") else None
    for comm, pid, t, period, chain in perf_samples(os.path.join(out, prof["perf_data"]), ks):
        tmin = t if tmin is None else min(tmin, t)
        tmax = t if tmax is None else max(tmax, t)
        if not w0 <= t <= w1:
            continue
        role = prof_role(comm, pid, prof)
        code, sym = prof_code(chain)
        if code == "idle":
            role = "idle task"
        cells[(role, code)] = cells.get((role, code), 0) + period
        total += period
        n += 1
        if sym and role.startswith("server") and code.startswith("user"):
            k = "%s (%s)" % (sym, code[6:])
            syms[k] = syms.get(k, 0) + period
        if sym and code.startswith("kernel"):
            k = "%s (%s)" % (sym, code[8:])
            ksyms[k] = ksyms.get(k, 0) + period
            k = "%s · %s · %s" % (role, code[8:], prof_path(chain))
            paths[k] = paths.get(k, 0) + period
    us = {"%s | %s" % rc: v / 1e3 / ios for rc, v in cells.items()} if ios else {}
    idle = sum(v for (r, c), v in cells.items() if c == "idle") / 1e3 / ios if ios else None
    busy = sum(v for (r, c), v in cells.items() if c != "idle") / 1e3 / ios if ios else None
    pv = thr(plain, next(w for w in WORKLOADS if w[0] == prof["workload"])) if plain else None
    pp = thr(prof, next(w for w in WORKLOADS if w[0] == prof["workload"]))
    return {
        "jobname": prof["jobname"], "subject": prof["subject"], "workload": prof["workload"],
        "perf_cmd": prof.get("perf_cmd"), "perf_data": prof.get("perf_data"),
        "window_s": round(w1 - w0, 3), "samples": n,
        "coverage": round(total / 1e9 / ((w1 - w0) * prof.get("guest_cpus", 2)), 3),
        "samples_span_s": [round(tmin - w0, 2), round(tmax - w1, 2)] if tmin is not None else None,
        "iops": iops, "ios_in_window": round(ios),
        "thr_under_perf_vs_plain": round(pp / pv, 3) if pv and pp else None,
        "guest_cpu_us_per_io_sampler": prof.get("guest_cpu_us_per_io"),
        "busy_us_per_io": busy, "idle_us_per_io": idle, "us_per_io": us,
        "top_server_user": [(k, v / 1e3 / ios) for k, v in
                            sorted(syms.items(), key=lambda x: -x[1])[:12]] if ios else [],
        "top_kernel": [(k, v / 1e3 / ios) for k, v in
                       sorted(ksyms.items(), key=lambda x: -x[1])[:12]] if ios else [],
        "kernel_paths": [(k, v / 1e3 / ios) for k, v in
                         sorted(paths.items(), key=lambda x: -x[1])[:14]] if ios else [],
    }


def profile_report(out, g, jobs, jpath, mdpath):
    """build/bench/rdma-to-dax-profile.{json,md}: each profiled row per I/O,
    then each workload's rows side by side."""
    sums = []
    for prof in g.get("profiles") or []:
        if prof.get("error_text") or prof.get("perf_error") or not prof.get("perf_data"):
            sums.append({"jobname": prof["jobname"], "subject": prof["subject"],
                         "workload": prof["workload"],
                         "error": prof.get("error_text") or prof.get("perf_error")})
            continue
        say("summarizing the profile of %s" % prof["jobname"])
        sums.append(profile_summary(out, prof, jobs.get(prof["jobname"])))
    md = ["# bench/rdma-to-dax: where the guest's CPU goes per I/O\n",
          "Each row ran a second time right after its measured run, under `%s` "
          "(the whole guest; samples cut to fio's measured window on CLOCK_MONOTONIC). "
          "µs of guest CPU per I/O = sampled CPU time ÷ (the profiled run's IOPS × the "
          "window). Role = whose thread the sample was in (the server's process, ksmbd's "
          "threads, the fio client, other kernel threads, the idle task, which also "
          "carries interrupts and softirqs taken while idle); code = where it was: user "
          "code by DSO, kernel code by the module nearest the leaf of its call chain "
          "(`kernel: rxe` includes the memcpy and CRC that rxe calls), `(softirq)` when "
          "the chain passes through softirq. Throughput under perf ÷ the measured run: "
          "perf's own cost (plus noise).\n" % (PERF or PERF_DEFAULT)]
    for s in sums:
        md.append("## %s\n" % s["jobname"])
        if s.get("error"):
            md.append("No profile: %s\n" % s["error"])
            continue
        md.append("%d samples over %.2f s (%.0f%% of %s CPUs x window sampled), %s IOPS "
                  "under perf (%s of the measured run); busy %.1f µs/I/O, idle %.1f µs/I/O; "
                  "the /proc sampler said %s µs/I/O busy.\n" % (
                      s["samples"], s["window_s"], s["coverage"] * 100, "the guest's",
                      fmt(s["iops"]), fmt(s["thr_under_perf_vs_plain"], 2),
                      s["busy_us_per_io"], s["idle_us_per_io"],
                      fmt(s["guest_cpu_us_per_io_sampler"])))
        rows = sorted(s["us_per_io"].items(), key=lambda x: -x[1])
        md += md_table(["role | code", "µs/I/O", "% of busy"],
                       [[k.replace("|", "·"), "%.2f" % v,
                         "-" if k.endswith("| idle") else
                         "%.1f" % (100 * v / s["busy_us_per_io"])] for k, v in rows if v >= 0.05])
        md.append("")
        if s["top_server_user"]:
            md.append("Server user code, top functions (µs/I/O): " + ", ".join(
                "`%s` %.2f" % (k, v) for k, v in s["top_server_user"]) + ".\n")
        if s["top_kernel"]:
            md.append("Kernel, top leaf functions (µs/I/O): " + ", ".join(
                "`%s` %.2f" % (k, v) for k, v in s["top_kernel"]) + ".\n")
        if s["kernel_paths"]:
            md.append("Kernel time by how it was entered (role · code · path, µs/I/O): " +
                      ", ".join("%s %.2f" % (k, v) for k, v in s["kernel_paths"]) + ".\n")
    # side by side per workload
    byw = {}
    for s in sums:
        if not s.get("error"):
            byw.setdefault(s["workload"], []).append(s)
    if byw:
        md.append("## Side by side (µs of guest CPU per I/O)\n")
    for wl in WORKLOADS:
        ss = byw.get(wl[0])
        if not ss:
            continue
        ss.sort(key=lambda x: SUBJECT_KEYS.index(x["subject"]))
        keys = []
        for s in ss:
            keys += [k for k in s["us_per_io"] if k not in keys]
        keys.sort(key=lambda k: -max(s["us_per_io"].get(k, 0) for s in ss))
        md.append("### %s\n" % wl[0])
        bk = [buckets(s) for s in ss]
        for s, b in zip(ss, bk):
            s["buckets"] = b
        md += md_table(["µs of guest CPU per I/O"] + [LABEL.get(s["subject"], s["subject"])
                                                       for s in ss],
                       [["throughput under perf (measured run)"] +
                        ["%s (%s)" % (fmt(thr(s_job(g, s), wl)),
                                      fmt(thr(jobs.get(s["jobname"]), wl))) for s in ss]] +
                       [[lab] + ["%.1f" % b[lab] for b in bk] for lab in bk[0]
                        if any(b[lab] >= 0.05 for b in bk)] +
                       [["**busy**"] + ["**%.1f**" % s["busy_us_per_io"] for s in ss],
                        ["idle"] + ["%.1f" % s["idle_us_per_io"] for s in ss],
                        ["/proc sampler, busy (profiled run)"] +
                        [fmt(s["guest_cpu_us_per_io_sampler"]) for s in ss]])
        md.append("")
        md.append("In detail (role, code):\n")
        rows = [["throughput under perf", ""] + [fmt(thr(s_job(g, s), wl)) for s in ss],
                ["busy", ""] + ["%.1f" % s["busy_us_per_io"] for s in ss],
                ["idle", ""] + ["%.1f" % s["idle_us_per_io"] for s in ss]]
        rows += [k.split(" | ", 1) + ["%.2f" % s["us_per_io"][k] if k in s["us_per_io"]
                                      else "-" for s in ss]
                 for k in keys if not k.endswith("| idle")
                 and max(s["us_per_io"].get(k, 0) for s in ss) >= 0.2]
        md += md_table(["role", "code"] + [LABEL.get(s["subject"], s["subject"]) for s in ss],
                       rows)
        md.append("")
    with open(jpath + ".tmp", "w") as f:
        json.dump({"bench": NAME + "-profile", "profiles": sums}, f, indent=1)
    os.replace(jpath + ".tmp", jpath)
    with open(mdpath, "w") as f:
        f.write("\n".join(md) + "\n")
    say("wrote %s and %s" % (jpath, mdpath))


# the coarse split of the side-by-side tables: (label, test on role, code)
BUCKETS = [
    ("server user: own code", lambda r, c: r.startswith("server") and c in (
        "user: rdaxd", "user: fio", "user: librpma")),
    ("server user: libc, libpmem2, liburcu, ibverbs/rxe provider", lambda r, c: r.startswith("server")
     and c.startswith("user")),
    ("rxe (kernel, every thread)", lambda r, c: c.startswith("kernel: rxe")),
    ("rdma core: ib_uverbs, ib_core, rdma_cm", lambda r, c: c.startswith("kernel: rdma core")),
    ("cifs.ko / ksmbd.ko", lambda r, c: c.startswith(("kernel: cifs", "kernel: ksmbd"))),
    ("server: other kernel (syscalls, sched, pmem)", lambda r, c: r.startswith("server")
     and c.startswith("kernel")),
    ("client user: fio + engine + libs", lambda r, c: r.startswith("client")
     and c.startswith("user")),
    ("client: other kernel", lambda r, c: r.startswith("client") and c.startswith("kernel")),
    ("kernel threads, irq/softirq on idle CPUs", lambda r, c: r in ("kernel threads", "idle task")
     and c != "idle"),
    ("the bench's sampler, perf", lambda r, c: r.startswith("other")),
]


def buckets(s):
    out = {b[0]: 0.0 for b in BUCKETS}
    out["unsorted"] = 0.0
    for k, v in s["us_per_io"].items():
        r, c = k.split(" | ", 1)
        if c == "idle":
            continue
        lab = next((b[0] for b in BUCKETS if b[1](r, c)), "unsorted")
        out[lab] += v
    return out


def s_job(g, s):
    return next((p for p in g.get("profiles") or [] if p["jobname"] == s["jobname"]), None)


def report(out, dest, mdpath):
    with open(os.path.join(out, "guest.json")) as f:
        g = json.load(f)
    for j in g["jobs"]:
        if "warnings" in j:
            j["warnings"] = [w for w in j["warnings"] if not benign(w)]
            if not j["warnings"]:
                del j["warnings"]
    jobs = {j["jobname"]: j for j in g["jobs"]}
    subjects = [k for k in SUBJECT_KEYS if any(j["subject"] == k for j in g["jobs"])]
    anchors = g["anchors"]
    ratios, detail_ratios = [], []
    md = []
    ts = int(time.time())
    gi = g["guest"]
    tb = json.loads(os.environ.get("RDAX_TESTBED", "{}"))
    md.append("# bench/rdma-to-dax\n")
    md.append("Measured %s on `%s`: host %s, qemu %s (%s), guest kernel %s, %s CPUs, %s "
              "Soft-RoCE; fio %s, %s s per job after %s s of ramp (the 1 MiB write, which "
              "lays the file out, without ramp), %s files; perftest %s s per bandwidth run, "
              "%d iterations per latency run; %s s wall, host load average %s at the start "
              "and %s at the end (%s host CPUs). Emulated: compare the subjects and ratios of "
              "one boot, not absolute numbers.\n" % (
                  time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(ts)),
                  os.environ.get("RDAX_DESCRIBE", "?"), tb.get("host_cpu", "?"),
                  tb.get("qemu", "?").replace("QEMU emulator version ", ""),
                  tb.get("accel", "?"), gi.get("guest_kernel"), gi.get("guest_cpus"),
                  gi.get("rdma_dev"), gi.get("fio"), fmt(gi.get("fio_runtime_s")),
                  fmt(gi.get("fio_ramp_time_s")), gi.get("fio_size"),
                  gi.get("perftest_duration_s"), gi.get("perftest_lat_iters", 0),
                  tb.get("wall_s", "?"), tb.get("host_loadavg_start", "?"),
                  tb.get("host_loadavg_end", "?"), tb.get("host_cpus", "?")))
    rungs = []
    for k in subjects:
        s = g["subjects"].get(k, {})
        if s.get("rung"):
            c = s.get("rdaxd_counters") or {}
            moved = ""
            if c.get("rdma_bytes"):
                moved = "; over its jobs %.0f MiB moved by RDMA, %.0f MiB of it zero-copy" % (
                    c["rdma_bytes"] / 1048576, c.get("zero_copy_bytes", 0) / 1048576)
            rungs.append("%s: share [%s] store %s, rung **%s** (%s)%s" % (
                LABEL[k], s.get("share"), s.get("store"), s["rung"], s.get("rung_why", ""),
                moved))
    if rungs:
        md.append("Registration rung rdaxd used per share (its log):\n")
        md += ["* " + r for r in rungs]
        md.append("")
    pl = gi.get("placement") or {}
    wk = next((g["subjects"][k].get("placement") for k in subjects
               if (g["subjects"].get(k) or {}).get("placement")), None)
    if pl or wk:
        where = ["guest NUMA nodes %s, %s on node %s" % (
            pl.get("numa_nodes_online", "?"), gi.get("rdma_dev"),
            "none reported" if pl.get("rdma_dev_numa_node") in (None, -1)
            else pl.get("rdma_dev_numa_node"))]
        where.append("clients (fio, perftest): CPUs %s, memory nodes %s, %s" % (
            pl.get("client_cpus", "?"), pl.get("client_mems", "?"),
            pl.get("client_binding", "?")))
        if wk:
            where.append("rdaxd: %s; workers %s" % (
                " / ".join(wk.get("numa") or ["no NUMA placement logged (one node)"]),
                ", ".join("%d on node %d cpu %d" % (w["worker"], w["node"], w["cpu"])
                          for w in wk.get("workers", []))))
        md.append("Where everything ran: " + "; ".join(where) + ".\n")
    base_key = "vs_" + BASE.replace("-", "_")

    def cell_err(j):
        return "error" if j and j.get("error_text") else "-"

    # 1. throughput, with ratios vs the kernel pair and vs the wire
    head = ["workload", "unit"] + [LABEL[k] for k in subjects] + ["wire (perftest)"]
    rows_v, rows_b, rows_w = [], [], []
    for wl in WORKLOADS:
        unit = "MiB/s" if wl[2] >= 1 << 20 else "IOPS"
        a = wire_anchor(anchors, wl)
        wire = None
        if a:
            ad = a.get("write") or a.get("read")
            wire = ad["bw_bytes"] / 1048576 if unit == "MiB/s" else ad["iops"]
        base = thr(jobs.get("%s/%s" % (BASE, wl[0])), wl)
        rv, rb, rw_ = [wl[0], unit], [wl[0], "× " + LABEL[BASE]], [wl[0], "× wire"]
        for k in subjects:
            j = jobs.get("%s/%s" % (k, wl[0]))
            v = thr(j, wl)
            rv.append((fmt(v) + (" †" if j.get("warnings") else "")) if v is not None
                      else cell_err(j))
            rb.append(fmt(v / base, 2) if v is not None and base else "-")
            rw_.append(fmt(v / wire, 2) if v is not None and wire else "-")
            if v is not None:
                ratios.append({
                    "workload": wl[0], "pair": k, "metric": "bw_bytes" if unit == "MiB/s" else "iops",
                    "value": v, base_key: round(v / base, 3) if base else None,
                    "vs_wire": round(v / wire, 3) if wire else None,
                    "wire_anchor": a["jobname"] if a else None,
                })
        rv.append(("%s (`%s`)" % (fmt(wire), a["jobname"])) if a else "-")
        rb.append("-")
        rw_.append("1.00" if a else "-")
        rows_v.append(rv)
        rows_b.append(rb)
        rows_w.append(rw_)
    md.append("## Throughput\n")
    md += md_table(head, rows_v)
    md.append("")
    md.append("### Ratio to %s (above 1: faster)\n" % LABEL[BASE])
    md += md_table(["workload", ""] + [LABEL[k] for k in subjects] + ["wire"], rows_b)
    md.append("")
    md.append("### Ratio to the wire (ib_write_bw for reads, ib_read_bw for writes, "
              "same size and depth)\n")
    md += md_table(["workload", ""] + [LABEL[k] for k in subjects] + ["wire"], rows_w)
    md.append("")

    # 1-. issue 16's targets
    tg = targets(jobs, anchors)
    if any(t["value"] is not None for t in tg):
        md.append("## Targets (issue 16)\n")
        md.append("rdax→rdaxd on each rung: the measured ratio against its bar.\n")
        md += md_table(["target", "pair", "workload", "measured", "bar", "met"],
                       [[t["target"], LABEL[t["pair"]], t["workload"], fmt(t["value"], 3),
                         ("≥ " if t["higher_is_better"] else "≤ ") + fmt(t["bar"], 3),
                         {True: "yes", False: "**no**", None: "-"}[t["met"]]] for t in tg])
        md.append("")

    # 1a. persistent 4 KiB writes: rdax against librpma, same store
    rp_rows = []
    for store in ("fsdax", "devdax"):
        for wname in RPMA_WORKLOADS:
            wl = next(w for w in WORKLOADS if w[0] == wname)
            j = jobs.get("rdax-rdaxd-%s/%s" % (store, wname)) or {}
            v = thr(j, wl)
            r = [wname, store]
            for method in ("apm", "gpspm"):
                a = jobs.get("librpma-%s-%s/%s" % (method, store, wname)) or {}
                av = thr(a, wl)
                r.append(fmt(v / av, 2) if v is not None and av else
                         ("error" if a.get("error_text") else "-"))
                r.append(fmt(av / v, 2) if v and av else "-")
            rp_rows.append(r)
    if any(x not in ("-",) for r in rp_rows for x in r[2:]):
        md.append("## Persistent 4 KiB writes: rdax→rdaxd against librpma\n")
        md.append("IOPS (above 1: rdax faster) and mean latency, QD ÷ IOPS (below 1: rdax faster; fio's clat of the librpma engines is not per I/O) of "
                  "rdax→rdaxd divided by fio's librpma engines on the same store. APM: "
                  "RDMA Write then an RDMA Read as the flush, no server CPU "
                  "(direct_write_to_pmem=1: rxe's writes are CPU copies, not DMA, so this "
                  "is the method's cost, not a persistence claim); GPSPM: RDMA Write then "
                  "a SEND asking the busy-polling server to persist.\n")
        md += md_table(["workload", "store", "× APM IOPS", "× APM latency", "× GPSPM IOPS",
                        "× GPSPM latency"], rp_rows)
        md.append("")

    # 1c. the inline/RDMA threshold sweep: RDMA over inline, per size
    sw = {(x["rw"], x["bs"], x["how"]): x for x in g.get("sweep") or []}
    sw_rows = []
    for bs in SWEEP_SIZES:
        r = ["%d KiB" % (bs >> 10)]
        for rw in ("randwrite", "randread"):
            i, d = sw.get((rw, bs, "inline"), {}), sw.get((rw, bs, "rdma"), {})
            r += [fmt(i.get("iops")), fmt(d.get("iops")),
                  fmt(d["iops"] / i["iops"], 2) if i.get("iops") and d.get("iops") else "-"]
        sw_rows.append(r)
    if sw:
        md.append("## Inline or RDMA: rdax→rdaxd devdax, QD1, by I/O size\n")
        md.append("IOPS with the data inline in the SMB2 message (threshold above the size) "
                  "and by RDMA (threshold 1); RDMA ÷ inline above 1: RDMA wins at that "
                  "size.\n")
        md += md_table(["size", "write inline", "write RDMA", "write RDMA÷inline",
                        "read inline", "read RDMA", "read RDMA÷inline"], sw_rows)
        md.append("")

    # 1b. completion polling: each mode against event, same store
    poll_rows, idle = [], []
    for store in ("fsdax", "devdax"):
        base_k = "rdax-rdaxd-%s-event" % store
        modes = [("adaptive", "rdax-rdaxd-" + store), ("busy", "rdax-rdaxd-%s-busy" % store)]
        for wl in WORKLOADS:
            bj = jobs.get("%s/%s" % (base_k, wl[0]))
            bv = thr(bj, wl)
            if bv is None:
                continue
            r = [wl[0], store]
            for _, k in modes:
                j = jobs.get("%s/%s" % (k, wl[0])) or {}
                v = thr(j, wl)
                r.append(fmt(v / bv, 2) if v is not None else "-")
                p50, bp50 = j.get("clat_p50_ns"), (bj or {}).get("clat_p50_ns")
                r.append(fmt(p50 / bp50, 2) if p50 and bp50 else "-")
                gc, bgc = j.get("guest_cpu_us_per_io"), (bj or {}).get("guest_cpu_us_per_io")
                r.append(fmt(gc / bgc, 2) if gc and bgc else "-")
            poll_rows.append(r)
        for mode, k in [("event", base_k)] + modes:
            ic = (g["subjects"].get(k) or {}).get("idle_cpu_pct_per_worker")
            if ic:
                idle.append("%s %s: %s" % (store, mode, ", ".join(
                    "worker %s %.2f%%" % (w, v) for w, v in sorted(ic.items()))))
    if poll_rows:
        md.append("## Completion polling (rdma poll and librdax's poll), ratio to event\n")
        md.append("Throughput (above 1: faster), clat p50 and guest CPU per I/O (below 1: "
                  "better) of rdax→rdaxd with both ends adaptive (the default) and busy, "
                  "each divided by the same store with both ends event.\n")
        md += md_table(["workload", "store", "adaptive thr", "adaptive p50",
                        "adaptive guest CPU", "busy thr", "busy p50", "busy guest CPU"],
                       poll_rows)
        md.append("")
    if idle:
        md.append("Idle CPU of rdaxd's workers (%d s with no client after the jobs, the "
                  "worker thread's own CPU time): %s.\n" % (IDLE_S, "; ".join(idle)))

    # 2. latency and CPU ratios vs the kernel pair (below 1: better)
    metrics = [("clat_p50_ns", "clat p50"), ("clat_p99_ns", "clat p99"),
               ("clat_p99.9_ns", "clat p99.9"), ("server_cpu_us_per_io", "server CPU/I/O"),
               ("client_cpu_us_per_io", "client CPU/I/O"),
               ("guest_cpu_us_per_io", "guest CPU/I/O")]
    rows = []
    for wl in WORKLOADS:
        b = jobs.get("%s/%s" % (BASE, wl[0])) or {}
        for mk, ml in metrics:
            r = [wl[0], ml]
            for k in subjects:
                j = jobs.get("%s/%s" % (k, wl[0])) or {}
                v, bv = j.get(mk), b.get(mk)
                r.append(fmt(v / bv, 2) if v is not None and bv else "-")
                if v is not None:
                    detail_ratios.append({"workload": wl[0], "pair": k, "metric": mk,
                                          "value": v, base_key: round(v / bv, 3) if bv else None})
            rows.append(r)
    md.append("## Latency and CPU per I/O, ratio to %s (below 1: better)\n" % LABEL[BASE])
    md += md_table(["workload", "metric"] + [LABEL[k] for k in subjects], rows)
    md.append("")

    # 3. absolute values per job
    rows = []
    for wl in WORKLOADS:
        unit = "MiB/s" if wl[2] >= 1 << 20 else "IOPS"
        for k in subjects:
            j = jobs.get("%s/%s" % (k, wl[0]))
            if not j:
                continue
            if j.get("error_text") or j.get("skip_text"):
                rows.append([wl[0], LABEL[k], "error (below)" if j.get("error_text") else
                             "not run here (below)"] + ["-"] * 6 + [j.get("rung", "")])
                continue
            v = thr(j, wl)

            def us(key):
                return fmt(j[key] / 1000) if j.get(key) is not None else "-"
            rows.append([wl[0], LABEL[k], "%s %s" % (fmt(v), unit), us("clat_p50_ns"),
                         us("clat_p99_ns"), us("clat_p99.9_ns"),
                         fmt(j.get("server_cpu_us_per_io")), fmt(j.get("client_cpu_us_per_io")),
                         fmt(j.get("guest_cpu_us_per_io")), j.get("rung", "")])
        for lat in (False, True):
            a = wire_anchor(anchors, wl, lat)
            if not a or (lat and wl[3] != 1):
                continue
            ad = a.get("write") or a.get("read")
            p = ad.get("lat_ns", {}).get("percentile", {})
            rows.append([wl[0], "wire `%s`" % a["jobname"],
                         "%s %s" % (fmt(ad["bw_bytes"] / 1048576 if unit == "MiB/s" else
                                        ad["iops"]), unit) if "iops" in ad else "",
                         fmt(p["50.000000"] / 1000) if p else "-",
                         fmt(p["99.000000"] / 1000) if p else "-",
                         fmt(p["99.900000"] / 1000) if p else "-",
                         fmt(a.get("server_cpu_us_per_io")), fmt(a.get("client_cpu_us_per_io")),
                         "-", ""])
    md.append("## All figures\n")
    md.append("Latency: fio's completion latency (clat) percentiles in µs; perftest's "
              "t_typical as p50 (ib_write_lat: half a ping-pong round trip). CPU in µs per "
              "I/O: server = utime+stime of rdaxd / ksmbd's kernel threads and ksmbd-io "
              "kworkers / the listening fio "
              "over fio's measured window; client = fio's usr+sys; guest = every busy CPU of "
              "the guest (client, server, rxe, cifs.ko threads). perftest busy-polls both ends: "
              "its CPU is whole-process time per message.\n")
    md += md_table(["workload", "subject", "throughput", "p50 µs", "p99 µs", "p99.9 µs",
                    "server CPU µs/I/O", "client CPU µs/I/O", "guest CPU µs/I/O", "rung"], rows)
    md.append("")
    warned = [j for j in g["jobs"] if j.get("warnings")]
    if warned:
        md.append("## Warnings during measured jobs (†)\n")
        md.append("These jobs completed, but the server or the kernel logged a transport "
                  "error or a reconnect while they ran; their figures include the stall.\n")
        for j in warned:
            md.append("* %s: %s" % (j["jobname"], "; ".join(
                w.replace("|", "/") for w in j["warnings"][:3])))
        md.append("")
    errs = g["errors"]
    if errs:
        md.append("## Errors\n")
        md += ["* " + e.replace("\n", " ").replace("|", "/")[:600] for e in errs]
        md.append("")
    skipped = [j for j in g["jobs"] if j.get("skip_text")]
    if skipped:
        md.append("## Not run in this testbed\n")
        md += ["* %s: %s" % (j["jobname"], j["skip_text"].replace("|", "/")[:400])
               for j in skipped]
        md.append("")
    notes = [
        "fio's rdma engine has no file and refuses random I/O; its 4 KiB rows are a "
        "sequential stream of RDMA Reads (read rows) or Writes (write rows) into the "
        "listening fio's registered buffers, so they are a transport figure, not file I/O",
        "cifs.ko runs fio with libaio and O_DIRECT on a mount with cache=none",
        "rxe does its packet work (copy, ICRC) in the context that posts or polls: in "
        "rdaxd's and fio's own threads for the user-space peers, in softirq and kworkers "
        "for cifs.ko and ksmbd, which neither server nor client CPU sees; so server and "
        "client CPU/I/O favour the kernel peers, and guest CPU/I/O (everything) is the fair "
        "total",
        "perftest busy-polls both ends on 2 vCPUs and at 1 MiB rxe under TCG hits "
        "transport retries (docs/testbed.md, bench/baseline), so its 1 MiB figure varies "
        "from run to run and a file I/O path can come out above the 'wire'",
        "one run per job, in one boot; under TCG the figures follow host load",
    ]
    md.append("Notes: " + "; ".join(notes) + ".\n")
    doc = {
        "rdax version": os.environ.get("RDAX_DESCRIBE", ""),
        "bench": NAME,
        "schema_version": 1,
        "timestamp": ts,
        "note": "Emulated testbed (Soft-RoCE rxe on a veth, qemu TCG, NVDIMM backed by "
                "a host file): compare subjects measured in the same boot, not absolute speeds.",
        "guest": gi, "testbed": tb,
        "baseline_pair": BASE,
        "subjects": [{"key": k, "label": LABEL[k], "client": c, "server": s, "store": st,
                      "desc": desc, **g["subjects"].get(k, {})}
                     for k, c, s, st, desc in SUBJECTS if k in subjects],
        "workloads": [{"name": w[0], "rw": w[1], "bs": w[2], "iodepth": w[3]} for w in WORKLOADS],
        "fields": {
            "client_cpu_us_per_io": "(usr_cpu + sys_cpu) x job_runtime / total_ios",
            "server_cpu_us_per_io": "utime+stime of the server (rdaxd's process tree; ksmbd's "
                                    "kernel threads ksmbd* plus the kworkers named after its "
                                    "ksmbd-io workqueue, best effort; the listening fio) over "
                                    "fio's measured window, sampled from /proc, / IOPS",
            "server_cpu": "the same in % of one CPU",
            "guest_cpu_us_per_io": "all busy CPU of the guest (/proc/stat) over that window / IOPS",
            "rung": "rdaxd's registration rung for the share (its log)",
        },
        "notes": notes,
        "errors": errs,
        "jobs": [dict(j, label=LABEL.get(j["subject"], j["subject"])) for j in g["jobs"]],
        "anchors": anchors, "ratios": ratios, "ratios_latency_cpu": detail_ratios,
        "threshold_sweep": g.get("sweep") or [],
        "targets": tg,
    }
    with open(dest + ".tmp", "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(dest + ".tmp", dest)
    text = "\n".join(md) + "\n"
    with open(mdpath, "w") as f:
        f.write(text)
    print(text)
    if g.get("profiles"):
        profile_report(out, g, jobs, re.sub(r"\.json$", "", dest) + "-profile.json",
                       re.sub(r"\.md$", "", mdpath) + "-profile.md")
    expect = sum(planned(k, wl) for k in SUBJECT_KEYS for wl in WORKLOADS) \
        if not ONLY and not WL_ONLY else None
    ok = [j for j in g["jobs"] if not j.get("error_text")]
    if expect and len(ok) != expect:
        say("expected %d measured jobs, got %d" % (expect, len(ok)))
        return 1
    return 1 if errs else 0


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "guest":
        return Guest(sys.argv[2]).main()
    if len(sys.argv) == 5 and sys.argv[1] == "report":
        return report(sys.argv[2], sys.argv[3], sys.argv[4])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
