/*
 * test_plugin_tuning — the impl registry's loader and tuning helpers (kernels/impl.c) on the example
 * plugin, and the example's ops against the host reference.
 *   argv[1]: libls_example_impl.so   argv[2]: the BAD_CLASH test plugin (a valid table named "host")
 *
 * Loader: loading a path twice returns the same impl, registered once; a plugin named "host" is
 * rejected naming the clash. Tuning: ls_tuning_parse errors name the bad text (unknown knob, unknown
 * value, malformed item, trailing comma) and leave a valid tuning usable; ls_tuning_string lists
 * every knob in declaration order whatever the order of the spec. Example ops: conv_update (both
 * loop orders, both state orientations, fp32 and bf16 state, padding rows, intermediate windows,
 * disable_state_update) equals ls_ref_conv_update within bf16 rounding, state ops equal the
 * reference byte for byte under both copy.chunk values, last_error and explain answer.
 */
#include "ls_kernels.h"
#include "ls_test.h"

#include <string.h>

#define CONTAINS(hay, needle)                                                                        \
    do {                                                                                             \
        const char *h_ = (hay);                                                                      \
        ls_test_checks++;                                                                            \
        if (!h_ || !strstr(h_, (needle))) {                                                          \
            fprintf(stderr, "%s:%d: '%s' does not contain '%s'\n", __FILE__, __LINE__, h_ ? h_ : "(null)", \
                    (needle));                                                                       \
            ls_test_failures++;                                                                      \
        }                                                                                            \
    } while (0)

static void test_loader(const char *example_path, const char *clash_path, const ls_impl **out)
{
    int n0 = ls_impl_count();
    ls_clear_error();
    const ls_impl *im = ls_impl_load(example_path);
    if (!im)
        fprintf(stderr, "load: %s\n", ls_last_error());
    LS_REQUIRE(im != NULL);
    LS_CHECK(strcmp(im->name, "example") == 0);
    LS_CHECK(strcmp(im->runtime, "host") == 0);
    LS_CHECK(strcmp(im->version, "example 1.0") == 0);
    LS_CHECK_EQ_INT(im->abi_version, LS_IMPL_ABI);
    LS_CHECK_EQ_INT(ls_impl_count(), n0 + 1);
    LS_CHECK(ls_impl_load(example_path) == im); /* same path: the same impl, not a second entry */
    LS_CHECK_EQ_INT(ls_impl_count(), n0 + 1);
    LS_CHECK(ls_impl_get("example") == im);
    LS_CHECK(ls_impl_at(ls_impl_count() - 1) == im);
    LS_CHECK(ls_impl_op(im, LS_OP_GDN) == NULL && ls_impl_op(im, LS_OP_KDA) == NULL &&
             ls_impl_op(im, LS_OP_SSU) == NULL);
    LS_CHECK(ls_impl_op(im, LS_OP_CONV_UPDATE) != NULL && ls_impl_op(im, LS_OP_STATE_COPY) != NULL &&
             ls_impl_op(im, LS_OP_STATE_ACCEPT) != NULL && ls_impl_op(im, LS_OP_STATE_ZERO) != NULL);

    ls_clear_error();
    LS_CHECK(ls_impl_load(clash_path) == NULL);
    CONTAINS(ls_last_error(), "name 'host' is already taken");
    LS_CHECK_EQ_INT(ls_impl_count(), n0 + 1);
    LS_CHECK(ls_impl_get("host") != im && strcmp(ls_impl_get("host")->version, "float64 reference") == 0);

    ls_clear_error();
    LS_CHECK(ls_impl_load("/nonexistent/libnope.so") == NULL);
    CONTAINS(ls_last_error(), "cannot load /nonexistent/libnope.so");
    *out = im;
}

static void test_tuning(const ls_impl *im)
{
    ls_tuning t;
    char s[128];
    ls_tuning_default(im, &t);
    LS_CHECK_EQ_INT(t.n, 2);
    LS_CHECK_EQ_INT(ls_tuning_string(im, &t, s, sizeof s), (int)strlen("copy.chunk=row,conv.loop=row"));
    LS_CHECK(strcmp(s, "copy.chunk=row,conv.loop=row") == 0);
    LS_CHECK_EQ_INT(ls_tuning_parse(im, "", &t), 0);
    ls_tuning_string(im, &t, s, sizeof s);
    LS_CHECK(strcmp(s, "copy.chunk=row,conv.loop=row") == 0);

    /* Declaration order, whatever the spec's order; stable across calls. */
    LS_CHECK_EQ_INT(ls_tuning_parse(im, "conv.loop=channel,copy.chunk=bytes", &t), 0);
    LS_CHECK_EQ_INT(t.v[0], 1);
    LS_CHECK_EQ_INT(t.v[1], 1);
    ls_tuning_string(im, &t, s, sizeof s);
    LS_CHECK(strcmp(s, "copy.chunk=bytes,conv.loop=channel") == 0);
    char s2[128];
    ls_tuning_string(im, &t, s2, sizeof s2);
    LS_CHECK(strcmp(s, s2) == 0);
    char v[16];
    LS_CHECK(strcmp(ls_knob_value(im, &t, 1, v, sizeof v), "channel") == 0);
    LS_CHECK_EQ_INT(ls_knob_index(im, "conv.loop"), 1);
    LS_CHECK_EQ_INT(ls_knob_index(im, "conv"), -1);
    LS_CHECK_EQ_INT(ls_tuning_string(im, &t, s, 10), -1); /* cap too small */
    LS_CHECK(s[0] == 0);

    /* Applied on top: the later item wins, the other knob keeps its value. */
    LS_CHECK_EQ_INT(ls_tuning_parse(im, "copy.chunk=row", &t), 0);
    ls_tuning_string(im, &t, s, sizeof s);
    LS_CHECK(strcmp(s, "copy.chunk=row,conv.loop=channel") == 0);

    /* Errors name the bad text. */
    ls_tuning_default(im, &t);
    LS_CHECK(ls_tuning_parse(im, "copy.chunkk=row", &t) != 0);
    CONTAINS(ls_last_error(), "no knob 'copy.chunkk'");
    CONTAINS(ls_last_error(), "knobs: copy.chunk, conv.loop");
    LS_CHECK(ls_tuning_parse(im, "copy.chunk=page", &t) != 0);
    CONTAINS(ls_last_error(), "'page' is not a value of copy.chunk (row|bytes)");
    LS_CHECK(ls_tuning_parse(im, "copy.chunk", &t) != 0);
    CONTAINS(ls_last_error(), "'copy.chunk' is not knob=value");
    LS_CHECK(ls_tuning_parse(im, "=row", &t) != 0);
    CONTAINS(ls_last_error(), "'=row' is not knob=value");
    LS_CHECK(ls_tuning_parse(im, "conv.loop=", &t) != 0);
    CONTAINS(ls_last_error(), "'conv.loop=' is not knob=value");
    LS_CHECK(ls_tuning_parse(im, "conv.loop=row,,copy.chunk=row", &t) != 0);
    CONTAINS(ls_last_error(), "'' is not knob=value");
    LS_CHECK(ls_tuning_parse(im, "copy.chunk=bytes,", &t) != 0);
    CONTAINS(ls_last_error(), "'copy.chunk=bytes,' ends with ','");
    LS_CHECK(ls_tuning_parse(im, "copy.chunk=rows", &t) != 0); /* a prefix match is no match */
    CONTAINS(ls_last_error(), "'rows'");

    /* An impl without knobs: "" and nothing else. */
    const ls_impl *host = ls_impl_get("host");
    ls_tuning h;
    ls_tuning_default(host, &h);
    LS_CHECK_EQ_INT(ls_tuning_string(host, &h, s, sizeof s), 0);
    LS_CHECK(s[0] == 0);
    LS_CHECK(ls_tuning_parse(host, "copy.chunk=row", &h) != 0);
    CONTAINS(ls_last_error(), "impl host has no knob 'copy.chunk' (knobs: none)");
}

/* ---------------------------------------------------------------- the example's ops */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static void fill_bf16(uint16_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = ls_f32_to_bf16((float)ls_test_uniform(&rng, -1, 1));
}

static double val(const void *p, ls_dtype dt, size_t i)
{
    return dt == LS_F32 ? ((const float *)p)[i] : ls_bf16_to_f32(((const uint16_t *)p)[i]);
}

enum { B = 3, T = 3, C = 5, W = 4, SLOTS = 6 };

/* One conv case: example vs reference from identical inputs. window_major: state [S, W-1, C]. */
static void conv_case(const ls_impl *im, ls_tuning *tu, ls_dtype sdt, int window_major, int disable, int silu)
{
    uint16_t x[B * T * C], y[2][B * T * C], w[C * W], bias[C];
    unsigned char st0[SLOTS * C * (W - 1) * 4], st[2][sizeof st0], in[2][SLOTS * T * C * (W - 1) * 4];
    fill_bf16(x, B * T * C);
    fill_bf16(w, C * W);
    fill_bf16(bias, C);
    for (size_t i = 0; i < (size_t)SLOTS * C * (W - 1); i++) {
        float f = (float)ls_test_uniform(&rng, -1, 1);
        if (sdt == LS_F32)
            memcpy(st0 + 4 * i, &f, 4);
        else {
            uint16_t h = ls_f32_to_bf16(f);
            memcpy(st0 + 2 * i, &h, 2);
        }
    }
    int32_t slot[B] = {4, -1, 1}; /* a padding row in the middle */
    ls_conv_params p;
    memset(&p, 0, sizeof p);
    p.batch = B, p.tokens = T, p.channels = C, p.width = W, p.silu = silu, p.disable_state_update = disable;
    p.weight_dtype = LS_BF16, p.state_dtype = sdt;
    p.x = x, p.x_stride_b = T * C, p.x_stride_t = C, p.x_stride_c = 1;
    p.y_stride_b = T * C, p.y_stride_t = C, p.y_stride_c = 1;
    p.weight = w, p.bias = bias, p.slot_idx = slot, p.slots = SLOTS;
    p.state_stride_slot = C * (W - 1);
    p.state_stride_c = window_major ? 1 : W - 1;
    p.state_stride_w = window_major ? C : 1;
    p.inter_stride_slot = T * C * (W - 1), p.inter_stride_t = C * (W - 1);
    p.inter_stride_c = p.state_stride_c, p.inter_stride_w = p.state_stride_w;
    for (int k = 0; k < 2; k++) {
        memcpy(st[k], st0, sizeof st0);
        memset(y[k], 0x5a, sizeof y[k]);      /* the padding row must keep this */
        memset(in[k], 0x77, sizeof in[k]);    /* unwritten slots keep this */
        ls_conv_params q = p;
        q.y = y[k], q.state = st[k], q.inter = in[k];
        int rc = k == 0 ? ((int (*)(const ls_conv_params *, const ls_tuning *, ls_stream))ls_impl_op(
                               im, LS_OP_CONV_UPDATE))(&q, tu, NULL)
                        : ls_ref_conv_update(&q);
        LS_CHECK_EQ_INT(rc, 0);
    }
    double maxd = 0, maxr = 0;
    for (size_t i = 0; i < (size_t)B * T * C; i++) {
        double d = fabs(val(y[0], LS_BF16, i) - val(y[1], LS_BF16, i));
        maxd = d > maxd ? d : maxd;
        maxr = fabs(val(y[1], LS_BF16, i)) > maxr ? fabs(val(y[1], LS_BF16, i)) : maxr;
    }
    LS_CHECK(maxr > 0);
    LS_CHECK(maxd <= 1e-2 * maxr); /* bf16 rounding of an fp32 vs float64 sum */
    for (size_t i = T * C; i < 2 * T * C; i++)
        LS_CHECK_EQ_INT(y[0][i], 0x5a5a);
    /* State and windows are copies of stored values: bit-exact, untouched slots included. */
    LS_CHECK(memcmp(st[0], st[1], sizeof st0) == 0);
    LS_CHECK(memcmp(in[0], in[1], sizeof in[0]) == 0);
    LS_CHECK((memcmp(st[0], st0, sizeof st0) == 0) == (disable != 0));
}

typedef int (*state_fn)(const ls_state_params *, const ls_tuning *, ls_stream);

static void state_case(const ls_impl *im, ls_tuning *tu)
{
    enum { L = 2, S = 5, TS = 2, NB = 2 };
    static unsigned char main0[NB][L * S * 24], spec[NB][L * S * TS * 24], m[2][NB][L * S * 24];
    int64_t item[NB] = {24, 12};
    for (int b = 0; b < NB; b++) {
        for (size_t i = 0; i < sizeof main0[b]; i++)
            main0[b][i] = (unsigned char)(ls_test_rand_u64(&rng) | 1);
        for (size_t i = 0; i < sizeof spec[b]; i++)
            spec[b][i] = (unsigned char)(ls_test_rand_u64(&rng) | 1);
    }
    int32_t src[2] = {0, 3}, dst[2] = {2, 4}, step[2] = {1, -1};
    for (ls_op op = LS_OP_STATE_COPY; op <= LS_OP_STATE_ZERO; op++)
        for (int k = 0; k < 2; k++) {
            memcpy(m[k], main0, sizeof main0);
            ls_state_params p;
            memset(&p, 0, sizeof p);
            p.n_buffers = NB, p.layers = L, p.slots = S, p.spec_tokens = TS, p.count = 2;
            for (int b = 0; b < NB; b++) {
                p.buf[b].main = m[k][b];
                p.buf[b].spec = b == 0 ? spec[b] : NULL; /* buffer 1 has no spec: accept skips it */
                p.buf[b].item_bytes = item[b];
            }
            p.src = src, p.dst = dst, p.step = step;
            int rc = k == 0 ? ((state_fn)ls_impl_op(im, op))(&p, tu, NULL)
                     : op == LS_OP_STATE_COPY   ? ls_ref_state_copy(&p)
                     : op == LS_OP_STATE_ACCEPT ? ls_ref_state_accept(&p)
                                                : ls_ref_state_zero(&p);
            LS_CHECK_EQ_INT(rc, 0);
            if (k == 1) {
                LS_CHECK(memcmp(m[0], m[1], sizeof m[0]) == 0);
                LS_CHECK(memcmp(m[0], main0, sizeof main0) != 0); /* the op did something */
            }
        }
}

static void test_ops(const ls_impl *im)
{
    ls_tuning tu;
    const char *points[] = {"", "conv.loop=channel,copy.chunk=bytes"};
    for (int i = 0; i < 2; i++) {
        ls_tuning_default(im, &tu);
        LS_REQUIRE(ls_tuning_parse(im, points[i], &tu) == 0);
        for (int wm = 0; wm < 2; wm++)
            for (int dis = 0; dis < 2; dis++) {
                conv_case(im, &tu, LS_BF16, wm, dis, 1);
                conv_case(im, &tu, LS_F32, wm, dis, 0);
            }
        state_case(im, &tu);
    }

    /* last_error: the plugin's own text, and ls_impl_error prefers it. */
    ls_conv_params bad;
    memset(&bad, 0, sizeof bad);
    bad.batch = 1, bad.tokens = 1, bad.channels = 4, bad.width = 5;
    ls_clear_error();
    LS_CHECK(im->conv_update(&bad, &tu, NULL) != 0);
    CONTAINS(im->last_error(), "example: conv_update: bad shape");
    CONTAINS(im->last_error(), "width=5");
    CONTAINS(ls_impl_error(im), "width=5");
    ls_state_params sp;
    memset(&sp, 0, sizeof sp);
    LS_CHECK(im->state_zero(&sp, &tu, NULL) != 0);
    CONTAINS(im->last_error(), "example: state_zero: bad shape");

    /* explain: one line naming the code path the tuning picks. */
    char buf[128];
    bad.width = 4;
    ls_tuning_default(im, &tu);
    LS_CHECK_EQ_INT(im->explain(LS_OP_CONV_UPDATE, &bad, &tu, NULL, buf, sizeof buf), 0);
    LS_CHECK(strcmp(buf, "example_conv_row B=1 T=1 C=4 W=4") == 0);
    LS_CHECK_EQ_INT(ls_tuning_parse(im, "copy.chunk=bytes", &tu), 0);
    sp.count = 3, sp.n_buffers = 2, sp.layers = 7;
    LS_CHECK_EQ_INT(im->explain(LS_OP_STATE_ACCEPT, &sp, &tu, NULL, buf, sizeof buf), 0);
    LS_CHECK(strcmp(buf, "example_accept_bytes rows=3 buffers=2 layers=7") == 0);
    LS_CHECK(im->explain(LS_OP_GDN, &sp, &tu, NULL, buf, sizeof buf) != 0);
}

int main(int argc, char **argv)
{
    LS_REQUIRE(argc == 3);
    const ls_impl *im = NULL;
    test_loader(argv[1], argv[2], &im);
    test_tuning(im);
    test_ops(im);
    return ls_test_exit();
}
