/* box.c — box algebra for coherence bookkeeping: boxes [lo, hi) in storage
 * coordinates, and lists of them with subtraction (splitting into slabs)
 * and union (merging neighbours so that a loop over rows stays one box).
 * Also whether a view layout is one contiguous run, and the box a view
 * covers in its storage. Pure functions; no locks. */
#include "internal.h"

#include <string.h>

int64_t amp__box_volume(const amp__box *b, int r)
{
    int64_t v = 1;
    for (int d = 0; d < r; ++d) v *= b->hi[d] - b->lo[d];
    return v;
}
bool amp__box_intersect(const amp__box *a, const amp__box *b, int r, amp__box *out)
{
    for (int d = 0; d < r; ++d) {
        out->lo[d] = a->lo[d] > b->lo[d] ? a->lo[d] : b->lo[d];
        out->hi[d] = a->hi[d] < b->hi[d] ? a->hi[d] : b->hi[d];
        if (out->lo[d] >= out->hi[d]) return false;
    }
    return true;
}

/* list -= b: boxes inside b go, boxes crossing b are split into the (at most
 * 2r) slabs outside it. Returns false when the list would overflow (the
 * caller then handles the whole list at once). */
bool amp__boxes_subtract(amp__box *list, int *n, const amp__box *b, int r)
{
    amp__box out[AMP__MAX_BOXES];
    int m = 0;
    for (int i = 0; i < *n; ++i) {
        amp__box cut;
        if (!amp__box_intersect(&list[i], b, r, &cut)) {
            if (m == AMP__MAX_BOXES) return false;
            out[m++] = list[i];
            continue;
        }
        amp__box rest = list[i];
        for (int d = 0; d < r; ++d) {
            if (rest.lo[d] < cut.lo[d]) {
                if (m == AMP__MAX_BOXES) return false;
                out[m] = rest;
                out[m++].hi[d] = cut.lo[d];
            }
            if (cut.hi[d] < rest.hi[d]) {
                if (m == AMP__MAX_BOXES) return false;
                out[m] = rest;
                out[m++].lo[d] = cut.hi[d];
            }
            rest.lo[d] = cut.lo[d];
            rest.hi[d] = cut.hi[d];
        }
    }
    memcpy(list, out, sizeof(amp__box) * (size_t)m);
    *n = m;
    return true;
}

/* a and b equal in every dimension but one, where they touch or overlap:
 * their union is a box (written to out). */
static bool amp__box_mergeable(const amp__box *a, const amp__box *b, int r, amp__box *out)
{
    int diff = -1;
    for (int d = 0; d < r; ++d) {
        if (a->lo[d] == b->lo[d] && a->hi[d] == b->hi[d]) continue;
        if (diff >= 0 || a->hi[d] < b->lo[d] || b->hi[d] < a->lo[d]) return false;
        diff = d;
    }
    *out = *a;
    if (diff >= 0) {
        out->lo[diff] = a->lo[diff] < b->lo[diff] ? a->lo[diff] : b->lo[diff];
        out->hi[diff] = a->hi[diff] > b->hi[diff] ? a->hi[diff] : b->hi[diff];
    }
    return true;
}

/* list += b. Boxes inside b are dropped and neighbours merged, so a loop
 * over the rows of a matrix leaves one box, not one per row. false: no
 * room (the list is unchanged then). */
bool amp__boxes_add(amp__box *list, int *n, const amp__box *b, int r)
{
    for (int i = 0; i < *n; ++i)
        if (amp__box_contains(&list[i], b, r)) return true;
    amp__box add = *b;
    bool merged;
    int m = *n;
    do {
        merged = false;
        int k = 0;
        for (int i = 0; i < m; ++i) {
            amp__box u;
            if (amp__box_contains(&add, &list[i], r)) continue;
            if (amp__box_mergeable(&add, &list[i], r, &u)) {
                add = u;
                merged = true;
                continue;
            }
            list[k++] = list[i];
        }
        m = k;
    } while (merged);
    if (m == AMP__MAX_BOXES) {
        /* Only reachable when nothing merged or was dropped: m == *n. */
        return false;
    }
    list[m++] = add;
    *n = m;
    return true;
}

bool amp__boxes_cover(const amp__box *list, int n, const amp__box *b, int r)
{
    for (int i = 0; i < n; ++i)
        if (amp__box_contains(&list[i], b, r)) return true;
    return false;
}

bool amp__layout_contiguous(int r, const int *ext, const int64_t *stride)
{
    int64_t expect = 1;
    for (int d = r - 1; d >= 0; --d) {
        if (ext[d] > 1 && stride[d] != expect) return false;
        expect *= ext[d];
    }
    return true;
}

int64_t amp__odometer_offset(int n, const int *count, const int64_t *stride, int64_t i)
{
    int64_t off = 0;
    for (int d = n - 1; d >= 0; --d) {
        off += (i % count[d]) * stride[d];
        i /= count[d];
    }
    return off;
}

/* Storage coordinates of element number `at` (row-major). */
static void amp__coords(const amp__storage *s, int64_t at, int *c)
{
    for (int k = s->ext.rank - 1; k > 0; --k) {
        c[k] = (int)(at % s->ext.v[k]);
        at /= s->ext.v[k];
    }
    c[0] = (int)at;
}

void amp__view_locate(const amp__storage *s, int64_t offset, size_t elem, amp_extent ext, const int64_t *stride,
                      amp__box *box, bool *exact)
{
    int R = s->ext.rank, r = ext.rank;
    int64_t se = (int64_t)s->elem;
    memset(box, 0, sizeof *box);
    *exact = true;
    if (amp_extent_size(ext) <= 0 || amp_extent_size(s->ext) <= 0) return; /* empty: the empty box */
    int c[AMP_MAX_RANK];
    /* The storage's element size and its strides for the last r dimensions
     * (sections, projections, a view_as of the same shape): a box. */
    if ((int64_t)elem == se && offset % se == 0 && r <= R) {
        amp__coords(s, offset / se, c);
        bool fits = c[0] < s->ext.v[0];
        for (int d = 0; d < r && fits; ++d) {
            int k = R - r + d;
            fits = (ext.v[d] <= 1 || stride[d] == s->stride[k]) && (int64_t)c[k] + ext.v[d] <= s->ext.v[k];
        }
        if (fits) {
            for (int k = 0; k < R; ++k) {
                box->lo[k] = c[k];
                box->hi[k] = c[k] + (k < R - r ? 1 : ext.v[k - (R - r)]);
            }
            return;
        }
    }
    /* Otherwise: the storage elements from the first byte to the last, and
     * the smallest box around that run (dimensions past the first that
     * differs are whole). It is exact when it holds no byte the view lacks. */
    int64_t end = offset + (int64_t)elem;
    for (int d = 0; d < r; ++d) end += (int64_t)(ext.v[d] - 1) * stride[d] * (int64_t)elem;
    int lo[AMP_MAX_RANK], hi[AMP_MAX_RANK];
    amp__coords(s, offset / se, lo);
    amp__coords(s, (end - 1) / se, hi); /* the element of the last byte; end + se could pass 2^63 */
    int k = 0;
    while (k < R && lo[k] == hi[k]) ++k;
    for (int j = 0; j < R; ++j) {
        box->lo[j] = j <= k ? lo[j] : 0;
        box->hi[j] = j < k ? lo[j] + 1 : j == k ? hi[j] + 1 : s->ext.v[j];
    }
    *exact = (uint64_t)amp_extent_size(ext) * elem == (uint64_t)amp__box_volume(box, R) * (uint64_t)se;
}
