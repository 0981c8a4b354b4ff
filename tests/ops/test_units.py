#!/usr/bin/env python3
"""The systemd units in configs/systemd/ as systemd itself reads them:
- `systemd-analyze verify` says nothing about megatts.service, megatts.socket and an instance
  of megatts@.service (it needs ExecStart's program to exist, so it reads copies whose
  ExecStart names the binary just built; nothing else is changed);
- `systemd-analyze security --offline=true` rates each service's exposure 2.5 or better
  ("OK"), so hardening cannot silently go missing;
- TimeoutStopSec leaves room for the drain: above the shipped server.drain_timeout_s plus the
  close handshakes.
Usage: test_units.py CONFIGS_DIR (MEGATTS_BIN and MEGATTS_WORK_DIR from the environment).
"""
import pathlib
import re
import subprocess
import sys

from ops_support import env_path, run_cases, work_dir

INSTALLED_BINARY = "/usr/local/bin/megatts"
WORST_EXPOSURE = 2.5
CLOSE_GRACE_S = 2  # daemon/server/server.cpp: close handshakes after the budget

configs = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else None
units = ["megatts.service", "megatts@.service", "megatts.socket"]


def copies_with_the_built_binary():
    work = work_dir("units")
    for name in units:
        text = (configs / "systemd" / name).read_text()
        if name.endswith(".service"):
            assert text.count(f"ExecStart={INSTALLED_BINARY} ") == 1, f"{name}: ExecStart is not {INSTALLED_BINARY}"
            text = text.replace(f"ExecStart={INSTALLED_BINARY} ", f"ExecStart={env_path('MEGATTS_BIN')} ")
        (work / name).write_text(text)
    return work


def analyze(work, *args):
    result = subprocess.run(["systemd-analyze", *args], cwd=work, capture_output=True, text=True, timeout=60)
    return result.returncode, (result.stdout + result.stderr).strip()


def verify_is_silent():
    work = copies_with_the_built_binary()
    for unit in ["megatts.service", "megatts.socket", "megatts@0.service"]:
        status, output = analyze(work, "verify", "--man=no", f"./{unit}")
        assert status == 0 and output == "", f"systemd-analyze verify {unit}: status {status}: {output}"


def hardening_is_in_place():
    work = copies_with_the_built_binary()
    for unit in ["megatts.service", "megatts@0.service"]:
        status, output = analyze(work, "security", "--offline=true", f"./{unit}")
        m = re.search(r"Overall exposure level for \S+: ([0-9.]+)", output)
        assert m, f"systemd-analyze security {unit}: status {status}: {output[-500:]}"
        print(f"  {unit}: exposure {m.group(1)}")
        assert float(m.group(1)) <= WORST_EXPOSURE, f"{unit}: exposure {m.group(1)} > {WORST_EXPOSURE}"


def stop_timeout_covers_the_drain():
    drain = int(re.search(r"^drain_timeout_s = (\d+)$", (configs / "megatts.toml").read_text(), re.M).group(1))
    for name in ["megatts.service", "megatts@.service"]:
        stop = int(re.search(r"^TimeoutStopSec=(\d+)$", (configs / "systemd" / name).read_text(), re.M).group(1))
        assert stop > drain + CLOSE_GRACE_S, f"{name}: TimeoutStopSec={stop} leaves no room for a {drain} s drain"


if __name__ == "__main__":
    sys.exit(run_cases([verify_is_silent, hardening_is_in_place, stop_timeout_covers_the_drain]))
