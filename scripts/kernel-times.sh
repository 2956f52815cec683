#!/usr/bin/env bash
# Where the time of one benchmark case goes, kernel by kernel: runs
# tilesort-bench under Nsight Compute (one metric, gpu__time_duration, clocks
# left alone) and prints, per kernel name, how many launches there were and
# their mean and total time. For the GPU machine (device tool), after
# scripts/gpu-check.sh has built the benchmark:
#   scripts/kernel-times.sh --family merge --types u32 --sizes 2^24 --dist random
#   scripts/kernel-times.sh --family segments --cases 18    (one case, numbered as --list)
# The arguments go to tilesort-bench, which runs them in this process
# (--inline), once (--reps 1 --warmups 0). Every implementation of the case
# runs, CUB's too, so its kernels show beside ours. ncu runs each kernel on its
# own, so short kernels read a few microseconds longer than in a stream;
# compare kernels with each other, and time whole sorts with tilesort-bench.
# BENCH=path overrides the benchmark binary (default build-gpu/bench/tilesort-bench).
# The Python benchmark the same way (the package importable, e.g. PYTHONPATH
# set as scripts/gpu-check.sh python does; torch's kernels show beside ours):
#   scripts/kernel-times.sh python --family rows --types int32 --lengths 300 --against torch
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = python ]; then
  shift
  command=(python3 -m tilesort.bench --reps 1 --warmups 0 "$@")
else
  bench=${BENCH:-build-gpu/bench/tilesort-bench}
  [ -x "$bench" ] || { echo "no benchmark at $bench (run scripts/gpu-check.sh first, or set BENCH)" >&2; exit 2; }
  command=("$bench" --inline --reps 1 --warmups 0 "$@")
fi
csv=$(mktemp)
trap 'rm -f "$csv"' EXIT
ncu --clock-control none --metrics gpu__time_duration.sum --csv "${command[@]}" \
  >"$csv" 2>/dev/null || { echo "ncu failed; run it by hand to see why" >&2; exit 1; }
python3 - "$csv" <<'PY'
import collections
import csv
import sys

scale = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3}
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
if len(rows) < 2:
    sys.exit("no kernels were profiled")
head = rows[0]
name_at, value_at, unit_at = head.index("Kernel Name"), head.index("Metric Value"), head.index("Metric Unit")
kernels = collections.OrderedDict()
for r in rows[1:]:
    name = r[name_at].split("(")[0].split("<")[0].replace("void ", "")
    us = float(r[value_at].replace(",", "")) * scale[r[unit_at]]
    count, total = kernels.get(name, (0, 0.0))
    kernels[name] = (count + 1, total + us)
print("%-60s %8s %12s %12s" % ("kernel (launch order)", "launches", "mean us", "total us"))
for name, (count, total) in kernels.items():
    print("%-60s %8d %12.1f %12.1f" % (name[-60:], count, total / count, total))
PY
