"""Array backends: the few operations the sorts need from the caller's library.

Every call allocates its outputs and temp storage with the caller's library
(torch's caching allocator, cupy's memory pool) and launches on the caller's
current stream, so tilesort composes with their streams and with CUDA graph
capture. ``backend_of(x)`` picks the backend: torch.Tensor -> torch,
cupy.ndarray -> cupy, anything else with ``__dlpack__`` or
``__cuda_array_interface__`` (JAX, Numba, ...) goes through torch (or cupy when
torch is missing) without a copy, and ``Backend.wrap_like`` hands the result
back as the caller's type.

    be = backend_of(x)
    keys = be.to_native(x)
    out = be.empty(keys.shape, "int64", keys)
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass


@dataclass(frozen=True)
class KeyType:
    """How a dtype's bits are ordered (see src/dtype_order.cuh)."""

    bytes: int
    kind: str  # 'u' unsigned or bool, 'i' signed, 'f' floating
    inf_bits: int  # floating: the bits of +inf; 0 otherwise


KEY_TYPES = {
    "bool": KeyType(1, "u", 0),
    "uint8": KeyType(1, "u", 0),
    "int8": KeyType(1, "i", 0),
    "uint16": KeyType(2, "u", 0),
    "int16": KeyType(2, "i", 0),
    "float16": KeyType(2, "f", 0x7C00),
    "bfloat16": KeyType(2, "f", 0x7F80),
    "uint32": KeyType(4, "u", 0),
    "int32": KeyType(4, "i", 0),
    "float32": KeyType(4, "f", 0x7F800000),
    "uint64": KeyType(8, "u", 0),
    "int64": KeyType(8, "i", 0),
    "float64": KeyType(8, "f", 0x7FF0000000000000),
}


def _optional(module):
    try:
        return importlib.import_module(module)
    except ImportError:
        return None


class TorchBackend:
    name = "torch"

    def __init__(self, torch):
        self.torch = torch
        self.array_type = torch.Tensor
        # dtype -> name by lookup (torch.compile traces dict lookups, not str(dtype)).
        self.names = {dt: str(dt).split(".")[-1] for dt in vars(torch).values() if isinstance(dt, torch.dtype)}
        # torch's unsigned types of 16+ bits have few kernels: gathers and casts go through the signed
        # dtype of the same width (same bits).
        self.signed = {getattr(torch, f"uint{b}"): getattr(torch, f"int{b}") for b in (16, 32, 64)
                       if hasattr(torch, f"uint{b}")}
        self.dtypes = {name: dt for dt, name in self.names.items()}
        # The current stream's cudaStream_t without building a torch.cuda.Stream (the call inductor's
        # generated code makes); the public path where this torch lacks it.
        self.raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)

    def dtype_name(self, x):
        return self.names[x.dtype]

    def dtype(self, name):
        return self.dtypes[name]

    def itemsize(self, x):
        return x.element_size()

    def device_problem(self, x):
        """None when x is on the current CUDA device, else what to change."""
        if not x.is_cuda:
            return f"it is on {x.device}; move it to the GPU first (x.cuda())"
        current = self.torch.cuda.current_device()
        if x.device.index != current:
            return (f"it is on {x.device} but the current device is cuda:{current}; "
                    f"call inside `with torch.cuda.device({x.device.index}):`")
        return None

    def same_device(self, a, b):
        return a.device == b.device

    def device_index(self, x):
        return x.get_device()

    def stream(self, x):
        if self.raw_stream is not None:
            return self.raw_stream(x.get_device())
        return self.torch.cuda.current_stream(x.device).cuda_stream

    def capturing(self):
        return self.torch.cuda.is_current_stream_capturing()

    def numel(self, x):
        return x.numel()

    def ptr(self, x):
        return x.data_ptr()

    def is_contiguous(self, x):
        return x.is_contiguous()

    def contiguous(self, x):
        return x.contiguous()

    def moveaxis(self, x, source, destination):
        return x.movedim(source, destination)

    def empty(self, shape, dtype_name, like):
        return self.torch.empty(shape, dtype=self.dtype(dtype_name), device=like.device)

    def astype(self, x, dtype_name):
        if x.dtype == getattr(self.torch, "uint16", None) and dtype_name == "int32":  # the widening of uint16 keys
            return x.view(self.torch.int16).to(self.torch.int32) & 0xFFFF
        return x.to(self.dtype(dtype_name))

    def offsets_from_lengths(self, lengths):
        zero = self.torch.zeros(1, dtype=self.torch.int64, device=lengths.device)
        return self.torch.cat([zero, self.torch.cumsum(lengths, 0)])

    def to_host_list(self, x):
        return x.tolist()

    def take_along(self, values, indices, dim):
        signed = self.signed.get(values.dtype)
        if signed is not None:
            return self.torch.gather(values.view(signed), dim, indices).view(values.dtype)
        return self.torch.gather(values, dim, indices)

    def take_flat(self, values, indices):
        signed = self.signed.get(values.dtype)
        return values.view(signed)[indices].view(values.dtype) if signed is not None else values[indices]

    def copy_into(self, out, x):
        out.copy_(x)

    def to_native(self, x):
        return x

    def wrap_like(self, original, result):
        return result


class CupyBackend:
    name = "cupy"

    def __init__(self, cupy):
        self.cupy = cupy
        self.array_type = cupy.ndarray

    def dtype_name(self, x):
        return x.dtype.name

    def dtype(self, name):
        return self.cupy.dtype(name)

    def itemsize(self, x):
        return x.dtype.itemsize

    def device_problem(self, x):
        current = self.cupy.cuda.Device().id
        if x.device.id != current:
            return (f"it is on GPU {x.device.id} but the current device is {current}; "
                    f"call inside `with cupy.cuda.Device({x.device.id}):`")
        return None

    def same_device(self, a, b):
        return a.device.id == b.device.id

    def device_index(self, x):
        return x.device.id

    def stream(self, x):
        return self.cupy.cuda.get_current_stream().ptr

    def capturing(self):
        return self.cupy.cuda.get_current_stream().is_capturing()

    def numel(self, x):
        return x.size

    def ptr(self, x):
        return x.data.ptr

    def is_contiguous(self, x):
        return x.flags.c_contiguous

    def contiguous(self, x):
        return self.cupy.ascontiguousarray(x)

    def moveaxis(self, x, source, destination):
        return self.cupy.moveaxis(x, source, destination)

    def empty(self, shape, dtype_name, like):
        return self.cupy.empty(shape, dtype=dtype_name)  # on the current device, which is like's (checked)

    def astype(self, x, dtype_name):
        return x.astype(dtype_name, copy=False)

    def offsets_from_lengths(self, lengths):
        zero = self.cupy.zeros(1, dtype=self.cupy.int64)
        return self.cupy.concatenate([zero, self.cupy.cumsum(lengths)])

    def to_host_list(self, x):
        return x.tolist()

    def take_along(self, values, indices, dim):
        return self.cupy.take_along_axis(values, indices, dim)

    def take_flat(self, values, indices):
        return values[indices]

    def copy_into(self, out, x):
        out[...] = x

    def to_native(self, x):
        return x

    def wrap_like(self, original, result):
        return result


class DlpackBackend:
    """Foreign arrays (JAX, Numba, ...) through torch or cupy, no copies; results back via DLPack."""

    def __init__(self, inner):
        self.inner = inner
        self.name = f"dlpack/{inner.name}"

    def __getattr__(self, attribute):
        return getattr(self.inner, attribute)

    def to_native(self, x):
        if self.inner.name == "torch":
            torch = self.inner.torch
            if hasattr(x, "__dlpack__"):
                return torch.from_dlpack(x)
            return torch.as_tensor(x, device="cuda")  # __cuda_array_interface__
        cupy = self.inner.cupy
        return cupy.from_dlpack(x) if hasattr(x, "__dlpack__") else cupy.asarray(x)

    def wrap_like(self, original, result):
        if result is None:
            return None
        module = type(original).__module__.split(".")[0]
        if module in ("jax", "jaxlib"):
            import jax.numpy as jnp

            return jnp.from_dlpack(result)
        if module == "numba":
            from numba import cuda

            return cuda.as_cuda_array(result)
        return result


_torch_backend = None
_cupy_backend = None
_searched = False


def _find_backends():
    global _torch_backend, _cupy_backend, _searched
    if not _searched:
        torch = _optional("torch")
        if torch is not None:
            _torch_backend = TorchBackend(torch)
        cupy = _optional("cupy")
        if cupy is not None:
            _cupy_backend = CupyBackend(cupy)
        _searched = True


def backend_of(x, function, argument):
    """The backend for array x, or a TypeError naming the function and argument."""
    _find_backends()
    if _torch_backend is not None and isinstance(x, _torch_backend.array_type):
        return _torch_backend
    if _cupy_backend is not None and isinstance(x, _cupy_backend.array_type):
        return _cupy_backend
    if hasattr(x, "__dlpack__") or hasattr(x, "__cuda_array_interface__"):
        inner = _torch_backend or _cupy_backend
        if inner is not None:
            return DlpackBackend(inner)
        raise TypeError(f"tilesort.{function}: `{argument}` is a {type(x).__name__}; tilesort reads such arrays "
                        f"through torch or cupy, and neither is installed (pip install torch, or cupy-cuda13x)")
    raise TypeError(f"tilesort.{function}: `{argument}` must be a CUDA array (torch.Tensor, cupy.ndarray, or an "
                    f"array with __dlpack__ / __cuda_array_interface__), not {type(x).__name__} (sort, argsort and "
                    f"sort_pairs also take numpy arrays and CPU tensors)")
