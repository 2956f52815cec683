#!/usr/bin/env bash
# Build everything (library headers, tests, examples, benchmark) and run the
# tests, then build and test the Python package (python/) where nanobind,
# scikit-build-core, pytest and numpy are importable (else it says so and
# skips). GPU tests skip with a message where there is no CUDA device.
#   scripts/test.sh            # build dir: build/
#   BUILD_DIR=b scripts/test.sh
#   PYTHON=venv/bin/python3 scripts/test.sh   # the Python that builds and tests the package
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
python=${PYTHON:-python3}
if "$python" -c "import nanobind, scikit_build_core, pytest, numpy" 2>/dev/null; then
  PYTHON="$python" JOBS="$jobs" SITE_DIR="$(cd "$build" && pwd)/python-site" scripts/test-python.sh
else
  echo "test.sh: the Python package is skipped: $python cannot import nanobind, scikit_build_core, pytest and numpy" \
       "(python3 -m pip install nanobind scikit-build-core pytest numpy)"
fi
