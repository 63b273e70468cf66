/* halo_overlap.c — hipamp::mpi's overlap check: a receive view sharing an element with another view of its exchange is refused (exact, by the rows' arithmetic or a walk of their runs). */
#include "halo_private.h"

#include <stdint.h>

/* ------------------------------------------------------------ overlaps */

/* The elements a hyper-row from dimension d on spans: 1 + the offset of
 * its last element from its first. */
static int64_t amp_mpi__span(const amp_extent *e, const int64_t *s, int d)
{
    int64_t span = 1;
    for (int m = d; m < e->rank; ++m) span += (int64_t)(e->v[m] - 1) * s[m];
    return span;
}

/* Two views of one element size and rank whose strides agree (where both
 * extents exceed 1; the other dimensions' strides do not matter): whether
 * some element of a, whose first element is delta elements after b's, is
 * one of b's, from dimension d on. Row i of a meets row i - k of b only
 * where the rows' spans reach each other, which leaves a few k per
 * dimension whatever the extents; the rows below are the same for every i,
 * so each k is one question one dimension down. Exact, in 3^rank steps at
 * most. */
static bool amp_mpi__rows_meet(const amp_extent *ea, const int64_t *sa, const amp_extent *eb, const int64_t *sb,
                               int d, int64_t delta)
{
    if (d == ea->rank) return delta == 0;
    const int na = ea->v[d], nb = eb->v[d];
    const int64_t s = na > 1 ? sa[d] : sb[d];
    if (na == 1 && nb == 1) return amp_mpi__rows_meet(ea, sa, eb, sb, d + 1, delta);
    const int64_t span_a = amp_mpi__span(ea, sa, d + 1), span_b = amp_mpi__span(eb, sb, d + 1);
    /* k with -span_a < delta + k * s < span_b (s > 0: checked by the caller). */
    int64_t k0 = (-span_a - delta) / s - 1, k1 = (span_b - delta) / s + 1;
    for (int64_t k = k0; k <= k1; ++k) {
        const int64_t t = delta + k * s;
        if (t <= -span_a || t >= span_b) continue;
        /* Rows i of a and i - k of b: 0 <= i < na, 0 <= i - k < nb. */
        int64_t lo = k > 0 ? k : 0, hi = (int64_t)nb + k < na ? (int64_t)nb + k : na;
        if (lo < hi && amp_mpi__rows_meet(ea, sa, eb, sb, d + 1, t)) return true;
    }
    return false;
}

/* A strided view's runs of its last dimension, in the order of its
 * elements (and of their addresses: every dimension's rows lie past the
 * previous one's, as hipamp's views' do). */
typedef struct amp_mpi__runs {
    uintptr_t first;
    const amp_extent *e;
    const int64_t *s;
    size_t elem;
    int idx[AMP_MAX_RANK];
    bool done;
    uintptr_t lo, hi; /* the current run's bytes */
} amp_mpi__runs;

static void amp_mpi__runs_at(amp_mpi__runs *r)
{
    const int last = r->e->rank - 1;
    int64_t off = 0;
    for (int d = 0; d < last; ++d) off += (int64_t)r->idx[d] * r->s[d];
    r->lo = r->first + (uintptr_t)(off * (int64_t)r->elem);
    r->hi = r->lo + (uintptr_t)((r->s[last] == 1 ? (int64_t)r->e->v[last] : 1) * (int64_t)r->elem);
}

static void amp_mpi__runs_next(amp_mpi__runs *r)
{
    const int last = r->e->rank - 1;
    if (r->s[last] != 1 && ++r->idx[last] < r->e->v[last]) {
        r->lo += (uintptr_t)(r->s[last] * (int64_t)r->elem);
        r->hi = r->lo + r->elem;
        return;
    }
    if (r->s[last] != 1) r->idx[last] = 0;
    int d = last - 1;
    while (d >= 0 && ++r->idx[d] == r->e->v[d]) r->idx[d--] = 0;
    if (d < 0) r->done = true;
    else amp_mpi__runs_at(r);
}

/* Each row of a dimension lies past the previous one's whole. */
static bool amp_mpi__ordered(const amp_extent *e, const int64_t *s)
{
    for (int d = 0; d < e->rank; ++d)
        if (e->v[d] > 1 && (s[d] <= 0 || (d + 1 < e->rank && amp_mpi__span(e, s, d + 1) > s[d]))) return false;
    return true;
}

/* Whether two sides' views share a byte: by their rows' arithmetic where
 * their strides agree (sections of one view: the usual case), else by
 * walking their runs side by side; views whose rows are not in address
 * order (none of hipamp's) are taken to meet where their byte ranges do. */
static bool amp_mpi__sides_meet(const amp_mpi__side *a, const amp_mpi__side *b, size_t elem)
{
    const uintptr_t pa = (uintptr_t)a->base, pb = (uintptr_t)b->base;
    const int64_t span_a = amp_mpi__span(&a->ext, a->strides, 0), span_b = amp_mpi__span(&b->ext, b->strides, 0);
    if (pa + (uintptr_t)(span_a * (int64_t)elem) <= pb || pb + (uintptr_t)(span_b * (int64_t)elem) <= pa) return false;
    if (!amp_mpi__ordered(&a->ext, a->strides) || !amp_mpi__ordered(&b->ext, b->strides)) return true;
    /* (The byte ranges meet: the two addresses are less than a view apart.) */
    const int64_t apart = (int64_t)(pa - pb);
    bool alike = a->ext.rank == b->ext.rank && apart % (int64_t)elem == 0;
    for (int d = 0; alike && d < a->ext.rank; ++d)
        alike = a->ext.v[d] <= 1 || b->ext.v[d] <= 1 || a->strides[d] == b->strides[d];
    if (alike) return amp_mpi__rows_meet(&a->ext, a->strides, &b->ext, b->strides, 0, apart / (int64_t)elem);
    amp_mpi__runs ra = {.first = pa, .e = &a->ext, .s = a->strides, .elem = elem};
    amp_mpi__runs rb = {.first = pb, .e = &b->ext, .s = b->strides, .elem = elem};
    amp_mpi__runs_at(&ra);
    amp_mpi__runs_at(&rb);
    while (!ra.done && !rb.done) {
        if (ra.hi <= rb.lo) amp_mpi__runs_next(&ra);
        else if (rb.hi <= ra.lo) amp_mpi__runs_next(&rb);
        else return true;
    }
    return false;
}

/* A receive view that shares elements with another view of the exchange
 * (a send it would overwrite, or another receive) makes the result depend
 * on the order in which the messages land: refused, naming both faces.
 * Two sends may read the same elements. Compared where both addresses are
 * known (see amp_mpi__side's base): views of host memory from the plan on,
 * views handed over by device address once they were (which loses none of
 * their data). Whole faces: a face's chunks are its first entry's view.
 * late_only (the check once the sides are ready): only pairs with a side
 * whose address became known since the plan; the plan's check found every
 * other pair apart, and their addresses have not changed. */
amp_status amp_mpi__overlaps(const amp_mpi_exchange *x, const amp_mpi__flight *f, bool late_only, const char *fn)
{
    for (size_t i = 0; i < 2 * f->count; ++i) {
        const amp_mpi__side *a = &f->sides[i];
        if (!a->v || !a->base || a->chunk) continue;
        for (size_t j = i + 1; j < 2 * f->count; ++j) {
            const amp_mpi__side *b = &f->sides[j];
            if (!b->v || !b->base || b->chunk || ((i & 1) == 0 && (j & 1) == 0)) continue;
            if (late_only && !a->base_late && !b->base_late) continue;
            if (!amp_mpi__sides_meet(a, b, x->elem)) continue;
            const amp_mpi_halo *ha = &f->halos[i / 2], *hb = &f->halos[j / 2];
            return amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT,
                                 "%s: halo %zu %s rank %d (tag %d) and halo %zu %s rank %d (tag %d) share elements: "
                                 "what a receive view holds afterwards would depend on the order in which the "
                                 "messages arrive; a receive view may overlap no other view of the exchange (sends "
                                 "may read the same elements)",
                                 fn, f->orig[i / 2], i & 1 ? "receive from" : "send to", ha->peer,
                                 i & 1 ? ha->recv_tag : ha->send_tag, f->orig[j / 2], j & 1 ? "receive from" : "send to",
                                 hb->peer, j & 1 ? hb->recv_tag : hb->send_tag);
        }
    }
    return AMP_OK;
}
