// loops.hip — kernels of test_loops.c: one per shape the CPU accelerator's loop transformation handles (uniform and per-work-item loops and ifs around barriers, the three kinds of variables crossing a barrier, macros, helpers, lambdas, returns after the last barrier), plus shapes it must leave on fibers. Every kernel reads in[] and writes out[] so the test can check it against a host reference; all are valid C++ AMP on any accelerator.

// Nested uniform loops, barriers in the inner one; a private accumulator.
// out[g] = sum over o < 3, i < 4 of s[(l + o + i) % 64] where s holds in[]
// of the tile, rewritten each inner step by +1.
AMP_TILED_KERNEL(shape_nested, amp::tiled_index<64> t, amp::array_view<const int, 1> in,
                 amp::array_view<int, 1> out)
{
    tile_static int s[64];
    const int l = t.local[0];
    int acc = 0;
    int v = in[t.global];
    for (int o = 0; o < 3; ++o) {
        for (int i = 0; i < 4; ++i) {
            s[l] = v;
            t.barrier.wait();
            acc += s[(l + o + i) % 64];
            t.barrier.wait();
            v += 1;
        }
    }
    out[t.global] = acc;
}

// A uniform if holding barriers in both branches (tiles alternate).
AMP_TILED_KERNEL(shape_if, amp::tiled_index<8, 8> t, amp::array_view<const int, 2> in,
                 amp::array_view<int, 2> out)
{
    tile_static int s[8][8];
    const int r = t.local[0], c = t.local[1];
    s[r][c] = in[t.global];
    t.barrier.wait();
    int x;
    if ((t.tile[0] + t.tile[1]) % 2 == 0) {
        x = s[c][r];           // transpose
        t.barrier.wait();
        s[r][c] = x * 2;
        t.barrier.wait();
        x = s[7 - r][c];
    } else {
        x = s[r][7 - c];       // mirror
        t.barrier.wait();
        s[r][c] = x + 1000;
        t.barrier.wait();
        x = s[r][(c + 1) % 8];
    }
    out[t.global] = x;
}

// A while loop whose counter is changed by the work-items (private): every
// work-item evaluates the condition, they agree; then a do-while.
AMP_TILED_KERNEL(shape_while, amp::tiled_index<32> t, amp::array_view<const int, 1> in,
                 amp::array_view<int, 1> out, int n)
{
    tile_static int s[32];
    const int l = t.local[0];
    int x = in[t.global];
    int i = 0;
    while (i < n) {
        s[l] = x;
        t.barrier.wait();
        x = s[31 - l] + i;
        t.barrier.wait();
        i += 1;
    }
    int j = 0;
    do {
        s[l] = x;
        t.barrier.wait();
        x += s[(l + 1) % 32];
        ++j;
        t.barrier.wait();
    } while (j < 2);
    out[t.global] = x;
}

// Variables of each kind across barriers: non-const remat (r, c2), const
// uniform (base), non-const uniform loop counter (k), private array (acc)
// and private struct-like index (p).
AMP_TILED_KERNEL(shape_kinds, amp::tiled_index<4, 16> t, amp::array_view<const int, 2> in,
                 amp::array_view<int, 2> out)
{
    tile_static int s[4][16];
    int r = t.local[0];
    int c2 = t.local[1] * 2 + r;
    const int base = t.tile_origin[0] * 100 + t.tile_origin[1];
    int acc[3] = {0, 0, 0};
    amp::index<2> p = t.global;
    for (int k = 0; k < 3; ++k) {
        s[r][t.local[1]] = in[p] + k;
        t.barrier.wait();
        acc[k] = s[(r + 1) % 4][(c2 + k) % 16] + base;
        p[1] = (p[1] + 16) % in.extent[1];
        t.barrier.wait();
    }
    out[t.global] = acc[0] * 3 + acc[1] * 5 + acc[2] * 7 + c2;
}

// 3-D tiles, two barrier rounds, threadIdx (per work-item) read through a
// helper function of the user's.
static __device__ int flat_local(int a, int b, int c) { return (a * 3 + b) * 4 + c; }
static __device__ int hip_x() { return (int)threadIdx.x; }
AMP_TILED_KERNEL(shape_3d, amp::tiled_index<2, 3, 4> t, amp::array_view<const int, 3> in,
                 amp::array_view<int, 3> out)
{
    tile_static int s[24];
    const int f = flat_local(t.local[0], t.local[1], t.local[2]);
    int v = in[t.global];
    for (int round = 0; round < 2; ++round) {
        s[f] = v;
        t.barrier.wait();
        v = s[(f + 5) % 24] * 2 + hip_x();
        t.barrier.wait();
    }
    out[t.global] = v;
}

// A macro defined inside the body, used after a barrier and #undef'd at the
// end (the loop version, placed after the body, still expands it); a lambda
// used within one region; a return after the last barrier.
AMP_TILED_KERNEL(shape_macro_lambda_return, amp::tiled_index<16> t, amp::array_view<const int, 1> in,
                 amp::array_view<int, 1> out)
{
#define SHAPE_TWICE(x) ((x) * 2 + 1)
    tile_static int s[16];
    const int l = t.local[0];
    s[l] = in[t.global];
    t.barrier.wait();
    auto pick = [&](int k) { return s[(l + k) % 16]; };
    int v = SHAPE_TWICE(pick(3));
    out[t.global] = v;
    if (l >= 12) return;
    out[t.global] = v + pick(1);
#undef SHAPE_TWICE
}

// The tree reduction of the benchmark: a uniform loop counter halving.
AMP_TILED_KERNEL(shape_reduce, amp::tiled_index<128> t, amp::array_view<const int, 1> in,
                 amp::array_view<int, 1> out)
{
    tile_static int s[128];
    const int l = t.local[0];
    s[l] = in[t.global];
    t.barrier.wait();
    for (int w = 64; w > 0; w >>= 1) {
        if (l < w) s[l] += s[l + w];
        t.barrier.wait();
    }
    out[t.global] = s[0] + l;
}

// A typedef every region names, and two variables of one name, the inner
// one in a block holding a barrier.
AMP_TILED_KERNEL(shape_names, amp::tiled_index<16> t, amp::array_view<const int, 1> in,
                 amp::array_view<int, 1> out)
{
    typedef int word;
    tile_static word s[16];
    const int l = t.local[0];
    word v = in[t.global];
    s[l] = v;
    t.barrier.wait();
    {
        word v = s[15 - l] + 1;
        t.barrier.wait();
        out[t.global] = v * 10;
    }
    t.barrier.wait();
    out[t.global] += v;
}

// Uniform jumps and updates in the outer flow: whole tiles leave early, a
// loop's stride doubles in its body, break and continue under uniform
// conditions.
AMP_TILED_KERNEL(shape_jumps, amp::tiled_index<32> t, amp::array_view<const int, 1> in,
                 amp::array_view<int, 1> out, int skip_tile)
{
    tile_static int s[32];
    const int l = t.local[0];
    if (t.tile[0] == skip_tile) return;
    int x = in[t.global];
    int stride = 1;
    while (stride < 32) {
        s[l] = x;
        t.barrier.wait();
        x += s[(l + stride) % 32];
        stride *= 2;
        t.barrier.wait();
    }
    for (int r = 0; r < 10; ++r) {
        if (r == 3) continue;
        if (r == 6) break;
        s[l] = x;
        t.barrier.wait();
        x = s[31 - l] + r;
        t.barrier.wait();
    }
    out[t.global] = x;
}

// ---- grid-stride loops: run in lockstep across the tile's work-items
// (lib/cpu/loops/interchange.c), or, where that is not sound, as before.
// Each work-item hashes its grid-stride run of `in` (h * 31 + v: the order
// of its steps shows in the result); the launch's extent is out's, so the
// stride; in's extent is not a multiple of it, so trip counts differ.

// BabelStream's dot shape: the loop, then the partial results exchanged
// through tile_static memory after a barrier.
AMP_TILED_KERNEL(stride_hash, amp::tiled_index<64> t, amp::array_view<const int, 1> in,
                 amp::array_view<int, 1> out, int p)
{
    tile_static unsigned part[64];
    const int n = in.extent[0];
    const int stride = out.extent[0];
    const int l = t.local[0];
    unsigned h = 7u + (unsigned)p;
    for (int i = t.global[0]; i < n; i += stride) h = h * 31u + (unsigned)in[i];
    part[l] = h;
    t.barrier.wait();
    out[t.global] = (int)(part[l] ^ (part[63 - l] >> 3));
}

// Two grid-stride loops in one region (one upwards with a limit of its own
// for each work-item, some taking no step; one downwards), a 2-D tile, and
// in the body: a uniform and a recomputable declaration, a lambda, a nested
// loop with a continue, a condition that differs between work-items, and a
// counter read after the barrier.
AMP_TILED_KERNEL(stride_shapes, amp::tiled_index<4, 16> t, amp::array_view<const int, 1> in,
                 amp::array_view<int, 2> out, int p)
{
    tile_static unsigned part[4][16];
    const int n = in.extent[0];
    const int cols = out.extent[1];
    const int stride = out.extent[0] * cols;
    const int g = t.global[0] * cols + t.global[1];
    const int lim = n - (g % 7) * p;
    unsigned acc = (unsigned)g;
    int steps = 0;
    for (int i = g; i < lim; i += stride) {
        const int third = stride / 3;
        const int twice = 2 * g;
        auto sq = [&](unsigned v) { return v * v + (unsigned)third; };
        unsigned x = (unsigned)in[i];
        for (int j = 0; j < 4; ++j) {
            if (j == 2) continue;
            x += (unsigned)j;
        }
        if (x % 2) acc = acc * 3u + sq(x);
        else acc = acc * 5u - x + (unsigned)twice;
        ++steps;
    }
    for (int i = n - 1 - g; i >= 0; i -= stride) acc = acc * 7u + (unsigned)in[i];
    part[t.local[0]][t.local[1]] = acc;
    t.barrier.wait();
    out[t.global] = (int)(part[3 - t.local[0]][15 - t.local[1]] + (unsigned)steps);
}

// The same hash where the loop stays as it was (each kernel gives
// stride_hash's answer): a break of the loop itself; a call of the user's
// function (the analysis does not look into it); the address of a variable
// that would live across the split (the plan refuses it, and the kernel is
// redone without the interchange); an atomic (work-items could see each
// other's order), in a region after a first barrier.
AMP_TILED_KERNEL(stride_break, amp::tiled_index<64> t, amp::array_view<const int, 1> in,
                 amp::array_view<int, 1> out, int p)
{
    tile_static unsigned part[64];
    const int n = in.extent[0];
    const int stride = out.extent[0];
    const int l = t.local[0];
    unsigned h = 7u + (unsigned)p;
    for (int i = t.global[0]; i < n; i += stride) {
        if (in[i] < 0) break;
        h = h * 31u + (unsigned)in[i];
    }
    part[l] = h;
    t.barrier.wait();
    out[t.global] = (int)(part[l] ^ (part[63 - l] >> 3));
}

static __device__ unsigned stride_mix(unsigned h, int v) { return h * 31u + (unsigned)v; }
AMP_TILED_KERNEL(stride_helper, amp::tiled_index<64> t, amp::array_view<const int, 1> in,
                 amp::array_view<int, 1> out, int p)
{
    tile_static unsigned part[64];
    const int n = in.extent[0];
    const int stride = out.extent[0];
    const int l = t.local[0];
    unsigned h = 7u + (unsigned)p;
    for (int i = t.global[0]; i < n; i += stride) h = stride_mix(h, in[i]);
    part[l] = h;
    t.barrier.wait();
    out[t.global] = (int)(part[l] ^ (part[63 - l] >> 3));
}

AMP_TILED_KERNEL(stride_address, amp::tiled_index<64> t, amp::array_view<const int, 1> in,
                 amp::array_view<int, 1> out, int p)
{
    tile_static unsigned part[64];
    const int n = in.extent[0];
    const int stride = out.extent[0];
    const int l = t.local[0];
    unsigned h = 7u + (unsigned)p;
    unsigned *ph = &h;
    for (int i = t.global[0]; i < n; i += stride) *ph = *ph * 31u + (unsigned)in[i];
    part[l] = h;
    t.barrier.wait();
    out[t.global] = (int)(part[l] ^ (part[63 - l] >> 3));
}

AMP_TILED_KERNEL(stride_atomic, amp::tiled_index<64> t, amp::array_view<const int, 1> in,
                 amp::array_view<int, 1> out, int p)
{
    tile_static unsigned part[64];
    tile_static int zero[1];
    const int n = in.extent[0];
    const int stride = out.extent[0];
    const int l = t.local[0];
    if (l == 0) zero[0] = 0;
    t.barrier.wait();
    unsigned h = 7u + (unsigned)p;
    for (int i = t.global[0]; i < n; i += stride)
        h = h * 31u + (unsigned)(in[i] + amp::atomic_fetch_add(&zero[0], 0));
    part[l] = h;
    t.barrier.wait();
    out[t.global] = (int)(part[l] ^ (part[63 - l] >> 3));
}

// A unit step: each work-item walks a run of its own, in memory order
// already (not interchanged). Hashes in[4g .. 4g + 3].
AMP_TILED_KERNEL(stride_unit, amp::tiled_index<64> t, amp::array_view<const int, 1> in,
                 amp::array_view<int, 1> out, int p)
{
    tile_static unsigned part[64];
    const int g = t.global[0];
    const int l = t.local[0];
    unsigned h = 7u + (unsigned)p;
    for (int i = 4 * g; i < 4 * g + 4; ++i) h = h * 31u + (unsigned)in[i];
    part[l] = h;
    t.barrier.wait();
    out[t.global] = (int)(part[l] ^ (part[63 - l] >> 3));
}

// Grid-stride loops whose work-items' indices are consecutive take the
// lockstep loop's vector fast path on the CPU (lib/cpu/loops/emit.c) while
// every work-item takes the step and the index stays in the range stated to
// the compiler: BabelStream's float dot (an unsigned index converted to
// int); a run that starts at the top of that range and leaves it after a
// step (the usual path goes on); a condition with an effect (no fast path:
// it would be evaluated twice where a work-item's fails).
AMP_TILED_KERNEL(stride_dot, amp::tiled_index<64> t, amp::array_view<const float, 1> a,
                 amp::array_view<const float, 1> b, amp::array_view<float, 1> out)
{
    tile_static float part[64];
    const unsigned n = (unsigned)a.extent[0];
    const unsigned stride = (unsigned)out.extent[0];
    const int l = t.local[0];
    float s = 0;
    for (unsigned i = (unsigned)t.global[0]; i < n; i += stride) s += a[(int)i] * b[(int)i];
    part[l] = s;
    t.barrier.wait();
    out[t.global] = part[63 - l];
}

AMP_TILED_KERNEL(stride_far, amp::tiled_index<64> t, amp::array_view<const int, 1> in,
                 amp::array_view<int, 1> out, int p)
{
    tile_static unsigned part[64];
    const unsigned far = 0x7fffffc0u; // + 63: INT_MAX
    const unsigned n = (unsigned)in.extent[0];
    const unsigned stride = (unsigned)out.extent[0];
    const int l = t.local[0];
    unsigned h = 7u + (unsigned)p;
    for (unsigned i = far + (unsigned)t.global[0]; i < far + n; i += stride) h = h * 31u + (unsigned)in[(int)(i - far)];
    part[l] = h;
    t.barrier.wait();
    out[t.global] = (int)(part[l] ^ (part[63 - l] >> 3));
}

// Downwards, a 64-bit index, a 2-D tile whose work-items' indices are
// consecutive (rows of 32), a condition reading a recomputed variable.
AMP_TILED_KERNEL(stride_down_2d, amp::tiled_index<2, 32> t, amp::array_view<const int, 1> in,
                 amp::array_view<int, 2> out, int p)
{
    tile_static unsigned part[2][32];
    const long long cols = out.extent[1];
    const long long stride = out.extent[0] * cols;
    const long long g = t.global[0] * cols + t.global[1];
    const long long top = in.extent[0] - 1;
    unsigned h = 7u + (unsigned)p;
    for (long long i = top - (stride - 1) + g; i >= g + p; i -= stride) h = h * 31u + (unsigned)in[(int)i];
    part[t.local[0]][t.local[1]] = h;
    t.barrier.wait();
    out[t.global] = (int)part[1 - t.local[0]][31 - t.local[1]];
}

// A step of a floating-point type, truncated to the int at every step: the
// work-items' indices do not stay a base plus their numbers (no fast path).
AMP_TILED_KERNEL(stride_float_step, amp::tiled_index<64> t, amp::array_view<const int, 1> in,
                 amp::array_view<int, 1> out, int p)
{
    tile_static unsigned part[64];
    const double step = p * 0.5;
    const int l = t.local[0];
    unsigned h = 7u + (unsigned)p;
    for (int i = t.global[0]; i >= 0; i -= step) h = h * 31u + (unsigned)in[i];
    part[l] = h;
    t.barrier.wait();
    out[t.global] = (int)(part[l] ^ (part[63 - l] >> 3));
}

AMP_TILED_KERNEL(stride_counted, amp::tiled_index<64> t, amp::array_view<const int, 1> in,
                 amp::array_view<int, 1> out, int p)
{
    tile_static unsigned part[64];
    const int n = in.extent[0];
    const int stride = out.extent[0];
    const int l = t.local[0];
    unsigned h = 7u + (unsigned)p;
    int tests = 0;
    for (int i = t.global[0]; ++tests, i < n; i += stride) h = h * 31u + (unsigned)in[i];
    part[l] = h;
    t.barrier.wait();
    out[t.global] = (int)((part[l] ^ (part[63 - l] >> 3)) + (unsigned)tests);
}

// ---- shapes that stay on fibers (test_loops.c checks the reason)

// The barrier is under a condition that depends on the work-item, with a
// break that crosses it.
AMP_TILED_KERNEL(fibers_break, amp::tiled_index<16> t, amp::array_view<const int, 1> in,
                 amp::array_view<int, 1> out)
{
    tile_static int s[16];
    int x = in[t.global];
    for (int i = 0; i < 4; ++i) {
        if (x > 1000000) break;
        s[t.local[0]] = x;
        t.barrier.wait();
        x = s[15 - t.local[0]] + 1;
        t.barrier.wait();
    }
    out[t.global] = x;
}

// A barrier inside a helper function.
static __device__ void helper_sync(const amp::tiled_index<16> &t) { t.barrier.wait(); }
AMP_TILED_KERNEL(fibers_helper_barrier, amp::tiled_index<16> t, amp::array_view<const int, 1> in,
                 amp::array_view<int, 1> out)
{
    tile_static int s[16];
    s[t.local[0]] = in[t.global];
    helper_sync(t);
    out[t.global] = s[15 - t.local[0]];
}

// A reference that lives across a barrier.
AMP_TILED_KERNEL(fibers_reference, amp::tiled_index<16> t, amp::array_view<const int, 1> in,
                 amp::array_view<int, 1> out)
{
    tile_static int s[16];
    int &mine = s[t.local[0]];
    mine = in[t.global];
    t.barrier.wait();
    out[t.global] = mine + s[15 - t.local[0]];
}

// A volatile that lives across a barrier: each of its reads is the
// program's (the loop version's const copy read it once, so a spin on it
// ended at once).
AMP_TILED_KERNEL(fibers_volatile, amp::tiled_index<16> t, amp::array_view<const int, 1> in,
                 amp::array_view<int, 1> out)
{
    tile_static int s[16];
    volatile int mine = in[t.global];
    s[t.local[0]] = mine;
    t.barrier.wait();
    out[t.global] = mine + s[15 - t.local[0]];
}

// A return before a barrier, under a condition that reads memory (never
// launched: with negative values it would be a divergent barrier).
AMP_TILED_KERNEL(fibers_divergent_return, amp::tiled_index<16> t, amp::array_view<int, 1> out)
{
    tile_static int s[16];
    if (out[t.global] < 0) return;
    s[t.local[0]] = 1;
    t.barrier.wait();
    out[t.global] = s[15 - t.local[0]];
}

// Grid-stride loops the lockstep emission must leave as they were (found by
// a review against fibers): a name declared again in the loop (the whole
// kernel stays on fibers), a declaration a zero-trip loop must not evaluate,
// a work-item's array used across the loop, the compiler's atomic builtins,
// a local whose destructor calls an atomic.
AMP_TILED_KERNEL(lockstep_shadow, amp::tiled_index<64> t, amp::array_view<const int, 1> in,
                 amp::array_view<int, 1> out, int p)
{
    tile_static unsigned part[64];
    const int n = in.extent[0];
    const int stride = out.extent[0];
    const int l = t.local[0];
    unsigned h = 7u + (unsigned)p;
    for (int i = t.global[0]; i < n; i += stride) {
        const int n = 2;
        h = h * 31u + (unsigned)in[i] * (unsigned)n;
    }
    part[l] = h;
    t.barrier.wait();
    out[t.global] = (int)(part[l] ^ (part[63 - l] >> 3));
}
AMP_TILED_KERNEL(lockstep_guarded_division, amp::tiled_index<64> t, amp::array_view<const int, 1> in,
                 amp::array_view<int, 1> out, int p)
{
    tile_static unsigned part[64];
    const int n = in.extent[0];
    const int stride = out.extent[0];
    const int l = t.local[0];
    unsigned h = 7u;
    for (int i = t.global[0]; i < n * p; i += stride) {
        const int q = 1000 / p;
        h = h * 31u + (unsigned)in[i] + (unsigned)q;
    }
    part[l] = h;
    t.barrier.wait();
    out[t.global] = (int)(part[l] ^ (part[63 - l] >> 3));
}
AMP_TILED_KERNEL(lockstep_private_array, amp::tiled_index<64> t, amp::array_view<const int, 1> in,
                 amp::array_view<int, 1> out, int p)
{
    tile_static unsigned part[64];
    const int n = in.extent[0];
    const int stride = out.extent[0];
    const int l = t.local[0];
    int hist[2] = {p, 0};
    for (int i = t.global[0]; i < n; i += stride) hist[in[i] & 1] += in[i];
    part[l] = (unsigned)(hist[0] * 3 + hist[1]);
    t.barrier.wait();
    out[t.global] = (int)(part[l] ^ (part[63 - l] >> 3));
}
// The compiler's atomic builtins: GCC's and clang's (the CPU accelerator,
// hipRTC), not NVRTC's, where this kernel is left out.
#if !defined(__CUDACC_RTC__) && !defined(__CUDACC__)
AMP_TILED_KERNEL(lockstep_atomic_builtin, amp::tiled_index<64> t, amp::array_view<const int, 1> in,
                 amp::array_view<int, 1> out, int p)
{
    tile_static unsigned cnt;
    tile_static unsigned part[64];
    const int n = in.extent[0];
    const int stride = out.extent[0];
    const int l = t.local[0];
    if (l == 0) cnt = (unsigned)p;
    t.barrier.wait();
    unsigned h = 7u;
    for (int i = t.global[0]; i < n; i += stride) h = h * 31u + __atomic_fetch_add(&cnt, 1u, __ATOMIC_RELAXED);
    part[l] = h;
    t.barrier.wait();
    out[t.global] = (int)(part[l] ^ (part[63 - l] >> 3));
}
#endif
struct lockstep_ticket {
    unsigned *c, *h;
    __device__ ~lockstep_ticket() { *h = *h * 31u + atomicAdd(c, 1u); }
};
AMP_TILED_KERNEL(lockstep_destructor, amp::tiled_index<64> t, amp::array_view<const int, 1> in,
                 amp::array_view<int, 1> out, int p)
{
    tile_static unsigned cnt;
    tile_static unsigned part[64];
    const int n = in.extent[0];
    const int stride = out.extent[0];
    const int l = t.local[0];
    if (l == 0) cnt = (unsigned)p;
    part[l] = 7u;
    t.barrier.wait();
    for (int i = t.global[0]; i < n; i += stride) {
        lockstep_ticket g{&cnt, &part[l]};
    }
    t.barrier.wait();
    out[t.global] = (int)(part[l] ^ (part[63 - l] >> 3));
}
// A uniform declaration hiding an outer name in a region (not a lockstep
// loop): the loop version would hoist it next to the one it hides.
AMP_TILED_KERNEL(shadow_uniform_region, amp::tiled_index<64> t, amp::array_view<const int, 1> in,
                 amp::array_view<int, 1> out, int p)
{
    tile_static int part[64];
    const int n = 5 + p;
    const int l = t.local[0];
    int x = in[0] * 0;
    for (int r = 0; r < 2; ++r) {
        x += n;
        const int n = 100;
        part[l] = x + n;
        t.barrier.wait();
        x += part[63 - l];
        t.barrier.wait();
    }
    out[t.global] = x;
}

// The order of a region's work-item loops (lib/cpu/loops/order.c): a region
// whose every placed store runs along the tile's next dimension out (a
// transpose's first phase) runs that dimension innermost on the CPU. The
// results must not change. order_transpose: out = in transposed tile by
// tile, plus the source row within the tile (through a variable, r).
AMP_TILED_KERNEL(order_transpose, amp::tiled_index<16, 16> t, amp::array_view<const int, 2> in,
                 amp::array_view<int, 2> out)
{
    tile_static int s[16][16];
    const int r = t.local[0];
    s[t.local[1]][r] = in[t.global] + r;
    t.barrier.wait();
    out(t.tile_origin[1] + t.local[0], t.tile_origin[0] + t.local[1]) = s[t.local[0]][t.local[1]];
}
// The same through a buffer whose rows are padded to 17 ints (not whole
// 64-byte lines): it keeps the usual order.
AMP_TILED_KERNEL(order_padded, amp::tiled_index<16, 16> t, amp::array_view<const int, 2> in,
                 amp::array_view<int, 2> out)
{
    tile_static int s[16][17];
    const int r = t.local[0];
    s[t.local[1]][r] = in[t.global] + r;
    t.barrier.wait();
    out(t.tile_origin[1] + t.local[0], t.tile_origin[0] + t.local[1]) = s[t.local[0]][t.local[1]];
}
// Rank 3 without tile_static: the store's last subscript is the tile's
// middle dimension, which goes innermost. out(a, c, b) = 3 in(a, b, c) + the
// work-item's first local coordinate.
AMP_TILED_KERNEL(order_rank3, amp::tiled_index<2, 8, 8> t, amp::array_view<const int, 3> in,
                 amp::array_view<int, 3> out)
{
    out(t.global[0], t.global[2], t.global[1]) = in[t.global] * 3 + t.local[0];
}
// Two stores in the first region, one along each dimension: the usual
// order. out = in transposed within each tile, doubled.
AMP_TILED_KERNEL(order_mixed, amp::tiled_index<16, 16> t, amp::array_view<const int, 2> in,
                 amp::array_view<int, 2> out)
{
    tile_static int s[16][16];
    s[t.local[1]][t.local[0]] = in[t.global];
    out(t.global[0], t.global[1]) = 0;
    t.barrier.wait();
    out(t.global[0], t.global[1]) = s[t.local[0]][t.local[1]] * 2;
}
// As order_mixed, with the contiguous store through the whole index
// (out[t.global]): the usual order.
AMP_TILED_KERNEL(order_whole, amp::tiled_index<16, 16> t, amp::array_view<const int, 2> in,
                 amp::array_view<int, 2> out)
{
    tile_static int s[16][16];
    s[t.local[1]][t.local[0]] = in[t.global];
    out[t.global] = 0;
    t.barrier.wait();
    out(t.global[0], t.global[1]) = s[t.local[0]][t.local[1]] * 2;
}
// Both regions interchanged: a private variable saved in the first and
// read in the second, and a return after the last barrier. Work-items
// with local column 3 write nothing.
AMP_TILED_KERNEL(order_private, amp::tiled_index<16, 16> t, amp::array_view<const int, 2> in,
                 amp::array_view<int, 2> out)
{
    tile_static int s[16][16];
    int mine = in[t.global] * 5;
    s[t.local[1]][t.local[0]] = mine - 1;
    t.barrier.wait();
    if (t.local[1] == 3) return;
    out(t.global[1], t.global[0]) = s[t.local[0]][t.local[1]] + mine;
}
// The layout of tile_static arrays (lib/cpu/loops/layout.c): a transpose
// that writes its buffer along the tile's rows and reads it down the
// columns (the GPU's padded transpose) has the buffer stored transposed on
// the CPU. The results must not change. layout_padded: out = in transposed
// tile by tile, plus the work-item's local column.
AMP_TILED_KERNEL(layout_padded, amp::tiled_index<16, 16> t, amp::array_view<const int, 2> in,
                 amp::array_view<int, 2> out)
{
    tile_static int s[16][17];
    const int ly = t.local[0], lx = t.local[1];
    s[ly][lx] = in[t.global] + lx;
    t.barrier.wait();
    out(t.tile_origin[1] + ly, t.tile_origin[0] + lx) = s[lx][ly];
}
// The same without padding, the element changed in place too (+=, ++).
AMP_TILED_KERNEL(layout_inplace, amp::tiled_index<16, 16> t, amp::array_view<const int, 2> in,
                 amp::array_view<int, 2> out)
{
    tile_static int s[16][16];
    s[t.local[0]][t.local[1]] = in[t.global];
    s[t.local[0]][t.local[1]] += t.local[1] - 1;
    s[t.local[0]][t.local[1]]++;
    t.barrier.wait();
    out(t.tile_origin[1] + t.local[0], t.tile_origin[0] + t.local[1]) = s[t.local[1]][t.local[0]];
}
// Rank 3: the tile's last two dimensions.
AMP_TILED_KERNEL(layout_rank3, amp::tiled_index<2, 16, 16> t, amp::array_view<const int, 3> in,
                 amp::array_view<int, 3> out)
{
    tile_static int s[16][17];
    tile_static int row0[2];
    if (t.local[1] == 0 && t.local[2] == 0) row0[t.local[0]] = t.local[0];
    t.barrier.wait();
    if (t.local[0] == 0) s[t.local[1]][t.local[2]] = in[t.global] + row0[1];
    t.barrier.wait();
    out(t.global[0], t.tile_origin[2] + t.local[1], t.tile_origin[1] + t.local[2]) = s[t.local[2]][t.local[1]];
}
// Kept as declared: an element's address taken and moved along its row
// (the transposed layout would move what it reaches): out gets s[lx][ly]
// plus, but in the last column, the element after it in its row.
AMP_TILED_KERNEL(layout_address, amp::tiled_index<16, 16> t, amp::array_view<const int, 2> in,
                 amp::array_view<int, 2> out)
{
    tile_static int s[16][17];
    s[t.local[0]][t.local[1]] = in[t.global] + t.local[1];
    t.barrier.wait();
    const int *p = &s[t.local[1]][t.local[0]];
    out(t.tile_origin[1] + t.local[0], t.tile_origin[0] + t.local[1]) = p[0] + (t.local[0] < 15 ? p[1] : 0);
}
// ... the element an assignment returns, its address taken (p[1] is the
// next element of its row, written by the neighbouring work-item), ...
AMP_TILED_KERNEL(layout_assigned, amp::tiled_index<16, 16> t, amp::array_view<const int, 2> in,
                 amp::array_view<int, 2> out)
{
    tile_static int s[16][17];
    int *p = &(s[t.local[0]][t.local[1]] = in[t.global] + t.local[1]);
    t.barrier.wait();
    out(t.tile_origin[1] + t.local[0], t.tile_origin[0] + t.local[1]) =
        s[t.local[1]][t.local[0]] + (t.local[1] < 15 ? p[1] : 0);
}
// ... a volatile reference bound to an element, and moved along its row,
// ...
AMP_TILED_KERNEL(layout_volatile, amp::tiled_index<16, 16> t, amp::array_view<const int, 2> in,
                 amp::array_view<int, 2> out)
{
    tile_static int s[16][17];
    s[t.local[0]][t.local[1]] = in[t.global] + t.local[1];
    t.barrier.wait();
    volatile int &r = s[t.local[1]][t.local[0]];
    out(t.tile_origin[1] + t.local[0], t.tile_origin[0] + t.local[1]) = r + (t.local[0] < 15 ? (&r)[1] : 0);
}
// ... a reference bound to what an assignment returns through the full
// expression's cleanups (a temporary with a destructor), ...
struct layout_temp {
    int v;
    __device__ ~layout_temp() {}
};
AMP_TILED_KERNEL(layout_cleanup, amp::tiled_index<16, 16> t, amp::array_view<const int, 2> in,
                 amp::array_view<int, 2> out)
{
    tile_static int s[16][17];
    int &r = (s[t.local[0]][t.local[1]] = layout_temp{in[t.global] + t.local[1]}.v);
    r += 0;
    t.barrier.wait();
    out(t.tile_origin[1] + t.local[0], t.tile_origin[0] + t.local[1]) = s[t.local[1]][t.local[0]];
}
// ... a reference bound to an element, ...
AMP_TILED_KERNEL(layout_reference, amp::tiled_index<16, 16> t, amp::array_view<const int, 2> in,
                 amp::array_view<int, 2> out)
{
    tile_static int s[16][17];
    s[t.local[0]][t.local[1]] = in[t.global] + t.local[1];
    t.barrier.wait();
    const int &r = s[t.local[1]][t.local[0]];
    out(t.tile_origin[1] + t.local[0], t.tile_origin[0] + t.local[1]) = r;
}
// ... a subscript the analysis cannot place (t.global[1] % 16: the local
// column), ...
AMP_TILED_KERNEL(layout_global, amp::tiled_index<16, 16> t, amp::array_view<const int, 2> in,
                 amp::array_view<int, 2> out)
{
    tile_static int s[16][17];
    s[t.local[0]][t.global[1] % 16] = in[t.global] + t.local[1];
    t.barrier.wait();
    out(t.tile_origin[1] + t.local[0], t.tile_origin[0] + t.local[1]) = s[t.local[1]][t.local[0]];
}
// ... and a writing region that keeps its order (a store along the
// contiguous dimension beside the buffer's: order.c).
AMP_TILED_KERNEL(layout_mixed, amp::tiled_index<16, 16> t, amp::array_view<const int, 2> in,
                 amp::array_view<int, 2> out)
{
    tile_static int s[16][17];
    tile_static int one[16][16];
    s[t.local[0]][t.local[1]] = in[t.global] + t.local[1];
    one[t.local[0]][t.local[1]] = 1;
    t.barrier.wait();
    out(t.tile_origin[1] + t.local[0], t.tile_origin[0] + t.local[1]) =
        s[t.local[1]][t.local[0]] * one[t.local[0]][t.local[1]];
}
// A next dimension too short to run innermost (4): the usual order.
// (Never launched: it only has to compile.)
AMP_TILED_KERNEL(order_short, amp::tiled_index<4, 64> t, amp::array_view<const int, 2> in,
                 amp::array_view<int, 2> out)
{
    out(t.global[1], t.global[0]) = in[t.global];
}
// The order of the tiles (lib/cpu/loops/tiles.c): kernels that build an
// index with their tile's coordinates swapped run their tiles in groups of
// tile rows on the CPU. in is R x C, out C x R. tiles_transpose_rect:
// out(c, r) = 3 in(r, c) + r % 7, through a tile buffer and an index built
// from the tile's origin (the seed's transpose).
AMP_TILED_KERNEL(tiles_transpose_rect, amp::tiled_index<16, 16> t, amp::array_view<const int, 2> in,
                 amp::array_view<int, 2> out)
{
    tile_static int s[16][16];
    s[t.local[1]][t.local[0]] = in[t.global] * 3 + t.global[0] % 7;
    t.barrier.wait();
    amp::index<2> dst = amp::index<2>(t.tile_origin[1], t.tile_origin[0]) + t.local;
    out[dst] = s[t.local[0]][t.local[1]];
}
// out(c, r) = in(r, c) - tile column of (r, c), through variables: 16 tile
// rows of 8 a group.
AMP_TILED_KERNEL(tiles_naive_rect, amp::tiled_index<8, 32> t, amp::array_view<const int, 2> in,
                 amp::array_view<int, 2> out)
{
    const int row = t.global[1], col = t.global[0] + 0;
    out(row, col) = in[t.global] - t.tile[1];
}
// Each tile's turn: order(c, r) = how many tiles began before tile (r, c)
// (work-item (0, 0) counts; one thread runs the tiles in turn).
AMP_TILED_KERNEL(tiles_order_probe, amp::tiled_index<16, 16> t, amp::array_view<int, 1> counter,
                 amp::array_view<int, 2> order)
{
    if (t.local[0] == 0 && t.local[1] == 0) order(t.tile[1], t.tile[0]) = amp::atomic_fetch_add(&counter[0], 1);
}
// Both dimensions of the position in each subscript: the launch's order.
AMP_TILED_KERNEL(tiles_mixed_subscripts, amp::tiled_index<16, 16> t, amp::array_view<const int, 2> in,
                 amp::array_view<int, 2> out)
{
    out(t.global[0] + t.global[1] * 0, t.global[1]) = in(t.global[0], t.global[1] + t.global[0] * 0);
}

// ---- recomputed (remat) variables keep the value of their declaration
// (found by a differential review against fibers). remat_stale: r and q
// read stride, which the outer flow doubles while they live: a region
// recomputing them must not see the new stride. out = sum over st in
// {1, 2, 4} of in(tile + (l + st) % 16) + st + l.
AMP_TILED_KERNEL(remat_stale, amp::tiled_index<16> t, amp::array_view<const int, 1> in,
                 amp::array_view<int, 1> out)
{
    tile_static int s[16];
    int stride = 1;
    const int r = t.local[0] * stride;
    int acc = 0;
    while (stride < 8) {
        s[t.local[0]] = in[t.global] + stride;
        t.barrier.wait();
        const int q = t.local[0] + stride;
        stride *= 2;
        t.barrier.wait();
        acc += s[q % 16] + r;
        t.barrier.wait();
    }
    out[t.global] = acc;
}
// remat_names: r is recomputed in a block where an n of the work-item's
// and a uniform remat_scale hide the names its initialiser reads. out =
// l * (tile + 3) + 7 + in(tile * 16 + 15 - l) + 100 * tile.
__device__ const int remat_scale = 7;
AMP_TILED_KERNEL(remat_names, amp::tiled_index<16> t, amp::array_view<const int, 1> in,
                 amp::array_view<int, 1> out)
{
    tile_static int s[16];
    const int n = t.tile[0] + 3;
    const int r = t.local[0] * n + remat_scale;
    s[t.local[0]] = in[t.global];
    t.barrier.wait();
    {
        const int remat_scale = t.tile[0] * 100;
        int n = s[15 - t.local[0]];
        t.barrier.wait();
        out[t.global] = r + n + remat_scale;
    }
}

// ---- declarations the loop version moves ahead must not hide a name the
// code they move past reads (each kernel stays on fibers): out = in(tile
// + 15 - l) * 3 + 10 * in(g) + the global's value. A uniform declaration
// goes to the start of its region, ...
__device__ const int hoist_k = 10;
AMP_TILED_KERNEL(hoist_uniform, amp::tiled_index<16> t, amp::array_view<const int, 1> in,
                 amp::array_view<int, 1> out)
{
    tile_static int s[16];
    s[t.local[0]] = in[t.global];
    t.barrier.wait();
    int a = s[15 - t.local[0]] * 3 + in[t.global] * hoist_k;
    const int hoist_k = 1;
    out[t.global] = a + hoist_k;
}
// ... a type declaration (an enumerator here) and a tile_static array to
// the top of the kernel.
AMP_TILED_KERNEL(hoist_enum, amp::tiled_index<16> t, amp::array_view<const int, 1> in,
                 amp::array_view<int, 1> out)
{
    tile_static int s[16];
    int v = in[t.global] * hoist_k;
    s[t.local[0]] = in[t.global];
    t.barrier.wait();
    {
        enum { hoist_k = 3 };
        v += s[15 - t.local[0]] * hoist_k;
        t.barrier.wait();
    }
    out[t.global] = v + 1;
}
__device__ const int hoist_tab[4] = {1, 1, 1, 1};
AMP_TILED_KERNEL(hoist_tile_static, amp::tiled_index<16> t, amp::array_view<const int, 1> in,
                 amp::array_view<int, 1> out)
{
    int v = in[t.global] * hoist_k + hoist_tab[t.local[0] % 4];
    {
        tile_static int hoist_tab[16];
        hoist_tab[t.local[0]] = in[t.global];
        t.barrier.wait();
        v += hoist_tab[15 - t.local[0]] * 3;
    }
    out[t.global] = v;
}

// A macro redefined inside the body: each use expands the definition in
// force there (one definition cannot hold around a whole loop version: it
// stays on fibers). out = in(g) + 5 + 7 * in(tile + 15 - l).
#define LOOPS_STEP 5
AMP_TILED_KERNEL(macro_redefined, amp::tiled_index<16> t, amp::array_view<const int, 1> in,
                 amp::array_view<int, 1> out)
{
    tile_static int s[16];
    int x = in[t.global] + LOOPS_STEP;
#undef LOOPS_STEP
#define LOOPS_STEP 7
    s[t.local[0]] = in[t.global];
    t.barrier.wait();
    out[t.global] = x + s[15 - t.local[0]] * LOOPS_STEP;
}
#undef LOOPS_STEP

// A destructor of the user's reading threadIdx (no call in the kernel's
// tree): it must see its own work-item. out = in(tile + 15 - l) + 1000 l.
struct loops_tracker {
    int *dst;
    __device__ ~loops_tracker() { *dst += (int)threadIdx.x * 1000; }
};
AMP_TILED_KERNEL(destructor_thread, amp::tiled_index<16> t, amp::array_view<const int, 1> in,
                 amp::array_view<int, 1> out)
{
    tile_static int s[16];
    s[t.local[0]] = in[t.global];
    t.barrier.wait();
    int x = s[15 - t.local[0]];
    {
        loops_tracker tr{&x};
    }
    out[t.global] = x;
}
