/* first_call.h — the "time to first result" section (issue 40), shared by bench_cpu and bench_gpu: each built-in algorithm's first call with empty caches (prebuilt programs where shipped, and with AMP_PREBUILT=0), a cold build + launch of the seed's transpose kernel and of examples/kernels/transpose.hip, and on a GPU the seed's kernel written without hipamp through the vendor's compiler alone, each against a warm call, every measurement in a fresh child process. */
#ifndef HIPAMP_BENCH_FIRST_CALL_H
#define HIPAMP_BENCH_FIRST_CALL_H

#include <stdbool.h>
#include <stdio.h>

/* The hidden option a bench re-executes itself with; its main hands
 * everything after it to fc_child_main before it does anything else (the
 * child must start with the library untouched). */
#define FC_CHILD_OPTION "--first-call-child"

/* A GPU bench's vendor layer, for the row that builds the seed's transpose
 * written without hipamp (fc_plain_seed_source: no prelude, the vendor's
 * own words) through the vendor's runtime compiler alone: the floor under
 * the cold-compile goal. Each function runs in the child and may end the
 * process with a message on failure (the parent reports its last line). */
typedef struct fc_vendor {
    const char *label;   /* the row's label */
    void (*open)(void);  /* the device and its context: the "accelerator start" */
    /* Compiles and loads the source with the library's compiler options;
     * returns its kernel fc_plain_seed_kernel. */
    void *(*build)(const char *source);
    /* in -> device, the kernel over n x n floats in 16 x 16 tiles (n a
     * multiple of 16), device -> out, waited for. */
    void (*transpose)(void *kernel, const float *in, float *out, int n);
} fc_vendor;

/* The seed's tiled transpose (workloads.c's wl_seed_transpose_source)
 * written as a CUDA/HIP programmer would without hipamp: extern "C"
 * fc_plain_seed_kernel(const float *A, float *At, int n), A and At n x n,
 * a 16 x 16 block per tile, grid (n / 16, n / 16). Compiles under NVRTC and
 * hipRTC alike. */
extern const char fc_plain_seed_source[];
extern const char fc_plain_seed_kernel[];

typedef struct fc_config {
    const char *self;        /* the program to re-execute; NULL: this one (/proc/self/exe) */
    const char *accelerator; /* the device path the children open: "cpu", "cuda:0" */
    const char *rows;        /* comma-separated row names or families ("reduce", "sort/uint32"); NULL: all */
    double timeout_s;        /* each child's limit; 0: FC_DEFAULT_TIMEOUT_S */
    double alg_goal_ms;      /* the first call's goal for the built-in algorithms */
    double build_goal_ms;    /* the cold compile's goal for the seed transpose (transpose.hip set against it) */
    const char *build_goal_where; /* where that goal applies ("the H200 host"), for the table */
    bool no_jit;             /* --first-call-no-jit: leave out the AMP_PREBUILT=0 column */
    int rounds;              /* --first-call-rounds=K: every selected row K times, in turn; 0: once */
    const fc_vendor *vendor; /* the plain seed's row (transpose/seed-plain); NULL: no such row */
} fc_config;

#define FC_DEFAULT_TIMEOUT_S 300.0

/* What the section found, for a bench's goals table. */
typedef struct fc_summary {
    bool skipped;            /* the accelerator was unavailable: nothing measured */
    int rows, failed;        /* rows measured; rows whose child failed, timed out or checked wrong */
    int alg_rows, alg_met;   /* built-in algorithm rows under the goal (copy_if is outside it) */
    double worst_alg_ms;     /* the slowest first call of those (prebuilt where shipped); -1: none */
    char worst_alg[48];
    bool build_row;          /* the seed transpose's row was selected */
    double build_ms;         /* the seed transpose's cold amp_program_build; -1: failed or not selected */
    bool file_row;           /* transpose.hip's row was selected */
    double file_build_ms;    /* transpose.hip's cold amp_program_build_file; -1: failed or not selected */
    double plain_build_ms;   /* the plain seed's build through the vendor alone; -1: not measured */
} fc_summary;

/* Parses one of the section's options (--first-call-rows=LIST,
 * --first-call-timeout=S, --first-call-no-jit, --first-call-rounds=K) into c: 1 when arg was one, 0 when it is not the
 * section's, -1 when its value is bad (printed to stderr). */
int fc_option(const char *arg, fc_config *c);

/* ms as the benches' tables print it: "1.23 ms", "123.4 ms", "—" when
 * negative (not measured). */
void fc_fmt_ms(char *buf, size_t cap, double ms);

/* The usage lines of the section's options (for a bench's --help). */
extern const char fc_usage[];

/* Measures every selected row in children of c->self (posix_spawn, a new
 * process group, AMP_CACHE_DIR a fresh empty directory removed afterwards,
 * killed after c->timeout_s), c->rounds times over all rows in turn, and
 * writes the section (Markdown table of each figure's median over the
 * rounds, the builds round by round when there are several, then one
 * tab-separated "first_call" line per row) to o; progress goes to stderr.
 * Blocks for the whole section (minutes with AMP_PREBUILT=0).
 * Returns the number of failed rows, -1 when the section could not run at
 * all (no temporary directory, a row filter that selects nothing); *s (may
 * be NULL) gets the summary. */
int fc_report(FILE *o, const fc_config *c, fc_summary *s);

/* The child's side: argv[0] the device path, argv[1] the row; vendor as
 * the parent's fc_config had it (NULL in bench_cpu). Prints one "fc\t..."
 * line on stdout; returns the exit status (0 measured and checked, 1 failed
 * or wrong, 3 accelerator unavailable, 2 bad usage). */
int fc_child_main(int argc, char **argv, const fc_vendor *vendor);

#endif
