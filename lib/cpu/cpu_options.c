/* cpu_options.c — the user's compiler options the CPU accelerator refuses before its compiler runs: outputs, dumps and files of options of the compiler, preprocessor, assembler and linker, other toolchains and programs, inputs hidden in option words, and (with clang) what would bring back clang's own assembler. */
#include "cpu_internal.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const amp__cpu_sanitizer amp__cpu_sanitizers[AMP__CPU_NSANITIZERS] = {{"address", "libasan", "__asan_init"},
                                                                       {"thread", "libtsan", "__tsan_init"},
                                                                       {"hwaddress", "libhwasan", "__hwasan_init"},
                                                                       /* LeakSanitizer's runtime, loaded late, finds no
                                                                        * static TLS left (dlopen fails); UBSan's standalone
                                                                        * one loads late and is not here */
                                                                       {"leak", "liblsan", "__lsan_init"}};

/* A user's option the CPU accelerator cannot honour, refused before the
 * compiler runs (AMP_ERROR_INVALID_ARGUMENT naming it): the library sets the
 * output's kind, name and language and writes its own dependency file
 * (-E -S -c -r -o -x -M... -### --help --version -dump... -print...
 * -fsyntax-only -static -pie, their long spellings, a linker -o through
 * -Wl, or -Xlinker, would leave no module it can load, or write somewhere
 * else); -save-temps and -aux-info may write into the caller's working
 * directory; and a module built with -fsanitize=address, thread or
 * hwaddress makes the sanitizer's runtime end the process at dlopen unless
 * that runtime is loaded already (a program built with it; cpu_backend.c
 * checks a module's needed libraries again before loading it). Also what
 * writes files of its own (dumps, optimisation reports and a linker map to
 * a path, profiling data at the program's exit), runs other programs or
 * another toolchain (-wrapper, -B, -specs), reads options the check cannot
 * see (@file), or hands the preprocessor, assembler or linker an output or
 * a file of options (-Wp, -Wa, and -Wl, pieces, -Xpreprocessor,
 * -Xassembler and -Xlinker words: an assembler listing -a...=FILE, its
 * --MD FILE); clang's own such options when AMP_CXX is clang++ (a time
 * trace, profiles and optimisation records, a module cache, crash
 * reproducers' directory, serialised diagnostics, -Xclang words, LLVM
 * options naming files after -mllvm, another GCC installation or linker
 * program, plugins); and an option that
 * takes the next word as its value left without one (it would take the
 * library's own next word). */
/* Whether the piece (len bytes) of a -Wp, / -Wl, word (or the word after
 * -Xpreprocessor / -Xlinker) names a file the tool writes or reads options
 * from, or code it loads (a linker plugin; lld's and gold's reproducer
 * archive, extraction report, LTO objects and cache, temporaries); as: of
 * a -Wa, word or after -Xassembler, where the listing options
 * -a[cdghlmns]=FILE write one too. */
static bool amp__cpu_tool_output(const char *piece, size_t len, bool as)
{
    static const char *const tool[] = {"-o",           "--output",      "-M",           "-Map",
                                       "--Map",        "--dependency-file", "@",        "-plugin",
                                       "--plugin",     "--reproduce",   "--why-extract", "--lto-obj-path",
                                       "--thinlto-cache-dir", "--save-temps", "-save-temps", "--print-archive-stats",
                                       "--error-handling-script", "-error-handling-script"};
    static const char *const assembler[] = {"-o", "--MD", "@"};
    const char *const *list = as ? assembler : tool;
    size_t nlist = as ? sizeof assembler / sizeof assembler[0] : sizeof tool / sizeof tool[0];
    for (size_t k = 0; k < nlist; ++k)
        if (!strncmp(piece, list[k], strlen(list[k]))) return true;
    if (as && len > 2 && piece[0] == '-' && piece[1] == 'a' && memchr(piece, '=', len)) return true;
    /* GNU ld and as take any unambiguous abbreviation of a long option
     * (--Ma=FILE is --Map, --outp is --output, as's --M is --MD), and ld
     * long options after one dash too (-Ma=FILE): a name that begins one
     * of the long names above is refused (one letter after one dash is a
     * short option: -M, -o above). */
    if (len < 2 || piece[0] != '-') return false;
    bool two = piece[1] == '-';
    const char *name = piece + 1 + two;
    size_t nlen = strcspn(name, "=,");
    if (nlen > len - 1 - two) nlen = len - 1 - two;
    if (nlen == 0 || (!two && (as || nlen < 2))) return false;
    for (size_t k = 0; k < nlist; ++k) {
        const char *full = list[k];
        if (full[0] != '-' || full[1] == '\0') continue;
        full += full[1] == '-' ? 2 : 1;
        if (strlen(full) > 1 && nlen <= strlen(full) && !strncmp(name, full, nlen)) return true;
    }
    return false;
}

/* Options of GCC's and clang's whose value is the next word. */
static const char *const amp__cpu_takes_next[] = {
    "-include", "-imacros", "-isystem", "-idirafter", "-iquote", "-iprefix", "-iwithprefix", "-iwithprefixbefore",
    "-isysroot", "-imultilib", "-cxx-isystem", "-isystem-after", "-iwithsysroot", "-iframework", "-F", "-I", "-D",
    "-U", "-A", "-L", "-l", "-u", "-e", "-T", "-z", "--param", "-Xlinker", "-Xpreprocessor", "-Xassembler",
    "--include", "--sysroot", "-mllvm", "-target", NULL};

static amp_status amp__cpu_check_user_options(char *const *words, size_t n)
{
    static const char *const exact[] = {"-E",      "-S",          "-c",         "-r",         "-###",
                                        "-static", "-static-pie", "-pie",       "-aux-info",  "-fsyntax-only",
                                        "--compile", "--preprocess", "--assemble", "--version", "-wrapper",
                                        "-fprofile-arcs", "-ftest-coverage", "--coverage",
                                        /* clang's: a time trace, profiles written at exit, LLVM's optimisation
                                         * record, a module cache in the user's home */
                                        "-ftime-trace", "-fmodules", "-fcxx-modules",
                                        /* GCC's: each subprocess's times appended to a file of the caller's */
                                        "-time"};
    static const char *const prefix[] = {"-o",          "-x",         "-M",     "--help",   "-save-temps",
                                         "--save-temps", "--output",  "--language", "-dump", "-print-",
                                         "--print-",    "@",          "-B",     "-specs",   "--specs",
                                         "-fdump-",     "-fprofile-generate", "-fprofile-dir", "-fprofile-note",
                                         /* clang's files of its own (-MJ is a -M), another toolchain or linker,
                                          * code loaded into the compiler, options passed to its front end
                                          * unseen; GCC's module mapper (which may run a program) */
                                         "-ftime-trace=", "-fprofile-instr-generate", "-fcs-profile-generate",
                                         "-fsave-optimization-record", "-foptimization-record-file",
                                         "-fmodules-cache-path", "-fcrash-diagnostics-dir", "-fproc-stat-report",
                                         "-fmemory-profile", "--serialize-diagnostics", "-serialize-diagnostics",
                                         "-gen-cdb-fragment-path", "-fmodule-output", "-ccc-", "--gcc-toolchain",
                                         "-gcc-toolchain", "--gcc-install-dir", "--ld-path", "-fplugin",
                                         "-fpass-plugin", "-Xclang", "-fmodule-mapper", "-time="};
    bool sanitize[AMP__CPU_NSANITIZERS] = {false};
    const char *sanitize_word[AMP__CPU_NSANITIZERS] = {NULL};
    for (size_t i = 0; i < n; ++i) {
        const char *w = words[i];
        bool bad = false;
        for (size_t k = 0; k < sizeof exact / sizeof exact[0] && !bad; ++k) bad = !strcmp(w, exact[k]);
        for (size_t k = 0; k < sizeof prefix / sizeof prefix[0] && !bad; ++k)
            bad = !strncmp(w, prefix[k], strlen(prefix[k]));
        /* -fopt-info's report to a file of the caller's naming */
        if (!bad && !strncmp(w, "-fopt-info", 10)) bad = strchr(w, '=') != NULL;
        /* a linker that is a program of the caller's naming, not GCC's or
         * clang's choice among bfd, gold, lld, mold */
        if (!bad && !strncmp(w, "-fuse-ld=", 9)) bad = strchr(w, '/') != NULL;
        /* an output through the preprocessor, the assembler or the linker:
         * -Wl,-o,FILE, -Wl,-Map=FILE, -Wp,-MD,FILE, -Wa,-adhln=FILE,
         * -Xlinker -o */
        if (!bad && (!strncmp(w, "-Wl,", 4) || !strncmp(w, "-Wp,", 4) || !strncmp(w, "-Wa,", 4))) {
            bool as = w[2] == 'a';
            for (const char *p = w + 3; p && !bad; p = strchr(p + 1, ','))
                bad = amp__cpu_tool_output(p + 1, strcspn(p + 1, ","), as);
        }
        const char *then = "";
        if (!bad && (!strcmp(w, "-Xlinker") || !strcmp(w, "-Xpreprocessor") || !strcmp(w, "-Xassembler")) &&
            i + 1 < n) {
            bad = amp__cpu_tool_output(words[i + 1], strlen(words[i + 1]), w[2] == 'a');
            if (bad) then = words[i + 1];
        }
        /* LLVM's options that write files: -info-output-file=, the CFG
         * dumps (-dot-cfg...), optimisation remarks to a file */
        if (!bad && !strcmp(w, "-mllvm") && i + 1 < n) {
            const char *o = words[i + 1];
            bad = strstr(o, "file") || strstr(o, "output") || !strncmp(o, "-dot-", 5) || !strncmp(o, "-view-", 6);
            if (bad) then = o;
        }
        if (!bad && i + 1 == n)
            for (size_t k = 0; amp__cpu_takes_next[k]; ++k)
                if (!strcmp(w, amp__cpu_takes_next[k]))
                    return amp__fail(AMP_ERROR_INVALID_ARGUMENT,
                                     "CPU accelerator: compiler option '%s' needs a value after it, and it is the "
                                     "last of the options",
                                     w);
        /* A call between two functions in one section is an offset the
         * assembler resolves, which the module keeps no record of: a
         * helper's tile_static would count for no kernel that calls it. */
        if (!bad && !strcmp(w, "-fno-function-sections"))
            return amp__fail(AMP_ERROR_INVALID_ARGUMENT,
                             "CPU accelerator: compiler option '%s' is not allowed: the library reads which kernels "
                             "call which functions (and so whose tile_static memory each uses) from the relocations "
                             "between functions in sections of their own",
                             w);
        if (bad)
            return amp__fail(AMP_ERROR_INVALID_ARGUMENT,
                             "CPU accelerator: compiler option '%s%s%s' is not allowed: the library chooses what the "
                             "compiler writes and where (a shared object it loads) and the language (C++17)",
                             w, then[0] ? " " : "", then);
        /* the sanitizers left on at the end (-fno-sanitize= takes them off) */
        bool on = !strncmp(w, "-fsanitize=", 11), off = !strncmp(w, "-fno-sanitize=", 14);
        if (!on && !off) continue;
        for (const char *p = strchr(w, '=') + 1; *p;) {
            size_t len = strcspn(p, ",");
            for (int k = 0; k < AMP__CPU_NSANITIZERS; ++k)
                if ((len == strlen(amp__cpu_sanitizers[k].option) && !strncmp(p, amp__cpu_sanitizers[k].option, len)) ||
                    (off && len == 3 && !strncmp(p, "all", 3))) {
                    sanitize[k] = on;
                    sanitize_word[k] = w;
                }
            p += len + (p[len] == ',');
        }
    }
    for (int k = 0; k < AMP__CPU_NSANITIZERS; ++k)
        if (sanitize[k] && !dlsym(RTLD_DEFAULT, amp__cpu_sanitizers[k].init))
            return amp__fail(AMP_ERROR_INVALID_ARGUMENT,
                             "CPU accelerator: compiler option '%s' needs the sanitizer's runtime in the process "
                             "already (the program built with -fsanitize=%s); loading the module would end the "
                             "process",
                             sanitize_word[k], amp__cpu_sanitizers[k].option);
    return AMP_OK;
}

/* Linker words that bring the module code or data from a file, or tell the
 * dynamic loader where to look for its libraries: a library (-l, -L), an
 * object or archive named to the linker (-Wl,FILE, -Xlinker FILE), a
 * linker script or list (-T, --script, --version-script, --dynamic-list,
 * --just-symbols, -R FILE), a run path (-rpath, -R DIR: the module's
 * libraries, libstdc++ among them, looked up first in a directory another
 * user may write). The compiler's dependency list names only what the
 * preprocessor read, so nothing would key or check these files: an archive
 * in a sticky directory another user wrote was linked in and ran as the
 * user. A kernel that needs a library's function gets it from the program
 * (its module resolves against what the process has loaded). ld options
 * whose value is the next piece (-z now, -soname NAME, -e SYM, -u SYM,
 * ...) pass. */
static const char *const amp__ld_takes_next[] = {"-z", "-soname", "-h", "-e", "--entry", "-u", "--undefined", "-y",
                                                 "--trace-symbol", "-m", "-init", "-fini", "--defsym",
                                                 "--exclude-libs", "--hash-style", "-O",
                                                 "--sort-section", "--require-defined", "--wrap", NULL};

static bool amp__ld_piece_reads(const char *p, size_t len)
{
    /* options and their joined values (-lm, -L/dir, -Tfile, -R/dir,
     * --script=FILE); the one-letter ones below only alone (-f FILE, not
     * -fini) */
    static const char *const joined[] = {"-l", "-L", "--library", "-T", "--script", "-dT", "--default-script",
                                         "--version-script", "--dynamic-list", "--just-symbols", "-R", "-rpath",
                                         "--rpath", "--retain-symbols-file", "--auxiliary", "--filter", "--audit",
                                         "--depaudit", "--library-path"};
    static const char *const alone[] = {"-f", "-F", "-P", "-Y"};
    if (!len) return false;
    if (p[0] != '-') return true; /* an input file */
    for (size_t k = 0; k < sizeof joined / sizeof joined[0]; ++k)
        if (!strncmp(p, joined[k], strlen(joined[k]))) return true;
    for (size_t k = 0; k < sizeof alone / sizeof alone[0]; ++k)
        if (len == 2 && !strncmp(p, alone[k], 2)) return true;
    return false;
}

static amp_status amp__cpu_refuse_link_inputs(char *const *words, size_t n)
{
    static const char *const gcc[] = {"-l", "-L", "--library", "-T", "--script"};
    bool value_next = false; /* the next linker piece is the value of an ld option */
    for (size_t i = 0; i < n; ++i) {
        const char *w = words[i], *bad = NULL;
        for (size_t k = 0; k < sizeof gcc / sizeof gcc[0] && !bad; ++k)
            if (!strncmp(w, gcc[k], strlen(gcc[k]))) bad = w;
        if (!bad && (!strncmp(w, "-Wl,", 4) || (!strcmp(w, "-Xlinker") && i + 1 < n))) {
            const char *list = w[1] == 'W' ? w + 4 : words[++i];
            for (const char *p = list; p && !bad;) {
                size_t len = w[1] == 'W' ? strcspn(p, ",") : strlen(p);
                if (value_next) value_next = false;
                else if (amp__ld_piece_reads(p, len)) bad = p;
                else
                    for (size_t k = 0; amp__ld_takes_next[k]; ++k)
                        if (len == strlen(amp__ld_takes_next[k]) && !strncmp(p, amp__ld_takes_next[k], len))
                            value_next = true;
                p = w[1] == 'W' && p[len] == ',' ? p + len + 1 : NULL;
            }
            if (bad) {
                size_t len = w[1] == 'W' ? strcspn(bad, ",") : strlen(bad);
                return amp__fail(AMP_ERROR_INVALID_ARGUMENT,
                                 "CPU accelerator: compiler option '%s%s%s' hands the linker '%.*s', which would "
                                 "link a file or set a library path that hipamp's caches and checks of what the "
                                 "compiler read never see; a kernel calls a library's functions from the program "
                                 "(the module resolves against the libraries the process has loaded)",
                                 w[1] == 'W' ? w : "-Xlinker", w[1] == 'W' ? "" : " ", w[1] == 'W' ? "" : list,
                                 (int)len, bad);
            }
            continue;
        }
        if (bad)
            return amp__fail(AMP_ERROR_INVALID_ARGUMENT,
                             "CPU accelerator: compiler option '%s' names a library, library directory or linker "
                             "script, which hipamp's caches and checks of what the compiler read never see; a "
                             "kernel calls a library's functions from the program (the module resolves against "
                             "the libraries the process has loaded)",
                             w);
    }
    return AMP_OK;
}

/* Assembler words that are another input of the assembly: GNU as takes
 * every piece that is not an option as a file to assemble after the
 * compiler's output ('-' is its standard input, which then reads the
 * compiler's code; '--' makes every later piece a file), and --itbl reads
 * a file too. Only the preprocessor's reads are checked and keyed, so
 * -Wa,-,/tmp/x.s or -Xassembler FILE -Xassembler - assembled another
 * user's file into the module (and ran it), and an edit to it loaded the
 * stale cached module. Values of as options (-I DIR, --defsym SYM=V, x86's
 * -Q y, and the long options below, which getopt_long_only also takes
 * abbreviated and after one dash) are not files; an option not listed
 * here whose value is the next piece has that value refused, an error
 * rather than a file let through. GCC hands -Wa and -Xassembler pieces to
 * as in order, so a value may be in the next word. */
static const char *const amp__as_takes_next[] = {"defsym", "debug-prefix-map", "gdwarf-cie-version", "hash-size",
                                                 "listing-lhs-width", "listing-lhs-width2", "listing-rhs-width",
                                                 "listing-cont-lines", "elf-stt-common",
                                                 "generate-missing-build-notes", "size-check", "multibyte-handling",
                                                 "march", "mtune", NULL};

static bool amp__as_piece_takes_next(const char *p, size_t len)
{
    if (len == 2 && (!strncmp(p, "-I", 2) || !strncmp(p, "-Q", 2))) return true;
    if (len < 3 || p[0] != '-' || memchr(p, '=', len)) return false;
    const char *name = p + 1 + (p[1] == '-');
    size_t nlen = len - (size_t)(name - p);
    for (size_t k = 0; amp__as_takes_next[k]; ++k)
        if (nlen >= 2 && nlen <= strlen(amp__as_takes_next[k]) && !strncmp(name, amp__as_takes_next[k], nlen))
            return true;
    return false;
}

/* --itbl FILE or --itbl=FILE, abbreviated (--it) or after one dash */
static bool amp__as_piece_is_itbl(const char *p, size_t len)
{
    if (len < 3 || p[0] != '-') return false;
    const char *name = p + 1 + (p[1] == '-');
    size_t nlen = strcspn(name, "=");
    if (nlen > len - (size_t)(name - p)) nlen = len - (size_t)(name - p);
    return nlen >= 2 && nlen <= 4 && !strncmp(name, "itbl", nlen);
}

static amp_status amp__cpu_refuse_assembler_inputs(char *const *words, size_t n)
{
    bool value_next = false; /* the next assembler piece is the value of an as option */
    for (size_t i = 0; i < n; ++i) {
        const char *w = words[i], *bad = NULL;
        if (strncmp(w, "-Wa,", 4) && (strcmp(w, "-Xassembler") || i + 1 >= n)) continue;
        bool wa = w[1] == 'W';
        const char *list = wa ? w + 4 : words[++i];
        for (const char *p = list; p && !bad;) {
            size_t len = wa ? strcspn(p, ",") : strlen(p);
            if (value_next) value_next = false;
            else if (!len || p[0] != '-' || len == 1 || (len == 2 && p[1] == '-') || amp__as_piece_is_itbl(p, len))
                bad = p;
            else value_next = amp__as_piece_takes_next(p, len);
            p = wa && p[len] == ',' ? p + len + 1 : NULL;
        }
        if (bad) {
            size_t len = wa ? strcspn(bad, ",") : strlen(bad);
            return amp__fail(AMP_ERROR_INVALID_ARGUMENT,
                             "CPU accelerator: compiler option '%s%s%s' hands the assembler '%.*s', which would "
                             "assemble or read a file ('-' is standard input, '--' makes what follows files) that "
                             "hipamp's caches and checks of what the compiler read never see; write the code in the "
                             "kernel's source (inline asm) instead",
                             wa ? w : "-Xassembler", wa ? "" : " ", wa ? "" : list, (int)len, bad);
        }
    }
    return AMP_OK;
}


/* clang, told to hand its assembly to GNU as (d->clang_gnu_as): an option
 * that turns its own assembler back on (-fintegrated-as), or LTO, whose
 * link-time assembler is clang's own, would assemble a kernel's inline asm
 * with no list of the files it read. */
static amp_status amp__cpu_refuse_clang_assembler(const amp__cpu_device *d, char *const *words, size_t n)
{
    for (size_t i = 0; d->clang_gnu_as && i < n; ++i) {
        const char *w = words[i];
        if (!strcmp(w, "-fintegrated-as") || !strcmp(w, "-integrated-as") ||
            (!strncmp(w, "-flto", 5) && strcmp(w, "-flto=none")))
            return amp__fail(AMP_ERROR_INVALID_ARGUMENT,
                             "CPU accelerator: option '%s' is refused with clang (%s): %s clang's own assembler, "
                             "which reads the files a kernel's inline asm names (.incbin, .include) without "
                             "listing them, so they would go unchecked; the build has GNU as assemble instead",
                             w, d->cxx[0],
                             strncmp(w, "-flto", 5) ? "it turns on" : "under LTO the asm is assembled at link time by");
    }
    return AMP_OK;
}

amp_status amp__cpu_refuse_user_options(const amp__cpu_device *d, char *const *words, size_t n)
{
    amp_status st;
    if ((st = amp__cpu_check_user_options(words, n)) != AMP_OK ||
        (st = amp__cpu_refuse_link_inputs(words, n)) != AMP_OK ||
        (st = amp__cpu_refuse_assembler_inputs(words, n)) != AMP_OK ||
        (st = amp__cpu_refuse_clang_assembler(d, words, n)) != AMP_OK)
        return st;
    return amp__options_refuse_inputs("CPU accelerator", words, n, amp__cpu_takes_next);
}
