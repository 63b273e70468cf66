/* support.c — implementation of the shared test helpers (support.h). */
#define _GNU_SOURCE /* nftw, RTLD_NEXT */
#include "support.h"

#include <criterion/hooks.h>
#include <dlfcn.h>
#include <errno.h>
#include <ftw.h>
#include <malloc.h>
#include <pthread.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

amp_accelerator *test_accel(test_accel_kind kind)
{
    amp_accelerator *list[16];
    size_t n = 0;
    amp_status st = amp_accelerator_list(list, 16, &n);
    cr_assert_eq(st, AMP_OK, "amp_accelerator_list: %s", amp_last_error());
    if (n > 16) n = 16;
    for (size_t i = 0; i < n; ++i) {
        amp_accelerator_info info;
        cr_assert_eq(amp_accelerator_get_info(list[i], &info), AMP_OK);
        bool want = kind == TEST_ACCEL_CPU ? info.is_emulated : !info.is_emulated;
        if (!want) continue;
        if (!info.is_available)
            cr_skip_test("accelerator %s unavailable: %s", info.device_path, info.unavailable_reason);
        return list[i];
    }
    cr_skip_test("%s", kind == TEST_ACCEL_GPU ? "no GPU present (no HIP or CUDA device found)"
                                              : "no CPU accelerator");
    return NULL;
}

/* The probe's answer, in a process of its own: 1 a GPU is listed, 0 none,
 * 3 the list failed. */
static int gpu_probe_answer(void)
{
    amp_accelerator *list[16];
    size_t n = 0;
    if (amp_accelerator_list(list, 16, &n) != AMP_OK) return 3;
    for (size_t i = 0; i < n && i < 16; ++i) {
        amp_accelerator_info info;
        if (amp_accelerator_get_info(list[i], &info) != AMP_OK) return 3;
        if (!info.is_emulated) return 1;
    }
    return 0;
}

#define GPU_PROBE_ENV "HIPAMP_TEST_SUPPORT_GPU_PROBE"

/* The test program started again as the probe (gpu_listed_in_a_child):
 * it answers before Criterion's main and leaves with _exit (no leak check
 * of what the vendor runtimes keep). */
__attribute__((constructor)) static void gpu_probe_mode(void)
{
    const char *v = getenv(GPU_PROBE_ENV);
    if (v && !strcmp(v, "1")) _exit(gpu_probe_answer());
}

/* Whether this process's environment lists a GPU: 1 yes, 0 no, -1 not
 * known. Asked in a child, so that the runner (which forks the tests)
 * never loads a GPU runtime: the test program itself, started again by
 * posix_spawn. (A fork without exec could deadlock: the runner has a
 * thread of Criterion's, and under AddressSanitizer a fork taken while it
 * held the allocator's lock left the child waiting on it for ever.) */
static int gpu_listed_in_a_child(void)
{
    extern char **environ;
    size_t n = 0;
    while (environ[n]) n++;
    char **envp = calloc(n + 2, sizeof *envp);
    if (!envp) return -1;
    size_t k = 0;
    for (size_t i = 0; i < n; ++i)
        if (strncmp(environ[i], GPU_PROBE_ENV "=", sizeof GPU_PROBE_ENV)) envp[k++] = environ[i];
    envp[k++] = GPU_PROBE_ENV "=1";
    envp[k] = NULL;
    char *argv[] = {"hipamp-test-gpu-probe", NULL};
    pid_t pid;
    int rc = posix_spawn(&pid, "/proc/self/exe", NULL, NULL, argv, envp);
    free(envp);
    if (rc != 0) return -1;
    int st = 0;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) return -1;
    if (!WIFEXITED(st) || WEXITSTATUS(st) > 1) return -1;
    return WEXITSTATUS(st);
}

/* Before the run: where no GPU is listed, the GPU variants of ACCEL_TEST
 * (TEST_GPU_VARIANT, support.h) are disabled instead of each starting a
 * process to skip. Where a GPU is listed, or the probe fails, they run
 * (and skip themselves with their reason where theirs is unavailable). */
/* LeakSanitizer builds: the runner (this process, which runs no test
 * body: each test runs in a process of its own, with its own leak check)
 * keeps Criterion's allocations out of the exit check. Criterion's runner
 * drops 288 bytes when it runs tests in parallel (--jobs=2), which the
 * check would report as a failure of the whole program. */
extern void __lsan_disable(void) __attribute__((weak));

ReportHook(PRE_ALL)(struct criterion_test_set *set)
{
    if (__lsan_disable) __lsan_disable();
    size_t variants = 0;
    FOREACH_SET(struct criterion_suite_set *suite, set->suites) {
        FOREACH_SET(struct criterion_test *t, suite->tests) {
            const char *d = t->data->description;
            if (d && !strcmp(d, TEST_GPU_VARIANT) && !t->data->disabled) variants++;
        }
    }
    if (!variants || gpu_listed_in_a_child() != 0) return;
    FOREACH_SET(struct criterion_suite_set *suite, set->suites) {
        FOREACH_SET(struct criterion_test *t, suite->tests) {
            const char *d = t->data->description;
            if (d && !strcmp(d, TEST_GPU_VARIANT)) t->data->disabled = true;
        }
    }
    fprintf(stderr, "[----] support: no GPU present (no HIP or CUDA device listed): the %zu tests of a GPU (name_gpu) "
            "are disabled\n", variants);
}

/* LeakSanitizer builds: a leak in a test body fails that test. Criterion
 * takes a test's result from its process before the process exits, and
 * LeakSanitizer's own check runs at the exit, so a leak was printed and
 * the test still passed. The Test macro's trampoline (in this program)
 * calls criterion_internal_test_main, which this program defines before
 * libcriterion: the body runs, then a leak check whose finding fails the
 * test, LeakSanitizer's report printed above the failure. Memory a test
 * keeps reachable (a global, a fixture, the library's caches) is no leak.
 * Outside sanitizer builds the entry is Criterion's, unchanged. */
extern int __lsan_do_recoverable_leak_check(void) __attribute__((weak));

extern void __lsan_do_leak_check(void) __attribute__((weak));

static void (*test_body_to_check)(void);
static bool test_leaks_checked;

void test_leak_check_final(void)
{
    if (!__lsan_do_recoverable_leak_check) return;
    test_leaks_checked = true;
    if (__lsan_do_recoverable_leak_check())
        cr_assert_fail("LeakSanitizer: the test left memory unreachable (the report is above)");
    __lsan_do_leak_check(); /* finds nothing now; turns the exit check off */
}

/* Criterion calls a parameterized test's body with its parameter through
 * the same pointer type (void (*)(void)): the parameter is passed on, as
 * Criterion itself does; a plain body ignores it. */
static void test_body_then_leak_check(void *param)
{
    ((void (*)(void *))test_body_to_check)(param);
    if (!test_leaks_checked && __lsan_do_recoverable_leak_check())
        cr_assert_fail("LeakSanitizer: the test body left memory unreachable (the report is above)");
}

void criterion_internal_test_main(void (*fn)(void))
{
    void (*criterion_main)(void (*)(void));
    *(void **)&criterion_main = dlsym(RTLD_NEXT, "criterion_internal_test_main");
    if (!criterion_main) {
        fprintf(stderr, "support: Criterion's criterion_internal_test_main not found: %s\n", dlerror());
        abort(); /* a test program, not the library: no test can run without it */
    }
    if (__lsan_do_recoverable_leak_check) {
        test_body_to_check = fn;
        fn = (void (*)(void))test_body_then_leak_check;
    }
    criterion_main(fn);
}

/* ------------------------------------ Criterion's libgit2, on demand */

/* Criterion initializes libgit2 from a constructor of its library in every
 * process it starts (one a test), and libgit2's initialization loads the
 * system's certificate bundle: a fifth of a short test's time under
 * AddressSanitizer, a third of it without, for a library that Criterion
 * uses only to diff two values of a failed assertion (git_diff_buffers).
 * This program defines the three functions Criterion imports, before
 * libgit2 in the lookup order (ld exports a program's definitions of the
 * symbols its shared libraries import): the initialization is counted and
 * done for real, once, on the first diff; the shutdown reaches libgit2
 * only where it was. */
typedef int (*test_git_fn)(void);
typedef int (*test_git_diff_fn)(const void *, size_t, const char *, const void *, size_t, const char *,
                                const void *, void *, void *, void *, void *, void *);
static pthread_once_t test_git_once = PTHREAD_ONCE_INIT;
static int test_git_ready; /* 1: libgit2's own initialization succeeded */
static test_git_diff_fn test_git_real_diff; /* libgit2's git_diff_buffers, found once */
static int test_git_count; /* initializations asked for and not shut down */
static pthread_mutex_t test_git_lock = PTHREAD_MUTEX_INITIALIZER;

static void test_git_real_init(void)
{
    test_git_fn init;
    *(void **)&init = dlsym(RTLD_NEXT, "git_libgit2_init");
    *(void **)&test_git_real_diff = dlsym(RTLD_NEXT, "git_diff_buffers");
    if (init && init() > 0) test_git_ready = 1;
    else fprintf(stderr, "support: libgit2's git_libgit2_init %s\n", init ? "failed" : "not found");
}

int git_libgit2_init(void)
{
    pthread_mutex_lock(&test_git_lock);
    int n = ++test_git_count;
    pthread_mutex_unlock(&test_git_lock);
    return n;
}

int git_libgit2_shutdown(void)
{
    pthread_mutex_lock(&test_git_lock);
    int n = test_git_count > 0 ? --test_git_count : -1;
    pthread_mutex_unlock(&test_git_lock);
    if (n == 0 && test_git_ready) {
        test_git_fn shutdown;
        *(void **)&shutdown = dlsym(RTLD_NEXT, "git_libgit2_shutdown");
        if (shutdown) shutdown();
        test_git_ready = 0;
    }
    return n;
}

bool test_libgit2_initialized(void) { return test_git_ready; }

int git_diff_buffers(const void *old_buffer, size_t old_len, const char *old_as_path, const void *new_buffer,
                     size_t new_len, const char *new_as_path, const void *options, void *file_cb, void *binary_cb,
                     void *hunk_cb, void *line_cb, void *payload)
{
    pthread_once(&test_git_once, test_git_real_init);
    if (!test_git_ready || !test_git_real_diff) return -1;
    return test_git_real_diff(old_buffer, old_len, old_as_path, new_buffer, new_len, new_as_path, options, file_cb, binary_cb,
                hunk_cb, line_cb, payload);
}

amp_program *test_build(amp_accelerator *acc, const char *source)
{
    amp_program *p = NULL;
    amp_status st = amp_program_build(acc, source, NULL, &p);
    cr_assert_eq(st, AMP_OK, "amp_program_build: %s: %s", amp_status_name(st), amp_last_error());
    cr_assert_not_null(p);
    return p;
}

amp_kernel *test_kernel(amp_program *p, const char *name)
{
    amp_kernel *k = NULL;
    amp_status st = amp_program_get_kernel(p, name, &k);
    cr_assert_eq(st, AMP_OK, "amp_program_get_kernel(%s): %s", name, amp_last_error());
    return k;
}

void test_cpu_copying(void) { setenv("AMP_CPU_UNIFIED", "0", 1); }

bool test_in_discrete_cpu_pass(amp_accelerator *acc)
{
    const char *pass = getenv("HIPAMP_TEST_DISCRETE_PASS");
    if (!pass || strcmp(pass, "1")) return false;
    amp_accelerator_info info;
    return acc && amp_accelerator_get_info(acc, &info) == AMP_OK && info.is_emulated;
}

void test_fill_random(float *x, size_t n, unsigned seed)
{
    uint64_t s = 0x9e3779b97f4a7c15ULL ^ seed;
    for (size_t i = 0; i < n; ++i) {
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        float v = (float)((s >> 40) & 0xffffff) / 16777216.0f * 2.0f - 1.0f;
        x[i] = v == 0.0f ? 0.5f : v;
    }
}

amp_array_view *test_view(void *host, size_t elem_size, amp_extent e, amp_access a)
{
    amp_array_view *v = NULL;
    ASSERT_OK(amp_array_view_create(host, elem_size, e, a, &v));
    cr_assert_not_null(v);
    return v;
}

double test_now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

void *test_xmalloc(size_t n)
{
    void *p = malloc(n);
    cr_assert_not_null(p, "out of host memory (%zu bytes)", n);
    return p;
}

size_t test_heap_in_use(void)
{
    struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
}

void test_check_f32(const float *got, const float *want, size_t n, const char *what)
{
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; ++i)
        if (!(got[i] == want[i]) && bad++ == 0) first = i;
    cr_assert_eq(bad, 0, "%s: %zu of %zu elements wrong; first at %zu: got %.9g want %.9g", what, bad, n, first,
                 (double)got[first], (double)want[first]);
}

void test_check_i32(const int32_t *got, const int32_t *want, size_t n, const char *what)
{
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; ++i)
        if (got[i] != want[i] && bad++ == 0) first = i;
    cr_assert_eq(bad, 0, "%s: %zu of %zu elements wrong; first at %zu: got %d want %d", what, bad, n, first,
                 got[first], want[first]);
}

/* ---------------------------------------------- scratch directories */

enum { TEST_REMOVE_MAX = 64 };
static char *test_remove_dirs[TEST_REMOVE_MAX];
static int test_remove_count;
static pid_t test_remove_owner;

static int test_remove_entry(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
    (void)sb;
    (void)ftw;
    /* Never through a symbolic link: chmod follows it, and a test's link
     * to the system's compiler made that compiler 0700 (another user's
     * builds then found none). */
    if (type != FTW_SL && type != FTW_SLN) chmod(path, 0700);
    remove(path);
    return 0;
}

void test_remove_tree(const char *dir) { nftw(dir, test_remove_entry, 16, FTW_DEPTH | FTW_PHYS); }

static void test_remove_all(void)
{
    if (getpid() != test_remove_owner) return;
    for (int i = 0; i < test_remove_count; ++i) {
        test_remove_tree(test_remove_dirs[i]);
        free(test_remove_dirs[i]);
    }
    test_remove_count = 0;
}

void test_remove_at_exit(const char *dir)
{
    if (!test_remove_owner || test_remove_owner != getpid()) {
        /* The first call in this process (a test's own, forked by Criterion). */
        if (!test_remove_owner) atexit(test_remove_all);
        test_remove_owner = getpid();
        test_remove_count = 0;
    }
    if (test_remove_count < TEST_REMOVE_MAX) test_remove_dirs[test_remove_count++] = strdup(dir);
}

void test_skip_unless_trusted(const char *path, const char *what)
{
    if (amp_check_trusted_file(path) != AMP_OK)
        cr_skip_test("%s is a file hipamp refuses to load here (a build tree another user or a group may write?): %s",
                     what, amp_last_error());
}

long test_proc_parent(long pid, char *state)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t k = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[k] = 0;
    /* Past the command's name, which may hold anything, ')' included. */
    const char *rp = strrchr(buf, ')');
    char st = 0;
    long ppid = -1;
    if (!rp || sscanf(rp + 1, " %c %ld", &st, &ppid) != 2) return -1;
    if (state) *state = st;
    return ppid;
}

bool test_proc_cmdline(long pid, char *buf, size_t n)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/cmdline", pid);
    FILE *f = fopen(path, "r");
    if (!f || n == 0) {
        if (f) fclose(f);
        return false;
    }
    size_t k = fread(buf, 1, n - 1, f);
    fclose(f);
    for (size_t i = 0; i < k; ++i) buf[i] = buf[i] ? buf[i] : ' ';
    buf[k] = 0;
    return true;
}
