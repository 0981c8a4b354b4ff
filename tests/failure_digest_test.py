#!/usr/bin/env python3
"""scripts/failure-digest names what did not pass, with its last lines, and nothing else.

Writes a meson testlog.json of four results (OK, FAIL, TIMEOUT, SKIP) into a scratch build
dir, runs the digest on it and on a dir without a log, and checks what it printed.
Usage: failure_digest_test.py REPO_ROOT
"""
import json
import pathlib
import subprocess
import sys
import tempfile


def main(root: pathlib.Path) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        build = pathlib.Path(tmp) / "build-x"
        (build / "meson-logs").mkdir(parents=True)
        results = [
            ("megatts:unit / passes", "OK", "fine\n"),
            ("megatts:e2e / fails", "FAIL", "one\ntwo\nREQUIRE( x == 1 ) failed\n"),
            ("megatts:e2e / hangs", "TIMEOUT", "waiting\nstill waiting\n"),
            ("megatts:unit / skipped", "SKIP", ""),
        ]
        with open(build / "meson-logs" / "testlog.json", "w", encoding="utf-8") as log:
            for name, result, out in results:
                log.write(json.dumps({"name": name, "result": result, "duration": 1.5, "stdout": out}) + "\n")
        run = lambda *dirs: subprocess.run([str(root / "scripts" / "failure-digest"), "--lines", "2", *dirs],
                                           capture_output=True, text=True, check=True).stdout
        out = run(str(build), str(pathlib.Path(tmp) / "no-such-build"))
    expected = [
        f"=== FAIL in {build}: megatts:e2e / fails after 1.5 s; its last lines:",
        "    two",
        "    REQUIRE( x == 1 ) failed",
        f"=== TIMEOUT in {build}: megatts:e2e / hangs after 1.5 s; its last lines:",
        "    waiting",
        "    still waiting",
    ]
    got = out.splitlines()
    if got != expected:
        print("failure-digest printed:\n" + out + "\nexpected:\n" + "\n".join(expected))
        return 1
    print("failure-digest: names FAIL and TIMEOUT with their last lines, skips OK and SKIP")
    return 0


if __name__ == "__main__":
    sys.exit(main(pathlib.Path(sys.argv[1])))
