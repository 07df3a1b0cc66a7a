/* launch.c — the CUDA driver side of the Triton-AOT launcher (tk.h): cuModuleLoadData once per
 * (variant, context), cuModuleGetFunction, cuLaunchKernelEx on the caller's stream with the
 * attributes Triton's own launcher sets (PDL when the variant was compiled with launch_pdl, the
 * cluster dims when num_ctas > 1). */
#include <cuda.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "peer_arch.h"
#include "tk.h"

#define TK_MAX_LOADED 1024 /* > the variants of one peer (sglang: 649), one context */

typedef struct loaded {
    const tk_variant *v;
    CUcontext ctx;
    CUmodule mod;
    CUfunction fn;
    CUdeviceptr scratch;
    size_t scratch_bytes;
} loaded;

static loaded table[TK_MAX_LOADED];
static int n_table;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static int cu_fail(CUresult r, const char *what, const tk_variant *v, char *err, size_t cap)
{
    const char *s = NULL;
    cuGetErrorString(r, &s);
    snprintf(err, cap, "%s[%s]: %s: %s", v->kernel, v->key, what, s ? s : "unknown CUDA error");
    return -1;
}

/* The current device's compute capability (major * 10 + minor), cached per device; 0 unknown. */
static int device_cc(void)
{
    static int cached[64];
    CUdevice dev;
    int major = 0, minor = 0;
    if (cuCtxGetDevice(&dev) != CUDA_SUCCESS || dev < 0)
        return 0;
    if (dev < 64 && cached[dev])
        return cached[dev];
    if (cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev) != CUDA_SUCCESS ||
        cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev) != CUDA_SUCCESS)
        return 0;
    if (dev < 64)
        cached[dev] = major * 10 + minor;
    return major * 10 + minor;
}

int tk_device_refuses(int arch, const char *who, char *err, size_t cap)
{
    int cc = device_cc();
    return cc ? peer_arch_refuse(arch, cc, who, err, cap) : 0; /* unknown: the module load will say */
}

/* PEER_UNSUPPORTED when the current device cannot run v's cubin (peer_arch.h), else 0. */
static int arch_refused(const tk_variant *v, char *err, size_t cap)
{
    char who[256];
    snprintf(who, sizeof who, "%s[%s] (Triton AOT cubin)", v->kernel, v->key);
    return tk_device_refuses(v->arch, who, err, cap);
}

/* The loaded module of v in the current context; NULL with err set (*unsupported = 1 when the
 * device's arch cannot run the cubin). Checked once per (variant, context): later calls find
 * the table entry, so the timed launches pay no query. */
static loaded *get(const tk_variant *v, char *err, size_t cap, int *unsupported)
{
    CUcontext ctx = NULL;
    CUresult r = cuCtxGetCurrent(&ctx);
    *unsupported = 0;
    if (r != CUDA_SUCCESS || !ctx) {
        snprintf(err, cap, "%s[%s]: no current CUDA context (the cuda runtime sets one up)",
                 v->kernel, v->key);
        return NULL;
    }
    pthread_mutex_lock(&mu);
    for (int i = 0; i < n_table; i++)
        if (table[i].v == v && table[i].ctx == ctx) {
            pthread_mutex_unlock(&mu);
            return &table[i];
        }
    loaded *l = NULL;
    if (n_table >= TK_MAX_LOADED) {
        snprintf(err, cap, "%s[%s]: too many loaded kernels", v->kernel, v->key);
        goto out;
    }
    loaded e = {.v = v, .ctx = ctx};
    if (arch_refused(v, err, cap)) {
        *unsupported = 1;
        goto out;
    }
    if ((r = cuModuleLoadData(&e.mod, v->cubin)) != CUDA_SUCCESS) {
        cu_fail(r, "cuModuleLoadData", v, err, cap);
        *unsupported = r == CUDA_ERROR_NO_BINARY_FOR_GPU; /* an arch the check did not know */
        goto out;
    }
    if ((r = cuModuleGetFunction(&e.fn, e.mod, v->entry)) != CUDA_SUCCESS) {
        cu_fail(r, "cuModuleGetFunction", v, err, cap);
        cuModuleUnload(e.mod);
        goto out;
    }
    if (v->shared > 49152) {
        r = cuFuncSetAttribute(e.fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, v->shared);
        if (r != CUDA_SUCCESS) {
            cu_fail(r, "cuFuncSetAttribute(max dynamic shared)", v, err, cap);
            cuModuleUnload(e.mod);
            goto out;
        }
    }
    table[n_table] = e;
    l = &table[n_table++];
out:
    pthread_mutex_unlock(&mu);
    return l;
}

int tk_launch(const tk_call *c, void *stream, char *err, size_t cap)
{
    tk_packed pk;
    if (tk_marshal(c, &pk, err, cap) != 0)
        return -1;
    const tk_variant *v = c->v;
    if (v->profile_scratch_size > 0) {
        snprintf(err, cap, "%s[%s]: needs profile scratch (compiled with instrumentation)",
                 v->kernel, v->key);
        return -1;
    }
    unsigned long long programs = (unsigned long long)c->grid[0] * c->grid[1] * c->grid[2];
    if (programs == 0)
        return 0; /* Triton's launcher skips an empty grid too */
    int unsupported;
    loaded *l = get(v, err, cap, &unsupported);
    if (!l)
        return unsupported ? PEER_UNSUPPORTED : -1;
    if (v->global_scratch_size > 0) {
        /* as the JIT: grid * num_ctas * size bytes, allocated when a larger grid comes */
        size_t need = (size_t)(programs * (unsigned long long)v->num_ctas * (unsigned long long)v->global_scratch_size);
        pthread_mutex_lock(&mu);
        if (need > l->scratch_bytes) {
            if (l->scratch)
                cuMemFree(l->scratch);
            l->scratch = 0;
            l->scratch_bytes = 0;
            CUresult r = cuMemAlloc(&l->scratch, need);
            if (r != CUDA_SUCCESS) {
                pthread_mutex_unlock(&mu);
                return cu_fail(r, "cuMemAlloc(global scratch)", v, err, cap);
            }
            l->scratch_bytes = need;
        }
        pk.scratch[0] = (uint64_t)l->scratch;
        pthread_mutex_unlock(&mu);
    }
    CUlaunchAttribute attrs[3];
    unsigned n_attrs = 0;
    memset(attrs, 0, sizeof attrs);
    if (v->launch_pdl) {
        attrs[n_attrs].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
        attrs[n_attrs].value.programmaticStreamSerializationAllowed = 1;
        n_attrs++;
    }
    if (v->num_ctas != 1) {
        attrs[n_attrs].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        attrs[n_attrs].value.clusterDim.x = (unsigned)v->num_ctas;
        attrs[n_attrs].value.clusterDim.y = 1;
        attrs[n_attrs].value.clusterDim.z = 1;
        n_attrs++;
        attrs[n_attrs].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE;
        attrs[n_attrs].value.clusterSchedulingPolicyPreference = CU_CLUSTER_SCHEDULING_POLICY_SPREAD;
        n_attrs++;
    }
    CUlaunchConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDimX = c->grid[0] * (unsigned)v->num_ctas;
    cfg.gridDimY = c->grid[1];
    cfg.gridDimZ = c->grid[2];
    cfg.blockDimX = 32u * (unsigned)v->num_warps;
    cfg.blockDimY = 1;
    cfg.blockDimZ = 1;
    cfg.sharedMemBytes = (unsigned)v->shared;
    cfg.hStream = (CUstream)stream;
    cfg.attrs = attrs;
    cfg.numAttrs = n_attrs;
    CUresult r = cuLaunchKernelEx(&cfg, l->fn, pk.params, NULL);
    if (r != CUDA_SUCCESS)
        return cu_fail(r, "cuLaunchKernelEx", v, err, cap);
    return 0;
}
