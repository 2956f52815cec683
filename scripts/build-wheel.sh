#!/usr/bin/env bash
# Build a binary wheel of the Python package (python/) for users without nvcc
# or CMake: a fat binary with SASS for sm_80, sm_90 and sm_100 plus PTX for
# compute_100 (JIT-compiled by the driver on newer GPUs), the CUDA runtime
# linked statically (the wheel needs only the NVIDIA driver's libcuda.so.1,
# which the runtime opens at the first CUDA call). The wheel is for the
# Python that builds it (cpXY tag, linux_x86_64: not auditwheel-repaired).
#   scripts/build-wheel.sh                      # online: pip's build isolation fetches the build requirements
#   scripts/build-wheel.sh --offline [DIST]     # no network: nanobind and scikit-build-core importable, e.g.
#     python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl
#     PYTHONPATH=/tmp/site scripts/build-wheel.sh --offline
#   TILESORT_WHEEL_ARCHS=90 scripts/build-wheel.sh   # a quick build (sm_90 + compute_90 PTX)
#   scripts/test-wheel.sh dist/tilesort-*.whl        # install it into a fresh venv and run the tests
# Then `pip install dist/tilesort-*.whl` (the wheel of this Python's tag).
# Knobs: DIST_DIR (default dist/, git-ignored; or the first argument),
#        TILESORT_WHEEL_ARCHS (CMAKE_CUDA_ARCHITECTURES; default 80-real;90-real;100-real;100-virtual),
#        TILESORT_WHEEL_OFFLINE=1 (same as --offline: --no-build-isolation --no-index),
#        TILESORT_WHEEL_NCCL=ON (also build tilesort._nccl; it then needs NCCL's libnccl.so.2 at run time,
#          e.g. torch's; set NCCL_ROOT), JOBS (default nproc), PYTHON (default python3),
#        NVCC_THREADS (default 4: nvcc --threads, the architectures of one translation unit
#          compiled in parallel; the longest unit, not the core count, bounds a many-core build).
# CMake builds in python/build/wheel-<tag>/ (git-ignored), kept between runs: a run cut off
# resumes where it stopped.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
python=${PYTHON:-python3}
offline=${TILESORT_WHEEL_OFFLINE:-0}
if [[ ${1:-} == --offline ]]; then offline=1; shift; fi
dist=${1:-${DIST_DIR:-dist}}
archs=${TILESORT_WHEEL_ARCHS:-80-real;90-real;100-real;100-virtual}
nccl=${TILESORT_WHEEL_NCCL:-OFF}
cuda_flags="${CUDAFLAGS:+$CUDAFLAGS }--threads=${NVCC_THREADS:-4}"
export CMAKE_BUILD_PARALLEL_LEVEL=${JOBS:-$(nproc)}

pip_args=(--no-deps -v)
if [[ $offline == 1 ]]; then pip_args+=(--no-build-isolation --no-index); fi
config=(
  "cmake.define.CMAKE_CUDA_ARCHITECTURES=$archs"
  "cmake.define.TILESORT_PYTHON_NCCL=$nccl"
  "cmake.define.CMAKE_CUDA_FLAGS=$cuda_flags"
  "build-dir=$repo/python/build/wheel-{wheel_tag}"
)
for setting in "${config[@]}"; do pip_args+=("--config-settings=$setting"); done

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
echo "build-wheel: $("$python" --version), CUDA architectures '$archs', _nccl $nccl, offline=$offline," \
     "-j $CMAKE_BUILD_PARALLEL_LEVEL, CUDA flags '$cuda_flags'" >&2
start=$(date +%s)
"$python" -m pip wheel "${pip_args[@]}" --wheel-dir "$stage/wheel" ./python
wheels=("$stage"/wheel/tilesort-*.whl)
[[ ${#wheels[@]} -eq 1 && -f ${wheels[0]} ]] || { echo "build-wheel: expected one tilesort wheel, got: ${wheels[*]}" >&2; exit 1; }
mkdir -p "$dist"
wheel="$(cd "$dist" && pwd)/$(basename "${wheels[0]}")"
mv -f "${wheels[0]}" "$wheel"
echo "build-wheel: built in $(( $(date +%s) - start )) s" >&2

# The extension modules in the wheel: their NEEDED libraries (no libcudart.so:
# the runtime is static) and the GPU code of their fat binaries.
"$python" -m zipfile -e "$wheel" "$stage/unpacked"
status=0
mapfile -t modules < <(find "$stage/unpacked" -name '*.so' | sort)
[[ ${#modules[@]} -gt 0 ]] || { echo "build-wheel: no extension module in $wheel" >&2; exit 1; }
for so in "${modules[@]}"; do
  name=${so#"$stage/unpacked/"}
  if command -v readelf >/dev/null; then
    needed=$(readelf -d "$so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  else
    needed=$(objdump -p "$so" | awk '$1 == "NEEDED" {print $2}')
  fi
  echo "$name ($(stat -c %s "$so") bytes) NEEDED: $(echo $needed)"
  if grep -q '^libcudart\.so' <<<"$needed"; then
    echo "  FAIL: libcudart.so is NEEDED: the CUDA runtime is not linked statically" >&2; status=1
  else
    echo "  ok: no libcudart.so NEEDED (CUDA runtime linked statically)"
  fi
  if command -v cuobjdump >/dev/null; then
    sass=$(cuobjdump --list-elf "$so" 2>/dev/null | grep -o 'sm_[0-9]*[a-z]*' | sort -uV | xargs || true)
    ptx=$(cuobjdump --list-ptx "$so" 2>/dev/null | grep -o 'sm_[0-9]*[a-z]*' | sort -uV | sed 's/sm_/compute_/' | xargs || true)
    echo "  SASS: ${sass:-none}; PTX: ${ptx:-none}"
    IFS=';' read -ra wanted <<<"$archs"
    for arch in "${wanted[@]}"; do
      number=${arch%%-*}
      [[ $number =~ ^[0-9]+[a-z]?$ ]] || continue  # native, all, all-major: nothing to check
      if [[ $arch != *-virtual ]] && ! grep -qw "sm_$number" <<<"$sass"; then
        echo "  FAIL: no sm_$number SASS" >&2; status=1
      fi
      if [[ $arch != *-real ]] && ! grep -qw "compute_$number" <<<"$ptx"; then
        echo "  FAIL: no compute_$number PTX" >&2; status=1
      fi
    done
  else
    echo "  (no cuobjdump on PATH: the fat binary's architectures are not listed)"
  fi
done
echo "wheel: $wheel ($(stat -c %s "$wheel") bytes)"
exit $status
