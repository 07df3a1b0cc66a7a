/* ls_state_params_check (struct-level) and the host ops' own index checks (values): bad input
 * is named and leaves the buffers untouched. */
#include "ls_kernels.h"
#include "ls_test.h"

#include <string.h>

enum { L = 2, SLOTS = 5, T = 3, ITEM = 12 };
static unsigned char mainb[L * SLOTS * ITEM], specb[L * SLOTS * T * ITEM];
static int32_t src[4] = {0, 1, 2, 3}, dst[4] = {4, 3, 2, 1}, step[4] = {0, 2, -1, 1};

static ls_state_params valid(void)
{
    ls_state_params p;
    memset(&p, 0, sizeof p);
    p.n_buffers = 1, p.layers = L, p.slots = SLOTS, p.spec_tokens = T, p.count = 2;
    p.buf[0].main = mainb, p.buf[0].spec = specb, p.buf[0].item_bytes = ITEM;
    p.src = src, p.dst = dst + 0, p.step = step;
    return p;
}

#define EXPECT_BAD(call, stmt, want)                                                               \
    do {                                                                                           \
        ls_state_params p = valid();                                                               \
        stmt;                                                                                      \
        ls_clear_error();                                                                          \
        LS_CHECK_EQ_INT(call, -1);                                                                 \
        if (!strstr(ls_last_error(), want))                                                        \
            fprintf(stderr, "  message \"%s\" lacks \"%s\"\n", ls_last_error(), want);             \
        LS_CHECK(strstr(ls_last_error(), want) != NULL);                                           \
    } while (0)

int main(void)
{
    for (size_t i = 0; i < sizeof mainb; i++)
        mainb[i] = (unsigned char)(i * 13 + 5);
    for (size_t i = 0; i < sizeof specb; i++)
        specb[i] = (unsigned char)(i * 29 + 3);
    unsigned char main0[sizeof mainb];
    memcpy(main0, mainb, sizeof mainb);

    ls_state_params ok = valid();
    LS_CHECK_EQ_INT(ls_state_params_check(&ok, 1, 0), 0);
    LS_CHECK_EQ_INT(ls_state_params_check(&ok, 0, 1), 0);
    LS_CHECK_EQ_INT(ls_state_params_check(&ok, 0, 0), 0);
    LS_CHECK_EQ_INT(ls_state_params_check(NULL, 0, 0), -1);

    /* struct-level */
    EXPECT_BAD(ls_state_params_check(&p, 0, 0), p.n_buffers = 0, "n_buffers=0 not in 1..8");
    EXPECT_BAD(ls_state_params_check(&p, 0, 0), p.n_buffers = 9, "n_buffers=9");
    EXPECT_BAD(ls_state_params_check(&p, 1, 0), p.layers = 0, "state_copy: layers=0");
    EXPECT_BAD(ls_state_params_check(&p, 0, 0), p.slots = -1, "state_zero: slots=-1");
    EXPECT_BAD(ls_state_params_check(&p, 0, 1), p.spec_tokens = -2, "state_accept: spec_tokens=-2");
    EXPECT_BAD(ls_state_params_check(&p, 0, 0), p.count = -1, "count=-1");
    EXPECT_BAD(ls_state_params_check(&p, 0, 0), p.buf[0].main = NULL, "buf[0].main is NULL");
    EXPECT_BAD(ls_state_params_check(&p, 0, 0), p.buf[0].item_bytes = 0, "buf[0].item_bytes=0");
    EXPECT_BAD(ls_state_params_check(&p, 0, 0),
               (p.n_buffers = 2, p.buf[1] = p.buf[0], p.buf[1].item_bytes = -4),
               "buf[1].item_bytes=-4");
    EXPECT_BAD(ls_state_params_check(&p, 0, 0), p.spec_tokens = 0,
               "buf[0].spec is set but spec_tokens=0");
    EXPECT_BAD(ls_state_params_check(&p, 0, 1), (p.spec_tokens = 0, p.buf[0].spec = NULL),
               "spec_tokens=0");
    EXPECT_BAD(ls_state_params_check(&p, 0, 1), p.buf[0].spec = NULL, "no buffer has spec");
    EXPECT_BAD(ls_state_params_check(&p, 0, 0), p.dst = NULL, "dst is NULL");
    EXPECT_BAD(ls_state_params_check(&p, 1, 0), p.src = NULL, "src is NULL");
    EXPECT_BAD(ls_state_params_check(&p, 0, 1), p.step = NULL, "step is NULL");
    /* count 0 needs no index arrays */
    ls_state_params p0 = valid();
    p0.count = 0, p0.src = p0.dst = p0.step = NULL;
    LS_CHECK_EQ_INT(ls_ref_state_copy(&p0), 0);
    LS_CHECK_EQ_INT(ls_ref_state_accept(&p0), 0);
    LS_CHECK_EQ_INT(ls_ref_state_zero(&p0), 0);

    /* index values (host reference only) */
    int32_t big[2] = {1, 5}, neg[2] = {-1, 2}, rep[2] = {3, 3}, over[2] = {3, 0}, stp[2] = {3, 0};
    EXPECT_BAD(ls_ref_state_copy(&p), p.dst = big, "state_copy: dst[1]=5 not in 0..4");
    EXPECT_BAD(ls_ref_state_copy(&p), p.src = neg, "src[0]=-1");
    EXPECT_BAD(ls_ref_state_copy(&p), p.dst = rep, "dst[1]=3 repeats");
    EXPECT_BAD(ls_ref_state_copy(&p), p.dst = over, "dst[1]=0 is also a source");
    EXPECT_BAD(ls_ref_state_copy(&p), (p.count = 1, p.dst = src), "dst[0]=0 is also a source");
    EXPECT_BAD(ls_ref_state_accept(&p), p.step = stp, "step[0]=3 not below spec_tokens=3");
    EXPECT_BAD(ls_ref_state_accept(&p), p.dst = rep, "state_accept: dst[1]=3 repeats");
    EXPECT_BAD(ls_ref_state_zero(&p), p.dst = neg, "state_zero: dst[0]=-1");
    LS_CHECK(memcmp(main0, mainb, sizeof mainb) == 0); /* nothing written by any refusal */

    /* zero ignores stale src/step in the struct and tolerates repeated destinations */
    ls_state_params pz = valid();
    pz.dst = rep, pz.src = neg, pz.step = stp;
    LS_CHECK_EQ_INT(ls_ref_state_zero(&pz), 0);
    return ls_test_exit();
}
