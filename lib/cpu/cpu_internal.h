/* cpu_internal.h — private interfaces of the CPU accelerator backend: the ABI shared with hip_kernels/amp_cpu_prelude.hpp, the device record, fibers and the launch runner. */
#ifndef AMP_CPU_INTERNAL_H
#define AMP_CPU_INTERNAL_H

#include "backend.h"
#include "core.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ----------------------------------------------------------------- ABI
 * Mirrors amp__cpu_launch / amp__cpu_item in amp_cpu_prelude.hpp byte for
 * byte (both sides assert the layout). A compiled module exports
 * `int amp__cpu_abi(void)` returning AMP__CPU_ABI, each kernel NAME as
 * `void NAME(amp__cpu_item *)`, and NAME__amp_sig. A tiled kernel the loop
 * transformation handled (cpu_loops.c) also exports
 * `void NAME__amp_tiles(amp__cpu_item *)`, which runs every work-item of
 * the tiles with linear ids [begin, end) (it sets item.tile to the one
 * running), and `const char NAME__amp_cpu_path[]`, "loops" or
 * "fibers: <why>"; a module the transformation did not run on exports
 * `const char amp__cpu_loops_note[]` saying why. */
#define AMP__CPU_ABI 2

typedef struct amp__cpu_item amp__cpu_item;
typedef struct amp__cpu_launch {
    int32_t abi;
    int32_t tiled;
    int32_t rank;
    int32_t ext[4];
    int32_t tile[3];  /* index order; 1 where unused */
    int32_t tiles[3]; /* tiles per dimension, index order; 1 where unused */
    int32_t tile_threads;
    const void *pack;
    void (*barrier)(amp__cpu_item *it);
    void (*oob)(amp__cpu_item *it, const void *data, const int32_t *idx, const int32_t *ext,
                int32_t rank);
    void (*fault)(amp__cpu_item *it, const char *what);
    /* Loop path: work-item `local` (linear id) of tile it->tile decided the
     * condition of control flow holding a barrier (`what`: "if", "for", ...)
     * differently from work-item 0. */
    void (*diverge)(amp__cpu_item *it, int32_t local, const char *what);
} amp__cpu_launch;

/* One call of an entry: simple kernels run linear indices [begin, end) of the
 * extent; tiled kernels run local work-items [begin, end) of tile `tile`. */
struct amp__cpu_item {
    const amp__cpu_launch *launch;
    int64_t begin, end;
    int32_t tile[3];
    int32_t cur_local; /* written by the entry: the work-item running now */
    void *worker;      /* amp__cpu_worker of the thread running it */
    void *fiber;       /* amp__cpu_fiber, or NULL outside fibers */
};

_Static_assert(sizeof(void *) == 8, "the CPU accelerator needs a 64-bit host");
_Static_assert(offsetof(amp__cpu_launch, pack) == 56, "amp__cpu_launch layout");
_Static_assert(sizeof(amp__cpu_launch) == 96, "amp__cpu_launch layout");
_Static_assert(offsetof(amp__cpu_item, tile) == 24, "amp__cpu_item layout");
_Static_assert(sizeof(amp__cpu_item) == 56, "amp__cpu_item layout");

typedef void (*amp__cpu_entry_fn)(amp__cpu_item *it);

/* -------------------------------------------------------------- device
 * One per process, filled once by amp__cpu_enumerate and read-only after. */
typedef struct amp__cpu_device {
    int nthreads;         /* pool size, the launching thread included */
    size_t stack_size;    /* bytes per fiber stack, guard page excluded */
    bool debug;           /* compile kernels with AMP_DEBUG_CHECKS */
    bool native;          /* compile with -march=native (the cache tag names the processor) */
    bool available;
    char reason[256];     /* why not available */
    char **cxx;           /* compiler argv prefix (resolved program + extra words) */
    int ncxx;
    char cxx_text[512];   /* the compiler command as the user gave it */
    char cache_tag[1536];
    char machine[64];
    /* AMP_CPU_TILED: how tiled kernels run. AUTO: the loop version where the
     * module has one, fibers elsewhere; FIBERS: always fibers; LOOPS: as
     * AUTO, but a tiled kernel without a loop version is refused
     * (kernel_get says why). */
    enum { AMP__CPU_TILED_AUTO, AMP__CPU_TILED_FIBERS, AMP__CPU_TILED_LOOPS } tiled;
} amp__cpu_device;

/* Compiler discovery (cpu_compile.c): fills cxx, available, reason and the
 * cache tag. Never fails: an unusable compiler leaves available false. */
void amp__cpu_find_compiler(amp__cpu_device *d);
amp_status amp__cpu_compile(amp__cpu_device *d, const amp__compile_job *job, amp__compile_output *out);

/* What kernel_get hands the core as the kernel's function: the entry point,
 * and the loop version when the kernel has one and may use it. Owned by the
 * module (freed at unload). */
typedef struct amp__cpu_kernel {
    amp__cpu_entry_fn entry;
    amp__cpu_entry_fn tiles; /* NULL: fibers */
    struct amp__cpu_kernel *next;
} amp__cpu_kernel;

/* Run one launch to completion on the pool (cpu_run.c). */
amp_status amp__cpu_run(amp__cpu_device *d, const amp__cpu_kernel *k, const amp__launch *l);

/* ------------------------------------------------------- loop version
 * Largest tile_static + work-item context a loop version may keep on its
 * stack (cpu_loops.c refuses larger kernels, cpu_run.c sizes the loop
 * runner's stack for it). */
#define AMP__CPU_LOOP_FRAME_MAX (1024 * 1024)

typedef struct amp__cpu_loops_job {
    const char *source; /* the assembled unit (NUL-terminated) */
    size_t len;
    const char *path;   /* the file it is parsed as (its directory matters for includes) */
    const char *const *args; /* compiler arguments for libclang (language, -D, -I, ...) */
    int nargs;
} amp__cpu_loops_job;

/* What the transformation made of each tiled kernel, in source order. */
typedef struct amp__cpu_loops_kernel {
    char name[256];
    unsigned at;       /* offset just after the kernel's body */
    char *loops;       /* its loop version (malloc'ed), or NULL */
    char why[256];     /* when NULL: why the kernel stays on fibers */
    char *line;        /* the #line that restores the user's numbering after it */
    bool off;          /* the caller turned the loop version off (off_why) */
    char off_why[256];
} amp__cpu_loops_kernel;
typedef struct amp__cpu_loops_result {
    amp__cpu_loops_kernel *k;
    int n;
} amp__cpu_loops_result;

/* Parse the unit with libclang and write a loop version for each tiled
 * kernel that can have one. false (note: "fibers: <why>", res empty) when
 * the transformation could not run at all. Never fails the build: a caller
 * compiles the source as it is then. Blocks while libclang parses (a few
 * hundred ms). */
bool amp__cpu_loops_transform(const amp__cpu_loops_job *job, amp__cpu_loops_result *res, char *note, size_t cap);
/* The source with each kernel's loop version (or its fiber note) after it,
 * and the list of kernels whose fiber version is left out. malloc'ed; NULL
 * when out of memory. */
char *amp__cpu_loops_assemble(const char *source, const amp__cpu_loops_result *res);
void amp__cpu_loops_free(amp__cpu_loops_result *res);

/* -------------------------------------------------------------- fibers
 * A saved execution context. amp__cpu_ctx_switch stores the running context
 * in *from and resumes *to; it returns when something switches back to
 * *from. A fiber's function must never return: it switches away for good.
 * AMP_CPU_FORCE_UCONTEXT (build define) selects the portable path anywhere,
 * to test it. */
#if (defined(__x86_64__) || defined(__aarch64__)) && !defined(AMP_CPU_FORCE_UCONTEXT)
#define AMP__CPU_ASM_SWITCH 1
typedef struct amp__cpu_ctx { void *sp; } amp__cpu_ctx;
/* cpu_switch.S */
void amp__cpu_switch_asm(void **save_sp, void *new_sp);
static inline void amp__cpu_ctx_switch(amp__cpu_ctx *from, amp__cpu_ctx *to)
{
    amp__cpu_switch_asm(&from->sp, to->sp);
}
#else
#define AMP__CPU_ASM_SWITCH 0
#include <ucontext.h>
typedef struct amp__cpu_ctx { ucontext_t uc; } amp__cpu_ctx;
void amp__cpu_ctx_switch(amp__cpu_ctx *from, amp__cpu_ctx *to);
#endif

/* Prepare ctx to run fn(arg) on the stack [lo, lo + size) at the next switch
 * to it. */
void amp__cpu_ctx_make(amp__cpu_ctx *ctx, void *lo, size_t size, void (*fn)(void *), void *arg);

/* A fiber stack: mmap'ed, with a PROT_NONE guard page below it (when the
 * kernel allows one more mapping; without it when not). */
typedef struct amp__cpu_stack { void *map; size_t map_size; void *lo; size_t size; } amp__cpu_stack;
amp_status amp__cpu_stack_alloc(size_t size, amp__cpu_stack *s);
void amp__cpu_stack_free(amp__cpu_stack *s);

#endif /* AMP_CPU_INTERNAL_H */

