/* gpu_sections.h — the sections of the GPU benchmark report, each in its own file over gpu_harness.h; bench_gpu.c's main runs them in the report's order. A new section is a gpu_<name>.c listed in gpu.cmake, its entry points here, and a call in main. */
#ifndef HIPAMP_BENCH_GPU_SECTIONS_H
#define HIPAMP_BENCH_GPU_SECTIONS_H

#include <stdbool.h>

/* gpu_study.c: each transpose and matmul variant through hipamp against the
 * identical raw launch, the device copy and the vendor SGEMM ("Kernels"
 * table; adds the tiled and vendor-SGEMM goals). study_goals adds the goals
 * drawn from the whole table (tuned transpose vs copy, lowest hipamp/raw),
 * when the goals are about to be listed. */
void study_report(void);
void study_goals(void);

/* gpu_launch.c: launch overhead against the raw launch, paired batches.
 * launch_row measures and prints the table's first row (and, with
 * where_time_goes, where a launch's time goes: --launch-only);
 * launch_report is the whole "Launch overhead" section, trace hooks
 * included (bench_trace beside this program). */
void launch_row(bool where_time_goes);
void launch_report(void);

/* gpu_cache.c: cold compiles through hipamp against the runtime compiler
 * alone, disk-cache loads and in-memory hits. build_cache_measure runs before
 * the workloads are built (their builds would warm the caches);
 * build_cache_report prints the section and adds its goals. */
void build_cache_measure(void);
void build_cache_report(void);

/* gpu_two_gpus.c: the peer copy through hipamp against the raw driver's, and
 * one long kernel on each of two GPUs at once ("Two GPUs"). */
void two_gpus_report(void);

/* gpu_graph.c: launch graphs (issue 24): a chain of 1000 dependent small
 * launches replayed from a graph against the raw launches of the same
 * kernel, and a CG iteration on 256 x 256 with and without a graph
 * ("Launch graphs"; adds both goals). */
void graph_report(void);

/* gpu_algorithms.c: reduce, dot, scan and sort through hipamp against the
 * vendor BLAS (Sasum, Sdot), the device copy and CUB (cub_ref beside this
 * program, when built), with the tuning knobs in effect ("Algorithms";
 * adds its goals). */
void algorithms_report(void);

/* gpu_hip_vs_cuda.c: the same launch through hip:0 (hipamp's HIP driver on
 * HIP's NVIDIA platform) and cuda:0 in one run ("HIP on NVIDIA"; no goal;
 * --hip-vs-cuda-only). */
void hip_vs_cuda_report(void);
/* gpu_stream.c: BabelStream's kernels (examples/stream/stream.hip) through
 * hipamp against the identical raw launches, double and float, and the dot
 * through amp_transform_reduce against the raw tiled dot ("BabelStream";
 * adds its goal). */
void stream_report(void);

#endif
