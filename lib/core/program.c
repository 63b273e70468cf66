/* program.c — amp_program: building a source (or a .hip file) through the
 * in-memory cache, the disk cache and the backend's compiler, and handing
 * out its kernels after their signature records pass the one check. */
#include "internal.h"
#include "base/trusted_path.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


struct amp_program {
    amp__handle h;
    amp__module *m;         /* one reference */
    pthread_mutex_t lock;   /* guards kernels and ending */
    amp__kernel **kernels;
    size_t nkernels, cap;
    bool ending;            /* amp_program_destroy has begun: no kernel is added */
    atomic_bool destroying; /* one amp_program_destroy is at work (the shell outlives p: read before the lock) */
};

/* ------------------------------------------------------------ build keys */

/* What every build on acc shares: the assembled prelude and the backend's
 * identity (compiler, target, flags, environment). Computed once. */
static amp_status amp__key_base(amp_accelerator *acc, uint8_t out[32])
{
    amp_status st = AMP_OK;
    pthread_mutex_lock(&acc->lock);
    if (!acc->key_ready) {
        amp__sha256 *h = amp__sha256_new();
        if (!h) {
            st = amp__fail(AMP_ERROR_OUT_OF_MEMORY, "no memory to hash a build key");
            goto out;
        }
        /* v4: a GPU program compiles without the device library when its
         * text names nothing of it (the same source, a smaller unit). */
        amp__sha256_str(h, "hipamp build key v4");
        amp__sha256_str(h, acc->e.be->prelude_prefix);
        amp__sha256_str(h, amp__embedded_prelude);
        amp__sha256_str(h, amp__embedded_cpu_device);
        amp__sha256_str(h, amp__embedded_device_lib);
        amp__sha256_str(h, acc->e.be->name);
        amp__sha256_str(h, acc->e.be->cache_tag(acc->e.dev));
        if (!amp__sha256_final(h, acc->key_base)) {
            /* Tried again by the next build: nothing is kept. */
            st = amp__fail(AMP_ERROR_UNSUPPORTED, "OpenSSL's libcrypto could not finish the SHA-256 of a build key");
            goto out;
        }
        acc->key_ready = true;
    }
    memcpy(out, acc->key_base, 32);
out:
    pthread_mutex_unlock(&acc->lock);
    return st;
}

/* The disk key: everything that changes the compiled output. */
static amp_status amp__build_key(amp_accelerator *acc, const amp__build_input *in, const amp__scan *scan, uint8_t key[32])
{
    uint8_t base[32];
    amp_status st = amp__key_base(acc, base);
    if (st != AMP_OK) return st;
    amp__sha256 *h = amp__sha256_new();
    if (!h) return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "no memory to hash a build key");
    amp__sha256_field(h, base, sizeof base);
    amp__sha256_str(h, in->options);
    amp__sha256_str(h, in->source_name);
    amp__sha256_field(h, in->source, in->source_len);
    uint64_t n = scan->n;
    amp__sha256_field(h, &n, sizeof n);
    for (size_t i = 0; i < scan->n; ++i) {
        amp__sha256_str(h, scan->headers[i].name);
        amp__sha256_str(h, scan->headers[i].path);
        amp__sha256_field(h, scan->headers[i].content, scan->headers[i].size);
    }
    if (!amp__sha256_final(h, key))
        return amp__fail(AMP_ERROR_UNSUPPORTED, "OpenSSL's libcrypto could not finish the SHA-256 of a build key");
    return AMP_OK;
}

/* Whether path lies in one of the compiler's own directories (COMPILER or
 * LIBC: identified by the versions in the cache tag). */
static bool amp__in_own_dirs(const char *path, const amp__sys_dir *sys)
{
    for (size_t i = 0; sys && sys[i].path; ++i) {
        size_t n = strlen(sys[i].path);
        if (sys[i].kind != AMP__DIR_LOCAL && !strncmp(path, sys[i].path, n) && (path[n] == '/' || !strcmp(sys[i].path, "/")))
            return true;
    }
    return false;
}

static const amp__dep *amp__dep_find(const amp__dep *deps, size_t n, const struct stat *sb)
{
    for (size_t i = 0; i < n; ++i)
        if (deps[i].dev == (uint64_t)sb->st_dev && deps[i].ino == (uint64_t)sb->st_ino) return &deps[i];
    return NULL;
}

/* The ways to a header the scan took and judged (a header's path, or
 * another path of one), tidied (amp__path_tidy) and sorted, for
 * amp__deps_check; NULL with *n 0 when none, or no memory (then every
 * way is walked again: more work, never less checking). */
static int amp__cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static char **amp__scan_ways(const amp__scan *scan, size_t *n)
{
    *n = 0;
    char **v = scan->n + scan->nabsent ? calloc(scan->n + scan->nabsent, sizeof *v) : NULL;
    if (!v) return NULL;
    char tidy[PATH_MAX];
    for (size_t i = 0; i < scan->n + scan->nabsent; ++i) {
        const amp__dep *d = i < scan->n ? &scan->deps[i] : &scan->absent[i - scan->n];
        if (d->absent || !d->path || !amp__path_tidy(d->path, tidy, sizeof tidy)) continue;
        if (!(v[*n] = amp__strdup(tidy))) break;
        ++*n;
    }
    qsort(v, *n, sizeof *v, amp__cmp_str);
    return v;
}

static void amp__ways_free(char **v, size_t n)
{
    for (size_t i = 0; i < n; ++i) free(v[i]);
    free(v);
}

/* The compiler said which files it read (deps, one absolute path a line,
 * as it named them). The way to each must be one the scan judged, or one
 * no other user could have changed (walked now, links and all, against
 * root, this user, whoever can change the kernel file's directory and the
 * owners of the compiler's own directories): the compiler looks a header
 * up at its own time, and a way through another user's link in a sticky
 * directory (where the scan found nothing) may have led to their file when
 * it was read and to one of ours since. What it leads to must be a header
 * the scan keyed (or, on a second round, one of extra, stamped before it)
 * and unchanged since, or lie in the compiler's own directories. A file
 * another user could have written fails the build (nothing built from it
 * is loaded); a keyed header that changed while it was compiled makes the
 * result uncacheable (*why says so, *uncacheable set). On the first round
 * (more != NULL) the other files are stamped into *more (*nmore) for a
 * rebuild against them: a computed #include, which the scan cannot
 * follow. */
static amp_status amp__deps_check(const char *deps, const amp__scan *scan, const amp__dep *extra, size_t nextra,
                                  const amp__sys_dir *sys, const amp__build_input *in, amp__dep **more,
                                  size_t *nmore, bool *uncacheable, char *why, size_t n)
{
    amp_status st = AMP_OK;
    const char *name = in->source_name ? in->source_name : AMP__SOURCE_NAME;
    size_t cap = 0, nways = 0;
    char **ways = amp__scan_ways(scan, &nways);
    amp__trust trust;
    amp__trust_init(&trust, in->source_dir, NULL);
    /* The compiler's and the C library's directories' owners: not a LOCAL
     * one's (/usr/local/include, a directory AMP_CXX names), whose owner
     * may be anyone. */
    for (size_t i = 0; sys && sys[i].path; ++i) {
        struct stat ds;
        if (sys[i].kind != AMP__DIR_LOCAL && stat(sys[i].path, &ds) == 0) amp__trust_user(&trust, ds.st_uid);
    }
    for (const char *p = deps; p && *p;) {
        const char *line = p, *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        char path[PATH_MAX], problem[PATH_MAX + 128], real[PATH_MAX];
        p = nl ? nl + 1 : NULL;
        if (!len) continue;
        bool fits = len < sizeof path;
        if (fits) {
            memcpy(path, line, len);
            path[len] = '\0';
        }
        /* Every name is absolute: one that is not stands for a name the
         * backend could not hold (amp__cpu_deps). */
        if (!fits || path[0] != '/') {
            st = amp__fail(AMP_ERROR_COMPILE, "compiling %s: the compiler read a file whose name hipamp cannot check "
                           "(%.200s); hipamp loads nothing built from a file it did not check", name,
                           len < sizeof path ? path : "longer than PATH_MAX");
            goto fail;
        }
        char *key = path;
        if (!(ways && bsearch(&key, ways, nways, sizeof *ways, amp__cmp_str)) &&
            amp__trusted_walk(&trust, "/", path, strlen(path), problem, sizeof problem) == AMP__WALK_UNTRUSTED) {
            st = amp__fail(AMP_ERROR_COMPILE, "compiling %s: the compiler read %s, which another user could have "
                           "written (%s); hipamp loads nothing built from it", name, path, problem);
            goto fail;
        }
        struct stat sb;
        const amp__dep *d = NULL;
        if (stat(path, &sb) == 0 && ((d = amp__dep_find(scan->deps, scan->n, &sb)) || (d = amp__dep_find(extra, nextra, &sb)))) {
            /* A header of the scan's is compared with what the key holds
             * too: its stamps can stay as they were across a rewrite. */
            const bool scanned = d >= scan->deps && d < scan->deps + scan->n;
            if (amp__dep_fresh(d) && (!scanned || amp__dep_holds(d, path, &scan->headers[d - scan->deps]))) continue;
            if (!scanned) {
                st = amp__fail(AMP_ERROR_COMPILE, "compiling %s: %s changed while it was compiled; hipamp loads "
                               "nothing built from a file it did not key (build again)", name, path);
                goto fail;
            }
            *uncacheable = true;
            snprintf(why, n, "%.200s changed while it was compiled", path);
            continue;
        }
        if (realpath(path, real) && amp__in_own_dirs(real, sys)) continue;
        if (!more) {
            st = amp__fail(AMP_ERROR_COMPILE, "compiling %s: the compiler read %s, which the include scan did not "
                           "find even after a first compile read it; hipamp loads nothing built from a file it did "
                           "not key", name, path);
            goto fail;
        }
        if (*nmore == cap) {
            size_t nc = cap ? 2 * cap : 8;
            amp__dep *g = realloc(*more, nc * sizeof *g);
            if (!g) {
                st = amp__fail(AMP_ERROR_OUT_OF_MEMORY, "no memory for the list of files the compiler read");
                goto fail;
            }
            *more = g;
            cap = nc;
        }
        if (!amp__dep_stamp(&(*more)[*nmore], path)) {
            st = amp__fail(AMP_ERROR_COMPILE, "compiling %s: the compiler read %s, which is gone", name, path);
            goto fail;
        }
        if (!*uncacheable) snprintf(why, n, "the compiler read %.200s, which the include scan did not find", path);
        *uncacheable = true;
        ++*nmore;
    }
    amp__ways_free(ways, nways);
    return AMP_OK;
fail:
    amp__ways_free(ways, nways);
    if (more) {
        for (size_t i = 0; i < *nmore; ++i) free((*more)[i].path);
        free(*more);
        *more = NULL;
        *nmore = 0;
    }
    return st;
}

/* -------------------------------------------------------------- building */

#if HIPAMP_TRACE_HOOKS /* compiled out with the hooks */
/* A build as the trace records it (lib/trace/trace.h); cache: AMP__BUILD_*. */
static amp__trace_rec amp__build_record(amp_accelerator *acc, const amp__build_input *in)
{
    amp__trace_rec r = AMP__TRACE_REC(AMP__REC_BUILD);
    r.name = in->source_name;
    r.source = in->source;
    r.source_len = in->source_len;
    amp__accelerator_describe(acc, &r);
    return r;
}

static uint64_t amp__build_trace_begin(amp_accelerator *acc, const amp__build_input *in)
{
    amp__trace_rec r = amp__build_record(acc, in);
    return amp__trace_begin(&r);
}

static void amp__build_trace_end(uint64_t t0, amp_accelerator *acc, const amp__build_input *in, int cache, amp_status st)
{
    amp__trace_rec r = amp__build_record(acc, in);
    r.t_ns = t0;
    r.sub = (uint8_t)cache;
    r.st = st;
    amp__trace_end(&r, true);
}
#endif


static amp_status amp__module_from_binary(amp__module *m, const void *bin, size_t size)
{
    return m->acc->e.be->module_load(m->acc->e.dev, bin, size, &m->mod);
}

/* Move the stamps of the scan's headers, and of the files a computed
 * #include made the compiler read (extra), into m, for the memory cache's
 * re-check. */
static amp_status amp__take_deps(amp__module *m, amp__scan *scan, amp__dep **extra, size_t *nextra)
{
    if (*nextra || scan->nabsent) {
        amp__dep *all = realloc(scan->deps, (scan->n + *nextra + scan->nabsent) * sizeof *all);
        if (!all) return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "program: out of host memory");
        if (*nextra) memcpy(all + scan->n, *extra, *nextra * sizeof *all);
        if (scan->nabsent) memcpy(all + scan->n + *nextra, scan->absent, scan->nabsent * sizeof *all);
        scan->deps = all;
        free(*extra);
        *extra = NULL;
        free(scan->absent);
        scan->absent = NULL;
    }
    m->deps = scan->deps;
    m->ndeps = scan->n + *nextra + scan->nabsent;
    scan->deps = NULL;
    scan->nabsent = 0;
    *nextra = 0;
    for (size_t i = 0; i < scan->n; ++i) {
        free((char *)scan->headers[i].name);
        free((char *)scan->headers[i].path);
        free((char *)scan->headers[i].content);
    }
    free(scan->headers);
    scan->headers = NULL;
    scan->n = 0;
    return AMP_OK;
}

static void amp__deps_free(amp__dep *d, size_t n)
{
    for (size_t i = 0; i < n; ++i) free(d[i].path);
    free(d);
}

/* Compile, and check what the compiler read (a compiler that reports it):
 * when a computed #include made it read files the scan could not find
 * (safe ones: others fail the build), stamp them and compile once more, so
 * that what is loaded was built from files as they were stamped. */
static amp_status amp__compile_checked(amp_accelerator *acc, const amp__compile_job *job, const amp__scan *scan,
                                       amp__sys_dirs_query sys, const amp__build_input *in, void **bin,
                                       size_t *bin_size, amp__dep **extra, size_t *nextra, bool *cacheable)
{
    for (int round = 0;; ++round) {
        amp__compile_output res = {0};
        amp_status st = acc->e.be->compile(acc->e.dev, job, &res);
        *bin = res.bin;
        *bin_size = res.bin_size;
        if (st != AMP_OK) {
            free(res.deps);
            amp__compile_log_summarize(st);
            return st;
        }
        if (res.no_store[0] && *cacheable) amp__dcache_note_uncacheable(res.no_store);
        if (res.no_store[0]) *cacheable = false;
        if (!res.deps) return AMP_OK;
        amp__dep *more = NULL;
        size_t nmore = 0;
        bool uncacheable = false;
        char why[320] = "";
        st = amp__deps_check(res.deps, scan, *extra, *nextra, sys.get ? sys.get(sys.ctx) : NULL, in,
                             round ? NULL : &more, &nmore, &uncacheable, why, sizeof why);
        free(res.deps);
        if (st != AMP_OK) return st;
        if (uncacheable && *cacheable) amp__dcache_note_uncacheable(why);
        if (uncacheable) *cacheable = false;
        if (!nmore) return AMP_OK;
        *extra = more;
        *nextra = nmore;
        free(*bin);
        *bin = NULL;
    }
}

/* One compile of amp__build's unit (amp__compile_on_demand's fn): what a
 * failed first attempt left is dropped before the next. */
typedef struct amp__build_compile {
    amp_accelerator *acc;
    amp__compile_job *job;
    const amp__scan *scan;
    amp__sys_dirs_query sys;
    const amp__build_input *in;
    void **bin;
    size_t *bin_size;
    amp__dep **extra;
    size_t *nextra;
    bool *cacheable;
} amp__build_compile;

static amp_status amp__build_compile_unit(void *ctx, const char *unit, size_t len)
{
    amp__build_compile *c = ctx;
    (void)len;
    free(*c->bin);
    *c->bin = NULL;
    amp__deps_free(*c->extra, *c->nextra);
    *c->extra = NULL;
    *c->nextra = 0;
    c->job->source = unit;
    amp_status st = amp__compile_checked(c->acc, c->job, c->scan, c->sys, c->in, c->bin, c->bin_size, c->extra,
                                         c->nextra, c->cacheable);
    c->job->source = NULL; /* unit is freed by the caller */
    return st;
}

/* builtin: one of the built-in algorithms' programs, which a pack may hold
 * (lib/core/prebuilt.c). */
static amp_status amp__build(amp_accelerator *acc, const amp__build_input *in, bool builtin, amp_program **out)
{
    amp_status st = AMP_OK;
    amp__module *m = NULL;
    amp_program *p = NULL;
    amp__scan scan;
    amp__dep *extra = NULL;
    amp__header *named = NULL;
    char *source = NULL, *options = NULL, *search = NULL;
    void *bin = NULL;
    size_t bin_size = 0, nextra = 0, nnamed = 0;
    uint8_t key[32], pkey[32];
    const char *ptarget = NULL;
    bool cacheable;
    memset(&scan, 0, sizeof scan);
    *out = NULL;
    if (!acc && (st = amp_accelerator_default(&acc)) != AMP_OK) return st;
    if (!acc->e.info.is_available)
        return amp__fail(AMP_ERROR_UNSUPPORTED, "accelerator %s cannot build programs: %s", acc->e.info.device_path,
                         acc->e.info.unavailable_reason);
    /* The in-memory cache's key: a chdir or a new CPATH can change which
     * headers the same inputs name. */
    if ((st = amp__scan_context(in->options, acc->e.be->include_env, &search)) != AMP_OK) return st;
    amp__build_input keyed = *in;
    keyed.search = search;
    in = &keyed;
    /* Published when whole (done: below): the compile may take seconds,
     * and a stale pointer reaching the reused shell must not find a
     * program without its module. */
    if (!(p = amp__handle_new_unpublished(AMP__HANDLE_PROGRAM, sizeof *p))) {
        free(search);
        return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "program: out of host memory");
    }
    pthread_mutex_init(&p->lock, NULL);
    AMP__TRACE_CLOCK(t_build, amp__build_trace_begin(acc, in));
    AMP__TRACE_VAR(int cache = AMP__BUILD_COMPILED);

    if ((m = amp__mcache_find(acc, in))) {
        AMP__TRACE(cache = AMP__BUILD_MEMORY);
        goto done;
    }

    const amp__backend *be = acc->e.be;
    if (!(m = amp__module_new(acc, in))) {
        st = amp__fail(AMP_ERROR_OUT_OF_MEMORY, "program: out of host memory");
        goto fail;
    }
    /* A built-in program's source is the library's own, without #include
     * lines: a pack's entry needs no scan (nor its key, nor the disk
     * cache's lookup). */
    if (builtin && be->prebuilt_target && (ptarget = be->prebuilt_target(acc->e.dev))) {
        amp__prebuilt_key(be->name, ptarget, be->prelude_prefix, in->source, in->source_len, in->options, pkey);
        if ((bin = amp__prebuilt_load(ptarget, pkey, &bin_size))) {
            if (amp__module_from_binary(m, bin, bin_size) == AMP_OK) {
                AMP__TRACE(cache = AMP__BUILD_PREBUILT);
                goto loaded;
            }
            amp__prebuilt_refused(ptarget, pkey, amp_last_error());
            free(bin);
            bin = NULL;
        }
    }
    /* AMP_COMPILE_TIMEOUT counts from here: the scan may wait on the
     * compiler too (amp__compile_job's started_ns). */
    const uint64_t t_scan = amp__now_ns();
    amp__sys_dirs_query sys = {be->system_include_dirs, acc->e.dev};
    if ((st = amp__scan_includes(in, be->include_env, sys, &scan)) != AMP_OK) goto fail;
    if (be->named_headers && (st = amp__named_check(&scan)) != AMP_OK) goto fail;
    /* The key is needed only for the disk cache, which is off (and says
     * why) where OpenSSL cannot compute its MACs. */
    cacheable = scan.complete;
    if (!cacheable) amp__dcache_note_uncacheable(scan.why);
    if (cacheable && !amp__dcache_usable()) cacheable = false;
    if (cacheable && amp__build_key(acc, in, &scan, key) != AMP_OK) {
        amp__dcache_note_uncacheable(amp_last_error());
        cacheable = false;
    }
    if (cacheable && (bin = amp__dcache_load(key, &bin_size))) {
        /* Authenticated, but the driver may still refuse it (a driver
         * update): then rebuild below and overwrite the entry. */
        if (amp__module_from_binary(m, bin, bin_size) == AMP_OK) {
            AMP__TRACE(cache = AMP__BUILD_DISK);
            goto loaded;
        }
        amp__dcache_refused(key, amp_last_error());
        free(bin);
        bin = NULL;
    }
    if ((st = amp__scan_rewrite(&scan, in->source, in->source_len, be->named_headers, &source,
                                be->named_headers ? &named : NULL)) != AMP_OK)
        goto fail;
    nnamed = named ? scan.n : 0;
    if (be->named_headers && (st = amp__named_options(in->options, &options)) != AMP_OK) goto fail;
    amp__compile_job job = {
        .source = NULL,
        .source_name = in->source_name ? in->source_name : AMP__SOURCE_NAME,
        .source_dir = in->source_dir,
        .options = be->named_headers ? options : in->options,
        .headers = named,
        .nheaders = nnamed,
        .timeout_s = amp__compile_timeout_s(),
        .started_ns = t_scan,
        .cache_load = amp__dcache_usable() ? amp__dcache_load : NULL,
        .cache_store = amp__dcache_usable() ? amp__dcache_store : NULL,
        .pack_target = be->prebuilt_target ? be->prebuilt_target(acc->e.dev) : NULL,
        .pack_load = amp__prebuilt_load_data,
        .pack_capture = amp__prebuilt_data_capture(),
    };
    /* On a GPU a program compiles without the device library where its
     * text names nothing of it (a sixth less to compile for a small
     * kernel), as amp_compile_for_target and so the packs compile it. */
    amp__build_compile bc = {acc, &job, &scan, sys, in, &bin, &bin_size, &extra, &nextra, &cacheable};
    bool lean = be->device_lib_on_demand && !amp__unit_wants_device_lib(source, named, nnamed, job.options);
    st = amp__compile_on_demand(lean, be->prelude_prefix, source, in->source_name, amp__build_compile_unit, &bc);
    if (st != AMP_OK) goto fail;
    if ((st = amp__module_from_binary(m, bin, bin_size)) != AMP_OK) goto fail;
    if (cacheable) amp__dcache_store(key, bin, bin_size);
loaded:
    if (ptarget) amp__prebuilt_captured(ptarget, pkey, bin, bin_size);
    if ((st = amp__take_deps(m, &scan, &extra, &nextra)) != AMP_OK) goto fail;
    m = amp__mcache_insert(m);
done:
    AMP__TRACE(amp__build_trace_end(t_build, acc, in, cache, AMP_OK));
    p->m = m;
    amp__handle_publish(p, AMP__HANDLE_PROGRAM);
    *out = p;
    amp__scan_rewrite_free(named, nnamed);
    amp__scan_free(&scan);
    free(source);
    free(options);
    free(search);
    free(bin);
    return AMP_OK;
fail:
    AMP__TRACE(amp__build_trace_end(t_build, acc, in, cache, st));
    amp__module_release(m);
    amp__scan_rewrite_free(named, nnamed);
    amp__deps_free(extra, nextra);
    amp__scan_free(&scan);
    pthread_mutex_destroy(&p->lock);
    amp__handle_free(p, AMP__HANDLE_PROGRAM);
    free(source);
    free(options);
    free(search);
    free(bin);
    return st;
}

amp_status amp_program_build(amp_accelerator *acc, const char *source, const char *options, amp_program **out)
{
    AMP__NOT_NULL(out);
    *out = NULL;
    AMP__NOT_NULL(source);
    if (acc) AMP__ACCEL_OK(acc);
    amp__build_input in = {source, strlen(source), options, NULL, NULL, NULL};
    return amp__build(acc, &in, false, out);
}

amp_status amp__program_build_builtin(amp_accelerator *acc, const char *source, amp_program **out)
{
    *out = NULL;
    amp__build_input in = {source, strlen(source), NULL, NULL, NULL, NULL};
    return amp__build(acc, &in, true, out);
}

amp_status amp_program_build_file(amp_accelerator *acc, const char *path, const char *options, amp_program **out)
{
    char *text = NULL, *dir = NULL;
    size_t size = 0;
    AMP__NOT_NULL(out);
    *out = NULL;
    AMP__NOT_NULL(path);
    if (acc) AMP__ACCEL_OK(acc);
    amp_status st = amp__read_kernel_file(path, &text, &size, &dir);
    if (st == AMP_OK) {
        amp__build_input in = {text, size, options, path, dir, NULL};
        st = amp__build(acc, &in, false, out);
    }
    free(text);
    free(dir);
    return st;
}

/* --------------------------------------------------------------- kernels */

static void amp__kernel_free(amp__kernel *k)
{
    if (!k) return;
    amp__kernel_handle_free(k);
    free(k->name);
    free(k);
}

/* Counted as a launch in flight (amp__launch_enter), so that an
 * amp_program_destroy that began after its handle check waits for it (p
 * stays alive meanwhile); a kernel is added only before that destroy
 * closes the list (ending, under p->lock). */
static amp_status amp__program_get_kernel(amp_program *p, const char *name, amp_kernel **out)
{
    amp__kernel *k = NULL;
    amp_status st = amp__handle_check(p, AMP__HANDLE_PROGRAM, "amp_program_get_kernel", "p");
    if (st != AMP_OK) return st;
    if (!name || !*name)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_program_get_kernel: name is %s", name ? "empty" : "NULL");
    size_t name_len = strlen(name);
    if (name_len > AMP__KERNEL_NAME_MAX)
        return amp__fail(AMP_ERROR_KERNEL_NOT_FOUND, "kernel '%.64s...' not found: its name has %zu characters, and a "
                         "kernel's name has at most %d", name, name_len, AMP__KERNEL_NAME_MAX);
    amp__module *m = p->m;
    amp_accelerator *acc = m->acc;
    pthread_mutex_lock(&p->lock);
    if (p->ending) {
        st = amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_program_get_kernel: the program is being destroyed "
                       "(amp_program_destroy on another thread)");
        goto fail;
    }
    for (size_t i = 0; i < p->nkernels; ++i)
        if (!strcmp(p->kernels[i]->name, name)) {
            *out = p->kernels[i]->handle;
            goto out;
        }
    if (p->nkernels == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 8;
        amp__kernel **grown = realloc(p->kernels, cap * sizeof *grown);
        if (!grown) {
            st = amp__fail(AMP_ERROR_OUT_OF_MEMORY, "program: out of host memory");
            goto fail;
        }
        p->kernels = grown;
        p->cap = cap;
    }
    if (!(k = calloc(1, sizeof *k)) || !(k->name = amp__strdup(name))) {
        st = amp__fail(AMP_ERROR_OUT_OF_MEMORY, "program: out of host memory");
        goto fail;
    }
    amp__kernel_props props;
    if ((st = acc->e.be->kernel_get(acc->e.dev, m->mod, name, &props)) != AMP_OK) goto fail;
    char why[256];
    if (props.sig.magic == AMP__SIG_MAGIC && props.sig.version == AMP__SIG_VERSION && props.sig.pack_size > AMP__MAX_PACK) {
        /* The prelude refuses such a kernel when it compiles; a record from
         * elsewhere is told the same. */
        st = amp__fail(AMP_ERROR_UNSUPPORTED, "kernel '%s' takes %d bytes of parameters (after the index); hipamp "
                       "passes at most %d bytes to a kernel on every accelerator: pass large data in an array_view",
                       name, props.sig.pack_size, AMP__MAX_PACK);
        goto fail;
    }
    if (props.sig.magic == AMP__SIG_MAGIC && props.sig.version == AMP__SIG_VERSION && props.sig.tiled == 1 &&
        props.sig.rank >= 1 && props.sig.rank <= 3) {
        /* A tile dimension past what a record holds (tiled_index<100000>)
         * is a tile over every accelerator's thread limit, told as one. */
        for (int d = 0; d < props.sig.rank; ++d)
            if (props.sig.tile[d] > AMP__SIG_MAX_TILE_DIM) {
                st = amp__fail(AMP_ERROR_UNSUPPORTED,
                               "kernel '%s' has tiles of %d threads in dimension %d alone; %s allows at most %d", name,
                               props.sig.tile[d], d, acc->e.info.device_path, acc->e.info.max_tile_threads);
                goto fail;
            }
    }
    if (props.sig.magic == AMP__SIG_MAGIC && props.sig.version == AMP__SIG_VERSION &&
        props.sig.pack_align > AMP__MAX_PARAM_ALIGN && props.sig.pack_align <= AMP__MAX_PACK &&
        !(props.sig.pack_align & (props.sig.pack_align - 1))) {
        /* The prelude refuses such a parameter when it compiles (a record
         * from elsewhere is told the same). */
        st = amp__fail(AMP_ERROR_UNSUPPORTED, "kernel '%s' has a parameter aligned to %d bytes; hipamp passes "
                       "parameters aligned to at most %d", name, props.sig.pack_align, AMP__MAX_PARAM_ALIGN);
        goto fail;
    }
    if (!amp__signature_valid(&props.sig, why, sizeof why)) {
        st = amp__fail(AMP_ERROR_KERNEL_NOT_FOUND,
                       "kernel '%s' has no valid signature record (%s): define it with AMP_KERNEL or "
                       "AMP_TILED_KERNEL", name, why);
        goto fail;
    }
    k->m = m;
    k->acc = acc;
    k->fn = props.fn;
    k->sig = props.sig;
    k->tile_static_bytes = props.tile_static_bytes;
    k->max_block = props.max_block > 0 ? props.max_block : AMP__SIMPLE_BLOCK_THREADS;
    snprintf(k->execution, sizeof k->execution, "%s", props.execution);
    /* A kernel's tile and memory never change, so the accelerator's limits
     * are checked once here rather than on every launch (backends rely on
     * it: backend.h). */
    const amp_accelerator_info *ai = &acc->e.info;
    long long threads = 1;
    for (int d = 0; k->sig.tiled && d < k->sig.rank; ++d) threads *= k->sig.tile[d];
    if (ai->max_tile_threads > 0 && threads > ai->max_tile_threads) {
        st = amp__fail(AMP_ERROR_UNSUPPORTED, "kernel '%s' has tiles of %lld threads; %s allows at most %d", name,
                       threads, ai->device_path, ai->max_tile_threads);
        goto fail;
    }
    if (k->tile_static_bytes > ai->max_tile_static_bytes) {
        st = amp__fail(AMP_ERROR_UNSUPPORTED,
                       "kernel '%s' uses %zu bytes of tile_static memory; %s allows at most %zu%s", name,
                       k->tile_static_bytes, ai->device_path, ai->max_tile_static_bytes, props.tile_static_note);
        goto fail;
    }
    if ((st = amp__kernel_handle_new(k)) != AMP_OK) goto fail;
    p->kernels[p->nkernels++] = k;
    *out = k->handle;
out:
    pthread_mutex_unlock(&p->lock);
    return AMP_OK;
fail:
    pthread_mutex_unlock(&p->lock);
    amp__kernel_free(k);
    return st;
}

amp_status amp_program_get_kernel(amp_program *p, const char *name, amp_kernel **out)
{
    AMP__NOT_NULL(out);
    *out = NULL;
    amp__launcher *me = amp__launch_enter();
    if (!me) return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "amp_program_get_kernel: no memory for this thread's record");
    amp_status st = amp__program_get_kernel(p, name, out);
    amp__launch_leave(me);
    return st;
}

amp_status amp_program_destroy(amp_program *p)
{
    if (!p) return AMP_OK;
    AMP__HANDLE_OK(p, AMP__HANDLE_PROGRAM);
    /* One destroy at a time: a second that passed the check above would
     * otherwise read the kernel list and lock that the first frees, and
     * close pins the first had reopened already. Given back where this
     * call fails (BUSY, no memory). */
    bool none = false;
    if (!atomic_compare_exchange_strong(&p->destroying, &none, true))
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT,
                         "amp_program_destroy: p (%p) is being destroyed by another thread (a stale handle)",
                         (void *)p);
    /* Close the kernel list (no amp_program_get_kernel adds one now) and
     * the kernels' pins at once, under the list's lock: a graph recording a
     * launch of one of them from here on fails, where one that pinned it
     * first makes this call AMP_ERROR_BUSY. Ordering: p->lock, then the
     * pin table's lock. */
    pthread_mutex_lock(&p->lock);
    size_t busy = 0;
    int graphs = amp__graph_pins_close((const void *const *)p->kernels, p->nkernels, &busy);
    if (graphs > 0) {
        amp_status st = amp__fail(AMP_ERROR_BUSY,
                                  "amp_program_destroy: %d graph(s) launch its kernel '%s' (destroy them first)",
                                  graphs, p->kernels[busy]->name);
        pthread_mutex_unlock(&p->lock);
        atomic_store(&p->destroying, false);
        return st;
    }
    if (graphs < 0) {
        pthread_mutex_unlock(&p->lock);
        atomic_store(&p->destroying, false);
        return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "amp_program_destroy: out of host memory");
    }
    p->ending = true;
    pthread_mutex_unlock(&p->lock);
    amp_status st = amp__handle_end(p, AMP__HANDLE_PROGRAM, __func__, "p");
    if (st != AMP_OK) return st; /* not ours now: a stale pointer reached a new program's shell */
    /* End the kernels' handles, then let launches (and get_kernel calls)
     * that resolved a handle before return (another thread may be inside
     * one): only then is nothing of the program, its kernels or the module
     * in use, and no graph can hold a kernel (its recording ran inside such
     * a launch, and found the pin closed or was counted above). */
    for (size_t i = 0; i < p->nkernels; ++i) amp__kernel_handle_free(p->kernels[i]);
    amp__launches_quiesce();
    amp__graph_pins_reopen((const void *const *)p->kernels, p->nkernels);
    for (size_t i = 0; i < p->nkernels; ++i) amp__kernel_free(p->kernels[i]);
    free(p->kernels);
    amp__module_release(p->m);
    pthread_mutex_destroy(&p->lock);
    amp__handle_free(p, AMP__HANDLE_PROGRAM);
    return AMP_OK;
}
