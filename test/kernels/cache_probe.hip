// cache_probe.hip — a small kernel the compile-cache tests build in several processes (test_cache.c, cache_helper.c); CACHE_PROBE_ADD lets a test make its result depend on a header.
#ifndef CACHE_PROBE_ADD
#define CACHE_PROBE_ADD 0
#endif
AMP_KERNEL(cache_probe_scale, amp::index<1> i, amp::array_view<int, 1> data, int factor)
{
    data[i] = data[i] * factor + i[0] + CACHE_PROBE_ADD;
}
