/* fork_guard.h — a leaf mutex taken across fork(), so that a child finds it free and what it guards whole even where another thread of the parent held it then (hipamp.h: a forked child's calls fail or work, never hang). */
#ifndef HIPAMP_FORK_GUARD_H
#define HIPAMP_FORK_GUARD_H

#include <pthread.h>

/* Defines the static mutex `name` and its fork handlers (registered before
 * main). Only for a leaf: a thread holding it takes no other lock, waits
 * for nothing and never forks (the library's own fork, cpu_spawn.c, runs
 * the handlers: it would wait for itself), so the forking thread's
 * prepare always gets it after a short wait, in any order beside the
 * other guarded mutexes. */
#define AMP__FORK_GUARDED_MUTEX(name)                                                   \
    static pthread_mutex_t name = PTHREAD_MUTEX_INITIALIZER;                            \
    static void name##_fork_prepare(void) { pthread_mutex_lock(&name); }                \
    static void name##_fork_after(void) { pthread_mutex_unlock(&name); }                \
    __attribute__((constructor)) static void name##_fork_register(void)                 \
    {                                                                                   \
        (void)pthread_atfork(name##_fork_prepare, name##_fork_after, name##_fork_after); \
    }

#endif
