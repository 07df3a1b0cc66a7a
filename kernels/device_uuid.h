/*
 * device_uuid.h — a GPU's 16-byte UUID as text, in nvidia-smi's form (GPU-8-4-4-4-12 hex digits),
 * so the CSV's gpu_uuid column matches what `nvidia-smi -L` and NVML print for the same GPU.
 * Plain C (no CUDA headers): the CUDA runtime calls it, its unit test runs without a GPU.
 */
#ifndef LS_DEVICE_UUID_H
#define LS_DEVICE_UUID_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LS_UUID_TEXT_LEN 40 /* "GPU-" + 32 hex digits + 4 dashes, without the NUL */

/* Writes "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (lower-case hex) into buf. cap must exceed
 * LS_UUID_TEXT_LEN; otherwise buf gets "" (when cap > 0) and -1 is returned. 0 on success. */
int ls_format_gpu_uuid(const unsigned char bytes[16], char *buf, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
