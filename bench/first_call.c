/* first_call.c — the "time to first result" section (first_call.h), shared by bench_cpu and bench_gpu: the parent spawns one child per row, configuration and round with an empty compile cache, the child opens the accelerator (or, for the plain seed's row, the vendor's device), makes the data, times one call to a result on the host and a warm call, checks both against a host reference and prints one line; the parent prints each figure's median. */
#define _GNU_SOURCE
#include "first_call.h"

#include <hipamp.h>

#include "workloads.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef HIPAMP_TRANSPOSE_HIP
#define HIPAMP_TRANSPOSE_HIP "examples/kernels/transpose.hip"
#endif

extern char **environ;

/* ----------------------------------------------------------------- rows */

typedef enum fc_kind {
    FC_REDUCE, FC_DOT, FC_SCAN, FC_SORT, FC_SORT_BY_KEY, FC_COPY_IF, FC_FILL, FC_SEED, FC_TRANSPOSE, FC_SEED_PLAIN
} fc_kind;

typedef struct fc_row {
    const char *name; /* family/type: what --first-call-rows selects */
    fc_kind kind;
    amp_type t;
    const char *label; /* the table's row */
} fc_row;

#define FC_TYPES(family, kind, what)                                                       \
    {family "/int32", kind, AMP_TYPE_INT32, what " int32"},                                \
    {family "/uint32", kind, AMP_TYPE_UINT32, what " uint32"},                             \
    {family "/int64", kind, AMP_TYPE_INT64, what " int64"},                                \
    {family "/uint64", kind, AMP_TYPE_UINT64, what " uint64"},                             \
    {family "/float32", kind, AMP_TYPE_FLOAT32, what " float32"},                          \
    {family "/float64", kind, AMP_TYPE_FLOAT64, what " float64"}

static const fc_row fc_rows[] = {
    FC_TYPES("reduce", FC_REDUCE, "amp_reduce sum"),
    {"dot/float32", FC_DOT, AMP_TYPE_FLOAT32, "dot (amp_transform_reduce, AMP_MAP_PRODUCT) float32"},
    {"dot/float64", FC_DOT, AMP_TYPE_FLOAT64, "dot (amp_transform_reduce, AMP_MAP_PRODUCT) float64"},
    FC_TYPES("scan", FC_SCAN, "amp_scan inclusive sum"),
    FC_TYPES("sort", FC_SORT, "amp_sort"),
    {"sort_by_key/uint32", FC_SORT_BY_KEY, AMP_TYPE_UINT32, "amp_sort_by_key uint32 keys, uint32 values"},
    FC_TYPES("copy_if", FC_COPY_IF, "amp_copy_if (predicate \"x > arg\": always JIT)"),
    {"fill/float32", FC_FILL, AMP_TYPE_FLOAT32, "amp_fill float32"},
    {"transpose/seed", FC_SEED, AMP_TYPE_FLOAT32,
     "seed's tiled transpose (one kernel): amp_program_build + launch, 1024x1024 (user kernel)"},
    {"transpose/build+launch", FC_TRANSPOSE, AMP_TYPE_FLOAT32,
     "transpose.hip: amp_program_build_file + transpose_tuned launch, 1024x1024 (user kernel)"},
    /* A GPU bench's only (fc_config.vendor): its label is the vendor's. */
    {"transpose/seed-plain", FC_SEED_PLAIN, AMP_TYPE_FLOAT32, NULL},
};
enum { FC_NROWS = sizeof fc_rows / sizeof fc_rows[0], FC_LOG2N = 20 };

static bool alg_goal_applies(const fc_row *r)
{
    return r->kind != FC_COPY_IF && r->kind != FC_SEED && r->kind != FC_TRANSPOSE && r->kind != FC_SEED_PLAIN;
}

const char fc_plain_seed_kernel[] = "transpose_seed_plain";
/* The seed's indexing, spelled out: its tile_static t1[local[1]][local[0]]
 * is t1[x][y], and its destination (tile_origin[1], tile_origin[0]) +
 * local is row blockIdx.x * 16 + y, column blockIdx.y * 16 + x. */
const char fc_plain_seed_source[] =
    "extern \"C\" __global__ void __launch_bounds__(256)\n"
    "transpose_seed_plain(const float *A, float *At, int n)\n"
    "{\n"
    "    __shared__ float t1[16][16];\n"
    "    const int x = threadIdx.x, y = threadIdx.y;\n"
    "    t1[x][y] = A[(long long)(blockIdx.y * 16 + y) * n + blockIdx.x * 16 + x];\n"
    "    __syncthreads();\n"
    "    At[(long long)(blockIdx.x * 16 + y) * n + blockIdx.y * 16 + x] = t1[y][x];\n"
    "}\n";

/* term selects a row by its whole name or by its family (the part before
 * '/'): "sort" is amp_sort's six rows, not sort_by_key's. */
static bool term_selects(const char *term, size_t len, const char *name)
{
    size_t fam = strcspn(name, "/");
    return (len == strlen(name) && !strncmp(term, name, len)) || (len == fam && !strncmp(term, name, fam));
}

static bool row_selected(const char *list, const char *name)
{
    if (!list || !*list) return true;
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ",");
        if (len && term_selects(p, len, name)) return true;
        p += len;
        if (*p == ',') ++p;
    }
    return false;
}

/* Row i runs under c: selected, and the plain seed's only with a vendor. */
static bool row_on(const fc_config *c, int i)
{
    return row_selected(c->rows, fc_rows[i].name) && (fc_rows[i].kind != FC_SEED_PLAIN || c->vendor);
}

/* Whether row r also runs with AMP_PREBUILT=0: the plain seed's has no
 * hipamp program to prebuild. */
static bool has_jit(const fc_config *c, const fc_row *r)
{
    return !c->no_jit && r->kind != FC_SEED_PLAIN;
}

/* -------------------------------------------------------------- options */

const char fc_usage[] =
    "  --first-call-rows=LIST: only these rows of --first-call-only, comma-separated row names\n"
    "  (reduce/int32, dot/float64, sort_by_key/uint32, transpose/seed, transpose/build+launch,\n"
    "  and on a GPU transpose/seed-plain: the seed's kernel without hipamp, through the vendor's compiler)\n"
    "  or families (reduce, dot, scan, sort, sort_by_key, copy_if, fill, transpose).\n"
    "  --first-call-timeout=S: each child's limit in seconds (default 300).\n"
    "  --first-call-rounds=K: measure every selected row K times (1..99), rows in turn; the table gives\n"
    "  each figure's median and the builds round by round.\n"
    "  --first-call-no-jit: leave out the AMP_PREBUILT=0 column (its children compile: most of the time).\n";

int fc_option(const char *arg, fc_config *c)
{
    static const char rows[] = "--first-call-rows=", timeout[] = "--first-call-timeout=",
                      rounds[] = "--first-call-rounds=";
    if (!strncmp(arg, rows, sizeof rows - 1)) {
        c->rows = arg + sizeof rows - 1;
        for (int i = 0; i < FC_NROWS; ++i)
            if (row_on(c, i)) return 1;
        fprintf(stderr, "%s: selects no row (rows: reduce, dot, scan, sort, sort_by_key, copy_if, fill, transpose, "
                        "or one of them /type)\n", arg);
        return -1;
    }
    if (!strcmp(arg, "--first-call-no-jit")) {
        c->no_jit = true;
        return 1;
    }
    if (!strncmp(arg, rounds, sizeof rounds - 1)) {
        char *end = NULL;
        long v = strtol(arg + sizeof rounds - 1, &end, 10);
        if (end == arg + sizeof rounds - 1 || *end || v < 1 || v > 99) {
            fprintf(stderr, "%s: need a count from 1 to 99\n", arg);
            return -1;
        }
        c->rounds = (int)v;
        return 1;
    }
    if (!strncmp(arg, timeout, sizeof timeout - 1)) {
        char *end = NULL;
        double v = strtod(arg + sizeof timeout - 1, &end);
        if (end == arg + sizeof timeout - 1 || *end || !(v >= 1 && v <= 86400)) {
            fprintf(stderr, "%s: need seconds from 1 to 86400\n", arg);
            return -1;
        }
        c->timeout_s = v;
        return 1;
    }
    return 0;
}

/* ------------------------------------------------------------ the child */

typedef struct fc_job {
    const fc_row *row;
    amp_accelerator *acc;
    amp_accelerator_view *q;
    size_t n, es;
    void *in, *in2, *keep, *out; /* in2: dot's y, sort_by_key's values */
    amp_array_view *vin, *vin2, *vout;
    unsigned char result[8];     /* reduce, dot */
    uint64_t count;              /* copy_if */
    double want;                 /* reduce, dot: the exact answer; copy_if: the count */
    amp_program *prog;           /* transpose: built by the first call */
    amp_kernel *k;
    const fc_vendor *vendor;     /* the plain seed's: its device, compiler and launch */
    void *plain_kernel;          /* the plain seed's, built by the first call */
    double build_ms;
    char why[512];
} fc_job;

static double get(const void *p, size_t i, amp_type t)
{
    switch (t) {
    case AMP_TYPE_INT32: return ((const int32_t *)p)[i];
    case AMP_TYPE_UINT32: return ((const uint32_t *)p)[i];
    case AMP_TYPE_INT64: return (double)((const int64_t *)p)[i];
    case AMP_TYPE_UINT64: return (double)((const uint64_t *)p)[i];
    case AMP_TYPE_FLOAT32: return ((const float *)p)[i];
    default: return ((const double *)p)[i];
    }
}

static void put(void *p, size_t i, amp_type t, double v)
{
    switch (t) {
    case AMP_TYPE_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
    case AMP_TYPE_UINT32: ((uint32_t *)p)[i] = (uint32_t)v; break;
    case AMP_TYPE_INT64: ((int64_t *)p)[i] = (int64_t)v; break;
    case AMP_TYPE_UINT64: ((uint64_t *)p)[i] = (uint64_t)v; break;
    case AMP_TYPE_FLOAT32: ((float *)p)[i] = (float)v; break;
    default: ((double *)p)[i] = v; break;
    }
}

/* Random keys over the type's whole range (both signs), never 0, no NaN:
 * the sort's order is then the host's < and equal keys are equal bytes. */
static void put_random(void *p, size_t i, amp_type t, uint64_t r)
{
    switch (t) {
    case AMP_TYPE_INT32: ((int32_t *)p)[i] = (int32_t)(uint32_t)(r >> 32); break;
    case AMP_TYPE_UINT32: ((uint32_t *)p)[i] = (uint32_t)(r >> 32); break;
    case AMP_TYPE_INT64: ((int64_t *)p)[i] = (int64_t)r; break;
    case AMP_TYPE_UINT64: ((uint64_t *)p)[i] = r; break;
    case AMP_TYPE_FLOAT32: {
        float v = (float)((double)(r >> 40) / 16777216.0 * 2000.0 - 1000.0);
        ((float *)p)[i] = v == 0.0f ? 0.5f : v;
        break;
    }
    default: {
        double v = (double)(r >> 11) / 9007199254740992.0 * 2e6 - 1e6;
        ((double *)p)[i] = v == 0.0 ? 0.5 : v;
        break;
    }
    }
}

#define FC_CMP(name, T)                                          \
    static int name(const void *a, const void *b)                \
    {                                                            \
        T x = *(const T *)a, y = *(const T *)b;                  \
        return (x > y) - (x < y);                                \
    }
FC_CMP(cmp_i32, int32_t)
FC_CMP(cmp_u32, uint32_t)
FC_CMP(cmp_i64, int64_t)
FC_CMP(cmp_u64, uint64_t)
FC_CMP(cmp_f32, float)
FC_CMP(cmp_f64, double)

static int (*comparator(amp_type t))(const void *, const void *)
{
    switch (t) {
    case AMP_TYPE_INT32: return cmp_i32;
    case AMP_TYPE_UINT32: return cmp_u32;
    case AMP_TYPE_INT64: return cmp_i64;
    case AMP_TYPE_UINT64: return cmp_u64;
    case AMP_TYPE_FLOAT32: return cmp_f32;
    default: return cmp_f64;
    }
}

static uint64_t xorshift(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* A pattern no result holds (outputs are poisoned with it before each
 * call, so a call that writes nothing fails its check). */
static void poison(void *p, size_t bytes)
{
    memset(p, 0xA5, bytes);
}

#define FC_TRY(call)                                                                                 \
    do {                                                                                             \
        amp_status s_ = (call);                                                                      \
        if (s_ != AMP_OK) {                                                                          \
            snprintf(j->why, sizeof j->why, "%s: %s: %s", #call, amp_status_name(s_), amp_last_error()); \
            return false;                                                                            \
        }                                                                                            \
    } while (0)

/* Host data and views (not timed). Inputs: small positive integers, so
 * every sum, dot and prefix is exact in each type (below 2^24 in float32)
 * and none is 0. */
static bool job_setup(fc_job *j)
{
    const fc_row *r = j->row;
    j->n = (size_t)1 << FC_LOG2N;
    j->es = amp_type_size(r->t);
    size_t bytes = j->n * j->es;
    j->in = malloc(bytes);
    j->in2 = malloc(j->n * 4 > bytes ? j->n * 4 : bytes);
    j->keep = malloc(bytes);
    j->out = malloc(bytes);
    if (!j->in || !j->in2 || !j->keep || !j->out) {
        snprintf(j->why, sizeof j->why, "out of host memory");
        return false;
    }
    uint64_t s = 0x9e3779b97f4a7c15ull;
    amp_extent e = amp_extent_1d((int)j->n);
    switch (r->kind) {
    case FC_REDUCE:
    case FC_SCAN:
    case FC_COPY_IF:
        j->want = 0;
        for (size_t i = 0; i < j->n; ++i) {
            put(j->in, i, r->t, (double)(i % 7 + 1));
            if (r->kind == FC_REDUCE) j->want += (double)(i % 7 + 1);
            else if (r->kind == FC_COPY_IF) j->want += i % 7 + 1 > 4;
        }
        FC_TRY(amp_array_view_create(j->in, j->es, e, AMP_READ_ONLY, &j->vin));
        if (r->kind != FC_REDUCE) FC_TRY(amp_array_view_create(j->out, j->es, e, AMP_READ_WRITE, &j->vout));
        break;
    case FC_DOT:
        j->want = 0;
        for (size_t i = 0; i < j->n; ++i) {
            put(j->in, i, r->t, (double)(i % 4 + 1));
            put(j->in2, i, r->t, (double)((i >> 2) % 2 + 1));
            j->want += (double)(i % 4 + 1) * (double)((i >> 2) % 2 + 1);
        }
        FC_TRY(amp_array_view_create(j->in, j->es, e, AMP_READ_ONLY, &j->vin));
        FC_TRY(amp_array_view_create(j->in2, j->es, e, AMP_READ_ONLY, &j->vin2));
        break;
    case FC_SORT:
    case FC_SORT_BY_KEY:
        for (size_t i = 0; i < j->n; ++i) {
            uint64_t x = xorshift(&s);
            /* sort_by_key: 20-bit keys, so that equal keys show the
             * stability the check asks for. */
            if (r->kind == FC_SORT_BY_KEY) ((uint32_t *)j->keep)[i] = (uint32_t)(x >> 44);
            else put_random(j->keep, i, r->t, x);
        }
        FC_TRY(amp_array_view_create(j->in, j->es, e, AMP_READ_WRITE, &j->vin));
        if (r->kind == FC_SORT_BY_KEY) FC_TRY(amp_array_view_create(j->in2, 4, e, AMP_READ_WRITE, &j->vin2));
        break;
    case FC_FILL:
        FC_TRY(amp_array_view_create(j->out, j->es, e, AMP_READ_WRITE, &j->vout));
        break;
    case FC_SEED:
    case FC_TRANSPOSE:
    case FC_SEED_PLAIN: /* no views: the vendor's calls copy the host arrays */
        wl_fill_random(j->in, j->n, &s);
        if (r->kind == FC_SEED_PLAIN) break;
        FC_TRY(amp_array_view_create(j->in, 4, amp_extent_2d(1024, 1024), AMP_READ_ONLY, &j->vin));
        FC_TRY(amp_array_view_create(j->out, 4, amp_extent_2d(1024, 1024), AMP_READ_WRITE, &j->vout));
        break;
    }
    return true;
}

/* Before each timed call (not timed): inputs sorted in place restored,
 * outputs poisoned, and every view refreshed, so that both calls copy the
 * same data in and their results out. */
static bool job_reset(fc_job *j)
{
    const fc_row *r = j->row;
    poison(j->out, j->n * j->es);
    memset(j->result, 0, sizeof j->result);
    j->count = 0;
    if (r->kind == FC_SORT || r->kind == FC_SORT_BY_KEY) memcpy(j->in, j->keep, j->n * j->es);
    if (r->kind == FC_SORT_BY_KEY)
        for (size_t i = 0; i < j->n; ++i) ((uint32_t *)j->in2)[i] = (uint32_t)i;
    amp_array_view *v[3] = {j->vin, j->vin2, j->vout};
    for (int i = 0; i < 3; ++i)
        if (v[i]) FC_TRY(amp_array_view_refresh(v[i]));
    return true;
}

/* The timed part: one call and its result on the host. The transpose's
 * first call builds the program first (j->build_ms). */
static bool job_call(fc_job *j)
{
    const fc_row *r = j->row;
    switch (r->kind) {
    case FC_REDUCE: FC_TRY(amp_reduce(j->q, amp_arg_view(j->vin), r->t, AMP_OP_SUM, j->result)); break;
    case FC_DOT:
        FC_TRY(amp_transform_reduce(j->q, amp_arg_view(j->vin), amp_arg_view(j->vin2), r->t, AMP_MAP_PRODUCT,
                                    AMP_OP_SUM, j->result));
        break;
    case FC_SCAN:
        FC_TRY(amp_scan(j->q, amp_arg_view(j->vin), amp_arg_view(j->vout), r->t, AMP_OP_SUM, AMP_SCAN_INCLUSIVE));
        FC_TRY(amp_array_view_synchronize(j->vout));
        break;
    case FC_SORT:
        FC_TRY(amp_sort(j->q, amp_arg_view(j->vin), r->t, AMP_ASCENDING));
        FC_TRY(amp_array_view_synchronize(j->vin));
        break;
    case FC_SORT_BY_KEY:
        FC_TRY(amp_sort_by_key(j->q, amp_arg_view(j->vin), amp_arg_view(j->vin2), r->t, AMP_ASCENDING));
        FC_TRY(amp_array_view_synchronize(j->vin));
        FC_TRY(amp_array_view_synchronize(j->vin2));
        break;
    case FC_COPY_IF: {
        unsigned char arg[8];
        put(arg, 0, r->t, 4.0);
        FC_TRY(amp_copy_if(j->q, amp_arg_view(j->vin), amp_arg_view(j->vout), r->t, "x > arg", arg, &j->count));
        FC_TRY(amp_array_view_synchronize(j->vout));
        break;
    }
    case FC_FILL: {
        const float v = 3.5f;
        FC_TRY(amp_fill(j->q, amp_arg_view(j->vout), &v));
        FC_TRY(amp_array_view_synchronize(j->vout));
        break;
    }
    case FC_SEED:
    case FC_TRANSPOSE: {
        /* The seed's one kernel from its text, or transpose.hip's six from
         * the file; the launch over 1024 x 1024 either way. */
        const bool seed = r->kind == FC_SEED;
        if (!j->prog) {
            double t0 = wl_now();
            FC_TRY(seed ? amp_program_build(j->acc, wl_seed_transpose_source, NULL, &j->prog)
                        : amp_program_build_file(j->acc, HIPAMP_TRANSPOSE_HIP, NULL, &j->prog));
            j->build_ms = (wl_now() - t0) * 1e3;
            FC_TRY(amp_program_get_kernel(j->prog, seed ? "transpose_tiled_even" : "transpose_tuned", &j->k));
        }
        amp_tiled_extent d;
        if (seed) {
            memset(&d, 0, sizeof d);
            d.extent = amp_extent_2d(1024, 1024);
            d.tile[0] = d.tile[1] = 16;
        } else {
            d = wl_tuned_transpose_domain(1024, 1024);
        }
        amp_arg args[2] = {amp_arg_view(j->vin), amp_arg_view(j->vout)};
        FC_TRY(amp_parallel_for_each_tiled(j->q, d, j->k, args, 2));
        FC_TRY(amp_array_view_synchronize(j->vout));
        break;
    }
    case FC_SEED_PLAIN: /* the vendor's calls end the process on failure */
        if (!j->plain_kernel) {
            double t0 = wl_now();
            j->plain_kernel = j->vendor->build(fc_plain_seed_source);
            j->build_ms = (wl_now() - t0) * 1e3;
        }
        j->vendor->transpose(j->plain_kernel, j->in, j->out, 1024);
        break;
    }
    return true;
}

static bool job_check(fc_job *j)
{
    const fc_row *r = j->row;
    const amp_type t = r->t;
    switch (r->kind) {
    case FC_REDUCE:
    case FC_DOT: {
        double got = get(j->result, 0, t);
        if (got != j->want) {
            snprintf(j->why, sizeof j->why, "sum %.17g, want %.17g", got, j->want);
            return false;
        }
        return true;
    }
    case FC_SCAN: {
        double run = 0;
        for (size_t i = 0; i < j->n; ++i) {
            run += get(j->in, i, t);
            if (get(j->out, i, t) != run) {
                snprintf(j->why, sizeof j->why, "out[%zu] = %.17g, want %.17g", i, get(j->out, i, t), run);
                return false;
            }
        }
        return true;
    }
    case FC_SORT:
    case FC_SORT_BY_KEY: {
        void *ref = malloc(j->n * j->es);
        if (!ref) {
            snprintf(j->why, sizeof j->why, "out of host memory");
            return false;
        }
        memcpy(ref, j->keep, j->n * j->es);
        qsort(ref, j->n, j->es, comparator(t));
        bool same = !memcmp(ref, j->in, j->n * j->es);
        free(ref);
        if (!same) {
            snprintf(j->why, sizeof j->why, "keys not sorted like qsort's");
            return false;
        }
        if (r->kind == FC_SORT) return true;
        const uint32_t *k = j->in, *v = j->in2, *keep = j->keep;
        for (size_t i = 0; i < j->n; ++i)
            if (v[i] >= j->n || keep[v[i]] != k[i] || (i && k[i] == k[i - 1] && v[i] <= v[i - 1])) {
                snprintf(j->why, sizeof j->why, "value %zu (%u) does not belong to key %u stably", i, v[i], k[i]);
                return false;
            }
        return true;
    }
    case FC_COPY_IF: {
        if ((double)j->count != j->want) {
            snprintf(j->why, sizeof j->why, "count %llu, want %.0f", (unsigned long long)j->count, j->want);
            return false;
        }
        size_t k = 0;
        for (size_t i = 0; i < j->n; ++i)
            if (i % 7 + 1 > 4 && get(j->out, k++, t) != (double)(i % 7 + 1)) {
                snprintf(j->why, sizeof j->why, "out[%zu] = %.17g, want %zu", k - 1, get(j->out, k - 1, t), i % 7 + 1);
                return false;
            }
        return true;
    }
    case FC_FILL:
        for (size_t i = 0; i < j->n; ++i)
            if (((const float *)j->out)[i] != 3.5f) {
                snprintf(j->why, sizeof j->why, "out[%zu] = %g, want 3.5", i, ((const float *)j->out)[i]);
                return false;
            }
        return true;
    case FC_SEED:
    case FC_TRANSPOSE:
    case FC_SEED_PLAIN: {
        size_t first = 0, wrong = wl_check_transpose(j->in, j->out, 1024, 1024, &first);
        if (wrong) {
            snprintf(j->why, sizeof j->why, "%zu elements wrong, the first %zu", wrong, first);
            return false;
        }
        return true;
    }
    }
    return false;
}

static void job_free(fc_job *j)
{
    amp_array_view *v[3] = {j->vin, j->vin2, j->vout};
    for (int i = 0; i < 3; ++i)
        if (v[i]) amp_array_view_destroy(v[i]);
    if (j->prog) amp_program_destroy(j->prog);
    free(j->in);
    free(j->in2);
    free(j->keep);
    free(j->out);
}

/* Tabs and newlines in a message would break the one-line protocol. */
static void one_line(char *s)
{
    for (; *s; ++s)
        if (*s == '\t' || *s == '\n' || *s == '\r') *s = ' ';
}

int fc_child_main(int argc, char **argv, const fc_vendor *vendor)
{
    if (argc < 2) {
        printf("fc\terror\tusage: %s DEVICE ROW\n", FC_CHILD_OPTION);
        return 2;
    }
    const fc_row *row = NULL;
    for (int i = 0; i < FC_NROWS; ++i)
        if (!strcmp(fc_rows[i].name, argv[1])) row = &fc_rows[i];
    if (!row || (row->kind == FC_SEED_PLAIN && !vendor)) {
        printf("fc\terror\tno row %s%s\n", argv[1], row ? " in this program (a GPU bench's)" : "");
        return 2;
    }
    fc_job job = {.row = row, .build_ms = -1, .vendor = vendor}, *j = &job;
    int rc = 1;
    double t0 = wl_now(), ms[2] = {-1, -1};
    amp_status st = AMP_OK;
    if (row->kind == FC_SEED_PLAIN) {
        vendor->open(); /* the vendor's device alone: no hipamp */
    } else {
        amp_accelerator *acc = NULL;
        amp_accelerator_info info;
        st = amp_accelerator_find(argv[0], &acc);
        if (st == AMP_OK) st = amp_accelerator_get_info(acc, &info);
        if (st != AMP_OK || !info.is_available) {
            snprintf(j->why, sizeof j->why, "%s: %s", argv[0],
                     st != AMP_OK ? amp_last_error() : info.unavailable_reason);
            one_line(j->why);
            printf("fc\tunavailable\t%s\n", j->why);
            return 3;
        }
        j->acc = acc;
        st = amp_accelerator_default_view(acc, &j->q);
    }
    double start_ms = (wl_now() - t0) * 1e3;
    if (st != AMP_OK) {
        snprintf(j->why, sizeof j->why, "amp_accelerator_default_view: %s: %s", amp_status_name(st), amp_last_error());
        goto done;
    }
    if (!job_setup(j)) goto done;
    for (int k = 0; k < 2; ++k) {
        if (!job_reset(j)) goto done;
        double c0 = wl_now();
        bool called = job_call(j);
        ms[k] = (wl_now() - c0) * 1e3;
        if (!called || !job_check(j)) {
            char what[sizeof j->why];
            snprintf(what, sizeof what, "%s call %s: %.400s", k ? "warm" : "first", called ? "WRONG" : "failed",
                     j->why);
            snprintf(j->why, sizeof j->why, "%s", what);
            goto done;
        }
    }
    rc = 0;
done:
    one_line(j->why);
    if (rc == 0)
        printf("fc\tok\t%.3f\t%.3f\t%.3f\t%.3f\n", start_ms, ms[0], ms[1], j->build_ms);
    else
        printf("fc\terror\t%s\n", j->why);
    fflush(stdout);
    job_free(j);
    return rc;
}

/* ----------------------------------------------------------- the parent */

typedef struct fc_meas {
    bool ok, unavailable;
    double start_ms, first_ms, warm_ms, build_ms;
    char why[384];
} fc_meas;

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path) == 0 ? 0 : -1;
}

static void rm_tree(const char *dir)
{
    if (nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS) != 0)
        fprintf(stderr, "first call: could not remove %s: %s\n", dir, strerror(errno));
}

/* Our environment without the knobs the section sets, then those: the
 * library's cache and the vendors' own JIT caches in the empty directory,
 * AMP_PREBUILT=0 for the JIT column (unset otherwise). NULL: out of memory.
 * env[*owned..*owned + 2] are the caller's to free (free_env). */
static char **child_env(const char *cache, bool jit, size_t *owned)
{
    static const char *const drop[] = {"AMP_PREBUILT=", "AMP_CACHE_DIR=", "CUDA_CACHE_PATH=", "AMD_COMGR_CACHE_DIR="};
    size_t n = 0;
    while (environ[n]) ++n;
    char **env = calloc(n + 5, sizeof *env);
    if (!env) return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; ++i) {
        bool keep = true;
        for (size_t d = 0; d < sizeof drop / sizeof drop[0]; ++d)
            if (!strncmp(environ[i], drop[d], strlen(drop[d]))) keep = false;
        if (keep) env[k++] = environ[i];
    }
    if (asprintf(&env[k], "AMP_CACHE_DIR=%s", cache) < 0) env[k] = NULL;
    if (asprintf(&env[k + 1], "CUDA_CACHE_PATH=%s/cuda", cache) < 0) env[k + 1] = NULL;
    if (asprintf(&env[k + 2], "AMD_COMGR_CACHE_DIR=%s/comgr", cache) < 0) env[k + 2] = NULL;
    if (!env[k] || !env[k + 1] || !env[k + 2]) {
        for (int i = 0; i < 3; ++i) free(env[k + i]);
        free(env);
        return NULL;
    }
    env[k + 3] = jit ? "AMP_PREBUILT=0" : NULL;
    *owned = k;
    return env;
}

static void free_env(char **env, size_t owned)
{
    for (int i = 0; i < 3; ++i) free(env[owned + i]);
    free(env);
}

/* The last line of text (the child's last words when it printed no
 * result line), into dst. */
static void last_line(const char *text, char *dst, size_t cap)
{
    size_t n = strlen(text);
    while (n && (text[n - 1] == '\n' || text[n - 1] == '\r')) --n;
    size_t b = n;
    while (b && text[b - 1] != '\n') --b;
    snprintf(dst, cap, "%.*s", (int)(n - b), text + b);
}

/* One child: the row in a fresh process whose compile caches are cache,
 * killed (its whole process group: the compilers it started too) after
 * timeout_s. */
static void run_child(const fc_config *c, const fc_row *r, const char *cache, bool jit, fc_meas *m)
{
    memset(m, 0, sizeof *m);
    m->start_ms = m->first_ms = m->warm_ms = m->build_ms = -1;
    size_t owned = 0;
    char **env = child_env(cache, jit, &owned);
    if (!env) {
        snprintf(m->why, sizeof m->why, "out of memory");
        return;
    }
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        snprintf(m->why, sizeof m->why, "pipe: %s", strerror(errno));
        free_env(env, owned);
        return;
    }
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
    posix_spawnattr_init(&at);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&at, 0);
    char *argv[] = {(char *)c->self, FC_CHILD_OPTION, (char *)c->accelerator, (char *)r->name, NULL};
    pid_t pid;
    int e = posix_spawn(&pid, c->self, &fa, &at, argv, env);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    close(fds[1]);
    free_env(env, owned);
    if (e != 0) {
        close(fds[0]);
        snprintf(m->why, sizeof m->why, "posix_spawn %s: %s", c->self, strerror(e));
        return;
    }
    /* Read until the child has exited and its output is drained, or the
     * deadline. A compiler the child left running may hold the pipe open:
     * the child's exit, not the pipe's end, ends the wait. */
    enum { CAP = 16384 };
    char text[CAP + 1];
    size_t len = 0;
    const double deadline = wl_now() + c->timeout_s;
    bool exited = false, timed_out = false, eof = false;
    for (;;) {
        if (!exited) {
            siginfo_t si;
            memset(&si, 0, sizeof si);
            exited = waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid;
        }
        if (exited && eof) break;
        double left = deadline - wl_now();
        if (left <= 0) {
            timed_out = !exited;
            break;
        }
        if (eof) { /* the child closed its output but runs on */
            nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
            continue;
        }
        struct pollfd p = {fds[0], POLLIN, 0};
        int pr = poll(&p, 1, exited ? 0 : (int)(left < 0.1 ? left * 1e3 + 1 : 100));
        if (pr > 0) {
            if (len == CAP) { /* keep the tail: the result line comes last */
                memmove(text, text + CAP / 2, CAP / 2);
                len = CAP / 2;
            }
            ssize_t got = read(fds[0], text + len, CAP - len);
            if (got > 0) len += (size_t)got;
            else if (got == 0 || errno != EINTR) eof = true;
        } else if (pr == 0 && exited) {
            break; /* drained; whatever still holds the pipe is not the child */
        } else if (pr < 0 && errno != EINTR) {
            eof = true;
        }
    }
    close(fds[0]);
    text[len] = 0;
    /* The child is a zombie or still running, so its group still exists:
     * what it left running goes with it. */
    kill(-pid, SIGKILL);
    int ws = 0;
    while (waitpid(pid, &ws, 0) < 0 && errno == EINTR) {
    }
    char *line = NULL;
    for (char *p = text; (p = strstr(p, "fc\t")); ++p)
        if (p == text || p[-1] == '\n') line = p;
    if (timed_out) {
        snprintf(m->why, sizeof m->why, "timed out after %.0f s", c->timeout_s);
    } else if (line && sscanf(line, "fc\tok\t%lf\t%lf\t%lf\t%lf", &m->start_ms, &m->first_ms, &m->warm_ms,
                              &m->build_ms) == 4 && WIFEXITED(ws) && WEXITSTATUS(ws) == 0) {
        m->ok = true;
    } else if (line && (!strncmp(line, "fc\terror\t", 9) || !strncmp(line, "fc\tunavailable\t", 15))) {
        m->unavailable = line[3] == 'u';
        const char *msg = strchr(line + 3, '\t') + 1;
        snprintf(m->why, sizeof m->why, "%.*s", (int)strcspn(msg, "\n"), msg);
    } else {
        char last[256];
        last_line(text, last, sizeof last);
        if (WIFSIGNALED(ws))
            snprintf(m->why, sizeof m->why, "killed by signal %d%s%s", WTERMSIG(ws), *last ? ": " : "", last);
        else
            snprintf(m->why, sizeof m->why, "exit status %d%s%s", WEXITSTATUS(ws), *last ? ": " : "", last);
    }
}

void fc_fmt_ms(char *buf, size_t cap, double ms)
{
    if (ms < 0) snprintf(buf, cap, "—");
    else if (ms < 10) snprintf(buf, cap, "%.2f ms", ms);
    else snprintf(buf, cap, "%.1f ms", ms);
}

static void fmt_ratio(char *buf, size_t cap, double a, double b)
{
    if (a < 0 || b <= 0) snprintf(buf, cap, "—");
    else if (a / b < 100) snprintf(buf, cap, "%.1fx", a / b);
    else snprintf(buf, cap, "%.0fx", a / b);
}

/* The row of kind k, or -1. */
static int row_of(fc_kind k)
{
    for (int i = 0; i < FC_NROWS; ++i)
        if (fc_rows[i].kind == k) return i;
    return -1;
}

/* After the table: the user kernels' builds (AMP_PREBUILT unset) round by
 * round when there were several, and the seed's build set against the
 * plain seed's, the vendor's floor, where both were measured. */
static void builds_report(FILE *o, const fc_config *c, int rounds, fc_meas (*mr)[FC_NROWS][2],
                          const fc_summary *sum)
{
    const int seed = row_of(FC_SEED), plain = row_of(FC_SEED_PLAIN), file = row_of(FC_TRANSPOSE);
    const bool on_seed = row_on(c, seed), on_plain = row_on(c, plain), on_file = row_on(c, file);
    if (rounds > 1 && (on_seed || on_plain || on_file)) {
        fprintf(o, "\nBuilds round by round (each a fresh process, the rows in turn):\n\n| round |%s%s%s%s\n|---|",
                on_seed ? " seed through hipamp |" : "", on_plain ? " plain seed, vendor alone |" : "",
                on_seed && on_plain ? " hipamp / plain |" : "", on_file ? " transpose.hip through hipamp |" : "");
        for (int n = (on_seed + on_plain + (on_seed && on_plain) + on_file); n > 0; --n) fprintf(o, "---:|");
        fprintf(o, "\n");
        for (int k = 0; k < rounds; ++k) {
            const fc_meas *a = &mr[k][seed][0], *b = &mr[k][plain][0], *f = &mr[k][file][0];
            char x[32], y[32], z[32], w[32];
            fc_fmt_ms(x, sizeof x, a->ok ? a->build_ms : -1);
            fc_fmt_ms(y, sizeof y, b->ok ? b->build_ms : -1);
            fc_fmt_ms(w, sizeof w, f->ok ? f->build_ms : -1);
            if (a->ok && b->ok && b->build_ms > 0) snprintf(z, sizeof z, "%.2f", a->build_ms / b->build_ms);
            else snprintf(z, sizeof z, "—");
            fprintf(o, "| %d |", k + 1);
            if (on_seed) fprintf(o, " %s |", x);
            if (on_plain) fprintf(o, " %s |", y);
            if (on_seed && on_plain) fprintf(o, " %s |", z);
            if (on_file) fprintf(o, " %s |", w);
            fprintf(o, "\n");
        }
    }
    if (sum->build_ms < 0 || sum->plain_build_ms <= 0) return;
    const double gap = sum->build_ms - sum->plain_build_ms, goal = c->build_goal_ms;
    fprintf(o, "\nThe seed's kernel built through hipamp in %.1f ms; the same kernel without hipamp, built by the "
               "vendor's compiler alone, in %.1f ms (hipamp / plain %.2f): hipamp's prelude, kernel signature and "
               "program path add %.1f ms. The goal, %.0f ms, is %.1f ms %s the plain kernel's own build%s\n",
            sum->build_ms, sum->plain_build_ms, sum->build_ms / sum->plain_build_ms, gap, goal,
            goal >= sum->plain_build_ms ? goal - sum->plain_build_ms : sum->plain_build_ms - goal,
            goal >= sum->plain_build_ms ? "above" : "below",
            goal >= sum->plain_build_ms ? "." : ": in this run no prelude could have met it.");
}

int fc_report(FILE *o, const fc_config *c, fc_summary *s)
{
    fc_summary sum = {.worst_alg_ms = -1, .build_ms = -1, .file_build_ms = -1, .plain_build_ms = -1};
    const double timeout_s = c->timeout_s > 0 ? c->timeout_s : FC_DEFAULT_TIMEOUT_S;
    fc_config cc = *c;
    cc.timeout_s = timeout_s;
    /* The exact file this process runs, even if a rebuild replaced it since. */
    if (!cc.self) cc.self = "/proc/self/exe";
    int selected = 0;
    for (int i = 0; i < FC_NROWS; ++i) selected += row_on(c, i);
    if (!selected) {
        fprintf(stderr, "first call: --first-call-rows=%s selects no row\n", c->rows);
        return -1;
    }
    char base[] = "/tmp/hipamp-first-call-XXXXXX";
    if (!mkdtemp(base)) {
        fprintf(stderr, "first call: mkdtemp: %s\n", strerror(errno));
        return -1;
    }
    const int rounds = c->rounds < 1 ? 1 : c->rounds > 99 ? 99 : c->rounds; /* fc_option's bounds */
    fc_meas (*m)[2] = calloc(FC_NROWS, sizeof *m);
    fc_meas (*mr)[FC_NROWS][2] = calloc((size_t)rounds, sizeof *mr); /* each round's */
    if (!m || !mr) {
        free(m);
        free(mr);
        rm_tree(base);
        return -1;
    }
    bool skipped = false;
    char skip_why[384] = "";
    for (int k = 0; k < rounds && !skipped; ++k)
        for (int i = 0; i < FC_NROWS && !skipped; ++i) {
            if (!row_on(c, i)) continue;
            for (int jit = 0; jit < (has_jit(c, &fc_rows[i]) ? 2 : 1) && !skipped; ++jit) {
                fc_meas *x = &mr[k][i][jit];
                char cache[sizeof base + 32];
                snprintf(cache, sizeof cache, "%s/%d-%d%s", base, k, i, jit ? "-jit" : "");
                if (mkdir(cache, 0700) != 0) {
                    snprintf(x->why, sizeof x->why, "mkdir %s: %s", cache, strerror(errno));
                    continue;
                }
                fprintf(stderr, "first call: %s%s on %s", fc_rows[i].name, jit ? ", AMP_PREBUILT=0" : "",
                        c->accelerator);
                if (rounds > 1) fprintf(stderr, ", round %d of %d", k + 1, rounds);
                fprintf(stderr, "...");
                run_child(&cc, &fc_rows[i], cache, jit, x);
                if (x->ok) fprintf(stderr, " %.1f ms (warm %.2f ms)\n", x->first_ms, x->warm_ms);
                else fprintf(stderr, " %s\n", x->why);
                rm_tree(cache);
                if (x->unavailable) {
                    skipped = true;
                    snprintf(skip_why, sizeof skip_why, "%s", x->why);
                }
            }
        }
    /* A row passes when every round did; its figures are the rounds'
     * medians, and a failure is the first round's that failed. */
    for (int i = 0; i < FC_NROWS && !skipped; ++i)
        for (int jit = 0; jit < 2; ++jit) {
            double f[4][99];
            int n = 0;
            for (int k = 0; k < rounds; ++k) {
                const fc_meas *x = &mr[k][i][jit];
                if (!x->ok) {
                    if (!m[i][jit].why[0]) snprintf(m[i][jit].why, sizeof m[i][jit].why, "%s", x->why);
                    continue;
                }
                f[0][n] = x->start_ms, f[1][n] = x->first_ms, f[2][n] = x->warm_ms, f[3][n] = x->build_ms;
                ++n;
            }
            if (n != rounds) continue;
            m[i][jit].ok = true;
            m[i][jit].start_ms = wl_median(f[0], n);
            m[i][jit].first_ms = wl_median(f[1], n);
            m[i][jit].warm_ms = wl_median(f[2], n);
            m[i][jit].build_ms = wl_median(f[3], n);
        }
    rm_tree(base);

    fprintf(o, "\n## Time to first result (%s)\n\n", c->accelerator);
    if (skipped) {
        fprintf(o, "Skipped: the accelerator %s is not available here (%s).\n", c->accelerator, skip_why);
        free(m);
        free(mr);
        sum.skipped = true;
        if (s) *s = sum;
        return 0;
    }
    fprintf(o, "Each figure comes from a fresh process (this program re-executed) whose compile caches are a new "
               "empty directory (AMP_CACHE_DIR; CUDA_CACHE_PATH and AMD_COMGR_CACHE_DIR too), so the library's "
               "program tables and disk cache start empty. The process opens %s (\"accelerator start\": "
               "amp_accelerator_find and its default view), makes 2^%d elements of data, then times one call "
               "to its result on the host (a blocking call's return; for views, amp_array_view_synchronize "
               "after the call) and then the same call again (\"warm\"). Both calls copy the same data in and the "
               "results out (every view is refreshed before each, outputs poisoned), and both results are "
               "checked against a host reference with a nonzero answer. \"first call\": AMP_PREBUILT unset "
               "(the prebuilt algorithm programs, where shipped); \"JIT\": the same in another fresh process "
               "with AMP_PREBUILT=0 (the first call compiles). Warm: from the first column's process. Goal "
               "(issue 40): the first call of every built-in algorithm <= %.0f ms; the cold compile of "
               "the seed's transpose kernel (amp_program_build alone) <= %.0f ms on %s, with "
               "examples/kernels/transpose.hip's six kernels (amp_program_build_file) beside it. amp_copy_if takes a predicate "
               "string, compiled at its first use: always JIT, outside the goal. Each process is limited to "
               "%.0f s.",
            c->accelerator, FC_LOG2N, c->alg_goal_ms, c->build_goal_ms,
            c->build_goal_where ? c->build_goal_where : "this accelerator", timeout_s);
    if (c->vendor)
        fprintf(o, " The plain seed's row (transpose/seed-plain) is the floor under the cold-compile goal: the same "
                   "kernel written without hipamp (no prelude, the vendor's own words), built by the vendor's runtime "
                   "compiler alone with the options the library passes it, in the same kind of fresh process after "
                   "the vendor's own device start, and run over the same data with the same check.");
    if (rounds > 1)
        fprintf(o, " Every selected row ran %d times, the rows in turn; each figure is the median of its %d "
                   "processes, and a row passes when all of them did.", rounds, rounds);
    fprintf(o, "\n\n");
    fprintf(o, "| call, 2^%d elements | accelerator start | first call | first call, JIT (AMP_PREBUILT=0) | warm "
               "call | first / warm | JIT / first | goal | check |\n"
               "|---|---:|---:|---:|---:|---:|---:|---|---|\n",
            FC_LOG2N);
    for (int i = 0; i < FC_NROWS; ++i) {
        const fc_row *r = &fc_rows[i];
        if (!row_on(c, i)) continue;
        const fc_meas *p = &m[i][0], *q = &m[i][1];
        const bool jit = has_jit(c, r);
        char st[32], f[32], jf[32], w[32], fw[32], jr[32], goal[128], check[448];
        fc_fmt_ms(st, sizeof st, p->ok ? p->start_ms : -1);
        fc_fmt_ms(f, sizeof f, p->ok ? p->first_ms : -1);
        fc_fmt_ms(jf, sizeof jf, q->ok ? q->first_ms : -1);
        fc_fmt_ms(w, sizeof w, p->ok ? p->warm_ms : -1);
        fmt_ratio(fw, sizeof fw, p->ok ? p->first_ms : -1, p->ok ? p->warm_ms : -1);
        fmt_ratio(jr, sizeof jr, q->ok ? q->first_ms : -1, p->ok ? p->first_ms : -1);
        if (!jit) snprintf(jf, sizeof jf, c->no_jit ? "not run" : "—"), snprintf(jr, sizeof jr, "—");
        sum.rows++;
        bool q_ok = !jit || q->ok;
        bool ok = p->ok && q_ok;
        if (!ok) sum.failed++;
        if (ok) snprintf(check, sizeof check, "passed");
        else snprintf(check, sizeof check, "**FAILED**: %s", !p->ok ? p->why : q->why);
        if (alg_goal_applies(r)) {
            sum.alg_rows++;
            bool met = p->ok && p->first_ms <= c->alg_goal_ms;
            sum.alg_met += met;
            if (p->ok && p->first_ms > sum.worst_alg_ms) {
                sum.worst_alg_ms = p->first_ms;
                snprintf(sum.worst_alg, sizeof sum.worst_alg, "%s", r->name);
            }
            snprintf(goal, sizeof goal, "<= %.0f ms: %s", c->alg_goal_ms, met ? "met" : "**missed**");
        } else if (r->kind == FC_SEED || r->kind == FC_TRANSPOSE) {
            /* The goal names the seed's kernel; transpose.hip's six
             * kernels are set against the same figure. */
            double b_ms = p->ok ? p->build_ms : -1;
            if (r->kind == FC_SEED) sum.build_row = true, sum.build_ms = b_ms;
            else sum.file_row = true, sum.file_build_ms = b_ms;
            char b[32];
            fc_fmt_ms(b, sizeof b, b_ms);
            snprintf(goal, sizeof goal, "build %s <= %.0f ms: %s%s", b, c->build_goal_ms,
                     p->ok && p->build_ms <= c->build_goal_ms ? "met" : "**missed**",
                     r->kind == FC_SEED ? "" : " (six kernels; the goal names one)");
        } else if (r->kind == FC_SEED_PLAIN) {
            sum.plain_build_ms = p->ok ? p->build_ms : -1;
            char b[32];
            fc_fmt_ms(b, sizeof b, sum.plain_build_ms);
            snprintf(goal, sizeof goal, "— (the floor: build %s)", b);
        } else {
            snprintf(goal, sizeof goal, "— (JIT predicate)");
        }
        fprintf(o, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
                r->kind == FC_SEED_PLAIN ? c->vendor->label : r->label, st, f, jf, w, fw, jr, goal, check);
    }
    builds_report(o, c, rounds, mr, &sum);
    if (sum.alg_rows) {
        char worst[32];
        fc_fmt_ms(worst, sizeof worst, sum.worst_alg_ms);
        fprintf(o, "\n%d of %d built-in algorithm rows met the first-call goal (<= %.0f ms); the slowest first call: "
                   "%s, %s.\n",
                sum.alg_met, sum.alg_rows, c->alg_goal_ms, sum.worst_alg_ms >= 0 ? sum.worst_alg : "none", worst);
    }
    /* One line per row for scripts; -1 where nothing was measured. */
    fprintf(o, "\n```\n# first_call\tdevice\trow\tstart_ms\tfirst_ms\tjit_first_ms\twarm_ms\tjit_warm_ms\tbuild_ms\t"
               "jit_build_ms\tcheck\n");
    for (int i = 0; i < FC_NROWS; ++i) {
        if (!row_on(c, i)) continue;
        const fc_meas *p = &m[i][0], *q = &m[i][1];
        const bool jit = has_jit(c, &fc_rows[i]);
        fprintf(o, "first_call\t%s\t%s\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%s\n", c->accelerator,
                fc_rows[i].name, p->ok ? p->start_ms : -1, p->ok ? p->first_ms : -1, q->ok ? q->first_ms : -1,
                p->ok ? p->warm_ms : -1, q->ok ? q->warm_ms : -1, p->ok ? p->build_ms : -1,
                q->ok ? q->build_ms : -1, p->ok && (!jit || q->ok) ? "passed" : "FAILED");
    }
    fprintf(o, "```\n");
    free(m);
    free(mr);
    if (s) *s = sum;
    return sum.failed;
}
