/* halo.c — hipamp::mpi's halo exchanges of array_view sections: begin (checks every halo, splits large faces into chunks, makes the data ready, queues the staging copies, posts the receives and each send whose staging copy already landed), test and end (post each send once its data is ready, wait for the messages with the time-out, copy each staged receive up as it arrives, check their sizes, copy received data back), in the order the exchanges began; the NCCL path's exchanges as one NCCL group on the queue; the blocking exchange is a begin and an end; the all-reduce (NCCL on the device, else MPI through the host). */
#include "exchange_state.h"
#include "nccl_abi.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void amp_mpi__deliver_arrived(amp_mpi_exchange *x, amp_mpi__flight *f, const char *fn);

/* Records kept free beyond this many are waited for instead of added to. */
#define AMP_MPI__SPARE_FLIGHTS 4

static double amp_mpi__now(void) { return MPI_Wtime(); }

/* --------------------------------------------------------------- sides */

/* The view's extent and strides, and its byte count for the exchanger's
 * element size. */
static amp_status amp_mpi__describe(amp_mpi_exchange *x, amp_mpi__side *s, const char *what)
{
    amp_status st;
    if ((st = amp_array_view_get_extent(s->v, &s->ext)) != AMP_OK ||
        (st = amp_array_view_get_strides(s->v, s->strides)) != AMP_OK)
        return amp_mpi__hipamp(st, what);
    int64_t n = amp_extent_size(s->ext);
    if (n <= 0 || (uint64_t)n > (uint64_t)INT32_MAX / x->elem)
        return amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: %lld elements of %zu bytes do not fit one MPI message",
                             what, (long long)n, x->elem);
    s->bytes = (uint64_t)n * x->elem;
    return AMP_OK;
}

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

/* An MPI datatype for a strided view at its own address: nested byte
 * vectors, the last dimension contiguous. */
static amp_status amp_mpi__datatype(amp_mpi_exchange *x, amp_mpi__side *s, const char *what)
{
    int rc;
    if (s->how == AMP_MPI__STAGE || amp_mpi__contiguous(s)) {
        s->type = MPI_BYTE;
        s->count = (int)s->bytes;
        return AMP_OK;
    }
    int r = s->ext.rank;
    MPI_Datatype t = MPI_DATATYPE_NULL;
    if ((rc = MPI_Type_contiguous((int)((size_t)s->ext.v[r - 1] * x->elem), MPI_BYTE, &t)) != MPI_SUCCESS)
        return amp_mpi__mpi(rc, what);
    for (int d = r - 2; d >= 0; --d) {
        MPI_Datatype outer = MPI_DATATYPE_NULL;
        rc = MPI_Type_create_hvector(s->ext.v[d], 1, (MPI_Aint)(s->strides[d] * (int64_t)x->elem), t, &outer);
        MPI_Type_free(&t);
        if (rc != MPI_SUCCESS) return amp_mpi__mpi(rc, what);
        t = outer;
    }
    if ((rc = MPI_Type_commit(&t)) != MPI_SUCCESS) {
        MPI_Type_free(&t);
        return amp_mpi__mpi(rc, what);
    }
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

/* Decide how a side moves and make its data ready for MPI: a send current
 * where MPI reads it, a receive with nothing in flight on it. Host views
 * (synchronize) and device pointers (*wait_q: the queue is waited for
 * before anything is posted) are ready when this returns; a staged send
 * queues its copy to the staging buffer and leaves the copy's future in
 * *copy: the send is posted once it finished. */
static amp_status amp_mpi__prepare(amp_mpi_exchange *x, amp_mpi__side *s, bool is_send, amp_mpi__stage *stage,
                                   amp_future **copy, bool *wait_q, const char *what)
{
    amp_status st = AMP_OK;
    bool host_view = amp_array_view_data(s->v) != NULL;
    amp_mpi_path path = x->path.path;
    if ((st = amp_mpi__describe(x, s, what)) != AMP_OK) return st;
    if (path == AMP_MPI_PATH_NCCL) {
        /* Device addresses on q; a strided view through a contiguous device
         * pack (copied in before the group, out after it, both on q). */
        amp_access access = is_send ? AMP_READ_ONLY : AMP_WRITE_ONLY;
        s->type = MPI_BYTE;
        s->count = (int)s->bytes;
        if (amp_mpi__contiguous(s)) {
            s->how = AMP_MPI__POINTER;
            if ((st = amp_array_view_native_handle(s->v, x->q, access, &s->addr)) != AMP_OK)
                return amp_mpi__hipamp(st, what);
            return AMP_OK;
        }
        s->how = AMP_MPI__STAGE;
        if ((st = amp_mpi__stage_get(x, stage, s->ext, s->bytes, true, what)) != AMP_OK) return st;
        if (is_send && (st = amp_copy_view_async(s->v, stage->view, copy)) != AMP_OK)
            return amp_mpi__hipamp(st == AMP_ERROR_ARGUMENT_MISMATCH ? AMP_ERROR_INVALID_ARGUMENT : st, what);
        if ((st = amp_array_view_native_handle(stage->view, x->q, access, &s->addr)) != AMP_OK)
            return amp_mpi__hipamp(st, what);
        return AMP_OK;
    }
    if (host_view && path != AMP_MPI_PATH_DEVICE) {
        s->how = AMP_MPI__IN_PLACE;
        /* A receive overwrites the section: drop device-newer data of it
         * rather than copy it back; then wait for whatever still uses it. */
        if (!is_send && (st = amp_array_view_discard_data(s->v)) != AMP_OK) return amp_mpi__hipamp(st, what);
        if ((st = amp_array_view_synchronize(s->v)) != AMP_OK) return amp_mpi__hipamp(st, what);
        s->addr = amp_array_view_data(s->v);
    } else if (path == AMP_MPI_PATH_DEVICE || (path == AMP_MPI_PATH_HOST && x->host_memory)) {
        s->how = AMP_MPI__POINTER;
        if ((st = amp_array_view_native_handle(s->v, x->q, is_send ? AMP_READ_ONLY : AMP_WRITE_ONLY, &s->addr)) !=
            AMP_OK)
            return amp_mpi__hipamp(st, what);
        *wait_q = true;
    } else if (path == AMP_MPI_PATH_HOST) {
        return amp_mpi__fail(AMP_ERROR_UNSUPPORTED,
                             "%s: a view of an array in GPU memory cannot be exchanged in place (host path); use the "
                             "staged or device path, or a view of host memory",
                             what);
    } else {
        s->how = AMP_MPI__STAGE;
        if ((st = amp_mpi__stage_get(x, stage, s->ext, s->bytes, false, what)) != AMP_OK) return st;
        s->addr = stage->host;
        if (x->aside && amp_mpi__contiguous(s)) {
            /* On the copy stream: the view's device address now (a
             * receive's box is left newer on the device, its later users
             * on q wait for the copy up); begin queues the copies down
             * once every side is prepared. */
            s->aside = true;
            if ((st = amp_array_view_native_handle(s->v, x->q, is_send ? AMP_READ_ONLY : AMP_WRITE_ONLY, &s->dev)) !=
                AMP_OK)
                return amp_mpi__hipamp(st, what);
        } else if (is_send && (st = amp_copy_view_async(s->v, stage->view, copy)) != AMP_OK) {
            /* The staging view's element size is the exchanger's: the copy
             * itself refuses a view of another (AMP_ERROR_ARGUMENT_MISMATCH). */
            return amp_mpi__hipamp(st == AMP_ERROR_ARGUMENT_MISMATCH ? AMP_ERROR_INVALID_ARGUMENT : st, what);
        }
    }
    return amp_mpi__datatype(x, s, what);
}

static void amp_mpi__side_free(amp_mpi__side *s)
{
    if (s->type != MPI_BYTE && s->type != MPI_DATATYPE_NULL) MPI_Type_free(&s->type);
    s->type = MPI_DATATYPE_NULL;
}

/* What "halo i send to rank p (tag t)" reads in messages. */
static void amp_mpi__name(char *buf, size_t n, const char *fn, const amp_mpi__flight *f, size_t side)
{
    const amp_mpi_halo *h = &f->halos[side / 2];
    size_t i = side / 2;
    char chunk[48] = "";
    if (f->parts[i] > 1) snprintf(chunk, sizeof chunk, ", chunk %zu of %zu", f->part[i] + 1, f->parts[i]);
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

/* The chunk sections the record made for its last exchange, destroyed
 * (their copies have finished: the record's copies were drained). */
static amp_status amp_mpi__owned_free(amp_mpi__flight *f)
{
    amp_status st = AMP_OK;
    for (size_t i = 0; i < f->nowned; ++i) {
        amp_status d = amp_array_view_destroy(f->owned[i]);
        if (st == AMP_OK && d != AMP_OK) st = amp_mpi__hipamp(d, "a chunk of a staged halo");
    }
    f->nowned = 0;
    return st;
}

static void amp_mpi__flight_free(amp_mpi__flight *f)
{
    free(f->owned);
    free(f->orig);
    free(f->part);
    free(f->parts);
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
    AMP_MPI__GROW(part, 1);
    AMP_MPI__GROW(parts, 1);
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
    if ((st = amp_mpi__owned_free(f)) != AMP_OK) return st;
    if ((st = amp_mpi__flight_grow(f, count)) != AMP_OK) return st;
    f->count = count;
    f->complete = false;
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
        /* An abandoned exchange's sends may still be read by MPI through
         * its sections' staging buffers, which stay; the sections go. */
        c = amp_mpi__owned_free(f);
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
            if (sd->how == AMP_MPI__STAGE) f->send_stage[i / 2].lent = true;
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

/* The exchange's requests, all of them finished: MPI_Testall until they
 * finished, the time-out passed (AMP_MPI__LATE) or a peer they wait for
 * left (its notice arrived, AMP_MPI__LEFT_PEER). Polls as MPI_Waitall
 * does, yielding the processor between polls once the first ones found
 * nothing, for ranks that share one. */
static int amp_mpi__wait(amp_mpi_exchange *x, amp_mpi__flight *f, amp_mpi__stop *stop)
{
    int n = (int)(2 * f->count);
    *stop = AMP_MPI__FINISHED;
    if (f->complete) return f->complete_rc;
    const double deadline = x->timeout_ms ? amp_mpi__now() + x->timeout_ms * 1e-3 : 0;
    double left_at = 0;
    bool left = false;
    for (unsigned polls = 0;; ++polls) {
        int all = 0, rc = MPI_Testall(n, f->reqs, &all, f->statuses);
        if (rc != MPI_SUCCESS || all) return rc;
        if (x->pipeline) amp_mpi__deliver_arrived(x, f, "amp_mpi_exchange_end");
        amp_mpi__notices_poll(x);
        if (x->gone && amp_mpi__waits_for_the_gone(x, f)) {
            double now = amp_mpi__now();
            if (!left) left_at = now, left = true;
            if (now - left_at >= AMP_MPI__LEFT_GRACE) {
                *stop = AMP_MPI__LEFT_PEER;
                return MPI_SUCCESS;
            }
        }
        if (deadline && amp_mpi__now() >= deadline) {
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
        if (nd < pending_size)
            nd += (size_t)snprintf(pending + nd, pending_size - nd, "%shalo %zu %s rank %d (tag %d)",
                                   nd ? "; " : "", f->orig[i / 2], i & 1 ? "receive from" : "send to", h->peer,
                                   i & 1 ? h->recv_tag : h->send_tag);
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
 * that request's status instead of the end of the job. */
static amp_status amp_mpi__arrivals(amp_mpi__flight *f, int rc, const char *fn)
{
    if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) return amp_mpi__mpi(rc, "MPI_Testall of the exchange's messages");
    for (size_t i = 0; i < f->count; ++i) {
        const amp_mpi_halo *h = &f->halos[i];
        for (int k = 1; k >= 0; --k) {
            const amp_mpi__side *sd = &f->sides[2 * i + (size_t)k];
            if (!sd->posted) continue;
            MPI_Status *stt = &f->statuses[2 * i + (size_t)k];
            int err = rc == MPI_ERR_IN_STATUS ? stt->MPI_ERROR : MPI_SUCCESS, cls = MPI_SUCCESS;
            if (err != MPI_SUCCESS) MPI_Error_class(err, &cls);
            char what[192];
            amp_mpi__name(what, sizeof what, fn, f, 2 * i + (size_t)k);
            if (k == 0 || (cls != MPI_SUCCESS && cls != MPI_ERR_TRUNCATE)) {
                if (err != MPI_SUCCESS) return amp_mpi__mpi(err, what);
                continue;
            }
            /* The byte count MPI saw arrive (on truncation Open MPI and
             * MPICH report the message's own length). */
            int got = -1;
            if (MPI_Get_count(stt, MPI_BYTE, &got) != MPI_SUCCESS || got == MPI_UNDEFINED) got = -1;
            uint64_t elem = sd->bytes / (uint64_t)amp_extent_size(sd->ext);
            if (cls == MPI_ERR_TRUNCATE && (got < 0 || (uint64_t)got <= sd->bytes))
                return amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT,
                                     "%s: rank %d sent more than the %llu bytes (%llu elements of %llu bytes) this "
                                     "receive view holds (MPI_ERR_TRUNCATE); the peer's send view and this receive "
                                     "view must hold the same number of elements",
                                     what, h->peer, (unsigned long long)sd->bytes,
                                     (unsigned long long)(sd->bytes / elem), (unsigned long long)elem);
            if (cls == MPI_ERR_TRUNCATE || (uint64_t)got != sd->bytes)
                return amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT,
                                     "%s: rank %d sent %d bytes (%llu elements of %llu bytes), this receive view holds "
                                     "%llu bytes (%llu elements)%s; the peer's send view and this receive view must "
                                     "hold the same number of elements",
                                     what, h->peer, got, (unsigned long long)((uint64_t)got / elem),
                                     (unsigned long long)elem, (unsigned long long)sd->bytes,
                                     (unsigned long long)(sd->bytes / elem),
                                     cls == MPI_ERR_TRUNCATE ? " (MPI_ERR_TRUNCATE)" : "");
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
    amp_status st = amp_mpi__aside_copy(x->aside, r->dev, f->recv_stage[i].host, (size_t)r->bytes, true, f->mark, ev);
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
 * (its future stays with the record until the record is taken again). */
static amp_status amp_mpi__deliver(amp_mpi_exchange *x, amp_mpi__flight *f, const char *fn)
{
    amp_status st;
    for (size_t i = 0; i < f->count; ++i) {
        amp_mpi__side *r = &f->sides[2 * i + 1];
        if (!r->posted) continue;
        char what[192];
        amp_mpi__name(what, sizeof what, fn, f, 2 * i + 1);
        if (r->how == AMP_MPI__IN_PLACE) {
            if ((st = amp_array_view_refresh(r->v)) != AMP_OK) return amp_mpi__hipamp(st, what);
        } else if (r->how == AMP_MPI__STAGE && !r->delivered && r->aside) {
            if ((st = amp_mpi__copy_up_aside(x, f, i)) != AMP_OK) {
                char msg[AMP_MPI__ERR_SIZE];
                snprintf(msg, sizeof msg, "%s", amp_mpi_last_error());
                return amp_mpi__fail(st, "%s: %s", what, msg);
            }
        } else if (r->how == AMP_MPI__STAGE && !r->delivered) {
            amp_mpi__stage *sg = &f->recv_stage[i];
            if ((st = amp_array_view_refresh(sg->view)) != AMP_OK ||
                (st = amp_copy_view_async(sg->view, r->v, &f->copies[2 * i + 1])) != AMP_OK)
                return amp_mpi__hipamp(st == AMP_ERROR_ARGUMENT_MISMATCH ? AMP_ERROR_INVALID_ARGUMENT : st, what);
        }
    }
    return AMP_OK;
}

/* The pipeline: each staged receive that has arrived whole (its request
 * done, no error, exactly its view's bytes) gets its copy up queued now,
 * while the others are still on their way; amp_mpi__deliver does the rest
 * (and the arrival checks judge the ones left). A failure here is left for
 * the end to find: the receive is then delivered there. Never blocks. */
static void amp_mpi__deliver_arrived(amp_mpi_exchange *x, amp_mpi__flight *f, const char *fn)
{
    for (size_t i = 0; i < f->count; ++i) {
        amp_mpi__side *r = &f->sides[2 * i + 1];
        if (!r->posted || r->delivered || r->how != AMP_MPI__STAGE || f->reqs[2 * i + 1] == MPI_REQUEST_NULL) continue;
        int done = 0, got = -1;
        MPI_Status stt;
        if (MPI_Request_get_status(f->reqs[2 * i + 1], &done, &stt) != MPI_SUCCESS || !done) continue;
        if (MPI_Get_count(&stt, MPI_BYTE, &got) != MPI_SUCCESS || got < 0 || (uint64_t)got != r->bytes) continue;
        amp_mpi__stage *sg = &f->recv_stage[i];
        (void)fn;
        if (r->aside) {
            /* Once queued, a copy is never queued again (a failure to
             * order it was waited out, or is the device's, which the
             * queue's next wait reports). */
            if (amp_mpi__copy_up_aside(x, f, i) == AMP_OK || f->aside_ev[2 * i + 1]) r->delivered = true;
            continue;
        }
        if (amp_array_view_refresh(sg->view) != AMP_OK ||
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

/* The NCCL path's begin after every side was prepared: the packs' copies
 * in are queued already (their futures are not needed: everything runs on
 * q in order), one group of sends and receives, then the unpacks of the
 * strided receives, all on q. A failure after the group was queued breaks
 * the exchanger (its operations may be half queued). */
static amp_status amp_mpi__nccl_post(amp_mpi_exchange *x, amp_mpi__flight *f, const char *fn)
{
    amp_status st = AMP_OK;
    size_t n = 0;
    for (size_t i = 0; i < 2 * f->count; ++i) {
        if (f->copies[i] && (i & 1) == 0) {
            amp_future_destroy(f->copies[i]);
            f->copies[i] = NULL;
        }
        if (f->sides[i].v) n++;
    }
    amp_mpi__nccl_key *keys = malloc((n ? n : 1) * sizeof *keys);
    amp_mpi__nccl_op *ops = malloc((n ? n : 1) * sizeof *ops);
    if (!keys || !ops) {
        free(keys);
        free(ops);
        amp_mpi__flight_release(f);
        x->oldest = x->next_id;
        return amp_mpi__fail(AMP_ERROR_OUT_OF_MEMORY, "%s: no memory", fn);
    }
    n = 0;
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
    free(keys);
    free(ops);
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

/* How a view splits into chunks of at most x->chunk_bytes: along its first
 * dimension longer than 1 (the ones before it are 1, so each chunk is a
 * box of whole rows of that dimension), *per indices a chunk. 1 when it
 * stays whole. */
static size_t amp_mpi__chunk_count(const amp_mpi_exchange *x, amp_array_view *v, amp_extent *ext, int *dim, int *per)
{
    *dim = -1;
    *per = 0;
    if (!v || amp_array_view_get_extent(v, ext) != AMP_OK) return 1;
    uint64_t bytes = (uint64_t)amp_extent_size(*ext) * x->elem;
    if (!x->chunk_bytes || bytes <= x->chunk_bytes) return 1;
    for (int d = 0; d < ext->rank && *dim < 0; ++d)
        if (ext->v[d] > 1) *dim = d;
    if (*dim < 0) return 1;
    uint64_t slab = bytes / (uint64_t)ext->v[*dim];
    uint64_t n = x->chunk_bytes / slab;
    *per = n ? (int)(n < (uint64_t)ext->v[*dim] ? n : (uint64_t)ext->v[*dim]) : 1;
    return (size_t)((ext->v[*dim] + *per - 1) / *per);
}

/* Chunk k of v (see amp_mpi__chunk_count), owned by the record. */
static amp_status amp_mpi__chunk_view(amp_mpi__flight *f, amp_array_view *v, amp_extent ext, int dim, int per, size_t k,
                                      amp_array_view **out, const char *fn)
{
    amp_index origin = {ext.rank, {0}};
    amp_extent e = ext;
    origin.v[dim] = (int)k * per;
    e.v[dim] = ext.v[dim] - origin.v[dim] < per ? ext.v[dim] - origin.v[dim] : per;
    if (f->nowned == f->owned_cap) {
        size_t cap = f->owned_cap ? 2 * f->owned_cap : 8;
        amp_array_view **grown = realloc(f->owned, cap * sizeof *grown);
        if (!grown) return amp_mpi__fail(AMP_ERROR_OUT_OF_MEMORY, "%s: no memory", fn);
        f->owned = grown;
        f->owned_cap = cap;
    }
    amp_status st = amp_array_view_section(v, origin, e, out);
    if (st != AMP_OK) return amp_mpi__hipamp(st, fn);
    f->owned[f->nowned++] = *out;
    return AMP_OK;
}

/* The caller's halos as the record's entries: each halo whole, or (faces
 * over AMP_MPI_CHUNK_BYTES, every path but NCCL) one entry per chunk, the
 * send's and the receive's chunks side by side, in order: the chunks of one
 * halo go to one peer with one tag, so MPI matches them in order. Sets
 * f->count. */
static amp_status amp_mpi__expand(amp_mpi_exchange *x, amp_mpi__flight *f, const amp_mpi_halo *halos, size_t count,
                                  const char *fn)
{
    amp_status st;
    size_t total = 0;
    for (size_t i = 0; i < count; ++i) {
        amp_extent e;
        int d, p;
        size_t ks = 1, kr = 1;
        if (!x->nccl && halos[i].peer != MPI_PROC_NULL) {
            ks = amp_mpi__chunk_count(x, halos[i].send, &e, &d, &p);
            kr = amp_mpi__chunk_count(x, halos[i].recv, &e, &d, &p);
        }
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
        amp_extent es, er;
        int ds = -1, ps = 0, dr = -1, pr = 0;
        size_t ks = 1, kr = 1;
        if (!x->nccl && h->peer != MPI_PROC_NULL) {
            ks = amp_mpi__chunk_count(x, h->send, &es, &ds, &ps);
            kr = amp_mpi__chunk_count(x, h->recv, &er, &dr, &pr);
        }
        size_t k = ks > kr ? ks : kr;
        for (size_t j = 0; j < k; ++j, ++at) {
            f->halos[at] = *h;
            f->orig[at] = i;
            f->part[at] = j;
            f->parts[at] = k;
            if (k == 1) continue;
            f->halos[at].send = f->halos[at].recv = NULL;
            if (h->send && j < ks) {
                if (ks == 1) f->halos[at].send = h->send;
                else if ((st = amp_mpi__chunk_view(f, h->send, es, ds, ps, j, &f->halos[at].send, fn)) != AMP_OK)
                    return st;
            }
            if (h->recv && j < kr) {
                if (kr == 1) f->halos[at].recv = h->recv;
                else if ((st = amp_mpi__chunk_view(f, h->recv, er, dr, pr, j, &f->halos[at].recv, fn)) != AMP_OK)
                    return st;
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
    if ((st = amp_mpi__expand(x, f, halos, count, fn)) != AMP_OK) {
        amp_mpi__flight_release(f);
        return st;
    }
    halos = f->halos;
    count = f->count;
    f->id = x->next_id; /* named in messages; in flight only once posted */

    /* 1. Every view made ready before anything is posted, so that a view
     *    failing its checks leaves no message half sent. */
    bool wait_q = false;
    for (size_t i = 0; i < count; ++i) {
        const amp_mpi_halo *h = &halos[i];
        if (h->peer == MPI_PROC_NULL) continue;
        char what[192];
        if (h->send) {
            f->sides[2 * i].v = h->send;
            amp_mpi__name(what, sizeof what, fn, f, 2 * i);
            if ((st = amp_mpi__prepare(x, &f->sides[2 * i], true, &f->send_stage[i], &f->copies[2 * i], &wait_q,
                                       what)) != AMP_OK)
                goto fail;
        }
        if (h->recv) {
            f->sides[2 * i + 1].v = h->recv;
            amp_mpi__name(what, sizeof what, fn, f, 2 * i + 1);
            if ((st = amp_mpi__prepare(x, &f->sides[2 * i + 1], false, &f->recv_stage[i], &f->copies[2 * i + 1],
                                       &wait_q, what)) != AMP_OK)
                goto fail;
        }
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
        x->next_id++;
        *out = (amp_mpi_pending){f->id};
        st = amp_mpi__nccl_post(x, f, fn);
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
    if (all_posted && !f->complete) {
        int all = 0;
        int rc = MPI_Testall((int)(2 * f->count), f->reqs, &all, f->statuses);
        if (rc != MPI_SUCCESS || all) {
            f->complete = true;
            f->complete_rc = rc;
        }
    }
    *done = f->complete;
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
    if (x->nccl || ((st = amp_mpi__arrivals(f, rc, fn)) == AMP_OK && (st = amp_mpi__deliver(x, f, fn)) == AMP_OK)) {
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
    amp_mpi__flight_release(f);
    return st;
}

amp_status amp_mpi_exchange_end(amp_mpi_exchange *x, amp_mpi_pending p) { return amp_mpi__end(x, p, __func__); }

/* The blocking exchange: a begin and an end, named fn in messages. */
static amp_status amp_mpi__exchange(amp_mpi_exchange *x, const amp_mpi_halo *halos, size_t count, const char *fn)
{
    amp_mpi_pending p;
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
    int rc = MPI_Allreduce(MPI_IN_PLACE, host, (int)count, mt, mpi_op_of[op], x->comm);
    if (rc != MPI_SUCCESS) {
        st = amp_mpi__mpi(rc, "amp_mpi_exchange_allreduce: MPI_Allreduce");
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
