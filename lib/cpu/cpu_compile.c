/* cpu_compile.c — finds the host C++ compiler for the CPU accelerator and compiles kernel sources (CPU prelude + core's source, plus the loop versions lib/cpu/loops/ writes in a child process) into shared objects, under a deadline, through a guardian process that takes the compiler's whole process group down with it. */
#include "cpu_clang.h"
#include "cpu_internal.h"
#include "loops/loops.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

extern char **environ;

/* Fixed flags; part of the cache tag. Kernels are device code: they have no
 * errno to set and, as on every GPU, floating-point operations do not trap,
 * which lets the compiler vectorise sqrt and conditional arithmetic. */
static const char *const amp__cpu_flags[] = {"-std=c++17",      "-O3",   "-fPIC", "-shared", "-fvisibility=hidden",
                                             "-fno-math-errno", "-fno-trapping-math", "-x", "c++"};
#define AMP__CPU_NFLAGS (sizeof amp__cpu_flags / sizeof amp__cpu_flags[0])
/* Output kept from a child (the head; the rest is drained and dropped). */
#define AMP__CPU_LOG_MAX (48 * 1024)
/* The deadline of a job that names none (the core always does: its
 * AMP_COMPILE_TIMEOUT default is the same 600 s). */
#define AMP__CPU_TIMEOUT_DEFAULT 600
/* Bump when the loop transformation's output changes (cache tag). */
#define AMP__CPU_LOOPS_VERSION 2
/* Temporary directories: <TMPDIR>/hipamp-cpu-<pid>-XXXXXX, so that those of
 * dead processes can be recognised and swept. */
#define AMP__CPU_TMP_PREFIX "hipamp-cpu-"

/* ------------------------------------------------------ child processes */

#ifdef __linux__
/* The guardian's SIGTERM (its parent died: PR_SET_PDEATHSIG): end the whole
 * process group, the compiler and everything it started, and itself. */
static void amp__cpu_guardian_die(int sig)
{
    (void)sig;
    kill(0, SIGKILL);
}
#endif

static void amp__cpu_describe_exit(int ws, char *buf, size_t cap)
{
    /* The guardian reports a compiler killed by signal N as exit 128 + N. */
    if (WIFEXITED(ws) && WEXITSTATUS(ws) > 128) snprintf(buf, cap, "killed by signal %d", WEXITSTATUS(ws) - 128);
    else if (WIFEXITED(ws) && WEXITSTATUS(ws) == 127) snprintf(buf, cap, "could not be started (exit status 127)");
    else if (WIFEXITED(ws)) snprintf(buf, cap, "exit status %d", WEXITSTATUS(ws));
    else if (WIFSIGNALED(ws)) snprintf(buf, cap, "killed by signal %d", WTERMSIG(ws));
    else snprintf(buf, cap, "wait status %#x", ws);
}

/* Run argv[0] (a path) with envp, stdin from /dev/null and stdout + stderr
 * captured into *out (malloc'ed, NUL-terminated; the head of it). A
 * guardian child leads a new process group holding the program: when the
 * deadline (monotonic ns, 0: none) passes the whole group is killed and
 * *timed_out set; when this process dies the guardian kills the group. Only
 * async-signal-safe calls run between fork and exec. *wstatus is the
 * guardian's wait status (the program's exit status, or 128 + signal).
 * Fails only when the child could not be started. Blocks until the program
 * ends or the deadline. */
static amp_status amp__cpu_run_capture(char *const argv[], char *const envp[], uint64_t deadline, char **out,
                                       int *wstatus, bool *timed_out)
{
    amp_status st = AMP_OK;
    int fds[2] = {-1, -1};
    char *buf = NULL;
    size_t len = 0;
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
    if (pipe2(fds, O_CLOEXEC) != 0) {
        st = amp__fail(AMP_ERROR_DEVICE, "CPU accelerator: pipe: %s", strerror(errno));
        goto fail;
    }
    pid_t host = getpid();
    g = fork();
    if (g < 0) {
        st = amp__fail(AMP_ERROR_UNSUPPORTED, "cannot run %s: fork: %s", argv[0], strerror(errno));
        goto fail;
    }
    if (g == 0) {
        /* Guardian. */
        setpgid(0, 0);
        sigset_t none;
        sigemptyset(&none);
#ifdef __linux__
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = amp__cpu_guardian_die;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGTERM, &sa, NULL);
        prctl(PR_SET_PDEATHSIG, SIGTERM);
#endif
        sigprocmask(SIG_SETMASK, &none, NULL);
        if (getppid() != host) _exit(127); /* the host died before prctl */
        int nul = open("/dev/null", O_RDONLY);
        if (nul < 0 || dup2(nul, 0) < 0 || dup2(fds[1], 1) < 0 || dup2(fds[1], 2) < 0) _exit(127);
        pid_t c = fork();
        if (c == 0) {
            struct sigaction dfl;
            memset(&dfl, 0, sizeof dfl);
            dfl.sa_handler = SIG_DFL;
            sigaction(SIGTERM, &dfl, NULL);
            execve(argv[0], argv, envp);
            _exit(127);
        }
        if (c < 0) _exit(127);
        int ws = 0;
        while (waitpid(c, &ws, 0) < 0)
            if (errno != EINTR) _exit(127);
        _exit(WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + (WIFSIGNALED(ws) ? WTERMSIG(ws) : 0));
    }
    /* Both sides set the group, so a kill below always finds it. */
    setpgid(g, g);
    close(fds[1]);
    fds[1] = -1;
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
        struct pollfd pfd = {fds[0], POLLIN, 0};
        int pr = poll(&pfd, 1, wait_ms);
        if (pr < 0 && errno == EINTR) continue;
        if (pr < 0) break;
        if (pr == 0) continue; /* re-check the deadline */
        char chunk[4096];
        ssize_t n = read(fds[0], chunk, sizeof chunk);
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (n <= 0) break;
        size_t take = (size_t)n;
        if (take > AMP__CPU_LOG_MAX - len) take = AMP__CPU_LOG_MAX - len;
        memcpy(buf + len, chunk, take);
        len += take;
    }
    if (*timed_out) {
        kill(-g, SIGKILL);
        kill(g, SIGKILL);
    }
    buf[len] = 0;
    while (waitpid(g, wstatus, 0) < 0) {
        if (errno != EINTR) {
            st = amp__fail(AMP_ERROR_DEVICE, "CPU accelerator: waitpid(%s): %s", argv[0], strerror(errno));
            goto fail;
        }
    }
    /* A program that left children behind (a daemonised helper) goes too. */
    kill(-g, SIGKILL);
    *out = buf;
    buf = NULL;
fail:
    if (fds[0] >= 0) close(fds[0]);
    if (fds[1] >= 0) close(fds[1]);
    free(buf);
    return st;
}

/* ------------------------------------------------------ the compiler */

static bool amp__cpu_is_exec(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && access(path, X_OK) == 0;
}

/* Resolve a program name through PATH; malloc'ed path or NULL. */
static char *amp__cpu_which(const char *name)
{
    if (strchr(name, '/')) return amp__cpu_is_exec(name) ? amp__strdup(name) : NULL;
    const char *path = amp__env("PATH");
    if (!path) path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        const char *colon = strchr(path, ':');
        size_t n = colon ? (size_t)(colon - path) : strlen(path);
        char *cand = malloc(n + strlen(name) + 3);
        if (!cand) return NULL;
        if (n == 0) sprintf(cand, "./%s", name);
        else sprintf(cand, "%.*s/%s", (int)n, path, name);
        if (amp__cpu_is_exec(cand)) return cand;
        free(cand);
        path += n + (colon ? 1 : 0);
    }
    return NULL;
}

/* What -march=native resolves to is a function of the compiler (in the tag
 * already) and of the processor's identity and features, which
 * /proc/cpuinfo lists: hash the first processor's identifying lines. 0 when
 * they cannot be read (then no -march=native: a cache shared between
 * machines must never hand one the other's instructions). */
static uint64_t amp__cpu_identity(void)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return 0;
    static const char *const keys[] = {"vendor_id",     "cpu family",  "model",       "model name", "stepping",
                                       "flags",         "Features",    "CPU implementer", "CPU architecture",
                                       "CPU variant",   "CPU part",    "CPU revision", "isa",       "uarch"};
    uint64_t h = AMP__FNV_SEED;
    int seen = 0;
    char line[8192];
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '\n' && seen) break; /* end of the first processor */
        char *colon = strchr(line, ':');
        if (!colon) continue;
        size_t kl = (size_t)(colon - line);
        while (kl && (line[kl - 1] == ' ' || line[kl - 1] == '\t')) --kl;
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; ++i)
            if (strlen(keys[i]) == kl && !strncmp(line, keys[i], kl)) {
                h = amp__fnv1a(h, line, strlen(line));
                seen++;
            }
    }
    fclose(f);
    return seen >= 2 ? h : 0;
}

void amp__cpu_find_compiler(amp__cpu_device *d)
{
    const char *var = "AMP_CXX", *spec = amp__env("AMP_CXX");
    char *words = NULL, *version = NULL;
    char **argv = NULL;
    if (!spec) {
        var = "CXX";
        spec = amp__env("CXX");
    }
    if (!spec) {
        var = NULL;
        spec = "c++";
    }
    d->available = false;
    if (var) snprintf(d->cxx_text, sizeof d->cxx_text, "%s=%s", var, spec);
    else snprintf(d->cxx_text, sizeof d->cxx_text, "'c++' on PATH (AMP_CXX and CXX unset)");

    /* "ccache g++ -m64": program, then extra words passed before our flags. */
    size_t nwords = 0;
    if (amp__split_options(spec, 0, 1, &argv, &nwords, &words) != AMP_OK) {
        snprintf(d->reason, sizeof d->reason, "no memory to look for a C++ compiler");
        goto done;
    }
    int n = (int)nwords;
    if (n == 0) {
        snprintf(d->reason, sizeof d->reason, "no C++ compiler: %.200s is blank", d->cxx_text);
        goto done;
    }
    char *prog = amp__cpu_which(argv[0]);
    if (!prog) {
        snprintf(d->reason, sizeof d->reason,
                 "no C++ compiler: %.180s not found (set AMP_CXX or CXX to a C++17 compiler)", d->cxx_text);
        goto done;
    }
    d->cxx = calloc((size_t)n + 1, sizeof *d->cxx);
    if (!d->cxx) {
        free(prog);
        snprintf(d->reason, sizeof d->reason, "no memory to look for a C++ compiler");
        goto done;
    }
    d->cxx[0] = prog;
    for (int i = 1; i < n; ++i) d->cxx[i] = amp__strdup(argv[i]);
    d->ncxx = n;

    /* It must run: ask for its version, which also keys the cache. */
    char **vargv = calloc((size_t)n + 2, sizeof *vargv);
    int ws = 0;
    bool late = false;
    if (!vargv) {
        snprintf(d->reason, sizeof d->reason, "no memory to look for a C++ compiler");
        goto done;
    }
    for (int i = 0; i < n; ++i) vargv[i] = d->cxx[i];
    vargv[n] = "--version";
    amp_status st = amp__cpu_run_capture(vargv, environ, amp__now_ns() + 60ull * 1000000000ull, &version, &ws, &late);
    free(vargv);
    if (st != AMP_OK || late || !WIFEXITED(ws) || WEXITSTATUS(ws) != 0) {
        char how[64] = "";
        if (st == AMP_OK) {
            if (late) snprintf(how, sizeof how, "no answer to --version within 60 s");
            else amp__cpu_describe_exit(ws, how, sizeof how);
        }
        snprintf(d->reason, sizeof d->reason, "no C++ compiler: %.80s (%.60s) cannot run: %.80s",
                 d->cxx_text, prog, st != AMP_OK ? amp_last_error() : how);
        goto done;
    }

    /* -march=native where the compilers understand it and the processor
     * can be identified; AMP_CPU_NATIVE=0 turns it off. */
    uint64_t ident = 0;
    bool native_ok = amp__env_flag("AMP_CPU_NATIVE", true);
    if (native_ok && (!strcmp(d->machine, "x86_64") || !strcmp(d->machine, "aarch64"))) ident = amp__cpu_identity();
    d->native = ident != 0;
    if (d->native && !strcmp(d->machine, "x86_64")) ident = amp__fnv1a(ident, "vw256", 5);

    /* The loop transformation: which libclang (its file's identity stands
     * for its version without loading it). */
    char clang_path[1024], clang_tag[1200];
    amp__clang_locate(clang_path, sizeof clang_path, clang_tag, sizeof clang_tag);

    uint64_t vh = amp__fnv1a(AMP__FNV_SEED, version, strlen(version));
    uint64_t ph = amp__fnv1a(AMP__FNV_SEED, amp__embedded_cpu_prelude, strlen(amp__embedded_cpu_prelude));
    uint64_t fh = AMP__FNV_SEED;
    for (size_t i = 0; i < AMP__CPU_NFLAGS; ++i)
        fh = amp__fnv1a(fh, amp__cpu_flags[i], strlen(amp__cpu_flags[i]) + 1);
    /* The C library's headers are not keyed one by one (lib/backend.h):
     * its version stands for them. */
    char libc[64] = "unknown";
#ifdef _CS_GNU_LIBC_VERSION
    if (confstr(_CS_GNU_LIBC_VERSION, libc, sizeof libc) == 0) snprintf(libc, sizeof libc, "unknown");
#endif
    int k = snprintf(d->cache_tag, sizeof d->cache_tag, "cpu;abi=%d;libc=%s;cxx=", AMP__CPU_ABI, libc);
    for (int i = 0; i < n && k < (int)sizeof d->cache_tag; ++i)
        k += snprintf(d->cache_tag + k, sizeof d->cache_tag - (size_t)k, "%s%s", i ? " " : "", d->cxx[i]);
    if (k < (int)sizeof d->cache_tag)
        snprintf(d->cache_tag + k, sizeof d->cache_tag - (size_t)k,
                 ";version=%016llx;flags=%016llx;debug=%d;arch=%s;native=%016llx;prelude=%016llx;"
                 "loops=%d:%s:%.600s",
                 (unsigned long long)vh, (unsigned long long)fh, d->debug ? 1 : 0, d->machine,
                 (unsigned long long)ident, (unsigned long long)ph, AMP__CPU_LOOPS_VERSION,
                 d->tiled == AMP__CPU_TILED_FIBERS ? "off" : "on", clang_tag);
    d->available = true;
done:
    free(version);
    free(words);
    free(argv);
}

/* ------------------------------------------ default include directories */

static pthread_mutex_t amp__cpu_sys_lock = PTHREAD_MUTEX_INITIALIZER; /* leaf: guards the list's making */
static amp__sys_dir *amp__cpu_sys;
static bool amp__cpu_sys_done;

/* What a default directory holds (lib/backend.h): /usr/local/include is for
 * locally installed software, /usr/include and its multiarch directory
 * (/usr/include/x86_64-linux-gnu) the C library's; the rest (libstdc++'s,
 * the compiler's builtin headers) the compiler's own. */
static int amp__cpu_dir_kind(const char *real)
{
    if (!strcmp(real, "/usr/local/include") || !strncmp(real, "/usr/local/include/", 19)) return AMP__DIR_LOCAL;
    if (!strcmp(real, "/usr/include")) return AMP__DIR_LIBC;
    if (!strncmp(real, "/usr/include/", 13) && !strchr(real + 13, '/') && strcmp(real + 13, "c++"))
        return AMP__DIR_LIBC;
    return AMP__DIR_COMPILER;
}

/* The compiler's default #include <...> directories, in its order, as it
 * lists them itself (-E -v, between "search starts here" and "End of search
 * list"), run without the include-path variables the scan reads itself
 * (they would be listed as the compiler's own; so would directories named
 * in AMP_CXX, which are taken as LOCAL). Made on first use and kept;
 * an empty list when the compiler cannot say (then every system header it
 * reads is checked as the user's are). */
const amp__sys_dir *amp__cpu_system_dirs(amp__cpu_device *d)
{
    static const amp__sys_dir none = {NULL, 0};
    pthread_mutex_lock(&amp__cpu_sys_lock);
    if (amp__cpu_sys_done || !d->available) goto out;
    amp__cpu_sys_done = true;
    static const char *const drop[] = {"CPATH=", "C_INCLUDE_PATH=", "CPLUS_INCLUDE_PATH=", "OBJC_INCLUDE_PATH=",
                                       "OBJCPLUS_INCLUDE_PATH="};
    size_t nenv = 0, ne = 0;
    while (environ[nenv]) nenv++;
    char **envp = calloc(nenv + 1, sizeof *envp), **argv = calloc((size_t)d->ncxx + 6, sizeof *argv);
    char *text = NULL;
    amp__sys_dir *list = NULL;
    if (!envp || !argv) goto done;
    for (size_t i = 0; i < nenv; ++i) {
        bool keep = true;
        for (size_t j = 0; j < sizeof drop / sizeof drop[0]; ++j)
            if (!strncmp(environ[i], drop[j], strlen(drop[j]))) keep = false;
        if (keep) envp[ne++] = environ[i];
    }
    int n = 0;
    for (int i = 0; i < d->ncxx; ++i) argv[n++] = d->cxx[i];
    argv[n++] = "-x";
    argv[n++] = "c++";
    argv[n++] = "-E";
    argv[n++] = "-v";
    argv[n++] = "/dev/null";
    int ws = 0;
    bool late = false;
    if (amp__cpu_run_capture(argv, envp, amp__now_ns() + 60ull * 1000000000ull, &text, &ws, &late) != AMP_OK ||
        late || !WIFEXITED(ws) || WEXITSTATUS(ws) != 0)
        goto done;
    const char *p = strstr(text, "#include <...> search starts here:");
    size_t count = 0, cap = 0;
    for (p = p ? strchr(p, '\n') : NULL; p && p[1] == ' ';) {
        const char *line = p + 2, *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        p = nl;
        char dir[PATH_MAX], real[PATH_MAX];
        if (len >= sizeof dir) continue;
        memcpy(dir, line, len);
        dir[len] = '\0';
        char *note = strstr(dir, " (framework directory)");
        if (note) *note = '\0';
        if (!realpath(dir, real)) continue;
        int kind = amp__cpu_dir_kind(real);
        /* Directories named by AMP_CXX's own words are the user's. */
        for (int w = 1; w < d->ncxx && kind != AMP__DIR_LOCAL; ++w) {
            static const char *const flags[] = {"-I", "-isystem", "-idirafter", "-iquote"};
            for (size_t f = 0; f < sizeof flags / sizeof flags[0]; ++f) {
                size_t fl = strlen(flags[f]);
                if (strncmp(d->cxx[w], flags[f], fl)) continue;
                const char *arg = d->cxx[w][fl] ? d->cxx[w] + fl : w + 1 < d->ncxx ? d->cxx[w + 1] : NULL;
                char named[PATH_MAX];
                if (arg && realpath(arg, named) && !strcmp(named, real)) kind = AMP__DIR_LOCAL;
            }
        }
        if (count + 2 > cap) {
            size_t nc = cap ? 2 * cap : 16;
            amp__sys_dir *g = realloc(list, nc * sizeof *g);
            if (!g) break;
            list = g;
            cap = nc;
        }
        char *copy = amp__strdup(real);
        if (!copy) break;
        list[count++] = (amp__sys_dir){copy, kind};
        list[count] = none;
    }
    amp__cpu_sys = list;
    list = NULL;
done:
    free(list);
    free(text);
    free(envp);
    free(argv);
out:
    pthread_mutex_unlock(&amp__cpu_sys_lock);
    return amp__cpu_sys ? amp__cpu_sys : &none;
}

/* ------------------------------------------------------------- files */

static amp_status amp__cpu_write_file(const char *path, const char *const *parts, size_t nparts)
{
    amp_status st = AMP_OK;
    FILE *f = fopen(path, "wb");
    if (!f) return amp__fail(AMP_ERROR_DEVICE, "CPU accelerator: cannot create %s: %s", path, strerror(errno));
    for (size_t i = 0; i < nparts; ++i)
        if (parts[i] && fputs(parts[i], f) == EOF) {
            st = amp__fail(AMP_ERROR_DEVICE, "CPU accelerator: cannot write %s: %s", path, strerror(errno));
            break;
        }
    if (fclose(f) != 0 && st == AMP_OK)
        st = amp__fail(AMP_ERROR_DEVICE, "CPU accelerator: cannot write %s: %s", path, strerror(errno));
    return st;
}

/* File name in the build directory dirfd (shown as path): the compiler's
 * output, read through the directory this process made and holds open, so
 * that what it reads is what was written there, whatever became of the
 * directory's name (mode 0700: what is in it is this user's, whatever
 * the umask made of its files' modes). */
static amp_status amp__cpu_read_file(int dirfd, const char *name, const char *path, void **data, size_t *size)
{
    amp_status st = AMP_OK;
    char *buf = NULL;
    FILE *f = NULL;
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 || !(f = fdopen(fd, "rb"))) {
        st = amp__fail(AMP_ERROR_COMPILE, "CPU accelerator: the compiler wrote no %s: %s", path, strerror(errno));
        if (fd >= 0) close(fd);
        return st;
    }
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_uid != geteuid()) {
        st = amp__fail(AMP_ERROR_COMPILE, "CPU accelerator: %s is not a regular file of this user's: nothing built "
                       "is loaded", path);
        goto fail;
    }
    if (sb.st_size <= 0) {
        st = amp__fail(AMP_ERROR_COMPILE, "CPU accelerator: the compiler wrote an empty %s", path);
        goto fail;
    }
    if (!(buf = malloc((size_t)sb.st_size + 1))) {
        st = amp__fail(AMP_ERROR_OUT_OF_MEMORY, "CPU accelerator: no memory for a %lld-byte file",
                       (long long)sb.st_size);
        goto fail;
    }
    if (fread(buf, 1, (size_t)sb.st_size, f) != (size_t)sb.st_size) {
        st = amp__fail(AMP_ERROR_COMPILE, "CPU accelerator: cannot read %s", path);
        goto fail;
    }
    buf[sb.st_size] = 0;
    *data = buf;
    *size = (size_t)sb.st_size;
    buf = NULL;
fail:
    free(buf);
    fclose(f);
    return st;
}

/* Remove directory fd's contents (no symlink is followed), depth-limited. */
static void amp__cpu_empty_dir(int fd, int depth)
{
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        if (unlinkat(dirfd(d), e->d_name, 0) == 0) continue;
        if ((errno == EISDIR || errno == EPERM) && depth > 0) {
            int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub >= 0) amp__cpu_empty_dir(sub, depth - 1);
            unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR);
        }
    }
    closedir(d);
}

static void amp__cpu_remove_dir(const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) amp__cpu_empty_dir(fd, 4);
    rmdir(path);
}

static const char *amp__cpu_tmp_root(void)
{
    const char *tmp = amp__env("TMPDIR");
    return tmp ? tmp : "/tmp";
}

/* Whether root, the directory builds are made in, keeps them ours: someone
 * who may rename or remove entries there (its owner, or anyone who may
 * write it when it has no sticky bit) could put a directory of theirs in
 * place of ours, and the compiler, which is handed paths, would work in
 * it. AMP_ERROR_COMPILE naming root and why, else AMP_OK (a root that
 * cannot be opened is left to mkdtemp to report). */
static amp_status amp__cpu_tmp_check(const char *root)
{
    int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return AMP_OK;
    struct stat sb;
    const char *why = NULL;
    char owner[64] = "";
    if (fstat(fd, &sb) != 0) {
        why = "cannot be examined";
    } else if (sb.st_uid != geteuid() && sb.st_uid != 0) {
        snprintf(owner, sizeof owner, "is owned by uid %d, another user", (int)sb.st_uid);
        why = owner;
    } else if ((sb.st_mode & (S_IWGRP | S_IWOTH)) && !(sb.st_mode & S_ISVTX)) {
        why = sb.st_mode & S_IWOTH ? "is writable by every user and has no sticky bit"
                                   : "is writable by its group and has no sticky bit";
    }
    close(fd);
    if (!why) return AMP_OK;
    return amp__fail(AMP_ERROR_COMPILE,
                     "CPU accelerator: the temporary directory %s (TMPDIR) %s (mode %04o), so another user could put "
                     "their files in place of the compiler's output; nothing is compiled there: set TMPDIR to a "
                     "directory only you and root can change, or one with the sticky bit (as /tmp)",
                     root, why, (unsigned)(sb.st_mode & 07777));
}

/* Directories (and module files) of processes that died mid-compile: named
 * hipamp-cpu-<pid>-..., owned by this user, their pid gone. */
static void amp__cpu_sweep(void)
{
    const char *root = amp__cpu_tmp_root();
    DIR *d = opendir(root);
    if (!d) return;
    size_t pl = strlen(AMP__CPU_TMP_PREFIX);
    pid_t self = getpid();
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, AMP__CPU_TMP_PREFIX, pl)) continue;
        char *end = NULL;
        long pid = strtol(e->d_name + pl, &end, 10);
        if (end == e->d_name + pl || *end != '-' || pid <= 0 || pid == self) continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;
        struct stat sb;
        if (fstatat(dirfd(d), e->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0 || sb.st_uid != geteuid()) continue;
        if (S_ISDIR(sb.st_mode)) {
            int fd = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (fd >= 0) amp__cpu_empty_dir(fd, 4);
            unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR);
        } else if (S_ISREG(sb.st_mode)) {
            unlinkat(dirfd(d), e->d_name, 0);
        }
    }
    closedir(d);
}

static pthread_once_t amp__cpu_sweep_once = PTHREAD_ONCE_INIT;

/* ------------------------------------------------------- dependencies */

/* The files a make-style dependency file lists after its target, as
 * absolute paths one a line (malloc'ed; "" when none), skipping skip. */
static char *amp__cpu_deps(const char *text, const char *skip)
{
    size_t cap = 256, n = 0;
    char *out = malloc(cap);
    if (!out) return NULL;
    out[0] = 0;
    const char *p = strchr(text, ':');
    if (!p) return out;
    p++;
    char word[PATH_MAX];
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || (p[0] == '\\' && (p[1] == '\n' || p[1] == '\r')))
            p += p[0] == '\\' ? 2 : 1;
        if (!*p) break;
        size_t w = 0;
        while (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') {
            if (p[0] == '\\' && (p[1] == ' ' || p[1] == '#' || p[1] == '\\')) p++;
            else if (p[0] == '$' && p[1] == '$') p++;
            else if (p[0] == '\\' && (p[1] == '\n' || p[1] == '\r')) break;
            if (w + 1 < sizeof word) word[w++] = *p;
            p++;
        }
        word[w] = 0;
        if (!w || !strcmp(word, skip) || word[w - 1] == ':') continue;
        char abs[PATH_MAX];
        if (!realpath(word, abs)) {
            if (word[0] == '/') snprintf(abs, sizeof abs, "%s", word);
            else {
                char cwd[PATH_MAX];
                if (!getcwd(cwd, sizeof cwd)) cwd[0] = 0;
                snprintf(abs, sizeof abs, "%.2000s/%.2000s", cwd, word);
            }
        }
        size_t l = strlen(abs);
        if (n + l + 2 > cap) {
            while (n + l + 2 > cap) cap *= 2;
            char *q = realloc(out, cap);
            if (!q) {
                free(out);
                return NULL;
            }
            out = q;
        }
        memcpy(out + n, abs, l);
        n += l;
        out[n++] = '\n';
        out[n] = 0;
    }
    return out;
}

/* ------------------------------------------------------------- compile */

/* The options libclang needs to see the same program: language, macros and
 * include paths (not code generation, which it need not understand). */
static int amp__cpu_clang_args(char **opts, size_t from, size_t to, const char **args, int cap)
{
    int n = 0;
    for (size_t i = from; i < to && n + 2 < cap; ++i) {
        const char *o = opts[i];
        static const char *const with_arg[] = {"-D", "-U", "-I", "-iquote", "-isystem", "-idirafter", "-include",
                                               "-imacros"};
        bool taken = false;
        for (size_t j = 0; j < sizeof with_arg / sizeof with_arg[0] && !taken; ++j) {
            size_t l = strlen(with_arg[j]);
            if (!strcmp(o, with_arg[j]) && i + 1 < to) {
                args[n++] = o;
                args[n++] = opts[++i];
                taken = true;
            } else if (!strncmp(o, with_arg[j], l) && o[l] && l <= 2) {
                args[n++] = o;
                taken = true;
            }
        }
        if (!taken && !strncmp(o, "-std=", 5)) args[n++] = o;
    }
    return n;
}

/* Where the user's own text starts in the assembled unit (after the common
 * prelude and the device library; 0 when the prelude is not found): the
 * loop transformation trusts what comes before and analyses what follows. */
static size_t amp__cpu_library_end(const char *source)
{
    const char *pre = strstr(source, amp__embedded_prelude);
    if (!pre) return 0;
    const char *end = pre + strlen(amp__embedded_prelude);
    const char *lib = amp__embedded_device_lib[0] ? strstr(end, amp__embedded_device_lib) : NULL;
    if (lib) end = lib + strlen(amp__embedded_device_lib);
    return (size_t)(end - source);
}

static const char *amp__cpu_user_part(const char *source) { return source + amp__cpu_library_end(source); }

/* The first line of a compiler log that says "error". */
static void amp__cpu_first_error(const char *log, char *out, size_t cap)
{
    const char *p = log;
    out[0] = 0;
    while (p && *p) {
        const char *nl = strchr(p, '\n');
        size_t l = nl ? (size_t)(nl - p) : strlen(p);
        if (memmem(p, l, "error", 5)) {
            snprintf(out, cap, "%.*s", (int)(l > 300 ? 300 : l), p);
            return;
        }
        p = nl ? nl + 1 : NULL;
    }
}

/* A module note: why no kernel of it has a loop version. */
static char *amp__cpu_note_source(const char *note)
{
    size_t n = strlen(note);
    char *s = malloc(n * 4 + 160);
    if (!s) return NULL;
    size_t k = (size_t)sprintf(s, "\nextern \"C\" __attribute__((visibility(\"default\"))) const char "
                                  "amp__cpu_loops_note[] = \"");
    for (const char *p = note; *p; ++p) {
        if (*p == '"' || *p == '\\') s[k++] = '\\';
        s[k++] = (unsigned char)*p < 32 ? ' ' : *p;
    }
    strcpy(s + k, "\";\n");
    return s;
}

amp_status amp__cpu_compile(amp__cpu_device *d, const amp__compile_job *job, amp__compile_output *out)
{
    amp_status st = AMP_OK;
    const char *source = job->source, *source_name = job->source_name ? job->source_name : "kernel source";
    char dir[PATH_MAX] = "", src[PATH_MAX + 32] = "", so[PATH_MAX + 32] = "", dep[PATH_MAX + 32] = "",
         tmpenv[PATH_MAX + 16] = "";
    char *opts = NULL, *log = NULL, *loops = NULL, *note_src = NULL, *dep_text = NULL;
    amp__cpu_loops_result lres = {0};
    bool have_loops = false;
    char **argv = NULL, **envp = NULL;
    char note[512] = "";
    int dirfd = -1;
    out->bin = NULL;
    out->bin_size = 0;
    out->deps = NULL;
    out->no_store[0] = 0;
    if (!d->available) return amp__fail(AMP_ERROR_UNSUPPORTED, "CPU accelerator cannot compile: %s", d->reason);
    if (!source) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "CPU accelerator: source is NULL");

    /* The deadline: the core passes AMP_COMPILE_TIMEOUT as job->timeout_s
     * (0 only from a caller that set none). */
    unsigned timeout = job->timeout_s ? job->timeout_s : AMP__CPU_TIMEOUT_DEFAULT;
    uint64_t deadline = amp__now_ns() + (uint64_t)timeout * 1000000000ull;

    if ((st = amp__cpu_tmp_check(amp__cpu_tmp_root())) != AMP_OK) return st;
    pthread_once(&amp__cpu_sweep_once, amp__cpu_sweep);
    snprintf(dir, sizeof dir, "%s/" AMP__CPU_TMP_PREFIX "%ld-XXXXXX", amp__cpu_tmp_root(), (long)getpid());
    if (!mkdtemp(dir)) {
        st = amp__fail(AMP_ERROR_DEVICE, "CPU accelerator: cannot create a temporary directory %s: %s",
                       dir, strerror(errno));
        dir[0] = 0;
        goto fail;
    }
    /* Held from here: the outputs are read through it (amp__cpu_read_file). */
    struct stat dsb;
    if ((dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 || fstat(dirfd, &dsb) != 0 ||
        dsb.st_uid != geteuid() || (dsb.st_mode & 077)) {
        st = amp__fail(AMP_ERROR_COMPILE, "CPU accelerator: the temporary directory %s was replaced before it could "
                       "be opened", dir);
        dir[0] = 0; /* not ours to remove */
        goto fail;
    }
    snprintf(src, sizeof src, "%s/kernel.cpp", dir);
    snprintf(so, sizeof so, "%s/kernel.so", dir);
    snprintf(dep, sizeof dep, "%s/kernel.d", dir);

    /* The compiler's environment: its own temporary files go into our
     * directory, which is removed whatever happens. */
    size_t nenv = 0;
    while (environ[nenv]) nenv++;
    if (!(envp = calloc(nenv + 2, sizeof *envp))) {
        st = amp__fail(AMP_ERROR_OUT_OF_MEMORY, "CPU accelerator: no memory for the compiler's environment");
        goto fail;
    }
    snprintf(tmpenv, sizeof tmpenv, "TMPDIR=%s", dir);
    size_t ne = 0;
    envp[ne++] = tmpenv;
    for (size_t i = 0; i < nenv; ++i)
        if (strncmp(environ[i], "TMPDIR=", 7)) envp[ne++] = environ[i];
    envp[ne] = NULL;

    /* argv: compiler, our flags, [-march=native], [debug], [-iquote dir],
     * the user's options (they may override: -O0, -g), then 6 words for the
     * outputs and the input. */
    size_t nfixed = (size_t)d->ncxx + AMP__CPU_NFLAGS + 5, nargv = 0;
    if ((st = amp__split_options(job->options, nfixed, 8, &argv, &nargv, &opts)) != AMP_OK) goto fail;
    size_t n = 0;
    for (int i = 0; i < d->ncxx; ++i) argv[n++] = d->cxx[i];
    for (size_t i = 0; i < AMP__CPU_NFLAGS; ++i) argv[n++] = (char *)amp__cpu_flags[i];
    if (d->native) {
        argv[n++] = "-march=native";
        /* x86: 256-bit vectors even where 512-bit ones exist (as LLVM does
         * for those parts): user arrays from malloc are 16-byte aligned, and
         * unaligned 512-bit accesses split a cache line three times in four
         * (a memory-bound kernel ran 30% slower). */
        if (!strcmp(d->machine, "x86_64")) argv[n++] = "-mprefer-vector-width=256";
    }
    if (d->debug) argv[n++] = "-DAMP_DEBUG_CHECKS";
    if (job->source_dir) {
        argv[n++] = "-iquote";
        argv[n++] = (char *)job->source_dir;
    }
    /* the user's words follow ours directly */
    memmove(argv + n, argv + nfixed, (nargv - nfixed) * sizeof *argv);
    size_t user_from = n, user_to = n + (nargv - nfixed);

    /* The loop transformation, for sources with tiled kernels. */
    const char *user = amp__cpu_user_part(source);
    const char *parts[2] = {source, "\n"};
    if ((st = amp__cpu_write_file(src, parts, 2)) != AMP_OK) goto fail;
    if (d->tiled == AMP__CPU_TILED_FIBERS) {
        snprintf(note, sizeof note, "fibers: AMP_CPU_TILED=fibers");
    } else if (strstr(user, "AMP_TILED_KERNEL") || strstr(user, "tiled_index")) {
        const char *cargs[96];
        int nc = 0;
        cargs[nc++] = "-x";
        cargs[nc++] = "c++";
        cargs[nc++] = "-std=c++17";
        cargs[nc++] = "-w";
        if (d->native) cargs[nc++] = "-march=native";
        if (d->debug) cargs[nc++] = "-DAMP_DEBUG_CHECKS";
        if (job->source_dir) {
            cargs[nc++] = "-iquote";
            cargs[nc++] = job->source_dir;
        }
        nc += amp__cpu_clang_args(argv, user_from, user_to, cargs + nc, 96 - nc);
        amp__cpu_loops_job lj = {source, strlen(source), amp__cpu_library_end(source), src, cargs, nc};
        amp__cpu_loops_outcome how = {0};
        have_loops = amp__cpu_loops_run(&lj, deadline, &lres, note, sizeof note, &how);
        if (how.late && amp__now_ns() >= deadline) {
            st = amp__fail(AMP_ERROR_COMPILE,
                           "compiling %s for the CPU accelerator timed out after %u seconds "
                           "(AMP_COMPILE_TIMEOUT) in the loop transformation (reading its includes?)",
                           source_name, timeout);
            goto fail;
        }
        /* Its kernels run as fibers in this build only: a later process
         * tries the transformation again. */
        if (how.transient)
            snprintf(out->no_store, sizeof out->no_store,
                     "%.160s: its tiled kernels run as fibers in this build, which is not stored",
                     strncmp(note, "fibers: ", 8) ? note : note + 8);
    } else {
        snprintf(note, sizeof note, "fibers: no tiled kernel");
    }

    /* Up to three tries: every loop version; without those the compiler
     * rejected; without any. A build the fiber path can do never fails
     * because of a loop version. */
    for (int attempt = 0;; ++attempt) {
        free(loops);
        loops = NULL;
        if (have_loops) {
            if (!(loops = amp__cpu_loops_assemble(source, &lres))) {
                st = amp__fail(AMP_ERROR_OUT_OF_MEMORY, "CPU accelerator: no memory for the loop versions");
                goto fail;
            }
            const char *lp[2] = {loops, "\n"};
            if ((st = amp__cpu_write_file(src, lp, 2)) != AMP_OK) goto fail;
            /* A debugging aid (README): the source with its loop versions. */
            const char *dump = amp__env("AMP_CPU_DUMP_LOOPS");
            if (dump) (void)amp__cpu_write_file(dump, lp, 1);
        } else {
            free(note_src);
            note_src = note[0] ? amp__cpu_note_source(note) : NULL;
            const char *lp[3] = {source, "\n", note_src};
            if ((st = amp__cpu_write_file(src, lp, 3)) != AMP_OK) goto fail;
        }
        size_t m = user_to;
        argv[m++] = "-MD"; /* every file it reads, system headers too (lib/program.c checks them) */
        argv[m++] = "-MF";
        argv[m++] = dep;
        argv[m++] = "-o";
        argv[m++] = so;
        argv[m++] = src;
        argv[m] = NULL;
        int ws = 0;
        bool late = false;
        free(log);
        log = NULL;
        if ((st = amp__cpu_run_capture(argv, envp, deadline, &log, &ws, &late)) != AMP_OK) {
            st = amp__fail(AMP_ERROR_UNSUPPORTED, "CPU accelerator: %s", amp_last_error());
            goto fail;
        }
        if (late) {
            st = amp__fail(AMP_ERROR_COMPILE, "compiling %s for the CPU accelerator timed out after %u seconds "
                                              "(AMP_COMPILE_TIMEOUT); the compiler was stopped",
                           source_name, timeout);
            goto fail;
        }
        if (WIFEXITED(ws) && WEXITSTATUS(ws) == 0) break;
        if (have_loops) {
            /* Turn off the loop versions the errors are in ("hipamp loop
             * version of NAME:line: error"), or all of them. */
            int turned = 0;
            for (int i = 0; i < lres.n; ++i) {
                amp__cpu_loops_kernel *rk = &lres.k[i];
                if (!rk->loops || rk->off) continue;
                char tag[300];
                snprintf(tag, sizeof tag, "hipamp loop version of %s:", rk->name);
                const char *hit = strstr(log, tag);
                if (!hit && attempt == 0) continue;
                char first[320] = "";
                amp__cpu_first_error(hit ? hit : log, first, sizeof first);
                rk->off = true;
                snprintf(rk->off_why, sizeof rk->off_why, "the loop version did not compile: %.200s", first);
                turned++;
            }
            if (turned) continue;
            /* the error is not in a loop version: the user's, reported below
             * from a build without them */
            for (int i = 0; i < lres.n; ++i) lres.k[i].off = true;
            have_loops = false;
            if (!note[0]) snprintf(note, sizeof note, "fibers: the source did not compile");
            continue;
        }
        char how[64];
        amp__cpu_describe_exit(ws, how, sizeof how);
        st = amp__fail(AMP_ERROR_COMPILE, "compiling %s for the CPU accelerator failed (%s, %s):\n%s",
                       source_name, d->cxx[0], how, log);
        goto fail;
    }
    if ((st = amp__cpu_read_file(dirfd, "kernel.so", so, &out->bin, &out->bin_size)) != AMP_OK) goto fail;
    void *text = NULL;
    size_t tl = 0;
    if (amp__cpu_read_file(dirfd, "kernel.d", dep, &text, &tl) == AMP_OK) {
        dep_text = text;
        out->deps = amp__cpu_deps(dep_text, src);
    }
fail:
    if (st != AMP_OK) {
        free(out->bin);
        out->bin = NULL;
        out->bin_size = 0;
    }
    if (dir[0]) amp__cpu_remove_dir(dir);
    if (dirfd >= 0) close(dirfd);
    free(dep_text);
    free(note_src);
    free(loops);
    amp__cpu_loops_free(&lres);
    free(log);
    free(opts);
    free(argv);
    free(envp);
    return st;
}
