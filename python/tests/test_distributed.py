"""tilesort.distributed under torchrun: two (or more) processes, one GPU each.

Run directly on a machine with 2 GPUs:

    NCCL_NVLS_ENABLE=0 torchrun --nproc-per-node 2 python/tests/test_distributed.py

Under pytest (no torchrun), ``test_under_torchrun`` starts exactly that and
checks that every rank passed; it skips where torch, 2 GPUs or the extension
tilesort._nccl are missing. Each rank builds the same global array from one
seed, sorts its shard (shards of different sizes, one empty) and compares
its output with its slice of ``torch.sort(global, stable=True)``: bit for
bit, for every dtype width, both orders, pairs (values are global positions:
stability and key-value pairing), and an argument error on one rank, which
must raise on every rank.
"""

import os
import subprocess
import sys

import pytest


def test_under_torchrun(cuda):
    torch = cuda
    if torch.cuda.device_count() < 2:
        pytest.skip("fewer than 2 CUDA devices: the distributed test skips")
    pytest.importorskip("tilesort._nccl", reason="tilesort._nccl was not built (NCCL not found)")
    env = dict(os.environ, NCCL_NVLS_ENABLE="0", PYTHONUNBUFFERED="1")
    result = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2", __file__],
                            env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    assert result.stdout.count("tilesort.distributed: rank passed") == 2, result.stdout[-4000:]


def _rank_model(kt, word, descending):
    """src/dtype_order.cuh's rank of an unsigned word of kt.bytes bytes (kind 'f' or integer)."""
    bits = 8 * kt.bytes
    top, ones = 1 << (bits - 1), (1 << bits) - 1
    word &= ones
    if kt.kind == "f":
        magnitude = word & (top - 1)
        r = ones if magnitude > kt.inf_bits else top if magnitude == 0 else (~word & ones) if word & top else word | top
    else:
        r = word ^ (top if kt.kind == "i" else 0)
    return r ^ (ones if descending else 0)


@pytest.mark.parametrize("dtype_name", ["float16", "bfloat16", "int16", "uint8", "bool"])
def test_widened_keys_keep_bits_and_order(torch, dtype_name):
    """Keys of 1 and 2 bytes travel as 4-byte keys: every bit pattern comes back exactly (NaN payloads and
    -0.0 included), and the 4-byte order is the dtype's (ties where the dtype has them). On the CPU."""
    from tilesort._arrays import backend_of
    from tilesort.distributed import _widen_keys

    dtype = getattr(torch, dtype_name)
    if dtype == torch.bool:
        x = torch.tensor([True, False, True, False])
    else:
        width = torch.tensor([], dtype=dtype).element_size()
        patterns = torch.arange(1 << (8 * width), dtype=torch.int32)
        x = patterns.to(torch.int8 if width == 1 else torch.int16).view(dtype)
    be = backend_of(x, "test", "x")
    wide, kt, narrow = _widen_keys(be, x)
    assert kt.bytes == 4 and wide.dtype == torch.int32
    assert torch.equal(_bits(torch, narrow(wide)), _bits(torch, x))
    from tilesort._arrays import KEY_TYPES

    narrow_kt = KEY_TYPES[dtype_name]
    narrow_bits = _bits(torch, x).tolist()
    for descending in (False, True):
        wide_ranks = [_rank_model(kt, w, descending) for w in wide.tolist()]
        ranks = [_rank_model(narrow_kt, b, descending) for b in narrow_bits]
        for i in range(len(ranks) - 1):  # neighbours in input order: the same comparison both ways
            for j in (i + 1, (i * 7919 + 13) % len(ranks)):
                assert (wide_ranks[i] < wide_ranks[j]) == (ranks[i] < ranks[j]), (dtype_name, i, j, descending)
                assert (wide_ranks[i] == wide_ranks[j]) == (ranks[i] == ranks[j]), (dtype_name, i, j, descending)


# ---------------------------------------------------------------- the ranks' side (under torchrun)
def _global_input(torch, dtype, sizes, seed):
    g = torch.Generator().manual_seed(seed)
    total = sum(sizes)
    if dtype.is_floating_point:
        x = torch.randn(total, generator=g, dtype=torch.float64).mul_(100).round_()  # many ties
        special = torch.tensor([float("nan"), -0.0, 0.0, float("inf"), -float("inf")], dtype=torch.float64)
        x[torch.randint(0, max(total, 1), (total // 10,), generator=g)] = special[
            torch.randint(0, 5, (total // 10,), generator=g)]
        return x.to(dtype)
    if dtype == torch.bool:
        return torch.randint(0, 2, (total,), generator=g).bool()
    info = torch.iinfo(dtype)
    low, high = max(info.min, -1000), min(info.max, 1000)
    return torch.randint(low, high + 1, (total,), generator=g, dtype=torch.int64).to(dtype)


def _bits(torch, x):
    return x.view({1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[x.element_size()])


def _main():
    import torch
    import torch.distributed as dist

    import tilesort.distributed as td

    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank)))
    device = torch.device("cuda", torch.cuda.current_device())
    uneven = [1500 + 707 * r for r in range(world)]
    dtypes = [torch.int32, torch.float32, torch.int64, torch.float64, torch.float16, torch.bfloat16, torch.uint8,
              torch.int16, torch.bool]
    cases = [(dtype, uneven) for dtype in dtypes] + [(torch.int32, [0] + uneven[1:])]  # last: rank 0's shard empty
    for seed, (dtype, sizes) in enumerate(cases):
        begin = sum(sizes[:rank])
        end = begin + sizes[rank]
        for descending in (False, True):
            x = _global_input(torch, dtype, sizes, seed)
            ordered = x.to(torch.uint8) if dtype == torch.bool else x  # (torch.sort of bool through uint8)
            # The reference sorts on the CPU, as test_torch.py's: there -0.0 and +0.0 are equal for every
            # float dtype (on the GPU, torch.sort of float16 kept them apart in a run of 2026-11-28).
            ref = torch.sort(ordered, stable=True, descending=descending)
            ref = type(ref)((ref.values.to(dtype).to(device), ref.indices.to(device)))
            out = td.sort(x[begin:end].to(device), descending=descending)
            assert out.dtype == dtype and out.numel() == sizes[rank], (dtype, out.dtype, out.numel())
            assert torch.equal(_bits(torch, out), _bits(torch, ref.values[begin:end])), (dtype, descending)
            # Pairs: values are global positions (int64), and the same as 4- and 2-byte payloads.
            positions = torch.arange(sum(sizes), device=device)
            k, v = td.sort_pairs(x[begin:end].to(device), positions[begin:end], descending=descending)
            assert torch.equal(_bits(torch, k), _bits(torch, ref.values[begin:end])), (dtype, descending, "pairs")
            assert torch.equal(v, ref.indices[begin:end]), (dtype, descending, "stable")
            if seed == 0:  # 4- and 2-byte payloads (widened to 8 bytes and back)
                _, v32 = td.sort_pairs(x[begin:end].to(device), positions[begin:end].to(torch.float32),
                                       descending=descending)
                assert torch.equal(v32, ref.indices[begin:end].to(torch.float32)), (descending, "float32 values")
                _, v16 = td.sort_pairs(x[begin:end].to(device), positions[begin:end].to(torch.int16),
                                       descending=descending)
                assert torch.equal(v16, ref.indices[begin:end].to(torch.int16)), (descending, "int16 values")
    # An argument error on the last rank (a 2-D shard) raises on every rank; the group still works after.
    bad = torch.zeros((2, 3) if rank == world - 1 else (6,), dtype=torch.int32, device=device)
    with _raises(ValueError if rank == world - 1 else RuntimeError):
        td.sort(bad)
    # Another dtype width on one rank: refused everywhere.
    other = torch.zeros(10, dtype=torch.int64 if rank == 0 else torch.int32, device=device)
    with _raises(RuntimeError):
        td.sort(other)
    mine = torch.arange(100, 0, -1, device=device, dtype=torch.int32)
    whole = torch.sort(mine.repeat(world)).values
    assert torch.equal(td.sort(mine), whole[100 * rank:100 * (rank + 1)]), "the group works after the errors"
    torch.cuda.synchronize()
    td.release()
    dist.barrier()
    dist.destroy_process_group()
    print(f"tilesort.distributed: rank passed ({rank} of {world})", flush=True)


class _raises:
    def __init__(self, error):
        self.error = error

    def __enter__(self):
        return self

    def __exit__(self, kind, value, trace):
        assert kind is not None and issubclass(kind, self.error), f"expected {self.error.__name__}, got {kind}"
        return True


if __name__ == "__main__":
    _main()
