/* halo.c — hipamp::mpi's halo exchanges, the API: begin (every side planned before any view is touched, made ready, the ready sends posted and the receives whose messages came matched), test and end in the order the exchanges began, the blocking exchange (a begin and an end) and the rows' shorthand. */
#include "halo_private.h"

#include <stdio.h>
#include <stdlib.h>


/* amp_mpi__begin, under x's call lock. */
static amp_status amp_mpi__begin_locked(amp_mpi_exchange *x, const amp_mpi_halo *halos, size_t count,
                                        amp_mpi_pending *out, const char *fn)
{
    amp_status st = AMP_OK;
    amp_mpi__flight *f = NULL;
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
    if ((st = amp_mpi__overlaps(x, f, false, fn)) != AMP_OK) goto fail;
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
    if ((st = amp_mpi__overlaps(x, f, true, fn)) != AMP_OK) goto fail;
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

    /* 2. In flight: each receive is posted once its message is matched
     *    (amp_mpi__match, by this progress and every later one), the sends
     *    in order as their data is ready. */
    x->next_id++;
    for (size_t i = 0; i < count; ++i) f->awaiting += f->sides[2 * i + 1].v != NULL;
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

/* amp_mpi_exchange_begin, its messages naming fn. out->id is 0 unless it
 * succeeded: a begin that fails after posting breaks the exchanger, and
 * its exchange is no longer in flight. */
static amp_status amp_mpi__begin(amp_mpi_exchange *x, const amp_mpi_halo *halos, size_t count, amp_mpi_pending *out,
                                 const char *fn)
{
    if (out) out->id = 0;
    AMP_MPI__LIVE_EXCHANGER(x, fn);
    amp_mpi__enter(x);
    amp_status st = amp_mpi__begin_locked(x, halos, count, out, fn);
    if (st != AMP_OK) out->id = 0;
    amp_mpi__leave(x);
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

/* amp_mpi_exchange_test, under x's call lock. */
static amp_status amp_mpi__test_locked(amp_mpi_exchange *x, amp_mpi_pending p, bool *done)
{
    static const char fn[] = "amp_mpi_exchange_test";
    amp_status st;
    amp_mpi__flight *f = NULL;
    if ((st = amp_mpi__need_mpi(fn)) != AMP_OK) return st;
    if ((st = amp_mpi__pending_of(x, p, &f, fn)) != AMP_OK) return st;
    double t0 = amp_mpi__now();
    if (x->nccl) {
        if ((st = amp_mpi__nccl_finish(x, f, true, done, fn)) != AMP_OK) return st;
        amp_mpi__progress_others(x);
        f->seconds += amp_mpi__now() - t0;
        return AMP_OK;
    }
    if ((st = amp_mpi__progress(x, 0, fn)) != AMP_OK) return st;
    amp_mpi__progress_others(x);
    if (x->pipeline) amp_mpi__deliver_arrived(x, f, fn);
    bool all_posted = true;
    for (size_t i = 0; i < 2 * f->count; i += 2) all_posted &= !f->sides[i].v || f->sides[i].posted;
    amp_mpi__cut_short(x, f);
    if (all_posted && !f->awaiting && !f->complete) {
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

amp_status amp_mpi_exchange_test(amp_mpi_exchange *x, amp_mpi_pending p, bool *done)
{
    if (done) *done = false;
    AMP_MPI__LIVE_EXCHANGER(x, __func__);
    AMP_MPI__NOT_NULL(done);
    amp_mpi__enter(x);
    amp_status st = amp_mpi__test_locked(x, p, done);
    amp_mpi__leave(x);
    return st;
}

/* amp_mpi__end, under x's call lock. */
static amp_status amp_mpi__end_locked(amp_mpi_exchange *x, amp_mpi_pending p, const char *fn)
{
    amp_status st;
    amp_mpi__flight *f = NULL;
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
            st = stop == AMP_MPI__LATE        ? amp_mpi__late(x, f, fn)
                 : stop == AMP_MPI__LEFT_PEER ? amp_mpi__left(x, f, fn)
                                              : f->match_st;
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
        char msg[AMP_MPI__ERR_SIZE], why[MPI_MAX_ERROR_STRING + 64] = "";
        if (!mpi_failed && f->drain_rc != MPI_SUCCESS) {
            /* A drain whose MPI call failed says how, as every MPI failure does. */
            char mpi_says[MPI_MAX_ERROR_STRING] = "";
            int len = 0;
            if (MPI_Error_string(f->drain_rc, mpi_says, &len) != MPI_SUCCESS)
                snprintf(mpi_says, sizeof mpi_says, "MPI error %d", f->drain_rc);
            snprintf(why, sizeof why, " (taking them, %s failed: %s)", f->drain_call, mpi_says);
        }
        snprintf(msg, sizeof msg, "%.600s; %s%s, so this exchanger refuses further exchanges: destroy it",
                 amp_mpi_last_error(),
                 mpi_failed ? "the exchange's messages are in an undefined state"
                            : "messages of a face sent in chunks may be left over", why);
        amp_mpi__fail(st, "%s", msg);
        amp_mpi__break(x, st, msg);
    }
    amp_mpi__flight_release(f);
    return st;
}

/* amp_mpi_exchange_end, its messages naming fn. */
static amp_status amp_mpi__end(amp_mpi_exchange *x, amp_mpi_pending p, const char *fn)
{
    AMP_MPI__LIVE_EXCHANGER(x, fn);
    amp_mpi__enter(x);
    amp_status st = amp_mpi__end_locked(x, p, fn);
    amp_mpi__leave(x);
    return st;
}

amp_status amp_mpi_exchange_end(amp_mpi_exchange *x, amp_mpi_pending p) { return amp_mpi__end(x, p, __func__); }

/* The blocking exchange: a begin and an end, named fn in messages, under
 * one hold of the call lock. */
static amp_status amp_mpi__exchange(amp_mpi_exchange *x, const amp_mpi_halo *halos, size_t count, const char *fn)
{
    amp_mpi_pending p = {0};
    AMP_MPI__LIVE_EXCHANGER(x, fn);
    amp_mpi__enter(x);
    amp_status st;
    /* Its end would not be the oldest's, and be refused: the exchange would
     * stay in flight on the caller's views with no handle to end it by. */
    if (x->oldest != x->next_id && !x->broken[0])
        st = amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT,
                           "%s: exchange #%llu, begun on this exchanger, is still in flight, and exchanges end in "
                           "the order they began: end it (amp_mpi_exchange_end) before a blocking exchange",
                           fn, (unsigned long long)x->oldest);
    else if ((st = amp_mpi__begin_locked(x, halos, count, &p, fn)) == AMP_OK)
        st = amp_mpi__end_locked(x, p, fn);
    amp_mpi__leave(x);
    return st;
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
