#!/usr/bin/env bash
# Consumer check: the two ways the README says to use tilesort from CMake.
# 1. `cmake --install` into a temporary prefix, then build
#    tests/consumer/find_package (find_package(tilesort)) against it;
# 2. build tests/consumer/add_subdirectory (add_subdirectory(<this tree>)).
# Each builds and runs a program that calls tilesort::merge_sort_keys (without
# a GPU it says so and exits 0).
#   scripts/check-consumers.sh
#   BUILD_DIR=build-consumers CUDA_ARCHITECTURES=90 scripts/check-consumers.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/cuda/bin:$PATH
root=$PWD
out=$root/${BUILD_DIR:-build-consumers}
archs=${CUDA_ARCHITECTURES:-90}
rm -rf "$out"

step() { echo "== check-consumers: $*"; }
step "install into $out/prefix"
cmake -S . -B "$out/library" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$archs" \
  -DTILESORT_BUILD_TESTS=OFF -DTILESORT_BUILD_EXAMPLES=OFF -DTILESORT_BUILD_BENCH=OFF \
  -DCMAKE_INSTALL_PREFIX="$out/prefix" >/dev/null
cmake --build "$out/library" >/dev/null
cmake --install "$out/library" >/dev/null

step "find_package(tilesort)"
cmake -S tests/consumer/find_package -B "$out/find_package" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_ARCHITECTURES="$archs" -DCMAKE_PREFIX_PATH="$out/prefix" >/dev/null
cmake --build "$out/find_package"
"$out/find_package/consumer"

step "add_subdirectory(tilesort)"
cmake -S tests/consumer/add_subdirectory -B "$out/add_subdirectory" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_ARCHITECTURES="$archs" -DTILESORT_SOURCE_DIR="$root" >/dev/null
cmake --build "$out/add_subdirectory"
"$out/add_subdirectory/consumer"

echo "check-consumers: find_package and add_subdirectory consumers built and ran"
