/* driver_cuda.c — the CUDA driver table (libcuda.so.1 + libnvrtc loaded with dlopen, no CUDA header) used to run the HIP-dialect kernels on NVIDIA GPUs. */
#include "gpu_driver.h"

#include "base/core.h"
#include "cuda_abi.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DECLARE_FN(name, ret, args) ret(*name) args;
static struct { CUDA_FUNCS(DECLARE_FN) CUDA_OPTIONAL(DECLARE_FN) CUDA_RENAMED(DECLARE_FN) CUDA_GRAPH(DECLARE_FN) } D;
static struct { NVRTC_FUNCS(DECLARE_FN) NVRTC_OPTIONAL(DECLARE_FN) } N;
#undef DECLARE_FN

static const amp__gpu_driver *cuda_result;
static const char *cuda_why = "CUDA not probed";
static char cuda_library[768]; /* the file loaded, or why none was */
static const char *nvrtc_why = "NVRTC not probed";
static bool nvrtc_ok;
static char nvrtc_version[32];
/* NVRTC 12.4 and later take --minimal: its builtin header without texture,
 * surface and device-runtime declarations, which a kernel rarely uses and
 * every compile parsed. A compile that fails with it for want of those is
 * retried without (minimal_may_explain). */
static bool nvrtc_minimal;
/* NVRTC 12.4 and later also take --split-compile=N: its optimizer and ptxas
 * work on a source's kernels in up to N threads. The machine code is the
 * same (every .text section of TeaLeaf's 14 kernels and of the examples'
 * transposes, compared); TeaLeaf's source builds in half the time on a
 * 16-core host; a source of one kernel gains nothing and may pay a few ms
 * for the threads, so it gets none (amp__kernel_macro_count). N is
 * AMP_GPU_COMPILE_JOBS, else the CPUs this process may use, at most
 * NVRTC_SPLIT_MAX; 1 passes nothing. */
#define NVRTC_SPLIT_MAX 8
static int nvrtc_release; /* nvrtcVersion as major * 100 + minor */
static pthread_once_t cuda_once = PTHREAD_ONCE_INIT;
static pthread_once_t nvrtc_once = PTHREAD_ONCE_INIT; /* NVRTC loads without libcuda: it needs no GPU */

#define LOAD_FN(name, ret, args)                                                         \
    if (ok) {                                                                            \
        *(void **)&tbl->name = dlsym(lib, #name);                                        \
        if (!tbl->name) { ok = false; miss = #name; }                                    \
    }
#define LOAD_OPT(name, ret, args) *(void **)&tbl->name = dlsym(lib, #name);
#define LOAD_RENAMED(name, ret, args)                                                    \
    *(void **)&tbl->name = dlsym(lib, #name "_v2");                                      \
    if (!tbl->name) *(void **)&tbl->name = dlsym(lib, #name);

static void load_nvrtc(void)
{
    static const char *const names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so", NULL};
    static char why[1024];
    void *lib = amp__gpu_dlopen_first(names, amp__gpu_cuda_lib_dirs(), why, sizeof why);
    if (!lib) { nvrtc_why = why; return; }
    bool ok = true;
    const char *miss = NULL;
    __typeof__(N) *tbl = &N;
    NVRTC_FUNCS(LOAD_FN)
    if (!ok) {
        static char buf[128];
        snprintf(buf, sizeof buf, "libnvrtc lacks %s", miss);
        nvrtc_why = buf;
        return;
    }
    NVRTC_OPTIONAL(LOAD_OPT)
    int major = 0, minor = 0;
    N.nvrtcVersion(&major, &minor);
    snprintf(nvrtc_version, sizeof nvrtc_version, "nvrtc %d.%d", major, minor);
    nvrtc_release = major * 100 + minor;
    nvrtc_minimal = nvrtc_release >= 1204;
    nvrtc_ok = true;
    nvrtc_why = NULL;
}

static amp_status cu_fail(CUresult err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static amp_status cu_fail(CUresult err, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    const char *name = NULL, *str = NULL;
    if (D.cuGetErrorName) D.cuGetErrorName(err, &name);
    if (D.cuGetErrorString) D.cuGetErrorString(err, &str);
    return amp__fail(err == CUDA_ERROR_OUT_OF_MEMORY ? AMP_ERROR_OUT_OF_MEMORY : AMP_ERROR_DEVICE,
                     "%s: %s: %s", what, name ? name : "CUDA error", str ? str : "unknown error");
}

/* "CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected" into buf. */
static void cu_error_text(CUresult e, char *buf, size_t n)
{
    const char *name = NULL, *str = NULL;
    if (D.cuGetErrorName) D.cuGetErrorName(e, &name);
    if (D.cuGetErrorString) D.cuGetErrorString(e, &str);
    snprintf(buf, n, "%s (CUresult %d): %s", name ? name : "CUDA error", (int)e, str ? str : "unknown error");
}

static int cu_device_count(char *why, size_t why_size)
{
    int n = 0;
    CUresult e = D.cuDeviceGetCount(&n);
    char text[256];
    if (e != CUDA_SUCCESS) {
        cu_error_text(e, text, sizeof text);
        snprintf(why, why_size, "cuDeviceGetCount failed: %s", text);
        return 0;
    }
    if (n <= 0) snprintf(why, why_size, "cuDeviceGetCount: zero devices");
    return n > 0 ? n : 0;
}

static int cu_attr(int attr, CUdevice dev, int dflt)
{
    int v = 0;
    return D.cuDeviceGetAttribute(&v, attr, dev) == CUDA_SUCCESS ? v : dflt;
}

static int nvrtc_best_arch(int want, bool *exact);

/* The primary context is shared with the CUDA runtime and other libraries in
 * the process, so memory and modules are visible to them too; it is retained
 * once and never released (devices live until exit). */
static void cu_device_open(int ord, void **ctx, amp__gpu_devinfo *info)
{
    memset(info, 0, sizeof *info);
    *ctx = NULL;
    info->nvrtc_compiler = true;
    CUdevice dev = 0;
    CUresult e = D.cuDeviceGet(&dev, ord);
    if (e != CUDA_SUCCESS) {
        snprintf(info->unavailable_reason, sizeof info->unavailable_reason, "cuDeviceGet(%d) failed (%d)", ord, e);
        snprintf(info->name, sizeof info->name, "NVIDIA GPU %d", ord);
        return;
    }
    if (D.cuDeviceGetName(info->name, (int)sizeof info->name, dev) != CUDA_SUCCESS)
        snprintf(info->name, sizeof info->name, "NVIDIA GPU %d", ord);
    info->name[sizeof info->name - 1] = '\0';
    size_t mem = 0;
    if (D.cuDeviceTotalMem_v2(&mem, dev) == CUDA_SUCCESS) info->total_mem = mem;
    info->compute_units = cu_attr(CU_ATTR_MULTIPROCESSOR_COUNT, dev, 1);
    info->max_tile_threads = cu_attr(CU_ATTR_MAX_THREADS_PER_BLOCK, dev, 1024);
    /* Statically sized __shared__ is limited to this (48 KiB); the opt-in
     * larger size needs dynamic shared memory, which tile_static is not. */
    info->max_tile_static_bytes = (size_t)cu_attr(CU_ATTR_MAX_SHARED_MEMORY_PER_BLOCK, dev, 49152);
    info->integrated = cu_attr(CU_ATTR_INTEGRATED, dev, 0) != 0;
    info->managed_memory = cu_attr(CU_ATTR_MANAGED_MEMORY, dev, 0) != 0;
    info->pageable_access = cu_attr(CU_ATTR_PAGEABLE_MEMORY_ACCESS, dev, 0) != 0;
    info->max_grid[0] = cu_attr(CU_ATTR_MAX_GRID_DIM_X, dev, 2147483647);
    info->max_grid[1] = cu_attr(CU_ATTR_MAX_GRID_DIM_Y, dev, 65535);
    info->max_grid[2] = cu_attr(CU_ATTR_MAX_GRID_DIM_Z, dev, 65535);
    info->max_block[0] = cu_attr(CU_ATTR_MAX_BLOCK_DIM_X, dev, 1024);
    info->max_block[1] = cu_attr(CU_ATTR_MAX_BLOCK_DIM_Y, dev, 1024);
    info->max_block[2] = cu_attr(CU_ATTR_MAX_BLOCK_DIM_Z, dev, 64);
    int major = cu_attr(CU_ATTR_COMPUTE_CAPABILITY_MAJOR, dev, 0);
    int minor = cu_attr(CU_ATTR_COMPUTE_CAPABILITY_MINOR, dev, 0);
    snprintf(info->arch, sizeof info->arch, "sm_%d%d", major, minor);
    e = D.cuDevicePrimaryCtxRetain((CUcontext *)ctx, dev);
    if (e != CUDA_SUCCESS) {
        const char *s = NULL;
        D.cuGetErrorString(e, &s);
        snprintf(info->unavailable_reason, sizeof info->unavailable_reason,
                 "cuDevicePrimaryCtxRetain(%d): %s", ord, s ? s : "error");
        *ctx = NULL;
        return;
    }
    if (!nvrtc_ok) {
        snprintf(info->unavailable_reason, sizeof info->unavailable_reason, "no runtime compiler: %s", nvrtc_why);
        return;
    }
    /* Programmatic dependent launch needs Hopper or later, and kernels
     * compiled for it (cu_compile targets the best architecture NVRTC has
     * up to the device's): their entry points wait for the grid before. */
    bool exact = false;
    info->programmatic_launch = major >= 9 && D.cuLaunchKernelEx && nvrtc_best_arch(major * 10 + minor, &exact) >= 90;
}

/* Stands for "no context was current" in enter's *prev, so that NULL can
 * mean "nothing to restore". */
static char cu_no_context;

/* Any host thread may call in, so the device's primary context is made
 * current on entry, and the caller's context (possibly none) is put back by
 * cu_leave. Comparing first keeps the launch path to one cheap query when it
 * already is current (the common case), with nothing to undo. */
static amp_status cu_enter(void *ctx, void **prev)
{
    CUcontext cur = NULL;
    *prev = NULL;
    CUresult g = D.cuCtxGetCurrent(&cur);
    if (g == CUDA_SUCCESS && cur == ctx) return AMP_OK;
    if (!ctx) return amp__fail(AMP_ERROR_DEVICE, "CUDA device has no context (see its unavailable_reason)");
    CUresult e = D.cuCtxSetCurrent(ctx);
    if (e != CUDA_SUCCESS) return cu_fail(e, "cuCtxSetCurrent");
    /* When the current context could not be read there is nothing known to
     * restore; ours stays current (what the library did before). */
    if (g == CUDA_SUCCESS) *prev = cur ? (void *)cur : (void *)&cu_no_context;
    return AMP_OK;
}

static void cu_leave(void *prev)
{
    (void)D.cuCtxSetCurrent(prev == (void *)&cu_no_context ? NULL : (CUcontext)prev);
}

/* Highest NVRTC-supported real arch <= want (e.g. 90 for 90), or 0. */
static int nvrtc_best_arch(int want, bool *exact)
{
    *exact = false;
    if (!N.nvrtcGetNumSupportedArchs || !N.nvrtcGetSupportedArchs) return want; /* assume it knows */
    int n = 0, best = 0;
    if (N.nvrtcGetNumSupportedArchs(&n) != 0 || n <= 0 || n > 256) return want;
    int archs[256];
    if (N.nvrtcGetSupportedArchs(archs) != 0) return want;
    for (int i = 0; i < n; ++i) {
        if (archs[i] == want) { *exact = true; return want; }
        if (archs[i] < want && archs[i] > best) best = archs[i];
    }
    return best;
}

/* NVRTC writes "file(12): error"; hipRTC and the CPU compiler write
 * "file:12:". Rewriting NVRTC's form (for the user's file name only) gives
 * users and tests one format on every backend. In place: never grows. */
void amp__nvrtc_normalize_log(char *log, const char *name)
{
    size_t n = strlen(name);
    char *w = log;
    for (const char *r = log; *r;) {
        if (strncmp(r, name, n) == 0 && r[n] == '(') {
            const char *d = r + n + 1, *q = d;
            while (*q >= '0' && *q <= '9') ++q;
            if (q > d && q[0] == ')' && q[1] == ':') {
                memmove(w, r, n);
                w += n;
                *w++ = ':';
                memmove(w, d, (size_t)(q - d));
                w += q - d;
                r = q + 1; /* keep the ':' */
                continue;
            }
        }
        *w++ = *r++;
    }
    *w = '\0';
}

size_t amp__nvrtc_kernel_name_hint(const char *log, const amp__compile_job *job, char *hint, size_t cap)
{
    /* NVRTC: 'more than one instance of overloaded function "exp" has "C"
     * linkage'. A kernel is an extern "C" function of its own name (its
     * name in profilers and in the code object), and CUDA's headers declare
     * the C math functions extern "C" too. */
    static const char lead[] = "instance of overloaded function \"", tail[] = "\" has \"C\" linkage";
    const char *at = log ? strstr(log, lead) : NULL;
    if (cap) hint[0] = '\0';
    if (!at) return 0;
    const char *name = at + sizeof lead - 1, *end = strchr(name, '"');
    if (!end || end == name || end - name > 255 || strncmp(end, tail, sizeof tail - 1)) return 0;
    size_t len = (size_t)(end - name);
    bool kernel = job->source && amp__kernel_macro_defines(job->source, strlen(job->source), name, len);
    for (size_t h = 0; !kernel && h < job->nheaders; ++h)
        kernel = amp__kernel_macro_defines(job->headers[h].content, job->headers[h].size, name, len);
    if (!kernel) return 0;
    int n = snprintf(hint, cap,
                     "hipamp: a kernel cannot be named '%.*s' on NVIDIA GPUs: CUDA's headers declare a C function of "
                     "that name (a kernel is a C function of its own name); rename the kernel\n",
                     (int)len, name);
    return n < 0 ? 0 : (size_t)n;
}

/* Whether a failed compile with --minimal (and --split-compile) may
 * compile without them: an option this NVRTC refuses, or a log quoting a
 * name of what --minimal leaves out (NVRTC quotes identifiers:
 * "cudaError_t", "tex2D", "surf2Dwrite"). Other errors are the kernel's
 * own: no second compile. */
static bool minimal_may_explain(int crc, const char *log)
{
    enum { NVRTC_ERROR_INVALID_OPTION = 5 };
    if (crc == NVRTC_ERROR_INVALID_OPTION) return true;
    return log && (strstr(log, "\"cuda") || strstr(log, "\"tex") || strstr(log, "\"surf"));
}

/* NVRTC 12.9 and later keep what they compile in the CUDA driver's compute
 * cache (CUDA_CACHE_PATH) and hand it back to a later compile of the same
 * input. That directory is the user's choice and may be shared; what hipamp
 * runs must come from the compiler or from its own authenticated cache
 * (lib/core/compile_cache.c), so hipamp passes --no-cache. */
bool amp__nvrtc_takes_no_cache(int release) { return release >= 1209; }

/* Not at most the kernels named: a macro may define several (stream.hip's
 * four names make 14 kernels). */
int amp__nvrtc_split_jobs(int release, const amp__compile_job *job)
{
    if (release < 1204 || !job->source) return 1; /* no source: the compile's own check reports it */
    const char *user = job->source + amp__unit_library_end(job->source);
    int kernels = amp__kernel_macro_count(user, strlen(user), 2);
    for (size_t i = 0; i < job->nheaders && kernels < 2; ++i)
        kernels += amp__kernel_macro_count(job->headers[i].content, job->headers[i].size, 2 - kernels);
    return kernels >= 2 ? amp__compile_jobs("AMP_GPU_COMPILE_JOBS", NVRTC_SPLIT_MAX) : 1;
}

/* AMP_ERROR_COMPILE for the byte 0xFF at `at` in text (file the name of
 * its first line): where it is as the compile log would say, from the last
 * #line before it. */
static amp_status eof_byte_at(const char *text, const char *at, const char *file)
{
    char where[256];
    snprintf(where, sizeof where, "%s", file);
    long line = 1;
    for (const char *q = text; q < at;) {
        long n;
        int used = 0;
        if (!strncmp(q, "#line ", 6) && sscanf(q + 6, "%ld%n", &n, &used) == 1) {
            line = n - 1; /* the next line is n */
            const char *name = q + 6 + used;
            while (*name == ' ') ++name;
            const char *end = *name == '"' ? strchr(name + 1, '"') : NULL;
            if (end && !memchr(name, '\n', (size_t)(end - name)))
                snprintf(where, sizeof where, "%.*s", (int)(end - name - 1), name + 1);
        }
        const char *nl = memchr(q, '\n', (size_t)(at - q));
        if (!nl) break;
        ++line;
        q = nl + 1;
    }
    return amp__fail(AMP_ERROR_COMPILE,
                     "%s:%ld: byte 0xFF, which NVRTC takes for the end of its input: everything after it (kernels "
                     "included) would be dropped without an error; remove it, or write the text as UTF-8",
                     where, line);
}

amp_status amp__nvrtc_refuse_eof_byte(const amp__compile_job *job)
{
    /* The user's part (with the -D lines before it): hipamp's own text
     * holds no such byte. */
    const char *user = job->source + amp__unit_library_end(job->source);
    const char *at = strchr(user, '\xff');
    if (at) return eof_byte_at(user, at, job->source_name ? job->source_name : AMP__SOURCE_NAME);
    for (size_t i = 0; i < job->nheaders; ++i) {
        const amp__header *h = &job->headers[i];
        if ((at = memchr(h->content, 0xff, h->size))) return eof_byte_at(h->content, at, h->name);
    }
    if (job->options && strchr(job->options, '\xff'))
        return amp__fail(AMP_ERROR_COMPILE, "the options hold byte 0xFF, which NVRTC takes for the end of its input");
    return AMP_OK;
}

static amp_status cu_compile(const char *arch, const amp__compile_job *job, void **bin, size_t *bin_size)
{
    amp_status st = AMP_OK;
    char **argv = NULL, *storage = NULL, *log = NULL, *code = NULL;
    const char **hdr = NULL, **hdr_names = NULL;
    void *prog = NULL;
    size_t argc = 0, size = 0;
    char arch_opt[64];
    const char *name = job->source_name ? job->source_name : "kernel.hip";
    *bin = NULL;
    *bin_size = 0;

    /* "-arch" covers --gpu-architecture too. */
    static const char *const target_words[] = {"-arch", "offload-arch", NULL};
    if (!nvrtc_ok) { st = amp__fail(AMP_ERROR_UNSUPPORTED, "cannot compile for %s: %s", arch, nvrtc_why); goto fail; }
    if ((st = amp__gpu_refuse_target_options(job->options, target_words)) != AMP_OK) goto fail;
    if ((st = amp__nvrtc_refuse_eof_byte(job)) != AMP_OK) goto fail;
    int sm = 0;
    if (sscanf(arch, "sm_%d", &sm) != 1 || sm <= 0) {
        st = amp__fail(AMP_ERROR_UNSUPPORTED, "NVIDIA arch '%s' is not of the form sm_XY", arch);
        goto fail;
    }
    /* CUBIN for the device's own sm when NVRTC knows it; otherwise PTX for
     * the newest virtual arch it knows, which the driver JIT-compiles
     * forward (a GPU newer than the installed NVRTC). */
    bool exact = false;
    int use = nvrtc_best_arch(sm, &exact);
    if (use <= 0) {
        st = amp__fail(AMP_ERROR_UNSUPPORTED, "the installed %s supports no architecture up to %s", nvrtc_version, arch);
        goto fail;
    }
    bool cubin = exact && N.nvrtcGetCUBIN && N.nvrtcGetCUBINSize;
    snprintf(arch_opt, sizeof arch_opt, "--gpu-architecture=%s_%d", cubin ? "sm" : "compute", use);
    /* No --device-as-default-execution-space: hipRTC requires __device__ on
     * helper functions, so NVRTC must too, or a kernel that builds on NVIDIA
     * would fail on AMD. NVRTC has no -O3 (it always optimizes). */
    /* argv[0..1] are the options that only make the compile faster
     * (--split-compile where there is more than one worker, --minimal): the
     * compile starts at argv[0] or argv[1], and again without them at
     * argv[2] where minimal_may_explain its failure. */
    char split_opt[32];
    int split = amp__nvrtc_split_jobs(nvrtc_release, job); /* > 1 only where --minimal is taken too */
    snprintf(split_opt, sizeof split_opt, "--split-compile=%d", split);
    bool no_cache = amp__nvrtc_takes_no_cache(nvrtc_release);
    size_t lead = no_cache ? 5 : 4;
    if ((st = amp__split_options(job->options, lead, 0, &argv, &argc, &storage)) != AMP_OK) goto fail;
    argv[0] = split_opt;
    argv[1] = (char *)"--minimal";
    argv[2] = arch_opt;
    argv[3] = (char *)"-std=c++17";
    if (no_cache) argv[4] = (char *)"--no-cache";
    if (job->nheaders && !(hdr = amp__gpu_header_arrays(job, &hdr_names))) {
        st = amp__fail(AMP_ERROR_OUT_OF_MEMORY, "cannot allocate the list of %zu headers", job->nheaders);
        goto fail;
    }

    int crc = 0;
    for (int skip = !nvrtc_minimal ? 2 : split > 1 ? 0 : 1;; skip = 2) {
        if (prog) N.nvrtcDestroyProgram(&prog);
        prog = NULL;
        free(log);
        log = NULL;
        int rc = N.nvrtcCreateProgram(&prog, job->source, name, (int)job->nheaders, hdr, hdr_names);
        if (rc != 0) {
            st = amp__fail(AMP_ERROR_COMPILE, "nvrtcCreateProgram(%s): %s", name, N.nvrtcGetErrorString(rc));
            prog = NULL;
            goto fail;
        }
        crc = amp__nvrtc_compile_call(N.nvrtcCompileProgram, prog, (int)argc - skip, (const char *const *)argv + skip);
        size_t log_size = 0;
        if (N.nvrtcGetProgramLogSize(prog, &log_size) == 0 && log_size > 1) {
            log = malloc(log_size + 1);
            if (log && N.nvrtcGetProgramLog(prog, log) == 0) log[log_size] = '\0';
            else { free(log); log = NULL; }
        }
        if (crc == 0 || skip == 2 || !minimal_may_explain(crc, log)) break;
    }
    if (log) amp__nvrtc_normalize_log(log, name);
    if (crc != 0) {
        char hint[400];
        amp__nvrtc_kernel_name_hint(log, job, hint, sizeof hint);
        st = amp__fail(AMP_ERROR_COMPILE, "NVRTC failed to compile %s for %s (%s):\n%s%s", name,
                       strchr(arch_opt, '=') + 1, N.nvrtcGetErrorString(crc), hint, log ? log : "(no log)");
        goto fail;
    }
    int rc;
    rc = cubin ? N.nvrtcGetCUBINSize(prog, &size) : N.nvrtcGetPTXSize(prog, &size);
    if (rc != 0 || size == 0) {
        st = amp__fail(AMP_ERROR_COMPILE, "NVRTC produced no %s for %s", cubin ? "CUBIN" : "PTX", arch);
        goto fail;
    }
    code = malloc(size);
    if (!code) { st = amp__fail(AMP_ERROR_OUT_OF_MEMORY, "cannot allocate %zu bytes for a CUBIN", size); goto fail; }
    rc = cubin ? N.nvrtcGetCUBIN(prog, code) : N.nvrtcGetPTX(prog, code);
    if (rc != 0) {
        st = amp__fail(AMP_ERROR_COMPILE, "nvrtcGet%s: %s", cubin ? "CUBIN" : "PTX", N.nvrtcGetErrorString(rc));
        goto fail;
    }
    N.nvrtcDestroyProgram(&prog);
    free(hdr);
    free(log);
    free(argv);
    free(storage);
    *bin = code; /* PTX size includes its NUL, as cuModuleLoadData needs */
    *bin_size = size;
    return AMP_OK;
fail:
    if (prog) N.nvrtcDestroyProgram(&prog);
    free(hdr);
    free(code);
    free(log);
    free(argv);
    free(storage);
    return st;
}

amp_status amp__nvrtc_compile(const char *arch, const amp__compile_job *job, void **bin, size_t *bin_size)
{
    pthread_once(&nvrtc_once, load_nvrtc);
    return cu_compile(arch, job, bin, bin_size);
}

/* Real architectures NVRTC can emit CUBIN for, as "sm_NN" strings that live
 * until exit; read once. */
static char nvrtc_arch_names[64][12];
static size_t nvrtc_narchs;
static pthread_once_t nvrtc_arch_once = PTHREAD_ONCE_INIT;

static void list_nvrtc_archs(void)
{
    pthread_once(&nvrtc_once, load_nvrtc);
    if (!nvrtc_ok || !N.nvrtcGetNumSupportedArchs || !N.nvrtcGetSupportedArchs) return;
    int n = 0, archs[256];
    if (N.nvrtcGetNumSupportedArchs(&n) != 0 || n <= 0 || n > 256 || N.nvrtcGetSupportedArchs(archs) != 0) return;
    for (int k = 0; k < n && nvrtc_narchs < 64; ++k)
        snprintf(nvrtc_arch_names[nvrtc_narchs++], sizeof nvrtc_arch_names[0], "sm_%d", archs[k]);
}

const char *amp__nvrtc_arch_name(size_t i)
{
    pthread_once(&nvrtc_arch_once, list_nvrtc_archs);
    return i < nvrtc_narchs ? nvrtc_arch_names[i] : NULL;
}

static amp_status cu_module_load(const void *bin, size_t size, void **module)
{
    CUresult e = D.cuModuleLoadData(module, bin);
    if (e != CUDA_SUCCESS) { *module = NULL; return cu_fail(e, "cuModuleLoadData(%zu-byte image)", size); }
    return AMP_OK;
}
static void cu_module_unload(void *module) { (void)D.cuModuleUnload(module); }

static amp_status cu_function_get(void *module, const char *name, void **fn, bool *found)
{
    CUresult e = D.cuModuleGetFunction(fn, module, name);
    *found = e == CUDA_SUCCESS;
    if (e == CUDA_SUCCESS) return AMP_OK;
    *fn = NULL;
    return e == CUDA_ERROR_NOT_FOUND ? AMP_OK : cu_fail(e, "cuModuleGetFunction(%s)", name);
}

static amp_status cu_global_read(void *module, const char *name, void *dst, size_t size, size_t *actual,
                                 bool *found)
{
    CUdeviceptr dptr = 0;
    size_t bytes = 0;
    *actual = 0;
    CUresult e = D.cuModuleGetGlobal_v2(&dptr, &bytes, module, name);
    *found = e == CUDA_SUCCESS;
    if (!*found) return e == CUDA_ERROR_NOT_FOUND ? AMP_OK : cu_fail(e, "cuModuleGetGlobal(%s)", name);
    *actual = bytes;
    if (bytes != size) return AMP_OK;
    /* On a stream of its own that waits for no other: a copy on the legacy
     * stream waits for every blocking stream, and one of them may be
     * capturing (a view of a caller's stream that records a graph, whose
     * first algorithm call builds its program then): the capture would be
     * invalidated. */
    CUstream s = NULL;
    e = D.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
    if (e != CUDA_SUCCESS) return cu_fail(e, "cuStreamCreate (to read device global %s)", name);
    e = D.cuMemcpyDtoHAsync_v2(dst, dptr, size, s);
    if (e == CUDA_SUCCESS) e = D.cuStreamSynchronize(s);
    (void)D.cuStreamDestroy_v2(s);
    return e == CUDA_SUCCESS ? AMP_OK : cu_fail(e, "reading device global %s (%zu bytes)", name, size);
}

static amp_status cu_stream_create(void **s)
{
    CUresult e = D.cuStreamCreate(s, CU_STREAM_NON_BLOCKING);
    return e == CUDA_SUCCESS ? AMP_OK : cu_fail(e, "cuStreamCreate");
}
static void cu_stream_destroy(void *s) { (void)D.cuStreamDestroy_v2(s); }
static amp_status cu_stream_sync(void *s)
{
    CUresult e = D.cuStreamSynchronize(s);
    return e == CUDA_SUCCESS ? AMP_OK : cu_fail(e, "waiting for the queue (a kernel or copy on it failed)");
}
static amp_status cu_stream_wait_event(void *s, void *ev)
{
    CUresult e = D.cuStreamWaitEvent(s, ev, 0);
    return e == CUDA_SUCCESS ? AMP_OK : cu_fail(e, "cuStreamWaitEvent");
}
static amp_status cu_event_create_timed(void **ev)
{
    if (!D.cuEventElapsedTime) return amp__fail(AMP_ERROR_UNSUPPORTED, "this CUDA driver has no cuEventElapsedTime");
    CUresult e = D.cuEventCreate(ev, 0);
    return e == CUDA_SUCCESS ? AMP_OK : cu_fail(e, "cuEventCreate (timed)");
}
static amp_status cu_event_elapsed(void *start, void *end, float *ms)
{
    CUresult e = D.cuEventElapsedTime(ms, start, end);
    return e == CUDA_SUCCESS ? AMP_OK : cu_fail(e, "cuEventElapsedTime");
}
static amp_status cu_memcpy_peer(void *dst, void *dst_ctx, const void *src, void *src_ctx, size_t bytes, void *s)
{
    CUresult e = D.cuMemcpyPeerAsync((CUdeviceptr)(uintptr_t)dst, dst_ctx, (CUdeviceptr)(uintptr_t)src, src_ctx, bytes, s);
    return e == CUDA_SUCCESS ? AMP_OK : cu_fail(e, "cuMemcpyPeerAsync(%zu bytes)", bytes);
}
static amp_status cu_peer_possible(int ord, int peer, bool *possible, char *why, size_t n)
{
    *possible = false;
    if (!D.cuDeviceCanAccessPeer || !D.cuCtxEnablePeerAccess) {
        snprintf(why, n, "this CUDA driver has no cuDeviceCanAccessPeer or cuCtxEnablePeerAccess");
        return AMP_OK;
    }
    CUdevice a = 0, b = 0;
    CUresult e;
    int can = 0;
    if ((e = D.cuDeviceGet(&a, ord)) != CUDA_SUCCESS || (e = D.cuDeviceGet(&b, peer)) != CUDA_SUCCESS)
        return cu_fail(e, "cuDeviceGet(%d or %d)", ord, peer);
    if ((e = D.cuDeviceCanAccessPeer(&can, a, b)) != CUDA_SUCCESS)
        return cu_fail(e, "cuDeviceCanAccessPeer(%d, %d)", ord, peer);
    *possible = can != 0;
    snprintf(why, n, "cuDeviceCanAccessPeer(%d, %d) = %d", ord, peer, can);
    return AMP_OK;
}
static amp_status cu_peer_enable(void *peer_ctx, int peer)
{
    CUresult e = D.cuCtxEnablePeerAccess(peer_ctx, 0);
    if (e == CUDA_SUCCESS || e == CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) return AMP_OK;
    return cu_fail(e, "cuCtxEnablePeerAccess(device %d)", peer);
}
static amp_status cu_function_shared_bytes(void *fn, size_t *bytes)
{
    int v = 0;
    CUresult e = D.cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn);
    *bytes = v > 0 ? (size_t)v : 0;
    return e == CUDA_SUCCESS ? AMP_OK : cu_fail(e, "cuFuncGetAttribute(shared size)");
}
/* A driver that cannot say gives 0 (the core then assumes the prelude's
 * default bound): no kernel becomes unusable over it. */
static amp_status cu_function_max_threads(void *fn, int *threads)
{
    int v = 0;
    CUresult e = D.cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fn);
    *threads = e == CUDA_SUCCESS && v > 0 ? v : 0;
    return AMP_OK;
}
static amp_status cu_stream_check(void *stream, void *ctx)
{
    CUcontext owner = NULL;
    CUresult e = D.cuStreamGetCtx(stream, &owner);
    if (e != CUDA_SUCCESS) return cu_fail(e, "cuStreamGetCtx(%p): not a CUDA stream of this process", stream);
    if (owner != ctx)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT,
                         "CUDA stream %p belongs to context %p, not to this device's primary context %p", stream,
                         (void *)owner, ctx);
    return AMP_OK;
}
static amp_status cu_event_create(void **ev)
{
    CUresult e = D.cuEventCreate(ev, CU_EVENT_DISABLE_TIMING);
    return e == CUDA_SUCCESS ? AMP_OK : cu_fail(e, "cuEventCreate");
}
static void cu_event_destroy(void *ev) { (void)D.cuEventDestroy_v2(ev); }
static amp_status cu_event_record(void *ev, void *s)
{
    CUresult e = D.cuEventRecord(ev, s);
    return e == CUDA_SUCCESS ? AMP_OK : cu_fail(e, "cuEventRecord");
}
static amp_status cu_event_sync(void *ev)
{
    CUresult e = D.cuEventSynchronize(ev);
    return e == CUDA_SUCCESS ? AMP_OK : cu_fail(e, "waiting for an event (a kernel or copy before it failed)");
}
static amp_status cu_event_query(void *ev, bool *done)
{
    CUresult e = D.cuEventQuery(ev);
    *done = e == CUDA_SUCCESS;
    if (e == CUDA_SUCCESS || e == CUDA_ERROR_NOT_READY) return AMP_OK;
    return cu_fail(e, "cuEventQuery");
}
static amp_status cu_mem_alloc(size_t bytes, void **dptr)
{
    CUdeviceptr p = 0;
    CUresult e = D.cuMemAlloc_v2(&p, bytes);
    if (e == CUDA_SUCCESS) { *dptr = (void *)(uintptr_t)p; return AMP_OK; }
    *dptr = NULL;
    if (e == CUDA_ERROR_OUT_OF_MEMORY)
        return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "cuMemAlloc(%zu bytes): out of device memory", bytes);
    return cu_fail(e, "cuMemAlloc(%zu bytes)", bytes);
}
amp_status amp__gpu_registered_in_part(const void *host, size_t bytes)
{
    return amp__fail(AMP_ERROR_UNSUPPORTED,
                     "host memory at %p was registered (pinned) by someone else for less than the %zu bytes the view "
                     "spans, or in parts: it cannot be mapped for the GPU whole (unregister it, or copy: "
                     "AMP_UNIFIED_MEMORY=off)",
                     host, bytes);
}
static void cu_mem_free(void *dptr) { (void)D.cuMemFree_v2((CUdeviceptr)(uintptr_t)dptr); }
static amp_status cu_host_register(void *host, size_t bytes, void **dptr, bool *owned)
{
    CUdeviceptr p = 0;
    *dptr = NULL;
    *owned = false;
    /* Managed memory (cuMemAllocManaged) is device-accessible at its own
     * address under UVA and cannot be registered. The query fails (harmlessly,
     * the driver API keeps no last error) for plain pageable memory. */
    int managed = 0;
    if (D.cuPointerGetAttribute &&
        D.cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, (CUdeviceptr)(uintptr_t)host) ==
            CUDA_SUCCESS &&
        managed) {
        *dptr = host;
        return AMP_OK;
    }
    CUresult e = D.cuMemHostRegister_v2(host, bytes, CU_MEMHOSTREGISTER_DEVICEMAP | CU_MEMHOSTREGISTER_PORTABLE);
    if (e == CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED) {
        /* Pinned or registered by the user or another library: use its
         * mapping, and leave unregistering to its owner. */
        e = D.cuMemHostGetDevicePointer_v2(&p, host, 0);
        if (e != CUDA_SUCCESS)
            return cu_fail(e, "cuMemHostGetDevicePointer(%p) of already registered host memory", host);
        /* Its registration may cover only the start of ours (a buffer an
         * MPI library registered): a kernel would read past it. */
        CUdeviceptr end = 0;
        if (bytes > 1 && (D.cuMemHostGetDevicePointer_v2(&end, (char *)host + bytes - 1, 0) != CUDA_SUCCESS ||
                          end != p + bytes - 1))
            return amp__gpu_registered_in_part(host, bytes);
        *dptr = (void *)(uintptr_t)p;
        return AMP_OK;
    }
    if (e != CUDA_SUCCESS) return cu_fail(e, "cuMemHostRegister(%p, %zu bytes)", host, bytes);
    e = D.cuMemHostGetDevicePointer_v2(&p, host, 0);
    if (e != CUDA_SUCCESS) {
        (void)D.cuMemHostUnregister(host);
        return cu_fail(e, "cuMemHostGetDevicePointer(%p)", host);
    }
    *dptr = (void *)(uintptr_t)p;
    *owned = true;
    return AMP_OK;
}
static void cu_host_unregister(void *host) { (void)D.cuMemHostUnregister(host); }

/* Pageable host memory is allowed in every copy: the driver stages it (an H2D
 * copy returns once the source was consumed, a D2H once it completed), so the
 * caller may reuse the buffer as soon as the call returns. */
static amp_status cu_memcpy_1d(amp__copy_dir dir, void *dst, const void *src, size_t bytes, void *s)
{
    CUresult e;
    if (dir == AMP__H2D) e = D.cuMemcpyHtoDAsync_v2((CUdeviceptr)(uintptr_t)dst, src, bytes, s);
    else if (dir == AMP__D2H) e = D.cuMemcpyDtoHAsync_v2(dst, (CUdeviceptr)(uintptr_t)src, bytes, s);
    else e = D.cuMemcpyDtoDAsync_v2((CUdeviceptr)(uintptr_t)dst, (CUdeviceptr)(uintptr_t)src, bytes, s);
    return e == CUDA_SUCCESS ? AMP_OK : cu_fail(e, "cuMemcpyAsync(%zu bytes)", bytes);
}
static amp_status cu_memcpy_2d(amp__copy_dir dir, void *dst, size_t dpitch, const void *src, size_t spitch,
                               size_t width, size_t height, void *s)
{
    cu_memcpy2d m;
    memset(&m, 0, sizeof m);
    if (dir == AMP__H2D) {
        m.srcMemoryType = CU_MEMORYTYPE_HOST;
        m.srcHost = src;
    } else {
        m.srcMemoryType = CU_MEMORYTYPE_DEVICE;
        m.srcDevice = (CUdeviceptr)(uintptr_t)src;
    }
    if (dir == AMP__D2H) {
        m.dstMemoryType = CU_MEMORYTYPE_HOST;
        m.dstHost = dst;
    } else {
        m.dstMemoryType = CU_MEMORYTYPE_DEVICE;
        m.dstDevice = (CUdeviceptr)(uintptr_t)dst;
    }
    m.srcPitch = spitch;
    m.dstPitch = dpitch;
    m.WidthInBytes = width;
    m.Height = height;
    CUresult e = D.cuMemcpy2DAsync_v2(&m, s);
    return e == CUDA_SUCCESS ? AMP_OK
                             : cu_fail(e, "cuMemcpy2DAsync(%zu x %zu bytes, pitches %zu/%zu)", height, width,
                                       dpitch, spitch);
}
/* Since CUDA 12 the driver launches into the stream's context whatever
 * context is current (none, or another one): the launch path makes no
 * context query. An older driver refuses such a launch before queuing
 * anything; then the context is made current, the launch is repeated, and
 * the caller's context is restored. */
static CUresult cu_launch_once(void *fn, const unsigned g[3], const unsigned b[3], void *s, void **params,
                               bool programmatic)
{
    if (!programmatic) return D.cuLaunchKernel(fn, g[0], g[1], g[2], b[0], b[1], b[2], 0, s, params, NULL);
    CUlaunchAttribute a;
    memset(&a, 0, sizeof a);
    a.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    a.value.programmaticStreamSerializationAllowed = 1;
    CUlaunchConfig c = {.gridDimX = g[0], .gridDimY = g[1], .gridDimZ = g[2], .blockDimX = b[0], .blockDimY = b[1],
                        .blockDimZ = b[2], .hStream = s, .attrs = &a, .numAttrs = 1};
    return D.cuLaunchKernelEx(&c, fn, params, NULL);
}

/* programmatic only where cu_device_open set programmatic_launch, which
 * needs cuLaunchKernelEx. */
static amp_status cu_launch(void *ctx, void *fn, const unsigned g[3], const unsigned b[3], void *s, void **params,
                            bool programmatic)
{
    CUresult e = cu_launch_once(fn, g, b, s, params, programmatic);
    if (e == CUDA_ERROR_INVALID_CONTEXT || e == CUDA_ERROR_INVALID_HANDLE) {
        void *prev = NULL;
        amp_status st = cu_enter(ctx, &prev);
        if (st != AMP_OK) return st;
        e = cu_launch_once(fn, g, b, s, params, programmatic);
        if (prev) cu_leave(prev);
    }
    return e == CUDA_SUCCESS ? AMP_OK
                             : cu_fail(e, "%s(grid %u,%u,%u block %u,%u,%u)",
                                       programmatic ? "cuLaunchKernelEx, programmatic" : "cuLaunchKernel", g[0],
                                       g[1], g[2], b[0], b[1], b[2]);
}

/* Graphs by stream capture, where the driver has every entry point
 * (CUDA 11.4 and later). */
static bool cu_has_graphs(void)
{
#define CU_HAS(name, ret, args) && D.name
    return true CUDA_GRAPH(CU_HAS);
#undef CU_HAS
}

static amp_status cu_capture_begin(void *s)
{
    if (!cu_has_graphs())
        return amp__fail(AMP_ERROR_UNSUPPORTED, "this CUDA driver has no stream capture (graphs need CUDA 11.4)");
    CUresult e = D.cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_RELAXED);
    return e == CUDA_SUCCESS ? AMP_OK : cu_fail(e, "cuStreamBeginCapture");
}

static amp_status cu_capture_end(void *s, bool keep, void **exec)
{
    CUgraph g = NULL;
    *exec = NULL;
    CUresult e = D.cuStreamEndCapture(s, &g);
    if (e != CUDA_SUCCESS) {
        if (g) (void)D.cuGraphDestroy(g);
        return cu_fail(e, "cuStreamEndCapture (a command recorded into the graph was refused)");
    }
    if (!keep || !g) {
        if (g) (void)D.cuGraphDestroy(g);
        return AMP_OK;
    }
    /* The executable graph is independent of the one it was made from. */
    e = D.cuGraphInstantiateWithFlags(exec, g, 0);
    (void)D.cuGraphDestroy(g);
    if (e != CUDA_SUCCESS) {
        *exec = NULL;
        return cu_fail(e, "cuGraphInstantiateWithFlags");
    }
    return AMP_OK;
}

static amp_status cu_graph_launch(void *exec, void *s)
{
    CUresult e = D.cuGraphLaunch(exec, s);
    return e == CUDA_SUCCESS ? AMP_OK : cu_fail(e, "cuGraphLaunch");
}

static void cu_graph_destroy(void *exec) { (void)D.cuGraphExecDestroy(exec); }

static char cuda_version_tag[96];
static const amp__gpu_driver cuda_table = {
    .platform = "cuda",
    .version_tag = cuda_version_tag,
    .library = cuda_library,
    .device_count = cu_device_count,
    .device_open = cu_device_open,
    .enter = cu_enter,
    .leave = cu_leave,
    .compile = cu_compile,
    .module_load = cu_module_load,
    .module_unload = cu_module_unload,
    .function_get = cu_function_get,
    .global_read = cu_global_read,
    .stream_create = cu_stream_create,
    .stream_destroy = cu_stream_destroy,
    .stream_sync = cu_stream_sync,
    .stream_wait_event = cu_stream_wait_event,
    .event_create = cu_event_create,
    .event_create_timed = cu_event_create_timed,
    .event_elapsed = cu_event_elapsed,
    .memcpy_peer = cu_memcpy_peer,
    .peer_possible = cu_peer_possible,
    .peer_enable = cu_peer_enable,
    .function_shared_bytes = cu_function_shared_bytes,
    .function_max_threads = cu_function_max_threads,
    .stream_check = cu_stream_check,
    .event_destroy = cu_event_destroy,
    .event_record = cu_event_record,
    .event_sync = cu_event_sync,
    .event_query = cu_event_query,
    .mem_alloc = cu_mem_alloc,
    .mem_free = cu_mem_free,
    .host_register = cu_host_register,
    .host_unregister = cu_host_unregister,
    .memcpy_1d = cu_memcpy_1d,
    .memcpy_2d = cu_memcpy_2d,
    .launch = cu_launch,
    .capture_begin = cu_capture_begin,
    .capture_end = cu_capture_end,
    .graph_launch = cu_graph_launch,
    .graph_destroy = cu_graph_destroy,
};

/* The table is constant; only its version tag is written, once, before
 * cuda_result publishes it (pthread_once orders the two). */
static void build_table(void)
{
    static const char *const names[] = {"libcuda.so.1", "libcuda.so", NULL};
    void *lib = amp__gpu_dlopen_first(names, NULL, cuda_library, sizeof cuda_library);
    if (!lib) { cuda_why = cuda_library; return; }
    bool ok = true;
    const char *miss = NULL;
    __typeof__(D) *tbl = &D;
    CUDA_FUNCS(LOAD_FN)
    CUDA_OPTIONAL(LOAD_OPT)
    CUDA_RENAMED(LOAD_RENAMED)
    CUDA_GRAPH(LOAD_OPT)
    if (!ok) {
        static char buf[128];
        snprintf(buf, sizeof buf, "libcuda lacks %s", miss);
        cuda_why = buf;
        return;
    }
    CUresult e = D.cuInit(0);
    if (e != CUDA_SUCCESS) {
        static char buf[320];
        char text[256];
        cu_error_text(e, text, sizeof text);
        snprintf(buf, sizeof buf, "cuInit failed: %s", text);
        cuda_why = buf;
        return;
    }
    pthread_once(&nvrtc_once, load_nvrtc);
    int drv = 0;
    D.cuDriverGetVersion(&drv);
    snprintf(cuda_version_tag, sizeof cuda_version_tag, "%s driver %d", nvrtc_ok ? nvrtc_version : "no-nvrtc", drv);
    cuda_result = &cuda_table;
    cuda_why = NULL;
}
#undef LOAD_FN
#undef LOAD_OPT
#undef LOAD_RENAMED

const amp__gpu_driver *amp__cuda_driver(const char **why)
{
    pthread_once(&cuda_once, build_table);
    if (why) *why = cuda_why;
    return cuda_result;
}
