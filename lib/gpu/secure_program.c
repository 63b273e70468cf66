/* secure_program.c — whether this process may compile GPU kernels: not in a set-uid, set-gid or file-capability program (gpu_driver.h says why), for device builds (gpu_backend.c) and amp_compile_for_target (amd_target.c) alike. */
#include "gpu_driver.h"

#include "base/core.h"

#include <sys/auxv.h>

amp_status amp__gpu_refuse_in_secure_program(const char *what)
{
    if (!getauxval(AT_SECURE)) return AMP_OK;
    return amp__fail(AMP_ERROR_UNSUPPORTED,
                     "%s: a set-uid, set-gid or file-capability program compiles no kernels: hipRTC and NVRTC would "
                     "compile with its rights, hipRTC with options and paths from the environment of whoever started "
                     "it (HIPRTC_COMPILE_OPTIONS_APPEND, HIP_PATH, ...); the prebuilt packs still serve the built-in "
                     "algorithms",
                     what);
}
