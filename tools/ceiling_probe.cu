/*
 * ceiling_probe.cu — why memory allocated after large frees copies slower (issue 13, item 4).
 * A tool the GPU machine runs, not a test (scripts/jobs/ceiling-probe.sh, docs/timing.md
 * "Copy-peak ceiling").
 *
 * Every number is the copy bandwidth of one buffer pair, measured like the bench's ceiling
 * (harness/copy_peak.c): source memset, one warm-up cudaMemcpyAsync D2D, then REPS copies each
 * between two events, GB/s = 2 x bytes / median time. Pairs, per size (64 MiB, 256 MiB, SIZE):
 *   kept        allocated and touched at start-up, before any large free (the reference)
 *   fresh0      cudaMalloc'd at start-up after the kept pairs, no large free before it
 * then ROUNDS times: cudaMalloc FREE_GB in CHUNK_GB chunks, memset them all, free them all, and
 *   kept        the start-up pairs again (the GPU itself: clocks, power, state)
 *   fresh       cudaMalloc'd now (the driver's pages after the free: the issue's case)
 *   fresh+warm  the same fresh SIZE pair after 100 more copies (a first-use effect fades)
 *   arena       carved from one cudaMalloc made at start-up, first touched now
 *               (pages held since start-up: what a reserved arena would give)
 *   vmm         cuMemCreate + cuMemAddressReserve + cuMemMap now, recommended granularity
 *               (new physical pages, mapped by us at 2 MiB granularity, not by cudaMalloc)
 *   async       cudaMallocAsync from the default pool now, after cudaMemPoolTrimTo(pool, 0)
 * Each line: round kind size_mib gbps pct_vs_kept (against the kept pair of that size, same round).
 *
 * Reading it: kept after free ~ kept at start  -> the GPU is unchanged, the buffers differ;
 *   fresh slow, arena ~ kept                    -> reserve an arena up front;
 *   fresh slow, vmm ~ kept                      -> cudaMalloc's mapping of new pages (page size);
 *   fresh gap growing with size                 -> TLB reach;
 *   fresh+warm ~ kept                           -> a first-use cost, gone after warm-up.
 *
 * usage: ls_ceiling_probe [--size-mib 1024] [--free-gb 40] [--chunk-gb 4] [--rounds 3] [--device 0]
 */
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define REPS 15

#define CK(x)                                                                                 \
    do {                                                                                      \
        cudaError_t e_ = (x);                                                                 \
        if (e_ != cudaSuccess) {                                                              \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            std::exit(1);                                                                     \
        }                                                                                     \
    } while (0)
#define CKD(x)                                                                                \
    do {                                                                                      \
        CUresult r_ = (x);                                                                    \
        if (r_ != CUDA_SUCCESS) {                                                             \
            const char *s_ = "?";                                                             \
            cuGetErrorString(r_, &s_);                                                        \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, s_);              \
            std::exit(1);                                                                     \
        }                                                                                     \
    } while (0)

static cudaEvent_t e0, e1;

/* GB/s of copies dst <- src of `bytes`, median of REPS after one warm-up; src memset first. */
static double copy_gbps(void *dst, void *src, size_t bytes)
{
    CK(cudaMemset(src, 0x3c, bytes));
    CK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, 0));
    CK(cudaDeviceSynchronize());
    std::vector<float> ms(REPS);
    for (int i = 0; i < REPS; i++) {
        CK(cudaEventRecord(e0, 0));
        CK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, 0));
        CK(cudaEventRecord(e1, 0));
        CK(cudaEventSynchronize(e1));
        CK(cudaEventElapsedTime(&ms[i], e0, e1));
    }
    std::sort(ms.begin(), ms.end());
    return 2.0 * (double)bytes / (ms[REPS / 2] * 1e-3) / 1e9;
}

struct pair_t {
    void *src, *dst;
};

static pair_t alloc_pair(size_t bytes)
{
    pair_t p;
    CK(cudaMalloc(&p.src, bytes));
    CK(cudaMalloc(&p.dst, bytes));
    CK(cudaMemset(p.dst, 0, bytes));
    return p;
}

static void free_pair(pair_t p)
{
    CK(cudaFree(p.src));
    CK(cudaFree(p.dst));
}

/* A pair mapped through the virtual memory management API: one physical allocation of 2 x bytes
 * (rounded to the recommended granularity) mapped at a reserved range. */
struct vmm_t {
    CUdeviceptr va;
    size_t size;
    CUmemGenericAllocationHandle h;
};

static vmm_t vmm_alloc(int dev, size_t bytes)
{
    CUmemAllocationProp prop;
    std::memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = dev;
    size_t gran = 0;
    CKD(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
    vmm_t v;
    v.size = (2 * bytes + gran - 1) / gran * gran;
    CKD(cuMemAddressReserve(&v.va, v.size, 0, 0, 0));
    CKD(cuMemCreate(&v.h, v.size, &prop, 0));
    CKD(cuMemMap(v.va, v.size, 0, v.h, 0));
    CUmemAccessDesc acc;
    std::memset(&acc, 0, sizeof acc);
    acc.location = prop.location;
    acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CKD(cuMemSetAccess(v.va, v.size, &acc, 1));
    return v;
}

static void vmm_free(vmm_t v)
{
    CKD(cuMemUnmap(v.va, v.size));
    CKD(cuMemRelease(v.h));
    CKD(cuMemAddressFree(v.va, v.size));
}

/* cudaMalloc FREE_GB in chunks, touch every byte, free it all: the bench's serving-sized pools. */
static void big_alloc_free(double free_gb, double chunk_gb)
{
    std::vector<void *> chunks;
    size_t chunk = (size_t)(chunk_gb * (double)(1ull << 30));
    size_t want = (size_t)(free_gb * (double)(1ull << 30));
    for (size_t got = 0; got < want; got += chunk) {
        void *p = nullptr;
        if (cudaMalloc(&p, std::min(chunk, want - got)) != cudaSuccess) {
            (void)cudaGetLastError();
            std::fprintf(stderr, "probe: only %.1f GB of %.1f GB allocated\n",
                         (double)got / (1ull << 30), free_gb);
            break;
        }
        CK(cudaMemset(p, 0x5a, std::min(chunk, want - got)));
        chunks.push_back(p);
    }
    CK(cudaDeviceSynchronize());
    for (void *p : chunks)
        CK(cudaFree(p));
}

static void line(int round, const char *kind, size_t bytes, double gbps, double kept)
{
    std::printf("%d %-10s %6zu %8.1f %+6.1f\n", round, kind, bytes >> 20, gbps,
                kept > 0 ? 100.0 * (gbps / kept - 1.0) : 0.0);
    std::fflush(stdout);
}

int main(int argc, char **argv)
{
    size_t size_mib = 1024;
    double free_gb = 40, chunk_gb = 4;
    int rounds = 3, dev = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--size-mib"))
            size_mib = std::strtoull(argv[i + 1], nullptr, 10);
        else if (!std::strcmp(argv[i], "--free-gb"))
            free_gb = std::atof(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--chunk-gb"))
            chunk_gb = std::atof(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--rounds"))
            rounds = std::atoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--device"))
            dev = std::atoi(argv[i + 1]);
        else {
            std::fprintf(stderr, "probe: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (argc % 2 == 0 || size_mib < 64 || free_gb <= 0 || chunk_gb <= 0 || rounds < 1) {
        std::fprintf(stderr, "usage: ls_ceiling_probe [--size-mib N>=64] [--free-gb G] [--chunk-gb G] "
                             "[--rounds R] [--device D]\n");
        return 2;
    }
    int n_dev = 0;
    if (cudaGetDeviceCount(&n_dev) != cudaSuccess || n_dev <= dev) {
        std::fprintf(stderr, "probe: no CUDA device %d\n", dev);
        return 77;
    }
    CK(cudaSetDevice(dev));
    CKD(cuInit(0));
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, dev));
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    const size_t sizes[3] = {(size_t)64 << 20, (size_t)256 << 20, size_mib << 20};
    const size_t big = sizes[2];
    std::printf("# device %d %s; size %zu MiB; free %.1f GB in %.1f GB chunks; %d rounds; %d reps\n",
                dev, prop.name, size_mib, free_gb, chunk_gb, rounds, REPS);
    std::printf("# round kind size_mib gbps pct_vs_kept\n");

    pair_t kept[3];
    double kept_gbps[3];
    for (int s = 0; s < 3; s++)
        kept[s] = alloc_pair(sizes[s]);
    char *arena = nullptr; /* held from start-up, first touched after the first large free */
    CK(cudaMalloc(&arena, 2 * big));
    for (int s = 0; s < 3; s++) {
        kept_gbps[s] = copy_gbps(kept[s].dst, kept[s].src, sizes[s]);
        line(0, "kept", sizes[s], kept_gbps[s], kept_gbps[s]);
    }
    for (int s = 0; s < 3; s++) {
        pair_t f = alloc_pair(sizes[s]);
        line(0, "fresh0", sizes[s], copy_gbps(f.dst, f.src, sizes[s]), kept_gbps[s]);
        free_pair(f);
    }

    cudaMemPool_t pool;
    CK(cudaDeviceGetDefaultMemPool(&pool, dev));
    for (int r = 1; r <= rounds; r++) {
        big_alloc_free(free_gb, chunk_gb);
        for (int s = 0; s < 3; s++) {
            kept_gbps[s] = copy_gbps(kept[s].dst, kept[s].src, sizes[s]);
            line(r, "kept", sizes[s], kept_gbps[s], kept_gbps[s]);
        }
        pair_t fresh[3];
        for (int s = 2; s >= 0; s--) /* largest first: it takes the first pages after the free */
            fresh[s] = alloc_pair(sizes[s]);
        for (int s = 0; s < 3; s++)
            line(r, "fresh", sizes[s], copy_gbps(fresh[s].dst, fresh[s].src, sizes[s]), kept_gbps[s]);
        for (int i = 0; i < 100; i++)
            CK(cudaMemcpyAsync(fresh[2].dst, fresh[2].src, big, cudaMemcpyDeviceToDevice, 0));
        line(r, "fresh+warm", big, copy_gbps(fresh[2].dst, fresh[2].src, big), kept_gbps[2]);
        for (int s = 0; s < 3; s++)
            free_pair(fresh[s]);
        line(r, "arena", big, copy_gbps(arena + big, arena, big), kept_gbps[2]);
        vmm_t v = vmm_alloc(dev, big);
        char *vp = (char *)(uintptr_t)v.va;
        line(r, "vmm", big, copy_gbps(vp + big, vp, big), kept_gbps[2]);
        vmm_free(v);
        CK(cudaMemPoolTrimTo(pool, 0));
        void *as = nullptr, *ad = nullptr;
        CK(cudaMallocAsync(&as, big, 0));
        CK(cudaMallocAsync(&ad, big, 0));
        line(r, "async", big, copy_gbps(ad, as, big), kept_gbps[2]);
        CK(cudaFreeAsync(as, 0));
        CK(cudaFreeAsync(ad, 0));
        CK(cudaDeviceSynchronize());
    }
    for (int s = 0; s < 3; s++)
        free_pair(kept[s]);
    CK(cudaFree(arena));
    return 0;
}
