/* lock.h — the storage lock: a mutex whose uncontended acquire and release
 * are one atomic instruction each, inline, for the launch path, which takes
 * one per distinct storage it touches (pthread_mutex_lock adds a call, a
 * type dispatch and owner bookkeeping around the same instruction).
 *
 * Not recursive, no owner checks. Blocking waits sleep on a futex after a
 * short spin (amp__pause, also the CPU pool's). States: 0 free; held, the
 * holder's fork generation shifted left by two, or'ed with 1 (held) or 2
 * (someone may be asleep: release then wakes one). The generation lets a
 * forked child tell a lock held by a thread the fork left behind (never
 * released in the child) from one of its own threads'. */
#ifndef AMP_LOCK_H
#define AMP_LOCK_H

#include <stdatomic.h>
#include <stdbool.h>

typedef struct amp__lock { atomic_int state; } amp__lock;

#define AMP__LOCK_INIT {0}

/* Bumped in every child of fork() (lock.c's atfork handler). */
extern atomic_int amp__lock_fork_gen;

/* The contended halves (lib/base/lock.c). amp__lock_wait blocks until it
 * has the lock; amp__lock_wait_or_forked returns false, without it, where
 * a thread of the parent process held it at fork (the child would wait for
 * ever); amp__lock_wait_taking_over takes such a lock. */
void amp__lock_wait(amp__lock *l);
bool amp__lock_wait_or_forked(amp__lock *l);
void amp__lock_wait_taking_over(amp__lock *l);
void amp__lock_wake(amp__lock *l);

/* This process's held state: never 0. */
static inline int amp__lock_held(void)
{
    return ((atomic_load_explicit(&amp__lock_fork_gen, memory_order_relaxed) & 0x1fffffff) << 2) | 1;
}

/* One step of a spin loop: tells the core this is a spin. On x86 it keeps
 * the loop from filling the pipeline with speculative reads and lends the
 * core to its SMT sibling; aarch64's yield is a no-op on most cores, isb
 * waits a little. Elsewhere nothing. */
static inline void amp__pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("isb" ::: "memory");
#endif
}

static inline void amp__lock_init(amp__lock *l) { atomic_init(&l->state, 0); }

static inline void amp__lock_acquire(amp__lock *l)
{
    int free_state = 0;
    if (!atomic_compare_exchange_strong_explicit(&l->state, &free_state, amp__lock_held(), memory_order_acquire,
                                                 memory_order_relaxed))
        amp__lock_wait(l);
}

/* amp__lock_acquire, or false (not held) in a forked child where a thread
 * of the parent held l at fork: what it guards may be half-changed. */
static inline bool amp__lock_acquire_or_forked(amp__lock *l)
{
    int free_state = 0;
    return atomic_compare_exchange_strong_explicit(&l->state, &free_state, amp__lock_held(), memory_order_acquire,
                                                   memory_order_relaxed) ||
           amp__lock_wait_or_forked(l);
}

/* amp__lock_acquire that, in a forked child where a thread of the parent
 * held l at fork, takes l over: only for what is whole at every store (a
 * pointer swapped in one store, counts that are atomic), where the worst a
 * holder the fork left behind can leave is a leak. */
static inline void amp__lock_acquire_taking_over(amp__lock *l)
{
    int free_state = 0;
    if (!atomic_compare_exchange_strong_explicit(&l->state, &free_state, amp__lock_held(), memory_order_acquire,
                                                 memory_order_relaxed))
        amp__lock_wait_taking_over(l);
}

static inline void amp__lock_release(amp__lock *l)
{
    if ((atomic_exchange_explicit(&l->state, 0, memory_order_release) & 3) == 2) amp__lock_wake(l);
}

#endif
