#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""SMB-Direct file I/O, four client/server pairs side by side in one boot.

  bench/smbdirect.py guest OUTDIR    inside `tests/vm/run --pmem` (bench/smbdirect)
  bench/smbdirect.py report OUTDIR   on the host: JSON + ratio table

The guest part runs, over the same rxe link and onto the same fsdax mount:

  rdax  -> rdaxd   fio with the rdax engine (build/fio-rdax.so), transport=rdma
  cifs  -> rdaxd   fio libaio O_DIRECT on mount -t cifs -o rdma,cache=none
  rdax  -> ksmbd
  cifs  -> ksmbd   (the kernel pair: the baseline of every ratio)

each with 1 MiB sequential write and read at QD4 and 4 KiB random read at QD1
and QD16, plus ib_write_bw / ib_read_bw with the same message size and depth
as the wire limit. A READ's data moves server -> client (RDMA Write by the
server), a WRITE's client -> server (RDMA Read by the server), so reads are
held against ib_write_bw and writes against ib_read_bw. Besides fio's own
figures each job records the guest's CPU time (all CPUs, /proc/stat) per GiB
moved: client, server and rxe share the guest, so that is the whole cost.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import time

PAIRS = [("rdax", "rdaxd"), ("cifs", "rdaxd"), ("rdax", "ksmbd"), ("cifs", "ksmbd")]
BASE = "cifs-ksmbd"
# name, fio rw, bs, iodepth, direction in fio's JSON
WORKLOADS = [
    ("seqwrite-1m", "write", 1 << 20, 4, "write"),
    ("seqread-1m", "read", 1 << 20, 4, "read"),
    ("randread-4k-qd1", "randread", 4096, 1, "read"),
    ("randread-4k-qd16", "randread", 4096, 16, "read"),
]
USER, PASSWORD = "bench", "rdax-Bench1"
SIZE = os.environ.get("RDAX_BENCH_FIO_SIZE", "64m")
RUNTIME = int(os.environ.get("RDAX_BENCH_FIO_RUNTIME", "4"))
PT_DURATION = int(os.environ.get("RDAX_BENCH_PT_DURATION", "3"))
STEP_TIMEOUT = 240


def say(msg):
    print("smbdirect: " + msg, file=sys.stderr, flush=True)


def run(cmd, **kw):
    return subprocess.run(cmd, text=True, capture_output=True, timeout=STEP_TIMEOUT, **kw)


def cpu_busy_ticks():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + v[4]  # idle + iowait
    return sum(v[:8]) - idle


class Guest:
    def __init__(self, out):
        self.out = out
        self.raw = os.path.join(out, "raw")
        os.makedirs(self.raw, exist_ok=True)
        self.addr = os.environ["RDAX_VM_ADDR"]
        self.dev = os.environ["RDAX_VM_RDMA_DEV"]
        self.fsdax = os.environ["RDAX_VM_FSDAX"]
        self.build = os.environ.get("B", "build")
        self.jobs = []
        self.anchors = []
        self.errors = []

    def fail(self, msg):
        say("FAILED: " + msg)
        self.errors.append(msg)

    # ---- wire limit
    def wait_listen(self, port):
        for _ in range(200):
            r = run(["rdma", "resource", "show", "cm_id"])
            if re.search(r"LISTEN.* src-addr [^ ]*:%d( |$)" % port, r.stdout, re.M):
                return True
            time.sleep(0.1)
        return False

    def perftest(self, tool, size, depth):
        name = "%s-%d-t%d" % (tool, size, depth)
        # perftest busy-polls at both ends (-e works only for SEND): on a
        # 2-vCPU emulated guest that competes with rxe's own kernel work,
        # so the "wire" can come out below what a sleeping SMB peer gets
        args = [tool, "-d", self.dev, "-R", "-F", "-s", str(size), "-t", str(depth),
                "-D", str(PT_DURATION)]
        say("%s %d-byte messages, tx depth %d" % (tool, size, depth))
        srv = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if not self.wait_listen(18515):
            srv.kill()
            self.fail(name + ": server did not listen")
            return
        cli = run(args + [self.addr])
        srv.communicate(timeout=STEP_TIMEOUT)
        with open(os.path.join(self.raw, name + ".txt"), "w") as f:
            f.write(" ".join(args + [self.addr]) + "\n" + cli.stdout + cli.stderr)
        m = re.search(r"#bytes.*\n\s*(\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)", cli.stdout)
        if cli.returncode or not m:
            self.fail(name + ": no result (see raw/%s.txt)" % name)
            return
        bw = float(m.group(4)) * 1048576
        ddir = "write" if tool == "ib_write_bw" else "read"
        self.anchors.append({
            "jobname": name, "tool": tool, "bs": size, "iodepth": depth,
            "cmdline": " ".join(args),
            ddir: {"io_bytes": int(m.group(2)) * size, "bw_bytes": int(bw),
                   "bw": int(bw / 1024), "iops": bw / size},
        })

    # ---- servers
    def start_rdaxd(self, share):
        os.makedirs(share, exist_ok=True)
        passdb = os.path.join(self.out, "passdb")
        subprocess.run([self.build + "/rdax", "passwd", "--passdb", passdb, USER],
                       input=PASSWORD + "\n", text=True, check=True, capture_output=True)
        self.pwfile = os.path.join(self.out, "pw")
        with open(self.pwfile, "w") as f:
            f.write(PASSWORD + "\n")
        os.chmod(self.pwfile, 0o600)
        # the bench user acts as root, as ksmbd's force user = root does
        umap = os.path.join(self.out, "map")
        with open(umap, "w") as f:
            f.write("root = %s\n" % USER)
        log = open(os.path.join(self.raw, "rdaxd.log"), "w")
        self.rdaxd = subprocess.Popen(
            [self.build + "/rdaxd", "--share", "bench=" + share, "--passdb", passdb,
             "--username-map", umap,
             "--listen", "rdma://%s:445" % self.addr], stdout=log, stderr=subprocess.STDOUT)
        for _ in range(200):
            with open(log.name) as f:
                if "ready" in f.read():
                    return True
            if self.rdaxd.poll() is not None:
                break
            time.sleep(0.1)
        self.fail("rdaxd did not start (raw/rdaxd.log)")
        return False

    def stop_rdaxd(self):
        self.rdaxd.terminate()
        if self.rdaxd.wait(timeout=60):
            self.fail("rdaxd exited with %d" % self.rdaxd.returncode)

    def server_cpu_ticks(self, server):
        """utime+stime of the server: rdaxd's process, ksmbd's kernel threads."""
        total = 0
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open("/proc/%s/stat" % pid) as f:
                    st = f.read()
            except OSError:
                continue
            comm = st[st.index("(") + 1:st.rindex(")")]
            if (server == "rdaxd" and comm == "rdaxd") or \
               (server == "ksmbd" and comm.startswith("ksmbd")):
                fields = st[st.rindex(")") + 2:].split()
                total += int(fields[11]) + int(fields[12])
        return total

    # ---- one fio job
    def fio(self, client, server, wl, target):
        name, rw, bs, depth, ddir = wl
        job = "%s-%s/%s" % (client, server, name)
        raw = os.path.join(self.raw, "%s-%s-%s.json" % (client, server, name))
        args = ["fio", "--name=" + name, "--rw=" + rw, "--bs=%d" % bs,
                "--iodepth=%d" % depth, "--size=" + SIZE, "--output-format=json",
                "--output=" + raw, "--ramp_time=1", "--runtime=%d" % RUNTIME,
                "--time_based=1", "--thread"]
        if name.startswith("seqwrite"):
            # lay the file out with this job; time_based wraps around it
            args = [a for a in args if not a.startswith("--ramp_time")]
        if client == "rdax":
            args += ["--ioengine=external:" + self.build + "/fio-rdax.so",
                     "--hostname=" + self.addr, "--share=" + target, "--transport=rdma",
                     "--user=" + USER, "--password_file=" + self.pwfile,
                     "--filename=fio-%s.bin" % client]
        else:
            args += ["--ioengine=libaio", "--direct=1",
                     "--filename=%s/fio-%s.bin" % (target, client)]
        say("%s: fio %s bs=%d QD%d" % (job, rw, bs, depth))
        c0, s0, t0 = cpu_busy_ticks(), self.server_cpu_ticks(server), time.monotonic()
        r = run(args)
        c1, s1, t1 = cpu_busy_ticks(), self.server_cpu_ticks(server), time.monotonic()
        if r.returncode or not os.path.exists(raw):
            self.fail("%s: fio exit %d: %s" % (job, r.returncode, (r.stdout + r.stderr)[-400:]))
            return
        with open(raw) as f:
            text = f.read()
        # fio may print notes before the JSON object
        j = json.loads(text[text.index("{"):])
        fj = j["jobs"][0]
        if fj.get("error"):
            self.fail("%s: fio job error %d" % (job, fj["error"]))
        d = fj[ddir]
        hz = os.sysconf("SC_CLK_TCK")
        moved = max(d["io_bytes"], 1)
        self.jobs.append({
            "jobname": job, "client": client, "server": server, "workload": name,
            "rw": rw, "bs": bs, "iodepth": depth, "error": fj.get("error", 0),
            ddir: {k: d[k] for k in ("io_bytes", "bw_bytes", "bw", "iops", "runtime",
                                     "lat_ns", "clat_ns") if k in d},
            "usr_cpu": fj.get("usr_cpu"), "sys_cpu": fj.get("sys_cpu"),
            "guest_cpu_ms": int((c1 - c0) * 1000 / hz),
            "guest_cpu_ms_per_gib": round((c1 - c0) * 1000 / hz / (moved / (1 << 30)), 1),
            "server_cpu_ms": int((s1 - s0) * 1000 / hz),
            "wall_ms": int((t1 - t0) * 1000),
        })

    def pair(self, client, server, target):
        for wl in WORKLOADS:
            self.fio(client, server, wl, target)

    def cifs_mount(self, mnt):
        os.makedirs(mnt, exist_ok=True)
        r = run(["tests/vm/peer", "cifs-mount", "//%s/bench" % self.addr, mnt,
                 USER, PASSWORD, "cache=none"])
        tr = run(["tests/vm/peer", "transport", mnt]).stdout.strip() if not r.returncode else ""
        if r.returncode or tr != "rdma":
            self.fail("cifs mount -o rdma: %s transport=%s" % ((r.stdout + r.stderr)[-300:], tr))
            run(["tests/vm/peer", "cifs-umount", mnt])
            return False
        return True

    def main(self):
        mnt = "/mnt/rdax-bench-cifs"
        for depth in (1, 4, 16):
            size = 4096 if depth != 4 else 1 << 20
            self.perftest("ib_write_bw", size, depth)
            self.perftest("ib_read_bw", size, depth)

        share = os.path.join(self.fsdax, "bench-rdaxd")
        shutil.rmtree(share, ignore_errors=True)
        if self.start_rdaxd(share):
            self.pair("rdax", "rdaxd", "bench")
            if self.cifs_mount(mnt):
                self.pair("cifs", "rdaxd", mnt)
                run(["tests/vm/peer", "cifs-umount", mnt])
            self.stop_rdaxd()
        shutil.rmtree(share, ignore_errors=True)

        share = os.path.join(self.fsdax, "bench-ksmbd")
        shutil.rmtree(share, ignore_errors=True)
        r = run(["tests/vm/peer", "ksmbd-start", share, "bench", USER, PASSWORD])
        if r.returncode:
            self.fail("ksmbd-start: " + (r.stdout + r.stderr)[-300:])
        else:
            self.pair("rdax", "ksmbd", "bench")
            if self.cifs_mount(mnt):
                self.pair("cifs", "ksmbd", mnt)
                run(["tests/vm/peer", "cifs-umount", mnt])
        run(["tests/vm/peer", "ksmbd-stop"])
        shutil.rmtree(share, ignore_errors=True)

        facts = {
            "guest_kernel": os.uname().release, "guest_cpus": os.cpu_count(),
            "rdma_dev": self.dev, "fio": run(["fio", "--version"]).stdout.strip(),
            "fio_size": SIZE, "fio_runtime_s": RUNTIME, "fio_ramp_time_s": 1,
            "perftest_duration_s": PT_DURATION, "share": self.fsdax + " (ext4 -o dax)",
        }
        with open(os.path.join(self.out, "guest.json"), "w") as f:
            json.dump({"guest": facts, "jobs": self.jobs, "anchors": self.anchors,
                       "errors": self.errors}, f, indent=1)
        say("%d jobs, %d anchors, %d errors" % (len(self.jobs), len(self.anchors),
                                                 len(self.errors)))
        return 1 if self.errors else 0


def anchor_for(anchors, wl):
    name, rw, bs, depth, ddir = wl
    tool = "ib_write_bw" if ddir == "read" else "ib_read_bw"
    for a in anchors:
        if a["tool"] == tool and a["bs"] == bs and a["iodepth"] == depth:
            return a
    return None


def report(out, dest):
    with open(os.path.join(out, "guest.json")) as f:
        g = json.load(f)
    jobs = {j["jobname"]: j for j in g["jobs"]}
    ratios = []
    lines = []
    hdr = "%-18s %-11s" % ("workload", "metric") + "".join(
        "%15s" % ("%s-%s" % p) for p in PAIRS) + "%15s" % "wire"
    lines.append(hdr)
    for wl in WORKLOADS:
        name, rw, bs, depth, ddir = wl
        metric = "MiB/s" if bs >= (1 << 20) else "IOPS"
        a = anchor_for(g["anchors"], wl)
        wire = None
        if a:
            ad = a["write"] if "write" in a else a["read"]
            wire = ad["bw_bytes"] / 1048576 if metric == "MiB/s" else ad["iops"]
        vals = {}
        for c, s in PAIRS:
            j = jobs.get("%s-%s/%s" % (c, s, name))
            if j:
                d = j[ddir]
                vals["%s-%s" % (c, s)] = d["bw_bytes"] / 1048576 if metric == "MiB/s" else d["iops"]
        row = "%-18s %-11s" % (name, metric)
        row += "".join("%15s" % ("%.1f" % vals[k] if k in vals else "-")
                       for k in ("%s-%s" % p for p in PAIRS))
        row += "%15s" % ("%.1f" % wire if wire else "-")
        lines.append(row)
        base = vals.get(BASE)
        row = "%-18s %-11s" % ("", "x " + BASE)
        for c, s in PAIRS:
            k = "%s-%s" % (c, s)
            row += "%15s" % ("%.2f" % (vals[k] / base) if k in vals and base else "-")
        lines.append(row)
        row = "%-18s %-11s" % ("", "x wire")
        for c, s in PAIRS:
            k = "%s-%s" % (c, s)
            row += "%15s" % ("%.2f" % (vals[k] / wire) if k in vals and wire else "-")
        lines.append(row)
        row = "%-18s %-11s" % ("", "cpu ms/GiB")
        for c, s in PAIRS:
            j = jobs.get("%s-%s/%s" % (c, s, name))
            row += "%15s" % (j["guest_cpu_ms_per_gib"] if j else "-")
        lines.append(row)
        for c, s in PAIRS:
            k = "%s-%s" % (c, s)
            if k not in vals:
                continue
            ratios.append({
                "workload": name, "pair": k, "metric": "bw_bytes" if metric == "MiB/s" else "iops",
                "value": vals[k],
                "vs_" + BASE.replace("-", "_"): round(vals[k] / base, 3) if base else None,
                "vs_wire": round(vals[k] / wire, 3) if wire else None,
                "wire_anchor": a["jobname"] if a else None,
            })
    doc = {
        "rdax version": os.environ.get("RDAX_DESCRIBE", ""),
        "bench": "smbdirect",
        "timestamp": int(time.time()),
        "note": "Emulated testbed (Soft-RoCE rxe on a veth, qemu TCG, NVDIMM backed by "
                "a host file): compare pairs measured in the same boot, not absolute speeds.",
        "guest": g["guest"], "testbed": json.loads(os.environ.get("RDAX_TESTBED", "{}")),
        "baseline_pair": BASE, "errors": g["errors"],
        "jobs": g["jobs"], "anchors": g["anchors"], "ratios": ratios,
    }
    with open(dest + ".tmp", "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(dest + ".tmp", dest)
    print("\n".join(lines))
    expect = len(PAIRS) * len(WORKLOADS)
    if len(g["jobs"]) != expect:
        say("expected %d jobs, got %d" % (expect, len(g["jobs"])))
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
