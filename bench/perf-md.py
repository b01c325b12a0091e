#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Markdown for the README's Performance section, from the bench JSON.

  bench/perf-md.py [--readme README.md] [build/bench/*.json ...]

Prints the section; with --readme, replaces the text between
<!-- perf:begin --> and <!-- perf:end --> in that file instead. Benches it
knows: smbdirect (bench/smbdirect). Missing files are skipped.
"""
import json
import os
import sys

BEGIN, END = "<!-- perf:begin -->", "<!-- perf:end -->"


def smbdirect(doc, path):
    out = []
    g, tb = doc.get("guest", {}), doc.get("testbed", {})
    out.append("### SMB-Direct file I/O (`bench/smbdirect`)\n")
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


def _date(doc):
    import time
    ts = doc.get("timestamp")
    return time.strftime("%Y-%m-%d", time.gmtime(ts)) if ts else "?"


KNOWN = {"smbdirect": smbdirect}


def main(argv):
    readme = None
    if len(argv) > 1 and argv[1] == "--readme":
        readme = argv[2]
        argv = argv[2:]
    files = argv[1:] or ["build/bench/smbdirect.json"]
    out = [BEGIN, "",
           "Soft-RoCE under qemu emulation measures CPU efficiency, not NIC speed: "
           "compare the pairs and the ratios from one boot, not the absolute numbers, "
           "and not with hardware. Regenerate with `make readme-perf` after running "
           "the benches.", ""]
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
        out.append("_No bench results yet: run `bench/smbdirect`._\n")
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
