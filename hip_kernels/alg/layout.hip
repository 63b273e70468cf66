// layout.hip — what every kernel of hipamp's algorithms shares: how a tile's threads take a chunk's elements, the configuration the programs read, and the tile_static padding. The kernels live one algorithm a file beside it (reduce.hip, fill.hip, scan.hip, select.hip, sort.hip: one source for every accelerator); lib/alg/programs.c joins them, in that order after this file, behind amp_algorithms_lib.hip and the functions it generates.
//
// Every kernel is a tiled kernel over tiles of AMP_ALG_TILE threads (128 by default on
// a GPU, 1 on the CPU accelerator, where a tile is one work-item running its
// items as a loop). A tile's chunk is AMP_ALG_TILE * ITEMS consecutive
// elements; thread l takes elements l, l + TILE, l + 2*TILE, ... of it, so
// a GPU wave reads consecutive addresses and the CPU's one work-item reads a
// contiguous run. Barriers sit only in kernel bodies, never in helpers or
// switches, so that the CPU accelerator runs every kernel as loops (its
// loop transformation refuses anything else).
//
// Configuration read here (besides amp_algorithms_lib.hip's):
//   AMP_ALG_WITH_REDUCE / _SCAN / _SELECT / _IOTA / _FILL / _SORT / _CLEAR
//                    which kernels the program holds
//   AMP_ALG_OPS(X)   X(amp_op value, operator struct) for each operator the
//                    program accepts at run time (the op argument)
//   AMP_ALG_REDUCE_ITEMS, AMP_ALG_SCAN_ITEMS, AMP_ALG_SORT_ITEMS
//                    items per thread (powers of two)
// and what lib/alg/programs.c generates: struct amp__alg_in (the inputs and
// scalars), AMP_ALG_IN_PARAMS (them as kernel parameters), AMP_ALG_IN_MAKE,
// AMP_ALG_IN_CONTIG(in), amp__alg_map<C>(in, i) (the mapped i-th element),
// amp__alg_post(r); for compaction amp__alg_elem<C, Call>(in, i) (Call as get's) and
// amp__alg_pred(x, i, in); for sorting AMP_ALG_K (key type), AMP_ALG_KU
// (its bits), AMP_ALG_V (value word, when sorting pairs), AMP_ALG_RADIX_BITS
// and AMP_ALG_PASSES; for fill AMP_ALG_E.

// tile_static index of a chunk position: one padding element every
// 2^AMP_ALG_PAD_SHIFT, so that the threads of a wave reading their items in
// a row (stride ITEMS) start on different banks: every 32, or every 64 when
// a thread has 64 items (64 + 1 apart puts 32 threads on 32 banks, where
// 64 + 2 would put two on each). No padding on the CPU.
#define AMP_ALG_PAD_SHIFT (AMP_ALG_SCAN_ITEMS == 64 ? 6 : 5)
#define AMP_ALG_PAD(j) ((j) + (AMP_ALG_TILE > 1 ? ((j) >> AMP_ALG_PAD_SHIFT) : 0))
