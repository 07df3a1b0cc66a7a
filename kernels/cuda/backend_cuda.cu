/*
 * backend_cuda.cu — the "cuda" ls_runtime table: device selection/description, cudaMalloc memory,
 * copies, streams, CUDA events, CUDA graphs by stream capture, profiler control, and the kernel
 * launchers (ls_cuda_* from the other .cu files of this folder).
 *
 * Conventions: every function returns 0 or -1 with ls_last_error() set ("file:line: call: error");
 * mem_alloc returns NULL with the error naming the size. ls_stream NULL is the legacy default
 * stream; graph capture needs a created (non-default) stream.
 */
#include <cuda_profiler_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_common.cuh"
#include "device_uuid.h"

/* ------------------------------------------------------------------ device */

/* 0 devices (not an error) when there is no GPU or no usable driver; the sticky error that
 * cudaGetDeviceCount leaves behind is cleared so later calls start clean. */
static int cuda_device_count(void)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return n;
}

static int cuda_set_device(int index)
{
    LS_CUDA_TRY(cudaSetDevice(index));
    return 0;
}

/* SM count of the current device, cached for the first 16 device indices. */
extern "C" int ls_cuda_sm_count(void)
{
    static int cache[16];
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess) {
        (void)cudaGetLastError();
        return 1;
    }
    if (dev >= 0 && dev < 16 && cache[dev] > 0)
        return cache[dev];
    int n = 0;
    if (cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || n <= 0) {
        (void)cudaGetLastError();
        return 1;
    }
    if (dev >= 0 && dev < 16)
        cache[dev] = n;
    return n;
}

/*
 * Name, SMs, L2, clocks (cudaDevAttrClockRate / MemoryClockRate: CUDA 13 removed the
 * cudaDeviceProp fields), driver/runtime versions, free/total memory (cudaMemGetInfo needs the
 * device current: switched temporarily), PCI bus id, UUID (nvidia-smi's text form).
 */
static int cuda_device_info(int index, ls_device_info *out)
{
    if (!out)
        return ls_fail("cuda device_info: out is NULL");
    memset(out, 0, sizeof *out);
    cudaDeviceProp prop;
    LS_CUDA_TRY(cudaGetDeviceProperties(&prop, index));
    size_t nlen = strnlen(prop.name, sizeof prop.name);
    if (nlen >= sizeof out->name)
        nlen = sizeof out->name - 1;
    memcpy(out->name, prop.name, nlen); /* out was zeroed: stays NUL-terminated */
    out->index = index;
    out->sm_count = prop.multiProcessorCount;
    out->l2_bytes = prop.l2CacheSize;
    int khz = 0;
    LS_CUDA_TRY(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, index));
    out->sm_clock_mhz = khz / 1000;
    khz = 0;
    LS_CUDA_TRY(cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, index));
    out->mem_clock_mhz = khz / 1000;
    LS_CUDA_TRY(cudaDriverGetVersion(&out->driver_version));
    LS_CUDA_TRY(cudaRuntimeGetVersion(&out->runtime_version));
    int cur = 0;
    LS_CUDA_TRY(cudaGetDevice(&cur));
    if (cur != index)
        LS_CUDA_TRY(cudaSetDevice(index));
    size_t free_b = 0, total_b = 0;
    cudaError_t e = cudaMemGetInfo(&free_b, &total_b);
    if (cur != index)
        LS_CUDA_TRY(cudaSetDevice(cur));
    LS_CUDA_TRY(e);
    out->free_bytes = (int64_t)free_b;
    out->total_bytes = (int64_t)total_b;
    LS_CUDA_TRY(cudaDeviceGetPCIBusId(out->pci_bus_id, (int)sizeof out->pci_bus_id, index));
    ls_format_gpu_uuid((const unsigned char *)prop.uuid.bytes, out->uuid, sizeof out->uuid);
    return 0;
}

/* ------------------------------------------------------------------ memory and copies */

static void *cuda_mem_alloc(size_t bytes)
{
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, bytes ? bytes : 1);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        ls_fail("%s:%d: cudaMalloc(%zu bytes): %s", __FILE__, __LINE__, bytes, cudaGetErrorString(e));
        return NULL;
    }
    return p;
}

static void cuda_mem_free(void *p)
{
    if (p)
        (void)cudaFree(p);
}

static int cuda_mem_set(void *dst, int byte, size_t bytes, ls_stream s)
{
    LS_CUDA_TRY(cudaMemsetAsync(dst, byte, bytes, ls_cuda_stream(s)));
    return 0;
}

/* Host<->device copies are synchronous (they return when the data is in place). */
static int cuda_copy_h2d(void *dst, const void *src, size_t bytes)
{
    LS_CUDA_TRY(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
    return 0;
}

static int cuda_copy_d2h(void *dst, const void *src, size_t bytes)
{
    LS_CUDA_TRY(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
    return 0;
}

static int cuda_copy_d2d(void *dst, const void *src, size_t bytes, ls_stream s)
{
    LS_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, ls_cuda_stream(s)));
    return 0;
}

/* upload: the words ride in the launch's parameter buffer, which the driver copies when the
 * launch is issued, so the host's list is free at once and nothing waits for the device. Two
 * sizes keep a one-row list (a fork's two indices) from carrying 4 KB of parameters. */
template <int N> struct upload_words {
    uint32_t w[N];
};

template <int N>
__global__ void __launch_bounds__(256) upload_kernel(const upload_words<N> v, uint32_t *dst, int n)
{
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        dst[i] = v.w[i];
}

template <int N> static int upload_launch(uint32_t *dst, const void *src, int n, cudaStream_t st)
{
    upload_words<N> v;
    memcpy(v.w, src, (size_t)n * 4);
    upload_kernel<N><<<1, 256, 0, st>>>(v, dst, n);
    LS_CUDA_TRY(cudaGetLastError());
    return 0;
}

static int cuda_upload(void *dst, const void *src, size_t bytes, ls_stream s)
{
    if (bytes == 0)
        return 0;
    if (!dst || !src)
        return ls_fail("cuda: upload: %s is NULL (%zu bytes)", dst ? "src" : "dst", bytes);
    if (ls_upload_check("cuda", dst, bytes))
        return -1;
    const int n = (int)(bytes / 4);
    if (n <= 16)
        return upload_launch<16>((uint32_t *)dst, src, n, ls_cuda_stream(s));
    return upload_launch<LS_UPLOAD_MAX_BYTES / 4>((uint32_t *)dst, src, n, ls_cuda_stream(s));
}

/* ------------------------------------------------------------------ streams and events */

static int cuda_stream_create(ls_stream *out)
{
    cudaStream_t st;
    LS_CUDA_TRY(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    *out = (ls_stream)st;
    return 0;
}

static int cuda_stream_destroy(ls_stream s)
{
    if (s)
        LS_CUDA_TRY(cudaStreamDestroy(ls_cuda_stream(s)));
    return 0;
}

/* NULL (default stream) waits for the whole device, so work on non-blocking streams is covered too. */
static int cuda_sync(ls_stream s)
{
    if (s)
        LS_CUDA_TRY(cudaStreamSynchronize(ls_cuda_stream(s)));
    else
        LS_CUDA_TRY(cudaDeviceSynchronize());
    return 0;
}

struct ls_event {
    cudaEvent_t ev;
};

static int cuda_event_create(ls_event **out)
{
    ls_event *e = (ls_event *)calloc(1, sizeof *e);
    if (!e)
        return ls_fail("cuda event_create: out of host memory");
    cudaError_t err = cudaEventCreate(&e->ev);
    if (err != cudaSuccess) {
        free(e);
        return ls_fail("%s:%d: cudaEventCreate: %s", __FILE__, __LINE__, cudaGetErrorString(err));
    }
    *out = e;
    return 0;
}

static int cuda_event_destroy(ls_event *e)
{
    if (!e)
        return 0;
    cudaError_t err = cudaEventDestroy(e->ev);
    free(e);
    LS_CUDA_TRY(err);
    return 0;
}

static int cuda_event_record(ls_event *e, ls_stream s)
{
    LS_CUDA_TRY(cudaEventRecord(e->ev, ls_cuda_stream(s)));
    return 0;
}

/* Waits for `stop`, then returns stop - start in microseconds. */
static int cuda_event_elapsed_us(ls_event *start, ls_event *stop, double *us)
{
    float ms = 0.0f;
    LS_CUDA_TRY(cudaEventSynchronize(stop->ev));
    LS_CUDA_TRY(cudaEventElapsedTime(&ms, start->ev, stop->ev));
    *us = (double)ms * 1000.0;
    return 0;
}

/* ------------------------------------------------------------------ graphs */

struct ls_graph {
    cudaGraph_t graph;
    cudaGraphExec_t exec;
};

/* Global capture mode: any unsafe API call from another thread during capture fails loudly. */
static int cuda_graph_begin(ls_stream s)
{
    if (!s)
        return ls_fail("cuda graph_begin: the default stream cannot be captured; create a stream");
    LS_CUDA_TRY(cudaStreamBeginCapture(ls_cuda_stream(s), cudaStreamCaptureModeGlobal));
    return 0;
}

static int cuda_graph_end(ls_stream s, ls_graph **out)
{
    cudaGraph_t g = NULL;
    LS_CUDA_TRY(cudaStreamEndCapture(ls_cuda_stream(s), &g));
    ls_graph *lg = (ls_graph *)calloc(1, sizeof *lg);
    if (!lg) {
        cudaGraphDestroy(g);
        return ls_fail("cuda graph_end: out of host memory");
    }
    lg->graph = g;
    cudaError_t e = cudaGraphInstantiate(&lg->exec, g, 0);
    if (e != cudaSuccess) {
        cudaGraphDestroy(g);
        free(lg);
        return ls_fail("%s:%d: cudaGraphInstantiate: %s", __FILE__, __LINE__, cudaGetErrorString(e));
    }
    *out = lg;
    return 0;
}

static int cuda_graph_launch(ls_graph *g, ls_stream s)
{
    LS_CUDA_TRY(cudaGraphLaunch(g->exec, ls_cuda_stream(s)));
    return 0;
}

static int cuda_graph_destroy(ls_graph *g)
{
    if (!g)
        return 0;
    cudaError_t e1 = cudaGraphExecDestroy(g->exec);
    cudaError_t e2 = cudaGraphDestroy(g->graph);
    free(g);
    LS_CUDA_TRY(e1);
    LS_CUDA_TRY(e2);
    return 0;
}

/* ------------------------------------------------------------------ profiler */

static int cuda_profiler_start(void)
{
    LS_CUDA_TRY(cudaProfilerStart());
    return 0;
}

static int cuda_profiler_stop(void)
{
    LS_CUDA_TRY(cudaProfilerStop());
    return 0;
}

/* ------------------------------------------------------------------ stream hold */

/* Two words of host-mapped memory: release (host -> kernel) and result (kernel -> host). */
struct ls_hold {
    volatile int32_t *host;   /* [0] release flag, [1] result */
    int32_t *dev;             /* the same words as the device sees them */
    unsigned long long timeout_ns;
};

enum { HOLD_PENDING = 0, HOLD_RELEASED = 1, HOLD_TIMED_OUT = 2 };

static __device__ __forceinline__ unsigned long long hold_clock_ns()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* One thread polls the release word over PCIe (sleeping between polls) and records how the
 * hold ended. It touches no device memory, so it needs no PDL wait. */
__global__ void ls_hold_kernel(int32_t *words, unsigned long long timeout_ns)
{
    volatile int32_t *w = words;
    const unsigned long long t0 = hold_clock_ns();
    while (w[0] == 0) {
        if (hold_clock_ns() - t0 > timeout_ns) {
            w[1] = HOLD_TIMED_OUT;
            return;
        }
        __nanosleep(1000);
    }
    w[1] = HOLD_RELEASED;
}

static int cuda_hold_create(ls_hold **out, int timeout_ms)
{
    if (timeout_ms < 1)
        return ls_fail("cuda hold_create: timeout_ms = %d, need >= 1", timeout_ms);
    ls_hold *h = (ls_hold *)calloc(1, sizeof *h);
    if (!h)
        return ls_fail("cuda hold_create: out of host memory");
    void *p = NULL;
    cudaError_t e = cudaHostAlloc(&p, 2 * sizeof(int32_t), cudaHostAllocMapped);
    if (e == cudaSuccess)
        e = cudaHostGetDevicePointer((void **)&h->dev, p, 0);
    if (e != cudaSuccess) {
        if (p)
            cudaFreeHost(p);
        free(h);
        return ls_fail("%s:%d: cudaHostAlloc/GetDevicePointer (stream hold): %s", __FILE__, __LINE__,
                       cudaGetErrorString(e));
    }
    h->host = (volatile int32_t *)p;
    h->host[0] = 1; /* nothing held yet */
    h->host[1] = HOLD_RELEASED;
    h->timeout_ns = (unsigned long long)timeout_ms * 1000000ull;
    *out = h;
    return 0;
}

static int cuda_hold_destroy(ls_hold *h)
{
    if (!h)
        return 0;
    h->host[0] = 1; /* a hold still queued ends at once; cudaFreeHost waits for the device */
    cudaError_t e = cudaFreeHost((void *)h->host);
    free(h);
    LS_CUDA_TRY(e);
    return 0;
}

/* Launched without the PDL attribute: the hold starts only once everything before it in the
 * stream has completed, and the work behind it starts only once it has. */
static int cuda_hold_enqueue(ls_hold *h, ls_stream s)
{
    h->host[0] = 0;
    h->host[1] = HOLD_PENDING;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(1), cfg.blockDim = dim3(1), cfg.stream = ls_cuda_stream(s);
    LS_CUDA_TRY(cudaLaunchKernelEx(&cfg, ls_hold_kernel, h->dev, h->timeout_ns));
    LS_CUDA_CHECK_LAUNCH("ls_hold_kernel");
    return 0;
}

static int cuda_hold_release(ls_hold *h)
{
    __atomic_store_n((int32_t *)h->host, 1, __ATOMIC_SEQ_CST);
    return 0;
}

static int cuda_hold_result(const ls_hold *h)
{
    return h->host[1] == HOLD_TIMED_OUT ? 1 : 0;
}

/* ------------------------------------------------------------------ the table */

/* Designated initializers (in declaration order; nvcc accepts them in C++17): a constant-
 * initialised table, no run-time construction and no C++ runtime needed by C callers. */
static const ls_runtime cuda_backend = {
    .abi_version = LS_RUNTIME_ABI,
    .name = "cuda",
    .caps = LS_RT_DEVICE_MEMORY | LS_RT_GRAPHS | LS_RT_HOLD | LS_RT_PCI,
    .device_count = cuda_device_count,
    .set_device = cuda_set_device,
    .device_info = cuda_device_info,
    .mem_alloc = cuda_mem_alloc,
    .mem_free = cuda_mem_free,
    .mem_set = cuda_mem_set,
    .copy_h2d = cuda_copy_h2d,
    .copy_d2h = cuda_copy_d2h,
    .copy_d2d = cuda_copy_d2d,
    .upload = cuda_upload,
    .stream_create = cuda_stream_create,
    .stream_destroy = cuda_stream_destroy,
    .sync = cuda_sync,
    .event_create = cuda_event_create,
    .event_destroy = cuda_event_destroy,
    .event_record = cuda_event_record,
    .event_elapsed_us = cuda_event_elapsed_us,
    .graph_begin = cuda_graph_begin,
    .graph_end = cuda_graph_end,
    .graph_launch = cuda_graph_launch,
    .graph_destroy = cuda_graph_destroy,
    .profiler_start = cuda_profiler_start,
    .profiler_stop = cuda_profiler_stop,
    .hold_create = cuda_hold_create,
    .hold_destroy = cuda_hold_destroy,
    .hold_enqueue = cuda_hold_enqueue,
    .hold_release = cuda_hold_release,
    .hold_result = cuda_hold_result,
};

extern "C" const ls_runtime *ls_runtime_cuda(void) { return &cuda_backend; }
