/* cpu_toolchain.c — finds the host C++ compiler for the CPU accelerator, its identity for the cache tag (the compiler's version, the fixed flags, the processor -march=native resolves to, the libclang of the loop transformation) and its default include directories. */
#include "cpu_clang.h"
#include "cpu_internal.h"
#include "base/lock.h"
#include "base/trusted_file.h"

#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* The fixed flags of every build (cpu_compile.c puts them first); part of
 * the cache tag. Kernels are device code: they have no
 * errno to set and, as on every GPU, floating-point operations do not trap,
 * which lets the compiler vectorise sqrt and conditional arithmetic. -pipe:
 * the assembly goes to the assembler through a pipe, not a file (5% of a
 * one-kernel build, issue 40). -ffunction-sections and -Wl,--emit-relocs:
 * every call between two functions stays a relocation in the module, from
 * which cpu_elf.c reads which kernels reach a helper's tile_static. */
const char *const amp__cpu_flags[] = {"-std=c++17",        "-O3",   "-fPIC", "-shared", "-fvisibility=hidden",
                                      "-fno-math-errno",    "-fno-trapping-math", "-pipe", "-ffunction-sections",
                                      "-Wl,--emit-relocs", "-x",    "c++"};
const size_t amp__cpu_nflags = sizeof amp__cpu_flags / sizeof amp__cpu_flags[0];
/* Bump when the loop transformation's output changes (cache tag). */
#define AMP__CPU_LOOPS_VERSION 9

/* ------------------------------------------------------ the compiler */

/* Whether the compiler hands its assembly to GNU as (GCC), which names the
 * files a kernel's inline asm read (.include, .incbin) with --MD; clang's
 * integrated assembler has no such list (and refuses -Wa,--MD), so clang
 * is given -fno-integrated-as (d->clang_gnu_as). */
static bool amp__cpu_runs_gnu_as(const char *version) { return !strstr(version, "clang version"); }

/* Who assembles: GNU as, which lists what a kernel's inline asm read
 * (d->as_deps), always. clang's integrated assembler reads a kernel's
 * .incbin and .include files and lists none of them, so clang hands its
 * assembly to GNU as instead (d->clang_gnu_as: -fno-integrated-as;
 * binutils is there, its linker links the module). */
static void amp__cpu_choose_assembler(amp__cpu_device *d, const char *version)
{
    d->clang_gnu_as = !amp__cpu_runs_gnu_as(version);
    d->as_deps = true;
}

/* Whether the compiler whose --version printed text takes
 * -fstack-clash-protection: clang from 11 ("clang version 15.0.6"), GCC
 * from 8 (its first line ends with the version, "g++ (Debian 12.2.0-14)
 * 12.2.0"). Anything else is not trusted with it. */
static bool amp__cpu_has_stack_clash(const char *text)
{
    size_t line = strcspn(text, "\n");
    const char *clang = strstr(text, "clang version ");
    if (clang && (size_t)(clang - text) < line) return atoi(clang + strlen("clang version ")) >= 11;
    const char *last = NULL;
    for (size_t i = 0; i < line; ++i)
        if ((i == 0 || text[i - 1] == ' ') && text[i] >= '0' && text[i] <= '9') last = text + i;
    bool gcc = strstr(text, "Free Software Foundation") != NULL;
    return gcc && last && atoi(last) >= 8;
}

static bool amp__cpu_is_exec(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && access(path, X_OK) == 0;
}

/* path made absolute against the working directory (malloc'ed, or NULL):
 * the compiler found now is the one run later, whatever directory the
 * program is in by then (a relative name would then be looked for there,
 * perhaps in a directory another user can write). Not resolved through
 * links: ccache finds the compiler by the name it was called by. */
static char *amp__cpu_absolute(const char *path)
{
    if (path[0] == '/') return amp__strdup(path);
    char cwd[PATH_MAX], *abs = NULL;
    if (!getcwd(cwd, sizeof cwd) || asprintf(&abs, "%s/%s", cwd, path) < 0) return NULL;
    return abs;
}

/* The real path of path's target, in real (PATH_MAX bytes); false where
 * it cannot be resolved. */
static bool amp__cpu_real(const char *path, char *real) { return realpath(path, real) != NULL; }

/* Resolve a program name through a search list (PATH's form; NULL: PATH,
 * else a default); malloc'ed absolute path or NULL. A candidate whose real
 * path is skip_real's (NULL: none) or whose real file is named skip_name
 * (NULL: none) is passed over, as a wrapper called by a compiler's name
 * passes over itself (amp__cpu_wrapped_compiler). */
static char *amp__cpu_which_in(const char *name, const char *list, const char *skip_real, const char *skip_name)
{
    if (strchr(name, '/')) return amp__cpu_is_exec(name) ? amp__cpu_absolute(name) : NULL;
    const char *path = list ? list : amp__env("PATH");
    if (!path) path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        const char *colon = strchr(path, ':');
        size_t n = colon ? (size_t)(colon - path) : strlen(path);
        char *cand = malloc(n + strlen(name) + 3);
        if (!cand) return NULL;
        if (n == 0) sprintf(cand, "./%s", name);
        else sprintf(cand, "%.*s/%s", (int)n, path, name);
        char real[PATH_MAX];
        bool skip = false;
        if ((skip_real || skip_name) && amp__cpu_real(cand, real)) {
            const char *rb = strrchr(real, '/') ? strrchr(real, '/') + 1 : real;
            skip = (skip_real && !strcmp(real, skip_real)) || (skip_name && !strcmp(rb, skip_name));
        }
        if (!skip && amp__cpu_is_exec(cand)) {
            char *abs = amp__cpu_absolute(cand);
            free(cand);
            return abs;
        }
        free(cand);
        path += n + (colon ? 1 : 0);
    }
    return NULL;
}

static char *amp__cpu_which(const char *name) { return amp__cpu_which_in(name, NULL, NULL, NULL); }

/* "NAME=" and the directories of the list value (':'-separated) that no
 * one outside trusted could add a file to (amp__trusted_dir), in their
 * order (malloc'ed; NULL on no memory); *kept counts them. A relative or
 * empty entry, which would be the compile's working directory, is left
 * out too; the first left out, and why, goes to left (cap bytes) where it
 * is still empty. */
static char *amp__cpu_safe_list(const amp__trust *trusted, const char *name, const char *value, char *left,
                                size_t cap, size_t *kept)
{
    size_t len = strlen(name) + 1, start = len;
    char *out = malloc(strlen(value) + len + 16), dir[PATH_MAX], why[256];
    *kept = 0;
    if (!out) return NULL;
    sprintf(out, "%s=", name);
    for (const char *p = value;;) {
        size_t n = strcspn(p, ":");
        bool keep = false;
        if (n == 0 || p[0] != '/' || n >= sizeof dir) {
            if (!left[0])
                snprintf(left, cap, "%s's entry '%.*s' is %s", name, (int)(n < 100 ? n : 100), p,
                         n == 0 ? "empty (the working directory)" : n >= sizeof dir ? "too long" : "relative");
        } else {
            memcpy(dir, p, n);
            dir[n] = '\0';
            int w = amp__trusted_dir(trusted, dir, why, sizeof why);
            keep = w == AMP__WALK_DIR;
            if (w == AMP__WALK_UNTRUSTED && !left[0]) snprintf(left, cap, "%s: %.200s", name, why);
        }
        if (keep) {
            if (len > start) out[len++] = ':';
            memcpy(out + len, p, n);
            len += n;
            ++*kept;
        }
        if (!p[n]) break;
        p += n + 1;
    }
    out[len] = '\0';
    return out;
}

/* The variable name's list of directories as amp__cpu_safe_list keeps it,
 * into *out ("NAME=..."; NULL where the variable is unset or none of it is
 * kept, so the compiler runs without it); the first left out goes to
 * d->path_left_out. False on no memory. */
static bool amp__cpu_optional_list(amp__cpu_device *d, const amp__trust *trusted, const char *name, char **out)
{
    const char *value = amp__env(name);
    size_t kept = 0;
    free(*out);
    *out = NULL;
    if (!value) return true;
    if (!(*out = amp__cpu_safe_list(trusted, name, value, d->path_left_out, sizeof d->path_left_out, &kept)))
        return false;
    if (!kept) {
        free(*out);
        *out = NULL;
    }
    return true;
}

/* d->compiler_path: PATH for the compiler, its directories that no one
 * outside the trusted set could add a program to, in their order. GCC and
 * clang look for the assembler and the linker on PATH where their own
 * directories have none (Debian's gcc: `as`, `ld`), so a directory another
 * local user may write, anywhere on PATH, would let them choose what runs.
 * d->compiler_libpath: LD_LIBRARY_PATH the same way (NULL: none kept, or
 * none set), which the dynamic loader searches first for the libraries of
 * cc1plus, as and ld (a common `LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/opt/lib`
 * with none before gives an empty entry: the working directory).
 * d->compiler_ccache_path: CCACHE_PATH the same way, where ccache looks its
 * compiler up at every compile, not once as discovery did
 * (amp__cpu_wrapped_compiler); with none kept, it takes PATH's. The first
 * left out, with why, in d->path_left_out, which a failed compile names.
 * False on no memory. */
static bool amp__cpu_safe_path(amp__cpu_device *d)
{
    amp__trust trusted;
    char why[256];
    amp__trust_init(&trusted, NULL, NULL);
    if (!amp__trusted_users(&trusted, why, sizeof why)) return true; /* the compiler was refused already */
    const char *path = amp__env("PATH");
    if (!path) path = "/usr/local/bin:/usr/bin:/bin";
    free(d->compiler_path);
    d->path_left_out[0] = '\0';
    size_t kept = 0;
    if (!(d->compiler_path = amp__cpu_safe_list(&trusted, "PATH", path, d->path_left_out, sizeof d->path_left_out,
                                                &kept)))
        return false;
    /* None kept: an empty PATH would be the working directory to execvp;
     * nothing can be found under /dev/null. */
    if (!kept) strcpy(d->compiler_path, "PATH=/dev/null");
    return amp__cpu_optional_list(d, &trusted, "LD_LIBRARY_PATH", &d->compiler_libpath) &&
           amp__cpu_optional_list(d, &trusted, "CCACHE_PATH", &d->compiler_ccache_path);
}

char **amp__cpu_compiler_environ(const amp__cpu_device *d, const char *const *also_drop, size_t lead)
{
    size_t nenv = 0, ne = lead;
    while (environ[nenv]) nenv++;
    char **envp = calloc(lead + nenv + 4, sizeof *envp);
    if (!envp) return NULL;
    for (size_t i = 0; i < nenv; ++i) {
        bool keep = !amp__cpu_env_dropped(environ[i]) && strncmp(environ[i], "PATH=", 5) != 0 &&
                    strncmp(environ[i], "LD_LIBRARY_PATH=", 16) != 0 && strncmp(environ[i], "CCACHE_PATH=", 12) != 0;
        for (size_t j = 0; keep && also_drop && also_drop[j]; ++j)
            if (!strncmp(environ[i], also_drop[j], strlen(also_drop[j]))) keep = false;
        if (keep) envp[ne++] = environ[i];
    }
    if (d->compiler_path) envp[ne++] = d->compiler_path;
    if (d->compiler_libpath) envp[ne++] = d->compiler_libpath;
    if (d->compiler_ccache_path) envp[ne++] = d->compiler_ccache_path;
    envp[ne] = NULL;
    return envp;
}

/* The compiler a compiler wrapper (ccache's kind) runs, which is held to
 * the same rule as the wrapper: malloc'ed, or NULL where prog is no
 * wrapper (or the wrapper would find none; it then fails to run). Two
 * forms: "ccache g++" (the wrapper by its own name, the compiler the next
 * word, when that is no option) and the masquerade, a link to the wrapper
 * named as the compiler (/usr/lib/ccache/g++ -> ../../bin/ccache), which
 * runs the first program of its own name on the search path that is not
 * the wrapper again. The search path is ccache's CCACHE_PATH where set,
 * else PATH, as the wrappers take it. */
static char *amp__cpu_wrapped_compiler(const char *prog, char **argv, int n)
{
    static const char *const wrappers[] = {"ccache", "sccache", "distcc", "icecc", "buildcache"};
    const char *base = strrchr(prog, '/') ? strrchr(prog, '/') + 1 : prog;
    char real[PATH_MAX];
    if (!amp__cpu_real(prog, real)) return NULL;
    const char *real_base = strrchr(real, '/') ? strrchr(real, '/') + 1 : real;
    for (size_t i = 0; i < sizeof wrappers / sizeof wrappers[0]; ++i) {
        const char *list = !strcmp(wrappers[i], "ccache") ? amp__env("CCACHE_PATH") : NULL;
        if (!strcmp(base, wrappers[i]))
            return n >= 2 && argv[1][0] != '-' ? amp__cpu_which_in(argv[1], list, NULL, NULL) : NULL;
        if (!strcmp(real_base, wrappers[i])) return amp__cpu_which_in(base, list, real, wrappers[i]);
    }
    return NULL;
}

/* What -march=native resolves to is a function of the compiler (in the tag
 * already) and of the processor's identity and features, which
 * /proc/cpuinfo lists: hash the first processor's identifying lines. 0 when
 * they cannot be read (then no -march=native: a cache shared between
 * machines must never hand one the other's instructions). */
static uint64_t amp__cpu_identity(void)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return 0;
    static const char *const keys[] = {"vendor_id",     "cpu family",  "model",       "model name", "stepping",
                                       "flags",         "Features",    "CPU implementer", "CPU architecture",
                                       "CPU variant",   "CPU part",    "CPU revision", "isa",       "uarch"};
    uint64_t h = AMP__FNV_SEED;
    int seen = 0;
    char line[8192];
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '\n' && seen) break; /* end of the first processor */
        char *colon = strchr(line, ':');
        if (!colon) continue;
        size_t kl = (size_t)(colon - line);
        while (kl && (line[kl - 1] == ' ' || line[kl - 1] == '\t')) --kl;
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; ++i)
            if (strlen(keys[i]) == kl && !strncmp(line, keys[i], kl)) {
                h = amp__fnv1a(h, line, strlen(line));
                seen++;
            }
    }
    fclose(f);
    return seen >= 2 ? h : 0;
}

/* Whether the compiler command (prog, the program argv[0] names, then
 * argv's n words) is refused, with d->reason saying why: another local
 * user could change the program, or behind a wrapper the compiler it runs
 * (amp__cpu_wrapped_compiler); or its words after them break the rule a
 * build's options pass (no -B, -specs, -wrapper, @file, plugin, output or
 * input of their own): only the programs were checked, and those words
 * would choose other programs for them to run or files to read. */
static bool amp__cpu_command_refused(amp__cpu_device *d, const char *prog, char **argv, int n)
{
    char unsafe[512];
    char *wrapped = amp__cpu_wrapped_compiler(prog, argv, n);
    /* The compiler after a wrapper's own name ("ccache g++") is a program
     * checked here, not an option. */
    int first_option = 1 + (wrapped && n > 1 && argv[1][0] != '-');
    const char *why = amp__unsafe_file(prog, unsafe, sizeof unsafe);
    if (!why && wrapped) why = amp__unsafe_file(wrapped, unsafe, sizeof unsafe);
    if (!why && n > first_option &&
        amp__cpu_refuse_user_options(d, argv + first_option, (size_t)(n - first_option)) != AMP_OK)
        why = amp_last_error();
    if (why) snprintf(d->reason, sizeof d->reason, "the C++ compiler of %.60s is not run: %.150s", d->cxx_text, why);
    free(wrapped);
    return why != NULL;
}

/* How long a question to the compiler may take (its version at the first
 * use, its include directories at the first build): 60 s, or
 * AMP_COMPILE_TIMEOUT where that is shorter, so that a compiler that hangs
 * holds up the first use no longer than a build of it would. */
static unsigned amp__cpu_probe_s(void)
{
    unsigned t = amp__compile_timeout_s();
    return t < 60 ? t : 60;
}

void amp__cpu_find_compiler(amp__cpu_device *d)
{
    const char *var = "AMP_CXX", *spec = amp__env("AMP_CXX");
    char *words = NULL, *version = NULL;
    char **argv = NULL;
    if (!spec) {
        var = "CXX";
        spec = amp__env("CXX");
    }
    if (!spec) {
        var = NULL;
        spec = "c++";
    }
    d->available = false;
    if (var) snprintf(d->cxx_text, sizeof d->cxx_text, "%s=%s", var, spec);
    else snprintf(d->cxx_text, sizeof d->cxx_text, "'c++' on PATH (AMP_CXX and CXX unset)");
    /* A set-uid, set-gid or file-capability program: the compiler would run
     * with more rights than its invoker and with their environment, which
     * GCC reads for where its own programs are (COMPILER_PATH,
     * GCC_EXEC_PREFIX) and glibc does not strip. Its prebuilt packs still
     * serve the built-in algorithms. */
    if (getauxval(AT_SECURE)) {
        snprintf(d->reason, sizeof d->reason,
                 "a set-uid, set-gid or file-capability program compiles no kernels: the compiler would run with "
                 "its rights and the environment of whoever started it");
        goto done;
    }

    /* "ccache g++ -m64": program, then extra words passed before our flags. */
    size_t nwords = 0;
    if (amp__split_options(spec, 0, 1, &argv, &nwords, &words) != AMP_OK) {
        snprintf(d->reason, sizeof d->reason, "no memory to look for a C++ compiler");
        goto done;
    }
    int n = (int)nwords;
    if (n == 0) {
        snprintf(d->reason, sizeof d->reason, "no C++ compiler: %.200s is blank", d->cxx_text);
        goto done;
    }
    char *prog = amp__cpu_which(argv[0]);
    if (!prog) {
        snprintf(d->reason, sizeof d->reason,
                 "no C++ compiler: %.180s not found (set AMP_CXX or CXX to a C++17 compiler)", d->cxx_text);
        goto done;
    }
    if (amp__cpu_command_refused(d, prog, argv, n)) {
        free(prog);
        goto done;
    }
    d->cxx = calloc((size_t)n + 1, sizeof *d->cxx);
    if (!d->cxx || !amp__cpu_safe_path(d)) {
        free(prog);
        snprintf(d->reason, sizeof d->reason, "no memory to look for a C++ compiler");
        goto done;
    }
    d->cxx[0] = prog;
    for (int i = 1; i < n; ++i) d->cxx[i] = amp__strdup(argv[i]);
    d->ncxx = n;

    /* It must run: ask for its version, which also keys the cache. */
    const unsigned probe_s = amp__cpu_probe_s();
    char **vargv = calloc((size_t)n + 2, sizeof *vargv), **venv = amp__cpu_compiler_environ(d, NULL, 0);
    int ws = 0;
    bool late = false;
    if (!vargv || !venv) {
        free(vargv);
        free(venv);
        snprintf(d->reason, sizeof d->reason, "no memory to look for a C++ compiler");
        goto done;
    }
    for (int i = 0; i < n; ++i) vargv[i] = d->cxx[i];
    vargv[n] = "--version";
    amp_status st = amp__cpu_run_capture(vargv, venv, amp__now_ns() + probe_s * 1000000000ull, &version, &ws, &late);
    free(vargv);
    free(venv);
    if (st != AMP_OK || late || !WIFEXITED(ws) || WEXITSTATUS(ws) != 0) {
        char how[64] = "";
        if (st == AMP_OK) {
            if (late) snprintf(how, sizeof how, "no answer to --version within %u s", probe_s);
            else amp__cpu_describe_exit(ws, how, sizeof how);
        }
        snprintf(d->reason, sizeof d->reason, "no C++ compiler: %.80s (%.60s) cannot run: %.80s",
                 d->cxx_text, prog, st != AMP_OK ? amp_last_error() : how);
        goto done;
    }

    d->stack_clash = amp__cpu_has_stack_clash(version);
    amp__cpu_choose_assembler(d, version);

    /* -march=native where the compilers understand it and the processor
     * can be identified; AMP_CPU_NATIVE=0 turns it off. */
    uint64_t ident = 0;
    bool native_ok = amp__env_flag("AMP_CPU_NATIVE", true);
    if (native_ok && (!strcmp(d->machine, "x86_64") || !strcmp(d->machine, "aarch64"))) ident = amp__cpu_identity();
    d->native = ident != 0;
    if (d->native && !strcmp(d->machine, "x86_64")) ident = amp__fnv1a(ident, "vw256", 5);

    /* The loop transformation: which libclang (its file's identity stands
     * for its version without loading it). */
    char clang_path[1024], clang_tag[1200];
    amp__clang_locate(clang_path, sizeof clang_path, clang_tag, sizeof clang_tag);

    uint64_t vh = amp__fnv1a(AMP__FNV_SEED, version, strlen(version));
    uint64_t ph = amp__fnv1a(AMP__FNV_SEED, amp__embedded_cpu_prelude, strlen(amp__embedded_cpu_prelude));
    uint64_t fh = AMP__FNV_SEED;
    for (size_t i = 0; i < amp__cpu_nflags; ++i)
        fh = amp__fnv1a(fh, amp__cpu_flags[i], strlen(amp__cpu_flags[i]) + 1);
    /* The C library's headers are not keyed one by one (lib/backend.h):
     * its version stands for them. */
    char libc[64] = "unknown";
#ifdef _CS_GNU_LIBC_VERSION
    if (confstr(_CS_GNU_LIBC_VERSION, libc, sizeof libc) == 0) snprintf(libc, sizeof libc, "unknown");
#endif
    /* The compiler's words framed by their lengths, the whole fitted by
     * digest: a long AMP_CXX cut the rest of the tag off before (the
     * compiler's version, the flags, the processor). */
    amp__sb tag = {0};
    amp__sb_printf(&tag, "cpu;abi=%d;libc=%s;cxx=", AMP__CPU_ABI, libc);
    for (int i = 0; i < n; ++i) amp__sb_printf(&tag, "%s%zu:%s", i ? " " : "", strlen(d->cxx[i]), d->cxx[i]);
    amp__sb_printf(&tag,
                   ";version=%016llx;flags=%016llx;clash=%d;debug=%d;arch=%s;native=%016llx;prelude=%016llx;"
                   "loops=%d:%s:%s",
                   (unsigned long long)vh, (unsigned long long)fh, d->stack_clash ? 1 : 0, d->debug ? 1 : 0, d->machine,
                   (unsigned long long)ident, (unsigned long long)ph, AMP__CPU_LOOPS_VERSION,
                   d->tiled == AMP__CPU_TILED_FIBERS ? "off" : "on", clang_tag);
    if (tag.oom) {
        free(tag.p);
        snprintf(d->reason, sizeof d->reason, "no memory for the compiler's cache tag");
        goto done;
    }
    amp__fit_tag(d->cache_tag, sizeof d->cache_tag, tag.p);
    free(tag.p);
    /* Code compiled here loads wherever the tag is the same (the compiler,
     * its flags, the processor -march=native resolves to, the C library,
     * the loop transformation): the tag names the pack of built-in programs
     * this accelerator can use as its own compiler's output. */
    snprintf(d->prebuilt, sizeof d->prebuilt, "cpu-%016llx",
             (unsigned long long)amp__fnv1a(AMP__FNV_SEED, d->cache_tag, strlen(d->cache_tag)));
    d->available = true;
done:
    free(version);
    free(words);
    free(argv);
}

/* ------------------------------------------------ its environment */

bool amp__cpu_env_dropped(const char *entry)
{
    /* GCC's and clang's: another place for the compiler's own programs
     * (cc1plus, as, ld: GCC_EXEC_PREFIX, COMPILER_PATH) and the linker's
     * libraries (LIBRARY_PATH) or the module's run path (LD_RUN_PATH); the
     * include paths of other languages (C, Objective-C: none is tracked);
     * a dependency list written into the user's file; clang's
     * edit of its command line (CCC_OVERRIDE_OPTIONS) and its logs to
     * files (CC_PRINT_..._FILE, CC_LOG_DIAGNOSTICS_FILE); GCC's second
     * compile to compare (GCC_COMPARE_DEBUG); __DATE__ and __TIME__ fixed
     * (SOURCE_DATE_EPOCH); ccache's programs of its own to run, none of
     * them the checked compiler (CCACHE_COMPILER, CCACHE_PREFIX,
     * CCACHE_PREFIX_CPP, CCACHE_COMPILERCHECK, which may be a command),
     * and icecc's (ICECC_CC, ICECC_CXX, ICECC_VERSION's environment
     * archive of another compiler). */
    static const char *const drop[] = {"GCC_EXEC_PREFIX=", "COMPILER_PATH=",       "LIBRARY_PATH=",
                                       "LD_RUN_PATH=",     "C_INCLUDE_PATH=",      "OBJC_INCLUDE_PATH=",
                                       "OBJCPLUS_INCLUDE_PATH=", "DEPENDENCIES_OUTPUT=", "SUNPRO_DEPENDENCIES=",
                                       "CCC_OVERRIDE_OPTIONS=", "CC_PRINT_",      "CC_LOG_DIAGNOSTICS",
                                       "GCC_COMPARE_DEBUG=", "SOURCE_DATE_EPOCH=", "CCACHE_COMPILER=",
                                       "CCACHE_PREFIX", "CCACHE_COMPILERCHECK=", "ICECC_CC=", "ICECC_CXX=",
                                       "ICECC_VERSION="};
    for (size_t j = 0; j < sizeof drop / sizeof drop[0]; ++j)
        if (!strncmp(entry, drop[j], strlen(drop[j]))) return true;
    return false;
}

/* ------------------------------------------ default include directories */

/* Leaf: guards the list's making, which runs the compiler. An amp__lock:
 * in a child forked while another thread of the parent made the list, it
 * is never released, and the child goes on with no list (every system
 * header then checked as a user's). */
static amp__lock amp__cpu_sys_lock = AMP__LOCK_INIT;
static amp__sys_dir *amp__cpu_sys;
static bool amp__cpu_sys_done;

/* What a default directory holds (lib/backend.h): /usr/local/include is for
 * locally installed software, /usr/include and its multiarch directory
 * (/usr/include/x86_64-linux-gnu) the C library's; the rest (libstdc++'s,
 * the compiler's builtin headers) the compiler's own. */
static int amp__cpu_dir_kind(const char *real)
{
    if (!strcmp(real, "/usr/local/include") || !strncmp(real, "/usr/local/include/", 19)) return AMP__DIR_LOCAL;
    if (!strcmp(real, "/usr/include")) return AMP__DIR_LIBC;
    if (!strncmp(real, "/usr/include/", 13) && !strchr(real + 13, '/') && strcmp(real + 13, "c++"))
        return AMP__DIR_LIBC;
    return AMP__DIR_COMPILER;
}

/* The compiler's default #include <...> directories, in its order, as it
 * lists them itself (-E -v, between "search starts here" and "End of search
 * list"), run without the include-path variables the scan reads itself
 * (they would be listed as the compiler's own; so would directories named
 * in AMP_CXX, which are taken as LOCAL), nor those a build runs it
 * without (amp__cpu_env_dropped). Made on first use and kept;
 * an empty list when the compiler cannot say (then every system header it
 * reads is checked as the user's are). */
const amp__sys_dir *amp__cpu_system_dirs(amp__cpu_device *d)
{
    static const amp__sys_dir none = {NULL, 0};
    if (!amp__lock_acquire_or_forked(&amp__cpu_sys_lock)) return &none;
    if (amp__cpu_sys_done || !d->available) goto out;
    amp__cpu_sys_done = true;
    static const char *const drop[] = {"CPATH=", "CPLUS_INCLUDE_PATH=", NULL};
    char **envp = amp__cpu_compiler_environ(d, drop, 0), **argv = calloc((size_t)d->ncxx + 6, sizeof *argv);
    char *text = NULL;
    amp__sys_dir *list = NULL;
    if (!envp || !argv) goto done;
    int n = 0;
    for (int i = 0; i < d->ncxx; ++i) argv[n++] = d->cxx[i];
    argv[n++] = "-x";
    argv[n++] = "c++";
    argv[n++] = "-E";
    argv[n++] = "-v";
    argv[n++] = "/dev/null";
    int ws = 0;
    bool late = false;
    const uint64_t deadline = amp__now_ns() + amp__cpu_probe_s() * 1000000000ull;
    if (amp__cpu_run_capture(argv, envp, deadline, &text, &ws, &late) != AMP_OK ||
        late || !WIFEXITED(ws) || WEXITSTATUS(ws) != 0)
        goto done;
    const char *p = strstr(text, "#include <...> search starts here:");
    size_t count = 0, cap = 0;
    amp__trust trusted;
    char trust_why[256];
    amp__trust_init(&trusted, NULL, NULL);
    bool trusted_ok = amp__trusted_users(&trusted, trust_why, sizeof trust_why);
    for (p = p ? strchr(p, '\n') : NULL; p && p[1] == ' ';) {
        const char *line = p + 2, *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        p = nl;
        char dir[PATH_MAX], real[PATH_MAX];
        if (len >= sizeof dir) continue;
        memcpy(dir, line, len);
        dir[len] = '\0';
        char *note = strstr(dir, " (framework directory)");
        if (note) *note = '\0';
        if (!realpath(dir, real)) continue;
        int kind = amp__cpu_dir_kind(real);
        /* A directory of the compiler's that someone outside the trusted
         * set could change (a --sysroot or -isysroot of another user's,
         * in AMP_CXX or in a wrapper script) is no more the compiler's own
         * than one AMP_CXX names: its owner is not trusted, and its
         * headers are keyed as a named directory's are. */
        char why[256];
        if (kind != AMP__DIR_LOCAL && (!trusted_ok || amp__trusted_dir(&trusted, real, why, sizeof why) != AMP__WALK_DIR))
            kind = AMP__DIR_LOCAL;
        /* Directories named by AMP_CXX's own words are the user's. */
        for (int w = 1; w < d->ncxx && kind != AMP__DIR_LOCAL; ++w) {
            static const char *const flags[] = {"-I", "-isystem", "-idirafter", "-iquote"};
            for (size_t f = 0; f < sizeof flags / sizeof flags[0]; ++f) {
                size_t fl = strlen(flags[f]);
                if (strncmp(d->cxx[w], flags[f], fl)) continue;
                const char *arg = d->cxx[w][fl] ? d->cxx[w] + fl : w + 1 < d->ncxx ? d->cxx[w + 1] : NULL;
                char named[PATH_MAX];
                if (arg && realpath(arg, named) && !strcmp(named, real)) kind = AMP__DIR_LOCAL;
            }
        }
        if (count + 2 > cap) {
            size_t nc = cap ? 2 * cap : 16;
            amp__sys_dir *g = realloc(list, nc * sizeof *g);
            if (!g) break;
            list = g;
            cap = nc;
        }
        char *copy = amp__strdup(real);
        if (!copy) break;
        list[count++] = (amp__sys_dir){copy, kind};
        list[count] = none;
    }
    amp__cpu_sys = list;
    list = NULL;
done:
    free(list);
    free(text);
    free(envp);
    free(argv);
out:
    amp__lock_release(&amp__cpu_sys_lock);
    return amp__cpu_sys ? amp__cpu_sys : &none;
}
