/*
 * fake_machine.c — an LD_PRELOAD library that makes this host look like another machine of the
 * same kind: sysconf answers L2/L3 cache sizes and the online CPU count from the environment
 * (LS_FAKE_L2_BYTES, LS_FAKE_L3_BYTES, LS_FAKE_NPROC; unset = the real answer, "0" = "glibc does
 * not know"). The host suite runs under it (tests/machine/CMakeLists.txt) so no test can pass only
 * because of this machine's caches or cores. Test-only: nothing installed links it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

static long fake(const char *var, long real)
{
    const char *v = getenv(var);
    if (!v || !*v)
        return real;
    char *end;
    long n = strtol(v, &end, 10);
    return *end ? real : n;
}

long sysconf(int name)
{
    static long (*real_sysconf)(int);
    if (!real_sysconf)
        real_sysconf = (long (*)(int))dlsym(RTLD_NEXT, "sysconf");
    long r = real_sysconf(name);
    switch (name) {
#ifdef _SC_LEVEL2_CACHE_SIZE
    case _SC_LEVEL2_CACHE_SIZE:
        return fake("LS_FAKE_L2_BYTES", r);
    case _SC_LEVEL3_CACHE_SIZE:
        return fake("LS_FAKE_L3_BYTES", r);
#endif
    case _SC_NPROCESSORS_ONLN:
    case _SC_NPROCESSORS_CONF:
        return fake("LS_FAKE_NPROC", r);
    default:
        return r;
    }
}
