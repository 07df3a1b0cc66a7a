/* State ops over a multi-buffer, multi-layer pool (3 buffers of different item sizes, one
 * without spec buffers): copy, accept (step < 0 skipped, spec-less buffer skipped) and zero
 * move exactly the listed (layer, slot) items; every other byte stays as it was. */
#include "ref_fixtures.h"

enum { NB = 3, L = 3, SLOTS = 11, T = 4 };
static const int64_t ITEM[NB] = {24, 6, 40};

typedef struct pool {
    unsigned char *main[NB], *spec[NB];
    ls_state_params p;
} pool;

static void pool_make(pool *P, uint64_t *sd)
{
    memset(P, 0, sizeof *P);
    P->p.n_buffers = NB, P->p.layers = L, P->p.slots = SLOTS, P->p.spec_tokens = T;
    for (int b = 0; b < NB; b++) {
        size_t mb = (size_t)L * SLOTS * ITEM[b], sb = mb * T;
        P->main[b] = fx_alloc(mb);
        for (size_t i = 0; i < mb; i++)
            P->main[b][i] = (unsigned char)(ls_test_rand_u64(sd) | 1); /* never zero */
        if (b != 1) { /* buffer 1 has no spec copies */
            P->spec[b] = fx_alloc(sb);
            for (size_t i = 0; i < sb; i++)
                P->spec[b][i] = (unsigned char)(ls_test_rand_u64(sd) | 1);
        }
        P->p.buf[b].main = P->main[b], P->p.buf[b].spec = P->spec[b],
        P->p.buf[b].item_bytes = ITEM[b];
    }
}
static void pool_free(pool *P)
{
    for (int b = 0; b < NB; b++)
        free(P->main[b]), free(P->spec[b]);
}
static unsigned char *item(unsigned char *base, int b, int l, int s)
{
    return base + ((size_t)l * SLOTS + s) * ITEM[b];
}
static unsigned char *spec_item(unsigned char *base, int b, int l, int s, int t)
{
    return base + (((size_t)l * SLOTS + s) * T + t) * ITEM[b];
}

int main(void)
{
    uint64_t sd = 8;
    pool P; /* expected contents are built by the test with plain per-item memcpy */
    for (int rep = 0; rep < 4; rep++) {
        pool_make(&P, &sd);
        unsigned char *exp_main[NB];
        for (int b = 0; b < NB; b++)
            exp_main[b] = fx_dup(P.main[b], (size_t)L * SLOTS * ITEM[b]);
        int32_t perm[SLOTS];
        fx_slots(&sd, SLOTS, SLOTS, 0, perm); /* a random permutation of the slots */
        const int n = 1 + rep;                /* rows */
        int32_t src[8], dst[8], step[8];
        for (int i = 0; i < n; i++) {
            src[i] = perm[i], dst[i] = perm[SLOTS - 1 - i];
            step[i] = (i == 1) ? -1 : (int32_t)(ls_test_rand_u64(&sd) % T);
        }

        /* copy */
        P.p.count = n, P.p.src = src, P.p.dst = dst, P.p.step = NULL;
        LS_REQUIRE(ls_ref_state_copy(&P.p) == 0);
        for (int b = 0; b < NB; b++)
            for (int l = 0; l < L; l++)
                for (int i = 0; i < n; i++)
                    memcpy(item(exp_main[b], b, l, dst[i]), item(exp_main[b], b, l, src[i]),
                           ITEM[b]);
        for (int b = 0; b < NB; b++)
            LS_CHECK(memcmp(P.main[b], exp_main[b], (size_t)L * SLOTS * ITEM[b]) == 0);

        /* accept: rows use dst as the slot list; step -1 skipped; buffer 1 skipped */
        P.p.src = NULL, P.p.step = step;
        LS_REQUIRE(ls_ref_state_accept(&P.p) == 0);
        for (int b = 0; b < NB; b++)
            for (int l = 0; l < L && P.spec[b]; l++)
                for (int i = 0; i < n; i++)
                    if (step[i] >= 0)
                        memcpy(item(exp_main[b], b, l, dst[i]),
                               spec_item(P.spec[b], b, l, dst[i], step[i]), ITEM[b]);
        for (int b = 0; b < NB; b++)
            LS_CHECK(memcmp(P.main[b], exp_main[b], (size_t)L * SLOTS * ITEM[b]) == 0);
        /* the accepted items really changed (spec bytes differ from main bytes) */
        if (step[0] >= 0)
            LS_CHECK(memcmp(item(P.main[0], 0, L - 1, dst[0]),
                            spec_item(P.spec[0], 0, L - 1, dst[0], step[0]), ITEM[0]) == 0);

        /* zero the sources */
        P.p.dst = src, P.p.step = NULL;
        LS_REQUIRE(ls_ref_state_zero(&P.p) == 0);
        for (int b = 0; b < NB; b++)
            for (int l = 0; l < L; l++)
                for (int i = 0; i < n; i++)
                    memset(item(exp_main[b], b, l, src[i]), 0, ITEM[b]);
        for (int b = 0; b < NB; b++)
            LS_CHECK(memcmp(P.main[b], exp_main[b], (size_t)L * SLOTS * ITEM[b]) == 0);
        size_t zeros = 0;
        for (int l = 0; l < L; l++)
            for (int64_t j = 0; j < ITEM[2]; j++)
                zeros += item(P.main[2], 2, l, src[0])[j] == 0;
        LS_CHECK_EQ_INT(zeros, L * ITEM[2]);

        for (int b = 0; b < NB; b++)
            free(exp_main[b]);
        pool_free(&P);
    }
    return ls_test_exit();
}
