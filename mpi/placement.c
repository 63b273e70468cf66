/* placement.c — hipamp::mpi's rank placement: a rank's node-local rank (MPI_Comm_split_type) and the accelerator it takes (AMP_DEFAULT_ACCELERATOR, else amp_accelerator_select_local). */
#include "mpi_private.h"

amp_status amp_mpi_local_rank(MPI_Comm comm, int *local_rank, int *local_size)
{
    amp_status st = AMP_OK;
    MPI_Comm node = MPI_COMM_NULL;
    int rc;
    if (local_rank) *local_rank = 0;
    if (local_size) *local_size = 0;
    if ((st = amp_mpi__need_mpi(__func__)) != AMP_OK) return st;
    if ((st = amp_mpi__intra(comm, __func__)) != AMP_OK) return st;
    /* The split is collective: a rank that was given a NULL still takes
     * part in it, so that the others do not wait for it for ever. */
    if ((rc = MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node)) != MPI_SUCCESS)
        return amp_mpi__mpi(rc, "MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)");
    int r = 0, n = 0;
    if (!local_rank || !local_size) {
        st = amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", __func__,
                           !local_rank ? "local_rank" : "local_size");
        goto fail;
    }
    if ((rc = MPI_Comm_rank(node, &r)) != MPI_SUCCESS || (rc = MPI_Comm_size(node, &n)) != MPI_SUCCESS) {
        st = amp_mpi__mpi(rc, "MPI_Comm_rank/size of the node communicator");
        goto fail;
    }
    *local_rank = r;
    *local_size = n;
fail:
    MPI_Comm_free(&node);
    return st;
}

amp_status amp_mpi_select_accelerator(MPI_Comm comm, amp_accelerator **out)
{
    amp_status st = AMP_OK;
    int local = 0, nlocal = 0;
    if (out) *out = NULL;
    /* Collective even when the environment decides, or out is NULL, so
     * that every rank makes the same calls whatever its environment says. */
    if ((st = amp_mpi_local_rank(comm, &local, &nlocal)) != AMP_OK) return st;
    AMP_MPI__NOT_NULL(out);
    if (amp_mpi__env("AMP_DEFAULT_ACCELERATOR")) {
        if ((st = amp_accelerator_default(out)) != AMP_OK)
            return amp_mpi__hipamp(st, "amp_mpi_select_accelerator: AMP_DEFAULT_ACCELERATOR");
        return AMP_OK;
    }
    if ((st = amp_accelerator_select_local(local, out)) != AMP_OK)
        return amp_mpi__hipamp(st, "amp_mpi_select_accelerator: amp_accelerator_select_local");
    return AMP_OK;
}
