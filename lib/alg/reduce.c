/* alg/reduce.c — reductions: amp_reduce and amp_transform_reduce with the
 * built-in operators and maps, each to the host or (the _async forms)
 * into a one-element array or view on the device (the reduction runner
 * here serves the user-defined reductions of alg/user.c too). A reduction is one
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
    if ((st = amp__alg_run_fits(run, a, k, &res, 1)) != AMP_OK ||
        (st = amp__alg_launch(run, p, AMP__ALG_K_REDUCE, ntiles, a, k)) != AMP_OK)
        goto out;
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

amp_status amp__alg_result(const char *fn, amp_arg result, size_t rsize, const char *tname, amp__alg_data *d)
{
    amp_status st = amp__alg_resolve(fn, "result", result, rsize, tname, d);
    if (st != AMP_OK) return st;
    if (d->shape.n != 1)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: result must hold exactly one element; it holds %lld", fn,
                         (long long)d->shape.n);
    return amp__alg_writable(fn, "result", d);
}

/* t's wider accumulation type (t where it has none). */
static amp_type amp__alg_wider(amp_type t)
{
    return t == AMP_TYPE_INT32 ? AMP_TYPE_INT64 : t == AMP_TYPE_UINT32 ? AMP_TYPE_UINT64
         : t == AMP_TYPE_FLOAT32 ? AMP_TYPE_FLOAT64 : t;
}

amp_status amp__alg_accumulate(const char *fn, amp_type t, const amp_alg_options *o, amp_type *r)
{
    *r = t;
    if (!o || !o->accumulate || o->accumulate == t) return AMP_OK;
    amp_type wide = amp__alg_wider(t);
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
static amp_status amp__alg_transform_reduce_run(const char *fn, const char *xname, amp_accelerator_view *q, amp_arg x,
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
        (host && (st = amp__alg_not_recording(fn, q, true)) != AMP_OK) ||
        (host && (st = amp__alg_data_not_recorded(fn, xname, &d[0])) != AMP_OK) ||
        (host && two && (st = amp__alg_data_not_recorded(fn, "y", &d[1])) != AMP_OK))
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

/* amp__alg_transform_reduce_run; on failure a host result is zeroed
 * (hipamp.h's out-parameters), as many bytes as the result's type has: the
 * accumulation type o asks for where it is t's wider one, else t's (none
 * where t names no type: its size is unknown). Not before the call: the
 * result may be host memory a view of the input reads. */
static amp_status amp__alg_transform_reduce(const char *fn, const char *xname, amp_accelerator_view *q, amp_arg x,
                                            amp_arg y, amp_type t, amp_map map, amp_op op,
                                            const amp_alg_options *o, void *host, const amp_arg *result,
                                            amp_future **out)
{
    amp_status st = amp__alg_transform_reduce_run(fn, xname, q, x, y, t, map, op, o, host, result, out);
    if (st != AMP_OK && host) {
        amp_type r = o && o->accumulate && o->accumulate == amp__alg_wider(t) ? o->accumulate : t;
        memset(host, 0, amp_type_size(r));
    }
    return st;
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
