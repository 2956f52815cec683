#!/usr/bin/env bash
# Packs the test binaries of a local sm_90 build for scripts/gpu-check.sh, so
# the GPU machine spends its time running them rather than compiling them:
#   cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90
#   ninja -C build-gpu && scripts/pack-prebuilt.sh        # or BUILD_DIR=build-ci (CI's build: also sm_90)
#   device run: carry ["third_party/prebuilt"],
#     command "GPU_CHECK_PREBUILT=third_party/prebuilt/tests.tar.xz bash scripts/gpu-check.sh"
# The archive must stay under the device tool's 64 MiB carry limit.
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(cd "${BUILD_DIR:-build-gpu}" && pwd)
mkdir -p third_party/prebuilt
(cd "$build" && tar -cf - --transform 's,^,build-gpu/,' tests/gpu_* tests/host_*) | xz -9 -T0 >third_party/prebuilt/tests.tar.xz
git rev-parse HEAD >third_party/prebuilt/commit.txt
ls -la third_party/prebuilt/tests.tar.xz
