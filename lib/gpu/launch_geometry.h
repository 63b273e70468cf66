/* launch_geometry.h — how a C++ AMP launch maps onto a grid of GPU blocks,
 * in one place for the GPU backend and the benchmark's raw launches (which
 * must launch exactly what the library does). Pure; no device limits. */
#ifndef AMP_GPU_LAUNCH_GEOMETRY_H
#define AMP_GPU_LAUNCH_GEOMETRY_H

#include "base/signature.h"

#include <stdbool.h>
#include <stdint.h>

/* Block and grid axes y and z are limited to 65535 by CUDA; the same limit
 * is applied on HIP so a program behaves the same on both. */
#define AMP__GRID_YZ_MAX 65535u

static inline unsigned amp__pow2ceil(uint64_t x, unsigned cap)
{
    unsigned p = 1;
    while (p < cap && p < x) p <<= 1;
    return p;
}

/* The largest power of two <= x (x >= 1). */
static inline unsigned amp__pow2floor(unsigned x)
{
    unsigned p = 1;
    while (p <= x / 2) p <<= 1;
    return p;
}

static inline unsigned amp__ceil_div_capped(uint64_t a, unsigned b, unsigned cap)
{
    uint64_t q = (a + b - 1) / b;
    return q > cap ? cap : (unsigned)q;
}

/* Index dimension d of a rank-r launch maps to hardware axis r-1-d, so the
 * contiguous last dimension is x (coalesced); the prelude undoes this.
 * Tiled: one block per tile (the extent is divisible: the core checked).
 * Simple: blocks of at most AMP__SIMPLE_BLOCK_THREADS (the prelude declares
 * simple-model kernels with __launch_bounds__ of the same constant), or
 * of the largest power of two within the kernel's own limit (limit > 0:
 * an AMP_KERNEL_MAX_BLOCK below the default, or registers; a block over it
 * fails in the driver), x
 * covering the last dimension, y the one before, z the product of the rest;
 * y and z are capped and the prelude's entry loops over what is left.
 * Simple with a stated block (amp_launch_options.block_size, block > 0,
 * checked by the core): blocks of block x 1 x 1 at every rank, so a launch
 * gets exactly the block it asked for; x covers the last dimension in
 * ceil(extent / block) blocks (at most 2^31 - 1 + block threads, which the
 * prelude compares unsigned), y and z one row each as above. */
static inline void amp__launch_geometry(int r, const int *e, bool tiled, const int32_t *tile, unsigned block,
                                        unsigned limit, unsigned g[3], unsigned b[3])
{
    g[0] = g[1] = g[2] = b[0] = b[1] = b[2] = 1;
    if (tiled) {
        for (int k = 0; k < r; ++k) {
            int axis = r - 1 - k;
            b[axis] = (unsigned)tile[k];
            g[axis] = (unsigned)(e[k] / tile[k]);
        }
        return;
    }
    uint64_t ex = (uint64_t)e[r - 1];
    if (block) {
        b[0] = block;
        g[0] = (unsigned)((ex + block - 1) / block);
        if (r >= 2) g[1] = amp__ceil_div_capped((uint64_t)e[r - 2], 1, AMP__GRID_YZ_MAX);
        if (r >= 3) {
            uint64_t ez = 1;
            for (int k = 0; k < r - 2; ++k) ez *= (uint64_t)e[k];
            g[2] = amp__ceil_div_capped(ez, 1, AMP__GRID_YZ_MAX);
        }
        return;
    }
    const unsigned bt = amp__pow2floor(limit && limit < AMP__SIMPLE_BLOCK_THREADS ? limit : AMP__SIMPLE_BLOCK_THREADS);
    b[0] = amp__pow2ceil(ex, r == 1 || bt < 32 ? bt : 32);
    g[0] = (unsigned)((ex + b[0] - 1) / b[0]);
    if (r >= 2) {
        uint64_t ey = (uint64_t)e[r - 2];
        b[1] = amp__pow2ceil(ey, bt / b[0]);
        g[1] = amp__ceil_div_capped(ey, b[1], AMP__GRID_YZ_MAX);
    }
    if (r >= 3) {
        uint64_t ez = 1;
        for (int k = 0; k < r - 2; ++k) ez *= (uint64_t)e[k]; /* < 2^63: the element count fits int64 */
        unsigned cap = bt / (b[0] * b[1]);
        b[2] = amp__pow2ceil(ez, cap < 64 ? cap : 64);
        g[2] = amp__ceil_div_capped(ez, b[2], AMP__GRID_YZ_MAX);
    }
}

#endif /* AMP_GPU_LAUNCH_GEOMETRY_H */
