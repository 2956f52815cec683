"""Host arrays (numpy, CPU torch tensors) through the host sort: numpy's kind="stable" result bit for bit
(NaN last, -0.0 and +0.0 in input order), torch.sort(stable=True)'s for tensors, in core and out of core
(small device_memory_budget), rows along any dim, pairs, out=, progress, and the errors.

Every test runs twice: with the extension's host sort on the GPU (skipped without one), and with a numpy
stand-in for it (runs everywhere), which checks the layer around the call (tilesort/_host.py: dims, rows,
payloads, out=, progress, errors) but none of the library's host sort."""

import ctypes

import pytest

import tilesort
from tilesort import _host

np = pytest.importorskip("numpy", reason="numpy is not installed: the host-array tests skip")
from dtype_rank import rank  # noqa: E402

OUT_OF_CORE = 16 << 20  # bytes of device memory: 2^22 keys of 4 bytes with positions need two passes


class HostSortStandIn:
    """_ext.host_sort's interface, sorting with numpy: keys (their unsigned bits) and int64 positions in place,
    stably by the dtype order. A budget from 1 byte to 1 MiB is too small (ValueError, nothing written), as the
    extension answers a budget the library's host sort refuses."""

    too_small = 1 << 20

    def __init__(self):
        self.calls = 0

    def host_sort(self, keys, positions, n, key_bytes, kind, inf_bits, descending, budget, progress):
        assert key_bytes in (4, 8) and kind in ("u", "i", "f") and n >= 2  # narrower keys come widened to 4 bytes
        if 0 < budget < self.too_small:
            raise ValueError("tilesort: the host sort rejected the call (cudaErrorInvalidValue)")
        self.calls += 1
        k = np.ctypeslib.as_array((ctypes.c_uint8 * (n * key_bytes)).from_address(keys)).view(f"u{key_bytes}")
        p = np.ctypeslib.as_array((ctypes.c_uint8 * (n * 8)).from_address(positions)).view(np.int64)
        order = np.argsort(rank(k, kind, inf_bits, descending), kind="stable")
        total = n * (key_bytes + 8)
        if progress is not None:
            progress(total // 2, total)
        k[:], p[:] = k[order], p[order]
        if progress is not None:
            progress(total, total)


@pytest.fixture(scope="module", params=["gpu", "numpy stand-in"])
def host_sort(request):
    """The host sort the tests go through: the extension's on the GPU, or the numpy stand-in."""
    if request.param == "gpu":
        try:
            tilesort.sort(np.array([2, 1], dtype=np.int32))
        except RuntimeError as error:
            pytest.skip(f"no usable CUDA device: the host-array tests skip on the GPU ({error})")
        yield None
        return
    stand_in = HostSortStandIn()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_host, "_ext", stand_in)
        yield stand_in
    assert stand_in.calls > 0


def keys_of(dtype, n, seed=1):
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        x = rng.standard_normal(n).astype(dtype)
        x[rng.integers(0, n, n // 50)] = np.nan
        x[rng.integers(0, n, n // 50)] = 0.0
        x[rng.integers(0, n, n // 50)] = -0.0
        x[rng.integers(0, n, n // 100)] = np.inf
        return x
    if dtype.kind == "b":
        return rng.integers(0, 2, n).astype(bool)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)


def same_bits(a, b):
    width = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize]
    return a.shape == b.shape and np.array_equal(np.ascontiguousarray(a).view(width), np.ascontiguousarray(b).view(width))


def tensor_bits(torch, t):
    return t.view({1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()])


DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "float16", "int32", "uint32", "float32", "int64", "uint64",
          "float64"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_numpy_in_core(host_sort, dtype):
    x = keys_of(dtype, 100003)
    before = x.copy()
    values, indices = tilesort.sort(x)
    order = np.argsort(x, kind="stable")
    assert isinstance(values, np.ndarray) and indices.dtype == np.int64
    assert np.array_equal(indices, order)
    assert same_bits(values, x[order])
    assert same_bits(x, before)  # the input is not written
    assert np.array_equal(tilesort.argsort(x), order)


@pytest.mark.parametrize("dtype", ["float32", "int64", "uint16"])
def test_numpy_out_of_core(host_sort, dtype):
    x = keys_of(dtype, 1 << 22, seed=2)
    values, indices = tilesort.sort(x, device_memory_budget=OUT_OF_CORE)
    order = np.argsort(x, kind="stable")
    assert np.array_equal(indices, order)
    assert same_bits(values, x[order])


def test_few_distinct_out_of_core_is_stable(host_sort):
    x = np.random.default_rng(3).integers(0, 5, 1 << 22).astype(np.int32)
    assert np.array_equal(tilesort.argsort(x, device_memory_budget=OUT_OF_CORE), np.argsort(x, kind="stable"))


def test_descending(host_sort):
    x = keys_of("int32", 100000)
    values, indices = tilesort.sort(x, descending=True)
    order = np.argsort(~x, kind="stable")  # ~ reverses the order of every integer
    assert np.array_equal(indices, order) and np.array_equal(values, x[order])


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_rows(host_sort, dim):
    x = keys_of("float32", 300 * 1000).reshape(300, 1000)
    values, indices = tilesort.sort(x, dim=dim)
    order = np.argsort(x, axis=dim, kind="stable")
    assert np.array_equal(indices, order)
    assert same_bits(values, np.take_along_axis(x, order, axis=dim))


@pytest.mark.parametrize("shape", [(), (0,), (1,), (17,), (4, 0), (6, 1), (5, 9), (3, 4, 5)], ids=str)
def test_shapes_dims_and_layouts(host_sort, shape):
    """Every dim of every shape, C, Fortran and strided input, both orders: sort, argsort and sort_pairs."""
    size = int(np.prod(shape))
    base = keys_of("float32", max(size, 1))[:size].reshape(shape)
    kt = tilesort.KEY_TYPES["float32"]
    layouts = {"C": base, "Fortran": np.asfortranarray(base)}
    if base.ndim >= 1:
        layouts["strided"] = np.repeat(base, 2, axis=-1)[..., ::2]
    for layout, x in layouts.items():
        payload = np.random.default_rng(6).standard_normal(x.shape)
        for dim in range(-max(x.ndim, 1), max(x.ndim, 1)):
            for descending in (False, True):
                where = f"{layout} dim={dim} descending={descending}"
                values, indices = tilesort.sort(x, dim=dim, descending=descending)
                if x.ndim == 0:
                    assert values.shape == indices.shape == () and indices == 0 and values == x, where
                    continue
                ranks = rank(np.ascontiguousarray(x).view(np.uint32), kt.kind, kt.inf_bits, descending)
                order = np.argsort(ranks, axis=dim, kind="stable")
                assert indices.dtype == np.int64 and np.array_equal(indices, order), where
                assert same_bits(values, np.take_along_axis(x, order, axis=dim)), where
                assert np.array_equal(tilesort.argsort(x, dim=dim, descending=descending), order), where
                keys, carried = tilesort.sort_pairs(x, payload, dim=dim, descending=descending)
                assert same_bits(keys, values), where
                assert np.array_equal(carried, np.take_along_axis(payload, order, axis=dim)), where


@pytest.mark.parametrize("shape", [(53,), (5, 9), (3, 4, 5)], ids=str)
def test_host_work_in_pieces(host_sort, shape, monkeypatch):
    """The host work around the sort (copies, positions, rows, gathers) split into pieces of 7 items on the
    thread pool gives the same results as in one piece."""
    monkeypatch.setattr(_host, "PIECE_ITEMS", 7)
    test_shapes_dims_and_layouts(host_sort, shape)


@pytest.mark.parametrize("name", ["bool", "uint8", "int8", "uint16", "int16", "float16", "bfloat16"])
def test_narrow_keys_widen_in_their_order(name, monkeypatch):
    """1- and 2-byte keys, every bit pattern (NaN payloads, both zeros), widened to 4 bytes in pieces: the
    widened keys rank in the dtype order of the narrow ones (equal ranks stay equal), both ways."""
    monkeypatch.setattr(_host, "PIECE_ITEMS", 1000)
    kt = tilesort.KEY_TYPES[name]
    bits = np.arange(2 if name == "bool" else 1 << (8 * kt.bytes), dtype=f"u{kt.bytes}")
    bits = bits[np.random.default_rng(8).permutation(bits.size)]
    wide = np.empty(bits.size, dtype=np.uint32)
    as_type = _host._widened(np, bits, kt, wide)
    assert as_type.bytes == 4
    for descending in (False, True):
        narrow_ranks = rank(bits, kt.kind, kt.inf_bits, descending)
        wide_ranks = rank(wide, as_type.kind, as_type.inf_bits, descending)
        order = np.argsort(narrow_ranks, kind="stable")
        assert np.array_equal(order, np.argsort(wide_ranks, kind="stable"))
        assert np.array_equal(np.diff(narrow_ranks[order]) == 0, np.diff(wide_ranks[order]) == 0)


def test_pairs_and_out(host_sort):
    keys = keys_of("int16", 200000)
    payload = np.random.default_rng(4).standard_normal(200000)
    out_keys, out_values = np.empty_like(keys), np.empty_like(payload)
    k, v = tilesort.sort_pairs(keys, payload, out=(out_keys, out_values), device_memory_budget=OUT_OF_CORE)
    order = np.argsort(keys, kind="stable")
    assert k is out_keys and v is out_values
    assert np.array_equal(out_keys, keys[order]) and np.array_equal(out_values, payload[order])


def test_progress_callback(host_sort):
    calls = []
    tilesort.sort(keys_of("uint32", 1 << 21), device_memory_budget=OUT_OF_CORE,
                  progress=lambda done, total: calls.append((done, total)))
    assert calls and calls[-1][0] == calls[-1][1] > 0
    assert all(a[0] <= b[0] for a, b in zip(calls, calls[1:]))


def test_torch_cpu_tensors(host_sort, torch):
    for dtype in (torch.float32, torch.bfloat16, torch.int64, torch.float16):
        x = torch.randn(1 << 20).to(dtype) if dtype.is_floating_point else torch.randint(-1000, 1000, (1 << 20,))
        if dtype.is_floating_point:
            x[::97] = float("nan")
            x[::89] = -0.0
        for pinned in (False, True) if torch.cuda.is_available() else (False,):  # pinning needs CUDA
            y = x.pin_memory() if pinned else x
            values, indices = tilesort.sort(y, device_memory_budget=OUT_OF_CORE)
            ref_values, ref_indices = torch.sort(y, stable=True)
            assert values.device.type == "cpu" and values.dtype == dtype
            assert torch.equal(indices, ref_indices)
            assert torch.equal(tensor_bits(torch, values), tensor_bits(torch, ref_values))
            values, indices = tilesort.sort(y, descending=True)
            ref_values, ref_indices = torch.sort(y, descending=True, stable=True)
            assert torch.equal(indices, ref_indices)
            assert torch.equal(tensor_bits(torch, values), tensor_bits(torch, ref_values))


def test_errors(host_sort):
    x = keys_of("float32", 1 << 22)
    before = x.copy()
    with pytest.raises(ValueError, match="device_memory_budget=65536 bytes is too small"):
        tilesort.sort(x, device_memory_budget=1 << 16)
    assert same_bits(x, before)
    with pytest.raises(TypeError, match="keys may be bool"):
        tilesort.sort(np.array([1 + 2j, 3j]))
    with pytest.raises(TypeError, match="keys may be bool"):
        tilesort.sort(np.array([object(), object()]))
    with pytest.raises(TypeError, match="non-native byte order"):
        tilesort.sort(np.arange(10, dtype=">i4"))
    with pytest.raises(ValueError, match="dim=3 is out of range"):
        tilesort.sort(x, dim=3)
    with pytest.raises(ValueError, match="device_memory_budget=-1"):
        tilesort.sort(x, device_memory_budget=-1)
    with pytest.raises(TypeError, match="values"):
        tilesort.sort_pairs(x, None)
    with pytest.raises(ValueError, match="out= takes 2"):
        tilesort.sort(x, out=(np.empty_like(x),))
