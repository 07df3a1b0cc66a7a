"""conv_update.py: a Python impl of linstate's causal conv1d update (docs/plugin-abi.md, "Python
impls"). Host runtime: numpy on linstate's host buffers; cuda runtime: the Triton kernel of
conv_triton.py on linstate's device buffers and stream. Load it with
    linstate-bench --impl-path examples/python/conv_update.py --impl pyconv,host ...
"""
import numpy as np


def f32(a, dtype):  # bf16 arrives as raw uint16 bits on the host runtime
    return (a.astype(np.uint32) << 16).view(np.float32) if dtype == "bf16" else a.astype(np.float32)


def store(a, dtype):  # fp32 -> the dtype's host representation (bf16: round to nearest even)
    if dtype != "bf16":
        return a.astype(np.float32)
    u = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def conv_update_host(p, tuning):
    rows = np.nonzero(p.slot_idx >= 0)[0]  # padding rows (slot -1): nothing read or written
    s, T, W, sd = p.slot_idx[rows], p.tokens, p.width, p.state_dtype
    u = np.concatenate([f32(p.state[s], sd), f32(p.x[rows], "bf16").transpose(0, 2, 1)], axis=2)
    w = f32(p.weight, p.weight_dtype)  # [C, W]; u: [rows, C, W-1+T], oldest first
    y = sum(w[None, :, j, None] * u[:, :, j:j + T] for j in range(W))
    if p.bias is not None:
        y = y + f32(p.bias, p.weight_dtype)[None, :, None]
    if p.silu:
        y = y / (1.0 + np.exp(-y))
    p.y[rows] = store(y.transpose(0, 2, 1), "bf16")
    for t in range(T if p.inter is not None else 0):  # the window after token t
        p.inter[s, t] = store(u[:, :, t + 1:t + W], sd)
    if not p.disable_state_update:
        p.state[s] = store(u[:, :, T:T + W - 1], sd)


def linstate_impl(source, runtime):
    if runtime == "cuda":
        from conv_triton import conv_update_cuda as op  # noqa: a sibling module (the bridge adds its folder)
    else:
        op = conv_update_host
    return {
        "name": "pyconv",
        "version": "example 1.0 (" + ("triton" if runtime == "cuda" else "numpy") + ")",
        "caps": ["graph"] if runtime == "cuda" else [],
        "knobs": [("conv.block", "256|128|512", "channels per Triton program (cuda)")],
        "ops": {"conv_update": op},
        "explain": lambda op, p, t: f"pyconv {runtime} B={p.batch} T={p.tokens} C={p.channels} block={t['conv.block']}",
        "layout": lambda op: "x, y [B, T, C] and state [slots, C, W-1] as linstate passes them (strided views)",
    }
