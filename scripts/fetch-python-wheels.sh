#!/usr/bin/env bash
# Download the wheels that build and test the Python package on a machine
# without network access (the GPU machine) into .whl/ (git-ignored): nanobind
# and scikit-build-core (the build), pytest (the tests), and their
# dependencies, for CPython 3.12 on x86_64 Linux. Then, on that machine:
#   python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl
#   PYTHONPATH=/tmp/site scripts/test-python.sh
set -euo pipefail
cd "$(dirname "$0")/.."
dest=${WHEEL_DIR:-.whl}
python=${PYTHON:-python3}
wheels=(
  nanobind==3.1.0
  scikit-build-core==1.1.2 packaging==26.4 pathspec==1.1.1
  pytest==9.2.0 iniconfig==2.3.1 pluggy==1.7.0 pygments==2.20.0
)
mkdir -p "$dest"
for wheel in "${wheels[@]}"; do
  "$python" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    -d "$dest" "$wheel"
done
ls "$dest"
