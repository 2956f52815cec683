"""The sorts on native arrays (torch tensors or cupy arrays): validation, layout, launch.

Contract: every check of the arguments runs before anything is allocated or
launched, and the check that this build runs on the device (``_device``,
once per device) before the first launch, so a rejected call writes nothing.
One sort is one extension call (a sort job, src/sort_call.h) on the caller's
stream, with outputs and temp storage from the caller's allocator; the temp
size is asked once per shape and remembered.
In the job, keys of 1 or 2 bytes and floating keys (FLOAT_RANKS) sort as
their ranks in the dtype order (unsigned integers of 4 or 8 bytes, src/
dtype_order.cuh) and come back as their original bits by the rank's
inverse, or, for floating zero and NaN (ranks that several bit patterns
share), by the index payload from the input; integers of 4 and 8 bytes sort
as their bits. The extension carries 8-byte payloads only: an index payload
(argsort) is written by the job as the position in the row (rows) or in the
array (segments, one array) and sorted along; keys alone, floating keys
sorted as ranks and payloads of 1, 2 or 4 bytes take the index payload and
the payload is a gather.

Layouts: rows are the last dimension; rows along another ``dim`` of a
contiguous array with an index payload (sort, argsort, and the gather of
sort_pairs) sort where they lie, ``row_stride`` apart, when the extension
takes them (``_sorts_strided``: keys of up to 4 bytes, 8-byte keys that do
not sort as ranks, rows that fit a row sorter); otherwise the dim is moved
last, made contiguous, sorted and moved back. A single row (1-D input) takes the
one-array sort (``ONE_ARRAY``: the library's front door); ragged segments
are CSR int64 offsets over a 1-D array; results are always contiguous.

    be = backend_of(x, "sort", "x")
    values, indices = sort_rows(be, "sort", x, dim=-1, descending=False, payload=INDEX)
"""

from __future__ import annotations

import math

from . import _device, _ext
from ._arrays import KEY_TYPES

INDEX = "index"  # payload marker: sort positions along with the keys (argsort)
LOCALITY = _ext.Algorithm.LOCALITY

# The one-array sort (1-D input, or a single row): the library's front door
# (tilesort::sort_pairs), which picks the fastest of its algorithms for n.
ONE_ARRAY = _ext.Algorithm.FRONT

PAYLOAD_BYTES = (1, 2, 4, 8)

# Floating keys of 4 and 8 bytes sort as their ranks (written and inverted by
# the job around the sort) instead of through the run-time float order (False).
FLOAT_RANKS = True

# Temp bytes per job shape (see launch). The library's size queries are arithmetic on n and the sizes
# (no device state is read), so one answer per shape holds on every device and stream. Cleared when it
# grows past _TEMP_SHAPES entries.
_temp_bytes = {}
_TEMP_SHAPES = 4096


def fail(error, function, message):
    raise error(f"tilesort.{function}: {message}")


def key_type(be, x, function, argument):
    name = be.dtype_name(x)
    kt = KEY_TYPES.get(name)
    if kt is None:
        fail(TypeError, function,
             f"`{argument}` has dtype {name}; keys may be bool, int8..int64, uint8..uint64, float16, bfloat16, "
             f"float32 or float64: convert them first (.to(...) / .astype(...))")
    return kt


def check_device(be, x, function, argument):
    problem = be.device_problem(x)
    if problem is not None:
        fail(ValueError, function, f"`{argument}` {problem}")


def check_same_device(be, x, other, function, argument):
    if not isinstance(other, be.array_type):
        fail(TypeError, function,
             f"`{argument}` must be the same kind of array as the keys ({be.name}), not {type(other).__name__}")
    if not be.same_device(x, other):
        fail(ValueError, function, f"`{argument}` must be on the keys' device")


def normalize_dim(x, dim, function):
    ndim = max(x.ndim, 1)
    if not isinstance(dim, int) or not -ndim <= dim < ndim:
        fail(ValueError, function, f"dim={dim!r} is out of range for an array of {x.ndim} dimension(s): "
                                   f"use an int in [{-ndim}, {ndim - 1}]")
    return dim % ndim


def check_payload(be, keys, values, function, argument="values"):
    check_same_device(be, keys, values, function, argument)
    if tuple(values.shape) != tuple(keys.shape):
        fail(ValueError, function,
             f"`{argument}` has shape {tuple(values.shape)} but the keys have {tuple(keys.shape)}: they must match")
    if be.itemsize(values) not in PAYLOAD_BYTES:
        fail(TypeError, function, f"`{argument}` has dtype {be.dtype_name(values)}; payloads are 1, 2, 4 or 8 bytes")


def check_out(be, x, out, expected, function):
    """out: an array or a tuple of them; expected: [(shape, dtype name or None for x's dtype)]."""
    outs = out if isinstance(out, (tuple, list)) else (out,)
    if len(outs) != len(expected):
        fail(ValueError, function, f"out= takes {len(expected)} array(s), got {len(outs)}")
    for i, (array, (shape, dtype)) in enumerate(zip(outs, expected)):
        name = f"out[{i}]" if len(expected) > 1 else "out"
        if array is None:
            continue
        check_same_device(be, x, array, function, name)
        if tuple(array.shape) != tuple(shape):
            fail(ValueError, function, f"{name} has shape {tuple(array.shape)}; it must be {tuple(shape)}")
        if be.dtype_name(array) != dtype:
            fail(TypeError, function, f"{name} has dtype {be.dtype_name(array)}; it must be {dtype}")
    return list(outs)


def _by_index(kt, payload, be):
    """Whether the job carries the index payload (then any payload other than INDEX is a gather after it).

    Floating keys sorted as ranks need it: their zeros and NaNs come back from the input by index.
    """
    if payload is None or payload is INDEX or be.itemsize(payload) != 8:
        return True
    return kt.kind == "f" and (kt.bytes < 4 or FLOAT_RANKS)


# Rows along another dim sort where they lie (False: always moved last; the benchmark's A/B).
STRIDED_ROWS = True
# Whether rows of a length, by key type, sort along another dim where they lie (see _sorts_strided).
_strided = {}


def _sorts_strided(kt, length):
    """Whether the extension sorts rows of `length` keys of type kt, with the index payload, along another
    dim of a contiguous array (row_stride > 1); asked once per (key type, length) by a size query."""
    shape = (kt.bytes, kt.kind, FLOAT_RANKS, length)
    known = _strided.get(shape)
    if known is None:
        job = _ext.SortJob(algo=_ext.Algorithm.ROWS, key_bytes=kt.bytes, kind=kt.kind, inf_bits=kt.inf_bits,
                           rank_floats=FLOAT_RANKS, keys_in=1, keys_out=1, values_out=1, index_payload=True,
                           n=2 * length, row_length=length, row_stride=2)
        known = _strided[shape] = bool(_ext.sorts_in_place_of_rows(job))
    return known


def launch(be, like, algo, kt, descending, keys_in, keys_out, values_in, values_out, index, n, row_length=0,
           offsets=None, segments=0, row_stride=0):
    """One sort job on the caller's stream, temp storage from the caller's allocator.

    keys_out None: keys not wanted (argsort). index: values_out receives the index payload. The first job
    on a device checks that this build's GPU code runs there (_device.require: a RuntimeError that says
    what to do, before any launch).
    """
    _device.require(be.device_index(like))
    stream = be.stream(like)
    values_address = be.ptr(values_out)
    job = _ext.SortJob(algo=algo, key_bytes=kt.bytes, kind=kt.kind, inf_bits=kt.inf_bits,
                       descending=bool(descending), rank_floats=FLOAT_RANKS, keys_in=be.ptr(keys_in),
                       keys_out=0 if keys_out is None else be.ptr(keys_out),
                       values_in=0 if values_in is None else be.ptr(values_in), values_out=values_address,
                       index_payload=bool(index), n=n, row_length=row_length,
                       offsets=0 if offsets is None else be.ptr(offsets), segments=segments, row_stride=row_stride)
    shape = (algo, kt.bytes, kt.kind, FLOAT_RANKS, keys_out is None, bool(index), n, row_length, segments,
             row_stride)
    need = _temp_bytes.get(shape)
    if need is None:
        need = _ext.sort(job, temp=0, temp_bytes=0, stream=stream)
        if len(_temp_bytes) >= _TEMP_SHAPES:
            _temp_bytes.clear()
        _temp_bytes[shape] = need
    if need == 0:  # nothing to allocate: any non-null address runs the job (it reads no temp)
        _ext.sort(job, temp=values_address, temp_bytes=0, stream=stream)
        return
    temp = be.empty((need,), "uint8", like)
    _ext.sort(job, temp=be.ptr(temp), temp_bytes=need, stream=stream)


def _direct(be, out):
    """out usable as the sort's destination (contiguous), else None (the result is copied into it)."""
    return out if out is not None and be.is_contiguous(out) else None


def _direct_keys(be, kt, out, keys):
    """out_keys usable as the job's keys_out: contiguous, and not the input of floating keys (their zeros
    and NaNs come back from the input after the sort)."""
    out = _direct(be, out)
    if out is not None and kt.kind == "f" and be.ptr(out) == be.ptr(keys):
        return None
    return out


def _finish(be, result, out):
    if out is None:
        return result
    if result is not out:
        be.copy_into(out, result)
    return out


def sort_rows(be, function, x, dim, descending, payload, algo=None, out_keys=None, out_payload=None,
              keep_keys=True):
    """Sorts x along dim (rows); payload: None, INDEX or a values array of x's shape.

    Returns (keys or None, payload or None), contiguous, in x's layout; writes
    into out_keys / out_payload when given (already validated).
    """
    kt = key_type(be, x, function, "x")
    scalar = x.ndim == 0
    if scalar:
        x = x.reshape(1)
        if payload is not None and payload is not INDEX:
            payload = payload.reshape(1)
    last = x.ndim - 1
    n = be.numel(x)
    length = x.shape[dim]
    # Rows along another dim sort where they lie when the index payload carries the order (any payload
    # other than an 8-byte one sorted along is a gather by index) and the extension takes them.
    by_index = _by_index(kt, payload, be)
    row_stride = math.prod(x.shape[dim + 1:])
    strided = (STRIDED_ROWS and dim != last and by_index and n > 0 and row_stride > 1 and be.is_contiguous(x)
               and _sorts_strided(kt, length))
    moved = dim != last and not strided

    def to_rows(a):
        return be.contiguous(be.moveaxis(a, dim, -1) if moved else a)

    def from_rows(a):
        if a is None:
            return None
        if moved:
            a = be.contiguous(be.moveaxis(a, -1, dim))
        return a.reshape(()) if scalar else a

    keys = to_rows(x)
    row_shape = tuple(keys.shape)
    if algo is None:
        algo = ONE_ARRAY if n == length else _ext.Algorithm.ROWS
    direct_ok = not moved and not scalar
    keys_out = None
    if keep_keys:
        keys_out = _direct_keys(be, kt, out_keys, keys) if direct_ok else None
        if keys_out is None:
            keys_out = be.empty(row_shape, be.dtype_name(keys), keys)
    if by_index:
        values_out = _direct(be, out_payload) if direct_ok and payload is INDEX else None
        if values_out is None:
            values_out = be.empty(row_shape, "int64", keys)
        values_in = None
    else:
        values_in = to_rows(payload)
        values_out = _direct(be, out_payload) if direct_ok else None
        if values_out is None:
            values_out = be.empty(row_shape, be.dtype_name(payload), keys)
    if n > 0:
        launch(be, keys, algo, kt, descending, keys, keys_out, values_in, values_out, by_index, n,
               row_length=length, row_stride=row_stride if strided else 0)
    result_keys = result_payload = None
    if keep_keys:
        result_keys = _finish(be, from_rows(keys_out), out_keys)
    if payload is not None:
        if by_index and payload is not INDEX:
            values_out = be.take_along(to_rows(payload), values_out, dim if strided else -1)
        result_payload = _finish(be, from_rows(values_out), out_payload)
    return result_keys, result_payload


def segment_offsets(be, keys, offsets, lengths, check, function):
    """CSR int64 offsets (contiguous) from offsets= or lengths=, checked when check is true."""
    n = be.numel(keys)
    if (offsets is None) == (lengths is None):
        fail(ValueError, function, "give the segments as exactly one of offsets= (CSR, n_segments + 1 entries) "
                                   "or lengths= (n_segments entries)")
    given, name = (offsets, "offsets") if offsets is not None else (lengths, "lengths")
    check_same_device(be, keys, given, function, name)
    if be.dtype_name(given) not in ("int32", "int64"):
        fail(TypeError, function, f"`{name}` has dtype {be.dtype_name(given)}; use int32 or int64")
    if given.ndim != 1:
        fail(ValueError, function, f"`{name}` must be 1-D, not of shape {tuple(given.shape)}")
    if offsets is not None and be.numel(offsets) == 0:
        fail(ValueError, function, "`offsets` needs n_segments + 1 entries (at least 1): CSR offsets start with "
                                   "the first segment's begin and end with the last one's end")
    if check and be.capturing():
        fail(ValueError, function, "check=True reads the segments back (a synchronisation), which CUDA graph "
                                   "capture does not allow: pass check=False inside the capture")
    if lengths is not None:
        if check and be.numel(lengths) > 0:
            if bool((lengths < 0).any()):
                first = next(i for i, v in enumerate(be.to_host_list(lengths)) if v < 0)
                fail(ValueError, function, f"lengths[{first}] = {be.to_host_list(lengths)[first]} is negative: "
                                           f"segment lengths must be >= 0")
        offsets = be.offsets_from_lengths(be.astype(lengths, "int64"))
        if check and be.numel(lengths) > 0 and bool(offsets[-1] > n):
            fail(ValueError, function, f"the lengths add up to {int(offsets[-1])}, more than the {n} keys: "
                                       f"segments must lie inside the keys")
        return offsets
    offsets = be.contiguous(be.astype(offsets, "int64"))
    if check:
        bad = (offsets[0] < 0) | (offsets[-1] > n)
        if be.numel(offsets) > 1:
            bad = bad | (offsets[1:] < offsets[:-1]).any()
        if bool(bad):
            host = be.to_host_list(offsets)
            if host[0] < 0:
                fail(ValueError, function, f"offsets[0] = {host[0]} is negative: offsets must lie in [0, {n}]")
            if host[-1] > n:
                fail(ValueError, function, f"offsets[-1] = {host[-1]} runs past the end of the {n} keys: "
                                           f"offsets must lie in [0, {n}]")
            i = next(i for i in range(len(host) - 1) if host[i + 1] < host[i])
            fail(ValueError, function, f"offsets must be non-decreasing: offsets[{i}] = {host[i]} > "
                                       f"offsets[{i + 1}] = {host[i + 1]}")
    return offsets


def sort_segments(be, function, keys, offsets, descending, payload, out_keys=None, out_payload=None,
                  keep_keys=True):
    """Sorts each segment [offsets[i], offsets[i+1]) of 1-D keys; payload: None, INDEX or values.

    INDEX payloads are positions in the whole array; keys outside every
    segment keep their place.
    """
    kt = key_type(be, keys, function, "keys")
    n = be.numel(keys)
    segments = be.numel(offsets) - 1
    keys_in = be.contiguous(keys)
    keys_out = None
    if keep_keys:
        keys_out = _direct_keys(be, kt, out_keys, keys_in)
        if keys_out is None:
            keys_out = be.empty((n,), be.dtype_name(keys), keys)
    by_index = _by_index(kt, payload, be)
    if by_index:  # positions outside every segment keep their own index
        values_out = _direct(be, out_payload) if payload is INDEX else None
        if values_out is None:
            values_out = be.empty((n,), "int64", keys)
        values_in = None
    else:
        values_in = be.contiguous(payload)
        values_out = _direct(be, out_payload)
        if values_out is None:
            values_out = be.empty((n,), be.dtype_name(payload), keys)
    if n > 0:
        launch(be, keys, _ext.Algorithm.OFFSETS, kt, descending, keys_in, keys_out, values_in, values_out, by_index, n,
               offsets=offsets, segments=segments)
    result_keys = result_payload = None
    if keep_keys:
        result_keys = _finish(be, keys_out, out_keys)
    if payload is not None:
        if by_index and payload is not INDEX:
            values_out = be.take_flat(payload, values_out)
        result_payload = _finish(be, values_out, out_payload)
    return result_keys, result_payload
