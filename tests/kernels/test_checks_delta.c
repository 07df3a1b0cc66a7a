/* ls_delta_params_check for GDN (per_channel_gate 0) and KDA (1): bad fields are named. */
#include "ref_fixtures.h"

#include <string.h>

static fx_delta F;

#define EXPECT_BAD(pcg, stmt, want)                                                                \
    do {                                                                                           \
        ls_delta_params p = F.p;                                                                   \
        stmt;                                                                                      \
        ls_clear_error();                                                                          \
        LS_CHECK_EQ_INT(ls_delta_params_check(&p, pcg), -1);                                       \
        if (!strstr(ls_last_error(), want))                                                        \
            fprintf(stderr, "  message \"%s\" lacks \"%s\"\n", ls_last_error(), want);             \
        LS_CHECK(strstr(ls_last_error(), want) != NULL);                                           \
    } while (0)

static int run_gdn(void *p) { return ls_ref_gdn((const ls_delta_params *)p); }
static int run_kda(void *p) { return ls_ref_kda((const ls_delta_params *)p); }

int main(void)
{
    uint64_t sd = 12;
    fx_delta_make(&F, &sd, 1, 2, 3, 2, 4, 8, 4, 5, 0, LS_F32, 1);
    LS_CHECK_EQ_INT(ls_delta_params_check(&F.p, 0), 0);
    LS_CHECK_EQ_INT(ls_delta_params_check(&F.p, 1), 0);
    LS_CHECK_EQ_INT(ls_delta_params_check(&F.p, 2), -1);
    LS_CHECK(strstr(ls_last_error(), "per_channel_gate=2") != NULL);
    LS_CHECK_EQ_INT(ls_delta_params_check(NULL, 0), -1);
    LS_CHECK(strstr(ls_last_error(), "gdn") != NULL);

    EXPECT_BAD(0, p.batch = 0, "gdn: batch=0");
    EXPECT_BAD(1, p.batch = 0, "kda: batch=0");
    EXPECT_BAD(0, p.tokens = 0, "tokens=0");
    EXPECT_BAD(0, p.heads_qk = 0, "heads_qk=0");
    EXPECT_BAD(0, p.heads_v = -4, "heads_v=-4");
    EXPECT_BAD(0, p.heads_v = 5, "heads_v=5 not a multiple of heads_qk=2");
    EXPECT_BAD(1, p.heads_qk = 3, "heads_v=4 not a multiple of heads_qk=3");
    EXPECT_BAD(0, p.dk = 0, "dk=0");
    EXPECT_BAD(0, p.dv = -1, "dv=-1");
    EXPECT_BAD(0, p.disable_state_update = 3, "disable_state_update=3");
    EXPECT_BAD(0, p.scale = NAN, "scale=nan");
    EXPECT_BAD(0, p.scale = INFINITY, "scale=inf");
    EXPECT_BAD(0, p.state_dtype = (ls_dtype)2, "state_dtype=2");
    EXPECT_BAD(0, p.q = NULL, "q is NULL");
    EXPECT_BAD(0, p.k = NULL, "k is NULL");
    EXPECT_BAD(0, p.v = NULL, "v is NULL");
    EXPECT_BAD(0, p.a = NULL, "a is NULL");
    EXPECT_BAD(0, p.b = NULL, "b is NULL");
    EXPECT_BAD(0, p.A_log = NULL, "A_log is NULL");
    EXPECT_BAD(1, p.dt_bias = NULL, "dt_bias is NULL");
    EXPECT_BAD(0, p.o = NULL, "o is NULL");
    EXPECT_BAD(0, p.state = NULL, "state is NULL");
    EXPECT_BAD(0, p.slot_idx = NULL, "slot_idx is NULL");
    EXPECT_BAD(1, p.slots = -2, "kda: slots=-2");
    EXPECT_BAD(0, p.state_stride_slot = 127, "state_stride_slot=127"); /* HV*K*V = 128 */
    EXPECT_BAD(1, p.inter_stride_slot = 383, "inter_stride_slot=383"); /* T*128 = 384 */

    /* A larger slot stride (padded pool) and no inter are fine. */
    ls_delta_params p = F.p;
    p.state_stride_slot = 1000, p.inter = NULL, p.inter_stride_slot = 0;
    LS_CHECK_EQ_INT(ls_delta_params_check(&p, 0), 0);

    /* Both kernels refuse before writing. */
    p = F.p;
    p.heads_v = 3;
    LS_CHECK_EQ_INT(ls_ref_gdn(&p), -1);
    LS_CHECK(strstr(ls_last_error(), "gdn: heads_v=3") != NULL);
    LS_CHECK_EQ_INT(ls_ref_kda(&p), -1);
    LS_CHECK(strstr(ls_last_error(), "kda: heads_v=3") != NULL);
    LS_CHECK(F.o[0] == 0xFFFF);

    /* A given slot count is a contract on the indices: both kernels name the row that breaks it. */
    p = F.p;
    const size_t state_bytes = F.state_n * ls_dtype_size(F.p.state_dtype);
    fx_slots_contract(run_gdn, &p, &p.slots, p.slot_idx, p.batch, F.state, state_bytes);
    fx_slots_contract(run_kda, &p, &p.slots, p.slot_idx, p.batch, F.state, state_bytes);
    fx_delta_free(&F);
    return ls_test_exit();
}
