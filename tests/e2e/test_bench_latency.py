#!/usr/bin/env python3
"""e2e: `megatts bench latency` and `megatts serve --trace DIR` on the tiny checkpoint, CPU backend.

1. bench latency starts its own daemon, runs every case twice in one session and writes its
   record: the fields every bench record has, and per case the TTFA percentiles, the stage
   breakdown in pipeline order, the layout each case must use, and the speed.
2. serve --trace DIR, spoken to by bench latency --url (two utterances: whole and word by word)
   and by one POST /v1/audio/speech: one Chrome-trace file per utterance, each valid (traceEvents of complete events with
   microsecond ts/dur, pid, tid, name), with every TTFA stage and the engine steps it took part
   in, in order, none of negative length.
Usage: test_bench_latency.py MEGATTS MODEL_DIR WORK_DIR
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

STAGES = ["tokenized", "admitted", "prefill_done", "first_code0", "first_frame", "first_pcm",
          "first_packet", "first_sent"]
CASES = {"short-whole": "whole", "short-words": "streaming", "long-whole": "whole", "long-words": "streaming"}


def check(condition, what):
    if not condition:
        raise AssertionError(what)


def host_cpu():
    """This machine's CPU model, as /proc/cpuinfo names it."""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(": ", 1)[1]
    return "unknown"


def bench_record(megatts, model, work):
    out = work / "latency.json"
    run = subprocess.run([megatts, "bench", "latency", "--model", model, "--backend", "cpu", "--runs", "2",
                          "--json", str(out)], capture_output=True, text=True, timeout=240)
    check(run.returncode == 0, f"bench latency failed ({run.returncode}): {run.stdout}\n{run.stderr}")
    doc = json.loads(out.read_text())
    for key in ["bench", "date", "device", "driver_cuda", "runtime_cuda", "commit", "model"]:
        check(isinstance(doc.get(key), str) and doc[key], f"record field {key}: {doc.get(key)!r}")
    # The server's engine as its /metrics publishes it: the CPU backend on this machine's CPU.
    check(doc["bench"] == "latency" and doc["backend"] == "cpu", "record identity")
    check(doc["device"] == host_cpu() and doc["driver_cuda"] == "none" and doc["runtime_cuda"] == "none",
          f"record device: {doc['device']!r}, driver {doc['driver_cuda']!r}, runtime {doc['runtime_cuda']!r}")
    check(re.fullmatch(r"\d{4}-\d\d-\d\d", doc["date"]) is not None, "date format")
    check(doc["runs"] == 2, "runs")
    check([c["case"] for c in doc["cases"]] == list(CASES), "cases in order")
    for c in doc["cases"]:
        name = c["case"]
        check(c["runs"] == 2, f"{name}: runs")
        check(c["layout"] == CASES[name], f"{name}: layout {c['layout']}")
        check((c["messages"] == 1) == (CASES[name] == "whole"), f"{name}: messages {c['messages']}")
        for ttfa in ("server_ttfa_ms", "client_ttfa_ms"):
            check(0 < c[ttfa]["p50"] <= c[ttfa]["p95"], f"{name}: {ttfa} {c[ttfa]}")
        stages = c["stages_p50_ms"]
        check([s["stage"] for s in stages] == STAGES, f"{name}: stages {stages}")
        check(all(s["ms"] >= 0 for s in stages), f"{name}: a negative stage")
        # p50 of each stage need not sum to the p50 TTFA, but cannot exceed the slowest run.
        check(sum(s["ms"] for s in stages) <= c["server_ttfa_ms"]["p95"] * len(STAGES), f"{name}: stage sum")
        check(c["x_real_time_p50"] > 0 and c["audio_ms_p50"] > 0, f"{name}: speed and audio")
    print("bench latency record: ok")


def start_serve(megatts, model, trace_dir, log):
    serve = subprocess.Popen([megatts, "serve", "--listen", "127.0.0.1:0", "--model", model, "--backend", "cpu",
                              "--trace", str(trace_dir)], stdout=subprocess.PIPE, stderr=log, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = serve.stdout.readline()
        if not line:
            break
        m = re.search(r"listening on http://[^ ]*:(\d+)/", line)
        if m:
            return serve, int(m.group(1))
    serve.kill()
    raise AssertionError("megatts serve printed no URL")


def check_trace(path):
    doc = json.loads(path.read_text())
    events = doc["traceEvents"]
    spans = [e for e in events if e["ph"] == "X"]
    for e in spans:
        for key in ("name", "ts", "dur", "pid", "tid"):
            check(key in e, f"{path.name}: event without {key}: {e}")
        check(e["dur"] >= 0, f"{path.name}: negative duration {e}")
    stage_spans = [e for e in spans if e["tid"] == 1]
    check([e["name"] for e in stage_spans] == STAGES, f"{path.name}: stages {[e['name'] for e in stage_spans]}")
    for a, b in zip(stage_spans, stage_spans[1:]):
        check(abs(a["ts"] + a["dur"] - b["ts"]) < 1e-3, f"{path.name}: stages do not tile")
    # Row 2 the steps' generate() calls, row 4 their audio, which the next generate() overlaps.
    engine = [e for e in spans if e["tid"] == 2]
    audio = [e for e in spans if e["tid"] == 4]
    check(len(engine) >= 1 and len(audio) == len(engine), f"{path.name}: no engine steps, or no audio for one")
    check({e["name"] for e in engine} == {"generate"} and {e["name"] for e in audio} == {"vocode"},
          f"{path.name}: step calls")
    steps = [e["args"]["step"] for e in engine]
    check(steps == sorted(steps) and len(set(steps)) == len(steps), f"{path.name}: steps out of order {steps}")
    check([e["args"]["step"] for e in audio] == steps, f"{path.name}: audio of other steps")
    for row in (engine, audio):
        for a, b in zip(row, row[1:]):
            check(a["ts"] + a["dur"] <= b["ts"] + 1e-3, f"{path.name}: spans of a row overlap or go backwards")
    for g, v in zip(engine, audio):
        check(g["ts"] + g["dur"] <= v["ts"] + 1e-3, f"{path.name}: a step's audio before its generate() ended")
    other = doc["otherData"]
    check(other["steps_traced"] == len(steps) and other["frames"] >= len(steps), f"{path.name}: counts {other}")
    check(other["steps_not_traced"] == other["frames"] - other["steps_traced"], f"{path.name}: untraced count")
    # The first frame's marks are the first step's ends (the CPU backend: the host's times).
    first_generate = engine[0]
    code0 = next(e for e in stage_spans if e["name"] == "first_code0")
    check(abs(code0["ts"] + code0["dur"] - (first_generate["ts"] + first_generate["dur"])) < 1e-3,
          f"{path.name}: first_code0 is not the first step's generate end")


def traces(megatts, model, work):
    trace_dir = work / "traces"
    with open(work / "serve.log", "w") as log:
        serve, port = start_serve(megatts, model, trace_dir, log)
        try:
            run = subprocess.run([megatts, "bench", "latency", "--url", f"ws://127.0.0.1:{port}/v1/tts", "--runs",
                                  "1", "--cases", "short-whole", "short-words"],
                                 capture_output=True, text=True, timeout=240)
            check(run.returncode == 0, f"bench latency --url failed: {run.stdout}\n{run.stderr}")
            request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/audio/speech",
                                             data=json.dumps({"input": "Hello there.", "response_format": "wav"}).encode(),
                                             headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=120) as response:
                check(response.status == 200 and len(response.read()) > 44, "speech request")
        finally:
            serve.send_signal(signal.SIGTERM)
            serve.wait(timeout=60)
    files = sorted(trace_dir.iterdir())
    # bench latency's session with its utterances 1 and 2, and the speech request's with its one.
    names = [re.fullmatch(r"megatts-s(\d+)-u(\d+)\.json", f.name) for f in files]
    check(len(files) == 3 and all(names), f"trace files: {[f.name for f in files]}")
    by_session = {}
    for m in names:
        by_session.setdefault(m.group(1), []).append(m.group(2))
    check(sorted(sorted(v) for v in by_session.values()) == [["1"], ["1", "2"]], f"trace files: {by_session}")
    for f in files:
        check_trace(f)
    print(f"serve --trace: {len(files)} files: ok")


def main():
    megatts, model, work_root = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    work = work_root / "bench-latency-e2e"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    bench_record(megatts, model, work)
    traces(megatts, model, work)
    if not os.environ.get("MEGATTS_KEEP"):
        shutil.rmtree(work, ignore_errors=True)  # kept on failure, for its serve.log and traces


if __name__ == "__main__":
    main()
