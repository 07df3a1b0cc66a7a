"""
fake_torch.py — a data-less stand-in for the few torch calls SGLang's kernel wrappers and
py_sglang's layout code make: tensors are (shape, strides, byte address, dtype) and the view ops
follow torch's stride rules (view, expand, split, indexing with None/slices, transpose,
unsqueeze, as_strided). Nothing is computed; copy_ is a no-op.

It exists so that a wrapper's Triton launch can be captured on a machine without a GPU or torch
(jit_spec.py: the JIT specialisation SGLang's own call produces, sm_90) and so that the host
tests can run py_sglang's layout code. `install()` puts it in sys.modules["torch"].
"""
import contextlib
import math
import sys
import types


class dtype:
    def __init__(self, name, size):
        self.name, self.itemsize = name, size

    def __repr__(self):
        return f"torch.{self.name}"

    __str__ = __repr__


# one class per dtype: triton's native_specialize_impl caches the pointer type per dtype class
def _dt(name, size):
    return type(f"dtype_{name}", (dtype,), {})(name, size)


bfloat16, float16, float32, int32, int64, uint8, uint64 = (
    _dt("bfloat16", 2), _dt("float16", 2), _dt("float32", 4), _dt("int32", 4), _dt("int64", 8), _dt("uint8", 1),
    _dt("uint64", 8))
__version__ = "2.11.0"
version = types.SimpleNamespace(hip=None, cuda="12.8")


class device:
    def __init__(self, kind="cuda", index=0):
        self.type, self.index = kind, index

    def __repr__(self):
        return f"{self.type}:{self.index}"

    def __eq__(self, other):
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))


class _Cuda:
    capability = (9, 0)
    sms = 132

    def is_available(self):
        return True

    def is_initialized(self):
        return True

    def get_device_capability(self, *_a):
        return self.capability

    def get_device_properties(self, *_a):
        return types.SimpleNamespace(multi_processor_count=self.sms)

    def device(self, *_a):
        return contextlib.nullcontext()

    def get_device_name(self, *_a):
        return "NVIDIA H200"


cuda = _Cuda()
amp = types.SimpleNamespace(custom_fwd=lambda *a, **k: (lambda f: f), custom_bwd=lambda *a, **k: (lambda f: f))
autograd = types.SimpleNamespace(Function=object)
_next_addr = [1 << 20]


def _contiguous(shape):
    st, acc = [], 1
    for n in reversed(shape):
        st.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(st))


class Tensor:
    def __init__(self, shape, stride, addr, dt, dev=None):
        self.shape, self._stride, self._addr, self.dtype = tuple(shape), tuple(stride), addr, dt
        self.device = dev or device()

    # -- queries
    def stride(self, i=None):
        return self._stride if i is None else self._stride[i]

    def size(self, i=None):
        return self.shape if i is None else self.shape[i]

    def dim(self):
        return len(self.shape)

    ndim = property(dim)

    def data_ptr(self):
        return self._addr

    def element_size(self):
        return self.dtype.itemsize

    def __len__(self):
        return self.shape[0]

    def numel(self):
        return math.prod(self.shape)

    def storage_offset(self):
        return 0

    def is_contiguous(self):
        return all(s == c for s, c, n in zip(self._stride, _contiguous(self.shape), self.shape) if n > 1)

    def __repr__(self):
        return f"FakeTensor({self.shape}, stride={self._stride}, {self.dtype}, @{self._addr:#x})"

    # -- views
    def _at(self, shape, stride, off=0):
        return Tensor(shape, stride, self._addr + off * self.dtype.itemsize, self.dtype, self.device)

    is_cuda = True
    is_xpu = False

    def view(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], dtype):  # reinterpret the last dim
            dt = shape[0]
            n = self.shape[-1] * self.dtype.itemsize // dt.itemsize
            r = self.dtype.itemsize / dt.itemsize
            st = tuple(int(x * r) for x in self._stride[:-1]) + (1,)
            return Tensor(self.shape[:-1] + (n,), st, self._addr, dt, self.device)
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        shape = list(shape)
        if -1 in shape:
            i = shape.index(-1)
            shape[i] = self.numel() // math.prod(n for n in shape if n != -1)
        st = _view_strides(self.shape, self._stride, shape)
        if st is None:
            raise RuntimeError(f"view size is not compatible with input tensor's size and stride: "
                               f"{self.shape}/{self._stride} -> {tuple(shape)}")
        return self._at(shape, st)

    reshape = view

    def expand(self, *sizes):
        sizes = list(sizes)
        lead = len(sizes) - self.dim()
        shape, stride = [], []
        for i, n in enumerate(sizes):
            if i < lead:
                shape.append(n)
                stride.append(0)
                continue
            own, s = self.shape[i - lead], self._stride[i - lead]
            if n == -1 or n == own:
                shape.append(own)
                stride.append(s)
            elif own == 1:
                shape.append(n)
                stride.append(0)
            else:
                raise RuntimeError(f"expand {self.shape} -> {sizes}")
        return self._at(shape, stride)

    def unsqueeze(self, d):
        d = d if d >= 0 else d + self.dim() + 1
        shape, stride = list(self.shape), list(self._stride)
        new = stride[d] * shape[d] if d < self.dim() else 1
        shape.insert(d, 1)
        stride.insert(d, new)
        return self._at(shape, stride)

    def squeeze(self, d):
        shape, stride = list(self.shape), list(self._stride)
        if shape[d] == 1:
            del shape[d], stride[d]
        return self._at(shape, stride)

    def transpose(self, a, b):
        shape, stride = list(self.shape), list(self._stride)
        shape[a], shape[b] = shape[b], shape[a]
        stride[a], stride[b] = stride[b], stride[a]
        return self._at(shape, stride)

    def __getitem__(self, idx):
        if not isinstance(idx, tuple):
            idx = (idx,)
        if any(isinstance(x, Tensor) for x in idx):  # advanced indexing: a gathered new tensor
            shape = [x.shape[0] if isinstance(x, Tensor) else n for x, n in zip(idx, self.shape)]
            return empty(tuple(shape) + self.shape[len(idx):], dtype=self.dtype)
        if Ellipsis in idx:
            i = idx.index(Ellipsis)
            fill = self.dim() - sum(1 for x in idx if x is not None and x is not Ellipsis)
            idx = idx[:i] + (slice(None),) * fill + idx[i + 1:]
        shape, stride, off, d = [], [], 0, 0
        for x in idx:
            if x is None:
                shape.append(1)
                stride.append(1)  # a new size-1 dim (its stride never matters)
                continue
            if isinstance(x, int):
                off += (x if x >= 0 else x + self.shape[d]) * self._stride[d]
                d += 1
                continue
            start, stop, step = x.indices(self.shape[d])
            shape.append(max(0, (stop - start + step - 1) // step))
            stride.append(self._stride[d] * step)
            off += start * self._stride[d]
            d += 1
        shape += self.shape[d:]
        stride += self._stride[d:]
        return self._at(shape, stride, off)

    def as_strided(self, size, stride, storage_offset=0):
        return self._at(size, stride, storage_offset)

    def to(self, dtype=None, **_kw):
        if dtype is None or dtype is self.dtype:
            return self
        return empty(self.shape, dtype=dtype)

    def copy_(self, _src):
        return self

    def __setitem__(self, _idx, _value):  # a write: nothing to record
        pass

    def index_fill_(self, *_a):
        return self

    def contiguous(self):
        return self if self.is_contiguous() else empty(self.shape, dtype=self.dtype)

    def new_empty(self, *shape, **_kw):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return empty(shape, dtype=self.dtype)


LongTensor = Tensor
long = int64


def _view_strides(shape, stride, new):
    """torch's computeStride: strides of `new` viewing (shape, stride), or None."""
    if math.prod(shape) == 0:
        return _contiguous(new)
    out = [0] * len(new)
    view_d = len(new) - 1
    chunk_base = stride[-1] if stride else 1
    tensor_numel, view_numel = 1, 1
    for d in range(len(shape) - 1, -1, -1):
        tensor_numel *= shape[d]
        if d == 0 or (shape[d - 1] != 1 and stride[d - 1] != tensor_numel * chunk_base):
            while view_d >= 0 and (view_numel < tensor_numel or new[view_d] == 1):
                out[view_d] = view_numel * chunk_base
                view_numel *= new[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if d > 0:
                chunk_base = stride[d - 1]
                tensor_numel, view_numel = 1, 1
    return tuple(out) if view_d == -1 else None


def empty(*shape, dtype=float32, device=None, **_kw):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    addr = _next_addr[0]
    nbytes = math.prod(shape) * dtype.itemsize
    _next_addr[0] += (nbytes + 255) // 256 * 256 + 256
    return Tensor(shape, _contiguous(shape), addr, dtype)


zeros = empty


def as_tensor(obj, device=None):
    cai = obj.__cuda_array_interface__
    return Tensor(cai["shape"], _contiguous(cai["shape"]), cai["data"][0], uint8)


def tensor(data, dtype=int64, device=None):
    return empty((len(data),), dtype=dtype)


def empty_like(x, dtype=None, device=None, **_kw):
    """torch's preserve_format: dense strides in the order of x's strides (x's own when dense)."""
    t = empty(x.shape, dtype=dtype or x.dtype)
    acc = 1
    for d in sorted((d for d in range(x.dim()) if x.shape[d] > 1), key=x.stride):
        if x.stride(d) != acc:
            break
        acc *= x.shape[d]
    else:  # non-overlapping and dense: x's own strides
        return t._at(x.shape, x.stride())
    order = sorted(range(x.dim()), key=lambda d: (-x.stride(d), -d))
    st, acc = [0] * x.dim(), 1
    for d in reversed(order):
        st[d] = acc
        acc *= max(x.shape[d], 1)
    return t._at(x.shape, st)


def as_strided(x, size, stride, storage_offset=0):
    return x._at(size, stride, storage_offset - x.storage_offset())


def split(t, sizes, dim=0):
    out, start = [], 0
    for n in sizes:
        idx = (slice(None),) * (dim if dim >= 0 else t.dim() + dim) + (slice(start, start + n),)
        out.append(t[idx])
        start += n
    return tuple(out)


def arange(start, end=None, step=1, dtype=int64, device=None):
    if end is None:
        start, end = 0, start
    return empty((max(0, (end - start + step - 1) // step),), dtype=dtype)


def randint(*_a, **_kw):
    return empty((1,), dtype=int64)


def get_device_module(_dev=None):
    return cuda


class _Driver:
    """triton's active driver as an sm_90 CUDA device (fla/utils.py asks it at import)."""

    def __init__(self):
        from triton.backends.compiler import GPUTarget
        self.target = GPUTarget("cuda", 90, 32)
        self.utils = types.SimpleNamespace(get_device_properties=lambda *_a: {
            "multiprocessor_count": cuda.sms, "max_shared_mem": 232448})

    def get_current_target(self):
        return self.target

    def get_current_device(self):
        return 0

    def is_active(self):
        return True


def install():
    """sys.modules["torch"] = this module, and triton's active driver = an sm_90 CUDA device."""
    import triton
    mod = sys.modules[__name__]
    sys.modules["torch"] = mod
    triton.runtime.driver.set_active(_Driver())
    return mod
