#!/usr/bin/env bash
# The one command for the GPU machine (device tool): build for sm_90 with
# every core, run every GPU and host test, run compute-sanitizer (memcheck,
# racecheck, synccheck) on a small-size run of the GPU tests, run the quick
# benchmark, and print a short summary last. Full logs and the benchmark JSON
# go to $OUT.
#
# That machine has no network and no GoogleTest: carry its source, e.g.
#   mkdir -p third_party && cp -r /usr/src/googletest third_party/   (ignored by git)
#   device run: carry ["third_party"], command "bash scripts/gpu-check.sh"
# Knobs: GPU_CHECK_TESTS=regex (ctest -R), GPU_CHECK_SANITIZE=0, GPU_CHECK_BENCH=0,
#        GPU_CHECK_PREBUILT=FILE (test binaries packed by scripts/pack-prebuilt.sh),
#        GPU_CHECK_BENCH_ARGS="--quick" (the benchmark's arguments),
#        GPU_CHECK_SANITIZERS="memcheck racecheck synccheck" (the tools to run),
#        GPU_CHECK_RACECHECK_ALL=1 (racecheck every merge test, in 8 shards: a
#          call of its own, e.g. with GPU_CHECK_SANITIZERS=racecheck
#          GPU_CHECK_TESTS='merge|bitonic' GPU_CHECK_BENCH=0),
#        GPU_CHECK_RACECHECK_SKIP=regex (binaries racecheck leaves out, e.g.
#          gpu_bitonic_sort: its 16-block cluster sorts take racecheck past the
#          deadline; check those with a small driver instead).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-check-out}
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
summary=()
note() { summary+=("$*"); echo "## $*"; }
# The device tool stops a command at 600 s: phases share a deadline and the
# benchmark keeps a reserve, so the summary always prints.
deadline=${GPU_CHECK_DEADLINE:-560}
bench_reserve=${GPU_CHECK_BENCH_RESERVE:-45}
left() { echo $((deadline - SECONDS)); }

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv | tee "$OUT/gpu.txt"

start=$SECONDS
gtest_dir=third_party/googletest
[ -f $gtest_dir/CMakeLists.txt ] || gtest_dir=/usr/src/googletest
configure() {
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 "$@" >>"$OUT/build.log" 2>&1
}
bench_build_pid=
if [ -n "${GPU_CHECK_PREBUILT:-}" ] && [ -f "$GPU_CHECK_PREBUILT" ]; then
  # Test binaries built elsewhere for sm_90 (scripts/pack-prebuilt.sh) save
  # the device's compile time; the benchmark (too big to carry with them) is
  # built here in the background while the tests and the sanitizer run.
  tar -xJf "$GPU_CHECK_PREBUILT"
  packed=$(cat "$(dirname "$GPU_CHECK_PREBUILT")/commit.txt" 2>/dev/null || echo unknown)
  note "build: test binaries from $GPU_CHECK_PREBUILT ($(ls build-gpu/tests | grep -c -E '^(gpu|host)_'), commit $packed), benchmark building in the background"
  if [ "${GPU_CHECK_BENCH:-1}" = 1 ]; then
    (configure -DTILESORT_BUILD_TESTS=OFF -DTILESORT_BUILD_EXAMPLES=OFF &&
       ninja -C build-gpu -j "$(nproc)" tilesort-bench >>"$OUT/build.log" 2>&1) &
    bench_build_pid=$!
  fi
elif configure -DTILESORT_GTEST_SOURCE_DIR="$PWD/$gtest_dir" &&
   ninja -C build-gpu -j "$(nproc)" -k 0 >>"$OUT/build.log" 2>&1; then
  note "build: ok ($((SECONDS - start)) s)"
else
  note "build: FAILED ($((SECONDS - start)) s), see build.log"
  grep -E "error|FAILED" "$OUT/build.log" | head -30
fi

start=$SECONDS
# Each test binary directly, so the summary can count gtest's passed/failed/
# skipped; all at once (their time goes mostly to host-side inputs and
# reference sorts, and the GPU has room for every one of them).
selected() { [ -x "$1" ] && { [ -z "${GPU_CHECK_TESTS:-}" ] || [[ $(basename "$1") =~ $GPU_CHECK_TESTS ]]; }; }
mkdir -p "$OUT/tests"
test_budget=$(( $(left) - bench_reserve > 30 ? $(left) - bench_reserve : 30 ))
test_pids=()
for t in build-gpu/tests/host_* build-gpu/tests/gpu_*; do
  selected "$t" || continue
  (timeout $test_budget "$t" >"$OUT/tests/$(basename "$t").log" 2>&1; echo $? >"$OUT/tests/$(basename "$t").rc") &
  test_pids+=($!)
done
[ ${#test_pids[@]} -gt 0 ] && wait "${test_pids[@]}"
total_pass=0 total_fail=0 total_skip=0
for log in "$OUT"/tests/*.log; do
  [ -f "$log" ] || continue
  name=$(basename "$log" .log)
  rc=$(cat "$OUT/tests/$name.rc"); rm -f "$OUT/tests/$name.rc"
  pass=$(grep -oE "^\[  PASSED  \] [0-9]+" "$log" | grep -oE "[0-9]+$" || echo 0)
  fail=$(grep -oE "^\[  FAILED  \] [0-9]+ tests?, listed below" "$log" | grep -oE "[0-9]+" || echo 0)
  skip=$(grep -oE "^\[  SKIPPED \] [0-9]+" "$log" | grep -oE "[0-9]+$" || echo 0)
  total_pass=$((total_pass + ${pass:-0})); total_fail=$((total_fail + ${fail:-0})); total_skip=$((total_skip + ${skip:-0}))
  note "test $name: rc=$rc passed=${pass:-0} failed=${fail:-0} skipped=${skip:-0}"
  [ "${fail:-0}" -gt 0 ] && grep -E "^\[  FAILED  \] [A-Za-z_].* \([0-9]+ ms\)$" "$log" | head -8
done
note "tests: $total_pass passed, $total_fail failed, $total_skip skipped ($((SECONDS - start)) s)"

if [ "${GPU_CHECK_SANITIZE:-1}" = 1 ]; then
  start=$SECONDS
  # Every (tool, binary) pair at once: the small runs leave the GPU mostly
  # idle, so running them side by side fits all three tools in the deadline.
  # The big binaries run in gtest shards. racecheck, the slowest (over 400 s
  # for the merge tests' 13 key types), gets the merge sort's u32, u64 and
  # user-key types, its API tests and the persistent k-way passes
  # (MergeSortKway). Left out everywhere: the tests that make an allocation
  # fail on purpose (the sanitizer reports the failed cudaMallocAsync as an
  # API error).
  budget=$(($(left) - bench_reserve))
  if [ $budget -lt 20 ]; then
    note "sanitizer: skipped (out of time: ${budget} s left before the benchmark)"
  else
    mkdir -p "$OUT/sanitizer"
    jobs=() san_pids=()
    for tool in ${GPU_CHECK_SANITIZERS:-memcheck racecheck synccheck}; do
      for t in build-gpu/tests/gpu_*; do
        selected "$t" || continue
        [ "$tool" = racecheck ] && [ -n "${GPU_CHECK_RACECHECK_SKIP:-}" ] &&
          [[ $(basename "$t") =~ $GPU_CHECK_RACECHECK_SKIP ]] && { note "sanitizer racecheck $(basename "$t"): skipped (GPU_CHECK_RACECHECK_SKIP)"; continue; }
        shards=1 filter="*"
        case "$tool $(basename "$t")" in
          "racecheck gpu_merge_sort")
            if [ "${GPU_CHECK_RACECHECK_ALL:-0}" = 1 ]; then shards=8; else
              shards=4 filter="MergeSortTyped/5.*:MergeSortTyped/7.*:MergeSortTyped/12.*:MergeSort.*:MergeSortKway.*"; fi ;;
          "racecheck gpu_bitonic_sort") shards=$([ "${GPU_CHECK_RACECHECK_ALL:-0}" = 1 ] && echo 10 || echo 6) ;;
          "racecheck gpu_segmented_sort") shards=4 ;;
          "racecheck gpu_locality_sort") shards=3 ;;
          *" gpu_merge_sort") shards=2 ;;
        esac
        for ((shard = 0; shard < shards; ++shard)); do
          log="$OUT/sanitizer/$tool-$(basename "$t")-$shard.log"
          (TILESORT_TEST_SMALL=1 GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$shard timeout $budget \
             compute-sanitizer --tool "$tool" --error-exitcode 9 "$t" \
             "--gtest_filter=$filter-*FailedAllocation*:*ConvenienceOverloadsLeakNothing*" \
             >"$log" 2>&1; echo "$? $((SECONDS - start))" >"$log.rc") &
          san_pids+=($!)
          jobs+=("$tool $(basename "$t") $log")
        done
      done
    done
    wait "${san_pids[@]}"
    for job in "${jobs[@]}"; do
      set -- $job
      read -r rc took <"$3.rc"; rm -f "$3.rc"
      case $rc in 0) res=clean ;; 124) res=timeout ;; 9) res="ERRORS: $(grep -m1 -E "ERROR SUMMARY|hazard" "$3")" ;; *) res="rc=$rc" ;; esac
      tests=$(grep -oE "^\[==========\] [0-9]+ tests" "$3" | grep -oE "[0-9]+" | head -1)
      note "sanitizer $1 $2 $(basename "$3" .log | grep -oE "[0-9]+$"): $res (${tests:-?} tests, ${took} s)"
    done
    (cd "$OUT/sanitizer" && tar czf ../sanitizer-logs.tgz . && cd .. && rm -rf sanitizer)
    note "sanitizer: done ($((SECONDS - start)) s)"
  fi
fi

if [ -n "$bench_build_pid" ]; then
  start=$SECONDS
  wait "$bench_build_pid" && note "bench build: ok (waited $((SECONDS - start)) s)" ||
    { note "bench build: FAILED, see build.log"; grep -E "error|FAILED" "$OUT/build.log" | head -20; }
fi
if [ "${GPU_CHECK_BENCH:-1}" = 1 ] && [ -x build-gpu/bench/tilesort-bench ]; then
  start=$SECONDS
  timeout $(( $(left) > 20 ? $(left) : 20 )) build-gpu/bench/tilesort-bench ${GPU_CHECK_BENCH_ARGS:---quick} --json "$OUT/bench.json" \
    >"$OUT/bench.txt" 2>"$OUT/bench.err"
  note "bench: rc=$? ($((SECONDS - start)) s)"
  cat "$OUT/bench.txt"
fi

echo
echo "==================== gpu-check summary"
printf '%s\n' "${summary[@]}"
