/* cpu_width.c — how many threads a repeated CPU launch runs on, learned from its own times: kept by a kernel for each recent launch size and way of handing a launch to threads (the pool's, for direct launches and replays without a team, or a replay team's), for its direct launches and its graphs' replays alike (cpu_launch.c and cpu_graph.c say why).
 *
 * A search starts on every thread, runs AMP__CPU_WIDTH_TIMED launches at
 * a width and keeps the fastest, and halves the threads while half took a
 * tenth off the wider width's time; at the first half that did not, it
 * goes back to the wider. It starts wide so that a big kernel's first
 * launches run as they would unlearned, on every thread, never alone for
 * long; and a width moves only for a tenth (here and in the checks), so
 * that noise does not move it, and a launch that memory bandwidth bounds,
 * about as fast on 8 threads as on 16, keeps 16.
 * A launch handed to a replay team searches every halving down to alone
 * (amp__cpu_width_down_all), keeping the fastest unless a narrower width
 * takes a tenth off it, and stops early only at a width that took twice
 * the fastest's time: a team's hand-off costs little more for 16 threads
 * than for 4, so two widths can time alike where running alone, with no
 * hand-off at all, is several times faster (under the pool's rule a chain
 * of small launches would stop at the whole team). Its checks time alone
 * too, beside its width, twice and half it, and move to the fastest that
 * took a tenth off its width's time: a search that a passing load misled
 * into the whole team for a launch that runs several times faster alone
 * is put right at the next check.
 * A width chosen while the host was busy with something else can be wrong
 * for the rest of the launch's life, so a searched width is checked again
 * every AMP__CPU_WIDTH_RECHECK launches: AMP__CPU_WIDTH_TIMED launches at
 * each of its width, twice it and half it, taken in turn so that a passing
 * load weighs on all three alike; it moves to the wider one if that took a
 * tenth off its own, else to the narrower one if that did. A check runs
 * at most 6 of every 256 launches at other widths (a team's, 9: below).
 * A launch that took at least AMP__CPU_WIDTH_WIDE_NS a thread on every
 * thread stays there and is not checked: the threads' hand-off costs it
 * a few microseconds each, a tenth of its time at most, so fewer threads
 * cannot take a tenth off, while each of the search's launches on half of
 * them could take up to twice as long (a program that reduces a big array
 * a few times, milliseconds a launch, would spend them in the search).
 * A launch that settles alone having taken less than
 * AMP__CPU_WIDTH_HEAVY_NS is not checked: threads could save it a few
 * microseconds at most, and the check's launches on them cost as much
 * (a small launch alone takes well under a microsecond, and many times
 * that on two threads: the hand-off; docs/architecture.md, the CPU
 * accelerator).
 * Every index point runs the same code on the same data whatever the
 * width: the results are the same bits. */
#include "cpu_internal.h"

#include <stdlib.h>

amp__cpu_width amp__cpu_width_down(int threads)
{
    return (amp__cpu_width){.width = threads, .settled = threads <= 1, .best = UINT64_MAX};
}

amp__cpu_width amp__cpu_width_down_all(int threads)
{
    amp__cpu_width w = amp__cpu_width_down(threads);
    w.all = true;
    return w;
}

/* a's time took a tenth off b's. */
static bool amp__cpu_width_tenth_off(uint64_t a, uint64_t b) { return a * 10 < b * 9; }

/* w's width after AMP__CPU_WIDTH_TIMED launches at its present one (the
 * file's comment). */
static void amp__cpu_width_searched(amp__cpu_width *w)
{
    if (!w->prev_width && w->best >= (uint64_t)w->width * AMP__CPU_WIDTH_WIDE_NS) {
        w->settled = true; /* heavy on every thread: never checked */
    } else if (w->all) {
        /* prev_width: the fastest so far, which a narrower width must take
         * a tenth off to replace. */
        if (!w->prev_width || amp__cpu_width_tenth_off(w->best, w->prev_best)) {
            w->prev_width = w->width;
            w->prev_best = w->best;
        }
        if (w->width > 1 && w->best / 2 <= w->prev_best) {
            w->width /= 2;
            w->best = UINT64_MAX;
            w->timed = 0;
            return;
        }
        /* Alone, or twice the fastest's time: fewer threads take longer. */
        w->width = w->prev_width;
        w->settled = true;
        if (w->width <= 1 && w->prev_best < AMP__CPU_WIDTH_HEAVY_NS) w->prev_width = 0; /* light: never checked */
    } else if (w->prev_width && !amp__cpu_width_tenth_off(w->best, w->prev_best)) {
        w->width = w->prev_width;
        w->settled = true;
    } else if (w->width <= 1) {
        w->settled = true;
        if (w->best < AMP__CPU_WIDTH_HEAVY_NS) w->prev_width = 0; /* light: never checked */
    } else {
        w->prev_width = w->width;
        w->prev_best = w->best;
        w->width /= 2;
        w->best = UINT64_MAX;
        w->timed = 0;
    }
}

int amp__cpu_width_pick(amp__cpu_width *w, int threads, bool *timed)
{
    *timed = !w->settled;
    /* Only a searched width is checked: one that settled alone being light
     * has no prev_width. */
    if (!w->settled || !w->prev_width) return w->width;
    if (!w->ncand) {
        if (++w->since < AMP__CPU_WIDTH_RECHECK) return w->width;
        w->since = 0;
        w->step = 0;
        w->cand[w->ncand++] = w->width;
        if (w->width < threads) w->cand[w->ncand++] = 2 * w->width < threads ? 2 * w->width : threads;
        if (w->width > 1) w->cand[w->ncand++] = w->width / 2;
        /* A team's: alone too (the file's comment). */
        if (w->all && w->width > 2) w->cand[w->ncand++] = 1;
        for (int i = 0; i < w->ncand; ++i) w->cand_best[i] = UINT64_MAX;
    }
    *timed = true;
    return w->cand[w->step % w->ncand];
}

void amp__cpu_width_took(amp__cpu_width *w, int width, uint64_t ns)
{
    if (!w->settled) {
        if (width != w->width) return;
        if (ns < w->best) w->best = ns;
        if (++w->timed == AMP__CPU_WIDTH_TIMED) amp__cpu_width_searched(w);
        return;
    }
    if (!w->ncand) return;
    int i = w->step % w->ncand;
    if (w->cand[i] != width) return;
    if (ns < w->cand_best[i]) w->cand_best[i] = ns;
    if (++w->step < AMP__CPU_WIDTH_TIMED * w->ncand) return;
    uint64_t own = w->cand_best[0];
    if (w->all) {
        /* The fastest of those that took a tenth off the width's own. */
        int best = 0;
        for (int k = 1; k < w->ncand; ++k)
            if (amp__cpu_width_tenth_off(w->cand_best[k], own) && w->cand_best[k] < w->cand_best[best]) best = k;
        w->width = w->cand[best];
    } else {
        int wider = w->ncand > 1 && w->cand[1] > w->width ? 1 : 0; /* where there is one */
        int narrower = w->width > 1 ? w->ncand - 1 : 0;
        if (wider && amp__cpu_width_tenth_off(w->cand_best[wider], own)) w->width = w->cand[wider];
        else if (narrower && amp__cpu_width_tenth_off(w->cand_best[narrower], own)) w->width = w->cand[narrower];
    }
    w->ncand = 0;
}

amp__cpu_widths *amp__cpu_widths_new(void)
{
    amp__cpu_widths *t = calloc(1, sizeof *t);
    if (!t) {
        amp__fail(AMP_ERROR_OUT_OF_MEMORY, "CPU accelerator: no memory for a kernel's launch widths");
        return NULL;
    }
    amp__lock_init(&t->mu);
    return t;
}

void amp__cpu_widths_free(amp__cpu_widths *t)
{
    if (!t) return;
    free(t);
}

/* The slot of launches of `points` handed off that way (mu held): a new
 * size takes the oldest slot and starts its search. */
static amp__cpu_width *amp__cpu_widths_slot(amp__cpu_widths *t, int64_t points, amp__cpu_handoff how, int threads,
                                            bool add)
{
    for (int i = 0; i < AMP__CPU_WIDTH_SIZES; ++i)
        if (t->points[i] == points && t->how[i] == how) return &t->w[i];
    if (!add) return NULL;
    int i = t->next;
    t->next = (i + 1) % AMP__CPU_WIDTH_SIZES;
    t->points[i] = points;
    t->how[i] = how;
    t->w[i] = how == AMP__CPU_HANDOFF_TEAM ? amp__cpu_width_down_all(threads) : amp__cpu_width_down(threads);
    return &t->w[i];
}

int amp__cpu_widths_pick(amp__cpu_widths *t, int64_t points, amp__cpu_handoff how, int threads, bool *timed)
{
    if (!amp__lock_acquire_or_forked(&t->mu)) { /* a forked child where a parent's thread held it: all threads */
        *timed = false;
        return threads;
    }
    int width = amp__cpu_width_pick(amp__cpu_widths_slot(t, points, how, threads, true), threads, timed);
    amp__lock_release(&t->mu);
    return width;
}

void amp__cpu_widths_took(amp__cpu_widths *t, int64_t points, amp__cpu_handoff how, int width, uint64_t ns)
{
    if (!amp__lock_acquire_or_forked(&t->mu)) return;
    /* Its slot may have gone to another size meanwhile. */
    amp__cpu_width *w = amp__cpu_widths_slot(t, points, how, 0, false);
    if (w) amp__cpu_width_took(w, width, ns);
    amp__lock_release(&t->mu);
}
