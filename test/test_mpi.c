/* test_mpi.c — hipamp::mpi where MPI is found: path names and choice, GPU-aware detection and its override, node-local rank and accelerator selection, halo exchanges with this process as its own neighbour (MPI_COMM_SELF: host views in place, arrays staged or by pointer, strided sections, periodic rows, every error path), heat_mpi under mpiexec with 1, 2 and 3 ranks against a serial reference, and cg_mpi (the distributed CG) on 1, 2 and 3 ranks against one rank and its serial reference; the nccl path (a stand-in libnccl over MPI on the CPU accelerator: exchanges, all-reduces, the fall-back when a rank cannot start NCCL, ranks that mix paths; the real library on a GPU, one rank), the staged pipeline and chunked faces. Without MPI every test skips, saying why. */
#include "support.h"

#ifndef HIPAMP_HAVE_MPI

Test(mpi, component_not_built)
{
    cr_skip_test("MPI was not found when configuring (Debian: openmpi-bin libopenmpi-dev): hipamp::mpi and heat_mpi "
                 "are not built");
}

#else

#include <hipamp_mpi.h>

#include "heat_grid.h"
#include "stderr_capture.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dlfcn.h>
#include <errno.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern const char test_kernels_mpi[];

/* ------------------------------------------------------------ helpers */

/* Open MPI refuses to start as root (CI) unless told. Everything here
 * runs on one node: shared memory only, no probing for network fabrics,
 * and no single-copy mechanism that containers forbid (ptrace). Ranks
 * waiting in MPI yield the processor: CI's 2 cores run another test beside
 * these ranks (test_mpi 7% faster there, measured against spinning). The
 * caller's own settings win. MPICH ignores these. */
static void mpi_env(void)
{
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
    setenv("OMPI_MCA_pml", "ob1", 0);
    setenv("OMPI_MCA_btl", "self,vader", 0);
    setenv("OMPI_MCA_osc", "^ucx", 0);
    setenv("OMPI_MCA_btl_vader_single_copy_mechanism", "none", 0);
    setenv("OMPI_MCA_mpi_yield_when_idle", "1", 0);
}

/* LeakSanitizer builds (HIPAMP_SANITIZE): what MPI_Init allocates and
 * drops is the MPI library's, not ours, and is not reported; the leak check
 * runs before MPI_Finalize, while the library's own allocations are still
 * reachable. (MPI libraries free little at finalize and unload their
 * plugins, so what they keep would be reported at exit with no library to
 * suppress it by; after this check no other runs: test_leak_check_final.)
 * No-ops in other builds. */
extern void __lsan_disable(void) __attribute__((weak));
extern void __lsan_enable(void) __attribute__((weak));
static void leak_check_before_finalize(void)
{
    test_leak_check_final();
}

static void mpi_up(void)
{
    mpi_env();
    if (__lsan_disable) __lsan_disable();
    int rc = MPI_Init(NULL, NULL);
    if (__lsan_enable) __lsan_enable();
    cr_assert_eq(rc, MPI_SUCCESS, "MPI_Init (singleton) failed");
}

static void mpi_down(void)
{
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (init && !fin) {
        leak_check_before_finalize();
        MPI_Finalize();
    }
}

/* MPI_TAG_UB as an MPI with a small limit gives it (0: the library's own),
 * through MPI's profiling interface: the test program's MPI_Comm_get_attr
 * is the one libhipamp_mpi calls. */
static int fake_tag_ub;
int MPI_Comm_get_attr(MPI_Comm comm, int keyval, void *value, int *flag)
{
    static int small;
    if (keyval != MPI_TAG_UB || !fake_tag_ub) return PMPI_Comm_get_attr(comm, keyval, value, flag);
    small = fake_tag_ub;
    *(int **)value = &small;
    *flag = 1;
    return MPI_SUCCESS;
}

/* MPI_Testall fails once with this error class (0: never), as an MPI whose
 * request failed does. */
static int fake_testall_error;
int MPI_Testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[])
{
    int e = fake_testall_error;
    if (!e) return PMPI_Testall(count, requests, flag, statuses);
    fake_testall_error = 0;
    *flag = 0;
    return e;
}

/* MPI_Irecv fails once with this error class (0: never). */
static int fake_irecv_error;
int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request *request)
{
    int e = fake_irecv_error;
    if (!e) return PMPI_Irecv(buf, count, type, source, tag, comm, request);
    fake_irecv_error = 0;
    return e;
}

/* MPI_Isend fails once with this error class (0: never). The library's
 * other sends (leaving notices at destroy) go through while it is 0. */
static int fake_isend_error;
int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
    int e = fake_isend_error;
    if (!e) return PMPI_Isend(buf, count, type, dest, tag, comm, request);
    fake_isend_error = 0;
    return e;
}

/* MPI_Improbe looking for a message of this tag (-1: none) runs
 * improbe_hook once, and then fails with improbe_error (0: looks). */
static int improbe_tag = -1, improbe_error;
static void (*improbe_hook)(void);
int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status)
{
    if (tag != improbe_tag) return PMPI_Improbe(source, tag, comm, flag, message, status);
    improbe_tag = -1;
    if (improbe_hook) improbe_hook();
    int e = improbe_error;
    improbe_error = 0;
    if (!e) return PMPI_Improbe(source, tag, comm, flag, message, status);
    *flag = 0;
    return e;
}

#define ASSERT_MPI_STATUS(call, want)                                                          \
    do {                                                                                       \
        amp_status st_ = (call);                                                               \
        cr_assert_eq(st_, (want), "%s returned %s, want %s: %s", #call, amp_status_name(st_),  \
                     amp_status_name(want), amp_mpi_last_error());                             \
    } while (0)
#define ASSERT_MPI_OK(call) ASSERT_MPI_STATUS(call, AMP_OK)

#define R 6
#define C 40

static float cell(int r, int c, float base) { return base + (float)(r * 1024 + c); }

static amp_accelerator_view *default_view(amp_accelerator *acc)
{
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_default_view(acc, &q));
    return q;
}

static amp_accelerator_info info_of(amp_accelerator *acc)
{
    amp_accelerator_info info;
    ASSERT_OK(amp_accelerator_get_info(acc, &info));
    return info;
}

static amp_mpi_exchange *self_exchange(amp_accelerator_view *q, size_t elem, amp_mpi_path path)
{
    amp_mpi_exchange *x = NULL;
    ASSERT_MPI_OK(amp_mpi_exchange_create(MPI_COMM_SELF, q, elem, path, &x));
    cr_assert_not_null(x);
    amp_mpi_path_info p;
    ASSERT_MPI_OK(amp_mpi_exchange_get_path(x, &p));
    if (path != AMP_MPI_PATH_AUTO) cr_assert_eq(p.path, path, "asked for %s, got %s", amp_mpi_path_name(path),
                                                amp_mpi_path_name(p.path));
    return x;
}

static uint64_t copied_bytes(amp_accelerator_view *q)
{
    amp_stats s;
    ASSERT_OK(amp_accelerator_view_get_stats(q, &s));
    return s.bytes_to_device + s.bytes_to_host + s.bytes_device_to_device + s.bytes_host_to_host;
}

/* v(r, c) = cell(r, c, base), written by a kernel on q (so on a GPU the
 * data is newer on the device than on the host). */
static void device_fill(amp_accelerator *acc, amp_accelerator_view *q, amp_array_view *v, float base)
{
    amp_program *p = test_build(acc, test_kernels_mpi);
    amp_kernel *k = test_kernel(p, "mpi_fill");
    amp_extent e;
    ASSERT_OK(amp_array_view_get_extent(v, &e));
    amp_arg args[] = {amp_arg_view(v), amp_arg_float32(base)};
    ASSERT_OK(amp_parallel_for_each(q, e, k, args, 2));
    ASSERT_OK(amp_program_destroy(p));
}

static amp_array_view *section(amp_array_view *v, int r0, int c0, int nr, int nc)
{
    amp_array_view *s = NULL;
    ASSERT_OK(amp_array_view_section(v, amp_index_2d(r0, c0), amp_extent_2d(nr, nc), &s));
    return s;
}

/* grid[r][c] must be cell(r, c, base) except where (r, c) lies in the
 * destination box, which must hold the source box's cells. */
static void check_moved(const float *grid, float base, int dr, int dc, int sr, int sc, int nr, int nc,
                        const char *what)
{
    for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c) {
            bool in = r >= dr && r < dr + nr && c >= dc && c < dc + nc;
            float want = in ? cell(r - dr + sr, c - dc + sc, base) : cell(r, c, base);
            cr_assert(grid[r * C + c] == want, "%s: cell (%d, %d) is %.9g, want %.9g", what, r, c,
                      (double)grid[r * C + c], (double)want);
        }
}

/* An array on q holding poison, and a view of it. */
static amp_array *poisoned_array(amp_accelerator_view *q, amp_array_view **v)
{
    float init[R * C];
    for (int i = 0; i < R * C; ++i) init[i] = POISON_F32;
    amp_array *a = NULL;
    ASSERT_OK(amp_array_create(q, sizeof(float), amp_extent_2d(R, C), init, &a));
    ASSERT_OK(amp_array_view_of_array(a, v));
    return a;
}

/* ------------------------------------------------------- before MPI_Init */

Test(mpi, calls_before_init_fail_cleanly)
{
    int lr = 7, ls = 7;
    ASSERT_MPI_STATUS(amp_mpi_local_rank(MPI_COMM_WORLD, &lr, &ls), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_mpi_last_error(), "not initialized"), "message: %s", amp_mpi_last_error());
    cr_assert_eq(lr, 0);
    cr_assert_eq(ls, 0);
    amp_accelerator *a = (amp_accelerator *)(void *)&lr;
    ASSERT_MPI_STATUS(amp_mpi_select_accelerator(MPI_COMM_WORLD, &a), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert_null(a);
    amp_mpi_gpu_support g;
    memset(&g, 0x5a, sizeof g);
    ASSERT_MPI_STATUS(amp_mpi_query_gpu_support(&g), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(!g.cuda && !g.rocm && !g.forced && !g.library[0], "out not cleared");
    amp_mpi_exchange *x = (amp_mpi_exchange *)(void *)&lr;
    ASSERT_MPI_STATUS(amp_mpi_exchange_create(MPI_COMM_WORLD, NULL, 4, AMP_MPI_PATH_AUTO, &x),
                      AMP_ERROR_INVALID_ARGUMENT);
    cr_assert_null(x);
    /* The component's message is its own: hipamp's stays as it was. */
    cr_assert_str_empty(amp_last_error());
}

/* ------------------------------------------------------------ path names */

Test(mpi, path_names_round_trip)
{
    const amp_mpi_path all[] = {AMP_MPI_PATH_AUTO, AMP_MPI_PATH_HOST, AMP_MPI_PATH_DEVICE, AMP_MPI_PATH_STAGED,
                                AMP_MPI_PATH_NCCL};
    const char *names[] = {"auto", "host", "device", "staged", "nccl"};
    for (int i = 0; i < 5; ++i) {
        cr_assert_str_eq(amp_mpi_path_name(all[i]), names[i]);
        amp_mpi_path p = (amp_mpi_path)99;
        ASSERT_MPI_OK(amp_mpi_path_parse(names[i], &p));
        cr_assert_eq(p, all[i]);
    }
    cr_assert_str_eq(amp_mpi_path_name((amp_mpi_path)42), "unknown");
    amp_mpi_path p = AMP_MPI_PATH_STAGED;
    ASSERT_MPI_STATUS(amp_mpi_path_parse("Staged", &p), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_mpi_last_error(), "\"Staged\""), "message: %s", amp_mpi_last_error());
    cr_assert_eq(p, AMP_MPI_PATH_AUTO, "out not reset on failure");
    ASSERT_MPI_STATUS(amp_mpi_path_parse(NULL, &p), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_MPI_STATUS(amp_mpi_path_parse("host", NULL), AMP_ERROR_INVALID_ARGUMENT);
}

/* ------------------------------------------------- rank -> accelerator */

Test(mpi, local_rank_of_self_and_world, .init = mpi_up, .fini = mpi_down)
{
    int lr = -1, ls = -1;
    ASSERT_MPI_OK(amp_mpi_local_rank(MPI_COMM_SELF, &lr, &ls));
    cr_assert_eq(lr, 0);
    cr_assert_eq(ls, 1);
    int wr = -1, ws = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &wr);
    MPI_Comm_size(MPI_COMM_WORLD, &ws);
    ASSERT_MPI_OK(amp_mpi_local_rank(MPI_COMM_WORLD, &lr, &ls));
    cr_assert_eq(lr, wr, "a singleton's local rank is its rank (%d), got %d", wr, lr);
    cr_assert_eq(ls, ws);
    ASSERT_MPI_STATUS(amp_mpi_local_rank(MPI_COMM_NULL, &lr, &ls), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_mpi_last_error(), "MPI_COMM_NULL"), "message: %s", amp_mpi_last_error());
    ASSERT_MPI_STATUS(amp_mpi_local_rank(MPI_COMM_SELF, NULL, &ls), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_MPI_STATUS(amp_mpi_local_rank(MPI_COMM_SELF, &lr, NULL), AMP_ERROR_INVALID_ARGUMENT);
}

Test(mpi, select_accelerator_by_local_rank, .init = mpi_up, .fini = mpi_down)
{
    unsetenv("AMP_DEFAULT_ACCELERATOR");
    amp_accelerator *got = NULL, *want = NULL;
    ASSERT_MPI_OK(amp_mpi_select_accelerator(MPI_COMM_SELF, &got));
    ASSERT_OK(amp_accelerator_select_local(0, &want));
    cr_assert_eq(got, want, "local rank 0 of MPI_COMM_SELF must pick what amp_accelerator_select_local(0) picks");
    ASSERT_MPI_STATUS(amp_mpi_select_accelerator(MPI_COMM_SELF, NULL), AMP_ERROR_INVALID_ARGUMENT);
}

/* The user's explicit choice wins, for every rank alike (hipamp reads
 * AMP_DEFAULT_ACCELERATOR once per process: one test each). */
Test(mpi, select_accelerator_honours_the_default, .init = mpi_up, .fini = mpi_down)
{
    setenv("AMP_DEFAULT_ACCELERATOR", "cpu", 1);
    amp_accelerator *got = NULL;
    ASSERT_MPI_OK(amp_mpi_select_accelerator(MPI_COMM_SELF, &got));
    cr_assert(info_of(got).is_emulated, "AMP_DEFAULT_ACCELERATOR=cpu gave %s", info_of(got).device_path);
}

Test(mpi, select_accelerator_reports_a_bad_default, .init = mpi_up, .fini = mpi_down)
{
    setenv("AMP_DEFAULT_ACCELERATOR", "cuda:99", 1);
    amp_accelerator *got = (amp_accelerator *)(void *)&got;
    ASSERT_MPI_STATUS(amp_mpi_select_accelerator(MPI_COMM_SELF, &got), AMP_ERROR_NO_ACCELERATOR);
    cr_assert_null(got);
    cr_assert(strstr(amp_mpi_last_error(), "AMP_DEFAULT_ACCELERATOR"), "message: %s", amp_mpi_last_error());
    cr_assert(strstr(amp_mpi_last_error(), "cuda:99"), "message: %s", amp_mpi_last_error());
}

/* ------------------------------------------------------- GPU-aware MPI */

Test(mpi, gpu_support_query_and_override, .init = mpi_up, .fini = mpi_down)
{
    unsetenv("AMP_MPI_GPU_AWARE");
    amp_mpi_gpu_support g;
    ASSERT_MPI_OK(amp_mpi_query_gpu_support(&g));
    cr_assert(!g.forced);
    cr_assert(g.library[0], "the library's version is empty");
    cr_assert(g.reason[0], "no reason given");
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(lib, &len);
    cr_assert(!strncmp(lib, g.library, strlen(g.library)), "library \"%s\" is not MPI's \"%s\"", g.library, lib);
#if defined(OPEN_MPI) && OPEN_MPI && defined(MPIX_CUDA_AWARE_SUPPORT)
    cr_assert_eq(g.cuda, MPIX_Query_cuda_support() != 0, "Open MPI says %d, the component %d",
                 MPIX_Query_cuda_support(), g.cuda);
    cr_assert(strstr(g.reason, "MPIX_Query_cuda_support"), "reason: %s", g.reason);
#endif

    setenv("AMP_MPI_GPU_AWARE", "1", 1);
    ASSERT_MPI_OK(amp_mpi_query_gpu_support(&g));
    cr_assert(g.cuda && g.rocm && g.forced, "AMP_MPI_GPU_AWARE=1 must say both, forced");
    cr_assert(strstr(g.reason, "AMP_MPI_GPU_AWARE"), "reason: %s", g.reason);
    setenv("AMP_MPI_GPU_AWARE", "off", 1);
    ASSERT_MPI_OK(amp_mpi_query_gpu_support(&g));
    cr_assert(!g.cuda && !g.rocm && g.forced);
    setenv("AMP_MPI_GPU_AWARE", "maybe", 1);
    memset(&g, 0x5a, sizeof g);
    ASSERT_MPI_STATUS(amp_mpi_query_gpu_support(&g), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_mpi_last_error(), "\"maybe\""), "message: %s", amp_mpi_last_error());
    cr_assert(!g.cuda && !g.rocm && !g.forced && !g.reason[0], "out not cleared on failure");
    unsetenv("AMP_MPI_GPU_AWARE");
    ASSERT_MPI_STATUS(amp_mpi_query_gpu_support(NULL), AMP_ERROR_INVALID_ARGUMENT);
}

/* ----------------------------------------------------------- path choice */

Test(mpi, choose_path_on_the_cpu_accelerator, .init = mpi_up, .fini = mpi_down)
{
    unsetenv("AMP_MPI_PATH");
    unsetenv("AMP_MPI_GPU_AWARE");
    amp_accelerator *cpu = test_accel(TEST_ACCEL_CPU);
    amp_mpi_path_info p;
    ASSERT_MPI_OK(amp_mpi_choose_path(cpu, AMP_MPI_PATH_AUTO, &p));
    cr_assert_eq(p.path, AMP_MPI_PATH_HOST, "auto on the CPU accelerator: %s", amp_mpi_path_name(p.path));
    cr_assert(strstr(p.reason, "in place"), "reason: %s", p.reason);
    cr_assert(p.gpu.library[0], "the MPI library is not reported");
    ASSERT_MPI_OK(amp_mpi_choose_path(cpu, AMP_MPI_PATH_STAGED, &p));
    cr_assert_eq(p.path, AMP_MPI_PATH_STAGED);
    /* The CPU accelerator's arrays are host memory: any MPI takes them. */
    ASSERT_MPI_OK(amp_mpi_choose_path(cpu, AMP_MPI_PATH_DEVICE, &p));
    cr_assert_eq(p.path, AMP_MPI_PATH_DEVICE);
    cr_assert(strstr(p.reason, "host pointers"), "reason: %s", p.reason);

    setenv("AMP_MPI_PATH", "staged", 1);
    ASSERT_MPI_OK(amp_mpi_choose_path(cpu, AMP_MPI_PATH_AUTO, &p));
    cr_assert_eq(p.path, AMP_MPI_PATH_STAGED);
    cr_assert(strstr(p.reason, "AMP_MPI_PATH"), "reason: %s", p.reason);
    ASSERT_MPI_OK(amp_mpi_choose_path(cpu, AMP_MPI_PATH_HOST, &p));
    cr_assert_eq(p.path, AMP_MPI_PATH_HOST, "an explicit request beats the environment");
    setenv("AMP_MPI_PATH", "sideways", 1);
    memset(&p, 0x5a, sizeof p);
    ASSERT_MPI_STATUS(amp_mpi_choose_path(cpu, AMP_MPI_PATH_AUTO, &p), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_mpi_last_error(), "AMP_MPI_PATH=\"sideways\""), "message: %s", amp_mpi_last_error());
    cr_assert_eq(p.path, AMP_MPI_PATH_AUTO, "out not cleared on failure");
    unsetenv("AMP_MPI_PATH");
    ASSERT_MPI_STATUS(amp_mpi_choose_path(cpu, (amp_mpi_path)42, &p), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_mpi_last_error(), "42"), "message: %s", amp_mpi_last_error());
    ASSERT_MPI_STATUS(amp_mpi_choose_path(cpu, AMP_MPI_PATH_AUTO, NULL), AMP_ERROR_INVALID_ARGUMENT);
}

#ifdef HIPAMP_FAKE_NCCL
/* AMP_MPI_NCCL_LIBRARY names the stand-in NCCL, which hipamp::mpi loads
 * only where no other user could change it (else the test skips). */
static void use_fake_nccl(void)
{
    test_skip_unless_trusted(HIPAMP_FAKE_NCCL, "the stand-in NCCL (test/fake_nccl.c)");
    setenv("AMP_MPI_NCCL_LIBRARY", HIPAMP_FAKE_NCCL, 1);
}
#endif

/* The library's test seam (mpi/errors.c's amp_mpi__fault, resolved where
 * the program defines it): "AT_SECURE" while fake_at_secure is set, so
 * the environment reads as a set-uid program's does. */
static bool fake_at_secure;
int amp_mpi_test_fault(const char *where);
int amp_mpi_test_fault(const char *where) { return fake_at_secure && !strcmp(where, "AT_SECURE"); }

/* A set-uid, set-gid or file-capability program takes nothing from the
 * environment of whoever started it, hipamp::mpi's variables included: the
 * core read its own that way, but the component read AMP_MPI_NCCL_LIBRARY
 * (a library it then loads, into a process with more rights than its
 * invoker), AMP_MPI_PATH and the rest as given. Each is said ignored, and
 * the default is used: the stand-in NCCL is not loaded (the CPU
 * accelerator is refused the NCCL path without a library named), and a
 * malformed AMP_MPI_PATH fails nothing. Then, the same variables read as
 * given again. The seam stands for the kernel's AT_SECURE (test_cache runs
 * the core's rule in a real set-uid program). */
Test(mpi, a_set_uid_program_takes_nothing_from_the_invokers_environment, .init = mpi_up, .fini = mpi_down)
{
#ifndef HIPAMP_FAKE_NCCL
    cr_skip_test("the stand-in NCCL (test/fake_nccl.c) was not built");
#else
    amp_accelerator *cpu = test_accel(TEST_ACCEL_CPU);
    amp_mpi_path_info p;
    use_fake_nccl();
    setenv("AMP_MPI_PATH", "sideways", 1);
    fake_at_secure = true;
    stderr_capture cap;
    stderr_capture_begin(&cap);
    amp_status nccl = amp_mpi_choose_path(cpu, AMP_MPI_PATH_NCCL, &p);
    char nccl_said[1024];
    snprintf(nccl_said, sizeof nccl_said, "%s", amp_mpi_last_error());
    amp_status chosen = amp_mpi_choose_path(cpu, AMP_MPI_PATH_AUTO, &p);
    static char said[4096];
    stderr_capture_end(&cap, said, sizeof said);
    fake_at_secure = false;
    cr_assert_eq(nccl, AMP_ERROR_UNSUPPORTED, "the NCCL path with the invoker's library: %s: %s",
                 amp_status_name(nccl), nccl_said);
    cr_assert(strstr(nccl_said, "NCCL moves device memory"), "message: %s", nccl_said);
    cr_assert_eq(chosen, AMP_OK, "auto with the invoker's AMP_MPI_PATH: %s: %s", amp_status_name(chosen),
                 amp_mpi_last_error());
    cr_assert_eq(p.path, AMP_MPI_PATH_HOST, "auto on the CPU accelerator: %s", amp_mpi_path_name(p.path));
    const char *ignored[] = {"hipamp::mpi: AMP_MPI_NCCL_LIBRARY is ignored: this is a set-uid",
                             "hipamp::mpi: AMP_MPI_PATH is ignored"};
    for (int i = 0; i < 2; ++i) cr_assert(strstr(said, ignored[i]), "no \"%s\" in stderr: %s", ignored[i], said);
    /* As given, now. */
    ASSERT_MPI_STATUS(amp_mpi_choose_path(cpu, AMP_MPI_PATH_AUTO, &p), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_mpi_last_error(), "AMP_MPI_PATH=\"sideways\""), "message: %s", amp_mpi_last_error());
    unsetenv("AMP_MPI_PATH");
    ASSERT_MPI_OK(amp_mpi_choose_path(cpu, AMP_MPI_PATH_NCCL, &p));
    cr_assert(strstr(p.nccl, "NCCL 2.28.3"), "nccl: %s", p.nccl);
    unsetenv("AMP_MPI_NCCL_LIBRARY");
#endif
}

/* The NCCL path is chosen only where a library loads: forced (argument or
 * AMP_MPI_PATH) without one is AMP_ERROR_UNSUPPORTED naming the library
 * and why; with the stand-in (AMP_MPI_NCCL_LIBRARY) the CPU accelerator
 * may be forced onto it, but auto keeps it on the host path. */
Test(mpi, nccl_path_needs_a_library, .init = mpi_up, .fini = mpi_down)
{
    unsetenv("AMP_MPI_PATH");
    unsetenv("AMP_MPI_GPU_AWARE");
    amp_accelerator *cpu = test_accel(TEST_ACCEL_CPU);
    amp_mpi_path_info p;
    unsetenv("AMP_MPI_NCCL_LIBRARY");
    /* Host memory is not NCCL's, unless a library is named on purpose. */
    ASSERT_MPI_STATUS(amp_mpi_choose_path(cpu, AMP_MPI_PATH_NCCL, &p), AMP_ERROR_UNSUPPORTED);
    cr_assert(strstr(amp_mpi_last_error(), "NCCL moves device memory"), "message: %s", amp_mpi_last_error());
    setenv("AMP_MPI_NCCL_LIBRARY", "/nonexistent/libnccl-missing.so.2", 1);
    memset(&p, 0x5a, sizeof p);
    ASSERT_MPI_STATUS(amp_mpi_choose_path(cpu, AMP_MPI_PATH_NCCL, &p), AMP_ERROR_UNSUPPORTED);
    cr_assert(strstr(amp_mpi_last_error(), "no NCCL/RCCL library loads"), "message: %s", amp_mpi_last_error());
    cr_assert(strstr(amp_mpi_last_error(), "AMP_MPI_NCCL_LIBRARY is not loaded") &&
                  strstr(amp_mpi_last_error(), "no file at /nonexistent/libnccl-missing.so.2"),
              "message: %s", amp_mpi_last_error());
    cr_assert_eq(p.path, AMP_MPI_PATH_AUTO, "out not cleared on failure");
    setenv("AMP_MPI_PATH", "nccl", 1);
    ASSERT_MPI_STATUS(amp_mpi_choose_path(cpu, AMP_MPI_PATH_AUTO, &p), AMP_ERROR_UNSUPPORTED);
    cr_assert(strstr(amp_mpi_last_error(), "AMP_MPI_PATH: nccl path"), "message: %s", amp_mpi_last_error());
    amp_mpi_exchange *x = NULL;
    ASSERT_MPI_STATUS(amp_mpi_exchange_create(MPI_COMM_SELF, NULL, 4, AMP_MPI_PATH_NCCL, &x), AMP_ERROR_UNSUPPORTED);
    cr_assert_null(x);
#ifdef HIPAMP_FAKE_NCCL
    use_fake_nccl();
    ASSERT_MPI_OK(amp_mpi_choose_path(cpu, AMP_MPI_PATH_AUTO, &p));
    cr_assert_eq(p.path, AMP_MPI_PATH_NCCL, "AMP_MPI_PATH=nccl: %s", amp_mpi_path_name(p.path));
    cr_assert(strstr(p.nccl, "NCCL 2.28.3"), "nccl: %s", p.nccl);
    cr_assert(strstr(p.reason, "AMP_MPI_PATH"), "reason: %s", p.reason);
    unsetenv("AMP_MPI_PATH");
    ASSERT_MPI_OK(amp_mpi_choose_path(cpu, AMP_MPI_PATH_AUTO, &p));
    cr_assert_eq(p.path, AMP_MPI_PATH_HOST, "auto on the CPU accelerator with NCCL there: %s",
                 amp_mpi_path_name(p.path));
    /* A library named by a path of more than 255 characters (a link to the
     * stand-in in a deep directory of this test's own) is found again by
     * every later call. Before, its name was kept cut short, so each call
     * loaded it once more into a slot of its own, and once the process's
     * four slots were used the NCCL path was refused ("too many NCCL library
     * names tried in this process"). */
    char deep[512], link[600];
    snprintf(deep, sizeof deep, "/tmp/hipamp-nccl-XXXXXX");
    cr_assert_not_null(mkdtemp(deep), "mkdtemp");
    const size_t top = strlen(deep);
    for (int i = 0; i < 5; ++i) {
        strcat(deep, "/a-directory-name-of-fifty-characters-more-or-less");
        cr_assert(mkdir(deep, 0700) == 0 || errno == EEXIST, "mkdir %s", deep);
    }
    snprintf(link, sizeof link, "%s/libnccl-stand-in.so", deep);
    cr_assert_eq(symlink(HIPAMP_FAKE_NCCL, link), 0, "symlink %s", link);
    cr_assert_gt(strlen(link), 255);
    setenv("AMP_MPI_NCCL_LIBRARY", link, 1);
    amp_status st = AMP_OK;
    int call = 0;
    while (st == AMP_OK && call < 6) {
        ++call;
        st = amp_mpi_choose_path(cpu, AMP_MPI_PATH_NCCL, &p);
    }
    const size_t link_len = strlen(link);
    unlink(link);
    for (int i = 0; i < 5; ++i) {
        rmdir(deep);
        deep[strlen(deep) - strlen("/a-directory-name-of-fifty-characters-more-or-less")] = '\0';
    }
    cr_assert_eq(strlen(deep), top);
    rmdir(deep);
    cr_assert_eq(st, AMP_OK, "call %d with a %zu-character library path: %s: %s", call, link_len, amp_status_name(st),
                 amp_mpi_last_error());
#endif
    unsetenv("AMP_MPI_PATH");
    unsetenv("AMP_MPI_NCCL_LIBRARY");
}

/* AMP_MPI_NCCL_LIBRARY names a library loaded into the process: through a
 * directory anyone may write (here a link to the stand-in there) it is
 * refused, naming the directory, and nothing is loaded; a file of ours
 * that is no library is tried and said not to load; the stand-in itself,
 * in the build's directory, loads. */
Test(mpi, an_nccl_library_others_could_change_is_not_loaded, .init = mpi_up, .fini = mpi_down)
{
#ifndef HIPAMP_FAKE_NCCL
    cr_skip_test("the stand-in NCCL (test/fake_nccl.c) was not built");
#else
    test_skip_unless_trusted(HIPAMP_FAKE_NCCL, "the stand-in NCCL (test/fake_nccl.c)");
    unsetenv("AMP_MPI_PATH");
    amp_accelerator *cpu = test_accel(TEST_ACCEL_CPU);
    amp_mpi_path_info p;
    char dir[64], open_dir[96], link[128], text[128];
    snprintf(dir, sizeof dir, "/tmp/hipamp-nccl-XXXXXX");
    cr_assert_not_null(mkdtemp(dir), "mkdtemp");
    snprintf(open_dir, sizeof open_dir, "%s/open", dir);
    cr_assert_eq(mkdir(open_dir, 0700), 0);
    cr_assert_eq(chmod(open_dir, 0777), 0);
    snprintf(link, sizeof link, "%s/libnccl.so.2", open_dir);
    cr_assert_eq(symlink(HIPAMP_FAKE_NCCL, link), 0, "symlink %s", link);
    snprintf(text, sizeof text, "%s/libnccl-text.so.2", dir);
    FILE *f = fopen(text, "w");
    cr_assert_not_null(f);
    fputs("not a library\n", f);
    fclose(f);
    cr_assert_eq(chmod(text, 0644), 0); /* whatever the umask: ours alone to write */
    setenv("AMP_MPI_NCCL_LIBRARY", link, 1);
    amp_status refused = amp_mpi_choose_path(cpu, AMP_MPI_PATH_NCCL, &p);
    char refused_said[2048];
    snprintf(refused_said, sizeof refused_said, "%s", amp_mpi_last_error());
    setenv("AMP_MPI_NCCL_LIBRARY", text, 1);
    amp_status not_a_library = amp_mpi_choose_path(cpu, AMP_MPI_PATH_NCCL, &p);
    char text_said[2048];
    snprintf(text_said, sizeof text_said, "%s", amp_mpi_last_error());
    use_fake_nccl();
    amp_status good = amp_mpi_choose_path(cpu, AMP_MPI_PATH_NCCL, &p);
    unsetenv("AMP_MPI_NCCL_LIBRARY");
    test_remove_tree(dir);
    cr_assert_eq(refused, AMP_ERROR_UNSUPPORTED, "a library through a directory of mode 0777: %s: %s",
                 amp_status_name(refused), refused_said);
    char says[256];
    snprintf(says, sizeof says, "%s is writable by every user (mode 0777)", open_dir);
    cr_assert(strstr(refused_said, "AMP_MPI_NCCL_LIBRARY is not loaded") && strstr(refused_said, says),
              "message does not say '%s': %s", says, refused_said);
    cr_assert_eq(not_a_library, AMP_ERROR_UNSUPPORTED, "a text file: %s", amp_status_name(not_a_library));
    snprintf(says, sizeof says, "%s does not load", text);
    cr_assert(strstr(text_said, says), "message does not say '%s': %s", says, text_said);
    cr_assert_eq(good, AMP_OK, "the stand-in in the build's directory: %s", amp_status_name(good));
    cr_assert(strstr(p.nccl, "NCCL 2.28.3"), "nccl: %s", p.nccl);
#endif
}

Test(mpi, choose_path_on_a_gpu, .init = mpi_up, .fini = mpi_down)
{
    unsetenv("AMP_MPI_PATH");
    amp_accelerator *gpu = test_accel(TEST_ACCEL_GPU);
    amp_accelerator_info info = info_of(gpu);
    amp_mpi_path_info p;
    setenv("AMP_MPI_GPU_AWARE", "0", 1);
    /* No NCCL/RCCL (a library that is not there): staged. */
    setenv("AMP_MPI_NCCL_LIBRARY", "/nonexistent/libnccl-missing.so.2", 1);
    ASSERT_MPI_OK(amp_mpi_choose_path(gpu, AMP_MPI_PATH_AUTO, &p));
    cr_assert_eq(p.path, info.is_unified_memory ? AMP_MPI_PATH_HOST : AMP_MPI_PATH_STAGED, "%s: got %s (%s)",
                 info.device_path, amp_mpi_path_name(p.path), p.reason);
    /* MPI would read device memory as host memory: refused, saying how to
     * override. */
    ASSERT_MPI_STATUS(amp_mpi_choose_path(gpu, AMP_MPI_PATH_DEVICE, &p), AMP_ERROR_UNSUPPORTED);
    cr_assert(strstr(amp_mpi_last_error(), "AMP_MPI_GPU_AWARE=1"), "message: %s", amp_mpi_last_error());
    setenv("AMP_MPI_GPU_AWARE", "1", 1);
    ASSERT_MPI_OK(amp_mpi_choose_path(gpu, AMP_MPI_PATH_AUTO, &p));
    cr_assert_eq(p.path, info.is_unified_memory ? AMP_MPI_PATH_HOST : AMP_MPI_PATH_DEVICE, "got %s (%s)",
                 amp_mpi_path_name(p.path), p.reason);
    ASSERT_MPI_OK(amp_mpi_choose_path(gpu, AMP_MPI_PATH_DEVICE, &p));
    cr_assert_eq(p.path, AMP_MPI_PATH_DEVICE);
    /* The vendor's NCCL/RCCL where it loads: auto takes it over staging (a
     * GPU-aware MPI still comes first). */
    unsetenv("AMP_MPI_NCCL_LIBRARY");
    const char *lib = !strncmp(info.device_path, "hip:", 4) ? "librccl.so.1" : "libnccl.so.2";
    void *dl = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (dl && !info.is_unified_memory) {
        dlclose(dl);
        ASSERT_MPI_OK(amp_mpi_choose_path(gpu, AMP_MPI_PATH_AUTO, &p));
        cr_assert_eq(p.path, AMP_MPI_PATH_DEVICE, "a GPU-aware MPI comes first: got %s", amp_mpi_path_name(p.path));
        setenv("AMP_MPI_GPU_AWARE", "0", 1);
        ASSERT_MPI_OK(amp_mpi_choose_path(gpu, AMP_MPI_PATH_AUTO, &p));
        cr_assert_eq(p.path, AMP_MPI_PATH_NCCL, "%s with %s: got %s (%s)", info.device_path, lib,
                     amp_mpi_path_name(p.path), p.reason);
        cr_assert(strstr(p.nccl, lib), "nccl: %s", p.nccl);
    } else if (dl) {
        dlclose(dl);
    }
    unsetenv("AMP_MPI_GPU_AWARE");
}

/* The nccl path on a GPU with the real library, one rank (MPI_COMM_SELF:
 * NCCL's sends and receives to itself in one group): a contiguous row and
 * a strided column (packed on the device) arrive, and an all-reduce of one
 * rank leaves the values as they were, on the device. Two ranks need two
 * GPUs (NCCL refuses two ranks of one GPU): ci/gpu.sh nccl runs them, and
 * the fall-back on one GPU. */
Test(mpi, nccl_path_on_a_gpu, .init = mpi_up, .fini = mpi_down)
{
    unsetenv("AMP_MPI_PATH");
    unsetenv("AMP_MPI_NCCL_LIBRARY");
    amp_accelerator *gpu = test_accel(TEST_ACCEL_GPU);
    amp_accelerator_info info = info_of(gpu);
    const char *lib = !strncmp(info.device_path, "hip:", 4) ? "librccl.so.1" : "libnccl.so.2";
    void *dl = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!dl) cr_skip_test("%s does not load here: the nccl path needs it", lib);
    dlclose(dl);
    amp_accelerator_view *q = default_view(gpu);
    float a[R * C], b[R * C];
    for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c) a[r * C + c] = cell(r, c, 0.5f), b[r * C + c] = -1;
    amp_array *aa = NULL, *ab = NULL;
    amp_array_view *va = NULL, *vb = NULL, *row_s = NULL, *row_r = NULL, *col_s = NULL, *col_r = NULL;
    ASSERT_OK(amp_array_create(q, sizeof(float), amp_extent_2d(R, C), a, &aa));
    ASSERT_OK(amp_array_create(q, sizeof(float), amp_extent_2d(R, C), b, &ab));
    ASSERT_OK(amp_array_view_of_array(aa, &va));
    ASSERT_OK(amp_array_view_of_array(ab, &vb));
    ASSERT_OK(amp_array_view_section(va, amp_index_2d(1, 0), amp_extent_2d(1, C), &row_s));
    ASSERT_OK(amp_array_view_section(vb, amp_index_2d(4, 0), amp_extent_2d(1, C), &row_r));
    /* The column lands in b's column 5 above row 4, so that the two
     * receives never share an element. */
    ASSERT_OK(amp_array_view_section(va, amp_index_2d(0, 2), amp_extent_2d(R - 2, 1), &col_s));
    ASSERT_OK(amp_array_view_section(vb, amp_index_2d(0, 5), amp_extent_2d(R - 2, 1), &col_r));
    amp_mpi_exchange *x = self_exchange(q, sizeof(float), AMP_MPI_PATH_NCCL);
    amp_mpi_halo h[2] = {{row_s, row_r, 0, 1, 1}, {col_s, col_r, 0, 2, 2}};
    ASSERT_MPI_OK(amp_mpi_exchange_halos(x, h, 2));
    amp_mpi_path_info p;
    ASSERT_MPI_OK(amp_mpi_exchange_get_path(x, &p));
    cr_assert_eq(p.path, AMP_MPI_PATH_NCCL, "fell back: %s", p.reason);
    amp_array_view *views[] = {row_s, row_r, col_s, col_r, va, vb};
    for (int i = 0; i < 6; ++i) ASSERT_OK(amp_array_view_destroy(views[i]));
    ASSERT_OK(amp_array_copy_to_host(ab, b));
    for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c) {
            float want = r == 4 ? cell(1, c, 0.5f) : c == 5 && r < R - 2 ? cell(r, 2, 0.5f) : -1.0f;
            cr_assert_eq(b[r * C + c], want, "(%d, %d): %g, want %g", r, c, b[r * C + c], want);
        }
    double d[3] = {1.5, -2, 1e300};
    amp_array *ad = NULL;
    amp_array_view *vd = NULL;
    ASSERT_OK(amp_array_create(q, sizeof(double), amp_extent_1d(3), d, &ad));
    ASSERT_OK(amp_array_view_of_array(ad, &vd));
    ASSERT_MPI_OK(amp_mpi_exchange_allreduce(x, vd, AMP_MPI_DOUBLE, AMP_MPI_SUM));
    ASSERT_OK(amp_array_view_destroy(vd));
    double got[3];
    ASSERT_OK(amp_array_copy_to_host(ad, got));
    for (int i = 0; i < 3; ++i) cr_assert_eq(got[i], d[i], "element %d: %g, want %g", i, got[i], d[i]);
    amp_mpi_exchange_stats xs;
    ASSERT_MPI_OK(amp_mpi_exchange_get_stats(x, &xs));
    cr_assert_eq(xs.allreduces_on_device, 1);
    cr_assert_eq(xs.bytes_staged, 0);
    ASSERT_MPI_OK(amp_mpi_exchange_destroy(x));
    ASSERT_OK(amp_array_destroy(ad));
    ASSERT_OK(amp_array_destroy(aa));
    ASSERT_OK(amp_array_destroy(ab));
}

/* ------------------------------------------------------------- exchanger */

Test(mpi, exchange_create_and_destroy_errors, .init = mpi_up, .fini = mpi_down)
{
    amp_mpi_exchange *x = (amp_mpi_exchange *)(void *)&x;
    amp_accelerator_view *q = default_view(test_accel(TEST_ACCEL_CPU));
    ASSERT_MPI_STATUS(amp_mpi_exchange_create(MPI_COMM_SELF, q, 0, AMP_MPI_PATH_AUTO, &x), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert_null(x);
    cr_assert(strstr(amp_mpi_last_error(), "elem_size"), "message: %s", amp_mpi_last_error());
    ASSERT_MPI_STATUS(amp_mpi_exchange_create(MPI_COMM_NULL, q, 4, AMP_MPI_PATH_AUTO, &x), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_MPI_STATUS(amp_mpi_exchange_create(MPI_COMM_SELF, q, 4, (amp_mpi_path)7, &x), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert_null(x);
    ASSERT_MPI_STATUS(amp_mpi_exchange_create(MPI_COMM_SELF, q, 4, AMP_MPI_PATH_AUTO, NULL), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_MPI_OK(amp_mpi_exchange_destroy(NULL));
    /* A failed MPI call says what MPI said. Before, the receive of the
     * leaving notices failed with no word from MPI. */
    fake_irecv_error = MPI_ERR_OTHER;
    ASSERT_MPI_STATUS(amp_mpi_exchange_create(MPI_COMM_SELF, q, 4, AMP_MPI_PATH_AUTO, &x), AMP_ERROR_DEVICE);
    cr_assert_null(x);
    char words[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(MPI_ERR_OTHER, words, &len);
    cr_assert(strstr(amp_mpi_last_error(), "MPI_Irecv of the peers' leaving notices failed: ") &&
                  strstr(amp_mpi_last_error(), words),
              "no \"%s\" in: %s", words, amp_mpi_last_error());

    /* q NULL: the default accelerator's default view. */
    ASSERT_MPI_OK(amp_mpi_exchange_create(MPI_COMM_SELF, NULL, 4, AMP_MPI_PATH_STAGED, &x));
    amp_mpi_path_info p;
    ASSERT_MPI_OK(amp_mpi_exchange_get_path(x, &p));
    cr_assert_eq(p.path, AMP_MPI_PATH_STAGED);
    cr_assert(p.reason[0]);
    amp_mpi_exchange_stats s;
    ASSERT_MPI_STATUS(amp_mpi_exchange_get_stats(NULL, &s), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_MPI_STATUS(amp_mpi_exchange_get_stats(x, NULL), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_MPI_STATUS(amp_mpi_exchange_get_path(x, NULL), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_MPI_STATUS(amp_mpi_exchange_reset_stats(NULL), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_MPI_OK(amp_mpi_exchange_destroy(x));
    /* Destroyed: every call refuses it by name, a second destroy too
     * (before, the second destroy freed the communicator and the memory
     * again, and the others read freed memory). */
    ASSERT_MPI_STATUS(amp_mpi_exchange_destroy(x), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_mpi_last_error(), "amp_mpi_exchange_destroy: the exchanger") &&
                  strstr(amp_mpi_last_error(), "was destroyed"),
              "message: %s", amp_mpi_last_error());
    ASSERT_MPI_STATUS(amp_mpi_exchange_get_stats(x, &s), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_mpi_last_error(), "was destroyed"), "message: %s", amp_mpi_last_error());
    ASSERT_MPI_STATUS(amp_mpi_exchange_get_path(x, &p), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_MPI_STATUS(amp_mpi_exchange_set_timeout(x, 5), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_MPI_STATUS(amp_mpi_exchange_reset_stats(x), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_MPI_STATUS(amp_mpi_exchange_halos(x, NULL, 0), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_mpi_last_error(), "amp_mpi_exchange_halos: the exchanger"), "message: %s",
              amp_mpi_last_error());
    amp_mpi_pending pend;
    ASSERT_MPI_STATUS(amp_mpi_exchange_begin(x, NULL, 0, &pend), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_MPI_STATUS(amp_mpi_exchange_end(x, (amp_mpi_pending){1}), AMP_ERROR_INVALID_ARGUMENT);
    bool done = true;
    ASSERT_MPI_STATUS(amp_mpi_exchange_test(x, (amp_mpi_pending){1}, &done), AMP_ERROR_INVALID_ARGUMENT);
    double one = 1;
    amp_array_view *v = NULL;
    ASSERT_OK(amp_array_view_create(&one, sizeof one, amp_extent_1d(1), AMP_READ_WRITE, &v));
    ASSERT_MPI_STATUS(amp_mpi_exchange_allreduce(x, v, AMP_MPI_DOUBLE, AMP_MPI_SUM), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_mpi_last_error(), "was destroyed"), "message: %s", amp_mpi_last_error());
    amp_array_view_destroy(v);
    /* A later exchanger works (it may reuse the shell: then x is its). */
    amp_mpi_exchange *y = NULL;
    ASSERT_MPI_OK(amp_mpi_exchange_create(MPI_COMM_SELF, q, 4, AMP_MPI_PATH_STAGED, &y));
    ASSERT_MPI_OK(amp_mpi_exchange_get_stats(y, &s));
    ASSERT_MPI_OK(amp_mpi_exchange_destroy(y));
}

/* An exchanger destroyed after MPI_Finalize frees its memory only; one
 * whose exchange was still in flight then too: MPI_Finalize abandoned the
 * exchange (nothing could end it any more). Before, that destroy said
 * AMP_ERROR_BUSY for ever and the exchanger, its staging buffers and
 * records were never freed. */
Test(mpi, destroy_after_finalize_frees_only_memory, .init = mpi_up, .fini = mpi_down)
{
    amp_accelerator_view *q = default_view(test_accel(TEST_ACCEL_CPU));
    amp_mpi_exchange *x = self_exchange(q, 4, AMP_MPI_PATH_STAGED);
    amp_mpi_exchange *busy = self_exchange(q, sizeof(float), AMP_MPI_PATH_STAGED);
    amp_array_view *v = NULL;
    amp_array *a = poisoned_array(q, &v);
    amp_array_view *recv = section(v, 3, 0, 1, C);
    amp_mpi_halo h = {NULL, recv, 0, 0, 7}; /* a staged receive nothing sends to */
    amp_mpi_pending p;
    ASSERT_MPI_OK(amp_mpi_exchange_begin(busy, &h, 1, &p));
    ASSERT_MPI_STATUS(amp_mpi_exchange_destroy(busy), AMP_ERROR_BUSY);
    leak_check_before_finalize(); /* x and busy are still reachable here */
    cr_assert_eq(MPI_Finalize(), MPI_SUCCESS);
    ASSERT_MPI_OK(amp_mpi_exchange_destroy(x));
    ASSERT_MPI_STATUS(amp_mpi_exchange_end(busy, p), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_mpi_last_error(), "MPI is finalized"), "%s", amp_mpi_last_error());
    ASSERT_MPI_OK(amp_mpi_exchange_destroy(busy));
    ASSERT_MPI_STATUS(amp_mpi_exchange_halos(NULL, NULL, 0), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_OK(amp_array_view_destroy(recv));
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_array_destroy(a));
}

/* A host grid the device wrote: the send row is synchronized (on a discrete
 * GPU exactly that row comes back), MPI reads and writes host memory in
 * place, and the received row wins over the device's older copy. */
ACCEL_TEST(mpi, host_views_exchanged_in_place, .init = mpi_up, .fini = mpi_down)
{
    amp_accelerator_info info = info_of(acc);
    amp_accelerator_view *q = default_view(acc);
    amp_mpi_exchange *x = self_exchange(q, sizeof(float), AMP_MPI_PATH_HOST);
    float grid[R * C];
    for (int i = 0; i < R * C; ++i) grid[i] = POISON_F32;
    amp_array_view *v = test_view(grid, sizeof(float), amp_extent_2d(R, C), AMP_READ_WRITE);
    device_fill(acc, q, v, 3.0f);
    amp_array_view *send = section(v, 1, 0, 1, C), *recv = section(v, R - 1, 0, 1, C);
    ASSERT_OK(amp_accelerator_view_reset_stats(q));
    amp_mpi_halo h = {send, recv, 0, 5, 5};
    ASSERT_MPI_OK(amp_mpi_exchange_halos(x, &h, 1));
    uint64_t moved = copied_bytes(q);
    cr_assert_eq(moved, info.is_unified_memory ? 0 : C * sizeof(float),
                 "%s: the exchange copied %llu bytes (unified: none; else the send row back)", info.device_path,
                 (unsigned long long)moved);
    amp_mpi_exchange_stats s;
    ASSERT_MPI_OK(amp_mpi_exchange_get_stats(x, &s));
    cr_assert_eq(s.exchanges, 1);
    cr_assert_eq(s.messages_sent, 1);
    cr_assert_eq(s.messages_received, 1);
    cr_assert_eq(s.bytes_sent, C * sizeof(float));
    cr_assert_eq(s.bytes_received, C * sizeof(float));
    cr_assert_eq(s.bytes_staged, 0);
    cr_assert_gt(s.seconds, 0.0, "no time counted inside the exchange's calls");
    ASSERT_OK(amp_array_view_destroy(send));
    ASSERT_OK(amp_array_view_destroy(recv));
    ASSERT_OK(amp_array_view_destroy(v));
    check_moved(grid, 3.0f, R - 1, 0, 1, 0, 1, C, "in place");
    ASSERT_MPI_OK(amp_mpi_exchange_reset_stats(x));
    ASSERT_MPI_OK(amp_mpi_exchange_get_stats(x, &s));
    cr_assert(s.exchanges == 0 && s.bytes_sent == 0 && s.seconds == 0.0, "reset left counts");
    ASSERT_MPI_OK(amp_mpi_exchange_destroy(x));
}

/* Arrays on the device, staged: exactly the two halo rows cross (one each
 * way), counted in q's statistics and the exchanger's. */
ACCEL_TEST(mpi, arrays_staged_move_exactly_the_halo, .init = mpi_up, .fini = mpi_down)
{
    amp_accelerator_info info = info_of(acc);
    amp_accelerator_view *q = default_view(acc);
    const uint64_t row = C * sizeof(float);
    /* On a GPU the staged pipeline copies on hipamp::mpi's own copy stream
     * beside the queue (counted by the exchanger, not by the queue), and on
     * the queue with AMP_MPI_COPY_STREAM=0; elsewhere always on the queue.
     * Either way exactly the halo moves, and arrives. Every spelling of
     * off turns it off (only "0" did before). */
    static const char *const setting[] = {"1", "0", "off", "No"};
    for (int k = 0; k < 4; ++k) {
        const int stream_off = k > 0;
        setenv("AMP_MPI_COPY_STREAM", setting[k], 1);
        amp_mpi_exchange *x = self_exchange(q, sizeof(float), AMP_MPI_PATH_STAGED);
        amp_array_view *v = NULL;
        amp_array *a = poisoned_array(q, &v);
        device_fill(acc, q, v, 7.0f + (float)stream_off);
        amp_array_view *send = section(v, 1, 0, 1, C), *recv = section(v, R - 1, 0, 1, C);
        ASSERT_OK(amp_accelerator_view_reset_stats(q));
        for (int round = 0; round < 3; ++round) {
            amp_mpi_halo h = {send, recv, 0, 9, 9};
            ASSERT_MPI_OK(amp_mpi_exchange_halos(x, &h, 1));
        }
        amp_stats st;
        ASSERT_OK(amp_accelerator_view_get_stats(q, &st));
        amp_mpi_exchange_stats s;
        ASSERT_MPI_OK(amp_mpi_exchange_get_stats(x, &s));
        /* A CUDA GPU always has the copy stream; a HIP runtime without
         * hipStreamGetDevice (HIP 5.2, the HIP-on-NVIDIA test layer) none. */
        uint64_t aside = info.is_emulated || stream_off ? 0 : 3 * 2 * row;
        if (aside && strncmp(info.device_path, "cuda:", 5) && s.bytes_copied_aside == 0) aside = 0;
        cr_assert_eq(s.bytes_copied_aside, aside, "%s, AMP_MPI_COPY_STREAM=%s: %llu bytes on the copy stream",
                     info.device_path, setting[k], (unsigned long long)s.bytes_copied_aside);
        /* An array's memory is its accelerator's, the CPU accelerator's
         * too: staging is a copy to the host and one back on every
         * accelerator. */
        cr_assert_eq(st.bytes_to_host, aside ? 0 : 3 * row, "%s: %llu bytes to the host", info.device_path,
                     (unsigned long long)st.bytes_to_host);
        cr_assert_eq(st.bytes_to_device, aside ? 0 : 3 * row, "%s: %llu bytes to the device", info.device_path,
                     (unsigned long long)st.bytes_to_device);
        cr_assert_eq(st.bytes_host_to_host + st.bytes_device_to_device, 0, "%s: other copies counted", info.device_path);
        cr_assert_eq(s.bytes_staged, 3 * 2 * row);
        cr_assert_eq(s.bytes_sent, 3 * row);
        float grid[R * C];
        ASSERT_OK(amp_array_view_destroy(send));
        ASSERT_OK(amp_array_view_destroy(recv));
        ASSERT_OK(amp_array_view_destroy(v));
        ASSERT_OK(amp_array_copy_to_host(a, grid));
        check_moved(grid, 7.0f + (float)stream_off, R - 1, 0, 1, 0, 1, C, stream_off ? "staged on the queue" : "staged");
        ASSERT_OK(amp_array_destroy(a));
        ASSERT_MPI_OK(amp_mpi_exchange_destroy(x));
    }
    unsetenv("AMP_MPI_COPY_STREAM");
}

/* Arrays by pointer: the device path where MPI takes the vendor's
 * pointers (or on the CPU accelerator, whose arrays are host memory), and
 * the host path where the array is host memory; a GPU array refused
 * where it would be read as host memory. */
ACCEL_TEST(mpi, arrays_by_pointer, .init = mpi_up, .fini = mpi_down)
{
    unsetenv("AMP_MPI_GPU_AWARE");
    unsetenv("AMP_MPI_PATH");
    amp_accelerator_info info = info_of(acc);
    amp_accelerator_view *q = default_view(acc);
    amp_mpi_path_info choice;
    amp_status dev = amp_mpi_choose_path(acc, AMP_MPI_PATH_DEVICE, &choice);
    const amp_mpi_path paths[2] = {AMP_MPI_PATH_DEVICE, AMP_MPI_PATH_HOST};
    for (int i = 0; i < 2; ++i) {
        amp_mpi_exchange *x = NULL;
        if (paths[i] == AMP_MPI_PATH_DEVICE && dev != AMP_OK) {
            cr_assert_eq(dev, AMP_ERROR_UNSUPPORTED, "%s", amp_mpi_last_error());
            cr_assert(!info.is_emulated, "the CPU accelerator always has a device path");
            ASSERT_MPI_STATUS(amp_mpi_exchange_create(MPI_COMM_SELF, q, 4, AMP_MPI_PATH_DEVICE, &x),
                              AMP_ERROR_UNSUPPORTED);
            cr_assert_null(x);
            continue;
        }
        x = self_exchange(q, sizeof(float), paths[i]);
        amp_array_view *v = NULL;
        amp_array *a = poisoned_array(q, &v);
        device_fill(acc, q, v, 11.0f + (float)i);
        amp_array_view *send = section(v, 2, 0, 1, C), *recv = section(v, 0, 0, 1, C);
        amp_mpi_halo h = {send, recv, 0, 1, 1};
        ASSERT_OK(amp_accelerator_view_reset_stats(q));
        if (paths[i] == AMP_MPI_PATH_HOST && !info.is_emulated) {
            ASSERT_MPI_STATUS(amp_mpi_exchange_halos(x, &h, 1), AMP_ERROR_UNSUPPORTED);
            cr_assert(strstr(amp_mpi_last_error(), "GPU memory"), "message: %s", amp_mpi_last_error());
        } else {
            ASSERT_MPI_OK(amp_mpi_exchange_halos(x, &h, 1));
            cr_assert_eq(copied_bytes(q), 0, "%s path copied %llu bytes", amp_mpi_path_name(paths[i]),
                         (unsigned long long)copied_bytes(q));
        }
        float grid[R * C];
        ASSERT_OK(amp_array_view_destroy(send));
        ASSERT_OK(amp_array_view_destroy(recv));
        ASSERT_OK(amp_array_view_destroy(v));
        ASSERT_OK(amp_array_copy_to_host(a, grid));
        if (paths[i] == AMP_MPI_PATH_HOST && !info.is_emulated)
            check_moved(grid, 11.0f + (float)i, 0, 0, 0, 0, 0, 0, "refused exchange left the array as it was");
        else
            check_moved(grid, 11.0f + (float)i, 0, 0, 2, 0, 1, C, amp_mpi_path_name(paths[i]));
        ASSERT_OK(amp_array_destroy(a));
        ASSERT_MPI_OK(amp_mpi_exchange_destroy(x));
    }
}

/* Columns: strided on both sides. In place they travel as an MPI vector
 * type; staged, the section copy packs them. Nothing around them moves. */
ACCEL_TEST(mpi, strided_sections, .init = mpi_up, .fini = mpi_down)
{
    amp_accelerator_view *q = default_view(acc);
    /* In place, host views. */
    amp_mpi_exchange *x = self_exchange(q, sizeof(float), AMP_MPI_PATH_HOST);
    float grid[R * C];
    for (int i = 0; i < R * C; ++i) grid[i] = POISON_F32;
    amp_array_view *v = test_view(grid, sizeof(float), amp_extent_2d(R, C), AMP_READ_WRITE);
    device_fill(acc, q, v, 1.0f);
    amp_array_view *send = section(v, 1, 1, R - 2, 2), *recv = section(v, 0, C - 3, R - 2, 2);
    amp_mpi_halo h = {send, recv, 0, 2, 2};
    ASSERT_MPI_OK(amp_mpi_exchange_halos(x, &h, 1));
    amp_mpi_exchange_stats s;
    ASSERT_MPI_OK(amp_mpi_exchange_get_stats(x, &s));
    cr_assert_eq(s.bytes_sent, (R - 2) * 2 * sizeof(float));
    ASSERT_OK(amp_array_view_destroy(send));
    ASSERT_OK(amp_array_view_destroy(recv));
    ASSERT_OK(amp_array_view_destroy(v));
    check_moved(grid, 1.0f, 0, C - 3, 1, 1, R - 2, 2, "strided, in place");
    ASSERT_MPI_OK(amp_mpi_exchange_destroy(x));

    /* Staged, an array. */
    x = self_exchange(q, sizeof(float), AMP_MPI_PATH_STAGED);
    amp_array *a = poisoned_array(q, &v);
    device_fill(acc, q, v, 2.0f);
    send = section(v, 0, 0, R, 1);
    recv = section(v, 0, C - 1, R, 1);
    h = (amp_mpi_halo){send, recv, 0, 3, 3};
    ASSERT_MPI_OK(amp_mpi_exchange_halos(x, &h, 1));
    ASSERT_OK(amp_array_view_destroy(send));
    ASSERT_OK(amp_array_view_destroy(recv));
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_array_copy_to_host(a, grid));
    check_moved(grid, 2.0f, 0, C - 1, 0, 0, R, 1, "strided, staged");
    ASSERT_OK(amp_array_destroy(a));
    ASSERT_MPI_OK(amp_mpi_exchange_destroy(x));
}

/* One rank as both its neighbours: a periodic split. send_lo (tag 1)
 * arrives in recv_hi, send_hi (tag 0) in recv_lo. */
ACCEL_TEST(mpi, rows_wrap_around_with_one_rank, .init = mpi_up, .fini = mpi_down)
{
    amp_accelerator_view *q = default_view(acc);
    amp_mpi_exchange *x = self_exchange(q, sizeof(float), AMP_MPI_PATH_AUTO);
    amp_mpi_path_info p;
    ASSERT_MPI_OK(amp_mpi_exchange_get_path(x, &p));
    float grid[R * C];
    for (int i = 0; i < R * C; ++i) grid[i] = POISON_F32;
    amp_array *a = NULL;
    amp_array_view *v = NULL;
    if (p.path == AMP_MPI_PATH_HOST) v = test_view(grid, sizeof(float), amp_extent_2d(R, C), AMP_READ_WRITE);
    else a = poisoned_array(q, &v);
    device_fill(acc, q, v, 5.0f);
    amp_array_view *top = section(v, 1, 0, 1, C), *bottom = section(v, R - 2, 0, 1, C);
    amp_array_view *halo_top = section(v, 0, 0, 1, C), *halo_bottom = section(v, R - 1, 0, 1, C);
    ASSERT_MPI_OK(amp_mpi_exchange_rows(x, 0, top, halo_top, 0, bottom, halo_bottom));
    amp_array_view *all[] = {top, bottom, halo_top, halo_bottom, v};
    for (int i = 0; i < 5; ++i) ASSERT_OK(amp_array_view_destroy(all[i]));
    if (a) ASSERT_OK(amp_array_copy_to_host(a, grid));
    for (int c = 0; c < C; ++c) {
        cr_assert(grid[c] == cell(R - 2, c, 5.0f), "%s: halo_top[%d] = %.9g, want the bottom row's", p.reason, c,
                  (double)grid[c]);
        cr_assert(grid[(R - 1) * C + c] == cell(1, c, 5.0f), "halo_bottom[%d] = %.9g, want the top row's", c,
                  (double)grid[(R - 1) * C + c]);
    }
    for (int r = 1; r < R - 1; ++r)
        for (int c = 0; c < C; ++c) cr_assert(grid[r * C + c] == cell(r, c, 5.0f), "owned cell (%d, %d) changed", r, c);
    ASSERT_OK(amp_array_destroy(a));
    ASSERT_MPI_OK(amp_mpi_exchange_destroy(x));
}

Test(mpi, proc_null_peers_move_nothing, .init = mpi_up, .fini = mpi_down)
{
    amp_accelerator_view *q = default_view(test_accel(TEST_ACCEL_CPU));
    amp_mpi_exchange *x = self_exchange(q, sizeof(float), AMP_MPI_PATH_STAGED);
    float grid[R * C];
    for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c) grid[r * C + c] = cell(r, c, 0.0f);
    amp_array_view *v = test_view(grid, sizeof(float), amp_extent_2d(R, C), AMP_READ_WRITE);
    amp_array_view *a = section(v, 0, 0, 1, C), *b = section(v, 1, 0, 1, C);
    ASSERT_MPI_OK(amp_mpi_exchange_rows(x, MPI_PROC_NULL, a, b, MPI_PROC_NULL, b, a));
    amp_mpi_halo none[2] = {{a, b, MPI_PROC_NULL, 0, 0}, {NULL, NULL, 0, 0, 0}};
    ASSERT_MPI_OK(amp_mpi_exchange_halos(x, none, 2));
    ASSERT_MPI_OK(amp_mpi_exchange_halos(x, NULL, 0));
    amp_mpi_exchange_stats s;
    ASSERT_MPI_OK(amp_mpi_exchange_get_stats(x, &s));
    cr_assert_eq(s.exchanges, 3);
    cr_assert_eq(s.messages_sent + s.messages_received, 0);
    cr_assert_eq(s.bytes_sent + s.bytes_received + s.bytes_staged, 0);
    ASSERT_OK(amp_array_view_destroy(a));
    ASSERT_OK(amp_array_view_destroy(b));
    ASSERT_OK(amp_array_view_destroy(v));
    check_moved(grid, 0.0f, 0, 0, 0, 0, 0, 0, "nothing moved");
    ASSERT_MPI_OK(amp_mpi_exchange_destroy(x));
}

/* A receive that nothing matches (its tag differs from the send's): with a
 * time-out the exchange returns AMP_ERROR_TIMEOUT naming the peer and the
 * pending halo; the exchanger then refuses, and destroys cleanly. */
Test(mpi, timeout_on_a_receive_nothing_matches, .init = mpi_up, .fini = mpi_down)
{
    amp_accelerator_view *q = default_view(test_accel(TEST_ACCEL_CPU));
    amp_mpi_exchange *x = self_exchange(q, sizeof(float), AMP_MPI_PATH_HOST);
    float grid[R * C];
    for (int i = 0; i < R * C; ++i) grid[i] = 0.0f;
    amp_array_view *v = test_view(grid, sizeof(float), amp_extent_2d(R, C), AMP_READ_WRITE);
    amp_array_view *send = section(v, 1, 0, 1, C), *recv = section(v, 3, 0, 1, C);
    ASSERT_MPI_STATUS(amp_mpi_exchange_set_timeout(NULL, 10), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_MPI_OK(amp_mpi_exchange_set_timeout(x, 200));
    amp_mpi_halo good = {send, recv, 0, 2, 2};
    ASSERT_MPI_OK(amp_mpi_exchange_halos(x, &good, 1)); /* the time-out does not disturb an answered exchange */
    amp_mpi_halo h = {send, recv, 0, 3, 4};
    ASSERT_MPI_STATUS(amp_mpi_exchange_halos(x, &h, 1), AMP_ERROR_TIMEOUT);
    const char *says[] = {"no answer from rank 0 within 200 ms", "halo 0 receive from rank 0 (tag 4)", "destroy it"};
    for (int i = 0; i < 3; ++i)
        cr_assert(strstr(amp_mpi_last_error(), says[i]), "no \"%s\" in: %s", says[i], amp_mpi_last_error());
    ASSERT_MPI_STATUS(amp_mpi_exchange_halos(x, &good, 1), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_mpi_last_error(), "abandoned"), "message: %s", amp_mpi_last_error());
    amp_mpi_exchange_stats s;
    ASSERT_MPI_OK(amp_mpi_exchange_get_stats(x, &s));
    cr_assert_eq(s.exchanges, 1, "only the answered exchange counts");
    ASSERT_MPI_OK(amp_mpi_exchange_destroy(x));

    /* An MPI call that fails while the exchange waits (MPI_Testall, before
     * every request finished) leaves its requests in an undefined state:
     * AMP_ERROR_DEVICE with MPI's words, and the exchanger refuses from
     * then on. Before, the record was reused by the next exchange while
     * MPI might still hold its requests. */
    x = self_exchange(q, sizeof(float), AMP_MPI_PATH_HOST);
    ASSERT_MPI_OK(amp_mpi_exchange_halos(x, &good, 1));
    fake_testall_error = MPI_ERR_OTHER;
    ASSERT_MPI_STATUS(amp_mpi_exchange_halos(x, &good, 1), AMP_ERROR_DEVICE);
    char said[1024];
    snprintf(said, sizeof said, "%s", amp_mpi_last_error());
    ASSERT_MPI_STATUS(amp_mpi_exchange_halos(x, &good, 1), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_mpi_last_error(), "abandoned"), "message: %s", amp_mpi_last_error());
    char mpi_words[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(MPI_ERR_OTHER, mpi_words, &len);
    const char *failed[] = {"amp_mpi_exchange_halos: exchange #2: MPI_Testall of its messages failed: ", mpi_words,
                            "undefined state", "destroy it"};
    for (int i = 0; i < 4; ++i) cr_assert(strstr(said, failed[i]), "no \"%s\" in: %s", failed[i], said);
    ASSERT_MPI_OK(amp_mpi_exchange_destroy(x));
    ASSERT_OK(amp_array_view_destroy(send));
    ASSERT_OK(amp_array_view_destroy(recv));
    ASSERT_OK(amp_array_view_destroy(v));
}

/* A begin whose MPI_Isend fails, after its receive was posted, abandons
 * the exchange (AMP_ERROR_DEVICE) and hands back no exchange: out->id is 0,
 * which no end or test takes. Before, out->id was the abandoned exchange's
 * id, a handle the caller could not tell from one that began. */
Test(mpi, a_begin_that_fails_after_posting_hands_back_no_exchange, .init = mpi_up, .fini = mpi_down)
{
    amp_accelerator_view *q = default_view(test_accel(TEST_ACCEL_CPU));
    amp_mpi_exchange *x = self_exchange(q, sizeof(float), AMP_MPI_PATH_HOST);
    float grid[R * C];
    for (int i = 0; i < R * C; ++i) grid[i] = (float)(i + 1);
    amp_array_view *v = test_view(grid, sizeof(float), amp_extent_2d(R, C), AMP_READ_WRITE);
    amp_array_view *send = section(v, 1, 0, 1, C), *recv = section(v, 3, 0, 1, C);
    amp_mpi_halo h = {send, recv, 0, 5, 5};
    amp_mpi_pending p = {12345};
    fake_isend_error = MPI_ERR_OTHER;
    ASSERT_MPI_STATUS(amp_mpi_exchange_begin(x, &h, 1, &p), AMP_ERROR_DEVICE);
    cr_assert_eq(fake_isend_error, 0, "the begin never called MPI_Isend");
    const char *failed = "amp_mpi_exchange_begin: exchange #1, halo 0 send to rank 0 (tag 5) failed";
    cr_assert(strstr(amp_mpi_last_error(), failed), "no \"%s\" in: %s", failed, amp_mpi_last_error());
    cr_assert_eq(p.id, 0, "a failed begin handed back exchange #%llu", (unsigned long long)p.id);
    /* Nothing to end (the exchanger, which abandoned the exchange, refuses). */
    ASSERT_MPI_STATUS(amp_mpi_exchange_end(x, p), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_mpi_last_error(), "amp_mpi_exchange_end: "), "message: %s", amp_mpi_last_error());
    ASSERT_MPI_OK(amp_mpi_exchange_destroy(x));
    ASSERT_OK(amp_array_view_destroy(send));
    ASSERT_OK(amp_array_view_destroy(recv));
    ASSERT_OK(amp_array_view_destroy(v));
}

/* AMP_MPI_TIMEOUT gives new exchangers their time-out (set_timeout still
 * changes it); a value that is no number of milliseconds fails the
 * creation, naming it; empty is unset. */
Test(mpi, timeout_from_the_environment, .init = mpi_up, .fini = mpi_down, .timeout = 30)
{
    amp_accelerator_view *q = default_view(test_accel(TEST_ACCEL_CPU));
    float grid[R * C];
    for (int i = 0; i < R * C; ++i) grid[i] = 0.0f;
    amp_array_view *v = test_view(grid, sizeof(float), amp_extent_2d(R, C), AMP_READ_WRITE);
    amp_array_view *send = section(v, 1, 0, 1, C), *recv = section(v, 3, 0, 1, C);
    amp_mpi_halo h = {send, recv, 0, 3, 4}; /* nothing matches the receive */
    setenv("AMP_MPI_TIMEOUT", "150", 1);
    amp_mpi_exchange *x = self_exchange(q, sizeof(float), AMP_MPI_PATH_HOST);
    ASSERT_MPI_STATUS(amp_mpi_exchange_halos(x, &h, 1), AMP_ERROR_TIMEOUT);
    cr_assert(strstr(amp_mpi_last_error(), "no answer from rank 0 within 150 ms"), "%s", amp_mpi_last_error());
    ASSERT_MPI_OK(amp_mpi_exchange_destroy(x));
    x = self_exchange(q, sizeof(float), AMP_MPI_PATH_HOST);
    ASSERT_MPI_OK(amp_mpi_exchange_set_timeout(x, 60));
    ASSERT_MPI_STATUS(amp_mpi_exchange_halos(x, &h, 1), AMP_ERROR_TIMEOUT);
    cr_assert(strstr(amp_mpi_last_error(), "within 60 ms"), "%s", amp_mpi_last_error());
    ASSERT_MPI_OK(amp_mpi_exchange_destroy(x));
    const char *bad[] = {"soon", "-5", "4294967296", "12ms", " 7"};
    for (int i = 0; i < 5; ++i) {
        setenv("AMP_MPI_TIMEOUT", bad[i], 1);
        x = (amp_mpi_exchange *)1;
        ASSERT_MPI_STATUS(amp_mpi_exchange_create(MPI_COMM_SELF, q, sizeof(float), AMP_MPI_PATH_HOST, &x),
                          AMP_ERROR_INVALID_ARGUMENT);
        cr_assert_null(x);
        char says[64];
        snprintf(says, sizeof says, "AMP_MPI_TIMEOUT is \"%s\"", bad[i]);
        cr_assert(strstr(amp_mpi_last_error(), says), "no '%s' in: %s", says, amp_mpi_last_error());
    }
    setenv("AMP_MPI_TIMEOUT", "", 1);
    x = self_exchange(q, sizeof(float), AMP_MPI_PATH_HOST);
    amp_mpi_halo good = {send, recv, 0, 2, 2};
    ASSERT_MPI_OK(amp_mpi_exchange_halos(x, &good, 1));
    ASSERT_MPI_OK(amp_mpi_exchange_destroy(x));
    unsetenv("AMP_MPI_TIMEOUT");
    ASSERT_OK(amp_array_view_destroy(send));
    ASSERT_OK(amp_array_view_destroy(recv));
    ASSERT_OK(amp_array_view_destroy(v));
}

/* While a call waits, it progresses this thread's other exchangers, and
 * that progress may break one (a failed match, copy or post), which waits
 * up to 0.1 s for its cancelled receives. Before, all of it ran under the
 * lock of the process's list of exchangers, so every other thread's
 * create and destroy waited for it too. Here the visit's MPI_Improbe
 * destroys a third exchanger (a call that takes that lock, as another
 * thread's would) and then fails: the destroy returns (before, the thread
 * deadlocked on the lock it held), and the visited exchanger is broken,
 * saying why at its next call. (Its receive was never posted, so this
 * break waits for nothing: a receive matched and still open needs two
 * ranks and a peer that stalls mid-message.) A singleton, the CPU
 * accelerator. */
static amp_mpi_exchange *improbe_victim;
static amp_status improbe_victim_st;
static bool improbe_victim_gone;
static void destroy_improbe_victim(void)
{
    improbe_victim_st = amp_mpi_exchange_destroy(improbe_victim);
    improbe_victim_gone = true;
}

Test(mpi, a_visit_that_breaks_an_exchanger_holds_no_lock_of_the_process, .init = mpi_up, .fini = mpi_down,
     .timeout = 30)
{
    amp_accelerator_view *q = default_view(test_accel(TEST_ACCEL_CPU));
    /* Made first, so that it follows x in the process's list (made ones
     * go first): the walk goes on after x from a list the visit changed. */
    improbe_victim = self_exchange(q, sizeof(float), AMP_MPI_PATH_HOST);
    amp_mpi_exchange *x = self_exchange(q, sizeof(float), AMP_MPI_PATH_HOST);
    amp_mpi_exchange *y = self_exchange(q, sizeof(float), AMP_MPI_PATH_HOST);
    float grid[R * C];
    for (int i = 0; i < R * C; ++i) grid[i] = 0.0f;
    amp_array_view *v = test_view(grid, sizeof(float), amp_extent_2d(R, C), AMP_READ_WRITE);
    amp_array_view *send = section(v, 1, 0, 1, C), *recv = section(v, 3, 0, 1, C);
    amp_mpi_halo never_x = {send, recv, 0, 3, 4}, never_y = {send, recv, 0, 5, 6}; /* nothing matches */
    amp_mpi_pending p = {0};
    ASSERT_MPI_OK(amp_mpi_exchange_begin(x, &never_x, 1, &p));
    improbe_hook = destroy_improbe_victim;
    improbe_error = MPI_ERR_OTHER;
    improbe_tag = 4; /* x's receive: only the progress of y's wait looks for it now */
    ASSERT_MPI_OK(amp_mpi_exchange_set_timeout(y, 100));
    ASSERT_MPI_STATUS(amp_mpi_exchange_halos(y, &never_y, 1), AMP_ERROR_TIMEOUT);
    cr_assert(strstr(amp_mpi_last_error(), "no answer from rank 0 within 100 ms"),
              "y's own error was kept: %s", amp_mpi_last_error());
    cr_assert(improbe_victim_gone, "y's wait never progressed x");
    cr_assert_eq(improbe_victim_st, AMP_OK, "the destroy inside the visit returned %s: %s",
                 amp_status_name(improbe_victim_st), amp_mpi_last_error());
    ASSERT_MPI_STATUS(amp_mpi_exchange_end(x, p), AMP_ERROR_INVALID_ARGUMENT);
    const char *says[] = {"amp_mpi_exchange_end: ", "abandoned", "while this thread waited in another call",
                          "MPI_Improbe"};
    for (int i = 0; i < 4; ++i)
        cr_assert(strstr(amp_mpi_last_error(), says[i]), "no \"%s\" in: %s", says[i], amp_mpi_last_error());
    improbe_hook = NULL;
    ASSERT_MPI_OK(amp_mpi_exchange_destroy(x));
    ASSERT_MPI_OK(amp_mpi_exchange_destroy(y));
    ASSERT_OK(amp_array_view_destroy(send));
    ASSERT_OK(amp_array_view_destroy(recv));
    ASSERT_OK(amp_array_view_destroy(v));
}

/* The NCCL path's end with a time-out waits for its queue, and while it
 * waits this thread's exchanges on its other exchangers go on, as they do
 * while it waits in any other hipamp::mpi call. Here the queue holds a
 * kernel that runs until the message of an exchange begun on another
 * exchanger has arrived, and that exchange's receive is matched and posted
 * only by progress (its begin posts the send after it looked for the
 * message), so without that progress the end ran into its time-out (as two
 * ranks did where one rank's NCCL group waited for the other, whose MPI
 * exchange waited for this rank's). The stand-in NCCL on the CPU
 * accelerator, a singleton. */
Test(mpi, an_nccl_end_progresses_the_threads_other_exchanges, .init = mpi_up, .fini = mpi_down, .timeout = 60)
{
#ifndef HIPAMP_FAKE_NCCL
    cr_skip_test("the stand-in NCCL (test/fake_nccl.c) was not built");
#else
    static const char src[] =
        "AMP_KERNEL(wait_for_42, amp::index<1> i, amp::array_view<const int, 1> flag)\n"
        "{ while (*(volatile const int *)&flag[0] != 42) {} }\n";
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    amp_accelerator_view *qa = default_view(acc), *qb = NULL;
    ASSERT_OK(amp_accelerator_view_create(acc, &qb));
    amp_program *p = test_build(acc, src);
    /* Both made before anything is in flight (a creation's collective
     * progresses this thread's exchanges too). */
    amp_mpi_exchange *a = self_exchange(qa, sizeof(int), AMP_MPI_PATH_HOST);
    use_fake_nccl();
    amp_mpi_exchange *b = NULL;
    ASSERT_MPI_OK(amp_mpi_exchange_create(MPI_COMM_WORLD, qb, sizeof(int), AMP_MPI_PATH_NCCL, &b));
    unsetenv("AMP_MPI_NCCL_LIBRARY");
    amp_mpi_path_info pi;
    ASSERT_MPI_OK(amp_mpi_exchange_get_path(b, &pi));
    cr_assert_eq(pi.path, AMP_MPI_PATH_NCCL, "nccl: got %s: %s", amp_mpi_path_name(pi.path), pi.reason);
    ASSERT_MPI_OK(amp_mpi_exchange_set_timeout(b, 5000));

    int bs[2] = {5, 6}, br[2] = {0, 0};
    amp_array_view *bsv = test_view(bs, sizeof(int), amp_extent_1d(2), AMP_READ_WRITE);
    amp_array_view *brv = test_view(br, sizeof(int), amp_extent_1d(2), AMP_READ_WRITE);
    amp_mpi_halo hb = {bsv, brv, 0, 3, 3};
    amp_mpi_pending pb;
    ASSERT_MPI_OK(amp_mpi_exchange_begin(b, &hb, 1, &pb));

    int as[4] = {42, 42, 42, 42}, flag[4] = {0, 0, 0, 0};
    amp_array_view *asv = test_view(as, sizeof(int), amp_extent_1d(4), AMP_READ_WRITE);
    amp_array_view *fv = test_view(flag, sizeof(int), amp_extent_1d(4), AMP_READ_WRITE);
    amp_mpi_halo ha = {asv, fv, 0, 7, 7};
    amp_mpi_pending pa;
    ASSERT_MPI_OK(amp_mpi_exchange_begin(a, &ha, 1, &pa));
    cr_assert_neq(__atomic_load_n(&flag[0], __ATOMIC_ACQUIRE), 42,
                  "A's message landed in its begin: nothing is left for progress to do");

    amp_array_view *watch = test_view(flag, sizeof(int), amp_extent_1d(4), AMP_READ_ONLY);
    amp_arg wait_args[] = {amp_arg_view(watch)};
    amp_future *waiter = NULL;
    ASSERT_OK(amp_parallel_for_each_async(qb, amp_extent_1d(1), test_kernel(p, "wait_for_42"), wait_args, 1, &waiter));
    double t0 = MPI_Wtime();
    amp_status st = amp_mpi_exchange_end(b, pb);
    double waited = MPI_Wtime() - t0;
    /* Whatever that said, A's end lets the waiting kernel finish. */
    ASSERT_MPI_OK(amp_mpi_exchange_end(a, pa));
    ASSERT_OK(amp_future_wait(waiter));
    cr_assert_eq(st, AMP_OK, "the NCCL end: %s after %.1f s: %s", amp_status_name(st), waited, amp_mpi_last_error());
    cr_assert(waited < 4.0, "the NCCL end took %.1f s", waited);
    ASSERT_OK(amp_array_view_synchronize(brv));
    cr_assert(br[0] == 5 && br[1] == 6, "B received %d %d", br[0], br[1]);
    for (int i = 0; i < 4; ++i) cr_assert_eq(flag[i], 42, "flag[%d] = %d", i, flag[i]);
    amp_future_destroy(waiter);
    ASSERT_MPI_OK(amp_mpi_exchange_destroy(b));
    ASSERT_MPI_OK(amp_mpi_exchange_destroy(a));
    amp_array_view *views[] = {watch, bsv, brv, asv, fv};
    for (int i = 0; i < 5; ++i) ASSERT_OK(amp_array_view_destroy(views[i]));
    ASSERT_OK(amp_program_destroy(p));
    ASSERT_OK(amp_accelerator_view_destroy(qb));
#endif
}

/* Begun exchanges on one exchanger: handles that are no exchange, ending
 * out of order or twice, and destroy while one is in flight are refused
 * without changing anything; the data and the statistics are the blocking
 * exchange's. */
ACCEL_TEST(mpi, begun_exchanges_end_in_order, .init = mpi_up, .fini = mpi_down)
{
    amp_accelerator_view *q = default_view(acc);
    const amp_mpi_path paths[] = {AMP_MPI_PATH_HOST, AMP_MPI_PATH_STAGED};
    for (int k = 0; k < 2; ++k) {
        amp_mpi_exchange *x = self_exchange(q, sizeof(float), paths[k]);
        amp_array *arr = NULL;
        amp_array_view *v = NULL;
        float grid[R * C];
        for (int i = 0; i < R * C; ++i) grid[i] = POISON_F32;
        if (paths[k] == AMP_MPI_PATH_HOST) v = test_view(grid, sizeof(float), amp_extent_2d(R, C), AMP_READ_WRITE);
        else arr = poisoned_array(q, &v);
        device_fill(acc, q, v, 9.0f);
        amp_array_view *s1 = section(v, 1, 0, 1, C), *r1 = section(v, 0, 0, 1, C);
        amp_array_view *s2 = section(v, 2, 0, 1, C), *r2 = section(v, R - 1, 0, 1, C);
        amp_mpi_halo h1 = {s1, r1, 0, 1, 1}, h2 = {s2, r2, 0, 2, 2};
        amp_mpi_pending a = {77}, b = {77}, none = {0}, later = {99};
        bool done = true;
        ASSERT_MPI_STATUS(amp_mpi_exchange_begin(x, &h1, 1, NULL), AMP_ERROR_INVALID_ARGUMENT);
        ASSERT_MPI_STATUS(amp_mpi_exchange_begin(NULL, &h1, 1, &a), AMP_ERROR_INVALID_ARGUMENT);
        cr_assert_eq(a.id, 0, "a failed begin leaves 0");
        ASSERT_MPI_OK(amp_mpi_exchange_begin(x, &h1, 1, &a));
        ASSERT_MPI_OK(amp_mpi_exchange_begin(x, &h2, 1, &b));
        cr_assert(a.id != 0 && b.id == a.id + 1, "ids %llu, %llu", (unsigned long long)a.id, (unsigned long long)b.id);
        ASSERT_MPI_STATUS(amp_mpi_exchange_end(x, b), AMP_ERROR_INVALID_ARGUMENT);
        cr_assert(strstr(amp_mpi_last_error(), "not the oldest in flight"), "message: %s", amp_mpi_last_error());
        ASSERT_MPI_STATUS(amp_mpi_exchange_end(x, none), AMP_ERROR_INVALID_ARGUMENT);
        cr_assert(strstr(amp_mpi_last_error(), "no exchange #0"), "message: %s", amp_mpi_last_error());
        ASSERT_MPI_STATUS(amp_mpi_exchange_test(x, later, &done), AMP_ERROR_INVALID_ARGUMENT);
        cr_assert(!done);
        ASSERT_MPI_STATUS(amp_mpi_exchange_test(x, a, NULL), AMP_ERROR_INVALID_ARGUMENT);
        ASSERT_MPI_STATUS(amp_mpi_exchange_destroy(x), AMP_ERROR_BUSY);
        cr_assert(strstr(amp_mpi_last_error(), "still in flight"), "message: %s", amp_mpi_last_error());
        /* A blocking exchange cannot end before them: refused, and nothing
         * begun. Before, it began, its end was refused, and it stayed in
         * flight with no handle to end it by (destroy then said busy). */
        amp_mpi_halo h3 = {s1, r1, 0, 3, 3};
        ASSERT_MPI_STATUS(amp_mpi_exchange_halos(x, &h3, 1), AMP_ERROR_INVALID_ARGUMENT);
        cr_assert(strstr(amp_mpi_last_error(), "amp_mpi_exchange_halos: exchange #1, begun on this exchanger, is still "
                                               "in flight"),
                  "message: %s", amp_mpi_last_error());
        ASSERT_MPI_STATUS(amp_mpi_exchange_rows(x, 0, s1, r1, 0, s2, r2), AMP_ERROR_INVALID_ARGUMENT);
        for (int spin = 0; spin < 1000000 && !done; ++spin) ASSERT_MPI_OK(amp_mpi_exchange_test(x, b, &done));
        cr_assert(done, "exchange b never finished its messages");
        ASSERT_MPI_OK(amp_mpi_exchange_end(x, a));
        ASSERT_MPI_STATUS(amp_mpi_exchange_end(x, a), AMP_ERROR_INVALID_ARGUMENT);
        cr_assert(strstr(amp_mpi_last_error(), "already ended"), "message: %s", amp_mpi_last_error());
        ASSERT_MPI_OK(amp_mpi_exchange_end(x, b));
        amp_mpi_exchange_stats st;
        ASSERT_MPI_OK(amp_mpi_exchange_get_stats(x, &st));
        cr_assert_eq(st.exchanges, 2);
        cr_assert_eq(st.bytes_sent, 2 * C * sizeof(float));
        cr_assert_eq(st.bytes_received, 2 * C * sizeof(float));
        cr_assert_eq(st.bytes_staged, paths[k] == AMP_MPI_PATH_STAGED ? 4 * C * sizeof(float) : 0);
        amp_array_view *all[] = {s1, r1, s2, r2, v};
        for (int i = 0; i < 5; ++i) ASSERT_OK(amp_array_view_destroy(all[i]));
        if (arr) ASSERT_OK(amp_array_copy_to_host(arr, grid));
        for (int c = 0; c < C; ++c) {
            cr_assert(grid[c] == cell(1, c, 9.0f), "%s: row 0 col %d = %.9g", amp_mpi_path_name(paths[k]), c,
                      (double)grid[c]);
            cr_assert(grid[(R - 1) * C + c] == cell(2, c, 9.0f), "%s: last row col %d = %.9g",
                      amp_mpi_path_name(paths[k]), c, (double)grid[(R - 1) * C + c]);
        }
        ASSERT_OK(amp_array_destroy(arr));
        ASSERT_MPI_OK(amp_mpi_exchange_destroy(x));
    }
}

/* After a refused exchange a good one with the same tags gets the fresh
 * data: nothing of the refused one was sent. Each call sends its own values
 * (base + column) and the refused call before it had the send row hold
 * mark_stale's, so a message the refused call left behind, which the good
 * receive would match first, shows as the stale values. */
static void fill_send_row(amp_array_view *send, float *grid, float base, float per_column)
{
    for (int c = 0; c < C; ++c) grid[1 * C + c] = base + per_column * (float)c;
    ASSERT_OK(amp_array_view_refresh(send));
}

static void mark_stale(amp_array_view *send, float *grid, float stale) { fill_send_row(send, grid, stale, 0.0f); }

static void exchange_fresh(amp_mpi_exchange *x, amp_array_view *send, amp_array_view *recv, float *grid, int tag,
                           float base)
{
    fill_send_row(send, grid, base, 1.0f);
    amp_mpi_halo h = {send, recv, 0, tag, tag};
    ASSERT_MPI_OK(amp_mpi_exchange_halos(x, &h, 1));
    ASSERT_OK(amp_array_view_synchronize(recv));
    for (int c = 0; c < C; ++c)
        cr_assert(grid[3 * C + c] == base + (float)c, "cell %d got %.9g, not %.9g: a refused exchange sent something",
                  c, (double)grid[3 * C + c], (double)(base + (float)c));
}

Test(mpi, refused_halos_send_nothing, .init = mpi_up, .fini = mpi_down)
{
    amp_accelerator *cpu = test_accel(TEST_ACCEL_CPU);
    amp_accelerator_view *q = default_view(cpu);
    float grid[R * C];
    double wide[R * C];
    for (int i = 0; i < R * C; ++i) grid[i] = wide[i] = 0.0;
    amp_array_view *v = test_view(grid, sizeof(float), amp_extent_2d(R, C), AMP_READ_WRITE);
    amp_array_view *w = test_view(wide, sizeof(double), amp_extent_2d(R, C), AMP_READ_WRITE);
    amp_array_view *send = section(v, 1, 0, 1, C), *recv = section(v, 3, 0, 1, C);
    amp_array_view *wrecv = section(w, 3, 0, 1, C);
    amp_mpi_exchange *x = self_exchange(q, sizeof(float), AMP_MPI_PATH_HOST);
    int *ub = NULL, flag = 0;
    cr_assert_eq(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag), MPI_SUCCESS);
    cr_assert(flag && ub, "MPI_TAG_UB is not set");
    char tag_ub[64];
    snprintf(tag_ub, sizeof tag_ub, "tag %d is not below this MPI's MPI_TAG_UB (%d)", *ub, *ub);

    amp_mpi_halo bad[] = {
        {send, recv, 1, 4, 4},  /* rank 1 of a communicator of 1 */
        {send, recv, -5, 4, 4}, /* not a rank, not MPI_PROC_NULL */
        {send, recv, 0, -1, 4}, /* negative tag */
        {send, recv, 0, 4, -2},
        {send, wrecv, 0, 4, 4}, /* a receive of 8-byte elements after a good send */
        {send, recv, 0, *ub, *ub}, /* the tag of the exchanger's leaving notices */
        {send, recv, 0, 4, *ub},
    };
    const char *says[] = {"peer 1", "peer -5", "tag -1", "tag -2", "8-byte elements", tag_ub, tag_ub};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        mark_stale(send, grid, -1.0f - (float)i);
        ASSERT_MPI_STATUS(amp_mpi_exchange_halos(x, &bad[i], 1), AMP_ERROR_INVALID_ARGUMENT);
        cr_assert(strstr(amp_mpi_last_error(), says[i]), "case %zu: %s", i, amp_mpi_last_error());
        exchange_fresh(x, send, recv, grid, 4, 100.0f + 10.0f * (float)i);
    }
    ASSERT_MPI_STATUS(amp_mpi_exchange_halos(x, NULL, 1), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_MPI_STATUS(amp_mpi_exchange_halos(NULL, bad, 1), AMP_ERROR_INVALID_ARGUMENT);
    amp_mpi_exchange_stats s;
    ASSERT_MPI_OK(amp_mpi_exchange_get_stats(x, &s));
    cr_assert_eq(s.exchanges, 7, "only the good exchanges count: %llu", (unsigned long long)s.exchanges);
    ASSERT_MPI_OK(amp_mpi_exchange_destroy(x));

    /* An exchanger of 8-byte elements refuses float views on every path,
     * before anything is sent. */
    const amp_mpi_path paths[] = {AMP_MPI_PATH_HOST, AMP_MPI_PATH_STAGED, AMP_MPI_PATH_DEVICE};
    for (int i = 0; i < 3; ++i) {
        amp_mpi_exchange *x8 = self_exchange(q, sizeof(double), paths[i]);
        amp_array *a = NULL;
        amp_array_view *av = v, *as = send, *ar = recv;
        if (paths[i] != AMP_MPI_PATH_HOST) {
            a = poisoned_array(q, &av);
            as = section(av, 1, 0, 1, C);
            ar = section(av, 3, 0, 1, C);
        }
        amp_mpi_halo h = {as, ar, 0, 6, 6};
        if (!a) mark_stale(send, grid, -20.0f - (float)i);
        ASSERT_MPI_STATUS(amp_mpi_exchange_halos(x8, &h, 1), AMP_ERROR_INVALID_ARGUMENT);
        cr_assert(strstr(amp_mpi_last_error(), "element"), "%s path: %s", amp_mpi_path_name(paths[i]),
                  amp_mpi_last_error());
        if (a) {
            ASSERT_OK(amp_array_view_destroy(as));
            ASSERT_OK(amp_array_view_destroy(ar));
            ASSERT_OK(amp_array_view_destroy(av));
            ASSERT_OK(amp_array_destroy(a));
        }
        ASSERT_MPI_OK(amp_mpi_exchange_destroy(x8));
    }
    x = self_exchange(q, sizeof(float), AMP_MPI_PATH_HOST);
    exchange_fresh(x, send, recv, grid, 6, 300.0f);
    ASSERT_MPI_OK(amp_mpi_exchange_destroy(x));

    /* An MPI whose MPI_TAG_UB is the least the standard allows: a tag past
     * it is refused before anything is posted, naming the tag and the
     * limit, and the exchanger works on. Before, only MPI_TAG_UB itself was
     * refused, and a larger tag failed in MPI_Isend or MPI_Irecv, which
     * broke the exchanger (AMP_ERROR_DEVICE). */
    fake_tag_ub = 32767;
    x = self_exchange(q, sizeof(float), AMP_MPI_PATH_HOST);
    ASSERT_MPI_OK(amp_mpi_exchange_set_timeout(x, 3000)); /* a receive nothing matches must not hang */
    amp_mpi_halo past[] = {{send, recv, 0, 32768, 32768}, {send, recv, 0, 2147483647, 2147483647},
                           {NULL, recv, 0, 0, 40000}, {send, recv, 0, 32767, 32767}};
    /* One check of one bound, one message (before: one for the bound, one
     * for the tags past it). */
    const char *past_says[] = {"halo 0: tag 32768 is not below this MPI's MPI_TAG_UB (32767), which the exchanger "
                               "keeps for its peers' leaving notices: a halo's tags are 0 to 32766",
                               "halo 0: tag 2147483647 is not below this MPI's MPI_TAG_UB (32767)",
                               "halo 0: tag 40000 is not below", "halo 0: tag 32767 is not below this MPI's MPI_TAG_UB "
                               "(32767), which the exchanger keeps for its peers' leaving notices: a halo's tags are 0 "
                               "to 32766"};
    for (size_t i = 0; i < sizeof past / sizeof past[0]; ++i) {
        mark_stale(send, grid, -40.0f - (float)i);
        ASSERT_MPI_STATUS(amp_mpi_exchange_halos(x, &past[i], 1), AMP_ERROR_INVALID_ARGUMENT);
        cr_assert(strstr(amp_mpi_last_error(), past_says[i]), "case %zu: %s", i, amp_mpi_last_error());
        exchange_fresh(x, send, recv, grid, 32766, 400.0f + 10.0f * (float)i);
    }
    ASSERT_MPI_OK(amp_mpi_exchange_destroy(x));
    fake_tag_ub = 0;
    ASSERT_OK(amp_array_view_destroy(send));
    ASSERT_OK(amp_array_view_destroy(recv));
    ASSERT_OK(amp_array_view_destroy(wrecv));
    ASSERT_OK(amp_array_view_destroy(w));
    ASSERT_OK(amp_array_view_destroy(v));
}

/* A receive view that shares elements with another view of its exchange
 * (the send it would overwrite, or another receive) is refused before
 * anything is sent, naming both faces, and the exchanger works on; views
 * that only interleave (neighbouring columns or boxes of one grid), and two
 * sends of the same cells, are exchanged. Host views are compared by their
 * host memory (sections of one view, and views made apart over the same
 * memory), views of arrays by the device address they are handed over by
 * (the device path). Before, such an exchange ran, and what the receive
 * held depended on the order in which the messages landed. */
static void grid_reset(float *grid, amp_array_view *v)
{
    for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c) grid[r * C + c] = cell(r, c, 0.0f);
    ASSERT_OK(amp_array_view_refresh(v));
}

Test(mpi, overlapping_receives_are_refused, .init = mpi_up, .fini = mpi_down)
{
    amp_accelerator_view *q = default_view(test_accel(TEST_ACCEL_CPU));
    float grid[R * C];
    amp_array_view *v = test_view(grid, sizeof(float), amp_extent_2d(R, C), AMP_READ_WRITE);
    grid_reset(grid, v);
    /* Row 3 as a 1-D view of its own, over the same memory. */
    amp_array_view *row3 = test_view(grid + 3 * C, sizeof(float), amp_extent_1d(C), AMP_READ_WRITE);
    amp_array_view *row3_head = NULL;
    ASSERT_OK(amp_array_view_section(row3, amp_index_1d(0), amp_extent_1d(5), &row3_head));
    amp_array_view *r1 = section(v, 1, 0, 1, C), *r3 = section(v, 3, 0, 1, C);
    amp_array_view *r1_left = section(v, 1, 0, 1, C / 2), *r1_mid = section(v, 1, C / 4, 1, C / 2);
    amp_array_view *r4 = section(v, 4, 0, 1, C), *r34 = section(v, 3, 0, 2, C);
    amp_array_view *col0 = section(v, 0, 0, R, 1), *col1 = section(v, 0, 1, R, 1), *col5 = section(v, 0, 5, R, 1);
    amp_array_view *col5_top = section(v, 0, 5, 5, 1), *box = section(v, 2, 2, 3, 3);
    amp_array_view *corner = section(v, 4, 4, 2, 2), *beside = section(v, 2, 5, 3, 3);
    amp_mpi_exchange *x = self_exchange(q, sizeof(float), AMP_MPI_PATH_HOST);
    struct {
        amp_mpi_halo h[2];
        size_t n;
        const char *says;
    } refused[] = {
        {{{r1_left, r1_mid, 0, 1, 1}}, 1,
         "halo 0 send to rank 0 (tag 1) and halo 0 receive from rank 0 (tag 1) share elements"},
        {{{NULL, r3, 0, 1, 1}, {r1, r34, 0, 2, 2}}, 2,
         "halo 0 receive from rank 0 (tag 1) and halo 1 receive from rank 0 (tag 2) share elements"},
        {{{box, NULL, 0, 1, 1}, {NULL, corner, 0, 2, 2}}, 2,
         "halo 0 send to rank 0 (tag 1) and halo 1 receive from rank 0 (tag 2) share elements"},
        {{{col5, NULL, 0, 1, 1}, {NULL, row3, 0, 2, 2}}, 2,
         "halo 0 send to rank 0 (tag 1) and halo 1 receive from rank 0 (tag 2) share elements"},
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; ++i) {
        ASSERT_MPI_STATUS(amp_mpi_exchange_halos(x, refused[i].h, refused[i].n), AMP_ERROR_INVALID_ARGUMENT);
        cr_assert(strstr(amp_mpi_last_error(), refused[i].says), "case %zu: %s", i, amp_mpi_last_error());
        ASSERT_OK(amp_array_view_synchronize(v));
        check_moved(grid, 0.0f, 0, 0, 0, 0, 0, 0, "a refused exchange");
    }

    /* Interleaved, not shared: the box and the box beside it, neighbouring
     * columns, a column and a row of its own view that stops short of it;
     * two sends of one row. */
    amp_mpi_halo both[2] = {{box, beside, 0, 1, 1}};
    ASSERT_MPI_OK(amp_mpi_exchange_halos(x, both, 1));
    ASSERT_OK(amp_array_view_synchronize(v));
    check_moved(grid, 0.0f, 2, 5, 2, 2, 3, 3, "box beside box");
    grid_reset(grid, v);
    amp_mpi_halo cols = {col1, col0, 0, 1, 1};
    ASSERT_MPI_OK(amp_mpi_exchange_halos(x, &cols, 1));
    ASSERT_OK(amp_array_view_synchronize(v));
    check_moved(grid, 0.0f, 0, 0, 0, 1, R, 1, "neighbouring columns");
    grid_reset(grid, v);
    amp_mpi_halo apart[2] = {{col5_top, NULL, 0, 1, 1}, {NULL, row3_head, 0, 1, 1}};
    ASSERT_MPI_OK(amp_mpi_exchange_halos(x, apart, 2));
    ASSERT_OK(amp_array_view_synchronize(row3));
    for (int c = 0; c < C; ++c)
        cr_assert(grid[3 * C + c] == (c < 5 ? cell(c, 5, 0.0f) : cell(3, c, 0.0f)), "row 3, column %d: %.9g", c,
                  (double)grid[3 * C + c]);
    grid_reset(grid, v);
    amp_mpi_halo twice[2] = {{r1, r3, 0, 1, 1}, {r1, r4, 0, 2, 2}};
    ASSERT_MPI_OK(amp_mpi_exchange_halos(x, twice, 2));
    ASSERT_OK(amp_array_view_synchronize(v));
    for (int c = 0; c < C; ++c)
        cr_assert(grid[3 * C + c] == cell(1, c, 0.0f) && grid[4 * C + c] == cell(1, c, 0.0f),
                  "rows 3 and 4, column %d: %.9g, %.9g", c, (double)grid[3 * C + c], (double)grid[4 * C + c]);
    ASSERT_MPI_OK(amp_mpi_exchange_destroy(x));

    /* Views of an array, by device address. */
    amp_array_view *av = NULL;
    amp_array *a = poisoned_array(q, &av);
    amp_array_view *a1 = section(av, 1, 0, 1, C), *a3 = section(av, 3, 0, 1, C), *a34 = section(av, 3, 0, 2, C);
    x = self_exchange(q, sizeof(float), AMP_MPI_PATH_DEVICE);
    amp_mpi_halo dev[2] = {{NULL, a3, 0, 1, 1}, {a1, a34, 0, 2, 2}};
    ASSERT_MPI_STATUS(amp_mpi_exchange_halos(x, dev, 2), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_mpi_last_error(),
                     "halo 0 receive from rank 0 (tag 1) and halo 1 receive from rank 0 (tag 2) share elements"),
              "device path: %s", amp_mpi_last_error());
    /* A host view over the array's memory (known from the plan on) and a
     * view of the array (known once handed over): the check after the
     * sides are ready compares this pair too (it compares only the pairs
     * with a side whose address came late; the plan's check the others). */
    float *mem = amp_array_data(a);
    cr_assert_not_null(mem, "the CPU accelerator's array has no host pointer");
    amp_array_view *over3 = test_view(mem + 3 * C, sizeof(float), amp_extent_1d(C), AMP_READ_WRITE);
    amp_mpi_halo mixed[2] = {{NULL, over3, 0, 1, 1}, {a1, a34, 0, 2, 2}};
    ASSERT_MPI_OK(amp_mpi_exchange_set_timeout(x, 3000)); /* nothing sends tag 1: no hang if it ran */
    ASSERT_MPI_STATUS(amp_mpi_exchange_halos(x, mixed, 2), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_mpi_last_error(),
                     "halo 0 receive from rank 0 (tag 1) and halo 1 receive from rank 0 (tag 2) share elements"),
              "host view and array view: %s", amp_mpi_last_error());
    ASSERT_OK(amp_array_view_destroy(over3));
    amp_mpi_halo fine = {a1, a3, 0, 1, 1};
    ASSERT_MPI_OK(amp_mpi_exchange_halos(x, &fine, 1));
    ASSERT_MPI_OK(amp_mpi_exchange_destroy(x));

    amp_array_view *all[] = {a1, a3, a34, av, row3_head, row3, r1, r1_left, r1_mid, r3, r4, r34, col0, col1, col5, col5_top,
                             box, corner, beside, v};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) ASSERT_OK(amp_array_view_destroy(all[i]));
    ASSERT_OK(amp_array_destroy(a));
}

/* ------------------------------------------------- chunked faces, one rank */

/* An exchanger of floats on MPI_COMM_SELF that cuts faces into 4096-byte
 * chunks (1024 floats). */
static amp_mpi_exchange *chunked_self_exchange(amp_accelerator_view *q, amp_mpi_path path)
{
    setenv("AMP_MPI_CHUNK_BYTES", "4096", 1);
    amp_mpi_exchange *x = self_exchange(q, sizeof(float), path);
    unsetenv("AMP_MPI_CHUNK_BYTES");
    return x;
}

/* AMP_MPI_CHUNK_BYTES cuts a face into messages by its element count
 * alone, whatever the shapes of the two sides (6000 floats, 6 messages
 * each, most of them across rows): a strided 2000 x 3 section of host
 * memory arrives in a 3 x 40 x 50 box of an array (strided in two
 * dimensions: chunks across planes too), a 1-D array in a 2 x 3000
 * section of an array, and a 2 x 3000 section of host memory in a 1-D view
 * of host memory; in place, by pointer and staged (on a GPU: staged, the
 * contiguous arrays' chunks each copied on the copy stream). The elements
 * arrive in row-major order and nothing around the faces changes. Before,
 * each side cut its own view into chunks of whole rows of its first
 * dimension longer than 1, so the two sides' messages did not meet (a size
 * error, or a wait that only the time-out ended). */
ACCEL_TEST(mpi, chunks_are_cut_by_element_count_not_by_shape, .init = mpi_up, .fini = mpi_down, .timeout = 120)
{
    enum { N = 6000, HR = 2000, HC = 5, P0 = 4, P1 = 40, P2 = 60, GR = 3, GC = 3000 };
    amp_accelerator_view *q = default_view(acc);
    const bool gpu = !info_of(acc).is_emulated;
    static float hs[HR * HC], a3[P0 * P1 * P2], a1[N], ag[GR * GC], hg[GR * GC], h1[N];
    /* On a GPU the host path refuses arrays, and the device path needs a
     * GPU-aware MPI. */
    const amp_mpi_path paths[] = {AMP_MPI_PATH_STAGED, AMP_MPI_PATH_HOST, AMP_MPI_PATH_DEVICE};
    for (int p = 0; p < (gpu ? 1 : 3); ++p) {
        const char *name = amp_mpi_path_name(paths[p]);
        for (int i = 0; i < HR * HC; ++i) hs[i] = (float)i;
        for (int i = 0; i < P0 * P1 * P2; ++i) a3[i] = POISON_F32;
        for (int i = 0; i < N; ++i) a1[i] = (float)(100000 + i), h1[i] = POISON_F32;
        for (int i = 0; i < GR * GC; ++i) ag[i] = POISON_F32, hg[i] = (float)(200000 + i);
        amp_array *arr3 = NULL, *arr1 = NULL, *arrg = NULL;
        amp_array_view *v3 = NULL, *v1 = NULL, *vg = NULL, *send_a = NULL, *recv_a = NULL, *recv_b = NULL;
        amp_array_view *send_c = NULL;
        amp_array_view *vhs = test_view(hs, sizeof(float), amp_extent_2d(HR, HC), AMP_READ_WRITE);
        amp_array_view *vhg = test_view(hg, sizeof(float), amp_extent_2d(GR, GC), AMP_READ_WRITE);
        amp_array_view *recv_c = test_view(h1, sizeof(float), amp_extent_1d(N), AMP_READ_WRITE);
        ASSERT_OK(amp_array_view_section(vhs, amp_index_2d(0, 1), amp_extent_2d(HR, 3), &send_a));
        ASSERT_OK(amp_array_view_section(vhg, amp_index_2d(0, 0), amp_extent_2d(2, GC), &send_c));
        ASSERT_OK(amp_array_create(q, sizeof(float), amp_extent_3d(P0, P1, P2), a3, &arr3));
        ASSERT_OK(amp_array_create(q, sizeof(float), amp_extent_1d(N), a1, &arr1));
        ASSERT_OK(amp_array_create(q, sizeof(float), amp_extent_2d(GR, GC), ag, &arrg));
        ASSERT_OK(amp_array_view_of_array(arr3, &v3));
        ASSERT_OK(amp_array_view_of_array(arr1, &v1));
        ASSERT_OK(amp_array_view_of_array(arrg, &vg));
        ASSERT_OK(amp_array_view_section(v3, amp_index_3d(1, 0, 5), amp_extent_3d(3, P1, 50), &recv_a));
        ASSERT_OK(amp_array_view_section(vg, amp_index_2d(1, 0), amp_extent_2d(2, GC), &recv_b));
        amp_mpi_exchange *x = chunked_self_exchange(q, paths[p]);
        ASSERT_MPI_OK(amp_mpi_exchange_set_timeout(x, 10000));
        amp_mpi_halo h[3] = {{send_a, recv_a, 0, 1, 1}, {v1, recv_b, 0, 2, 2}, {send_c, recv_c, 0, 3, 3}};
        amp_status st = amp_mpi_exchange_halos(x, h, 3);
        cr_assert_eq(st, AMP_OK, "%s path: %s: %s", name, amp_status_name(st), amp_mpi_last_error());
        amp_mpi_exchange_stats s;
        ASSERT_MPI_OK(amp_mpi_exchange_get_stats(x, &s));
        cr_assert_eq(s.messages_sent, 18, "%s path: %llu messages sent", name, (unsigned long long)s.messages_sent);
        cr_assert_eq(s.messages_received, 18, "%s path", name);
        cr_assert_eq(s.bytes_sent, 3 * N * sizeof(float), "%s path", name);
        amp_array_view *views[] = {send_a, recv_a, recv_b, send_c, recv_c, v3, v1, vg, vhs, vhg};
        for (int i = 0; i < 10; ++i) ASSERT_OK(amp_array_view_destroy(views[i]));
        ASSERT_OK(amp_array_copy_to_host(arr3, a3));
        ASSERT_OK(amp_array_copy_to_host(arrg, ag));
        ASSERT_OK(amp_array_destroy(arr3));
        ASSERT_OK(amp_array_destroy(arr1));
        ASSERT_OK(amp_array_destroy(arrg));
        ASSERT_MPI_OK(amp_mpi_exchange_destroy(x));
        for (int k = 0; k < N; ++k) {
            int at = (1 + k / (P1 * 50)) * P1 * P2 + (k / 50 % P1) * P2 + 5 + k % 50;
            float want = (float)((k / 3) * HC + 1 + k % 3);
            cr_assert(a3[at] == want, "%s path: element %d of the 3-D face is %.9g, want %.9g", name, k,
                      (double)a3[at], (double)want);
            a3[at] = POISON_F32;
            cr_assert(ag[GC + k] == (float)(100000 + k), "%s path: element %d of the 2-D face is %.9g", name, k,
                      (double)ag[GC + k]);
            cr_assert(h1[k] == (float)(200000 + k), "%s path: element %d of the 1-D face is %.9g", name, k,
                      (double)h1[k]);
        }
        for (int i = 0; i < P0 * P1 * P2; ++i)
            cr_assert(a3[i] == POISON_F32, "%s path: element %d outside the 3-D face changed", name, i);
        for (int i = 0; i < GC; ++i) cr_assert(ag[i] == POISON_F32, "%s path: row 0 of the 2-D array changed", name);
    }
}

/* A face sent in chunks keeps nothing of the caller's views once the
 * exchange ended (the header asks views to live only until then): with
 * the views destroyed, the array is destroyed while the exchanger still
 * lives, after a blocking and a begun exchange, staged and by pointer.
 * Before, the exchanger kept a section of the array per chunk until it was
 * destroyed, and amp_array_destroy said AMP_ERROR_BUSY. */
Test(mpi, chunked_faces_keep_no_view_after_the_exchange, .init = mpi_up, .fini = mpi_down, .timeout = 60)
{
    enum { W2 = 2048 };
    amp_accelerator_view *q = default_view(test_accel(TEST_ACCEL_CPU));
    const amp_mpi_path paths[] = {AMP_MPI_PATH_HOST, AMP_MPI_PATH_STAGED};
    static float h[4 * W2];
    for (int p = 0; p < 2; ++p) {
        const char *name = amp_mpi_path_name(paths[p]);
        for (int i = 0; i < 4 * W2; ++i) h[i] = (float)i;
        amp_array *a = NULL;
        amp_array_view *v = NULL, *send = NULL, *recv = NULL;
        ASSERT_OK(amp_array_create(q, sizeof(float), amp_extent_2d(4, W2), h, &a));
        ASSERT_OK(amp_array_view_of_array(a, &v));
        ASSERT_OK(amp_array_view_section(v, amp_index_2d(0, 0), amp_extent_2d(1, W2), &send));
        ASSERT_OK(amp_array_view_section(v, amp_index_2d(3, 0), amp_extent_2d(1, W2), &recv));
        amp_mpi_exchange *x = chunked_self_exchange(q, paths[p]);
        amp_mpi_halo hh = {send, recv, 0, 1, 1};
        ASSERT_MPI_OK(amp_mpi_exchange_halos(x, &hh, 1));
        amp_mpi_pending pend;
        ASSERT_MPI_OK(amp_mpi_exchange_begin(x, &hh, 1, &pend));
        ASSERT_MPI_OK(amp_mpi_exchange_end(x, pend));
        amp_mpi_exchange_stats s;
        ASSERT_MPI_OK(amp_mpi_exchange_get_stats(x, &s));
        /* Two full chunks and the empty last one, twice. */
        cr_assert_eq(s.messages_sent, 6, "%s path: %llu messages", name, (unsigned long long)s.messages_sent);
        ASSERT_OK(amp_array_view_destroy(send));
        ASSERT_OK(amp_array_view_destroy(recv));
        ASSERT_OK(amp_array_view_destroy(v));
        ASSERT_OK(amp_array_copy_to_host(a, h));
        amp_status st = amp_array_destroy(a);
        cr_assert_eq(st, AMP_OK, "%s path: amp_array_destroy after the exchanges ended: %s: %s", name,
                     amp_status_name(st), amp_last_error());
        for (int c = 0; c < W2; ++c) cr_assert(h[3 * W2 + c] == (float)c, "%s path: column %d of row 3", name, c);
        ASSERT_MPI_OK(amp_mpi_exchange_destroy(x));
    }
}

/* A time-out names the chunk of each face still pending (2048 floats: two
 * full chunks and the empty last one, which says where the face ends). */
Test(mpi, chunked_timeout_names_the_chunks, .init = mpi_up, .fini = mpi_down, .timeout = 30)
{
    amp_accelerator_view *q = default_view(test_accel(TEST_ACCEL_CPU));
    static float grid[2 * 2048];
    amp_array_view *v = test_view(grid, sizeof(float), amp_extent_2d(2, 2048), AMP_READ_WRITE);
    amp_array_view *recv = section(v, 1, 0, 1, 2048);
    amp_mpi_exchange *x = chunked_self_exchange(q, AMP_MPI_PATH_HOST);
    ASSERT_MPI_OK(amp_mpi_exchange_set_timeout(x, 100));
    amp_mpi_halo h = {NULL, recv, 0, 3, 4}; /* nothing is sent with tag 4 */
    ASSERT_MPI_STATUS(amp_mpi_exchange_halos(x, &h, 1), AMP_ERROR_TIMEOUT);
    const char *says[] = {"halo 0 receive from rank 0 (tag 4, chunk 1 of 3)",
                          "halo 0 receive from rank 0 (tag 4, chunk 2 of 3)",
                          "halo 0 receive from rank 0 (tag 4, chunk 3 of 3)"};
    for (int i = 0; i < 3; ++i)
        cr_assert(strstr(amp_mpi_last_error(), says[i]), "no \"%s\" in: %s", says[i], amp_mpi_last_error());
    ASSERT_MPI_OK(amp_mpi_exchange_destroy(x));
    ASSERT_OK(amp_array_view_destroy(recv));
    ASSERT_OK(amp_array_view_destroy(v));
}

/* A 1-D face of n floats, values base + i: a view of host memory (in
 * place) on the host path, a view of an array on q (staged) otherwise. */
typedef struct chunk_face {
    float host[4 * 1024 + 16];
    amp_array *a;
    amp_array_view *v;
    int n;
} chunk_face;

static void chunk_face_make(chunk_face *f, amp_accelerator_view *q, amp_mpi_path path, int n, float base)
{
    f->n = n;
    for (int i = 0; i < n; ++i) f->host[i] = base + (float)i;
    f->a = NULL;
    if (path == AMP_MPI_PATH_HOST) {
        f->v = test_view(f->host, sizeof(float), amp_extent_1d(n), AMP_READ_WRITE);
        return;
    }
    ASSERT_OK(amp_array_create(q, sizeof(float), amp_extent_1d(n), f->host, &f->a));
    ASSERT_OK(amp_array_view_of_array(f->a, &f->v));
}

/* Back in f->host, then gone. */
static void chunk_face_free(chunk_face *f)
{
    ASSERT_OK(amp_array_view_destroy(f->v));
    if (f->a) {
        ASSERT_OK(amp_array_copy_to_host(f->a, f->host));
        ASSERT_OK(amp_array_destroy(f->a));
    }
}

/* Faces sent in chunks whose element counts differ between the two sides
 * (1024 floats a chunk), where the receiving side has more chunks, or as
 * many with more in the last: the receive returns AMP_ERROR_INVALID_ARGUMENT
 * naming the bytes the peer's face holds and the bytes the receive view
 * holds, its receives of chunks that will not come are withdrawn, and the
 * next exchange with the same tag gets its own data. Before, it waited for
 * those chunks for ever (here: until its 10 s time-out). The sending side
 * having more chunks is mpi_ranks/large_faces_move_in_chunks's (Open MPI's
 * transport to the process itself writes a message longer than its
 * receive past the receive buffer). */
Test(mpi, chunked_faces_of_different_counts_are_refused, .init = mpi_up, .fini = mpi_down, .timeout = 120)
{
    enum { PER = 1024 };
    amp_accelerator_view *q = default_view(test_accel(TEST_ACCEL_CPU));
    static const struct {
        int ns, nr;
    } cases[] = {
        {2 * PER, 3 * PER},             /* a full chunk fewer sent */
        {2 * PER + 500, 3 * PER + 500}, /* fewer chunks, the last ones alike */
        {2 * PER + 500, 3 * PER},
        {1000, 3 * PER},                /* a face sent whole into chunks */
        {1000, PER},
        {2 * PER + 300, 2 * PER + 500}, /* as many chunks, the last one shorter */
    };
    const amp_mpi_path paths[] = {AMP_MPI_PATH_HOST, AMP_MPI_PATH_STAGED};
    static chunk_face s, r, gs, gr;
    for (int p = 0; p < 2; ++p) {
        const char *name = amp_mpi_path_name(paths[p]);
        amp_mpi_exchange *x = chunked_self_exchange(q, paths[p]);
        ASSERT_MPI_OK(amp_mpi_exchange_set_timeout(x, 10000));
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
            chunk_face_make(&s, q, paths[p], cases[c].ns, 1.0f);
            chunk_face_make(&r, q, paths[p], cases[c].nr, POISON_F32);
            amp_mpi_halo h = {s.v, r.v, 0, 5, 5};
            amp_status st = amp_mpi_exchange_halos(x, &h, 1);
            cr_assert_eq(st, AMP_ERROR_INVALID_ARGUMENT, "%s path, %d floats sent, %d received: %s: %s", name,
                         cases[c].ns, cases[c].nr, amp_status_name(st), amp_mpi_last_error());
            char sent[48], holds[48];
            snprintf(sent, sizeof sent, "sent %d bytes", cases[c].ns * 4);
            snprintf(holds, sizeof holds, "holds %d bytes", cases[c].nr * 4);
            const char *says[] = {"halo 0 receive from rank 0 (tag 5", sent, holds};
            for (int k = 0; k < 3; ++k)
                cr_assert(strstr(amp_mpi_last_error(), says[k]),
                          "%s path, %d floats sent, %d received: no \"%s\" in: %s", name, cases[c].ns, cases[c].nr,
                          says[k], amp_mpi_last_error());
            chunk_face_free(&s);
            chunk_face_free(&r);
            /* Nothing of the face is left to meet the next exchange. */
            chunk_face_make(&gs, q, paths[p], 2 * PER + 7, 50000.0f);
            chunk_face_make(&gr, q, paths[p], 2 * PER + 7, POISON_F32);
            h = (amp_mpi_halo){gs.v, gr.v, 0, 5, 5};
            st = amp_mpi_exchange_halos(x, &h, 1);
            cr_assert_eq(st, AMP_OK, "%s path, after %d floats sent, %d received: %s: %s", name, cases[c].ns,
                         cases[c].nr, amp_status_name(st), amp_mpi_last_error());
            chunk_face_free(&gs);
            chunk_face_free(&gr);
            for (int i = 0; i < 2 * PER + 7; ++i)
                cr_assert(gr.host[i] == 50000.0f + (float)i, "%s path, after %d floats sent, %d received: element %d "
                          "of the next exchange is %.9g", name, cases[c].ns, cases[c].nr, i, (double)gr.host[i]);
        }
        ASSERT_MPI_OK(amp_mpi_exchange_destroy(x));
    }
}

/* ------------------------------------------------- refusals, copying CPU */

/* v's data made newer on the device than in host memory (a vendor library
 * wrote it through the device address): element i is base + i. */
static void device_newer(amp_array_view *v, amp_accelerator_view *q, float base)
{
    float *dev = NULL;
    ASSERT_OK(amp_array_view_native_handle(v, q, AMP_READ_WRITE, (void **)&dev));
    for (int i = 0; i < 8; ++i) dev[i] = base + (float)i;
}

/* v's current data is base + i. */
static void holds(amp_array_view *v, const float *host, float base, const char *what)
{
    ASSERT_OK(amp_array_view_synchronize(v));
    for (int i = 0; i < 8; ++i)
        cr_assert(host[i] == base + (float)i, "%s: element %d of the earlier receive view is %.9g, want %.9g",
                  what, i, (double)host[i], (double)(base + (float)i));
}

/* An exchange refused in begin ("nothing is sent") leaves every view as it
 * was, also the receive views of the halos before the one refused: on a
 * copying accelerator (the CPU with AMP_CPU_UNIFIED=0, as a discrete GPU)
 * a receive view in place whose newer data is on the device keeps it,
 * whether a later halo is refused in the checks (an empty view, refused
 * as such, naming the halo) or when it is handed over (an AMP_READ_ONLY
 * receive view of an array, by pointer). Before, begin dropped the earlier
 * receive's device data before it checked the later halos. */
Test(mpi, refused_exchanges_leave_the_views_alone, .init = mpi_up, .fini = mpi_down)
{
    setenv("AMP_CPU_UNIFIED", "0", 1); /* before hipamp starts in this process */
    amp_accelerator *cpu = test_accel(TEST_ACCEL_CPU);
    if (info_of(cpu).is_unified_memory) cr_skip_test("the CPU accelerator is unified here (AMP_UNIFIED_MEMORY=on?)");
    amp_accelerator_view *q = default_view(cpu);
    float h[8] = {0}, s[8];
    for (int i = 0; i < 8; ++i) s[i] = 500.0f + (float)i;
    amp_array_view *v = test_view(h, sizeof(float), amp_extent_1d(8), AMP_READ_WRITE);
    amp_array_view *sv = test_view(s, sizeof(float), amp_extent_1d(8), AMP_READ_WRITE);
    amp_array_view *empty = NULL, *av = NULL, *ro = NULL;
    ASSERT_OK(amp_array_view_section(sv, amp_index_1d(0), amp_extent_1d(0), &empty));
    amp_array *a = NULL;
    ASSERT_OK(amp_array_create(q, sizeof(float), amp_extent_1d(8), NULL, &a));
    ASSERT_OK(amp_array_view_of_array(a, &av));
    ASSERT_OK(amp_array_view_read_only(av, &ro));
    amp_mpi_exchange *x = self_exchange(q, sizeof(float), AMP_MPI_PATH_HOST);

    device_newer(v, q, 42.0f);
    amp_mpi_halo empty_send[2] = {{NULL, v, 0, 1, 1}, {empty, NULL, 0, 2, 2}};
    ASSERT_MPI_STATUS(amp_mpi_exchange_halos(x, empty_send, 2), AMP_ERROR_INVALID_ARGUMENT);
    const char *says[] = {"halo 1 send to rank 0", "the view is empty (extent {0}, no elements)"};
    for (int i = 0; i < 2; ++i)
        cr_assert(strstr(amp_mpi_last_error(), says[i]), "no \"%s\" in: %s", says[i], amp_mpi_last_error());
    cr_assert(!strstr(amp_mpi_last_error(), "fit one MPI message"), "%s", amp_mpi_last_error());
    holds(v, h, 42.0f, "an empty send refused");

    device_newer(v, q, 60.0f);
    amp_mpi_halo empty_recv[2] = {{NULL, v, 0, 1, 1}, {NULL, empty, 0, 2, 2}};
    ASSERT_MPI_STATUS(amp_mpi_exchange_halos(x, empty_recv, 2), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_mpi_last_error(), "halo 1 receive from rank 0 (tag 2): the view is empty"), "%s",
              amp_mpi_last_error());
    holds(v, h, 60.0f, "an empty receive refused");

    device_newer(v, q, 80.0f);
    amp_mpi_halo read_only[2] = {{NULL, v, 0, 1, 1}, {NULL, ro, 0, 2, 2}};
    ASSERT_MPI_STATUS(amp_mpi_exchange_halos(x, read_only, 2), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_mpi_last_error(), "halo 1 receive from rank 0") &&
                  strstr(amp_mpi_last_error(), "AMP_READ_ONLY"),
              "%s", amp_mpi_last_error());
    holds(v, h, 80.0f, "an AMP_READ_ONLY receive by pointer refused");

    /* The exchanger works on: nothing of the refused exchanges was sent. */
    amp_mpi_halo good = {sv, v, 0, 3, 3};
    ASSERT_MPI_OK(amp_mpi_exchange_halos(x, &good, 1));
    holds(v, h, 500.0f, "the good exchange");
    ASSERT_MPI_OK(amp_mpi_exchange_destroy(x));
    amp_array_view *views[] = {empty, ro, av, sv, v};
    for (int i = 0; i < 5; ++i) ASSERT_OK(amp_array_view_destroy(views[i]));
    ASSERT_OK(amp_array_destroy(a));
}

/* An AMP_READ_ONLY view given as a halo to receive into is refused in
 * begin on every path available here (host, staged, device; nccl with the
 * stand-in library), whatever the view (of host memory, of an array, a
 * strided section that the staged and NCCL paths pack), naming the halo
 * and saying why, and nothing is written into it. Before, the host path
 * wrote a read-only host view in place and the staged path copied into a
 * read-only view, while the device and NCCL paths refused one handed over
 * by pointer (after the earlier halos were made ready). */
Test(mpi, read_only_receive_views_are_refused_on_every_path, .init = mpi_up, .fini = mpi_down)
{
    amp_accelerator *cpu = test_accel(TEST_ACCEL_CPU);
    amp_accelerator_view *q = default_view(cpu);
    float s[16], h[16], init[16];
    for (int i = 0; i < 16; ++i) s[i] = 500.0f + (float)i, h[i] = init[i] = -1.0f - (float)i;
    amp_array *a = NULL;
    ASSERT_OK(amp_array_create(q, sizeof(float), amp_extent_2d(2, 8), init, &a));
    amp_array_view *sv = test_view(s, sizeof(float), amp_extent_2d(2, 8), AMP_READ_WRITE);
    amp_array_view *hv = test_view(h, sizeof(float), amp_extent_2d(2, 8), AMP_READ_ONLY);
    amp_array_view *av = NULL, *aro = NULL, *acol = NULL, *scol = NULL, *hcol = NULL;
    ASSERT_OK(amp_array_view_of_array(a, &av));
    ASSERT_OK(amp_array_view_read_only(av, &aro));
    ASSERT_OK(amp_array_view_section(aro, amp_index_2d(0, 2), amp_extent_2d(2, 3), &acol));
    ASSERT_OK(amp_array_view_section(sv, amp_index_2d(0, 2), amp_extent_2d(2, 3), &scol));
    ASSERT_OK(amp_array_view_section(hv, amp_index_2d(0, 2), amp_extent_2d(2, 3), &hcol));
    struct {
        amp_array_view *send, *recv;
        const char *what;
    } kinds[] = {{sv, hv, "a read-only host view"}, {sv, aro, "a read-only view of an array"},
                 {scol, acol, "a read-only strided section of an array"}, {scol, hcol, "a read-only strided host view"}};
    amp_mpi_path paths[] = {AMP_MPI_PATH_HOST, AMP_MPI_PATH_STAGED, AMP_MPI_PATH_DEVICE, AMP_MPI_PATH_NCCL};
    for (int p = 0; p < 4; ++p) {
        amp_mpi_exchange *x = NULL;
        if (paths[p] == AMP_MPI_PATH_NCCL) {
#ifndef HIPAMP_FAKE_NCCL
            continue;
#else
            use_fake_nccl();
            /* The stand-in's communicator is MPI_COMM_WORLD's: this singleton. */
            ASSERT_MPI_OK(amp_mpi_exchange_create(MPI_COMM_WORLD, q, sizeof(float), AMP_MPI_PATH_NCCL, &x));
            unsetenv("AMP_MPI_NCCL_LIBRARY");
            amp_mpi_path_info pi;
            ASSERT_MPI_OK(amp_mpi_exchange_get_path(x, &pi));
            cr_assert_eq(pi.path, AMP_MPI_PATH_NCCL, "nccl: got %s: %s", amp_mpi_path_name(pi.path), pi.reason);
#endif
        } else {
            x = self_exchange(q, sizeof(float), paths[p]);
        }
        for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; ++k) {
            /* Halo 0 is good; halo 1 receives into the read-only view. */
            float s0[4] = {1, 2, 3, 4}, r0[4] = {0};
            amp_array_view *s0v = test_view(s0, sizeof(float), amp_extent_1d(4), AMP_READ_WRITE);
            amp_array_view *r0v = test_view(r0, sizeof(float), amp_extent_1d(4), AMP_READ_WRITE);
            amp_mpi_halo hs[2] = {{s0v, r0v, 0, 1, 1}, {kinds[k].send, kinds[k].recv, 0, 2, 2}};
            amp_status st = amp_mpi_exchange_halos(x, hs, 2);
            cr_assert_eq(st, AMP_ERROR_INVALID_ARGUMENT, "%s path, %s: %s (%s)", amp_mpi_path_name(paths[p]),
                         kinds[k].what, amp_status_name(st), amp_mpi_last_error());
            const char *says[] = {"halo 1 receive from rank 0", "AMP_READ_ONLY"};
            for (int i = 0; i < 2; ++i)
                cr_assert(strstr(amp_mpi_last_error(), says[i]), "%s path, %s: no \"%s\" in: %s",
                          amp_mpi_path_name(paths[p]), kinds[k].what, says[i], amp_mpi_last_error());
            ASSERT_OK(amp_array_view_destroy(s0v));
            ASSERT_OK(amp_array_view_destroy(r0v));
            for (int i = 0; i < 4; ++i)
                cr_assert(r0[i] == 0.0f, "%s path, %s: halo 0 was received", amp_mpi_path_name(paths[p]),
                          kinds[k].what);
        }
        /* Session 105's: an all-reduce into a read-only view is refused
         * before it joins the reduction, as a halo's receive is (the host
         * paths reduced, then refused the copy back: the rank had taken
         * part in a call it said it refused, and the NCCL path said a
         * native handle's refusal). */
        amp_mpi_exchange_stats before, after;
        ASSERT_MPI_OK(amp_mpi_exchange_get_stats(x, &before));
        amp_status rst = amp_mpi_exchange_allreduce(x, aro, AMP_MPI_FLOAT, AMP_MPI_SUM);
        cr_assert_eq(rst, AMP_ERROR_INVALID_ARGUMENT, "%s path: %s (%s)", amp_mpi_path_name(paths[p]),
                     amp_status_name(rst), amp_mpi_last_error());
        cr_assert(strstr(amp_mpi_last_error(), "amp_mpi_exchange_allreduce: the view is AMP_READ_ONLY"),
                  "%s path: %s", amp_mpi_path_name(paths[p]), amp_mpi_last_error());
        ASSERT_MPI_OK(amp_mpi_exchange_get_stats(x, &after));
        cr_assert_eq(after.allreduces, before.allreduces, "%s path: the refused all-reduce was counted",
                     amp_mpi_path_name(paths[p]));
        /* A face of 2 GiB or more (a view of memory that is never touched:
         * the size is refused first) is refused by one check on every path,
         * naming the face, its bytes and the limit, with its path's hint:
         * the NCCL path moves faces whole, so AMP_MPI_CHUNK_BYTES is no
         * remedy there. Before, its message offered chunks on every path,
         * then the NCCL path had a check of its own that named no bytes. */
        const size_t huge_bytes = (size_t)1 << 31;
        void *huge = mmap(NULL, huge_bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        cr_assert(huge != MAP_FAILED, "mmap of 2 GiB of address space");
        amp_array_view *hv2 = test_view(huge, sizeof(float), amp_extent_2d(1 << 15, 1 << 14), AMP_READ_WRITE);
        amp_mpi_halo too_big = {hv2, NULL, 0, 1, 1};
        ASSERT_MPI_STATUS(amp_mpi_exchange_halos(x, &too_big, 1), AMP_ERROR_INVALID_ARGUMENT);
        const bool nccl = paths[p] == AMP_MPI_PATH_NCCL;
        const char *hint = nccl ? "AMP_MPI_CHUNK_BYTES does not cut faces on the NCCL path"
                                : "AMP_MPI_CHUNK_BYTES sends a face as messages of at most that many";
        const char *big[] = {"halo 0 send to rank 0 (tag 1): the face is 2147483648 bytes (536870912 elements of 4 "
                             "bytes), more than one message moves (at most 2147483647 bytes)", hint};
        for (int i = 0; i < 2; ++i)
            cr_assert(strstr(amp_mpi_last_error(), big[i]), "%s path: no \"%s\" in: %s", amp_mpi_path_name(paths[p]),
                      big[i], amp_mpi_last_error());
        ASSERT_OK(amp_array_view_destroy(hv2));
        cr_assert_eq(munmap(huge, huge_bytes), 0);
        ASSERT_MPI_OK(amp_mpi_exchange_destroy(x));
        /* Nothing was written into the read-only views. */
        float got[16];
        ASSERT_OK(amp_array_view_synchronize(av));
        ASSERT_OK(amp_array_copy_to_host(a, got));
        for (int i = 0; i < 16; ++i) {
            cr_assert(h[i] == init[i], "%s path: element %d of the read-only host view is %.9g, want %.9g",
                      amp_mpi_path_name(paths[p]), i, (double)h[i], (double)init[i]);
            cr_assert(got[i] == init[i], "%s path: element %d of the read-only array view is %.9g, want %.9g",
                      amp_mpi_path_name(paths[p]), i, (double)got[i], (double)init[i]);
        }
    }
    amp_array_view *views[] = {scol, hcol, acol, aro, av, hv, sv};
    for (int i = 0; i < 7; ++i) ASSERT_OK(amp_array_view_destroy(views[i]));
    ASSERT_OK(amp_array_destroy(a));
}

/* ------------------------------------------------- heat_mpi under mpiexec */

typedef struct heat_run {
    int status;       /* exit status, -1 when killed */
    char out[16384];  /* stdout */
    char err[16384];  /* stderr */
} heat_run;

static void read_file(const char *path, char *buf, size_t n)
{
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f) return;
    size_t got = fread(buf, 1, n - 1, f);
    buf[got] = '\0';
    fclose(f);
}

/* mpiexec -n NP PROGRAM ARGS on the CPU accelerator, one worker thread per
 * rank, bounded by a time-out; NP 0 runs the program alone (an MPI
 * singleton). */
/* The accelerator run_mpi's ranks use: "cpu", or NULL for each rank's own
 * (amp_mpi_select_accelerator: one GPU per node-local rank). */
static const char *g_rank_accelerator = "cpu";

static void run_mpi(const char *program, int np, const char *args, heat_run *r)
{
    mpi_env();
    if (g_rank_accelerator) setenv("AMP_DEFAULT_ACCELERATOR", g_rank_accelerator, 1);
    else unsetenv("AMP_DEFAULT_ACCELERATOR");
    setenv("AMP_CPU_THREADS", "1", 1);
    char dir[] = "/tmp/hipamp-heat-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
#if defined(OPEN_MPI) && OPEN_MPI
    const char *extra = "--oversubscribe";
#else
    const char *extra = "";
#endif
    char cmd[2048];
    if (np > 0)
        snprintf(cmd, sizeof cmd, "timeout -k 5 120 '%s' %s %d %s '%s' %s > '%s/out' 2> '%s/err'", HIPAMP_MPIEXEC,
                 HIPAMP_MPIEXEC_NP, np, extra, program, args, dir, dir);
    else
        snprintf(cmd, sizeof cmd, "timeout -k 5 120 '%s' %s > '%s/out' 2> '%s/err'", program, args, dir, dir);
    int st = system(cmd);
    r->status = st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    char path[64];
    snprintf(path, sizeof path, "%s/out", dir);
    read_file(path, r->out, sizeof r->out);
    unlink(path);
    snprintf(path, sizeof path, "%s/err", dir);
    read_file(path, r->err, sizeof r->err);
    unlink(path);
    rmdir(dir);
    cr_assert_neq(r->status, 124, "mpiexec timed out: %s", cmd);
}

/* heat_mpi ARGS under mpiexec -n NP (see run_mpi). */
static void run_heat(int np, const char *args, heat_run *r)
{
#ifndef HIPAMP_HEAT_MPI
    (void)np;
    (void)args;
    (void)r;
    cr_skip_test("heat_mpi is not built (HIPAMP_BUILD_EXAMPLES=OFF)");
#else
    run_mpi(HIPAMP_HEAT_MPI, np, args, r);
#endif
}

/* The number after "key " at the start of a line of stdout. */
static double field(const heat_run *r, const char *key)
{
    size_t k = strlen(key);
    for (const char *p = r->out; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (!strncmp(p, key, k) && p[k] == ' ') return strtod(p + k + 1, NULL);
    cr_assert_fail("no \"%s\" line in heat_mpi's output:\n%s\nstderr:\n%s", key, r->out, r->err);
    return -1;
}

/* The checksum from the last line, which must be exactly "checksum" and 16
 * lowercase hex digits. */
static uint64_t last_line_checksum(const heat_run *r)
{
    cr_assert_eq(r->status, 0, "heat_mpi failed (%d):\n%s\nstderr:\n%s", r->status, r->out, r->err);
    size_t n = strlen(r->out);
    cr_assert(n > 0 && r->out[n - 1] == '\n', "output does not end with a line:\n%s", r->out);
    const char *last = r->out + n - 1;
    while (last > r->out && last[-1] != '\n') --last;
    cr_assert_eq(strlen(last), strlen("checksum ") + 16 + 1, "last line: %s", last);
    cr_assert(!strncmp(last, "checksum ", 9), "last line: %s", last);
    for (int i = 9; i < 25; ++i)
        cr_assert(strchr("0123456789abcdef", last[i]), "last line has a non-hex digit: %s", last);
    return strtoull(last + 9, NULL, 16);
}

/* The serial reference: the same initial grid and the same arithmetic, on
 * the host, hashed the same way. */
static uint64_t reference_checksum(int nx, int ny, int steps)
{
    float *a = test_xmalloc((size_t)nx * ny * sizeof(float)), *b = test_xmalloc((size_t)nx * ny * sizeof(float));
    for (int g = 0; g < ny; ++g)
        for (int c = 0; c < nx; ++c) a[g * nx + c] = heat_initial(g, c, nx, ny);
    for (int s = 0; s < steps; ++s) {
        for (int g = 0; g < ny; ++g)
            for (int c = 0; c < nx; ++c) {
                const float *o = a + g * nx + c;
                if (g == 0 || g == ny - 1 || c == 0 || c == nx - 1) b[g * nx + c] = *o;
                else b[g * nx + c] = 0.25f * ((o[-nx] + o[nx]) + (o[-1] + o[1]));
            }
        float *t = a;
        a = b;
        b = t;
    }
    uint64_t h = heat_fnv1a(HEAT_FNV_SEED, a, (size_t)nx * ny * sizeof(float));
    free(a);
    free(b);
    return h;
}

#define HEAT_NX 96
#define HEAT_NY 70
#define HEAT_STEPS 25
#define HEAT_ARGS "96 70 25"

Test(mpi_heat, one_two_and_three_ranks_match_the_serial_reference, .timeout = 600)
{
    const uint64_t want = reference_checksum(HEAT_NX, HEAT_NY, HEAT_STEPS);
    static heat_run r;
    for (int np = 1; np <= 3; ++np) {
        run_heat(np, HEAT_ARGS, &r);
        uint64_t got = last_line_checksum(&r);
        cr_assert_eq(got, want, "%d rank(s): checksum %016llx, the serial reference %016llx\n%s", np,
                     (unsigned long long)got, (unsigned long long)want, r.out);
        /* Auto on the CPU accelerator: host memory in place. */
        cr_assert(strstr(r.out, "\npath host:"), "%d rank(s) did not take the host path:\n%s", np, r.out);
        double halo = (double)(np - 1) * 2 * 2 * HEAT_NX * sizeof(float);
        cr_assert_eq(field(&r, "halo_bytes_per_step"), halo, "%d rank(s):\n%s", np, r.out);
        cr_assert_eq(field(&r, "mpi_bytes_per_step"), halo, "%d rank(s):\n%s", np, r.out);
        cr_assert_eq(field(&r, "copied_bytes_per_step"), 0, "the host path copies nothing:\n%s", r.out);
        cr_assert_gt(field(&r, "time_per_step_s"), 0);
    }
}

/* The staged path's statistics: per step, exactly one row out and one in
 * per neighbour, summed over the ranks (2 ranks: 2 x 2 rows; 3 ranks: the
 * middle one has two neighbours, 4 x 2 rows). */
Test(mpi_heat, staged_path_copies_exactly_the_halo, .timeout = 600)
{
    const uint64_t want = reference_checksum(HEAT_NX, HEAT_NY, HEAT_STEPS);
    static heat_run r;
    for (int np = 2; np <= 3; ++np) {
        run_heat(np, HEAT_ARGS " --path staged", &r);
        cr_assert_eq(last_line_checksum(&r), want, "%d ranks, staged:\n%s", np, r.out);
        double halo = (double)(np - 1) * 2 * 2 * HEAT_NX * sizeof(float);
        cr_assert_eq(field(&r, "halo_bytes_per_step"), halo, "%s", r.out);
        cr_assert_eq(field(&r, "copied_bytes_per_step"), halo, "hipamp's statistics must count exactly the halo:\n%s",
                     r.out);
        cr_assert_eq(field(&r, "staged_bytes_per_step"), halo, "%s", r.out);
        cr_assert_eq(field(&r, "mpi_bytes_per_step"), halo, "%s", r.out);
    }
    /* By pointer (the CPU accelerator's arrays are host memory): no copy. */
    run_heat(2, HEAT_ARGS " --path device", &r);
    cr_assert_eq(last_line_checksum(&r), want, "device path:\n%s", r.out);
    cr_assert_eq(field(&r, "copied_bytes_per_step"), 0, "%s", r.out);
}

/* Under AddressSanitizer (ci/test.sh's sanitizer pass) a run under
 * mpiexec costs about twice as long on CI's 2 cores, so the examples' path
 * matrices are left to the release pass (ASAN_LEAVES_IT) and the argument
 * checks run fewer of the bad arguments the parsers refuse alike; the
 * release pass runs them all, its matrices from 1 rank. */
#define MATRIX_FIRST_RANKS (TEST_UNDER_ASAN ? 3 : 1)
/* The mpi_ranks scenarios that run on 2 ranks and then on 3 run on 3 alone
 * under AddressSanitizer: 3 ranks make the same library calls as 2 (edge
 * ranks with one neighbour, and a middle rank), and each mpiexec of the
 * instrumented helper costs about 3 s of CI's 2 cores; the release pass
 * runs both counts. */
#define SCENARIO_FIRST_RANKS (TEST_UNDER_ASAN ? 3 : 2)
/* The sanitizer pass leaves the examples' matrices of paths and modes to
 * the release pass: they repeat, through heat_mpi and cg_mpi, exchanges
 * that the mpi_ranks tests run instrumented (every path, begun and
 * blocking, chunked, NCCL's stand-in), and were a quarter of the pass's
 * longest test on CI's 2 cores. One run of each example stays (the
 * serial-reference and rank-count tests, the bad arguments). */
#define ASAN_LEAVES_IT "under AddressSanitizer: the release pass runs this matrix; the mpi_ranks tests run its exchanges instrumented"

/* The overlapped step (exchange begun, interior rows, exchange ended, edge
 * rows: the default) and the old one (--no-overlap) give the serial
 * reference's checksum on 1, 2 and 3 ranks (3 only under ASan) and every path, with the same
 * bytes per step; also with ranks of 1 and 2 rows (no interior rows). */
Test(mpi_heat, overlapped_and_not_on_every_path, .timeout = 900)
{
    if (TEST_UNDER_ASAN) cr_skip_test("%s", ASAN_LEAVES_IT);
    static heat_run r;
    const uint64_t want = reference_checksum(HEAT_NX, HEAT_NY, HEAT_STEPS);
    const char *paths[] = {"host", "staged", "device"};
    for (int np = MATRIX_FIRST_RANKS; np <= 3; ++np)
        for (int p = 0; p < 3; ++p)
            for (int overlap = 0; overlap < 2; ++overlap) {
                char args[128];
                snprintf(args, sizeof args, HEAT_ARGS " --path %s%s", paths[p], overlap ? "" : " --no-overlap");
                run_heat(np, args, &r);
                cr_assert_eq(last_line_checksum(&r), want, "%d rank(s), %s:\n%s", np, args, r.out);
                cr_assert(strstr(r.out, overlap ? "\nstep overlapped" : "\nstep not overlapped"), "%s:\n%s", args,
                          r.out);
                /* What ran, not what was asked: every rank's exchange of
                 * every step, each with the interior rows' launch queued
                 * while it was in flight when overlapped (every rank has
                 * interior rows), none otherwise. */
                cr_assert_eq(field(&r, "halo_exchanges"), np * HEAT_STEPS, "%s:\n%s", args, r.out);
                cr_assert_eq(field(&r, "halo_exchanges_overlapped"), overlap ? np * HEAT_STEPS : 0, "%s:\n%s", args,
                             r.out);
                cr_assert_eq(field(&r, "queue_launches"), np * HEAT_STEPS * (overlap ? 2 : 1), "%s:\n%s", args,
                             r.out);
                cr_assert_eq(field(&r, "launches_from_graphs"), 0, "%s:\n%s", args, r.out);
                double halo = (double)(np - 1) * 2 * 2 * HEAT_NX * sizeof(float);
                cr_assert_eq(field(&r, "halo_bytes_per_step"), halo, "%s:\n%s", args, r.out);
                cr_assert_eq(field(&r, "mpi_bytes_per_step"), halo, "%s:\n%s", args, r.out);
                cr_assert_eq(field(&r, "copied_bytes_per_step"), p == 1 ? halo : 0, "%s:\n%s", args, r.out);
                /* What bench/scaling_model.py reads. */
                char inputs[160];
                snprintf(inputs, sizeof inputs,
                         "\nmodel_inputs nx %d rows_per_rank %d ranks %d overlap %d path %s time_per_step_s ", HEAT_NX,
                         (HEAT_NY + np - 1) / np, np, overlap, paths[p]);
                cr_assert(strstr(r.out, inputs), "no \"%s\" in:\n%s", inputs + 1, r.out);
            }
    /* 3 ranks of 2, 2 and 1 rows: the edge kernel alone updates them
     * (one launch a step, nothing to overlap). */
    const uint64_t small = reference_checksum(HEAT_NX, 5, 9);
    for (int overlap = 0; overlap < 2; ++overlap) {
        run_heat(3, overlap ? "96 5 9 --path staged" : "96 5 9 --path staged --no-overlap", &r);
        cr_assert_eq(last_line_checksum(&r), small, "5 rows on 3 ranks:\n%s", r.out);
        cr_assert_eq(field(&r, "halo_exchanges"), 3 * 9, "5 rows on 3 ranks:\n%s", r.out);
        cr_assert_eq(field(&r, "halo_exchanges_overlapped"), 0, "5 rows on 3 ranks:\n%s", r.out);
        cr_assert_eq(field(&r, "queue_launches"), 3 * 9, "5 rows on 3 ranks:\n%s", r.out);
    }
}

/* --graph (issue 24): each launch of the step replayed from a launch graph
 * gives the same bits as without, overlapped and not, on 1 and 3 ranks (3 only under ASan),
 * with halos in place and staged (the copies between host and device
 * then happen outside the graphs, as many bytes as without); also with
 * ranks of 1 and 2 rows (the edge kernel's graph alone). */
Test(mpi_heat, graph_replays_give_the_same_bits, .timeout = 900)
{
    if (TEST_UNDER_ASAN) cr_skip_test("%s", ASAN_LEAVES_IT);
    static heat_run r;
    const uint64_t want = reference_checksum(HEAT_NX, HEAT_NY, HEAT_STEPS);
    const char *paths[] = {"host", "staged"};
    for (int np = MATRIX_FIRST_RANKS; np <= 3; np += 2)
        for (int p = 0; p < 2; ++p)
            for (int overlap = 0; overlap < 2; ++overlap) {
                char args[128];
                snprintf(args, sizeof args, HEAT_ARGS " --graph --path %s%s", paths[p], overlap ? "" : " --no-overlap");
                run_heat(np, args, &r);
                cr_assert_eq(last_line_checksum(&r), want, "%d rank(s), %s:\n%s", np, args, r.out);
                cr_assert(strstr(r.out, "\nlaunches replayed from launch graphs"), "%s:\n%s", args, r.out);
                /* Every launch of every step came from a graph. */
                cr_assert_eq(field(&r, "queue_launches"), np * HEAT_STEPS * (overlap ? 2 : 1), "%s:\n%s", args,
                             r.out);
                cr_assert_eq(field(&r, "launches_from_graphs"), field(&r, "queue_launches"), "%s:\n%s", args, r.out);
                double halo = (double)(np - 1) * 2 * 2 * HEAT_NX * sizeof(float);
                cr_assert_eq(field(&r, "copied_bytes_per_step"), p == 1 ? halo : 0, "%s:\n%s", args, r.out);
            }
    run_heat(1, HEAT_ARGS, &r);
    cr_assert(strstr(r.out, "\nlaunches direct"), "%s", r.out);
    cr_assert_eq(field(&r, "queue_launches"), 2 * HEAT_STEPS, "%s", r.out);
    cr_assert_eq(field(&r, "launches_from_graphs"), 0, "%s", r.out);
    const uint64_t small = reference_checksum(HEAT_NX, 5, 9);
    run_heat(3, "96 5 9 --path staged --graph", &r);
    cr_assert_eq(last_line_checksum(&r), small, "5 rows on 3 ranks with --graph:\n%s", r.out);
    cr_assert_eq(field(&r, "launches_from_graphs"), 3 * 9, "5 rows on 3 ranks with --graph:\n%s", r.out);
}

/* Every rank parses the same arguments and stops the same way (mpiexec
 * for the one that depends on the rank count; alone for the others, which
 * also shows heat_mpi runs without a launcher). */
Test(mpi_heat, bad_arguments_stop_every_rank, .timeout = 300)
{
    static heat_run r;
    const int np[] = {2, 0, 0, 0, 0};
    const char *bad[] = {"96 1 5", "96 70", "0 70 5 --warmup 1", "96 70 5 --path sideways", "96 70 5 --frobnicate"};
    const char *says[] = {"at least one row", "required", "NX \"0\"", "\"sideways\"", "unknown option"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        if (TEST_UNDER_ASAN && i > 1 && i + 1 < sizeof bad / sizeof bad[0]) continue; /* the comment above MATRIX_FIRST_RANKS */
        run_heat(np[i], bad[i], &r);
        cr_assert_eq(r.status, 2, "\"%s\" exit status %d:\n%s", bad[i], r.status, r.out);
        cr_assert(strstr(r.err, says[i]), "\"%s\": stderr does not say \"%s\":\n%s", bad[i], says[i], r.err);
        cr_assert(strstr(r.err, "usage: heat_mpi"), "no usage for \"%s\"", bad[i]);
        cr_assert_str_empty(r.out, "\"%s\" printed to stdout: %s", bad[i], r.out);
    }
    run_heat(0, "--help", &r);
    cr_assert_eq(r.status, 0);
    cr_assert(strstr(r.out, "usage: heat_mpi NX NY STEPS"), "%s", r.out);
}

/* ------------------------------- exchanges between ranks (mpi_helper) */

/* rank R's line "rank R STEP: ..." from the helper's output, or fail. */
static const char *rank_line(const heat_run *r, int rank, const char *step)
{
    char key[64];
    int k = snprintf(key, sizeof key, "rank %d %s: ", rank, step);
    for (const char *p = r->out; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (!strncmp(p, key, (size_t)k)) return p + k;
    cr_assert_fail("no line \"%s\" in mpi_helper's output (exit %d):\n%s\nstderr:\n%s", key, r->status, r->out,
                   r->err);
    return NULL;
}

/* The line holds every fragment (up to its end). */
static void line_says(const char *line, const char *const *fragments, size_t n, const char *what)
{
    size_t len = strcspn(line, "\n");
    for (size_t i = 0; i < n; ++i) {
        const char *f = fragments[i];
        bool found = false;
        for (size_t at = 0; !found && at + strlen(f) <= len; ++at) found = !strncmp(line + at, f, strlen(f));
        cr_assert(found, "%s: \"%.*s\" does not say \"%s\"", what, (int)len, line, f);
    }
}

static void run_helper(int np, const char *args, heat_run *r)
{
#ifndef HIPAMP_MPI_HELPER
    (void)np;
    (void)args;
    (void)r;
    cr_skip_test("mpi_helper is not built");
#else
    run_mpi(HIPAMP_MPI_HELPER, np, args, r);
#endif
}

/* mpi_helper SCENARIO PATH on np ranks, which must exit 0; what gets
 * "N ranks, PATH path" for the assertions' messages. */
static void run_scenario(const char *scenario, int np, const char *path, heat_run *r, char *what, size_t n)
{
    char args[64];
    snprintf(args, sizeof args, "%s %s", scenario, path);
    snprintf(what, n, "%d ranks, %s path", np, path);
    run_helper(np, args, r);
    cr_assert_eq(r->status, 0, "%s: exit %d\n%s\nstderr:\n%s", what, r->status, r->out, r->err);
}

/* Views that hold different numbers of elements on the two sides of a
 * message, on 2 and 3 ranks and every path: the receiving rank returns a
 * status naming the halo, the peer and both sizes, whether the message is
 * shorter than its view or longer (MPI_ERR_TRUNCATE, which used to end the
 * job); the other ranks' exchanges succeed, and the exchanger works on. */
Test(mpi_ranks, halo_sizes_are_checked_on_arrival, .timeout = 600)
{
    static heat_run r;
    const char *paths[] = {"host", "staged", "device"};
    for (int np = SCENARIO_FIRST_RANKS; np <= 3; ++np)
        for (int p = 0; p < 3; ++p) {
            char what[96];
            run_scenario("sizes", np, paths[p], &r, what, sizeof what);
            /* short: rank 0's view holds 128 floats, rank np-1 sent 64. */
            char from[32];
            snprintf(from, sizeof from, "receive from rank %d", np - 1);
            const char *shorter[] = {"AMP_ERROR_INVALID_ARGUMENT", "halo 1", from, "sent 256 bytes",
                                     "holds 512 bytes"};
            line_says(rank_line(&r, 0, "short"), shorter, 5, what);
            /* long: rank 1 sent 128 floats to rank 2 % np, whose view holds 64. */
            const int victim = 2 % np;
            const char *longer[] = {"AMP_ERROR_INVALID_ARGUMENT", "halo 1", "receive from rank 1", "sent 512 bytes",
                                    "holds 256 bytes", "MPI_ERR_TRUNCATE"};
            line_says(rank_line(&r, victim, "long"), longer, 6, what);
            for (int k = 0; k < np; ++k) {
                const char *ok[] = {"AMP_OK"};
                if (k != 0) line_says(rank_line(&r, k, "short"), ok, 1, what);
                if (k != victim) line_says(rank_line(&r, k, "long"), ok, 1, what);
                line_says(rank_line(&r, k, "good"), ok, 1, what);
                const char *data[] = {"ok"};
                line_says(rank_line(&r, k, "data"), data, 1, what);
            }
        }
}

/* A peer's face longer than the receive view never lands past the view, on
 * any path, whole or in chunks: the receiver reports both sizes
 * (MPI_ERR_TRUNCATE), the floats past its view keep their values, and the
 * exchanger works on. Run with Open MPI's shared-memory single copy on
 * (emulated: it needs no ptrace permission), which writes a whole message
 * past a shorter receive buffer: before, the 1000 floats past a view of
 * 2000 were overwritten (the host and device paths), a staging buffer
 * overrun (the staged path) and, in chunks, the heap corrupted. */
Test(mpi_ranks, a_longer_message_never_writes_past_its_view, .timeout = 300)
{
    static heat_run r;
    static const char var[] = "OMPI_MCA_btl_vader_single_copy_mechanism";
    char *was = getenv(var) ? strdup(getenv(var)) : NULL;
    setenv(var, "emulated", 1);
    run_helper(2, "overrun", &r);
    if (was) setenv(var, was, 1);
    else unsetenv(var);
    free(was);
    cr_assert_eq(r.status, 0, "exit %d\n%s\nstderr:\n%s", r.status, r.out, r.err);
    const char *paths[] = {"host", "staged", "device"};
    for (int p = 0; p < 3; ++p)
        for (int chunked = 0; chunked < 2; ++chunked) {
            char what[64], step[96];
            snprintf(what, sizeof what, "%s %s", paths[p], chunked ? "chunked" : "whole");
            const char *longer[] = {"AMP_ERROR_INVALID_ARGUMENT", "receive from rank 0", "sent 12000 bytes",
                                    "holds 8000 bytes", "MPI_ERR_TRUNCATE"};
            snprintf(step, sizeof step, "overrun %s", what);
            line_says(rank_line(&r, 1, step), longer, 5, what);
            const char *none[] = {"0 written"}, *fine[] = {"AMP_OK"}, *ok[] = {"ok"};
            snprintf(step, sizeof step, "outside %s", what);
            line_says(rank_line(&r, 1, step), none, 1, what);
            snprintf(step, sizeof step, "after %s", what);
            line_says(rank_line(&r, 1, step), fine, 1, what);
            snprintf(step, sizeof step, "after %s data", what);
            line_says(rank_line(&r, 1, step), ok, 1, what);
        }
}

/* An intercommunicator is refused by every call that takes a communicator,
 * on every rank of both groups, naming it: before, amp_mpi_exchange_create
 * accepted it (its agreement handed each group the other group's values,
 * peers were checked against the local group's size, and leaving notices
 * went to the remote group's ranks). 3 ranks: groups of 2 and 1. */
Test(mpi_ranks, intercommunicators_are_refused, .timeout = 300)
{
    static heat_run r;
    run_helper(3, "inter", &r);
    cr_assert_eq(r.status, 0, "exit %d\n%s\nstderr:\n%s", r.status, r.out, r.err);
    for (int k = 0; k < 3; ++k) {
        char groups[96];
        snprintf(groups, sizeof groups, "a local group of %d ranks, a remote group of %d", k % 2 ? 1 : 2,
                 k % 2 ? 2 : 1);
        const char *create[] = {"AMP_ERROR_INVALID_ARGUMENT", "amp_mpi_exchange_create: comm is an intercommunicator",
                                groups, "MPI_Intercomm_merge"};
        line_says(rank_line(&r, k, "inter create"), create, 4, "amp_mpi_exchange_create");
        const char *local[] = {"AMP_ERROR_INVALID_ARGUMENT", "amp_mpi_local_rank: comm is an intercommunicator",
                               groups};
        line_says(rank_line(&r, k, "inter local rank"), local, 3, "amp_mpi_local_rank");
        line_says(rank_line(&r, k, "inter select"), local, 3, "amp_mpi_select_accelerator");
        const char *fine[] = {"AMP_OK"};
        line_says(rank_line(&r, k, "merged create"), fine, 1, "the merged groups");
    }
}

/* Exchangers of 4-byte elements on some ranks and 8-byte ones on another
 * would swap the same bytes and read them as different types: every rank's
 * creation fails, naming the other size and the rank that has it. An
 * element size no message can hold (2^63 bytes on rank 1, "huge") is
 * refused on that rank, naming it, and the others' creations fail naming
 * rank 1: before, the ranks' agreement negated the size (an overflow, not
 * a refusal). */
Test(mpi_ranks, element_sizes_agree_at_creation, .timeout = 300)
{
    static heat_run r;
    for (int np = 2; np <= 3; ++np) {
        run_helper(np, "elements", &r);
        cr_assert_eq(r.status, 0, "%d ranks: exit %d\n%s\nstderr:\n%s", np, r.status, r.out, r.err);
        for (int k = 0; k < np; ++k) {
            char mine[48], other[48];
            snprintf(mine, sizeof mine, "this rank (%d) exchanges %d-byte", k, k == 1 ? 8 : 4);
            snprintf(other, sizeof other, "rank %d %d-byte elements", k == 1 ? 0 : 1, k == 1 ? 4 : 8);
            const char *want[] = {"AMP_ERROR_INVALID_ARGUMENT", mine, other};
            line_says(rank_line(&r, k, "create"), want, 3, "element sizes");
            char could_not[64];
            snprintf(could_not, sizeof could_not, "rank 1 of %d could not create its exchanger", np);
            const char *huge[] = {"AMP_ERROR_INVALID_ARGUMENT", "elem_size is 9223372036854775808 bytes"},
                       *others[] = {"AMP_ERROR_INVALID_ARGUMENT", could_not};
            line_says(rank_line(&r, k, "huge"), k == 1 ? huge : others, 2, "an element of 2^63 bytes on rank 1");
            /* Every rank of a test runs on this node: its local rank is its
             * rank in the communicator given, of all of them. */
            for (int rev = 0; rev < 2; ++rev) {
                char want[32];
                int n = snprintf(want, sizeof want, "%d of %d", rev ? np - 1 - k : k, np);
                const char *line = rank_line(&r, k, rev ? "reversed local" : "local");
                cr_assert(strcspn(line, "\n") == (size_t)n && !strncmp(line, want, (size_t)n),
                          "%d ranks, rank %d's local rank%s: \"%.*s\", not \"%s\"", np, k,
                          rev ? " on the ranks reversed" : "", (int)strcspn(line, "\n"), line, want);
            }
        }
    }
}

/* A NULL out on one rank is that rank's set-up failure, not a reason to
 * skip the collective calls: every rank returns, the others naming it.
 * Before, rank 1 returned at once and the others waited in MPI_Comm_dup
 * (and MPI_Comm_split_type) for ever. */
Test(mpi_ranks, a_null_out_on_one_rank_fails_every_rank, .timeout = 300)
{
    static heat_run r;
    run_helper(2, "elements", &r);
    cr_assert_eq(r.status, 0, "exit %d\n%s\nstderr:\n%s", r.status, r.out, r.err);
    const char *mine[] = {"AMP_ERROR_INVALID_ARGUMENT", "out is NULL"};
    line_says(rank_line(&r, 1, "null out"), mine, 2, "rank 1's NULL out");
    const char *other[] = {"AMP_ERROR_INVALID_ARGUMENT", "rank 1 of 2 could not create its exchanger"};
    line_says(rank_line(&r, 0, "null out"), other, 2, "rank 0, after rank 1's NULL out");
    const char *local1[] = {"AMP_ERROR_INVALID_ARGUMENT", "local_size is NULL"};
    line_says(rank_line(&r, 1, "null local"), local1, 2, "rank 1's NULL local_size");
    const char *local0[] = {"AMP_OK"};
    line_says(rank_line(&r, 0, "null local"), local0, 1, "rank 0's local rank");
}

/* The exchange begun and ended, with a kernel writing the inner rows in
 * between, against the blocking exchange, on 2 and 3 ranks and every path:
 * the same grids, cell for cell, and the same statistics, byte for byte
 * (per round 2 rows out and 2 in of 64 floats: 4 messages, 1024 bytes;
 * through staging on the staged path only). Two exchanges in flight end in
 * the order they began: the second first, or the first twice, is refused
 * and changes nothing. */
Test(mpi_ranks, begun_exchanges_equal_blocking_ones, .timeout = 600)
{
    static heat_run r;
    const char *paths[] = {"host", "staged", "device"};
    for (int np = SCENARIO_FIRST_RANKS; np <= 3; ++np)
        for (int p = 0; p < 3; ++p) {
            char what[96];
            run_scenario("nonblocking", np, paths[p], &r, what, sizeof what);
            char stats[96];
            snprintf(stats, sizeof stats, "exchanges 3 messages 12 bytes 3072 staged %d", p == 1 ? 3072 : 0);
            for (int k = 0; k < np; ++k) {
                const char *ok[] = {"ok"}, *fine[] = {"AMP_OK"}, *exact[] = {stats};
                line_says(rank_line(&r, k, "rounds"), ok, 1, what);
                line_says(rank_line(&r, k, "stats blocking"), exact, 1, what);
                line_says(rank_line(&r, k, "stats begun"), exact, 1, what);
                const char *order[] = {"AMP_ERROR_INVALID_ARGUMENT", "exchange #5 is not the oldest in flight",
                                       "#4 began first"};
                line_says(rank_line(&r, k, "end second first"), order, 3, what);
                line_says(rank_line(&r, k, "end first"), fine, 1, what);
                const char *twice[] = {"AMP_ERROR_INVALID_ARGUMENT", "exchange #4 was already ended"};
                line_says(rank_line(&r, k, "end first again"), twice, 2, what);
                line_says(rank_line(&r, k, "test first"), twice, 2, what);
                line_says(rank_line(&r, k, "end second"), fine, 1, what);
                line_says(rank_line(&r, k, "in flight"), ok, 1, what);
            }
        }
}

/* A peer busy with other work (an MPI_Barrier the others reach only after
 * their exchanges) never answers. With a time-out, the rank waiting for it
 * returns AMP_ERROR_TIMEOUT naming the peer and the halo still pending; the
 * exchanger then refuses, and destroy and MPI_Finalize still work. With 3
 * ranks the rank after the silent one times out; the rank before it does
 * not (its small message was taken eagerly), and its next exchange times out
 * on the rank that gave up. */
Test(mpi_ranks, timeout_names_the_peer_that_never_answered, .timeout = 600)
{
    static heat_run r;
    const char *paths[] = {"host", "staged"};
    for (int np = SCENARIO_FIRST_RANKS; np <= 3; ++np)
        for (int p = 0; p < 2; ++p) {
            char what[96];
            run_scenario("timeout", np, paths[p], &r, what, sizeof what);
            const int waiter = np == 2 ? 0 : 2;
            const char *late[] = {"AMP_ERROR_TIMEOUT", "no answer from rank 1 within 1000 ms",
                                  "halo 1 receive from rank 1 (tag 7)"};
            line_says(rank_line(&r, waiter, "exchange"), late, 3, what);
            const char *refused[] = {"AMP_ERROR_INVALID_ARGUMENT", "abandoned", "destroy it"};
            line_says(rank_line(&r, waiter, "again"), refused, 3, what);
            if (np == 3) {
                const char *ok[] = {"AMP_OK"};
                line_says(rank_line(&r, 0, "exchange"), ok, 1, what);
                const char *next[] = {"AMP_ERROR_TIMEOUT", "no answer from rank 2"};
                line_says(rank_line(&r, 0, "again"), next, 2, what);
            }
            for (int k = 0; k < np; ++k) {
                const char *ok[] = {"AMP_OK"}, *null[] = {"AMP_ERROR_INVALID_ARGUMENT", "x is NULL"};
                line_says(rank_line(&r, k, "destroy"), ok, 1, what);
                line_says(rank_line(&r, k, "set_timeout NULL"), null, 2, what);
                char done[32];
                snprintf(done, sizeof done, "rank %d done\n", k);
                cr_assert(strstr(r.out, done), "%s: rank %d did not finish:\n%s", what, k, r.out);
            }
        }
}

/* A peer that calls MPI_Finalize, or destroys its exchanger, without
 * exchanging used to leave the rank waiting for it in MPI_Waitall for ever
 * when no time-out was set. Its leaving notice now ends that exchange at
 * once (after a 0.1 s grace for data still on its way) with
 * AMP_ERROR_TIMEOUT naming the peer and how it left, and every rank
 * finalizes. With 3 ranks the rank after the leaver fails; the rank before
 * it exchanged fine (its small message went eagerly), and its next
 * exchange fails naming the rank that gave up and destroyed its exchanger.
 * A rank still waiting after 30 s ends the job (the helper's watchdog). */
Test(mpi_ranks, a_peer_that_left_ends_the_exchange_without_a_timeout, .timeout = 300)
{
    static heat_run r;
    const char *modes[] = {"finalize", "destroy"};
    for (int np = SCENARIO_FIRST_RANKS; np <= 3; ++np)
        for (int m = 0; m < 2; ++m) {
            char what[96], args[64];
            snprintf(args, sizeof args, "host %s", modes[m]);
            run_scenario("leaving", np, args, &r, what, sizeof what);
            const int waiter = np == 2 ? 0 : 2;
            const char *left[] = {"AMP_ERROR_TIMEOUT",
                                  m == 0 ? "rank 1 (it called MPI_Finalize) left without taking part in it"
                                         : "rank 1 (it destroyed its exchanger) left without taking part in it",
                                  "halo 1 receive from rank 1 (tag 7)", "destroy it"};
            line_says(rank_line(&r, waiter, "exchange"), left, 4, what);
            double waited = atof(rank_line(&r, waiter, "waited"));
            cr_assert(waited >= 0.09 && waited < 10, "%s: rank %d waited %g s", what, waiter, waited);
            const char *refused[] = {"AMP_ERROR_INVALID_ARGUMENT", "abandoned", "destroy it"};
            line_says(rank_line(&r, waiter, "again"), refused, 3, what);
            if (np == 3) {
                const char *ok[] = {"AMP_OK"};
                line_says(rank_line(&r, 0, "exchange"), ok, 1, what);
                const char *next[] = {"AMP_ERROR_TIMEOUT", "exchange #2: rank 2 (it destroyed its exchanger) left",
                                      "halo 1 receive from rank 2 (tag 7)"};
                line_says(rank_line(&r, 0, "again"), next, 3, what);
            }
            for (int k = 0; k < np; ++k) {
                const char *ok[] = {"AMP_OK"};
                line_says(rank_line(&r, k, "destroy"), ok, 1, what);
                char done[32];
                snprintf(done, sizeof done, "rank %d done\n", k);
                cr_assert(strstr(r.out, done), "%s: rank %d did not finish:\n%s", what, k, r.out);
            }
        }
}

/* Every rank of r printed its "rank K done" line (it finished). */
static void ranks_finished(const heat_run *r, int np)
{
    for (int k = 0; k < np; ++k) {
        char done[32];
        snprintf(done, sizeof done, "rank %d done\n", k);
        cr_assert(strstr(r->out, done), "rank %d did not finish:\n%s", k, r->out);
    }
}

/* An exchange begun on rank 0 moves on while rank 0 waits in another call
 * of the library: (a) an all-reduce on the same exchanger, (b) a blocking
 * exchange on a second exchanger of the same communicator, (c) the
 * creation of a third (its collective calls); rank 1 exchanges with it
 * first (blocking). Its faces (65536 floats) are too large to go eagerly,
 * so rank 1's exchange ends only once rank 0's receive is posted. Before,
 * rank 0 posted it only inside the exchange's own calls (test or end):
 * all three hung (rank 0 in the other call, rank 1 in its exchange) until
 * the helper's 60 s watchdog. Every step returns AMP_OK on both ranks,
 * every face arrives, and the sum is 1 + 2. */
Test(mpi_ranks, begun_exchanges_progress_while_the_rank_waits_in_another_call, .timeout = 300)
{
    static heat_run r;
    run_helper(2, "progress", &r);
    cr_assert_eq(r.status, 0, "exit %d\n%s\nstderr:\n%s", r.status, r.out, r.err);
    const char *steps0[] = {"a begin", "a allreduce", "a end", "b begin A", "b exchange B", "b end A", "c begin",
                            "c create", "c end"};
    const char *steps1[] = {"a exchange", "a allreduce", "b exchange A", "b exchange B", "c exchange", "c create"};
    const char *fine[] = {"AMP_OK"}, *ok[] = {"ok"};
    for (size_t i = 0; i < sizeof steps0 / sizeof *steps0; ++i)
        line_says(rank_line(&r, 0, steps0[i]), fine, 1, steps0[i]);
    for (size_t i = 0; i < sizeof steps1 / sizeof *steps1; ++i)
        line_says(rank_line(&r, 1, steps1[i]), fine, 1, steps1[i]);
    const char *data[] = {"a data", "b data A", "b data B", "c data"};
    for (int k = 0; k < 2; ++k) {
        for (int i = 0; i < 4; ++i) line_says(rank_line(&r, k, data[i]), ok, 1, data[i]);
        const char *sum = rank_line(&r, k, "a sum");
        cr_assert(!strncmp(sum, "3\n", 2), "rank %d's sum of 1 and 2 is %.*s", k, (int)strcspn(sum, "\n"), sum);
    }
    ranks_finished(&r, 2);
}

/* A peer that began its exchanges (40 in flight), so their messages were
 * matched to this rank's receives, and then stops calling MPI (6 s of
 * other work) never sends the rest of them: with a time-out of 1000 ms,
 * the end returns AMP_ERROR_TIMEOUT naming the peer within a bounded wait,
 * all 40 abandoned within one grace of 0.1 s. Before, the abandoned
 * exchange cancelled its receive and then waited in MPI_Wait for it, which
 * MPI cannot cancel once matched: rank 0 waited for the peer's whole nap
 * (about 6 s); and then a grace of 0.1 s for each exchange in flight
 * (5 s for 40). */
Test(mpi_ranks, a_time_out_bounds_the_wait_even_for_a_message_that_began_to_arrive, .timeout = 300)
{
    static heat_run r;
    run_helper(2, "stall", &r);
    cr_assert_eq(r.status, 0, "exit %d\n%s\nstderr:\n%s", r.status, r.out, r.err);
    const char *fine[] = {"AMP_OK"};
    line_says(rank_line(&r, 0, "begin"), fine, 1, "rank 0's begin");
    line_says(rank_line(&r, 1, "begin"), fine, 1, "rank 1's begin");
    const char *late[] = {"AMP_ERROR_TIMEOUT", "no answer from rank 1 within 1000 ms"};
    line_says(rank_line(&r, 0, "end"), late, 2, "rank 0's end");
    double waited = atof(rank_line(&r, 0, "waited"));
    cr_assert(waited >= 0.9 && waited < 4.5, "rank 0 waited %g s for a time-out of 1 s:\n%s", waited, r.out);
    rank_line(&r, 1, "end"); /* any status, but it returns */
    line_says(rank_line(&r, 0, "destroy"), fine, 1, "rank 0's destroy");
    ranks_finished(&r, 2);
}

/* Faces in 4096-byte chunks, two halos of one exchange with the same peer
 * and tag: rank 0's 3000-float face (3 chunks) meets a receive view of 100
 * floats on rank 1, its 10-float face one of 10. Rank 1's exchange is
 * refused for halo 0, naming both sizes; its halo 1 gets rank 0's 10 floats
 * all the same, and the exchanger works on. Before, the face's surplus
 * second chunk was matched by halo 1's receive ("at least 4096 bytes"), and
 * the exchanger was broken. */
Test(mpi_ranks, a_chunked_face_s_surplus_never_meets_the_next_receive_of_its_pair, .timeout = 300)
{
    static heat_run r;
    run_helper(2, "pairs", &r);
    cr_assert_eq(r.status, 0, "exit %d\n%s\nstderr:\n%s", r.status, r.out, r.err);
    const char *longer[] = {"AMP_ERROR_INVALID_ARGUMENT", "halo 0", "receive from rank 0", "sent 12000 bytes",
                            "holds 400 bytes"};
    line_says(rank_line(&r, 1, "pair"), longer, 5, "rank 1's pair");
    const char *fine[] = {"AMP_OK"}, *ok[] = {"ok"};
    line_says(rank_line(&r, 0, "pair"), fine, 1, "rank 0's pair");
    line_says(rank_line(&r, 0, "pair data 0"), ok, 1, "rank 0's halo 0");
    for (int k = 0; k < 2; ++k) {
        line_says(rank_line(&r, k, "pair data 1"), ok, 1, "halo 1");
        line_says(rank_line(&r, k, "good"), fine, 1, "the next exchange");
        line_says(rank_line(&r, k, "good data"), ok, 1, "the next exchange's data");
    }
    /* The pair held back behind rank 1's longer face is freed by p2's test
     * and by an all-reduce on the exchanger (mpi_helper.c's held()): p2's
     * test says done, the all-reduce sums 1 + 2 on both ranks, and p1's
     * end reports the sizes. Before, the test never said done until p1
     * ended, and the all-reduce waited for ever. */
    const char *steps0[] = {"held test exchange 1", "held test exchange 2", "held allreduce exchange",
                            "held allreduce"};
    for (int i = 0; i < 4; ++i) line_says(rank_line(&r, 0, steps0[i]), fine, 1, steps0[i]);
    const char *steps1[] = {"held test begin 1", "held test begin 2", "held test p2", "held allreduce begin",
                            "held allreduce"};
    for (int i = 0; i < 5; ++i) line_says(rank_line(&r, 1, steps1[i]), fine, 1, steps1[i]);
    const char *done[] = {"done"};
    line_says(rank_line(&r, 1, "held test"), done, 1, "p2's test while p1's face is drained");
    const char *sizes[] = {"AMP_ERROR_INVALID_ARGUMENT", "sent 12000 bytes", "holds 400 bytes"};
    line_says(rank_line(&r, 1, "held test p1"), sizes, 3, "p1 (test)");
    line_says(rank_line(&r, 1, "held allreduce p1"), sizes, 3, "p1 (all-reduce)");
    for (int k = 0; k < 2; ++k) {
        line_says(rank_line(&r, k, "held test data"), ok, 1, "p2's data");
        const char *sum = rank_line(&r, k, "held sum");
        cr_assert(!strncmp(sum, "3\n", 2), "rank %d's held sum is %.*s", k, (int)strcspn(sum, "\n"), sum);
    }
}

/* The example's kernel compiles for the GPU targets whose runtime compiler
 * is installed, so device code that only a GPU machine runs cannot rot. */
/* ------------------------------------------------- the NCCL path (stand-in) */

/* mpi_helper ARGS on np ranks with the stand-in NCCL library (the CPU
 * accelerator: NCCL's calls over MPI), FAKE_NCCL_FAIL_RANK set to fail (-1:
 * unset). */
static void run_with_fake_nccl(int np, const char *args, int fail, heat_run *r)
{
#ifndef HIPAMP_FAKE_NCCL
    (void)np;
    (void)args;
    (void)fail;
    (void)r;
    cr_skip_test("the stand-in NCCL library is not built");
#else
    use_fake_nccl();
    char f[16];
    snprintf(f, sizeof f, "%d", fail);
    if (fail >= 0) setenv("FAKE_NCCL_FAIL_RANK", f, 1);
    else unsetenv("FAKE_NCCL_FAIL_RANK");
    run_helper(np, args, r);
    unsetenv("AMP_MPI_NCCL_LIBRARY");
    unsetenv("FAKE_NCCL_FAIL_RANK");
#endif
}

/* Every rank chose NCCL: the communicator is bootstrapped over MPI, the
 * halos move in one NCCL group (the data arrives around the ring), and the
 * all-reduces run through ncclAllReduce (counted on the device). The
 * staged path reduces the same values through MPI_Allreduce. */
Test(mpi_ranks, nccl_path_exchanges_and_reduces, .timeout = 300)
{
    static heat_run r;
    for (int np = SCENARIO_FIRST_RANKS; np <= 3; ++np)
        for (int nccl = 1; nccl >= 0; --nccl) {
            char what[64];
            snprintf(what, sizeof what, "%d ranks, %s path", np, nccl ? "nccl" : "staged");
            run_with_fake_nccl(np, nccl ? "path nccl" : "path staged", -1, &r);
            cr_assert_eq(r.status, 0, "%s: exit %d\n%s\nstderr:\n%s", what, r.status, r.out, r.err);
            for (int k = 0; k < np; ++k) {
                const char *path[] = {nccl ? "nccl fell_back 0" : "staged fell_back 0"};
                line_says(rank_line(&r, k, "path"), path, 1, what);
                const char *ok[] = {"ok"}, *fine[] = {"AMP_OK"};
                line_says(rank_line(&r, k, "good"), fine, 1, what);
                line_says(rank_line(&r, k, "data"), ok, 1, what);
                line_says(rank_line(&r, k, "allreduce calls"), fine, 1, what);
                line_says(rank_line(&r, k, "allreduce"), ok, 1, what);
                const char *counts[] = {nccl ? "allreduces 3 on_device 3" : "allreduces 3 on_device 0"};
                line_says(rank_line(&r, k, "reductions"), counts, 1, what);
            }
        }
}

/* Periodic rows on 2 ranks: both halos of a rank go to the same peer, with
 * tags 0 and 1, and NCCL has no tags: ordered by tag on both sides, they
 * meet (the grids are right), and the begun exchanges equal the blocking
 * ones, with nothing staged. */
Test(mpi_ranks, nccl_begun_exchanges_equal_blocking_ones, .timeout = 300)
{
    static heat_run r;
    for (int np = 2; np <= 3; ++np) {
        run_with_fake_nccl(np, "nonblocking nccl", -1, &r);
        char what[64];
        snprintf(what, sizeof what, "%d ranks, nccl path", np);
        cr_assert_eq(r.status, 0, "%s: exit %d\n%s\nstderr:\n%s", what, r.status, r.out, r.err);
        for (int k = 0; k < np; ++k) {
            const char *ok[] = {"ok"}, *exact[] = {"exchanges 3 messages 12 bytes 3072 staged 0"};
            line_says(rank_line(&r, k, "rounds"), ok, 1, what);
            line_says(rank_line(&r, k, "stats blocking"), exact, 1, what);
            line_says(rank_line(&r, k, "stats begun"), exact, 1, what);
            line_says(rank_line(&r, k, "in flight"), ok, 1, what);
        }
    }
}

/* A rank whose NCCL communicator cannot be made (the stand-in fails rank
 * 1's ncclCommInitRank): no rank hangs, every rank falls back to the
 * staged path, says why (rank 1 its own reason, the others naming rank 1)
 * with a warning on stderr, and its exchanges and all-reduces work. */
Test(mpi_ranks, nccl_start_failure_falls_back_to_staged, .timeout = 300)
{
    static heat_run r;
    for (int np = 2; np <= 3; ++np) {
        run_with_fake_nccl(np, "path nccl", 1, &r);
        char what[64];
        snprintf(what, sizeof what, "%d ranks, rank 1's NCCL fails", np);
        cr_assert_eq(r.status, 0, "%s: exit %d\n%s\nstderr:\n%s", what, r.status, r.out, r.err);
        cr_assert(strstr(r.err, "hipamp::mpi: warning: rank 0:"), "%s: no warning on stderr:\n%s", what, r.err);
        cr_assert(strstr(r.err, "hipamp::mpi: warning: rank 1:"), "%s: no warning on stderr:\n%s", what, r.err);
        for (int k = 0; k < np; ++k) {
            const char *own[] = {"staged fell_back 1", "could not be made on this rank (1)", "ncclCommInitRank failed",
                                 "invalid usage", "every rank falls back to the staged path"};
            const char *other[] = {"staged fell_back 1", "rank 1 could not make its communicator",
                                   "every rank falls back to the staged path"};
            line_says(rank_line(&r, k, "path"), k == 1 ? own : other, k == 1 ? 5 : 3, what);
            const char *ok[] = {"ok"};
            line_says(rank_line(&r, k, "data"), ok, 1, what);
            line_says(rank_line(&r, k, "allreduce"), ok, 1, what);
            const char *counts[] = {"allreduces 3 on_device 0"};
            line_says(rank_line(&r, k, "reductions"), counts, 1, what);
        }
    }
}

/* Local failures on the NCCL path, made through the library's test seam
 * (mpi_helper's amp_mpi_test_fault), on 3 ranks. Rank 1 runs out of
 * memory before ncclCommInitRank: the ranks agree before any calls it, so
 * none waits there for rank 1 (they did, for ever: the helper's 20 s alarm
 * ended the job), and every rank falls back to the staged path, naming
 * rank 1, and exchanges. Then a begin that runs out of memory with an
 * exchange already in flight fails alone: the earlier exchange still ends
 * (it was forgotten: "already ended"), with its data, and the exchanger
 * works on and is destroyed (it was "still in flight" for ever). */
Test(mpi_ranks, nccl_local_failures_never_hang, .timeout = 300)
{
    static heat_run r;
    run_with_fake_nccl(3, "faults", -1, &r);
    const char *what = "3 ranks, faults on the nccl path";
    cr_assert_eq(r.status, 0, "%s: exit %d\n%s\nstderr:\n%s", what, r.status, r.out, r.err);
    for (int k = 0; k < 3; ++k) {
        const char *own[] = {"staged fell_back 1", "could not be made on this rank (1)", "no memory",
                             "every rank falls back to the staged path"};
        const char *other[] = {"staged fell_back 1", "rank 1 could not make its communicator",
                               "every rank falls back to the staged path"};
        line_says(rank_line(&r, k, "open fault"), k == 1 ? own : other, k == 1 ? 4 : 3, what);
        const char *ok[] = {"ok"}, *fine[] = {"AMP_OK"}, *oom[] = {"AMP_ERROR_OUT_OF_MEMORY", "no memory"};
        line_says(rank_line(&r, k, "open fault data"), ok, 1, what);
        line_says(rank_line(&r, k, "begin out of memory"), oom, 2, what);
        line_says(rank_line(&r, k, "end first"), fine, 1, what);
        line_says(rank_line(&r, k, "first data"), ok, 1, what);
        line_says(rank_line(&r, k, "after"), fine, 1, what);
        line_says(rank_line(&r, k, "after data"), ok, 1, what);
        line_says(rank_line(&r, k, "destroy"), fine, 1, what);
    }
}

/* The real libnccl.so.2 where it is installed but no GPU is (CI machines
 * with a CUDA toolkit): named on purpose for the CPU accelerator, its
 * ncclCommInitRank fails on every rank, and every rank falls back to the
 * staged path with the warning instead of hanging, the data intact. */
Test(mpi_ranks, real_nccl_without_a_gpu_falls_back, .timeout = 300)
{
    void *dl = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!dl) cr_skip_test("no libnccl.so.2 here (%s)", dlerror());
    dlclose(dl);
    amp_accelerator *gpu = NULL;
    if (amp_accelerator_find("cuda:0", &gpu) == AMP_OK)
        cr_skip_test("a CUDA GPU is here: NCCL would start (ci/gpu.sh nccl covers it)");
    static heat_run r;
    setenv("AMP_MPI_NCCL_LIBRARY", "libnccl.so.2", 1);
    run_helper(2, "path nccl", &r);
    unsetenv("AMP_MPI_NCCL_LIBRARY");
    cr_assert_eq(r.status, 0, "exit %d\n%s\nstderr:\n%s", r.status, r.out, r.err);
    cr_assert(strstr(r.err, "hipamp::mpi: warning: rank 1:"), "no warning on stderr:\n%s", r.err);
    for (int k = 0; k < 2; ++k) {
        const char *path[] = {"staged fell_back 1", "ncclCommInitRank failed"}, *ok[] = {"ok"};
        line_says(rank_line(&r, k, "path"), path, 2, "real NCCL, no GPU");
        line_says(rank_line(&r, k, "data"), ok, 1, "real NCCL, no GPU");
        line_says(rank_line(&r, k, "allreduce"), ok, 1, "real NCCL, no GPU");
    }
}

/* Faces over AMP_MPI_CHUNK_BYTES move as chunks, on every MPI path, cut by
 * element count: 4096-byte chunks (1024 floats) make 5 messages of a 1-D
 * face of 5000 floats and 6 of a section of 3 rows of 2000 (chunks across
 * rows) and of a face of 6000 floats whose shape differs from rank to rank
 * (a strided 2000 x 3 section of host memory on rank 0, a 3 x 40 x 50 box
 * of an array on rank 1: before, each side cut its own shape into chunks
 * of whole rows, and their messages did not meet); the data arrives intact
 * and the bytes are the faces'. Once the exchange ended and the views are
 * destroyed, the arrays are destroyed while the exchanger lives (it kept
 * sections of them before). Without the setting each face is one message.
 * Before that, every rank sends 3572 floats into its receiver's view of
 * 2048: each receive says so, naming both sizes, and nothing of the face is
 * left for the exchange after it. Ranks whose settings differ are refused. */
Test(mpi_ranks, large_faces_move_in_chunks, .timeout = 300)
{
    static heat_run r;
    const char *paths[] = {"staged", "host", "device"};
    for (int p = 0; p < 3; ++p)
        for (int chunked = 1; chunked >= 0; --chunked) {
            char what[64];
            /* Under ASan the unchunked exchange (every other test's) on the
             * first path alone (see SCENARIO_FIRST_RANKS). */
            if (TEST_UNDER_ASAN && !chunked && p > 0) continue;
            if (chunked) setenv("AMP_MPI_CHUNK_BYTES", "4096", 1);
            run_scenario("chunks", 2, paths[p], &r, what, sizeof what);
            unsetenv("AMP_MPI_CHUNK_BYTES");
            for (int k = 0; k < 2; ++k) {
                const char *ok[] = {"ok"}, *fine[] = {"AMP_OK"};
                const char *msgs[] = {chunked ? "sent 17 received 17 bytes 68000" : "sent 3 received 3 bytes 68000"};
                /* Before, a receiver of fewer chunks than its peer sent
                 * said AMP_OK, and the chunks left met the next exchange. */
                const char *mismatch[] = {"AMP_ERROR_INVALID_ARGUMENT", "sent 14288 bytes", "holds 8192 bytes"};
                line_says(rank_line(&r, k, "mismatch"), mismatch, 3, what);
                line_says(rank_line(&r, k, "exchange"), fine, 1, what);
                line_says(rank_line(&r, k, "data"), ok, 1, what);
                line_says(rank_line(&r, k, "messages"), msgs, 1, what);
                line_says(rank_line(&r, k, "destroy arrays"), fine, 1, what);
                /* A drain whose MPI_Improbe failed names the call and MPI's
                 * error string (before: neither). */
                const char *probe[] = {"AMP_ERROR_INVALID_ARGUMENT",
                                       "(taking them, MPI_Improbe failed: MPI_ERR_OTHER"};
                if (chunked) line_says(rank_line(&r, k, "drain fault"), probe, 2, what);
            }
        }
    setenv("AMP_MPI_CHUNK_BYTES", "100", 1);
    run_helper(1, "chunks staged", &r);
    unsetenv("AMP_MPI_CHUNK_BYTES");
    cr_assert_neq(r.status, 0, "AMP_MPI_CHUNK_BYTES=100 accepted:\n%s", r.out);
    cr_assert(strstr(r.out, "AMP_MPI_CHUNK_BYTES is \"100\""), "%s\nstderr:\n%s", r.out, r.err);
}

/* A rank that refuses its own all-reduce (a bad argument of its own: a
 * float view as AMP_MPI_DOUBLE) never joins the collective; the others'
 * calls end instead of waiting for it in MPI_Allreduce for ever (the
 * helper's 20 s alarm ended the job): with a time-out set, by the time-out
 * (AMP_ERROR_TIMEOUT, after which the exchanger refuses, as after an
 * exchange's time-out), and without one as soon as the refusing rank
 * destroyed its exchanger (its leaving notice, as for exchanges). 3 ranks,
 * the staged path (the host and device paths reduce the same way). */
Test(mpi_ranks, a_refused_allreduce_ends_the_others_calls, .timeout = 300)
{
    static heat_run r;
    char what[96];
    run_scenario("refused", 3, "staged", &r, what, sizeof what);
    for (int k = 0; k < 3; ++k) {
        const char *own[] = {"AMP_ERROR_INVALID_ARGUMENT", "the view has 4-byte elements, type 0 has 8"};
        if (k == 1) {
            line_says(rank_line(&r, k, "refused with a time-out"), own, 2, what);
            line_says(rank_line(&r, k, "refused"), own, 2, what);
            continue;
        }
        const char *late[] = {"AMP_ERROR_TIMEOUT", "not every rank took part within 500 ms", "destroy it"};
        const char *again[] = {"AMP_ERROR_INVALID_ARGUMENT", "was abandoned"};
        const char *left[] = {"AMP_ERROR_TIMEOUT", "rank 1 left without taking part (it destroyed its exchanger)"};
        const char *fine[] = {"AMP_OK"};
        line_says(rank_line(&r, k, "refused with a time-out"), late, 3, what);
        line_says(rank_line(&r, k, "again"), again, 2, what);
        line_says(rank_line(&r, k, "peer left"), left, 2, what);
        line_says(rank_line(&r, k, "destroy"), fine, 1, what);
        double waited = atof(rank_line(&r, k, "waited"));
        cr_assert(waited < 5.0, "%s: rank %d waited %.3f s for a rank that had left", what, k, waited);
    }
}

/* Rank 0 asks for NCCL, the others for staged: their messages would never
 * meet, so every rank's creation fails, naming both paths and a rank. */
Test(mpi_ranks, paths_that_mix_nccl_are_refused, .timeout = 300)
{
    static heat_run r;
    for (int np = 2; np <= 3; ++np) {
        run_with_fake_nccl(np, "mismatch", -1, &r);
        cr_assert_eq(r.status, 0, "%d ranks: exit %d\n%s\nstderr:\n%s", np, r.status, r.out, r.err);
        for (int k = 0; k < np; ++k) {
            char mine[64], other[48];
            snprintf(mine, sizeof mine, "this rank (%d) chose the %s path", k, k == 0 ? "nccl" : "staged");
            snprintf(other, sizeof other, "rank %d the %s path", k == 0 ? 1 : 0, k == 0 ? "staged" : "nccl");
            const char *want[] = {"AMP_ERROR_INVALID_ARGUMENT", mine, other, "must choose nccl or"};
            line_says(rank_line(&r, k, "create"), want, 4, "mixed paths");
        }
    }
}

/* The staged pipeline (pinned buffers, sends posted by begin, receives
 * copied up as they arrive) and the way before it (AMP_MPI_STAGED_PIPELINE=0)
 * give the same grids and the same statistics. */
Test(mpi_ranks, staged_pipeline_on_and_off_agree, .timeout = 300)
{
    static heat_run r;
    for (int pipeline = 1; pipeline >= 0; --pipeline) {
        if (!pipeline) setenv("AMP_MPI_STAGED_PIPELINE", "0", 1);
        char what[96];
        run_scenario("nonblocking", 2, "staged", &r, what, sizeof what);
        unsetenv("AMP_MPI_STAGED_PIPELINE");
        for (int k = 0; k < 2; ++k) {
            const char *ok[] = {"ok"}, *exact[] = {"exchanges 3 messages 12 bytes 3072 staged 3072"};
            line_says(rank_line(&r, k, "rounds"), ok, 1, what);
            line_says(rank_line(&r, k, "stats blocking"), exact, 1, what);
            line_says(rank_line(&r, k, "stats begun"), exact, 1, what);
            line_says(rank_line(&r, k, "in flight"), ok, 1, what);
        }
    }
}

Test(mpi_heat, kernel_compiles_for_gpu_targets)
{
    SKIP_UNDER_ASAN("compiles inside NVRTC and hipRTC");
    FILE *f = fopen(HIPAMP_HEAT_HIP, "r");
    cr_assert_not_null(f, "cannot open %s", HIPAMP_HEAT_HIP);
    static char src[16384];
    size_t n = fread(src, 1, sizeof src - 1, f);
    fclose(f);
    src[n] = '\0';
    const char *targets[256];
    size_t count = 0;
    ASSERT_OK(amp_compile_targets(targets, 256, &count));
    int built = 0;
    const char *want[] = {"gfx90a", "gfx1030", "sm_90"};
    for (int w = 0; w < 3; ++w)
        for (size_t i = 0; i < count && i < 256; ++i) {
            if (strcmp(targets[i], want[w])) continue;
            amp_code_object *co = NULL;
            ASSERT_OK(amp_compile_for_target(want[w], src, NULL, &co));
            ASSERT_OK(amp_code_object_destroy(co));
            built++;
        }
    if (!built) cr_skip_test("no GPU runtime compiler installed (hipRTC, NVRTC)");
}

/* ------------------------------------------------- cg_mpi under mpiexec */

/* cg_mpi ARGS under mpiexec -n NP (see run_mpi). */
static void run_cg(int np, const char *args, heat_run *r)
{
#ifndef HIPAMP_CG_MPI
    (void)np;
    (void)args;
    (void)r;
    cr_skip_test("cg_mpi is not built (HIPAMP_BUILD_EXAMPLES=OFF)");
#else
    run_mpi(HIPAMP_CG_MPI, np, args, r);
#endif
}

#define CG_N 40

/* A run with --check: exit 0, and rank 0's comparisons with the
 * single-rank solver and the serial reference both agree (cg_solver.c's
 * tolerances: iterations within 1, residuals within 1e-6, solutions within
 * 1e-8); the halo and MPI bytes per iteration are exactly one row of n
 * doubles out and one in per neighbour, and there are two allreduces an
 * iteration. */
static void cg_checked(int np, const char *args, heat_run *r)
{
    run_cg(np, args, r);
    cr_assert_eq(r->status, 0, "%d rank(s), %s: exit %d\n%s\nstderr:\n%s", np, args, r->status, r->out, r->err);
    cr_assert(strstr(r->out, "\ncg_mpi against one rank: agrees"), "%d rank(s), %s:\n%s", np, args, r->out);
    cr_assert(strstr(r->out, "\ncg_mpi against the reference: agrees"), "%d rank(s), %s:\n%s", np, args, r->out);
    double halo = (double)(np - 1) * 2 * 2 * CG_N * sizeof(double);
    cr_assert_eq(field(r, "halo_bytes_per_iteration"), halo, "%d rank(s), %s:\n%s", np, args, r->out);
    cr_assert_eq(field(r, "mpi_bytes_per_iteration"), halo, "%d rank(s), %s:\n%s", np, args, r->out);
    cr_assert_eq(field(r, "allreduces_per_iteration"), 2, "%d rank(s), %s:\n%s", np, args, r->out);
}

/* 1, 2 and 3 ranks: each agrees with one rank and the reference (checked
 * by cg_mpi itself), and with each other: the same iteration count (within
 * one) and final residuals within 1e-6 relative. */
Test(mpi_cg, one_two_and_three_ranks_agree, .timeout = 600)
{
    static heat_run r;
    int it1 = 0;
    double res1 = 0;
    for (int np = 1; np <= 3; ++np) {
        cg_checked(np, "--n 40 --check", &r);
        int it = (int)field(&r, "iterations");
        double res = field(&r, "relative_residual");
        cr_assert(res > 0 && res <= 1e-8, "%d rank(s): residual %g\n%s", np, res, r.out);
        cr_assert(strstr(r.out, "\npath host:"), "%d rank(s) did not take the host path:\n%s", np, r.out);
        char inputs[128];
        snprintf(inputs, sizeof inputs, "\ncg_model_inputs nx %d rows_per_rank %d ranks %d overlap 1 path host ", CG_N,
                 (CG_N + np - 1) / np, np);
        cr_assert(strstr(r.out, inputs), "no \"%s\" in:\n%s", inputs + 1, r.out);
        if (np == 1) {
            it1 = it;
            res1 = res;
            continue;
        }
        cr_assert(abs(it - it1) <= 1, "%d ranks: %d iterations, 1 rank: %d", np, it, it1);
        if (it == it1)
            cr_assert_leq(fabs(res - res1), 1e-6 * res1, "%d ranks: residual %.9e, 1 rank: %.9e", np, res, res1);
    }
}

/* The nccl path (the stand-in library on the CPU accelerator): the dot
 * products' sums go through amp_mpi_exchange_allreduce, two an iteration,
 * all of them counted on the device, and the runs agree with one rank, the
 * reference and the MPI path's iterations and residual, bit for bit (1 and
 * 3 ranks). */
Test(mpi_cg, nccl_path_sums_on_the_device_and_agrees, .timeout = 600)
{
    if (TEST_UNDER_ASAN) cr_skip_test("%s", ASAN_LEAVES_IT);
#ifndef HIPAMP_FAKE_NCCL
    cr_skip_test("the stand-in NCCL library is not built");
#else
    static heat_run r;
    for (int np = 1; np <= 3; np += 2) {
        cg_checked(np, "--n 40 --check --path staged", &r);
        double it_mpi = field(&r, "iterations"), res_mpi = field(&r, "relative_residual");
        use_fake_nccl();
        cg_checked(np, "--n 40 --check --path nccl", &r);
        unsetenv("AMP_MPI_NCCL_LIBRARY");
        cr_assert(strstr(r.out, "\npath nccl:"), "%d rank(s) did not take the nccl path:\n%s", np, r.out);
        cr_assert(strstr(r.out, "ncclAllReduce on the device"), "%d rank(s):\n%s", np, r.out);
        double it = field(&r, "iterations");
        /* Counted over the timed iterations: all but the one of warm-up. */
        cr_assert_eq(field(&r, "allreduces_on_device"), 2 * (it - 1), "%d rank(s):\n%s", np, r.out);
        cr_assert_eq(it, it_mpi, "%d rank(s): %g iterations on nccl, %g through MPI", np, it, it_mpi);
        cr_assert_eq(field(&r, "relative_residual"), res_mpi, "%d rank(s): residuals differ:\n%s", np, r.out);
    }
#endif
}

/* Every path, overlapped and not, on 2 ranks (3 ranks: the middle one
 * exchanges both ways, the staged path overlapped); the staged path copies
 * exactly the halo through its buffers. Grids of 5 rows on 3 ranks (2, 2
 * and 1 rows: no interior rows, one launch after the exchange) and 7 rows
 * on 2 (4 and 3: interior rows of 2 and 1). */
Test(mpi_cg, every_path_overlapped_and_not, .timeout = 900)
{
    if (TEST_UNDER_ASAN) cr_skip_test("%s", ASAN_LEAVES_IT);
    static heat_run r;
    const char *paths[] = {"host", "staged", "device"};
    for (int np = 2; np <= 3; ++np)
        for (int p = np == 3 ? 1 : 0; p < (np == 3 ? 2 : 3); ++p)
            for (int overlap = np == 3 ? 1 : 0; overlap < 2; ++overlap) {
                /* Under ASan the step not overlapped on the staged path only. */
                if (TEST_UNDER_ASAN && !overlap && p != 1) continue;
                char args[128];
                snprintf(args, sizeof args, "--n 40 --check --path %s%s", paths[p], overlap ? "" : " --no-overlap");
                cg_checked(np, args, &r);
                cr_assert(strstr(r.out, overlap ? "\nstep overlapped" : "\nstep not overlapped"), "%s:\n%s", args,
                          r.out);
                /* What ran: one exchange of p's halos an iteration on every
                 * rank, each with the interior rows' launch queued while in
                 * flight when overlapped (every rank of 40 rows has
                 * interior rows), none otherwise. */
                const double iters = field(&r, "iterations");
                cr_assert(iters > 0, "%s:\n%s", args, r.out);
                cr_assert_eq(field(&r, "halo_exchanges"), np * iters, "%s:\n%s", args, r.out);
                cr_assert_eq(field(&r, "halo_exchanges_overlapped"), overlap ? np * iters : 0, "%s:\n%s", args, r.out);
                double halo = (double)(np - 1) * 2 * 2 * CG_N * sizeof(double);
                cr_assert_eq(field(&r, "staged_bytes_per_iteration"), p == 1 ? halo : 0, "%s:\n%s", args, r.out);
            }
    run_cg(3, "--n 5 --check --path staged", &r);
    cr_assert_eq(r.status, 0, "5 rows on 3 ranks:\n%s\nstderr:\n%s", r.out, r.err);
    cr_assert(strstr(r.out, "\ncg_mpi against one rank: agrees"), "5 rows on 3 ranks:\n%s", r.out);
    run_cg(2, "--n 7 --check", &r);
    cr_assert_eq(r.status, 0, "7 rows on 2 ranks:\n%s\nstderr:\n%s", r.out, r.err);
    cr_assert(strstr(r.out, "\ncg_mpi against one rank: agrees"), "7 rows on 2 ranks:\n%s", r.out);
    /* A rectangle (weak scaling's shape): 40 columns, 60 rows. */
    run_cg(2, "--n 40 --ny 60 --check", &r);
    cr_assert_eq(r.status, 0, "40 x 60 on 2 ranks:\n%s\nstderr:\n%s", r.out, r.err);
    cr_assert(strstr(r.out, "\ncg_mpi against the reference: agrees"), "40 x 60 on 2 ranks:\n%s", r.out);
    cr_assert(strstr(r.out, "\ncg_model_inputs nx 40 rows_per_rank 30 ranks 2 "), "%s", r.out);
}

/* The GPUs of the driver whose GPU comes first (the ones
 * amp_mpi_select_accelerator hands out by node-local rank), and that
 * driver's name in *driver ("cuda", "hip"). */
static int gpus_of_the_first_driver(char *driver, size_t n)
{
    amp_accelerator *list[64];
    size_t count = 0;
    ASSERT_OK(amp_accelerator_list(list, 64, &count));
    int gpus = 0;
    driver[0] = '\0';
    for (size_t i = 0; i < count && i < 64; ++i) {
        amp_accelerator_info info;
        ASSERT_OK(amp_accelerator_get_info(list[i], &info));
        if (info.is_emulated) continue;
        size_t k = strcspn(info.device_path, ":");
        if (!driver[0]) snprintf(driver, n, "%.*s", (int)k, info.device_path);
        if (strlen(driver) == k && !strncmp(info.device_path, driver, k)) gpus++;
    }
    return gpus;
}

/* The accelerator rank R named on its "rank R: " line ("" if none). */
static void rank_device(const heat_run *r, int rank, char *out, size_t n)
{
    char key[32];
    snprintf(key, sizeof key, "\nrank %d: ", rank);
    const char *p = strstr(r->out, key);
    out[0] = '\0';
    if (p) snprintf(out, n, "%.*s", (int)strcspn(p + strlen(key), " ,"), p + strlen(key));
}

/* Issue 42: two ranks, one GPU each, on every path this machine offers:
 * staged always, nccl where the vendor's library loads, device where the
 * MPI is GPU-aware. heat_mpi gives the serial reference's checksum, moves
 * exactly the halo and takes the path asked for (no fall-back); cg_mpi
 * agrees with one rank and the reference. Skipped, saying why, with fewer
 * than two GPUs of one driver. */
Test(mpi_heat, every_path_on_two_gpus, .timeout = 900)
{
    char driver[16];
    int gpus = gpus_of_the_first_driver(driver, sizeof driver);
    if (gpus < 2)
        cr_skip_test("needs two GPUs of one driver (%d found%s%s): ci/gpu.sh nccl and two-gpus run it where two are lent",
                     gpus, gpus ? " of " : "", driver);
    g_rank_accelerator = NULL;
    static heat_run r;
    const uint64_t want = reference_checksum(HEAT_NX, HEAT_NY, HEAT_STEPS);
    /* What the auto path took tells whether this MPI is GPU-aware. */
    run_heat(2, HEAT_ARGS, &r);
    cr_assert_eq(last_line_checksum(&r), want, "2 ranks, auto path:\n%s", r.out);
    bool aware = strstr(r.out, !strcmp(driver, "hip") ? ", rocm yes" : "gpu-aware: cuda yes") != NULL;
    void *dl = dlopen(!strcmp(driver, "hip") ? "librccl.so.1" : "libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    bool nccl = dl != NULL;
    if (dl) dlclose(dl);
    const char *paths[] = {"staged", "nccl", "device"};
    const bool offered[] = {true, nccl, aware};
    int ran = 0;
    for (int p = 0; p < 3; ++p) {
        if (!offered[p]) continue;
        for (int overlap = 0; overlap < 2; ++overlap) {
            char args[128], d0[32], d1[32], took[64];
            snprintf(args, sizeof args, HEAT_ARGS " --path %s%s", paths[p], overlap ? "" : " --no-overlap");
            run_heat(2, args, &r);
            cr_assert_eq(last_line_checksum(&r), want, "2 ranks, %s:\n%s\nstderr:\n%s", args, r.out, r.err);
            rank_device(&r, 0, d0, sizeof d0);
            rank_device(&r, 1, d1, sizeof d1);
            cr_assert(d0[0] && d1[0] && strcmp(d0, d1) && !strncmp(d0, driver, strlen(driver)) &&
                          !strncmp(d1, driver, strlen(driver)),
                      "%s: the ranks ran on '%s' and '%s', not on two %s GPUs:\n%s", args, d0, d1, driver, r.out);
            snprintf(took, sizeof took, "\npath %s:", paths[p]);
            cr_assert(strstr(r.out, took), "%s did not take its path (a fall-back?):\n%s\nstderr:\n%s", args, r.out,
                      r.err);
            double halo = 2.0 * 2 * HEAT_NX * sizeof(float);
            cr_assert_eq(field(&r, "halo_bytes_per_step"), halo, "%s:\n%s", args, r.out);
            cr_assert_eq(field(&r, "mpi_bytes_per_step"), halo, "%s:\n%s", args, r.out);
            ran++;
        }
        char args[64];
        snprintf(args, sizeof args, "--n 40 --check --path %s", paths[p]);
        cg_checked(2, args, &r);
        char took[64];
        snprintf(took, sizeof took, "\npath %s:", paths[p]);
        cr_assert(strstr(r.out, took), "cg_mpi %s did not take its path:\n%s", args, r.out);
    }
    cr_assert_geq(ran, 2, "the staged path at least ran");
}

/* The check can fail: stopped after 3 iterations, the run has not
 * converged, and every rank exits 1. */
Test(mpi_cg, a_run_that_did_not_converge_fails_its_check, .timeout = 300)
{
    static heat_run r;
    run_cg(2, "--n 40 --max-iters 3 --check", &r);
    cr_assert_eq(r.status, 1, "exit %d:\n%s\nstderr:\n%s", r.status, r.out, r.err);
    cr_assert(strstr(r.out, "\ncg_mpi against the reference: DIFFERS"), "%s", r.out);
    cr_assert(strstr(r.out, "not converged"), "%s", r.out);
    cr_assert_eq(field(&r, "iterations"), 3, "%s", r.out);
}

/* A grid with fewer rows than ranks (square or not), and bad arguments, stop every rank
 * with exit status 2, saying why on rank 0. */
Test(mpi_cg, too_small_a_grid_and_bad_arguments_are_refused, .timeout = 300)
{
    static heat_run r;
    run_cg(3, "--n 2", &r);
    cr_assert_eq(r.status, 2, "exit %d:\n%s\nstderr:\n%s", r.status, r.out, r.err);
    cr_assert(strstr(r.err, "cg_mpi: a grid of 2 rows (--ny, else --n) is too small for 3 ranks"), "%s", r.err);
    run_cg(3, "--n 40 --ny 2", &r);
    cr_assert_eq(r.status, 2, "exit %d:\n%s\nstderr:\n%s", r.status, r.out, r.err);
    cr_assert(strstr(r.err, "a grid of 2 rows (--ny, else --n) is too small for 3 ranks"), "%s", r.err);
    cr_assert(strstr(r.err, "usage: cg_mpi"), "%s", r.err);
    const char *bad[] = {"--n 1", "--n x", "--tol 0", "--path sideways", "--max-iters", "--frobnicate"};
    const char *says[] = {"--n \"1\"", "--n \"x\"", "--tol \"0\"", "sideways", "--max-iters (no value)",
                          "unknown argument \"--frobnicate\""};
    /* Two ranks for the first; alone (an MPI singleton, no launcher) for
     * the others, which every rank parses alike (a launch of two ranks
     * costs seconds of CI's 2 cores under ASan). */
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        if (TEST_UNDER_ASAN && i > 1 && i + 1 < sizeof bad / sizeof bad[0]) continue; /* the comment above MATRIX_FIRST_RANKS */
        run_cg(i == 0 ? 2 : 0, bad[i], &r);
        cr_assert_eq(r.status, 2, "\"%s\": exit %d:\n%s", bad[i], r.status, r.err);
        cr_assert(strstr(r.err, says[i]), "\"%s\" does not say %s:\n%s", bad[i], says[i], r.err);
    }
    run_cg(0, "--help", &r);
    cr_assert_eq(r.status, 0, "--help: exit %d:\n%s", r.status, r.err);
    cr_assert(strstr(r.out, "usage: cg_mpi"), "%s", r.out);
}

#endif
