/* storage.c — what arrays and array_views share: the elements, the device
 * buffer, and coherence between host and device (which boxes are current on
 * the device, which are newer there than on the host), so that only the bytes
 * a kernel or the host needs ever move. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int64_t amp__storage_offset(const amp__storage *s, const int *origin)
{
    int64_t off = 0;
    for (int d = 0; d < s->ext.rank; ++d) off += (int64_t)origin[d] * s->stride[d];
    return off;
}

size_t amp__storage_bytes(const amp__storage *s) { return (size_t)amp_extent_size(s->ext) * s->elem; }

/* ---------------------------------------------------------------- tracing */

#if HIPAMP_TRACE_HOOKS /* compiled out with the hooks */
/* bytes of b that did not have to move in direction dir (on q, NULL: none). */
static void amp__note_avoided(const amp__storage *s, amp_accelerator_view *q, const amp__box *b, amp__copy_dir dir,
                               uint64_t bytes)
{
    if (!bytes || !amp__trace_recording()) return;
    amp__trace_rec r = AMP__TRACE_REC(AMP__REC_AVOIDED);
    r.sub = (uint8_t)dir;
    r.why = AMP__WHY_DISCARD;
    r.bytes = bytes;
    amp__queue_describe(q, &r);
    amp__storage_describe(s, b, &r);
    amp__trace_instant(&r);
}

/* discard_data dropped the device-newer parts of b: their copy-back is
 * avoided. */
static void amp__note_discard(const amp__storage *s, const amp__box *b)
{
    uint64_t bytes = 0;
    for (int i = 0; i < s->ndirty; ++i) {
        amp__box cut;
        if (amp__box_intersect(&s->dirty[i], b, s->ext.rank, &cut))
            bytes += (uint64_t)amp__box_volume(&cut, s->ext.rank) * s->elem;
    }
    amp__note_avoided(s, s->last.q, b, AMP__D2H, bytes);
}

/* refresh makes device copies of b stale: that names the next copy-in. */
static void amp__note_refresh(amp__storage *s, const amp__box *b)
{
    for (int i = 0; i < s->nvalid; ++i) {
        amp__box cut;
        if (amp__box_intersect(&s->valid[i], b, s->ext.rank, &cut)) {
            s->stale_why = AMP__WHY_REFRESH;
            return;
        }
    }
}
#endif


/* ---------------------------------------------------------------- copies */

/* The queue for work on the device copy: the one that last used the
 * storage when it is on the copy's accelerator, else that one's default;
 * another where that one records a graph (amp__accelerator_queue_for). */
static amp_status amp__storage_queue(amp__storage *s, amp_accelerator_view **q)
{
    return amp__accelerator_queue_for(s->acc, s->last.q && s->last.q->acc == s->acc ? s->last.q : NULL, q);
}

/* Queue one driver copy on q after the storage's last use, which it then
 * becomes. */
static amp_status amp__copy_one(amp__storage *s, amp_accelerator_view *q, const amp__copy *c)
{
    amp__point done = {NULL, 0};
    amp_status st = amp__point_order(q, s->last);
    if (st == AMP_OK) st = amp__queue_copy(q, c, &done);
    if (st == AMP_OK) amp__point_set(&s->last, done);
    return st;
}

/* The driver copies of box b: rows of `width` bytes (trailing dimensions
 * the box covers whole merge into one row, so a whole array is one linear
 * copy and a 2-D section one pitched copy), height rows, depth slices, and
 * the leading dimensions looped. */
typedef struct amp__box_copies {
    amp__copy c;            /* dst/src are set per piece */
    int64_t base;           /* bytes from the storage's start to the box's first element */
    int nouter;
    int outer[AMP_MAX_RANK];
    int64_t outer_stride[AMP_MAX_RANK]; /* bytes */
    int64_t count;          /* driver copies */
} amp__box_copies;

static void amp__box_copies_make(const amp__storage *s, const amp__box *b, amp__box_copies *g)
{
    int R = s->ext.rank, d = R - 1;
    size_t elem = s->elem;
    int64_t width = b->hi[d] - b->lo[d];
    while (d > 0 && b->lo[d] == 0 && b->hi[d] == s->ext.v[d]) {
        --d;
        width *= b->hi[d] - b->lo[d];
    }
    /* dims [0, d) remain: d-1 is height, d-2 depth, the rest loop. */
    memset(g, 0, sizeof *g);
    g->c.width_bytes = (size_t)width * elem;
    g->c.height = d >= 1 ? (size_t)(b->hi[d - 1] - b->lo[d - 1]) : 1;
    g->c.depth = d >= 2 ? (size_t)(b->hi[d - 2] - b->lo[d - 2]) : 1;
    g->c.dst_pitch = g->c.src_pitch = d >= 1 ? (size_t)s->stride[d - 1] * elem : g->c.width_bytes;
    g->c.dst_slice_pitch = g->c.src_slice_pitch = d >= 2 ? (size_t)s->stride[d - 2] * elem : g->c.dst_pitch * g->c.height;
    g->nouter = d >= 3 ? d - 2 : 0;
    g->count = 1;
    for (int k = 0; k < g->nouter; ++k) {
        g->outer[k] = b->hi[k] - b->lo[k];
        g->outer_stride[k] = s->stride[k] * (int64_t)elem;
        g->count *= g->outer[k];
    }
    g->base = amp__storage_offset(s, b->lo) * (int64_t)elem;
}

/* Piece o of the copies between two bases with the storage's layout. */
static amp__copy amp__box_copy_at(const amp__box_copies *g, int64_t o, char *dst, const char *src, amp__copy_dir dir)
{
    amp__copy c = g->c;
    int64_t off = g->base + amp__odometer_offset(g->nouter, g->outer, g->outer_stride, o);
    c.dir = dir;
    c.dst = dst + off;
    c.src = src + off;
    return c;
}

/* Between two devices that cannot copy to each other: down into a packed
 * host buffer on the source's queue, then up on the destination's. */
static amp_status amp__box_stage(amp__storage *s, const amp__box_copies *g, amp_accelerator_view *from, char *src,
                                 amp_accelerator_view *to, char *dst)
{
    size_t piece = g->c.width_bytes * g->c.height * g->c.depth;
    char *buf = malloc(piece * (size_t)g->count + 1);
    if (!buf) return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "copy: no memory to stage %zu bytes", piece * (size_t)g->count);
    amp_status st = AMP_OK;
    for (int pass = 0; pass < 2 && st == AMP_OK; ++pass) {
        for (int64_t o = 0; o < g->count && st == AMP_OK; ++o) {
            amp__copy c = amp__box_copy_at(g, o, dst, src, pass ? AMP__H2D : AMP__D2H);
            /* The host side is packed: rows of width, slices of height rows. */
            char *packed = buf + piece * (size_t)o;
            if (pass == 0) {
                c.dst = packed;
                c.dst_pitch = c.width_bytes;
                c.dst_slice_pitch = c.width_bytes * c.height;
            } else {
                c.src = packed;
                c.src_pitch = c.width_bytes;
                c.src_slice_pitch = c.width_bytes * c.height;
            }
            st = amp__copy_one(s, pass ? to : from, &c);
        }
        if (st == AMP_OK && pass == 0) st = amp__point_wait(s->last);
    }
    if (st == AMP_OK) st = amp__point_wait(s->last); /* buf is freed below */
    free(buf);
    return st;
}

/* Queue the copy of box b between the data source and the device copy on
 * acc, into the device copy (in) or back home (!in); q is a queue on acc.
 * Who runs it depends on where home is: host memory (or the CPU
 * accelerator's) — q copies to and from it; an array on a GPU, with the
 * device copy in host-addressable memory — the array's own queue; an array
 * on a GPU, the copy on another GPU — a peer copy on the source's queue, or
 * staged through host memory. One box counts as one copy per queue that
 * moved it. why: for traces. */
static amp_status amp__copy_box(amp__storage *s, amp_accelerator_view *q, const amp__box *b, bool in,
                                amp__copy_why why)
{
    amp__box_copies g;
    amp__box_copies_make(s, b, &g);
    uint64_t bytes = (uint64_t)amp__box_volume(b, s->ext.rank) * s->elem;
    char *home = s->home, *dev = s->dptr;
    amp_status st = AMP_OK;
    amp_accelerator_view *runs = q;
    amp__copy_dir dir;
    if (amp__host_addressable(s->home_acc)) {
        dir = in ? AMP__H2D : AMP__D2H;
    } else if (amp__host_addressable(s->acc)) {
        runs = s->home_q; /* the array's GPU copies to and from host memory */
        dir = in ? AMP__D2H : AMP__H2D;
    } else {
        dir = AMP__D2D;
        runs = in ? s->home_q : q; /* the source's queue */
    }
    AMP__TRACE_SPAN(span);
    AMP__TRACE(amp__queue_span_begin(&span, runs, dir, bytes, why));
    char *to = in ? dev : home, *from = in ? home : dev;
    if (dir != AMP__D2D) {
        for (int64_t o = 0; o < g.count && st == AMP_OK; ++o) {
            amp__copy c = amp__box_copy_at(&g, o, to, from, dir);
            st = amp__copy_one(s, runs, &c);
        }
        if (st == AMP_OK) amp__queue_count_copy(runs, dir, bytes);
    } else {
        amp_accelerator_view *dst_q = in ? q : s->home_q;
        amp__point done = {NULL, 0};
        amp__copy c = amp__box_copy_at(&g, 0, to, from, dir);
        bool one_run = g.count == 1 && (c.height * c.depth == 1 || (c.src_pitch == c.width_bytes &&
                                        (c.depth == 1 || c.src_slice_pitch == c.width_bytes * c.height)));
        if (one_run && (st = amp__point_order(runs, s->last)) == AMP_OK &&
            amp__queue_copy_peer(runs, dst_q->acc, c.dst, c.src, (size_t)bytes, &done) == AMP_OK) {
            amp__point_set(&s->last, done);
            amp__queue_count_copy(runs, AMP__D2D, bytes);
            /* The copy runs on the source's queue; whatever the destination's
             * queue does next (a launch there, the array's own copies) reads
             * the data, so it waits for the copy on the device. The staged
             * path below waits on the host already. */
            st = amp__point_order(dst_q, done);
        } else if (st == AMP_OK && (st = amp__box_stage(s, &g, runs, from, dst_q, to)) == AMP_OK) {
            amp__queue_count_copy(runs, AMP__D2H, bytes);
            amp__queue_count_copy(dst_q, AMP__H2D, bytes);
        }
    }
    AMP__TRACE(amp__queue_span_end(&span, runs, s, b, st));
    return st;
}

amp_status amp__storage_refuse_host(const amp__storage *s, const char *what)
{
    if (!s->recordings) return AMP_OK;
    return amp__fail(AMP_ERROR_BUSY,
                     "%s: the data is used by a graph being recorded; what the graph computes exists only once it "
                     "is launched (end the recording and launch the graph first)",
                     what);
}

amp_status amp__storage_sync(amp__storage *s, const amp__box *b)
{
    amp_status st = amp__storage_sync_queue(s, b);
    return st == AMP_OK ? amp__point_wait(s->last) : st;
}

/* Queue the copies back home of the device-newer parts of b on q (a queue
 * on the device copy's accelerator). No refusal for a recording: callers
 * that give the host a result check that first. */
static amp_status amp__storage_sync_on(amp__storage *s, amp_accelerator_view *q, const amp__box *b)
{
    amp_status st = AMP_OK;
    int R = s->ext.rank;
    if (!s->direct && s->ndirty) {
        bool any = false;
        for (int i = 0; i < s->ndirty; ++i) {
            amp__box cut;
            if (!amp__box_intersect(&s->dirty[i], b, R, &cut)) continue;
            if ((st = amp__copy_box(s, q, &cut, false, AMP__WHY_SYNCHRONIZE)) != AMP_OK) return st;
            any = true;
        }
        if (any && !amp__boxes_subtract(s->dirty, &s->ndirty, b, R)) {
            /* No room to split: copy the rest back too; then nothing is dirty. */
            for (int i = 0; i < s->ndirty; ++i)
                if ((st = amp__copy_box(s, q, &s->dirty[i], false, AMP__WHY_SYNCHRONIZE)) != AMP_OK) return st;
            s->ndirty = 0;
        }
    }
    return AMP_OK;
}

amp_status amp__storage_sync_queue(amp__storage *s, const amp__box *b)
{
    amp_status st = amp__storage_refuse_host(s, "making the host current");
    amp_accelerator_view *q = NULL;
    if (st != AMP_OK || s->direct || !s->ndirty) return st;
    if ((st = amp__storage_queue(s, &q)) != AMP_OK) return st;
    return amp__storage_sync_on(s, q, b);
}

/* Copy back every device-newer part of the storage outside box b, then
 * forget all dirty boxes (storage lock held; blocks). For refresh and
 * discard when splitting the dirty list around b would overflow it: inside
 * b the host wins, outside it the device's results must not be lost. */
static amp_status amp__storage_flush_outside(amp__storage *s, const amp__box *b)
{
    amp_status st = AMP_OK;
    amp_accelerator_view *q = NULL;
    int R = s->ext.rank;
    if ((st = amp__storage_queue(s, &q)) != AMP_OK) return st;
    for (int i = 0; i < s->ndirty; ++i) {
        amp__box pieces[2 * AMP_MAX_RANK];
        int np = 1;
        pieces[0] = s->dirty[i];
        /* pieces = dirty[i] - b: at most 2R slabs, fits by construction. */
        if (!amp__boxes_subtract(pieces, &np, b, R)) np = 0;
        for (int k = 0; k < np; ++k)
            if ((st = amp__copy_box(s, q, &pieces[k], false, AMP__WHY_FLUSH)) != AMP_OK) return st;
    }
    s->ndirty = 0;
    return amp__point_wait(s->last);
}

/* ---------------------------------------------------------------- storage */

amp_status amp__extent_span_check(amp_extent e, size_t elem, const char *what)
{
    /* (PTRDIFF_MAX - 63): a size rounded up to whole 64-byte lines still
     * fits. */
    const uint64_t limit = ((uint64_t)PTRDIFF_MAX - 63) / elem;
    uint64_t span = 1;
    for (int d = 0; d < e.rank; ++d) {
        uint64_t x = e.v[d] > 0 ? (uint64_t)e.v[d] : 1;
        if (x > limit / span) {
            char dims[160] = "";
            for (int k = 0, n = 0; k < e.rank && n < (int)sizeof dims; ++k)
                n += snprintf(dims + n, sizeof dims - (size_t)n, k ? ",%d" : "%d", e.v[k]);
            return amp__fail(AMP_ERROR_INVALID_EXTENT,
                             "%s of extent {%s} and %zu-byte elements: its %s span more bytes than an address "
                             "space holds",
                             what, dims, elem, amp_extent_size(e) ? "elements" : "strides (dimensions of 0 counted as 1)");
        }
        span *= x;
    }
    return AMP_OK;
}

amp_status amp__storage_new(size_t elem, amp_extent e, void *host, bool is_array, amp__storage **out)
{
    amp_status st = amp_extent_validate(e);
    *out = NULL;
    if (st != AMP_OK) return st;
    if (elem == 0) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "element size is 0");
    if ((st = amp__extent_span_check(e, elem, "data")) != AMP_OK) return st;
    amp__storage *s = amp__calloc_lines(sizeof *s);
    if (!s) return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "view: out of host memory");
    amp__lock_init(&s->lock);
    s->refs = 1;
    s->elem = elem;
    s->ext = e;
    s->host = s->home = host;
    s->is_array = is_array;
    int64_t stride = 1;
    for (int d = e.rank - 1; d >= 0; --d) {
        s->stride[d] = stride;
        stride *= e.v[d];
        s->whole.hi[d] = e.v[d];
    }
    *out = s;
    return AMP_OK;
}

/* A lock a thread of the parent held at fork (its launch or copy) is never
 * released in the child, and what it guards may be half-written: waiting
 * would be for ever, so calls that can report a status refuse instead
 * (destroying a view or an array, and making a view of it, included: the
 * handle stays, or none is made). Paths that cannot fail (releases of a
 * last reference by other handles, retains, undoing a recording) still
 * block on such a lock: they have no way to say so, and leaving the
 * storage half-counted would be worse. */
amp_status amp__storage_lock(amp__storage *s, const char *call)
{
    if (amp__lock_acquire_or_forked(&s->lock)) return AMP_OK;
    return amp__fail(AMP_ERROR_DEVICE,
                     "%s: the data was in use by another thread (a launch or copy) when this process was forked; "
                     "that work stays the parent's, and in this process the data may be half-written and is never "
                     "released",
                     call);
}

/* Drop the device copy (storage lock held, home already current): the
 * data is then at home only (an array's on its accelerator, direct). */
static void amp__storage_drop_device(amp__storage *s)
{
    if (!s->acc || (s->home_acc && s->acc == s->home_acc)) return;
    const amp__backend *be = s->acc->e.be;
    (void)amp__point_wait(s->last);
    /* The point belongs to the old accelerator's queue: a launch elsewhere
     * must not order itself after it. */
    amp__point_set(&s->last, (amp__point){NULL, 0});
    if (s->registered && be->host_unregister) be->host_unregister(s->acc->e.dev, s->host);
    else if (s->dptr && !s->unified) be->mem_free(s->acc->e.dev, s->dptr);
    s->acc = s->home_acc;
    s->dptr = s->home_acc ? s->home : NULL;
    s->direct = s->home_acc != NULL;
    s->registered = s->unified = false;
    s->nvalid = s->ndirty = 0;
}

/* With graphs that use the device copy, its memory stays (their commands
 * hold its address; freeing it made every later replay BUSY for good):
 * only its contents stop counting, so the next launch or replay there
 * copies home's in again. */
amp_status amp__storage_go_home(amp__storage *s)
{
    amp_status st = AMP_OK;
    if (s->acc && !s->direct) {
        if ((st = amp__storage_sync(s, &s->whole)) != AMP_OK) return st;
        if (s->graphs) {
            if ((st = amp__point_wait(s->last)) != AMP_OK) return st;
            s->nvalid = s->ndirty = 0;
        } else {
            amp__storage_drop_device(s);
        }
    }
    return amp__point_wait(s->last);
}

amp_status amp__storage_release(amp__storage *s)
{
    amp__lock_acquire(&s->lock);
    bool last = --s->refs == 0;
    amp_status st = AMP_OK;
    if (last) {
        st = amp__point_wait(s->last);
        amp__storage_drop_device(s);
        amp__point_set(&s->last, (amp__point){NULL, 0});
        /* An array's own memory. */
        if (s->is_array && s->home_acc && s->home && !s->borrowed) s->home_acc->e.be->mem_free(s->home_acc->e.dev, s->home);
        if (s->is_array && !s->home_acc) {
            if (s->pinned_acc && s->pinned_acc->e.be->host_unregister)
                s->pinned_acc->e.be->host_unregister(s->pinned_acc->e.dev, s->home);
            free(s->home);
        }
    }
    amp__lock_release(&s->lock);
    if (last) {
        /* With no lock held: the queue may go with it (its destroy waits). */
        amp__queue_release(s->home_q);
        free(s);
    }
    return st;
}

/* Copy in the parts of b the device does not hold: b minus the valid
 * boxes, so a view whose ghost rows alone went stale moves those rows and
 * nothing else. Device-newer (dirty) data is always inside valid boxes, so
 * nothing is overwritten. When the pieces would overflow the list, the
 * whole of b goes, after its device-newer parts came back to the host
 * (same queue: in order). */
static amp_status amp__copy_in_missing(amp__storage *s, amp_accelerator_view *q, const amp__box *b)
{
    amp_status st;
    /* Why it moves, for the trace: stale after a refresh, else first use. */
    amp__copy_why why = s->stale_why ? (amp__copy_why)s->stale_why : AMP__WHY_FIRST_USE;
    AMP__TRACE(s->stale_why = AMP__WHY_NONE);
    int R = s->ext.rank, n = 1;
    amp__box pieces[AMP__MAX_BOXES];
    pieces[0] = *b;
    bool split = true;
    for (int i = 0; i < s->nvalid && split && n > 0; ++i) split = amp__boxes_subtract(pieces, &n, &s->valid[i], R);
    if (split) {
        for (int i = 0; i < n; ++i)
            if ((st = amp__copy_box(s, q, &pieces[i], true, why)) != AMP_OK) return st;
        return AMP_OK;
    }
    for (int i = 0; i < s->ndirty; ++i) {
        amp__box cut;
        if (amp__box_intersect(&s->dirty[i], b, R, &cut) &&
            (st = amp__copy_box(s, q, &cut, false, AMP__WHY_WRITE_BACK)) != AMP_OK)
            return st;
    }
    (void)amp__boxes_subtract(s->dirty, &s->ndirty, b, R);
    return amp__copy_box(s, q, b, true, why);
}

amp_status amp__storage_place(amp__storage *s, amp_accelerator_view *q)
{
    amp_status st = AMP_OK;
    amp_accelerator *acc = q->acc;
    const amp__backend *be = q->be;
    if (s->acc == acc) return AMP_OK;
    /* A graph refers to its device memory where it is (lib/core/graph.c). */
    if (s->acc && s->graphs && acc == s->home_acc)
        return amp__fail(AMP_ERROR_BUSY,
                         "the array's data is used by %d graph(s) on %s through a view of it, and its copy there "
                         "stays while they exist; a launch on %s, the array's own accelerator, would need it "
                         "back: launch on %s through a view of the array, or destroy the graphs first",
                         s->graphs, s->acc->e.info.device_path, acc->e.info.device_path, s->acc->e.info.device_path);
    if (s->acc && s->graphs)
        return amp__fail(AMP_ERROR_BUSY,
                         "the data is used by %d graph(s) on %s, where it stays while they exist; it cannot move to %s",
                         s->graphs, s->acc->e.info.device_path, acc->e.info.device_path);
    /* The data leaves where it is (not an array's home): home first, then
     * start over here. */
    if (s->acc && !(s->home_acc && s->acc == s->home_acc)) {
        if ((st = amp__storage_sync(s, &s->whole)) != AMP_OK) return st;
        amp__storage_drop_device(s);
    }
    /* Into a local first: an array still at home keeps its own address in
     * s->dptr until the new memory exists (a backend clears its out-value
     * when it fails). */
    size_t bytes = amp__storage_bytes(s);
    void *dptr = NULL;
    if (s->acc == acc) {
        /* Back at an array's home. */
        return AMP_OK;
    } else if (s->home_acc) {
        /* An array used on another accelerator: a device copy here. */
        if ((st = be->mem_alloc(q->dev, bytes, &dptr)) != AMP_OK) return st;
        s->direct = false;
    } else if (acc->e.info.is_unified_memory && be->host_register) {
        if ((st = be->host_register(q->dev, s->host, bytes, &dptr)) != AMP_OK) return st;
        s->unified = s->registered = s->direct = true;
    } else if ((st = be->mem_alloc(q->dev, bytes, &dptr)) != AMP_OK) {
        return st;
    }
    s->dptr = dptr;
    s->acc = acc;
    return AMP_OK;
}

void amp__storage_valid_only_dirty(amp__storage *s)
{
    memcpy(s->valid, s->dirty, sizeof(amp__box) * (size_t)s->ndirty);
    s->nvalid = s->ndirty;
}

/* Where the valid list is full, the dirty boxes and b: prepare keeps the
 * dirty list short enough for b to fit then. */
void amp__storage_add_valid(amp__storage *s, const amp__box *b)
{
    if (amp__boxes_add(s->valid, &s->nvalid, b, s->ext.rank)) return;
    amp__storage_valid_only_dirty(s);
    (void)amp__boxes_add(s->valid, &s->nvalid, b, s->ext.rank);
}

amp_status amp__storage_prepare(amp__storage *s, amp_accelerator_view *q, const amp__box *b, bool discard,
                                void **dptr)
{
    amp_status st = AMP_OK;
    if (amp__storage_ready(s, q, b)) {
        *dptr = s->dptr;
        return AMP_OK;
    }
    int R = s->ext.rank;
    if ((st = amp__storage_place(s, q)) != AMP_OK) return st;
    if ((st = amp__point_order(q, s->last)) != AMP_OK) return st;
    if (!s->direct) {
        /* One launch adds at most one box per parameter: keep that much
         * room so after_launch never drops a box. */
        if (s->ndirty > AMP__MAX_BOXES - AMP__SIG_MAX_PARAMS || s->nvalid >= AMP__MAX_BOXES) {
            /* Bookkeeping full: make the host current and forget the
             * device. Not a host access, so a recording that uses the data
             * does not refuse it: the recording holds only the device
             * address, and its replay prepares its boxes as this launch
             * does, copying in from the host what this reset brought back
             * (the same bytes). On q, which is in order after s->last
             * (above): the last user's queue may be recording. */
            if ((st = amp__storage_sync_on(s, q, &s->whole)) != AMP_OK || (st = amp__point_wait(s->last)) != AMP_OK)
                return st;
            s->nvalid = 0;
            AMP__TRACE(s->stale_why = AMP__WHY_RESET);
        }
        if (!amp__boxes_cover(s->valid, s->nvalid, b, R)) {
            if (!discard && (st = amp__copy_in_missing(s, q, b)) != AMP_OK) return st;
            if (discard)
                AMP__TRACE(amp__note_avoided(s, q, b, AMP__H2D, (uint64_t)amp__box_volume(b, R) * s->elem));
            amp__storage_add_valid(s, b);
        }
    }
    *dptr = s->dptr;
    return AMP_OK;
}

void amp__storage_after_replay(amp__storage *s, amp__point done, const amp__box *b, bool writes)
{
    /* Room: lib/core/graph.c uses at most 16 boxes of a storage, and prepare
     * left room for 32 each time. */
    if (!s->direct && !amp__boxes_cover(s->valid, s->nvalid, b, s->ext.rank)) amp__storage_add_valid(s, b);
    amp__storage_after_launch(s, done, b, writes);
}

amp_status amp__storage_refresh(amp__storage *s, const amp__box *b)
{
    s->writes++;
    if (s->direct && s->home_acc) return AMP_OK; /* an array at home: nothing else holds it */
    AMP__TRACE(amp__note_refresh(s, b));
    /* Host wins: device copies of b are stale, and nothing there is newer.
     * Dirty first: where the valid list cannot be cut, what stays valid is
     * what is still dirty outside b. */
    amp_status st = AMP_OK;
    bool valid_cut = amp__boxes_subtract(s->valid, &s->nvalid, b, s->ext.rank);
    if (!amp__boxes_subtract(s->dirty, &s->ndirty, b, s->ext.rank)) st = amp__storage_flush_outside(s, b);
    if (!valid_cut) amp__storage_valid_only_dirty(s);
    return st;
}

amp_status amp__storage_discard(amp__storage *s, const amp__box *b)
{
    if (s->direct && s->home_acc) return AMP_OK;
    AMP__TRACE(amp__note_discard(s, b));
    if (!amp__boxes_subtract(s->dirty, &s->ndirty, b, s->ext.rank)) return amp__storage_flush_outside(s, b);
    return AMP_OK;
}

/* The bytes [lo, hi) of its data source a part spans, in *space (NULL:
 * memory the host addresses); false where it spans none. */
static bool amp__part_bytes(const amp__part *p, const amp_accelerator **space, uintptr_t *lo, uintptr_t *hi)
{
    if (!p->s->home) return false;
    int64_t last = 0;
    for (int d = 0; d < p->rank; ++d) {
        if (p->ext[d] <= 0) return false;
        last += (int64_t)(p->ext[d] - 1) * p->stride[d];
    }
    *space = amp__host_addressable(p->s->home_acc) ? NULL : p->s->home_acc;
    *lo = (uintptr_t)p->s->home + (uintptr_t)p->offset;
    *hi = *lo + (uintptr_t)last * p->elem + p->elem;
    return true;
}

static bool amp__storages_alike(const amp__storage *a, const amp__storage *b)
{
    if (a->home != b->home || a->elem != b->elem || a->ext.rank != b->ext.rank) return false;
    for (int d = 0; d < a->ext.rank; ++d)
        if (a->ext.v[d] != b->ext.v[d] || a->stride[d] != b->stride[d]) return false;
    return true;
}

bool amp__parts_share_memory(const amp__part *a, const amp__part *b)
{
    const amp_accelerator *sa, *sb;
    uintptr_t alo, ahi, blo, bhi;
    amp__box cut;
    if (!amp__part_bytes(a, &sa, &alo, &ahi) || !amp__part_bytes(b, &sb, &blo, &bhi)) return false;
    if (sa != sb || ahi <= blo || bhi <= alo) return false;
    if (amp__storages_alike(a->s, b->s)) return amp__box_intersect(a->box, b->box, a->s->ext.rank, &cut);
    return true;
}
