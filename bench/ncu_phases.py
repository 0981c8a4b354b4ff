#!/usr/bin/env python3
"""Groups Nsight Compute's per-instruction stall samples of one frame-kernel launch by phase.

Input: the source page of an ncu report exported as CSV, SASS only or CUDA and SASS
(`ncu -i prof.ncu-rep --page source --csv --print-source sass > prof.csv`; bench/README.md has
the whole recipe). The frame kernel's phases end at grid barriers, where the warps of a block
that arrived early wait at a block barrier while one thread polls: those instructions carry the
most `stall_barrier` samples. This script takes every instruction holding at least --cut of all
samples as barrier stalls as a phase boundary, and reports, in code order, each stretch of SASS
between two boundaries (the phase's own work) and the boundary itself (its wait): samples, share
of all, the leading stall reasons, and how many times a warp ran the boundary (warps x phases of
that kind: 28 per talker layer phase, 75 per code-predictor layer phase at 15 passes x 5 layers).
--top N also lists each stretch's N instructions with the most samples.
"""
import argparse
import csv
import sys


def read(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    header = next(i for i, r in enumerate(rows) if "Address" in r and "Source" in r)
    names = rows[header]
    col = {n: i for i, n in enumerate(names)}
    reasons = [n for n in names if n.startswith("stall_") and "Not Issued" not in n]
    out = []
    for r in rows[header + 1:]:
        if len(r) < len(names) or not r[col["Address"]].startswith("0x"):
            continue  # CUDA source lines (--print-source cuda,sass) have no address
        num = lambda n: float(r[col[n]] or 0)
        out.append({
            "source": r[col["Source"]].strip(),
            "samples": num("Warp Stall Sampling (All Samples)"),
            "executed": num("Instructions Executed"),
            "stalls": {n[len("stall_"):]: num(n) for n in reasons},
        })
    return out


def summary(instrs, total):
    samples = sum(i["samples"] for i in instrs)
    stalls = {}
    for i in instrs:
        for k, v in i["stalls"].items():
            stalls[k] = stalls.get(k, 0) + v
    lead = sorted(stalls.items(), key=lambda kv: -kv[1])[:4]
    return "%8d %5.1f%%  %s" % (samples, 100 * samples / total, ", ".join("%s %d" % (k, v) for k, v in lead if v > 0))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("--cut", type=float, default=0.005, help="share of all samples that marks a boundary")
    ap.add_argument("--top", type=int, default=0, help="instructions listed per stretch")
    a = ap.parse_args()
    instrs = read(a.csv)
    if not instrs:
        sys.exit("no SASS rows in " + a.csv)
    total = sum(i["samples"] for i in instrs)
    cuts = [n for n, i in enumerate(instrs) if i["stalls"].get("barrier", 0) >= a.cut * total]
    print("%d instructions, %d samples, %d boundaries (barrier stalls >= %.1f%% of all samples)"
          % (len(instrs), total, len(cuts), 100 * a.cut))
    start = 0
    for n in cuts + [len(instrs)]:
        stretch = instrs[start:n]
        if stretch:
            print("work  [%6d, %6d) %s" % (start, n, summary(stretch, total)))
            for i in sorted(stretch, key=lambda i: -i["samples"])[:a.top]:
                lead = max(i["stalls"].items(), key=lambda kv: kv[1])
                print("        %8d  %-56s %s %d, executed %d" % (i["samples"], i["source"][:56], lead[0], lead[1],
                                                                   i["executed"]))
        if n < len(instrs):
            print("wait  %6d x%-8d %s" % (n, instrs[n]["executed"], summary([instrs[n]], total)))
        start = n + 1


if __name__ == "__main__":
    main()
