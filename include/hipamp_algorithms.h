/* hipamp_algorithms.h — hipamp's algorithms: reduce, transform-reduce and
 * user-defined reductions, scan, sort, stream compaction, fill and iota, on
 * whole arrays, views and strided sections, on every accelerator (C++ AMP's
 * algorithms library, CuPy's ReductionKernel). Included by hipamp.h; the
 * conventions stated at the top of hipamp.h hold here too. docs/algorithms.md
 * has the semantics, limits and performance notes.
 *
 * Common rules:
 *  - Data arguments are amp_arg values made by amp_arg_view (a view, a
 *    section, a projection: any strides, in at most 4 dimensions that do
 *    not merge with the next, else AMP_ERROR_UNSUPPORTED) or
 *    amp_arg_array (a whole array; not a staging array, which lives in host
 *    memory: pass a view of it, amp_array_view_of_array);
 *    anything else is AMP_ERROR_INVALID_ARGUMENT, and so is a destroyed
 *    view, array, accelerator view or reduction ("destroyed", naming the
 *    argument). Elements are taken in
 *    row-major order of the view (the last dimension fastest). Views of host
 *    memory stay coherent as with any launch: no synchronize is needed
 *    before (the algorithm copies in what the device lacks) or after (host
 *    access waits for it and copies back).
 *  - type names the element type; a view or array whose element size is not
 *    the type's is AMP_ERROR_INVALID_ARGUMENT naming both sizes.
 *  - An argument a call writes (out, result, sort's keys and values) must
 *    not share memory with any other of its data arguments:
 *    AMP_ERROR_INVALID_ARGUMENT naming both. That holds for parts of one
 *    view or array, and for views and arrays made apart over the same
 *    memory (two views of one host buffer, arrays from
 *    amp_array_create_from_native over one allocation, sections of any of
 *    these), which are compared by their bytes: exactly between views of
 *    one buffer made with one extent and element size, else by the span
 *    from each one's first byte to its last. Inputs that are only read may
 *    share memory. The one exception is a scan in place (amp_scan).
 *  - Counts are 64-bit: a view of rank 2 or more may hold more than 2^31
 *    elements. AMP_ALG_MAX_ELEMENTS is the largest input taken (more is
 *    AMP_ERROR_UNSUPPORTED naming both numbers). 0 elements is valid where a
 *    view can have them: a reduction then gives the identity (the _with
 *    forms' initial value where given), everything
 *    else does nothing.
 *  - q NULL: the default view of the accelerator the data belongs to (an
 *    array's, else where a view's data lives, else the default
 *    accelerator's). A q on another accelerator than an array argument is
 *    refused by the launch (AMP_ERROR_INVALID_ARGUMENT).
 *  - The kernels are compiled on first use per (accelerator, type, operator
 *    family; on a GPU the scan per operator) like any program (the
 *    in-memory and disk caches apply, so a later process loads them), then
 *    kept for the process's life.
 *    Temporary device memory comes from a pool per accelerator and is reused.
 *  - Calls that return a value on the host (amp_reduce, amp_count_if,
 *    amp_copy_if, ...) block until it is there. The others behave like
 *    amp_parallel_for_each: they return once queued on q (on the CPU
 *    accelerator, once done), and any host access to the data waits for
 *    them. The _async forms queue everything, results included, on q and
 *    never wait on the host; their future (out may be NULL when not wanted)
 *    completes with the last kernel and times the whole algorithm.
 *  - Every call is thread-safe; calls on two queues run at the same time.
 *  - On a view that records a launch graph (hipamp_graph.h), every call
 *    whose result stays on the device is recorded as its launches (fill,
 *    iota, scan, sort, sort_by_key, amp_reduction_scan and the _async
 *    forms of the reductions); its temporaries then belong to the graph
 *    until amp_graph_destroy, and every replay clears and recomputes them.
 *    The calls that return a result on the host (amp_reduce,
 *    amp_transform_reduce, amp_reduction_apply, amp_count_if, amp_copy_if)
 *    are AMP_ERROR_BUSY there, naming the _async form to record instead
 *    where there is one, and record nothing. A recorded _async call's
 *    future is complete at once and untimed (the work runs at each
 *    replay).
 *  - AMP_ERROR_OUT_OF_MEMORY: no device memory for the temporaries.
 *    AMP_ERROR_COMPILE (user expressions): the compiler's log, led by a line
 *    that names the call and the expression at fault; errors inside the
 *    expressions point at their own line and column. AMP_ERROR_DEVICE
 *    as for a launch (hipamp.h, amp_parallel_for_each): in a child process
 *    forked while another thread of the parent was using an argument's
 *    data, at once, naming the call; so too amp_reduction_scan and
 *    amp_reduction_destroy of a reduction whose scan another thread was
 *    building at fork (the reduction is kept). A built-in program another
 *    thread was building at fork is built again by the child. */
#ifndef HIPAMP_ALGORITHMS_H
#define HIPAMP_ALGORITHMS_H

#ifndef HIPAMP_H
#include "hipamp.h"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The largest element count an algorithm takes (2^40). On a GPU a launch is
 * also limited to 2^31-1 threads of a few elements each (a sort: about 2^35
 * elements; docs/algorithms.md, "Limits"): AMP_ERROR_UNSUPPORTED past it. */
#define AMP_ALG_MAX_ELEMENTS (1LL << 40)

/* Element types. */
typedef enum amp_type {
    AMP_TYPE_INT32 = 1,   /* int32_t  */
    AMP_TYPE_UINT32 = 2,  /* uint32_t */
    AMP_TYPE_INT64 = 3,   /* int64_t  */
    AMP_TYPE_UINT64 = 4,  /* uint64_t */
    AMP_TYPE_FLOAT32 = 5, /* float    */
    AMP_TYPE_FLOAT64 = 6  /* double   */
} amp_type;
/* Bytes of one element of t; 0 for a value outside the enum. */
AMP_API size_t amp_type_size(amp_type t);
/* Static name of t ("float32"); "unknown" outside the enum. */
AMP_API const char *amp_type_name(amp_type t);

/* Built-in operators: hipamp.h's amp_op, whose associative members the
 * algorithms take: AMP_OP_SUM (= AMP_OP_ADD), AMP_OP_PRODUCT (=
 * AMP_OP_MUL), AMP_OP_MIN, AMP_OP_MAX, AMP_OP_AND, AMP_OP_OR, AMP_OP_XOR
 * (AMP_OP_SUB, AMP_OP_DIV and AMP_OP_MOD are AMP_ERROR_INVALID_ARGUMENT:
 * not associative). Integer sums and products wrap around (two's
 * complement). min and max of floating-point values: a NaN anywhere gives a
 * NaN, and -0.0 counts as less than +0.0 (so the result does not depend on
 * the order of combination). The bitwise operators take integer types only
 * (on a floating-point type: AMP_ERROR_INVALID_ARGUMENT naming both).
 * Identities: 0, 1, the type's largest (+inf), its lowest (-inf), all ones,
 * 0, 0; every result is computed from the identity (or init) onwards, so
 * a floating-point sum (reduction or scan) over only -0.0 values gives
 * +0.0 (0.0 + -0.0), and -0.0 only from an init of -0.0 (which is also
 * what a sum of no elements from that init gives). Floating-point sums are combined pairwise in an order that depends
 * on the accelerator and the tuning, so they differ from a serial sum by
 * rounding. float32 products (reductions and scans) are accumulated in
 * float64 and rounded to float32 once per result: a tree of float32
 * products drifts (values near 1 round down more often than up), float64
 * ones stay within an ulp of float32. */
/* Static name of op ("AMP_OP_SUM"; "AMP_OP_PRODUCT" for AMP_OP_MUL, as the
 * algorithms call them); "unknown" outside the enum. */
AMP_API const char *amp_op_name(amp_op op);

/* ---------------------------------------------------------------- reduce */

/* What the _with forms (amp_reduce_with, amp_transform_reduce_with, their
 * _async forms, amp_scan_with) take beyond the plain calls; a NULL options
 * pointer, or one zero-initialised, is the plain call. */
typedef struct amp_alg_options {
    /* The initial value (Thrust's init), pointing at a value of the
     * accumulation type (below), read before the call returns. A reduction
     * gives init op x[0] op ... op x[n-1] (init for 0 elements); a scan
     * starts from it: exclusive out[0] = init, out[i] = init op x[0] op ...
     * op x[i-1]; inclusive out[i] = init op x[0] op ... op x[i]. NULL: op's
     * identity (exclusive min and max scans then start at the type's
     * largest and lowest). */
    const void *init;
    /* The type the elements are converted to and combined in, and the type
     * of the result (reductions) or of out's elements (scans): 0 or t
     * itself, or t's wider type: AMP_TYPE_INT64 for AMP_TYPE_INT32,
     * AMP_TYPE_UINT64 for AMP_TYPE_UINT32, AMP_TYPE_FLOAT64 for
     * AMP_TYPE_FLOAT32 (a sum of int32 that would wrap in 32 bits is then
     * exact; float32 sums and dots round as float64's). A map is computed in
     * it (a dot product multiplies the widened elements). Anything else is
     * AMP_ERROR_INVALID_ARGUMENT naming both types. The wide programs are
     * compiled at their first use, apart from the plain calls' ones. */
    amp_type accumulate;
} amp_alg_options;

/* op over every element of in (an array or view of type t), written to
 * *result (amp_type_size(t) bytes). Blocks until it is there. On failure
 * those bytes are zeroed (none where t names no type); so are the _with
 * forms' and amp_transform_reduce's, and amp_reduction_apply's.
 * AMP_ERROR_INVALID_ARGUMENT: in is not data, its element size is not t's,
 * t or op is not in its enum, op is AMP_OP_SUB, _DIV or _MOD (not
 * associative), a bitwise op on a floating-point type, result NULL. */
AMP_API amp_status amp_reduce(amp_accelerator_view *q, amp_arg in, amp_type t, amp_op op, void *result);
/* As amp_reduce, with the result written on the device into result (an
 * array or a view of exactly one element of t; not overlapping in):
 * nothing waits on the host, so a solver's next kernel can read it from
 * there. *out (out may be NULL) is a future the caller owns. */
AMP_API amp_status amp_reduce_async(amp_accelerator_view *q, amp_arg in, amp_type t, amp_op op, amp_arg result,
                                    amp_future **out);
/* amp_reduce with options o (NULL: amp_reduce): an initial value, and a
 * wider accumulation whose type *result then has
 * (amp_type_size(o->accumulate) bytes). o and what it points to stay the
 * caller's (read before this returns). Blocks. Statuses as amp_reduce, and
 * AMP_ERROR_INVALID_ARGUMENT for an accumulate type t does not widen to
 * (naming both types). */
AMP_API amp_status amp_reduce_with(amp_accelerator_view *q, amp_arg in, amp_type t, amp_op op,
                                   const amp_alg_options *o, void *result);
/* amp_reduce_async with options o (read before this returns, as
 * amp_reduce_with); result holds one element of the accumulation type.
 * Returns once queued; statuses as amp_reduce_async and amp_reduce_with. */
AMP_API amp_status amp_reduce_with_async(amp_accelerator_view *q, amp_arg in, amp_type t, amp_op op,
                                         const amp_alg_options *o, amp_arg result, amp_future **out);

/* What transform-reduce applies to each element before reducing. */
typedef enum amp_map {
    AMP_MAP_IDENTITY = 1,           /* x          (one input)            */
    AMP_MAP_ABS = 2,                /* |x|        (one input)            */
    AMP_MAP_SQUARE = 3,             /* x * x      (one input: a norm^2)  */
    AMP_MAP_PRODUCT = 4,            /* x * y      (two inputs: a dot)    */
    AMP_MAP_SQUARED_DIFFERENCE = 5  /* (x - y)^2  (two inputs)           */
} amp_map;

/* op over map(x[i], y[i]) for every i, written to *result as type t
 * (amp_type_size(t) bytes: a float for AMP_TYPE_FLOAT32, although its
 * products accumulate in double; amp_transform_reduce_with's accumulate
 * gives the wider type). x and y hold
 * the same number of elements of type t (their shapes may differ: each is
 * taken in its own row-major order); y is ignored by one-input maps. Blocks.
 * AMP_ERROR_INVALID_EXTENT: x and y hold different numbers of elements.
 * Otherwise as amp_reduce. */
AMP_API amp_status amp_transform_reduce(amp_accelerator_view *q, amp_arg x, amp_arg y, amp_type t, amp_map map,
                                        amp_op op, void *result);
/* As amp_transform_reduce with the result on the device (as
 * amp_reduce_async; result overlapping x or y is AMP_ERROR_INVALID_ARGUMENT). */
AMP_API amp_status amp_transform_reduce_async(amp_accelerator_view *q, amp_arg x, amp_arg y, amp_type t,
                                              amp_map map, amp_op op, amp_arg result, amp_future **out);
/* amp_transform_reduce and its _async form with options o (as
 * amp_reduce_with: o read before the call returns; the first blocks, the
 * _async one returns once queued; statuses as the plain forms, and
 * AMP_ERROR_INVALID_ARGUMENT for an accumulate type t does not widen to). */
AMP_API amp_status amp_transform_reduce_with(amp_accelerator_view *q, amp_arg x, amp_arg y, amp_type t, amp_map map,
                                             amp_op op, const amp_alg_options *o, void *result);
AMP_API amp_status amp_transform_reduce_with_async(amp_accelerator_view *q, amp_arg x, amp_arg y, amp_type t,
                                                   amp_map map, amp_op op, const amp_alg_options *o, amp_arg result,
                                                   amp_future **out);

/* ----------------------------------------------- user-defined reductions */

/* A reduction written as expressions (CuPy's ReductionKernel), compiled
 * once for one accelerator and applied to data any number of times. Each
 * string is a C++ expression of the device language (docs/device-language.md)
 * inserted as written into code hipamp generates, which no string may
 * change. So a string (the preamble too; predicates alike) is refused,
 * AMP_ERROR_INVALID_ARGUMENT naming the call, the string, and the line,
 * column and text at fault, when it holds:
 *  - a '#' or '%:' anywhere but in a string or character literal or a
 *    comment (no preprocessor directive, #include included, and no #
 *    operator);
 *  - a backslash that ends a line (a line splice), in a comment or
 *    literal too;
 *  - _Pragma, or a name beginning with amp__, AMP__ or amp_alg_ (the
 *    library's: its kernels are amp_alg_reduce, amp_alg_scan, ...; the
 *    preludes' internal macros, one of which pastes tokens);
 *  - a bracket ((), [], {} or a digraph of one), comment, string or
 *    character literal that it opens and does not close, or a bracket that
 *    closes one it did not open; an expression must also hold a token;
 *  - a raw string whose delimiter holds a byte other than letters,
 *    digits, '_' and basic punctuation (the compilers read on past it as
 *    code);
 *  - a raw string right after another literal ("a"R"(...)": g++ reads R
 *    as the first literal's suffix, clang a raw string), or after a
 *    non-ASCII character or '$' (where clang may end a name);
 *  - a Unicode space (U+00A0, U+3000, ...) outside literals and comments
 *    (white space to clang, part of a name to g++).
 * Within those rules an expression stays one expression. The check is
 * lexical: what only looks like the above ("'#'", a '#' in a comment,
 * 1'000) is taken. A preamble that does not end at file scope (a
 * declaration left open, "int x =", or a macro of a system header that
 * opens a namespace or an extern "C" block) does not compile, and the
 * message names the preamble. */
typedef struct amp_reduction amp_reduction;
typedef struct amp_reduction_desc {
    /* Its name in messages (letters, digits, '_'; at most 63). NULL: "reduction". */
    const char *name;
    /* The element inputs, "float x, float y": one element type and a name
     * each, bound in order to views or arrays of that type. Types: int32_t
     * (int), uint32_t (unsigned), int64_t (long long), uint64_t (unsigned long
     * long), float, double. At least 1, at most 8. A name is an identifier
     * other than i, a and b, not a C++ keyword, not reserved to the
     * compiler (holding "__" or beginning with '_' and a capital) and not
     * the library's (beginning with AMP_ or amp__): AMP_ERROR_INVALID_ARGUMENT
     * naming it. A name the device language defines as a macro (float4)
     * fails to compile, the log led by a line naming the inputs. */
    const char *inputs;
    /* Parameters passed by value after the inputs, "float alpha, int k"
     * (the inputs' types and rule for names; at most 8), or NULL. */
    const char *scalars;
    /* The type of the mapped values, the accumulator and the result. */
    amp_type type;
    /* The value each element contributes, from the inputs' elements, the
     * scalars and i (the element's index, int64): "x * y". */
    const char *map;
    /* Combines two partial results a and b: "a + b". Must be associative and
     * commutative (the order of combination is not fixed). */
    const char *reduce;
    /* The identity of reduce: "0". */
    const char *identity;
    /* Applied to the final value a: "sqrt(a)". NULL: a itself. */
    const char *post;
    /* Device code compiled at file scope before the expressions (helper
     * functions, which need __device__), or NULL. The rule above holds: no
     * #include or other directive (put what is needed in as code). */
    const char *preamble;
} amp_reduction_desc;

/* Compile d for accelerator a (NULL: default); blocks while compiling (the
 * caches apply, so a later process loads it). The strings are copied. The
 * reduction is the caller's (destroy it).
 * AMP_ERROR_INVALID_ARGUMENT: a missing string, a bad name, type or
 * parameter list, a string that could change the code generated around it
 * (see amp_reduction_desc; the message names the part). AMP_ERROR_COMPILE:
 * an expression does not compile (the log's first line names the call and
 * the expression, and the errors inside it carry the expression's own line
 * and column).
 * AMP_ERROR_UNSUPPORTED: a cannot build programs. */
AMP_API amp_status amp_reduction_create(amp_accelerator *a, const amp_reduction_desc *d, amp_reduction **out);
/* Apply r: args[] are the inputs (views or arrays, in order, all holding the
 * same number of elements) then the scalars (amp_arg_int32, amp_arg_float32,
 * ... of each scalar's type); the result (amp_type_size(r's type) bytes) is
 * written to *result. Blocks. q must be on r's accelerator (NULL: its
 * default view). AMP_ERROR_ARGUMENT_MISMATCH: an argument count, kind or
 * element size that does not match (the message names the parameter).
 * AMP_ERROR_INVALID_EXTENT: inputs of different sizes. */
AMP_API amp_status amp_reduction_apply(amp_accelerator_view *q, amp_reduction *r, const amp_arg *args, size_t nargs,
                                       void *result);
/* As amp_reduction_apply with the result written on the device into result
 * (one element of r's type, overlapping no input), as amp_reduce_async. */
AMP_API amp_status amp_reduction_apply_async(amp_accelerator_view *q, amp_reduction *r, const amp_arg *args,
                                             size_t nargs, amp_arg result, amp_future **out);
/* Destroy r (its compiled code stays in the caches). Launches already
 * queued keep what they use. AMP_ERROR_BUSY while a launch graph that
 * recorded r's apply_async or scan exists (destroy the graph first). r is a handle like a view or a program: used
 * after its destroy, or destroyed twice, it is AMP_ERROR_INVALID_ARGUMENT
 * saying "destroyed" (hipamp.h's conventions). */
AMP_API amp_status amp_reduction_destroy(amp_reduction *r);

/* ------------------------------------------------------------------ scan */

typedef enum amp_scan_kind {
    AMP_SCAN_INCLUSIVE = 0, /* out[i] = in[0] op ... op in[i] (from the identity: see the operators) */
    AMP_SCAN_EXCLUSIVE = 1  /* out[i] = identity (amp_scan_with: init) op in[0] op ... op in[i-1] */
} amp_scan_kind;

/* Prefix scan of in into out (both of type t and the same number of
 * elements, each in its own row-major order). out may be in itself (in
 * place: the same elements of one view or array, in the same order);
 * other overlaps of the two are AMP_ERROR_INVALID_ARGUMENT, another view
 * made apart over the same memory included. Returns once queued (as
 * amp_parallel_for_each). AMP_ERROR_INVALID_EXTENT: in and out hold
 * different numbers of elements (both named). Otherwise as amp_reduce. */
AMP_API amp_status amp_scan(amp_accelerator_view *q, amp_arg in, amp_arg out, amp_type t, amp_op op,
                            amp_scan_kind kind);
/* amp_scan with options o (NULL: amp_scan): the scan starts from o->init,
 * and with a wider accumulation out holds elements of that type (and so
 * cannot be in). o stays the caller's (read before this returns). Returns
 * once queued. Statuses as amp_scan, and AMP_ERROR_INVALID_ARGUMENT for an
 * accumulate type t does not widen to. */
AMP_API amp_status amp_scan_with(amp_accelerator_view *q, amp_arg in, amp_arg out, amp_type t, amp_op op,
                                 amp_scan_kind kind, const amp_alg_options *o);
/* Scan with a user-defined reduction: out[i] = map(element i) combined by
 * r's reduce expression (associativity is enough here), exclusive scans
 * starting from its identity; its post expression is not used. r must have
 * exactly one input; args are that input then r's scalars; out holds
 * elements of r's type (in place only where r's input has r's type, else
 * AMP_ERROR_INVALID_ARGUMENT naming both; or apart from the input, as
 * amp_scan).
 * The scan kernels are compiled at the first call. Statuses as
 * amp_reduction_apply (AMP_ERROR_ARGUMENT_MISMATCH for arguments that do
 * not match r, AMP_ERROR_INVALID_EXTENT for inputs, or an input and out,
 * of different sizes), and as amp_scan for out. */
AMP_API amp_status amp_reduction_scan(amp_accelerator_view *q, amp_reduction *r, const amp_arg *args, size_t nargs,
                                      amp_arg out, amp_scan_kind kind);

/* ------------------------------------------------------------------ sort */

typedef enum amp_order { AMP_ASCENDING = 0, AMP_DESCENDING = 1 } amp_order;

/* Sort the elements of keys (type t) in place. The order is total: integers
 * by value; floating point -inf < ... < -0.0 < +0.0 < ... < +inf, then every
 * NaN (NaNs come last in both orders). Descending is the reverse of that
 * order except that NaNs stay last. A radix sort (least significant digit
 * first): stable, so equal keys keep their order. Returns once queued.
 * Temporary memory: twice the keys. Otherwise as amp_reduce. */
AMP_API amp_status amp_sort(amp_accelerator_view *q, amp_arg keys, amp_type t, amp_order order);
/* Sort keys as amp_sort, moving values (any element type of 1, 2, 4, 8 or
 * 16 bytes; the same number of elements) with them; stable. keys and values
 * must not overlap (AMP_ERROR_INVALID_ARGUMENT, naming both).
 * AMP_ERROR_INVALID_EXTENT: keys and values hold different numbers of
 * elements. Temporary memory: twice the keys and values. Otherwise as
 * amp_sort. */
AMP_API amp_status amp_sort_by_key(amp_accelerator_view *q, amp_arg keys, amp_arg values, amp_type t,
                                   amp_order order);

/* ----------------------------------------------------------- compaction */

/* Predicates are C++ expressions of x (the element, of type t), i (its
 * index, int64) and arg (a value of type t the caller passes: *arg, or 0
 * when arg is NULL), e.g. "x > arg && (i & 1) == 0". Each distinct
 * predicate string is compiled once per (accelerator, type) for
 * amp_count_if and once for amp_copy_if, on first use, and kept. A
 * predicate NULL, empty or breaking the rule of amp_reduction_desc's
 * strings (no directive, line splice, _Pragma or amp__ name; what it opens
 * it closes) is AMP_ERROR_INVALID_ARGUMENT naming the call and the
 * predicate. */

/* The number of elements of in for which predicate holds, in *count.
 * Blocks. AMP_ERROR_COMPILE: the predicate does not compile (as for
 * amp_reduction_create). Otherwise as amp_reduce. */
AMP_API amp_status amp_count_if(amp_accelerator_view *q, amp_arg in, amp_type t, const char *predicate,
                                const void *arg, uint64_t *count);
/* Stream compaction: the elements of in for which predicate holds, in their
 * order, to out[0..*count); the rest of out is left as it was. Blocks (the
 * count comes back to the host). out must not overlap in.
 * AMP_ERROR_OUT_OF_BOUNDS: more elements pass than out holds (out then
 * holds the first of them; the message names both numbers). Otherwise as
 * amp_count_if. */
AMP_API amp_status amp_copy_if(amp_accelerator_view *q, amp_arg in, amp_arg out, amp_type t, const char *predicate,
                               const void *arg, uint64_t *count);

/* ---------------------------------------------------------- fill, iota */

/* Every element of out = the element-size bytes at value (any element size
 * up to 64 bytes). Returns once queued; value is read before the call
 * returns. Nothing is copied in for out. */
AMP_API amp_status amp_fill(amp_accelerator_view *q, amp_arg out, const void *value);
/* out[i] = start + i * step (start and step point at values of type t; step
 * NULL: 1). Integers wrap around; floating point is computed in double,
 * then rounded to t (float32) once per element. The compilers may fuse the
 * double product and sum into one rounding (an fma) or round twice, so a
 * float64 element may differ from a plain C `start + i * step` (and from
 * another accelerator's) in the last place. Returns once queued. */
AMP_API amp_status amp_iota(amp_accelerator_view *q, amp_arg out, amp_type t, const void *start, const void *step);

/* Get every built-in algorithm's program ready on acc (NULL: the default
 * accelerator) now, so that no first call waits for one: each type,
 * operator, map, sort value size and the common fill element sizes (1, 2,
 * 3, 4, 6, 8, 12, 16, 24, 32, 48, 64 bytes). Each is loaded from the
 * library's prebuilt pack for acc's target where there is one
 * (amp_prebuilt_get_info), else from the disk cache, else compiled (and
 * stored in the disk cache: the cache warmer `hipamp-compile --warm
 * --algorithms` is this call). Programs of predicates and user reductions
 * are not among them (their strings are not known ahead). Blocks until all
 * are built. The first failure's status: AMP_ERROR_UNSUPPORTED (acc cannot
 * build programs), AMP_ERROR_COMPILE, AMP_ERROR_OUT_OF_MEMORY. */
AMP_API amp_status amp_algorithms_prepare(amp_accelerator *acc);

#ifdef __cplusplus
}
#endif
#endif /* HIPAMP_ALGORITHMS_H */
