"""tilesort: GPU sorting for PyTorch and CuPy arrays.

Mirrors torch where torch has the operation (``sort``, ``argsort``) and adds
what it lacks: ragged segments (``segmented_sort``, ``segmented_argsort``),
key-value sorts with any payload (``sort_pairs``) and a sort for nearly sorted
input (``locality_sort``). Arrays go in without copies (torch, cupy, or any
array with ``__dlpack__`` / ``__cuda_array_interface__``), results come back as
the caller's array type, and the work runs on the caller's current stream.
``sort``, ``argsort`` and ``sort_pairs`` also take numpy arrays and CPU tensors
and sort them on the GPU through the host sort (any size, in a budget of
device memory), returning host arrays.

    import torch, tilesort
    x = torch.randn(1 << 20, device="cuda")
    values, indices = tilesort.sort(x)
    keys, _ = tilesort.segmented_sort(x, offsets=torch.tensor([0, 100, 1 << 20], device="cuda"))
"""

try:
    from . import _ext
except ImportError as error:  # pragma: no cover - depends on the installation
    raise ImportError(
        "tilesort's CUDA extension (tilesort._ext) is missing or cannot load: build the package with "
        "`pip install .` in a tilesort checkout (needs nvcc and CMake)") from error

from ._api import (PairsResult, SortResult, argsort, locality_sort, segmented_argsort, segmented_sort, sort,
                   sort_pairs)
from ._arrays import KEY_TYPES
from ._device import show_config

__version__ = _ext.version  # include/tilesort/version.cuh, as the package metadata's
__all__ = ["sort", "argsort", "sort_pairs", "segmented_sort", "segmented_argsort", "locality_sort", "SortResult",
           "PairsResult", "KEY_TYPES", "show_config"]

try:
    import torch as _torch
except ImportError:
    _torch = None
if _torch is not None:
    from . import _torch_ops  # noqa: F401  (registers torch.ops.tilesort.*)
