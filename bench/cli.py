#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The rdax CLI against smbclient, whole transfers on loopback (bench/cli).

  bench/cli.py [options] --server NAME,PORT,USER,PASSWORD_FILE ...

bench/cli starts the servers and calls this. Per direction (put, get) and
run, each client/server pair moves the same file once, interleaved:
rdax->rdaxd, smbclient->rdaxd, smbclient->smbd, rdax->smbd, the order
turned by one pair each run (run 2 starts with smbclient->rdaxd), after
one untimed put and get: on this host the first transfer into memory the
machine has not touched yet runs at a fraction of the others' pace (the
copy into the page cache, `copy_folio_from_iter_atomic`, takes 4x), and
a fixed order handed that cost to rdax every run. Time is the client
process's, start to exit (connect and session included, the same for
every client).

  --server NAME,PORT,USER,PWFILE   share "bench" on 127.0.0.1:PORT
  --work DIR      each client's output goes to DIR/
  --local DIR     where the local file and the files fetched live
  --out FILE      the JSON (build/bench/cli.json)
  --md FILE       the table (build/bench/cli.md); also printed
  --runs N --size SIZE
  --note TEXT     a note to carry into the JSON (repeatable)
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

B = os.environ.get("B", "build")
SUBJECT = "rdax"
# (client, server): the pairs, in the order they run
PAIRS = [("rdax", "rdaxd"), ("smbclient", "rdaxd"), ("smbclient", "smbd"), ("rdax", "smbd")]
# ratio name, numerator pair, denominator pair
RATIOS = [
    ("rdax->rdaxd / smbclient->rdaxd", ("rdax", "rdaxd"), ("smbclient", "rdaxd")),
    ("rdax->rdaxd / smbclient->smbd", ("rdax", "rdaxd"), ("smbclient", "smbd")),
    ("rdax->smbd / smbclient->smbd", ("rdax", "smbd"), ("smbclient", "smbd")),
]
# issue 16's CLI targets: rdax put/get >= 1.0x smbclient, against the same
# rdaxd and against smbd
TARGETS = [("rdax->rdaxd / smbclient->rdaxd", 1.0), ("rdax->rdaxd / smbclient->smbd", 1.0)]
REMOTE = "cli-bench.bin"


def say(msg):
    print("cli: " + msg, file=sys.stderr, flush=True)


def median(v):
    v = sorted(v)
    n = len(v)
    return None if not n else v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def parse_size(s):
    m = re.fullmatch(r"(\d+)([kmgKMG]?)", s)
    if not m:
        raise ValueError("size %r: a number with k, m or g" % s)
    return int(m.group(1)) << {"": 0, "k": 10, "m": 20, "g": 30}[m.group(2).lower()]


def cmd_out(args):
    try:
        r = subprocess.run(args, capture_output=True, text=True, timeout=30)
        return (r.stdout or r.stderr).strip().splitlines()[0]
    except (OSError, IndexError, subprocess.TimeoutExpired):
        return "unknown"


class Server:
    def __init__(self, spec, work):
        self.name, port, self.user, self.pwfile = spec.split(",", 3)
        self.port = int(port)
        with open(self.pwfile) as f:
            pw = f.read().rstrip("\n")
        self.authfile = os.path.join(work, "%s.auth" % self.name)
        with open(os.open(self.authfile, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
            f.write("username = %s\npassword = %s\n" % (self.user, pw))

    def argv(self, client, direction, local):
        if client == "rdax":
            url = "smb://127.0.0.1:%d/bench/%s" % (self.port, REMOTE)
            a = [os.path.join(B, "rdax"), "--user", self.user, "--password-file", self.pwfile,
                 "-q", direction]
            return a + ([local, url] if direction == "put" else [url, local])
        c = "put %s %s" % (local, REMOTE) if direction == "put" else "get %s %s" % (REMOTE, local)
        return ["smbclient", "//127.0.0.1/bench", "-p", str(self.port), "-A", self.authfile,
                "-c", c]


class Bench:
    def __init__(self, a):
        self.a = a
        self.size = parse_size(a.size)
        self.servers = {s.split(",", 1)[0]: Server(s, a.work) for s in a.server}
        self.src = os.path.join(a.local, "src.bin")
        self.errors = []
        self.runs = {}      # (client, server, direction) -> [seconds]

    def make_source(self):
        with open(self.src, "wb") as f:
            left = self.size
            while left:
                n = min(left, 8 << 20)
                f.write(os.urandom(n))
                left -= n
        # in the page cache for every put alike: read it once
        with open(self.src, "rb") as f:
            while f.read(8 << 20):
                pass

    def one(self, client, srv, direction, run):
        tag = "%s->%s/%s#%d" % (client, srv.name, direction, run)
        local = self.src if direction == "put" else os.path.join(self.a.local, "got.bin")
        argv = srv.argv(client, direction, local)
        os.sync()
        t0 = time.monotonic()
        r = subprocess.run(argv, capture_output=True, text=True, timeout=600)
        secs = time.monotonic() - t0
        log = os.path.join(self.a.work, "%s-%s-%s-run%d.log" % (client, srv.name, direction, run))
        with open(log, "w") as f:
            f.write(" ".join(argv) + "\n" + r.stdout + r.stderr)
        ok = r.returncode == 0 and "NT_STATUS" not in r.stdout + r.stderr
        if ok and direction == "get":
            got = os.path.getsize(local)
            if got != self.size:
                ok = False
                r.stderr += "fetched %d bytes, not %d" % (got, self.size)
            os.unlink(local)
        if not ok:
            self.errors.append("%s: exit %d: %s" % (tag, r.returncode,
                                                    (r.stdout + r.stderr)[-300:].strip()))
            say("FAILED: " + self.errors[-1])
            return
        say("%-28s %8.1f MiB/s  %6.2f s%s" % (tag, self.size / secs / 1048576, secs,
                                              "  (warm-up, not counted)" if not run else ""))
        if run:
            self.runs.setdefault((client, srv.name, direction), []).append(secs)

    def main(self):
        self.make_source()
        pairs = [(c, s) for c, s in PAIRS if s in self.servers]
        for direction in ("put", "get"):
            self.one(pairs[0][0], self.servers[pairs[0][1]], direction, 0)   # warm-up
            for run in range(1, self.a.runs + 1):
                k = (run - 1) % len(pairs)
                for client, s in pairs[k:] + pairs[:k]:
                    self.one(client, self.servers[s], direction, run)
        return self.report(pairs)

    def job(self, client, server, direction):
        v = self.runs.get((client, server, direction))
        if not v:
            return None
        secs = median(v)
        ddir = "write" if direction == "put" else "read"
        d = {"io_bytes": self.size, "bw_bytes": self.size / secs,
             "bw": self.size / secs / 1024, "runtime": round(secs * 1000)}
        return {"jobname": "%s->%s/%s" % (client, server, direction), "client": client,
                "server": server, "workload": direction, "rw": ddir, "runs": len(v),
                "error": 0, ddir: d,
                "spread": {"min_s": min(v), "max_s": max(v),
                           "pct": round((max(v) - min(v)) / secs * 100, 1)},
                "per_run_s": v}

    def report(self, pairs):
        jobs, ratios = {}, []
        for direction in ("put", "get"):
            for c, s in pairs:
                j = self.job(c, s, direction)
                if j:
                    jobs[(c, s, direction)] = j
        lines = ["| direction | " + " | ".join("%s->%s MiB/s" % p for p in pairs) + " | " +
                 " | ".join(r[0] for r in RATIOS) + " |",
                 "|---|" + "---:|" * (len(pairs) + len(RATIOS))]
        for direction in ("put", "get"):
            ddir = "write" if direction == "put" else "read"
            cells = []
            for c, s in pairs:
                j = jobs.get((c, s, direction))
                cells.append("%.0f ±%.0f%%" % (j[ddir]["bw_bytes"] / 1048576, j["spread"]["pct"] / 2)
                             if j else "-")
            for name, num, den in RATIOS:
                a, b = jobs.get(num + (direction,)), jobs.get(den + (direction,))
                r = a[ddir]["bw_bytes"] / b[ddir]["bw_bytes"] if a and b else None
                ratios.append({"workload": direction, "metric": "bw_bytes", "better": "higher",
                               "ratio_name": name, "subject": "%s->%s" % num,
                               "baseline": "%s->%s" % den,
                               "ratio": round(r, 4) if r is not None else None})
                cells.append("%.2f" % r if r is not None else "-")
            lines.append("| %s | %s |" % (direction, " | ".join(cells)))
        host = {"cpu": cmd_out(["sh", "-c", "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"]),
                "cpus": os.cpu_count(), "kernel": os.uname().release,
                "rdax_version": cmd_out(["git", "describe", "--always", "--dirty"]),
                "smbclient": cmd_out(["smbclient", "--version"]),
                "loadavg": open("/proc/loadavg").read().split()[:3]}
        legend = ("%s file, median of %d runs interleaved %s (turned by one each run, after "
                  "an untimed warm-up); ± is half the min-max range. "
                  "Time is the whole client process (connect, session, transfer, close)." % (
                      self.a.size, self.a.runs, "/".join("%s->%s" % p for p in pairs)))
        md = ["# bench/cli: rdax put/get against smbclient on loopback", "",
              "rdax %s, %s (%s CPUs), kernel %s, %s" % (host["rdax_version"], host["cpu"].strip(),
                                                     host["cpus"], host["kernel"],
                                                     host["smbclient"]), "",
              legend, ""] + lines + [""]
        tg = [{"target": "%s ÷ smbclient" % r["workload"], "pair": r["ratio_name"],
               "workload": r["workload"], "value": r["ratio"], "bar": bar,
               "met": r["ratio"] >= bar if r["ratio"] is not None else None}
              for name, bar in TARGETS for r in ratios if r["ratio_name"] == name]
        md += ["Targets (issue 16): rdax against smbclient, 1 GiB whole processes:", "",
               "| target | pair | measured | bar | met |", "|---|---|---:|---:|---|"]
        md += ["| %s | %s | %s | ≥ %.2f | %s |" % (
            t["target"], t["pair"], "-" if t["value"] is None else "%.3f" % t["value"], t["bar"],
            {True: "yes", False: "**no**"}.get(t["met"], "-")) for t in tg] + [""]
        notes = self.a.note
        if self.errors or notes:
            md += ["Notes:", ""] + ["- " + e for e in notes + self.errors] + [""]
        doc = {"bench": "cli", "timestamp": int(time.time()), "host": host,
               "params": {"runs": self.a.runs, "size": self.a.size, "io_bytes": self.size,
                          "order": "per direction, one untimed warm-up, then per run: " +
                                   "/".join("%s->%s" % p for p in pairs) +
                                   ", turned by one pair each run"},
               "fields": {"write/read": "fio's names: io_bytes, bw_bytes (median), bw (KiB/s), "
                                        "runtime (ms, median)",
                          "per_run_s": "each run's seconds, in order"},
               "notes": notes, "errors": self.errors,
               "jobs": list(jobs.values()), "ratios": ratios, "targets": tg}
        with open(self.a.out + ".tmp", "w") as f:
            json.dump(doc, f, indent=1)
        os.replace(self.a.out + ".tmp", self.a.out)
        with open(self.a.md, "w") as f:
            f.write("\n".join(md))
        print("\n".join(md[2:]).rstrip())
        complete = len(jobs) == 2 * len(PAIRS) and all(
            j["runs"] == self.a.runs for j in jobs.values())
        return 0 if complete and not self.errors else 1


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--server", action="append", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--local", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--md", required=True)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--size", default="1g")
    p.add_argument("--note", action="append", default=[])
    a = p.parse_args()
    os.chdir(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return Bench(a).main()


if __name__ == "__main__":
    sys.exit(main())
