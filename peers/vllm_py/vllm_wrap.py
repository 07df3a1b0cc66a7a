"""py_vllm's `launch=wrapper` route: each decode op (T = 1) calls vLLM 0.33.0's own wrapper
function on linstate's tensors, shaped as vLLM's layers hand them (docs/peers.md "vLLM",
"Fidelity"). The kernel route (py_vllm.py) launches the same kernels with the launch choices
copied from these wrappers (vllm_plan.py); this route is the check that the copy is the wrapper's:
tests/peers/test_py_vllm_compile.py compiles both routes and requires the same specialization.

What the four decode wrappers do on a call, read from the source (none allocates device memory
or reads the device when its output is given, so graph rows capture them like the kernel route):

* fused_recurrent_gated_delta_rule_packed_decode (third_party/flash_linear_attention/ops/
  fused_recurrent.py): argument checks (ndim, strides, shapes, devices), the launch; `out` given.
* fused_recurrent_kda_packed_decode (models/kimi_k3/nvidia/ops/third_party/kda/
  fused_recurrent.py): checks, the launch; `out` given (None would be a torch.empty per call).
* selective_state_update (model_executor/layers/mamba/ops/mamba_ssm.py): unsqueeze views, shape
  asserts, the per-GPU config lookup (cached), `torch.accelerator.device_index`, the launch.
* causal_conv1d_update (model_executor/layers/mamba/ops/causal_conv1d.py): `x.to(state dtype)`
  (the same tensor for a bf16 state: no copy), the launch, `out.to(x dtype)` (the same tensor).
  vLLM's decode passes out=None, so the wrapper writes the output into x in place; linstate's
  output is y, so this route passes out=y (the wrapper's own argument): the same kernel, whose
  output pointer is then not x's.

Verify (T > 1) and the GDN sigmoid-gating decode are refused in this mode (REFUSE says why).
Views of linstate's tensors are made once per case (host side, never timed work).
"""
from vllm_plan import KERNELS, Unsupported

# op -> (module key in vllm_load.KERNEL_FILES, wrapper name, vllm_plan.KERNELS route, what the call adds)
WRAPPERS = {
    "gdn": ("fla_fused_recurrent", "fused_recurrent_gated_delta_rule_packed_decode", "gdn_packed",
            "host: argument checks; out given, no allocation"),
    "kda": ("kda_fused_recurrent", "fused_recurrent_kda_packed_decode", "kda_packed",
            "host: argument checks; out given, no allocation"),
    "ssu": ("mamba_ssm", "selective_state_update", "ssu",
            "host: unsqueeze views, asserts, config lookup, device_index; out given, no allocation"),
    "conv_update": ("conv1d", "causal_conv1d_update", "conv",
                    "out=y (vLLM's decode passes none and writes into x: same kernel); "
                    "host: x.to(bf16) is x, no allocation"),
}

REFUSE = {
    "gdn_verify": "launch=wrapper: vLLM's verify wrapper fused_sigmoid_gating_delta_rule_update allocates its "
                  "output (q.new_empty) and takes one state tensor for its 2-D index; linstate's verify spans "
                  "two buffers (state, inter)",
    "gdn_unpacked": "launch=wrapper: vLLM's unpacked decode wrapper fused_sigmoid_gating_delta_rule_update "
                    "allocates its output (q.new_empty) per call: it cannot write linstate's o",
    "verify": "launch=wrapper: vLLM's verify wrapper takes one state tensor for its 2-D index; linstate's "
              "verify spans two buffers (state, inter), which no tensor a wrapper takes addresses",
}


def explain(op, extra=""):
    """The CSV kernel column of a wrapper-mode row: the wrapper, the kernel it launches, what the
    call adds on the host."""
    _, fn, route, adds = WRAPPERS[op]
    return f"{fn} (vLLM's wrapper) -> {KERNELS[route]}{extra}; {adds}"


def _raw(torch, addr, dtype, shape, strides):
    """A view of linstate's memory at addr wider than any tensor the bridge made there (vLLM's
    packed q|k|v row starts at q and runs past q's own extent)."""
    n = (sum((d - 1) * s for d, s in zip(shape, strides)) + 1) * dtype.itemsize
    cai = type("Cai", (), {"__cuda_array_interface__": {
        "shape": (n,), "typestr": "|u1", "data": (int(addr), False), "version": 3, "strides": None}})()
    return torch.as_tensor(cai).view(dtype).as_strided(tuple(shape), tuple(strides))


class Wrappers:
    """The wrapper calls of one py_vllm instance (inst: its modules, its per-case caches)."""

    def __init__(self, inst):
        self.inst = inst
        self.args = {}  # (op, tensor addresses, B) -> the wrapper's arguments, for one case

    def case_begin(self):
        self.args.clear()

    def _args(self, op, p, tensors, make):
        import torch
        key = (op, p.batch) + tuple(t.data_ptr() if t is not None else 0 for t in tensors)
        a = self.args.get(key)
        if a is None:
            a = self.args[key] = make(torch)
        return a

    def _fn(self, op):
        mod, fn, _, _ = WRAPPERS[op]
        return getattr(self.inst.mods[mod], fn)

    def gdn(self, p, row):
        B, H, HV, K, V = p.batch, p.heads_qk, p.heads_v, p.dk, p.dv

        def make(torch):
            # qwen_gdn_linear_attn._forward_core_decode_non_spec: mixed_qkv [B, 2HK + HV*V] (the conv
            # output), a and b [B, HV], out [B, 1, HV, V], the whole state pool, 1-D block ids
            return dict(mixed_qkv=_raw(torch, row[0], p.q.dtype, (B, 2 * H * K + HV * V), (row[1], 1)),
                        a=p.a[:, 0], b=p.b[:, 0], A_log=p.A_log, dt_bias=p.dt_bias, scale=p.scale,
                        initial_state=p.state, out=p.o, ssm_state_indices=p.slot_idx,
                        use_qk_l2norm_in_kernel=True)
        used = (p.q, p.a, p.b, p.A_log, p.dt_bias, p.o, p.state, p.slot_idx)
        self._fn("gdn")(**self._args("gdn", p, used, make))
        return 0

    def kda(self, p, row):
        B, H, K, V = p.batch, p.heads_qk, p.dk, p.dv

        def make(torch):
            # kimi_gdn_linear_attn decode: mixed_qkv [B, 2HK + HV], raw gate [1, B, H, K], raw beta
            # [1, B, H], lower_bound None (Kimi-Linear's softplus gate)
            return dict(mixed_qkv=_raw(torch, row[0], p.q.dtype, (B, 2 * H * K + H * V), (row[1], 1)),
                        raw_g=p.a[None, :, 0], raw_beta=p.b[None, :, 0], A_log=p.A_log, dt_bias=p.dt_bias,
                        lower_bound=None, initial_state=p.state, state_indices=p.slot_idx, scale=p.scale,
                        out=p.o)
        used = (p.q, p.a, p.b, p.A_log, p.dt_bias, p.o, p.state, p.slot_idx)
        self._fn("kda")(**self._args("kda", p, used, make))
        return 0

    @staticmethod
    def ssu_check():
        """selective_state_update enters torch.accelerator.device_index (a recent torch's)."""
        import torch
        if not hasattr(getattr(torch, "accelerator", None), "device_index"):
            raise Unsupported(f"launch=wrapper: torch {getattr(torch, '__version__', '?')} has no "
                              "torch.accelerator.device_index, which vLLM's selective_state_update enters")

    def ssu(self, p, idx):
        B, nh, hd, ds = p.batch, p.nheads, p.head_dim, p.dstate

        def make(torch):
            # mamba_mixer2 decode: x/z/out [B, nh, hd], dt [B, nh] expanded over hd, A [nh] over
            # (hd, ds), dt_bias and D over hd (stride 0: TIE_HDIM), B/C [B, ng, ds]; the padding
            # map -1 -> 0 as [B, 1] (the kernel route's index rows)
            return (p.state, p.x[:, 0], p.dt[:, 0, :, None].expand(B, nh, hd),
                    p.A[:, None, None].expand(nh, hd, ds), p.Bm[:, 0], p.Cm[:, 0],
                    p.D[:, None].expand(nh, hd), p.dt_bias[:, None].expand(nh, hd)), \
                dict(z=p.z[:, 0] if p.z is not None else None, dt_softplus=True,
                     state_batch_indices=idx, out=p.y[:, 0])
        a, kw = self._args("ssu", p, (p.x, p.dt, p.A, p.Bm, p.Cm, p.D, p.dt_bias, p.z, p.y, p.state, idx),
                           make)
        self._fn("ssu")(*a, **kw)
        return 0

    def conv_update(self, p, idx):
        def make(torch):
            # the decode call of vLLM's GDN/KDA/Mamba2 layers: x [B, C] rows (the wrapper adds the
            # token dim, stride 1), the conv state [slots, C, W-1], the block ids with -1 -> 0
            return (p.x[:, 0], p.state, p.weight, p.bias, "silu" if p.silu else None), \
                dict(conv_state_indices=idx, out=p.y[:, 0])
        a, kw = self._args("conv_update", p, (p.x, p.y, p.state, p.weight, p.bias, idx), make)
        self._fn("conv_update")(*a, **kw)
        return 0
