/* child.c — runs the loop transformation in a forked child process, bounded by the compile deadline and its own limit (a child that uses no CPU is stuck and gets one more try), and carries its result back through a pipe. */
#include "loops.h"
#include "../cpu_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

/* ------------------------------------------------------------ transport
 * The transformation runs in a child process (below); its result crosses a
 * pipe as: "AMPL3\n", note\0, kernel count\n, what became of the
 * precompiled library part (1: read, 2: refused, 0: neither)\n, then per kernel
 * name\0 at\n why\0 line\0 loops-length\n loops, then read-length\n and the
 * files the parse read. */

/* The transformation's outcome as bytes (malloc'ed, NULL when out of
 * memory), and back (false: it could not run; note says why). */
static char *encode(bool ok, const amp__cpu_loops_result *res, const char *note, size_t *len)
{
    amp__sb b = {0};
    amp__sb_puts(&b, "AMPL3\n");
    amp__sb_put(&b, note, strlen(note) + 1);
    amp__sb_printf(&b, "%d\n%d\n", ok ? res->n : -1, !ok ? 0 : res->pch_used ? 1 : res->pch_refused ? 2 : 0);
    for (int i = 0; ok && i < res->n; ++i) {
        const amp__cpu_loops_kernel *k = &res->k[i];
        amp__sb_put(&b, k->name, strlen(k->name) + 1);
        amp__sb_printf(&b, "%u\n", k->at);
        amp__sb_put(&b, k->why, strlen(k->why) + 1);
        amp__sb_put(&b, k->line ? k->line : "", strlen(k->line ? k->line : "") + 1);
        size_t ll = k->loops ? strlen(k->loops) : 0;
        amp__sb_printf(&b, "%zu\n", ll);
        if (ll) amp__sb_put(&b, k->loops, ll);
    }
    size_t rl = ok && res->read ? strlen(res->read) : 0;
    if (ok) amp__sb_printf(&b, "%zu\n", rl);
    if (rl) amp__sb_put(&b, res->read, rl);
    if (b.oom) {
        free(b.p);
        return NULL;
    }
    *len = b.n;
    return b.p;
}

/* A field up to delim inside [*p, end): NULL when missing. */
static const char *take(const char **p, const char *end, char delim)
{
    const char *s = *p;
    const char *d = memchr(s, delim, (size_t)(end - s));
    if (!d) return NULL;
    *p = d + 1;
    return s;
}

static bool decode(const char *buf, size_t len, amp__cpu_loops_result *res, char *note, size_t cap)
{
    const char *p = buf, *end = buf + len;
    memset(res, 0, sizeof *res);
    note[0] = 0;
    if (len < 6 || memcmp(buf, "AMPL3\n", 6)) return false;
    p += 6;
    const char *f = take(&p, end, 0);
    if (!f) return false;
    snprintf(note, cap, "%s", f);
    const char *nl = take(&p, end, '\n');
    const char *pl = nl ? take(&p, end, '\n') : NULL;
    if (!pl) return false;
    int n = atoi(nl);
    if (n < 0) return false;
    bool pch_used = pl[0] == '1', pch_refused = pl[0] == '2';
    if (n > 100000) goto bad;
    res->k = calloc((size_t)n + 1, sizeof *res->k);
    if (!res->k) goto bad;
    res->n = n;
    res->pch_used = pch_used;
    res->pch_refused = pch_refused;
    for (int i = 0; i < n; ++i) {
        amp__cpu_loops_kernel *k = &res->k[i];
        const char *name = take(&p, end, 0), *at = name ? take(&p, end, '\n') : NULL;
        const char *why = at ? take(&p, end, 0) : NULL, *line = why ? take(&p, end, 0) : NULL;
        const char *ll = line ? take(&p, end, '\n') : NULL;
        if (!ll) goto bad;
        snprintf(k->name, sizeof k->name, "%s", name);
        k->at = (unsigned)strtoul(at, NULL, 10);
        snprintf(k->why, sizeof k->why, "%s", why);
        size_t l = strtoul(ll, NULL, 10);
        if (line[0] && !(k->line = amp__strdup(line))) goto bad;
        if (l) {
            if (l > (size_t)(end - p) || !(k->loops = malloc(l + 1))) goto bad;
            memcpy(k->loops, p, l);
            k->loops[l] = 0;
            p += l;
        }
    }
    const char *rl = take(&p, end, '\n');
    if (!rl) goto bad;
    size_t l = strtoul(rl, NULL, 10);
    if (l) {
        if (l > (size_t)(end - p) || memchr(p, 0, l) || !(res->read = malloc(l + 1))) goto bad;
        memcpy(res->read, p, l);
        res->read[l] = 0;
    }
    return true;
bad:
    amp__cpu_loops_free(res);
    snprintf(note, cap, "fibers: the loop transformation's result was garbled");
    return false;
}

/* ------------------------------------------------------------ the child */

/* The loop transformation gets this long at most (a parse takes well under
 * a second); past it the kernels stay on fibers. */
#define AMP__CPU_LOOPS_LIMIT_S 60
/* A child that used no CPU time for this long is stuck, not slow. */
#define AMP__CPU_LOOPS_STUCK_S 5
/* A whole parse after a child died with the precompiled part is tried
 * only with this much left before the deadline. */
#define AMP__CPU_LOOPS_RETRY_NS 5000000000ull

/* *ticks = CPU time (clock ticks, user + system) child pid has used so
 * far; false when /proc cannot say (then the child is never taken for
 * stuck). */
static bool child_ticks(pid_t pid, unsigned long long *ticks)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return false;
    buf[n] = 0;
    /* after "pid (comm) ": state is field 3, utime 14, stime 15 */
    const char *p = strrchr(buf, ')');
    unsigned long long ut = 0, st = 0;
    if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2) return false;
    *ticks = ut + st;
    return true;
}

/* What a child process does: its answer (malloc'ed bytes, *len of them),
 * or NULL. */
typedef char *(*child_work)(const void *arg, size_t *len);

/* Run work in a child process and collect its answer: libclang reads every
 * file the source includes (a FIFO would block it forever), may crash on
 * input it does not expect, and cannot be interrupted; a child is bounded by
 * the deadline, dies with this process (PR_SET_PDEATHSIG), and takes
 * libclang's memory and threads with it. The library is loaded here first,
 * once, so children only call into it. what names the work in notes
 * (prefix first). false (note says why) when it did not run or did not
 * finish; *late when it was stopped at the deadline (or taken for
 * *stuck); *transient when that, or when no pipe or process could be made
 * for it; *died when it ran and ended without its answer (a signal, an
 * exit status). */
static bool run_child_once(child_work work, const void *arg, const char *what, const char *prefix, uint64_t deadline,
                           char **out, size_t *outlen, char *note, size_t cap, bool *late, bool *stuck,
                           bool *transient, bool *died)
{
    const char *why = NULL;
    int fds[2] = {-1, -1};
    char *buf = NULL;
    size_t len = 0, bcap = 0;
    bool ok = false;
    *late = *stuck = *died = false;
    *out = NULL;
    *outlen = 0;
    if (!amp__clang_get(&why)) {
        snprintf(note, cap, "%s%s", prefix, why);
        return false;
    }
    if (pipe2(fds, O_CLOEXEC) != 0) {
        snprintf(note, cap, "%sno pipe for %s: %s", prefix, what, strerror(errno));
        *transient = true;
        return false;
    }
    pid_t host = getpid();
    pid_t c = fork();
    if (c < 0) {
        snprintf(note, cap, "%scannot fork for %s: %s", prefix, what, strerror(errno));
        *transient = true;
        close(fds[0]);
        close(fds[1]);
        return false;
    }
    if (c == 0) {
        close(fds[0]);
#ifdef __linux__
        prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
        if (getppid() != host) _exit(1);
        /* The host's signal handlers are not this process's business, and
         * its terminal's signals are the host's to act on. */
        setpgid(0, 0);
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGPIPE, SIGALRM, SIGCHLD};
        for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; ++i) sigaction(sigs[i], &dfl, NULL);
        /* A thread of the parent that forked at the same time as this
         * child (another build's transformation, the precompiled part's
         * making) has its pipe's write end open here too, and its reader
         * would wait for this child's end to see its own. */
        amp__cpu_close_fds_except(fds[1]);
        size_t l = 0;
        char *answer = work(arg, &l);
        _exit(answer && amp__fd_write_all(fds[1], answer, l) ? 0 : 1);
    }
    close(fds[1]);
    fds[1] = -1;
    /* The answer ends when every copy of the pipe's write end is closed: a
     * fork on another thread between pipe2 and the close above holds one
     * for as long as its child lives. So the child's exit ends it too (as
     * for the compiler's guardian, cpu_spawn.c): all it wrote is in the
     * pipe by then. */
    int pidfd = -1;
#ifdef SYS_pidfd_open
    pidfd = (int)syscall(SYS_pidfd_open, c, 0);
#endif
    bool gone = false;
    uint64_t limit = amp__now_ns() + (uint64_t)AMP__CPU_LOOPS_LIMIT_S * 1000000000ull;
    if (limit > deadline) limit = deadline;
    unsigned long long cpu = 0;
    (void)child_ticks(c, &cpu);
    uint64_t progress = amp__now_ns();
    for (;;) {
        uint64_t now = amp__now_ns();
        if (now >= limit) {
            *late = true;
            break;
        }
        uint64_t left = (limit - now + 999999) / 1000000;
        struct pollfd pfd[2] = {{fds[0], POLLIN, 0}, {pidfd, POLLIN, 0}};
        int pr = gone ? 1 : poll(pfd, pidfd >= 0 ? 2 : 1, left > 1000 ? 1000 : (int)left);
        if (pr < 0 && errno == EINTR) continue;
        if (pr < 0) break;
        if (pr == 0) {
            unsigned long long t = cpu;
            if (!child_ticks(c, &t) || t != cpu) {
                cpu = t;
                progress = amp__now_ns();
            } else if (amp__now_ns() - progress >= (uint64_t)AMP__CPU_LOOPS_STUCK_S * 1000000000ull) {
                *late = *stuck = true;
                break;
            }
            continue;
        }
        progress = amp__now_ns();
        if (!gone && !pfd[0].revents) {
            /* The child exited: what is left in the pipe, then the end. */
            gone = true;
            if (fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK) != 0) break;
        }
        if (len + 65536 + 1 > bcap) {
            size_t nc = bcap ? bcap * 2 : 262144;
            char *q = realloc(buf, nc);
            if (!q) break;
            buf = q;
            bcap = nc;
        }
        ssize_t n = read(fds[0], buf + len, 65536);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break; /* the end, or (gone) nothing left */
        len += (size_t)n;
    }
    if (*late) {
        kill(c, SIGKILL);
        *transient = true;
    }
    int ws = 0;
    while (waitpid(c, &ws, 0) < 0 && errno == EINTR) {}
    close(fds[0]);
    if (pidfd >= 0) close(pidfd);
    if (*stuck) snprintf(note, cap, "%s%s made no progress for %d s", prefix, what, AMP__CPU_LOOPS_STUCK_S);
    else if (*late) snprintf(note, cap, "%s%s did not finish in time", prefix, what);
    else if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0 || !buf) {
        snprintf(note, cap, "%s%s failed (%s %d)", prefix, what, WIFSIGNALED(ws) ? "signal" : "exit status",
                 WIFSIGNALED(ws) ? WTERMSIG(ws) : WEXITSTATUS(ws));
        *died = true;
    } else {
        ok = true;
        *out = buf;
        *outlen = len;
        buf = NULL;
    }
    free(buf);
    return ok;
}

/* The child is a fork of a process that may have other threads: a lock one
 * of them held at the fork (an allocator's, seen under older
 * AddressSanitizer runtimes) stays locked in the child forever. A child that
 * used no CPU for AMP__CPU_LOOPS_STUCK_S is taken for that and started once
 * more; a real time-out is not repeated. The outcome is the last run's. */
static bool run_child(child_work work, const void *arg, const char *what, const char *prefix, uint64_t deadline,
                      char **out, size_t *outlen, char *note, size_t cap, bool *late, bool *stuck, bool *transient,
                      bool *died)
{
    *transient = false;
    bool ok = run_child_once(work, arg, what, prefix, deadline, out, outlen, note, cap, late, stuck, transient, died);
    if (*stuck && amp__now_ns() < deadline) {
        *transient = false; /* the second run decides */
        ok = run_child_once(work, arg, what, prefix, deadline, out, outlen, note, cap, late, stuck, transient, died);
    }
    return ok;
}

/* The transformation's child: its result, encoded. */
static char *transform_work(const void *arg, size_t *len)
{
    amp__cpu_loops_result r;
    char n[512];
    bool rok = amp__cpu_loops_transform(arg, &r, n, sizeof n);
    return encode(rok, &r, n, len);
}

/* *died: the child ran and ended without its answer. */
static bool run_once(const amp__cpu_loops_job *job, uint64_t deadline, amp__cpu_loops_result *res, char *note,
                     size_t cap, bool *late, bool *stuck, bool *transient, bool *died)
{
    char *buf = NULL;
    size_t len = 0;
    memset(res, 0, sizeof *res);
    bool ran = run_child(transform_work, job, "the loop transformation", "fibers: ", deadline, &buf, &len, note, cap,
                         late, stuck, transient, died);
    bool ok = ran && decode(buf, len, res, note, cap);
    free(buf);
    return ok;
}

/* A child taken for stuck is started once more (run_child). Either way a
 * build made without the loop versions is not to be stored
 * (how->transient): the next process tries again. */
bool amp__cpu_loops_run(const amp__cpu_loops_job *job, uint64_t deadline, amp__cpu_loops_result *res, char *note,
                        size_t cap, amp__cpu_loops_outcome *how)
{
    bool stuck = false, died = false;
    bool ok = run_once(job, deadline, res, note, cap, &how->late, &stuck, &how->transient, &died);
    /* A child that died reading the precompiled library part (libclang
     * crashes on input it does not expect) leaves the parse of the whole
     * text to one more child, where the deadline leaves it time (a parse
     * takes well under a second): the part is then the one refused. */
    if (died && job->pch && amp__now_ns() + AMP__CPU_LOOPS_RETRY_NS < deadline) {
        amp__cpu_loops_job whole = *job;
        whole.pch = NULL;
        how->transient = false;
        ok = run_once(&whole, deadline, res, note, cap, &how->late, &stuck, &how->transient, &died);
        res->pch_refused = ok;
    }
    return ok;
}

/* The precompiling child: "ok\n" and the list of the files it read once
 * the file is written, else the note. */
typedef struct pch_arg {
    const amp__cpu_loops_job *job;
    const char *path;
} pch_arg;

static char *pch_work(const void *arg, size_t *len)
{
    const pch_arg *a = arg;
    char note[300];
    char *inputs = NULL, *answer = NULL;
    if (amp__cpu_loops_save_pch(a->job, a->path, &inputs, note, sizeof note)) {
        if (asprintf(&answer, "ok\n%s", inputs) < 0) answer = NULL;
        free(inputs);
    } else {
        answer = amp__strdup(note[0] ? note : "libclang could not precompile the library's part");
    }
    if (answer) *len = strlen(answer);
    return answer;
}

bool amp__cpu_loops_make_pch(const amp__cpu_loops_job *job, const char *path, uint64_t deadline, char **inputs,
                             char *note, size_t cap)
{
    pch_arg a = {job, path};
    char *buf = NULL;
    size_t len = 0;
    bool late = false, stuck = false, transient = false, died = false;
    *inputs = NULL;
    bool ok = run_child(pch_work, &a, "precompiling the library's part", "", deadline, &buf, &len, note, cap, &late,
                        &stuck, &transient, &died);
    if (ok && (len <= 3 || memcmp(buf, "ok\n", 3) || memchr(buf, 0, len))) {
        snprintf(note, cap, "%.*s", (int)(len > 200 ? 200 : len), buf);
        ok = false;
    }
    if (ok && !(*inputs = malloc(len - 2))) {
        snprintf(note, cap, "no memory for the list of the part's files");
        ok = false;
    }
    if (ok) {
        memcpy(*inputs, buf + 3, len - 3);
        (*inputs)[len - 3] = 0;
    }
    free(buf);
    return ok;
}
