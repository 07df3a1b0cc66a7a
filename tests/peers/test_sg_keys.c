/*
 * test_sg_keys.c — the sglang peer's adapters against the variant table aot.py really generated
 * (build/peers/gen/sglang/tk_table.c; built only when the peer is): every preset shape the spec
 * compiles for conv_update (qwen3-next, kimi-linear per buffer and concatenated, nemotron-h-8b,
 * nemotron-nano-9b-v2 at
 * tp 1, 2, 4, 8, both orientations, T 1..8) and ssu (the three Mamba2 presets, fp32/bf16 state,
 * decode/verify, z for nemotron-h-8b) must plan to a key that is in the table, with the table's
 * num_warps, and marshal for T = 1..8 (fake 16-byte-aligned pointers). The pool state ops
 * (sg_pool.c): every preset's pool at tp 1, 2, 4, 8 with fp32 and bf16 temporal state, spec
 * T = 1..8 and pools of 2 to 20001 slots (the i32/i64 layer strides) must plan every accept
 * scatter, the slot copy and the slot clear to a compiled key and marshal; KDA decode on packed
 * rows (kimi-linear at tp 1, 2, 4, 8, fp32/bf16 state) to the packed kernel; conv_delta (the fused
 * KDA verify: kimi-linear at tp 1, 2, 4, 8, fp32/bf16 state, T 3..8, the bench's layouts) to a
 * compiled key with 4 warps, and marshal. No GPU.
 */
#include <stdio.h>
#include <string.h>
#include "sg_adapt.h"
#include "sg_pool.h"
#include "ls_pool.h"
extern const tk_variant sg_variants[];
extern const int sg_n_variants;
static int miss, hit;
static void conv(int C, int T, int wm, ls_dtype wdt, int bias) {
    ls_conv_params p = {.batch = 3, .tokens = T, .channels = C, .width = 4, .silu = 1, .weight_dtype = wdt, .state_dtype = LS_BF16};
    p.x_stride_b = p.y_stride_b = (long long)T * C; p.x_stride_t = p.y_stride_t = C; p.x_stride_c = p.y_stride_c = 1;
    p.state_stride_slot = 3LL * C; p.state_stride_c = wm ? 1 : 3; p.state_stride_w = wm ? C : 1; p.bias = bias ? (void*)16 : NULL;
    if (T > 1) { p.inter = (void*)16; p.inter_stride_slot = 3LL*T*C; p.inter_stride_t = 3LL*C; p.inter_stride_c = p.state_stride_c; p.inter_stride_w = p.state_stride_w; }
    sg_plan pl; char err[256];
    if (sg_conv_plan(&p, &pl, err, sizeof err)) { printf("plan fail %s\n", err); miss++; return; }
    if (!tk_find(sg_variants, sg_n_variants, pl.kernel, pl.key)) { printf("missing %s\n", pl.key); miss++; } else hit++;
}
static void ssu(const ls_shape *s, ls_dtype sd, int ver, int z) {
    ls_ssu_params p = {.batch = 3, .tokens = ver ? 4 : 1, .nheads = s->nheads, .head_dim = s->head_dim, .dstate = s->dstate, .ngroups = s->ngroups, .state_dtype = sd, .disable_state_update = ver};
    long long item = (long long)s->nheads * s->head_dim * s->dstate;
    p.state_stride_slot = item; if (ver) { p.inter = (void*)16; p.inter_stride_slot = 4 * item; }
    p.z = z ? (void*)16 : NULL;
    sg_plan pl; char err[256];
    if (sg_ssu_plan(&p, &pl, err, sizeof err)) { printf("plan fail %s\n", err); miss++; return; }
    const tk_variant *v = tk_find(sg_variants, sg_n_variants, pl.kernel, pl.key);
    if (!v) { printf("missing %s\n", pl.key); miss++; return; }
    int nw; sg_ssu_block_m(s->dstate, &nw);
    if (nw != v->num_warps) { printf("warps %s %d vs %d\n", pl.key, nw, v->num_warps); miss++; }
    /* marshal with aligned fake pointers */
    ls_ssu_params q = p; q.x = q.dt = q.Bm = q.Cm = q.dt_bias = q.D = (void*)0x1000; q.A = (void*)0x1000; q.y = (void*)0x1000; q.state = (void*)0x1000; q.slot_idx = (void*)0x1000;
    if (ver) q.inter = (void*)0x1000;
    tk_call c; tk_packed pk;
    sg_ssu_args(&q, &pl, v, &c, err, sizeof err);
    for (int T = 1; T <= 8; T++) { q.tokens = T; if (ver) q.inter_stride_slot = 8 * item; sg_ssu_args(&q, &pl, v, &c, err, sizeof err);
      if (tk_marshal(&c, &pk, err, sizeof err)) { printf("marshal %s T=%d: %s\n", pl.key, T, err); miss++; } }
    hit++;
}
/* conv_delta as bench/families/conv_delta.c builds a KDA verify: window-major concat conv pool, vk state */
static void conv_delta(const ls_shape *s, ls_dtype sd, int T) {
    const int C = 2 * s->heads_qk * s->dk + s->heads_v * s->dv; const long long item = (long long)s->heads_v * s->dk * s->dv;
    ls_conv_delta_params p = {.kda = 1};
    ls_conv_params *c = &p.conv; ls_delta_params *d = &p.delta;
    c->batch = d->batch = 3; c->tokens = d->tokens = T; c->channels = C; c->width = 4; c->silu = 1;
    c->disable_state_update = d->disable_state_update = 1; c->weight_dtype = LS_F32; c->state_dtype = LS_BF16;
    c->x = c->weight = c->state = c->inter = (void*)0x1000; c->slot_idx = d->slot_idx = (void*)0x1000;
    c->x_stride_b = (long long)T * C; c->x_stride_t = C; c->x_stride_c = 1;
    c->state_stride_slot = 3LL * C; c->state_stride_c = 1; c->state_stride_w = C;
    c->inter_stride_slot = 3LL * T * C; c->inter_stride_t = 3LL * C; c->inter_stride_c = 1; c->inter_stride_w = C;
    d->heads_qk = s->heads_qk; d->heads_v = s->heads_v; d->dk = s->dk; d->dv = s->dv; d->scale = 0.1f;
    d->state_dtype = sd; d->state_layout = LS_STATE_VK;
    d->a = d->b = d->o = (void*)0x1000; d->A_log = (void*)0x1000; d->dt_bias = d->state = d->inter = (void*)0x1000;
    d->state_stride_slot = item; d->inter_stride_slot = item * T;
    sg_plan pl; char err[512];
    if (sg_conv_delta_plan(&p, &pl, err, sizeof err)) { printf("plan fail %s\n", err); miss++; return; }
    const tk_variant *v = tk_find(sg_variants, sg_n_variants, pl.kernel, pl.key);
    if (!v) { printf("missing %s\n", pl.key); miss++; return; }
    if (v->num_warps != 4) { printf("warps %s %d vs 4\n", pl.key, v->num_warps); miss++; }
    tk_call cl; tk_packed pk;
    sg_conv_delta_args(&p, &pl, v, &cl, err, sizeof err);
    if (tk_marshal(&cl, &pk, err, sizeof err)) { printf("marshal %s: %s\n", pl.key, err); miss++; return; }
    hit++;
}
/* KDA decode on packed mixed_qkv rows (B < 8): the packed kernel's key, grid (NV, B, HV) */
static void kda_packed(const ls_shape *s, ls_dtype sd) {
    ls_delta_params p = {.batch = 3, .tokens = 1, .heads_qk = s->heads_qk, .heads_v = s->heads_v, .dk = s->dk, .dv = s->dv, .state_dtype = sd, .state_layout = LS_STATE_VK};
    long long hk = (long long)s->heads_qk * s->dk, row = 2 * hk + (long long)s->heads_v * s->dv;
    p.q = (const uint16_t*)0x10000; p.k = p.q + hk; p.v = p.q + 2 * hk; p.q_stride_tok = p.k_stride_tok = p.v_stride_tok = row;
    p.a = p.b = p.o = (uint16_t*)0x20000; p.A_log = p.dt_bias = (float*)0x30000; p.state = (void*)0x40000; p.slot_idx = (int32_t*)0x50000;
    p.state_stride_slot = (long long)s->heads_v * s->dk * s->dv;
    sg_plan pl; char err[256]; tk_call c; tk_packed pk;
    if (sg_delta_plan(&p, 1, SG_DECODE_AUTO, &pl, err, sizeof err) || strcmp(pl.kernel, SG_KDA_PACKED_KERNEL)) { printf("kda packed plan %s\n", err); miss++; return; }
    const tk_variant *v = tk_find(sg_variants, sg_n_variants, pl.kernel, pl.key);
    if (!v) { printf("missing %s[%s]\n", pl.kernel, pl.key); miss++; return; }
    if (sg_delta_args(&p, 1, &pl, v, &c, err, sizeof err) || tk_marshal(&c, &pk, err, sizeof err)) { printf("kda packed %s: %s\n", pl.key, err); miss++; return; }
    hit++;
}
static void pool(const ls_shape *s, ls_dtype td) {
    static const int slot_counts[] = {2, 17, 513, 4097, 20001};
    for (int T = 1; T <= 8; T++) for (int si = 0; si < 5; si++) {
        ls_state_desc d; if (ls_state_desc_from_shape(s, td, T, &d)) { printf("desc fail\n"); miss++; return; }
        ls_state_params p; memset(&p, 0, sizeof p);
        p.n_buffers = d.n_conv + 1; p.layers = d.layers; p.slots = slot_counts[si]; p.spec_tokens = T; p.count = 3;
        for (int b = 0; b < p.n_buffers; b++) {
            p.buf[b].item_bytes = b < d.n_conv ? ls_conv_item_bytes(&d, b) : ls_temporal_item_bytes(&d);
            p.buf[b].main = (void*)0x10000; p.buf[b].spec = (void*)0x20000;
        }
        p.src = p.dst = p.step = (const int32_t*)0x1004;
        sg_plan pl; char err[256]; tk_call c; tk_packed pk;
        for (int b = 0; b < p.n_buffers; b++) {
            if (sg_accept_plan(&p, b, &pl, err, sizeof err)) { printf("accept plan %s\n", err); miss++; continue; }
            const tk_variant *v = tk_find(sg_variants, sg_n_variants, pl.kernel, pl.key);
            if (!v) { printf("missing %s[%s]\n", pl.kernel, pl.key); miss++; continue; }
            sg_accept_args(&p, b, &pl, v, &c);
            if (tk_marshal(&c, &pk, err, sizeof err)) { printf("marshal %s: %s\n", pl.key, err); miss++; } else hit++;
        }
        if (T > 1 || si) continue; /* copy / zero: no spec, slots do not change the key */
        for (int clear = 0; clear < 2; clear++) {
            sg_slot_plan(&p, clear, &pl, err, sizeof err);
            const tk_variant *v = tk_find(sg_variants, sg_n_variants, pl.kernel, pl.key);
            if (!v) { printf("missing %s[%s]\n", pl.kernel, pl.key); miss++; continue; }
            sg_slot_args(&p, clear, &pl, v, (const int64_t*)0x30000, &c);
            if (tk_marshal(&c, &pk, err, sizeof err)) { printf("marshal %s: %s\n", pl.key, err); miss++; } else hit++;
        }
    }
}
int main(void) {
    for (int mi = 0; mi < ls_model_count(); mi++) {
        const ls_model *m = ls_model_at(mi);
        for (int tp = 1; tp <= 8; tp *= 2) {
            ls_shape s; if (ls_shape_from_model(m, tp, &s)) continue;
            int conv_ok = strcmp(m->name, "falcon-h1-7b") != 0;
            if (conv_ok) for (int T = 1; T <= 8; T++) for (int wm = 0; wm < 2; wm++) {
                conv(s.conv_channels, T, wm, m->conv_weight_dtype, m->conv_bias);
                if (m->mechanism == LS_MECH_KDA) conv(3 * s.conv_channels, T, wm, m->conv_weight_dtype, m->conv_bias);
            }
            if (m->mechanism == LS_MECH_KDA) for (int sd = 0; sd < 2; sd++) for (int T = 3; T <= 8; T++)
                conv_delta(&s, sd ? LS_BF16 : LS_F32, T);
            pool(&s, LS_F32); pool(&s, LS_BF16);
            if (m->mechanism == LS_MECH_KDA) { kda_packed(&s, LS_F32); kda_packed(&s, LS_BF16); }
            if (m->mechanism == LS_MECH_MAMBA2) for (int sd = 0; sd < 2; sd++) for (int ver = 0; ver < 2; ver++) {
                ssu(&s, sd ? LS_BF16 : LS_F32, ver, 0);
                if (!strcmp(m->name, "nemotron-h-8b")) ssu(&s, sd ? LS_BF16 : LS_F32, ver, 1);
            }
        }
    }
    printf("%d calls resolved, %d failed, %d variants in the table\n", hit, miss, sg_n_variants);
    /* every cubin says its arch, so tk_launch can refuse it on another GPU (peers/peer_arch.h) */
    for (int i = 0; i < sg_n_variants; i++)
        if (sg_variants[i].arch != 90) { printf("variant %s[%s]: arch %d, not 90\n", sg_variants[i].kernel, sg_variants[i].key, sg_variants[i].arch); miss++; }
    return miss != 0;
}
