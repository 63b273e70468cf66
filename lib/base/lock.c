/* lock.c — the contended halves of the storage lock (lib/base/lock.h): spin a
 * little, then sleep on a futex; release wakes one sleeper. */
#include "lock.h"

#include <linux/futex.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Sleep while *addr == expected (spurious and early wake-ups are fine: the
 * caller looks again). */
static void amp__futex_wait(atomic_int *addr, int expected)
{
    (void)syscall(SYS_futex, (int *)addr, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}

atomic_int amp__lock_fork_gen;

static void amp__lock_forked(void)
{
    atomic_fetch_add_explicit(&amp__lock_fork_gen, 1, memory_order_relaxed);
}

/* Registered at load, before any lock can be held, so that every child
 * knows its generation. */
__attribute__((constructor)) static void amp__lock_register(void)
{
    (void)pthread_atfork(NULL, NULL, amp__lock_forked);
}

/* give_up_on_fork: false where a thread the fork left behind holds l;
 * take_over: take such a lock as this thread's instead (true). */
static bool amp__lock_wait_in(amp__lock *l, bool give_up_on_fork, bool take_over)
{
    int held = amp__lock_held();
    /* A launch holds the lock for about a microsecond: worth a short spin
     * before a system call. */
    for (int i = 0; i < 100; ++i) {
        int free_state = 0;
        if (atomic_load_explicit(&l->state, memory_order_relaxed) == 0 &&
            atomic_compare_exchange_weak_explicit(&l->state, &free_state, held, memory_order_acquire,
                                                  memory_order_relaxed))
            return true;
        amp__pause();
    }
    /* From here the lock is marked 2 whenever we take it, since we cannot
     * know whether others still sleep: one extra wake at worst. A sleeper
     * marks it keeping the holder's generation, which is how a child knows
     * a holder the fork left behind. */
    int sleeping = (held & ~3) | 2;
    for (;;) {
        int s = atomic_load_explicit(&l->state, memory_order_relaxed);
        if (s == 0) {
            if (atomic_compare_exchange_weak_explicit(&l->state, &s, sleeping, memory_order_acquire,
                                                      memory_order_relaxed))
                return true;
            continue;
        }
        if ((give_up_on_fork || take_over) && (s & ~3) != (held & ~3)) {
            if (!take_over) return false;
            /* One of this process's threads wins the take-over; the others
             * then wait for it as for any holder of this generation. */
            if (atomic_compare_exchange_weak_explicit(&l->state, &s, sleeping, memory_order_acquire,
                                                      memory_order_relaxed))
                return true;
            continue;
        }
        if ((s & 3) != 2 && !atomic_compare_exchange_weak_explicit(&l->state, &s, (s & ~3) | 2,
                                                                    memory_order_relaxed, memory_order_relaxed))
            continue;
        amp__futex_wait(&l->state, (s & ~3) | 2);
    }
}

void amp__lock_wait(amp__lock *l)
{
    (void)amp__lock_wait_in(l, false, false);
}

bool amp__lock_wait_or_forked(amp__lock *l)
{
    return amp__lock_wait_in(l, true, false);
}

void amp__lock_wait_taking_over(amp__lock *l)
{
    (void)amp__lock_wait_in(l, false, true);
}

void amp__lock_wake(amp__lock *l)
{
    (void)syscall(SYS_futex, (int *)&l->state, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}
