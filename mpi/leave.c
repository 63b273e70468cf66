/* leave.c — hipamp::mpi's leaving notices: an exchanger that leaves (its destroy, or MPI_Finalize while it lives) tells its peers, so that a peer waiting for it in an exchange ends with an error naming it instead of waiting for ever (halo_wait.c, allreduce.c); the process's list of exchangers that the MPI_Finalize hook walks, and the communicators of destroyed exchangers, kept until every notice they await arrived. */
#include "exchange_state.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Who is told, and whose notices are awaited before a communicator is
 * freed: in a communicator of at most this many ranks every other rank
 * (so a rank that never began an exchange is found too); in a larger one
 * nobody, since every rank telling every other would cost size^2 messages
 * a destroy, and telling only the ranks one's own halos named is not
 * symmetric (ranks agree on the element size, not on halos): a rank would
 * await a notice that never comes, or free its communicator before a
 * notice arrives that could then match a later communicator reusing its
 * context id. There a time-out ends a wait for a peer that left. */
#define AMP_MPI__NOTIFY_ALL 64

/* Lock order: registry_lock, then an exchanger's call lock (tried only:
 * amp_mpi__registry_visit), then MPI; a call holding its exchanger's call
 * lock may take registry_lock (a visit too, after the visit itself ran
 * without it). It guards the list and every retired
 * exchanger; a live one belongs to its user's thread (the list only links
 * it), except in the MPI_Finalize hook and, under its call lock, to the
 * progress of that thread's other calls. */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static amp_mpi_exchange *registry;
static bool hooked;

/* The notices' payloads: a send buffer must outlive its request. */
static const int destroyed_notice = AMP_MPI__LEFT_DESTROYED, finalized_notice = AMP_MPI__LEFT_FINALIZED;

/* x tells rank r when it leaves, and awaits r's notice when retired. */
static bool amp_mpi__notifies(const amp_mpi_exchange *x, int r)
{
    return r != x->rank && x->size <= AMP_MPI__NOTIFY_ALL;
}

static void amp_mpi__record(amp_mpi_exchange *x, const MPI_Status *stt)
{
    int r = stt->MPI_SOURCE;
    if (r < 0 || r >= x->size || (x->peer[r] & AMP_MPI__LEFT)) return;
    x->peer[r] |= x->notice_in == AMP_MPI__LEFT_FINALIZED ? AMP_MPI__LEFT_FINALIZED : AMP_MPI__LEFT_DESTROYED;
    x->gone++;
    if (x->retired && x->awaited && amp_mpi__notifies(x, r)) x->awaited--;
}

/* MPI's return code (notice_req MPI_REQUEST_NULL after a failure). */
static int amp_mpi__post(amp_mpi_exchange *x)
{
    int rc = MPI_Irecv(&x->notice_in, 1, MPI_INT, MPI_ANY_SOURCE, x->notice_tag, x->comm, &x->notice_req);
    if (rc != MPI_SUCCESS) x->notice_req = MPI_REQUEST_NULL;
    return rc;
}

void amp_mpi__notices_poll(amp_mpi_exchange *x)
{
    while (x->notice_req != MPI_REQUEST_NULL) {
        int got = 0;
        MPI_Status stt;
        if (MPI_Test(&x->notice_req, &got, &stt) != MPI_SUCCESS) {
            x->notice_req = MPI_REQUEST_NULL;
            return;
        }
        if (!got) return;
        amp_mpi__record(x, &stt);
        if (!x->retired || x->awaited) (void)amp_mpi__post(x);
    }
}

/* The posted receive withdrawn (a notice it matched meanwhile is kept). */
static void amp_mpi__unpost(amp_mpi_exchange *x)
{
    if (x->notice_req == MPI_REQUEST_NULL) return;
    MPI_Status stt;
    int cancelled = 1;
    MPI_Cancel(&x->notice_req);
    if (MPI_Wait(&x->notice_req, &stt) == MPI_SUCCESS && MPI_Test_cancelled(&stt, &cancelled) == MPI_SUCCESS &&
        !cancelled)
        amp_mpi__record(x, &stt);
    x->notice_req = MPI_REQUEST_NULL;
}

/* One notice to every rank x notifies. Nothing waits for them: a few bytes
 * go eagerly, and a peer that has gone cannot be helped. */
static void amp_mpi__announce(amp_mpi_exchange *x, const int *what)
{
    if (x->announced) return;
    x->announced = true;
    for (int r = 0; r < x->size; ++r) {
        if (!amp_mpi__notifies(x, r)) continue;
        MPI_Request req;
        if (MPI_Isend(what, 1, MPI_INT, r, x->notice_tag, x->comm, &req) == MPI_SUCCESS) MPI_Request_free(&req);
    }
}

/* Under registry_lock. */
static void amp_mpi__unlink(amp_mpi_exchange *x)
{
    if (x->prev) x->prev->next = x->next;
    else if (registry == x) registry = x->next;
    if (x->next) x->next->prev = x->prev;
    x->next = x->prev = NULL;
}

/* Destroyed exchangers' shells, for the next create (linked by next):
 * a stale pointer must never reach memory malloc gave to something else.
 * Under registry_lock. */
static amp_mpi_exchange *shells;

/* Under registry_lock; x's call lock is free (nobody else can reach x:
 * it left the list, or never joined it). */
static void amp_mpi__forget(amp_mpi_exchange *x)
{
    free(x->peer);
    pthread_mutex_destroy(&x->call_lock);
    memset(x, 0, sizeof *x);
    x->next = shells;
    shells = x;
}

amp_mpi_exchange *amp_mpi__shell_take(void)
{
    pthread_mutex_lock(&registry_lock);
    amp_mpi_exchange *x = shells;
    if (x) {
        shells = x->next;
        x->next = NULL;
    }
    pthread_mutex_unlock(&registry_lock);
    if (!x && !(x = calloc(1, sizeof *x))) return NULL;
    if (pthread_mutex_init(&x->call_lock, NULL) != 0) {
        free(x);
        return NULL;
    }
    return x;
}

void amp_mpi__shell_give(amp_mpi_exchange *x)
{
    if (!x) return;
    pthread_mutex_lock(&registry_lock);
    x->peer = NULL; /* notices_abort freed it */
    amp_mpi__forget(x);
    pthread_mutex_unlock(&registry_lock);
}

/* Retired exchangers whose awaited notices all arrived: their
 * communicators freed. Under registry_lock. */
static void amp_mpi__reap(void)
{
    for (amp_mpi_exchange *x = registry, *next; x; x = next) {
        next = x->next;
        if (!x->retired) continue;
        amp_mpi__notices_poll(x);
        if (x->awaited) continue;
        amp_mpi__unpost(x);
        MPI_Comm_free(&x->comm);
        amp_mpi__unlink(x);
        amp_mpi__forget(x);
    }
}

/* MPI_Finalize deletes MPI_COMM_SELF's attributes first, with MPI still
 * usable: every live exchanger's exchanges still in flight are abandoned
 * (nothing can end them once MPI is finalized: without this their
 * exchanger's destroy refused for ever, AMP_ERROR_BUSY, and kept its
 * memory), it tells its peers it is leaving, every receive of notices is
 * withdrawn (none may be pending at MPI_Finalize), and the retired
 * exchangers' communicators are freed (no communicator is made after this,
 * so no later one can meet a notice still on its way). */
static int amp_mpi__at_finalize(MPI_Comm comm, int key, void *value, void *extra)
{
    (void)comm;
    (void)key;
    (void)value;
    (void)extra;
    pthread_mutex_lock(&registry_lock);
    for (amp_mpi_exchange *x = registry, *next; x; x = next) {
        next = x->next;
        if (!x->retired && x->oldest != x->next_id && !x->broken[0]) {
            char why[AMP_MPI__ERR_SIZE];
            snprintf(why, sizeof why,
                     "MPI_Finalize was called while exchange #%llu was in flight: it was abandoned there (its "
                     "receive views' contents are undefined)",
                     (unsigned long long)x->oldest);
            amp_mpi__break(x, AMP_ERROR_INVALID_ARGUMENT, why);
        }
        if (!x->retired) amp_mpi__announce(x, &finalized_notice);
        amp_mpi__unpost(x);
        if (x->retired) {
            MPI_Comm_free(&x->comm);
            amp_mpi__unlink(x);
            amp_mpi__forget(x);
        } else {
            x->finalized = true;
        }
    }
    pthread_mutex_unlock(&registry_lock);
    return MPI_SUCCESS;
}

amp_status amp_mpi__notices_hook(void)
{
    amp_status st = AMP_OK;
    pthread_mutex_lock(&registry_lock);
    if (!hooked) {
        int key = MPI_KEYVAL_INVALID, rc = MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, amp_mpi__at_finalize, &key,
                                                                   NULL);
        if (rc == MPI_SUCCESS && (rc = MPI_Comm_set_attr(MPI_COMM_SELF, key, NULL)) != MPI_SUCCESS)
            MPI_Comm_free_keyval(&key);
        if (rc != MPI_SUCCESS)
            st = amp_mpi__mpi(rc, "amp_mpi_exchange_create: the MPI_Finalize hook (an attribute of MPI_COMM_SELF)");
        else
            hooked = true;
    }
    pthread_mutex_unlock(&registry_lock);
    return st;
}

amp_status amp_mpi__notices_open(amp_mpi_exchange *x)
{
    void *ub = NULL;
    int flag = 0;
    x->notice_req = MPI_REQUEST_NULL;
    if (!(x->peer = calloc((size_t)x->size, 1)))
        return amp_mpi__fail(AMP_ERROR_OUT_OF_MEMORY, "amp_mpi_exchange_create: no memory for %d ranks", x->size);
    /* The largest tag this communicator takes: one a halo may not use
     * (amp_mpi__check_halos refuses it and every larger one before
     * anything is posted), so a notice never matches the caller's messages.
     * MPI defines MPI_TAG_UB on MPI_COMM_WORLD, and the libraries give it on
     * every communicator; 32767 is the least MPI allows. */
    int rc = MPI_Comm_get_attr(x->comm, MPI_TAG_UB, &ub, &flag);
    if (rc != MPI_SUCCESS || !flag || !ub) rc = MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    x->notice_tag = rc == MPI_SUCCESS && flag && ub && *(int *)ub > 0 ? *(int *)ub : 32767;
    if ((rc = amp_mpi__post(x)) != MPI_SUCCESS)
        return amp_mpi__mpi(rc, "amp_mpi_exchange_create: MPI_Irecv of the peers' leaving notices");
    return AMP_OK;
}

void amp_mpi__notices_abort(amp_mpi_exchange *x)
{
    amp_mpi__unpost(x);
    free(x->peer);
    x->peer = NULL;
}

/* visit runs without registry_lock: a visit that breaks its exchanger
 * waits up to AMP_MPI__LEFT_GRACE for cancelled receives, and every other
 * thread's create and destroy (and their waits' progress) would wait with
 * it. x stays linked meanwhile: only destroy unlinks a live exchanger (the
 * reaping and the MPI_Finalize hook unlink retired ones, and a live one
 * retires only in destroy), and destroy takes x's call lock first, so it
 * waits for the visit. Between its call and its unlinking, with the call
 * lock free, the test below refuses x (destroy made its own thread the
 * user and left nothing in flight). Taking registry_lock again with the
 * call lock held is the order every call's create and destroy keep. */
void amp_mpi__registry_visit(const amp_mpi_exchange *self, void (*visit)(amp_mpi_exchange *))
{
    const pthread_t me = pthread_self();
    pthread_mutex_lock(&registry_lock);
    for (amp_mpi_exchange *x = registry, *next; x; x = next) {
        next = x->next;
        if (x == self || x->retired || x->tag != AMP_MPI__LIVE || x->finalized) continue;
        if (pthread_mutex_trylock(&x->call_lock) != 0) continue;
        if (x->has_user && pthread_equal(x->user, me) && x->oldest != x->next_id && !x->broken[0]) {
            pthread_mutex_unlock(&registry_lock);
            visit(x);
            pthread_mutex_lock(&registry_lock);
            next = x->next; /* the list may have changed meanwhile; x is still in it */
        }
        pthread_mutex_unlock(&x->call_lock);
    }
    pthread_mutex_unlock(&registry_lock);
}

void amp_mpi__notices_join(amp_mpi_exchange *x)
{
    pthread_mutex_lock(&registry_lock);
    amp_mpi__reap();
    x->prev = NULL;
    x->next = registry;
    if (registry) registry->prev = x;
    registry = x;
    pthread_mutex_unlock(&registry_lock);
}

void amp_mpi__notices_leave(amp_mpi_exchange *x)
{
    int fin = 0;
    MPI_Finalized(&fin);
    pthread_mutex_lock(&registry_lock);
    x->tag = 0; /* destroyed: a retired exchanger is no one's any more */
    amp_mpi__unlink(x);
    if (fin || x->finalized || x->comm == MPI_COMM_NULL) {
        /* The hook withdrew its receive; MPI is no more. */
        amp_mpi__forget(x);
    } else if (x->broken[0]) {
        /* MPI_Comm_free is collective in the standard, and a peer of an
         * abandoned exchange may be gone: the communicator is left to MPI. */
        amp_mpi__announce(x, &destroyed_notice);
        amp_mpi__unpost(x);
        amp_mpi__forget(x);
    } else {
        /* A notice that reached a freed communicator could meet a later
         * communicator given the same context, so the communicator lives
         * until every notice it awaits arrived. */
        amp_mpi__announce(x, &destroyed_notice);
        x->retired = true;
        x->awaited = 0;
        for (int r = 0; r < x->size; ++r) x->awaited += amp_mpi__notifies(x, r) && !(x->peer[r] & AMP_MPI__LEFT);
        x->prev = NULL;
        x->next = registry;
        if (registry) registry->prev = x;
        registry = x;
        amp_mpi__reap();
    }
    pthread_mutex_unlock(&registry_lock);
}
