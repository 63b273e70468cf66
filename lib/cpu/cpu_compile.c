/* cpu_compile.c — compiles kernel sources for the CPU accelerator (CPU prelude + core's source, plus the loop versions lib/cpu/loops/ writes in a child process) into shared objects with the host C++ compiler (cpu_toolchain.c), in a private build directory and under a deadline (cpu_spawn.c runs it), up to three tries turning off loop versions that do not compile; reads back the module and the files it depended on. */
#include "cpu_clang.h"
#include "cpu_internal.h"
#include "loops/loops.h"
#include "base/diag.h"
#include "base/trusted_file.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>


/* The deadline of a job that names none (the core always does: its
 * AMP_COMPILE_TIMEOUT default is the same 600 s). */
#define AMP__CPU_TIMEOUT_DEFAULT 600

/* ------------------------------------------------------------- compile */

/* The options libclang needs to see the same program: language, macros and
 * include paths (not code generation, which it need not understand). */
static int amp__cpu_clang_args(char **opts, size_t from, size_t to, const char **args, int cap)
{
    int n = 0;
    for (size_t i = from; i < to && n + 2 < cap; ++i) {
        const char *o = opts[i];
        static const char *const with_arg[] = {"-D", "-U", "-I", "-iquote", "-isystem", "-idirafter", "-include",
                                               "-imacros"};
        bool taken = false;
        for (size_t j = 0; j < sizeof with_arg / sizeof with_arg[0] && !taken; ++j) {
            size_t l = strlen(with_arg[j]);
            if (!strcmp(o, with_arg[j]) && i + 1 < to) {
                args[n++] = o;
                args[n++] = opts[++i];
                taken = true;
            } else if (!strncmp(o, with_arg[j], l) && o[l] && l <= 2) {
                args[n++] = o;
                taken = true;
            }
        }
        if (!taken && !strncmp(o, "-std=", 5)) args[n++] = o;
    }
    return n;
}

/* The loop transformation trusts what comes before the user's text and
 * analyses what follows. */
static const char *amp__cpu_user_part(const char *source) { return source + amp__unit_library_end(source); }

/* The first error line of a compiler log (base/diag.h: not any line that
 * says "error", which a kernel or file name may hold). */
static void amp__cpu_first_error(const char *log, char *out, size_t cap)
{
    size_t l = 0;
    const char *line = amp__diag_first_error(log, &l);
    snprintf(out, cap, "%.*s", (int)(l > 300 ? 300 : l), line ? line : "");
}

/* A module note: why no kernel of it has a loop version. */
static char *amp__cpu_note_source(const char *note)
{
    size_t n = strlen(note);
    char *s = malloc(n * 4 + 160);
    if (!s) return NULL;
    /* weak: every part of a split build (cpu_split.c) defines it */
    size_t k = (size_t)sprintf(s, "\nextern \"C\" __attribute__((visibility(\"default\"), weak)) const char "
                                  "amp__cpu_loops_note[] = \"");
    for (const char *p = note; *p; ++p) {
        if (*p == '"' || *p == '\\') s[k++] = '\\';
        s[k++] = (unsigned char)*p < 32 ? ' ' : *p;
    }
    strcpy(s + k, "\";\n");
    return s;
}

/* One build's state, from its private directory to its outputs: each step
 * below fills its part, and amp__cpu_build_free releases whatever was made,
 * whichever step failed. */
typedef struct amp__cpu_build {
    amp__cpu_device *d;
    const amp__compile_job *job;
    amp__compile_output *out;
    const char *source, *source_name;
    unsigned timeout;  /* seconds (AMP_COMPILE_TIMEOUT), for the messages */
    uint64_t deadline; /* monotonic ns: the build's start (job->started_ns) + timeout */
    double waited_s;   /* of timeout, spent before this compile began (amp__cpu_build_waited) */
    /* The private build directory ("": none of ours to remove), held open
     * from its making, and the files in it. */
    char dir[PATH_MAX];
    int dirfd;
    char src[PATH_MAX + 32], so[PATH_MAX + 32], dep[PATH_MAX + 32];
    /* GNU as's list of what it read (as.d) and the option that asks for
     * it (d->as_deps) */
    char as_dep[PATH_MAX + 32], as_opt[PATH_MAX + 48];
    /* The compiler's environment: ours with TMPDIR=dir (tmpenv). */
    char tmpenv[PATH_MAX + 16];
    char **envp;
    /* The compiler's argv (its words point into d, job, amp__cpu_flags,
     * opts, the user's options split, and this struct); the user's options
     * are argv[user_from, user_to), the outputs and the input follow them. */
    char **argv;
    char *opts;
    size_t user_from, user_to;
    /* The loop transformation's result; whether the next try puts its loop
     * versions in; the module note saying why its kernels run as fibers. */
    amp__cpu_loops_result lres;
    bool have_loops;
    bool lpch_making; /* libclang's precompiled library part is being made (cpu_pch.c) */
    char note[512];
    char *loops, *note_src; /* the source as the last try wrote it */
    char *log;              /* the last try's output */
    char *dep_text;
    /* The precompiled header of the library's part (its first lib_len
     * bytes) to -include, or NULL; whether the last try used it; pch_off
     * once a try with it failed (the next compiles without). */
    const char *pch;
    size_t lib_len;
    bool pch_used, pch_off;
    bool pch_making; /* the compiler's header is being made (cpu_pch.c) */
    bool split_tried; /* the first try went to cpu_split.c first */
} amp__cpu_build;

/* The private build directory: made (mode 0700, named so that it can be
 * swept if this process dies), opened and checked; the paths in it. */
static amp_status amp__cpu_build_dir(amp__cpu_build *b)
{
    char root[PATH_MAX];
    amp_status st = amp__cpu_tmp_dir(AMP_ERROR_COMPILE, root);
    if (st != AMP_OK) return st;
    amp__cpu_sweep_once();
    /* Under the checked name: the compiler is handed paths. */
    if (snprintf(b->dir, sizeof b->dir, "%s/" AMP__CPU_TMP_PREFIX "%ld-XXXXXX", root, (long)getpid()) >=
        (int)sizeof b->dir) {
        b->dir[0] = 0;
        return amp__fail(AMP_ERROR_COMPILE, "CPU accelerator: the temporary directory %s (TMPDIR) is too long a path",
                         root);
    }
    if (!mkdtemp(b->dir)) {
        st = amp__fail(AMP_ERROR_DEVICE, "CPU accelerator: cannot create a temporary directory %s: %s",
                       b->dir, strerror(errno));
        b->dir[0] = 0;
        return st;
    }
    /* Held from here: the outputs are read through it (amp__cpu_read_file),
     * and its flock tells other processes' sweeps that it is in use. */
    struct stat dsb;
    if ((b->dirfd = open(b->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
        fstat(b->dirfd, &dsb) != 0 || dsb.st_uid != geteuid() || (dsb.st_mode & 077) || !amp__cpu_dir_claim(b->dirfd)) {
        st = amp__fail(AMP_ERROR_COMPILE, "CPU accelerator: the temporary directory %s was replaced or removed "
                       "before it could be opened and locked", b->dir);
        b->dir[0] = 0; /* not ours to remove */
        return st;
    }
    snprintf(b->src, sizeof b->src, "%s/kernel.cpp", b->dir);
    snprintf(b->so, sizeof b->so, "%s/kernel.so", b->dir);
    snprintf(b->dep, sizeof b->dep, "%s/kernel.d", b->dir);
    snprintf(b->as_dep, sizeof b->as_dep, "%s/as.d", b->dir);
    snprintf(b->as_opt, sizeof b->as_opt, "-Wa,--MD,%s", b->as_dep);
    return AMP_OK;
}

/* The compiler's environment: its own temporary files go into our
 * directory, which is removed whatever happens. Without the variables that
 * change what it does but are in no cache tag (amp__cpu_env_dropped): a
 * module built under one would be reused under another, and a program run
 * from a make that exports DEPENDENCIES_OUTPUT would have our builds'
 * lists written into the user's file. PATH holds only the directories no
 * other user could add a program to (amp__cpu_compiler_environ). */
static amp_status amp__cpu_build_env(amp__cpu_build *b)
{
    static const char *const drop[] = {"TMPDIR=", NULL};
    if (!(b->envp = amp__cpu_compiler_environ(b->d, drop, 1)))
        return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "CPU accelerator: no memory for the compiler's environment");
    snprintf(b->tmpenv, sizeof b->tmpenv, "TMPDIR=%s", b->dir);
    b->envp[0] = b->tmpenv;
    return AMP_OK;
}

/* Whether the user's words leave GCC below -O2: the last -O word (or
 * --optimize[=N]) is -O, -O0, -O1 (-O00, -O01, ...) or -Og. A word after
 * -Xlinker is the linker's. The prelude's plain path of simple kernels is a
 * function optimised at O2 of its own (AMP__PLAIN_PATH), and GCC refuses to
 * inline the kernel's body (always_inline) into it from a unit compiled at
 * a lower level ("optimization level attribute mismatch", "caller is not
 * optimized"): every simple kernel would fail to compile under a user's
 * -O0 -g. */
static bool amp__cpu_user_below_o2(char *const *words, size_t n)
{
    const char *level = NULL;
    for (size_t i = 0; i < n; ++i) {
        if (!strcmp(words[i], "-Xlinker")) {
            ++i;
            continue;
        }
        if (!strncmp(words[i], "-O", 2)) level = words[i] + 2;
        else if (!strcmp(words[i], "--optimize")) level = "";
        else if (!strncmp(words[i], "--optimize=", 11)) level = words[i] + 11;
    }
    if (!level) return false;
    if (!strcmp(level, "") || !strcmp(level, "g")) return true;
    if (!*level || strspn(level, "0123456789") != strlen(level)) return false; /* s, z, fast */
    return strtol(level, NULL, 10) < 2;
}

/* argv: compiler, our flags, [-march=native], [debug], [plain path at the
 * unit's level], [-iquote dir], the user's options (they may override:
 * -O0, -g), then 6 words for the outputs and the input
 * (amp__cpu_build_try). */
static amp_status amp__cpu_build_argv(amp__cpu_build *b)
{
    const amp__cpu_device *d = b->d;
    /* Room for every word of ours below (before the user's, which the split
     * puts at nfixed): -fstack-clash-protection, -march=native and
     * -mprefer-vector-width, -DAMP_DEBUG_CHECKS, the plain path's -D,
     * -iquote and its directory, clang's -fno-integrated-as: 8 at most.
     * With 6, AMP_DEBUG=1, a build from a file and -O1 wrote the directory
     * over the user's first word (the compiler then read it as an input). */
    size_t nfixed = (size_t)d->ncxx + amp__cpu_nflags + 8, nargv = 0;
    amp_status st = amp__split_options(b->job->options, nfixed, 12, &b->argv, &nargv, &b->opts);
    if (st != AMP_OK) return st;
    if ((st = amp__cpu_refuse_user_options(d, b->argv + nfixed, nargv - nfixed)) != AMP_OK) return st;
    char **argv = b->argv;
    size_t n = 0;
    for (int i = 0; i < d->ncxx; ++i) argv[n++] = d->cxx[i];
    for (size_t i = 0; i < amp__cpu_nflags; ++i) argv[n++] = (char *)amp__cpu_flags[i];
    if (d->stack_clash) argv[n++] = "-fstack-clash-protection";
    if (d->native) {
        argv[n++] = "-march=native";
        /* x86: 256-bit vectors even where 512-bit ones exist (as LLVM does
         * for those parts): user arrays from malloc are 16-byte aligned, and
         * unaligned 512-bit accesses split a cache line three times in four
         * (a memory-bound kernel ran 30% slower). */
        if (!strcmp(d->machine, "x86_64")) argv[n++] = "-mprefer-vector-width=256";
    }
    if (d->clang_gnu_as) argv[n++] = "-fno-integrated-as";
    if (d->debug) argv[n++] = "-DAMP_DEBUG_CHECKS";
    if (amp__cpu_user_below_o2(argv + nfixed, nargv - nfixed)) argv[n++] = "-DAMP__CPU_PLAIN_AT_UNIT_LEVEL";
    if (b->job->source_dir) {
        argv[n++] = "-iquote";
        argv[n++] = (char *)b->job->source_dir;
    }
    /* the user's words follow ours directly */
    memmove(argv + n, argv + nfixed, (nargv - nfixed) * sizeof *argv);
    b->user_from = n;
    b->user_to = n + (nargv - nfixed);
    return AMP_OK;
}

/* Why a build's tiled kernels run as fibers without a loop transformation
 * (NULL: the transformation runs). */
static const char *amp__cpu_no_loops(const amp__cpu_build *b)
{
    const char *user = amp__cpu_user_part(b->source);
    if (b->d->tiled == AMP__CPU_TILED_FIBERS) return "fibers: AMP_CPU_TILED=fibers";
    if (!strstr(user, "AMP_TILED_KERNEL") && !strstr(user, "tiled_index")) return "fibers: no tiled kernel";
    return NULL;
}

/* A time-out message's tail: how much of the budget went before this
 * compile began (a compiler slow to list its include directories, asked
 * by the build's include scan; or the build's earlier compile, repeated
 * after a computed #include), where that was a noticeable part of it. */
static const char *amp__cpu_build_waited(const amp__cpu_build *b, char *buf, size_t cap)
{
    buf[0] = '\0';
    if (b->waited_s >= 0.5)
        snprintf(buf, cap, " (%.1f s of them went before this compile began: the include scan, which asks the "
                 "compiler for its include directories, or an earlier compile of the build)", b->waited_s);
    return buf;
}

/* The source written to src, then the loop transformation, for sources
 * with tiled kernels (else the note says why they run as fibers). Fails
 * only when the source cannot be written or the deadline passed in the
 * transformation. */
static amp_status amp__cpu_build_loops(amp__cpu_build *b)
{
    const amp__cpu_device *d = b->d;
    const char *parts[2] = {b->source, "\n"};
    amp_status st = amp__cpu_write_file(b->dirfd, "kernel.cpp", b->src, true, parts, 2);
    if (st != AMP_OK) return st;
    const char *why = amp__cpu_no_loops(b);
    if (why) {
        snprintf(b->note, sizeof b->note, "%s", why);
        return AMP_OK;
    }
    const char *cargs[96];
    int nc = 0;
    cargs[nc++] = "-x";
    cargs[nc++] = "c++";
    cargs[nc++] = "-std=c++17";
    cargs[nc++] = "-w";
    if (d->native) cargs[nc++] = "-march=native";
    if (d->debug) cargs[nc++] = "-DAMP_DEBUG_CHECKS";
    if (b->job->source_dir) {
        cargs[nc++] = "-iquote";
        cargs[nc++] = b->job->source_dir;
    }
    nc += amp__cpu_clang_args(b->argv, b->user_from, b->user_to, cargs + nc, 96 - nc);
    amp__cpu_loops_job lj = {b->source, strlen(b->source), amp__unit_library_end(b->source), b->src, cargs, nc, NULL};
    lj.pch = amp__cpu_loops_pch_prepare(d, b->job, &lj, b->deadline, &b->lpch_making);
    amp__cpu_loops_outcome how = {0};
    b->have_loops = amp__cpu_loops_run(&lj, b->deadline, &b->lres, b->note, sizeof b->note, &how);
    if (lj.pch && b->lres.pch_refused) amp__cpu_loops_pch_refused();
    if (lj.pch && amp__env_flag("AMP_CPU_VERBOSE", false))
        fprintf(stderr, "hipamp: CPU build of %s: the loop transformation %s the library's part precompiled\n",
                b->source_name, b->lres.pch_used ? "read" : "could not use");
    if (how.late && amp__now_ns() >= b->deadline) {
        char before[200];
        return amp__fail(AMP_ERROR_COMPILE,
                         "compiling %s for the CPU accelerator timed out after %u seconds "
                         "(AMP_COMPILE_TIMEOUT) in the loop transformation (reading its includes?)%s",
                         b->source_name, b->timeout, amp__cpu_build_waited(b, before, sizeof before));
    }
    /* Its kernels run as fibers in this build only: a later process
     * tries the transformation again. */
    if (how.transient)
        snprintf(b->out->no_store, sizeof b->out->no_store,
                 "%.160s: its tiled kernels run as fibers in this build, which is not stored",
                 strncmp(b->note, "fibers: ", 8) ? b->note : b->note + 8);
    return AMP_OK;
}

/* A debugging aid (README): the source with its loop versions, written to
 * the path AMP_CPU_DUMP_LOOPS names, into a directory whose way no other
 * user could change (amp__unsafe_way). A symbolic link there is followed only
 * where no other user could have planted it (amp__link_planted); anything
 * else at the path is opened without following a link, so one planted
 * after the look fails the open instead of sending the text elsewhere. A
 * failure is said on stderr; the build goes on. */
static void amp__cpu_dump_loops(const char *dump, const char *text)
{
    struct stat ls, ds;
    char dir[PATH_MAX], why[512] = "";
    bool follow = false;
    snprintf(dir, sizeof dir, "%s", dump);
    char *slash = strrchr(dir, '/');
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == dir) dir[1] = '\0';
    else *slash = '\0';
    /* The way to its directory: a link another user could have put on it
     * (a name in /tmp) would send the text into any directory of ours. */
    if (amp__unsafe_way(dir, why, sizeof why)) {
        fprintf(stderr, "hipamp: AMP_CPU_DUMP_LOOPS=%s: nothing written: %s\n", dump, why);
        return;
    }
    if (lstat(dump, &ls) == 0 && S_ISLNK(ls.st_mode)) {
        if (stat(dir, &ds) != 0) snprintf(why, sizeof why, "its directory cannot be read: %s", strerror(errno));
        else if (!amp__link_planted(&ds, ls.st_uid, why, sizeof why)) follow = true;
        if (!follow) {
            fprintf(stderr, "hipamp: AMP_CPU_DUMP_LOOPS=%s is a symbolic link another user could have put there "
                            "(%s); not followed, nothing written\n", dump, why);
            return;
        }
    }
    if (amp__cpu_write_file(AT_FDCWD, dump, dump, !follow, &text, 1) != AMP_OK)
        fprintf(stderr, "hipamp: AMP_CPU_DUMP_LOOPS: %s\n", amp_last_error());
}

/* The source a try compiles, written to src: with the loop versions still
 * on, or as it is with the module note; without the library's part when
 * the try uses the precompiled header (which holds that part: the text
 * must begin with it byte for byte). */
static amp_status amp__cpu_build_write_source(amp__cpu_build *b)
{
    free(b->loops);
    b->loops = NULL;
    if (!b->have_loops) {
        free(b->note_src);
        b->note_src = b->note[0] ? amp__cpu_note_source(b->note) : NULL;
    } else if (!(b->loops = amp__cpu_loops_assemble(b->source, &b->lres))) {
        return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "CPU accelerator: no memory for the loop versions");
    }
    const char *text = b->loops ? b->loops : b->source;
    /* The loop versions' text starts with the list of kernels that have
     * one, a #define the CPU prelude gives a default to (#ifndef): after
     * the precompiled header it replaces that default (the entry points
     * expand it in the user's part). */
    size_t head = 0;
    static const char list[] = "#define AMP__CPU_LOOPS_LIST ";
    if (b->loops && !strncmp(text, list, sizeof list - 1)) head = (size_t)(strchrnul(text, '\n') - text) + 1;
    b->pch_used = b->pch && !b->pch_off && b->lib_len && strlen(text) >= head + b->lib_len &&
                  !strncmp(text + head, b->source, b->lib_len);
    char *head_text = NULL;
    if (b->pch_used && head && asprintf(&head_text, "#undef AMP__CPU_LOOPS_LIST\n%.*s", (int)head, text) < 0) {
        head_text = NULL;
        b->pch_used = false;
    }
    const char *lp[4] = {head_text, b->pch_used ? text + head + b->lib_len : text, "\n",
                         b->loops ? NULL : b->note_src};
    amp_status st = amp__cpu_write_file(b->dirfd, "kernel.cpp", b->src, true, lp, 4);
    free(head_text);
    if (st != AMP_OK || !b->loops) return st;
    const char *dump = amp__env("AMP_CPU_DUMP_LOOPS");
    if (dump) amp__cpu_dump_loops(dump, text);
    return AMP_OK;
}

/* After a try with loop versions failed: turn off the loop versions the
 * errors are in ("hipamp loop version of NAME:line: error"), or all of
 * them (on the first try, only those named; after it, every one still on).
 * When none was turned off the error is not in a loop version: the
 * user's, reported by the next try, a build without them. */
static void amp__cpu_build_turn_off(amp__cpu_build *b, int attempt)
{
    int turned = 0;
    for (int i = 0; i < b->lres.n; ++i) {
        amp__cpu_loops_kernel *rk = &b->lres.k[i];
        if (!rk->loops || rk->off) continue;
        char tag[300];
        snprintf(tag, sizeof tag, "hipamp loop version of %s:", rk->name);
        const char *hit = strstr(b->log, tag);
        if (!hit && attempt == 0) continue;
        char first[320] = "";
        amp__cpu_first_error(hit ? hit : b->log, first, sizeof first);
        rk->off = true;
        snprintf(rk->off_why, sizeof rk->off_why, "the loop version did not compile: %.200s", first);
        turned++;
    }
    if (turned) return;
    for (int i = 0; i < b->lres.n; ++i) b->lres.k[i].off = true;
    b->have_loops = false;
    if (!b->note[0]) snprintf(b->note, sizeof b->note, "fibers: the source did not compile");
}

/* The deadline passed while a compiler ran (it was stopped). */
static amp_status amp__cpu_build_late(const amp__cpu_build *b)
{
    char before[200];
    return amp__fail(AMP_ERROR_COMPILE,
                     "compiling %s for the CPU accelerator timed out after %u seconds (AMP_COMPILE_TIMEOUT); the "
                     "compiler was stopped%s",
                     b->source_name, b->timeout, amp__cpu_build_waited(b, before, sizeof before));
}

/* Whether the user's options may turn link-time optimisation on (any
 * -flto... word: -flto-partition=... alone changes nothing). Under LTO the
 * user's asm is assembled at link time, once a partition: each as run
 * rewrote the one --MD list (the last partition's reads alone were
 * listed), and a split build's link asked for none (another user's
 * .incbin was assembled in unchecked). Such a build is compiled whole, in
 * one partition (amp__cpu_build_try). */
static bool amp__cpu_user_lto(const amp__cpu_build *b)
{
    for (size_t i = b->user_from; i < b->user_to; ++i)
        if (!strncmp(b->argv[i], "-flto", 5)) return true;
    return false;
}

/* Up to three tries: every loop version; without those the compiler
 * rejected; without any. A build the fiber path can do never fails
 * because of a loop version. */
static amp_status amp__cpu_build_try(amp__cpu_build *b)
{
    amp_status st;
    bool lto = b->d->as_deps && amp__cpu_user_lto(b);
    for (int attempt = 0;; ++attempt) {
        if ((st = amp__cpu_build_write_source(b)) != AMP_OK) return st;
        /* First the unit in parts on several compilers at once; whatever
         * that cannot do (an error included) the whole unit does below. */
        if (!b->split_tried && !lto) {
            b->split_tried = true;
            amp__cpu_split_job sj = {.words = b->argv,
                                     .nwords = b->user_to,
                                     .user_from = b->user_from,
                                     .envp = b->envp,
                                     .dirfd = b->dirfd,
                                     .dir = b->dir,
                                     .src = b->src,
                                     .pch = b->pch_used ? b->pch : NULL,
                                     .dep = b->dep,
                                     .as_dep = b->d->as_deps ? b->as_dep : NULL,
                                     .so = b->so,
                                     .user = amp__cpu_user_part(b->source),
                                     .deadline = b->deadline,
                                     .jobs = amp__cpu_split_jobs()};
            char note[256];
            int split = amp__cpu_split_build(&sj, note, sizeof note);
            if (note[0] && amp__env_flag("AMP_CPU_VERBOSE", false))
                fprintf(stderr, "hipamp: CPU build of %s: %s%s\n", b->source_name, split > 0 ? "" : "compiled whole: ",
                        note);
            if (split > 0) return AMP_OK;
            if (split < 0) return amp__cpu_build_late(b);
        }
        size_t m = b->user_to;
        if (b->pch_used) {
            b->argv[m++] = "-include";
            b->argv[m++] = (char *)b->pch;
        }
        b->argv[m++] = "-MD"; /* every file it reads, system headers too (lib/core/program.c checks them) */
        b->argv[m++] = "-MF";
        b->argv[m++] = b->dep;
        if (b->d->as_deps) b->argv[m++] = b->as_opt; /* what inline asm read (amp__cpu_as_read) */
        if (lto) b->argv[m++] = "-flto-partition=one"; /* one as run: one whole list (amp__cpu_user_lto) */
        b->argv[m++] = "-o";
        b->argv[m++] = b->so;
        b->argv[m++] = b->src;
        b->argv[m] = NULL;
        int ws = 0;
        bool late = false;
        free(b->log);
        b->log = NULL;
        /* Its status and message as they are: no memory stays no memory. */
        if ((st = amp__cpu_run_capture(b->argv, b->envp, b->deadline, &b->log, &ws, &late)) != AMP_OK) return st;
        if (late) return amp__cpu_build_late(b);
        if (WIFEXITED(ws) && WEXITSTATUS(ws) == 0) return AMP_OK;
        /* The same try again without the precompiled header: the error
         * reported is the one of the whole text. */
        if (b->pch_used) {
            b->pch_off = true;
            --attempt;
            continue;
        }
        if (b->have_loops) {
            amp__cpu_build_turn_off(b, attempt);
            continue;
        }
        char how[64];
        amp__cpu_describe_exit(ws, how, sizeof how);
        /* An assembler or linker not found may be one only a directory
         * left out of the compiler's PATH had. */
        const char *left = b->d->path_left_out;
        return amp__fail(AMP_ERROR_COMPILE, "compiling %s for the CPU accelerator failed (%s, %s):\n%s%s%s%s",
                         b->source_name, b->d->cxx[0], how, b->log,
                         left[0] ? "\n(the compiler ran without the PATH and LD_LIBRARY_PATH directories another user "
                                   "could add a program or library to; the first left out: "
                                 : "",
                         left, left[0] ? ")" : "");
    }
}

/* What the assembler read besides the compiler's output, one absolute
 * name a line (*names, malloc'ed; NULL when it listed nothing): a kernel's
 * inline asm may .include or .incbin a file, which the preprocessor's list
 * never names, so nothing checked or keyed it (another user's assembly in
 * /tmp was assembled in and ran; an edit to it loaded the stale module from
 * the disk cache). Through the preprocessor's list, lib/core/program.c
 * refuses what another user could have written and stamps the rest (the
 * build skips the disk cache, saying so). as names the unit by the .file
 * its output starts with (kernel.cpp, "<artificial>" after LTO); a
 * relative name is one as looked up in the working directory, which
 * hipamp never reads from: refused, named. */
static amp_status amp__cpu_as_read(amp__cpu_build *b, char **names)
{
    *names = NULL;
    void *text = NULL;
    size_t tl = 0;
    if (!b->d->as_deps || amp__cpu_read_file(b->dirfd, "as.d", b->as_dep, &text, &tl) != AMP_OK) return AMP_OK;
    char *list = amp__cpu_deps(text, "kernel.cpp", b->dir, false, true, false);
    free(text);
    amp_status st = AMP_OK;
    if (!list) return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "no memory for the list of files the assembler read");
    size_t n = 0;
    for (char *p = list; *p;) {
        char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) + 1 : strlen(p);
        if (!strncmp(p, "?<artificial>\n", 14)) {
            p += len;
            continue;
        }
        if (p[0] == '?' && p[1] != '/') {
            st = amp__fail(AMP_ERROR_COMPILE, "compiling %s: the assembler read '%.*s' (a .include or .incbin in the "
                           "kernel's inline asm) by a name relative to the working directory, which hipamp never "
                           "reads from and cannot key; name the file by its absolute path",
                           b->source_name, (int)(len - 1 - (nl != NULL)), p + 1);
            goto fail;
        }
        memmove(list + n, p, len);
        n += len;
        p += len;
    }
    list[n] = '\0';
    if (n) *names = list;
    else free(list);
    return AMP_OK;
fail:
    free(list);
    return st;
}

/* The module, and the files the compiler read (none when it wrote no
 * dependency file: nothing fails for that) and libclang read for the loop
 * versions (their text holds what it made of those files: a type's
 * spelling), all checked by lib/core/program.c. */
static amp_status amp__cpu_build_outputs(amp__cpu_build *b)
{
    amp_status st = amp__cpu_read_file(b->dirfd, "kernel.so", b->so, &b->out->bin, &b->out->bin_size);
    if (st != AMP_OK) return st;
    /* A compiler that said it succeeded but wrote something else (a
     * wrapper's mistake): the build's failure, said as one, not a module
     * the loader then refuses. */
    if (!amp__cpu_elf_is_shared_object(b->out->bin, b->out->bin_size)) {
        const unsigned char *c = b->out->bin;
        char head[40] = "";
        for (size_t i = 0, n = 0; i < b->out->bin_size && i < 8; ++i)
            n += (size_t)snprintf(head + n, sizeof head - n, "%s%02x", i ? " " : "", c[i]);
        return amp__fail(AMP_ERROR_COMPILE,
                         "compiling %s for the CPU accelerator: the compiler (%.120s) exited 0 but wrote %zu bytes "
                         "that are no ELF shared object (they begin %s)",
                         b->source_name, b->d->cxx_text, b->out->bin_size, head[0] ? head : "nowhere: it is empty");
    }
    void *text = NULL;
    size_t tl = 0;
    char *as_read = NULL;
    if ((st = amp__cpu_as_read(b, &as_read)) != AMP_OK) return st;
    bool listed = amp__cpu_read_file(b->dirfd, "kernel.d", b->dep, &text, &tl) == AMP_OK;
    bool loops_read = b->have_loops && b->lres.read;
    if (!listed && !loops_read && !as_read) return AMP_OK;
    b->dep_text = text;
    b->out->deps = listed ? amp__cpu_deps(b->dep_text, b->src, b->pch_used ? amp__cpu_pch_dir() : NULL, false, false,
                                          b->pch_used && b->d->clang_gnu_as)
                          : amp__strdup("");
    if (b->out->deps && loops_read) b->out->deps = amp__cpu_deps_join(b->out->deps, b->lres.read);
    if (b->out->deps && as_read) b->out->deps = amp__cpu_deps_join(b->out->deps, as_read);
    free(as_read);
    if (!b->out->deps) return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "no memory for the list of files the compiler read");
    return AMP_OK;
}

/* The compiler's precompiled header of the library's part, prepared
 * (b->pch, or NULL; b->pch_making while it is made beside the build): the
 * compiler's words up to the user's options, less -iquote DIR (the
 * library's part includes only <...> headers). Touches only those two of
 * b, which the caller reads after it returns. */
static void *amp__cpu_build_pch(void *arg)
{
    amp__cpu_build *b = arg;
    b->pch = amp__cpu_pch_prepare(b->d, b->job, b->source, b->lib_len, b->argv,
                                  b->user_from - (b->job->source_dir ? 2 : 0), b->envp, b->deadline, &b->pch_making);
    return NULL;
}

/* Everything a build made, the directory included; the module too when
 * the build failed (st). */
static void amp__cpu_build_free(amp__cpu_build *b, amp_status st)
{
    if (st != AMP_OK) {
        free(b->out->bin);
        b->out->bin = NULL;
        b->out->bin_size = 0;
    }
    if (b->dir[0]) amp__cpu_remove_dir(b->dir);
    if (b->dirfd >= 0) close(b->dirfd);
    free(b->dep_text);
    free(b->note_src);
    free(b->loops);
    amp__cpu_loops_free(&b->lres);
    free(b->log);
    free(b->opts);
    free(b->argv);
    free(b->envp);
}

amp_status amp__cpu_compile(amp__cpu_device *d, const amp__compile_job *job, amp__compile_output *out)
{
    out->bin = NULL;
    out->bin_size = 0;
    out->deps = NULL;
    out->no_store[0] = 0;
    if (!d->available) return amp__fail(AMP_ERROR_UNSUPPORTED, "CPU accelerator cannot compile: %s", d->reason);
    if (!job->source) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "CPU accelerator: source is NULL");
    /* On the heap: its paths make it 34 KB, too much for the caller's
     * stack (a thread of 128 KiB, musl's default, builds too). */
    amp__cpu_build *b = calloc(1, sizeof *b);
    if (!b) return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "CPU accelerator: no memory for a build");
    /* Field by field: a compound literal would be a second copy on the
     * stack in an unoptimized build. */
    b->d = d;
    b->job = job;
    b->out = out;
    b->source = job->source;
    b->source_name = job->source_name ? job->source_name : "kernel source";
    b->dirfd = -1;
    /* The deadline: the core passes AMP_COMPILE_TIMEOUT as job->timeout_s
     * (0 only from a caller that set none), counted from the build's start:
     * a compiler that hung answering the scan's question (its include
     * directories) has already spent it. */
    b->timeout = job->timeout_s ? job->timeout_s : AMP__CPU_TIMEOUT_DEFAULT;
    uint64_t now = amp__now_ns(), began = job->started_ns && job->started_ns <= now ? job->started_ns : now;
    b->waited_s = (double)(now - began) / 1e9;
    b->deadline = began + (uint64_t)b->timeout * 1000000000ull;
    amp_status st;
    if ((st = amp__cpu_build_dir(b)) != AMP_OK) goto fail;
    if ((st = amp__cpu_build_env(b)) != AMP_OK) goto fail;
    if ((st = amp__cpu_build_argv(b)) != AMP_OK) goto fail;
    b->lib_len = amp__unit_library_end(b->source);
    /* The compiler's header is read (tens of MiB, from the disk cache or
     * the pack, checked and written out) while the loop transformation
     * runs in its child: a thread of its own then, joined before the first
     * try. */
    uint64_t t_start = amp__now_ns();
    pthread_t pch_thread;
    bool pch_threaded = !amp__cpu_no_loops(b) && pthread_create(&pch_thread, NULL, amp__cpu_build_pch, b) == 0;
    if (!pch_threaded) amp__cpu_build_pch(b);
    st = amp__cpu_build_loops(b);
    uint64_t t_loops = amp__now_ns();
    if (pch_threaded) pthread_join(pch_thread, NULL);
    uint64_t t_pch = amp__now_ns();
    if (st != AMP_OK) goto fail;
    st = amp__cpu_build_try(b);
    uint64_t t_try = amp__now_ns();
    if (st != AMP_OK) goto fail;
    st = amp__cpu_build_outputs(b);
    if (st == AMP_OK && amp__env_flag("AMP_CPU_VERBOSE", false))
        fprintf(stderr,
                "hipamp: CPU build of %s: %.0f ms (%s %.0f ms, the precompiled header's wait %.0f ms, the compiler "
                "%.0f ms, the rest %.0f ms)\n",
                b->source_name, (amp__now_ns() - t_start) / 1e6,
                pch_threaded ? "the loop transformation" : "the precompiled header and the source written",
                (t_loops - t_start) / 1e6, (t_pch - t_loops) / 1e6, (t_try - t_pch) / 1e6,
                (amp__now_ns() - t_try) / 1e6);
fail:
    if (b->pch_making) amp__cpu_pch_wait();
    if (b->lpch_making) amp__cpu_loops_pch_wait();
    amp__cpu_build_free(b, st);
    free(b);
    return st;
}
