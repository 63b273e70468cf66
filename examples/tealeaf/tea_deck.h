/* tea_deck.h — TeaLeaf's input deck (tea.in format), the mesh's initial state it describes, and the expected final temperature for verification (tea.problems, or TeaLeaf's own reference output beside the deck).
 *
 * The format (TeaLeaf, UoB-HPC and UK-MAC): lines between "*tea" and
 * "*endtea"; each holds words separated by spaces, '=' or ','; '!' and
 * '#' start a comment. A word is a switch (use_cg) or a key followed by
 * its value (x_cells=10, eps 1.0e-15); both projects' spellings are
 * accepted (max_iters and tl_max_iters, ...). "state N key=value ..."
 * defines state N: density, energy and, for N > 1, geometry rectangle
 * (xmin xmax ymin ymax), circle / circular (xmin ymin: the centre, radius)
 * or point (xmin ymin). Defaults are UoB-HPC TeaLeaf's (a field summary
 * every summary_frequency steps, 10; 0: only the last). Keys this port does
 * not act on (tiles, profiler, kernel language, test_problem, ...) are
 * accepted and said to be ignored; an unknown key, a bad value, or a word
 * after "*tea" or "*endtea" on their lines is an error naming it and its
 * line. The deck, tea.problems and the reference output must be regular
 * files (a FIFO or a device is refused, not waited on). */
#ifndef TEA_DECK_H
#define TEA_DECK_H

#include <stdbool.h>
#include <stddef.h>

#define TEA_MAX_STATES 64

typedef enum tea_geometry { TEA_RECTANGLE, TEA_CIRCLE, TEA_POINT } tea_geometry;

typedef struct tea_state {
    bool defined;
    double density, energy;
    /* Shifted inwards by a hundredth of a cell, as TeaLeaf does, so that
     * an edge on a cell boundary never takes in the next cell. */
    double xmin, xmax, ymin, ymax, radius;
    tea_geometry geometry;
} tea_state;

typedef enum tea_solver_kind { TEA_SOLVER_CG, TEA_SOLVER_CHEBYSHEV, TEA_SOLVER_PPCG, TEA_SOLVER_JACOBI } tea_solver_kind;

typedef struct tea_deck {
    int x_cells, y_cells;
    double xmin, xmax, ymin, ymax, dx, dy;
    double dt_init, end_time;
    int end_step, max_iters, summary_frequency, test_problem;
    double eps;
    tea_solver_kind solver;
    /* Chebyshev and PPCG (UoB-HPC TeaLeaf's keys and defaults): CG
     * iterations before the switch (presteps + 1 of them, presteps 30), or
     * with errswitch until r . r < epslim (1e-5) after more than 20; PPCG's
     * inner steps (10). */
    int presteps, ppcg_inner_steps;
    double eps_lim;
    bool error_switch;
    bool inverse_density; /* the coefficient: 1 / density instead of density */
    int nstates;
    tea_state states[TEA_MAX_STATES];
    /* Words read and ignored (for the one line that says so). */
    char ignored[512];
} tea_deck;

/* Reads the deck at path, solved with solver (a tea_solver_kind; -1: the
 * deck's own use_...). 0: done; -1: the file cannot be read, or a line is
 * wrong, or a value the chosen solver needs is: err says which (path:line:
 * what, or path: what). */
int tea_deck_read(const char *path, int solver, tea_deck *d, char *err, size_t errlen);

/* The mesh's initial state for global rows [row0, row1) (0 <= row0 <= row1
 * <= y_cells), every column: density and energy, row-major, x_cells a row.
 * State 1 first, then each state in turn where it applies (TeaLeaf's
 * set_chunk_state). */
void tea_deck_generate(const tea_deck *d, int row0, int row1, double *density, double *energy);

/* The expected final temperature: the line "x_cells y_cells end_step value"
 * of the problems file (UoB-HPC TeaLeaf's tea.problems), that and nothing
 * more on the line. 1: found; 0: no such line; -1: the file cannot be read,
 * or is no regular file (a FIFO, a device): why (n bytes) says which. */
int tea_expected_from_problems(const char *problems, const tea_deck *d, double *value, char *why, size_t n);
/* The last field summary's temperature (its last column) in a TeaLeaf
 * reference output (tea_bm_N.out: the value the Fortran TeaLeaf checks its
 * benchmark decks against), when that output echoes the deck's x_cells and
 * y_cells and its last summary is at step end_step. 1: found; 0: none, or
 * for another problem; -1: cannot be read, or no regular file. */
int tea_expected_from_out(const char *out, const tea_deck *d, double *value);

#endif
