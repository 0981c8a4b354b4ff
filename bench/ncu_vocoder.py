#!/usr/bin/env python3
"""Names and sums the kernels of one vocoder call from Nsight Compute's per-kernel times.

Input: `ncu --metrics gpu__time_duration.sum --csv` over `megatts bench vocoder --batch B
--calls 1 --no-graphs` (bench/README.md has the recipe), one file per build. The profiled
launches may hold several calls: a call starts at each codebook gather, and --call picks one
(default: the last whole one). A call's launches come in vocoder_program's order, which fixes
each one's layer: three frame-rate ops (gather, dequantiser, pre-conv), the frame-rate
transformer (one frame-stack launch, or 42 launches: input projection, 8 layers of qkv,
attention, o, gate/up and down, output projection), two ConvNeXt upsamplers of four launches
(transposed conv, dwconv + norm, pw1, pw2), the first decoder conv, four decoder blocks of seven
(transposed conv, then three residual units' 7-tap and 1x1 convs), and the output conv.

Prints each launch (its layer, kernel, grid, us per build) and the sums by kind: the table
RESULTS.md quotes for a change to the vocoder's kernels. With several builds (the same batch,
profiled in one device call) each gets a column, the first being the base.

  bench/ncu_vocoder.py base.csv [new.csv ...] [--call N] [--min-us 2]
"""
import argparse
import csv
import io
import sys

TAIL = 38  # launches after the transformer: upsamplers 2 x 4, decoder0, blocks 4 x 7, output
HEAD = 3  # gather, dequantiser, pre-conv


def read(path):
    """[(kernel, grid, us)] of every profiled launch, in launch order."""
    with open(path, newline="") as f:
        lines = f.read().splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    if start is None:
        sys.exit(f"{path}: no ncu CSV table (a line starting with \"ID\")")
    out = []
    for row in csv.DictReader(io.StringIO("\n".join(lines[start:]))):
        if row.get("Metric Name") != "gpu__time_duration.sum":
            continue
        value = float(row["Metric Value"].replace(",", ""))
        unit = row.get("Metric Unit", "nsecond")
        us = value / 1e3 if unit.startswith("n") else value * 1e3 if unit.startswith("m") else value
        out.append((short_name(row["Kernel Name"]), row.get("Grid Size", ""), us))
    return out


def short_name(kernel):
    """conv_gemm<128x64>, conv_implicit<256x64>, frame_stack, ...: the kernel and its tile."""
    name = kernel.replace("void ", "").replace("megatts::voc::", "")
    base = name.split("<")[0].split("(")[0].removesuffix("_kernel")
    if "gemm_tile<" in name:
        dims = name.split("gemm_tile<")[1].split(",")[:2]
        return f"{base}<{dims[0].strip()}x{dims[1].strip()}>"
    return base


def calls(launches):
    """The whole calls among the launches, each starting at a codebook gather: the last one only
    where it is as long as the one before (ncu may have stopped profiling inside it)."""
    starts = [i for i, (k, _, _) in enumerate(launches) if k.startswith("codebook_gather")]
    out = [launches[a:b] for a, b in zip(starts, starts[1:] + [len(launches)])]
    if len(out) >= 2 and len(out[-1]) != len(out[-2]):
        out.pop()
    return out


def transformer_labels(n, kernel):
    if n == 1 and kernel.startswith("frame_stack"):
        return ["transformer (frame stack)"]
    if n == 42:
        layer = [f"layer {i}.{p}" for i in range(8) for p in ("qkv", "attention", "o", "gate/up", "down")]
        return ["input proj"] + layer + ["output proj"]
    return [f"transformer {i}" for i in range(n)]


def labels(call):
    """(layer, kind) of each launch of one call, from its position."""
    middle = len(call) - HEAD - TAIL
    if middle < 1:
        sys.exit(f"a call of {len(call)} launches: not a whole vocoder call (at least {HEAD + TAIL + 1})")
    out = [("gather", "frame-rate convs"), ("dequantiser", "frame-rate convs"), ("pre-conv", "frame-rate convs")]
    out += [(label, "transformer") for label in transformer_labels(middle, call[HEAD][0])]
    for u in range(2):
        out += [(f"upsampler {u}.{p}", "upsamplers") for p in ("transposed", "dwconv+norm", "pw1", "pw2")]
    out.append(("decoder0 (7 taps)", "decoder0"))
    for b in range(1, 5):
        out.append((f"block {b}.transposed", "transposed convs"))
        for u in range(3):
            out.append((f"block {b}.unit {u}.7-tap", "7-tap convs"))
            out.append((f"block {b}.unit {u}.1x1", "1x1 convs"))
    out.append(("output conv", "output conv"))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", nargs="+", help="ncu --csv output, one file per build (the first is the base)")
    ap.add_argument("--call", type=int, help="which call of the profiled launches (default: the last whole one)")
    ap.add_argument("--min-us", type=float, default=0.0,
                    help="with several builds, list only launches that moved by more than this")
    args = ap.parse_args()
    builds = []
    for path in args.csv:
        whole = [c for c in calls(read(path)) if len(c) >= HEAD + TAIL + 1]
        if not whole:
            sys.exit(f"{path}: no whole vocoder call among its launches")
        builds.append(whole[args.call] if args.call is not None else whole[-1])
    if len({len(b) for b in builds}) != 1:
        sys.exit("the builds' calls have different launch counts: " + ", ".join(str(len(b)) for b in builds))
    names = labels(builds[0])
    cols = " ".join(f"{'us':>8}" for _ in builds)
    print(f"{'#':>3} {'layer':<26} {'kernel':<22} {'grid':<14} {cols}")
    sums = {}
    for i, (layer, kind) in enumerate(names):
        us = [b[i][2] for b in builds]
        for j, v in enumerate(us):
            sums.setdefault(kind, [0.0] * len(builds))[j] += v
        if len(builds) > 1 and max(abs(v - us[0]) for v in us) <= args.min_us:
            continue
        kernels = "/".join(dict.fromkeys(b[i][0] for b in builds))
        print(f"{i:>3} {layer:<26} {kernels:<22} {builds[0][i][1]:<14} " + " ".join(f"{v:8.1f}" for v in us))
    print()
    print(f"{'by kind':<30} " + " ".join(f"{'us':>8}" for _ in builds))
    for kind, us in sums.items():
        print(f"{kind:<30} " + " ".join(f"{v:8.1f}" for v in us))
    total = [sum(b[i][2] for i in range(len(names))) for b in builds]
    print(f"{'total (' + str(len(names)) + ' launches)':<30} " + " ".join(f"{v:8.1f}" for v in total))


if __name__ == "__main__":
    main()
