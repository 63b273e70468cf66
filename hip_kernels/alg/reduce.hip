// reduce.hip — the algorithms' reductions: a tile's items folded in registers and across the tile, partial results per tile, and the last tile's fold of them into the result (with the caller's initial value where given); read after layout.hip.

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
// A GPU reduction leaves thousands of them (lib/alg/programs.c): eight
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
// res[0]: init (has_init) in front, else a sum's start (+0.0: r was folded
// from -0.0), then the post expression, in the output type.
AMP_FI void reduce_result(AMP_ALG_O *res, int op, AMP_ALG_R r, AMP_ALG_R init, bool has_init)
{
    if (has_init) r = combine(op, init, r);
    else if (op == OP_SUM) r = combine(op, start<AMP_ALG_R>(op), r);
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
