/* heat_grid.h — what heat_mpi and its test share: the initial grid (a function of the global cell alone), the split of rows across ranks, the halo a rank exchanges, and the FNV-1a 64 checksum of the grid's bytes. */
#ifndef HEAT_GRID_H
#define HEAT_GRID_H

#include <stddef.h>
#include <stdint.h>

/* splitmix64's finalizer: a well-mixed 64-bit hash of the cell number. */
static inline uint64_t heat_mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* The initial value of global cell (row g, column c) of an nx x ny grid:
 * a hot top edge (1), a warm bottom edge (0.25), a left edge at 0.5 and a
 * cold right edge (0), pseudo-random values in [0, 1) inside. Boundary
 * cells keep these values for ever. */
static inline float heat_initial(int64_t g, int64_t c, int64_t nx, int64_t ny)
{
    if (g == 0) return 1.0f;
    if (g == ny - 1) return 0.25f;
    if (c == 0) return 0.5f;
    if (c == nx - 1) return 0.0f;
    return (float)(heat_mix((uint64_t)(g * nx + c)) >> 40) * (1.0f / 16777216.0f);
}

/* Rows of rank `rank` of `nranks` in a grid of ny rows: the first ny %
 * nranks ranks get one row more. */
static inline void heat_split(int ny, int nranks, int rank, int *first_row, int *rows)
{
    int base = ny / nranks, extra = ny % nranks;
    *rows = base + (rank < extra ? 1 : 0);
    *first_row = rank * base + (rank < extra ? rank : extra);
}

/* Bytes a rank moves per step: one row of nx floats out and one in, for
 * each neighbour (0, 1 or 2 in a split of rows). */
static inline uint64_t heat_halo_bytes(int nx, int nranks, int rank)
{
    int neighbours = (rank > 0) + (rank < nranks - 1);
    return (uint64_t)neighbours * 2u * (uint64_t)nx * sizeof(float);
}

/* 64-bit FNV-1a over n bytes, chainable: start from HEAT_FNV_SEED. */
#define HEAT_FNV_SEED 0xcbf29ce484222325ULL
static inline uint64_t heat_fnv1a(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = (const unsigned char *)data;
    for (size_t i = 0; i < n; ++i) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

#endif
