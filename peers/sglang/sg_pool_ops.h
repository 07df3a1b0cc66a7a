/* sg_pool_ops.h — the sglang impl's state ops (CUDA side): SGLang 0.5.23's pool kernels for
 * copy (MambaPool.copy_from), accept (update_mamba_state_after_mtp_verify) and zero
 * (MambaPool.clear_slots) over a whole pool. Each returns 0, LS_OP_UNSUPPORTED (err says why) or
 * -1 (err set). peers/sglang/README.md, "Pool state ops", has the rule. */
#ifndef LS_SG_POOL_OPS_H
#define LS_SG_POOL_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "ls_kernels.h"

int sg_pool_copy(const ls_state_params *p, ls_stream s, char *err, size_t cap);
int sg_pool_accept(const ls_state_params *p, ls_stream s, char *err, size_t cap);
int sg_pool_zero(const ls_state_params *p, ls_stream s, char *err, size_t cap);
/* SGLang's query_start_loc (int32 [B + 1] = 0, T, 2T, ...) on the device for the gating kernel's
 * cu_seqlens; set up outside graph capture, reused after. NULL with err. */
const int32_t *sg_query_start_loc(int B, int T, ls_stream s, char *err, size_t cap);
/* The kernels op (LS_OP_STATE_*) would launch for p, as one line. 0 or -1. */
int sg_pool_explain(ls_op op, const ls_state_params *p, char *buf, size_t cap);

#endif
