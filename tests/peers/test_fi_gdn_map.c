/*
 * test_fi_gdn_map.c — host half of the flashinfer GDN op (peers/flashinfer/fi_gdn_map.c) on a
 * stand-in variant table: the variant FlashInfer's sm_90 dispatch compiles (decode; MTP by its
 * B*HV launch bucket), linstate's strides as the kernel's tensor extents, the verify rows on one
 * pool base, and every refusal naming its value.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "ls_fi_gdn.h"
#include "ls_kernels.h"
#include "ls_test.h"

static int run_stub(const ls_fi_gdn_args *x, void *s)
{
    (void)x, (void)s;
    return 0;
}

static const ls_fi_gdn_variant tab[] = {
    {"dec", 0, 16, 32, 128, 128, 1, 0, run_stub},
    {"t4_w64", 1, 16, 32, 128, 128, 4, 64, run_stub},
    {"t4_w128", 1, 16, 32, 128, 128, 4, 128, run_stub},
    {"t4_w448", 1, 16, 32, 128, 128, 4, 448, run_stub},
    {"t4_w1024", 1, 16, 32, 128, 128, 4, 1024, run_stub},
    {"t4_wmax", 1, 16, 32, 128, 128, 4, INT64_MAX, run_stub},
};
static const int n_tab = (int)(sizeof tab / sizeof tab[0]);

static ls_delta_params base(int B, int T, char *state, char *inter)
{
    static int32_t slots[512];
    const int64_t item = 32 * 128 * 128;
    ls_delta_params p;
    memset(&p, 0, sizeof p);
    p.batch = B, p.tokens = T, p.heads_qk = 16, p.heads_v = 32, p.dk = 128, p.dv = 128;
    p.scale = (float)(1.0 / sqrt(128.0));
    p.state_dtype = LS_F32;
    p.state_layout = LS_STATE_VK;
    p.state = state;
    p.state_stride_slot = item;
    p.slot_idx = slots;
    p.slots = 41;
    p.disable_state_update = T > 1;
    if (T > 1) {
        p.inter = inter;
        p.inter_stride_slot = item * T;
    }
    return p;
}

int main(void)
{
    char err[512];
    ls_fi_gdn_plan pl;
    const int64_t unit = 32LL * 128 * 128 * 4;
    char *state = (char *)(uintptr_t)(1ULL << 40), *inter = state + 100 * unit;

    /* decode: read and write slot_idx in place, FlashInfer's pool path, packed q|k|v strides */
    ls_delta_params p = base(8, 1, state, NULL);
    const int64_t row = 2 * 16 * 128 + 32 * 128;
    p.q_stride_tok = p.k_stride_tok = p.v_stride_tok = row;
    LS_CHECK_EQ_INT(ls_fi_gdn_map(&p, tab, n_tab, &pl, err, sizeof err), 0);
    LS_CHECK(strcmp(pl.variant->name, "dec") == 0);
    LS_CHECK(pl.args.idx == p.slot_idx && pl.args.out_idx == p.slot_idx);
    LS_CHECK(pl.args.state == state);
    LS_CHECK_EQ_INT((int)pl.args.pool, 41);
    LS_CHECK(pl.args.h0_stride == p.state_stride_slot);
    LS_CHECK(pl.args.q_s1 == row && pl.args.q_s0 == row && pl.args.q_s2 == 128);
    LS_CHECK(pl.args.v_s1 == row && pl.args.o_s1 == 32 * 128 && pl.args.a_s1 == 32);
    p.q_stride_tok = p.k_stride_tok = p.v_stride_tok = 0; /* contiguous rows */
    LS_CHECK_EQ_INT(ls_fi_gdn_map(&p, tab, n_tab, &pl, err, sizeof err), 0);
    LS_CHECK(pl.args.q_s1 == 16 * 128 && pl.args.v_s1 == 32 * 128);

    /* MTP launch bucket: B*HV 64 -> w64, 65 -> w128, 448 -> w448, 1025 -> wmax */
    const struct { int B; const char *want; } bk[] = {{2, "t4_w64"}, {3, "t4_w128"}, {14, "t4_w448"},
                                                        {15, "t4_w1024"}, {32, "t4_w1024"}, {33, "t4_wmax"}};
    for (size_t i = 0; i < sizeof bk / sizeof bk[0]; i++) {
        p = base(bk[i].B, 4, state, inter);
        LS_CHECK_EQ_INT(ls_fi_gdn_map(&p, tab, n_tab, &pl, err, sizeof err), 0);
        LS_CHECK(strcmp(pl.variant->name, bk[i].want) == 0);
    }

    /* verify rows: one base (the lower buffer), in whole slots of HV*V*K */
    p = base(8, 4, state, inter);
    LS_CHECK_EQ_INT(ls_fi_gdn_map(&p, tab, n_tab, &pl, err, sizeof err), 0);
    LS_CHECK(pl.args.state == state);
    LS_CHECK(pl.rows.state_off == 0 && pl.rows.state_mul == 1);
    LS_CHECK(pl.rows.inter_off == 100 && pl.rows.inter_mul == 4);
    LS_CHECK(pl.args.pool_hv == (100 + 40 * 4 + 3 + 1) * 32);
    p = base(8, 4, inter, state); /* inter below state */
    LS_CHECK_EQ_INT(ls_fi_gdn_map(&p, tab, n_tab, &pl, err, sizeof err), 0);
    LS_CHECK(pl.args.state == state && pl.rows.state_off == 100 && pl.rows.inter_off == 0);

    /* refusals, each naming its value */
    p = base(8, 4, state, inter + 256);
    LS_CHECK_EQ_INT(ls_fi_gdn_map(&p, tab, n_tab, &pl, err, sizeof err), -1);
    LS_CHECK(strstr(err, "bytes apart") != NULL);
    /* state and inter two allocations GiBs apart: the one pool view would pass 2^31 elements */
    p = base(4, 4, state, state + 4097 * unit);
    LS_CHECK_EQ_INT(ls_fi_gdn_map(&p, tab, n_tab, &pl, err, sizeof err), -1);
    LS_CHECK(strstr(err, "32-bit element offsets") != NULL);
    p = base(4, 4, state, state + 3900 * unit); /* 3900 + 40 * 4 + 4 states: under 2^31 elements */
    LS_CHECK_EQ_INT(ls_fi_gdn_map(&p, tab, n_tab, &pl, err, sizeof err), 0);
    p = base(8, 1, state, NULL);
    p.state_layout = LS_STATE_KV;
    LS_CHECK_EQ_INT(ls_fi_gdn_map(&p, tab, n_tab, &pl, err, sizeof err), -1);
    LS_CHECK(strstr(err, "kv") != NULL);
    p = base(8, 1, state, NULL);
    p.state_dtype = LS_BF16;
    LS_CHECK_EQ_INT(ls_fi_gdn_map(&p, tab, n_tab, &pl, err, sizeof err), -1);
    LS_CHECK(strstr(err, "bf16") != NULL);
    p = base(8, 1, state, NULL);
    p.scale = 0.5f;
    LS_CHECK_EQ_INT(ls_fi_gdn_map(&p, tab, n_tab, &pl, err, sizeof err), -1);
    LS_CHECK(strstr(err, "scale 0.5") != NULL);
    p = base(8, 2, state, inter);
    LS_CHECK_EQ_INT(ls_fi_gdn_map(&p, tab, n_tab, &pl, err, sizeof err), -1);
    LS_CHECK(strstr(err, "T=2") != NULL);
    p = base(8, 4, state, inter);
    p.disable_state_update = 0;
    LS_CHECK_EQ_INT(ls_fi_gdn_map(&p, tab, n_tab, &pl, err, sizeof err), -1);
    LS_CHECK(strstr(err, "disable_state_update=1") != NULL);
    p = base(8, 1, state, NULL);
    p.disable_state_update = 1;
    LS_CHECK_EQ_INT(ls_fi_gdn_map(&p, tab, n_tab, &pl, err, sizeof err), -1);
    p = base(8, 1, state, NULL);
    p.state_stride_slot += 2;
    LS_CHECK_EQ_INT(ls_fi_gdn_map(&p, tab, n_tab, &pl, err, sizeof err), -1);
    LS_CHECK(strstr(err, "multiple of 4") != NULL);
    return ls_test_exit();
}
