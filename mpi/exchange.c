/* exchange.c — hipamp::mpi's exchanger: its creation (a duplicated communicator that returns errors, ranks agreeing on the element size, the chunk size and whether they use NCCL; the NCCL communicator made, or every rank falling back to staged), path, statistics, time-out (AMP_MPI_TIMEOUT its default) and destroy; its exchanges are halo.c's (and its neighbours', halo_private.h), its all-reduces allreduce.c's, its leaving notices leave.c's, its NCCL calls nccl.c's. */
#include "exchange_state.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The largest element: one MPI message (INT32_MAX bytes at most, its count
 * an int) must hold it. Larger sizes are refused before the ranks compare
 * theirs, which are then sure to fit a long and its negation. */
#define AMP_MPI__ELEM_MAX INT32_MAX

/* Every rank's set-up, compared (collective over x->comm: one
 * all-reduce of eight (value, rank) pairs, during which this thread's
 * exchanges in flight progress, amp_mpi__await). A rank whose own set-up
 * failed keeps its status and message; the others fail naming it, so that
 * every rank returns the same verdict. Element sizes must agree: a 4-byte
 * exchanger and an 8-byte one would move the same bytes and read them as
 * different types. */
static amp_status amp_mpi__agree(amp_mpi_exchange *x, amp_status mine, amp_mpi_path path)
{
    struct {
        long value;
        int rank;
    } in[8], least[8];
    int rc, me = 0;
    MPI_Comm_rank(x->comm, &me);
    /* MPI_MINLOC of the element size, of its negation (the largest), of
     * "set up" (0 where a rank failed), of "chose NCCL" and its negation,
     * and of the path itself, each with the lowest rank holding it. */
    const long nccl = path == AMP_MPI_PATH_NCCL;
    in[0].value = (long)x->elem;
    in[1].value = -(long)x->elem;
    in[2].value = mine == AMP_OK;
    in[3].value = nccl;
    in[4].value = -nccl;
    in[5].value = (long)path;
    in[6].value = (long)x->chunk_bytes;
    in[7].value = -(long)x->chunk_bytes;
    for (int i = 0; i < 8; ++i) in[i].rank = me;
    MPI_Request req = MPI_REQUEST_NULL;
    if ((rc = MPI_Iallreduce(in, least, 8, MPI_LONG_INT, MPI_MINLOC, x->comm, &req)) == MPI_SUCCESS)
        rc = amp_mpi__await(&req, NULL);
    if (rc != MPI_SUCCESS)
        return amp_mpi__mpi(rc, "amp_mpi_exchange_create: MPI_Iallreduce of the ranks' element sizes and paths");
    if (mine != AMP_OK) return mine;
    if (!least[2].value)
        return amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT,
                             "amp_mpi_exchange_create: rank %d of %d could not create its exchanger (its "
                             "amp_mpi_last_error() says why), so no rank has one",
                             least[2].rank, x->size);
    if (least[0].value != -least[1].value) {
        /* The other size: the smallest unless this rank has it. */
        bool smallest = least[0].value == (long)x->elem;
        long other = smallest ? -least[1].value : least[0].value;
        int who = smallest ? least[1].rank : least[0].rank;
        return amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT,
                             "amp_mpi_exchange_create: this rank (%d) exchanges %zu-byte elements, rank %d %ld-byte "
                             "elements: every rank of the communicator must use one element size",
                             me, x->elem, who, other);
    }
    if (least[6].value != -least[7].value) {
        bool smallest = least[6].value == (long)x->chunk_bytes;
        return amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT,
                             "amp_mpi_exchange_create: this rank (%d) has AMP_MPI_CHUNK_BYTES %llu, rank %d %ld: "
                             "every rank must split faces alike",
                             me, (unsigned long long)x->chunk_bytes, smallest ? least[7].rank : least[6].rank,
                             smallest ? -least[7].value : least[6].value);
    }
    if (least[3].value != -least[4].value) {
        /* Some ranks chose NCCL, others not: their messages would never
         * meet. The other side: an NCCL rank for a rank without, else the
         * rank with the smallest path (not NCCL). */
        int who = nccl ? least[5].rank : least[4].rank;
        amp_mpi_path other = nccl ? (amp_mpi_path)least[5].value : AMP_MPI_PATH_NCCL;
        return amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT,
                             "amp_mpi_exchange_create: this rank (%d) chose the %s path, rank %d the %s path: NCCL "
                             "and MPI messages never meet, so every rank of the communicator must choose nccl or "
                             "every rank another path (AMP_MPI_PATH, or the path argument)",
                             me, amp_mpi_path_name(path), who, amp_mpi_path_name(other));
    }
    return AMP_OK;
}

/* Every rank chose NCCL: its communicator, made collectively. When any
 * rank could not make its own (no GPU for it, two ranks on one GPU, a
 * library that fails), every rank frees what it made and falls back to the
 * staged path, with a warning on stderr and the reason in its path: the
 * ranks agree (one MPI_Allreduce) before any of them uses NCCL, so none
 * waits in an NCCL call for a rank that gave up. */
static amp_status amp_mpi__nccl_start(amp_mpi_exchange *x, char vendor)
{
    void *stream = NULL;
    amp_status st = amp_accelerator_view_native_queue(x->q, &stream);
    if (st != AMP_OK) amp_mpi__hipamp(st, "amp_mpi_exchange_create: amp_accelerator_view_native_queue");
    /* Every rank goes through the bootstrap whatever its own state, so that
     * the collective calls in it match. */
    amp_status mine = amp_mpi__nccl_open(x->comm, vendor, stream, &x->nccl);
    if (st == AMP_OK) st = mine;
    x->nccl_sync = stream == NULL;
    char why[AMP_MPI__ERR_SIZE];
    snprintf(why, sizeof why, "%s", st == AMP_OK ? "" : amp_mpi_last_error());
    struct {
        int value;
        int rank;
    } in = {st == AMP_OK, x->rank}, least;
    MPI_Request req = MPI_REQUEST_NULL;
    int rc = MPI_Iallreduce(&in, &least, 1, MPI_2INT, MPI_MINLOC, x->comm, &req);
    if (rc == MPI_SUCCESS) rc = amp_mpi__await(&req, NULL);
    if (rc != MPI_SUCCESS) {
        amp_mpi__nccl_close(x->nccl, true);
        x->nccl = NULL;
        return amp_mpi__mpi(rc, "amp_mpi_exchange_create: MPI_Iallreduce of the NCCL start");
    }
    if (least.value) return AMP_OK;
    /* Aborted, not destroyed: a destroy may wait for peers that never
     * finished their own. */
    amp_mpi__nccl_close(x->nccl, true);
    x->nccl = NULL;
    char reason[sizeof x->path.reason];
    if (st != AMP_OK)
        snprintf(reason, sizeof reason,
                 "NCCL was chosen (%.80s), but its communicator could not be made on this rank (%d): %.220s; every rank "
                 "falls back to the staged path",
                 x->path.nccl, x->rank, why);
    else
        snprintf(reason, sizeof reason,
                 "NCCL was chosen (%.100s), but rank %d could not make its communicator (its warning says why); every "
                 "rank falls back to the staged path",
                 x->path.nccl, least.rank);
    fprintf(stderr, "hipamp::mpi: warning: rank %d: %s\n", x->rank, reason);
    snprintf(x->path.reason, sizeof x->path.reason, "%s", reason);
    x->path.path = AMP_MPI_PATH_STAGED;
    x->path.fell_back = true;
    return AMP_OK;
}

/* AMP_MPI_STAGED_PIPELINE: off turns the staged path's pipeline off. */
static bool amp_mpi__pipeline_from_env(void) { return !amp_mpi__env_off("AMP_MPI_STAGED_PIPELINE"); }

/* The whole number in the environment variable name (0 when unset) into
 * *out; a value that is not a number from lo to hi (0 always allowed) is
 * AMP_ERROR_INVALID_ARGUMENT naming it and what it means (what). */
static amp_status amp_mpi__count_from_env(const char *name, unsigned long long lo, unsigned long long hi,
                                          const char *what, unsigned long long *out)
{
    const char *v = amp_mpi__env(name);
    *out = 0;
    if (!v) return AMP_OK;
    char *end = NULL;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (*v < '0' || *v > '9' || *end || errno || (n && n < lo) || n > hi)
        return amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_mpi_exchange_create: %s is \"%s\": %s", name, v, what);
    *out = n;
    return AMP_OK;
}

/* AMP_MPI_CHUNK_BYTES: the chunk size of faces (0 or unset: none; at
 * least 4096 otherwise). */
static amp_status amp_mpi__chunk_from_env(uint64_t *bytes)
{
    unsigned long long n = 0;
    amp_status st = amp_mpi__count_from_env("AMP_MPI_CHUNK_BYTES", 4096, 1ull << 30,
                                            "0 (no chunks) or 4096 to 1073741824 bytes", &n);
    *bytes = n;
    return st;
}

/* AMP_MPI_TIMEOUT: the time-out of new exchangers, in milliseconds (0 or
 * unset: none). */
static amp_status amp_mpi__timeout_from_env(uint32_t *ms)
{
    unsigned long long n = 0;
    amp_status st = amp_mpi__count_from_env("AMP_MPI_TIMEOUT", 0, UINT32_MAX,
                                            "not a number of milliseconds (0 to 4294967295)", &n);
    *ms = (uint32_t)n;
    return st;
}

amp_status amp_mpi_exchange_create(MPI_Comm comm, amp_accelerator_view *q, size_t elem_size, amp_mpi_path path,
                                   amp_mpi_exchange **out)
{
    amp_status st = AMP_OK, mine = AMP_OK;
    amp_mpi_exchange *x = NULL;
    amp_accelerator *acc = NULL;
    amp_accelerator_info info;
    MPI_Comm dup = MPI_COMM_NULL;
    int rc;
    if (out) *out = NULL;
    if ((st = amp_mpi__need_mpi(__func__)) != AMP_OK) return st;
    if ((st = amp_mpi__intra(comm, __func__)) != AMP_OK) return st;
    /* This rank's own set-up; whatever fails (out NULL too), it still
     * takes part in the collective calls below, so that no rank is left
     * waiting in them. */
    if (!out) mine = amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: out is NULL", __func__);
    else if (elem_size == 0) mine = amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: elem_size is 0", __func__);
    else if (elem_size > AMP_MPI__ELEM_MAX)
        mine = amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT,
                             "%s: elem_size is %zu bytes; an element takes at most %d (a message is at most %d bytes)",
                             __func__, elem_size, AMP_MPI__ELEM_MAX, INT32_MAX);
    else if (!(x = amp_mpi__shell_take())) mine = amp_mpi__fail(AMP_ERROR_OUT_OF_MEMORY, "%s: no memory", __func__);
    else if (!q && ((st = amp_accelerator_default(&acc)) != AMP_OK || (st = amp_accelerator_default_view(acc, &q)) != AMP_OK))
        mine = amp_mpi__hipamp(st, "amp_mpi_exchange_create: the default view");
    else if (q && (st = amp_accelerator_view_get_accelerator(q, &acc)) != AMP_OK)
        mine = amp_mpi__hipamp(st, "amp_mpi_exchange_create: amp_accelerator_view_get_accelerator");
    else if ((st = amp_accelerator_get_info(acc, &info)) != AMP_OK)
        mine = amp_mpi__hipamp(st, "amp_mpi_exchange_create: amp_accelerator_get_info");
    else if ((mine = amp_mpi_choose_path(acc, path, &x->path)) == AMP_OK &&
             (mine = amp_mpi__timeout_from_env(&x->timeout_ms)) == AMP_OK &&
             (mine = amp_mpi__chunk_from_env(&x->chunk_bytes)) == AMP_OK)
        mine = amp_mpi__notices_hook();
    if (x) x->notice_req = MPI_REQUEST_NULL;
    char mine_msg[AMP_MPI__ERR_SIZE];
    snprintf(mine_msg, sizeof mine_msg, "%s", amp_mpi_last_error());
    /* (Non-blocking, so that this thread's exchanges in flight progress
     * while the ranks meet: a peer may join only once one of them went on.) */
    MPI_Request dup_req = MPI_REQUEST_NULL;
    if ((rc = MPI_Comm_idup(comm, &dup, &dup_req)) == MPI_SUCCESS) rc = amp_mpi__await(&dup_req, NULL);
    if (rc != MPI_SUCCESS) {
        dup = MPI_COMM_NULL;
        st = amp_mpi__mpi(rc, "MPI_Comm_idup");
        goto fail;
    }
    /* The exchanger's errors come back as statuses (a message longer than
     * its receive view, a failed peer) instead of ending the job. */
    if ((rc = MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN)) != MPI_SUCCESS) {
        st = amp_mpi__mpi(rc, "MPI_Comm_set_errhandler(MPI_ERRORS_RETURN)");
        goto fail;
    }
    /* (A refused size is not compared: the ranks see this rank fail.) */
    amp_mpi_exchange probe = {.comm = dup,
                              .elem = elem_size <= AMP_MPI__ELEM_MAX ? elem_size : 0,
                              .chunk_bytes = mine == AMP_OK ? x->chunk_bytes : 0};
    MPI_Comm_size(dup, &probe.size);
    amp_mpi_path chosen = mine == AMP_OK ? x->path.path : AMP_MPI_PATH_AUTO;
    if (mine == AMP_OK) {
        /* Its receive of notices is posted before the ranks agree: once a
         * rank has its exchanger, every peer's notice has a receive. */
        x->comm = dup;
        x->size = probe.size;
        MPI_Comm_rank(dup, &x->rank);
        if ((mine = amp_mpi__notices_open(x)) != AMP_OK)
            snprintf(mine_msg, sizeof mine_msg, "%s", amp_mpi_last_error());
    }
    if (mine != AMP_OK) amp_mpi__fail(mine, "%s", mine_msg);
    if ((st = amp_mpi__agree(&probe, mine, chosen)) != AMP_OK) goto fail;
    x->elem = elem_size;
    x->q = q;
    x->host_memory = info.is_emulated;
    x->pipeline = amp_mpi__pipeline_from_env();
    /* Every rank chose NCCL (the agreement saw to that), or none did. */
    if (x->path.path == AMP_MPI_PATH_NCCL && (st = amp_mpi__nccl_start(x, amp_mpi__vendor(&info))) != AMP_OK)
        goto fail;
    /* The staged path's copy stream (also after a fall-back from NCCL).
     * Only this rank's business: without one, the copies run on q. */
    void *stream = NULL;
    if (x->path.path == AMP_MPI_PATH_STAGED && x->pipeline && !x->host_memory &&
        amp_accelerator_view_native_queue(q, &stream) == AMP_OK && stream &&
        amp_mpi__aside_open(amp_mpi__vendor(&info), stream, &x->aside) != AMP_OK)
        x->aside = NULL;
    x->next_id = x->oldest = 1;
    x->tag = AMP_MPI__LIVE;
    amp_mpi__notices_join(x);
    *out = x;
    return AMP_OK;
fail:
    if (x) amp_mpi__notices_abort(x);
    if (dup != MPI_COMM_NULL) MPI_Comm_free(&dup);
    amp_mpi__shell_give(x);
    return st;
}

amp_status amp_mpi_exchange_get_path(const amp_mpi_exchange *x, amp_mpi_path_info *out)
{
    if (out) memset(out, 0, sizeof *out);
    AMP_MPI__NOT_NULL(out);
    AMP_MPI__LIVE_EXCHANGER(x, __func__);
    *out = x->path;
    return AMP_OK;
}

amp_status amp_mpi_exchange_destroy(amp_mpi_exchange *x)
{
    if (!x) return AMP_OK;
    AMP_MPI__LIVE_EXCHANGER(x, __func__);
    amp_mpi__enter(x);
    /* An exchange in flight has its messages and buffers with MPI. After an
     * abandoned exchange none is in flight any more. */
    if (x->oldest != x->next_id && !x->broken[0]) {
        amp_mpi__leave(x);
        return amp_mpi__fail(AMP_ERROR_BUSY, "amp_mpi_exchange_destroy: exchange #%llu is still in flight: end it first",
                             (unsigned long long)x->oldest);
    }
    amp_status st = amp_mpi__flights_free(x);
    amp_mpi__aside_close(x->aside);
    x->aside = NULL;
    /* An abandoned exchange may have left NCCL work that never completes. */
    amp_mpi__nccl_close(x->nccl, x->broken[0] != 0);
    x->nccl = NULL;
    /* Nothing is in flight now, so a progress that takes the call lock
     * before notices_leave unlinks x leaves it alone. */
    amp_mpi__leave(x);
    amp_mpi__notices_leave(x);
    return st;
}

amp_status amp_mpi_exchange_set_timeout(amp_mpi_exchange *x, uint32_t ms)
{
    AMP_MPI__LIVE_EXCHANGER(x, __func__);
    amp_mpi__enter(x);
    x->timeout_ms = ms;
    amp_mpi__leave(x);
    return AMP_OK;
}

amp_status amp_mpi_exchange_get_stats(const amp_mpi_exchange *x, amp_mpi_exchange_stats *out)
{
    if (out) memset(out, 0, sizeof *out);
    AMP_MPI__NOT_NULL(out);
    AMP_MPI__LIVE_EXCHANGER(x, __func__);
    *out = x->stats;
    return AMP_OK;
}

amp_status amp_mpi_exchange_reset_stats(amp_mpi_exchange *x)
{
    AMP_MPI__LIVE_EXCHANGER(x, __func__);
    amp_mpi__enter(x);
    memset(&x->stats, 0, sizeof x->stats);
    amp_mpi__leave(x);
    return AMP_OK;
}

