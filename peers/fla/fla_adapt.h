/* fla_adapt.h — the fla peer's adapters: which compiled FLA (fla-core 0.6.0) kernel an
 * ls_delta_params call maps to (kernel, constexpr key, grid) and its arguments by name (tk_call).
 * Host code only; peers/fla/README.md gives the rules and what is refused. */
#ifndef LS_FLA_ADAPT_H
#define LS_FLA_ADAPT_H

#include <stddef.h>

#include "ls_kernels.h"
#include "tk.h"

#define FLA_KDA_KERNEL "fused_recurrent_kda_fwd_kernel"
#define FLA_KDA_BV 32

typedef struct fla_plan {
    const char *kernel;
    char key[128];
    unsigned grid[3];
} fla_plan;

/* The plan of one kda call; 0, or -1 with err (verify, intermediate states, a non-default scale
 * or slot stride, ...: everything FLA's continuous-batching decode cannot express). */
int fla_kda_plan(const ls_delta_params *p, fla_plan *out, char *err, size_t cap);
/* The call's arguments by name for variant v of the plan. 0 or -1 with err. */
int fla_kda_args(const ls_delta_params *p, const fla_plan *pl, const tk_variant *v, tk_call *c, char *err,
                 size_t cap);
/* The reason gdn is not offered (one line, for last_error/explain and the docs). */
const char *fla_gdn_refusal(void);

#endif
