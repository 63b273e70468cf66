// sort.hip — the algorithms' LSD radix sort (keys, or keys and values): one pass over the keys counts the digits of every pass, then each pass's tiles rank their keys by digit, take their digits' offsets from the tiles before them (look-back) and scatter stably; read after layout.hip.

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
    // Strided offsets inline, as everywhere in the sort's kernels: B is
    // small, and calls among the loads cost the sort 1-4% on an H200.
    enum { B = AMP_ALG_TILE > 1 ? 8 : 1 };
    for (long long i0 = lo + l; i0 < hi; i0 += (long long)B * AMP_ALG_TILE) {
        AMP_ALG_KU b[B];
        AMP_ALG_UNROLL for (int u = 0; u < B; ++u) {
            const long long i = i0 + (long long)u * AMP_ALG_TILE;
            if (i < hi) b[u] = key_bits(get<C, false>(k, ks, i), desc);
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
// tile_static latency (CUDA only; lib/alg/programs.c says when).
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
