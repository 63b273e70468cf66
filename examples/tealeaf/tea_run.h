/* tea_run.h — what tealeaf (one rank) and tealeaf_mpi (rows split across ranks) share around the solver: the command line, the time-step loop with TeaLeaf's output, and the verification. */
#ifndef TEA_RUN_H
#define TEA_RUN_H

#include "tea_deck.h"
#include "tea_solver.h"

#include <stdbool.h>

typedef struct tea_options {
    const char *deck, *device, *problems;
    int check_every;
    bool graph, digest;
    bool skip_missing; /* --skip-missing: no deck file is exit 77 (ctest's skip) */
    int solver;        /* --solver: a tea_solver_kind, or -1: the deck's */
} tea_options;

/* 0: parsed; 2: a usage error (said on stderr); -1: --help printed (exit 0). */
int tea_parse_args(int argc, char **argv, tea_options *o);

/* The rows of rank `rank` of nranks (1 <= nranks <= ny): the first
 * ny % nranks ranks get one row more. */
void tea_split(int ny, int nranks, int rank, int *rows, int *first_row);

/* Runs the deck on acc (this rank's block when comm is set, whose sum then
 * adds the field summary across ranks) and verifies it; rank 0 prints.
 * The exit status: 0 PASSED, 1 FAILED or an error. */
int tea_run(const tea_options *o, const tea_deck *d, amp_accelerator *acc, const tea_comm *comm, int nranks,
            int rank);

#endif
