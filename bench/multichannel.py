#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""SMB3 multichannel in librdax: the same fio job on 1 and 2 channels (bench/multichannel).

  bench/multichannel.py host --netns NS --addr A --share S --user U --pwfile F OUT
      on the host: rdaxd listens on two veth links (bench/multichannel set
      them up); fio (rdax engine) runs in the client's namespace NS
  bench/multichannel.py guest OUTDIR
      inside `tests/vm/run`: starts rdaxd on the testbed's two links
      (10.77.0.1 on rxe0, 10.77.1.1 on rxe1; TCP and SMB-Direct) and runs
      the jobs over SMB-Direct and over TCP
  bench/multichannel.py report HOST.json GUEST.json JSON MD
      the JSON (fio's field names), the ratio table, and one JSON per
      setting for bench/plot.py

Workloads: 1 MiB sequential write and read at QD16, time based after a
ramp. Settings: where (host, vm) x transport (tcp, rdma) x channels (1, 2);
transport tcp with 2 channels adds TCP channels only (rdma_channels=0).
Per job: fio's read/write object (bw_bytes, iops, lat_ns, clat_ns
percentiles) and "channels", the engine's per-channel report at the end
of the job: bytes sent and received (messages) and moved by RDMA, and each
channel's share of the file data ("data_share").
"""
import json
import os
import re
import signal
import subprocess
import sys
import time

ENGINE = "build/fio-rdax.so"
WORKLOADS = [
    # name, fio rw, bs, iodepth, direction in fio's JSON
    ("seqwrite-1m-qd16", "write", 1 << 20, 16, "write"),
    ("seqread-1m-qd16", "read", 1 << 20, 16, "read"),
]
PERCENTILES = "50:99:99.9"
CHAN_RE = re.compile(r"fio-rdax: channel (\d+): (\w+) (\S+), (\w+), (\d+) bytes sent, "
                     r"(\d+) received, (\d+) by RDMA, (\d+) requests \((\d+) resent\)")


def say(msg):
    print("multichannel: " + msg, file=sys.stderr, flush=True)


def env_num(name, default):
    v = os.environ.get(name)
    return type(default)(v) if v else default


def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def channels_of(text, wl_dir):
    """The engine's report: one dict per channel, with its share of the data."""
    chans = []
    for m in CHAN_RE.finditer(text):
        c = {"index": int(m.group(1)), "transport": m.group(2), "peer": m.group(3),
             "alive": m.group(4) == "alive", "bytes_sent": int(m.group(5)),
             "bytes_received": int(m.group(6)), "rdma_bytes": int(m.group(7)),
             "requests": int(m.group(8)), "replays": int(m.group(9))}
        msg = c["bytes_sent"] if wl_dir == "write" else c["bytes_received"]
        c["data_bytes"] = c["rdma_bytes"] + msg
        chans.append(c)
    total = sum(c["data_bytes"] for c in chans) or 1
    for c in chans:
        c["data_share"] = round(c["data_bytes"] / total, 4)
    return chans


def run_fio(prefix, opts, raw, timeout):
    """fio with the rdax engine; (fio's JSON job, the engine's report text).

    The engine's lines (log_info) and fio's JSON share standard output
    (with --output the job process's lines are lost): the JSON is the
    block from the line "{" to the line "}".
    """
    args = prefix + ["fio", "--output-format=json",
                     "--ioengine=external:" + os.path.abspath(ENGINE)] + opts
    r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=timeout, text=True)
    with open(raw + ".log", "w") as log:
        log.write(" ".join(args) + "\n" + r.stdout)
    if r.returncode:
        raise RuntimeError("fio failed (%d): %s" % (r.returncode, r.stdout[-400:]))
    lines = r.stdout.split("\n")
    start = lines.index("{")
    end = len(lines) - 1 - lines[::-1].index("}")
    doc = json.loads("\n".join(lines[start:end + 1]))
    text = "\n".join(lines[:start] + lines[end + 1:])
    return doc["jobs"][0], text


def settings_run(where, settings, conn_opts, work, size, runtime, ramp, runs, prefix):
    """Every workload x setting, interleaved run by run; the jobs list."""
    raw = os.path.join(work, "raw")
    os.makedirs(raw, exist_ok=True)
    results = {}
    for wl, rw, bs, qd, dd in WORKLOADS:
        for run in range(runs):
            for name, transport, nch in settings:
                opts = conn_opts + [
                    "--name=%s-%s-%dch" % (wl, transport, nch), "--transport=" + transport,
                    "--channels=%d" % nch, "--filename=mc-%s-%d.bin" % (transport, nch),
                    "--rw=" + rw, "--bs=%d" % bs, "--iodepth=%d" % qd, "--size=" + size,
                    "--time_based=1", "--runtime=%s" % runtime, "--ramp_time=%s" % ramp,
                    "--percentile_list=" + PERCENTILES]
                if transport == "tcp":
                    opts.append("--rdma_channels=0")
                tag = "%s-%s-%s-%dch-r%d" % (where, wl, transport, nch, run)
                say("%s ..." % tag)
                job, text = run_fio(prefix, opts, os.path.join(raw, tag),
                                    timeout=120 + 4 * (runtime + ramp))
                d = job[dd]
                chans = channels_of(text, dd)
                rec = {"bw_bytes": d["bw_bytes"], "bw": d["bw"], "iops": d["iops"],
                       "io_bytes": d["io_bytes"], "runtime": d["runtime"],
                       "lat_ns": d["lat_ns"], "clat_ns": d["clat_ns"],
                       "usr_cpu": job["usr_cpu"], "sys_cpu": job["sys_cpu"],
                       "channels": chans}
                say("%s: %.1f MiB/s, channels %s" % (
                    tag, d["bw_bytes"] / 1048576,
                    " ".join("%s:%.2f" % (c["transport"], c["data_share"]) for c in chans)))
                results.setdefault((wl, name), []).append(rec)
    jobs = []
    for wl, rw, bs, qd, dd in WORKLOADS:
        for name, transport, nch in settings:
            recs = results[(wl, name)]
            best = sorted(recs, key=lambda r: r["bw_bytes"])[len(recs) // 2]
            d = {k: best[k] for k in ("bw_bytes", "bw", "iops", "io_bytes", "runtime",
                                      "lat_ns", "clat_ns")}
            d["bw_bytes"] = median([r["bw_bytes"] for r in recs])
            d["iops"] = median([r["iops"] for r in recs])
            jobs.append({
                "jobname": "%s/%s/%s" % (where, name, wl), "workload": wl,
                "setting": "%s %s" % (where, transport), "where": where,
                "transport": transport, "channels_wanted": nch,
                "label": "%d channel%s" % (nch, "" if nch == 1 else "s"),
                "server": "rdaxd", "client": "rdax", "rw": rw, "bs": bs, "iodepth": qd,
                dd: d, "usr_cpu": best["usr_cpu"], "sys_cpu": best["sys_cpu"],
                "channels": best["channels"], "runs": len(recs),
                "spread": {"bw_bytes": {"min": min(r["bw_bytes"] for r in recs),
                                        "max": max(r["bw_bytes"] for r in recs)}}})
    return jobs


# ---- host

def host(argv):
    import argparse
    p = argparse.ArgumentParser()
    p.add_argument("--netns", required=True)
    p.add_argument("--addr", required=True)
    p.add_argument("--share", required=True)
    p.add_argument("--user", required=True)
    p.add_argument("--pwfile", required=True)
    p.add_argument("out")
    a = p.parse_args(argv)
    work = os.path.splitext(a.out)[0] + ".d"
    conn = ["--hostname=" + a.addr, "--share=" + a.share, "--user=" + a.user,
            "--password_file=" + a.pwfile]
    settings = [("tcp-1ch", "tcp", 1), ("tcp-2ch", "tcp", 2)]
    jobs = settings_run("host", settings, conn, work, env_num("RDAX_BENCH_FIO_SIZE", "256m"),
                        env_num("RDAX_BENCH_FIO_RUNTIME", 4), env_num("RDAX_BENCH_FIO_RAMP", 1),
                        env_num("RDAX_BENCH_RUNS", 3), ["ip", "netns", "exec", a.netns])
    with open(a.out, "w") as f:
        json.dump({"jobs": jobs, "link": "two veth pairs between two network namespaces"},
                  f, indent=1)


# ---- guest

def wait_log(path, pat, secs=30):
    end = time.time() + secs
    while time.time() < end:
        try:
            with open(path) as f:
                if re.search(pat, f.read()):
                    return True
        except OSError:
            pass
        time.sleep(0.1)
    return False


def guest(argv):
    out = argv[0]
    a1 = os.environ.get("RDAX_VM_ADDR", "10.77.0.1")
    a2 = os.environ.get("RDAX_VM_ADDR2", "10.77.1.1")
    os.makedirs(out, exist_ok=True)
    w = "/tmp/rdax-mcbench"
    subprocess.run(["rm", "-rf", w])
    os.makedirs(w + "/share")
    os.chmod(w, 0o711)
    os.chmod(w + "/share", 0o777)
    subprocess.run(["build/rdax", "passwd", "--passdb", w + "/passdb", "bench"],
                   input="mc-Bench-1\n", text=True, check=True, capture_output=True)
    with open(w + "/pw", "w") as f:
        f.write("mc-Bench-1\n")
    os.chmod(w + "/pw", 0o600)
    with open(w + "/smb.conf", "w") as f:
        f.write("[global]\n\tpassdb file = %s/passdb\n" % w)
        f.write("\tlisten = tcp://%s:445 tcp://%s:445 rdma://%s:445 rdma://%s:445\n"
                % (a1, a2, a1, a2))
        f.write("\tserver multi channel support = yes\n")
        f.write("\tusername map = %s/map\n" % w)
        f.write("[mc]\n\tpath = %s/share\n\tstore = posix\n\tread only = no\n" % w)
    with open(w + "/map", "w") as f:
        f.write("root = bench\n")
    log = open(out + "/rdaxd.log", "w")
    srv = subprocess.Popen(["build/rdaxd", "--config", w + "/smb.conf"], stdout=log,
                           stderr=subprocess.STDOUT)
    try:
        if not wait_log(out + "/rdaxd.log", "ready"):
            raise RuntimeError("rdaxd did not start")
        conn = ["--hostname=" + a1, "--share=mc", "--user=bench", "--password_file=" + w + "/pw"]
        settings = [("rdma-1ch", "rdma", 1), ("rdma-2ch", "rdma", 2),
                    ("tcp-1ch", "tcp", 1), ("tcp-2ch", "tcp", 2)]
        jobs = settings_run("vm", settings, conn, out, env_num("RDAX_BENCH_VM_SIZE", "64m"),
                            env_num("RDAX_BENCH_VM_RUNTIME", 5), env_num("RDAX_BENCH_FIO_RAMP", 1),
                            env_num("RDAX_BENCH_VM_RUNS", 1), [])
    finally:
        srv.send_signal(signal.SIGTERM)
        srv.wait(timeout=30)
    with open(out + "/guest.json", "w") as f:
        json.dump({"jobs": jobs, "link": "rxe0 on veth0 and rxe1 on veth2 (qemu TCG, loopback)",
                   "kernel": os.uname().release}, f, indent=1)


# ---- report

def facts():
    cpu = "unknown"
    with open("/proc/cpuinfo") as f:
        m = re.search(r"^model name\s*:\s*(.*)$", f.read(), re.M)
        if m:
            cpu = m.group(1)
    try:
        with open("VERSION") as f:
            ver = f.read().strip()
    except OSError:
        ver = "unknown"
    git = subprocess.run(["git", "describe", "--always", "--dirty"], capture_output=True,
                         text=True).stdout.strip()
    return {"cpu": cpu, "cpus": os.cpu_count(), "kernel": os.uname().release}, \
        "%s (%s)" % (ver, git)


def report(argv):
    hj, gj, out, md = argv
    jobs, notes = [], []
    for path in (hj, gj):
        if os.path.exists(path):
            with open(path) as f:
                jobs += json.load(f)["jobs"]
        else:
            notes.append("%s: missing (that part did not run)" % path)
    host, ver = facts()
    doc = {"bench": "multichannel", "host": host, "rdax version": ver,
           "what": "the same fio job (rdax engine) on 1 and 2 channels",
           "date": time.strftime("%Y-%m-%d %H:%M:%S"), "notes": notes, "jobs": jobs,
           "ratios": []}
    lines = ["| setting | workload | 1 channel MiB/s | 2 channels MiB/s | 2ch/1ch | "
             "data per channel (2ch) |", "|---|---|---|---|---|---|"]
    for s in sorted({j["setting"] for j in jobs}):
        for wl, _, _, _, dd in WORKLOADS:
            one = [j for j in jobs if j["setting"] == s and j["workload"] == wl and
                   j["channels_wanted"] == 1]
            two = [j for j in jobs if j["setting"] == s and j["workload"] == wl and
                   j["channels_wanted"] == 2]
            if not one or not two:
                continue
            b1, b2 = one[0][dd]["bw_bytes"], two[0][dd]["bw_bytes"]
            ratio = b2 / b1 if b1 else None
            split = ", ".join("%s %s %.0f%%" % (c["transport"],
                                                 c["peer"].split("://")[-1].split(":")[0],
                                                 100 * c["data_share"])
                              for c in two[0]["channels"])
            doc["ratios"].append({"setting": s, "workload": wl, "bw_bytes_1ch": b1,
                                  "bw_bytes_2ch": b2, "ratio_2ch_1ch": ratio,
                                  "channels_2ch": two[0]["channels"]})
            lines.append("| %s | %s | %.1f | %.1f | %s | %s |" % (
                s, wl, b1 / 1048576, b2 / 1048576,
                "%.2f" % ratio if ratio else "-", split))
    with open(out, "w") as f:
        json.dump(doc, f, indent=1)
    # one JSON per setting for bench/plot.py (host GB/s and TCG MB/s apart)
    base = os.path.splitext(out)[0]
    for s in sorted({j["setting"] for j in jobs}):
        with open("%s-%s.json" % (base, s.replace(" ", "-")), "w") as f:
            json.dump({"bench": "multichannel " + s, "host": host, "rdax version": ver,
                       "jobs": [j for j in jobs if j["setting"] == s]}, f, indent=1)
    text = "\n".join(lines) + "\n"
    with open(md, "w") as f:
        f.write(text)
    print(text)


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("host", "guest", "report"):
        print(__doc__, file=sys.stderr)
        return 2
    {"host": host, "guest": guest, "report": report}[sys.argv[1]](sys.argv[2:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
