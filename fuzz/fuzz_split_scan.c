/* fuzz_split_scan.c — libFuzzer harness for the CPU split compile's source scan (lib/cpu/cpu_split_scan.c): any text, as a user's kernel source, through amp__cpu_split_allowed and, where it is accepted, amp__cpu_split_kernels; AddressSanitizer catches a read outside the text, libFuzzer's -timeout a scan that does not end (the scan must be linear: a quadratic one took minutes on 600 KB), and each result is checked: the code returned is no longer than the text plus two, a refusal says why, every kernel found is a name of the code. */
#include "cpu/cpu_internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { FUZZ_KERNELS = 64 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *src = malloc(size + 1);
    if (!src) return 0;
    memcpy(src, data, size);
    src[size] = 0; /* a NUL inside ends the text, as it would for the library */
    char why[256] = "";
    char *code = amp__cpu_split_allowed(src, NULL, 0, why, sizeof why);
    if (!code) {
        if (!why[0]) abort(); /* a refusal names its reason */
    } else {
        if (strlen(code) > strlen(src) + 2) abort();
        amp__cpu_split_kernel k[FUZZ_KERNELS];
        memset(k, 0, sizeof k);
        int n = amp__cpu_split_kernels(code, k, FUZZ_KERNELS);
        for (int i = 0; i < FUZZ_KERNELS; ++i) {
            if (i < n && (!k[i].name || !strstr(code, k[i].name))) abort();
            free(k[i].name);
        }
        free(code);
    }
    free(src);
    return 0;
}
