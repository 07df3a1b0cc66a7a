/* sg_pool_ops.c — the sglang impl's state ops: plans from sg_pool.c, SGLang's Triton kernels
 * through tk_launch, our rendering of torch's index kernels (sg_torch_index.cu) for the temporal
 * state, and the two device resources SGLang's Python keeps: the fused slot kernels' descriptor
 * (cached per pool, as MambaPool caches _conv_slot_desc) and the gather's temporary (torch's
 * caching allocator); and the GDN/KDA gating kernel's cu_seqlens (SGLang's query_start_loc). All
 * are set up on a call outside graph capture (the bench verifies every case eagerly before it
 * captures); a capture that would need a new one fails with a message. */
#include "sg_pool_ops.h"

#include <cuda.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sg_pool.h"
#include "sg_torch_index.h"
#include "tk.h"

extern const tk_variant sg_variants[];
extern const int sg_n_variants;

#define N_TABLES 32

typedef struct table_entry {
    CUcontext ctx;
    CUdeviceptr dev;
    int64_t host[SG_SLOT_TABLE_LEN];
} table_entry;

static table_entry tables[N_TABLES];
static int next_table;
static CUcontext scratch_ctx;
static CUdeviceptr scratch;
static size_t scratch_bytes;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static int cu_err(CUresult r, const char *what, char *err, size_t cap)
{
    const char *s = NULL;
    cuGetErrorString(r, &s);
    snprintf(err, cap, "sglang: %s: %s", what, s ? s : "unknown CUDA error");
    return -1;
}

/* The calling thread's CUDA context, or NULL with err. */
static CUcontext current_ctx(char *err, size_t cap)
{
    CUcontext ctx = NULL;
    if (cuCtxGetCurrent(&ctx) != CUDA_SUCCESS || !ctx) {
        snprintf(err, cap, "sglang: no current CUDA context");
        return NULL;
    }
    return ctx;
}

/* 0 when s is not capturing; -1 with err naming what the call would have to set up. */
static int not_capturing(ls_stream s, const char *what, char *err, size_t cap)
{
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    CUresult r = cuStreamIsCapturing((CUstream)s, &st);
    if (r != CUDA_SUCCESS)
        return cu_err(r, "cuStreamIsCapturing", err, cap);
    if (st != CU_STREAM_CAPTURE_STATUS_NONE) {
        snprintf(err, cap, "sglang: %s is set up on the first call for a pool; run the op once outside "
                 "graph capture first", what);
        return -1;
    }
    return 0;
}

/* The device copy of this pool's slot descriptor (uploaded on the stream on a miss). */
static const int64_t *slot_table(const ls_state_params *p, ls_stream s, char *err, size_t cap)
{
    int64_t want[SG_SLOT_TABLE_LEN];
    sg_slot_table(p, want);
    CUcontext ctx = current_ctx(err, cap);
    if (!ctx)
        return NULL;
    const int64_t *out = NULL;
    pthread_mutex_lock(&mu);
    for (int i = 0; i < N_TABLES && !out; i++)
        if (tables[i].dev && tables[i].ctx == ctx && memcmp(tables[i].host, want, sizeof want) == 0)
            out = (const int64_t *)(uintptr_t)tables[i].dev;
    if (out || not_capturing(s, "the fused slot kernels' descriptor", err, cap) != 0)
        goto done;
    table_entry *e = &tables[next_table];
    next_table = (next_table + 1) % N_TABLES;
    CUresult r;
    if (e->dev && e->ctx != ctx) {
        cuMemFree(e->dev);
        e->dev = 0;
    }
    if (!e->dev && (r = cuMemAlloc(&e->dev, sizeof want)) != CUDA_SUCCESS) {
        e->dev = 0;
        cu_err(r, "cuMemAlloc(slot descriptor)", err, cap);
        goto done;
    }
    e->ctx = ctx;
    memcpy(e->host, want, sizeof want);
    /* pageable source: staged before the call returns, after the stream's earlier work */
    if ((r = cuMemcpyHtoDAsync(e->dev, e->host, sizeof want, (CUstream)s)) != CUDA_SUCCESS) {
        memset(e->host, 0, sizeof e->host);
        cu_err(r, "cuMemcpyHtoDAsync(slot descriptor)", err, cap);
        goto done;
    }
    out = (const int64_t *)(uintptr_t)e->dev;
done:
    pthread_mutex_unlock(&mu);
    return out;
}

/* SGLang's query_start_loc for T tokens per request: one grow-only int32 table 0, T, 2T, ... per
 * (T, CUDA context); a call with B requests reads its first B + 1 entries. */
#define QSL_MAX_T 64
static struct {
    CUcontext ctx;
    CUdeviceptr dev;
    int len;
    int32_t *host;
} qsl[QSL_MAX_T + 1];

const int32_t *sg_query_start_loc(int B, int T, ls_stream s, char *err, size_t cap)
{
    if (B < 1 || T < 1 || T > QSL_MAX_T) {
        snprintf(err, cap, "sglang: query_start_loc: B=%d T=%d (T must be 1..%d)", B, T, QSL_MAX_T);
        return NULL;
    }
    CUcontext ctx = current_ctx(err, cap);
    if (!ctx)
        return NULL;
    const int32_t *out = NULL;
    pthread_mutex_lock(&mu);
    if (qsl[T].dev && qsl[T].ctx == ctx && qsl[T].len >= B + 1) {
        out = (const int32_t *)(uintptr_t)qsl[T].dev;
        goto done;
    }
    if (not_capturing(s, "cu_seqlens (query_start_loc)", err, cap) != 0)
        goto done;
    int len = B + 1 > 1024 ? B + 1 : 1024;
    if ((long long)(len - 1) * T > INT32_MAX) {
        snprintf(err, cap, "sglang: query_start_loc: B*T = %lld past i32", (long long)B * T);
        goto done;
    }
    int32_t *host = malloc(sizeof *host * (size_t)len);
    CUdeviceptr dev = 0;
    CUresult r;
    if (!host) {
        snprintf(err, cap, "sglang: out of host memory (query_start_loc)");
        goto done;
    }
    for (int i = 0; i < len; i++)
        host[i] = i * T;
    if ((r = cuMemAlloc(&dev, sizeof *host * (size_t)len)) != CUDA_SUCCESS ||
        (r = cuMemcpyHtoDAsync(dev, host, sizeof *host * (size_t)len, (CUstream)s)) != CUDA_SUCCESS) {
        cu_err(r, "query_start_loc upload", err, cap);
        if (dev)
            cuMemFree(dev);
        free(host);
        goto done;
    }
    /* the old table may still be read by queued launches of the stream: freed after them
     * (cuMemFree synchronises with the device) */
    if (qsl[T].dev && qsl[T].ctx == ctx)
        cuMemFree(qsl[T].dev);
    free(qsl[T].host);
    qsl[T].ctx = ctx;
    qsl[T].dev = dev;
    qsl[T].len = len;
    qsl[T].host = host; /* pageable source: kept alive with the table */
    out = (const int32_t *)(uintptr_t)dev;
done:
    pthread_mutex_unlock(&mu);
    return out;
}

/* A device temporary of at least `bytes` (grow-only; one stream at a time). */
static void *gather_scratch(size_t bytes, ls_stream s, char *err, size_t cap)
{
    CUcontext ctx = current_ctx(err, cap);
    if (!ctx)
        return NULL;
    void *out = NULL;
    pthread_mutex_lock(&mu);
    if (scratch && scratch_ctx == ctx && scratch_bytes >= bytes) {
        out = (void *)(uintptr_t)scratch;
        goto done;
    }
    if (not_capturing(s, "the temporal gather's temporary", err, cap) != 0)
        goto done;
    if (scratch)
        cuMemFree(scratch);
    scratch = 0;
    scratch_bytes = 0;
    CUresult r = cuMemAlloc(&scratch, bytes);
    if (r != CUDA_SUCCESS) {
        scratch = 0;
        cu_err(r, "cuMemAlloc(temporal gather temporary)", err, cap);
        goto done;
    }
    scratch_ctx = ctx;
    scratch_bytes = bytes;
    out = (void *)(uintptr_t)scratch;
done:
    pthread_mutex_unlock(&mu);
    return out;
}

static const tk_variant *find(const sg_plan *pl, char *err, size_t cap)
{
    return tk_require(sg_variants, sg_n_variants, pl->kernel, pl->key, "sglang", SG_BUILT_PRESETS, err, cap);
}

/* The fused slot copy (clear = 0) or clear over the conv tensors. */
static int slot_kernel(const ls_state_params *p, int clear, ls_stream s, char *err, size_t cap)
{
    sg_plan pl;
    tk_call c;
    sg_slot_plan(p, clear, &pl, err, cap);
    const tk_variant *v = find(&pl, err, cap);
    if (!v)
        return LS_OP_UNSUPPORTED;
    const int64_t *table = slot_table(p, s, err, cap);
    if (!table)
        return -1;
    sg_slot_args(p, clear, &pl, v, table, &c);
    return tk_launch(&c, s, err, cap);
}

static uint32_t *temporal(const ls_state_params *p) { return (uint32_t *)p->buf[p->n_buffers - 1].main; }

static int torch_rc(int rc, char *err, size_t cap)
{
    if (rc != 0)
        snprintf(err, cap, "%s", sg_torch_index_error());
    return rc;
}

/* sg_pool_check's answer as an op's return value */
static int check_rc(const ls_state_params *p, int kind, char *err, size_t cap)
{
    int rc = sg_pool_check(p, kind, err, cap);
    return rc > 0 ? LS_OP_UNSUPPORTED : rc;
}

/* What copy and zero share: the checks, the index plan, nothing to do for an empty list, and the
 * conv tensors' Triton slot kernel (zero: clear, else copy). 0 with *todo = 1 when the temporal
 * state's torch-index kernels are still to launch; else the op's return value. */
static int slot_prologue(const ls_state_params *p, int kind, sg_index_shape *ix, ls_stream s, char *err,
                         size_t cap, int *todo)
{
    *todo = 0;
    int rc = check_rc(p, kind, err, cap);
    if (rc != 0)
        return rc;
    if (sg_index_plan(p, ix, err, cap) != 0)
        return LS_OP_UNSUPPORTED;
    if (p->count == 0)
        return 0;
    rc = slot_kernel(p, kind == SG_POOL_ZERO, s, err, cap);
    *todo = rc == 0;
    return rc;
}

int sg_pool_copy(const ls_state_params *p, ls_stream s, char *err, size_t cap)
{
    sg_index_shape ix;
    int todo;
    int rc = slot_prologue(p, SG_POOL_COPY, &ix, s, err, cap, &todo);
    if (!todo)
        return rc;
    /* temporal[:, dst] = temporal[:, src]: aten::index into a temporary, then aten::index_put_ */
    uint32_t *tmp = gather_scratch((size_t)ix.scratch_bytes, s, err, cap);
    if (!tmp)
        return -1;
    if (torch_rc(sg_torch_index_gather(tmp, temporal(p), p->src, ix.layers, ix.rows, ix.elem, ix.layer_stride,
                                       ix.blocks, s), err, cap) != 0)
        return -1;
    return torch_rc(sg_torch_index_put(temporal(p), tmp, p->dst, ix.layers, ix.rows, ix.elem, ix.layer_stride,
                                       ix.blocks, s), err, cap);
}

int sg_pool_zero(const ls_state_params *p, ls_stream s, char *err, size_t cap)
{
    sg_index_shape ix;
    int todo;
    int rc = slot_prologue(p, SG_POOL_ZERO, &ix, s, err, cap, &todo);
    if (!todo)
        return rc;
    /* temporal.index_fill_(1, idx, 0) */
    return torch_rc(sg_torch_index_fill0(temporal(p), p->dst, ix.layers, ix.rows, ix.elem, ix.layer_stride,
                                         ix.blocks, s), err, cap);
}

int sg_pool_accept(const ls_state_params *p, ls_stream s, char *err, size_t cap)
{
    int rc = check_rc(p, SG_POOL_ACCEPT, err, cap);
    if (rc != 0)
        return rc;
    if (p->count == 0)
        return 0;
    /* resolve every launch first, so a refusal launches nothing */
    sg_plan pl[LS_MAX_BUFFERS];
    const tk_variant *v[LS_MAX_BUFFERS];
    for (int b = 0; b < p->n_buffers; b++) {
        if (!p->buf[b].spec)
            continue;
        if (sg_accept_plan(p, b, &pl[b], err, cap) != 0 || !(v[b] = find(&pl[b], err, cap)))
            return LS_OP_UNSUPPORTED;
    }
    /* scatter_mamba_states_after_mtp_verify: the temporal state first, then each conv tensor */
    for (int k = 0; k < p->n_buffers; k++) {
        int b = (k + p->n_buffers - 1) % p->n_buffers; /* temporal (last), then conv 0, 1, ... */
        if (!p->buf[b].spec)
            continue;
        tk_call c;
        sg_accept_args(p, b, &pl[b], v[b], &c);
        if (tk_launch(&c, s, err, cap) != 0)
            return -1;
    }
    return 0;
}

int sg_pool_explain(ls_op op, const ls_state_params *p, char *buf, size_t cap)
{
    char err[256];
    int kind = op == LS_OP_STATE_COPY ? SG_POOL_COPY : op == LS_OP_STATE_ACCEPT ? SG_POOL_ACCEPT : SG_POOL_ZERO;
    if (sg_pool_check(p, kind, err, sizeof err) != 0)
        return -1;
    sg_plan pl;
    if (kind == SG_POOL_ACCEPT) {
        size_t n = 0;
        buf[0] = 0;
        for (int k = 0; k < p->n_buffers && n < cap; k++) {
            int b = (k + p->n_buffers - 1) % p->n_buffers;
            if (!p->buf[b].spec || sg_accept_plan(p, b, &pl, err, sizeof err) != 0)
                continue;
            n += (size_t)snprintf(buf + n, cap - n, "%s%s[%s] grid %ux%ux%u warps 4", n ? " + " : "", pl.kernel,
                                  pl.key, pl.grid[0], pl.grid[1], pl.grid[2]);
        }
        return 0;
    }
    sg_index_shape ix;
    sg_slot_plan(p, kind == SG_POOL_ZERO, &pl, err, sizeof err);
    if (sg_index_plan(p, &ix, err, sizeof err) != 0)
        return -1;
    snprintf(buf, cap, "%s[%s] grid %ux%ux%u warps 4 + %s (our CUDA rendering of torch's) grid %u block %d",
             pl.kernel, pl.key, pl.grid[0], pl.grid[1], pl.grid[2],
             kind == SG_POOL_ZERO ? "temporal index_fill_" : "temporal index + index_put_ (2 launches)",
             ix.blocks, SG_TORCH_THREADS);
    return 0;
}
