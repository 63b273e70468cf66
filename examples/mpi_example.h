/* mpi_example.h — what the MPI examples (heat_mpi, cg_mpi) share: MPI started and ended out of LeakSanitizer's sight, every rank stopped alike on bad arguments or on an error with the failed call's message, and whole-number options. Each program includes it once and sets example_name. */
#ifndef MPI_EXAMPLE_H
#define MPI_EXAMPLE_H

#include <hipamp.h>
#include <hipamp_mpi.h>

#include "cli_parse.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

/* The program's name in messages (set by main), this process's rank and
 * the number of ranks (set by example_mpi_init). */
static const char *example_name = "example";
static int world_rank, world_size = 1;

/* Built with LeakSanitizer (HIPAMP_SANITIZE): what MPI_Init allocates and
 * drops is the MPI library's and is not reported, and the leak check runs
 * before MPI_Finalize, while the library's own allocations are still
 * reachable (it frees little at finalize and unloads its plugins, so they
 * would be reported at exit with no library to suppress them by). No-ops
 * in other builds. */
extern void __lsan_do_leak_check(void) __attribute__((weak));
extern void __lsan_disable(void) __attribute__((weak));
extern void __lsan_enable(void) __attribute__((weak));

static inline void example_mpi_init(int *argc, char ***argv)
{
    if (__lsan_disable) __lsan_disable();
    MPI_Init(argc, argv);
    if (__lsan_enable) __lsan_enable();
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
}

static inline void example_mpi_finalize(void)
{
    if (__lsan_do_leak_check) __lsan_do_leak_check();
    MPI_Finalize();
}

/* Stops before any work, every rank alike (each parsed the same
 * arguments): rank 0 prints "<name>: <err>" and the usage on stderr (err
 * NULL: the usage on stdout, for --help), MPI ends. Returns main's exit
 * status: 2 for an error, 0 for --help. */
static inline int example_stop(const char *err, const char *usage)
{
    if (world_rank == 0) {
        if (err) fprintf(stderr, "%s: %s\n", example_name, err);
        fputs(usage, err ? stderr : stdout);
    }
    example_mpi_finalize();
    return err ? 2 : 0;
}

/* Ends the whole job: one rank's failure would leave the others waiting. */
static inline void die(const char *what, const char *detail)
{
    fprintf(stderr, "%s: rank %d: %s: %s\n", example_name, world_rank, what, detail);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

#define TRY(call)                                                                              \
    do {                                                                                       \
        amp_status st_ = (call);                                                               \
        if (st_ != AMP_OK) die(#call, amp_last_error());                                       \
    } while (0)
#define TRY_MPI(call)                                                                          \
    do {                                                                                       \
        amp_status st_ = (call);                                                               \
        if (st_ != AMP_OK) die(#call, amp_mpi_last_error());                                   \
    } while (0)


#endif
