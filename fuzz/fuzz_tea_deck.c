/* fuzz_tea_deck.c — libFuzzer harness for TeaLeaf's input readers (examples/tealeaf/tea_deck.c): the deck (tea_deck_read, tea.in format), tea.problems (tea_expected_from_problems) and the reference output (tea_expected_from_out), each over the same bytes written to a file on tmpfs. The first byte picks the solver asked for (-1: the deck's). A deck accepted must be one the run can use (finite positive cells, states 1..nstates defined), and its initial state is generated for a few rows; a refusal says why. */
#include "tea_deck.h"
#include "fuzz_support.h"

#include <math.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char path[128];


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!path[0]) snprintf(path, sizeof path, "%s/tea.in", fz_private_dir("tea"));
    if (size < 1) return 0;
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    if (size > 1 && fwrite(data + 1, 1, size - 1, f) != size - 1) abort();
    fclose(f);
    int solver = (int)(data[0] % 5) - 1;
    static tea_deck d;
    char err[512];
    memset(err, 0, sizeof err);
    if (tea_deck_read(path, solver, &d, err, sizeof err) == 0) {
        if (d.x_cells < 1 || d.y_cells < 1 || !(d.dx > 0) || !(d.dy > 0) || !isfinite(d.dx) || !isfinite(d.dy)) abort();
        if (d.nstates < 1 || d.nstates > TEA_MAX_STATES) abort();
        for (int s = 0; s < d.nstates; ++s)
            if (!d.states[s].defined || !(d.states[s].density > 0)) abort();
        if (!(d.dt_init > 0) || !(d.end_time > 0) || d.end_step < 1 || d.max_iters < 1 || !(d.eps > 0)) abort();
        if (d.x_cells <= 4096) {
            int rows = d.y_cells < 3 ? d.y_cells : 3;
            double *den = malloc(sizeof(double) * (size_t)rows * d.x_cells), *en = malloc(sizeof(double) * (size_t)rows * d.x_cells);
            if (den && en) tea_deck_generate(&d, d.y_cells - rows, d.y_cells, den, en);
            free(den);
            free(en);
        }
    } else {
        if (!err[0] || !memchr(err, 0, sizeof err)) abort();
        /* The problems and output readers with a deck of their own. */
        memset(&d, 0, sizeof d);
        d.x_cells = d.y_cells = 10;
        d.end_step = 10;
    }
    if (getenv("FZ_DEBUG")) fprintf(stderr, "fz: deck: %s\n", err[0] ? err : "accepted");
    double v = 0;
    char why[160];
    int r = tea_expected_from_problems(path, &d, &v, why, sizeof why);
    if (r == 1 && !isfinite(v)) abort();
    int o = tea_expected_from_out(path, &d, &v);
    if (o == 1 && !isfinite(v)) abort();
    if (getenv("FZ_DEBUG")) fprintf(stderr, "fz: problems %d out %d v %g\n", r, o, v);
    return 0;
}
