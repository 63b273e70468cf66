/* cpu_fiber.c — fiber contexts (initial frames for the assembly switch in cpu_switch.S, or ucontext on other architectures) and guarded fiber stacks, announced to valgrind and the sanitizers. */
#include "cpu_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#if AMP__CPU_ASAN
void __asan_unpoison_memory_region(void const volatile *addr, size_t size);
#endif
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>) && !defined(AMP_CPU_NO_VALGRIND)
#include <valgrind/valgrind.h>
#define AMP__CPU_VALGRIND 1
#endif
#endif

/* The tool state a context on stack s starts with. */
static void amp__cpu_ctx_tools_init(amp__cpu_ctx *ctx, const amp__cpu_stack *s)
{
    memset(&ctx->t, 0, sizeof ctx->t);
    ctx->t.lo = s->lo;
    ctx->t.size = s->size;
    ctx->t.tsan = s->tsan;
}

#if AMP__CPU_ASM_SWITCH
void amp__cpu_fiber_start(void); /* cpu_switch.S */

void amp__cpu_ctx_make(amp__cpu_ctx *ctx, const amp__cpu_stack *s, void (*fn)(void *), void *arg)
{
    void *lo = s->lo;
    size_t size = s->size;
    amp__cpu_ctx_tools_init(ctx, s);
    /* Top of stack, 16-byte aligned with a little headroom. */
    uintptr_t top = ((uintptr_t)lo + size - 64) & ~(uintptr_t)15;
#if defined(__x86_64__)
    /* The switch pops these 56 bytes and returns, leaving rsp == top:
     * 16-aligned, as the call in amp__cpu_fiber_start requires. */
    uint64_t *f = (uint64_t *)(top - 56);
    f[0] = 0;                  /* r15 */
    f[1] = 0;                  /* r14 */
    f[2] = 0;                  /* r13 */
    f[3] = (uint64_t)arg;      /* r12 */
    f[4] = (uint64_t)fn;       /* rbx */
    f[5] = 0;                  /* rbp */
    f[6] = (uint64_t)(uintptr_t)amp__cpu_fiber_start;
    ctx->sp = f;
#else /* __aarch64__ */
    uint64_t *f = (uint64_t *)(top - 160);
    memset(f, 0, 160);
    f[0] = (uint64_t)arg;      /* x19 */
    f[1] = (uint64_t)fn;       /* x20 */
    f[11] = (uint64_t)(uintptr_t)amp__cpu_fiber_start; /* x30 */
    ctx->sp = f;
#endif
}

#else /* ucontext fallback: slow (a system call per switch) but portable */

/* makecontext passes int arguments only: pointers travel as 32-bit halves. */
static void amp__cpu_uc_trampoline(unsigned fn_hi, unsigned fn_lo, unsigned arg_hi, unsigned arg_lo)
{
    void (*fn)(void *) = (void (*)(void *))(((uintptr_t)fn_hi << 32) | fn_lo);
    fn((void *)(((uintptr_t)arg_hi << 32) | arg_lo));
}

void amp__cpu_ctx_make(amp__cpu_ctx *ctx, const amp__cpu_stack *s, void (*fn)(void *), void *arg)
{
    void *lo = s->lo;
    size_t size = s->size;
    amp__cpu_ctx_tools_init(ctx, s);
    getcontext(&ctx->uc);
    ctx->uc.uc_stack.ss_sp = lo;
    ctx->uc.uc_stack.ss_size = size;
    ctx->uc.uc_link = NULL;
    uintptr_t a = (uintptr_t)arg, f = (uintptr_t)fn;
    makecontext(&ctx->uc, (void (*)(void))amp__cpu_uc_trampoline, 4, (unsigned)(f >> 32),
                (unsigned)f, (unsigned)(a >> 32), (unsigned)a);
}

#endif

/* Lines of a /proc file (its mappings), read without allocating; -1 when it
 * cannot be read. Only for the message of a guard that failed. */
static long amp__cpu_count_lines(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    long n = 0;
    char buf[4096];
    ssize_t r;
    while ((r = read(fd, buf, sizeof buf)) > 0)
        for (ssize_t i = 0; i < r; ++i) n += buf[i] == '\n';
    if (r < 0) n = -1;
    close(fd);
    return n;
}

/* A stack overflow must meet PROT_NONE, never the next fiber's stack: a
 * stack whose guard cannot be made is not handed out. mprotect splits the
 * mapping, so past vm.max_map_count it fails with ENOMEM; the stack would
 * then merge with the next one mapped beside it, and an overflow would
 * silently overwrite another work-item's frames. */
amp_status amp__cpu_stack_guard(void *lo, size_t len)
{
    if (mprotect(lo, len, PROT_NONE) == 0) return AMP_OK;
    int err = errno;
    if (err != ENOMEM)
        return amp__fail(AMP_ERROR_OUT_OF_MEMORY,
                         "CPU accelerator: cannot make the guard page of a fiber stack (mprotect of %zu "
                         "bytes at %p: %s)", len, lo, strerror(err));
    long maps = amp__cpu_count_lines("/proc/self/maps");
    long max = -1;
    char buf[32] = {0};
    int fd = open("/proc/sys/vm/max_map_count", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        if (read(fd, buf, sizeof buf - 1) > 0) max = strtol(buf, NULL, 10);
        close(fd);
    }
    return amp__fail(AMP_ERROR_OUT_OF_MEMORY,
                     "CPU accelerator: cannot make the guard page of a fiber stack: the process has "
                     "about %ld memory mappings and vm.max_map_count is %ld (mprotect: %s); raise "
                     "vm.max_map_count (sysctl) or use fewer mappings (smaller tiles, fewer "
                     "AMP_CPU_THREADS); without its guard a stack overflow would overwrite another "
                     "work-item's stack", maps, max, strerror(err));
}

amp_status amp__cpu_stack_alloc(size_t size, amp__cpu_stack *s)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size = (size + page - 1) / page * page;
    size_t total = size + page;
    memset(s, 0, sizeof *s);
    /* NORESERVE: only the pages a fiber touches are committed, so many large
     * stacks cost address space, not memory. */
    void *m = mmap(NULL, total, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (m == MAP_FAILED)
        return amp__fail(AMP_ERROR_OUT_OF_MEMORY,
                         "CPU accelerator: cannot map a fiber stack of %zu bytes: %s "
                         "(lower AMP_CPU_STACK_SIZE or AMP_CPU_THREADS)", total, strerror(errno));
    amp_status st = amp__cpu_stack_guard(m, page);
    if (st != AMP_OK) goto fail;
    s->map = m;
    s->map_size = total;
    s->lo = (char *)m + page;
    s->size = size;
#if AMP__CPU_ASAN
    /* AddressSanitizer keeps the shadow of memory that was unmapped: a
     * stack freed with its fibers parked mid-call (a thread that launched
     * exited: amp__cpu_worker_free) left their frames' redzones there, and
     * a new stack mapped at the same address then failed its first write
     * (a "stack-buffer-underflow" in amp__cpu_ctx_make, threads that come
     * and go launching tiled kernels on fibers). A new stack starts clean. */
    __asan_unpoison_memory_region(s->lo, s->size);
#endif
#ifdef AMP__CPU_VALGRIND
    s->vg_id = VALGRIND_STACK_REGISTER(s->lo, (char *)s->lo + s->size);
#endif
#if AMP__CPU_TSAN
    s->tsan = __tsan_create_fiber(0);
#endif
    return AMP_OK;
fail:
    munmap(m, total);
    return st;
}

void amp__cpu_stack_free(amp__cpu_stack *s)
{
#ifdef AMP__CPU_VALGRIND
    if (s->map) VALGRIND_STACK_DEREGISTER(s->vg_id);
#endif
#if AMP__CPU_TSAN
    if (s->tsan) __tsan_destroy_fiber(s->tsan);
#endif
    if (s->map) munmap(s->map, s->map_size);
    memset(s, 0, sizeof *s);
}
