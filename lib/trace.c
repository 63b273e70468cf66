/* trace.c — the trace: events recorded at the core's hooks (builds, copies
 * and the copies avoided, launches, waits) into a buffer, their device
 * times resolved from timed events at each flush, written as a Chrome
 * trace-event file (AMP_TRACE), and summed into the table printed at exit
 * (AMP_TRACE_SUMMARY).
 *
 * Locks: the buffer lock is a leaf (hooks take it under storage locks, and
 * nothing under it takes another lock or calls a backend). The flush lock serialises flushes and
 * owns everything a flush touches (file, summary, per-queue placement); it
 * is taken only by amp_trace_flush and at exit, with no core lock held,
 * because a flush waits for device events.
 *
 * Device tracks: a launch or copy on a queue is bracketed by two timed
 * events; its duration is what they measure. Its start on the host clock is
 * the latest of: when it was queued, the previous command on the queue's
 * start plus the device time between the two start events, and the
 * previous command's end (an in-order queue runs one command at a time).
 * So durations are exact, and starts lag the true device start by at most
 * the submission latency of the first command after the queue was idle. */
#include "trace.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

_Atomic unsigned amp__trace_flags;

#define AMP__TRACE_CHUNK 1024
#define AMP__TRACE_MAX_DEFAULT 1000000ULL
#define AMP__TOP_KERNELS 10

enum { AMP__EV_BUILD = 1, AMP__EV_COPY, AMP__EV_LAUNCH, AMP__EV_WAIT, AMP__EV_AVOIDED };

/* One recorded event. Host times are amp__now_ns(). */
typedef struct amp__tev {
    uint8_t kind;
    uint8_t sub;        /* copy, avoided: amp__copy_dir; build: AMP__BUILD_* */
    uint8_t why;        /* copy, avoided: amp__copy_why */
    uint8_t rank;       /* launch: extent rank; copy: storage rank */
    bool tiled, is_array;
    uint32_t tid;       /* host thread track */
    uint32_t qid;       /* queue (0: none) */
    uint32_t name;      /* interned: kernel, build label */
    int32_t acc;        /* accelerator index (-1: none) */
    uint32_t elem;      /* copy: element bytes */
    amp_status st;
    uint64_t t_ns;      /* start of the host part (device commands: when queued) */
    uint64_t end_ns;    /* end of the host part */
    uint64_t bytes;     /* copy, avoided */
    uint64_t seq;       /* wait: the command waited for */
    uintptr_t object;   /* copy, avoided: the storage */
    int32_t ext[AMP_MAX_RANK];
    int32_t tile[3];
    int32_t lo[AMP_MAX_RANK], hi[AMP_MAX_RANK];
    const amp__backend *be; /* timed events t0, t1 (device commands; NULL: host-timed) */
    void *dev, *t0, *t1;
} amp__tev;

typedef struct amp__tchunk {
    struct amp__tchunk *next;
    size_t n;
    amp__tev ev[AMP__TRACE_CHUNK];
} amp__tchunk;

typedef struct amp__tqueue {
    int32_t acc;
    uint8_t kind; /* 0 created, 1 default view, 2 native queue */
} amp__tqueue;

/* ------------------------------------------------- state: buffer lock */

static pthread_mutex_t amp__tlock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    amp__tchunk *head, *tail;
    uint64_t count, dropped, max_events;
    bool exit_hooked;
    char **strs; /* interned strings, by id */
    uint32_t nstrs, capstrs;
    uint32_t *slots; /* open addressing over strs, id + 1 (0: empty) */
    uint32_t nslots;
    amp__tqueue *queues; /* by id - 1 */
    uint32_t nqueues, capqueues;
    long *threads; /* OS thread id, by track - 1 */
    uint32_t nthreads, capthreads;
} T;
static _Thread_local uint32_t amp__my_track;

/* Set by the constructor, read-only after. */
static char amp__tpath[4096];
static uint64_t amp__tepoch;
static pid_t amp__tpid;
static bool amp__tno_hooks; /* AMP_TRACE asked for, but the hooks are compiled out */

/* -------------------------------------------------- state: flush lock */

static pthread_mutex_t amp__tflush = PTHREAD_MUTEX_INITIALIZER;
typedef struct amp__chain {
    const amp__backend *be;
    void *dev, *prev_t0; /* the last placed command's start event (kept for the next delta) */
    uint64_t prev_start, prev_end;
} amp__chain;
typedef struct amp__kagg {
    uint64_t launches, device_ns, untimed;
} amp__kagg;
static struct {
    FILE *f;
    off_t tail;       /* where the closing text starts: the next events go here */
    bool any, failed;
    char path[4200];
    char error[512];
    uint64_t written;
    amp__chain *chains; /* by queue id */
    uint32_t nchains;
    bool *seen_queue, *seen_thread, seen_acc[65], seen_host;
    uint32_t nseen_queue, nseen_thread;
    amp__kagg *k; /* by string id */
    uint32_t nk;
    uint64_t bytes[5][AMP__WHY_COUNT], copies[5][AMP__WHY_COUNT];
    uint64_t avoided_bytes[5], avoided[5];
    uint64_t builds[3], build_ns, build_failed;
    uint64_t waits, wait_ns;
    uint64_t dropped;
} F;

/* ------------------------------------------------------------- names */

static const char *const amp__why_names[AMP__WHY_COUNT] = {
    "-", "first use", "stale after refresh", "region list reset", "write-back before copy-in", "synchronize",
    "write-back on refresh/discard", "array init", "amp_array_copy_from_host", "amp_array_copy_to_host",
    "amp_copy", "amp_copy staged through host", "discard avoided"};

const char *amp__copy_why_name(int why) { return why >= 0 && why < AMP__WHY_COUNT ? amp__why_names[why] : "?"; }

static const char *amp__dir_short(int dir)
{
    return dir == AMP__H2D ? "H2D" : dir == AMP__D2H ? "D2H" : dir == AMP__D2D ? "D2D" : dir == AMP__H2H ? "H2H" : "?";
}

static const char *amp__dir_long(int dir)
{
    return dir == AMP__H2D   ? "host->device"
           : dir == AMP__D2H ? "device->host"
           : dir == AMP__D2D ? "device->device"
           : dir == AMP__H2H ? "host->host"
                             : "?";
}

static const char *amp__cache_name(int c) { return c == AMP__BUILD_MEMORY ? "memory" : c == AMP__BUILD_DISK ? "disk" : "miss"; }

static int amp__acc_index(const amp_accelerator *a)
{
    amp_accelerator *all;
    size_t n;
    if (!a || amp__registry(&all, &n) != AMP_OK || a < all || a >= all + n) return -1;
    return (int)(a - all);
}

static const amp_accelerator_info *amp__acc_info(int i)
{
    amp_accelerator *all;
    size_t n;
    if (i < 0 || amp__registry(&all, &n) != AMP_OK || (size_t)i >= n) return NULL;
    return &all[i].e.info;
}

/* "999x666" */
static void amp__dims(char *out, size_t n, const int32_t *v, int rank)
{
    size_t at = 0;
    out[0] = '\0';
    for (int d = 0; d < rank && at < n; ++d) {
        int w = snprintf(out + at, n - at, d ? "x%d" : "%d", v[d]);
        if (w < 0) break;
        at += (size_t)w;
    }
}

/* "kernel.hip [transpose_simple +5]": the file name and the kernels the
 * source defines, so that two embedded sources can be told apart. */
static void amp__build_label(const amp__build_input *in, char *out, size_t n)
{
    const char *name = in->source_name ? in->source_name : AMP__SOURCE_NAME;
    const char *slash = strrchr(name, '/');
    if (slash && slash[1]) name = slash + 1;
    char first[96] = "";
    int count = 0;
    static const char *const marks[2] = {"AMP_KERNEL(", "AMP_TILED_KERNEL("};
    const char *s = in->source, *end = in->source + in->source_len;
    for (const char *p = s; p < end; ++p) {
        if (*p != 'A' || (p > s && (p[-1] == '_' || (p[-1] >= 'A' && p[-1] <= 'Z') || (p[-1] >= 'a' && p[-1] <= 'z') ||
                                    (p[-1] >= '0' && p[-1] <= '9'))))
            continue;
        for (int m = 0; m < 2; ++m) {
            size_t ml = strlen(marks[m]);
            if ((size_t)(end - p) < ml || memcmp(p, marks[m], ml)) continue;
            const char *q = p + ml;
            while (q < end && (*q == ' ' || *q == '\t' || *q == '\n')) ++q;
            const char *id = q;
            while (q < end && (*q == '_' || (*q >= 'A' && *q <= 'Z') || (*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9')))
                ++q;
            if (q > id && ++count == 1) snprintf(first, sizeof first, "%.*s", (int)(q - id), id);
            p = q - 1;
            break;
        }
    }
    if (count > 1) snprintf(out, n, "%s [%s +%d]", name, first, count - 1);
    else if (count == 1) snprintf(out, n, "%s [%s]", name, first);
    else snprintf(out, n, "%s", name);
}

/* ---------------------------------------------- buffer (buffer lock) */

static uint32_t amp__intern(const char *s)
{
    uint64_t h = amp__fnv1a(AMP__FNV_SEED, s, strlen(s));
    if (T.nslots && (T.nstrs + 1) * 2 <= T.nslots) {
        for (uint32_t i = (uint32_t)h & (T.nslots - 1);; i = (i + 1) & (T.nslots - 1)) {
            uint32_t id = T.slots[i];
            if (!id) break;
            if (!strcmp(T.strs[id - 1], s)) return id - 1;
        }
    } else {
        /* Grow the table (it is always at most half full). */
        uint32_t ns = T.nslots ? T.nslots * 2 : 256;
        uint32_t *slots = calloc(ns, sizeof *slots);
        if (!slots) return UINT32_MAX;
        for (uint32_t id = 0; id < T.nstrs; ++id) {
            uint64_t g = amp__fnv1a(AMP__FNV_SEED, T.strs[id], strlen(T.strs[id]));
            uint32_t i = (uint32_t)g & (ns - 1);
            while (slots[i]) i = (i + 1) & (ns - 1);
            slots[i] = id + 1;
        }
        free(T.slots);
        T.slots = slots;
        T.nslots = ns;
        return amp__intern(s);
    }
    if (T.nstrs == T.capstrs) {
        uint32_t cap = T.capstrs ? T.capstrs * 2 : 64;
        char **strs = realloc(T.strs, cap * sizeof *strs);
        if (!strs) return UINT32_MAX;
        T.strs = strs;
        T.capstrs = cap;
    }
    char *copy = amp__strdup(s);
    if (!copy) return UINT32_MAX;
    uint32_t i = (uint32_t)h & (T.nslots - 1);
    while (T.slots[i]) i = (i + 1) & (T.nslots - 1);
    T.strs[T.nstrs] = copy;
    T.slots[i] = ++T.nstrs;
    return T.nstrs - 1;
}

static uint32_t amp__queue_track(amp_accelerator_view *q)
{
    if (!q) return 0;
    if (q->trace_id) return q->trace_id;
    if (T.nqueues == T.capqueues) {
        uint32_t cap = T.capqueues ? T.capqueues * 2 : 16;
        amp__tqueue *qs = realloc(T.queues, cap * sizeof *qs);
        if (!qs) return 0;
        T.queues = qs;
        T.capqueues = cap;
    }
    T.queues[T.nqueues].acc = amp__acc_index(q->acc);
    T.queues[T.nqueues].kind = q->is_default ? 1 : q->borrowed ? 2 : 0;
    q->trace_id = ++T.nqueues;
    return q->trace_id;
}

static uint32_t amp__thread_track(void)
{
    if (amp__my_track) return amp__my_track;
    if (T.nthreads == T.capthreads) {
        uint32_t cap = T.capthreads ? T.capthreads * 2 : 8;
        long *ts = realloc(T.threads, cap * sizeof *ts);
        if (!ts) return 0;
        T.threads = ts;
        T.capthreads = cap;
    }
    T.threads[T.nthreads] = (long)syscall(SYS_gettid);
    amp__my_track = ++T.nthreads;
    return amp__my_track;
}

static void amp__trace_at_exit(void);

/* A zeroed event at the end of the buffer, or NULL (full, or no memory:
 * counted as dropped). */
static amp__tev *amp__tev_new(void)
{
    if (!T.exit_hooked) {
        /* Registered at the first event, which comes after the vendor
         * runtimes were initialised: handlers run in reverse order, so
         * this one runs before any teardown they registered. */
        T.exit_hooked = true;
        atexit(amp__trace_at_exit);
    }
    if (T.count >= T.max_events) {
        T.dropped++;
        return NULL;
    }
    if (!T.tail || T.tail->n == AMP__TRACE_CHUNK) {
        amp__tchunk *c = malloc(sizeof *c);
        if (!c) {
            T.dropped++;
            return NULL;
        }
        c->next = NULL;
        c->n = 0;
        if (T.tail) T.tail->next = c;
        else T.head = c;
        T.tail = c;
    }
    amp__tev *e = &T.tail->ev[T.tail->n++];
    memset(e, 0, sizeof *e);
    e->acc = -1;
    e->tid = amp__thread_track();
    T.count++;
    return e;
}

static void amp__release_events(const amp__backend *be, void *dev, void *a, void *b)
{
    if (a) be->event_release(dev, a);
    if (b) be->event_release(dev, b);
}

static void amp__fill_object(amp__tev *e, const amp__storage *s, const amp__box *b)
{
    if (!s) return;
    e->object = (uintptr_t)s;
    e->is_array = s->is_array;
    e->elem = (uint32_t)s->elem;
    e->rank = (uint8_t)s->ext.rank;
    for (int d = 0; d < s->ext.rank; ++d) {
        e->ext[d] = s->ext.v[d];
        e->lo[d] = b ? b->lo[d] : 0;
        e->hi[d] = b ? b->hi[d] : s->ext.v[d];
    }
}

/* ------------------------------------------------------------- hooks */

uint64_t amp__trace_build_begin(const amp__build_input *in)
{
    if (atomic_load_explicit(&amp__trace_flags, memory_order_relaxed) & AMP__TRACE_VENDOR) {
        char label[256], text[300];
        amp__build_label(in, label, sizeof label);
        snprintf(text, sizeof text, "hipamp build %s", label);
        amp__vendor_push(AMP__RANGE_BUILD, 0, text);
    }
    return amp__now_ns();
}

void amp__trace_build_end(uint64_t t0, amp_accelerator *acc, const amp__build_input *in, int cache, amp_status st)
{
    unsigned f = atomic_load_explicit(&amp__trace_flags, memory_order_relaxed);
    uint64_t t1 = amp__now_ns();
    if (f & AMP__TRACE_RECORD) {
        char label[256];
        amp__build_label(in, label, sizeof label);
        int ai = amp__acc_index(acc);
        pthread_mutex_lock(&amp__tlock);
        amp__tev *e = amp__tev_new();
        if (e) {
            e->kind = AMP__EV_BUILD;
            e->sub = (uint8_t)cache;
            e->name = amp__intern(label);
            e->acc = ai;
            e->st = st;
            e->t_ns = t0;
            e->end_ns = t1;
        }
        pthread_mutex_unlock(&amp__tlock);
    }
    if (f & AMP__TRACE_VENDOR) amp__vendor_pop();
}

amp_status amp__trace_launch(amp_accelerator_view *q, void *fn, const amp__launch *l, amp__point *done)
{
    unsigned f = atomic_load_explicit(&amp__trace_flags, memory_order_relaxed);
    if (f & AMP__TRACE_VENDOR) {
        char ext[64], text[256];
        amp__dims(ext, sizeof ext, l->extent.v, l->extent.rank);
        snprintf(text, sizeof text, "hipamp launch %s %s", l->kernel_name, ext);
        amp__vendor_push(AMP__RANGE_LAUNCH, 0, text);
    }
    if (!(f & AMP__TRACE_RECORD)) {
        amp_status st = amp__queue_launch_raw(q, fn, l, done);
        if (f & AMP__TRACE_VENDOR) amp__vendor_pop();
        return st;
    }
    uint64_t queued = amp__now_ns();
    void *t0 = NULL, *t1 = NULL;
    if (amp__queue_timed_event(q, &t0) != AMP_OK) t0 = NULL; /* then host-timed */
    amp_status st = amp__queue_launch_raw(q, fn, l, done);
    if (st == AMP_OK && t0 && amp__queue_timed_event(q, &t1) != AMP_OK) t1 = NULL;
    if (st != AMP_OK || !t1) {
        amp__queue_event_release(q, t0);
        t0 = NULL;
    }
    if (st == AMP_OK) {
        uint64_t end = amp__now_ns();
        int ai = amp__acc_index(q->acc);
        pthread_mutex_lock(&amp__tlock);
        amp__tev *e = amp__tev_new();
        if (e) {
            e->kind = AMP__EV_LAUNCH;
            e->qid = amp__queue_track(q);
            e->name = amp__intern(l->kernel_name);
            e->acc = ai;
            e->t_ns = queued;
            e->end_ns = end;
            e->rank = (uint8_t)l->extent.rank;
            e->tiled = l->tiled;
            for (int d = 0; d < l->extent.rank && d < AMP_MAX_RANK; ++d) e->ext[d] = l->extent.v[d];
            for (int d = 0; l->tiled && d < l->extent.rank && d < 3; ++d) e->tile[d] = l->sig->tile[d];
            e->be = q->be;
            e->dev = q->dev;
            e->t0 = t0;
            e->t1 = t1;
            t0 = t1 = NULL; /* the trace owns them now */
        }
        pthread_mutex_unlock(&amp__tlock);
        amp__release_events(q->be, q->dev, t0, t1);
    }
    if (f & AMP__TRACE_VENDOR) amp__vendor_pop();
    return st;
}

void amp__trace_copy_begin(amp__trace_span *sp, amp_accelerator_view *q, amp__copy_dir dir, uint64_t bytes,
                           amp__copy_why why)
{
    unsigned f = atomic_load_explicit(&amp__trace_flags, memory_order_relaxed);
    memset(sp, 0, sizeof *sp);
    sp->open = true;
    sp->q = q;
    sp->dir = (uint8_t)dir;
    sp->why = (uint8_t)why;
    sp->bytes = bytes;
    if (f & AMP__TRACE_VENDOR) {
        char text[160];
        snprintf(text, sizeof text, "hipamp copy %s %llu B (%s)", amp__dir_short(dir), (unsigned long long)bytes,
                 amp__copy_why_name(why));
        amp__vendor_push(AMP__RANGE_COPY, bytes, text);
        sp->vendor = true;
    }
    sp->start_ns = amp__now_ns();
    if ((f & AMP__TRACE_RECORD) && q && amp__queue_timed_event(q, &sp->t0) != AMP_OK) sp->t0 = NULL;
}

void amp__trace_copy_end(amp__trace_span *sp, amp_accelerator_view *counted, const amp__storage *s,
                         const amp__box *b, amp_status st)
{
    if (!sp->open) return;
    sp->open = false;
    unsigned f = atomic_load_explicit(&amp__trace_flags, memory_order_relaxed);
    amp_accelerator_view *q = sp->q;
    void *t0 = sp->t0, *t1 = NULL;
    if (st == AMP_OK && t0 && amp__queue_timed_event(q, &t1) != AMP_OK) t1 = NULL;
    if (st != AMP_OK || !t1) {
        if (q) amp__queue_event_release(q, t0);
        t0 = NULL;
    }
    if (st == AMP_OK && (f & AMP__TRACE_RECORD)) {
        uint64_t end = amp__now_ns();
        amp_accelerator_view *on = t0 ? q : counted;
        int ai = on ? amp__acc_index(on->acc) : -1;
        pthread_mutex_lock(&amp__tlock);
        amp__tev *e = amp__tev_new();
        if (e) {
            e->kind = AMP__EV_COPY;
            e->sub = sp->dir;
            e->why = sp->why;
            e->bytes = sp->bytes;
            e->qid = amp__queue_track(on);
            e->acc = ai;
            e->t_ns = sp->start_ns;
            e->end_ns = end;
            amp__fill_object(e, s, b);
            if (t0) {
                e->be = q->be;
                e->dev = q->dev;
                e->t0 = t0;
                e->t1 = t1;
                t0 = t1 = NULL;
            }
        }
        pthread_mutex_unlock(&amp__tlock);
    }
    if (q) amp__release_events(q->be, q->dev, t0, t1);
    if (sp->vendor) amp__vendor_pop();
}

static void amp__record_avoided(const amp__storage *s, amp_accelerator_view *q, const amp__box *b, amp__copy_dir dir,
                                uint64_t bytes)
{
    if (!bytes || !(atomic_load_explicit(&amp__trace_flags, memory_order_relaxed) & AMP__TRACE_RECORD)) return;
    int ai = q ? amp__acc_index(q->acc) : -1;
    uint64_t now = amp__now_ns();
    pthread_mutex_lock(&amp__tlock);
    amp__tev *e = amp__tev_new();
    if (e) {
        e->kind = AMP__EV_AVOIDED;
        e->sub = (uint8_t)dir;
        e->why = AMP__WHY_DISCARD;
        e->bytes = bytes;
        e->qid = amp__queue_track(q);
        e->acc = ai;
        e->t_ns = e->end_ns = now;
        amp__fill_object(e, s, b);
    }
    pthread_mutex_unlock(&amp__tlock);
}

void amp__trace_copy_in_avoided(const amp__storage *s, amp_accelerator_view *q, const amp__box *b)
{
    amp__record_avoided(s, q, b, AMP__H2D, (uint64_t)amp__box_volume(b, s->ext.rank) * s->elem);
}

void amp__trace_discard(const amp__storage *s, const amp__box *b)
{
    uint64_t bytes = 0;
    for (int i = 0; i < s->ndirty; ++i) {
        amp__box cut;
        if (amp__box_intersect(&s->dirty[i], b, s->ext.rank, &cut))
            bytes += (uint64_t)amp__box_volume(&cut, s->ext.rank) * s->elem;
    }
    amp__record_avoided(s, s->last.q, b, AMP__D2H, bytes);
}

void amp__trace_refresh(amp__storage *s, const amp__box *b)
{
    for (int i = 0; i < s->nvalid; ++i) {
        amp__box cut;
        if (amp__box_intersect(&s->valid[i], b, s->ext.rank, &cut)) {
            s->stale_why = AMP__WHY_REFRESH;
            return;
        }
    }
}

uint64_t amp__trace_wait_begin(amp_accelerator_view *q)
{
    if (atomic_load_explicit(&amp__trace_flags, memory_order_relaxed) & AMP__TRACE_VENDOR) {
        char text[96];
        snprintf(text, sizeof text, "hipamp wait %s", q->acc->e.info.device_path);
        amp__vendor_push(AMP__RANGE_WAIT, 0, text);
    }
    return amp__now_ns();
}

void amp__trace_wait_end(uint64_t t0, amp_accelerator_view *q, uint64_t seq, amp_status st)
{
    unsigned f = atomic_load_explicit(&amp__trace_flags, memory_order_relaxed);
    uint64_t t1 = amp__now_ns();
    if (f & AMP__TRACE_RECORD) {
        int ai = amp__acc_index(q->acc);
        pthread_mutex_lock(&amp__tlock);
        amp__tev *e = amp__tev_new();
        if (e) {
            e->kind = AMP__EV_WAIT;
            e->qid = amp__queue_track(q);
            e->acc = ai;
            e->seq = seq;
            e->st = st;
            e->t_ns = t0;
            e->end_ns = t1;
        }
        pthread_mutex_unlock(&amp__tlock);
    }
    if (f & AMP__TRACE_VENDOR) amp__vendor_pop();
}

/* ------------------------------------------------------- JSON text */

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 if none. */
static size_t amp__utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t len;
    unsigned lo = 0x80, hi = 0xBF;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F; /* no surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else {
        return 0;
    }
    if (len > n) return 0;
    if (s[1] < lo || s[1] > hi) return 0;
    for (size_t i = 2; i < len; ++i)
        if (s[i] < 0x80 || s[i] > 0xBF) return 0;
    return len;
}

/* A JSON string: quotes and backslashes escaped, control characters as
 * \u00XX, bytes that are not UTF-8 as U+FFFD (the text must stay valid). */
static void amp__sb_str(amp__sb *b, const char *s)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    size_t n = strlen((const char *)p);
    amp__sb_put(b, "\"", 1);
    for (size_t i = 0; i < n;) {
        unsigned c = p[i];
        if (c == '"' || c == '\\') {
            char esc[2] = {'\\', (char)c};
            amp__sb_put(b, esc, 2);
            ++i;
        } else if (c < 0x20) {
            char esc[8];
            snprintf(esc, sizeof esc, "\\u%04x", c);
            amp__sb_put(b, esc, 6);
            ++i;
        } else {
            size_t len = amp__utf8_len(p + i, n - i);
            if (len) {
                amp__sb_put(b, (const char *)p + i, len);
                i += len;
            } else {
                amp__sb_put(b, "\\ufffd", 6);
                ++i;
            }
        }
    }
    amp__sb_put(b, "\"", 1);
}

/* ------------------------------------------------------------ flush */

/* Track ids: host threads keep theirs (1, 2, ...), queues are 1000 + id,
 * so that no two tracks share a tid whichever viewer reads the file. */
#define AMP__HOST_PID 1
#define AMP__QUEUE_TID(id) (1000u + (id))
static int amp__acc_pid(int acc) { return acc < 0 ? AMP__HOST_PID : 2 + acc; }

static double amp__us(uint64_t ns) { return ns >= amp__tepoch ? (double)(ns - amp__tepoch) / 1e3 : 0.0; }

/* Snapshots taken under the buffer lock for one flush. */
typedef struct amp__snap {
    char **strs;
    uint32_t nstrs;
    amp__tqueue *queues;
    uint32_t nqueues;
    long *threads;
    uint32_t nthreads;
} amp__snap;

static bool amp__grow_bools(bool **v, uint32_t *n, uint32_t need)
{
    if (need <= *n) return true;
    bool *p = realloc(*v, need * sizeof *p);
    if (!p) return false;
    memset(p + *n, 0, (need - *n) * sizeof *p);
    *v = p;
    *n = need;
    return true;
}

static void amp__announce_host(amp__sb *b)
{
    if (F.seen_host) return;
    F.seen_host = true;
    amp__sb_printf(b, ",\n{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_name\",\"args\":{\"name\":\"hipamp host (pid %ld)\"}}",
                   AMP__HOST_PID, (long)amp__tpid);
    amp__sb_printf(b, ",\n{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_sort_index\",\"args\":{\"sort_index\":0}}",
                   AMP__HOST_PID);
}

static void amp__announce_thread(amp__sb *b, const amp__snap *sn, uint32_t tid)
{
    amp__announce_host(b);
    if (!tid || !amp__grow_bools(&F.seen_thread, &F.nseen_thread, tid + 1) || F.seen_thread[tid]) return;
    F.seen_thread[tid] = true;
    long os = tid <= sn->nthreads ? sn->threads[tid - 1] : 0;
    amp__sb_printf(b, ",\n{\"ph\":\"M\",\"pid\":%d,\"tid\":%u,\"name\":\"thread_name\",\"args\":{\"name\":\"host thread %u (tid %ld)\"}}",
                   AMP__HOST_PID, tid, tid, os);
}

static void amp__announce_acc(amp__sb *b, int acc)
{
    if (acc < 0 || acc >= 64 || F.seen_acc[acc]) return;
    F.seen_acc[acc] = true;
    const amp_accelerator_info *ai = amp__acc_info(acc);
    char name[400];
    snprintf(name, sizeof name, "%s: %s", ai ? ai->device_path : "?", ai ? ai->description : "?");
    amp__sb_printf(b, ",\n{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_name\",\"args\":{\"name\":", amp__acc_pid(acc));
    amp__sb_str(b, name);
    amp__sb_printf(b, "}},\n{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_sort_index\",\"args\":{\"sort_index\":%d}}",
                   amp__acc_pid(acc), 1 + acc);
}

static void amp__announce_queue(amp__sb *b, const amp__snap *sn, uint32_t qid)
{
    if (!qid || qid > sn->nqueues || !amp__grow_bools(&F.seen_queue, &F.nseen_queue, qid + 1) || F.seen_queue[qid])
        return;
    F.seen_queue[qid] = true;
    const amp__tqueue *tq = &sn->queues[qid - 1];
    amp__announce_acc(b, tq->acc);
    amp__sb_printf(b, ",\n{\"ph\":\"M\",\"pid\":%d,\"tid\":%u,\"name\":\"thread_name\",\"args\":{\"name\":\"queue %u%s\"}}",
                   amp__acc_pid(tq->acc), AMP__QUEUE_TID(qid), qid,
                   tq->kind == 1 ? " (default view)" : tq->kind == 2 ? " (native queue)" : "");
}

static const char *amp__snap_str(const amp__snap *sn, uint32_t id) { return id < sn->nstrs ? sn->strs[id] : "?"; }

static amp__chain *amp__chain_of(uint32_t qid)
{
    if (qid >= F.nchains) {
        uint32_t n = qid + 16;
        amp__chain *c = realloc(F.chains, n * sizeof *c);
        if (!c) return NULL;
        memset(c + F.nchains, 0, (n - F.nchains) * sizeof *c);
        F.chains = c;
        F.nchains = n;
    }
    return &F.chains[qid];
}

/* Device placement of a timed command (see the file comment); false when
 * its events could not be read (then it is placed on the host clock). */
static bool amp__place_device(amp__tev *e, uint64_t *start, uint64_t *end, double *device_ms)
{
    float ms = 0;
    amp_status st = e->be->event_wait(e->dev, e->t1);
    if (st == AMP_OK) st = e->be->event_elapsed(e->dev, e->t0, e->t1, &ms);
    amp__chain *c = amp__chain_of(e->qid);
    if (st != AMP_OK || !c) {
        amp__release_events(e->be, e->dev, e->t0, e->t1);
        e->t0 = e->t1 = NULL;
        return false;
    }
    uint64_t s = e->t_ns;
    if (c->prev_t0 && c->be == e->be && c->dev == e->dev) {
        float gap = 0;
        if (e->be->event_elapsed(e->dev, c->prev_t0, e->t0, &gap) == AMP_OK && gap > 0) {
            uint64_t cand = c->prev_start + (uint64_t)((double)gap * 1e6);
            if (cand > s) s = cand;
        }
    }
    if (c->prev_end > s) s = c->prev_end;
    uint64_t d = (uint64_t)((double)ms * 1e6);
    if (c->prev_t0) c->be->event_release(c->dev, c->prev_t0);
    c->be = e->be;
    c->dev = e->dev;
    c->prev_t0 = e->t0;
    c->prev_start = s;
    c->prev_end = s + d;
    e->be->event_release(e->dev, e->t1);
    e->t0 = e->t1 = NULL;
    *start = s;
    *end = s + d;
    *device_ms = ms;
    return true;
}

static void amp__sb_object(amp__sb *b, const amp__tev *e)
{
    if (!e->object) return;
    char ext[64], box[160];
    amp__dims(ext, sizeof ext, e->ext, e->rank);
    size_t at = 0;
    box[0] = '\0';
    for (int d = 0; d < e->rank && at < sizeof box; ++d) {
        int w = snprintf(box + at, sizeof box - at, d ? "x[%d,%d)" : "[%d,%d)", e->lo[d], e->hi[d]);
        if (w < 0) break;
        at += (size_t)w;
    }
    amp__sb_printf(b, ",\"object\":\"%s\",\"storage\":\"0x%" PRIxPTR "\",\"extent\":\"%s\",\"element_bytes\":%u,\"box\":\"%s\"",
                   e->is_array ? "array" : "array_view", e->object, ext, e->elem, box);
}

/* One event as JSON (leading ",\n") and into the summary. */
static void amp__emit(amp__sb *b, const amp__snap *sn, amp__tev *e)
{
    uint64_t start = e->t_ns, end = e->end_ns;
    double device_ms = -1;
    bool on_device = e->t0 && e->t1 && amp__place_device(e, &start, &end, &device_ms);
    double dur = end > start ? (double)(end - start) / 1e3 : 0.0;
    const amp_accelerator_info *ai = amp__acc_info(e->acc);
    const char *acc = ai ? ai->device_path : "";
    int pid = AMP__HOST_PID;
    unsigned tid = e->tid;
    /* Launches and copies avoided belong to their queue even when their
     * device time could not be read (then: the host's view of them). */
    if (on_device || ((e->kind == AMP__EV_AVOIDED || e->kind == AMP__EV_LAUNCH) && e->qid)) {
        amp__announce_queue(b, sn, e->qid);
        pid = amp__acc_pid(e->qid <= sn->nqueues && e->qid ? sn->queues[e->qid - 1].acc : e->acc);
        tid = AMP__QUEUE_TID(e->qid);
    } else {
        amp__announce_thread(b, sn, e->tid);
        if (e->qid) amp__announce_queue(b, sn, e->qid);
    }
    switch (e->kind) {
    case AMP__EV_LAUNCH: {
        const char *k = amp__snap_str(sn, e->name);
        char ext[64], tile[48] = "";
        amp__dims(ext, sizeof ext, e->ext, e->rank);
        if (e->tiled) amp__dims(tile, sizeof tile, e->tile, e->rank);
        /* A launch is never empty: a time below the clock's resolution
         * still shows as the smallest slice. */
        if (dur <= 0) dur = 0.001;
        amp__sb_put(b, ",\n{\"name\":", 10);
        amp__sb_str(b, k);
        amp__sb_printf(b, ",\"cat\":\"launch\",\"ph\":\"X\",\"pid\":%d,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"kernel\":",
                       pid, tid, amp__us(start), dur);
        amp__sb_str(b, k);
        amp__sb_printf(b, ",\"extent\":\"%s\",\"tile\":\"%s\",\"accelerator\":\"%s\",\"queue\":%u,\"device_timed\":%s,"
                          "\"device_ms\":%.6f,\"queued_us\":%.3f}}",
                       ext, e->tiled ? tile : "none", acc, e->qid, on_device ? "true" : "false",
                       on_device ? device_ms : dur / 1e3, amp__us(e->t_ns));
        if (e->name < sn->nstrs && e->name >= F.nk) {
            uint32_t n = sn->nstrs;
            amp__kagg *k2 = realloc(F.k, n * sizeof *k2);
            if (k2) {
                memset(k2 + F.nk, 0, (n - F.nk) * sizeof *k2);
                F.k = k2;
                F.nk = n;
            }
        }
        if (e->name < F.nk) {
            F.k[e->name].launches++;
            if (on_device) F.k[e->name].device_ns += (uint64_t)(device_ms * 1e6);
            else F.k[e->name].untimed++;
        }
        break;
    }
    case AMP__EV_COPY: {
        amp__sb_printf(b, ",\n{\"name\":\"copy %s\",\"cat\":\"copy\",\"ph\":\"X\",\"pid\":%d,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,"
                          "\"args\":{\"direction\":\"%s\",\"bytes\":%" PRIu64 ",\"reason\":\"%s\",\"accelerator\":\"%s\","
                          "\"queue\":%u,\"device_timed\":%s",
                       amp__dir_short(e->sub), pid, tid, amp__us(start), dur > 0 ? dur : 0.001, amp__dir_long(e->sub),
                       e->bytes, amp__copy_why_name(e->why), acc, e->qid, on_device ? "true" : "false");
        if (on_device) amp__sb_printf(b, ",\"device_ms\":%.6f", device_ms);
        amp__sb_object(b, e);
        amp__sb_put(b, "}}", 2);
        if (e->sub >= 1 && e->sub <= 4 && e->why < AMP__WHY_COUNT) {
            F.bytes[e->sub][e->why] += e->bytes;
            F.copies[e->sub][e->why]++;
        }
        break;
    }
    case AMP__EV_AVOIDED:
        amp__sb_printf(b, ",\n{\"name\":\"discard avoided\",\"cat\":\"copy\",\"ph\":\"i\",\"s\":\"t\",\"pid\":%d,\"tid\":%u,"
                          "\"ts\":%.3f,\"args\":{\"direction\":\"%s\",\"bytes_saved\":%" PRIu64 ",\"reason\":\"%s\","
                          "\"accelerator\":\"%s\",\"queue\":%u",
                       pid, tid, amp__us(start), amp__dir_long(e->sub), e->bytes, amp__copy_why_name(e->why), acc,
                       e->qid);
        amp__sb_object(b, e);
        amp__sb_put(b, "}}", 2);
        if (e->sub >= 1 && e->sub <= 4) {
            F.avoided_bytes[e->sub] += e->bytes;
            F.avoided[e->sub]++;
        }
        break;
    case AMP__EV_BUILD: {
        const char *label = amp__snap_str(sn, e->name);
        amp__sb_put(b, ",\n{\"name\":", 10);
        char name[300];
        snprintf(name, sizeof name, "build %s", label);
        amp__sb_str(b, name);
        amp__sb_printf(b, ",\"cat\":\"build\",\"ph\":\"X\",\"pid\":%d,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"source\":",
                       pid, tid, amp__us(start), dur > 0 ? dur : 0.001);
        amp__sb_str(b, label);
        amp__sb_printf(b, ",\"accelerator\":\"%s\",\"cache\":\"%s\",\"status\":\"%s\",\"ms\":%.3f}}", acc,
                       amp__cache_name(e->sub), amp_status_name(e->st), dur / 1e3);
        if (e->st == AMP_OK && e->sub < 3) F.builds[e->sub]++;
        else if (e->st != AMP_OK) F.build_failed++;
        F.build_ns += end - start;
        break;
    }
    case AMP__EV_WAIT:
        amp__sb_printf(b, ",\n{\"name\":\"wait\",\"cat\":\"wait\",\"ph\":\"X\",\"pid\":%d,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,"
                          "\"args\":{\"accelerator\":\"%s\",\"queue\":%u,\"until\":",
                       pid, tid, amp__us(start), dur > 0 ? dur : 0.001, acc, e->qid);
        if (e->seq == AMP__SEQ_TAIL) amp__sb_put(b, "\"all\"", 5);
        else amp__sb_printf(b, "%" PRIu64, e->seq);
        amp__sb_printf(b, ",\"status\":\"%s\"}}", amp_status_name(e->st));
        F.waits++;
        F.wait_ns += end - start;
        break;
    default:
        break;
    }
}

/* The trace file: header on first use, then each flush overwrites the
 * closing text with its events and writes the closing text again, so that
 * the file is a complete JSON document after every flush. */
static amp_status amp__write(const amp__sb *events, uint64_t nevents)
{
    if (F.failed) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s", F.error);
    if (!F.f) {
        /* %p: the process id, so that every rank of a job gets its own file. */
        size_t at = 0;
        for (const char *p = amp__tpath; *p && at + 24 < sizeof F.path; ++p) {
            if (p[0] == '%' && p[1] == 'p') {
                at += (size_t)snprintf(F.path + at, sizeof F.path - at, "%ld", (long)getpid());
                ++p;
            } else {
                F.path[at++] = *p;
            }
        }
        F.path[at] = '\0';
        F.f = fopen(F.path, "w");
        if (!F.f || fputs("{\"traceEvents\":[\n{\"ph\":\"M\",\"pid\":1,\"name\":\"process_labels\",\"args\":{\"labels\":\"hipamp\"}}",
                          F.f) < 0) {
            snprintf(F.error, sizeof F.error, "AMP_TRACE=%.400s: cannot write the trace: %s", F.path, strerror(errno));
            F.failed = true;
            if (F.f) fclose(F.f);
            F.f = NULL;
            return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s", F.error);
        }
        F.tail = ftello(F.f);
    }
    bool ok = fseeko(F.f, F.tail, SEEK_SET) == 0;
    if (ok && events->n) ok = fwrite(events->p, 1, events->n, F.f) == events->n;
    F.written += nevents;
    if (ok) F.tail = ftello(F.f);
    if (ok)
        ok = fprintf(F.f,
                     "\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":{\"library\":\"hipamp %s\",\"pid\":%ld,"
                     "\"clock\":\"CLOCK_MONOTONIC; ts in microseconds since the library was loaded\",\"epoch_ns\":%" PRIu64 ","
                     "\"device_tracks\":\"durations measured with device events; a command starts at the latest of when it "
                     "was queued, the previous command's start plus the device time between their start events, and the "
                     "previous command's end\",\"events\":%" PRIu64 ",\"dropped\":%" PRIu64 "}}\n",
                     amp_version(), (long)amp__tpid, amp__tepoch, F.written, F.dropped) > 0;
    if (ok) ok = fflush(F.f) == 0 && ftruncate(fileno(F.f), ftello(F.f)) == 0;
    if (!ok) {
        snprintf(F.error, sizeof F.error, "AMP_TRACE=%.400s: cannot write the trace: %s", F.path, strerror(errno));
        F.failed = true;
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s", F.error);
    }
    return AMP_OK;
}

/* Take the buffer, resolve and write it (flush lock held). */
static amp_status amp__flush_locked(void)
{
    amp__snap sn;
    memset(&sn, 0, sizeof sn);
    amp__tchunk *chunks;
    uint64_t count;
    amp_status st = AMP_OK;
    pthread_mutex_lock(&amp__tlock);
    chunks = T.head;
    count = T.count;
    T.head = T.tail = NULL;
    T.count = 0;
    F.dropped += T.dropped;
    T.dropped = 0;
    bool snap_ok = true;
    if (T.nstrs && !(sn.strs = malloc(T.nstrs * sizeof *sn.strs))) snap_ok = false;
    if (T.nqueues && !(sn.queues = malloc(T.nqueues * sizeof *sn.queues))) snap_ok = false;
    if (T.nthreads && !(sn.threads = malloc(T.nthreads * sizeof *sn.threads))) snap_ok = false;
    if (snap_ok) {
        if (T.nstrs) memcpy(sn.strs, T.strs, T.nstrs * sizeof *sn.strs);
        if (T.nqueues) memcpy(sn.queues, T.queues, T.nqueues * sizeof *sn.queues);
        if (T.nthreads) memcpy(sn.threads, T.threads, T.nthreads * sizeof *sn.threads);
        sn.nstrs = T.nstrs;
        sn.nqueues = T.nqueues;
        sn.nthreads = T.nthreads;
    }
    pthread_mutex_unlock(&amp__tlock);

    amp__sb b = {0};
    for (amp__tchunk *c = chunks; c; c = c->next)
        for (size_t i = 0; i < c->n; ++i) {
            amp__tev *e = &c->ev[i];
            if (snap_ok) amp__emit(&b, &sn, e);
            if (e->t0 || e->t1) amp__release_events(e->be, e->dev, e->t0, e->t1);
        }
    if (!snap_ok || b.oom) {
        F.dropped += count;
        st = amp__fail(AMP_ERROR_OUT_OF_MEMORY, "trace: out of host memory while flushing %" PRIu64 " events", count);
    } else if (atomic_load_explicit(&amp__trace_flags, memory_order_relaxed) & AMP__TRACE_FILE) {
        /* Every event starts with ",\n": the header's own metadata event
         * comes first in the file. */
        st = amp__write(&b, count);
    }
    while (chunks) {
        amp__tchunk *next = chunks->next;
        free(chunks);
        chunks = next;
    }
    free(b.p);
    free(sn.strs);
    free(sn.queues);
    free(sn.threads);
    return st;
}

amp_status amp_trace_flush(void)
{
    unsigned f = atomic_load_explicit(&amp__trace_flags, memory_order_relaxed);
    if (amp__tno_hooks)
        return amp__fail(AMP_ERROR_UNSUPPORTED,
                         "amp_trace_flush: AMP_TRACE/AMP_TRACE_SUMMARY is set, but this library was built with "
                         "-DHIPAMP_TRACE=OFF (the trace hooks are compiled out)");
    if (!(f & AMP__TRACE_RECORD) || getpid() != amp__tpid) return AMP_OK;
    pthread_mutex_lock(&amp__tlock);
    if (!T.exit_hooked) {
        /* A program that flushes before recording anything still gets its
         * final flush (and summary) at exit. */
        T.exit_hooked = true;
        atexit(amp__trace_at_exit);
    }
    pthread_mutex_unlock(&amp__tlock);
    pthread_mutex_lock(&amp__tflush);
    amp_status st = amp__flush_locked();
    pthread_mutex_unlock(&amp__tflush);
    return st;
}

/* ---------------------------------------------------------- summary */

static void amp__bytes_text(char *out, size_t n, uint64_t bytes)
{
    if (bytes >= (1ULL << 30)) snprintf(out, n, "%.2f GiB", (double)bytes / (double)(1ULL << 30));
    else if (bytes >= (1ULL << 20)) snprintf(out, n, "%.2f MiB", (double)bytes / (double)(1ULL << 20));
    else if (bytes >= (1ULL << 10)) snprintf(out, n, "%.2f KiB", (double)bytes / 1024.0);
    else snprintf(out, n, "%" PRIu64 " B", bytes);
}

/* Buffer lock held (the kernel names). */
static void amp__print_summary(FILE *o)
{
    char **strs = T.strs;
    uint32_t nk = F.nk;
    fprintf(o, "\nhipamp trace summary (pid %ld, %.3f s since the library was loaded)\n", (long)amp__tpid,
            (double)(amp__now_ns() - amp__tepoch) / 1e9);
    uint32_t order[AMP__TOP_KERNELS];
    int shown = 0;
    uint64_t rest_launches = 0, rest_ns = 0, total_launches = 0;
    uint32_t kernels = 0;
    for (uint32_t i = 0; i < nk; ++i)
        if (F.k[i].launches) {
            kernels++;
            total_launches += F.k[i].launches;
        }
    /* Top kernels by device time (selection: the list is short). */
    bool *taken = calloc(nk ? nk : 1, sizeof *taken);
    while (taken && shown < AMP__TOP_KERNELS) {
        int64_t best = -1;
        for (uint32_t i = 0; i < nk; ++i)
            if (!taken[i] && F.k[i].launches &&
                (best < 0 || F.k[i].device_ns > F.k[best].device_ns ||
                 (F.k[i].device_ns == F.k[best].device_ns && F.k[i].launches > F.k[best].launches)))
                best = i;
        if (best < 0) break;
        taken[best] = true;
        order[shown++] = (uint32_t)best;
    }
    for (uint32_t i = 0; taken && i < nk; ++i)
        if (!taken[i] && F.k[i].launches) {
            rest_launches += F.k[i].launches;
            rest_ns += F.k[i].device_ns;
        }
    free(taken);
    fprintf(o, "  %-36s %10s %14s %12s\n", "kernel (by device time)", "launches", "device ms", "mean us");
    for (int r = 0; r < shown; ++r) {
        const amp__kagg *k = &F.k[order[r]];
        uint64_t timed = k->launches - k->untimed;
        fprintf(o, "  %-36.36s %10" PRIu64 " %14.3f %12.3f%s\n", strs[order[r]], k->launches, (double)k->device_ns / 1e6,
                timed ? (double)k->device_ns / 1e3 / (double)timed : 0.0, k->untimed ? " (some untimed)" : "");
    }
    if (rest_launches)
        fprintf(o, "  %-36s %10" PRIu64 " %14.3f\n", "(other kernels)", rest_launches, (double)rest_ns / 1e6);
    fprintf(o, "  %" PRIu64 " launches of %u kernels\n", total_launches, kernels);
    fprintf(o, "  %-16s %16s %8s  %s\n", "bytes moved", "bytes", "copies", "by reason");
    for (int d = 1; d <= 4; ++d) {
        uint64_t bytes = 0, copies = 0;
        for (int w = 0; w < AMP__WHY_COUNT; ++w) {
            bytes += F.bytes[d][w];
            copies += F.copies[d][w];
        }
        char total[32];
        amp__bytes_text(total, sizeof total, bytes);
        fprintf(o, "  %-16s %16" PRIu64 " %8" PRIu64 "  (%s)", amp__dir_long(d), bytes, copies, total);
        const char *sep = ": ";
        for (int w = 0; w < AMP__WHY_COUNT; ++w)
            if (F.copies[d][w]) {
                char t[32];
                amp__bytes_text(t, sizeof t, F.bytes[d][w]);
                fprintf(o, "%s%s %" PRIu64 " B in %" PRIu64, sep, amp__copy_why_name(w), F.bytes[d][w], F.copies[d][w]);
                sep = ", ";
            }
        fputc('\n', o);
    }
    for (int d = 1; d <= 2; ++d) {
        char t[32];
        amp__bytes_text(t, sizeof t, F.avoided_bytes[d]);
        fprintf(o, "  %-16s %16" PRIu64 " %8" PRIu64 "  (%s not copied %s: discard_data / AMP_WRITE_ONLY)\n",
                d == AMP__H2D ? "avoided h->d" : "avoided d->h", F.avoided_bytes[d], F.avoided[d], t, amp__dir_long(d));
    }
    fprintf(o, "  builds %" PRIu64 ": %" PRIu64 " compiled, %" PRIu64 " memory-cache hits, %" PRIu64 " disk-cache hits, %" PRIu64
               " failed; %.3f ms\n",
            F.builds[0] + F.builds[1] + F.builds[2] + F.build_failed, F.builds[AMP__BUILD_COMPILED],
            F.builds[AMP__BUILD_MEMORY], F.builds[AMP__BUILD_DISK], F.build_failed, (double)F.build_ns / 1e6);
    fprintf(o, "  waits %" PRIu64 ": %.3f ms blocked\n", F.waits, (double)F.wait_ns / 1e6);
    if (F.dropped)
        fprintf(o, "  %" PRIu64 " events were not recorded (more than AMP_TRACE_MAX_EVENTS=%" PRIu64
                   " between flushes): call amp_trace_flush() more often or raise it\n",
                F.dropped, T.max_events);
    if (atomic_load_explicit(&amp__trace_flags, memory_order_relaxed) & AMP__TRACE_FILE)
        fprintf(o, "  trace: %s (%" PRIu64 " events)%s%s\n", F.path[0] ? F.path : amp__tpath, F.written,
                F.failed ? " — " : "", F.failed ? F.error : "");
}

static void amp__trace_at_exit(void)
{
    unsigned f = atomic_load_explicit(&amp__trace_flags, memory_order_relaxed);
    if (!(f & AMP__TRACE_RECORD) || getpid() != amp__tpid) return;
    pthread_mutex_lock(&amp__tflush);
    amp_status st = amp__flush_locked();
    if (f & AMP__TRACE_SUMMARY) {
        pthread_mutex_lock(&amp__tlock);
        amp__print_summary(stderr);
        pthread_mutex_unlock(&amp__tlock);
    }
    else if (st != AMP_OK) fprintf(stderr, "hipamp: %s\n", amp_last_error());
    for (uint32_t i = 0; i < F.nchains; ++i)
        if (F.chains[i].prev_t0) {
            F.chains[i].be->event_release(F.chains[i].dev, F.chains[i].prev_t0);
            F.chains[i].prev_t0 = NULL;
        }
    if (F.f) fclose(F.f);
    F.f = NULL;
    F.failed = true; /* nothing is written after this */
    snprintf(F.error, sizeof F.error, "AMP_TRACE=%.400s: the trace was closed at exit", F.path);
    pthread_mutex_unlock(&amp__tflush);
}

/* ------------------------------------------------------------- setup */

/* A forked child traces nothing: its parent's buffer and file are not its
 * own (and a lock may have been held at the fork). */
static void amp__trace_child(void) { atomic_store(&amp__trace_flags, 0); }

__attribute__((constructor)) static void amp__trace_init(void)
{
    unsigned f = 0;
    amp__tepoch = amp__now_ns();
    amp__tpid = getpid();
    const char *path = amp__env("AMP_TRACE");
    if (path && strlen(path) < sizeof amp__tpath) {
        snprintf(amp__tpath, sizeof amp__tpath, "%s", path);
        f |= AMP__TRACE_FILE;
    }
    if (amp__env_flag("AMP_TRACE_SUMMARY", false)) f |= AMP__TRACE_SUMMARY;
    T.max_events = amp__env_size("AMP_TRACE_MAX_EVENTS", AMP__TRACE_MAX_DEFAULT, 1, 1ULL << 40);
#if !HIPAMP_TRACE_HOOKS
    if (f) {
        amp__tno_hooks = true;
        fprintf(stderr, "hipamp: AMP_TRACE/AMP_TRACE_SUMMARY is set, but this library was built with "
                        "-DHIPAMP_TRACE=OFF: nothing is traced\n");
    }
    f = 0;
#else
    const char *v = amp__env("AMP_TRACE_VENDOR");
    bool vendor = v ? amp__env_flag("AMP_TRACE_VENDOR", false) : amp__vendor_wanted();
    if (vendor) f |= AMP__TRACE_VENDOR;
#endif
    if (f) pthread_atfork(NULL, NULL, amp__trace_child);
    atomic_store(&amp__trace_flags, f);
}
