/* big_stack.c — runs a call of vendor code (a compiler's front end, a driver's start) on a thread of the library's own with a stack that code can count on, whatever the caller's thread has. */
#include "core.h"

#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>

/* Why: hipamp's own code is held to 128 KiB of stack (musl's default for a
 * thread; README), but NVRTC's and hipRTC's front ends recurse as deep as
 * the kernel's templates do (a compile of two small kernels for sm_90 took
 * 96 KB of the caller's stack, most of it NVRTC's, on CUDA 13), and a
 * caller's thread of 128 KiB crashed inside them. They get what a main
 * thread would: the stack limit (ulimit -s), at least 8 MiB, at most
 * 256 MiB; an unlimited limit gives 8 MiB (a larger reservation is charged
 * in full where overcommit is strict). The stack is reserved, not touched:
 * only what the call uses is ever backed by memory. */
static size_t amp__big_stack_size(void)
{
    const size_t lo = 8u << 20, hi = 256u << 20;
    struct rlimit rl;
    if (getrlimit(RLIMIT_STACK, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return lo;
    return rl.rlim_cur < lo ? lo : rl.rlim_cur > hi ? hi : (size_t)rl.rlim_cur;
}

typedef struct amp__big_call {
    void *(*fn)(void *);
    void *arg;
} amp__big_call;

static void *amp__big_stack_main(void *p)
{
    const amp__big_call *c = p;
    stack_t before, now;
    bool known = sigaltstack(NULL, &before) == 0;
    c->fn(c->arg);
    /* Vendor code may give the thread an alternate signal stack of its own
     * (LLVM's signal handlers, in NVRTC and comgr, do on the first thread
     * that compiles: malloc'd, kept in a static). The thread's exit must
     * find the one it started with: AddressSanitizer unmaps whatever
     * alternate stack a thread ends with as its own, and dies unmapping
     * LLVM's heap block. */
    if (known && sigaltstack(NULL, &now) == 0 && (now.ss_sp != before.ss_sp || now.ss_flags != before.ss_flags)) {
        if (before.ss_flags & SS_DISABLE) before = (stack_t){.ss_flags = SS_DISABLE};
        (void)sigaltstack(&before, NULL);
    }
    return NULL;
}

static bool amp__big_stack_thread(pthread_t *t, size_t stack, amp__big_call *c)
{
    pthread_attr_t at;
    if (pthread_attr_init(&at) != 0) return false;
    bool made = pthread_attr_setstacksize(&at, stack) == 0 && pthread_create(t, &at, amp__big_stack_main, c) == 0;
    pthread_attr_destroy(&at);
    return made;
}

bool amp__on_big_stack(void *(*fn)(void *), void *arg)
{
    amp__big_call c = {fn, arg};
    pthread_t t;
    /* The thread takes no asynchronous signals (they belong to the
     * application's threads, as the CPU pool's do: a handler that
     * longjmps to the main thread must not run here); faults stay
     * deliverable to the vendors' and sanitizers' crash handlers. */
    sigset_t block, old;
    sigfillset(&block);
    static const int faults[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS};
    for (size_t i = 0; i < sizeof faults / sizeof faults[0]; ++i) sigdelset(&block, faults[i]);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    /* A large limit's reservation can fail (strict overcommit, RLIMIT_AS):
     * 8 MiB then, before the caller's own stack. */
    const size_t want = amp__big_stack_size(), least = 8u << 20;
    bool made = amp__big_stack_thread(&t, want, &c) || (want > least && amp__big_stack_thread(&t, least, &c));
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (made) {
        /* Not cancelled while the thread uses what the caller's frames
         * hold (c, the compiler's arguments, its locks). */
        int cancel;
        pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
        pthread_join(t, NULL);
        pthread_setcancelstate(cancel, NULL);
    } else {
        fn(arg);
    }
    return made;
}
