#!/usr/bin/env bash
# Packs the GPU test binaries (and tilesort-bench, if built) of a local sm_90
# build for scripts/gpu-check.sh,
# so that the GPU machine spends its time running them rather than compiling:
#   cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90-real
#   ninja -C build-gpu && scripts/pack-prebuilt.sh        # or BUILD_DIR=build-ci (CI's build: sm_90 + PTX)
#   device run: carry ["third_party/prebuilt"],
#     command "GPU_CHECK_PREBUILT=third_party/prebuilt/tests.tar.xz bash scripts/gpu-check.sh tests"
# The archive must stay under the device tool's 64 MiB carry limit: host
# symbols are stripped and the host tests (CI runs them) left out.
# -DCMAKE_CUDA_ARCHITECTURES=90-real packs to about 38 MB; a 90 build (sm_90 +
# embedded PTX, as CI's) packed to 66.7 MB (2026-11-23), close to the limit.
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(cd "${BUILD_DIR:-build-gpu}" && pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/build-gpu/tests" "$stage/build-gpu/bench" third_party/prebuilt
# Binaries from other build dirs of the same sources may be added first:
# PREBUILT_EXTRA="dir1/tests/gpu_warp_sort ..." (the build's own win).
for extra in ${PREBUILT_EXTRA:-}; do cp "$extra" "$stage/build-gpu/tests/"; done
cp "$build"/tests/gpu_* "$stage/build-gpu/tests/"
[ -x "$build/bench/tilesort-bench" ] && cp "$build/bench/tilesort-bench" "$stage/build-gpu/bench/"
strip --strip-unneeded "$stage"/build-gpu/tests/* "$stage"/build-gpu/bench/* 2>/dev/null || true  # (no bench: its glob stays unmatched)
(cd "$stage" && tar -cf - build-gpu) | xz -9e -T0 >third_party/prebuilt/tests.tar.xz
git rev-parse HEAD >third_party/prebuilt/commit.txt
bytes=$(stat -c %s third_party/prebuilt/tests.tar.xz)
echo "third_party/prebuilt/tests.tar.xz: $bytes bytes (limit $((64 * 1024 * 1024)))"
[ "$bytes" -le $((64 * 1024 * 1024 - 65536)) ] || { echo "too big to carry: try a -DCMAKE_CUDA_ARCHITECTURES=90-real build" >&2; exit 1; }
