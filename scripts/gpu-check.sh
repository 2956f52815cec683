#!/usr/bin/env bash
# The GPU machine's check, in phases that each fit one 10-minute command of
# the device tool (a fresh machine's build, about 215 s, included):
#
#   scripts/gpu-check.sh tests                  build if needed, run every test binary
#   scripts/gpu-check.sh sanitize TOOL [K/M]    compute-sanitizer TOOL (memcheck, racecheck,
#                                               synccheck) on the small runs, part K of M
#   scripts/gpu-check.sh bench [ARGS...]        build if needed, tilesort-bench ARGS (default --quick)
#   scripts/gpu-check.sh python [bench ARGS]    build and test the Python package (python/), or
#                                               run its example and benchmark
#   scripts/gpu-check.sh wheel [bench ARGS]     the wheel of python3's tag from dist/ (carried), else
#                                               built (sm_80/90/100 + PTX; about 280 s on 16 cores),
#                                               installed into a fresh venv with no nvcc or cmake on
#                                               PATH, the package's tests run there; with bench, then
#                                               the Python benchmark from that venv. A release wheel
#                                               (57 MB) with the tree and .whl/ passes the device
#                                               tool's 64 MiB carry only without docs/bench (move it
#                                               aside for the call)
#   scripts/gpu-check.sh all                    every phase in turn (no time limit of its own)
#   scripts/gpu-check.sh nccl [cpp|python]      the distributed sort on every GPU (2 or 4): its tests,
#                                               example, benchmark and Python test (see run_nccl)
#   scripts/gpu-check.sh host                   the host sort alone (host/host_sort.cuh): builds only its
#                                               tests and the benchmark, runs the tests
#   scripts/gpu-check.sh host memcheck          compute-sanitizer memcheck on its tests' small cases
#   scripts/gpu-check.sh host bench [ARGS...]   tilesort-bench --family host (default: 2^22 and 2^26
#                                               keys in a 64 MiB budget; ARGS replace them)
#
# The parts that cover everything: sanitize memcheck, sanitize synccheck,
# sanitize racecheck 1/4 to 4/4. Each phase ends with a summary that
# says what it checked and, plainly, what it did not (a sanitizer job cut off
# by the deadline is "NOT CHECKED"). Full logs and the benchmark JSON go to
# $OUT (the device tool brings them back).
#
# That machine has no network and no GoogleTest: carry its source, e.g.
#   mkdir -p third_party && cp -r /usr/src/googletest third_party/   (ignored by git)
#   device run: carry ["third_party"], command "bash scripts/gpu-check.sh tests"
# A warm machine keeps build-gpu/ between calls, so the next phase starts at
# once. Test binaries built here (scripts/pack-prebuilt.sh) skip the device's
# compile: GPU_CHECK_PREBUILT=third_party/prebuilt/tests.tar.xz.
# Knobs: GPU_CHECK_TESTS=regex (test binaries to run or sanitize),
#        GPU_CHECK_COMMIT=hash (named in the summary: the device's copy has no .git),
#        GPU_CHECK_DEADLINE=seconds (default 570: the phase stops its jobs then).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-check-out}
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
deadline=${GPU_CHECK_DEADLINE:-570}
left() { local l=$((deadline - SECONDS)); echo $((l > 5 ? l : 5)); }
summary=()
note() { summary+=("$*"); echo "## $*"; }
finish() {
  echo
  echo "==================== gpu-check $phase summary"
  printf '%s\n' "${summary[@]}" | tee -a "$OUT/summary.txt"
  # The device tool brings back 8 files of $OUT at most: past that, everything but the summary goes
  # into one archive.
  if [ "$(find "$OUT" -mindepth 1 -maxdepth 1 | wc -l)" -gt 8 ]; then
    (cd "$OUT" && tar czf ../gpu-check-all.tgz --exclude=summary.txt . &&
      find . -mindepth 1 -maxdepth 1 ! -name summary.txt -exec rm -rf {} + && mv ../gpu-check-all.tgz .)
  fi
}

# ------------------------------------------------------------------ build
configure() {
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 "$@" >>"$OUT/build.log" 2>&1
}
# Builds what is missing (a warm machine's second phase finds it built). The
# tests come from a prebuilt archive when one is given.
build() {  # build tests|bench|host_sort...
  [ -n "${GPU_CHECK_BUILT:-}" ] && return 0
  local start=$SECONDS gtest_dir=third_party/googletest targets=() t
  [ -f $gtest_dir/CMakeLists.txt ] || gtest_dir=/usr/src/googletest
  if [ -n "${GPU_CHECK_PREBUILT:-}" ] && [ -f "$GPU_CHECK_PREBUILT" ]; then
    if [ ! -d build-gpu/tests ]; then
      tar -xJf "$GPU_CHECK_PREBUILT"
      note "build: test binaries from $GPU_CHECK_PREBUILT (commit $(cat "$(dirname "$GPU_CHECK_PREBUILT")/commit.txt" 2>/dev/null || echo unknown))"
    fi
    for t in "$@"; do
      [ "$t" = tests ] || [ "$t" = host_sort ] || { [ "$t" = bench ] && [ -x build-gpu/bench/tilesort-bench ]; } ||
        targets+=("$t")
    done
    [ ${#targets[@]} -eq 0 ] && return 0
    [ -f build-gpu/build.ninja ] ||
      configure -DTILESORT_BUILD_TESTS=OFF -DTILESORT_BUILD_EXAMPLES=OFF || { note "build: configure FAILED, see build.log"; return 1; }
    set -- "${targets[@]}"
    targets=()
  else
    configure -DTILESORT_GTEST_SOURCE_DIR="$PWD/$gtest_dir" || { note "build: configure FAILED, see build.log"; return 1; }
  fi
  for t in "$@"; do
    case $t in
      tests) targets+=($(ninja -C build-gpu -t targets all | grep -oE '^tests/(gpu|host)_[a-z_]+' | sort -u)) ;;
      bench) targets+=(tilesort-bench) ;;
      host_sort) targets+=($(ninja -C build-gpu -t targets all | grep -oE '^tests/(gpu|host)_host_sort[a-z_]*' | sort -u)) ;;
    esac
  done
  if ninja -C build-gpu -j "$(nproc)" -k 0 "${targets[@]}" >>"$OUT/build.log" 2>&1; then
    note "build: ok ($((SECONDS - start)) s: $*)"
  else
    note "build: FAILED ($((SECONDS - start)) s), see build.log"
    grep -E "error|FAILED" "$OUT/build.log" | head -30
    return 1
  fi
}
selected() { [ -x "$1" ] && { [ -z "${GPU_CHECK_TESTS:-}" ] || [[ $(basename "$1") =~ $GPU_CHECK_TESTS ]]; }; }

# ------------------------------------------------------------------ tests
# Each binary directly (all at once: their time goes mostly to host-side
# inputs and reference sorts), so the summary counts gtest's results.
run_tests() {
  build tests || return
  local start=$SECONDS pids=() t
  mkdir -p "$OUT/tests"
  for t in build-gpu/tests/host_* build-gpu/tests/gpu_*; do
    selected "$t" || continue
    (timeout "$(left)" "$t" >"$OUT/tests/$(basename "$t").log" 2>&1; echo $? >"$OUT/tests/$(basename "$t").rc") &
    pids+=($!)
  done
  [ ${#pids[@]} -gt 0 ] && wait "${pids[@]}"
  local total_pass=0 total_fail=0 total_skip=0 log name rc pass fail skip
  for log in "$OUT"/tests/*.log; do
    [ -f "$log" ] || continue
    name=$(basename "$log" .log)
    rc=$(cat "$OUT/tests/$name.rc"); rm -f "$OUT/tests/$name.rc"
    pass=$(grep -oE "^\[  PASSED  \] [0-9]+" "$log" | grep -oE "[0-9]+$" || echo 0)
    fail=$(grep -oE "^\[  FAILED  \] [0-9]+ tests?, listed below" "$log" | grep -oE "[0-9]+" || echo 0)
    skip=$(grep -oE "^\[  SKIPPED \] [0-9]+" "$log" | grep -oE "[0-9]+$" || echo 0)
    total_pass=$((total_pass + ${pass:-0})); total_fail=$((total_fail + ${fail:-0})); total_skip=$((total_skip + ${skip:-0}))
    [ "$rc" = 124 ] && rc="124 (TIMED OUT: not every test ran)"
    note "test $name: rc=$rc passed=${pass:-0} failed=${fail:-0} skipped=${skip:-0}"
    [ "${fail:-0}" -gt 0 ] && grep -E "^\[  FAILED  \] [A-Za-z_].* \([0-9]+ ms\)$" "$log" | head -8
  done
  note "tests: $total_pass passed, $total_fail failed, $total_skip skipped ($((SECONDS - start)) s)"
  (cd "$OUT" && tar czf test-logs.tgz tests && rm -rf tests)
}

# ------------------------------------------------------------------ sanitize
# The jobs of one tool: (binary, gtest shard of S) pairs; big binaries are cut
# into shards so that every job is short. Part K of M takes every M-th job.
# Left out everywhere: the tests that make an allocation fail on purpose (the
# sanitizer reports the failed cudaMallocAsync as an API error).
shards_of() {  # shards_of TOOL BINARY
  case "$1 $2" in
    "racecheck gpu_merge_sort") echo 12 ;;
    "racecheck gpu_bitonic_sort") echo 20 ;;
    "racecheck gpu_segmented_sort") echo 6 ;;
    "racecheck gpu_radix_sort"|"racecheck gpu_radix_sort_pairs") echo 9 ;;  # 3 shards ran past 508 s (2026-11-28, before TILESORT_TEST_RACECHECK)
    "racecheck gpu_radix_hybrid") echo 6 ;;  # 3 shards took up to 337 s beside the other radix binaries
    "racecheck gpu_"*) echo 3 ;;
    "memcheck gpu_segmented_sort") echo 6 ;;
    "memcheck gpu_segmented_uniform") echo 4 ;;
    "memcheck gpu_radix_"*) echo 3 ;;  # one job each ran past 250 s beside racecheck (2026-12-03)
    *" gpu_merge_sort") echo 3 ;;
    *" gpu_segmented_sort"|*" gpu_bitonic_sort") echo 2 ;;
    *) echo 1 ;;
  esac
}
run_sanitize() {  # run_sanitize TOOL [K/M]
  local tool=$1 part=${2:-1/1}
  local k=${part%/*} m=${part#*/}
  case $tool in memcheck|racecheck|synccheck) ;; *) echo "unknown sanitizer tool: $tool" >&2; exit 2 ;; esac
  build tests || return
  local start=$SECONDS jobs=() pids=() index=0 t s shards log
  mkdir -p "$OUT/sanitizer"
  for t in build-gpu/tests/gpu_*; do
    selected "$t" || continue
    shards=$(shards_of "$tool" "$(basename "$t")")
    for ((s = 0; s < shards; ++s)); do
      index=$((index + 1))
      [ $(((index - 1) % m)) -eq $((k - 1)) ] || continue
      log="$OUT/sanitizer/$tool-$(basename "$t")-$s.log"
      (TILESORT_TEST_SMALL=1 TILESORT_TEST_RACECHECK=$([ "$tool" = racecheck ] && echo 1 || echo 0) GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$s timeout "$(left)" \
         compute-sanitizer --tool "$tool" --error-exitcode 9 "$t" \
         "--gtest_filter=-*FailedAllocation*:*ConvenienceOverloadsLeakNothing*" \
         >"$log" 2>&1; echo "$? $((SECONDS - start))" >"$log.rc") &
      pids+=($!)
      jobs+=("$(basename "$t") $s/$shards $log")
    done
  done
  [ ${#pids[@]} -gt 0 ] && wait "${pids[@]}"
  local clean=0 unchecked=0 failed=0 job rc took res tests
  for job in "${jobs[@]}"; do
    set -- $job
    read -r rc took <"$3.rc"; rm -f "$3.rc"
    case $rc in
      0) res=clean; clean=$((clean + 1)) ;;
      124) res="TIMED OUT: NOT CHECKED"; unchecked=$((unchecked + 1)) ;;
      9) res="ERRORS: $(grep -m1 -E "ERROR SUMMARY|hazard" "$3")"; failed=$((failed + 1)) ;;
      *) res="rc=$rc (see log)"; failed=$((failed + 1)) ;;
    esac
    tests=$(grep -oE "^\[==========\] [0-9]+ tests" "$3" | grep -oE "[0-9]+" | head -1)
    note "sanitizer $tool $1 shard $2: $res (${tests:-?} tests, ${took} s)"
  done
  note "sanitizer $tool part $part: ${#jobs[@]} jobs, $clean clean, $failed with errors, $unchecked not checked ($((SECONDS - start)) s)"
  (cd "$OUT" && tar czf "sanitizer-$tool-${k}of$m.tgz" sanitizer && rm -rf sanitizer)
}

# ------------------------------------------------------------------ bench
run_bench() {
  build bench || return
  local start=$SECONDS args=("$@")
  [ ${#args[@]} -gt 0 ] || args=(--quick)
  timeout "$(left)" build-gpu/bench/tilesort-bench "${args[@]}" --json "$OUT/bench.json" \
    >"$OUT/bench.txt" 2>"$OUT/bench.err"
  local rc=$?
  [ $rc = 124 ] && rc="124 (TIMED OUT: the table is cut short)"
  note "bench ${args[*]}: rc=$rc ($((SECONDS - start)) s)"
  cat "$OUT/bench.txt"
}

# ------------------------------------------------------------------ host
# The host sort's checks without the rest of the suite: its test binaries and
# the benchmark are all that is built (GPU_CHECK_BUILT makes the phases
# below skip their own build).
run_host() {  # run_host [memcheck | bench [ARGS...]]
  export GPU_CHECK_TESTS=${GPU_CHECK_TESTS:-host_sort}
  case ${1:-} in
    memcheck)
      build host_sort || return
      GPU_CHECK_BUILT=1 run_sanitize memcheck ;;
    bench)
      shift
      build bench || return
      [ $# -gt 0 ] || set -- --family host --sizes 2^22,2^26 --host-budget 2^26 --reps 2
      GPU_CHECK_BUILT=1 run_bench "$@" ;;
    *)
      build host_sort bench || return
      GPU_CHECK_BUILT=1 run_tests ;;
  esac
}

# ------------------------------------------------------------------ python
# The wheels the build needs (nanobind, scikit-build-core, pytest) travel in
# .whl/ (scripts/fetch-python-wheels.sh): that machine has no network.
install_carried_wheels() {  # install_carried_wheels LOG: the wheels of .whl/ into /tmp/site, if carried
  [ -d .whl ] || return 1
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl >>"$1" 2>&1
}
# The Python benchmark with PYTHON in DIR, its table after the caller's note
# (timed from the caller's $start).
python_bench() {  # python_bench LABEL DIR PYTHON [ARGS...]
  local label=$1 dir=$2 python=$3 rc
  shift 3
  (cd "$dir" && timeout "$(left)" "$python" -m tilesort.bench --json "$OUT/python-bench.json" "$@" \
    >"$OUT/python-bench.txt" 2>"$OUT/python-bench.err")
  rc=$?
  [ $rc = 124 ] && rc="124 (TIMED OUT: the table is cut short)"
  note "$label $*: rc=$rc ($((SECONDS - start)) s)"
  cat "$OUT/python-bench.txt"
}
run_python() {  # run_python [bench ARGS...]
  local start=$SECONDS rc
  if [ ! -x scripts/test-python.sh ]; then note "python: no python package here (scripts/test-python.sh)"; return; fi
  install_carried_wheels "$OUT/python.log" && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
  if [ "${1:-}" != bench ]; then
    timeout "$(left)" scripts/test-python.sh -q -ra --tb=short -p no:cacheprovider >>"$OUT/python.log" 2>&1
    rc=$?
    note "python tests: rc=$rc, $(grep -E "[0-9]+ (passed|failed)" "$OUT/python.log" | tail -1) ($((SECONDS - start)) s)"
    grep -E "^(FAILED|ERROR) " "$OUT/python.log" | head -20
    return
  fi
  shift
  start=$SECONDS
  export PYTHONPATH=$PWD/build-python/site${PYTHONPATH:+:$PYTHONPATH}
  [ -d build-python/site ] || timeout "$(left)" scripts/test-python.sh --co -q >>"$OUT/python.log" 2>&1
  python3 python/examples/ragged_rows.py >>"$OUT/python.log" 2>&1
  note "python example: rc=$?"
  python_bench "python bench" . python3 "$@"
}

# ------------------------------------------------------------------ wheel
# The wheel of python3's tag in dist/ (e.g. the cp312 one of a release set
# from scripts/build-wheel.sh --all-pythons, carried), else one built here by
# scripts/build-wheel.sh offline (nanobind and scikit-build-core from .whl/);
# then scripts/test-wheel.sh: a fresh venv, the wheel installed as a user
# would, the package's tests. A warm machine keeps dist/ and skips the build.
run_wheel() {  # run_wheel [bench ARGS...]
  local start=$SECONDS rc wheel venv tag
  install_carried_wheels "$OUT/wheel.log"
  tag=$(python3 -c "import sys; print(f'cp{sys.version_info[0]}{sys.version_info[1]}')")
  wheel=$(ls dist/tilesort-*-"$tag"-"$tag"-*.whl 2>/dev/null | head -1)
  if [ -z "$wheel" ]; then
    PYTHONPATH=/tmp/site timeout "$(left)" scripts/build-wheel.sh --offline >>"$OUT/wheel.log" 2>&1
    rc=$?
    wheel=$(ls dist/tilesort-*-"$tag"-"$tag"-*.whl 2>/dev/null | head -1)
    note "wheel build: rc=$rc, ${wheel:-no wheel} ($((SECONDS - start)) s)"
    [ -n "$wheel" ] || return
  fi
  OUT=$OUT KEEP_VENV=1 timeout "$(left)" scripts/test-wheel.sh "$wheel" -q --tb=short >"$OUT/test-wheel.out" 2>&1
  rc=$?
  note "wheel tests (fresh venv): rc=$rc, $(grep -E "[0-9]+ (passed|failed)" "$OUT/test-wheel.out" | tail -1)"
  grep -E "^(FAILED|ERROR) " "$OUT/test-wheel.out" | head -20
  [ "${1:-}" = bench ] || return
  shift
  venv=$(grep -oE "keeping [^ ]+" "$OUT/test-wheel.out" | head -1 | cut -d' ' -f2)/venv/bin/python
  python_bench "python bench (the wheel)" /tmp "$venv" "$@"
}

# ------------------------------------------------------------------ nccl
# The distributed sort (tilesort::nccl) on every GPU of the machine, each step
# with its own time limit, about 5 minutes in all on 4 GPUs:
#   gpu_nccl_sort            its GPU tests: one process with a thread per GPU
#                            (2..G ranks), and one process per GPU;
#   example_distributed_sort 2^24 keys per GPU, the global check;
#   tilesort-bench-nccl      strong scaling (2^28, 2^29, 2^30 u32 keys, u64 keys,
#                            u32 pairs over 1, 2, 4 GPUs), weak scaling (2^28 per
#                            GPU), phase times, NCCL's all-to-all of the same bytes
#                            (nccl-bench.json, nccl-bench.txt);
#   python/tests/test_distributed.py under torchrun --nproc-per-node 2 (and 4 where
#                            there are 4 GPUs), when
#                            torch, nanobind and scikit-build-core are there (its
#                            two extension modules build in the background meanwhile).
# `nccl cpp` runs the C++ steps alone, `nccl python` the Python build and test
# alone (a warm machine keeps build-python-nccl/, so a second run starts at once).
# The C++ programs come from third_party/prebuilt-nccl/nccl.tar.xz
# (scripts/pack-prebuilt-nccl.sh; or GPU_CHECK_NCCL_PREBUILT=path), else they
# are built here (with third_party/googletest carried). They run against the
# NCCL of torch's wheel (nvidia-nccl), else the toolkit's. NVLink multicast
# stays off in everything started (NCCL_NVLS_ENABLE=0). Knobs:
# GPU_CHECK_NCCL_BENCH="ARGS" (tilesort-bench-nccl's arguments),
# GPU_CHECK_NCCL_SITE=dir (a package site with tilesort._nccl built elsewhere: no build here),
# GPU_CHECK_DRY_RUN=1 (print the steps, run nothing: for a machine without GPUs).
nccl_wheel_root() {  # the folder of torch's nvidia-nccl wheel, if any
  python3 -c "import nvidia.nccl as n; print(list(n.__path__)[0])" 2>/dev/null
}
nccl_library_dir() {
  local d
  for d in "$(nccl_wheel_root)/lib" /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/targets/x86_64-linux/lib; do
    [ -f "$d/libnccl.so.2" ] && { echo "$d"; return; }
  done
}
# nccl_step NAME LIMIT LOG COMMAND...: runs within LIMIT seconds (and the phase deadline);
# sets step_rc (124: timed out).
nccl_step() {
  local name=$1 limit=$2 log=$3 t
  shift 3
  t=$(left)
  [ "$limit" -lt "$t" ] && t=$limit
  echo "== nccl $name (limit ${t} s): $*"
  if [ "${GPU_CHECK_DRY_RUN:-0}" = 1 ]; then
    step_rc="dry run"
    return
  fi
  timeout "$t" "$@" >"$log" 2>&1
  step_rc=$?
  [ "$step_rc" = 124 ] && step_rc="124 (TIMED OUT)"
}
nccl_python_build() {  # tilesort._ext and tilesort._nccl into build-python-nccl/site (plain CMake)
  local wheel jobs=$(( $(nproc) > 10 ? $(nproc) - 8 : 2 ))  # (14 units of several minutes each: all at once)
  python3 -c "import torch, nanobind, scikit_build_core" || return 3
  wheel=$(nccl_wheel_root)
  cmake -S python -B build-python-nccl -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DPython_EXECUTABLE="$(command -v python3)" -Dnanobind_DIR="$(python3 -m nanobind --cmake_dir)" \
    ${wheel:+-DNCCL_ROOT="$wheel"} &&
    nice -n 10 ninja -C build-python-nccl -j "$jobs" _ext _nccl &&
    mkdir -p build-python-nccl/site/tilesort &&
    cp python/tilesort/*.py build-python-nccl/site/tilesort/ &&
    cp build-python-nccl/_ext*.so build-python-nccl/_nccl*.so build-python-nccl/site/tilesort/
}
nccl_cpp_steps() {  # the tests, the example and the benchmark, from the programs in $1
  local bin=$1 pass fail skip line
  nccl_step tests 240 "$logs/tests.log" "$bin/gpu_nccl_sort"
  pass=$(grep -oE "^\[  PASSED  \] [0-9]+" "$logs/tests.log" 2>/dev/null | grep -oE "[0-9]+$")
  fail=$(grep -oE "^\[  FAILED  \] [0-9]+ tests?, listed below" "$logs/tests.log" 2>/dev/null | grep -oE "[0-9]+" | head -1)
  skip=$(grep -oE "^\[  SKIPPED \] [0-9]+" "$logs/tests.log" 2>/dev/null | grep -oE "[0-9]+$")
  note "nccl tests: rc=$step_rc passed=${pass:-0} failed=${fail:-0} skipped=${skip:-0}"
  grep -E "^\[  FAILED  \] [A-Za-z_].* \([0-9]+ ms\)$" "$logs/tests.log" 2>/dev/null | head -8
  # Example.
  nccl_step example 90 "$logs/example.log" "$bin/example_distributed_sort"
  note "nccl example: rc=$step_rc: $(grep -E "^(global check|sort:)" "$logs/example.log" 2>/dev/null | tr '\n' ' ')"
  # Benchmark.
  # shellcheck disable=SC2086  # the knob is a list of words
  nccl_step bench 270 "$OUT/nccl-bench.err" "$bin/tilesort-bench-nccl" ${GPU_CHECK_NCCL_BENCH:-} --json "$OUT/nccl-bench.json"
  [ -f "$OUT/nccl-bench.err" ] && mv "$OUT/nccl-bench.err" "$OUT/nccl-bench.txt"
  note "nccl bench: rc=$step_rc ($((SECONDS - start)) s so far)"
  while read -r line; do note "  $line"; done < <(grep -E "GPUs:|WRONG|FAILED" "$OUT/nccl-bench.txt" 2>/dev/null)
}
run_nccl() {  # run_nccl [cpp|python]
  local only=${1:-} start=$SECONDS logs=$OUT/nccl-logs bin=build-nccl-prebuilt gpus lib py_pid="" py_rc
  local archive=${GPU_CHECK_NCCL_PREBUILT:-third_party/prebuilt-nccl/nccl.tar.xz}
  local dry=${GPU_CHECK_DRY_RUN:-0}
  export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
  mkdir -p "$logs"
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
  lib=$(nccl_library_dir)
  [ -n "$lib" ] && export LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  note "nccl: $gpus GPU(s); libnccl.so.2 from ${lib:-NOWHERE (the programs will not start)}"
  local site=$PWD/build-python-nccl/site
  if [ "$only" != cpp ] && [ -n "${GPU_CHECK_NCCL_SITE:-}" ] && ls "$GPU_CHECK_NCCL_SITE"/tilesort/_nccl*.so >/dev/null 2>&1; then
    site=$(cd "$GPU_CHECK_NCCL_SITE" && pwd)  # carried: built elsewhere for sm_90 with NCCL
    note "nccl python: the package from $site (carried)"
    (sleep 1; echo 0 >"$logs/python-build.rc") &
    py_pid=$!
  elif [ "$dry" != 1 ] && [ "$only" != cpp ]; then  # the Python extensions build while the C++ steps run
    (nccl_python_build >"$logs/python-build.log" 2>&1; echo $? >"$logs/python-build.rc") &
    py_pid=$!
  fi
  # The C++ programs.
  if [ "$only" = python ]; then
    :
  elif [ -f "$archive" ]; then
    if [ "$dry" = 1 ]; then tar -tJf "$archive"; else tar -xJf "$archive"; fi
    note "nccl build: programs from $archive (commit $(head -1 "$(dirname "$archive")/commit.txt" 2>/dev/null || echo unknown))"
  else
    bin=build-gpu-nccl/bin
    local gtest=$PWD/third_party/googletest
    [ -f "$gtest/CMakeLists.txt" ] || gtest=/usr/src/googletest
    nccl_step build 400 "$logs/build.log" bash -c "cmake -S . -B build-gpu-nccl -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_CUDA_ARCHITECTURES=90 -DTILESORT_GTEST_SOURCE_DIR=$gtest -DNCCL_ROOT=$(dirname "${lib:-/x}") &&
      ninja -C build-gpu-nccl -j $(nproc) tests/nccl/gpu_nccl_sort examples/example_distributed_sort \
      bench/nccl/tilesort-bench-nccl && mkdir -p $bin && cp build-gpu-nccl/tests/nccl/gpu_nccl_sort \
      build-gpu-nccl/examples/example_distributed_sort build-gpu-nccl/bench/nccl/tilesort-bench-nccl $bin/"
    note "nccl build here: rc=$step_rc ($((SECONDS - start)) s)"
  fi
  [ "$only" = python ] || nccl_cpp_steps "$bin"
  # Python, under torchrun.
  if [ -n "$py_pid" ]; then
    while kill -0 "$py_pid" 2>/dev/null && [ "$(left)" -gt 100 ]; do sleep 2; done
    if kill -0 "$py_pid" 2>/dev/null; then
      kill "$py_pid" 2>/dev/null
      note "nccl python: NOT RUN (the extensions were still building at the deadline; see python-build.log)"
    elif [ "$(cat "$logs/python-build.rc")" = 3 ]; then
      note "nccl python: NOT RUN (python3 lacks torch, nanobind or scikit-build-core)"
    elif [ "$(cat "$logs/python-build.rc")" != 0 ]; then
      note "nccl python: build FAILED, see python-build.log"
      grep -E "error|FAILED" "$logs/python-build.log" | head -10
    else
      local procs
      for procs in 2 4; do
        [ "$procs" -le "$gpus" ] || continue
        nccl_step python 150 "$logs/python-$procs.log" env PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}" \
          PYTHONUNBUFFERED=1 python3 -m torch.distributed.run --nproc-per-node "$procs" python/tests/test_distributed.py
        py_rc=$step_rc
        note "nccl python (torchrun, $procs processes): rc=$py_rc, $(grep -c "rank passed" "$logs/python-$procs.log") of $procs ranks passed"
      done
    fi
  elif [ "$only" != cpp ]; then
    note "nccl python (dry run): build, then torchrun --nproc-per-node 2 (and 4) python/tests/test_distributed.py"
  fi
  note "nccl: done in $((SECONDS - start)) s"
  (cd "$OUT" && tar czf nccl-logs.tgz nccl-logs && rm -rf nccl-logs)
}

phase=${1:-}
shift || true
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv,noheader >>"$OUT/gpu.txt" 2>&1
note "gpu: $(head -1 "$OUT/gpu.txt"), commit ${GPU_CHECK_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}"
case $phase in
  tests) run_tests ;;
  sanitize) run_sanitize "$@" ;;
  bench) run_bench "$@" ;;
  python) run_python "$@" ;;
  wheel) run_wheel "$@" ;;
  nccl) run_nccl "$@" ;;
  host) run_host "$@" ;;
  all)
    deadline=$((1 << 30))
    run_tests
    for tool in memcheck synccheck racecheck; do run_sanitize $tool; done
    run_python
    run_bench --quick ;;
  *) sed -n '2,/^set -uo/p' "$0" | sed '$d'; exit 2 ;;
esac
finish
