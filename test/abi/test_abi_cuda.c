/* test_abi_cuda.c — checks every row of lib/gpu/cuda_abi.h (the CUDA driver and NVRTC ABI the library declares by hand) and of mpi/native_abi.h's CUDA rows (hipamp::mpi's copy stream) against cuda.h and nvrtc.h; built only where a CUDA toolkit's headers are installed. */
#include <cuda.h>
#include <nvrtc.h>

#define AMP__ABI_CHECK 1
#include "gpu/cuda_abi.h"
#include "native_abi.h"

#include "abi_check.h"

/* The rows name the _v2 symbols themselves, so no cuda.h macro may map a
 * row's name to another symbol. */
static bool abi_name_ok(const char *ours, const char *header) { return strcmp(ours, header) == 0; }

Test(abi_cuda, header_version)
{
    cr_log_info("checked against cuda.h of CUDA %d.%d", CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10);
    /* The library runs on a CUDA 11.2 driver (cuLaunchKernelEx, 11.8, is
     * optional); the rows it checks need an 11.8 header. */
    cr_expect_geq(CUDA_VERSION, 11080, "the ABI test needs cuda.h of CUDA 11.8 or later; it is %d", CUDA_VERSION);
}

Test(abi_cuda, types) { CUDA_ABI_TYPES(ABI_CHECK_TYPE) }

Test(abi_cuda, constants) { CUDA_ABI_CONSTANTS(ABI_CHECK_CONSTANT) }

Test(abi_cuda, driver_functions) { CUDA_FUNCS(ABI_CHECK_FUNCTION) CUDA_OPTIONAL(ABI_CHECK_FUNCTION) }

Test(abi_cuda, graph_functions) { CUDA_GRAPH(ABI_CHECK_FUNCTION) }

/* Renamed rows: the name may map to NAME_v2; the type must hold either way. */
#define ABI_CHECK_RENAMED(name, ret, args)                                              \
    cr_expect(!strcmp(#name, ABI_STR(name)) || !strcmp(#name "_v2", ABI_STR(name)),      \
              "the header maps %s to %s, neither it nor %s_v2", #name, ABI_STR(name), #name); \
    cr_expect(__builtin_types_compatible_p(__typeof__(&name), ret(*) args),             \
              "%s: the header declares another type than %s (*)%s", #name, #ret, #args);

Test(abi_cuda, renamed_driver_functions) { CUDA_RENAMED(ABI_CHECK_RENAMED) }

Test(abi_cuda, nvrtc_functions) { NVRTC_FUNCS(ABI_CHECK_FUNCTION) NVRTC_OPTIONAL(ABI_CHECK_FUNCTION) }

struct abi_memcpy2d { CUDA_ABI_MEMCPY2D(ABI_FIELD) };
#define ABI_CHECK_MEMCPY2D_FIELD(type, name) ABI_CHECK_FIELD_OF(struct abi_memcpy2d, CUDA_MEMCPY2D, name)

Test(abi_cuda, memcpy2d_layout)
{
    CUDA_ABI_MEMCPY2D(ABI_CHECK_MEMCPY2D_FIELD)
    ABI_CHECK_STRUCT_SIZE(struct abi_memcpy2d, CUDA_MEMCPY2D)
}

struct abi_launch_attribute { CUDA_ABI_LAUNCH_ATTRIBUTE(ABI_FIELD) };
#define ABI_CHECK_LAUNCH_ATTRIBUTE_FIELD(type, name) ABI_CHECK_FIELD_OF(struct abi_launch_attribute, CUlaunchAttribute, name)
struct abi_launch_config { CUDA_ABI_LAUNCH_CONFIG(ABI_FIELD) };
#define ABI_CHECK_LAUNCH_CONFIG_FIELD(type, name) ABI_CHECK_FIELD_OF(struct abi_launch_config, CUlaunchConfig, name)

Test(abi_cuda, launch_config_layout)
{
    CUDA_ABI_LAUNCH_ATTRIBUTE(ABI_CHECK_LAUNCH_ATTRIBUTE_FIELD)
    ABI_CHECK_STRUCT_SIZE(struct abi_launch_attribute, CUlaunchAttribute)
    CUDA_ABI_LAUNCH_CONFIG(ABI_CHECK_LAUNCH_CONFIG_FIELD)
    ABI_CHECK_STRUCT_SIZE(struct abi_launch_config, CUlaunchConfig)
    /* The one value the library sets sits at the union's start. */
    cr_expect_eq(offsetof(CUlaunchAttributeValue, programmaticStreamSerializationAllowed), 0);
    cr_expect_eq(sizeof(((CUlaunchAttributeValue *)0)->programmaticStreamSerializationAllowed), sizeof(int));
}

/* hipamp::mpi's own rows (mpi/native_abi.h: the context around NCCL's
 * calls, the staged path's copy stream). */
Test(abi_cuda, mpi_native)
{
    NATIVE_CUDA_TYPES(ABI_CHECK_TYPE)
    NATIVE_CUDA_CONSTANTS(ABI_CHECK_CONSTANT)
    NATIVE_CUDA_FUNCS(ABI_CHECK_FUNCTION)
}
