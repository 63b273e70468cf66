/* trace_internal.h — what the trace's own files share (lib/trace*.c): the
 * stored event, the recording buffer, the device placement of a command,
 * the JSON writer, the trace file, the summary, the words they print, and
 * the vendor ranges. The core never includes it (lib/trace/trace.h is its view).
 *
 * Locks: the buffer lock (lib/trace/trace_buffer.c) is a leaf. The flush lock
 * (lib/trace/trace.c) is taken with no core lock held, and guards everything a
 * flush touches: the placement, the JSON writer's announcements, the trace
 * file and the summary's sums. */
#ifndef AMP_TRACE_INTERNAL_H
#define AMP_TRACE_INTERNAL_H

#include "trace.h"

#include <stdio.h>
#include <sys/types.h>

/* Set by the constructor (lib/trace/trace.c), read-only after: the clock's zero
 * in the file (when the library was loaded) and the process that traces. */
extern uint64_t amp__trace_epoch;
extern pid_t amp__trace_pid;

/* ------------------------------------------------- lib/trace/trace_buffer.c */

/* A record as the buffer keeps it: name and source replaced by name (an
 * interned string: the kernel, or the build's label), and the host
 * thread's track. */
typedef struct amp__tev {
    amp__trace_rec r;
    uint32_t name; /* UINT32_MAX: none */
    uint32_t tid;  /* 1, 2, ... in the order threads first recorded */
} amp__tev;

#define AMP__TRACE_CHUNK 1024
typedef struct amp__tchunk {
    struct amp__tchunk *next;
    size_t n;
    amp__tev ev[AMP__TRACE_CHUNK];
} amp__tchunk;

/* Events at most between two flushes (AMP_TRACE_MAX_EVENTS); later ones
 * are counted as dropped. Set by the constructor. */
void amp__tbuf_set_limit(uint64_t max_events);
uint64_t amp__tbuf_limit(void);
/* Keep r (its name: a kernel or label, may be NULL), ended at end_ns; the
 * buffer owns r's timed events from here. Full or out of memory: counted
 * as dropped, the events released. */
void amp__tbuf_put(const amp__trace_rec *r, const char *name, uint64_t end_ns);

/* What one flush takes: the events recorded since the last one and the
 * names they refer to (interned strings live as long as the process, so
 * the pointers stay valid). ok false: no memory for the snapshot (the
 * events are still there, to be released). */
typedef struct amp__tbatch {
    amp__tchunk *chunks;
    uint64_t count, dropped;
    char **strs;
    uint32_t nstrs;
    long *threads; /* OS thread id, by track - 1 */
    uint32_t nthreads;
    bool ok;
} amp__tbatch;
void amp__tbuf_take(amp__tbatch *b);
void amp__tbatch_free(amp__tbatch *b);
/* A string of the batch by id ("?" when unknown). */
const char *amp__tbatch_str(const amp__tbatch *b, uint32_t id);

/* Release a command's timed events (what it still holds) and clear them. */
void amp__timing_release(amp__trace_timing *t);

/* -------------------------------------------------------- lib/trace/trace.c */

/* Where a flush placed an event on the host clock: a device command by its
 * timed events (on_device, device_ms what they measured), anything else by
 * its host times. */
typedef struct amp__placed {
    uint64_t start, end;
    double device_ms;
    bool on_device;
} amp__placed;

/* -------------------------------------------------- lib/trace/trace_json.c */

/* Chrome trace-event text: the file's head (its first event), one event
 * with whatever track names it needs first (each text starts with ",\n"),
 * and the closing text that makes the file a complete document. */
void amp__json_head(amp__sb *b);
void amp__json_event(amp__sb *b, const amp__tbatch *bt, const amp__tev *e, const amp__placed *p);
void amp__json_tail(amp__sb *b, uint64_t written, uint64_t dropped);

/* -------------------------------------------------- lib/trace/trace_file.c */

/* AMP_TRACE's value, read by the constructor; a relative one is made
 * absolute here, against the current directory (where the program
 * started, whatever directory it is in at the first flush). false: it
 * cannot name a file (too long, or relative and the current directory has
 * no name), why says so and nothing is written. */
bool amp__tfile_configure(const char *value, char *why, size_t n);
/* Put the events of one flush into the file (opened safely on first use
 * with head written first; another process's trace is never cut: this
 * process then writes NAME.<pid>.EXT beside it and says so on stderr),
 * then tail, so that the file is a complete document after every flush. AMP_ERROR_INVALID_ARGUMENT with the path and
 * why when it cannot be opened or written (remembered: later flushes say
 * the same); a failed write leaves the file as the previous flush did.
 * nevents counts into what the file holds. */
amp_status amp__tfile_write(const amp__sb *head, const amp__sb *events, uint64_t nevents, const amp__sb *tail);
/* Events the file holds. */
uint64_t amp__tfile_written(void);
/* "path (N events)" and why nothing more was written, for the summary. */
void amp__tfile_note(char *out, size_t n);
/* At exit: close; nothing is written after. */
void amp__tfile_close(void);
/* In a forked child: its copy of the parent's descriptor is closed (the
 * lock stays the parent's). */
void amp__tfile_child(void);

/* ----------------------------------------------- lib/trace/trace_summary.c */

/* Sum one event of bt into the table. */
void amp__summary_add(const amp__tev *e, const amp__tbatch *bt, const amp__placed *p);
/* The table (at exit, AMP_TRACE_SUMMARY). file_note: the trace file's
 * line, or NULL without AMP_TRACE. */
void amp__summary_print(FILE *o, uint64_t dropped, uint64_t max_events, const char *file_note);

/* -------------------------------------------------- lib/trace/trace_text.c */

const char *amp__dir_short(int dir);  /* "H2D", ... */
const char *amp__dir_long(int dir);   /* "host->device", ... */
const char *amp__cache_name(int c);   /* "miss", "memory", "disk", "prebuilt" */
/* "999x666" of the first rank values. */
void amp__dims(char *out, size_t n, const int32_t *v, int rank);
/* "kernel.hip [transpose_simple +5]": the file name and the kernels the
 * source defines, so that two embedded sources can be told apart. */
void amp__build_label(const char *source_name, const char *source, size_t len, char *out, size_t n);

/* ------------------------------------------------ lib/trace/trace_vendor.c */

/* The calling thread's vendor range for r (kind and what is known at its
 * start), and its end: ranges nest. Loads the tool interface on first use;
 * nothing when none is there. */
void amp__vendor_push_rec(const amp__trace_rec *r);
void amp__vendor_pop(void);
/* Whether a profiler that takes ranges seems attached (the constructor
 * asks when AMP_TRACE_VENDOR is unset): NVTX_INJECTION64_PATH (Nsight
 * Systems), HSA_TOOLS_LIB or ROCP_TOOL_LIB (rocprof, roctracer),
 * ROCP_TOOL_LIBRARIES (rocprofv3). */
bool amp__vendor_wanted(void);

#endif /* AMP_TRACE_INTERNAL_H */
