/* tealeaf.c — TeaLeaf (the UoB-HPC / UK-MAC 2-D heat-conduction mini-app) in hipamp, one rank: reads a TeaLeaf deck, runs its time steps with the deck's solver (tea_solver.c, tea_poly.c) on one accelerator, prints the field summary as TeaLeaf does and verifies the final temperature against the expected value.
 *
 *   tealeaf [--device PATH] [--problems FILE] [--solver cg|chebyshev|ppcg|jacobi] [--check-every K] [--no-graph]
 *           [--digest] [--skip-missing] DECK
 *
 * The expected value: the line "x_cells y_cells end_step value" of
 * tea.problems (beside the deck, or --problems), as UoB-HPC TeaLeaf; where
 * it has none, the last field summary of TeaLeaf's reference output beside
 * the deck (DECK with .in replaced by .out, when that output is for the
 * same mesh and step count: the Fortran TeaLeaf's values for tea_bm_1..6).
 * Verification as both: |100 U / expected - 100| < 0.001, U the final sum
 * of mass times temperature. Exit 0: PASSED; 1: FAILED, no expected value,
 * or a run-time error; 2: a usage error (a --device naming no accelerator
 * here included) or a bad deck (the message names the line); 77 with --skip-missing when the deck does not exist (ctest's
 * SKIP_RETURN_CODE: the decks are not part of the project).
 *
 * --check-every K: the host reads the iteration count every K iterations
 * (default 16; the device stops updating once converged, so every K gives
 * the same bits: --digest prints them). --no-graph: launch each iteration's
 * kernels instead of replaying a launch graph.
 *
 * --solver: instead of the deck's use_cg / use_chebyshev / use_ppcg /
 * use_jacobi (tea_poly.c has the last three). */
#define _POSIX_C_SOURCE 200809L
#include "tea_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    tea_options o;
    int rc = tea_parse_args(argc, argv, &o);
    if (rc) return rc < 0 ? 0 : rc; /* --help: 0 */
    tea_deck d;
    char err[512];
    if (o.skip_missing && access(o.deck, F_OK) != 0) {
        printf("tealeaf: SKIP: no deck at %s (TeaLeaf's decks live in ../shared/tealeaf beside the project)\n", o.deck);
        return 77;
    }
    if (tea_deck_read(o.deck, o.solver, &d, err, sizeof err)) {
        fprintf(stderr, "tealeaf: %s\n", err);
        return 2;
    }
    amp_accelerator *acc = NULL;
    amp_status st = o.device ? amp_accelerator_find(o.device, &acc) : amp_accelerator_default(&acc);
    if (st != AMP_OK) {
        fprintf(stderr, "tealeaf: no accelerator%s%s: %s\n", o.device ? " " : "", o.device ? o.device : "",
                amp_last_error());
        return o.device ? 2 : 1; /* --device naming none here is the command line's error */
    }
    return tea_run(&o, &d, acc, NULL, 1, 0);
}
