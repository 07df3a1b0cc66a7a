/* ls_ssu_params_check: bad fields are named. */
#include "ref_fixtures.h"

#include <string.h>

static fx_ssu F;

static int run_ssu(void *p) { return ls_ref_ssu((const ls_ssu_params *)p); }

#define EXPECT_BAD(stmt, want)                                                                     \
    do {                                                                                           \
        ls_ssu_params p = F.p;                                                                     \
        stmt;                                                                                      \
        ls_clear_error();                                                                          \
        LS_CHECK_EQ_INT(ls_ssu_params_check(&p), -1);                                              \
        if (!strstr(ls_last_error(), want))                                                        \
            fprintf(stderr, "  message \"%s\" lacks \"%s\"\n", ls_last_error(), want);             \
        LS_CHECK(strstr(ls_last_error(), want) != NULL);                                           \
    } while (0)

int main(void)
{
    uint64_t sd = 13;
    fx_ssu_make(&F, &sd, 2, 2, 4, 3, 5, 2, 4, 0, LS_F32, 1, 1);
    LS_CHECK_EQ_INT(ls_ssu_params_check(&F.p), 0);
    LS_CHECK_EQ_INT(ls_ssu_params_check(NULL), -1);
    LS_CHECK(strstr(ls_last_error(), "ssu") != NULL);

    EXPECT_BAD(p.batch = 0, "ssu: batch=0");
    EXPECT_BAD(p.tokens = 0, "tokens=0");
    EXPECT_BAD(p.nheads = 0, "nheads=0");
    EXPECT_BAD(p.head_dim = -3, "head_dim=-3");
    EXPECT_BAD(p.dstate = 0, "dstate=0");
    EXPECT_BAD(p.ngroups = 0, "ngroups=0");
    EXPECT_BAD(p.ngroups = 3, "nheads=4 not a multiple of ngroups=3");
    EXPECT_BAD(p.disable_state_update = 2, "disable_state_update=2");
    EXPECT_BAD(p.state_dtype = (ls_dtype)9, "state_dtype=9");
    EXPECT_BAD(p.x = NULL, "x is NULL");
    EXPECT_BAD(p.dt = NULL, "dt is NULL");
    EXPECT_BAD(p.Bm = NULL, "Bm is NULL");
    EXPECT_BAD(p.Cm = NULL, "Cm is NULL");
    EXPECT_BAD(p.A = NULL, "A is NULL");
    EXPECT_BAD(p.dt_bias = NULL, "dt_bias is NULL");
    EXPECT_BAD(p.D = NULL, "D is NULL");
    EXPECT_BAD(p.y = NULL, "y is NULL");
    EXPECT_BAD(p.state = NULL, "state is NULL");
    EXPECT_BAD(p.slot_idx = NULL, "slot_idx is NULL");
    EXPECT_BAD(p.slots = -1, "ssu: slots=-1");
    EXPECT_BAD(p.state_stride_slot = 59, "state_stride_slot=59"); /* 4*3*5 = 60 */
    EXPECT_BAD(p.inter_stride_slot = 0, "inter_stride_slot=0");

    ls_ssu_params p = F.p;
    p.z = NULL, p.inter = NULL;
    LS_CHECK_EQ_INT(ls_ssu_params_check(&p), 0);
    p.ngroups = 4;
    LS_CHECK_EQ_INT(ls_ssu_params_check(&p), 0);
    p.ngroups = 8;
    LS_CHECK_EQ_INT(ls_ref_ssu(&p), -1);
    LS_CHECK(strstr(ls_last_error(), "ngroups=8") != NULL);
    LS_CHECK(F.y[0] == 0xFFFF);

    /* A given slot count is a contract on the indices: the ref names the row that breaks it. */
    p = F.p;
    fx_slots_contract(run_ssu, &p, &p.slots, p.slot_idx, p.batch, F.state,
                      F.state_n * ls_dtype_size(F.p.state_dtype));
    fx_ssu_free(&F);
    return ls_test_exit();
}
