/* trace_abi.h — the hand-declared NVTX (v3 injection interface) and roctx ABI that lib/trace/trace_vendor.c uses with no vendor header, written so that test/abi/test_abi_nvtx.c can check every NVTX item against nvToolsExt.h. */
#ifndef AMP_TRACE_ABI_H
#define AMP_TRACE_ABI_H

#include <stddef.h>
#include <stdint.h>

/* NVTX 3 is header-only: a program that annotates with it carries the
 * loader itself. A tool (Nsight Systems) names its injection library in
 * NVTX_INJECTION64_PATH; the loader opens it, calls its
 * InitializeInjectionNvtx2 with a function that hands out two export
 * tables, and the tool then writes its own entry points into the slots of
 * the module function tables it asks for. lib/trace/trace_vendor.c plays that
 * loader for hipamp's ranges. As in lib/gpu/cuda_abi.h every item is one
 * row of an X-macro list under the vendor's own name:
 *
 *   NVTX_ABI_TYPES       X(vendor typedef, our type)
 *   NVTX_ABI_CONSTANTS   X(our name, value, vendor name)
 *   NVTX_ABI_ATTRIBUTES  X(field type, field name)   nvtxEventAttributes_t (v2)
 *   NVTX_ABI_CALLBACKS / _VERSIONINFO                the two export tables
 *   NVTX_ABI_FUNCTIONS   X(vendor function type, return type, (parameters))
 *
 * The ABI test defines AMP__ABI_CHECK, gets the lists only, and checks each
 * row against the real header. The values are those of NVTX 3 (CUDA 10.0
 * and later); the tables only ever grow at their ends. */

#define NVTX_ABI_TYPES(X)                                                                \
    X(nvtxDomainHandle_t, void *)                                                        \
    X(NvtxCallbackModule, int)

#define NVTX_ABI_CONSTANTS(X)                                                            \
    X(NVTX_ABI_VERSION, 3, NVTX_VERSION)                                                 \
    X(NVTX_ABI_ETID_CALLBACKS, 1, NVTX_ETID_CALLBACKS)                                   \
    X(NVTX_ABI_ETID_VERSIONINFO, 3, NVTX_ETID_VERSIONINFO)                               \
    X(NVTX_ABI_CB_MODULE_CORE, 1, NVTX_CB_MODULE_CORE)                                   \
    X(NVTX_ABI_CB_MODULE_CUDA, 2, NVTX_CB_MODULE_CUDA)                                   \
    X(NVTX_ABI_CB_MODULE_OPENCL, 3, NVTX_CB_MODULE_OPENCL)                               \
    X(NVTX_ABI_CB_MODULE_CUDART, 4, NVTX_CB_MODULE_CUDART)                               \
    X(NVTX_ABI_CB_MODULE_CORE2, 5, NVTX_CB_MODULE_CORE2)                                 \
    X(NVTX_ABI_CB_MODULE_SYNC, 6, NVTX_CB_MODULE_SYNC)                                   \
    X(NVTX_ABI_CBID_CORE_RangePushA, 9, NVTX_CBID_CORE_RangePushA)                       \
    X(NVTX_ABI_CBID_CORE_RangePop, 11, NVTX_CBID_CORE_RangePop)                          \
    X(NVTX_ABI_CBID_CORE_SIZE, 16, NVTX_CBID_CORE_SIZE)                                  \
    X(NVTX_ABI_CBID_CUDA_SIZE, 9, NVTX_CBID_CUDA_SIZE)                                   \
    X(NVTX_ABI_CBID_OPENCL_SIZE, 15, NVTX_CBID_OPENCL_SIZE)                              \
    X(NVTX_ABI_CBID_CUDART_SIZE, 7, NVTX_CBID_CUDART_SIZE)                               \
    X(NVTX_ABI_CBID_CORE2_DomainRangePushEx, 4, NVTX_CBID_CORE2_DomainRangePushEx)       \
    X(NVTX_ABI_CBID_CORE2_DomainRangePop, 5, NVTX_CBID_CORE2_DomainRangePop)             \
    X(NVTX_ABI_CBID_CORE2_DomainCreateA, 12, NVTX_CBID_CORE2_DomainCreateA)              \
    X(NVTX_ABI_CBID_CORE2_SIZE, 16, NVTX_CBID_CORE2_SIZE)                                \
    X(NVTX_ABI_CBID_SYNC_SIZE, 7, NVTX_CBID_SYNC_SIZE)                                   \
    X(NVTX_ABI_COLOR_ARGB, 1, NVTX_COLOR_ARGB)                                           \
    X(NVTX_ABI_PAYLOAD_TYPE_UNSIGNED_INT64, 1, NVTX_PAYLOAD_TYPE_UNSIGNED_INT64)         \
    X(NVTX_ABI_MESSAGE_TYPE_ASCII, 1, NVTX_MESSAGE_TYPE_ASCII)                           \
    X(NVTX_ABI_EVENT_ATTRIB_STRUCT_SIZE, 48, NVTX_EVENT_ATTRIB_STRUCT_SIZE)

/* nvtxEventAttributes_v2, field by field. payload and message are unions
 * in the header (8 bytes); hipamp only ever sets the uint64 payload and the
 * ASCII message. */
#define NVTX_ABI_ATTRIBUTES(X)                                                           \
    X(uint16_t, version)                                                                 \
    X(uint16_t, size)                                                                    \
    X(uint32_t, category)                                                                \
    X(int32_t, colorType)                                                                \
    X(uint32_t, color)                                                                   \
    X(int32_t, payloadType)                                                              \
    X(int32_t, reserved0)                                                                \
    X(uint64_t, payload)                                                                 \
    X(int32_t, messageType)                                                              \
    X(const char *, message)

/* The export tables the loader hands the tool (NvtxExportTableCallbacks,
 * NvtxExportTableVersionInfo). */
#define NVTX_ABI_CALLBACKS(X)                                                            \
    X(size_t, struct_size)                                                               \
    X(nvtx_abi_get_module_table_fn, GetModuleFunctionTable)
#define NVTX_ABI_VERSIONINFO(X)                                                          \
    X(size_t, struct_size)                                                               \
    X(uint32_t, version)                                                                 \
    X(uint32_t, reserved0)                                                               \
    X(nvtx_abi_set_version_fn, SetInjectionNvtxVersion)

/* The entry points hipamp reads from the slots (the header's *_impl_fntype
 * types), and the two function types of the injection handshake. */
#define NVTX_ABI_FUNCTIONS(X)                                                            \
    X(nvtxDomainCreateA_impl_fntype, nvtxDomainHandle_t, (const char *))                 \
    X(nvtxDomainRangePushEx_impl_fntype, int, (nvtxDomainHandle_t, const nvtxEventAttributes_t *)) \
    X(nvtxDomainRangePop_impl_fntype, int, (nvtxDomainHandle_t))                         \
    X(nvtxRangePushA_impl_fntype, int, (const char *))                                   \
    X(nvtxRangePop_impl_fntype, int, (void))                                             \
    X(NvtxGetExportTableFunc_t, const void *, (uint32_t))                                \
    X(NvtxInitializeInjectionNvtxFunc_t, int, (NvtxGetExportTableFunc_t))

/* roctx (ROCm): plain C functions, in ROCTracer's libroctx64 and in
 * rocprofiler-sdk's librocprofiler-sdk-roctx, which rocprof and rocprofv3
 * intercept. Stable since ROCm 3; no header on this machine to check them
 * against, so they are listed as the ROCm documentation declares them. */
#define ROCTX_FUNCS(X)                                                                   \
    X(roctxRangePushA, int, (const char *))                                              \
    X(roctxRangePop, int, (void))

/* ---------------------------------------------- the library's definitions */
#ifndef AMP__ABI_CHECK

#define AMP__NVTX_ABI_TYPEDEF(name, ours) typedef ours name;
NVTX_ABI_TYPES(AMP__NVTX_ABI_TYPEDEF)
#undef AMP__NVTX_ABI_TYPEDEF

#define AMP__NVTX_ABI_CONSTANT(name, value, vendor) name = (value),
enum { NVTX_ABI_CONSTANTS(AMP__NVTX_ABI_CONSTANT) };
#undef AMP__NVTX_ABI_CONSTANT

#define AMP__NVTX_ABI_FIELD(type, name) type name;
typedef struct nvtxEventAttributes_t { NVTX_ABI_ATTRIBUTES(AMP__NVTX_ABI_FIELD) } nvtxEventAttributes_t;

typedef void (*NvtxFunctionPointer)(void);
typedef int (*nvtx_abi_get_module_table_fn)(NvtxCallbackModule module, NvtxFunctionPointer ***table,
                                            unsigned int *size);
typedef void (*nvtx_abi_set_version_fn)(uint32_t version);
typedef struct NvtxExportTableCallbacks { NVTX_ABI_CALLBACKS(AMP__NVTX_ABI_FIELD) } NvtxExportTableCallbacks;
typedef struct NvtxExportTableVersionInfo { NVTX_ABI_VERSIONINFO(AMP__NVTX_ABI_FIELD) } NvtxExportTableVersionInfo;
#undef AMP__NVTX_ABI_FIELD

#define AMP__NVTX_ABI_FNTYPE(name, ret, args) typedef ret(*name) args;
NVTX_ABI_FUNCTIONS(AMP__NVTX_ABI_FNTYPE)
#undef AMP__NVTX_ABI_FNTYPE

#endif /* AMP__ABI_CHECK */

#endif /* AMP_TRACE_ABI_H */
