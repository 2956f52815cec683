#!/usr/bin/env bash
# Install a tilesort wheel (scripts/build-wheel.sh) as a user would and run the
# package's tests (python/tests) against the installed copy:
#   scripts/test-wheel.sh dist/tilesort-0.1.0-cp312-cp312-manylinux_2_34_x86_64.whl [pytest args...]
# The wheel's Python (its cpXY tag): python3 where that is its version, else
# pyenv's newest 3.Y, else python3.Y on PATH (PYTHON names one).
# A fresh virtual environment, made with --system-site-packages so that the
# machine's torch, cupy and numpy are visible (the GPU machine has no network
# to install them into the venv), on a PATH with no nvcc and no cmake (the
# PATH directories that hold them are replaced by copies of links without
# them; checked with `command -v`), PYTHONPATH unset. The wheel goes in with
# `pip install --no-index --no-deps`; pytest and numpy (the host tests), where
# the machine has none, from the wheels in WHEEL_DIR (default .whl/,
# scripts/fetch-python-wheels.sh) where they suffice, else from the package index.
# The tests run from a copy of python/tests in a temporary folder, so that
# `import tilesort` finds the venv's package, not python/tilesort: pytest's
# header names the tilesort under test, and the run stops if it is not the
# venv's. GPU tests skip with a message where there is no CUDA device.
# The log goes to $OUT/test-wheel.log too where OUT is set; the output ends
# with pytest's summary line, the exit status is pytest's ("no tests
# collected" counts as success).
# Knobs: PYTHON (the wheel's Python), WHEEL_DIR, KEEP_VENV=1 (keep the
# temporary folder and its venv; its path is printed).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
[[ $# -ge 1 && -f $1 ]] || { echo "usage: scripts/test-wheel.sh WHEEL [pytest args...]" >&2; exit 2; }
wheel=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
shift
# The wheel's Python.
minor=$(basename "$wheel" | sed -nE 's/^[^-]+-[^-]+-cp3([0-9]+)-.*/\1/p')
[[ -n $minor ]] || { echo "test-wheel: $wheel has no cp3XY tag" >&2; exit 2; }
python=${PYTHON:-}
if [[ -z $python ]]; then
  if [[ $(python3 -c 'import sys; print(sys.version_info[1])') == "$minor" ]]; then
    python=python3
  else
    root=$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")
    newest=$(ls -d "$root"/versions/3."$minor".* 2>/dev/null | grep -E "/3\.$minor\.[0-9]+$" | sort -V | tail -1 || true)
    python=${newest:+$newest/bin/python}
    python=${python:-python3.$minor}
  fi
fi
python=$(command -v "$python") || { echo "test-wheel: no Python 3.$minor for $wheel (set PYTHON)" >&2; exit 2; }
wheel_dir=$(cd "${WHEEL_DIR:-.whl}" 2>/dev/null && pwd || true)
if [[ -n ${OUT:-} ]]; then mkdir -p "$OUT"; exec > >(tee "$OUT/test-wheel.log") 2>&1; fi

work=$(mktemp -d "${TMPDIR:-/tmp}/tilesort-wheel.XXXXXX")
if [[ ${KEEP_VENV:-0} == 1 ]]; then echo "test-wheel: keeping $work"; else trap 'rm -rf "$work"' EXIT; fi
venv=$work/venv

# PATH without nvcc and cmake.
clean_path=$venv/bin
IFS=: read -ra dirs <<<"$PATH"
for i in "${!dirs[@]}"; do
  dir=${dirs[$i]}
  [[ -n $dir && -d $dir && $dir != . ]] || continue
  if [[ -e $dir/nvcc || -e $dir/cmake ]]; then
    shadow=$work/path/$i
    mkdir -p "$shadow"
    find "$dir" -mindepth 1 -maxdepth 1 ! -name nvcc ! -name cmake -exec ln -s -t "$shadow" {} +
    echo "test-wheel: PATH $dir -> $shadow (without nvcc, cmake)"
    dir=$shadow
  fi
  clean_path+=:$dir
done
export PATH=$clean_path
unset PYTHONPATH CUDACXX CMAKE_ARGS
for tool in nvcc cmake; do
  if found=$(command -v "$tool"); then echo "test-wheel: FAIL: $tool is still on PATH ($found)" >&2; exit 1; fi
done
echo "test-wheel: nvcc: not found, cmake: not found (as for a user without the CUDA toolkit and CMake)"

# A fresh venv; without ensurepip (Debian's python3 without python3-venv), one
# without pip that runs the machine's pip.
if ! "$python" -m venv --system-site-packages "$venv" >"$work/venv.log" 2>&1; then
  cat "$work/venv.log"
  echo "test-wheel: venv with pip failed; making one --without-pip (the system's pip installs into it)"
  rm -rf "$venv"
  "$python" -m venv --system-site-packages --without-pip "$venv"
fi
vpy=$venv/bin/python
# A python that is itself a venv's (the GPU machine's python3 is /opt/torch/.venv's,
# where torch lives) gives the new venv its base's packages only: its own
# site-packages go in by a .pth file, as torch's would be for a user there.
"$python" - "$venv" <<'PY'
import pathlib, site, sys, sysconfig
if sys.prefix != sys.base_prefix:
    target = pathlib.Path(sys.argv[1]) / pathlib.Path(sysconfig.get_path("purelib")).relative_to(sys.prefix)
    (target / "_parent_venv.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    print(f"test-wheel: {sys.prefix} is a venv: its site-packages are visible in the new one")
PY
export PIP_DISABLE_PIP_VERSION_CHECK=1
"$vpy" -m pip --version
"$vpy" -m pip install --no-index --no-deps "$wheel"
for module in pytest numpy; do
  "$vpy" -c "import $module" 2>/dev/null && continue
  if [[ -n $wheel_dir ]]; then
    # (WHEEL_DIR holds cp312's set: another Python may need more, e.g. pytest on 3.10 needs
    # exceptiongroup and tomli; then the package index, where there is one)
    "$vpy" -m pip install -q --no-index --find-links "$wheel_dir" "$module" 2>/dev/null ||
      "$vpy" -m pip install -q --find-links "$wheel_dir" "$module" ||
      echo "test-wheel: $module is neither among the wheels of $wheel_dir nor on a reachable index (the tests that need it skip)"
  else
    "$vpy" -m pip install -q "$module"
  fi
done

# The tests, outside the source tree.
run=$work/run
mkdir -p "$run"
cp -r "$repo/python/tests" "$run/tests"
rm -rf "$run/tests/__pycache__"
printf '[pytest]\n' >"$run/pytest.ini"  # rootdir: no ini file of the repository applies
cat >"$run/conftest.py" <<'EOF'
import os

import pytest
import tilesort

_venv = os.environ["TILESORT_TEST_VENV"]
if not os.path.realpath(tilesort.__file__).startswith(os.path.realpath(_venv) + os.sep):
    raise pytest.UsageError(f"tilesort under test is {tilesort.__file__}, not the venv's ({_venv})")


def pytest_report_header(config):
    return f"tilesort under test: {tilesort.__file__} (extension {tilesort._ext.__file__})"
EOF
cd "$run"
"$vpy" - <<'EOF'
import importlib
import sys

import tilesort
from tilesort import _ext

print(f"test-wheel: python {sys.version.split()[0]}, tilesort {tilesort.__version__} from {tilesort.__file__}")
print(f"test-wheel: extension {_ext.__file__}")
tilesort.show_config()
for name in ("numpy", "torch", "cupy"):
    try:
        module = importlib.import_module(name)
    except Exception as error:  # the tests that need it skip
        print(f"test-wheel: {name} not importable ({type(error).__name__}: {error})")
        continue
    gpu = ""
    if name == "torch":
        gpu = f", {module.cuda.device_count()} CUDA device(s)" + (
            f", {module.cuda.get_device_name(0)}" if module.cuda.is_available() else "")
    print(f"test-wheel: {name} {module.__version__}{gpu}")
EOF
rc=0
TILESORT_TEST_VENV=$venv "$vpy" -m pytest -ra -p no:cacheprovider tests "$@" || rc=$?
if [[ $rc -eq 5 ]]; then rc=0; fi  # no tests collected
exit $rc
