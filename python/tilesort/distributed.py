"""tilesort.distributed: the NCCL sort of a tensor sharded one shard per rank under torch.distributed.

    # torchrun --nproc-per-node 2 script.py
    import torch, torch.distributed as dist
    import tilesort.distributed
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    shard = torch.randn(1 << 24, device="cuda")      # this rank's part of the array
    out = tilesort.distributed.sort(shard)           # same length, sorted across the ranks in rank order

The contract of the C++ ``tilesort::nccl::sort_keys`` / ``sort_pairs``: every
rank keeps as many elements as it gave (shards may differ in size, empty ones
too); the elements are sorted within each rank and every element of rank r
orders before or equal to every element of rank r + 1; equal keys keep their
(rank, index) order. The order is torch's: NaN after every number (first when
descending), -0.0 equal to +0.0. Every rank of the group must call, in the
same order. An argument error on any rank (not a 1-D CUDA tensor on the
current device, an unsupported dtype, another dtype than the other ranks')
raises on every rank, with nothing written.

The communicator: NCCL's, built by tilesort once per (group, device) from an
ncclUniqueId that the group's first rank makes and broadcasts over the group
(a collective over the group, on the first call), then cached. ``release``
destroys it; after an NCCL failure or a timeout, call ``abort`` on every rank
(the next call builds a new communicator). The sort runs on the caller's
current stream with temp storage from torch's allocator; it waits on the host
twice (the shards' sizes, then the exchange sizes), so it cannot be captured
in a CUDA graph. Keys of 1 and 2 bytes sort as 4-byte keys, payloads of 1, 2
and 4 bytes as 8-byte ones (widened and narrowed around the sort, exactly).
"""

from __future__ import annotations

import threading

from . import _core, _device
from ._api import PairsResult
from ._arrays import KEY_TYPES, KeyType, backend_of

__all__ = ["sort", "sort_pairs", "release", "abort"]

_lock = threading.Lock()
_communicators = {}  # (process group, device index) -> communicator handle


def _extension():
    try:
        from . import _nccl
    except ImportError as error:
        raise ImportError(
            "tilesort.distributed needs the extension tilesort._nccl, built only where NCCL is found: "
            "reinstall with NCCL_ROOT pointing at NCCL (for example torch's: python3 -c \"import nvidia.nccl, os; "
            "print(os.path.dirname(nvidia.nccl.__file__))\")") from error
    return _nccl


def _dist(function):
    import torch
    import torch.distributed as dist

    if not dist.is_available() or not dist.is_initialized():
        _core.fail(RuntimeError, f"distributed.{function}",
                   "torch.distributed is not initialized: call torch.distributed.init_process_group('nccl') first")
    return torch, dist


def _group(dist, group):
    return dist.group.WORLD if group is None else group


def _communicator(function, group, device_index):
    """This process's communicator for `group` on a device, built and cached on first use (collective)."""
    torch, dist = _dist(function)
    pg = _group(dist, group)
    key = (pg, device_index)
    with _lock:
        handle = _communicators.get(key)
    if handle is not None:
        return handle
    ext = _extension()
    rank, size = dist.get_rank(pg), dist.get_world_size(pg)
    if rank < 0:
        _core.fail(ValueError, f"distributed.{function}", "this process is not a member of `group`")
    backend = str(dist.get_backend(pg)).lower()
    on = torch.device("cuda", device_index) if "nccl" in backend else torch.device("cpu")
    uid = torch.tensor(list(ext.unique_id()) if rank == 0 else [0] * 128, dtype=torch.uint8, device=on)
    dist.broadcast(uid, src=dist.get_global_rank(pg, 0), group=pg)
    with torch.cuda.device(device_index):
        handle = ext.comm_init(bytes(uid.cpu().tolist()), size, rank)
    with _lock:
        _communicators[key] = handle
    return handle


def _forget(group, action):
    import torch.distributed as dist

    pg = _group(dist, group)
    with _lock:
        keys = [k for k in _communicators if k[0] is pg]
        handles = [_communicators.pop(k) for k in keys]
    for handle in handles:
        action(handle)


def release(group=None):
    """Destroys this process's communicators for `group` (after its sorts have finished: synchronize first)."""
    _forget(group, _extension().comm_destroy)


def abort(group=None):
    """After an NCCL failure or a timeout: aborts this process's communicators for `group` (call on every rank)."""
    _forget(group, _extension().comm_abort)


# Keys of 1 and 2 bytes sort as 4-byte keys of the same order. Integers widen by value and come back by a
# cast. float16 and bfloat16 widen by bits: their 16 bits in the high half of a 32-bit word, which orders
# as a float whose infinity is theirs shifted up (NaN last, -0.0 = +0.0), and come back from the high half
# bit for bit (a cast back from float32 on the GPU would turn every NaN into 0x7FFF).
_WIDER_KEYS = {"bool": "int32", "uint8": "int32", "int8": "int32", "int16": "int32", "uint16": "int32"}
_HIGH_HALF_KEYS = ("float16", "bfloat16")
# Payloads by width: the signed integer that views their bits (widened to 8 bytes for the sort).
_PAYLOAD_VIEWS = {1: "int8", 2: "int16", 4: "int32", 8: "int64"}


def _check(function, x, argument):
    """The torch backend and x's key type, or the reason x is refused (raised by the caller)."""
    be = backend_of(x, f"distributed.{function}", argument)
    if be.name != "torch":
        _core.fail(TypeError, f"distributed.{function}", f"`{argument}` must be a torch tensor (torch.distributed)")
    _core.check_device(be, x, f"distributed.{function}", argument)
    _device.require(be.device_index(x))
    _core.key_type(be, x, f"distributed.{function}", argument)
    if x.ndim != 1:
        _core.fail(ValueError, f"distributed.{function}",
                   f"`{argument}` has shape {tuple(x.shape)}: pass this rank's shard as a 1-D tensor (x.flatten())")
    return be


def _widen_keys(be, keys):
    """(the keys the sort takes, their KeyType, the narrowing of its output back to keys' dtype)."""
    name = be.dtype_name(keys)
    torch = be.torch
    original = keys.dtype
    if name in _HIGH_HALF_KEYS:  # v * 65536 of a 16-bit v fits int32 exactly; the low half stays zero
        wide = keys.contiguous().view(torch.int16).to(torch.int32) * 65536
        high = KeyType(4, "f", KEY_TYPES[name].inf_bits << 16)
        return wide, high, lambda out: torch.div(out, 65536, rounding_mode="floor").to(torch.int16).view(original)
    wider = _WIDER_KEYS.get(name)
    if wider is None:
        return keys.contiguous(), KEY_TYPES[name], lambda out: out
    narrow = (lambda out: out.to(torch.int16).view(original)) if name == "uint16" else (lambda out: out.to(original))
    return be.astype(keys.contiguous(), wider), KEY_TYPES[wider], narrow


def _widen_values(be, values):
    torch = be.torch
    view = be.dtype(_PAYLOAD_VIEWS[values.element_size()])
    bits = values.contiguous().view(view)
    original = values.dtype
    if values.element_size() == 8:
        return bits, lambda out: out.view(original)
    return bits.to(torch.int64), lambda out: out.to(view).view(original)


def _run(function, comm, keys, kt, out, values, values_out, descending, timeout):
    be = backend_of(keys, f"distributed.{function}", "keys")
    ext = _extension()
    stream = be.stream(keys)
    timeout_ms = 0 if timeout is None else max(1, int(timeout * 1000))
    pointers = (keys.data_ptr(), out.data_ptr(), 8 if values is not None else 0,
                values.data_ptr() if values is not None else 0, values_out.data_ptr() if values is not None else 0)
    head = (comm, kt.bytes, ord(kt.kind), kt.inf_bits, bool(descending)) + pointers + (keys.numel(),)
    need = ext.sort(*head, 0, 0, stream, timeout_ms)
    temp = be.torch.empty(max(need, 1), dtype=be.torch.uint8, device=keys.device)
    ext.sort(*head, temp.data_ptr(), need, stream, timeout_ms)


def _refuse_everywhere(function, group, timeout):
    """This rank's arguments were refused: make the group's other ranks fail too (no hang), then return."""
    import torch

    try:
        comm = _communicator(function, group, torch.cuda.current_device())
        ext = _extension()
        # A null key pointer with one key: this rank's header says "invalid", every rank raises.
        ext.sort(comm, 4, ord("u"), 0, False, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0 if timeout is None else int(timeout * 1000))
    except (RuntimeError, ValueError, ImportError):
        pass


def sort(x, group=None, *, descending=False, timeout=None):
    """Sorts a tensor sharded over the ranks of `group` (default: the world); returns this rank's sorted shard.

    x: this rank's shard, a 1-D CUDA tensor on the current device, any dtype of tilesort.KEY_TYPES (the
    same on every rank). The result has x's length and dtype. ``timeout`` (seconds, default none): how
    long to wait for the other ranks before raising (then call ``abort``).

        out = tilesort.distributed.sort(shard)              # ascending across ranks 0, 1, ...
    """
    try:
        be = _check("sort", x, "x")
    except (TypeError, ValueError):
        _refuse_everywhere("sort", group, timeout)
        raise
    comm = _communicator("sort", group, x.device.index)
    keys, kt, narrow = _widen_keys(be, x)
    out = be.torch.empty_like(keys)
    _run("sort", comm, keys, kt, out, None, None, descending, timeout)
    return narrow(out)


def sort_pairs(keys, values, group=None, *, descending=False, timeout=None):
    """Sorts sharded keys across the ranks of `group` and carries values (1-8 bytes each) with them.

    Returns ``(keys, values)`` for this rank, of its shard's length; stable in (rank, index) order.

        k, v = tilesort.distributed.sort_pairs(scores, ids)
    """
    try:
        be = _check("sort_pairs", keys, "keys")
        _core.check_payload(be, keys, values, "distributed.sort_pairs")
    except (TypeError, ValueError):
        _refuse_everywhere("sort_pairs", group, timeout)
        raise
    comm = _communicator("sort_pairs", group, keys.device.index)
    k, kt, narrow_keys = _widen_keys(be, keys)
    v, narrow_values = _widen_values(be, values)
    out_k, out_v = be.torch.empty_like(k), be.torch.empty_like(v)
    _run("sort_pairs", comm, k, kt, out_k, v, out_v, descending, timeout)
    return PairsResult(narrow_keys(out_k), narrow_values(out_v))
