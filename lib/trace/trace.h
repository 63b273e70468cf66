/* trace.h — the trace as a sink: the plain record the core hands it for
 * every build, copy (and copy avoided), launch and wait, and the switches
 * of the hooks that fill those records. The core owns what it measures:
 * lib/core/queue.c brackets launches and copies with its own timed events and
 * hands them over with the record; lib/core/program.c and lib/core/storage.c describe
 * builds and the copies avoided. The trace (lib/trace*.c) stores, formats
 * and writes records, and calls nothing above this header, backend.h and
 * core.h (ci/check-layers.py checks it).
 *
 * Each hook is one line at its call site: one relaxed load and a not-taken
 * branch while tracing is off, nothing at all in a library built with
 * HIPAMP_TRACE_HOOKS=0 (CMake: -DHIPAMP_TRACE=OFF). */
#ifndef AMP_TRACE_H
#define AMP_TRACE_H

#include "backend.h"
#include "base/core.h"

#include <stdatomic.h>

#ifndef HIPAMP_TRACE_HOOKS
#define HIPAMP_TRACE_HOOKS 1
#endif

/* What the environment asked for, set once by the library's constructor
 * (before any thread of the program can call in) and never changed after,
 * except that a forked child clears it and AMP__TRACE_VENDOR goes when no
 * profiler interface can be loaded. */
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

/* Whether records are kept (AMP_TRACE or AMP_TRACE_SUMMARY): only then are
 * timed events worth recording for them. */
static inline bool amp__trace_recording(void)
{
    return (atomic_load_explicit(&amp__trace_flags, memory_order_relaxed) & AMP__TRACE_RECORD) != 0;
}

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
/* "first use", ...; "?" outside the enum (lib/trace/trace_text.c). */
const char *amp__copy_why_name(int why);

/* What a record describes; how a build was satisfied; what a queue is. */
enum { AMP__REC_BUILD = 1, AMP__REC_COPY, AMP__REC_LAUNCH, AMP__REC_WAIT, AMP__REC_AVOIDED, AMP__REC_GRAPH };
enum { AMP__BUILD_COMPILED = 0, AMP__BUILD_MEMORY = 1, AMP__BUILD_DISK = 2, AMP__BUILD_PREBUILT = 3 };
enum { AMP__QUEUE_CREATED = 0, AMP__QUEUE_DEFAULT = 1, AMP__QUEUE_NATIVE = 2 };

/* A device command's timed events (backend.h's event_record_timed) around
 * it: the trace reads their elapsed time when it flushes and releases them.
 * t0 NULL: the command is placed by the host clock. */
typedef struct amp__trace_timing {
    const amp__backend *be;
    void *dev, *t0, *t1;
} amp__trace_timing;

/* One thing that happened, as plain data. Start from AMP__TRACE_REC(kind)
 * and fill what the kind uses; the trace copies what it keeps (name and
 * source are read during the call only). */
typedef struct amp__trace_rec {
    uint8_t kind;        /* AMP__REC_* */
    uint8_t sub;         /* copy, avoided: amp__copy_dir; build: AMP__BUILD_* */
    uint8_t why;         /* copy, avoided: amp__copy_why */
    uint8_t rank;        /* launch: the extent's rank; copy, avoided: the storage's (0: no object) */
    uint8_t queue_kind;  /* AMP__QUEUE_* of qid */
    bool tiled;          /* launch */
    bool is_array;       /* copy, avoided: the object is an array, not a view */
    uint32_t qid;        /* the queue's number in traces (0: none) */
    int32_t acc;         /* the accelerator's index in the registry (-1: none) */
    const amp_accelerator_info *acc_info; /* acc's info; lives as long as the process */
    const char *name;    /* launch: the kernel; build: the source's file name (NULL: AMP__SOURCE_NAME);
                            graph: the kernels it launches */
    const char *source;  /* build: the source, whose kernels label the build */
    size_t source_len;
    amp_status st;       /* build, wait: the outcome */
    uint32_t elem;       /* copy, avoided: element bytes */
    uint64_t t_ns;       /* start on the host clock (amp__now_ns; device commands: when queued) */
    uint64_t end_ns;     /* end on the host clock (stamped by the trace) */
    uint64_t bytes;      /* copy, avoided; graph: what its copies move */
    uint64_t launches, copies; /* graph: the commands one replay runs */
    uint64_t seq;        /* wait: the command waited for (UINT64_MAX: everything queued) */
    uintptr_t object;    /* copy, avoided: the storage, as an identity only */
    int32_t ext[AMP_MAX_RANK]; /* launch: the extent; copy, avoided: the storage's */
    int32_t tile[3];     /* launch, tiled */
    int32_t lo[AMP_MAX_RANK], hi[AMP_MAX_RANK]; /* copy, avoided: the box that moved */
    amp__trace_timing timing; /* launch, copy on a device queue */
} amp__trace_rec;
#define AMP__TRACE_REC(k) ((amp__trace_rec){.kind = (k), .acc = -1})

/* The entry points (lib/trace/trace.c). Never fail, never take a core lock; the
 * trace's buffer lock is a leaf (they run under storage locks).
 *
 * begin: the start of a span; opens the vendor range r describes (what is
 * known before the work: name, extent, bytes, direction, reason,
 * accelerator) and returns the host clock for r->t_ns.
 * end: the end of a span begun with begin. keep: record it (when
 * recording); the trace then owns r->timing's events, and releases them
 * itself when it drops the record (or keep is false). Closes the range.
 * instant: a record with no span (a copy avoided), stamped now. */
uint64_t amp__trace_begin(const amp__trace_rec *r);
void amp__trace_end(const amp__trace_rec *r, bool keep);
void amp__trace_instant(const amp__trace_rec *r);
/* span: a record of something that ran from r->t_ns to end_ns, which a
 * backend timed inside a command the core traced (a graph's launches on
 * the CPU accelerator); no timed events, no vendor range. */
void amp__trace_span(const amp__trace_rec *r, uint64_t end_ns);

#endif /* AMP_TRACE_H */
