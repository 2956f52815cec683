"""tilesort's torch custom operators (``torch.ops.tilesort.*``), registered on import when torch is present.

Each operator wraps the same native path as the eager functions (_core.py)
and has a fake implementation (shapes and dtypes only, contiguous outputs, as
the real ones), so ``torch.compile`` traces through it; ``tilesort::sort``
has autograd for its values: the gradient is scattered back through the
indices, as torch.sort's is. Segment offsets reach the operators already
checked and converted to int64 CSR by the public functions.

    values, indices = torch.ops.tilesort.sort(x, -1, False)

(No `from __future__ import annotations` here: custom_op reads the annotations
as types to build each operator's schema.)
"""

import torch

from . import _core
from ._arrays import TorchBackend

_be = TorchBackend(torch)


def _int64_like(x):
    return torch.empty(x.shape, dtype=torch.int64, device=x.device)


def _like(x):
    return torch.empty(x.shape, dtype=x.dtype, device=x.device)


@torch.library.custom_op("tilesort::sort", mutates_args=())
def _sort(x: torch.Tensor, dim: int, descending: bool) -> tuple[torch.Tensor, torch.Tensor]:
    return _core.sort_rows(_be, "sort", x, dim, descending, _core.INDEX)


@_sort.register_fake
def _(x, dim, descending):
    return _like(x), _int64_like(x)


def _sort_setup(ctx, inputs, output):
    x, dim, _ = inputs
    ctx.dim = dim
    ctx.shape = x.shape
    ctx.save_for_backward(output[1])


def _sort_backward(ctx, grad_values, grad_indices):
    (indices,) = ctx.saved_tensors
    if len(ctx.shape) == 0:
        return grad_values, None, None
    grad = grad_values.new_zeros(ctx.shape).scatter(ctx.dim, indices, grad_values)
    return grad, None, None


_sort.register_autograd(_sort_backward, setup_context=_sort_setup)


@torch.library.custom_op("tilesort::argsort", mutates_args=())
def _argsort(x: torch.Tensor, dim: int, descending: bool) -> torch.Tensor:
    return _core.sort_rows(_be, "argsort", x, dim, descending, _core.INDEX, keep_keys=False)[1]


@_argsort.register_fake
def _(x, dim, descending):
    return _int64_like(x)


@torch.library.custom_op("tilesort::sort_pairs", mutates_args=())
def _sort_pairs(keys: torch.Tensor, values: torch.Tensor, dim: int,
                descending: bool) -> tuple[torch.Tensor, torch.Tensor]:
    return _core.sort_rows(_be, "sort_pairs", keys, dim, descending, values)


@_sort_pairs.register_fake
def _(keys, values, dim, descending):
    return _like(keys), _like(values)


@torch.library.custom_op("tilesort::segmented_sort_keys", mutates_args=())
def _segmented_sort_keys(keys: torch.Tensor, offsets: torch.Tensor, descending: bool) -> torch.Tensor:
    return _core.sort_segments(_be, "segmented_sort", keys, offsets, descending, None)[0]


@_segmented_sort_keys.register_fake
def _(keys, offsets, descending):
    return _like(keys)


@torch.library.custom_op("tilesort::segmented_sort_pairs", mutates_args=())
def _segmented_sort_pairs(keys: torch.Tensor, offsets: torch.Tensor, values: torch.Tensor,
                          descending: bool) -> tuple[torch.Tensor, torch.Tensor]:
    return _core.sort_segments(_be, "segmented_sort", keys, offsets, descending, values)


@_segmented_sort_pairs.register_fake
def _(keys, offsets, values, descending):
    return _like(keys), _like(values)


@torch.library.custom_op("tilesort::segmented_argsort", mutates_args=())
def _segmented_argsort(keys: torch.Tensor, offsets: torch.Tensor, descending: bool) -> torch.Tensor:
    return _core.sort_segments(_be, "segmented_argsort", keys, offsets, descending, _core.INDEX, keep_keys=False)[1]


@_segmented_argsort.register_fake
def _(keys, offsets, descending):
    return _int64_like(keys)


@torch.library.custom_op("tilesort::locality_sort_keys", mutates_args=())
def _locality_sort_keys(keys: torch.Tensor, descending: bool) -> torch.Tensor:
    return _core.sort_rows(_be, "locality_sort", keys, 0, descending, None, algo=_core.LOCALITY)[0]


@_locality_sort_keys.register_fake
def _(keys, descending):
    return _like(keys)


@torch.library.custom_op("tilesort::locality_sort_pairs", mutates_args=())
def _locality_sort_pairs(keys: torch.Tensor, values: torch.Tensor,
                         descending: bool) -> tuple[torch.Tensor, torch.Tensor]:
    return _core.sort_rows(_be, "locality_sort", keys, 0, descending, values, algo=_core.LOCALITY)


@_locality_sort_pairs.register_fake
def _(keys, values, descending):
    return _like(keys), _like(values)
