/* test_abi_hip.c — checks every row of lib/gpu/hip_abi.h (the HIP runtime, hipRTC and comgr ABI the library declares by hand) and of mpi/native_abi.h's HIP rows (hipamp::mpi's copy stream) against the real headers; built only where they are installed. */
#include <amd_comgr.h>
#include <hip/hip_runtime_api.h>
#include <hip/hiprtc.h>
#if HIP_VERSION_MAJOR >= 6 && defined(__has_include)
#if __has_include(<hip/hip_deprecated.h>)
#include <hip/hip_deprecated.h>
#define ABI_HAVE_R0000_DECL 1
#endif
#endif

#define AMP__ABI_CHECK 1
#include "gpu/hip_abi.h"
#include "native_abi.h"

#include "abi_check.h"

/* ROCm 6+ headers map hipGetDeviceProperties to hipGetDevicePropertiesR0600
 * with a macro; the plain exported symbol, which the library loads by name,
 * keeps the R0000 layout (test device_properties covers both). No other
 * name may be mapped. */
static bool abi_name_ok(const char *ours, const char *header)
{
    if (strcmp(ours, header) == 0) return true;
    return HIP_VERSION_MAJOR >= 6 && strcmp(ours, "hipGetDeviceProperties") == 0 &&
           strcmp(header, "hipGetDevicePropertiesR0600") == 0;
}

Test(abi_hip, header_version)
{
    cr_log_info("checked against HIP %d.%d.%d headers", HIP_VERSION_MAJOR, HIP_VERSION_MINOR, HIP_VERSION_PATCH);
    cr_expect_geq(HIP_VERSION_MAJOR, 5, "the library supports HIP 5.0 and later; the header is HIP %d",
                  HIP_VERSION_MAJOR);
}

Test(abi_hip, types) { HIP_ABI_TYPES(ABI_CHECK_TYPE) HIP_ABI_COMGR_TYPES(ABI_CHECK_TYPE) }

Test(abi_hip, constants)
{
    HIP_ABI_CONSTANTS(ABI_CHECK_CONSTANT)
    HIP_ABI_HANDLE_CONSTANTS(ABI_CHECK_CONSTANT)
    HIP_ABI_COMGR_CONSTANTS(ABI_CHECK_CONSTANT)
}

Test(abi_hip, runtime_functions) { HIP_FUNCS(ABI_CHECK_FUNCTION) HIP_OPTIONAL_PLAIN(ABI_CHECK_FUNCTION) }

Test(abi_hip, graph_functions) { HIP_OPTIONAL_GRAPH(ABI_CHECK_FUNCTION) }
/* Functions of HIP 6+ (not in HIP 5.2's headers). */
Test(abi_hip, later_functions)
{
#if HIP_VERSION_MAJOR >= 6
    HIP_OPTIONAL_LATER(ABI_CHECK_FUNCTION)
#else
    cr_skip("HIP %d.%d headers declare no hipStreamGetDevice (HIP 6+): checked on a ROCm 6+ runner", HIP_VERSION_MAJOR,
            HIP_VERSION_MINOR);
#endif
}

Test(abi_hip, hiprtc_functions) { HIPRTC_FUNCS(ABI_CHECK_FUNCTION) }

Test(abi_hip, comgr_functions) { COMGR_FUNCS(ABI_CHECK_FUNCTION) }

struct abi_comgr_md { HIP_ABI_COMGR_MD(ABI_FIELD) };
#define ABI_CHECK_COMGR_MD_FIELD(type, name) \
    ABI_CHECK_FIELD_OF(struct abi_comgr_md, amd_comgr_metadata_node_t, name)

Test(abi_hip, comgr_metadata_handle)
{
    HIP_ABI_COMGR_MD(ABI_CHECK_COMGR_MD_FIELD)
    ABI_CHECK_STRUCT_SIZE(struct abi_comgr_md, amd_comgr_metadata_node_t)
}

/* The property layouts the library reads gcnArchName from: R0000 (ROCm 5's
 * hipDeviceProp_t, and what the plain symbol fills on ROCm 6+) and R0600.
 * Each must also fit the zeroed buffer passed to the getter. */
Test(abi_hip, device_properties)
{
#if HIP_VERSION_MAJOR >= 6
    cr_expect_eq(sizeof(hipDeviceProp_tR0600), HIP_PROPS_R0600_SIZE, "hipDeviceProp_tR0600: %zu bytes, declared %d",
                 sizeof(hipDeviceProp_tR0600), HIP_PROPS_R0600_SIZE);
    cr_expect_eq(offsetof(hipDeviceProp_tR0600, gcnArchName), HIP_PROPS_R0600_GCN_ARCH_OFFSET,
                 "hipDeviceProp_tR0600.gcnArchName at byte %zu, declared %d",
                 offsetof(hipDeviceProp_tR0600, gcnArchName), HIP_PROPS_R0600_GCN_ARCH_OFFSET);
    cr_expect_geq(sizeof(((hipDeviceProp_tR0600 *)0)->gcnArchName), 96, "gcnArchName shorter than the library reads");
    cr_expect_leq(sizeof(hipDeviceProp_tR0600), HIP_PROPS_BUFFER, "hipDeviceProp_tR0600 (%zu bytes) exceeds the buffer",
                  sizeof(hipDeviceProp_tR0600));
    cr_expect_str_eq(ABI_STR(hipGetDeviceProperties), "hipGetDevicePropertiesR0600",
                     "ROCm 6+ headers were expected to map hipGetDeviceProperties to R0600");
    HIP_OPTIONAL_R0600(ABI_CHECK_FUNCTION)
#else
    /* HIP 5: hipDeviceProp_t is the R0000 layout and the only getter. */
    cr_expect_eq(sizeof(hipDeviceProp_t), HIP_PROPS_R0000_SIZE, "hipDeviceProp_t: %zu bytes, declared %d",
                 sizeof(hipDeviceProp_t), HIP_PROPS_R0000_SIZE);
    cr_expect_eq(offsetof(hipDeviceProp_t, gcnArchName), HIP_PROPS_R0000_GCN_ARCH_OFFSET,
                 "hipDeviceProp_t.gcnArchName at byte %zu, declared %d", offsetof(hipDeviceProp_t, gcnArchName),
                 HIP_PROPS_R0000_GCN_ARCH_OFFSET);
    cr_expect_geq(sizeof(((hipDeviceProp_t *)0)->gcnArchName), 96, "gcnArchName shorter than the library reads");
    cr_expect_leq(sizeof(hipDeviceProp_t), HIP_PROPS_BUFFER, "hipDeviceProp_t (%zu bytes) exceeds the buffer",
                  sizeof(hipDeviceProp_t));
#endif
}

/* ROCm 6+: the R0000 layout lives in hip_deprecated.h, which not every
 * installation ships; HIP 5 has neither the versioned getters nor their
 * structs (device_properties checked R0000 as hipDeviceProp_t). */
Test(abi_hip, device_properties_r0000)
{
#if defined(ABI_HAVE_R0000_DECL)
    cr_expect_eq(sizeof(hipDeviceProp_tR0000), HIP_PROPS_R0000_SIZE, "hipDeviceProp_tR0000: %zu bytes, declared %d",
                 sizeof(hipDeviceProp_tR0000), HIP_PROPS_R0000_SIZE);
    cr_expect_eq(offsetof(hipDeviceProp_tR0000, gcnArchName), HIP_PROPS_R0000_GCN_ARCH_OFFSET,
                 "hipDeviceProp_tR0000.gcnArchName at byte %zu, declared %d",
                 offsetof(hipDeviceProp_tR0000, gcnArchName), HIP_PROPS_R0000_GCN_ARCH_OFFSET);
    HIP_OPTIONAL_R0000(ABI_CHECK_FUNCTION)
#elif HIP_VERSION_MAJOR >= 6
    cr_skip("HIP %d headers without hip/hip_deprecated.h: the R0000 layout (%d bytes, gcnArchName at %d) is "
            "not declared, so it cannot be checked here", HIP_VERSION_MAJOR, HIP_PROPS_R0000_SIZE,
            HIP_PROPS_R0000_GCN_ARCH_OFFSET);
#else
    cr_skip("HIP %d.%d headers declare no hipGetDevicePropertiesR0600/R0000 or their structs (ROCm 6+); "
            "R0000 was checked as hipDeviceProp_t, R0600 (%d bytes, gcnArchName at %d) is checked on a ROCm 6+ runner",
            HIP_VERSION_MAJOR, HIP_VERSION_MINOR, HIP_PROPS_R0600_SIZE, HIP_PROPS_R0600_GCN_ARCH_OFFSET);
#endif
}

/* hipamp::mpi's own rows (mpi/native_abi.h: the device around RCCL's
 * calls, the staged path's copy stream); hipStreamGetDevice where the
 * headers have it (not HIP 5.2's). */
Test(abi_hip, mpi_native)
{
    NATIVE_HIP_TYPES(ABI_CHECK_TYPE)
    NATIVE_HIP_CONSTANTS(ABI_CHECK_CONSTANT)
    NATIVE_HIP_FUNCS(ABI_CHECK_FUNCTION)
#if HIP_VERSION_MAJOR >= 6
    NATIVE_HIP_OPTIONAL(ABI_CHECK_FUNCTION)
#endif
}
