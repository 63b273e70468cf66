/* path.c — hipamp::mpi's choice of exchange path: what the MPI library says about GPU device buffers (or AMP_MPI_GPU_AWARE), the path names, and the path for an accelerator (host memory in place, device pointers, or host staging) with the reason in words. */
#include "mpi_private.h"
#include "nccl_transport.h"

#if defined(OPEN_MPI) && OPEN_MPI
/* Open MPI's extensions: MPIX_Query_cuda_support (4.x, 5.x) and
 * MPIX_Query_rocm_support (5.x), each with a macro saying it exists. */
#include <mpi-ext.h>
#endif

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* ------------------------------------------------- GPU-aware MPI */

/* "1", "on", "yes", "true" -> 1; "0", "off", "no", "false" -> 0; else -1. */
static int amp_mpi__flag(const char *v)
{
    if (!strcmp(v, "1") || !strcasecmp(v, "on") || !strcasecmp(v, "yes") || !strcasecmp(v, "true")) return 1;
    if (!strcmp(v, "0") || !strcasecmp(v, "off") || !strcasecmp(v, "no") || !strcasecmp(v, "false")) return 0;
    return -1;
}

/* Append to a reason buffer ("; " between parts). */
static void amp_mpi__add(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void amp_mpi__add(char *buf, size_t size, const char *fmt, ...)
{
    size_t n = strlen(buf);
    if (n && n + 2 < size) {
        memcpy(buf + n, "; ", 3);
        n += 2;
    }
    if (n + 1 >= size) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + n, size - n, fmt, ap);
    va_end(ap);
}

amp_status amp_mpi_query_gpu_support(amp_mpi_gpu_support *out)
{
    amp_status st = AMP_OK;
    if (out) memset(out, 0, sizeof *out);
    AMP_MPI__NOT_NULL(out);
    if ((st = amp_mpi__need_mpi(__func__)) != AMP_OK) return st;

    char lib[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int len = 0;
    if (MPI_Get_library_version(lib, &len) == MPI_SUCCESS) {
        lib[len < (int)sizeof lib ? len : (int)sizeof lib - 1] = '\0';
        size_t k = strcspn(lib, "\r\n");
        lib[k] = '\0';
        snprintf(out->library, sizeof out->library, "%s", lib);
    }

    const char *force = amp_mpi__env("AMP_MPI_GPU_AWARE");
    if (force) {
        int f = amp_mpi__flag(force);
        if (f < 0) {
            memset(out, 0, sizeof *out);
            return amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT, "AMP_MPI_GPU_AWARE=\"%s\": use 1 or 0", force);
        }
        out->cuda = out->rocm = f == 1;
        out->forced = true;
        snprintf(out->reason, sizeof out->reason, "AMP_MPI_GPU_AWARE=%s", force);
        return AMP_OK;
    }

    bool asked = false;
#if defined(OPEN_MPI) && OPEN_MPI
#if defined(MPIX_CUDA_AWARE_SUPPORT)
    {
        int c = MPIX_Query_cuda_support();
        out->cuda = c != 0;
        asked = true;
        amp_mpi__add(out->reason, sizeof out->reason, "MPIX_Query_cuda_support() = %d (built with CUDA: %s)", c,
                     MPIX_CUDA_AWARE_SUPPORT ? "yes" : "no");
    }
#endif
#if defined(MPIX_ROCM_AWARE_SUPPORT)
    {
        int r = MPIX_Query_rocm_support();
        out->rocm = r != 0;
        asked = true;
        amp_mpi__add(out->reason, sizeof out->reason, "MPIX_Query_rocm_support() = %d", r);
    }
#endif
#endif
#if !(defined(OPEN_MPI) && OPEN_MPI) && defined(MPIX_GPU_SUPPORT_CUDA)
    {
        /* MPICH 4 and its derivatives. */
        int c = 0;
        if (MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA, &c) == MPI_SUCCESS) {
            out->cuda = c != 0;
            asked = true;
            amp_mpi__add(out->reason, sizeof out->reason, "MPIX_GPU_query_support(CUDA) = %d", c);
        }
#if defined(MPIX_GPU_SUPPORT_HIP)
        int h = 0;
        if (MPIX_GPU_query_support(MPIX_GPU_SUPPORT_HIP, &h) == MPI_SUCCESS) {
            out->rocm = h != 0;
            asked = true;
            amp_mpi__add(out->reason, sizeof out->reason, "MPIX_GPU_query_support(HIP) = %d", h);
        }
#endif
    }
#endif
    /* Cray MPICH takes device pointers once the user enabled it this way
     * (it has no query of its own in older releases). */
    const char *cray = amp_mpi__env("MPICH_GPU_SUPPORT_ENABLED");
    if (strstr(out->library, "CRAY MPICH") && cray) {
        if (amp_mpi__flag(cray) == 1) out->cuda = out->rocm = true;
        asked = true;
        amp_mpi__add(out->reason, sizeof out->reason, "Cray MPICH with MPICH_GPU_SUPPORT_ENABLED=%s", cray);
    }
    if (!asked)
        amp_mpi__add(out->reason, sizeof out->reason,
                     "this MPI library has no GPU-support query: taken as not GPU-aware (AMP_MPI_GPU_AWARE=1 says it is)");
    return AMP_OK;
}

/* ------------------------------------------------- exchange paths */

const char *amp_mpi_path_name(amp_mpi_path p)
{
    switch (p) {
    case AMP_MPI_PATH_AUTO: return "auto";
    case AMP_MPI_PATH_HOST: return "host";
    case AMP_MPI_PATH_DEVICE: return "device";
    case AMP_MPI_PATH_STAGED: return "staged";
    case AMP_MPI_PATH_NCCL: return "nccl";
    }
    return "unknown";
}

amp_status amp_mpi_path_parse(const char *text, amp_mpi_path *out)
{
    if (out) *out = AMP_MPI_PATH_AUTO;
    AMP_MPI__NOT_NULL(out);
    AMP_MPI__NOT_NULL(text);
    static const amp_mpi_path all[] = {AMP_MPI_PATH_AUTO, AMP_MPI_PATH_HOST, AMP_MPI_PATH_DEVICE, AMP_MPI_PATH_STAGED,
                                       AMP_MPI_PATH_NCCL};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i)
        if (!strcmp(text, amp_mpi_path_name(all[i]))) {
            *out = all[i];
            return AMP_OK;
        }
    return amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT, "exchange path \"%s\": use auto, host, device, staged or nccl", text);
}

/* Which vendor's pointers a GPU's device path needs: 'c' CUDA, 'h' HIP,
 * 0 none (the CPU accelerator, or a path hipamp does not know). */
char amp_mpi__vendor(const amp_accelerator_info *info)
{
    if (info->is_emulated) return 0;
    if (!strncmp(info->device_path, "cuda:", 5)) return 'c';
    if (!strncmp(info->device_path, "hip:", 4)) return 'h';
    return 0;
}

amp_status amp_mpi_choose_path(amp_accelerator *a, amp_mpi_path requested, amp_mpi_path_info *out)
{
    amp_status st = AMP_OK;
    amp_accelerator_info info;
    if (out) memset(out, 0, sizeof *out);
    AMP_MPI__NOT_NULL(out);
    if (requested < AMP_MPI_PATH_AUTO || requested > AMP_MPI_PATH_NCCL)
        return amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: requested path %d is not an amp_mpi_path", __func__,
                             (int)requested);
    if (!a && (st = amp_accelerator_default(&a)) != AMP_OK)
        return amp_mpi__hipamp(st, "amp_mpi_choose_path: amp_accelerator_default");
    if ((st = amp_accelerator_get_info(a, &info)) != AMP_OK)
        return amp_mpi__hipamp(st, "amp_mpi_choose_path: amp_accelerator_get_info");
    if ((st = amp_mpi_query_gpu_support(&out->gpu)) != AMP_OK) goto fail;

    const char *from = "requested";
    if (requested == AMP_MPI_PATH_AUTO) {
        const char *env = amp_mpi__env("AMP_MPI_PATH");
        if (env) {
            if ((st = amp_mpi_path_parse(env, &requested)) != AMP_OK) {
                amp_mpi__fail(st, "AMP_MPI_PATH=\"%s\": use auto, host, device, staged or nccl", env);
                goto fail;
            }
            from = "AMP_MPI_PATH";
        }
    }
    char vendor = amp_mpi__vendor(&info);
    bool vendor_aware = (vendor == 'c' && out->gpu.cuda) || (vendor == 'h' && out->gpu.rocm);
    const char *vname = vendor == 'c' ? "CUDA" : vendor == 'h' ? "ROCm" : "GPU";
    char *why = out->reason;
    size_t n = sizeof out->reason;
    switch (requested) {
    case AMP_MPI_PATH_AUTO:
        if (info.is_emulated || info.is_unified_memory) {
            out->path = AMP_MPI_PATH_HOST;
            snprintf(why, n, "%s computes on host memory (%s): MPI works on it in place, nothing is copied",
                     info.device_path, info.unified_memory_reason);
        } else if (vendor_aware) {
            out->path = AMP_MPI_PATH_DEVICE;
            snprintf(why, n, "the MPI library takes %s device pointers (%s): they are handed to it directly", vname,
                     out->gpu.reason);
        } else if (vendor && amp_mpi__nccl_available(vendor, out->nccl, sizeof out->nccl)) {
            out->path = AMP_MPI_PATH_NCCL;
            snprintf(why, n,
                     "the MPI library does not take %s device pointers (%.200s), and %.120s is there: halos move "
                     "device to device through it, MPI only bootstraps it",
                     vname, out->gpu.reason, out->nccl);
        } else {
            out->path = AMP_MPI_PATH_STAGED;
            snprintf(why, n,
                     "%.40s is a discrete GPU, the MPI library does not take %s device pointers (%.160s) and no "
                     "NCCL/RCCL (%.160s): only the halo sections cross to host memory, pinned and pipelined",
                     info.device_path, vname, out->gpu.reason, out->nccl[0] ? out->nccl : "not looked for");
        }
        break;
    case AMP_MPI_PATH_HOST:
        out->path = AMP_MPI_PATH_HOST;
        if (info.is_emulated || info.is_unified_memory)
            snprintf(why, n, "%s: %s computes on host memory: MPI works on it in place", from, info.device_path);
        else
            snprintf(why, n,
                     "%s: %s is a discrete GPU: MPI works on host memory in place, and hipamp copies views of it to "
                     "the device for each kernel",
                     from, info.device_path);
        break;
    case AMP_MPI_PATH_DEVICE:
        if (vendor && !vendor_aware) {
            st = amp_mpi__fail(AMP_ERROR_UNSUPPORTED,
                               "%s: device path on %s, but the MPI library (%s) does not take %s device pointers (%s); "
                               "set AMP_MPI_GPU_AWARE=1 only if it does",
                               from, info.device_path, out->gpu.library, vname, out->gpu.reason);
            goto fail;
        }
        out->path = AMP_MPI_PATH_DEVICE;
        if (vendor)
            snprintf(why, n, "%s: the MPI library takes %s device pointers (%s)", from, vname, out->gpu.reason);
        else
            snprintf(why, n, "%s: %s keeps arrays in host memory, so its device pointers are host pointers", from,
                     info.device_path);
        break;
    case AMP_MPI_PATH_STAGED:
        out->path = AMP_MPI_PATH_STAGED;
        snprintf(why, n, "%s: the halo sections are copied to host buffers and back", from);
        break;
    case AMP_MPI_PATH_NCCL:
        /* NCCL moves device memory: on an accelerator that computes on host
         * memory only a library named on purpose (a stand-in) may take it;
         * a real NCCL would be handed host addresses. */
        if (!vendor && !amp_mpi__env("AMP_MPI_NCCL_LIBRARY")) {
            st = amp_mpi__fail(AMP_ERROR_UNSUPPORTED,
                               "%s: nccl path on %s, which computes on host memory: NCCL moves device memory "
                               "(AMP_MPI_NCCL_LIBRARY may name a stand-in library that takes host memory)",
                               from, info.device_path);
            goto fail;
        }
        /* The reason whole (a refused path's, with the directory and who
         * may write it, outgrows out->nccl). */
        char nccl[sizeof out->nccl * 3];
        if (!amp_mpi__nccl_available(vendor, nccl, sizeof nccl)) {
            st = amp_mpi__fail(AMP_ERROR_UNSUPPORTED,
                               "%s: nccl path on %s, but no NCCL/RCCL library loads: %s (AMP_MPI_NCCL_LIBRARY names "
                               "another)",
                               from, info.device_path, nccl);
            goto fail;
        }
        snprintf(out->nccl, sizeof out->nccl, "%.*s", (int)sizeof out->nccl - 1, nccl);
        out->path = AMP_MPI_PATH_NCCL;
        if (vendor)
            snprintf(why, n, "%s: halos move device to device through %s", from, out->nccl);
        else
            snprintf(why, n,
                     "%s: %s keeps arrays in host memory; %s gets their host addresses (only a stand-in library "
                     "takes them: a real NCCL fails to start and the exchanger falls back to staged)",
                     from, info.device_path, out->nccl);
        break;
    }
    return AMP_OK;
fail:
    memset(out, 0, sizeof *out);
    return st;
}
