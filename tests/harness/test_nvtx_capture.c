/*
 * test_nvtx_capture.c — runs a program under the NVTX injection library and checks what a
 * profiler would have seen:
 *   test_nvtx_capture --inject LIB --log FILE [--cases N] [--phases p1,p2,...] [--csv FILE]
 *                     [--category-from-key | --categories c1,c2,...] -- PROGRAM [ARGS...]
 * Assertions on the "linstate" domain (log format: nvtx_inject.c):
 *   - the domain is created once; no string is registered twice; categories are named once;
 *   - every range uses a registered string; push/pop balance on every thread (no underflow,
 *     nothing open at exit);
 *   - each outermost range is a case: a unique name, a named category (--category-from-key: equal
 *     to the key's first component; --categories: one of the list), payload type u64 =
 *     B*1000 + T read from the key's "B:<n>" and "T:<n>" parts;
 *   - ranges directly inside a case are phases among setup/verify/warmup/measure, each at most
 *     once, in that order, carrying the case's category and payload; every phase named in
 *     --phases is present in every case; deeper ranges (e.g. graph_replay) are free;
 *   - --cases N: exactly N cases; --csv FILE: the file has one data row per case.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ls_test.h"

#define MAX_CASES 4096
#define MAX_STACK 32
#define MAX_TIDS 64
#define N_PHASES 4

static const char *phase_names[N_PHASES] = {"setup", "verify", "warmup", "measure"};

typedef struct frame {
    char name[256];
    unsigned cat;
    int ptype;
    unsigned long long payload;
    int phase_mask, last_phase;
} frame;

static frame stacks[MAX_TIDS][MAX_STACK];
static int sp[MAX_TIDS];
static char case_names[MAX_CASES][256];
static int n_cases;
static char categories[64][64];
static int category_from_key;
static const char *category_list; /* comma-separated allowed category names, or NULL */

static int phase_index(const char *name)
{
    for (int i = 0; i < N_PHASES; i++)
        if (strcmp(name, phase_names[i]) == 0)
            return i;
    return -1;
}

/* Runs argv with the injection attached; returns the exit status (or -1). */
static int run_under_injection(const char *inject, const char *log, char **argv)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        setenv("NVTX_INJECTION64_PATH", inject, 1);
        setenv("LS_NVTX_LOG", log, 1);
        execv(argv[0], argv);
        perror("execv");
        _exit(127);
    }
    int status;
    if (waitpid(pid, &status, 0) != pid)
        return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Expected payload B*1000 + T from a key's "/B:<n>" and "/T:<n>" components; -1 if absent. */
static long long payload_from_key(const char *key)
{
    const char *b = strstr(key, "B:"), *t = strstr(key, "T:");
    if (!b || !t)
        return -1;
    return atoll(b + 2) * 1000 + atoll(t + 2);
}

static void on_case_push(frame *f)
{
    LS_CHECK(n_cases < MAX_CASES);
    for (int i = 0; i < n_cases; i++)
        if (strcmp(case_names[i], f->name) == 0) {
            fprintf(stderr, "case range '%s' appears twice\n", f->name);
            LS_CHECK(0);
        }
    if (n_cases < MAX_CASES)
        snprintf(case_names[n_cases++], sizeof case_names[0], "%s", f->name);
    const char *cat = f->cat > 0 && f->cat < 64 ? categories[f->cat] : "";
    LS_CHECK(cat[0] != '\0');
    if (category_from_key) {
        size_t n = strcspn(f->name, "/");
        LS_CHECK(strlen(cat) == n && strncmp(cat, f->name, n) == 0);
    }
    if (category_list) {
        const char *hit = strstr(category_list, cat);
        size_t n = strlen(cat);
        LS_CHECK(hit && (hit == category_list || hit[-1] == ',') && (hit[n] == ',' || !hit[n]));
    }
    if (!cat[0] || (category_from_key && strncmp(cat, f->name, strlen(cat)) != 0))
        fprintf(stderr, "case '%s' has category %u '%s'\n", f->name, f->cat, cat);
    LS_CHECK_EQ_INT(f->ptype, 1); /* NVTX_PAYLOAD_TYPE_UNSIGNED_INT64 */
    long long want = payload_from_key(f->name);
    LS_CHECK(want >= 0);
    LS_CHECK_EQ_INT((long long)f->payload, want);
}

static void on_case_pop(const frame *f, int required_mask)
{
    if ((f->phase_mask & required_mask) != required_mask) {
        fprintf(stderr, "case '%s' lacks phases (mask %#x, need %#x)\n", f->name, f->phase_mask,
                required_mask);
        LS_CHECK(0);
    }
}

static void on_phase_push(frame *c, const frame *f)
{
    int ph = phase_index(f->name);
    if (ph < 0) {
        fprintf(stderr, "unexpected range '%s' directly inside case '%s'\n", f->name, c->name);
        LS_CHECK(0);
        return;
    }
    LS_CHECK(ph > c->last_phase); /* each once, in order */
    c->last_phase = ph;
    c->phase_mask |= 1 << ph;
    LS_CHECK(f->cat == c->cat && f->payload == c->payload);
}

/* Parses the log and checks it; returns the number of linstate cases seen. */
static int check_log(const char *path, int required_mask)
{
    FILE *f = fopen(path, "r");
    LS_REQUIRE(f != NULL);
    char line[2048];
    int dom = -1, domains_named = 0, n_strings = 0, n_free = 0;
    static char strings[8192][128];
    for (int t = 0; t < MAX_TIDS; t++)
        sp[t] = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        char kind = line[0];
        int a = 0, b = 0, c = 0, ptype = 0;
        unsigned cat = 0;
        unsigned long long payload = 0;
        char msg_kind = 'N';
        int off = 0;
        if (kind == 'D' && sscanf(line, "D\t%d\t%n", &a, &off) == 1 && off > 0) {
            if (strcmp(line + off, "linstate") == 0) {
                domains_named++;
                dom = a;
            }
        } else if (kind == 'S' && sscanf(line, "S\t%d\t%d\t%n", &a, &b, &off) == 2 && a == dom) {
            for (int i = 0; i < n_strings; i++)
                if (strcmp(strings[i], line + off) == 0) {
                    fprintf(stderr, "string '%s' registered twice\n", line + off);
                    LS_CHECK(0);
                }
            if (n_strings < 8192)
                snprintf(strings[n_strings++], sizeof strings[0], "%s", line + off);
        } else if (kind == 'C' && sscanf(line, "C\t%d\t%u\t%n", &a, &cat, &off) == 2 && a == dom) {
            LS_CHECK(cat > 0 && cat < 64 && categories[cat < 64 ? cat : 0][0] == '\0');
            if (cat < 64)
                snprintf(categories[cat], sizeof categories[0], "%s", line + off);
        } else if (kind == 'P' && sscanf(line, "P\t%d\t%d\t%d\t%u\t%d\t%llu\t%c\t%n", &a, &b, &c,
                                         &cat, &ptype, &payload, &msg_kind, &off) == 7) {
            if (b != dom)
                continue;
            LS_REQUIRE(a < MAX_TIDS && sp[a] < MAX_STACK);
            LS_CHECK(msg_kind == 'R');
            LS_CHECK_EQ_INT(c, sp[a] + 1);
            frame *fr = &stacks[a][sp[a]++];
            memset(fr, 0, sizeof *fr);
            snprintf(fr->name, sizeof fr->name, "%s", line + off);
            fr->cat = cat;
            fr->ptype = ptype;
            fr->payload = payload;
            fr->last_phase = -1;
            if (sp[a] == 1)
                on_case_push(fr);
            else if (sp[a] == 2)
                on_phase_push(&stacks[a][0], fr);
            else
                n_free++;
        } else if (kind == 'O' && sscanf(line, "O\t%d\t%d\t%d", &a, &b, &c) == 3) {
            if (b != dom)
                continue;
            LS_REQUIRE(a < MAX_TIDS);
            LS_CHECK_EQ_INT(c, sp[a]);
            if (sp[a] == 1)
                on_case_pop(&stacks[a][0], required_mask);
            if (sp[a] > 0)
                sp[a]--;
        } else if (kind == 'U' || kind == 'E') {
            fprintf(stderr, "unbalanced ranges: %s\n", line);
            LS_CHECK(0);
        }
    }
    fclose(f);
    LS_CHECK_EQ_INT(domains_named, 1);
    for (int t = 0; t < MAX_TIDS; t++)
        LS_CHECK_EQ_INT(sp[t], 0);
    printf("linstate domain: %d cases, %d registered strings, %d nested free ranges\n", n_cases,
           n_strings, n_free);
    return n_cases;
}

static int count_csv_rows(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int lines = 0, ch;
    while ((ch = fgetc(f)) != EOF)
        lines += ch == '\n';
    fclose(f);
    return lines - 1;
}

int main(int argc, char **argv)
{
    const char *inject = NULL, *log = NULL, *csv = NULL, *phases = "";
    int want_cases = -1, i = 1;
    for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (i + 1 >= argc)
            break;
        if (strcmp(argv[i], "--inject") == 0)
            inject = argv[++i];
        else if (strcmp(argv[i], "--log") == 0)
            log = argv[++i];
        else if (strcmp(argv[i], "--cases") == 0)
            want_cases = atoi(argv[++i]);
        else if (strcmp(argv[i], "--phases") == 0)
            phases = argv[++i];
        else if (strcmp(argv[i], "--csv") == 0)
            csv = argv[++i];
        else if (strcmp(argv[i], "--categories") == 0)
            category_list = argv[++i];
        else if (strcmp(argv[i], "--category-from-key") == 0)
            category_from_key = 1;
        else {
            fprintf(stderr, "unknown option '%s'\n", argv[i]);
            return 2;
        }
    }
    if (!inject || !log || i + 1 >= argc) {
        fprintf(stderr, "usage: %s --inject LIB --log FILE [--cases N] [--phases a,b] [--csv F] "
                        "-- PROGRAM [ARGS]\n", argv[0]);
        return 2;
    }
    int required = 0;
    for (int p = 0; p < N_PHASES; p++)
        if (strstr(phases, phase_names[p]))
            required |= 1 << p;

    remove(log);
    if (csv)
        remove(csv);
    int status = run_under_injection(inject, log, argv + i + 1);
    LS_CHECK_EQ_INT(status, 0);
    int cases = check_log(log, required);
    LS_CHECK(cases >= 1);
    if (want_cases >= 0)
        LS_CHECK_EQ_INT(cases, want_cases);
    if (csv)
        LS_CHECK_EQ_INT(count_csv_rows(csv), cases);
    return ls_test_exit();
}
