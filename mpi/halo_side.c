/* halo_side.c — hipamp::mpi's halo sides from a halo to what MPI moves: the element and access checks, faces cut into chunks by element count, each side's plan (what it moves, and how on the exchanger's path), its data made ready (staging buffers, device addresses, MPI datatypes of strided views), and the names messages give a side. */
#include "halo_private.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --------------------------------------------------------------- sides */

/* True when the view's elements are one contiguous run. */
bool amp_mpi__contiguous(const amp_mpi__side *s)
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
    /* (Zeroed for GCC 12, which does not see that nb is at least 1 here.) */
    MPI_Datatype types[2 * AMP_MAX_RANK] = {0};
    MPI_Aint disp[2 * AMP_MAX_RANK] = {0};
    int lens[2 * AMP_MAX_RANK] = {0}, nb = amp_mpi__boxes(&s->ext, s->lo, s->hi, boxes), made = 0;
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

amp_status amp_mpi__stage_release(amp_mpi__stage *s)
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
amp_status amp_mpi__plan(amp_mpi_exchange *x, amp_mpi__side *s, const char *what)
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
    s->base_late = !s->base;
    if (!s->chunks) s->lo = 0, s->hi = n;
    int64_t count = s->hi - s->lo;
    /* MPI counts and hipamp::mpi's message sizes are ints. A face cut
     * into chunks (every path but NCCL, AMP_MPI_CHUNK_BYTES set) never gets
     * here: its chunks are at most 1 GiB. The hint is the path's: the NCCL
     * path moves every face whole. */
    if ((uint64_t)count > (uint64_t)INT32_MAX / x->elem)
        return amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT,
                             "%s: the face is %llu bytes (%lld elements of %zu bytes), more than one message moves "
                             "(at most %d bytes); %s",
                             what, (unsigned long long)count * x->elem, (long long)count, x->elem, INT32_MAX,
                             x->path.path == AMP_MPI_PATH_NCCL
                                 ? "AMP_MPI_CHUNK_BYTES does not cut faces on the NCCL path: split the face into "
                                   "several halos of their own tags"
                                 : "AMP_MPI_CHUNK_BYTES sends a face as messages of at most that many bytes");
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
amp_status amp_mpi__ready(amp_mpi_exchange *x, amp_mpi__flight *f, size_t i, int k, bool *wait_q,
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
amp_status amp_mpi__settle(amp_mpi__side *r, const char *what)
{
    amp_status st;
    if ((st = amp_array_view_discard_data(r->v)) != AMP_OK || (st = amp_array_view_synchronize(r->v)) != AMP_OK)
        return amp_mpi__hipamp(st, what);
    return AMP_OK;
}

/* (Only once its request finished: after the end's wait, or an abandon's.) */
void amp_mpi__side_free(amp_mpi__side *s)
{
    if (s->type != MPI_BYTE && s->type != MPI_DATATYPE_NULL) MPI_Type_free(&s->type);
    s->type = MPI_DATATYPE_NULL;
    free(s->sink);
    s->sink = NULL;
}

/* ", chunk j of k" for a chunk of a face, else "". */
void amp_mpi__chunk_text(char *buf, size_t n, const amp_mpi__side *s)
{
    buf[0] = '\0';
    if (s->chunks > 1) snprintf(buf, n, ", chunk %u of %u", (unsigned)s->chunk + 1, (unsigned)s->chunks);
}

/* What "halo i send to rank p (tag t, chunk j of k)" reads in messages. */
void amp_mpi__name(char *buf, size_t n, const char *fn, const amp_mpi__flight *f, size_t side)
{
    const amp_mpi_halo *h = &f->halos[side / 2];
    size_t i = side / 2;
    char chunk[48];
    amp_mpi__chunk_text(chunk, sizeof chunk, &f->sides[side]);
    snprintf(buf, n, "%s: exchange #%llu, halo %zu %s rank %d (tag %d%s)", fn, (unsigned long long)f->id, f->orig[i],
             side & 1 ? "receive from" : "send to", h->peer, side & 1 ? h->recv_tag : h->send_tag, chunk);
}

amp_status amp_mpi__check_halos(amp_mpi_exchange *x, const amp_mpi_halo *halos, size_t count, const char *fn)
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
        /* One bound, the communicator's MPI_TAG_UB (x->notice_tag): a tag
         * past it fails MPI_Isend or MPI_Irecv, which would break the
         * exchanger with half of the exchange posted, and the bound itself
         * carries the exchanger's leaving notices; refused here, before
         * anything is posted. */
        const int top = h->send && h->send_tag >= x->notice_tag ? h->send_tag : h->recv_tag;
        if ((h->send && h->send_tag >= x->notice_tag) || (h->recv && h->recv_tag >= x->notice_tag))
            return amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT,
                                 "%s: halo %zu: tag %d is not below this MPI's MPI_TAG_UB (%d), which the exchanger "
                                 "keeps for its peers' leaving notices: a halo's tags are 0 to %d",
                                 fn, i, top, x->notice_tag, x->notice_tag - 1);
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
amp_status amp_mpi__expand(amp_mpi_exchange *x, amp_mpi__flight *f, const amp_mpi_halo *halos, size_t count)
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
        f->sides[i] = AMP_MPI__SIDE_NONE;
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
