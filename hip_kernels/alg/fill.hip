// fill.hip — the algorithms' simplest kernels: clear (zero a scratch array), iota and fill; read after layout.hip.

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
