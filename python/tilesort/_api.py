"""tilesort's public functions: torch-like sorts of any CUDA array.

Each function validates its arguments (a rejected call writes nothing),
picks the array backend (torch, cupy, or DLPack through one of them), and
runs the sort on the caller's current stream with outputs and temp storage
from the caller's allocator. With torch, calls under ``torch.compile`` and
``sort`` calls that need a gradient go through the registered custom
operators (``torch.ops.tilesort.*``, see _torch_ops.py); other calls run
directly, which keeps small calls cheap.

    import torch, tilesort
    x = torch.randn(1000, 300, device="cuda")
    values, indices = tilesort.sort(x)          # like torch.sort(x, stable=True)
"""

from __future__ import annotations

from collections import namedtuple

from . import _core, _host
from ._arrays import backend_of

SortResult = namedtuple("SortResult", ["values", "indices"])
PairsResult = namedtuple("PairsResult", ["keys", "values"])


def _prepare(function, x, argument="x"):
    be = backend_of(x, function, argument)
    native = be.to_native(x)
    _core.check_device(be, native, function, argument)
    _core.key_type(be, native, function, argument)
    return be, native


def _native_payload(be, keys, values, function):
    if values is None:
        return None
    native = be.to_native(values) if be.name.startswith("dlpack") else values
    _core.check_payload(be, keys, native, function)
    return native


def _use_op(be, x, needs_grad=False):
    """True when a torch call must go through the custom operator (compile, autograd)."""
    if be.name != "torch":
        return False
    torch = be.torch
    if torch.compiler.is_compiling():
        return True
    return needs_grad and torch.is_grad_enabled() and x.requires_grad


def sort(x, dim=-1, descending=False, stable=True, *, out=None, device_memory_budget=0, progress=False):
    """Sorts x along ``dim``; returns ``(values, indices)`` like ``torch.sort(x, stable=True)``.

    Any rank, every dtype of KEY_TYPES; indices are int64 positions along
    ``dim``. NaN sorts after every number (first when descending, as in
    torch), -0.0 equals +0.0, equal keys keep their order (the sort is always
    stable; ``stable`` is accepted for torch compatibility). ``out=(values,
    indices)`` writes into given arrays. Differentiable in ``values`` (torch).
    A numpy array or a CPU tensor is sorted on the GPU through the host sort
    (see _host.py: ``device_memory_budget=`` bytes, ``progress=True`` for a
    tqdm bar) and the results are host arrays of its type: numpy's
    ``kind="stable"`` result bit for bit.

        values, indices = tilesort.sort(torch.randn(4096, 1000, device="cuda"), descending=True)
        values, indices = tilesort.sort(np.random.rand(1 << 28), device_memory_budget=4 << 30)
    """
    if _host.host_kind(x) is not None:
        return SortResult(*_host.sort("sort", x, dim, descending, out=out, device_memory_budget=device_memory_budget,
                                      progress=progress))
    be, native = _prepare("sort", x)
    dim = _core.normalize_dim(native, dim, "sort")
    if out is None and _use_op(be, native, needs_grad=True):
        values, indices = be.torch.ops.tilesort.sort(native, dim, bool(descending))
        return SortResult(values, indices)
    outs = [None, None] if out is None else _core.check_out(
        be, native, out, [(native.shape, be.dtype_name(native)), (native.shape, "int64")], "sort")
    values, indices = _core.sort_rows(be, "sort", native, dim, descending, _core.INDEX, out_keys=outs[0],
                                      out_payload=outs[1])
    return SortResult(be.wrap_like(x, values), be.wrap_like(x, indices))


def argsort(x, dim=-1, descending=False, stable=True, *, out=None, device_memory_budget=0, progress=False):
    """The int64 indices that sort x along ``dim``: ``sort(x, ...)[1]``, like ``torch.argsort(x, stable=True)``.

    Host arrays (numpy, CPU tensors) as in ``sort``.

        order = tilesort.argsort(scores, dim=1, descending=True)
    """
    if _host.host_kind(x) is not None:
        return _host.sort("argsort", x, dim, descending, out=out, keep_keys=False,
                          device_memory_budget=device_memory_budget, progress=progress)[0]
    be, native = _prepare("argsort", x)
    dim = _core.normalize_dim(native, dim, "argsort")
    if out is None and _use_op(be, native):
        return be.torch.ops.tilesort.argsort(native, dim, bool(descending))
    outs = [None] if out is None else _core.check_out(be, native, out, [(native.shape, "int64")], "argsort")
    _, indices = _core.sort_rows(be, "argsort", native, dim, descending, _core.INDEX, out_payload=outs[0],
                                 keep_keys=False)
    return be.wrap_like(x, indices)


def sort_pairs(keys, values, dim=-1, descending=False, *, out=None, device_memory_budget=0, progress=False):
    """Sorts keys along ``dim`` and carries values (same shape, any dtype of 1-8 bytes) with them.

    Returns ``(keys, values)``; stable. ``out=(keys, values)`` writes into given arrays.
    Host arrays (numpy, CPU tensors; values of the same kind) as in ``sort``.

        k, v = tilesort.sort_pairs(scores, token_ids, descending=True)
    """
    if _host.host_kind(keys) is not None:
        if values is None:
            _core.fail(TypeError, "sort_pairs", "`values` is required (use tilesort.sort for keys alone)")
        return PairsResult(*_host.sort("sort_pairs", keys, dim, descending, values, out=out, keep_indices=False,
                                       device_memory_budget=device_memory_budget, progress=progress))
    be, native = _prepare("sort_pairs", keys, "keys")
    payload = _native_payload(be, native, values, "sort_pairs")
    if payload is None:
        _core.fail(TypeError, "sort_pairs", "`values` is required (use tilesort.sort for keys alone)")
    dim = _core.normalize_dim(native, dim, "sort_pairs")
    if out is None and _use_op(be, native):
        k, v = be.torch.ops.tilesort.sort_pairs(native, payload, dim, bool(descending))
        return PairsResult(k, v)
    outs = [None, None] if out is None else _core.check_out(
        be, native, out, [(native.shape, be.dtype_name(native)), (native.shape, be.dtype_name(payload))],
        "sort_pairs")
    k, v = _core.sort_rows(be, "sort_pairs", native, dim, descending, payload, out_keys=outs[0],
                           out_payload=outs[1])
    return PairsResult(be.wrap_like(keys, k), be.wrap_like(keys, v))


def _segment_args(function, keys, offsets, lengths, check):
    be, native = _prepare(function, keys, "keys")
    if native.ndim != 1:
        _core.fail(ValueError, function, f"`keys` must be 1-D (got shape {tuple(native.shape)}); "
                                         f"flatten it with keys.reshape(-1) and give offsets into the flat array")
    to_native = be.to_native if be.name.startswith("dlpack") else (lambda a: a)
    offsets = None if offsets is None else to_native(offsets)
    lengths = None if lengths is None else to_native(lengths)
    return be, native, _core.segment_offsets(be, native, offsets, lengths, check, function)


def segmented_sort(keys, offsets=None, lengths=None, values=None, descending=False, *, check=True, out=None):
    """Sorts each segment of 1-D ``keys`` on its own; returns ``(keys, values)`` (values None when not given).

    Segments: CSR ``offsets`` (n_segments + 1 entries; segment i is
    ``[offsets[i], offsets[i+1])``) or ``lengths`` (n_segments entries,
    starting at 0), int32 or int64. Keys outside every segment stay where they
    are. ``values``: same shape, any dtype of 1-8 bytes, carried with the keys.
    ``check=True`` validates the segments first (one synchronisation);
    ``check=False`` skips that (required inside CUDA graph capture).

        keys, _ = tilesort.segmented_sort(flat, offsets=torch.tensor([0, 3, 3, 10], device="cuda"))
    """
    be, native, csr = _segment_args("segmented_sort", keys, offsets, lengths, check)
    payload = _native_payload(be, native, values, "segmented_sort")
    if out is None and _use_op(be, native):
        ops = be.torch.ops.tilesort
        if payload is None:
            return PairsResult(ops.segmented_sort_keys(native, csr, bool(descending)), None)
        return PairsResult(*ops.segmented_sort_pairs(native, csr, payload, bool(descending)))
    expected = [(native.shape, be.dtype_name(native))]
    if payload is not None:
        expected.append((native.shape, be.dtype_name(payload)))
    outs = [None, None] if out is None else _core.check_out(be, native, out, expected, "segmented_sort") + [None]
    k, v = _core.sort_segments(be, "segmented_sort", native, csr, descending, payload, out_keys=outs[0],
                               out_payload=outs[1])
    return PairsResult(be.wrap_like(keys, k), be.wrap_like(keys, v))


def segmented_argsort(keys, offsets=None, lengths=None, descending=False, *, check=True, out=None):
    """The int64 positions (in the whole array) that sort each segment of 1-D ``keys``.

    ``keys[segmented_argsort(keys, offsets)]`` is ``segmented_sort(keys, offsets)[0]``;
    positions outside every segment map to themselves.

        order = tilesort.segmented_argsort(flat, lengths=row_lengths)
    """
    be, native, csr = _segment_args("segmented_argsort", keys, offsets, lengths, check)
    if out is None and _use_op(be, native):
        return be.torch.ops.tilesort.segmented_argsort(native, csr, bool(descending))
    outs = [None] if out is None else _core.check_out(be, native, out, [(native.shape, "int64")],
                                                      "segmented_argsort")
    _, indices = _core.sort_segments(be, "segmented_argsort", native, csr, descending, _core.INDEX,
                                     out_payload=outs[0], keep_keys=False)
    return be.wrap_like(keys, indices)


def locality_sort(keys, values=None, descending=False, *, out=None):
    """Stable sort of 1-D ``keys`` (and ``values``) that is fast when keys start near their sorted place.

    Returns ``(keys, values)`` (values None when not given); ``out=`` as in
    segmented_sort. Same result as ``sort_pairs``; the cost drops with the
    input's disorder (sorted input: one read and one write).

        k, _ = tilesort.locality_sort(timestamps)   # nearly sorted
    """
    be, native = _prepare("locality_sort", keys, "keys")
    if native.ndim != 1:
        _core.fail(ValueError, "locality_sort", f"`keys` must be 1-D (got shape {tuple(native.shape)}); "
                                                f"flatten it with keys.reshape(-1)")
    payload = _native_payload(be, native, values, "locality_sort")
    if out is None and _use_op(be, native):
        ops = be.torch.ops.tilesort
        if payload is None:
            return PairsResult(ops.locality_sort_keys(native, bool(descending)), None)
        return PairsResult(*ops.locality_sort_pairs(native, payload, bool(descending)))
    expected = [(native.shape, be.dtype_name(native))]
    if payload is not None:
        expected.append((native.shape, be.dtype_name(payload)))
    outs = [None, None] if out is None else _core.check_out(be, native, out, expected, "locality_sort") + [None]
    k, v = _core.sort_rows(be, "locality_sort", native, 0, descending, payload, algo=_core.LOCALITY,
                           out_keys=outs[0], out_payload=outs[1])
    return PairsResult(be.wrap_like(keys, k), be.wrap_like(keys, v))
