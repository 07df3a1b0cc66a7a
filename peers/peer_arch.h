/*
 * peer_arch.h — which GPUs a peer's prebuilt machine code runs on. The peers ship code for one
 * arch only: Triton AOT cubins for sm_90 (peers/triton/aot.py TARGET_ARCH; Triton compiles
 * capability 90 as sm_90a) and the CUDA peers compiled for sm_90a (peers/CMakeLists.txt),
 * with no PTX. Arch-specific (the "a") code runs on exactly that compute capability, so on any
 * other GPU (a Blackwell sm_100, say) the op answers LS_OP_UNSUPPORTED ("unsupported on this
 * arch", a skipped:unsupported row) instead of failing at module load or launch.
 */
#ifndef LS_PEER_ARCH_H
#define LS_PEER_ARCH_H

#include <stddef.h>
#include <stdio.h>

#define PEER_UNSUPPORTED 2 /* == LS_OP_UNSUPPORTED (kernels/ls_kernels.h) */
#if defined(LS_OP_UNSUPPORTED) && !defined(__cplusplus)
_Static_assert(PEER_UNSUPPORTED == LS_OP_UNSUPPORTED, "peer_arch.h: PEER_UNSUPPORTED != LS_OP_UNSUPPORTED");
#endif

/* 0 when code built for compute capability `built` (e.g. 90; <= 0: unknown, not checked) runs on
 * a device of capability cc (major * 10 + minor), else PEER_UNSUPPORTED with the reason in err. */
static inline int peer_arch_refuse(int built, int cc, const char *who, char *err, size_t cap)
{
    if (built <= 0 || cc == built)
        return 0;
    if (err && cap)
        snprintf(err, cap, "%s: built for sm_%d only (no PTX); unsupported on this arch (sm_%d)", who, built, cc);
    return PEER_UNSUPPORTED;
}

#ifdef PEER_ARCH_CUDART
#include <cuda_runtime_api.h>
/* The current device's capability (major * 10 + minor) through the CUDA runtime, cached per
 * device (the op calls run inside timed loops); 0 when it cannot be read. */
static inline int peer_cuda_cc(void)
{
    static int cached[64];
    int dev = 0, major = 0, minor = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || dev < 0)
        return 0;
    if (dev < 64 && cached[dev])
        return cached[dev];
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess)
        return 0;
    if (dev < 64)
        cached[dev] = major * 10 + minor;
    return major * 10 + minor;
}
#endif

#endif /* LS_PEER_ARCH_H */
