#!/usr/bin/env bash
# Warning check: compiles tests/consumer/warnings/all_api.cu (every public
# entry point instantiated, as a user would) with each flag set CUDA users
# commonly pass, and fails if any warning is located in tilesort's headers
# (or a compile fails). Other warnings (the toolkit's) are counted, not fatal.
#   scripts/check-warnings.sh                 # two compiles, JOBS at a time (default: nproc)
#   ARCH=sm_90 BUILD_DIR=build-warnings scripts/check-warnings.sh
#   CUDAFLAGS="-Xcicc -O0" scripts/check-warnings.sh   # added to each compile, as CMake reads it
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/cuda/bin:$PATH
root=$PWD
arch=${ARCH:-sm_90}
jobs=${JOBS:-$(nproc)}
out=${BUILD_DIR:-build-warnings}
source=tests/consumer/warnings/all_api.cu
# The host compiler's -Wall -Wextra alone, and every flag together (the two
# nvcc flags only widen what compiles; each set of the pairwise combinations
# was measured warning-free beside these). No flags at all is not a set of
# its own: nvcc's own warnings show in both, and -Wall -Wextra only adds the
# host compiler's.
flag_sets=(
  "-Xcompiler -Wall,-Wextra"
  "-Xcompiler -Wall,-Wextra --extended-lambda --expt-relaxed-constexpr"
)
# nvcc: "<file>(<line>): warning #<n>-D: ..."; the host compiler: "<file>:<line>[:<col>]: warning: ...".
ours="include/tilesort/[^ ]*\.cuh(\([0-9]+\)|:[0-9]+(:[0-9]+)?): warning"

mkdir -p "$out"
compile() {  # index, flags
  local log=$out/set$1.log start=$SECONDS rc=0
  # shellcheck disable=SC2086  # the flag set and CUDAFLAGS are lists of words
  nvcc -arch="$arch" -std=c++17 ${CUDAFLAGS:-} $2 -I"$root/include" -c "$source" -o "$out/set$1.o" >"$log" 2>&1 || rc=$?
  echo "$rc $((SECONDS - start))" >"$out/set$1.status"
}
for i in "${!flag_sets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
  compile "$i" "${flag_sets[$i]}" &
done
wait

failed=0
printf '%-52s %6s %9s %8s\n' "flags" "time" "tilesort" "other"
for i in "${!flag_sets[@]}"; do
  read -r rc seconds <"$out/set$i.status"
  log=$out/set$i.log
  mine=$(grep -cE "$ours" "$log" || true)
  all=$(grep -cE ": warning|\): warning" "$log" || true)
  printf '%-52s %5ss %9s %8s%s\n' "${flag_sets[$i]:-(none)}" "$seconds" "$mine" "$((all - mine))" \
    "$([ "$rc" -ne 0 ] && echo "  COMPILE FAILED (rc $rc)")"
  if [ "$rc" -ne 0 ] || [ "$mine" -ne 0 ]; then
    failed=1
    grep -E "$ours|: error|\): error" "$log" | sed "s#$root/##" | sort | uniq -c | sort -rn | head -20
  fi
done
if [ "$failed" -ne 0 ]; then
  echo "check-warnings: FAILED (logs in $out/)"
  exit 1
fi
echo "check-warnings: no warnings from tilesort's headers under any flag set"
