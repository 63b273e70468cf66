/* hipamp_compile.c — the hipamp-compile tool: build a kernel file for a named AMD (hipRTC) or NVIDIA (NVRTC) target with no GPU present, write the code object and print each AMD kernel's resources. */
#include "tool_output.h"

#include <hipamp.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: hipamp-compile --target TARGET [-o OUT.co] [--options \"FLAGS\"] FILE.hip\n"
            "       hipamp-compile --list-targets\n"
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
            "Exit status: 0 written, 1 a compile, input or output error, 2 a usage error.\n");
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

int main(int argc, char **argv)
{
    const char *target = NULL, *out = NULL, *options = NULL, *input = NULL;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (!strcmp(a, "--list-targets")) {
            int rc = list_targets();
            return tool_stdout_close("hipamp-compile") || rc ? rc : 1;
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return tool_stdout_close("hipamp-compile") ? 0 : 1;
        }
        if (!strcmp(a, "--target") || !strcmp(a, "-o") || !strcmp(a, "--options")) {
            if (i + 1 >= argc) { fprintf(stderr, "hipamp-compile: %s needs a value\n", a); return 2; }
            const char *v = argv[++i];
            if (!strcmp(a, "--target")) target = v;
            else if (!strcmp(a, "-o")) out = v;
            else options = v;
        } else if (!strncmp(a, "--target=", 9)) target = a + 9;
        else if (!strncmp(a, "--options=", 10)) options = a + 10;
        else if (a[0] == '-' && a[1]) { fprintf(stderr, "hipamp-compile: unknown option '%s'\n", a); usage(stderr); return 2; }
        else if (input) { fprintf(stderr, "hipamp-compile: more than one input file (%s, %s)\n", input, a); return 2; }
        else input = a;
    }
    if (!target || !input) {
        fprintf(stderr, "hipamp-compile: %s\n", !target ? "--target is required" : "no input file");
        usage(stderr);
        return 2;
    }

    int rc = 1;
    char *src = NULL, *full = NULL, *outpath = NULL, *opts = NULL;
    amp_code_object *co = NULL;
    size_t size = 0;
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
    if (!(src = tool_read_source("hipamp-compile", input, &size))) goto done;
    /* The library names the user's part "kernel.hip"; a #line of our own
     * makes diagnostics name the real file instead. */
    size_t flen = strlen(input) + size + 64;
    full = malloc(flen);
    /* Quoted includes beside the file, as amp_program_build_file finds them. */
    const char *slash = strrchr(input, '/');
    size_t olen = (options ? strlen(options) : 0) + strlen(input) + 32;
    opts = malloc(olen);
    if (!full || !opts) { fprintf(stderr, "hipamp-compile: out of memory\n"); goto done; }
    snprintf(full, flen, "#line 1 \"%s\"\n%s", input, src);
    if (strpbrk(input, " \t\n")) snprintf(opts, olen, "%s", options ? options : "");
    else snprintf(opts, olen, "-iquote %.*s %s", slash ? (int)(slash == input ? 1 : slash - input) : 1,
                  slash ? input : ".", options ? options : "");

    amp_status st = amp_compile_for_target(target, full, opts, &co);
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
    free(opts);
    free(full);
    free(src);
    return rc;
}
