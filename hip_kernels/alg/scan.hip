// scan.hip — the algorithms' single-pass scan: each tile scans its chunk and publishes its aggregate, and a tile's prefix comes from its predecessors' by decoupled look-back (on a GPU) or in order (the CPU accelerator); inclusive and exclusive, in place or not; read after layout.hip.

#if AMP_ALG_WITH_SCAN
#define AMP_ALG_SCAN_CHUNK (AMP_ALG_TILE * AMP_ALG_SCAN_ITEMS)
namespace amp {
namespace alg {

// A GPU thread handles its L items in groups of at most AMP_ALG_SCAN_GROUP,
// each group read before it is written (the comments below say why), which
// bounds the registers it takes; all at once where groups do not divide L.
#define AMP_ALG_SCAN_GROUP 32
#define AMP_ALG_SCAN_GROUP_OF(L) ((L) <= AMP_ALG_SCAN_GROUP || (L) % AMP_ALG_SCAN_GROUP ? (L) : AMP_ALG_SCAN_GROUP)

// tile_static index of thread l's k-th striped item (chunk position
// k * TILE + l): where a tile spans whole periods of padding, a constant
// step from thread l's first, so one address serves all of them.
AMP_FI int striped_at(int k, int l)
{
    return AMP_ALG_TILE % (1 << AMP_ALG_PAD_SHIFT) == 0 ? k * AMP_ALG_PAD(AMP_ALG_TILE) + AMP_ALG_PAD(l)
                                                        : AMP_ALG_PAD(k * AMP_ALG_TILE + l);
}

// Load the tile's chunk (mapped) into s, striped; past n the identity.
// On a GPU every item is loaded into registers before any is stored to
// tile_static: the inputs are generic pointers, which the compiler cannot
// prove distinct from tile_static memory, so a store between two loads
// keeps the second from being issued before the first returns, and a
// thread would wait out one memory latency per item.
template <bool C>
AMP_FI void scan_load_c(const amp__alg_in &in, AMP_ALG_R *s, long long base, long long n, int l, AMP_ALG_R id)
{
    if constexpr (AMP_ALG_TILE > 1) { // in groups, as scan_within_f, to bound the registers
        enum { G = AMP_ALG_SCAN_GROUP_OF(AMP_ALG_SCAN_ITEMS) };
        AMP_ALG_R v[G];
        AMP_ALG_UNROLL for (int g = 0; g < AMP_ALG_SCAN_ITEMS; g += G) {
            AMP_ALG_UNROLL for (int k = 0; k < G; ++k) {
                const long long i = base + (g + k) * AMP_ALG_TILE + l;
                v[k] = i < n ? amp__alg_map<C>(in, i) : id;
            }
            AMP_ALG_UNROLL for (int k = 0; k < G; ++k) s[striped_at(g + k, l)] = v[k];
        }
    } else {
        AMP_ALG_UNROLL for (int k = 0; k < AMP_ALG_SCAN_ITEMS; ++k) {
            const int j = k * AMP_ALG_TILE + l;
            const long long i = base + j;
            s[AMP_ALG_PAD(j)] = i < n ? amp__alg_map<C>(in, i) : id;
        }
    }
}
#ifdef AMP_CPU
// A one-thread tile (the CPU) scanning a whole chunk of contiguous input
// into contiguous output works in the output itself: it is in the cache
// after the first sweep, and two copies through tile_static would cost
// more than the scan. Not where the output is narrower than the
// accumulator (AMP_ALG_SPLIT_OUT): the running values must stay wide.
AMP_FI bool scan_direct(const amp__alg_in &in, const shape &ys, long long base, long long n)
{
    return AMP_ALG_TILE == 1 && !AMP_ALG_SPLIT_OUT && AMP_ALG_IN_CONTIG(in) && ys.contiguous &&
           base + AMP_ALG_SCAN_CHUNK <= n;
}
// The output as the accumulator type, for the direct path (which only
// runs where they are one type).
AMP_FI AMP_ALG_R *direct_out(AMP_ALG_O *y) { return (AMP_ALG_R *)(void *)y; }
#endif

// A GPU thread's items of a whole contiguous chunk in registers, every one
// loaded before any is stored to tile_static (scan_load_c says why).
struct scan_regs {
    AMP_ALG_R v[AMP_ALG_SCAN_ITEMS];
    AMP_FI void read(const amp__alg_in &in, long long base, int l)
    {
        AMP_ALG_UNROLL for (int k = 0; k < AMP_ALG_SCAN_ITEMS; ++k)
            v[k] = amp__alg_map<true>(in, base + k * AMP_ALG_TILE + l);
    }
    AMP_FI void store(AMP_ALG_R *s, int l) const
    {
        AMP_ALG_UNROLL for (int k = 0; k < AMP_ALG_SCAN_ITEMS; ++k) s[striped_at(k, l)] = v[k];
    }
    // Their total, in any order (the operators commute), as eight chains.
    template <class F> AMP_FI AMP_ALG_R total_f() const
    {
        enum { C = AMP_ALG_SCAN_ITEMS % 8 == 0 ? 8 : 1 };
        AMP_ALG_R t[C];
        AMP_ALG_UNROLL for (int c = 0; c < C; ++c) t[c] = v[c];
        AMP_ALG_UNROLL for (int k = C; k < AMP_ALG_SCAN_ITEMS; ++k) t[k % C] = F::f(t[k % C], v[k]);
        AMP_ALG_UNROLL for (int c = 1; c < C; ++c) t[0] = F::f(t[0], t[c]);
        return t[0];
    }
    AMP_FI AMP_ALG_R total(int op) const
    {
        switch (op) {
#define AMP__ALG_REGS_CASE(v, F) \
    case v: return total_f<F>();
            AMP_ALG_OPS(AMP__ALG_REGS_CASE)
#undef AMP__ALG_REGS_CASE
        default: return identity<AMP_ALG_R>(op);
        }
    }
};

AMP_FI void scan_load(const amp__alg_in &in, AMP_ALG_R *s, long long base, long long n, int l, int op, bool direct)
{
    if (direct) return;
    const AMP_ALG_R id = identity<AMP_ALG_R>(op);
    if (AMP_ALG_IN_CONTIG(in) && base + AMP_ALG_SCAN_CHUNK <= n) {
        AMP_ALG_UNROLL for (int k = 0; k < AMP_ALG_SCAN_ITEMS; ++k) {
            const int j = k * AMP_ALG_TILE + l;
            s[AMP_ALG_PAD(j)] = amp__alg_map<true>(in, base + j);
        }
    } else if (AMP_ALG_IN_CONTIG(in)) {
        scan_load_c<true>(in, s, base, n, l, id);
    } else {
        scan_load_c<false>(in, s, base, n, l, id);
    }
}

// A GPU tile starts reading the chunk of its launch index while thread 0's
// atomic takes its chunk: tiles start in index order, mostly, so the chunk
// it takes is mostly that one. keep() checks the guess after the barrier
// and stores what was read, or says to read again; forward progress still
// rests on the atomic's order alone. Off (the CPU accelerator): nothing.
template <bool On> struct scan_guess {
    AMP_FI void read(const amp__alg_in &, long long, long long, int) {}
    AMP_FI bool keep(long long, AMP_ALG_R *, int) const { return false; }
    AMP_FI AMP_ALG_R total(int op) const { return identity<AMP_ALG_R>(op); }
};
template <> struct scan_guess<true> {
    scan_regs r;
    long long guess = -1;
    AMP_FI void read(const amp__alg_in &in, long long g, long long n, int l)
    {
        if (!AMP_ALG_IN_CONTIG(in) || (g + 1) * AMP_ALG_SCAN_CHUNK > n) return;
        guess = g;
        r.read(in, g * AMP_ALG_SCAN_CHUNK, l);
    }
    AMP_FI bool keep(long long tile, AMP_ALG_R *s, int l) const
    {
        if (tile != guess) return false;
        r.store(s, l);
        return true;
    }
    AMP_FI AMP_ALG_R total(int op) const { return r.total(op); }
};

// Inclusive scan of this thread's ITEMS consecutive elements in place, as
// SEGS runs scanned side by side (on the CPU 8, so that eight independent
// chains of adds overlap; a GPU thread's few items form one run); returns
// their total.
#define AMP_ALG_SCAN_SEGS (AMP_ALG_TILE == 1 ? 8 : 1)
static_assert(AMP_ALG_SCAN_ITEMS % AMP_ALG_SCAN_SEGS == 0, "scan items must divide into the segments");
// Where item k of a thread's run of L items that starts at chunk position
// j0 sits in tile_static memory, from AMP_ALG_PAD(j0): a constant once
// unrolled when L and the padding's period divide one another (the padding
// then falls at the same items of every run), so that one address serves
// the whole run.
template <int L> AMP_FI int run_at(int j0, int k)
{
    enum { P = 1 << AMP_ALG_PAD_SHIFT };
    return (L % P == 0 || P % L == 0) ? AMP_ALG_PAD(k) : AMP_ALG_PAD(j0 + k) - AMP_ALG_PAD(j0);
}
#ifdef AMP_CPU
// The CPU accelerator's flow (its definition of amp_alg_scan): a thread
// scans its run in place, then adds the prefix in front of it.
template <class F> AMP_FI AMP_ALG_R scan_items_f(AMP_ALG_R *s, int l)
{
    enum { S = AMP_ALG_SCAN_SEGS, L = AMP_ALG_SCAN_ITEMS / AMP_ALG_SCAN_SEGS };
    const int j0 = l * AMP_ALG_SCAN_ITEMS;
    AMP_ALG_R run[S];
    AMP_ALG_UNROLL for (int g = 0; g < S; ++g) run[g] = s[AMP_ALG_PAD(j0 + g * L)];
    AMP_ALG_UNROLL for (int k = 1; k < L; ++k) {
        AMP_ALG_UNROLL for (int g = 0; g < S; ++g) {
            const int j = AMP_ALG_PAD(j0 + g * L + k);
            run[g] = F::f(run[g], s[j]);
            s[j] = run[g];
        }
    }
    AMP_ALG_R total = run[0];
    AMP_ALG_UNROLL for (int g = 1; g < S; ++g) total = F::f(total, run[g]);
    return total;
}
// The same reading the mapped input and writing y[base..] (scan_direct).
template <class F> AMP_FI AMP_ALG_R scan_items_direct_f(const amp__alg_in &in, AMP_ALG_R *y, long long base)
{
    enum { S = AMP_ALG_SCAN_SEGS, L = AMP_ALG_SCAN_ITEMS / AMP_ALG_SCAN_SEGS };
    AMP_ALG_R run[S];
    for (int g = 0; g < S; ++g) {
        run[g] = amp__alg_map<true>(in, base + g * L);
        y[base + g * L] = run[g];
    }
    for (int k = 1; k < L; ++k) {
        for (int g = 0; g < S; ++g) {
            const long long j = base + g * L + k;
            run[g] = F::f(run[g], amp__alg_map<true>(in, j));
            y[j] = run[g];
        }
    }
    AMP_ALG_R total = run[0];
    for (int g = 1; g < S; ++g) total = F::f(total, run[g]);
    return total;
}
AMP_FI AMP_ALG_R scan_items(int op, AMP_ALG_R *s, int l, const amp__alg_in &in, AMP_ALG_R *y, long long base,
                            bool direct)
{
    switch (op) {
#define AMP__ALG_SCAN_CASE(v, F) \
    case v: return direct ? scan_items_direct_f<F>(in, y, base) : scan_items_f<F>(s, l);
        AMP_ALG_OPS(AMP__ALG_SCAN_CASE)
#undef AMP__ALG_SCAN_CASE
    default: return identity<AMP_ALG_R>(op);
    }
}

// Prefix pre in front of this thread's items (segment by segment, as
// scan_items_f left them): inclusive pre + s[j], or exclusive (the element
// before's inclusive value).
template <class F> AMP_FI void scan_finish_f(AMP_ALG_R *s, int l, AMP_ALG_R pre, bool excl)
{
    enum { S = AMP_ALG_SCAN_SEGS, L = AMP_ALG_SCAN_ITEMS / AMP_ALG_SCAN_SEGS };
    AMP_ALG_UNROLL for (int g = 0; g < S; ++g) {
        const int j0 = l * AMP_ALG_SCAN_ITEMS + g * L;
        const AMP_ALG_R segment = s[AMP_ALG_PAD(j0 + L - 1)];
        if (excl) {
            AMP_ALG_R prev = pre;
            AMP_ALG_UNROLL for (int k = 0; k < L; ++k) {
                const int j = AMP_ALG_PAD(j0 + k);
                const AMP_ALG_R cur = F::f(pre, s[j]);
                s[j] = prev;
                prev = cur;
            }
        } else {
            AMP_ALG_UNROLL for (int k = 0; k < L; ++k) {
                const int j = AMP_ALG_PAD(j0 + k);
                s[j] = F::f(pre, s[j]);
            }
        }
        pre = F::f(pre, segment);
    }
}
AMP_FI void scan_finish(int op, AMP_ALG_R *s, int l, AMP_ALG_R pre, bool excl)
{
    switch (op) {
#define AMP__ALG_FINISH_CASE(v, F) \
    case v: scan_finish_f<F>(s, l, pre, excl); return;
        AMP_ALG_OPS(AMP__ALG_FINISH_CASE)
#undef AMP__ALG_FINISH_CASE
    default: return;
    }
}

// Store the tile's chunk from s, striped.
AMP_FI void scan_store(AMP_ALG_O *y, const shape &ys, const AMP_ALG_R *s, long long base, long long n, int l,
                       bool direct)
{
    if (direct) return;
    if (ys.contiguous && base + AMP_ALG_SCAN_CHUNK <= n) {
        AMP_ALG_O *const out = y + base + l;
        AMP_ALG_UNROLL for (int k = 0; k < AMP_ALG_SCAN_ITEMS; ++k)
            out[k * AMP_ALG_TILE] = (AMP_ALG_O)s[striped_at(k, l)];
    } else {
        AMP_ALG_UNROLL for (int k = 0; k < AMP_ALG_SCAN_ITEMS; ++k) {
            const int j = k * AMP_ALG_TILE + l;
            if (base + j < n) put_unrolled(y, ys, base + j, (AMP_ALG_O)s[AMP_ALG_PAD(j)]);
        }
    }
}

#else
// A GPU tile's flow (the kernel's comment): a thread first only totals its
// run, reading tile_static and writing nothing back, and scans it once it
// knows what precedes it within the tile, while the first wave waits on
// the look-back; the tile's prefix, the same for every item, is combined in
// at the store. Each item goes through tile_static five times, not six, and
// only the first wave waits out the look-back before scanning its items.
template <class F> AMP_FI AMP_ALG_R scan_total_f(const AMP_ALG_R *s, int l)
{
    enum { L = AMP_ALG_SCAN_ITEMS };
    const int j0 = l * L;
    const AMP_ALG_R *const r = s + AMP_ALG_PAD(j0);
    AMP_ALG_R t = r[run_at<L>(j0, 0)];
    AMP_ALG_UNROLL for (int k = 1; k < L; ++k) t = F::f(t, r[run_at<L>(j0, k)]); // the scan's order
    return t;
}
AMP_FI AMP_ALG_R scan_total(int op, const AMP_ALG_R *s, int l)
{
    switch (op) {
#define AMP__ALG_TOTAL_CASE(v, F) \
    case v: return scan_total_f<F>(s, l);
        AMP_ALG_OPS(AMP__ALG_TOTAL_CASE)
#undef AMP__ALG_TOTAL_CASE
    default: return identity<AMP_ALG_R>(op);
    }
}
// This thread's run scanned from within (what precedes it in the tile),
// inclusive or exclusive. Every item of a group is read before the first is
// written back: the compiler cannot tell the padded addresses apart, and a
// store between two reads would make each read wait for the one before (a
// chain of tile_static latencies, one an item). Groups of at most
// SCAN_GROUP items bound the registers this takes.
template <class F> AMP_FI void scan_within_f(AMP_ALG_R *s, int l, AMP_ALG_R within, bool excl)
{
    enum { L = AMP_ALG_SCAN_ITEMS, G = AMP_ALG_SCAN_GROUP_OF(L) };
    const int j0 = l * L;
    AMP_ALG_R *const r = s + AMP_ALG_PAD(j0), v[G];
    AMP_ALG_R carry = within;
    AMP_ALG_UNROLL for (int g = 0; g < L; g += G) {
        AMP_ALG_UNROLL for (int k = 0; k < G; ++k) v[k] = r[run_at<L>(j0, g + k)];
        AMP_ALG_UNROLL for (int k = 0; k < G; ++k) {
            const AMP_ALG_R next = F::f(carry, v[k]);
            v[k] = excl ? carry : next;
            carry = next;
        }
        AMP_ALG_UNROLL for (int k = 0; k < G; ++k) r[run_at<L>(j0, g + k)] = v[k];
    }
}
// Store the tile's chunk from s, striped, each item after the tile's prefix.
template <class F>
AMP_FI void scan_store_after_f(AMP_ALG_O *y, const shape &ys, const AMP_ALG_R *s, long long base, long long n, int l,
                               AMP_ALG_R pre)
{
    if (ys.contiguous && base + AMP_ALG_SCAN_CHUNK <= n) {
        AMP_ALG_O *const out = y + base + l;
        AMP_ALG_UNROLL for (int k = 0; k < AMP_ALG_SCAN_ITEMS; ++k)
            out[k * AMP_ALG_TILE] = (AMP_ALG_O)F::f(pre, s[striped_at(k, l)]);
    } else {
        AMP_ALG_UNROLL for (int k = 0; k < AMP_ALG_SCAN_ITEMS; ++k) {
            const int j = k * AMP_ALG_TILE + l;
            if (base + j < n) put_unrolled(y, ys, base + j, (AMP_ALG_O)F::f(pre, s[AMP_ALG_PAD(j)]));
        }
    }
}
AMP_FI void scan_within(int op, AMP_ALG_R *s, int l, AMP_ALG_R within, bool excl)
{
    switch (op) {
#define AMP__ALG_WITHIN_CASE(v, F) \
    case v: scan_within_f<F>(s, l, within, excl); return;
        AMP_ALG_OPS(AMP__ALG_WITHIN_CASE)
#undef AMP__ALG_WITHIN_CASE
    default: return;
    }
}
AMP_FI void scan_store_after(int op, AMP_ALG_O *y, const shape &ys, const AMP_ALG_R *s, long long base, long long n,
                             int l, AMP_ALG_R pre)
{
    switch (op) {
#define AMP__ALG_AFTER_CASE(v, F) \
    case v: scan_store_after_f<F>(y, ys, s, base, n, l, pre); return;
        AMP_ALG_OPS(AMP__ALG_AFTER_CASE)
#undef AMP__ALG_AFTER_CASE
    default: return;
    }
}
#endif // AMP_CPU

// What precedes the first tile: the caller's initial value, else the
// documented identity (start: +0.0 for a floating-point sum).
AMP_FI AMP_ALG_R scan_first(int op, AMP_ALG_R init, bool has_init) { return has_init ? init : start<AMP_ALG_R>(op); }
// What a tile publishes as its aggregate: the first tile's is its inclusive
// prefix, so the initial value goes in front of it.
AMP_FI AMP_ALG_R scan_published(int op, long long tile, AMP_ALG_R first, AMP_ALG_R agg)
{
    return tile == 0 ? combine(op, first, agg) : agg;
}

#ifdef AMP_CPU
// The first wave: exclusive scan of the waves' totals in ws (lane 0), then
// the look-back; returns what precedes the tile (first for the first tile).
AMP_FI AMP_ALG_R scan_tile_prefix(int op, AMP_ALG_R *ws, unsigned long long *state, AMP_ALG_R *aggs,
                                  AMP_ALG_R *incls, long long tile, int lane, AMP_ALG_R first)
{
    AMP_ALG_R agg = identity<AMP_ALG_R>(op);
    if (lane == 0) {
        for (int w = 0; w < AMP_ALG_WAVES; ++w) {
            const AMP_ALG_R v = ws[w];
            ws[w] = agg;
            agg = combine(op, agg, v);
        }
    }
    agg = shfl_from(agg, 0);
    const AMP_ALG_R pre = look_back(op, state, aggs, incls, tile, scan_published(op, tile, first, agg), lane);
    return tile == 0 ? first : pre;
}
#endif

} // namespace alg
} // namespace amp

// Single-pass scan of n mapped elements into y (inclusive, or exclusive
// with bit 0 of flags), from init where bit 1 is set (else the identity).
// state[0..ntiles) and state[ntiles] (the tile counter) must be zero at
// launch (amp_alg_clear); tiles take their chunk in the order they start.
//
// A GPU tile that loads a whole contiguous chunk totals it from the
// registers it is loaded into and publishes that aggregate as soon as the
// chunk is in tile_static, before any thread has totalled its own run: the
// tiles after it, which start a few nanoseconds later, look back at about
// the time it would otherwise publish, and would wait another round trip
// to memory (with the flow of the helpers above, scan_total_f: a few
// percent of the device copy's rate, docs/algorithms.md).
#ifndef AMP_CPU
AMP_TILED_KERNEL(amp_alg_scan, amp::tiled_index<AMP_ALG_TILE> t, AMP_ALG_IN_PARAMS,
                 amp::array_view<AMP_ALG_O, 1> amp__y, amp::alg::shape amp__ys,
                 amp::array_view<unsigned long long, 1> amp__state, amp::array_view<AMP_ALG_R, 1> amp__aggs,
                 amp::array_view<AMP_ALG_R, 1> amp__incls, long long amp__n, long long amp__ntiles, int amp__op,
                 int amp__flags, AMP_ALG_R amp__init)
{
    tile_static AMP_ALG_R amp__s[AMP_ALG_PAD(AMP_ALG_SCAN_CHUNK) + 1];
    tile_static AMP_ALG_R amp__ws[AMP_ALG_WAVES];
    tile_static AMP_ALG_R amp__pre;
    tile_static long long amp__tile;
    tile_static AMP_ALG_R amp__wsum[AMP_ALG_WAVES];
    const int l = t.local[0];
    const int lane = l % AMP_ALG_WAVE;
    if (l == 0) amp__tile = (long long)atomicAdd(amp__state.data() + amp__ntiles, 1ull);
    const amp__alg_in amp__in0 = AMP_ALG_IN_MAKE;
    amp::alg::scan_guess<AMP_ALG_SCAN_GUESS != 0> amp__guess;
    amp__guess.read(amp__in0, (long long)t.tile[0], amp__n, l);
    t.barrier.wait();
    const long long tile = amp__tile;
    const long long base = tile * AMP_ALG_SCAN_CHUNK;
    const amp__alg_in amp__in = AMP_ALG_IN_MAKE;
    // early: the whole tile loaded a whole contiguous chunk (the same answer
    // in every thread) and publishes its total before the look-back.
    bool early = true;
    AMP_ALG_R mine = amp::alg::identity<AMP_ALG_R>(amp__op);
    if (amp__guess.keep(tile, amp__s, l)) {
        mine = amp__guess.total(amp__op);
    } else if (AMP_ALG_IN_CONTIG(amp__in) && base + AMP_ALG_SCAN_CHUNK <= amp__n) {
        amp::alg::scan_regs r;
        r.read(amp__in, base, l);
        r.store(amp__s, l);
        mine = r.total(amp__op);
    } else {
        early = false;
        amp::alg::scan_load(amp__in, amp__s, base, amp__n, l, amp__op, false);
    }
    if (early) {
        mine = amp::alg::wave_reduce(amp__op, mine);
        if (lane == 0) amp__wsum[l / AMP_ALG_WAVE] = mine;
    }
    t.barrier.wait();
    const AMP_ALG_R first = amp::alg::scan_first(amp__op, amp__init, (amp__flags & 2) != 0);
    AMP_ALG_R agg_early = amp::alg::identity<AMP_ALG_R>(amp__op);
    if (early && l < AMP_ALG_WAVE) {
        AMP_ALG_UNROLL for (int i = 0; i < AMP_ALG_WAVES; ++i)
            agg_early = amp::alg::combine(amp__op, agg_early, amp__wsum[i]);
        agg_early = amp::alg::scan_published(amp__op, tile, first, agg_early);
        if (l == 0) amp::alg::publish_aggregate(amp__state.data(), amp__aggs.data(), amp__incls.data(), tile, agg_early);
    }
    const AMP_ALG_R run = amp::alg::scan_total(amp__op, amp__s, l);
    const AMP_ALG_R winc = amp::alg::wave_scan(amp__op, run, lane);
    const AMP_ALG_R wup = amp::alg::shfl_up(winc, 1);
    if (lane == AMP_ALG_WAVE - 1) amp__ws[l / AMP_ALG_WAVE] = winc;
    t.barrier.wait();
    // Every thread folds the totals of the waves before its own (ws is read,
    // never written, from here on); the first wave folds them all for the
    // look-back, where the tile has not published its total already.
    const int w = l / AMP_ALG_WAVE;
    AMP_ALG_R wpre = amp::alg::identity<AMP_ALG_R>(amp__op), agg = wpre;
    AMP_ALG_UNROLL for (int i = 0; i < AMP_ALG_WAVES; ++i) {
        if (i == w) wpre = agg;
        agg = amp::alg::combine(amp__op, agg, amp__ws[i]);
    }
    if (l < AMP_ALG_WAVE) {
        const AMP_ALG_R pre =
            amp::alg::look_back(amp__op, amp__state.data(), amp__aggs.data(), amp__incls.data(), tile,
                                early ? agg_early : amp::alg::scan_published(amp__op, tile, first, agg), lane, early);
        if (l == 0) amp__pre = tile == 0 ? first : pre;
    }
    const AMP_ALG_R within = lane == 0 ? wpre : amp::alg::combine(amp__op, wpre, wup);
    amp::alg::scan_within(amp__op, amp__s, l, within, (amp__flags & 1) != 0);
    t.barrier.wait();
    amp::alg::scan_store_after(amp__op, amp__y.data(), amp__ys, amp__s, base, amp__n, l, amp__pre);
}
#else // the CPU accelerator: the flow of the helpers scan_items and scan_finish
AMP_TILED_KERNEL(amp_alg_scan, amp::tiled_index<AMP_ALG_TILE> t, AMP_ALG_IN_PARAMS,
                 amp::array_view<AMP_ALG_O, 1> amp__y, amp::alg::shape amp__ys,
                 amp::array_view<unsigned long long, 1> amp__state, amp::array_view<AMP_ALG_R, 1> amp__aggs,
                 amp::array_view<AMP_ALG_R, 1> amp__incls, long long amp__n, long long amp__ntiles, int amp__op,
                 int amp__flags, AMP_ALG_R amp__init)
{
    tile_static AMP_ALG_R amp__s[AMP_ALG_PAD(AMP_ALG_SCAN_CHUNK) + 1];
    tile_static AMP_ALG_R amp__ws[AMP_ALG_WAVES];
    tile_static AMP_ALG_R amp__pre;
    tile_static long long amp__tile;
    const int l = t.local[0];
    const int lane = l % AMP_ALG_WAVE;
    if (l == 0) amp__tile = (long long)atomicAdd(amp__state.data() + amp__ntiles, 1ull);
    const amp__alg_in amp__in0 = AMP_ALG_IN_MAKE;
    amp::alg::scan_guess<AMP_ALG_SCAN_GUESS != 0> amp__guess;
    amp__guess.read(amp__in0, (long long)t.tile[0], amp__n, l);
    t.barrier.wait();
    const long long tile = amp__tile;
    const long long base = tile * AMP_ALG_SCAN_CHUNK;
    const amp__alg_in amp__in = AMP_ALG_IN_MAKE;
    const bool direct = amp::alg::scan_direct(amp__in, amp__ys, base, amp__n);
    if (!amp__guess.keep(tile, amp__s, l)) amp::alg::scan_load(amp__in, amp__s, base, amp__n, l, amp__op, direct);
    t.barrier.wait();
    const amp__alg_in amp__in2 = AMP_ALG_IN_MAKE;
    const AMP_ALG_R run =
        amp::alg::scan_items(amp__op, amp__s, l, amp__in2, amp::alg::direct_out(amp__y.data()), base, direct);
    const AMP_ALG_R winc = amp::alg::wave_scan(amp__op, run, lane);
    const AMP_ALG_R wup = amp::alg::shfl_up(winc, 1);
    if (lane == AMP_ALG_WAVE - 1) amp__ws[l / AMP_ALG_WAVE] = winc;
    t.barrier.wait();
    if (l < AMP_ALG_WAVE) {
        const AMP_ALG_R pre = amp::alg::scan_tile_prefix(amp__op, amp__ws, amp__state.data(), amp__aggs.data(),
                                                         amp__incls.data(), tile, lane,
                                                         amp::alg::scan_first(amp__op, amp__init, (amp__flags & 2) != 0));
        if (l == 0) amp__pre = pre;
    }
    t.barrier.wait();
    const AMP_ALG_R wexc = lane == 0 ? amp::alg::identity<AMP_ALG_R>(amp__op) : wup;
    const AMP_ALG_R tpre =
        amp::alg::combine(amp__op, amp::alg::combine(amp__op, amp__pre, amp__ws[l / AMP_ALG_WAVE]), wexc);
    amp::alg::scan_finish(amp__op, direct ? amp::alg::direct_out(amp__y.data()) + base : amp__s, l, tpre,
                          (amp__flags & 1) != 0);
    t.barrier.wait();
    amp::alg::scan_store(amp__y.data(), amp__ys, amp__s, base, amp__n, l, direct);
}
#endif
#endif // AMP_ALG_WITH_SCAN
