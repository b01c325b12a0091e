#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Markdown for the README's Performance section, from the bench JSON.

  bench/perf-md.py [--readme README.md] [build/bench/*.json ...]

Prints the section; with --readme, replaces the text between
<!-- perf:begin --> and <!-- perf:end --> in that file instead. Benches it
knows: smbdirect (bench/smbdirect) and tcp (bench/tcp). Missing files are
skipped.
"""
import json
import os
import sys

BEGIN, END = "<!-- perf:begin -->", "<!-- perf:end -->"


def smbdirect(doc, path):
    out = []
    g, tb = doc.get("guest", {}), doc.get("testbed", {})
    out.append("### SMB-Direct file I/O (`bench/smbdirect`)\n")
    out.append("Soft-RoCE under qemu emulation measures CPU efficiency, not NIC speed: "
               "compare the pairs and the ratios from one boot, not the absolute numbers, "
               "and not with hardware.\n")
    out.append("Measured %s on `%s`: host %s, qemu %s (%s), guest kernel %s with %s "
               "Soft-RoCE (rxe), %s CPUs; files on %s. %s (%s)\n" % (
                   _date(doc), doc.get("rdax version", "?"), tb.get("host_cpu", "?"),
                   tb.get("qemu", "?").replace("QEMU emulator version ", ""),
                   tb.get("accel", "?"), g.get("guest_kernel", "?"), g.get("rdma_dev", "?"),
                   g.get("guest_cpus", "?"), g.get("share", "?"),
                   "Each job runs %ss after %ss of ramp, fio %s." % (
                       g.get("fio_runtime_s", "?"), g.get("fio_ramp_time_s", "?"),
                       g.get("fio", "?")), os.path.relpath(path)))
    pairs = []
    for r in doc["ratios"]:
        if r["pair"] not in pairs:
            pairs.append(r["pair"])
    out.append("| workload | " + " | ".join(pairs) + " | wire (perftest) |")
    out.append("|---|" + "---|" * (len(pairs) + 1))
    wl = []
    for r in doc["ratios"]:
        if r["workload"] not in wl:
            wl.append(r["workload"])
    base = doc.get("baseline_pair", "cifs-ksmbd")
    key = "vs_" + base.replace("-", "_")
    anchors = {a["jobname"]: a for a in doc.get("anchors", [])}
    for w in wl:
        rows = {r["pair"]: r for r in doc["ratios"] if r["workload"] == w}
        any_r = next(iter(rows.values()))
        unit = "MiB/s" if any_r["metric"] == "bw_bytes" else "IOPS"
        cells = []
        for p in pairs:
            r = rows.get(p)
            if not r:
                cells.append("-")
                continue
            v = r["value"]
            cells.append("%.1f %s (%.2f×)" % (v, unit, r[key]) if r.get(key) is not None
                         else "%.1f %s" % (v, unit))
        a = anchors.get(any_r.get("wire_anchor"))
        wire = "-"
        if a:
            d = a.get("write") or a.get("read")
            wire = "%.1f %s (`%s`)" % (d["bw_bytes"] / 1048576 if unit == "MiB/s" else d["iops"],
                                      unit, a["jobname"])
        out.append("| %s | %s | %s |" % (w, " | ".join(cells), wire))
    out.append("")
    out.append("Ratios in parentheses are against %s, the kernel pair, in the same boot." % base)
    out.append("")
    return out


def tcp(doc, path):
    h, p = doc.get("host", {}), doc.get("params", {})
    base = doc.get("baseline", "smbd")
    servers = doc.get("servers", [])
    subj = next((s for s in servers if s != base), "rdaxd")
    out = ["### TCP on the host (`bench/tcp`)\n"]
    out.append("Measured %s on `%s`: %s, %s CPUs (%s cores), %d GiB, kernel %s; "
               "Samba %s, %s; shares on %s. One fio job with the rdax engine "
               "(`transport=tcp`) against each server on loopback, %ss after %ss of ramp, "
               "median of %s runs interleaved %s. Client and server share the machine. (%s)\n" % (
                   _date(doc), doc.get("rdax version", "?"), h.get("cpu", "?"),
                   h.get("cpus", "?"), h.get("cores", "?"), round(h.get("mem_kb", 0) / 1048576),
                   h.get("kernel", "?"), h.get("smbd", "?").replace("Samba ", ""),
                   h.get("fio", "?"), (h.get("share_fs") or "?").split(" ")[0],
                   _g(p.get("runtime_s")), _g(p.get("ramp_time_s")), p.get("runs", "?"),
                   "/".join(servers * 2), os.path.relpath(path)))
    jobs = {(j["server"], j["workload"]): j for j in doc.get("jobs", [])}
    ratio = {(r["workload"], r["metric"]): r.get("ratio") for r in doc.get("ratios", [])}
    wls = []
    for j in doc.get("jobs", []):
        if j["workload"] not in wls:
            wls.append(j["workload"])
    cols = [("throughput", None), ("clat p50", "clat_p50_ns"), ("clat p99", "clat_p99_ns"),
            ("clat p99.9", "clat_p99.9_ns"), ("server CPU/I/O", "server_cpu_us_per_io"),
            ("client CPU/I/O", "client_cpu_us_per_io")]
    out.append("| workload | " + " | ".join("%s %s | %s | %s/%s" % (c, subj, base, subj, base)
                                            for c, _ in cols[:1]) +
               " | " + " | ".join("%s %s/%s" % (c, subj, base) for c, _ in cols[1:]) + " |")
    out.append("|---|" + "---:|" * (3 + len(cols) - 1))
    for w in wls:
        a, b = jobs.get((subj, w)), jobs.get((base, w))
        any_j = a or b
        bulk = any_j.get("bs", 0) >= 1 << 20
        key = "bw_bytes" if bulk else "iops"

        def thr(j):
            if not j:
                return "-"
            d = j.get("read") if "read" in j else j.get("write")
            return ("%.0f MiB/s" % (d["bw_bytes"] / 1048576)) if bulk else "%.0f IOPS" % d["iops"]
        cells = [thr(a), thr(b), _r(ratio.get((w, key)))]
        for _, k in cols[1:]:
            cells.append(_r(ratio.get((w, k))))
        out.append("| %s | %s |" % (w, " | ".join(cells)))
    out.append("")
    out.append("Ratios are %s/%s: above 1 is better for throughput, below 1 is better for "
               "latency (fio clat percentiles) and for CPU time per I/O (server: utime+stime "
               "of the server's processes; client: fio's usr+sys). Absolute latencies, CPU "
               "times and the spread of the runs: `build/bench/tcp.md`." % (subj, base))
    if doc.get("notes"):
        out.append("")
        out.append("Notes: " + "; ".join(doc["notes"]) + ".")
    out.append("")
    return out


def _g(v):
    return "?" if v is None else "%g" % v


def _r(v):
    return "-" if v is None else "%.2f" % v


def _date(doc):
    import time
    ts = doc.get("timestamp")
    return time.strftime("%Y-%m-%d", time.gmtime(ts)) if ts else "?"


KNOWN = {"smbdirect": smbdirect, "tcp": tcp}


def main(argv):
    readme = None
    if len(argv) > 1 and argv[1] == "--readme":
        readme = argv[2]
        argv = argv[2:]
    files = argv[1:] or ["build/bench/smbdirect.json", "build/bench/tcp.json"]
    out = [BEGIN, "",
           "Implementations measured side by side in one session; compare the ratios, "
           "not absolute numbers across machines. Regenerate with `make readme-perf` "
           "after running the benches.", ""]
    n = 0
    for f in files:
        if not os.path.exists(f):
            continue
        with open(f) as fh:
            doc = json.load(fh)
        fn = KNOWN.get(doc.get("bench"))
        if fn:
            out += fn(doc, f)
            n += 1
    if not n:
        out.append("_No bench results yet: run `bench/smbdirect` or `bench/tcp`._\n")
    out.append(END)
    text = "\n".join(out) + "\n"
    if not readme:
        sys.stdout.write(text)
        return 0
    with open(readme) as fh:
        cur = fh.read()
    if BEGIN not in cur or END not in cur:
        print("perf-md: %s has no %s ... %s markers" % (readme, BEGIN, END), file=sys.stderr)
        return 1
    new = cur[:cur.index(BEGIN)] + text.rstrip("\n") + cur[cur.index(END) + len(END):]
    with open(readme, "w") as fh:
        fh.write(new)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
