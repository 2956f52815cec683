"""Sorts of host arrays (numpy arrays, CPU torch tensors) on the GPU, through the library's host sort.

``tilesort.sort``, ``argsort`` and ``sort_pairs`` come here for a numpy array
or a torch tensor on the CPU (pinned or not). The keys, moved so that the
sorted dim is last, are copied once on the host (the input is never written)
and sorted in place by ``tilesort::host_sort_pairs`` (src/host_call.h) as the
unsigned integers of their width in the dtype's order (src/dtype_order.cuh:
NaN last, first when descending, -0.0 equal to +0.0), with their int64
positions as values (1- and 2-byte keys widened to 4-byte keys of the same
order, the package carrying host-sort kernels for 4- and 8-byte keys only;
their values are then gathered by position). The host sort is stable, so the result is numpy's
``kind="stable"`` bit for bit (torch.sort(stable=True)'s for torch input).
Arrays of several rows sort all rows' keys at once, then the positions again
by their row (stable too), and the keys and payloads are gathered by position.
The host work around the sort (the copy of the keys, the positions, the
gathers) runs on several threads in pieces of ``PIECE_ITEMS`` (numpy releases
the GIL for them), so it keeps pace with the host link.
It needs only as much device memory as ``device_memory_budget`` (bytes; 0:
the free memory less a margin): more keys than fit take two passes through
the GPU instead of one. ``progress=True`` shows a tqdm bar (where tqdm is
installed); a callable gets ``(bytes_done, bytes_total)``.

    import numpy as np, tilesort
    x = np.random.rand(1 << 28).astype(np.float32)
    values, indices = tilesort.sort(x, device_memory_budget=4 << 30, progress=True)
"""

from __future__ import annotations

import os
import sys
from concurrent.futures import ThreadPoolExecutor

from . import _ext
from ._arrays import KEY_TYPES


PIECE_ITEMS = 1 << 21  # items per piece of the threaded host work; arrays of one piece stay on the caller's thread
_pool = None


def _in_pieces(n, work):
    """work(lo, hi) over [0, n) in pieces of PIECE_ITEMS, on a pool of threads (one per core, at most 16)."""
    global _pool
    if n <= PIECE_ITEMS:
        work(0, n)
        return
    if _pool is None:
        _pool = ThreadPoolExecutor(max(1, min(16, os.cpu_count() or 1)), thread_name_prefix="tilesort-host")
    for done in _pool.map(lambda lo: work(lo, min(n, lo + PIECE_ITEMS)), range(0, n, PIECE_ITEMS)):
        del done  # map re-raises a piece's exception here


def _copy(np, dst, src):
    """dst[...] = src (same shape); flat pieces on threads where both are C-contiguous."""
    if dst.flags.c_contiguous and src.flags.c_contiguous:
        d, s = dst.reshape(-1), src.reshape(-1)
        _in_pieces(d.size, lambda lo, hi: np.copyto(d[lo:hi], s[lo:hi]))
    else:
        np.copyto(dst, src)


def _iota(np, dst):
    """dst[i] = i for the 1-D int64 dst."""
    _in_pieces(dst.size, lambda lo, hi: np.copyto(dst[lo:hi], np.arange(lo, hi, dtype=np.int64)))


def _gather(np, src, positions):
    """src[positions] (1-D), in pieces on threads."""
    out = np.empty(positions.size, dtype=src.dtype)
    _in_pieces(positions.size, lambda lo, hi: np.take(src, positions[lo:hi], out=out[lo:hi]))
    return out


def _widened(np, bits, key_type, out):
    """The 1- or 2-byte keys `bits` (1-D, their unsigned bits) written to the uint32 `out` as 4-byte keys of the
    same order (integers extended, float16 converted to float32, bfloat16 shifted into float32's top half);
    returns the key type they sort as, so the library's dtype order serves them unchanged."""
    if key_type.kind == "f" and key_type.inf_bits == KEY_TYPES["bfloat16"].inf_bits:
        def work(lo, hi):
            np.copyto(out[lo:hi], bits[lo:hi])
            np.left_shift(out[lo:hi], 16, out=out[lo:hi])

        _in_pieces(bits.size, work)
        return KEY_TYPES["float32"]
    wide = {"u": "uint32", "i": "int32", "f": "float32"}[key_type.kind]
    narrow = {"u": bits.dtype, "i": np.dtype(f"int{8 * key_type.bytes}"), "f": np.dtype(np.float16)}[key_type.kind]
    _copy(np, out.view(wide), bits.view(narrow))
    return KEY_TYPES[wide]


def host_kind(x):
    """'numpy' for a numpy array, 'torch' for a CPU tensor, else None."""
    np = sys.modules.get("numpy")
    if np is not None and isinstance(x, np.ndarray):
        return "numpy"
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor) and x.device.type == "cpu":
        return "torch"
    return None


def _fail(error, function, message):
    raise error(f"tilesort.{function}: {message}")


def _numpy():
    try:
        import numpy
    except ImportError:  # pragma: no cover - a CPU tensor without numpy
        raise ImportError("tilesort sorts CPU tensors through numpy: pip install numpy") from None
    return numpy


def _as_numpy(x, kind, function, argument):
    """(numpy view of x, dtype name) without a copy; bfloat16 tensors as their int16 bits."""
    if kind == "numpy":
        if x.dtype.hasobject or x.dtype.kind not in "biuf":
            _fail(TypeError, function, f"`{argument}` has dtype {x.dtype}; keys may be bool, int8..int64, "
                                       f"uint8..uint64, float16, float32 or float64: convert them first (.astype(...))")
        if not x.dtype.isnative:
            _fail(TypeError, function, f"`{argument}` has the non-native byte order of {x.dtype.str}: convert it "
                                       f"first (.astype(x.dtype.newbyteorder('=')))")
        return x, x.dtype.name
    name = str(x.dtype).split(".")[-1]
    if name not in KEY_TYPES:
        _fail(TypeError, function, f"`{argument}` has dtype {name}; keys may be bool, int8..int64, uint8..uint64, "
                                   f"float16, bfloat16, float32 or float64: convert them first (.to(...))")
    return _bits_of_tensor(x), name


def _bits_of_tensor(t):
    """A numpy view of a CPU tensor (bfloat16, which numpy lacks, as its int16 bits)."""
    torch = sys.modules["torch"]
    t = t.detach()
    if t.dtype == torch.bfloat16:
        t = t.view(torch.int16)
    return t.numpy()


def _progress_callback(progress, function):
    if progress is None or progress is False:
        return None, None
    if callable(progress):
        return progress, None
    if progress is not True:
        _fail(TypeError, function, f"progress= takes True, False or a callable(done_bytes, total_bytes), "
                                   f"not {type(progress).__name__}")
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None, None
    bar = tqdm(total=0, unit="B", unit_scale=True, desc=f"tilesort.{function}")

    def update(done, total):
        bar.total = total
        bar.n = done
        bar.refresh()

    return update, bar


def _run(keys, positions, key_type, descending, budget, progress, function):
    """host_sort_pairs of the contiguous 1-D keys (their bits) with positions, in place."""
    n = keys.size
    if n <= 1:
        return
    callback, bar = _progress_callback(progress, function)
    try:
        _ext.host_sort(keys.ctypes.data, positions.ctypes.data, n, key_type.bytes, key_type.kind, key_type.inf_bits,
                       bool(descending), int(budget), callback)
    except ValueError:
        _fail(ValueError, function, f"device_memory_budget={budget} bytes is too small to sort {n} keys of "
                                    f"{key_type.bytes} bytes from host memory (with their int64 positions): give "
                                    f"more, or 0 for the free device memory")
    finally:
        if bar is not None:
            bar.close()


def _check_out(out, expected, kind, function):
    outs = out if isinstance(out, (tuple, list)) else (out,)
    if len(outs) != len(expected):
        _fail(ValueError, function, f"out= takes {len(expected)} array(s), got {len(outs)}")
    for i, (array, (shape, dtype)) in enumerate(zip(outs, expected)):
        if array is None:
            continue
        name = f"out[{i}]" if len(expected) > 1 else "out"
        if host_kind(array) != kind:
            _fail(TypeError, function, f"{name} must be a host array of the input's kind ({kind})")
        if tuple(array.shape) != tuple(shape):
            _fail(ValueError, function, f"{name} has shape {tuple(array.shape)}; it must be {tuple(shape)}")
        if array.dtype != dtype:
            _fail(TypeError, function, f"{name} has dtype {array.dtype}; it must be {dtype}")
    return list(outs)


def sort(function, x, dim, descending, values=None, *, out=None, keep_keys=True, keep_indices=True,
         device_memory_budget=0, progress=False):
    """The host sort behind sort/argsort/sort_pairs: returns [keys, indices or values] as the caller's type."""
    np = _numpy()
    kind = host_kind(x)
    a, name = _as_numpy(x, kind, function, "x" if values is None else "keys")
    key_type = KEY_TYPES[name]
    ndim = max(a.ndim, 1)
    if not isinstance(dim, int) or not -ndim <= dim < ndim:
        _fail(ValueError, function, f"dim={dim!r} is out of range for an array of {a.ndim} dimension(s): "
                                    f"use an int in [{-ndim}, {ndim - 1}]")
    if not isinstance(device_memory_budget, int) or device_memory_budget < 0:
        _fail(ValueError, function, f"device_memory_budget={device_memory_budget!r}: give a number of bytes "
                                    f"(an int >= 0; 0: the free device memory)")
    payload = None
    if values is not None:
        if host_kind(values) != kind:
            _fail(TypeError, function, f"`values` must be a host array of the keys' kind ({kind})")
        payload = values if kind == "numpy" else _bits_of_tensor(values)
        if payload.shape != a.shape:
            _fail(ValueError, function, f"`values` has shape {payload.shape} but the keys have {a.shape}: "
                                        f"they must match")
        if payload.dtype.hasobject:
            _fail(TypeError, function, "`values` of dtype object cannot be carried: use a numeric dtype")
    shape = a.shape
    moved = np.moveaxis(a.reshape(1) if a.ndim == 0 else a, dim % ndim, -1)
    length = moved.shape[-1]
    width = np.dtype(f"uint{8 * key_type.bytes}")
    n = moved.size
    narrow = key_type.bytes < 4  # sorted as 4-byte keys of the same order, the keys then gathered by position
    positions = np.empty(n, dtype=np.int64)  # pageable, as the keys: the host sort registers them for the call
    flat = np.ascontiguousarray(moved).reshape(-1).view(width) if narrow or n > length else None
    if narrow:
        keys = np.empty(n, dtype=np.uint32)
        sorted_as = _widened(np, flat, key_type, keys)
    else:
        keys = np.empty(n, dtype=width)
        _copy(np, keys.reshape(moved.shape), (moved.view(width) if flat is None else flat).reshape(moved.shape))
        sorted_as = key_type
    _iota(np, positions)
    _run(keys, positions, sorted_as, descending, device_memory_budget, progress, function)
    if n > length:  # several rows: the positions again, stably by their row
        rows = np.empty(n, dtype=np.int64)
        _in_pieces(n, lambda lo, hi: np.floor_divide(positions[lo:hi], length, out=rows[lo:hi]))
        _run(rows.view(np.uint64), positions, KEY_TYPES["uint64"], False, device_memory_budget, progress, function)
    if flat is not None:
        keys = _gather(np, flat, positions)
    results = []
    if keep_keys:
        results.append(keys.view(a.dtype).reshape(moved.shape))
    if keep_indices:
        if n > length:
            _in_pieces(n, lambda lo, hi: np.remainder(positions[lo:hi], length, out=rows[lo:hi]))
            results.append(rows.reshape(moved.shape))
        else:
            results.append(positions.reshape(moved.shape))
    if payload is not None:
        flat = np.ascontiguousarray(np.moveaxis(payload.reshape(1) if payload.ndim == 0 else payload, dim % ndim, -1))
        results.append(_gather(np, flat.reshape(-1), positions).reshape(moved.shape))
    results = [np.ascontiguousarray(np.moveaxis(r, -1, dim % ndim)).reshape(shape) for r in results]
    if kind == "torch":
        torch = sys.modules["torch"]
        wrapped = []
        for r, like in zip(results, _likes(x, values, keep_keys, keep_indices)):
            t = torch.from_numpy(r)
            wrapped.append(t.view(like) if like is not None and t.dtype != like else t)
        results = wrapped
    if out is not None:
        expected = [(shape, r.dtype) for r in results]
        for target, r in zip(_check_out(out, expected, kind, function), results):
            if target is not None:
                if kind == "numpy":
                    np.copyto(target, r)
                else:
                    target.copy_(r)
        results = [t if t is not None else r for t, r in zip(out if isinstance(out, (tuple, list)) else (out,),
                                                              results)]
    return results


def _likes(x, values, keep_keys, keep_indices):
    """The torch dtypes the results are viewed as (bfloat16 keys come back from int16 bits)."""
    likes = []
    if keep_keys:
        likes.append(x.dtype)
    if keep_indices:
        likes.append(None)
    if values is not None:
        likes.append(values.dtype)
    return likes
