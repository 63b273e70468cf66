/* tea_solver.c — TeaLeaf's step over a block of rows in hipamp (tea_solver.h): the set-up, the CG iterations (the kernels of tealeaf.hip, two of them fused with the dot products, whose per-tile sums amp_reduce_async adds up: results stay on the device; launch graphs for one rank's iteration), the fields, and a row split's halo exchange and sums plugged in through tea_comm. */
#define _POSIX_C_SOURCE 200809L
#include "tea_solver.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char tealeaf_kernels[];

/* The conduction coefficient of a cell, and the coefficient of the face
 * between two cells of coefficients a and b (TeaLeaf's cg_init). */
static double coefficient(const tea_deck *d, double density)
{
    return d->inverse_density ? 1.0 / density : density;
}
static double face(double r, double a, double b)
{
    return r * (a + b) / (2.0 * a * b);
}

amp_status tea_dot(tea_solver *s, amp_array_view *a, amp_array_view *b, amp_map map, amp_array *out)
{
    if (!s->comm.sum)
        return amp_transform_reduce_async(s->q, amp_arg_view(a), amp_arg_view(b), AMP_TYPE_FLOAT64, map, AMP_OP_SUM,
                                          amp_arg_array(out), NULL);
    double v = 0;
    TEA_CHECK(tea_dot_host(s, a, b, map, &v));
    TEA_CHECK(amp_array_copy_from_host(out, &v));
    return AMP_OK;
}

/* The sum of a fused kernel's per-tile sums (parts) into the one-element
 * device array out, across ranks as tea_dot. */
static amp_status tea_sum_parts(tea_solver *s, amp_array *parts, amp_array *out)
{
    if (!s->comm.sum)
        return amp_reduce_async(s->q, amp_arg_array(parts), AMP_TYPE_FLOAT64, AMP_OP_SUM, amp_arg_array(out), NULL);
    double v = 0;
    TEA_CHECK(amp_reduce(s->q, amp_arg_array(parts), AMP_TYPE_FLOAT64, AMP_OP_SUM, &v));
    TEA_CHECK(s->comm.sum(s->comm.ctx, &v));
    TEA_CHECK(amp_array_copy_from_host(out, &v));
    return AMP_OK;
}

amp_status tea_dot_host(tea_solver *s, amp_array_view *a, amp_array_view *b, amp_map map, double *out)
{
    TEA_CHECK(amp_transform_reduce(s->q, amp_arg_view(a), amp_arg_view(b), AMP_TYPE_FLOAT64, map, AMP_OP_SUM, out));
    if (s->comm.sum) TEA_CHECK(s->comm.sum(s->comm.ctx, out));
    return AMP_OK;
}

amp_status tea_exchange(tea_solver *s, const tea_field *x)
{
    s->halo = x;
    return s->comm.halo ? s->comm.halo(s->comm.ctx, s) : AMP_OK;
}

amp_status tea_apply(tea_solver *s, const tea_field *x)
{
    TEA_CHECK(tea_exchange(s, x));
    amp_arg a[] = {amp_arg_view(x->view), amp_arg_view(s->vw), amp_arg_view(s->vkx), amp_arg_view(s->vky)};
    return amp_parallel_for_each(s->q, amp_extent_2d(s->rows, s->nx), s->apply, a, 4);
}

/* A field of the block's rows and two halo rows, zeros throughout (the
 * halos stay finite until a row split's exchange fills them: the edge's
 * faces are 0). */
static amp_status tea_field_create(tea_solver *s, tea_field *f)
{
    const int rows = s->rows, nx = s->nx;
    amp_extent row = amp_extent_2d(1, nx);
    double zero = 0.0;
    TEA_CHECK(amp_array_create(s->q, 8, amp_extent_2d(rows + 2, nx), NULL, &f->array));
    TEA_CHECK(amp_array_view_of_array(f->array, &f->view));
    TEA_CHECK(amp_array_view_section(f->view, amp_index_2d(1, 0), amp_extent_2d(rows, nx), &f->inner));
    TEA_CHECK(amp_array_view_section(f->view, amp_index_2d(1, 0), row, &f->first));
    TEA_CHECK(amp_array_view_section(f->view, amp_index_2d(rows, 0), row, &f->last));
    TEA_CHECK(amp_array_view_section(f->view, amp_index_2d(0, 0), row, &f->halo_top));
    TEA_CHECK(amp_array_view_section(f->view, amp_index_2d(rows + 1, 0), row, &f->halo_bottom));
    TEA_CHECK(amp_fill(s->q, amp_arg_array(f->array), &zero));
    return AMP_OK;
}

static void tea_field_free(tea_field *f)
{
    amp_array_view *views[] = {f->halo_bottom, f->halo_top, f->last, f->first, f->inner, f->view};
    for (size_t i = 0; i < sizeof views / sizeof views[0]; ++i) amp_array_view_destroy(views[i]);
    amp_array_destroy(f->array);
    memset(f, 0, sizeof *f);
}

amp_status tea_init(tea_solver *s, amp_accelerator *acc, const tea_deck *d, double dt, int rows, int first_row,
                    const tea_comm *comm)
{
    memset(s, 0, sizeof *s);
    s->nx = d->x_cells;
    s->ny = d->y_cells;
    s->rows = rows;
    s->first_row = first_row;
    s->eps = d->eps;
    s->solver = d->solver;
    s->presteps = d->presteps;
    s->inner_steps = d->ppcg_inner_steps;
    s->eps_lim = d->eps_lim;
    s->error_switch = d->error_switch;
    if (comm) s->comm = *comm;
    const int nx = s->nx, ny = s->ny;
    const size_t own = (size_t)rows * nx;
    /* The block's rows and one more on each side where the mesh has them
     * (the y faces on the block's edges need the neighbours' density). */
    const int lo = first_row > 0 ? first_row - 1 : 0, hi = first_row + rows < ny ? first_row + rows + 1 : ny;
    double *dens = malloc((size_t)(hi - lo) * nx * 8), *en = malloc((size_t)(hi - lo) * nx * 8);
    double *kx = malloc((size_t)rows * (nx + 1) * 8), *ky = malloc((size_t)(rows + 1) * nx * 8);
    s->density_host = malloc(own * 8);
    s->energy0_host = malloc(own * 8);
    amp_status st = AMP_OK;
    if (!dens || !en || !kx || !ky || !s->density_host || !s->energy0_host) {
        fprintf(stderr, "tealeaf: no host memory for a %d x %d block\n", rows, nx);
        st = AMP_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    tea_deck_generate(d, lo, hi, dens, en);
    memcpy(s->density_host, dens + (size_t)(first_row - lo) * nx, own * 8);
    memcpy(s->energy0_host, en + (size_t)(first_row - lo) * nx, own * 8);
    const double rx = dt / (d->dx * d->dx), ry = dt / (d->dy * d->dy);
    for (int i = 0; i < rows; ++i) {
        const double *row = dens + (size_t)(first_row - lo + i) * nx;
        double *k = kx + (size_t)i * (nx + 1);
        k[0] = k[nx] = 0.0;
        for (int j = 1; j < nx; ++j) k[j] = face(rx, coefficient(d, row[j - 1]), coefficient(d, row[j]));
    }
    for (int i = 0; i <= rows; ++i) {
        const int g = first_row + i; /* the face between global rows g - 1 and g */
        double *k = ky + (size_t)i * nx;
        if (g == 0 || g == ny) {
            for (int j = 0; j < nx; ++j) k[j] = 0.0;
            continue;
        }
        const double *below = dens + (size_t)(g - 1 - lo) * nx, *above = dens + (size_t)(g - lo) * nx;
        for (int j = 0; j < nx; ++j) k[j] = face(ry, coefficient(d, below[j]), coefficient(d, above[j]));
    }

    amp_extent e = amp_extent_2d(rows, nx);
#define TRY(call)                                                                                                  \
    do {                                                                                                           \
        if ((st = (call)) != AMP_OK) {                                                                             \
            fprintf(stderr, "tealeaf: %s failed: %s: %s\n", #call, amp_status_name(st), amp_last_error());         \
            goto out;                                                                                              \
        }                                                                                                          \
    } while (0)
    TRY(amp_accelerator_view_create(acc, &s->q));
    TRY(amp_program_build(acc, tealeaf_kernels, NULL, &s->prog));
    TRY(amp_program_get_kernel(s->prog, "tea_apply", &s->apply));
    TRY(amp_program_get_kernel(s->prog, "tea_init_u", &s->init_u));
    TRY(amp_program_get_kernel(s->prog, "tea_init_r", &s->init_r));
    TRY(amp_program_get_kernel(s->prog, "tea_apply_pw", &s->apply_pw));
    TRY(amp_program_get_kernel(s->prog, "tea_update_ur_rr", &s->update_ur_rr));
    TRY(amp_program_get_kernel(s->prog, "tea_update_p", &s->update_p));
    TRY(amp_program_get_kernel(s->prog, "tea_finalise", &s->finalise));
    TRY(amp_program_get_kernel(s->prog, "tea_copy_into_field", &s->copy_into_field));
    TRY(amp_program_get_kernel(s->prog, "tea_copy_from_field", &s->copy_from_field));
    TRY(amp_program_get_kernel(s->prog, "tea_cheby_first", &s->cheby_first));
    TRY(amp_program_get_kernel(s->prog, "tea_cheby_step", &s->cheby_step));
    TRY(amp_program_get_kernel(s->prog, "tea_residual", &s->residual));
    TRY(amp_program_get_kernel(s->prog, "tea_ppcg_init_sd", &s->ppcg_init_sd));
    TRY(amp_program_get_kernel(s->prog, "tea_ppcg_inner", &s->ppcg_inner));
    TRY(amp_program_get_kernel(s->prog, "tea_jacobi", &s->jacobi));
    TRY(amp_array_create(s->q, 8, e, NULL, &s->u));
    TRY(amp_array_create(s->q, 8, e, NULL, &s->u0));
    TRY(amp_array_create(s->q, 8, e, NULL, &s->r));
    TRY(amp_array_create(s->q, 8, e, NULL, &s->w));
    TRY(amp_array_create(s->q, 8, e, s->energy0_host, &s->energy)); /* TeaLeaf's store_energy */
    TRY(amp_array_create(s->q, 8, e, s->density_host, &s->density));
    TRY(amp_array_create(s->q, 8, amp_extent_2d(rows, nx + 1), kx, &s->kx));
    TRY(amp_array_create(s->q, 8, amp_extent_2d(rows + 1, nx), ky, &s->ky));
    for (int k = 0; k < 2; ++k) {
        TRY(amp_array_create(s->q, 8, amp_extent_1d(1), NULL, &s->rr[k]));
        TRY(amp_array_create(s->q, 4, amp_extent_1d(1), NULL, &s->iters[k]));
    }
    TRY(amp_array_create(s->q, 8, amp_extent_1d(1), NULL, &s->pw));
    {
        /* The fused kernels' domain: the block padded to whole tiles (the
         * tile is the kernels', read from them), one sum a tile. */
        amp_kernel_info info;
        amp_tiled_extent tiled;
        TRY(amp_kernel_get_info(s->apply_pw, &info));
        TRY(amp_extent_tile_2d(e, info.tile[0], info.tile[1], &tiled));
        TRY(amp_tiled_extent_pad(tiled, &s->cg_domain));
        const amp_extent tiles = amp_extent_1d((s->cg_domain.extent.v[0] / info.tile[0]) *
                                               (s->cg_domain.extent.v[1] / info.tile[1]));
        TRY(amp_array_create(s->q, 8, tiles, NULL, &s->pw_parts));
        TRY(amp_array_create(s->q, 8, tiles, NULL, &s->rr_parts));
    }
    TRY(amp_array_view_of_array(s->u, &s->vu));
    TRY(amp_array_view_of_array(s->u0, &s->vu0));
    TRY(amp_array_view_of_array(s->r, &s->vr));
    {
        /* Every reduction a step uses, once, on zeros: the sums of the
         * fused kernels' parts, r . r (each step's first) and Jacobi's sum
         * of magnitudes. Their first use (and, where the build has no
         * algorithm pack for this accelerator, their compile: 2.5-3.3 s
         * seen on the H200) is then set-up's, not the first step's. */
        const double zero = 0.0;
        TRY(amp_fill(s->q, amp_arg_array(s->pw_parts), &zero));
        TRY(amp_fill(s->q, amp_arg_array(s->r), &zero));
        TRY(amp_reduce_async(s->q, amp_arg_array(s->pw_parts), AMP_TYPE_FLOAT64, AMP_OP_SUM, amp_arg_array(s->pw),
                             NULL));
        const amp_map maps[] = {AMP_MAP_SQUARE, AMP_MAP_ABS};
        for (int k = 0; k < (s->solver == TEA_SOLVER_JACOBI ? 2 : 1); ++k)
            TRY(amp_transform_reduce_async(s->q, amp_arg_view(s->vr), amp_arg_view(s->vr), AMP_TYPE_FLOAT64, maps[k],
                                           AMP_OP_SUM, amp_arg_array(s->pw), NULL));
    }
    TRY(amp_array_view_of_array(s->w, &s->vw));
    TRY(amp_array_view_of_array(s->energy, &s->venergy));
    TRY(amp_array_view_of_array(s->density, &s->vdensity));
    TRY(amp_array_view_of_array(s->kx, &s->vkx));
    TRY(amp_array_view_of_array(s->ky, &s->vky));
    TRY(tea_field_create(s, &s->p));
    if (s->solver != TEA_SOLVER_CG) TRY(tea_field_create(s, &s->sd[0]));
    if (s->solver == TEA_SOLVER_PPCG) TRY(tea_field_create(s, &s->sd[1]));
#undef TRY
out:
    free(dens);
    free(en);
    free(kx);
    free(ky);
    return st;
}

/* The eps CG's kernels test sqrt(|rro|) against, to stop updating once
 * converged: the deck's for CG; 0 (never) under the other solvers, whose
 * host tests |r . r| < eps itself and must see CG's iterations update. */
static double tea_device_eps(const tea_solver *s)
{
    return s->solver == TEA_SOLVER_CG ? s->eps : 0.0;
}

amp_status tea_cg_wur(tea_solver *s)
{
    const int o = s->parity, n = o ^ 1;
    amp_arg wp[] = {amp_arg_view(s->p.view), amp_arg_view(s->vw), amp_arg_view(s->vkx), amp_arg_view(s->vky),
                    amp_arg_array(s->pw_parts)};
    amp_arg ur[] = {amp_arg_view(s->vu),     amp_arg_view(s->vr),  amp_arg_view(s->p.view),
                    amp_arg_view(s->vw),     amp_arg_array(s->rr[o]), amp_arg_array(s->pw),
                    amp_arg_float64(tea_device_eps(s)), amp_arg_array(s->rr_parts), amp_arg_array(s->iters[o]),
                    amp_arg_array(s->iters[n])};
    TEA_CHECK(tea_exchange(s, &s->p));
    TEA_CHECK(amp_parallel_for_each_tiled(s->q, s->cg_domain, s->apply_pw, wp, 5));
    TEA_CHECK(tea_sum_parts(s, s->pw_parts, s->pw));
    return amp_parallel_for_each_tiled(s->q, s->cg_domain, s->update_ur_rr, ur, 10);
}

amp_status tea_cg_p(tea_solver *s, bool r_changed)
{
    const int o = s->parity, n = o ^ 1;
    amp_arg up[] = {amp_arg_view(s->p.view),   amp_arg_view(s->vr),     amp_arg_array(s->rr[n]),
                    amp_arg_array(s->rr[o]),   amp_arg_float64(tea_device_eps(s))};
    if (r_changed)
        TEA_CHECK(tea_dot(s, s->vr, s->vr, AMP_MAP_SQUARE, s->rr[n]));
    else
        TEA_CHECK(tea_sum_parts(s, s->rr_parts, s->rr[n]));
    TEA_CHECK(amp_parallel_for_each(s->q, amp_extent_2d(s->rows, s->nx), s->update_p, up, 5));
    s->parity = n;
    return AMP_OK;
}

/* One CG iteration: replayed from its graph, or launched. */
static amp_status tea_iteration(tea_solver *s)
{
    if (s->graph[0]) {
        TEA_CHECK(amp_graph_launch(s->q, s->graph[s->parity]));
        s->parity ^= 1;
        return AMP_OK;
    }
    TEA_CHECK(tea_cg_wur(s));
    return tea_cg_p(s, false);
}

amp_status tea_use_graphs(tea_solver *s)
{
    if (s->comm.sum || s->comm.halo) {
        fprintf(stderr, "tealeaf: launch graphs need one rank (a row split's sums and halos go through the host)\n");
        return AMP_ERROR_UNSUPPORTED;
    }
    amp_graph *g[2] = {NULL, NULL};
    const int parity = s->parity;
    amp_status st = AMP_OK;
    /* Graph k is the iteration that finds parity k; recording flips the
     * parity as running does, so after the two it is back. */
    for (int k = 0; k < 2 && st == AMP_OK; ++k) {
        s->parity = k;
        if ((st = amp_graph_begin_recording(s->q)) != AMP_OK) {
            fprintf(stderr, "tealeaf: amp_graph_begin_recording failed: %s: %s\n", amp_status_name(st),
                    amp_last_error());
            break;
        }
        st = tea_iteration(s);
        amp_status ended = amp_graph_end_recording(s->q, &g[k]);
        if (st == AMP_OK && ended != AMP_OK) {
            fprintf(stderr, "tealeaf: amp_graph_end_recording failed: %s: %s\n", amp_status_name(ended),
                    amp_last_error());
            st = ended;
        }
    }
    s->parity = parity;
    if (st != AMP_OK) {
        amp_graph_destroy(g[0]);
        amp_graph_destroy(g[1]);
        return st;
    }
    s->graph[0] = g[0];
    s->graph[1] = g[1];
    return AMP_OK;
}

amp_status tea_step(tea_solver *s, int max_iters, int check_every, int *iters, double *error)
{
    amp_extent e = amp_extent_2d(s->rows, s->nx);
    if (s->comm.sum || check_every < 1) check_every = 1; /* a row split has rrn on the host each iteration */
    amp_arg iu[] = {amp_arg_view(s->venergy), amp_arg_view(s->vdensity), amp_arg_view(s->vu), amp_arg_view(s->vu0),
                    amp_arg_view(s->p.view)};
    amp_arg ir[] = {amp_arg_view(s->vu0), amp_arg_view(s->vw), amp_arg_view(s->vr), amp_arg_view(s->p.view)};
    amp_arg fin[] = {amp_arg_view(s->venergy), amp_arg_view(s->vu), amp_arg_view(s->vdensity)};
    const int zero = 0;
    TEA_CHECK(amp_parallel_for_each(s->q, e, s->init_u, iu, 5));
    TEA_CHECK(tea_apply(s, &s->p)); /* w = A u (p holds u) */
    TEA_CHECK(amp_parallel_for_each(s->q, e, s->init_r, ir, 4));
    TEA_CHECK(tea_dot(s, s->vr, s->vr, AMP_MAP_SQUARE, s->rr[s->parity]));
    TEA_CHECK(amp_array_copy_from_host(s->iters[s->parity], &zero));
    s->cg_iters = s->poly_iters = s->est_iters = 0;
    if (s->solver != TEA_SOLVER_CG) {
        TEA_CHECK(tea_poly_solve(s, max_iters, iters, error));
        TEA_CHECK(amp_parallel_for_each(s->q, e, s->finalise, fin, 3));
        return AMP_OK;
    }
    int launched = 0, count = 0;
    while (launched < max_iters) {
        const int n = check_every < max_iters - launched ? check_every : max_iters - launched;
        for (int k = 0; k < n; ++k) TEA_CHECK(tea_iteration(s));
        launched += n;
        TEA_CHECK(amp_array_copy_to_host(s->iters[s->parity], &count));
        if (count < launched) break; /* converged: the last iterations did nothing */
    }
    TEA_CHECK(amp_array_copy_to_host(s->rr[s->parity], error));
    TEA_CHECK(amp_parallel_for_each(s->q, e, s->finalise, fin, 3));
    *iters = s->cg_iters = count;
    return AMP_OK;
}

amp_status tea_summary(tea_solver *s, double dx, double dy, double out[4])
{
    const size_t m = (size_t)s->rows * s->nx;
    double *u = malloc(m * 8);
    if (!u) {
        fprintf(stderr, "tealeaf: no host memory for the field summary\n");
        return AMP_ERROR_OUT_OF_MEMORY;
    }
    amp_status st = amp_array_copy_to_host(s->u, u);
    if (st != AMP_OK) {
        fprintf(stderr, "tealeaf: amp_array_copy_to_host failed: %s: %s\n", amp_status_name(st), amp_last_error());
        free(u);
        return st;
    }
    /* TeaLeaf's field_summary, in its order (row by row, left to right). */
    double vol = 0, mass = 0, ie = 0, temp = 0;
    for (size_t i = 0; i < m; ++i) {
        const double cell_vol = dx * dy, cell_mass = cell_vol * s->density_host[i];
        vol += cell_vol;
        mass += cell_mass;
        ie += cell_mass * s->energy0_host[i];
        temp += cell_mass * u[i];
    }
    free(u);
    out[0] = vol;
    out[1] = mass;
    out[2] = ie;
    out[3] = temp;
    return AMP_OK;
}

void tea_free(tea_solver *s)
{
    if (s->comm.release) s->comm.release(s->comm.ctx, s);
    amp_graph_destroy(s->graph[0]); /* before what they use */
    amp_graph_destroy(s->graph[1]);
    tea_field_free(&s->sd[1]);
    tea_field_free(&s->sd[0]);
    tea_field_free(&s->p);
    amp_array_view *views[] = {s->vky, s->vkx, s->vdensity, s->venergy, s->vw, s->vr, s->vu0, s->vu};
    for (size_t i = 0; i < sizeof views / sizeof views[0]; ++i) amp_array_view_destroy(views[i]);
    amp_array *arrays[] = {s->u,       s->u0,    s->r,     s->w,  s->kx,       s->ky,      s->energy,
                           s->density, s->rr[0], s->rr[1], s->pw, s->iters[0], s->iters[1],
                           s->pw_parts, s->rr_parts};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; ++i) amp_array_destroy(arrays[i]);
    amp_program_destroy(s->prog);
    amp_accelerator_view_destroy(s->q);
    free(s->density_host);
    free(s->energy0_host);
    memset(s, 0, sizeof *s);
}
