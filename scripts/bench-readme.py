#!/usr/bin/env python3
"""Copies the whole-process table that scripts/bench.py measured into the README.

    scripts/bench-readme.py REPORT.md README.md          # replace the README's table
    scripts/bench-readme.py --check REPORT.md README.md  # only check both can be spliced

The README's table sits between the lines `<!-- bench.sh: whole-process -->` and
`<!-- /bench.sh -->`; what goes there is REPORT.md's run line (machine, commit, load)
and its table, as bench.py wrote them, so the README quotes a run and is never edited by
hand. `--check` (scripts/bench.sh --quick, run by .ci/run) fails when the markers or the
report's table are missing, so the splice cannot break silently. The README is written
atomically (a temporary file renamed over it).
"""
import os, sys
from pathlib import Path

BEGIN = "<!-- bench.sh: whole-process -->"
END = "<!-- /bench.sh -->"


def block(report):
    lines = report.read_text().splitlines()
    run = next((l for l in lines if "; commit " in l), None)
    table = [l for l in lines if l.startswith("|")]
    if run is None or len(table) < 3:
        sys.exit(f"bench-readme: {report} has no run line or table")
    return [f"Last run (`scripts/bench.sh`, {run.rstrip('.')}):", ""] + table


def main(argv):
    check = argv[:1] == ["--check"]
    if check:
        argv = argv[1:]
    if len(argv) != 2:
        sys.exit(__doc__)
    report, readme = Path(argv[0]), Path(argv[1])
    new = block(report)
    text = readme.read_text().split("\n")
    try:
        b, e = text.index(BEGIN), text.index(END)
    except ValueError:
        sys.exit(f"bench-readme: {readme} lacks the lines {BEGIN} and {END}")
    if e < b:
        sys.exit(f"bench-readme: {END} comes before {BEGIN} in {readme}")
    if check:
        print(f"bench-readme: {readme} can take the {len(new) - 2}-line table of {report}")
        return
    out = text[:b + 1] + new + text[e:]
    tmp = readme.with_name(f".{readme.name}.bench-{os.getpid()}")
    tmp.write_text("\n".join(out))
    os.replace(tmp, readme)
    print(f"bench-readme: {readme} now quotes {report}")


if __name__ == "__main__":
    main(sys.argv[1:])
