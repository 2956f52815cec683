#!/usr/bin/env bash
# Check the Python package's sdist, the source that pip builds on a machine
# with nvcc and CMake (other platforms, other CUDA versions):
#   scripts/check-sdist.sh [SDIST]     # no argument: build one into a temporary folder first
# The build is scikit-build-core's build_sdist hook with no isolation (what
# `python -m build --sdist --no-isolation` runs), so PYTHON (default python3)
# must import scikit_build_core; CI's venv does. Checks:
#   * metadata (PKG-INFO): name tilesort, the version of
#     include/tilesort/version.cuh, Requires-Python, the description
#     (python/README.md); pyproject.toml's build backend;
#   * contents: every file git tracks under python/, include/ and cmake/, and
#     pyproject.toml, byte for byte as in this checkout, and nothing of the C++
#     project's tests, bench, examples, docs or scripts;
#   * configure: CMake configures the unpacked sdist's python/CMakeLists.txt
#     (the headers, the version and the CMake modules are found) where cmake,
#     nvcc and nanobind are here; compiling it is what a wheel build does.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
work=$(mktemp -d "${TMPDIR:-/tmp}/tilesort-sdist.XXXXXX")
trap 'rm -rf "$work"' EXIT
if [[ $# -ge 1 ]]; then
  sdist=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
else
  name=$("$python" -c "import sys; from scikit_build_core.build import build_sdist; print(build_sdist(sys.argv[1]))" \
           "$work" | tail -1)
  sdist=$work/$name
fi
echo "check-sdist: $sdist ($(stat -c %s "$sdist") bytes)"

git ls-files python include cmake pyproject.toml >"$work/tracked"
"$python" - "$sdist" "$work/tracked" "$work/unpacked" <<'PY'
import email.parser, pathlib, re, sys, tarfile

sdist, tracked_list, unpacked = sys.argv[1:]
problems = []
version = re.search(r'^#define TILESORT_VERSION "([^"]+)"$', pathlib.Path("include/tilesort/version.cuh").read_text(),
                    re.M)[1]
with tarfile.open(sdist) as tar:
    members = {m.name: m for m in tar.getmembers() if m.isfile()}
    root = f"tilesort-{version}/"
    names = {name[len(root):] for name in members if name.startswith(root)}
    if len(names) != len(members):
        problems.append(f"files outside {root}: {sorted(n for n in members if not n.startswith(root))[:5]}")
    info = email.parser.Parser().parsestr(tar.extractfile(root + "PKG-INFO").read().decode())
    for path in pathlib.Path(tracked_list).read_text().split():
        if path not in names:
            problems.append(f"missing: {path}")
        elif tar.extractfile(root + path).read() != pathlib.Path(path).read_bytes():
            problems.append(f"differs from the checkout: {path}")
    if hasattr(tarfile, "data_filter"):  # Pythons with extraction filters: the safe one
        tar.extractall(unpacked, filter="data")
    else:
        tar.extractall(unpacked)

allowed = ("python/", "include/", "cmake/")
extra = sorted(n for n in names if "/" in n and not n.startswith(allowed))
if extra:
    problems.append(f"files of the C++ project's other folders: {extra[:10]}")
expected = {"Name": "tilesort", "Version": version}
for field, value in expected.items():
    if info.get(field) != value:
        problems.append(f"PKG-INFO {field}: {info.get(field)!r}, expected {value!r}")
for field in ("Requires-Python", "Summary", "Metadata-Version"):
    if not info.get(field):
        problems.append(f"PKG-INFO has no {field}")
if "pip install" not in (info.get_payload() or ""):
    problems.append("PKG-INFO's description is not python/README.md")
pyproject = (pathlib.Path(unpacked) / root / "pyproject.toml").read_text()
if 'build-backend = "scikit_build_core.build"' not in pyproject:
    problems.append("pyproject.toml's build backend is not scikit_build_core.build")
print(f"check-sdist: {len(names)} files; PKG-INFO: {info['Name']} {info['Version']}, Requires-Python "
      f"{info['Requires-Python']}, {len(info.get_all('Classifier') or [])} classifiers")
for problem in problems:
    print(f"check-sdist: FAIL: {problem}")
sys.exit(1 if problems else 0)
PY
echo "check-sdist: metadata and contents ok"

source_dir=$(ls -d "$work"/unpacked/tilesort-*/python)
nanobind_dir=$("$python" -m nanobind --cmake_dir 2>/dev/null || true)
if command -v cmake >/dev/null && command -v nvcc >/dev/null && [[ -n $nanobind_dir ]]; then
  if cmake -S "$source_dir" -B "$work/configure" -DCMAKE_CUDA_ARCHITECTURES=90 -DTILESORT_PYTHON_NCCL=OFF \
       "-DPython_EXECUTABLE=$(command -v "$python")" "-Dnanobind_DIR=$nanobind_dir" >"$work/configure.log" 2>&1; then
    echo "check-sdist: CMake configures the unpacked sdist (project $(grep -m1 -o 'CMAKE_PROJECT_VERSION:STATIC=.*' \
      "$work/configure/CMakeCache.txt" | cut -d= -f2))"
  else
    cat "$work/configure.log"
    echo "check-sdist: FAIL: CMake does not configure the unpacked sdist"
    exit 1
  fi
else
  echo "check-sdist: configure skipped (needs cmake, nvcc and nanobind for $python)"
fi
