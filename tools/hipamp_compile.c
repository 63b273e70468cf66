/* hipamp_compile.c — the hipamp-compile tool: build a kernel file for a named AMD (hipRTC) or NVIDIA (NVRTC) target with no GPU present, write the code object and print each AMD kernel's resources; or (--warm) build kernel files and the built-in algorithms for this machine's accelerators into the compile cache ahead of a batch job. */
#include "tool_output.h"

#include <hipamp.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: hipamp-compile --target TARGET [-o OUT.co] [--options \"FLAGS\"] FILE.hip\n"
            "       hipamp-compile --list-targets\n"
            "       hipamp-compile --warm [--accelerator PATH]... [--algorithms] [--options \"FLAGS\"] [FILE.hip]...\n"
            "\n"
            "Compiles FILE.hip (AMP_KERNEL / AMP_TILED_KERNEL source) with no GPU present: with\n"
            "hipRTC for an AMD target such as gfx90a, gfx1030 or gfx90a:xnack+ (then prints each\n"
            "kernel's LDS, registers and spills), or with NVRTC for an NVIDIA one such as sm_90;\n"
            "writes the code object to OUT.co (default: FILE with .co; -o - for standard output,\n"
            "the kernel table then goes to standard error). Quoted #includes are found beside\n"
            "FILE.hip, then as FLAGS say. The code object is written whole or not at all (a\n"
            "temporary file renamed into place; through a symbolic link, the file it leads to);\n"
            "a character device or a FIFO (/dev/stdout to a pipe) is written in place. Refused:\n"
            "a FILE.hip with a NUL byte, an OUT.co that is FILE.hip, a directory or a symbolic\n"
            "link of another user's.\n"
            "\n"
            "--warm builds each FILE.hip (as amp_program_build_file, with FLAGS) and, with\n"
            "--algorithms, every built-in algorithm program (amp_algorithms_prepare) for each\n"
            "accelerator of this machine (or each --accelerator PATH: cpu, cuda:0, hip:1, ...)\n"
            "into the compile cache (AMP_CACHE_DIR; AMP_CACHE_SHARED=group for a project's\n"
            "shared directory), so that a job's first launches load instead of compiling. Run it\n"
            "on a node of the kind the job will use, with the job's environment: the cache is\n"
            "keyed by the compiler, the device's architecture, the kernel's text and its file's\n"
            "path as the job spells it (./k.hip and k.hip are two entries). Built-in programs\n"
            "the library's prebuilt pack holds are loaded from it, not cached again. A build\n"
            "that could not be stored (a computed #include, a read-only cache) is an error.\n"
            "Exit status: 0 written, 1 a compile, input or output error (or a target name this\n"
            "machine's compilers do not know), 2 a usage error (or a TARGET not spelt as a target).\n");
}

/* The library's own list: exactly what --target accepts (AMD processors
 * from comgr, plus :sramecc+/- and :xnack+/- where they have them; NVIDIA
 * sm_NN from NVRTC). */
static int list_targets(void)
{
    size_t n = 0;
    if (amp_compile_targets(NULL, 0, &n) != AMP_OK) {
        fprintf(stderr, "hipamp-compile: %s\n", amp_last_error());
        return 1;
    }
    const char **names = calloc(n ? n : 1, sizeof *names);
    if (!names) {
        fprintf(stderr, "hipamp-compile: out of memory\n");
        return 1;
    }
    amp_compile_targets(names, n, &n);
    for (size_t i = 0; i < n; ++i) puts(names[i]);
    free(names);
    if (n == 0) fprintf(stderr, "hipamp-compile: no runtime compiler found (neither comgr/hipRTC nor NVRTC)\n");
    return n ? 0 : 1;
}

/* --------------------------------------------------------------- --warm */

/* Builds for one accelerator; 0 when all built. */
static int warm_one(amp_accelerator *acc, const char *name, const char *const *files, int nfiles, const char *options,
                    bool algorithms)
{
    int rc = 0;
    for (int i = 0; i < nfiles; ++i) {
        amp_cache_info before, after;
        amp_cache_get_info(&before);
        amp_program *p = NULL;
        amp_status st = amp_program_build_file(acc, files[i], options, &p);
        amp_cache_get_info(&after);
        if (st != AMP_OK) {
            fprintf(stderr, "hipamp-compile: %s on %s: %s: %s\n", files[i], name, amp_status_name(st), amp_last_error());
            rc = 1;
            continue;
        }
        amp_program_destroy(p);
        /* Nothing for the job to load: what warming is for did not happen. */
        if (after.uncacheable_builds > before.uncacheable_builds) {
            fprintf(stderr, "hipamp-compile: %s on %s: compiled, but not stored in the cache: %s\n", files[i], name,
                    after.last_uncacheable);
            rc = 1;
            continue;
        }
        printf("%s: %s: %s\n", name, files[i],
               after.disk_stores > before.disk_stores ? "compiled, stored in the cache"
               : after.disk_hits > before.disk_hits   ? "already in the cache"
                                                      : "built");
    }
    if (algorithms) {
        amp_cache_info before, after;
        amp_prebuilt_info pb0, pb1;
        amp_cache_get_info(&before);
        amp_prebuilt_get_info(&pb0);
        amp_status st = amp_algorithms_prepare(acc);
        amp_cache_get_info(&after);
        amp_prebuilt_get_info(&pb1);
        if (st != AMP_OK) {
            fprintf(stderr, "hipamp-compile: the built-in algorithms on %s: %s: %s\n", name, amp_status_name(st),
                    amp_last_error());
            return 1;
        }
        printf("%s: built-in algorithms: %llu from the prebuilt pack, %llu already in the cache, %llu compiled and "
               "stored\n",
               name, (unsigned long long)(pb1.hits - pb0.hits), (unsigned long long)(after.disk_hits - before.disk_hits),
               (unsigned long long)(after.disk_stores - before.disk_stores));
        if (after.uncacheable_builds > before.uncacheable_builds) {
            fprintf(stderr, "hipamp-compile: the built-in algorithms on %s: %llu compiled but not stored in the cache: "
                            "%s\n",
                    name, (unsigned long long)(after.uncacheable_builds - before.uncacheable_builds),
                    after.last_uncacheable);
            return 1;
        }
    }
    return rc;
}

static int warm_main(int argc, char **argv)
{
    const char *accs[32], *files[256], *options = NULL;
    int naccs = 0, nfiles = 0;
    bool algorithms = false;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (!strcmp(a, "--warm")) continue;
        /* --accelerator PATH and --options FLAGS, or (as the compile mode
         * takes them) --accelerator=PATH and --options=FLAGS. */
        bool is_acc = !strcmp(a, "--accelerator") || !strncmp(a, "--accelerator=", 14);
        bool is_opt = !strcmp(a, "--options") || !strncmp(a, "--options=", 10);
        if (!strcmp(a, "--algorithms")) algorithms = true;
        else if (is_acc || is_opt) {
            const char *eq = strchr(a, '='), *name = is_acc ? "--accelerator" : "--options";
            if (!eq && i + 1 >= argc) { fprintf(stderr, "hipamp-compile: %s needs a value\n", a); return 2; }
            const char *v = eq ? eq + 1 : argv[++i];
            if (is_opt && options) {
                fprintf(stderr, "hipamp-compile: %s given twice ('%s', then '%s')\n", name, options, v);
                return 2;
            }
            if (is_opt) options = v;
            else if (naccs == 32) { fprintf(stderr, "hipamp-compile: more than 32 --accelerator\n"); return 2; }
            else accs[naccs++] = v;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "hipamp-compile: unknown option '%s' with --warm\n", a);
            usage(stderr);
            return 2;
        } else if (nfiles == 256) {
            fprintf(stderr, "hipamp-compile: more than 256 files\n");
            return 2;
        } else files[nfiles++] = a;
    }
    if (!nfiles && !algorithms) {
        fprintf(stderr, "hipamp-compile: --warm needs a FILE.hip or --algorithms\n");
        return 2;
    }
    amp_cache_info ci = {0};
    if (amp_cache_get_info(&ci) != AMP_OK) {
        fprintf(stderr, "hipamp-compile: cannot read the compile cache's state: %s\n", amp_last_error());
        return 1;
    }
    if (!ci.disk_enabled) {
        fprintf(stderr, "hipamp-compile: the compile cache is off (%s): there is nothing to warm\n", ci.reason);
        return 1;
    }
    printf("compile cache: %s\n", amp_cache_dir());
    amp_accelerator *list[64];
    size_t n = 0;
    if (naccs) {
        for (int i = 0; i < naccs; ++i)
            if (amp_accelerator_find(accs[i], &list[n]) == AMP_OK) ++n;
            else {
                fprintf(stderr, "hipamp-compile: --accelerator %s: %s\n", accs[i], amp_last_error());
                return 1;
            }
    } else if (amp_accelerator_list(list, 64, &n) != AMP_OK) {
        fprintf(stderr, "hipamp-compile: %s\n", amp_last_error());
        return 1;
    }
    int rc = 0, warmed = 0;
    for (size_t i = 0; i < n && i < 64; ++i) {
        amp_accelerator_info info;
        if (amp_accelerator_get_info(list[i], &info) != AMP_OK) continue;
        if (!info.is_available) {
            if (naccs) {
                fprintf(stderr, "hipamp-compile: %s cannot build programs: %s\n", info.device_path,
                        info.unavailable_reason);
                rc = 1;
            } else printf("%s: skipped (%s)\n", info.device_path, info.unavailable_reason);
            continue;
        }
        if (warm_one(list[i], info.device_path, files, nfiles, options, algorithms)) rc = 1;
        warmed++;
    }
    if (!warmed && !rc) {
        fprintf(stderr, "hipamp-compile: no accelerator here can build programs\n");
        rc = 1;
    }
    if (!tool_stdout_close("hipamp-compile")) rc = 1;
    return rc;
}

int main(int argc, char **argv)
{
    tool_start();
    /* --warm as an option, not as the value of one ("-o --warm"). */
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--target") || !strcmp(argv[i], "-o") || !strcmp(argv[i], "--options") ||
            !strcmp(argv[i], "--accelerator"))
            ++i;
        else if (!strcmp(argv[i], "--warm"))
            return warm_main(argc, argv);
    }
    const char *target = NULL, *out = NULL, *options = NULL, *input = NULL;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (!strcmp(a, "--list-targets")) {
            /* Alone: beside a compile's arguments it listed, compiled
             * nothing and said nothing of them. */
            if (argc != 2) {
                fprintf(stderr, "hipamp-compile: --list-targets takes no other argument\n");
                return 2;
            }
            int rc = list_targets();
            return tool_stdout_close("hipamp-compile") || rc ? rc : 1;
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return tool_stdout_close("hipamp-compile") ? 0 : 1;
        }
        const char **slot = NULL, *v = NULL, *name = a;
        if (!strcmp(a, "--target") || !strcmp(a, "-o") || !strcmp(a, "--options")) {
            if (i + 1 >= argc) { fprintf(stderr, "hipamp-compile: %s needs a value\n", a); return 2; }
            v = argv[++i];
            slot = !strcmp(a, "--target") ? &target : !strcmp(a, "-o") ? &out : &options;
        } else if (!strncmp(a, "--target=", 9)) {
            v = a + 9, slot = &target, name = "--target";
        } else if (!strncmp(a, "--options=", 10)) {
            v = a + 10, slot = &options, name = "--options";
        }
        if (slot) {
            /* The last would win without a word: a script's second --target
             * built for a target it did not mean. */
            if (*slot) {
                fprintf(stderr, "hipamp-compile: %s given twice ('%s', then '%s')\n", name, *slot, v);
                return 2;
            }
            *slot = v;
        } else if (a[0] == '-' && a[1]) { fprintf(stderr, "hipamp-compile: unknown option '%s'\n", a); usage(stderr); return 2; }
        else if (input) { fprintf(stderr, "hipamp-compile: more than one input file (%s, %s)\n", input, a); return 2; }
        else input = a;
    }
    if (!target || !input) {
        fprintf(stderr, "hipamp-compile: %s\n", !target ? "--target is required" : "no input file");
        usage(stderr);
        return 2;
    }
    if (!tool_target_shaped(target)) {
        fprintf(stderr,
                "hipamp-compile: '%s' is not a target name (sm_NN for NVIDIA, gfxNNN or gfxNNN:feature+ for AMD; "
                "--list-targets lists those this machine can build for)\n",
                target);
        return 2;
    }

    int rc = 1;
    char *outpath = NULL;
    amp_code_object *co = NULL;
    if (!out) {
        size_t n = strlen(input);
        const char *dot = strrchr(input, '.');
        const char *slash = strrchr(input, '/');
        if (dot && (!slash || dot > slash)) n = (size_t)(dot - input);
        outpath = malloc(n + 4);
        if (!outpath) { fprintf(stderr, "hipamp-compile: out of memory\n"); goto done; }
        memcpy(outpath, input, n);
        memcpy(outpath + n, ".co", 4);
        out = outpath;
    }
    /* Checked before compiling: "hipamp-compile x.co" would replace its input. */
    const char *inputs[] = {input};
    if (!tool_out_allowed("hipamp-compile", out, inputs, 1, NULL, 0)) { rc = 2; goto done; }
    /* A directory of OUT.co that is missing is said before the compile (an
     * output error, exit status 1), not after it. */
    if (!tool_out_reachable("hipamp-compile", out)) goto done;
    /* The library reads the file as amp_program_build_file does: quoted
     * includes beside it under that function's rule (a header another user
     * could have put there is refused), the log naming the file. */
    amp_status st = amp_compile_file_for_target(target, input, options, &co);
    if (st != AMP_OK) {
        fprintf(stderr, "hipamp-compile: %s: %s\n", amp_status_name(st), amp_last_error());
        goto done;
    }
    const void *data = NULL;
    size_t dsize = 0;
    if (amp_code_object_data(co, &data, &dsize) != AMP_OK) {
        fprintf(stderr, "hipamp-compile: %s\n", amp_last_error());
        goto done;
    }
    tool_out o;
    if (!tool_out_open(&o, "hipamp-compile", out)) goto done;
    if (!tool_out_close(&o, fwrite(data, 1, dsize, o.f) == dsize)) goto done;

    FILE *table = o.to_stdout ? stderr : stdout;
    if (!strncmp(target, "sm_", 3)) {
        /* The resources are read from AMD code objects only. */
        fprintf(table, "%s: %zu bytes for %s (kernel resources: cuobjdump --dump-resource-usage)\n",
                o.dest ? out : "(standard output)", dsize, target);
        rc = tool_stdout_close("hipamp-compile") ? 0 : 1;
        goto done;
    }
    fprintf(table, "%s: %zu bytes for %s, %zu kernel(s)\n", o.dest ? out : "(standard output)", dsize, target,
            amp_code_object_kernel_count(co));
    fprintf(table, "%-32s %9s %6s %6s %6s %11s %11s %13s\n", "kernel", "LDS", "VGPRs", "SGPRs", "AGPRs", "VGPR-spill",
            "SGPR-spill", "scratch/item");
    for (size_t i = 0; i < amp_code_object_kernel_count(co); ++i) {
        amp_kernel_resources r;
        if (amp_code_object_kernel_resources(co, i, &r) != AMP_OK) continue;
        fprintf(table, "%-32s %9u %6u %6u %6u %11u %11u %13u\n", r.name, r.lds_bytes, r.vgprs, r.sgprs, r.agprs,
                r.vgpr_spills, r.sgpr_spills, r.private_bytes);
    }
    rc = tool_stdout_close("hipamp-compile") ? 0 : 1;
done:
    amp_code_object_destroy(co);
    free(outpath);
    return rc;
}
