#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Bar charts (gnuplot, PNG) from a bench's JSON.

  bench/plot.py BENCH.json [--prefix PREFIX]

Reads the jobs[] of a bench JSON in fio's vocabulary (bench/tcp,
bench/smbdirect, ...): each job has "workload", "server" (and "client"),
"bs", and a "read" or "write" object with bw_bytes, iops and
clat_ns.percentile. Workloads are the groups on the x axis, one bar per
client/server pair (the server alone when every job has the same client;
a job's "label", when every job has one, names its series instead).
Writes, next to the JSON unless --prefix says otherwise:

  PREFIX-throughput.png  MiB/s of the bulk workloads (bs >= 64 KiB) and
                         IOPS of the small-block ones, in two panels; with
                         the wire limit of bench/smbdirect when present
  PREFIX-p99.png         clat p99 in microseconds (log scale)
  PREFIX-cpu.png         server and client CPU time per I/O, when the jobs
                         carry server_cpu_us_per_io / client_cpu_us_per_io

A job's "spread" ({"bw_bytes": {"min", "max"}, ...}) becomes error bars.

Optional top-level "plot" object (bench/daxcopy, bench/dax); without it
the charts are as described above:

  "bw_unit"      "MiB/s" (default), "GiB/s", "MB/s" or "GB/s" for the
                 throughput panel
  "bulk_min_bs"  smallest bs in the throughput panel (default 65536; 0
                 puts every job there and leaves no IOPS panel)
  "per_core"     true: a second throughput panel of each job's
                 "bw_per_core_bytes" (bytes per CPU second), same unit

The gnuplot script and data stay in PREFIX.plot/ (rerun: gnuplot
PREFIX.plot/plot.gp). PREFIX defaults to the JSON's path without .json.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#7f7f7f",
          "#e377c2", "#17becf", "#bcbd22"]
BULK = 64 * 1024
UNITS = {"MiB/s": 1048576, "GiB/s": 1073741824, "MB/s": 1e6, "GB/s": 1e9}


def ddir(job):
    for d in ("write", "read"):
        if d in job and "rw" in job and d in job["rw"]:
            return job[d]
    return job.get("read") or job.get("write") or {}


def label_of(jobs):
    if jobs and all(j.get("label") for j in jobs):
        return lambda j: j["label"]     # bench/rdma-to-dax: its own series names
    clients = {j.get("client") for j in jobs}
    if len(clients) <= 1:
        return lambda j: j.get("server") or j["jobname"].split("/")[0]
    return lambda j: "%s-%s" % (j.get("client"), j.get("server"))


def pct(d, key):
    p = d.get("clat_ns", {}).get("percentile", {})
    return p.get(key)


class Chart:
    """One panel: workloads x series, values with optional [lo, hi]."""

    def __init__(self, title, ylabel, log=False):
        self.title, self.ylabel, self.log = title, ylabel, log
        self.rows = {}      # workload -> series -> (v, lo, hi)
        self.workloads, self.series = [], []

    def add(self, wl, ser, v, lo=None, hi=None):
        if v is None:
            return
        if wl not in self.workloads:
            self.workloads.append(wl)
        if ser not in self.series:
            self.series.append(ser)
        self.rows.setdefault(wl, {})[ser] = (v, v if lo is None else lo, v if hi is None else hi)

    def empty(self):
        return not self.workloads

    def data(self, path):
        with open(path, "w") as f:
            f.write("# workload " + " ".join("%s %s_lo %s_hi" % (s, s, s) for s in self.series)
                    + "\n")
            for w in self.workloads:
                cells = []
                for s in self.series:
                    cells += ["%.6g" % x for x in self.rows[w][s]] if s in self.rows[w] \
                        else ["NaN"] * 3
                f.write('"%s" %s\n' % (w, " ".join(cells)))

    def script(self, dat, colors):
        n = len(self.series)
        gap = 1
        lines = ["set title %s" % q(self.title),
                 "set ylabel %s" % q(self.ylabel),
                 "set style data histogram",
                 "set style histogram errorbars gap %d lw 1" % gap,
                 "set style fill solid 0.85 border -1",
                 "set boxwidth 0.9",
                 "set xtics rotate by -25 scale 0 nomirror",
                 "set grid ytics lc rgb '#dddddd'",
                 "set key outside bottom center horizontal",
                 "lbl(x) = x >= 1e6 ? sprintf('%.2fM', x / 1e6) : x >= 1e4 ? "
                 "sprintf('%.1fk', x / 1e3) : x >= 100 ? sprintf('%.0f', x) : x >= 10 ? sprintf('%.1f', x) : "
                 "sprintf('%.2f', x)",
                 "set bars 0.5"]
        vals = [x for w in self.rows.values() for v in w.values() for x in v if x == x]
        if self.log:
            lo = min(x for x in vals if x > 0) if any(x > 0 for x in vals) else 1
            lines += ["set logscale y", "set yrange [%g:%g]" % (lo / 3, max(vals) * 4)]
        else:
            lines += ["unset logscale y", "set yrange [0:%g]" % (max(vals) * 1.25 if vals else 1)]
        plots = []
        for i, s in enumerate(self.series):
            c = 2 + 3 * i
            using = "%d:%d:%d%s" % (c, c + 1, c + 2, ":xtic(1)" if i == 0 else "")
            # noenhanced: a series like dax_pwritev keeps its underscore
            plots.append("%s using %s title %s noenhanced lc rgb '%s'" % (q(dat), using, q(s),
                                                                         colors[s]))
        for i, s in enumerate(self.series):
            c = 2 + 3 * i
            off = (i - (n - 1) / 2.0) / (n + gap)
            # value labels above the bars
            rot = "rotate by 90 left offset 0,0.4" if n > 2 else "center offset 0,0.7"
            plots.append("%s using ($0+%.4f):%d:(lbl($%d)) with labels %s font ',8' "
                         "notitle" % (q(dat), off, c + 2, c, rot))
        lines.append("plot " + ", \\\n     ".join(plots))
        return lines


def q(s):
    return '"%s"' % str(s).replace("\\", "\\\\").replace('"', '\\"')


def charts(doc):
    jobs = doc.get("jobs", [])
    name = doc.get("bench", "bench")
    lab = label_of(jobs)
    runs = {j.get("runs") for j in jobs if j.get("runs")}
    how = "median of %s runs, bars min-max" % "/".join(str(r) for r in sorted(runs)) \
        if runs and max(runs) > 1 and any(j.get("spread") for j in jobs) else "one run each"
    hints = doc.get("plot") or {}
    unit = hints.get("bw_unit", "MiB/s")
    div = UNITS.get(unit)
    if div is None:
        unit, div = "MiB/s", UNITS["MiB/s"]
    bulk_min = hints.get("bulk_min_bs", BULK)
    bulk = Chart("%s: throughput, %s (%s)" % (name, "bulk I/O" if bulk_min else "every size",
                                             how), unit)
    small = Chart("%s: small-block I/O (%s)" % (name, how), "IOPS")
    percore = Chart("%s: throughput per core, bytes / CPU seconds (%s)" % (name, how),
                    unit + " per core")
    p99 = Chart("%s: completion latency p99 (%s)" % (name, how), "clat p99 (µs, log)", log=True)
    scpu = Chart("%s: server CPU per I/O (%s)" % (name, how), "µs of CPU per I/O (log)", log=True)
    ccpu = Chart("%s: client CPU per I/O (%s)" % (name, how), "µs of CPU per I/O (log)", log=True)
    for j in jobs:
        d = ddir(j)
        if not d:
            continue
        wl, s = j.get("workload", j["jobname"]), lab(j)
        sp = j.get("spread", {})

        def rng(key, div):
            r = sp.get(key)
            return (r["min"] / div, r["max"] / div) if r else (None, None)
        if j.get("bs", 0) >= bulk_min:
            bulk.add(wl, s, d["bw_bytes"] / div, *rng("bw_bytes", div))
        else:
            small.add(wl, s, d["iops"], *rng("iops", 1))
        if hints.get("per_core") and j.get("bw_per_core_bytes") is not None:
            percore.add(wl, s, j["bw_per_core_bytes"] / div, *rng("bw_per_core_bytes", div))
        v = pct(d, "99.000000")
        if v is not None:
            p99.add(wl, s, v / 1000, *rng("clat_p99_ns", 1000))
        if j.get("server_cpu_us_per_io") is not None:
            scpu.add(wl, s, j["server_cpu_us_per_io"], *rng("server_cpu_us_per_io", 1))
        if j.get("client_cpu_us_per_io") is not None:
            ccpu.add(wl, s, j["client_cpu_us_per_io"], *rng("client_cpu_us_per_io", 1))
    # bench/smbdirect: the wire limit (perftest) next to the pairs
    anchors = {a["jobname"]: a for a in doc.get("anchors", [])}
    for r in doc.get("ratios", []):
        a = anchors.get(r.get("wire_anchor") or "")
        if not a:
            continue
        ad = a.get("write") or a.get("read")
        wl = r["workload"]
        if wl in bulk.workloads and "wire" not in bulk.rows.get(wl, {}):
            bulk.add(wl, "wire", ad["bw_bytes"] / div)
        elif wl in small.workloads and "wire" not in small.rows.get(wl, {}):
            small.add(wl, "wire", ad["iops"])
    return [("throughput", [c for c in (bulk, small, percore) if not c.empty()]),
            ("p99", [p99] if not p99.empty() else []),
            ("cpu", [c for c in (scpu, ccpu) if not c.empty()])]


def main():
    p = argparse.ArgumentParser(description="bar charts of a bench JSON (gnuplot)")
    p.add_argument("json")
    p.add_argument("--prefix")
    a = p.parse_args()
    if not shutil.which("gnuplot"):
        print("plot: gnuplot is not installed (tools/deps.sh, test group)", file=sys.stderr)
        return 1
    with open(a.json) as f:
        doc = json.load(f)
    prefix = a.prefix or (a.json[:-5] if a.json.endswith(".json") else a.json)
    pdir = prefix + ".plot"
    os.makedirs(pdir, exist_ok=True)
    sub = doc.get("host", {}) or doc.get("testbed", {})
    subtitle = "%s; rdax %s" % (sub.get("cpu") or sub.get("host_cpu") or "",
                                doc.get("rdax version", "?"))
    panels = charts(doc)
    series = []
    for _, cs in panels:
        for c in cs:
            series += [s for s in c.series if s not in series]
    colors = {s: COLORS[i % len(COLORS)] for i, s in enumerate(series)}
    gp = ["# bench/plot.py " + os.path.basename(a.json),
          "set encoding utf8", "set datafile missing 'NaN'"]
    made = []
    for kind, cs in panels:
        if not cs:
            continue
        png = "%s-%s.png" % (prefix, kind)
        gp += ["", "set terminal pngcairo size %d,560 font ',10'" % (760 * len(cs)),
               "set output %s" % q(os.path.abspath(png)),
               "set multiplot layout 1,%d title %s font ',9'" % (len(cs), q(subtitle)),
               # room for the key's rows under the x tics (7 series fit in 7)
               "set bmargin %d" % (7 + max(0, len(series) - 7))]
        for i, c in enumerate(cs):
            dat = os.path.abspath(os.path.join(pdir, "%s-%d.dat" % (kind, i)))
            c.data(dat)
            gp += c.script(dat, colors)
        gp += ["unset multiplot", "set output"]
        made.append(png)
    if not made:
        print("plot: %s has no jobs to plot" % a.json, file=sys.stderr)
        return 1
    script = os.path.join(pdir, "plot.gp")
    with open(script, "w") as f:
        f.write("\n".join(gp) + "\n")
    r = subprocess.run(["gnuplot", script], capture_output=True, text=True)
    if r.returncode:
        print("plot: gnuplot failed:\n" + r.stderr, file=sys.stderr)
        return 1
    for png in made:
        print("plot: wrote " + png, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
