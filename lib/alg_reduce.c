/* alg_reduce.c — reductions: amp_reduce and amp_transform_reduce with the
 * built-in operators and maps, user-defined reductions compiled from
 * expressions (amp_reduction_*), each to the host or (the _async forms)
 * into a one-element array or view on the device. A reduction is one
 * launch when one tile covers the input, else a launch over up to
 * reduce_tiles tiles writing partial results and one that folds them. */
#include "alg.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

amp_arg amp__alg_value_arg(amp_type t, const void *p)
{
    union {
        int32_t i32;
        uint32_t u32;
        int64_t i64;
        uint64_t u64;
        float f32;
        double f64;
    } v;
    memset(&v, 0, sizeof v);
    if (p) memcpy(&v, p, amp_type_size(t));
    switch (t) {
    case AMP_TYPE_INT32: return amp_arg_int32(v.i32);
    case AMP_TYPE_UINT32: return amp_arg_uint32(v.u32);
    case AMP_TYPE_INT64: return amp_arg_int64(v.i64);
    case AMP_TYPE_UINT64: return amp_arg_uint64(v.u64);
    case AMP_TYPE_FLOAT32: return amp_arg_float32(v.f32);
    case AMP_TYPE_FLOAT64: return amp_arg_float64(v.f64);
    }
    return amp_arg_uint64(0);
}

amp_status amp__alg_reduce_into(amp__alg_run *run, const amp__alg_prog *p, const amp_arg *in, size_t nin, int64_t n,
                                int op, const void *init, amp_arg res)
{
    enum { MAXA = 2 * AMP__ALG_MAX_PARAMS + AMP__ALG_MAX_PARAMS + 10 };
    amp_arg a[MAXA];
    amp__alg_scratch *part = NULL;
    amp_status st = AMP_OK;
    int64_t per = 0, ntiles = amp__alg_spread(p, n, &per);
    size_t k = 0;
    const amp_arg iv = amp__alg_value_arg(p->rtype, init);
    for (size_t i = 0; i < nin; ++i) a[k++] = in[i];
    /* A single tile writes the result itself: into the partial results'
     * parameter, or where the result's type is not the accumulator's into
     * a parameter of its own (the partials' then a one-element scratch
     * array it leaves alone). */
    if (ntiles == 1 && !p->split_out) {
        a[k++] = res;
    } else {
        if ((st = amp__alg_scratch_take(run->q, p->rsize, ntiles, &part)) != AMP_OK) return st;
        a[k++] = amp__alg_scratch_arg(part);
        if (p->split_out) a[k++] = res;
    }
    a[k++] = amp_arg_int64(n);
    a[k++] = amp_arg_int64(per);
    a[k++] = amp_arg_int32(op);
    a[k++] = amp_arg_int32((ntiles == 1) | (init ? 2 : 0)); /* flags: the result written at once, from init */
    a[k++] = iv;
    if ((st = amp__alg_launch(run, p, AMP__ALG_K_REDUCE, ntiles, a, k)) != AMP_OK) goto out;
    if (ntiles > 1) {
        amp_arg f[] = {amp__alg_scratch_arg(part), amp_arg_int64(ntiles), res, amp_arg_int32(op), iv,
                       amp_arg_int32(init != NULL)};
        st = amp__alg_launch(run, p, AMP__ALG_K_REDUCE_FINAL, 1, f, 6);
    }
out:
    amp__alg_scratch_give(part);
    return st;
}

/* amp__alg_reduce_to_host with an initial value (NULL: none). */
static amp_status amp__alg_reduce_host(amp_accelerator_view *q, const amp__alg_prog *p, const amp_arg *in, size_t nin,
                                       int64_t n, int op, const void *init, void *result)
{
    amp__alg_scratch *res = NULL;
    amp__alg_run run;
    amp_status st = amp__alg_scratch_take(q, p->osize, 1, &res);
    if (st != AMP_OK) return st;
    amp__alg_run_begin(&run, q, false, false);
    st = amp__alg_reduce_into(&run, p, in, nin, n, op, init, amp__alg_scratch_arg(res));
    amp__alg_run_end(&run, st, NULL);
    if (st == AMP_OK) st = amp_array_copy_to_host(amp__alg_scratch_array(res), result);
    amp__alg_scratch_give(res);
    return st;
}

amp_status amp__alg_reduce_to_host(amp_accelerator_view *q, const amp__alg_prog *p, const amp_arg *in, size_t nin,
                                   int64_t n, int op, size_t rsize, void *result)
{
    (void)rsize; /* p's result size */
    return amp__alg_reduce_host(q, p, in, nin, n, op, NULL, result);
}

/* The result argument of an _async form: one element of rsize bytes. */
static amp_status amp__alg_result(const char *fn, amp_arg result, size_t rsize, const char *tname, amp__alg_data *d)
{
    amp_status st = amp__alg_resolve(fn, "result", result, rsize, tname, d);
    if (st != AMP_OK) return st;
    if (d->shape.n != 1)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: result must hold exactly one element; it holds %lld", fn,
                         (long long)d->shape.n);
    return amp__alg_writable(fn, "result", d);
}

amp_status amp__alg_accumulate(const char *fn, amp_type t, const amp_alg_options *o, amp_type *r)
{
    *r = t;
    if (!o || !o->accumulate || o->accumulate == t) return AMP_OK;
    amp_type wide = t == AMP_TYPE_INT32 ? AMP_TYPE_INT64 : t == AMP_TYPE_UINT32 ? AMP_TYPE_UINT64
                  : t == AMP_TYPE_FLOAT32 ? AMP_TYPE_FLOAT64 : t;
    if (o->accumulate != wide)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: options' accumulate %s (%d) is not the element type %s%s%s", fn,
                         amp_type_name(o->accumulate), (int)o->accumulate, amp_type_name(t),
                         wide != t ? " or its wider type " : " (it has no wider type)",
                         wide != t ? amp_type_name(wide) : "");
    *r = wide;
    return AMP_OK;
}

const void *amp__alg_init_for(const amp__alg_prog *p, amp_type r, const void *init, double *widened)
{
    if (!init || p->rtype == r) return init;
    float f; /* a float32 product accumulated in float64 */
    memcpy(&f, init, sizeof f);
    *widened = f;
    return widened;
}

/* amp_reduce, amp_transform_reduce and their _async and _with forms: x
 * (named xname in messages; y too for a two-input map) of type t, options o
 * (may be NULL); the result to the host (host != NULL) or into result on
 * the device. */
static amp_status amp__alg_transform_reduce(const char *fn, const char *xname, amp_accelerator_view *q, amp_arg x,
                                            amp_arg y, amp_type t, amp_map map, amp_op op,
                                            const amp_alg_options *o, void *host, const amp_arg *result,
                                            amp_future **out)
{
    amp__alg_data d[3];
    const amp__alg_prog *p = NULL;
    amp_type r = t;
    double widened;
    amp_status st;
    if (out) *out = NULL;
    if (q && (st = amp__handle_check(q, AMP__HANDLE_QUEUE, fn, "q")) != AMP_OK) return st;
    if ((st = amp__alg_op_ok(fn, t, op)) != AMP_OK || (st = amp__alg_accumulate(fn, t, o, &r)) != AMP_OK) return st;
    if (map < AMP_MAP_IDENTITY || map > AMP_MAP_SQUARED_DIFFERENCE)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: map %d is not an amp_map", fn, (int)map);
    bool two = map == AMP_MAP_PRODUCT || map == AMP_MAP_SQUARED_DIFFERENCE;
    size_t size = amp_type_size(t);
    if ((st = amp__alg_resolve(fn, xname, x, size, amp_type_name(t), &d[0])) != AMP_OK) return st;
    if (two) {
        if ((st = amp__alg_resolve(fn, "y", y, size, amp_type_name(t), &d[1])) != AMP_OK) return st;
        if (d[1].shape.n != d[0].shape.n)
            return amp__fail(AMP_ERROR_INVALID_EXTENT, "%s: %s holds %lld elements and y %lld", fn, xname,
                             (long long)d[0].shape.n, (long long)d[1].shape.n);
    }
    if (result && ((st = amp__alg_result(fn, *result, amp_type_size(r), amp_type_name(r), &d[2])) != AMP_OK ||
                   (st = amp__alg_apart(fn, "result", &d[2], xname, &d[0])) != AMP_OK ||
                   (two && (st = amp__alg_apart(fn, "result", &d[2], "y", &d[1])) != AMP_OK)))
        return st;
    if ((st = amp__alg_queue(q, d, two ? 2 : 1, NULL, &q)) != AMP_OK ||
        (host && (st = amp__alg_not_recording(fn, q, true)) != AMP_OK))
        return st;
    /* float32 products accumulate in float64 (hipamp_algorithms.h): a
     * float32 tree's partial products stay near 1, where rounding is
     * biased down (a product of 1 + a and 1 - b, a and b small, is a
     * float32 midpoint less a*b half the time), and 2^24 of them drifted
     * 10^5 ulps. */
    if (r == AMP_TYPE_FLOAT32 && op == AMP_OP_PRODUCT)
        st = amp__alg_basic_wide(q->acc, t, map, op, AMP_TYPE_FLOAT64, AMP_TYPE_FLOAT32, &p);
    else
        st = amp__alg_basic_wide(q->acc, t, map, -1, r, r, &p);
    if (st != AMP_OK) return st;
    const void *init = amp__alg_init_for(p, r, o ? o->init : NULL, &widened);
    amp_arg in[4] = {amp__alg_span(&d[0], false), amp__alg_shape_arg(&d[0])};
    size_t nin = 2;
    if (two) {
        in[2] = amp__alg_span(&d[1], false);
        in[3] = amp__alg_shape_arg(&d[1]);
        nin = 4;
    }
    if (host) return amp__alg_reduce_host(q, p, in, nin, d[0].shape.n, op, init, host);
    amp__alg_run run;
    if ((st = amp__alg_run_begin(&run, q, true, out != NULL)) != AMP_OK) return st;
    st = amp__alg_reduce_into(&run, p, in, nin, d[0].shape.n, op, init, amp__alg_span(&d[2], true));
    return amp__alg_run_end(&run, st, out);
}

amp_status amp_reduce(amp_accelerator_view *q, amp_arg in, amp_type t, amp_op op, void *result)
{
    AMP__NOT_NULL(result);
    return amp__alg_transform_reduce(__func__, "in", q, in, in, t, AMP_MAP_IDENTITY, op, NULL, result, NULL, NULL);
}

amp_status amp_reduce_async(amp_accelerator_view *q, amp_arg in, amp_type t, amp_op op, amp_arg result,
                            amp_future **out)
{
    return amp__alg_transform_reduce(__func__, "in", q, in, in, t, AMP_MAP_IDENTITY, op, NULL, NULL, &result, out);
}

amp_status amp_reduce_with(amp_accelerator_view *q, amp_arg in, amp_type t, amp_op op, const amp_alg_options *o,
                           void *result)
{
    AMP__NOT_NULL(result);
    return amp__alg_transform_reduce(__func__, "in", q, in, in, t, AMP_MAP_IDENTITY, op, o, result, NULL, NULL);
}

amp_status amp_reduce_with_async(amp_accelerator_view *q, amp_arg in, amp_type t, amp_op op,
                                 const amp_alg_options *o, amp_arg result, amp_future **out)
{
    return amp__alg_transform_reduce(__func__, "in", q, in, in, t, AMP_MAP_IDENTITY, op, o, NULL, &result, out);
}

amp_status amp_transform_reduce(amp_accelerator_view *q, amp_arg x, amp_arg y, amp_type t, amp_map map, amp_op op,
                                void *result)
{
    AMP__NOT_NULL(result);
    return amp__alg_transform_reduce(__func__, "x", q, x, y, t, map, op, NULL, result, NULL, NULL);
}

amp_status amp_transform_reduce_async(amp_accelerator_view *q, amp_arg x, amp_arg y, amp_type t, amp_map map,
                                      amp_op op, amp_arg result, amp_future **out)
{
    return amp__alg_transform_reduce(__func__, "x", q, x, y, t, map, op, NULL, NULL, &result, out);
}

amp_status amp_transform_reduce_with(amp_accelerator_view *q, amp_arg x, amp_arg y, amp_type t, amp_map map,
                                     amp_op op, const amp_alg_options *o, void *result)
{
    AMP__NOT_NULL(result);
    return amp__alg_transform_reduce(__func__, "x", q, x, y, t, map, op, o, result, NULL, NULL);
}

amp_status amp_transform_reduce_with_async(amp_accelerator_view *q, amp_arg x, amp_arg y, amp_type t, amp_map map,
                                           amp_op op, const amp_alg_options *o, amp_arg result, amp_future **out)
{
    return amp__alg_transform_reduce(__func__, "x", q, x, y, t, map, op, o, NULL, &result, out);
}

/* ------------------------------------------------ user-defined reductions */

struct amp_reduction {
    amp__handle h;           /* AMP__HANDLE_REDUCTION */
    amp_accelerator *acc;
    amp__alg_user u;         /* its strings point into the copies below */
    char label[64];
    char *map, *reduce, *identity, *post, *preamble;
    amp__alg_prog prog;      /* reduce kernels */
    pthread_mutex_t lock;    /* guards scan (a leaf) */
    amp__alg_prog scan;      /* built at the first amp_reduction_scan */
};

/* The amp_type of a parameter's type as written ("float", "unsigned int",
 * "int64_t", ...), 0 when none. */
static amp_type amp__alg_type_named(const char *s)
{
    static const struct {
        const char *name;
        amp_type t;
    } names[] = {
        {"int", AMP_TYPE_INT32},
        {"int32_t", AMP_TYPE_INT32},
        {"signed", AMP_TYPE_INT32},
        {"signed int", AMP_TYPE_INT32},
        {"unsigned", AMP_TYPE_UINT32},
        {"unsigned int", AMP_TYPE_UINT32},
        {"uint32_t", AMP_TYPE_UINT32},
        {"long long", AMP_TYPE_INT64},
        {"long long int", AMP_TYPE_INT64},
        {"int64_t", AMP_TYPE_INT64},
        {"unsigned long long", AMP_TYPE_UINT64},
        {"unsigned long long int", AMP_TYPE_UINT64},
        {"uint64_t", AMP_TYPE_UINT64},
        {"float", AMP_TYPE_FLOAT32},
        {"double", AMP_TYPE_FLOAT64},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i)
        if (!strcmp(s, names[i].name)) return names[i].t;
    return (amp_type)0;
}

static bool amp__alg_ident(const char *s, size_t n)
{
    if (n == 0 || n > 63 || !(isalpha((unsigned char)s[0]) || s[0] == '_')) return false;
    for (size_t i = 1; i < n; ++i)
        if (!(isalnum((unsigned char)s[i]) || s[i] == '_')) return false;
    return true;
}

/* Parse "type name, type name" into types and names (at most max); what
 * names the list in messages. */
static amp_status amp__alg_params(const char *what, const char *list, int max, amp_type *types, char (*names)[64],
                                  int *count)
{
    *count = 0;
    const char *p = list;
    while (p && *p) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        /* Words of the entry, spaces collapsed; "const" dropped. */
        char words[8][64];
        int nw = 0;
        for (size_t i = 0; i < len;) {
            while (i < len && isspace((unsigned char)p[i])) ++i;
            size_t j = i;
            while (j < len && !isspace((unsigned char)p[j])) ++j;
            if (j > i) {
                if (nw == 8 || j - i >= 64)
                    return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_reduction_create: %s: \"%.*s\" is not "
                                     "\"type name\"", what, (int)len, p);
                memcpy(words[nw], p + i, j - i);
                words[nw][j - i] = '\0';
                if (strcmp(words[nw], "const")) ++nw;
            }
            i = j;
        }
        if (nw < 2)
            return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_reduction_create: %s: \"%.*s\" is not \"type name\"",
                             what, (int)len, p);
        char type[192] = "";
        for (int w = 0; w < nw - 1; ++w) {
            if (w) strcat(type, " ");
            strcat(type, words[w]);
        }
        const char *name = words[nw - 1];
        amp_type t = amp__alg_type_named(type);
        if (!t)
            return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_reduction_create: %s: type \"%s\" of '%s' is not one "
                             "of int32_t, uint32_t, int64_t, uint64_t, float, double", what, type, name);
        if (!amp__alg_ident(name, strlen(name)) || !strcmp(name, "i") || !strcmp(name, "a") || !strcmp(name, "b") ||
            !strncmp(name, "amp__", 5))
            return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_reduction_create: %s: '%s' cannot name a parameter (an "
                             "identifier other than i, a, b and amp__...)", what, name);
        if (*count == max)
            return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_reduction_create: %s: more than %d parameters", what,
                             max);
        types[*count] = t;
        snprintf(names[*count], 64, "%.63s", name);
        ++*count;
        p = end ? end + 1 : NULL;
    }
    return AMP_OK;
}

/* Release what r holds and give its shell back (a failed create's, or one
 * its destroy ended). */
static void amp__alg_reduction_free(amp_reduction *r)
{
    if (!r) return;
    amp__alg_prog_release(&r->prog);
    amp__alg_prog_release(&r->scan);
    pthread_mutex_destroy(&r->lock);
    free(r->map);
    free(r->reduce);
    free(r->identity);
    free(r->post);
    free(r->preamble);
    amp__handle_free(r, AMP__HANDLE_REDUCTION);
}

amp_status amp_reduction_create(amp_accelerator *a, const amp_reduction_desc *d, amp_reduction **out)
{
    amp_status st = AMP_OK;
    amp_reduction *r = NULL;
    AMP__NOT_NULL(out);
    *out = NULL;
    AMP__NOT_NULL(d);
    static const char *const fields[] = {"inputs", "map", "reduce", "identity"};
    const char *const given[] = {d->inputs, d->map, d->reduce, d->identity};
    for (int i = 0; i < 4; ++i)
        if (!given[i] || !*given[i])
            return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_reduction_create: %s is %s", fields[i],
                             given[i] ? "empty" : "NULL");
    if ((st = amp__alg_type_ok("amp_reduction_create", d->type)) != AMP_OK) return st;
    const char *name = d->name ? d->name : "reduction";
    if (!amp__alg_ident(name, strlen(name)))
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_reduction_create: name \"%.80s\" is not letters, digits and "
                         "'_' (at most 63)", name);
    if (!a && (st = amp_accelerator_default(&a)) != AMP_OK) return st;
    if (!(r = amp__handle_new(AMP__HANDLE_REDUCTION, sizeof *r)))
        return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "amp_reduction_create: out of host memory");
    pthread_mutex_init(&r->lock, NULL);
    r->acc = a;
    snprintf(r->label, sizeof r->label, "%s", name);
    amp__alg_user *u = &r->u;
    if ((st = amp__alg_params("inputs", d->inputs, AMP__ALG_MAX_PARAMS, u->in_type, u->in_name, &u->ninputs)) !=
        AMP_OK)
        goto fail;
    if (u->ninputs == 0) {
        st = amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_reduction_create: inputs lists no parameter");
        goto fail;
    }
    if (d->scalars &&
        (st = amp__alg_params("scalars", d->scalars, AMP__ALG_MAX_PARAMS, u->sc_type, u->sc_name, &u->nscalars)) !=
            AMP_OK)
        goto fail;
    for (int i = 0; i < u->ninputs + u->nscalars; ++i)
        for (int j = 0; j < i; ++j) {
            const char *x = i < u->ninputs ? u->in_name[i] : u->sc_name[i - u->ninputs];
            const char *y = j < u->ninputs ? u->in_name[j] : u->sc_name[j - u->ninputs];
            if (!strcmp(x, y)) {
                st = amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_reduction_create: '%s' names two parameters", x);
                goto fail;
            }
        }
    r->map = amp__strdup(d->map);
    r->reduce = amp__strdup(d->reduce);
    r->identity = amp__strdup(d->identity);
    r->post = d->post ? amp__strdup(d->post) : NULL;
    r->preamble = d->preamble ? amp__strdup(d->preamble) : NULL;
    if (!r->map || !r->reduce || !r->identity || (d->post && !r->post) || (d->preamble && !r->preamble)) {
        st = amp__fail(AMP_ERROR_OUT_OF_MEMORY, "amp_reduction_create: out of host memory");
        goto fail;
    }
    u->label = r->label;
    u->type = d->type;
    u->map = r->map;
    u->reduce = r->reduce;
    u->identity = r->identity;
    u->post = r->post;
    u->preamble = r->preamble;
    if ((st = amp__alg_build_user(a, u, false, &r->prog)) != AMP_OK) goto fail;
    *out = r;
    return AMP_OK;
fail:
    amp__alg_reduction_free(r);
    return st;
}

amp_status amp_reduction_destroy(amp_reduction *r)
{
    if (!r) return AMP_OK;
    AMP__HANDLE_OK(r, AMP__HANDLE_REDUCTION);
    pthread_mutex_lock(&r->lock);
    int graphs = amp__alg_prog_graphs(&r->prog) + amp__alg_prog_graphs(&r->scan);
    pthread_mutex_unlock(&r->lock);
    if (graphs)
        return amp__fail(AMP_ERROR_BUSY, "amp_reduction_destroy: launch graphs launch the kernels of reduction '%s' "
                         "(%d binding(s)): destroy them first", r->label, graphs);
    amp_status st = amp__handle_end(r, AMP__HANDLE_REDUCTION, __func__, "r");
    if (st != AMP_OK) return st;
    amp__alg_reduction_free(r);
    return AMP_OK;
}

/* Check args against r's parameters (ninputs_used of its inputs: scans use
 * its one input) and resolve the inputs into d; the kernel's input
 * parameters into in (each input's span and shape, then the scalars). */
static amp_status amp__alg_user_args(const char *fn, amp_reduction *r, const amp_arg *args, size_t nargs,
                                     amp__alg_data *d, amp_arg *in, size_t *nin)
{
    static const amp_arg_kind kinds[] = {0, AMP_ARG_INT32, AMP_ARG_UINT32, AMP_ARG_INT64, AMP_ARG_UINT64,
                                         AMP_ARG_FLOAT32, AMP_ARG_FLOAT64};
    const amp__alg_user *u = &r->u;
    amp_status st;
    size_t want = (size_t)(u->ninputs + u->nscalars);
    if (!args && nargs) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: args is NULL, nargs %zu", fn, nargs);
    if (nargs != want)
        return amp__fail(AMP_ERROR_ARGUMENT_MISMATCH, "%s: reduction '%s' takes %d inputs and %d scalars (%zu "
                         "arguments); %zu given", fn, r->label, u->ninputs, u->nscalars, want, nargs);
    size_t k = 0;
    for (int i = 0; i < u->ninputs; ++i) {
        char what[96];
        snprintf(what, sizeof what, "input %d ('%s')", i, u->in_name[i]);
        if (args[i].kind != AMP_ARG_VIEW && args[i].kind != AMP_ARG_ARRAY)
            return amp__fail(AMP_ERROR_ARGUMENT_MISMATCH, "%s: %s of reduction '%s' must be a view or an array, not "
                             "%s", fn, what, r->label, args[i].kind ? amp__kind_name(args[i].kind) : "empty");
        st = amp__alg_resolve(fn, what, args[i], amp_type_size(u->in_type[i]), amp_type_name(u->in_type[i]), &d[i]);
        if (st == AMP_ERROR_INVALID_ARGUMENT && d[i].s) st = AMP_ERROR_ARGUMENT_MISMATCH; /* the element size */
        if (st != AMP_OK) return st;
        if (d[i].shape.n != d[0].shape.n)
            return amp__fail(AMP_ERROR_INVALID_EXTENT, "%s: input 0 ('%s') holds %lld elements and %s %lld", fn,
                             u->in_name[0], (long long)d[0].shape.n, what, (long long)d[i].shape.n);
        in[k++] = amp__alg_span(&d[i], false);
        in[k++] = amp__alg_shape_arg(&d[i]);
    }
    for (int i = 0; i < u->nscalars; ++i) {
        const amp_arg *x = &args[u->ninputs + i];
        if (x->kind != kinds[u->sc_type[i]])
            return amp__fail(AMP_ERROR_ARGUMENT_MISMATCH, "%s: scalar '%s' of reduction '%s' is %s; argument is %s",
                             fn, u->sc_name[i], r->label, amp__kind_name(kinds[u->sc_type[i]]),
                             x->kind ? amp__kind_name(x->kind) : "empty");
        in[k++] = *x;
    }
    *nin = k;
    return AMP_OK;
}

static amp_status amp__alg_user_apply(const char *fn, amp_accelerator_view *q, amp_reduction *r, const amp_arg *args,
                                      size_t nargs, void *host, const amp_arg *result, amp_future **out)
{
    amp__alg_data d[AMP__ALG_MAX_PARAMS + 1];
    amp_arg in[2 * AMP__ALG_MAX_PARAMS + AMP__ALG_MAX_PARAMS];
    size_t nin = 0;
    amp_status st;
    if (out) *out = NULL;
    if (q && (st = amp__handle_check(q, AMP__HANDLE_QUEUE, fn, "q")) != AMP_OK) return st;
    if ((st = amp__handle_check(r, AMP__HANDLE_REDUCTION, fn, "r")) != AMP_OK) return st;
    size_t rsize = amp_type_size(r->u.type);
    if ((st = amp__alg_user_args(fn, r, args, nargs, d, in, &nin)) != AMP_OK) return st;
    amp__alg_data *res = &d[r->u.ninputs];
    if (result && (st = amp__alg_result(fn, *result, rsize, amp_type_name(r->u.type), res)) != AMP_OK) return st;
    for (int i = 0; result && i < r->u.ninputs; ++i) {
        char what[96];
        snprintf(what, sizeof what, "input %d ('%s')", i, r->u.in_name[i]);
        if ((st = amp__alg_apart(fn, "result", res, what, &d[i])) != AMP_OK) return st;
    }
    if (!q && (st = amp__accelerator_queue(r->acc, &q)) != AMP_OK) return st;
    if (host && (st = amp__alg_not_recording(fn, q, true)) != AMP_OK) return st;
    if (q->acc != r->acc)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: reduction '%s' was built for %s; the accelerator view is on "
                         "%s", fn, r->label, r->acc->e.info.device_path, q->acc->e.info.device_path);
    if (host) return amp__alg_reduce_host(q, &r->prog, in, nin, d[0].shape.n, AMP__ALG_OP_USER, NULL, host);
    amp__alg_run run;
    if ((st = amp__alg_run_begin(&run, q, true, out != NULL)) != AMP_OK) return st;
    st = amp__alg_reduce_into(&run, &r->prog, in, nin, d[0].shape.n, AMP__ALG_OP_USER, NULL, amp__alg_span(res, true));
    return amp__alg_run_end(&run, st, out);
}

amp_status amp_reduction_apply(amp_accelerator_view *q, amp_reduction *r, const amp_arg *args, size_t nargs,
                               void *result)
{
    AMP__NOT_NULL(result);
    return amp__alg_user_apply(__func__, q, r, args, nargs, result, NULL, NULL);
}

amp_status amp_reduction_apply_async(amp_accelerator_view *q, amp_reduction *r, const amp_arg *args, size_t nargs,
                                     amp_arg result, amp_future **out)
{
    return amp__alg_user_apply(__func__, q, r, args, nargs, NULL, &result, out);
}

/* Used by lib/alg_scan.c: r's scan program (built at the first call) and
 * its checked arguments. */
amp_status amp__alg_user_scan_prepare(amp_accelerator_view **q, amp_reduction *r, const amp_arg *args, size_t nargs,
                                      amp__alg_data *d, amp_arg *in, size_t *nin, const amp__alg_prog **p,
                                      amp_type *type)
{
    const char *fn = "amp_reduction_scan";
    amp_status st;
    if (*q && (st = amp__handle_check(*q, AMP__HANDLE_QUEUE, fn, "q")) != AMP_OK) return st;
    if ((st = amp__handle_check(r, AMP__HANDLE_REDUCTION, fn, "r")) != AMP_OK) return st;
    if (r->u.ninputs != 1)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: reduction '%s' has %d inputs; a scan takes one", fn,
                         r->label, r->u.ninputs);
    if ((st = amp__alg_user_args(fn, r, args, nargs, d, in, nin)) != AMP_OK) return st;
    if (!*q && (st = amp__accelerator_queue(r->acc, q)) != AMP_OK) return st;
    if ((*q)->acc != r->acc)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: reduction '%s' was built for %s; the accelerator view is on "
                         "%s", fn, r->label, r->acc->e.info.device_path, (*q)->acc->e.info.device_path);
    pthread_mutex_lock(&r->lock);
    if (!r->scan.p) st = amp__alg_build_user(r->acc, &r->u, true, &r->scan);
    pthread_mutex_unlock(&r->lock);
    if (st != AMP_OK) return st;
    *p = &r->scan;
    *type = r->u.type;
    return AMP_OK;
}
