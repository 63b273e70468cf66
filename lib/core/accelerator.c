/* accelerator.c — the accelerator registry (GPUs found at run time, then the
 * CPU accelerator), the default choice (set by the program, else decided at
 * first use), C++ AMP's version and is_debug properties, and each
 * accelerator's default view. */
#include "internal.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AMP__MAX_ACCELERATORS 64

static pthread_once_t amp__registry_once = PTHREAD_ONCE_INIT;
static amp_accelerator amp__accs[AMP__MAX_ACCELERATORS + 1];
static size_t amp__nacc;
/* What each GPU driver found, written once with the registry. */
static amp_gpu_driver_report amp__reports[AMP__GPU_DRIVERS];

static void amp__registry_init(void)
{
    static amp__device_entry entries[AMP__MAX_ACCELERATORS]; /* once (pthread_once); 60 KB off any stack */
    size_t n = amp__gpu_enumerate(entries, AMP__MAX_ACCELERATORS, amp__reports);
    if (n > AMP__MAX_ACCELERATORS) n = AMP__MAX_ACCELERATORS;
    for (size_t i = 0; i < n; ++i) amp__accs[i].e = entries[i];
    amp__cpu_enumerate(&amp__accs[n].e);
    amp__nacc = n + 1;
    for (size_t i = 0; i < amp__nacc; ++i) {
        pthread_mutex_init(&amp__accs[i].lock, NULL);
        amp__accs[i].index = (int32_t)i;
    }
}

static void *amp__registry_thread(void *arg)
{
    (void)arg;
    amp__registry_init();
    return NULL;
}

/* The registry is made on a thread of the library's own (amp__on_big_stack):
 * the vendors' start runs inside it (cuInit, hipInit and ROCr's, the
 * compiler's probe), and the caller's thread may have a small stack
 * (musl's 128 KiB) that hipamp's own code is held to but theirs is not. */
static void amp__registry_init_once(void)
{
    (void)amp__on_big_stack(amp__registry_thread, NULL);
}

amp_status amp__registry(amp_accelerator **list, size_t *count)
{
    pthread_once(&amp__registry_once, amp__registry_init_once);
    *list = amp__accs;
    *count = amp__nacc;
    return AMP_OK;
}

static _Atomic(amp_accelerator *) amp__standins[8];

bool amp__accelerator_standin(amp_accelerator *a)
{
    for (size_t i = 0; i < sizeof amp__standins / sizeof amp__standins[0]; ++i) {
        amp_accelerator *none = NULL;
        if (atomic_compare_exchange_strong(&amp__standins[i], &none, a)) return true;
    }
    return false;
}

amp_status amp__accelerator_check(const amp_accelerator *a, const char *fn, const char *what)
{
    if (!a) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", fn, what);
    amp_accelerator *all;
    size_t n;
    amp__registry(&all, &n);
    uintptr_t at = (uintptr_t)a, lo = (uintptr_t)all;
    bool standin = false;
    for (size_t i = 0; i < sizeof amp__standins / sizeof amp__standins[0] && !standin; ++i)
        standin = atomic_load(&amp__standins[i]) == a;
    if (!standin && (at < lo || at >= lo + n * sizeof *all || (at - lo) % sizeof *all))
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT,
                         "%s: %s (%p) is not an accelerator of this library (amp_accelerator_find, "
                         "amp_accelerator_default or amp_accelerator_list give them)",
                         fn, what, (const void *)a);
    return AMP_OK;
}

amp_status amp_gpu_driver_reports(amp_gpu_driver_report *out, size_t cap, size_t *count)
{
    AMP__NOT_NULL(count);
    if (!out && cap) {
        *count = 0;
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_gpu_driver_reports: out is NULL but cap is %zu", cap);
    }
    amp_accelerator *all;
    size_t n;
    amp__registry(&all, &n);
    for (size_t i = 0; i < AMP__GPU_DRIVERS && i < cap; ++i) out[i] = amp__reports[i];
    *count = AMP__GPU_DRIVERS;
    return AMP_OK;
}

/* Why no GPU was found, driver by driver ("hip: ...; cuda: ..."), into buf. */
static void amp__no_gpu_why(char *buf, size_t n)
{
    const amp_gpu_driver_report *r = amp__reports;
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < AMP__GPU_DRIVERS && used < n; ++i)
        used += (size_t)snprintf(buf + used, n - used, "%s%s: %.300s", i ? "; " : "", r[i].name, r[i].detail);
}

amp_status amp_accelerator_list(amp_accelerator **list, size_t cap, size_t *count)
{
    AMP__NOT_NULL(count);
    if (!list && cap) {
        *count = 0;
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_accelerator_list: list is NULL but cap is %zu", cap);
    }
    amp_accelerator *all;
    size_t n;
    amp__registry(&all, &n);
    for (size_t i = 0; i < n && i < cap; ++i) list[i] = &all[i];
    *count = n;
    return AMP_OK;
}

amp_status amp_accelerator_get_peer_info(const amp_accelerator *a, const amp_accelerator *b, amp_peer_info *out)
{
    AMP__NOT_NULL(out);
    memset(out, 0, sizeof *out);
    AMP__ACCEL_OK(a);
    AMP__ACCEL_OK(b);
    if (a == b) {
        out->direct = true;
        snprintf(out->reason, sizeof out->reason, "one accelerator: copies stay in its memory");
        return AMP_OK;
    }
    if (a->e.be != b->e.be || !a->e.be->peer_info) {
        snprintf(out->reason, sizeof out->reason, "through host memory: %s and %s are not two GPUs of one driver",
                 a->e.info.device_path, b->e.info.device_path);
        return AMP_OK;
    }
    return a->e.be->peer_info(a->e.dev, b->e.dev, &out->direct, &out->enabled, out->reason, sizeof out->reason);
}

/* Why want names no accelerator, into buf: the paths there are (a guess,
 * "gpu" or "cuda:1" on one GPU, is put right at once) and, for a GPU
 * driver's path, what that driver found. For amp_accelerator_find and
 * AMP_DEFAULT_ACCELERATOR alike. */
static void amp__no_such_path(const char *want, char *buf, size_t size)
{
    amp_accelerator *all;
    size_t n;
    amp__registry(&all, &n);
    int w = snprintf(buf, size, "\"%.64s\" names no accelerator on this machine, which has", want);
    size_t at = w < 0 ? size : (size_t)w;
    for (size_t i = 0; i < n && at < size; ++i) {
        w = snprintf(buf + at, size - at, "%s \"%s\"", i ? "," : "", all[i].e.info.device_path);
        at = w < 0 ? size : at + (size_t)w;
    }
    const amp_gpu_driver_report *r = amp__reports;
    const char *driver_why = NULL;
    for (size_t i = 0; i < AMP__GPU_DRIVERS; ++i)
        if (!strncmp(want, r[i].name, strlen(r[i].name)) && want[strlen(r[i].name)] == ':') driver_why = r[i].detail;
    if (at < size)
        snprintf(buf + at, size - at, " (see hipamp-info)%s%.900s%s", driver_why ? " (" : "",
                 driver_why ? driver_why : "", driver_why ? ")" : "");
}

amp_status amp_accelerator_find(const char *path, amp_accelerator **out)
{
    AMP__NOT_NULL(out);
    *out = NULL;
    AMP__NOT_NULL(path);
    /* C++ AMP's accelerator::default_accelerator path. */
    if (!strcmp(path, "default")) return amp_accelerator_default(out);
    amp_accelerator *all;
    size_t n;
    amp__registry(&all, &n);
    for (size_t i = 0; i < n; ++i)
        if (!strcmp(all[i].e.info.device_path, path)) {
            *out = &all[i];
            return AMP_OK;
        }
    char why[1400];
    amp__no_such_path(path, why, sizeof why);
    return amp__fail(AMP_ERROR_NO_ACCELERATOR, "amp_accelerator_find: %s", why);
}

/* The default is decided once: by amp_accelerator_set_default, else at
 * first use (AMP_DEFAULT_ACCELERATOR is read then). Every later call, the
 * launch path's q = NULL included, is a load. A refusal is remembered with
 * its message. amp__default_acc and _why are written once, under the lock,
 * before decided is set. */
static pthread_mutex_t amp__default_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool amp__default_decided;
static amp_accelerator *amp__default_acc;
static char amp__default_why[1536];

/* [amp__default_lock] Decide from the environment and the registry. */
static void amp__default_init(void)
{
    amp_accelerator *all, *a = NULL;
    size_t n;
    amp__registry(&all, &n);
    const char *want = amp__env("AMP_DEFAULT_ACCELERATOR");
    if (want) {
        for (size_t i = 0; i < n && !a; ++i)
            if (!strcmp(all[i].e.info.device_path, want)) a = &all[i];
        if (!a) {
            char why[1400];
            amp__no_such_path(want, why, sizeof why);
            snprintf(amp__default_why, sizeof amp__default_why, "AMP_DEFAULT_ACCELERATOR=%s", why);
        }
        else if (!a->e.info.is_available)
            snprintf(amp__default_why, sizeof amp__default_why, "AMP_DEFAULT_ACCELERATOR=\"%.64s\" is unavailable: %s",
                     want, a->e.info.unavailable_reason);
        else
            amp__default_acc = a;
        return;
    }
    for (size_t i = 0; i < n; ++i)
        if (all[i].e.info.is_available) {
            amp__default_acc = &all[i];
            return;
        }
    char why[768];
    amp__no_gpu_why(why, sizeof why);
    snprintf(amp__default_why, sizeof amp__default_why,
             "no usable accelerator: no GPU found (%s) and the CPU accelerator is unavailable: %s", why,
             all[n - 1].e.info.unavailable_reason);
}

amp_status amp_accelerator_default(amp_accelerator **out)
{
    AMP__NOT_NULL(out);
    if (!atomic_load_explicit(&amp__default_decided, memory_order_acquire)) {
        /* Discovery (which runs the host compiler) outside the lock, so
         * that the lock is only ever held for the short decision: a child
         * forked while another thread discovers finds it free (and
         * pthread_once runs discovery again there). */
        amp_accelerator *all;
        size_t n;
        amp__registry(&all, &n);
        pthread_mutex_lock(&amp__default_lock);
        if (!atomic_load_explicit(&amp__default_decided, memory_order_relaxed)) {
            amp__default_init();
            atomic_store_explicit(&amp__default_decided, true, memory_order_release);
        }
        pthread_mutex_unlock(&amp__default_lock);
    }
    *out = amp__default_acc;
    return amp__default_acc ? AMP_OK : amp__fail(AMP_ERROR_NO_ACCELERATOR, "%s", amp__default_why);
}

amp_status amp_accelerator_set_default(amp_accelerator *a)
{
    AMP__ACCEL_OK(a);
    if (!a->e.info.is_available)
        return amp__fail(AMP_ERROR_NO_ACCELERATOR, "amp_accelerator_set_default: %s is unavailable: %s",
                         a->e.info.device_path, a->e.info.unavailable_reason);
    amp_status st = AMP_OK;
    pthread_mutex_lock(&amp__default_lock);
    if (!atomic_load_explicit(&amp__default_decided, memory_order_relaxed)) {
        amp__default_acc = a;
        atomic_store_explicit(&amp__default_decided, true, memory_order_release);
    } else if (amp__default_acc != a) {
        st = amp__fail(AMP_ERROR_BUSY,
                       "amp_accelerator_set_default(%s): the default accelerator was already decided (%s): set it "
                       "before anything uses it", a->e.info.device_path,
                       amp__default_acc ? amp__default_acc->e.info.device_path : amp__default_why);
    }
    pthread_mutex_unlock(&amp__default_lock);
    return st;
}

/* The node-local rank the launcher gave this process, or -1. */
static int amp__env_local_rank(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "MV2_COMM_WORLD_LOCAL_RANK",
                                       "PMI_LOCAL_RANK", "PALS_LOCAL_RANKID", "SLURM_LOCALID", NULL};
    for (size_t i = 0; vars[i]; ++i) {
        const char *v = amp__env(vars[i]);
        char *end = NULL;
        long r = v ? strtol(v, &end, 10) : -1;
        if (v && end != v && !*end && r >= 0 && r < 1 << 20) return (int)r;
    }
    return -1;
}

amp_status amp_accelerator_select_local(int local_rank, amp_accelerator **out)
{
    AMP__NOT_NULL(out);
    *out = NULL;
    if (local_rank < -1)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_accelerator_select_local: local rank %d (use -1 to read it "
                         "from the launcher's environment)", local_rank);
    if (local_rank == -1) local_rank = amp__env_local_rank();
    if (local_rank < 0) local_rank = 0;
    amp_accelerator *all;
    size_t n, ngpu = 0;
    amp__registry(&all, &n);
    for (size_t i = 0; i < n; ++i)
        if (!all[i].e.info.is_emulated && all[i].e.info.is_available) ngpu++;
    if (ngpu == 0) {
        amp_accelerator *cpu = &all[n - 1];
        if (!cpu->e.info.is_available) {
            char why[768];
            amp__no_gpu_why(why, sizeof why);
            return amp__fail(AMP_ERROR_NO_ACCELERATOR,
                             "amp_accelerator_select_local: no GPU (%s), and the CPU accelerator is unavailable: %s",
                             why, cpu->e.info.unavailable_reason);
        }
        *out = cpu;
        return AMP_OK;
    }
    size_t want = (size_t)local_rank % ngpu;
    for (size_t i = 0; i < n; ++i)
        if (!all[i].e.info.is_emulated && all[i].e.info.is_available && want-- == 0) {
            *out = &all[i];
            break;
        }
    return AMP_OK;
}

amp_status amp_accelerator_get_info(const amp_accelerator *a, amp_accelerator_info *out)
{
    AMP__CLEAR_OUT(out);
    AMP__NOT_NULL(out);
    AMP__ACCEL_OK(a);
    *out = a->e.info;
    return AMP_OK;
}

amp_status amp_accelerator_get_version(const amp_accelerator *a, unsigned *out)
{
    AMP__CLEAR_OUT(out);
    AMP__NOT_NULL(out);
    AMP__ACCEL_OK(a);
    *out = a->e.version;
    return AMP_OK;
}

amp_status amp_accelerator_get_is_debug(const amp_accelerator *a, bool *out)
{
    AMP__CLEAR_OUT(out);
    AMP__NOT_NULL(out);
    AMP__ACCEL_OK(a);
    *out = a->e.is_debug;
    return AMP_OK;
}

/* ---------------------------------------------------------- default views */

/* The view in *slot, created on first use (is_default: the default view). */
static amp_status amp__accelerator_view_in(amp_accelerator *a, _Atomic(amp_accelerator_view *) *slot, bool is_default,
                                           amp_accelerator_view **out)
{
    amp_accelerator_view *q = atomic_load_explicit(slot, memory_order_acquire);
    if (q) {
        *out = q;
        return AMP_OK;
    }
    amp_status st = AMP_OK;
    pthread_mutex_lock(&a->lock);
    q = atomic_load_explicit(slot, memory_order_relaxed);
    if (!q && (st = amp__queue_new(a, is_default, &q)) == AMP_OK) atomic_store_explicit(slot, q, memory_order_release);
    pthread_mutex_unlock(&a->lock);
    *out = q;
    return st;
}

amp_status amp__accelerator_queue(amp_accelerator *a, amp_accelerator_view **out)
{
    return amp__accelerator_view_in(a, &a->default_view, true, out);
}

amp_status amp__accelerator_queue_for(amp_accelerator *a, amp_accelerator_view *q, amp_accelerator_view **out)
{
    if (!q) return amp__accelerator_queue(a, out);
    if (!atomic_load_explicit(&q->recorder, memory_order_acquire)) {
        *out = q;
        return AMP_OK;
    }
    return amp__accelerator_view_in(a, &a->side_view, false, out);
}

amp_status amp__default_queue(amp_accelerator_view **out)
{
    amp_accelerator *a;
    amp_status st = amp_accelerator_default(&a);
    if (st != AMP_OK) {
        *out = NULL;
        return st;
    }
    return amp__accelerator_queue(a, out);
}

amp_status amp_accelerator_default_view(amp_accelerator *a, amp_accelerator_view **out)
{
    AMP__NOT_NULL(out);
    *out = NULL;
    AMP__ACCEL_OK(a);
    return amp__accelerator_queue(a, out);
}
