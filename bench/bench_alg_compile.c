/* bench_alg_compile.c — how long the built-in algorithms' programs take to compile for GPU targets (NVRTC, hipRTC), which every first use of an algorithm on a GPU waits for where the caches are cold: the reductions of a type, its scan with one operator (a program as hipamp builds it) and with every operator in one program (as it built them before they were split), side by side in one run. Needs no GPU; linked with the library's objects (the program generator is internal).
 *
 *   bench_alg_compile [TARGET ...]     (default: sm_90 gfx90a; one without
 *                                       an installed compiler is named and
 *                                       skipped) */
#include "alg/alg.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

typedef struct program_case {
    const char *what;
    int family;
    amp_type type;
    int op; /* the scan's operator; -1: every one */
} program_case;

/* One compile of c for target: its seconds and code object bytes;
 * AMP_ERROR_UNSUPPORTED where no compiler for target is installed, another
 * failure with the library's message on stderr. */
static amp_status compile_once(const program_case *c, const char *target, double *secs, size_t *bytes)
{
    char *src = amp__alg_source_for(true, c->family, c->type, AMP_MAP_IDENTITY, c->op, 0, NULL, NULL, 0, 0);
    if (!src) {
        fprintf(stderr, "%s: no memory for the source\n", c->what);
        return AMP_ERROR_OUT_OF_MEMORY;
    }
    amp_code_object *co = NULL;
    double t0 = now_s();
    amp_status st = amp_compile_for_target(target, src, NULL, &co);
    *secs = now_s() - t0;
    free(src);
    if (st == AMP_ERROR_UNSUPPORTED) return st;
    if (st != AMP_OK) {
        fprintf(stderr, "%s for %s: %s: %.2000s\n", c->what, target, amp_status_name(st), amp_last_error());
        return st;
    }
    const void *data = NULL;
    *bytes = 0;
    if (amp_code_object_data(co, &data, bytes) != AMP_OK) *bytes = 0;
    amp_code_object_destroy(co);
    return AMP_OK;
}

int main(int argc, char **argv)
{
    static const char *const defaults[] = {"sm_90", "gfx90a"};
    const char *const *targets = argc > 1 ? (const char *const *)argv + 1 : defaults;
    int ntargets = argc > 1 ? argc - 1 : 2;
    static const program_case cases[] = {
        {"reductions of int32 (every operator) and iota", AMP__ALG_FAM_BASIC, AMP_TYPE_INT32, -1},
        {"scan of int32, the sum alone", AMP__ALG_FAM_SCAN, AMP_TYPE_INT32, AMP_OP_SUM},
        {"scan of int32, every operator in one program", AMP__ALG_FAM_SCAN, AMP_TYPE_INT32, -1},
        {"reductions of float32 (every operator) and iota", AMP__ALG_FAM_BASIC, AMP_TYPE_FLOAT32, -1},
        {"scan of float32, the sum alone", AMP__ALG_FAM_SCAN, AMP_TYPE_FLOAT32, AMP_OP_SUM},
        {"scan of float32, every operator in one program", AMP__ALG_FAM_SCAN, AMP_TYPE_FLOAT32, -1},
    };
    int failed = 0, done = 0;
    printf("Compile time of the algorithms' GPU programs (one compile each, no cache; the caller's thread):\n\n");
    printf("| program | target | seconds | code object bytes |\n|---|---|---:|---:|\n");
    for (int t = 0; t < ntargets; ++t) {
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
            double secs = 0;
            size_t bytes = 0;
            amp_status st = compile_once(&cases[i], targets[t], &secs, &bytes);
            if (st == AMP_ERROR_UNSUPPORTED) {
                printf("| (%s: %s) | | | |\n", targets[t], amp_last_error());
                break;
            }
            if (st != AMP_OK) {
                failed++;
                continue;
            }
            printf("| %s | %s | %.2f | %zu |\n", cases[i].what, targets[t], secs, bytes);
            fflush(stdout);
            done++;
        }
    }
    if (!done && !failed) {
        fprintf(stderr, "bench_alg_compile: none of the targets has a compiler here (NVRTC, hipRTC)\n");
        return 77;
    }
    return failed ? 1 : 0;
}
