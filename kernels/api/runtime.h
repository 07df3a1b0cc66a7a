/*
 * api/runtime.h — the runtime table: device, memory, copies, streams, events, graphs, the stream
 * hold.
 * Part of ls_kernels.h, the header to include (docs/plugin-abi.md).
 */
#ifndef LS_API_RUNTIME_H
#define LS_API_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A runtime moves bytes and keeps time: device selection, memory, copies, streams, events, CUDA
 * graphs, the stream hold. Two exist: "cuda" (kernels/cuda/backend_cuda.cu, built when nvcc is
 * found) and "host" (kernels/ref/host_backend.c: plain memory, wall-clock events). Kernels are
 * not part of it: they belong to implementations (ls_impl below), which run on a runtime.
 */
#define LS_RUNTIME_ABI 4

/* Largest copy `upload` takes (its bytes travel as kernel parameters, under CUDA's 4 KB). */
#define LS_UPLOAD_MAX_BYTES 4000
/* The checks every runtime's upload makes (kernels/backend.c): 0, or -1 with an error naming
 * `who` (the runtime), the size and the address. */
int ls_upload_check(const char *who, const void *dst, size_t bytes);

/* Runtime capability bits (ls_runtime.caps). */
#define LS_RT_DEVICE_MEMORY 1u /* memory is a device's, separate from the host's: a copy peak, the
                                * memory budget and the hwloc binding refer to that device */
#define LS_RT_GRAPHS 2u        /* graph_begin/end/launch/destroy are set */
#define LS_RT_HOLD 4u          /* hold_* are set (the stream hold) */
#define LS_RT_PCI 8u           /* device_info gives a PCI bus id (hwloc locality of the device) */

typedef void *ls_stream;          /* NULL = the backend's default stream */
typedef struct ls_event ls_event; /* opaque timestamp */
typedef struct ls_graph ls_graph; /* opaque captured launch sequence */
typedef struct ls_hold ls_hold;   /* opaque stream hold (see hold_create) */

typedef struct ls_device_info {
    char name[128];
    int index;
    int sm_count;
    int sm_clock_mhz;             /* current/default SM clock; 0 if unknown */
    int mem_clock_mhz;
    int driver_version;           /* e.g. 13000; 0 for host */
    int runtime_version;
    int64_t l2_bytes;
    int64_t total_bytes, free_bytes;
    char pci_bus_id[32];          /* "" for host */
    char uuid[48];                /* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (nvidia-smi's form);
                                   * "" for host. Last field: plugins built before it read the
                                   * same offsets (they only read this struct) */
} ls_device_info;

typedef struct ls_runtime {
    int abi_version;              /* LS_RUNTIME_ABI */
    const char *name;             /* "host" or "cuda" */
    unsigned caps;                /* LS_RT_* capability bits: callers test these, never the name */

    /* device selection and description */
    int (*device_count)(void);
    int (*set_device)(int index);
    int (*device_info)(int index, ls_device_info *out);

    /* memory: alloc returns NULL (and sets the error) when out of memory */
    void *(*mem_alloc)(size_t bytes);
    void (*mem_free)(void *p);
    int (*mem_set)(void *dst, int byte, size_t bytes, ls_stream s);
    int (*copy_h2d)(void *dst, const void *src, size_t bytes);
    int (*copy_d2h)(void *dst, const void *src, size_t bytes);
    int (*copy_d2d)(void *dst, const void *src, size_t bytes, ls_stream s);
    /* Stream-ordered host-to-device copy of a small list (bytes a multiple of 4, at most
     * LS_UPLOAD_MAX_BYTES, dst 4-byte aligned) that never waits for the device: the bytes are
     * taken when it returns, so src may be reused at once (cuda: they travel as the parameters
     * of a kernel launched on s; host: a copy). copy_h2d, by contrast, first waits for the
     * default stream. */
    int (*upload)(void *dst, const void *src, size_t bytes, ls_stream s);

    /* streams, events, graphs (host: events are wall-clock stamps; graphs unsupported -> NULL fns) */
    int (*stream_create)(ls_stream *out);
    int (*stream_destroy)(ls_stream s);
    int (*sync)(ls_stream s);
    int (*event_create)(ls_event **out);
    int (*event_destroy)(ls_event *e);
    int (*event_record)(ls_event *e, ls_stream s);
    int (*event_elapsed_us)(ls_event *start, ls_event *stop, double *us);
    int (*graph_begin)(ls_stream s);                 /* start capture on s */
    int (*graph_end)(ls_stream s, ls_graph **out);   /* end capture, instantiate */
    int (*graph_launch)(ls_graph *g, ls_stream s);
    int (*graph_destroy)(ls_graph *g);
    int (*profiler_start)(void);                     /* cudaProfilerStart; host: no-op */
    int (*profiler_stop)(void);

    /* Stream hold (nvbench's "blocking kernel"; host: NULL fns). hold_enqueue queues a kernel
     * that spins until hold_release, so work queued behind it starts back to back when released
     * and a start event queued right after it does not absorb the launch latency of that work.
     * The spin gives up after timeout_ms (a stream whose launch queue fills while held would
     * otherwise block the launching thread for good); hold_result, called after the stream has
     * synced, returns 0 when the last hold was released in time, 1 when it timed out. One hold
     * in flight per ls_hold (sync before enqueuing it again). Never hold a stream under a tool
     * that serialises launches (ncu): every hold would time out. */
    int (*hold_create)(ls_hold **out, int timeout_ms);
    int (*hold_destroy)(ls_hold *h);
    int (*hold_enqueue)(ls_hold *h, ls_stream s);
    int (*hold_release)(ls_hold *h);
    int (*hold_result)(const ls_hold *h);

} ls_runtime;

/* "host" always exists; "cuda" only when built with CUDA (returns NULL otherwise, error set). */
const ls_runtime *ls_runtime_get(const char *name);
const ls_runtime *ls_runtime_host(void);
const ls_runtime *ls_runtime_cuda(void); /* NULL when not built with CUDA */

#ifdef __cplusplus
}
#endif
#endif /* LS_API_RUNTIME_H */
