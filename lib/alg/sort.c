/* alg/sort.c — amp_sort and amp_sort_by_key: a least-significant-digit
 * radix sort (onesweep): one launch counts the digits of every pass, one
 * turns the counts into each digit's start, then one launch per pass moves
 * the keys (and values) stably by that pass's digit, each tile finding the
 * places of earlier tiles' keys by decoupled look-back. The first pass reads
 * the caller's data, the last writes it back; the passes between go through
 * two scratch buffers. */
#include "alg.h"

#include <string.h>

/* The layout of a contiguous scratch buffer of n elements. */
static void amp__alg_flat(amp__alg_data *d, amp__alg_scratch *s, int64_t n)
{
    memset(d, 0, sizeof *d);
    d->arg = amp__alg_scratch_arg(s);
    d->arg.kind = AMP_ARG_ARRAY;
    d->shape.n = n;
    d->shape.rank = 1;
    d->shape.ext[0] = n > 0x7fffffff ? 0x7fffffff : (int32_t)n;
    d->shape.stride[0] = 1;
    d->shape.contiguous = 1;
}

static amp_status amp__alg_sort(const char *fn, amp_accelerator_view *q, amp_arg keys, const amp_arg *values,
                                amp_type t, amp_order order)
{
    amp__alg_data d[2], buf[4];
    const amp__alg_prog *p = NULL;
    amp__alg_scratch *kb[2] = {NULL, NULL}, *vb[2] = {NULL, NULL}, *status = NULL, *hist = NULL, *start = NULL,
                     *counters = NULL;
    amp__alg_run run;
    amp_status st;
    if (q && (st = amp__handle_check(q, AMP__HANDLE_QUEUE, fn, "q")) != AMP_OK) return st;
    if ((st = amp__alg_type_ok(fn, t)) != AMP_OK) return st;
    if (order != AMP_ASCENDING && order != AMP_DESCENDING)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: order %d is not an amp_order", fn, (int)order);
    size_t ksize = amp_type_size(t), vsize = 0;
    if ((st = amp__alg_resolve(fn, "keys", keys, ksize, amp_type_name(t), &d[0])) != AMP_OK ||
        (st = amp__alg_writable(fn, "keys", &d[0])) != AMP_OK)
        return st;
    int64_t n = d[0].shape.n;
    if (values) {
        if ((st = amp__alg_resolve(fn, "values", *values, 0, NULL, &d[1])) != AMP_OK ||
            (st = amp__alg_writable(fn, "values", &d[1])) != AMP_OK)
            return st;
        vsize = d[1].elem;
        if (vsize != 1 && vsize != 2 && vsize != 4 && vsize != 8 && vsize != 16)
            return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: values have %zu-byte elements; the sort moves values of "
                             "1, 2, 4, 8 or 16 bytes", fn, vsize);
        if (d[1].shape.n != n)
            return amp__fail(AMP_ERROR_INVALID_EXTENT, "%s: keys hold %lld elements and values %lld", fn,
                             (long long)n, (long long)d[1].shape.n);
        if ((st = amp__alg_apart(fn, "keys", &d[0], "values", &d[1])) != AMP_OK) return st;
    }
    if ((st = amp__alg_queue(q, d, values ? 2 : 1, NULL, &q)) != AMP_OK) return st;
    if ((st = amp__alg_sorter(q->acc, t, vsize, &p)) != AMP_OK) return st;
    if (n <= 1) return AMP_OK;
    int bins = 1 << p->radix_bits;
    int64_t chunk = (int64_t)p->tile * p->sort_items;
    int64_t ntiles = (n + chunk - 1) / chunk;
    amp__alg_run_begin(&run, q, false, false);
    if ((st = amp__alg_scratch_take(q, ksize, n, &kb[0])) != AMP_OK ||
        (st = amp__alg_scratch_take(q, ksize, n, &kb[1])) != AMP_OK ||
        (values && (st = amp__alg_scratch_take(q, vsize, n, &vb[0])) != AMP_OK) ||
        (values && (st = amp__alg_scratch_take(q, vsize, n, &vb[1])) != AMP_OK) ||
        (st = amp__alg_scratch_take(q, 8, ntiles * bins, &status)) != AMP_OK ||
        (st = amp__alg_scratch_take(q, 8, (int64_t)p->passes * bins, &hist)) != AMP_OK ||
        (st = amp__alg_scratch_take(q, 8, (int64_t)p->passes * bins, &start)) != AMP_OK ||
        (st = amp__alg_scratch_take(q, 8, p->passes, &counters)) != AMP_OK ||
        /* Keys only: the kernel's value parameters get one byte. */
        (!values && (st = amp__alg_scratch_take(q, 1, 1, &vb[0])) != AMP_OK))
        goto out;
    /* Its keys and values, which every launch but the clears binds. */
    const amp_arg data[2] = {amp__alg_span(&d[0], false), values ? amp__alg_span(&d[1], false) : amp_arg_int32(0)};
    if ((st = amp__alg_run_fits(&run, data, values ? 2 : 1, NULL, 0)) != AMP_OK) goto out;
    for (int i = 0; i < 2; ++i) {
        amp__alg_flat(&buf[i], kb[i], n);
        amp__alg_flat(&buf[2 + i], vb[values ? i : 0], values ? n : 1);
    }
    /* Zero the look-back states, the histogram and the tile counters. */
    amp__alg_scratch *zero[] = {status, hist, counters};
    int64_t words[] = {ntiles * bins, (int64_t)p->passes * bins, p->passes};
    for (int i = 0; i < 3; ++i) {
        int64_t ct = (words[i] + p->tile - 1) / p->tile;
        if (ct > p->reduce_tiles) ct = p->reduce_tiles;
        amp_arg c[] = {amp__alg_scratch_arg(zero[i]), amp_arg_int64(words[i]), amp_arg_int64(ct * p->tile)};
        if ((st = amp__alg_launch(&run, p, AMP__ALG_K_CLEAR, ct, c, 3)) != AMP_OK) goto out;
    }
    /* Tile counters are 32-bit: a histogram tile counts fewer than 2^31 keys. */
    int64_t htiles = p->count_tiles, per = (n + htiles - 1) / htiles;
    if (per > (1ll << 31) - 1) per = (1ll << 31) - 1;
    htiles = (n + per - 1) / per;
    amp_arg h[] = {amp__alg_span(&d[0], false), amp__alg_shape_arg(&d[0]), amp__alg_scratch_arg(hist), amp_arg_int64(n),
                   amp_arg_int64(per), amp_arg_int32(order == AMP_DESCENDING)};
    if ((st = amp__alg_launch(&run, p, AMP__ALG_K_SORT_HIST, htiles, h, 6)) != AMP_OK) goto out;
    amp_arg o[] = {amp__alg_scratch_arg(hist), amp__alg_scratch_arg(start)};
    if ((st = amp__alg_launch(&run, p, AMP__ALG_K_SORT_OFFSETS, 1, o, 2)) != AMP_OK) goto out;
    for (int pass = 0; pass < p->passes; ++pass) {
        /* caller -> kb[0] -> kb[1] -> kb[0] ... -> caller */
        const amp__alg_data *ki = pass == 0 ? &d[0] : &buf[(pass - 1) % 2];
        const amp__alg_data *ko = pass == p->passes - 1 ? &d[0] : &buf[pass % 2];
        amp_arg a[16];
        size_t k = 0;
        a[k++] = amp__alg_span(ki, false);
        a[k++] = amp__alg_shape_arg(ki);
        a[k++] = amp__alg_span(ko, ko == &d[0]);
        a[k++] = amp__alg_shape_arg(ko);
        const amp__alg_data *vi = values && pass == 0 ? &d[1] : &buf[2 + (pass + 1) % 2];
        const amp__alg_data *vo = values && pass == p->passes - 1 ? &d[1] : &buf[2 + pass % 2];
        a[k++] = amp__alg_span(vi, false);
        a[k++] = amp__alg_shape_arg(vi);
        a[k++] = amp__alg_span(vo, vo == &d[1]);
        a[k++] = amp__alg_shape_arg(vo);
        a[k++] = amp__alg_scratch_arg(status);
        a[k++] = amp__alg_scratch_arg(start);
        a[k++] = amp__alg_scratch_arg(counters);
        a[k++] = amp_arg_int64(n);
        a[k++] = amp_arg_int32(pass);
        a[k++] = amp_arg_int32(order == AMP_DESCENDING);
        if ((st = amp__alg_launch(&run, p, AMP__ALG_K_SORT_PASS, ntiles, a, k)) != AMP_OK) goto out;
    }
out:
    amp__alg_run_end(&run, st, NULL);
    amp__alg_scratch_give(kb[0]);
    amp__alg_scratch_give(kb[1]);
    amp__alg_scratch_give(vb[0]);
    amp__alg_scratch_give(vb[1]);
    amp__alg_scratch_give(status);
    amp__alg_scratch_give(hist);
    amp__alg_scratch_give(start);
    amp__alg_scratch_give(counters);
    return st;
}

amp_status amp_sort(amp_accelerator_view *q, amp_arg keys, amp_type t, amp_order order)
{
    return amp__alg_sort(__func__, q, keys, NULL, t, order);
}

amp_status amp_sort_by_key(amp_accelerator_view *q, amp_arg keys, amp_arg values, amp_type t, amp_order order)
{
    return amp__alg_sort(__func__, q, keys, &values, t, order);
}
