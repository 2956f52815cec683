"""tilesort on cupy arrays against numpy's stable sort, compared bit for bit; results stay cupy arrays."""

import pytest

import tilesort

np = pytest.importorskip("numpy", reason="numpy is not installed: the cupy tests skip")

DTYPES = ["bool", "uint8", "int8", "int16", "uint16", "float16", "int32", "uint32", "float32", "int64", "uint64",
          "float64"]


def make(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if np.dtype(dtype).kind == "f":
        x = rng.standard_normal(shape).round(1).astype(dtype)
        flat = x.reshape(-1)
        if flat.size >= 8:
            flat[:8] = np.array([np.nan, 0.0, -0.0, np.inf, -np.inf, -np.nan, 0.0, -0.0], dtype=dtype)
            rng.shuffle(flat)
        return x
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


def reference(x, axis=-1, descending=False):
    """numpy's stable sort; descending as torch: the stable sort of the reversed order (NaN first)."""
    if not descending:
        order = np.argsort(x, axis=axis, kind="stable")
    elif x.dtype.kind == "f":
        nan = np.isnan(x)
        order = np.lexsort((np.where(nan, 0, -x.astype(np.float64)), ~nan), axis=axis)
    else:
        order = np.argsort(~x, axis=axis, kind="stable")  # ~ reverses every integer order (and bool's)
    return np.take_along_axis(x, order, axis=axis), order


def same_bits(a, b):
    assert a.shape == b.shape and a.dtype == b.dtype
    width = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize]
    return np.array_equal(np.ascontiguousarray(a).view(width), np.ascontiguousarray(b).view(width))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (0,), (1,), (1000,), (20000,), (7, 1), (64, 300), (3, 20000)], ids=str)
@pytest.mark.parametrize("descending", [False, True])
def test_sort(cupy, dtype, shape, descending):
    x = make(shape, dtype)
    values, indices = tilesort.sort(cupy.asarray(x), descending=descending)
    assert isinstance(values, cupy.ndarray) and isinstance(indices, cupy.ndarray)
    ref_values, ref_indices = reference(x, descending=descending) if x.ndim else (x, np.zeros((), np.int64))
    assert same_bits(cupy.asnumpy(values), ref_values)
    assert np.array_equal(cupy.asnumpy(indices), ref_indices)
    assert np.array_equal(cupy.asnumpy(tilesort.argsort(cupy.asarray(x), descending=descending)), ref_indices)


def test_dim_noncontiguous_and_stream(cupy):
    x = make((40, 33), "float32", seed=1)
    gx = cupy.asarray(x)
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        values, indices = tilesort.sort(gx[:, ::2], dim=0)
    stream.synchronize()
    ref_values, ref_indices = reference(x[:, ::2], axis=0)
    assert same_bits(cupy.asnumpy(values), ref_values)
    assert np.array_equal(cupy.asnumpy(indices), ref_indices)


def test_segmented_and_pairs(cupy):
    keys = make((30000,), "int32", seed=2) % 100
    values = make((30000,), "float32", seed=3)
    offsets = np.array([0, 0, 17, 500, 500, 20000, 29000])
    k, v = tilesort.segmented_sort(cupy.asarray(keys), offsets=cupy.asarray(offsets), values=cupy.asarray(values))
    ref_k, ref_v = keys.copy(), values.copy()
    for begin, end in zip(offsets[:-1], offsets[1:]):
        order = np.argsort(keys[begin:end], kind="stable")
        ref_k[begin:end], ref_v[begin:end] = keys[begin:end][order], values[begin:end][order]
    assert np.array_equal(cupy.asnumpy(k), ref_k)
    assert same_bits(cupy.asnumpy(v), ref_v)
    k2, v2 = tilesort.sort_pairs(cupy.asarray(keys), cupy.asarray(values))
    order = np.argsort(keys, kind="stable")
    assert np.array_equal(cupy.asnumpy(k2), keys[order]) and same_bits(cupy.asnumpy(v2), values[order])
    k3, _ = tilesort.locality_sort(cupy.asarray(np.sort(keys)))
    assert np.array_equal(cupy.asnumpy(k3), np.sort(keys))
