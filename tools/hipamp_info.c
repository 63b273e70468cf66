/* hipamp_info.c — hipamp-info: lists what each GPU driver found (and why not), every accelerator hipamp finds on this machine with all its info fields, which pairs of GPUs copy over peer access, the default accelerator, the compile-cache directory and the library version. */
#include "tool_output.h"

#include <hipamp.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_bytes(const char *label, uint64_t b)
{
    if (b >= (1ull << 30))
        printf("  %-26s %" PRIu64 " bytes (%.1f GiB)\n", label, b, (double)b / (double)(1ull << 30));
    else if (b >= (1ull << 10))
        printf("  %-26s %" PRIu64 " bytes (%.1f KiB)\n", label, b, (double)b / 1024.0);
    else
        printf("  %-26s %" PRIu64 " bytes\n", label, b);
}

static const char *yes_no(bool b) { return b ? "yes" : "no"; }

/* Whether the space-separated list names target whole: a substring match
 * took "sm_90" for present beside a pack "sm_90a" only, or a CPU target
 * beside "cpu-<its hash>-old". */
static bool list_has(const char *list, const char *target)
{
    size_t n = strlen(target);
    for (const char *p = list; n && *p;) {
        size_t len = strcspn(p, " ");
        if (len == n && !memcmp(p, target, n)) return true;
        p += len;
        p += strspn(p, " ");
    }
    return false;
}

static void usage(FILE *to, const char *prog)
{
    fprintf(to,
            "usage: %s\n"
            "Lists the accelerators hipamp can use (GPUs through HIP or CUDA, and the CPU),\n"
            "which pairs of GPUs copy over peer access (else through host memory),\n"
            "the default one (AMP_DEFAULT_ACCELERATOR), what each GPU driver found and why\n"
            "it found nothing (AMP_GPU_DRIVERS), the compile-cache directory and\n"
            "the library version. Exit status: 0 listed (whatever was found), 1 a write\n"
            "error on standard output, 2 a usage error (it takes no arguments).\n",
            prog);
}

#define PROG "hipamp-info"

static int print_info(void);

int main(int argc, char **argv)
{
    tool_start();
    if (argc > 1) {
        const char *a = argv[1];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout, argv[0]);
            return tool_stdout_close(PROG) ? 0 : 1;
        }
        if (a[0] == '-' && a[1]) fprintf(stderr, PROG ": unknown option '%s'\n", a);
        else fprintf(stderr, PROG ": unexpected argument '%s'\n", a);
        usage(stderr, argv[0]);
        return 2;
    }
    int rc = print_info();
    /* Output lost to a full disk or /dev/full is a failure, not a listing. */
    if (!tool_stdout_close(PROG)) rc = 1;
    return rc;
}

/* Prints everything; 0 even when an accelerator cannot be listed (that is
 * what it reports). */
static int print_info(void)
{
    printf("hipamp %s\n", amp_version());
    amp_cache_info ci;
    if (amp_cache_get_info(&ci) == AMP_OK && ci.disk_enabled)
        printf("compile cache: %s%s\n", amp_cache_dir(),
               ci.shared_group ? " (shared with its group: AMP_CACHE_SHARED=group)" : "");
    else if (amp_cache_get_info(&ci) == AMP_OK)
        printf("compile cache: off (%s); every build compiles\n", ci.reason);
    else
        printf("compile cache: %s\n", amp_cache_dir());
    amp_prebuilt_info pi;
    if (amp_prebuilt_get_info(&pi) == AMP_OK && pi.enabled)
        printf("prebuilt algorithms: %s: %s\n", pi.dir, pi.available[0] ? pi.available : "no packs");
    else if (amp_prebuilt_get_info(&pi) == AMP_OK)
        printf("prebuilt algorithms: off (%s); first calls compile\n", pi.reason);
    const char *env_default = getenv("AMP_DEFAULT_ACCELERATOR");
    if (env_default && *env_default) printf("AMP_DEFAULT_ACCELERATOR=%s\n", env_default);

    /* What each GPU driver found, and why it found nothing where it did. */
    amp_gpu_driver_report reports[8];
    size_t nreports = 0;
    if (amp_gpu_driver_reports(reports, 8, &nreports) == AMP_OK) {
        printf("GPU drivers:\n");
        for (size_t i = 0; i < nreports && i < 8; ++i)
            printf("  %-5s %s, %d device%s: %s\n", reports[i].name, reports[i].loaded ? "loaded" : "not loaded",
                   reports[i].device_count, reports[i].device_count == 1 ? "" : "s", reports[i].detail);
    }

    size_t n = 0;
    amp_status st = amp_accelerator_list(NULL, 0, &n);
    if (st != AMP_OK) {
        printf("accelerator list failed: %s: %s\n", amp_status_name(st), amp_last_error());
        return 0;
    }
    amp_accelerator **list = calloc(n ? n : 1, sizeof *list);
    if (!list) {
        fprintf(stderr, PROG ": out of memory\n");
        return 1;
    }
    st = amp_accelerator_list(list, n, &n);
    if (st != AMP_OK) {
        printf("accelerator list failed: %s: %s\n", amp_status_name(st), amp_last_error());
        free(list);
        return 0;
    }

    amp_accelerator *def = NULL;
    amp_status dst = amp_accelerator_default(&def);
    char def_err[512] = "";
    if (dst != AMP_OK) snprintf(def_err, sizeof def_err, "%s: %s", amp_status_name(dst), amp_last_error());

    int gpus = 0;
    printf("%zu accelerator%s:\n", n, n == 1 ? "" : "s");
    for (size_t i = 0; i < n; ++i) {
        amp_accelerator_info in;
        st = amp_accelerator_get_info(list[i], &in);
        if (st != AMP_OK) {
            printf("\n[%zu] info failed: %s: %s\n", i, amp_status_name(st), amp_last_error());
            continue;
        }
        if (!in.is_emulated) ++gpus;
        printf("\n[%zu] %s%s\n", i, in.device_path, list[i] == def ? "  (default)" : "");
        printf("  %-26s %s\n", "description", in.description);
        printf("  %-26s %s\n", "device_path", in.device_path);
        printf("  %-26s %s\n", "arch", in.arch);
        print_bytes("dedicated_memory", in.dedicated_memory);
        printf("  %-26s %d\n", "compute_units", in.compute_units);
        printf("  %-26s %d\n", "max_tile_threads", in.max_tile_threads);
        print_bytes("max_tile_static_bytes", (uint64_t)in.max_tile_static_bytes);
        printf("  %-26s %s\n", "is_emulated", yes_no(in.is_emulated));
        printf("  %-26s %s\n", "is_unified_memory", yes_no(in.is_unified_memory));
        printf("  %-26s %s\n", "unified_memory_reason", in.unified_memory_reason);
        /* What the memory mode means for a program (include/hipamp.h,
         * amp_array_view_synchronize and _discard_data). */
        printf("  %-26s %s\n", "kernel_writes",
               in.is_unified_memory
                   ? "in host memory once the kernel finished, before any synchronize; discard_data cannot "
                     "withdraw them"
                   : "in host memory after synchronize (or destroy, get, a copy); discard_data before it drops them");
        const char *target = NULL;
        if (amp_accelerator_get_prebuilt_target(list[i], &target) == AMP_OK) {
            /* A pack file another user could have put or changed is refused
             * when opened: said here too, not "present". Its contents
             * (version, target, digests) are checked when first used. */
            char pack[1200], note[1600];
            snprintf(pack, sizeof pack, "%s/%s.hpk", pi.dir, target ? target : "");
            if (!target)
                snprintf(note, sizeof note, "its built-in algorithms compile on first use");
            else if (!list_has(pi.available, target))
                snprintf(note, sizeof note, "no pack: built-in algorithms compile on first use");
            else if (amp_check_trusted_file(pack) != AMP_OK)
                snprintf(note, sizeof note, "pack present but refused: %s; built-in algorithms compile on first use",
                         amp_last_error());
            else
                snprintf(note, sizeof note, "pack present: built-in algorithms load without compiling once its "
                         "version and digests check out");
            printf("  %-26s %s (%s)\n", "prebuilt_target", target ? target : "none", note);
        }
        unsigned version = 0;
        bool is_debug = false;
        if (amp_accelerator_get_version(list[i], &version) == AMP_OK)
            printf("  %-26s %u.%u (%#x)\n", "version", version >> 16, version & 0xffff, version);
        if (amp_accelerator_get_is_debug(list[i], &is_debug) == AMP_OK)
            printf("  %-26s %s\n", "is_debug", yes_no(is_debug));
        printf("  %-26s %s\n", "supports_double_precision", yes_no(in.supports_double_precision));
        printf("  %-26s %s\n", "is_available", yes_no(in.is_available));
        if (!in.is_available) printf("  %-26s %s\n", "unavailable_reason", in.unavailable_reason);
    }
    /* Copies between two GPUs: over the peer link, or through host memory. */
    if (gpus >= 2) {
        printf("\ncopies between GPUs:\n");
        for (size_t i = 0; i < n; ++i)
            for (size_t j = i + 1; j < n; ++j) {
                amp_accelerator_info a, b;
                amp_peer_info pi;
                if (amp_accelerator_get_info(list[i], &a) != AMP_OK || amp_accelerator_get_info(list[j], &b) != AMP_OK ||
                    a.is_emulated || b.is_emulated)
                    continue;
                if ((st = amp_accelerator_get_peer_info(list[i], list[j], &pi)) != AMP_OK)
                    printf("  %s <-> %s: unknown (%s: %s)\n", a.device_path, b.device_path, amp_status_name(st),
                           amp_last_error());
                else
                    printf("  %s <-> %s: %s (%s)\n", a.device_path, b.device_path,
                           pi.direct ? "peer access" : "through host memory", pi.reason);
            }
    }
    printf("\n");
    if (gpus == 0)
        printf("no GPU found (HIP or CUDA: see GPU drivers above for why)%s\n",
               dst == AMP_OK ? "; kernels run on the CPU accelerator" : "");
    if (dst != AMP_OK) printf("default accelerator: none (%s)\n", def_err);
    free(list);
    return 0;
}
