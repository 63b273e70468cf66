/* cpu_spawn.c — runs a program (the host C++ compiler) under a deadline through a guardian process that stops the program's process group at the deadline or at the host's death and reaps all of it, capturing its output. */
#include "cpu_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

/* Output kept from a child (the head; the rest is drained and dropped). */
#define AMP__CPU_LOG_MAX (48 * 1024)

/* The status pipe carries the program's pid (4 bytes, once it is forked),
 * then the guardian's status (1 byte). */
typedef struct amp__cpu_report {
    int32_t pid;   /* 0: none */
    int code;      /* -1: none */
} amp__cpu_report;

/* The guardian's end: its status (the program's exit status, or 128 + the
 * signal that killed it) written to the status pipe sfd, then its exit with
 * it. The caller reads it there when the guardian is not its to reap. */
static _Noreturn void amp__cpu_guardian_exit(int sfd, int code)
{
    unsigned char c = (unsigned char)code;
    ssize_t w = write(sfd, &c, 1);
    (void)w;
    _exit(code);
}

void amp__cpu_close_fds_except(int keep)
{
#if defined(__linux__) && defined(SYS_close_range)
    if ((keep <= 3 || syscall(SYS_close_range, 3u, (unsigned)keep - 1, 0u) == 0) &&
        syscall(SYS_close_range, (unsigned)keep + 1, ~0u, 0u) == 0)
        return;
#endif
    struct rlimit rl;
    int top = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < 65536
                  ? (int)rl.rlim_cur
                  : 65536;
    for (int fd = 3; fd < top; ++fd)
        if (fd != keep) close(fd);
}

/* The program's process id in the guardian (0 before it is forked), and
 * whether the guardian was told to stop it. The guardian is a forked copy
 * of the host: these are its own. */
static volatile sig_atomic_t amp__cpu_guardian_child, amp__cpu_guardian_stop;

/* The guardian's SIGTERM: the deadline passed (the host's kill) or the host
 * died (PR_SET_PDEATHSIG). The program's process group, the compiler and
 * everything it started, is killed; the guardian lives on to reap them.
 * SIGTERM is blocked until the program's pid is known. */
static void amp__cpu_guardian_die(int sig)
{
    (void)sig;
    pid_t c = (pid_t)amp__cpu_guardian_child;
    amp__cpu_guardian_stop = 1;
    if (c > 0) {
        kill(-c, SIGKILL);
        kill(c, SIGKILL);
    }
}

void amp__cpu_describe_exit(int ws, char *buf, size_t cap)
{
    /* The guardian reports a compiler killed by signal N as exit 128 + N. */
    if (WIFEXITED(ws) && WEXITSTATUS(ws) > 128) snprintf(buf, cap, "killed by signal %d", WEXITSTATUS(ws) - 128);
    else if (WIFEXITED(ws) && WEXITSTATUS(ws) == 127) snprintf(buf, cap, "could not be started (exit status 127)");
    else if (WIFEXITED(ws)) snprintf(buf, cap, "exit status %d", WEXITSTATUS(ws));
    else if (WIFSIGNALED(ws)) snprintf(buf, cap, "killed by signal %d", WTERMSIG(ws));
    else snprintf(buf, cap, "wait status %#x", ws);
}

/* Why execve of prog failed, on the output the caller reads (the compile
 * log): "exit status 127" alone says nothing of an argument list too long
 * for the system (E2BIG) or a program that is not one. Async-signal-safe
 * (no strerror: a fork of a threaded host). */
static void amp__cpu_exec_failed(const char *prog, int e)
{
    static const struct {
        int e;
        const char *why;
    } known[] = {{E2BIG, "its arguments and environment are longer than the system allows (E2BIG)"},
                 {ENOENT, "no such file (ENOENT)"},
                 {EACCES, "permission denied (EACCES)"},
                 {ENOEXEC, "not a program this system can run (ENOEXEC)"},
                 {ENOMEM, "out of memory (ENOMEM)"},
                 {ETXTBSY, "the file is open for writing (ETXTBSY)"}};
    const char *why = "execve failed";
    for (size_t i = 0; i < sizeof known / sizeof known[0]; ++i)
        if (known[i].e == e) why = known[i].why;
    char msg[1024];
    size_t n = 0;
    const char *parts[] = {"hipamp: cannot run ", prog, ": ", why, "\n"};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; ++i)
        for (const char *p = parts[i]; *p && n < sizeof msg - 1; ++p) msg[n++] = *p;
    if (n == sizeof msg - 1) msg[n - 1] = '\n';
    ssize_t w = write(2, msg, n);
    (void)w;
}

/* The guardian's reaping of the program c's process group once c has
 * ended or been killed: what c left behind in its group is killed, and
 * every process of the group that is the guardian's child (the guardian is
 * their subreaper: orphans of c come to it, not to init) is reaped, so
 * that no zombie is left where nothing reaps orphans (an application that
 * is PID 1 of its container) and "stopped" means none of it still runs.
 * A process that left the group (setsid: a compiler server such as
 * sccache's) is left alone. Bounded (about 2 s) for a process that does
 * not die at once (uninterruptible I/O). */
static void amp__cpu_guardian_sweep(pid_t c)
{
    kill(-c, SIGKILL);
    for (int i = 0; i < 2000; ++i) {
        pid_t r = waitpid(-c, NULL, WNOHANG);
        if (r > 0 || (r < 0 && errno == EINTR)) continue;
        if (r < 0) return; /* ECHILD: none of the group is left */
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
}

/* The guardian (the forked child): the program's handlers put aside, its
 * output to out_fd, no descriptor of the program's kept; the program run
 * as a child of its own, leading a process group of its own, and waited
 * for; its group swept; its status to status_fd and as the guardian's exit
 * status. Never returns. Only async-signal-safe calls run here (the host
 * may have threads). All signals are blocked on entry. */
static _Noreturn void amp__cpu_guardian(char *const argv[], char *const envp[], int out_fd, int status_fd,
                                        pid_t host)
{
    /* The program's signal handlers are for its own process and run in no
     * process of ours: a SIGCHLD handler that reaps every child would take
     * the compiler's status from the waitpid below. SIGCHLD goes back to
     * its default even where the program ignores it, which would have the
     * compiler reaped unseen (and the compiler inherit that). */
    setpgid(0, 0);
    sigset_t none, term;
    sigemptyset(&none);
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    struct sigaction dfl0;
    memset(&dfl0, 0, sizeof dfl0);
    dfl0.sa_handler = SIG_DFL;
    for (int s = 1; s < NSIG; ++s) {
        struct sigaction cur;
        if (sigaction(s, NULL, &cur) == 0 && (s == SIGCHLD || cur.sa_handler != SIG_IGN)) sigaction(s, &dfl0, NULL);
    }
    /* No SA_RESTART: the kill interrupts the wait below. */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = amp__cpu_guardian_die;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    prctl(PR_SET_CHILD_SUBREAPER, 1);
#endif
    /* SIGTERM stays blocked until the program's pid is known (a pending
     * one is then delivered). */
    sigprocmask(SIG_SETMASK, &term, NULL);
    if (getppid() != host) amp__cpu_guardian_exit(status_fd, 127); /* the host died before prctl */
    int nul = open("/dev/null", O_RDONLY);
    if (nul < 0 || dup2(nul, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(out_fd, 2) < 0)
        amp__cpu_guardian_exit(status_fd, 127);
    /* The program's descriptors that are not close-on-exec (a pipe's write
     * end whose reader waits for its end, a locked file) would stay open in
     * the compiler for as long as it runs; so would the pipe ends of
     * another thread's spawn forked at the same time (close-on-exec, but a
     * guardian execs nothing), whose output would not end before this one. */
    amp__cpu_close_fds_except(status_fd);
    pid_t c = fork();
    if (c == 0) {
        /* Both sides set the group, so the kill finds it whichever runs first. */
        setpgid(0, 0);
        sigaction(SIGTERM, &dfl0, NULL);
        sigprocmask(SIG_SETMASK, &none, NULL);
        execve(argv[0], argv, envp);
        amp__cpu_exec_failed(argv[0], errno);
        _exit(127);
    }
    if (c < 0) amp__cpu_guardian_exit(status_fd, 127);
    setpgid(c, c);
    amp__cpu_guardian_child = c;
    int32_t pid32 = (int32_t)c;
    ssize_t w = write(status_fd, &pid32, sizeof pid32);
    (void)w;
    sigprocmask(SIG_SETMASK, &none, NULL);
    int ws = 0;
    pid_t r;
    /* Until the program ends, or the kill interrupts the wait: then the
     * sweep reaps the program with the rest of its group, bounded (a
     * process in uninterruptible I/O dies only when it leaves it). */
    while ((r = waitpid(c, &ws, 0)) < 0 && errno == EINTR && !amp__cpu_guardian_stop) {
    }
    amp__cpu_guardian_sweep(c);
    if (r != c) amp__cpu_guardian_exit(status_fd, amp__cpu_guardian_stop ? 128 + SIGKILL : 127);
    amp__cpu_guardian_exit(status_fd, WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + (WIFSIGNALED(ws) ? WTERMSIG(ws) : 0));
}

/* The guardian's output from fd into buf (the first AMP__CPU_LOG_MAX bytes
 * kept, the rest drained), until its end, the guardian's exit (pidfd, -1
 * where there is none) or the deadline (*timed_out set); its length.
 * The output ends when every copy of the pipe's write end is closed: a fork
 * of the program's (another thread's, between pipe2 and our close) holds
 * one for as long as that child lives. So the guardian's exit ends it too:
 * what the compiler wrote is in the pipe by then. */
static size_t amp__cpu_read_output(int fd, int pidfd, uint64_t deadline, char *buf, bool *timed_out)
{
    size_t len = 0;
    bool gone = false;
    for (;;) {
        int wait_ms = -1;
        if (deadline) {
            uint64_t now = amp__now_ns();
            if (now >= deadline) {
                *timed_out = true;
                break;
            }
            uint64_t left = (deadline - now + 999999) / 1000000;
            wait_ms = left > 60000 ? 60000 : (int)left;
        }
        struct pollfd pfd[2] = {{fd, POLLIN, 0}, {pidfd, POLLIN, 0}};
        int pr = gone ? 1 : poll(pfd, pidfd >= 0 ? 2 : 1, wait_ms);
        if (pr < 0 && errno == EINTR) continue;
        if (pr < 0) break;
        if (pr == 0) continue; /* re-check the deadline */
        if (!gone && !pfd[0].revents) {
            /* The guardian exited: what is left in the pipe, then the end. */
            gone = true;
            if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0) break;
        }
        char chunk[4096];
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN && !gone) continue;
        if (n <= 0) break;
        size_t take = (size_t)n;
        if (take > AMP__CPU_LOG_MAX - len) take = AMP__CPU_LOG_MAX - len;
        memcpy(buf + len, chunk, take);
        len += take;
    }
    return len;
}

/* What the guardian wrote on the status pipe, read once it has exited
 * (the callers wait for that: its waitpid, or the ECHILD that follows its
 * exit where the program reaped it), so all of it is there: read without
 * blocking, since another process of the program's forked meanwhile may
 * hold a copy of the write end (the pipe would not end while it lives). */
static amp__cpu_report amp__cpu_read_report(int status_fd)
{
    unsigned char b[5];
    size_t got = 0;
    (void)fcntl(status_fd, F_SETFL, fcntl(status_fd, F_GETFL) | O_NONBLOCK);
    while (got < sizeof b) {
        ssize_t k = read(status_fd, b + got, sizeof b - got);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        got += (size_t)k;
    }
    amp__cpu_report r = {0, -1};
    if (got == 1) r.code = b[0];
    if (got >= 4) memcpy(&r.pid, b, sizeof r.pid);
    if (got == 5) r.code = b[4];
    return r;
}

/* The guardian g reaped into *wstatus: g, or -1 with errno. Where the
 * program reaped it itself (it ignores SIGCHLD, or a handler of its waits
 * for every child), its status is read from the status pipe, or there is
 * none because it was killed (timed_out). A guardian killed from outside
 * left its program's process group running, with nobody to stop it: it is
 * killed here. */
static pid_t amp__cpu_reap_guardian(pid_t g, int status_fd, bool timed_out, int *wstatus)
{
    pid_t r;
    while ((r = waitpid(g, wstatus, 0)) < 0 && errno == EINTR) {
    }
    if (r < 0 && errno != ECHILD) return r;
    amp__cpu_report rep = amp__cpu_read_report(status_fd);
    /* No status: the guardian, which writes one before every exit, was
     * killed after it started the program. */
    if (rep.code < 0 && rep.pid > 0) kill(-(pid_t)rep.pid, SIGKILL);
    if (r >= 0) return r;
    if (rep.code >= 0) {
        *wstatus = W_EXITCODE(rep.code, 0);
        return g;
    }
    if (timed_out) {
        *wstatus = W_EXITCODE(0, SIGKILL);
        return g;
    }
    errno = ECHILD;
    return -1;
}

/* A guardian child runs the program, which leads a new process group, so
 * that a kill at the deadline reaches everything the program started; the
 * guardian (the orphans' subreaper) reaps all of it before it exits, and
 * takes the group down when this process dies (PR_SET_PDEATHSIG). */
amp_status amp__cpu_run_capture(char *const argv[], char *const envp[], uint64_t deadline, char **out,
                                int *wstatus, bool *timed_out)
{
    amp_status st = AMP_OK;
    int fds[2] = {-1, -1}, sfds[2] = {-1, -1}, pidfd = -1;
    char *buf = NULL;
    pid_t g = -1;
    *out = NULL;
    *wstatus = 0;
    *timed_out = false;
    if (!(buf = malloc(AMP__CPU_LOG_MAX + 1))) {
        st = amp__fail(AMP_ERROR_OUT_OF_MEMORY, "CPU accelerator: no memory for compiler output");
        goto fail;
    }
    /* CLOEXEC so concurrent spawns from other threads do not inherit the
     * write end (the child's own copy comes from dup2, which clears it). */
    if (pipe2(fds, O_CLOEXEC) != 0 || pipe2(sfds, O_CLOEXEC) != 0) {
        st = amp__fail(AMP_ERROR_DEVICE, "CPU accelerator: pipe: %s", strerror(errno));
        goto fail;
    }
    pid_t host = getpid();
    /* No signal reaches the guardian before it has put the program's
     * handlers aside. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    g = fork();
    if (g == 0) amp__cpu_guardian(argv, envp, fds[1], sfds[1], host);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (g < 0) {
        int e = errno;
        st = amp__fail(e == ENOMEM ? AMP_ERROR_OUT_OF_MEMORY : AMP_ERROR_DEVICE, "CPU accelerator: cannot run %s: fork: %s",
                       argv[0], strerror(e));
        goto fail;
    }
    /* The guardian leads a group of its own (both sides set it): a Ctrl-C
     * to the program's job does not end it before it has stopped the
     * compiler, which it does when the program dies. */
    setpgid(g, g);
    close(fds[1]);
    fds[1] = -1;
    close(sfds[1]);
    sfds[1] = -1;
#ifdef SYS_pidfd_open
    pidfd = (int)syscall(SYS_pidfd_open, g, 0);
#endif
    size_t len = amp__cpu_read_output(fds[0], pidfd, deadline, buf, timed_out);
    /* At the deadline the guardian kills the program's group and reaps it
     * before it exits. Through the pidfd where there is one: its signal
     * cannot reach another process that took the pid of a guardian reaped
     * meanwhile (by a SIGCHLD handler of the program's). */
    if (*timed_out) {
        bool sent = false;
#ifdef SYS_pidfd_send_signal
        sent = pidfd >= 0 && (syscall(SYS_pidfd_send_signal, pidfd, SIGTERM, NULL, 0) == 0 || errno != ENOSYS);
#endif
        if (!sent) kill(g, SIGTERM);
    }
    buf[len] = 0;
    if (amp__cpu_reap_guardian(g, sfds[0], *timed_out, wstatus) < 0) {
        st = amp__fail(AMP_ERROR_DEVICE, "CPU accelerator: waitpid(%s): %s", argv[0], strerror(errno));
        goto fail;
    }
    *out = buf;
    buf = NULL;
fail:
    if (fds[0] >= 0) close(fds[0]);
    if (fds[1] >= 0) close(fds[1]);
    if (pidfd >= 0) close(pidfd);
    if (sfds[0] >= 0) close(sfds[0]);
    if (sfds[1] >= 0) close(sfds[1]);
    free(buf);
    return st;
}
