"""The Python layer (layouts, payloads, out=, validation) over a host stand-in for the device (runs without a GPU).

numpy arrays play the device arrays and a numpy sort plays the extension:
it finds the arrays by the pointers the layer hands over, and sorts each
segment by the dtype order (the same rank as src/dtype_order.cuh, whose host
tests are in test_order.py). What this checks is everything around the
launch: dim handling, contiguity, index payloads per row or per array,
gathers of narrow payloads and of widened narrow keys, out=, and that every
call is what the extension builds (keys of 4 or 8 bytes with 8-byte payloads).
"""

import pytest

np = pytest.importorskip("numpy", reason="numpy is not installed: the host layer tests skip")
import tilesort  # noqa: E402
from tilesort import _api, _core, _device, _ext, _host  # noqa: E402
from dtype_rank import rank  # noqa: E402

HOST_DEVICE = -1  # the device index of the host stand-in


class HostBackend:
    """The backend interface of tilesort/_arrays.py over numpy; ptr() remembers each array by its address."""

    name = "host"
    array_type = np.ndarray

    def __init__(self):
        self.arrays = {}

    def ptr(self, x):
        assert x.flags.c_contiguous, "the layer must hand contiguous arrays to the extension"
        self.arrays[x.ctypes.data] = x
        return x.ctypes.data

    dtype_name = staticmethod(lambda x: x.dtype.name)
    itemsize = staticmethod(lambda x: x.dtype.itemsize)
    device_problem = staticmethod(lambda x: None)
    same_device = staticmethod(lambda a, b: True)
    device_index = staticmethod(lambda x: HOST_DEVICE)
    stream = staticmethod(lambda x: 0)
    capturing = staticmethod(lambda: False)
    numel = staticmethod(lambda x: x.size)
    is_contiguous = staticmethod(lambda x: x.flags.c_contiguous)
    contiguous = staticmethod(np.ascontiguousarray)
    moveaxis = staticmethod(np.moveaxis)
    empty = staticmethod(lambda shape, dtype, like: np.empty(shape, dtype=dtype))
    astype = staticmethod(lambda x, dtype: x.astype(dtype, copy=False))
    offsets_from_lengths = staticmethod(lambda lengths: np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64))
    to_host_list = staticmethod(lambda x: x.tolist())
    take_along = staticmethod(lambda values, indices, dim: np.take_along_axis(values, indices, dim))
    take_flat = staticmethod(lambda values, indices: values[indices])
    to_native = staticmethod(lambda x: x)
    wrap_like = staticmethod(lambda original, result: result)

    def copy_into(self, out, x):
        out[...] = x


class HostExtension:
    """tilesort._ext's interface, sorting on the host, with the job's rules (src/sort_call.h) checked.

    The job and the algorithm names are the extension's own (SortJob, Algorithm: plain data, no GPU).
    """

    Algorithm = _ext.Algorithm
    SortJob = _ext.SortJob
    FRONT, LOCALITY, ROWS, OFFSETS = Algorithm.FRONT, Algorithm.LOCALITY, Algorithm.ROWS, Algorithm.OFFSETS

    def __init__(self, backend):
        self.be = backend
        self.calls = []  # (algo, key_bytes) of every job run
        self.strided_calls = 0  # jobs of rows along another dim, sorted where they lie
        self.queries = 0  # size queries

    def flat(self, address, dtype):
        return self.be.arrays[address].reshape(-1).view(dtype)

    def sort(self, job, *, temp, temp_bytes, stream):
        assert isinstance(job, self.SortJob) and isinstance(job.algo, self.Algorithm)
        algo, key_bytes, kind, inf_bits = job.algo, job.key_bytes, ord(job.kind), job.inf_bits
        descending, rank_floats = job.descending, job.rank_floats
        keys_in, keys_out, values_in, values_out = job.keys_in, job.keys_out, job.values_in, job.values_out
        index_payload, n, row_length = job.index_payload, job.n, job.row_length
        offsets, segments, row_stride = job.offsets, job.segments, job.row_stride
        if key_bytes not in (1, 2, 4, 8) or values_out == 0 or (not index_payload and values_in == 0):
            raise ValueError("the extension sorts keys of 1-8 bytes with 8-byte payloads or the index payload")
        if temp == 0:
            self.queries += 1
            return 0 if algo == self.FRONT else 64  # a one-array sort of one tile needs no temp storage
        ranked = key_bytes < 4 or (chr(kind) == "f" and rank_floats)
        if ranked and chr(kind) == "f" and keys_out != 0 and (not index_payload or keys_out == keys_in):
            raise RuntimeError("floating keys sorted as ranks need the index payload and keys_out != keys_in")
        self.calls.append((algo, key_bytes))
        if row_stride > 1:  # rows along another dim: the same sort on the rows moved last, put back
            return self.sort_strided(job, key_bytes, kind, inf_bits, descending)
        keys = self.flat(keys_in, f"u{key_bytes}")[:n].copy()
        if index_payload:
            period = row_length if algo == self.ROWS else n
            values = np.arange(n, dtype=np.uint64) % np.uint64(period)
        else:
            values = self.flat(values_in, np.uint64)[:n].copy()
        if algo == self.ROWS:
            bounds = [(b, min(b + row_length, n)) for b in range(0, n, row_length)]
        elif algo == self.OFFSETS:
            off = self.flat(offsets, np.int64)[: segments + 1]
            bounds = list(zip(off[:-1], off[1:]))
        else:
            bounds = [(0, n)]
        out_keys, out_values = keys.copy(), values.copy()
        for begin, end in bounds:
            order = np.argsort(rank(keys[begin:end], chr(kind), inf_bits, descending), kind="stable")
            out_keys[begin:end] = keys[begin:end][order]
            out_values[begin:end] = values[begin:end][order]
        if keys_out != 0:
            self.flat(keys_out, f"u{key_bytes}")[:n] = out_keys
        self.flat(values_out, np.uint64)[:n] = out_values
        return 0

    def sorts_in_place_of_rows(self, job):
        assert job.algo == self.ROWS and job.index_payload and job.row_stride > 1
        ranked = job.key_bytes == 8 and job.kind == "f" and job.rank_floats
        return not ranked and job.row_length <= (256 if job.key_bytes <= 4 else 1024)

    def sort_strided(self, job, key_bytes, kind, inf_bits, descending):
        assert job.index_payload and self.sorts_in_place_of_rows(job)
        self.strided_calls += 1
        n, length, stride = job.n, job.row_length, job.row_stride
        keys = self.flat(job.keys_in, f"u{key_bytes}")[:n].reshape(-1, length, stride)
        order = np.argsort(rank(keys, chr(kind), inf_bits, descending), axis=1, kind="stable")
        if job.keys_out != 0:
            self.flat(job.keys_out, f"u{key_bytes}")[:n] = np.take_along_axis(keys, order, axis=1).reshape(-1)
        self.flat(job.values_out, np.int64)[:n] = order.reshape(-1)
        return 0


@pytest.fixture
def host(monkeypatch):
    be = HostBackend()
    ext = HostExtension(be)
    monkeypatch.setattr(_core, "_ext", ext)
    monkeypatch.setattr(_core, "_temp_bytes", {})  # sizes remembered from the real extension don't apply
    monkeypatch.setattr(_api, "backend_of", lambda x, function, argument: be)
    monkeypatch.setattr(_device, "_supported", {HOST_DEVICE})  # the stand-in runs every job
    monkeypatch.setattr(_host, "host_kind", lambda x: None)  # numpy arrays stand for device arrays, not host ones
    return ext


def reference(x, axis=-1, descending=False):
    order = np.argsort(~x if descending else x, axis=axis, kind="stable")  # integers: ~ reverses the order
    return np.take_along_axis(x, order, axis=axis), order


@pytest.mark.parametrize("shape,dim", [((), -1), ((0,), 0), ((1,), 0), ((17,), 0), ((4, 0), 1), ((6, 1), -1),
                                       ((5, 9), -1), ((5, 9), 0), ((3, 4, 5), 1), ((3, 4, 5), -3)], ids=str)
@pytest.mark.parametrize("descending", [False, True])
def test_sort_layouts(host, shape, dim, descending):
    x = np.random.default_rng(0).integers(-5, 5, shape).astype(np.int32)
    values, indices = tilesort.sort(x, dim=dim, descending=descending)
    if x.ndim == 0:
        assert values == x and indices == 0
        return
    ref_values, ref_indices = reference(x, dim, descending)
    assert np.array_equal(values, ref_values) and np.array_equal(indices, ref_indices)
    assert np.array_equal(tilesort.argsort(x, dim=dim, descending=descending), ref_indices)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float64, np.uint8], ids=lambda d: np.dtype(d).name)
def test_other_dim_sorts_in_place_of_rows(host, dtype):
    """Rows along another dim of a contiguous array go to the extension as they lie (row_stride) where it
    takes them (float64 sorts as ranks: moved last); a non-contiguous input is moved last."""
    rng = np.random.default_rng(4)
    x = rng.integers(-50, 50, (3, 7, 5, 2)).astype(dtype)
    for dim in (0, 1, 2):
        before = host.strided_calls
        values, indices = tilesort.sort(x, dim=dim)
        ref_values, ref_indices = reference(x, dim)
        assert np.array_equal(values, ref_values) and np.array_equal(indices, ref_indices)
        assert host.strided_calls - before == (0 if dtype == np.float64 else 1)
        flipped = -x if x.dtype.kind == "f" else ~x  # (no -0.0 among these keys)
        assert np.array_equal(tilesort.argsort(x, dim=dim, descending=True),
                              np.argsort(flipped, axis=dim, kind="stable"))
        payload = rng.integers(0, 9, x.shape).astype(np.int8)  # a narrow payload: a gather along dim
        k, v = tilesort.sort_pairs(x, payload, dim=dim)
        assert np.array_equal(k, ref_values) and np.array_equal(v, np.take_along_axis(payload, ref_indices, dim))
    before = host.strided_calls
    tilesort.sort(np.swapaxes(x, 0, 1), dim=0)
    assert host.strided_calls == before


def test_noncontiguous_and_out(host):
    x = np.random.default_rng(1).integers(0, 9, (8, 30)).astype(np.int16)[:, ::3]
    ref_values, ref_indices = reference(x)
    out_values, out_indices = np.empty_like(x), np.empty(x.shape, np.int64)
    result = tilesort.sort(x, out=(out_values, out_indices))
    assert result.values is out_values and result.indices is out_indices
    assert np.array_equal(out_values, ref_values) and np.array_equal(out_indices, ref_indices)
    strided = np.empty((10, 8), np.int16).T  # non-contiguous out: copied into
    tilesort.sort(x, out=(strided, out_indices))
    assert np.array_equal(strided, ref_values)
    y = np.ascontiguousarray(x)
    tilesort.sort(y, out=(y, out_indices))  # in place
    assert np.array_equal(y, ref_values)


@pytest.mark.parametrize("values_dtype", [np.int64, np.float64, np.int32, np.int8, np.bool_])
def test_sort_pairs_payloads(host, values_dtype):
    rng = np.random.default_rng(2)
    keys = rng.integers(0, 5, (6, 40)).astype(np.int64)
    values = rng.integers(0, 2, (6, 40)).astype(values_dtype)
    for dim in (-1, 0):
        k, v = tilesort.sort_pairs(keys, values, dim=dim)
        ref_k, order = reference(keys, dim)
        assert np.array_equal(k, ref_k) and np.array_equal(v, np.take_along_axis(values, order, axis=dim))


def test_segments(host):
    rng = np.random.default_rng(3)
    keys = rng.integers(0, 20, 100).astype(np.uint8)
    offsets = np.array([3, 3, 10, 50, 50, 97])
    expect_keys, expect_index = keys.copy(), np.arange(100)
    for begin, end in zip(offsets[:-1], offsets[1:]):
        order = np.argsort(keys[begin:end], kind="stable")
        expect_keys[begin:end] = keys[begin:end][order]
        expect_index[begin:end] = order + begin
    k, v = tilesort.segmented_sort(keys, offsets=offsets)
    assert v is None and np.array_equal(k, expect_keys)
    assert host.calls[-1] == (host.OFFSETS, 1)  # uint8 keys: the job widens them
    assert np.array_equal(tilesort.segmented_argsort(keys, offsets=offsets.astype(np.int32)), expect_index)
    payload = rng.standard_normal(100).astype(np.float32)
    k, v = tilesort.segmented_sort(keys, offsets=offsets, values=payload)
    assert np.array_equal(v, payload[expect_index])
    k, _ = tilesort.segmented_sort(keys[3:], lengths=np.diff(offsets) , check=True)
    shifted = keys[3:].copy()
    for begin, end in zip(offsets[:-1] - 3, offsets[1:] - 3):
        shifted[begin:end] = np.sort(shifted[begin:end], kind="stable")
    assert np.array_equal(k, shifted)


def test_locality(host):
    keys = np.arange(50, dtype=np.float32)[::-1].copy()
    k, v = tilesort.locality_sort(keys)
    assert v is None and np.array_equal(k, np.arange(50, dtype=np.float32))
    assert host.calls[-1] == (host.LOCALITY, 4)
    k, v = tilesort.locality_sort(keys, values=np.arange(50, dtype=np.int16))
    assert np.array_equal(v, np.arange(50)[::-1])


def test_one_job_per_call_and_one_size_query_per_shape(host, monkeypatch):
    """Host work per call: one extension call (plus one size query per new shape), and allocations only
    for the results and temp storage (none for temp when the job needs none)."""
    allocations = []
    empty = host.be.empty
    monkeypatch.setattr(host.be, "empty", lambda shape, dtype, like: allocations.append(dtype) or
                        empty(shape, dtype, like))
    x = np.random.default_rng(6).standard_normal((4, 33)).astype(np.float32)
    for _ in range(3):
        tilesort.sort(x)
    assert allocations == ["float32", "int64", "uint8"] * 3
    y = x.reshape(-1)
    tilesort.sort(y)
    tilesort.argsort(y)  # keys not wanted: another temp shape
    assert allocations[9:] == ["float32", "int64", "int64"]  # the stand-in's one-array sort needs no temp
    assert host.calls == [(host.ROWS, 4)] * 3 + [(host.FRONT, 4)] * 2
    assert host.queries == 3


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32])
def test_in_place_out(host, dtype):
    """out= the input itself: floating keys are sorted into a fresh array first (their zeros and NaNs come
    back from the input), other keys in place."""
    x = np.array([[3.0, -0.0, np.nan, 0.0, -1.0, 2.0]]).astype(dtype) if dtype != np.int32 else \
        np.array([[3, 0, 9, 0, -1, 2]], dtype=dtype)
    order = np.argsort(float_order_key(x), axis=-1, kind="stable")
    expect = np.take_along_axis(x, order, axis=-1)
    indices = np.empty(x.shape, np.int64)
    tilesort.sort(x, out=(x, indices))
    bits = np.dtype(f"u{x.itemsize}")
    assert np.array_equal(x.view(bits), expect.view(bits)) and np.array_equal(indices, order)


def test_float_order_through_layer(host):
    x = np.array([1.0, np.nan, -0.0, 0.0, -np.inf, 2.0, np.nan, -1.0], dtype=np.float64)
    values, indices = tilesort.sort(x)
    assert indices.tolist() == [4, 7, 2, 3, 0, 5, 1, 6]
    values, indices = tilesort.sort(x, descending=True)
    assert indices.tolist() == [1, 6, 5, 0, 2, 3, 7, 4]


def float_order_key(x):
    """float64 keys numpy sorts like dtype_order: NaN above +inf, -0.0 equal to +0.0."""
    y = x.astype(np.float64)
    return np.where(np.isnan(y), 2e300, np.where(np.isinf(y) & (y > 0), 1e300, y))


@pytest.mark.parametrize("dtype", [np.bool_, np.uint8, np.int8, np.uint16, np.int16, np.float16, np.float32,
                                   np.float64])
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("float_ranks", [True, False])
def test_widened_and_ranked_keys(host, monkeypatch, dtype, descending, float_ranks):
    """Narrow keys sort as ranks, floating keys as ranks (or through the float order): the original bits come out."""
    monkeypatch.setattr(_core, "FLOAT_RANKS", float_ranks)
    rng = np.random.default_rng(5)
    x = rng.integers(-40, 40, (5, 60)).astype(dtype)
    if x.dtype.kind == "f":
        specials = np.array([np.nan, -0.0, 0.0, np.inf, -np.inf, -np.nan, 1.5], np.float16)
        picks = x.reshape(-1)[::7]
        picks[...] = specials[np.arange(picks.size) % specials.size]
        key = float_order_key(x)
    else:
        key = x.astype(np.int64)
    order = np.argsort(-key if descending else key, axis=-1, kind="stable")
    ref = np.take_along_axis(x, order, axis=-1)
    bits = np.dtype(f"u{x.itemsize}")
    values, indices = tilesort.sort(x, descending=descending)
    assert np.array_equal(indices, order)
    assert np.array_equal(values.view(bits), ref.view(bits))  # the original bits: NaN payloads, -0.0
    assert all(width == x.itemsize for _, width in host.calls)  # the job widens narrow keys
    flat_order = np.argsort(-key.reshape(-1) if descending else key.reshape(-1), kind="stable")
    k, _ = tilesort.locality_sort(x.reshape(-1), descending=descending)
    assert np.array_equal(k.view(bits), x.reshape(-1)[flat_order].view(bits))
    offsets = np.array([0, 60, 60, 130, 300])
    k, v = tilesort.segmented_sort(x.reshape(-1), offsets=offsets, values=np.arange(300.0), descending=descending)
    for begin, end in zip(offsets[:-1], offsets[1:]):
        seg = np.argsort(-key.reshape(-1)[begin:end] if descending else key.reshape(-1)[begin:end], kind="stable")
        assert np.array_equal(k[begin:end].view(bits), x.reshape(-1)[begin:end][seg].view(bits))
        assert np.array_equal(v[begin:end], np.arange(300.0)[begin:end][seg])


def test_validation_before_launch(host):
    x = np.arange(6, dtype=np.int32)
    with pytest.raises(ValueError, match="non-decreasing"):
        tilesort.segmented_sort(x, offsets=np.array([0, 4, 2]))
    with pytest.raises(TypeError, match="keys may be bool"):
        tilesort.sort(x.astype(np.complex64))
    with pytest.raises(ValueError, match="dim=1 is out of range"):
        tilesort.sort(x, dim=1)
    assert host.calls == []
