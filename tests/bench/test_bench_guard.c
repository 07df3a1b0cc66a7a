/*
 * test_bench_guard.c — the guard zones of bench/guard.c on the host runtime: a guarded buffer
 * keeps the runtime's alignment, an untouched one checks clean, one byte written just past its
 * end or just before its start is found with its offset, a buffer allocated while disarmed has
 * no zones, and freeing drops the zones of exactly that buffer.
 */
#include <stdint.h>
#include <string.h>

#include "bench.h"
#include "ls_test.h"

static void check_message(const ls_runtime *rt, char *p, ptrdiff_t at, const char *want)
{
    char msg[512] = "";
    char saved = p[at];
    p[at] = (char)~saved;
    LS_CHECK_EQ_INT(bench_guard_check(NULL, msg, sizeof msg), 1);
    if (!strstr(msg, want))
        fprintf(stderr, "message '%s' lacks '%s'\n", msg, want);
    LS_CHECK(strstr(msg, want) != NULL);
    p[at] = saved; /* the zone is whole again */
    LS_CHECK_EQ_INT(bench_guard_check(NULL, msg, sizeof msg), 0);
    (void)rt;
}

int main(void)
{
    const ls_runtime *host = ls_runtime_host();
    const ls_runtime *rt = bench_guard_runtime(host);
    LS_CHECK(rt != host && rt->mem_alloc != host->mem_alloc && rt->copy_h2d == host->copy_h2d);
    LS_CHECK(bench_guard_runtime(host) == rt);
    char msg[512];

    bench_guard_arm(1);
    char *p = rt->mem_alloc(100), *q = rt->mem_alloc(4096);
    LS_CHECK(p && q);
    LS_CHECK_EQ_INT(bench_guard_live(), 2);
    LS_CHECK_EQ_INT((uintptr_t)p % 64, 0); /* the host runtime's alignment */
    LS_CHECK_EQ_INT((uintptr_t)q % 64, 0);
    memset(p, 0x5a, 100); /* writes inside are fine */
    memset(q, 0, 4096);
    LS_CHECK_EQ_INT(bench_guard_check(NULL, msg, sizeof msg), 0);
    check_message(rt, p, 100, "offsets 100..100 changed (past its end)");
    check_message(rt, p, 163, "offsets 163..163 changed (past its end)");
    check_message(rt, q, -1, "offsets -1..-1 changed (before its start)");
    check_message(rt, q, -BENCH_GUARD_BYTES, "offsets -4096..-4096 changed (before its start)");

    bench_guard_arm(0);
    char *r = rt->mem_alloc(10); /* disarmed: no zones, freed by the runtime */
    LS_CHECK(r != NULL);
    LS_CHECK_EQ_INT(bench_guard_live(), 2);
    rt->mem_free(r);
    rt->mem_free(p);
    LS_CHECK_EQ_INT(bench_guard_live(), 1);
    rt->mem_free(q);
    LS_CHECK_EQ_INT(bench_guard_live(), 0);
    LS_CHECK_EQ_INT(bench_guard_check(NULL, msg, sizeof msg), 0);
    return ls_test_exit();
}
