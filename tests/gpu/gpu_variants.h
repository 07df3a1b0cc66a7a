/*
 * gpu_variants.h — run a GPU test's whole matrix once per value of a kernel tuning knob.
 *
 * Tuning knobs (LS_DELTA_VARIANT, LS_SSU_VARIANT: environment variables naming a kernel variant)
 * are read ONCE per process by the launchers, so a test cannot switch them with setenv between
 * cases. Instead the test's main calls gt_variants_run first: in the parent it re-executes the
 * same binary (/proc/self/exe, same arguments) once per value, in order, with the knob set (NULL:
 * unset, the default) and waits for each; in such a child it returns -1 and the test runs its
 * matrix for the variant the launcher will see (gt_variant() names it).
 */
#ifndef LS_GPU_VARIANTS_H
#define LS_GPU_VARIANTS_H

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Parent: runs the children, prints one "=== <knob>=<value>: passed | skipped | FAILED (exit N)"
 * line each, and returns main's exit code: 0 when every child passed, 77 when every child
 * skipped (no GPU), 1 otherwise (a failed or crashed child, or a mix of skips and passes).
 * Child: returns -1 at once.
 */
int gt_variants_run(const char *knob, const char *const *values, int n, char **argv);

/* In a child: the knob value it runs with ("default" for NULL); NULL in a parent. */
const char *gt_variant(void);

#ifdef __cplusplus
}
#endif
#endif /* LS_GPU_VARIANTS_H */
