"""How py_vllm presents linstate's contract to vLLM's kernels: pure integer arithmetic (slot
maps, the one base a per-token state index addresses, launch choices copied from vLLM's
wrappers). No torch, no GPU: unit-tested on the host (tests/peers/test_py_vllm.py).

vLLM indexes one state tensor per layer by block id, and block 0 is its null block
(NULL_BLOCK_ID = 0; the GDN/KDA kernels skip an index <= 0, the conv and SSU kernels skip
index == 0). py_vllm declares the `null_slot0` cap, so the bench holds slot 0 of its pool as vLLM
does and never hands it out: a real row's slot s >= 1 is vLLM's block id as it is, on linstate's
own state buffer. A padding row (slot -1) becomes the null block 0.

Target verify: vLLM writes the state after draft token t to the block in column t of a 2-D index
row and reads the initial state from column num_accepted - 1. linstate reads state[s] and writes
inter[s][t]. Both are addressed from one base when the row has T + 1 columns: columns 0..T-1 name
inter[s][t], column T names state[s], and num_accepted = T + 1. Kernels with separate initial
and final state pointers (GDN) take linstate's two buffers; kernels with one state pointer (KDA,
SSU) take the lower of the two buffers as base, in units of the largest stride g dividing every
offset. vLLM builds these rows once per step in its metadata builder; py_vllm builds them once
per case (outside the timed calls).
"""
import math


class Unsupported(Exception):
    """The case cannot be presented to vLLM's kernel: the op returns 2 (LS_OP_UNSUPPORTED)."""


INT32_MAX = 2**31 - 1


def next_power_of_2(n):
    return 1 << (int(n) - 1).bit_length() if n > 0 else 1


def cdiv(a, b):
    return -(-a // b)


class IndexPlan:
    """One index row per request: columns 0..n_inter-1 = inter_off + s*inter_mul + t*step,
    the last column (or the only one when n_inter == 0) = state_off + s*state_mul; every column
    0 when s < 0. Built on the device by py_vllm's index kernel from linstate's slot_idx."""

    def __init__(self, n_inter, inter_off, inter_mul, step, state_off, state_mul):
        self.n_inter, self.inter_off, self.inter_mul, self.step = n_inter, inter_off, inter_mul, step
        self.state_off, self.state_mul = state_off, state_mul

    @property
    def cols(self):
        return self.n_inter + 1

    def row(self, s):
        """The host rendering of one row (the device kernel computes the same)."""
        if s < 0:
            return [0] * self.cols
        return [self.inter_off + s * self.inter_mul + t * self.step for t in range(self.n_inter)] + \
               [self.state_off + s * self.state_mul]

    def check(self, slots):
        """Every index of the slots a row can have (1..slots-1: slot 0 is held) must be >= 1, so
        no real row is vLLM's null block, and fit int32 (the kernels load int32)."""
        if slots <= 1:
            raise Unsupported(f"the state view has {slots} slots: none besides the null slot 0")
        lo = min(self.row(1))
        hi = max(self.row(slots - 1))
        if lo < 1:
            raise Unsupported(f"index {lo} would be vLLM's null block")
        if hi > INT32_MAX:
            raise Unsupported(f"index {hi} past int32 (vLLM's block ids are int32)")


def decode_plan():
    """T = 1: one column, index = s on linstate's state buffer (slot 0 held by the bench), a
    padding row's -1 -> the null block 0."""
    return IndexPlan(0, 0, 0, 0, 0, 1)


def split_verify_plan(T, item, inter_stride_slot):
    """Verify with separate initial (h0 = state) and final (ht = inter) state pointers (GDN's
    sigmoid-gating kernel), ht stride = item: column t = s*(inter_stride_slot/item) + t, column
    T = s."""
    if inter_stride_slot % item:
        raise Unsupported(f"inter slot stride {inter_stride_slot} is not a multiple of the state size {item}")
    return IndexPlan(T, 0, inter_stride_slot // item, 1, 0, 1)


def common_base(state_addr, inter_addr, elem, state_stride_slot, item, inter_stride_slot):
    """One base and stride addressing state[s] (state_addr + s*state_stride_slot elements) and
    inter[s][t] (inter_addr + (s*inter_stride_slot + t*item) elements). Returns (base_addr,
    g, state_off, inter_off) with g the stride in elements and base the lower buffer (an
    allocation's start: Triton checks the pointer); slot 0 is never a row, so no real index is 0."""
    diff = state_addr - inter_addr
    if diff % elem:
        raise Unsupported(f"state and inter are {diff} bytes apart, not a whole number of elements")
    g = math.gcd(math.gcd(state_stride_slot, item), math.gcd(inter_stride_slot, abs(diff) // elem))
    base = min(state_addr, inter_addr)
    return base, g, (state_addr - base) // (g * elem), (inter_addr - base) // (g * elem)


def common_verify_plan(T, state_addr, inter_addr, elem, state_stride_slot, item, inter_stride_slot):
    base, g, s_off, i_off = common_base(state_addr, inter_addr, elem, state_stride_slot, item,
                                        inter_stride_slot)
    plan = IndexPlan(T, i_off, inter_stride_slot // g, item // g, s_off, state_stride_slot // g)
    return base, g, plan


# ------------------------------------------------ launch choices, as vLLM 0.33.0's wrappers

def gdn_packed_decode_launch(B, HV, K, V, sm_major):
    """fused_recurrent_gated_delta_rule_packed_decode (third_party/flash_linear_attention/ops/
    fused_recurrent.py): BV = min(pow2(V), 32) (4/8 only on sm_100 family at K = V = 128),
    1 warp, 3 stages; grid (NV, B*HV) or (NV, HV, B) past 65535."""
    BK = next_power_of_2(K)
    if cdiv(K, BK) != 1:
        raise Unsupported(f"K={K}: packed decode supports one K block only")
    BV = min(next_power_of_2(V), 32)
    if K == V == 128 and sm_major == 10:
        raise Unsupported("the sm_100 BV table is not mirrored (py_vllm targets sm_90)")
    NV = cdiv(V, BV)
    split = B * HV > 65535
    grid = (NV, HV, B) if split else (NV, B * HV)
    return dict(BK=BK, BV=BV, num_warps=1, num_stages=3, grid=grid, split=split)


def gdn_sigmoid_gating_launch(N, HV, K, V):
    """fused_sigmoid_gating_delta_rule_update (.../fused_sigmoid_gating.py): BK = pow2(K)
    (NK must be 1), BV = min(pow2(V), 32), 4 warps, 3 stages, grid (NK, NV, N*HV)."""
    BK = next_power_of_2(K)
    if cdiv(K, BK) != 1:
        raise Unsupported(f"K={K}: NK > 1 is not supported by vLLM's kernel")
    BV = min(next_power_of_2(V), 32)
    return dict(BK=BK, BV=BV, num_warps=4, num_stages=3, grid=(1, cdiv(V, BV), N * HV))


def kda_packed_decode_launch(B, H, K, V):
    """fused_recurrent_kda_packed_decode (models/kimi_k3/nvidia/ops/third_party/kda/
    fused_recurrent.py): BK = pow2(K), BV = min(pow2(V), 32), 4 warps, 2 stages,
    grid (cdiv(V, BV), B*H)."""
    BV = min(next_power_of_2(V), 32)
    return dict(BK=next_power_of_2(K), BV=BV, num_warps=4, num_stages=2, grid=(cdiv(V, BV), B * H))


def kda_verify_launch(N, H, K, V):
    """fused_recurrent_kda_fwd with the gate in the kernel (what fused_recurrent_kda passes):
    H*N <= 48 -> BV 4, 4 stages; <= 96 -> 8, 3; <= 192 -> 16, 3; else 8, 3; 1 warp;
    grid (cdiv(V, BV)*N*H,)."""
    hs = H * N
    if hs <= 48:
        BV, stages = 4, 4
    elif hs <= 96:
        BV, stages = 8, 3
    elif hs <= 192:
        BV, stages = 16, 3
    else:
        BV, stages = 8, 3
    return dict(BK=next_power_of_2(K), BV=BV, num_warps=1, num_stages=stages, grid=(cdiv(V, BV) * N * H,))


def conv_update_launch(B, C):
    """causal_conv1d_update (model_executor/layers/mamba/ops/causal_conv1d.py): BLOCK_N 256,
    grid (B, cdiv(C, 256)), Triton's default 4 warps."""
    return dict(BLOCK_N=256, grid=(B, cdiv(C, 256)))


# ------------------------------------------------ what a row of this impl includes

KERNELS = {
    "gdn_packed": "fused_recurrent_gated_delta_rule_packed_decode_kernel",
    "gdn_sigmoid": "fused_sigmoid_gating_delta_rule_update_kernel",
    "kda_packed": "fused_recurrent_kda_packed_decode_kernel",
    "kda_verify": "fused_recurrent_kda_fwd_kernel",
    "conv": "_causal_conv1d_update_kernel",
    "ssu": "_selective_scan_update_kernel",
}


def explain(route, extra=()):
    """The CSV kernel column: vLLM's kernel, then each extra launch the row also times."""
    return " + ".join([KERNELS[route]] + list(extra))
