/* support.h — shared test helpers: run one test body on each accelerator
 * kind (CPU, GPU), build embedded kernel files, assert statuses with the
 * library's message. */
#ifndef HIPAMP_TEST_SUPPORT_H
#define HIPAMP_TEST_SUPPORT_H

#include <criterion/criterion.h>
#include <hipamp.h>
#include <stdlib.h>
#include <string.h>

/* Kernel files under test/kernels/, embedded at build time. */
extern const char test_kernels_seeds[];

typedef enum test_accel_kind { TEST_ACCEL_CPU, TEST_ACCEL_GPU } test_accel_kind;

/* The accelerator of that kind, or skip the test with a reason (no GPU
 * present; CPU accelerator unavailable). Never returns NULL. */
amp_accelerator *test_accel(test_accel_kind kind);

/* The description of an ACCEL_TEST's GPU variant. Where no GPU is listed
 * (a probe in a child process before the run: support.c), those variants
 * are disabled rather than started: each would spend a process start (a
 * tenth of a second under ASan, with the GPU runtimes loaded) to skip; the
 * run says once why ("[----] support: no GPU present ..."). */
#define TEST_GPU_VARIANT "hipamp test: the body on a GPU"

/* ACCEL_TEST(suite, name) { body using `acc` } defines suite/name_cpu and
 * suite/name_gpu, each running the body on that accelerator. Criterion forks
 * a process per test, and no accelerator is touched before the fork, so GPU
 * drivers are initialised in the child only. */
#define ACCEL_TEST(suite, name, ...)                                               \
    static void suite##_##name##_body(amp_accelerator *acc);                       \
    Test(suite, name##_cpu, ##__VA_ARGS__) { suite##_##name##_body(test_accel(TEST_ACCEL_CPU)); } \
    Test(suite, name##_gpu, .description = TEST_GPU_VARIANT, ##__VA_ARGS__) {       \
        suite##_##name##_body(test_accel(TEST_ACCEL_GPU));                         \
    }                                                                              \
    static void suite##_##name##_body(amp_accelerator *acc)

/* ACCEL_TILED_TEST(suite, name): ACCEL_TEST plus suite/name_cpu_fibers, the
 * same body on the CPU accelerator with AMP_CPU_TILED=fibers, so tiled
 * kernels run on fibers there and on their loop versions in name_cpu. */
#define ACCEL_TILED_TEST(suite, name, ...)                                         \
    static void suite##_##name##_body(amp_accelerator *acc);                       \
    Test(suite, name##_cpu, ##__VA_ARGS__) { suite##_##name##_body(test_accel(TEST_ACCEL_CPU)); } \
    Test(suite, name##_cpu_fibers, ##__VA_ARGS__) {                                \
        setenv("AMP_CPU_TILED", "fibers", 1);                                      \
        suite##_##name##_body(test_accel(TEST_ACCEL_CPU));                         \
    }                                                                              \
    Test(suite, name##_gpu, .description = TEST_GPU_VARIANT, ##__VA_ARGS__) {       \
        suite##_##name##_body(test_accel(TEST_ACCEL_GPU));                         \
    }                                                                              \
    static void suite##_##name##_body(amp_accelerator *acc)

/* LeakSanitizer builds: checks for leaks now, failing the test on one;
 * then no check runs again in the test's process (after the body or at
 * exit). For a test that then hands over to a library whose teardown
 * leaves its own memory unreachable (MPI_Finalize). Other builds: nothing.
 * Every test body is otherwise checked when it returns (support.c). */
void test_leak_check_final(void);

/* Criterion's libgit2 (support.c): whether libgit2's own initialization
 * has run in this process; it runs on the first git_diff_buffers, which
 * this program defines in front of libgit2's with libgit2's arguments
 * (the options and callbacks as untyped pointers: no libgit2 header). */
bool test_libgit2_initialized(void);
int git_diff_buffers(const void *old_buffer, size_t old_len, const char *old_as_path, const void *new_buffer,
                     size_t new_len, const char *new_as_path, const void *options, void *file_cb, void *binary_cb,
                     void *hunk_cb, void *line_cb, void *payload);

/* Assert a call returned want; the failure message carries amp_last_error. */
#define ASSERT_STATUS(call, want)                                                   \
    do {                                                                           \
        amp_status st_ = (call);                                                   \
        cr_assert_eq(st_, (want), "%s returned %s, want %s: %s", #call,            \
                     amp_status_name(st_), amp_status_name(want), amp_last_error()); \
    } while (0)
#define ASSERT_OK(call) ASSERT_STATUS(call, AMP_OK)
/* The call failed as a use of a destroyed handle (a stale handle: the
 * message says "destroyed"). */
#define ASSERT_DESTROYED(call)                                                                       \
    do {                                                                                             \
        ASSERT_STATUS(call, AMP_ERROR_INVALID_ARGUMENT);                                             \
        cr_assert(strstr(amp_last_error(), "destroyed"), "%s: no \"destroyed\" in: %s", #call,       \
                  amp_last_error());                                                                 \
    } while (0)

/* Build source for acc (asserting success) and fetch one kernel from it. */
amp_program *test_build(amp_accelerator *acc, const char *source);
amp_kernel *test_kernel(amp_program *p, const char *name);

/* Fill with reproducible pseudo-random values in [-1, 1) (never zeros). */
void test_fill_random(float *x, size_t n, unsigned seed);
/* In a file's second pass with the CPU accelerator's memory apart (its
 * _discrete_cpu test, test/CMakeLists.txt: HIPAMP_TEST_DISCRETE_PASS set),
 * a test on the CPU accelerator whose subject does not depend on where
 * views' data is kept (what a compile that fails says) is skipped: the
 * first pass ran it, and each run of it costs compiles that are never
 * cached. The GPU variants run in both passes as before. */
bool test_in_discrete_cpu_pass(amp_accelerator *acc);
#define SKIP_IN_DISCRETE_PASS(acc, what)                                                                  \
    do {                                                                                                 \
        if (test_in_discrete_cpu_pass(acc))                                                              \
            cr_skip_test("%s does not depend on the memory model: the first pass (memory shared) ran it", \
                         what);                                                                          \
    } while (0)
/* Built with AddressSanitizer (ci/test.sh's sanitizer pass). */
#if defined(__SANITIZE_ADDRESS__)
#define TEST_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_UNDER_ASAN 1
#endif
#endif
#ifndef TEST_UNDER_ASAN
#define TEST_UNDER_ASAN 0
#endif
/* In the sanitizer pass, a test whose subject ASan does not watch (races
 * between processes, what other processes make of a directory's mode,
 * compiles inside NVRTC and hipRTC) is skipped, saying why: the release
 * pass runs it, and under ASan each costs 9-11 s of CI's 2 cores. */
#define SKIP_UNDER_ASAN(what)                                                                                 \
    do {                                                                                                      \
        if (TEST_UNDER_ASAN) cr_skip_test("the release pass runs it: AddressSanitizer does not watch %s", what); \
    } while (0)
/* A test's .init: the CPU accelerator keeps views' data apart from their
 * host memory (AMP_CPU_UNIFIED=0), as a discrete GPU does, so its copy and
 * coherence paths run. */
void test_cpu_copying(void);

/* Values written over outputs before a launch, so an element the kernel
 * failed to write cannot pass for a result. */
#define POISON_U32 0xDEADBEEFu
#define POISON_I32 ((int32_t)0x7EADBEEF)
#define POISON_F32 (-777.25f)

/* A view of host memory (asserting success). */
amp_array_view *test_view(void *host, size_t elem_size, amp_extent e, amp_access a);
/* Seconds on the monotonic clock. */
double test_now_s(void);
/* malloc that fails the test instead of returning NULL. */
void *test_xmalloc(size_t n);
/* Bytes of heap in use (mallinfo2: the main arena's and malloc's mapped
 * chunks), for tests that bound growth over many repetitions. */
size_t test_heap_in_use(void);
/* Assert got == want element by element (floats bit for bit: the test
 * kernels use exact arithmetic), naming the first difference. */
void test_check_f32(const float *got, const float *want, size_t n, const char *what);
void test_check_i32(const int32_t *got, const int32_t *want, size_t n, const char *what);

/* Removes directory dir and everything in it now (read-only entries
 * included: each is made writable first). */
void test_remove_tree(const char *dir);

/* Removes directory dir and everything in it when the calling test's
 * process exits (not in children it forks: they share the directory), so
 * that tests' scratch directories do not pile up in the build tree. */
void test_remove_at_exit(const char *dir);

/* Skips the calling test, saying why, unless the library that test loads
 * through a setting (what: "the stand-in NCCL") at path passes
 * amp_check_trusted_file: in a build tree a group may write (umask 002, a
 * project directory of mode 2775) hipamp refuses to load it, rightly. */
void test_skip_unless_trusted(const char *path, const char *what);

/* Process pid's parent and state letter (its /proc stat: state may be
 * NULL), or -1 where it cannot be read (gone, or not a process). */
long test_proc_parent(long pid, char *state);
/* Process pid's command line, its arguments joined by spaces, into buf (n
 * bytes); false where it cannot be read. */
bool test_proc_cmdline(long pid, char *buf, size_t n);

#endif
