/*
 * api/dtypes.h — element types of the op params: fp32 and bf16, bf16 <-> fp32 on the host.
 * Part of ls_kernels.h, the header to include (docs/plugin-abi.md).
 */
#ifndef LS_API_DTYPES_H
#define LS_API_DTYPES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ls_dtype { LS_F32 = 0, LS_BF16 = 1 } ls_dtype;

static inline size_t ls_dtype_size(ls_dtype t) { return t == LS_F32 ? 4u : 2u; }
static inline const char *ls_dtype_name(ls_dtype t) { return t == LS_F32 ? "fp32" : "bf16"; }

/* bf16 <-> fp32 on the host; round to nearest even, NaN stays NaN. */
static inline float ls_bf16_to_f32(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline uint16_t ls_f32_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu)) /* NaN: keep it quiet NaN */
        return (uint16_t)((u >> 16) | 0x0040u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

#ifdef __cplusplus
}
#endif
#endif /* LS_API_DTYPES_H */
