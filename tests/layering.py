#!/usr/bin/env python3
"""Dependencies point one way: daemon -> pipeline -> kernels (DESIGN.md §2).

Fails if a header or source of a lower layer includes a higher layer, or if
kernels/ or pipeline/ include Boost.Asio/Beast. Usage: layering.py REPO_ROOT
"""
import pathlib
import re
import sys

ORDER = {"kernels": 0, "pipeline": 1, "daemon": 2}
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^">]+)[">]', re.M)
FORBIDDEN_BELOW_DAEMON = ("boost/asio", "boost/beast")


def main(root: pathlib.Path) -> int:
    problems = []
    for layer, rank in ORDER.items():
        for path in sorted((root / layer).rglob("*")):
            if path.suffix not in (".h", ".cpp", ".cu", ".cuh"):
                continue
            for inc in INCLUDE.findall(path.read_text(encoding="utf-8")):
                top = inc.split("/", 1)[0]
                if top in ORDER and ORDER[top] > rank:
                    problems.append(f"{path.relative_to(root)} includes {inc} (higher layer)")
                if rank < ORDER["daemon"] and inc.startswith(FORBIDDEN_BELOW_DAEMON):
                    problems.append(f"{path.relative_to(root)} includes {inc} (Asio/Beast only in daemon/)")
    for p in problems:
        print(p)
    print(f"layering: {len(problems)} violation(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(pathlib.Path(sys.argv[1])))
