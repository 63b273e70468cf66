/* halo_flight.c — hipamp::mpi's exchange records (amp_mpi__flight): taken, grown, released and freed with their staging buffers and copies; and giving up: an exchange abandoned, the exchanger broken. */
#include "halo_private.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Records kept free beyond this many are waited for instead of added to. */
#define AMP_MPI__SPARE_FLIGHTS 4
/* ------------------------------------------------------------- records */

/* Waits for a record's copies (hipamp's and the copy stream's) and forgets
 * them, and its mark (the first failure is returned, after all were waited
 * for). */
amp_status amp_mpi__copies_drain(amp_mpi_exchange *x, amp_mpi__flight *f)
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
amp_status amp_mpi__flight_grow(amp_mpi__flight *f, size_t n)
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
amp_status amp_mpi__flight_take(amp_mpi_exchange *x, size_t count, amp_mpi__flight **out)
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
    f->drain_rc = MPI_SUCCESS;
    f->awaiting = 0;
    f->match_st = AMP_OK;
    f->seconds = 0;
    for (size_t i = 0; i < 2 * count; ++i) {
        f->sides[i] = AMP_MPI__SIDE_NONE;
        f->reqs[i] = MPI_REQUEST_NULL;
    }
    *out = f;
    return AMP_OK;
}

/* The record no longer carries an exchange (its staging buffers and copies
 * back stay). */
void amp_mpi__flight_release(amp_mpi__flight *f)
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
amp_mpi__flight *amp_mpi__flight_of(amp_mpi_exchange *x, uint64_t id)
{
    for (size_t i = 0; i < x->nflights; ++i)
        if (x->flights[i]->id == id) return x->flights[i];
    return NULL;
}

/* ------------------------------------------------------- giving up */

/* The requests of an exchange that will not complete normally (a
 * time-out, a failed post or copy), in three steps that amp_mpi__break
 * takes for every exchange in flight at once. A send cannot be withdrawn
 * once MPI has it (MPI 4 deprecates cancelling sends; Open MPI ignores
 * it): an unfinished one's request is freed, and MPI may still read its
 * buffer, so a staging buffer under it is never freed. Receives are
 * cancelled and waited for, so that their buffers are free again, but for
 * AMP_MPI__LEFT_GRACE at most, counted once for all the exchanges: a
 * receive already matched to its message (every posted one is,
 * amp_mpi__match) cannot be cancelled, and finishes only once its peer
 * sent the rest, which a peer stuck in other work may not do for as long
 * as it likes; waiting for it made a time-out no bound. One still open
 * then is freed and left to MPI, which may still write its buffer: a
 * staging buffer or a sink under it is never freed, and a view in place
 * may still be written (the messages and the header say so). */

/* Step 1: the sends given up, the receives cancelled; whether one of
 * those is still open. */
static bool amp_mpi__abandon_cancel(amp_mpi__flight *f)
{
    bool open = false;
    for (size_t i = 0; i < 2 * f->count; ++i) {
        amp_mpi__side *sd = &f->sides[i];
        if (!sd->posted || f->reqs[i] == MPI_REQUEST_NULL) continue;
        MPI_Status ignored;
        int done = 0;
        if (i & 1) {
            MPI_Cancel(&f->reqs[i]);
            open = true;
        } else if (MPI_Test(&f->reqs[i], &done, &ignored) != MPI_SUCCESS || !done) {
            MPI_Request_free(&f->reqs[i]);
            if (sd->how == AMP_MPI__STAGE) f->send_stage[i / 2 - sd->chunk].lent = true; /* its face's */
        }
    }
    return open;
}

/* Step 2: whether a cancelled receive of f is still open (those that
 * finished are done with). */
static bool amp_mpi__abandon_open(amp_mpi__flight *f)
{
    bool open = false;
    for (size_t i = 1; i < 2 * f->count; i += 2) {
        int done = 0;
        if (f->reqs[i] == MPI_REQUEST_NULL) continue;
        if (MPI_Test(&f->reqs[i], &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) f->reqs[i] = MPI_REQUEST_NULL;
        else open |= !done;
    }
    return open;
}

/* Step 3: the receives still open left to MPI, the drains stopped, the
 * staging copies of unposted sends waited for, the record released. */
static void amp_mpi__abandon_finish(amp_mpi_exchange *x, amp_mpi__flight *f)
{
    for (size_t i = 1; i < 2 * f->count; i += 2) {
        amp_mpi__side *r = &f->sides[i];
        if (f->reqs[i] == MPI_REQUEST_NULL) continue;
        MPI_Request_free(&f->reqs[i]);
        if (r->how == AMP_MPI__STAGE) f->recv_stage[i / 2 - r->chunk].lent = true; /* its face's */
        r->sink = NULL; /* MPI's now */
    }
    amp_mpi__drains_stop(f);
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
 * receive. Blocks for AMP_MPI__LEFT_GRACE at most (besides the staging
 * copies of unposted sends). Returns st. */
amp_status amp_mpi__break(amp_mpi_exchange *x, amp_status st, const char *why)
{
    bool open = false;
    for (size_t i = 0; i < x->nflights; ++i)
        if (x->flights[i]->id) open |= amp_mpi__abandon_cancel(x->flights[i]);
    const double until = amp_mpi__now() + AMP_MPI__LEFT_GRACE;
    for (unsigned polls = 0; open; ++polls) {
        open = false;
        for (size_t i = 0; i < x->nflights; ++i)
            if (x->flights[i]->id) open |= amp_mpi__abandon_open(x->flights[i]);
        if (!open || amp_mpi__now() >= until) break;
        if (polls >= 64) sched_yield();
    }
    for (size_t i = 0; i < x->nflights; ++i)
        if (x->flights[i]->id) amp_mpi__abandon_finish(x, x->flights[i]);
    x->oldest = x->next_id;
    snprintf(x->broken, sizeof x->broken, "%s", why);
    return st;
}

amp_status amp_mpi__refuse_if_broken(const amp_mpi_exchange *x, const char *fn)
{
    if (!x->broken[0]) return AMP_OK;
    return amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT,
                         "%s: an earlier exchange of this exchanger was abandoned, so its messages are undefined; "
                         "destroy it (it said: %s)",
                         fn, x->broken);
}
