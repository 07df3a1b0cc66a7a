#!/usr/bin/env python3
"""
jit_spec.py — what SGLang's own call makes Triton JIT-compile on sm_90, found without a GPU, and
how it compares with the `sglang` impl's AOT variants (docs/peers.md, "Fidelity").

py_sglang's ops run on fake_torch tensors (shapes, strides and addresses as linstate's bench and
SGLang's model code give them; no data) and call SGLang's real wrappers; triton's
JITFunction.run is replaced by a recorder that runs the JIT's own binder and argument packing
(triton/runtime/jit.py) for the target cuda sm_90, so each launch yields exactly the signature,
constexprs, divisibility attributes and options the JIT would compile. `--compile` also compiles
it (triton.compile, as JITFunction._do_compile does) and reads the registers per thread with
cuobjdump. Each launch is set against every AOT variant of the same kernel in
peers/sglang/kernels.py (peers/triton/aot.py's specialisation), and the closest one's differences
are printed.

    python3 peers/sglang_py/jit_spec.py [--source 0.5.23] [--case NAME] [--compile] [--json FILE]
    python3 peers/sglang_py/jit_spec.py --cache TRITON_CACHE_DIR [--aot-dir build/peers/gen/sglang]
        (after a GPU run: each cubin the JIT compiled, its registers, and the AOT variants whose
        SASS is identical)
"""
import argparse
import hashlib
import json
import re
import os
import subprocess
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "peers", "triton"))

import fake_torch  # noqa: E402


class Launch:
    def __init__(self, fn, signature, constexprs, attrs, options, grid):
        self.fn, self.signature, self.options, self.grid = fn, signature, options, grid
        names = [p.name for p in fn.params]
        self.constexprs = {names[k[0]]: v for k, v in constexprs.items() if len(k) == 1}
        self.attrs = {names[k[0]]: v for k, v in attrs.items() if len(k) == 1}
        self._constexprs_raw, self._attrs_raw = constexprs, attrs

    @property
    def kernel(self):
        return self.fn.__name__


def capture(call):
    """Runs call() with every Triton launch recorded, not run. Returns [Launch]."""
    from triton import knobs
    from triton.backends.compiler import GPUTarget
    from triton.compiler.compiler import make_backend
    from triton.runtime import jit as J
    backend = make_backend(GPUTarget("cuda", 90, 32))
    out = []
    real = J.JITFunction.run

    def run(self, *args, grid, warmup, **kwargs):
        kwargs["debug"] = kwargs.get("debug", self.debug) or knobs.runtime.debug
        kwargs["instrumentation_mode"] = knobs.compilation.instrumentation_mode
        binder = J.create_function_from_signature(self.signature, self.params, backend)
        bound, spec, opts = binder(*args, **kwargs)
        options, signature, constexprs, attrs = self._pack_args(backend, kwargs, bound, spec, opts)
        g = grid(bound) if callable(grid) else grid
        L = Launch(self, signature, constexprs, attrs, options, tuple(g))
        L.values = {k: v for k, v in bound.items() if isinstance(v, int) and not isinstance(v, bool)}
        out.append(L)
        return None

    J.JITFunction.run = run
    try:
        call()
    finally:
        J.JITFunction.run = real
    return out


def compile_regs(launch, workdir, stem):
    """Compiles the launch as the JIT would and returns (registers per thread, cubin path)."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    src = ASTSource(launch.fn, launch.signature, launch._constexprs_raw, launch._attrs_raw)
    k = triton.compile(src, target=GPUTarget("cuda", 90, 32), options=launch.options.__dict__)
    os.makedirs(workdir, exist_ok=True)
    path = os.path.join(workdir, f"jit_{stem}.cubin")
    with open(path, "wb") as f:
        f.write(k.asm["cubin"])
    return cubin_regs(path), path


def _cuobjdump(*args):
    import triton
    tool = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "cuobjdump")
    return subprocess.run([tool, *args], capture_output=True, text=True).stdout


def sass_digest(path):
    """sha256 of the SASS instructions (addresses stripped): equal digests = the same code."""
    lines = [re.sub(r"/\*[0-9a-f]+\*/", "", ln).strip() for ln in _cuobjdump("-sass", path).splitlines()
             if re.match(r"\s+/\*[0-9a-f]{4}\*/", ln)]
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()[:16]


def cubin_regs(path):
    r = types.SimpleNamespace(stdout=_cuobjdump("-res-usage", path))
    for line in r.stdout.splitlines():
        if "REG:" in line:
            return int(line.split("REG:")[1].split()[0])
    return None


# ------------------------------------------------------------------ the AOT side
def aot_variants(kernel):
    import aot
    spec = aot.load_spec(os.path.join(REPO, "peers", "sglang", "kernels.py"))
    return aot, [v for v in spec.variants() if v.kernel == kernel]


def aot_view(aot, fn, v):
    sig, consts, attrs, _ = aot.specialize(fn, v)
    names = [p.name for p in fn.params]
    return ({k: s for k, s in sig.items()}, consts, {names[k[0]]: a for k, a in attrs.items()},
            {"num_warps": v.num_warps, "num_stages": v.num_stages, "launch_pdl": bool(v.launch_pdl)})


def _norm(v):
    return v.value if hasattr(v, "value") and not isinstance(v, (int, float, bool)) else v


def diff(launch, aot, v):
    """[(what, name, jit value, aot value)] between a JIT launch and an AOT variant."""
    fn = launch.fn
    sig, consts, attrs, opts = aot_view(aot, fn, v)
    d = []
    for name in [p.name for p in fn.params]:
        js, as_ = launch.signature.get(name), sig.get(name)
        if js != as_:
            d.append(("type", name, js, as_))
        elif js == "constexpr" and _norm(launch.constexprs.get(name)) != _norm(consts.get(name)):
            d.append(("constexpr", name, _norm(launch.constexprs.get(name)), _norm(consts.get(name))))
        if bool(launch.attrs.get(name)) != bool(attrs.get(name)):
            d.append(("div16", name, bool(launch.attrs.get(name)), bool(attrs.get(name))))
    for k in ("num_warps", "num_stages", "launch_pdl"):
        jv = getattr(launch.options, k)
        if bool(jv) != bool(opts[k]) if k == "launch_pdl" else jv != opts[k]:
            d.append(("option", k, jv, opts[k]))
    return d


def closest(launch):
    aot, vs = aot_variants(launch.kernel)
    if not vs:
        return None, None, None
    def score(t):  # fewest specialisation differences, then fewest differing runtime ints
        d, v = t
        ints = sum(1 for k, x in launch.values.items()
                   if isinstance(v.args.get(k), int) and not isinstance(v.args.get(k), bool) and v.args[k] != x)
        return (len(d), ints)
    best = min(((diff(launch, aot, v), v) for v in vs), key=score)
    return best[1], best[0], aot


# ------------------------------------------------------------------ the cases (fake tensors)
T_ = fake_torch


def _t(shape, dt, stride=None):
    t = T_.empty(shape, dtype=dt)
    return t if stride is None else T_.as_strided(t, shape, stride)


def ssu_params(nh, hd, ds, ng, B, T, state_dtype, verify, slots=512):
    bf, f32 = T_.bfloat16, T_.float32
    sdt = f32 if state_dtype == "fp32" else bf
    item = nh * hd * ds
    return types.SimpleNamespace(
        batch=B, tokens=T, nheads=nh, head_dim=hd, dstate=ds, ngroups=ng,
        disable_state_update=int(verify), state_dtype=state_dtype,
        x=_t((B, T, nh, hd), bf), dt=_t((B, T, nh), bf), Bm=_t((B, T, ng, ds), bf), Cm=_t((B, T, ng, ds), bf),
        z=None, A=_t((nh,), f32), dt_bias=_t((nh,), bf), D=_t((nh,), bf), y=_t((B, T, nh, hd), bf),
        state=_t((slots, nh, hd, ds), sdt), state_stride_slot=item, slot_idx=_t((B,), T_.int32),
        inter=_t((slots, T, nh, hd, ds), sdt) if verify else None, inter_stride_slot=item * T if verify else 0,
        slots=slots)


def conv_params(C, B, T, weight_dtype="bf16", window_major=False, bias=True, slots=512):
    bf = T_.bfloat16
    wdt = T_.float32 if weight_dtype == "fp32" else bf
    W = 4
    st = (C * 3, 1, C) if window_major else (C * 3, 3, 1)
    ist = (T * C * 3, C * 3, 1, C) if window_major else (T * C * 3, C * 3, 3, 1)
    return types.SimpleNamespace(
        batch=B, tokens=T, channels=C, width=W, silu=1, disable_state_update=0,
        x=_t((B, T, C), bf), y=_t((B, T, C), bf), weight=_t((C, W), wdt), bias=_t((C,), wdt) if bias else None,
        state=_t((slots, C, W - 1), bf, st), slot_idx=_t((B,), T_.int32),
        inter=_t((slots, T, C, W - 1), bf, ist) if T > 1 else None, slots=slots)


def delta_params(H, HV, B, T, kda, verify, state_dtype="fp32", K=128, V=128, slots=512):
    bf, f32 = T_.bfloat16, T_.float32
    sdt = f32 if state_dtype == "fp32" else bf
    row = 2 * H * K + HV * V
    packed = _t((B * T, row), bf)
    q = T_.as_strided(packed, (B, T, H, K), (T * row, row, K, 1))
    k = T_.as_strided(packed[:, H * K:], (B, T, H, K), (T * row, row, K, 1))
    v = T_.as_strided(packed[:, 2 * H * K:], (B, T, HV, V), (T * row, row, V, 1))
    item = HV * K * V
    return types.SimpleNamespace(
        batch=B, tokens=T, heads_qk=H, heads_v=HV, dk=K, dv=V, disable_state_update=int(verify),
        scale=K ** -0.5, state_dtype=state_dtype, q=q, k=k, v=v,
        a=_t((B, T, HV, K) if kda else (B, T, HV), bf), b=_t((B, T, HV), bf), A_log=_t((HV,), f32),
        dt_bias=_t((HV * K,), f32) if kda else _t((HV,), bf), o=_t((B, T, HV, V), bf),
        state=_t((slots, HV, V, K), sdt), state_stride_slot=item, slot_idx=_t((B,), T_.int32),
        inter=_t((slots, T, HV, V, K), sdt) if verify else None, inter_stride_slot=item * T if verify else 0,
        slots=slots, state_layout="vk", q_stride_tok=row, k_stride_tok=row, v_stride_tok=row)


def conv_delta_params(H, HV, B, T, state_dtype="fp32", K=128, V=128, slots=512):
    d = delta_params(H, HV, B, T, True, True, state_dtype, K, V, slots)
    d.q = d.k = d.v = None
    C = 2 * H * K + HV * V
    c = conv_params(C, B, T, "fp32", window_major=True, bias=False, slots=slots)
    c.y, c.disable_state_update, c.slot_idx = None, 1, d.slot_idx
    return types.SimpleNamespace(kda=1, conv=c, delta=d)


def pool_params(op, conv_items=(4096 * 3 * 2,), temporal_item=16 * 128 * 128 * 4, layers=36, slots=513, T=4,
                count=64):
    """A whole pool as the bench hands it: conv buffers then the temporal state (qwen3-next tp 2)."""
    u8, i32 = T_.uint8, T_.int32
    bufs = [(_t((layers, slots, ib), u8), _t((layers, slots, T, ib), u8) if op == "state_accept" else None, ib)
            for ib in conv_items + (temporal_item,)]
    return types.SimpleNamespace(n_buffers=len(bufs), layers=layers, slots=slots,
                                 spec_tokens=T if op == "state_accept" else 0, buf=bufs, count=count,
                                 src=_t((count,), i32) if op == "state_copy" else None, dst=_t((count,), i32),
                                 step=_t((count,), i32) if op == "state_accept" else None)


# name -> (op, params maker, tuning): nemotron-h-8b tp 2 (nh 64, hd 64, ds 128, ng 4), qwen3-next
# tp 1 (GDN H 16, HV 32; conv 8192 channels), kimi-linear tp 1 (KDA H = HV = 32; conv 3*4096).
CASES = {
    "ssu/decode/B128": ("ssu", lambda: ssu_params(64, 64, 128, 4, 128, 1, "fp32", False), {}),
    "ssu/decode/B512": ("ssu", lambda: ssu_params(64, 64, 128, 4, 512, 1, "fp32", False), {}),
    "ssu/decode/B1": ("ssu", lambda: ssu_params(64, 64, 128, 4, 1, 1, "fp32", False), {}),
    "ssu/decode/B128/linstate-layout": ("ssu", lambda: ssu_params(64, 64, 128, 4, 128, 1, "fp32", False),
                                        {"py.layout": "linstate"}),
    "ssu/verify/B128/T4": ("ssu", lambda: ssu_params(64, 64, 128, 4, 128, 4, "fp32", True), {}),
    "ssu/decode/B128/hd80": ("ssu", lambda: ssu_params(64, 80, 128, 4, 128, 1, "fp32", False), {}),
    "conv/decode/gdn/B128": ("conv_update", lambda: conv_params(8192, 128, 1, bias=False), {}),
    "conv/verify/gdn/B128/T4": ("conv_update", lambda: conv_params(8192, 128, 4, bias=False), {}),
    "conv/decode/mamba2/B128": ("conv_update", lambda: conv_params(5120, 128, 1), {}),
    "conv/decode/kda/B128": ("conv_update", lambda: conv_params(3 * 4096, 128, 1, "fp32", True, False), {}),
    "gdn/decode/B128": ("gdn", lambda: delta_params(16, 32, 128, 1, False, False), {}),
    "gdn/verify/B32/T4": ("gdn", lambda: delta_params(16, 32, 32, 4, False, True), {}),
    "gdn/verify/B128/T4": ("gdn", lambda: delta_params(16, 32, 128, 4, False, True), {}),
    "kda/decode/B4": ("kda", lambda: delta_params(32, 32, 4, 1, True, False), {}),
    "kda/verify/B128/T4": ("kda", lambda: delta_params(32, 32, 128, 4, True, True), {}),
    "conv_delta/kda/B128/T4": ("conv_delta", lambda: conv_delta_params(32, 32, 128, 4), {}),
    "pool/copy/qwen": ("state_copy", lambda: pool_params("state_copy"), {}),
    "pool/zero/qwen": ("state_zero", lambda: pool_params("state_zero"), {}),
    "pool/accept/qwen/T4": ("state_accept", lambda: pool_params("state_accept"), {}),
}


def instance(source):
    fake_torch.install()
    import py_sglang
    return py_sglang.Instance(source, "cuda")


def run_case(inst, name, do_compile=False, workdir="/tmp/ls_jit_spec"):
    op, make, tuning = CASES[name]
    p = make()
    fn = inst.ops()[op]
    rc = [None]
    launches = capture(lambda: rc.__setitem__(0, fn(p, dict({"py.layout": "model", "py.decode": "auto"}, **tuning))))
    rows = []
    for i, L in enumerate(launches):
        v, d, aot = closest(L)
        row = {"case": name, "op": op, "rc": rc[0], "kernel": L.kernel, "grid": list(L.grid),
               "num_warps": L.options.num_warps, "num_stages": L.options.num_stages,
               "launch_pdl": bool(getattr(L.options, "launch_pdl", False)),
               "aot_variant": v.key if v else None,
               "differences": [list(map(str, x)) for x in (d or [])]}
        if do_compile:
            row["jit_regs"], jpath = compile_regs(L, workdir, re.sub(r"[^A-Za-z0-9]+", "_", name) + f"_{i}")
            row["jit_sass"] = sass_digest(jpath)
            if v is not None:
                aot.compile_variant(os.path.join(REPO, "peers", "sglang", "kernels.py"),
                                    os.path.join(REPO, ".peers", "src"), workdir, v)
                apath = os.path.join(workdir, v.stem + ".cubin")
                row["aot_regs"], row["aot_sass"] = cubin_regs(apath), sass_digest(apath)
        rows.append(row)
    if not launches:
        rows.append({"case": name, "op": op, "rc": rc[0], "kernel": None})
    return rows


def cache_report(cache_dir, aot_dir):
    """Markdown lines: each cubin Triton's JIT left in cache_dir (a GPU run of py_sglang with
    TRITON_CACHE_DIR set) against the AOT cubins of the same kernel in aot_dir
    (build/peers/gen/sglang): registers, warps, and which AOT variants have the identical SASS."""
    aot = {}
    for f in sorted(os.listdir(aot_dir)) if os.path.isdir(aot_dir) else []:
        if f.endswith(".cubin") and "__" in f:
            kernel, key = f[:-6].split("__", 1)
            path = os.path.join(aot_dir, f)
            aot.setdefault(kernel, []).append((key, cubin_regs(path), sass_digest(path)))
    lines = ["| JIT kernel | warps | regs | AOT variants with the identical SASS | AOT regs of that kernel |",
             "|---|---|---|---|---|"]
    for root, _dirs, files in sorted(os.walk(cache_dir)):
        for f in sorted(files):
            if not f.endswith(".cubin"):
                continue
            path = os.path.join(root, f)
            kernel = f[:-6]
            meta = {}
            try:
                with open(os.path.join(root, kernel + ".json")) as mf:
                    meta = json.load(mf)
            except (OSError, ValueError):
                pass
            digest, regs = sass_digest(path), cubin_regs(path)
            same = [k for k, _r, d in aot.get(kernel, []) if d == digest]
            aregs = sorted({r for _k, r, _d in aot.get(kernel, [])})
            lines.append(f"| {kernel} | {meta.get('num_warps', '')} | {regs} | "
                         f"{', '.join(same[:6]) + (' ...' if len(same) > 6 else '') if same else 'none'} | "
                         f"{', '.join(map(str, aregs)) or 'no AOT variants'} |")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--cache", help="report on a Triton cache folder instead (with --aot-dir)")
    ap.add_argument("--aot-dir", default=os.path.join(REPO, "build", "peers", "gen", "sglang"))
    ap.add_argument("--source", default="0.5.23")
    ap.add_argument("--case", action="append", help="a case name (default: all); --list shows them")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--compile", action="store_true", help="compile both sides and read registers/thread")
    ap.add_argument("--json", help="write the rows to this file")
    args = ap.parse_args()
    if args.cache:
        if not os.path.isdir(args.cache):
            print(f"jit_spec: --cache {args.cache}: no such folder", file=sys.stderr)
            return 2
        print("\n".join(cache_report(args.cache, args.aot_dir)))
        return 0
    if args.list:
        print("\n".join(CASES))
        return 0
    names = args.case or list(CASES)
    bad = [n for n in names if n not in CASES]
    if bad:
        print(f"jit_spec: unknown case '{bad[0]}' (--list)", file=sys.stderr)
        return 2
    inst = instance(args.source)
    rows = []
    for n in names:
        for r in run_case(inst, n, args.compile):
            rows.append(r)
            regs = (f" | regs jit {r.get('jit_regs')} aot {r.get('aot_regs')}, SASS "
                    f"{'identical' if r.get('jit_sass') == r.get('aot_sass') else 'differs'}") if args.compile else ""
            diffs = "; ".join(f"{w} {n2}: jit {j} aot {a}" for w, n2, j, a in r.get("differences", [])) or "same"
            print(f"{r['case']}: rc {r['rc']} {r['kernel']} grid {r.get('grid')} warps {r.get('num_warps')} "
                  f"stages {r.get('num_stages')} pdl {r.get('launch_pdl')} | AOT {r.get('aot_variant')}: {diffs}{regs}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
