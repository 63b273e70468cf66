/* exchange.c — hipamp::mpi's halo exchange: the exchanger (a duplicated communicator, its path and the STAGED path's host buffers, statistics) and exchanges of array_view sections by device pointer, host memory in place, or host staging. */
#include "mpi_private.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A host staging buffer of the STAGED path, viewed with the extent of the
 * section it mirrors. Reused while that extent stays the same. */
typedef struct amp_mpi__stage {
    void *host;
    size_t bytes;
    amp_extent ext;
    amp_array_view *view;
    bool lent; /* an abandoned send may still read host: never freed */
} amp_mpi__stage;

struct amp_mpi_exchange {
    MPI_Comm comm; /* a duplicate of the caller's */
    int size;
    amp_accelerator_view *q;
    bool host_memory; /* q's accelerator keeps arrays in host memory */
    size_t elem;
    amp_mpi_path_info path;
    amp_mpi__stage *send_stage, *recv_stage; /* one per halo slot */
    size_t nstage;
    amp_mpi_exchange_stats stats;
    uint32_t timeout_ms; /* 0: wait for ever */
    /* Set when an exchange was abandoned (a time-out, a failed post): its
     * messages are undefined, so the exchanger only refuses from then on. */
    char broken[AMP_MPI__ERR_SIZE];
};

/* Every rank's set-up, compared (collective over x->comm: one
 * MPI_Allreduce of three (value, rank) pairs). A rank whose own set-up
 * failed keeps its status and message; the others fail naming it, so that
 * every rank returns the same verdict. Element sizes must agree: a 4-byte
 * exchanger and an 8-byte one would move the same bytes and read them as
 * different types. */
static amp_status amp_mpi__agree(amp_mpi_exchange *x, amp_status mine)
{
    struct {
        long value;
        int rank;
    } in[3], least[3];
    int rc, me = 0;
    MPI_Comm_rank(x->comm, &me);
    /* MPI_MINLOC of the element size, of its negation (the largest) and of
     * "set up" (0 where a rank failed), each with the lowest rank holding it. */
    in[0].value = (long)x->elem;
    in[1].value = -(long)x->elem;
    in[2].value = mine == AMP_OK;
    for (int i = 0; i < 3; ++i) in[i].rank = me;
    if ((rc = MPI_Allreduce(in, least, 3, MPI_LONG_INT, MPI_MINLOC, x->comm)) != MPI_SUCCESS)
        return amp_mpi__mpi(rc, "amp_mpi_exchange_create: MPI_Allreduce of the ranks' element sizes");
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
    return AMP_OK;
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
    AMP_MPI__NOT_NULL(out);
    if ((st = amp_mpi__need_mpi(__func__)) != AMP_OK) return st;
    if (comm == MPI_COMM_NULL) return amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: comm is MPI_COMM_NULL", __func__);
    /* This rank's own set-up; whatever fails, it still takes part in the
     * collective calls below, so that no rank is left waiting in them. */
    if (elem_size == 0) mine = amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: elem_size is 0", __func__);
    else if (!(x = calloc(1, sizeof *x))) mine = amp_mpi__fail(AMP_ERROR_OUT_OF_MEMORY, "%s: no memory", __func__);
    else if (!q && ((st = amp_accelerator_default(&acc)) != AMP_OK || (st = amp_accelerator_default_view(acc, &q)) != AMP_OK))
        mine = amp_mpi__hipamp(st, "amp_mpi_exchange_create: the default view");
    else if (q && (st = amp_accelerator_view_get_accelerator(q, &acc)) != AMP_OK)
        mine = amp_mpi__hipamp(st, "amp_mpi_exchange_create: amp_accelerator_view_get_accelerator");
    else if ((st = amp_accelerator_get_info(acc, &info)) != AMP_OK)
        mine = amp_mpi__hipamp(st, "amp_mpi_exchange_create: amp_accelerator_get_info");
    else
        mine = amp_mpi_choose_path(acc, path, &x->path);
    char mine_msg[AMP_MPI__ERR_SIZE];
    snprintf(mine_msg, sizeof mine_msg, "%s", amp_mpi_last_error());
    if ((rc = MPI_Comm_dup(comm, &dup)) != MPI_SUCCESS) {
        dup = MPI_COMM_NULL;
        st = amp_mpi__mpi(rc, "MPI_Comm_dup");
        goto fail;
    }
    /* The exchanger's errors come back as statuses (a message longer than
     * its receive view, a failed peer) instead of ending the job. */
    if ((rc = MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN)) != MPI_SUCCESS) {
        st = amp_mpi__mpi(rc, "MPI_Comm_set_errhandler(MPI_ERRORS_RETURN)");
        goto fail;
    }
    amp_mpi_exchange probe = {.comm = dup, .elem = elem_size};
    MPI_Comm_size(dup, &probe.size);
    if (mine != AMP_OK) amp_mpi__fail(mine, "%s", mine_msg);
    if ((st = amp_mpi__agree(&probe, mine)) != AMP_OK) goto fail;
    x->comm = dup;
    x->size = probe.size;
    x->elem = elem_size;
    x->q = q;
    x->host_memory = info.is_emulated;
    *out = x;
    return AMP_OK;
fail:
    if (dup != MPI_COMM_NULL) MPI_Comm_free(&dup);
    free(x);
    return st;
}

amp_status amp_mpi_exchange_get_path(const amp_mpi_exchange *x, amp_mpi_path_info *out)
{
    if (out) memset(out, 0, sizeof *out);
    AMP_MPI__NOT_NULL(out);
    AMP_MPI__NOT_NULL(x);
    *out = x->path;
    return AMP_OK;
}

static amp_status amp_mpi__stage_release(amp_mpi__stage *s)
{
    amp_status st = amp_array_view_destroy(s->view);
    if (!s->lent) free(s->host);
    memset(s, 0, sizeof *s);
    return st;
}

amp_status amp_mpi_exchange_destroy(amp_mpi_exchange *x)
{
    amp_status st = AMP_OK;
    if (!x) return AMP_OK;
    for (size_t i = 0; i < x->nstage; ++i) {
        amp_status a = amp_mpi__stage_release(&x->send_stage[i]);
        amp_status b = amp_mpi__stage_release(&x->recv_stage[i]);
        if (st == AMP_OK && a != AMP_OK) st = amp_mpi__hipamp(a, "amp_mpi_exchange_destroy: a staging view");
        if (st == AMP_OK && b != AMP_OK) st = amp_mpi__hipamp(b, "amp_mpi_exchange_destroy: a staging view");
    }
    free(x->send_stage);
    free(x->recv_stage);
    /* MPI_Comm_free is collective in the standard: after an abandoned
     * exchange a peer may be gone, so the communicator is left to MPI. */
    int fin = 0;
    MPI_Finalized(&fin);
    if (!fin && !x->broken[0] && x->comm != MPI_COMM_NULL) MPI_Comm_free(&x->comm);
    free(x);
    return st;
}

amp_status amp_mpi_exchange_set_timeout(amp_mpi_exchange *x, uint32_t ms)
{
    AMP_MPI__NOT_NULL(x);
    x->timeout_ms = ms;
    return AMP_OK;
}

amp_status amp_mpi_exchange_get_stats(const amp_mpi_exchange *x, amp_mpi_exchange_stats *out)
{
    if (out) memset(out, 0, sizeof *out);
    AMP_MPI__NOT_NULL(out);
    AMP_MPI__NOT_NULL(x);
    *out = x->stats;
    return AMP_OK;
}

amp_status amp_mpi_exchange_reset_stats(amp_mpi_exchange *x)
{
    AMP_MPI__NOT_NULL(x);
    memset(&x->stats, 0, sizeof x->stats);
    return AMP_OK;
}

/* How one side (send or recv) of one halo moves. */
typedef enum amp_mpi__how {
    AMP_MPI__NONE = 0,
    AMP_MPI__IN_PLACE,  /* host memory of a host view */
    AMP_MPI__POINTER,   /* an address from amp_array_view_native_handle */
    AMP_MPI__STAGE      /* a staging buffer */
} amp_mpi__how;

typedef struct amp_mpi__side {
    amp_array_view *v;
    amp_mpi__how how;
    amp_extent ext;
    int64_t strides[AMP_MAX_RANK];
    void *addr;               /* what MPI reads or writes */
    MPI_Datatype type;        /* MPI_BYTE (count bytes) or a committed vector type (count 1) */
    int count;
    uint64_t bytes;
    int req;                  /* its request's index, once posted */
} amp_mpi__side;

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
static amp_status amp_mpi__check_elem(amp_mpi_exchange *x, amp_mpi__side *s, const char *what)
{
    size_t got = 0;
    amp_status st = amp_array_view_get_element_size(s->v, &got);
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

/* Staging slot i (send or receive) with extent ext: a contiguous host
 * buffer and a view of it, made or remade when the extent changed. */
static amp_status amp_mpi__stage_get(amp_mpi_exchange *x, amp_mpi__stage *s, amp_extent ext, uint64_t bytes,
                                     const char *what)
{
    if (s->view && amp_extent_equal(s->ext, ext)) return AMP_OK;
    amp_status st = amp_mpi__stage_release(s);
    if (st != AMP_OK) return amp_mpi__hipamp(st, what);
    if (!(s->host = malloc(bytes ? bytes : 1)))
        return amp_mpi__fail(AMP_ERROR_OUT_OF_MEMORY, "%s: no memory for a %llu-byte staging buffer", what,
                             (unsigned long long)bytes);
    s->bytes = bytes;
    s->ext = ext;
    if ((st = amp_array_view_create(s->host, x->elem, ext, AMP_READ_WRITE, &s->view)) != AMP_OK) {
        free(s->host);
        memset(s, 0, sizeof *s);
        return amp_mpi__hipamp(st, what);
    }
    return AMP_OK;
}

static amp_status amp_mpi__grow_stages(amp_mpi_exchange *x, size_t n)
{
    if (n <= x->nstage) return AMP_OK;
    amp_mpi__stage *a = realloc(x->send_stage, n * sizeof *a);
    if (!a) return amp_mpi__fail(AMP_ERROR_OUT_OF_MEMORY, "amp_mpi_exchange_halos: no memory for %zu halos", n);
    x->send_stage = a;
    amp_mpi__stage *b = realloc(x->recv_stage, n * sizeof *b);
    if (!b) return amp_mpi__fail(AMP_ERROR_OUT_OF_MEMORY, "amp_mpi_exchange_halos: no memory for %zu halos", n);
    x->recv_stage = b;
    memset(a + x->nstage, 0, (n - x->nstage) * sizeof *a);
    memset(b + x->nstage, 0, (n - x->nstage) * sizeof *b);
    x->nstage = n;
    return AMP_OK;
}

/* Decide how a side moves and make its data ready for MPI (send: current
 * where MPI reads it; recv: nothing in flight on it). Staged sends queue
 * their copy and leave its future in *copy. */
static amp_status amp_mpi__prepare(amp_mpi_exchange *x, amp_mpi__side *s, bool is_send, amp_mpi__stage *stage,
                                   amp_future **copy, bool *wait_q, const char *what)
{
    amp_status st = AMP_OK;
    bool host_view = amp_array_view_data(s->v) != NULL;
    amp_mpi_path path = x->path.path;
    if ((st = amp_mpi__describe(x, s, what)) != AMP_OK) return st;
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
        if ((st = amp_mpi__stage_get(x, stage, s->ext, s->bytes, what)) != AMP_OK) return st;
        s->addr = stage->host;
        /* The staging view's element size is the exchanger's: the copy
         * itself refuses a view of another (AMP_ERROR_ARGUMENT_MISMATCH). */
        if (is_send && (st = amp_copy_view_async(s->v, stage->view, copy)) != AMP_OK)
            return amp_mpi__hipamp(st == AMP_ERROR_ARGUMENT_MISMATCH ? AMP_ERROR_INVALID_ARGUMENT : st, what);
    }
    return amp_mpi__datatype(x, s, what);
}

/* The requests of an exchange that will not complete normally (a
 * time-out, a failed post). Receives are cancelled and waited for, so their
 * buffers are free again. A send cannot be withdrawn once MPI has it (MPI 4
 * deprecates cancelling sends; Open MPI ignores it): an unfinished one's
 * request is freed, and MPI may still read its buffer, so a staging buffer
 * under it is never freed. The exchanger is broken from then on (why says
 * why): a late message would match a later exchange's receive. */
static void amp_mpi__abandon(amp_mpi_exchange *x, amp_mpi__side *sides, size_t count, MPI_Request *reqs,
                             const char *why)
{
    for (size_t i = 0; i < 2 * count; ++i) {
        amp_mpi__side *sd = &sides[i];
        if (!sd->v || sd->req < 0 || reqs[sd->req] == MPI_REQUEST_NULL) continue;
        MPI_Status ignored;
        int done = 0;
        if (i & 1) {
            MPI_Cancel(&reqs[sd->req]);
            MPI_Wait(&reqs[sd->req], &ignored);
        } else if (MPI_Test(&reqs[sd->req], &done, &ignored) != MPI_SUCCESS || !done) {
            MPI_Request_free(&reqs[sd->req]);
            if (sd->how == AMP_MPI__STAGE) x->send_stage[i / 2].lent = true;
        }
    }
    snprintf(x->broken, sizeof x->broken, "%s", why);
}

/* MPI_Waitall, or with a time-out set, MPI_Testall until everything
 * completed or the time is up (*late: then nothing was completed or freed,
 * and the requests still pending are the ones MPI_Request_get_status says
 * are not done). Polls as MPI_Waitall does, yielding the processor between
 * polls for ranks that share one. */
static int amp_mpi__wait(const amp_mpi_exchange *x, int n, MPI_Request *reqs, MPI_Status *statuses, bool *late)
{
    *late = false;
    if (!x->timeout_ms) return MPI_Waitall(n, reqs, statuses);
    const double deadline = MPI_Wtime() + x->timeout_ms * 1e-3;
    for (;;) {
        int all = 0, rc = MPI_Testall(n, reqs, &all, statuses);
        if (rc != MPI_SUCCESS || all) return rc;
        if (MPI_Wtime() >= deadline) {
            *late = true;
            return MPI_SUCCESS;
        }
        sched_yield();
    }
}

/* AMP_ERROR_TIMEOUT naming every peer that did not answer, and the halos
 * still pending. */
static amp_status amp_mpi__late(const amp_mpi_exchange *x, const amp_mpi_halo *halos, size_t count,
                                const amp_mpi__side *sides, MPI_Request *reqs, const char *fn)
{
    char peers[256] = "", pending[512] = "";
    size_t np = 0, nd = 0;
    int listed[16], nlisted = 0;
    for (size_t i = 0; i < 2 * count; ++i) {
        const amp_mpi__side *sd = &sides[i];
        if (!sd->v || sd->req < 0) continue;
        int done = 0;
        MPI_Status stt;
        if (MPI_Request_get_status(reqs[sd->req], &done, &stt) == MPI_SUCCESS && done) continue;
        const amp_mpi_halo *h = &halos[i / 2];
        bool seen = false;
        for (int k = 0; k < nlisted; ++k) seen |= listed[k] == h->peer;
        if (!seen && nlisted < 16 && np < sizeof peers) {
            listed[nlisted++] = h->peer;
            np += (size_t)snprintf(peers + np, sizeof peers - np, "%srank %d", nlisted > 1 ? ", " : "", h->peer);
        }
        if (nd < sizeof pending)
            nd += (size_t)snprintf(pending + nd, sizeof pending - nd, "%shalo %zu %s rank %d (tag %d)",
                                   nd ? "; " : "", i / 2, i & 1 ? "receive from" : "send to", h->peer,
                                   i & 1 ? h->recv_tag : h->send_tag);
    }
    return amp_mpi__fail(AMP_ERROR_TIMEOUT,
                         "%s: no answer from %s within %u ms (still pending: %s); the exchange was abandoned (its "
                         "receives cancelled; the data of its sends may still be read by MPI), and this exchanger "
                         "refuses further exchanges: destroy it",
                         fn, peers, (unsigned)x->timeout_ms, pending);
}

/* After MPI_Waitall returned rc: every receive got exactly the bytes its
 * view holds, and no request failed. The exchanger's communicator returns
 * errors, so a message longer than its receive view is MPI_ERR_TRUNCATE in
 * that request's status instead of the end of the job. */
static amp_status amp_mpi__arrivals(const amp_mpi_halo *halos, size_t count, const amp_mpi__side *sides,
                                    MPI_Status *statuses, int rc, const char *fn)
{
    if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) return amp_mpi__mpi(rc, "MPI_Waitall");
    for (size_t i = 0; i < count; ++i) {
        const amp_mpi_halo *h = &halos[i];
        for (int k = 1; k >= 0; --k) {
            const amp_mpi__side *sd = &sides[2 * i + (size_t)k];
            if (!sd->v) continue;
            MPI_Status *stt = &statuses[sd->req];
            int err = rc == MPI_ERR_IN_STATUS ? stt->MPI_ERROR : MPI_SUCCESS, cls = MPI_SUCCESS;
            if (err != MPI_SUCCESS) MPI_Error_class(err, &cls);
            char what[128];
            snprintf(what, sizeof what, "%s: halo %zu %s rank %d (tag %d)", fn, i, k ? "receive from" : "send to",
                     h->peer, k ? h->recv_tag : h->send_tag);
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

static void amp_mpi__side_free(amp_mpi__side *s)
{
    if (s->type != MPI_BYTE && s->type != MPI_DATATYPE_NULL) MPI_Type_free(&s->type);
    s->type = MPI_DATATYPE_NULL;
}

static double amp_mpi__now(void) { return MPI_Wtime(); }

amp_status amp_mpi_exchange_halos(amp_mpi_exchange *x, const amp_mpi_halo *halos, size_t count)
{
    amp_status st = AMP_OK;
    amp_mpi__side *sides = NULL;      /* [2i] send, [2i+1] recv */
    amp_future **copies = NULL;       /* staged copies in flight, one per side */
    MPI_Request *reqs = NULL;
    MPI_Status *statuses = NULL; /* not MPI_STATUSES_IGNORE: GCC 12 misreads MPICH's value as a buffer */
    int nreq = 0, rc;
    AMP_MPI__NOT_NULL(x);
    if (count && !halos) return amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: halos is NULL", __func__);
    if ((st = amp_mpi__need_mpi(__func__)) != AMP_OK) return st;
    if (x->broken[0])
        return amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT,
                             "%s: an earlier exchange of this exchanger was abandoned, so its messages are undefined; "
                             "destroy it (it said: %s)",
                             __func__, x->broken);
    double t0 = amp_mpi__now();
    for (size_t i = 0; i < count; ++i) {
        const amp_mpi_halo *h = &halos[i];
        if (h->peer == MPI_PROC_NULL) continue;
        if (h->peer < 0 || h->peer >= x->size)
            return amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: halo %zu: peer %d is not a rank of the %d in comm",
                                 __func__, i, h->peer, x->size);
        if ((h->send && h->send_tag < 0) || (h->recv && h->recv_tag < 0))
            return amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: halo %zu: tag %d is negative", __func__, i,
                                 h->send && h->send_tag < 0 ? h->send_tag : h->recv_tag);
        char what[96];
        amp_mpi__side probe = {.v = h->send};
        snprintf(what, sizeof what, "%s: halo %zu send to rank %d", __func__, i, h->peer);
        if (h->send && (st = amp_mpi__check_elem(x, &probe, what)) != AMP_OK) return st;
        probe.v = h->recv;
        snprintf(what, sizeof what, "%s: halo %zu receive from rank %d", __func__, i, h->peer);
        if (h->recv && (st = amp_mpi__check_elem(x, &probe, what)) != AMP_OK) return st;
    }
    if (count == 0) goto done;
    if ((st = amp_mpi__grow_stages(x, count)) != AMP_OK) return st;
    sides = calloc(2 * count, sizeof *sides);
    copies = calloc(2 * count, sizeof *copies);
    reqs = calloc(2 * count, sizeof *reqs);
    statuses = calloc(2 * count, sizeof *statuses);
    if (!sides || !copies || !reqs || !statuses) {
        st = amp_mpi__fail(AMP_ERROR_OUT_OF_MEMORY, "%s: no memory for %zu halos", __func__, count);
        goto fail;
    }
    for (size_t i = 0; i < 2 * count; ++i) {
        sides[i].type = MPI_DATATYPE_NULL;
        sides[i].req = -1;
    }

    /* 1. Every view made ready before anything is posted, so that a view
     *    failing its checks leaves no message half sent. */
    bool wait_q = false;
    for (size_t i = 0; i < count; ++i) {
        const amp_mpi_halo *h = &halos[i];
        if (h->peer == MPI_PROC_NULL) continue;
        char what[96];
        if (h->send) {
            snprintf(what, sizeof what, "%s: halo %zu send to rank %d", __func__, i, h->peer);
            sides[2 * i].v = h->send;
            if ((st = amp_mpi__prepare(x, &sides[2 * i], true, &x->send_stage[i], &copies[2 * i], &wait_q, what)) !=
                AMP_OK)
                goto fail;
        }
        if (h->recv) {
            snprintf(what, sizeof what, "%s: halo %zu receive from rank %d", __func__, i, h->peer);
            sides[2 * i + 1].v = h->recv;
            if ((st = amp_mpi__prepare(x, &sides[2 * i + 1], false, &x->recv_stage[i], &copies[2 * i + 1], &wait_q,
                                       what)) != AMP_OK)
                goto fail;
        }
    }
    for (size_t i = 0; i < 2 * count; ++i) {
        if (!copies[i]) continue;
        st = amp_future_wait(copies[i]);
        amp_future_destroy(copies[i]);
        copies[i] = NULL;
        if (st != AMP_OK) {
            amp_mpi__hipamp(st, "amp_mpi_exchange_halos: staging a send section");
            goto fail;
        }
    }
    /* MPI reads and writes device memory outside hipamp's queues: the work
     * queued on q (the kernels that wrote the sends, or still read the
     * receives) must be finished first. */
    if (wait_q && (st = amp_accelerator_view_wait(x->q)) != AMP_OK) {
        amp_mpi__hipamp(st, "amp_mpi_exchange_halos: waiting for the queue");
        goto fail;
    }

    /* 2. All receives, then all sends, then one wait. */
    for (size_t i = 0; i < count; ++i) {
        amp_mpi__side *r = &sides[2 * i + 1];
        if (!r->v) continue;
        if ((rc = MPI_Irecv(r->addr, r->count, r->type, halos[i].peer, halos[i].recv_tag, x->comm, &reqs[nreq])) !=
            MPI_SUCCESS) {
            st = amp_mpi__mpi(rc, "MPI_Irecv");
            goto fail_mpi;
        }
        r->req = nreq++;
    }
    for (size_t i = 0; i < count; ++i) {
        amp_mpi__side *s = &sides[2 * i];
        if (!s->v) continue;
        if ((rc = MPI_Isend(s->addr, s->count, s->type, halos[i].peer, halos[i].send_tag, x->comm, &reqs[nreq])) !=
            MPI_SUCCESS) {
            st = amp_mpi__mpi(rc, "MPI_Isend");
            goto fail_mpi;
        }
        s->req = nreq++;
    }
    bool late = false;
    rc = amp_mpi__wait(x, nreq, reqs, statuses, &late);
    if (late) {
        st = amp_mpi__late(x, halos, count, sides, reqs, __func__);
        goto fail_mpi;
    }
    nreq = 0; /* Waitall completed or freed what it could; nothing left to cancel */
    if ((st = amp_mpi__arrivals(halos, count, sides, statuses, rc, __func__)) != AMP_OK) goto fail;

    /* 3. Received data where the accelerator reads it next. */
    for (size_t i = 0; i < count; ++i) {
        amp_mpi__side *r = &sides[2 * i + 1];
        if (!r->v) continue;
        if (r->how == AMP_MPI__IN_PLACE) {
            if ((st = amp_array_view_refresh(r->v)) != AMP_OK) {
                amp_mpi__hipamp(st, "amp_mpi_exchange_halos: refreshing a received section");
                goto fail;
            }
        } else if (r->how == AMP_MPI__STAGE) {
            amp_mpi__stage *sg = &x->recv_stage[i];
            if ((st = amp_array_view_refresh(sg->view)) != AMP_OK ||
                (st = amp_copy_view_async(sg->view, r->v, &copies[2 * i + 1])) != AMP_OK) {
                amp_mpi__hipamp(st == AMP_ERROR_ARGUMENT_MISMATCH ? AMP_ERROR_INVALID_ARGUMENT : st,
                                "amp_mpi_exchange_halos: copying a received section to its view");
                goto fail;
            }
        }
    }
    /* The staging buffers are reused by the next exchange: their copies
     * must be done. */
    for (size_t i = 0; i < 2 * count; ++i) {
        if (!copies[i]) continue;
        st = amp_future_wait(copies[i]);
        amp_future_destroy(copies[i]);
        copies[i] = NULL;
        if (st != AMP_OK) {
            amp_mpi__hipamp(st, "amp_mpi_exchange_halos: copying a received section to its view");
            goto fail;
        }
    }
    for (size_t i = 0; i < count; ++i) {
        const amp_mpi__side *s = &sides[2 * i], *r = &sides[2 * i + 1];
        if (s->v) {
            x->stats.messages_sent++;
            x->stats.bytes_sent += s->bytes;
            if (s->how == AMP_MPI__STAGE) x->stats.bytes_staged += s->bytes;
        }
        if (r->v) {
            x->stats.messages_received++;
            x->stats.bytes_received += r->bytes;
            if (r->how == AMP_MPI__STAGE) x->stats.bytes_staged += r->bytes;
        }
    }
done:
    x->stats.exchanges++;
    x->stats.seconds += amp_mpi__now() - t0;
    goto out;
fail_mpi:
    /* Posted but never completed. */
    amp_mpi__abandon(x, sides, count, reqs, amp_mpi_last_error());
fail:
out:
    if (copies)
        for (size_t i = 0; i < 2 * count; ++i)
            if (copies[i]) {
                amp_future_wait(copies[i]);
                amp_future_destroy(copies[i]);
            }
    if (sides)
        for (size_t i = 0; i < 2 * count; ++i) amp_mpi__side_free(&sides[i]);
    free(sides);
    free(copies);
    free(reqs);
    free(statuses);
    return st;
}

amp_status amp_mpi_exchange_rows(amp_mpi_exchange *x, int lo, amp_array_view *send_lo, amp_array_view *recv_lo,
                                 int hi, amp_array_view *send_hi, amp_array_view *recv_hi)
{
    /* Tag 0 travels up (to hi), tag 1 down (to lo): a rank's send_hi meets
     * its hi neighbour's recv_lo. */
    amp_mpi_halo h[2] = {
        {send_lo, recv_lo, lo, 1, 0},
        {send_hi, recv_hi, hi, 0, 1},
    };
    return amp_mpi_exchange_halos(x, h, 2);
}
