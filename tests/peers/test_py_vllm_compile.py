"""Host test: every py_vllm op route compiles vLLM's kernel for sm_90 with the exact arguments the
op passes (no GPU, no torch). Triton's JIT runs with a driver that reports an sm_90 target and
`kernel[grid](...)` compiles without launching (warmup); tensors are stand-ins with the bridge's
shapes and strides. Catches a renamed kernel argument, a constexpr of the wrong kind, a missing
heuristic input, a pointer Triton will not take. argv[1] = repo root; the source is
$LS_PEERS_SRC/vllm-0.33.0. Exit 77 without triton 3.6 or the source."""
import itertools
import os
import sys
import types

root = sys.argv[1]
src = os.path.join(os.environ.get("LS_PEERS_SRC", os.path.join(root, ".peers", "src")), "vllm-0.33.0")
try:
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.runtime import driver
    from triton.runtime.jit import KernelInterface
except ImportError:
    print("skip: no triton")
    sys.exit(77)
if not triton.__version__.startswith("3.6."):
    print(f"skip: triton {triton.__version__}, the pinned kernels need 3.6.x")
    sys.exit(77)
if not os.path.isdir(src):
    print(f"skip: {src} missing (scripts/peers.sh fetch)")
    sys.exit(77)


class DType:
    def __init__(self, name, size):
        self.name, self.itemsize = name, size

    def __str__(self):
        return "torch." + self.name

    __repr__ = __str__


f32, bf16, i32 = DType("float32", 4), DType("bfloat16", 2), DType("int32", 4)
_next = itertools.count(1)


class T:
    """A tensor stand-in: what py_vllm and Triton read (data_ptr, dtype, strides)."""

    def __init__(self, shape, dtype, stride=None, ptr=None):
        self.shape, self.dtype = tuple(shape), dtype
        if stride is None:
            stride, acc = [], 1
            for n in reversed(self.shape):
                stride.insert(0, acc)
                acc *= n
        self._stride = tuple(stride)
        self.ptr = ptr if ptr is not None else next(_next) << 32

    def data_ptr(self):
        return self.ptr

    def element_size(self):
        return self.dtype.itemsize

    def stride(self, i=None):
        return self._stride if i is None else self._stride[i]

    def is_contiguous(self):
        return self._stride == T(self.shape, self.dtype).stride()

    device = "cuda"

    def copy_(self, other):  # the .contiguous() copy into a persistent buffer
        return self

    def __getitem__(self, key):  # idx[:, 0]
        return T(self.shape[:1], self.dtype, self._stride[:1], self.ptr)


sys.path.insert(0, os.path.join(root, "peers"))
import torch_stand_in  # noqa: E402

torch = torch_stand_in.install()
torch.float32, torch.bfloat16, torch.int32 = f32, bf16, i32
torch.empty = lambda shape, dtype, device: T(shape, dtype)
torch.arange = lambda a, b, step, dtype, device: T((len(range(a, b, step)),), dtype)
torch.full = lambda shape, v, dtype, device: T(shape, dtype)
torch.cuda = types.SimpleNamespace(is_current_stream_capturing=lambda: False, get_device_name=lambda i=0: "NVIDIA H200",
                                   get_device_capability=lambda i=None: (9, 0))


class Sm90:
    def get_current_target(self):
        return GPUTarget("cuda", 90, 32)

    def get_current_device(self):
        return 0

    def get_current_stream(self, device=None):
        return 0


driver.set_active(Sm90())
compiled = []

def _name(f):
    while not isinstance(getattr(f, "__name__", None), str) or hasattr(f, "fn"):
        if not hasattr(f, "fn"):
            break
        f = f.fn
    return f.__name__


# jit functions and their @triton.heuristics wrappers alike: compile, never launch
KernelInterface.__getitem__ = lambda self, grid: (
    lambda *a, **k: compiled.append((_name(self), self.run(*a, grid=grid, warmup=True, **k))))

sys.path.insert(0, os.path.join(root, "peers", "vllm_py"))
import py_vllm  # noqa: E402

inst = py_vllm.Instance(src, "cuda", device=lambda: (9, 0, "NVIDIA H200", 132))
fails = 0
SLOTS = 41


def delta(kda, B, Tn, H, HV, K, V, packed):
    row = 2 * H * K + HV * V
    if packed:
        base = next(_next) << 32
        q = T((B, Tn, H, K), bf16, (Tn * row, row, K, 1), base)
        k = T((B, Tn, H, K), bf16, (Tn * row, row, K, 1), base + H * K * 2)
        v = T((B, Tn, HV, V), bf16, (Tn * row, row, V, 1), base + 2 * H * K * 2)
        st = row
    else:
        q, k, v, st = T((B, Tn, H, K), bf16), T((B, Tn, H, K), bf16), T((B, Tn, HV, V), bf16), 0
    item = HV * K * V
    return types.SimpleNamespace(
        op="kda" if kda else "gdn", batch=B, tokens=Tn, heads_qk=H, heads_v=HV, dk=K, dv=V,
        disable_state_update=int(Tn > 1), scale=K ** -0.5, state_dtype="fp32", q=q, k=k, v=v,
        a=T((B, Tn, HV, K) if kda else (B, Tn, HV), bf16), b=T((B, Tn, HV), bf16), A_log=T((HV,), f32),
        dt_bias=T((HV * K,), f32) if kda else T((HV,), bf16), o=T((B, Tn, HV, V), bf16),
        state=T((SLOTS, HV, V, K), f32), state_stride_slot=item, slot_idx=T((B,), i32),
        inter=T((SLOTS, Tn, HV, V, K), f32) if Tn > 1 else None,
        inter_stride_slot=item * Tn if Tn > 1 else 0, slots=SLOTS, state_layout="vk",
        q_stride_tok=st, k_stride_tok=st, v_stride_tok=st)


def run(op, p, want):
    """The first call of a case compiles vLLM's kernel (and, where the op needs index rows, our
    index kernel once); a second call with the same slot list launches vLLM's kernel alone:
    the timed calls hold no work of ours. The explain text names vLLM's kernel only."""
    global fails
    calls = []
    for _ in range(2):
        del compiled[:]
        try:
            rc = inst.__getattribute__(op)(p, {"gdn.decode": "auto"})
        except Exception as e:  # a compile error names the argument
            print("FAIL", op, want, type(e).__name__, str(e).splitlines()[-1] if str(e) else "")
            fails += 1
            return
        calls.append((rc, [n for n, _ in compiled], all(k is not None for _, k in compiled)))
    first, second = calls
    ok = first[0] == 0 and first[1] in ([want], ["ls_vllm_index", want]) and first[2]
    ok = ok and second[0] == 0 and second[1] == [want]
    text = py_vllm._explain(inst, op, p, {"gdn.decode": "auto"})
    ok = ok and text.startswith(want) and "ls_vllm_index" not in text
    print("ok  " if ok else "FAIL", op, "B", p.batch, "T", p.tokens, "->", first[1], second[1], "|", text)
    fails += 0 if ok else 1


for Tn in (1, 4):
    run("gdn", delta(False, 8, Tn, 16, 32, 128, 128, True),
        "fused_recurrent_gated_delta_rule_packed_decode_kernel" if Tn == 1
        else "fused_sigmoid_gating_delta_rule_update_kernel")
    run("kda", delta(True, 8, Tn, 32, 32, 128, 128, True),
        "fused_recurrent_kda_packed_decode_kernel" if Tn == 1 else "fused_recurrent_kda_fwd_kernel")
run("gdn", delta(False, 8, 1, 16, 32, 128, 128, False), "fused_sigmoid_gating_delta_rule_update_kernel")
C, W = 8192, 4
run("conv_update", types.SimpleNamespace(
    op="conv_update", batch=8, tokens=1, channels=C, width=W, silu=1, disable_state_update=0,
    weight_dtype="bf16", state_dtype="bf16", x=T((8, 1, C), bf16), x_stride_b=C, x_stride_t=C,
    x_stride_c=1, y=T((8, 1, C), bf16), y_stride_b=C, y_stride_t=C, y_stride_c=1,
    weight=T((C, W), bf16), bias=T((C,), bf16), state=T((SLOTS, C, W - 1), bf16),
    state_stride_slot=C * (W - 1), state_stride_c=W - 1, state_stride_w=1, slot_idx=T((8,), i32),
    inter=None, slots=SLOTS), "_causal_conv1d_update_kernel")
nh, hd, ds, ng = 128, 64, 128, 8
for Tn in (1, 4):
    item = nh * hd * ds
    run("ssu", types.SimpleNamespace(
        op="ssu", batch=8, tokens=Tn, nheads=nh, head_dim=hd, dstate=ds, ngroups=ng,
        disable_state_update=int(Tn > 1), state_dtype="fp32", x=T((8, Tn, nh, hd), bf16),
        dt=T((8, Tn, nh), bf16), Bm=T((8, Tn, ng, ds), bf16), Cm=T((8, Tn, ng, ds), bf16), z=None,
        A=T((nh,), f32), dt_bias=T((nh,), bf16), D=T((nh,), bf16), y=T((8, Tn, nh, hd), bf16),
        state=T((SLOTS, nh, hd, ds), f32), state_stride_slot=item, slot_idx=T((8,), i32),
        inter=T((SLOTS, Tn, nh, hd, ds), f32) if Tn > 1 else None,
        inter_stride_slot=item * Tn if Tn > 1 else 0, slots=SLOTS), "_selective_scan_update_kernel")

# refusals: the op returns 2 and says why
for op, p, text in (("gdn", dict(state_layout="kv"), "vk"),
                    ("gdn", dict(disable_state_update=0, tokens=4), "disable_state_update=1")):
    q = delta(False, 8, 4 if p.get("tokens") == 4 else 1, 16, 32, 128, 128, True)
    for k2, v2 in p.items():
        setattr(q, k2, v2)
    rc = py_vllm._op(inst, op)(q, {"gdn.decode": "auto"})
    why = py_vllm._explain(inst, op, q, {"gdn.decode": "auto"})
    ok = rc == 2 and why.startswith("refused:") and text in why
    print("ok  " if ok else "FAIL", op, "refuses", p, "->", why)
    fails += 0 if ok else 1

print("fails:", fails)
sys.exit(1 if fails else 0)
