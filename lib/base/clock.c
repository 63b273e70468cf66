/* clock.c — the monotonic clock every timing in the library reads. */
#include "core.h"

#include <time.h>

uint64_t amp__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}
