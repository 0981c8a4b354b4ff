#!/usr/bin/env python3
"""`megatts serve` with a model directory it cannot use stops at start with a message naming
what is wrong and exit status 2 (which configs/systemd/megatts.service does not restart):
a directory that does not exist, one without its weights, weights cut short, and a config.json
that does not match the weights.
"""
import os
import shutil
import sys

from ops_support import Daemon, env_path, run_cases, work_dir


def model_like_fixture(work, name):
    """A model directory of links to the tiny fixture's files, so a case can break one file."""
    source = env_path("MEGATTS_MODEL")
    target = work / name
    for path in sorted(source.rglob("*")):
        if path.is_file() and "cases" not in path.relative_to(source).parts:
            link = target / path.relative_to(source)
            link.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(path.resolve(), link)
    return target


def serve_fails(work, model_dir, expected):
    with Daemon(work, "serve", ["--listen", "127.0.0.1:0", "--model", str(model_dir)]) as d:
        status = d.wait_exit(60)
        output = d.output()
    assert status == 2, f"exit status {status}, not 2: {output}"
    assert expected in output, f"{expected!r} not in: {output}"
    print(f"  {model_dir.name}: {output.strip().splitlines()[-1]}")


def missing_directory():
    work = work_dir("model-missing")
    serve_fails(work, work / "no-such-model", "no-such-model: not a directory")


def missing_weights():
    work = work_dir("model-no-weights")
    model = model_like_fixture(work, "no-weights")
    (model / "model.safetensors").unlink()
    serve_fails(work, model, "model.safetensors")


def truncated_weights():
    work = work_dir("model-truncated")
    model = model_like_fixture(work, "truncated")
    weights = model / "model.safetensors"
    data = weights.read_bytes()
    weights.unlink()
    weights.write_bytes(data[: len(data) // 2])
    serve_fails(work, model, "model.safetensors")


def config_of_another_model():
    work = work_dir("model-mismatched")
    model = model_like_fixture(work, "mismatched")
    (model / "config.json").unlink()
    shutil.copy(env_path("MEGATTS_MODEL").parent / "tiny-cv17" / "config.json", model / "config.json")
    serve_fails(work, model, "model.safetensors")


if __name__ == "__main__":
    sys.exit(run_cases([missing_directory, missing_weights, truncated_weights, config_of_another_model]))
