#!/usr/bin/env bash
# Build everything (library headers, tests, examples, benchmark) and run the
# tests. GPU tests skip with a message where there is no CUDA device.
#   scripts/test.sh            # build dir: build/
#   BUILD_DIR=b scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
jobs=${JOBS:-$(nproc)}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-}
cmake --build "$build" -j "$jobs"
# Every public header on its own (only when the tests are configured).
if cmake --build "$build" --target help | grep tilesort_header_check >/dev/null; then
  cmake --build "$build" -j "$jobs" --target tilesort_header_check
fi
ctest --test-dir "$build" --output-on-failure -j "$jobs"
