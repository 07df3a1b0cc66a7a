/*
 * supervise.c — fault containment (docs/timing.md "Worker process"): the cases run in a worker
 * process, so an impl that segfaults, aborts, exits or hangs costs only its own case.
 *
 * The parent linstate-bench parses the command line, builds the plan, runs Google Benchmark and
 * owns the output files; it never sets up a device, allocates a pool or calls an impl op. The
 * worker is the same binary started again (fork + exec, so nothing the parent initialised, such
 * as a CUDA driver, is inherited) with the same arguments plus WORKER_FLAG=FD: it builds the
 * same plan, starts its devices (provenance, copy peak) and then serves requests on the socket
 * FD. The protocol is three messages, each a fixed struct (both ends are the same binary):
 *   worker -> parent  HELLO  per device: index, start-up copy peak, provenance
 *   parent -> worker  CASE   plan index and repetition of the measurement to make
 *   worker -> parent  ROW    the finished row and its samples
 * The parent writes each row as it arrives. When the worker dies during a case (a signal, an
 * exit) or gives no row within --case-timeout (its process group is killed), the parent writes
 * that case's row as error:crash / error:exit / error:timeout with the cause in the message
 * column, and the next case starts a new worker (a fresh process: on a GPU a fresh CUDA context,
 * free of a sticky error). The later repetitions of a case that ended a worker are not run again:
 * they get the same row at once. A worker also retires by itself after any error:* row (a case
 * whose setup, verify or timing failed) or fail_bounds row (an impl wrote outside its buffers):
 * the process or its device may be unusable (a sticky CUDA error such as an illegal address
 * poisons the whole context), so the next case gets a fresh process (the ROW's retire flag tells
 * the parent to reap it).
 *
 * What an impl may do to the process itself is contained too:
 *  - a fork: every message carries the sender's pid and a ROW the request it answers; a process
 *    other than the one the parent started never writes (a forked copy that returns into this
 *    code _exits at once), and the parent treats a reply that is not for its request from its
 *    worker as a fault of the case (error:crash, the process group killed).
 *  - children that outlive the worker or hold its socket: the parent watches the worker's pid
 *    (pidfd, else waitid every 200 ms) besides the socket, so a death is seen at once; whenever a
 *    worker ends its process group is killed; a worker thread kills its process group when the
 *    parent's end of the socket closes (the parent died: PDEATHSIG reaches the worker only).
 *  - an exit that hangs (an exit-time handler): the parent waits EXIT_WAIT_S, then kills it.
 *  - a closed socket (an impl closing file descriptors): the worker says so on stderr and exits
 *    with EXIT_NO_CHANNEL, which the row's message names.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define WORKER_FLAG "--linstate-worker-fd="

enum { MSG_HELLO = 0x4c534831, MSG_ROW = 0x4c535231 };
enum { EXIT_NO_CHANNEL = 119 }; /* the worker's exit when its socket is gone */
#define EXIT_WAIT_S 10.0        /* how long a worker may take to exit by itself */

typedef struct {
    int32_t kind, n;                /* n: devices (HELLO) or samples (ROW) */
    int32_t retire;                 /* ROW: the worker exits after this row (see bench_worker_main) */
    int32_t case_index, repetition; /* ROW: the request it answers */
    int32_t pid;                    /* the sender: the worker the parent started */
} msg_head;

typedef struct {
    int32_t index;
    double copy_peak_gbps;
    ls_provenance prov;
} hello_dev;

typedef struct {
    int32_t case_index, repetition;
} case_req;

struct bench_sup {
    char **argv;        /* the worker's command line: ours with WORKER_FLAG inserted */
    char fd_flag[48];
    double timeout_s;   /* --case-timeout; 0: none */
    pid_t pid;          /* the worker, 0 when none runs */
    int pidfd;          /* a pidfd of it, -1 when the kernel has none */
    int fd;             /* our end of the socket pair */
    int started;        /* workers started */
    char (*dead)[64 + 160]; /* per plan case: "status\0message" once a repetition ended a worker */
};

/* ------------------------------------------------------------------ both ends */

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* All of buf, or -1 (the peer is gone). send(MSG_NOSIGNAL): a dead peer is an error, not a
 * SIGPIPE (which the parent's handler would take for the user's). */
static int put_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t w = send(fd, p, len, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

/* 1 when process pid has ended (it stays a zombie: still to be waited for). */
static int ended(pid_t pid)
{
    siginfo_t si;
    memset(&si, 0, sizeof si);
    return waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0 || si.si_pid == pid;
}

/* All of buf by the deadline (<= 0: none): 0, -1 end of stream, -2 deadline passed, -3 error.
 * pid > 0 (the parent): also -1 once that process has ended and nothing more is to be read, even
 * while a child it left holds the socket open. */
static int get_all(int fd, void *buf, size_t len, double deadline, pid_t pid, int pidfd)
{
    char *p = buf;
    while (len > 0) {
        int ms = -1;
        if (deadline > 0) {
            double left = deadline - now_s();
            if (left <= 0)
                return -2;
            ms = left > 3600.0 ? 3600000 : (int)(left * 1000.0) + 1;
        }
        if (pid > 0 && pidfd < 0 && (ms < 0 || ms > 200))
            ms = 200; /* no pidfd: look at the pid this often */
        struct pollfd pf[2] = {{.fd = fd, .events = POLLIN}, {.fd = pidfd, .events = POLLIN}};
        int rc = poll(pf, pid > 0 && pidfd >= 0 ? 2 : 1, ms);
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc < 0)
            return -3;
        if (!(pf[0].revents & (POLLIN | POLLHUP | POLLERR))) {
            /* it wrote all it did before it ended: look at the socket once more */
            if (pid > 0 && ended(pid) && (poll(pf, 1, 0) != 1 || !(pf[0].revents & (POLLIN | POLLHUP | POLLERR))))
                return -1;
            continue; /* else the deadline check above decides */
        }
        ssize_t r = recv(fd, p, len, 0); /* not read: a reused fd number that is no socket fails */
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return r < 0 ? -3 : -1;
        p += r;
        len -= (size_t)r;
    }
    return 0;
}

/* ------------------------------------------------------------------ worker */

static pid_t worker_pid; /* this worker: a process with another pid is a fork of it */

/* A forked copy of the worker that got back here (an impl's fork whose child returned) ends
 * without a word: only the worker answers the parent. */
static void only_the_worker(void)
{
    if (getpid() != worker_pid)
        _exit(0);
}

/* The worker's watch on the parent: the parent's end of the socket closes only when it dies
 * (it keeps it open until the worker has exited), and then the worker's process group goes, with
 * what an impl started (PDEATHSIG is not inherited by those). A poll holds the socket, so an impl
 * closing the fd does not blind it. */
static void *watch_parent(void *arg)
{
    struct pollfd pf = {.fd = (int)(intptr_t)arg, .events = 0};
    for (;;) {
        int rc = poll(&pf, 1, -1);
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc < 0 || (pf.revents & POLLNVAL))
            return NULL; /* the fd was closed under us: nothing left to watch */
        if (pf.revents & (POLLHUP | POLLERR)) {
            kill(getpgrp() == getpid() ? 0 : getpid(), SIGKILL);
            return NULL;
        }
    }
}

/* The socket failed (an impl closed or reused its file descriptor): say so and exit. */
static void lost_channel(int fd, const char *what)
{
    fprintf(stderr, "linstate-bench worker: cannot %s over fd %d: %s (closed by the impl, or linstate-bench is "
                    "gone); exiting\n", what, fd, strerror(errno));
    fflush(NULL);
    _exit(EXIT_NO_CHANNEL);
}

int bench_worker_take_fd(int *argc, char **argv)
{
    int fd = -1;
    for (int i = 1; i < *argc; i++) {
        if (strncmp(argv[i], WORKER_FLAG, strlen(WORKER_FLAG)) != 0)
            continue;
        fd = atoi(argv[i] + strlen(WORKER_FLAG));
        memmove(&argv[i], &argv[i + 1], sizeof *argv * (size_t)(*argc - i)); /* argv[argc] too */
        (*argc)--;
        break;
    }
    if (fd >= 0) {
        worker_pid = getpid();
        fcntl(fd, F_SETFD, FD_CLOEXEC); /* not handed on to what an impl may start */
        /* the watch replaces PDEATHSIG (set in spawn, kept if the thread cannot start), whose
         * SIGKILL would end the worker before the watch could end its process group */
        pthread_t watch;
        if (pthread_create(&watch, NULL, watch_parent, (void *)(intptr_t)fd) == 0) {
            pthread_detach(watch);
            prctl(PR_SET_PDEATHSIG, 0);
        }
        dup2(2, 1); /* stdout belongs to the parent (GB's report, the final table) */
        setvbuf(stdout, NULL, _IOLBF, 0);
    }
    return fd;
}

int bench_worker_main(const bench_opts *o, const ls_runtime *be, const bench_plan *plan, const int *devs,
                      int n_devs, int fd)
{
    bench_runner R;
    int init = bench_runner_init(&R, o, be, plan, devs, n_devs);
    only_the_worker(); /* an impl that forked at import */
    if (init != 0) {
        bench_runner_free(&R);
        return 1; /* the parent sees the stream end before HELLO */
    }
    for (int i = 0; i < R.n_devs; i++)
        bench_fleet_provenance(&o->fleet, &R.devs[i].prov);
    msg_head h = {MSG_HELLO, R.n_devs, 0, -1, -1, (int32_t)worker_pid};
    int rc = put_all(fd, &h, sizeof h);
    for (int i = 0; i < R.n_devs && rc == 0; i++) {
        hello_dev d;
        memset(&d, 0, sizeof d);
        d.index = R.devs[i].index;
        d.copy_peak_gbps = R.devs[i].copy_peak_gbps;
        d.prov = R.devs[i].prov;
        rc = put_all(fd, &d, sizeof d);
    }
    if (rc != 0)
        lost_channel(fd, "send the start-up message");
    case_req q;
    for (;;) {
        int got = get_all(fd, &q, sizeof q, 0, 0, -1);
        if (got == -3)
            lost_channel(fd, "read a request");
        if (got != 0)
            break; /* the stream ended: the parent is gone */
        if (q.case_index < 0 || q.case_index >= plan->n || q.repetition < 0)
            break; /* the parent's "done" */
        ls_row row;
        int n = bench_runner_measure(&R, &plan->cases[q.case_index], q.repetition, &row);
        only_the_worker();
        row.prov = NULL;
        /* a failed call, or a write outside the impl's buffers (guard zones), may have left
         * this process or its device unusable: the next case gets a fresh worker */
        int retire = strncmp(row.status, "error", 5) == 0 || strcmp(row.status, "fail_bounds") == 0;
        msg_head rh = {MSG_ROW, n, retire, q.case_index, q.repetition, (int32_t)worker_pid};
        if (put_all(fd, &rh, sizeof rh) || put_all(fd, &row, sizeof row) ||
            put_all(fd, R.samples, sizeof *R.samples * (size_t)n))
            lost_channel(fd, "send a row");
        if (rh.retire) {
            fflush(NULL);
            _exit(0); /* no teardown: the device may be poisoned, and the process frees it all */
        }
    }
    bench_runner_free(&R);
    only_the_worker();
    return 0;
}

/* ------------------------------------------------------------------ parent */

char **bench_argv_copy(int argc, char **argv)
{
    char **v = calloc((size_t)argc + 1, sizeof *v);
    for (int i = 0; v && i < argc; i++)
        if (!(v[i] = strdup(argv[i]))) {
            bench_argv_free(v);
            return NULL;
        }
    return v;
}

void bench_argv_free(char **v)
{
    for (int i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

static const char *signal_name(int sig)
{
    static const struct {
        int sig;
        const char *name;
    } names[] = {{SIGSEGV, "SIGSEGV"}, {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},
                 {SIGILL, "SIGILL"},   {SIGKILL, "SIGKILL"}, {SIGTERM, "SIGTERM"}, {SIGINT, "SIGINT"},
                 {SIGHUP, "SIGHUP"},   {SIGPIPE, "SIGPIPE"}, {SIGTRAP, "SIGTRAP"}, {SIGSYS, "SIGSYS"},
                 {SIGXCPU, "SIGXCPU"}, {SIGXFSZ, "SIGXFSZ"}, {SIGUSR1, "SIGUSR1"}, {SIGUSR2, "SIGUSR2"}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].sig == sig)
            return names[i].name;
    return NULL;
}

/* Ends the worker: it gets wait_s seconds to end by itself (0: killed at once), then its process
 * group is killed (what it started and left behind goes in any case, while the worker's zombie
 * still holds the group's id). *status: its wait status (-1 when unknown). 1 when it had to be
 * killed. */
static int reap(bench_sup *S, double wait_s, int *status)
{
    int st = -1, killed = 0;
    if (S->pid > 0) {
        double end = now_s() + wait_s;
        while (!ended(S->pid)) {
            double left = end - now_s();
            if (left <= 0) {
                killed = 1;
                break;
            }
            if (S->pidfd >= 0) {
                struct pollfd pf = {.fd = S->pidfd, .events = POLLIN};
                poll(&pf, 1, (int)(left * 1000.0) + 1);
            } else {
                struct timespec ts = {0, 20000000};
                nanosleep(&ts, NULL);
            }
        }
        kill(-S->pid, SIGKILL);
        while (waitpid(S->pid, &st, 0) < 0 && errno == EINTR)
            ;
    }
    if (S->fd >= 0)
        close(S->fd);
    if (S->pidfd >= 0)
        close(S->pidfd);
    S->fd = S->pidfd = -1;
    S->pid = 0;
    if (status)
        *status = st;
    return killed;
}

/* Starts a worker and takes its HELLO; the first one's provenance and copy peaks become the
 * run's (a restarted worker measures its own copy peak for its rows' drift). 0 or -1. */
static int spawn(bench_runner *R)
{
    bench_sup *S = R->sup;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        fprintf(stderr, "linstate-bench: cannot start a worker: %s\n", strerror(errno));
        return -1;
    }
    fflush(NULL);
    /* The parent's signal handlers move its files into place: the child must never run them, so
     * they are blocked across fork and reset in the child before it unblocks. */
    static const int handled[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
    sigset_t block, old;
    sigemptyset(&block);
    for (size_t i = 0; i < sizeof handled / sizeof handled[0]; i++)
        sigaddset(&block, handled[i]);
    sigprocmask(SIG_BLOCK, &block, &old);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        for (size_t i = 0; i < sizeof handled / sizeof handled[0]; i++)
            signal(handled[i], SIG_DFL);
        /* its own process group, so a timeout kills the worker and whatever it started; the
         * terminal's Ctrl-C reaches the parent only, whose exit ends the worker's process
         * group (watch_parent; PDEATHSIG until the worker has started it);
         * writes to the terminal from this background group are never stopped (SIGTTOU) */
        signal(SIGTTOU, SIG_IGN);
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        sigprocmask(SIG_SETMASK, &old, NULL);
        if (getppid() != parent)
            _exit(127);
        int fd = dup(sv[1]); /* without CLOEXEC: the worker's end survives exec */
        snprintf(S->fd_flag, sizeof S->fd_flag, WORKER_FLAG "%d", fd);
        execv("/proc/self/exe", S->argv);
        _exit(127);
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    close(sv[1]);
    if (pid < 0) {
        close(sv[0]);
        fprintf(stderr, "linstate-bench: cannot start a worker: %s\n", strerror(errno));
        return -1;
    }
    setpgid(pid, pid);
    S->pid = pid;
    S->fd = sv[0];
#ifdef SYS_pidfd_open
    S->pidfd = (int)syscall(SYS_pidfd_open, pid, 0); /* -1 before Linux 5.3: waitid then */
#endif
    double deadline = S->timeout_s > 0 ? now_s() + S->timeout_s : 0;
    msg_head h;
    int rc = get_all(S->fd, &h, sizeof h, deadline, S->pid, S->pidfd);
    if (rc == 0 && (h.kind != MSG_HELLO || h.n != R->n_devs || h.pid != S->pid))
        rc = -1;
    for (int i = 0; i < R->n_devs && rc == 0; i++) {
        hello_dev d;
        if ((rc = get_all(S->fd, &d, sizeof d, deadline, S->pid, S->pidfd)) != 0)
            break;
        if (S->started)
            continue;
        R->devs[i].index = d.index;
        R->devs[i].copy_peak_gbps = d.copy_peak_gbps;
        R->devs[i].prov = d.prov;
        if (i < BENCH_MAX_LIST) {
            R->res.dev_index[i] = d.index;
            R->res.dev_copy_peak_gbps[i] = d.copy_peak_gbps;
            R->res.n_devs = i + 1;
        }
    }
    if (rc != 0) {
        int st;
        reap(S, rc == -2 ? 0 : EXIT_WAIT_S, &st);
        fprintf(stderr, "linstate-bench: the worker process did not start (%s)\n",
                rc == -2 ? "no answer within --case-timeout" : "it ended first; see above");
        return -1;
    }
    S->started++;
    return 0;
}

int bench_sup_start(bench_runner *R, int argc, char **argv, double timeout_s)
{
    bench_sup *S = calloc(1, sizeof *S);
    if (!S || !(S->argv = calloc((size_t)argc + 2, sizeof *S->argv)) ||
        !(S->dead = calloc((size_t)(R->plan->n ? R->plan->n : 1), sizeof *S->dead))) {
        if (S)
            free(S->argv);
        free(S);
        fprintf(stderr, "linstate-bench: out of host memory\n");
        return -1;
    }
    S->argv[0] = argv[0];
    S->argv[1] = S->fd_flag;
    for (int i = 1; i < argc; i++)
        S->argv[i + 1] = argv[i];
    S->timeout_s = timeout_s;
    S->fd = S->pidfd = -1;
    R->sup = S;
    return spawn(R);
}

int bench_sup_close(bench_sup *S)
{
    if (!S)
        return 0;
    int st = -1;
    pid_t pid = S->pid;
    case_req done = {-1, 0}; /* the worker leaves its loop and exits; our end stays open till then */
    if (S->fd >= 0)
        put_all(S->fd, &done, sizeof done);
    int killed = reap(S, EXIT_WAIT_S, &st);
    free(S->argv);
    free(S->dead);
    free(S);
    if (killed) { /* e.g. an exit-time handler of an impl that never returns */
        fprintf(stderr, "linstate-bench: the worker process (pid %d) did not exit within %g s after the last row: "
                        "killed it and its process group; every row is in\n", (int)pid, EXIT_WAIT_S);
        return -1;
    }
    if (st == -1 || (WIFEXITED(st) && WEXITSTATUS(st) == 0))
        return 0;
    /* e.g. a sanitizer's leak report at the worker's exit: every row is in, but say it */
    if (WIFSIGNALED(st))
        fprintf(stderr, "linstate-bench: the worker process was killed by signal %d at its end\n", WTERMSIG(st));
    else
        fprintf(stderr, "linstate-bench: the worker process exited with code %d at its end\n", WEXITSTATUS(st));
    return -1;
}

void bench_sup_free(bench_sup *S)
{
    if (!S)
        return;
    reap(S, 0, NULL); /* an error path: how the worker ends does not matter */
    free(S->argv);
    free(S->dead);
    free(S);
}

/* The row of a case that ended its worker: status and message, said on stderr too. */
static void dead_row(bench_runner *R, const bench_case *c, int rep, const char *status, const char *msg, ls_row *row)
{
    bench_sup *S = R->sup;
    snprintf(S->dead[c->index], 64, "%s", status);
    snprintf(S->dead[c->index] + 64, 160, "%s", msg);
    fprintf(stderr, "linstate-bench: %s: impl %s: %s (%s); the next case gets a new worker\n", c->name,
            c->pt->impl->name, msg, status);
    bench_runner_error_row(R, c, rep, status, msg, row);
}

int bench_sup_measure(bench_runner *R, const bench_case *c, int rep, ls_row *row)
{
    bench_sup *S = R->sup;
    if (S->dead[c->index][0]) { /* an earlier repetition ended a worker: not run again */
        bench_runner_error_row(R, c, rep, S->dead[c->index], S->dead[c->index] + 64, row);
        return 0;
    }
    case_req q = {c->index, rep};
    for (int attempt = 0;; attempt++) { /* a worker that ended between cases is replaced once */
        if (S->pid == 0 && spawn(R) != 0)
            return -1;
        if (put_all(S->fd, &q, sizeof q) == 0)
            break;
        reap(S, 0, NULL);
        if (attempt)
            return -1;
    }
    double deadline = S->timeout_s > 0 ? now_s() + S->timeout_s : 0;
    msg_head h;
    int rc = get_all(S->fd, &h, sizeof h, deadline, S->pid, S->pidfd);
    /* a reply that is not the row of this request from this worker (a forked copy of it
     * answering, bytes an impl wrote to the socket): the worker cannot be trusted any more */
    if (rc == 0 && (h.kind != MSG_ROW || h.n < 0 || h.n > R->cap_samples || h.case_index != q.case_index ||
                    h.repetition != q.repetition || h.pid != S->pid))
        rc = -4;
    if (rc == 0)
        rc = get_all(S->fd, row, sizeof *row, deadline, S->pid, S->pidfd);
    if (rc == 0)
        rc = get_all(S->fd, R->samples, sizeof *R->samples * (size_t)h.n, deadline, S->pid, S->pidfd);
    if (rc == 0) {
        row->prov = &bench_runner_device(R, c->device)->prov;
        if (h.retire)
            reap(S, EXIT_WAIT_S, NULL);
        return h.n;
    }
    char msg[160];
    int st;
    pid_t pid = S->pid;
    /* the stream ended or the worker died: it gets a moment to end by itself, so that how it
     * ended (not our kill) is what the row says */
    int killed = reap(S, rc == -1 || rc == -3 ? EXIT_WAIT_S : 0, &st);
    if (rc == -2) {
        snprintf(msg, sizeof msg, "no result within --case-timeout %g s: worker killed", S->timeout_s);
        dead_row(R, c, rep, "error:timeout", msg, row);
    } else if (rc == -4) {
        if (h.kind == MSG_ROW && h.pid != pid)
            snprintf(msg, sizeof msg, "a reply from pid %d, not the worker (pid %d; a fork of it?): worker killed",
                     (int)h.pid, (int)pid);
        else if (h.kind == MSG_ROW)
            snprintf(msg, sizeof msg, "the worker answered case %d repetition %d, not %d/%d: worker killed",
                     (int)h.case_index, (int)h.repetition, q.case_index, q.repetition);
        else
            snprintf(msg, sizeof msg, "a garbled reply on the worker's socket (kind 0x%x): worker killed",
                     (unsigned)h.kind);
        dead_row(R, c, rep, "error:crash", msg, row);
    } else if (killed) {
        snprintf(msg, sizeof msg, "worker closed its socket or stopped answering, and did not exit within %g s: killed",
                 EXIT_WAIT_S);
        dead_row(R, c, rep, "error:crash", msg, row);
    } else if (st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == EXIT_NO_CHANNEL) {
        dead_row(R, c, rep, "error:exit", "worker lost its socket to linstate-bench (an impl closed it?) and exited",
                 row);
    } else if (st != -1 && WIFSIGNALED(st)) {
        const char *name = signal_name(WTERMSIG(st));
        if (name)
            snprintf(msg, sizeof msg, "worker killed by %s", name);
        else
            snprintf(msg, sizeof msg, "worker killed by signal %d", WTERMSIG(st));
        dead_row(R, c, rep, "error:crash", msg, row);
    } else if (st != -1 && WIFEXITED(st)) {
        snprintf(msg, sizeof msg, "worker exited with code %d during the case", WEXITSTATUS(st));
        dead_row(R, c, rep, "error:exit", msg, row);
    } else {
        dead_row(R, c, rep, "error:crash", "worker ended during the case", row);
    }
    return 0;
}
