/* rtc_stack.c — NVRTC's and hipRTC's compile calls, run on a thread of a stack large enough for their front ends (amp__on_big_stack), whatever stack the caller's thread has. */
#include "gpu_driver.h"

#include "base/core.h"

/* The calls' types as cuda_abi.h and hip_abi.h declare them (nvrtcResult
 * and hiprtcResult are int, the programs void *); hipRTC's options are not
 * const-qualified. Neither compiler reads the caller's thread-local state:
 * a program is compiled wherever nvrtcCreateProgram made it. */
typedef struct amp__rtc_call {
    int (*nvrtc)(void *, int, const char *const *);
    int (*hiprtc)(void *, int, const char **);
    void *prog;
    int argc;
    const char **argv;
    int rc;
} amp__rtc_call;

static void *amp__rtc_run(void *arg)
{
    amp__rtc_call *c = arg;
    c->rc = c->nvrtc ? c->nvrtc(c->prog, c->argc, c->argv) : c->hiprtc(c->prog, c->argc, c->argv);
    return NULL;
}

int amp__nvrtc_compile_call(int (*compile)(void *, int, const char *const *), void *prog, int argc,
                            const char *const *argv)
{
    amp__rtc_call c = {.nvrtc = compile, .prog = prog, .argc = argc, .argv = (const char **)argv};
    (void)amp__on_big_stack(amp__rtc_run, &c);
    return c.rc;
}

int amp__hiprtc_compile_call(int (*compile)(void *, int, const char **), void *prog, int argc, const char **argv)
{
    amp__rtc_call c = {.hiprtc = compile, .prog = prog, .argc = argc, .argv = argv};
    (void)amp__on_big_stack(amp__rtc_run, &c);
    return c.rc;
}
