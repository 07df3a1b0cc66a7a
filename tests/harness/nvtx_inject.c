/*
 * nvtx_inject.c — a minimal NVTX injection library for tests: what nsys would see, without a GPU.
 *
 * Loaded by the NVTX headers of the program under test when NVTX_INJECTION64_PATH names this
 * file (read once, at the program's first NVTX call). InitializeInjectionNvtx2 checks the
 * export tables' versions and sizes, then writes its handlers into the CORE (global domain)
 * and CORE2 (domain API) function tables. It mints its own handles for domains and registered
 * strings (handle -> text kept), and records, in order:
 *   D <dom> <name>                                   domain created (dom 0 = the global domain)
 *   S <dom> <sid> <text>                             string registered
 *   C <dom> <cat> <name>                             category named
 *   P <tid> <dom> <depth> <cat> <ptype> <payload> <R|A|N> <name>
 *                                                    range pushed (depth after the push; message
 *                                                    Registered, Ascii or None; payload as u64)
 *   O <tid> <dom> <depth>                            range popped (depth before the pop)
 *   U <tid> <dom>                                    pop without a matching push
 *   M <tid> <dom> <name>                             mark
 *   E <tid> <dom> <depth>                            at exit: ranges still open
 * Fields are tab-separated, the name last. The log goes to the file named by LS_NVTX_LOG (stderr
 * when unset) when the program exits normally.
 */
#define _POSIX_C_SOURCE 200809L
#define NVTX_NO_IMPL
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvtx3/nvToolsExt.h>

#define MAX_DOMAINS 16
#define MAX_THREADS 64

typedef struct domain_rec {
    int id;
    char name[128];
} domain_rec;

typedef struct string_rec {
    int dom, id;
    char *text;
} string_rec;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char *log_buf;
static size_t log_len, log_cap;
static domain_rec domains[MAX_DOMAINS];
static int n_domains = 1; /* 0: the global (default) domain */
static int n_strings;
static int depth[MAX_THREADS][MAX_DOMAINS];
static int n_threads;
static _Thread_local int my_tid = -1;

/* Appends one formatted line to the log (lock held by the caller). */
static void emit(const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n >= sizeof line)
        n = sizeof line - 1;
    if (log_len + (size_t)n + 2 > log_cap) {
        size_t cap = log_cap ? 2 * log_cap : 1 << 16;
        while (cap < log_len + (size_t)n + 2)
            cap *= 2;
        char *b = realloc(log_buf, cap);
        if (!b)
            return;
        log_buf = b;
        log_cap = cap;
    }
    memcpy(log_buf + log_len, line, (size_t)n);
    log_len += (size_t)n;
    log_buf[log_len++] = '\n';
}

static int tid(void)
{
    if (my_tid < 0)
        my_tid = n_threads < MAX_THREADS ? n_threads++ : MAX_THREADS - 1;
    return my_tid;
}

static int dom_id(nvtxDomainHandle_t d)
{
    return d ? ((const domain_rec *)(const void *)d)->id : 0;
}

static const char *string_text(nvtxStringHandle_t h)
{
    const string_rec *r = (const string_rec *)(const void *)h;
    return r && r->text ? r->text : "(null handle)";
}

/* ---------------------------------------------------------------- handlers */

static nvtxDomainHandle_t NVTX_API h_domain_create(const char *name)
{
    pthread_mutex_lock(&lock);
    domain_rec *d = NULL;
    if (n_domains < MAX_DOMAINS) {
        d = &domains[n_domains];
        d->id = n_domains++;
        snprintf(d->name, sizeof d->name, "%s", name ? name : "");
        emit("D\t%d\t%s", d->id, d->name);
    }
    pthread_mutex_unlock(&lock);
    return (nvtxDomainHandle_t)(void *)d;
}

static void NVTX_API h_domain_destroy(nvtxDomainHandle_t d) {}

/* The handle is the heap record itself; it lives until exit, as handles must. */
static nvtxStringHandle_t NVTX_API h_register_string(nvtxDomainHandle_t d, const char *s)
{
    pthread_mutex_lock(&lock);
    string_rec *r = malloc(sizeof *r);
    if (r) {
        r->dom = dom_id(d);
        r->id = ++n_strings;
        r->text = strdup(s ? s : "");
        emit("S\t%d\t%d\t%s", r->dom, r->id, r->text ? r->text : "");
    }
    pthread_mutex_unlock(&lock);
    return (nvtxStringHandle_t)(void *)r;
}

static void NVTX_API h_name_category(nvtxDomainHandle_t d, uint32_t cat, const char *name)
{
    pthread_mutex_lock(&lock);
    emit("C\t%d\t%u\t%s", dom_id(d), cat, name ? name : "");
    pthread_mutex_unlock(&lock);
}

static void NVTX_API h_name_category_global(uint32_t cat, const char *name)
{
    h_name_category(NULL, cat, name);
}

static void message_of(const nvtxEventAttributes_t *a, char *kind, const char **text)
{
    *kind = 'N';
    *text = "";
    if (!a)
        return;
    if (a->messageType == NVTX_MESSAGE_TYPE_REGISTERED) {
        *kind = 'R';
        *text = string_text(a->message.registered);
    } else if (a->messageType == NVTX_MESSAGE_TYPE_ASCII && a->message.ascii) {
        *kind = 'A';
        *text = a->message.ascii;
    }
}

static int push(int dom, const nvtxEventAttributes_t *a)
{
    char kind;
    const char *text;
    message_of(a, &kind, &text);
    pthread_mutex_lock(&lock);
    int t = tid();
    int level = depth[t][dom]++;
    emit("P\t%d\t%d\t%d\t%u\t%d\t%llu\t%c\t%s", t, dom, level + 1, a ? a->category : 0u,
         a ? a->payloadType : 0, a ? (unsigned long long)a->payload.ullValue : 0ull, kind, text);
    pthread_mutex_unlock(&lock);
    return level;
}

static int pop(int dom)
{
    pthread_mutex_lock(&lock);
    int t = tid();
    int level = depth[t][dom];
    if (level > 0) {
        depth[t][dom]--;
        emit("O\t%d\t%d\t%d", t, dom, level);
    } else {
        emit("U\t%d\t%d", t, dom);
    }
    pthread_mutex_unlock(&lock);
    return level > 0 ? level - 1 : -1;
}

static int NVTX_API h_domain_push(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    return push(dom_id(d), a);
}
static int NVTX_API h_domain_pop(nvtxDomainHandle_t d) { return pop(dom_id(d)); }
static int NVTX_API h_push_ex(const nvtxEventAttributes_t *a) { return push(0, a); }
static int NVTX_API h_pop(void) { return pop(0); }

static int NVTX_API h_push_a(const char *msg)
{
    nvtxEventAttributes_t a;
    memset(&a, 0, sizeof a);
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = msg;
    return push(0, &a);
}

static void mark(int dom, const nvtxEventAttributes_t *a)
{
    char kind;
    const char *text;
    message_of(a, &kind, &text);
    pthread_mutex_lock(&lock);
    emit("M\t%d\t%d\t%s", tid(), dom, text);
    pthread_mutex_unlock(&lock);
}
static void NVTX_API h_domain_mark(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    mark(dom_id(d), a);
}

/* ---------------------------------------------------------------- dump at exit */

__attribute__((destructor)) static void dump(void)
{
    pthread_mutex_lock(&lock);
    for (int t = 0; t < n_threads; t++)
        for (int d = 0; d < MAX_DOMAINS; d++)
            if (depth[t][d])
                emit("E\t%d\t%d\t%d", t, d, depth[t][d]);
    const char *path = getenv("LS_NVTX_LOG");
    FILE *f = path && *path ? fopen(path, "w") : stderr;
    if (f) {
        if (log_len)
            fwrite(log_buf, 1, log_len, f);
        if (f != stderr)
            fclose(f);
    }
    pthread_mutex_unlock(&lock);
}

/* ---------------------------------------------------------------- attach */

/* Writes fn into slot id of a module's table after checking the table is big enough. */
static int attach(NvtxGetExportTableFunc_t get, NvtxCallbackModule module, const int *ids,
                  NvtxFunctionPointer const *fns, int n)
{
    const NvtxExportTableCallbacks *cb = get(NVTX_ETID_CALLBACKS);
    if (!cb || cb->struct_size < sizeof *cb || !cb->GetModuleFunctionTable)
        return 0;
    NvtxFunctionTable table = NULL;
    unsigned int size = 0;
    if (!cb->GetModuleFunctionTable(module, &table, &size) || !table)
        return 0;
    for (int i = 0; i < n; i++) {
        if ((unsigned)ids[i] >= size || !table[ids[i]])
            return 0;
        *table[ids[i]] = fns[i];
    }
    return 1;
}

#define FN(f) ((NvtxFunctionPointer)(f))

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
{
    if (!get)
        return 0;
    const NvtxExportTableVersionInfo *vi = get(NVTX_ETID_VERSIONINFO);
    if (!vi || vi->struct_size < sizeof *vi || vi->version < 2)
        return 0;
    if (vi->SetInjectionNvtxVersion)
        vi->SetInjectionNvtxVersion(NVTX_VERSION);

    static const int core_ids[] = {NVTX_CBID_CORE_RangePushEx, NVTX_CBID_CORE_RangePushA,
                                   NVTX_CBID_CORE_RangePop, NVTX_CBID_CORE_NameCategoryA};
    NvtxFunctionPointer core_fns[] = {FN(h_push_ex), FN(h_push_a), FN(h_pop),
                                      FN(h_name_category_global)};
    static const int core2_ids[] = {
        NVTX_CBID_CORE2_DomainCreateA,         NVTX_CBID_CORE2_DomainDestroy,
        NVTX_CBID_CORE2_DomainRegisterStringA, NVTX_CBID_CORE2_DomainNameCategoryA,
        NVTX_CBID_CORE2_DomainRangePushEx,     NVTX_CBID_CORE2_DomainRangePop,
        NVTX_CBID_CORE2_DomainMarkEx};
    NvtxFunctionPointer core2_fns[] = {FN(h_domain_create), FN(h_domain_destroy),
                                       FN(h_register_string), FN(h_name_category),
                                       FN(h_domain_push), FN(h_domain_pop), FN(h_domain_mark)};
    if (!attach(get, NVTX_CB_MODULE_CORE, core_ids, core_fns, 4) ||
        !attach(get, NVTX_CB_MODULE_CORE2, core2_ids, core2_fns, 7))
        return 0;
    pthread_mutex_lock(&lock);
    emit("D\t0\t(global)");
    pthread_mutex_unlock(&lock);
    return 1;
}
