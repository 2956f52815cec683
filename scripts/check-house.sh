#!/usr/bin/env bash
# The house rules a script can check (CI runs it; docs/design.md says why):
#   * headers are contracts: no date (2026-11-27), no commit hash (7-40 hex
#     digits with a digit and a letter, or any after the word "commit") and no
#     GPU name (H100, A100, RTX 4090, ...) in include/ or python/src; a
#     measurement's GPU, date and commit belong in docs/tuning/;
#   * includes go only downward: a file under include/tilesort/ includes
#     nothing of a higher level (host, distributed > device > block > warp >
#     thread > detail;
#     comparators.cuh and tilesort.cuh at the top are outside the ladder);
#   * no header (include/, python/src) over 800 lines.
# Prints every violation as file:line: what, and exits 1 if there is one.
#   scripts/check-house.sh
set -euo pipefail
cd "$(dirname "$0")/.."
python3 - <<'PY'
import os, re, sys

roots = ["include", "python/src"]
header_ext = (".cuh", ".h", ".hpp")
source_ext = header_ext + (".cu", ".cpp", ".cc")
max_lines = 800
levels = {"detail": 1, "thread": 2, "warp": 3, "block": 4, "device": 5, "distributed": 6, "host": 6}

date = re.compile(r"\b(19|20)\d\d-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])\b")
hex_word = re.compile(r"(?<![0-9A-Za-z_])(?<!0x)(?<!0X)[0-9a-f]{7,40}(?![0-9A-Za-z_])")
after_commit = re.compile(r"\bcommits?\s+[0-9a-f]{7,40}\b", re.I)
gpu = re.compile(r"\b(H100|H200|H800|H20|GH200|GB200|B100|B200|A100|A800|A40|A30|A10G?|L40S?|L4|V100|P100|T4|"
                 r"RTX\s?(A?\d{4})|GeForce|Quadro|Tesla|Titan)\b")
include = re.compile(r'^\s*#\s*include\s+"([^"]+)"')

problems = []
def report(path, line, what):
    problems.append(f"{path}:{line}: {what}")

def level_of(rel):  # rel: path under include/tilesort
    first = rel.split("/", 1)[0]
    return levels.get(first) if "/" in rel else None

for root in roots:
    for dirpath, _, files in os.walk(root):
        for name in sorted(files):
            if not name.endswith(source_ext):
                continue
            path = os.path.join(dirpath, name)
            with open(path, encoding="utf-8", errors="replace") as f:
                lines = f.read().split("\n")
            if lines and lines[-1] == "":
                lines.pop()
            if name.endswith(header_ext) and len(lines) > max_lines:
                report(path, len(lines), f"header of {len(lines)} lines (at most {max_lines}): split it")
            for number, text in enumerate(lines, 1):
                if date.search(text):
                    report(path, number, f"a date ({date.search(text).group(0)}): measurements go to docs/tuning/")
                hashes = [w for w in hex_word.findall(text) if re.search(r"\d", w) and re.search(r"[a-f]", w)]
                if hashes or after_commit.search(text):
                    found = hashes[0] if hashes else after_commit.search(text).group(0)
                    report(path, number, f"a commit hash ({found}): measurements go to docs/tuning/")
                if gpu.search(text):
                    report(path, number, f"a GPU name ({gpu.search(text).group(0)}): measurements go to docs/tuning/")
            if not path.startswith(os.path.join("include", "tilesort") + os.sep):
                continue
            rel = os.path.relpath(path, os.path.join("include", "tilesort")).replace(os.sep, "/")
            mine = level_of(rel)
            if mine is None:
                continue
            for number, text in enumerate(lines, 1):
                m = include.match(text)
                if not m:
                    continue
                target = os.path.normpath(os.path.join(os.path.dirname(rel), m.group(1))).replace(os.sep, "/")
                theirs = level_of(target)
                if theirs is not None and theirs > mine:
                    report(path, number, f"upward include of {target} ({target.split('/')[0]} is above "
                                         f"{rel.split('/')[0]}): move what it needs down")

for p in problems:
    print(p)
print(f"check-house: {len(problems)} problem(s)" if problems else "check-house: ok")
sys.exit(1 if problems else 0)
PY
