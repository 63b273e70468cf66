/* halo_nccl.c — hipamp::mpi's exchanges on the NCCL path: a record's sides queued as one NCCL group on the queue (strided views packed and unpacked on it), and its end or test. */
#include "halo_private.h"

#include <stdio.h>
#include <stdlib.h>

/* ------------------------------------------------------------- NCCL */
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
amp_status amp_mpi__nccl_post(amp_mpi_exchange *x, amp_mpi__flight *f, amp_mpi__nccl_key *keys,
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

/* q waited for up to x's time-out, a millisecond at a time, this thread's
 * exchanges in flight on its other exchangers progressed in between: a peer
 * may reach its part of the group only after one of those has gone on
 * (its end waits for a message this rank posts only in such progress), and
 * without it both would wait until the time-out. AMP_ERROR_TIMEOUT when q
 * still has work then. */
static amp_status amp_mpi__nccl_wait(amp_mpi_exchange *x)
{
    const double until = amp_mpi__now() + x->timeout_ms / 1000.0;
    for (;;) {
        amp_status w = amp_accelerator_view_wait_for(x->q, 1);
        if (w != AMP_ERROR_TIMEOUT || amp_mpi__now() >= until) return w;
        amp_mpi__progress_others(x);
    }
}

/* The NCCL path's end (or test, when only_look): the group is on q. With a
 * time-out, q is waited for up to it, this thread's other exchanges
 * progressed meanwhile (AMP_ERROR_TIMEOUT then aborts the communicator and
 * breaks the exchanger: the operations may never finish); without one
 * nothing waits, since later work on q runs after the group. An
 * asynchronous NCCL error fails the exchange. */
amp_status amp_mpi__nccl_finish(amp_mpi_exchange *x, amp_mpi__flight *f, bool only_look, bool *done,
                                       const char *fn)
{
    char what[160], msg[AMP_MPI__ERR_SIZE];
    snprintf(what, sizeof what, "%s: exchange #%llu", fn, (unsigned long long)f->id);
    amp_status st = amp_mpi__nccl_check(x->nccl, what);
    if (st == AMP_OK && (only_look || x->timeout_ms)) {
        amp_status w = only_look ? amp_accelerator_view_wait_for(x->q, 0) : amp_mpi__nccl_wait(x);
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
