/* test_abi_nvtx.c — checks every NVTX row of lib/trace/trace_abi.h (the NVTX 3 injection interface the library declares by hand: values, nvtxEventAttributes_t, the export tables, the entry points' types) against nvToolsExt.h; built only where the NVTX 3 headers are installed (a CUDA toolkit). */
#include <nvtx3/nvToolsExt.h>

#define AMP__ABI_CHECK 1
#include "trace/trace_abi.h"

#include "abi_check.h"

Test(abi_nvtx, header_version)
{
    cr_log_info("checked against nvtx3/nvToolsExt.h, NVTX_VERSION %d", NVTX_VERSION);
    cr_expect_eq(NVTX_VERSION, 3, "the library speaks the NVTX 3 injection interface; the header is version %d",
                 NVTX_VERSION);
}

Test(abi_nvtx, types) { NVTX_ABI_TYPES(ABI_CHECK_TYPE) }

Test(abi_nvtx, constants) { NVTX_ABI_CONSTANTS(ABI_CHECK_CONSTANT) }

struct abi_attributes { NVTX_ABI_ATTRIBUTES(ABI_FIELD) };
#define ABI_CHECK_ATTRIBUTE(type, name) ABI_CHECK_FIELD_OF(struct abi_attributes, nvtxEventAttributes_t, name)

Test(abi_nvtx, event_attributes_layout)
{
    NVTX_ABI_ATTRIBUTES(ABI_CHECK_ATTRIBUTE)
    ABI_CHECK_STRUCT_SIZE(struct abi_attributes, nvtxEventAttributes_t)
}

/* The library's own names for the export tables' function types, spelled
 * here with the header's types: the tables must hold exactly these. */
typedef int (*nvtx_abi_get_module_table_fn)(NvtxCallbackModule, NvtxFunctionTable *, unsigned int *);
typedef void (*nvtx_abi_set_version_fn)(uint32_t);
struct abi_callbacks { NVTX_ABI_CALLBACKS(ABI_FIELD) };
struct abi_versioninfo { NVTX_ABI_VERSIONINFO(ABI_FIELD) };
#define ABI_CHECK_CALLBACKS(type, name) ABI_CHECK_FIELD_OF(struct abi_callbacks, NvtxExportTableCallbacks, name)
#define ABI_CHECK_VERSIONINFO(type, name) ABI_CHECK_FIELD_OF(struct abi_versioninfo, NvtxExportTableVersionInfo, name)

Test(abi_nvtx, export_tables)
{
    NVTX_ABI_CALLBACKS(ABI_CHECK_CALLBACKS)
    ABI_CHECK_STRUCT_SIZE(struct abi_callbacks, NvtxExportTableCallbacks)
    NVTX_ABI_VERSIONINFO(ABI_CHECK_VERSIONINFO)
    ABI_CHECK_STRUCT_SIZE(struct abi_versioninfo, NvtxExportTableVersionInfo)
    cr_expect(__builtin_types_compatible_p(__typeof__(((NvtxExportTableCallbacks *)0)->GetModuleFunctionTable),
                                           nvtx_abi_get_module_table_fn),
              "GetModuleFunctionTable has another type in the header");
    cr_expect(__builtin_types_compatible_p(__typeof__(((NvtxExportTableVersionInfo *)0)->SetInjectionNvtxVersion),
                                           nvtx_abi_set_version_fn),
              "SetInjectionNvtxVersion has another type in the header");
}

#define ABI_CHECK_FNTYPE(name, ret, args)                                                      \
    cr_expect(__builtin_types_compatible_p(name, ret(*) args), "%s: the header declares another type than %s (*)%s", \
              #name, #ret, #args);

Test(abi_nvtx, entry_point_types) { NVTX_ABI_FUNCTIONS(ABI_CHECK_FNTYPE) }
