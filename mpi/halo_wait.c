/* halo_wait.c — hipamp::mpi's exchanges in progress and completed: receives posted once their message is matched and its length checked (none ever lands past its buffer), sends posted as their data is ready, the wait with its time-out and leaving peers, a chunked face's surplus cut short or drained, the arrivals' sizes checked, received data delivered (the staged pipeline's copies up as each receive arrives). */
#include "halo_private.h"

#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ progress */

/* The (peer, tag) pairs whose earliest receive found no message in one
 * pass of amp_mpi__match; a pass that finds more leaves the rest for the
 * next. */
#define AMP_MPI__BLOCKED 64

/* Receive side r (entry i of f) gets the message msg of len bytes: into its
 * view where it fits, else whole into a sink of its own length, dropped
 * (reported by amp_mpi__arrivals), so that nothing past the view is ever
 * written. A message shorter than a chunk before the face's last is the
 * peer's last: the face's later chunks are cut, never posted. */
static amp_status amp_mpi__take(amp_mpi__flight *f, size_t i, MPI_Message *msg, int len, const char *fn)
{
    amp_mpi__side *r = &f->sides[2 * i + 1];
    char what[192];
    int rc;
    amp_mpi__name(what, sizeof what, fn, f, 2 * i + 1);
    if ((uint64_t)len <= r->bytes) {
        rc = MPI_Imrecv(r->addr, r->count, r->type, msg, &f->reqs[2 * i + 1]);
    } else if (!(r->sink = malloc((size_t)len))) {
        /* The matched message can be taken by nothing else: the exchange's
         * messages are then undefined, and the caller breaks the exchanger. */
        return amp_mpi__fail(AMP_ERROR_OUT_OF_MEMORY,
                             "%s: no memory to take rank %d's %d-byte message, longer than the %llu bytes this "
                             "receive view holds",
                             what, f->halos[i].peer, len, (unsigned long long)r->bytes);
    } else {
        r->longer = true;
        rc = MPI_Imrecv(r->sink, len, MPI_BYTE, msg, &f->reqs[2 * i + 1]);
    }
    if (rc != MPI_SUCCESS) {
        char call[224];
        snprintf(call, sizeof call, "%s: MPI_Imrecv", what);
        return amp_mpi__mpi(rc, call);
    }
    r->posted = true;
    r->took = len;
    f->awaiting--;
    if (r->chunks && r->chunk + 1 < r->chunks && (uint64_t)len < r->bytes)
        for (size_t j = i + 1; j < i + (r->chunks - r->chunk); ++j) {
            amp_mpi__side *later = &f->sides[2 * j + 1];
            if (later->posted || later->cut) continue;
            later->cut = true;
            f->awaiting--;
        }
    return AMP_OK;
}

/* Receive r ends its face (its last chunk, or the whole face) and took a
 * full chunk's message, so the peer's face goes on: the pair's next
 * messages up to the peer's last of the face (the one shorter than a
 * chunk) are that face's, which amp_mpi__drains takes, never a later
 * receive's. True until the drain finished. */
static bool amp_mpi__face_goes_on(const amp_mpi_exchange *x, const amp_mpi__side *r)
{
    return x->chunk_bytes && r->v && r->posted && !r->cut && r->hi == r->n &&
           r->took == (int64_t)amp_mpi__chunk_per(x) * (int64_t)x->elem && (uint64_t)r->took > r->bytes &&
           !(r->settled && !r->draining);
}

/* Post the receives whose message arrived, of every exchange in flight, in
 * the order a posted receive would have met it: by exchange, then entry,
 * and for one (peer, tag) only its earliest receive not yet posted (MPI
 * keeps a pair's messages in order). Each is matched (MPI_Improbe) before
 * it is posted, its length checked against the view's first: a receive
 * posted over the view's bytes alone would be trusted to MPI's truncation,
 * and Open MPI 4's shared-memory single copy (CMA) writes the whole message
 * past the buffer. Never blocks. A failed MPI call, or no memory for a
 * longer message's sink, is returned: the caller breaks the exchanger. */
amp_status amp_mpi__match(amp_mpi_exchange *x, const char *fn)
{
    struct {
        int peer, tag;
    } blocked[AMP_MPI__BLOCKED];
    int nblocked = 0;
    amp_status st;
    /* A pair whose peer's face goes on past the receive that ends this
     * rank's face: its next messages are that face's, for the drain. */
    for (uint64_t id = x->oldest; x->chunk_bytes && id < x->next_id; ++id) {
        const amp_mpi__flight *f = amp_mpi__flight_of(x, id);
        for (size_t i = 0; f && i < f->count; ++i) {
            if (!amp_mpi__face_goes_on(x, &f->sides[2 * i + 1])) continue;
            if (nblocked == AMP_MPI__BLOCKED) return AMP_OK;
            blocked[nblocked].peer = f->halos[i].peer;
            blocked[nblocked++].tag = f->halos[i].recv_tag;
        }
    }
    for (uint64_t id = x->oldest; id < x->next_id; ++id) {
        amp_mpi__flight *f = amp_mpi__flight_of(x, id);
        for (size_t i = 0; f && f->awaiting && i < f->count; ++i) {
            amp_mpi__side *r = &f->sides[2 * i + 1];
            const amp_mpi_halo *h = &f->halos[i];
            if (!r->v || r->posted || r->cut) continue;
            bool later = false;
            for (int b = 0; b < nblocked && !later; ++b) later = blocked[b].peer == h->peer && blocked[b].tag == h->recv_tag;
            if (later) continue;
            int found = 0, len = -1;
            MPI_Message msg = MPI_MESSAGE_NULL;
            MPI_Status pst;
            int rc = MPI_Improbe(h->peer, h->recv_tag, x->comm, &found, &msg, &pst);
            if (rc == MPI_SUCCESS && !found) {
                if (nblocked == AMP_MPI__BLOCKED) return AMP_OK;
                blocked[nblocked].peer = h->peer;
                blocked[nblocked++].tag = h->recv_tag;
                continue;
            }
            if (rc == MPI_SUCCESS && ((rc = MPI_Get_count(&pst, MPI_BYTE, &len)) != MPI_SUCCESS || len < 0))
                rc = rc != MPI_SUCCESS ? rc : MPI_ERR_COUNT; /* (MPI_UNDEFINED: never for bytes) */
            if (rc != MPI_SUCCESS) {
                char what[192], call[224];
                amp_mpi__name(what, sizeof what, fn, f, 2 * i + 1);
                snprintf(call, sizeof call, "%s: %s", what, found ? "MPI_Get_count of its message" : "MPI_Improbe");
                return amp_mpi__mpi(rc, call);
            }
            if ((st = amp_mpi__take(f, i, &msg, len, fn)) != AMP_OK) return st;
            if (amp_mpi__face_goes_on(x, r)) {
                if (nblocked == AMP_MPI__BLOCKED) return AMP_OK;
                blocked[nblocked].peer = h->peer;
                blocked[nblocked++].tag = h->recv_tag;
            }
        }
    }
    return AMP_OK;
}

/* The receives whose messages came matched (amp_mpi__match), the surplus
 * chunks that came drained (amp_mpi__drains_all), then every send whose
 * data is ready posted, in the order the exchanges began and, within one,
 * in halo order: a send is never posted before an earlier
 * one, so messages between two ranks with the same tag match in order.
 * Stops at the first send whose staging copy is still running, unless
 * that send belongs to exchange wait_for, whose copies are then waited for
 * (0: never wait). A failed copy or post breaks the exchanger. */
amp_status amp_mpi__progress(amp_mpi_exchange *x, uint64_t wait_for, const char *fn)
{
    amp_status mst = amp_mpi__match(x, fn);
    if (mst != AMP_OK) {
        char msg[AMP_MPI__ERR_SIZE];
        snprintf(msg, sizeof msg, "%s", amp_mpi_last_error());
        return amp_mpi__break(x, mst, msg);
    }
    amp_mpi__drains_all(x);
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

/* One of this thread's other exchangers, visited under its call lock
 * (amp_mpi__registry_visit): its receives matched, its ready sends posted
 * (never waiting for a copy), its surplus chunks drained (all three
 * amp_mpi__progress's). */
static void amp_mpi__progress_one(amp_mpi_exchange *x)
{
    static const char fn[] = "hipamp::mpi's progress of a begun exchange (while this thread waited in another call)";
    if (!x->nccl) (void)amp_mpi__progress(x, 0, fn);
}

void amp_mpi__progress_others(amp_mpi_exchange *self)
{
    char kept[AMP_MPI__ERR_SIZE];
    snprintf(kept, sizeof kept, "%s", amp_mpi_last_error());
    amp_mpi__registry_visit(self, amp_mpi__progress_one);
    amp_mpi__fail(AMP_OK, "%s", kept);
}

int amp_mpi__await(MPI_Request *req, amp_mpi_exchange *self)
{
    for (unsigned polls = 0;; ++polls) {
        int done = 0, rc = MPI_Test(req, &done, MPI_STATUS_IGNORE);
        /* A failed test may leave the request live, writing the caller's
         * (stack) buffers: it is waited for before they go, as the
         * blocking collective this stands for would have. */
        if (rc != MPI_SUCCESS && *req != MPI_REQUEST_NULL) (void)MPI_Wait(req, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS || done) return rc;
        amp_mpi__progress_others(self);
        if (polls >= 64) sched_yield();
    }
}

/* Side i still waits: a receive whose message has not come (not matched,
 * not cut), or a posted request that has not finished. */
static bool amp_mpi__open(const amp_mpi__flight *f, size_t i)
{
    int done = 0;
    MPI_Status stt;
    if ((i & 1) && f->sides[i].v && !f->sides[i].posted && !f->sides[i].cut) return true;
    return f->sides[i].posted && f->reqs[i] != MPI_REQUEST_NULL &&
           !(MPI_Request_get_status(f->reqs[i], &done, &stt) == MPI_SUCCESS && done);
}

/* A request of the exchange is still open with a peer that left. */
static bool amp_mpi__waits_for_the_gone(const amp_mpi_exchange *x, const amp_mpi__flight *f)
{
    for (size_t i = 0; i < 2 * f->count; ++i)
        if (f->sides[i].v && (x->peer[f->halos[i / 2].peer] & AMP_MPI__LEFT) && amp_mpi__open(f, i))
            return true;
    return false;
}

/* A face received in chunks whose chunk before the last got fewer bytes
 * than it holds got the peer's last message of the face (the only one of
 * fewer than a chunk's elements): its later chunks' receives would meet no
 * message of this exchange, only the peer's next one, so they are
 * cancelled now, and their wait ends (amp_mpi__arrivals reports the face).
 * Never blocks. */
void amp_mpi__cut_short(const amp_mpi_exchange *x, amp_mpi__flight *f)
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

/* The first MPI call of a drain that failed, for the end's message. */
static void amp_mpi__drain_failed(amp_mpi__flight *f, int rc, const char *call)
{
    if (f->drain_rc != MPI_SUCCESS) return;
    f->drain_rc = rc;
    f->drain_call = call;
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
bool amp_mpi__drains(amp_mpi_exchange *x, amp_mpi__flight *f, bool all, int rc)
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
            /* (No later receive of the pair can have taken the face's next
             * messages: amp_mpi__match holds them back meanwhile.) */
            r->settled = false;
            r->draining = true;
        }
        while (r->draining) {
            int rc, done = 0;
            if (r->drain_req == MPI_REQUEST_NULL) {
                int found = 0, len = -1;
                MPI_Message msg = MPI_MESSAGE_NULL;
                MPI_Status pst;
                if ((rc = MPI_Improbe(h->peer, h->recv_tag, x->comm, &found, &msg, &pst)) != MPI_SUCCESS) {
                    amp_mpi__drain_failed(f, rc, "MPI_Improbe");
                    f->strays = true;
                    r->draining = false;
                    break;
                }
                if (!found) break;
                /* Received whole, into a buffer of its length (Open MPI's
                 * single copy writes a message past a shorter buffer), and
                 * not waited for here: a peer that stalls in the middle of
                 * its message must not hold this rank past its time-out. */
                if (MPI_Get_count(&pst, MPI_BYTE, &len) != MPI_SUCCESS || len == MPI_UNDEFINED || len < 0 ||
                    !(r->drain_sink = malloc(len > 0 ? (size_t)len : 1))) {
                    f->strays = true;
                    r->draining = false;
                    break;
                }
                if ((rc = MPI_Imrecv(r->drain_sink, len, MPI_BYTE, &msg, &r->drain_req)) != MPI_SUCCESS) {
                    amp_mpi__drain_failed(f, rc, "MPI_Imrecv");
                    free(r->drain_sink);
                    r->drain_sink = NULL;
                    r->drain_req = MPI_REQUEST_NULL;
                    f->strays = true;
                    r->draining = false;
                    break;
                }
                r->drain_len = len;
            }
            if ((rc = MPI_Test(&r->drain_req, &done, MPI_STATUS_IGNORE)) != MPI_SUCCESS) {
                /* The request's state is MPI's: its sink is left to it. */
                amp_mpi__drain_failed(f, rc, "MPI_Test");
                r->drain_req = MPI_REQUEST_NULL;
                r->drain_sink = NULL;
                f->strays = true;
                r->draining = false;
                break;
            }
            if (!done) break;
            free(r->drain_sink);
            r->drain_sink = NULL;
            r->drained += (uint64_t)r->drain_len;
            if ((uint64_t)r->drain_len < full) r->draining = false;
        }
        r->settled = !r->draining;
        more |= r->draining;
    }
    return more;
}

/* amp_mpi__drains of every exchange in flight: a pair held back behind a
 * face that goes on (amp_mpi__face_goes_on) is freed only once its drain
 * took the peer's face, whatever exchange the caller waits for or tests.
 * Never blocks. */
void amp_mpi__drains_all(amp_mpi_exchange *x)
{
    for (uint64_t id = x->oldest; x->chunk_bytes && id < x->next_id; ++id) {
        amp_mpi__flight *f = amp_mpi__flight_of(x, id);
        if (f) (void)amp_mpi__drains(x, f, f->complete, f->complete_rc);
    }
}

/* A face being drained waits for a peer that left. */
static bool amp_mpi__drains_the_gone(const amp_mpi_exchange *x, const amp_mpi__flight *f)
{
    for (size_t i = 0; i < f->count; ++i)
        if (f->sides[2 * i + 1].draining && (x->peer[f->halos[i].peer] & AMP_MPI__LEFT)) return true;
    return false;
}

/* The drains given up (a peer that left, the time-out, an abandoned
 * exchange): what they did not take is left over, and a message one was
 * taking is left to MPI with its sink (a matched message cannot be
 * cancelled, and MPI may still write the sink). Never blocks. */
void amp_mpi__drains_stop(amp_mpi__flight *f)
{
    for (size_t i = 0; i < f->count; ++i) {
        amp_mpi__side *r = &f->sides[2 * i + 1];
        if (r->drain_req != MPI_REQUEST_NULL) {
            MPI_Request_free(&r->drain_req);
            r->drain_req = MPI_REQUEST_NULL;
            r->drain_sink = NULL;
        }
        if (r->draining) {
            r->draining = false;
            r->settled = true;
            f->strays = true;
        }
    }
}

/* The exchange's requests, all of them finished: MPI_Testall until they
 * finished, the time-out passed (AMP_MPI__LATE) or a peer they wait for
 * left (its notice arrived, AMP_MPI__LEFT_PEER). Polls as MPI_Waitall
 * does, yielding the processor between polls once the first ones found
 * nothing, for ranks that share one. */
int amp_mpi__wait(amp_mpi_exchange *x, amp_mpi__flight *f, amp_mpi__stop *stop)
{
    int n = (int)(2 * f->count), all = f->complete, rc = f->complete ? f->complete_rc : MPI_SUCCESS;
    *stop = AMP_MPI__FINISHED;
    const double deadline = x->timeout_ms ? amp_mpi__now() + x->timeout_ms * 1e-3 : 0;
    double left_at = 0;
    bool left = false;
    for (unsigned polls = 0;; ++polls) {
        if (!all && f->awaiting && (f->match_st = amp_mpi__match(x, "amp_mpi_exchange_end")) != AMP_OK) {
            *stop = AMP_MPI__UNMATCHED;
            return MPI_SUCCESS;
        }
        /* (A receive not matched yet has no request: MPI_Testall would
         * count it finished, and overwrite the statuses of the others.) */
        if (!all && !f->awaiting && (rc = MPI_Testall(n, f->reqs, &all, f->statuses)) != MPI_SUCCESS && !all)
            return rc;
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
        amp_mpi__progress_others(x);
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
amp_status amp_mpi__late(const amp_mpi_exchange *x, amp_mpi__flight *f, const char *fn)
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
amp_status amp_mpi__left(const amp_mpi_exchange *x, amp_mpi__flight *f, const char *fn)
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
amp_status amp_mpi__arrivals(const amp_mpi_exchange *x, amp_mpi__flight *f, int rc, const char *fn,
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
                    /* Never posted, or cancelled; one that was not took a
                     * later exchange's message. */
                    int cancelled = 0;
                    if (c->posted && (MPI_Test_cancelled(stt, &cancelled) != MPI_SUCCESS || !cancelled))
                        f->strays = true;
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
                /* (A longer message went to its sink: the view has none of it.) */
                truncated |= cls == MPI_ERR_TRUNCATE || c->longer;
                bad |= cls == MPI_ERR_TRUNCATE || c->longer || (uint64_t)got != c->bytes;
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
amp_status amp_mpi__deliver(amp_mpi_exchange *x, amp_mpi__flight *f, const char *fn)
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
void amp_mpi__deliver_arrived(amp_mpi_exchange *x, amp_mpi__flight *f, const char *fn)
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
