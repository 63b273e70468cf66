/* bench_cpu_check.h — the one way bench_cpu's sections check a hipamp call: a failure is printed (call, status, message) and the section returns -1. */
#ifndef HIPAMP_BENCH_CPU_CHECK_H
#define HIPAMP_BENCH_CPU_CHECK_H

#include <hipamp.h>

#include <stdio.h>

#define BENCH_CPU_CHECK(call)                                                                          \
    do {                                                                                               \
        amp_status s_ = (call);                                                                        \
        if (s_ != AMP_OK) {                                                                            \
            fprintf(stderr, "bench_cpu: %s: %s: %s\n", #call, amp_status_name(s_), amp_last_error());  \
            return -1;                                                                                 \
        }                                                                                              \
    } while (0)

#endif
