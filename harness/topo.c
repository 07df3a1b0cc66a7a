/*
 * topo.c — host placement with hwloc: run the measuring thread (and place its host memory) on the
 * CPUs local to the GPU, and record where that was in every row (cpuset, NUMA node).
 *
 * cuda backend: the device's local CPUs from hwloc_cudart_get_device_cpuset (sysfs local_cpus of
 * the PCI device); --bind core: the first core of that set, so the thread never migrates (docs/
 * timing.md "Host placement"). host backend: one core, the one this thread is running on, so host
 * timings do not migrate between cores. Binding failures never stop a run: a failed CPU binding returns -1
 * with a message the caller prints as a warning; a failed memory binding (common in containers,
 * where set_mempolicy is not allowed) is only a warning on stderr. Either way the cpuset recorded
 * is where the thread is actually allowed to run afterwards.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <hwloc.h>
#if defined(LS_HAVE_CUDA)
#include <hwloc/cudart.h>
#endif

#include "ls_harness.h"

/* The core (or, without core objects, the PU) this thread last ran on, into set. */
static int current_core(hwloc_topology_t topo, hwloc_cpuset_t set)
{
    if (hwloc_get_last_cpu_location(topo, set, HWLOC_CPUBIND_THREAD) != 0 ||
        hwloc_bitmap_iszero(set))
        return -1;
    hwloc_obj_t core = hwloc_get_next_obj_covering_cpuset_by_type(topo, set, HWLOC_OBJ_CORE, NULL);
    if (core && core->cpuset)
        hwloc_bitmap_copy(set, core->cpuset);
    return 0;
}

/* The CPU set to bind to for device `index` of backend be; -1 with the error set. */
static int device_cpuset(hwloc_topology_t topo, const ls_runtime *be, int index, hwloc_cpuset_t set)
{
#if defined(LS_HAVE_CUDA)
    if (be->caps & LS_RT_PCI) {
        if (hwloc_cudart_get_device_cpuset(topo, index, set) != 0 || hwloc_bitmap_iszero(set))
            return ls_fail("hwloc: no CPU locality for cuda device %d", index);
        return 0;
    }
#endif
    if (current_core(topo, set) != 0)
        return ls_fail("hwloc: cannot find the core this thread runs on: %s", strerror(errno));
    return 0;
}

/* device_cpuset, or with one_core its first core (its first PU without core objects). */
static int target_cpuset(hwloc_topology_t topo, const ls_runtime *be, int index, int one_core, hwloc_cpuset_t set)
{
    if (device_cpuset(topo, be, index, set) != 0)
        return -1;
    if (one_core) {
        hwloc_obj_t core = hwloc_get_next_obj_inside_cpuset_by_type(topo, set, HWLOC_OBJ_CORE, NULL);
        if (core && core->cpuset)
            hwloc_bitmap_and(set, set, core->cpuset);
        else
            hwloc_bitmap_only(set, hwloc_bitmap_first(set));
    }
    return 0;
}

/* Records the thread's actual binding and the first NUMA node it covers. */
static void record(hwloc_topology_t topo, ls_provenance *prov)
{
    hwloc_bitmap_t cur = hwloc_bitmap_alloc(), nodes = hwloc_bitmap_alloc();
    if (cur && nodes && hwloc_get_cpubind(topo, cur, HWLOC_CPUBIND_THREAD) == 0) {
        hwloc_bitmap_list_snprintf(prov->cpuset, sizeof prov->cpuset, cur);
        hwloc_cpuset_to_nodeset(topo, cur, nodes);
        prov->numa_node = hwloc_bitmap_iszero(nodes) ? -1 : hwloc_bitmap_first(nodes);
    }
    hwloc_bitmap_free(cur);
    hwloc_bitmap_free(nodes);
}

int ls_bind_to_device(const ls_runtime *be, int index, int one_core, ls_provenance *prov)
{
    if (!be)
        return ls_fail("ls_bind_to_device: NULL backend");
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) != 0)
        return ls_fail("hwloc: topology init failed: %s", strerror(errno));
    if (hwloc_topology_load(topo) != 0) {
        hwloc_topology_destroy(topo);
        return ls_fail("hwloc: topology load failed: %s", strerror(errno));
    }
    int rc = 0;
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    char text[128] = "";
    if (!set)
        rc = ls_fail("hwloc: out of memory");
    else if (target_cpuset(topo, be, index, one_core, set) != 0)
        rc = -1;
    else {
        hwloc_bitmap_list_snprintf(text, sizeof text, set);
        if (hwloc_set_cpubind(topo, set, HWLOC_CPUBIND_THREAD) != 0)
            rc = ls_fail("hwloc: binding the thread to CPUs %s failed: %s", text, strerror(errno));
        else if (hwloc_set_membind(topo, set, HWLOC_MEMBIND_BIND, HWLOC_MEMBIND_THREAD) != 0)
            fprintf(stderr, "linstate: warning: host memory not bound near CPUs %s: %s\n", text,
                    strerror(errno));
    }
    if (prov)
        record(topo, prov);
    hwloc_bitmap_free(set);
    hwloc_topology_destroy(topo);
    return rc;
}
