"""conv_triton.py: the Triton kernel of conv_update.py for the cuda runtime (width 4 only: other
widths answer 2, unsupported). One program per (request row, block of channels); it launches on
the current stream (linstate's) and allocates nothing, so it can be captured in a CUDA graph."""
import triton
import triton.language as tl


@triton.jit
def _conv4(x, y, w, bias, st, idx, inter, T, C, sxb, sxt, sxc, syb, syt, syc, ss, sc, sw,
           si, sit, sic, siw, SILU: tl.constexpr, HAS_BIAS: tl.constexpr, HAS_INTER: tl.constexpr,
           UPDATE: tl.constexpr, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    c = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    m = c < C
    slot = tl.load(idx + r).to(tl.int64)
    if slot >= 0:  # padding rows (-1): nothing read or written
        sp = st + slot * ss + c * sc
        s0 = tl.load(sp, mask=m).to(tl.float32)
        s1 = tl.load(sp + sw, mask=m).to(tl.float32)
        s2 = tl.load(sp + 2 * sw, mask=m).to(tl.float32)
        w0 = tl.load(w + c * 4, mask=m).to(tl.float32)
        w1 = tl.load(w + c * 4 + 1, mask=m).to(tl.float32)
        w2 = tl.load(w + c * 4 + 2, mask=m).to(tl.float32)
        w3 = tl.load(w + c * 4 + 3, mask=m).to(tl.float32)
        b = tl.load(bias + c, mask=m).to(tl.float32) if HAS_BIAS else tl.zeros([BLOCK], tl.float32)
        for t in range(T):
            xt = tl.load(x + r * sxb + t * sxt + c * sxc, mask=m).to(tl.float32)
            acc = b + w0 * s0 + w1 * s1 + w2 * s2 + w3 * xt
            if SILU:
                acc = acc / (1.0 + tl.exp(-acc))
            tl.store(y + r * syb + t * syt + c * syc, acc.to(y.dtype.element_ty), mask=m)
            s0, s1, s2 = s1, s2, xt
            if HAS_INTER:
                ip = inter + slot * si + t * sit + c * sic
                tl.store(ip, s0.to(inter.dtype.element_ty), mask=m)
                tl.store(ip + siw, s1.to(inter.dtype.element_ty), mask=m)
                tl.store(ip + 2 * siw, s2.to(inter.dtype.element_ty), mask=m)
        if UPDATE:
            tl.store(sp, s0.to(st.dtype.element_ty), mask=m)
            tl.store(sp + sw, s1.to(st.dtype.element_ty), mask=m)
            tl.store(sp + 2 * sw, s2.to(st.dtype.element_ty), mask=m)


def conv_update_cuda(p, tuning):
    if p.width != 4:
        return 2
    block = int(tuning["conv.block"])
    inter = p.inter if p.inter is not None else p.state  # unused when HAS_INTER is off
    ist = p.inter.stride() if p.inter is not None else (0, 0, 0, 0)
    _conv4[(p.batch, triton.cdiv(p.channels, block))](
        p.x, p.y, p.weight, p.bias if p.bias is not None else p.weight, p.state, p.slot_idx, inter,
        p.tokens, p.channels, *p.x.stride(), *p.y.stride(), *p.state.stride(), *ist,
        SILU=bool(p.silu), HAS_BIAS=p.bias is not None, HAS_INTER=p.inter is not None,
        UPDATE=not p.disable_state_update, BLOCK=block)
