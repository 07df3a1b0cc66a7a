"""py_sglang on a GPU without the bridge (docs/peers.md "py_sglang"): SGLang's own SSU (decode and
verify), conv update and pool zero, called through py_sglang's ops on torch tensors laid out as the
bridge hands them, checked against a float64 torch reference; the SSU inputs really are the
mixer's views (strides read back from the tensors SGLang's wrapper got); a second call replayed
from a CUDA graph gives the same result. Exit 77 without torch, a CUDA device, triton 3.6 or the
sources.

    python3 tests/peers/test_gpu_py_sglang.py REPO
"""
import os
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "peers"))
sys.path.insert(0, os.path.join(ROOT, "peers", "sglang_py"))
from aot_preamble import sources  # noqa: E402

SRC = sources(ROOT, "sglang-0.5.23", ["sglang/kernels/ops/mamba/triton_ops/mamba_ssm.py",
                                      "sglang/kernels/ops/memory/ptr_table.py"])
try:
    import torch
except ImportError:
    print("SKIP: no torch")
    sys.exit(77)
if not torch.cuda.is_available():
    print("SKIP: no CUDA device")
    sys.exit(77)

import types  # noqa: E402

import py_sglang  # noqa: E402

dev = "cuda"
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def rel_err(a, b):
    a, b = a.double(), b.double()
    return float((a - b).abs().max() / b.abs().max().clamp_min(1e-30))


inst = py_sglang.Instance(os.path.join(SRC, "sglang-0.5.23"), "cuda")
check(not inst.errors, f"kernel modules load ({inst.errors})")
ops = inst.ops()
g = torch.Generator(device=dev).manual_seed(7)


def rnd(*shape, lo=-1.0, hi=1.0, dtype=torch.bfloat16):
    return (torch.rand(*shape, generator=g, device=dev, dtype=torch.float32) * (hi - lo) + lo).to(dtype)


# ------------------------------------------------------------------ SSU (nemotron-h-8b tp 8)
def ssu_case(B, T, verify, slots=64, nh=16, hd=64, ds=128, ng=1):
    item = nh * hd * ds
    p = types.SimpleNamespace(
        op="ssu", batch=B, tokens=T, nheads=nh, head_dim=hd, dstate=ds, ngroups=ng,
        disable_state_update=int(verify), state_dtype="fp32",
        x=rnd(B, T, nh, hd), dt=rnd(B, T, nh, lo=-2.0, hi=1.0), Bm=rnd(B, T, ng, ds), Cm=rnd(B, T, ng, ds), z=None,
        A=rnd(nh, lo=-2.0, hi=-0.1, dtype=torch.float32), dt_bias=rnd(nh, lo=-0.5, hi=0.5), D=rnd(nh),
        y=torch.zeros(B, T, nh, hd, dtype=torch.bfloat16, device=dev),
        state=rnd(slots, nh, hd, ds, dtype=torch.float32), state_stride_slot=item,
        slot_idx=torch.randperm(slots, generator=g, device=dev)[:B].to(torch.int32),
        inter=torch.zeros(slots, T, nh, hd, ds, device=dev) if verify else None,
        inter_stride_slot=item * T if verify else 0, slots=slots)
    return p


def ssu_ref(p):
    f = lambda t: t.double()
    state = f(p.state).clone()
    y = torch.zeros(p.batch, p.tokens, p.nheads, p.head_dim, dtype=torch.float64, device=dev)
    inter = f(p.inter).clone() if p.inter is not None else None
    rep = p.nheads // p.ngroups
    for r in range(p.batch):
        s = int(p.slot_idx[r])
        S = state[s].clone()
        for t in range(p.tokens):
            d = torch.nn.functional.softplus(f(p.dt[r, t]) + f(p.dt_bias))  # [nh] (log(1+e^x); SGLang: x<=20)
            a = torch.exp(f(p.A) * d)
            Bg = f(p.Bm[r, t]).repeat_interleave(rep, 0)  # [nh, ds]
            Cg = f(p.Cm[r, t]).repeat_interleave(rep, 0)
            x = f(p.x[r, t])  # [nh, hd]
            S = a[:, None, None] * S + d[:, None, None] * x[:, :, None] * Bg[:, None, :]
            y[r, t] = (S * Cg[:, None, :]).sum(-1) + f(p.D)[:, None] * x
            if inter is not None:
                inter[s, t] = S
        if not p.disable_state_update:
            state[s] = S
    return y, state, inter


keep = []  # every case's tensors stay alive: a new case never reuses an old case's addresses here
for B, T, verify in ((8, 1, False), (4, 4, True)):
    p = ssu_case(B, T, verify)
    keep.append(p)
    y_ref, st_ref, in_ref = ssu_ref(p)
    seen = {}
    real = inst.m["ssu"].selective_state_update

    def spy(*a, **kw):
        seen["x"], seen["dt"], seen["A"] = a[1], a[2], a[3]
        return real(*a, **kw)
    inst.m["ssu"].selective_state_update = spy
    rc = ops["ssu"](p, {"py.layout": "model", "py.decode": "auto"})
    inst.m["ssu"].selective_state_update = real
    torch.cuda.synchronize()
    name = f"ssu {'verify' if verify else 'decode'} B={B} T={T}"
    check(rc == 0, f"{name}: ok")
    check(rel_err(p.y, y_ref) < 1e-2, f"{name}: y vs float64 reference ({rel_err(p.y, y_ref):.2e})")
    check(rel_err(p.state, st_ref) < 1e-4, f"{name}: state ({rel_err(p.state, st_ref):.2e})")
    if verify:
        check(rel_err(p.inter, in_ref) < 1e-4, f"{name}: intermediate states ({rel_err(p.inter, in_ref):.2e})")
    conv_dim = 16 * 64 + 2 * 128
    check(seen["x"].stride(0) == (conv_dim if not verify else T * conv_dim) and seen["dt"].stride(-1) == 0
          and seen["A"].stride() == (1, 0, 0), f"{name}: x a view into the conv output, dt and A expanded "
          f"(x {seen['x'].stride()}, dt {seen['dt'].stride()}, A {seen['A'].stride()})")

# graph replay of the decode call (the state restored first): the float64 reference's y
p = ssu_case(8, 1, False)
keep.append(p)
st0 = p.state.clone()
y_ref, _, _ = ssu_ref(p)
ops["ssu"](p, {"py.layout": "model", "py.decode": "auto"})  # eager first (the input copy is made here)
torch.cuda.synchronize()
s = torch.cuda.Stream()
s.wait_stream(torch.cuda.current_stream())
graph = torch.cuda.CUDAGraph()
with torch.cuda.stream(s):
    with torch.cuda.graph(graph, stream=s):
        ops["ssu"](p, {"py.layout": "model", "py.decode": "auto"})
p.y.zero_()
p.state.copy_(st0)
graph.replay()
torch.cuda.synchronize()
check(rel_err(p.y, y_ref) < 1e-2, f"ssu decode replayed from a CUDA graph: y vs reference ({rel_err(p.y, y_ref):.2e})")

# ------------------------------------------------------------------ conv update decode (qwen3-next tp 8)
B, C, W, slots = 8, 1024, 4, 64
x = rnd(B, 1, C)
state = rnd(slots, C, W - 1)
st0 = state.clone()
weight, bias = rnd(C, W, lo=-0.5, hi=0.5), None
idx = torch.randperm(slots, generator=g, device=dev)[:B].to(torch.int32)
y = torch.zeros(B, 1, C, dtype=torch.bfloat16, device=dev)
p = types.SimpleNamespace(op="conv_update", batch=B, tokens=1, channels=C, width=W, silu=1, disable_state_update=0,
                          weight_dtype="bf16", state_dtype="bf16", x=x, y=y, weight=weight, bias=bias, state=state,
                          slot_idx=idx, inter=None, slots=slots)
check(ops["conv_update"](p, {}) == 0, "conv decode: ok")
torch.cuda.synchronize()
win = torch.cat([st0[idx.long()].double(), x.double().transpose(1, 2)], dim=2)  # [B, C, W]
ref = (win * weight.double()[None]).sum(-1)
ref = ref * torch.sigmoid(ref)
check(rel_err(y[:, 0], ref) < 2e-2, f"conv decode: y vs float64 reference ({rel_err(y[:, 0], ref):.2e})")
check(torch.equal(state[idx.long()], win[:, :, 1:].to(torch.bfloat16)), "conv decode: state shifted in")

# ------------------------------------------------------------------ pool zero (two conv + temporal buffers)
L, S, conv_item, temp_item = 3, 17, 256 * 3 * 2, 4 * 64 * 4
bufs = [(torch.randint(1, 255, (L, S, ib), dtype=torch.uint8, device=dev), None, ib)
        for ib in (conv_item, conv_item, temp_item)]
dst = torch.tensor([3, 9, 16], dtype=torch.int32, device=dev)
p = types.SimpleNamespace(op="state_zero", n_buffers=3, layers=L, slots=S, spec_tokens=0, buf=bufs, count=3,
                          src=None, dst=dst, step=None)
before = [b[0].clone() for b in bufs]
check(ops["state_zero"](p, {}) == 0, "pool zero: ok")
torch.cuda.synchronize()
keep = torch.ones(S, dtype=torch.bool, device=dev)
keep[dst.long()] = False
check(all(bool((b[0][:, dst.long()] == 0).all()) and torch.equal(b[0][:, keep], o[:, keep])
          for b, o in zip(bufs, before)), "pool zero: the listed slots of every buffer and layer are 0, others kept")

print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
