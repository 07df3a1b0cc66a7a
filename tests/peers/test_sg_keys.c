/*
 * test_sg_keys.c — the sglang peer's adapters against the variant table aot.py really generated
 * (build/peers/gen/sglang/tk_table.c; built only when the peer is): every preset shape the spec
 * compiles for conv_update (qwen3-next, kimi-linear per buffer and concatenated, nemotron-h-8b,
 * nemotron-nano-9b-v2 at
 * tp 1, 2, 4, 8, both orientations, T 1..8) and ssu (the three Mamba2 presets, fp32/bf16 state,
 * decode/verify, z for nemotron-h-8b) must plan to a key that is in the table, with the table's
 * num_warps, and marshal for T = 1..8 (fake 16-byte-aligned pointers). No GPU.
 */
#include <stdio.h>
#include <string.h>
#include "sg_adapt.h"
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
