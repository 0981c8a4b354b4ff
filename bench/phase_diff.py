#!/usr/bin/env python3
"""Compares `megatts bench kernels --phases --json` records of two builds, phase by phase.

Each build is given as one or more JSON files (runs of the same build, ideally interleaved with
the other build's in one device call: only such runs compare). Prints, per batch size, every
run's frame ms for both builds, then each phase whose mean total moved by more than --min-us
microseconds a frame: its total per run, base -> new. That is the table RESULTS.md quotes for a
change, and the list of phases a change moved that it does not touch (code layout, registers).

  bench/phase_diff.py --base a-1.json a-2.json --new b-1.json b-2.json [--min-us 4] [--batch 1 64]
"""
import argparse
import json
import sys


def load(path):
    with open(path) as f:
        doc = json.load(f)
    runs = {}
    for r in doc["results"]:
        phases = {p["phase"]: p["total_us"] for p in r.get("phases", [])}
        runs[r["batch"]] = {"frame_ms": r["frame_ms"], "talker_ms": r["talker_ms"], "phases": phases}
    return runs


def mean(values):
    return sum(values) / len(values)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", nargs="+", required=True, help="the base build's runs (JSON)")
    ap.add_argument("--new", nargs="+", required=True, help="the changed build's runs (JSON)")
    ap.add_argument("--min-us", type=float, default=4.0, help="list phases whose mean moved more than this")
    ap.add_argument("--batch", type=int, nargs="*", help="batch sizes (default: every one in all runs)")
    args = ap.parse_args()
    base, new = [load(p) for p in args.base], [load(p) for p in args.new]
    batches = sorted(set.intersection(*(set(r) for r in base + new)))
    if args.batch:
        batches = [b for b in batches if b in args.batch]
    if not batches:
        sys.exit("phase_diff: no batch size is in every run")
    fmt = lambda runs, key: " / ".join(f"{r[key]:.3f}" for r in runs)
    for b in batches:
        rb, rn = [r[b] for r in base], [r[b] for r in new]
        print(f"B = {b}: frame ms {fmt(rb, 'frame_ms')} -> {fmt(rn, 'frame_ms')}, "
              f"talker step ms {fmt(rb, 'talker_ms')} -> {fmt(rn, 'talker_ms')}")
        if not all(r["phases"] for r in rb + rn):
            continue  # runs without --phases: frame times only
        names = [n for n in rb[0]["phases"] if all(n in r["phases"] for r in rb + rn)]
        for n in names:
            vb, vn = [r["phases"][n] for r in rb], [r["phases"][n] for r in rn]
            if abs(mean(vn) - mean(vb)) > args.min_us:
                print(f"  {n:20s} {' / '.join(f'{v:7.1f}' for v in vb)} -> {' / '.join(f'{v:7.1f}' for v in vn)} us"
                      f"  ({mean(vn) - mean(vb):+.1f})")


if __name__ == "__main__":
    main()
