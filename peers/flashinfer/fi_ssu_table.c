/*
 * fi_ssu_table.c — the compiled FlashInfer SSU instances (one per (head_dim, dstate, tokens), listed
 * by CMake in ls_fi_ssu_list.h as LS_FI_INST(dim, dstate, tokens, fn) lines) and the launch that
 * picks one for a plan.
 */
#include <stdio.h>

#include "ls_fi_ssu.h"

typedef int (*ls_fi_fn)(const ls_fi_ssu_plan *pl, void *stream, char *err, size_t cap);

#define LS_FI_INST(d, s, t, fn) int fn(const ls_fi_ssu_plan *pl, void *stream, char *err, size_t cap);
#include "ls_fi_ssu_list.h"
#undef LS_FI_INST

static const ls_fi_ssu_inst insts[] = {
#define LS_FI_INST(d, s, t, fn) {d, s, t},
#include "ls_fi_ssu_list.h"
#undef LS_FI_INST
};

static const ls_fi_fn fns[] = {
#define LS_FI_INST(d, s, t, fn) fn,
#include "ls_fi_ssu_list.h"
#undef LS_FI_INST
};

const ls_fi_ssu_inst *ls_fi_ssu_instances(int *n)
{
    *n = (int)(sizeof insts / sizeof insts[0]);
    return insts;
}

int ls_fi_ssu_launch(const ls_fi_ssu_plan *pl, void *stream, char *err, size_t cap)
{
    for (size_t i = 0; i < sizeof insts / sizeof insts[0]; i++)
        if (insts[i].dim == pl->dim && insts[i].dstate == pl->dstate && insts[i].tokens == pl->tokens)
            return fns[i](pl, stream, err, cap);
    snprintf(err, cap, "flashinfer ssu: head_dim %d, dstate %d, T %d was not compiled", pl->dim, pl->dstate, pl->tokens);
    return -1;
}
