/* sg_torch_index.cu — our rendering of torch's advanced-index gather / put / fill on the temporal
 * state (sg_torch_index.h says what it models and where it differs). */
#include <cuda_runtime.h>
#include <stdio.h>

#include "sg_torch_index.h"

#define THREADS 128
#define PER_THREAD 4

static thread_local char err_buf[256];

/* Flat element i of [layers, rows, elem] -> offset in the indexed tensor [layers, slots, elem]. */
__device__ __forceinline__ int64_t slot_offset(int64_t i, const int32_t *idx, int64_t rows, int64_t elem,
                                               int64_t layer_stride)
{
    int64_t e = i % elem, lr = i / elem, r = lr % rows, l = lr / rows;
    return l * layer_stride + (int64_t)idx[r] * elem + e;
}

/* mode 0: gather (a = out, b = self); 1: put (a = self, b = src); 2: fill 0 (a = self) */
template <int MODE>
__global__ void __launch_bounds__(THREADS) index_kernel(uint32_t *a, const uint32_t *b, const int32_t *idx,
                                                        int64_t rows, int64_t elem, int64_t layer_stride, int64_t n)
{
    int64_t i = (int64_t)blockIdx.x * (THREADS * PER_THREAD) + threadIdx.x;
#pragma unroll
    for (int k = 0; k < PER_THREAD; k++, i += THREADS) {
        if (i >= n)
            return;
        int64_t o = slot_offset(i, idx, rows, elem, layer_stride);
        if (MODE == 0)
            a[i] = b[o];
        else if (MODE == 1)
            a[o] = b[i];
        else
            a[o] = 0u;
    }
}

template <int MODE>
static int launch(uint32_t *a, const uint32_t *b, const int32_t *idx, int64_t layers, int64_t rows, int64_t elem,
                  int64_t layer_stride, unsigned blocks, void *stream)
{
    int64_t n = layers * rows * elem;
    if (n == 0)
        return 0;
    index_kernel<MODE><<<blocks, THREADS, 0, (cudaStream_t)stream>>>(a, b, idx, rows, elem, layer_stride, n);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) {
        snprintf(err_buf, sizeof err_buf, "sglang: torch index kernel (ours): %s", cudaGetErrorString(e));
        return -1;
    }
    return 0;
}

extern "C" int sg_torch_index_gather(uint32_t *out, const uint32_t *self, const int32_t *idx, int64_t layers,
                                     int64_t rows, int64_t elem, int64_t layer_stride, unsigned blocks, void *stream)
{
    return launch<0>(out, self, idx, layers, rows, elem, layer_stride, blocks, stream);
}

extern "C" int sg_torch_index_put(uint32_t *self, const uint32_t *src, const int32_t *idx, int64_t layers,
                                  int64_t rows, int64_t elem, int64_t layer_stride, unsigned blocks, void *stream)
{
    return launch<1>(self, src, idx, layers, rows, elem, layer_stride, blocks, stream);
}

extern "C" int sg_torch_index_fill0(uint32_t *self, const int32_t *idx, int64_t layers, int64_t rows, int64_t elem,
                                    int64_t layer_stride, unsigned blocks, void *stream)
{
    return launch<2>(self, nullptr, idx, layers, rows, elem, layer_stride, blocks, stream);
}

extern "C" const char *sg_torch_index_error(void) { return err_buf; }
