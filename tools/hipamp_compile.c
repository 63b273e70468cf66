/* hipamp_compile.c — the hipamp-compile tool: build a kernel file for a named AMD (hipRTC) or NVIDIA (NVRTC) target with no GPU present, write the code object and print each AMD kernel's resources. */
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
            "writes the code object to OUT.co (default: FILE with .co).\n");
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

static char *read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t cap = 0, len = 0;
    if (!f) return NULL;
    for (;;) {
        if (cap - len < 4096) {
            size_t ncap = cap ? cap * 2 : 65536;
            char *nb = realloc(buf, ncap);
            if (!nb) { free(buf); fclose(f); return NULL; }
            buf = nb;
            cap = ncap;
        }
        size_t got = fread(buf + len, 1, cap - len - 1, f);
        len += got;
        if (got == 0) break;
    }
    int err = ferror(f);
    fclose(f);
    if (err) { free(buf); return NULL; }
    buf[len] = '\0';
    *size = len;
    return buf;
}

int main(int argc, char **argv)
{
    const char *target = NULL, *out = NULL, *options = NULL, *input = NULL;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (!strcmp(a, "--list-targets")) return list_targets();
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); return 0; }
        if (!strcmp(a, "--target") || !strcmp(a, "-o") || !strcmp(a, "--options")) {
            if (i + 1 >= argc) { fprintf(stderr, "hipamp-compile: %s needs a value\n", a); return 2; }
            const char *v = argv[++i];
            if (!strcmp(a, "--target")) target = v;
            else if (!strcmp(a, "-o")) out = v;
            else options = v;
        } else if (!strncmp(a, "--target=", 9)) target = a + 9;
        else if (!strncmp(a, "--options=", 10)) options = a + 10;
        else if (a[0] == '-' && a[1]) { fprintf(stderr, "hipamp-compile: unknown option %s\n", a); usage(stderr); return 2; }
        else if (input) { fprintf(stderr, "hipamp-compile: more than one input file (%s, %s)\n", input, a); return 2; }
        else input = a;
    }
    if (!target || !input) {
        fprintf(stderr, "hipamp-compile: %s\n", !target ? "--target is required" : "no input file");
        usage(stderr);
        return 2;
    }

    int rc = 1;
    char *src = NULL, *full = NULL, *outpath = NULL;
    amp_code_object *co = NULL;
    FILE *f = NULL;
    size_t size = 0;
    src = read_file(input, &size);
    if (!src) { perror(input); goto done; }
    /* The library names the user's part "kernel.hip"; a #line of our own
     * makes diagnostics name the real file instead. */
    size_t flen = strlen(input) + size + 64;
    full = malloc(flen);
    if (!full) { fprintf(stderr, "hipamp-compile: out of memory\n"); goto done; }
    snprintf(full, flen, "#line 1 \"%s\"\n%s", input, src);

    amp_status st = amp_compile_for_target(target, full, options, &co);
    if (st != AMP_OK) {
        fprintf(stderr, "hipamp-compile: %s: %s\n", amp_status_name(st), amp_last_error());
        goto done;
    }
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
    const void *data = NULL;
    size_t dsize = 0;
    if (amp_code_object_data(co, &data, &dsize) != AMP_OK) {
        fprintf(stderr, "hipamp-compile: %s\n", amp_last_error());
        goto done;
    }
    f = fopen(out, "wb");
    if (!f || fwrite(data, 1, dsize, f) != dsize || fclose(f) != 0) {
        f = NULL;
        perror(out);
        goto done;
    }
    f = NULL;

    printf("%s: %zu bytes for %s, %zu kernel(s)\n", out, dsize, target, amp_code_object_kernel_count(co));
    printf("%-32s %9s %6s %6s %6s %11s %11s %13s\n", "kernel", "LDS", "VGPRs", "SGPRs", "AGPRs", "VGPR-spill",
           "SGPR-spill", "scratch/item");
    for (size_t i = 0; i < amp_code_object_kernel_count(co); ++i) {
        amp_kernel_resources r;
        if (amp_code_object_kernel_resources(co, i, &r) != AMP_OK) continue;
        printf("%-32s %9u %6u %6u %6u %11u %11u %13u\n", r.name, r.lds_bytes, r.vgprs, r.sgprs, r.agprs,
               r.vgpr_spills, r.sgpr_spills, r.private_bytes);
    }
    rc = 0;
done:
    if (f) fclose(f);
    amp_code_object_destroy(co);
    free(outpath);
    free(full);
    free(src);
    return rc;
}
