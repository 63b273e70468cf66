/* option_checks.c — what a GPU build's options (amp_program_build's, amp_compile_for_target's) may not say: a target (the accelerator chooses it), another input file, or a file for hipRTC or NVRTC to load code from or to write. */
#include "gpu_driver.h"

#include "base/core.h"

#include <stdlib.h>
#include <string.h>

/* Options of clang's (hipRTC's) and NVRTC's that load code into the
 * compiler, read what becomes the kernels' code from a file, or write a
 * file of the caller's naming, matched as prefixes: nothing another local
 * user can write is ever executed, and the one thing a build writes is its
 * code object, where hipamp puts it. The include options are the include
 * scan's (it keys and checks every header a build reads). */
static const char *const file_options[] = {
    /* code loaded into the compiler, options handed to its front end unseen */
    "-fplugin", "-fpass-plugin", "-Xclang", "-Xarch", "-Xoffload-linker", "-ccc-",
    /* another toolchain, device library or response file */
    "-B", "@", "--rocm-path", "--rocm-device-lib-path", "--hip-path", "--hip-device-lib", "--cuda-path",
    "-specs", "--specs", "--ld-path",
    /* precompiled code: modules (clang), precompiled headers (NVRTC) */
    "-fmodule", "-fprebuilt-module", "-fcxx-modules", "-fimplicit-module-maps", "--create-pch", "-create-pch",
    "--use-pch", "-use-pch", "--pch", "-pch",
    /* files written: outputs, dependencies, intermediates, traces, records, profiles */
    "-o", "--output", "-M", "--generate-dependencies", "--dependency-output", "-save-temps", "--save-temps",
    "-ftime-trace", "--fdevice-time-trace", "-fdevice-time-trace", "--time", "-time", "-fsave-optimization-record",
    "-foptimization-record-file", "-fprofile-generate", "-fprofile-instr-generate", "-fcs-profile-generate",
    "-fcrash-diagnostics-dir", "-fproc-stat-report", "-fmemory-profile", "--serialize-diagnostics",
    "-serialize-diagnostics", "-gen-cdb-fragment-path", "-objcmt",
    /* the preprocessor's, assembler's and linker's own options */
    "-Wl,", "-Wp,", "-Wa,", "-Xlinker", "-Xpreprocessor", "-Xassembler",
};

/* A value of -mllvm (LLVM's options) or -Xptxas / --ptxas-options that
 * writes or loads a file: -info-output-file=, the CFG dumps (-dot-cfg...),
 * optimisation remarks to a file, a plugin. */
static bool names_a_file(const char *v)
{
    return strstr(v, "file") || strstr(v, "output") || strstr(v, "load") || strstr(v, "plugin") ||
           !strncmp(v, "-dot-", 5) || !strncmp(v, "-view-", 6);
}

/* AMP_ERROR_INVALID_ARGUMENT naming the first of argv's words that names a
 * file for the compiler to load or write. */
static amp_status refuse_file_options(char *const *argv, size_t argc)
{
    for (size_t i = 0; i < argc; ++i) {
        const char *w = argv[i], *then = "";
        bool bad = false;
        for (size_t k = 0; k < sizeof file_options / sizeof file_options[0] && !bad; ++k)
            bad = !strncmp(w, file_options[k], strlen(file_options[k]));
        if (!bad && (!strcmp(w, "-mllvm") || !strcmp(w, "-Xptxas") || !strcmp(w, "--ptxas-options")) && i + 1 < argc &&
            names_a_file(argv[i + 1]))
            bad = true, then = argv[i + 1];
        if (!bad && (!strncmp(w, "-mllvm=", 7) || !strncmp(w, "-Xptxas=", 8) || !strncmp(w, "--ptxas-options=", 16)))
            bad = names_a_file(strchr(w, '=') + 1);
        if (bad)
            return amp__fail(AMP_ERROR_INVALID_ARGUMENT,
                             "GPU compile: compiler option '%s%s%s' is not allowed: it loads code into the compiler, "
                             "reads code from a file hipamp does not check, or writes a file (the library chooses "
                             "what the compiler reads and writes, and where)",
                             w, then[0] ? " " : "", then);
    }
    return AMP_OK;
}

amp_status amp__gpu_refuse_target_options(const char *options, const char *const *words)
{
    /* NVRTC's and clang's (hipRTC's) options whose value may be the next word */
    static const char *const takes_next[] = {"-I", "-D", "-U", "-isystem", "-iquote", "-idirafter", "-include",
                                             "-imacros", "--include-path", "--define-macro", "--undefine-macro",
                                             "--pre-include", "-mllvm", "-Xclang", "-Xptxas", "--ptxas-options",
                                             NULL};
    for (size_t i = 0; options && words[i]; ++i)
        if (strstr(options, words[i]))
            return amp__fail(AMP_ERROR_INVALID_ARGUMENT,
                             "options '%s' name a target (%s); the target is chosen by the accelerator", options,
                             words[i]);
    char **argv = NULL, *storage = NULL;
    size_t argc = 0;
    amp_status st = amp__split_options(options, 0, 0, &argv, &argc, &storage);
    /* A file option first: its value would be taken for another input. */
    if (st == AMP_OK) st = refuse_file_options(argv, argc);
    if (st == AMP_OK) st = amp__options_refuse_inputs("GPU compile", argv, argc, takes_next);
    free(argv);
    free(storage);
    return st;
}
