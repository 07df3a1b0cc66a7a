/*
 * nvtx.c — the NVTX layer: every range of the suite goes through these few functions.
 *
 * Conventions (what a profile of linstate looks like):
 *  - one domain, "linstate"; every range is pushed in it with a REGISTERED string, so nsys can
 *    trigger on any of them without NSYS_NVTX_PROFILER_REGISTER_ONLY=0, e.g.
 *      nsys profile --capture-range=nvtx --nvtx-capture=measure@linstate ...
 *  - a case range is named by the stable case key (registered on first use) and nests the phase
 *    ranges "setup", "verify", "warmup", "measure"; in graph mode each timed replay is a
 *    "graph_replay" range inside "measure" (capture itself gets no range);
 *  - category: one per mechanism, numbered 1, 2, ... in order of first use and named once with
 *    nvtxDomainNameCategoryA (so "gdn", "kda", "mamba2" show as category names);
 *  - payload: an unsigned 64-bit integer, batch * 1000 + draft_tokens (batch 64 with 4 draft
 *    tokens reads 64004; decode rows have draft_tokens 1). Phases and free-standing ranges carry
 *    the enclosing case's category and payload, so any range can be attributed to its case;
 *  - built with LS_NVTX=0 (LINSTATE_NVTX=OFF or no NVTX headers), every function is an empty
 *    body: no NVTX header is included and no call remains. NVTX_DISABLE is not used because the
 *    NVTX C API ignores it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ls_harness.h"

#ifndef LS_NVTX
#define LS_NVTX 0
#endif

static const char *const phase_names[] = {"setup", "verify", "warmup", "measure"};

const char *ls_phase_name(ls_phase ph)
{
    unsigned i = (unsigned)ph;
    return i < sizeof phase_names / sizeof phase_names[0] ? phase_names[i] : "unknown";
}

#if LS_NVTX

#include <pthread.h>

#include <nvtx3/nvToolsExt.h>

#define NAME_BUCKETS 1024
#define MAX_CATEGORIES 32

/* A registered string, chained in a hash bucket. Entries live until exit. */
typedef struct name_entry {
    struct name_entry *next;
    nvtxStringHandle_t handle;
    char text[];
} name_entry;

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t domain_once = PTHREAD_ONCE_INIT;
static nvtxDomainHandle_t domain;
static name_entry *buckets[NAME_BUCKETS];
static char *categories[MAX_CATEGORIES + 1]; /* index = category id; 0 = none */

/* The case this thread is in: phases and free ranges inherit its category and payload. */
static _Thread_local uint32_t cur_category;
static _Thread_local uint64_t cur_payload;

static void create_domain(void)
{
    domain = nvtxDomainCreateA("linstate");
}

static uint32_t hash_str(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    while (*s)
        h = (h ^ (unsigned char)*s++) * 16777619u;
    return h;
}

/* Handle of `text` in the linstate domain, registered the first time it is seen. NULL (an
 * unregistered push follows) only if the entry cannot be allocated. */
static nvtxStringHandle_t registered(const char *text)
{
    pthread_once(&domain_once, create_domain);
    uint32_t b = hash_str(text) % NAME_BUCKETS;
    nvtxStringHandle_t h = NULL;
    pthread_mutex_lock(&reg_lock);
    name_entry *e = buckets[b];
    while (e && strcmp(e->text, text) != 0)
        e = e->next;
    if (!e) {
        size_t n = strlen(text);
        e = malloc(sizeof *e + n + 1);
        if (e) {
            memcpy(e->text, text, n + 1);
            e->handle = nvtxDomainRegisterStringA(domain, text);
            e->next = buckets[b];
            buckets[b] = e;
        }
    }
    if (e)
        h = e->handle;
    pthread_mutex_unlock(&reg_lock);
    return h;
}

/* Category id of a mechanism, named once on first use; 0 (no category) when the table is full. */
static uint32_t category_of(const char *mechanism)
{
    pthread_once(&domain_once, create_domain);
    uint32_t id = 0;
    pthread_mutex_lock(&reg_lock);
    for (uint32_t i = 1; i <= MAX_CATEGORIES && !id; i++) {
        if (!categories[i]) {
            size_t n = strlen(mechanism);
            categories[i] = malloc(n + 1);
            if (categories[i]) {
                memcpy(categories[i], mechanism, n + 1);
                nvtxDomainNameCategoryA(domain, i, mechanism);
                id = i;
            }
            break;
        }
        if (strcmp(categories[i], mechanism) == 0)
            id = i;
    }
    pthread_mutex_unlock(&reg_lock);
    return id;
}

static void push(const char *name, uint32_t argb)
{
    nvtxEventAttributes_t a;
    memset(&a, 0, sizeof a);
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.category = cur_category;
    a.colorType = NVTX_COLOR_ARGB;
    a.color = argb;
    a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
    a.payload.ullValue = cur_payload;
    nvtxStringHandle_t h = registered(name);
    if (h) {
        a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
        a.message.registered = h;
    } else {
        a.messageType = NVTX_MESSAGE_TYPE_ASCII;
        a.message.ascii = name;
    }
    nvtxDomainRangePushEx(domain, &a);
}

void ls_nvtx_case_push(const char *case_key, const char *mechanism, int batch, int draft_tokens)
{
    uint64_t b = batch > 0 ? (uint64_t)batch : 0, t = draft_tokens > 0 ? (uint64_t)draft_tokens : 0;
    cur_category = category_of(mechanism ? mechanism : "unknown");
    cur_payload = b * 1000u + t;
    push(case_key ? case_key : "unnamed", 0xff4878d0u);
}

void ls_nvtx_case_pop(void)
{
    nvtxDomainRangePop(domain);
    cur_category = 0;
    cur_payload = 0;
}

void ls_nvtx_phase_push(ls_phase ph)
{
    static const uint32_t colors[] = {0xff8c8c8cu, 0xffd9a441u, 0xffe07b39u, 0xff3ca55cu};
    unsigned i = (unsigned)ph;
    push(ls_phase_name(ph), i < sizeof colors / sizeof colors[0] ? colors[i] : 0xff000000u);
}

void ls_nvtx_phase_pop(void)
{
    nvtxDomainRangePop(domain);
}

void ls_nvtx_range_push(const char *name)
{
    push(name ? name : "unnamed", 0xff9b59b6u);
}

void ls_nvtx_range_pop(void)
{
    nvtxDomainRangePop(domain);
}

#else /* !LS_NVTX: the whole layer compiles to nothing */

void ls_nvtx_case_push(const char *case_key, const char *mechanism, int batch, int draft_tokens)
{
}
void ls_nvtx_case_pop(void) {}
void ls_nvtx_phase_push(ls_phase ph) {}
void ls_nvtx_phase_pop(void) {}
void ls_nvtx_range_push(const char *name) {}
void ls_nvtx_range_pop(void) {}

#endif
