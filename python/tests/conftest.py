"""Shared fixtures: skip with a message where torch, cupy or a GPU is missing."""

import pytest


def _gpu_count():
    try:
        import torch

        return torch.cuda.device_count() if torch.cuda.is_available() else 0
    except ImportError:
        pass
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount()
    except Exception:  # no cupy, or no driver / device
        return 0


@pytest.fixture(scope="session")
def torch():
    return pytest.importorskip("torch", reason="torch is not installed: the torch tests skip")


@pytest.fixture(scope="session")
def cuda(torch):
    """torch with a CUDA device."""
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device: the GPU tests skip")
    return torch


@pytest.fixture(scope="session")
def cupy():
    cp = pytest.importorskip("cupy", reason="cupy is not installed: the cupy tests skip")
    try:
        if cp.cuda.runtime.getDeviceCount() == 0:
            pytest.skip("no CUDA device: the cupy tests skip")
    except cp.cuda.runtime.CUDARuntimeError:
        pytest.skip("no CUDA device (or driver): the cupy tests skip")
    return cp


def pytest_report_header(config):
    return f"tilesort GPU tests: {_gpu_count()} CUDA device(s) visible"
