/* bench_cpu.c — the CPU accelerator side by side with PoCL (when installed, through the OpenCL ICD loader, dlopen'ed) and with plain serial C: five kernels (saxpy, simple and tiled matmul, tiled transpose, tree reduction), the same local sizes, kernel time after warm-up (median of 5), cold and cached build times, every result checked against a reference, then the algorithms (bench_cpu_algorithms.c; --algorithms-only runs that section alone) and BabelStream's kernels against C + OpenMP (bench_cpu_stream.c; --stream-only [--arraysize N] [--numtimes K] [--precision double|float|both] runs that section alone, BabelStream running one precision a process as its --float does) and the tiled transposes against a blocked C + OpenMP loop (bench_cpu_transpose.c; --transpose-only); writes a Markdown report with the ratios. --first-call-only: the time-to-first-result table (first_call.c, shared with bench_gpu; not in the full run). */
#define _GNU_SOURCE
#include <hipamp.h>

#include "bench_cpu_algorithms.h"
#include "bench_cpu_stream.h"
#include "bench_cpu_transpose.h"
#include "first_call.h"
#include "graph_work.h"
#include "workloads.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------ kernels */

/* The same five kernels for hipamp (C++ AMP) and for OpenCL C, written the
 * same way: the tiled ones with the same local sizes and local memory. */
const char bench_cpu_kernels_source[] =
    "AMP_KERNEL(saxpy, amp::index<1> i, float a, amp::array_view<const float, 1> x,\n"
    "           amp::array_view<float, 1> y)\n"
    "{ y[i] = a * x[i] + y[i]; }\n"
    "AMP_KERNEL(matmul_simple, amp::index<2> idx, amp::array_view<const float, 2> A,\n"
    "           amp::array_view<const float, 2> B, amp::array_view<float, 2> C)\n"
    "{\n"
    "    const int K = A.extent[1];\n"
    "    float sum = 0.0f;\n"
    "    for (int k = 0; k < K; ++k) sum += A(idx[0], k) * B(k, idx[1]);\n"
    "    C[idx] = sum;\n"
    "}\n"
    "AMP_TILED_KERNEL(matmul_tiled, amp::tiled_index<16, 16> t, amp::array_view<const float, 2> A,\n"
    "                 amp::array_view<const float, 2> B, amp::array_view<float, 2> C)\n"
    "{\n"
    "    tile_static float As[16][16];\n"
    "    tile_static float Bs[16][16];\n"
    "    const int row = t.local[0], col = t.local[1];\n"
    "    const int K = A.extent[1];\n"
    "    float sum = 0.0f;\n"
    "    for (int k0 = 0; k0 < K; k0 += 16) {\n"
    "        As[row][col] = A(t.global[0], k0 + col);\n"
    "        Bs[row][col] = B(k0 + row, t.global[1]);\n"
    "        t.barrier.wait();\n"
    "        for (int k = 0; k < 16; ++k) sum += As[row][k] * Bs[k][col];\n"
    "        t.barrier.wait();\n"
    "    }\n"
    "    C[t.global] = sum;\n"
    "}\n"
    "AMP_TILED_KERNEL(transpose_tiled, amp::tiled_index<16, 16> t, amp::array_view<const float, 2> A,\n"
    "                 amp::array_view<float, 2> At)\n"
    "{\n"
    "    tile_static float tile[16][17];\n"
    "    tile[t.local[0]][t.local[1]] = A[t.global];\n"
    "    t.barrier.wait();\n"
    "    At(t.tile_origin[1] + t.local[0], t.tile_origin[0] + t.local[1]) = tile[t.local[1]][t.local[0]];\n"
    "}\n"
    "AMP_TILED_KERNEL(reduce_tiled, amp::tiled_index<256> t, amp::array_view<const float, 1> in,\n"
    "                 amp::array_view<float, 1> sums)\n"
    "{\n"
    "    tile_static float s[256];\n"
    "    const int l = t.local[0];\n"
    "    s[l] = in[t.global];\n"
    "    t.barrier.wait();\n"
    "    for (int w = 128; w > 0; w >>= 1) {\n"
    "        if (l < w) s[l] += s[l + w];\n"
    "        t.barrier.wait();\n"
    "    }\n"
    "    if (l == 0) sums[t.tile] = s[0];\n"
    "}\n";

static const char cl_source[] =
    "__kernel void saxpy(float a, __global const float *x, __global float *y)\n"
    "{ size_t i = get_global_id(0); y[i] = a * x[i] + y[i]; }\n"
    "__kernel void matmul_simple(__global const float *A, __global const float *B, __global float *C, int N)\n"
    "{\n"
    "    int r = get_global_id(1), c = get_global_id(0);\n"
    "    float sum = 0.0f;\n"
    "    for (int k = 0; k < N; ++k) sum += A[r * N + k] * B[k * N + c];\n"
    "    C[r * N + c] = sum;\n"
    "}\n"
    "__kernel void matmul_tiled(__global const float *A, __global const float *B, __global float *C, int N)\n"
    "{\n"
    "    __local float As[16][16];\n"
    "    __local float Bs[16][16];\n"
    "    const int row = get_local_id(1), col = get_local_id(0);\n"
    "    const int gr = get_global_id(1), gc = get_global_id(0);\n"
    "    float sum = 0.0f;\n"
    "    for (int k0 = 0; k0 < N; k0 += 16) {\n"
    "        As[row][col] = A[gr * N + k0 + col];\n"
    "        Bs[row][col] = B[(k0 + row) * N + gc];\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "        for (int k = 0; k < 16; ++k) sum += As[row][k] * Bs[k][col];\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    }\n"
    "    C[gr * N + gc] = sum;\n"
    "}\n"
    "__kernel void transpose_tiled(__global const float *A, __global float *At, int N)\n"
    "{\n"
    "    __local float tile[16][17];\n"
    "    const int lr = get_local_id(1), lc = get_local_id(0);\n"
    "    const int r0 = get_group_id(1) * 16, c0 = get_group_id(0) * 16;\n"
    "    tile[lr][lc] = A[(r0 + lr) * N + c0 + lc];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    At[(c0 + lr) * N + r0 + lc] = tile[lc][lr];\n"
    "}\n"
    "__kernel void reduce_tiled(__global const float *in, __global float *sums)\n"
    "{\n"
    "    __local float s[256];\n"
    "    const int l = get_local_id(0);\n"
    "    s[l] = in[get_global_id(0)];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    for (int w = 128; w > 0; w >>= 1) {\n"
    "        if (l < w) s[l] += s[l + w];\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    }\n"
    "    if (l == 0) sums[get_group_id(0)] = s[0];\n"
    "}\n";

enum { K_SAXPY, K_MM_SIMPLE, K_MM_TILED, K_TRANSPOSE, K_REDUCE, K_COUNT };
static const char *const knames[K_COUNT] = {"saxpy", "matmul_simple", "matmul_tiled", "transpose_tiled",
                                            "reduce_tiled"};
/* Row labels, completed with the sizes ("saxpy 2^24"). */
static void klabel(int k, const void *dp, char *buf, size_t cap);

#define RUNS 5
#define WARMUP 2

/* ------------------------------------------------------------ helpers */

static int failures;

#define CHECK(call)                                                                           \
    do {                                                                                      \
        amp_status st_ = (call);                                                              \
        if (st_ != AMP_OK) {                                                                  \
            fprintf(stderr, "bench_cpu: %s failed: %s: %s\n", #call, amp_status_name(st_),    \
                    amp_last_error());                                                        \
            exit(1);                                                                          \
        }                                                                                     \
    } while (0)

static void *xmalloc(size_t n)
{
    void *p = malloc(n);
    if (!p) {
        fprintf(stderr, "bench_cpu: out of memory (%zu bytes)\n", n);
        exit(1);
    }
    return p;
}

/* Reproducible values in [-1, 1), never 0. */
static void fill(float *x, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; ++i) {
        seed = seed * 1664525u + 1013904223u;
        float v = (float)(seed >> 8) / 8388608.0f - 1.0f;
        x[i] = v == 0.0f ? 0.5f : v;
    }
}

static bool close_enough(const float *got, const float *want, size_t n, float rel)
{
    for (size_t i = 0; i < n; ++i) {
        float d = fabsf(got[i] - want[i]);
        if (!(d <= rel * (1.0f + fabsf(want[i])))) {
            fprintf(stderr, "  element %zu: got %g, want %g\n", i, got[i], want[i]);
            return false;
        }
    }
    return true;
}

/* ------------------------------------------------------- problem data */

typedef struct data {
    size_t n_saxpy, n_red;
    int n_mm, n_tr;
    float *x, *y0, *y_ref;          /* saxpy */
    float *A, *B, *C_ref;           /* matmul */
    float *T, *T_ref;               /* transpose input and reference */
    float *R, *R_ref;               /* reduction input, reference partial sums */
    float a;
} data;

typedef struct result {
    double ms[K_COUNT];
    bool ok[K_COUNT];
    bool have;
} result;

static void make_data(data *d, bool quick)
{
    d->n_saxpy = (size_t)1 << (quick ? 20 : 24);
    d->n_red = (size_t)1 << (quick ? 20 : 24);
    d->n_mm = quick ? 256 : 1024;
    d->n_tr = quick ? 1024 : 4096;
    d->a = 2.5f;
    d->x = xmalloc(d->n_saxpy * 4);
    d->y0 = xmalloc(d->n_saxpy * 4);
    d->y_ref = xmalloc(d->n_saxpy * 4);
    fill(d->x, d->n_saxpy, 1);
    fill(d->y0, d->n_saxpy, 2);
    size_t mm = (size_t)d->n_mm * d->n_mm, tr = (size_t)d->n_tr * d->n_tr;
    d->A = xmalloc(mm * 4);
    d->B = xmalloc(mm * 4);
    d->C_ref = xmalloc(mm * 4);
    fill(d->A, mm, 3);
    fill(d->B, mm, 4);
    d->T = xmalloc(tr * 4);
    d->T_ref = xmalloc(tr * 4);
    fill(d->T, tr, 5);
    d->R = xmalloc(d->n_red * 4);
    d->R_ref = xmalloc(d->n_red / 256 * 4);
    fill(d->R, d->n_red, 6);
}

static void klabel(int k, const void *dp, char *buf, size_t cap)
{
    const data *d = dp;
    int lg = 0;
    while (((size_t)1 << lg) < d->n_saxpy) lg++;
    switch (k) {
    case K_SAXPY: snprintf(buf, cap, "saxpy 2^%d", lg); break;
    case K_MM_SIMPLE: snprintf(buf, cap, "matmul simple %d^2", d->n_mm); break;
    case K_MM_TILED: snprintf(buf, cap, "matmul tiled 16x16, %d^2", d->n_mm); break;
    case K_TRANSPOSE:
        snprintf(buf, cap, "transpose tiled 16x16, tile_static float[16][17], %d^2", d->n_tr);
        break;
    default: snprintf(buf, cap, "tree reduction, tile 256, 2^%d", lg); break;
    }
}

/* ------------------------------------------------- serial references */

/* The serial loops: the references every result is checked against, and
 * the "serial -O3" column. The saxpy reference is applied once per run to
 * its own copy, like the kernels. */
static void serial_saxpy(const data *d, float *y)
{
    const float a = d->a;
    const float *restrict x = d->x;
    for (size_t i = 0; i < d->n_saxpy; ++i) y[i] = a * x[i] + y[i];
}

static void serial_matmul(const data *d, float *restrict C)
{
    const int n = d->n_mm;
    memset(C, 0, (size_t)n * n * 4);
    for (int i = 0; i < n; ++i)
        for (int k = 0; k < n; ++k) {
            const float a = d->A[(size_t)i * n + k];
            const float *restrict b = d->B + (size_t)k * n;
            float *restrict c = C + (size_t)i * n;
            for (int j = 0; j < n; ++j) c[j] += a * b[j];
        }
}

static void serial_transpose(const data *d, float *restrict At)
{
    const int n = d->n_tr;
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) At[(size_t)j * n + i] = d->T[(size_t)i * n + j];
}

/* Partial sums of 256 in the kernels' tree order (bit-exact comparison is
 * then possible; the total is what the serial column times). */
static void tree_sums(const data *d, float *sums)
{
    float s[256];
    for (size_t t = 0; t < d->n_red / 256; ++t) {
        memcpy(s, d->R + t * 256, sizeof s);
        for (int w = 128; w > 0; w >>= 1)
            for (int l = 0; l < w; ++l) s[l] += s[l + w];
        sums[t] = s[0];
    }
}

static double serial_sum(const data *d)
{
    float acc = 0.0f;
    for (size_t i = 0; i < d->n_red; ++i) acc += d->R[i];
    return acc;
}

static void run_serial(data *d, result *r)
{
    double t[RUNS];
    float *tmp = xmalloc(d->n_saxpy * 4);
    for (int k = -1; k < RUNS; ++k) {
        memcpy(tmp, d->y0, d->n_saxpy * 4);
        double t0 = wl_now();
        serial_saxpy(d, tmp);
        if (k >= 0) t[k] = wl_now() - t0;
    }
    memcpy(d->y_ref, tmp, d->n_saxpy * 4);
    r->ms[K_SAXPY] = wl_median(t, RUNS) * 1e3;
    free(tmp);
    /* The large references run once (they take the longest). */
    double t0 = wl_now();
    serial_matmul(d, d->C_ref);
    r->ms[K_MM_SIMPLE] = (wl_now() - t0) * 1e3;
    r->ms[K_MM_TILED] = -1;
    for (int k = -1; k < RUNS; ++k) {
        t0 = wl_now();
        serial_transpose(d, d->T_ref);
        if (k >= 0) t[k] = wl_now() - t0;
    }
    r->ms[K_TRANSPOSE] = wl_median(t, RUNS) * 1e3;
    volatile double sink = 0;
    for (int k = -1; k < RUNS; ++k) {
        t0 = wl_now();
        sink += serial_sum(d);
        if (k >= 0) t[k] = wl_now() - t0;
    }
    (void)sink;
    r->ms[K_REDUCE] = wl_median(t, RUNS) * 1e3;
    tree_sums(d, d->R_ref);
    r->have = true;
    for (int k = 0; k < K_COUNT; ++k) r->ok[k] = true;
}

/* ------------------------------------------------------- OpenCL / PoCL */

typedef int32_t cl_int;
typedef uint32_t cl_uint;
typedef uint64_t cl_ulong;
typedef struct _cl_platform_id *cl_platform_id;
typedef struct _cl_device_id *cl_device_id;
typedef struct _cl_context *cl_context;
typedef struct _cl_command_queue *cl_command_queue;
typedef struct _cl_program *cl_program;
typedef struct _cl_kernel *cl_kernel;
typedef struct _cl_mem *cl_mem;
typedef struct _cl_event *cl_event;
#define CL_DEVICE_TYPE_CPU (1 << 1)
#define CL_PLATFORM_NAME 0x0902
#define CL_PLATFORM_VERSION 0x0901
#define CL_DEVICE_NAME 0x102B
#define CL_PROGRAM_BUILD_LOG 0x1183
#define CL_MEM_READ_WRITE (1 << 0)
#define CL_MEM_USE_HOST_PTR (1 << 3)
#define CL_TRUE 1

#define CL_FUNCS(X)                                                                                     \
    X(cl_int, clGetPlatformIDs, (cl_uint, cl_platform_id *, cl_uint *))                                   \
    X(cl_int, clGetPlatformInfo, (cl_platform_id, cl_uint, size_t, void *, size_t *))                     \
    X(cl_int, clGetDeviceIDs, (cl_platform_id, cl_ulong, cl_uint, cl_device_id *, cl_uint *))             \
    X(cl_int, clGetDeviceInfo, (cl_device_id, cl_uint, size_t, void *, size_t *))                        \
    X(cl_context, clCreateContext, (const intptr_t *, cl_uint, const cl_device_id *, void *, void *, cl_int *)) \
    X(cl_command_queue, clCreateCommandQueue, (cl_context, cl_device_id, cl_ulong, cl_int *))             \
    X(cl_program, clCreateProgramWithSource, (cl_context, cl_uint, const char **, const size_t *, cl_int *)) \
    X(cl_int, clBuildProgram, (cl_program, cl_uint, const cl_device_id *, const char *, void *, void *))  \
    X(cl_int, clGetProgramBuildInfo, (cl_program, cl_device_id, cl_uint, size_t, void *, size_t *))      \
    X(cl_kernel, clCreateKernel, (cl_program, const char *, cl_int *))                                    \
    X(cl_int, clSetKernelArg, (cl_kernel, cl_uint, size_t, const void *))                                 \
    X(cl_mem, clCreateBuffer, (cl_context, cl_ulong, size_t, void *, cl_int *))                           \
    X(cl_int, clEnqueueNDRangeKernel, (cl_command_queue, cl_kernel, cl_uint, const size_t *, const size_t *, \
                                       const size_t *, cl_uint, const cl_event *, cl_event *))            \
    X(cl_int, clEnqueueReadBuffer, (cl_command_queue, cl_mem, cl_uint, size_t, size_t, void *, cl_uint,     \
                                    const cl_event *, cl_event *))                                        \
    X(cl_int, clEnqueueWriteBuffer, (cl_command_queue, cl_mem, cl_uint, size_t, size_t, const void *,       \
                                     cl_uint, const cl_event *, cl_event *))                              \
    X(cl_int, clFinish, (cl_command_queue))                                                               \
    X(cl_int, clReleaseMemObject, (cl_mem))                                                               \
    X(cl_int, clReleaseKernel, (cl_kernel))                                                               \
    X(cl_int, clReleaseProgram, (cl_program))                                                             \
    X(cl_int, clReleaseCommandQueue, (cl_command_queue))                                                  \
    X(cl_int, clReleaseContext, (cl_context))

static struct {
#define CL_PTR(ret, name, args) ret(*name) args;
    CL_FUNCS(CL_PTR)
#undef CL_PTR
    cl_device_id dev;
    cl_context ctx;
    cl_command_queue q;
    char name[256], version[256];
} cl;

#define CLCHECK(call)                                                                  \
    do {                                                                               \
        cl_int e_ = (call);                                                            \
        if (e_ != 0) {                                                                 \
            fprintf(stderr, "bench_cpu: %s failed: OpenCL error %d\n", #call, e_);     \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

/* PoCL's CPU device through the ICD loader, or false with why. */
static bool cl_open(char *why, size_t cap)
{
    void *h = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(why, cap, "no OpenCL ICD loader (libOpenCL.so.1): install ocl-icd-libopencl1 and pocl-opencl-icd");
        return false;
    }
#define CL_SYM(ret, name, args)                                           \
    if (!(*(void **)&cl.name = dlsym(h, #name))) {                        \
        snprintf(why, cap, "the OpenCL loader lacks %s", #name);          \
        return false;                                                     \
    }
    CL_FUNCS(CL_SYM)
#undef CL_SYM
    cl_platform_id plats[16];
    cl_uint np = 0;
    if (cl.clGetPlatformIDs(16, plats, &np) != 0 || np == 0) {
        snprintf(why, cap, "no OpenCL platform (is pocl-opencl-icd installed?)");
        return false;
    }
    for (cl_uint i = 0; i < np; ++i) {
        char pname[256] = "";
        cl.clGetPlatformInfo(plats[i], CL_PLATFORM_NAME, sizeof pname, pname, NULL);
        if (!strstr(pname, "Portable Computing Language")) continue;
        cl_uint nd = 0;
        if (cl.clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_CPU, 1, &cl.dev, &nd) != 0 || nd == 0) continue;
        cl.clGetPlatformInfo(plats[i], CL_PLATFORM_VERSION, sizeof cl.version, cl.version, NULL);
        cl.clGetDeviceInfo(cl.dev, CL_DEVICE_NAME, sizeof cl.name, cl.name, NULL);
        cl_int err = 0;
        cl.ctx = cl.clCreateContext(NULL, 1, &cl.dev, NULL, NULL, &err);
        if (err) break;
        cl.q = cl.clCreateCommandQueue(cl.ctx, cl.dev, 0, &err);
        if (err) break;
        return true;
    }
    snprintf(why, cap, "no PoCL CPU device among the OpenCL platforms");
    return false;
}

static cl_mem cl_buf(size_t bytes, const void *init)
{
    cl_int err = 0;
    cl_mem m = cl.clCreateBuffer(cl.ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    if (err) {
        fprintf(stderr, "bench_cpu: clCreateBuffer(%zu) failed: %d\n", bytes, err);
        exit(1);
    }
    if (init) CLCHECK(cl.clEnqueueWriteBuffer(cl.q, m, CL_TRUE, 0, bytes, init, 0, NULL, NULL));
    return m;
}

static cl_program cl_build(double *ms, cl_kernel *k)
{
    cl_int err = 0;
    const char *srcs[1] = {cl_source};
    double t0 = wl_now();
    cl_program p = cl.clCreateProgramWithSource(cl.ctx, 1, srcs, NULL, &err);
    if (err) {
        fprintf(stderr, "bench_cpu: clCreateProgramWithSource failed: %d\n", err);
        exit(1);
    }
    if (cl.clBuildProgram(p, 1, &cl.dev, "-cl-std=CL1.2", NULL, NULL) != 0) {
        char log[8192] = "";
        cl.clGetProgramBuildInfo(p, cl.dev, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
        fprintf(stderr, "bench_cpu: OpenCL build failed:\n%s\n", log);
        exit(1);
    }
    for (int i = 0; i < K_COUNT; ++i) {
        k[i] = cl.clCreateKernel(p, knames[i], &err);
        if (err) {
            fprintf(stderr, "bench_cpu: clCreateKernel(%s) failed: %d\n", knames[i], err);
            exit(1);
        }
    }
    *ms = (wl_now() - t0) * 1e3;
    return p;
}

/* ------------------------------------------------ hipamp against PoCL */

/* One kernel on both sides, runs interleaved (hipamp, PoCL, hipamp, ...)
 * so that the machine's other load falls on both alike. */
typedef struct pair {
    amp_kernel *ak;
    bool tiled;
    amp_extent e;
    int tile[3];
    amp_arg args[4];
    int nargs;
    amp_array_view *out;        /* synchronised after each launch */
    float *reset_host;          /* saxpy: y goes back to y0 before each run */
    amp_array_view *reset_view;
    cl_kernel ck;               /* NULL: no PoCL */
    int dims;
    size_t global[2], local[2];
    bool cl_local;
    cl_mem cl_reset;
    const float *y0;
    size_t reset_bytes;
} pair;

static void run_pair(pair *p, double *amp_ms, double *cl_ms)
{
    double ta[RUNS], tc[RUNS];
    amp_tiled_extent te;
    if (p->tiled) CHECK(amp_extent_tile(p->e, p->tile, &te));
    for (int r = -WARMUP; r < RUNS; ++r) {
        if (p->reset_host) {
            memcpy(p->reset_host, p->y0, p->reset_bytes);
            CHECK(amp_array_view_refresh(p->reset_view));
        }
        double t0 = wl_now();
        if (p->tiled) CHECK(amp_parallel_for_each_tiled(NULL, te, p->ak, p->args, (size_t)p->nargs));
        else CHECK(amp_parallel_for_each(NULL, p->e, p->ak, p->args, (size_t)p->nargs));
        CHECK(amp_array_view_synchronize(p->out));
        if (r >= 0) ta[r] = wl_now() - t0;
        if (!p->ck) continue;
        if (p->cl_reset)
            CLCHECK(cl.clEnqueueWriteBuffer(cl.q, p->cl_reset, CL_TRUE, 0, p->reset_bytes, p->y0, 0, NULL, NULL));
        t0 = wl_now();
        CLCHECK(cl.clEnqueueNDRangeKernel(cl.q, p->ck, (cl_uint)p->dims, NULL, p->global,
                                          p->cl_local ? p->local : NULL, 0, NULL, NULL));
        CLCHECK(cl.clFinish(cl.q));
        if (r >= 0) tc[r] = wl_now() - t0;
    }
    *amp_ms = wl_median(ta, RUNS) * 1e3;
    *cl_ms = p->ck ? wl_median(tc, RUNS) * 1e3 : -1;
}

static void cl_args(cl_kernel k, int n, const size_t *sizes, const void *const *vals)
{
    for (int i = 0; i < n; ++i) CLCHECK(cl.clSetKernelArg(k, (cl_uint)i, sizes[i], vals[i]));
}

/* tiled_only: the three tiled kernels alone (the fiber-path run). */
static void run_all(const data *d, amp_accelerator *acc, bool have_cl, bool tiled_only, result *ra, result *rc)
{
    amp_program *prog = NULL;
    CHECK(amp_program_build(acc, bench_cpu_kernels_source, NULL, &prog));
    amp_kernel *ak[K_COUNT];
    for (int i = 0; i < K_COUNT; ++i) CHECK(amp_program_get_kernel(prog, knames[i], &ak[i]));
    cl_kernel ck[K_COUNT] = {0};
    cl_program cp = NULL;
    if (have_cl) {
        double ms;
        cp = cl_build(&ms, ck);
    }

    /* saxpy */
    if (!tiled_only) {
        float *y = xmalloc(d->n_saxpy * 4), *yc = xmalloc(d->n_saxpy * 4);
        amp_array_view *vx, *vy;
        CHECK(amp_array_view_create(d->x, 4, amp_extent_1d((int)d->n_saxpy), AMP_READ_ONLY, &vx));
        CHECK(amp_array_view_create(y, 4, amp_extent_1d((int)d->n_saxpy), AMP_READ_WRITE, &vy));
        pair p = {.ak = ak[K_SAXPY], .e = amp_extent_1d((int)d->n_saxpy), .nargs = 3, .out = vy,
                  .reset_host = y, .reset_view = vy, .ck = ck[K_SAXPY], .dims = 1, .global = {d->n_saxpy},
                  .y0 = d->y0, .reset_bytes = d->n_saxpy * 4};
        p.args[0] = amp_arg_float32(d->a);
        p.args[1] = amp_arg_view(vx);
        p.args[2] = amp_arg_view(vy);
        cl_mem bx = NULL, by = NULL;
        if (have_cl) {
            bx = cl_buf(d->n_saxpy * 4, d->x);
            by = cl_buf(d->n_saxpy * 4, d->y0);
            cl_args(ck[K_SAXPY], 3, (size_t[]){sizeof(float), sizeof bx, sizeof by},
                    (const void *[]){&d->a, &bx, &by});
            p.cl_reset = by;
        }
        run_pair(&p, &ra->ms[K_SAXPY], &rc->ms[K_SAXPY]);
        ra->ok[K_SAXPY] = close_enough(y, d->y_ref, d->n_saxpy, 1e-6f);
        if (have_cl) {
            CLCHECK(cl.clEnqueueReadBuffer(cl.q, by, CL_TRUE, 0, d->n_saxpy * 4, yc, 0, NULL, NULL));
            rc->ok[K_SAXPY] = close_enough(yc, d->y_ref, d->n_saxpy, 1e-6f);
            cl.clReleaseMemObject(bx);
            cl.clReleaseMemObject(by);
        }
        CHECK(amp_array_view_destroy(vx));
        CHECK(amp_array_view_destroy(vy));
        free(y);
        free(yc);
    }

    /* matmul, simple and tiled */
    {
        int n = d->n_mm;
        size_t mm = (size_t)n * n;
        float *C = xmalloc(mm * 4), *Cc = xmalloc(mm * 4);
        amp_array_view *va, *vb, *vc;
        CHECK(amp_array_view_create(d->A, 4, amp_extent_2d(n, n), AMP_READ_ONLY, &va));
        CHECK(amp_array_view_create(d->B, 4, amp_extent_2d(n, n), AMP_READ_ONLY, &vb));
        CHECK(amp_array_view_create(C, 4, amp_extent_2d(n, n), AMP_WRITE_ONLY, &vc));
        cl_mem ba = NULL, bb = NULL, bc = NULL;
        if (have_cl) {
            ba = cl_buf(mm * 4, d->A);
            bb = cl_buf(mm * 4, d->B);
            bc = cl_buf(mm * 4, NULL);
        }
        for (int which = tiled_only ? K_MM_TILED : K_MM_SIMPLE; which <= K_MM_TILED; ++which) {
            for (size_t i = 0; i < mm; ++i) C[i] = NAN;
            CHECK(amp_array_view_refresh(vc));
            pair p = {.ak = ak[which], .tiled = which == K_MM_TILED, .e = amp_extent_2d(n, n), .tile = {16, 16},
                      .nargs = 3, .out = vc, .ck = ck[which], .dims = 2, .global = {(size_t)n, (size_t)n},
                      .local = {16, 16}, .cl_local = which == K_MM_TILED};
            p.args[0] = amp_arg_view(va);
            p.args[1] = amp_arg_view(vb);
            p.args[2] = amp_arg_view(vc);
            if (have_cl)
                cl_args(ck[which], 4, (size_t[]){sizeof ba, sizeof bb, sizeof bc, sizeof n},
                        (const void *[]){&ba, &bb, &bc, &n});
            run_pair(&p, &ra->ms[which], &rc->ms[which]);
            ra->ok[which] = close_enough(C, d->C_ref, mm, 1e-3f);
            if (have_cl) {
                CLCHECK(cl.clEnqueueReadBuffer(cl.q, bc, CL_TRUE, 0, mm * 4, Cc, 0, NULL, NULL));
                rc->ok[which] = close_enough(Cc, d->C_ref, mm, 1e-3f);
            }
        }
        if (have_cl) {
            cl.clReleaseMemObject(ba);
            cl.clReleaseMemObject(bb);
            cl.clReleaseMemObject(bc);
        }
        CHECK(amp_array_view_destroy(va));
        CHECK(amp_array_view_destroy(vb));
        CHECK(amp_array_view_destroy(vc));
        free(C);
        free(Cc);
    }

    /* transpose */
    {
        int m = d->n_tr;
        size_t tr = (size_t)m * m;
        float *At = xmalloc(tr * 4), *Atc = xmalloc(tr * 4);
        for (size_t i = 0; i < tr; ++i) At[i] = NAN;
        amp_array_view *vt, *vtt;
        CHECK(amp_array_view_create(d->T, 4, amp_extent_2d(m, m), AMP_READ_ONLY, &vt));
        CHECK(amp_array_view_create(At, 4, amp_extent_2d(m, m), AMP_WRITE_ONLY, &vtt));
        pair p = {.ak = ak[K_TRANSPOSE], .tiled = true, .e = amp_extent_2d(m, m), .tile = {16, 16}, .nargs = 2,
                  .out = vtt, .ck = ck[K_TRANSPOSE], .dims = 2, .global = {(size_t)m, (size_t)m},
                  .local = {16, 16}, .cl_local = true};
        p.args[0] = amp_arg_view(vt);
        p.args[1] = amp_arg_view(vtt);
        cl_mem bt = NULL, btt = NULL;
        if (have_cl) {
            bt = cl_buf(tr * 4, d->T);
            btt = cl_buf(tr * 4, NULL);
            cl_args(ck[K_TRANSPOSE], 3, (size_t[]){sizeof bt, sizeof btt, sizeof m}, (const void *[]){&bt, &btt, &m});
        }
        run_pair(&p, &ra->ms[K_TRANSPOSE], &rc->ms[K_TRANSPOSE]);
        ra->ok[K_TRANSPOSE] = !memcmp(At, d->T_ref, tr * 4);
        if (have_cl) {
            CLCHECK(cl.clEnqueueReadBuffer(cl.q, btt, CL_TRUE, 0, tr * 4, Atc, 0, NULL, NULL));
            rc->ok[K_TRANSPOSE] = !memcmp(Atc, d->T_ref, tr * 4);
            cl.clReleaseMemObject(bt);
            cl.clReleaseMemObject(btt);
        }
        CHECK(amp_array_view_destroy(vt));
        CHECK(amp_array_view_destroy(vtt));
        free(At);
        free(Atc);
    }

    /* tree reduction */
    {
        size_t nt = d->n_red / 256;
        float *sums = xmalloc(nt * 4), *sc = xmalloc(nt * 4);
        for (size_t i = 0; i < nt; ++i) sums[i] = NAN;
        amp_array_view *vr, *vs;
        CHECK(amp_array_view_create(d->R, 4, amp_extent_1d((int)d->n_red), AMP_READ_ONLY, &vr));
        CHECK(amp_array_view_create(sums, 4, amp_extent_1d((int)nt), AMP_WRITE_ONLY, &vs));
        pair p = {.ak = ak[K_REDUCE], .tiled = true, .e = amp_extent_1d((int)d->n_red), .tile = {256}, .nargs = 2,
                  .out = vs, .ck = ck[K_REDUCE], .dims = 1, .global = {d->n_red}, .local = {256},
                  .cl_local = true};
        p.args[0] = amp_arg_view(vr);
        p.args[1] = amp_arg_view(vs);
        cl_mem br = NULL, bs = NULL;
        if (have_cl) {
            br = cl_buf(d->n_red * 4, d->R);
            bs = cl_buf(nt * 4, NULL);
            cl_args(ck[K_REDUCE], 2, (size_t[]){sizeof br, sizeof bs}, (const void *[]){&br, &bs});
        }
        run_pair(&p, &ra->ms[K_REDUCE], &rc->ms[K_REDUCE]);
        ra->ok[K_REDUCE] = !memcmp(sums, d->R_ref, nt * 4);
        if (have_cl) {
            CLCHECK(cl.clEnqueueReadBuffer(cl.q, bs, CL_TRUE, 0, nt * 4, sc, 0, NULL, NULL));
            rc->ok[K_REDUCE] = !memcmp(sc, d->R_ref, nt * 4);
            cl.clReleaseMemObject(br);
            cl.clReleaseMemObject(bs);
        }
        CHECK(amp_array_view_destroy(vr));
        CHECK(amp_array_view_destroy(vs));
        free(sums);
        free(sc);
    }
    if (have_cl) {
        for (int i = 0; i < K_COUNT; ++i) cl.clReleaseKernel(ck[i]);
        cl.clReleaseProgram(cp);
        rc->have = true;
    }
    CHECK(amp_program_destroy(prog));
    ra->have = true;
}

/* ---------------------------------------------------------- build times */

/* Build times are measured in fresh processes (this program re-run with
 * --build-only), so nothing is warm in memory: "cold" with empty cache
 * directories (hipamp's AMP_CACHE_DIR, PoCL's POCL_CACHE_DIR), "cached" a
 * second time with the same directories. */
static double build_in_child(const char *self, const char *what, const char *cache_dir)
{
    int fds[2];
    if (pipe(fds) != 0) return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        dup2(fds[1], 1);
        setenv("AMP_CACHE_DIR", cache_dir, 1);
        setenv("POCL_CACHE_DIR", cache_dir, 1);
        execl(self, self, "--build-only", what, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    char buf[64] = "";
    ssize_t n = read(fds[0], buf, sizeof buf - 1);
    close(fds[0]);
    int ws = 0;
    waitpid(pid, &ws, 0);
    if (n <= 0 || !WIFEXITED(ws) || WEXITSTATUS(ws) != 0) return -1;
    buf[n] = 0;
    return atof(buf);
}

static int build_only(const char *what)
{
    double ms = -1;
    if (!strcmp(what, "hipamp")) {
        amp_accelerator *acc = NULL;
        CHECK(amp_accelerator_find("cpu", &acc));
        result r;
        amp_program *p = NULL;
        double t0 = wl_now();
        CHECK(amp_program_build(acc, bench_cpu_kernels_source, NULL, &p));
        amp_kernel *k;
        for (int i = 0; i < K_COUNT; ++i) CHECK(amp_program_get_kernel(p, knames[i], &k));
        ms = (wl_now() - t0) * 1e3;
        (void)r;
    } else {
        char why[256];
        if (!cl_open(why, sizeof why)) return 1;
        cl_kernel k[K_COUNT];
        /* PoCL compiles a kernel for its local size at the first launch:
         * count one launch of each, on tiny inputs. */
        double t0 = wl_now();
        cl_program p = cl_build(&ms, k);
        cl_mem b = cl_buf(1 << 16, NULL);
        int one = 16;
        float a = 1.0f;
        for (int i = 0; i < K_COUNT; ++i) {
            int nargs = i == K_SAXPY ? 3 : i == K_REDUCE ? 2 : i == K_TRANSPOSE ? 3 : 4;
            for (int j = 0; j < nargs; ++j) {
                if (i == K_SAXPY && j == 0) CLCHECK(cl.clSetKernelArg(k[i], 0, sizeof a, &a));
                else if (j == nargs - 1 && i != K_SAXPY && i != K_REDUCE) CLCHECK(cl.clSetKernelArg(k[i], (cl_uint)j, sizeof one, &one));
                else CLCHECK(cl.clSetKernelArg(k[i], (cl_uint)j, sizeof b, &b));
            }
            size_t g[2] = {i == K_REDUCE ? 256u : 16u, 16}, l[2] = {i == K_REDUCE ? 256u : 16u, 16};
            bool tiled = i == K_MM_TILED || i == K_TRANSPOSE || i == K_REDUCE;
            CLCHECK(cl.clEnqueueNDRangeKernel(cl.q, k[i], i == K_SAXPY || i == K_REDUCE ? 1 : 2, NULL, g,
                                              tiled ? l : NULL, 0, NULL, NULL));
        }
        CLCHECK(cl.clFinish(cl.q));
        ms = (wl_now() - t0) * 1e3;
        cl.clReleaseMemObject(b);
        for (int i = 0; i < K_COUNT; ++i) cl.clReleaseKernel(k[i]);
        cl.clReleaseProgram(p);
    }
    printf("%.3f\n", ms);
    return 0;
}

/* ------------------------------------------------------ the fiber path */

/* Child mode: the tiled kernels with AMP_CPU_TILED=fibers; prints their
 * times on one line, or fails when a result is wrong. */
static int fibers_only(bool quick)
{
    setenv("AMP_CPU_TILED", "fibers", 1);
    amp_accelerator *acc = NULL;
    CHECK(amp_accelerator_find("cpu", &acc));
    data d;
    make_data(&d, quick);
    result rs = {0}, ra = {0}, rc = {0};
    serial_matmul(&d, d.C_ref);
    serial_transpose(&d, d.T_ref);
    tree_sums(&d, d.R_ref);
    (void)rs;
    run_all(&d, acc, false, true, &ra, &rc);
    if (!ra.ok[K_MM_TILED] || !ra.ok[K_TRANSPOSE] || !ra.ok[K_REDUCE]) return 1;
    printf("%.4f %.4f %.4f\n", ra.ms[K_MM_TILED], ra.ms[K_TRANSPOSE], ra.ms[K_REDUCE]);
    return 0;
}

static bool fibers_in_child(const char *self, bool quick, double *ms)
{
    int fds[2];
    if (pipe(fds) != 0) return false;
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        dup2(fds[1], 1);
        execl(self, self, "--fibers-only", quick ? "--quick" : "", (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    char buf[256] = "";
    size_t n = 0;
    ssize_t r;
    while (n < sizeof buf - 1 && (r = read(fds[0], buf + n, sizeof buf - 1 - n)) > 0) n += (size_t)r;
    close(fds[0]);
    buf[n] = 0;
    int ws = 0;
    waitpid(pid, &ws, 0);
    return WIFEXITED(ws) && WEXITSTATUS(ws) == 0 &&
           sscanf(buf, "%lf %lf %lf", &ms[K_MM_TILED], &ms[K_TRANSPOSE], &ms[K_REDUCE]) == 3;
}

/* --------------------------------------------------------------- report */

/* Launch overhead with the trace hooks in but off, built without them, and
 * with AMP_TRACE on: bench_trace (beside this program) loads the three
 * libraries side by side; its summary lines go into the report. */
static void trace_hooks(const char *self, FILE *o)
{
    char path[4200], cmd[4300];
    snprintf(path, sizeof path, "%s", self);
    char *slash = strrchr(path, '/');
    if (!slash) return;
    snprintf(slash + 1, sizeof path - (size_t)(slash + 1 - path), "bench_trace");
    fprintf(o, "\nTrace hooks (bench_trace on the CPU accelerator: launch overhead with the hooks in but off, "
               "compiled out, and tracing on):\n\n```\n");
    if (access(path, X_OK) != 0) {
        fprintf(o, "bench_trace was not built beside bench_cpu\n```\n");
        return;
    }
    snprintf(cmd, sizeof cmd, "'%s' --accelerator cpu 2>&1", path);
    FILE *f = popen(cmd, "r");
    if (!f) return;
    char line[1024];
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "row\t", 4) && strncmp(line, "diff\t", 5)) fputs(line, o);
    if (pclose(f) != 0) {
        failures++;
        fprintf(o, "bench_trace FAILED\n");
    }
    fprintf(o, "```\n");
}

/* Launch graphs (issue 24): the chain of 1000 dependent launches and the
 * CG iteration on 256 x 256, direct and replayed from a graph
 * (graph_work.c; bench_gpu reports the same figures), each beside the
 * issue's goal. */
static void graph_section(amp_accelerator *acc, bool quick, FILE *o)
{
    gw_figures g;
    amp_status st = gw_measure(acc, quick, &g);
    fprintf(o, "\nLaunch graphs (bench/graph_work.c: recorded once with amp_graph_begin_recording, replayed "
               "with amp_graph_launch; median of %d batches, the view waited for around each):\n\n",
            g.reps);
    if (st != AMP_OK) {
        failures++;
        fprintf(o, "FAILED: %s: %s\n", amp_status_name(st), amp_last_error());
        return;
    }
    if (!g.chain_same || !g.cg_same || !g.solver_same) failures++;
    double speedup = g.cg_graph_us > 0 ? g.cg_direct_us / g.cg_graph_us : 0;
    double solver = g.solver_graph_us > 0 ? g.solver_direct_us / g.solver_graph_us : 0;
    fprintf(o, "| figure | direct | graph | goal | result | check |\n|---|---:|---:|---|---|---|\n");
    fprintf(o, "| chain of %d dependent launches, 3 views of 4096 floats: us a launch | %.2f | %.2f | graph <= 1.0 "
               "us a launch | %s | %s |\n",
            g.chain_launches, g.chain_direct_us, g.chain_graph_us, g.chain_graph_us <= 1.0 ? "met" : "**missed**",
            g.chain_same ? "bit-identical" : "DIFFERENT");
    fprintf(o, "| CG iteration on %d x %d (7 launches), %d iterations: us an iteration | %.1f | %.1f | graph >= 1.3x "
               "faster | %.2fx, %s | %s |\n",
            g.cg_n, g.cg_n, g.cg_iters, g.cg_direct_us, g.cg_graph_us, speedup, speedup >= 1.3 ? "met" : "**missed**",
            g.cg_same ? "bit-identical" : "DIFFERENT");
    fprintf(o, "| examples/cg's iteration on %d x %d (doubles, dot products by amp_transform_reduce_async), "
               "batches of %d: us an iteration | %.1f | %.1f | graph >= 1.3x faster | %.2fx, %s | %s |\n",
            g.cg_n, g.cg_n, g.solver_iters, g.solver_direct_us, g.solver_graph_us, solver,
            solver >= 1.3 ? "met" : "**missed**", g.solver_same ? "bit-identical" : "DIFFERENT");
    fprintf(o, "\n(r.r after %d iterations: %g.)\n", g.cg_iters, (double)g.cg_rho);
}

int main(int argc, char **argv)
{
    /* Before anything touches the library: the child starts cold. */
    if (argc >= 2 && !strcmp(argv[1], FC_CHILD_OPTION)) return fc_child_main(argc - 2, argv + 2, NULL);
    const char *report = NULL;
    bool quick = false, algorithms_only = false, stream_only = false, transpose_only = false,
         first_call_only = false;
    long long stream_n = 0;
    int stream_times = 0;
    int stream_precisions = BENCH_STREAM_DOUBLE | BENCH_STREAM_FLOAT;
    /* The last of --arraysize, --numtimes and --precision given: they set
     * the stream section alone, so a mode without it refuses them rather
     * than run as if they had not been given. */
    const char *stream_option = NULL;
    /* Issue 40's goals on the CPU accelerator. */
    fc_config fcc = {.accelerator = "cpu", .alg_goal_ms = 50, .build_goal_ms = 300,
                     .build_goal_where = "the CPU accelerator"};
    for (int i = 1; i < argc; ++i) {
        int fo;
        if (!strcmp(argv[i], "--build-only") && i + 1 < argc) return build_only(argv[i + 1]);
        if (!strcmp(argv[i], "--fibers-only")) return fibers_only(i + 1 < argc && !strcmp(argv[i + 1], "--quick"));
        if (!strcmp(argv[i], "--graph-only")) {
            amp_accelerator *ga = NULL;
            CHECK(amp_accelerator_find("cpu", &ga));
            graph_section(ga, i + 1 < argc && !strcmp(argv[i + 1], "--quick"), stdout);
            return failures ? 1 : 0;
        }
        if (!strcmp(argv[i], "--report") && i + 1 < argc) report = argv[++i];
        else if (!strcmp(argv[i], "--quick")) quick = true;
        else if (!strcmp(argv[i], "--algorithms-only")) algorithms_only = true;
        else if (!strcmp(argv[i], "--stream-only")) stream_only = true;
        else if (!strcmp(argv[i], "--precision") && i + 1 < argc) {
            /* BabelStream runs one precision a process (its --float) */
            stream_option = argv[i];
            ++i;
            if (!strcmp(argv[i], "double")) stream_precisions = BENCH_STREAM_DOUBLE;
            else if (!strcmp(argv[i], "float")) stream_precisions = BENCH_STREAM_FLOAT;
            else if (!strcmp(argv[i], "both")) stream_precisions = BENCH_STREAM_DOUBLE | BENCH_STREAM_FLOAT;
            else {
                fprintf(stderr, "bench_cpu: --precision '%s': need double, float or both\n", argv[i]);
                return 2;
            }
        }
        else if (!strcmp(argv[i], "--transpose-only")) transpose_only = true;
        else if (!strcmp(argv[i], "--first-call-only")) first_call_only = true;
        else if ((fo = fc_option(argv[i], &fcc)) != 0) {
            if (fo < 0) return 2;
        } else if ((!strcmp(argv[i], "--arraysize") || !strcmp(argv[i], "--numtimes")) && i + 1 < argc) {
            char *end = NULL;
            long long v = strtoll(argv[i + 1], &end, 10);
            bool size = !strcmp(argv[i], "--arraysize");
            if (!*argv[i + 1] || *end || v < (size ? 1 : 2) || v > INT_MAX) {
                fprintf(stderr, "bench_cpu: %s '%s': need a whole number from %d to %d\n", argv[i], argv[i + 1],
                        size ? 1 : 2, INT_MAX);
                return 2;
            }
            if (size) stream_n = v;
            else stream_times = (int)v;
            stream_option = argv[i];
            ++i;
        } else {
            fprintf(stderr, "usage: bench_cpu [--quick] [--report FILE.md] [--algorithms-only] | --graph-only [--quick] |\n"
                            "       --stream-only [--quick] [--arraysize N] [--numtimes K] [--precision double|float|both] |\n"
                            "       --transpose-only [--quick] |\n"
                            "       --first-call-only [--first-call-rows=LIST] [--first-call-timeout=S] [--first-call-no-jit]\n"
                            "  --transpose-only: the tiled transposes against a blocked OpenMP loop at 4096^2 and\n"
                            "  8192^2 (1 GiB of arrays, beyond a large last-level cache); --quick 1024^2.\n"
                            "  --first-call-only: the time-to-first-result table (each built-in algorithm's first call\n"
                            "  with empty caches, prebuilt and with AMP_PREBUILT=0, and cold builds of the seed's\n"
                            "  transpose kernel and of transpose.hip, against a warm call; one fresh process each).\n"
                            "  Not part of the full run: its JIT column compiles every algorithm program (minutes).\n%s",
                    fc_usage);
            return 2;
        }
    }
    if (stream_option && (algorithms_only || transpose_only || first_call_only)) {
        fprintf(stderr, "bench_cpu: %s sets the stream section, which %s does not run\n", stream_option,
                algorithms_only  ? "--algorithms-only"
                : transpose_only ? "--transpose-only"
                                 : "--first-call-only");
        return 2;
    }
    /* The stream section's size: 2^25 elements (BabelStream's), 20
     * iterations (BabelStream runs 100; 20 keeps the section near a minute
     * on 2 cores, 16 s of it the pauses between the sides); --quick 2^22
     * and 10. */
    if (stream_n <= 0) stream_n = quick ? 1LL << 22 : 1LL << 25;
    if (stream_times <= 0) stream_times = quick ? 10 : 20;
    if (stream_only) {
        amp_accelerator *cpu_acc = NULL;
        CHECK(amp_accelerator_find("cpu", &cpu_acc));
        int bad = bench_cpu_stream(stdout, cpu_acc, stream_n, stream_times, stream_precisions);
        return bad == 0 ? 0 : 1;
    }
    /* The transpose section: 4096^2 floats (bench_cpu's transpose row's
     * size) and 8192^2 (arrays beyond a large last-level cache), 12 runs
     * a side (3 blocks of 4); --quick 1024^2 and 8. */
    const int transpose_sizes[] = {4096, 8192}, quick_transpose_sizes[] = {1024};
    const int *transpose_sizes_used = quick ? quick_transpose_sizes : transpose_sizes;
    const int transpose_nsizes = quick ? 1 : 2, transpose_runs = quick ? 8 : 12;
    if (transpose_only) {
        amp_accelerator *cpu_acc = NULL;
        CHECK(amp_accelerator_find("cpu", &cpu_acc));
        int bad = bench_cpu_transpose(stdout, cpu_acc, transpose_sizes_used, transpose_nsizes, transpose_runs);
        return bad == 0 ? 0 : 1;
    }
    if (first_call_only) {
        int bad = fc_report(stdout, &fcc, NULL);
        return bad == 0 ? 0 : 1;
    }
    if (algorithms_only) {
        amp_accelerator *cpu_acc = NULL;
        CHECK(amp_accelerator_find("cpu", &cpu_acc));
        int bad = bench_cpu_algorithms(stdout, cpu_acc, quick);
        return bad == 0 ? 0 : 1;
    }
    amp_accelerator *acc = NULL;
    CHECK(amp_accelerator_find("cpu", &acc));
    amp_accelerator_info info;
    CHECK(amp_accelerator_get_info(acc, &info));
    if (!info.is_available) {
        fprintf(stderr, "bench_cpu: CPU accelerator unavailable: %s\n", info.unavailable_reason);
        return 1;
    }
    struct utsname u;
    uname(&u);
    char cpu[256] = "unknown";
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[512];
        while (fgets(line, sizeof line, f))
            if (!strncmp(line, "model name", 10)) {
                char *c = strchr(line, ':');
                snprintf(cpu, sizeof cpu, "%s", c ? c + 2 : line);
                cpu[strcspn(cpu, "\n")] = 0;
                break;
            }
        fclose(f);
    }
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    printf("hipamp %s, CPU accelerator: %s; %s, %ld CPUs\n", amp_version(), info.description, cpu, ncpu);

    /* Build times first, in fresh processes with fresh cache directories. */
    char self[4096];
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    if (sl <= 0) snprintf(self, sizeof self, "%s", argv[0]);
    else self[sl] = 0;
    char why[256] = "";
    bool have_cl = cl_open(why, sizeof why);
    double b_amp_cold = -1, b_amp_warm = -1, b_cl_cold = -1, b_cl_warm = -1;
    {
        char tmpl[] = "/tmp/bench_cpu_cache_XXXXXX";
        char *dir = mkdtemp(tmpl);
        if (dir) {
            char a[4200], p[4200];
            snprintf(a, sizeof a, "%s/amp", dir);
            snprintf(p, sizeof p, "%s/pocl", dir);
            mkdir(a, 0700);
            mkdir(p, 0700);
            b_amp_cold = build_in_child(self, "hipamp", a);
            b_amp_warm = build_in_child(self, "hipamp", a);
            if (have_cl) {
                b_cl_cold = build_in_child(self, "pocl", p);
                b_cl_warm = build_in_child(self, "pocl", p);
            }
            char cmd[4300];
            snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
            if (system(cmd) != 0) fprintf(stderr, "bench_cpu: could not remove %s\n", dir);
        }
    }

    data d;
    make_data(&d, quick);
    result rs = {0}, ra = {0}, rc = {0};
    printf("serial references...\n");
    run_serial(&d, &rs);
    printf("hipamp%s%s, interleaved...\n", have_cl ? " and PoCL on " : "", have_cl ? cl.name : "");
    run_all(&d, acc, have_cl, false, &ra, &rc);
    /* The same tiled kernels on fibers (AMP_CPU_TILED=fibers), the path
     * every tiled kernel took before loop versions: in a child process,
     * since the setting is read once per process. */
    double fib[K_COUNT] = {-1, -1, -1, -1, -1};
    bool fib_ok = fibers_in_child(self, quick, fib);
    printf("launch graphs...\n");
    char *gmd = NULL;
    size_t gmdn = 0;
    FILE *go = open_memstream(&gmd, &gmdn);
    if (!go) return 1;
    graph_section(acc, quick, go);
    fclose(go);

    /* The table. */
    char *md = NULL;
    size_t mdn = 0;
    FILE *o = open_memstream(&md, &mdn);
    if (!o) return 1;
    time_t now = time(NULL);
    char date[32];
    strftime(date, sizeof date, "%Y-%m-%d", localtime(&now));
    fprintf(o, "# hipamp CPU benchmark — %s, %s\n\n", u.nodename, date);
    fprintf(o, "hipamp %s, CPU accelerator \"%s\" (%s); %s, %ld CPUs; %s.\n\n", amp_version(), info.description,
            info.arch, cpu, ncpu, quick ? "quick sizes" : "full sizes");
    if (have_cl) fprintf(o, "PoCL: %s, device \"%s\".\n\n", cl.version, cl.name);
    else fprintf(o, "PoCL: absent (%s).\n\n", why);
    fprintf(o, "Kernel time after %d warm-up runs, median of %d, the two sides' runs interleaved (hipamp: "
               "launch + synchronize; OpenCL: enqueue + clFinish), the same kernels and local sizes on both "
               "(bench/bench_cpu.c; PoCL picks the local size of the two simple kernels, hipamp has none); "
               "serial: plain C at -O3 on one thread (matmul i-k-j, timed once); hipamp on fibers: the tiled "
               "kernels again with AMP_CPU_TILED=fibers (one fiber per work-item, switching at barriers, "
               "the path before loop versions), measured in a separate process after the rest. Every "
               "result is checked against the serial reference (transpose and reduction bit for bit).\n\n",
            WARMUP, RUNS);
    fprintf(o, "| kernel | serial -O3 | hipamp CPU | PoCL | hipamp / PoCL | hipamp on fibers | check |\n"
               "|---|---:|---:|---:|---:|---:|---|\n");
    for (int k = 0; k < K_COUNT; ++k) {
        char s1[32], s2[32], s3[32], s4[32], ratio[32] = "—";
        fc_fmt_ms(s4, sizeof s4, fib_ok ? fib[k] : -1);
        fc_fmt_ms(s1, sizeof s1, rs.ms[k]);
        fc_fmt_ms(s2, sizeof s2, ra.ms[k]);
        fc_fmt_ms(s3, sizeof s3, rc.have ? rc.ms[k] : -1);
        if (rc.have && rc.ms[k] > 0) snprintf(ratio, sizeof ratio, "**%.2f**", ra.ms[k] / rc.ms[k]);
        bool ok = ra.ok[k] && (!rc.have || rc.ok[k]);
        if (!ra.ok[k]) failures++;
        char label[128];
        klabel(k, &d, label, sizeof label);
        fprintf(o, "| %s | %s | %s | %s | %s | %s | %s |\n", label, s1, s2, s3, ratio, s4,
                ok ? "passed" : (!ra.ok[k] ? "hipamp WRONG" : "PoCL WRONG"));
    }
    char c1[32], c2[32], c3[32], c4[32];
    fc_fmt_ms(c1, sizeof c1, b_amp_cold);
    fc_fmt_ms(c2, sizeof c2, b_amp_warm);
    fc_fmt_ms(c3, sizeof c3, b_cl_cold);
    fc_fmt_ms(c4, sizeof c4, b_cl_warm);
    fprintf(o, "\nBuild of the five kernels in a fresh process (hipamp: amp_program_build + get_kernel; "
               "PoCL: clBuildProgram + clCreateKernel + one launch each, since PoCL compiles a kernel for its "
               "local size at the first launch):\n\n"
               "| build | hipamp | PoCL |\n|---|---:|---:|\n| cold (empty caches) | %s | %s |\n"
               "| from the disk cache | %s | %s |\n",
            c1, c3, c2, c4);
    fputs(gmd, o);
    free(gmd);
    trace_hooks(self, o);
    int alg_bad = bench_cpu_algorithms(o, acc, quick);
    if (alg_bad) failures += alg_bad < 0 ? 1 : alg_bad;
    printf("stream...\n");
    int stream_bad = bench_cpu_stream(o, acc, stream_n, stream_times, stream_precisions);
    if (stream_bad) failures += stream_bad < 0 ? 1 : stream_bad;
    printf("transpose...\n");
    int transpose_bad = bench_cpu_transpose(o, acc, transpose_sizes_used, transpose_nsizes, transpose_runs);
    if (transpose_bad) failures += transpose_bad < 0 ? 1 : transpose_bad;
    fclose(o);
    fputs(md, stdout);
    if (report) {
        FILE *rf = fopen(report, "w");
        if (!rf || fputs(md, rf) == EOF || fclose(rf) != 0) {
            fprintf(stderr, "bench_cpu: cannot write %s: %s\n", report, strerror(errno));
            free(md);
            return 1;
        }
        printf("report written to %s\n", report);
    }
    free(md);
    if (failures) printf("%d hipamp result check(s) FAILED\n", failures);
    return failures ? 1 : 0;
}
