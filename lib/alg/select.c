/* alg/select.c — amp_count_if (a reduction of the predicate's 0 or 1) and
 * amp_copy_if (stream compaction: one single-pass kernel that counts the
 * selected elements per tile, finds the tile's place by decoupled look-back
 * and writes its elements there; the total comes back to the host). */
#include "alg.h"

static amp_status amp__alg_pred_setup(const char *fn, amp_accelerator_view **q, amp_arg in, amp_type t,
                                      const char *predicate, int part, amp__alg_data *d, const amp__alg_prog **p)
{
    amp_status st;
    if (!predicate) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: predicate is NULL", fn);
    if (*q && (st = amp__handle_check(*q, AMP__HANDLE_QUEUE, fn, "q")) != AMP_OK) return st;
    if ((st = amp__alg_type_ok(fn, t)) != AMP_OK) return st;
    if (!*predicate) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: predicate is empty", fn);
    if ((st = amp__alg_resolve(fn, "in", in, amp_type_size(t), amp_type_name(t), d)) != AMP_OK) return st;
    if ((st = amp__alg_queue(*q, d, 1, NULL, q)) != AMP_OK || (st = amp__alg_not_recording(fn, *q, false)) != AMP_OK ||
        (st = amp__alg_data_not_recorded(fn, "in", d)) != AMP_OK)
        return st;
    return amp__alg_predicate(fn, (*q)->acc, t, predicate, part, p);
}

amp_status amp_count_if(amp_accelerator_view *q, amp_arg in, amp_type t, const char *predicate, const void *arg,
                        uint64_t *count)
{
    amp__alg_data d;
    const amp__alg_prog *p = NULL;
    AMP__CLEAR_OUT(count);
    AMP__NOT_NULL(count);
    amp_status st = amp__alg_pred_setup(__func__, &q, in, t, predicate, AMP__ALG_PRED_COUNT, &d, &p);
    if (st != AMP_OK) return st;
    amp_arg ia[] = {amp__alg_span(&d, false), amp__alg_shape_arg(&d), amp__alg_value_arg(t, arg)};
    uint64_t c = 0;
    if ((st = amp__alg_reduce_to_host(q, p, ia, 3, d.shape.n, AMP_OP_SUM, 8, &c)) != AMP_OK) return st;
    *count = c;
    return AMP_OK;
}

amp_status amp_copy_if(amp_accelerator_view *q, amp_arg in, amp_arg out, amp_type t, const char *predicate,
                       const void *arg, uint64_t *count)
{
    const char *fn = __func__;
    amp__alg_data d[2];
    const amp__alg_prog *p = NULL;
    amp__alg_scratch *state = NULL, *aggs = NULL, *incls = NULL, *total = NULL;
    amp__alg_run run;
    AMP__CLEAR_OUT(count);
    AMP__NOT_NULL(count);
    amp_status st;
    if (q) AMP__HANDLE_OK(q, AMP__HANDLE_QUEUE);
    if ((st = amp__alg_type_ok(fn, t)) != AMP_OK ||
        (st = amp__alg_resolve(fn, "out", out, amp_type_size(t), amp_type_name(t), &d[1])) != AMP_OK ||
        (st = amp__alg_writable(fn, "out", &d[1])) != AMP_OK)
        return st;
    if ((st = amp__alg_pred_setup(fn, &q, in, t, predicate, AMP__ALG_PRED_SELECT, &d[0], &p)) != AMP_OK) return st;
    if ((st = amp__alg_apart(fn, "in", &d[0], "out", &d[1])) != AMP_OK ||
        (st = amp__alg_data_not_recorded(fn, "out", &d[1])) != AMP_OK)
        return st;
    int64_t n = d[0].shape.n;
    if (n == 0) return AMP_OK;
    int64_t chunk = (int64_t)p->tile * p->scan_items;
    int64_t ntiles = (n + chunk - 1) / chunk;
    uint64_t c = 0;
    amp__alg_run_begin(&run, q, false, false);
    if ((st = amp__alg_scratch_take(q, 8, ntiles + 1, &state)) != AMP_OK ||
        (st = amp__alg_scratch_take(q, 8, ntiles, &aggs)) != AMP_OK ||
        (st = amp__alg_scratch_take(q, 8, ntiles, &incls)) != AMP_OK ||
        (st = amp__alg_scratch_take(q, 8, 1, &total)) != AMP_OK)
        goto out;
    int64_t ctiles = (ntiles + 1 + p->tile - 1) / p->tile;
    if (ctiles > p->reduce_tiles) ctiles = p->reduce_tiles;
    amp_arg a[] = {amp__alg_span(&d[0], false),
                   amp__alg_shape_arg(&d[0]),
                   amp__alg_value_arg(t, arg),
                   amp__alg_span(&d[1], false),
                   amp__alg_shape_arg(&d[1]),
                   amp__alg_scratch_arg(state),
                   amp__alg_scratch_arg(aggs),
                   amp__alg_scratch_arg(incls),
                   amp__alg_scratch_arg(total),
                   amp_arg_int64(n),
                   amp_arg_int64(ntiles),
                   amp_arg_int64(d[1].shape.n)};
    if ((st = amp__alg_run_fits(&run, a, sizeof a / sizeof a[0], NULL, 0)) != AMP_OK) goto out;
    amp_arg z[] = {amp__alg_scratch_arg(state), amp_arg_int64(ntiles + 1), amp_arg_int64(ctiles * p->tile)};
    if ((st = amp__alg_launch(&run, p, AMP__ALG_K_CLEAR, ctiles, z, 3)) != AMP_OK) goto out;
    if ((st = amp__alg_launch(&run, p, AMP__ALG_K_SELECT, ntiles, a, sizeof a / sizeof a[0])) != AMP_OK) goto out;
    st = amp_array_copy_to_host(amp__alg_scratch_array(total), &c);
out:
    amp__alg_run_end(&run, st, NULL);
    amp__alg_scratch_give(state);
    amp__alg_scratch_give(aggs);
    amp__alg_scratch_give(incls);
    amp__alg_scratch_give(total);
    if (st != AMP_OK) return st;
    if ((int64_t)c > d[1].shape.n)
        return amp__fail(AMP_ERROR_OUT_OF_BOUNDS, "%s: %llu elements pass the predicate; out holds %lld (it has the "
                         "first %lld of them)", fn, (unsigned long long)c, (long long)d[1].shape.n,
                         (long long)d[1].shape.n);
    *count = c;
    return AMP_OK;
}
