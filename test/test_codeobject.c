/* test_codeobject.c — AMD code objects built with no GPU: per-kernel LDS from the metadata note (and a kernel's whole name), s_barrier placement in the disassembly, the refusals (unknown target, bad arguments, destroyed and foreign code objects, options naming a target for hipRTC or NVRTC or a file for them to load or write, compile errors, kernel parameters over 4096 bytes), where hipRTC and NVRTC look for a quoted #include (never in hipRTC's temporary directory's parent or NVRTC's working directory), NVRTC's threads (AMP_GPU_COMPILE_JOBS: --split-compile, the same machine code), build options' macros kept out of the compilers' headers, and inline asm that would read a file refused; NVRTC's end-of-input byte (0xFF) refused. */
#include "support.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <sched.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct expect {
    const char *name;
    uint32_t lds;
    bool barrier;
} expect;

static const expect seeds[] = {
    {"transpose_tiled_even", 1024, true}, {"transpose_tiled_pad", 1024, true},
    {"matmul_tiled16", 2048, true},       {"barrier_loop", 1024, true},
    {"vector_add", 0, false},             {"matmul_simple", 0, false},
};
#define NSEEDS (sizeof seeds / sizeof seeds[0])

/* Compile or skip: hipRTC absent (no ROCm on this machine) is a skip, not a
 * failure, and so is comgr lacking the target. */
static amp_code_object *compile_or_skip(const char *target, const char *src)
{
    amp_code_object *co = NULL;
    amp_status st = amp_compile_for_target(target, src, NULL, &co);
    if (st == AMP_ERROR_UNSUPPORTED) cr_skip_test("cannot build for %s here: %s", target, amp_last_error());
    cr_assert_eq(st, AMP_OK, "amp_compile_for_target(%s): %s: %s", target, amp_status_name(st), amp_last_error());
    cr_assert_not_null(co);
    return co;
}

static void check_lds(const char *target)
{
    amp_code_object *co = compile_or_skip(target, test_kernels_seeds);
    size_t n = amp_code_object_kernel_count(co);
    cr_assert_geq(n, NSEEDS, "%s: %zu kernels in the code object", target, n);
    for (size_t s = 0; s < NSEEDS; ++s) {
        bool found = false;
        for (size_t i = 0; i < n; ++i) {
            amp_kernel_resources r;
            ASSERT_OK(amp_code_object_kernel_resources(co, i, &r));
            if (strcmp(r.name, seeds[s].name) != 0) continue;
            found = true;
            cr_expect_eq(r.lds_bytes, seeds[s].lds, "%s %s: LDS %u bytes, want %u", target, r.name, r.lds_bytes,
                         seeds[s].lds);
            cr_expect_gt(r.vgprs, 0u, "%s %s: no VGPR count", target, r.name);
            cr_expect_gt(r.sgprs, 0u, "%s %s: no SGPR count", target, r.name);
            cr_expect_gt(r.max_flat_workgroup_size, 0u, "%s %s: no max workgroup size", target, r.name);
        }
        cr_expect(found, "%s: kernel %s missing from the metadata", target, seeds[s].name);
    }
    amp_kernel_resources r;
    ASSERT_STATUS(amp_code_object_kernel_resources(co, n, &r), AMP_ERROR_OUT_OF_BOUNDS);
    ASSERT_OK(amp_code_object_destroy(co));
}

Test(codeobject, lds_gfx90a) { check_lds("gfx90a"); }
Test(codeobject, lds_gfx1030) { check_lds("gfx1030"); }

/* A kernel's name of 255 characters (the longest a kernel may have) comes
 * back whole in its resources (name was 128 bytes: two kernels whose names
 * shared their first 127 characters read as one). */
Test(codeobject, a_long_kernel_name_is_read_whole_gfx90a)
{
    char name[256], src[1024];
    memset(name, 'k', 255);
    name[255] = '\0';
    snprintf(src, sizeof src, "AMP_KERNEL(%s, amp::index<1> i, amp::array_view<int, 1> a) { a[i] = 2; }\n", name);
    amp_code_object *co = compile_or_skip("gfx90a", src);
    size_t n = amp_code_object_kernel_count(co);
    bool found = false;
    for (size_t i = 0; i < n; ++i) {
        amp_kernel_resources r;
        ASSERT_OK(amp_code_object_kernel_resources(co, i, &r));
        found = found || !strcmp(r.name, name);
    }
    cr_assert(found, "no kernel of %zu has the whole 255-character name", n);
    ASSERT_OK(amp_code_object_destroy(co));
}

/* Disassemble with llvm-objdump and report, per function label, whether an
 * s_barrier occurs before the next label. */
static bool function_has_barrier(const char *dis, const char *fn, bool *found)
{
    char label[160];
    snprintf(label, sizeof label, "<%s>:", fn);
    const char *p = strstr(dis, label);
    *found = p != NULL;
    if (!p) return false;
    p += strlen(label);
    const char *next = strstr(p, ">:\n");
    const char *bar = strstr(p, "s_barrier");
    return bar && (!next || bar < next);
}

static void check_barriers(const char *target)
{
    amp_code_object *co = compile_or_skip(target, test_kernels_seeds);
    const void *data = NULL;
    size_t size = 0;
    ASSERT_OK(amp_code_object_data(co, &data, &size));
    cr_assert(size > 0);
    if (system("command -v llvm-objdump-15 >/dev/null 2>&1") != 0) {
        amp_code_object_destroy(co);
        cr_skip_test("llvm-objdump-15 not installed: cannot disassemble");
    }
    char path[] = "/tmp/hipamp_co_XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0, "mkstemp failed");
    cr_assert_eq(write(fd, data, size), (ssize_t)size);
    close(fd);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "llvm-objdump-15 -d --mcpu=%s %s", target, path);
    FILE *f = popen(cmd, "r");
    cr_assert_not_null(f);
    size_t cap = 1 << 16, len = 0;
    char *dis = malloc(cap);
    cr_assert_not_null(dis);
    for (size_t got; (got = fread(dis + len, 1, cap - len - 1, f)) > 0;) {
        len += got;
        if (cap - len < 4096) {
            cap *= 2;
            dis = realloc(dis, cap);
            cr_assert_not_null(dis);
        }
    }
    dis[len] = '\0';
    int rc = pclose(f);
    unlink(path);
    cr_assert_eq(rc, 0, "%s failed", cmd);
    for (size_t s = 0; s < NSEEDS; ++s) {
        bool found = false;
        bool has = function_has_barrier(dis, seeds[s].name, &found);
        cr_expect(found, "%s: no function %s in the disassembly", target, seeds[s].name);
        cr_expect_eq(has, seeds[s].barrier, "%s %s: s_barrier %s", target, seeds[s].name,
                     has ? "present, want none" : "absent, want one");
    }
    free(dis);
    amp_code_object_destroy(co);
}

Test(codeobject, barriers_gfx90a) { check_barriers("gfx90a"); }
Test(codeobject, barriers_gfx1030) { check_barriers("gfx1030"); }

/* Skip the refusal tests only when nothing can be built at all. */
static void require_hiprtc(void)
{
    amp_code_object *co = NULL;
    amp_status st = amp_compile_for_target("gfx90a", "", NULL, &co);
    if (st == AMP_ERROR_UNSUPPORTED) cr_skip_test("hipRTC/comgr unavailable: %s", amp_last_error());
    amp_code_object_destroy(co);
}

Test(codeobject, unknown_targets_refused)
{
    require_hiprtc();
    /* Unknown to every comgr, or a feature the chip lacks (hipRTC 5.2 aborts
     * the process on both unless the library refuses them first). */
    const char *bad[] = {"gfx9999", "gfx1030:xnack+", "gfx90a:bogus+"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        amp_code_object *co = (amp_code_object *)1;
        ASSERT_STATUS(amp_compile_for_target(bad[i], test_kernels_seeds, NULL, &co), AMP_ERROR_UNSUPPORTED);
        cr_expect_null(co, "%s: out not cleared", bad[i]);
        cr_expect(strstr(amp_last_error(), bad[i]) != NULL, "message does not name %s: %s", bad[i], amp_last_error());
    }
    /* Newer chips: refused by an old comgr (Debian's 5.2 knows neither),
     * compiled by one that knows them; never an abort. */
    const char *newer[] = {"gfx942", "gfx1100"};
    for (size_t i = 0; i < sizeof newer / sizeof newer[0]; ++i) {
        amp_code_object *co = (amp_code_object *)1;
        amp_status st = amp_compile_for_target(newer[i], test_kernels_seeds, NULL, &co);
        if (st == AMP_OK) {
            cr_expect_gt(amp_code_object_kernel_count(co), 0u, "%s compiled but lists no kernels", newer[i]);
            amp_code_object_destroy(co);
        } else {
            cr_expect_eq(st, AMP_ERROR_UNSUPPORTED, "%s: %s: %s", newer[i], amp_status_name(st), amp_last_error());
            cr_expect_null(co, "%s: out not cleared", newer[i]);
            cr_expect(strstr(amp_last_error(), newer[i]) != NULL, "message does not name %s: %s", newer[i],
                      amp_last_error());
        }
    }
    amp_code_object *co = (amp_code_object *)1;
    ASSERT_STATUS(amp_compile_for_target("", test_kernels_seeds, NULL, &co), AMP_ERROR_INVALID_ARGUMENT);
    cr_expect_null(co);
    ASSERT_STATUS(amp_compile_for_target(NULL, test_kernels_seeds, NULL, &co), AMP_ERROR_INVALID_ARGUMENT);
}

Test(codeobject, features_accepted)
{
    require_hiprtc();
    amp_code_object *co = NULL;
    ASSERT_OK(amp_compile_for_target("gfx90a:xnack+", "AMP_KERNEL(k, amp::index<1> i, amp::array_view<int, 1> a) { a[i] = 1; }",
                                     NULL, &co));
    cr_expect_eq(amp_code_object_kernel_count(co), 1u);
    amp_code_object_destroy(co);
}

Test(codeobject, compile_error_names_user_line)
{
    require_hiprtc();
    const char *src = "// line 1\n"
                      "AMP_KERNEL(k, amp::index<1> i, amp::array_view<int, 1> a)\n"
                      "{ a[i] = undeclared_thing; }\n";
    amp_code_object *co = (amp_code_object *)1;
    ASSERT_STATUS(amp_compile_for_target("gfx90a", src, NULL, &co), AMP_ERROR_COMPILE);
    cr_expect_null(co);
    cr_expect(strstr(amp_last_error(), "kernel.hip:3") != NULL, "message lacks kernel.hip:3: %s", amp_last_error());
}

Test(codeobject, null_arguments)
{
    amp_code_object *co = (amp_code_object *)1;
    ASSERT_STATUS(amp_compile_for_target("gfx90a", NULL, NULL, &co), AMP_ERROR_INVALID_ARGUMENT);
    cr_expect_null(co);
    ASSERT_STATUS(amp_compile_for_target("gfx90a", "", NULL, NULL), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_OK(amp_code_object_destroy(NULL));
    cr_expect_eq(amp_code_object_kernel_count(NULL), 0u);
    const void *d = (const void *)1;
    size_t n = 1;
    ASSERT_STATUS(amp_code_object_data(NULL, &d, &n), AMP_ERROR_INVALID_ARGUMENT);
    cr_expect_null(d);
    amp_kernel_resources r;
    ASSERT_STATUS(amp_code_object_kernel_resources(NULL, 0, &r), AMP_ERROR_INVALID_ARGUMENT);
}

/* A code object destroyed (then used, or destroyed again) or one the
 * library never handed out is refused naming the pointer, never read: a
 * second destroy freed it twice, and the readers read freed memory. */
Test(codeobject, destroyed_and_foreign_code_objects_are_refused)
{
    const char *targets[512];
    size_t n = 0;
    ASSERT_OK(amp_compile_targets(targets, 512, &n));
    if (n == 0) cr_skip_test("neither hipRTC nor NVRTC is installed: no code object to make");
    amp_code_object *co = NULL;
    ASSERT_OK(amp_compile_for_target(targets[0], "AMP_KERNEL(k, amp::index<1> i, amp::array_view<int, 1> v) { v[i] = 1; }",
                                     NULL, &co));
    ASSERT_OK(amp_code_object_destroy(co));
    static char foreign[256];
    amp_code_object *const bad[] = {co, (amp_code_object *)(void *)foreign};
    for (size_t b = 0; b < 2; ++b) {
        char ptr[32];
        snprintf(ptr, sizeof ptr, "%p", (void *)bad[b]);
        const void *d = (const void *)1;
        size_t size = 1;
        ASSERT_STATUS(amp_code_object_data(bad[b], &d, &size), AMP_ERROR_INVALID_ARGUMENT);
        cr_assert(strstr(amp_last_error(), ptr) && strstr(amp_last_error(), "no code object"), "%s", amp_last_error());
        cr_assert(d == NULL && size == 0);
        cr_assert_eq(amp_code_object_kernel_count(bad[b]), 0u);
        cr_assert(strstr(amp_last_error(), "amp_code_object_kernel_count"), "%s", amp_last_error());
        amp_kernel_resources r;
        ASSERT_STATUS(amp_code_object_kernel_resources(bad[b], 0, &r), AMP_ERROR_INVALID_ARGUMENT);
        ASSERT_STATUS(amp_code_object_destroy(bad[b]), AMP_ERROR_INVALID_ARGUMENT);
        cr_assert(strstr(amp_last_error(), "amp_code_object_destroy") && strstr(amp_last_error(), ptr), "%s",
                  amp_last_error());
    }
    /* A live one beside them still works. */
    ASSERT_OK(amp_compile_for_target(targets[0], "AMP_KERNEL(k, amp::index<1> i, amp::array_view<int, 1> v) { v[i] = 2; }",
                                     NULL, &co));
    const void *d = NULL;
    size_t size = 0;
    ASSERT_OK(amp_code_object_data(co, &d, &size));
    cr_assert(d && size > 0);
    ASSERT_OK(amp_code_object_destroy(co));
}

/* Options that load code into hipRTC or NVRTC, read the kernels' code from
 * a file no one checks, or write a file of the caller's naming are refused
 * before the compiler runs (a plugin another user wrote ran in the
 * caller's process; NVRTC's --time appended through another user's link);
 * the same words' harmless neighbours still build. */
Test(codeobject, options_that_load_or_write_files_are_refused)
{
    const char *targets[512], *kinds[2] = {NULL, NULL}; /* one AMD target, one NVIDIA */
    size_t n = 0;
    ASSERT_OK(amp_compile_targets(targets, 512, &n));
    for (size_t i = 0; i < n && i < 512; ++i) {
        int k = targets[i][0] == 's';
        if (!kinds[k]) kinds[k] = targets[i];
    }
    if (!kinds[0] && !kinds[1]) cr_skip_test("neither hipRTC nor NVRTC is installed");
    static const char src[] = "AMP_KERNEL(k, amp::index<1> i, amp::array_view<int, 1> v) { v[i] = 1; }";
    static const char *const refused[][2] = {
        {"-fplugin=/tmp/amp-no-such-plugin.so", "-fplugin=/tmp/amp-no-such-plugin.so"},
        {"-fpass-plugin=/tmp/p.so", "-fpass-plugin=/tmp/p.so"},
        {"-Xclang -load -Xclang /tmp/p.so", "-Xclang"},
        {"-save-temps", "-save-temps"},
        {"-ftime-trace=/tmp/t.json", "-ftime-trace=/tmp/t.json"},
        {"--time=/tmp/amp-time.csv", "--time=/tmp/amp-time.csv"},
        {"--create-pch=/tmp/p.pch", "--create-pch=/tmp/p.pch"},
        {"--use-pch=/etc/passwd", "--use-pch=/etc/passwd"},
        {"--fdevice-time-trace=/tmp/tt", "--fdevice-time-trace=/tmp/tt"},
        {"-o /tmp/out", "-o"},
        {"-MD -MF /tmp/d", "-MD"},
        {"--rocm-device-lib-path=/tmp/libs", "--rocm-device-lib-path=/tmp/libs"},
        {"-fmodule-file=/tmp/m.pcm", "-fmodule-file=/tmp/m.pcm"},
        {"-mllvm -info-output-file=/tmp/i", "-mllvm -info-output-file=/tmp/i"},
        {"-Xptxas --output-file=/tmp/o", "-Xptxas --output-file=/tmp/o"},
        {"-DX=1 @/tmp/rsp", "@/tmp/rsp"},
    };
    for (int k = 0; k < 2; ++k) {
        if (!kinds[k]) continue;
        for (size_t i = 0; i < sizeof refused / sizeof refused[0]; ++i) {
            amp_code_object *co = (amp_code_object *)&co;
            amp_status st = amp_compile_for_target(kinds[k], src, refused[i][0], &co);
            cr_assert_eq(st, AMP_ERROR_INVALID_ARGUMENT, "%s, options \"%s\": %s: %s", kinds[k], refused[i][0],
                         amp_status_name(st), amp_last_error());
            cr_assert_null(co);
            char want[128];
            snprintf(want, sizeof want, "'%s' is not allowed", refused[i][1]);
            cr_assert(strstr(amp_last_error(), want), "%s, options \"%s\": want \"%s\" in: %s", kinds[k],
                      refused[i][0], want, amp_last_error());
        }
        /* Their harmless neighbours build: -mllvm with an LLVM option that
         * writes nothing (hipRTC), line information (NVRTC). */
        amp_code_object *co = NULL;
        ASSERT_OK(amp_compile_for_target(kinds[k], src, k ? "-lineinfo" : "-O3 -mllvm -amdgpu-early-inline-all=true",
                                         &co));
        amp_code_object_destroy(co);
    }
}

/* NVRTC takes byte 0xFF for the end of its input: a kernel after one (in
 * a Latin-1 comment, say) was dropped with AMP_OK. Refused, naming the
 * file and line; in a -D value too (written into the unit). */
Test(codeobject, nvrtc_refuses_a_byte_it_takes_for_the_end_of_the_file)
{
    const char *targets[512], *sm = NULL;
    size_t n = 0;
    ASSERT_OK(amp_compile_targets(targets, 512, &n));
    for (size_t i = 0; i < n && i < 512 && !sm; ++i)
        if (targets[i][0] == 's') sm = targets[i];
    if (!sm) cr_skip_test("NVRTC is not installed");
    static const char two[] = "AMP_KERNEL(first_k, amp::index<1> i, amp::array_view<int, 1> v) { v[i] = 1; }\n"
                              "// caf\xff\n"
                              "AMP_KERNEL(second_k, amp::index<1> i, amp::array_view<int, 1> v) { v[i] = 2; }\n";
    amp_code_object *co = (amp_code_object *)&co;
    amp_status st = amp_compile_for_target(sm, two, NULL, &co);
    cr_assert_eq(st, AMP_ERROR_COMPILE, "%s: %s", amp_status_name(st), amp_last_error());
    cr_assert_null(co);
    cr_assert(strstr(amp_last_error(), "kernel.hip:2: byte 0xFF"), "%s", amp_last_error());
    st = amp_compile_for_target(sm, "AMP_KERNEL(k, amp::index<1> i, amp::array_view<int, 1> v) { v[i] = X; }",
                                "-DX=\xff", &co);
    cr_assert_eq(st, AMP_ERROR_COMPILE, "%s: %s", amp_status_name(st), amp_last_error());
    cr_assert(strstr(amp_last_error(), "byte 0xFF"), "%s", amp_last_error());
    /* Without the byte both kernels build. */
    static const char fine[] = "AMP_KERNEL(first_k, amp::index<1> i, amp::array_view<int, 1> v) { v[i] = 1; }\n"
                               "// cafe\n"
                               "AMP_KERNEL(second_k, amp::index<1> i, amp::array_view<int, 1> v) { v[i] = 2; }\n";
    ASSERT_OK(amp_compile_for_target(sm, fine, NULL, &co));
    const void *d = NULL;
    size_t size = 0;
    ASSERT_OK(amp_code_object_data(co, &d, &size));
    cr_assert(memmem(d, size, "second_k", 8), "the second kernel is not in the code object");
    amp_code_object_destroy(co);
}

Test(codeobject, user_options_cannot_change_target)
{
    require_hiprtc();
    amp_code_object *co = NULL;
    /* Every spelling clang takes as a target: hipRTC 5.2 aborts the process
     * on a target it does not know. */
    const char *const amd[] = {"--offload-arch=gfx1100", "-mcpu=gfx1100", "--gpu-architecture=gfx1100",
                               "--cuda-gpu-arch=gfx1100", "--amdgpu-target=gfx1100"};
    for (size_t i = 0; i < sizeof amd / sizeof amd[0]; ++i) {
        ASSERT_STATUS(amp_compile_for_target("gfx90a", "", amd[i], &co), AMP_ERROR_INVALID_ARGUMENT);
        cr_assert(strstr(amp_last_error(), "name a target") && strstr(amp_last_error(), amd[i]), "%s: %s", amd[i],
                  amp_last_error());
    }
    ASSERT_OK(amp_compile_for_target("gfx90a", "AMP_KERNEL(k, amp::index<1> i, amp::array_view<int, 1> a) { a[i] = FOO; }",
                                     "  -DFOO=7\t-Wall ", &co));
    amp_code_object_destroy(co);
}

/* NVRTC takes a second architecture over ours: the kernels would be built
 * for another GPU than the launch expects (on the PTX path, without the
 * wait the launch's programmatic overlap relies on). */
Test(codeobject, user_options_cannot_change_nvidia_target)
{
    amp_code_object *co = NULL;
    if (amp_compile_for_target("sm_90", "", NULL, &co) == AMP_ERROR_UNSUPPORTED)
        cr_skip_test("cannot build for sm_90 here: %s", amp_last_error());
    amp_code_object_destroy(co);
    const char *const nv[] = {"-arch=compute_80", "--gpu-architecture=sm_80", "-arch sm_80"};
    for (size_t i = 0; i < sizeof nv / sizeof nv[0]; ++i) {
        co = NULL;
        ASSERT_STATUS(amp_compile_for_target("sm_90", "", nv[i], &co), AMP_ERROR_INVALID_ARGUMENT);
        cr_assert(strstr(amp_last_error(), "name a target") && strstr(amp_last_error(), nv[i]), "%s: %s", nv[i],
                  amp_last_error());
        cr_assert_null(co);
    }
}

/* A named NVIDIA target NVRTC does not list is AMP_ERROR_UNSUPPORTED, as
 * the header says: before, "sm_999" gave PTX of NVRTC's newest target and
 * "sm_90xyz" sm_90's code, both with AMP_OK. */
Test(codeobject, an_nvidia_target_nvrtc_does_not_list_is_unsupported)
{
    amp_code_object *co = NULL;
    if (amp_compile_for_target("sm_90", "", NULL, &co) == AMP_ERROR_UNSUPPORTED)
        cr_skip_test("cannot build for sm_90 here: %s", amp_last_error());
    amp_code_object_destroy(co);
    const char *const bad[] = {"sm_999", "sm_90xyz", "sm_"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        co = (amp_code_object *)&co;
        ASSERT_STATUS(amp_compile_for_target(bad[i], "", NULL, &co), AMP_ERROR_UNSUPPORTED);
        cr_assert(strstr(amp_last_error(), bad[i]) && strstr(amp_last_error(), "not one the installed NVRTC knows"),
                  "%s: %s", bad[i], amp_last_error());
        cr_assert_null(co);
    }
}

/* The prelude's refusal of a parameter type is summarized on the first line
 * whichever compiler reported it (clang's log for hipRTC, EDG's for NVRTC). */
static void check_refusal_first_line(const char *target)
{
    static const char src[] = "AMP_KERNEL(takes_pointer, amp::index<1> i, int a, float *p, int b) { }\n";
    amp_code_object *co = (amp_code_object *)1;
    amp_status st = amp_compile_for_target(target, src, NULL, &co);
    if (st == AMP_ERROR_UNSUPPORTED) cr_skip_test("cannot build for %s here: %s", target, amp_last_error());
    cr_assert_eq(st, AMP_ERROR_COMPILE, "%s: %s", target, amp_status_name(st));
    cr_expect_null(co);
    const char *log = amp_last_error();
    const char *nl = strchr(log, '\n');
    int first = nl ? (int)(nl - log) : (int)strlen(log);
    cr_expect(strstr(log, "kernel parameter 1 ") == log && strstr(log, "'float *'") &&
                  strstr(log, "'float *'") - log < first,
              "%s: the first line should name parameter 1 and its type: %.*s", target, first, log);
    cr_expect(strstr(log + first, "raw pointer"), "%s: the compiler's message should follow: %s", target, log);
}

Test(codeobject, refused_parameter_first_line_gfx90a) { check_refusal_first_line("gfx90a"); }
Test(codeobject, refused_parameter_first_line_sm_90) { check_refusal_first_line("sm_90"); }

/* A kernel is an extern "C" function of its own name, and CUDA's headers
 * declare the C math functions (and malloc, printf) extern "C": NVRTC
 * refuses a kernel named exp; the message leads with a line that says so
 * and to rename it. The user's own C function clashing the same way (no
 * kernel of that name) gets no such line. AMD's compiler takes the name. */
Test(codeobject, a_kernel_named_after_a_c_function_cuda_declares_is_told_to_rename)
{
    amp_code_object *co = NULL;
    if (amp_compile_for_target("sm_90", "", NULL, &co) == AMP_ERROR_UNSUPPORTED)
        cr_skip_test("cannot build for sm_90 here: %s", amp_last_error());
    ASSERT_OK(amp_code_object_destroy(co));
    static const char *const named[] = {
        "AMP_KERNEL(exp, amp::index<1> i, amp::array_view<float, 1> a) { a[i] *= 2.0f; }\n",
        "AMP_TILED_KERNEL (\n  sqrt , amp::tiled_index<64> t, amp::array_view<float, 1> a) { a[t.global] = 1.0f; }\n",
    };
    static const char *const names[] = {"'exp'", "'sqrt'"};
    for (int i = 0; i < 2; ++i) {
        co = (amp_code_object *)1;
        ASSERT_STATUS(amp_compile_for_target("sm_90", named[i], NULL, &co), AMP_ERROR_COMPILE);
        cr_assert_null(co);
        const char *log = amp_last_error(), *hint = strstr(log, "hipamp: a kernel cannot be named ");
        cr_assert(hint && strstr(hint, names[i]) == hint + strlen("hipamp: a kernel cannot be named ") &&
                      strstr(hint, "rename the kernel") && strstr(log, "has \"C\" linkage") > hint,
                  "%s", log);
    }
    static const char own[] = "extern \"C\" __device__ int abs(int a, int b) { return a - b; }\n"
                              "AMP_KERNEL(absolute, amp::index<1> i, amp::array_view<int, 1> a) { a[i] = 1; }\n";
    ASSERT_STATUS(amp_compile_for_target("sm_90", own, NULL, &co), AMP_ERROR_COMPILE);
    cr_assert(strstr(amp_last_error(), "has \"C\" linkage") && !strstr(amp_last_error(), "cannot be named"), "%s",
              amp_last_error());
    amp_status st = amp_compile_for_target("gfx90a", named[0], NULL, &co);
    if (st == AMP_ERROR_UNSUPPORTED) return; /* no hipRTC here */
    cr_assert_eq(st, AMP_OK, "gfx90a: %s", amp_last_error());
    ASSERT_OK(amp_code_object_destroy(co));
}

/* A kernel whose parameters take more than 4096 bytes is refused when it
 * compiles, naming the kernel and the bytes on the first line, by every
 * compiler (it used to compile, then be "not found: define it with
 * AMP_KERNEL"). */
static void check_pack_limit(const char *target)
{
    static const char src[] = "struct Big { int v[1250]; };\n"
                              "AMP_KERNEL(big_params, amp::index<1> i, amp::array_view<int, 1> a, Big b) { a[i] = b.v[0]; }\n";
    amp_code_object *co = (amp_code_object *)1;
    amp_status st = amp_compile_for_target(target, src, NULL, &co);
    if (st == AMP_ERROR_UNSUPPORTED) cr_skip_test("cannot build for %s here: %s", target, amp_last_error());
    cr_assert_eq(st, AMP_ERROR_COMPILE, "%s: %s", target, amp_status_name(st));
    const char *log = amp_last_error();
    const char *nl = strchr(log, '\n');
    int first = nl ? (int)(nl - log) : (int)strlen(log);
    cr_expect(strstr(log, "kernel 'big_params' takes 5032 bytes") == log && strstr(log, "4096") - log < first,
              "%s: first line: %.*s", target, first, log);
}

Test(codeobject, parameters_over_the_limit_gfx90a) { check_pack_limit("gfx90a"); }
Test(codeobject, parameters_over_the_limit_sm_90) { check_pack_limit("sm_90"); }

/* A directory every user may add to (mode 1777, as /tmp), private to the
 * test otherwise; the planted header belongs to uid 65534 when we are root,
 * as another user's would. */
static void shared_dir_with_plant(char *dir, size_t n, const char *name, const char *text)
{
    snprintf(dir, n, "%s/hipamp-rtc-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    cr_assert_not_null(mkdtemp(dir));
    cr_assert_eq(chmod(dir, 01777), 0);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    if (geteuid() == 0) cr_assert_eq(chown(path, 65534, 65534), 0, "chown: %s", strerror(errno));
}

static void remove_shared_dir(const char *dir, const char *name)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    unlink(path);
    rmdir(dir);
}

/* hipRTC (comgr) compiles a copy of the source in TMPDIR/comgr-XXXXXX/input:
 * "../../x.h" there is TMPDIR/x.h, which any user can create. A name the
 * scan found nowhere and that could lead out of the compiler's directories
 * is now one that cannot exist: the planted header is never read. */
Test(codeobject, hiprtc_never_reads_beside_its_temporary_directory)
{
    require_hiprtc();
    char dir[PATH_MAX];
    shared_dir_with_plant(dir, sizeof dir, "planted.h", "#define PLANTED 666\n");
    cr_assert_eq(setenv("TMPDIR", dir, 1), 0);
    amp_code_object *co = NULL;
    amp_status st = amp_compile_for_target(
        "gfx90a", "#include \"../../planted.h\"\nAMP_KERNEL(k, amp::index<1> i, amp::array_view<int, 1> a) { a[i] = PLANTED; }\n",
        NULL, &co);
    unsetenv("TMPDIR");
    remove_shared_dir(dir, "planted.h");
    amp_code_object_destroy(co);
    cr_assert_eq(st, AMP_ERROR_COMPILE, "hipRTC compiled the header planted beside its temporary directory (%s)",
                 amp_status_name(st));
    cr_assert(strstr(amp_last_error(), "planted.h"), "%s", amp_last_error());
}

/* NVRTC looks for a quoted #include that is not among its named headers in
 * the process's working directory: another user's header there was compiled
 * in. Quoted names the scan found nowhere now reach NVRTC as <name>. */
Test(codeobject, nvrtc_never_reads_the_working_directory)
{
    amp_code_object *co = NULL;
    if (amp_compile_for_target("sm_90", "", NULL, &co) == AMP_ERROR_UNSUPPORTED)
        cr_skip_test("NVRTC unavailable: %s", amp_last_error());
    amp_code_object_destroy(co);
    char dir[PATH_MAX], cwd[PATH_MAX];
    shared_dir_with_plant(dir, sizeof dir, "planted.h", "#define PLANTED 666\n");
    cr_assert_not_null(getcwd(cwd, sizeof cwd));
    cr_assert_eq(chdir(dir), 0);
    co = NULL;
    amp_status st = amp_compile_for_target(
        "sm_90", "#include \"planted.h\"\nAMP_KERNEL(k, amp::index<1> i, amp::array_view<int, 1> a) { a[i] = PLANTED; }\n",
        NULL, &co);
    cr_assert_eq(chdir(cwd), 0);
    remove_shared_dir(dir, "planted.h");
    amp_code_object_destroy(co);
    cr_assert_eq(st, AMP_ERROR_COMPILE, "NVRTC compiled a header from the working directory (%s)", amp_status_name(st));
    cr_assert(strstr(amp_last_error(), "planted.h"), "%s", amp_last_error());
}

/* Named headers: found through -I, handed to hipRTC and NVRTC under flat
 * names (comgr writes each into its directory by name: "../x.h" went
 * outside it), and their own quoted includes with them. */
static void check_named_headers(const char *target)
{
    char dir[] = "/tmp/hipamp-named-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[PATH_MAX], opts[PATH_MAX + 8];
    snprintf(path, sizeof path, "%s/sub", dir);
    cr_assert_eq(mkdir(path, 0700), 0);
    snprintf(path, sizeof path, "%s/sub/a.h", dir);
    FILE *f = fopen(path, "w");
    fputs("#include \"../b.h\"\n#define A_VALUE (B_VALUE + 1)\n", f);
    fclose(f);
    snprintf(path, sizeof path, "%s/b.h", dir);
    f = fopen(path, "w");
    fputs("#define B_VALUE 41\n", f);
    fclose(f);
    snprintf(opts, sizeof opts, "-I%s", dir);
    amp_code_object *co = NULL;
    amp_status st = amp_compile_for_target(
        target,
        "#include \"sub/a.h\"\nstatic_assert(A_VALUE == 42, \"headers\");\n"
        "AMP_KERNEL(k, amp::index<1> i, amp::array_view<int, 1> a) { a[i] = A_VALUE; }\n",
        opts, &co);
    snprintf(path, sizeof path, "rm -rf '%s'", dir);
    cr_expect_eq(system(path), 0);
    if (st == AMP_ERROR_UNSUPPORTED) cr_skip_test("cannot build for %s here: %s", target, amp_last_error());
    cr_assert_eq(st, AMP_OK, "%s: %s", target, amp_last_error());
    amp_code_object_destroy(co);
}

Test(codeobject, named_headers_gfx90a) { check_named_headers("gfx90a"); }
Test(codeobject, named_headers_sm_90) { check_named_headers("sm_90"); }


/* A simple kernel's __launch_bounds__ as AMD's metadata records it: 256
 * threads by default, what AMP_KERNEL_MAX_BLOCK names otherwise (the bound
 * a stated block size is checked against on a GPU), a tiled kernel's tile. */
static void check_max_block(const char *target)
{
    static const char src[] =
        "AMP_KERNEL(plain, amp::index<1> i, amp::array_view<int, 1> v) { v[i] = 1; }\n"
        "AMP_KERNEL_MAX_BLOCK(wide, 1024)\n"
        "AMP_KERNEL(wide, amp::index<1> i, amp::array_view<int, 1> v) { v[i] = 2; }\n"
        "AMP_KERNEL_MAX_BLOCK(narrow, 96)\n"
        "AMP_KERNEL(narrow, amp::index<2> i, amp::array_view<int, 2> v) { v[i] = 3; }\n"
        "AMP_TILED_KERNEL(tiled, amp::tiled_index<8, 16> t, amp::array_view<int, 2> v) { v[t.global] = 4; }\n";
    static const struct { const char *name; uint32_t max; } want[] = {
        {"plain", 256}, {"wide", 1024}, {"narrow", 96}, {"tiled", 128}};
    amp_code_object *co = compile_or_skip(target, src);
    size_t n = amp_code_object_kernel_count(co);
    for (size_t w = 0; w < sizeof want / sizeof want[0]; ++w) {
        bool found = false;
        for (size_t i = 0; i < n; ++i) {
            amp_kernel_resources r;
            ASSERT_OK(amp_code_object_kernel_resources(co, i, &r));
            if (strcmp(r.name, want[w].name) != 0) continue;
            found = true;
            cr_expect_eq(r.max_flat_workgroup_size, want[w].max, "%s %s: max workgroup size %u, want %u", target,
                         r.name, r.max_flat_workgroup_size, want[w].max);
        }
        cr_expect(found, "%s: kernel %s missing from the metadata", target, want[w].name);
    }
    ASSERT_OK(amp_code_object_destroy(co));
}

Test(codeobject, max_block_gfx90a) { check_max_block("gfx90a"); }
Test(codeobject, max_block_gfx1030) { check_max_block("gfx1030"); }

/* ---------------------------------------- NVRTC's threads (AMP_GPU_COMPILE_JOBS) */

/* Section i of an ELF64 image: its name and bytes; false past the last or
 * for an image that is not one. */
static bool elf_section(const void *image, size_t size, unsigned i, const char **name, const void **bytes,
                        size_t *len)
{
    const Elf64_Ehdr *eh = image;
    if (size < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64) return false;
    if (i >= eh->e_shnum || eh->e_shstrndx >= eh->e_shnum || eh->e_shoff > size ||
        (size - eh->e_shoff) / sizeof(Elf64_Shdr) < eh->e_shnum)
        return false;
    const Elf64_Shdr *sh = (const Elf64_Shdr *)((const char *)image + eh->e_shoff);
    const Elf64_Shdr *names = &sh[eh->e_shstrndx];
    if (names->sh_offset > size || sh[i].sh_name >= names->sh_size || names->sh_size > size - names->sh_offset)
        return false;
    *name = (const char *)image + names->sh_offset + sh[i].sh_name;
    bool nobits = sh[i].sh_type == SHT_NOBITS;
    if (!nobits && (sh[i].sh_offset > size || sh[i].sh_size > size - sh[i].sh_offset)) return false;
    *bytes = nobits ? NULL : (const char *)image + sh[i].sh_offset;
    *len = nobits ? 0 : sh[i].sh_size;
    return true;
}

/* How many .text sections (the kernels' machine code) a has, each found in
 * b under its name with the same bytes; -1 at the first that is not. */
static int same_text_sections(const void *a, size_t na, const void *b, size_t nb)
{
    int count = 0;
    const char *name, *name_b;
    const void *bytes, *bytes_b;
    size_t len, len_b;
    for (unsigned i = 0; elf_section(a, na, i, &name, &bytes, &len); ++i) {
        if (strncmp(name, ".text", 5)) continue;
        bool found = false;
        for (unsigned j = 0; !found && elf_section(b, nb, j, &name_b, &bytes_b, &len_b); ++j)
            found = !strcmp(name, name_b) && len == len_b && (!len || !memcmp(bytes, bytes_b, len));
        if (!found) return -1;
        ++count;
    }
    return count;
}

/* NVRTC's version as the library finds it (the same names, in the same
 * order), 0 where none loads. */
static int nvrtc_version_here(void)
{
    static const char *const names[] = {"libnvrtc.so.13",
                                        "libnvrtc.so.12",
                                        "libnvrtc.so.11.2",
                                        "libnvrtc.so",
                                        "/usr/local/cuda/lib64/libnvrtc.so",
                                        "/usr/local/cuda/targets/x86_64-linux/lib/libnvrtc.so",
                                        "/usr/local/cuda/targets/sbsa-linux/lib/libnvrtc.so",
                                        NULL};
    for (int i = 0; names[i]; ++i) {
        void *lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (!lib) continue;
        int (*version)(int *, int *) = (int (*)(int *, int *))dlsym(lib, "nvrtcVersion");
        int major = 0, minor = 0;
        if (version) version(&major, &minor);
        dlclose(lib);
        return major * 100 + minor;
    }
    return 0;
}

static amp_code_object *sm90_with_jobs(const char *src, const char *jobs)
{
    cr_assert_eq(setenv("AMP_GPU_COMPILE_JOBS", jobs, 1), 0);
    amp_code_object *co = NULL;
    amp_status st = amp_compile_for_target("sm_90", src, NULL, &co);
    unsetenv("AMP_GPU_COMPILE_JOBS");
    cr_assert_eq(st, AMP_OK, "AMP_GPU_COMPILE_JOBS=%s: %s: %s", jobs, amp_status_name(st), amp_last_error());
    return co;
}

/* Whether ptxas ran with -split-compile N: it writes the options it ran
 * with into the CUBIN (.note.nv.tkinfo), "-arch sm_90 -split-compile 4 ". */
static bool split_with(const amp_code_object *co, int n)
{
    const void *d;
    size_t len;
    cr_assert_eq(amp_code_object_data(co, &d, &len), AMP_OK);
    char want[40];
    if (n > 1) snprintf(want, sizeof want, "-split-compile %d ", n);
    else snprintf(want, sizeof want, "-split-compile");
    bool has = memmem(d, len, want, strlen(want)) != NULL;
    return n > 1 ? has : !has;
}

/* AMP_GPU_COMPILE_JOBS sets NVRTC's --split-compile (one worker: none; any
 * value not in 1..8: the CPUs this process may use, at most 8) for a source
 * of two kernels or more (a source of one gets none), and the kernels'
 * machine code is the same either way. */
Test(codeobject, nvrtc_split_compile_changes_no_machine_code, .timeout = 120)
{
    amp_code_object *probe = NULL;
    if (amp_compile_for_target("sm_90", "", NULL, &probe) == AMP_ERROR_UNSUPPORTED)
        cr_skip_test("NVRTC unavailable: %s", amp_last_error());
    amp_code_object_destroy(probe);
    int version = nvrtc_version_here();
    if (version < 1204)
        cr_skip_test("NVRTC %d.%d takes no --split-compile (12.4 and later do)", version / 100, version % 100);
    amp_code_object *one = sm90_with_jobs(test_kernels_seeds, "1"), *four = sm90_with_jobs(test_kernels_seeds, "4");
    cr_assert(split_with(one, 1), "AMP_GPU_COMPILE_JOBS=1 compiled with -split-compile");
    cr_assert(split_with(four, 4), "AMP_GPU_COMPILE_JOBS=4 did not compile with -split-compile 4");
    const void *a, *b;
    size_t na, nb;
    cr_assert_eq(amp_code_object_data(one, &a, &na), AMP_OK);
    cr_assert_eq(amp_code_object_data(four, &b, &nb), AMP_OK);
    int texts = same_text_sections(a, na, b, nb);
    cr_assert_geq(texts, (int)NSEEDS, "the split compile's machine code differs (%d .text sections the same)", texts);
    amp_code_object_destroy(one);
    amp_code_object_destroy(four);

    amp_code_object *single =
        sm90_with_jobs("AMP_KERNEL(k, amp::index<1> i, amp::array_view<int, 1> a) { a[i] = 3; }\n", "4");
    cr_expect(split_with(single, 1), "a source of one kernel compiled with -split-compile");
    amp_code_object_destroy(single);
    amp_code_object *two = sm90_with_jobs("AMP_KERNEL(k, amp::index<1> i, amp::array_view<int, 1> a) { a[i] = 3; }\n"
                                          "AMP_KERNEL(j, amp::index<1> i, amp::array_view<int, 1> a) { a[i] = 4; }\n",
                                          "8");
    cr_expect(split_with(two, 8), "AMP_GPU_COMPILE_JOBS=8 on two kernels: not -split-compile 8");
    amp_code_object_destroy(two);

    cpu_set_t set;
    cr_assert_eq(sched_getaffinity(0, sizeof set, &set), 0);
    int dflt = CPU_COUNT(&set) < 8 ? CPU_COUNT(&set) : 8;
    static const char *const refused[] = {"0", "9", "-4", "four", "4x"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; ++i) {
        amp_code_object *co = sm90_with_jobs(test_kernels_seeds, refused[i]);
        cr_expect(split_with(co, dflt), "AMP_GPU_COMPILE_JOBS=%s: not the default of %d workers", refused[i], dflt);
        amp_code_object_destroy(co);
    }
}

/* Build options that define short uppercase names (-DN=4 is the README's
 * example) reach the preludes unharmed: their own names are reserved
 * (__amp_N, ...), so hipRTC (clang) and NVRTC (EDG) compile the kernels of
 * test_program.c's build_options_may_define_short_uppercase_names with its
 * options (every build failed "in expansion of macro 'N'" inside the
 * prelude).
 *
 * The GPU compilers' own headers, which come before hipamp's text, use
 * some of these names themselves (HIP 5.2's amd_hip_runtime.h and
 * amd_hip_vector_types.h and clang's __clang_hip_math.h: T, F, R, V, B,
 * U; NVRTC's built-in header: T): a GPU build writes its -D and -U options
 * as lines after hipamp's text (lib/gpu/option_macros.c), so that neither
 * those headers nor the prelude see them; the options' order holds (-U
 * after -D), and so do the long forms. Before, -DT and -DF failed in the
 * compilers' headers, and -Darray_view=1024 in the prelude. */
#include "macro_names.h"

static void check_macro_names(const char *target)
{
    amp_code_object *co = NULL;
    amp_status st = amp_compile_for_target(target, macro_names_src, MACRO_NAME_OPTIONS, &co);
    if (st == AMP_ERROR_UNSUPPORTED) cr_skip_test("cannot build for %s here: %s", target, amp_last_error());
    cr_assert_eq(st, AMP_OK, "%s: %s: %.3000s", target, amp_status_name(st), amp_last_error());
    if (strncmp(target, "sm_", 3)) /* (0 for an NVIDIA target: its resources are not read) */
        cr_expect_eq(amp_code_object_kernel_count(co), 3, "%s: %zu kernels", target, amp_code_object_kernel_count(co));
    ASSERT_OK(amp_code_object_destroy(co));
    /* A public name of the prelude: a kernel that does not use it builds. */
    co = NULL;
    st = amp_compile_for_target(target, "AMP_KERNEL(plain, amp::index<1> i, int x) { (void)x; }\n",
                                "-Darray_view=1024", &co);
    cr_assert_eq(st, AMP_OK, "%s: %s: %.3000s", target, amp_status_name(st), amp_last_error());
    ASSERT_OK(amp_code_object_destroy(co));
    /* In order, in every spelling: Z defined then undefined, the long
     * form's value, one of a separate word, a function-like macro. */
    static const char src[] = "#ifdef Z\n#error Z is defined\n#endif\n"
                              "#if LONG != 7 || SEP != 8 || SQ(3) != 9\n#error wrong values\n#endif\n"
                              "AMP_KERNEL(k, amp::index<1> i, amp::array_view<T, 1> a) { a[i] = (T)(F + SQ(i[0])); }\n";
    co = NULL;
    st = amp_compile_for_target(target, src, "-DZ -DT=float -DF=6 -UZ --define-macro=LONG=7 -D SEP=8 -DSQ(x)=((x)*(x))",
                                &co);
    cr_assert_eq(st, AMP_OK, "%s: %s: %.3000s", target, amp_status_name(st), amp_last_error());
    ASSERT_OK(amp_code_object_destroy(co));
}

Test(codeobject, options_may_define_short_uppercase_names_gfx90a) { check_macro_names("gfx90a"); }
Test(codeobject, options_may_define_short_uppercase_names_sm_90) { check_macro_names("sm_90"); }

/* Inline asm that reads a file (.incbin, .include) in a build for an AMD
 * target: hipRTC's integrated assembler reads it and lists it nowhere, so
 * neither the checks every header gets (another user's file) nor the
 * caches' keys (an edit) would see it. Refused before hipRTC runs, naming
 * the line and the directive, in any case of letters; the word in a
 * comment, in a string that is no directive, or as a member's name is
 * not one. Before, the file (here one that exists) was assembled in. */
Test(codeobject, inline_asm_that_reads_a_file_is_refused_gfx90a)
{
    char blob[] = "/tmp/hipamp-asm-blob-XXXXXX";
    int fd = mkstemp(blob);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, "\x07\0\0\0", 4), 4);
    close(fd);
    char src[1024];
    snprintf(src, sizeof src,
             "AMP_KERNEL(k, amp::index<1> i, amp::array_view<int, 1> a) { a[i] = 1; }\n"
             "__device__ void f() {\n"
             "  asm volatile(\".pushsection .rodata\\n.INCBIN \\\"%s\\\"\\n.popsection\");\n"
             "}\n",
             blob);
    amp_code_object *co = (amp_code_object *)1;
    amp_status st = amp_compile_for_target("gfx90a", src, NULL, &co);
    unlink(blob);
    if (st == AMP_ERROR_UNSUPPORTED) cr_skip_test("cannot build for gfx90a here: %s", amp_last_error());
    cr_assert_eq(st, AMP_ERROR_COMPILE, "%s", amp_status_name(st));
    cr_assert_null(co);
    cr_assert(strstr(amp_last_error(), "kernel.hip:3: inline asm with a .incbin directive") == amp_last_error(),
              "%s", amp_last_error());
    co = NULL;
    st = amp_compile_for_target("gfx90a",
                                "AMP_KERNEL(k, amp::index<1> i, amp::array_view<int, 1> a) { a[i] = 1; }\n"
                                "__device__ void g() { asm volatile(\"s_nop 0\\n\\t.include \\\"/tmp/no.s\\\"\"); }\n",
                                NULL, &co);
    cr_assert_eq(st, AMP_ERROR_COMPILE, "%s", amp_status_name(st));
    cr_assert(strstr(amp_last_error(), "kernel.hip:2: inline asm with a .include directive"), "%s", amp_last_error());
    co = NULL;
    ASSERT_OK(amp_compile_for_target("gfx90a",
                                     "// asm(\".incbin \\\"x\\\"\")\n"
                                     "struct S { __device__ void include() {} };\n"
                                     "AMP_KERNEL(k, amp::index<1> i, amp::array_view<int, 1> a) {\n"
                                     "  S s; s.include(); const char *m = \"see .include\"; (void)m; a[i] = 1; }\n",
                                     NULL, &co));
    ASSERT_OK(amp_code_object_destroy(co));
}
