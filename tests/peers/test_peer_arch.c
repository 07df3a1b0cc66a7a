/*
 * test_peer_arch.c — a peer's single-arch machine code (sm_90 Triton cubins, sm_90a CUDA peers)
 * is refused as LS_OP_UNSUPPORTED on any other GPU, with a reason naming both archs
 * (peers/peer_arch.h); an unknown build arch is never refused.
 */
#include <string.h>

#include "ls_kernels.h"
#include "ls_test.h"
#include "peer_arch.h"

int main(void)
{
    char err[256] = "";
    LS_CHECK_EQ_INT(peer_arch_refuse(90, 90, "sglang x[k]", err, sizeof err), 0);
    LS_CHECK_EQ_INT((int)strlen(err), 0);
    LS_CHECK_EQ_INT(peer_arch_refuse(90, 100, "sglang x[k]", err, sizeof err), LS_OP_UNSUPPORTED);
    LS_CHECK(strstr(err, "sglang x[k]") != NULL);
    LS_CHECK(strstr(err, "unsupported on this arch (sm_100)") != NULL);
    LS_CHECK(strstr(err, "sm_90") != NULL);
    LS_CHECK_EQ_INT(peer_arch_refuse(90, 120, "p", err, sizeof err), LS_OP_UNSUPPORTED); /* RTX 50xx */
    LS_CHECK_EQ_INT(peer_arch_refuse(90, 89, "p", err, sizeof err), LS_OP_UNSUPPORTED);  /* Ada */
    LS_CHECK_EQ_INT(peer_arch_refuse(0, 100, "p", NULL, 0), 0);                          /* unknown */
    return ls_test_exit();
}
