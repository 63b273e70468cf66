/* test_threads.c — host concurrency: 8 threads x 200 checked launches on their own views and queues, threads sharing the default queue and one kernel, two queues running at once, concurrent program builds; calls into the library from a key destructor that runs after the library's own at a thread's exit; a launch's (or replay's) future answering for it alone while another thread's launches on the view fail; the first use on a thread of 128 KiB of stack, and GPU compiles kept off the caller's stack. */
#include "support.h"

#include <hipamp_algorithms.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

extern const char test_kernels_threads[];


/* Worker threads must not call cr_assert: they record the first failure and
 * the main thread asserts. */
typedef struct worker {
    pthread_t th;
    int id;
    amp_accelerator *acc;
    amp_kernel *shared_kernel; /* NULL: build the program in the thread */
    bool own_queue;
    int launches, n;
    const char *source;
    int checked; /* launches whose result was checked and right */
    char err[512];
} worker;

#define TRY(w, call)                                                                        \
    do {                                                                                    \
        amp_status st_ = (call);                                                            \
        if (st_ != AMP_OK) {                                                                \
            snprintf((w)->err, sizeof (w)->err, "thread %d: %s -> %s: %s", (w)->id, #call,   \
                     amp_status_name(st_), amp_last_error());                               \
            goto out;                                                                       \
        }                                                                                   \
    } while (0)

/* thr_step: v = v * 3 + k + i, checked after every launch. */
static void *step_worker(void *arg)
{
    worker *w = arg;
    amp_accelerator_view *q = NULL;
    amp_program *p = NULL;
    amp_array_view *v = NULL;
    amp_kernel *k = w->shared_kernel;
    uint32_t *data = malloc((size_t)w->n * 4), *want = malloc((size_t)w->n * 4);
    if (!data || !want) {
        snprintf(w->err, sizeof w->err, "thread %d: malloc", w->id);
        goto out;
    }
    for (int i = 0; i < w->n; ++i) data[i] = want[i] = (uint32_t)(w->id * 100003 + i * 7 + 1);
    if (!k) {
        TRY(w, amp_program_build(w->acc, w->source, NULL, &p));
        TRY(w, amp_program_get_kernel(p, "thr_step", &k));
    }
    if (w->own_queue) TRY(w, amp_accelerator_view_create(w->acc, &q));
    TRY(w, amp_array_view_create(data, 4, amp_extent_1d(w->n), AMP_READ_WRITE, &v));
    for (int it = 0; it < w->launches; ++it) {
        uint32_t kk = (uint32_t)(w->id * 1000 + it);
        amp_arg a[] = {amp_arg_view(v), amp_arg_uint32(kk)};
        TRY(w, amp_parallel_for_each(q, amp_extent_1d(w->n), k, a, 2));
        TRY(w, amp_array_view_synchronize(v));
        for (int i = 0; i < w->n; ++i) {
            want[i] = want[i] * 3u + kk + (uint32_t)i;
            if (data[i] != want[i]) {
                snprintf(w->err, sizeof w->err,
                         "thread %d launch %d: element %d = 0x%08x, want 0x%08x", w->id, it, i,
                         data[i], want[i]);
                goto out;
            }
        }
        ++w->checked;
    }
out:
    if (v) amp_array_view_destroy(v);
    if (q) amp_accelerator_view_destroy(q);
    if (p) amp_program_destroy(p);
    free(data);
    free(want);
    return NULL;
}

static void run_workers(worker *w, int nw, void *(*fn)(void *))
{
    for (int i = 0; i < nw; ++i)
        cr_assert_eq(pthread_create(&w[i].th, NULL, fn, &w[i]), 0, "pthread_create");
    for (int i = 0; i < nw; ++i) pthread_join(w[i].th, NULL);
    for (int i = 0; i < nw; ++i) cr_assert_eq(w[i].err[0], '\0', "%s", w[i].err);
    for (int i = 0; i < nw; ++i)
        cr_assert_eq(w[i].checked, w[i].launches, "thread %d checked %d of %d launches", i,
                     w[i].checked, w[i].launches);
}

ACCEL_TEST(threads, eight_threads_200_launches_own_queues)
{
    enum { NW = 8 };
    /* build once here so the threads' builds hit the cache */
    amp_program *p = test_build(acc, test_kernels_threads);
    worker w[NW];
    memset(w, 0, sizeof w);
    for (int i = 0; i < NW; ++i) {
        w[i].id = i;
        w[i].acc = acc;
        w[i].own_queue = true;
        w[i].launches = 200;
        w[i].n = 64 + i;
        w[i].source = test_kernels_threads;
    }
    run_workers(w, NW, step_worker);
    ASSERT_OK(amp_program_destroy(p));
}

ACCEL_TEST(threads, threads_share_default_queue_and_kernel)
{
    enum { NW = 4 };
    amp_program *p = test_build(acc, test_kernels_threads);
    amp_kernel *k = test_kernel(p, "thr_step");
    worker w[NW];
    memset(w, 0, sizeof w);
    for (int i = 0; i < NW; ++i) {
        w[i].id = i;
        w[i].acc = acc;
        w[i].shared_kernel = k;
        w[i].own_queue = false;
        w[i].launches = 100;
        w[i].n = 33 * (i + 1);
    }
    run_workers(w, NW, step_worker);
    ASSERT_OK(amp_program_destroy(p));
}

/* Each thread builds its own variant of the source (a different cache key),
 * all at once, then launches from it. */
ACCEL_TEST(threads, concurrent_builds)
{
    enum { NW = 3 };
    char *src[NW];
    size_t len = strlen(test_kernels_threads);
    worker w[NW];
    memset(w, 0, sizeof w);
    for (int i = 0; i < NW; ++i) {
        src[i] = malloc(len + 64);
        cr_assert_not_null(src[i]);
        snprintf(src[i], len + 64, "%s\n// concurrent build variant %d\n", test_kernels_threads, i);
        w[i].id = i;
        w[i].acc = acc;
        w[i].own_queue = true;
        w[i].launches = 3;
        w[i].n = 100;
        w[i].source = src[i];
    }
    run_workers(w, NW, step_worker);
    for (int i = 0; i < NW; ++i) free(src[i]);
}

/* Two threads, each with a longer kernel on its own queue. */
typedef struct slow_worker {
    pthread_t th;
    int id;
    amp_accelerator_view *q;
    amp_kernel *k;
    int n, iters;
    uint32_t seed;
    uint32_t *out;
    char err[512];
} slow_worker;

static void *slow_fn(void *arg)
{
    slow_worker *s = arg;
    amp_array_view *v = NULL;
    amp_status st = amp_array_view_create(s->out, 4, amp_extent_1d(s->n), AMP_WRITE_ONLY, &v);
    if (st == AMP_OK) {
        amp_arg a[] = {amp_arg_view(v), amp_arg_int32(s->iters), amp_arg_uint32(s->seed)};
        for (int r = 0; r < 3 && st == AMP_OK; ++r)
            st = amp_parallel_for_each(s->q, amp_extent_1d(s->n), s->k, a, 3);
        if (st == AMP_OK) st = amp_array_view_destroy(v);
        else amp_array_view_destroy(v);
    }
    if (st != AMP_OK)
        snprintf(s->err, sizeof s->err, "thread %d: %s: %s", s->id, amp_status_name(st),
                 amp_last_error());
    return NULL;
}

/* x -> x * 1664525 + 1013904223, n times, by doubling. */
static uint32_t lcg_n(uint32_t x, int n)
{
    uint32_t a = 1664525u, c = 1013904223u, ra = 1u, rc = 0u;
    for (unsigned m = (unsigned)n; m; m >>= 1) {
        if (m & 1) {
            ra *= a;
            rc = rc * a + c;
        }
        c = c * a + c;
        a *= a;
    }
    return ra * x + rc;
}

ACCEL_TEST(threads, two_queues_concurrently)
{
    amp_accelerator_info info;
    ASSERT_OK(amp_accelerator_get_info(acc, &info));
    int iters = info.is_emulated ? 3000 : 200000;
    int n = info.is_emulated ? 4096 : 65536;
    amp_program *p = test_build(acc, test_kernels_threads);
    amp_kernel *k = test_kernel(p, "thr_slow");
    slow_worker s[2];
    memset(s, 0, sizeof s);
    for (int i = 0; i < 2; ++i) {
        s[i].id = i;
        ASSERT_OK(amp_accelerator_view_create(acc, &s[i].q));
        s[i].k = k;
        s[i].n = n;
        s[i].iters = iters + i;
        s[i].seed = 0xABCD0000u + (uint32_t)i;
        s[i].out = malloc((size_t)n * 4);
        cr_assert_not_null(s[i].out);
        for (int j = 0; j < n; ++j) s[i].out[j] = POISON_U32;
    }
    for (int i = 0; i < 2; ++i) cr_assert_eq(pthread_create(&s[i].th, NULL, slow_fn, &s[i]), 0);
    for (int i = 0; i < 2; ++i) pthread_join(s[i].th, NULL);
    for (int i = 0; i < 2; ++i) {
        cr_assert_eq(s[i].err[0], '\0', "%s", s[i].err);
        size_t bad = 0, first = 0;
        uint32_t fw = 0;
        for (int j = 0; j < n; ++j) {
            uint32_t want = lcg_n(s[i].seed ^ ((uint32_t)j * 2654435761u), s[i].iters);
            if (s[i].out[j] != want && bad++ == 0) { first = (size_t)j; fw = want; }
        }
        cr_assert_eq(bad, 0, "queue %d: %zu wrong; first element %zu: 0x%08x want 0x%08x", i, bad,
                     first, s[i].out[first], fw);
        ASSERT_OK(amp_accelerator_view_destroy(s[i].q));
        free(s[i].out);
    }
    ASSERT_OK(amp_program_destroy(p));
}

/* The review's: the library's first call from a thread of 128 KiB of
 * stack (musl's default for a thread) crashed: the accelerator registry's
 * first use put 60 KB on the caller's stack, a CPU build 34 KB more. The
 * whole first use on such a thread: the default accelerator, a cold build
 * (a source no cache holds), launches checked, a built-in algorithm. */
static void *small_stack_worker(void *arg)
{
    worker *w = arg;
    TRY(w, amp_accelerator_default(&w->acc));
    step_worker(w);
    if (w->err[0]) goto out;
    int32_t ones[1000], sum = 0;
    for (int i = 0; i < 1000; ++i) ones[i] = i % 7;
    amp_array_view *v = NULL;
    TRY(w, amp_array_view_create(ones, 4, amp_extent_1d(1000), AMP_READ_ONLY, &v));
    amp_status st = amp_reduce(NULL, amp_arg_view(v), AMP_TYPE_INT32, AMP_OP_SUM, &sum);
    amp_array_view_destroy(v);
    TRY(w, st);
    int32_t want = 0;
    for (int i = 0; i < 1000; ++i) want += i % 7;
    if (sum != want) snprintf(w->err, sizeof w->err, "amp_reduce gave %d, want %d", (int)sum, (int)want);
out:
    return NULL;
}

Test(threads, the_first_use_on_a_thread_of_128_KiB_of_stack, .timeout = 120)
{
    char *src = malloc(strlen(test_kernels_threads) + 64);
    cr_assert_not_null(src);
    sprintf(src, "// small stack %ld %ld\n%s", (long)getpid(), (long)time(NULL), test_kernels_threads);
    worker w = {.id = 1, .launches = 3, .n = 4096, .source = src};
    pthread_attr_t at;
    cr_assert_eq(pthread_attr_init(&at), 0);
    cr_assert_eq(pthread_attr_setstacksize(&at, 128 * 1024), 0);
    cr_assert_eq(pthread_create(&w.th, &at, small_stack_worker, &w), 0);
    pthread_attr_destroy(&at);
    pthread_join(w.th, NULL);
    free(src);
    cr_assert_eq(w.err[0], '\0', "%s", w.err);
    cr_assert_eq(w.checked, w.launches, "%d of %d launches checked", w.checked, w.launches);
}

/* NVRTC's and hipRTC's front ends recurse with the kernel's templates: a
 * build of thr_step and thr_slow for sm_90 took 96 KB of the caller's
 * stack, and the library's first use on a GPU crashed on a thread of
 * 128 KiB. They run on a thread of their own (lib/base/big_stack.c): what
 * the caller's thread gives to a compile for a target is hipamp's alone,
 * well inside that budget. Measured on a stack of the test's own, painted
 * before the thread starts. */
enum { PAINTED_STACK = 1 << 20, PAINT = 0xA5 };

typedef struct compile_on_painted {
    const char *target;
    amp_status st;
    char err[512];
} compile_on_painted;

static void *compile_for_target_worker(void *arg)
{
    compile_on_painted *c = arg;
    amp_code_object *co = NULL;
    c->st = amp_compile_for_target(c->target, test_kernels_threads, NULL, &co);
    if (c->st != AMP_OK) snprintf(c->err, sizeof c->err, "%s", amp_last_error());
    if (co) amp_code_object_destroy(co);
    return NULL;
}

Test(threads, the_gpu_compilers_do_not_run_on_the_callers_stack, .timeout = 120)
{
    static const char *const targets[] = {"sm_90", "gfx90a"};
    /* Mapped, not malloc'd: AddressSanitizer refuses a thread whose stack
     * lies in its own heap. */
    unsigned char *stack = mmap(NULL, PAINTED_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK,
                                -1, 0);
    cr_assert_neq(stack, MAP_FAILED);
    int compiled = 0;
    char skipped[1200] = "";
    for (size_t t = 0; t < sizeof targets / sizeof targets[0]; ++t) {
        memset(stack, PAINT, PAINTED_STACK);
        compile_on_painted c = {.target = targets[t]};
        pthread_attr_t at;
        pthread_t th;
        cr_assert_eq(pthread_attr_init(&at), 0);
        cr_assert_eq(pthread_attr_setstack(&at, stack, PAINTED_STACK), 0);
        cr_assert_eq(pthread_create(&th, &at, compile_for_target_worker, &c), 0);
        pthread_attr_destroy(&at);
        pthread_join(th, NULL);
        if (c.st == AMP_ERROR_UNSUPPORTED) { /* no NVRTC, or no hipRTC for AMD targets, here */
            snprintf(skipped + strlen(skipped), sizeof skipped - strlen(skipped), "%s: %.500s; ", targets[t], c.err);
            continue;
        }
        cr_assert_eq(c.st, AMP_OK, "%s: %s: %s", targets[t], amp_status_name(c.st), c.err);
        size_t untouched = 0;
        while (untouched < PAINTED_STACK && stack[untouched] == PAINT) ++untouched;
        size_t used = PAINTED_STACK - untouched;
        cr_assert_lt(used, 64u * 1024, "a compile for %s used %zu bytes of the caller's stack", targets[t], used);
        ++compiled;
    }
    munmap(stack, PAINTED_STACK);
    if (!compiled) cr_skip_test("no GPU compiler here: %s", skipped);
}

Test(threads, lcg_reference_self_check)
{
    uint32_t y = 777u;
    for (int i = 0; i < 12345; ++i) y = y * 1664525u + 1013904223u;
    cr_assert_eq(lcg_n(777u, 12345), y);
}

/* A thread's state in the library (the text of its last error, its launch
 * record, the CPU accelerator's record of its recent streamed launches)
 * goes through key destructors when the thread exits. A destructor of the
 * program's that runs after those (its key made after the library's) may
 * still call the library, and must find that state gone rather than freed
 * and still in use (a heap-use-after-free under ASan). */
typedef struct late_call {
    amp_kernel *k;
    int n;
    uint32_t *data;
    int step;      /* the thread's steps done: 1 launched, 2 failed, 3 late launch, 4 late failure */
    char err[512]; /* the first thing that went wrong */
} late_call;

static pthread_key_t late_key;

static const char late_source[] =
    "AMP_KERNEL_STREAMING_STORES(late_fill, 0)\n"
    "AMP_KERNEL(late_fill, amp::index<1> i, amp::array_view<unsigned, 1> out, unsigned k)\n"
    "{\n    out[i] = k * 7u + (unsigned)i[0];\n}\n";

/* Launches late_fill with k and checks every element. */
static bool late_launch(late_call *c, uint32_t k, const char *when)
{
    amp_array_view *v = NULL;
    amp_status st = amp_array_view_create(c->data, 4, amp_extent_1d(c->n), AMP_READ_WRITE, &v);
    amp_arg a[] = {amp_arg_view(v), amp_arg_uint32(k)};
    if (st == AMP_OK) st = amp_parallel_for_each(NULL, amp_extent_1d(c->n), c->k, a, 2);
    if (st == AMP_OK) st = amp_array_view_synchronize(v);
    if (st != AMP_OK) {
        snprintf(c->err, sizeof c->err, "%s: %s: %s", when, amp_status_name(st), amp_last_error());
        if (v) amp_array_view_destroy(v);
        return false;
    }
    amp_array_view_destroy(v);
    for (int i = 0; i < c->n; ++i)
        if (c->data[i] != k * 7u + (uint32_t)i) {
            snprintf(c->err, sizeof c->err, "%s: element %d = %u, want %u", when, i, c->data[i], k * 7u + (uint32_t)i);
            return false;
        }
    return true;
}

/* A failing call whose message names access: the message must then be
 * its own. */
static bool late_failure(late_call *c, int access, const char *when)
{
    amp_array_view *v = NULL;
    char want[64];
    snprintf(want, sizeof want, "access %d is not an amp_access", access);
    amp_status st = amp_array_view_create(c->data, 4, amp_extent_1d(c->n), (amp_access)access, &v);
    if (st != AMP_ERROR_INVALID_ARGUMENT || !strstr(amp_last_error(), want)) {
        snprintf(c->err, sizeof c->err, "%s: %s, message \"%s\", want one holding \"%s\"", when, amp_status_name(st),
                 amp_last_error(), want);
        return false;
    }
    return true;
}

static void late_destructor(void *arg)
{
    late_call *c = arg;
    if (c->step != 2) return;
    if (!late_launch(c, 31, "a launch in a key destructor after the library's")) return;
    c->step = 3;
    if (!late_failure(c, 78, "a failure in a key destructor after the library's")) return;
    c->step = 4;
}

static void *late_thread(void *arg)
{
    late_call *c = arg;
    if (!late_launch(c, 11, "the thread's launch")) return NULL;
    c->step = 1;
    if (!late_failure(c, 77, "the thread's failure")) return NULL;
    c->step = 2;
    (void)pthread_setspecific(late_key, c);
    return NULL;
}

ACCEL_TEST(threads, library_calls_in_a_later_key_destructor_at_thread_exit)
{
    amp_program *p = test_build(acc, late_source);
    late_call c = {.k = test_kernel(p, "late_fill"), .n = 1000};
    c.data = calloc((size_t)c.n, sizeof *c.data);
    cr_assert_not_null(c.data);
    /* The library's keys first (an error, a launch, a streamed one), so
     * that this test's key comes after them and its destructor runs
     * after theirs. */
    cr_assert(late_launch(&c, 5, "the main thread's launch"), "%s", c.err);
    cr_assert(late_failure(&c, 76, "the main thread's failure"), "%s", c.err);
    cr_assert_eq(pthread_key_create(&late_key, late_destructor), 0);
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, late_thread, &c), 0);
    cr_assert_eq(pthread_join(th, NULL), 0);
    cr_assert_eq(c.step, 4, "stopped after step %d: %s", c.step, c.err);
    pthread_key_delete(late_key);
    free(c.data);
    ASSERT_OK(amp_program_destroy(p));
}

/* A launch's future answers for that launch alone, whatever another thread
 * does on the same view meanwhile. One thread's launches cannot fail (each
 * stores its number at a host address); another's always fail (a view
 * access out of bounds, checked in debug mode), then it reports the
 * failure with amp_accelerator_view_wait, which lets the view run again.
 * The first thread's future may say its launch did not run because of the
 * other's failure, and then it did not run; otherwise it says AMP_OK, and
 * the launch ran. Its closing event was recorded after the call that
 * queued the launch, at whatever the queue held then: another thread's
 * later launch, whose own failure the future took (or, ran, its AMP_OK),
 * or the emptied queue, whose fault, cleared by the other thread's wait,
 * said AMP_OK for a launch that never ran: dozens a second on 2 cores.
 * The same through graph replays, whose futures were closed the same way. */
static const char own_status_source[] =
    "AMP_KERNEL(own_mark, amp::index<1> i, unsigned long long addr, int val)\n"
    "{ __atomic_store_n((int *)addr, val, __ATOMIC_RELEASE); }\n"
    "AMP_KERNEL(own_poke, amp::index<1> i, amp::array_view<int, 1> v, int at) { v[at] = 7; }\n";

typedef struct own_status {
    amp_accelerator_view *q;
    amp_kernel *poke;
    atomic_bool stop;
    char err[512];
} own_status;

static void *own_status_failer(void *arg)
{
    own_status *s = arg;
    int data[4] = {0};
    amp_array_view *v = NULL;
    if (amp_array_view_create(data, 4, amp_extent_1d(4), AMP_READ_WRITE, &v) != AMP_OK) {
        snprintf(s->err, sizeof s->err, "view: %s", amp_last_error());
        return NULL;
    }
    amp_arg a[] = {amp_arg_view(v), amp_arg_int32(4)};
    while (!atomic_load(&s->stop)) {
        amp_future *f = NULL;
        if (amp_parallel_for_each_async(s->q, amp_extent_1d(1), s->poke, a, 2, &f) != AMP_OK) {
            snprintf(s->err, sizeof s->err, "poke: %s", amp_last_error());
            break;
        }
        (void)amp_future_wait(f);
        (void)amp_accelerator_view_wait(s->q);
        amp_future_destroy(f);
    }
    (void)amp_accelerator_view_wait(s->q);
    amp_array_view_destroy(v);
    return NULL;
}

/* One checked launch (through a graph of it where g is not NULL): returns
 * false with *why set when its future misreported it. */
static bool own_status_check(amp_accelerator_view *q, amp_kernel *mark, amp_graph *g, volatile int *flag, int it,
                             char *why, size_t n)
{
    amp_future *f = NULL;
    amp_status st;
    *flag = 0;
    if (g) {
        st = amp_graph_launch_async(q, g, &f);
    } else {
        amp_arg a[] = {amp_arg_uint64((uint64_t)(uintptr_t)flag), amp_arg_int32(it)};
        st = amp_parallel_for_each_async(q, amp_extent_1d(1), mark, a, 2, &f);
    }
    if (st != AMP_OK) {
        snprintf(why, n, "launch %d: %s", it, amp_last_error());
        return false;
    }
    st = amp_future_wait(f);
    int seen = __atomic_load_n(flag, __ATOMIC_ACQUIRE);
    bool ran = seen == (g ? 1 : it);
    bool right = st == AMP_OK ? ran : !ran && strstr(amp_last_error(), "not run: an earlier launch");
    if (!right)
        snprintf(why, n, "%s %d: the future says %s (%s) but the kernel %s", g ? "replay" : "launch", it,
                 amp_status_name(st), st == AMP_OK ? "" : amp_last_error(), ran ? "ran" : "did not run");
    amp_future_destroy(f);
    return right;
}

Test(threads, cpu_future_answers_for_its_own_launch_alone, .timeout = 120)
{
    setenv("AMP_DEBUG", "1", 1);
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    amp_program *p = test_build(acc, own_status_source);
    amp_kernel *mark = NULL;
    own_status s = {.poke = NULL};
    ASSERT_OK(amp_program_get_kernel(p, "own_mark", &mark));
    ASSERT_OK(amp_program_get_kernel(p, "own_poke", &s.poke));
    ASSERT_OK(amp_accelerator_view_create(acc, &s.q));
    static volatile int flag;
    /* A graph of one launch that stores 1. */
    amp_graph *g = NULL;
    ASSERT_OK(amp_graph_begin_recording(s.q));
    amp_arg ga[] = {amp_arg_uint64((uint64_t)(uintptr_t)&flag), amp_arg_int32(1)};
    ASSERT_OK(amp_parallel_for_each(s.q, amp_extent_1d(1), mark, ga, 2));
    ASSERT_OK(amp_graph_end_recording(s.q, &g));
    cr_assert_not_null(g);
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, own_status_failer, &s), 0);
    char why[700] = "";
    bool right = true;
    double t0 = test_now_s();
    /* About 2 s at most: the old closing event misreported within 0.1 s. */
    for (int it = 1; it <= 4000 && right && test_now_s() - t0 < 2; ++it)
        right = own_status_check(s.q, mark, it % 2 ? g : NULL, &flag, it, why, sizeof why);
    atomic_store(&s.stop, true);
    pthread_join(th, NULL);
    cr_assert(right, "%s", why);
    cr_assert_eq(s.err[0], '\0', "%s", s.err);
    ASSERT_OK(amp_graph_destroy(g));
    ASSERT_OK(amp_accelerator_view_destroy(s.q));
    ASSERT_OK(amp_program_destroy(p));
}
