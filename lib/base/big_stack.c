/* big_stack.c — runs a call of vendor code (a compiler's front end, a driver's start) on a thread of the library's own with a stack that code can count on, whatever the caller's thread has. */
#include "core.h"

#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>

/* Why: hipamp's own code is held to 128 KiB of stack (musl's default for a
 * thread; README), but NVRTC's and hipRTC's front ends recurse as deep as
 * the kernel's templates do (a build of two small kernels for sm_90 took
 * 87 KB, most of it NVRTC's, on CUDA 13), and a caller's thread of 128 KiB
 * crashed inside them. They get what a main thread would: the stack limit
 * (ulimit -s), at least 8 MiB, at most 256 MiB. The stack is reserved, not
 * touched: only what the call uses is ever backed by memory. */
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

bool amp__on_big_stack(void *(*fn)(void *), void *arg)
{
    amp__big_call c = {fn, arg};
    pthread_attr_t at;
    pthread_t t;
    bool made = false;
    if (pthread_attr_init(&at) == 0) {
        made = pthread_attr_setstacksize(&at, amp__big_stack_size()) == 0 &&
               pthread_create(&t, &at, amp__big_stack_main, &c) == 0;
        pthread_attr_destroy(&at);
    }
    if (made) pthread_join(t, NULL);
    else fn(arg);
    return made;
}
