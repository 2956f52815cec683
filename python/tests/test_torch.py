"""tilesort on torch tensors against torch.sort(stable=True) on the CPU, compared bit for bit.

Covers every function and dtype, shapes (0-d, empty, one element, rows of
one, short and long rows, 1-D past one tile), non-contiguous input, dim other
than -1, descending, NaN and +-0.0, stability, ragged segments with empty
segments and gaps, out=, a non-default stream, CUDA graph capture,
torch.compile, the custom operators' fake implementations, and autograd.
"""

import pytest

import tilesort

DTYPES = ["bool", "uint8", "int8", "int16", "uint16", "float16", "bfloat16", "int32", "uint32", "float32", "int64",
          "uint64", "float64"]
SHAPES = [(), (0,), (1,), (5,), (1000,), (20000,), (3, 0), (7, 1), (100, 33), (64, 300), (9, 5000), (3, 20000)]


def make(torch, shape, dtype, seed=0, few=False):
    """Test keys on the CPU: duplicates (stability), and for floats NaN, +-0.0 and +-inf."""
    g = torch.Generator().manual_seed(seed)
    dt = getattr(torch, dtype)
    if dtype == "bool":
        return torch.randint(0, 2, shape, generator=g).bool()
    if dt.is_floating_point:
        x = torch.randn(shape, generator=g, dtype=torch.float64)
        if few:
            x = x.round()
        x = x.to(dt)
        flat = x.view(-1)
        if flat.numel() >= 8:
            picks = torch.randint(0, flat.numel(), (max(flat.numel() // 16, 4),), generator=g)
            specials = torch.tensor([float("nan"), 0.0, -0.0, float("inf"), -float("inf"), -float("nan")],
                                    dtype=torch.float64).to(dt)
            flat[picks] = specials[torch.arange(picks.numel()) % specials.numel()]
        return x
    bits = dt.itemsize * 8
    if few:
        x = torch.randint(-50 if dt.is_signed else 0, 50 if dt.is_signed else 100, shape, generator=g)
    elif bits == 64:  # the whole 64-bit range (randint's bounds must fit int64)
        x = torch.randint(-(1 << 62), 1 << 62, shape, generator=g) * 2 + torch.randint(0, 2, shape, generator=g)
    elif dt.is_signed:
        x = torch.randint(-(1 << (bits - 1)), 1 << (bits - 1), shape, generator=g)
    else:
        x = torch.randint(0, 1 << bits, shape, generator=g)
    return x.view(dt) if bits == 64 else x.to(dt)


SIGNED = {1: "int8", 2: "int16", 4: "int32", 8: "int64"}


def as_signed(torch, a):
    """The same bits as a signed integer tensor on the CPU (torch compares unsigned and NaN poorly)."""
    a = a.detach().cpu().contiguous()
    if a.dtype == torch.bool:
        return a.view(torch.uint8).to(torch.int8)
    return a.view(getattr(torch, SIGNED[a.element_size()]))


def same_bits(torch, a, b):
    """a and b hold the same bits (NaN payloads and the sign of zero included)."""
    assert tuple(a.shape) == tuple(b.shape) and a.dtype == b.dtype
    return torch.equal(as_signed(torch, a), as_signed(torch, b))


def reference_sort(torch, x, dim=-1, descending=False):
    """torch.sort(stable=True) on the CPU; unsigned dtypes of 16+ bits through numpy (torch has no CPU sort)."""
    x = x.detach().cpu()
    if x.dtype not in (torch.uint16, torch.uint32, torch.uint64):
        return tuple(torch.sort(x, dim=dim, descending=descending, stable=True))
    import numpy as np

    a = as_signed(torch, x).numpy()
    a = a.view(np.dtype(f"u{a.itemsize}")).reshape(x.shape or (1,))  # a 0-d tensor sorts as one element
    order = np.argsort(~a if descending else a, axis=dim, kind="stable")
    values = np.take_along_axis(a, order, axis=dim)
    values = torch.from_numpy(values.view(np.dtype(f"i{a.itemsize}"))).view(x.dtype)
    return values.reshape(x.shape), torch.from_numpy(order).reshape(x.shape)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("descending", [False, True])
def test_sort_matches_torch(cuda, dtype, shape, descending):
    torch = cuda
    x = make(torch, shape, dtype, few=len(shape) > 0 and shape[-1] > 50)
    values, indices = tilesort.sort(x.cuda(), descending=descending)
    ref_values, ref_indices = reference_sort(torch, x, descending=descending)
    assert same_bits(torch, values, ref_values)
    assert torch.equal(indices.cpu(), ref_indices)
    assert torch.equal(tilesort.argsort(x.cuda(), descending=descending).cpu(), ref_indices)


# Row lengths at the edges of the row sorters that make the indices inside the sort (warp rows up to 512,
# block rows up to 16384 keys of 4 bytes, 8192 of 8), and past them (the positions are then written first).
ROW_LENGTHS = [2, 17, 64, 65, 512, 513, 1000, 4096, 8192, 8193, 16384, 16385, 40000]


@pytest.mark.parametrize("dtype", ["int32", "float32", "float16", "int64", "float64", "uint8"])
@pytest.mark.parametrize("length", ROW_LENGTHS)
def test_rows_indices_every_sorter(cuda, dtype, length):
    """sort/argsort along the last dim: values and int64 indices as torch.sort(stable=True), both orders, with
    duplicates, -0.0/+0.0 and NaNs of several payloads (the indices bring their bits back)."""
    torch = cuda
    rows = max(3, 60000 // length)
    x = make(torch, (rows, length), dtype, seed=length, few=True)
    if x.dtype.is_floating_point:
        x = with_shared_bits(torch, x, seed=length + 1)
    for descending in (False, True):
        ref_values, ref_indices = reference_sort(torch, x, descending=descending)
        values, indices = tilesort.sort(x.cuda(), descending=descending)
        assert indices.dtype == torch.int64
        assert same_bits(torch, values, ref_values)
        assert torch.equal(indices.cpu(), ref_indices)
        order = tilesort.argsort(x.cuda(), descending=descending)
        assert order.dtype == torch.int64 and torch.equal(order.cpu(), ref_indices)
        out = (torch.empty(x.shape, dtype=x.dtype, device="cuda"), torch.empty(x.shape, dtype=torch.int64,
                                                                                device="cuda"))
        tilesort.sort(x.cuda(), descending=descending, out=out)
        assert same_bits(torch, out[0], ref_values) and torch.equal(out[1].cpu(), ref_indices)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("shape", [(20000,), (64, 300)], ids=str)
def test_float_order_in_comparator(cuda, monkeypatch, dtype, shape):
    """The path FLOAT_RANKS=False takes (floating keys ordered inside the comparator) gives the same results."""
    from tilesort import _core

    monkeypatch.setattr(_core, "FLOAT_RANKS", False)
    torch = cuda
    x = make(torch, shape, dtype, seed=17, few=True)
    for descending in (False, True):
        values, indices = tilesort.sort(x.cuda(), descending=descending)
        ref_values, ref_indices = reference_sort(torch, x, descending=descending)
        assert same_bits(torch, values, ref_values) and torch.equal(indices.cpu(), ref_indices)
        offsets = torch.tensor([0, 7, 7, x.numel()])
        k, _ = tilesort.segmented_sort(x.reshape(-1).cuda(), offsets=offsets.cuda(), descending=descending)
        assert same_bits(torch, k, segment_reference(torch, x.reshape(-1), offsets, descending)[0])


@pytest.mark.parametrize("dtype", ["int32", "float32", "float16", "int64"])
def test_dim_and_noncontiguous(cuda, dtype):
    torch = cuda
    x = make(torch, (33, 40, 17), dtype, few=True).cuda()
    for view, dim in [(x, 0), (x, 1), (x, -2), (x.transpose(0, 2), -1), (x[:, ::3, :], -1), (x[..., ::2], 1)]:
        for descending in (False, True):
            values, indices = tilesort.sort(view, dim=dim, descending=descending)
            ref_values, ref_indices = reference_sort(torch, view, dim=dim, descending=descending)
            assert same_bits(torch, values, ref_values)
            assert torch.equal(indices.cpu(), ref_indices)


# Rows along another dim of a contiguous tensor sort where they lie (row_stride) for every dtype but float64
# (ranks: moved last), rows of up to 256 keys of up to 4 bytes and 1024 of 8 (longer ones are moved last).
@pytest.mark.parametrize("dtype", ["int32", "float32", "float16", "bfloat16", "int64", "uint8", "float64"])
@pytest.mark.parametrize("length", [2, 65, 256, 257, 1024, 1025, 4096])
def test_other_dim_where_rows_lie(cuda, dtype, length):
    torch = cuda
    x = make(torch, (2, length, max(2, 40000 // length)), dtype, seed=length, few=True)
    if x.dtype.is_floating_point:
        x = with_shared_bits(torch, x, seed=length + 3)
    payload = torch.randint(0, 100, x.shape, dtype=torch.int16)
    for descending in (False, True):
        ref_values, ref_indices = reference_sort(torch, x, dim=1, descending=descending)
        values, indices = tilesort.sort(x.cuda(), dim=1, descending=descending)
        assert same_bits(torch, values, ref_values) and torch.equal(indices.cpu(), ref_indices)
        order = tilesort.argsort(x.cuda(), dim=-2, descending=descending)
        assert torch.equal(order.cpu(), ref_indices)
        k, v = tilesort.sort_pairs(x.cuda(), payload.cuda(), dim=1, descending=descending)
        assert same_bits(torch, k, ref_values) and torch.equal(v.cpu(), torch.gather(payload, 1, ref_indices))
    out = (torch.empty(x.shape, dtype=x.dtype, device="cuda"), torch.empty(x.shape, dtype=torch.int64, device="cuda"))
    tilesort.sort(x.cuda(), dim=1, out=out)
    ref_values, ref_indices = reference_sort(torch, x, dim=1)
    assert same_bits(torch, out[0], ref_values) and torch.equal(out[1].cpu(), ref_indices)
    y = x.cuda()
    if not y.dtype.is_floating_point:  # in place: the keys' own tensor as out
        tilesort.sort(y, dim=1, out=(y, out[1]))
        assert same_bits(torch, y, ref_values) and torch.equal(out[1].cpu(), ref_indices)


def test_stability_and_signed_zero(cuda):
    torch = cuda
    x = torch.tensor([0.0, -0.0, 1.0, float("nan"), -0.0, 0.0, -float("nan"), 1.0] * 300, device="cuda")
    for descending in (False, True):
        values, indices = tilesort.sort(x, descending=descending)
        ref_values, ref_indices = reference_sort(torch, x, descending=descending)
        assert torch.equal(indices.cpu(), ref_indices)
        assert same_bits(torch, values, ref_values)


# Bit patterns whose ranks several keys share (zeros; NaNs of several payloads and both signs), per float
# width: the job brings them back from the input by index, so their exact bits must survive every path.
SHARED_BITS = {
    2: [0x0000, 0x8000, 0x7E00, 0xFE00, 0x7C01, 0xFC01, 0x7FC1, 0xFF81, 0xFFFF],  # NaNs of float16 or bfloat16
    4: [0x00000000, 0x80000000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0xFF800001, 0x7FC12345, 0xFFFFFFFF],
    8: [0, 1 << 63, 0x7FF8000000000000, 0xFFF8000000000000, 0x7FF0000000000001, 0xFFF0000000000001,
        0x7FF8123456789ABC, (1 << 64) - 1],
}


def with_shared_bits(torch, x, seed):
    """x (CPU, floating) with a quarter of its keys replaced by SHARED_BITS patterns, through its signed view."""
    width = x.element_size()
    signed = as_signed(torch, x).clone()
    patterns = torch.tensor([b - (1 << (8 * width)) if b >= 1 << (8 * width - 1) else b for b in SHARED_BITS[width]],
                            dtype=signed.dtype)
    flat = signed.view(-1)
    g = torch.Generator().manual_seed(seed)
    picks = torch.randint(0, flat.numel(), (max(flat.numel() // 4, 1),), generator=g)
    flat[picks] = patterns[torch.randint(0, patterns.numel(), (picks.numel(),), generator=g)]
    return signed.view(x.dtype)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("shape", [(3000,), (40, 300), (5, 5000)], ids=str)
def test_zero_and_nan_bits_every_path(cuda, dtype, shape):
    """-0.0/+0.0 tie and keep their bits and input order; NaN payloads and signs come out bit for bit: sort
    (one array and rows), out= the input itself, sort_pairs, segmented_sort and locality_sort."""
    torch = cuda
    x = with_shared_bits(torch, make(torch, shape, dtype, seed=21, few=True), seed=22)
    for descending in (False, True):
        ref_values, ref_indices = reference_sort(torch, x, descending=descending)
        values, indices = tilesort.sort(x.cuda(), descending=descending)
        assert same_bits(torch, values, ref_values) and torch.equal(indices.cpu(), ref_indices)
        y = x.cuda()
        tilesort.sort(y, out=(y, torch.empty(y.shape, dtype=torch.int64, device="cuda")), descending=descending)
        assert same_bits(torch, y, ref_values)
        payload = torch.arange(x.numel()).reshape(shape)
        k, v = tilesort.sort_pairs(x.cuda(), payload.cuda(), descending=descending)
        assert same_bits(torch, k, ref_values) and torch.equal(v.cpu(), torch.gather(payload, -1, ref_indices))
        flat = x.reshape(-1)
        offsets = torch.tensor([0, 3, 3, 1000, flat.numel() - 7])
        k, _ = tilesort.segmented_sort(flat.cuda(), offsets=offsets.cuda(), descending=descending)
        assert same_bits(torch, k, segment_reference(torch, flat, offsets, descending)[0])
        k, _ = tilesort.locality_sort(flat.cuda(), descending=descending)
        assert same_bits(torch, k, reference_sort(torch, flat, descending=descending)[0])


@pytest.mark.parametrize("values_dtype", ["int64", "float64", "int32", "float32", "int16", "uint8", "bool"])
@pytest.mark.parametrize("shape", [(1000,), (50, 77), (4, 20000)], ids=str)
def test_sort_pairs(cuda, values_dtype, shape):
    torch = cuda
    keys = make(torch, shape, "int32", seed=3, few=True)
    values = make(torch, shape, values_dtype, seed=4)
    for descending in (False, True):
        k, v = tilesort.sort_pairs(keys.cuda(), values.cuda(), descending=descending)
        ref_k, ref_i = reference_sort(torch, keys, descending=descending)
        assert torch.equal(k.cpu(), ref_k)
        assert same_bits(torch, v, torch.gather(as_signed(torch, values), -1, ref_i).view(values.dtype))


def segment_reference(torch, keys, offsets, descending, values=None):
    """Per-segment torch.sort on the CPU; positions outside every segment stay."""
    keys = keys.cpu()
    out_keys = keys.clone()
    index = torch.arange(keys.numel())
    off = offsets.cpu().tolist()
    for begin, end in zip(off[:-1], off[1:]):
        v, i = reference_sort(torch, keys[begin:end], descending=descending)
        out_keys[begin:end] = v
        index[begin:end] = i + begin
    return out_keys, index, (None if values is None else values.cpu()[index])


RAGGED = {
    "empty segments and gaps": [3, 3, 10, 10, 11, 500, 500, 2000, 2100, 30000, 30001, 30001],
    "one segment": [0, 40000],
    "no segments": [7],
    "long and short": [0, 1, 2, 33, 544, 1600, 9000, 26000, 40000],
}


@pytest.mark.parametrize("dtype", ["int32", "float32", "float16", "uint8", "int64", "float64"])
@pytest.mark.parametrize("layout", list(RAGGED), ids=str)
@pytest.mark.parametrize("descending", [False, True])
def test_segmented(cuda, dtype, layout, descending):
    torch = cuda
    keys = make(torch, (40000,), dtype, seed=5, few=True)
    offsets = torch.tensor(RAGGED[layout])
    ref_keys, ref_index, _ = segment_reference(torch, keys, offsets, descending)
    k, v = tilesort.segmented_sort(keys.cuda(), offsets=offsets.cuda(), descending=descending)
    assert v is None
    assert same_bits(torch, k, ref_keys)
    assert torch.equal(tilesort.segmented_argsort(keys.cuda(), offsets=offsets.cuda(), descending=descending).cpu(),
                       ref_index)
    if offsets[0] == 0:
        lengths = (offsets[1:] - offsets[:-1]).to(torch.int32).cuda()
        k2, _ = tilesort.segmented_sort(keys.cuda(), lengths=lengths, descending=descending)
        assert same_bits(torch, k2, ref_keys)


@pytest.mark.parametrize("values_dtype", ["int64", "float32", "int8"])
def test_segmented_values(cuda, values_dtype):
    torch = cuda
    keys = make(torch, (40000,), "float32", seed=6, few=True)
    values = make(torch, (40000,), values_dtype, seed=7)
    offsets = torch.tensor(RAGGED["empty segments and gaps"])
    ref_keys, _, ref_values = segment_reference(torch, keys, offsets, False, values)
    k, v = tilesort.segmented_sort(keys.cuda(), offsets=offsets.cuda(), values=values.cuda(), check=False)
    assert same_bits(torch, k, ref_keys)
    assert same_bits(torch, v, ref_values)


@pytest.mark.parametrize("dtype", ["int32", "float64", "int16"])
@pytest.mark.parametrize("n", [0, 1, 1000, 100000])
def test_locality_sort(cuda, dtype, n):
    torch = cuda
    base = reference_sort(torch, make(torch, (n,), dtype, seed=8))[0]
    near = base.clone()
    if n > 1:  # swap neighbours here and there: nearly sorted
        swap = torch.arange(0, n - 1, 7)
        near[swap], near[swap + 1] = base[swap + 1], base[swap]
    payload = torch.arange(n, dtype=torch.int64)
    k, v = tilesort.locality_sort(near.cuda(), values=payload.cuda())
    ref_k, ref_i = reference_sort(torch, near)
    assert same_bits(torch, k, ref_k)
    assert torch.equal(v.cpu(), ref_i)
    k_only, none = tilesort.locality_sort(near.cuda(), descending=True)
    assert none is None and same_bits(torch, k_only, reference_sort(torch, near, descending=True)[0])


# From 2^22 elements the front door probes 1-D input on the device: sorted and nearly sorted input takes the
# locality sort, random input the merge sort or the radix sort (keys of 2 bytes from 2^16, with their
# positions made by the sort); the result is the stable sort's either way.
@pytest.mark.parametrize("dtype", ["int32", "float32", "int64", "float16", "bfloat16", "int16"])
@pytest.mark.parametrize("kind", ["sorted", "nearly", "random"])
def test_large_1d_probed(cuda, dtype, kind):
    torch = cuda
    n = (1 << 22) + 3
    x = make(torch, (n,), dtype, seed=11, few=True)
    if kind != "random":
        x = reference_sort(torch, x)[0]
    if kind == "nearly":
        swap = torch.arange(0, n - 1, 5)
        x[swap], x[swap + 1] = x[swap + 1].clone(), x[swap].clone()
    values, indices = tilesort.sort(x.cuda())
    ref_values, ref_indices = reference_sort(torch, x)
    assert same_bits(torch, values, ref_values)
    assert torch.equal(indices.cpu(), ref_indices)


def test_out_and_in_place(cuda):
    torch = cuda
    x = make(torch, (64, 300), "float32", seed=9).cuda()
    ref_values, ref_indices = reference_sort(torch, x)
    values, indices = torch.empty_like(x), torch.empty(x.shape, dtype=torch.int64, device="cuda")
    result = tilesort.sort(x, out=(values, indices))
    assert result.values is values and result.indices is indices
    assert same_bits(torch, values, ref_values) and torch.equal(indices.cpu(), ref_indices)
    # Non-contiguous out (copied into), and in place.
    strided = torch.empty(300, 64, device="cuda").t()
    tilesort.sort(x, out=(strided, indices))
    assert same_bits(torch, strided, ref_values)
    y = x.clone()
    tilesort.sort(y, out=(y, indices))
    assert same_bits(torch, y, ref_values)
    # Integer keys sort in place directly (the rows read their keys back by position before any store).
    for shape in ((64, 300), (3000,)):
        z = make(torch, shape, "int16", seed=10, few=True).cuda()
        z_values, z_indices = reference_sort(torch, z, descending=True)
        tilesort.sort(z, descending=True, out=(z, indices.reshape(-1)[:z.numel()].reshape(shape)))
        assert same_bits(torch, z, z_values)
    order = torch.empty(x.shape, dtype=torch.int64, device="cuda")
    assert tilesort.argsort(x, out=order) is order and torch.equal(order.cpu(), ref_indices)
    flat = x.reshape(-1)
    offsets = torch.tensor([0, 5, 5, 19200], device="cuda")
    k_out = torch.empty_like(flat)
    k, _ = tilesort.segmented_sort(flat, offsets=offsets, out=k_out)
    assert k is k_out and same_bits(torch, k_out, segment_reference(torch, flat, offsets, False)[0])


def test_stream(cuda):
    torch = cuda
    x = make(torch, (512, 1000), "float32", seed=10).cuda()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        y = x * 1  # ordered on `stream`
        values, indices = tilesort.sort(y)
        flat, _ = tilesort.segmented_sort(y.reshape(-1), lengths=torch.full((512,), 1000, device="cuda"),
                                          check=False)
    stream.synchronize()
    # The reference sorts y, not x: the multiplication rewrites NaN payloads (-nan * 1 is the canonical nan).
    ref_values, ref_indices = reference_sort(torch, y)
    assert same_bits(torch, values, ref_values) and torch.equal(indices.cpu(), ref_indices)
    assert same_bits(torch, flat.reshape(512, 1000), ref_values)


def test_cuda_graph(cuda):
    torch = cuda
    static_x = make(torch, (256, 300), "float32", seed=11).cuda()
    offsets = torch.arange(0, 256 * 300 + 1, 300, device="cuda")
    warm = torch.cuda.Stream()
    warm.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(warm):  # warm-up outside the capture (kernel attributes, allocator)
        tilesort.sort(static_x)
        tilesort.segmented_sort(static_x.reshape(-1), offsets=offsets, check=False)
    torch.cuda.current_stream().wait_stream(warm)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        values, indices = tilesort.sort(static_x)
        ragged, _ = tilesort.segmented_sort(static_x.reshape(-1), offsets=offsets, check=False)
    for seed in (12, 13):
        static_x.copy_(make(torch, (256, 300), "float32", seed=seed))
        graph.replay()
        torch.cuda.synchronize()
        ref_values, ref_indices = reference_sort(torch, static_x)
        assert same_bits(torch, values, ref_values) and torch.equal(indices.cpu(), ref_indices)
        assert same_bits(torch, ragged.reshape(256, 300), ref_values)


def test_check_refused_in_capture(cuda):
    torch = cuda
    x = torch.randn(1000, device="cuda")
    offsets = torch.tensor([0, 500, 1000], device="cuda")
    graph = torch.cuda.CUDAGraph()
    with pytest.raises(ValueError, match="check=False"):
        with torch.cuda.graph(graph):
            tilesort.segmented_sort(x, offsets=offsets)


def test_custom_ops_opcheck(cuda):
    torch = cuda
    x = make(torch, (16, 100), "float32", seed=14).cuda()
    offsets = torch.tensor([0, 10, 10, 1600], device="cuda")
    ops = torch.ops.tilesort
    cases = [(ops.sort.default, (x, 1, False)), (ops.argsort.default, (x, 0, True)),
             (ops.sort_pairs.default, (x, x.to(torch.int32), 1, False)),
             (ops.segmented_sort_keys.default, (x.reshape(-1), offsets, False)),
             (ops.segmented_sort_pairs.default, (x.reshape(-1), offsets, x.reshape(-1), True)),
             (ops.segmented_argsort.default, (x.reshape(-1), offsets, False)),
             (ops.locality_sort_keys.default, (x.reshape(-1), False)),
             (ops.locality_sort_pairs.default, (x.reshape(-1), x.reshape(-1).to(torch.int64), False))]
    for op, args in cases:
        torch.library.opcheck(op, args, test_utils=("test_schema", "test_faketensor"))


def test_torch_compile(cuda):
    torch = cuda
    x = make(torch, (64, 300), "float32", seed=15).cuda()
    offsets = torch.tensor([0, 100, 100, 19200], device="cuda")

    def f(x):
        values, indices = tilesort.sort(x, dim=-1, descending=True)
        ragged, _ = tilesort.segmented_sort(x.reshape(-1), offsets=offsets, check=False)
        return values * 2, indices, ragged + 1

    compiled = torch.compile(f)
    for a, b in zip(compiled(x), f(x)):  # NaN != NaN: compare exactly, NaN equal to NaN
        torch.testing.assert_close(a, b, rtol=0, atol=0, equal_nan=True)


def test_autograd(cuda):
    torch = cuda
    x = torch.randn(6, 40, dtype=torch.float64, device="cuda", requires_grad=True)
    for dim in (-1, 0):
        assert torch.autograd.gradcheck(lambda t: tilesort.sort(t, dim=dim)[0], (x,))
        assert torch.autograd.gradcheck(lambda t: tilesort.sort(t, dim=dim, descending=True)[0], (x,))
    values, _ = tilesort.sort(x)
    (values * torch.arange(40, device="cuda")).sum().backward()
    ref = x.detach().clone().requires_grad_(True)
    (torch.sort(ref, stable=True)[0] * torch.arange(40, device="cuda")).sum().backward()
    assert torch.equal(x.grad, ref.grad)


def test_dlpack_foreign_array(cuda):
    torch = cuda

    class Foreign:  # an array known only through DLPack
        def __init__(self, t):
            self.t = t

        def __dlpack__(self, **kwargs):
            return self.t.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return self.t.__dlpack_device__()

    x = make(torch, (10, 300), "int32", seed=16).cuda()
    values, indices = tilesort.sort(Foreign(x))
    ref_values, ref_indices = reference_sort(torch, x)
    assert torch.equal(values.cpu(), ref_values) and torch.equal(indices.cpu(), ref_indices)
