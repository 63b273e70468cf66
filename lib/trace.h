/* trace.h — the hooks the core calls where builds, copies, launches and
 * waits happen (lib/trace.c records them; lib/trace_vendor.c turns them into
 * NVTX/roctx ranges). Each hook is one line at its call site: one relaxed
 * load and a not-taken branch while tracing is off, nothing at all in a
 * library built with HIPAMP_TRACE_HOOKS=0 (CMake: -DHIPAMP_TRACE=OFF). */
#ifndef AMP_TRACE_H
#define AMP_TRACE_H

#include "internal.h"

#ifndef HIPAMP_TRACE_HOOKS
#define HIPAMP_TRACE_HOOKS 1
#endif

/* What the environment asked for, set once by the library's constructor
 * (before any thread of the program can call in) and never changed after,
 * except that a forked child clears it. */
enum {
    AMP__TRACE_FILE = 1u,    /* AMP_TRACE: write a trace-event file */
    AMP__TRACE_SUMMARY = 2u, /* AMP_TRACE_SUMMARY: print a table at exit */
    AMP__TRACE_VENDOR = 4u,  /* a profiler is attached: NVTX / roctx ranges */
    AMP__TRACE_RECORD = AMP__TRACE_FILE | AMP__TRACE_SUMMARY
};
extern _Atomic unsigned amp__trace_flags;

#if HIPAMP_TRACE_HOOKS
#define AMP__TRACING() __builtin_expect(atomic_load_explicit(&amp__trace_flags, memory_order_relaxed) != 0, 0)
/* Run the statement(s) only while tracing. */
#define AMP__TRACE(...)                \
    do {                               \
        if (AMP__TRACING()) {          \
            __VA_ARGS__;               \
        }                              \
    } while (0)
/* A local the hooks need (compiled out with them). */
#define AMP__TRACE_VAR(...) __VA_ARGS__
#else
#define AMP__TRACING() 0
#define AMP__TRACE(...) \
    do {                \
    } while (0)
#define AMP__TRACE_VAR(...)
#endif

/* A start time on the host clock, taken by begin (which may also open a
 * vendor range) only while tracing. */
#define AMP__TRACE_CLOCK(name, begin) AMP__TRACE_VAR(uint64_t name = AMP__TRACING() ? (begin) : 0)

/* Why a copy happened (or did not). */
typedef enum amp__copy_why {
    AMP__WHY_NONE = 0,
    AMP__WHY_FIRST_USE,      /* H2D: data never current on the device before */
    AMP__WHY_REFRESH,        /* H2D: the host changed it (refresh, or amp_copy into the view) */
    AMP__WHY_RESET,          /* H2D: the device's region list was full and was reset */
    AMP__WHY_WRITE_BACK,     /* D2H: device-newer data saved before a copy-in over it */
    AMP__WHY_SYNCHRONIZE,    /* D2H: host access (synchronize, destroy, an amp_copy reading it) */
    AMP__WHY_FLUSH,          /* D2H: refresh/discard of part of a view whose region list was full */
    AMP__WHY_ARRAY_INIT,     /* H2D: amp_array_create's initial data */
    AMP__WHY_ARRAY_FROM_HOST,
    AMP__WHY_ARRAY_TO_HOST,
    AMP__WHY_COPY,           /* amp_copy_array / amp_copy_view */
    AMP__WHY_COPY_STAGED,    /* amp_copy between devices, through host memory */
    AMP__WHY_DISCARD,        /* no copy: discard_data or AMP_WRITE_ONLY made it unnecessary */
    AMP__WHY_COUNT
} amp__copy_why;
/* "first use", ...; "?" outside the enum. */
const char *amp__copy_why_name(int why);

/* Builds (lib/program.c): begin opens a vendor range and returns the
 * clock; end records the build with how it was satisfied. */
enum { AMP__BUILD_COMPILED = 0, AMP__BUILD_MEMORY = 1, AMP__BUILD_DISK = 2 };
uint64_t amp__trace_build_begin(const amp__build_input *in);
void amp__trace_build_end(uint64_t t0, amp_accelerator *acc, const amp__build_input *in, int cache, amp_status st);

/* Launches (lib/queue.c): the traced form of amp__queue_launch_raw, with
 * timed events around the launch (owned by the trace until flushed). */
amp_status amp__trace_launch(amp_accelerator_view *q, void *fn, const amp__launch *l, amp__point *done);

/* One logical copy (a box, however many driver copies): begin before its
 * first driver copy (q NULL: it runs on this thread, host-timed), end after
 * its last, with the queue whose statistics count it, what moved and the
 * status (a failed copy is not recorded; its events are released). end
 * closes the span, so ending it twice is harmless. */
typedef struct amp__trace_span {
    amp_accelerator_view *q;
    void *t0;
    uint64_t start_ns, bytes;
    uint8_t dir, why;
    bool open, vendor;
} amp__trace_span;
#define AMP__TRACE_SPAN(name) AMP__TRACE_VAR(amp__trace_span name = {0})
void amp__trace_copy_begin(amp__trace_span *sp, amp_accelerator_view *q, amp__copy_dir dir, uint64_t bytes,
                           amp__copy_why why);
void amp__trace_copy_end(amp__trace_span *sp, amp_accelerator_view *counted, const amp__storage *s,
                         const amp__box *b, amp_status st);

/* Copies that did not happen [storage lock]: prepare skipped the copy-in of
 * b (discard / AMP_WRITE_ONLY); discard dropped device-newer parts of b
 * (copy-backs avoided). refresh notes that device copies of b went stale,
 * which names the next copy-in (s->stale_why). */
void amp__trace_copy_in_avoided(const amp__storage *s, amp_accelerator_view *q, const amp__box *b);
void amp__trace_discard(const amp__storage *s, const amp__box *b);
void amp__trace_refresh(amp__storage *s, const amp__box *b);

/* Host waits that block (lib/queue.c); seq AMP__SEQ_TAIL: a whole drain. */
uint64_t amp__trace_wait_begin(amp_accelerator_view *q);
void amp__trace_wait_end(uint64_t t0, amp_accelerator_view *q, uint64_t seq, amp_status st);

/* ------------------------------------------------ lib/trace_vendor.c */

/* Vendor ranges on the calling thread: push/pop nest. Categories pick the
 * colour. Loads the tool interface on first use; nothing when none is
 * there. Never fails, never takes a core lock. */
enum { AMP__RANGE_BUILD, AMP__RANGE_COPY, AMP__RANGE_LAUNCH, AMP__RANGE_WAIT };
void amp__vendor_push(int category, uint64_t payload, const char *text);
void amp__vendor_pop(void);
/* Whether a profiler that takes ranges seems attached (the constructor
 * asks when AMP_TRACE_VENDOR is unset): NVTX_INJECTION64_PATH (Nsight
 * Systems), HSA_TOOLS_LIB or ROCP_TOOL_LIB (rocprof, roctracer),
 * ROCP_TOOL_LIBRARIES (rocprofv3). */
bool amp__vendor_wanted(void);
/* Whether a vendor interface was found (loads it if not tried yet), and
 * which ("nvtx", "roctx", or "none"). */
const char *amp__vendor_kind(void);

#endif /* AMP_TRACE_H */
