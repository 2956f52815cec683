"""The dtype order of src/dtype_order.cuh, on the host (runs without a GPU).

rank() must order every dtype as torch.sort / numpy do: numbers ascending,
NaN (any payload, any sign) after all of them, -0.0 equal to +0.0; descending
complements it (NaN first, as torch.sort(descending=True)).
"""

import pytest

np = pytest.importorskip("numpy", reason="numpy is not installed: the host order tests skip")
import tilesort  # noqa: E402
from tilesort import _ext  # noqa: E402


def ranks(dtype, bits, descending=False):
    kt = tilesort.KEY_TYPES[dtype]
    return np.array([_ext.order_rank(kt.bytes, ord(kt.kind), kt.inf_bits, descending, int(b)) for b in bits],
                    dtype=np.uint64)


def check_float_order(dtype, bits, values):
    """Ranks order the values like numpy (NaN last) and tie exactly where numpy compares equal."""
    for descending in (False, True):
        r = ranks(dtype, bits, descending)
        nan = np.isnan(values)
        order = np.argsort(r, kind="stable")
        v = values[order]
        finite = v[~np.isnan(v)]
        if descending:
            assert np.isnan(v[: nan.sum()]).all(), "descending: NaN first"
            assert (np.diff(finite) <= 0).all()
        else:
            assert np.isnan(v[len(v) - nan.sum():]).all(), "ascending: NaN last"
            assert (np.diff(finite) >= 0).all()
        # Equal ranks exactly for equal numbers (so -0.0 == +0.0) or two NaNs.
        rs = r[order]
        same_rank = rs[1:] == rs[:-1]
        same_value = (v[1:] == v[:-1]) | (np.isnan(v[1:]) & np.isnan(v[:-1]))
        assert (same_rank == same_value).all()


def test_float16_every_bit_pattern():
    bits = np.arange(1 << 16, dtype=np.uint32)
    values = bits.astype(np.uint16).view(np.float16).astype(np.float64)
    check_float_order("float16", bits, values)


def test_bfloat16_every_bit_pattern():
    bits = np.arange(1 << 16, dtype=np.uint32)
    with np.errstate(invalid="ignore"):  # signalling NaNs widen quietly
        values = (bits << 16).view(np.float32).astype(np.float64)
    check_float_order("bfloat16", bits, values)


@pytest.mark.parametrize("dtype,itype", [("float32", np.uint32), ("float64", np.uint64)])
def test_float_specials_and_random(dtype, itype):
    rng = np.random.default_rng(1)
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1e-45, -1e-45, 1.0, -1.0, 3e38, -3e38],
                        dtype=dtype)
    payload_nan = np.array([0x7FC00001, 0xFFF00001] if dtype == "float32" else
                           [0x7FF0000000000001, 0xFFF8000000000002], dtype=itype).view(dtype)
    values = np.concatenate([specials, payload_nan, rng.standard_normal(2000).astype(dtype) * 1e3])
    check_float_order(dtype, values.view(itype), values.astype(np.float64))


@pytest.mark.parametrize("dtype,np_dtype", [("int8", np.int8), ("uint8", np.uint8), ("int16", np.int16),
                                            ("uint16", np.uint16), ("int32", np.int32), ("uint32", np.uint32),
                                            ("int64", np.int64), ("uint64", np.uint64), ("bool", np.bool_)])
def test_integers(dtype, np_dtype):
    info = np.iinfo(np_dtype) if np_dtype is not np.bool_ else None
    rng = np.random.default_rng(2)
    if info is None:
        values = np.array([False, True, True, False])
    else:
        edges = np.array([info.min, info.min + 1, -1 if info.min < 0 else 1, 0, 1, info.max - 1, info.max],
                         dtype=np_dtype)
        values = np.concatenate([edges, rng.integers(info.min, info.max, 500, dtype=np_dtype, endpoint=True)])
    unsigned = values.view(np.dtype(f"uint{8 * values.itemsize}"))
    for descending in (False, True):
        r = ranks(dtype, unsigned, descending)
        order = np.argsort(r, kind="stable")
        expect = np.argsort(values if not descending else -values.astype(object), kind="stable")
        assert (values[order] == values[expect]).all()


def unranks(dtype, r, descending):
    kt = tilesort.KEY_TYPES[dtype]
    shared = np.array([_ext.order_shared(kt.bytes, ord(kt.kind), kt.inf_bits, descending, int(x)) for x in r])
    keys = np.array([_ext.order_unrank(kt.bytes, ord(kt.kind), kt.inf_bits, descending, int(x)) for x in r],
                    dtype=np.uint64)
    return shared, keys


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "int16", "uint16", "int8", "uint8", "bool"])
def test_unrank_inverts_every_2_byte_pattern(dtype):
    """The job turns sorted ranks back into keys: unrank(rank(x)) == x, except for the ranks that several
    bit patterns share (floating zero and NaN: order_shared), which come back from the input by index."""
    width = tilesort.KEY_TYPES[dtype].bytes
    bits = np.arange(1 << (8 * width), dtype=np.uint64) if dtype != "bool" else np.array([0, 1], np.uint64)
    for descending in (False, True):
        r = ranks(dtype, bits, descending)
        shared, keys = unranks(dtype, r, descending)
        if dtype in ("float16", "bfloat16"):
            magnitude = bits & np.uint64(0x7FFF)
            inf = tilesort.KEY_TYPES[dtype].inf_bits
            assert np.array_equal(shared, (magnitude == 0) | (magnitude > inf))
        else:
            assert not shared.any()
        assert np.array_equal(keys[~shared], bits[~shared])


@pytest.mark.parametrize("dtype,itype", [("float32", np.uint32), ("float64", np.uint64), ("int32", np.uint32),
                                         ("int64", np.uint64), ("uint64", np.uint64)])
def test_unrank_inverts_wide_keys(dtype, itype):
    rng = np.random.default_rng(3)
    info = np.iinfo(itype)
    bits = np.concatenate([rng.integers(0, info.max, 3000, dtype=itype, endpoint=True),
                           np.array([0, info.max, info.max >> 1, (info.max >> 1) + 1, 1], dtype=itype)])
    if dtype.startswith("float"):
        specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1.0, -1.0], dtype=dtype).view(itype)
        bits = np.concatenate([bits, specials])
    for descending in (False, True):
        r = ranks(dtype, bits, descending)
        shared, keys = unranks(dtype, r, descending)
        if dtype.startswith("float"):
            values = bits.view(dtype)
            assert np.array_equal(shared, (values == 0) | np.isnan(values))
        else:
            assert not shared.any()
        assert np.array_equal(keys[~shared], bits[~shared].astype(np.uint64))
