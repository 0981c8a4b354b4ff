#!/usr/bin/env python3
"""e2e: the real megatts binary, `megatts say`, against the golden cases and on bad input.

For every golden case, `say --greedy` must write exactly the golden codes (--codes-out) and
a 32-bit float WAV equal to the golden audio at 1e-4 relative: tokenizer, prompt layout,
talker, code predictor, vocoder and WAV writer together. Then every user error must exit 2
with a message naming the problem. Usage: test_say.py MEGATTS FIXTURE_DIR
"""
import array
import json
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

CASES = [
    ("tiny-cv06", "cv06_en_ryan_english"),
    ("tiny-cv06", "cv06_zh_vivian_chinese"),
    ("tiny-cv06", "cv06_en_serena_auto_streaming"),
    ("tiny-cv06", "cv06_zh_dylan_auto_dialect"),
    ("tiny-cv17", "cv17_en_aiden_english"),
    ("tiny-cv17", "cv17_zh_uncle_fu_auto"),
    ("tiny-cv17", "cv17_ja_ono_anna_japanese_streaming"),
    ("tiny-cv17", "cv17_zh_eric_chinese_dialect"),
]


def read_safetensors(path: Path):
    data = path.read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    base = 8 + n
    meta = header.pop("__metadata__", {})

    def tensor(name):
        h = header[name]
        begin, end = h["data_offsets"]
        code = {"F32": "f", "I32": "i"}[h["dtype"]]
        return array.array(code, data[base + begin : base + end]).tolist()

    return meta, tensor


def read_wav_f32(path: Path):
    data = path.read_bytes()
    assert data[:4] == b"RIFF" and data[8:12] == b"WAVE", "not a WAV file"
    pos, fmt, samples = 12, None, None
    while pos + 8 <= len(data):
        cid, size = data[pos : pos + 4], struct.unpack("<I", data[pos + 4 : pos + 8])[0]
        body = data[pos + 8 : pos + 8 + size]
        if cid == b"fmt ":
            fmt = struct.unpack("<HHIIHH", body[:16])
        elif cid == b"data":
            samples = array.array("f", body).tolist()
        pos += 8 + size + (size & 1)
    assert fmt is not None and fmt[0] == 3 and fmt[1] == 1 and fmt[2] == 24000 and fmt[5] == 32, fmt
    return samples


def rel_error(x, ref):
    if len(x) != len(ref):
        return float("inf")
    peak = max(abs(v) for v in ref) or 1.0
    return max(abs(a - b) for a, b in zip(x, ref)) / peak


def run(megatts, *args):
    return subprocess.run([megatts, *args], capture_output=True, text=True, timeout=120)


def check_golden(megatts: str, fixtures: Path, tmp: Path, failures: list):
    for ckpt, case in CASES:
        meta, tensor = read_safetensors(fixtures / ckpt / "cases" / f"{case}.safetensors")
        wav, codes_json = tmp / f"{case}.wav", tmp / f"{case}.json"
        args = ["say", "--model", str(fixtures / ckpt), "--text", meta["text"],
                "--voice", meta["speaker"], "--language", meta["language"].lower(), "--greedy",
                "--max-frames", meta["max_frames"], "--f32", "-o", str(wav), "--codes-out", str(codes_json)]
        if meta["non_streaming_mode"] == "false":
            args.append("--stream-text")
        r = run(megatts, *args)
        if r.returncode != 0:
            failures.append(f"{case}: exit {r.returncode}: {r.stderr.strip()}")
            continue
        codes = [c for frame in json.loads(codes_json.read_text()) for c in frame]
        if codes != tensor("codes"):
            failures.append(f"{case}: codes differ from the golden codes")
        err = rel_error(read_wav_f32(wav), tensor("audio"))
        if not err <= 1e-4:
            failures.append(f"{case}: audio relative error {err:.3g} > 1e-4")
        print(f"{case}: {len(codes) // 16} frames, codes exact, audio rel error {err:.2g}")


def check_errors(megatts: str, fixtures: Path, tmp: Path, failures: list):
    model = str(fixtures / "tiny-cv06")
    out = str(tmp / "err.wav")
    bad = [
        (["say", "--model", model, "--text", "hi", "--voice", "nobody", "-o", out], "unknown voice 'nobody'"),
        (["say", "--model", model, "--text", "hi", "--voice", "ryan", "--language", "klingon", "-o", out],
         "unknown language 'klingon'"),
        (["say", "--model", model, "--text", "", "--voice", "ryan", "-o", out], "empty"),
        (["say", "--model", str(tmp / "no-such-model"), "--text", "hi", "-o", out], "no-such-model"),
        (["say", "--model", model, "--text", "hi", "--voice", "ryan", "--language", "english",
          "-o", str(tmp / "missing-dir" / "x.wav")], "missing-dir"),
        (["say", "--model", model, "--text", "hi", "--top-p", "2", "-o", out], "top-p"),
        (["say", "--text", "hi"], "--out"),
    ]
    for args, needle in bad:
        r = run(megatts, *args)
        expected = 1 if "missing-dir" in needle else 2
        if r.returncode != expected or needle not in (r.stderr + r.stdout):
            failures.append(f"{args}: exit {r.returncode} (want {expected}), output {r.stderr.strip()!r} "
                            f"lacks {needle!r}")
        else:
            print(f"bad input answered: {needle!r} -> exit {r.returncode}")


def main():
    megatts, fixtures = sys.argv[1], Path(sys.argv[2])
    failures = []
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        check_golden(megatts, fixtures, tmp, failures)
        check_errors(megatts, fixtures, tmp, failures)
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
