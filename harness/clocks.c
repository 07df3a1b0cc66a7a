/*
 * clocks.c — the SM clock and the throttle reasons around each timed sample, read through NVML
 * loaded at run time (dlopen), so linstate builds without nvml.h and runs without the library.
 * Only queries: nothing here sets a clock or a limit.
 *
 * The NVML declarations below are our own, written from NVIDIA's NVML API reference (return
 * codes, opaque device handle, clock type enum, the reason bits); only the few entry points
 * used are looked up.
 */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "harness_internal.h"
#include "ls_harness.h"

/* ---- NVML, as documented: nvmlReturn_t 0 = NVML_SUCCESS; nvmlClockType_t 1 = NVML_CLOCK_SM */
typedef int nvml_return;
typedef struct nvml_device_st *nvml_device;
#define NVML_OK 0
#define NVML_CLOCK_SM 1

typedef nvml_return (*nvml_init_fn)(void);
typedef nvml_return (*nvml_shutdown_fn)(void);
typedef nvml_return (*nvml_by_pci_fn)(const char *pci_bus_id, nvml_device *dev);
typedef nvml_return (*nvml_clock_fn)(nvml_device dev, int clock_type, unsigned int *mhz);
typedef nvml_return (*nvml_reasons_fn)(nvml_device dev, unsigned long long *reasons);

struct ls_clocks {
    void *lib;
    nvml_shutdown_fn shutdown;
    nvml_clock_fn clock_info;  /* nvmlDeviceGetClockInfo: current clock */
    nvml_reasons_fn reasons;   /* ...ClocksEventReasons (R535+) or ...ClocksThrottleReasons */
    nvml_device dev;
    int ref_mhz;               /* default applications SM clock, else max SM clock; 0 unknown */
    /* the current case */
    int before_throttled;      /* a throttle reason was set just before the sample */
    int discarded;
    int *kept_mhz;             /* SM clock after each kept sample */
    int n_kept, cap_kept;
};

/* Loads sym, or fails naming it. */
static int sym(ls_clocks *c, const char *name, void **out)
{
    *out = dlsym(c->lib, name);
    return *out ? 0 : ls_fail("NVML: %s not found", name);
}

ls_clocks *ls_clocks_open(const char *lib, const char *pci_bus_id)
{
    if (!pci_bus_id || !*pci_bus_id) {
        ls_fail("NVML: no PCI bus id for the device");
        return NULL;
    }
    ls_clocks *c = calloc(1, sizeof *c);
    if (!c) {
        ls_fail("NVML: out of host memory");
        return NULL;
    }
    const char *path = lib ? lib : LS_NVML_LIB;
    c->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!c->lib) {
        ls_fail("NVML: cannot load %s", path);
        free(c);
        return NULL;
    }
    nvml_init_fn init = NULL;
    nvml_by_pci_fn by_pci = NULL;
    nvml_clock_fn app_default = NULL, max_clock = NULL;
    /* Both reason names mean the same bits; the older one is deprecated since R535. */
    c->reasons = (nvml_reasons_fn)dlsym(c->lib, "nvmlDeviceGetCurrentClocksEventReasons");
    int rc = sym(c, "nvmlInit_v2", (void **)&init) || sym(c, "nvmlShutdown", (void **)&c->shutdown) ||
             sym(c, "nvmlDeviceGetHandleByPciBusId_v2", (void **)&by_pci) ||
             sym(c, "nvmlDeviceGetClockInfo", (void **)&c->clock_info) ||
             (!c->reasons && sym(c, "nvmlDeviceGetCurrentClocksThrottleReasons", (void **)&c->reasons));
    if (rc == 0 && init() != NVML_OK)
        rc = ls_fail("NVML: nvmlInit_v2 failed");
    else if (rc == 0 && by_pci(pci_bus_id, &c->dev) != NVML_OK) {
        c->shutdown();
        rc = ls_fail("NVML: no device at PCI bus id %s", pci_bus_id);
    }
    if (rc) {
        dlclose(c->lib);
        free(c);
        return NULL;
    }
    /* The floor's reference: the applications clock the board is set to, else its default,
     * else the most it can run at. */
    unsigned int mhz = 0;
    nvml_clock_fn app = (nvml_clock_fn)dlsym(c->lib, "nvmlDeviceGetApplicationsClock");
    app_default = (nvml_clock_fn)dlsym(c->lib, "nvmlDeviceGetDefaultApplicationsClock");
    max_clock = (nvml_clock_fn)dlsym(c->lib, "nvmlDeviceGetMaxClockInfo");
    if ((app && app(c->dev, NVML_CLOCK_SM, &mhz) == NVML_OK && mhz > 0) ||
        (app_default && app_default(c->dev, NVML_CLOCK_SM, &mhz) == NVML_OK && mhz > 0) ||
        (max_clock && max_clock(c->dev, NVML_CLOCK_SM, &mhz) == NVML_OK && mhz > 0))
        c->ref_mhz = (int)mhz;
    return c;
}

void ls_clocks_close(ls_clocks *c)
{
    if (!c)
        return;
    c->shutdown();
    dlclose(c->lib);
    free(c->kept_mhz);
    free(c);
}

int ls_clocks_reference_mhz(const ls_clocks *c)
{
    return c ? c->ref_mhz : 0;
}

void ls_clocks_case_begin(ls_clocks *c)
{
    if (!c)
        return;
    c->discarded = c->n_kept = 0;
    c->before_throttled = 0;
}

/* The reason bits now (0 when the query fails: counted as not throttled). */
static unsigned long long reasons_now(ls_clocks *c)
{
    unsigned long long r = 0;
    return c->reasons(c->dev, &r) == NVML_OK ? r : 0;
}

void ls_clocks_before(ls_clocks *c)
{
    if (c)
        c->before_throttled = (reasons_now(c) & LS_CLOCKS_DISCARD_REASONS) != 0;
}

int ls_clocks_after(ls_clocks *c)
{
    if (!c)
        return 1;
    unsigned int mhz = 0;
    int have_clock = c->clock_info(c->dev, NVML_CLOCK_SM, &mhz) == NVML_OK && mhz > 0;
    unsigned long long r = reasons_now(c); /* always read: one query per call, in order */
    /* A clock a user setting holds down (applications / locked clocks) is what was asked for. */
    int slow = have_clock && c->ref_mhz > 0 && !(r & LS_CLOCKS_USER_SETTING) &&
               (double)mhz < LS_CLOCK_FLOOR * c->ref_mhz;
    if (c->before_throttled || (r & LS_CLOCKS_DISCARD_REASONS) || slow) {
        c->discarded++;
        return 0;
    }
    if (!have_clock)
        return 1;
    if (c->n_kept == c->cap_kept) {
        int ncap = c->cap_kept ? 2 * c->cap_kept : 256;
        int *n = realloc(c->kept_mhz, sizeof *n * (size_t)ncap);
        if (!n)
            return 1; /* the sample stays; only its clock goes unrecorded */
        c->kept_mhz = n;
        c->cap_kept = ncap;
    }
    c->kept_mhz[c->n_kept++] = (int)mhz;
    return 1;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

void ls_clocks_case_end(ls_clocks *c, int *min_mhz, int *median_mhz, int *discarded)
{
    *min_mhz = *median_mhz = *discarded = -1;
    if (!c)
        return;
    *discarded = c->discarded;
    if (c->n_kept == 0)
        return;
    qsort(c->kept_mhz, (size_t)c->n_kept, sizeof *c->kept_mhz, cmp_int);
    *min_mhz = c->kept_mhz[0];
    int n = c->n_kept;
    *median_mhz = n % 2 ? c->kept_mhz[n / 2] : (c->kept_mhz[n / 2 - 1] + c->kept_mhz[n / 2]) / 2;
}
