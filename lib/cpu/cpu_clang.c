/* cpu_clang.c — finds libclang (without loading it, for the cache tag) and loads it once per process through dlopen, resolving the functions cpu_clang.h lists. */
#include "cpu_clang.h"
#include "base/trusted_file.h"

#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Newest first: a machine with several LLVMs gets the one that knows the
 * most C++. Debian/Ubuntu install each version under /usr/lib/llvm-N. */
#define AMP__CLANG_NEWEST 22
#define AMP__CLANG_OLDEST 11

static bool amp__clang_is_file(const char *p, struct stat *sb)
{
    return stat(p, sb) == 0 && S_ISREG(sb->st_mode);
}

bool amp__clang_locate(char *path, size_t path_cap, char *tag, size_t tag_cap)
{
    char cand[PATH_MAX];
    struct stat sb;
    const char *env = amp__env("AMP_LIBCLANG");
    bool found = false;
    if (env && (!strcmp(env, "none") || !strcmp(env, "0") || !strcmp(env, "off"))) {
        snprintf(path, path_cap, "none");
        snprintf(tag, tag_cap, "none: AMP_LIBCLANG=%s", env);
        return false;
    }
    if (env) {
        if (amp__clang_is_file(env, &sb)) {
            snprintf(cand, sizeof cand, "%s", env);
            found = true;
        } else {
            snprintf(path, path_cap, "none");
            snprintf(tag, tag_cap, "none: AMP_LIBCLANG=%.200s is not a file", env);
            return false;
        }
    }
    static const char *const pats[] = {
        "/usr/lib/llvm-%d/lib/libclang.so.1", "/usr/lib/llvm-%d/lib/libclang-%d.so.1",
        "/usr/lib/llvm-%d/lib/libclang.so",   "/usr/lib64/llvm%d/lib64/libclang.so.%d",
    };
    for (int v = AMP__CLANG_NEWEST; !found && v >= AMP__CLANG_OLDEST; --v)
        for (size_t i = 0; !found && i < sizeof pats / sizeof pats[0]; ++i) {
            snprintf(cand, sizeof cand, pats[i], v, v);
            found = amp__clang_is_file(cand, &sb);
        }
    static const char *const plain[] = {"/usr/lib64/libclang.so", "/usr/lib/libclang.so",
                                        "/usr/local/lib/libclang.so", "/usr/lib/x86_64-linux-gnu/libclang.so.1",
                                        "/usr/lib/aarch64-linux-gnu/libclang.so.1"};
    for (size_t i = 0; !found && i < sizeof plain / sizeof plain[0]; ++i) {
        snprintf(cand, sizeof cand, "%s", plain[i]);
        found = amp__clang_is_file(cand, &sb);
    }
    if (!found) {
        snprintf(path, path_cap, "none");
        snprintf(tag, tag_cap, "none: no libclang found (install libclang1-NN or set AMP_LIBCLANG)");
        return false;
    }
    /* Loaded into this process (and its children): another user's file, or
     * one on a way another user could change, is never used. */
    char abs[PATH_MAX * 2], why[512];
    if (cand[0] == '/') {
        snprintf(abs, sizeof abs, "%s", cand);
    } else {
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof cwd)) cwd[0] = '\0';
        snprintf(abs, sizeof abs, "%s/%s", cwd, cand);
    }
    if (amp__unsafe_file(abs, why, sizeof why)) {
        snprintf(path, path_cap, "none");
        snprintf(tag, tag_cap, "none: libclang %.200s not used: %.400s", abs, why);
        return false;
    }
    /* The file checked is the file loaded: a name without a slash given to
     * dlopen would be searched for on LD_LIBRARY_PATH instead. */
    char real[PATH_MAX * 2];
    if (!realpath(abs, real)) snprintf(real, sizeof real, "%s", abs);
    if (strlen(abs) >= path_cap) {
        snprintf(path, path_cap, "none");
        snprintf(tag, tag_cap, "none: libclang %.200s not used: its path is too long", abs);
        return false;
    }
    snprintf(path, path_cap, "%s", abs);
    snprintf(tag, tag_cap, "%s:%lld:%lld", real, (long long)sb.st_size, (long long)sb.st_mtime);
    return true;
}

/* libclang looks for its builtin headers (stddef.h, ...) next to the file it
 * was loaded from; a distribution's symlink farm can hide them from it.
 * Find <prefix>/lib/clang/<version>/include beside the library's real
 * directory or its llvm-N twin. */
static void amp__clang_find_resources(const char *lib, char *out, size_t cap)
{
    char real[PATH_MAX], dir[PATH_MAX + 32];
    out[0] = 0;
    const char *bases[2] = {lib, NULL};
    if (realpath(lib, real)) bases[1] = real;
    for (int b = 0; b < 2 && !out[0]; ++b) {
        if (!bases[b]) continue;
        const char *slash = strrchr(bases[b], '/');
        if (!slash) continue;
        snprintf(dir, sizeof dir, "%.*s/clang", (int)(slash - bases[b]), bases[b]);
        DIR *d = opendir(dir);
        if (!d) continue;
        struct dirent *e;
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.') continue;
            char inc[PATH_MAX * 2];
            struct stat sb;
            snprintf(inc, sizeof inc, "%s/%s/include/stddef.h", dir, e->d_name);
            if (stat(inc, &sb) == 0) {
                snprintf(out, cap, "%.900s/%.100s", dir, e->d_name);
                break;
            }
        }
        closedir(d);
    }
}

static amp__clang amp__clang_table;
static const char *amp__clang_why;
static pthread_once_t amp__clang_once = PTHREAD_ONCE_INIT;

static void amp__clang_load(void)
{
    amp__clang *cx = &amp__clang_table;
    char tag[1200];
    if (!amp__clang_locate(cx->path, sizeof cx->path, tag, sizeof tag)) {
        static char unsafe[1200];
        if (strstr(tag, " not used: ")) {
            snprintf(unsafe, sizeof unsafe, "%s", tag + 6); /* "libclang ... not used: why" */
            amp__clang_why = unsafe;
        } else {
            amp__clang_why = strstr(tag, "AMP_LIBCLANG") ? "AMP_LIBCLANG disables it"
                                                         : "no libclang found (install libclang1-NN or set AMP_LIBCLANG)";
        }
        return;
    }
    /* RTLD_LOCAL: its LLVM stays out of the global namespace, where another
     * LLVM (a GPU runtime's) may live. */
    cx->handle = dlopen(cx->path, RTLD_NOW | RTLD_LOCAL);
    if (!cx->handle) {
        amp__clang_why = "libclang could not be loaded (dlopen failed)";
        return;
    }
#define AMP__CLANG_SYM(ret, name, args)                                     \
    if (!(*(void **)&cx->name = dlsym(cx->handle, #name))) {                \
        amp__clang_why = "libclang lacks " #name " (too old?)";             \
        return;                                                             \
    }
    AMP__CLANG_FUNCS(AMP__CLANG_SYM)
#undef AMP__CLANG_SYM
    amp__clang_text(cx, cx->clang_getClangVersion(), cx->version, sizeof cx->version);
    amp__clang_find_resources(cx->path, cx->resource_dir, sizeof cx->resource_dir);
}

const amp__clang *amp__clang_get(const char **why)
{
    pthread_once(&amp__clang_once, amp__clang_load);
    if (amp__clang_why) {
        if (why) *why = amp__clang_why;
        return NULL;
    }
    return &amp__clang_table;
}

void amp__clang_text(const amp__clang *cx, amp__cx_string s, char *buf, size_t cap)
{
    const char *t = cx->clang_getCString(s);
    snprintf(buf, cap, "%s", t ? t : "");
    cx->clang_disposeString(s);
}
