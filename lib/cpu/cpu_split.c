/* cpu_split.c — compiles a unit's kernels on several compiler processes at once (each process the whole unit, generating code for its share of the kernels) and links the parts into the module; anything it cannot do so gives the unit back to cpu_compile.c's single compile. */
#include "cpu_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

/* Why it is sound, and what is checked:
 *
 * Every part compiles the whole unit (same text, same options, the same
 * precompiled header), told with -DAMP__CPU_SKIP_<name>=~,1 which kernels
 * other parts define: the prelude's AMP__DEFINE_ENTRY and the loop
 * versions' blocks (loops/transform.c) leave out those kernels' entry
 * points and records, and their bodies, static and unused there, generate
 * no code. What has external linkage is then defined once across the parts
 * (the prelude's own records are weak or inline), or twice when a kernel
 * escaped the scan or the user's source defines a non-inline function or
 * variable: the link then fails on the duplicate and the unit is compiled
 * whole. What has internal linkage is one copy a part: harmless for code
 * and constants, not for a variable two parts' kernels share (a static
 * counter one kernel writes and another reads), nor for an object whose
 * constructor would run once a part. The compiler may remove such a
 * variable from the part that only writes it and fold it to its initial
 * value in the part that only reads it, so no object shows it: only a
 * source whose every top-level declaration is of a kind known to be safe
 * is split (cpu_split_scan.c). The parts' objects are read before the link
 * as well, and a writable variable of internal linkage found in two of
 * them (a static function's tile_static, which the scan allows) sends the
 * unit to the single compile too. */

/* The most parts: beyond this the parts' parsing (a few tens of ms each,
 * with the precompiled header) outweighs the kernels' share. */
#define AMP__CPU_SPLIT_MAX 8
/* The most kernels looked for (a larger unit is compiled whole). */
#define AMP__CPU_SPLIT_KERNELS 4096

typedef struct amp__cpu_part {
    const amp__cpu_split_job *job;
    char **argv;
    char *log;
    int ws;
    bool late, started;
    amp_status st;
    uint64_t ns; /* how long its compiler ran, for AMP_CPU_VERBOSE */
    pthread_t thread;
    char obj[32];  /* its object's name in the build directory */
    char *path;    /* and path (in argv too) */
    char dep[32];  /* its dependency file's name there */
    char *dep_path;
    char as_dep[32]; /* the assembler's list of what it read (job->as_dep), its name there */
    char *as_opt;    /* -Wa,--MD,PATH (in argv too; NULL: none asked) */
} amp__cpu_part;

typedef struct amp__cpu_split {
    const amp__cpu_split_job *job;
    amp__cpu_split_kernel *k; /* the kernels found */
    int n, nparts;
    amp__cpu_part parts[AMP__CPU_SPLIT_MAX];
    char **link_argv;
} amp__cpu_split;

int amp__cpu_split_jobs(void) { return amp__compile_jobs("AMP_CPU_COMPILE_JOBS", AMP__CPU_SPLIT_MAX); }

/* Each kernel to the part with the least weight so far, in order. */
static void amp__cpu_split_assign(amp__cpu_split *sp)
{
    int load[AMP__CPU_SPLIT_MAX] = {0};
    for (int i = 0; i < sp->n; ++i) {
        int best = 0;
        for (int k = 1; k < sp->nparts; ++k)
            if (load[k] < load[best]) best = k;
        sp->k[i].part = best;
        load[best] += sp->k[i].weight;
    }
}

/* Part k's argv: the words, the other parts' kernels left out, -c, the
 * precompiled header, its dependency file, the object, the unit. Every
 * part writes one, all checked (amp__cpu_split_deps): each compiler looks
 * its headers up at its own time, and one may find a file where another
 * found none (a header another user's link stood at for a moment). */
static bool amp__cpu_split_argv(amp__cpu_split *sp, int k)
{
    const amp__cpu_split_job *job = sp->job;
    size_t cap = job->nwords + (size_t)sp->n + 12, m = 0;
    char **argv = calloc(cap, sizeof *argv);
    if (!argv) return false;
    for (size_t i = 0; i < job->nwords; ++i) argv[m++] = job->words[i];
    for (int i = 0; i < sp->n; ++i)
        if (sp->k[i].part != k) argv[m++] = sp->k[i].define;
    argv[m++] = "-c";
    if (job->pch) {
        argv[m++] = "-include";
        argv[m++] = (char *)job->pch;
    }
    amp__cpu_part *pt = &sp->parts[k];
    pt->job = job;
    snprintf(pt->obj, sizeof pt->obj, "part%d.o", k);
    snprintf(pt->dep, sizeof pt->dep, "part%d.d", k);
    snprintf(pt->as_dep, sizeof pt->as_dep, "part%d.as.d", k);
    char *path = NULL, *dep = NULL, *as_opt = NULL;
    if (asprintf(&path, "%s/%s", job->dir, pt->obj) < 0) path = NULL;
    if (asprintf(&dep, "%s/%s", job->dir, pt->dep) < 0) dep = NULL;
    if (job->as_dep && asprintf(&as_opt, "-Wa,--MD,%s/%s", job->dir, pt->as_dep) < 0) as_opt = NULL;
    if (!path || !dep || (job->as_dep && !as_opt)) {
        free(path);
        free(dep);
        free(as_opt);
        free(argv);
        return false;
    }
    pt->path = path;
    pt->dep_path = dep;
    pt->as_opt = as_opt;
    argv[m++] = "-MD";
    argv[m++] = "-MF";
    argv[m++] = dep;
    if (as_opt) argv[m++] = as_opt; /* what a part's inline asm read (cpu_compile.c, amp__cpu_as_read) */
    argv[m++] = "-o";
    argv[m++] = path;
    argv[m++] = (char *)job->src;
    argv[m] = NULL;
    sp->parts[k].argv = argv;
    return true;
}

static void *amp__cpu_split_run(void *arg)
{
    amp__cpu_part *pt = arg;
    uint64_t t0 = amp__now_ns();
    pt->st = amp__cpu_run_capture(pt->argv, pt->job->envp, pt->job->deadline, &pt->log, &pt->ws, &pt->late);
    pt->ns = amp__now_ns() - t0;
    return NULL;
}

typedef struct amp__cpu_seen {
    char **names;
    size_t n, cap;
    const char *dup; /* a name found in two parts */
    size_t from;     /* this part's names start here */
} amp__cpu_seen;

/* Collects a part's writable internal variables; finds one an earlier part
 * has too. */
static bool amp__cpu_split_note(void *ctx, const char *name)
{
    amp__cpu_seen *s = ctx;
    for (size_t i = 0; i < s->from; ++i)
        if (!strcmp(s->names[i], name)) {
            s->dup = s->names[i];
            return false;
        }
    if (s->n == s->cap) {
        size_t nc = s->cap ? 2 * s->cap : 64;
        char **q = realloc(s->names, nc * sizeof *q);
        if (!q) return false;
        s->names = q;
        s->cap = nc;
    }
    if (!(s->names[s->n] = strdup(name))) return false;
    s->n++;
    return true;
}

/* Whether no writable variable of internal linkage is in two parts'
 * objects (why not: into why). */
static bool amp__cpu_split_state_ok(amp__cpu_split *sp, char *why, size_t cap)
{
    amp__cpu_seen seen = {0};
    bool ok = true;
    for (int k = 0; k < sp->nparts && ok; ++k) {
        char path[PATH_MAX + 64];
        snprintf(path, sizeof path, "%s/%s", sp->job->dir, sp->parts[k].obj);
        void *bin = NULL;
        size_t size = 0;
        if (amp__cpu_read_file(sp->job->dirfd, sp->parts[k].obj, path, &bin, &size) != AMP_OK) {
            snprintf(why, cap, "part %d's object cannot be read", k);
            ok = false;
            break;
        }
        seen.from = seen.n;
        size_t before = seen.n;
        int found = amp__cpu_elf_local_data(bin, size, amp__cpu_split_note, &seen);
        free(bin);
        if (found < 0) {
            snprintf(why, cap, "part %d's object is not an ELF file it can read", k);
            ok = false;
        } else if (seen.dup) {
            snprintf(why, cap, "the variable %.200s (internal linkage) would be one copy a part", seen.dup);
            ok = false;
        } else if ((size_t)found != seen.n - before) {
            snprintf(why, cap, "no memory for the parts' variables");
            ok = false;
        }
    }
    for (size_t i = 0; i < seen.n; ++i) free(seen.names[i]);
    free(seen.names);
    return ok;
}

static void amp__cpu_split_free(amp__cpu_split *sp)
{
    for (int k = 0; k < AMP__CPU_SPLIT_MAX; ++k) {
        amp__cpu_part *pt = &sp->parts[k];
        free(pt->argv);
        free(pt->path);
        free(pt->dep_path);
        free(pt->as_opt);
        free(pt->log);
    }
    free(sp->link_argv); /* its words are borrowed */
    for (int i = 0; sp->k && i < AMP__CPU_SPLIT_KERNELS; ++i) {
        free(sp->k[i].name);
        free(sp->k[i].define);
    }
    free(sp->k);
}

/* The parts' dependency files as one, job->dep, which the build's check of
 * what the compiler read (lib/core/program.c) reads: every part's; and the
 * assembler's lists as one, job->as_dep (cpu_compile.c reads it). */
static bool amp__cpu_split_deps(amp__cpu_split *sp)
{
    char *text[AMP__CPU_SPLIT_MAX] = {0};
    bool ok = true;
    for (int as = 0; as < 2 && ok; ++as) {
        const char *to = as ? sp->job->as_dep : sp->job->dep;
        if (!to) continue;
        for (int k = 0; k < sp->nparts && ok; ++k) {
            size_t size = 0;
            char path[PATH_MAX + 64];
            snprintf(path, sizeof path, "%s/%s", sp->job->dir, sp->parts[k].as_dep);
            ok = amp__cpu_read_file(sp->job->dirfd, as ? sp->parts[k].as_dep : sp->parts[k].dep,
                                    as ? path : sp->parts[k].dep_path, (void **)&text[k], &size) == AMP_OK;
        }
        const char *slash = strrchr(to, '/');
        ok = ok && amp__cpu_write_file(sp->job->dirfd, slash ? slash + 1 : to, to, true, (const char *const *)text,
                                       (size_t)sp->nparts) == AMP_OK;
        for (int k = 0; k < sp->nparts; ++k) {
            free(text[k]);
            text[k] = NULL;
        }
    }
    return ok;
}

int amp__cpu_split_build(const amp__cpu_split_job *job, char *note, size_t cap)
{
    amp__cpu_split sp = {.job = job};
    char *code = NULL;
    int rc = 0;
    note[0] = 0;
    if (job->jobs < 2) goto out;
    if (!(sp.k = calloc(AMP__CPU_SPLIT_KERNELS, sizeof *sp.k))) goto out;
    if (!(code = amp__cpu_split_allowed(job->user, job->words + job->user_from, job->nwords - job->user_from, note,
                                        cap)))
        goto out;
    if ((sp.n = amp__cpu_split_kernels(code, sp.k, AMP__CPU_SPLIT_KERNELS)) < 0) goto out;
    sp.nparts = sp.n < job->jobs ? sp.n : job->jobs;
    if (sp.nparts < 2) goto out;
    for (int i = 0; i < sp.n; ++i)
        if (asprintf(&sp.k[i].define, "-DAMP__CPU_SKIP_%s=~,1", sp.k[i].name) < 0) {
            sp.k[i].define = NULL;
            goto out;
        }
    amp__cpu_split_assign(&sp);
    for (int k = 0; k < sp.nparts; ++k)
        if (!amp__cpu_split_argv(&sp, k)) goto out;
    /* the parts at once, each on a thread that waits for its compiler */
    for (int k = 0; k < sp.nparts; ++k) {
        amp__cpu_part *pt = &sp.parts[k];
        pt->started = pthread_create(&pt->thread, NULL, amp__cpu_split_run, pt) == 0;
        if (!pt->started) amp__cpu_split_run(pt); /* no thread: here, in turn */
    }
    bool ok = true, late = false;
    for (int k = 0; k < sp.nparts; ++k) {
        amp__cpu_part *pt = &sp.parts[k];
        if (pt->started) pthread_join(pt->thread, NULL);
        late |= pt->late;
        if (pt->st != AMP_OK || pt->late || !WIFEXITED(pt->ws) || WEXITSTATUS(pt->ws) != 0) ok = false;
    }
    if (late) {
        rc = -1;
        goto out;
    }
    if (!ok) {
        snprintf(note, cap, "a part did not compile");
        goto out;
    }
    if (!amp__cpu_split_deps(&sp)) {
        snprintf(note, cap, "the parts' dependency files could not be made one");
        goto out;
    }
    if (!amp__cpu_split_state_ok(&sp, note, cap)) goto out;
    /* the link: the same words (the user's link options among them), the
     * objects as objects (-x none after the words' -x c++) */
    size_t m = 0;
    if (!(sp.link_argv = calloc(job->nwords + (size_t)sp.nparts + 8, sizeof *sp.link_argv))) goto out;
    for (size_t i = 0; i < job->nwords; ++i) sp.link_argv[m++] = job->words[i];
    sp.link_argv[m++] = "-o";
    sp.link_argv[m++] = (char *)job->so;
    sp.link_argv[m++] = "-x";
    sp.link_argv[m++] = "none";
    for (int k = 0; k < sp.nparts; ++k) sp.link_argv[m++] = sp.parts[k].path;
    sp.link_argv[m] = NULL;
    char *log = NULL;
    int ws = 0;
    bool link_late = false;
    uint64_t link_t0 = amp__now_ns();
    amp_status st = amp__cpu_run_capture(sp.link_argv, job->envp, job->deadline, &log, &ws, &link_late);
    uint64_t link_ns = amp__now_ns() - link_t0;
    free(log);
    if (link_late) {
        rc = -1;
        goto out;
    }
    if (st != AMP_OK || !WIFEXITED(ws) || WEXITSTATUS(ws) != 0) {
        snprintf(note, cap, "the parts did not link (a symbol defined twice?)");
        goto out;
    }
    uint64_t fastest = UINT64_MAX, slowest = 0;
    for (int k = 0; k < sp.nparts; ++k) {
        if (sp.parts[k].ns < fastest) fastest = sp.parts[k].ns;
        if (sp.parts[k].ns > slowest) slowest = sp.parts[k].ns;
    }
    snprintf(note, cap, "compiled in %d parts (%.0f to %.0f ms each), linked in %.0f ms", sp.nparts, fastest / 1e6,
             slowest / 1e6, link_ns / 1e6);
    rc = 1;
out:
    free(code);
    amp__cpu_split_free(&sp);
    return rc;
}
