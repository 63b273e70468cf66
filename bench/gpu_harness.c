/* gpu_harness.c — the GPU benchmark's shared harness (gpu_harness.h): the report text, chart rows and goals, the raw path's kernels and launches, and the batch timing of hipamp's runs beside the raw ones. */
#define _GNU_SOURCE
#include "gpu_harness.h"
#include "launch_geometry.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------- plumbing */

void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", rg.program);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

rg_device D;
wl_ctx W;
uint64_t rng;
bool quick;
int failures;

/* ------------------------------------------------------------ the report */

static char *md;
static size_t md_len, md_cap;
void out(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char buf[4096];
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n >= sizeof buf) n = sizeof buf - 1;
    if (md_len + (size_t)n + 1 > md_cap) {
        md_cap = (md_cap + (size_t)n + 1) * 2;
        md = realloc(md, md_cap);
        if (!md) die("out of memory");
    }
    memcpy(md + md_len, buf, (size_t)n + 1);
    md_len += (size_t)n;
    fputs(buf, stdout);
    fflush(stdout);
}

const char *report_text(void)
{
    return md;
}

crow crows[128];
int ncrows;

void chart(const char *panel, const char *label, const char *series, double value, const char *unit)
{
    if (ncrows >= (int)(sizeof crows / sizeof crows[0])) return;
    crow *c = &crows[ncrows++];
    snprintf(c->panel, sizeof c->panel, "%s", panel);
    snprintf(c->label, sizeof c->label, "%s", label);
    snprintf(c->series, sizeof c->series, "%s", series);
    snprintf(c->unit, sizeof c->unit, "%s", unit);
    c->value = value;
}

/* Goals (issue 5). */
goal goals[48];
int ngoals;

void add_goal(bool met, const char *what, const char *target, const char *note, const char *fmt, ...)
{
    if (ngoals >= (int)(sizeof goals / sizeof goals[0])) die("more goals than the table holds");
    goal *g = &goals[ngoals++];
    g->met = met;
    snprintf(g->what, sizeof g->what, "%s", what);
    snprintf(g->target, sizeof g->target, "%s", target);
    snprintf(g->note, sizeof g->note, "%s", note ? note : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g->measured, sizeof g->measured, fmt, ap);
    va_end(ap);
}

/* ----------------------------------------------------------- raw launches */

rawk rk_tsimple, rk_tpad, rk_teven, rk_ttrunc, rk_ttuned, rk_saxpy3;
rawk rk_msimple, rk_mtiled, rk_mtuned;

void *raw_build(const char *src, double *secs)
{
    double t0 = wl_now();
    const char *prelude = amp_prelude_source();
    size_t n = strlen(prelude) + strlen(src) + 64;
    char *full = malloc(n);
    if (!full) die("out of memory");
    snprintf(full, n, "%s\n#line 1 \"kernel.hip\"\n%s\n", prelude, src);
    void *m = rg_build(full);
    free(full);
    if (secs) *secs = wl_now() - t0;
    return m;
}

void raw_kernel(void *m, const char *name, rawk *k)
{
    k->name = name;
    k->f = rg_function(m, name);
    char g[160];
    snprintf(g, sizeof g, "%s%s", name, AMP__SIG_SUFFIX);
    size_t bytes;
    rg_ptr p = rg_global(m, g, &bytes);
    if (bytes != sizeof k->sig) die("%s: signature record is %zu bytes, expected %zu", g, bytes, sizeof k->sig);
    rg_d2h(&k->sig, p, sizeof k->sig);
    if (k->sig.magic != AMP__SIG_MAGIC || k->sig.version != AMP__SIG_VERSION) die("%s: bad signature", name);
}

void raw_launch(const rawk *k, amp_extent e, const rview *v, int nv)
{
    _Alignas(AMP__MAX_PARAM_ALIGN) unsigned char pack[AMP__MAX_PACK];
    const amp__signature *s = &k->sig;
    if (s->nparams != nv) die("%s takes %d parameters, %d given", k->name, s->nparams, nv);
    if (s->pack_size > (int)sizeof pack) die("%s: pack of %d bytes", k->name, s->pack_size);
    memset(pack, 0, (size_t)s->pack_size);
    for (int i = 0; i < nv; ++i) {
        const amp__sig_param *p = &s->params[i];
        if (p->kind != AMP_ARG_VIEW || p->rank != v[i].rank) die("%s: parameter %d mismatch", k->name, i);
        unsigned char *at = pack + p->offset;
        uint64_t ptr = (uint64_t)v[i].p;
        memcpy(at, &ptr, 8);
        long long st[2] = {v[i].rank == 2 ? v[i].stride0 : 1, 1};
        int32_t ex[2] = {v[i].ext[0], v[i].ext[1]};
        memcpy(at + AMP__DESC_STRIDE_OFFSET, st, 8 * (size_t)v[i].rank);
        memcpy(at + AMP__DESC_EXTENT_OFFSET(v[i].rank), ex, 4 * (size_t)v[i].rank);
    }
    amp__launch_info li;
    memset(&li, 0, sizeof li);
    li.rank = e.rank;
    for (int d = 0; d < e.rank; ++d) li.ext[d] = e.v[d];
    unsigned g[3], b[3];
    amp__launch_geometry(e.rank, e.v, s->tiled != 0, s->tile, 0, 0, g, b); /* the library's own mapping */
    void *params[2] = {&li, pack};
    rg_launch(k->f, g, b, params);
}

/* -------------------------------------------------------------- timing */

double hip_batch(const hrun *h, int n)
{
    AK(amp_accelerator_view_wait(W.q));
    double t0 = wl_now();
    for (int i = 0; i < n; ++i) AK(h->fn(h->job));
    AK(amp_accelerator_view_wait(W.q));
    return (wl_now() - t0) / n;
}

double raw_batch(run_fn fn, void *job, int n, double *ev_s)
{
    rg_sync();
    double t0 = wl_now();
    rg_events_begin();
    for (int i = 0; i < n; ++i) fn(job);
    rg_events_end();
    double wall = (wl_now() - t0) / n;
    double ev = rg_events_seconds();
    if (ev_s) *ev_s = ev / n;
    return wall;
}

double raw_plain_batch(run_fn fn, void *job, int n)
{
    rg_sync();
    double t0 = wl_now();
    for (int i = 0; i < n; ++i) fn(job);
    rg_sync();
    return (wl_now() - t0) / n;
}

int warm_up_and_size(const hrun *h, run_fn raw, void *rjob, int probe_n, double batch_s, int lo, int hi)
{
    AK(h->fn(h->job));
    AK(amp_accelerator_view_wait(W.q));
    raw(rjob);
    rg_sync();
    double t1 = hip_batch(h, probe_n);
    int n = t1 > 0 ? (int)(batch_s / t1) : 1000;
    return n < lo ? lo : n > hi ? hi : n;
}

cmp compare(const hrun *h, run_fn raw, void *rjob, void *same_job, double batch_s)
{
    cmp c;
    int n = warm_up_and_size(h, raw, rjob, 1, batch_s, 1, 5000);
    double a[REPS], r[REPS], e[REPS], s[REPS];
    for (int i = 0; i < REPS; ++i) {
        a[i] = hip_batch(h, n);
        r[i] = raw_batch(raw, rjob, n, &e[i]);
        s[i] = same_job ? raw_batch(raw, same_job, n, NULL) : 0;
    }
    c.amp_s = wl_median(a, REPS);
    c.raw_s = wl_median(r, REPS);
    c.raw_ev_s = wl_median(e, REPS);
    c.same_s = same_job ? wl_median(s, REPS) : 0;
    c.n = n;
    return c;
}

double raw_only(run_fn fn, void *job, double batch_s)
{
    fn(job);
    rg_sync();
    double ev;
    raw_batch(fn, job, 1, &ev);
    int n = ev > 0 ? (int)(batch_s / ev) : 100;
    if (n < 1) n = 1;
    if (n > 5000) n = 5000;
    double e[REPS];
    for (int i = 0; i < REPS; ++i) raw_batch(fn, job, n, &e[i]);
    return wl_median(e, REPS);
}

/* ------------------------------------------------------- the raw kernels */

void load_raw_kernels(void)
{
    void *tmod = raw_build(wl_transpose_source, NULL);
    void *mmod = raw_build(wl_matmul_source, NULL);
    raw_kernel(tmod, "transpose_simple", &rk_tsimple);
    raw_kernel(tmod, "transpose_tiled_pad", &rk_tpad);
    raw_kernel(tmod, "transpose_tiled_even", &rk_teven);
    raw_kernel(tmod, "transpose_tiled_truncate", &rk_ttrunc);
    raw_kernel(tmod, "transpose_tuned", &rk_ttuned);
    raw_kernel(tmod, "saxpy3", &rk_saxpy3);
    raw_kernel(mmod, "matmul_simple", &rk_msimple);
    raw_kernel(mmod, "matmul_tiled16", &rk_mtiled);
    raw_kernel(mmod, "matmul_tuned", &rk_mtuned);
    int regs = 0, lmem = 0, regs_t = 0, lmem_t = 0;
    if (rg_kernel_regs(rk_mtuned.f, &regs, &lmem) && rg_kernel_regs(rk_ttuned.f, &regs_t, &lmem_t))
        out("Tuned kernels as compiled: matmul_tuned %d registers, %d bytes of local memory a thread; "
            "transpose_tuned %d registers.\n\n", regs, lmem, regs_t);
    else
        out("Tuned kernels as compiled: the driver does not report their registers.\n\n");
}

/* ------------------------------------------------------------- the program */

bool self_dir(char *dir, size_t size)
{
    ssize_t n = readlink("/proc/self/exe", dir, size - 1);
    if (n <= 0) return false;
    dir[n] = 0;
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    return true;
}
