#!/usr/bin/python3
"""Markdown tables from a bench/torch_ops.py CSV: per operator, the speed-up over PyTorch (min over
sizes and threads, per dtype) and, at the largest size on the most threads, opgrad's GB/s and its
fraction of the same-run probe. One table per mode (reused outputs, outputs allocated per call),
the allocating mode first: it is what frameworks do.

    /usr/bin/python3 bench/summarize.py results/STAMP-torch_ops.csv [--target 0.85]

speed-up = torch ms / opgrad ms (> 1: opgrad faster); frac = opgrad GB/s / probe GB/s (the probe is
torch's fp32 mul on the same bytes, normal stores). A frac at or above --target is marked.
"""
import argparse
import csv
import sys
from collections import OrderedDict


def label(n):
    k = n.bit_length() - 1
    return "2^%d" % k if n == 1 << k else str(n)


MODE_TITLE = {"alloc": "outputs allocated per call (both sides; frac against the probe that allocates)",
              "reused": "outputs preallocated and reused (frac against the probe into a reused output)"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv")
    ap.add_argument("--target", type=float, default=0.85)
    a = ap.parse_args()
    rows = list(csv.DictReader(open(a.csv)))
    if not rows:
        sys.exit("summarize.py: no rows in " + a.csv)
    for r in rows:
        r["n"], r["threads"] = int(r["n"]), int(r["threads"])
        r["speedup"], r["frac"], r["gbps"] = float(r["speedup"]), float(r["frac"]), float(r["opgrad_gbps"])
        r.setdefault("mode", "reused")  # CSVs from before the two modes
    modes = [m for m in ("alloc", "reused") if any(r["mode"] == m for r in rows)]
    for m in modes:
        if len(modes) > 1:
            print("#### Mode %s: %s\n" % (m, MODE_TITLE[m]))
        table([r for r in rows if r["mode"] == m], a.target)
        print()


def table(rows, target):
    ops = list(OrderedDict.fromkeys(r["op"] for r in rows))
    dtypes = list(OrderedDict.fromkeys(r["dtype"] for r in rows))
    nmax, tmax = max(r["n"] for r in rows), max(r["threads"] for r in rows)

    print("| op | " + " | ".join("%s: min speed-up (at)" % d for d in dtypes) +
          " | " + " | ".join("%s %s %dT: GB/s, frac" % (d, label(nmax), tmax) for d in dtypes) + " |")
    print("|---" * (1 + 2 * len(dtypes)) + "|")
    slower, below = [], []
    for op in ops:
        cells = []
        for d in dtypes:
            rs = [r for r in rows if r["op"] == op and r["dtype"] == d]
            if not rs:
                cells.append("—")
                continue
            lo = min(rs, key=lambda r: r["speedup"])
            mark = "**" if lo["speedup"] < 1 else ""
            cells.append("%s%.2f×%s (%s %dT)" % (mark, lo["speedup"], mark, label(lo["n"]), lo["threads"]))
            slower += [r for r in rs if r["speedup"] < 1]
        for d in dtypes:
            big = [r for r in rows if r["op"] == op and r["dtype"] == d and r["n"] == nmax and r["threads"] == tmax]
            if not big:
                cells.append("—")
                continue
            r = big[0]
            ok = r["frac"] >= target
            if not ok:
                below.append(r)
            cells.append("%.1f, %s%.2f%s" % (r["gbps"], "" if ok else "*", r["frac"], "" if ok else "*"))
        print("| %s | %s |" % (op, " | ".join(cells)))
    n = len(rows)
    print()
    print("opgrad faster than PyTorch in %d of %d comparisons; slower in %d (bold). frac below %.2f at %s "
          "with %d threads: %d of %d (starred)." % (n - len(slower), n, len(slower), target, label(nmax),
                                                   tmax, len(below), len(ops) * len(dtypes)))
    for r in sorted(slower, key=lambda r: r["speedup"]):
        print("- slower: %s %s %s %dT: %.2f× (opgrad %s ms, torch [%s] %s ms)" % (
            r["op"], r["dtype"], label(r["n"]), r["threads"], r["speedup"], r["opgrad_ms"],
            r["torch_variant"], r["torch_ms"]))


if __name__ == "__main__":
    main()
