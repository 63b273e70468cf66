/* driver_hip.c — the HIP driver table (libamdhip64 + hipRTC + comgr, all loaded with dlopen, no HIP header) and the hipRTC/comgr helpers shared with amd_target.c. */
#include "gpu_driver.h"

#include "base/core.h"
#include "hip_abi.h"

#include <ctype.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DECLARE_FN(name, ret, args) ret(*name) args;
static struct { HIP_FUNCS(DECLARE_FN) HIP_OPTIONAL(DECLARE_FN) } H;
static struct { HIPRTC_FUNCS(DECLARE_FN) } R;
static struct { COMGR_FUNCS(DECLARE_FN) } C;
#undef DECLARE_FN

/* HIP on NVIDIA: HIP's NVIDIA platform maps every HIP runtime, module and
 * hipRTC call onto the CUDA runtime, driver and NVRTC. HIP ships it as
 * headers only; a library that exports those inline functions under
 * libamdhip64's names (test/hip_on_nvidia builds one) lets this driver run
 * on an NVIDIA GPU. HIP_PLATFORM=nvidia (HIP's own variable, as hipcc reads
 * it; "nvcc" is its old spelling) says that the libamdhip64 found is such a
 * library. Then, and only then: a device's architecture is its compute
 * capability ("sm_90", there is no gcnArchName); hipRTC is NVRTC, so
 * kernels compile for compute_NN with NVRTC's options and come back as PTX,
 * which hipModuleLoadData hands to the CUDA driver; a thread has no current
 * context until the CUDA runtime binds one, so enter() always calls
 * hipSetDevice and a launch that finds no context enters and retries, as
 * the CUDA driver does. Everything else is the same code as on AMD. */
static bool on_nvidia;
static pthread_once_t platform_once = PTHREAD_ONCE_INIT;

static void read_platform(void)
{
    const char *platform = amp__env("HIP_PLATFORM");
    on_nvidia = platform && (!strcmp(platform, "nvidia") || !strcmp(platform, "nvcc"));
}

static const char *hip_why = "HIP not probed";
static const char *rtc_why = "hipRTC not probed";
static const char *comgr_why = "comgr not probed";
static bool hip_ok, rtc_ok, comgr_ok;
static char rtc_version[32];
static int rtc_release; /* hiprtcVersion as major * 100 + minor (NVRTC's on HIP's NVIDIA platform) */
static pthread_once_t hip_once = PTHREAD_ONCE_INIT;
static pthread_once_t rtc_once = PTHREAD_ONCE_INIT;
static pthread_once_t comgr_once = PTHREAD_ONCE_INIT;
/* hipRTC/comgr in ROCm 5 keep process-global LLVM state; compiles are
 * serialized to stay clear of its thread-safety bugs. Leaf lock. */
static pthread_mutex_t rtc_lock = PTHREAD_MUTEX_INITIALIZER;

/* Resolve every name of a list; false (and *missing = the name) when one is
 * absent. The library handle is never closed: function pointers stay valid
 * until exit. */
#define LOAD_FN(name, ret, args)                                                        \
    if (ok) {                                                                           \
        *(void **)&tbl->name = dlsym(lib, #name);                                       \
        if (!tbl->name) { ok = false; *missing = #name; }                               \
    }
#define LOAD_OPT(name, ret, args) *(void **)&tbl->name = dlsym(lib, #name);

static void *hip_lib;
static char hip_library[1024]; /* the file loaded, or why none was */

static void load_hip(void)
{
    static const char *const names[] = {"libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6",
                                        "libamdhip64.so.5", NULL};
    pthread_once(&platform_once, read_platform);
    void *lib = amp__gpu_dlopen_first(names, amp__gpu_rocm_lib_dirs(), hip_library, sizeof hip_library);
    if (!lib) { hip_why = hip_library; return; }
    /* hipExtMallocWithFlags is AMD's own (ROCm 4.2 on); HIP's NVIDIA
     * platform has no such function. */
    if (on_nvidia && dlsym(lib, "hipExtMallocWithFlags")) {
        static char buf[1024];
        snprintf(buf, sizeof buf,
                 "HIP_PLATFORM=nvidia, but %.700s is AMD's HIP runtime (it exports hipExtMallocWithFlags), not "
                 "HIP's NVIDIA platform (put its directory first on LD_LIBRARY_PATH, or unset HIP_PLATFORM)",
                 hip_library);
        hip_why = buf;
        return;
    }
    hip_lib = lib;
    bool ok = true;
    const char *miss = NULL, **missing = &miss;
    __typeof__(H) *tbl = &H;
    HIP_FUNCS(LOAD_FN)
    HIP_OPTIONAL(LOAD_OPT)
    if (!ok) {
        static char buf[128];
        snprintf(buf, sizeof buf, "libamdhip64 lacks %s", miss);
        hip_why = buf;
        return;
    }
    hip_ok = true;
    hip_why = NULL;
}

static void load_rtc(void)
{
    pthread_once(&platform_once, read_platform);
    static const char *const names[] = {"libhiprtc.so", "libhiprtc.so.7", "libhiprtc.so.6",
                                        "libhiprtc.so.5", NULL};
    static char why[1024] = "not looked for: on HIP's NVIDIA platform hipRTC is in libamdhip64";
    /* ROCm 5 ships hipRTC inside libamdhip64 itself, and so does the
     * NVIDIA-platform runtime, whose hipRTC must be the one used with it
     * (NVRTC): there an AMD libhiprtc is not looked for. */
    void *lib = on_nvidia ? NULL : amp__gpu_dlopen_first(names, amp__gpu_rocm_lib_dirs(), why, sizeof why);
    if (!lib) {
        pthread_once(&hip_once, load_hip);
        lib = hip_lib;
    }
    if (!lib) {
        static char both[2048];
        snprintf(both, sizeof both, "%s; and libamdhip64, which holds hipRTC in ROCm 5: %s", why, hip_why);
        rtc_why = both;
        return;
    }
    bool ok = true;
    const char *miss = NULL, **missing = &miss;
    __typeof__(R) *tbl = &R;
    HIPRTC_FUNCS(LOAD_FN)
    if (!ok) {
        static char buf[128];
        snprintf(buf, sizeof buf, "hipRTC library lacks %s", miss);
        rtc_why = buf;
        return;
    }
    int major = 0, minor = 0;
    R.hiprtcVersion(&major, &minor);
    rtc_release = major * 100 + minor;
    snprintf(rtc_version, sizeof rtc_version, "hiprtc %d.%d%s", major, minor, on_nvidia ? " (nvrtc)" : "");
    rtc_ok = true;
    rtc_why = NULL;
}

static void load_comgr(void)
{
    static const char *const names[] = {"libamd_comgr.so", "libamd_comgr.so.3", "libamd_comgr.so.2",
                                        NULL};
    static char why[768];
    void *lib = amp__gpu_dlopen_first(names, amp__gpu_rocm_lib_dirs(), why, sizeof why);
    if (!lib) { comgr_why = why; return; }
    bool ok = true;
    const char *miss = NULL, **missing = &miss;
    __typeof__(C) *tbl = &C;
    COMGR_FUNCS(LOAD_FN)
    if (!ok) {
        static char buf[128];
        snprintf(buf, sizeof buf, "libamd_comgr lacks %s", miss);
        comgr_why = buf;
        return;
    }
    comgr_ok = true;
    comgr_why = NULL;
}
#undef LOAD_FN
#undef LOAD_OPT

/* ------------------------------------------------------- comgr targets */

#define AMDHSA_PREFIX "amdgcn-amd-amdhsa--"

const char *amp__amd_isa_name(size_t i)
{
    /* With HIP's NVIDIA platform as hipRTC no AMD target can be compiled,
     * whatever comgr knows. */
    pthread_once(&platform_once, read_platform);
    if (on_nvidia) return NULL;
    pthread_once(&comgr_once, load_comgr);
    if (!comgr_ok) return NULL;
    size_t n = 0;
    const char *name = NULL;
    if (C.amd_comgr_get_isa_count(&n) != 0 || i >= n) return NULL;
    if (C.amd_comgr_get_isa_name(i, &name) != 0 || !name) return NULL;
    return strncmp(name, AMDHSA_PREFIX, strlen(AMDHSA_PREFIX)) == 0 ? name + strlen(AMDHSA_PREFIX)
                                                                     : name;
}

/* Quiet check (no thread message): writes the reason to why. The base
 * processor must be in comgr's ISA list, and comgr must accept the full
 * target id: amd_comgr_get_isa_metadata rejects features a processor lacks
 * ("gfx1030:xnack+"), which hipRTC 5.2 would otherwise abort on. */
static amp_status validate_target_quiet(const char *target, char *why, size_t n)
{
    if (!target || !*target) {
        snprintf(why, n, "target is %s", target ? "empty" : "NULL");
        return AMP_ERROR_INVALID_ARGUMENT;
    }
    size_t len = strlen(target);
    if (len > 80) {
        snprintf(why, n, "target '%.40s...' is too long", target);
        return AMP_ERROR_UNSUPPORTED;
    }
    for (size_t i = 0; i < len; ++i) {
        unsigned char c = (unsigned char)target[i];
        if (!(isalnum(c) || c == ':' || c == '+' || c == '-' || c == '_')) {
            snprintf(why, n, "target '%s' has an invalid character", target);
            return AMP_ERROR_UNSUPPORTED;
        }
    }
    pthread_once(&comgr_once, load_comgr);
    if (!comgr_ok) {
        snprintf(why, n, "cannot validate AMD target '%s': %s", target, comgr_why);
        return AMP_ERROR_UNSUPPORTED;
    }
    size_t base = strcspn(target, ":");
    size_t count = 0;
    bool listed = false;
    if (C.amd_comgr_get_isa_count(&count) == 0) {
        for (size_t i = 0; i < count && !listed; ++i) {
            const char *name = NULL;
            if (C.amd_comgr_get_isa_name(i, &name) != 0 || !name) continue;
            if (strncmp(name, AMDHSA_PREFIX, strlen(AMDHSA_PREFIX)) == 0) name += strlen(AMDHSA_PREFIX);
            listed = strlen(name) == base && strncmp(name, target, base) == 0;
        }
    }
    if (!listed) {
        snprintf(why, n, "AMD target '%s' is unknown to the installed comgr/hipRTC (see hipamp-compile --list-targets)",
                 target);
        return AMP_ERROR_UNSUPPORTED;
    }
    char full[128];
    snprintf(full, sizeof full, AMDHSA_PREFIX "%s", target);
    comgr_md md = {0};
    if (C.amd_comgr_get_isa_metadata(full, &md) != 0) {
        snprintf(why, n, "AMD target '%s': comgr rejects its feature list (processor known, features not)",
                 target);
        return AMP_ERROR_UNSUPPORTED;
    }
    C.amd_comgr_destroy_metadata(md);
    return AMP_OK;
}

amp_status amp__amd_validate_target(const char *target)
{
    char why[256];
    amp_status st = validate_target_quiet(target, why, sizeof why);
    return st == AMP_OK ? AMP_OK : amp__fail(st, "%s", why);
}

const char *amp__hiprtc_version(const char **why)
{
    pthread_once(&rtc_once, load_rtc);
    if (why) *why = rtc_why;
    return rtc_ok ? rtc_version : NULL;
}

/* ------------------------------------------------------------ hipRTC */

/* Compile job with hipRTC: the fixed options first (the target and the
 * dialect), then the user's. target names the target in messages. On HIP's
 * NVIDIA platform the log is NVRTC's, its locations rewritten to hipRTC's
 * form. Caller has checked that rtc_ok and that the options name no
 * target. */
/* option_refused (may be NULL): set where hipRTC refused an option
 * (HIPRTC_ERROR_INVALID_OPTION). */
static amp_status hiprtc_build(const char *target, const char *const *fixed, size_t nfixed,
                               const amp__compile_job *job, void **bin, size_t *bin_size, bool *option_refused)
{
    amp_status st = AMP_OK;
    const char *source_name = job->source_name ? job->source_name : "kernel.hip";
    char **argv = NULL, *storage = NULL, *log = NULL, *code = NULL;
    const char **hdr = NULL, **hdr_names = NULL;
    void *prog = NULL;
    bool locked = false;
    size_t argc = 0;
    *bin = NULL;
    *bin_size = 0;

    if (!job->source) { st = amp__fail(AMP_ERROR_INVALID_ARGUMENT, "source is NULL"); goto fail; }
    if ((st = amp__split_options(job->options, nfixed, 0, &argv, &argc, &storage)) != AMP_OK) goto fail;
    for (size_t i = 0; i < nfixed; ++i) argv[i] = (char *)fixed[i];
    if (job->nheaders && !(hdr = amp__gpu_header_arrays(job, &hdr_names))) {
        st = amp__fail(AMP_ERROR_OUT_OF_MEMORY, "cannot allocate the list of %zu headers", job->nheaders);
        goto fail;
    }

    pthread_mutex_lock(&rtc_lock);
    locked = true;
    int rc = R.hiprtcCreateProgram(&prog, job->source, source_name, (int)job->nheaders, hdr, hdr_names);
    if (rc != 0) {
        st = amp__fail(AMP_ERROR_COMPILE, "hiprtcCreateProgram(%s): %s", source_name, R.hiprtcGetErrorString(rc));
        prog = NULL;
        goto fail;
    }
    int crc = amp__hiprtc_compile_call(R.hiprtcCompileProgram, prog, (int)argc, (const char **)argv);
    size_t log_size = 0;
    if (R.hiprtcGetProgramLogSize(prog, &log_size) == 0 && log_size > 1) {
        log = malloc(log_size + 1);
        if (log && R.hiprtcGetProgramLog(prog, log) == 0) log[log_size] = '\0';
        else { free(log); log = NULL; }
    }
    if (log && on_nvidia) amp__nvrtc_normalize_log(log, source_name);
    if (crc != 0) {
        if (option_refused) *option_refused = crc == HIPRTC_ERROR_INVALID_OPTION;
        char hint[400] = "";
        if (on_nvidia) amp__nvrtc_kernel_name_hint(log, job, hint, sizeof hint);
        st = amp__fail(AMP_ERROR_COMPILE, "hipRTC failed to compile %s for %s (%s):\n%s%s", source_name, target,
                       R.hiprtcGetErrorString(crc), hint, log ? log : "(no log)");
        goto fail;
    }
    size_t size = 0;
    if ((rc = R.hiprtcGetCodeSize(prog, &size)) != 0 || size == 0) {
        st = amp__fail(AMP_ERROR_COMPILE, "hipRTC produced no code for %s (%s)", target,
                       rc ? R.hiprtcGetErrorString(rc) : "empty");
        goto fail;
    }
    code = malloc(size);
    if (!code) {
        st = amp__fail(AMP_ERROR_OUT_OF_MEMORY, "cannot allocate %zu bytes for a code object", size);
        goto fail;
    }
    if ((rc = R.hiprtcGetCode(prog, code)) != 0) {
        st = amp__fail(AMP_ERROR_COMPILE, "hiprtcGetCode: %s", R.hiprtcGetErrorString(rc));
        goto fail;
    }
    R.hiprtcDestroyProgram(&prog);
    pthread_mutex_unlock(&rtc_lock);
    free(hdr);
    free(log);
    free(argv);
    free(storage);
    *bin = code; /* on NVIDIA: PTX, its size counting the NUL cuModuleLoadData needs */
    *bin_size = size;
    return AMP_OK;
fail:
    if (prog) R.hiprtcDestroyProgram(&prog);
    if (locked) pthread_mutex_unlock(&rtc_lock);
    free(hdr);
    free(code);
    free(log);
    free(argv);
    free(storage);
    return st;
}

amp_status amp__hiprtc_compile(const char *target, const amp__compile_job *job, void **bin, size_t *bin_size)
{
    /* "-arch" covers -arch, --gpu-architecture and --cuda-gpu-arch, which
     * clang takes as --offload-arch. */
    static const char *const target_words[] = {"offload-arch", "-mcpu", "-arch", "amdgpu-target", NULL};
    amp_status st;
    char arch_opt[128];
    *bin = NULL;
    *bin_size = 0;
    if ((st = amp__amd_validate_target(target)) != AMP_OK) return st;
    pthread_once(&rtc_once, load_rtc);
    if (!rtc_ok) return amp__fail(AMP_ERROR_UNSUPPORTED, "cannot compile for %s: %s", target, rtc_why);
    if (on_nvidia)
        return amp__fail(AMP_ERROR_UNSUPPORTED,
                         "cannot compile for AMD target %s: the hipRTC loaded is HIP's NVIDIA platform "
                         "(HIP_PLATFORM=nvidia), which compiles for NVIDIA GPUs only", target);
    if ((st = amp__gpu_refuse_target_options(job->options, target_words)) != AMP_OK) return st;
    if ((st = amp__gpu_refuse_asm_reads(job, target)) != AMP_OK) return st;
    snprintf(arch_opt, sizeof arch_opt, "--offload-arch=%s", target);
    const char *fixed[] = {arch_opt, "-std=c++17", "-O3"};
    return hiprtc_build(target, fixed, 3, job, bin, bin_size, NULL);
}

/* HIP on NVIDIA: hipRTC is NVRTC, which takes a virtual architecture
 * (compute_NN: hiprtcGetCode is nvrtcGetPTX) and has no -O3 (it always
 * optimizes). */
static amp_status hiprtc_compile_nvidia(const char *arch, const amp__compile_job *job, void **bin, size_t *bin_size)
{
    /* There hipRTC's version is NVRTC's: 12.9 and later get --no-cache (their
     * compute cache is not hipamp's to trust: driver_cuda.c), 12.4 and later
     * --split-compile as on the CUDA driver. The driver still JIT-compiles
     * the PTX hipRTC gives (hiprtcGetCode is nvrtcGetPTX) through the same
     * compute cache: only CUDA_CACHE_DISABLE=1 keeps it out. */
    static const char *const target_words[] = {"-arch", "--gpu-architecture", "offload-arch", NULL};
    amp_status st;
    char arch_opt[64];
    int sm = 0;
    *bin = NULL;
    *bin_size = 0;
    if (sscanf(arch, "sm_%d", &sm) != 1 || sm <= 0)
        return amp__fail(AMP_ERROR_UNSUPPORTED, "NVIDIA arch '%s' is not of the form sm_XY", arch);
    pthread_once(&rtc_once, load_rtc);
    if (!rtc_ok) return amp__fail(AMP_ERROR_UNSUPPORTED, "cannot compile for %s: %s", arch, rtc_why);
    if ((st = amp__gpu_refuse_target_options(job->options, target_words)) != AMP_OK ||
        (st = amp__nvrtc_refuse_eof_byte(job)) != AMP_OK)
        return st;
    snprintf(arch_opt, sizeof arch_opt, "--gpu-architecture=compute_%d", sm);
    const char *fixed[4] = {arch_opt, "-std=c++17"};
    size_t nfixed = 2;
    char split_opt[32];
    int split = amp__nvrtc_split_jobs(rtc_release, job);
    snprintf(split_opt, sizeof split_opt, "--split-compile=%d", split);
    if (amp__nvrtc_takes_no_cache(rtc_release)) fixed[nfixed++] = "--no-cache";
    if (split > 1) fixed[nfixed++] = split_opt;
    bool refused = false;
    st = hiprtc_build(arch, fixed, nfixed, job, bin, bin_size, split > 1 ? &refused : NULL);
    /* An option refused: perhaps --split-compile (an NVRTC that lacks it, or
     * the user's own options clashing with it), so once more without it, as
     * the CUDA driver retries (driver_cuda.c, minimal_may_explain). */
    if (st != AMP_OK && refused) st = hiprtc_build(arch, fixed, nfixed - 1, job, bin, bin_size, NULL);
    return st;
}

/* ------------------------------------------------------ runtime table */

static amp_status hip_fail(hip_err err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static amp_status hip_fail(hip_err err, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    const char *es = H.hipGetErrorString ? H.hipGetErrorString(err) : NULL;
    return amp__fail(err == HIP_ERROR_OUT_OF_MEMORY ? AMP_ERROR_OUT_OF_MEMORY : AMP_ERROR_DEVICE,
                     "%s: %s (hipError %d)", what, es ? es : "unknown error", err);
}

/* Call after a HIP failure the library handles itself (a name not found, a
 * range already registered, an event not ready, an attribute a runtime
 * lacks): ROCm 7 keeps the last error until hipGetLastError reads it, so the
 * user's own hipGetLastError would otherwise report our expected failure.
 * Returns e. */
static hip_err hip_handled(hip_err e)
{
    if (e != HIP_SUCCESS && H.hipGetLastError) (void)H.hipGetLastError();
    return e;
}

static int hip_device_count(char *why, size_t why_size)
{
    int n = 0;
    hip_err e = hip_handled(H.hipGetDeviceCount(&n));
    if (e != HIP_SUCCESS) {
        const char *es = H.hipGetErrorString ? H.hipGetErrorString(e) : NULL;
        snprintf(why, why_size, "hipGetDeviceCount failed: %s (hipError %d)%s", es ? es : "unknown error", e,
                 on_nvidia ? " (HIP_PLATFORM=nvidia: the CUDA runtime under it found no usable GPU)"
                           : " (is the amdgpu kernel driver loaded, and may this user open /dev/kfd?)");
        return 0;
    }
    if (n <= 0) snprintf(why, why_size, "hipGetDeviceCount: zero devices");
    return n > 0 ? n : 0;
}

static int hip_attr(int attr, int ord, int dflt)
{
    int v = 0;
    return hip_handled(H.hipDeviceGetAttribute(&v, attr, ord)) == HIP_SUCCESS ? v : dflt;
}

static bool looks_like_arch(const char *s, size_t room)
{
    if (room < 5 || strncmp(s, "gfx", 3) != 0 || !isxdigit((unsigned char)s[3])) return false;
    size_t n = strnlen(s, room);
    if (n == room || n > 95) return false; /* unterminated or absurd */
    for (size_t i = 0; i < n; ++i) {
        unsigned char c = (unsigned char)s[i];
        if (!(isalnum(c) || c == ':' || c == '+' || c == '-')) return false;
    }
    return true;
}

/* HIP on NVIDIA: the architecture is the compute capability, which the
 * platform reports through the same attributes as AMD's GFX version. */
static void nvidia_device_arch(int ord, amp__gpu_devinfo *info)
{
    info->nvrtc_compiler = true;
    int major = hip_attr(HIP_ATTR_COMPUTE_CAPABILITY_MAJOR, ord, 0);
    int minor = hip_attr(HIP_ATTR_COMPUTE_CAPABILITY_MINOR, ord, 0);
    if (major <= 0 || minor < 0 || minor > 9) {
        snprintf(info->unavailable_reason, sizeof info->unavailable_reason,
                 "HIP_PLATFORM=nvidia, but HIP device %d reports compute capability %d.%d (is the libamdhip64 "
                 "loaded HIP's NVIDIA platform?)", ord, major, minor);
        snprintf(info->arch, sizeof info->arch, "sm-unknown");
        return;
    }
    snprintf(info->arch, sizeof info->arch, "sm_%d%d", major, minor);
    pthread_once(&rtc_once, load_rtc);
    if (!rtc_ok)
        snprintf(info->unavailable_reason, sizeof info->unavailable_reason, "no runtime compiler: %s", rtc_why);
}

/* Every query names the ordinal: opening a device must not change the calling
 * thread's current device (the user's hipSetDevice choice). */
static void hip_device_open(int ord, void **ctx, amp__gpu_devinfo *info)
{
    memset(info, 0, sizeof *info);
    *ctx = (void *)(intptr_t)ord;
    if (hip_handled(H.hipDeviceGetName(info->name, (int)sizeof info->name, ord)) != HIP_SUCCESS)
        snprintf(info->name, sizeof info->name, "AMD GPU %d", ord);
    info->name[sizeof info->name - 1] = '\0';
    size_t mem = 0;
    if (hip_handled(H.hipDeviceTotalMem(&mem, ord)) == HIP_SUCCESS) info->total_mem = mem;
    info->compute_units = hip_attr(HIP_ATTR_MULTIPROCESSOR_COUNT, ord, 1);
    info->max_tile_threads = hip_attr(HIP_ATTR_MAX_THREADS_PER_BLOCK, ord, 1024);
    info->max_tile_static_bytes = (size_t)hip_attr(HIP_ATTR_MAX_SHARED_MEMORY_PER_BLOCK, ord, 65536);
    info->integrated = hip_attr(HIP_ATTR_INTEGRATED, ord, 0) != 0;
    info->managed_memory = hip_attr(HIP_ATTR_MANAGED_MEMORY, ord, 0) != 0;
    info->pageable_access = hip_attr(HIP_ATTR_PAGEABLE_MEMORY_ACCESS, ord, 0) != 0;
    info->max_grid[0] = hip_attr(HIP_ATTR_MAX_GRID_DIM_X, ord, 2147483647);
    info->max_grid[1] = hip_attr(HIP_ATTR_MAX_GRID_DIM_Y, ord, 65535);
    info->max_grid[2] = hip_attr(HIP_ATTR_MAX_GRID_DIM_Z, ord, 65535);
    info->max_block[0] = hip_attr(HIP_ATTR_MAX_BLOCK_DIM_X, ord, 1024);
    info->max_block[1] = hip_attr(HIP_ATTR_MAX_BLOCK_DIM_Y, ord, 1024);
    info->max_block[2] = hip_attr(HIP_ATTR_MAX_BLOCK_DIM_Z, ord, 1024);
    if (on_nvidia) {
        nvidia_device_arch(ord, info);
        return;
    }

    /* Newest layout first; the first getter that exists and succeeds wins. */
    const struct { hip_err (*get)(void *, int); size_t off; } getters[] = {
        {H.hipGetDevicePropertiesR0600, HIP_PROPS_R0600_GCN_ARCH_OFFSET},
        {H.hipGetDevicePropertiesR0000, HIP_PROPS_R0000_GCN_ARCH_OFFSET},
        {H.hipGetDeviceProperties, HIP_PROPS_R0000_GCN_ARCH_OFFSET},
    };
    bool any_getter = false;
    unsigned char *props = calloc(1, HIP_PROPS_BUFFER);
    for (size_t g = 0; props && g < sizeof getters / sizeof getters[0] && !info->arch[0]; ++g) {
        if (!getters[g].get) continue;
        any_getter = true;
        memset(props, 0, HIP_PROPS_BUFFER);
        if (hip_handled(getters[g].get(props, ord)) != HIP_SUCCESS) continue;
        const char *at = (const char *)props + getters[g].off;
        if (!looks_like_arch(at, 256)) {
            at = NULL;
            for (size_t off = 0; off + 8 < HIP_PROPS_BUFFER && !at; off += 4)
                if (looks_like_arch((const char *)props + off, HIP_PROPS_BUFFER - off))
                    at = (const char *)props + off;
        }
        if (at) snprintf(info->arch, sizeof info->arch, "%s", at);
    }
    free(props);
    if (!any_getter) {
        snprintf(info->unavailable_reason, sizeof info->unavailable_reason,
                 "libamdhip64 exports no hipGetDeviceProperties (R0600, R0000 or plain): cannot read the gfx "
                 "architecture of HIP device %d", ord);
        snprintf(info->arch, sizeof info->arch, "gfx-unknown");
        return;
    }
    if (!info->arch[0]) {
        snprintf(info->unavailable_reason, sizeof info->unavailable_reason,
                 "could not read the gfx architecture of HIP device %d (an NVIDIA GPU through HIP's NVIDIA "
                 "platform needs HIP_PLATFORM=nvidia)", ord);
        snprintf(info->arch, sizeof info->arch, "gfx-unknown");
        return;
    }
    pthread_once(&rtc_once, load_rtc);
    if (!rtc_ok) {
        snprintf(info->unavailable_reason, sizeof info->unavailable_reason, "no runtime compiler: %s", rtc_why);
        return;
    }
    char why[256];
    if (validate_target_quiet(info->arch, why, sizeof why) != AMP_OK)
        snprintf(info->unavailable_reason, sizeof info->unavailable_reason, "%s", why);
}

/* The previous device travels in *prev as ordinal + 1, so that device 0 is
 * not NULL ("nothing to restore"). One hipGetDevice when the device already
 * is current; a thread that works on another device than its own current one
 * pays a hipSetDevice on entry and one on leave. */
static amp_status hip_enter(void *ctx, void **prev)
{
    int want = (int)(intptr_t)ctx, cur = -1;
    *prev = NULL;
    hip_err g = hip_handled(H.hipGetDevice(&cur));
    /* On NVIDIA the device can be current with no context bound to the
     * thread yet (the CUDA runtime binds it lazily, and module calls go to
     * the driver API, which needs it): hipSetDevice binds it. */
    if (g == HIP_SUCCESS && cur == want && !on_nvidia) return AMP_OK;
    hip_err e = H.hipSetDevice(want);
    if (e != HIP_SUCCESS) return hip_fail(e, "hipSetDevice(%d)", want);
    if (g == HIP_SUCCESS && cur >= 0 && cur != want) *prev = (void *)((intptr_t)cur + 1);
    return AMP_OK;
}

static void hip_leave(void *prev) { (void)hip_handled(H.hipSetDevice((int)((intptr_t)prev - 1))); }

static amp_status hip_compile(const char *arch, const amp__compile_job *job, void **bin, size_t *bin_size)
{
    return on_nvidia ? hiprtc_compile_nvidia(arch, job, bin, bin_size) : amp__hiprtc_compile(arch, job, bin, bin_size);
}

/* On HIP's NVIDIA platform the code object is PTX (hiprtc_compile_nvidia)
 * and the driver compiles it here, the build's last step: its failure
 * (CUDA_ERROR_INVALID_PTX; an extern function nothing defines is the
 * usual cause, which ptxas finds) is the source's compile error, as NVRTC
 * reports it on the CUDA driver. */
static amp_status hip_module_load(const void *bin, size_t size, void **module)
{
    /* Handled: a refused prebuilt or cached code object is compiled again. */
    hip_err e = hip_handled(H.hipModuleLoadData(module, bin));
    if (e == HIP_SUCCESS) return AMP_OK;
    *module = NULL;
    if (on_nvidia && e == HIP_ERROR_INVALID_KERNEL_FILE)
        return amp__fail(AMP_ERROR_COMPILE, "hipModuleLoadData(%zu-byte code object): the CUDA driver could not "
                         "compile the PTX hipRTC made (hipError %d); a function the source declares and nothing "
                         "defines is one cause (on a cuda: accelerator NVRTC names it)", size, (int)e);
    return hip_fail(e, "hipModuleLoadData(%zu-byte code object)", size);
}

static void hip_module_unload(void *module) { (void)H.hipModuleUnload(module); }

static amp_status hip_function_get(void *module, const char *name, void **fn, bool *found)
{
    hip_err e = H.hipModuleGetFunction(fn, module, name);
    *found = e == HIP_SUCCESS;
    if (e == HIP_SUCCESS) return AMP_OK;
    *fn = NULL;
    /* HIP 5.2 reports a missing name as hipErrorNotFound (500); other
     * releases have used hipErrorInvalidValue/InvalidDeviceFunction.
     * Treat all of those as "absent". */
    if (e == HIP_ERROR_NOT_FOUND || e == HIP_ERROR_INVALID_VALUE || e == HIP_ERROR_INVALID_DEVICE_FUNCTION) {
        hip_handled(e);
        return AMP_OK;
    }
    return hip_fail(e, "hipModuleGetFunction(%s)", name);
}

static amp_status hip_global_read(void *module, const char *name, void *dst, size_t size, size_t *actual,
                                  bool *found)
{
    void *dptr = NULL;
    size_t bytes = 0;
    *actual = 0;
    hip_err e = H.hipModuleGetGlobal(&dptr, &bytes, module, name);
    *found = e == HIP_SUCCESS && dptr;
    if (!*found) {
        if (e == HIP_SUCCESS || e == HIP_ERROR_NOT_FOUND || e == HIP_ERROR_INVALID_VALUE ||
            e == HIP_ERROR_INVALID_DEVICE_FUNCTION) {
            hip_handled(e);
            return AMP_OK;
        }
        return hip_fail(e, "hipModuleGetGlobal(%s)", name);
    }
    *actual = bytes;
    if (bytes != size) return AMP_OK;
    /* On a stream of its own that waits for no other, as cu_global_read
     * (driver_cuda.c) says why. */
    hipStream_t s = NULL;
    e = H.hipStreamCreateWithFlags(&s, HIP_STREAM_NON_BLOCKING);
    if (e != HIP_SUCCESS) return hip_fail(e, "hipStreamCreateWithFlags (to read device global %s)", name);
    e = H.hipMemcpyAsync(dst, (const void *)dptr, size, HIP_MEMCPY_D2H, s);
    if (e == HIP_SUCCESS) e = H.hipStreamSynchronize(s);
    (void)H.hipStreamDestroy(s);
    return e == HIP_SUCCESS ? AMP_OK : hip_fail(e, "reading device global %s (%zu bytes)", name, size);
}

static amp_status hip_stream_create(void **s)
{
    hip_err e = H.hipStreamCreateWithFlags(s, HIP_STREAM_NON_BLOCKING);
    return e == HIP_SUCCESS ? AMP_OK : hip_fail(e, "hipStreamCreateWithFlags");
}
static void hip_stream_destroy(void *s) { (void)H.hipStreamDestroy(s); }
static amp_status hip_stream_sync(void *s)
{
    hip_err e = H.hipStreamSynchronize(s);
    return e == HIP_SUCCESS ? AMP_OK : hip_fail(e, "waiting for the queue (a kernel or copy on it failed)");
}
static amp_status hip_stream_wait_event(void *s, void *ev)
{
    hip_err e = H.hipStreamWaitEvent(s, ev, 0);
    return e == HIP_SUCCESS ? AMP_OK : hip_fail(e, "hipStreamWaitEvent");
}
static amp_status hip_event_create_timed(void **ev)
{
    hip_err e = H.hipEventCreateWithFlags(ev, 0);
    return e == HIP_SUCCESS ? AMP_OK : hip_fail(e, "hipEventCreateWithFlags (timed)");
}
static amp_status hip_event_elapsed(void *start, void *end, float *ms)
{
    hip_err e = H.hipEventElapsedTime(ms, start, end);
    return e == HIP_SUCCESS ? AMP_OK : hip_fail(e, "hipEventElapsedTime");
}
static amp_status hip_memcpy_peer(void *dst, void *dst_ctx, const void *src, void *src_ctx, size_t bytes, void *s)
{
    hip_err e = H.hipMemcpyPeerAsync(dst, (int)(intptr_t)dst_ctx, src, (int)(intptr_t)src_ctx, bytes, s);
    return e == HIP_SUCCESS ? AMP_OK : hip_fail(e, "hipMemcpyPeerAsync(%zu bytes)", bytes);
}
static amp_status hip_peer_possible(int ord, int peer, bool *possible, char *why, size_t n)
{
    *possible = false;
    if (!H.hipDeviceCanAccessPeer || !H.hipDeviceEnablePeerAccess) {
        snprintf(why, n, "this HIP runtime has no hipDeviceCanAccessPeer or hipDeviceEnablePeerAccess");
        return AMP_OK;
    }
    int can = 0;
    hip_err e = hip_handled(H.hipDeviceCanAccessPeer(&can, ord, peer));
    if (e != HIP_SUCCESS) return hip_fail(e, "hipDeviceCanAccessPeer(%d, %d)", ord, peer);
    *possible = can != 0;
    snprintf(why, n, "hipDeviceCanAccessPeer(%d, %d) = %d", ord, peer, can);
    return AMP_OK;
}
static amp_status hip_peer_enable(void *peer_ctx, int peer)
{
    (void)peer_ctx; /* HIP names devices by ordinal */
    hip_err e = hip_handled(H.hipDeviceEnablePeerAccess(peer, 0));
    if (e == HIP_SUCCESS || e == HIP_ERROR_PEER_ACCESS_ALREADY_ENABLED) return AMP_OK;
    return hip_fail(e, "hipDeviceEnablePeerAccess(%d)", peer);
}
static amp_status hip_function_shared_bytes(void *fn, size_t *bytes)
{
    int v = 0;
    hip_err e = hip_handled(H.hipFuncGetAttribute(&v, HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn));
    *bytes = v > 0 ? (size_t)v : 0;
    return e == HIP_SUCCESS ? AMP_OK : hip_fail(e, "hipFuncGetAttribute(shared size)");
}
/* A runtime that cannot say gives 0 (the core then assumes the prelude's
 * default bound): no kernel becomes unusable over it. */
static amp_status hip_function_max_threads(void *fn, int *threads)
{
    int v = 0;
    hip_err e = hip_handled(H.hipFuncGetAttribute(&v, HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fn));
    *threads = e == HIP_SUCCESS && v > 0 ? v : 0;
    return AMP_OK;
}
/* A stream of another device would run this device's kernels there, on
 * memory of this one: refused where the runtime can say whose a stream is
 * (hipStreamGetDevice, HIP 6+). HIP 5.2 cannot: there a stream of another
 * device is accepted and fails at its first use, with HIP's own error.
 * NULL is the null stream (the current device's), always this device's
 * here: the check runs with this device current (gpu_queue_wrap). */
static amp_status hip_stream_check(void *stream, void *ctx)
{
    int want = (int)(intptr_t)ctx, dev = -1;
    if (!stream || !H.hipStreamGetDevice) return AMP_OK;
    hip_err e = H.hipStreamGetDevice(stream, &dev);
    if (e != HIP_SUCCESS) return hip_fail(e, "hipStreamGetDevice(%p): not a HIP stream of this process", stream);
    if (dev != want)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "HIP stream %p belongs to device %d, not to this device (%d)",
                         stream, dev, want);
    return AMP_OK;
}
static amp_status hip_event_create(void **ev)
{
    hip_err e = H.hipEventCreateWithFlags(ev, HIP_EVENT_DISABLE_TIMING);
    return e == HIP_SUCCESS ? AMP_OK : hip_fail(e, "hipEventCreateWithFlags");
}
static void hip_event_destroy(void *ev) { (void)H.hipEventDestroy(ev); }
static amp_status hip_event_record(void *ev, void *s)
{
    hip_err e = H.hipEventRecord(ev, s);
    return e == HIP_SUCCESS ? AMP_OK : hip_fail(e, "hipEventRecord");
}
static amp_status hip_event_sync(void *ev)
{
    hip_err e = H.hipEventSynchronize(ev);
    return e == HIP_SUCCESS ? AMP_OK : hip_fail(e, "waiting for an event (a kernel or copy before it failed)");
}
static amp_status hip_event_query(void *ev, bool *done)
{
    hip_err e = H.hipEventQuery(ev);
    *done = e == HIP_SUCCESS;
    if (e == HIP_SUCCESS || e == HIP_ERROR_NOT_READY) { hip_handled(e); return AMP_OK; }
    return hip_fail(e, "hipEventQuery");
}
static amp_status hip_mem_alloc(size_t bytes, void **dptr)
{
    hip_err e = H.hipMalloc(dptr, bytes);
    if (e == HIP_SUCCESS) return AMP_OK;
    *dptr = NULL;
    if (e == HIP_ERROR_OUT_OF_MEMORY)
        return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "hipMalloc(%zu bytes): out of device memory", bytes);
    return hip_fail(e, "hipMalloc(%zu bytes)", bytes);
}
static void hip_mem_free(void *dptr) { (void)H.hipFree(dptr); }
/* Host memory pinned by someone else: its device address through that
 * registration, which must cover all bytes (AMP_ERROR_UNSUPPORTED: a kernel
 * would read past it); *mapped false where the start has none. */
static amp_status hip_use_registration(void *host, size_t bytes, void **dptr, bool *mapped)
{
    *mapped = false;
    if (hip_handled(H.hipHostGetDevicePointer(dptr, host, 0)) != HIP_SUCCESS) {
        *dptr = NULL;
        return AMP_OK;
    }
    *mapped = true;
    void *end = NULL;
    if (bytes > 1 && (hip_handled(H.hipHostGetDevicePointer(&end, (char *)host + bytes - 1, 0)) != HIP_SUCCESS ||
                      end != (char *)*dptr + bytes - 1)) {
        *dptr = NULL;
        return amp__gpu_registered_in_part(host, bytes);
    }
    return AMP_OK;
}

static amp_status hip_host_register(void *host, size_t bytes, void **dptr, bool *owned)
{
    *dptr = NULL;
    *owned = false;
    bool mapped = false;
    amp_status st;
    /* Managed memory (hipMallocManaged) is device-accessible at its own
     * address and is not registered again. The query fails for plain
     * pageable memory (a handled failure). */
    unsigned managed = 0;
    hip_err known = H.hipPointerGetAttribute
                        ? hip_handled(H.hipPointerGetAttribute(&managed, HIP_POINTER_ATTRIBUTE_IS_MANAGED, host))
                        : HIP_ERROR_INVALID_VALUE;
    if (known == HIP_SUCCESS && managed) {
        *dptr = host;
        return AMP_OK;
    }
    /* Memory the runtime knows otherwise is pinned (hipHostMalloc) or
     * registered by the user, another library or us for another GPU: used
     * through that registration. AMD's hipHostRegister never says "already
     * registered" (ROCm clr registers again; our unregister would then end
     * the owner's); CUDA's does, and HIP on NVIDIA passes it on. */
    if (known == HIP_SUCCESS && ((st = hip_use_registration(host, bytes, dptr, &mapped)) != AMP_OK || mapped))
        return st;
    hip_err e = H.hipHostRegister(host, bytes, HIP_HOST_REGISTER_MAPPED | HIP_HOST_REGISTER_PORTABLE);
    if (e == HIP_ERROR_HOST_MEMORY_ALREADY_REGISTERED) {
        hip_handled(e);
        if ((st = hip_use_registration(host, bytes, dptr, &mapped)) != AMP_OK || mapped) return st;
        return amp__fail(AMP_ERROR_DEVICE, "hipHostGetDevicePointer(%p) of already registered memory failed", host);
    }
    if (e != HIP_SUCCESS) return hip_fail(e, "hipHostRegister(%p, %zu bytes)", host, bytes);
    e = H.hipHostGetDevicePointer(dptr, host, 0);
    if (e != HIP_SUCCESS) {
        (void)H.hipHostUnregister(host);
        *dptr = NULL;
        return hip_fail(e, "hipHostGetDevicePointer(%p)", host);
    }
    *owned = true;
    return AMP_OK;
}
static void hip_host_unregister(void *host) { (void)H.hipHostUnregister(host); }

static int hip_kind(amp__copy_dir d)
{
    return d == AMP__H2D ? HIP_MEMCPY_H2D : d == AMP__D2H ? HIP_MEMCPY_D2H : HIP_MEMCPY_D2D;
}
static amp_status hip_memcpy_1d(amp__copy_dir dir, void *dst, const void *src, size_t bytes, void *s)
{
    hip_err e = H.hipMemcpyAsync(dst, src, bytes, hip_kind(dir), s);
    return e == HIP_SUCCESS ? AMP_OK : hip_fail(e, "hipMemcpyAsync(%zu bytes)", bytes);
}
static amp_status hip_memcpy_2d(amp__copy_dir dir, void *dst, size_t dpitch, const void *src, size_t spitch,
                                size_t width, size_t height, void *s)
{
    hip_err e = H.hipMemcpy2DAsync(dst, dpitch, src, spitch, width, height, hip_kind(dir), s);
    return e == HIP_SUCCESS ? AMP_OK
                            : hip_fail(e, "hipMemcpy2DAsync(%zu x %zu bytes, pitches %zu/%zu)", height, width,
                                       dpitch, spitch);
}
/* A module launch goes to the device its stream belongs to, whatever
 * device the thread has current (ROCm 5.2 through 6.x read the device from
 * the stream: docs/architecture.md says where), so the launch path makes no
 * hipGetDevice/hipSetDevice and leaves the caller's current device alone.
 * The exceptions are the handles that mean "the current device's stream":
 * the null stream, hipStreamLegacy (1; ROCm 6 headers) and
 * hipStreamPerThread (2): a queue that wraps one of those still has its
 * device set around the launch. */
/* programmatic is never asked for: HIP has no programmatic dependent
 * launch (devinfo's programmatic_launch stays false). */
static amp_status hip_launch(void *ctx, void *fn, const unsigned g[3], const unsigned b[3], void *s, void **params,
                             bool programmatic)
{
    (void)programmatic;
    void *prev = NULL;
    bool entered = (uintptr_t)s <= HIP_STREAM_PER_THREAD;
    if (entered) {
        amp_status st = hip_enter(ctx, &prev);
        if (st != AMP_OK) return st;
    }
    hip_err e = H.hipModuleLaunchKernel(fn, g[0], g[1], g[2], b[0], b[1], b[2], 0, s, params, NULL);
    if (on_nvidia && !entered && (e == HIP_ERROR_INVALID_CONTEXT || e == HIP_ERROR_INVALID_HANDLE)) {
        /* The CUDA driver under it wants the stream's context current on
         * this thread (a thread that has not entered yet). */
        amp_status st = hip_enter(ctx, &prev);
        if (st != AMP_OK) return st;
        e = H.hipModuleLaunchKernel(fn, g[0], g[1], g[2], b[0], b[1], b[2], 0, s, params, NULL);
    }
    amp_status st = e == HIP_SUCCESS ? AMP_OK
                                     : hip_fail(e, "hipModuleLaunchKernel(grid %u,%u,%u block %u,%u,%u)", g[0], g[1],
                                                g[2], b[0], b[1], b[2]);
    if (prev) hip_leave(prev);
    return st;
}

/* Graphs by stream capture, where the runtime has every entry point. */
static bool hip_has_graphs(void)
{
#define HIP_HAS(name, ret, args) && H.name
    return true HIP_OPTIONAL_GRAPH(HIP_HAS);
#undef HIP_HAS
}

static amp_status hip_capture_begin(void *s)
{
    if (!hip_has_graphs()) return amp__fail(AMP_ERROR_UNSUPPORTED, "this HIP runtime has no stream capture (graphs)");
    hip_err e = H.hipStreamBeginCapture(s, HIP_STREAM_CAPTURE_MODE_RELAXED);
    return e == HIP_SUCCESS ? AMP_OK : hip_fail(e, "hipStreamBeginCapture");
}

static amp_status hip_capture_end(void *s, bool keep, void **exec)
{
    hipGraph_t g = NULL;
    *exec = NULL;
    hip_err e = H.hipStreamEndCapture(s, &g);
    if (e != HIP_SUCCESS) {
        if (g) (void)H.hipGraphDestroy(g);
        return hip_fail(e, "hipStreamEndCapture (a command recorded into the graph was refused)");
    }
    if (!keep || !g) {
        if (g) (void)H.hipGraphDestroy(g);
        return AMP_OK;
    }
    /* The executable graph is independent of the one it was made from. */
    e = H.hipGraphInstantiate(exec, g, NULL, NULL, 0);
    (void)H.hipGraphDestroy(g);
    if (e != HIP_SUCCESS) {
        *exec = NULL;
        return hip_fail(e, "hipGraphInstantiate");
    }
    return AMP_OK;
}

static amp_status hip_graph_launch(void *exec, void *s)
{
    hip_err e = H.hipGraphLaunch(exec, s);
    return e == HIP_SUCCESS ? AMP_OK : hip_fail(e, "hipGraphLaunch");
}

static void hip_graph_destroy(void *exec) { (void)H.hipGraphExecDestroy(exec); }

static char hip_version_tag[96];
static const amp__gpu_driver hip_table = {
    .platform = "hip",
    .version_tag = hip_version_tag,
    .library = hip_library,
    .device_count = hip_device_count,
    .device_open = hip_device_open,
    .enter = hip_enter,
    .leave = hip_leave,
    .compile = hip_compile,
    .module_load = hip_module_load,
    .module_unload = hip_module_unload,
    .function_get = hip_function_get,
    .global_read = hip_global_read,
    .stream_create = hip_stream_create,
    .stream_destroy = hip_stream_destroy,
    .stream_sync = hip_stream_sync,
    .stream_wait_event = hip_stream_wait_event,
    .event_create = hip_event_create,
    .event_create_timed = hip_event_create_timed,
    .event_elapsed = hip_event_elapsed,
    .memcpy_peer = hip_memcpy_peer,
    .peer_possible = hip_peer_possible,
    .peer_enable = hip_peer_enable,
    .function_shared_bytes = hip_function_shared_bytes,
    .function_max_threads = hip_function_max_threads,
    .stream_check = hip_stream_check,
    .event_destroy = hip_event_destroy,
    .event_record = hip_event_record,
    .event_sync = hip_event_sync,
    .event_query = hip_event_query,
    .mem_alloc = hip_mem_alloc,
    .mem_free = hip_mem_free,
    .host_register = hip_host_register,
    .host_unregister = hip_host_unregister,
    .memcpy_1d = hip_memcpy_1d,
    .memcpy_2d = hip_memcpy_2d,
    .launch = hip_launch,
    .capture_begin = hip_capture_begin,
    .capture_end = hip_capture_end,
    .graph_launch = hip_graph_launch,
    .graph_destroy = hip_graph_destroy,
};

static const amp__gpu_driver *hip_result;
static const char *hip_result_why = "HIP not probed";
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

/* The table is constant; only its version tag is written, once, before
 * hip_result publishes it (pthread_once orders the two). */
static void build_table(void)
{
    pthread_once(&hip_once, load_hip);
    if (!hip_ok) { hip_result_why = hip_why; return; }
    pthread_once(&rtc_once, load_rtc);
    int rt = 0;
    H.hipRuntimeGetVersion(&rt);
    snprintf(hip_version_tag, sizeof hip_version_tag, "%s runtime %d%s", rtc_ok ? rtc_version : "no-hiprtc", rt,
             on_nvidia ? " (HIP on NVIDIA)" : "");
    hip_result = &hip_table;
    hip_result_why = NULL;
}

const amp__gpu_driver *amp__hip_driver(const char **why)
{
    pthread_once(&table_once, build_table);
    if (why) *why = hip_result_why;
    return hip_result;
}
