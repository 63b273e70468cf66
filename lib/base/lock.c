/* lock.c — the contended halves of the storage lock (lib/base/lock.h): spin a
 * little, then sleep on a futex; release wakes one sleeper. */
#include "lock.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Sleep while *addr == expected (spurious and early wake-ups are fine: the
 * caller looks again). */
static void amp__futex_wait(atomic_int *addr, int expected)
{
    (void)syscall(SYS_futex, (int *)addr, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}

void amp__lock_wait(amp__lock *l)
{
    /* A launch holds the lock for about a microsecond: worth a short spin
     * before a system call. */
    for (int i = 0; i < 100; ++i) {
        int free_state = 0;
        if (atomic_load_explicit(&l->state, memory_order_relaxed) == 0 &&
            atomic_compare_exchange_weak_explicit(&l->state, &free_state, 1, memory_order_acquire,
                                                  memory_order_relaxed))
            return;
        amp__pause();
    }
    /* From here the lock is marked 2 whenever we take it, since we cannot
     * know whether others still sleep: one extra wake at worst. */
    while (atomic_exchange_explicit(&l->state, 2, memory_order_acquire) != 0) amp__futex_wait(&l->state, 2);
}

void amp__lock_wake(amp__lock *l)
{
    (void)syscall(SYS_futex, (int *)&l->state, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}
