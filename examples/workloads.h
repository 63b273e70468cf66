/* workloads.h — the study's transpose and matmul variants through hipamp (jobs that hold their views), their CPU references and checks, random data, poison, and timing; shared by examples/study.c, bench/bench_gpu.c (its harness and sections) and bench_cpu's sections (timing and the pause between compared sides). */
#ifndef HIPAMP_WORKLOADS_H
#define HIPAMP_WORKLOADS_H

#include <hipamp.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Kernel sources, embedded by hipamp_embed() from examples/kernels/. */
extern const char wl_transpose_source[];
extern const char wl_matmul_source[];
/* The seed's tiled transpose as test/kernels/seeds.hip writes it
 * (transpose_tiled_even: a 16 x 16 tile through tile_static float[16][16];
 * an even extent, no guard): the "typical user kernel" of issue 40's
 * cold-compile goal and the seed row of bench_cpu's transpose section. */
extern const char wl_seed_transpose_source[];

/* ------------------------------------------------------------- variants */

typedef enum wl_tvariant {
    WL_T_SIMPLE,   /* simple model, one thread per element */
    WL_T_PAD,      /* tiled 16x16 on the padded extent, guarded */
    WL_T_TRUNCATE, /* tiled 16x16 on the truncated extent, edge in the kernel */
    WL_T_SECTIONS, /* divide and conquer: tiled core + simple edge strips (1-3 launches) */
    WL_T_TUNED,    /* 32x32 tile, 32x8 threads, padded tile_static row */
    WL_T_COUNT
} wl_tvariant;

typedef enum wl_mvariant {
    WL_M_SERIAL, /* host triple loop (not a kernel) */
    WL_M_SIMPLE, /* simple model, one thread per element of C */
    WL_M_TILED,  /* tiled 16x16, tile_static, two barriers a step, padded */
    WL_M_TUNED,  /* 128x128 block, 8x8 outputs a thread, double-buffered panels */
    WL_M_COUNT
} wl_mvariant;

const char *wl_tvariant_name(wl_tvariant v);  /* "transpose simple", ... */
const char *wl_tvariant_kernel(wl_tvariant v); /* the main kernel's name */
const char *wl_mvariant_name(wl_mvariant v);
const char *wl_mvariant_kernel(wl_mvariant v); /* NULL for serial */

/* ---------------------------------------------------------------- context */

typedef struct wl_ctx {
    amp_accelerator *acc;
    amp_accelerator_view *q; /* the accelerator's default view */
    amp_accelerator_info info;
    amp_program *tprog, *mprog;
    amp_kernel *tk[5];       /* simple, pad, even, truncate, tuned */
    amp_kernel *mk[3];       /* simple, tiled16, tuned */
    amp_kernel *saxpy3;
    double build_s;          /* wall time of the two program builds */
} wl_ctx;

/* Build both kernel files for acc (NULL: default) and look up every kernel.
 * On failure prints the library's message to stderr. */
amp_status wl_open(wl_ctx *c, amp_accelerator *acc);
void wl_close(wl_ctx *c);

/* ------------------------------------------------------------------- jobs */

/* A transpose of host matrix a (M rows, N columns) into at (N x M), with its
 * views (and sections) created once; run() queues the launches and returns. */
typedef struct wl_tjob {
    wl_ctx *c;
    wl_tvariant v;
    int M, N;
    amp_array_view *A, *At;
    amp_array_view *sec[6]; /* SECTIONS: (src, dst) per part */
    int nparts;
    amp_tiled_extent core;  /* SECTIONS: the divisible core */
} wl_tjob;
amp_status wl_tjob_init(wl_tjob *j, wl_ctx *c, wl_tvariant v, float *a, float *at, int M, int N);
amp_status wl_tjob_run(wl_tjob *j);
int wl_tjob_launches(const wl_tjob *j);
/* Destroys the views (synchronizes at into host memory first). */
amp_status wl_tjob_fini(wl_tjob *j);

/* C (M x N) = A (M x K) * B (K x N) on the accelerator. */
typedef struct wl_mjob {
    wl_ctx *c;
    wl_mvariant v;
    int M, N, K;
    amp_array_view *A, *B, *C;
} wl_mjob;
amp_status wl_mjob_init(wl_mjob *j, wl_ctx *c, wl_mvariant v, float *a, float *b, float *cc, int M, int N, int K);
amp_status wl_mjob_run(wl_mjob *j);
amp_status wl_mjob_fini(wl_mjob *j);

/* The launch domains (shared with the raw launches in the benchmark). */
amp_tiled_extent wl_tuned_transpose_domain(int M, int N);
amp_tiled_extent wl_tuned_matmul_domain(int M, int N);

/* ------------------------------------------------- data, references, checks */

/* Seed from time and pid unless HIPAMP_SEED is set; returns the seed. */
uint64_t wl_seed(void);
/* Uniform in [-1, 1), never exactly 0. */
void wl_fill_random(float *x, size_t n, uint64_t *state);
/* Quiet NaNs, so any element a kernel fails to write fails the check. */
void wl_poison(float *x, size_t n);

/* Host matmul, i-k-j order (the "serial" variant). */
void wl_matmul_serial(const float *a, const float *b, float *c, int M, int N, int K);
/* at == a^T exactly; returns the number of wrong elements, first in *first. */
size_t wl_check_transpose(const float *a, const float *at, int M, int N, size_t *first);
/* c against a double-precision reference: every element when M*N*K is at
 * most full_limit, else `samples` random elements plus every element of the
 * last row and column, plus a finiteness scan of all of c. Tolerance scales
 * with sum |a_ik b_kj|. Returns the number of wrong elements checked. */
size_t wl_check_matmul(const float *a, const float *b, const float *c, int M, int N, int K,
                       double full_limit, int samples, uint64_t *state, double *max_err);

/* ----------------------------------------------------------------- timing */

double wl_now(void); /* monotonic seconds */
/* Sleeps WL_SETTLE_MS: longer than idle OpenMP threads keep spinning after
 * a parallel region (libgomp's default, 300000 pauses) and hipamp's pool
 * threads after a launch (AMP_CPU_SPIN_US at its default), so that a side compared with
 * another is timed on cores the other's idle threads have left. */
enum { WL_SETTLE_MS = 100 };
void wl_settle(void);
typedef amp_status (*wl_run_fn)(void *job);
/* One warm-up run, then batches of runs between waits on q, about budget_s
 * in all; returns the median seconds per run (<0 on failure, *st set).
 * *runs gets how many runs were timed. */
double wl_time(wl_run_fn run, void *job, amp_accelerator_view *q, double budget_s, int *runs,
               amp_status *st);
/* Median of n doubles (sorts them). */
double wl_median(double *x, int n);

#endif /* HIPAMP_WORKLOADS_H */
