/* cpu_backend.c — the CPU accelerator's backend table: enumeration and settings, module loading (memfd + dlopen) and kernel lookup (loop version or fibers, tile_static measured), unified host memory and copies; the queues, events and graphs are cpu_queue.c's and cpu_graph.c's, launches cpu_launch.c's. */
#include "cpu_internal.h"
#include "base/fork_guard.h"

#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <unistd.h>

#define AMP__CPU_MAX_THREADS 1024
#define AMP__CPU_DEFAULT_STACK (256 * 1024)
/* Asynchronous launches a queue holds before the next one waits: about what
 * a CUDA stream takes before cuLaunchKernel blocks. */
#define AMP__CPU_DEFAULT_QUEUE_DEPTH 1024u
#define AMP__CPU_MAX_QUEUE_DEPTH (1u << 20)

static amp__cpu_device amp__cpu_dev;
static pthread_once_t amp__cpu_once = PTHREAD_ONCE_INIT;

/* ------------------------------------------------------------- settings */

static void amp__cpu_init(void)
{
    amp__cpu_device *d = &amp__cpu_dev;
    /* Invalid settings fall back to the defaults rather than failing:
     * enumeration cannot fail. */
    unsigned online = (unsigned)amp__usable_cpus();
    if (online > AMP__CPU_MAX_THREADS) online = AMP__CPU_MAX_THREADS;
    d->nthreads = (int)amp__env_count("AMP_CPU_THREADS", online, AMP__CPU_MAX_THREADS);
    d->stack_size = (size_t)amp__env_size("AMP_CPU_STACK_SIZE", AMP__CPU_DEFAULT_STACK, 16 * 1024, 1ULL << 30);
    d->queue_depth = amp__env_count("AMP_QUEUE_DEPTH", AMP__CPU_DEFAULT_QUEUE_DEPTH, AMP__CPU_MAX_QUEUE_DEPTH);
    d->graph_alone_points =
        amp__env_count("AMP_CPU_GRAPH_ALONE", AMP__CPU_GRAPH_ALONE_POINTS, AMP__CPU_GRAPH_ALONE_MAX);
    /* Spinning pays where the pool's threads have cores of their own; a
     * spinner that shares its core delays the thread it shares it with
     * (cpu_pool.c). */
    unsigned spin = d->nthreads >= AMP__CPU_SPIN_MIN_THREADS && (unsigned)d->nthreads <= online
                        ? AMP__CPU_SPIN_US_DEFAULT : 0;
    d->spin_us = amp__env_uint("AMP_CPU_SPIN_US", spin, 0, AMP__CPU_SPIN_US_MAX);
    d->learn_widths = amp__env_flag("AMP_CPU_LEARN_WIDTHS", true);
    d->graph_team = amp__env_flag("AMP_CPU_GRAPH_TEAM", true);
    d->restrict_views = amp__env_flag("AMP_CPU_RESTRICT", true);
    d->stream_stores = amp__env_flag("AMP_CPU_STREAM_STORES", true);
    d->stream_min = amp__env_size("AMP_CPU_STREAM_MIN", UINT64_MAX, 0, UINT64_MAX - 1);
#ifdef HIPAMP_DEBUG_CHECKS_DEFAULT
    d->debug = true;
#endif
    d->debug = amp__env_flag("AMP_DEBUG", d->debug);
    /* In the order of the enum's values. */
    static const char *const tiled[] = {"auto", "fibers", "loops"};
    d->tiled = amp__env_word("AMP_CPU_TILED", tiled, 3, AMP__CPU_TILED_AUTO);
    struct utsname u;
    snprintf(d->machine, sizeof d->machine, "%.63s", uname(&u) == 0 ? u.machine : "unknown");
    amp__cpu_find_compiler(d);
}

/* -------------------------------------------------------------- modules */

typedef struct amp__cpu_module {
    void *handle;
    int fd; /* kept open while loaded: its /proc/self/fd name stays unique */
    amp__lock lock;            /* guards kernels (an amp__lock: see amp__cpu_kernel_keep) */
    amp__cpu_kernel *kernels;  /* what kernel_get handed out, freed at unload */
    amp__cpu_tls tls;          /* its thread-local (tile_static) symbols */
    amp__cpu_inflight inflight; /* its launches queued on a queue's thread */
} amp__cpu_module;

static const char *amp__cpu_cache_tag(void *dev)
{
    return ((amp__cpu_device *)dev)->cache_tag;
}

/* g++ reads CPATH like -I and CPLUS_INCLUDE_PATH like -isystem. */
static const amp__include_env amp__cpu_include_env[] = {{"CPATH", false}, {"CPLUS_INCLUDE_PATH", true}, {NULL, false}};

/* None where CPATH or CPLUS_INCLUDE_PATH could put other headers in front
 * of the ones the prelude's code was compiled with. */
static const char *amp__cpu_prebuilt_target(void *dev)
{
    amp__cpu_device *d = dev;
    for (size_t i = 0; amp__cpu_include_env[i].name; ++i)
        if (amp__env(amp__cpu_include_env[i].name)) return NULL;
    return d->prebuilt[0] ? d->prebuilt : NULL;
}

static amp_status amp__cpu_compile_op(void *dev, const amp__compile_job *job, amp__compile_output *out)
{
    memset(out, 0, sizeof *out);
    return amp__cpu_compile(dev, job, out);
}

/* dlopen the bytes through an anonymous memory file, else (no memfd, or a
 * policy against executing one) through a temporary file in the checked
 * TMPDIR (amp__cpu_tmp_dir), made there exclusively and loaded through its
 * still open descriptor (/proc/self/fd), never by its name, which someone
 * could give another file between the write and the load. glibc matches
 * already-loaded objects by name, so a name must stay unique while its
 * module is loaded: either descriptor stays open until unload. */
/* dlopen's error err for a module that names a symbol nothing defines (a
 * function the source declares and never defines: a shared object links
 * with it undefined) as the compile error it is, as a GPU's compile
 * reports it; AMP_OK for any other error. */
static amp_status amp__cpu_undefined_symbol(const char *err)
{
    const char *key = "undefined symbol: ";
    const char *name = strstr(err, key);
    if (!name) return AMP_OK;
    name += strlen(key);
    int len = (int)strcspn(name, " ,;()");
    return amp__fail(AMP_ERROR_COMPILE, "CPU accelerator: the kernel source uses '%.*s'%s, which it declares but "
                     "nothing defines (a function or variable without a definition in the source, its headers or "
                     "the libraries linked)", len > 200 ? 200 : len, name,
                     !strncmp(name, "_Z", 2) ? " (a C++ name, mangled)" : "");
}

/* glibc does not release its loader's lock (dl_load_write_lock) in a child
 * forked while another thread was inside dlopen or dlclose: the child's
 * next module load waited for ever (hipamp.h: a forked child's calls work
 * or fail, never hang; 15 children of 60 in a probe forking beside a
 * thread that built and dropped programs). Module loads and unloads hold
 * this mutex, which fork() takes (base/fork_guard.h), so a fork waits for
 * one under way. A leaf: what runs inside, a module's constructors and
 * destructors (the user's static objects; libstdc++'s at its first load),
 * takes none of the library's locks, waits for no other thread and never
 * forks. */
AMP__FORK_GUARDED_MUTEX(amp__cpu_loader_lock)

static void *amp__cpu_dlopen(const char *path, int flags)
{
    pthread_mutex_lock(&amp__cpu_loader_lock);
    void *h = dlopen(path, flags);
    pthread_mutex_unlock(&amp__cpu_loader_lock);
    return h;
}

static void amp__cpu_dlclose(void *h)
{
    pthread_mutex_lock(&amp__cpu_loader_lock);
    dlclose(h);
    pthread_mutex_unlock(&amp__cpu_loader_lock);
}

static amp_status amp__cpu_module_load(void *dev, const void *bin, size_t bin_size, void **module)
{
    amp_status st = AMP_OK;
    char path[4200];
    char err[512] = "";
    amp__cpu_module *m = calloc(1, sizeof *m);
    *module = NULL;
    if (!m) return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "CPU accelerator: no memory for a module");
    m->fd = -1;
    amp__lock_init(&m->lock);
    pthread_mutex_init(&m->inflight.mu, NULL);
    pthread_cond_init(&m->inflight.cv, NULL);
    if (!bin || bin_size == 0) {
        st = amp__fail(AMP_ERROR_INVALID_ARGUMENT, "CPU accelerator: empty module binary");
        goto fail;
    }
    /* A module built with -fsanitize=address or thread (a cache entry of a
     * process that had the runtime: cpu_compile.c refuses the option
     * otherwise): its runtime, loaded by dlopen after the program started,
     * ends the process. */
    for (int i = 0; i < AMP__CPU_NSANITIZERS; ++i) {
        const amp__cpu_sanitizer *san = &amp__cpu_sanitizers[i];
        char lib[128];
        if (amp__cpu_elf_needs(bin, bin_size, san->lib, lib, sizeof lib) && !dlsym(RTLD_DEFAULT, san->init)) {
            st = amp__fail(AMP_ERROR_UNSUPPORTED, "CPU accelerator: the module needs %s (built with -fsanitize=%s), "
                           "whose runtime is not in this process: loading it would end the process", lib,
                           san->option);
            goto fail;
        }
    }
    m->fd = memfd_create("hipamp-cpu-module", MFD_CLOEXEC);
    if (m->fd >= 0) {
        snprintf(path, sizeof path, "/proc/self/fd/%d", m->fd);
        if (amp__fd_write_all(m->fd, bin, bin_size)) m->handle = amp__cpu_dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!m->handle) {
            const char *e = dlerror();
            snprintf(err, sizeof err, "%s", e ? e : "cannot write the module");
            close(m->fd);
            m->fd = -1;
            /* the same module fails the same way from a file */
            if ((st = amp__cpu_undefined_symbol(err)) != AMP_OK) goto fail;
        }
    }
    if (!m->handle) {
        char root[PATH_MAX], file[PATH_MAX + 64];
        if ((st = amp__cpu_tmp_dir(AMP_ERROR_DEVICE, root)) != AMP_OK) goto fail;
        /* named like cpu_compile.c's directories: swept if this process dies
         * before the unlink below */
        if (snprintf(file, sizeof file, "%s/hipamp-cpu-%ld-XXXXXX.so", root, (long)getpid()) >= (int)sizeof file) {
            st = amp__fail(AMP_ERROR_DEVICE, "CPU accelerator: cannot load a module: %s%sthe temporary directory %s "
                           "(TMPDIR) is too long a path", err, err[0] ? "; " : "", root);
            goto fail;
        }
        /* O_EXCL: a new file, never one already there or a link's target */
        m->fd = mkostemps(file, 3, O_CLOEXEC | O_NOFOLLOW);
        if (m->fd < 0) {
            st = amp__fail(AMP_ERROR_DEVICE, "CPU accelerator: cannot load a module: %s%scannot create %s: %s", err,
                           err[0] ? "; " : "", file, strerror(errno));
            goto fail;
        }
        bool ok = amp__fd_write_all(m->fd, bin, bin_size);
        snprintf(path, sizeof path, "/proc/self/fd/%d", m->fd);
        bool proc = access(path, F_OK) == 0;
        if (ok && proc) m->handle = amp__cpu_dlopen(path, RTLD_NOW | RTLD_LOCAL);
        const char *e = ok && proc && !m->handle ? dlerror() : NULL;
        snprintf(path, sizeof path, "%s", e ? e : "");
        unlink(file);
        if (!m->handle && (st = amp__cpu_undefined_symbol(path)) != AMP_OK) goto fail;
        if (!m->handle) {
            /* The memfd's failure again: said once. Each begins with the
             * descriptor's path ("/proc/self/fd/N: "), whose N may differ. */
            const char *a = strstr(err, ": "), *c = strstr(path, ": ");
            bool same = ok && proc && a && c && !strcmp(a, c);
            st = amp__fail(AMP_ERROR_DEVICE, "CPU accelerator: cannot load a module: %s%s%s", err,
                           err[0] && !same ? "; " : "",
                           same  ? ""
                           : !ok ? "cannot write a temporary file"
                           : !proc ? "no /proc/self/fd to load a temporary file through its descriptor (it is not "
                                     "loaded by its name, which another file could be given)"
                                   : path);
            goto fail;
        }
    }
    if ((st = amp__cpu_elf_tls(bin, bin_size, &m->tls)) != AMP_OK) goto fail;
    int (*abi)(void) = (int (*)(void))dlsym(m->handle, "amp__cpu_abi");
    if (!abi || abi() != AMP__CPU_ABI) {
        st = amp__fail(AMP_ERROR_DEVICE, "CPU accelerator: module built for CPU ABI %d, this library "
                       "speaks %d (stale cache entry?)", abi ? abi() : 0, AMP__CPU_ABI);
        goto fail;
    }
    *module = m;
    return AMP_OK;
fail:
    if (m->handle) amp__cpu_dlclose(m->handle);
    if (m->fd >= 0) close(m->fd);
    amp__cpu_elf_tls_free(&m->tls);
    pthread_mutex_destroy(&m->inflight.mu);
    pthread_cond_destroy(&m->inflight.cv);
    free(m);
    return st;
}

static void amp__cpu_module_unload(void *dev, void *module)
{
    amp__cpu_module *m = module;
    if (!m) return;
    /* Its launches still queued on a queue's thread run first (backend.h). */
    pthread_mutex_lock(&m->inflight.mu);
    while (m->inflight.n > 0) pthread_cond_wait(&m->inflight.cv, &m->inflight.mu);
    pthread_mutex_unlock(&m->inflight.mu);
    amp__cpu_dlclose(m->handle);
    if (m->fd >= 0) {
        /* A module dlclose cannot unload (a thread_local with a destructor
         * pins it) stays known to glibc under its /proc/self/fd name: were the
         * descriptor reused, the next module loaded through the same name
         * would silently be this one. Keep such a name reserved. */
        char path[64];
        snprintf(path, sizeof path, "/proc/self/fd/%d", m->fd);
        void *still = amp__cpu_dlopen(path, RTLD_NOW | RTLD_NOLOAD);
        if (still) amp__cpu_dlclose(still);
        else close(m->fd);
    }
    while (m->kernels) {
        amp__cpu_kernel *k = m->kernels;
        m->kernels = k->next;
        amp__cpu_widths_free(k->widths);
        free(k);
    }
    amp__cpu_elf_tls_free(&m->tls);
    pthread_mutex_destroy(&m->inflight.mu);
    pthread_cond_destroy(&m->inflight.cv);
    free(m);
}

/* What AMP_CPU_VERBOSE adds about a loop version in handle: its loops that
 * run in lockstep across the tile's work-items (lib/cpu/loops/
 * interchange.c; those with emit.c's vector fast path), its regions whose
 * work-item loops run interchanged (lib/cpu/loops/order.c) and its
 * tile_static arrays stored transposed (layout.c), as " (...; ...)", or ""
 * when none (its tiles' order, tiles.c, is in the kernel's execution). */
static void amp__cpu_verbose_loops(void *handle, const char *name, char *buf, size_t size)
{
    static const char *const suffix[4] = {"__amp_lockstep", "__amp_swapped", "__amp_lockstep_fast",
                                          "__amp_transposed"};
    int n[4];
    for (int i = 0; i < 4; ++i) {
        char sym[512];
        snprintf(sym, sizeof sym, "%s%s", name, suffix[i]);
        const int *v = dlsym(handle, sym);
        n[i] = v && *v > 0 ? *v : 0;
    }
    char part[3][96], fast[48] = "";
    int np = 0;
    if (n[2]) snprintf(fast, sizeof fast, ", %d with a vector fast path", n[2]);
    if (n[0])
        snprintf(part[np++], sizeof part[0], "%d grid-stride loop%s in lockstep%s", n[0], n[0] == 1 ? "" : "s", fast);
    if (n[1])
        snprintf(part[np++], sizeof part[0], "work-item loops interchanged in %d region%s", n[1], n[1] == 1 ? "" : "s");
    if (n[3])
        snprintf(part[np++], sizeof part[0], "%d tile_static array%s stored transposed", n[3], n[3] == 1 ? "" : "s");
    buf[0] = '\0';
    size_t at = 0;
    for (int i = 0; i < np && at < size; ++i) {
        int w = snprintf(buf + at, size - at, "%s%s%s", i ? "; " : " (", part[i], i == np - 1 ? ")" : "");
        at = w < 0 ? size : at + (size_t)w;
    }
}

/* k kept in m's list, or the record of its name m has already (k freed):
 * one record a name a module. The module outlives its programs in the
 * memory cache, and every program built on it fetches its kernels again
 * (20,000 builds and fetches of one kernel kept 32 MB before); the one made
 * first stays, with the widths its launches learned. */
static amp__cpu_kernel *amp__cpu_kernel_keep(amp__cpu_module *m, amp__cpu_kernel *k)
{
    /* Taken over in a forked child where a thread of the parent held it
     * (it waited for ever before): the list is whole at every store, a
     * record joining it by one store after its next is set. */
    amp__lock_acquire_taking_over(&m->lock);
    amp__cpu_kernel *had = m->kernels;
    while (had && strcmp(had->name, k->name)) had = had->next;
    if (!had) {
        k->next = m->kernels;
        __atomic_store_n(&m->kernels, k, __ATOMIC_RELEASE); /* after k->next, for a forked child */
    }
    amp__lock_release(&m->lock);
    if (!had) return k;
    amp__cpu_widths_free(k->widths);
    free(k);
    return had;
}

/* The memory past which a launch's data counts as out of the caches
 * (streaming stores, grouped tiles): AMP_CPU_STREAM_MIN, by default the
 * last-level cache the system reports, but at least
 * AMP__CPU_STREAM_MIN_FLOOR: a virtual machine may report far less than
 * its cores have (wrongly judged, a launch streams data that could have
 * stayed in the caches, at half the speed or less; rightly, it gains a
 * quarter). */
static uint64_t amp__cpu_caches_bytes(const amp__cpu_device *d)
{
    if (d->stream_min != UINT64_MAX) return d->stream_min;
    uint64_t llc = amp__llc_bytes();
    return llc > AMP__CPU_STREAM_MIN_FLOOR ? llc : AMP__CPU_STREAM_MIN_FLOOR;
}

/* "%.0f MiB" of bytes, or "%llu bytes" under a MiB, into buf. */
static void amp__cpu_say_bytes(uint64_t bytes, char *buf, size_t cap)
{
    if (bytes >= (1ull << 20)) snprintf(buf, cap, "%.0f MiB", (double)bytes / (1 << 20));
    else snprintf(buf, cap, "%llu bytes", (unsigned long long)bytes);
}

/* out's tile_static_bytes and its note for kernel name of m: a loop version
 * (loops) declares its own (the compiler measured it into
 * NAME__amp_tile_static); a fiber kernel's are thread-locals; others gets
 * the thread-locals counted that its body does not declare. */
static void amp__cpu_kernel_tile_static(amp__cpu_module *m, const char *name, bool loops, amp__kernel_props *out,
                                        char *others, size_t cap)
{
    size_t own = 0;
    if (loops) {
        char sym[512];
        snprintf(sym, sizeof sym, "%s__amp_tile_static", name);
        const unsigned long long *ts = dlsym(m->handle, sym);
        if (ts) own = (size_t)*ts;
    }
    bool traced = false;
    out->tile_static_bytes = amp__cpu_tile_static_bytes(&m->tls, name, own, others, cap, &traced);
    if (others[0])
        snprintf(out->tile_static_note, sizeof out->tile_static_note,
                 " (that counts thread-locals %s: %.200s; a tile_static declared in the body of the kernel that "
                 "uses it counts for that kernel alone)",
                 traced ? "its body does not declare, which the functions it calls reach"
                        : "no kernel's body declares, which any kernel of the program may reach, since the "
                          "module's calls could not be followed",
                 others);
}

static amp_status amp__cpu_kernel_get(void *dev, void *module, const char *name, amp__kernel_props *out)
{
    amp__cpu_module *m = module;
    char symbol[512], entry[512];
    memset(out, 0, sizeof *out);
    if (!m || !name) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "CPU accelerator: kernel_get without %s",
                                      m ? "a name" : "a module");
    if (snprintf(symbol, sizeof symbol, "%s%s", name, AMP__SIG_SUFFIX) >= (int)sizeof symbol ||
        snprintf(entry, sizeof entry, "%s%s", name, AMP__CPU_ENTRY_SUFFIX) >= (int)sizeof entry)
        return amp__fail(AMP_ERROR_KERNEL_NOT_FOUND, "kernel name '%.64s...' is too long", name);
    /* Both must come from this module (dlsym also searches its
     * dependencies). */
    void *f = dlsym(m->handle, entry);
    const amp__signature *s = dlsym(m->handle, symbol);
    if (!f || !s)
        return amp__fail(AMP_ERROR_KERNEL_NOT_FOUND,
                         "kernel '%s' not found in the program (no AMP_KERNEL or AMP_TILED_KERNEL "
                         "of that name)", name);
    /* The record is copied whole, so it must be that big: a module of another
     * prelude version has a smaller one (the core validates the contents). */
    Dl_info info;
    const ElfW(Sym) *sym = NULL;
    if (!dladdr1(s, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym || sym->st_size != sizeof *s)
        return amp__fail(AMP_ERROR_KERNEL_NOT_FOUND,
                         "'%s' is not an AMP_KERNEL of this library version (%s is %zu bytes, want %zu)", name,
                         symbol, sym ? (size_t)sym->st_size : (size_t)0, sizeof *s);
    memcpy(&out->sig, s, sizeof *s);
    amp__cpu_device *d = dev;
    amp__cpu_kernel *k = calloc(1, sizeof *k + strlen(name) + 1);
    if (!k) return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "CPU accelerator: no memory for kernel '%s'", name);
    memcpy(&k->sig, s, sizeof *s);
    strcpy(k->name, name);
    k->entry = (amp__cpu_entry_fn)f;
    k->inflight = &m->inflight;
    k->restrict_views = d->restrict_views;
    if (!(k->widths = amp__cpu_widths_new())) {
        free(k);
        return AMP_ERROR_OUT_OF_MEMORY;
    }
    if (!s->tiled) {
        /* The block a launch may state: the kernel's own bound
         * (AMP_KERNEL_MAX_BLOCK), as a GPU build of it would take, so a
         * block size refused there is refused here too. */
        char sym[512];
        snprintf(sym, sizeof sym, "%s__amp_max_block", name);
        const int *mb = dlsym(m->handle, sym);
        out->max_block = mb && *mb > 0 ? *mb : AMP__SIMPLE_BLOCK_THREADS;
        snprintf(sym, sizeof sym, "%s__amp_streams", name);
        const unsigned *streams = dlsym(m->handle, sym);
        /* Only the bits of parameters that are writable views or arrays
         * (the prelude checked as much when it compiled the kernel). */
        unsigned mask = streams ? *streams : 0;
        for (int i = 0; i < 32; ++i) {
            if (!(mask >> i & 1u)) continue;
            const amp__sig_param *sp = i < s->nparams ? &s->params[i] : NULL;
            if (!sp || (sp->kind != AMP_ARG_VIEW && sp->kind != AMP_ARG_ARRAY) || sp->is_const ||
                sp->rank != s->rank)
                mask &= ~(1u << i);
        }
        k->streams = d->stream_stores ? mask : 0;
        k->stream_min = amp__cpu_caches_bytes(d);
        /* "cpu loops, streaming stores to parameter 0, 2 where recent launches' views cover 256 MiB or more" */
        size_t cap = sizeof out->execution, at = (size_t)snprintf(out->execution, cap, "cpu loops");
        for (int i = 0, first = 1; i < 32 && mask && at < cap; ++i) {
            if (!(mask >> i & 1u)) continue;
            at += (size_t)snprintf(out->execution + at, cap - at, "%s%d",
                                   !first                 ? ", "
                                   : d->stream_stores     ? ", streaming stores to parameter "
                                                          : ", streaming stores off (AMP_CPU_STREAM_STORES) for parameter ",
                                   i);
            first = 0;
        }
        if (k->streams && at < cap) {
            char b[48];
            amp__cpu_say_bytes(k->stream_min, b, sizeof b);
            snprintf(out->execution + at, cap - at, " where recent launches' views cover %s or more", b);
        }
    } else {
        /* The loop version and its path note come from the module itself, so
         * a module loaded from the disk cache reports what it was built
         * with. */
        char sym[512];
        snprintf(sym, sizeof sym, "%s__amp_tiles", name);
        amp__cpu_entry_fn tiles = (amp__cpu_entry_fn)dlsym(m->handle, sym);
        snprintf(sym, sizeof sym, "%s__amp_cpu_path", name);
        const char *path = dlsym(m->handle, sym);
        if (!path) path = dlsym(m->handle, "amp__cpu_loops_note");
        char why[160];
        snprintf(why, sizeof why, "%.150s", path ? path : "fibers: the module has no loop version");
        /* A kernel with a loop version has no fiber version in its module
         * (AMP_CPU_TILED=fibers builds modules without loop versions). */
        if (tiles && !strcmp(why, "loops")) {
            k->tiles = tiles;
            snprintf(out->execution, sizeof out->execution, "cpu loops");
            /* Its tiles' order (lib/cpu/loops/tiles.c): groups of tile rows
             * where a launch's views reach the caches' size. A value out
             * of the transformation's range is not its: the launch's order. */
            snprintf(sym, sizeof sym, "%s__amp_tile_group", name);
            const int *group = dlsym(m->handle, sym);
            k->tile_group = group && *group > 1 && *group <= AMP__CPU_MAX_TILE_GROUP ? *group : 1;
            if (k->tile_group > 1) {
                k->stream_min = amp__cpu_caches_bytes(d);
                char b[48];
                amp__cpu_say_bytes(k->stream_min, b, sizeof b);
                snprintf(out->execution, sizeof out->execution,
                         "cpu loops, tiles in groups of %d tile rows where the launch's views cover %s or more",
                         k->tile_group, b);
            }
        } else {
            if (strncmp(why, "fibers", 6)) snprintf(why, sizeof why, "fibers: the loop version is missing");
            snprintf(out->execution, sizeof out->execution, "cpu %s", why);
            if (d->tiled == AMP__CPU_TILED_LOOPS) {
                amp__cpu_widths_free(k->widths);
                free(k);
                return amp__fail(AMP_ERROR_UNSUPPORTED,
                                 "kernel '%s' has no loop version and AMP_CPU_TILED=loops requires one: %s", name,
                                 why);
            }
        }
    }
    char others[512];
    amp__cpu_kernel_tile_static(m, name, k->tiles != NULL, out, others, sizeof others);
    if (amp__env_flag("AMP_CPU_VERBOSE", false)) {
        char loops[320] = "";
        if (k->tiles) amp__cpu_verbose_loops(m->handle, name, loops, sizeof loops);
        fprintf(stderr, "hipamp: CPU kernel '%s' runs as %s%s; tile_static %zu bytes%s%s%s\n", name, out->execution + 4,
                loops, out->tile_static_bytes, others[0] ? " (with thread_locals it may reach: " : "", others,
                others[0] ? ")" : "");
    }
    out->fn = amp__cpu_kernel_keep(m, k);
    return AMP_OK;
}

/* ------------------------------------------------------ queues, events
 * cpu_queue.c. */

static void *amp__cpu_queue_native(void *dev, void *queue) { return NULL; }

/* --------------------------------------------------------------- memory */

static amp_status amp__cpu_mem_alloc(void *dev, size_t bytes, void **dptr)
{
    /* 64-byte alignment: cache lines, and any vector width. */
    size_t n = bytes ? (bytes + 63) / 64 * 64 : 64;
    void *p = n >= bytes ? aligned_alloc(64, n) : NULL;
    *dptr = p;
    if (!p) return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "CPU accelerator: cannot allocate %zu bytes", bytes);
    return AMP_OK;
}

static void amp__cpu_mem_free(void *dev, void *dptr) { free(dptr); }

static amp_status amp__cpu_host_register(void *dev, void *host, size_t bytes, void **dptr)
{
    *dptr = host;
    return AMP_OK;
}

static void amp__cpu_host_unregister(void *dev, void *host) {}

static amp_status amp__cpu_copy(void *dev, void *queue, const amp__copy *c)
{
    amp__cpu_graph *g = amp__cpu_queue_recording(queue);
    if (g) return amp__cpu_graph_add_copy(g, c);
    if (!c || (!c->dst && c->width_bytes) || (!c->src && c->width_bytes))
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "CPU accelerator: copy with a NULL pointer");
    /* In order: after the launches queued on it (done here, in this thread). */
    amp__cpu_queue_drain(queue);
    amp__cpu_copy_bytes(c);
    return AMP_OK;
}


static const amp__sys_dir *amp__cpu_system_dirs_op(void *dev) { return amp__cpu_system_dirs(dev); }

static const amp__backend amp__cpu_backend = {
    .name = "cpu",
    .prelude_prefix = amp__embedded_cpu_prelude,
    .include_env = amp__cpu_include_env,
    .named_headers = false,
    .system_include_dirs = amp__cpu_system_dirs_op,
    .cache_tag = amp__cpu_cache_tag,
    .prebuilt_target = amp__cpu_prebuilt_target,
    .compile = amp__cpu_compile_op,
    .module_load = amp__cpu_module_load,
    .module_unload = amp__cpu_module_unload,
    .kernel_get = amp__cpu_kernel_get,
    .queue_create = amp__cpu_queue_create,
    .queue_wrap = NULL, /* no native queues: amp_accelerator_view_create_from_native refuses */
    .queue_native = amp__cpu_queue_native,
    .queue_destroy = amp__cpu_queue_destroy,
    .queue_wait = amp__cpu_queue_wait,
    .queue_wait_for = amp__cpu_queue_wait_for,
    .queue_wait_event = amp__cpu_queue_wait_event,
    .event_record = amp__cpu_event_record,
    .event_record_timed = amp__cpu_event_record_timed,
    .event_elapsed = amp__cpu_event_elapsed,
    .event_wait = amp__cpu_event_wait,
    .event_wait_for = amp__cpu_event_wait_for,
    .event_query = amp__cpu_event_query,
    .event_release = amp__cpu_event_release,
    .mem_alloc = amp__cpu_mem_alloc,
    .mem_free = amp__cpu_mem_free,
    .host_register = amp__cpu_host_register,
    .host_unregister = amp__cpu_host_unregister,
    .copy = amp__cpu_copy,
    .copy_peer = NULL, /* one CPU accelerator: nothing to copy to */
    .launch = amp__cpu_queue_launch,
    .graph_begin = amp__cpu_graph_begin,
    .graph_end = amp__cpu_graph_end,
    .graph_launch = amp__cpu_graph_launch,
    .graph_destroy = amp__cpu_graph_destroy,
};

void amp__cpu_enumerate(amp__device_entry *out)
{
    pthread_once(&amp__cpu_once, amp__cpu_init);
    amp__cpu_device *d = &amp__cpu_dev;
    memset(out, 0, sizeof *out);
    out->be = &amp__cpu_backend;
    out->dev = d;
    out->version = (unsigned)HIPAMP_VERSION_MAJOR << 16 | (unsigned)HIPAMP_VERSION_MINOR;
    out->is_debug = d->debug; /* AMP_DEBUG: every view access checked */
    amp_accelerator_info *i = &out->info;
    snprintf(i->description, sizeof i->description, "CPU (%d thread%s%s)", d->nthreads,
             d->nthreads == 1 ? "" : "s", d->debug ? ", debug checks" : "");
    snprintf(i->device_path, sizeof i->device_path, "cpu");
    snprintf(i->arch, sizeof i->arch, "%s", d->machine);
    i->dedicated_memory = 0;
    i->compute_units = d->nthreads;
    i->max_tile_threads = AMP_MAX_TILE_THREADS;
    /* tile_static is thread-local storage (or a loop version's stack) here,
     * with no limit of its own; report the one every GPU meets, NVIDIA's 48
     * KiB of static shared memory per block (AMD's is 64 KiB), so that a
     * kernel that fits in CI fits on every GPU. */
    i->max_tile_static_bytes = 48 * 1024;
    i->is_emulated = true;
    /* AMP_CPU_UNIFIED=0 keeps views in memory of their own, copied in and
     * back as on a discrete GPU: the coherence paths can then be tested
     * on any machine. */
    /* AMP_UNIFIED_MEMORY=on forces zero-copy here too; its off is a
     * GPU's (AMP_CPU_UNIFIED=0 is the CPU accelerator's). */
    bool forced = amp__env_flag_or_auto("AMP_UNIFIED_MEMORY") == 1; /* read (a bad value said) either way */
    i->is_unified_memory = amp__env_flag("AMP_CPU_UNIFIED", true) || forced;
    snprintf(i->unified_memory_reason, sizeof i->unified_memory_reason, "%s",
             i->is_unified_memory ? "zero-copy: kernels run on the host and read its memory directly"
                                  : "copies: AMP_CPU_UNIFIED=0 gives views memory of their own, as on a discrete GPU "
                                    "(for testing)");
    i->supports_double_precision = true;
    i->is_available = d->available;
    snprintf(i->unavailable_reason, sizeof i->unavailable_reason, "%.255s", d->available ? "" : d->reason);
}
