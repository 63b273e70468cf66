/* tea_deck.c — TeaLeaf's deck reader, its initial state and its expected values (tea_deck.h). */
#define _POSIX_C_SOURCE 200809L
#include "tea_deck.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

/* ---------------------------------------------------------- the files */

/* What st is, for a refusal ("a FIFO", ...). */
static const char *file_kind(const struct stat *st)
{
    if (S_ISDIR(st->st_mode)) return "a directory";
    if (S_ISFIFO(st->st_mode)) return "a FIFO";
    if (S_ISCHR(st->st_mode)) return "a character device";
    if (S_ISBLK(st->st_mode)) return "a block device";
    if (S_ISSOCK(st->st_mode)) return "a socket";
    return "not a regular file";
}

/* path opened for reading where it is a regular file; NULL with why (n
 * bytes) otherwise. Opened without blocking first: a FIFO's open would
 * wait for a writer, and a device (/dev/zero) reads forever. */
static FILE *open_regular(const char *path, char *why, size_t n)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, n, "cannot open: %s", strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(why, n, "cannot read: %s", strerror(errno));
        close(fd);
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(why, n, "%s, not a regular file", file_kind(&st));
        close(fd);
        return NULL;
    }
    int fl = fcntl(fd, F_GETFL);
    FILE *f = fl >= 0 && fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == 0 ? fdopen(fd, "r") : NULL;
    if (!f) {
        snprintf(why, n, "cannot read: %s", strerror(errno));
        close(fd);
    }
    return f;
}

/* ------------------------------------------------------------ parsing */

typedef struct parse {
    const char *path;
    int line;
    char *err;
    size_t errlen;
} parse;

static int fail(parse *p, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (p->line > 0) snprintf(p->err, p->errlen, "%s:%d: %s", p->path, p->line, what);
    else snprintf(p->err, p->errlen, "%s: %s", p->path, what);
    return -1;
}

static int get_double(parse *p, const char *key, const char *word, double *out)
{
    if (!word) return fail(p, "'%s' needs a value", key);
    char *end = NULL;
    errno = 0;
    double v = strtod(word, &end);
    if (end == word || *end || (errno != ERANGE && !isfinite(v)))
        return fail(p, "'%s': '%s' is not a number", key, word);
    /* ERANGE also says a value underflowed (1e-320, read as the nearest
     * subnormal or 0): that is a number, and taken. */
    if (errno == ERANGE && !(fabs(v) < 1.0))
        return fail(p, "'%s': '%s' is out of range (at most %g)", key, word, DBL_MAX);
    *out = v;
    return 0;
}

static int get_int(parse *p, const char *key, const char *word, int *out)
{
    if (!word) return fail(p, "'%s' needs a value", key);
    char *end = NULL;
    errno = 0;
    long v = strtol(word, &end, 10);
    if (end == word || *end || errno == ERANGE || v < INT_MIN || v > INT_MAX)
        return fail(p, "'%s': '%s' is not an integer", key, word);
    *out = (int)v;
    return 0;
}

static void note_ignored(tea_deck *d, const char *word)
{
    if (strstr(d->ignored, word)) return;
    size_t n = strlen(d->ignored);
    if (n + strlen(word) + 2 < sizeof d->ignored) snprintf(d->ignored + n, sizeof d->ignored - n, "%s%s", n ? " " : "", word);
}

/* The words of one line: comments cut, '=' and ',' made spaces, lower case.
 * -1: more than cap words. */
static int split(char *line, char **words, int cap)
{
    int n = 0;
    for (char *c = line; *c; ++c) {
        if (*c == '!' || *c == '#') {
            *c = '\0';
            break;
        }
        if (*c == '=' || *c == ',') *c = ' ';
        *c = (char)tolower((unsigned char)*c);
    }
    for (char *t = strtok(line, " \t\r\n"); t; t = strtok(NULL, " \t\r\n")) {
        if (n == cap) return -1;
        words[n++] = t;
    }
    return n;
}

static bool in(const char *w, const char *const *list)
{
    for (; *list; ++list)
        if (!strcmp(w, *list)) return true;
    return false;
}

/* Keys taken and ignored: what they tune this port does not have. */
static const char *const ignored_int_keys[] = {"halo_depth", "num_chunks_per_rank", "tiles_per_task", "sub_tiles_per_tile",
                                               "tiles_per_problem", "visit_frequency", "cuda_device", "opencl_device",
                                               NULL};
/* UK-MAC TeaLeaf_OpenCL's: a word each. */
static const char *const ignored_word_keys[] = {"opencl_vendor", "opencl_type", NULL};
static const char *const ignored_real_keys[] = {"timestep_rise", "max_timestep", NULL};
static const char *const ignored_switches[] = {"use_c_kernels", "use_fortran_kernels", "profiler_on", "verbose_on",
                                               "check_result", "tl_check_result", "reflective_boundary",
                                               "preconditioner_on", "use_cuda_kernels", "use_opencl_kernels",
                                               "use_ocl_kernels", "hydro_off", "tea_leaf_on", "profile_solver", NULL};

static int read_state(parse *p, tea_deck *d, char **w, int n)
{
    int id = 0;
    if (get_int(p, "state", n > 1 ? w[1] : NULL, &id)) return -1;
    if (id < 1 || id > TEA_MAX_STATES) return fail(p, "state %d: states are numbered 1 to %d", id, TEA_MAX_STATES);
    tea_state *s = &d->states[id - 1];
    if (s->defined) return fail(p, "state %d defined twice", id);
    bool has[8] = {false};
    static const char *const keys[] = {"density", "energy", "xmin", "xmax", "ymin", "ymax", "radius", NULL};
    double *vals[] = {&s->density, &s->energy, &s->xmin, &s->xmax, &s->ymin, &s->ymax, &s->radius};
    bool has_geometry = false;
    for (int i = 2; i < n; i += 2) {
        const char *v = i + 1 < n ? w[i + 1] : NULL;
        if (!strcmp(w[i], "geometry")) {
            if (!v) return fail(p, "state %d: 'geometry' needs a value", id);
            if (!strcmp(v, "rectangle")) s->geometry = TEA_RECTANGLE;
            else if (!strcmp(v, "circle") || !strcmp(v, "circular")) s->geometry = TEA_CIRCLE;
            else if (!strcmp(v, "point")) s->geometry = TEA_POINT;
            else return fail(p, "state %d: unknown geometry '%s' (rectangle, circle or point)", id, v);
            has_geometry = true;
            continue;
        }
        int k = 0;
        while (keys[k] && strcmp(keys[k], w[i])) ++k;
        if (!keys[k]) return fail(p, "state %d: unknown key '%s'", id, w[i]);
        if (get_double(p, w[i], v, vals[k])) return -1;
        has[k] = true;
    }
    if (!has[0] || !has[1]) return fail(p, "state %d needs density and energy", id);
    if (!(s->density > 0)) return fail(p, "state %d: density must be > 0 (got %g)", id, s->density);
    if (id > 1) {
        if (!has_geometry) return fail(p, "state %d needs a geometry (rectangle, circle or point)", id);
        bool ok = has[2] && has[4];
        if (s->geometry == TEA_RECTANGLE) ok = ok && has[3] && has[5];
        if (s->geometry == TEA_CIRCLE) ok = ok && has[6];
        if (!ok)
            return fail(p, "state %d: a %s needs %s", id,
                        s->geometry == TEA_RECTANGLE ? "rectangle" : s->geometry == TEA_CIRCLE ? "circle" : "point",
                        s->geometry == TEA_RECTANGLE ? "xmin, xmax, ymin and ymax"
                        : s->geometry == TEA_CIRCLE  ? "xmin, ymin (its centre) and radius"
                                                     : "xmin and ymin");
        if (s->geometry == TEA_CIRCLE && !(s->radius >= 0))
            return fail(p, "state %d: a circle of radius %g covers no point", id, s->radius);
        if (s->geometry == TEA_RECTANGLE && !(s->xmax > s->xmin && s->ymax > s->ymin))
            return fail(p, "state %d: an empty rectangle (xmin %g xmax %g ymin %g ymax %g)", id, s->xmin, s->xmax,
                        s->ymin, s->ymax);
    }
    s->defined = true;
    if (id > d->nstates) d->nstates = id;
    return 0;
}

int tea_deck_read(const char *path, int solver, tea_deck *d, char *err, size_t errlen)
{
    parse p = {path, 0, err, errlen};
    memset(d, 0, sizeof *d);
    /* UoB-HPC TeaLeaf's defaults (settings.h). */
    d->x_cells = d->y_cells = 10;
    d->xmax = d->ymax = 100.0;
    d->dt_init = 0.1;
    d->end_time = 10.0;
    d->end_step = INT_MAX;
    d->max_iters = 10000;
    d->eps = 1.0e-15;
    d->summary_frequency = 10;
    d->solver = TEA_SOLVER_CG;
    d->presteps = 30;
    d->ppcg_inner_steps = 10;
    d->eps_lim = 1.0e-5;
    /* A directory opens and then reads as an error, which the loop below
     * would take for the end of a deck without its lines. */
    char why[160];
    FILE *f = open_regular(path, why, sizeof why);
    if (!f) return fail(&p, "%s", why);
    char *line = NULL;
    size_t cap = 0;
    int rc = 0;
    bool started = false, ended = false;
    ssize_t got;
    while (!ended && (got = getline(&line, &cap, f)) != -1) {
        ++p.line;
        /* The words end at a NUL: what follows it would go unread. */
        if ((size_t)got != strlen(line)) {
            rc = fail(&p, "a NUL byte in the line");
            break;
        }
        char *w[64];
        int n = split(line, w, 64);
        if (n < 0) {
            rc = fail(&p, "more than 64 words on one line");
            break;
        }
        if (n == 0) continue;
        if (!started) {
            /* What comes before *tea is not the deck's. */
            if (!strcmp(w[0], "*tea")) {
                started = true;
                if (n > 1) rc = fail(&p, "'%s' after '*tea': settings go on the lines below it", w[1]);
                if (rc) break;
            }
            continue;
        }
        if (!strcmp(w[0], "*endtea")) {
            ended = true;
            if (n > 1) {
                rc = fail(&p, "'%s' after '*endtea': nothing follows it on its line", w[1]);
                break;
            }
            continue;
        }
        if (!strcmp(w[0], "state")) {
            if ((rc = read_state(&p, d, w, n))) break;
            continue;
        }
        for (int i = 0; i < n && !rc; ++i) {
            const char *k = w[i], *v = i + 1 < n ? w[i + 1] : NULL;
            double ignored_real = 0;
            int ignored_int = 0;
            if (!strcmp(k, "x_cells")) rc = get_int(&p, k, v, &d->x_cells), ++i;
            else if (!strcmp(k, "y_cells")) rc = get_int(&p, k, v, &d->y_cells), ++i;
            else if (!strcmp(k, "xmin")) rc = get_double(&p, k, v, &d->xmin), ++i;
            else if (!strcmp(k, "xmax")) rc = get_double(&p, k, v, &d->xmax), ++i;
            else if (!strcmp(k, "ymin")) rc = get_double(&p, k, v, &d->ymin), ++i;
            else if (!strcmp(k, "ymax")) rc = get_double(&p, k, v, &d->ymax), ++i;
            else if (!strcmp(k, "initial_timestep")) rc = get_double(&p, k, v, &d->dt_init), ++i;
            else if (!strcmp(k, "end_time")) rc = get_double(&p, k, v, &d->end_time), ++i;
            else if (!strcmp(k, "end_step")) rc = get_int(&p, k, v, &d->end_step), ++i;
            else if (!strcmp(k, "max_iters") || !strcmp(k, "tl_max_iters")) rc = get_int(&p, k, v, &d->max_iters), ++i;
            else if (!strcmp(k, "eps") || !strcmp(k, "tl_eps")) rc = get_double(&p, k, v, &d->eps), ++i;
            else if (!strcmp(k, "summary_frequency")) rc = get_int(&p, k, v, &d->summary_frequency), ++i;
            else if (!strcmp(k, "test_problem")) {
                /* TeaLeaf's choice of built-in expected values; this
                 * port's come from tea.problems or the reference output. */
                rc = get_int(&p, k, v, &d->test_problem), ++i;
                note_ignored(d, k);
            }
            else if (!strcmp(k, "use_cg") || !strcmp(k, "tl_use_cg")) d->solver = TEA_SOLVER_CG;
            else if (!strcmp(k, "use_chebyshev") || !strcmp(k, "tl_use_chebyshev")) d->solver = TEA_SOLVER_CHEBYSHEV;
            else if (!strcmp(k, "use_ppcg") || !strcmp(k, "tl_use_ppcg")) d->solver = TEA_SOLVER_PPCG;
            else if (!strcmp(k, "use_jacobi") || !strcmp(k, "tl_use_jacobi")) d->solver = TEA_SOLVER_JACOBI;
            else if (!strcmp(k, "presteps") || !strcmp(k, "tl_ch_cg_presteps"))
                rc = get_int(&p, k, v, &d->presteps), ++i;
            else if (!strcmp(k, "ppcg_inner_steps") || !strcmp(k, "tl_ppcg_inner_steps"))
                rc = get_int(&p, k, v, &d->ppcg_inner_steps), ++i;
            else if (!strcmp(k, "epslim") || !strcmp(k, "tl_ch_cg_epslim")) rc = get_double(&p, k, v, &d->eps_lim), ++i;
            else if (!strcmp(k, "errswitch") || !strcmp(k, "tl_ch_cg_errswitch")) d->error_switch = true;
            else if (!strcmp(k, "coefficient_density") || !strcmp(k, "tl_coefficient_density")) d->inverse_density = false;
            else if (!strcmp(k, "coefficient_inverse_density") || !strcmp(k, "tl_coefficient_inverse_density"))
                d->inverse_density = true;
            else if (!strcmp(k, "tl_preconditioner_type")) {
                /* Preconditioners change how CG gets there, not where. */
                if (!v || (strcmp(v, "none") && strcmp(v, "jac_diag") && strcmp(v, "jac_block")))
                    rc = fail(&p, "'%s': '%s' is not none, jac_diag or jac_block", k, v ? v : "");
                else if (strcmp(v, "none")) note_ignored(d, k);
                ++i;
            } else if (in(k, ignored_int_keys)) {
                rc = get_int(&p, k, v, &ignored_int), ++i;
                note_ignored(d, k);
            } else if (in(k, ignored_real_keys)) {
                rc = get_double(&p, k, v, &ignored_real), ++i;
                note_ignored(d, k);
            } else if (in(k, ignored_word_keys)) {
                if (!v) rc = fail(&p, "'%s' needs a value", k);
                ++i;
                note_ignored(d, k);
            } else if (in(k, ignored_switches)) {
                if (strcmp(k, "use_c_kernels") && strcmp(k, "profiler_on")) note_ignored(d, k);
            } else {
                rc = fail(&p, "unknown key '%s'", k);
            }
        }
        if (rc) break;
    }
    if (!rc && ferror(f)) rc = fail(&p, "cannot read: %s", strerror(errno));
    free(line);
    fclose(f);
    if (rc) return rc;
    p.line = 0;
    if (!started) return fail(&p, "no '*tea' line: not a TeaLeaf deck");
    if (!ended) return fail(&p, "no '*endtea' line after '*tea'");
    if (d->x_cells < 1 || d->y_cells < 1 || (long long)d->x_cells * d->y_cells > INT_MAX / 2)
        return fail(&p, "x_cells %d and y_cells %d: each must be >= 1 and their product < 2^30", d->x_cells,
                    d->y_cells);
    if (!(d->xmax > d->xmin) || !(d->ymax > d->ymin))
        return fail(&p, "an empty mesh: xmin %g xmax %g ymin %g ymax %g", d->xmin, d->xmax, d->ymin, d->ymax);
    if (!(d->dt_init > 0)) return fail(&p, "initial_timestep must be > 0 (got %g)", d->dt_init);
    if (!(d->end_time > 0)) return fail(&p, "end_time must be > 0 (got %g)", d->end_time);
    if (d->end_step < 1) return fail(&p, "end_step must be >= 1 (got %d)", d->end_step);
    if (d->max_iters < 1) return fail(&p, "max_iters must be >= 1 (got %d)", d->max_iters);
    if (!(d->eps > 0)) return fail(&p, "eps must be > 0 (got %g)", d->eps);
    if (d->presteps < 0 || d->presteps > 1000000)
        return fail(&p, "presteps must be 0 to 1000000 (got %d)", d->presteps);
    if (d->ppcg_inner_steps < 0 || d->ppcg_inner_steps > 1000000)
        return fail(&p, "ppcg_inner_steps must be 0 to 1000000 (got %d)", d->ppcg_inner_steps);
    if (!(d->eps_lim > 0)) return fail(&p, "epslim must be > 0 (got %g)", d->eps_lim);
    if (solver >= 0) d->solver = (tea_solver_kind)solver;
    /* What the chosen solver needs (other solvers ignore these keys, as
     * TeaLeaf does): the eigenvalue estimate a few CG iterations (the
     * switch comes after presteps + 1 of them); eps below 1, as the
     * switch from CG waits for r . r < 1. */
    if ((d->solver == TEA_SOLVER_CHEBYSHEV || d->solver == TEA_SOLVER_PPCG) && !d->error_switch && d->presteps < 2)
        return fail(&p, "presteps %d: Chebyshev and PPCG need at least 2 (their eigenvalue estimate)", d->presteps);
    if ((d->solver == TEA_SOLVER_CHEBYSHEV || d->solver == TEA_SOLVER_PPCG) && !(d->eps < 1))
        return fail(&p, "eps %g: Chebyshev and PPCG need eps < 1 (they leave CG once r.r < 1)", d->eps);
    if (d->summary_frequency < 0) return fail(&p, "summary_frequency must be >= 0 (got %d)", d->summary_frequency);
    if (d->nstates < 1 || !d->states[0].defined) return fail(&p, "no state 1 (the background)");
    for (int s = 0; s < d->nstates; ++s)
        if (!d->states[s].defined) return fail(&p, "state %d is missing (states go 1 to %d)", s + 1, d->nstates);
    d->dx = (d->xmax - d->xmin) / (double)d->x_cells;
    d->dy = (d->ymax - d->ymin) / (double)d->y_cells;
    /* A domain whose width overflows (xmin -1e308, xmax 1e308) gives an
     * infinite cell. */
    if (!isfinite(d->dx) || !isfinite(d->dy) || !(d->dx > 0) || !(d->dy > 0))
        return fail(&p, "cells of %g x %g: the domain [%g, %g] x [%g, %g] is too wide or too narrow for %d x %d cells",
                    d->dx, d->dy, d->xmin, d->xmax, d->ymin, d->ymax, d->x_cells, d->y_cells);
    /* Values each finite but whose solve is not: dt / dx^2, the
     * coefficient (density or its inverse) over the timestep's factor,
     * density x energy (the field solved for). */
    const double rx = d->dt_init / (d->dx * d->dx), ry = d->dt_init / (d->dy * d->dy);
    if (!isfinite(rx) || !isfinite(ry))
        return fail(&p, "initial_timestep %g over cells of %g x %g: dt / dx^2 = %g, dt / dy^2 = %g: not finite",
                    d->dt_init, d->dx, d->dy, rx, ry);
    for (int s = 0; s < d->nstates; ++s) {
        const tea_state *st = &d->states[s];
        /* The solve's dot products square these, summed over the cells. */
        const double c = d->inverse_density ? 1.0 / st->density : st->density, u = st->density * st->energy;
        const double k = 4.0 * fmax(rx, ry) * fmax(c, 1.0 / c), cells = (double)d->x_cells * d->y_cells;
        if (!isfinite(u * u * cells) || !isfinite(2.0 * c * c) || !(2.0 * c * c > 0) || !isfinite(k * k * u * u * cells))
            return fail(&p, "state %d: density %g, energy %g: the %scoefficient (%g), its square, density x energy "
                        "or the timestep's factor over the coefficient passes what a double holds",
                        s + 1, st->density, st->energy, d->inverse_density ? "inverse-density " : "", c);
    }
    for (int s = 1; s < d->nstates; ++s) {
        tea_state *st = &d->states[s];
        /* A point is a cell's lower-left vertex, matched as it is
         * (tea_deck_generate); TeaLeaf's shift of it made it match none. */
        if (st->geometry == TEA_POINT) continue;
        st->xmin += d->dx / 100.0;
        st->ymin += d->dy / 100.0;
        st->xmax -= d->dx / 100.0;
        st->ymax -= d->dy / 100.0;
    }
    return 0;
}

/* -------------------------------------------------------------- state */

void tea_deck_generate(const tea_deck *d, int row0, int row1, double *density, double *energy)
{
    const int nx = d->x_cells;
    const tea_state *bg = &d->states[0];
    for (size_t i = 0; i < (size_t)(row1 - row0) * nx; ++i) {
        density[i] = bg->density;
        energy[i] = bg->energy;
    }
    for (int s = 1; s < d->nstates; ++s) {
        const tea_state *st = &d->states[s];
        for (int k = row0; k < row1; ++k) {
            const double y0 = d->ymin + d->dy * k, y1 = d->ymin + d->dy * (k + 1), yc = 0.5 * (y0 + y1);
            for (int j = 0; j < nx; ++j) {
                const double x0 = d->xmin + d->dx * j, x1 = d->xmin + d->dx * (j + 1), xc = 0.5 * (x0 + x1);
                bool apply = false;
                if (st->geometry == TEA_RECTANGLE)
                    apply = x1 >= st->xmin && x0 < st->xmax && y1 >= st->ymin && y0 < st->ymax;
                else if (st->geometry == TEA_CIRCLE)
                    apply = sqrt((xc - st->xmin) * (xc - st->xmin) + (yc - st->ymin) * (yc - st->ymin)) <= st->radius;
                else /* a point: the cell whose lower-left vertex it is, to a hundredth of a cell */
                    apply = fabs(x0 - st->xmin) <= d->dx / 100.0 && fabs(y0 - st->ymin) <= d->dy / 100.0;
                if (apply) {
                    size_t i = (size_t)(k - row0) * nx + j;
                    density[i] = st->density;
                    energy[i] = st->energy;
                }
            }
        }
    }
}

/* ---------------------------------------------------- expected values */

/* The next whole number of line at *t into v (blanks before it), within
 * int's range. */
static bool next_int(char **t, int *v)
{
    char *end = NULL;
    errno = 0;
    long x = strtol(*t, &end, 10);
    if (end == *t || errno == ERANGE || x < INT_MIN || x > INT_MAX || (*end && !isspace((unsigned char)*end)))
        return false;
    *v = (int)x;
    *t = end;
    return true;
}

int tea_expected_from_problems(const char *problems, const tea_deck *d, double *value, char *why, size_t n)
{
    FILE *f = open_regular(problems, why, n);
    if (!f) return -1;
    char *line = NULL;
    size_t cap = 0;
    int found = 0;
    /* Whole lines (a long one is one line, never read on as the next),
     * each "x y steps value" and nothing else: a line with more, or with a
     * number out of range, matches no problem. */
    ssize_t len;
    while (!found && (len = getline(&line, &cap, f)) != -1) {
        char *t = line, *end = NULL;
        int x, y, steps;
        if (memchr(line, '\0', (size_t)len)) continue; /* text before a NUL is no whole line */
        if (!next_int(&t, &x) || !next_int(&t, &y) || !next_int(&t, &steps)) continue;
        errno = 0;
        double v = strtod(t, &end);
        if (end == t || errno == ERANGE || !isfinite(v)) continue;
        while (*end && isspace((unsigned char)*end)) ++end;
        if (*end) continue;
        if (x == d->x_cells && y == d->y_cells && steps == d->end_step) {
            *value = v;
            found = 1;
        }
    }
    if (!found && ferror(f)) {
        snprintf(why, n, "cannot read: %s", strerror(errno));
        found = -1;
    }
    free(line);
    fclose(f);
    return found;
}

int tea_expected_from_out(const char *out, const tea_deck *d, double *value)
{
    char why[160];
    FILE *f = open_regular(out, why, sizeof why);
    if (!f) return -1;
    char *line = NULL;
    size_t cap = 0;
    bool x_ok = false, y_ok = false;
    int step = -1;
    double last = 0;
    char want_x[32], want_y[32];
    snprintf(want_x, sizeof want_x, "x_cells=%d", d->x_cells);
    snprintf(want_y, sizeof want_y, "y_cells=%d", d->y_cells);
    ssize_t len;
    while ((len = getline(&line, &cap, f)) != -1) {
        char *t = line;
        if (memchr(line, '\0', (size_t)len)) continue;
        while (*t == ' ') ++t;
        if (!strncmp(t, want_x, strlen(want_x)) && !isdigit((unsigned char)t[strlen(want_x)])) x_ok = true;
        if (!strncmp(t, want_y, strlen(want_y)) && !isdigit((unsigned char)t[strlen(want_y)])) y_ok = true;
        /* "step:", the step (within int: sscanf's %d wrapped one past it)
         * and five finite numbers (a "nan" verified nothing); what follows
         * them is not read. */
        if (strncmp(t, "step:", 5)) continue;
        t += 5;
        int s;
        double c[5];
        bool ok = next_int(&t, &s);
        for (int k = 0; k < 5 && ok; ++k) {
            char *end = NULL;
            errno = 0;
            c[k] = strtod(t, &end);
            ok = end != t && errno != ERANGE && isfinite(c[k]);
            t = end;
        }
        if (ok) {
            step = s;
            last = c[4];
        }
    }
    free(line);
    fclose(f);
    if (!x_ok || !y_ok || step != d->end_step) return 0;
    *value = last;
    return 1;
}
