#!/usr/bin/env bash
# Compare the kernels of two builds of one program by their machine code
# (SASS), names aside: for a change that should leave the GPU's work as it
# was (moves, renames, host-side refactors), the two multisets of kernel
# bodies are equal. Needs no GPU: cuobjdump (and nvdisasm) from the CUDA
# toolkit, on PATH or in $CUDA_BIN (pip's nvidia-cuda-cuobjdump and
# nvidia-cuda-nvdisasm wheels carry them too).
#
# Each kernel's body is normalized: addresses, encodings, mangled symbol
# names (_Z...), section names (.text....) and labels are replaced by
# placeholders, so a renamed kernel or a moved header compares equal while
# any changed instruction, register or constant does not. Prints the kernel
# counts, and for every body found on one side only the demangled name.
#
#   cmake -S . -B build-a -DCMAKE_CUDA_ARCHITECTURES=90-real -DCMAKE_BUILD_TYPE=Release   # at revision A
#   cmake --build build-a --target tilesort-bench                                        # same at B into build-b
#   scripts/compare-sass.sh build-a/bench/tilesort-bench build-b/bench/tilesort-bench
# Exit status: 0 when the bodies are the same multiset, 1 otherwise.
set -euo pipefail
if [[ $# -ne 2 ]]; then
  echo "usage: $0 BINARY_A BINARY_B" >&2
  exit 2
fi
export PATH=${CUDA_BIN:-/usr/local/cuda/bin}:$PATH
command -v cuobjdump >/dev/null || { echo "compare-sass: cuobjdump not found (set CUDA_BIN)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cuobjdump -sass "$1" > "$work/a.sass"
cuobjdump -sass "$2" > "$work/b.sass"
python3 - "$work/a.sass" "$work/b.sass" <<'PY'
import collections, hashlib, re, subprocess, sys

def kernels(path):
    """(mangled name, normalized body) of every function in a cuobjdump -sass listing."""
    out, name, body = [], None, []
    def flush():
        if name is not None:
            out.append((name, "\n".join(body)))
    for line in open(path):
        m = re.match(r"\s*Function : (\S+)", line)
        if m:
            flush()
            name, body = m.group(1), []
            continue
        if name is None:
            continue
        m = re.match(r"\s*/\*[0-9a-f]{4,}\*/\s*(.*?)\s*;?\s*/\*", line)
        if not m:  # labels, headers, encodings: not instructions
            continue
        text = m.group(1)
        text = re.sub(r"_Z\w+", "SYM", text)
        text = re.sub(r"\.text\.[\w.$]+", "SECTION", text)
        text = re.sub(r"\.L_x_\d+", "LABEL", text)
        body.append(text)
    flush()
    return out

def demangle(names):
    if not names:
        return []
    result = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True)
    return result.stdout.splitlines() if result.returncode == 0 else names

sides = [kernels(p) for p in sys.argv[1:3]]
counts = [collections.Counter(hashlib.sha1(b.encode()).hexdigest() for _, b in s) for s in sides]
print(f"kernels: A {len(sides[0])}, B {len(sides[1])}; distinct bodies: A {len(counts[0])}, B {len(counts[1])}")
only = [counts[0] - counts[1], counts[1] - counts[0]]
status = 0
for label, side, extra in (("A", sides[0], only[0]), ("B", sides[1], only[1])):
    names = [n for n, b in side if hashlib.sha1(b.encode()).hexdigest() in extra]
    if names:
        status = 1
        print(f"only in {label}: {sum(extra.values())} bodies")
        for n in sorted(set(demangle(names))):
            print(f"  {n}")
print("same kernel bodies" if status == 0 else "kernel bodies differ")
sys.exit(status)
PY
