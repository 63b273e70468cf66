/* mpi_private.h — what the files of hipamp::mpi share (placement.c, path.c, exchange.c over errors.c): the component's error message and its helpers, the MPI-initialised check and the environment lookup. Never installed. */
#ifndef HIPAMP_MPI_PRIVATE_H
#define HIPAMP_MPI_PRIVATE_H

#include "hipamp_mpi.h"

/* The size of amp_mpi_last_error()'s buffer, terminator included. */
#define AMP_MPI__ERR_SIZE 1024

/* Sets amp_mpi_last_error() from fmt and returns s. */
amp_status amp_mpi__fail(amp_status s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A hipamp call failed: keeps its status and quotes amp_last_error(). */
amp_status amp_mpi__hipamp(amp_status s, const char *what);
/* An MPI call failed (only seen under MPI_ERRORS_RETURN): AMP_ERROR_DEVICE
 * with MPI's error string. */
amp_status amp_mpi__mpi(int rc, const char *what);
/* AMP_ERROR_INVALID_ARGUMENT naming fn unless MPI is initialised and not
 * finalized. */
amp_status amp_mpi__need_mpi(const char *fn);
/* AMP_ERROR_INVALID_ARGUMENT naming fn unless comm is an intracommunicator
 * (MPI_COMM_NULL and intercommunicators are refused; AMP_ERROR_DEVICE where
 * MPI_Comm_test_inter failed). Communicates with no rank. */
amp_status amp_mpi__intra(MPI_Comm comm, const char *fn);
/* Which vendor's pointers a GPU's device path needs: 'c' CUDA, 'h' HIP,
 * 0 none (the CPU accelerator, or a path hipamp does not know). */
char amp_mpi__vendor(const amp_accelerator_info *info);
/* The test seam: true when the program asks the library's step `where`
 * ("nccl_open", "nccl_post") to fail as it would for want of memory, or
 * ("AT_SECURE") to read the environment as a set-uid program does. A
 * program that defines amp_mpi_test_fault (test/mpi_helper.c) decides;
 * in every other one the weak reference is NULL and nothing fails. */
bool amp_mpi__fault(const char *where);
/* getenv, with an empty value read as unset, and every variable unset in
 * a set-uid, set-gid or file-capability program (said once a name). */
const char *amp_mpi__env(const char *name);
/* Whether the on/off variable name is off: 0, off, no or false (any case);
 * unset, 1, on, yes and true are on, and any other value is on too, said
 * once on stderr. */
bool amp_mpi__env_off(const char *name);

#define AMP_MPI__NOT_NULL(p)                                                                          \
    do {                                                                                              \
        if (!(p)) return amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", __func__, #p);   \
    } while (0)

#endif
