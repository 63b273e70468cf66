/* cpu_compile.c — finds the host C++ compiler for the CPU accelerator and compiles kernel sources (CPU prelude + core's source) into shared objects with posix_spawn. */
#include "cpu_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* Fixed flags. No -march=native: binaries go into a cache that other
 * machines may share. Part of the cache tag. */
static const char *const amp__cpu_flags[] = {"-std=c++17", "-O3", "-fPIC", "-shared",
                                             "-fvisibility=hidden", "-x", "c++"};
#define AMP__CPU_NFLAGS (sizeof amp__cpu_flags / sizeof amp__cpu_flags[0])
/* Output kept from a child (the head; the rest is drained and dropped). */
#define AMP__CPU_LOG_MAX (48 * 1024)

/* Run argv[0] (a path) with stdin from /dev/null and stdout + stderr
 * captured into *out (malloc'ed, NUL-terminated). *wstatus is the wait
 * status. Fails only when the child could not be started. */
static amp_status amp__cpu_run_capture(char *const argv[], char **out, int *wstatus)
{
    amp_status st = AMP_OK;
    int fds[2] = {-1, -1};
    bool actions_ready = false;
    posix_spawn_file_actions_t fa;
    char *buf = NULL;
    size_t len = 0;
    *out = NULL;
    *wstatus = 0;
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
    if (posix_spawn_file_actions_init(&fa) != 0) {
        st = amp__fail(AMP_ERROR_OUT_OF_MEMORY, "CPU accelerator: posix_spawn_file_actions_init failed");
        goto fail;
    }
    actions_ready = true;
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    close(fds[1]);
    fds[1] = -1;
    if (rc != 0) {
        st = amp__fail(AMP_ERROR_UNSUPPORTED, "cannot run %s: %s", argv[0], strerror(rc));
        goto fail;
    }
    for (;;) {
        char chunk[4096];
        ssize_t n = read(fds[0], chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        size_t take = (size_t)n;
        if (take > AMP__CPU_LOG_MAX - len) take = AMP__CPU_LOG_MAX - len;
        memcpy(buf + len, chunk, take);
        len += take;
    }
    buf[len] = 0;
    while (waitpid(pid, wstatus, 0) < 0) {
        if (errno != EINTR) {
            st = amp__fail(AMP_ERROR_DEVICE, "CPU accelerator: waitpid(%s): %s", argv[0], strerror(errno));
            goto fail;
        }
    }
    *out = buf;
    buf = NULL;
fail:
    if (actions_ready) posix_spawn_file_actions_destroy(&fa);
    if (fds[0] >= 0) close(fds[0]);
    if (fds[1] >= 0) close(fds[1]);
    free(buf);
    return st;
}

static void amp__cpu_describe_exit(int ws, char *buf, size_t cap)
{
    if (WIFEXITED(ws)) snprintf(buf, cap, "exit status %d", WEXITSTATUS(ws));
    else if (WIFSIGNALED(ws)) snprintf(buf, cap, "killed by signal %d", WTERMSIG(ws));
    else snprintf(buf, cap, "wait status %#x", ws);
}

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
    if (!vargv) {
        snprintf(d->reason, sizeof d->reason, "no memory to look for a C++ compiler");
        goto done;
    }
    for (int i = 0; i < n; ++i) vargv[i] = d->cxx[i];
    vargv[n] = "--version";
    amp_status st = amp__cpu_run_capture(vargv, &version, &ws);
    free(vargv);
    if (st != AMP_OK || !WIFEXITED(ws) || WEXITSTATUS(ws) != 0) {
        char how[64] = "";
        if (st == AMP_OK) amp__cpu_describe_exit(ws, how, sizeof how);
        snprintf(d->reason, sizeof d->reason, "no C++ compiler: %.80s (%.60s) cannot run: %.80s",
                 d->cxx_text, prog, st != AMP_OK ? amp_last_error() : how);
        goto done;
    }

    uint64_t vh = amp__fnv1a(AMP__FNV_SEED, version, strlen(version));
    uint64_t ph = amp__fnv1a(AMP__FNV_SEED, amp__embedded_cpu_prelude, strlen(amp__embedded_cpu_prelude));
    uint64_t fh = AMP__FNV_SEED;
    for (size_t i = 0; i < AMP__CPU_NFLAGS; ++i)
        fh = amp__fnv1a(fh, amp__cpu_flags[i], strlen(amp__cpu_flags[i]) + 1);
    int k = snprintf(d->cache_tag, sizeof d->cache_tag, "cpu;abi=%d;cxx=", AMP__CPU_ABI);
    for (int i = 0; i < n && k < (int)sizeof d->cache_tag; ++i)
        k += snprintf(d->cache_tag + k, sizeof d->cache_tag - (size_t)k, "%s%s", i ? " " : "", d->cxx[i]);
    if (k < (int)sizeof d->cache_tag)
        snprintf(d->cache_tag + k, sizeof d->cache_tag - (size_t)k,
                 ";version=%016llx;flags=%016llx;debug=%d;arch=%s;prelude=%016llx",
                 (unsigned long long)vh, (unsigned long long)fh, d->debug ? 1 : 0, d->machine,
                 (unsigned long long)ph);
    d->available = true;
done:
    free(version);
    free(words);
    free(argv);
}

static amp_status amp__cpu_write_file(const char *path, const char *const *parts, size_t nparts)
{
    amp_status st = AMP_OK;
    FILE *f = fopen(path, "wb");
    if (!f) return amp__fail(AMP_ERROR_DEVICE, "CPU accelerator: cannot create %s: %s", path, strerror(errno));
    for (size_t i = 0; i < nparts; ++i)
        if (fputs(parts[i], f) == EOF) {
            st = amp__fail(AMP_ERROR_DEVICE, "CPU accelerator: cannot write %s: %s", path, strerror(errno));
            break;
        }
    if (fclose(f) != 0 && st == AMP_OK)
        st = amp__fail(AMP_ERROR_DEVICE, "CPU accelerator: cannot write %s: %s", path, strerror(errno));
    return st;
}

static amp_status amp__cpu_read_file(const char *path, void **data, size_t *size)
{
    amp_status st = AMP_OK;
    char *buf = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return amp__fail(AMP_ERROR_COMPILE, "CPU accelerator: the compiler wrote no %s: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0 || sb.st_size <= 0) {
        st = amp__fail(AMP_ERROR_COMPILE, "CPU accelerator: the compiler wrote an empty %s", path);
        goto fail;
    }
    if (!(buf = malloc((size_t)sb.st_size))) {
        st = amp__fail(AMP_ERROR_OUT_OF_MEMORY, "CPU accelerator: no memory for a %lld-byte module",
                       (long long)sb.st_size);
        goto fail;
    }
    if (fread(buf, 1, (size_t)sb.st_size, f) != (size_t)sb.st_size) {
        st = amp__fail(AMP_ERROR_COMPILE, "CPU accelerator: cannot read %s", path);
        goto fail;
    }
    *data = buf;
    *size = (size_t)sb.st_size;
    buf = NULL;
fail:
    free(buf);
    fclose(f);
    return st;
}

amp_status amp__cpu_compile(amp__cpu_device *d, const amp__compile_job *job, amp__compile_output *out)
{
    amp_status st = AMP_OK;
    const char *source = job->source, *source_name = job->source_name, *options = job->options;
    void **bin = &out->bin;
    size_t *bin_size = &out->bin_size;
    char dir[4096] = "", src[4200] = "", so[4200] = "";
    char *opts = NULL, *log = NULL;
    char **argv = NULL;
    *bin = NULL;
    *bin_size = 0;
    if (!d->available) return amp__fail(AMP_ERROR_UNSUPPORTED, "CPU accelerator cannot compile: %s", d->reason);
    if (!source) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "CPU accelerator: source is NULL");

    const char *tmp = amp__env("TMPDIR");
    snprintf(dir, sizeof dir, "%s/hipamp-cpu-XXXXXX", tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        st = amp__fail(AMP_ERROR_DEVICE, "CPU accelerator: cannot create a temporary directory %s: %s",
                       dir, strerror(errno));
        dir[0] = 0;
        goto fail;
    }
    snprintf(src, sizeof src, "%s/kernel.cpp", dir);
    snprintf(so, sizeof so, "%s/kernel.so", dir);
    /* The core assembled the whole unit, the CPU prelude included
     * (lib/prelude.c), with #line markers naming each part. */
    const char *parts[] = {source, "\n"};
    if ((st = amp__cpu_write_file(src, parts, sizeof parts / sizeof parts[0])) != AMP_OK) goto fail;

    /* The compiler and our flags first, the user's options after them so
     * they can override (-O0, -g), then the three output/input words. */
    size_t nfixed = (size_t)d->ncxx + AMP__CPU_NFLAGS + (d->debug ? 1 : 0), nargv = 0;
    if ((st = amp__split_options(options, nfixed, 5, &argv, &nargv, &opts)) != AMP_OK) goto fail;
    size_t n = 0;
    for (int i = 0; i < d->ncxx; ++i) argv[n++] = d->cxx[i];
    for (size_t i = 0; i < AMP__CPU_NFLAGS; ++i) argv[n++] = (char *)amp__cpu_flags[i];
    if (d->debug) argv[n++] = "-DAMP_DEBUG_CHECKS";
    n = nargv;
    /* The user's quoted includes resolve from the source file's own
     * directory (amp_program_build_file); the unit itself is written here. */
    if (job->source_dir) {
        argv[n++] = "-iquote";
        argv[n++] = (char *)job->source_dir;
    }
    argv[n++] = "-o";
    argv[n++] = so;
    argv[n++] = src;
    argv[n] = NULL;

    int ws = 0;
    if ((st = amp__cpu_run_capture(argv, &log, &ws)) != AMP_OK) {
        st = amp__fail(AMP_ERROR_UNSUPPORTED, "CPU accelerator: %s", amp_last_error());
        goto fail;
    }
    if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0) {
        char how[64];
        amp__cpu_describe_exit(ws, how, sizeof how);
        st = amp__fail(AMP_ERROR_COMPILE, "compiling %s for the CPU accelerator failed (%s, %s):\n%s",
                       source_name ? source_name : "kernel source", d->cxx[0], how, log);
        goto fail;
    }
    st = amp__cpu_read_file(so, bin, bin_size);
fail:
    if (src[0]) unlink(src);
    if (so[0]) unlink(so);
    if (dir[0]) rmdir(dir);
    free(log);
    free(opts);
    free(argv);
    return st;
}
