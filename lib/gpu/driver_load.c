/* driver_load.c — opening a vendor library by the names it goes by (the loader's search, then the vendor's install directories, held to the trusted-file rule), and saying why none opened (each name's dlopen error, where the loader and hipamp searched, a file refused), for the drivers' "no GPU" diagnosis; and saying when the one opened made the process's stacks executable. */
#include "gpu_driver.h"

#include "base/core.h"
#include "base/trusted_file.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* dlerror's text when the loader did not find name itself; anything else
 * (a dependency of it missing, a wrong ELF class, an undefined symbol) is
 * worth its own words in the reason. */
static bool just_absent(const char *name, const char *err)
{
    static const char tail[] = ": cannot open shared object file: No such file or directory";
    size_t len = strlen(name);
    return !strncmp(err, name, len) && !strcmp(err + len, tail);
}

/* A vendor's install directories: list NULL-terminated, into dir. */
#define LIB_DIRS 4
typedef struct {
    char dir[LIB_DIRS][1024];
    const char *list[LIB_DIRS + 1];
} lib_dirs;
static lib_dirs rocm_dirs, cuda_dirs;
static pthread_once_t rocm_once = PTHREAD_ONCE_INIT, cuda_once = PTHREAD_ONCE_INIT;

/* dir (with sub appended) as the next of d's directories; nothing when dir
 * is unset or empty, d is full, or the path would not fit. */
static void add_dir(lib_dirs *d, const char *dir, const char *sub)
{
    size_t k = 0;
    while (d->list[k]) ++k;
    if (!dir || !dir[0] || k >= LIB_DIRS) return;
    int w = snprintf(d->dir[k], sizeof d->dir[k], "%s%s", dir, sub);
    if (w < 0 || (size_t)w >= sizeof d->dir[k]) return;
    d->list[k] = d->dir[k];
    d->list[k + 1] = NULL;
}

/* ROCm's packages put their libraries in /opt/rocm/lib and ask for an
 * ld.so.conf entry a site may have left out; ROCM_PATH and HIP_PATH are
 * HIP's own names for another install (read through amp__env: a set-uid
 * program takes neither). */
static void find_rocm_dirs(void)
{
    add_dir(&rocm_dirs, amp__env("ROCM_PATH"), "/lib");
    add_dir(&rocm_dirs, amp__env("HIP_PATH"), "/lib");
    add_dir(&rocm_dirs, "/opt/rocm", "/lib");
}

/* The CUDA toolkit's runfile and packages install under /usr/local/cuda
 * and leave the loader's path to a profile script; CUDA_HOME and CUDA_PATH
 * name another install. */
static void find_cuda_dirs(void)
{
    add_dir(&cuda_dirs, amp__env("CUDA_HOME"), "/lib64");
    add_dir(&cuda_dirs, amp__env("CUDA_PATH"), "/lib64");
    add_dir(&cuda_dirs, "/usr/local/cuda", "/lib64");
#if defined(__aarch64__)
    add_dir(&cuda_dirs, "/usr/local/cuda", "/targets/sbsa-linux/lib");
#else
    add_dir(&cuda_dirs, "/usr/local/cuda", "/targets/x86_64-linux/lib");
#endif
}

const char *const *amp__gpu_rocm_lib_dirs(void)
{
    pthread_once(&rocm_once, find_rocm_dirs);
    return rocm_dirs.list;
}

const char *const *amp__gpu_cuda_lib_dirs(void)
{
    pthread_once(&cuda_once, find_cuda_dirs);
    return cuda_dirs.list;
}

/* The path the loader took h from, else name. */
static const char *loaded_path(void *h, const char *name)
{
    struct link_map *lm = NULL;
    return dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name[0] ? lm->l_name : name;
}

/* Whether this thread's stack is executable now (its mapping in
 * /proc/self/maps; false where that cannot be read). A library that asks
 * for an executable stack (PT_GNU_STACK RWX, or none on some
 * architectures), or one it needs, makes glibc turn every thread's stack
 * in the process executable as it is loaded, which cannot be undone
 * (Debian 12's ROCm 5.2 libamdhip64 does; glibc 2.41 refuses such a
 * library by default). Compared before and after each load, and said, so
 * that a user who needs no such GPU can keep it out (AMP_GPU_DRIVERS). */
static bool stack_executable(void)
{
    char line[512], perms[8] = "";
    uintptr_t here = (uintptr_t)&line, lo, hi;
    FILE *f = fopen("/proc/self/maps", "re");
    if (!f) return false;
    bool x = false;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %4s", &lo, &hi, perms) == 3 && lo <= here && here < hi) {
            x = perms[2] == 'x';
            break;
        }
    fclose(f);
    return x;
}

void *amp__gpu_dlopen_first(const char *const *names, const char *const *dirs, char *why, size_t n)
{
    char other[384] = "", refused[900] = "";
    void *h = NULL;
    const bool was_x = stack_executable();
    const char *path = NULL;
    for (size_t i = 0; names[i] && !h; ++i) {
        h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (h) { path = loaded_path(h, names[i]); break; }
        const char *err = dlerror();
        /* The first real error wins: a library found but not loadable is
         * the answer the user needs, whichever name found it. */
        if (!other[0] && err && !just_absent(names[i], err)) snprintf(other, sizeof other, "%s", err);
    }
    /* The install directories only where the loader found none of the
     * names: what LD_LIBRARY_PATH and the ld.so cache say comes first, as
     * for every other library of the process. A file there is loaded only
     * where no other local user could have put it there or changed it. */
    for (size_t d = 0; !h && dirs && dirs[d]; ++d) {
        for (size_t i = 0; names[i] && !h; ++i) {
            char file[1100], bad[400];
            struct stat st;
            if (strchr(names[i], '/')) continue;
            int w = snprintf(file, sizeof file, "%s/%s", dirs[d], names[i]);
            if (w < 0 || (size_t)w >= sizeof file || stat(file, &st) != 0) continue;
            if (amp__unsafe_file(file, bad, sizeof bad)) {
                if (!refused[0]) snprintf(refused, sizeof refused, "%.480s is not loaded (%s)", file, bad);
                continue;
            }
            h = dlopen(file, RTLD_NOW | RTLD_LOCAL);
            if (h) { path = loaded_path(h, file); break; }
            const char *err = dlerror();
            if (!other[0] && err) snprintf(other, sizeof other, "%s", err);
        }
    }
    if (h) {
        const char *stack = !was_x && stack_executable()
                                ? " (it asks for an executable stack, or a library it needs does: loading it made "
                                  "every thread's stack in this process executable; AMP_GPU_DRIVERS without this "
                                  "driver keeps it out)"
                                : "";
        if (n && other[0]) snprintf(why, n, "%s%s (an earlier name did not load: %s)", path, stack, other);
        else if (n) snprintf(why, n, "%s%s", path, stack);
        return h;
    }
    if (!n) return NULL;
    size_t used = (size_t)snprintf(why, n, "%s", names[0]);
    for (size_t i = 1; names[i] && used < n; ++i) used += (size_t)snprintf(why + used, n - used, ", %s", names[i]);
    if (used < n && other[0]) {
        used += (size_t)snprintf(why + used, n - used, ": none loaded (dlopen: %s)", other);
    } else if (used < n) {
        const char *ld_path = amp__env("LD_LIBRARY_PATH");
        used += (size_t)snprintf(why + used, n - used,
                                 " not found (searched LD_LIBRARY_PATH=%s, the ld.so cache and /lib, /usr/lib",
                                 ld_path ? ld_path : "(unset)");
        for (size_t d = 0; dirs && dirs[d] && used < n; ++d)
            used += (size_t)snprintf(why + used, n - used, d ? ", %s" : "; then %s", dirs[d]);
        if (used < n) used += (size_t)snprintf(why + used, n - used, ")");
    }
    if (used < n && refused[0]) snprintf(why + used, n - used, "; %s", refused);
    return NULL;
}
