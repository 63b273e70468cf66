/* allreduce.c — hipamp::mpi's all-reduce of a view: NCCL on the device, else MPI through the host, with the exchanger's time-out and its peers' leaving notices. */
#include "halo_private.h"

#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* ---------------------------------------------------------- all-reduce */

/* The exchanges in flight, this exchanger's and this thread's others',
 * progressed while the all-reduce waits (a peer may join it only once its
 * own exchange with this rank went on). A failure breaks its exchanger,
 * found by that exchanger's next call; the all-reduce goes on, since the
 * other ranks wait for it, and this thread's message is kept. */
static void amp_mpi__progress_during_reduce(amp_mpi_exchange *x)
{
    if (x->oldest != x->next_id && !x->broken[0] && !x->nccl) {
        char kept[AMP_MPI__ERR_SIZE];
        snprintf(kept, sizeof kept, "%s", amp_mpi_last_error());
        (void)amp_mpi__progress(x, 0, "amp_mpi_exchange_allreduce (progressing a begun exchange)");
        amp_mpi__fail(AMP_OK, "%s", kept);
    }
    amp_mpi__progress_others(x);
}

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
        amp_mpi__progress_during_reduce(x);
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

static amp_status amp_mpi__allreduce_locked(amp_mpi_exchange *x, amp_array_view *v, amp_mpi_type type, amp_mpi_op op)
{
    static const char fn[] = "amp_mpi_exchange_allreduce";
    static const size_t sizes[] = {8, 4, 4, 8};
    amp_status st;
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
    /* Before joining: a rank that refuses never joins (hipamp_mpi.h); the
     * result's copy back would refuse it only after the reduction. */
    amp_access access = AMP_READ_WRITE;
    if ((st = amp_array_view_get_access(v, &access)) != AMP_OK) return amp_mpi__hipamp(st, fn);
    if (access == AMP_READ_ONLY)
        return amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT,
                             "%s: the view is AMP_READ_ONLY, and the reduction writes its result into it", fn);
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

amp_status amp_mpi_exchange_allreduce(amp_mpi_exchange *x, amp_array_view *v, amp_mpi_type type, amp_mpi_op op)
{
    AMP_MPI__LIVE_EXCHANGER(x, "amp_mpi_exchange_allreduce");
    AMP_MPI__NOT_NULL(v);
    amp_mpi__enter(x);
    amp_status st = amp_mpi__allreduce_locked(x, v, type, op);
    amp_mpi__leave(x);
    return st;
}
