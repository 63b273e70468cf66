/* trusted_check.c — amp_check_trusted_file: the library's own rule for what it runs or loads (lib/base/trusted_file.c), offered to programs and to hipamp::mpi, which sits on the public API (AMP_MPI_NCCL_LIBRARY). */
#include "internal.h"
#include "base/trusted_file.h"

#include <string.h>

amp_status amp_check_trusted_file(const char *path)
{
    if (!path) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_check_trusted_file: path is NULL");
    if (!path[0]) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_check_trusted_file: path is empty");
    const size_t len = strlen(path);
    if (len >= 4096)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_check_trusted_file: the path is %zu characters long, more than 4095",
                         len);
    char why[768];
    if (amp__unsafe_file(path, why, sizeof why))
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_check_trusted_file(\"%.200s%s\"): %s", path,
                         len > 200 ? "..." : "", why);
    return AMP_OK;
}
