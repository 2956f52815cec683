"""Every error path: the exception type, a message that says what to change, and nothing written.

The segmented sort of a CPU tensor and the not-an-array cases run without a GPU (they are refused
before anything touches the device).
"""

import pytest

import tilesort


def test_not_an_array():
    with pytest.raises(TypeError, match="must be a CUDA array"):
        tilesort.sort([3, 1, 2])


def test_cpu_tensor(torch):
    # (sort, argsort and sort_pairs take CPU tensors through the host sort: test_host.py)
    x = torch.tensor([3, 1, 2])
    with pytest.raises(ValueError, match=r"move it to the GPU first"):
        tilesort.segmented_sort(x, offsets=torch.tensor([0, 3]))
    assert x.tolist() == [3, 1, 2]


@pytest.fixture
def gpu(cuda):
    torch = cuda
    x = torch.tensor([5, 3, 9, 1, 7, 2], dtype=torch.int32, device="cuda")
    values = torch.arange(6, device="cuda")
    out_k = torch.full((6,), -1, dtype=torch.int32, device="cuda")
    out_v = torch.full((6,), -1, dtype=torch.int64, device="cuda")
    return torch, x, values, out_k, out_v


CASES = {
    "unsupported dtype": (TypeError, "keys may be bool",
                          lambda t, x, v, ok, ov: tilesort.sort(x.to(t.complex64), out=(ok, ov))),
    "dim out of range": (ValueError, r"dim=2 is out of range",
                         lambda t, x, v, ok, ov: tilesort.sort(x, dim=2, out=(ok, ov))),
    "values shape": (ValueError, r"`values` has shape \(5,\)",
                     lambda t, x, v, ok, ov: tilesort.sort_pairs(x, v[:5], out=(ok, ov))),
    "values dtype": (TypeError, "payloads are 1, 2, 4 or 8 bytes",
                     lambda t, x, v, ok, ov: tilesort.sort_pairs(x, v.to(t.complex128), out=(ok, ov))),
    "values on the CPU": (ValueError, "must be on the keys' device",
                          lambda t, x, v, ok, ov: tilesort.sort_pairs(x, v.cpu(), out=(ok, ov))),
    "out shape": (ValueError, r"out\[1\] has shape \(5,\)",
                  lambda t, x, v, ok, ov: tilesort.sort(x, out=(ok, ov[:5]))),
    "out dtype": (TypeError, r"out\[0\] has dtype int64; it must be int32",
                  lambda t, x, v, ok, ov: tilesort.sort(x, out=(ov, ov))),
    "out count": (ValueError, r"out= takes 2 array\(s\), got 1",
                  lambda t, x, v, ok, ov: tilesort.sort(x, out=(ok,))),
    "offsets decreasing": (ValueError, r"non-decreasing: offsets\[1\] = 4 > offsets\[2\] = 2",
                           lambda t, x, v, ok, ov: tilesort.segmented_sort(
                               x, offsets=t.tensor([0, 4, 2, 6], device="cuda"), out=ok)),
    "offsets past the end": (ValueError, r"offsets\[-1\] = 7 runs past the end of the 6 keys",
                             lambda t, x, v, ok, ov: tilesort.segmented_sort(
                                 x, offsets=t.tensor([0, 4, 7], device="cuda"), out=ok)),
    "offsets negative": (ValueError, r"offsets\[0\] = -1 is negative",
                         lambda t, x, v, ok, ov: tilesort.segmented_argsort(
                             x, offsets=t.tensor([-1, 4], device="cuda"), out=ov)),
    "offsets empty": (ValueError, "needs n_segments \\+ 1 entries",
                      lambda t, x, v, ok, ov: tilesort.segmented_sort(
                          x, offsets=t.zeros(0, dtype=t.int64, device="cuda"), out=ok)),
    "offsets dtype": (TypeError, "use int32 or int64",
                      lambda t, x, v, ok, ov: tilesort.segmented_sort(
                          x, offsets=t.tensor([0.0, 6.0], device="cuda"), out=ok)),
    "lengths negative": (ValueError, r"lengths\[1\] = -2 is negative",
                         lambda t, x, v, ok, ov: tilesort.segmented_sort(
                             x, lengths=t.tensor([4, -2, 2], device="cuda"), out=ok)),
    "lengths too long": (ValueError, "the lengths add up to 8, more than the 6 keys",
                         lambda t, x, v, ok, ov: tilesort.segmented_sort(
                             x, lengths=t.tensor([4, 4], device="cuda"), out=ok)),
    "both offsets and lengths": (ValueError, "exactly one of offsets=",
                                 lambda t, x, v, ok, ov: tilesort.segmented_sort(
                                     x, offsets=t.tensor([0, 6], device="cuda"),
                                     lengths=t.tensor([6], device="cuda"), out=ok)),
    "segmented 2-D keys": (ValueError, r"`keys` must be 1-D",
                           lambda t, x, v, ok, ov: tilesort.segmented_sort(
                               x.reshape(2, 3), offsets=t.tensor([0, 6], device="cuda"))),
    "locality 2-D keys": (ValueError, r"`keys` must be 1-D",
                          lambda t, x, v, ok, ov: tilesort.locality_sort(x.reshape(2, 3))),
    "sort_pairs without values": (TypeError, "`values` is required",
                                  lambda t, x, v, ok, ov: tilesort.sort_pairs(x, None, out=(ok, ov))),
}


@pytest.mark.parametrize("case", list(CASES), ids=str)
def test_rejected_call_writes_nothing(gpu, case):
    torch, x, values, out_k, out_v = gpu
    error, message, call = CASES[case]
    arrays = [x, values, out_k, out_v]
    before = [a.clone() for a in arrays]
    with pytest.raises(error, match=message):
        call(torch, x, values, out_k, out_v)
    torch.cuda.synchronize()
    assert all(torch.equal(a, b) for a, b in zip(arrays, before)), "a rejected call wrote to its arguments"
    assert tilesort.sort(x).values.tolist() == [1, 2, 3, 5, 7, 9]  # and the next call works


def test_not_current_device(cuda):
    torch = cuda
    if torch.cuda.device_count() < 2:
        pytest.skip("one CUDA device: the wrong-device test needs two")
    x = torch.tensor([3, 1, 2], device="cuda:1")
    with torch.cuda.device(0):
        with pytest.raises(ValueError, match=r"call inside `with torch.cuda.device\(1\):`"):
            tilesort.sort(x)
    assert x.tolist() == [3, 1, 2]
