/* test_abi_nccl.c — checks every row of mpi/nccl_abi.h (the NCCL ABI hipamp::mpi declares by hand and loads with dlopen) against nccl.h; built only where nccl.h is installed (the GPU machine: libnccl-dev). */
#include <nccl.h>

#define AMP__ABI_CHECK 1
#include "nccl_abi.h"

#include "abi_check.h"

/* nccl.h maps no name to another symbol. */
static bool abi_name_ok(const char *ours, const char *header) { return strcmp(ours, header) == 0; }

Test(abi_nccl, header_version)
{
    cr_log_info("checked against nccl.h of NCCL %d.%d.%d", NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH);
    /* ncclSend and ncclRecv came with 2.7. */
    cr_expect_geq(NCCL_VERSION_CODE, NCCL_VERSION(2, 7, 0), "the ABI test needs nccl.h of NCCL 2.7 or later");
}

Test(abi_nccl, types) { NCCL_ABI_TYPES(ABI_CHECK_TYPE) }

Test(abi_nccl, constants) { NCCL_ABI_CONSTANTS(ABI_CHECK_CONSTANT) }

Test(abi_nccl, functions) { NCCL_FUNCS(ABI_CHECK_FUNCTION) }

/* ncclGetLastError exists from NCCL 2.13. */
Test(abi_nccl, optional_functions)
{
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 13, 0)
    NCCL_OPTIONAL(ABI_CHECK_FUNCTION)
#else
    cr_skip_test("nccl.h older than 2.13 has no ncclGetLastError");
#endif
}
