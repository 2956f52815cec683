#!/usr/bin/env bash
# Build and run the demos: one warp sorts 32 keys, a block sorts tiles, and
# a batch of rows is sorted with the uniform segmented sort. Without a GPU
# each demo says so and exits cleanly.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTILESORT_BUILD_TESTS=OFF -DTILESORT_BUILD_BENCH=OFF ${CMAKE_ARGS:-}
cmake --build "$build" -j "${JOBS:-$(nproc)}"
for demo in warp_sort_demo block_sort batched_rows; do
  echo "== example_$demo"
  "$build/examples/example_$demo"
done
