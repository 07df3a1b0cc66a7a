/*
 * checks.c — parameter validation shared by both backends (ls_*_params_check in ls_kernels.h).
 *
 * Every op calls its check first. A check looks only at the params struct itself (sizes, enum
 * values, required pointers, stride sanity); it never dereferences an index array, because on
 * the cuda backend those live in device memory. Each failure is one line naming the op, the
 * field and its value, e.g. "conv: width=5 not in 2..4".
 *
 * Stride sanity: every view that is WRITTEN (outputs, state, intermediate buffers) must not
 * alias itself — two different logical elements never share an address — and the slot stride
 * must step past one whole slot. Read-only inputs only need non-negative strides.
 */
#include "ls_kernels.h"

#include <math.h>

#define MAX_VIEW_DIMS 4

static int dtype_ok(ls_dtype t) { return t == LS_F32 || t == LS_BF16; }

/* a * b * c, or INT64_MAX when it overflows (all arguments >= 0). */
static int64_t mul_sat(int64_t a, int64_t b, int64_t c)
{
    int64_t ab, abc;
    if (__builtin_mul_overflow(a, b, &ab) || __builtin_mul_overflow(ab, c, &abc))
        return INT64_MAX;
    return abc;
}

/*
 * A strided view of n dims (extents >= 1) never maps two logical elements to one address when,
 * taking the dims with extent > 1 in increasing stride order, each stride exceeds the span
 * reached by all smaller dims. Returns 0 and sets *span (the largest offset + 1), or ls_fail
 * naming the first offending stride as "<op>: <field>=<value> ...".
 */
static int check_view(const char *op, const char *view, int n, const int64_t *extent,
                      const int64_t *stride, const char *const *field, int64_t *span)
{
    int order[MAX_VIEW_DIMS];
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (stride[i] < 0)
            return ls_fail("%s: %s=%lld is negative", op, field[i], (long long)stride[i]);
        if (extent[i] > 1)
            order[m++] = i;
    }
    for (int i = 1; i < m; i++) /* insertion sort by stride, m <= 4 */
        for (int j = i; j > 0 && stride[order[j]] < stride[order[j - 1]]; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    int64_t reach = 0; /* largest offset reachable by the dims seen so far */
    for (int k = 0; k < m; k++) {
        int i = order[k];
        if (stride[i] <= reach)
            return ls_fail("%s: %s=%lld makes the %s view overlap itself (needs > %lld)", op,
                           field[i], (long long)stride[i], view, (long long)reach);
        int64_t add;
        if (__builtin_mul_overflow(stride[i], extent[i] - 1, &add) ||
            __builtin_add_overflow(reach, add, &reach))
            return ls_fail("%s: %s=%lld overflows the %s view", op, field[i], (long long)stride[i],
                           view);
    }
    *span = reach + 1;
    return 0;
}

/* The slot stride of a pool view must step past one slot's span. */
static int check_slot_stride(const char *op, const char *field, int64_t stride, int64_t span)
{
    if (stride < span)
        return ls_fail("%s: %s=%lld smaller than one slot (%lld elements)", op, field,
                       (long long)stride, (long long)span);
    return 0;
}

static int check_flag(const char *op, const char *field, int32_t v)
{
    if (v != 0 && v != 1)
        return ls_fail("%s: %s=%d not 0 or 1", op, field, (int)v);
    return 0;
}

static int check_pos(const char *op, const char *field, int32_t v)
{
    if (v < 1)
        return ls_fail("%s: %s=%d must be >= 1", op, field, (int)v);
    return 0;
}

static int check_dtype(const char *op, const char *field, ls_dtype t)
{
    if (!dtype_ok(t))
        return ls_fail("%s: %s=%d not fp32 (0) or bf16 (1)", op, field, (int)t);
    return 0;
}

#define TRY(x)                                                                                     \
    do {                                                                                           \
        if ((x) != 0)                                                                              \
            return -1;                                                                             \
    } while (0)
#define NEED_PTR(op, p, name)                                                                      \
    do {                                                                                           \
        if (!(p))                                                                                  \
            return ls_fail("%s: %s is NULL", op, name);                                            \
    } while (0)

int ls_conv_params_check(const ls_conv_params *p)
{
    const char *op = "conv";
    if (!p)
        return ls_fail("conv: params is NULL");
    TRY(check_pos(op, "batch", p->batch));
    TRY(check_pos(op, "tokens", p->tokens));
    TRY(check_pos(op, "channels", p->channels));
    if (p->width < 2 || p->width > 4)
        return ls_fail("conv: width=%d not in 2..4", (int)p->width);
    TRY(check_flag(op, "silu", p->silu));
    TRY(check_flag(op, "disable_state_update", p->disable_state_update));
    TRY(check_dtype(op, "weight_dtype", p->weight_dtype));
    TRY(check_dtype(op, "state_dtype", p->state_dtype));
    NEED_PTR(op, p->x, "x");
    NEED_PTR(op, p->y, "y");
    NEED_PTR(op, p->weight, "weight");
    NEED_PTR(op, p->state, "state");
    NEED_PTR(op, p->slot_idx, "slot_idx");
    if (p->slots < 0)
        return ls_fail("conv: slots=%d is negative", (int)p->slots);

    int64_t span;
    const int64_t bt_c[3] = {p->batch, p->tokens, p->channels};
    const int64_t xs[3] = {p->x_stride_b, p->x_stride_t, p->x_stride_c};
    static const char *const xf[3] = {"x_stride_b", "x_stride_t", "x_stride_c"};
    for (int i = 0; i < 3; i++)
        if (xs[i] < 0)
            return ls_fail("conv: %s=%lld is negative", xf[i], (long long)xs[i]);
    const int64_t ys[3] = {p->y_stride_b, p->y_stride_t, p->y_stride_c};
    static const char *const yf[3] = {"y_stride_b", "y_stride_t", "y_stride_c"};
    TRY(check_view(op, "y", 3, bt_c, ys, yf, &span));

    const int64_t cw[2] = {p->channels, p->width - 1};
    const int64_t ss[2] = {p->state_stride_c, p->state_stride_w};
    static const char *const sf[2] = {"state_stride_c", "state_stride_w"};
    TRY(check_view(op, "state", 2, cw, ss, sf, &span));
    TRY(check_slot_stride(op, "state_stride_slot", p->state_stride_slot, span));

    if (p->inter) {
        const int64_t tcw[3] = {p->tokens, p->channels, p->width - 1};
        const int64_t is[3] = {p->inter_stride_t, p->inter_stride_c, p->inter_stride_w};
        static const char *const inf[3] = {"inter_stride_t", "inter_stride_c", "inter_stride_w"};
        TRY(check_view(op, "inter", 3, tcw, is, inf, &span));
        TRY(check_slot_stride(op, "inter_stride_slot", p->inter_stride_slot, span));
    }
    return 0;
}

int ls_slots_check(const char *op, const int32_t *slot_idx, int32_t batch, int32_t slots)
{
    for (int32_t r = 0; slots > 0 && r < batch; r++)
        if (slot_idx[r] >= slots)
            return ls_fail("%s: slot_idx[%d]=%d is not below slots=%d", op, (int)r, (int)slot_idx[r], (int)slots);
    return 0;
}

int ls_delta_params_check(const ls_delta_params *p, int per_channel_gate)
{
    if (per_channel_gate != 0 && per_channel_gate != 1)
        return ls_fail("delta: per_channel_gate=%d not 0 (gdn) or 1 (kda)", per_channel_gate);
    const char *op = per_channel_gate ? "kda" : "gdn";
    if (!p)
        return ls_fail("%s: params is NULL", op);
    TRY(check_pos(op, "batch", p->batch));
    TRY(check_pos(op, "tokens", p->tokens));
    TRY(check_pos(op, "heads_qk", p->heads_qk));
    TRY(check_pos(op, "heads_v", p->heads_v));
    if (p->heads_v % p->heads_qk != 0)
        return ls_fail("%s: heads_v=%d not a multiple of heads_qk=%d", op, (int)p->heads_v,
                       (int)p->heads_qk);
    TRY(check_pos(op, "dk", p->dk));
    TRY(check_pos(op, "dv", p->dv));
    TRY(check_flag(op, "disable_state_update", p->disable_state_update));
    if (!isfinite(p->scale))
        return ls_fail("%s: scale=%g is not finite", op, (double)p->scale);
    TRY(check_dtype(op, "state_dtype", p->state_dtype));
    NEED_PTR(op, p->q, "q");
    NEED_PTR(op, p->k, "k");
    NEED_PTR(op, p->v, "v");
    NEED_PTR(op, p->a, "a");
    NEED_PTR(op, p->b, "b");
    NEED_PTR(op, p->A_log, "A_log");
    NEED_PTR(op, p->dt_bias, "dt_bias");
    NEED_PTR(op, p->o, "o");
    NEED_PTR(op, p->state, "state");
    NEED_PTR(op, p->slot_idx, "slot_idx");
    if (p->slots < 0)
        return ls_fail("%s: slots=%d is negative", op, (int)p->slots);
    const int64_t hk = (int64_t)p->heads_qk * p->dk, hvv = (int64_t)p->heads_v * p->dv;
    if ((p->q_stride_tok && p->q_stride_tok < hk) || (p->k_stride_tok && p->k_stride_tok < hk) ||
        (p->v_stride_tok && p->v_stride_tok < hvv) || p->q_stride_tok < 0 || p->k_stride_tok < 0 ||
        p->v_stride_tok < 0)
        return ls_fail("%s: q/k/v_stride_tok=%lld/%lld/%lld below one token's row (%lld/%lld/%lld)", op,
                       (long long)p->q_stride_tok, (long long)p->k_stride_tok, (long long)p->v_stride_tok,
                       (long long)hk, (long long)hk, (long long)hvv);
    if (p->state_layout != LS_STATE_KV && p->state_layout != LS_STATE_VK)
        return ls_fail("%s: state_layout=%d not LS_STATE_KV (0) or LS_STATE_VK (1)", op, (int)p->state_layout);
    int64_t slot = mul_sat(p->heads_v, p->dk, p->dv);
    TRY(check_slot_stride(op, "state_stride_slot", p->state_stride_slot, slot));
    if (p->inter)
        TRY(check_slot_stride(op, "inter_stride_slot", p->inter_stride_slot,
                              mul_sat(slot, p->tokens, 1)));
    return 0;
}

int ls_ssu_params_check(const ls_ssu_params *p)
{
    const char *op = "ssu";
    if (!p)
        return ls_fail("ssu: params is NULL");
    TRY(check_pos(op, "batch", p->batch));
    TRY(check_pos(op, "tokens", p->tokens));
    TRY(check_pos(op, "nheads", p->nheads));
    TRY(check_pos(op, "head_dim", p->head_dim));
    TRY(check_pos(op, "dstate", p->dstate));
    TRY(check_pos(op, "ngroups", p->ngroups));
    if (p->nheads % p->ngroups != 0)
        return ls_fail("ssu: nheads=%d not a multiple of ngroups=%d", (int)p->nheads,
                       (int)p->ngroups);
    TRY(check_flag(op, "disable_state_update", p->disable_state_update));
    TRY(check_dtype(op, "state_dtype", p->state_dtype));
    NEED_PTR(op, p->x, "x");
    NEED_PTR(op, p->dt, "dt");
    NEED_PTR(op, p->Bm, "Bm");
    NEED_PTR(op, p->Cm, "Cm");
    NEED_PTR(op, p->A, "A");
    NEED_PTR(op, p->dt_bias, "dt_bias");
    NEED_PTR(op, p->D, "D");
    NEED_PTR(op, p->y, "y");
    NEED_PTR(op, p->state, "state");
    NEED_PTR(op, p->slot_idx, "slot_idx");
    if (p->slots < 0)
        return ls_fail("ssu: slots=%d is negative", (int)p->slots);
    int64_t slot = mul_sat(p->nheads, p->head_dim, p->dstate);
    TRY(check_slot_stride(op, "state_stride_slot", p->state_stride_slot, slot));
    if (p->inter)
        TRY(check_slot_stride(op, "inter_stride_slot", p->inter_stride_slot,
                              mul_sat(slot, p->tokens, 1)));
    return 0;
}

/*
 * need_src: the op reads src (copy); need_spec: the op reads spec buffers and step (accept).
 * With neither the op is zero. Index VALUES are not checked here (backend memory); the host
 * reference checks them itself.
 */
int ls_state_params_check(const ls_state_params *p, int need_src, int need_spec)
{
    const char *op = need_src ? "state_copy" : need_spec ? "state_accept" : "state_zero";
    if (!p)
        return ls_fail("%s: params is NULL", op);
    if (p->n_buffers < 1 || p->n_buffers > LS_MAX_BUFFERS)
        return ls_fail("%s: n_buffers=%d not in 1..%d", op, (int)p->n_buffers, LS_MAX_BUFFERS);
    TRY(check_pos(op, "layers", p->layers));
    TRY(check_pos(op, "slots", p->slots));
    if (p->spec_tokens < 0)
        return ls_fail("%s: spec_tokens=%d is negative", op, (int)p->spec_tokens);
    if (p->count < 0)
        return ls_fail("%s: count=%d is negative", op, (int)p->count);
    int any_spec = 0;
    for (int i = 0; i < p->n_buffers; i++) {
        const ls_buffer_view *b = &p->buf[i];
        if (!b->main)
            return ls_fail("%s: buf[%d].main is NULL", op, i);
        if (b->item_bytes <= 0)
            return ls_fail("%s: buf[%d].item_bytes=%lld must be > 0", op, i,
                           (long long)b->item_bytes);
        int64_t per_layer =
            mul_sat(p->slots, b->item_bytes, p->spec_tokens > 0 ? p->spec_tokens : 1);
        if (mul_sat(per_layer, p->layers, 1) == INT64_MAX)
            return ls_fail("%s: buf[%d].item_bytes=%lld overflows layers*slots*item", op, i,
                           (long long)b->item_bytes);
        if (b->spec) {
            if (p->spec_tokens == 0)
                return ls_fail("%s: buf[%d].spec is set but spec_tokens=0", op, i);
            any_spec = 1;
        }
    }
    if (need_spec && p->spec_tokens < 1)
        return ls_fail("%s: spec_tokens=%d but accept needs >= 1", op, (int)p->spec_tokens);
    if (need_spec && !any_spec)
        return ls_fail("%s: no buffer has spec set (n_buffers=%d)", op, (int)p->n_buffers);
    if (p->count > 0) {
        if (!p->dst)
            return ls_fail("%s: dst is NULL (count=%d)", op, (int)p->count);
        if (need_src && !p->src)
            return ls_fail("%s: src is NULL (count=%d)", op, (int)p->count);
        if (need_spec && !p->step)
            return ls_fail("%s: step is NULL (count=%d)", op, (int)p->count);
    }
    return 0;
}
