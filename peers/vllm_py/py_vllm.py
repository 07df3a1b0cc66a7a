"""py_vllm: vLLM 0.33.0's own Triton kernels (GDN, KDA, causal conv1d update, Mamba2 SSU) run
through linstate's Python bridge (docs/plugin-abi.md "Python impls"; contract in
docs/peers.md "vLLM"). The kernel files are imported from the pinned wheel's extracted source
(vllm_load.py: no `import vllm`, a few stubbed vLLM modules); each op launches vLLM's kernel with
the launch choices of vLLM's wrapper (vllm_plan.py) on the bridge's current stream, pointing it
at linstate's memory. The wrappers themselves are not called where they would allocate or copy
what linstate already holds (outputs, the 2-D verify index): the kernel and its launch are the
same as in vLLM; the explain column names every extra launch the row times. py_vllm declares
`null_slot0`: the bench holds slot 0 (vLLM's null block), so the kernels take linstate's state
buffers and slot indices as they are; the 2-D verify rows and the padding map are built once per
case, as vLLM's metadata builder builds them once per step (outside the timed calls). Knob
`launch=wrapper` calls vLLM's own decode wrappers instead (vllm_wrap.py): the fidelity check of
this route.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vllm_load  # noqa: E402
import vllm_plan as plan  # noqa: E402
import vllm_wrap  # noqa: E402
from vllm_plan import Unsupported  # noqa: E402

PIN = "vllm-0.33.0"
REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
UNSUPPORTED = 2


class _Ptr:
    """A pointer Triton launches with (data_ptr + dtype) that no argument tensor is: the packed
    q|k|v row, the common verify base (the lower of linstate's state and inter buffers)."""

    def __init__(self, addr, dtype):
        self.addr, self.dtype = int(addr), dtype

    def data_ptr(self):
        return self.addr


def _index_kernel():
    import triton
    import triton.language as tl

    @triton.jit
    def ls_vllm_index(slot_ptr, out_ptr, n, cols, n_inter, inter_off, inter_mul, step, state_off,
                      state_mul, BLOCK: tl.constexpr):
        # out[r, c] = vllm_plan.IndexPlan.row(slot[r])[c]: ours, not vLLM's (vLLM builds these
        # rows once per step in its metadata builder; py_vllm once per case, never timed)
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n * cols
        r = offs // cols
        c = offs % cols
        s = tl.load(slot_ptr + r, mask=m, other=-1)
        v = tl.where(c < n_inter, inter_off + s * inter_mul + c * step, state_off + s * state_mul)
        tl.store(out_ptr + offs, tl.where(s >= 0, v, 0), mask=m)

    return ls_vllm_index


class Instance:
    def __init__(self, source, runtime, device=None):
        """device: the (major, minor, name, SMs) callable vllm_load.Platform reads (default:
        torch's current device; the host compile test passes an H200's)."""
        if runtime != "cuda":
            raise RuntimeError(f"py_vllm runs on the cuda runtime only (got {runtime!r})")
        self.root = vllm_load.source_root(source, REPO_ROOT, PIN)
        self.mods, self.platform = vllm_load.load(self.root, **({"device": device} if device else {}))
        self.scratch = {}
        self.rows = {}  # index rows per (slot list, plan): valid for one case (case_begin)
        self.index_kernel = _index_kernel()
        self.wrap = vllm_wrap.Wrappers(self)

    def case_begin(self):
        """A new case may hand the same slot-list address with other slots: rebuild the rows (and
        the wrapper route's views)."""
        self.rows.clear()
        self.wrap.case_begin()

    # ------------------------------------------------ persistent device buffers
    def buffer(self, key, make):
        import torch
        t = self.scratch.get(key)
        if t is None:
            if torch.cuda.is_current_stream_capturing():
                raise RuntimeError(f"py_vllm: buffer {key[0]} first needed inside a graph capture; "
                                   "run the case once eagerly first")
            t = self.scratch[key] = make()
        return t

    def indices(self, p, ip):
        """Device rows of IndexPlan ip for p.slot_idx, built by our index kernel on the first call
        of the case with this slot list (the eager verification or warm-up round, never inside a
        graph capture or a timed call) and reused after, as vLLM reuses its step's metadata."""
        import torch
        B = p.batch
        key = (p.slot_idx.data_ptr(), B, ip.cols, ip.inter_off, ip.inter_mul, ip.step, ip.state_off, ip.state_mul)
        out = self.rows.get(key)
        if out is not None:
            return out
        if torch.cuda.is_current_stream_capturing():
            raise RuntimeError("py_vllm: index rows first needed inside a graph capture; "
                               "run the case once eagerly first")
        out = torch.empty((B, ip.cols), dtype=torch.int32, device="cuda")
        n = B * ip.cols
        self.index_kernel[(plan.cdiv(n, 256),)](p.slot_idx, out, B, ip.cols, ip.n_inter, ip.inter_off,
                                                ip.inter_mul, ip.step, ip.state_off, ip.state_mul,
                                                BLOCK=256)
        self.rows[key] = out
        return out

    def verify_meta(self, B, T):
        """cu_seqlens = [0, T, 2T, ...] and num_accepted = T + 1 (read the last column)."""
        import torch
        cu = self.buffer(("cu", B, T), lambda: torch.arange(0, (B + 1) * T, T, dtype=torch.int32, device="cuda"))
        nacc = self.buffer(("nacc", B, T), lambda: torch.full((B,), T + 1, dtype=torch.int32, device="cuda"))
        return cu, nacc

    # ------------------------------------------------ helpers
    @staticmethod
    def decode_final_only(p, op):
        """vLLM's decode kernels always write the final state and no per-step state."""
        if p.disable_state_update or p.inter is not None:
            raise Unsupported(f"vLLM's {op} decode always writes the final state and no per-step state")

    @staticmethod
    def verify_per_token(p, refuse_wrapper, also=""):
        """vLLM's verify writes one state per draft token and nothing else (its wrappers take
        none of linstate's verify: refuse_wrapper names why, or None in kernel mode)."""
        if refuse_wrapper:
            raise Unsupported(refuse_wrapper)
        if p.inter is None or not p.disable_state_update:
            raise Unsupported(f"vLLM's verify writes one state per draft token{also} (needs inter and "
                              "disable_state_update=1)")

    @staticmethod
    def slots(p):
        """Slots of the state view: p.slots, else the extent the bridge gave the state tensor
        (max(slot_idx) + 1 when p.slots is 0); bounds vLLM's int32 block ids."""
        n = p.slots or (p.state.shape[0] if p.state is not None else 0)
        if not n:
            raise Unsupported("the state view's slot count is not known")
        return n

    @staticmethod
    def packed_row(p):
        """The packed q|k|v row (vLLM's conv output) when q, k, v are views into one: (addr,
        token stride); None when they are separate tensors."""
        HK = p.heads_qk * p.dk
        es = p.q.element_size()
        st = p.q_stride_tok
        if not st or p.k_stride_tok != st or p.v_stride_tok != st:
            return None
        q = p.q.data_ptr()
        if p.k.data_ptr() != q + HK * es or p.v.data_ptr() != q + 2 * HK * es:
            return None
        return q, st

    def sm_major(self):
        return self.platform.get_device_capability().major

    # ------------------------------------------------ GDN
    # Each op takes dry=True for the explain column (the bench asks before the op runs): every check
    # and the route, returned as the kernel text, before anything is allocated or launched.
    def gdn(self, p, tuning, dry=False):
        if p.state_layout != "vk":
            raise Unsupported("vLLM keeps GDN states [HV, V, K] (vk)")
        B, T, H, HV, K, V = p.batch, p.tokens, p.heads_qk, p.heads_v, p.dk, p.dv
        item = HV * K * V
        slots = self.slots(p)
        fr = self.mods["fla_fused_recurrent"]
        sg = self.mods["fla_sigmoid_gating"]
        wrap = _wrapper(tuning)
        if T == 1:
            self.decode_final_only(p, "GDN")
            plan.decode_plan().check(slots)
            idx = p.slot_idx  # slot s is block s (slot 0 held); padding -1 <= 0 is skipped
            row = self.packed_row(p)
            if row is not None and tuning.get("gdn.decode", "auto") == "auto":
                if not p.o.is_contiguous():
                    raise Unsupported("vLLM's packed decode writes a contiguous [B, 1, HV, V] output")
                L = plan.gdn_packed_decode_launch(B, HV, K, V, self.sm_major())
                if wrap:
                    return vllm_wrap.explain("gdn") if dry else self.wrap.gdn(p, row)
                if dry:
                    return plan.explain("gdn_packed")
                fr.fused_recurrent_gated_delta_rule_packed_decode_kernel[L["grid"]](
                    mixed_qkv=_Ptr(row[0], p.q.dtype), a=p.a, b=p.b, A_log=p.A_log, dt_bias=p.dt_bias,
                    o=p.o, h0=p.state, ht=p.state, ssm_state_indices=idx, scale=p.scale,
                    stride_mixed_qkv_tok=row[1], stride_a_tok=HV, stride_b_tok=HV,
                    stride_init_state_token=p.state_stride_slot, stride_final_state_token=p.state_stride_slot,
                    stride_indices_seq=1, H=H, HV=HV, K=K, V=V, BK=L["BK"], BV=L["BV"],
                    SOFTPLUS_THRESHOLD=20.0, USE_QK_L2NORM_IN_KERNEL=True, SPLIT_BATCH_HEAD_GRID=L["split"],
                    num_warps=L["num_warps"], num_stages=L["num_stages"])
                return 0
            if wrap:
                raise Unsupported(vllm_wrap.REFUSE["gdn_unpacked"])
            L = plan.gdn_sigmoid_gating_launch(B, HV, K, V)
            if dry:
                return plan.explain("gdn_sigmoid", self._copy_note(p))
            q, k, v = self._contiguous_qkv(p, "gdn")
            sg.fused_sigmoid_gating_delta_rule_update_kernel[L["grid"]](
                A_log=p.A_log, a=p.a, b=p.b, dt_bias=p.dt_bias, beta=1.0, threshold=20.0,
                q=q, k=k, v=v, o=p.o, h0=p.state, ht=p.state, cu_seqlens=None, ssm_state_indices=idx,
                num_accepted_tokens=None, scale=p.scale, N=B, T=1, B=B, H=H, HV=HV, K=K, V=V,
                BK=L["BK"], BV=L["BV"], stride_init_state_token=p.state_stride_slot,
                stride_final_state_token=p.state_stride_slot, stride_indices_seq=1, stride_indices_tok=1,
                INPLACE_FINAL_STATE=True, USE_QK_L2NORM_IN_KERNEL=True, IS_KDA=False,
                num_warps=L["num_warps"], num_stages=L["num_stages"])
            return 0
        # target verify: vLLM's Triton spec path (the sm_90 default is a compiled CUDA op)
        self.verify_per_token(p, wrap and vllm_wrap.REFUSE["gdn_verify"],
                              "; linstate's final-state update as well is not its work")
        ip = plan.split_verify_plan(T, item, p.inter_stride_slot)
        ip.check(slots)
        L = plan.gdn_sigmoid_gating_launch(B, HV, K, V)
        if dry:
            # vLLM's default here (K = V = 128, HV/H in {1,2,3,4,8}, T <= 8) is its compiled CUDA
            # fused_gdn_decode_post_conv_mtp with the gated RMSNorm fused: not in the wheel's source
            cuda = K == V == 128 and HV % H == 0 and HV // H in (1, 2, 3, 4, 8) and T <= 8
            return plan.explain("gdn_sigmoid", self._copy_note(p)) + \
                (" (vLLM's Triton spec path; its sm_90 default for this shape is a compiled CUDA op +norm, "
                 "not run)" if cuda else "")
        idx = self.indices(p, ip)
        cu, nacc = self.verify_meta(B, T)
        q, k, v = self._contiguous_qkv(p, "gdn")
        sg.fused_sigmoid_gating_delta_rule_update_kernel[L["grid"]](
            A_log=p.A_log, a=p.a, b=p.b, dt_bias=p.dt_bias, beta=1.0, threshold=20.0,
            q=q, k=k, v=v, o=p.o,
            h0=p.state, ht=p.inter,
            cu_seqlens=cu, ssm_state_indices=idx, num_accepted_tokens=nacc, scale=p.scale,
            N=B, T=B * T, B=1, H=H, HV=HV, K=K, V=V, BK=L["BK"], BV=L["BV"],
            stride_init_state_token=p.state_stride_slot, stride_final_state_token=item,
            stride_indices_seq=ip.cols, stride_indices_tok=1,
            INPLACE_FINAL_STATE=True, USE_QK_L2NORM_IN_KERNEL=True, IS_KDA=False,
            num_warps=L["num_warps"], num_stages=L["num_stages"])
        return 0

    def _contiguous_qkv(self, p, tag):
        """The sigmoid-gating kernel reads contiguous q/k/v; vLLM's wrapper calls .contiguous()
        on its packed views, i.e. copies: the same copy here, into persistent buffers."""
        import torch
        out = []
        for name in ("q", "k", "v"):
            t = getattr(p, name)
            if t.is_contiguous():
                out.append(t)
                continue
            buf = self.buffer((tag + name, tuple(t.shape)),
                              lambda t=t: torch.empty(t.shape, dtype=t.dtype, device=t.device))
            buf.copy_(t)
            out.append(buf)
        return out

    @staticmethod
    def _copy_note(p):
        return [] if p.q.is_contiguous() and p.k.is_contiguous() and p.v.is_contiguous() \
            else ["q/k/v .contiguous() copies (vLLM's wrapper)"]

    # ------------------------------------------------ KDA
    def kda(self, p, tuning, dry=False):
        if p.state_layout != "vk":
            raise Unsupported("vLLM keeps KDA states [H, V, K] (vk)")
        B, T, H, HV, K, V = p.batch, p.tokens, p.heads_qk, p.heads_v, p.dk, p.dv
        if H != HV:
            raise Unsupported(f"vLLM's KDA kernels take H == HV (got H={H}, HV={HV})")
        sdt = p.state.dtype
        es = p.state.element_size()
        item = HV * K * V
        slots = self.slots(p)
        m = self.mods["kda_fused_recurrent"]
        row = self.packed_row(p)
        pdl = self.sm_major() >= 9
        wrap = _wrapper(tuning)
        if T == 1:
            self.decode_final_only(p, "KDA")
            if row is None:
                raise Unsupported("vLLM's KDA decode reads the packed q|k|v conv output row "
                                  "(the bench lays it out for impls with qkv_strides)")
            plan.decode_plan().check(slots)
            L = plan.kda_packed_decode_launch(B, H, K, V)
            if wrap:
                return vllm_wrap.explain("kda") if dry else self.wrap.kda(p, row)
            if dry:
                return plan.explain("kda_packed")
            idx = p.slot_idx  # slot s is block s (slot 0 held); padding -1 <= 0 is skipped
            m.fused_recurrent_kda_packed_decode_kernel[L["grid"]](
                mixed_qkv=_Ptr(row[0], p.q.dtype), raw_g=p.a, raw_beta=p.b, A_log=p.A_log,
                dt_bias=p.dt_bias, out=p.o, state=p.state,
                state_indices=idx, lower_bound=0.0, scale=p.scale, stride_mixed_token=row[1],
                stride_g_token=H * K, stride_beta_token=H, stride_state_token=p.state_stride_slot,
                stride_state_indices=1, H=H, K=K, V=V, BK=L["BK"], BV=L["BV"], SOFTPLUS_THRESHOLD=20.0,
                USE_LOWER_BOUND=False, num_warps=L["num_warps"], num_stages=L["num_stages"],
                launch_pdl=pdl)
            return 0
        self.verify_per_token(p, wrap and vllm_wrap.REFUSE["verify"])
        base, g, ip = plan.common_verify_plan(T, p.state.data_ptr(), p.inter.data_ptr(), es,
                                              p.state_stride_slot, item, p.inter_stride_slot)
        ip.check(slots)
        st = row[1] if row is not None else p.q.stride(1)
        if row is None and not (p.k.stride(1) == st and p.v.stride(1) == st):
            raise Unsupported("vLLM's KDA verify reads q, k, v with one token stride")
        L = plan.kda_verify_launch(B, H, K, V)
        if dry:
            return plan.explain("kda_verify")
        idx = self.indices(p, ip)
        cu, nacc = self.verify_meta(B, T)
        m.fused_recurrent_kda_fwd_kernel[L["grid"]](
            q=p.q, k=p.k, v=p.v, g=p.a, beta=p.b, A_log=p.A_log, dt_bias=p.dt_bias, out=p.o,
            state=_Ptr(base, sdt), cu_seqlens=cu, state_indices=idx, num_accepted_tokens=nacc,
            lower_bound=None, scale=p.scale, N=B, T=B * T, H=H, K=K, V=V, BK=L["BK"], BV=L["BV"],
            stride_qkv_token=st, stride_g_token=H * K, stride_beta_token=H, stride_out_token=HV * V,
            stride_state_token=g, stride_indices_seq=ip.cols, USE_QK_L2NORM_IN_KERNEL=True,
            USE_GATE_IN_KERNEL=True, APPLY_BETA_SIGMOID=True, num_warps=L["num_warps"],
            num_stages=L["num_stages"], launch_pdl=pdl)
        return 0

    # ------------------------------------------------ causal conv1d update
    def conv_update(self, p, tuning, dry=False):
        if p.tokens != 1:
            raise Unsupported("vLLM's conv verify keeps the draft windows in a longer conv state "
                              "(W-1+T-1 columns, num_accepted_tokens), not per-step windows")
        if p.disable_state_update or p.inter is not None:
            raise Unsupported("vLLM's conv update always shifts the state and writes no windows")
        if p.state_dtype != "bf16":
            raise Unsupported("vLLM converts x to the conv state's dtype (a copy) for a non-bf16 state")
        B, C, W = p.batch, p.channels, p.width
        slots = self.slots(p)
        ip = plan.decode_plan()
        ip.check(slots)
        L = plan.conv_update_launch(B, C)
        wrap = _wrapper(tuning)
        if dry:
            return vllm_wrap.explain("conv_update") if wrap else plan.explain("conv")
        idx = self.indices(p, ip)[:, 0]  # padding -1 -> the null block 0 (the kernel skips == 0)
        if wrap:
            return self.wrap.conv_update(p, idx)
        m = self.mods["conv1d"]
        # token strides 1: vLLM's layers hand the decode rows as x [B, C] and the wrapper adds the
        # token dim with unsqueeze(-1), stride 1. At T = 1 it addresses nothing, but Triton
        # specialises integer arguments (linstate's C would be /16, another binary)
        m._causal_conv1d_update_kernel[L["grid"]](
            p.x, p.weight, p.bias, p.state, idx, None, None, p.y,
            B, C, 1, W - 1, slots,
            p.x_stride_b, p.x_stride_c, 1, p.weight.stride(0), p.weight.stride(1),
            p.state_stride_slot, p.state_stride_c, p.state_stride_w, 1,
            p.y_stride_b, p.y_stride_c, 1,
            vllm_load.NULL_BLOCK_ID,
            HAS_BIAS=p.bias is not None, KERNEL_WIDTH=W, SILU_ACTIVATION=bool(p.silu), IS_VARLEN=False,
            IS_SPEC_DECODING=False, NP2_STATELEN=plan.next_power_of_2(W - 1), HAS_NULL_BLOCK=True,
            BLOCK_N=L["BLOCK_N"], launch_pdl=self.sm_major() >= 9)
        return 0

    # ------------------------------------------------ Mamba2 SSU
    def ssu(self, p, tuning, dry=False):
        B, T, nh, hd, ds, ng = p.batch, p.tokens, p.nheads, p.head_dim, p.dstate, p.ngroups
        slots = self.slots(p)
        sdt = p.state.dtype
        es = p.state.element_size()
        item = nh * hd * ds
        m = self.mods["mamba_ssm"]
        cache_dtype = "float32" if p.state_dtype == "fp32" else "bfloat16"
        bsm, warps = m.try_get_optimal_ssm_config(hd, ds, B, nh, cache_dtype, False)
        wrap = _wrapper(tuning)
        if T == 1:
            self.decode_final_only(p, "SSU")
            ip = plan.decode_plan()
            base, sstride, cu, nacc = p.state.data_ptr(), p.state_stride_slot, None, None
        else:
            self.verify_per_token(p, wrap and vllm_wrap.REFUSE["verify"])
            base, sstride, ip = plan.common_verify_plan(T, p.state.data_ptr(), p.inter.data_ptr(), es,
                                                        p.state_stride_slot, item, p.inter_stride_slot)
        ip.check(slots)
        table = f" (BLOCK_SIZE_M {bsm}, {warps} warps: vLLM's table)"
        if wrap:
            self.wrap.ssu_check()
        if dry:
            return vllm_wrap.explain("ssu", table) if wrap else plan.explain("ssu") + table
        if T > 1:
            cu, nacc = self.verify_meta(B, T)
        idx = self.indices(p, ip)
        if wrap:
            return self.wrap.ssu(p, idx)
        # vLLM's mixer: dt, dt_bias, A, D broadcast over head_dim (and A over dstate) with stride 0
        # -> TIE_HDIM; x/z/y [tokens, nh, hd]; Bm/Cm [tokens, ng, ds]
        grid = (plan.cdiv(hd, bsm), B, nh)
        z = p.z
        m._selective_scan_update_kernel[grid](
            _Ptr(base, sdt), None, p.x, p.dt, p.dt_bias, p.A, p.Bm, p.Cm, p.D, z, p.y,
            idx, idx, vllm_load.NULL_BLOCK_ID, nacc, cu,
            B, nh, hd, ds, nh // ng,
            sstride, hd * ds, ds, 1,
            nh * hd, hd, 1,
            nh, 1, 0,
            1, 0,
            1, 0, 0,
            ng * ds, ds, 1,
            ng * ds, ds, 1,
            1, 0,
            *((nh * hd, hd, 1) if z is not None else (0, 0, 0)),
            nh * hd, hd, 1,
            ip.cols, 1, ip.cols, 1,
            True, True, bsm,
            num_warps=warps, USE_RS_ROUNDING=False, PHILOX_ROUNDS=0)
        return 0


def _wrapper(tuning):
    """Knob launch: kernel (default) or wrapper (vLLM's own decode wrappers, vllm_wrap.py)."""
    return tuning.get("launch", "kernel") == "wrapper"


def _op(inst, name):
    f = getattr(inst, name)

    def call(p, tuning):
        try:
            return f(p, tuning)
        except Unsupported:
            return UNSUPPORTED  # nothing written; the explain column says why
    return call


def _explain(inst, op, p, tuning):
    """The CSV kernel column, from p alone (asked before the op runs): vLLM's kernel and every
    extra launch the row times, or why the case is refused."""
    f = getattr(inst, op, None)
    if f is None or op not in LAYOUT:
        return ""
    try:
        return f(p, tuning, dry=True)
    except Unsupported as e:
        return f"refused: {e}"


LAYOUT = {
    "gdn": "state vk [slot, HV, V, K] (vLLM's); slot s = block s, slot 0 held as vLLM's null block",
    "kda": "state vk [slot, H, V, K]; slot s = block s, slot 0 held as vLLM's null block",
    "conv_update": "conv state [slot, C, W-1] as given; slot s = block s, slot 0 held (null), padding -> 0",
    "ssu": "state [slot, nh, hd, ds]; dt/dt_bias/A/D broadcast over hd (TIE_HDIM); slot s = block s, slot 0 held",
}


def linstate_impl(source, runtime):
    inst = Instance(source, runtime)
    ops = {n: _op(inst, n) for n in ("gdn", "kda", "conv_update", "ssu")}
    return {
        "name": "py_vllm",
        # op.py picks fast-math exp/log at import under FLA_USE_FAST_OPS=1: said, never silent
        "version": "vllm 0.33.0 (Triton kernels from the wheel's source)"
                   + (" FLA_USE_FAST_OPS=1" if os.environ.get("FLA_USE_FAST_OPS", "0") == "1" else ""),
        "source": {"path": inst.root, "version": PIN, "git_describe": "",
                   "files": vllm_load.source_files(inst.root)},
        "caps": ["graph", "vk", "qkv_strides", "null_slot0"],
        "case_begin": inst.case_begin,
        "knobs": [("gdn.decode", "auto|unpacked",
                   "GDN decode: auto = vLLM's packed decode on packed q|k|v rows (its default), "
                   "unpacked = its sigmoid-gating kernel (VLLM_ENABLE_FLA_PACKED_RECURRENT_DECODE=0)"),
                  ("launch", "kernel|wrapper",
                   "kernel = vLLM's kernels launched with its wrappers' choices (vllm_plan.py); wrapper = "
                   "vLLM's own decode wrapper functions on the same tensors (T = 1 only: the fidelity check)")],
        "ops": ops,
        "explain": lambda op, p, tuning: _explain(inst, op, p, tuning),
        "layout": lambda op: LAYOUT.get(op, ""),
    }
