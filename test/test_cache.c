/* test_cache.c — the on-disk compile cache across processes: one entry per build, disk hits in a second process, truncated/corrupted entries rebuilt, eight concurrent processes, amp_cache_dir(). */
#include "support.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef HIPAMP_CACHE_HELPER
#error "HIPAMP_CACHE_HELPER (path of the cache_helper executable) must be defined by the build"
#endif

extern char **environ;
extern const char test_kernels_cache_probe[];

/* One temporary tree per test: ROOT/src.hip (the source), ROOT/cache
 * (AMP_CACHE_DIR, created by the library on first store), and for the CPU
 * accelerator ROOT/cxx, a compiler wrapper that logs each invocation to
 * ROOT/cxx.log and runs the real compiler: a process that builds without a
 * compile logged was served from the disk cache. */
static char g_root[PATH_MAX];
static char g_cache[PATH_MAX];
static char g_src[PATH_MAX];
static char g_cxx[PATH_MAX];
static char g_cxx_log[PATH_MAX];

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb; (void)flag; (void)ftw;
    remove(path);
    return 0;
}

static void cleanup(void)
{
    if (g_root[0]) nftw(g_root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    g_root[0] = '\0';
}

static void write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "fopen(%s): %s", path, strerror(errno));
    cr_assert_eq(fwrite(data, 1, n, f), n);
    cr_assert_eq(fclose(f), 0);
}

static void setup_tree(amp_accelerator_info in)
{
    snprintf(g_root, sizeof g_root, "%s/hipamp-cache-test-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    cr_assert_not_null(mkdtemp(g_root), "mkdtemp: %s", strerror(errno));
    snprintf(g_cache, sizeof g_cache, "%s/cache", g_root);
    snprintf(g_src, sizeof g_src, "%s/src.hip", g_root);
    /* A per-tree comment keeps the key unique even when /tmp is reused. */
    char *src = NULL;
    size_t n = strlen(test_kernels_cache_probe) + PATH_MAX + 32;
    src = malloc(n);
    cr_assert_not_null(src);
    snprintf(src, n, "// %s\n%s", g_root, test_kernels_cache_probe);
    write_file(g_src, src, strlen(src));
    free(src);
    cr_assert_eq(setenv("AMP_CACHE_DIR", g_cache, 1), 0);

    g_cxx[0] = '\0';
    if (in.is_emulated) {
        /* The compiler the library would use: AMP_CXX, else CXX, else c++. */
        const char *real = getenv("AMP_CXX");
        if (!real || !*real) real = getenv("CXX");
        if (!real || !*real) real = "c++";
        snprintf(g_cxx, sizeof g_cxx, "%s/cxx", g_root);
        snprintf(g_cxx_log, sizeof g_cxx_log, "%s/cxx.log", g_root);
        char script[3 * PATH_MAX];
        snprintf(script, sizeof script, "#!/bin/sh\nprintf '%%s\\n' \"$*\" >> '%s'\nexec %s \"$@\"\n", g_cxx_log,
                 real);
        write_file(g_cxx, script, strlen(script));
        cr_assert_eq(chmod(g_cxx, 0755), 0);
    }
}

/* Compiles the wrapper logged so far (invocations that write an output file;
 * version queries do not count). -1 when there is no wrapper (GPU). */
static int compiles_logged(void)
{
    if (!g_cxx[0]) return -1;
    FILE *f = fopen(g_cxx_log, "r");
    if (!f) return 0;
    int n = 0;
    char line[8192];
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "-o ", 3) || strstr(line, " -o ")) ++n;
    fclose(f);
    return n;
}

/* ---------------------------------------------------- helper processes */

typedef struct run_opts {
    const char *options;     /* compiler options (NULL: none) */
    const char *cache_dir;   /* NULL: g_cache */
} run_opts;

static pid_t spawn_helper(const char *device, run_opts o)
{
    char **env = NULL;
    size_t n = 0;
    while (environ[n]) ++n;
    env = calloc(n + 4, sizeof *env);
    cr_assert_not_null(env);
    size_t m = 0;
    for (size_t i = 0; i < n; ++i) {
        if (!strncmp(environ[i], "AMP_CACHE_DIR=", 14)) continue;
        if (g_cxx[0] && (!strncmp(environ[i], "AMP_CXX=", 8) || !strncmp(environ[i], "CXX=", 4))) continue;
        env[m++] = environ[i];
    }
    char cache_var[PATH_MAX + 32];
    snprintf(cache_var, sizeof cache_var, "AMP_CACHE_DIR=%s", o.cache_dir ? o.cache_dir : g_cache);
    env[m++] = cache_var;
    char cxx_var[PATH_MAX + 16];
    if (g_cxx[0]) {
        snprintf(cxx_var, sizeof cxx_var, "AMP_CXX=%s", g_cxx);
        env[m++] = cxx_var;
    }
    env[m] = NULL;
    char *argv[] = {HIPAMP_CACHE_HELPER, (char *)device, g_src, (char *)o.options, NULL};
    pid_t pid;
    int err = posix_spawn(&pid, HIPAMP_CACHE_HELPER, NULL, NULL, argv, env);
    free(env);
    cr_assert_eq(err, 0, "posix_spawn(%s): %s", HIPAMP_CACHE_HELPER, strerror(err));
    return pid;
}

static int wait_helper(pid_t pid)
{
    int ws;
    cr_assert_eq(waitpid(pid, &ws, 0), pid);
    cr_assert(WIFEXITED(ws), "cache_helper died (signal %d)", WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
    return WEXITSTATUS(ws);
}

static const char *exit_meaning(int code)
{
    switch (code) {
    case 0: return "ok";
    case 2: return "no accelerator";
    case 3: return "build failed";
    case 4: return "kernel missing";
    case 5: return "launch failed";
    case 6: return "wrong result";
    default: return "usage/other";
    }
}

#define RUN_HELPER_OK(device, ...)                                                    \
    do {                                                                              \
        int rc_ = wait_helper(spawn_helper((device), (run_opts){__VA_ARGS__}));       \
        cr_assert_eq(rc_, 0, "cache_helper %s exited %d (%s); its stderr is in the test log", \
                     (device), rc_, exit_meaning(rc_));                               \
    } while (0)

/* ------------------------------------------------------ cache contents */

typedef struct walk { int files; char path[PATH_MAX]; char names[2048]; } walk;
static walk *g_walk;

static int count_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb; (void)ftw;
    if (flag == FTW_F) {
        if (g_walk->files++ == 0) snprintf(g_walk->path, sizeof g_walk->path, "%s", path);
        size_t l = strlen(g_walk->names);
        snprintf(g_walk->names + l, sizeof g_walk->names - l, " %s", path);
    }
    return 0;
}

/* Regular files under the cache directory (entries and any leftovers). */
static walk scan_cache(void)
{
    walk w = {0};
    g_walk = &w;
    nftw(g_cache, count_entry, 16, FTW_PHYS);
    g_walk = NULL;
    return w;
}

/* Exactly one file in the cache; its path. */
static void one_entry(char *path, struct stat *st)
{
    walk w = scan_cache();
    cr_assert_eq(w.files, 1, "want exactly one cache file, found %d:%s", w.files, w.names);
    snprintf(path, PATH_MAX, "%s", w.path);
    cr_assert_eq(stat(path, st), 0);
    cr_assert_gt(st->st_size, 0, "empty cache entry %s", path);
}

static bool same_file_unchanged(const struct stat *a, const struct stat *b)
{
    return a->st_ino == b->st_ino && a->st_size == b->st_size && a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
           a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

static void *read_all(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s: %s", path, strerror(errno));
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *buf = malloc(len > 0 ? (size_t)len : 1);
    cr_assert_not_null(buf);
    cr_assert_eq(fread(buf, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    *n = (size_t)len;
    return buf;
}

static amp_accelerator_info info_of(amp_accelerator *acc)
{
    amp_accelerator_info in;
    ASSERT_OK(amp_accelerator_get_info(acc, &in));
    return in;
}

/* The entry at path is valid: another process builds from it, runs the
 * kernel, compiles nothing (CPU) and leaves the entry as it was. */
static void assert_entry_valid(const char *device, const char *path)
{
    struct stat before, after;
    cr_assert_eq(stat(path, &before), 0);
    int compiles = compiles_logged();
    RUN_HELPER_OK(device);
    cr_assert_eq(compiles_logged(), compiles, "the next process compiled again instead of loading the disk entry");
    char p2[PATH_MAX];
    one_entry(p2, &after);
    cr_assert_str_eq(p2, path, "entry moved: %s -> %s", path, p2);
    cr_assert(same_file_unchanged(&before, &after), "a valid entry was rewritten (a disk miss) by the next process");
}

/* ---------------------------------------------------------------- tests */

ACCEL_TEST(cache, build_writes_one_entry_and_next_process_hits_it, .fini = cleanup)
{
    amp_accelerator_info in = info_of(acc);
    setup_tree(in);
    /* The cache directory does not exist yet: the library creates it. */
    walk w0 = scan_cache();
    cr_assert_eq(w0.files, 0);

    RUN_HELPER_OK(in.device_path);
    if (in.is_emulated) cr_assert_eq(compiles_logged(), 1, "first build should compile once");
    char path[PATH_MAX];
    struct stat st;
    one_entry(path, &st);

    /* A second process loads it from disk. */
    assert_entry_valid(in.device_path, path);
}

ACCEL_TEST(cache, truncated_entry_is_rebuilt, .fini = cleanup)
{
    amp_accelerator_info in = info_of(acc);
    setup_tree(in);
    RUN_HELPER_OK(in.device_path);
    char path[PATH_MAX];
    struct stat st;
    one_entry(path, &st);

    off_t cut = st.st_size / 2;
    cr_assert_eq(truncate(path, cut), 0, "truncate: %s", strerror(errno));

    RUN_HELPER_OK(in.device_path);
    if (in.is_emulated) cr_assert_eq(compiles_logged(), 2, "a truncated entry must be rebuilt");
    struct stat st2;
    char path2[PATH_MAX];
    one_entry(path2, &st2);
    cr_assert_str_eq(path2, path);
    cr_assert_gt(st2.st_size, cut, "entry not rewritten after truncation (size %lld)", (long long)st2.st_size);
    assert_entry_valid(in.device_path, path);
}

ACCEL_TEST(cache, corrupted_entry_is_rebuilt, .fini = cleanup)
{
    amp_accelerator_info in = info_of(acc);
    setup_tree(in);
    RUN_HELPER_OK(in.device_path);
    char path[PATH_MAX];
    struct stat st;
    one_entry(path, &st);

    size_t n = 0;
    unsigned char *bytes = read_all(path, &n);
    cr_assert_gt(n, 256);
    /* Flip 64 bytes in the middle: size unchanged, contents wrong. */
    for (size_t i = n / 2; i < n / 2 + 64; ++i) bytes[i] ^= 0xff;
    write_file(path, bytes, n);

    RUN_HELPER_OK(in.device_path);
    if (in.is_emulated) cr_assert_eq(compiles_logged(), 2, "a corrupted entry must be rebuilt");
    char path2[PATH_MAX];
    struct stat st2;
    one_entry(path2, &st2);
    cr_assert_str_eq(path2, path);
    size_t n2 = 0;
    unsigned char *now = read_all(path, &n2);
    cr_assert(n2 != n || memcmp(now, bytes, n) != 0, "corrupted entry was trusted and left in place");
    free(now);
    free(bytes);
    assert_entry_valid(in.device_path, path);
}

ACCEL_TEST(cache, eight_processes_build_one_new_kernel, .fini = cleanup)
{
    enum { P = 8 };
    amp_accelerator_info in = info_of(acc);
    setup_tree(in);
    pid_t pids[P];
    for (int i = 0; i < P; ++i) pids[i] = spawn_helper(in.device_path, (run_opts){0});
    int failed = 0, codes[P];
    for (int i = 0; i < P; ++i) {
        codes[i] = wait_helper(pids[i]);
        if (codes[i] != 0) ++failed;
    }
    for (int i = 0; i < P; ++i)
        cr_expect_eq(codes[i], 0, "process %d exited %d (%s)", i, codes[i], exit_meaning(codes[i]));
    cr_assert_eq(failed, 0, "%d of %d concurrent builds failed", failed, P);

    /* Exactly one entry and no temporary files left behind. */
    char path[PATH_MAX];
    struct stat st;
    one_entry(path, &st);
    assert_entry_valid(in.device_path, path);
}

ACCEL_TEST(cache, options_are_part_of_the_key, .fini = cleanup)
{
    amp_accelerator_info in = info_of(acc);
    setup_tree(in);
    RUN_HELPER_OK(in.device_path);
    RUN_HELPER_OK(in.device_path, .options = "-DHIPAMP_CACHE_TEST_OPTION=1");
    walk w = scan_cache();
    cr_assert_eq(w.files, 2, "two option sets should give two entries, found %d:%s", w.files, w.names);
}

ACCEL_TEST(cache, unusable_cache_dir_does_not_fail_builds, .fini = cleanup)
{
    amp_accelerator_info in = info_of(acc);
    setup_tree(in);
    /* AMP_CACHE_DIR is a regular file: nothing can be stored under it. */
    char file_dir[PATH_MAX + 16];
    snprintf(file_dir, sizeof file_dir, "%s/not-a-dir", g_root);
    write_file(file_dir, "x", 1);
    RUN_HELPER_OK(in.device_path, .cache_dir = file_dir);
}

/* Entries become loaded code: a world-writable cache directory (anyone
 * could have planted an entry) is neither read nor written, and builds still
 * succeed, compiling each time. */
ACCEL_TEST(cache, world_writable_dir_is_not_used, .fini = cleanup)
{
    amp_accelerator_info in = info_of(acc);
    setup_tree(in);
    cr_assert_eq(mkdir(g_cache, 0700), 0, "mkdir %s: %s", g_cache, strerror(errno));
    cr_assert_eq(chmod(g_cache, 0777), 0);
    RUN_HELPER_OK(in.device_path);
    walk w = scan_cache();
    cr_assert_eq(w.files, 0, "an entry was written into a world-writable cache directory");
    RUN_HELPER_OK(in.device_path);
    if (in.is_emulated) cr_assert_eq(compiles_logged(), 2, "each process should have compiled");
    /* Made private again, the same directory is used. */
    cr_assert_eq(chmod(g_cache, 0700), 0);
    RUN_HELPER_OK(in.device_path);
    w = scan_cache();
    cr_assert_eq(w.files, 1, "a private cache directory should get the entry");
}

/* --------------------------------------------------------- amp_cache_dir */

Test(cache, dir_honours_AMP_CACHE_DIR)
{
    cr_assert_eq(setenv("AMP_CACHE_DIR", "/tmp/hipamp-test-explicit-cache", 1), 0);
    const char *d = amp_cache_dir();
    cr_assert_not_null(d);
    cr_assert_str_eq(d, "/tmp/hipamp-test-explicit-cache");
    cr_assert_eq(amp_cache_dir(), d, "amp_cache_dir() should return one static string");
}

Test(cache, dir_falls_back_to_XDG_CACHE_HOME)
{
    unsetenv("AMP_CACHE_DIR");
    cr_assert_eq(setenv("XDG_CACHE_HOME", "/tmp/hipamp-test-xdg", 1), 0);
    cr_assert_str_eq(amp_cache_dir(), "/tmp/hipamp-test-xdg/hipamp");
}

Test(cache, dir_falls_back_to_HOME)
{
    unsetenv("AMP_CACHE_DIR");
    unsetenv("XDG_CACHE_HOME");
    cr_assert_eq(setenv("HOME", "/tmp/hipamp-test-home", 1), 0);
    cr_assert_str_eq(amp_cache_dir(), "/tmp/hipamp-test-home/.cache/hipamp");
}

Test(cache, dir_treats_empty_as_unset)
{
    cr_assert_eq(setenv("AMP_CACHE_DIR", "", 1), 0);
    cr_assert_eq(setenv("XDG_CACHE_HOME", "/tmp/hipamp-test-xdg2", 1), 0);
    cr_assert_str_eq(amp_cache_dir(), "/tmp/hipamp-test-xdg2/hipamp");
}
