"""Whether this build's GPU code runs on a device, and what to do where it does not.

A binary tilesort holds SASS for some architectures and PTX for others
(``_ext.cuda_architectures``, CMake's CUDA_ARCHITECTURES entries). SASS for
sm_XY runs on GPUs of compute capability X.Z with Z >= Y (an ``a`` suffix:
X.Y only); PTX for compute_XY is compiled by the driver for any GPU of
capability X.Y or newer, where the driver is at least as new as the toolkit
that wrote it. The CUDA runtime is built in, so the driver must support its
CUDA major version. The first sort on each device checks these facts
(``_ext.device_facts``) and raises a RuntimeError that names the GPU, the
architectures, both versions and how to build from source, instead of a CUDA
error code from a kernel launch.

    from tilesort import _device
    _device.require(0)                        # once per device, before its first launch
    _device.problem(facts, "80-real,100-virtual")   # the check itself: None or the message
"""

from __future__ import annotations

import importlib
import re

from . import _ext

_ENTRY = re.compile(r"^(\d+)([af]?)(?:-(real|virtual))?$")

# Devices whose first check passed.
_supported = set()


def architectures(entries):
    """CMake's CUDA_ARCHITECTURES entries joined by commas -> (sass, ptx): lists of (number, suffix).

    "80-real" is SASS for sm_80, "100-virtual" PTX for compute_100, a bare "90" both; entries that name
    no number ("native", "all") are left out.
    """
    sass, ptx = [], []
    for entry in entries.split(","):
        match = _ENTRY.match(entry.strip())
        if match is None:
            continue
        code = (int(match.group(1)), match.group(2))
        if match.group(3) != "virtual":
            sass.append(code)
        if match.group(3) != "real":
            ptx.append(code)
    return sass, ptx


def describe(entries):
    """The architectures as a reader names them: "sm_80, sm_90, sm_100 (SASS); compute_90 (PTX)"."""
    sass, ptx = architectures(entries)
    parts = []
    if sass:
        parts.append(", ".join(f"sm_{n}{s}" for n, s in sass) + " (SASS)")
    if ptx:
        parts.append(", ".join(f"compute_{n}{s}" for n, s in ptx) + " (PTX)")
    return "; ".join(parts) or entries


def cuda_version(number):
    """A CUDA version as the runtime reports it (13000) in words ("13.0")."""
    return f"{number // 1000}.{number % 1000 // 10}"


def runs_on(capability, entries):
    """Whether code built for `entries` runs on a GPU of compute capability (major, minor)."""
    major, minor = capability
    sass, ptx = architectures(entries)

    def fits(number, suffix, exact_major):
        if suffix == "a":
            return number == 10 * major + minor
        if exact_major:
            return number // 10 == major and number % 10 <= minor
        return number <= 10 * major + minor

    return any(fits(n, s, True) for n, s in sass) or any(fits(n, s, False) for n, s in ptx)


def problem(facts, entries):
    """None where the GPU code built for `entries` runs on the device `facts` describes, else the message.

    facts: the dict of ``_ext.device_facts()`` (device, name, capability, driver, runtime, probe).
    """
    driver, runtime = facts["driver"], facts["runtime"]
    major, minor = facts["capability"]
    source = "`pip install --no-binary tilesort tilesort`, or `pip install .` in a tilesort checkout"
    if driver // 1000 < runtime // 1000:
        found = f"CUDA {cuda_version(driver)}" if driver else "no NVIDIA driver"
        reason = f"the NVIDIA driver supports {found}, older than the CUDA {cuda_version(runtime)} runtime built in"
        remedy = (f"Install a driver for CUDA {runtime // 1000}.x or newer, or build tilesort from source with a "
                  f"CUDA toolkit this driver supports (nvcc and CMake >= 3.25): {source}")
    else:
        if (major, minor) != (0, 0) and not runs_on((major, minor), entries):
            reason = f"none of its GPU code runs on compute capability {major}.{minor}"
        elif facts["probe"] != "cudaSuccess":
            reason = f"its GPU code does not load there ({facts['probe']})"
        else:
            return None
        remedy = (f"Build tilesort from source for this GPU (nvcc and CMake >= 3.25; it compiles for the GPU it "
                  f"finds): {source}")
    if facts["device"] >= 0 and (major, minor) != (0, 0):
        gpu = f"GPU {facts['device']} ({facts['name']}, compute capability {major}.{minor})"
    else:
        gpu = f"the GPU (the runtime cannot query it: {facts['probe']})"
    return (f"tilesort {_ext.version} cannot run on {gpu}: {reason}. This build holds GPU code for "
            f"{describe(entries)}; driver: CUDA {cuda_version(driver) if driver else 'none'}, runtime: CUDA "
            f"{cuda_version(runtime)} (built in). {remedy}.")


def require(device):
    """Raise RuntimeError (``problem``'s message) unless this build runs on `device`, the current one.

    Asked once per device; later calls are a set lookup.
    """
    if device in _supported:
        return
    message = problem(_ext.device_facts(), _ext.cuda_architectures)
    if message is not None:
        raise RuntimeError(message)
    _supported.add(device)


def show_config(file=None):
    """Print what this tilesort was built with and whether it runs on the current GPU.

    The version, the CUDA runtime built in, the GPU code in the binary, whether the NCCL module
    (tilesort.distributed) is present, the driver, and the current device's check (``problem``).
    """
    try:
        importlib.import_module("tilesort._nccl")
        nccl = "present"
    except ImportError as error:
        nccl = "absent" if getattr(error, "name", None) == "tilesort._nccl" else f"present, does not load ({error})"
    facts = _ext.device_facts()
    message = problem(facts, _ext.cuda_architectures)
    if not facts["driver"]:
        device = "none (no NVIDIA driver)"
    elif facts["device"] >= 0 and facts["capability"] != (0, 0):
        major, minor = facts["capability"]
        device = (f"{facts['device']}, {facts['name']}, compute capability {major}.{minor}: "
                  + ("supported" if message is None else f"NOT SUPPORTED: {message}"))
    else:
        device = f"none usable ({facts['probe']})" + (f": {message}" if message is not None else "")
    lines = [
        f"tilesort {_ext.version}",
        f"CUDA runtime: {cuda_version(facts['runtime'])} (linked statically)",
        f"GPU code: {describe(_ext.cuda_architectures)}",
        f"NCCL module (tilesort.distributed): {nccl}",
        f"driver: CUDA {cuda_version(facts['driver'])}" if facts["driver"] else "driver: none found",
        f"current GPU: {device}",
    ]
    print("\n".join(lines), file=file)
