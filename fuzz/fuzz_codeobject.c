/* fuzz_codeobject.c — libFuzzer harness for the AMD code-object readers (lib/gpu/amd_target.c: clang offload bundles, 64-bit ELF, PT_NOTE/SHT_NOTE walking, the msgpack of NT_AMDGPU_METADATA): any bytes, never a crash, an out-of-bounds read (AddressSanitizer) or a hang; whatever it returns is freed. */
#include "base/core.h"

#include <stdint.h>
#include <stdlib.h>

amp_status amp__code_object_parse(const void *bin, size_t size, amp_kernel_resources **ks, size_t *nk);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    amp_kernel_resources *ks = NULL;
    size_t nk = 0;
    /* A copy of exactly size bytes, so that a read past the end is caught. */
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy) return 0;
    for (size_t i = 0; i < size; ++i) copy[i] = data[i];
    if (amp__code_object_parse(copy, size, &ks, &nk) == AMP_OK)
        for (size_t i = 0; i < nk; ++i) (void)ks[i].lds_bytes;
    free(ks);
    free(copy);
    return 0;
}
