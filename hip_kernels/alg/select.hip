// select.hip — the algorithms' stream compaction (copy_if, count_if): each tile counts what the predicate keeps, takes its place from the tiles before it as the scan does, and writes its kept elements out contiguously (a GPU tile packs them in tile_static first); read after layout.hip.

#if AMP_ALG_WITH_SELECT
#define AMP_ALG_SELECT_CHUNK (AMP_ALG_TILE * AMP_ALG_SCAN_ITEMS)
namespace amp {
namespace alg {

template <bool C>
AMP_FI void select_load_c(const amp__alg_in &in, AMP_ALG_T *s, long long base, long long n, int l)
{
    if constexpr (AMP_ALG_TILE > 1 && !C) { // strided: a few items at a time, their offsets inline
        // G divides the items: a group past them would store the next
        // chunk's elements past this chunk's tile_static (AMP_ALG_SELECT_ITEMS 9).
        enum { G = AMP_ALG_SCAN_ITEMS % 4 == 0 ? 4 : AMP_ALG_SCAN_ITEMS % 2 == 0 ? 2 : 1 };
        AMP_ALG_ROLLED for (int g = 0; g < AMP_ALG_SCAN_ITEMS; g += G) {
            AMP_ALG_T v[G];
            AMP_ALG_UNROLL for (int k = 0; k < G; ++k) {
                const long long i = base + (g + k) * AMP_ALG_TILE + l;
                if (i < n) v[k] = amp__alg_elem<false, false>(in, i);
            }
            AMP_ALG_UNROLL for (int k = 0; k < G; ++k) {
                const int j = (g + k) * AMP_ALG_TILE + l;
                if (base + j < n) s[AMP_ALG_PAD(j)] = v[k];
            }
        }
    } else if constexpr (AMP_ALG_TILE > 1) { // registers first, as scan_load_c
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
