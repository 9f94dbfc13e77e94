#!/usr/bin/env python3
"""Copies the whole-process table that scripts/bench.py measured into the README.

    scripts/bench-readme.py REPORT.md README.md          # replace the README's table
    scripts/bench-readme.py --check REPORT.md README.md  # only check both can be spliced
    scripts/bench-readme.py --section NAME [--check] REPORT.md README.md

`--section NAME` copies another block instead: the lines REPORT.md has between
`<!-- bench.sh: NAME -->` and `<!-- /bench.sh -->` (a bench that prints its own table
between those lines, e.g. scripts/bench-editors.py's `editors`) go between the same lines
of the README.

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


def section(report, begin):
    """The last block of REPORT.md between `begin` and END."""
    lines = report.read_text().splitlines()
    starts = [i for i, l in enumerate(lines) if l == begin]
    ends = [i for i, l in enumerate(lines) if l == END and starts and i > starts[-1]]
    if not starts or not ends or ends[0] - starts[-1] < 4:
        sys.exit(f"bench-readme: {report} has no table between {begin} and {END}")
    return lines[starts[-1] + 1:ends[0]]


def block(report):
    lines = report.read_text().splitlines()
    run = next((l for l in lines if "; commit " in l), None)
    table = [l for l in lines if l.startswith("|")]
    if run is None or len(table) < 3:
        sys.exit(f"bench-readme: {report} has no run line or table")
    return [f"Last run (`scripts/bench.sh`, {run.rstrip('.')}):", ""] + table


def main(argv):
    begin, name = BEGIN, None
    if argv[:1] == ["--section"] and len(argv) > 1:
        name, argv = argv[1], argv[2:]
        begin = f"<!-- bench.sh: {name} -->"
    check = argv[:1] == ["--check"]
    if check:
        argv = argv[1:]
    if len(argv) != 2:
        sys.exit(__doc__)
    report, readme = Path(argv[0]), Path(argv[1])
    new = section(report, begin) if name else block(report)
    text = readme.read_text().split("\n")
    try:
        b = text.index(begin)
        e = text.index(END, b)
    except ValueError:
        sys.exit(f"bench-readme: {readme} lacks the lines {begin} and {END} after it")
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
