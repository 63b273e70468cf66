/* alg/scan.c — prefix scans (amp_scan with the built-in operators,
 * amp_reduction_scan with a user's expressions): one single-pass kernel
 * (chained scan with decoupled look-back) after a launch that zeroes its
 * tile states, so the data is read once and written once. */
#include "alg.h"

/* Queue the scan of p over n elements (in[0..nin): the kernel's input
 * parameters) into out with operator op, starting from init (a value of
 * p's accumulator; NULL: the identity). overwrite: out is not the input
 * (nothing of it needs copying in). */
static amp_status amp__alg_scan_run(amp_accelerator_view *q, const amp__alg_prog *p, const amp_arg *in, size_t nin,
                                    const amp__alg_data *out, bool overwrite, int64_t n, int op, bool excl,
                                    const void *init)
{
    enum { MAXA = 3 * AMP__ALG_MAX_PARAMS + 14 };
    const size_t rsize = p->rsize;
    amp_arg a[MAXA];
    amp__alg_scratch *state = NULL, *aggs = NULL, *incls = NULL;
    amp__alg_run run;
    amp_status st;
    if (n == 0) return AMP_OK;
    int64_t chunk = (int64_t)p->tile * p->scan_items;
    int64_t ntiles = (n + chunk - 1) / chunk;
    amp__alg_run_begin(&run, q, false, false);
    if ((st = amp__alg_scratch_take(q, 8, ntiles + 1, &state)) != AMP_OK ||
        (st = amp__alg_scratch_take(q, rsize, ntiles, &aggs)) != AMP_OK ||
        (st = amp__alg_scratch_take(q, rsize, ntiles, &incls)) != AMP_OK)
        goto out;
    /* The tiles' states and the tile counter (state[ntiles]) start at 0. */
    int64_t ctiles = (ntiles + 1 + p->tile - 1) / p->tile;
    if (ctiles > p->reduce_tiles) ctiles = p->reduce_tiles;
    size_t k = 0;
    for (size_t i = 0; i < nin; ++i) a[k++] = in[i];
    a[k++] = amp__alg_span(out, overwrite);
    a[k++] = amp__alg_shape_arg(out);
    a[k++] = amp__alg_scratch_arg(state);
    a[k++] = amp__alg_scratch_arg(aggs);
    a[k++] = amp__alg_scratch_arg(incls);
    a[k++] = amp_arg_int64(n);
    a[k++] = amp_arg_int64(ntiles);
    a[k++] = amp_arg_int32(op);
    a[k++] = amp_arg_int32(excl | (init ? 2 : 0)); /* flags: exclusive, from init */
    a[k++] = amp__alg_value_arg(p->rtype, init);
    if ((st = amp__alg_run_fits(&run, a, k, NULL, 0)) != AMP_OK) goto out;
    amp_arg c[] = {amp__alg_scratch_arg(state), amp_arg_int64(ntiles + 1), amp_arg_int64(ctiles * p->tile)};
    if ((st = amp__alg_launch(&run, p, AMP__ALG_K_CLEAR, ctiles, c, 3)) != AMP_OK) goto out;
    st = amp__alg_launch(&run, p, AMP__ALG_K_SCAN, ntiles, a, k);
out:
    amp__alg_run_end(&run, st, NULL);
    amp__alg_scratch_give(state);
    amp__alg_scratch_give(aggs);
    amp__alg_scratch_give(incls);
    return st;
}

/* out against in: same count, writable, the same elements or none shared. */
static amp_status amp__alg_scan_out(const char *fn, const amp__alg_data *in, const amp__alg_data *out, bool *same)
{
    amp_status st = amp__alg_writable(fn, "out", out);
    if (st != AMP_OK) return st;
    if (out->shape.n != in->shape.n)
        return amp__fail(AMP_ERROR_INVALID_EXTENT, "%s: in holds %lld elements and out %lld", fn,
                         (long long)in->shape.n, (long long)out->shape.n);
    /* Parts of one view or array may be the same elements (in place);
     * anything else that shares memory is refused as for every call. */
    if (amp__alg_overlap(in, out, same) && !*same)
        return in->s == out->s ? amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: in and out overlap without being the "
                                           "same elements (scan in place with out = in)", fn)
                               : amp__alg_apart(fn, "out", out, "in", in);
    return AMP_OK;
}

static amp_status amp__alg_scan_kind_ok(const char *fn, amp_scan_kind kind)
{
    if (kind != AMP_SCAN_INCLUSIVE && kind != AMP_SCAN_EXCLUSIVE)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: kind %d is not an amp_scan_kind", fn, (int)kind);
    return AMP_OK;
}

/* amp_scan and amp_scan_with (o may be NULL). */
static amp_status amp__alg_scan(const char *fn, amp_accelerator_view *q, amp_arg in, amp_arg out, amp_type t,
                                amp_op op, amp_scan_kind kind, const amp_alg_options *o)
{
    amp__alg_data d[2];
    const amp__alg_prog *p = NULL;
    bool same = false;
    amp_type r = t;
    double widened;
    amp_status st;
    if (q && (st = amp__handle_check(q, AMP__HANDLE_QUEUE, fn, "q")) != AMP_OK) return st;
    if ((st = amp__alg_op_ok(fn, t, op)) != AMP_OK || (st = amp__alg_scan_kind_ok(fn, kind)) != AMP_OK ||
        (st = amp__alg_accumulate(fn, t, o, &r)) != AMP_OK)
        return st;
    if ((st = amp__alg_resolve(fn, "in", in, amp_type_size(t), amp_type_name(t), &d[0])) != AMP_OK ||
        (st = amp__alg_resolve(fn, "out", out, amp_type_size(r), amp_type_name(r), &d[1])) != AMP_OK ||
        (st = amp__alg_scan_out(fn, &d[0], &d[1], &same)) != AMP_OK)
        return st;
    if ((st = amp__alg_queue(q, d, 2, NULL, &q)) != AMP_OK) return st;
    /* float32 products accumulate in float64, as amp_reduce's
     * (lib/alg/reduce.c says why). */
    if (r == AMP_TYPE_FLOAT32 && op == AMP_OP_PRODUCT)
        st = amp__alg_scanner_wide(q->acc, t, op, AMP_TYPE_FLOAT64, AMP_TYPE_FLOAT32, &p);
    else
        st = amp__alg_scanner_wide(q->acc, t, op, r, r, &p);
    if (st != AMP_OK) return st;
    const void *init = amp__alg_init_for(p, r, o ? o->init : NULL, &widened);
    amp_arg ia[] = {amp__alg_span(&d[0], false), amp__alg_shape_arg(&d[0])};
    return amp__alg_scan_run(q, p, ia, 2, &d[1], !same, d[0].shape.n, op, kind == AMP_SCAN_EXCLUSIVE, init);
}

amp_status amp_scan(amp_accelerator_view *q, amp_arg in, amp_arg out, amp_type t, amp_op op, amp_scan_kind kind)
{
    return amp__alg_scan(__func__, q, in, out, t, op, kind, NULL);
}

amp_status amp_scan_with(amp_accelerator_view *q, amp_arg in, amp_arg out, amp_type t, amp_op op,
                         amp_scan_kind kind, const amp_alg_options *o)
{
    return amp__alg_scan(__func__, q, in, out, t, op, kind, o);
}

amp_status amp_reduction_scan(amp_accelerator_view *q, amp_reduction *r, const amp_arg *args, size_t nargs,
                              amp_arg out, amp_scan_kind kind)
{
    const char *fn = __func__;
    amp__alg_data d[AMP__ALG_MAX_PARAMS + 1], o;
    amp_arg in[2 + AMP__ALG_MAX_PARAMS];
    size_t nin = 0;
    const amp__alg_prog *p = NULL;
    amp_type t, tin;
    bool same = false;
    amp_status st;
    if ((st = amp__alg_scan_kind_ok(fn, kind)) != AMP_OK) return st;
    if ((st = amp__alg_user_scan_prepare(&q, r, args, nargs, d, in, &nin, &t, &tin)) != AMP_OK) return st;
    if ((st = amp__alg_resolve(fn, "out", out, amp_type_size(t), amp_type_name(t), &o)) != AMP_OK ||
        (st = amp__alg_scan_out(fn, &d[0], &o, &same)) != AMP_OK)
        return st;
    /* By type, not size: an int32 input scanned in place into float32
     * results would leave float bits in memory the caller reads as int32
     * (amp_scan_with refuses a wider out in place alike). */
    if (same && tin != t)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: in place needs in and out of one type; the "
                         "reduction's input is %s and its results %s (scan into another view or array)", fn,
                         amp_type_name(tin), amp_type_name(t));
    if ((st = amp__alg_user_scan_program(r, fn, &p)) != AMP_OK) return st;
    return amp__alg_scan_run(q, p, in, nin, &o, !same, d[0].shape.n, AMP__ALG_OP_USER, kind == AMP_SCAN_EXCLUSIVE,
                             NULL);
}
