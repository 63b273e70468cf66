/* test_cache.c — the on-disk compile cache across processes (one entry per build, disk hits in a second process, truncated/corrupted entries rebuilt, eight concurrent processes) and as a security boundary (symlink swaps, foreign and forged entries, FIFOs, group-writable and world-writable directories, the /tmp fallback, oversized entries and directories at an entry's name, entries the back end refuses), the shared group cache among other users (fork and setuid: a directory, key or entry owned outside the group refused; a directory one member makes usable by all; unreadable entries and failed stores named), header tracking (system headers included; headers another user could plant beside a temporary file or in a shared directory), builds without OpenSSL's SHA-256 and with its last step failing (an LD_PRELOAD shim), a sanitizer-built module never loaded by a process without its runtime, and amp_cache_get_info. */
#include "stderr_capture.h"
#include "support.h"

#include <criterion/redirect.h>

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <limits.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <pwd.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef HIPAMP_CACHE_HELPER
#error "HIPAMP_CACHE_HELPER (path of the cache_helper executable) must be defined by the build"
#endif

extern char **environ;
extern const char test_kernels_cache_probe[];

/* One temporary tree per test: ROOT/src.hip (the source), ROOT/cache
 * (AMP_CACHE_DIR, created by the library on first use), and for the CPU
 * accelerator ROOT/cxx, a compiler wrapper that logs each invocation to
 * ROOT/cxx.log and runs the real compiler: a process that builds without a
 * compile logged was served from the disk cache. */
static char g_root[PATH_MAX / 2]; /* room for the names joined to it */
static char g_cache[PATH_MAX];
static char g_src[PATH_MAX];
static char g_cxx[PATH_MAX];
static char g_cxx_log[PATH_MAX];

static void cleanup(void)
{
    if (g_root[0]) test_remove_tree(g_root);
    g_root[0] = '\0';
}

static void write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "fopen(%s): %s", path, strerror(errno));
    cr_assert_eq(fwrite(data, 1, n, f), n);
    cr_assert_eq(fclose(f), 0);
}

static void write_probe_source(const char *extra)
{
    char *src = NULL;
    size_t n = strlen(test_kernels_cache_probe) + PATH_MAX + strlen(extra) + 32;
    src = malloc(n);
    cr_assert_not_null(src);
    /* A per-tree comment keeps the key unique even when /tmp is reused. */
    snprintf(src, n, "// %s\n%s%s", g_root, extra, test_kernels_cache_probe);
    write_file(g_src, src, strlen(src));
    free(src);
}

static void setup_tree(amp_accelerator_info in)
{
    snprintf(g_root, sizeof g_root, "%s/hipamp-cache-test-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    cr_assert_not_null(mkdtemp(g_root), "mkdtemp: %s", strerror(errno));
    snprintf(g_cache, sizeof g_cache, "%s/cache", g_root);
    snprintf(g_src, sizeof g_src, "%s/src.hip", g_root);
    write_probe_source("");
    cr_assert_eq(setenv("AMP_CACHE_DIR", g_cache, 1), 0);
    /* The CPU accelerator's precompiled header is an entry of its own and
     * a compile of its own: the tests that count entries and compiles
     * count modules; those below about the header turn it on. */
    cr_assert_eq(setenv("AMP_CPU_PCH", "0", 1), 0);

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

/* For tests that also build in this process on the CPU accelerator: the
 * tree and the wrapper exist, and AMP_CXX names it, before the library
 * first looks for a compiler. */
static amp_accelerator *setup_tree_cpu(void)
{
    amp_accelerator_info in;
    memset(&in, 0, sizeof in);
    in.is_emulated = true;
    setup_tree(in);
    cr_assert_eq(setenv("AMP_CXX", g_cxx, 1), 0);
    return test_accel(TEST_ACCEL_CPU);
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
    const char *source;      /* NULL: g_src */
    const char *options;     /* compiler options (NULL: none) */
    const char *cache_dir;   /* NULL: g_cache */
    const char *extra_env;   /* one more NAME=value (may be NULL): it replaces NAME's value */
    const char *extra_env2;
} run_opts;

/* Whether the NAME=value entry var sets the same NAME as extra. */
static bool same_name(const char *var, const char *extra)
{
    if (!extra) return false;
    size_t n = strcspn(extra, "=");
    return !strncmp(var, extra, n) && var[n] == '=';
}

static pid_t spawn_helper(const char *device, run_opts o)
{
    char **env = NULL;
    size_t n = 0;
    while (environ[n]) ++n;
    env = calloc(n + 6, sizeof *env);
    cr_assert_not_null(env);
    size_t m = 0;
    for (size_t i = 0; i < n; ++i) {
        if (!strncmp(environ[i], "AMP_CACHE_DIR=", 14)) continue;
        if (g_cxx[0] && (!strncmp(environ[i], "AMP_CXX=", 8) || !strncmp(environ[i], "CXX=", 4))) continue;
        if (same_name(environ[i], o.extra_env) || same_name(environ[i], o.extra_env2)) continue;
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
    if (o.extra_env) env[m++] = (char *)o.extra_env;
    if (o.extra_env2) env[m++] = (char *)o.extra_env2;
    env[m] = NULL;
    char *argv[] = {HIPAMP_CACHE_HELPER, (char *)device, (char *)(o.source ? o.source : g_src),
                    (char *)(o.options ? o.options : ""), NULL};
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

typedef struct walk { int entries, others; char path[PATH_MAX]; char names[2048]; } walk;
static walk *g_walk;

static int count_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)ftw;
    if (flag != FTW_F && flag != FTW_SL) return 0;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t l = strlen(g_walk->names);
    snprintf(g_walk->names + l, sizeof g_walk->names - l, " %s", base);
    if (!strcmp(base, ".key")) return 0;
    size_t n = strlen(base);
    if (n > 5 && !strcmp(base + n - 5, ".ampc") && S_ISREG(sb->st_mode)) {
        if (g_walk->entries++ == 0) snprintf(g_walk->path, sizeof g_walk->path, "%s", path);
    } else {
        g_walk->others++;
    }
    return 0;
}

/* Entries (*.ampc) and anything else (temporaries) under dir; the key file
 * is not counted. */
static walk scan_dir(const char *dir)
{
    walk w = {0};
    g_walk = &w;
    nftw(dir, count_entry, 16, FTW_PHYS);
    g_walk = NULL;
    return w;
}
static walk scan_cache(void) { return scan_dir(g_cache); }

/* Exactly one entry in the cache and nothing else; its path. */
static void one_entry(char *path, struct stat *st)
{
    walk w = scan_cache();
    cr_assert_eq(w.entries, 1, "want exactly one cache entry, found %d:%s", w.entries, w.names);
    cr_assert_eq(w.others, 0, "files left in the cache besides entries:%s", w.names);
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

/* ------------------------------------------------- forging entries
 * The entry format (lib/core/disk_cache.c): "HIPAMPC2", u32 format 2, u32 0,
 * key[32], u64 payload size, HMAC-SHA256(key file; the 56 bytes before the
 * MAC, then the payload)[32], payload. */
enum { ENTRY_HEADER = 88, ENTRY_MAC_AT = 56 };

static void forge_entry(const char *path, const unsigned char mac_key[32], const void *payload, size_t n)
{
    size_t old_n = 0;
    unsigned char *old = read_all(path, &old_n);
    cr_assert_geq(old_n, ENTRY_HEADER);
    unsigned char *e = malloc(ENTRY_HEADER + n);
    cr_assert_not_null(e);
    memcpy(e, old, ENTRY_MAC_AT); /* magic, format, key: the victim's */
    uint64_t size = n;
    memcpy(e + 48, &size, 8);
    memcpy(e + ENTRY_HEADER, payload, n);
    unsigned char *joined = malloc(ENTRY_MAC_AT + n);
    cr_assert_not_null(joined);
    memcpy(joined, e, ENTRY_MAC_AT);
    memcpy(joined + ENTRY_MAC_AT, payload, n);
    unsigned int maclen = 0;
    cr_assert_not_null(HMAC(EVP_sha256(), mac_key, 32, joined, ENTRY_MAC_AT + n, e + ENTRY_MAC_AT, &maclen));
    cr_assert_eq(maclen, 32);
    unlink(path);
    write_file(path, e, ENTRY_HEADER + n);
    chmod(path, 0600);
    free(joined);
    free(e);
    free(old);
}

/* A shared object whose constructor creates the file $HIPAMP_TEST_MARKER:
 * if it is ever loaded, the marker says so. */
static void *marker_object(size_t *n)
{
    char src[PATH_MAX], so[PATH_MAX], cmd[3 * PATH_MAX];
    snprintf(src, sizeof src, "%s/marker.cpp", g_root);
    snprintf(so, sizeof so, "%s/marker.so", g_root);
    const char *text = "#include <cstdio>\n#include <cstdlib>\n"
                       "__attribute__((constructor)) static void planted() {\n"
                       "  const char *m = std::getenv(\"HIPAMP_TEST_MARKER\");\n"
                       "  if (m) { FILE *f = std::fopen(m, \"w\"); if (f) std::fclose(f); } }\n"
                       "extern \"C\" int amp__cpu_abi(void) { return 1; }\n";
    write_file(src, text, strlen(text));
    const char *cxx = getenv("CXX") && *getenv("CXX") ? getenv("CXX") : "c++";
    snprintf(cmd, sizeof cmd, "%s -shared -fPIC -o '%s' '%s'", cxx, so, src);
    cr_assert_eq(system(cmd), 0, "could not build the marker object: %s", cmd);
    return read_all(so, n);
}

static bool exists(const char *path)
{
    struct stat sb;
    return lstat(path, &sb) == 0;
}

static amp_cache_info cache_info(void)
{
    amp_cache_info ci;
    ASSERT_OK(amp_cache_get_info(&ci));
    return ci;
}

/* Build the probe in this process and run it once. */
static void build_probe_here(amp_accelerator *acc)
{
    size_t n = 0;
    char *src = read_all(g_src, &n);
    src = realloc(src, n + 1);
    src[n] = '\0';
    amp_program *p = test_build(acc, src);
    amp_kernel *k = test_kernel(p, "cache_probe_scale");
    int data[64];
    for (int i = 0; i < 64; ++i) data[i] = i;
    amp_array_view *v = test_view(data, sizeof(int), amp_extent_1d(64), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(v), amp_arg_int32(2)};
    ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_1d(64), k, a, 2));
    ASSERT_OK(amp_array_view_destroy(v));
    for (int i = 0; i < 64; ++i) cr_assert_eq(data[i], 3 * i, "probe data[%d] = %d", i, data[i]);
    amp_program_destroy(p);
    free(src);
}

/* Run the probe of p on four zeros with factor 1: data[0] is the
 * CACHE_PROBE_ADD it was built with. */
static int probe_add(amp_program *p)
{
    amp_kernel *k = test_kernel(p, "cache_probe_scale");
    int data[4] = {0, 0, 0, 0};
    amp_array_view *v = test_view(data, sizeof(int), amp_extent_1d(4), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(v), amp_arg_int32(1)};
    ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_1d(4), k, a, 2));
    ASSERT_OK(amp_array_view_destroy(v));
    return data[0];
}

/* ---------------------------------------------------------------- tests */

ACCEL_TEST(cache, build_writes_one_entry_and_next_process_hits_it, .fini = cleanup)
{
    amp_accelerator_info in = info_of(acc);
    setup_tree(in);
    /* The cache directory does not exist yet: the library creates it. */
    walk w0 = scan_cache();
    cr_assert_eq(w0.entries, 0);

    RUN_HELPER_OK(in.device_path);
    if (in.is_emulated) cr_assert_eq(compiles_logged(), 1, "first build should compile once");
    char path[PATH_MAX];
    struct stat st;
    one_entry(path, &st);
    /* Private: the directory 0700, the entry and the key not writable by
     * anyone else. */
    struct stat ds;
    cr_assert_eq(stat(g_cache, &ds), 0);
    cr_assert_eq(ds.st_mode & 0777, 0700, "cache directory mode %o", ds.st_mode & 0777);
    cr_assert_eq(st.st_mode & 0077, 0, "entry mode %o", st.st_mode & 0777);
    char key[PATH_MAX + 8];
    snprintf(key, sizeof key, "%s/.key", g_cache);
    struct stat ks;
    cr_assert_eq(stat(key, &ks), 0, "no key file: %s", strerror(errno));
    cr_assert_eq(ks.st_mode & 0077, 0, "key file mode %o", ks.st_mode & 0777);
    cr_assert_eq(ks.st_size, 32);

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
    SKIP_UNDER_ASAN("races between processes");
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

    /* Exactly one entry, one key, and no temporary files left behind. */
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
    cr_assert_eq(w.entries, 2, "two option sets should give two entries, found %d:%s", w.entries, w.names);
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
    cr_assert_eq(w.entries + w.others, 0, "something was written into a world-writable cache directory:%s", w.names);
    RUN_HELPER_OK(in.device_path);
    if (in.is_emulated) cr_assert_eq(compiles_logged(), 2, "each process should have compiled");
    /* Made private again, the same directory is used. */
    cr_assert_eq(chmod(g_cache, 0700), 0);
    RUN_HELPER_OK(in.device_path);
    w = scan_cache();
    cr_assert_eq(w.entries, 1, "a private cache directory should get the entry");
}

/* Group-writable: refused unless the user asks for a shared group cache,
 * and then used (the directory's group is ours). */
Test(cache, group_writable_dir_needs_AMP_CACHE_SHARED, .fini = cleanup)
{
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    amp_accelerator_info in = info_of(acc);
    setup_tree(in);
    cr_assert_eq(mkdir(g_cache, 0700), 0);
    cr_assert_eq(chmod(g_cache, 02770), 0);
    RUN_HELPER_OK(in.device_path);
    walk w = scan_cache();
    cr_assert_eq(w.entries + w.others, 0, "a group-writable directory was used without AMP_CACHE_SHARED:%s", w.names);
    RUN_HELPER_OK(in.device_path, .extra_env = "AMP_CACHE_SHARED=group");
    w = scan_cache();
    cr_assert_eq(w.entries, 1, "the shared group cache was not used:%s", w.names);
    /* Shared entries are group-readable, never group-writable. */
    struct stat st;
    cr_assert_eq(stat(w.path, &st), 0);
    cr_assert_eq(st.st_mode & 0022, 0, "shared entry mode %o", st.st_mode & 0777);
    int compiles = compiles_logged();
    RUN_HELPER_OK(in.device_path, .extra_env = "AMP_CACHE_SHARED=group");
    cr_assert_eq(compiles_logged(), compiles, "the shared entry was not used by the next process");
}

/* The attack of the issue: the cache path is a symlink that another user
 * swaps between the victim's cache and their own directory. The process
 * resolved its directory once and keeps using it; a process that starts
 * with the symlink pointing at the foreign directory refuses it. Nothing
 * planted is ever loaded (the marker object's constructor would create a
 * file). */
Test(cache, symlink_swap_never_loads_foreign_code, .fini = cleanup, .timeout = 120)
{
    amp_accelerator *acc = setup_tree_cpu();
    amp_accelerator_info in = info_of(acc);
    char good[PATH_MAX + 8], evil[PATH_MAX + 8], link_path[PATH_MAX + 8], marker[PATH_MAX + 16], marker_env[PATH_MAX + 32];
    snprintf(good, sizeof good, "%s/good", g_root);
    snprintf(evil, sizeof evil, "%s/evil", g_root);
    snprintf(link_path, sizeof link_path, "%s/link", g_root);
    snprintf(marker, sizeof marker, "%s/MARKER", g_root);
    snprintf(marker_env, sizeof marker_env, "HIPAMP_TEST_MARKER=%s", marker);
    cr_assert_eq(mkdir(good, 0700), 0);
    cr_assert_eq(symlink(good, link_path), 0);
    cr_assert_eq(setenv("AMP_CACHE_DIR", link_path, 1), 0);
    cr_assert_eq(setenv("HIPAMP_TEST_MARKER", marker, 1), 0);

    /* This process opens the cache through the link and stores the probe. */
    build_probe_here(acc);
    walk w = scan_dir(good);
    cr_assert_eq(w.entries, 1, "no entry in the good cache:%s", w.names);
    const char *name = strrchr(w.path, '/') + 1;

    /* The attacker's directory: a copy of the cache, key included, whose
     * entry is their code with a valid MAC. */
    cr_assert_eq(mkdir(evil, 0700), 0);
    char cmd[4 * PATH_MAX];
    snprintf(cmd, sizeof cmd, "cp -p '%s'/.key '%s'/ && cp -p '%s' '%s'/", good, evil, w.path, evil);
    cr_assert_eq(system(cmd), 0);
    char keypath[PATH_MAX + 16], evil_entry[PATH_MAX + 96];
    snprintf(keypath, sizeof keypath, "%s/.key", evil);
    snprintf(evil_entry, sizeof evil_entry, "%s/%s", evil, name);
    size_t kn = 0, mn = 0;
    unsigned char *key = read_all(keypath, &kn);
    cr_assert_eq(kn, 32);
    void *planted = marker_object(&mn);
    forge_entry(evil_entry, key, planted, mn);
    /* Owned by someone else where we can arrange it, else writable by
     * everyone: either way not ours alone. */
    if (geteuid() == 0) {
        snprintf(cmd, sizeof cmd, "chown -R 65534:65534 '%s'", evil);
        cr_assert_eq(system(cmd), 0);
    } else {
        cr_assert_eq(chmod(evil, 0777), 0);
    }

    /* Swap the link. The running process keeps its directory: a rebuild of
     * the probe loads the good entry, compiling nothing. */
    cr_assert_eq(unlink(link_path), 0);
    cr_assert_eq(symlink(evil, link_path), 0);
    int compiles = compiles_logged();
    ASSERT_OK(amp_cache_clear_memory());
    build_probe_here(acc);
    cr_assert(!exists(marker), "planted code was loaded after the symlink swap");
    cr_assert_eq(compiles_logged(), compiles, "the good entry should still have been used");
    cr_assert_geq(cache_info().disk_hits, 1);

    /* A new process sees the link pointing at the foreign directory and
     * refuses it: it compiles, and loads nothing from there. */
    RUN_HELPER_OK(in.device_path, .cache_dir = link_path, .extra_env = marker_env);
    cr_assert(!exists(marker), "a new process loaded planted code through the swapped link");
    cr_assert_eq(compiles_logged(), compiles + 1, "the new process should have compiled");
    free(planted);
    free(key);
}

/* A setting that cannot work turns the disk cache off saying so on stderr,
 * once, as a bad value of any other variable is: a program that never asks
 * amp_cache_get_info compiled every kernel in every run without a word. */
Test(cache, a_setting_that_cannot_work_is_said_on_stderr)
{
    static const struct {
        const char *dir, *shared, *said;
    } cases[] = {
        {"rel/cache", NULL,
         "hipamp: cache directory rel/cache (AMP_CACHE_DIR) is not an absolute path; the disk cache is off"},
        {"/tmp/hipamp-said", "groupie", "hipamp: AMP_CACHE_SHARED=groupie is not understood"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        pid_t pid = fork();
        cr_assert_neq(pid, -1);
        if (pid == 0) {
            setenv("AMP_CACHE_DIR", cases[i].dir, 1);
            if (cases[i].shared) setenv("AMP_CACHE_SHARED", cases[i].shared, 1);
            else unsetenv("AMP_CACHE_SHARED");
            char err[2048];
            stderr_capture c;
            stderr_capture_begin(&c);
            amp_cache_info ci;
            amp_status st = amp_cache_get_info(&ci);
            (void)amp_cache_get_info(&ci); /* said once */
            stderr_capture_end(&c, err, sizeof err);
            if (st != AMP_OK) _exit(2);
            if (ci.disk_enabled) _exit(3);
            const char *at = strstr(err, cases[i].said);
            if (!at) _exit(4);
            _exit(strstr(at + 1, "hipamp: ") ? 5 : 0);
        }
        int status = 0;
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "AMP_CACHE_DIR=%s AMP_CACHE_SHARED=%s: 3 the disk cache was used, 4 stderr did not say \"%s\", 5 it "
                  "said more (%d)",
                  cases[i].dir, cases[i].shared ? cases[i].shared : "(unset)", cases[i].said,
                  WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    }
}

/* A symlink as the cache directory that belongs to another user is
 * refused even when it points at a good directory. */
Test(cache, foreign_symlink_is_refused, .fini = cleanup)
{
    if (geteuid() != 0) cr_skip_test("needs root to make a symlink owned by another user");
    amp_accelerator *acc = setup_tree_cpu();
    amp_accelerator_info in = info_of(acc);
    char good[PATH_MAX + 8], link_path[PATH_MAX + 8];
    snprintf(good, sizeof good, "%s/good", g_root);
    snprintf(link_path, sizeof link_path, "%s/link", g_root);
    cr_assert_eq(mkdir(good, 0700), 0);
    cr_assert_eq(symlink(good, link_path), 0);
    cr_assert_eq(lchown(link_path, 65534, 65534), 0, "lchown: %s", strerror(errno));
    cr_assert_eq(setenv("AMP_CACHE_DIR", link_path, 1), 0);
    build_probe_here(acc);
    amp_cache_info ci = cache_info();
    cr_assert(!ci.disk_enabled, "a symlink owned by uid 65534 was accepted");
    cr_assert(strstr(ci.reason, "symbolic link") && strstr(ci.reason, "65534"), "reason: %s", ci.reason);
    cr_assert_eq(scan_dir(good).entries, 0, "an entry was stored through the foreign link");
}

/* The attacker who wins the race on the cache directory's last component:
 * these lstat, fstatat and openat (the test's own, which the library's
 * calls reach first) swap the directory at g_swap_at for a symbolic link to
 * g_swap_to right after the first real look-up of that name, once: by its
 * whole path, or by its last component relative to a directory descriptor
 * (the library walks to the parent first). As root the link is uid
 * 65534's: one the library refuses had it been there when it looked. */
static char g_swap_at[PATH_MAX], g_swap_to[PATH_MAX];
static bool g_swapped;

static void swap_now(const char *path)
{
    if (!g_swap_at[0]) return;
    const char *leaf = strrchr(g_swap_at, '/');
    if (strcmp(path, g_swap_at) && (path[0] == '/' || !leaf || strcmp(path, leaf + 1))) return;
    char at[PATH_MAX], aside[PATH_MAX + 8];
    snprintf(at, sizeof at, "%s", g_swap_at);
    snprintf(aside, sizeof aside, "%s.aside", at);
    g_swap_at[0] = '\0';
    g_swapped = rename(at, aside) == 0 && symlink(g_swap_to, at) == 0 &&
                (geteuid() != 0 || lchown(at, 65534, 65534) == 0);
}

int lstat(const char *restrict path, struct stat *restrict st)
{
    static int (*real)(const char *restrict, struct stat *restrict);
    if (!real) real = (int (*)(const char *restrict, struct stat *restrict))dlsym(RTLD_NEXT, "lstat");
    int r = real(path, st);
    swap_now(path);
    return r;
}

int fstatat(int dirfd, const char *restrict path, struct stat *restrict st, int flags)
{
    static int (*real)(int, const char *restrict, struct stat *restrict, int);
    if (!real) real = (int (*)(int, const char *restrict, struct stat *restrict, int))dlsym(RTLD_NEXT, "fstatat");
    int r = real(dirfd, path, st, flags);
    swap_now(path);
    return r;
}

int openat(int dirfd, const char *path, int flags, ...)
{
    static int (*real)(int, const char *, int, ...);
    if (!real) real = (int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, "openat");
    mode_t mode = 0;
    if (flags & (O_CREAT | O_TMPFILE)) {
        va_list ap;
        va_start(ap, flags);
        mode = (mode_t)va_arg(ap, int);
        va_end(ap);
    }
    int r = real(dirfd, path, flags, mode);
    swap_now(path);
    return r;
}

/* The window between looking at the cache directory's last component and
 * opening it: a link put there meanwhile (by whoever may write the parent)
 * led the process into any directory of its user's that passes the
 * descriptor's checks, here a private one standing for ~/.ssh, where it
 * made its key and swept the user's old ".tmp-" file. The name is looked
 * up once now, so nothing done to it after leads elsewhere. */
Test(cache, dir_swapped_after_its_check_is_not_followed, .fini = cleanup)
{
    amp_accelerator_info none;
    memset(&none, 0, sizeof none);
    setup_tree(none);
    char priv[PATH_MAX + 8], precious[PATH_MAX + 32], key[PATH_MAX + 16];
    snprintf(priv, sizeof priv, "%s/private", g_root);
    snprintf(precious, sizeof precious, "%s/.tmp-precious", priv);
    snprintf(key, sizeof key, "%s/.key", priv);
    cr_assert_eq(mkdir(priv, 0700), 0);
    write_file(precious, "mine\n", 5);
    struct timespec old[2] = {{time(NULL) - 7200, 0}, {time(NULL) - 7200, 0}};
    cr_assert_eq(utimensat(AT_FDCWD, precious, old, 0), 0);
    cr_assert_eq(mkdir(g_cache, 0700), 0);
    snprintf(g_swap_at, sizeof g_swap_at, "%s", g_cache);
    snprintf(g_swap_to, sizeof g_swap_to, "%s", priv);
    amp_cache_info ci = cache_info();
    g_swap_at[0] = '\0';
    cr_assert(g_swapped, "the attacker never acted: no look-up of %s reached the test's lstat, fstatat or openat",
              g_cache);
    cr_assert(!exists(key), "the cache followed a link put at %s after it was looked at (%s)", g_cache, ci.dir);
    cr_assert(exists(precious), "a file of the user's in the directory the link led to was swept");
    cr_assert(ci.disk_enabled || g_swapped, "the untouched cache directory was refused: %s", ci.reason);
}

/* A link of ours (or root's) at the cache directory's name, in a
 * directory others may write: its owner does not say who put it there,
 * since whoever may write the directory can rename a link of ours into it
 * (or hard-link one, protected_hardlinks off). Followed, it led the cache
 * into a private directory of the user's, standing for ~/.ssh, where the
 * key was made and the user's old ".tmp-" file swept. */
Test(cache, our_link_in_a_directory_others_may_write_is_not_followed, .fini = cleanup)
{
    amp_accelerator_info none;
    memset(&none, 0, sizeof none);
    setup_tree(none);
    char shared[PATH_MAX + 8], link_path[PATH_MAX + 16], priv[PATH_MAX + 8], precious[PATH_MAX + 32],
        key[PATH_MAX + 16];
    snprintf(shared, sizeof shared, "%s/shared", g_root);
    snprintf(link_path, sizeof link_path, "%s/cache", shared);
    snprintf(priv, sizeof priv, "%s/private", g_root);
    snprintf(precious, sizeof precious, "%s/.tmp-precious", priv);
    snprintf(key, sizeof key, "%s/.key", priv);
    cr_assert_eq(mkdir(shared, 0700), 0);
    cr_assert_eq(chmod(shared, 0777), 0); /* not sticky: anyone may rename in it */
    cr_assert_eq(mkdir(priv, 0700), 0);
    write_file(precious, "mine\n", 5);
    struct timespec old[2] = {{time(NULL) - 7200, 0}, {time(NULL) - 7200, 0}};
    cr_assert_eq(utimensat(AT_FDCWD, precious, old, 0), 0);
    cr_assert_eq(symlink(priv, link_path), 0, "symlink: %s", strerror(errno));
    cr_assert_eq(setenv("AMP_CACHE_DIR", link_path, 1), 0);
    amp_cache_info ci = cache_info();
    cr_assert(!exists(key), "the cache followed a link in a directory anyone may write into %s", priv);
    cr_assert(exists(precious), "a file of the user's in the directory the link led to was swept");
    cr_assert(!ci.disk_enabled, "the link was accepted");
    cr_assert(strstr(ci.reason, "symbolic link") && strstr(ci.reason, "mode 0777") &&
                  strstr(ci.reason, "the path it leads to"),
              "the reason must name the directory's mode and the way out: %s", ci.reason);
}

/* ...and followed where only we may write the directory it is in (a new
 * process: the cache directory is decided once). */
Test(cache, our_link_in_a_directory_only_we_may_write_is_followed, .fini = cleanup)
{
    amp_accelerator_info none;
    memset(&none, 0, sizeof none);
    setup_tree(none);
    char mine[PATH_MAX + 8], link_path[PATH_MAX + 16], priv[PATH_MAX + 8], key[PATH_MAX + 16];
    snprintf(mine, sizeof mine, "%s/mine", g_root);
    snprintf(link_path, sizeof link_path, "%s/cache", mine);
    snprintf(priv, sizeof priv, "%s/private", g_root);
    snprintf(key, sizeof key, "%s/.key", priv);
    cr_assert_eq(mkdir(mine, 0755), 0);
    cr_assert_eq(chmod(mine, 0755), 0);
    cr_assert_eq(mkdir(priv, 0700), 0);
    cr_assert_eq(symlink(priv, link_path), 0, "symlink: %s", strerror(errno));
    cr_assert_eq(setenv("AMP_CACHE_DIR", link_path, 1), 0);
    amp_cache_info ci = cache_info();
    cr_assert(ci.disk_enabled, "a link of ours in a directory only we may write was refused: %s", ci.reason);
    cr_assert(exists(key), "the cache did not go where the link leads");
}

/* Build directories are swept when their pid is gone, but a pid gone here
 * may be alive in another PID namespace sharing TMPDIR (a container): a
 * directory whose maker holds its lock (as every live process's are held)
 * stays, and one nobody holds goes. The sweep runs in the helper's first
 * compile. */
Test(cache, sweep_leaves_a_directory_its_maker_holds, .fini = cleanup, .timeout = 120)
{
    amp_accelerator *acc = setup_tree_cpu();
    amp_accelerator_info in = info_of(acc);
    char tmp[PATH_MAX + 8], held[PATH_MAX + 64], left[PATH_MAX + 64], file[PATH_MAX + 96], tmpenv[PATH_MAX + 16];
    snprintf(tmp, sizeof tmp, "%s/tmp", g_root);
    cr_assert_eq(mkdir(tmp, 0700), 0);
    pid_t gone = 0;
    for (pid_t p = 4000000; p > 300000 && !gone; --p)
        if (kill(p, 0) != 0 && errno == ESRCH) gone = p;
    cr_assert_gt(gone, 0, "found no unused pid");
    snprintf(held, sizeof held, "%s/hipamp-cpu-%ld-held00", tmp, (long)gone);
    snprintf(left, sizeof left, "%s/hipamp-pch-%ld-left00", tmp, (long)gone);
    cr_assert_eq(mkdir(held, 0700), 0);
    cr_assert_eq(mkdir(left, 0700), 0);
    snprintf(file, sizeof file, "%s/kernel.cpp", held);
    write_file(file, "// being compiled\n", 18);
    snprintf(file, sizeof file, "%s/amp_lib.hpp", left);
    write_file(file, "// left by a dead process\n", 26);
    int fd = open(held, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    cr_assert_geq(fd, 0);
    cr_assert_eq(flock(fd, LOCK_EX | LOCK_NB), 0, "flock: %s", strerror(errno));
    snprintf(tmpenv, sizeof tmpenv, "TMPDIR=%s", tmp);
    RUN_HELPER_OK(in.device_path, .extra_env = tmpenv);
    close(fd);
    cr_assert(!exists(left), "the sweep did not run (a dead process's directory is still there)");
    snprintf(file, sizeof file, "%s/kernel.cpp", held);
    cr_assert(exists(file), "the sweep removed a directory its (live) maker holds, as a build of another PID "
              "namespace's process would see");
}

/* What the sweep removes: only directories of this user (one of uid 65534
 * named like a dead process's build directory stays), and never through a
 * link: the links in a dead process's directory go, what they lead to
 * stays. */
Test(cache, sweep_follows_no_link_and_takes_no_other_users_directory, .fini = cleanup, .timeout = 120)
{
    if (geteuid() != 0) cr_skip_test("needs root to make a directory owned by another user (uid 65534)");
    amp_accelerator *acc = setup_tree_cpu();
    amp_accelerator_info in = info_of(acc);
    char tmp[PATH_MAX + 8], dead[PATH_MAX + 64], theirs[PATH_MAX + 64], file[PATH_MAX + 96], keep[PATH_MAX + 16],
        keep_dir[PATH_MAX + 16], tmpenv[PATH_MAX + 16];
    snprintf(tmp, sizeof tmp, "%s/tmp", g_root);
    cr_assert_eq(mkdir(tmp, 0700), 0);
    pid_t gone = 0;
    for (pid_t p = 4000000; p > 300000 && !gone; --p)
        if (kill(p, 0) != 0 && errno == ESRCH) gone = p;
    cr_assert_gt(gone, 0, "found no unused pid");
    snprintf(keep, sizeof keep, "%s/precious", g_root);
    write_file(keep, "mine\n", 5);
    snprintf(keep_dir, sizeof keep_dir, "%s/keepdir", g_root);
    cr_assert_eq(mkdir(keep_dir, 0700), 0);
    snprintf(file, sizeof file, "%s/inside", keep_dir);
    write_file(file, "mine\n", 5);
    snprintf(dead, sizeof dead, "%s/hipamp-cpu-%ld-dead00", tmp, (long)gone);
    cr_assert_eq(mkdir(dead, 0700), 0);
    snprintf(file, sizeof file, "%s/kernel.so", dead);
    cr_assert_eq(symlink(keep, file), 0);
    snprintf(file, sizeof file, "%s/sub", dead);
    cr_assert_eq(symlink(keep_dir, file), 0);
    snprintf(theirs, sizeof theirs, "%s/hipamp-pch-%ld-their0", tmp, (long)gone);
    cr_assert_eq(mkdir(theirs, 0700), 0);
    snprintf(file, sizeof file, "%s/amp_lib.hpp", theirs);
    write_file(file, "theirs\n", 7);
    cr_assert_eq(chown(file, 65534, 65534), 0);
    cr_assert_eq(chown(theirs, 65534, 65534), 0);
    snprintf(tmpenv, sizeof tmpenv, "TMPDIR=%s", tmp);
    RUN_HELPER_OK(in.device_path, .extra_env = tmpenv);
    cr_assert(!exists(dead), "the sweep did not run (a dead process's directory is still there)");
    cr_assert(exists(keep), "the sweep removed a file through a link in a dead process's directory");
    snprintf(file, sizeof file, "%s/inside", keep_dir);
    cr_assert(exists(file), "the sweep emptied a directory through a link in a dead process's directory");
    snprintf(file, sizeof file, "%s/amp_lib.hpp", theirs);
    cr_assert(exists(file), "the sweep removed another user's directory named like a dead process's");
}

/* A module built with -fsanitize=address by a process that had ASan's
 * runtime (allowed there) is stored; a process without the runtime asking
 * for the same build must not load it (ASan's runtime, loaded by dlopen
 * late, ends the process) and gets the option refused instead. Where this
 * test's own build has ASan (the sanitizer pass), every process has the
 * runtime and the second build succeeds. */
Test(cache, sanitizer_module_from_the_cache_never_ends_a_process_without_its_runtime, .fini = cleanup,
     .timeout = 180)
{
    amp_accelerator *acc = setup_tree_cpu();
    (void)acc;
    char cmd[PATH_MAX + 64], lib[PATH_MAX] = "";
    snprintf(cmd, sizeof cmd, "%s -print-file-name=libasan.so 2>/dev/null", g_cxx);
    FILE *f = popen(cmd, "r");
    if (f) {
        if (!fgets(lib, sizeof lib, f)) lib[0] = '\0';
        pclose(f);
    }
    lib[strcspn(lib, "\n")] = '\0';
    if (lib[0] != '/' || access(lib, R_OK) != 0) cr_skip_test("the host compiler has no libasan.so (%s)", lib);
    char preload[PATH_MAX + 16];
    snprintf(preload, sizeof preload, "LD_PRELOAD=%s", lib);
    /* with the runtime: built, stored and run */
    RUN_HELPER_OK("cpu", .options = "-fsanitize=address", .extra_env = preload,
                  .extra_env2 = "ASAN_OPTIONS=detect_leaks=0");
    const bool asan_here = dlsym(RTLD_DEFAULT, "__asan_init") != NULL;
    int rc = wait_helper(spawn_helper("cpu", (run_opts){.options = "-fsanitize=address",
                                                        .extra_env = "ASAN_OPTIONS=detect_leaks=0"}));
    if (asan_here) cr_assert_eq(rc, 0, "with ASan in every process: exit %d (%s)", rc, exit_meaning(rc));
    else cr_assert_eq(rc, 3, "without ASan: exit %d (%s), not 3 (the build refused)", rc, exit_meaning(rc));
}

/* A corrupt entry (a byte of its code changed, its MAC no longer
 * matching; or cut short) is refused, removed and rebuilt, and
 * amp_cache_get_info names it and says what is wrong: it was refused
 * silently, only counted. */
Test(cache, corrupt_entry_is_named, .fini = cleanup)
{
    amp_accelerator *acc = setup_tree_cpu();
    build_probe_here(acc);
    char path[PATH_MAX];
    struct stat st;
    one_entry(path, &st);
    size_t n = 0;
    unsigned char *e = read_all(path, &n);
    e[n / 2] ^= 0x5a;
    unlink(path);
    write_file(path, e, n);
    chmod(path, 0600);
    ASSERT_OK(amp_cache_clear_memory());
    build_probe_here(acc);
    amp_cache_info ci = cache_info();
    cr_assert_eq(ci.disk_rejected, 1);
    cr_assert(strstr(ci.last_uncacheable, strrchr(path, '/') + 1) && strstr(ci.last_uncacheable, "MAC"),
              "a corrupt entry was refused without a word (last_uncacheable: \"%s\")", ci.last_uncacheable);
    /* Cut short: its size disagrees with its header. */
    one_entry(path, &st);
    cr_assert_eq(truncate(path, st.st_size - 7), 0);
    ASSERT_OK(amp_cache_clear_memory());
    build_probe_here(acc);
    ci = cache_info();
    cr_assert_eq(ci.disk_rejected, 2);
    cr_assert(strstr(ci.last_uncacheable, strrchr(path, '/') + 1) && strstr(ci.last_uncacheable, "bytes"),
              "a truncated entry was refused without a word (last_uncacheable: \"%s\")", ci.last_uncacheable);
    free(e);
}

/* The review's: someone clearing the cache removed its key while a
 * process ran; the next process made a new key, and from then on the two
 * removed each other's entries as forged (their MACs, under the other
 * key, did not match) for as long as the first lived. Now the process
 * whose key is gone removes nothing its key does not verify and stores
 * nothing more, saying so. */
Test(cache, a_key_removed_while_a_process_runs_costs_the_others_nothing, .fini = cleanup, .timeout = 120)
{
    amp_accelerator *acc = setup_tree_cpu();
    amp_accelerator_info in = info_of(acc);
    build_probe_here(acc); /* reads the key, stores an entry */
    char key[PATH_MAX + 8], entry[PATH_MAX];
    struct stat st, now;
    snprintf(key, sizeof key, "%s/.key", g_cache);
    one_entry(entry, &st);
    cr_assert_eq(unlink(key), 0);
    cr_assert_eq(unlink(entry), 0);
    RUN_HELPER_OK(in.device_path); /* a new key, and the same entry made under it */
    one_entry(entry, &st);
    ASSERT_OK(amp_cache_clear_memory());
    build_probe_here(acc); /* its MAC does not match this process's old key */
    cr_assert_eq(stat(entry, &now), 0, "the process holding the old key removed the entry made under the new one");
    cr_assert(same_file_unchanged(&st, &now), "the process holding the old key replaced the entry made under the new one");
    amp_cache_info ci = cache_info();
    cr_assert(strstr(ci.last_uncacheable, "removed or replaced"), "last_uncacheable: %s", ci.last_uncacheable);
    /* A kernel new to the cache: not stored under the old key. */
    uint64_t stores = ci.disk_stores;
    write_probe_source("// another\n");
    build_probe_here(acc);
    cr_assert_eq(cache_info().disk_stores, stores, "an entry was stored under a key no other process has");
    walk w = scan_cache();
    cr_assert_eq(w.entries, 1, "entries:%s", w.names);
    /* The next process loads the entry made under the new key. */
    write_probe_source("");
    int compiles = compiles_logged();
    RUN_HELPER_OK(in.device_path);
    cr_assert_eq(compiles_logged(), compiles, "the next process compiled instead of loading the entry");
}

/* The review's: a process killed while storing left its ".tmp-" file for
 * an hour (a CPU precompiled header's is 15 MB), whatever the next
 * process found. A writer locks its temporary until it closes it, so the
 * sweep removes an unlocked one of this host's a few seconds old, and
 * never one a live writer holds, however old. Another host's (its name's
 * tag: a network file system's locks may be seen only where taken) goes
 * by the hour, as before. */
Test(cache, the_sweep_tells_a_dead_writers_temporary_from_a_live_ones, .fini = cleanup, .timeout = 120)
{
    amp_accelerator *acc = setup_tree_cpu();
    amp_accelerator_info in = info_of(acc);
    build_probe_here(acc); /* makes the directory and the key */
    char host[256] = "", dead[PATH_MAX + 64], live[PATH_MAX + 64], other[PATH_MAX + 64];
    cr_assert_eq(gethostname(host, sizeof host - 1), 0);
    uint32_t h = 2166136261u; /* the tag: FNV-1a of the host's name */
    for (const char *c = host; *c; ++c) h = (h ^ (uint8_t)*c) * 16777619u;
    snprintf(dead, sizeof dead, "%s/.tmp-%08x-1-deadwriter", g_cache, (unsigned)h);
    snprintf(live, sizeof live, "%s/.tmp-%08x-2-livewriter", g_cache, (unsigned)h);
    snprintf(other, sizeof other, "%s/.tmp-%08x-3-otherhost", g_cache, (unsigned)(h ^ 1u));
    write_file(dead, "half an entry", 13);
    write_file(live, "being written", 13);
    write_file(other, "another host", 12);
    struct timespec t[2] = {{time(NULL) - 30, 0}, {time(NULL) - 30, 0}};
    cr_assert_eq(utimensat(AT_FDCWD, dead, t, 0), 0);
    cr_assert_eq(utimensat(AT_FDCWD, other, t, 0), 0);
    t[0].tv_sec = t[1].tv_sec = time(NULL) - 7200;
    cr_assert_eq(utimensat(AT_FDCWD, live, t, 0), 0);
    int fd = open(live, O_RDONLY | O_CLOEXEC);
    cr_assert_geq(fd, 0);
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        close(fd);
        cr_skip_test("this file system takes no locks (%s): the sweep goes by age alone", strerror(errno));
    }
    RUN_HELPER_OK(in.device_path); /* a new process sweeps */
    close(fd);
    cr_assert(!exists(dead), "a dead writer's temporary (unlocked, 30 s old) was left");
    cr_assert(exists(live), "the sweep removed a temporary its writer still holds");
    cr_assert(exists(other), "the sweep removed another host's temporary 30 s old, whose lock it may not see");
}

/* A cache directory whose path is longer than PATH_MAX turns the disk
 * cache off, saying so; it was cut short silently into the name of
 * another directory, which the cache then used. */
Test(cache, a_cache_path_longer_than_path_max_turns_the_cache_off)
{
    enum { LEN = PATH_MAX + 200 };
    char *dir = test_xmalloc(LEN + 1);
    strcpy(dir, "/tmp/");
    for (size_t i = strlen(dir); i < LEN; ++i) dir[i] = i % 100 == 99 ? '/' : 'a';
    dir[LEN] = '\0';
    cr_assert_eq(setenv("AMP_CACHE_DIR", dir, 1), 0);
    amp_cache_info ci = cache_info();
    cr_assert_not(ci.disk_enabled, "a cache directory of %d bytes was used: %s", LEN, ci.dir);
    cr_assert(strstr(ci.reason, "longer than"), "the cache is off without saying why: \"%s\"", ci.reason);
    free(dir);
}

/* Session 105's: a reason naming a path of more than 512 bytes was cut at
 * the field's end, losing what went wrong ("...aaaa/aaa" and nothing
 * else), and dir was cut without a mark. Now both keep their start and end
 * around a mark of what was cut. */
Test(cache, a_long_cache_path_keeps_the_end_of_the_reason, .fini = cleanup)
{
    snprintf(g_root, sizeof g_root, "%s/hipamp-cache-test-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    cr_assert_not_null(mkdtemp(g_root), "mkdtemp: %s", strerror(errno));
    char dir[PATH_MAX];
    int n = snprintf(dir, sizeof dir, "%s", g_root);
    for (int i = 0; i < 12; ++i) { /* 12 levels of 100 bytes: a path of about 1250 */
        n += snprintf(dir + n, sizeof dir - (size_t)n, "/%c", 'a' + i);
        for (int k = 0; k < 99; ++k) dir[n++] = (char)('a' + i);
        dir[n] = 0;
        cr_assert_eq(mkdir(dir, 0700), 0, "mkdir: %s", strerror(errno));
    }
    cr_assert_eq(chmod(dir, 0770), 0);
    cr_assert_eq(setenv("AMP_CACHE_DIR", dir, 1), 0);
    amp_cache_info ci = cache_info();
    cr_assert_not(ci.disk_enabled, "a group-writable cache directory was used");
    cr_assert_str_eq(amp_cache_dir(), dir, "amp_cache_dir() gives the whole path");
    cr_assert(strstr(ci.reason, "bytes cut ...] "), "no mark of the cut: %s", ci.reason);
    const char *tail = "is writable by its group (mode 0770); set AMP_CACHE_SHARED=group to trust the group with "
                       "running code in this process";
    size_t r = strlen(ci.reason);
    cr_assert(r >= strlen(tail) && !strcmp(ci.reason + r - strlen(tail), tail), "the reason lost its end: %s",
              ci.reason);
    cr_assert(!strncmp(ci.reason, "cache directory ", 16) && strstr(ci.reason, g_root), "the reason's start: %s",
              ci.reason);
    size_t d = strlen(ci.dir);
    cr_assert_lt(d, sizeof ci.dir);
    cr_assert(!strncmp(ci.dir, dir, 100) && strstr(ci.dir, "bytes cut ...] ") &&
                  !strcmp(ci.dir + d - 200, dir + strlen(dir) - 200),
              "dir keeps the path's start and end around the mark: %s", ci.dir);
}

/* An entry written by anyone who cannot read the key (here: its MAC made
 * under another key) fails verification: counted, deleted, never loaded,
 * rebuilt. */
Test(cache, entry_with_foreign_mac_is_never_loaded, .fini = cleanup)
{
    amp_accelerator *acc = setup_tree_cpu();
    amp_accelerator_info in = info_of(acc);
    char marker[PATH_MAX + 16];
    snprintf(marker, sizeof marker, "%s/MARKER", g_root);
    cr_assert_eq(setenv("HIPAMP_TEST_MARKER", marker, 1), 0);
    build_probe_here(acc);
    char path[PATH_MAX];
    struct stat st;
    one_entry(path, &st);
    unsigned char other_key[32];
    for (int i = 0; i < 32; ++i) other_key[i] = (unsigned char)(i * 37 + 11);
    size_t mn = 0;
    void *planted = marker_object(&mn);
    forge_entry(path, other_key, planted, mn);
    int compiles = compiles_logged();
    ASSERT_OK(amp_cache_clear_memory());
    build_probe_here(acc);
    cr_assert(!exists(marker), "an entry with a foreign MAC was loaded");
    cr_assert_eq(compiles_logged(), compiles + 1, "the forged entry should have been rebuilt");
    cr_assert_eq(cache_info().disk_rejected, 1);
    /* The rebuilt entry is valid for the next process. */
    one_entry(path, &st);
    assert_entry_valid(in.device_path, path);
    free(planted);
}

/* Entries that are not regular files: a FIFO (reading it would block
 * forever) and a symlink to an entry elsewhere. Both are refused at once. */
ACCEL_TEST(cache, fifo_and_symlink_entries_are_refused, .fini = cleanup, .timeout = 60)
{
    amp_accelerator_info in = info_of(acc);
    setup_tree(in);
    RUN_HELPER_OK(in.device_path);
    char path[PATH_MAX];
    struct stat st;
    one_entry(path, &st);
    char saved[PATH_MAX + 8];
    snprintf(saved, sizeof saved, "%s/saved-entry", g_root);
    cr_assert_eq(rename(path, saved), 0);
    cr_assert_eq(mkfifo(path, 0600), 0, "mkfifo: %s", strerror(errno));
    RUN_HELPER_OK(in.device_path);
    if (in.is_emulated) cr_assert_eq(compiles_logged(), 2, "the FIFO entry should have been rebuilt");
    one_entry(path, &st);
    cr_assert(S_ISREG(st.st_mode), "the FIFO was left in place");

    cr_assert_eq(unlink(path), 0);
    cr_assert_eq(symlink(saved, path), 0);
    RUN_HELPER_OK(in.device_path);
    if (in.is_emulated) cr_assert_eq(compiles_logged(), 3, "the symlinked entry should have been refused");
    cr_assert_eq(lstat(path, &st), 0);
    cr_assert(S_ISREG(st.st_mode), "the symlink entry was left in place");
}

/* A refused entry says why in amp_cache_get_info, as every refusal does:
 * a symbolic link and an empty directory at an entry's name were only
 * counted. In this process: the memory cache cleared between builds. */
Test(cache, a_link_or_an_empty_directory_at_an_entrys_name_is_named, .fini = cleanup, .timeout = 120)
{
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    setup_tree(info_of(acc));
    const char *src = "AMP_KERNEL(named_k, amp::index<1> i, amp::array_view<int, 1> v) { v[i] = 3; }\n";
    amp_program *p = NULL;
    ASSERT_OK(amp_program_build(acc, src, NULL, &p));
    ASSERT_OK(amp_program_destroy(p));
    char path[PATH_MAX];
    struct stat st;
    one_entry(path, &st);
    char saved[PATH_MAX + 8];
    snprintf(saved, sizeof saved, "%s/saved-entry", g_root);
    cr_assert_eq(rename(path, saved), 0);
    cr_assert_eq(symlink(saved, path), 0);
    ASSERT_OK(amp_cache_clear_memory());
    ASSERT_OK(amp_program_build(acc, src, NULL, &p));
    ASSERT_OK(amp_program_destroy(p));
    amp_cache_info ci;
    ASSERT_OK(amp_cache_get_info(&ci));
    cr_assert(strstr(ci.last_uncacheable, "is a symbolic link"), "no reason for the refused link: '%s'",
              ci.last_uncacheable);
    one_entry(path, &st);
    cr_assert_eq(unlink(path), 0);
    cr_assert_eq(mkdir(path, 0700), 0);
    ASSERT_OK(amp_cache_clear_memory());
    ASSERT_OK(amp_program_build(acc, src, NULL, &p));
    ASSERT_OK(amp_program_destroy(p));
    ASSERT_OK(amp_cache_get_info(&ci));
    cr_assert(strstr(ci.last_uncacheable, "was an empty directory"), "no reason for the empty directory: '%s'",
              ci.last_uncacheable);
    unlink(saved);
}

/* The /tmp fallback (no AMP_CACHE_DIR, XDG_CACHE_HOME or HOME): a symlink
 * there is refused (another user could have made it); else it is made 0700
 * by us. Each test removes what it made, so the other finds it absent. */
static void fallback_env(char *path, size_t n)
{
    unsetenv("AMP_CACHE_DIR");
    unsetenv("XDG_CACHE_HOME");
    unsetenv("HOME");
    snprintf(path, n, "/tmp/hipamp-cache-%d", (int)geteuid());
}

/* A fallback directory left by an earlier program of ours (hipamp-info
 * under env -i makes one) is moved aside for the test and put back after,
 * so that the symlink case always runs. */
static char g_aside[96];
static void fallback_aside(const char *path)
{
    struct stat st;
    g_aside[0] = 0;
    if (lstat(path, &st) != 0) return;
    if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid())
        cr_skip_test("%s exists and is not our directory; the symlink case needs it absent", path);
    snprintf(g_aside, sizeof g_aside, "%s.aside-%d", path, (int)getpid());
    if (rename(path, g_aside) != 0) {
        g_aside[0] = 0;
        cr_skip_test("%s exists and cannot be moved aside: %s", path, strerror(errno));
    }
}
static void fallback_restore(void)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/hipamp-cache-%d", (int)geteuid());
    if (g_aside[0] && rename(g_aside, path) != 0)
        fprintf(stderr, "test_cache: could not put %s back to %s: %s\n", g_aside, path, strerror(errno));
    g_aside[0] = 0;
}

Test(cache, tmp_fallback_symlink_is_refused, .fini = fallback_restore)
{
    char path[64];
    fallback_env(path, sizeof path);
    fallback_aside(path);
    char target[] = "/tmp/hipamp-cache-target-XXXXXX";
    cr_assert_not_null(mkdtemp(target));
    cr_assert_eq(symlink(target, path), 0);
    amp_cache_info ci = cache_info();
    unlink(path);
    rmdir(target);
    cr_assert(!ci.disk_enabled, "a symlink at the /tmp fallback was followed");
    cr_assert(strstr(ci.reason, path), "reason should name the path: %s", ci.reason);
}

Test(cache, tmp_fallback_is_made_private)
{
    char path[64];
    fallback_env(path, sizeof path);
    cr_assert_str_eq(amp_cache_dir(), path);
    struct stat st;
    if (lstat(path, &st) == 0) {
        /* Left by another program: it is used only if it is ours and 0700. */
        amp_cache_info ci = cache_info();
        bool fine = S_ISDIR(st.st_mode) && st.st_uid == geteuid() && (st.st_mode & 0777) == 0700;
        cr_assert_eq(ci.disk_enabled, fine, "existing %s (mode %o, uid %d): enabled %d, reason %s", path,
                     st.st_mode & 0777, (int)st.st_uid, ci.disk_enabled, ci.reason);
        return;
    }
    amp_cache_info ci = cache_info();
    cr_assert(ci.disk_enabled, "fallback refused: %s", ci.reason);
    cr_assert_eq(lstat(path, &st), 0);
    bool fine = S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700;
    char cmd[96];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
    cr_expect_eq(system(cmd), 0, "%s", cmd);
    cr_assert(fine, "fallback mode %o", st.st_mode & 0777);
}

/* A header found through -I is part of the key: editing it rebuilds, in a
 * new process and in the same one. */
ACCEL_TEST(cache, changed_header_rebuilds, .fini = cleanup)
{
    amp_accelerator_info in = info_of(acc);
    setup_tree(in);
    char inc[PATH_MAX + 8], hdr[PATH_MAX + 32], opts[PATH_MAX + 16];
    snprintf(inc, sizeof inc, "%s/inc", g_root);
    snprintf(hdr, sizeof hdr, "%s/probe_add.h", inc);
    snprintf(opts, sizeof opts, "-I%s", inc);
    cr_assert_eq(mkdir(inc, 0700), 0);
    write_probe_source("#include \"probe_add.h\"\n#define CACHE_PROBE_ADD PROBE_ADD\n");
    write_file(hdr, "#define PROBE_ADD 5\n", strlen("#define PROBE_ADD 5\n"));
    RUN_HELPER_OK(in.device_path, .options = opts, .extra_env = "HIPAMP_HELPER_EXPECT_ADD=5");
    RUN_HELPER_OK(in.device_path, .options = opts, .extra_env = "HIPAMP_HELPER_EXPECT_ADD=5");
    if (in.is_emulated) cr_assert_eq(compiles_logged(), 1, "an unchanged header should hit the cache");
    write_file(hdr, "#define PROBE_ADD 9\n", strlen("#define PROBE_ADD 9\n"));
    RUN_HELPER_OK(in.device_path, .options = opts, .extra_env = "HIPAMP_HELPER_EXPECT_ADD=9");
    if (in.is_emulated) cr_assert_eq(compiles_logged(), 2, "the changed header should have rebuilt");
    cr_assert_eq(scan_cache().entries, 2);

    /* In one process: build, edit the header, build again. */
    size_t n = 0;
    char *src = read_all(g_src, &n);
    src = realloc(src, n + 1);
    src[n] = '\0';
    int results[2];
    for (int round = 0; round < 2; ++round) {
        char def[64];
        int val = round ? 13 : 11;
        snprintf(def, sizeof def, "#define PROBE_ADD %d\n", val);
        write_file(hdr, def, strlen(def));
        amp_program *p = NULL;
        ASSERT_OK(amp_program_build(acc, src, opts, &p));
        results[round] = probe_add(p);
        amp_program_destroy(p);
    }
    cr_assert_eq(results[0], 11);
    cr_assert_eq(results[1], 13, "the edited header was not picked up in the same process (got %d)", results[1]);
    free(src);
}

/* amp_program_build_file resolves quoted includes from the file's own
 * directory, and keys on them. */
ACCEL_TEST(cache, build_file_tracks_relative_include, .fini = cleanup)
{
    amp_accelerator_info in = info_of(acc);
    setup_tree(in);
    char hdr[PATH_MAX + 32];
    snprintf(hdr, sizeof hdr, "%s/probe_add.h", g_root);
    write_probe_source("#include \"probe_add.h\"\n#define CACHE_PROBE_ADD PROBE_ADD\n");
    write_file(hdr, "#define PROBE_ADD 3\n", strlen("#define PROBE_ADD 3\n"));
    RUN_HELPER_OK(in.device_path, .extra_env = "HIPAMP_HELPER_BUILD_FILE=1", .extra_env2 = "HIPAMP_HELPER_EXPECT_ADD=3");
    write_file(hdr, "#define PROBE_ADD 4\n", strlen("#define PROBE_ADD 4\n"));
    RUN_HELPER_OK(in.device_path, .extra_env = "HIPAMP_HELPER_BUILD_FILE=1", .extra_env2 = "HIPAMP_HELPER_EXPECT_ADD=4");
    cr_assert_eq(scan_cache().entries, 2, "two header versions, two entries");
}

/* A computed #include cannot be keyed: the build works but skips the disk
 * cache, and amp_cache_get_info says why. */
Test(cache, computed_include_is_not_cached)
{
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    char dir[] = "/tmp/hipamp-cache-computed-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char cache[PATH_MAX], hdr[PATH_MAX], src[2 * PATH_MAX];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    snprintf(hdr, sizeof hdr, "%s/computed.h", dir);
    cr_assert_eq(setenv("AMP_CACHE_DIR", cache, 1), 0);
    cr_assert_eq(setenv("AMP_CPU_PCH", "0", 1), 0); /* disk_stores counts modules here */
    FILE *f = fopen(hdr, "w");
    cr_assert_not_null(f);
    fputs("#define COMPUTED_ADD 2\n", f);
    fclose(f);
    snprintf(src, sizeof src,
             "#define COMPUTED_HEADER \"%s\"\n#include COMPUTED_HEADER\n"
             "AMP_KERNEL(add_computed, amp::index<1> i, amp::array_view<int, 1> d) { d[i] += COMPUTED_ADD; }\n", hdr);
    amp_program *p = test_build(acc, src);
    amp_cache_info ci = cache_info();
    cr_assert_eq(ci.uncacheable_builds, 1);
    cr_assert(strstr(ci.last_uncacheable, "computed #include"), "why: %s", ci.last_uncacheable);
    cr_assert_eq(ci.disk_stores, 0, "a build with an untracked header was stored");
    amp_program_destroy(p);
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0, "%s", cmd);
}

/* A header that is a FIFO is refused before anything reads it. */
Test(cache, fifo_header_is_refused_at_once, .timeout = 30)
{
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    char dir[] = "/tmp/hipamp-cache-fifo-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char fifo[PATH_MAX], opts[PATH_MAX + 8];
    snprintf(fifo, sizeof fifo, "%s/blocking.h", dir);
    snprintf(opts, sizeof opts, "-I%s", dir);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    amp_program *p = NULL;
    ASSERT_STATUS(amp_program_build(acc, "#include \"blocking.h\"\nAMP_KERNEL(k, amp::index<1> i, int x) {}\n", opts, &p),
                  AMP_ERROR_COMPILE);
    cr_assert_null(p);
    cr_assert(strstr(amp_last_error(), fifo) && strstr(amp_last_error(), "not a regular file"), "message: %s",
              amp_last_error());
    /* Only probed: the compiler would open it all the same. */
    ASSERT_STATUS(amp_program_build(acc, "#if __has_include(\"blocking.h\")\n#endif\nAMP_KERNEL(k, amp::index<1> i, int x) {}\n",
                                    opts, &p),
                  AMP_ERROR_COMPILE);
    cr_assert(strstr(amp_last_error(), fifo) && strstr(amp_last_error(), "not a regular file"), "message: %s",
              amp_last_error());
    unlink(fifo);
    rmdir(dir);
}

Test(cache, info_reports_a_disabled_cache)
{
    cr_assert_eq(setenv("AMP_CACHE_DIR", "off", 1), 0);
    amp_cache_info ci = cache_info();
    cr_assert(!ci.disk_enabled);
    cr_assert(strstr(ci.reason, "AMP_CACHE_DIR=off"), "reason: %s", ci.reason);
    ASSERT_STATUS(amp_cache_get_info(NULL), AMP_ERROR_INVALID_ARGUMENT);
}

/* AMP_CACHE_SHARED=group:N takes a gid in digits only, and never
 * (gid_t)-1 (no group has it: chown's "leave it as it is"); otherwise N is
 * a group's name. Anything else turns the disk cache off, saying so. */
Test(cache, shared_group_setting_takes_only_a_real_gid_or_name)
{
    const char *bad[] = {"group:4294967295", "group:+0", "group: 0", "group:-1", "group:"};
    char dir[] = "/tmp/hipamp-gid-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        pid_t pid = fork();
        cr_assert_neq(pid, -1);
        if (pid == 0) {
            setenv("AMP_CACHE_DIR", dir, 1);
            setenv("AMP_CACHE_SHARED", bad[i], 1);
            amp_cache_info ci;
            if (amp_cache_get_info(&ci) != AMP_OK) _exit(2);
            if (ci.disk_enabled) _exit(3);
            _exit(strstr(ci.reason, bad[i]) && strstr(ci.reason, "names no group") ? 0 : 4);
        }
        int status = 0;
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "AMP_CACHE_SHARED=%s: 3 the disk cache was used, 4 the reason does not name it (%d)", bad[i],
                  WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    }
    rmdir(dir);
}

Test(cache, info_reports_a_world_writable_cache)
{
    char dir[] = "/tmp/hipamp-cache-ww-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    cr_assert_eq(chmod(dir, 0777), 0);
    cr_assert_eq(setenv("AMP_CACHE_DIR", dir, 1), 0);
    amp_cache_info ci = cache_info();
    rmdir(dir);
    cr_assert(!ci.disk_enabled);
    cr_assert(strstr(ci.reason, "writable by every user") && strstr(ci.reason, dir), "reason: %s", ci.reason);
    cr_assert(!strstr(ci.reason, "AMP_CACHE_SHARED"), "sharing with a group cannot make this safe: %s", ci.reason);
}

Test(cache, info_reports_a_group_writable_cache)
{
    char dir[] = "/tmp/hipamp-cache-gw-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    cr_assert_eq(chmod(dir, 0770), 0);
    cr_assert_eq(setenv("AMP_CACHE_DIR", dir, 1), 0);
    amp_cache_info ci = cache_info();
    rmdir(dir);
    cr_assert(!ci.disk_enabled);
    cr_assert(strstr(ci.reason, "writable by its group") && strstr(ci.reason, "AMP_CACHE_SHARED=group") &&
                  strstr(ci.reason, dir),
              "reason: %s", ci.reason);
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

/* The review's: a relative XDG_CACHE_HOME turned the disk cache off ("is
 * not an absolute path", naming neither variable); the XDG specification
 * says to ignore it. A relative HOME is ignored too. */
Test(cache, dir_ignores_a_relative_XDG_CACHE_HOME_or_HOME)
{
    unsetenv("AMP_CACHE_DIR");
    cr_assert_eq(setenv("XDG_CACHE_HOME", ".cache", 1), 0);
    cr_assert_eq(setenv("HOME", "/tmp/hipamp-test-home2", 1), 0);
    cr_assert_str_eq(amp_cache_dir(), "/tmp/hipamp-test-home2/.cache/hipamp");
}

Test(cache, dir_ignores_a_relative_HOME)
{
    unsetenv("AMP_CACHE_DIR");
    unsetenv("XDG_CACHE_HOME");
    cr_assert_eq(setenv("HOME", "home", 1), 0);
    char want[64];
    snprintf(want, sizeof want, "/tmp/hipamp-cache-%d", (int)geteuid());
    cr_assert_str_eq(amp_cache_dir(), want);
}

/* The review's: when the cache directory itself could not be made, the
 * reason gave the walk's "No such file or directory" instead of mkdir's
 * error. /sys refuses new directories even to root. */
Test(cache, a_cache_directory_that_cannot_be_made_says_why)
{
    struct stat sb;
    if (stat("/sys", &sb) != 0 || !S_ISDIR(sb.st_mode)) cr_skip_test("no /sys here");
    char dir[64];
    snprintf(dir, sizeof dir, "/sys/hipamp-test-cache-%d", (int)getpid());
    if (mkdir(dir, 0700) == 0) {
        rmdir(dir);
        cr_skip_test("/sys takes new directories here");
    }
    int e = errno;
    if (e == ENOENT) cr_skip_test("mkdir in /sys says ENOENT here: the reason cannot tell the two apart");
    cr_assert_eq(setenv("AMP_CACHE_DIR", dir, 1), 0);
    amp_cache_info ci = cache_info();
    cr_assert_not(ci.disk_enabled);
    cr_assert(strstr(ci.reason, dir) && strstr(ci.reason, strerror(e)) && !strstr(ci.reason, strerror(ENOENT)),
              "mkdir said \"%s\"; reason: %s", strerror(e), ci.reason);
}

/* ------------------------------------ headers another user could plant
 * (issue 20, items 2 and 4). As root the planted files belong to uid 65534,
 * a second local user, as the attacker's would; otherwise to us (the cases
 * that need another owner skip). */

static void plant(const char *path, const char *text)
{
    write_file(path, text, strlen(text));
    if (geteuid() == 0) cr_assert_eq(chown(path, 65534, 65534), 0, "chown %s: %s", path, strerror(errno));
}

/* A directory every user may add to, as /tmp is (sticky, mode 1777). */
static void make_shared_dir(const char *path)
{
    cr_assert_eq(mkdir(path, 0700), 0, "mkdir %s: %s", path, strerror(errno));
    cr_assert_eq(chmod(path, 01777), 0);
}

/* Build the kernel file at path and return its probe_add; or -1000000
 * with *st the failed status. */
static int probe_file_result(amp_accelerator *acc, const char *path, const char *options, amp_status *st)
{
    amp_program *p = NULL;
    if ((*st = amp_program_build_file(acc, path, options, &p)) != AMP_OK) return -1000000;
    int add = probe_add(p);
    amp_program_destroy(p);
    return add;
}

static void write_probe_file(const char *path, const char *head)
{
    size_t n = strlen(head) + strlen(test_kernels_cache_probe) + PATH_MAX + 16;
    char *src = malloc(n);
    cr_assert_not_null(src);
    snprintf(src, n, "// %s\n%s%s", g_root, head, test_kernels_cache_probe);
    write_file(path, src, strlen(src));
    free(src);
}

/* The attack of issue 20: ~/proj/kernels/k.hip includes "../include/params.h";
 * the CPU compiler compiled a copy of the source in TMPDIR, so the name
 * meant TMPDIR/include/params.h, which any local user can create, and the
 * planted header was compiled in and loaded. It resolves beside the kernel
 * file now, as the include scan resolves it, whatever TMPDIR holds. */
Test(cache, relative_include_never_resolves_beside_the_temporary_copy, .fini = cleanup)
{
    amp_accelerator *acc = setup_tree_cpu();
    char tmp[PATH_MAX + 8], kernels[PATH_MAX + 32], inc[PATH_MAX + 32], path[PATH_MAX + 64];
    snprintf(tmp, sizeof tmp, "%s/tmp", g_root);
    make_shared_dir(tmp);
    snprintf(path, sizeof path, "%s/home", g_root);
    cr_assert_eq(mkdir(path, 0700), 0);
    snprintf(path, sizeof path, "%s/home/proj", g_root);
    cr_assert_eq(mkdir(path, 0700), 0);
    snprintf(kernels, sizeof kernels, "%s/home/proj/kernels", g_root);
    snprintf(inc, sizeof inc, "%s/home/proj/include", g_root);
    cr_assert_eq(mkdir(kernels, 0700), 0);
    cr_assert_eq(mkdir(inc, 0700), 0);
    snprintf(path, sizeof path, "%s/params.h", inc);
    write_file(path, "#define PARAM 1\n", 16);
    /* The attacker's header where the old resolution looked. */
    snprintf(path, sizeof path, "%s/include", tmp);
    cr_assert_eq(mkdir(path, 0755), 0);
    if (geteuid() == 0) cr_assert_eq(chown(path, 65534, 65534), 0);
    snprintf(path, sizeof path, "%s/include/params.h", tmp);
    plant(path, "#define PARAM 666\n");
    cr_assert_eq(setenv("TMPDIR", tmp, 1), 0);
    snprintf(path, sizeof path, "%s/k.hip", kernels);
    write_probe_file(path, "#include \"../include/params.h\"\n#define CACHE_PROBE_ADD PARAM\n");

    amp_status st;
    int got = probe_file_result(acc, path, NULL, &st);
    cr_assert_eq(st, AMP_OK, "build: %s: %s", amp_status_name(st), amp_last_error());
    cr_assert_neq(got, 666, "the header planted in TMPDIR was compiled in and loaded");
    cr_assert_eq(got, 1, "the kernel did not use ../include/params.h beside it (got %d)", got);
    /* A second process, through the disk cache or not, agrees. */
    RUN_HELPER_OK("cpu", .source = path, .extra_env = "HIPAMP_HELPER_BUILD_FILE=1",
                  .extra_env2 = "HIPAMP_HELPER_EXPECT_ADD=1");
}

/* Files a kernel's inline asm reads (.incbin, .include) go through the
 * checks and stamps the preprocessor's headers do: before, only the
 * preprocessor's list was checked, so an edited .incbin file loaded the
 * stale module, a relative one was read from the working directory, and
 * another user's assembly file was assembled in and ran. */
static void write_asm_probe(const char *path, const char *directive, const char *file)
{
    char head[2 * PATH_MAX];
    snprintf(head, sizeof head,
             "asm(\".section .rodata\\n.globl amp_t_blob\\namp_t_blob:\\n%s \\\"%s\\\"\\n.previous\\n\");\n"
             "extern \"C\" const int amp_t_blob[1];\n#define CACHE_PROBE_ADD amp_t_blob[0]\n",
             directive, file);
    write_probe_file(path, head);
}

/* Whether the compiler (the test's wrapper of it) fails to link a one-line
 * shared object with -flto by itself, outside the library: a toolchain
 * without LTO's programs (a GPU host's /opt/gcc/bin/g++ stopped with "ld:
 * error: could not run lto-wrapper", where Ubuntu's own g++ on the same
 * host links). Its output's first line into why. */
static bool compiler_cannot_lto(const char *dir, char *why, size_t cap)
{
    char cmd[3 * PATH_MAX];
    snprintf(cmd, sizeof cmd, "printf 'int f() { return 1; }\\n' | '%s' -flto -O2 -fPIC -shared -x c++ - -o '%s/lto.so' 2>&1",
             g_cxx, dir);
    FILE *f = popen(cmd, "r");
    cr_assert_not_null(f, "popen: %s", strerror(errno));
    why[0] = '\0';
    if (!fgets(why, (int)cap, f)) snprintf(why, cap, "(no output)");
    why[strcspn(why, "\n")] = '\0';
    char rest[256];
    while (fgets(rest, sizeof rest, f)) {}
    int ws = pclose(f);
    return !(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
}

static void asm_reads_are_checked_and_keyed(bool clang)
{
    amp_accelerator *acc = setup_tree_cpu();
    char dir[PATH_MAX + 16], blob[PATH_MAX + 32], path[PATH_MAX + 64];
    snprintf(dir, sizeof dir, "%s/asm", g_root);
    cr_assert_eq(mkdir(dir, 0700), 0);
    snprintf(blob, sizeof blob, "%s/blob.bin", dir);
    int v = 7;
    write_file(blob, &v, sizeof v);
    snprintf(path, sizeof path, "%s/k.hip", dir);
    write_asm_probe(path, ".incbin", blob);
    amp_status st;
    int got = probe_file_result(acc, path, NULL, &st);
    cr_assert_eq(st, AMP_OK, "build: %s: %s", amp_status_name(st), amp_last_error());
    cr_assert_eq(got, 7);
    amp_cache_info ci = cache_info();
    cr_assert(strstr(ci.last_uncacheable, "blob.bin"), "last_uncacheable: \"%s\"", ci.last_uncacheable);
    /* edited: the next build reads it again (it loaded the stale module) */
    v = 9;
    write_file(blob, &v, sizeof v);
    got = probe_file_result(acc, path, NULL, &st);
    cr_assert_eq(st, AMP_OK, "build: %s: %s", amp_status_name(st), amp_last_error());
    cr_assert_eq(got, 9, "the module built from the old .incbin file was used (got %d)", got);

    /* a relative name: the working directory's file (there is one),
     * never read */
    char cwd[PATH_MAX];
    cr_assert_not_null(getcwd(cwd, sizeof cwd));
    cr_assert_eq(chdir(dir), 0);
    write_file("rel.bin", &v, sizeof v);
    snprintf(path, sizeof path, "%s/k2.hip", dir);
    write_asm_probe(path, ".incbin", "rel.bin");
    got = probe_file_result(acc, path, NULL, &st);
    cr_assert_eq(chdir(cwd), 0);
    cr_assert_eq(st, AMP_ERROR_COMPILE, "a relative .incbin: %s (got %d)", amp_status_name(st), got);
    cr_assert(strstr(amp_last_error(), "'rel.bin'") && strstr(amp_last_error(), "working directory"), "message: %s",
              amp_last_error());

    if (geteuid() != 0) return; /* another user's file needs root */
    char shared[PATH_MAX + 16], code[PATH_MAX + 32];
    snprintf(shared, sizeof shared, "%s/shared", g_root);
    make_shared_dir(shared);
    snprintf(code, sizeof code, "%s/code.s", shared);
    plant(code, ".long 666\n");
    snprintf(path, sizeof path, "%s/k3.hip", dir);
    write_asm_probe(path, ".include", code);
    got = probe_file_result(acc, path, NULL, &st);
    cr_assert_eq(st, AMP_ERROR_COMPILE, "uid 65534's assembly file was assembled in (%s, got %d)",
                 amp_status_name(st), got);
    cr_assert(strstr(amp_last_error(), "code.s") && strstr(amp_last_error(), "another user"), "message: %s",
              amp_last_error());

    /* under LTO the asm is assembled at link time: a build in parts listed
     * none of it (its link asked for no list), so the file was used */
    char src[2 * PATH_MAX];
    snprintf(src, sizeof src,
             "AMP_KERNEL(k1, amp::index<1> i, amp::array_view<int, 1> v) { asm volatile(\".pushsection "
             ".rodata\\n.include \\\"%s\\\"\\n.popsection\\n\"); v[i] = 1; }\n"
             "AMP_KERNEL(k2, amp::index<1> i, amp::array_view<int, 1> v) { v[i] = 2; }\n",
             code);
    snprintf(path, sizeof path, "%s/k4.hip", dir);
    write_file(path, src, strlen(src));
    cr_assert_eq(setenv("AMP_CPU_COMPILE_JOBS", "2", 1), 0);
    amp_program *p = NULL;
    st = amp_program_build_file(acc, path, "-flto -O2", &p);
    if (p) amp_program_destroy(p);
    if (clang) { /* clang's LTO assembles with its own assembler: refused */
        cr_assert_eq(st, AMP_ERROR_INVALID_ARGUMENT, "-flto with clang: %s", amp_status_name(st));
        cr_assert(strstr(amp_last_error(), "option '-flto' is refused with clang"), "message: %s", amp_last_error());
        return;
    }
    if (st != AMP_ERROR_COMPILE || !strstr(amp_last_error(), "code.s")) {
        char why[600];
        if (compiler_cannot_lto(dir, why, sizeof why))
            cr_skip_test("the other parts passed; the compiler cannot link with -flto here, so its part "
                         "cannot run: %s", why);
    }
    cr_assert_eq(st, AMP_ERROR_COMPILE, "uid 65534's assembly file was assembled in under -flto (%s)",
                 amp_status_name(st));
    cr_assert(strstr(amp_last_error(), "code.s") && strstr(amp_last_error(), "another user"), "message: %s",
              amp_last_error());
}

Test(cache, files_inline_asm_reads_are_checked_and_keyed, .fini = cleanup) { asm_reads_are_checked_and_keyed(false); }

/* The same with clang (AMP_CXX=clang++), whose integrated assembler reads
 * .incbin and .include files and lists none: before, all of the above got
 * through (the edit unseen, the relative file read, another user's
 * assembly assembled in). clang now hands its assembly to GNU as
 * (-fno-integrated-as), which lists them; -flto, whose link-time
 * assembler is clang's own, is refused. */
Test(cache, files_inline_asm_reads_are_checked_and_keyed_with_clang, .fini = cleanup)
{
    if (system("command -v clang++ > /dev/null 2>&1") != 0) cr_skip_test("clang++ is not installed");
    cr_assert_eq(setenv("AMP_CXX", "clang++", 1), 0);
    asm_reads_are_checked_and_keyed(true);
}

/* A kernel file in a directory every user can add to (as /tmp): a header
 * beside it that another user put there is refused, by name, and so is one
 * reached through a directory of theirs; nothing of it is compiled. */
Test(cache, header_another_user_put_beside_the_kernel_is_refused, .fini = cleanup)
{
    if (geteuid() != 0) cr_skip_test("needs root to make files owned by another user (uid 65534)");
    amp_accelerator *acc = setup_tree_cpu();
    char shared[PATH_MAX + 16], path[PATH_MAX + 64], evil[PATH_MAX + 32];
    snprintf(shared, sizeof shared, "%s/shared", g_root);
    make_shared_dir(shared);
    snprintf(path, sizeof path, "%s/params.h", shared);
    plant(path, "#define PARAM 666\n");
    snprintf(path, sizeof path, "%s/k.hip", shared);
    write_probe_file(path, "#include \"params.h\"\n#define CACHE_PROBE_ADD PARAM\n");
    amp_status st;
    (void)probe_file_result(acc, path, NULL, &st);
    cr_assert_eq(st, AMP_ERROR_COMPILE, "a header planted by uid 65534 beside the kernel was used (%s)",
                 amp_status_name(st));
    cr_assert(strstr(amp_last_error(), "params.h") && strstr(amp_last_error(), "65534") &&
                  strstr(amp_last_error(), "another user"),
              "message: %s", amp_last_error());

    /* Our own header there is fine (nobody else can replace it in a sticky
     * directory). */
    snprintf(path, sizeof path, "%s/mine.h", shared);
    write_file(path, "#define PARAM 2\n", 16);
    snprintf(path, sizeof path, "%s/k2.hip", shared);
    write_probe_file(path, "#include \"mine.h\"\n#define CACHE_PROBE_ADD PARAM\n");
    int got = probe_file_result(acc, path, NULL, &st);
    cr_assert_eq(st, AMP_OK, "our own header in a shared directory: %s", amp_last_error());
    cr_assert_eq(got, 2);

    /* "../shared/evil/x.h" from a private directory: evil/ is theirs. */
    snprintf(evil, sizeof evil, "%s/evil", shared);
    cr_assert_eq(mkdir(evil, 0755), 0);
    cr_assert_eq(chown(evil, 65534, 65534), 0);
    snprintf(path, sizeof path, "%s/x.h", evil);
    plant(path, "#define PARAM 666\n");
    snprintf(path, sizeof path, "%s/home", g_root);
    cr_assert_eq(mkdir(path, 0700), 0);
    snprintf(path, sizeof path, "%s/home/k.hip", g_root);
    write_probe_file(path, "#include \"../shared/evil/x.h\"\n#define CACHE_PROBE_ADD PARAM\n");
    (void)probe_file_result(acc, path, NULL, &st);
    cr_assert_eq(st, AMP_ERROR_COMPILE, "a header in a directory of uid 65534 was used (%s)", amp_status_name(st));
    cr_assert(strstr(amp_last_error(), "65534"), "message: %s", amp_last_error());
}

/* What the compiler read is checked against what was keyed: a computed
 * #include (which no scan can follow) of a file another user could have
 * written fails the build, and nothing built from it is loaded. */
Test(cache, computed_include_another_user_could_write_is_never_loaded, .fini = cleanup)
{
    if (geteuid() != 0) cr_skip_test("needs root to make files owned by another user (uid 65534)");
    amp_accelerator *acc = setup_tree_cpu();
    char shared[PATH_MAX + 16], evil[PATH_MAX + 32], src[4 * PATH_MAX];
    snprintf(shared, sizeof shared, "%s/shared", g_root);
    make_shared_dir(shared);
    snprintf(evil, sizeof evil, "%s/evil.h", shared);
    plant(evil, "#define PARAM 666\n");
    snprintf(src, sizeof src, "#define EVIL \"%s\"\n#include EVIL\n#define CACHE_PROBE_ADD PARAM\n%s", evil,
             test_kernels_cache_probe);
    amp_program *p = NULL;
    ASSERT_STATUS(amp_program_build(acc, src, NULL, &p), AMP_ERROR_COMPILE);
    cr_assert_null(p);
    cr_assert(strstr(amp_last_error(), evil) && strstr(amp_last_error(), "another user could have written"),
              "message: %s", amp_last_error());
}

/* A header the scan found nothing at, beside an includer of ours in a
 * sticky directory (util.h in /tmp including "cfg.h", which the scan then
 * found in -I inc), is looked up again by the compiler at its own time:
 * another user's link put there for the compiler to read, then pointed at
 * our inc/cfg.h (or replaced by a second name of it), made the compiler's
 * list name a file the scan had keyed, and their header was compiled in,
 * loaded and run (666). The way the compiler took is judged now, not where
 * it leads afterwards. The compiler's wrapper plays the other user. */
static amp_program *swap_attack_build(amp_accelerator *acc, const char *mode, int phase, amp_status *st)
{
    char path[PATH_MAX + 64], src[4 * PATH_MAX], opts[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/mode", g_root);
    write_file(path, mode, strlen(mode));
    snprintf(src, sizeof src, "// phase %d\n#include \"%s/shared/util.h\"\n#define CACHE_PROBE_ADD PARAM\n%s", phase,
             g_root, test_kernels_cache_probe);
    snprintf(opts, sizeof opts, "-I%s/inc", g_root);
    amp_program *p = NULL;
    *st = amp_program_build(acc, src, opts, &p);
    snprintf(path, sizeof path, "%s/shared/cfg.h", g_root);
    unlink(path); /* the other user's, gone before the next build's scan */
    return p;
}

Test(cache, a_header_swapped_in_while_compiled_through_another_users_link_is_never_loaded, .fini = cleanup)
{
    if (geteuid() != 0) cr_skip_test("needs root to make a link owned by another user (uid 65534)");
    cr_assert_eq(setenv("AMP_CPU_COMPILE_JOBS", "1", 1), 0); /* one compiler: one swap */
    amp_accelerator *acc = setup_tree_cpu();
    char path[PATH_MAX + 64], place[PATH_MAX + 64], cfg[PATH_MAX + 64], evil[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/shared", g_root);
    make_shared_dir(path);
    snprintf(path, sizeof path, "%s/inc", g_root);
    cr_assert_eq(mkdir(path, 0700), 0);
    snprintf(cfg, sizeof cfg, "%s/inc/cfg.h", g_root);
    write_file(cfg, "#define PARAM 1\n", 16);
    snprintf(path, sizeof path, "%s/shared/util.h", g_root);
    write_file(path, "#include \"cfg.h\"\n", 17);
    snprintf(evil, sizeof evil, "%s/shared/evil.h", g_root);
    plant(evil, "#define PARAM 666\n");
    snprintf(place, sizeof place, "%s/shared/cfg.h", g_root);
    /* The wrapper: around a compile that writes a dependency list, the
     * other user's link before, then the way back to our header. */
    char script[8 * PATH_MAX], inner[PATH_MAX + 8];
    snprintf(inner, sizeof inner, "%s/cxx-inner", g_root);
    cr_assert_eq(rename(g_cxx, inner), 0);
    snprintf(script, sizeof script,
             "#!/bin/sh\nmode=$(cat '%s/mode')\n"
             "case \"$*\" in *-MD*) [ \"$mode\" = none ] || { ln -s '%s' '%s' && chown -h 65534:65534 '%s'; };; esac\n"
             "'%s' \"$@\"; rc=$?\n"
             "case \"$*\" in *-MD*) case \"$mode\" in\n"
             "  link) rm -f '%s'; ln -s '%s' '%s' && chown -h 65534:65534 '%s';;\n"
             "  hard) rm -f '%s'; ln '%s' '%s';;\n"
             "esac;; esac\nexit $rc\n",
             g_root, evil, place, place, inner, place, cfg, place, place, place, cfg, place);
    write_file(g_cxx, script, strlen(script));
    cr_assert_eq(chmod(g_cxx, 0755), 0);

    amp_status st;
    amp_program *p = swap_attack_build(acc, "none", 0, &st);
    cr_assert_eq(st, AMP_OK, "without the other user: %s: %s", amp_status_name(st), amp_last_error());
    cr_assert_eq(probe_add(p), 1, "util.h's cfg.h is inc/cfg.h");
    amp_program_destroy(p);

    p = swap_attack_build(acc, "link", 1, &st);
    cr_assert_eq(st, AMP_ERROR_COMPILE, "a header read through another user's link was used (%s%s%d)",
                 amp_status_name(st), p ? ", its kernel adds " : "", p ? probe_add(p) : 0);
    cr_assert_null(p);
    cr_assert(strstr(amp_last_error(), place) && strstr(amp_last_error(), "65534") &&
                  strstr(amp_last_error(), "another user could have written"),
              "message: %s", amp_last_error());

    p = swap_attack_build(acc, "hard", 2, &st);
    cr_assert_eq(st, AMP_ERROR_COMPILE, "a header read through a name another user replaced by a hard link was used "
                 "(%s%s%d)", amp_status_name(st), p ? ", its kernel adds " : "", p ? probe_add(p) : 0);
    cr_assert_null(p);
    cr_assert(strstr(amp_last_error(), place) && strstr(amp_last_error(), "hard links"), "message: %s",
              amp_last_error());
}

/* A second name of a header in a directory every user can add to is one
 * another user may have made (a hard link: of any file they can read where
 * fs.protected_hardlinks is off), and may swap for their own file when the
 * compiler looks again: refused where the scan finds it. */
Test(cache, a_hard_link_beside_the_includer_in_a_shared_directory_is_refused, .fini = cleanup)
{
    amp_accelerator *acc = setup_tree_cpu();
    char path[PATH_MAX + 64], cfg[PATH_MAX + 64], src[4 * PATH_MAX];
    snprintf(path, sizeof path, "%s/shared", g_root);
    make_shared_dir(path);
    snprintf(cfg, sizeof cfg, "%s/cfg.h", g_root);
    write_file(cfg, "#define PARAM 1\n", 16);
    snprintf(path, sizeof path, "%s/shared/util.h", g_root);
    write_file(path, "#include \"cfg.h\"\n", 17);
    snprintf(path, sizeof path, "%s/shared/cfg.h", g_root);
    cr_assert_eq(link(cfg, path), 0, "link: %s", strerror(errno));
    snprintf(src, sizeof src, "#include \"%s/shared/util.h\"\n#define CACHE_PROBE_ADD PARAM\n%s", g_root,
             test_kernels_cache_probe);
    amp_program *p = NULL;
    ASSERT_STATUS(amp_program_build(acc, src, NULL, &p), AMP_ERROR_COMPILE);
    cr_assert_null(p);
    cr_assert(strstr(amp_last_error(), path) && strstr(amp_last_error(), "2 hard links"), "message: %s",
              amp_last_error());
    /* With one name it is ours alone, and builds. */
    cr_assert_eq(unlink(cfg), 0);
    ASSERT_OK(amp_program_build(acc, src, NULL, &p));
    cr_assert_eq(probe_add(p), 1);
    amp_program_destroy(p);
}

/* A build split across compilers (lib/cpu/cpu_split.c) runs one compiler a
 * part, each looking its headers up at its own time: what every part read
 * is checked, not part 0's alone (another user's link that stood beside a
 * header of ours while only the second part compiled went unseen, and its
 * header was compiled in, run and cached). The wrapper compiler plays the
 * moment: it gives the second part (the one that leaves first_kernel to
 * the other) a header to read that the first does not. From a directory of
 * ours it is what the kernel uses (so the build was split); from one every
 * user may write, refused. */
static amp_status split_build_reading(amp_accelerator *acc, const char *dir, int round, int *got)
{
    char path[PATH_MAX + 32], src[4 * PATH_MAX];
    snprintf(path, sizeof path, "%s/add.h", dir);
    write_file(path, "#define CACHE_PROBE_ADD 666\n", 27);
    snprintf(path, sizeof path, "%s/add-dir", g_root);
    write_file(path, dir, strlen(dir));
    snprintf(src, sizeof src,
             "// round %d\nAMP_KERNEL(first_kernel, amp::index<1> i, amp::array_view<int, 1> data) { data[i] = 7; }\n%s",
             round, test_kernels_cache_probe);
    amp_program *p = NULL;
    amp_status st = amp_program_build(acc, src, NULL, &p);
    *got = p ? probe_add(p) : -1;
    if (p) amp_program_destroy(p);
    return st;
}

Test(cache, what_every_part_of_a_split_build_read_is_checked, .fini = cleanup)
{
    cr_assert_eq(setenv("AMP_CPU_COMPILE_JOBS", "2", 1), 0);
    amp_accelerator *acc = setup_tree_cpu();
    char inner[PATH_MAX + 16], script[4 * PATH_MAX], dir[PATH_MAX + 16];
    snprintf(inner, sizeof inner, "%s/cxx-inner", g_root);
    cr_assert_eq(rename(g_cxx, inner), 0);
    snprintf(script, sizeof script,
             "#!/bin/sh\ncase \"$*\" in *AMP__CPU_SKIP_first_kernel*) exec '%s' -include \"$(cat '%s/add-dir')/add.h\" "
             "\"$@\";; esac\nexec '%s' \"$@\"\n",
             inner, g_root, inner);
    write_file(g_cxx, script, strlen(script));
    cr_assert_eq(chmod(g_cxx, 0755), 0);

    snprintf(dir, sizeof dir, "%s/ours", g_root);
    cr_assert_eq(mkdir(dir, 0700), 0);
    int got = 0;
    amp_status st = split_build_reading(acc, dir, 0, &got);
    cr_assert_eq(st, AMP_OK, "%s: %s", amp_status_name(st), amp_last_error());
    cr_assert_eq(got, 666, "the second part's header was not used (got %d): the build was not split", got);

    snprintf(dir, sizeof dir, "%s/open", g_root);
    cr_assert_eq(mkdir(dir, 0700), 0);
    cr_assert_eq(chmod(dir, 0777), 0);
    st = split_build_reading(acc, dir, 1, &got);
    cr_assert_eq(st, AMP_ERROR_COMPILE, "a header the second part read from a directory every user can write was "
                 "used (%s, the kernel adds %d)", amp_status_name(st), got);
    cr_assert(strstr(amp_last_error(), dir) && strstr(amp_last_error(), "every user"), "message: %s",
              amp_last_error());
}

/* The CPU accelerator's loop transformation parses the unit with libclang
 * (its own process, at its own time) and writes a loop version that holds
 * what libclang made of it (a type's spelling): what libclang read is
 * checked as the compiler's is. Here only libclang reads add.h (__clang__),
 * and its typedef reaches the loop version: from a directory of ours the
 * kernel shows it (so the check does not refuse what is safe), from one
 * every user may write the build is refused. It was never checked: another
 * user's header libclang read through a link that g++ then did not find
 * was compiled in, run and cached. */
static amp_status loops_build_reading(amp_accelerator *acc, const char *dir, int *got)
{
    char path[PATH_MAX + 32], src[4 * PATH_MAX];
    snprintf(path, sizeof path, "%s/add.h", dir);
    const char *evil = "typedef std::integral_constant<int, 666> param_t;\n";
    write_file(path, evil, strlen(evil));
    snprintf(src, sizeof src,
             "#include <type_traits>\n#ifdef __clang__\n#define ADD \"%s\"\n#include ADD\n#else\n"
             "typedef std::integral_constant<int, 1> param_t;\n#endif\n"
             "AMP_TILED_KERNEL(kt, amp::tiled_index<4> t, amp::array_view<int, 1> d)\n"
             "{\n    tile_static param_t pv;\n    tile_static int s[4];\n    s[t.local[0]] = pv.value;\n"
             "    t.barrier.wait();\n    d[t.global] = s[3 - t.local[0]];\n}\n",
             path);
    amp_program *p = NULL;
    amp_status st = amp_program_build(acc, src, NULL, &p);
    *got = -1;
    if (p) {
        int d[4] = {0, 0, 0, 0};
        amp_array_view *v = test_view(d, sizeof(int), amp_extent_1d(4), AMP_READ_WRITE);
        amp_tiled_extent te;
        ASSERT_OK(amp_extent_tile_1d(amp_extent_1d(4), 4, &te));
        amp_arg a[] = {amp_arg_view(v)};
        ASSERT_OK(amp_parallel_for_each_tiled(NULL, te, test_kernel(p, "kt"), a, 1));
        ASSERT_OK(amp_array_view_destroy(v));
        *got = d[0];
        amp_program_destroy(p);
    }
    return st;
}

Test(cache, what_the_loop_transformations_parse_read_is_checked, .fini = cleanup)
{
    amp_accelerator *acc = setup_tree_cpu();
    char dir[PATH_MAX + 16];
    snprintf(dir, sizeof dir, "%s/ours", g_root);
    cr_assert_eq(mkdir(dir, 0700), 0);
    int got = 0;
    amp_status st = loops_build_reading(acc, dir, &got);
    cr_assert_eq(st, AMP_OK, "%s: %s", amp_status_name(st), amp_last_error());
    if (got == 1) cr_skip_test("the kernel runs on fibers here (no libclang): no loop version to check");
    cr_assert_eq(got, 666, "the loop version did not hold libclang's view of add.h (got %d)", got);

    snprintf(dir, sizeof dir, "%s/open", g_root);
    cr_assert_eq(mkdir(dir, 0700), 0);
    cr_assert_eq(chmod(dir, 0777), 0);
    st = loops_build_reading(acc, dir, &got);
    cr_assert_eq(st, AMP_ERROR_COMPILE, "a header libclang read from a directory every user can write was used (%s, "
                 "the kernel gives %d)", amp_status_name(st), got);
    cr_assert(strstr(amp_last_error(), dir) && strstr(amp_last_error(), "every user"), "message: %s",
              amp_last_error());
}

/* A computed #include of our own header builds (the compiler's list of what
 * it read is stamped and the build done once more against it), is not
 * cached on disk, and an edit of the header is seen by the next build in
 * the same process. */
Test(cache, computed_include_of_own_header_is_stamped, .fini = cleanup)
{
    amp_accelerator *acc = setup_tree_cpu();
    char hdr[PATH_MAX + 16], src[4 * PATH_MAX];
    snprintf(hdr, sizeof hdr, "%s/own.h", g_root);
    snprintf(src, sizeof src, "#define OWN \"%s\"\n#include OWN\n#define CACHE_PROBE_ADD PARAM\n%s", hdr,
             test_kernels_cache_probe);
    int results[2];
    for (int round = 0; round < 2; ++round) {
        char def[64];
        snprintf(def, sizeof def, "#define PARAM %d\n", round ? 22 : 21);
        write_file(hdr, def, strlen(def));
        amp_program *p = test_build(acc, src);
        results[round] = probe_add(p);
        amp_program_destroy(p);
    }
    cr_assert_eq(results[0], 21);
    cr_assert_eq(results[1], 22, "the edited header of a computed #include was not seen (got %d)", results[1]);
    amp_cache_info ci = cache_info();
    cr_assert_eq(ci.disk_stores, 0, "a build with a computed #include was stored");
    cr_assert_geq(ci.uncacheable_builds, 2);
}

/* __has_include probes a header without including it: a header that
 * appears later changes the code, so the probe is keyed like an #include
 * (the next process, through the disk cache, sees it). It used to build
 * from the disk cache's entry made without it. */
Test(cache, has_include_probe_is_keyed, .fini = cleanup)
{
    amp_accelerator *acc = setup_tree_cpu();
    char path[PATH_MAX + 32], feature[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/k.hip", g_root);
    snprintf(feature, sizeof feature, "%s/feature.h", g_root);
    write_probe_file(path, "#if __has_include(\"feature.h\")\n#define CACHE_PROBE_ADD 2\n#else\n"
                           "#define CACHE_PROBE_ADD 1\n#endif\n");
    amp_status st;
    int got = probe_file_result(acc, path, NULL, &st);
    cr_assert_eq(got, 1, "without feature.h: %d (%s: %s)", got, amp_status_name(st), amp_last_error());
    write_file(feature, "\n", 1);
    ASSERT_OK(amp_cache_clear_memory());
    got = probe_file_result(acc, path, NULL, &st);
    cr_assert_eq(got, 2, "feature.h appeared but the build came from the disk cache's entry made without it (got %d)",
                 got);
    cr_assert_eq(scan_cache().entries, 2, "with and without feature.h: two entries");
}

/* A header that appears where the scan looked and found nothing (a probed
 * one, or one earlier on the search path than the header used) is read by
 * the next build in the same process: the memory cache watches those
 * places. It handed out the module built without it. */
Test(cache, header_appearing_on_the_search_path_rebuilds, .fini = cleanup)
{
    amp_accelerator *acc = setup_tree_cpu();
    char path[PATH_MAX + 32], hdr[PATH_MAX + 32], inc[PATH_MAX + 32], opts[PATH_MAX + 48];
    snprintf(path, sizeof path, "%s/k.hip", g_root);
    snprintf(inc, sizeof inc, "%s/inc", g_root);
    cr_assert_eq(mkdir(inc, 0700), 0);
    snprintf(opts, sizeof opts, "-I%s", inc);
    /* 1. A probed header appears. */
    write_probe_file(path, "#if __has_include(\"opt.h\")\n#include \"opt.h\"\n#else\n#define CACHE_PROBE_ADD 1\n#endif\n");
    amp_status st;
    int got = probe_file_result(acc, path, opts, &st);
    cr_assert_eq(got, 1, "without opt.h: %d (%s: %s)", got, amp_status_name(st), amp_last_error());
    snprintf(hdr, sizeof hdr, "%s/opt.h", inc);
    write_file(hdr, "#define CACHE_PROBE_ADD 7\n", strlen("#define CACHE_PROBE_ADD 7\n"));
    got = probe_file_result(acc, path, opts, &st);
    cr_assert_eq(got, 7, "opt.h appeared in the -I directory; the build still used the module made without it (got %d)",
                 got);
    /* 2. A header appears beside the kernel, before the -I directory. */
    snprintf(hdr, sizeof hdr, "%s/opt.h", g_root);
    write_file(hdr, "#define CACHE_PROBE_ADD 8\n", strlen("#define CACHE_PROBE_ADD 8\n"));
    got = probe_file_result(acc, path, opts, &st);
    cr_assert_eq(got, 8, "opt.h beside the kernel comes first; the build used the -I one (got %d)", got);
}

/* The probe's source as a string, head first (malloc'ed). */
static char *probe_with(const char *head)
{
    size_t n = strlen(head) + strlen(test_kernels_cache_probe) + PATH_MAX + 16;
    char *src = malloc(n);
    cr_assert_not_null(src);
    snprintf(src, n, "// %s\n%s%s", g_root, head, test_kernels_cache_probe);
    return src;
}

/* g_root/name, made, in out. */
static void tree_subdir(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", g_root, name);
    cr_assert_eq(mkdir(out, 0700), 0, "mkdir %s: %s", out, strerror(errno));
}

/* dir/file holding "#define CACHE_PROBE_ADD value". */
static void write_probe_add(const char *dir, const char *file, int value)
{
    char hdr[PATH_MAX + 64], text[64];
    snprintf(hdr, sizeof hdr, "%s/%s", dir, file);
    snprintf(text, sizeof text, "#define CACHE_PROBE_ADD %d\n", value);
    write_file(hdr, text, strlen(text));
}

/* g++ searches CPLUS_INCLUDE_PATH after the -isystem directories (as if
 * each were named by a last -isystem), and an empty element of CPATH or
 * CPLUS_INCLUDE_PATH as the working directory: a header that appears in
 * the -isystem directory, or in the working directory, is what the next
 * build reads, in this process and through the disk cache. The scan
 * searched CPLUS_INCLUDE_PATH first and skipped empty elements: the module
 * and the disk entry made from the old header were used. */
Test(cache, include_path_variables_are_searched_where_the_compiler_searches_them, .fini = cleanup)
{
    amp_accelerator *acc = setup_tree_cpu();
    char path[PATH_MAX + 32], env_dir[PATH_MAX + 32], sys_dir[PATH_MAX + 32], here[PATH_MAX + 32],
        opts[PATH_MAX + 48];
    tree_subdir(env_dir, sizeof env_dir, "env");
    tree_subdir(sys_dir, sizeof sys_dir, "sys");
    tree_subdir(here, sizeof here, "here");
    write_probe_add(env_dir, "probe_add.h", 1);
    cr_assert_eq(setenv("CPLUS_INCLUDE_PATH", env_dir, 1), 0);
    snprintf(opts, sizeof opts, "-isystem %s", sys_dir);
    snprintf(path, sizeof path, "%s/k.hip", g_root);
    write_probe_file(path, "#include <probe_add.h>\n");
    amp_status st;
    int got = probe_file_result(acc, path, opts, &st);
    cr_assert_eq(got, 1, "from CPLUS_INCLUDE_PATH: %d (%s: %s)", got, amp_status_name(st), amp_last_error());

    write_probe_add(sys_dir, "probe_add.h", 2);
    got = probe_file_result(acc, path, opts, &st);
    cr_assert_eq(got, 2, "the -isystem directory comes before CPLUS_INCLUDE_PATH; the module made from the "
                 "CPLUS_INCLUDE_PATH header was used (got %d)", got);
    ASSERT_OK(amp_cache_clear_memory());
    got = probe_file_result(acc, path, opts, &st);
    cr_assert_eq(got, 2, "through the disk cache: got %d", got);

    /* An empty element: the working directory, searched there. */
    cr_assert_eq(chdir(here), 0);
    cr_assert_eq(setenv("CPLUS_INCLUDE_PATH", "", 1), 0);
    cr_assert_eq(setenv("CPATH", ":", 1), 0);
    write_probe_add(here, "probe_add.h", 3);
    ASSERT_OK(amp_cache_clear_memory());
    got = probe_file_result(acc, path, opts, &st);
    cr_assert_eq(got, 3, "CPATH's empty element is the working directory, before -isystem (got %d: %s)", got,
                 st == AMP_OK ? "" : amp_last_error());
}

/* A directory named by -I and by -isystem is searched where the system
 * one is (GCC and clang both drop the -I): "-I a -I b -isystem a" reads
 * b's header. The scan searched a first, so the key held a's header while
 * g++ read b's: the build was right but never cached (the next process
 * compiled again). And a directory named twice on the system chain is
 * searched once: an #include_next from it goes on to the next directory,
 * not to the same header again. */
Test(cache, a_directory_named_by_I_and_isystem_is_searched_as_a_system_one, .fini = cleanup)
{
    amp_accelerator *acc = setup_tree_cpu();
    char a[PATH_MAX + 32], b[PATH_MAX + 32], c[PATH_MAX + 32], hdr[PATH_MAX + 64], path[PATH_MAX + 32],
        opts[3 * PATH_MAX + 128];
    tree_subdir(a, sizeof a, "a");
    tree_subdir(b, sizeof b, "b");
    tree_subdir(c, sizeof c, "c");
    write_probe_add(a, "probe_add.h", 1);
    write_probe_add(b, "probe_add.h", 2);
    snprintf(path, sizeof path, "%s/k.hip", g_root);
    write_probe_file(path, "#include <probe_add.h>\n");
    /* a named again through another spelling: the same directory. */
    snprintf(opts, sizeof opts, "-I %s -I %s -isystem %s/../a", a, b, b);
    amp_status st;
    int got = probe_file_result(acc, path, opts, &st);
    cr_assert_eq(got, 2, "-I a -I b -isystem a: b's header first (got %d: %s)", got, st == AMP_OK ? "" : amp_last_error());
    int compiles = compiles_logged();
    ASSERT_OK(amp_cache_clear_memory());
    got = probe_file_result(acc, path, opts, &st);
    cr_assert_eq(got, 2, "through the disk cache: got %d", got);
    cr_assert_eq(compiles_logged(), compiles, "the build was not cached: the scan keyed a's header, g++ read b's");

    /* -isystem c -isystem c -isystem b: c's header goes on with
     * #include_next to b's, not to itself again. */
    snprintf(hdr, sizeof hdr, "%s/probe_next.h", c);
    const char *first = "#include_next <probe_next.h>\n#define CACHE_PROBE_ADD (PROBE_NEXT + 10)\n";
    write_file(hdr, first, strlen(first));
    snprintf(hdr, sizeof hdr, "%s/probe_next.h", b);
    write_file(hdr, "#define PROBE_NEXT 5\n", strlen("#define PROBE_NEXT 5\n"));
    write_probe_file(path, "#include <probe_next.h>\n");
    snprintf(opts, sizeof opts, "-isystem %s -isystem %s -isystem %s", c, c, b);
    got = probe_file_result(acc, path, opts, &st);
    cr_assert_eq(got, 15, "c's header, then b's through #include_next (got %d: %s)", got,
                 st == AMP_OK ? "" : amp_last_error());
    compiles = compiles_logged();
    ASSERT_OK(amp_cache_clear_memory());
    got = probe_file_result(acc, path, opts, &st);
    cr_assert_eq(got, 15, "through the disk cache: got %d", got);
    cr_assert_eq(compiles_logged(), compiles, "the build was not cached: the scan's #include_next found c's header again");
}

/* The in-memory cache hands out a module only for the search path it was
 * built with: a relative -I directory is the working directory's, and the
 * include-path variables are read at each build, so after a chdir or a new
 * CPATH the build reads what the compiler now would. It handed out the
 * module built from the first headers (their stamps unchanged). */
Test(cache, memory_cache_follows_the_working_directory_and_include_variables, .fini = cleanup)
{
    amp_accelerator *acc = setup_tree_cpu();
    char path[PATH_MAX + 64];
    const char *const dirs[] = {"one", "one/inc", "two", "two/inc", "sys", "cpath"};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; ++i) {
        snprintf(path, sizeof path, "%s/%s", g_root, dirs[i]);
        cr_assert_eq(mkdir(path, 0700), 0);
    }
    const char *const files[][2] = {{"one/inc/add.h", "#define CACHE_PROBE_ADD 1\n"},
                                    {"two/inc/add.h", "#define CACHE_PROBE_ADD 2\n"},
                                    {"sys/add2.h", "#define CACHE_PROBE_ADD 3\n"},
                                    {"cpath/add2.h", "#define CACHE_PROBE_ADD 4\n"}};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; ++i) {
        snprintf(path, sizeof path, "%s/%s", g_root, files[i][0]);
        write_file(path, files[i][1], strlen(files[i][1]));
    }
    char *src = probe_with("#include <add.h>\n");
    int got[2];
    for (int i = 0; i < 2; ++i) {
        snprintf(path, sizeof path, "%s/%s", g_root, i ? "two" : "one");
        cr_assert_eq(chdir(path), 0);
        amp_program *p = NULL;
        amp_status st = amp_program_build(acc, src, "-Iinc", &p);
        cr_assert_eq(st, AMP_OK, "%s: %s", amp_status_name(st), amp_last_error());
        got[i] = probe_add(p);
        amp_program_destroy(p);
    }
    free(src);
    cr_assert_eq(got[0], 1);
    cr_assert_eq(got[1], 2, "-Iinc from another working directory: the module built from the first was used");

    char opts[PATH_MAX + 32];
    snprintf(opts, sizeof opts, "-isystem %s/sys", g_root);
    src = probe_with("#include <add2.h>\n");
    for (int i = 0; i < 2; ++i) {
        if (i) {
            snprintf(path, sizeof path, "%s/cpath", g_root);
            cr_assert_eq(setenv("CPATH", path, 1), 0);
        }
        amp_program *p = NULL;
        amp_status st = amp_program_build(acc, src, opts, &p);
        cr_assert_eq(st, AMP_OK, "%s: %s", amp_status_name(st), amp_last_error());
        got[i] = probe_add(p);
        amp_program_destroy(p);
    }
    free(src);
    cr_assert_eq(got[0], 3);
    cr_assert_eq(got[1], 4, "CPATH named a directory before -isystem: the module built without it was used");
}

/* A source whose text leaves a quote open on a line (a C++14 digit
 * separator) before an #include: the scan finds the header, so the build
 * compiles once and is stored on disk. The scan missed it: the compiler
 * read a header the scan had not keyed, every build compiled twice and was
 * never cached. */
Test(cache, include_after_a_digit_separator_is_keyed, .fini = cleanup)
{
    amp_accelerator *acc = setup_tree_cpu();
    char path[PATH_MAX + 32], hdr[PATH_MAX + 32];
    snprintf(hdr, sizeof hdr, "%s/add.h", g_root);
    write_file(hdr, "#define CACHE_PROBE_ADD 5\n", strlen("#define CACHE_PROBE_ADD 5\n"));
    snprintf(path, sizeof path, "%s/k.hip", g_root);
    write_probe_file(path, "static constexpr int thousand = 1'000;\n#include \"add.h\"\n");
    amp_status st;
    int got = probe_file_result(acc, path, NULL, &st);
    cr_assert_eq(got, 5, "%d (%s: %s)", got, amp_status_name(st), amp_last_error());
    amp_cache_info ci = cache_info();
    cr_assert_eq(ci.uncacheable_builds, 0, "the build was not cacheable");
    cr_assert_eq(ci.disk_stores, 1, "%llu stores", (unsigned long long)ci.disk_stores);
    cr_assert_eq(compiles_logged(), 1, "compiled %d times", compiles_logged());
}

/* A header that wraps another of its name (#include_next, as a wrapper of a
 * system header does): the scan finds the next one, so the build compiles
 * once and is stored, and an edit of the wrapped header is seen by the next
 * process. The scan found the wrapper itself: the compiler read a header
 * the scan had not keyed, so every build compiled twice and none was
 * cached. */
Test(cache, include_next_header_is_keyed, .fini = cleanup)
{
    amp_accelerator *acc = setup_tree_cpu();
    char path[PATH_MAX + 32], opts[2 * PATH_MAX + 64];
    const char *const dirs[] = {"wrap", "real"};
    for (size_t i = 0; i < 2; ++i) {
        snprintf(path, sizeof path, "%s/%s", g_root, dirs[i]);
        cr_assert_eq(mkdir(path, 0700), 0);
    }
    snprintf(path, sizeof path, "%s/wrap/add.h", g_root);
    write_file(path, "#include_next <add.h>\n", strlen("#include_next <add.h>\n"));
    snprintf(path, sizeof path, "%s/real/add.h", g_root);
    write_file(path, "#define CACHE_PROBE_ADD 6\n", strlen("#define CACHE_PROBE_ADD 6\n"));
    snprintf(opts, sizeof opts, "-I%s/wrap -I%s/real", g_root, g_root);
    snprintf(path, sizeof path, "%s/k.hip", g_root);
    write_probe_file(path, "#include <add.h>\n");
    amp_status st;
    int got = probe_file_result(acc, path, opts, &st);
    cr_assert_eq(got, 6, "%d (%s: %s)", got, amp_status_name(st), amp_last_error());
    amp_cache_info ci = cache_info();
    cr_assert_eq(ci.uncacheable_builds, 0, "the build was not cacheable");
    cr_assert_eq(ci.disk_stores, 1, "%llu stores", (unsigned long long)ci.disk_stores);
    cr_assert_eq(compiles_logged(), 1, "compiled %d times", compiles_logged());
}

/* One header reached by two names (b.h a link to a.h): when b.h becomes a
 * header of its own, the next build in the same process reads it. The
 * memory cache watched only the first name it was read by, unchanged, and
 * handed out the module built when both were one file. */
Test(cache, header_reached_by_two_names_is_watched_by_both, .fini = cleanup)
{
    amp_accelerator *acc = setup_tree_cpu();
    char path[PATH_MAX + 32], a[PATH_MAX + 32], b[PATH_MAX + 32];
    snprintf(a, sizeof a, "%s/a.h", g_root);
    snprintf(b, sizeof b, "%s/b.h", g_root);
    static const char a_text[] = "#ifndef A\n#define A 1\n#endif\n#ifndef B\n#define B 0\n#endif\n";
    write_file(a, a_text, strlen(a_text));
    cr_assert_eq(symlink("a.h", b), 0, "symlink: %s", strerror(errno));
    snprintf(path, sizeof path, "%s/k.hip", g_root);
    write_probe_file(path, "#include \"a.h\"\n#include \"b.h\"\n#define CACHE_PROBE_ADD (A + B)\n");
    amp_status st;
    int got = probe_file_result(acc, path, NULL, &st);
    cr_assert_eq(got, 1, "%d (%s: %s)", got, amp_status_name(st), amp_last_error());
    cr_assert_eq(unlink(b), 0);
    write_file(b, "#define B 5\n", strlen("#define B 5\n"));
    got = probe_file_result(acc, path, NULL, &st);
    cr_assert_eq(got, 6, "b.h became a header of its own; the module built when it was a.h was used (got %d)", got);
}

/* A header found in a directory the compiler searches by default but that
 * is not its own (/usr/local/include) is keyed: changed, it rebuilds in the
 * next process instead of giving old code from the disk cache. */
static char g_local_header[PATH_MAX];
static void remove_local_header(void)
{
    if (g_local_header[0]) unlink(g_local_header);
    g_local_header[0] = 0;
    cleanup();
}

ACCEL_TEST(cache, changed_system_header_rebuilds, .fini = remove_local_header)
{
    amp_accelerator_info in = info_of(acc);
    if (!strncmp(in.arch, "sm_", 3)) cr_skip_test("NVRTC (CUDA, or HIP on NVIDIA) searches no system include directory");
    snprintf(g_local_header, sizeof g_local_header, "/usr/local/include/hipamp-test-%d.h", (int)getpid());
    FILE *f = fopen(g_local_header, "w");
    if (!f) {
        g_local_header[0] = 0;
        cr_skip_test("cannot write /usr/local/include: %s", strerror(errno));
    }
    fputs("#define LOCAL_ADD 5\n", f);
    fclose(f);
    setup_tree(in);
    char head[PATH_MAX];
    snprintf(head, sizeof head, "#include <hipamp-test-%d.h>\n#define CACHE_PROBE_ADD LOCAL_ADD\n", (int)getpid());
    write_probe_source(head);
    RUN_HELPER_OK(in.device_path, .extra_env = "HIPAMP_HELPER_EXPECT_ADD=5");
    write_file(g_local_header, "#define LOCAL_ADD 9\n", strlen("#define LOCAL_ADD 9\n"));
    RUN_HELPER_OK(in.device_path, .extra_env = "HIPAMP_HELPER_EXPECT_ADD=9");
    cr_assert_eq(scan_cache().entries, 2, "two versions of the header, two entries");
}

/* ------------------------------------ OpenSSL without SHA-256 (item 13) */

/* With only OpenSSL's base provider there is no SHA-256: builds still work
 * (the key is needed only by the disk cache), the disk cache is off, and
 * amp_cache_get_info says why. */
Test(cache, builds_work_without_sha256, .fini = cleanup)
{
    amp_accelerator *acc = setup_tree_cpu();
    char conf[PATH_MAX + 16];
    snprintf(conf, sizeof conf, "%s/openssl.cnf", g_root);
    const char *text = "openssl_conf = openssl_init\n[openssl_init]\nproviders = provider_sect\n"
                       "[provider_sect]\nbase = base_sect\n[base_sect]\nactivate = 1\n";
    write_file(conf, text, strlen(text));
    cr_assert_eq(setenv("OPENSSL_CONF", conf, 1), 0);
    build_probe_here(acc);
    amp_cache_info ci = cache_info();
    cr_assert(!ci.disk_enabled, "the disk cache is on without SHA-256");
    cr_assert(strstr(ci.reason, "SHA-256"), "reason: %s", ci.reason);
    cr_assert_eq(scan_cache().entries, 0);
    /* A second process too. */
    RUN_HELPER_OK("cpu", .extra_env = "HIPAMP_HELPER_EXPECT_ADD=0");
}

/* ----------------------------------------- cache entries (item 14) */

/* A directory at an entry's name used to disable caching of that kernel
 * forever (nothing could be renamed over it): an empty one is removed and
 * the entry stored; one with something in it is left alone, the build
 * works, and amp_cache_get_info names it. */
Test(cache, directory_at_an_entry_name, .fini = cleanup)
{
    amp_accelerator *acc = setup_tree_cpu();
    build_probe_here(acc);
    char path[PATH_MAX];
    struct stat st;
    one_entry(path, &st);
    cr_assert_eq(unlink(path), 0);
    cr_assert_eq(mkdir(path, 0700), 0);
    ASSERT_OK(amp_cache_clear_memory());
    build_probe_here(acc);
    cr_assert_eq(lstat(path, &st), 0);
    cr_assert(S_ISREG(st.st_mode), "the empty directory at the entry's name is still there");
    /* Again, with a file inside. */
    cr_assert_eq(unlink(path), 0);
    cr_assert_eq(mkdir(path, 0700), 0);
    char inner[PATH_MAX + 16];
    snprintf(inner, sizeof inner, "%s/keep", path);
    write_file(inner, "x", 1);
    ASSERT_OK(amp_cache_clear_memory());
    uint64_t before = cache_info().uncacheable_builds;
    build_probe_here(acc);
    cr_assert_eq(lstat(inner, &st), 0, "hipamp removed what is inside a directory it did not make");
    amp_cache_info ci = cache_info();
    cr_assert(strstr(ci.last_uncacheable, "is a directory") && strstr(ci.last_uncacheable, strrchr(path, '/') + 1),
              "last_uncacheable: %s", ci.last_uncacheable);
    /* One build, counted once (the load that met the directory and the
     * store that could not replace it each counted it). */
    cr_assert_eq(ci.uncacheable_builds, before + 1, "uncacheable_builds went from %llu to %llu for one build",
                 (unsigned long long)before, (unsigned long long)ci.uncacheable_builds);
}

/* ------------------------------------- the CPU precompiled header */

/* The largest entry: the precompiled header (megabytes; a module of the
 * probe kernel is kilobytes). */
static void largest_entry(char *path, off_t *size)
{
    DIR *d = opendir(g_cache);
    cr_assert_not_null(d, "%s: %s", g_cache, strerror(errno));
    struct dirent *e;
    *size = 0;
    path[0] = 0;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n <= 5 || strcmp(e->d_name + n - 5, ".ampc")) continue;
        char p[PATH_MAX];
        struct stat sb;
        snprintf(p, sizeof p, "%s/%s", g_cache, e->d_name);
        if (stat(p, &sb) == 0 && sb.st_size > *size) {
            *size = sb.st_size;
            snprintf(path, PATH_MAX, "%s", p);
        }
    }
    closedir(d);
}

/* How many logged compiler runs made the header, and whether the last one
 * compiled with it. */
static int header_compiles_logged(bool *last_used_it)
{
    FILE *f = fopen(g_cxx_log, "r");
    cr_assert_not_null(f, "%s: %s", g_cxx_log, strerror(errno));
    int n = 0;
    char line[8192];
    *last_used_it = false;
    while (fgets(line, sizeof line, f)) {
        if (strstr(line, "-x c++-header")) n++;
        /* a compile (of the whole unit, or of a part; a split build's
         * link, "-x none" and the objects, reads no header) */
        else if (strstr(line, " -o ") && !strstr(line, "-x none")) *last_used_it = strstr(line, "-include ") != NULL;
    }
    fclose(f);
    return n;
}

/* The first cold build makes the header (one compile more, beside its
 * own, which goes on without it) and stores it; the next process,
 * building another kernel, loads it from the disk cache and compiles with
 * it (no header compile), with the same results (the helper checks every
 * value). */
/* Entries of TMPDIR dir whose names start with prefix. */
static int entries_named(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "opendir %s: %s", dir, strerror(errno));
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) n += !strncmp(e->d_name, prefix, strlen(prefix));
    closedir(d);
    return n;
}

static void header_made_once_then_loaded(void)
{
    setup_tree_cpu();
    cr_assert_eq(setenv("AMP_CPU_PCH", "1", 1), 0);
    /* The helpers' own TMPDIR: the header's directory goes when they exit. */
    char tmp[PATH_MAX + 8];
    snprintf(tmp, sizeof tmp, "%s/tmp", g_root);
    cr_assert_eq(mkdir(tmp, 0700), 0);
    cr_assert_eq(setenv("TMPDIR", tmp, 1), 0);
    RUN_HELPER_OK("cpu");
    cr_assert_eq(entries_named(tmp, "hipamp-pch-"), 0, "the header's directory outlived its process");
    cr_assert_eq(entries_named(tmp, "hipamp-cpu-"), 0, "a build directory outlived its process");
    walk w = scan_cache();
    cr_assert_eq(w.entries, 2, "want the module and the header, found%s", w.names);
    bool used = false;
    cr_assert_eq(compiles_logged(), 2);
    cr_assert_eq(header_compiles_logged(&used), 1);
    cr_assert(!used, "the first build compiled with a header it was making");
    char path[PATH_MAX];
    off_t size = 0;
    largest_entry(path, &size);
    cr_assert_gt(size, 1 << 20, "the header entry is %lld bytes", (long long)size);

    write_probe_source("// another kernel text, another module\n");
    RUN_HELPER_OK("cpu");
    w = scan_cache();
    cr_assert_eq(w.entries, 3, "want two modules and the header, found%s", w.names);
    cr_assert_eq(compiles_logged(), 3, "the second process compiled the header again");
    cr_assert_eq(header_compiles_logged(&used), 1);
    cr_assert(used, "the second process compiled without the header");
    cr_assert_eq(entries_named(tmp, "hipamp-pch-"), 0, "the header's directory outlived its process");
    unsetenv("TMPDIR");
}

Test(cache, cpu_precompiled_header_made_once_then_loaded, .fini = cleanup) { header_made_once_then_loaded(); }

/* The same with clang (AMP_CXX=clang++), which checks a header against
 * the file it was made from, in the private directory of the process that
 * made it: once that process had ended, every later process's build with
 * the header failed, and was compiled again without it (the header never
 * saved anything after its first process); and while that process lived,
 * the file clang listed could go between the compile and the check of
 * what it read ("which is gone"). */
Test(cache, cpu_precompiled_header_made_once_then_loaded_with_clang, .fini = cleanup)
{
    if (system("command -v clang++ > /dev/null 2>&1") != 0) cr_skip_test("clang++ is not installed");
    cr_assert_eq(setenv("AMP_CXX", "clang++", 1), 0);
    header_made_once_then_loaded();
}

/* A header entry changed on disk fails its MAC: refused (removed), made
 * again, and the build succeeds with the right results; the next process
 * uses the one made again. */
Test(cache, cpu_precompiled_header_tampered_is_refused, .fini = cleanup)
{
    setup_tree_cpu();
    cr_assert_eq(setenv("AMP_CPU_PCH", "1", 1), 0);
    RUN_HELPER_OK("cpu");
    char path[PATH_MAX];
    off_t size = 0;
    largest_entry(path, &size);
    cr_assert_gt(size, 1 << 20);
    FILE *f = fopen(path, "r+b");
    cr_assert_not_null(f);
    cr_assert_eq(fseek(f, (long)(size / 2), SEEK_SET), 0);
    int c = fgetc(f);
    cr_assert_eq(fseek(f, (long)(size / 2), SEEK_SET), 0);
    fputc(c ^ 0x5a, f);
    cr_assert_eq(fclose(f), 0);

    write_probe_source("// another kernel text, another module\n");
    RUN_HELPER_OK("cpu");
    bool used = false;
    cr_assert_eq(header_compiles_logged(&used), 2, "the tampered header was not refused and made again");
    cr_assert(!used, "a build compiled with the tampered header");
    walk w = scan_cache();
    cr_assert_eq(w.entries, 3, "want two modules and the remade header, found%s", w.names);

    /* The header made again serves the next process. */
    write_probe_source("// a third kernel text\n");
    RUN_HELPER_OK("cpu");
    cr_assert_eq(header_compiles_logged(&used), 2);
    cr_assert(used, "the third process compiled without the header made again");
}

/* AMP_CPU_PCH=0 (setup_tree's): no header made, stored or used. */
Test(cache, cpu_precompiled_header_off, .fini = cleanup)
{
    setup_tree_cpu();
    /* setup_tree set AMP_CPU_PCH=0 */
    RUN_HELPER_OK("cpu");
    walk w = scan_cache();
    cr_assert_eq(w.entries, 1, "want the module alone, found%s", w.names);
    bool used = true;
    cr_assert_eq(compiles_logged(), 1);
    cr_assert_eq(header_compiles_logged(&used), 0);
    cr_assert(!used);
}

/* No header where what it would stand for is not named by its key: a
 * build with options (a -D may change the header's meaning), or with
 * CPATH set (directories searched before the default ones). */
Test(cache, cpu_precompiled_header_not_with_options_or_cpath, .fini = cleanup)
{
    setup_tree_cpu();
    cr_assert_eq(setenv("AMP_CPU_PCH", "1", 1), 0);
    RUN_HELPER_OK("cpu", .options = "-DHIPAMP_TEST_UNUSED=1");
    char cpath[PATH_MAX + 8];
    snprintf(cpath, sizeof cpath, "CPATH=%s", g_root);
    write_probe_source("// another kernel text, another module\n");
    RUN_HELPER_OK("cpu", .extra_env = cpath);
    walk w = scan_cache();
    cr_assert_eq(w.entries, 2, "want two modules and no header, found%s", w.names);
    bool used = true;
    cr_assert_eq(compiles_logged(), 2);
    cr_assert_eq(header_compiles_logged(&used), 0);
    cr_assert(!used);
}

/* ------------------- the loop transformation's precompiled library part */

/* A tiled kernel beside the probe: its build runs the loop transformation. */
static const char g_tiled_probe[] =
    "AMP_TILED_KERNEL(cache_probe_tiled, amp::tiled_index<64> t, amp::array_view<int, 1> a)\n"
    "{\n    tile_static int s[64];\n    s[t.local[0]] = a[t.global];\n    t.barrier.wait();\n"
    "    a[t.global] = s[63 - t.local[0]];\n}\n";

/* The cache entry holding the precompiled part (its bytes begin with the
 * format's magic, "AMPLPCH"): its path, or "" when none. */
static void clang_part_entry(char *path)
{
    DIR *d = opendir(g_cache);
    cr_assert_not_null(d, "%s: %s", g_cache, strerror(errno));
    path[0] = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (n <= 5 || strcmp(e->d_name + n - 5, ".ampc")) continue;
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s/%s", g_cache, e->d_name);
        size_t size = 0;
        char *data = read_all(p, &size);
        if (data && memmem(data, size, "AMPLPCH", 8)) snprintf(path, PATH_MAX, "%s", p);
        free(data);
    }
    closedir(d);
}

/* How many of the helpers' AMP_CPU_VERBOSE lines (captured) say their loop
 * transformation read the precompiled part. */
static int clang_part_reads_timed(int *timed)
{
    fclose(stderr); /* the pipe's write end: its reader then sees the end */
    FILE *f = cr_get_redirected_stderr();
    cr_assert_not_null(f);
    char line[1024];
    int n = 0;
    *timed = 0;
    while (fgets(line, sizeof line, f)) {
        n += strstr(line, "the loop transformation read the library's part") != NULL;
        /* AMP_CPU_VERBOSE's account of a build's time */
        *timed += strstr(line, " ms (the loop transformation ") && strstr(line, "the precompiled header's wait ") &&
                  strstr(line, "the compiler ");
    }
    return n;
}

static int clang_part_reads(void)
{
    int timed;
    return clang_part_reads_timed(&timed);
}

/* Skips the test where this machine has no loop transformation (no
 * libclang): a tiled kernel's loop version is then refused. Builds with no
 * disk cache and the compiler's header off, before the tree is set up. */
static void skip_without_loop_transformation(void)
{
    setenv("AMP_CACHE_DIR", "off", 1);
    setenv("AMP_CPU_PCH", "0", 1);
    setenv("AMP_CPU_TILED", "loops", 1);
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    amp_program *p = test_build(acc, g_tiled_probe);
    amp_kernel *k = NULL;
    amp_status st = amp_program_get_kernel(p, "cache_probe_tiled", &k);
    const char *msg = st == AMP_OK ? "" : amp_last_error();
    bool none = strstr(msg, "no libclang found") || strstr(msg, "AMP_LIBCLANG") || strstr(msg, "could not be loaded") ||
                strstr(msg, "libclang lacks");
    char why[512];
    snprintf(why, sizeof why, "%s", msg);
    amp_program_destroy(p);
    unsetenv("AMP_CPU_TILED");
    if (none) cr_skip_test("the loop transformation cannot run here: %s", why);
    ASSERT_OK(st);
}

/* The first cold build of a unit with a tiled kernel makes the part
 * (beside its own parse of the whole text) and stores it; the next
 * process, building another text, loads it and its parse reads it (no
 * part made again: the entry is the same file), with the results the
 * helper checks. */
/* A fresh tree, both headers on, stderr captured, and a first process's
 * build of the probe with the tiled kernel: the module, the header and the
 * part it made are the cache's entries; part: the part's entry. */
static void first_tiled_build(char *part)
{
    skip_without_loop_transformation();
    setup_tree_cpu();
    cr_assert_eq(setenv("AMP_CPU_PCH", "1", 1), 0);
    write_probe_source(g_tiled_probe);
    cr_redirect_stderr();
    RUN_HELPER_OK("cpu", .extra_env = "AMP_CPU_VERBOSE=1");
    walk w = scan_cache();
    cr_assert_eq(w.entries, 3, "want the module, the header and the part, found%s", w.names);
    clang_part_entry(part);
    cr_assert(part[0], "no entry holds the precompiled part:%s", w.names);
}

Test(cache, cpu_loop_transformation_part_made_once_then_loaded, .fini = cleanup)
{
    char part[PATH_MAX];
    first_tiled_build(part);
    struct stat first;
    cr_assert_eq(stat(part, &first), 0);

    write_probe_source("// another kernel text, another module\n"
                       "AMP_TILED_KERNEL(cache_probe_tiled, amp::tiled_index<64> t, amp::array_view<int, 1> a)\n"
                       "{\n    tile_static int s[64];\n    s[63 - t.local[0]] = a[t.global];\n    t.barrier.wait();\n"
                       "    a[t.global] = s[t.local[0]];\n}\n");
    RUN_HELPER_OK("cpu", .extra_env = "AMP_CPU_VERBOSE=1");
    walk w = scan_cache();
    cr_assert_eq(w.entries, 4, "want two modules, the header and the part, found%s", w.names);
    struct stat again;
    cr_assert_eq(stat(part, &again), 0, "the part's entry went: %s", strerror(errno));
    cr_assert(same_file_unchanged(&first, &again), "the second process made and stored the part again");
    int timed = 0;
    cr_assert_eq(clang_part_reads_timed(&timed), 1, "want the second process's parse, and it alone, to read the part");
    cr_assert_eq(timed, 2, "want each build's time accounted for (AMP_CPU_VERBOSE), found %d", timed);
    /* The compiler's header, read on a thread while the transformation
     * ran, is the one the second build compiled with. */
    bool used = false;
    cr_assert_eq(header_compiles_logged(&used), 1, "the second process made the compiler's header again");
    cr_assert(used, "the second build compiled without the compiler's header");
}

/* A part's entry changed on disk fails its MAC: refused (removed), made
 * again beside a whole parse, and the build succeeds with the right
 * results; the next process reads the one made again. */
Test(cache, cpu_loop_transformation_part_tampered_is_refused, .fini = cleanup)
{
    char part[PATH_MAX];
    first_tiled_build(part);
    struct stat sb;
    cr_assert_eq(stat(part, &sb), 0);
    FILE *f = fopen(part, "r+b");
    cr_assert_not_null(f);
    cr_assert_eq(fseek(f, (long)(sb.st_size / 2), SEEK_SET), 0);
    int c = fgetc(f);
    cr_assert_eq(fseek(f, (long)(sb.st_size / 2), SEEK_SET), 0);
    fputc(c ^ 0x5a, f);
    cr_assert_eq(fclose(f), 0);

    write_probe_source("// another kernel text\n" "AMP_TILED_KERNEL(cache_probe_tiled, amp::tiled_index<64> t, "
                       "amp::array_view<int, 1> a) { a[t.global] = 5; }\n");
    RUN_HELPER_OK("cpu", .extra_env = "AMP_CPU_VERBOSE=1");
    walk w = scan_cache();
    cr_assert_eq(w.entries, 4, "want two modules, the header and the part made again, found%s", w.names);
    char again[PATH_MAX];
    clang_part_entry(again);
    cr_assert_str_eq(again, part, "the part made again is not under its key");

    write_probe_source("// a third kernel text\n" "AMP_TILED_KERNEL(cache_probe_tiled, amp::tiled_index<64> t, "
                       "amp::array_view<int, 1> a) { a[t.global] = 6; }\n");
    RUN_HELPER_OK("cpu", .extra_env = "AMP_CPU_VERBOSE=1");
    cr_assert_eq(clang_part_reads(), 1, "want the third process's parse alone to read the part (the tampered one "
                                        "refused, the one made again read)");
}

/* A build that fails with the header is compiled once more without it:
 * the error reported is the whole text's, at the user's line. */
Test(cache, cpu_precompiled_header_failed_try_is_retried_whole, .fini = cleanup)
{
    amp_accelerator *acc = setup_tree_cpu();
    cr_assert_eq(setenv("AMP_CPU_PCH", "1", 1), 0);
    /* The first build makes the header (and waits for it). */
    amp_program *p = test_build(acc, "AMP_KERNEL(pch_good, amp::index<1> i, amp::array_view<int, 1> a) { a[i] = 1; }\n");
    amp_program_destroy(p);
    int before = compiles_logged();
    p = NULL;
    ASSERT_STATUS(amp_program_build(acc, "\n\nAMP_KERNEL(pch_bad, amp::index<1> i, amp::array_view<int, 1> a)\n"
                                         "{ a[i] = pch_undeclared_xyz; }\n", NULL, &p),
                  AMP_ERROR_COMPILE);
    cr_assert_null(p);
    const char *log = amp_last_error();
    cr_assert(strstr(log, "pch_undeclared_xyz") && strstr(log, "kernel.hip:4:"), "log: %s", log);
    cr_assert_eq(compiles_logged(), before + 2, "want a try with the header, then one without");
    FILE *f = fopen(g_cxx_log, "r");
    cr_assert_not_null(f);
    char line[8192], prev[8192] = "", last[8192] = "";
    while (fgets(line, sizeof line, f)) {
        snprintf(prev, sizeof prev, "%s", last);
        snprintf(last, sizeof last, "%s", line);
    }
    fclose(f);
    cr_assert(strstr(prev, "-include ") != NULL, "the first try did not use the header: %s", prev);
    cr_assert(strstr(last, "-include ") == NULL, "the retry used the header: %s", last);
}

/* ------------------------- a shared cache and its group (other users) */

/* What a build in a child process saw, the child made another user by fork
 * and setuid (before the library is used in this process, so that each
 * child starts it afresh). */
typedef struct child_run {
    int stage; /* 0 built and ran; 1 credentials; 2 no accelerator; 3 build; 4 kernel; 5 launch */
    int add;   /* the probe's CACHE_PROBE_ADD, as it ran */
    amp_cache_info ci;
    char err[512];
} child_run;

typedef struct as_user {
    uid_t uid;
    gid_t gid;   /* real and effective group */
    gid_t group; /* the one supplementary group */
    mode_t umask;
} as_user;

static void child_build(const char *src, child_run *r)
{
    amp_accelerator *acc = NULL;
    amp_program *p = NULL;
    amp_kernel *k = NULL;
    amp_array_view *v = NULL;
    int data[4] = {0, 0, 0, 0};
    if (amp_accelerator_find("cpu", &acc) != AMP_OK) r->stage = 2;
    else if (amp_program_build(acc, src, NULL, &p) != AMP_OK) r->stage = 3;
    else if (amp_program_get_kernel(p, "cache_probe_scale", &k) != AMP_OK) r->stage = 4;
    else if (amp_array_view_create(data, sizeof(int), amp_extent_1d(4), AMP_READ_WRITE, &v) != AMP_OK) r->stage = 5;
    else {
        amp_arg a[] = {amp_arg_view(v), amp_arg_int32(1)};
        if (amp_parallel_for_each(NULL, amp_extent_1d(4), k, a, 2) != AMP_OK || amp_array_view_destroy(v) != AMP_OK)
            r->stage = 5;
        r->add = data[0];
    }
    if (r->stage) snprintf(r->err, sizeof r->err, "%s", amp_last_error());
    (void)amp_cache_get_info(&r->ci);
}

/* Build src (the probe kernel) as u in a child, with this process's
 * environment (AMP_CACHE_DIR, AMP_CACHE_SHARED, ...). */
static child_run run_as(as_user u, const char *src)
{
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0, "fork: %s", strerror(errno));
    if (pid == 0) {
        child_run r;
        memset(&r, 0, sizeof r);
        close(fds[0]);
        if (setgroups(1, &u.group) != 0 || setgid(u.gid) != 0 || setuid(u.uid) != 0) {
            r.stage = 1;
            snprintf(r.err, sizeof r.err, "cannot become uid %d: %s", (int)u.uid, strerror(errno));
        } else {
            umask(u.umask);
            child_build(src, &r);
        }
        ssize_t w = write(fds[1], &r, sizeof r);
        _exit(w == (ssize_t)sizeof r ? 0 : 1);
    }
    close(fds[1]);
    child_run r;
    memset(&r, 0, sizeof r);
    size_t got = 0;
    while (got < sizeof r) {
        ssize_t n = read(fds[0], (char *)&r + got, sizeof r - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += (size_t)n;
    }
    close(fds[0]);
    int ws;
    cr_assert_eq(waitpid(pid, &ws, 0), pid);
    cr_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 0 && got == sizeof r,
              "the child as uid %d died (status %#x) or wrote no result", (int)u.uid, ws);
    cr_assert_neq(r.stage, 1, "%s", r.err);
    return r;
}

/* The probe with its own key (tag) and CACHE_PROBE_ADD. */
static char *probe_text(const char *tag, int add)
{
    size_t n = strlen(test_kernels_cache_probe) + PATH_MAX + 128;
    char *src = malloc(n);
    cr_assert_not_null(src);
    snprintf(src, n, "// %s %s\n#define CACHE_PROBE_ADD %d\n%s", g_root, tag, add, test_kernels_cache_probe);
    return src;
}

/* A child's build worked and ran the probe of add. */
#define ASSERT_RAN(r, want, who)                                                                                   \
    cr_assert((r).stage == 0 && (r).add == (want), "%s: stage %d, probe gave %d (want %d): %s", (who), (r).stage, \
              (r).add, (want), (r).err)

/* The users these tests act as: root in the parent; "nobody" (uid 65534),
 * a member of its primary group by the user database; a group of which
 * the database knows nothing (so nobody is no member of it). */
typedef struct users {
    uid_t other;      /* nobody */
    gid_t member_gid; /* nobody's primary group */
    gid_t outside;    /* a group without nobody */
} users;

static users need_users(void)
{
    if (geteuid() != 0)
        cr_skip_test("needs root: the other users of a shared cache are made by fork and setuid (uid 65534)");
    struct passwd *pw = getpwuid(65534);
    if (!pw) cr_skip_test("uid 65534 (nobody) is not in the user database: the group rules need a known user");
    users u = {65534, pw->pw_gid, 0};
    for (gid_t g = 54321; g < 54421 && !u.outside; ++g)
        if (g != u.member_gid && !getgrgid(g)) u.outside = g;
    if (!u.outside) cr_skip_test("found no unused group id in 54321..54420");
    return u;
}

/* A tree every user can reach (under /tmp, whatever TMPDIR is) and the
 * children's environment: no wrapper (the other user compiles with the
 * default compiler), TMPDIR=/tmp. */
static void setup_shared_tree(void)
{
    snprintf(g_root, sizeof g_root, "/tmp/hipamp-cache-test-XXXXXX");
    cr_assert_not_null(mkdtemp(g_root), "mkdtemp: %s", strerror(errno));
    cr_assert_eq(chmod(g_root, 0755), 0);
    g_cxx[0] = '\0';
    cr_assert_eq(setenv("TMPDIR", "/tmp", 1), 0);
    cr_assert_eq(setenv("AMP_CPU_PCH", "0", 1), 0);
    cr_assert_eq(setenv("AMP_PREBUILT", "0", 1), 0);
    unsetenv("AMP_CXX");
}

static void make_dir_as(const char *path, uid_t uid, gid_t gid, mode_t mode)
{
    cr_assert_eq(mkdir(path, 0700), 0, "mkdir %s: %s", path, strerror(errno));
    cr_assert_eq(chown(path, uid, gid), 0, "chown %s: %s", path, strerror(errno));
    cr_assert_eq(chmod(path, mode), 0);
}

static void give(const char *path, uid_t uid, gid_t gid, mode_t mode)
{
    cr_assert_eq(chown(path, uid, gid), 0, "chown %s: %s", path, strerror(errno));
    cr_assert_eq(chmod(path, mode), 0);
}

static void copy_file(const char *from, const char *to)
{
    size_t n = 0;
    void *b = read_all(from, &n);
    write_file(to, b, n);
    free(b);
}

/* The name (hex key .ampc) the probe src gets: built by root in a private
 * cache of its own. */
static void entry_name_of(const char *src, char *name, size_t n)
{
    char priv[PATH_MAX];
    snprintf(priv, sizeof priv, "%s/private", g_root);
    cr_assert_eq(mkdir(priv, 0700), 0);
    cr_assert_eq(setenv("AMP_CACHE_DIR", priv, 1), 0);
    unsetenv("AMP_CACHE_SHARED");
    child_run r = run_as((as_user){0, 0, 0, 022}, src);
    ASSERT_RAN(r, 7, "root in a private cache");
    walk w = scan_dir(priv);
    cr_assert_eq(w.entries, 1, "%s", w.names);
    snprintf(name, n, "%s", strrchr(w.path, '/') + 1);
}

/* The attack of the review (F1): a shared cache directory whose owner is
 * not in its group. The group's members write it, but its owner (uid
 * 65534 here, outside the group) can replace the key and every entry: a
 * member's process loaded and ran the owner's code (the marker object's
 * constructor creates a file). Such a directory is refused, and so are a
 * key and an entry owned by someone outside the group; a directory owned
 * by a member (by the user database) is used. */
Test(cache, shared_cache_trusts_no_owner_outside_its_group, .fini = cleanup, .timeout = 300)
{
    users us = need_users();
    setup_shared_tree();
    char *src = probe_text("owner", 7);
    char name[128], marker[PATH_MAX], evil[PATH_MAX], path[2 * PATH_MAX], key_path[2 * PATH_MAX];
    entry_name_of(src, name, sizeof name);
    snprintf(marker, sizeof marker, "%s/MARKER", g_root);
    cr_assert_eq(setenv("HIPAMP_TEST_MARKER", marker, 1), 0);
    size_t mn = 0;
    void *planted = marker_object(&mn);
    const as_user victim = {0, 0, us.outside, 022}; /* a member of the group "outside" */

    /* 1. The directory is the outsider's: their key, their entry. */
    snprintf(evil, sizeof evil, "%s/evil", g_root);
    make_dir_as(evil, us.other, us.outside, 02770);
    unsigned char key[32];
    cr_assert_eq(RAND_bytes(key, 32), 1);
    snprintf(key_path, sizeof key_path, "%s/.key", evil);
    write_file(key_path, key, 32);
    give(key_path, us.other, us.outside, 0640);
    snprintf(path, sizeof path, "%s/private/%s", g_root, name);
    char evil_entry[2 * PATH_MAX];
    snprintf(evil_entry, sizeof evil_entry, "%s/%s", evil, name);
    copy_file(path, evil_entry);
    forge_entry(evil_entry, key, planted, mn);
    give(evil_entry, us.other, us.outside, 0640);
    cr_assert_eq(setenv("AMP_CACHE_DIR", evil, 1), 0);
    cr_assert_eq(setenv("AMP_CACHE_SHARED", "group", 1), 0);
    child_run r = run_as(victim, src);
    cr_assert(!exists(marker), "code planted by uid 65534, the owner of a shared cache directory outside its group, "
                               "was loaded");
    ASSERT_RAN(r, 7, "the member");
    cr_assert(!r.ci.disk_enabled, "a shared cache directory owned by a user outside its group was used");
    cr_assert(strstr(r.ci.reason, evil) && strstr(r.ci.reason, "uid 65534") && strstr(r.ci.reason, "not a member"),
              "reason: %s", r.ci.reason);

    /* 2. A good directory (root's), the key the outsider's. */
    unlink(marker);
    char good[PATH_MAX];
    snprintf(good, sizeof good, "%s/good", g_root);
    make_dir_as(good, 0, us.outside, 02770);
    snprintf(path, sizeof path, "%s/.key", good);
    copy_file(key_path, path);
    give(path, us.other, us.outside, 0640);
    snprintf(path, sizeof path, "%s/%s", good, name);
    copy_file(evil_entry, path);
    give(path, us.other, us.outside, 0640);
    cr_assert_eq(setenv("AMP_CACHE_DIR", good, 1), 0);
    r = run_as(victim, src);
    cr_assert(!exists(marker), "code under a key owned by uid 65534, outside the group, was loaded");
    ASSERT_RAN(r, 7, "the member");
    cr_assert(!r.ci.disk_enabled, "a key owned by a user outside the group was used");
    cr_assert(strstr(r.ci.reason, ".key") && strstr(r.ci.reason, "uid 65534"), "reason: %s", r.ci.reason);

    /* 3. A good directory and key (made by the member), one entry the
     * outsider's: refused by name, removed and rebuilt. */
    unlink(marker);
    char good2[PATH_MAX];
    snprintf(good2, sizeof good2, "%s/good2", g_root);
    make_dir_as(good2, 0, us.outside, 02770);
    cr_assert_eq(setenv("AMP_CACHE_DIR", good2, 1), 0);
    r = run_as(victim, src);
    ASSERT_RAN(r, 7, "the member, storing");
    cr_assert_eq(r.ci.disk_stores, 1, "not stored: %s %s", r.ci.reason, r.ci.last_uncacheable);
    snprintf(key_path, sizeof key_path, "%s/.key", good2);
    size_t kn = 0;
    unsigned char *good_key = read_all(key_path, &kn);
    cr_assert_eq(kn, 32);
    snprintf(path, sizeof path, "%s/%s", good2, name);
    forge_entry(path, good_key, planted, mn);
    give(path, us.other, us.outside, 0640);
    r = run_as(victim, src);
    cr_assert(!exists(marker), "an entry owned by uid 65534, outside the group, was loaded");
    ASSERT_RAN(r, 7, "the member");
    cr_assert(r.ci.disk_enabled, "%s", r.ci.reason);
    cr_assert_eq(r.ci.disk_hits, 0);
    cr_assert_eq(r.ci.disk_rejected, 1);
    cr_assert(strstr(r.ci.last_uncacheable, name) && strstr(r.ci.last_uncacheable, "uid 65534"),
              "last_uncacheable: %s", r.ci.last_uncacheable);
    cr_assert_eq(r.ci.disk_stores, 1, "the refused entry was not rebuilt");

    /* 4. A directory owned by a member (nobody, of its primary group): used. */
    char member[PATH_MAX];
    snprintf(member, sizeof member, "%s/member", g_root);
    make_dir_as(member, us.other, us.member_gid, 02770);
    cr_assert_eq(setenv("AMP_CACHE_DIR", member, 1), 0);
    r = run_as((as_user){0, 0, us.member_gid, 022}, src);
    ASSERT_RAN(r, 7, "a member in a member's directory");
    cr_assert(r.ci.disk_enabled, "a shared directory owned by a member was refused: %s", r.ci.reason);
    cr_assert_eq(r.ci.disk_stores, 1, "%s", r.ci.last_uncacheable);
    free(good_key);
    free(planted);
    free(src);
}

/* Every file of a shared cache is of its group, mode 0640. */
static void assert_shared_files(const char *dir, gid_t gid)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' && (!e->d_name[1] || !strcmp(e->d_name, ".."))) continue;
        char p[2 * PATH_MAX];
        struct stat sb;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        cr_assert_eq(lstat(p, &sb), 0);
        cr_assert(sb.st_gid == gid && (sb.st_mode & 07777) == 0640, "%s: group %d (want %d), mode %04o (want 0640)",
                  e->d_name, (int)sb.st_gid, (int)gid, (unsigned)(sb.st_mode & 07777));
        ++n;
    }
    closedir(d);
    cr_assert_geq(n, 2, "want the key and an entry in %s", dir);
}

/* The review's F2: a shared cache directory that hipamp creates for one
 * member is usable by the others, whatever the creator's umask and egid
 * and whether the parent is set-gid (mkdir ignored the set-gid bit and
 * applied the umask: the other members could not store, or their entries,
 * of their own egid, were refused). What cannot be stored or read says
 * why. */
Test(cache, shared_cache_made_by_one_member_is_the_groups, .fini = cleanup, .timeout = 300)
{
    SKIP_UNDER_ASAN("what other processes make of a directory's mode and group");
    users us = need_users();
    setup_shared_tree();
    const gid_t g = us.member_gid; /* nobody belongs to it; root joins it */
    char *src1 = probe_text("one", 1), *src2 = probe_text("two", 2);
    cr_assert_eq(setenv("AMP_CACHE_SHARED", "group", 1), 0);

    /* a. Made inside a set-gid project directory, under umask 022. */
    char proj[PATH_MAX], cache[2 * PATH_MAX];
    snprintf(proj, sizeof proj, "%s/proj", g_root);
    make_dir_as(proj, 0, g, 02775);
    snprintf(cache, sizeof cache, "%s/cache", proj);
    cr_assert_eq(setenv("AMP_CACHE_DIR", cache, 1), 0);
    const as_user a = {0, 0, g, 022}, b = {us.other, us.outside, g, 022};
    /* Below a group's directory the group must be named: the directory's
     * own group is whatever a member of any group of the user's who may
     * write the project directory chose to put there (the review's swap:
     * another group's directory with its own key and entries). Before,
     * plain "group" was taken in such a place. */
    child_run r = run_as(a, src1);
    ASSERT_RAN(r, 1, "the creator, the group not named");
    cr_assert(!r.ci.disk_enabled && strstr(r.ci.reason, "AMP_CACHE_SHARED=group:NAME") &&
                  strstr(r.ci.reason, "writable by group"),
              "a shared cache below a group-writable directory was used with the group not named: %s", r.ci.reason);
    char named[64];
    snprintf(named, sizeof named, "group:%d", (int)us.outside);
    cr_assert_eq(setenv("AMP_CACHE_SHARED", named, 1), 0);
    r = run_as(a, src1);
    ASSERT_RAN(r, 1, "the creator, another group named");
    cr_assert(!r.ci.disk_enabled && strstr(r.ci.reason, "not to group"), "another group's cache was used: %s",
              r.ci.reason);
    snprintf(named, sizeof named, "group:%d", (int)g);
    cr_assert_eq(setenv("AMP_CACHE_SHARED", named, 1), 0);
    r = run_as(a, src1);
    ASSERT_RAN(r, 1, "the creator");
    cr_assert(r.ci.disk_enabled && r.ci.disk_stores == 1, "%s %s", r.ci.reason, r.ci.last_uncacheable);
    struct stat sb;
    cr_assert_eq(stat(cache, &sb), 0);
    cr_assert(sb.st_gid == g && (sb.st_mode & 07777) == 02770, "the shared cache directory was made group %d mode %04o",
              (int)sb.st_gid, (unsigned)(sb.st_mode & 07777));
    r = run_as(b, src2);
    ASSERT_RAN(r, 2, "another member");
    cr_assert(r.ci.disk_enabled, "%s", r.ci.reason);
    cr_assert_eq(r.ci.disk_stores, 1, "another member could not store (%s)", r.ci.last_uncacheable);
    r = run_as(b, src1);
    ASSERT_RAN(r, 1, "another member");
    cr_assert_eq(r.ci.disk_hits, 1, "the creator's entry was not loaded by another member");
    r = run_as(a, src2);
    ASSERT_RAN(r, 2, "the creator");
    cr_assert_eq(r.ci.disk_hits, 1, "the other member's entry was not loaded (rejected %llu: %s)",
                 (unsigned long long)r.ci.disk_rejected, r.ci.last_uncacheable);
    assert_shared_files(cache, g);

    /* b. Made in a plain directory (not set-gid) by a member whose egid is
     * the group; the other's egid is not, and its umask 077. A sticky
     * directory above: the group need not be named. */
    cr_assert_eq(setenv("AMP_CACHE_SHARED", "group", 1), 0);
    char proj2[PATH_MAX], cache2[2 * PATH_MAX];
    snprintf(proj2, sizeof proj2, "%s/proj2", g_root);
    make_dir_as(proj2, 0, 0, 01777);
    snprintf(cache2, sizeof cache2, "%s/cache", proj2);
    cr_assert_eq(setenv("AMP_CACHE_DIR", cache2, 1), 0);
    const as_user a2 = {0, g, g, 002}, b2 = {us.other, us.outside, g, 077};
    r = run_as(a2, src1);
    ASSERT_RAN(r, 1, "the creator");
    cr_assert_eq(r.ci.disk_stores, 1, "%s %s", r.ci.reason, r.ci.last_uncacheable);
    r = run_as(b2, src2);
    ASSERT_RAN(r, 2, "another member");
    cr_assert_eq(r.ci.disk_stores, 1, "another member could not store (%s)", r.ci.last_uncacheable);
    for (int i = 0; i < 2; ++i) {
        r = run_as(a2, src2);
        ASSERT_RAN(r, 2, "the creator");
        cr_assert(r.ci.disk_hits == 1 && r.ci.disk_rejected == 0,
                  "run %d: the other member's entry was refused (hits %llu, rejected %llu: %s)", i,
                  (unsigned long long)r.ci.disk_hits, (unsigned long long)r.ci.disk_rejected, r.ci.last_uncacheable);
    }
    assert_shared_files(cache2, g);

    /* An entry another member cannot read (made so by hand, or by an older
     * hipamp under umask 077) is a miss that says why, and is replaced. */
    int made = 0;
    DIR *d = opendir(cache2);
    cr_assert_not_null(d);
    struct dirent *e;
    while ((e = readdir(d)))
        if (strstr(e->d_name, ".ampc")) {
            char p[3 * PATH_MAX];
            snprintf(p, sizeof p, "%s/%s", cache2, e->d_name);
            give(p, 0, g, 0600);
            ++made;
        }
    closedir(d);
    cr_assert_eq(made, 2);
    r = run_as(b2, src1);
    ASSERT_RAN(r, 1, "another member");
    cr_assert(strstr(r.ci.last_uncacheable, "cannot be read") && strstr(r.ci.last_uncacheable, "ampc"),
              "an entry this member cannot read was a silent miss (last_uncacheable: %s)", r.ci.last_uncacheable);
    cr_assert_eq(r.ci.disk_stores, 1, "the unreadable entry was not replaced: %s", r.ci.last_uncacheable);

    /* c. A directory the group may only read (the owner warms it): a
     * member's store fails, and says why. */
    char ro[PATH_MAX];
    snprintf(ro, sizeof ro, "%s/readonly", g_root);
    make_dir_as(ro, 0, g, 02750);
    cr_assert_eq(setenv("AMP_CACHE_DIR", ro, 1), 0);
    r = run_as(a, src1);
    cr_assert_eq(r.ci.disk_stores, 1, "%s %s", r.ci.reason, r.ci.last_uncacheable);
    r = run_as(b, src1);
    ASSERT_RAN(r, 1, "a member reading");
    cr_assert_eq(r.ci.disk_hits, 1, "%s", r.ci.last_uncacheable);
    r = run_as(b, src2);
    ASSERT_RAN(r, 2, "a member storing");
    cr_assert_eq(r.ci.disk_stores, 0);
    cr_assert_eq(r.ci.uncacheable_builds, 1, "a store that failed was not counted");
    cr_assert(strstr(r.ci.last_uncacheable, ro) && strstr(r.ci.last_uncacheable, strerror(EACCES)),
              "a store that failed gave no reason: \"%s\"", r.ci.last_uncacheable);
    free(src1);
    free(src2);
}

/* ------------------------------------- OpenSSL failing (a fault shim) */

/* A shared object for LD_PRELOAD that makes OpenSSL's last step fail for
 * libhipamp's calls only (HIPAMP_TEST_FAIL=digest:N: EVP_DigestFinal_ex;
 * mac:N: EVP_MAC_final; from the Nth such call on). preload: the
 * LD_PRELOAD=... entry. Where this test has ASan, the helper has it too
 * and would refuse to start with another library ahead of its runtime:
 * ASAN_OPTIONS says to allow it (the shim intercepts nothing of ASan's). */
static void fault_shim(char *preload, size_t n)
{
    char src[PATH_MAX], so[PATH_MAX], cmd[3 * PATH_MAX];
    snprintf(src, sizeof src, "%s/shim.cpp", g_root);
    snprintf(so, sizeof so, "%s/shim.so", g_root);
    const char *text =
        "#include <dlfcn.h>\n#include <stddef.h>\n#include <stdlib.h>\n#include <string.h>\n#include <atomic>\n"
        "static std::atomic<int> digest_calls, mac_calls;\n"
        "static bool fail_now(const char *what, std::atomic<int> &calls, void *caller) {\n"
        "  const char *f = getenv(\"HIPAMP_TEST_FAIL\"); size_t n = strlen(what);\n"
        "  if (!f || strncmp(f, what, n) || f[n] != ':') return false;\n"
        "  Dl_info i;\n"
        "  if (!dladdr(caller, &i) || !i.dli_fname || !strstr(i.dli_fname, \"libhipamp\")) return false;\n"
        "  return ++calls >= atoi(f + n + 1); }\n"
        "extern \"C\" int EVP_DigestFinal_ex(void *c, unsigned char *md, unsigned *s) {\n"
        "  static int (*real)(void *, unsigned char *, unsigned *);\n"
        "  if (!real) real = (int (*)(void *, unsigned char *, unsigned *))dlsym(RTLD_NEXT, \"EVP_DigestFinal_ex\");\n"
        "  int r = real(c, md, s);\n"
        "  return fail_now(\"digest\", digest_calls, __builtin_return_address(0)) ? 0 : r; }\n"
        "extern \"C\" int EVP_MAC_final(void *c, unsigned char *out, size_t *outl, size_t size) {\n"
        "  static int (*real)(void *, unsigned char *, size_t *, size_t);\n"
        "  if (!real) real = (int (*)(void *, unsigned char *, size_t *, size_t))dlsym(RTLD_NEXT, \"EVP_MAC_final\");\n"
        "  int r = real(c, out, outl, size);\n"
        "  return fail_now(\"mac\", mac_calls, __builtin_return_address(0)) ? 0 : r; }\n";
    write_file(src, text, strlen(text));
    const char *cxx = getenv("CXX") && *getenv("CXX") ? getenv("CXX") : "c++";
    snprintf(cmd, sizeof cmd, "%s -shared -fPIC -o '%s' '%s' -ldl", cxx, so, src);
    cr_assert_eq(system(cmd), 0, "could not build the fault shim: %s", cmd);
    snprintf(preload, n, "LD_PRELOAD=%s", so);
    if (dlsym(RTLD_DEFAULT, "__asan_init")) {
        const char *old = getenv("ASAN_OPTIONS");
        char opts[1024];
        snprintf(opts, sizeof opts, "%s%sverify_asan_link_order=0", old ? old : "", old && *old ? ":" : "");
        cr_assert_eq(setenv("ASAN_OPTIONS", opts, 1), 0);
    }
}

/* What cache_helper wrote to HIPAMP_HELPER_INFO. */
typedef struct helper_info {
    int enabled;
    unsigned long long hits, stores, rejected, uncacheable;
    char reason[600], last[300];
} helper_info;

static helper_info read_helper_info(const char *path)
{
    helper_info hi;
    memset(&hi, 0, sizeof hi);
    hi.enabled = -1;
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "the helper wrote no %s: %s", path, strerror(errno));
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        if (sscanf(line, "enabled %d", &hi.enabled) == 1 || sscanf(line, "hits %llu", &hi.hits) == 1 ||
            sscanf(line, "stores %llu", &hi.stores) == 1 || sscanf(line, "rejected %llu", &hi.rejected) == 1 ||
            sscanf(line, "uncacheable %llu", &hi.uncacheable) == 1)
            continue;
        if (!strncmp(line, "reason ", 7)) snprintf(hi.reason, sizeof hi.reason, "%s", line + 7);
        if (!strncmp(line, "last ", 5)) snprintf(hi.last, sizeof hi.last, "%s", line + 5);
    }
    fclose(f);
    unlink(path);
    return hi;
}

/* The review's F3: a SHA-256 that fails to finish gave every build the
 * key of zeros, and a second source loaded the first one's module. Where
 * the check when the cache opens fails, the disk cache is off (and says
 * why); where a build key fails later, that build is not cached. Each
 * source computes its own result. */
Test(cache, sha256_that_fails_gives_no_build_key, .fini = cleanup, .timeout = 240)
{
    amp_accelerator_info in;
    memset(&in, 0, sizeof in);
    in.is_emulated = true;
    setup_tree(in);
    char preload[3 * PATH_MAX], info[PATH_MAX + 16], src2[PATH_MAX + 16];
    fault_shim(preload, sizeof preload);
    snprintf(info, sizeof info, "%s/info", g_root);
    cr_assert_eq(setenv("HIPAMP_HELPER_INFO", info, 1), 0);
    cr_assert_eq(setenv("AMP_PREBUILT", "0", 1), 0);
    snprintf(src2, sizeof src2, "%s/src2.hip", g_root);
    write_probe_file(src2, "#define CACHE_PROBE_ADD 5\n");
    for (int from = 1; from <= 2; ++from) {
        char fail[64], dir[PATH_MAX + 16];
        snprintf(fail, sizeof fail, "digest:%d", from);
        cr_assert_eq(setenv("HIPAMP_TEST_FAIL", fail, 1), 0);
        snprintf(dir, sizeof dir, "%s/cache-%d", g_root, from);
        int rc = wait_helper(spawn_helper("cpu", (run_opts){.cache_dir = dir, .extra_env = preload}));
        cr_assert_eq(rc, 0, "%s: exit %d (%s)", fail, rc, exit_meaning(rc));
        helper_info hi = read_helper_info(info);
        rc = wait_helper(spawn_helper(
            "cpu", (run_opts){.source = src2, .cache_dir = dir, .extra_env = preload,
                              .extra_env2 = "HIPAMP_HELPER_EXPECT_ADD=5"}));
        cr_assert_eq(rc, 0, "%s: the second source gave exit %d (%s): the first one's module, under the key of zeros?",
                     fail, rc, exit_meaning(rc));
        hi = read_helper_info(info);
        walk w = scan_dir(dir);
        cr_assert_eq(w.entries, 0, "%s: stored without a build key:%s", fail, w.names);
        if (hi.enabled) {
            cr_assert_eq(hi.stores, 0);
            cr_assert(hi.uncacheable >= 1 && strstr(hi.last, "SHA-256"), "%s: why not cached: %s", fail, hi.last);
        } else {
            cr_assert(strstr(hi.reason, "SHA-256"), "%s: reason: %s", fail, hi.reason);
        }
        if (from == 1) cr_assert(!hi.enabled, "the check when the cache opens did not see SHA-256 fail");
    }
}

/* An HMAC that fails gave the MAC of zeros: stored so, and an entry whose
 * MAC is zeros matched on load (anyone who may write an entry could have
 * planted one). Nothing is stored or loaded by a MAC that failed. */
Test(cache, hmac_that_fails_neither_stores_nor_loads, .fini = cleanup, .timeout = 240)
{
    amp_accelerator_info in;
    memset(&in, 0, sizeof in);
    in.is_emulated = true;
    setup_tree(in);
    char preload[3 * PATH_MAX], info[PATH_MAX + 16], marker[PATH_MAX + 16], marker_env[PATH_MAX + 32];
    fault_shim(preload, sizeof preload);
    snprintf(info, sizeof info, "%s/info", g_root);
    snprintf(marker, sizeof marker, "%s/MARKER", g_root);
    snprintf(marker_env, sizeof marker_env, "HIPAMP_TEST_MARKER=%s", marker);
    cr_assert_eq(setenv("HIPAMP_HELPER_INFO", info, 1), 0);
    cr_assert_eq(setenv("AMP_PREBUILT", "0", 1), 0);
    /* The first HMAC (the check when the cache opens) works, the rest fail. */
    cr_assert_eq(setenv("HIPAMP_TEST_FAIL", "mac:2", 1), 0);
    RUN_HELPER_OK("cpu", .extra_env = preload);
    helper_info hi = read_helper_info(info);
    cr_assert(hi.enabled, "%s", hi.reason);
    cr_assert_eq(scan_cache().entries, 0, "an entry was stored with the MAC of a failed HMAC");
    cr_assert(hi.stores == 0 && strstr(hi.last, "MAC"), "stores %llu, why: %s", hi.stores, hi.last);

    /* A valid entry, then one in its place whose MAC is zeros. */
    unsetenv("HIPAMP_TEST_FAIL");
    RUN_HELPER_OK("cpu");
    char path[PATH_MAX];
    struct stat st;
    one_entry(path, &st);
    size_t mn = 0, en = 0;
    void *planted = marker_object(&mn);
    unsigned char any[32] = {1};
    forge_entry(path, any, planted, mn);
    unsigned char *e = read_all(path, &en);
    memset(e + ENTRY_MAC_AT, 0, 32);
    write_file(path, e, en);
    cr_assert_eq(chmod(path, 0600), 0);
    cr_assert_eq(setenv("HIPAMP_TEST_FAIL", "mac:2", 1), 0);
    RUN_HELPER_OK("cpu", .extra_env = preload, .extra_env2 = marker_env);
    cr_assert(!exists(marker), "an entry whose MAC is zeros was loaded while the HMAC failed");
    hi = read_helper_info(info);
    cr_assert_eq(hi.hits, 0);
    cr_assert_geq(hi.rejected, 1);
    free(e);
    free(planted);
}

/* The review's F4: an authenticated entry that the back end then refuses
 * (here: not a module at all) was counted as a disk hit. It is rejected,
 * named, and rebuilt. */
Test(cache, entry_the_back_end_refuses_is_no_hit, .fini = cleanup)
{
    amp_accelerator *acc = setup_tree_cpu();
    build_probe_here(acc);
    char path[PATH_MAX], key_path[PATH_MAX + 16];
    struct stat st;
    one_entry(path, &st);
    snprintf(key_path, sizeof key_path, "%s/.key", g_cache);
    size_t kn = 0;
    unsigned char *key = read_all(key_path, &kn);
    cr_assert_eq(kn, 32);
    forge_entry(path, key, "not a module", 12);
    amp_cache_info before = cache_info();
    int compiles = compiles_logged();
    ASSERT_OK(amp_cache_clear_memory());
    build_probe_here(acc);
    amp_cache_info ci = cache_info();
    cr_assert_eq(compiles_logged(), compiles + 1, "the refused entry should have been rebuilt");
    cr_assert_eq(ci.disk_hits, before.disk_hits, "an entry the back end refused was counted as a disk hit");
    cr_assert_eq(ci.disk_rejected, before.disk_rejected + 1);
    cr_assert(strstr(ci.last_uncacheable, strrchr(path, '/') + 1) && strstr(ci.last_uncacheable, "refused"),
              "last_uncacheable: %s", ci.last_uncacheable);
    assert_entry_valid("cpu", path);
    free(key);
}

/* The review's F5: a world-writable directory of someone else's (/tmp for
 * a user other than root) was refused for its owner, with advice to set
 * AMP_CACHE_SHARED=group, which then refused it as world-writable. */
Test(cache, info_reports_a_world_writable_cache_of_another_user)
{
    char dir[] = "/tmp/hipamp-cache-ww-XXXXXX";
    const char *use = dir;
    if (geteuid() == 0) {
        cr_assert_not_null(mkdtemp(dir));
        cr_assert_eq(chmod(dir, 01777), 0);
        cr_assert_eq(chown(dir, 65534, 65534), 0, "chown: %s", strerror(errno));
    } else {
        struct stat sb;
        if (stat("/tmp", &sb) != 0 || sb.st_uid == geteuid() || !(sb.st_mode & S_IWOTH))
            cr_skip_test("needs root, or a world-writable /tmp of another user's");
        use = "/tmp";
    }
    cr_assert_eq(setenv("AMP_CACHE_DIR", use, 1), 0);
    amp_cache_info ci = cache_info();
    if (use == dir) rmdir(dir);
    cr_assert(!ci.disk_enabled);
    cr_assert(strstr(ci.reason, "writable by every user") && strstr(ci.reason, use), "reason: %s", ci.reason);
    cr_assert(!strstr(ci.reason, "AMP_CACHE_SHARED"), "sharing with a group cannot make this safe: %s", ci.reason);
}

/* ------------------------------------------- the key, made and read */

/* g_root, a fresh directory of the test's (removed by cleanup). */
static void make_root(void)
{
    snprintf(g_root, sizeof g_root, "%s/hipamp-cache-test-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    cr_assert_not_null(mkdtemp(g_root), "mkdtemp: %s", strerror(errno));
}

/* n processes forked at once (held at a pipe until all are there) that
 * each open the disk cache at dir and report whether it is on; the first
 * refusal's reason goes to why. Returns how many found it off. The
 * children never return into the test. */
static int cache_opened_at_once(const char *dir, int n, char *why, size_t wsize)
{
    int go[2], back[2];
    pid_t pids[16];
    cr_assert(n <= 16);
    cr_assert_eq(pipe(go), 0);
    cr_assert_eq(pipe(back), 0);
    cr_assert_eq(setenv("AMP_CACHE_DIR", dir, 1), 0);
    for (int i = 0; i < n; ++i) {
        pids[i] = fork();
        cr_assert_geq(pids[i], 0, "fork: %s", strerror(errno));
        if (pids[i] == 0) {
            char c;
            close(go[1]);
            if (read(go[0], &c, 1) != 0) _exit(3); /* the parent's close is the start */
            amp_cache_info ci;
            if (amp_cache_get_info(&ci) != AMP_OK) _exit(2);
            if (!ci.disk_enabled) {
                char line[sizeof ci.reason + 1];
                int k = snprintf(line, sizeof line, "%s\n", ci.reason);
                if (write(back[1], line, (size_t)k) < 0) _exit(4);
                _exit(1);
            }
            _exit(0);
        }
    }
    close(go[0]);
    close(back[1]);
    close(go[1]);
    int off = 0;
    for (int i = 0; i < n; ++i) {
        int ws = 0;
        cr_assert_eq(waitpid(pids[i], &ws, 0), pids[i]);
        cr_assert(WIFEXITED(ws) && WEXITSTATUS(ws) <= 1, "child %d: status %#x", i, ws);
        off += WEXITSTATUS(ws);
    }
    ssize_t k = read(back[0], why, wsize - 1);
    why[k > 0 ? k : 0] = '\0';
    close(back[0]);
    return off;
}

/* The review's key race: eight processes on a fresh cache directory (MPI
 * ranks starting) published the key by link() then unlink(), and one that
 * lost the race read the key while it still had two links: "more than
 * one link", and its disk cache was off for the process's life. Rounds
 * until 6 s have passed; every process must find the cache on, and all
 * must have settled on one key (one .key, 32 bytes, no temporaries). */
Test(cache, processes_making_the_key_at_once_all_use_it, .fini = cleanup, .timeout = 60)
{
    SKIP_UNDER_ASAN("races between processes");
    make_root();
    double until = test_now_s() + 6;
    int rounds = 0;
    for (; rounds < 400 && (rounds < 20 || test_now_s() < until); ++rounds) {
        char dir[PATH_MAX + 16], why[1024];
        snprintf(dir, sizeof dir, "%s/r%d", g_root, rounds);
        cr_assert_eq(mkdir(dir, 0700), 0);
        int off = cache_opened_at_once(dir, 12, why, sizeof why);
        cr_assert_eq(off, 0, "round %d: %d of 12 processes found the new cache off: %s", rounds, off, why);
        DIR *d = opendir(dir);
        cr_assert_not_null(d);
        int names = 0;
        for (struct dirent *e; (e = readdir(d));) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            cr_assert_str_eq(e->d_name, ".key", "round %d: %s left in the cache", rounds, e->d_name);
            ++names;
        }
        closedir(d);
        cr_assert_eq(names, 1);
        char key[PATH_MAX + 32];
        struct stat sb;
        snprintf(key, sizeof key, "%s/.key", dir);
        cr_assert_eq(stat(key, &sb), 0);
        cr_assert(sb.st_size == 32 && sb.st_nlink == 1 && (sb.st_mode & 0777) == 0600, "round %d: size %lld, "
                  "%lu links, mode %04o", rounds, (long long)sb.st_size, (unsigned long)sb.st_nlink,
                  (unsigned)(sb.st_mode & 07777));
        test_remove_tree(dir);
    }
    cr_log_info("%d rounds", rounds);
}

/* A key cut short (0 bytes: a crash between its name and its bytes, which
 * nothing fsynced) turned the disk cache off for good ("is not 32
 * bytes"). One of ours is replaced, and the cache is on. */
Test(cache, a_short_key_of_ours_is_replaced, .fini = cleanup)
{
    make_root();
    char dir[PATH_MAX + 16], key[PATH_MAX + 32];
    snprintf(dir, sizeof dir, "%s/c", g_root);
    snprintf(key, sizeof key, "%s/.key", dir);
    cr_assert_eq(mkdir(dir, 0700), 0);
    int fd = open(key, O_WRONLY | O_CREAT | O_EXCL, 0600);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, "short", 5), 5);
    close(fd);
    cr_assert_eq(setenv("AMP_CACHE_DIR", dir, 1), 0);
    amp_cache_info ci = cache_info();
    cr_assert(ci.disk_enabled, "reason: %s", ci.reason);
    struct stat sb;
    cr_assert_eq(stat(key, &sb), 0);
    cr_assert(sb.st_size == 32 && sb.st_nlink == 1 && (sb.st_mode & 0777) == 0600, "size %lld, mode %04o",
              (long long)sb.st_size, (unsigned)(sb.st_mode & 07777));
}

/* What is not ours to remake is still refused, and named: a short key of
 * another user's (uid 65534's: needs root), or one with a second link. */
static void short_key_refused(bool foreign, const char *want)
{
    make_root();
    char dir[PATH_MAX + 16], key[PATH_MAX + 32], other[PATH_MAX + 32];
    snprintf(dir, sizeof dir, "%s/c", g_root);
    snprintf(key, sizeof key, "%s/.key", dir);
    snprintf(other, sizeof other, "%s/second-name", dir);
    cr_assert_eq(mkdir(dir, 0700), 0);
    int fd = open(key, O_WRONLY | O_CREAT | O_EXCL, 0600);
    cr_assert_geq(fd, 0);
    close(fd);
    if (foreign) cr_assert_eq(chown(key, 65534, 65534), 0);
    else cr_assert_eq(link(key, other), 0);
    cr_assert_eq(setenv("AMP_CACHE_DIR", dir, 1), 0);
    amp_cache_info ci = cache_info();
    cr_assert(!ci.disk_enabled);
    cr_assert(strstr(ci.reason, key) && strstr(ci.reason, want), "reason: %s", ci.reason);
    struct stat sb;
    cr_assert_eq(stat(key, &sb), 0);
    cr_assert_eq(sb.st_size, 0, "a key not ours to remake was replaced");
}

Test(cache, a_short_key_of_another_user_is_refused, .fini = cleanup)
{
    if (geteuid() != 0) cr_skip_test("needs root, to give the key to uid 65534");
    short_key_refused(true, "owned by another user");
}

Test(cache, a_short_key_with_two_links_is_refused, .fini = cleanup, .timeout = 30)
{
    short_key_refused(false, "more than one name");
}

/* The review's: a shared cache that hipamp makes itself with its group
 * named (AMP_CACHE_SHARED=group:N) was made in the maker's own group, then
 * refused on every run ("belongs to group 0, not to group N"); and the
 * directories it made on the way were 0700, so no other member could reach
 * it. Now the cache is given to group N (mode 2770) and the way there is
 * 0711 whatever the umask: another member builds from the maker's entry. */
Test(cache, a_shared_cache_made_for_a_named_group_is_that_groups_and_reachable, .fini = cleanup, .timeout = 120)
{
    users us = need_users();
    setup_shared_tree();
    char dir[PATH_MAX], way[PATH_MAX], pin[64];
    snprintf(way, sizeof way, "%s/a", g_root);
    snprintf(dir, sizeof dir, "%s/a/b/cache", g_root);
    snprintf(pin, sizeof pin, "group:%d", (int)us.outside);
    cr_assert_eq(setenv("AMP_CACHE_DIR", dir, 1), 0);
    cr_assert_eq(setenv("AMP_CACHE_SHARED", pin, 1), 0);
    char *src = probe_text("named group", 5);
    child_run r = run_as((as_user){0, 0, us.outside, 077}, src);
    ASSERT_RAN(r, 5, "the maker");
    cr_assert(r.ci.disk_enabled && r.ci.disk_stores == 1, "the maker's cache: %s (last: %s)", r.ci.reason,
              r.ci.last_uncacheable);
    struct stat sb;
    cr_assert_eq(stat(dir, &sb), 0);
    cr_assert(sb.st_gid == us.outside && (sb.st_mode & 07777) == 02770, "the cache is group %d, mode %04o",
              (int)sb.st_gid, (unsigned)(sb.st_mode & 07777));
    cr_assert_eq(stat(way, &sb), 0);
    cr_assert_eq(sb.st_mode & 0777, 0711, "a directory made on the way has mode %04o", (unsigned)(sb.st_mode & 0777));
    r = run_as((as_user){us.other, us.member_gid, us.outside, 022}, src);
    ASSERT_RAN(r, 5, "another member");
    cr_assert(r.ci.disk_enabled && r.ci.disk_hits == 1, "another member: %s (last: %s)", r.ci.reason,
              r.ci.last_uncacheable);
    free(src);
}

/* The diff review's: a process that found the shared cache a moment after
 * another made it, before that one gave it to the named group, refused it
 * for the rest of its life ("belongs to group 0, not to group N"). It now
 * waits up to 200 ms for the group. Here a child gives the directory to
 * the group 20 ms after the build's process opens it (inotify's IN_OPEN:
 * the walk to it opens nothing but O_PATH descriptors, which raise none). */
Test(cache, a_shared_cache_given_to_its_group_a_moment_late_is_used, .fini = cleanup, .timeout = 120)
{
    users us = need_users();
    setup_shared_tree();
    char dir[PATH_MAX], pin[64];
    snprintf(dir, sizeof dir, "%s/cache", g_root);
    cr_assert_eq(mkdir(dir, 0700), 0);
    snprintf(pin, sizeof pin, "group:%d", (int)us.outside);
    cr_assert_eq(setenv("AMP_CACHE_DIR", dir, 1), 0);
    cr_assert_eq(setenv("AMP_CACHE_SHARED", pin, 1), 0);
    int in = inotify_init1(IN_CLOEXEC);
    cr_assert_geq(in, 0, "inotify_init1: %s", strerror(errno));
    cr_assert_geq(inotify_add_watch(in, dir, IN_OPEN), 0);
    pid_t giver = fork();
    cr_assert_geq(giver, 0);
    if (giver == 0) {
        char ev[sizeof(struct inotify_event) + NAME_MAX + 1];
        struct pollfd pf = {in, POLLIN, 0};
        if (poll(&pf, 1, 60000) != 1 || read(in, ev, sizeof ev) <= 0) _exit(2);
        (void)nanosleep(&(struct timespec){0, 20000000}, NULL);
        _exit(chown(dir, 0, us.outside) == 0 && chmod(dir, 02770) == 0 ? 0 : 3);
    }
    close(in);
    char *src = probe_text("late group", 4);
    child_run r = run_as((as_user){0, 0, us.outside, 022}, src);
    int ws;
    cr_assert_eq(waitpid(giver, &ws, 0), giver);
    cr_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "the child giving the directory to the group failed (%#x)", ws);
    ASSERT_RAN(r, 4, "the member");
    cr_assert(r.ci.disk_enabled && r.ci.disk_stores == 1, "the member's cache: %s (last: %s)", r.ci.reason,
              r.ci.last_uncacheable);
    free(src);
}

/* ---------------------------- symbolic links on the way to the directory */

/* The review's: a symbolic link another user put partway along
 * AMP_CACHE_DIR (not as its last name, which was refused already) was
 * followed: the key and the directory were made in a private directory of
 * ours that they chose, and the sweep removed our old ".tmp-" files
 * there. As root the link is uid 65534's, in a sticky directory every user
 * may write; otherwise our own, in a directory others may write (not
 * sticky), which anyone could have put there. Neither is followed, the
 * reason names it, and nothing is made or removed behind it. */
Test(cache, a_link_another_user_could_have_put_on_the_way_is_not_followed, .fini = cleanup)
{
    make_root();
    char victim[PATH_MAX + 16], open_dir[PATH_MAX + 16], link_path[PATH_MAX + 32], cache[PATH_MAX + 64],
        old_tmp[PATH_MAX + 64];
    snprintf(victim, sizeof victim, "%s/private", g_root);
    snprintf(open_dir, sizeof open_dir, "%s/open", g_root);
    snprintf(link_path, sizeof link_path, "%s/theirs", open_dir);
    snprintf(cache, sizeof cache, "%s/hipamp", link_path);
    snprintf(old_tmp, sizeof old_tmp, "%s/.tmp-editor-backup", victim);
    cr_assert_eq(mkdir(victim, 0700), 0);
    write_file(old_tmp, "ours", 4);
    struct timespec old[2] = {{time(NULL) - 7200, 0}, {time(NULL) - 7200, 0}};
    cr_assert_eq(utimensat(AT_FDCWD, old_tmp, old, 0), 0);
    cr_assert_eq(mkdir(open_dir, 0700), 0);
    const bool root = geteuid() == 0;
    cr_assert_eq(chmod(open_dir, root ? 01777 : 0777), 0);
    cr_assert_eq(symlink(victim, link_path), 0);
    if (root) cr_assert_eq(lchown(link_path, 65534, 65534), 0);
    cr_assert_eq(setenv("AMP_CACHE_DIR", cache, 1), 0);
    amp_cache_info ci = cache_info();
    cr_assert(!ci.disk_enabled, "the cache was made behind the link");
    cr_assert(strstr(ci.reason, link_path) &&
                  strstr(ci.reason, root ? "a symbolic link owned by uid 65534" : "a group or others may write"),
              "reason: %s", ci.reason);
    DIR *d = opendir(victim);
    cr_assert_not_null(d);
    int names = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            cr_assert_str_eq(e->d_name, ".tmp-editor-backup", "%s was made behind the link", e->d_name);
            ++names;
        }
    closedir(d);
    cr_assert_eq(names, 1, "our old .tmp- file was swept behind the link");
}

/* A link of ours on the way, in a directory only we may write (a home
 * directory reached through /home -> /export/home, say), is followed, and
 * the directories below it are made. */
Test(cache, our_link_on_the_way_in_our_directory_is_followed, .fini = cleanup)
{
    make_root();
    char real[PATH_MAX + 16], link_path[PATH_MAX + 16], cache[PATH_MAX + 64], made[PATH_MAX + 64];
    snprintf(real, sizeof real, "%s/real", g_root);
    snprintf(link_path, sizeof link_path, "%s/link", g_root);
    snprintf(cache, sizeof cache, "%s/a/b/hipamp", link_path);
    snprintf(made, sizeof made, "%s/a/b/hipamp/.key", real);
    cr_assert_eq(mkdir(real, 0700), 0);
    cr_assert_eq(symlink("real", link_path), 0); /* relative: from the link's directory */
    cr_assert_eq(setenv("AMP_CACHE_DIR", cache, 1), 0);
    amp_cache_info ci = cache_info();
    cr_assert(ci.disk_enabled, "reason: %s", ci.reason);
    struct stat sb;
    cr_assert_eq(stat(made, &sb), 0, "no key at %s", made);
}

/* ------------------------------------ a set-uid program's environment */

/* A text file's bytes, NUL-terminated (malloc'ed), or NULL where there is
 * none. */
static char *text_or_null(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *t = calloc(1, 65537);
    cr_assert_not_null(t);
    size_t n = fread(t, 1, 65536, f);
    t[n] = '\0';
    fclose(f);
    return t;
}

/* A copy of cache_helper at bin, set-uid root (its run path names the
 * build's library). */
static void make_suid_helper(const char *bin)
{
    FILE *in = fopen(HIPAMP_CACHE_HELPER, "rb"), *out = fopen(bin, "wb");
    cr_assert(in && out);
    char buf[65536];
    for (size_t n; (n = fread(buf, 1, sizeof buf, in)) > 0;) cr_assert_eq(fwrite(buf, 1, n, out), n);
    fclose(in);
    cr_assert_eq(fclose(out), 0);
    cr_assert_eq(chmod(bin, 04755), 0);
}

/* argv run as uid and gid 65534 with envp and its stderr in err; its exit
 * status (a start that failed fails the test). */
static int run_as_nobody(char *const argv[], char *const envp[], const char *err)
{
    int efd = open(err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    cr_assert_geq(efd, 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        gid_t none[1] = {65534};
        if (dup2(efd, 2) < 0 || setgroups(1, none) != 0 || setresgid(65534, 65534, 65534) != 0 ||
            setresuid(65534, 65534, 65534) != 0)
            _exit(120);
        execve(argv[0], argv, envp);
        _exit(121);
    }
    close(efd);
    int ws = 0;
    cr_assert_eq(waitpid(pid, &ws, 0), pid);
    cr_assert(WIFEXITED(ws) && WEXITSTATUS(ws) < 120, "the helper did not start: status %#x", ws);
    return WEXITSTATUS(ws);
}

/* The review's: a set-uid program linked with hipamp took the invoker's
 * environment at its word. AMP_CXX (with AMP_TRUSTED_USERS naming the
 * invoker) ran their compiler with euid 0, and AMP_CACHE_DIR with
 * AMP_CACHE_SHARED=group loaded entries they could forge. As root: a copy
 * of cache_helper made set-uid root, run by uid 65534 with those variables
 * and a fake compiler of uid 65534's that leaves a mark when it runs. The
 * library must read none of them (every variable unset, the defaults; an
 * AMP_ one said ignored), keep the disk cache off, and never run the fake
 * compiler. */
Test(cache, a_set_uid_program_takes_nothing_from_the_invokers_environment, .fini = cleanup, .timeout = 120)
{
    if (geteuid() != 0) cr_skip_test("needs root, to make a program set-uid root and run it as uid 65534");
    make_root();
    cr_assert_eq(chmod(g_root, 0755), 0);
    char bin[PATH_MAX + 16], evil[PATH_MAX + 16], cxx[PATH_MAX + 32], mark[PATH_MAX + 32], cache[PATH_MAX + 16],
        info[PATH_MAX + 16], err[PATH_MAX + 16], script[4 * PATH_MAX];
    snprintf(bin, sizeof bin, "%s/suid-helper", g_root);
    snprintf(evil, sizeof evil, "%s/evil", g_root);
    snprintf(cxx, sizeof cxx, "%s/g++", evil);
    snprintf(mark, sizeof mark, "%s/ran", evil);
    snprintf(cache, sizeof cache, "%s/cache", evil);
    snprintf(info, sizeof info, "%s/info", g_root);
    snprintf(err, sizeof err, "%s/stderr", g_root);
    snprintf(g_src, sizeof g_src, "%s/src.hip", g_root);
    write_probe_source("");
    cr_assert_eq(chmod(g_src, 0644), 0);
    make_suid_helper(bin);
    /* The invoker's: a directory, a compiler that marks that it ran, and
     * a cache directory of theirs. */
    cr_assert_eq(mkdir(evil, 0755), 0);
    cr_assert_eq(mkdir(cache, 02770), 0);
    snprintf(script, sizeof script, "#!/bin/sh\necho \"euid $(id -u)\" >> '%s'\nexit 1\n", mark);
    write_file(cxx, script, strlen(script));
    cr_assert_eq(chmod(cxx, 0755), 0);
    cr_assert_eq(chown(evil, 65534, 65534), 0);
    cr_assert_eq(chown(cxx, 65534, 65534), 0);
    cr_assert_eq(chown(cache, 65534, 65534), 0);
    char e_cxx[PATH_MAX + 40], e_cache[PATH_MAX + 40], e_info[PATH_MAX + 40];
    snprintf(e_cxx, sizeof e_cxx, "AMP_CXX=%s", cxx);
    snprintf(e_cache, sizeof e_cache, "AMP_CACHE_DIR=%s", cache);
    snprintf(e_info, sizeof e_info, "HIPAMP_HELPER_INFO=%s", info);
    char *const envp[] = {e_cxx, "AMP_TRUSTED_USERS=65534", e_cache, "AMP_CACHE_SHARED=group", e_info,
                          "AMP_CPU_PCH=0", "PATH=/usr/bin:/bin", NULL};
    char *const argv[] = {bin, "cpu", g_src, NULL};
    run_as_nobody(argv, envp, err);
    char *said = text_or_null(info);
    char *errs = text_or_null(err);
    if (!said) cr_skip_test("the set-uid helper wrote no %s (a nosuid mount?): %s", info, errs ? errs : "");
    struct stat sb;
    cr_assert_neq(stat(mark, &sb), 0, "the invoker's compiler ran: %s", text_or_null(mark));
    cr_assert(strstr(said, "enabled 0") && strstr(said, "AT_SECURE"), "cache info: %s", said);
    cr_assert(errs && strstr(errs, "AMP_CXX is ignored") && strstr(errs, "AMP_CACHE_DIR is ignored"), "stderr: %s",
              errs ? errs : "");
    /* nor any compiler: GCC would read COMPILER_PATH and GCC_EXEC_PREFIX
     * from the invoker's environment */
    cr_assert(strstr(errs, "compiles no kernels"), "stderr: %s", errs);
    struct dirent *e;
    DIR *d = opendir(cache);
    cr_assert_not_null(d);
    while ((e = readdir(d))) cr_assert(e->d_name[0] == '.' && (!e->d_name[1] || !strcmp(e->d_name, "..")),
                                       "%s made in the invoker's cache directory", e->d_name);
    closedir(d);
    free(said);
    free(errs);
}

/* hipRTC and NVRTC compile inside the process, and hipRTC takes options
 * and paths from its environment (HIPRTC_COMPILE_OPTIONS_APPEND, HIP_PATH,
 * ...), which the library's own reading hides from the library only: a
 * set-uid program compiled GPU kernels with its rights and the invoker's
 * options. So it compiles none, as on the CPU accelerator: the same
 * set-uid helper, run by uid 65534, refuses amp_compile_for_target for
 * each GPU target this machine's compilers build (checked first in this
 * process), and a build on a GPU where one is present, naming why. */
Test(cache, a_set_uid_program_compiles_no_kernel_for_a_gpu, .fini = cleanup, .timeout = 120)
{
    if (geteuid() != 0) cr_skip_test("needs root, to make a program set-uid root and run it as uid 65534");
    make_root();
    cr_assert_eq(chmod(g_root, 0755), 0);
    char bin[PATH_MAX + 16], err[PATH_MAX + 16], dev[64];
    snprintf(bin, sizeof bin, "%s/suid-helper", g_root);
    snprintf(err, sizeof err, "%s/stderr", g_root);
    snprintf(g_src, sizeof g_src, "%s/src.hip", g_root);
    write_probe_source("");
    cr_assert_eq(chmod(g_src, 0644), 0);
    make_suid_helper(bin);
    char *text = NULL;
    size_t len = 0;
    FILE *f = fopen(g_src, "rb");
    cr_assert_not_null(f);
    cr_assert_eq(getdelim(&text, &len, '\0', f) > 0, true);
    fclose(f);
    const char *targets[] = {"gfx90a", "sm_90"};
    char *runs[3];
    int nruns = 0;
    for (int i = 0; i < 2; ++i) {
        amp_code_object *co = NULL;
        amp_status st = amp_compile_for_target(targets[i], text, NULL, &co);
        if (st == AMP_ERROR_UNSUPPORTED) {
            cr_log_info("%s: no compiler here: %s", targets[i], amp_last_error());
            continue;
        }
        cr_assert_eq(st, AMP_OK, "%s, not set-uid: %s: %s", targets[i], amp_status_name(st), amp_last_error());
        amp_code_object_destroy(co);
        cr_assert_geq(asprintf(&runs[nruns++], "target:%s", targets[i]), 0);
    }
    free(text);
    amp_accelerator *accs[16];
    size_t naccs = 0;
    ASSERT_OK(amp_accelerator_list(accs, 16, &naccs));
    for (size_t i = 0; i < naccs && i < 16; ++i) {
        amp_accelerator_info gi;
        ASSERT_OK(amp_accelerator_get_info(accs[i], &gi));
        if (gi.is_emulated) continue;
        snprintf(dev, sizeof dev, "%s", gi.device_path);
        cr_assert_geq(asprintf(&runs[nruns++], "%s", dev), 0);
        break;
    }
    if (!nruns) cr_skip_test("neither hipRTC nor NVRTC compiles here, and no GPU is present");
    for (int i = 0; i < nruns; ++i) {
        char *const argv[] = {bin, runs[i], g_src, NULL};
        char *const envp[] = {"HIPRTC_COMPILE_OPTIONS_APPEND=-DHIPAMP_INVOKERS_OPTION", "AMP_CACHE_DIR=off",
                              "PATH=/usr/bin:/bin", NULL};
        int code = run_as_nobody(argv, envp, err);
        char *errs = text_or_null(err);
        if (code == 2) cr_skip_test("the set-uid helper found no %s: %s", runs[i], errs ? errs : "");
        const char *where = !strncmp(runs[i], "target:", 7) ? "amp_compile_for_target" : runs[i];
        cr_assert_eq(code, 3, "%s in a set-uid program: exit %d: %s", runs[i], code, errs ? errs : "");
        cr_assert(errs && strstr(errs, "AMP_ERROR_UNSUPPORTED") && strstr(errs, where) &&
                      strstr(errs, "a set-uid, set-gid or file-capability program compiles no kernels"),
                  "%s: stderr: %s", runs[i], errs ? errs : "");
        free(errs);
        free(runs[i]);
    }
}
