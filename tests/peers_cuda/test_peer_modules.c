/*
 * test_peer_modules.c — the built CUDA peer plugins load through the registry by name (ls_impl_get
 * finds build/peers/libls_impl_<name>.so; dlopen needs no GPU) and declare what docs/peers.md says:
 * ops, caps, knobs, and an explain line (or the refusal) for a shape.
 */
#include <stdio.h>
#include <string.h>

#include "ls_kernels.h"
#include "ls_test.h"

int main(void)
{
    char buf[512];
#ifdef HAVE_LS_IMPL_FLASHINFER
    {
        const ls_impl *im = ls_impl_get("flashinfer");
        if (!im)
            fprintf(stderr, "%s\n", ls_last_error());
        LS_REQUIRE(im != NULL);
        LS_CHECK(strcmp(im->runtime, "cuda") == 0);
        LS_CHECK(strstr(im->version, "flashinfer-python") != NULL);
        LS_CHECK(im->ssu && !im->conv_update && !im->kda && !im->state_copy);
#ifdef LS_FI_GDN_BUILT
        /* its CuTe-DSL GDN kernels compiled ahead of time: gdn on vk states, packed rows */
        LS_CHECK(im->gdn && (im->caps & LS_IMPL_VK) && (im->caps & LS_IMPL_QKV_STRIDES));
        {
            char gbuf[512];
            int32_t slot = 0;
            ls_delta_params g = {.batch = 8, .tokens = 1, .heads_qk = 16, .heads_v = 32, .dk = 128, .dv = 128,
                                 .scale = 0.08838834764831845f, .state_dtype = LS_F32,
                                 .state_stride_slot = 32 * 128 * 128, .slot_idx = &slot, .slots = 9,
                                 .state_layout = LS_STATE_VK};
            ls_device_info gdev = {.sm_count = 132};
            LS_CHECK_EQ_INT(im->explain(LS_OP_GDN, &g, NULL, &gdev, gbuf, sizeof gbuf), 0);
            printf("flashinfer gdn: %s\n", gbuf);
            LS_CHECK(strstr(gbuf, "gdn_decode_kernel_small_batch_pretranspose") != NULL ||
                     strstr(gbuf, "no AOT variant") != NULL);
        }
#else
        LS_CHECK(!im->gdn);
#endif
        LS_CHECK(im->caps & LS_IMPL_GRAPH);
        LS_CHECK(ls_knob_index(im, "ssu.algorithm") == 0);
        ls_tuning t;
        ls_tuning_default(im, &t);
        LS_CHECK_EQ_INT(ls_tuning_parse(im, "ssu.algorithm=vertical", &t), 0);
        ls_ssu_params p = {.batch = 64, .tokens = 1, .nheads = 16, .head_dim = 64, .dstate = 128, .ngroups = 1,
                           .state_dtype = LS_F32, .state_stride_slot = 16 * 64 * 128};
        ls_device_info dev = {.sm_count = 132};
        LS_CHECK_EQ_INT(im->explain(LS_OP_SSU, &p, &t, &dev, buf, sizeof buf), 0);
        printf("flashinfer: %s\n", buf);
        LS_CHECK(strstr(buf, "vertical") != NULL);
        p.nheads = 12; /* falcon-h1 tp2: refused, the reason in the explain line */
        LS_CHECK_EQ_INT(im->explain(LS_OP_SSU, &p, &t, &dev, buf, sizeof buf), 0);
        printf("flashinfer: %s\n", buf);
        LS_CHECK(strstr(buf, "refused") != NULL && strstr(buf, "heads per group") != NULL);
    }
#endif
#ifdef HAVE_LS_IMPL_SGLANG_CUDA
    {
        const ls_impl *im = ls_impl_get("sglang_cuda");
        if (!im)
            fprintf(stderr, "%s\n", ls_last_error());
        LS_REQUIRE(im != NULL);
        LS_CHECK(im->conv_update && im->kda && !im->gdn && !im->ssu);
        LS_CHECK((im->caps & LS_IMPL_VK) && !(im->caps & LS_IMPL_KV) && (im->caps & LS_IMPL_GRAPH));
        ls_conv_params c = {.batch = 3, .tokens = 1, .channels = 1280, .width = 4, .silu = 1,
                            .weight_dtype = LS_BF16, .state_dtype = LS_BF16, .x_stride_b = 1280, .x_stride_t = 1280,
                            .x_stride_c = 1, .y_stride_b = 1280, .y_stride_t = 1280, .y_stride_c = 1,
                            .state_stride_slot = 3840, .state_stride_c = 3, .state_stride_w = 1};
        LS_CHECK_EQ_INT(im->explain(LS_OP_CONV_UPDATE, &c, NULL, NULL, buf, sizeof buf), 0);
        printf("sglang_cuda: %s\n", buf);
        LS_CHECK(strstr(buf, "causal_conv1d_update_kernel<64,4> grid=(3,20)") != NULL);
        ls_delta_params d = {.batch = 3, .tokens = 1, .heads_qk = 4, .heads_v = 4, .dk = 128, .dv = 128,
                             .state_dtype = LS_F32, .state_layout = LS_STATE_VK, .state_stride_slot = 4 * 128 * 128};
        LS_CHECK_EQ_INT(im->explain(LS_OP_KDA, &d, NULL, NULL, buf, sizeof buf), 0);
        printf("sglang_cuda: %s\n", buf);
        LS_CHECK(strstr(buf, "kda_packed_decode") != NULL && strstr(buf, "Triton below B=8") != NULL);
    }
#endif
    return ls_test_exit();
}
