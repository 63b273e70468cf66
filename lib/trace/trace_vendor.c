/* trace_vendor.c — hipamp's builds, copies, launches and waits as named
 * ranges in vendor profilers' timelines: through the NVTX 3 injection
 * interface (Nsight Systems) or roctx (rocprof, rocprofv3), both found at
 * run time with no vendor header or library linked (lib/trace/trace_abi.h). */
#include "trace_abi.h"
#include "trace_internal.h"
#include "base/trusted_file.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(nvtxEventAttributes_t) == NVTX_ABI_EVENT_ATTRIB_STRUCT_SIZE, "nvtxEventAttributes_t layout");

enum { AMP__VENDOR_NONE, AMP__VENDOR_NVTX_DOMAIN, AMP__VENDOR_NVTX, AMP__VENDOR_ROCTX };

static pthread_once_t amp__vendor_once = PTHREAD_ONCE_INIT;
static int amp__vendor; /* written once under amp__vendor_once */

/* ------------------------------------------------------------- NVTX */

/* The slots a tool fills with its entry points, one table per callback
 * module, laid out as NVTX 3's own loader lays them out: entry 0 and the
 * last entry are NULL, entry i points at the slot of callback id i. Only
 * CORE and CORE2 are read here; the others exist so that a tool asking for
 * them is answered as by any NVTX client. */
static NvtxFunctionPointer amp__core[NVTX_ABI_CBID_CORE_SIZE], amp__core2[NVTX_ABI_CBID_CORE2_SIZE];
static NvtxFunctionPointer amp__cuda[NVTX_ABI_CBID_CUDA_SIZE], amp__opencl[NVTX_ABI_CBID_OPENCL_SIZE];
static NvtxFunctionPointer amp__cudart[NVTX_ABI_CBID_CUDART_SIZE], amp__sync[NVTX_ABI_CBID_SYNC_SIZE];
static NvtxFunctionPointer *amp__core_t[NVTX_ABI_CBID_CORE_SIZE + 1], *amp__core2_t[NVTX_ABI_CBID_CORE2_SIZE + 1];
static NvtxFunctionPointer *amp__cuda_t[NVTX_ABI_CBID_CUDA_SIZE + 1], *amp__opencl_t[NVTX_ABI_CBID_OPENCL_SIZE + 1];
static NvtxFunctionPointer *amp__cudart_t[NVTX_ABI_CBID_CUDART_SIZE + 1], *amp__sync_t[NVTX_ABI_CBID_SYNC_SIZE + 1];

static void amp__nvtx_table(NvtxFunctionPointer **table, NvtxFunctionPointer *slots, unsigned size)
{
    table[0] = table[size] = NULL;
    for (unsigned i = 1; i < size; ++i) table[i] = &slots[i];
}

static int amp__nvtx_module_table(NvtxCallbackModule module, NvtxFunctionPointer ***table, unsigned int *size)
{
    NvtxFunctionPointer **t = NULL;
    unsigned n = 0;
    switch (module) {
    case NVTX_ABI_CB_MODULE_CORE: t = amp__core_t, n = NVTX_ABI_CBID_CORE_SIZE; break;
    case NVTX_ABI_CB_MODULE_CUDA: t = amp__cuda_t, n = NVTX_ABI_CBID_CUDA_SIZE; break;
    case NVTX_ABI_CB_MODULE_OPENCL: t = amp__opencl_t, n = NVTX_ABI_CBID_OPENCL_SIZE; break;
    case NVTX_ABI_CB_MODULE_CUDART: t = amp__cudart_t, n = NVTX_ABI_CBID_CUDART_SIZE; break;
    case NVTX_ABI_CB_MODULE_CORE2: t = amp__core2_t, n = NVTX_ABI_CBID_CORE2_SIZE; break;
    case NVTX_ABI_CB_MODULE_SYNC: t = amp__sync_t, n = NVTX_ABI_CBID_SYNC_SIZE; break;
    default: return 0;
    }
    if (table) *table = t;
    if (size) *size = n;
    return 1;
}

static void amp__nvtx_set_version(uint32_t version) { (void)version; }

static const NvtxExportTableCallbacks amp__nvtx_callbacks = {sizeof(NvtxExportTableCallbacks), amp__nvtx_module_table};
static const NvtxExportTableVersionInfo amp__nvtx_version = {sizeof(NvtxExportTableVersionInfo), NVTX_ABI_VERSION, 0,
                                                              amp__nvtx_set_version};

static const void *amp__nvtx_export_table(uint32_t id)
{
    if (id == NVTX_ABI_ETID_CALLBACKS) return &amp__nvtx_callbacks;
    if (id == NVTX_ABI_ETID_VERSIONINFO) return &amp__nvtx_version;
    return NULL;
}

static nvtxDomainHandle_t amp__domain;
static nvtxDomainRangePushEx_impl_fntype amp__nvtx_push_ex;
static nvtxDomainRangePop_impl_fntype amp__nvtx_pop_domain;
static nvtxRangePushA_impl_fntype amp__nvtx_push_a;
static nvtxRangePop_impl_fntype amp__nvtx_pop;

/* Loads the tool NVTX_INJECTION64_PATH names and lets it fill the slots. */
static int amp__nvtx_load(void)
{
    const char *path = amp__env("NVTX_INJECTION64_PATH"); /* a set-uid program's is unset: it names a library */
    if (!path) return AMP__VENDOR_NONE;
    /* Loaded into this process: a tool another local user could have put
     * or changed is not (the rule the CPU compiler and libclang are held
     * to). A name without a slash is the loader's to find, as the GPU
     * runtimes' are. */
    char why[768];
    if (strchr(path, '/') && amp__unsafe_file(path, why, sizeof why)) {
        fprintf(stderr, "hipamp: NVTX_INJECTION64_PATH=%.300s is not loaded (no NVTX ranges): %s\n", path, why);
        return AMP__VENDOR_NONE;
    }
    amp__nvtx_table(amp__core_t, amp__core, NVTX_ABI_CBID_CORE_SIZE);
    amp__nvtx_table(amp__core2_t, amp__core2, NVTX_ABI_CBID_CORE2_SIZE);
    amp__nvtx_table(amp__cuda_t, amp__cuda, NVTX_ABI_CBID_CUDA_SIZE);
    amp__nvtx_table(amp__opencl_t, amp__opencl, NVTX_ABI_CBID_OPENCL_SIZE);
    amp__nvtx_table(amp__cudart_t, amp__cudart, NVTX_ABI_CBID_CUDART_SIZE);
    amp__nvtx_table(amp__sync_t, amp__sync, NVTX_ABI_CBID_SYNC_SIZE);
    void *h = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
    if (!h) return AMP__VENDOR_NONE;
    NvtxInitializeInjectionNvtxFunc_t init;
    *(void **)&init = dlsym(h, "InitializeInjectionNvtx2");
    if (!init || !init(amp__nvtx_export_table)) {
        dlclose(h);
        return AMP__VENDOR_NONE;
    }
    /* The tool stays loaded: it owns the slots now. */
    nvtxDomainCreateA_impl_fntype create = (nvtxDomainCreateA_impl_fntype)amp__core2[NVTX_ABI_CBID_CORE2_DomainCreateA];
    amp__nvtx_push_ex = (nvtxDomainRangePushEx_impl_fntype)amp__core2[NVTX_ABI_CBID_CORE2_DomainRangePushEx];
    amp__nvtx_pop_domain = (nvtxDomainRangePop_impl_fntype)amp__core2[NVTX_ABI_CBID_CORE2_DomainRangePop];
    if (create && amp__nvtx_push_ex && amp__nvtx_pop_domain && (amp__domain = create("hipamp")))
        return AMP__VENDOR_NVTX_DOMAIN;
    amp__nvtx_push_a = (nvtxRangePushA_impl_fntype)amp__core[NVTX_ABI_CBID_CORE_RangePushA];
    amp__nvtx_pop = (nvtxRangePop_impl_fntype)amp__core[NVTX_ABI_CBID_CORE_RangePop];
    return amp__nvtx_push_a && amp__nvtx_pop ? AMP__VENDOR_NVTX : AMP__VENDOR_NONE;
}

/* ------------------------------------------------------------ roctx */

#define AMP__ROCTX_PTR(name, ret, args) static ret(*amp__##name) args;
ROCTX_FUNCS(AMP__ROCTX_PTR)
#undef AMP__ROCTX_PTR

/* rocprofiler-sdk's library first (rocprofv3 intercepts it), then
 * ROCTracer's (rocprof v1/v2). */
static int amp__roctx_load(void)
{
    static const char *const names[] = {"librocprofiler-sdk-roctx.so.1", "librocprofiler-sdk-roctx.so",
                                        "libroctx64.so.4", "libroctx64.so"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
        void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (!h) continue;
        bool ok = true;
#define AMP__ROCTX_SYM(name, ret, args) ok = ok && (*(void **)&amp__##name = dlsym(h, #name)) != NULL;
        ROCTX_FUNCS(AMP__ROCTX_SYM)
#undef AMP__ROCTX_SYM
        if (ok) return AMP__VENDOR_ROCTX;
        dlclose(h);
    }
    return AMP__VENDOR_NONE;
}

/* ------------------------------------------------------------ common */

static bool amp__rocm_profiler(void)
{
    return amp__env("HSA_TOOLS_LIB") || amp__env("ROCP_TOOL_LIB") || amp__env("ROCP_TOOL_LIBRARIES");
}

bool amp__vendor_wanted(void) { return amp__env("NVTX_INJECTION64_PATH") || amp__rocm_profiler(); }

static void amp__vendor_load(void)
{
    int kind = amp__nvtx_load();
    /* roctx when a ROCm profiler is attached, or when AMP_TRACE_VENDOR
     * asks for ranges whatever the environment says. */
    if (kind == AMP__VENDOR_NONE && (amp__rocm_profiler() || amp__env_flag_or_auto("AMP_TRACE_VENDOR") == 1))
        kind = amp__roctx_load();
    amp__vendor = kind;
    /* Nothing to talk to: the hooks need not format range names. */
    if (kind == AMP__VENDOR_NONE) atomic_fetch_and(&amp__trace_flags, ~(unsigned)AMP__TRACE_VENDOR);
}

/* Categories pick the colour (ARGB): builds blue, copies red, launches
 * green, waits grey. */
enum { AMP__RANGE_BUILD, AMP__RANGE_COPY, AMP__RANGE_LAUNCH, AMP__RANGE_WAIT };
static const uint32_t amp__colors[4] = {0xFF3B6FD8u, 0xFFD8453Bu, 0xFF3BA55Cu, 0xFF9A9A9Au};

static void amp__vendor_push(int category, uint64_t payload, const char *text)
{
    pthread_once(&amp__vendor_once, amp__vendor_load);
    switch (amp__vendor) {
    case AMP__VENDOR_NVTX_DOMAIN: {
        nvtxEventAttributes_t a;
        memset(&a, 0, sizeof a);
        a.version = NVTX_ABI_VERSION;
        a.size = NVTX_ABI_EVENT_ATTRIB_STRUCT_SIZE;
        a.category = (uint32_t)category + 1;
        a.colorType = NVTX_ABI_COLOR_ARGB;
        a.color = amp__colors[category & 3];
        if (payload) {
            a.payloadType = NVTX_ABI_PAYLOAD_TYPE_UNSIGNED_INT64;
            a.payload = payload;
        }
        a.messageType = NVTX_ABI_MESSAGE_TYPE_ASCII;
        a.message = text;
        amp__nvtx_push_ex(amp__domain, &a);
        break;
    }
    case AMP__VENDOR_NVTX: amp__nvtx_push_a(text); break;
    case AMP__VENDOR_ROCTX: amp__roctxRangePushA(text); break;
    default: break;
    }
}

void amp__vendor_pop(void)
{
    /* A pop always follows its push on the same thread, so the interface
     * is loaded by now. */
    switch (amp__vendor) {
    case AMP__VENDOR_NVTX_DOMAIN: amp__nvtx_pop_domain(amp__domain); break;
    case AMP__VENDOR_NVTX: amp__nvtx_pop(); break;
    case AMP__VENDOR_ROCTX: amp__roctxRangePop(); break;
    default: break;
    }
}

void amp__vendor_push_rec(const amp__trace_rec *r)
{
    char text[320], what[256], ext[64];
    switch (r->kind) {
    case AMP__REC_BUILD:
        amp__build_label(r->name, r->source, r->source_len, what, sizeof what);
        snprintf(text, sizeof text, "hipamp build %s", what);
        amp__vendor_push(AMP__RANGE_BUILD, 0, text);
        break;
    case AMP__REC_COPY:
        snprintf(text, sizeof text, "hipamp copy %s %llu B (%s)", amp__dir_short(r->sub), (unsigned long long)r->bytes,
                 amp__copy_why_name(r->why));
        amp__vendor_push(AMP__RANGE_COPY, r->bytes, text);
        break;
    case AMP__REC_LAUNCH:
        amp__dims(ext, sizeof ext, r->ext, r->rank);
        snprintf(text, sizeof text, "hipamp launch %.200s %s", r->name ? r->name : "?", ext);
        amp__vendor_push(AMP__RANGE_LAUNCH, 0, text);
        break;
    case AMP__REC_GRAPH:
        snprintf(text, sizeof text, "hipamp graph %.200s (%llu launches)", r->name ? r->name : "?",
                 (unsigned long long)r->launches);
        amp__vendor_push(AMP__RANGE_LAUNCH, 0, text);
        break;
    default:
        snprintf(text, sizeof text, "hipamp wait %s", r->acc_info ? r->acc_info->device_path : "");
        amp__vendor_push(AMP__RANGE_WAIT, 0, text);
        break;
    }
}
