/* hipamp_prebuild.c — hipamp-prebuild, the build's tool that compiles every built-in algorithm program for a list of targets into packs (lib/core/prebuilt.c): the CPU accelerator of this machine through its own build path, GPU targets with hipRTC or NVRTC and no GPU present. Not installed: the packs are. */
#include "alg/alg.h"
#include "tool_output.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: hipamp-prebuild --dir DIR [--jobs N] [--only TEXT] [--reuse DIR2] [--strict] TARGET...\n"
            "\n"
            "Compiles every built-in algorithm program (each type, operator, map, sort value size and\n"
            "the common fill sizes) for each TARGET and writes DIR/<target>.hpk, the pack the library\n"
            "loads them from at run time:\n"
            "  cpu      this machine's CPU accelerator (the pack is named cpu-<hash of its compiler,\n"
            "           flags and processor>: it serves machines where all of those are the same);\n"
            "  sm_NN    an NVIDIA architecture (NVRTC, no GPU needed);\n"
            "  gfxNNN   an AMD processor (hipRTC/comgr, no GPU needed), built for any xnack/sramecc mode.\n"
            "A target whose compiler is not installed is skipped with a message (--strict: an error).\n"
            "The CPU pack also holds the CPU accelerator's precompiled header (one made with --only does not).\n"
            "Entries of an existing pack whose keys still match are kept, not compiled again: DIR's, else\n"
            "DIR2's (another build's packs; held to the same owner and mode rules as packs a program loads).\n"
            "--only TEXT builds only the programs whose names hold TEXT (\"int32 reductions\"); repeatable.\n"
            "Exit status: 0 written (or skipped), 1 a compile or write error, 2 a usage error.\n");
}

/* The entries of one pack being made. */
typedef struct pack {
    pthread_mutex_t lock;
    amp__prebuilt_item *items;
    size_t n, cap;
    amp__prebuilt_item *old; /* the existing pack's entries, for reuse */
    size_t nold;
    size_t reused;
    size_t dropped; /* entries lost for want of memory */
} pack;

static pack cur = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Take a copy of (key, bin) unless the pack has it. */
static void pack_add(const uint8_t key[32], const void *bin, size_t size)
{
    pthread_mutex_lock(&cur.lock);
    for (size_t i = 0; i < cur.n; ++i)
        if (!memcmp(cur.items[i].key, key, 32)) goto out;
    if (cur.n == cur.cap) {
        size_t cap = cur.cap ? 2 * cur.cap : 256;
        amp__prebuilt_item *g = realloc(cur.items, cap * sizeof *g);
        if (!g) {
            cur.dropped++; /* write_pack refuses a pack with entries missing */
            goto out;
        }
        cur.items = g;
        cur.cap = cap;
    }
    void *copy = malloc(size);
    if (!copy) {
        cur.dropped++;
        goto out;
    }
    memcpy(copy, bin, size);
    memcpy(cur.items[cur.n].key, key, 32);
    cur.items[cur.n].data = copy;
    cur.items[cur.n].size = size;
    cur.n++;
out:
    pthread_mutex_unlock(&cur.lock);
}

static void capture(const char *target, const uint8_t key[32], const void *bin, size_t size)
{
    (void)target;
    pack_add(key, bin, size);
}

/* The CPU's precompiled headers (one of each per pack: their keys name
 * the compiler or libclang, flags and prelude, which a pack shares): the
 * compiler's, and the library's part as the loop transformation's libclang
 * precompiles it (its entry begins "AMPLPCH": lib/cpu/cpu_pch.c). Set on
 * the thread that made or loaded one, read by main after the build
 * threads are joined (which orders the two). One larger than a pack's
 * entries may be is left out: the pack is written without it rather than
 * refused whole. */
static bool have_header, have_clang_part;

static void capture_header(const char *target, const uint8_t key[32], const void *data, size_t size)
{
    bool clang_part = size >= 8 && !memcmp(data, "AMPLPCH", 8);
    if (size > AMP__PACK_ENTRY_MAX) {
        printf("hipamp-prebuild: the precompiled %s (%zu bytes) is larger than a pack's entries may be "
               "(%u): the CPU pack holds none\n", clang_part ? "library part" : "header", size, AMP__PACK_ENTRY_MAX);
        return;
    }
    if (clang_part ? have_clang_part : have_header) return; /* one of each */
    capture(target, key, data, size);
    if (clang_part) have_clang_part = true;
    else have_header = true;
}

static void pack_reset(void)
{
    for (size_t i = 0; i < cur.n; ++i) free(cur.items[i].data);
    for (size_t i = 0; i < cur.nold; ++i) free(cur.old[i].data);
    free(cur.items);
    free(cur.old);
    cur.items = cur.old = NULL;
    cur.n = cur.cap = cur.nold = cur.reused = cur.dropped = 0;
}

/* ------------------------------------------------------------ GPU targets */

/* One thread's share: the programs first, first + stride, ... of the list,
 * for a GPU target (acc NULL) or the CPU accelerator acc. */
typedef struct job {
    const char *target;
    amp_accelerator *acc;
    const char *const *only;
    size_t first, stride;
    size_t built;
    int failed;
    char err[1024];
} job;

static void *gpu_worker(void *arg)
{
    job *j = arg;
    char name[160];
    for (size_t i = j->first;; i += j->stride) {
        char *src = amp__alg_builtin_source(j->target, i, name, sizeof name);
        if (!src) break;
        bool wanted = !j->only;
        for (const char *const *o = j->only; o && *o && !wanted; ++o) wanted = strstr(name, *o) != NULL;
        if (!wanted) {
            free(src);
            continue;
        }
        uint8_t key[32];
        amp__prebuilt_key("gpu", j->target, NULL, src, strlen(src), NULL, key);
        const amp__prebuilt_item *old = NULL;
        for (size_t k = 0; k < cur.nold && !old; ++k)
            if (!memcmp(cur.old[k].key, key, 32)) old = &cur.old[k];
        if (old) {
            pack_add(key, old->data, old->size);
            pthread_mutex_lock(&cur.lock);
            cur.reused++;
            pthread_mutex_unlock(&cur.lock);
            free(src);
            continue;
        }
        amp_code_object *co = NULL;
        const void *data = NULL;
        size_t size = 0;
        amp_status st = amp_compile_for_target(j->target, src, NULL, &co);
        if (st == AMP_OK) st = amp_code_object_data(co, &data, &size);
        if (st != AMP_OK) {
            fprintf(stderr, "hipamp-prebuild: %s for %s: %s: %s\n", name, j->target, amp_status_name(st),
                    amp_last_error());
            j->failed = 1;
        } else {
            pack_add(key, data, size);
            j->built++;
        }
        amp_code_object_destroy(co);
        free(src);
        if (j->failed) break;
    }
    return NULL;
}

/* Whether the installed compilers know target. */
static bool target_known(const char *target)
{
    size_t n = 0;
    if (amp_compile_targets(NULL, 0, &n) != AMP_OK || n == 0) return false;
    const char **list = calloc(n, sizeof *list);
    bool found = false;
    if (list && amp_compile_targets(list, n, &n) == AMP_OK)
        for (size_t i = 0; i < n && !found; ++i) found = !strcmp(list[i], target);
    free(list);
    return found;
}

/* ------------------------------------------------------------ the CPU */

static void *cpu_worker(void *arg)
{
    job *j = arg;
    amp_status st = amp__alg_prepare(j->acc, j->first, j->stride, j->only, NULL);
    if (st != AMP_OK) {
        snprintf(j->err, sizeof j->err, "%s: %s", amp_status_name(st), amp_last_error());
        j->failed = 1;
    }
    return NULL;
}

/* Runs jobs threads of template t (first and stride set here), each job
 * inline where no thread can be made; 0, or 1 when one failed (each said
 * why) or there was no memory. built: the programs the GPU jobs compiled. */
static int run_jobs(job t, int jobs, size_t *built)
{
    job *js = calloc((size_t)jobs, sizeof *js);
    pthread_t *th = calloc((size_t)jobs, sizeof *th);
    bool *started = calloc((size_t)jobs, sizeof *started);
    int rc = 0;
    *built = 0;
    if (!js || !th || !started) {
        fprintf(stderr, "hipamp-prebuild: out of memory\n");
        rc = 1;
        goto out;
    }
    void *(*worker)(void *) = t.acc ? cpu_worker : gpu_worker;
    for (int i = 0; i < jobs; ++i) {
        js[i] = t;
        js[i].first = (size_t)i;
        js[i].stride = (size_t)jobs;
        /* One job runs on this thread (a compiler that dislikes threads,
         * as hipRTC under AddressSanitizer, can still be run alone). */
        started[i] = jobs > 1 && pthread_create(&th[i], NULL, worker, &js[i]) == 0;
        if (!started[i]) worker(&js[i]);
    }
    for (int i = 0; i < jobs; ++i) {
        if (started[i]) pthread_join(th[i], NULL);
        *built += js[i].built;
        if (js[i].failed) {
            if (js[i].err[0]) fprintf(stderr, "hipamp-prebuild: the CPU pack: %s\n", js[i].err);
            rc = 1;
        }
    }
out:
    free(js);
    free(th);
    free(started);
    return rc;
}

/* ------------------------------------------------------------ packs */

/* built: the programs compiled (the others came from the last pack);
 * extra: the entries that are no program (the CPU's precompiled header);
 * only: the --only texts, NULL for a whole pack. */
static int write_pack(const char *dir, const char *target, size_t built, size_t extra, const char *const *only)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.hpk", dir, target);
    if (only && cur.n == extra) {
        /* A mistyped --only must not replace the last pack with an empty one. */
        fprintf(stderr, "hipamp-prebuild: --only '%s'%s matches no built-in program of %s; no pack written\n",
                only[0], only[1] ? " (and the others)" : "", target);
        return 1;
    }
    if (cur.dropped) {
        fprintf(stderr, "hipamp-prebuild: out of memory: %zu programs of %s not kept; no pack written\n", cur.dropped,
                target);
        return 1;
    }
    if (amp__prebuilt_write(path, target, cur.items, cur.n) != AMP_OK) {
        fprintf(stderr, "hipamp-prebuild: %s\n", amp_last_error());
        return 1;
    }
    printf("hipamp-prebuild: %s: %zu programs (%zu compiled, %zu kept from the last pack)%s\n", path, cur.n - extra,
           built, cur.n - extra - built,
           extra > 1 ? " and the precompiled headers" : extra ? " and the precompiled header" : "");
    return 0;
}

static int build_gpu(const char *dir, const char *reuse, const char *target, int jobs, const char *const *only,
                     bool strict)
{
    if (!target_known(target)) {
        fprintf(strict ? stderr : stdout, "hipamp-prebuild: %s %s: no installed compiler knows it (hipamp-compile "
                "--list-targets lists those that do)\n", strict ? "cannot build" : "skipping", target);
        return strict ? 1 : 0;
    }
    if (amp__prebuilt_read(dir, target, &cur.old, &cur.nold) != AMP_OK)
        printf("hipamp-prebuild: the last pack of %s is not reused: %s\n", target, amp_last_error());
    if (!cur.nold && reuse && amp__prebuilt_read(reuse, target, &cur.old, &cur.nold) != AMP_OK)
        printf("hipamp-prebuild: %s's pack of %s is not reused: %s\n", reuse, target, amp_last_error());
    size_t built = 0;
    int rc = run_jobs((job){.target = target, .only = only}, jobs, &built);
    if (!rc) rc = write_pack(dir, target, built, 0, only);
    pack_reset();
    return rc;
}

static int build_cpu(const char *dir, int jobs, const char *const *only, bool strict)
{
    amp_accelerator *acc = NULL;
    if (amp_accelerator_find("cpu", &acc) != AMP_OK || !acc->e.info.is_available) {
        fprintf(stderr, "hipamp-prebuild: cannot build the CPU pack: %s\n",
                acc ? acc->e.info.unavailable_reason : amp_last_error());
        return 1;
    }
    const char *target = acc->e.be->prebuilt_target ? acc->e.be->prebuilt_target(acc->e.dev) : NULL;
    if (!target) {
        fprintf(strict ? stderr : stdout, "hipamp-prebuild: %s the CPU pack: the CPU accelerator loads none here "
                "(CPATH or CPLUS_INCLUDE_PATH is set)\n", strict ? "cannot build" : "skipping");
        return strict ? 1 : 0;
    }
    amp__prebuilt_set_capture(capture);
    bool whole = !only || !only[0];
    have_header = have_clang_part = false;
    if (whole) amp__prebuilt_set_data_capture(capture_header);
    size_t built = 0;
    int rc = run_jobs((job){.target = target, .acc = acc, .only = only}, jobs, &built);
    /* A whole pack holds the CPU accelerator's precompiled headers too (a
     * first build on a fresh cache then need not make them). A compile of a
     * built-in program above made or loaded them, else one user program's
     * build (with a tiled kernel: the loop transformation's part is made
     * for those) hands them over, from the last pack or made
     * (lib/cpu/cpu_pch.c). Not an error when it cannot: the pack then holds
     * programs only, as one made with --only does. */
    if (!rc && whole && (!have_header || !have_clang_part)) {
        /* Compiled, not loaded: this tool keeps the disk cache off. */
        amp_program *p = NULL;
        amp_status st = amp_program_build(
            acc,
            "AMP_KERNEL(amp__prebuild_header, amp::index<1> i, amp::array_view<int, 1> a) { a[i] = 0; }\n"
            "AMP_TILED_KERNEL(amp__prebuild_header_tiled, amp::tiled_index<64> t, amp::array_view<int, 1> a)\n"
            "{\n    tile_static int s[64];\n    s[t.local[0]] = a[t.global];\n    t.barrier.wait();\n"
            "    a[t.global] = s[63 - t.local[0]];\n}\n",
            NULL, &p);
        if (st == AMP_OK) amp_program_destroy(p);
        if (st != AMP_OK)
            printf("hipamp-prebuild: the CPU pack holds no precompiled header: %s\n", amp_last_error());
        if (st == AMP_OK && !have_header)
            printf("hipamp-prebuild: the CPU pack holds no precompiled header (AMP_CPU_PCH in README says when there "
                   "is none)\n");
        if (st == AMP_OK && !have_clang_part)
            printf("hipamp-prebuild: the CPU pack holds no precompiled library part for the loop transformation (it "
                   "needs libclang: AMP_LIBCLANG in README)\n");
    }
    size_t pch = (have_header ? 1 : 0) + (have_clang_part ? 1 : 0);
    amp_prebuilt_info info;
    amp_prebuilt_get_info(&info);
    if (!rc) rc = write_pack(dir, target, cur.n - pch - (size_t)info.hits, pch, whole ? NULL : only);
    amp__prebuilt_set_capture(NULL);
    amp__prebuilt_set_data_capture(NULL);
    pack_reset();
    return rc;
}

int main(int argc, char **argv)
{
    tool_start();
    const char *dir = NULL, *reuse = NULL;
    const char *only[17] = {NULL};
    int nonly = 0;
    int jobs = 0;
    /* A line as each pack is written, also into a build's log (a GPU pack
     * takes minutes on a small machine: the log shows where it is). */
    setvbuf(stdout, NULL, _IOLBF, 0);
    bool strict = false;
    const char *targets[64];
    int nt = 0;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return tool_stdout_close("hipamp-prebuild") ? 0 : 1;
        }
        if (!strcmp(a, "--strict")) strict = true;
        else if (!strcmp(a, "--dir") || !strcmp(a, "--jobs") || !strcmp(a, "--only") || !strcmp(a, "--reuse")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "hipamp-prebuild: %s needs a value\n", a);
                return 2;
            }
            const char *v = argv[++i];
            /* The last would win without a word: a script's second --dir
             * wrote the packs somewhere it did not mean. */
            const char **once = !strcmp(a, "--dir") ? &dir : !strcmp(a, "--reuse") ? &reuse : NULL;
            if ((once && *once) || (!strcmp(a, "--jobs") && jobs)) {
                fprintf(stderr, "hipamp-prebuild: %s given twice\n", a);
                return 2;
            }
            if (!strcmp(a, "--dir")) dir = v;
            else if (!strcmp(a, "--reuse")) reuse = v;
            else if (!strcmp(a, "--only")) {
                if (nonly == 16) {
                    fprintf(stderr, "hipamp-prebuild: more than 16 --only\n");
                    return 2;
                }
                only[nonly++] = v;
            }
            else {
                char *end;
                long n = strtol(v, &end, 10);
                if (*end || n < 1 || n > 256) {
                    fprintf(stderr, "hipamp-prebuild: --jobs '%s' is not a number from 1 to 256\n", v);
                    return 2;
                }
                jobs = (int)n;
            }
        } else if (a[0] == '-') {
            fprintf(stderr, "hipamp-prebuild: unknown option '%s'\n", a);
            usage(stderr);
            return 2;
        } else if (nt == (int)(sizeof targets / sizeof targets[0])) {
            fprintf(stderr, "hipamp-prebuild: more than %d targets\n", nt);
            return 2;
        } else if (strcmp(a, "cpu") && !tool_target_shaped(a)) {
            /* A target no compiler here knows is skipped (a build lists the
             * targets it wants shipped); a word that is no target's name
             * is a mistake. */
            fprintf(stderr, "hipamp-prebuild: '%s' is not a target name (cpu, sm_NN, gfxNNN or gfxNNN:feature+)\n", a);
            return 2;
        } else targets[nt++] = a;
    }
    if (dir && (!dir[0] || strlen(dir) > 3000)) {
        fprintf(stderr, "hipamp-prebuild: --dir '%s': need a directory name of 1 to 3000 characters\n", dir);
        return 2;
    }
    /* --reuse goes whole into AMP_PREBUILT_DIR and pack paths (4096 bytes):
     * a longer one would have named another directory. */
    if (reuse && (!reuse[0] || strlen(reuse) > 3000)) {
        fprintf(stderr, "hipamp-prebuild: --reuse '%.64s%s' (%zu characters): need a directory name of 1 to 3000 "
                "characters\n", reuse, strlen(reuse) > 64 ? "..." : "", strlen(reuse));
        return 2;
    }
    /* Said, not fatal: a build's HIPAMP_PREBUILT_REUSE may name another
     * build's packs that are not there (yet); everything is compiled. */
    struct stat rs;
    if (reuse && stat(reuse, &rs) != 0) {
        printf("hipamp-prebuild: --reuse '%s': %s: nothing is reused\n", reuse, strerror(errno));
        reuse = NULL;
    } else if (reuse && !S_ISDIR(rs.st_mode)) {
        printf("hipamp-prebuild: --reuse '%s' is no directory: nothing is reused\n", reuse);
        reuse = NULL;
    }
    if (!dir || nt == 0) {
        fprintf(stderr, "hipamp-prebuild: %s\n", !dir ? "--dir is required" : "no target");
        usage(stderr);
        return 2;
    }
    if (jobs == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        jobs = n > 0 && n < 64 ? (int)n : 4;
    }
    /* The jobs already keep the CPUs busy, one program each: NVRTC's own
     * threads (--split-compile) would only crowd them (unless the caller
     * asked for them). */
    if (jobs > 1) setenv("AMP_GPU_COMPILE_JOBS", "1", 0);
    /* The packs are written by name under dir: the way to it is walked as
     * every tool walks an output's (tool_output.c), so that a link another
     * user planted on it (a name in /tmp leading to a directory of ours) is
     * refused, not followed: before the directories missing on it are made
     * (mkdir would follow such a link), and again once they are there. */
    char probe_out[4200];
    snprintf(probe_out, sizeof probe_out, "%s/.hipamp-prebuild-pack", dir);
    if (!tool_out_allowed("hipamp-prebuild", probe_out, NULL, 0, NULL, 0)) return 2;
    char made[4096];
    snprintf(made, sizeof made, "%s", dir);
    for (char *p = made + 1;; ++p) {
        char c = *p;
        if (c != '/' && c != 0) continue;
        *p = 0;
        if (mkdir(made, 0755) != 0 && errno != EEXIST) {
            fprintf(stderr, "hipamp-prebuild: cannot make %s: %s\n", made, strerror(errno));
            return 1;
        }
        *p = c;
        if (!c) break;
    }
    /* From then on dir is its real path, taken before and after the second
     * walk (a link swapped meanwhile is refused too). */
    char real[PATH_MAX], again_real[PATH_MAX];
    struct stat ds;
    if (!realpath(dir, real) || stat(real, &ds) != 0) {
        fprintf(stderr, "hipamp-prebuild: --dir '%s': %s\n", dir, strerror(errno));
        return 1;
    }
    if (!S_ISDIR(ds.st_mode)) {
        fprintf(stderr, "hipamp-prebuild: --dir '%s' is not a directory\n", dir);
        return 2;
    }
    if (!tool_out_allowed("hipamp-prebuild", probe_out, NULL, 0, NULL, 0)) return 2;
    if (!realpath(dir, again_real) || strcmp(real, again_real)) {
        fprintf(stderr, "hipamp-prebuild: --dir '%s' changed while it was checked\n", dir);
        return 2;
    }
    dir = real;
    /* The CPU pack's programs go through the library's own build path: the
     * user's disk cache stays out of it, and the last pack in dir is where
     * unchanged programs come from (their keys say they are unchanged). */
    /* The tuning knobs change the programs' sources: the packs hold the
     * defaults' (a user who sets a knob gets programs compiled for it). */
    extern char **environ;
    for (bool again = true; again;) {
        again = false;
        for (char **e = environ; *e; ++e)
            if (!strncmp(*e, "AMP_ALG_", 8)) {
                char name[256];
                snprintf(name, sizeof name, "%.*s", (int)strcspn(*e, "="), *e);
                unsetenv(name);
                again = true;
                break;
            }
    }
    setenv("AMP_CACHE_DIR", "off", 1);
    /* The CPU pack's earlier entries come through the library's own
     * lookup (its owner and mode rules): DIR's, else those of --reuse. */
    char probe[4096];
    bool have_cpu_pack = false;
    DIR *dd = opendir(dir);
    for (struct dirent *de; dd && (de = readdir(dd));)
        have_cpu_pack = have_cpu_pack || (!strncmp(de->d_name, "cpu-", 4) && amp__prebuilt_is_pack_name(de->d_name));
    if (dd) closedir(dd);
    snprintf(probe, sizeof probe, "%s", reuse && !have_cpu_pack ? reuse : dir);
    setenv("AMP_PREBUILT_DIR", probe, 1);
    unsetenv("AMP_PREBUILT");
    int rc = 0;
    for (int i = 0; i < nt; ++i) {
        int r = !strcmp(targets[i], "cpu") ? build_cpu(dir, jobs, nonly ? only : NULL, strict) : build_gpu(dir, reuse, targets[i], jobs, nonly ? only : NULL, strict);
        if (r) rc = r;
    }
    if (!tool_stdout_close("hipamp-prebuild") && !rc) rc = 1;
    return rc;
}
