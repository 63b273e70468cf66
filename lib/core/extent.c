/* extent.c — amp_extent / amp_index values and tiled extents: validation,
 * arithmetic, pad and truncate. Pure functions; no locks. */
#include "base/core.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

amp_extent amp_extent_make(int rank, const int *v)
{
    amp_extent e;
    memset(&e, 0, sizeof e);
    e.rank = rank;
    if (v && rank >= 1 && rank <= AMP_MAX_RANK) memcpy(e.v, v, sizeof(int) * (size_t)rank);
    return e;
}

amp_index amp_index_make(int rank, const int *v)
{
    amp_index i;
    memset(&i, 0, sizeof i);
    i.rank = rank;
    if (v && rank >= 1 && rank <= AMP_MAX_RANK) memcpy(i.v, v, sizeof(int) * (size_t)rank);
    return i;
}

amp_extent amp_extent_1d(int e0) { return amp_extent_make(1, (const int[]){e0}); }
amp_extent amp_extent_2d(int e0, int e1) { return amp_extent_make(2, (const int[]){e0, e1}); }
amp_extent amp_extent_3d(int e0, int e1, int e2) { return amp_extent_make(3, (const int[]){e0, e1, e2}); }
amp_extent amp_extent_4d(int e0, int e1, int e2, int e3) { return amp_extent_make(4, (const int[]){e0, e1, e2, e3}); }
amp_index amp_index_1d(int i0) { return amp_index_make(1, (const int[]){i0}); }
amp_index amp_index_2d(int i0, int i1) { return amp_index_make(2, (const int[]){i0, i1}); }
amp_index amp_index_3d(int i0, int i1, int i2) { return amp_index_make(3, (const int[]){i0, i1, i2}); }
amp_index amp_index_4d(int i0, int i1, int i2, int i3) { return amp_index_make(4, (const int[]){i0, i1, i2, i3}); }

amp_status amp_extent_validate(amp_extent e)
{
    if (e.rank < 1 || e.rank > AMP_MAX_RANK)
        return amp__fail(AMP_ERROR_INVALID_EXTENT, "extent rank %d is outside 1..%d", e.rank,
                         AMP_MAX_RANK);
    for (int d = 0; d < e.rank; ++d)
        if (e.v[d] < 0)
            return amp__fail(AMP_ERROR_INVALID_EXTENT,
                             "extent dimension %d is %d; dimensions must be 0 or more", d, e.v[d]);
    if (amp_extent_size(e) >= 0) return AMP_OK;
    /* No dimension is 0 (the count would be): find where it overflows. */
    int64_t size = 1;
    for (int d = 0; d < e.rank; ++d) {
        if (size > INT64_MAX / e.v[d])
            return amp__fail(AMP_ERROR_INVALID_EXTENT, "extent element count overflows int64 at dimension %d (%d)",
                             d, e.v[d]);
        size *= e.v[d];
    }
    return AMP_OK;
}

int64_t amp_extent_size(amp_extent e)
{
    /* Validation without touching the caller's error message. A dimension
     * of 0 anywhere makes the count 0, however large the ones before it. */
    if (e.rank < 1 || e.rank > AMP_MAX_RANK) return -1;
    bool empty = false;
    for (int d = 0; d < e.rank; ++d) {
        if (e.v[d] < 0) return -1;
        empty |= e.v[d] == 0;
    }
    if (empty) return 0;
    int64_t size = 1;
    for (int d = 0; d < e.rank; ++d) {
        if (size > INT64_MAX / e.v[d]) return -1;
        size *= e.v[d];
    }
    return size;
}

bool amp_extent_contains(amp_extent e, amp_index i)
{
    if (e.rank != i.rank || e.rank < 1 || e.rank > AMP_MAX_RANK) return false;
    for (int d = 0; d < e.rank; ++d)
        if (i.v[d] < 0 || i.v[d] >= e.v[d]) return false;
    return true;
}

bool amp_extent_equal(amp_extent a, amp_extent b)
{
    if (a.rank != b.rank || a.rank < 1 || a.rank > AMP_MAX_RANK) return false;
    return !memcmp(a.v, b.v, sizeof(int) * (size_t)a.rank);
}

bool amp_index_equal(amp_index a, amp_index b)
{
    if (a.rank != b.rank || a.rank < 1 || a.rank > AMP_MAX_RANK) return false;
    return !memcmp(a.v, b.v, sizeof(int) * (size_t)a.rank);
}

/* r = a + sign*b element-wise, for any pair of rank-tagged int vectors. */
static amp_status amp__vec_op(const char *what, int ra, const int *a, int rb, const int *b,
                              int sign, int *r)
{
    if (ra != rb || ra < 1 || ra > AMP_MAX_RANK)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: ranks %d and %d differ or are outside 1..%d",
                         what, ra, rb, AMP_MAX_RANK);
    for (int d = 0; d < ra; ++d) {
        long long v = (long long)a[d] + (long long)sign * b[d];
        if (v > INT_MAX || v < INT_MIN)
            return amp__fail(AMP_ERROR_OUT_OF_BOUNDS, "%s: dimension %d overflows int (%d %c %d)",
                             what, d, a[d], sign > 0 ? '+' : '-', b[d]);
        r[d] = (int)v;
    }
    return AMP_OK;
}

#define AMP__VEC_FN(fn, T, U, sign)                                                     \
    amp_status fn(T a, U b, T *out)                                                     \
    {                                                                                   \
        if (!out) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, #fn ": out is NULL");     \
        T r = {a.rank, {0}};                                                            \
        amp_status st = amp__vec_op(#fn, a.rank, a.v, b.rank, b.v, sign, r.v);          \
        if (st != AMP_OK) {                                                             \
            memset(out, 0, sizeof *out);                                                \
            return st;                                                                  \
        }                                                                               \
        *out = r;                                                                       \
        return AMP_OK;                                                                  \
    }
AMP__VEC_FN(amp_index_add, amp_index, amp_index, 1)
AMP__VEC_FN(amp_index_sub, amp_index, amp_index, -1)
AMP__VEC_FN(amp_extent_add, amp_extent, amp_index, 1)
AMP__VEC_FN(amp_extent_sub, amp_extent, amp_index, -1)
AMP__VEC_FN(amp_extent_add_extent, amp_extent, amp_extent, 1)
AMP__VEC_FN(amp_extent_sub_extent, amp_extent, amp_extent, -1)

/* r[d] = a[d] op s, or s op a[d] (left), for a rank-tagged int vector. */
static amp_status amp__scalar_op(const char *what, int ra, const int *a, amp_op op, int s, bool left, int *r)
{
    static const char sym[] = "+-*/%";
    if (ra < 1 || ra > AMP_MAX_RANK)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: rank %d is outside 1..%d", what, ra, AMP_MAX_RANK);
    if ((int)op < AMP_OP_ADD || (int)op > AMP_OP_MOD)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: operator %d is not one of AMP_OP_ADD..AMP_OP_MOD", what,
                         (int)op);
    for (int d = 0; d < ra; ++d) {
        long long x = left ? s : a[d], y = left ? a[d] : s, v = 0;
        if ((op == AMP_OP_DIV || op == AMP_OP_MOD) && y == 0)
            return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: dimension %d divides %lld by zero", what, d, x);
        switch (op) {
        case AMP_OP_ADD: v = x + y; break;
        case AMP_OP_SUB: v = x - y; break;
        case AMP_OP_MUL: v = x * y; break;
        case AMP_OP_DIV: v = x / y; break;
        case AMP_OP_MOD: v = x % y; break;
        default: break; /* the algorithms' operators: refused above */
        }
        if (v > INT_MAX || v < INT_MIN)
            return amp__fail(AMP_ERROR_OUT_OF_BOUNDS, "%s: dimension %d overflows int (%lld %c %lld)", what, d, x,
                             sym[op], y);
        r[d] = (int)v;
    }
    return AMP_OK;
}

#define AMP__SCALAR_FN(fn, T, params, left, a, s)                                        \
    amp_status fn params                                                                  \
    {                                                                                     \
        if (!out) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, #fn ": out is NULL");       \
        T r;                                                                              \
        memset(&r, 0, sizeof r);                                                          \
        r.rank = a.rank;                                                                  \
        amp_status st = amp__scalar_op(#fn, a.rank, a.v, op, s, left, r.v);               \
        if (st != AMP_OK) {                                                               \
            memset(out, 0, sizeof *out);                                                  \
            return st;                                                                    \
        }                                                                                 \
        *out = r;                                                                         \
        return AMP_OK;                                                                    \
    }
AMP__SCALAR_FN(amp_index_scalar, amp_index, (amp_index a, amp_op op, int s, amp_index *out), false, a, s)
AMP__SCALAR_FN(amp_extent_scalar, amp_extent, (amp_extent a, amp_op op, int s, amp_extent *out), false, a, s)
AMP__SCALAR_FN(amp_scalar_index, amp_index, (int s, amp_op op, amp_index a, amp_index *out), true, a, s)
AMP__SCALAR_FN(amp_scalar_extent, amp_extent, (int s, amp_op op, amp_extent a, amp_extent *out), true, a, s)

/* ---------------------------------------------------------- tiled extents */

/* A tiled extent is a plain value (C++ AMP): any valid extent of rank 1..3
 * and positive tile sizes, however many threads a tile would have; only a
 * launch holds it to the accelerator's limit (lib/core/launch.c). */
static amp_status amp__check_tiled(amp_tiled_extent t)
{
    amp_status st = amp_extent_validate(t.extent);
    if (st != AMP_OK) return st;
    if (t.extent.rank > 3)
        return amp__fail(AMP_ERROR_INVALID_COMPUTE_DOMAIN,
                         "tiled extent rank %d: tiles are rank 1..3", t.extent.rank);
    for (int d = 0; d < t.extent.rank; ++d)
        if (t.tile[d] <= 0)
            return amp__fail(AMP_ERROR_INVALID_COMPUTE_DOMAIN,
                             "tile dimension %d is %d; tile sizes must be positive", d, t.tile[d]);
    return AMP_OK;
}

amp_status amp_extent_tile(amp_extent e, const int *tile, amp_tiled_extent *out)
{
    amp_status st = AMP_OK;
    amp_tiled_extent t;
    memset(&t, 0, sizeof t);
    if (!tile || !out) {
        st = amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_extent_tile: %s is NULL", tile ? "out" : "tile");
        goto fail;
    }
    if (e.rank < 1 || e.rank > 3) {
        st = amp__fail(AMP_ERROR_INVALID_COMPUTE_DOMAIN,
                       "amp_extent_tile: rank %d; tiles are rank 1..3", e.rank);
        goto fail;
    }
    t.extent = e;
    for (int d = 0; d < e.rank; ++d) t.tile[d] = tile[d];
    if ((st = amp__check_tiled(t)) != AMP_OK) goto fail;
    *out = t;
    return AMP_OK;
fail:
    if (out) memset(out, 0, sizeof *out);
    return st;
}

/* The plain-integer forms: the count of tile sizes is the rank they expect. */
static amp_status amp__tile_n(amp_extent e, int n, const int *tile, amp_tiled_extent *out, const char *fn)
{
    if (e.rank != n) {
        if (out) memset(out, 0, sizeof *out);
        return amp__fail(AMP_ERROR_INVALID_COMPUTE_DOMAIN, "%s: the extent has rank %d; this form tiles rank %d",
                         fn, e.rank, n);
    }
    return amp_extent_tile(e, tile, out);
}

amp_status amp_extent_tile_1d(amp_extent e, int t0, amp_tiled_extent *out)
{
    const int t[1] = {t0};
    return amp__tile_n(e, 1, t, out, "amp_extent_tile_1d");
}

amp_status amp_extent_tile_2d(amp_extent e, int t0, int t1, amp_tiled_extent *out)
{
    const int t[2] = {t0, t1};
    return amp__tile_n(e, 2, t, out, "amp_extent_tile_2d");
}

amp_status amp_extent_tile_3d(amp_extent e, int t0, int t1, int t2, amp_tiled_extent *out)
{
    const int t[3] = {t0, t1, t2};
    return amp__tile_n(e, 3, t, out, "amp_extent_tile_3d");
}

/* Round each dimension to a multiple of its tile, up (pad) or down. */
static amp_status amp__round_tiled(amp_tiled_extent t, bool up, amp_tiled_extent *out)
{
    amp_status st = AMP_OK;
    const char *fn = up ? "amp_tiled_extent_pad" : "amp_tiled_extent_truncate";
    if (!out) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: out is NULL", fn);
    if ((st = amp__check_tiled(t)) != AMP_OK) goto fail;
    amp_tiled_extent r = t;
    for (int d = 0; d < t.extent.rank; ++d) {
        long long e = t.extent.v[d], k = t.tile[d];
        long long v = up ? (e + k - 1) / k * k : e / k * k;
        if (v > INT_MAX) {
            st = amp__fail(AMP_ERROR_INVALID_EXTENT,
                           "%s: dimension %d (%lld) rounded up to tile %lld passes INT_MAX", fn, d, e, k);
            goto fail;
        }
        r.extent.v[d] = (int)v;
    }
    /* Each dimension fits but their product may not: {INT_MAX, INT_MAX, 1}
     * tiled by {1, 1, 3} pads to more than INT64_MAX elements, which no
     * launch or validate accepts. */
    if (up && amp_extent_size(r.extent) < 0) {
        st = amp__fail(AMP_ERROR_INVALID_EXTENT, "%s: the padded extent's element count passes INT64_MAX", fn);
        goto fail;
    }
    *out = r;
    return AMP_OK;
fail:
    memset(out, 0, sizeof *out);
    return st;
}

amp_status amp_tiled_extent_pad(amp_tiled_extent t, amp_tiled_extent *out)
{
    return amp__round_tiled(t, true, out);
}

amp_status amp_tiled_extent_truncate(amp_tiled_extent t, amp_tiled_extent *out)
{
    return amp__round_tiled(t, false, out);
}

bool amp_tiled_extent_is_divisible(amp_tiled_extent t)
{
    if (t.extent.rank < 1 || t.extent.rank > 3) return false;
    for (int d = 0; d < t.extent.rank; ++d)
        if (t.tile[d] <= 0 || t.extent.v[d] < 0 || t.extent.v[d] % t.tile[d]) return false;
    return true;
}
