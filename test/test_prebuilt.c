/* test_prebuilt.c — the built-in algorithms' prebuilt packs (lib/core/prebuilt.c, tools/hipamp_prebuild.c): a pack's program is loaded and not compiled; a target without a pack, a corrupt, foreign, mis-versioned, writable or linked pack falls back to compiling with the same results and says why; a read-only install works; AMP_PREBUILT=0; the build's own packs cover every call the algorithms make; the tool's errors. */
#include "support.h"

#include <criterion/redirect.h>

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <limits.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hipamp_version.h"

#include <openssl/evp.h>

extern char **environ;

#define N_FILL 4099

static const char *bin_dir(void)
{
    const char *d = getenv("HIPAMP_TEST_BIN_DIR");
    cr_assert(d && *d, "HIPAMP_TEST_BIN_DIR is not set (ctest sets it)");
    return d;
}

/* The directory of the packs this build made (HIPAMP_PREBUILT_TARGETS). */
static void build_pack_dir(char *dir, size_t size)
{
    snprintf(dir, size, "%s/hipamp/prebuilt-%s", bin_dir(), HIPAMP_VERSION_STRING);
}

/* Run argv[0] with argv, its output into log (a file); the exit status,
 * or -1 when it did not exit. */
static int run_tool(char *const argv[], const char *log)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    cr_assert_eq(rc, 0, "cannot run %s: %s", argv[0], strerror(rc));
    int ws = 0;
    while (waitpid(pid, &ws, 0) < 0 && errno == EINTR) {}
    return WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
}

/* A log's first 64 KiB, in a buffer the next call reuses. */
static const char *slurp(const char *path)
{
    static char buf[65536];
    buf[0] = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return buf;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

static void copy_file(const char *from, const char *to)
{
    FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
    cr_assert(a && b, "copy %s -> %s: %s", from, to, strerror(errno));
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, a)) > 0) cr_assert_eq(fwrite(buf, 1, n, b), n);
    fclose(a);
    cr_assert_eq(fclose(b), 0);
}

/* The pack of acc's target holding the 4-byte fill and the int32
 * reductions, made by hipamp-prebuild once for each build of the library
 * (a fixture kept in the build's test directory, named after the library
 * file's size and time: a rebuilt library changes the programs' keys); its
 * path into path. The tool takes what the build's own pack of the target
 * holds (--reuse: its entries come through the library's checks) rather
 * than compiling it again: 13 s of CI's two cores in the release pass and
 * 29 s under ASan; where the build made none, it compiles. */
static const char *fixture_pack(amp_accelerator *acc, char *path, size_t size)
{
    const char *target = NULL;
    ASSERT_OK(amp_accelerator_get_prebuilt_target(acc, &target));
    if (!target) cr_skip_test("this accelerator loads no prebuilt programs");
    char dir[1024], tool[1024], log[1100], lib[1024], build_pack[1100];
    struct stat lb;
    snprintf(lib, sizeof lib, "%s/libhipamp.so", bin_dir());
    cr_assert_eq(stat(lib, &lb), 0, "%s: %s", lib, strerror(errno));
    snprintf(dir, sizeof dir, "%s/test/prebuilt-fixture-%lld-%lld.%09ld", bin_dir(), (long long)lb.st_size,
             (long long)lb.st_mtim.tv_sec, (long)lb.st_mtim.tv_nsec);
    snprintf(path, size, "%s/%s.hpk", dir, target);
    struct stat sb;
    if (stat(path, &sb) == 0) return target;
    snprintf(tool, sizeof tool, "%s/hipamp-prebuild", bin_dir());
    snprintf(log, sizeof log, "%s.log", path);
    mkdir(dir, 0755);
    build_pack_dir(build_pack, sizeof build_pack);
    /* The tool names the CPU's pack itself ("cpu": this machine's). */
    char *argv[] = {tool, "--dir", dir, "--jobs", "2", "--only", "fill of 4-byte", "--only",
                    "the int32 reductions (map 1)", "--reuse", build_pack,
                    !strncmp(target, "cpu-", 4) ? "cpu" : (char *)target, NULL};
    int rc = run_tool(argv, log);
    cr_assert_eq(rc, 0, "hipamp-prebuild failed (%d):\n%s", rc, slurp(log));
    cr_assert_eq(stat(path, &sb), 0, "hipamp-prebuild made no %s:\n%s", path, slurp(log));
    /* The CPU's programs came from the build's pack where it has one: the
     * log beside (cpu-X.hpk.log) is no pack of that directory's, which
     * the tool took it for, compiling all three. */
    char build_cpu_pack[1200];
    snprintf(build_cpu_pack, sizeof build_cpu_pack, "%s/%s.hpk", build_pack, target);
    if (!strncmp(target, "cpu-", 4) && stat(build_cpu_pack, &sb) == 0)
        cr_assert(strstr(slurp(log), "(0 compiled, 3 kept from the last pack)"), "%s", slurp(log));
    return target;
}

/* A fresh directory under the build's test directory. */
static void fresh_dir(char *dir, size_t size, const char *what)
{
    snprintf(dir, size, "%s/test/prebuilt-XXXXXX", bin_dir());
    cr_assert(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
    test_remove_at_exit(dir);
    (void)what;
}

/* Point the library at an empty disk cache and at packs in dir (before its
 * first build). */
static void use_dirs(const char *pack_dir)
{
    char cache[1024];
    fresh_dir(cache, sizeof cache, "cache");
    setenv("AMP_CACHE_DIR", cache, 1);
    setenv("AMP_PREBUILT_DIR", pack_dir, 1);
}

/* Point the library at packs in dir, and, for the programs a refused or
 * unused pack leaves to the JIT path, at the suite's shared disk cache
 * (AMP_CACHE_DIR as ctest sets it, shared with the sanitizer pass): the
 * fill program is compiled once in a run, not once in each of the tests
 * below (3 s each on CI's 2 cores under ASan). The tests that count the
 * JIT path's compiles and stores use use_dirs. Without the suite's cache
 * in the environment, an empty one of the test's own. */
static void use_dirs_shared_cache(const char *pack_dir)
{
    const char *shared = getenv("AMP_CACHE_DIR");
    if (!shared || !shared[0] || !strcmp(shared, "off")) {
        use_dirs(pack_dir);
        return;
    }
    setenv("AMP_PREBUILT_DIR", pack_dir, 1);
}

/* amp_fill of 4-byte elements on acc, checked. */
static void fill_and_check(amp_accelerator *acc)
{
    int32_t *host = test_xmalloc(sizeof *host * N_FILL); /* each caller's own: threads_load_at_once */
    for (int i = 0; i < N_FILL; ++i) host[i] = POISON_I32;
    amp_array_view *v = test_view(host, sizeof host[0], amp_extent_1d(N_FILL), AMP_READ_WRITE);
    amp_accelerator_view *q;
    ASSERT_OK(amp_accelerator_default_view(acc, &q));
    int32_t value = -123457;
    ASSERT_OK(amp_fill(q, amp_arg_view(v), &value));
    ASSERT_OK(amp_array_view_synchronize(v));
    for (int i = 0; i < N_FILL; ++i) cr_assert_eq(host[i], value, "element %d: %d", i, host[i]);
    amp_array_view_destroy(v);
    free(host);
}

/* The int32 sum and max of a known sequence on acc, checked. */
static void reduce_and_check(amp_accelerator *acc)
{
    enum { N = 100003 };
    int32_t *host = test_xmalloc(sizeof *host * N);
    int64_t want = 0;
    int32_t want_max = INT32_MIN;
    for (int i = 0; i < N; ++i) {
        host[i] = (int32_t)((i * 7919) % 2001) - 1000;
        want += host[i];
        if (host[i] > want_max) want_max = host[i];
    }
    amp_array_view *v = test_view(host, sizeof host[0], amp_extent_1d(N), AMP_READ_ONLY);
    amp_accelerator_view *q;
    ASSERT_OK(amp_accelerator_default_view(acc, &q));
    int32_t sum = 0, max = 0;
    ASSERT_OK(amp_reduce(q, amp_arg_view(v), AMP_TYPE_INT32, AMP_OP_SUM, &sum));
    ASSERT_OK(amp_reduce(q, amp_arg_view(v), AMP_TYPE_INT32, AMP_OP_MAX, &max));
    cr_assert_eq(sum, (int32_t)want, "sum %d, want %lld", sum, (long long)want);
    cr_assert_eq(max, want_max);
    amp_array_view_destroy(v);
    free(host);
}

static amp_prebuilt_info info(void)
{
    amp_prebuilt_info pi;
    ASSERT_OK(amp_prebuilt_get_info(&pi));
    return pi;
}

/* A copy of the fixture pack in a fresh directory (its path in pack). */
static void copy_fixture(amp_accelerator *acc, char *dir, size_t dsize, char *pack, size_t psize)
{
    char fixture[1200];
    const char *target = fixture_pack(acc, fixture, sizeof fixture);
    fresh_dir(dir, dsize, "packs");
    snprintf(pack, psize, "%s/%s.hpk", dir, target);
    copy_file(fixture, pack);
}

/* Overwrite len bytes at off (from the end when off < 0). */
static void patch(const char *path, long off, const void *bytes, size_t len)
{
    FILE *f = fopen(path, "r+b");
    cr_assert(f);
    cr_assert_eq(fseek(f, off, off < 0 ? SEEK_END : SEEK_SET), 0);
    cr_assert_eq(fwrite(bytes, 1, len, f), len);
    cr_assert_eq(fclose(f), 0);
}

ACCEL_TEST(prebuilt, loaded_not_compiled)
{
    char dir[1024], pack[1200];
    copy_fixture(acc, dir, sizeof dir, pack, sizeof pack);
    use_dirs(dir);
    fill_and_check(acc);
    reduce_and_check(acc);
    amp_prebuilt_info pi = info();
    cr_assert(pi.enabled, "prebuilt off: %s", pi.reason);
    cr_assert_eq(pi.hits, 2, "hits %llu misses %llu: %s", (unsigned long long)pi.hits, (unsigned long long)pi.misses,
                 pi.reason);
    cr_assert_eq(pi.misses, 0);
    cr_assert_eq(pi.rejected, 0, "%s", pi.reason);
    cr_assert(strstr(pi.used, "(3 programs)"), "used: %s", pi.used);
    /* Nothing was compiled: a compile stores its code in the disk cache. */
    amp_cache_info ci;
    ASSERT_OK(amp_cache_get_info(&ci));
    cr_assert_eq(ci.disk_stores, 0, "%llu disk stores: something compiled", (unsigned long long)ci.disk_stores);
    cr_assert_eq(ci.disk_misses, 0);
}

ACCEL_TEST(prebuilt, target_without_pack_compiles_same_results)
{
    char dir[1024], pack[1200], other[1300];
    copy_fixture(acc, dir, sizeof dir, pack, sizeof pack);
    /* The pack under another target's name: this accelerator has none. */
    snprintf(other, sizeof other, "%s/gfx1234.hpk", dir);
    cr_assert_eq(rename(pack, other), 0);
    use_dirs(dir);
    setenv("AMP_CPU_PCH", "0", 1); /* its precompiled header would be a third store */
    fill_and_check(acc);
    reduce_and_check(acc);
    amp_prebuilt_info pi = info();
    cr_assert(pi.enabled);
    cr_assert_eq(pi.hits, 0);
    cr_assert_eq(pi.misses, 2);
    cr_assert_eq(pi.rejected, 0, "%s", pi.reason);
    cr_assert(strstr(pi.available, "gfx1234"), "available: %s", pi.available);
    amp_cache_info ci;
    ASSERT_OK(amp_cache_get_info(&ci));
    if (ci.disk_enabled) cr_assert_eq(ci.disk_stores, 2, "the two programs were compiled and stored");
}

/* A refused pack or entry: the calls succeed by compiling, and the reason
 * names the file and what is wrong with it. */
static void expect_refused(amp_accelerator *acc, const char *dir, const char *want)
{
    use_dirs_shared_cache(dir);
    fill_and_check(acc);
    amp_prebuilt_info pi = info();
    cr_assert_eq(pi.hits, 0, "a refused pack was used");
    cr_assert_eq(pi.misses, 1);
    cr_assert_geq(pi.rejected, 1);
    cr_assert(strstr(pi.reason, want), "reason '%s' lacks '%s'", pi.reason, want);
    cr_assert(strstr(pi.reason, dir), "reason '%s' does not name %s", pi.reason, dir);
}

/* A pack's index as the format lays it out (a 144-byte header holding the
 * entry count at 12, then 80 bytes an entry: its offset at 32 and size at
 * 40): up to cap entries' offsets and sizes; returns the count. */
static uint32_t pack_index(const char *pack, uint64_t *off, uint64_t *size, uint32_t cap)
{
    FILE *f = fopen(pack, "rb");
    cr_assert(f, "%s: %s", pack, strerror(errno));
    unsigned char h[144];
    cr_assert_eq(fread(h, 1, sizeof h, f), sizeof h);
    uint32_t count;
    memcpy(&count, h + 12, 4);
    for (uint32_t i = 0; i < count && i < cap; ++i) {
        unsigned char e[80];
        cr_assert_eq(fread(e, 1, sizeof e, f), sizeof e);
        memcpy(&off[i], e + 32, 8);
        memcpy(&size[i], e + 40, 8);
    }
    fclose(f);
    return count;
}

ACCEL_TEST(prebuilt, corrupt_entry_refused)
{
    char dir[1024], pack[1200];
    copy_fixture(acc, dir, sizeof dir, pack, sizeof pack);
    /* A byte in the middle of every entry's code. */
    uint64_t off[3], size[3], where[3];
    uint32_t count = pack_index(pack, off, size, 3);
    cr_assert_eq(count, 3);
    for (uint32_t i = 0; i < count; ++i) where[i] = off[i] + size[i] / 2;
    for (uint32_t i = 0; i < count; ++i) {
        unsigned char x = 0xa5;
        patch(pack, (long)where[i], &x, 1);
    }
    use_dirs_shared_cache(dir);
    /* One program is enough to see the refusal (the reduction's compile
     * would cost 15 s of CI's 2 cores in each pass; target_without_pack
     * compiles it). */
    fill_and_check(acc);
    amp_prebuilt_info pi = info();
    cr_assert_eq(pi.hits, 0);
    cr_assert_eq(pi.misses, 1);
    cr_assert_eq(pi.rejected, 1, "%s", pi.reason);
    cr_assert(strstr(pi.reason, "corrupt (its bytes do not match their digest)"), "%s", pi.reason);
    cr_assert(strstr(pi.reason, dir), "%s", pi.reason);
}

/* The CPU accelerator's precompiled header in the build's whole pack
 * (hipamp-prebuild puts it there; a pack made with --only, as the fixture,
 * holds none). Each test below builds one user kernel, which no pack holds,
 * on an empty disk cache and checks what it computes; the disk cache's
 * stores tell whether the header was made (a second store) or loaded. */
static void cpu_build_pack(amp_accelerator *acc, char *dir, size_t dsize, char *pack, size_t psize)
{
    const char *target = NULL;
    ASSERT_OK(amp_accelerator_get_prebuilt_target(acc, &target));
    if (!target) cr_skip_test("the CPU accelerator loads no prebuilt programs here");
    build_pack_dir(dir, dsize);
    snprintf(pack, psize, "%s/%s.hpk", dir, target);
    struct stat sb;
    if (stat(pack, &sb) != 0) cr_skip_test("the build made no pack for %s (HIPAMP_PREBUILT_TARGETS)", target);
}

static void user_kernel_and_check(amp_accelerator *acc)
{
    enum { N = 1000 };
    int32_t host[N];
    for (int i = 0; i < N; ++i) host[i] = POISON_I32;
    amp_program *p = NULL;
    amp_kernel *k = NULL;
    ASSERT_OK(amp_program_build(acc, "AMP_KERNEL(k, amp::index<1> i, amp::array_view<int, 1> a) { a[i] = 3 * i[0] + 1; }",
                                NULL, &p));
    ASSERT_OK(amp_program_get_kernel(p, "k", &k));
    amp_array_view *v = test_view(host, sizeof host[0], amp_extent_1d(N), AMP_WRITE_ONLY);
    amp_accelerator_view *q;
    ASSERT_OK(amp_accelerator_default_view(acc, &q));
    amp_arg a = amp_arg_view(v);
    ASSERT_OK(amp_parallel_for_each(q, amp_extent_1d(N), k, &a, 1));
    ASSERT_OK(amp_array_view_synchronize(v));
    for (int i = 0; i < N; ++i) cr_assert_eq(host[i], 3 * i + 1, "element %d: %d", i, host[i]);
    amp_array_view_destroy(v);
    amp_program_destroy(p);
}

/* The index of the pack's entry whose bytes begin with magic (8 bytes:
 * "AMPPCH1" the compiler's precompiled header, "AMPLPCH" the library's
 * part as the loop transformation's libclang precompiles it), or -1;
 * *off, *size its place. */
static long magic_entry(const char *pack, const char *magic, uint64_t *off_out, uint64_t *size_out)
{
    static uint64_t off[1024], size[1024];
    uint32_t count = pack_index(pack, off, size, 1024);
    cr_assert_leq(count, 1024);
    FILE *f = fopen(pack, "rb");
    cr_assert(f);
    long found = -1;
    for (uint32_t i = 0; i < count && found < 0; ++i) {
        char m[8] = {0};
        cr_assert_eq(fseek(f, (long)off[i], SEEK_SET), 0);
        if (fread(m, 1, sizeof m, f) == sizeof m && !memcmp(m, magic, 8)) {
            found = (long)i;
            *off_out = off[i];
            *size_out = size[i];
        }
    }
    fclose(f);
    return found;
}

static long header_entry(const char *pack, uint64_t *off_out, uint64_t *size_out)
{
    return magic_entry(pack, "AMPPCH1", off_out, size_out);
}

/* TMPDIR set to a fresh directory: where this process's header directory
 * (hipamp-pch-<pid>-...) goes. */
static void fresh_tmpdir(char *dir, size_t size)
{
    fresh_dir(dir, size, "tmp");
    setenv("TMPDIR", dir, 1);
}

/* Whether this process has a header directory in tmp, and in it the
 * compiled header the compiler is handed. */
static bool header_dir_made(const char *tmp, bool *with_header)
{
    char prefix[64];
    snprintf(prefix, sizeof prefix, "hipamp-pch-%ld-", (long)getpid());
    DIR *d = opendir(tmp);
    cr_assert(d, "%s: %s", tmp, strerror(errno));
    bool made = false;
    *with_header = false;
    for (struct dirent *e; (e = readdir(d));) {
        if (strncmp(e->d_name, prefix, strlen(prefix))) continue;
        made = true;
        char gch[2048];
        snprintf(gch, sizeof gch, "%s/%s/amp_lib.hpp.gch", tmp, e->d_name);
        struct stat sb;
        *with_header = *with_header || (stat(gch, &sb) == 0 && sb.st_size > (1 << 20));
    }
    closedir(d);
    return made;
}

static uint64_t disk_stores(void)
{
    amp_cache_info ci;
    ASSERT_OK(amp_cache_get_info(&ci));
    if (!ci.disk_enabled) cr_skip_test("no disk cache here: %s", ci.reason);
    return ci.disk_stores;
}

Test(prebuilt, cpu_pack_holds_the_precompiled_header)
{
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    char dir[1024], pack[1200], tmp[1024];
    cpu_build_pack(acc, dir, sizeof dir, pack, sizeof pack);
    uint64_t off, size;
    cr_assert_geq(header_entry(pack, &off, &size), 0, "the build's pack %s holds no precompiled header", pack);
    unsetenv("AMP_CPU_PCH");
    use_dirs(dir);
    fresh_tmpdir(tmp, sizeof tmp);
    user_kernel_and_check(acc);
    bool with_header = false;
    cr_assert(header_dir_made(tmp, &with_header) && with_header, "the build had no header in %s", tmp);
    cr_assert_eq(disk_stores(), 1, "the header was made and stored beside the program, not loaded from %s", pack);
    amp_prebuilt_info pi = info();
    cr_assert_eq(pi.rejected, 0, "%s", pi.reason);
    cr_assert_eq(pi.hits + pi.misses, 0, "a user program counted as a prebuilt lookup");
}

/* The library's part as the loop transformation's libclang precompiles
 * it, in the build's whole pack too: a tiled kernel's first build on an
 * empty disk cache reads it (AMP_CPU_VERBOSE says so) and stores its module
 * alone. Skipped where there is no loop transformation (no libclang). */
Test(prebuilt, cpu_pack_holds_the_loop_transformations_part)
{
    setenv("AMP_CPU_TILED", "loops", 1); /* read when the accelerator starts */
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    char dir[1024], pack[1200], tmp[1024];
    cpu_build_pack(acc, dir, sizeof dir, pack, sizeof pack);
    unsetenv("AMP_CPU_PCH");
    use_dirs(dir);
    fresh_tmpdir(tmp, sizeof tmp);
    setenv("AMP_CPU_VERBOSE", "1", 1);
    cr_redirect_stderr();
    amp_program *p = NULL;
    amp_kernel *k = NULL;
    ASSERT_OK(amp_program_build(acc,
                                "AMP_TILED_KERNEL(lpch_pack, amp::tiled_index<64> t, amp::array_view<int, 1> a)\n"
                                "{\n    tile_static int s[64];\n    s[t.local[0]] = a[t.global];\n"
                                "    t.barrier.wait();\n    a[t.global] = 2 * s[63 - t.local[0]];\n}\n",
                                NULL, &p));
    amp_status st = amp_program_get_kernel(p, "lpch_pack", &k);
    char why[512];
    snprintf(why, sizeof why, "%s", st == AMP_OK ? "" : amp_last_error());
    if (st != AMP_OK && (strstr(why, "no libclang found") || strstr(why, "AMP_LIBCLANG") ||
                         strstr(why, "could not be loaded") || strstr(why, "libclang lacks")))
        cr_skip_test("the loop transformation cannot run here: %s", why);
    ASSERT_OK(st);
    enum { N = 256 };
    int32_t host[N];
    for (int i = 0; i < N; ++i) host[i] = i;
    amp_array_view *v = test_view(host, sizeof host[0], amp_extent_1d(N), AMP_READ_WRITE);
    amp_arg a = amp_arg_view(v);
    amp_tiled_extent te;
    ASSERT_OK(amp_extent_tile(amp_extent_1d(N), (const int[]){64}, &te));
    ASSERT_OK(amp_parallel_for_each_tiled(NULL, te, k, &a, 1));
    ASSERT_OK(amp_array_view_synchronize(v));
    for (int i = 0; i < N; ++i) cr_assert_eq(host[i], 2 * (i / 64 * 64 + 63 - i % 64), "element %d: %d", i, host[i]);
    amp_array_view_destroy(v);
    amp_program_destroy(p);
    uint64_t off, size;
    cr_assert_geq(magic_entry(pack, "AMPLPCH", &off, &size), 0, "the build's pack %s holds no precompiled part", pack);
    fclose(stderr);
    FILE *f = cr_get_redirected_stderr();
    cr_assert_not_null(f);
    char line[1024], said[4096] = "";
    int reads = 0;
    while (fgets(line, sizeof line, f)) {
        reads += strstr(line, "the loop transformation read the library's part") != NULL;
        if (!strncmp(line, "hipamp: ", 8) && strlen(said) + strlen(line) < sizeof said) strcat(said, line);
    }
    cr_assert_eq(reads, 1, "the build's parse did not read the pack's part; AMP_CPU_VERBOSE said:\n%s", said);
    cr_assert_eq(disk_stores(), 1, "a precompiled part was made and stored beside the program, not loaded from %s",
                 pack);
    unsetenv("AMP_CPU_VERBOSE");
    unsetenv("AMP_CPU_TILED");
}

/* Without a disk cache the pack's header is used all the same; without
 * either, nothing is written (no header directory). */
Test(prebuilt, cpu_pack_header_without_a_disk_cache)
{
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    char dir[1024], pack[1200], tmp[1024];
    cpu_build_pack(acc, dir, sizeof dir, pack, sizeof pack);
    unsetenv("AMP_CPU_PCH");
    setenv("AMP_CACHE_DIR", "off", 1);
    setenv("AMP_PREBUILT_DIR", dir, 1);
    fresh_tmpdir(tmp, sizeof tmp);
    user_kernel_and_check(acc);
    bool with_header = false;
    cr_assert(header_dir_made(tmp, &with_header) && with_header, "the build had no header in %s", tmp);
}

Test(prebuilt, cpu_no_header_without_cache_or_pack)
{
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    char tmp[1024];
    unsetenv("AMP_CPU_PCH");
    setenv("AMP_CACHE_DIR", "off", 1);
    setenv("AMP_PREBUILT", "0", 1);
    fresh_tmpdir(tmp, sizeof tmp);
    user_kernel_and_check(acc);
    bool with_header = false;
    cr_assert_not(header_dir_made(tmp, &with_header), "a header directory was made with nothing to fill it from");
}

/* Without packs the first build makes the header and stores it. */
Test(prebuilt, cpu_precompiled_header_made_without_packs)
{
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    char dir[1024];
    fresh_dir(dir, sizeof dir, "packs");
    unsetenv("AMP_CPU_PCH");
    use_dirs(dir);
    setenv("AMP_PREBUILT", "0", 1);
    user_kernel_and_check(acc);
    cr_assert_eq(disk_stores(), 2, "the program and the header it made");
}

/* A corrupt header in a pack is refused (counted, its reason naming the
 * pack); the build makes its own and computes the same. */
Test(prebuilt, cpu_corrupt_precompiled_header_refused, .timeout = 120)
{
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    char bdir[1024], bpack[1200], dir[1024], pack[1200];
    cpu_build_pack(acc, bdir, sizeof bdir, bpack, sizeof bpack);
    fresh_dir(dir, sizeof dir, "packs");
    snprintf(pack, sizeof pack, "%s/%s", dir, strrchr(bpack, '/') + 1);
    copy_file(bpack, pack);
    uint64_t off = 0, size = 0;
    cr_assert_geq(header_entry(pack, &off, &size), 0, "the build's pack %s holds no precompiled header", bpack);
    unsigned char x = 0x5a;
    patch(pack, (long)(off + size / 2), &x, 1);
    unsetenv("AMP_CPU_PCH");
    use_dirs(dir);
    user_kernel_and_check(acc);
    amp_prebuilt_info pi = info();
    cr_assert_eq(pi.rejected, 1, "%s", pi.reason);
    cr_assert(strstr(pi.reason, "corrupt (its bytes do not match their digest)") && strstr(pi.reason, dir), "%s",
              pi.reason);
    cr_assert_eq(disk_stores(), 2, "the program and the header made in place of the refused one");
}

ACCEL_TEST(prebuilt, other_version_refused)
{
    char dir[1024], pack[1200];
    copy_fixture(acc, dir, sizeof dir, pack, sizeof pack);
    char version[32] = "99.0.7";
    patch(pack, 16, version, sizeof version);
    char want[128];
    snprintf(want, sizeof want, "built for hipamp 99.0.7, this library is %s", HIPAMP_VERSION_STRING);
    expect_refused(acc, dir, want);
}

ACCEL_TEST(prebuilt, other_target_refused)
{
    char dir[1024], pack[1200];
    copy_fixture(acc, dir, sizeof dir, pack, sizeof pack);
    char target[64] = "gfx1234";
    patch(pack, 48, target, sizeof target);
    expect_refused(acc, dir, "built for target gfx1234");
}

ACCEL_TEST(prebuilt, corrupt_index_refused)
{
    char dir[1024], pack[1200];
    copy_fixture(acc, dir, sizeof dir, pack, sizeof pack);
    uint8_t b = 0xff;
    patch(pack, 144 + 40, &b, 1); /* the first entry's size */
    expect_refused(acc, dir, "does not match its digest");
}

ACCEL_TEST(prebuilt, truncated_pack_refused)
{
    char dir[1024], pack[1200];
    copy_fixture(acc, dir, sizeof dir, pack, sizeof pack);
    cr_assert_eq(truncate(pack, 100), 0);
    expect_refused(acc, dir, "shorter than a pack's header");
}

/* A refused pack or entry names the value that is wrong, not only the
 * file: "too many entries", "an entry lies outside the file" and "refused
 * by the driver" said neither how many, nor which, nor where. */
ACCEL_TEST(prebuilt, too_many_entries_named)
{
    char dir[1024], pack[1200];
    copy_fixture(acc, dir, sizeof dir, pack, sizeof pack);
    uint32_t count = 0xffffffffu;
    patch(pack, 12, &count, sizeof count);
    expect_refused(acc, dir, "4294967295 entries");
}

/* The pack at path rewritten by edit (its bytes, its index: a 144-byte
 * header, then 80 bytes an entry: key, offset at 32, size at 40, SHA-256
 * of the bytes at 48), the index's digest (header offset 112: SHA-256 of
 * the index's length, 8 bytes, then the index) made to match: a pack
 * whose index checks out, as a writer with a fault would make it. */
static void rewrite_pack(const char *path, void (*edit)(unsigned char **bytes, size_t *n))
{
    FILE *f = fopen(path, "rb");
    cr_assert(f, "%s: %s", path, strerror(errno));
    cr_assert_eq(fseek(f, 0, SEEK_END), 0);
    size_t n = (size_t)ftell(f);
    rewind(f);
    unsigned char *b = test_xmalloc(n);
    cr_assert_eq(fread(b, 1, n, f), n);
    fclose(f);
    edit(&b, &n);
    uint32_t count;
    memcpy(&count, b + 12, 4);
    uint64_t isize = (uint64_t)count * 80;
    unsigned char *framed = test_xmalloc(8 + isize);
    memcpy(framed, &isize, 8);
    memcpy(framed + 8, b + 144, isize);
    unsigned int dn = 0;
    cr_assert(EVP_Digest(framed, 8 + isize, b + 112, &dn, EVP_sha256(), NULL) && dn == 32);
    free(framed);
    f = fopen(path, "wb");
    cr_assert(f);
    cr_assert_eq(fwrite(b, 1, n, f), n);
    cr_assert_eq(fclose(f), 0);
    free(b);
}

static void entry_past_the_end(unsigned char **b, size_t *n)
{
    uint64_t off = (uint64_t)*n + 100;
    memcpy(*b + 144 + 32, &off, 8);
}

ACCEL_TEST(prebuilt, entry_outside_the_file_named)
{
    char dir[1024], pack[1200];
    copy_fixture(acc, dir, sizeof dir, pack, sizeof pack);
    struct stat sb;
    cr_assert_eq(stat(pack, &sb), 0);
    rewrite_pack(pack, entry_past_the_end);
    char want[128];
    snprintf(want, sizeof want, "entry 0 (offset %lld", (long long)sb.st_size + 100);
    expect_refused(acc, dir, want);
}

/* Every entry's bytes made "not a module", with their digests: each
 * checks out, and the back end refuses it. */
static void entries_not_modules(unsigned char **b, size_t *n)
{
    static const char junk[] = "not a module";
    uint32_t count;
    memcpy(&count, *b + 12, 4);
    *b = realloc(*b, *n + sizeof junk);
    cr_assert_not_null(*b);
    memcpy(*b + *n, junk, sizeof junk);
    unsigned char framed[8 + sizeof junk], digest[32];
    uint64_t len = sizeof junk, off = *n;
    memcpy(framed, &len, 8);
    memcpy(framed + 8, junk, sizeof junk);
    unsigned int dn = 0;
    cr_assert(EVP_Digest(framed, sizeof framed, digest, &dn, EVP_sha256(), NULL) && dn == 32);
    for (uint32_t i = 0; i < count; ++i) {
        unsigned char *e = *b + 144 + 80 * (size_t)i;
        memcpy(e + 32, &off, 8);
        memcpy(e + 40, &len, 8);
        memcpy(e + 48, digest, 32);
    }
    *n += sizeof junk;
}

ACCEL_TEST(prebuilt, entry_the_back_end_refuses_named)
{
    char dir[1024], pack[1200];
    copy_fixture(acc, dir, sizeof dir, pack, sizeof pack);
    rewrite_pack(pack, entries_not_modules);
    expect_refused(acc, dir, "refused by the back end");
}

ACCEL_TEST(prebuilt, writable_by_others_refused)
{
    char dir[1024], pack[1200];
    copy_fixture(acc, dir, sizeof dir, pack, sizeof pack);
    cr_assert_eq(chmod(pack, 0646), 0);
    expect_refused(acc, dir, "writable by others");
}

ACCEL_TEST(prebuilt, symbolic_link_refused)
{
    char dir[1024], pack[1200], real[1300];
    copy_fixture(acc, dir, sizeof dir, pack, sizeof pack);
    snprintf(real, sizeof real, "%s/real-pack", dir);
    cr_assert_eq(rename(pack, real), 0);
    cr_assert_eq(symlink(real, pack), 0);
    expect_refused(acc, dir, "refused: a symbolic link");
}

/* In a sticky directory others may write, a pack with a second name is
 * refused (anyone there could have linked one of our or root's files in);
 * in a directory only its owner writes, it is an installer's (a store that
 * shares identical files) and is used. */
/* copy_fixture, its pack given a second name in its directory. */
static void fixture_with_a_hard_link(amp_accelerator *acc, char *dir, size_t dcap, char *pack, size_t pcap)
{
    char second[1300];
    copy_fixture(acc, dir, dcap, pack, pcap);
    snprintf(second, sizeof second, "%s/second-name", dir);
    cr_assert_eq(link(pack, second), 0, "link %s: %s", second, strerror(errno));
}

ACCEL_TEST(prebuilt, hard_link_refused_where_others_may_write)
{
    char dir[1024], pack[1200];
    fixture_with_a_hard_link(acc, dir, sizeof dir, pack, sizeof pack);
    cr_assert_eq(chmod(dir, 01777), 0);
    expect_refused(acc, dir, "a hard link");
}

ACCEL_TEST(prebuilt, hard_link_used_in_a_directory_of_its_owner)
{
    char dir[1024], pack[1200];
    fixture_with_a_hard_link(acc, dir, sizeof dir, pack, sizeof pack);
    use_dirs(dir);
    fill_and_check(acc);
    amp_prebuilt_info pi = info();
    cr_assert(pi.enabled, "%s", pi.reason);
    cr_assert_gt(pi.hits, 0, "a pack with a second name in its owner's directory was not used: %s", pi.reason);
}

/* A socket at a pack's name (nothing of hipamp's makes one) is named as
 * one: open's ENXIO read "No such device or address". */
ACCEL_TEST(prebuilt, socket_refused_as_a_socket)
{
    char dir[1024], pack[1200];
    copy_fixture(acc, dir, sizeof dir, pack, sizeof pack);
    cr_assert_eq(unlink(pack), 0);
    cr_assert_eq(mknod(pack, S_IFSOCK | 0600, 0), 0, "mknod %s: %s", pack, strerror(errno));
    expect_refused(acc, dir, "refused: a socket");
}

ACCEL_TEST(prebuilt, writable_directory_not_used)
{
    char dir[1024], pack[1200];
    copy_fixture(acc, dir, sizeof dir, pack, sizeof pack);
    cr_assert_eq(chmod(dir, 0777), 0);
    use_dirs_shared_cache(dir);
    fill_and_check(acc);
    amp_prebuilt_info pi = info();
    cr_assert(!pi.enabled);
    cr_assert_eq(pi.hits, 0);
    cr_assert(strstr(pi.reason, "writable by others") && strstr(pi.reason, dir), "%s", pi.reason);
}

ACCEL_TEST(prebuilt, read_only_install_directory)
{
    char dir[1024], pack[1200];
    copy_fixture(acc, dir, sizeof dir, pack, sizeof pack);
    cr_assert_eq(chmod(pack, 0444), 0);
    cr_assert_eq(chmod(dir, 0555), 0);
    use_dirs(dir);
    fill_and_check(acc);
    amp_prebuilt_info pi = info();
    cr_assert_eq(pi.hits, 1, "%s", pi.reason);
    cr_assert_eq(pi.rejected, 0, "%s", pi.reason);
    chmod(dir, 0755);
}

/* An AMP_PREBUILT_DIR longer than a path can be is refused, naming its
 * length: cut short it named the packs' directory here ("DIR/./././...")
 * and they were used. */
ACCEL_TEST(prebuilt, too_long_a_directory_refused)
{
    char dir[1024], pack[1200];
    copy_fixture(acc, dir, sizeof dir, pack, sizeof pack);
    use_dirs_shared_cache(dir);
    size_t len = strlen(dir), n = PATH_MAX + 64;
    char *longer = test_xmalloc(n + 1);
    memcpy(longer, dir, len);
    for (size_t i = len; i < n; i += 2) memcpy(longer + i, "/.", 2);
    longer[n] = 0;
    setenv("AMP_PREBUILT_DIR", longer, 1);
    free(longer);
    fill_and_check(acc);
    amp_prebuilt_info pi = info();
    cr_assert(!pi.enabled, "%s", pi.reason);
    cr_assert_eq(pi.hits, 0);
    char says[96];
    snprintf(says, sizeof says, "AMP_PREBUILT_DIR is %zu bytes long", n);
    cr_assert(strstr(pi.reason, says), "%s", pi.reason);
}

ACCEL_TEST(prebuilt, switched_off)
{
    char dir[1024], pack[1200];
    copy_fixture(acc, dir, sizeof dir, pack, sizeof pack);
    use_dirs_shared_cache(dir);
    setenv("AMP_PREBUILT", "0", 1);
    fill_and_check(acc);
    amp_prebuilt_info pi = info();
    cr_assert(!pi.enabled);
    cr_assert_eq(pi.hits, 0);
    cr_assert(strstr(pi.reason, "AMP_PREBUILT=0"), "%s", pi.reason);
}

Test(prebuilt, bad_switch_value_named)
{
    setenv("AMP_PREBUILT", "sometimes", 1);
    amp_prebuilt_info pi = info();
    cr_assert(!pi.enabled);
    cr_assert(strstr(pi.reason, "AMP_PREBUILT=sometimes is not understood"), "%s", pi.reason);
    ASSERT_STATUS(amp_prebuilt_get_info(NULL), AMP_ERROR_INVALID_ARGUMENT);
}

Test(prebuilt, target_names)
{
    amp_accelerator *cpu = test_accel(TEST_ACCEL_CPU);
    const char *t = NULL;
    ASSERT_OK(amp_accelerator_get_prebuilt_target(cpu, &t));
    cr_assert(t && !strncmp(t, "cpu-", 4) && strlen(t) == 20, "CPU target '%s'", t ? t : "(null)");
    /* CPATH could put other headers in front of the prelude's: none. */
    setenv("CPATH", "/nonexistent", 1);
    ASSERT_OK(amp_accelerator_get_prebuilt_target(cpu, &t));
    cr_assert_null(t);
    unsetenv("CPATH");
    ASSERT_STATUS(amp_accelerator_get_prebuilt_target(NULL, &t), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_last_error(), "amp_accelerator_get_prebuilt_target"), "%s", amp_last_error());
    ASSERT_STATUS(amp_accelerator_get_prebuilt_target(cpu, NULL), AMP_ERROR_INVALID_ARGUMENT);
}

/* --------------------------------------- the build's own packs: coverage */

/* Every call the algorithms make on acc with the build's pack in place
 * loads its program: the list of programs the packs hold is what the
 * algorithms ask for. */
ACCEL_TEST(prebuilt, build_pack_covers_every_call, .timeout = 600)
{
    const char *target = NULL;
    ASSERT_OK(amp_accelerator_get_prebuilt_target(acc, &target));
    if (!target) cr_skip_test("this accelerator loads no prebuilt programs");
    char dir[1024], pack[1200];
    snprintf(dir, sizeof dir, "%s/hipamp/prebuilt-%s", bin_dir(), HIPAMP_VERSION_STRING);
    snprintf(pack, sizeof pack, "%s/%s.hpk", dir, target);
    struct stat sb;
    if (stat(pack, &sb) != 0)
        cr_skip_test("the build made no pack for %s (HIPAMP_PREBUILT_TARGETS)", target);
    use_dirs(dir);
    unsetenv("AMP_PREBUILT_DIR"); /* the library finds its own */
    enum { N = 5000 };
    static const amp_type types[] = {AMP_TYPE_INT32,   AMP_TYPE_UINT32,  AMP_TYPE_INT64,
                                     AMP_TYPE_UINT64,  AMP_TYPE_FLOAT32, AMP_TYPE_FLOAT64};
    static const amp_op ops[] = {AMP_OP_SUM, AMP_OP_PRODUCT, AMP_OP_MIN, AMP_OP_MAX, AMP_OP_AND, AMP_OP_OR, AMP_OP_XOR};
    static uint64_t a[N], b[N], o[N], vals[2 * N];
    amp_accelerator_view *q;
    ASSERT_OK(amp_accelerator_default_view(acc, &q));
    size_t calls = 0;
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ++ti) {
        amp_type t = types[ti];
        size_t es = amp_type_size(t);
        bool flt = t == AMP_TYPE_FLOAT32 || t == AMP_TYPE_FLOAT64;
        memset(a, 0, sizeof a);
        memset(b, 0, sizeof b);
        amp_array_view *va = test_view(a, es, amp_extent_1d(N), AMP_READ_WRITE);
        amp_array_view *vb = test_view(b, es, amp_extent_1d(N), AMP_READ_WRITE);
        const uint64_t zero = 0; /* 0 in every type */
        ASSERT_OK(amp_iota(q, amp_arg_view(va), t, &zero, NULL));
        ASSERT_OK(amp_iota(q, amp_arg_view(vb), t, &zero, NULL));
        uint64_t r[2];
        for (size_t k = 0; k < sizeof ops / sizeof ops[0]; ++k) {
            if (flt && ops[k] > AMP_OP_MAX) continue;
            ASSERT_OK(amp_reduce(q, amp_arg_view(va), t, ops[k], r));
            amp_alg_options wide = {.accumulate = t == AMP_TYPE_INT32    ? AMP_TYPE_INT64
                                                  : t == AMP_TYPE_UINT32 ? AMP_TYPE_UINT64
                                                  : t == AMP_TYPE_FLOAT32 ? AMP_TYPE_FLOAT64
                                                                          : t};
            ASSERT_OK(amp_reduce_with(q, amp_arg_view(va), t, ops[k], &wide, r));
            amp_array_view *vo = test_view(o, amp_type_size(wide.accumulate), amp_extent_1d(N), AMP_READ_WRITE);
            amp_array_view *vn = test_view(o, es, amp_extent_1d(N), AMP_READ_WRITE);
            ASSERT_OK(amp_scan(q, amp_arg_view(va), amp_arg_view(vn), t, ops[k], AMP_SCAN_INCLUSIVE));
            ASSERT_OK(amp_scan_with(q, amp_arg_view(va), amp_arg_view(vo), t, ops[k], AMP_SCAN_EXCLUSIVE, &wide));
            amp_array_view_destroy(vo);
            amp_array_view_destroy(vn);
            for (int m = AMP_MAP_IDENTITY; m <= AMP_MAP_SQUARED_DIFFERENCE; ++m) {
                ASSERT_OK(amp_transform_reduce(q, amp_arg_view(va), amp_arg_view(vb), t, (amp_map)m, ops[k], r));
                ASSERT_OK(amp_transform_reduce_with(q, amp_arg_view(va), amp_arg_view(vb), t, (amp_map)m, ops[k], &wide, r));
            }
            calls += 4 + 10;
        }
        ASSERT_OK(amp_sort(q, amp_arg_view(va), t, AMP_DESCENDING));
        static const size_t vsizes[] = {1, 2, 4, 8, 16};
        for (size_t v = 0; v < sizeof vsizes / sizeof vsizes[0]; ++v) {
            amp_array_view *vv = test_view(vals, vsizes[v], amp_extent_1d(N), AMP_READ_WRITE);
            ASSERT_OK(amp_sort_by_key(q, amp_arg_view(va), amp_arg_view(vv), t, AMP_ASCENDING));
            amp_array_view_destroy(vv);
        }
        calls += 6;
        amp_array_view_destroy(va);
        amp_array_view_destroy(vb);
    }
    static const size_t fills[] = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64};
    for (size_t f = 0; f < sizeof fills / sizeof fills[0]; ++f) {
        unsigned char value[64];
        memset(value, (int)f + 1, sizeof value);
        amp_array_view *vf = test_view(vals, fills[f], amp_extent_1d((int)(sizeof vals / fills[f])), AMP_WRITE_ONLY);
        ASSERT_OK(amp_fill(q, amp_arg_view(vf), value));
        ASSERT_OK(amp_array_view_synchronize(vf));
        cr_assert_eq(((unsigned char *)vals)[fills[f] * 3 + 1], (unsigned char)(f + 1));
        amp_array_view_destroy(vf);
    }
    amp_prebuilt_info pi = info();
    cr_assert_eq(pi.misses, 0, "%llu built-in programs were compiled, not loaded (%s)", (unsigned long long)pi.misses,
                 pi.reason);
    cr_assert_gt(pi.hits, 50, "only %llu programs loaded over %zu calls", (unsigned long long)pi.hits, calls);
    /* And amp_algorithms_prepare finds the rest there too. */
    ASSERT_OK(amp_algorithms_prepare(acc));
    pi = info();
    cr_assert_eq(pi.misses, 0, "amp_algorithms_prepare compiled %llu", (unsigned long long)pi.misses);
}

/* ------------------------------------------------------------ the tool */

static int prebuild(const char *log, char *const extra[])
{
    char tool[1024];
    snprintf(tool, sizeof tool, "%s/hipamp-prebuild", bin_dir());
    char *argv[16] = {tool};
    int n = 1;
    for (int i = 0; extra[i] && n < 15; ++i) argv[n++] = extra[i];
    argv[n] = NULL;
    return run_tool(argv, log);
}

Test(prebuilt, tool_usage_errors)
{
    char dir[1024], log[1100];
    fresh_dir(dir, sizeof dir, "tool");
    snprintf(log, sizeof log, "%s/log", dir);
    cr_assert_eq(prebuild(log, (char *[]){"cpu", NULL}), 2);
    cr_assert(strstr(slurp(log), "--dir is required"), "%s", slurp(log));
    cr_assert_eq(prebuild(log, (char *[]){"--dir", dir, NULL}), 2);
    cr_assert(strstr(slurp(log), "no target"), "%s", slurp(log));
    cr_assert_eq(prebuild(log, (char *[]){"--dir", dir, "--jobs", "0", "cpu", NULL}), 2);
    cr_assert(strstr(slurp(log), "--jobs '0'"), "%s", slurp(log));
    cr_assert_eq(prebuild(log, (char *[]){"--dir", dir, "--frobnicate", "cpu", NULL}), 2);
    cr_assert(strstr(slurp(log), "unknown option '--frobnicate'"), "%s", slurp(log));
    /* A word that is no target's name is a mistake, not a target to skip
     * (exit 0 with "skipping" on stdout); a second --dir, --reuse or --jobs
     * is refused (the last won). */
    static const char *const not_targets[] = {"sm90", "", "../../etc/passwd", "gfx90a:xnack"};
    for (size_t i = 0; i < sizeof not_targets / sizeof not_targets[0]; ++i) {
        cr_assert_eq(prebuild(log, (char *[]){"--dir", dir, (char *)not_targets[i], NULL}), 2, "%s", not_targets[i]);
        cr_assert(strstr(slurp(log), "is not a target name"), "%s", slurp(log));
    }
    cr_assert_eq(prebuild(log, (char *[]){"--dir", dir, "--dir", dir, "cpu", NULL}), 2);
    cr_assert(strstr(slurp(log), "--dir given twice"), "%s", slurp(log));
    cr_assert_eq(prebuild(log, (char *[]){"--dir", dir, "--jobs", "2", "--jobs", "3", "cpu", NULL}), 2);
    cr_assert(strstr(slurp(log), "--jobs given twice"), "%s", slurp(log));
    /* A target no installed compiler knows: skipped, or an error with --strict. */
    cr_assert_eq(prebuild(log, (char *[]){"--dir", dir, "gfx1234", NULL}), 0);
    cr_assert(strstr(slurp(log), "skipping gfx1234"), "%s", slurp(log));
    cr_assert_eq(prebuild(log, (char *[]){"--dir", dir, "--strict", "gfx1234", NULL}), 1);
    cr_assert(strstr(slurp(log), "cannot build gfx1234"), "%s", slurp(log));
    struct stat sb;
    char pack[1200];
    snprintf(pack, sizeof pack, "%s/gfx1234.hpk", dir);
    cr_assert_neq(stat(pack, &sb), 0, "a pack was written for an unknown target");
    /* --reuse longer than a path may be, or empty: refused, not cut short. */
    char *long_reuse = malloc(3100);
    memset(long_reuse, 'r', 3099);
    long_reuse[3099] = '\0';
    cr_assert_eq(prebuild(log, (char *[]){"--dir", dir, "--reuse", long_reuse, "cpu", NULL}), 2);
    free(long_reuse);
    cr_assert(strstr(slurp(log), "(3099 characters): need a directory name of 1 to 3000"), "%s", slurp(log));
    cr_assert_eq(prebuild(log, (char *[]){"--dir", dir, "--reuse", "", "cpu", NULL}), 2);
    cr_assert(strstr(slurp(log), "--reuse '' (0 characters)"), "%s", slurp(log));
    /* An --reuse that is no directory is said (nothing was), and nothing is
     * reused. */
    cr_assert_eq(prebuild(log, (char *[]){"--dir", dir, "--reuse", "/nonexistent-amp-packs", "gfx1234", NULL}), 0);
    cr_assert(strstr(slurp(log), "--reuse '/nonexistent-amp-packs': No such file or directory: nothing is reused"),
              "%s", slurp(log));
    /* An --only that matches no program writes no (empty) pack over the last
     * one, and says so. */
    cr_assert_eq(prebuild(log, (char *[]){"--dir", dir, "--only", "no such program", "cpu", NULL}), 1);
    cr_assert(strstr(slurp(log), "--only 'no such program' matches no built-in program of cpu-"), "%s", slurp(log));
    DIR *d = opendir(dir);
    cr_assert(d);
    for (struct dirent *de; (de = readdir(d));)
        cr_assert(!strstr(de->d_name, ".hpk"), "%s was written for an --only that matches nothing", de->d_name);
    closedir(d);
}

/* --dir is walked as the tools walk an output: through a link another
 * user could have planted (here one of uid 65534 in a sticky directory
 * others may write, as root), nothing is built or written behind it;
 * a --dir that is a file is refused before anything is compiled. Before,
 * the tool made its packs through the link, in the directory it led to. */
Test(prebuilt, tool_refuses_a_dir_through_another_users_link)
{
    char dir[1024], log[1100], file[1100];
    fresh_dir(dir, sizeof dir, "tool");
    snprintf(log, sizeof log, "%s/log", dir);
    snprintf(file, sizeof file, "%s/afile", dir);
    FILE *f = fopen(file, "w");
    cr_assert(f);
    fclose(f);
    cr_assert_eq(prebuild(log, (char *[]){"--dir", file, "cpu", NULL}), 2, "%s", slurp(log));
    cr_assert(strstr(slurp(log), "is not a directory"), "%s", slurp(log));
    if (geteuid() != 0) cr_skip_test("a link of another user needs root to make here");
    char shared[1100], victim[1100], link[1200];
    snprintf(shared, sizeof shared, "%s/shared", dir);
    snprintf(victim, sizeof victim, "%s/victim", dir);
    snprintf(link, sizeof link, "%s/plant", shared);
    cr_assert_eq(mkdir(shared, 01777), 0);
    cr_assert_eq(chmod(shared, 01777), 0);
    cr_assert_eq(mkdir(victim, 0755), 0);
    cr_assert_eq(symlink(victim, link), 0);
    cr_assert_eq(lchown(link, 65534, 65534), 0);
    cr_assert_eq(prebuild(log, (char *[]){"--dir", link, "--only", "fill of 4-byte", "cpu", NULL}), 2, "%s", slurp(log));
    cr_assert(strstr(slurp(log), "a symbolic link of another user (uid 65534)"), "%s", slurp(log));
    /* A directory to make behind it is not made there either. */
    char deeper[1300];
    snprintf(deeper, sizeof deeper, "%s/made", link);
    cr_assert_eq(prebuild(log, (char *[]){"--dir", deeper, "--only", "fill of 4-byte", "cpu", NULL}), 2, "%s",
                 slurp(log));
    DIR *d = opendir(victim);
    cr_assert(d);
    for (struct dirent *de; (de = readdir(d));)
        cr_assert(de->d_name[0] == '.', "%s was written behind another user's link", de->d_name);
    closedir(d);
    /* One's own link there is followed. */
    cr_assert_eq(lchown(link, 0, 0), 0);
    cr_assert_eq(prebuild(log, (char *[]){"--dir", link, "--only", "no such program", "cpu", NULL}), 1, "%s", slurp(log));
    cr_assert(strstr(slurp(log), "matches no built-in program"), "%s", slurp(log));
    unlink(link);
}

/* The AMD side, which cannot run here: a pack for gfx90a is made with
 * hipRTC and holds AMDGPU code objects. */
Test(prebuilt, amd_pack_holds_code_objects, .timeout = 600)
{
    size_t n = 0;
    ASSERT_OK(amp_compile_targets(NULL, 0, &n));
    const char **list = calloc(n ? n : 1, sizeof *list);
    ASSERT_OK(amp_compile_targets(list, n, &n));
    bool have = false;
    for (size_t i = 0; i < n; ++i) have = have || !strcmp(list[i], "gfx90a");
    free(list);
    if (!have) cr_skip_test("no installed hipRTC/comgr knows gfx90a");
    char dir[1024], log[1100], pack[1200];
    fresh_dir(dir, sizeof dir, "amd");
    snprintf(log, sizeof log, "%s/log", dir);
    snprintf(pack, sizeof pack, "%s/gfx90a.hpk", dir);
    /* One job: hipRTC (LLVM) on a thread of its own trips AddressSanitizer's
     * thread teardown in the sanitizer build. */
    int rc = prebuild(log, (char *[]){"--dir", dir, "--jobs", "1", "--only", "fill of 4-byte", "gfx90a", NULL});
    cr_assert_eq(rc, 0, "%s", slurp(log));
    FILE *f = fopen(pack, "rb");
    cr_assert(f, "no %s: %s", pack, slurp(log));
    unsigned char h[144 + 80];
    cr_assert_eq(fread(h, 1, sizeof h, f), sizeof h);
    cr_assert_eq(memcmp(h, "HIPAMPK1", 8), 0);
    uint32_t count;
    memcpy(&count, h + 12, 4);
    cr_assert_eq(count, 1);
    cr_assert_str_eq((char *)h + 48, "gfx90a");
    uint64_t off;
    memcpy(&off, h + 144 + 32, 8);
    unsigned char elf[20];
    cr_assert_eq(fseek(f, (long)off, SEEK_SET), 0);
    cr_assert_eq(fread(elf, 1, sizeof elf, f), sizeof elf);
    fclose(f);
    cr_assert_eq(memcmp(elf, "\x7f" "ELF", 4), 0, "the entry is not an ELF");
    cr_assert_eq(elf[18] | elf[19] << 8, 224, "e_machine %d is not EM_AMDGPU", elf[18] | elf[19] << 8);
    /* A second run keeps the entry instead of compiling it again. */
    rc = prebuild(log, (char *[]){"--dir", dir, "--jobs", "1", "--only", "fill of 4-byte", "gfx90a", NULL});
    cr_assert_eq(rc, 0, "%s", slurp(log));
    cr_assert(strstr(slurp(log), "1 programs (0 compiled, 1 kept from the last pack)"), "%s", slurp(log));
}

/* ------------------------------------------- the cache warmer (--warm) */

static int compile_tool(const char *log, char *const extra[])
{
    char tool[1024];
    snprintf(tool, sizeof tool, "%s/hipamp-compile", bin_dir());
    char *argv[16] = {tool};
    int n = 1;
    for (int i = 0; extra[i] && n < 15; ++i) argv[n++] = extra[i];
    argv[n] = NULL;
    return run_tool(argv, log);
}

Test(prebuilt, warmer_fills_the_cache, .timeout = 600)
{
    char dir[1024], cache[1100], file[1100], log[1100];
    fresh_dir(dir, sizeof dir, "warm");
    snprintf(cache, sizeof cache, "%s/cache", dir);
    snprintf(file, sizeof file, "%s/seeds.hip", dir);
    snprintf(log, sizeof log, "%s/log", dir);
    FILE *f = fopen(file, "w");
    cr_assert(f);
    fputs(test_kernels_seeds, f);
    cr_assert_eq(fclose(f), 0);
    setenv("AMP_CACHE_DIR", cache, 1);
    int rc = compile_tool(log, (char *[]){"--warm", "--accelerator", "cpu", file, NULL});
    cr_assert_eq(rc, 0, "%s", slurp(log));
    char want[1300];
    snprintf(want, sizeof want, "cpu: %s: compiled, stored in the cache", file);
    cr_assert(strstr(slurp(log), want), "want '%s' in:\n%s", want, slurp(log));
    rc = compile_tool(log, (char *[]){"--warm", "--accelerator", "cpu", file, NULL});
    cr_assert_eq(rc, 0, "%s", slurp(log));
    snprintf(want, sizeof want, "cpu: %s: already in the cache", file);
    cr_assert(strstr(slurp(log), want), "want '%s' in:\n%s", want, slurp(log));
    /* A job's build of the same file now loads it. */
    amp_program *p = NULL;
    ASSERT_OK(amp_program_build_file(test_accel(TEST_ACCEL_CPU), file, NULL, &p));
    amp_cache_info ci;
    ASSERT_OK(amp_cache_get_info(&ci));
    cr_assert_eq(ci.disk_hits, 1);
    cr_assert_eq(ci.disk_stores, 0);
    amp_program_destroy(p);

    /* Session 105's: a build that cannot be stored (here a computed
     * #include, which the cache cannot track) left nothing for the job to
     * load, and the warmer said so only as "not cacheable (see
     * amp_cache_get_info)" and exited 0: now it is an error, with why. */
    char computed[1100], header[1100];
    snprintf(computed, sizeof computed, "%s/computed.hip", dir);
    snprintf(header, sizeof header, "%s/x.h", dir);
    f = fopen(header, "w");
    cr_assert(f);
    fputs("#define X 3\n", f);
    cr_assert_eq(fclose(f), 0);
    f = fopen(computed, "w");
    cr_assert(f);
    fputs("#define H \"x.h\"\n#include H\n"
          "AMP_KERNEL(k, amp::index<1> i, amp::array_view<int, 1> v) { v[i] = X; }\n",
          f);
    cr_assert_eq(fclose(f), 0);
    rc = compile_tool(log, (char *[]){"--warm", "--accelerator", "cpu", computed, NULL});
    cr_assert_eq(rc, 1, "%s", slurp(log));
    snprintf(want, sizeof want, "hipamp-compile: %s on cpu: compiled, but not stored in the cache: %s:2 has a computed "
             "#include", computed, computed);
    cr_assert(strstr(slurp(log), want), "want '%s' in:\n%s", want, slurp(log));

    /* Errors: nothing to warm, an unknown accelerator, the cache off. */
    cr_assert_eq(compile_tool(log, (char *[]){"--warm", NULL}), 2);
    cr_assert(strstr(slurp(log), "--warm needs a FILE.hip or --algorithms"), "%s", slurp(log));
    cr_assert_eq(compile_tool(log, (char *[]){"--warm", "--accelerator", "tpu:7", file, NULL}), 1);
    cr_assert(strstr(slurp(log), "--accelerator tpu:7"), "%s", slurp(log));
    cr_assert_eq(compile_tool(log, (char *[]){"--warm", "--frob", file, NULL}), 2);
    cr_assert(strstr(slurp(log), "unknown option '--frob' with --warm"), "%s", slurp(log));
    setenv("AMP_CACHE_DIR", "off", 1);
    cr_assert_eq(compile_tool(log, (char *[]){"--warm", file, NULL}), 1);
    cr_assert(strstr(slurp(log), "the compile cache is off"), "%s", slurp(log));
    setenv("AMP_CACHE_DIR", cache, 1);

    /* The built-in algorithms: from the build's CPU pack where it made one. */
    const char *target = NULL;
    ASSERT_OK(amp_accelerator_get_prebuilt_target(test_accel(TEST_ACCEL_CPU), &target));
    char pack[1200];
    snprintf(pack, sizeof pack, "%s/hipamp/prebuilt-%s/%s.hpk", bin_dir(), HIPAMP_VERSION_STRING, target ? target : "");
    struct stat sb;
    if (!target || stat(pack, &sb) != 0) return; /* no pack: the algorithms would all compile (minutes) */
    /* Its programs: not the precompiled headers. */
    static uint64_t off[1024], size[1024];
    uint64_t hoff, hsize;
    uint32_t count = pack_index(pack, off, size, 1024) - (header_entry(pack, &hoff, &hsize) >= 0) -
                     (magic_entry(pack, "AMPLPCH", &hoff, &hsize) >= 0);
    rc = compile_tool(log, (char *[]){"--warm", "--accelerator", "cpu", "--algorithms", NULL});
    cr_assert_eq(rc, 0, "%s", slurp(log));
    snprintf(want, sizeof want, "cpu: built-in algorithms: %u from the prebuilt pack, 0 already in the cache, 0 "
             "compiled and stored", count);
    cr_assert(strstr(slurp(log), want), "want '%s' in:\n%s", want, slurp(log));
}

/* amp_prebuilt_get_info lists the packs every time it is asked (a shared
 * directory position once left the second listing empty). */
ACCEL_TEST(prebuilt, info_lists_the_packs_every_time)
{
    char dir[1024], pack[1200];
    copy_fixture(acc, dir, sizeof dir, pack, sizeof pack);
    use_dirs(dir);
    const char *target = NULL;
    ASSERT_OK(amp_accelerator_get_prebuilt_target(acc, &target));
    for (int i = 0; i < 3; ++i) {
        amp_prebuilt_info pi = info();
        cr_assert(strstr(pi.available, target), "listing %d: available '%s' lacks %s", i, pi.available, target);
    }
}

/* --reuse keeps another build's entries only from a directory held to the
 * packs' rules; --dir must name something. */
Test(prebuilt, tool_reuses_only_trusted_packs, .timeout = 600)
{
    amp_accelerator *cpu = test_accel(TEST_ACCEL_CPU);
    char fixture[1200];
    const char *target = fixture_pack(cpu, fixture, sizeof fixture);
    char reuse[1024], out[1024], log[1100], copy[1300];
    fresh_dir(reuse, sizeof reuse, "reuse");
    snprintf(copy, sizeof copy, "%s/%s.hpk", reuse, target);
    copy_file(fixture, copy);
    snprintf(log, sizeof log, "%s/log", reuse);
    fresh_dir(out, sizeof out, "out");
    int rc = prebuild(log, (char *[]){"--dir", out, "--jobs", "1", "--reuse", reuse, "--only", "fill of 4-byte", "cpu",
                                      NULL});
    cr_assert_eq(rc, 0, "%s", slurp(log));
    cr_assert(strstr(slurp(log), "1 programs (0 compiled, 1 kept from the last pack)"), "%s", slurp(log));
    /* The same directory, writable by everyone: nothing is taken from it. */
    cr_assert_eq(chmod(reuse, 0777), 0);
    char out2[1024];
    fresh_dir(out2, sizeof out2, "out2");
    rc = prebuild(log, (char *[]){"--dir", out2, "--jobs", "1", "--reuse", reuse, "--only", "fill of 4-byte", "cpu",
                                  NULL});
    cr_assert_eq(rc, 0, "%s", slurp(log));
    cr_assert(strstr(slurp(log), "1 programs (1 compiled, 0 kept from the last pack)"), "%s", slurp(log));
    chmod(reuse, 0755);
    cr_assert_eq(prebuild(log, (char *[]){"--dir", "", "cpu", NULL}), 2);
    cr_assert(strstr(slurp(log), "--dir '': need a directory name"), "%s", slurp(log));
}

/* "--warm" as the value of an option is a value, not the warm mode. */
Test(prebuilt, warm_only_as_an_option)
{
    char dir[1024], log[1100];
    fresh_dir(dir, sizeof dir, "warmopt");
    snprintf(log, sizeof log, "%s/log", dir);
    int rc = compile_tool(log, (char *[]){"--target", "gfx90a", "-o", "--warm", NULL});
    cr_assert_eq(rc, 2, "%s", slurp(log));
    cr_assert(strstr(slurp(log), "no input file"), "%s", slurp(log));
}

/* A program linked with the static library, started by a bare name found
 * on PATH from a directory another user could fill: it looks for packs
 * beside its own file (or where the library was installed), never in the
 * current directory, whose name its argv[0] would resolve to. */
Test(prebuilt, static_program_started_by_a_bare_name_ignores_the_current_directory)
{
    char cwd[1024], planted[1300], log[1100];
    fresh_dir(cwd, sizeof cwd, "cwd");
    /* What an attacker would put there: a file of the program's name and a
     * pack directory beside it. */
    snprintf(planted, sizeof planted, "%s/prebuilt_static_probe", cwd);
    FILE *f = fopen(planted, "w");
    cr_assert(f);
    fclose(f);
    snprintf(planted, sizeof planted, "%s/hipamp", cwd);
    cr_assert_eq(mkdir(planted, 0755), 0);
    snprintf(planted, sizeof planted, "%s/hipamp/prebuilt-%s", cwd, HIPAMP_VERSION_STRING);
    cr_assert_eq(mkdir(planted, 0755), 0);
    snprintf(log, sizeof log, "%s/log", cwd);
    char path[2048], old_cwd[1024];
    snprintf(path, sizeof path, "PATH=%s/test", bin_dir());
    cr_assert(getcwd(old_cwd, sizeof old_cwd));
    cr_assert_eq(chdir(cwd), 0);
    pid_t pid;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    char *argv[] = {"prebuilt_static_probe", NULL};
    char *envp[] = {path, NULL};
    setenv("PATH", path + 5, 1); /* posix_spawnp searches this process's PATH */
    int rc = posix_spawnp(&pid, "prebuilt_static_probe", &fa, NULL, argv, envp);
    posix_spawn_file_actions_destroy(&fa);
    cr_assert_eq(chdir(old_cwd), 0);
    cr_assert_eq(rc, 0, "posix_spawnp: %s", strerror(rc));
    int ws = 0;
    cr_assert_eq(waitpid(pid, &ws, 0), pid);
    cr_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "%s", slurp(log));
    const char *out = slurp(log);
    cr_assert(strstr(out, "dir="), "%s", out);
    cr_assert_null(strstr(out, cwd), "the static program looked for packs in the current directory:\n%s", out);
}

/* Threads whose first calls load programs at once (entries are read and
 * checked outside the packs' lock): every result right, each program
 * loaded once. */
static amp_accelerator *g_threads_acc;
static void *first_calls(void *arg)
{
    (void)arg;
    reduce_and_check(g_threads_acc);
    fill_and_check(g_threads_acc);
    return NULL;
}

Test(prebuilt, threads_load_at_once)
{
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    char dir[1024], pack[1200];
    copy_fixture(acc, dir, sizeof dir, pack, sizeof pack);
    use_dirs(dir);
    g_threads_acc = acc;
    pthread_t t[4];
    for (int i = 0; i < 4; ++i) cr_assert_eq(pthread_create(&t[i], NULL, first_calls, NULL), 0);
    for (int i = 0; i < 4; ++i) pthread_join(t[i], NULL);
    amp_prebuilt_info pi = info();
    cr_assert_eq(pi.hits, 2, "hits %llu (%s)", (unsigned long long)pi.hits, pi.reason);
    cr_assert_eq(pi.misses, 0);
    cr_assert_eq(pi.rejected, 0, "%s", pi.reason);
}
