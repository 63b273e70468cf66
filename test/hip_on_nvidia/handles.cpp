/* handles.cpp — checks lib/gpu/hip_abi.h's handle constants (HIP_ABI_HANDLE_CONSTANTS, pointer casts in the headers) against HIP's NVIDIA platform at run time; the test runtime checks every other row when it compiles. */
#include "cuda_compat.h"

#include <hip/hip_runtime_api.h>

#include <cstdint>
#include <cstdio>

#define AMP__ABI_CHECK 1
#include "gpu/hip_abi.h"

int main()
{
    int bad = 0;
#define CHECK_HANDLE(ours, value, vendor)                                                          \
    if ((uintptr_t)(vendor) != (uintptr_t)(value)) {                                               \
        std::printf("%s = %d as declared, but HIP's NVIDIA platform has %s = %#zx\n", #ours, value, #vendor, \
                    (size_t)(uintptr_t)(vendor));                                                  \
        bad = 1;                                                                                   \
    }
    HIP_ABI_HANDLE_CONSTANTS(CHECK_HANDLE)
    if (!bad) std::printf("hip_abi.h's handle constants match HIP's NVIDIA platform\n");
    return bad;
}
