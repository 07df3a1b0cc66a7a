/* sg_torch_index.h — OUR C rendering of the PyTorch kernels SGLang's pool launches on the
 * temporal state (not torch's own code): `temporal[:, dst] = temporal[:, src]` is aten::index
 * (gather into a temporary [layers, rows, elem]) then aten::index_put_ (scatter from it), and
 * `temporal.index_fill_(1, idx, 0)` one fill. Like torch's gpu_index_kernel / elementwise launch:
 * 128 threads per block, 4 elements per thread (element i, i + 128, ...), 4-byte elements, one
 * element per load/store. Differences: int32 indices (SGLang casts to int64 first) and 64-bit
 * offsets in one launch (torch splits an iteration past 2^31 elements into several launches). */
#ifndef LS_SG_TORCH_INDEX_H
#define LS_SG_TORCH_INDEX_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* out[l][r][e] = self[l][idx[r]][e]; self rows are layer_stride elements apart per layer. */
int sg_torch_index_gather(uint32_t *out, const uint32_t *self, const int32_t *idx, int64_t layers, int64_t rows,
                          int64_t elem, int64_t layer_stride, unsigned blocks, void *stream);
/* self[l][idx[r]][e] = src[l][r][e] */
int sg_torch_index_put(uint32_t *self, const uint32_t *src, const int32_t *idx, int64_t layers, int64_t rows,
                       int64_t elem, int64_t layer_stride, unsigned blocks, void *stream);
/* self[l][idx[r]][e] = 0 */
int sg_torch_index_fill0(uint32_t *self, const int32_t *idx, int64_t layers, int64_t rows, int64_t elem,
                         int64_t layer_stride, unsigned blocks, void *stream);
/* The reason of this thread's last failure. */
const char *sg_torch_index_error(void);

#ifdef __cplusplus
}
#endif
#endif
