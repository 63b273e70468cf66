/* signature.h — C mirror of the records the device prelude emits and reads:
 * a kernel's signature (name##__amp_sig), the launch_info every entry point
 * takes, and the layout of a view/array descriptor inside the argument pack.
 * Must match hip_kernels/amp_prelude.hip byte for byte (AMP__SIG_VERSION). */
#ifndef AMP_SIGNATURE_H
#define AMP_SIGNATURE_H

#include <stdint.h>

#define AMP__SIG_MAGIC 0x53504d41 /* "AMPS" little-endian */
#define AMP__SIG_VERSION 2
#define AMP__SIG_MAX_PARAMS 32
#define AMP__SIG_SUFFIX "__amp_sig"

/* Threads per block of a simple-model (AMP_KERNEL) launch, at most. The
 * prelude declares those kernels __launch_bounds__(AMP__SIMPLE_BLOCK_THREADS)
 * (hip_kernels/amp_prelude.hip defines the same constant) and
 * amp__launch_geometry (lib/gpu/launch_geometry.h) caps its blocks at it:
 * change both together. */
#define AMP__SIMPLE_BLOCK_THREADS 256

/* Largest argument pack a kernel may declare (bytes). */
#define AMP__MAX_PACK 4096
/* Largest alignment a parameter may ask for inside the pack: 32, for the
 * four-component 8-byte vectors (double4, long4, ...; HIP's layout). */
#define AMP__MAX_PARAM_ALIGN 32
/* Longest kernel name: the backends look a kernel's records up as NAME
 * plus a suffix (__amp_sig, __amp_tile_static, ...) in 512-byte buffers,
 * and the CPU loop transformation keeps names in 256. The prelude's
 * kernel_name_fits holds the same number. */
#define AMP__KERNEL_NAME_MAX 255
/* Largest tile dimension a record may name. Records past the accelerator's
 * own limit are well-formed (amp_program_get_kernel then says
 * AMP_ERROR_UNSUPPORTED with the numbers); past this they are corrupt. */
#define AMP__SIG_MAX_TILE_DIM 65536

/* Parameter kinds: the same numbers as amp_arg_kind (include/hipamp.h). */
typedef struct amp__sig_param {
    int32_t kind;      /* AMP_ARG_VIEW, AMP_ARG_ARRAY, AMP_ARG_INT32, ... */
    int32_t elem_size; /* element bytes for views/arrays, value bytes otherwise */
    int32_t rank;      /* views/arrays; 0 otherwise */
    int32_t is_const;  /* view/array of const T: the kernel never writes it */
    int32_t offset;    /* byte offset inside the pack */
    int32_t size;      /* bytes inside the pack */
    int32_t align;     /* alignment inside the pack (a power of two) */
    int32_t reserved;  /* 0 */
} amp__sig_param;

typedef struct amp__signature {
    int32_t magic;     /* AMP__SIG_MAGIC */
    int32_t version;   /* AMP__SIG_VERSION */
    int32_t tiled;     /* 1: AMP_TILED_KERNEL (first parameter a tiled_index) */
    int32_t rank;      /* rank of the index / tiled_index */
    int32_t tile[3];   /* tile sizes in index order (tile[0] outermost); 0 unused */
    int32_t nparams;
    int32_t pack_size;
    int32_t pack_align;
    amp__sig_param params[AMP__SIG_MAX_PARAMS];
} amp__signature;

/* The largest rank of a launch: the extents launch_info carries (the
 * prelude's AMP__LAUNCH_MAX_RANK). At least AMP_MAX_RANK (launch.c checks). */
#define AMP__LAUNCH_MAX_RANK 8

/* Every entry point's first parameter. ext[0..rank-1] is the launched extent
 * (padded extent for tiled launches); the rest are 0. */
typedef struct amp__launch_info {
    int32_t ext[AMP__LAUNCH_MAX_RANK];
    int32_t rank;
    int32_t reserved[3];
} amp__launch_info;

/* A view/array descriptor in the pack (rank N):
 *   offset 0         : element pointer (8 bytes), the view's first element
 *   offset 8         : int64 stride[N] in elements (stride[N-1] == 1)
 *   offset 8 + 8N    : int32 extent[N]
 *   size             : round up to 8 of (8 + 12N); alignment 8 */
#define AMP__DESC_STRIDE_OFFSET 8
#define AMP__DESC_EXTENT_OFFSET(n) (8 + 8 * (n))
#define AMP__DESC_SIZE(n) ((8 + 12 * (n) + 7) / 8 * 8)

#endif /* AMP_SIGNATURE_H */
