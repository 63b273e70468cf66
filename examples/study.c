/* study.c — the demo: runs every transpose and matmul variant of the C++ AMP articles' study (plus tuned ones) on the default accelerator, verifies each against a CPU reference on fresh random data, and prints one table. */
#define _POSIX_C_SOURCE 200809L
#include "workloads.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SIZES 8

typedef struct row {
    char variant[40], size[24], accel[40];
    int launches;
    double ms, rate;
    const char *unit;
    bool ok;
    char note[80];
} row;

static row rows[128];
static int nrows;
static bool markdown;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: study [options]\n"
            "  Runs every transpose and matmul variant on one accelerator, checks each\n"
            "  against a CPU reference on fresh random data, prints one table.\n"
            "  --accelerator PATH   cpu, cuda:0, hip:0 (default: AMP_DEFAULT_ACCELERATOR, else\n"
            "                       the first GPU, else the CPU)\n"
            "  --transpose RxC      add a transpose size (repeatable; replaces the default\n"
            "                       large sizes; 999x666 always runs)\n"
            "  --matmul N|MxNxK     add a matmul size (repeatable; same rules; 999x666x666\n"
            "                       always runs)\n"
            "  --quick              the articles' size only\n"
            "  --only transpose|matmul   run one workload\n"
            "  --budget SECONDS     timing budget per variant (default 0.2 CPU, 0.5 GPU)\n"
            "  --markdown           print the table as Markdown\n"
            "  Sizes by default: on a GPU also transpose 8192x8192 and matmul 4096;\n"
            "  on the CPU accelerator the articles' size only. HIPAMP_SEED fixes the data.\n");
}

static void add_row(const char *variant, const char *size, const char *accel, int launches, double s,
                    double work, const char *unit, bool ok, const char *note)
{
    if (nrows >= (int)(sizeof rows / sizeof rows[0])) return;
    row *r = &rows[nrows++];
    snprintf(r->variant, sizeof r->variant, "%s", variant);
    snprintf(r->size, sizeof r->size, "%s", size);
    snprintf(r->accel, sizeof r->accel, "%s", accel);
    r->launches = launches;
    r->ms = s > 0 ? s * 1e3 : -1;
    r->rate = s > 0 ? work / s / 1e9 : 0;
    r->unit = unit;
    r->ok = ok;
    snprintf(r->note, sizeof r->note, "%s", note ? note : "");
    /* Progress as it goes (stderr, so stdout holds just the table). */
    fprintf(stderr, "  %-26s %-12s %9.3f ms  %s\n", variant, size, r->ms, ok ? "ok" : "FAILED");
}

static void print_table(const amp_accelerator_info *info, double build_s, uint64_t seed)
{
    printf("\nhipamp study on %s (%s, %s)%s; seed 0x%llx; kernel build %.2f s\n\n", info->device_path,
           info->description, info->arch, info->is_emulated ? " — the CPU accelerator" : "",
           (unsigned long long)seed, build_s);
    if (markdown) {
        printf("| variant | size | accelerator | launches | time (ms) | rate | check |\n");
        printf("|---|---|---|---:|---:|---:|---|\n");
    } else {
        printf("%-26s %-13s %-12s %8s %11s %16s  %s\n", "variant", "size", "accelerator", "launches",
               "time (ms)", "rate", "check");
        printf("%.*s\n", 100, "----------------------------------------------------------------------"
                              "------------------------------");
    }
    for (int i = 0; i < nrows; ++i) {
        row *r = &rows[i];
        char rate[32], ms[24];
        if (r->ms > 0) {
            snprintf(rate, sizeof rate, "%.2f %s", r->rate, r->unit);
            snprintf(ms, sizeof ms, "%.3f", r->ms);
        } else {
            snprintf(rate, sizeof rate, "-");
            snprintf(ms, sizeof ms, "-");
        }
        char check[120];
        snprintf(check, sizeof check, "%s%s%s", r->ok ? "passed" : "FAILED", r->note[0] ? " " : "", r->note);
        if (markdown)
            printf("| %s | %s | %s | %d | %s | %s | %s |\n", r->variant, r->size, r->accel, r->launches, ms,
                   rate, check);
        else
            printf("%-26s %-13s %-12s %8d %11s %16s  %s\n", r->variant, r->size, r->accel, r->launches, ms,
                   rate, check);
    }
}

static bool run_transpose(wl_ctx *c, int M, int N, double budget, uint64_t *rng)
{
    bool all_ok = true;
    size_t n = (size_t)M * N;
    float *a = malloc(n * sizeof *a), *at = malloc(n * sizeof *at);
    char size[24];
    snprintf(size, sizeof size, "%dx%d", M, N);
    if (!a || !at) {
        add_row("transpose (all)", size, c->info.device_path, 0, -1, 0, "GB/s", false, "out of host memory");
        free(a);
        free(at);
        return false;
    }
    wl_fill_random(a, n, rng);
    for (int v = 0; v < WL_T_COUNT; ++v) {
        wl_tjob j;
        /* Truncation needs at least one whole 16x16 tile. */
        if (v == WL_T_TRUNCATE && (M < 16 || N < 16)) continue;
        wl_poison(at, n);
        amp_status st = wl_tjob_init(&j, c, (wl_tvariant)v, a, at, M, N);
        int runs = 0, launches = wl_tjob_launches(&j);
        double s = -1;
        if (st == AMP_OK) s = wl_time((wl_run_fn)wl_tjob_run, &j, c->q, budget, &runs, &st);
        amp_status fst = wl_tjob_fini(&j);
        if (st == AMP_OK) st = fst;
        char note[80] = "";
        bool ok = st == AMP_OK;
        if (!ok) {
            snprintf(note, sizeof note, "(%s)", amp_status_name(st));
            fprintf(stderr, "%s %s: %s\n", wl_tvariant_name((wl_tvariant)v), size, amp_last_error());
        } else {
            size_t first, bad = wl_check_transpose(a, at, M, N, &first);
            if (bad) {
                ok = false;
                snprintf(note, sizeof note, "(%zu wrong, first at %zu)", bad, first);
            }
        }
        all_ok &= ok;
        add_row(wl_tvariant_name((wl_tvariant)v), size, c->info.device_path, launches, s, 2.0 * n * sizeof(float),
                "GB/s", ok, note);
    }
    free(a);
    free(at);
    return all_ok;
}

static bool run_matmul(wl_ctx *c, int M, int N, int K, double budget, uint64_t *rng)
{
    bool all_ok = true;
    float *a = malloc((size_t)M * K * sizeof *a), *b = malloc((size_t)K * N * sizeof *b);
    float *cc = malloc((size_t)M * N * sizeof *cc);
    char size[24];
    snprintf(size, sizeof size, "%dx%dx%d", M, N, K);
    const double flops = 2.0 * M * N * K;
    if (!a || !b || !cc) {
        add_row("matmul (all)", size, c->info.device_path, 0, -1, 0, "GFLOP/s", false, "out of host memory");
        free(a);
        free(b);
        free(cc);
        return false;
    }
    wl_fill_random(a, (size_t)M * K, rng);
    wl_fill_random(b, (size_t)K * N, rng);
    const double full_limit = 1.2e9; /* check every element up to this many MACs */
    for (int v = 0; v < WL_M_COUNT; ++v) {
        wl_poison(cc, (size_t)M * N);
        amp_status st = AMP_OK;
        double s = -1;
        const char *accel = c->info.device_path;
        if (v == WL_M_SERIAL) {
            if (flops > 2.5e9) continue; /* minutes on one core at the large sizes */
            accel = "host";
            double t0 = wl_now();
            wl_matmul_serial(a, b, cc, M, N, K);
            s = wl_now() - t0;
        } else {
            wl_mjob j;
            int runs = 0;
            st = wl_mjob_init(&j, c, (wl_mvariant)v, a, b, cc, M, N, K);
            if (st == AMP_OK) s = wl_time((wl_run_fn)wl_mjob_run, &j, c->q, budget, &runs, &st);
            amp_status fst = wl_mjob_fini(&j);
            if (st == AMP_OK) st = fst;
        }
        char note[80] = "";
        bool ok = st == AMP_OK;
        if (!ok) {
            snprintf(note, sizeof note, "(%s)", amp_status_name(st));
            fprintf(stderr, "%s %s: %s\n", wl_mvariant_name((wl_mvariant)v), size, amp_last_error());
        } else {
            double max_err = 0;
            size_t bad = wl_check_matmul(a, b, cc, M, N, K, full_limit, 4096, rng, &max_err);
            if (bad) {
                ok = false;
                snprintf(note, sizeof note, "(%zu wrong)", bad);
            } else if ((double)M * N * K > full_limit) {
                snprintf(note, sizeof note, "(sampled)");
            }
        }
        all_ok &= ok;
        add_row(wl_mvariant_name((wl_mvariant)v), size, accel, v == WL_M_SERIAL ? 0 : 1, s, flops, "GFLOP/s", ok,
                note);
    }
    free(a);
    free(b);
    free(cc);
    return all_ok;
}

int main(int argc, char **argv)
{
    const char *accel_path = NULL;
    int tsz[MAX_SIZES][2], nt = 0;
    int msz[MAX_SIZES][3], nm = 0;
    bool quick = false, user_sizes = false, do_t = true, do_m = true;
    double budget = -1;
    for (int i = 1; i < argc; ++i) {
        const char *o = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(o, "--quick")) {
            quick = true;
        } else if (!strcmp(o, "--only") && val) {
            do_t = !strcmp(val, "transpose");
            do_m = !strcmp(val, "matmul");
            if (!do_t && !do_m) {
                fprintf(stderr, "study: --only takes transpose or matmul, not '%s'\n", val);
                return 2;
            }
            ++i;
        } else if (!strcmp(o, "--markdown")) {
            markdown = true;
        } else if (!strcmp(o, "--accelerator") && val) {
            accel_path = val;
            ++i;
        } else if (!strcmp(o, "--budget") && val) {
            budget = atof(val);
            ++i;
        } else if (!strcmp(o, "--transpose") && val && nt < MAX_SIZES) {
            if (sscanf(val, "%dx%d", &tsz[nt][0], &tsz[nt][1]) != 2 || tsz[nt][0] <= 0 || tsz[nt][1] <= 0) {
                fprintf(stderr, "study: bad transpose size '%s' (want RxC)\n", val);
                return 2;
            }
            nt++;
            user_sizes = true;
            ++i;
        } else if (!strcmp(o, "--matmul") && val && nm < MAX_SIZES) {
            int m, n, k, got = sscanf(val, "%dx%dx%d", &m, &n, &k);
            if (got == 1) n = k = m;
            if ((got != 1 && got != 3) || m <= 0 || n <= 0 || k <= 0) {
                fprintf(stderr, "study: bad matmul size '%s' (want N or MxNxK)\n", val);
                return 2;
            }
            msz[nm][0] = m, msz[nm][1] = n, msz[nm][2] = k;
            nm++;
            user_sizes = true;
            ++i;
        } else {
            fprintf(stderr, "study: unknown option '%s'\n", o);
            usage(stderr);
            return 2;
        }
    }

    amp_accelerator *acc = NULL;
    amp_status st = accel_path ? amp_accelerator_find(accel_path, &acc) : amp_accelerator_default(&acc);
    if (st != AMP_OK) {
        fprintf(stderr, "study: no accelerator%s%s: %s\n", accel_path ? " " : "", accel_path ? accel_path : "",
                amp_last_error());
        return 1;
    }
    wl_ctx c;
    fprintf(stderr, "study: building the kernels...\n");
    if (wl_open(&c, acc) != AMP_OK) return 1;
    const bool gpu = !c.info.is_emulated;
    if (budget <= 0) budget = gpu ? 0.5 : 0.2;

    /* The articles' size first, always; then the large sizes. */
    int T[MAX_SIZES + 2][2], M3[MAX_SIZES + 2][3], nT = 0, nM = 0;
    T[nT][0] = 999, T[nT][1] = 666, nT++;
    M3[nM][0] = 999, M3[nM][1] = 666, M3[nM][2] = 666, nM++;
    if (!quick) {
        if (user_sizes) {
            for (int i = 0; i < nt; ++i) T[nT][0] = tsz[i][0], T[nT][1] = tsz[i][1], nT++;
            for (int i = 0; i < nm; ++i) M3[nM][0] = msz[i][0], M3[nM][1] = msz[i][1], M3[nM][2] = msz[i][2], nM++;
        } else if (gpu) {
            T[nT][0] = 8192, T[nT][1] = 8192, nT++;
            M3[nM][0] = M3[nM][1] = M3[nM][2] = 4096, nM++;
        }
    }

    uint64_t seed = wl_seed(), rng = seed;
    bool ok = true;
    double t0 = wl_now();
    for (int i = 0; do_t && i < nT; ++i) ok &= run_transpose(&c, T[i][0], T[i][1], budget, &rng);
    for (int i = 0; do_m && i < nM; ++i) ok &= run_matmul(&c, M3[i][0], M3[i][1], M3[i][2], budget, &rng);
    print_table(&c.info, c.build_s, seed);
    printf("\n%s in %.1f s: %s\n", ok ? "all variants verified" : "SOME VARIANTS FAILED", wl_now() - t0,
           ok ? "every result matched the CPU reference" : "see the check column");
    wl_close(&c);
    return ok ? 0 : 1;
}
