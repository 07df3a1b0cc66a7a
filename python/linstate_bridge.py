"""linstate_bridge: the Python half of linstate's Python-impl bridge (python/pybridge.c).

The C half embeds CPython, imports this module, and for every Python impl instance calls
`load(module_file, source, runtime)`. The Instance it gets validates the module's dict (the
contract of docs/plugin-abi.md, "Python impls"), builds the `p` objects the ops receive (tensors
aliasing linstate's memory: torch on the cuda runtime, numpy on the host runtime) and makes
linstate's stream current around each op call. Nothing here copies tensor data.
"""
import ctypes
import hashlib
import importlib.util
import os
import re
import subprocess
import sys
import types

# ls_impl capability bits (ls_kernels.h) and the op order of enum ls_op.
CAPS = {"graph": 1, "kv": 2, "vk": 4, "qkv_strides": 8, "null_slot0": 16}
OPS = ("conv_update", "gdn", "kda", "ssu", "state_copy", "state_accept", "state_zero", "conv_delta")
NAME_RE = re.compile(r"^[a-z0-9_-]+$")
KNOB_RE = re.compile(r"^[a-z0-9_.]+$")

_modules = {}  # module file -> imported module (linstate_impl is called once per instance)


def error_line(exc):
    """One line: the exception's type and message (its last line when the message has several)."""
    msg = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__


def _import_file(path):
    path = os.path.abspath(path)
    if path in _modules:
        return _modules[path]
    init = os.path.join(path, "__init__.py") if os.path.isdir(path) else path
    if not os.path.isfile(init):
        raise ImportError(f"{path}: no such module file (a .py file or a package folder)")
    folder = os.path.dirname(path)
    if folder not in sys.path:  # a module may import its siblings
        sys.path.insert(0, folder)
    stem = os.path.splitext(os.path.basename(path))[0]
    name = "linstate_pyimpl_" + re.sub(r"\W", "_", stem)
    spec = importlib.util.spec_from_file_location(
        name, init, submodule_search_locations=[path] if init != path else None)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    if not callable(getattr(mod, "linstate_impl", None)):
        raise ImportError(f"{path} defines no linstate_impl(source, runtime)")
    _modules[path] = mod
    return mod


def _files_hash(files):
    """sha256 (16 hex digits) over the contents of files: each file's digest, sorted, so the same
    files in two trees give the same hash whatever their paths or order."""
    digests = []
    for f in files:
        with open(f, "rb") as fh:
            digests.append(hashlib.sha256(fh.read()).hexdigest())
    return hashlib.sha256("\n".join(sorted(digests)).encode()).hexdigest()[:16] if digests else ""


def _git_describe(path):
    """`git describe --always --dirty` of the checkout that path is (or whose python/ folder it
    is: SGLang's layout); "" for a folder that merely sits inside another checkout (an ignored
    .peers/src, an untracked copy under results/): that checkout's describe would name other code."""
    if not path or not os.path.isdir(path):
        return ""
    try:
        top = subprocess.run(["git", "-C", path, "rev-parse", "--show-toplevel"], capture_output=True,
                             text=True, timeout=30)
        here = os.path.realpath(path)
        ok = (here,) + ((os.path.dirname(here),) if os.path.basename(here) == "python" else ())
        if top.returncode != 0 or os.path.realpath(top.stdout.strip()) not in ok:
            return ""
        r = subprocess.run(["git", "-C", path, "describe", "--always", "--dirty"], capture_output=True,
                           text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return ""
    return r.stdout.strip() if r.returncode == 0 else ""


class _Cai:
    """A raw device range as __cuda_array_interface__ (bytes), for torch.as_tensor."""

    def __init__(self, ptr, nbytes):
        self.__cuda_array_interface__ = {"shape": (nbytes,), "typestr": "|u1", "data": (ptr, False),
                                         "version": 3, "strides": None}


def _extent(shape, strides):
    if any(d == 0 for d in shape):
        return 0
    return 1 + sum((d - 1) * s for d, s in zip(shape, strides))


def _contig(shape):
    strides, acc = [], 1
    for d in reversed(shape):
        strides.append(acc)
        acc *= d
    return tuple(reversed(strides))


def _ptrs(p, f):
    """p.ptrs: the raw addresses of the pointer fields (the ones the builder replaced by tensors)."""
    p.ptrs = {k: v for k, v in f.items() if isinstance(v, int) and getattr(p, k) is not v}


class Instance:
    def __init__(self, module_file, source, runtime, git=True):
        if runtime not in ("cuda", "host"):
            raise ValueError(f"runtime '{runtime}' is not cuda or host")
        self.runtime = runtime
        self.module_file = os.path.abspath(module_file)
        mod = _import_file(module_file)
        d = mod.linstate_impl(source, runtime)
        if not isinstance(d, dict):
            raise TypeError(f"linstate_impl returned {type(d).__name__}, not a dict")
        self.name = d.get("name")
        if not isinstance(self.name, str) or not NAME_RE.match(self.name):
            raise ValueError(f"name {self.name!r} is not [a-z0-9_-]+")
        self.version = str(d.get("version", ""))
        self.caps = 0
        for c in d.get("caps", ()):
            if c not in CAPS:
                raise ValueError(f"cap {c!r} is not one of {', '.join(CAPS)}")
            self.caps |= CAPS[c]
        self.knobs = []
        for k in d.get("knobs", ()):
            if len(k) != 3 or not all(isinstance(s, str) for s in k) or not KNOB_RE.match(k[0]):
                raise ValueError(f"knob {k!r} is not (name [a-z0-9_.]+, 'a|b|c', help)")
            self.knobs.append(tuple(k))
        ops = d.get("ops", {})
        bad = [o for o in ops if o not in OPS]
        if bad or not all(callable(f) for f in ops.values()):
            raise ValueError(f"ops: {', '.join(bad) or 'a value'} is not an op ({', '.join(OPS)}) with a function")
        self.fns = [ops.get(o) for o in OPS]
        self.explain_fn = d.get("explain")
        self.layout_fn = d.get("layout")
        self.case_begin_fn = d.get("case_begin")
        if self.case_begin_fn is not None and not callable(self.case_begin_fn):
            raise ValueError("case_begin is not a function")
        src = d.get("source") or {}
        files = [os.path.abspath(f) for f in src.get("files", ())]
        init = os.path.join(self.module_file, "__init__.py") if os.path.isdir(self.module_file) else self.module_file
        self.source_hash = _files_hash(files + [init])
        self.source_git = src.get("git_describe") or (_git_describe(source) if git else "")
        self.source_path = source or src.get("path") or ""
        self._values = [k[1].split("|") for k in self.knobs]
        self._tunings = {}
        self._streams = {}
        self.torch = None
        if runtime == "cuda":
            import torch  # the cuda runtime's tensors are torch tensors
            self.torch = torch
        else:
            import numpy
            self.np = numpy

    # ---------------------------------------------------------------- called from C

    def case_begin(self):
        if self.case_begin_fn:
            self.case_begin_fn()

    def layout(self, op):
        return str(self.layout_fn(op)) if self.layout_fn else ""

    def tuning(self, idx):
        """The knob dict of a tuning (tuple of value indices), one object per distinct tuning."""
        t = self._tunings.get(idx)
        if t is None:
            t = {k[0]: vals[i] for k, vals, i in zip(self.knobs, self._values, idx)}
            self._tunings[idx] = t
        return t

    def explain(self, op, p, t):
        return str(self.explain_fn(OPS[op], p, t)) if self.explain_fn else ""

    def call(self, op, p, t, stream):
        f = self.fns[op]
        if self.torch is None:
            return f(p, t)
        with self.torch.cuda.stream(self._stream(stream)):
            return f(p, t)

    def _stream(self, ptr):
        s = self._streams.get(ptr)
        if s is None:
            cuda = self.torch.cuda
            s = cuda.ExternalStream(ptr) if ptr else cuda.default_stream()
            self._streams[ptr] = s
        return s

    # ---------------------------------------------------------------- tensors

    def _tensor(self, ptr, dtype, shape, strides=None):
        """A view of linstate's memory at ptr (None for NULL) with the logical shape and the
        element strides given (contiguous when None)."""
        if not ptr:
            return None
        shape = tuple(int(d) for d in shape)
        strides = _contig(shape) if strides is None else tuple(int(s) for s in strides)
        n = _extent(shape, strides)
        if self.torch is not None:
            torch = self.torch
            dt = {"fp32": torch.float32, "bf16": torch.bfloat16, "i32": torch.int32, "u8": torch.uint8}[dtype]
            size = {"fp32": 4, "bf16": 2, "i32": 4, "u8": 1}[dtype]
            base = torch.as_tensor(_Cai(ptr, max(n, 1) * size)).view(dt)  # on the pointer's device
            return base.as_strided(shape, strides)
        np = self.np
        dt = {"fp32": np.float32, "bf16": np.uint16, "i32": np.int32, "u8": np.uint8}[dtype]
        size = np.dtype(dt).itemsize
        raw = (ctypes.c_uint8 * (max(n, 1) * size)).from_address(ptr)
        base = np.frombuffer(raw, dtype=dt)
        return np.lib.stride_tricks.as_strided(base, shape, tuple(s * size for s in strides))

    def _slots(self, f, idx):
        """Slots of a state view: p.slots, or max(slot_idx) + 1 read once (docs/plugin-abi.md)."""
        if f["slots"] > 0 or idx is None:
            return max(f["slots"], 1)
        if self.torch is not None and self.torch.cuda.is_current_stream_capturing():
            raise RuntimeError("slots not given (0) and the indices cannot be read while capturing")
        return max(int(idx.max()) + 1, 1)

    def params(self, op, f):
        """The `p` object of one params struct (f: its fields as the C side read them)."""
        p = types.SimpleNamespace(op=OPS[op], **{k: v for k, v in f.items() if not isinstance(v, dict)})
        build = {0: self._conv, 1: self._delta, 2: self._delta, 3: self._ssu, 7: self._conv_delta}.get(op, self._state)
        build(p, f, op)
        _ptrs(p, f)
        return p

    def _conv(self, p, f, op=0):
        B, T, C, W = f["batch"], f["tokens"], f["channels"], f["width"]
        T_ = self._tensor
        p.x = T_(f["x"], "bf16", (B, T, C), (f["x_stride_b"], f["x_stride_t"], f["x_stride_c"]))
        p.y = T_(f["y"], "bf16", (B, T, C), (f["y_stride_b"], f["y_stride_t"], f["y_stride_c"]))
        p.weight = T_(f["weight"], f["weight_dtype"], (C, W))
        p.bias = T_(f["bias"], f["weight_dtype"], (C,))
        p.slot_idx = T_(f["slot_idx"], "i32", (B,))
        S = self._slots(f, p.slot_idx)
        p.state = T_(f["state"], f["state_dtype"], (S, C, W - 1),
                     (f["state_stride_slot"], f["state_stride_c"], f["state_stride_w"]))
        p.inter = T_(f["inter"], f["state_dtype"], (S, T, C, W - 1),
                     (f["inter_stride_slot"], f["inter_stride_t"], f["inter_stride_c"], f["inter_stride_w"]))

    def _delta(self, p, f, op):
        B, T, H, HV, K, V = f["batch"], f["tokens"], f["heads_qk"], f["heads_v"], f["dk"], f["dv"]
        T_, sd = self._tensor, f["state_dtype"]
        qt, kt, vt = f["q_stride_tok"] or H * K, f["k_stride_tok"] or H * K, f["v_stride_tok"] or HV * V
        p.q = T_(f["q"], "bf16", (B, T, H, K), (T * qt, qt, K, 1))
        p.k = T_(f["k"], "bf16", (B, T, H, K), (T * kt, kt, K, 1))
        p.v = T_(f["v"], "bf16", (B, T, HV, V), (T * vt, vt, V, 1))
        p.o = T_(f["o"], "bf16", (B, T, HV, V))
        kda = op == 2
        p.a = T_(f["a"], "bf16", (B, T, HV, K) if kda else (B, T, HV))
        p.b = T_(f["b"], "bf16", (B, T, HV))
        p.A_log = T_(f["A_log"], "fp32", (HV,))
        p.dt_bias = T_(f["dt_bias"], "fp32", (HV * K,)) if kda else T_(f["dt_bias"], "bf16", (HV,))
        p.slot_idx = T_(f["slot_idx"], "i32", (B,))
        S = self._slots(f, p.slot_idx)
        head = (V, K) if f["state_layout"] == "vk" else (K, V)
        item = HV * K * V
        p.state = T_(f["state"], sd, (S, HV) + head, (f["state_stride_slot"],) + _contig((HV,) + head))
        p.inter = T_(f["inter"], sd, (S, T, HV) + head, (f["inter_stride_slot"], item) + _contig((HV,) + head))

    def _ssu(self, p, f, op=3):
        B, T, nh, hd, ds, ng = f["batch"], f["tokens"], f["nheads"], f["head_dim"], f["dstate"], f["ngroups"]
        T_, sd = self._tensor, f["state_dtype"]
        for n in ("x", "z", "y"):
            setattr(p, n, T_(f[n], "bf16", (B, T, nh, hd)))
        p.dt = T_(f["dt"], "bf16", (B, T, nh))
        p.Bm = T_(f["Bm"], "bf16", (B, T, ng, ds))
        p.Cm = T_(f["Cm"], "bf16", (B, T, ng, ds))
        p.A = T_(f["A"], "fp32", (nh,))
        p.dt_bias = T_(f["dt_bias"], "bf16", (nh,))
        p.D = T_(f["D"], "bf16", (nh,))
        p.slot_idx = T_(f["slot_idx"], "i32", (B,))
        S = self._slots(f, p.slot_idx)
        item = nh * hd * ds
        p.state = T_(f["state"], sd, (S, nh, hd, ds), (f["state_stride_slot"],) + _contig((nh, hd, ds)))
        p.inter = T_(f["inter"], sd, (S, T, nh, hd, ds), (f["inter_stride_slot"], item) + _contig((nh, hd, ds)))

    def _state(self, p, f, op):
        L, S, ST, n = f["layers"], f["slots"], f["spec_tokens"], f["count"]
        T_ = self._tensor
        p.buf = [(T_(m, "u8", (L, S, ib)), T_(s, "u8", (L, S, ST, ib)) if ST > 0 else None, ib)
                 for m, s, ib in f["buf"]]
        for k in ("src", "dst", "step"):
            setattr(p, k, T_(f[k], "i32", (n,)))

    def _conv_delta(self, p, f, op):
        p.conv = types.SimpleNamespace(op="conv_update", **f["conv"])
        self._conv(p.conv, f["conv"])
        _ptrs(p.conv, f["conv"])
        p.delta = types.SimpleNamespace(op="kda" if f["kda"] else "gdn", **f["delta"])
        self._delta(p.delta, f["delta"], 2 if f["kda"] else 1)
        _ptrs(p.delta, f["delta"])


class _ProcessState:
    """What a module's import or linstate_impl may change of the process that linstate relies on,
    put back after: the working directory (relative --out / --samples-out paths) and linstate's own
    LS_* environment variables (LS_GIT_COMMIT, read for every row's provenance after the impls
    load). A module's other environment settings (its own libraries' knobs) stay."""

    def __enter__(self):
        self.cwd = os.open(".", os.O_RDONLY)
        self.env = {k: v for k, v in os.environ.items() if k.startswith("LS_")}
        return self

    def __exit__(self, *exc):
        try:
            os.fchdir(self.cwd)
        finally:
            os.close(self.cwd)
        for k in [k for k in os.environ if k.startswith("LS_") and k not in self.env]:
            del os.environ[k]
        for k, v in self.env.items():
            if os.environ.get(k) != v:
                os.environ[k] = v
        return False


def load(module_file, source, runtime, git):
    """git: describe the source folder (a user's tree; not a pinned version's extracted wheel)."""
    with _ProcessState():
        return Instance(module_file, source, runtime, git)
