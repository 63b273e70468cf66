/* cpu_team.c — a graph replay's team of CPU pool threads: recruited through a job published to the pool for the replay's life, they spin between the replay's launches and join each as it opens, taking its work from one block a rank. */
#include "cpu_internal.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* A graph's replay hands its launches to a team of pool threads engaged
 * for the whole replay, where a direct launch publishes each to the pool:
 * between two launches a member spins on the team's generation, without
 * the pool's lock, and joins the next launch as soon as it opens; the
 * replaying thread (rank 0) opens a launch with one store and waits for
 * the members inside it on one counter. The pool's way costs each launch
 * the lock four times a thread (publish, pick, leave, close) and a
 * sleeping thread's wake-up.
 * Members are recruited through the pool: a job whose join makes the
 * thread which picks it a member (amp__cpu_team_member) is published for
 * the replay's life, and lets in as many threads as the team has ranks
 * (1 to size - 1). A member holds a rank while it is in the team, the one
 * of its pool slot where that is free (so the same thread takes the same
 * block at every replay), else the lowest free one; a member that leaves
 * gives its rank back, and may pick the job again. Any number of them
 * may come, none included: a launch's work is cut into one block a rank,
 * and whoever is inside takes chunks from its own block and then from the
 * others' (amp__cpu_take_part, the launch's take), so the leader alone
 * finishes what nobody joins. A member leaves when the team ends, and
 * when it has waited spin_ns for a launch (the leader is running
 * something long alone, or the member was descheduled:
 * amp__cpu_spin_more).
 * The hand-off alone still leaves a launch's threads working on other
 * data at each launch; the blocks keep each member on the same index
 * range at every launch, and so on data its own core's cache holds, which
 * is most of what a team gains over direct launches (docs/architecture.md,
 * launch graphs).
 * Invariants (gen: even closed, odd a launch open; inside: members inside
 * the open launch):
 * - A member enters by incrementing inside, then reads gen again (both
 *   sequentially consistent); the leader closes by storing gen, then reads
 *   inside (likewise). So either the leader sees the member inside and
 *   waits for it, or the member sees the launch closed and leaves it
 *   untouched. After closing, the leader waits until inside is 0 (acquire:
 *   the members' writes are seen) before it touches the job or the team
 *   again, so a member inside reads a job that does not change.
 * - The job and its width are read by a member only once inside. */

struct amp__cpu_team {
    amp__cpu_job recruit; /* published while the team is engaged (amp__cpu_team_begin..end) */
    size_t stack_size;
    uint64_t spin_ns;
    int size;               /* threads the team may have, the leader included */
    int wanted;             /* the widest launch asked for since begin */
    amp__cpu_job *job;      /* the open launch: changed only while no member is inside it */
    amp__cpu_block *parts;  /* its blocks (amp__cpu_take_part) and the ranks, room for size */
    int nparts_cap;
    /* Each on a line of its own: members poll gen and end, and the entries
     * and exits of a launch's members would take them from them. */
    _Alignas(64) atomic_uint gen;
    atomic_bool end;
    _Alignas(64) atomic_int inside;
    char pad[64 - sizeof(atomic_int)];
};

/* A rank of t for pool thread w: its slot's where free, else the lowest
 * free one; 0: none. */
static int amp__cpu_team_claim(amp__cpu_team *t, const amp__cpu_worker *w)
{
    int own = amp__cpu_pool_slot(w);
    if (own >= 1 && own < t->size && !atomic_exchange(&t->parts[own].taken, true)) return own;
    for (int r = 1; r < t->size; ++r)
        if (!atomic_load_explicit(&t->parts[r].taken, memory_order_relaxed) && !atomic_exchange(&t->parts[r].taken, true))
            return r;
    return 0;
}

/* A team launch's take: the member's rank is its block. */
static bool amp__cpu_take_part(amp__cpu_job *j, const amp__cpu_worker *w, int64_t *b, int64_t *e)
{
    return amp__cpu_take_blocks(j, w->rank, b, e);
}

/* The recruiting job's join, run by the pool thread that picked it: a
 * member until the team ends or no launch opens within spin_ns (the
 * file's comment). */
static void amp__cpu_team_member(amp__cpu_job *recruit, amp__cpu_worker *w, size_t stack_size)
{
    amp__cpu_team *t = recruit->team;
    int rank = amp__cpu_team_claim(t, w);
    if (!rank) return;
    w->rank = rank;
    /* Even: a launch open now is joined. */
    unsigned seen = atomic_load_explicit(&t->gen, memory_order_relaxed) & ~1u;
    amp__cpu_spin sp = {.ns = t->spin_ns, .own = true};
    while (!atomic_load_explicit(&t->end, memory_order_relaxed)) {
        unsigned g = atomic_load_explicit(&t->gen, memory_order_relaxed);
        if (g == seen || !(g & 1)) {
            if (!amp__cpu_spin_more(&sp)) break;
            continue;
        }
        seen = g;
        atomic_fetch_add(&t->inside, 1);
        if (atomic_load(&t->gen) == g && rank < t->job->nthreads) {
            amp__cpu_run_chunks(t->job, w, stack_size);
            w->job = NULL;
        }
        atomic_fetch_sub_explicit(&t->inside, 1, memory_order_release);
        sp = (amp__cpu_spin){.ns = t->spin_ns, .own = true};
    }
    atomic_store(&t->parts[rank].taken, false);
}

amp__cpu_team *amp__cpu_team_new(void)
{
    /* Its lines apart (the struct's comment): aligned as declared. */
    amp__cpu_team *t = aligned_alloc(_Alignof(amp__cpu_team), sizeof *t);
    if (!t) return NULL;
    memset(t, 0, sizeof *t);
    pthread_mutex_init(&t->recruit.err_lock, NULL);
    t->recruit.join = amp__cpu_team_member;
    t->recruit.team = t;
    return t;
}

void amp__cpu_team_free(amp__cpu_team *t)
{
    if (!t) return;
    free(t->parts);
    amp__cpu_job_fini(&t->recruit);
    free(t);
}

amp_status amp__cpu_team_begin(amp__cpu_device *d, amp__cpu_team *t, int size)
{
    amp__cpu_worker *me;
    amp_status st = amp__cpu_launcher(d, &me);
    if (st != AMP_OK) return st;
    if (size > amp__cpu_pool_threads()) size = amp__cpu_pool_threads();
    if (size > t->nparts_cap) {
        /* Without memory for its blocks the replay runs without members:
         * a team is worth no failure. */
        amp__cpu_block *p = amp__cpu_blocks_alloc(size);
        if (p) {
            free(t->parts);
            t->parts = p;
            t->nparts_cap = size;
        } else {
            size = 1;
        }
    }
    me->rank = 0;
    t->size = size;
    t->wanted = 1;
    t->stack_size = d->stack_size;
    t->spin_ns = amp__cpu_pool_spin_ns();
    t->job = NULL;
    atomic_init(&t->gen, 0);
    atomic_init(&t->inside, 0);
    atomic_init(&t->end, false);
    /* (No blocks at all when the first allocation failed: size is 1, and
     * only members, ranks from 1, take one.) */
    for (int r = 0; r < size && t->parts; ++r) atomic_init(&t->parts[r].taken, false);
    /* Always chunks left (next stays 0): amp__cpu_pick lets in size - 1
     * threads at a time, as many as there are ranks. */
    t->recruit.total = 1;
    amp__cpu_job_rearm(&t->recruit);
    amp__cpu_job_arm(&t->recruit, size);
    atomic_init(&t->recruit.refs, 0);
    if (size > 1 && t->spin_ns && !amp__cpu_job_publish(&t->recruit, size - 1)) t->size = 1;
    return AMP_OK;
}

int amp__cpu_team_end(amp__cpu_team *t)
{
    atomic_store_explicit(&t->end, true, memory_order_relaxed);
    if (t->size > 1 && t->spin_ns) amp__cpu_job_close(&t->recruit);
    return t->wanted;
}

int amp__cpu_team_width(amp__cpu_team *t, int width)
{
    int all = amp__cpu_pool_threads();
    int nt = width > 0 && width < all ? width : all;
    if (nt > t->wanted) t->wanted = nt;
    return nt < t->size ? nt : t->size;
}

amp_status amp__cpu_team_run(amp__cpu_device *d, amp__cpu_team *t, amp__cpu_job *j, int nt)
{
    amp__cpu_worker *me = amp__cpu_my_worker(); /* made by amp__cpu_team_begin */
    int64_t nchunks = amp__cpu_job_arm(j, nt);
    if (nt == 1 || nchunks == 1) {
        amp__cpu_run_chunks(j, me, d->stack_size);
        me->job = NULL;
        return amp__cpu_job_status(j);
    }
    amp__cpu_blocks_arm(j, t->parts, nt);
    j->take = amp__cpu_take_part;
    t->job = j;
    unsigned g = atomic_load_explicit(&t->gen, memory_order_relaxed);
    /* Release: a member that sees the launch open sees j armed. */
    atomic_store_explicit(&t->gen, g + 1, memory_order_release);
    amp__cpu_run_chunks(j, me, d->stack_size);
    me->job = NULL;
    atomic_store(&t->gen, g + 2);
    /* Members inside run what is left of their last chunks: short. */
    amp__cpu_spin sp = {.ns = t->spin_ns, .own = true};
    while (atomic_load(&t->inside) > 0)
        if (!amp__cpu_spin_more(&sp)) sched_yield();
    j->take = NULL;
    j->parts = NULL;
    return amp__cpu_job_status(j);
}
