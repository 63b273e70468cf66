/* lock.h — the storage lock: a mutex whose uncontended acquire and release
 * are one atomic instruction each, inline, for the launch path, which takes
 * one per distinct storage it touches (pthread_mutex_lock adds a call, a
 * type dispatch and owner bookkeeping around the same instruction).
 *
 * Not recursive, no owner checks. Blocking waits sleep on a futex after a
 * short spin (amp__pause, also the CPU pool's). States: 0 free, 1 held, 2 held and someone may be asleep
 * (release then wakes one). */
#ifndef AMP_LOCK_H
#define AMP_LOCK_H

#include <stdatomic.h>

typedef struct amp__lock { atomic_int state; } amp__lock;

#define AMP__LOCK_INIT {0}

/* The contended halves (lib/base/lock.c). */
void amp__lock_wait(amp__lock *l);
void amp__lock_wake(amp__lock *l);

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
    if (!atomic_compare_exchange_strong_explicit(&l->state, &free_state, 1, memory_order_acquire,
                                                 memory_order_relaxed))
        amp__lock_wait(l);
}

static inline void amp__lock_release(amp__lock *l)
{
    if (atomic_exchange_explicit(&l->state, 0, memory_order_release) == 2) amp__lock_wake(l);
}

#endif
