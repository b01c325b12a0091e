#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Markdown for the README's Performance section, from the bench JSON.

  bench/perf-md.py [--readme README.md] [build/bench/*.json ...]

Prints the section; with --readme, replaces the text between
<!-- perf:begin --> and <!-- perf:end --> in that file instead. Benches it
knows: rdma-to-dax (bench/rdma-to-dax), smbdirect (bench/smbdirect), tcp
(bench/tcp), cli (bench/cli) and dbench (bench/dbench). A bench whose file is missing keeps
the subsection the README has for it (with --readme; skipped otherwise);
smbdirect's is left out when there is an rdma-to-dax one (its superset).
"""
import json
import os
import re
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


def rdma_to_dax(doc, path):
    """bench/rdma-to-dax: the superset of bench/smbdirect (more subjects and
    workloads, latency and CPU per I/O)."""
    out = []
    g, tb = doc.get("guest", {}), doc.get("testbed", {})
    base = doc.get("baseline_pair", "cifs-ksmbd")
    key = "vs_" + base.replace("-", "_")
    label = {s["key"]: s.get("label", s["key"]) for s in doc.get("subjects", [])}
    out.append("### RDMA into DAX (`bench/rdma-to-dax`)\n")
    out.append("Soft-RoCE under qemu emulation measures CPU efficiency, not NIC speed: "
               "compare the subjects and the ratios from one boot, not the absolute numbers, "
               "and not with hardware.\n")
    out.append("Measured %s on `%s`: host %s, qemu %s (%s), guest kernel %s with %s "
               "Soft-RoCE (rxe), %s CPUs; files on %s. Each job runs %ss after %ss of ramp, "
               "fio %s. (%s)\n" % (
                   _date(doc), doc.get("rdax version", "?"), tb.get("host_cpu", "?"),
                   tb.get("qemu", "?").replace("QEMU emulator version ", ""),
                   tb.get("accel", "?"), g.get("guest_kernel", "?"), g.get("rdma_dev", "?"),
                   g.get("guest_cpus", "?"), g.get("share", "?"), _g(g.get("fio_runtime_s")),
                   _g(g.get("fio_ramp_time_s")), g.get("fio", "?"), os.path.relpath(path)))
    rungs = ["%s: rung %s" % (label.get(s["key"], s["key"]), s["rung"])
             for s in doc.get("subjects", []) if s.get("rung")]
    if rungs:
        out.append("rdaxd's registration rung per share: " + "; ".join(rungs) + ".\n")
    pairs, wls = [], []
    for r in doc.get("ratios", []):
        if r["pair"] not in pairs:
            pairs.append(r["pair"])
        if r["workload"] not in wls:
            wls.append(r["workload"])
    anchors = {a["jobname"]: a for a in doc.get("anchors", [])}
    failed = {(j.get("subject"), j.get("workload")) for j in doc.get("jobs", [])
              if j.get("error_text")}
    for j in doc.get("jobs", []):
        if j.get("subject") not in pairs:
            pairs.append(j.get("subject"))
    out.append("| workload | " + " | ".join(label.get(p, p) for p in pairs) +
               " | wire (perftest) |")
    out.append("|---|" + "---:|" * (len(pairs) + 1))
    for w in wls:
        rows = {r["pair"]: r for r in doc["ratios"] if r["workload"] == w}
        any_r = next(iter(rows.values()))
        unit = "MiB/s" if any_r["metric"] == "bw_bytes" else "IOPS"
        cells = []
        for p in pairs:
            r = rows.get(p)
            if not r:
                cells.append("error" if (p, w) in failed else "-")
                continue
            c = "%.1f (%.2f×" % (r["value"], r[key]) if r.get(key) is not None \
                else "%.1f (-" % r["value"]
            c += ", %.2f× wire)" % r["vs_wire"] if r.get("vs_wire") is not None else ")"
            cells.append(c)
        a = anchors.get(any_r.get("wire_anchor"))
        wire = "-"
        if a:
            d = a.get("write") or a.get("read")
            wire = "%.1f" % (d["bw_bytes"] / 1048576 if unit == "MiB/s" else d["iops"])
        out.append("| %s (%s) | %s | %s |" % (w, unit, " | ".join(cells), wire))
    out.append("")
    out.append("Throughput; in parentheses the ratio to %s (the kernel pair) and to the "
               "wire (ib_write_bw for reads, ib_read_bw for writes, same size and depth), "
               "measured in the same boot." % label.get(base, base))
    out.append("")
    det = {}
    for r in doc.get("ratios_latency_cpu", []):
        det[(r["workload"], r["pair"], r["metric"])] = r.get(key)
    if det:
        mets = [("clat_p99_ns", "p99"), ("server_cpu_us_per_io", "server CPU/I/O"),
                ("client_cpu_us_per_io", "client CPU/I/O")]
        out.append("| workload | metric | " + " | ".join(label.get(p, p) for p in pairs) + " |")
        out.append("|---|---|" + "---:|" * len(pairs))
        for w in wls:
            for m, ml in mets:
                out.append("| %s | %s | %s |" % (w, ml, " | ".join(
                    "error" if (p, w) in failed else _r(det.get((w, p, m))) for p in pairs)))
        out.append("")
        out.append("Latency (fio clat p99) and CPU time per I/O as ratios to %s: below 1 is "
                   "better. Absolute figures, p50/p99.9 and errors: `build/bench/rdma-to-dax.md`."
                   % label.get(base, base))
        out.append("")
    out += targets(doc, label)
    if doc.get("errors"):
        errs = []
        for e in doc["errors"]:
            name, _, why = e.partition(": ")
            m = why.rfind("SMB-Direct: ")
            errs.append("%s (%s)" % (name, why[m:].split(";")[0] if m >= 0 else why[:120]))
        out.append("Failed in this run: " + "; ".join(errs) + ".")
        out.append("")
    return out


def targets(doc, label=None):
    """The bench's issue-16 targets (its JSON's "targets"), as a table."""
    tg = doc.get("targets") or []
    if not tg:
        return []
    label = label or {}
    out = ["Targets of the data-path redesign (issue 16), measured in this run:", "",
           "| target | pair | measured | bar | met |", "|---|---|---:|---:|---|"]
    for t in tg:
        what = t.get("target") or "1 MiB MiB/s ÷ %s" % t.get("against")
        pair = label.get(t.get("pair"), t.get("pair") or "rdaxd")
        out.append("| %s | %s, %s | %s | %s %.2f | %s |" % (
            what, pair, t["workload"],
            "-" if t.get("value") is None else "%.3f" % t["value"],
            "≥" if t.get("higher_is_better", True) else "≤", t["bar"],
            {True: "yes", False: "**no**"}.get(t.get("met"), "-")))
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
    to_wire = {r["workload"]: r.get("ratio_wire") for r in doc.get("ratios", [])
               if "ratio_wire" in r}
    wire = doc.get("wire")
    wls = []
    for j in doc.get("jobs", []):
        if j["workload"] not in wls:
            wls.append(j["workload"])
    cols = [("throughput", None), ("clat p50", "clat_p50_ns"), ("clat p99", "clat_p99_ns"),
            ("clat p99.9", "clat_p99.9_ns"), ("server CPU/I/O", "server_cpu_us_per_io"),
            ("client CPU/I/O", "client_cpu_us_per_io")]
    out.append("| workload | " + " | ".join("%s %s | %s | %s/%s" % (c, subj, base, subj, base)
                                            for c, _ in cols[:1]) +
               " | " + " | ".join("%s %s/%s" % (c, subj, base) for c, _ in cols[1:]) + " |" +
               (" %s/wire (iperf3) |" % subj if wire else ""))
    out.append("|---|" + "---:|" * (3 + len(cols) - 1 + (1 if wire else 0)))
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
        if wire:
            cells.append(_r(to_wire.get(w)) if w in to_wire else "")
        out.append("| %s | %s |" % (w, " | ".join(cells)))
    out.append("")
    out.append("Ratios are %s/%s: above 1 is better for throughput, below 1 is better for "
               "latency (fio clat percentiles) and for CPU time per I/O (server: utime+stime "
               "of the server's processes; client: fio's usr+sys). Absolute latencies, CPU "
               "times and the spread of the runs: `build/bench/tcp.md`." % (subj, base))
    if wire:
        out[-1] += (" The wire is iperf3's single TCP stream on loopback in 1 MiB writes "
                    "over the same time, %.0f MiB/s (median of the runs)." % (
                        wire["bw_bytes"] / 1048576))
    out.append("")
    out += targets(doc)
    if doc.get("notes"):
        out.append("Notes: " + "; ".join(doc["notes"]) + ".")
        out.append("")
    return out


def cli(doc, path):
    h, p = doc.get("host", {}), doc.get("params", {})
    out = ["### The rdax CLI against smbclient (`bench/cli`)\n"]
    out.append("Measured %s on `%s`: %s, %s CPUs, kernel %s; smbclient %s. `rdax put` and `rdax get` of "
               "a %s file against rdaxd, beside smbclient against the same rdaxd and against "
               "Samba smbd (and rdax against smbd), all on loopback; each transfer is a whole "
               "client process (connect, session, the file, close), median of %s runs "
               "interleaved. (%s)\n" % (
                   _date(doc), h.get("rdax_version", "?"), (h.get("cpu") or "?").strip(),
                   h.get("cpus", "?"), h.get("kernel", "?"),
                   (h.get("smbclient") or "?").replace("Version ", ""),
                   p.get("size", "?"), p.get("runs", "?"), os.path.relpath(path)))
    jobs = {(j["client"], j["server"], j["workload"]): j for j in doc.get("jobs", [])}
    pairs = []
    for j in doc.get("jobs", []):
        if (j["client"], j["server"]) not in pairs:
            pairs.append((j["client"], j["server"]))
    out.append("| direction | " + " | ".join("%s→%s" % pr for pr in pairs) + " |")
    out.append("|---|" + "---:|" * len(pairs))
    for w in ("put", "get"):
        cells = []
        for c, s in pairs:
            j = jobs.get((c, s, w))
            d = j and (j.get("write") if w == "put" else j.get("read"))
            cells.append("%.0f MiB/s" % (d["bw_bytes"] / 1048576) if d else "-")
        out.append("| %s | %s |" % (w, " | ".join(cells)))
    out.append("")
    out += targets(doc)
    if doc.get("notes") or doc.get("errors"):
        out.append("Notes: " + "; ".join(doc.get("notes", []) + doc.get("errors", [])) + ".")
        out.append("")
    return out


def dbench(doc, path):
    g, tb, cfg = doc.get("guest", {}), doc.get("testbed", {}), doc.get("config", {})
    out = ["### dbench on a cifs.ko mount (`bench/dbench`)\n"]
    out.append("Measured %s on `%s`: host %s, qemu %s (%s), guest kernel %s, %s CPUs; "
               "dbench %s (its client.txt load), %s clients for %ss on one cifs.ko mount "
               "over TCP with its default options, rdaxd (its defaults: leases) and ksmbd "
               "(%s) in one boot, one server at a time. (%s)\n" % (
                   _date(doc), doc.get("rdax version", "?"), tb.get("host_cpu", "?"),
                   tb.get("qemu", "?").replace("QEMU emulator version ", ""),
                   tb.get("accel", "?"), g.get("guest_kernel", "?"), g.get("guest_cpus", "?"),
                   g.get("dbench", "?"), cfg.get("clients", "?"),
                   _g(cfg.get("dbench_time_s")),
                   g.get("ksmbd_global") or "its defaults: oplocks, no leases",
                   os.path.relpath(path)))
    jobs = {(j["server"], j["store"]): j for j in doc.get("jobs", [])}
    ratio = {r["store"]: r.get("ratio") for r in doc.get("ratios", [])}
    out.append("| share on | rdaxd | ksmbd | rdaxd/ksmbd | guest CPU busy rdaxd / ksmbd |")
    out.append("|---|---:|---:|---:|---:|")
    for b in ("posix", "dax"):
        a, k = jobs.get(("rdaxd", b)), jobs.get(("ksmbd", b))
        if not (a or k):
            continue

        def mbs(j):
            return "%.1f MB/s" % j["dbench"]["throughput_MBps"] if j else "-"

        def busy(j):
            c = j and j.get("guest_cpu_pct")
            return "%.0f%%" % c["busy"] if c else "-"
        where = (a or k).get("backing") or b
        out.append("| %s: %s | %s | %s | %s | %s / %s |" % (
            b, where, mbs(a), mbs(k), _r(ratio.get(b)), busy(a), busy(k)))
    out.append("")
    out.append("dbench's MB/s: 1e6 bytes read and written by its clients per second after "
               "its warmup; the ratio is rdaxd/ksmbd, above 1 is better. The guest's CPUs "
               "(dbench, cifs.ko and the server together) are the limit under emulation. "
               "Latencies and dbench's operation table: `build/bench/dbench.md` and the "
               "JSON.")
    if doc.get("errors"):
        out.append("")
        out.append("Failed in this run: " + "; ".join(doc["errors"]) + ".")
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


KNOWN = {"smbdirect": smbdirect, "tcp": tcp, "rdma-to-dax": rdma_to_dax, "dbench": dbench,
         "cli": cli}


def kept_sections(readme):
    """the README's current subsections by bench name ("### ... (`bench/NAME`)")"""
    if not readme or not os.path.exists(readme):
        return {}
    with open(readme) as fh:
        cur = fh.read()
    if BEGIN not in cur or END not in cur:
        return {}
    body = cur[cur.index(BEGIN) + len(BEGIN):cur.index(END)]
    kept = {}
    for part in re.split(r"(?m)^(?=### )", body)[1:]:
        m = re.match(r"### .*\(`bench/([\w-]+)`\)", part)
        if m:
            kept[m.group(1)] = part.rstrip("\n").split("\n") + [""]
    return kept


def main(argv):
    readme = None
    if len(argv) > 1 and argv[1] == "--readme":
        readme = argv[2]
        argv = argv[2:]
    files = argv[1:] or ["build/bench/rdma-to-dax.json", "build/bench/smbdirect.json",
                         "build/bench/tcp.json", "build/bench/cli.json",
                         "build/bench/dbench.json"]
    kept = kept_sections(readme)
    out = [BEGIN, "",
           "Implementations measured side by side in one session; compare the ratios, "
           "not absolute numbers across machines. Regenerate with `make readme-perf` "
           "after running the benches.", ""]
    n = 0
    docs = []
    for f in files:
        if not os.path.exists(f):
            # no result here: the README keeps what it shows of that bench
            docs.append((f, None))
            continue
        with open(f) as fh:
            docs.append((f, json.load(fh)))
    # bench/rdma-to-dax is bench/smbdirect's superset: one SMB-Direct section
    names = [d.get("bench") if d else os.path.basename(f)[:-len(".json")] for f, d in docs]
    superset = "rdma-to-dax" in names and ("rdma-to-dax" in kept or any(
        d and d.get("bench") == "rdma-to-dax" for _, d in docs))
    for (f, doc), name in zip(docs, names):
        if superset and name == "smbdirect":
            continue
        fn = KNOWN.get(name)
        if doc and fn:
            out += fn(doc, f)
            n += 1
        elif not doc and name in kept:
            out += kept[name]
            n += 1
    if not n:
        out.append("_No bench results yet: run `bench/rdma-to-dax`, `bench/smbdirect` or "
                   "`bench/tcp`._\n")
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
