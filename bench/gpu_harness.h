/* gpu_harness.h — what every section of the GPU benchmark report (bench_gpu.c and gpu_*.c) shares: the report text, chart rows and goals, the raw launches of the study's kernels through raw_gpu.h, and the batch timing that sets hipamp's launches beside the raw ones. */
#ifndef HIPAMP_BENCH_GPU_HARNESS_H
#define HIPAMP_BENCH_GPU_HARNESS_H

#include "raw_gpu.h"
#include "base/signature.h"
#include "workloads.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A hipamp call that must succeed: dies with its status and message. */
#define AK(call)                                                                            \
    do {                                                                                    \
        amp_status s_ = (call);                                                             \
        if (s_ != AMP_OK)                                                                   \
            die("%s:%d: %s: %s: %s", __FILE__, __LINE__, #call, amp_status_name(s_),        \
                amp_last_error());                                                          \
    } while (0)

extern rg_device D;  /* the raw path's device 0 */
extern wl_ctx W;     /* hipamp on the same device: programs, kernels, default view */
extern uint64_t rng; /* the report's random data (seeded once in main) */
extern bool quick;   /* --quick: smaller sizes */
extern int failures; /* verification failures; the exit status is 1 when any */

/* ------------------------------------------------------------ the report */

/* Appends to the Markdown report and echoes to stdout. */
void out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The report text so far (NUL-terminated; NULL before the first out). */
const char *report_text(void);

/* Chart rows: panel, label, series, value, unit (series "ceiling" = line). */
typedef struct crow { char panel[64], label[32], series[16], unit[12]; double value; } crow;
extern crow crows[128];
extern int ncrows;
void chart(const char *panel, const char *label, const char *series, double value, const char *unit);
/* The built-in PNG of the chart rows (gpu_png.c), for when matplotlib is missing. */
bool png_chart(const char *path, const char *title);

/* Goals, in the order the sections add them; the report's table lists them. */
typedef struct goal { char what[96], target[32], measured[96]; bool met; char note[256]; } goal;
extern goal goals[48];
extern int ngoals;
void add_goal(bool met, const char *what, const char *target, const char *note, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* ----------------------------------------------------------- raw launches */

typedef struct rawk {
    void *f;
    amp__signature sig;
    const char *name;
} rawk;

/* The study's kernels compiled by the vendor layer (load_raw_kernels). */
extern rawk rk_tsimple, rk_tpad, rk_teven, rk_ttrunc, rk_ttuned, rk_saxpy3;
extern rawk rk_msimple, rk_mtiled, rk_mtuned;
/* Compiles the two kernel files on the raw path, looks every kernel up and
 * reports the tuned kernels' registers. */
void load_raw_kernels(void);

/* Prelude + source exactly as amp_program_build assembles them, compiled
 * and loaded by the vendor layer; *secs (may be NULL) gets the wall time. */
void *raw_build(const char *src, double *secs);

/* A rank-1 or rank-2 view descriptor over device memory. */
typedef struct rview {
    rg_ptr p;
    int rank;
    long long stride0; /* rank 2: elements between rows */
    int ext[2];
} rview;
static inline rview rv2(rg_ptr base, long long ld, int r0, int c0, int rows, int cols)
{
    rview v = {base + (rg_ptr)(((long long)r0 * ld + c0) * 4), 2, ld, {rows, cols}};
    return v;
}
static inline rview rv1(rg_ptr base, int n)
{
    rview v = {base, 1, 1, {n, 0}};
    return v;
}

/* Kernel name of module m (from raw_build) and its signature record. */
void raw_kernel(void *m, const char *name, rawk *k);

/* Launch k on domain e with views v (the pack filled from the signature). */
void raw_launch(const rawk *k, amp_extent e, const rview *v, int nv);

/* -------------------------------------------------------------- timing */

typedef void (*run_fn)(void *);
typedef struct hrun { amp_status (*fn)(void *); void *job; } hrun;

enum { REPS = 7 };
typedef struct cmp { double amp_s, raw_s, raw_ev_s, same_s; int n; } cmp;

/* Seconds per run of a batch of n hipamp runs between two waits. */
double hip_batch(const hrun *h, int n);
/* Wall seconds per run; *ev_s gets the stream-event time per run. */
double raw_batch(run_fn fn, void *job, int n, double *ev_s);
/* A raw batch as hip_batch times one: no events inside (for pairs). */
double raw_plain_batch(run_fn fn, void *job, int n);
/* A warm-up run of each side, then the batch size (in lo..hi) that makes a
 * hipamp batch last about batch_s, timed over a batch of probe_n. */
int warm_up_and_size(const hrun *h, run_fn raw, void *rjob, int probe_n, double batch_s, int lo, int hi);
/* Interleaved batches of the hipamp job and the raw job, same count each;
 * medians. A warm-up of each first (copies, module load, clocks). same_job
 * (may be NULL): the raw launches on hipamp's own device buffers, a control
 * for where the driver placed each side's memory. */
cmp compare(const hrun *h, run_fn raw, void *rjob, void *same_job, double batch_s);
/* Event-timed batches of a raw operation alone (copies, vendor BLAS). */
double raw_only(run_fn fn, void *job, double batch_s);

/* The directory of this program, where bench_trace and bench_cpu are built. */
bool self_dir(char *dir, size_t size);

#endif
