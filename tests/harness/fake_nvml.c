/*
 * fake_nvml.c — a stand-in for libnvidia-ml.so.1 that exports the entry points harness/clocks.c
 * looks up (the older ...ClocksThrottleReasons name only, so the fallback is exercised) and
 * answers from a script the test sets through fake_nvml_script: the k-th reasons query returns
 * reasons[k], the k-th clock query clocks[k]; past the script, no reason and 1980 MHz.
 */
#include <string.h>

typedef struct nvml_device_st *nvml_device;
static struct nvml_device_st { int id; } the_device;

static const unsigned long long *g_reasons;
static const unsigned *g_clocks;
static int g_n_reasons, g_n_clocks, g_reason_calls, g_clock_calls, g_inits, g_shutdowns;
static unsigned long long g_default_reasons;

void fake_nvml_script(const unsigned long long *reasons, int n_reasons, const unsigned *clocks,
                      int n_clocks, unsigned long long default_reasons)
{
    g_reasons = reasons;
    g_n_reasons = n_reasons;
    g_clocks = clocks;
    g_n_clocks = n_clocks;
    g_default_reasons = default_reasons;
    g_reason_calls = g_clock_calls = 0;
}

void fake_nvml_counts(int *reason_calls, int *clock_calls, int *inits, int *shutdowns)
{
    *reason_calls = g_reason_calls;
    *clock_calls = g_clock_calls;
    *inits = g_inits;
    *shutdowns = g_shutdowns;
}

int nvmlInit_v2(void) { return g_inits++, 0; }
int nvmlShutdown(void) { return g_shutdowns++, 0; }

int nvmlDeviceGetHandleByPciBusId_v2(const char *pci, nvml_device *dev)
{
    if (strcmp(pci, "00000000:19:00.0") != 0 && strcmp(pci, "0000:19:00.0") != 0)
        return 13; /* NVML_ERROR_NOT_FOUND */
    *dev = &the_device;
    return 0;
}

int nvmlDeviceGetClockInfo(nvml_device dev, int type, unsigned *mhz)
{
    if (dev != &the_device || type != 1)
        return 2; /* NVML_ERROR_INVALID_ARGUMENT */
    int k = g_clock_calls++;
    *mhz = k < g_n_clocks ? g_clocks[k] : 1980;
    return 0;
}

int nvmlDeviceGetDefaultApplicationsClock(nvml_device dev, int type, unsigned *mhz)
{
    *mhz = 1980;
    return dev == &the_device && type == 1 ? 0 : 2;
}

int nvmlDeviceGetCurrentClocksThrottleReasons(nvml_device dev, unsigned long long *r)
{
    if (dev != &the_device)
        return 2;
    int k = g_reason_calls++;
    *r = k < g_n_reasons ? g_reasons[k] : g_default_reasons;
    return 0;
}
