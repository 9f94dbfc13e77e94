#!/usr/bin/env python3
"""Writes tests/oracle/generated-corpus.txt: every argument of the hand-written corpus
(tests/oracle/mainline-corpus.txt) under every probe flavour, and a few probe places
under every flavour, so that each error path is reached from each kind of probe (the
kernel words some errors differently per flavour: `%reg` on an fprobe or a tprobe is
BAD_VAR on 6.12, BAD_FETCH_ARG on a kprobe...). Each generated definition is followed by
its removal, so that one line's event never changes the next line's verdict.

Deterministic; run from anywhere: oracle/generate-corpus.py (then oracle/record.sh)."""
import os

here = os.path.dirname(os.path.abspath(__file__))
corpus = os.path.join(here, "..", "tests", "oracle", "mainline-corpus.txt")
out = os.path.join(here, "..", "tests", "oracle", "generated-corpus.txt")

# (prefix, place) per flavour: kprobe, kretprobe, fprobe, fprobe exit, tprobe.
FLAVOURS = [("p", "vfs_read"), ("r", "vfs_read"), ("f", "vfs_read"), ("f", "vfs_read%return"), ("t", "kfree")]
# Places: a non-unique symbol, an unknown one, offsets, a module symbol, an address.
PLACES = ["name_show", "no_such_function_x", "vfs_read+0", "vfs_read+4", "vfs_read+1",
          "vfs_read+0x10000000", "vfs_read-4", "ext4:ext4_file_open", "0x1000", "name_show%return",
          "do_sys_openat2", "do_sys_openat2+4", "kfree", "sched_switch", "__x64_sys_openat"]

args = []
seen = set()
for line in open(corpus):
    words = line.split()
    if len(words) < 3 or words[0][0] not in "prft" or words[0] == "t1":
        continue
    for a in words[2:]:
        if a not in seen:
            seen.add(a)
            args.append(a)

lines = []
n = 0
def add(prefix, place, arg):
    global n
    n += 1
    event = f"gen/e{n}"
    lines.append(f"{prefix}:{event} {place}{(' ' + arg) if arg else ''}")
    lines.append(f"-:{event}")

for prefix, place in FLAVOURS:
    for a in args:
        add(prefix, place, a)
for prefix in ["p", "r", "f", "t"]:
    for place in PLACES:
        add(prefix, place, "")
with open(out, "w") as f:
    f.write("\n".join(lines) + "\n")
print(f"{out}: {n} definitions ({len(args)} arguments x {len(FLAVOURS)} flavours, {len(PLACES)} places x 4)")
