/*
 * backend.c — the backend registry: ls_runtime_get(name), ls_runtime_host() and, in builds
 * without CUDA, the ls_runtime_cuda() stub. With CUDA the real ls_runtime_cuda() lives in
 * kernels/cuda/backend_cuda.cu.
 */
#include "ls_kernels.h"
#include "ref/ls_ref.h"

const ls_runtime *ls_runtime_host(void) { return ls_ref_host_table(); }

#ifndef LS_HAVE_CUDA
const ls_runtime *ls_runtime_cuda(void)
{
    ls_fail("backend: cuda: built without CUDA (nvcc not found or LINSTATE_CUDA=OFF)");
    return NULL;
}
#endif

/* "host" or "cuda"; anything else (or NULL) -> NULL with an error naming the value. */
const ls_runtime *ls_runtime_get(const char *name)
{
    if (!name) {
        ls_fail("backend: name is NULL (expected host or cuda)");
        return NULL;
    }
    if (strcmp(name, "host") == 0)
        return ls_runtime_host();
    if (strcmp(name, "cuda") == 0)
        return ls_runtime_cuda();
    ls_fail("backend: unknown backend '%s' (expected host or cuda)", name);
    return NULL;
}

int ls_upload_check(const char *who, const void *dst, size_t bytes)
{
    if (bytes % 4 || bytes > LS_UPLOAD_MAX_BYTES || (uintptr_t)dst % 4)
        return ls_fail("%s: upload: %zu bytes to %p: needs a multiple of 4 bytes, at most %d, to a 4-byte aligned "
                       "address", who, bytes, dst, LS_UPLOAD_MAX_BYTES);
    return 0;
}
