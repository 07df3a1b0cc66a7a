"""Host test: every py_vllm op route compiles vLLM's kernel for sm_90 with the exact arguments the
op passes (no GPU, no torch), and for each decode op the `launch=wrapper` route (vLLM's own
wrapper function, vllm_wrap.py) compiles the SAME specialization as the kernel route: kernel
name, compile hash (signature, constexprs, /16 attributes, num_warps, num_stages), constexprs and
grid, and the wrapper call allocates no tensor. That is the offline proof that both routes run one
binary with one launch; a launch choice of vllm_plan.py that drifts from vLLM's wrapper fails here.

Triton's JIT runs with a driver that reports an sm_90 target and `kernel[grid](...)` compiles
without launching (warmup); tensors are data-less stand-ins (peers/sglang_py/fake_torch.py:
shapes, strides, addresses, torch's view rules) with the bridge's shapes and strides. Catches a
renamed kernel argument, a constexpr of the wrong kind, a missing heuristic input, a pointer
Triton will not take. argv[1] = repo root; the source is $LS_PEERS_SRC/vllm-0.33.0. Exit 77
without triton 3.6 or the source."""
import contextlib
import os
import sys
import types

root = sys.argv[1]
src = os.path.join(os.environ.get("LS_PEERS_SRC", os.path.join(root, ".peers", "src")), "vllm-0.33.0")
try:
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.runtime import driver
    from triton.runtime.jit import JITFunction, KernelInterface
except ImportError:
    print("skip: no triton")
    sys.exit(77)
if not triton.__version__.startswith("3.6."):
    print(f"skip: triton {triton.__version__}, the pinned kernels need 3.6.x")
    sys.exit(77)
if not os.path.isdir(src):
    print(f"skip: {src} missing (scripts/peers.sh fetch)")
    sys.exit(77)

sys.path.insert(0, os.path.join(root, "peers", "sglang_py"))
import fake_torch  # noqa: E402  (a data-less torch: the wrappers' view ops and checks run on it)

torch = fake_torch.install()
f32, bf16, i32 = torch.float32, torch.bfloat16, torch.int32
torch.full = lambda shape, v, dtype, device: torch.empty(shape, dtype=dtype)
torch.cuda.is_current_stream_capturing = lambda: False
# selective_state_update enters torch.accelerator.device_index(x.device.index)
torch.accelerator = type("Accelerator", (), {"device_index": staticmethod(lambda i: contextlib.nullcontext())})
_addr = [1 << 32]
# every device allocation of the stand-in (torch.empty, zeros, empty_like, new_empty, a dtype
# change, a .contiguous() copy) goes through fake_torch.empty: counted around the wrapper calls
allocs = [0]
_empty = fake_torch.empty


def _counted_empty(*a, **k):
    allocs[0] += 1
    return _empty(*a, **k)


fake_torch.empty = fake_torch.zeros = torch.empty = _counted_empty


def T(shape, dtype, stride=None, ptr=None):
    """A tensor stand-in at its own 4 GiB-aligned address (or ptr) with the given strides."""
    if ptr is None:
        ptr = _addr[0] = _addr[0] + (1 << 32)
    return fake_torch.Tensor(shape, stride or fake_torch._contiguous(shape), ptr, dtype)


class Sm90:
    def get_current_target(self):
        return GPUTarget("cuda", 90, 32)

    def get_current_device(self):
        return 0

    def get_current_stream(self, device=None):
        return 0


driver.set_active(Sm90())
compiled = []  # (kernel name, CompiledKernel, grid, its JITFunction) of each launch


def _jit(f):
    """The JITFunction under @triton.heuristics wrappers."""
    while not isinstance(f, JITFunction):
        f = f.fn
    return f


# jit functions and their @triton.heuristics wrappers alike: compile, never launch
KernelInterface.__getitem__ = lambda self, grid: (
    lambda *a, **k: compiled.append((_jit(self).__name__, self.run(*a, grid=grid, warmup=True, **k), grid,
                                     _jit(self))))

sys.path.insert(0, os.path.join(root, "peers", "vllm_py"))
import py_vllm  # noqa: E402

inst = py_vllm.Instance(src, "cuda", device=lambda: (9, 0, "NVIDIA H200", 132))
fails = 0
SLOTS = 41
KERNEL = {"gdn.decode": "auto", "launch": "kernel"}
WRAPPER = {"gdn.decode": "auto", "launch": "wrapper"}


def delta(kda, B, Tn, H, HV, K, V, packed):
    row = 2 * H * K + HV * V
    if packed:
        base = T((B * Tn * row,), bf16).data_ptr()
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


def conv(B, C=8192, W=4):
    return types.SimpleNamespace(
        op="conv_update", batch=B, tokens=1, channels=C, width=W, silu=1, disable_state_update=0,
        weight_dtype="bf16", state_dtype="bf16", x=T((B, 1, C), bf16), x_stride_b=C, x_stride_t=C,
        x_stride_c=1, y=T((B, 1, C), bf16), y_stride_b=C, y_stride_t=C, y_stride_c=1,
        weight=T((C, W), bf16), bias=T((C,), bf16), state=T((SLOTS, C, W - 1), bf16),
        state_stride_slot=C * (W - 1), state_stride_c=W - 1, state_stride_w=1, slot_idx=T((B,), i32),
        inter=None, slots=SLOTS)


def ssu(B, Tn, nh=128, hd=64, ds=128, ng=8, sdt="fp32"):
    item = nh * hd * ds
    st = f32 if sdt == "fp32" else bf16
    return types.SimpleNamespace(
        op="ssu", batch=B, tokens=Tn, nheads=nh, head_dim=hd, dstate=ds, ngroups=ng,
        disable_state_update=int(Tn > 1), state_dtype=sdt, x=T((B, Tn, nh, hd), bf16),
        dt=T((B, Tn, nh), bf16), Bm=T((B, Tn, ng, ds), bf16), Cm=T((B, Tn, ng, ds), bf16), z=None,
        A=T((nh,), f32), dt_bias=T((nh,), bf16), D=T((nh,), bf16), y=T((B, Tn, nh, hd), bf16),
        state=T((SLOTS, nh, hd, ds), st), state_stride_slot=item, slot_idx=T((B,), i32),
        inter=T((SLOTS, Tn, nh, hd, ds), st) if Tn > 1 else None,
        inter_stride_slot=item * Tn if Tn > 1 else 0, slots=SLOTS)


def run(op, p, want):
    """The first call of a case compiles vLLM's kernel (and, where the op needs index rows, our
    index kernel once); a second call with the same slot list launches vLLM's kernel alone:
    the timed calls hold no work of ours. The explain text names vLLM's kernel only."""
    global fails
    calls = []
    for _ in range(2):
        del compiled[:]
        try:
            rc = getattr(inst, op)(p, KERNEL)
        except Exception as e:  # a compile error names the argument
            print("FAIL", op, want, type(e).__name__, str(e).splitlines()[-1] if str(e) else "")
            fails += 1
            return
        calls.append((rc, [c[0] for c in compiled], all(c[1] is not None for c in compiled)))
    first, second = calls
    ok = first[0] == 0 and first[1] in ([want], ["ls_vllm_index", want]) and first[2]
    ok = ok and second[0] == 0 and second[1] == [want]
    text = py_vllm._explain(inst, op, p, KERNEL)
    ok = ok and text.startswith(want) and "ls_vllm_index" not in text
    print("ok  " if ok else "FAIL", op, "B", p.batch, "T", p.tokens, "->", first[1], second[1], "|", text)
    fails += 0 if ok else 1


def launches(op, p, tuning):
    """What one call of the op compiles and launches, vLLM's kernels only (our index kernel,
    built on a case's first call, is not vLLM's launch): name, compile hash, num_warps,
    num_stages, constexprs by name, signature, /16 attributes, grid."""
    del compiled[:]
    rc = getattr(inst, op)(p, tuning)
    out = []
    for name, k, grid, fn in compiled:
        if name == "ls_vllm_index":
            continue
        consts = {fn.arg_names[i[0]]: v for i, v in k.src.constants.items()}
        if callable(grid):  # the wrappers' grid(META) reads launch constexprs
            grid = grid(consts)
        attrs = {fn.arg_names[i[0]]: str(v) for i, v in k.src.attrs.items()}
        out.append(dict(name=name, hash=k.hash, num_warps=k.metadata.num_warps,
                        num_stages=k.metadata.num_stages, constexprs=consts, signature=dict(k.src.signature),
                        attrs=attrs, grid=tuple(grid)))
    return rc, out


def differences(a, b):
    """Each field (each argument of the dict fields) where two launches differ, by name."""
    out = []
    for f in a:
        if f == "hash" or a[f] == b[f]:
            continue
        if isinstance(a[f], dict):
            out += [f"{f} {n}: kernel {a[f].get(n)!r} / wrapper {b[f].get(n)!r}"
                    for n in sorted(set(a[f]) | set(b[f])) if a[f].get(n) != b[f].get(n)]
        else:
            out.append(f"{f}: kernel {a[f]!r} / wrapper {b[f]!r}")
    return out


def fidelity(op, p, want):
    """The kernel route and vLLM's own wrapper compile and launch the same specialization; the
    wrapper call allocates nothing (its output is linstate's; the kernel route's first call of
    the case built the index rows both routes read)."""
    global fails
    inst.case_begin()
    try:
        rk, k = launches(op, p, KERNEL)
        allocs[0] = 0
        rw, w = launches(op, p, WRAPPER)
        rw2, w2 = launches(op, p, WRAPPER)  # a timed call: the views made on the first are reused
    except Exception as e:
        print("FAIL", op, "B", p.batch, "wrapper vs kernel:", py_vllm.vllm_wrap.__name__, type(e).__name__,
              str(e).splitlines()[-1] if str(e) else "")
        fails += 1
        return
    diff = [d for a, b in zip(k, w) for d in differences(a, b)]
    if allocs[0]:
        diff.append(f"the wrapper calls allocated {allocs[0]} tensor(s)")
    if (rw2, w2) != (rw, w):
        diff.append("a second wrapper call launched something else")
    text = py_vllm._explain(inst, op, p, WRAPPER)
    wrapper = py_vllm.vllm_wrap.WRAPPERS[op][1]
    ok = (rk == rw == 0 and len(k) == len(w) == 1 and k[0]["name"] == want and k[0]["hash"] == w[0]["hash"]
          and not diff and text.startswith(f"{wrapper} (vLLM's wrapper) -> {want}"))
    print("ok  " if ok else "FAIL", op, "B", p.batch, "wrapper", wrapper, "==" if ok else "vs", "kernel route:",
          (f"{want} grid {k[0]['grid']} {k[0]['num_warps']} warps, {k[0]['num_stages']} stages, hash "
           f"{k[0]['hash'][:12]}") if len(k) == 1 and not diff else "", *diff, "|", text)
    fails += 0 if ok else 1


for Tn in (1, 4):
    run("gdn", delta(False, 8, Tn, 16, 32, 128, 128, True),
        "fused_recurrent_gated_delta_rule_packed_decode_kernel" if Tn == 1
        else "fused_sigmoid_gating_delta_rule_update_kernel")
    run("kda", delta(True, 8, Tn, 32, 32, 128, 128, True),
        "fused_recurrent_kda_packed_decode_kernel" if Tn == 1 else "fused_recurrent_kda_fwd_kernel")
run("gdn", delta(False, 8, 1, 16, 32, 128, 128, False), "fused_sigmoid_gating_delta_rule_update_kernel")
run("conv_update", conv(8), "_causal_conv1d_update_kernel")
for Tn in (1, 4):
    run("ssu", ssu(8, Tn), "_selective_scan_update_kernel")

# decode: vLLM's own wrapper compiles what the kernel route compiles (B = 1 specialises B where
# it is an argument; qwen3-next tp 2, kimi-linear tp 2, nemotron-h-8b tp 2 shapes too)
for B in (1, 128):
    fidelity("gdn", delta(False, B, 1, 16, 32, 128, 128, True), "fused_recurrent_gated_delta_rule_packed_decode_kernel")
    fidelity("gdn", delta(False, B, 1, 8, 16, 128, 128, True), "fused_recurrent_gated_delta_rule_packed_decode_kernel")
    fidelity("kda", delta(True, B, 1, 16, 16, 128, 128, True), "fused_recurrent_kda_packed_decode_kernel")
    fidelity("conv_update", conv(B), "_causal_conv1d_update_kernel")
    fidelity("conv_update", conv(B, 5120), "_causal_conv1d_update_kernel")
    fidelity("ssu", ssu(B, 1, nh=64, ng=4), "_selective_scan_update_kernel")
    fidelity("ssu", ssu(B, 1, nh=64, ng=4, sdt="bf16"), "_selective_scan_update_kernel")

# refusals: the op returns 2 and says why
for op, p, tuning, text in (
        ("gdn", dict(state_layout="kv"), KERNEL, "vk"),
        ("gdn", dict(disable_state_update=0, tokens=4), KERNEL, "disable_state_update=1"),
        ("gdn", dict(tokens=4), WRAPPER, "launch=wrapper: vLLM's verify wrapper"),
        ("gdn", dict(), dict(WRAPPER, **{"gdn.decode": "unpacked"}), "allocates its output"),
        ("kda", dict(tokens=4), WRAPPER, "launch=wrapper: vLLM's verify wrapper"),
        ("ssu", dict(tokens=4), WRAPPER, "launch=wrapper: vLLM's verify wrapper")):
    Tn = p.get("tokens", 1)
    q = ssu(8, Tn) if op == "ssu" else delta(op == "kda", 8, Tn, 32 if op == "kda" else 16, 32, 128, 128, True)
    for k2, v2 in p.items():
        setattr(q, k2, v2)
    del compiled[:]
    rc = py_vllm._op(inst, op)(q, tuning)
    why = py_vllm._explain(inst, op, q, tuning)
    ok = rc == 2 and why.startswith("refused:") and text in why and not compiled
    print("ok  " if ok else "FAIL", op, "refuses", p, tuning["launch"], "->", why)
    fails += 0 if ok else 1

print("fails:", fails)
sys.exit(1 if fails else 0)
