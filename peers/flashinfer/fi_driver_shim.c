/*
 * fi_driver_shim.c — cuTensorMapEncodeTiled and cuGetErrorString for FlashInfer's TMA descriptors (create_tensor_map.cuh
 * calls the driver API directly) without linking libcuda: the symbol is resolved here at first use
 * through the runtime's driver entry point, so the plugin loads (and its host tests run) on
 * machines without a driver.
 */
#include <cuda.h>
#include <cuda_runtime_api.h>

typedef CUresult(CUDAAPI *encode_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *,
                                     const cuuint64_t *, const cuuint32_t *, const cuuint32_t *, CUtensorMapInterleave,
                                     CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

CUresult CUDAAPI cuTensorMapEncodeTiled(CUtensorMap *tensorMap, CUtensorMapDataType tensorDataType,
                                        cuuint32_t tensorRank, void *globalAddress, const cuuint64_t *globalDim,
                                        const cuuint64_t *globalStrides, const cuuint32_t *boxDim,
                                        const cuuint32_t *elementStrides, CUtensorMapInterleave interleave,
                                        CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2Promotion,
                                        CUtensorMapFloatOOBfill oobFill)
{
    static encode_fn fn; /* benign race: every thread stores the same pointer */
    if (!fn) {
        void *p = NULL;
        enum cudaDriverEntryPointQueryResult q;
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q) != cudaSuccess ||
            q != cudaDriverEntryPointSuccess || !p)
            return CUDA_ERROR_NOT_SUPPORTED;
        fn = (encode_fn)p;
    }
    return fn(tensorMap, tensorDataType, tensorRank, globalAddress, globalDim, globalStrides, boxDim, elementStrides,
              interleave, swizzle, l2Promotion, oobFill);
}

/* cuGetErrorString: FlashInfer's error messages for driver results (same resolution). */
typedef CUresult(CUDAAPI *errstr_fn)(CUresult, const char **);

CUresult CUDAAPI cuGetErrorString(CUresult error, const char **pStr)
{
    static errstr_fn fn;
    if (!fn) {
        void *p = NULL;
        enum cudaDriverEntryPointQueryResult q;
        if (cudaGetDriverEntryPointByVersion("cuGetErrorString", &p, 12000, cudaEnableDefault, &q) != cudaSuccess ||
            q != cudaDriverEntryPointSuccess || !p) {
            if (pStr)
                *pStr = "unknown CUDA driver error (driver entry point unavailable)";
            return CUDA_ERROR_NOT_SUPPORTED;
        }
        fn = (errstr_fn)p;
    }
    return fn(error, pStr);
}
