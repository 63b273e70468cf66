// amp_algorithms.hip — the kernels of hipamp's algorithms (reduce, single-pass scan, stream compaction, LSD radix sort, fill, iota), one source for every accelerator; lib/alg_program.c compiles it after amp_algorithms_lib.hip and the functions it generates.
//
// Every kernel is a tiled kernel over tiles of AMP_ALG_TILE threads (128 by default on
// a GPU, 1 on the CPU accelerator, where a tile is one work-item running its
// items as a loop). A tile's chunk is AMP_ALG_TILE * ITEMS consecutive
// elements; thread l takes elements l, l + TILE, l + 2*TILE, ... of it, so
// a GPU wave reads consecutive addresses and the CPU's one work-item reads a
// contiguous run. Barriers sit only in kernel bodies, never in helpers or
// switches, so that the CPU accelerator runs every kernel as loops (its
// loop transformation refuses anything else).
//
// Configuration read here (besides amp_algorithms_lib.hip's):
//   AMP_ALG_WITH_REDUCE / _SCAN / _SELECT / _IOTA / _FILL / _SORT / _CLEAR
//                    which kernels the program holds
//   AMP_ALG_OPS(X)   X(amp_op value, operator struct) for each operator the
//                    program accepts at run time (the op argument)
//   AMP_ALG_REDUCE_ITEMS, AMP_ALG_SCAN_ITEMS, AMP_ALG_SORT_ITEMS
//                    items per thread (powers of two)
// and what lib/alg_program.c generates: struct amp__alg_in (the inputs and
// scalars), AMP_ALG_IN_PARAMS (them as kernel parameters), AMP_ALG_IN_MAKE,
// AMP_ALG_IN_CONTIG(in), amp__alg_map<C>(in, i) (the mapped i-th element),
// amp__alg_post(r); for compaction amp__alg_elem<C>(in, i) and
// amp__alg_pred(x, i, in); for sorting AMP_ALG_K (key type), AMP_ALG_KU
// (its bits), AMP_ALG_V (value word, when sorting pairs), AMP_ALG_RADIX_BITS
// and AMP_ALG_PASSES; for fill AMP_ALG_E.

// tile_static index of a chunk position: one padding element every
// 2^AMP_ALG_PAD_SHIFT, so that the threads of a wave reading their items in
// a row (stride ITEMS) start on different banks: every 32, or every 64 when
// a thread has 64 items (64 + 1 apart puts 32 threads on 32 banks, where
// 64 + 2 would put two on each). No padding on the CPU.
#define AMP_ALG_PAD_SHIFT (AMP_ALG_SCAN_ITEMS == 64 ? 6 : 5)
#define AMP_ALG_PAD(j) ((j) + (AMP_ALG_TILE > 1 ? ((j) >> AMP_ALG_PAD_SHIFT) : 0))

// ================================================================ reduce
#if AMP_ALG_WITH_REDUCE
namespace amp {
namespace alg {

// This thread's part of [lo, hi) under the compile-time operator F, folded
// over the wave (every lane of the wave returns it).
template <class F, bool C>
AMP_FI AMP_ALG_R reduce_range(const amp__alg_in &in, long long lo, long long hi, int l)
{
    enum { T = AMP_ALG_TILE, K = AMP_ALG_REDUCE_ITEMS };
    AMP_ALG_R acc[K];
    AMP_ALG_UNROLL for (int k = 0; k < K; ++k) acc[k] = F::template id<AMP_ALG_R>();
    long long base = lo;
#if AMP_ALG_REDUCE_VECTOR
    // A GPU reading contiguous inputs whose first elements are aligned
    // takes V consecutive elements a thread at once (the compiler makes
    // them one 16-byte load an input, as it can prove the alignment from
    // the assumption and the index being a multiple of V): a quarter of
    // the load instructions for 4-byte elements. Lanes still cover one
    // contiguous stretch of T * V elements together.
    if constexpr (C && T > 1 && AMP_ALG_IN_VEC > 1 && K % AMP_ALG_IN_VEC == 0) {
        enum { V = AMP_ALG_IN_VEC };
        if (AMP_ALG_IN_ALIGNED(in) && lo % V == 0) {
            amp__alg_in va = in;
            AMP_ALG_IN_ASSUME_ALIGNED(va);
            for (; base + (long long)T * K <= hi; base += (long long)T * K) {
                const long long q = base / V + l;
                AMP_ALG_UNROLL for (int g = 0; g < K / V; ++g) {
                    const long long i0 = (q + (long long)g * T) * V;
                    AMP_ALG_UNROLL for (int e = 0; e < V; ++e)
                        acc[g * V + e] = F::f(acc[g * V + e], amp__alg_map<true>(va, i0 + e));
                }
            }
        }
    }
#endif
    for (; base + (long long)T * K <= hi; base += (long long)T * K) {
        AMP_ALG_UNROLL for (int k = 0; k < K; ++k)
            acc[k] = F::f(acc[k], amp__alg_map<C>(in, base + (long long)k * T + l));
    }
    AMP_ALG_UNROLL for (int k = 0; k < K; ++k) {
        const long long i = base + (long long)k * T + l;
        if (i < hi) acc[k] = F::f(acc[k], amp__alg_map<C>(in, i));
    }
    // Pairwise, which also keeps floating-point sums accurate (K is a power
    // of two; constant trip counts, so the GPU keeps acc in registers).
    AMP_ALG_UNROLL for (int lvl = 1; lvl <= amp::alg::log2i(K); ++lvl) {
        AMP_ALG_UNROLL for (int k = 0; k < (K >> lvl); ++k) acc[k] = F::f(acc[k], acc[k + (K >> lvl)]);
    }
    return wave_reduce_f<F>(acc[0]);
}

AMP_FI AMP_ALG_R reduce_part(int op, const amp__alg_in &in, long long lo, long long hi, int l)
{
    const bool c = AMP_ALG_IN_CONTIG(in);
    switch (op) {
#define AMP__ALG_REDUCE_CASE(v, F) \
    case v: return c ? reduce_range<F, true>(in, lo, hi, l) : reduce_range<F, false>(in, lo, hi, l);
        AMP_ALG_OPS(AMP__ALG_REDUCE_CASE)
#undef AMP__ALG_REDUCE_CASE
    default: return identity<AMP_ALG_R>(op);
    }
}

// The partial results p[0..np): thread l folds every TILE-th, then its wave.
// A GPU reduction leaves thousands of them (lib/alg_program.c): eight
// independent folds keep eight loads in flight a thread.
AMP_FI AMP_ALG_R reduce_parts(int op, const AMP_ALG_R *p, long long np, int l)
{
    enum { T = AMP_ALG_TILE, K = 8 };
    AMP_ALG_R v[K];
    AMP_ALG_UNROLL for (int k = 0; k < K; ++k) v[k] = identity<AMP_ALG_R>(op);
    long long i = l;
    for (; i + (long long)(K - 1) * T < np; i += (long long)K * T) {
        AMP_ALG_UNROLL for (int k = 0; k < K; ++k) v[k] = combine(op, v[k], p[i + (long long)k * T]);
    }
    for (; i < np; i += T) v[0] = combine(op, v[0], p[i]);
    AMP_ALG_UNROLL for (int k = 1; k < K; ++k) v[0] = combine(op, v[0], v[k]);
    return wave_reduce(op, v[0]);
}

// The reduction's result from the combined value r of every element, to
// res[0]: init (has_init) in front, then the post expression, in the output
// type.
AMP_FI void reduce_result(AMP_ALG_O *res, int op, AMP_ALG_R r, AMP_ALG_R init, bool has_init)
{
    if (has_init) r = combine(op, init, r);
    res[0] = (AMP_ALG_O)amp__alg_post(r);
}

} // namespace alg
} // namespace amp

// Where a single tile's result goes: its own parameter where the output
// type is not the accumulator's, else part[0].
#if AMP_ALG_SPLIT_OUT
#define AMP_ALG_RES_PARAM , amp::array_view<AMP_ALG_O, 1> amp__res
#define AMP_ALG_RES_PTR amp__res.data()
#else
#define AMP_ALG_RES_PARAM
#define AMP_ALG_RES_PTR ((AMP_ALG_O *)(void *)amp__part.data())
#endif

// Tile t reduces elements [t * per, (t + 1) * per) into part[t]; with bit
// 0 of flags (a single tile) it writes the result instead (AMP_ALG_RES_PTR),
// from init where bit 1 is set.
AMP_TILED_KERNEL(amp_alg_reduce, amp::tiled_index<AMP_ALG_TILE> t, AMP_ALG_IN_PARAMS,
                 amp::array_view<AMP_ALG_R, 1> amp__part AMP_ALG_RES_PARAM, long long amp__n, long long amp__per,
                 int amp__op, int amp__flags, AMP_ALG_R amp__init)
{
    tile_static AMP_ALG_R amp__ws[AMP_ALG_WAVES];
    const int l = t.local[0];
    const amp__alg_in amp__in = AMP_ALG_IN_MAKE;
    const long long lo = (long long)t.tile[0] * amp__per;
    const long long hi = lo + amp__per < amp__n ? lo + amp__per : amp__n;
    const AMP_ALG_R v = amp::alg::reduce_part(amp__op, amp__in, lo, hi, l);
    if (l % AMP_ALG_WAVE == 0) amp__ws[l / AMP_ALG_WAVE] = v;
    t.barrier.wait();
    if (l == 0) {
        AMP_ALG_R r = amp__ws[0];
        for (int w = 1; w < AMP_ALG_WAVES; ++w) r = amp::alg::combine(amp__op, r, amp__ws[w]);
        if (amp__flags & 1) amp::alg::reduce_result(AMP_ALG_RES_PTR, amp__op, r, amp__init, (amp__flags & 2) != 0);
        else amp__part.data()[t.tile[0]] = r;
    }
}

// One tile folds the np partial results and writes the result to res[0]
// (reduce_result; np 0: from the identity).
AMP_TILED_KERNEL(amp_alg_reduce_final, amp::tiled_index<AMP_ALG_TILE> t,
                 amp::array_view<const AMP_ALG_R, 1> amp__part, long long amp__np,
                 amp::array_view<AMP_ALG_O, 1> amp__res, int amp__op, AMP_ALG_R amp__init, int amp__has_init)
{
    tile_static AMP_ALG_R amp__ws[AMP_ALG_WAVES];
    const int l = t.local[0];
    const AMP_ALG_R v = amp::alg::reduce_parts(amp__op, amp__part.data(), amp__np, l);
    if (l % AMP_ALG_WAVE == 0) amp__ws[l / AMP_ALG_WAVE] = v;
    t.barrier.wait();
    if (l == 0) {
        AMP_ALG_R r = amp__ws[0];
        for (int w = 1; w < AMP_ALG_WAVES; ++w) r = amp::alg::combine(amp__op, r, amp__ws[w]);
        amp::alg::reduce_result(amp__res.data(), amp__op, r, amp__init, amp__has_init != 0);
    }
}
#endif // AMP_ALG_WITH_REDUCE

// ============================================================ clear, iota
#if AMP_ALG_WITH_CLEAR
// a[0..n) = 0, every launched thread taking every stride-th word.
AMP_TILED_KERNEL(amp_alg_clear, amp::tiled_index<AMP_ALG_TILE> t, amp::array_view<unsigned long long, 1> amp__a,
                 long long amp__n, long long amp__stride)
{
    unsigned long long *a = amp__a.data();
    for (long long i = t.global[0]; i < amp__n; i += amp__stride) a[i] = 0;
}
#endif

#if AMP_ALG_WITH_IOTA
namespace amp {
namespace alg {
// start + i * step: floating point in double (then rounded once), integers
// wrapping.
template <class T> AMP_FI T iota_at(T start, T step, long long i)
{
    if constexpr (num<T>::is_float) return (T)((double)start + (double)i * (double)step);
    else return add(start, mul(step, (T)i));
}
} // namespace alg
} // namespace amp

AMP_TILED_KERNEL(amp_alg_iota, amp::tiled_index<AMP_ALG_TILE> t, amp::array_view<AMP_ALG_T, 1> amp__y,
                 amp::alg::shape amp__ys, AMP_ALG_T amp__start, AMP_ALG_T amp__step, long long amp__n,
                 long long amp__per)
{
    const int l = t.local[0];
    const long long lo = (long long)t.tile[0] * amp__per;
    const long long hi = lo + amp__per < amp__n ? lo + amp__per : amp__n;
    AMP_ALG_T *y = amp__y.data();
    if (amp__ys.contiguous) {
        for (long long i = lo + l; i < hi; i += AMP_ALG_TILE) y[i] = amp::alg::iota_at(amp__start, amp__step, i);
    } else {
        for (long long i = lo + l; i < hi; i += AMP_ALG_TILE)
            amp::alg::put(y, amp__ys, i, amp::alg::iota_at(amp__start, amp__step, i));
    }
}
#endif

#if AMP_ALG_WITH_FILL
AMP_TILED_KERNEL(amp_alg_fill, amp::tiled_index<AMP_ALG_TILE> t, amp::array_view<AMP_ALG_E, 1> amp__y,
                 amp::alg::shape amp__ys, AMP_ALG_E amp__value, long long amp__n, long long amp__per)
{
    const int l = t.local[0];
    const long long lo = (long long)t.tile[0] * amp__per;
    const long long hi = lo + amp__per < amp__n ? lo + amp__per : amp__n;
    AMP_ALG_E *y = amp__y.data();
    if (amp__ys.contiguous) {
        for (long long i = lo + l; i < hi; i += AMP_ALG_TILE) y[i] = amp__value;
    } else {
        for (long long i = lo + l; i < hi; i += AMP_ALG_TILE) amp::alg::put(y, amp__ys, i, amp__value);
    }
}
#endif

// ================================================================== scan
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
            if (base + j < n) put(y, ys, base + j, (AMP_ALG_O)s[AMP_ALG_PAD(j)]);
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
            if (base + j < n) put(y, ys, base + j, (AMP_ALG_O)F::f(pre, s[AMP_ALG_PAD(j)]));
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
// identity.
AMP_FI AMP_ALG_R scan_first(int op, AMP_ALG_R init, bool has_init) { return has_init ? init : identity<AMP_ALG_R>(op); }
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
// to memory. On the H100 this and the flow of the helpers above
// (scan_total_f) took the scan of 2^28 int32 from 0.79 of the device copy's
// rate to 0.81 to 0.82 (bench/results/2026-11-27-session33-h100.md).
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

// ============================================================ compaction
#if AMP_ALG_WITH_SELECT
#define AMP_ALG_SELECT_CHUNK (AMP_ALG_TILE * AMP_ALG_SCAN_ITEMS)
namespace amp {
namespace alg {

template <bool C>
AMP_FI void select_load_c(const amp__alg_in &in, AMP_ALG_T *s, long long base, long long n, int l)
{
    if constexpr (AMP_ALG_TILE > 1) { // registers first, as scan_load_c
        AMP_ALG_T v[AMP_ALG_SCAN_ITEMS];
        AMP_ALG_UNROLL for (int k = 0; k < AMP_ALG_SCAN_ITEMS; ++k) {
            const long long i = base + k * AMP_ALG_TILE + l;
            if (i < n) v[k] = amp__alg_elem<C>(in, i);
        }
        AMP_ALG_UNROLL for (int k = 0; k < AMP_ALG_SCAN_ITEMS; ++k) {
            const int j = k * AMP_ALG_TILE + l;
            if (base + j < n) s[AMP_ALG_PAD(j)] = v[k];
        }
    } else {
        AMP_ALG_UNROLL for (int k = 0; k < AMP_ALG_SCAN_ITEMS; ++k) {
            const int j = k * AMP_ALG_TILE + l;
            if (base + j < n) s[AMP_ALG_PAD(j)] = amp__alg_elem<C>(in, base + j);
        }
    }
}
AMP_FI void select_load(const amp__alg_in &in, AMP_ALG_T *s, long long base, long long n, int l)
{
    if (AMP_ALG_IN_CONTIG(in)) select_load_c<true>(in, s, base, n, l);
    else select_load_c<false>(in, s, base, n, l);
}

#ifdef AMP_CPU
// Evaluate the predicate on this thread's items (flags in f); their count.
AMP_FI unsigned long long select_flags(const amp__alg_in &in, const AMP_ALG_T *s, unsigned char *f, long long base,
                                       long long n, int l)
{
    unsigned long long c = 0;
    const int j0 = l * AMP_ALG_SCAN_ITEMS;
    AMP_ALG_UNROLL for (int k = 0; k < AMP_ALG_SCAN_ITEMS; ++k) {
        const int j = j0 + k;
        const bool p = base + j < n && amp__alg_pred(s[AMP_ALG_PAD(j)], base + j, in);
        f[j] = p ? 1 : 0;
        c += p ? 1 : 0;
    }
    return c;
}

// Write this thread's selected items at pos, pos + 1, ... (those below cap);
// returns the position after the last.
AMP_FI unsigned long long select_write(AMP_ALG_T *y, const shape &ys, const AMP_ALG_T *s, const unsigned char *f,
                                       unsigned long long pos, long long cap, int l)
{
    const int j0 = l * AMP_ALG_SCAN_ITEMS;
    for (int k = 0; k < AMP_ALG_SCAN_ITEMS; ++k) {
        const int j = j0 + k;
        if (!f[j]) continue;
        if ((long long)pos < cap) put(y, ys, (long long)pos, s[AMP_ALG_PAD(j)]);
        ++pos;
    }
    return pos;
}
#else
// The predicate on this thread's items as a bit mask (a GPU thread's items
// are at most 64), no tile_static flags.
AMP_FI unsigned long long select_mask(const amp__alg_in &in, const AMP_ALG_T *s, long long base, long long n, int l)
{
    static_assert(AMP_ALG_SCAN_ITEMS <= 64, "a GPU thread's compaction items fit a 64-bit mask");
    unsigned long long m = 0;
    const int j0 = l * AMP_ALG_SCAN_ITEMS;
    AMP_ALG_UNROLL for (int k = 0; k < AMP_ALG_SCAN_ITEMS; ++k) {
        const int j = j0 + k;
        if (base + j < n && amp__alg_pred(s[AMP_ALG_PAD(j)], base + j, in)) m |= 1ull << k;
    }
    return m;
}
#endif

AMP_FI unsigned long long select_tile_prefix(unsigned long long *ws, unsigned long long *state,
                                             unsigned long long *aggs, unsigned long long *incls, long long tile,
                                             int lane)
{
    unsigned long long agg = 0;
    if (lane == 0) {
        for (int w = 0; w < AMP_ALG_WAVES; ++w) {
            const unsigned long long v = ws[w];
            ws[w] = agg;
            agg += v;
        }
    }
    agg = shfl_from(agg, 0);
    return look_back(OP_SUM, state, aggs, incls, tile, agg, lane);
}

} // namespace alg
} // namespace amp

// Stream compaction: the elements whose predicate holds, in order, to
// y[0..count) (at most cap of them written); count[0] = how many held.
// state as for amp_alg_scan.
//
// A GPU tile packs its kept elements in tile_static first and writes them
// out contiguously: written from each thread's run, a wave's 32 stores
// fell on 32 different places (the compaction of 2^28 int32, half kept,
// ran at 0.23 of the device copy on an H100).
#ifndef AMP_CPU
AMP_TILED_KERNEL(amp_alg_select, amp::tiled_index<AMP_ALG_TILE> t, AMP_ALG_IN_PARAMS,
                 amp::array_view<AMP_ALG_T, 1> amp__y, amp::alg::shape amp__ys,
                 amp::array_view<unsigned long long, 1> amp__state, amp::array_view<unsigned long long, 1> amp__aggs,
                 amp::array_view<unsigned long long, 1> amp__incls, amp::array_view<unsigned long long, 1> amp__count,
                 long long amp__n, long long amp__ntiles, long long amp__cap)
{
    tile_static AMP_ALG_T amp__s[AMP_ALG_PAD(AMP_ALG_SELECT_CHUNK) + 1];
    tile_static unsigned long long amp__ws[AMP_ALG_WAVES];
    tile_static unsigned long long amp__pre;
    tile_static unsigned long long amp__kept;
    tile_static long long amp__tile;
    const int l = t.local[0];
    const int lane = l % AMP_ALG_WAVE;
    if (l == 0) amp__tile = (long long)atomicAdd(amp__state.data() + amp__ntiles, 1ull);
    t.barrier.wait();
    const long long tile = amp__tile;
    const long long base = tile * AMP_ALG_SELECT_CHUNK;
    const amp__alg_in amp__in = AMP_ALG_IN_MAKE;
    amp::alg::select_load(amp__in, amp__s, base, amp__n, l);
    t.barrier.wait();
    const amp__alg_in amp__in2 = AMP_ALG_IN_MAKE;
    const unsigned long long mask = amp::alg::select_mask(amp__in2, amp__s, base, amp__n, l);
    const unsigned long long c = (unsigned long long)__popcll(mask);
    const unsigned long long winc = amp::alg::wave_scan(amp::alg::OP_SUM, c, lane);
    const unsigned long long wup = amp::alg::shfl_up(winc, 1);
    if (lane == AMP_ALG_WAVE - 1) amp__ws[l / AMP_ALG_WAVE] = winc;
    t.barrier.wait();
    if (l < AMP_ALG_WAVE) {
        const unsigned long long pre = amp::alg::select_tile_prefix(amp__ws, amp__state.data(), amp__aggs.data(),
                                                                    amp__incls.data(), tile, lane);
        if (l == 0) amp__pre = pre;
    }
    // This thread's kept items into registers, then packed at the front of
    // the chunk's tile_static in order, so that the tile writes them out
    // with consecutive threads at consecutive addresses.
    AMP_ALG_T v[AMP_ALG_SCAN_ITEMS];
    const int j0 = l * AMP_ALG_SCAN_ITEMS;
    AMP_ALG_UNROLL for (int k = 0; k < AMP_ALG_SCAN_ITEMS; ++k) v[k] = amp__s[AMP_ALG_PAD(j0 + k)];
    t.barrier.wait();
    unsigned long long at = amp__ws[l / AMP_ALG_WAVE] + (lane == 0 ? 0ull : wup);
    AMP_ALG_UNROLL for (int k = 0; k < AMP_ALG_SCAN_ITEMS; ++k) {
        if ((mask >> k) & 1ull) {
            amp__s[AMP_ALG_PAD((long long)at)] = v[k];
            ++at;
        }
    }
    if (l == AMP_ALG_TILE - 1) amp__kept = at;
    t.barrier.wait();
    const unsigned long long pre = amp__pre;
    const long long kept = (long long)amp__kept;
    for (long long i = l; i < kept; i += AMP_ALG_TILE) {
        const long long o = (long long)pre + i;
        if (o >= amp__cap) break;
        if (amp__ys.contiguous) amp__y.data()[o] = amp__s[AMP_ALG_PAD(i)];
        else amp::alg::put(amp__y.data(), amp__ys, o, amp__s[AMP_ALG_PAD(i)]);
    }
    if (tile == amp__ntiles - 1 && l == AMP_ALG_TILE - 1) amp__count.data()[0] = pre + (unsigned long long)kept;
}
#else
AMP_TILED_KERNEL(amp_alg_select, amp::tiled_index<AMP_ALG_TILE> t, AMP_ALG_IN_PARAMS,
                 amp::array_view<AMP_ALG_T, 1> amp__y, amp::alg::shape amp__ys,
                 amp::array_view<unsigned long long, 1> amp__state, amp::array_view<unsigned long long, 1> amp__aggs,
                 amp::array_view<unsigned long long, 1> amp__incls, amp::array_view<unsigned long long, 1> amp__count,
                 long long amp__n, long long amp__ntiles, long long amp__cap)
{
    tile_static AMP_ALG_T amp__s[AMP_ALG_PAD(AMP_ALG_SELECT_CHUNK) + 1];
    tile_static unsigned char amp__f[AMP_ALG_SELECT_CHUNK];
    tile_static unsigned long long amp__ws[AMP_ALG_WAVES];
    tile_static unsigned long long amp__pre;
    tile_static long long amp__tile;
    const int l = t.local[0];
    const int lane = l % AMP_ALG_WAVE;
    if (l == 0) amp__tile = (long long)atomicAdd(amp__state.data() + amp__ntiles, 1ull);
    t.barrier.wait();
    const long long tile = amp__tile;
    const long long base = tile * AMP_ALG_SELECT_CHUNK;
    const amp__alg_in amp__in = AMP_ALG_IN_MAKE;
    amp::alg::select_load(amp__in, amp__s, base, amp__n, l);
    t.barrier.wait();
    const amp__alg_in amp__in2 = AMP_ALG_IN_MAKE;
    const unsigned long long c = amp::alg::select_flags(amp__in2, amp__s, amp__f, base, amp__n, l);
    const unsigned long long winc = amp::alg::wave_scan(amp::alg::OP_SUM, c, lane);
    const unsigned long long wup = amp::alg::shfl_up(winc, 1);
    if (lane == AMP_ALG_WAVE - 1) amp__ws[l / AMP_ALG_WAVE] = winc;
    t.barrier.wait();
    if (l < AMP_ALG_WAVE) {
        const unsigned long long pre = amp::alg::select_tile_prefix(amp__ws, amp__state.data(), amp__aggs.data(),
                                                                    amp__incls.data(), tile, lane);
        if (l == 0) amp__pre = pre;
    }
    t.barrier.wait();
    const unsigned long long pos0 = amp__pre + amp__ws[l / AMP_ALG_WAVE] + (lane == 0 ? 0ull : wup);
    const unsigned long long end =
        amp::alg::select_write(amp__y.data(), amp__ys, amp__s, amp__f, pos0, amp__cap, l);
    if (tile == amp__ntiles - 1 && l == AMP_ALG_TILE - 1) amp__count.data()[0] = end;
}
#endif
#endif // AMP_ALG_WITH_SELECT

// ================================================================== sort
#if AMP_ALG_WITH_SORT
#define AMP_ALG_BINS (1 << AMP_ALG_RADIX_BITS)
#define AMP_ALG_SORT_CHUNK (AMP_ALG_TILE * AMP_ALG_SORT_ITEMS)
// Digits a thread handles in the per-digit steps (all of them on the CPU).
#define AMP_ALG_DIGITS_PER_THREAD ((AMP_ALG_BINS + AMP_ALG_TILE - 1) / AMP_ALG_TILE)
// Keys-only programs still take value parameters (the library binds a
// one-byte scratch array to them) and skip every value step: a kernel body
// holds no preprocessor conditionals, which the CPU's loop transformation
// cannot carry through.
#if !AMP_ALG_SORT_VALUES
#define AMP_ALG_V unsigned char
#endif
#define AMP_ALG_VALUE_ITEMS (AMP_ALG_SORT_VALUES ? AMP_ALG_SORT_ITEMS : 1)
#define AMP_ALG_VALUE_CHUNK (AMP_ALG_SORT_VALUES ? AMP_ALG_SORT_CHUNK : 1)
#define AMP_ALG_VI(k) (AMP_ALG_SORT_VALUES ? (k) : 0)
// Names for value-initialising keys and values (AMP_ALG_K may be two words).
typedef AMP_ALG_K amp__alg_key_t;
typedef AMP_ALG_V amp__alg_value_t;
namespace amp {
namespace alg {

// A status word of the per-digit look-back: the pass (1-based) in the top 6
// bits, then whether the count is an inclusive prefix, then the count. The
// pass tag keeps one pass from reading the previous pass's words (the
// buffer is zeroed once per sort).
#define AMP_ALG_COUNT_MASK ((1ull << 57) - 1ull)
AMP_FI unsigned long long status_word(int pass, bool prefix, unsigned long long count)
{
    return ((unsigned long long)(pass + 1) << 58) | ((unsigned long long)prefix << 57) | count;
}

AMP_FI unsigned digit_of(AMP_ALG_K k, int shift, bool desc)
{
    return (unsigned)(key_bits(k, desc) >> shift) & (AMP_ALG_BINS - 1);
}

// Count the digits of every pass for keys [lo, hi) into h[pass][digit].
template <bool C>
AMP_FI void sort_count_c(const AMP_ALG_K *k, const shape &ks, long long lo, long long hi, int l, bool desc,
                         unsigned *h)
{
    // A GPU thread loads B keys before counting any (the counts' atomics
    // would otherwise hold each load back until the one before returned).
    enum { B = AMP_ALG_TILE > 1 ? 8 : 1 };
    for (long long i0 = lo + l; i0 < hi; i0 += (long long)B * AMP_ALG_TILE) {
        AMP_ALG_KU b[B];
        AMP_ALG_UNROLL for (int u = 0; u < B; ++u) {
            const long long i = i0 + (long long)u * AMP_ALG_TILE;
            if (i < hi) b[u] = key_bits(get<C>(k, ks, i), desc);
        }
        AMP_ALG_UNROLL for (int u = 0; u < B; ++u) {
            if (i0 + (long long)u * AMP_ALG_TILE >= hi) break;
            for (int p = 0; p < AMP_ALG_PASSES; ++p) {
                const unsigned d = (unsigned)(b[u] >> (p * AMP_ALG_RADIX_BITS)) & (AMP_ALG_BINS - 1);
#if AMP_ALG_TILE == 1
                h[p * AMP_ALG_BINS + d] += 1;
#else
                atomicAdd(&h[p * AMP_ALG_BINS + d], 1u);
#endif
            }
        }
    }
}

// Count a key of digit d in its wave's counters (the lanes of a wave may
// share a digit; a one-thread wave owns its counters).
AMP_FI void count_digit(unsigned *wc, unsigned d)
{
#if AMP_ALG_WAVE == 1
    wc[d] += 1;
#else
    atomicAdd(&wc[d], 1u);
#endif
}

// Rank a key of digit d among the wave's keys of that digit so far (lanes
// below first, then earlier items): the items of lane j are elements
// k * WAVE + j of the wave's part of the tile, so ranking in item order
// keeps the input order. wc is the wave's counter per digit (starting at
// the wave's place among the tile's keys of that digit); every lane of the
// wave calls this with its own key (valid false past the end).
AMP_FI unsigned rank_in_wave(unsigned *wc, unsigned d, bool valid, bool full, int lane)
{
#if AMP_ALG_WAVE == 1
    (void)lane;
    (void)full;
    const unsigned before = wc[d];
    if (valid) wc[d] = before + 1;
    return before;
#else
    const lanes_t m = match_digit<AMP_ALG_RADIX_BITS>(d);
    const lanes_t peers = full ? m : m & ballot(valid); // full: every key of the tile is valid
    const unsigned below = (unsigned)__popcll((long long)(peers & lanes_below(lane)));
    const unsigned before = wc[d];
    wave_sync();
    if (valid && below == 0) wc[d] = before + (unsigned)__popcll((long long)peers);
    wave_sync();
    return before + below;
#endif
}

// Per digit of this thread: counts of the waves turned into exclusive
// offsets among the waves, the tile's count kept in cnt, its aggregate (tile
// 0: prefix) published; returns the sum of this thread's digits' counts.
// It runs before the tile ranks its keys, so that later tiles' look-backs
// find this tile's counts while it ranks.
AMP_FI unsigned sort_digit_counts(unsigned *wc, unsigned *cnt, unsigned long long *status, long long tile, int pass,
                                  int l)
{
    unsigned sum = 0;
    for (int q = 0; q < AMP_ALG_DIGITS_PER_THREAD; ++q) {
        const int d = l * AMP_ALG_DIGITS_PER_THREAD + q;
        if (d >= AMP_ALG_BINS) break;
        unsigned c = 0;
        for (int w = 0; w < AMP_ALG_WAVES; ++w) {
            const unsigned v = wc[w * AMP_ALG_BINS + d];
            wc[w * AMP_ALG_BINS + d] = c;
            c += v;
        }
        cnt[d] = c;
        store_word(&status[tile * AMP_ALG_BINS + d], status_word(pass, tile == 0, c));
        sum += c;
    }
    return sum;
}

// Per digit of this thread: its offset inside the tile, the digits before
// it (before: the count of the tile's digits below this thread's first).
AMP_FI void sort_digit_offsets(const unsigned *cnt, unsigned *off, unsigned before, int l)
{
    for (int q = 0; q < AMP_ALG_DIGITS_PER_THREAD; ++q) {
        const int d = l * AMP_ALG_DIGITS_PER_THREAD + q;
        if (d >= AMP_ALG_BINS) break;
        off[d] = before;
        before += cnt[d];
    }
}

// Per digit of this thread: the count of the digit in every earlier tile
// (look-back, publishing this tile's inclusive count), and the global base
// gb[d] such that the key at tile position p goes to gb[d] + p.
AMP_FI void sort_digit_bases(const unsigned *cnt, const unsigned *off, unsigned long long *gb,
                             unsigned long long *status, const unsigned long long *dstart, long long tile, int pass,
                             int l)
{
    for (int q = 0; q < AMP_ALG_DIGITS_PER_THREAD; ++q) {
        const int d = l * AMP_ALG_DIGITS_PER_THREAD + q;
        if (d >= AMP_ALG_BINS) break;
        const unsigned c = cnt[d];
        // The walk reads LOOK earlier tiles' words at once (independent
        // loads, one memory latency), then takes them in order up to the
        // first inclusive count or the first not published yet. Tile 0
        // always publishes an inclusive count, so the walk ends there.
        unsigned long long pre = 0;
        for (long long j = tile - 1; j >= 0;) {
            enum { LOOK = AMP_ALG_TILE > 1 ? 4 : 1 };
            unsigned long long w[LOOK];
            AMP_ALG_UNROLL for (int u = 0; u < LOOK; ++u)
                w[u] = j - u >= 0 ? load_word(&status[(j - u) * AMP_ALG_BINS + d]) : 0ull;
            int used = 0;
            bool done = false;
            AMP_ALG_UNROLL for (int u = 0; u < LOOK; ++u) {
                if (done || used < u || j - u < 0) break;
                if ((w[u] >> 58) != (unsigned long long)(pass + 1)) break; // not published yet
                pre += w[u] & AMP_ALG_COUNT_MASK;
                used = u + 1;
                done = ((w[u] >> 57) & 1ull) != 0;
            }
            if (done) break;
            if (used == 0) poll_pause();
            j -= used;
        }
        if (tile > 0) store_word(&status[tile * AMP_ALG_BINS + d], status_word(pass, true, pre + c));
        gb[d] = dstart[pass * AMP_ALG_BINS + d] + pre - off[d];
    }
}

// Write the tile's sorted keys (and values) to their global places.
AMP_FI void sort_store(const AMP_ALG_K *sk, const AMP_ALG_V *sv, AMP_ALG_V *vout, const shape &vs,
                       const unsigned long long *gb, AMP_ALG_K *kout, const shape &ks, int valid, int l, int shift,
                       bool desc)
{
    for (int p = l; p < valid; p += AMP_ALG_TILE) {
        const AMP_ALG_K k = sk[p];
        const long long at = (long long)(gb[digit_of(k, shift, desc)] + (unsigned long long)p);
        if (ks.contiguous) kout[at] = k;
        else put(kout, ks, at, k);
        if (AMP_ALG_SORT_VALUES) assign(vout[offset(vs, at)], sv[AMP_ALG_VI(p)]);
    }
}

} // namespace alg
} // namespace amp

// The digit histogram of every pass: tile t counts keys [t * per,
// (t + 1) * per) and adds its counts to hist[pass * BINS + digit] (zeroed
// before).
AMP_TILED_KERNEL(amp_alg_sort_hist, amp::tiled_index<AMP_ALG_TILE> t, amp::array_view<const AMP_ALG_K, 1> amp__k,
                 amp::alg::shape amp__ks, amp::array_view<unsigned long long, 1> amp__hist, long long amp__n,
                 long long amp__per, int amp__desc)
{
    tile_static unsigned amp__h[AMP_ALG_PASSES * AMP_ALG_BINS];
    const int l = t.local[0];
    for (int j = l; j < AMP_ALG_PASSES * AMP_ALG_BINS; j += AMP_ALG_TILE) amp__h[j] = 0;
    t.barrier.wait();
    const long long lo = (long long)t.tile[0] * amp__per;
    const long long hi = lo + amp__per < amp__n ? lo + amp__per : amp__n;
    if (amp__ks.contiguous) amp::alg::sort_count_c<true>(amp__k.data(), amp__ks, lo, hi, l, amp__desc != 0, amp__h);
    else amp::alg::sort_count_c<false>(amp__k.data(), amp__ks, lo, hi, l, amp__desc != 0, amp__h);
    t.barrier.wait();
    unsigned long long *hist = amp__hist.data();
    for (int j = l; j < AMP_ALG_PASSES * AMP_ALG_BINS; j += AMP_ALG_TILE)
        if (amp__h[j]) atomicAdd(&hist[j], (unsigned long long)amp__h[j]);
}

// Where each digit's keys start in each pass's output: the exclusive scan of
// the histogram (one tile).
AMP_TILED_KERNEL(amp_alg_sort_offsets, amp::tiled_index<AMP_ALG_TILE> t,
                 amp::array_view<const unsigned long long, 1> amp__hist,
                 amp::array_view<unsigned long long, 1> amp__start)
{
    const int l = t.local[0];
    for (int p = l; p < AMP_ALG_PASSES; p += AMP_ALG_TILE) {
        unsigned long long s = 0;
        for (int d = 0; d < AMP_ALG_BINS; ++d) {
            amp__start.data()[p * AMP_ALG_BINS + d] = s;
            s += amp__hist.data()[p * AMP_ALG_BINS + d];
        }
    }
}

#if AMP_ALG_SORT_MIN_TILES > 0
// Fewer registers a thread, more tiles at once to hide the ranking's
// tile_static latency (CUDA only; lib/alg_program.c says when).
AMP__KERNEL_MIN_TILES(amp_alg_sort_pass, AMP_ALG_SORT_MIN_TILES)
#endif
// One pass of the LSD radix sort (onesweep: one kernel a pass, the digit
// offsets of earlier tiles found by decoupled look-back per digit): keys
// (and values) in -> out, stable, ordered by the digit at shift. A tile
// counts its digits and publishes the counts first, then ranks its keys
// (each at its place among the tile's keys), then looks back: by then the
// tiles before it have mostly published their prefixes.
// counters[pass] must be zero at launch, status zero before the first pass.
AMP_TILED_KERNEL(amp_alg_sort_pass, amp::tiled_index<AMP_ALG_TILE> t, amp::array_view<const AMP_ALG_K, 1> amp__kin,
                 amp::alg::shape amp__kins, amp::array_view<AMP_ALG_K, 1> amp__kout, amp::alg::shape amp__kouts,
                 amp::array_view<const AMP_ALG_V, 1> amp__vin, amp::alg::shape amp__vins,
                 amp::array_view<AMP_ALG_V, 1> amp__vout, amp::alg::shape amp__vouts,
                 amp::array_view<unsigned long long, 1> amp__status,
                 amp::array_view<const unsigned long long, 1> amp__dstart,
                 amp::array_view<unsigned long long, 1> amp__counters, long long amp__n, int amp__pass, int amp__desc)
{
    tile_static unsigned amp__wc[AMP_ALG_WAVES * AMP_ALG_BINS];
    tile_static unsigned amp__cnt[AMP_ALG_BINS];
    tile_static unsigned amp__off[AMP_ALG_BINS];
    tile_static unsigned long long amp__gb[AMP_ALG_BINS];
    tile_static unsigned amp__wsum[AMP_ALG_WAVES];
    tile_static AMP_ALG_K amp__sk[AMP_ALG_SORT_CHUNK];
    tile_static AMP_ALG_V amp__sv[AMP_ALG_VALUE_CHUNK];
    tile_static long long amp__tile;
    const int l = t.local[0];
    const int lane = l % AMP_ALG_WAVE;
    const int wave = l / AMP_ALG_WAVE;
    const int shift = amp__pass * AMP_ALG_RADIX_BITS;
    const bool desc = amp__desc != 0;
    for (int j = l; j < AMP_ALG_WAVES * AMP_ALG_BINS; j += AMP_ALG_TILE) amp__wc[j] = 0;
    if (l == 0) amp__tile = (long long)atomicAdd(amp__counters.data() + amp__pass, 1ull);
    t.barrier.wait();
    const long long tile = amp__tile;
    const long long wbase = tile * AMP_ALG_SORT_CHUNK + (long long)wave * (AMP_ALG_WAVE * AMP_ALG_SORT_ITEMS);
    // The thread's keys (and values) and their ranks, kept across barriers.
    AMP_ALG_K key[AMP_ALG_SORT_ITEMS];
    unsigned rank[AMP_ALG_SORT_ITEMS];
    AMP_ALG_V val[AMP_ALG_VALUE_ITEMS];
    // Every key (and value) is loaded before the first is counted: counting
    // touches tile_static memory, which the loads could not move past.
    AMP_ALG_UNROLL for (int k = 0; k < AMP_ALG_SORT_ITEMS; ++k) {
        const long long i = wbase + (long long)k * AMP_ALG_WAVE + lane;
        const bool valid = i < amp__n;
        key[k] = valid ? amp__kin.data()[amp::alg::offset(amp__kins, i)] : amp__alg_key_t();
        if (AMP_ALG_SORT_VALUES) {
            amp__alg_value_t vv = amp__alg_value_t();
            if (valid) amp::alg::assign(vv, amp__vin.data()[amp::alg::offset(amp__vins, i)]);
            amp::alg::assign(val[AMP_ALG_VI(k)], vv);
        }
    }
    AMP_ALG_UNROLL for (int k = 0; k < AMP_ALG_SORT_ITEMS; ++k)
        if (wbase + (long long)k * AMP_ALG_WAVE + lane < amp__n)
            amp::alg::count_digit(amp__wc + wave * AMP_ALG_BINS, amp::alg::digit_of(key[k], shift, desc));
    t.barrier.wait();
    const unsigned mine =
        amp::alg::sort_digit_counts(amp__wc, amp__cnt, amp__status.data(), tile, amp__pass, l);
    const unsigned winc = amp::alg::wave_scan(amp::alg::OP_SUM, mine, lane);
    if (lane == AMP_ALG_WAVE - 1) amp__wsum[wave] = winc;
    t.barrier.wait();
    unsigned before = winc - mine;
    for (int w = 0; w < wave; ++w) before += amp__wsum[w];
    amp::alg::sort_digit_offsets(amp__cnt, amp__off, before, l);
    const bool full = (tile + 1) * AMP_ALG_SORT_CHUNK <= amp__n;
    AMP_ALG_UNROLL for (int k = 0; k < AMP_ALG_SORT_ITEMS; ++k) {
        const bool valid = wbase + (long long)k * AMP_ALG_WAVE + lane < amp__n;
        rank[k] = amp::alg::rank_in_wave(amp__wc + wave * AMP_ALG_BINS, amp::alg::digit_of(key[k], shift, desc),
                                         valid, full, lane);
    }
    t.barrier.wait();
    AMP_ALG_UNROLL for (int k = 0; k < AMP_ALG_SORT_ITEMS; ++k) {
        if (wbase + (long long)k * AMP_ALG_WAVE + lane < amp__n) {
            const unsigned p = amp__off[amp::alg::digit_of(key[k], shift, desc)] + rank[k];
            amp__sk[p] = key[k];
            if (AMP_ALG_SORT_VALUES) amp::alg::assign(amp__sv[AMP_ALG_VI(p)], val[AMP_ALG_VI(k)]);
        }
    }
    amp::alg::sort_digit_bases(amp__cnt, amp__off, amp__gb, amp__status.data(), amp__dstart.data(), tile, amp__pass,
                               l);
    t.barrier.wait();
    const long long left = amp__n - tile * AMP_ALG_SORT_CHUNK;
    const int valid = left < AMP_ALG_SORT_CHUNK ? (int)left : AMP_ALG_SORT_CHUNK;
    amp::alg::sort_store(amp__sk, amp__sv, amp__vout.data(), amp__vouts, amp__gb, amp__kout.data(), amp__kouts,
                         valid, l, shift, desc);
}
#endif // AMP_ALG_WITH_SORT
