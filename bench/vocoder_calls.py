#!/usr/bin/env python3
"""Tabulates `megatts bench vocoder --json` records of one or more builds, ms a call by batch.

Each build is a list of runs (JSON files), ideally interleaved with the other builds' runs in
one device call: only such runs compare. Prints every run's ms a call at each batch size, then
each build's mean against the first build's (the base), as RESULTS.md quotes a vocoder change.

  bench/vocoder_calls.py --build base a-1.json a-2.json --build new b-1.json b-2.json
"""
import argparse
import json
import sys


def load(path):
    with open(path) as f:
        doc = json.load(f)
    return doc.get("commit", "?"), {r["batch"]: r["ms_per_call"] for r in doc["results"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", nargs="+", action="append", required=True, metavar=("NAME", "JSON"),
                    help="a build's name and its runs (JSON); the first --build is the base")
    args = ap.parse_args()
    builds = []
    for name, *paths in args.build:
        if not paths:
            sys.exit(f"--build {name}: no runs")
        builds.append((name, [load(p) for p in paths]))
    batches = sorted(set.intersection(*(set(r) for _, runs in builds for _, r in runs)))
    if not batches:
        sys.exit("no batch size common to every run")
    head = " ".join(f"{'B = ' + str(b):>9}" for b in batches)
    print(f"{'build':<12} {'run':>3} {'commit':<13} {head}")
    means = []
    for name, runs in builds:
        for i, (commit, r) in enumerate(runs, 1):
            print(f"{name:<12} {i:>3} {commit:<13} " + " ".join(f"{r[b]:9.3f}" for b in batches))
        means.append({b: sum(r[b] for _, r in runs) / len(runs) for b in batches})
    print()
    print(f"{'mean':<30} {head}")
    for (name, _), m in zip(builds, means):
        rel = "" if m is means[0] else "  vs base: " + " ".join(
            f"{100 * (m[b] / means[0][b] - 1):+.1f}%" for b in batches)
        print(f"{name:<30} " + " ".join(f"{m[b]:9.3f}" for b in batches) + rel)


if __name__ == "__main__":
    main()
