/* halo.c — hipamp::mpi's halo exchanges of array_view sections: begin (checks every halo and every view before it touches any, cuts large faces into chunks by element count, makes the data ready, queues the staging copies, posts the receives and each send whose staging copy already landed), test and end (post each send once its data is ready, wait for the messages with the time-out, copy each staged receive up as it arrives, check their sizes, copy received data back), in the order the exchanges began; the NCCL path's exchanges as one NCCL group on the queue; the blocking exchange is a begin and an end; the all-reduce (NCCL on the device, else MPI through the host). */
#include "exchange_state.h"
#include "nccl_abi.h"

#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void amp_mpi__deliver_arrived(amp_mpi_exchange *x, amp_mpi__flight *f, const char *fn);

/* Records kept free beyond this many are waited for instead of added to. */
#define AMP_MPI__SPARE_FLIGHTS 4

static double amp_mpi__now(void) { return MPI_Wtime(); }

/* The elements of a full chunk of a face (AMP_MPI_CHUNK_BYTES set): at
 * least one. */
static int64_t amp_mpi__chunk_per(const amp_mpi_exchange *x)
{
    uint64_t per = x->chunk_bytes / x->elem;
    return per ? (int64_t)per : 1;
}

/* --------------------------------------------------------------- sides */

/* True when the view's elements are one contiguous run. */
static bool amp_mpi__contiguous(const amp_mpi__side *s)
{
    int64_t expect = 1;
    for (int d = s->ext.rank - 1; d >= 0; --d) {
        if (s->ext.v[d] > 1 && s->strides[d] != expect) return false;
        expect *= s->ext.v[d];
    }
    return true;
}

/* The view's element size must be the one this exchanger moves. */
static amp_status amp_mpi__check_elem(amp_mpi_exchange *x, amp_array_view *v, const char *what)
{
    size_t got = 0;
    amp_status st = amp_array_view_get_element_size(v, &got);
    if (st != AMP_OK) return amp_mpi__hipamp(st, what);
    if (got != x->elem)
        return amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT,
                             "%s: the view has %zu-byte elements; this exchanger moves %zu-byte elements", what, got,
                             x->elem);
    return AMP_OK;
}

/* Whether v is AMP_READ_ONLY (a destroyed view is caught by the checks
 * before). */
static bool amp_mpi__read_only(amp_array_view *v)
{
    amp_access a = AMP_READ_WRITE;
    return amp_array_view_get_access(v, &a) == AMP_OK && a == AMP_READ_ONLY;
}

/* A box of a view: origin and extent per dimension. */
typedef struct amp_mpi__box {
    int64_t origin[AMP_MAX_RANK];
    int ext[AMP_MAX_RANK];
} amp_mpi__box;

/* Elements lo..hi-1 (row-major) of a view of extent e as boxes of it, in
 * order: at most 2 * rank - 1 (whole blocks of ever larger, then ever
 * smaller dimensions). Returns how many. */
static int amp_mpi__boxes(const amp_extent *e, int64_t lo, int64_t hi, amp_mpi__box *out)
{
    const int r = e->rank;
    int64_t block[AMP_MAX_RANK + 1]; /* block[d]: the elements of one index of dimension d - 1 */
    int nb = 0;
    block[r] = 1;
    for (int d = r - 1; d >= 0; --d) block[d] = block[d + 1] * e->v[d];
    for (int64_t a = lo; a < hi;) {
        /* The largest block that starts at a and ends by hi (one element
         * always does), and as many of them as fit in the block around. */
        int L = 0;
        while (a % block[L] || a + block[L] > hi) ++L;
        int64_t count = 1;
        amp_mpi__box *b = &out[nb++];
        for (int d = 0; d < r; ++d) {
            b->origin[d] = d < L ? (a / block[d + 1]) % e->v[d] : 0;
            b->ext[d] = d < L ? 1 : e->v[d];
        }
        if (L > 0) {
            int64_t room = (block[L - 1] - a % block[L - 1]) / block[L];
            count = (hi - a) / block[L];
            if (count > room) count = room;
            b->ext[L - 1] = (int)count;
        }
        a += count * block[L];
    }
    return nb;
}

/* An MPI datatype for one box of a strided view, at the box's first
 * element: nested byte vectors, the last dimension contiguous. */
static int amp_mpi__box_type(const amp_mpi__box *b, int r, const int64_t *strides, size_t elem, MPI_Datatype *out)
{
    MPI_Datatype t = MPI_DATATYPE_NULL;
    int rc = MPI_Type_contiguous((int)((size_t)b->ext[r - 1] * elem), MPI_BYTE, &t);
    if (rc != MPI_SUCCESS) return rc;
    for (int d = r - 2; d >= 0; --d) {
        MPI_Datatype outer = MPI_DATATYPE_NULL;
        rc = MPI_Type_create_hvector(b->ext[d], 1, (MPI_Aint)(strides[d] * (int64_t)elem), t, &outer);
        MPI_Type_free(&t);
        if (rc != MPI_SUCCESS) return rc;
        t = outer;
    }
    *out = t;
    return MPI_SUCCESS;
}

/* What MPI reads or writes for the side, s->addr the address of v's first
 * element (of its face's staging buffer's, staged) on entry: bytes from
 * its first element moved (staged, or a contiguous view), or a committed
 * datatype of its elements lo..hi-1 of a strided view at v's own address
 * (one box: nested vectors; a chunk that is several: a struct of them). */
static amp_status amp_mpi__datatype(amp_mpi_exchange *x, amp_mpi__side *s, const char *what)
{
    int rc = MPI_SUCCESS;
    /* (The empty last chunk of a face whose count is a multiple of the
     * chunk's is an empty message.) */
    if (s->how == AMP_MPI__STAGE || s->hi == s->lo || amp_mpi__contiguous(s)) {
        s->addr = (char *)s->addr + (size_t)s->lo * x->elem;
        s->type = MPI_BYTE;
        s->count = (int)s->bytes;
        return AMP_OK;
    }
    const int r = s->ext.rank;
    amp_mpi__box boxes[2 * AMP_MAX_RANK];
    MPI_Datatype types[2 * AMP_MAX_RANK];
    MPI_Aint disp[2 * AMP_MAX_RANK];
    int lens[2 * AMP_MAX_RANK], nb = amp_mpi__boxes(&s->ext, s->lo, s->hi, boxes), made = 0;
    for (; made < nb && rc == MPI_SUCCESS; ++made) {
        int64_t first = 0;
        for (int d = 0; d < r; ++d) first += boxes[made].origin[d] * s->strides[d];
        disp[made] = (MPI_Aint)(first * (int64_t)x->elem);
        lens[made] = 1;
        if ((rc = amp_mpi__box_type(&boxes[made], r, s->strides, x->elem, &types[made])) != MPI_SUCCESS) break;
    }
    MPI_Datatype t = MPI_DATATYPE_NULL;
    if (rc == MPI_SUCCESS && nb == 1) {
        s->addr = (char *)s->addr + disp[0];
        t = types[0];
        made = 0; /* kept, not freed below */
    } else if (rc == MPI_SUCCESS) {
        rc = MPI_Type_create_struct(nb, lens, disp, types, &t);
    }
    for (int k = 0; k < made; ++k) MPI_Type_free(&types[k]);
    if (rc == MPI_SUCCESS && (rc = MPI_Type_commit(&t)) != MPI_SUCCESS) MPI_Type_free(&t);
    if (rc != MPI_SUCCESS) return amp_mpi__mpi(rc, what);
    s->type = t;
    s->count = 1;
    return AMP_OK;
}

static amp_status amp_mpi__stage_release(amp_mpi__stage *s)
{
    amp_status st = amp_array_view_destroy(s->view);
    if (s->lent) {
        /* MPI may still read it: neither the array nor the buffer is freed. */
    } else if (s->arr) {
        amp_status a = amp_array_destroy(s->arr);
        if (st == AMP_OK) st = a;
    } else {
        free(s->host);
    }
    memset(s, 0, sizeof *s);
    return st;
}

/* A staging slot with extent ext, made or remade when the extent changed
 * (so a plan's buffers are allocated once and reused): on the device
 * (device: the NCCL path's pack of a strided view) a contiguous array of
 * the exchanger's queue; else host memory MPI works on, a staging array
 * pinned for the queue's GPU (the pipeline) or a malloc'ed buffer. */
static amp_status amp_mpi__stage_get(amp_mpi_exchange *x, amp_mpi__stage *s, amp_extent ext, uint64_t bytes,
                                     bool device, const char *what)
{
    if (s->view && amp_extent_equal(s->ext, ext) && (s->host == NULL) == device) return AMP_OK;
    amp_status st = amp_mpi__stage_release(s);
    if (st != AMP_OK) return amp_mpi__hipamp(st, what);
    s->bytes = bytes;
    s->ext = ext;
    if (device || x->pipeline) {
        st = device ? amp_array_create(x->q, x->elem, ext, NULL, &s->arr)
                    : amp_array_create_staging(x->q, x->elem, ext, NULL, &s->arr);
        if (st == AMP_OK) st = amp_array_view_of_array(s->arr, &s->view);
        if (st == AMP_OK && !device && !(s->host = amp_array_data(s->arr))) st = AMP_ERROR_DEVICE;
        if (st != AMP_OK) {
            amp_array_view_destroy(s->view);
            amp_array_destroy(s->arr);
            memset(s, 0, sizeof *s);
            return amp_mpi__hipamp(st, what);
        }
        return AMP_OK;
    }
    if (!(s->host = malloc(bytes ? bytes : 1)))
        return amp_mpi__fail(AMP_ERROR_OUT_OF_MEMORY, "%s: no memory for a %llu-byte staging buffer", what,
                             (unsigned long long)bytes);
    if ((st = amp_array_view_create(s->host, x->elem, ext, AMP_READ_WRITE, &s->view)) != AMP_OK) {
        free(s->host);
        memset(s, 0, sizeof *s);
        return amp_mpi__hipamp(st, what);
    }
    return AMP_OK;
}

/* "{2, 0, 5}" */
static void amp_mpi__extent_text(char *buf, size_t n, amp_extent e)
{
    size_t at = (size_t)snprintf(buf, n, "{");
    for (int d = 0; d < e.rank && at < n; ++d) at += (size_t)snprintf(buf + at, n - at, "%s%d", d ? ", " : "", e.v[d]);
    if (at < n) snprintf(buf + at, n - at, "}");
}

/* Begin's first step for one side, which touches nothing: what it moves
 * (its extent, strides and byte count; the elements of its chunk, or all
 * of them) and how (the path's rule for its kind of view). Every side
 * passes this before any view is touched, so a refused exchange leaves
 * every view as it was. */
static amp_status amp_mpi__plan(amp_mpi_exchange *x, amp_mpi__side *s, const char *what)
{
    amp_status st;
    if ((st = amp_array_view_get_extent(s->v, &s->ext)) != AMP_OK ||
        (st = amp_array_view_get_strides(s->v, s->strides)) != AMP_OK)
        return amp_mpi__hipamp(st, what);
    int64_t n = amp_extent_size(s->ext);
    if (n <= 0) {
        char ext[128];
        amp_mpi__extent_text(ext, sizeof ext, s->ext);
        return amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT,
                             "%s: the view is empty (extent %s, no elements); a halo's view moves at least one "
                             "element: give NULL for a side that moves nothing (its peer's matching side too), or "
                             "MPI_PROC_NULL as the peer",
                             what, ext);
    }
    s->n = n;
    s->base = amp_array_view_data(s->v);
    if (!s->chunks) s->lo = 0, s->hi = n;
    int64_t count = s->hi - s->lo;
    /* The NCCL path moves every face whole (AMP_MPI_CHUNK_BYTES does not
     * cut faces there): its hint must not send the caller to chunks. */
    if ((uint64_t)count > (uint64_t)INT32_MAX / x->elem && x->path.path == AMP_MPI_PATH_NCCL)
        return amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT,
                             "%s: %lld elements of %zu bytes do not fit one message of the NCCL path (at most %d "
                             "bytes; AMP_MPI_CHUNK_BYTES does not cut faces on this path: split the face into "
                             "several halos of their own tags)",
                             what, (long long)count, x->elem, INT32_MAX);
    if ((uint64_t)count > (uint64_t)INT32_MAX / x->elem)
        return amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT,
                             "%s: %lld elements of %zu bytes do not fit one MPI message (at most %d bytes; "
                             "AMP_MPI_CHUNK_BYTES sends a face as messages of at most that many)",
                             what, (long long)count, x->elem, INT32_MAX);
    s->bytes = (uint64_t)count * x->elem;
    const amp_mpi_path path = x->path.path;
    if (path == AMP_MPI_PATH_NCCL) {
        /* Device addresses on q; a strided view through a contiguous device
         * pack (copied in before the group, out after it, both on q). */
        s->how = amp_mpi__contiguous(s) ? AMP_MPI__POINTER : AMP_MPI__STAGE;
        return AMP_OK;
    }
    if (amp_array_view_data(s->v) && path != AMP_MPI_PATH_DEVICE) {
        s->how = AMP_MPI__IN_PLACE;
    } else if (path == AMP_MPI_PATH_DEVICE || (path == AMP_MPI_PATH_HOST && x->host_memory)) {
        s->how = AMP_MPI__POINTER;
    } else if (path == AMP_MPI_PATH_HOST) {
        return amp_mpi__fail(AMP_ERROR_UNSUPPORTED,
                             "%s: a view of an array in GPU memory cannot be exchanged in place (host path); use the "
                             "staged or device path, or a view of host memory",
                             what);
    } else {
        s->how = AMP_MPI__STAGE;
        /* A contiguous view's copies run on the copy stream, each chunk's
         * its own. */
        s->aside = x->aside && amp_mpi__contiguous(s);
    }
    return AMP_OK;
}

/* Begin's second step for side k (0 send, 1 receive) of entry i, once every
 * side passed amp_mpi__plan: its data made ready where MPI reads or writes
 * it, its staging buffer and datatype made. Nothing here loses a view's
 * data should a later side fail: a send is only read (synchronized, handed
 * over for reading, copied to its staging buffer: the copy's future is
 * left in copies[2i]: the send is posted once it finished), and a receive
 * handed over by device address is handed over for reading and writing,
 * which keeps its contents (a receive in place drops its stale device data
 * in the third step). Device addresses set *wait_q: the queue is waited
 * for before anything is posted. A chunk of a face (amp_mpi__expand) moves
 * its range of the view: at the view's own address, or in its face's
 * staging buffer, which its chunk 0 holds (made first: entries are made
 * ready in order) and copies whole, unless the copies are the copy
 * stream's, one per chunk. */
static amp_status amp_mpi__ready(amp_mpi_exchange *x, amp_mpi__flight *f, size_t i, int k, bool *wait_q,
                                 const char *what)
{
    amp_status st = AMP_OK;
    amp_mpi__side *s = &f->sides[2 * i + (size_t)k];
    const bool is_send = k == 0, lead = s->chunk == 0;
    amp_mpi__stage *stage = is_send ? &f->send_stage[i - s->chunk] : &f->recv_stage[i - s->chunk];
    amp_future **copy = &f->copies[2 * i + (size_t)k];
    const amp_access access = is_send ? AMP_READ_ONLY : AMP_READ_WRITE;
    if (x->path.path == AMP_MPI_PATH_NCCL) {
        s->type = MPI_BYTE;
        s->count = (int)s->bytes;
        if (s->how == AMP_MPI__POINTER) {
            if ((st = amp_array_view_native_handle(s->v, x->q, access, &s->addr)) != AMP_OK)
                return amp_mpi__hipamp(st, what);
            if (!s->base) s->base = s->addr;
            return AMP_OK;
        }
        if ((st = amp_mpi__stage_get(x, stage, s->ext, s->bytes, true, what)) != AMP_OK) return st;
        if (is_send && (st = amp_copy_view_async(s->v, stage->view, copy)) != AMP_OK)
            return amp_mpi__hipamp(st == AMP_ERROR_ARGUMENT_MISMATCH ? AMP_ERROR_INVALID_ARGUMENT : st, what);
        if ((st = amp_array_view_native_handle(stage->view, x->q, is_send ? AMP_READ_ONLY : AMP_WRITE_ONLY,
                                               &s->addr)) != AMP_OK)
            return amp_mpi__hipamp(st, what);
        return AMP_OK;
    }
    switch (s->how) {
    case AMP_MPI__IN_PLACE:
        if (is_send && lead && (st = amp_array_view_synchronize(s->v)) != AMP_OK) return amp_mpi__hipamp(st, what);
        s->addr = amp_array_view_data(s->v);
        break;
    case AMP_MPI__POINTER:
        if ((st = amp_array_view_native_handle(s->v, x->q, access, &s->addr)) != AMP_OK)
            return amp_mpi__hipamp(st, what);
        if (!s->base) s->base = s->addr;
        *wait_q = true;
        break;
    default:
        if (lead && (st = amp_mpi__stage_get(x, stage, s->ext, (uint64_t)s->n * x->elem, false, what)) != AMP_OK)
            return st;
        s->addr = stage->host;
        if (s->aside) {
            /* On the copy stream: the device address of its elements now (a
             * receive's box is left newer on the device, its later users
             * on q wait for the copy up); begin queues the copies down
             * once every side is ready. */
            void *dev = NULL;
            if ((st = amp_array_view_native_handle(s->v, x->q, access, &dev)) != AMP_OK)
                return amp_mpi__hipamp(st, what);
            if (!s->base) s->base = dev;
            s->dev = (char *)dev + (size_t)s->lo * x->elem;
        } else if (is_send && lead && (st = amp_copy_view_async(s->v, stage->view, copy)) != AMP_OK) {
            /* The staging view's element size is the exchanger's: the copy
             * itself refuses a view of another (AMP_ERROR_ARGUMENT_MISMATCH). */
            return amp_mpi__hipamp(st == AMP_ERROR_ARGUMENT_MISMATCH ? AMP_ERROR_INVALID_ARGUMENT : st, what);
        }
    }
    return amp_mpi__datatype(x, s, what);
}

/* Begin's third step, for a receive in place, after every side is ready:
 * it overwrites the view's elements, so their device-newer data is dropped
 * rather than copied back; then whatever still uses them is waited for. */
static amp_status amp_mpi__settle(amp_mpi__side *r, const char *what)
{
    amp_status st;
    if ((st = amp_array_view_discard_data(r->v)) != AMP_OK || (st = amp_array_view_synchronize(r->v)) != AMP_OK)
        return amp_mpi__hipamp(st, what);
    return AMP_OK;
}

static void amp_mpi__side_free(amp_mpi__side *s)
{
    if (s->type != MPI_BYTE && s->type != MPI_DATATYPE_NULL) MPI_Type_free(&s->type);
    s->type = MPI_DATATYPE_NULL;
}

/* ", chunk j of k" for a chunk of a face, else "". */
static void amp_mpi__chunk_text(char *buf, size_t n, const amp_mpi__side *s)
{
    buf[0] = '\0';
    if (s->chunks > 1) snprintf(buf, n, ", chunk %u of %u", (unsigned)s->chunk + 1, (unsigned)s->chunks);
}

/* What "halo i send to rank p (tag t, chunk j of k)" reads in messages. */
static void amp_mpi__name(char *buf, size_t n, const char *fn, const amp_mpi__flight *f, size_t side)
{
    const amp_mpi_halo *h = &f->halos[side / 2];
    size_t i = side / 2;
    char chunk[48];
    amp_mpi__chunk_text(chunk, sizeof chunk, &f->sides[side]);
    snprintf(buf, n, "%s: exchange #%llu, halo %zu %s rank %d (tag %d%s)", fn, (unsigned long long)f->id, f->orig[i],
             side & 1 ? "receive from" : "send to", h->peer, side & 1 ? h->recv_tag : h->send_tag, chunk);
}

/* ------------------------------------------------------------- records */

/* Waits for a record's copies (hipamp's and the copy stream's) and forgets
 * them, and its mark (the first failure is returned, after all were waited
 * for). */
static amp_status amp_mpi__copies_drain(amp_mpi_exchange *x, amp_mpi__flight *f)
{
    amp_status st = AMP_OK;
    for (size_t i = 0; i < 2 * f->cap; ++i) {
        if (f->copies[i]) {
            amp_status c = amp_future_wait(f->copies[i]);
            amp_future_destroy(f->copies[i]);
            f->copies[i] = NULL;
            if (st == AMP_OK && c != AMP_OK) st = amp_mpi__hipamp(c, "a copy of a staged halo");
        }
        if (f->aside_ev && f->aside_ev[i]) {
            amp_status c = amp_mpi__aside_wait(x->aside, f->aside_ev[i]);
            amp_mpi__aside_event_free(x->aside, f->aside_ev[i]);
            f->aside_ev[i] = NULL;
            if (st == AMP_OK) st = c;
        }
    }
    amp_mpi__aside_event_free(x->aside, f->mark);
    f->mark = NULL;
    return st;
}

/* True when none of the record's copies is still running. */
static bool amp_mpi__copies_done(amp_mpi_exchange *x, amp_mpi__flight *f)
{
    for (size_t i = 0; i < 2 * f->cap; ++i) {
        bool done = true;
        if (f->copies[i] && (amp_future_is_ready(f->copies[i], &done) != AMP_OK || !done)) return false;
        if (f->aside_ev && f->aside_ev[i] && (amp_mpi__aside_query(x->aside, f->aside_ev[i], &done) != AMP_OK || !done))
            return false;
    }
    return true;
}

static void amp_mpi__flight_free(amp_mpi__flight *f)
{
    free(f->orig);
    free(f->halos);
    free(f->sides);
    free(f->send_stage);
    free(f->recv_stage);
    free(f->copies);
    free(f->aside_ev);
    free(f->reqs);
    free(f->statuses);
    free(f);
}

/* Room for n halos (a free record; what it holds stays). */
static amp_status amp_mpi__flight_grow(amp_mpi__flight *f, size_t n)
{
    if (n <= f->cap) return AMP_OK;
#define AMP_MPI__GROW(field, per_halo)                                                                         \
    do {                                                                                                       \
        void *p_ = realloc(f->field, n * (per_halo) * sizeof *f->field);                                       \
        if (!p_) return amp_mpi__fail(AMP_ERROR_OUT_OF_MEMORY, "amp_mpi_exchange_begin: no memory for %zu halos", n); \
        f->field = p_;                                                                                         \
        memset(f->field + f->cap * (per_halo), 0, (n - f->cap) * (per_halo) * sizeof *f->field);             \
    } while (0)
    AMP_MPI__GROW(halos, 1);
    AMP_MPI__GROW(sides, 2);
    AMP_MPI__GROW(send_stage, 1);
    AMP_MPI__GROW(recv_stage, 1);
    AMP_MPI__GROW(copies, 2);
    AMP_MPI__GROW(aside_ev, 2);
    AMP_MPI__GROW(reqs, 2);
    AMP_MPI__GROW(statuses, 2);
    AMP_MPI__GROW(orig, 1);
#undef AMP_MPI__GROW
    f->cap = n;
    return AMP_OK;
}

/* A free record for an exchange of count halos: one whose copies back have
 * finished, else a new one while few are kept, else the first kept one
 * once its copies finished. */
static amp_status amp_mpi__flight_take(amp_mpi_exchange *x, size_t count, amp_mpi__flight **out)
{
    amp_status st;
    amp_mpi__flight *f = NULL;
    size_t spare = 0;
    for (size_t i = 0; i < x->nflights && !f; ++i) {
        if (x->flights[i]->id) continue;
        spare++;
        if (amp_mpi__copies_done(x, x->flights[i])) f = x->flights[i];
    }
    if (!f && spare >= AMP_MPI__SPARE_FLIGHTS)
        for (size_t i = 0; i < x->nflights && !f; ++i)
            if (!x->flights[i]->id) f = x->flights[i];
    if (!f) {
        amp_mpi__flight **grown = realloc(x->flights, (x->nflights + 1) * sizeof *grown);
        if (!grown) return amp_mpi__fail(AMP_ERROR_OUT_OF_MEMORY, "amp_mpi_exchange_begin: no memory");
        x->flights = grown;
        if (!(f = calloc(1, sizeof *f))) return amp_mpi__fail(AMP_ERROR_OUT_OF_MEMORY, "amp_mpi_exchange_begin: no memory");
        x->flights[x->nflights++] = f;
    }
    if ((st = amp_mpi__copies_drain(x, f)) != AMP_OK) return st;
    if ((st = amp_mpi__flight_grow(f, count)) != AMP_OK) return st;
    f->count = count;
    f->complete = false;
    f->strays = false;
    f->seconds = 0;
    for (size_t i = 0; i < 2 * count; ++i) {
        f->sides[i] = (amp_mpi__side){.type = MPI_DATATYPE_NULL};
        f->reqs[i] = MPI_REQUEST_NULL;
    }
    *out = f;
    return AMP_OK;
}

/* The record no longer carries an exchange (its staging buffers and copies
 * back stay). */
static void amp_mpi__flight_release(amp_mpi__flight *f)
{
    for (size_t i = 0; i < 2 * f->count; ++i) amp_mpi__side_free(&f->sides[i]);
    f->id = 0;
}

amp_status amp_mpi__flights_free(amp_mpi_exchange *x)
{
    amp_status st = AMP_OK;
    for (size_t k = 0; k < x->nflights; ++k) {
        amp_mpi__flight *f = x->flights[k];
        amp_status c = amp_mpi__copies_drain(x, f);
        if (st == AMP_OK && c != AMP_OK) st = c;
        for (size_t i = 0; i < f->cap; ++i) {
            amp_status a = amp_mpi__stage_release(&f->send_stage[i]);
            amp_status b = amp_mpi__stage_release(&f->recv_stage[i]);
            if (st == AMP_OK && a != AMP_OK) st = amp_mpi__hipamp(a, "amp_mpi_exchange_destroy: a staging view");
            if (st == AMP_OK && b != AMP_OK) st = amp_mpi__hipamp(b, "amp_mpi_exchange_destroy: a staging view");
        }
        amp_mpi__flight_release(f);
        amp_mpi__flight_free(f);
    }
    free(x->flights);
    x->flights = NULL;
    x->nflights = 0;
    return st;
}

/* The record of exchange id, in flight. */
static amp_mpi__flight *amp_mpi__flight_of(amp_mpi_exchange *x, uint64_t id)
{
    for (size_t i = 0; i < x->nflights; ++i)
        if (x->flights[i]->id == id) return x->flights[i];
    return NULL;
}

/* ------------------------------------------------------- giving up */

/* The requests of an exchange that will not complete normally (a
 * time-out, a failed post or copy). Receives are cancelled and waited for,
 * so their buffers are free again. A send cannot be withdrawn once MPI has
 * it (MPI 4 deprecates cancelling sends; Open MPI ignores it): an unfinished
 * one's request is freed, and MPI may still read its buffer, so a staging
 * buffer under it is never freed. */
static void amp_mpi__abandon_flight(amp_mpi_exchange *x, amp_mpi__flight *f)
{
    for (size_t i = 0; i < 2 * f->count; ++i) {
        amp_mpi__side *sd = &f->sides[i];
        if (!sd->posted || f->reqs[i] == MPI_REQUEST_NULL) continue;
        MPI_Status ignored;
        int done = 0;
        if (i & 1) {
            MPI_Cancel(&f->reqs[i]);
            MPI_Wait(&f->reqs[i], &ignored);
        } else if (MPI_Test(&f->reqs[i], &done, &ignored) != MPI_SUCCESS || !done) {
            MPI_Request_free(&f->reqs[i]);
            if (sd->how == AMP_MPI__STAGE) f->send_stage[i / 2 - sd->chunk].lent = true; /* its face's */
        }
    }
    /* Sends still waiting for their staging copy were never posted; the
     * copy still reads the caller's view until it finished. */
    for (size_t i = 0; i < 2 * f->count; i += 2) {
        if (f->copies[i]) {
            amp_future_wait(f->copies[i]);
            amp_future_destroy(f->copies[i]);
            f->copies[i] = NULL;
        }
        if (f->aside_ev[i]) {
            (void)amp_mpi__aside_wait(x->aside, f->aside_ev[i]);
            amp_mpi__aside_event_free(x->aside, f->aside_ev[i]);
            f->aside_ev[i] = NULL;
        }
    }
    amp_mpi__flight_release(f);
}

/* Every exchange in flight is abandoned, and the exchanger is broken from
 * then on (why says why): a late message would match a later exchange's
 * receive. Returns st. */
static amp_status amp_mpi__break(amp_mpi_exchange *x, amp_status st, const char *why)
{
    for (size_t i = 0; i < x->nflights; ++i)
        if (x->flights[i]->id) amp_mpi__abandon_flight(x, x->flights[i]);
    x->oldest = x->next_id;
    snprintf(x->broken, sizeof x->broken, "%s", why);
    return st;
}

static amp_status amp_mpi__refuse_if_broken(const amp_mpi_exchange *x, const char *fn)
{
    if (!x->broken[0]) return AMP_OK;
    return amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT,
                         "%s: an earlier exchange of this exchanger was abandoned, so its messages are undefined; "
                         "destroy it (it said: %s)",
                         fn, x->broken);
}

/* ------------------------------------------------------------ progress */

/* Post every send whose data is ready, in the order the exchanges began
 * and, within one, in halo order: a send is never posted before an earlier
 * one, so messages between two ranks with the same tag match in order.
 * Stops at the first send whose staging copy is still running, unless
 * that send belongs to exchange wait_for, whose copies are then waited for
 * (0: never wait). A failed copy or post breaks the exchanger. */
static amp_status amp_mpi__progress(amp_mpi_exchange *x, uint64_t wait_for, const char *fn)
{
    for (uint64_t id = x->oldest; id < x->next_id; ++id) {
        amp_mpi__flight *f = amp_mpi__flight_of(x, id);
        if (!f) continue;
        for (size_t i = 0; i < 2 * f->count; i += 2) {
            amp_mpi__side *sd = &f->sides[i];
            if (!sd->v || sd->posted) continue;
            if (f->copies[i]) {
                bool done = false;
                amp_status st = amp_future_is_ready(f->copies[i], &done);
                if (st == AMP_OK && !done && id != wait_for) return AMP_OK;
                if (st == AMP_OK) st = amp_future_wait(f->copies[i]);
                amp_future_destroy(f->copies[i]);
                f->copies[i] = NULL;
                if (st != AMP_OK) {
                    char what[192];
                    amp_mpi__name(what, sizeof what, fn, f, i);
                    char msg[AMP_MPI__ERR_SIZE];
                    snprintf(msg, sizeof msg, "%s: its copy to the staging buffer failed: %s (%s)", what,
                             amp_last_error(), amp_status_name(st));
                    amp_mpi__fail(st, "%s", msg);
                    return amp_mpi__break(x, st, msg);
                }
            } else if (f->aside_ev[i]) {
                bool done = false;
                amp_status st = amp_mpi__aside_query(x->aside, f->aside_ev[i], &done);
                if (st == AMP_OK && !done && id != wait_for) return AMP_OK;
                if (st == AMP_OK && !done) st = amp_mpi__aside_wait(x->aside, f->aside_ev[i]);
                amp_mpi__aside_event_free(x->aside, f->aside_ev[i]);
                f->aside_ev[i] = NULL;
                if (st != AMP_OK) {
                    char what[192], msg[AMP_MPI__ERR_SIZE];
                    amp_mpi__name(what, sizeof what, fn, f, i);
                    snprintf(msg, sizeof msg, "%s: its copy to the staging buffer failed: %s", what,
                             amp_mpi_last_error());
                    amp_mpi__fail(st, "%s", msg);
                    return amp_mpi__break(x, st, msg);
                }
            }
            const amp_mpi_halo *h = &f->halos[i / 2];
            int rc = MPI_Isend(sd->addr, sd->count, sd->type, h->peer, h->send_tag, x->comm, &f->reqs[i]);
            if (rc != MPI_SUCCESS) {
                char what[192];
                amp_mpi__name(what, sizeof what, fn, f, i);
                amp_status st = amp_mpi__mpi(rc, what);
                char msg[AMP_MPI__ERR_SIZE];
                snprintf(msg, sizeof msg, "%s", amp_mpi_last_error());
                return amp_mpi__break(x, st, msg);
            }
            sd->posted = true;
        }
    }
    return AMP_OK;
}

/* How long an exchange still waits for a peer whose leaving notice arrived:
 * MPI orders only messages that match the same receive, so the data the
 * peer sent before its notice may still be on its way. */
#define AMP_MPI__LEFT_GRACE 0.1

/* Why amp_mpi__wait stopped before every request finished. */
typedef enum amp_mpi__stop { AMP_MPI__FINISHED, AMP_MPI__LATE, AMP_MPI__LEFT_PEER } amp_mpi__stop;

/* The request of side i is posted and has not finished. */
static bool amp_mpi__open(const amp_mpi__flight *f, size_t i)
{
    int done = 0;
    MPI_Status stt;
    return f->sides[i].posted && f->reqs[i] != MPI_REQUEST_NULL &&
           !(MPI_Request_get_status(f->reqs[i], &done, &stt) == MPI_SUCCESS && done);
}

/* A request of the exchange is still open with a peer that left. */
static bool amp_mpi__waits_for_the_gone(const amp_mpi_exchange *x, const amp_mpi__flight *f)
{
    for (size_t i = 0; i < 2 * f->count; ++i)
        if (f->sides[i].posted && (x->peer[f->halos[i / 2].peer] & AMP_MPI__LEFT) && amp_mpi__open(f, i))
            return true;
    return false;
}

/* A face received in chunks whose chunk before the last got fewer bytes
 * than it holds got the peer's last message of the face (the only one of
 * fewer than a chunk's elements): its later chunks' receives would meet no
 * message of this exchange, only the peer's next one, so they are
 * cancelled now, and their wait ends (amp_mpi__arrivals reports the face).
 * Never blocks. */
static void amp_mpi__cut_short(const amp_mpi_exchange *x, amp_mpi__flight *f)
{
    if (!x->chunk_bytes) return;
    for (size_t i = 0; i < f->count; ++i) {
        const amp_mpi__side *r = &f->sides[2 * i + 1];
        int done = 0, got = -1;
        MPI_Status stt;
        if (!r->posted || r->cut || r->chunk + 1 >= r->chunks || f->reqs[2 * i + 1] == MPI_REQUEST_NULL ||
            MPI_Request_get_status(f->reqs[2 * i + 1], &done, &stt) != MPI_SUCCESS || !done ||
            MPI_Get_count(&stt, MPI_BYTE, &got) != MPI_SUCCESS || got < 0 || (uint64_t)got >= r->bytes)
            continue;
        for (size_t j = i + 1; j < i + (r->chunks - r->chunk); ++j) {
            amp_mpi__side *later = &f->sides[2 * j + 1];
            if (!later->posted || later->cut || f->reqs[2 * j + 1] == MPI_REQUEST_NULL) continue;
            MPI_Cancel(&f->reqs[2 * j + 1]);
            later->cut = true;
        }
    }
}

/* A receive that ends a face (its last chunk, or the whole face) and got a
 * full chunk's message, more than it holds: the peer's face has more
 * chunks, which no receive of this exchange matches. They are taken as they
 * come (matched probes, each received whole and dropped), up to the peer's
 * last message of the face, the one of fewer bytes than a chunk, and their
 * bytes counted in drained, so that none is left to meet a later receive;
 * done while the exchange waits, since the peer's exchange may wait for
 * them before its own drain takes this rank's. When that cannot be done
 * (the length of the message is not known, another receive posted for the
 * same peer and tag would take them) f->strays is set. all: every request
 * finished (rc what MPI_Testall returned, the statuses filled). Never
 * blocks; returns whether a face is still being drained. */
static bool amp_mpi__drains(amp_mpi_exchange *x, amp_mpi__flight *f, bool all, int rc)
{
    if (!x->chunk_bytes) return false;
    const uint64_t full = (uint64_t)amp_mpi__chunk_per(x) * x->elem;
    bool more = false;
    for (size_t i = 0; i < f->count; ++i) {
        amp_mpi__side *r = &f->sides[2 * i + 1];
        const amp_mpi_halo *h = &f->halos[i];
        if (!r->posted || r->cut || r->hi != r->n || r->settled) continue;
        if (!r->draining) {
            MPI_Status own;
            const MPI_Status *stt = &f->statuses[2 * i + 1];
            int done = 1, got = -1, cls = MPI_SUCCESS;
            if (!all) {
                stt = &own;
                if (f->reqs[2 * i + 1] == MPI_REQUEST_NULL ||
                    MPI_Request_get_status(f->reqs[2 * i + 1], &done, &own) != MPI_SUCCESS || !done)
                    continue;
            } else if (rc == MPI_ERR_IN_STATUS && stt->MPI_ERROR != MPI_SUCCESS) {
                MPI_Error_class(stt->MPI_ERROR, &cls);
            }
            if (MPI_Get_count(stt, MPI_BYTE, &got) != MPI_SUCCESS || got == MPI_UNDEFINED) got = -1;
            r->settled = true;
            if (got >= 0 && (uint64_t)got <= r->bytes) {
                /* Not truncated; truncated to a length MPI does not tell:
                 * the end of the peer's face is not known. */
                if (cls == MPI_ERR_TRUNCATE) f->strays = true;
                continue;
            }
            if (got < 0) {
                f->strays = true;
                continue;
            }
            if ((uint64_t)got < full) continue; /* the peer's last message of the face */
            bool shared = f->id + 1 < x->next_id; /* a later exchange's receives are posted */
            for (size_t j = i + 1; j < f->count && !shared; ++j)
                shared = f->sides[2 * j + 1].posted && f->sides[2 * j + 1].chunk == 0 &&
                         f->halos[j].peer == h->peer && f->halos[j].recv_tag == h->recv_tag;
            if (shared) {
                f->strays = true;
                continue;
            }
            r->settled = false;
            r->draining = true;
        }
        while (r->draining) {
            int found = 0, len = -1;
            MPI_Message msg = MPI_MESSAGE_NULL;
            MPI_Status pst;
            if (MPI_Improbe(h->peer, h->recv_tag, x->comm, &found, &msg, &pst) != MPI_SUCCESS) {
                f->strays = true;
                r->draining = false;
                break;
            }
            if (!found) break;
            /* Received whole, into a buffer of its length: Open MPI's
             * MPI_Mrecv writes a message past a shorter buffer. */
            void *sink = NULL;
            if (MPI_Get_count(&pst, MPI_BYTE, &len) != MPI_SUCCESS || len == MPI_UNDEFINED ||
                !(sink = malloc(len > 0 ? (size_t)len : 1)) ||
                MPI_Mrecv(sink, len, MPI_BYTE, &msg, MPI_STATUS_IGNORE) != MPI_SUCCESS)
                len = -1;
            free(sink);
            if (len < 0) f->strays = true;
            else r->drained += (uint64_t)len;
            if (len < 0 || (uint64_t)len < full) r->draining = false;
        }
        r->settled = !r->draining;
        more |= r->draining;
    }
    return more;
}

/* A face being drained waits for a peer that left. */
static bool amp_mpi__drains_the_gone(const amp_mpi_exchange *x, const amp_mpi__flight *f)
{
    for (size_t i = 0; i < f->count; ++i)
        if (f->sides[2 * i + 1].draining && (x->peer[f->halos[i].peer] & AMP_MPI__LEFT)) return true;
    return false;
}

/* The drains given up (a peer that left, the time-out): what they did not
 * take is left over. */
static void amp_mpi__drains_stop(amp_mpi__flight *f)
{
    for (size_t i = 0; i < f->count; ++i)
        if (f->sides[2 * i + 1].draining) {
            f->sides[2 * i + 1].draining = false;
            f->sides[2 * i + 1].settled = true;
            f->strays = true;
        }
}

/* The exchange's requests, all of them finished: MPI_Testall until they
 * finished, the time-out passed (AMP_MPI__LATE) or a peer they wait for
 * left (its notice arrived, AMP_MPI__LEFT_PEER). Polls as MPI_Waitall
 * does, yielding the processor between polls once the first ones found
 * nothing, for ranks that share one. */
static int amp_mpi__wait(amp_mpi_exchange *x, amp_mpi__flight *f, amp_mpi__stop *stop)
{
    int n = (int)(2 * f->count), all = f->complete, rc = f->complete ? f->complete_rc : MPI_SUCCESS;
    *stop = AMP_MPI__FINISHED;
    const double deadline = x->timeout_ms ? amp_mpi__now() + x->timeout_ms * 1e-3 : 0;
    double left_at = 0;
    bool left = false;
    for (unsigned polls = 0;; ++polls) {
        if (!all && (rc = MPI_Testall(n, f->reqs, &all, f->statuses)) != MPI_SUCCESS && !all) return rc;
        /* (Every request finished, but a face may still be drained.) */
        const bool draining = amp_mpi__drains(x, f, all, rc);
        if (all && !draining) return rc;
        if (!all) amp_mpi__cut_short(x, f);
        if (!all && x->pipeline) amp_mpi__deliver_arrived(x, f, "amp_mpi_exchange_end");
        amp_mpi__notices_poll(x);
        if (x->gone && ((!all && amp_mpi__waits_for_the_gone(x, f)) || amp_mpi__drains_the_gone(x, f))) {
            double now = amp_mpi__now();
            if (!left) left_at = now, left = true;
            if (now - left_at >= AMP_MPI__LEFT_GRACE) {
                if (all) {
                    amp_mpi__drains_stop(f);
                    return rc;
                }
                *stop = AMP_MPI__LEFT_PEER;
                return MPI_SUCCESS;
            }
        }
        if (deadline && amp_mpi__now() >= deadline) {
            if (all) {
                amp_mpi__drains_stop(f);
                return rc;
            }
            *stop = AMP_MPI__LATE;
            return MPI_SUCCESS;
        }
        if (polls >= 64) sched_yield();
    }
}

/* The peers (each once, with why they left when they did) and the halos of
 * the exchange still pending, of peers that left only when gone_only. */
static void amp_mpi__pending(const amp_mpi_exchange *x, const amp_mpi__flight *f, bool gone_only, char *peers,
                             size_t peers_size, char *pending, size_t pending_size)
{
    size_t np = 0, nd = 0;
    int listed[16], nlisted = 0;
    peers[0] = pending[0] = '\0';
    for (size_t i = 0; i < 2 * f->count; ++i) {
        const amp_mpi_halo *h = &f->halos[i / 2];
        if (!amp_mpi__open(f, i)) continue; /* posted ones only: their peer is a rank */
        unsigned left = x->peer[h->peer] & AMP_MPI__LEFT;
        if (gone_only && !left) continue;
        bool seen = false;
        for (int k = 0; k < nlisted; ++k) seen |= listed[k] == h->peer;
        if (!seen && nlisted < 16 && np < peers_size) {
            listed[nlisted++] = h->peer;
            np += (size_t)snprintf(peers + np, peers_size - np, "%srank %d%s", nlisted > 1 ? ", " : "", h->peer,
                                   !gone_only ? ""
                                   : left & AMP_MPI__LEFT_FINALIZED
                                       ? " (it called MPI_Finalize)"
                                       : " (it destroyed its exchanger)");
        }
        char chunk[48];
        amp_mpi__chunk_text(chunk, sizeof chunk, &f->sides[i]);
        if (nd < pending_size)
            nd += (size_t)snprintf(pending + nd, pending_size - nd, "%shalo %zu %s rank %d (tag %d%s)",
                                   nd ? "; " : "", f->orig[i / 2], i & 1 ? "receive from" : "send to", h->peer,
                                   i & 1 ? h->recv_tag : h->send_tag, chunk);
    }
}

/* AMP_ERROR_TIMEOUT naming every peer that did not answer, and the halos
 * still pending. */
static amp_status amp_mpi__late(const amp_mpi_exchange *x, amp_mpi__flight *f, const char *fn)
{
    char peers[256], pending[512];
    amp_mpi__pending(x, f, false, peers, sizeof peers, pending, sizeof pending);
    return amp_mpi__fail(AMP_ERROR_TIMEOUT,
                         "%s: exchange #%llu: no answer from %s within %u ms (still pending: %s); the exchange was "
                         "abandoned (its receives cancelled; the data of its sends may still be read by MPI), and this "
                         "exchanger refuses further exchanges: destroy it",
                         fn, (unsigned long long)f->id, peers, (unsigned)x->timeout_ms, pending);
}

/* AMP_ERROR_TIMEOUT, without waiting for the time-out: naming every peer
 * that left while the exchange waited for it, how it left, and the halos
 * still pending with them. */
static amp_status amp_mpi__left(const amp_mpi_exchange *x, amp_mpi__flight *f, const char *fn)
{
    char peers[512], pending[512];
    amp_mpi__pending(x, f, true, peers, sizeof peers, pending, sizeof pending);
    return amp_mpi__fail(AMP_ERROR_TIMEOUT,
                         "%s: exchange #%llu: %s left without taking part in it, so no answer will come (still "
                         "pending: %s); the exchange was abandoned (its receives cancelled; the data of its sends may "
                         "still be read by MPI), and this exchanger refuses further exchanges: destroy it",
                         fn, (unsigned long long)f->id, peers, pending);
}

/* After the wait returned rc: every receive got exactly the bytes its view
 * holds, and no request failed. The exchanger's communicator returns
 * errors, so a message longer than its receive view is MPI_ERR_TRUNCATE in
 * that request's status instead of the end of the job. A face received in
 * chunks is judged whole, by the bytes of all the messages of the peer's
 * face it got (with those amp_mpi__drains took); f->strays is set where a
 * receive cut short (amp_mpi__cut_short) took a message after all, one of
 * a later exchange. */
static amp_status amp_mpi__arrivals(const amp_mpi_exchange *x, amp_mpi__flight *f, int rc, const char *fn,
                                    bool *mpi_failed)
{
    if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) {
        char what[192];
        snprintf(what, sizeof what, "%s: exchange #%llu: MPI_Testall of its messages", fn, (unsigned long long)f->id);
        *mpi_failed = true;
        return amp_mpi__mpi(rc, what);
    }
    const uint64_t elem = x->elem;
    for (size_t i = 0; i < f->count; ++i) {
        const amp_mpi_halo *h = &f->halos[i];
        for (int k = 1; k >= 0; --k) {
            const amp_mpi__side *sd = &f->sides[2 * i + (size_t)k];
            if (!sd->posted || (k == 1 && sd->chunk > 0)) continue; /* a face's chunks: with its first */
            const uint32_t parts = k == 1 && sd->chunks ? sd->chunks : 1;
            uint64_t sent = 0, holds = k == 1 && sd->chunks ? (uint64_t)sd->n * elem : sd->bytes;
            bool bad = false, unknown = false, truncated = false;
            char what[192];
            amp_mpi__name(what, sizeof what, fn, f, 2 * i + (size_t)k);
            if (parts > 1)
                snprintf(what, sizeof what, "%s: exchange #%llu, halo %zu receive from rank %d (tag %d, a face in %u "
                         "chunks)", fn, (unsigned long long)f->id, f->orig[i], h->peer, h->recv_tag, (unsigned)parts);
            for (uint32_t j = 0; j < parts; ++j) {
                const size_t side = 2 * (i + j) + (size_t)k;
                const amp_mpi__side *c = &f->sides[side];
                MPI_Status *stt = &f->statuses[side];
                int err = rc == MPI_ERR_IN_STATUS ? stt->MPI_ERROR : MPI_SUCCESS, cls = MPI_SUCCESS;
                if (err != MPI_SUCCESS) MPI_Error_class(err, &cls);
                if (k == 0 || (cls != MPI_SUCCESS && cls != MPI_ERR_TRUNCATE)) {
                    if (err != MPI_SUCCESS) {
                        *mpi_failed = true;
                        return amp_mpi__mpi(err, what);
                    }
                    continue;
                }
                if (c->cut) {
                    /* Cancelled; one that was not took a later exchange's message. */
                    int cancelled = 0;
                    if (MPI_Test_cancelled(stt, &cancelled) != MPI_SUCCESS || !cancelled) f->strays = true;
                    bad = true;
                    continue;
                }
                /* The byte count MPI saw arrive (on truncation Open MPI and
                 * MPICH report the message's own length). */
                int got = -1;
                if (MPI_Get_count(stt, MPI_BYTE, &got) != MPI_SUCCESS || got == MPI_UNDEFINED || got < 0 ||
                    (cls == MPI_ERR_TRUNCATE && (uint64_t)got <= c->bytes)) {
                    /* (Truncated to the view's bytes: the length sent is not
                     * known, nor, for chunks, where the peer's face ended.) */
                    unknown = true;
                    if (x->chunk_bytes && cls == MPI_ERR_TRUNCATE) f->strays = true;
                } else {
                    sent += (uint64_t)got;
                }
                truncated |= cls == MPI_ERR_TRUNCATE;
                bad |= cls == MPI_ERR_TRUNCATE || (uint64_t)got != c->bytes;
                if (j + 1 == parts) sent += c->drained;
            }
            if (k == 0 || !bad) continue;
            if (unknown)
                return amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT,
                                     "%s: rank %d sent %s than the %llu bytes (%llu elements of %llu bytes) this "
                                     "receive view holds%s; the peer's send view and this receive view must hold the "
                                     "same number of elements",
                                     what, h->peer, truncated ? "more" : "another number of bytes",
                                     (unsigned long long)holds, (unsigned long long)(holds / elem),
                                     (unsigned long long)elem, truncated ? " (MPI_ERR_TRUNCATE)" : "");
            /* (A drain that could not finish took only some of the peer's face.) */
            return amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT,
                                 "%s: rank %d sent %s%llu bytes (%llu elements of %llu bytes), this receive view holds "
                                 "%llu bytes (%llu elements)%s; the peer's send view and this receive view must "
                                 "hold the same number of elements",
                                 what, h->peer, truncated && f->strays ? "at least " : "", (unsigned long long)sent,
                                 (unsigned long long)(sent / elem),
                                 (unsigned long long)elem, (unsigned long long)holds,
                                 (unsigned long long)(holds / elem), truncated ? " (MPI_ERR_TRUNCATE)" : "");
        }
    }
    return AMP_OK;
}

/* Halo i's received face up from its staging buffer on the copy stream,
 * after what the queue held when the exchange began, and the queue's work
 * from now on after it. */
static amp_status amp_mpi__copy_up_aside(amp_mpi_exchange *x, amp_mpi__flight *f, size_t i)
{
    amp_mpi__side *r = &f->sides[2 * i + 1];
    void **ev = &f->aside_ev[2 * i + 1];
    amp_status st = amp_mpi__aside_copy(x->aside, r->dev, r->addr, (size_t)r->bytes, true, f->mark, ev);
    if (st == AMP_OK && amp_mpi__aside_order(x->aside, *ev) != AMP_OK) {
        /* The queue cannot wait for the copy on the device: the host waits
         * for it instead, so that nothing queued from now on runs before
         * it (the work queued already does not read the receive view). */
        st = amp_mpi__aside_wait(x->aside, *ev);
    }
    return st;
}

/* Received data where the accelerator reads it next: a host view's device
 * copies are marked stale; a staging buffer is copied to its view, queued
 * (its future stays with the record until the record is taken again). A
 * face received in chunks is refreshed, or copied up from its staging
 * buffer, once, by its last chunk (all of them arrived by now), unless
 * its chunks are copied up one by one on the copy stream. */
static amp_status amp_mpi__deliver(amp_mpi_exchange *x, amp_mpi__flight *f, const char *fn)
{
    amp_status st;
    for (size_t i = 0; i < f->count; ++i) {
        amp_mpi__side *r = &f->sides[2 * i + 1];
        if (!r->posted) continue;
        const bool face_done = r->hi == r->n;
        char what[192];
        amp_mpi__name(what, sizeof what, fn, f, 2 * i + 1);
        if (r->how == AMP_MPI__IN_PLACE) {
            if (face_done && (st = amp_array_view_refresh(r->v)) != AMP_OK) return amp_mpi__hipamp(st, what);
        } else if (r->how == AMP_MPI__STAGE && !r->delivered && r->aside) {
            if ((st = amp_mpi__copy_up_aside(x, f, i)) != AMP_OK) {
                char msg[AMP_MPI__ERR_SIZE];
                snprintf(msg, sizeof msg, "%s", amp_mpi_last_error());
                return amp_mpi__fail(st, "%s: %s", what, msg);
            }
        } else if (r->how == AMP_MPI__STAGE && !r->delivered && face_done) {
            amp_mpi__stage *sg = &f->recv_stage[i - r->chunk];
            if ((st = amp_array_view_refresh(sg->view)) != AMP_OK ||
                (st = amp_copy_view_async(sg->view, r->v, &f->copies[2 * i + 1])) != AMP_OK)
                return amp_mpi__hipamp(st == AMP_ERROR_ARGUMENT_MISMATCH ? AMP_ERROR_INVALID_ARGUMENT : st, what);
        }
    }
    return AMP_OK;
}

/* Receive side k of the record has arrived whole: its request done, no
 * error, exactly its bytes. Never blocks. */
static bool amp_mpi__arrived(const amp_mpi__flight *f, size_t k)
{
    int done = 0, got = -1;
    MPI_Status stt;
    if (!f->sides[k].posted || f->reqs[k] == MPI_REQUEST_NULL) return false;
    if (MPI_Request_get_status(f->reqs[k], &done, &stt) != MPI_SUCCESS || !done) return false;
    return MPI_Get_count(&stt, MPI_BYTE, &got) == MPI_SUCCESS && got >= 0 && (uint64_t)got == f->sides[k].bytes;
}

/* The pipeline: each staged receive that has arrived whole gets its copy
 * up queued now, while the others are still on their way (a face copied
 * up whole: once all its chunks arrived); amp_mpi__deliver does the rest
 * (and the arrival checks judge the ones left). A failure here is left for
 * the end to find: the receive is then delivered there. Never blocks. */
static void amp_mpi__deliver_arrived(amp_mpi_exchange *x, amp_mpi__flight *f, const char *fn)
{
    (void)fn;
    for (size_t i = 0; i < f->count; ++i) {
        amp_mpi__side *r = &f->sides[2 * i + 1];
        if (r->delivered || r->how != AMP_MPI__STAGE || !amp_mpi__arrived(f, 2 * i + 1)) continue;
        if (r->aside) {
            /* Once queued, a copy is never queued again (a failure to
             * order it was waited out, or is the device's, which the
             * queue's next wait reports). */
            if (amp_mpi__copy_up_aside(x, f, i) == AMP_OK || f->aside_ev[2 * i + 1]) r->delivered = true;
            continue;
        }
        if (r->hi != r->n) continue; /* its face's last chunk copies it up */
        bool all = true;
        for (size_t j = i - r->chunk; j < i && all; ++j) all = amp_mpi__arrived(f, 2 * j + 1);
        amp_mpi__stage *sg = &f->recv_stage[i - r->chunk];
        if (!all || amp_array_view_refresh(sg->view) != AMP_OK ||
            amp_copy_view_async(sg->view, r->v, &f->copies[2 * i + 1]) != AMP_OK)
            continue;
        r->delivered = true;
    }
}

/* ------------------------------------------------------------- the API */

static amp_status amp_mpi__check_halos(amp_mpi_exchange *x, const amp_mpi_halo *halos, size_t count, const char *fn)
{
    amp_status st;
    for (size_t i = 0; i < count; ++i) {
        const amp_mpi_halo *h = &halos[i];
        if (h->peer == MPI_PROC_NULL) continue;
        if (h->peer < 0 || h->peer >= x->size)
            return amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: halo %zu: peer %d is not a rank of the %d in comm", fn,
                                 i, h->peer, x->size);
        if ((h->send && h->send_tag < 0) || (h->recv && h->recv_tag < 0))
            return amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: halo %zu: tag %d is negative", fn, i,
                                 h->send && h->send_tag < 0 ? h->send_tag : h->recv_tag);
        /* A tag past MPI_TAG_UB fails MPI_Isend or MPI_Irecv, which would
         * break the exchanger with half of the exchange posted: refused
         * here, before anything is. */
        if ((h->send && h->send_tag > x->notice_tag) || (h->recv && h->recv_tag > x->notice_tag))
            return amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT,
                                 "%s: halo %zu: tag %d is above this MPI's MPI_TAG_UB (%d): a halo's tags are 0 to "
                                 "%d",
                                 fn, i, h->send && h->send_tag > x->notice_tag ? h->send_tag : h->recv_tag,
                                 x->notice_tag, x->notice_tag - 1);
        if ((h->send && h->send_tag == x->notice_tag) || (h->recv && h->recv_tag == x->notice_tag))
            return amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT,
                                 "%s: halo %zu: tag %d is MPI_TAG_UB, which the exchanger keeps for its peers' "
                                 "leaving notices",
                                 fn, i, x->notice_tag);
        char what[96];
        snprintf(what, sizeof what, "%s: halo %zu send to rank %d", fn, i, h->peer);
        if (h->send && (st = amp_mpi__check_elem(x, h->send, what)) != AMP_OK) return st;
        snprintf(what, sizeof what, "%s: halo %zu receive from rank %d", fn, i, h->peer);
        if (h->recv && (st = amp_mpi__check_elem(x, h->recv, what)) != AMP_OK) return st;
        /* Every path writes a receive view (in place, by its device
         * address, or by a copy from a staging buffer): a read-only one is
         * refused here, alike on all of them, before any view is touched. */
        if (h->recv && amp_mpi__read_only(h->recv))
            return amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT,
                                 "%s (tag %d): the receive view is AMP_READ_ONLY, and the exchange would write "
                                 "into it; give a view that may be written (not one from amp_array_view_read_only)",
                                 what, h->recv_tag);
    }
    return AMP_OK;
}

/* ------------------------------------------------------------ overlaps */

/* The elements a hyper-row from dimension d on spans: 1 + the offset of
 * its last element from its first. */
static int64_t amp_mpi__span(const amp_extent *e, const int64_t *s, int d)
{
    int64_t span = 1;
    for (int m = d; m < e->rank; ++m) span += (int64_t)(e->v[m] - 1) * s[m];
    return span;
}

/* Two views of one element size and rank whose strides agree (where both
 * extents exceed 1; the other dimensions' strides do not matter): whether
 * some element of a, whose first element is delta elements after b's, is
 * one of b's, from dimension d on. Row i of a meets row i - k of b only
 * where the rows' spans reach each other, which leaves a few k per
 * dimension whatever the extents; the rows below are the same for every i,
 * so each k is one question one dimension down. Exact, in 3^rank steps at
 * most. */
static bool amp_mpi__rows_meet(const amp_extent *ea, const int64_t *sa, const amp_extent *eb, const int64_t *sb,
                               int d, int64_t delta)
{
    if (d == ea->rank) return delta == 0;
    const int na = ea->v[d], nb = eb->v[d];
    const int64_t s = na > 1 ? sa[d] : sb[d];
    if (na == 1 && nb == 1) return amp_mpi__rows_meet(ea, sa, eb, sb, d + 1, delta);
    const int64_t span_a = amp_mpi__span(ea, sa, d + 1), span_b = amp_mpi__span(eb, sb, d + 1);
    /* k with -span_a < delta + k * s < span_b (s > 0: checked by the caller). */
    int64_t k0 = (-span_a - delta) / s - 1, k1 = (span_b - delta) / s + 1;
    for (int64_t k = k0; k <= k1; ++k) {
        const int64_t t = delta + k * s;
        if (t <= -span_a || t >= span_b) continue;
        /* Rows i of a and i - k of b: 0 <= i < na, 0 <= i - k < nb. */
        int64_t lo = k > 0 ? k : 0, hi = (int64_t)nb + k < na ? (int64_t)nb + k : na;
        if (lo < hi && amp_mpi__rows_meet(ea, sa, eb, sb, d + 1, t)) return true;
    }
    return false;
}

/* A strided view's runs of its last dimension, in the order of its
 * elements (and of their addresses: every dimension's rows lie past the
 * previous one's, as hipamp's views' do). */
typedef struct amp_mpi__runs {
    uintptr_t first;
    const amp_extent *e;
    const int64_t *s;
    size_t elem;
    int idx[AMP_MAX_RANK];
    bool done;
    uintptr_t lo, hi; /* the current run's bytes */
} amp_mpi__runs;

static void amp_mpi__runs_at(amp_mpi__runs *r)
{
    const int last = r->e->rank - 1;
    int64_t off = 0;
    for (int d = 0; d < last; ++d) off += (int64_t)r->idx[d] * r->s[d];
    r->lo = r->first + (uintptr_t)(off * (int64_t)r->elem);
    r->hi = r->lo + (uintptr_t)((r->s[last] == 1 ? (int64_t)r->e->v[last] : 1) * (int64_t)r->elem);
}

static void amp_mpi__runs_next(amp_mpi__runs *r)
{
    const int last = r->e->rank - 1;
    if (r->s[last] != 1 && ++r->idx[last] < r->e->v[last]) {
        r->lo += (uintptr_t)(r->s[last] * (int64_t)r->elem);
        r->hi = r->lo + r->elem;
        return;
    }
    if (r->s[last] != 1) r->idx[last] = 0;
    int d = last - 1;
    while (d >= 0 && ++r->idx[d] == r->e->v[d]) r->idx[d--] = 0;
    if (d < 0) r->done = true;
    else amp_mpi__runs_at(r);
}

/* Each row of a dimension lies past the previous one's whole. */
static bool amp_mpi__ordered(const amp_extent *e, const int64_t *s)
{
    for (int d = 0; d < e->rank; ++d)
        if (e->v[d] > 1 && (s[d] <= 0 || (d + 1 < e->rank && amp_mpi__span(e, s, d + 1) > s[d]))) return false;
    return true;
}

/* Whether two sides' views share a byte: by their rows' arithmetic where
 * their strides agree (sections of one view: the usual case), else by
 * walking their runs side by side; views whose rows are not in address
 * order (none of hipamp's) are taken to meet where their byte ranges do. */
static bool amp_mpi__sides_meet(const amp_mpi__side *a, const amp_mpi__side *b, size_t elem)
{
    const uintptr_t pa = (uintptr_t)a->base, pb = (uintptr_t)b->base;
    const int64_t span_a = amp_mpi__span(&a->ext, a->strides, 0), span_b = amp_mpi__span(&b->ext, b->strides, 0);
    if (pa + (uintptr_t)(span_a * (int64_t)elem) <= pb || pb + (uintptr_t)(span_b * (int64_t)elem) <= pa) return false;
    if (!amp_mpi__ordered(&a->ext, a->strides) || !amp_mpi__ordered(&b->ext, b->strides)) return true;
    /* (The byte ranges meet: the two addresses are less than a view apart.) */
    const int64_t apart = (int64_t)(pa - pb);
    bool alike = a->ext.rank == b->ext.rank && apart % (int64_t)elem == 0;
    for (int d = 0; alike && d < a->ext.rank; ++d)
        alike = a->ext.v[d] <= 1 || b->ext.v[d] <= 1 || a->strides[d] == b->strides[d];
    if (alike) return amp_mpi__rows_meet(&a->ext, a->strides, &b->ext, b->strides, 0, apart / (int64_t)elem);
    amp_mpi__runs ra = {.first = pa, .e = &a->ext, .s = a->strides, .elem = elem};
    amp_mpi__runs rb = {.first = pb, .e = &b->ext, .s = b->strides, .elem = elem};
    amp_mpi__runs_at(&ra);
    amp_mpi__runs_at(&rb);
    while (!ra.done && !rb.done) {
        if (ra.hi <= rb.lo) amp_mpi__runs_next(&ra);
        else if (rb.hi <= ra.lo) amp_mpi__runs_next(&rb);
        else return true;
    }
    return false;
}

/* A receive view that shares elements with another view of the exchange
 * (a send it would overwrite, or another receive) makes the result depend
 * on the order in which the messages land: refused, naming both faces.
 * Two sends may read the same elements. Compared where both addresses are
 * known (see amp_mpi__side's base): views of host memory from the plan on,
 * views handed over by device address once they were (which loses none of
 * their data). Whole faces: a face's chunks are its first entry's view. */
static amp_status amp_mpi__overlaps(const amp_mpi_exchange *x, const amp_mpi__flight *f, const char *fn)
{
    for (size_t i = 0; i < 2 * f->count; ++i) {
        const amp_mpi__side *a = &f->sides[i];
        if (!a->v || !a->base || a->chunk) continue;
        for (size_t j = i + 1; j < 2 * f->count; ++j) {
            const amp_mpi__side *b = &f->sides[j];
            if (!b->v || !b->base || b->chunk || ((i & 1) == 0 && (j & 1) == 0)) continue;
            if (!amp_mpi__sides_meet(a, b, x->elem)) continue;
            const amp_mpi_halo *ha = &f->halos[i / 2], *hb = &f->halos[j / 2];
            return amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT,
                                 "%s: halo %zu %s rank %d (tag %d) and halo %zu %s rank %d (tag %d) share elements: "
                                 "what a receive view holds afterwards would depend on the order in which the "
                                 "messages arrive; a receive view may overlap no other view of the exchange (sends "
                                 "may read the same elements)",
                                 fn, f->orig[i / 2], i & 1 ? "receive from" : "send to", ha->peer,
                                 i & 1 ? ha->recv_tag : ha->send_tag, f->orig[j / 2], j & 1 ? "receive from" : "send to",
                                 hb->peer, j & 1 ? hb->recv_tag : hb->send_tag);
        }
    }
    return AMP_OK;
}

/* ------------------------------------------------------------- NCCL */

/* The order of a halo side's NCCL operation: by peer, then tag, then halo
 * (NCCL matches a pair's operations in the order they were queued; tags
 * equal on both sides then meet). */
typedef struct amp_mpi__nccl_key {
    int peer, tag;
    size_t side;
} amp_mpi__nccl_key;

static int amp_mpi__nccl_key_cmp(const void *a, const void *b)
{
    const amp_mpi__nccl_key *p = a, *q = b;
    if (p->peer != q->peer) return p->peer < q->peer ? -1 : 1;
    if (p->tag != q->tag) return p->tag < q->tag ? -1 : 1;
    return p->side < q->side ? -1 : p->side > q->side;
}

/* The NCCL path's begin after every side was prepared, with room for the
 * record's operations (keys and ops: 2 * f->count each, made by the caller
 * before the exchange was counted in flight, so that running out of memory
 * there withdraws only this exchange, never the ones begun before it): the
 * packs' copies in are queued already (their futures are not needed:
 * everything runs on q in order), one group of sends and receives, then the
 * unpacks of the strided receives, all on q. A failure after the group was
 * queued breaks the exchanger (its operations may be half queued). */
static amp_status amp_mpi__nccl_post(amp_mpi_exchange *x, amp_mpi__flight *f, amp_mpi__nccl_key *keys,
                                     amp_mpi__nccl_op *ops, const char *fn)
{
    amp_status st = AMP_OK;
    size_t n = 0;
    for (size_t i = 0; i < 2 * f->count; i += 2)
        if (f->copies[i]) {
            amp_future_destroy(f->copies[i]);
            f->copies[i] = NULL;
        }
    for (size_t i = 0; i < 2 * f->count; ++i) {
        if (!f->sides[i].v) continue;
        const amp_mpi_halo *h = &f->halos[i / 2];
        keys[n++] = (amp_mpi__nccl_key){h->peer, i & 1 ? h->recv_tag : h->send_tag, i};
    }
    qsort(keys, n, sizeof *keys, amp_mpi__nccl_key_cmp);
    for (size_t k = 0; k < n; ++k) {
        amp_mpi__side *sd = &f->sides[keys[k].side];
        ops[k] = (amp_mpi__nccl_op){(keys[k].side & 1) == 0, sd->addr, (size_t)sd->bytes, keys[k].peer};
    }
    char what[160];
    snprintf(what, sizeof what, "%s: exchange #%llu", fn, (unsigned long long)f->id);
    if (x->nccl_sync && (st = amp_accelerator_view_wait(x->q)) != AMP_OK) amp_mpi__hipamp(st, what);
    if (st == AMP_OK) st = amp_mpi__nccl_group(x->nccl, ops, n, what);
    if (st != AMP_OK) {
        char msg[AMP_MPI__ERR_SIZE];
        snprintf(msg, sizeof msg, "%s", amp_mpi_last_error());
        return amp_mpi__break(x, st, msg);
    }
    for (size_t i = 0; i < 2 * f->count; ++i) f->sides[i].posted = f->sides[i].v != NULL;
    for (size_t i = 0; i < f->count; ++i) {
        amp_mpi__side *r = &f->sides[2 * i + 1];
        if (!r->v || r->how != AMP_MPI__STAGE) continue;
        if ((st = amp_copy_view_async(f->recv_stage[i].view, r->v, &f->copies[2 * i + 1])) != AMP_OK) {
            char name[192], msg[AMP_MPI__ERR_SIZE];
            amp_mpi__name(name, sizeof name, fn, f, 2 * i + 1);
            amp_mpi__hipamp(st, name);
            snprintf(msg, sizeof msg, "%s", amp_mpi_last_error());
            return amp_mpi__break(x, st, msg);
        }
    }
    return AMP_OK;
}

/* The NCCL path's end (or test, when only_look): the group is on q. With a
 * time-out, q is waited for up to it (AMP_ERROR_TIMEOUT then aborts the
 * communicator and breaks the exchanger: the operations may never finish);
 * without one nothing waits, since later work on q runs after the group.
 * An asynchronous NCCL error fails the exchange. */
static amp_status amp_mpi__nccl_finish(amp_mpi_exchange *x, amp_mpi__flight *f, bool only_look, bool *done,
                                       const char *fn)
{
    char what[160], msg[AMP_MPI__ERR_SIZE];
    snprintf(what, sizeof what, "%s: exchange #%llu", fn, (unsigned long long)f->id);
    amp_status st = amp_mpi__nccl_check(x->nccl, what);
    if (st == AMP_OK && (only_look || x->timeout_ms)) {
        amp_status w = amp_accelerator_view_wait_for(x->q, only_look ? 0 : x->timeout_ms);
        if (done) *done = w == AMP_OK;
        if (w == AMP_ERROR_TIMEOUT && !only_look)
            st = amp_mpi__fail(AMP_ERROR_TIMEOUT,
                               "%s: its NCCL operations did not finish within %u ms (a peer that never took part, "
                               "or left); the NCCL communicator was aborted and this exchanger refuses further "
                               "exchanges: destroy it",
                               what, (unsigned)x->timeout_ms);
        else if (w != AMP_OK && w != AMP_ERROR_TIMEOUT)
            st = amp_mpi__hipamp(w, what);
    } else if (done) {
        *done = st == AMP_OK;
    }
    if (st == AMP_OK) return AMP_OK;
    snprintf(msg, sizeof msg, "%s", amp_mpi_last_error());
    amp_mpi__nccl_close(x->nccl, true);
    x->nccl = NULL;
    return amp_mpi__break(x, st, msg);
}

/* ------------------------------------------------------------ chunks */

/* How a view of a halo is cut into chunks (AMP_MPI_CHUNK_BYTES, every path
 * but NCCL): 0 when it moves whole (no chunk size, no view or no elements,
 * fewer elements than a chunk holds), else the elements of a chunk, per.
 * Chunk j is then elements j * per .. j * per + per - 1 of the view in
 * row-major order, and the last one holds the n % per left (none: an empty
 * message): a function of the element count alone (the element and chunk
 * sizes are the same on every rank), never of the view's shape, so a face
 * and its peer's, of the same count, are cut into the same messages
 * whatever their shapes. A face's last message is its only one of fewer
 * than per elements, so a receiver whose count differs knows where the
 * peer's face ended (amp_mpi__cut_short, amp_mpi__drains): no message of it
 * is left to meet a later receive, and no receive waits for a chunk that
 * never comes. *n gets the element count. */
static int64_t amp_mpi__chunk_elems(const amp_mpi_exchange *x, const amp_mpi_halo *h, amp_array_view *v, int64_t *n)
{
    amp_extent e;
    *n = 0;
    if (!x->chunk_bytes || x->path.path == AMP_MPI_PATH_NCCL || h->peer == MPI_PROC_NULL || !v ||
        amp_array_view_get_extent(v, &e) != AMP_OK)
        return 0;
    *n = amp_extent_size(e);
    int64_t per = amp_mpi__chunk_per(x);
    return *n <= 0 || *n < per ? 0 : per;
}

/* A side's chunks: 1 when it moves whole. */
static size_t amp_mpi__chunks_of(int64_t per, int64_t n) { return per ? (size_t)(n / per + 1) : 1; }

/* The caller's halos as the record's entries: each halo whole, or one
 * entry per chunk of its larger face, the send's and the receive's chunks
 * side by side, in order (chunk j of each in entry j of the halo; a face
 * moved whole, or with fewer chunks, only in the first entries): the
 * chunks of one face go to one peer with one tag, so MPI matches them in
 * order. Each chunked side gets its elements; the views are the caller's
 * (no section is made). Sets f->count. */
static amp_status amp_mpi__expand(amp_mpi_exchange *x, amp_mpi__flight *f, const amp_mpi_halo *halos, size_t count)
{
    amp_status st;
    size_t total = 0;
    for (size_t i = 0; i < count; ++i) {
        int64_t ns, nr, ps = amp_mpi__chunk_elems(x, &halos[i], halos[i].send, &ns),
                        pr = amp_mpi__chunk_elems(x, &halos[i], halos[i].recv, &nr);
        size_t ks = amp_mpi__chunks_of(ps, ns), kr = amp_mpi__chunks_of(pr, nr);
        total += ks > kr ? ks : kr;
    }
    if ((st = amp_mpi__flight_grow(f, total)) != AMP_OK) return st;
    for (size_t i = 0; i < 2 * total; ++i) {
        f->sides[i] = (amp_mpi__side){.type = MPI_DATATYPE_NULL};
        f->reqs[i] = MPI_REQUEST_NULL;
    }
    size_t at = 0;
    for (size_t i = 0; i < count; ++i) {
        const amp_mpi_halo *h = &halos[i];
        int64_t n[2], per[2] = {amp_mpi__chunk_elems(x, h, h->send, &n[0]), amp_mpi__chunk_elems(x, h, h->recv, &n[1])};
        size_t ks[2] = {amp_mpi__chunks_of(per[0], n[0]), amp_mpi__chunks_of(per[1], n[1])};
        size_t k = ks[0] > ks[1] ? ks[0] : ks[1];
        for (size_t j = 0; j < k; ++j, ++at) {
            f->halos[at] = *h;
            f->orig[at] = i;
            if (j >= ks[0]) f->halos[at].send = NULL;
            if (j >= ks[1]) f->halos[at].recv = NULL;
            for (int d = 0; d < 2; ++d) {
                if (!per[d] || j >= ks[d]) continue;
                amp_mpi__side *sd = &f->sides[2 * at + (size_t)d];
                sd->chunk = (uint32_t)j;
                sd->chunks = (uint32_t)ks[d];
                sd->lo = (int64_t)j * per[d];
                sd->hi = sd->lo + per[d] < n[d] ? sd->lo + per[d] : n[d];
            }
        }
    }
    f->count = total;
    return AMP_OK;
}

/* amp_mpi_exchange_begin, its messages naming fn. */
static amp_status amp_mpi__begin(amp_mpi_exchange *x, const amp_mpi_halo *halos, size_t count, amp_mpi_pending *out,
                                 const char *fn)
{
    amp_status st = AMP_OK;
    amp_mpi__flight *f = NULL;
    if (out) out->id = 0;
    if (!x) return amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: x is NULL", fn);
    if (count && !halos) return amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: halos is NULL", fn);
    if ((st = amp_mpi__need_mpi(fn)) != AMP_OK) return st;
    if ((st = amp_mpi__refuse_if_broken(x, fn)) != AMP_OK) return st;
    double t0 = amp_mpi__now();
    if ((st = amp_mpi__check_halos(x, halos, count, fn)) != AMP_OK) return st;
    if ((st = amp_mpi__flight_take(x, count, &f)) != AMP_OK) return st;
    if ((st = amp_mpi__expand(x, f, halos, count)) != AMP_OK) {
        amp_mpi__flight_release(f);
        return st;
    }
    halos = f->halos;
    count = f->count;
    f->id = x->next_id; /* named in messages; in flight only once posted */

    /* 1. Every side checked (what it moves, and how) before any view is
     *    touched: a refused exchange leaves the views as they were. */
    for (size_t i = 0; i < count; ++i) {
        const amp_mpi_halo *h = &halos[i];
        if (h->peer == MPI_PROC_NULL) continue;
        f->sides[2 * i].v = h->send;
        f->sides[2 * i + 1].v = h->recv;
        for (int k = 0; k < 2; ++k) {
            char what[192];
            if (!f->sides[2 * i + (size_t)k].v) continue;
            amp_mpi__name(what, sizeof what, fn, f, 2 * i + (size_t)k);
            if ((st = amp_mpi__plan(x, &f->sides[2 * i + (size_t)k], what)) != AMP_OK) goto fail;
        }
    }
    if ((st = amp_mpi__overlaps(x, f, fn)) != AMP_OK) goto fail;
    /* 2. Every view made ready before anything is posted, so that a view
     *    failing here leaves no message half sent (and no view's data
     *    lost: see amp_mpi__ready). */
    bool wait_q = false;
    for (size_t i = 0; i < count; ++i)
        for (int k = 0; k < 2; ++k) {
            char what[192];
            if (!f->sides[2 * i + (size_t)k].v) continue;
            amp_mpi__name(what, sizeof what, fn, f, 2 * i + (size_t)k);
            if ((st = amp_mpi__ready(x, f, i, k, &wait_q, what)) != AMP_OK) goto fail;
        }
    /* Now with the views known by their device addresses, before a receive
     * in place drops its data. */
    if ((st = amp_mpi__overlaps(x, f, fn)) != AMP_OK) goto fail;
    /* 3. The receives in place, last: their stale device data dropped. */
    for (size_t i = 0; i < count; ++i) {
        amp_mpi__side *r = &f->sides[2 * i + 1];
        char what[192];
        if (!r->v || r->how != AMP_MPI__IN_PLACE || r->chunk) continue;
        amp_mpi__name(what, sizeof what, fn, f, 2 * i + 1);
        if ((st = amp_mpi__settle(r, what)) != AMP_OK) goto fail;
    }
    /* The copy stream's copies down, after everything the queue held when
     * the exchange began (the kernels that wrote the sends), not after the
     * kernels the caller queues next. */
    bool aside = false;
    for (size_t i = 0; i < 2 * count; ++i) aside |= f->sides[i].aside;
    if (aside && (st = amp_mpi__aside_mark(x->aside, &f->mark)) != AMP_OK) goto fail;
    for (size_t i = 0; i < count; ++i) {
        amp_mpi__side *sd = &f->sides[2 * i];
        if (sd->aside && (st = amp_mpi__aside_copy(x->aside, sd->addr, sd->dev, (size_t)sd->bytes, false, f->mark,
                                                   &f->aside_ev[2 * i])) != AMP_OK)
            goto fail;
    }
    if (x->nccl) {
        const size_t room = count ? 2 * count : 1;
        amp_mpi__nccl_key *keys = amp_mpi__fault("nccl_post") ? NULL : malloc(room * sizeof *keys);
        amp_mpi__nccl_op *ops = keys ? malloc(room * sizeof *ops) : NULL;
        if (!ops) {
            free(keys);
            st = amp_mpi__fail(AMP_ERROR_OUT_OF_MEMORY, "%s: no memory for the NCCL operations of %zu halos", fn,
                               count);
            goto fail;
        }
        x->next_id++;
        *out = (amp_mpi_pending){f->id};
        st = amp_mpi__nccl_post(x, f, keys, ops, fn);
        free(keys);
        free(ops);
        f->seconds += amp_mpi__now() - t0;
        return st;
    }
    /* MPI reads and writes device memory outside hipamp's queues: the work
     * queued on q (the kernels that wrote the sends, or still read the
     * receives) must be finished first. */
    if (wait_q && (st = amp_accelerator_view_wait(x->q)) != AMP_OK) {
        char what[128];
        snprintf(what, sizeof what, "%s: waiting for the queue", fn);
        amp_mpi__hipamp(st, what);
        goto fail;
    }

    /* 2. Every receive now; the sends in order as their data is ready. */
    x->next_id++;
    for (size_t i = 0; i < count; ++i) {
        amp_mpi__side *r = &f->sides[2 * i + 1];
        if (!r->v) continue;
        int rc = MPI_Irecv(r->addr, r->count, r->type, halos[i].peer, halos[i].recv_tag, x->comm, &f->reqs[2 * i + 1]);
        if (rc != MPI_SUCCESS) {
            char what[192], msg[AMP_MPI__ERR_SIZE];
            amp_mpi__name(what, sizeof what, fn, f, 2 * i + 1);
            st = amp_mpi__mpi(rc, what);
            snprintf(msg, sizeof msg, "%s", amp_mpi_last_error());
            return amp_mpi__break(x, st, msg);
        }
        r->posted = true;
    }
    *out = (amp_mpi_pending){f->id};
    /* The sends whose staging copies already landed are posted now; the
     * others by the next test or end, which find them as they land. Begin
     * never waits for a copy: the copy is queued after the kernels that
     * wrote the face, and waiting for it here would keep the caller from
     * queueing its next kernel (the interior update it overlaps with the
     * exchange) until the queue had drained: measured on two H200s, the
     * GPU then idled for the copy and the host's turn-around every step. */
    st = amp_mpi__progress(x, 0, fn);
    f->seconds += amp_mpi__now() - t0;
    return st;
fail:
    /* Nothing was posted: the staged copies queued so far finish and are
     * forgotten, and the record is free again (the first failure is the
     * one reported). */
    {
        char msg[AMP_MPI__ERR_SIZE];
        snprintf(msg, sizeof msg, "%s", amp_mpi_last_error());
        (void)amp_mpi__copies_drain(x, f);
        amp_mpi__fail(st, "%s", msg);
    }
    amp_mpi__flight_release(f);
    return st;
}

amp_status amp_mpi_exchange_begin(amp_mpi_exchange *x, const amp_mpi_halo *halos, size_t count, amp_mpi_pending *out)
{
    if (out) out->id = 0;
    AMP_MPI__NOT_NULL(out);
    return amp_mpi__begin(x, halos, count, out, __func__);
}

/* The record of p, which must be in flight (why not, otherwise). */
static amp_status amp_mpi__pending_of(amp_mpi_exchange *x, amp_mpi_pending p, amp_mpi__flight **out, const char *fn)
{
    amp_status st;
    if ((st = amp_mpi__refuse_if_broken(x, fn)) != AMP_OK) return st;
    if (p.id == 0 || p.id >= x->next_id)
        return amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: no exchange #%llu was begun on this exchanger", fn,
                             (unsigned long long)p.id);
    if (p.id < x->oldest || !(*out = amp_mpi__flight_of(x, p.id)))
        return amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: exchange #%llu was already ended", fn,
                             (unsigned long long)p.id);
    return AMP_OK;
}

amp_status amp_mpi_exchange_test(amp_mpi_exchange *x, amp_mpi_pending p, bool *done)
{
    amp_status st;
    amp_mpi__flight *f = NULL;
    if (done) *done = false;
    AMP_MPI__NOT_NULL(x);
    AMP_MPI__NOT_NULL(done);
    if ((st = amp_mpi__need_mpi(__func__)) != AMP_OK) return st;
    if ((st = amp_mpi__pending_of(x, p, &f, __func__)) != AMP_OK) return st;
    double t0 = amp_mpi__now();
    if (x->nccl) {
        if ((st = amp_mpi__nccl_finish(x, f, true, done, __func__)) != AMP_OK) return st;
        f->seconds += amp_mpi__now() - t0;
        return AMP_OK;
    }
    if ((st = amp_mpi__progress(x, 0, __func__)) != AMP_OK) return st;
    if (x->pipeline) amp_mpi__deliver_arrived(x, f, __func__);
    bool all_posted = true;
    for (size_t i = 0; i < 2 * f->count; i += 2) all_posted &= !f->sides[i].v || f->sides[i].posted;
    amp_mpi__cut_short(x, f);
    if (all_posted && !f->complete) {
        int all = 0;
        int rc = MPI_Testall((int)(2 * f->count), f->reqs, &all, f->statuses);
        if (rc != MPI_SUCCESS || all) {
            f->complete = true;
            f->complete_rc = rc;
        }
    }
    const bool draining = amp_mpi__drains(x, f, f->complete, f->complete_rc);
    *done = f->complete && !draining;
    f->seconds += amp_mpi__now() - t0;
    return AMP_OK;
}

/* amp_mpi_exchange_end, its messages naming fn. */
static amp_status amp_mpi__end(amp_mpi_exchange *x, amp_mpi_pending p, const char *fn)
{
    amp_status st;
    amp_mpi__flight *f = NULL;
    if (!x) return amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: x is NULL", fn);
    if ((st = amp_mpi__need_mpi(fn)) != AMP_OK) return st;
    if ((st = amp_mpi__pending_of(x, p, &f, fn)) != AMP_OK) return st;
    if (p.id != x->oldest)
        return amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT,
                             "%s: exchange #%llu is not the oldest in flight: #%llu began first, and exchanges end in "
                             "the order they began",
                             fn, (unsigned long long)p.id, (unsigned long long)x->oldest);
    double t0 = amp_mpi__now();
    int rc = MPI_SUCCESS;
    if (x->nccl) {
        if ((st = amp_mpi__nccl_finish(x, f, false, NULL, fn)) != AMP_OK) return st;
    } else {
        /* Its sends, waiting for their staging copies if need be (the oldest
         * exchange's sends come first in the order anyway). */
        if ((st = amp_mpi__progress(x, p.id, fn)) != AMP_OK) return st;
        amp_mpi__stop stop;
        rc = amp_mpi__wait(x, f, &stop);
        if (stop != AMP_MPI__FINISHED) {
            st = stop == AMP_MPI__LATE ? amp_mpi__late(x, f, fn) : amp_mpi__left(x, f, fn);
            char msg[AMP_MPI__ERR_SIZE];
            snprintf(msg, sizeof msg, "%s", amp_mpi_last_error());
            return amp_mpi__break(x, st, msg);
        }
    }
    /* Every request finished: the exchange is over whatever the checks say. */
    x->oldest++;
    while (x->oldest < x->next_id && !amp_mpi__flight_of(x, x->oldest)) x->oldest++;
    bool mpi_failed = false;
    if (x->nccl ||
        ((st = amp_mpi__arrivals(x, f, rc, fn, &mpi_failed)) == AMP_OK && (st = amp_mpi__deliver(x, f, fn)) == AMP_OK)) {
        for (size_t i = 0; i < f->count; ++i) {
            const amp_mpi__side *s = &f->sides[2 * i], *r = &f->sides[2 * i + 1];
            if (s->posted) {
                x->stats.messages_sent++;
                x->stats.bytes_sent += s->bytes;
                if (s->how == AMP_MPI__STAGE && !x->nccl) x->stats.bytes_staged += s->bytes;
                if (s->aside) x->stats.bytes_copied_aside += s->bytes;
            }
            if (r->posted) {
                x->stats.messages_received++;
                x->stats.bytes_received += r->bytes;
                if (r->how == AMP_MPI__STAGE && !x->nccl) x->stats.bytes_staged += r->bytes;
                if (r->aside) x->stats.bytes_copied_aside += r->bytes;
            }
        }
        x->stats.exchanges++;
        x->stats.seconds += f->seconds + (amp_mpi__now() - t0);
    }
    if (st == AMP_OK && f->mark) {
        /* Every copy up is queued: none waits for the mark any more. */
        amp_mpi__aside_event_free(x->aside, f->mark);
        f->mark = NULL;
    }
    if (st != AMP_OK && (f->strays || mpi_failed)) {
        /* A face sent in chunks may have left messages that would meet a
         * later exchange's receives; after a failed MPI call the requests
         * may still be pending (MPI_Testall failed before all finished),
         * writing the receive views and reading the staging buffers that a
         * later exchange would reuse. */
        char msg[AMP_MPI__ERR_SIZE];
        snprintf(msg, sizeof msg, "%.800s; %s, so this exchanger refuses further exchanges: destroy it",
                 amp_mpi_last_error(),
                 mpi_failed ? "the exchange's messages are in an undefined state"
                            : "messages of a face sent in chunks may be left over");
        amp_mpi__fail(st, "%s", msg);
        amp_mpi__break(x, st, msg);
    }
    amp_mpi__flight_release(f);
    return st;
}

amp_status amp_mpi_exchange_end(amp_mpi_exchange *x, amp_mpi_pending p) { return amp_mpi__end(x, p, __func__); }

/* The blocking exchange: a begin and an end, named fn in messages. */
static amp_status amp_mpi__exchange(amp_mpi_exchange *x, const amp_mpi_halo *halos, size_t count, const char *fn)
{
    amp_mpi_pending p;
    /* Its end would not be the oldest's, and be refused: the exchange would
     * stay in flight on the caller's views with no handle to end it by. */
    if (x && x->oldest != x->next_id && !x->broken[0])
        return amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT,
                             "%s: exchange #%llu, begun on this exchanger, is still in flight, and exchanges end in "
                             "the order they began: end it (amp_mpi_exchange_end) before a blocking exchange",
                             fn, (unsigned long long)x->oldest);
    amp_status st = amp_mpi__begin(x, halos, count, &p, fn);
    if (st != AMP_OK) return st;
    return amp_mpi__end(x, p, fn);
}

amp_status amp_mpi_exchange_halos(amp_mpi_exchange *x, const amp_mpi_halo *halos, size_t count)
{
    return amp_mpi__exchange(x, halos, count, __func__);
}

/* Tag 0 travels up (to hi), tag 1 down (to lo): a rank's send_hi meets its
 * hi neighbour's recv_lo. */
static void amp_mpi__rows(amp_mpi_halo h[2], int lo, amp_array_view *send_lo, amp_array_view *recv_lo, int hi,
                          amp_array_view *send_hi, amp_array_view *recv_hi)
{
    h[0] = (amp_mpi_halo){send_lo, recv_lo, lo, 1, 0};
    h[1] = (amp_mpi_halo){send_hi, recv_hi, hi, 0, 1};
}

amp_status amp_mpi_exchange_rows_begin(amp_mpi_exchange *x, int lo, amp_array_view *send_lo, amp_array_view *recv_lo,
                                       int hi, amp_array_view *send_hi, amp_array_view *recv_hi, amp_mpi_pending *out)
{
    amp_mpi_halo h[2];
    if (out) out->id = 0;
    AMP_MPI__NOT_NULL(out);
    amp_mpi__rows(h, lo, send_lo, recv_lo, hi, send_hi, recv_hi);
    return amp_mpi__begin(x, h, 2, out, __func__);
}

amp_status amp_mpi_exchange_rows(amp_mpi_exchange *x, int lo, amp_array_view *send_lo, amp_array_view *recv_lo,
                                 int hi, amp_array_view *send_hi, amp_array_view *recv_hi)
{
    amp_mpi_halo h[2];
    amp_mpi__rows(h, lo, send_lo, recv_lo, hi, send_hi, recv_hi);
    return amp_mpi__exchange(x, h, 2, __func__);
}

/* ---------------------------------------------------------- all-reduce */

/* The all-reduce's request finished: MPI_Test until it did, the time-out
 * passed (AMP_MPI__LATE) or a rank left (its notice arrived:
 * AMP_MPI__LEFT_PEER, *who that rank), as amp_mpi__wait does for an
 * exchange. A rank that refused its own call (a bad argument of its own,
 * no memory) never joins: without this the others waited for it in
 * MPI_Allreduce for ever. */
static int amp_mpi__wait_reduce(amp_mpi_exchange *x, MPI_Request *req, amp_mpi__stop *stop, int *who)
{
    *stop = AMP_MPI__FINISHED;
    *who = -1;
    const double deadline = x->timeout_ms ? amp_mpi__now() + x->timeout_ms * 1e-3 : 0;
    double left_at = 0;
    for (unsigned polls = 0;; ++polls) {
        int done = 0, rc = MPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS || done) return rc;
        amp_mpi__notices_poll(x);
        for (int r = 0; x->gone && *who < 0 && r < x->size; ++r)
            if (r != x->rank && (x->peer[r] & AMP_MPI__LEFT)) *who = r, left_at = amp_mpi__now();
        if (*who >= 0 && amp_mpi__now() - left_at >= AMP_MPI__LEFT_GRACE) {
            *stop = AMP_MPI__LEFT_PEER;
            return MPI_SUCCESS;
        }
        if (deadline && amp_mpi__now() >= deadline) {
            *stop = AMP_MPI__LATE;
            return MPI_SUCCESS;
        }
        if (polls >= 64) sched_yield();
    }
}

amp_status amp_mpi_exchange_allreduce(amp_mpi_exchange *x, amp_array_view *v, amp_mpi_type type, amp_mpi_op op)
{
    static const char fn[] = "amp_mpi_exchange_allreduce";
    static const size_t sizes[] = {8, 4, 4, 8};
    amp_status st;
    AMP_MPI__NOT_NULL(x);
    AMP_MPI__NOT_NULL(v);
    if ((st = amp_mpi__need_mpi(fn)) != AMP_OK) return st;
    if ((st = amp_mpi__refuse_if_broken(x, fn)) != AMP_OK) return st;
    if ((int)type < 0 || type > AMP_MPI_INT64)
        return amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: type %d is not an amp_mpi_type", fn, (int)type);
    if ((int)op < 0 || op > AMP_MPI_MIN)
        return amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: op %d is not an amp_mpi_op", fn, (int)op);
    amp_mpi__side sd = {.v = v};
    size_t elem = 0;
    if ((st = amp_array_view_get_element_size(v, &elem)) != AMP_OK) return amp_mpi__hipamp(st, fn);
    if (elem != sizes[type])
        return amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: the view has %zu-byte elements, type %d has %zu", fn,
                             elem, (int)type, sizes[type]);
    if ((st = amp_array_view_get_extent(v, &sd.ext)) != AMP_OK ||
        (st = amp_array_view_get_strides(v, sd.strides)) != AMP_OK)
        return amp_mpi__hipamp(st, fn);
    if (!amp_mpi__contiguous(&sd))
        return amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: the view is strided; reduce a contiguous view", fn);
    int64_t count = amp_extent_size(sd.ext);
    if (count <= 0 || count > INT32_MAX)
        return amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: %lld elements (1 to %d)", fn, (long long)count, INT32_MAX);
    if (x->nccl) {
        static const int nccl_type[] = {ncclFloat64, ncclFloat32, ncclInt32, ncclInt64};
        static const int nccl_op[] = {ncclSum, ncclMax, ncclMin};
        void *addr = NULL;
        if ((st = amp_array_view_native_handle(v, x->q, AMP_READ_WRITE, &addr)) != AMP_OK)
            return amp_mpi__hipamp(st, fn);
        if (x->nccl_sync && (st = amp_accelerator_view_wait(x->q)) != AMP_OK) return amp_mpi__hipamp(st, fn);
        if ((st = amp_mpi__nccl_allreduce(x->nccl, addr, (size_t)count, nccl_type[type], nccl_op[op], fn)) != AMP_OK)
            return st;
        x->stats.allreduces++;
        x->stats.allreduces_on_device++;
        return AMP_OK;
    }
    /* Through the host: a copy down, MPI_Allreduce in place, a copy up. */
    static const MPI_Op mpi_op_of[] = {MPI_SUM, MPI_MAX, MPI_MIN};
    MPI_Datatype mt = type == AMP_MPI_DOUBLE ? MPI_DOUBLE : type == AMP_MPI_FLOAT ? MPI_FLOAT
                    : type == AMP_MPI_INT32  ? MPI_INT32_T : MPI_INT64_T;
    void *host = malloc((size_t)count * elem);
    amp_array_view *hv = NULL;
    if (!host) return amp_mpi__fail(AMP_ERROR_OUT_OF_MEMORY, "%s: no memory for %lld elements", fn, (long long)count);
    if ((st = amp_array_view_create(host, elem, sd.ext, AMP_READ_WRITE, &hv)) != AMP_OK ||
        (st = amp_copy_view(v, hv)) != AMP_OK) {
        amp_mpi__hipamp(st, fn);
        goto done;
    }
    MPI_Request req = MPI_REQUEST_NULL;
    amp_mpi__stop stop = AMP_MPI__FINISHED;
    int who = -1, rc = MPI_Iallreduce(MPI_IN_PLACE, host, (int)count, mt, mpi_op_of[op], x->comm, &req);
    if (rc == MPI_SUCCESS) rc = amp_mpi__wait_reduce(x, &req, &stop, &who);
    if (rc != MPI_SUCCESS) {
        st = amp_mpi__mpi(rc, "amp_mpi_exchange_allreduce: MPI_Iallreduce");
        goto done;
    }
    if (stop != AMP_MPI__FINISHED) {
        /* A collective's request can be neither cancelled nor freed: MPI
         * keeps it, and may still write host, which is never freed. */
        char msg[AMP_MPI__ERR_SIZE];
        if (stop == AMP_MPI__LATE)
            snprintf(msg, sizeof msg,
                     "%s: not every rank took part within %u ms (a rank that refused its own call, or never made "
                     "it); the all-reduce was abandoned (MPI may still write its buffer; the view keeps its "
                     "values), and this exchanger refuses further exchanges and all-reduces: destroy it",
                     fn, (unsigned)x->timeout_ms);
        else
            snprintf(msg, sizeof msg,
                     "%s: rank %d left without taking part (%s), so no answer will come; the all-reduce was "
                     "abandoned (MPI may still write its buffer; the view keeps its values), and this exchanger "
                     "refuses further exchanges and all-reduces: destroy it",
                     fn, who,
                     x->peer[who] & AMP_MPI__LEFT_FINALIZED ? "it called MPI_Finalize"
                                                            : "it destroyed its exchanger");
        st = amp_mpi__fail(AMP_ERROR_TIMEOUT, "%s", msg);
        amp_mpi__break(x, st, msg);
        host = NULL;
        goto done;
    }
    if ((st = amp_array_view_refresh(hv)) != AMP_OK || (st = amp_copy_view(hv, v)) != AMP_OK) {
        amp_mpi__hipamp(st, fn);
        goto done;
    }
    x->stats.allreduces++;
done:
    if (hv) {
        amp_status d = amp_array_view_destroy(hv);
        if (st == AMP_OK && d != AMP_OK) st = amp_mpi__hipamp(d, fn);
    }
    free(host);
    return st;
}
