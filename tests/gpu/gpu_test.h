/*
 * gpu_test.h — shared utilities of the GPU-vs-reference tests (tests/gpu, label "gpu").
 *
 * Pattern of a case: allocate mirrored buffers (host copy for ls_ref_*, device copy for the CUDA
 * op, and a third host array the device copy is downloaded into); fill inputs with random data per
 * dtype; poison whole output/state buffers identically on both sides (0xFF bytes = NaN in bf16 and
 * fp32); run the reference on the host copies and the op on the device copies; download; compare
 * with gt_compare (touched elements within tolerance, untouched ones bit-identical to the poison).
 *
 * These functions never count test failures themselves (ls_test.h counters are per translation
 * unit): they return results that the test asserts with LS_CHECK.
 */
#ifndef LS_GPU_TEST_H
#define LS_GPU_TEST_H

#include <stddef.h>
#include <stdint.h>

#include "ls_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The byte every poisoned buffer is filled with: 0xFFFF (bf16) / 0xFFFFFFFF (fp32) are NaN. */
#define GT_POISON 0xFF

/* The cuda backend, device 0 selected, its name printed. No backend or no device: prints
 * "no GPU" and exits 77 (CTest skip). LS_GPU_TEST_BACKEND=host substitutes the host backend
 * (the reference compared with itself): a self-test of a test's plumbing without a GPU. */
const ls_runtime *gt_init(void);

/* The impl whose ops the test runs: "linstate" on the cuda runtime, "host" on the host runtime
 * (LS_GPU_TEST_BACKEND=host). Valid after gt_init. */
const ls_impl *gt_impl(void);

/* The tuning the test's op calls pass (gt_tuning()): the impl's defaults with `spec`
 * ("knob=value,...", "" or NULL = defaults) applied by ls_tuning_parse. A spec the impl does not
 * accept ends the test (exit 1), except on an impl without knobs (the host self-test), where it
 * is ignored. Prints "=== tuning: <the whole tuning string>". */
void gt_set_tuning(const char *spec);
const ls_tuning *gt_tuning(void);

/* 1 when LS_GPU_TEST_QUICK is set to a non-zero value (smaller matrices for compute-sanitizer). */
int gt_quick(void);

/* ------------------------------------------------------------------ mirrored buffers */

typedef struct gt_buf {
    void *h;       /* host copy: inputs are written here; the reference runs on it */
    void *d;       /* device copy */
    void *got;     /* device copy downloaded by gt_download */
    size_t bytes;
} gt_buf;

/* Allocates all three copies (exits the test on failure, naming the size). */
gt_buf gt_buf_new(size_t bytes);
void gt_buf_free(gt_buf *b);
/* Whole buffer host -> device / device -> got; exit the test on failure. */
void gt_upload(const gt_buf *b);
void gt_download(const gt_buf *b);
/* Byte range [off, off+len) host -> device. */
void gt_upload_range(const gt_buf *b, size_t off, size_t len);
/* Poison the host copy (memset) and the device copy (backend mem_set): identical bytes. */
void gt_poison(const gt_buf *b);

/* ------------------------------------------------------------------ random data */

/* Uniform [lo, hi) per element, stored as the dtype; asserts the result is not all zero. */
void gt_fill(uint64_t *seed, void *p, ls_dtype dt, size_t n, double lo, double hi);
void gt_fill_bf16(uint64_t *seed, uint16_t *p, size_t n, double lo, double hi);
void gt_fill_f32(uint64_t *seed, float *p, size_t n, double lo, double hi);
/* Random bytes (state ops: payloads copied bit-for-bit). Never all zero. */
void gt_fill_bytes(uint64_t *seed, void *p, size_t n);

/*
 * Slot indices for `rows` request rows in a pool of `slots` slots: distinct random slots
 * (non-contiguous in general), then about pad_frac of the rows set to -1 (padding). With
 * rows >= 3 and pad_frac > 0 at least one row is padding and at least one is real; with fewer
 * rows no row is padding. Requires rows <= slots.
 */
void gt_random_slots(uint64_t *seed, int32_t *out, int rows, int slots, double pad_frac);
/* Uniform integer in [lo, hi]. */
int gt_rand_int(uint64_t *seed, int lo, int hi);

/* ------------------------------------------------------------------ comparison */

/*
 * Tolerance of one touched element i:  atol + rtol * scale_i + ulps * ulp_bf16(|ref_i|), where
 * scale_i = |ref_i| when group == 0, else the max |ref| over the touched elements of i's group
 * (consecutive runs of `group` elements, e.g. one head's K*V state). All zero = exact match.
 */
typedef struct gt_tol {
    double atol, rtol;
    size_t group;
    double ulps;
} gt_tol;

typedef struct gt_cmp {
    size_t touched, untouched;   /* elements the reference wrote / left as poison */
    size_t bad;                  /* touched elements out of tolerance (NaN counts as bad) */
    size_t poison_bad;           /* untouched elements whose bytes differ from the poison */
    double worst_err;            /* max |got - ref| over touched elements (inf if NaN seen) */
    double worst_ratio;          /* max err / tolerance (<= 1 passes; 0 when exact) */
    size_t worst_idx;
    size_t first_bad;            /* index of the first failure (bad or poison), SIZE_MAX if none */
} gt_cmp;

/*
 * Compares n elements of dtype dt: `ref` (the host copy after ls_ref_*) against `got` (the
 * downloaded device copy). An element whose ref bytes equal the poison bytes is "untouched" and
 * got must match bit-for-bit; any other element is "touched" and compared numerically.
 * Prints one line "  <what>: touched=.. worst_err=.. (x tol) bad=.. poison_bad=.." and, on
 * failure, the first offending element. Returns 0 when everything passes, 1 otherwise.
 */
int gt_compare(const char *what, ls_dtype dt, const void *got, const void *ref, size_t n,
               gt_tol tol, gt_cmp *out);
/* gt_compare of a mirrored buffer (b->got against b->h) that must also have touched at least one
 * element; folds the worst error/tolerance ratio into *worst. 0 when both hold, 1 otherwise. */
int gt_compare_buf(const char *what, ls_dtype dt, const gt_buf *b, size_t n, gt_tol tol, double *worst);
/* Exact byte comparison of a whole region (state ops). Prints a line; 0 if identical. */
int gt_compare_bytes(const char *what, const void *got, const void *ref, size_t bytes);

/* One bf16 unit in the last place at magnitude |x| (2^(e-7)); the smallest normal's ulp for 0. */
double gt_ulp_bf16(double x);

#ifdef __cplusplus
}
#endif
#endif /* LS_GPU_TEST_H */
