/* alg/fill.c — amp_fill (any element size, as raw words) and amp_iota
 * (start + i * step of a type): one launch each, over the reduce geometry's
 * tiles, copying nothing in (every element is written). */
#include "alg.h"

#include <string.h>

amp_status amp_fill(amp_accelerator_view *q, amp_arg out, const void *value)
{
    const char *fn = __func__;
    amp__alg_data d;
    const amp__alg_prog *p = NULL;
    amp__alg_run run;
    amp_status st;
    if (q) AMP__HANDLE_OK(q, AMP__HANDLE_QUEUE);
    AMP__NOT_NULL(value);
    if ((st = amp__alg_resolve(fn, "out", out, 0, NULL, &d)) != AMP_OK || (st = amp__alg_writable(fn, "out", &d)) != AMP_OK)
        return st;
    if (d.elem > 64)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: out has %zu-byte elements; fill takes at most 64", fn,
                         d.elem);
    if ((st = amp__alg_queue(q, &d, 1, NULL, &q)) != AMP_OK) return st;
    if ((st = amp__alg_filler(q->acc, d.elem, &p)) != AMP_OK) return st;
    if (d.shape.n == 0) return AMP_OK;
    amp_arg v;
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64;
    switch (d.elem) {
    case 1: memcpy(&u8, value, 1); v = amp_arg_uint8(u8); break;
    case 2: memcpy(&u16, value, 2); v = amp_arg_uint16(u16); break;
    case 4: memcpy(&u32, value, 4); v = amp_arg_uint32(u32); break;
    case 8: memcpy(&u64, value, 8); v = amp_arg_uint64(u64); break;
    default: v = amp_arg_struct(value, d.elem); break;
    }
    int64_t per = 0, ntiles = amp__alg_spread(p, d.shape.n, &per);
    amp_arg a[] = {amp__alg_span(&d, true), amp__alg_shape_arg(&d), v, amp_arg_int64(d.shape.n), amp_arg_int64(per)};
    amp__alg_run_begin(&run, q, false, false);
    st = amp__alg_launch(&run, p, AMP__ALG_K_FILL, ntiles, a, 5);
    return amp__alg_run_end(&run, st, NULL);
}

amp_status amp_iota(amp_accelerator_view *q, amp_arg out, amp_type t, const void *start, const void *step)
{
    const char *fn = __func__;
    amp__alg_data d;
    const amp__alg_prog *p = NULL;
    amp__alg_run run;
    amp_status st;
    if (q) AMP__HANDLE_OK(q, AMP__HANDLE_QUEUE);
    AMP__NOT_NULL(start);
    if ((st = amp__alg_type_ok(fn, t)) != AMP_OK) return st;
    if ((st = amp__alg_resolve(fn, "out", out, amp_type_size(t), amp_type_name(t), &d)) != AMP_OK ||
        (st = amp__alg_writable(fn, "out", &d)) != AMP_OK)
        return st;
    if ((st = amp__alg_queue(q, &d, 1, NULL, &q)) != AMP_OK) return st;
    if ((st = amp__alg_basic(q->acc, t, AMP_MAP_IDENTITY, &p)) != AMP_OK) return st;
    if (d.shape.n == 0) return AMP_OK;
    /* step NULL: one of the type. */
    union {
        int32_t i32;
        int64_t i64;
        float f32;
        double f64;
    } one;
    switch (t) {
    case AMP_TYPE_FLOAT32: one.f32 = 1.0f; break;
    case AMP_TYPE_FLOAT64: one.f64 = 1.0; break;
    case AMP_TYPE_INT64:
    case AMP_TYPE_UINT64: one.i64 = 1; break;
    default: one.i32 = 1; break;
    }
    int64_t per = 0, ntiles = amp__alg_spread(p, d.shape.n, &per);
    amp_arg a[] = {amp__alg_span(&d, true), amp__alg_shape_arg(&d), amp__alg_value_arg(t, start),
                   amp__alg_value_arg(t, step ? step : (const void *)&one), amp_arg_int64(d.shape.n),
                   amp_arg_int64(per)};
    amp__alg_run_begin(&run, q, false, false);
    st = amp__alg_launch(&run, p, AMP__ALG_K_IOTA, ntiles, a, 6);
    return amp__alg_run_end(&run, st, NULL);
}
