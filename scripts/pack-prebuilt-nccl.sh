#!/usr/bin/env bash
# Packs the distributed sort's programs (gpu_nccl_sort, example_distributed_sort,
# tilesort-bench-nccl), built here for sm_90, for `scripts/gpu-check.sh nccl`,
# so that the multi-GPU machine runs them instead of compiling them:
#   scripts/pack-prebuilt-nccl.sh              # builds them in build-nccl/ (2 jobs, niced) if needed
#   device run: carry ["third_party/prebuilt-nccl"],
#     command "bash scripts/gpu-check.sh nccl"   (it finds the archive there)
# They link libnccl.so.2 and libcudart.so.13 dynamically: the check points
# LD_LIBRARY_PATH at the NCCL of torch's wheel (nvidia-nccl) or the toolkit's.
# Host symbols are stripped; the archive is a few MB (the limit it checks: 30 MB).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/cuda/bin:$PATH
build=${BUILD_DIR:-build-nccl}
targets=(tests/nccl/gpu_nccl_sort examples/example_distributed_sort bench/nccl/tilesort-bench-nccl)
if [ ! -f "$build/build.ninja" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90-real >/dev/null
fi
nice -n 10 ninja -C "$build" -j "${JOBS:-2}" "${targets[@]}"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/build-nccl-prebuilt" third_party/prebuilt-nccl
for t in "${targets[@]}"; do cp "$build/$t" "$stage/build-nccl-prebuilt/"; done
strip --strip-unneeded "$stage"/build-nccl-prebuilt/*
(cd "$stage" && tar -cf - build-nccl-prebuilt) | xz -9 -T0 >third_party/prebuilt-nccl/nccl.tar.xz
git rev-parse HEAD >third_party/prebuilt-nccl/commit.txt
if ! git diff --quiet HEAD -- include tests/nccl bench/nccl examples/distributed_sort.cu; then
  echo "(the working tree differs from HEAD in the sources: commit.txt names HEAD plus local changes)" |
    tee -a third_party/prebuilt-nccl/commit.txt
fi
bytes=$(stat -c %s third_party/prebuilt-nccl/nccl.tar.xz)
echo "third_party/prebuilt-nccl/nccl.tar.xz: $bytes bytes ($(cat third_party/prebuilt-nccl/commit.txt | head -1))"
[ "$bytes" -le $((30 * 1024 * 1024)) ] || { echo "too big to carry comfortably (over 30 MB)" >&2; exit 1; }
