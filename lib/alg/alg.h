/* alg.h — what the algorithms (lib/alg_*.c) share: resolved data arguments
 * and the element layout their kernels index by, the programs built on
 * first use (lib/alg/programs.c), the scratch pool (lib/alg/scratch.c) and
 * launching a sequence of kernels on one queue.
 *
 * Algorithms are written on the core's public calls plus three internal
 * ones: span arguments (AMP__ARG_SPAN, lib/core/launch.c), launches that return
 * their point without a future (amp__launch_tiled), and futures completed
 * at a point (lib/core/future.c). Everything an algorithm queues is an ordinary
 * launch on the caller's queue, so a recording of that queue sees it.
 *
 * Locks: the program table's lock (lib/alg/programs.c) and the scratch
 * pool's lock (lib/alg/scratch.c) are leaves of internal.h's order (nothing
 * is called into under them); a user reduction's lock is held while its
 * scan program builds, so it comes before every lock of the library, and
 * nothing takes it under another. */
#ifndef AMP_ALG_H
#define AMP_ALG_H

#include "hipamp.h"
#include "core/internal.h"

/* ------------------------------------------------ data (lib/alg/data.c) */

/* amp::alg::shape (hip_kernels/amp_algorithms_lib.hip): a view as a
 * sequence of n elements in row-major order; dimensions contiguous with the
 * next are merged, so a whole view (or rows of full width) is rank 1 and
 * contiguous. At most 4 dimensions after merging (every view of rank up
 * to 4; of ranks 5 to 8 those strided in at most 4, the others refused as
 * AMP_ERROR_UNSUPPORTED: a GPU keeps shapes in scalar registers, which 8
 * dimensions overflowed). */
#define AMP__ALG_SHAPE_RANK 4
typedef struct amp__alg_shape {
    int64_t n;
    int64_t stride[AMP__ALG_SHAPE_RANK];
    int32_t ext[AMP__ALG_SHAPE_RANK];
    int32_t rank;
    int32_t contiguous;
} amp__alg_shape;
_Static_assert(sizeof(amp__alg_shape) == 64, "amp__alg_shape must match amp::alg::shape");

/* A data argument (a view or an array), resolved. */
typedef struct amp__alg_data {
    amp_arg arg;            /* the caller's amp_arg_view / amp_arg_array */
    amp__storage *s;
    amp_accelerator *acc;   /* an array's accelerator, else where the view's data is (may be NULL) */
    const amp__box *box;    /* storage coordinates (may hold more than the elements) */
    int64_t offset;         /* bytes from the storage's start to the first element */
    size_t elem;
    bool read_only;
    amp__alg_shape shape;
} amp__alg_data;

/* Resolve argument a (what: "in", "keys", ... for messages of function fn);
 * elem > 0: the element size the call's type needs (tname names the type). */
amp_status amp__alg_resolve(const char *fn, const char *what, amp_arg a, size_t elem, const char *tname,
                         amp__alg_data *out);
/* The kernel argument binding d's span; overwrite: the kernel writes every
 * element, so nothing is copied in. */
amp_arg amp__alg_span(const amp__alg_data *d, bool overwrite);
/* d's shape as a kernel argument (points into d: keep d alive until the
 * launch call returns). */
amp_arg amp__alg_shape_arg(const amp__alg_data *d);
/* d must be writable: AMP_ERROR_INVALID_ARGUMENT naming what otherwise. */
amp_status amp__alg_writable(const char *fn, const char *what, const amp__alg_data *d);
/* Whether a and b may share memory (*same: they are the very same
 * elements of one storage, in the same order). Parts of one storage are
 * compared by their boxes; two storages over one data source (views made
 * apart over one host buffer, arrays over one native allocation, on the
 * host or one accelerator) by their bytes. */
bool amp__alg_overlap(const amp__alg_data *a, const amp__alg_data *b, bool *same);
/* AMP_ERROR_INVALID_ARGUMENT naming fn, wa and wb when a (named wa) and b
 * (wb), one of which the call writes, may share memory (amp__alg_overlap). */
amp_status amp__alg_apart(const char *fn, const char *wa, const amp__alg_data *a, const char *wb,
                          const amp__alg_data *b);
/* q, or by the rule for NULL (hipamp_algorithms.h): the first datum's
 * accelerator that has one, else acc (may be NULL), else the default. */
amp_status amp__alg_queue(amp_accelerator_view *q, const amp__alg_data *d, size_t nd, amp_accelerator *acc,
                          amp_accelerator_view **out);
/* AMP_ERROR_BUSY while q records a launch graph (hipamp_graph.h), for the
 * calls that return their result on the host (fn): nothing runs while
 * recording, so there is nothing to read; has_async: the message names
 * fn's _async form, which leaves the result on the device and is
 * recorded. Every
 * other algorithm is recorded as its launches, its scratch arrays kept by
 * the graph (lib/alg/scratch.c). */
amp_status amp__alg_not_recording(const char *fn, amp_accelerator_view *q, bool has_async);
/* AMP_ERROR_BUSY when a recording in progress (on any view, any thread)
 * uses d's data (what names it): for the calls that return their result on
 * the host, which would read or write it now, before the graph that
 * computes it runs, and return AMP_OK with stale values. Takes and
 * releases d's storage lock. */
amp_status amp__alg_data_not_recorded(const char *fn, const char *what, const amp__alg_data *d);
/* AMP_ERROR_UNSUPPORTED past AMP_ALG_MAX_ELEMENTS. */
amp_status amp__alg_count_ok(const char *fn, int64_t n);
/* t and op are in their enums and op suits t. */
amp_status amp__alg_type_ok(const char *fn, amp_type t);
amp_status amp__alg_op_ok(const char *fn, amp_type t, amp_op op);

/* ------------------------------------------ programs (lib/alg/programs.c) */

enum {
    AMP__ALG_K_REDUCE, AMP__ALG_K_REDUCE_FINAL, AMP__ALG_K_SCAN, AMP__ALG_K_CLEAR, AMP__ALG_K_IOTA,
    AMP__ALG_K_FILL, AMP__ALG_K_SELECT, AMP__ALG_K_SORT_HIST, AMP__ALG_K_SORT_OFFSETS, AMP__ALG_K_SORT_PASS,
    AMP__ALG_NKERNELS
};

/* A built program and the geometry it was built for. */
typedef struct amp__alg_prog {
    amp_program *p;
    amp_kernel *k[AMP__ALG_NKERNELS]; /* NULL where it has no such kernel */
    int tile;                         /* threads per tile */
    int reduce_items, scan_items, sort_items;
    int radix_bits, passes;
    int sort_min_tiles;               /* a sort pass's tiles a compute unit (CUDA); 1: the compiler's choice */
    int64_t reduce_tiles;             /* tiles a reduction spreads over */
    int64_t reduce_grain;             /* elements a reduction's tile has at least (1: no floor) */
    int reduce_vector;                /* a reduction's contiguous inputs read by 16-byte loads (GPU) */
    int scan_guess;                   /* a scan tile reads its index's chunk while it takes its own (GPU) */
    int64_t count_tiles;              /* tiles the sort's count spreads over: 8 a compute unit or CPU thread
                                       * (each adds its counts to the histogram with atomics, so more cost more) */
    amp_type rtype;                   /* the accumulator (AMP_ALG_R) of a reduction or scan */
    size_t rsize;                     /* its bytes: partial results, a scan's tile values */
    size_t osize;                     /* bytes of a reduction's result and a scan's output element (AMP_ALG_O) */
    bool split_out;                   /* osize's type is not rtype: a reduction's result is a parameter of its own */
} amp__alg_prog;

/* A user's reduction as parsed (lib/alg/reduce.c fills it; the strings are
 * the caller's and must outlive the build). */
#define AMP__ALG_MAX_PARAMS 8
typedef struct amp__alg_user {
    const char *label;                        /* its name, for the log */
    int ninputs, nscalars;
    amp_type in_type[AMP__ALG_MAX_PARAMS], sc_type[AMP__ALG_MAX_PARAMS];
    char in_name[AMP__ALG_MAX_PARAMS][64], sc_name[AMP__ALG_MAX_PARAMS][64];
    amp_type type;
    const char *map, *reduce, *identity, *post, *preamble;
} amp__alg_user;

/* Program families (what a program holds). */
enum { AMP__ALG_FAM_BASIC, AMP__ALG_FAM_PREDICATE, AMP__ALG_FAM_SORT, AMP__ALG_FAM_FILL, AMP__ALG_FAM_USER_REDUCE,
       AMP__ALG_FAM_USER_SCAN, AMP__ALG_FAM_SCAN };
/* What one program is built for. */
typedef struct amp__alg_spec {
    int family;
    amp_type type;           /* element (basic, predicate), key (sort) */
    amp_map map;             /* basic */
    int op;                  /* scan: the one operator it holds; -1: every operator of the type;
                                predicate: AMP__ALG_PRED_COUNT or _SELECT */
    size_t size;             /* sort: value bytes (0: keys only); fill: element bytes */
    const char *predicate;   /* predicate */
    const amp__alg_user *user;
    amp_type acc, out;       /* basic, scan: the accumulator and the result/output type (0: type) */
} amp__alg_spec;

/* sp's accumulator and output types (basic and scan families). */
static inline amp_type amp__alg_acc_type(const amp__alg_spec *sp) { return sp->acc ? sp->acc : sp->type; }
static inline amp_type amp__alg_out_type(const amp__alg_spec *sp) { return sp->out ? sp->out : amp__alg_acc_type(sp); }


/* alg/geometry.c: g's tile geometry for sp on acc (tile, items a thread,
 * radix bits, tiles a reduction spreads over...), from the tuning knobs
 * (read once) and sp's sizes, fitted to tile_static memory. */
void amp__alg_geometry(const amp_accelerator *acc, const amp__alg_spec *sp, amp__alg_prog *g);

/* A program's source as it would be built for a GPU (gpu) or the CPU
 * accelerator with the default tuning (malloc'ed; NULL: no memory): for
 * compiling every family for GPU targets where there is no GPU
 * (test/test_alg_device.c). acc and out: the accumulator and output types
 * of the basic and scan families (0: t). */
char *amp__alg_source_for(bool gpu, int family, amp_type t, amp_map map, int op, size_t size, const char *predicate,
                          const amp__alg_user *user, amp_type acc, amp_type out);

/* The programs of the built-in algorithms, built on first use per
 * accelerator and kept (*out is valid for the process's life):
 *   basic:     reduce of type t with map (ops chosen at run time), iota
 *              (map AMP_MAP_IDENTITY);
 *   scanner:   scan of type t with operator op (a GPU's program holds op
 *              alone, the CPU accelerator's every operator) and clear;
 *   predicate: the count (part AMP__ALG_PRED_COUNT: amp_count_if's
 *              reduce kernels) or the compaction (AMP__ALG_PRED_SELECT:
 *              amp_copy_if's select and clear) of type t by a predicate
 *              string, two programs, so that neither call compiles the
 *              other's kernels (NVRTC, sm_90: 0.6 s for the compaction's,
 *              0.35 s for the count's, 0.9 s for both in one)
 *              (for fn, the public call: it names fn and the string in
 *              messages, and a string that could change the code
 *              generated around it is AMP_ERROR_INVALID_ARGUMENT);
 *   sorter:    radix sort of keys of type t, with values of vsize bytes
 *              (0: keys only);
 *   filler:    fill of elements of elem bytes. */
amp_status amp__alg_basic(amp_accelerator *acc, amp_type t, amp_map map, const amp__alg_prog **out);
amp_status amp__alg_scanner(amp_accelerator *acc, amp_type t, amp_op op, const amp__alg_prog **out);
/* The same accumulating in type r with results or outputs of type o (each
 * t or a wider type): a reduction holding op alone (op >= 0) or every
 * operator (-1); a scan holding op (a GPU's, or any accelerator's where o
 * is not r) or every operator. Without iota. */
amp_status amp__alg_basic_wide(amp_accelerator *acc, amp_type t, amp_map map, int op, amp_type r, amp_type o,
                               const amp__alg_prog **out);
amp_status amp__alg_scanner_wide(amp_accelerator *acc, amp_type t, amp_op op, amp_type r, amp_type o,
                                 const amp__alg_prog **out);
enum { AMP__ALG_PRED_COUNT = 0, AMP__ALG_PRED_SELECT = 1 };
amp_status amp__alg_predicate(const char *fn, amp_accelerator *acc, amp_type t, const char *predicate, int part,
                              const amp__alg_prog **out);
amp_status amp__alg_sorter(amp_accelerator *acc, amp_type t, size_t vsize, const amp__alg_prog **out);
amp_status amp__alg_filler(amp_accelerator *acc, size_t elem, const amp__alg_prog **out);
/* lib/alg/text.c: text quoted for a message into dst (size bytes: quotes,
 * backslashes and line ends escaped, at most max bytes of text, "..."
 * after a cut). */
void amp__alg_quote(char *dst, size_t size, const char *text, size_t max);
/* AMP_ERROR_INVALID_ARGUMENT from fn (the public call) when text (what:
 * "predicate", "the map expression of reduction 'r'", ...) could change the
 * code generated around it, naming the string, the flaw, its line and
 * column; expression: text must hold an expression (not a preamble). */
amp_status amp__alg_check_text(const char *fn, const char *what, const char *text, bool expression);
/* The same over a user reduction's parameter names and strings. */
amp_status amp__alg_check_user(const char *fn, const amp__alg_user *u);
/* Build a user reduction's reduce (scan false: for amp_reduction_create)
 * or scan program (for amp_reduction_scan) into *out (the caller's;
 * release with amp__alg_prog_release). Its parameter names and strings
 * are checked first: a name the generated code cannot declare (a keyword,
 * a reserved or the library's name) or a string that could change the
 * code around it is AMP_ERROR_INVALID_ARGUMENT naming it. */
amp_status amp__alg_build_user(amp_accelerator *acc, const amp__alg_user *u, bool scan, amp__alg_prog *out);
void amp__alg_prog_release(amp__alg_prog *p);
/* Build (or load) every built-in program for acc, the i-th for i = first,
 * first + stride, ... of the list (*count, may be NULL: how many there
 * are), those whose name in messages holds one of the strings of only
 * (NULL-terminated; NULL: all): amp_algorithms_prepare, and
 * hipamp-prebuild's threads. */
amp_status amp__alg_prepare(amp_accelerator *acc, size_t first, size_t stride, const char *const *only, size_t *count);
/* The source of the i-th built-in program as a GPU of arch target would
 * build it (malloc'ed; NULL past the last), its name in messages into
 * name (may be NULL): hipamp-prebuild's packs for GPU targets. */
char *amp__alg_builtin_source(const char *target, size_t i, char *name, size_t name_size);
/* How many launch graphs launch a kernel of p (0: none, or p not built). */
int amp__alg_prog_graphs(const amp__alg_prog *p);
/* The C++ spelling of t ("float", "long long"...). */
const char *amp__alg_ctype(amp_type t);

/* ---------------------------------------------------------- launching */

/* A sequence of launches on one queue: synchronous ones (as
 * amp_parallel_for_each) or asynchronous ones with a future timing them
 * all. */
typedef struct amp__alg_run {
    amp_accelerator_view *q;
    bool async;
    void *t0;           /* timed event before the first launch (futures only) */
    amp__point done;    /* after the last launch */
    int launched;       /* launches queued (or recorded) so far */
} amp__alg_run;
/* Start a run (async with want_future: record the first timed event). */
/* Tiles for n elements of a reduction or an element-wise kernel (fill,
 * iota) over p's reduce geometry, at most p->reduce_tiles and at least 1,
 * none with fewer than p->reduce_grain elements unless there is one, and
 * in *per the elements each takes: whole chunks of tile x reduce_items, so
 * that every tile but the last runs unguarded. */
int64_t amp__alg_spread(const amp__alg_prog *p, int64_t n, int64_t *per);
amp_status amp__alg_run_begin(amp__alg_run *r, amp_accelerator_view *q, bool async, bool want_future);
/* Before a run's first launch: the call's views and arrays, among a[0..n)
 * and b[0..m) (any kinds: the others are skipped), fit in the graph the
 * calling thread records on r->q (amp__launch_args_fit), so that a refusal
 * comes before anything is recorded and the recording goes on. */
amp_status amp__alg_run_fits(const amp__alg_run *r, const amp_arg *a, size_t n, const amp_arg *b, size_t m);
/* Launch kernel k of p over ntiles tiles. */
amp_status amp__alg_launch(amp__alg_run *r, const amp__alg_prog *p, int k, int64_t ntiles, const amp_arg *args,
                           size_t nargs);
/* End a run: *out (may be NULL) gets the future of everything launched
 * (complete at once, untimed, when q records a graph: the work runs at its
 * replays). On a failed run (st != AMP_OK) it only releases what begin
 * took, and a recording that holds part of the run's launches is broken
 * (amp__graph_break: a replay would run half an algorithm). */
amp_status amp__alg_run_end(amp__alg_run *r, amp_status st, amp_future **out);

/* ------------------------------------------- reductions (lib/alg/reduce.c) */

/* Queue the reduction of p (amp_alg_reduce, amp_alg_reduce_final) of n
 * elements with operator op: in[0..nin) are the kernel's input parameters
 * (each input's span and shape, then the scalars); init (NULL: none) a
 * value of p's accumulator type combined in front; the result, one element
 * of p->osize bytes, goes to res (a span argument, overwritten). */
amp_status amp__alg_reduce_into(amp__alg_run *run, const amp__alg_prog *p, const amp_arg *in, size_t nin, int64_t n,
                                int op, const void *init, amp_arg res);
/* The same on q with the result (rsize bytes: p->osize) copied to the host
 * (blocks), without an initial value. */
amp_status amp__alg_reduce_to_host(amp_accelerator_view *q, const amp__alg_prog *p, const amp_arg *in, size_t nin,
                                   int64_t n, int op, size_t rsize, void *result);
/* The result argument of an _async form, resolved into d: one writable
 * element of rsize bytes (tname names its type in messages);
 * AMP_ERROR_INVALID_ARGUMENT naming fn otherwise. */
amp_status amp__alg_result(const char *fn, amp_arg result, size_t rsize, const char *tname, amp__alg_data *d);
/* A value of type t read from p (unaligned is fine; NULL: 0) as a kernel
 * argument. */
amp_arg amp__alg_value_arg(amp_type t, const void *p);
/* The accumulation type of a _with call on t with options o (NULL: t),
 * checked against t (AMP_ERROR_INVALID_ARGUMENT naming both). */
amp_status amp__alg_accumulate(const char *fn, amp_type t, const amp_alg_options *o, amp_type *r);
/* The caller's init (of type r; may be NULL) as a value of p's accumulator:
 * itself, or a float32 converted into *widened for a program that
 * accumulates float32 products in float64. */
const void *amp__alg_init_for(const amp__alg_prog *p, amp_type r, const void *init, double *widened);
/* The operator number of a user reduction's reduce expression (amp::alg::OP_USER). */
#define AMP__ALG_OP_USER 100
/* amp_reduction_scan's checks (lib/alg/user.c): args against r's
 * parameters (its one input resolved into d[0], which the shape argument
 * in in[] points into: d must outlive the launches), *q resolved, r's type
 * and its input's type. Then its scan program, built on first use. */
amp_status amp__alg_user_scan_prepare(amp_accelerator_view **q, amp_reduction *r, const amp_arg *args, size_t nargs,
                                      amp__alg_data *d, amp_arg *in, size_t *nin, amp_type *type,
                                      amp_type *in_type);
amp_status amp__alg_user_scan_program(amp_reduction *r, const char *fn, const amp__alg_prog **p);

/* --------------------------------------------- scratch (lib/alg/scratch.c) */

/* Device memory an algorithm needs for one call: an array of count
 * elements of elem bytes (or more; exactly one for count 1, which results
 * read back to the host use) on q's accelerator, taken from a pool
 * per accelerator and given back once the call has queued its launches;
 * when the calling thread records a graph on q, the graph keeps it until
 * it is freed (give is then a no-op).
 * Launches order themselves after the array's last use as for any array,
 * so a scratch array given back while its kernels still run is safe to
 * take again on any queue. Its contents are undefined when taken. */
typedef struct amp__alg_scratch amp__alg_scratch;
amp_status amp__alg_scratch_take(amp_accelerator_view *q, size_t elem, int64_t count, amp__alg_scratch **out);
/* The scratch array's span as a kernel argument. */
amp_arg amp__alg_scratch_arg(const amp__alg_scratch *s);
amp_array *amp__alg_scratch_array(const amp__alg_scratch *s);
/* NULL is a no-op. */
void amp__alg_scratch_give(amp__alg_scratch *s);

#endif /* AMP_ALG_H */
