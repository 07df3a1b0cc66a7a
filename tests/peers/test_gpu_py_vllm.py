"""GPU test of py_vllm (label gpu): every op on the default models' shapes against a float64
rendering of linstate's contract (ls_kernels.h), with the bench's gate (max|dev - ref| / max|ref|
per tensor, 1e-2 for fp32 state). The params objects are built as the Python bridge builds them
(docs/plugin-abi.md "Python impls": attributes named as the C struct, tensors aliasing the
buffers), so this runs before the bridge is merged. argv[1] = repo root; the source is
$LS_PEERS_SRC/vllm-0.33.0. Exit 77 without torch, a CUDA device or the source.

Pool as the bench's for a null_slot0 impl: S+1 slots, slot 0 held (vLLM's null block, never a
row), rows on random distinct slots 1..S, inter a separate allocation [S+1, T, ...]; untouched
slots (slot 0 among them) are checked. case_begin is called before each case, as the bench does.
Then `launch=wrapper` (vLLM's own decode wrappers): the decode cases again, kernel and wrapper on
the same inputs giving the same bits, and a wrapper-mode graph capture."""
import os
import sys
import types

root = sys.argv[1]
src = os.path.join(os.environ.get("LS_PEERS_SRC", os.path.join(root, ".peers", "src")), "vllm-0.33.0")
try:
    import torch
except ImportError:
    print("skip: no torch")
    sys.exit(77)
if not torch.cuda.is_available():
    print("skip: no CUDA device")
    sys.exit(77)
if not os.path.isdir(src):
    print(f"skip: {src} missing (scripts/peers.sh fetch)")
    sys.exit(77)
sys.path.insert(0, os.path.join(root, "peers", "vllm_py"))
import py_vllm  # noqa: E402

impl = py_vllm.linstate_impl(src, "cuda")
ops = impl["ops"]
tuning = {k[0]: k[1].split("|")[0] for k in impl["knobs"]}  # the defaults: launch=kernel
KERNEL = dict(tuning)
dev = "cuda"
g = torch.Generator(device="cpu").manual_seed(1234)
fails = 0
S = 40  # usable slots 1..S; slot 0 held; slots = S + 1


def rnd(shape, lo, hi, dtype):
    return (torch.rand(shape, generator=g, dtype=torch.float64) * (hi - lo) + lo).to(dtype).to(dev)


def pick_slots(B):
    impl["case_begin"]()  # a new case: the same slot-list address may come with other slots
    perm = torch.randperm(S, generator=g)[:B] + 1  # slot 0 is held (null_slot0)
    return perm.to(torch.int32).to(dev)


def err(dev_t, ref_t):
    d = dev_t.double().cpu()
    r = ref_t.double().cpu()
    if not torch.isfinite(d).all():
        return float("inf")
    m = r.abs().max().item()
    return (d - r).abs().max().item() / (m if m > 0 else 1.0)


def report(name, errs, p, tol=1e-2):
    global fails
    worst = max(errs.values())
    ok = worst <= tol
    if not ok:
        fails += 1
    print(("ok  " if ok else "FAIL"), name, " ".join(f"{k}={v:.2e}" for k, v in errs.items()), "|",
          impl["explain"](p.op, p, tuning))


def ran(name, rc, p):
    """The op returned ok; else the case fails, with the impl's explain line (why it refused)."""
    global fails
    if rc in (0, None):
        return True
    fails += 1
    print("FAIL", name, "rc", rc, impl["explain"](p.op, p, tuning))
    return False


def softplus(x):
    return torch.where(x <= 20.0, torch.log1p(torch.exp(x)), x)


# ------------------------------------------------------------------ GDN / KDA
def delta_case(kda, B, T, H, HV, K, V, packed):
    row = 2 * H * K + HV * V
    if packed:
        buf = rnd((B, T, row), -1, 1, torch.bfloat16)
        q = buf.as_strided((B, T, H, K), (T * row, row, K, 1), 0)
        k = buf.as_strided((B, T, H, K), (T * row, row, K, 1), H * K)
        v = buf.as_strided((B, T, HV, V), (T * row, row, V, 1), 2 * H * K)
        st = row
    else:
        q, k = rnd((B, T, H, K), -1, 1, torch.bfloat16), rnd((B, T, H, K), -1, 1, torch.bfloat16)
        v = rnd((B, T, HV, V), -1, 1, torch.bfloat16)
        st = 0
    a = rnd((B, T, HV, K) if kda else (B, T, HV), -3, 1, torch.bfloat16)
    b = rnd((B, T, HV), -2, 2, torch.bfloat16)
    A_log = rnd((HV,), -2, 0.5, torch.float32)
    dt_bias = rnd((HV * K,), -0.5, 0.5, torch.float32) if kda else rnd((HV,), -0.5, 0.5, torch.bfloat16)
    o = torch.full((B, T, HV, V), float("nan"), dtype=torch.bfloat16, device=dev)
    item = HV * K * V
    state = rnd((S + 1, HV, V, K), -1, 1, torch.float32)
    state0 = state.clone()
    inter = torch.full((S + 1, T, HV, V, K), float("nan"), dtype=torch.float32, device=dev) if T > 1 else None
    slot = pick_slots(B)
    scale = K ** -0.5
    p = types.SimpleNamespace(
        op="kda" if kda else "gdn", batch=B, tokens=T, heads_qk=H, heads_v=HV, dk=K, dv=V,
        disable_state_update=int(T > 1), scale=scale, state_dtype="fp32", q=q, k=k, v=v, a=a, b=b,
        A_log=A_log, dt_bias=dt_bias, o=o, state=state, state_stride_slot=item, slot_idx=slot,
        inter=inter, inter_stride_slot=item * T if inter is not None else 0, slots=S + 1,
        state_layout="vk", q_stride_tok=st, k_stride_tok=st, v_stride_tok=st)
    rc = (ops["kda"] if kda else ops["gdn"])(p, tuning)
    torch.cuda.synchronize()
    name = f"{'kda' if kda else 'gdn'} B={B} T={T} H={H} HV={HV} {'packed' if packed else 'split'}"
    if not ran(name, rc, p):
        return
    # float64 reference, S as [K, V] per head (vk stores its transpose)
    Sx = state0[slot.long()].double().transpose(-1, -2)  # [B, HV, K, V]
    rep = HV // H
    qd = q.double().repeat_interleave(rep, dim=2)
    kd = k.double().repeat_interleave(rep, dim=2)
    ref_o = torch.empty((B, T, HV, V), dtype=torch.float64, device=dev)
    ref_inter = []
    for t in range(T):
        qn = qd[:, t] / torch.sqrt((qd[:, t] ** 2).sum(-1, keepdim=True) + 1e-6) * scale
        kn = kd[:, t] / torch.sqrt((kd[:, t] ** 2).sum(-1, keepdim=True) + 1e-6)
        if kda:
            gk = -torch.exp(A_log.double())[None, :, None] * softplus(
                a[:, t].double() + dt_bias.double().view(HV, K)[None])
            Sx = Sx * torch.exp(gk)[..., None]
        else:
            gg = -torch.exp(A_log.double())[None] * softplus(a[:, t].double() + dt_bias.double()[None])
            Sx = Sx * torch.exp(gg)[..., None, None]
        beta = torch.sigmoid(b[:, t].double())
        u = beta[..., None] * (v[:, t].double() - torch.einsum("bhkv,bhk->bhv", Sx, kn))
        Sx = Sx + kn[..., :, None] * u[..., None, :]
        ref_o[:, t] = torch.einsum("bhkv,bhk->bhv", Sx, qn)
        ref_inter.append(Sx.transpose(-1, -2).clone())
    errs = {"o": err(o, ref_o)}
    used = slot.long()
    other = torch.ones(S + 1, dtype=torch.bool, device=dev)
    other[used] = False
    if T == 1:
        errs["state"] = err(state[used], ref_inter[-1])
    else:
        errs["inter"] = err(inter[used], torch.stack(ref_inter, 1))
        errs["state_kept"] = err(state[used], state0[used])
    errs["others_kept"] = err(state[other], state0[other])
    report(name, errs, p)
    return p


# ------------------------------------------------------------------ conv update
def conv_case(B, C, W, pad):
    x = rnd((B, 1, C), -1, 1, torch.bfloat16)
    w = rnd((C, W), -0.5, 0.5, torch.bfloat16)
    bias = rnd((C,), -0.5, 0.5, torch.bfloat16)
    state = rnd((S + 1, C, W - 1), -1, 1, torch.bfloat16)
    state0 = state.clone()
    y = torch.full((B, 1, C), float("nan"), dtype=torch.bfloat16, device=dev)
    slot = pick_slots(B)
    if pad:
        slot[-1] = -1
    p = types.SimpleNamespace(
        op="conv_update", batch=B, tokens=1, channels=C, width=W, silu=1, disable_state_update=0,
        weight_dtype="bf16", state_dtype="bf16", x=x, x_stride_b=C, x_stride_t=C, x_stride_c=1,
        y=y, y_stride_b=C, y_stride_t=C, y_stride_c=1, weight=w, bias=bias, state=state,
        state_stride_slot=C * (W - 1), state_stride_c=W - 1, state_stride_w=1, slot_idx=slot,
        inter=None, inter_stride_slot=0, inter_stride_t=0, inter_stride_c=0, inter_stride_w=0, slots=S + 1)
    rc = ops["conv_update"](p, tuning)
    torch.cuda.synchronize()
    name = f"conv_update B={B} C={C} W={W}{' pad' if pad else ''}"
    if not ran(name, rc, p):
        return
    real = slot >= 0
    s = slot[real].long()
    u = torch.cat([state0[s].double(), x[real].double().transpose(1, 2)], dim=2)  # [b, C, W]
    yr = bias.double()[None] + (u * w.double()[None]).sum(-1)
    yr = yr * torch.sigmoid(yr)
    errs = {"y": err(y[real][:, 0], yr), "state": err(state[s], u[:, :, 1:]),
            "null_kept": err(state[0], state0[0])}  # a padding row is the null block: skipped
    if pad:
        errs["pad_y_untouched"] = 0.0 if torch.isnan(y[~real].float()).all() else float("inf")
    report(name, errs, p)
    return p


# ------------------------------------------------------------------ Mamba2 SSU
def ssu_case(B, T, nh, hd, ds, ng, with_z):
    x = rnd((B, T, nh, hd), -1, 1, torch.bfloat16)
    dt = rnd((B, T, nh), -3, 1, torch.bfloat16)
    A = rnd((nh,), -2, -0.1, torch.float32)
    dt_bias = rnd((nh,), -0.5, 0.5, torch.bfloat16)
    D = rnd((nh,), -1, 1, torch.bfloat16)
    Bm, Cm = rnd((B, T, ng, ds), -1, 1, torch.bfloat16), rnd((B, T, ng, ds), -1, 1, torch.bfloat16)
    z = rnd((B, T, nh, hd), -1, 1, torch.bfloat16) if with_z else None
    y = torch.full((B, T, nh, hd), float("nan"), dtype=torch.bfloat16, device=dev)
    item = nh * hd * ds
    state = rnd((S + 1, nh, hd, ds), -1, 1, torch.float32)
    state0 = state.clone()
    inter = torch.full((S + 1, T, nh, hd, ds), float("nan"), dtype=torch.float32, device=dev) if T > 1 else None
    slot = pick_slots(B)
    p = types.SimpleNamespace(
        op="ssu", batch=B, tokens=T, nheads=nh, head_dim=hd, dstate=ds, ngroups=ng,
        disable_state_update=int(T > 1), state_dtype="fp32", x=x, dt=dt, Bm=Bm, Cm=Cm, z=z, A=A,
        dt_bias=dt_bias, D=D, y=y, state=state, state_stride_slot=item, slot_idx=slot, inter=inter,
        inter_stride_slot=item * T if inter is not None else 0, slots=S + 1)
    rc = ops["ssu"](p, tuning)
    torch.cuda.synchronize()
    name = f"ssu B={B} T={T} nh={nh} hd={hd} ds={ds}{' z' if with_z else ''}"
    if not ran(name, rc, p):
        return
    Sx = state0[slot.long()].double()
    rep = nh // ng
    yr, ref_inter = [], []
    for t in range(T):
        d = softplus(dt[:, t].double() + dt_bias.double()[None])  # [B, nh]
        aa = torch.exp(A.double()[None] * d)
        Bt = Bm[:, t].double().repeat_interleave(rep, 1)
        Ct = Cm[:, t].double().repeat_interleave(rep, 1)
        Sx = aa[..., None, None] * Sx + (d[..., None] * x[:, t].double())[..., None] * Bt[:, :, None, :]
        yt = (Sx * Ct[:, :, None, :]).sum(-1) + D.double()[None, :, None] * x[:, t].double()
        if with_z:
            zt = z[:, t].double()
            yt = yt * zt * torch.sigmoid(zt)
        yr.append(yt)
        ref_inter.append(Sx.clone())
    used = slot.long()
    errs = {"y": err(y, torch.stack(yr, 1))}
    if T == 1:
        errs["state"] = err(state[used], ref_inter[-1])
    else:
        errs["inter"] = err(inter[used], torch.stack(ref_inter, 1))
        errs["state_kept"] = err(state[used], state0[used])
    other = torch.ones(S + 1, dtype=torch.bool, device=dev)
    other[used] = False
    errs["others_kept"] = err(state[other], state0[other])
    report(name, errs, p)
    return p


# the default models' shapes (docs/presets.md): Qwen3-Next GDN (tp 1 and 2), Kimi-Linear KDA,
# Nemotron-H SSU / conv; B and T as the side-by-side's
for B in (1, 8, 32):
    for T in (1, 2, 4, 8):
        for H, HV in ((16, 32), (8, 16)):
            delta_case(False, B, T, H, HV, 128, 128, packed=True)
        delta_case(False, B, T, 16, 32, 128, 128, packed=False)
        delta_case(True, B, T, 32, 32, 128, 128, packed=True)
        ssu_case(B, T, 128, 64, 128, 8, with_z=False)
    conv_case(B, 8192, 4, pad=False)
ssu_case(8, 1, 128, 64, 128, 8, with_z=True)
conv_case(8, 8192, 4, pad=True)

# launch=wrapper: vLLM's own decode wrappers on the same cases (verify is refused in this mode)
tuning = dict(KERNEL, launch="wrapper")
for B in (1, 8, 32):
    for H, HV in ((16, 32), (8, 16)):
        delta_case(False, B, 1, H, HV, 128, 128, packed=True)
    delta_case(True, B, 1, 32, 32, 128, 128, packed=True)
    ssu_case(B, 1, 128, 64, 128, 8, with_z=False)
    conv_case(B, 8192, 4, pad=False)
ssu_case(8, 1, 128, 64, 128, 8, with_z=True)
conv_case(8, 8192, 4, pad=True)


def same_bits(name, make, outs):
    """One binary, one launch: the kernel route and the wrapper on the same inputs (the same
    generator seed) write the same bits."""
    global tuning, fails
    got = []
    for launch in ("kernel", "wrapper"):
        tuning = dict(KERNEL, launch=launch)
        g.manual_seed(4321)
        p = make()
        got.append(None if p is None else [t.clone() for t in outs(p)])
    ok = None not in got and all(torch.equal(a, b) for a, b in zip(*got))
    fails += 0 if ok else 1
    print("ok  " if ok else "FAIL", name, "kernel and wrapper routes write the same bits")


def o_state(p):
    return p.o, p.state


def y_state(p):
    return p.y, p.state


for B in (1, 32):
    same_bits(f"gdn B={B}", lambda: delta_case(False, B, 1, 16, 32, 128, 128, packed=True), o_state)
    same_bits(f"kda B={B}", lambda: delta_case(True, B, 1, 32, 32, 128, 128, packed=True), o_state)
    same_bits(f"ssu B={B}", lambda: ssu_case(B, 1, 128, 64, 128, 8, with_z=False), y_state)
    same_bits(f"conv_update B={B}", lambda: conv_case(B, 8192, 4, pad=False), y_state)


# graph capture ("graph" cap): a captured GDN decode replays to the eager result
def graph_case(B=8, H=16, HV=32, K=128, V=128):
    global fails
    row = 2 * H * K + HV * V
    buf = rnd((B, 1, row), -1, 1, torch.bfloat16)
    item = HV * K * V
    state0 = rnd((S + 1, HV, V, K), -1, 1, torch.float32)
    state = state0.clone()
    o = torch.zeros((B, 1, HV, V), dtype=torch.bfloat16, device=dev)
    p = types.SimpleNamespace(
        op="gdn", batch=B, tokens=1, heads_qk=H, heads_v=HV, dk=K, dv=V, disable_state_update=0,
        scale=K ** -0.5, state_dtype="fp32",
        q=buf.as_strided((B, 1, H, K), (row, row, K, 1), 0),
        k=buf.as_strided((B, 1, H, K), (row, row, K, 1), H * K),
        v=buf.as_strided((B, 1, HV, V), (row, row, V, 1), 2 * H * K),
        a=rnd((B, 1, HV), -3, 1, torch.bfloat16), b=rnd((B, 1, HV), -2, 2, torch.bfloat16),
        A_log=rnd((HV,), -2, 0.5, torch.float32), dt_bias=rnd((HV,), -0.5, 0.5, torch.bfloat16),
        o=o, state=state, state_stride_slot=item, slot_idx=pick_slots(B), inter=None,
        inter_stride_slot=0, slots=S + 1, state_layout="vk", q_stride_tok=row, k_stride_tok=row,
        v_stride_tok=row)
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        ops["gdn"](p, tuning)  # eager: compiles, allocates the index buffer
    torch.cuda.synchronize()
    eager_o, eager_state = o.clone(), state.clone()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=s):
        rc = ops["gdn"](p, tuning)
    state.copy_(state0)
    o.zero_()
    graph.replay()
    torch.cuda.synchronize()
    ok = rc in (0, None) and torch.equal(o, eager_o) and torch.equal(state, eager_state)
    fails += 0 if ok else 1
    print("ok  " if ok else "FAIL", "gdn decode captured in a CUDA graph replays to the eager result",
          "launch=" + tuning["launch"])


for launch in ("kernel", "wrapper"):
    tuning = dict(KERNEL, launch=launch)
    graph_case()
print("fails:", fails)
sys.exit(1 if fails else 0)
