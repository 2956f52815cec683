"""The build's facts (version, architectures, show_config) and the error on an unsupported GPU or driver.

The check is fed made-up device facts, so every case but the last runs without a GPU; the last fakes an
unsupported architecture on the real device and checks that a sort raises before writing anything.
"""

import io
import re

import pytest

import tilesort
from tilesort import _device, _ext

WHEEL = "80-real,90,100-real"  # as the release wheels report it (scripts/build-wheel.sh)


def facts(capability=(9, 0), driver=13000, runtime=13000, probe="cudaSuccess"):
    return {"device": 0, "name": "Made-up GPU", "capability": capability, "driver": driver, "runtime": runtime,
            "probe": probe}


def test_version_is_the_headers():
    import pathlib

    header = pathlib.Path(__file__).resolve().parents[2] / "include" / "tilesort" / "version.cuh"
    if not header.is_file():
        pytest.skip("include/tilesort/version.cuh is not beside this copy of the tests")
    written = re.search(r'^#define TILESORT_VERSION "([0-9.]+)"$', header.read_text(), re.M)
    assert tilesort.__version__ == _ext.version == written.group(1)


def test_version_is_the_metadata():
    from importlib import metadata

    try:
        installed = metadata.version("tilesort")
    except metadata.PackageNotFoundError:
        pytest.skip("tilesort is not installed with its metadata here")
    assert installed == tilesort.__version__


def test_architectures_parse():
    assert _device.architectures(WHEEL) == ([(80, ""), (90, ""), (100, "")], [(90, "")])
    assert _device.architectures("90") == ([(90, "")], [(90, "")])
    assert _device.architectures("100-virtual") == ([], [(100, "")])
    assert _device.architectures("90a-real,native") == ([(90, "a")], [])
    assert _device.describe(WHEEL) == "sm_80, sm_90, sm_100 (SASS); compute_90 (PTX)"


@pytest.mark.parametrize("capability, runs", [
    ((8, 0), True), ((8, 6), True), ((8, 9), True),  # sm_80 SASS
    ((9, 0), True), ((10, 0), True), ((10, 3), True),
    ((12, 0), True),  # compute_90 PTX, compiled by the driver
    ((7, 5), False), ((7, 0), False), ((6, 1), False),
])
def test_runs_on(capability, runs):
    assert _device.runs_on(capability, WHEEL) is runs


def test_runs_on_exact_and_ptx_only():
    assert not _device.runs_on((9, 0), "80-real")  # SASS runs within its major version only
    assert _device.runs_on((9, 0), "80-virtual")
    assert _device.runs_on((9, 0), "90a-real") and not _device.runs_on((10, 0), "90a-real")


def test_supported_device_has_no_problem():
    assert _device.problem(facts((9, 0)), WHEEL) is None
    assert _device.problem(facts((12, 0), driver=13010), WHEEL) is None


def test_unsupported_architecture_message():
    message = _device.problem(facts((7, 5), probe="cudaErrorNoKernelImageForDevice"), WHEEL)
    assert message is not None
    for part in ("Made-up GPU", "compute capability 7.5", "sm_80, sm_90, sm_100 (SASS); compute_90 (PTX)",
                 "driver: CUDA 13.0", "runtime: CUDA 13.0", "from source", "pip install --no-binary tilesort",
                 f"tilesort {tilesort.__version__}"):
        assert part in message, part


def test_old_driver_message():
    message = _device.problem(facts((9, 0), driver=12040, probe="cudaErrorInsufficientDriver"), WHEEL)
    assert "the NVIDIA driver supports CUDA 12.4, older than the CUDA 13.0 runtime built in" in message
    assert "driver: CUDA 12.4" in message and "Install a driver for CUDA 13.x" in message
    assert "from source with a CUDA toolkit this driver supports" in message
    unqueried = dict(facts((0, 0), driver=12040, probe="cudaErrorInsufficientDriver"), device=-1)
    assert "cannot run on the GPU (the runtime cannot query it: cudaErrorInsufficientDriver)" in _device.problem(
        unqueried, WHEEL)
    assert "no NVIDIA driver" in _device.problem(facts((0, 0), driver=0, probe="cudaErrorNoDevice"), WHEEL)


def test_probe_failure_message():
    message = _device.problem(facts((12, 0), probe="cudaErrorUnsupportedPtxVersion"), WHEEL)
    assert "does not load there (cudaErrorUnsupportedPtxVersion)" in message


def test_require_raises_on_a_made_up_device(monkeypatch):
    monkeypatch.setattr(_device, "_supported", set())
    monkeypatch.setattr(_ext, "device_facts", lambda: facts((7, 0), probe="cudaErrorNoKernelImageForDevice"))
    with pytest.raises(RuntimeError, match=r"cannot run on GPU 0 \(Made-up GPU, compute capability 7\.0\)"):
        _device.require(0)
    assert 0 not in _device._supported


def test_show_config():
    out = io.StringIO()
    tilesort.show_config(file=out)
    text = out.getvalue()
    assert text.startswith(f"tilesort {tilesort.__version__}\n")
    for part in ("CUDA runtime: ", "GPU code: " + _device.describe(_ext.cuda_architectures),
                 "NCCL module (tilesort.distributed): ", "current GPU: "):
        assert part in text, part


def test_unsupported_gpu_sort_raises_and_writes_nothing(cuda, monkeypatch):
    torch = cuda
    real = _ext.device_facts()
    assert _device.problem(real, _ext.cuda_architectures) is None, "this GPU should be supported"
    made_up = dict(real, capability=(7, 0), probe="cudaErrorNoKernelImageForDevice")
    monkeypatch.setattr(_device, "_supported", set())
    monkeypatch.setattr(_ext, "device_facts", lambda: made_up)
    x = torch.tensor([5, 3, 9, 1], dtype=torch.int32, device="cuda")
    out = (torch.full((4,), -1, dtype=torch.int32, device="cuda"),
           torch.full((4,), -1, dtype=torch.int64, device="cuda"))
    with pytest.raises(RuntimeError, match=r"compute capability 7\.0") as error:
        tilesort.sort(x, out=out)
    for part in (real["name"], _device.describe(_ext.cuda_architectures), "from source"):
        assert part in str(error.value), part
    assert out[0].tolist() == [-1] * 4 and out[1].tolist() == [-1] * 4
