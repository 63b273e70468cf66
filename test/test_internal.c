/* test_internal.c — white-box tests of the core's pure parts, linked with the library's objects: the box algebra of coherence (subtract, add with merging, cover, overflow behaviour), the signature-record check (every field a prelude could not have produced), compile-log summaries, the #include rewrite for named-header compilers, the disk cache's size check, the CPU accelerator's launch-width search (on a made-up host's times), the storage lock under contention and in a forked child (given up or taken over), the environment's whole-number rule, the slab pools' giving memory back, the CPU pool's blocks (each thread's own first, every index once) and its deschedule check (a descheduled spinner stops its own thread's spinning, not the others'), and what the CPU accelerator's split build accepts to compile in parts, and its loop transformation's parse with the library's part precompiled; which names bring the device library into a GPU build, and that leaving it out changes no machine code; the AMD metadata reader refusing a note whose key is no string; the GPU vendor libraries' install directories searched after the loader's path, under the trusted-file rule. */
#include "stderr_capture.h"
#include "support.h"

#include "core/internal.h"
#include "cpu/cpu_internal.h"
#include "cpu/loops/loops.h"
#include "gpu/gpu_driver.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ------------------------------------------------------------------ boxes */

static amp__box box2(int r0, int r1, int c0, int c1)
{
    amp__box b;
    memset(&b, 0, sizeof b);
    b.lo[0] = r0;
    b.hi[0] = r1;
    b.lo[1] = c0;
    b.hi[1] = c1;
    return b;
}

static int64_t total_volume(const amp__box *l, int n)
{
    int64_t v = 0;
    for (int i = 0; i < n; ++i) v += amp__box_volume(&l[i], 2);
    return v;
}

/* Every point of [0,R)x[0,C): in exactly `want` boxes of the list. */
static void check_cover(const amp__box *l, int n, int R, int C, bool (*inside)(int, int))
{
    for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c) {
            int hits = 0;
            for (int i = 0; i < n; ++i)
                if (r >= l[i].lo[0] && r < l[i].hi[0] && c >= l[i].lo[1] && c < l[i].hi[1]) hits++;
            int want = inside(r, c) ? 1 : 0;
            cr_assert_eq(hits, want, "point (%d,%d) is in %d boxes, want %d", r, c, hits, want);
        }
}

static bool outside_hole(int r, int c) { return !(r >= 3 && r < 6 && c >= 4 && c < 9); }

Test(box, subtract_a_hole_leaves_slabs_that_tile_the_rest)
{
    amp__box l[AMP__MAX_BOXES] = {box2(0, 10, 0, 12)};
    int n = 1;
    amp__box hole = box2(3, 6, 4, 9);
    cr_assert(amp__boxes_subtract(l, &n, &hole, 2));
    cr_assert_eq(n, 4, "a hole in the middle leaves 2r = 4 slabs, got %d", n);
    cr_assert_eq(total_volume(l, n), 10 * 12 - 3 * 5);
    check_cover(l, n, 10, 12, outside_hole);
}

Test(box, subtract_disjoint_and_whole)
{
    amp__box l[AMP__MAX_BOXES] = {box2(0, 4, 0, 4)};
    int n = 1;
    amp__box far = box2(10, 12, 10, 12);
    cr_assert(amp__boxes_subtract(l, &n, &far, 2));
    cr_assert_eq(n, 1);
    amp__box all = box2(0, 4, 0, 4);
    cr_assert(amp__boxes_subtract(l, &n, &all, 2));
    cr_assert_eq(n, 0, "subtracting the whole box leaves nothing");
}

Test(box, add_merges_a_loop_over_rows_into_one_box)
{
    amp__box l[AMP__MAX_BOXES];
    int n = 0;
    for (int r = 0; r < 40; ++r) {
        amp__box row = box2(r, r + 1, 0, 40);
        cr_assert(amp__boxes_add(l, &n, &row, 2));
    }
    cr_assert_eq(n, 1, "40 adjacent rows should merge into one box, got %d", n);
    cr_assert(l[0].lo[0] == 0 && l[0].hi[0] == 40 && l[0].lo[1] == 0 && l[0].hi[1] == 40);
    amp__box inner = box2(5, 9, 3, 7);
    cr_assert(amp__boxes_cover(l, n, &inner, 2));
    amp__box poking = box2(39, 41, 0, 1);
    cr_assert(!amp__boxes_cover(l, n, &poking, 2));
}

Test(box, add_drops_boxes_inside_and_ignores_contained)
{
    amp__box l[AMP__MAX_BOXES];
    int n = 0;
    amp__box small = box2(2, 3, 2, 3), big = box2(0, 10, 0, 10), smaller = box2(4, 5, 4, 5);
    cr_assert(amp__boxes_add(l, &n, &small, 2));
    cr_assert(amp__boxes_add(l, &n, &big, 2));
    cr_assert_eq(n, 1, "a box inside the new one is dropped");
    cr_assert(amp__boxes_add(l, &n, &smaller, 2));
    cr_assert_eq(n, 1, "a box already covered adds nothing");
}

Test(box, overflow_is_reported_and_leaves_the_list_unchanged)
{
    amp__box l[AMP__MAX_BOXES];
    int n = 0;
    /* Disjoint, unmergeable points on a diagonal fill the list. */
    for (int i = 0; i < AMP__MAX_BOXES; ++i) {
        amp__box p = box2(2 * i, 2 * i + 1, 2 * i, 2 * i + 1);
        cr_assert(amp__boxes_add(l, &n, &p, 2), "box %d should fit", i);
    }
    cr_assert_eq(n, AMP__MAX_BOXES);
    amp__box copy[AMP__MAX_BOXES];
    memcpy(copy, l, sizeof copy);
    amp__box extra = box2(1000, 1001, 0, 1);
    cr_assert(!amp__boxes_add(l, &n, &extra, 2), "a full list must refuse");
    cr_assert_eq(n, AMP__MAX_BOXES);
    cr_assert(!memcmp(copy, l, sizeof copy), "a refused add changed the list");
    /* A hole that splits every box would overflow too. */
    amp__box cut = box2(0, 1000, 0, 1000);
    int m = n;
    cr_assert(amp__boxes_subtract(l, &m, &cut, 2), "removing everything needs no room");
    cr_assert_eq(m, 0);
}

Test(box, intersect_and_volume_rank3)
{
    amp__box a, b, out;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    for (int d = 0; d < 3; ++d) {
        a.lo[d] = 0;
        a.hi[d] = 10;
        b.lo[d] = 5;
        b.hi[d] = 15;
    }
    cr_assert(amp__box_intersect(&a, &b, 3, &out));
    cr_assert_eq(amp__box_volume(&out, 3), 125);
    b.lo[2] = 10;
    cr_assert(!amp__box_intersect(&a, &b, 3, &out), "touching boxes do not intersect");
}

/* ------------------------------------------------------- signature check */

/* A record as the prelude makes it for (view<float,2>, int, double). */
static amp__signature good_record(void)
{
    amp__signature g;
    memset(&g, 0, sizeof g);
    g.magic = AMP__SIG_MAGIC;
    g.version = AMP__SIG_VERSION;
    g.tiled = 1;
    g.rank = 2;
    g.tile[0] = 16;
    g.tile[1] = 16;
    g.nparams = 3;
    g.params[0] = (amp__sig_param){AMP_ARG_VIEW, 4, 2, 0, 0, AMP__DESC_SIZE(2), 8, 0};
    g.params[1] = (amp__sig_param){AMP_ARG_INT32, 4, 0, 0, 32, 4, 4, 0};
    g.params[2] = (amp__sig_param){AMP_ARG_FLOAT64, 8, 0, 0, 40, 8, 8, 0};
    g.pack_size = 56;
    g.pack_align = 8;
    return g;
}

static void expect_refused(amp__signature g, const char *needle)
{
    char why[256] = "";
    cr_assert(!amp__signature_valid(&g, why, sizeof why), "a bad record was accepted (want: %s)", needle);
    cr_assert(strstr(why, needle), "reason \"%s\" should mention \"%s\"", why, needle);
}

Test(signature, a_prelude_record_is_accepted)
{
    amp__signature g = good_record();
    char why[256] = "";
    cr_assert(amp__signature_valid(&g, why, sizeof why), "refused: %s", why);
}

Test(signature, the_issue_forgery_is_refused)
{
    /* An int64 of size 1 at the last byte of a 4096-byte pack. */
    amp__signature g = good_record();
    g.nparams = 1;
    memset(g.params, 0, sizeof g.params);
    g.params[0] = (amp__sig_param){AMP_ARG_INT64, 8, 0, 0, 4095, 1, 1, 0};
    g.pack_size = 4096;
    g.pack_align = 1;
    expect_refused(g, "parameter 0");
}

Test(signature, each_field_is_checked)
{
    amp__signature g;
    g = good_record(); g.magic = 0; expect_refused(g, "magic");
    g = good_record(); g.version = 1; expect_refused(g, "version");
    g = good_record(); g.tiled = 2; expect_refused(g, "tiled");
    g = good_record(); g.rank = 4; expect_refused(g, "rank");
    g = good_record(); g.tile[1] = 0; expect_refused(g, "tile dimension 1");
    g = good_record(); g.tile[2] = 4; expect_refused(g, "unused tile dimension 2");
    g = good_record(); g.tile[0] = 70000; expect_refused(g, "tile dimension 0");
    g = good_record(); g.nparams = 33; expect_refused(g, "parameter count");
    g = good_record(); g.pack_size = 5000; expect_refused(g, "pack");
    g = good_record(); g.pack_align = 3; expect_refused(g, "alignment");
    g = good_record(); g.pack_align = 16; expect_refused(g, "pack alignment");
    g = good_record(); g.params[1].kind = 99; expect_refused(g, "unknown kind");
    g = good_record(); g.params[1].size = 1; g.params[1].elem_size = 1; expect_refused(g, "4-byte kind");
    g = good_record(); g.params[1].offset = 33; expect_refused(g, "offset");
    g = good_record(); g.params[1].offset = 24; expect_refused(g, "offset 24"); /* overlaps the view */
    g = good_record(); g.params[2].offset = 44; g.params[2].align = 4; expect_refused(g, "8-byte kind");
    g = good_record(); g.params[0].size = 16; expect_refused(g, "descriptor");
    g = good_record(); g.params[0].rank = AMP_MAX_RANK + 1; expect_refused(g, "rank");
    g = good_record(); g.params[0].elem_size = 0; expect_refused(g, "element size");
    g = good_record(); g.params[0].is_const = 2; expect_refused(g, "const");
    g = good_record(); g.params[1].is_const = 1; expect_refused(g, "value");
    g = good_record(); g.params[1].reserved = 7; expect_refused(g, "reserved");
    g = good_record(); g.pack_size = 64; expect_refused(g, "pack of 64 bytes");
    g = good_record(); g.params[5].kind = AMP_ARG_INT32; expect_refused(g, "unused parameter slot 5");
    g = good_record(); g.tiled = 0; expect_refused(g, "unused tile dimension 0");
}

Test(signature, structs_and_small_kinds)
{
    amp__signature g;
    memset(&g, 0, sizeof g);
    g.magic = AMP__SIG_MAGIC;
    g.version = AMP__SIG_VERSION;
    g.rank = 1;
    g.nparams = 3;
    g.params[0] = (amp__sig_param){AMP_ARG_BOOL, 1, 0, 0, 0, 1, 1, 0};
    g.params[1] = (amp__sig_param){AMP_ARG_STRUCT, 48, 0, 0, 16, 48, 16, 0};
    g.params[2] = (amp__sig_param){AMP_ARG_UINT16, 2, 0, 0, 64, 2, 2, 0};
    g.pack_size = 80;
    g.pack_align = 16;
    char why[256] = "";
    cr_assert(amp__signature_valid(&g, why, sizeof why), "refused: %s", why);
    g.params[1].size = 40; /* not a multiple of its alignment */
    g.params[1].elem_size = 40;
    cr_assert(!amp__signature_valid(&g, why, sizeof why));
    cr_assert(strstr(why, "struct"), "%s", why);
}

/* ------------------------------------------------ compile log summaries */

Test(compile_log, clang_and_edg_refusals)
{
    static const char clang_log[] =
        "amp_prelude.hip:250:5: error: static assertion failed due to requirement '!is_pointer<float *>::value'\n"
        "amp_prelude.hip:308:28: note: in instantiation of template class "
        "'amp::detail::kernel_parameter<2, amp::vec<float, 4> *>' requested here\n";
    static const char edg_log[] =
        "amp_prelude.hip(250): error: static assertion failed with \"hipamp: ...\"\n"
        "          detected during:\n"
        "            instantiation of class \"amp::detail::kernel_parameter<Position, T> [with Position=3, "
        "T=const int &]\" at line 308\n";
    long pos = -1;
    const char *type = NULL;
    int len = 0;
    cr_assert(amp__log_param_refusal(clang_log, &pos, &type, &len));
    cr_expect(pos == 2 && len == (int)strlen("amp::vec<float, 4> *") && !strncmp(type, "amp::vec<float, 4> *", (size_t)len),
              "clang: %ld '%.*s'", pos, len, type);
    cr_assert(amp__log_param_refusal(edg_log, &pos, &type, &len));
    cr_expect(pos == 3 && len == (int)strlen("const int &") && !strncmp(type, "const int &", (size_t)len),
              "EDG: %ld '%.*s'", pos, len, type);
    /* Mentions that are not a refusal's instantiation are not summarized. */
    cr_expect(!amp__log_param_refusal("error: no kernel_parameter<here\n", &pos, &type, &len));
    cr_expect(!amp__log_param_refusal("kernel_parameter<Position, T> at line 3\n[with Position=1, T=int]", &pos,
                                      &type, &len));
    cr_expect(!amp__log_param_refusal("", &pos, &type, &len));
    cr_expect(!amp__log_param_refusal(NULL, &pos, &type, &len));
}

/* The prelude's refusal of an argument pack over 4096 bytes, as each
 * compiler reports it, goes on the first line with the size and the name. */
Test(compile_log, pack_size_refusals)
{
    static const char *const logs[] = {
        /* gcc */
        "amp_prelude.hip: In instantiation of 'struct amp::detail::kernel_parameter_bytes<5032>':\n"
        "amp_prelude.hip:467:75: error: static assertion failed: hipamp: the parameters of kernel 'big' take more\n",
        /* EDG (NVRTC) */
        "instantiation of class \"amp::detail::kernel_parameter_bytes<Bytes> [with Bytes=5032UL]\" at line 348\n"
        "kernel.hip:2: error: static assertion failed with \"hipamp: the parameters of kernel 'big' take more\"\n",
        /* clang (hipRTC): the name only on the user's line */
        "note: in instantiation of template class 'amp::detail::kernel_parameter_bytes<5032>' requested here\n"
        "AMP_KERNEL(big, amp::index<1> i, Big b) { }\n#define AMP_KERNEL(name, ...) AMP__KERNEL(name, __VA_ARGS__)\n",
    };
    for (size_t i = 0; i < sizeof logs / sizeof logs[0]; ++i) {
        amp__compile_log_summarize(amp__fail(AMP_ERROR_COMPILE, "%s", logs[i]));
        cr_expect(strstr(amp_last_error(), "kernel 'big' takes 5032 bytes") == amp_last_error() &&
                      strstr(amp_last_error(), logs[i]),
                  "log %zu: %s", i, amp_last_error());
    }
}

/* ------------------------------------------------------- the include scan */

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s: %s", path, strerror(errno));
    fputs(text, f);
    fclose(f);
}

/* What a named-header compiler gets: every header under a flat name (comgr
 * writes each into its own directory by name: "../b.h" was written outside
 * it), every #include rewritten to those names, names the scan found
 * nowhere that could lead out (".." or absolute) made impossible, other
 * unfound quoted names made angled (no compiler then looks beside its
 * temporary copy of the source or in the working directory). For the CPU
 * compiler, quoted names in the source become the absolute paths found. */
Test(include_scan, rewrite_for_named_headers_and_for_the_cpu)
{
    char dir[] = "/tmp/hipamp-scan-XXXXXX", path[PATH_MAX], opts[PATH_MAX + 8];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/sub", dir);
    cr_assert_eq(mkdir(path, 0700), 0);
    snprintf(path, sizeof path, "%s/sub/a.h", dir);
    put(path, "#include \"../b.h\"\n#include <b.h>\n");
    snprintf(path, sizeof path, "%s/b.h", dir);
    put(path, "#define B 1\n");
    snprintf(opts, sizeof opts, "-I%s", dir);
    static const char src[] = "#include \"sub/a.h\"\n#include \"../../x.h\"\n#include \"missing.h\"\n#include <also_missing.h>\n";
    amp__build_input in = {src, strlen(src), opts, NULL, NULL, NULL};
    amp__scan scan;
    ASSERT_OK(amp__scan_includes(&in, NULL, (amp__sys_dirs_query){0}, &scan));
    cr_assert_eq(scan.n, 2, "%zu headers", scan.n);
    for (size_t i = 0; i < scan.n; ++i)
        cr_expect(!strchr(scan.headers[i].name, '/') && !strstr(scan.headers[i].name, ".."), "header name '%s'",
                  scan.headers[i].name);
    char *out = NULL;
    amp__header *h = NULL;
    ASSERT_OK(amp__scan_rewrite(&scan, src, strlen(src), true, &out, &h));
    char want[512];
    snprintf(want, sizeof want, "#include \"%s\"\n#include \"/dev/null/hipamp-found-no-such-header/../../x.h\"\n"
             "#include <missing.h>\n#include <also_missing.h>\n", scan.headers[0].name);
    cr_expect_str_eq(out, want);
    snprintf(want, sizeof want, "#include \"%s\"\n#include \"%s\"\n", scan.headers[1].name, scan.headers[1].name);
    cr_expect(strstr(h[0].content, want) && strstr(h[0].content, "#line 1 \""), "header 0: %s", h[0].content);
    amp__scan_rewrite_free(h, scan.n);
    free(out);
    ASSERT_OK(amp__scan_rewrite(&scan, src, strlen(src), false, &out, NULL));
    snprintf(want, sizeof want, "#include \"%s/sub/a.h\"\n#include <../../x.h>\n#include <missing.h>\n", dir);
    cr_expect(!strncmp(out, want, strlen(want)), "CPU rewrite: %s", out);
    free(out);
    amp__scan_free(&scan);
    snprintf(path, sizeof path, "rm -rf '%s'", dir);
    cr_expect_eq(system(path), 0);
}

/* The compiler's own directories are asked for only when a lookup reaches
 * the search path (finding them runs the CPU compiler, `-E -v`): not for a
 * source that includes nothing or only a header beside it; once for one
 * that includes a header from them, which is then found there as the kind
 * the list says, in the compiler's order: after the -I directories, before
 * the -idirafter ones. */
static int sys_asked;
static char sys_dir_path[PATH_MAX];
static const amp__sys_dir *sys_dirs_counted(void *ctx)
{
    static amp__sys_dir list[2];
    ++sys_asked;
    list[0] = (amp__sys_dir){sys_dir_path, AMP__DIR_COMPILER};
    list[1] = (amp__sys_dir){NULL, 0};
    return ctx ? list : NULL;
}

Test(include_scan, asks_for_the_compilers_directories_only_when_a_lookup_reaches_them)
{
    char dir[] = "/tmp/hipamp-scan-XXXXXX", path[PATH_MAX], opts[PATH_MAX + 8];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(sys_dir_path, sizeof sys_dir_path, "%s/sys", dir);
    cr_assert_eq(mkdir(sys_dir_path, 0700), 0);
    const char *const subdirs[] = {"inc", "late"};
    for (int i = 0; i < 2; ++i) {
        snprintf(path, sizeof path, "%s/%s", dir, subdirs[i]);
        cr_assert_eq(mkdir(path, 0700), 0);
    }
    const char *const files[] = {"sys/only_sys.h", "inc/mine.h", "k.hip",     "inc/in_i_and_sys.h",
                                 "sys/in_i_and_sys.h", "sys/in_sys_and_late.h", "late/in_sys_and_late.h",
                                 "late/only_late.h"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; ++i) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        put(path, "\n");
    }
    snprintf(opts, sizeof opts, "-I%s/inc -idirafter %s/late", dir, dir);
    amp__sys_dirs_query q = {sys_dirs_counted, (void *)1};
    amp__scan scan;

    static const char none[] = "AMP_KERNEL(k, amp::index<1> i) {}\n";
    amp__build_input in = {none, strlen(none), opts, NULL, NULL, NULL};
    sys_asked = 0;
    ASSERT_OK(amp__scan_includes(&in, NULL, q, &scan));
    cr_expect_eq(sys_asked, 0, "a source that includes nothing asked %d times", sys_asked);
    amp__scan_free(&scan);

    /* Beside the kernel file: found before the search path. */
    static const char beside[] = "#include \"mine_beside.h\"\n";
    snprintf(path, sizeof path, "%s/mine_beside.h", dir);
    put(path, "#define B 1\n");
    char kpath[PATH_MAX + 8];
    snprintf(kpath, sizeof kpath, "%s/k.hip", dir);
    amp__build_input in2 = {beside, strlen(beside), opts, kpath, dir, NULL};
    sys_asked = 0;
    ASSERT_OK(amp__scan_includes(&in2, NULL, q, &scan));
    cr_expect_eq(scan.n, 1, "%zu headers", scan.n);
    cr_expect_eq(sys_asked, 0, "a header beside the kernel file asked %d times", sys_asked);
    amp__scan_free(&scan);

    /* In -I, in the compiler's own, in both, in the compiler's own and
     * -idirafter, in -idirafter alone, nowhere: asked once, each found
     * where the compiler would find it. */
    static const char both[] = "#include <mine.h>\n#include <only_sys.h>\n#include <in_i_and_sys.h>\n"
                               "#include <in_sys_and_late.h>\n#include <only_late.h>\n#include <neither.h>\n";
    amp__build_input in3 = {both, strlen(both), opts, NULL, NULL, NULL};
    sys_asked = 0;
    ASSERT_OK(amp__scan_includes(&in3, NULL, q, &scan));
    cr_expect_eq(sys_asked, 1, "asked %d times", sys_asked);
    cr_assert_eq(scan.nsites, 6, "%zu sites", scan.nsites);
    const char *const want_in[] = {"/inc/mine.h", NULL, "/inc/in_i_and_sys.h", NULL, "/late/only_late.h", NULL};
    const long want_site[] = {0, AMP__SITE_COMPILER, 0, AMP__SITE_COMPILER, 0, AMP__SITE_MISSING};
    for (size_t i = 0; i < 6; ++i) {
        long h = scan.sites[i].header;
        if (want_in[i]) {
            cr_assert_geq(h, 0, "site %zu: %ld, want a header in %s", i, h, want_in[i]);
            const char *got = scan.headers[h].path;
            cr_expect(strlen(got) >= strlen(want_in[i]) && !strcmp(got + strlen(got) - strlen(want_in[i]), want_in[i]),
                      "site %zu: found %s, want ...%s", i, got, want_in[i]);
        } else {
            cr_expect_eq(h, want_site[i], "site %zu: %ld, want %ld", i, h, want_site[i]);
        }
    }
    amp__scan_free(&scan);

    /* A query that finds no list: the compiler's header is not found. */
    amp__sys_dirs_query empty = {sys_dirs_counted, NULL};
    sys_asked = 0;
    ASSERT_OK(amp__scan_includes(&in3, NULL, empty, &scan));
    cr_expect_eq(sys_asked, 1, "asked %d times", sys_asked);
    cr_expect_eq(scan.sites[1].header, AMP__SITE_MISSING, "only_sys.h without the list: site %ld",
                 scan.sites[1].header);
    cr_expect_geq(scan.sites[3].header, 0, "in_sys_and_late.h without the list: site %ld, want -idirafter's",
                  scan.sites[3].header);
    amp__scan_free(&scan);
    snprintf(path, sizeof path, "rm -rf '%s'", dir);
    cr_expect_eq(system(path), 0);
}

/* Every spelling of an #include the compiler reads is found, keyed and
 * rewritten (g++ reads each of these; a named-header compiler given one
 * unrewritten looks for the header itself, in its working directory, and
 * the cache keys nothing of it): a text that leaves a quote open on a line
 * (a digit separator, an apostrophe in #error) before it, the digraph %:,
 * a comment or a line splice inside the directive, a UTF-8 byte-order mark,
 * a raw string or a comment that a splice ends hiding a comment start. The
 * scan missed them. */
Test(include_scan, finds_every_spelling_of_an_include)
{
    char dir[] = "/tmp/hipamp-scan-XXXXXX", path[PATH_MAX], opts[PATH_MAX + 8];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/v.h", dir);
    put(path, "#define V 5\n");
    snprintf(opts, sizeof opts, "-I%s", dir);
    static const char *const srcs[] = {
        "constexpr int n = 1'000;\n#include \"v.h\"\n",
        "#error don't\n#include \"v.h\"\n",
        "%:include \"v.h\"\n",
        "  %: include <v.h>\n",
        "#/**/include \"v.h\"\n",
        "# /* a\n b */ include <v.h>\n",
        "#\\\ninclude \"v.h\"\n",
        "#inc\\\r\nlude \"v.h\"\n",
        "#include \\\n\"v.h\"\n",
        "#include /* c */ \"v.h\"\n",
        "# \f include \"v.h\"\n",
        "\xEF\xBB\xBF#include \"v.h\"\n",
        "const char *s = R\"( \" /* )\";\n#include \"v.h\"\n// */\n",
        "const char *s = u8R\"x( \" /* )\" )x\";\n#include \"v.h\"\n// */\n",
        "int n = 1'000; const char *s = \"it's /*\";\n#include \"v.h\"\n// */\n",
        "/* a comment *\\\n/\n#include \"v.h\"\n// */\n",
        "#if __has_include /* c */ (\"v.h\")\n#endif\n",
    };
    for (size_t i = 0; i < sizeof srcs / sizeof srcs[0]; ++i) {
        amp__build_input in = {srcs[i], strlen(srcs[i]), opts, NULL, NULL, NULL};
        amp__scan scan;
        ASSERT_OK(amp__scan_includes(&in, NULL, (amp__sys_dirs_query){0}, &scan));
        cr_expect(scan.complete, "source %zu: incomplete (%s)", i, scan.why);
        cr_expect_eq(scan.n, 1, "source %zu: %zu headers in\n%s", i, scan.n, srcs[i]);
        if (scan.n == 1) {
            char *out = NULL;
            amp__header *h = NULL;
            ASSERT_OK(amp__scan_rewrite(&scan, srcs[i], strlen(srcs[i]), true, &out, &h));
            cr_expect(strstr(out, scan.headers[0].name), "source %zu rewritten: %s", i, out);
            amp__scan_rewrite_free(h, scan.n);
            free(out);
        }
        amp__scan_free(&scan);
    }
    /* Not includes: a // comment a splice continues; #if 0 text is still
     * read (over-approximating is harmless), but not the directive a
     * comment that begins mid-line hides. */
    static const char *const none[] = {
        "// a comment \\\n#include \"v.h\"\n",
        "int q; /* a\n b */ #include \"v.h\"\n",
        "const char *s = \"#include \\\"v.h\\\"\";\n",
        "const char *s = R\"(\n#include \"v.h\"\n)\";\n",
    };
    for (size_t i = 0; i < sizeof none / sizeof none[0]; ++i) {
        amp__build_input in = {none[i], strlen(none[i]), opts, NULL, NULL, NULL};
        amp__scan scan;
        ASSERT_OK(amp__scan_includes(&in, NULL, (amp__sys_dirs_query){0}, &scan));
        cr_expect_eq(scan.n, 0, "not an include %zu: %zu headers in\n%s", i, scan.n, none[i]);
        amp__scan_free(&scan);
    }
    snprintf(path, sizeof path, "rm -rf '%s'", dir);
    cr_expect_eq(system(path), 0);
}

/* Numbers and identifiers are read whole, as g++ and clang read them, and
 * a lone carriage return ends a line: each of these sources hides nothing
 * from the compilers (g++ and clang -M read the #include), but the scan
 * took a raw string's prefix from the byte before the quote (the R of a
 * number, of an identifier a splice or a $ or UTF-8 byte continues), took
 * a sign or a digit separator as the end of a number (so 1e+'a' opened a
 * character literal), knew no splice in a raw prefix and no CR-only line:
 * it missed the #include, which was compiled unkeyed (a named-header
 * compiler looked for it in its working directory). Where g++ and clang
 * read the text differently, or it holds a NUL byte, or a trigraph under
 * an option that may turn them on, the scan is incomplete (never disk
 * cached; refused for a named-header compiler) and says why. */
Test(include_scan, reads_tokens_and_line_ends_as_the_compilers_do)
{
    char dir[] = "/tmp/hipamp-scan-XXXXXX", path[PATH_MAX], opts[PATH_MAX + 32];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/v.h", dir);
    put(path, "#define V 5\n");
    snprintf(opts, sizeof opts, "-I%s", dir);
    static const char *const found[] = {
        "#define Z 1e+'a' /* '\n#include \"v.h\"\n// */\n",
        "#define X FOO\\\nR\"(\";\n#include \"v.h\"\n// )\"\n",
        "#define Y 1'R\"(\";\n#include \"v.h\"\n// )\"\n",
        "#define Y 1e+R\"(\";\n#include \"v.h\"\n// )\"\n",
        "#define Y 1$R\"(\";\n#include \"v.h\"\n// )\"\n",
        "#define X $R\"(\";\n#include \"v.h\"\n// )\"\n",
        "#define X \xC3\x80R\"(\";\n#include \"v.h\"\n// )\"\n",
        "const char *s = u\\\n8R\"( \" /* )\";\n#include \"v.h\"\n// */\n",
        "#define X R\\\n\"( \" /* )\";\n#include \"v.h\"\n// */\n",
        "#define X .1e+'a' /* '\n#include \"v.h\"\n// */\n",
        "#define X 1\\\n'a' /* '\n#include \"v.h\"\n// */\n",
        "#define X 1'\\\nb' /* '\n#include \"v.h\"\n// */\n",
        "#define X 1e\\\n+'a' /* '\n#include \"v.h\"\n// */\n",
        "// a comment\r#include \"v.h\"\r",
        "int x;\r#include \"v.h\"\r",
        "#inc\\\rlude \"v.h\"\r",
        "/* a comment *\\\r/\r#include \"v.h\"\r",
        "const char *s = \"open\r#include \"v.h\"\r",
    };
    for (size_t i = 0; i < sizeof found / sizeof found[0]; ++i) {
        amp__build_input in = {found[i], strlen(found[i]), opts, NULL, NULL, NULL};
        amp__scan scan;
        ASSERT_OK(amp__scan_includes(&in, NULL, (amp__sys_dirs_query){0}, &scan));
        cr_expect(scan.complete, "source %zu: incomplete (%s)", i, scan.why);
        cr_expect_eq(scan.n, 1, "source %zu: %zu headers in\n%s", i, scan.n, found[i]);
        amp__scan_free(&scan);
    }
    static const struct {
        const char *src;
        size_t len; /* 0: strlen */
        const char *opt, *why;
    } unsure[] = {
        {"#define X \"a\"R\"(\";\n#include \"v.h\"\n// )\"\n", 0, "", "g++ reads as a suffix"},
        {"#define X 'a'R\"(\";\n#include \"v.h\"\n// )\"\n", 0, "", "g++ reads as a suffix"},
        {"#define X 1p+'a' /* '\n#include \"v.h\"\n// */\n", 0, "", "sign after 'p'"},
        {"#define X 0x1p-'a' /* '\n#include \"v.h\"\n// */\n", 0, "", "sign after 'p'"},
        {"#\0include \"v.h\"\n", sizeof "#\0include \"v.h\"\n" - 1, "", "NUL byte"},
        {"#define X \"?\?/\" /* \";\n#include \"v.h\"\n// */\n", 0, " -trigraphs", "'-trigraphs'"},
        {"#define X \"?\?/\" /* \";\n#include \"v.h\"\n// */\n", 0, " -std=c++14", "'-std=c++14'"},
        {"#inc?\?/\nlude \"v.h\"\n", 0, " -Wp,-trigraphs", "trigraph"},
    };
    for (size_t i = 0; i < sizeof unsure / sizeof unsure[0]; ++i) {
        char o[PATH_MAX + 64];
        snprintf(o, sizeof o, "%s%s", opts, unsure[i].opt);
        size_t len = unsure[i].len ? unsure[i].len : strlen(unsure[i].src);
        amp__build_input in = {unsure[i].src, len, o, "k.hip", NULL, NULL};
        amp__scan scan;
        ASSERT_OK(amp__scan_includes(&in, NULL, (amp__sys_dirs_query){0}, &scan));
        cr_expect(!scan.complete && strstr(scan.why, unsure[i].why) && strstr(scan.why, "k.hip:"),
                  "unsure %zu: complete %d, why '%s'", i, scan.complete, scan.why);
        amp__scan_free(&scan);
    }
    /* Without an option for them trigraphs are text (C++17): the string
     * is closed and the comment hides the #include. (Trigraphs are written
     * ?\?/ here: this file is C11, where they are read.) */
    static const char tri[] = "#define X \"?\?/\" /* \";\n#include \"v.h\"\n// */\n";
    amp__build_input in = {tri, strlen(tri), opts, NULL, NULL, NULL};
    amp__scan scan;
    ASSERT_OK(amp__scan_includes(&in, NULL, (amp__sys_dirs_query){0}, &scan));
    cr_expect(scan.complete && scan.n == 0, "no trigraphs: complete %d (%s), %zu headers", scan.complete, scan.why,
              scan.n);
    amp__scan_free(&scan);
    snprintf(path, sizeof path, "rm -rf '%s'", dir);
    cr_expect_eq(system(path), 0);
}

/* A header the scan refuses (here a FIFO on the search path) is named with
 * the file and line of its #include, counted past a line splice, a raw
 * string and a block comment. The message named the header alone. */
Test(include_scan, refused_header_names_the_includes_file_and_line)
{
    char dir[] = "/tmp/hipamp-scan-XXXXXX", path[PATH_MAX], opts[PATH_MAX + 8];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/pipe.h", dir);
    cr_assert_eq(mkfifo(path, 0600), 0, "mkfifo: %s", strerror(errno));
    snprintf(opts, sizeof opts, "-I%s", dir);
    static const char src[] = "#define A \\\n  1\nconst char *s = R\"(\n\n)\";\n/*\n*/\n#include <pipe.h>\n";
    amp__build_input in = {src, strlen(src), opts, "k.hip", NULL, NULL};
    amp__scan scan;
    cr_expect_eq(amp__scan_includes(&in, NULL, (amp__sys_dirs_query){0}, &scan), AMP_ERROR_COMPILE);
    cr_expect(strstr(amp_last_error(), "k.hip:8") && strstr(amp_last_error(), "pipe.h") &&
                  strstr(amp_last_error(), "not a regular file"),
              "message: %s", amp_last_error());
    snprintf(path, sizeof path, "rm -rf '%s'", dir);
    cr_expect_eq(system(path), 0);
}

/* A directory where a header is looked for is passed over, as the compiler
 * passes over it: an -I directory holding a directory named like the
 * header, and one beside the includer. The scan failed the build ("not a
 * regular file") that the compiler would have made. */
Test(include_scan, directory_named_like_a_header_is_passed_over)
{
    char dir[] = "/tmp/hipamp-scan-XXXXXX", path[PATH_MAX], opts[2 * PATH_MAX + 16];
    cr_assert_not_null(mkdtemp(dir));
    const char *const dirs[] = {"a", "a/vec", "a/sub", "b", "b/sub", "b/sub/x.h"};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; ++i) {
        snprintf(path, sizeof path, "%s/%s", dir, dirs[i]);
        cr_assert_eq(mkdir(path, 0700), 0, "mkdir %s: %s", path, strerror(errno));
    }
    snprintf(path, sizeof path, "%s/b/vec", dir);
    put(path, "#include \"sub/x.h\"\n");
    snprintf(path, sizeof path, "%s/a/sub/x.h", dir);
    put(path, "#define X 1\n");
    snprintf(opts, sizeof opts, "-I%s/a -I%s/b", dir, dir);
    static const char src[] = "#include <vec>\n";
    amp__build_input in = {src, strlen(src), opts, NULL, NULL, NULL};
    amp__scan scan;
    amp_status st = amp__scan_includes(&in, NULL, (amp__sys_dirs_query){0}, &scan);
    cr_assert_eq(st, AMP_OK, "%s: %s", amp_status_name(st), amp_last_error());
    cr_assert_eq(scan.n, 2, "%zu headers", scan.n);
    cr_expect(strstr(scan.headers[0].path, "/b/vec"), "header 0: %s", scan.headers[0].path);
    cr_expect(strstr(scan.headers[1].path, "/a/sub/x.h"), "header 1: %s", scan.headers[1].path);
    amp__scan_free(&scan);
    snprintf(path, sizeof path, "rm -rf '%s'", dir);
    cr_expect_eq(system(path), 0);
}

/* Finding a header already read (by its file) or a place already noted as
 * holding none (by its path) compares O(1) entries, however many there are,
 * and past the 4096 places watched too: both tables were scanned whole on
 * every lookup (some 4096 string compares for each new miss once the table
 * of places was full), so a source with many includes took quadratic time.
 * Counted, not timed (amp__scan.probes). */
Test(include_scan, lookups_stay_constant_time_past_thousands_of_headers_and_misses, .timeout = 120)
{
    enum { HEADERS = 3000, MISSES = 6000 };
    char dir[] = "/tmp/hipamp-scan-XXXXXX", path[PATH_MAX], opts[PATH_MAX + 8];
    cr_assert_not_null(mkdtemp(dir));
    for (int i = 0; i < HEADERS; ++i) {
        snprintf(path, sizeof path, "%s/h%d.h", dir, i);
        put(path, "");
    }
    snprintf(opts, sizeof opts, "-I%s", dir);
    size_t cap = 2 * (HEADERS + MISSES) * 24 + 1, len = 0;
    char *src = malloc(cap);
    cr_assert_not_null(src);
    for (int pass = 0; pass < 2; ++pass) { /* the second: every lookup a repeat */
        for (int i = 0; i < HEADERS; ++i) len += (size_t)snprintf(src + len, cap - len, "#include <h%d.h>\n", i);
        for (int i = 0; i < MISSES; ++i) len += (size_t)snprintf(src + len, cap - len, "#include <m%d.h>\n", i);
    }
    amp__build_input in = {src, len, opts, NULL, NULL, NULL};
    amp__scan scan;
    amp_status st = amp__scan_includes(&in, NULL, (amp__sys_dirs_query){0}, &scan);
    cr_assert_eq(st, AMP_OK, "%s: %s", amp_status_name(st), amp_last_error());
    cr_expect_eq(scan.n, HEADERS, "%zu headers", scan.n);
    cr_expect_eq(scan.nabsent, 4096, "%zu places watched", scan.nabsent);
    cr_expect(!scan.complete && strstr(scan.why, "cannot all be watched"), "why: %s", scan.why);
    size_t lookups = 2 * (HEADERS + MISSES);
    cr_expect(scan.probes <= 4 * lookups, "%zu entries compared for %zu lookups (want at most %zu)", scan.probes,
              lookups, 4 * lookups);
    amp__scan_free(&scan);
    free(src);
    snprintf(path, sizeof path, "rm -rf '%s'", dir);
    cr_expect_eq(system(path), 0);
}

/* #include_next (and __has_include_next) looks on from the directory after
 * the one where the including header was found, as the compiler does: the
 * header it names there is keyed, and a named-header compiler is handed it.
 * The scan looked it up as an #include, found the includer itself, and the
 * next header was neither keyed nor handed over. */
Test(include_scan, include_next_finds_the_next_header)
{
    char dir[] = "/tmp/hipamp-scan-XXXXXX", path[PATH_MAX], opts[2 * PATH_MAX + 16];
    cr_assert_not_null(mkdtemp(dir));
    const char *const dirs[] = {"d1", "d2"};
    for (size_t i = 0; i < 2; ++i) {
        snprintf(path, sizeof path, "%s/%s", dir, dirs[i]);
        cr_assert_eq(mkdir(path, 0700), 0);
    }
    snprintf(path, sizeof path, "%s/d1/a.h", dir);
    put(path, "#if __has_include_next(<b.h>)\n#endif\n#include_next <a.h>\n");
    snprintf(path, sizeof path, "%s/d2/a.h", dir);
    put(path, "#define A2 1\n");
    snprintf(path, sizeof path, "%s/d2/b.h", dir);
    put(path, "#define B2 1\n");
    snprintf(path, sizeof path, "%s/d1/b.h", dir);
    put(path, "#define B1 1\n");
    snprintf(opts, sizeof opts, "-I%s/d1 -I%s/d2", dir, dir);
    static const char src[] = "#include <a.h>\n";
    amp__build_input in = {src, strlen(src), opts, NULL, NULL, NULL};
    amp__scan scan;
    ASSERT_OK(amp__scan_includes(&in, NULL, (amp__sys_dirs_query){0}, &scan));
    cr_assert_eq(scan.n, 3, "%zu headers", scan.n);
    const char *const want[] = {"/d1/a.h", "/d2/b.h", "/d2/a.h"};
    for (size_t i = 0; i < 3; ++i) {
        const char *got = scan.headers[i].path;
        cr_expect(strlen(got) > strlen(want[i]) && !strcmp(got + strlen(got) - strlen(want[i]), want[i]),
                  "header %zu: %s, want ...%s", i, got, want[i]);
    }
    amp__header *h = NULL;
    char *out = NULL;
    ASSERT_OK(amp__scan_rewrite(&scan, src, strlen(src), true, &out, &h));
    cr_expect(strstr(h[0].content, scan.headers[2].name) && strstr(h[0].content, scan.headers[1].name),
              "header 0 as handed over: %s", h[0].content);
    amp__scan_rewrite_free(h, scan.n);
    free(out);
    amp__scan_free(&scan);
    snprintf(path, sizeof path, "rm -rf '%s'", dir);
    cr_expect_eq(system(path), 0);
}

/* Every option that names a header or a header directory is honoured or
 * said to be beyond the scan: the long spellings g++ and clang accept
 * (--include-directory[=], --include-directory-after=, --include[=],
 * --imacros=) and -imacros are read as -I, -idirafter and -include are
 * (keyed; a named-header compiler refuses a forced header); options that
 * move the compiler's own directories or add ones the scan does not model
 * (-iprefix with -iwithprefixbefore, --sysroot, -nostdinc, -include-pch)
 * make the scan incomplete (no disk cache; a named-header compiler
 * refuses). The scan passed over them all: the compiler read headers no key
 * held. */
Test(include_scan, every_option_naming_headers_is_followed_or_said_unfollowed)
{
    char dir[] = "/tmp/hipamp-scan-XXXXXX", path[PATH_MAX], opts[2 * PATH_MAX + 64];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/v.h", dir);
    put(path, "#define V 5\n");
    snprintf(path, sizeof path, "%s/m.h", dir);
    put(path, "#define M 5\n");
    static const struct {
        const char *opts, *src;
        size_t forced;
    } keyed[] = {
        {"--include-directory=%s", "#include <v.h>\n", 0}, {"--include-directory %s", "#include <v.h>\n", 0},
        {"--include-directory-after=%s", "#include <v.h>\n", 0}, {"-imacros %s/m.h", "\n", 1},
        {"-imacros%s/m.h", "\n", 1}, {"--imacros=%s/m.h", "\n", 1}, {"--include=%s/m.h", "\n", 1},
        {"--include %s/m.h", "\n", 1},
    };
    for (size_t i = 0; i < sizeof keyed / sizeof keyed[0]; ++i) {
        snprintf(opts, sizeof opts, keyed[i].opts, dir);
        amp__build_input in = {keyed[i].src, strlen(keyed[i].src), opts, NULL, NULL, NULL};
        amp__scan scan;
        ASSERT_OK(amp__scan_includes(&in, NULL, (amp__sys_dirs_query){0}, &scan));
        cr_expect(scan.complete, "%s: incomplete (%s)", opts, scan.why);
        cr_expect_eq(scan.n, 1, "%s: %zu headers", opts, scan.n);
        cr_expect_eq(scan.forced, keyed[i].forced, "%s: %zu forced", opts, scan.forced);
        if (keyed[i].forced) cr_expect_eq(amp__named_check(&scan), AMP_ERROR_COMPILE, "%s: not refused", opts);
        amp__scan_free(&scan);
    }
    static const char *const unfollowed[] = {"-iprefix %s/ -iwithprefixbefore .", "--sysroot=%s", "-nostdinc",
                                             "-include-pch %s/m.h", "-isysroot %s"};
    for (size_t i = 0; i < sizeof unfollowed / sizeof unfollowed[0]; ++i) {
        snprintf(opts, sizeof opts, unfollowed[i], dir);
        static const char src[] = "#include <v.h>\n";
        amp__build_input in = {src, strlen(src), opts, NULL, NULL, NULL};
        amp__scan scan;
        ASSERT_OK(amp__scan_includes(&in, NULL, (amp__sys_dirs_query){0}, &scan));
        cr_expect(!scan.complete, "%s: complete", opts);
        char word[32];
        cr_assert_eq(sscanf(unfollowed[i], "%31[^ =]", word), 1);
        cr_expect(strstr(scan.why, word), "%s: why: %s", opts, scan.why);
        cr_expect_eq(amp__named_check(&scan), AMP_ERROR_COMPILE, "%s: not refused", opts);
        amp__scan_free(&scan);
    }
    snprintf(path, sizeof path, "rm -rf '%s'", dir);
    cr_expect_eq(system(path), 0);
}

/* ------------------------------------------------------ disk cache entries */

/* An entry whose header claims a payload past the largest entry is refused
 * from its size before a byte is read or allocated (a 1 GiB entry with a
 * consistent header cost 9.6 s and 1 GB before the MAC refused it): with
 * the address space held to less than the payload, the entry is still
 * refused and removed, not skipped for want of memory. */
Test(disk_cache, oversized_entry_is_refused_before_it_is_read)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    cr_skip_test("a sanitizer's reserved shadow memory does not fit under an address-space limit");
#else
    char dir[] = "/tmp/hipamp-dcache-XXXXXX", path[PATH_MAX];
    cr_assert_not_null(mkdtemp(dir));
    cr_assert_eq(setenv("AMP_CACHE_DIR", dir, 1), 0);
    uint8_t key[32];
    memset(key, 0x5a, sizeof key);
    amp__dcache_store(key, "small", 5);
    if (!amp__dcache_usable()) cr_skip_test("the disk cache is off here");
    char hex[65];
    amp__hex(key, 32, hex);
    snprintf(path, sizeof path, "%s/%s.ampc", dir, hex);
    /* The stored header, claiming 512 MiB, over a file of that size (sparse). */
    const uint64_t big = 512ull << 20;
    int fd = open(path, O_RDWR);
    cr_assert_geq(fd, 0, "%s: %s", path, strerror(errno));
    cr_assert_eq(pwrite(fd, &big, 8, 48), 8);
    cr_assert_eq(ftruncate(fd, 88 + (off_t)big), 0);
    close(fd);
    struct rlimit old, low;
    cr_assert_eq(getrlimit(RLIMIT_AS, &old), 0);
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long pages = 0;
    cr_assert(f && fscanf(f, "%lu", &pages) == 1);
    fclose(f);
    low = old;
    low.rlim_cur = pages * (rlim_t)sysconf(_SC_PAGESIZE) + (256u << 20);
    cr_assert_eq(setrlimit(RLIMIT_AS, &low), 0);
    size_t size = 1;
    void *got = amp__dcache_load(key, &size);
    cr_assert_eq(setrlimit(RLIMIT_AS, &old), 0);
    struct stat st;
    bool left = stat(path, &st) == 0;
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir); /* before any assertion: the file is 512 MiB */
    cr_expect_eq(system(cmd), 0);
    cr_assert_null(got);
    cr_assert(!left, "the oversized entry was left in place (skipped, not refused)");
    amp_cache_info ci;
    ASSERT_OK(amp_cache_get_info(&ci));
    cr_assert_eq(ci.disk_rejected, 1);
#endif
}

/* ------------------------------------------- CPU tile_static attribution */

/* What the CPU accelerator reports as a kernel's tile_static: its own
 * thread-locals, plus those it may reach through a helper or a user's
 * thread_local, never the library's or the C++ runtime's (Ubuntu 24.04's
 * g++ 13 links libsupc++'s 16-byte per-thread exception state into every
 * module; counting it made every kernel 16 bytes bigger there). */
Test(cpu_tls, a_kernels_tile_static_excludes_the_library_and_the_runtime)
{
    amp__cpu_tls_sym syms[] = {
        {"_ZZL13k_a__amp_bodyN3amp11tiled_indexILi16ELi0ELi0EEEE1s", 256},  /* k_a's tile_static */
        {"_ZZL13k_b__amp_bodyN3amp11tiled_indexILi16ELi0ELi0EEEE1s", 4096}, /* k_b's */
        {"_ZN3amp3cpu3curE", 8},                                          /* the library's */
        {"_ZGVZL13k_a__amp_bodyvE1g", 8},                                  /* a guard variable */
        {"_ZZN12_GLOBAL__N_110get_globalEvE6global", 16},                 /* libsupc++'s */
    };
    amp__cpu_tls t = {.syms = syms, .n = 5, .cap = 5, .segment = 8192, .have_symbols = true};
    char others[256];
    cr_assert_eq(amp__cpu_tile_static_bytes(&t, "k_a", 0, others, sizeof others, NULL), 256);
    cr_assert_str_empty(others);
    cr_assert_eq(amp__cpu_tile_static_bytes(&t, "k_b", 0, NULL, 0, NULL), 4096);
    /* a loop version brings its own measure; a fiber kernel with none, 0 */
    cr_assert_eq(amp__cpu_tile_static_bytes(&t, "k_c", 512, others, sizeof others, NULL), 512);

    /* a helper's tile_static counts for every kernel, and is named */
    amp__cpu_tls_sym more[] = {syms[0], {"_ZZ6helperiE7scratch", 64}};
    amp__cpu_tls u = {.syms = more, .n = 2, .cap = 2, .segment = 512, .have_symbols = true};
    cr_assert_eq(amp__cpu_tile_static_bytes(&u, "k_a", 0, others, sizeof others, NULL), 320);
    cr_assert_str_eq(others, "_ZZ6helperiE7scratch (64)");
    cr_assert_eq(amp__cpu_tile_static_bytes(&u, "k_z", 0, others, sizeof others, NULL), 64);

    /* without a symbol table: the whole segment, or the loop version's own if larger */
    amp__cpu_tls none = {.segment = 300};
    cr_assert_eq(amp__cpu_tile_static_bytes(&none, "k_a", 0, NULL, 0, NULL), 300);
    cr_assert_eq(amp__cpu_tile_static_bytes(&none, "k_a", 4000, NULL, 0, NULL), 4000);
}

/* With the module's call graph, a helper's thread-local counts for the
 * kernels whose entry points (NAME__amp_entry, NAME__amp_tiles) reach it, directly or
 * through other functions, and for every kernel where a function whose
 * address is taken reaches it or code outside any function references it;
 * a reached function that references what the graph cannot name, or a
 * kernel without an entry point in the graph, counts every one. */
Test(cpu_tls, a_helpers_thread_local_counts_where_the_call_graph_reaches_it)
{
    amp__cpu_tls_sym syms[] = {
        {"_ZZ7helper1vE1a", 100, false}, /* 0: reached from k_a through middle */
        {"_ZZ7helper2vE1b", 1000, false}, /* 1: k_b's loop version's */
        {"_ZZ7pointedvE1c", 10, false},  /* 2: of a function whose address is taken */
        {"_ZL4tlsx", 1, true},           /* 3: referenced outside every function */
        {"_ZZ4deadvE1d", 5000, false},   /* 4: no function reaches it */
    };
    /* functions: 0 k_a__amp_entry, 1 middle, 2 helper1, 3 k_b__amp_tiles, 4 helper2, 5 pointed, 6 dead, 7
     * k_c__amp_entry, 8 odd */
    amp__cpu_fn fns[] = {
        {0x100, 16, 0, 1, 0},  {0x110, 16, 1, 1, 0}, {0x120, 16, 2, 1, 0}, {0x130, 16, 3, 1, 0},
        {0x140, 16, 4, 1, 0},  {0x150, 16, 5, 1, AMP__CPU_FN_ESCAPED}, {0x160, 16, 6, 1, 0},
        {0x170, 16, 7, 1, 0},  {0x180, 16, 0, 0, AMP__CPU_FN_UNKNOWN},
    };
    int32_t edges[] = {1, 2, -1, 4, -2, -3, -5, 8};
    amp__cpu_export exports[] = {
        {"k_a__amp_entry", 0}, {"k_b__amp_tiles", 3}, {"k_c__amp_entry", 7}, {"k_ab__amp_entry", 1}, {"k_z", 1}};
    amp__cpu_tls t = {.syms = syms, .n = 5, .cap = 5, .segment = 8192, .have_symbols = true, .have_graph = true,
                      .fns = fns, .nfns = 9, .edges = edges, .nedges = 8, .exports = exports, .nexports = 5};
    char others[256];
    bool traced = false;
    cr_assert_eq(amp__cpu_tile_static_bytes(&t, "k_a", 0, others, sizeof others, &traced), 100 + 10 + 1);
    cr_assert(traced);
    cr_assert_str_eq(others, "_ZZ7helper1vE1a (100), _ZZ7pointedvE1c (10), _ZL4tlsx (1)");
    cr_assert_eq(amp__cpu_tile_static_bytes(&t, "k_b", 64, others, sizeof others, &traced), 64 + 1000 + 10 + 1);
    cr_assert(traced);
    /* k_c reaches a function that references what the graph cannot name */
    cr_assert_eq(amp__cpu_tile_static_bytes(&t, "k_c", 0, others, sizeof others, &traced), 100 + 1000 + 10 + 1 + 5000);
    cr_assert_not(traced);
    /* no entry point of k_z's ("k_ab__amp_entry" is not k_a's; a function
     * named k_z, as a C function of that name would be, is none) */
    cr_assert_eq(amp__cpu_tile_static_bytes(&t, "k_z", 0, NULL, 0, &traced), 6111);
    cr_assert_not(traced);
    /* without the graph, as before: every helper's for every kernel */
    t.have_graph = false;
    cr_assert_eq(amp__cpu_tile_static_bytes(&t, "k_a", 0, NULL, 0, &traced), 6111);
    cr_assert_not(traced);
}

/* ------------------------------------------------ CPU launch widths */

/* A made-up host on which a launch takes base / w + per_thread * w ns on
 * w threads, and handoff more on more than one: the pool's cost grows with
 * the threads, the work's share shrinks, and a replay team's hand-off
 * costs about the same for any number of threads. */
typedef struct { uint64_t base, per_thread, handoff; } width_host;
static uint64_t width_host_ns(width_host h, int w)
{
    return h.base / (uint64_t)w + h.per_thread * (uint64_t)w + (w > 1 ? h.handoff : 0);
}

/* n launches on h through w; the widths they ran on, and how many were
 * timed. */
static int width_launches(amp__cpu_width *w, width_host h, int threads, int n, int *ran, int *timed_n)
{
    int last = 0;
    for (int i = 0; i < n; ++i) {
        bool timed;
        last = amp__cpu_width_pick(w, threads, &timed);
        if (ran) ran[i] = last;
        if (timed) {
            if (timed_n) ++*timed_n;
            amp__cpu_width_took(w, last, width_host_ns(h, last ? last : threads));
        }
    }
    return last;
}

/* 16, 8, 4, 2 threads, three launches each; 8 and 4 each took a tenth
 * off the wider, 2 did not, so 4 it is, untimed until the check 256
 * launches on. 16: 86250 ns, 8: 52500, 4: 45000, 2: 60000. */
Test(cpu_width, the_search_stops_where_more_threads_take_a_tenth_off)
{
    width_host h = {100000, 5000};
    amp__cpu_width w = amp__cpu_width_down(16);
    int ran[12 + 200], timed = 0;
    cr_assert_eq(width_launches(&w, h, 16, 12 + 200, ran, &timed), 4);
    static const int want[12] = {16, 16, 16, 8, 8, 8, 4, 4, 4, 2, 2, 2};
    for (int i = 0; i < 12; ++i) cr_assert_eq(ran[i], want[i], "launch %d ran on %d threads, want %d", i, ran[i], want[i]);
    cr_assert_eq(timed, 12, "%d launches timed: the settled width is not timed until its check", timed);
    cr_assert(w.settled);
}

/* A launch whose work all but vanishes beside the pool's cost goes all the
 * way down to alone, and, taking under 50 us there, is never checked
 * (8: 16125 ns, 4: 8250, 2: 4500, 1: 3000). One that takes longer alone
 * is checked (2: 59000 ns, 1: 52000). A launch that half the threads run
 * about as fast (a memory-bound one) keeps them all. */
Test(cpu_width, light_and_heavy_launches_settle_for_good)
{
    amp__cpu_width w = amp__cpu_width_down(8);
    int timed = 0;
    cr_assert_eq(width_launches(&w, (width_host){1000, 2000}, 8, 2000, NULL, &timed), 1);
    cr_assert_eq(timed, 12, "a light launch alone was timed %d times", timed);
    amp__cpu_width heavy = amp__cpu_width_down(2);
    timed = 0;
    /* The search's 6 launches, 255 untimed, the check's 6 (1 and 2 in
     * turn), and one more alone. */
    cr_assert_eq(width_launches(&heavy, (width_host){30000, 22000}, 2, AMP__CPU_WIDTH_RECHECK + 12, NULL, &timed), 1);
    cr_assert_eq(timed, 6 + 6, "search and one check: %d launches timed", timed);
    /* A launch that takes 30 us a thread or more on every thread stays
     * there, never checked (16: 500000 ns). */
    amp__cpu_width wide = amp__cpu_width_down(16);
    timed = 0;
    cr_assert_eq(width_launches(&wide, (width_host){7680000, 1250}, 16, 2000, NULL, &timed), 16);
    cr_assert_eq(timed, AMP__CPU_WIDTH_TIMED, "a launch heavy on every thread was timed %d times", timed);
    /* 16: 200005 ns, 8: 210003: 8 takes no tenth off. */
    amp__cpu_width bound = amp__cpu_width_down(16);
    cr_assert_eq(width_launches(&bound, (width_host){1173333, 7917}, 16, 100, NULL, NULL), 16);
    /* With one thread there is nothing to learn: never timed. */
    amp__cpu_width one = amp__cpu_width_down(1);
    timed = 0;
    cr_assert_eq(width_launches(&one, (width_host){1000, 2000}, 1, 1000, NULL, &timed), 1);
    cr_assert_eq(timed, 0);
}

/* A replay team's launch searches every halving: where the hand-off
 * costs the same on 16 threads as on 2 and nothing alone, the pool's
 * search stops on 16 (8 takes no tenth off), the team's goes on to alone
 * and settles there, never checked (16: 1838 ns, 8: 1697, 4: 1655,
 * 2: 1690, 1: 320). */
Test(cpu_width, a_teams_search_goes_on_past_widths_that_time_alike)
{
    width_host h = {300, 20, 1500};
    amp__cpu_width pool = amp__cpu_width_down(16);
    cr_assert_eq(width_launches(&pool, h, 16, 100, NULL, NULL), 16);
    amp__cpu_width team = amp__cpu_width_down_all(16);
    int ran[15 + 300], timed = 0;
    cr_assert_eq(width_launches(&team, h, 16, 15 + 300, ran, &timed), 1);
    static const int want[15] = {16, 16, 16, 8, 8, 8, 4, 4, 4, 2, 2, 2, 1, 1, 1};
    for (int i = 0; i < 15; ++i) cr_assert_eq(ran[i], want[i], "launch %d ran on %d threads, want %d", i, ran[i], want[i]);
    cr_assert_eq(timed, 15, "%d launches timed: light alone, it is never checked", timed);
}

/* A team's search stops at a width that took twice the fastest's time:
 * a compute-bound launch is not run alone (16: 102600 ns, 8: 201800,
 * 4: 401400), and the fastest is kept, 8 threads here, though the
 * search went on past it (16: 4450 ns, 8: 3600, 4: 4300, 2: 6900,
 * 1: 12200). */
Test(cpu_width, a_teams_search_stops_where_fewer_threads_take_twice_as_long)
{
    amp__cpu_width bound = amp__cpu_width_down_all(16);
    int timed = 0;
    cr_assert_eq(width_launches(&bound, (width_host){1600000, 100, 1000}, 16, 100, NULL, &timed), 16);
    cr_assert_eq(timed, 9, "16, 8 and 4 threads, three launches each: %d timed", timed);
    amp__cpu_width flat = amp__cpu_width_down_all(16);
    timed = 0;
    cr_assert_eq(width_launches(&flat, (width_host){12000, 200, 500}, 16, 100, NULL, &timed), 8);
    cr_assert_eq(timed, 15, "every halving: %d timed", timed);
}

/* A team's width that a passing load put on 16 threads is checked
 * against alone too, and goes straight there when alone is the fastest
 * to take a tenth off (16: 1838 ns, 32 is not there, 8: 1697, 1: 320). */
Test(cpu_width, a_teams_checks_time_alone_too)
{
    amp__cpu_width w = amp__cpu_width_down_all(16);
    /* A load that made every width but 16 slow during the search. */
    width_host loaded = {1600000, 100, 1000};
    width_launches(&w, loaded, 16, 9, NULL, NULL);
    cr_assert(w.settled);
    cr_assert_eq(w.width, 16);
    width_host h = {300, 20, 1500};
    int ran[AMP__CPU_WIDTH_RECHECK + 8], timed = 0;
    width_launches(&w, h, 16, AMP__CPU_WIDTH_RECHECK + 8, ran, &timed);
    static const int turn[9] = {16, 8, 1, 16, 8, 1, 16, 8, 1};
    for (int i = 0; i < 9; ++i)
        cr_assert_eq(ran[AMP__CPU_WIDTH_RECHECK - 1 + i], turn[i], "check launch %d ran on %d, want %d", i,
                     ran[AMP__CPU_WIDTH_RECHECK - 1 + i], turn[i]);
    cr_assert_eq(timed, 9, "the check's launches, three at each: %d timed", timed);
    cr_assert_eq(w.width, 1, "after the check: %d threads, want 1", w.width);
}

/* A settled width is checked every 256 launches against twice and half
 * it, taken in turn; when the host changes, it follows. */
Test(cpu_width, checks_follow_a_host_that_changed)
{
    amp__cpu_width w = amp__cpu_width_down(16);
    width_launches(&w, (width_host){100000, 5000}, 16, 12, NULL, NULL);
    cr_assert_eq(w.width, 4);
    cr_assert(w.settled);
    /* The work grew: now 8 threads (58000 ns) take a tenth off 4 (104000). */
    width_host grown = {400000, 1000};
    int ran[AMP__CPU_WIDTH_RECHECK + 9], timed = 0;
    width_launches(&w, grown, 16, AMP__CPU_WIDTH_RECHECK + 9, ran, &timed);
    for (int i = 0; i < AMP__CPU_WIDTH_RECHECK - 1; ++i) cr_assert_eq(ran[i], 4, "launch %d before the check", i);
    static const int turn[9] = {4, 8, 2, 4, 8, 2, 4, 8, 2};
    for (int i = 0; i < 9; ++i)
        cr_assert_eq(ran[AMP__CPU_WIDTH_RECHECK - 1 + i], turn[i], "check launch %d ran on %d, want %d", i,
                     ran[AMP__CPU_WIDTH_RECHECK - 1 + i], turn[i]);
    cr_assert_eq(timed, 9);
    cr_assert_eq(w.width, 8, "after the check: %d threads, want 8", w.width);
    /* Then lighter again (1: 9000 ns, 2: 6000, 4: 6000, 8: 9000, 16:
     * 16500): 4 by the next check (it took a tenth off 8), and 4 still
     * after the one after (2 took none off 4: a tie does not move it). */
    width_host light = {8000, 1000};
    width_launches(&w, light, 16, AMP__CPU_WIDTH_RECHECK + 9, NULL, NULL);
    cr_assert_eq(w.width, 4);
    width_launches(&w, light, 16, AMP__CPU_WIDTH_RECHECK + 9, NULL, NULL);
    cr_assert_eq(w.width, 4);
}

/* Two threads launching at once: a time taken at a width other than the
 * one asked for now does not count, in the search or in a check. */
Test(cpu_width, a_time_at_another_width_does_not_count)
{
    amp__cpu_width w = amp__cpu_width_down(16);
    bool timed;
    cr_assert_eq(amp__cpu_width_pick(&w, 16, &timed), 16);
    cr_assert(timed);
    amp__cpu_width_took(&w, 8, 1);
    cr_assert_eq(w.timed, 0);
    cr_assert_eq(w.best, UINT64_MAX);
    amp__cpu_width_took(&w, 16, 5000);
    cr_assert_eq(w.timed, 1);
    cr_assert_eq(w.best, 5000);
}

/* A kernel's direct launches keep widths for its last four sizes; a fifth
 * size takes the oldest's slot, and a time for a size no longer kept is
 * dropped. */
Test(cpu_width, a_kernel_keeps_its_last_four_sizes)
{
    amp__cpu_widths *t = amp__cpu_widths_new();
    cr_assert_not_null(t);
    bool timed;
    const amp__cpu_handoff pool = AMP__CPU_HANDOFF_POOL;
    for (int64_t s = 1; s <= 4; ++s) {
        cr_assert_eq(amp__cpu_widths_pick(t, s * 1000, pool, 8, &timed), 8);
        amp__cpu_widths_took(t, s * 1000, pool, 8, 100);
    }
    for (int i = 0; i < AMP__CPU_WIDTH_SIZES; ++i) cr_assert_eq(t->w[i].timed, 1, "size %d", i + 1);
    cr_assert_eq(amp__cpu_widths_pick(t, 5000, pool, 8, &timed), 8);
    cr_assert_eq(t->points[0], 5000, "the oldest size's slot went to the new one");
    cr_assert_eq(t->w[0].timed, 0);
    amp__cpu_widths_took(t, 1000, pool, 8, 100); /* size 1000 is gone */
    for (int i = 0; i < AMP__CPU_WIDTH_SIZES; ++i) cr_assert_eq(t->w[i].timed, i ? 1 : 0, "size slot %d", i);
    amp__cpu_widths_free(t);
    amp__cpu_widths_free(NULL);
}

/* Launches of one size handed to a replay team and to the pool are
 * learned apart: a team's times never move the pool's width, nor the
 * reverse (a team's hand-off is far cheaper, lib/cpu/cpu_team.c). */
Test(cpu_width, a_teams_launches_are_learned_apart_from_the_pools)
{
    amp__cpu_widths *t = amp__cpu_widths_new();
    cr_assert_not_null(t);
    bool timed;
    const amp__cpu_handoff pool = AMP__CPU_HANDOFF_POOL, team = AMP__CPU_HANDOFF_TEAM;
    /* The team's search: 8 threads 1000 ns, 4 threads 900 (not a tenth
     * off), 2 threads 2500 (twice 8's): it settles on 8. The pool's:
     * 8 threads 1000, 4 threads 500, 2 threads 260, 1 thread 250 (not a
     * tenth off): it settles on 2. */
    const uint64_t team_ns[] = {1000, 900, 2500}, pool_ns[] = {1000, 500, 260, 250};
    for (int stage = 0; stage < 4; ++stage)
        for (int k = 0; k < AMP__CPU_WIDTH_TIMED; ++k) {
            int pw = amp__cpu_widths_pick(t, 4096, pool, 8, &timed);
            cr_assert(timed, "stage %d: the pool's launch is timed", stage);
            cr_assert_eq(pw, 8 >> stage, "stage %d: the pool's width", stage);
            amp__cpu_widths_took(t, 4096, pool, pw, pool_ns[stage]);
            if (stage >= 3) continue;
            int tw = amp__cpu_widths_pick(t, 4096, team, 8, &timed);
            cr_assert(timed, "stage %d: the team's launch is timed", stage);
            cr_assert_eq(tw, 8 >> stage, "stage %d: the team's width", stage);
            amp__cpu_widths_took(t, 4096, team, tw, team_ns[stage]);
        }
    cr_assert_eq(amp__cpu_widths_pick(t, 4096, team, 8, &timed), 8, "the team settled on 8 threads");
    cr_assert_eq(amp__cpu_widths_pick(t, 4096, pool, 8, &timed), 2, "the pool settled on 2 threads");
    amp__cpu_widths_free(t);
}

/* ----------------------------------------------------------- storage lock */

/* Threads add to a plain counter under one amp__lock; some hold it across
 * a sleep, so that the others spin out and sleep on the futex and every
 * release with sleepers has to wake one. A lost update or a lost wake-up
 * (a thread left asleep: the test times out) fails. */
enum { LOCK_THREADS = 8, LOCK_ROUNDS = 20000 };
static amp__lock counter_lock = AMP__LOCK_INIT;
static long counter;

static void *lock_hammer(void *arg)
{
    long id = (long)(intptr_t)arg;
    for (int i = 0; i < LOCK_ROUNDS; ++i) {
        amp__lock_acquire(&counter_lock);
        long c = counter;
        if (i % 2000 == (int)id) {
            struct timespec ts = {0, 200000}; /* 0.2 ms: the others give up spinning */
            nanosleep(&ts, NULL);
        }
        counter = c + 1;
        amp__lock_release(&counter_lock);
    }
    return NULL;
}

Test(lock, contended_counter_loses_nothing, .timeout = 120)
{
    pthread_t t[LOCK_THREADS];
    counter = 0;
    for (long i = 0; i < LOCK_THREADS; ++i)
        cr_assert_eq(pthread_create(&t[i], NULL, lock_hammer, (void *)(intptr_t)i), 0);
    for (int i = 0; i < LOCK_THREADS; ++i) pthread_join(t[i], NULL);
    cr_assert_eq(counter, (long)LOCK_THREADS * LOCK_ROUNDS, "counter %ld, want %ld", counter,
                 (long)LOCK_THREADS * LOCK_ROUNDS);
    cr_assert_eq(atomic_load(&counter_lock.state), 0, "the lock is left in state %d",
                 atomic_load(&counter_lock.state));
}

/* A lock another thread holds when the process forks: in the child that
 * thread is gone and never releases it. amp__lock_acquire_or_forked gives
 * up at once, as often as asked, leaving the lock as it was;
 * amp__lock_acquire_taking_over takes it as the child's, and it then works
 * as any lock of the child (a second acquire_or_forked gets it after the
 * release). Exit codes name the failed step; a hang is SIGALRM. */
static amp__lock fork_lock = AMP__LOCK_INIT;
static atomic_int fork_lock_held, fork_lock_go;

static void *fork_lock_holder(void *arg)
{
    (void)arg;
    amp__lock_acquire(&fork_lock);
    atomic_store(&fork_lock_held, 1);
    while (!atomic_load(&fork_lock_go)) usleep(1000);
    amp__lock_release(&fork_lock);
    return NULL;
}

static int fork_lock_child(void)
{
    alarm(5);
    for (int i = 0; i < 3; ++i)
        if (amp__lock_acquire_or_forked(&fork_lock)) return 1;
    amp__lock_acquire_taking_over(&fork_lock);
    int s = atomic_load(&fork_lock.state);
    if ((s & 3) == 0 || (s & ~3) != (amp__lock_held() & ~3)) return 2; /* held, as this process's */
    amp__lock_release(&fork_lock);
    if (atomic_load(&fork_lock.state) != 0) return 3;
    if (!amp__lock_acquire_or_forked(&fork_lock)) return 4;
    amp__lock_release(&fork_lock);
    return 0;
}

Test(lock, a_forked_child_gives_up_or_takes_over_a_lock_the_fork_left_held, .timeout = 60)
{
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, fork_lock_holder, NULL), 0);
    while (!atomic_load(&fork_lock_held)) usleep(1000);
    fflush(NULL);
    pid_t pid = fork();
    cr_assert_neq(pid, -1, "fork: %s", strerror(errno));
    if (pid == 0) _exit(fork_lock_child());
    int status = 0;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    atomic_store(&fork_lock_go, 1);
    pthread_join(t, NULL);
    cr_assert(WIFEXITED(status), "the child hung or died (signal %d)", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    cr_assert_eq(WEXITSTATUS(status), 0,
                 "the child's step %d: 1 or_forked took it, 2 not held as the child's after the take-over, 3 not free "
                 "after release, 4 not taken again",
                 WEXITSTATUS(status));
    cr_assert_eq(atomic_load(&fork_lock.state), 0, "the parent's lock is left in state %d",
                 atomic_load(&fork_lock.state));
}

/* -------------------------------------------------------- environment */

/* The rule of AMP_CPU_SPIN_US (0 allowed) and, through amp__env_count, of
 * AMP_CPU_THREADS and the others: a whole number in range, else the
 * default. */
Test(env, whole_numbers_out_of_range_or_malformed_get_the_default)
{
    static const struct {
        const char *v;
        unsigned want;
    } cases[] = {{"0", 0},     {"1", 1},   {"250", 250}, {"1000", 1000}, {"1001", 77},  {"-1", 77},
                 {"abc", 77},  {"50us", 77}, {"1.5", 77}, {"", 77},       {"99999999999999999999", 77}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        cr_assert_eq(setenv("AMP_TEST_WHOLE", cases[i].v, 1), 0);
        unsigned got = amp__env_uint("AMP_TEST_WHOLE", 77, 0, 1000);
        cr_assert_eq(got, cases[i].want, "'%s' read as %u, want %u", cases[i].v, got, cases[i].want);
    }
    unsetenv("AMP_TEST_WHOLE");
    cr_assert_eq(amp__env_uint("AMP_TEST_WHOLE", 77, 0, 1000), 77u, "unset");
    cr_assert_eq(setenv("AMP_TEST_WHOLE", "0", 1), 0);
    cr_assert_eq(amp__env_count("AMP_TEST_WHOLE", 5, 10), 5u, "amp__env_count takes no 0");
}

/* AMP_CPU_TILED's and AMP_UNIFIED_MEMORY's rule: one of the words, case
 * aside; anything else is said once on stderr, naming the variable, the
 * value and the words, and reads as the default (both read any other value
 * as the default without a word before). */
Test(env, words_out_of_the_list_are_said_and_get_the_default)
{
    static const char *const words[] = {"auto", "fibers", "loops"};
    stderr_capture cap;
    stderr_capture_begin(&cap);
    int got[6];
    setenv("AMP_TEST_WORD", "Loops", 1);
    got[0] = amp__env_word("AMP_TEST_WORD", words, 3, 0);
    setenv("AMP_TEST_WORD", "fiber", 1);
    got[1] = amp__env_word("AMP_TEST_WORD", words, 3, 0);
    got[2] = amp__env_word("AMP_TEST_WORD", words, 3, 0); /* said once */
    unsetenv("AMP_TEST_WORD");
    got[3] = amp__env_word("AMP_TEST_WORD", words, 3, 2);
    setenv("AMP_TEST_WORD", "yes", 1);
    got[4] = amp__env_flag_or_auto("AMP_TEST_WORD");
    setenv("AMP_TEST_WORD", "maybe", 1);
    got[5] = amp__env_flag_or_auto("AMP_TEST_WORD");
    unsetenv("AMP_TEST_WORD");
    static char err[4096];
    stderr_capture_end(&cap, err, sizeof err);
    cr_assert_eq(got[0], 2, "'Loops' read as %d", got[0]);
    cr_assert_eq(got[1], 0, "'fiber' read as %d", got[1]);
    cr_assert_eq(got[2], 0);
    cr_assert_eq(got[3], 2, "unset read as %d", got[3]);
    cr_assert_eq(got[4], 1, "'yes' read as %d", got[4]);
    cr_assert_eq(got[5], -1, "'maybe' read as %d", got[5]);
    const char *want = "hipamp: AMP_TEST_WORD=\"fiber\" is not one of auto, fibers, loops; using the default, auto\n";
    const char *at = strstr(err, want);
    cr_assert(at, "stderr lacks\n%s---- it has:\n%s", want, err);
    cr_assert_null(strstr(at + strlen(want), "\"fiber\""), "said twice:\n%s", err);
    cr_assert(strstr(err, "AMP_TEST_WORD=\"maybe\" is not one of auto, 1, on, yes, true, 0, off, no, false; using the "
                          "default, auto"),
              "%s", err);
    cr_assert_null(strstr(err, "Loops"), "%s", err);
}

/* ------------------------------------------------------------------ slabs */

/* Pages of [p, p + n) the system holds for us (mincore). */
static size_t resident_pages(const void *p, size_t n)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = (uintptr_t)p / page * page, hi = ((uintptr_t)p + n + page - 1) / page * page;
    unsigned char vec[64];
    cr_assert_leq((hi - lo) / page, sizeof vec);
    cr_assert_eq(mincore((void *)lo, hi - lo, vec), 0);
    size_t r = 0;
    for (size_t i = 0; i < (hi - lo) / page; ++i) r += vec[i] & 1;
    return r;
}

/* Objects freed are reused; when every object of a slab is free, its pages
 * past the first go back to the system (but one empty slab's), and what is
 * left reads as zero or as its last user left it, never faults. */
Test(slab, empty_slabs_give_their_pages_back)
{
    static amp__slab_pool pool = AMP__SLAB_POOL(64);
    enum { M = 8000 }; /* about 8 slabs of 64-byte objects */
    static unsigned char *obj[M];
    for (int i = 0; i < M; ++i) {
        obj[i] = amp__slab_alloc(&pool);
        cr_assert_not_null(obj[i]);
        cr_assert_eq((uintptr_t)obj[i] % 64, 0);
        memset(obj[i], 0xA5, 64);
    }
    size_t slab = 65536, before = 0, after = 0;
    unsigned char *slabs[16];
    int nslabs = 0;
    for (int i = 0; i < M; ++i) {
        unsigned char *s = (unsigned char *)((uintptr_t)obj[i] / slab * slab);
        bool seen = false;
        for (int k = 0; k < nslabs; ++k) seen |= slabs[k] == s;
        if (!seen) {
            cr_assert_lt(nslabs, 16);
            slabs[nslabs++] = s;
        }
    }
    cr_assert_geq(nslabs, 7, "8000 objects of 64 bytes in %d slabs", nslabs);
    for (int k = 0; k < nslabs; ++k) before += resident_pages(slabs[k], slab);
    for (int i = 0; i < M; ++i) amp__slab_free(&pool, obj[i]);
    for (int k = 0; k < nslabs; ++k) after += resident_pages(slabs[k], slab);
    /* Each slab keeps its first page; one whole empty slab stays ready. */
    size_t keep = (size_t)nslabs + slab / 4096;
    cr_assert_leq(after, keep, "%zu of %zu pages still resident after every object was freed (at most %zu)", after,
                  before, keep);
    cr_assert_eq(obj[M - 1][5] == 0 || obj[M - 1][5] == 0xA5, true, "a freed object reads %d", obj[M - 1][5]);
    /* Reused: the next objects come from the same slabs. */
    for (int i = 0; i < 100; ++i) {
        unsigned char *o = amp__slab_alloc(&pool);
        unsigned char *s = (unsigned char *)((uintptr_t)o / slab * slab);
        bool known = false;
        for (int k = 0; k < nslabs; ++k) known |= slabs[k] == s;
        cr_assert(known, "a new slab while %d were free", nslabs);
        amp__slab_free(&pool, o);
    }
}

/* ------------------------------------- views of arrays across accelerators */

#define CROSS_ASSERT_OK ASSERT_OK
#include "cross_accel.h"

#include <stdio.h>

/* A stand-in for a GPU: the CPU backend (its copies are memmove, its
 * launches run on the host), presented to the core as an accelerator whose
 * memory the host does not address and that never runs zero-copy. Views of
 * arrays then move between it and the CPU accelerator, or a second
 * stand-in, by the paths a GPU takes: host<->device copies on the device
 * side's queue, and device to device staged through host memory (the CPU
 * backend has no peer copy, as GPUs without peer access). */
static amp_accelerator *standin_gpu(const char *path)
{
    amp_accelerator *cpu = NULL;
    ASSERT_OK(amp_accelerator_find("cpu", &cpu));
    amp_accelerator *f = calloc(1, sizeof *f);
    cr_assert_not_null(f);
    f->e = cpu->e;
    snprintf(f->e.info.device_path, sizeof f->e.info.device_path, "%s", path);
    f->e.info.is_emulated = false;
    f->e.info.is_unified_memory = false;
    pthread_mutex_init(&f->lock, NULL);
    cr_assert(amp__accelerator_standin(f), "more than 8 stand-in accelerators in one test");
    return f;
}

static amp_accelerator *cpu_accelerator(void)
{
    amp_accelerator *cpu = NULL;
    ASSERT_OK(amp_accelerator_find("cpu", &cpu));
    amp_accelerator_info in;
    ASSERT_OK(amp_accelerator_get_info(cpu, &in));
    if (!in.is_available) cr_skip_test("CPU accelerator unavailable: %s", in.unavailable_reason);
    return cpu;
}

Test(cross, view_of_a_cpu_array_on_a_gpu) { cross_view_of_array(cpu_accelerator(), standin_gpu("standin:0")); }
Test(cross, view_of_a_gpu_array_on_the_cpu) { cross_view_of_array(standin_gpu("standin:0"), cpu_accelerator()); }
Test(cross, graph_on_a_gpu_after_its_cpu_array_went_home)
{
    cross_graph_of_a_view_after_its_array_went_home(cpu_accelerator(), standin_gpu("standin:0"));
}
Test(cross, graph_on_the_cpu_after_its_gpu_array_went_home)
{
    cross_graph_of_a_view_after_its_array_went_home(standin_gpu("standin:0"), cpu_accelerator());
}
/* A launch on a queue of an accelerator other than its kernel's is
 * refused and writes nothing, in both directions (test_launch's
 * queue_of_other_accelerator needs two real accelerators: without a GPU
 * it skips). */
static void cross_launch_on_another_queue(amp_accelerator *built_on, amp_accelerator *queued_on)
{
    amp_program *p = NULL;
    ASSERT_OK(amp_program_build(built_on,
                                "AMP_KERNEL(put7, amp::index<1> i, amp::array_view<unsigned, 1> v) { v[i] = 7u; }",
                                NULL, &p));
    amp_kernel *k = NULL;
    ASSERT_OK(amp_program_get_kernel(p, "put7", &k));
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_view_create(queued_on, &q));
    uint32_t buf[32];
    for (int i = 0; i < 32; ++i) buf[i] = 0xdeadbeefu;
    amp_array_view *v = NULL;
    ASSERT_OK(amp_array_view_create(buf, 4, amp_extent_1d(32), AMP_READ_WRITE, &v));
    amp_arg a[] = {amp_arg_view(v)};
    amp_status st = amp_parallel_for_each(q, amp_extent_1d(32), k, a, 1);
    cr_assert_eq(st, AMP_ERROR_INVALID_ARGUMENT, "%s: %s", amp_status_name(st), amp_last_error());
    cr_assert(strstr(amp_last_error(), "kernel 'put7' was built for"), "%s", amp_last_error());
    ASSERT_OK(amp_array_view_destroy(v));
    for (int i = 0; i < 32; ++i) cr_assert_eq(buf[i], 0xdeadbeefu, "element %d written", i);
    ASSERT_OK(amp_accelerator_view_destroy(q));
    ASSERT_OK(amp_program_destroy(p));
}
Test(cross, a_cpu_kernel_on_a_gpu_queue_is_refused)
{
    cross_launch_on_another_queue(cpu_accelerator(), standin_gpu("standin:0"));
}
Test(cross, a_gpu_kernel_on_a_cpu_queue_is_refused)
{
    cross_launch_on_another_queue(standin_gpu("standin:0"), cpu_accelerator());
}
/* Once the default accelerator is decided (used), setting another one is
 * refused naming both, and the default stays (test_conformance's version
 * finds no other available accelerator without a GPU). */
Test(cross, set_default_after_use_refuses_another_accelerator)
{
    unsetenv("AMP_DEFAULT_ACCELERATOR");
    cpu_accelerator();
    amp_accelerator *d = NULL, *again = NULL, *other = standin_gpu("standin:0");
    ASSERT_OK(amp_accelerator_default(&d)); /* used: decided */
    cr_assert_neq(d, other, "a stand-in is never the automatic default");
    amp_accelerator_info di;
    ASSERT_OK(amp_accelerator_get_info(d, &di));
    ASSERT_STATUS(amp_accelerator_set_default(other), AMP_ERROR_BUSY);
    cr_assert(strstr(amp_last_error(), "standin:0") && strstr(amp_last_error(), di.device_path),
              "the refusal names both: %s", amp_last_error());
    ASSERT_OK(amp_accelerator_default(&again));
    cr_assert_eq(again, d, "the default changed after a refused set");
    ASSERT_OK(amp_accelerator_set_default(d)); /* the same one again: fine */
}

Test(cross, discard_data_ends_after_a_cpu_kernel_writes_the_array)
{
    cross_discard_ends_after_a_write_at_home(cpu_accelerator(), standin_gpu("standin:0"));
}
Test(cross, discard_data_ends_after_a_gpu_kernel_writes_the_array)
{
    cross_discard_ends_after_a_write_at_home(standin_gpu("standin:0"), cpu_accelerator());
}
Test(cross, view_of_an_array_on_another_gpu)
{
    cpu_accelerator();
    cross_view_of_array(standin_gpu("standin:0"), standin_gpu("standin:1"));
}
Test(cross, discard_data_ends_after_a_write_on_a_gpus_copy)
{
    cpu_accelerator();
    cross_discard_ends_after_a_write_elsewhere(standin_gpu("standin:0"), standin_gpu("standin:1"));
}
Test(cross, discard_data_ends_after_a_write_on_a_gpus_copy_then_the_cpu_discrete_cpu)
{
    setenv("AMP_CPU_UNIFIED", "0", 1);
    cross_discard_ends_after_a_write_elsewhere(standin_gpu("standin:0"), cpu_accelerator());
    cross_discard_ends_after_a_write_elsewhere(cpu_accelerator(), standin_gpu("standin:0"));
}
Test(cross, an_arrays_launch_at_home_while_a_graph_on_a_gpu_holds_its_view)
{
    cross_array_launch_while_a_graph_elsewhere_holds_its_view(cpu_accelerator(), standin_gpu("standin:0"));
    cross_array_launch_while_a_graph_elsewhere_holds_its_view(standin_gpu("standin:1"), cpu_accelerator());
}
/* The same with the CPU accelerator keeping views apart (its own copies). */
Test(cross, view_of_a_cpu_array_on_a_gpu_discrete_cpu)
{
    setenv("AMP_CPU_UNIFIED", "0", 1);
    cross_view_of_array(cpu_accelerator(), standin_gpu("standin:0"));
}
Test(cross, view_of_a_gpu_array_on_the_cpu_discrete_cpu)
{
    setenv("AMP_CPU_UNIFIED", "0", 1);
    cross_view_of_array(standin_gpu("standin:0"), cpu_accelerator());
}

/* ------------------------------- a closing timed event that cannot be made */

/* The stand-in GPU's backend: the CPU backend's, but its timed events fail
 * once g_timed_ok more have been made (never while g_timed_ok < 0). */
static amp__backend g_timing_be;
static int g_timed_ok = -1;
static amp_status (*g_cpu_timed)(void *, void *, void **);

static amp_status timed_event_that_may_fail(void *dev, void *queue, void **event)
{
    if (g_timed_ok == 0) {
        *event = NULL;
        g_timed_ok = -1;
        return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "the stand-in made no timed event");
    }
    if (g_timed_ok > 0) g_timed_ok--;
    return g_cpu_timed(dev, queue, event);
}

/* Its launches and replays bind no closing event (as the GPU backend's):
 * the core records one after the call, the event that fails. */
static amp_status (*g_cpu_launch)(void *, void *, void *, const amp__launch *, void **);
static amp_status (*g_cpu_replay)(void *, void *, void *, bool, uint64_t *, void **);

static amp_status launch_binding_no_end(void *dev, void *queue, void *fn, const amp__launch *l, void **end)
{
    (void)end;
    return g_cpu_launch(dev, queue, fn, l, NULL);
}

static amp_status replay_binding_no_end(void *dev, void *queue, void *graph, bool async, uint64_t *node_ns,
                                        void **end)
{
    (void)end;
    return g_cpu_replay(dev, queue, graph, async, node_ns, NULL);
}

static amp_accelerator *standin_with_failing_timing(void)
{
    amp_accelerator *f = standin_gpu("standin:timing");
    g_timing_be = *f->e.be;
    g_cpu_timed = g_timing_be.event_record_timed;
    g_timing_be.event_record_timed = timed_event_that_may_fail;
    g_cpu_launch = g_timing_be.launch;
    g_timing_be.launch = launch_binding_no_end;
    g_cpu_replay = g_timing_be.graph_launch;
    g_timing_be.graph_launch = replay_binding_no_end;
    f->e.be = &g_timing_be;
    return f;
}

/* A queue of acc (*q) and a program (*p) of one kernel adding 1 to each
 * element of an int view, which it returns. */
static amp_kernel *add1_on(amp_accelerator *acc, amp_accelerator_view **q, amp_program **p)
{
    ASSERT_OK(amp_accelerator_view_create(acc, q));
    ASSERT_OK(amp_program_build(acc, "AMP_KERNEL(add1, amp::index<1> i, amp::array_view<int, 1> a) { a[i] += 1; }",
                                NULL, p));
    amp_kernel *k = NULL;
    ASSERT_OK(amp_program_get_kernel(*p, "add1", &k));
    return k;
}

/* An asynchronous launch, and a graph's asynchronous replay, queued whose
 * closing timed event then fails: the call fails saying the work runs, and
 * what the work wrote is not lost (the view's device copy is newer, so a
 * synchronize brings it home, and the next launch reads it), nor read again
 * as current by a retry; the graph waits for that replay when destroyed.
 * Before, the writes were left unrecorded: the host kept the old values and
 * a retry added to the changed copy. */
Test(timing, a_closing_event_that_fails_loses_no_write)
{
    cpu_accelerator();
    amp_accelerator *acc = standin_with_failing_timing();
    amp_accelerator_view *q = NULL;
    amp_program *p = NULL;
    amp_kernel *k = add1_on(acc, &q, &p);
    enum { N = 1000 };
    static int32_t host[N];
    for (int i = 0; i < N; ++i) host[i] = 7 * i;
    amp_array_view *v = NULL;
    ASSERT_OK(amp_array_view_create(host, sizeof host[0], amp_extent_1d(N), AMP_READ_WRITE, &v));
    amp_arg a = amp_arg_view(v);

    g_timed_ok = 1; /* the opening event is made, the closing one is not */
    amp_future *f = NULL;
    ASSERT_STATUS(amp_parallel_for_each_async(q, amp_extent_1d(N), k, &a, 1, &f), AMP_ERROR_OUT_OF_MEMORY);
    cr_assert_null(f);
    cr_assert(strstr(amp_last_error(), "'add1' was queued and runs") &&
                  strstr(amp_last_error(), "the stand-in made no timed event"),
              "%s", amp_last_error());
    ASSERT_OK(amp_array_view_synchronize(v));
    for (int i = 0; i < N; ++i) cr_assert_eq(host[i], 7 * i + 1, "element %d after the launch: %d", i, host[i]);
    ASSERT_OK(amp_parallel_for_each(q, amp_extent_1d(N), k, &a, 1));
    ASSERT_OK(amp_array_view_synchronize(v));
    for (int i = 0; i < N; ++i) cr_assert_eq(host[i], 7 * i + 2, "element %d after a second launch: %d", i, host[i]);

    amp_graph *g = NULL;
    ASSERT_OK(amp_graph_begin_recording(q));
    ASSERT_OK(amp_parallel_for_each(q, amp_extent_1d(N), k, &a, 1));
    ASSERT_OK(amp_graph_end_recording(q, &g));
    g_timed_ok = 1;
    ASSERT_STATUS(amp_graph_launch_async(q, g, &f), AMP_ERROR_OUT_OF_MEMORY);
    cr_assert_null(f);
    cr_assert(strstr(amp_last_error(), "the replay was queued and runs"), "%s", amp_last_error());
    ASSERT_OK(amp_graph_destroy(g));
    ASSERT_OK(amp_array_view_synchronize(v));
    for (int i = 0; i < N; ++i) cr_assert_eq(host[i], 7 * i + 3, "element %d after the replay: %d", i, host[i]);
    /* A copy into the view (its newer copy is on the stand-in, so the copy
     * goes there): the same. */
    static int32_t from[N];
    for (int i = 0; i < N; ++i) from[i] = 100 + 3 * i;
    amp_array_view *src = NULL;
    ASSERT_OK(amp_array_view_create(from, sizeof from[0], amp_extent_1d(N), AMP_READ_ONLY, &src));
    ASSERT_OK(amp_parallel_for_each(q, amp_extent_1d(N), k, &a, 1));
    g_timed_ok = 1;
    ASSERT_STATUS(amp_copy_view_async(src, v, &f), AMP_ERROR_OUT_OF_MEMORY);
    cr_assert_null(f);
    cr_assert(strstr(amp_last_error(), "the copy was queued and runs"), "%s", amp_last_error());
    ASSERT_OK(amp_array_view_synchronize(v));
    for (int i = 0; i < N; ++i) cr_assert_eq(host[i], 100 + 3 * i, "element %d after the copy: %d", i, host[i]);
    ASSERT_OK(amp_parallel_for_each(q, amp_extent_1d(N), k, &a, 1));
    ASSERT_OK(amp_array_view_synchronize(v));
    for (int i = 0; i < N; ++i) cr_assert_eq(host[i], 101 + 3 * i, "element %d after the copy and a launch: %d", i, host[i]);
    amp_array_view_destroy(src);
    for (int i = 0; i < N; ++i) host[i] = 7 * i + 3;
    ASSERT_OK(amp_array_view_refresh(v));
    /* The opening event failing: nothing queued, nothing changed. */
    g_timed_ok = 0;
    ASSERT_STATUS(amp_parallel_for_each_async(q, amp_extent_1d(N), k, &a, 1, &f), AMP_ERROR_OUT_OF_MEMORY);
    ASSERT_OK(amp_array_view_synchronize(v));
    for (int i = 0; i < N; ++i) cr_assert_eq(host[i], 7 * i + 3, "element %d after a refused launch: %d", i, host[i]);
    amp_array_view_destroy(v);
    amp_program_destroy(p);
    amp_accelerator_view_destroy(q);
}

/* ------------------------------------------- a copy the device refuses */

/* The stand-in GPU's backend: the CPU backend's, but its next copy fails
 * where g_copy_fails is set (then cleared). */
static amp__backend g_copy_be;
static bool g_copy_fails;
static amp_status (*g_cpu_copy)(void *, void *, const amp__copy *);

static amp_status copy_that_may_fail(void *dev, void *queue, const amp__copy *c)
{
    if (g_copy_fails) {
        g_copy_fails = false;
        return amp__fail(AMP_ERROR_DEVICE, "the stand-in refused the copy");
    }
    return g_cpu_copy(dev, queue, c);
}

/* A copy into a section of a view whose device copy holds the newest data
 * (a kernel's results), failing on the device: the call fails, and no
 * earlier write is lost. Before, the failed box was dropped from the
 * device copy's current parts while its newer data stayed marked newer:
 * the next launch copied the host's older data in over the kernel's
 * results. */
Test(failure, a_copy_into_a_device_copy_that_fails_loses_no_earlier_write)
{
    cpu_accelerator();
    amp_accelerator *acc = standin_gpu("standin:copy");
    g_copy_be = *acc->e.be;
    g_cpu_copy = g_copy_be.copy;
    g_copy_be.copy = copy_that_may_fail;
    acc->e.be = &g_copy_be;
    amp_accelerator_view *q = NULL;
    amp_program *p = NULL;
    amp_kernel *k = add1_on(acc, &q, &p);
    enum { N = 1000, AT = 100, LEN = 200 };
    static int32_t host[N], from[LEN];
    for (int i = 0; i < N; ++i) host[i] = 7 * i;
    for (int i = 0; i < LEN; ++i) from[i] = -1;
    amp_array_view *v = NULL, *part = NULL, *src = NULL;
    ASSERT_OK(amp_array_view_create(host, sizeof host[0], amp_extent_1d(N), AMP_READ_WRITE, &v));
    ASSERT_OK(amp_array_view_section(v, amp_index_1d(AT), amp_extent_1d(LEN), &part));
    ASSERT_OK(amp_array_view_create(from, sizeof from[0], amp_extent_1d(LEN), AMP_READ_ONLY, &src));
    amp_arg a = amp_arg_view(v);
    ASSERT_OK(amp_parallel_for_each(q, amp_extent_1d(N), k, &a, 1));
    g_copy_fails = true;
    ASSERT_STATUS(amp_copy_view(src, part), AMP_ERROR_DEVICE);
    cr_assert(strstr(amp_last_error(), "the stand-in refused the copy"), "%s", amp_last_error());
    cr_assert_not(g_copy_fails, "the copy never reached the device");
    ASSERT_OK(amp_parallel_for_each(q, amp_extent_1d(N), k, &a, 1));
    ASSERT_OK(amp_array_view_synchronize(v));
    for (int i = 0; i < N; ++i)
        cr_assert_eq(host[i], 7 * i + 2, "element %d after two launches around a failed copy: %d", i, host[i]);
    ASSERT_OK(amp_array_view_destroy(src));
    ASSERT_OK(amp_array_view_destroy(part));
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_program_destroy(p));
    ASSERT_OK(amp_accelerator_view_destroy(q));
}

/* ------------------------------------------- the CPU restrict path's rule */

/* A pack of up to four rank-2 view descriptors of floats, each made from a
 * base address, strides and extents as the core writes them. */
typedef struct alias_pack {
    amp__signature sig;
    unsigned char pack[4 * AMP__DESC_SIZE(2) + 8];
    amp__launch l;
} alias_pack;

static void alias_view(alias_pack *a, int kind, bool is_const, const float *base, int64_t s0, int e0, int e1)
{
    int i = a->sig.nparams++;
    int off = i * AMP__DESC_SIZE(2);
    a->sig.params[i] = (amp__sig_param){kind, 4, 2, is_const, off, AMP__DESC_SIZE(2), 8, 0};
    int64_t strides[2] = {s0, 1};
    int32_t ext[2] = {e0, e1};
    memcpy(a->pack + off, &base, sizeof base);
    memcpy(a->pack + off + AMP__DESC_STRIDE_OFFSET, strides, sizeof strides);
    memcpy(a->pack + off + AMP__DESC_EXTENT_OFFSET(2), ext, sizeof ext);
}

static void alias_scalar(alias_pack *a, double v)
{
    int i = a->sig.nparams++;
    int off = i * AMP__DESC_SIZE(2);
    a->sig.params[i] = (amp__sig_param){AMP_ARG_FLOAT64, 8, 0, 0, off, 8, 8, 0};
    memcpy(a->pack + off, &v, sizeof v);
}

static bool alias_disjoint(alias_pack *a)
{
    a->l.sig = &a->sig;
    a->l.pack = a->pack;
    return amp__cpu_views_disjoint(&a->l);
}

Test(cpu_restrict, distinct_arrays_and_shared_reads_are_disjoint)
{
    static float x[64 * 64], y[64 * 64], z[4];
    alias_pack a = {0};
    alias_view(&a, AMP_ARG_VIEW, false, x, 64, 64, 64);
    alias_view(&a, AMP_ARG_VIEW, true, y, 64, 64, 64);
    alias_view(&a, AMP_ARG_ARRAY, true, y, 64, 32, 64); /* a second reader of y */
    alias_scalar(&a, 2.0);
    cr_assert(alias_disjoint(&a), "a written array apart from two readers of another must take the restrict path");
    alias_pack b = {0};
    alias_view(&b, AMP_ARG_VIEW, false, x, 64, 32, 64);      /* rows 0..31 */
    alias_view(&b, AMP_ARG_VIEW, false, x + 32 * 64, 64, 32, 64); /* rows 32..63: the next byte on */
    alias_view(&b, AMP_ARG_VIEW, false, z, 1, 1, 4);
    cr_assert(alias_disjoint(&b), "written sections that meet but do not overlap are disjoint");
    alias_pack c = {0};
    alias_view(&c, AMP_ARG_VIEW, false, x, 64, 0, 64); /* empty: reaches nothing */
    alias_view(&c, AMP_ARG_VIEW, false, x, 64, 64, 64);
    cr_assert(alias_disjoint(&c), "an empty view overlaps nothing");
}

Test(cpu_restrict, a_struct_parameter_or_a_capped_span_is_not_disjoint)
{
    static float x[64 * 64], y[64 * 64];
    alias_pack a = {0};
    alias_view(&a, AMP_ARG_VIEW, false, x, 64, 64, 64);
    alias_view(&a, AMP_ARG_VIEW, true, y, 64, 64, 64);
    a.sig.params[a.sig.nparams++] = (amp__sig_param){AMP_ARG_STRUCT, 16, 0, 0, 2 * AMP__DESC_SIZE(2), 16, 8, 0};
    cr_assert(!alias_disjoint(&a), "a struct may carry an address: no restrict path");
    /* An algorithm's span argument is capped at INT_MAX elements and the
     * kernel reads past it: it reaches everything after its base. */
    alias_pack b = {0};
    int i = b.sig.nparams++;
    b.sig.params[i] = (amp__sig_param){AMP_ARG_VIEW, 4, 1, 1, 0, AMP__DESC_SIZE(1), 8, 0};
    const float *base = x;
    int64_t one = 1;
    int32_t capped = INT_MAX;
    memcpy(b.pack, &base, sizeof base);
    memcpy(b.pack + AMP__DESC_STRIDE_OFFSET, &one, sizeof one);
    memcpy(b.pack + AMP__DESC_EXTENT_OFFSET(1), &capped, sizeof capped);
    /* A written view far past the base, inside what the span may reach. */
    i = b.sig.nparams++;
    int off = AMP__DESC_SIZE(1);
    b.sig.params[i] = (amp__sig_param){AMP_ARG_VIEW, 4, 1, 0, off, AMP__DESC_SIZE(1), 8, 0};
    const float *far = (const float *)((uintptr_t)x + ((uintptr_t)1 << 40));
    int32_t n = 16;
    memcpy(b.pack + off, &far, sizeof far);
    memcpy(b.pack + off + AMP__DESC_STRIDE_OFFSET, &one, sizeof one);
    memcpy(b.pack + off + AMP__DESC_EXTENT_OFFSET(1), &n, sizeof n);
    cr_assert(!alias_disjoint(&b), "a span capped at INT_MAX elements reaches every byte past its base");
}

/* The job's record takes the rule's answer, simple launch or tiled (a
 * tiled kernel's loop version has the restrict path too), and
 * AMP_CPU_RESTRICT=0 (the device's restrict_views, copied into each
 * kernel) turns it off. A tiled kernel on fibers (no loop version) has no
 * restrict path: its record says 0 without the check. */
static void restrict_test_loop_version(amp__cpu_item *it) { (void)it; }

Test(cpu_restrict, the_job_takes_the_rule_and_the_setting)
{
    static float x[64 * 64], y[64 * 64];
    alias_pack a = {0};
    alias_view(&a, AMP_ARG_VIEW, false, x, 64, 64, 64);
    alias_view(&a, AMP_ARG_VIEW, true, y, 64, 64, 64);
    a.l.sig = &a.sig;
    a.l.pack = a.pack;
    a.l.extent = amp_extent_2d(64, 64);
    a.sig.tile[0] = 8;
    a.sig.tile[1] = 16;
    amp__cpu_kernel *k = calloc(1, sizeof *k + 2);
    cr_assert_not_null(k);
    k->tiles = restrict_test_loop_version;
    for (int tiled = 0; tiled < 2; ++tiled) {
        a.l.tiled = tiled;
        for (int on = 0; on < 2; ++on) {
            k->restrict_views = on;
            amp__cpu_job j;
            memset(&j, 0, sizeof j);
            amp__cpu_job_init(&j, k, &a.l);
            cr_assert_eq(j.launch.noalias, on, "tiled %d, restrict_views %d: noalias %d", tiled, on,
                         j.launch.noalias);
            amp__cpu_job_fini(&j);
        }
    }
    {
        k->tiles = NULL; /* fibers */
        k->restrict_views = true;
        a.l.tiled = true;
        amp__cpu_job j;
        memset(&j, 0, sizeof j);
        amp__cpu_job_init(&j, k, &a.l);
        cr_assert_eq(j.launch.noalias, 0, "a tiled kernel on fibers: noalias %d", j.launch.noalias);
        amp__cpu_job_fini(&j);
    }
    a.l.tiled = false;
    alias_view(&a, AMP_ARG_VIEW, true, x, 64, 64, 64); /* now x is read through a second view too */
    k->restrict_views = true;
    amp__cpu_job j;
    memset(&j, 0, sizeof j);
    amp__cpu_job_init(&j, k, &a.l);
    cr_assert_eq(j.launch.noalias, 0, "a written view read through another: the plain path");
    amp__cpu_job_fini(&j);
    free(k);
}

Test(cpu_restrict, a_written_view_sharing_memory_is_not_disjoint)
{
    static float x[64 * 64];
    alias_pack a = {0};
    alias_view(&a, AMP_ARG_VIEW, false, x, 64, 64, 64);
    alias_view(&a, AMP_ARG_VIEW, true, x, 64, 64, 64); /* a const view of the same array */
    cr_assert(!alias_disjoint(&a), "a written array read through a const view of it must not be restrict");
    alias_pack b = {0};
    alias_view(&b, AMP_ARG_VIEW, true, x, 64, 64, 64);
    alias_view(&b, AMP_ARG_VIEW, false, x + 63 * 64 + 63, 64, 1, 1); /* the last element alone */
    cr_assert(!alias_disjoint(&b), "a written one-element section inside a read view overlaps it");
    alias_pack c = {0};
    alias_view(&c, AMP_ARG_VIEW, false, x, 64, 64, 8);     /* columns 0..7 of every row */
    alias_view(&c, AMP_ARG_ARRAY, true, x + 8, 64, 64, 8); /* columns 8..15: interleaved with it */
    cr_assert(!alias_disjoint(&c), "column blocks of one array interleave in memory: the span check takes them as overlapping");
    alias_pack d = {0};
    alias_view(&d, AMP_ARG_VIEW, false, x, 64, 2, 64);
    alias_view(&d, AMP_ARG_VIEW, false, x + 64, 64, 2, 64); /* rows 1..2 against rows 0..1 */
    cr_assert(!alias_disjoint(&d), "two written sections sharing a row overlap");
}

/* How much of a streamed launch keeps plain stores (cpu_run.c,
 * amp__cpu_stream_keep): none streamed under the threshold, a share that
 * falls from all but 1/256 at the threshold C to none at 1.5 C (h = 3C/S -
 * 2, in 256ths), none kept beyond; no overflow at the extremes. */
Test(cpu_stream, the_kept_share_falls_from_nearly_all_at_the_threshold_to_none_at_half_as_much_again)
{
    const uint64_t mib = 1u << 20;
    cr_assert_eq(amp__cpu_stream_keep(299 * mib, 300 * mib), -1, "under the threshold: not streamed");
    cr_assert_eq(amp__cpu_stream_keep(300 * mib, 300 * mib), 255, "at the threshold all but 1/256 is kept");
    cr_assert_eq(amp__cpu_stream_keep(450 * mib, 300 * mib), 0, "at 1.5x the threshold nothing is kept");
    cr_assert_eq(amp__cpu_stream_keep(768 * mib, 300 * mib), 0, "BabelStream's doubles at 2^25: nothing kept");
    /* BabelStream's floats at 2^25: 256 * (3 * 300 / 384 - 2) = 88. */
    cr_assert_eq(amp__cpu_stream_keep(384 * mib, 300 * mib), 88, "384 MiB against 300 MiB keeps %d/256",
                 amp__cpu_stream_keep(384 * mib, 300 * mib));
    int last = 255;
    for (uint64_t b = 300 * mib + 1; b <= 450 * mib; b += 3 * mib) {
        int k = amp__cpu_stream_keep(b, 300 * mib);
        cr_assert(k >= 0 && k <= last, "%llu bytes keep %d/256 after %d/256 for fewer", (unsigned long long)b, k, last);
        last = k;
    }
    cr_assert_eq(amp__cpu_stream_keep(0, 0), 0, "a threshold of 0 streams every launch whole");
    cr_assert_eq(amp__cpu_stream_keep(12345, 0), 0, "a threshold of 0 streams every launch whole");
    /* A threshold near the top of the range (AMP_CPU_STREAM_MIN may be that
     * large): no sum or product wraps. */
    cr_assert_eq(amp__cpu_stream_keep(UINT64_MAX, UINT64_MAX - 1), 255, "a set a byte past a huge threshold keeps 255/256");
    cr_assert_eq(amp__cpu_stream_keep(UINT64_MAX, UINT64_MAX / 2), 0, "twice a huge threshold is streamed whole");
}

/* ------------------------------------------- the split build's source scan */

/* What a CPU build may compile in parts (cpu_split_scan.c): each snippet
 * accepted (1) or refused (0) as a part's copy of its declarations could or
 * could not differ from a whole compile's. */
Test(internal, split_scan_accepts_only_declarations_parts_cannot_change)
{
    static const struct {
        const char *src;
        int want;
    } t[] = {
        {"AMP_KERNEL(a, amp::index<1> i, amp::array_view<int,1> v) { static int x; v[i] = x; }\n"
         "AMP_KERNEL(b, amp::index<1> i, amp::array_view<int,1> v) { v[i] = 1; }\n",
         1},
        {"template <class T> T sq(T x) { static int calls; return x * x; }\n", 1},
        {"struct S { int a; float b; };\nstruct S2 { static int n; };\n", 1},
        {"struct S { int a; } s;\n", 0},
        {"typedef float real;\nusing namespace amp;\nusing I = int;\n", 1},
        {"constexpr int N = 16;\nconst int M = 4;\nconst double w[3] = {1, 2, 3};\n", 1},
        {"const float *p = 0;\n", 0},
        {"const char name[] = \"x\";\n", 1},
        {"const Hello h;\n", 0},
        {"static float f(float x) { return x; }\n", 1},
        {"static float f(float x) { static float c; return x + c; }\n", 0},
        {"__device__ float f(float x) { return x; }\n", 0},
        {"__device__ inline float f(float x) { return x; }\nAMP_FI float g(float x) { return x; }\n", 1},
        {"float f(float x);\n", 0},
        {"int x;\n", 0},
        {"extern \"C\" { int y; }\n", 0},
        {"namespace a { inline int f() { return 1; } }\n", 0},
        {"#include <cmath>\n#include <cstdint>\n", 1},
        {"#include <iostream>\n", 0},
        {"#include \"mine.h\"\n", 0},
        {"#define N 16\n#define SQ(x) ((x) * (x))\n", 1},
        {"#define DECL static int x\n", 0},
        {"auto f = [](int x) { return x; };\n", 0},
        {"static int (*fp)(int);\n", 0},
        {"static __attribute__((always_inline)) inline float f(float x) { return x; }\n", 1},
        {"static __attribute__((aligned(16))) float buf[4];\n", 0},
        {"const char *s = R\"(x)\"; \n", 0},
        {"// static int commented;\n/* static int also; */ const int k = 1'000'000;\n", 1},
        {"const int k = 1'000; static int hidden;\n", 0},
        {"static_assert(sizeof(int) == 4, \"int\");\n", 1},
        {"AMP_KERNEL_MAX_BLOCK(k, 256)\nAMP_KERNEL(k, amp::index<1> i, amp::array_view<int,1> v) { v[i] = 1; }\n",
         1},
        {"AMP_KERNEL_STREAMING_STORES(k, 0)\nAMP_KERNEL(k, amp::index<1> i, amp::array_view<int,1> v) { v[i] = 1; }\n",
         1},
        {"AMP_KERNEL_MAX_BLOCK(k, 64) AMP_KERNEL_STREAMING_STORES(k, 0) AMP_KERNEL_STREAMING_STORES ( k , (1) )\n"
         "AMP_KERNEL(k, amp::index<1> i, amp::array_view<int,1> v, amp::array_view<int,1> w) { v[i] = 1; w[i] = 2; }\n",
         1},
        /* a variable behind a kernel's attribute: each part would hold its own */
        {"AMP_KERNEL_STREAMING_STORES(k, 0) static int n;\n", 0},
        {"AMP_KERNEL_MAX_BLOCK(k, 256) int counter;\n", 0},
        {"AMP_KERNEL_MAX_BLOCK(k, 256) AMP_KERNEL_STREAMING_STORES(k, 0) static int n;\n", 0},
        {"AMP_KERNEL_MAX_BLOCK(k, 256)\nconst int block = 256;\n", 1},
        {"AMP_KERNEL_MAX_BLOCK(k, 256)\nstruct S { int a; };\n", 1},
        {"AMP_KERNEL_MAX_BLOCK k;\n", 0},
        {"AMP_KERNEL_MAX_BLOCK(k, (256);\n", 0},
        {"enum E { A, B };\nenum class F : int { X };\n", 1},
        /* what hid a variable from the scan before (a review's findings) */
        {"const int c = L'a', d = 'b'; static int n;\nconst int e = 0;\n", 0},
        {"#warning don't\n#define constexpr\nconstexpr static int n = 0;\n", 0},
        {"struct S { int a; };\nstruct S static s;\n", 0},
        {"struct S { int a; } static s = {};\n", 0},
        {"struct S { int a; };\nstruct S static t{};\n", 0},
        {"enum E { A };\nenum E static e;\n", 0},
        {"struct S;\nstruct S s;\n", 0},
        {"template <class T> static T counter;\n", 0},
        {"template <class T> static int next() { static int n; return ++n; }\n", 0},
        {"template <class T> thread_local T tls;\n", 0},
        {"constexpr auto next = [] { static int n = 0; return ++n; };\n", 0},
        {"static int f() { thread_local int n = 0; return ++n; }\n", 0},
        {"typedef int using$t;\nusing$t static n = 0;\n", 0},
        {"#undef AMP_KERNEL_MAX_BLOCK\n#define AMP_KERNEL_MAX_BLOCK(a, b) a\n"
         "AMP_KERNEL_MAX_BLOCK(static int n;, 1) typedef int T;\n",
         0},
        {"#define AMP_KERNEL(n, x) x\nAMP_KERNEL(k, static int n;) typedef int T;\n", 0},
        {"#define float int *\nconst float p = 0;\n", 0},
        {"#define C(a, b) a##b\nstatic int f() { C(sta, tic) int n; return ++n; }\n", 0},
        {"typedef int using_t;\nusing\\\n_t static n = 0;\n", 0},
        {"typedef int using_t;\nusing\\ \r\n_t static n = 0;\n", 0},
        {"enum E <% A %> static e;\n", 0},
        {"const int a<:2:> = {1, 2};\n", 0},
        {"const char *s = R\\\n\"(x)\";\n", 0},
        /* and what it still takes */
        {"const int k = 1'000'000; const unsigned m = 0x1'f; const double h = 1.5e+1'0;\n", 1},
        {"const int c = L'a';\nconst char q = '\\'';\n", 1},
        {"template <class T> struct S;\ntemplate <class T> struct S<T *> { static int n; };\n", 1},
        {"enum class F : int;\nenum { X, Y };\n", 1},
        {"struct S final : amp::index<1> { int a; };\n", 1},
        {"template <class T, int N = (2 > 1)> T twice(T x) { static int calls; return x + x; }\n", 1},
        {"template <class T> template <class U> struct Outer<T>::Inner { U u; };\n", 1},
        /* explicit specialisations: judged as the plain declarations they are */
        {"template <class T> T f(T x) { return x; }\ntemplate <> int f<int>(int x) { return x + 1; }\n", 0},
        {"template <class T> T f(T x) { return x; }\ntemplate <> inline int f<int>(int x) { return x + 1; }\n", 1},
        {"template <class T> struct S { static int n; };\ntemplate < > int S<int>::n = 3;\n", 0},
        {"template <class T> struct S { };\ntemplate <> struct S<int> { int a; };\n", 1},
        {"template <class T> struct S { };\ntemplate <> struct S<int> { } s;\n", 0},
        {"template <class T> constexpr T zero = T();\ntemplate <> constexpr int zero<int> = 0;\n", 1},
        {"#define N 16\n#define SQ(x) \\\n  ((x) * (x))\n", 1},
        {"auto g(int x) -> int { return x; }\nint y;\n", 0},
        {"STREAM_SIMPLE(copy, RW, a, c)\n", 0},
        {"inline int counter = 0;\n", 0},
        {"const int n = 1; \"", 0},
        {"static inline int next() { static int n; return n++; }\n", 0},
        {"inline int next() { static int n; return n++; }\n", 1},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; ++i) {
        char why[256] = "";
        char *c = amp__cpu_split_allowed(t[i].src, NULL, 0, why, sizeof why);
        cr_expect_eq(c != NULL, t[i].want == 1, "snippet %zu (%s): %s", i, why, t[i].src);
        free(c);
    }
    /* options and variables that add include paths */
    char *const opts[] = {"-O2", "-I/some/dir"};
    char why[256] = "";
    char *c = amp__cpu_split_allowed("const int n = 1;\n", opts, 2, why, sizeof why);
    cr_expect_null(c);
    cr_expect(strstr(why, "-I/some/dir") != NULL, "%s", why);
    free(c);
    setenv("CPLUS_INCLUDE_PATH", "/some/dir", 1);
    c = amp__cpu_split_allowed("const int n = 1;\n", opts, 1, why, sizeof why);
    cr_expect_null(c);
    cr_expect(strstr(why, "CPLUS_INCLUDE_PATH") != NULL, "%s", why);
    free(c);
    unsetenv("CPLUS_INCLUDE_PATH");
    c = amp__cpu_split_allowed("const int n = 1;\n", opts, 1, why, sizeof why);
    cr_expect_not_null(c);
    free(c);
    /* the other ways to name a header GCC takes (each was split: the
     * parts then read a header the scan never saw) */
    static const char *const other[] = {"--imacros",        "--include-directory=/d", "-Wp,-include,/d/h.h",
                                        "-Xpreprocessor", "@/d/options",          "-specs=/d/s"};
    for (size_t i = 0; i < sizeof other / sizeof other[0]; ++i) {
        char *const one[] = {(char *)other[i]};
        c = amp__cpu_split_allowed("const int n = 1;\n", one, 1, why, sizeof why);
        cr_expect_null(c, "%s was split", other[i]);
        cr_expect(strstr(why, other[i]) != NULL, "%s", why);
        free(c);
    }
}

/* ------------------------------------ the loop transformation's parse */

/* The assembled unit of a user's text (as lib/core/program.c assembles it
 * for the CPU accelerator) and where the library's part ends in it. */
static char *cpu_unit(const char *user, size_t *len, size_t *user_start)
{
    char *src = amp__prelude_assemble(amp__embedded_cpu_prelude, user, "lpch.hip", len);
    cr_assert_not_null(src);
    const char *lib = strstr(src, amp__embedded_device_lib);
    cr_assert_not_null(lib);
    *user_start = (size_t)(lib - src) + strlen(amp__embedded_device_lib);
    return src;
}

/* Two results of the transformation are the same loop versions. */
static void same_result(const amp__cpu_loops_result *a, const amp__cpu_loops_result *b, const char *what)
{
    cr_assert_eq(a->n, b->n, "%s: %d kernels against %d", what, b->n, a->n);
    for (int i = 0; i < a->n; ++i) {
        cr_assert_str_eq(a->k[i].name, b->k[i].name, "%s", what);
        cr_assert_eq(a->k[i].at, b->k[i].at, "%s: %s", what, a->k[i].name);
        cr_assert_str_eq(a->k[i].why, b->k[i].why, "%s: %s", what, a->k[i].name);
        cr_assert_eq(!a->k[i].loops, !b->k[i].loops, "%s: %s", what, a->k[i].name);
        cr_assert_str_eq(a->k[i].line ? a->k[i].line : "", b->k[i].line ? b->k[i].line : "", "%s: %s", what,
                         a->k[i].name);
        if (a->k[i].loops) cr_assert_str_eq(a->k[i].loops, b->k[i].loops, "%s: %s", what, a->k[i].name);
    }
}

/* The library's part precompiled (in a child process, as a first build
 * does) is read by the parse, which then writes the very loop versions of
 * the whole text's parse; a file that is no precompiled part, and any
 * without the main file on the disk, are refused and the text parsed
 * whole, with the same result. (Which part a build reads, made from which
 * text with which flags, its key says: cpu_pch.c; libclang does not
 * compare the part's text it is handed with the one precompiled.) */
Test(internal, loop_transformation_reads_the_precompiled_library_part, .timeout = 120)
{
    static const char user[] =
        "#define LPCH_TILE 64\n"
        "AMP_TILED_KERNEL(lpch_reverse, amp::tiled_index<LPCH_TILE> t, amp::array_view<int, 1> a)\n"
        "{\n    tile_static int s[LPCH_TILE];\n    s[t.local[0]] = a[t.global];\n    t.barrier.wait();\n"
        "    a[t.global] = s[LPCH_TILE - 1 - t.local[0]] + (int)sqrtf(4.0f);\n}\n"
        "AMP_TILED_KERNEL(lpch_stride, amp::tiled_index<32> t, amp::array_view<const int, 1> in, "
        "amp::array_view<int, 1> out)\n"
        "{\n    int s = 0;\n    for (int i = t.global[0]; i < in.extent[0]; i += out.extent[0]) s += in[i];\n"
        "    tile_static int p[32];\n    p[t.local[0]] = s;\n    t.barrier.wait();\n"
        "    out[t.global] = p[31 - t.local[0]];\n}\n";
    size_t len = 0, user_start = 0;
    char *src = cpu_unit(user, &len, &user_start);
    char dir[] = "/tmp/hipamp-lpch-test-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[sizeof dir + 32], junk[sizeof dir + 32], main_path[sizeof dir + 32];
    snprintf(path, sizeof path, "%s/lib.pch", dir);
    snprintf(junk, sizeof junk, "%s/junk.pch", dir);
    snprintf(main_path, sizeof main_path, "%s/lpch.cpp", dir);
    /* The text on the disk too, as a build writes it before the parse:
     * libclang tells the precompiled part's positions from the main file's
     * by the file (without it, the parse is made whole: last below). */
    FILE *f = fopen(main_path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(src, 1, len, f), len);
    cr_assert_eq(fclose(f), 0);
    const char *args[] = {"-x", "c++", "-std=c++17", "-w"};
    amp__cpu_loops_job job = {src, len, user_start, main_path, args, 4, NULL};
    amp__cpu_loops_result whole, with, bad;
    char note[512];
    if (!amp__cpu_loops_transform(&job, &whole, note, sizeof note))
        cr_skip_test("no loop transformation here: %s", note);
    cr_assert_not(whole.pch_used);
    cr_assert_eq(whole.n, 2);
    cr_assert(whole.k[0].loops && whole.k[1].loops, "%s / %s", whole.k[0].why, whole.k[1].why);

    uint64_t deadline = amp__now_ns() + 60000000000ull;
    char *inputs = NULL;
    cr_assert(amp__cpu_loops_make_pch(&job, path, deadline, &inputs, note, sizeof note), "%s", note);
    /* The files it read: the C++ library's among them, each as it is now. */
    cr_assert(inputs && strstr(inputs, "/cmath\t"), "the part's list names no <cmath>: %s", inputs ? inputs : "");
    cr_assert(amp__cpu_loops_pch_inputs_ok(inputs, strlen(inputs)), "%s", inputs);
    free(inputs);
    job.pch = path;
    /* Through the child process a build runs it in, then in this one. */
    amp__cpu_loops_outcome how = {0};
    cr_assert(amp__cpu_loops_run(&job, deadline, &with, note, sizeof note, &how), "%s", note);
    cr_assert(with.pch_used);
    cr_assert_not(with.pch_refused);
    same_result(&whole, &with, "with the precompiled part, in a child");
    amp__cpu_loops_free(&with);
    cr_assert(amp__cpu_loops_transform(&job, &with, note, sizeof note), "%s", note);
    cr_assert(with.pch_used, "the parse did not read %s", path);
    same_result(&whole, &with, "with the precompiled part");
    amp__cpu_loops_free(&with);

    f = fopen(junk, "wb");
    cr_assert_not_null(f);
    for (int i = 0; i < 4096; ++i) fputc("CPCH"[i % 4] ^ (i & 0x7f), f);
    cr_assert_eq(fclose(f), 0);
    job.pch = junk;
    cr_assert(amp__cpu_loops_transform(&job, &bad, note, sizeof note), "%s", note);
    cr_assert_not(bad.pch_used, "a file of junk was taken for the precompiled part");
    cr_assert(bad.pch_refused, "a file of junk was not counted against the part");
    same_result(&whole, &bad, "after junk");
    amp__cpu_loops_free(&bad);

    /* An error in the user's text is not the part's: not refused. */
    static const char wrong[] = "AMP_TILED_KERNEL(lpch_wrong, amp::tiled_index<64> t, amp::array_view<int, 1> a)\n"
                                "{ a[t.global] = lpch_undeclared_name; }\n";
    size_t wlen = 0, wstart = 0;
    char *wsrc = cpu_unit(wrong, &wlen, &wstart);
    f = fopen(main_path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(wsrc, 1, wlen, f), wlen);
    cr_assert_eq(fclose(f), 0);
    amp__cpu_loops_job wjob = {wsrc, wlen, wstart, main_path, args, 4, path};
    amp__cpu_loops_outcome wh = {0};
    cr_assert_not(amp__cpu_loops_run(&wjob, deadline, &bad, note, sizeof note, &wh), "a text with an error parsed");
    cr_assert_not(bad.pch_refused, "an error in the user's text was counted against the part: %s", note);
    amp__cpu_loops_free(&bad);
    free(wsrc);
    f = fopen(main_path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(src, 1, len, f), len);
    cr_assert_eq(fclose(f), 0);

    job.pch = path;
    cr_assert_eq(unlink(main_path), 0);
    cr_assert(amp__cpu_loops_transform(&job, &bad, note, sizeof note), "%s", note);
    cr_assert_not(bad.pch_used, "the part was used with a main file libclang cannot tell from it");
    same_result(&whole, &bad, "without the main file on the disk");
    amp__cpu_loops_free(&bad);

    amp__cpu_loops_free(&whole);
    unlink(path);
    unlink(junk);
    cr_assert_eq(rmdir(dir), 0, "%s: %s", dir, strerror(errno));
    free(src);
}

/* A precompiled part is used only while every file it read is as listed:
 * the same regular file, size and modification time; a list that is empty,
 * malformed or names a file gone, grown or touched is not. */
Test(internal, precompiled_part_inputs_are_checked_against_the_disk)
{
    char dir[] = "/tmp/hipamp-lpch-inputs-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char file[sizeof dir + 16], list[2 * sizeof dir + 160];
    snprintf(file, sizeof file, "%s/h.hpp", dir);
    FILE *f = fopen(file, "wb");
    cr_assert_not_null(f);
    fputs("int h;\n", f);
    cr_assert_eq(fclose(f), 0);
    struct stat sb;
    cr_assert_eq(stat(file, &sb), 0);
#define LIST(...) (snprintf(list, sizeof list, __VA_ARGS__), amp__cpu_loops_pch_inputs_ok(list, strlen(list)))
    cr_assert(LIST("%s\t%lld\t%lld\t%ld\n", file, (long long)sb.st_size, (long long)sb.st_mtim.tv_sec,
                   (long)sb.st_mtim.tv_nsec));
    cr_assert_not(LIST("%s\t%lld\t%lld\t%ld\n", file, (long long)sb.st_size + 1, (long long)sb.st_mtim.tv_sec,
                       (long)sb.st_mtim.tv_nsec), "another size passed");
    cr_assert_not(LIST("%s\t%lld\t%lld\t%ld\n", file, (long long)sb.st_size, (long long)sb.st_mtim.tv_sec - 1,
                       (long)sb.st_mtim.tv_nsec), "another time passed");
    cr_assert_not(LIST("%s\t%lld\t%lld\t%ld", file, (long long)sb.st_size, (long long)sb.st_mtim.tv_sec,
                       (long)sb.st_mtim.tv_nsec), "a line without its end passed");
    cr_assert_not(LIST("%s\t%lld\t%lld\t%ldx\n", file, (long long)sb.st_size, (long long)sb.st_mtim.tv_sec,
                       (long)sb.st_mtim.tv_nsec), "a line with more after its fields passed");
    cr_assert_not(LIST("%s\t%lld\n", file, (long long)sb.st_size), "a line short of fields passed");
    struct stat db;
    cr_assert_eq(stat(dir, &db), 0);
    cr_assert_not(LIST("%s\t%lld\t%lld\t%ld\n", dir, (long long)db.st_size, (long long)db.st_mtim.tv_sec,
                       (long)db.st_mtim.tv_nsec), "a directory passed");
    cr_assert_not(LIST("%s\t+%lld\t%lld\t%ld\n", file, (long long)sb.st_size, (long long)sb.st_mtim.tv_sec,
                       (long)sb.st_mtim.tv_nsec), "a signed number passed");
    cr_assert_not(LIST("%s\t %lld\t%lld\t%ld\n", file, (long long)sb.st_size, (long long)sb.st_mtim.tv_sec,
                       (long)sb.st_mtim.tv_nsec), "a blank before a number passed");
    cr_assert_not(LIST("%s\t%lld\t%lld\t%ld\t\n", file, (long long)sb.st_size, (long long)sb.st_mtim.tv_sec,
                       (long)sb.st_mtim.tv_nsec), "a tab after the last number passed");
    cr_assert_not(LIST("%s\t99999999999999999999\t%lld\t%ld\n", file, (long long)sb.st_mtim.tv_sec,
                       (long)sb.st_mtim.tv_nsec), "a number past 64 bits passed");
    cr_assert_not(LIST("h.hpp\t%lld\t%lld\t%ld\n", (long long)sb.st_size, (long long)sb.st_mtim.tv_sec,
                       (long)sb.st_mtim.tv_nsec), "a relative path passed");
    {
        int n = snprintf(list, sizeof list, "%s\t%lld\t%lld\t%ld\n", file, (long long)sb.st_size,
                         (long long)sb.st_mtim.tv_sec, (long)sb.st_mtim.tv_nsec);
        list[n - 2] = 0; /* a NUL inside the line's last number */
        cr_assert_not(amp__cpu_loops_pch_inputs_ok(list, (size_t)n), "a line with a NUL in it passed");
    }
    cr_assert_not(LIST("%s", ""), "an empty list passed");
    /* touched: the same size, another time */
    struct timespec ts[2] = {{0, UTIME_OMIT}, {sb.st_mtim.tv_sec + 7, sb.st_mtim.tv_nsec}};
    cr_assert_eq(utimensat(AT_FDCWD, file, ts, 0), 0);
    cr_assert_not(LIST("%s\t%lld\t%lld\t%ld\n", file, (long long)sb.st_size, (long long)sb.st_mtim.tv_sec,
                       (long)sb.st_mtim.tv_nsec), "a touched file passed");
    cr_assert_eq(unlink(file), 0);
    cr_assert_not(LIST("%s\t%lld\t%lld\t%ld\n", file, (long long)sb.st_size, (long long)sb.st_mtim.tv_sec + 7,
                       (long)sb.st_mtim.tv_nsec), "a file gone passed");
#undef LIST
    cr_assert_eq(rmdir(dir), 0);
}

/* ------------------------------------------ the CPU pool's launch blocks */

/* A direct launch's work is cut into one block a thread and each thread
 * takes from its own block first (cpu_pool.c, amp__cpu_take_home): no
 * chunk crosses a block's edge, and every index is taken once. */
Test(cpu_blocks, a_thread_takes_from_its_own_block_first_and_every_index_once)
{
    enum { TOTAL = 10000, NT = 4 };
    amp__cpu_job j;
    memset(&j, 0, sizeof j);
    j.total = TOTAL;
    j.min_chunk = 256;
    amp__cpu_block *parts = amp__cpu_blocks_alloc(NT);
    cr_assert(parts != NULL);
    amp__cpu_blocks_arm(&j, parts, NT);
    cr_assert_eq(j.nparts, NT);
    /* 2500 a block, rounded up to whole cache lines of floats: 2560. */
    int64_t b, e;
    cr_assert(amp__cpu_take_blocks(&j, 2, &b, &e));
    cr_assert(b == 5120 && e == 5120 + 1280, "home 2's first chunk is [%lld, %lld), not [5120, 6400)", (long long)b,
              (long long)e);
    static unsigned char seen[TOTAL];
    memset(seen, 0, sizeof seen);
    for (int64_t i = b; i < e; ++i) seen[i]++;
    int home = 0;
    while (amp__cpu_take_blocks(&j, home, &b, &e)) {
        cr_assert(b < e && e <= TOTAL, "chunk [%lld, %lld)", (long long)b, (long long)e);
        cr_assert_eq(b / 2560, (e - 1) / 2560, "chunk [%lld, %lld) crosses a block's edge", (long long)b,
                     (long long)e);
        for (int64_t i = b; i < e; ++i) seen[i]++;
        home = (home + 1) % NT;
    }
    for (int i = 0; i < TOTAL; ++i) cr_assert_eq(seen[i], 1, "index %d taken %d times", i, seen[i]);
    free(parts);
}

/* Every chunk a direct launch on the pool ran, recorded by a made-up
 * entry (one launch at a time: the test's). */
enum { BLOCK_TOTAL = 16484, BLOCK_MAX_CHUNKS = 4096 };
static _Atomic int block_nchunks;
static int64_t block_chunk[BLOCK_MAX_CHUNKS][2];

static void block_record(amp__cpu_item *it)
{
    int k = atomic_fetch_add(&block_nchunks, 1);
    if (k < BLOCK_MAX_CHUNKS) {
        block_chunk[k][0] = it->begin;
        block_chunk[k][1] = it->end;
    }
}

static void pool_blocks_case(unsigned spin_us, bool blocks)
{
    amp__cpu_device d;
    memset(&d, 0, sizeof d);
    d.nthreads = 4;
    d.spin_us = spin_us;
    d.stack_size = 64 * 1024;
    for (int round = 0; round < 3; ++round) {
        amp__cpu_job j;
        memset(&j, 0, sizeof j);
        pthread_mutex_init(&j.err_lock, NULL);
        j.entry = block_record;
        j.total = BLOCK_TOTAL;
        atomic_store(&block_nchunks, 0);
        ASSERT_OK(amp__cpu_job_run_on(&d, &j, 0));
        cr_assert(j.take == NULL && j.parts == NULL, "the job still points at the launcher's blocks");
        int n = atomic_load(&block_nchunks);
        cr_assert(n > 0 && n <= BLOCK_MAX_CHUNKS, "%d chunks", n);
        /* The pool's threads and the launcher: 4, each a block of
         * ceil(16484 / 4) = 4121 rounded up to 4160. */
        cr_assert_eq(amp__cpu_pool_threads(), 4);
        static unsigned char seen[BLOCK_TOTAL];
        memset(seen, 0, sizeof seen);
        bool crossed = false;
        for (int k = 0; k < n; ++k) {
            int64_t b = block_chunk[k][0], e = block_chunk[k][1];
            cr_assert(b < e && e <= BLOCK_TOTAL, "chunk [%lld, %lld)", (long long)b, (long long)e);
            if (b / 4160 != (e - 1) / 4160) {
                cr_assert(!blocks, "round %d: chunk [%lld, %lld) crosses a block's edge", round, (long long)b,
                          (long long)e);
                crossed = true;
            }
            for (int64_t i = b; i < e; ++i) seen[i]++;
        }
        /* The counter hands out an eighth of what is left at a time
         * (2060, 1803, then 1577 items from 3863), which crosses the first
         * edge whichever threads take them. */
        if (!blocks) cr_assert(crossed, "round %d: no chunk crossed a block's edge on the counter", round);
        for (int i = 0; i < BLOCK_TOTAL; ++i) cr_assert_eq(seen[i], 1, "index %d run %d times", i, seen[i]);
        pthread_mutex_destroy(&j.err_lock);
    }
}

Test(cpu_blocks, a_direct_launch_runs_in_blocks_on_a_spinning_pool) { pool_blocks_case(1000, true); }
/* A pool whose threads sleep keeps the shared counter (cpu_pool.c says
 * why): its chunks are not cut at the blocks' edges. */
Test(cpu_blocks, a_direct_launch_on_a_sleeping_pool_takes_from_one_counter) { pool_blocks_case(0, false); }

/* The most work-items a launch may have: a rank-8 extent whose element
 * count is INT64_MAX exactly (7 * 7 * 73 * 127 * 337 * 92737 * 649657 * 1),
 * which amp_extent_validate accepts. Its chunk count and its blocks are
 * counted without passing INT64_MAX (ceil(total / chunk) as
 * total + chunk - 1 wrapped negative, and the last block's end as
 * from + per: that block was empty and its work-items never ran). */
Test(cpu_blocks, the_largest_launch_is_counted_and_cut_without_overflow)
{
    int v[8] = {7, 7, 73, 127, 337, 92737, 649657, 1};
    amp_extent e = amp_extent_make(8, v);
    ASSERT_OK(amp_extent_validate(e));
    int64_t count = 1;
    for (int d = 0; d < 8; ++d) count *= v[d];
    cr_assert_eq(count, INT64_MAX);
    amp__cpu_job j;
    memset(&j, 0, sizeof j);
    j.total = INT64_MAX;
    int64_t n = amp__cpu_job_arm(&j, 4);
    cr_assert_eq(n, (int64_t)1 << 55, "INT64_MAX work-items in chunks of 256: %lld chunks, not 2^55", (long long)n);
    n = amp__cpu_job_arm(&j, 1);
    cr_assert_eq(n, 1, "INT64_MAX work-items on one thread: %lld chunks, not 1", (long long)n);
    j.launch.tiled = true;
    n = amp__cpu_job_arm(&j, 4);
    cr_assert_eq(n, INT64_MAX, "INT64_MAX tiles one at a time: %lld chunks", (long long)n);
    for (int tiled = 0; tiled < 2; ++tiled)
        for (int nt = 2; nt <= 64; ++nt) {
            j.launch.tiled = tiled;
            (void)amp__cpu_job_arm(&j, nt);
            amp__cpu_block *parts = amp__cpu_blocks_alloc(nt);
            cr_assert(parts != NULL);
            amp__cpu_blocks_arm(&j, parts, nt);
            /* The blocks tile [0, INT64_MAX) in order: none empty but at
             * the end, none past it. */
            int64_t at = 0;
            for (int b = 0; b < nt; ++b) {
                int64_t from = atomic_load(&parts[b].next);
                cr_assert(from == at && parts[b].end >= from && parts[b].end <= INT64_MAX,
                          "%s, %d blocks: block %d is [%lld, %lld) after %lld", tiled ? "tiled" : "simple", nt, b,
                          (long long)from, (long long)parts[b].end, (long long)at);
                at = parts[b].end;
            }
            cr_assert_eq(at, INT64_MAX, "%s, %d blocks end at %lld", tiled ? "tiled" : "simple", nt, (long long)at);
            free(parts);
        }
}

/* ------------------------------------- the CPU pool's deschedule check */

/* The polls a spin of 1 ms took on this thread (own: a replay team
 * member's) before it stopped. The clock is read every 64 polls, first at
 * the 64th, where the spin's deadline is set: a spin stops there only if
 * its thread's spinning is off; one that runs stops later, at its deadline
 * or at a read that finds it was descheduled. */
static unsigned spin_polls(bool own)
{
    amp__cpu_spin s = {.ns = 1000000, .own = own};
    while (amp__cpu_spin_more(&s))
        ;
    return s.polls;
}

/* A spin of 1 s, asleep for 2 ms between two clock reads (descheduled, as
 * the spin sees it): how many polls it went on after the sleep (63: it
 * stopped at the next read), or -1 if it stopped before the sleep. No
 * assertion here: it also runs on a thread of its own. */
static int descheduled_spin(bool own)
{
    amp__cpu_spin s = {.ns = 1000000000, .own = own};
    for (int i = 0; i < 64; ++i)
        if (!amp__cpu_spin_more(&s)) return -1;
    usleep(2000);
    int more = 0;
    while (more < 64 && amp__cpu_spin_more(&s)) ++more;
    return more;
}

typedef struct spin_report {
    int more;       /* descheduled_spin's answer */
    unsigned polls; /* spin_polls' */
} spin_report;

static void *fresh_thread_polls(void *out)
{
    ((spin_report *)out)->polls = spin_polls(false);
    return NULL;
}

/* A member descheduled leaves its thread's spinning on. */
static void *member_descheduled(void *out)
{
    spin_report *r = out;
    r->more = descheduled_spin(true);
    r->polls = spin_polls(false);
    return NULL;
}

static spin_report on_a_new_thread(void *(*fn)(void *))
{
    spin_report r = {-2, 0};
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, fn, &r), 0);
    pthread_join(th, NULL);
    return r;
}

/* A spinner descheduled stops, and its thread spins no more for 50 ms,
 * while the other threads spin on (cpu_pool.c's amp__cpu_spin_more: one
 * thread's being descheduled now and then must not make every launch wake
 * the whole pool through the kernel). A team member's spin (own) ends
 * alike but leaves its thread's spinning on, and runs where its thread's
 * is off. */
Test(cpu_pool, a_descheduled_spinner_stops_its_own_thread_only, .timeout = 60)
{
    /* The next spin's first read must come within the 50 ms: where the
     * machine held this thread off for 40 ms between the two, again. */
    unsigned p = 0;
    uint64_t took = UINT64_MAX;
    for (int tries = 0; tries < 5 && took >= 40000000u; ++tries) {
        if (tries) usleep(60000); /* out of any window the slow try's spin left */
        uint64_t t0 = amp__now_ns();
        int more = descheduled_spin(false);
        p = spin_polls(false);
        took = amp__now_ns() - t0;
        cr_assert_eq(more, 63, "a spin of 1 s asleep for 2 ms between two reads went %d polls on (-1: ended before)",
                     more);
    }
    if (took >= 40000000u) cr_skip_test("this thread was held off for 40 ms or more in each of five tries");
    cr_assert_eq(p, 64, "the descheduled thread spun on (%u polls)", p);
    spin_report r = on_a_new_thread(fresh_thread_polls);
    cr_assert_gt(r.polls, 64, "another thread's spin stopped at its first read: one thread stopped every thread's spinning");
    p = spin_polls(true);
    cr_assert_gt(p, 64, "a member's spin stopped at its first read where its thread's spinning is off");
    usleep(60000);
    p = spin_polls(false);
    cr_assert_gt(p, 64, "the thread's spinning stayed off past 50 ms");
    r = on_a_new_thread(member_descheduled);
    cr_assert_eq(r.more, 63, "a member's spin asleep for 2 ms went %d polls on (-1: ended before)", r.more);
    cr_assert_gt(r.polls, 64, "a member's being descheduled stopped its thread's spinning");
}

/* ------------------------------------------ the device library's names */

static bool wants(const char *text) { return amp__device_lib_wanted(text, strlen(text)); }

/* What brings the device library into a GPU build (lib/base/prelude.c):
 * its names as whole identifier tokens, never part of a longer one; a
 * source with none compiles without it. */
Test(internal, device_lib_wanted_by_names)
{
    static const char *const yes[] = {
        "float4 v;", "x = make_int2(1, 2);", "amp::float_4 v;", "double3 d;", "ulonglong4 u;", "half2 h;",
        "amp::atomic_fetch_add(p, 1);", "using namespace amp::precise_math;", "fast_math::sqrt(x)",
        "amp::direct3d::clamp(x, 0, 1)", "amp::norm n;", "unorm_2 u;", "graphics::float_2 g;",
        "r == FP_NAN", "uint k = 3;", "short_vector<float, 2>::type t;", "amp::vec<float, 3> v;",
        "a + float4(1)", "/* float4 in a comment */", "#define V int_3\n",
    };
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; ++i) cr_assert(wants(yes[i]), "not seen: \"%s\"", yes[i]);
    static const char *const no[] = {
        "", "AMP_TILED_KERNEL(t, amp::tiled_index<16, 16> tidx, amp::array_view<const float, 2> A) {}",
        "float f; int4x; myfloat4 a; float5 b; float0 c; make_float5(); int_ x; atomicAdd(p, 1);",
        "vector v; normal n; uint32_t u; unsigned k; vec3 q; atom(); ic_fetch_add; PASTE(atom, ic_fetch_add)",
        "amp::index<2> i; tile_static float t[16][16]; tidx.barrier.wait();", "make_ x; _float4 y; float44 z;",
    };
    for (size_t i = 0; i < sizeof no / sizeof no[0]; ++i) cr_assert(!wants(no[i]), "seen in: \"%s\"", no[i]);
    cr_assert(!amp__device_lib_wanted(NULL, 0));
    /* Only the given length is read. */
    cr_assert(!amp__device_lib_wanted("int k; float4 v;", 6));
    cr_assert(amp__device_lib_wanted("int k; float4 v;", 13));

    /* The lean unit lacks the library the full one has; both end with the
     * source under its own name. */
    size_t lean_len = 0, full_len = 0;
    char *lean = amp__prelude_assemble_lean("int user_text;", "k.hip", &lean_len);
    char *full = amp__prelude_assemble(NULL, "int user_text;", "k.hip", &full_len);
    cr_assert(lean && full);
    cr_assert_eq(lean_len, strlen(lean));
    cr_assert_null(strstr(lean, "AMP_DEVICE_LIB_INCLUDED"));
    cr_assert_not_null(strstr(full, "AMP_DEVICE_LIB_INCLUDED"));
    cr_assert_not_null(strstr(lean, "#line 1 \"k.hip\"\nint user_text;"));
    cr_assert_lt(lean_len, full_len);
    free(lean);
    free(full);
}

/* Leaving the device library out changes no machine code: hipRTC's code
 * objects of a source compiled without it (nothing names it) and with it
 * (a comment naming float4 brings it in) are the same bytes. On NVIDIA the
 * CUBINs differ only in three unused one-byte globals of NVRTC's atomic
 * helpers (measured: bench/results/2026-12-01-h200-cold-compile-lean-prelude.md). */
Test(internal, device_library_left_out_changes_no_machine_code, .timeout = 120)
{
    static const char lean[] =
        "AMP_TILED_KERNEL(transpose16, amp::tiled_index<16, 16> tidx,\n"
        "                 amp::array_view<const float, 2> A, amp::array_view<float, 2> At)\n"
        "{\n"
        "    tile_static float t[16][17];\n"
        "    t[tidx.local[1]][tidx.local[0]] = A[tidx.global];\n"
        "    tidx.barrier.wait();\n"
        "    amp::index<2> dst = amp::index<2>(tidx.tile_origin[1], tidx.tile_origin[0]) + tidx.local;\n"
        "    At[dst] = t[tidx.local[0]][tidx.local[1]];\n"
        "}\n"
        "AMP_KERNEL(saxpy, amp::index<1> i, float a, amp::array_view<const float, 1> x,\n"
        "           amp::array_view<float, 1> y) { y[i] += a * x[i]; }\n";
    static const char whole[] = "// float4\n";
    char both[sizeof lean + sizeof whole];
    snprintf(both, sizeof both, "%s%s", lean, whole);
    cr_assert(!amp__device_lib_wanted(lean, strlen(lean)));
    cr_assert(amp__device_lib_wanted(both, strlen(both)));
    amp_code_object *a = NULL, *b = NULL;
    amp_status st = amp_compile_for_target("gfx90a", lean, NULL, &a);
    if (st == AMP_ERROR_UNSUPPORTED) cr_skip_test("no hipRTC for gfx90a here: %s", amp_last_error());
    cr_assert_eq(st, AMP_OK, "%s", amp_last_error());
    cr_assert_eq(amp_compile_for_target("gfx90a", both, NULL, &b), AMP_OK, "%s", amp_last_error());
    const void *da, *db;
    size_t na, nb;
    cr_assert_eq(amp_code_object_data(a, &da, &na), AMP_OK);
    cr_assert_eq(amp_code_object_data(b, &db, &nb), AMP_OK);
    cr_assert_eq(na, nb, "code objects of %zu and %zu bytes", na, nb);
    cr_assert(!memcmp(da, db, na), "the code objects differ");
    cr_assert_eq(amp_code_object_kernel_count(a), 2);
    amp_code_object_destroy(a);
    amp_code_object_destroy(b);
}

/* Whether a unit has kernels for NVRTC's --split-compile to spread over:
 * whole AMP_KERNEL and AMP_TILED_KERNEL tokens of the user's text only, up
 * to the cap and the length given. */
Test(internal, kernel_macro_count_counts_whole_tokens)
{
    static const char text[] = "AMP_KERNEL(a, ...) AMP_TILED_KERNEL(b, ...)\n"
                               "AMP_KERNEL_MAX_BLOCK(a, 512) MY_AMP_KERNEL(c) AMP_KERNELS x_AMP_TILED_KERNEL\n"
                               "/* AMP_KERNEL */ AMP_TILED_KERNEL";
    cr_assert_eq(amp__kernel_macro_count(text, strlen(text), 100), 4);
    cr_assert_eq(amp__kernel_macro_count(text, strlen(text), 3), 3);
    cr_assert_eq(amp__kernel_macro_count(text, 10, 100), 1);
    cr_assert_eq(amp__kernel_macro_count(text, 9, 100), 0, "a token cut by the length is not the name");
    cr_assert_eq(amp__kernel_macro_count(text + 1, 9, 100), 0, "a shorter run of the name's letters is not the name");
    cr_assert_eq(amp__kernel_macro_count("", 0, 100), 0);

    size_t len = 0;
    char *unit = amp__prelude_assemble_lean("AMP_KERNEL(k, amp::index<1> i, amp::array_view<int, 1> a) { a[i] = 1; }",
                                            "k.hip", &len);
    cr_assert_not_null(unit);
    size_t end = amp__unit_library_end(unit);
    cr_assert_gt(end, strlen(amp__embedded_prelude) - 1);
    cr_assert_eq(amp__kernel_macro_count(unit + end, len - end, 100), 1, "the prelude's own macros were counted");
    free(unit);
    unit = amp__prelude_assemble(NULL, "int x;", "k.hip", &len);
    cr_assert_not_null(unit);
    end = amp__unit_library_end(unit);
    cr_assert(strstr(unit + end, "int x;") && !strstr(unit + end, "amp__"),
              "the device library is not before the user's text");
    free(unit);
    cr_assert_eq(amp__unit_library_end("AMP_KERNEL(k)"), 0, "a text without the prelude starts at 0");
}

/* The last-level cache the CPU accelerator's streaming-store threshold
 * defaults to (lib/base/cpus.c), read from a made-up sysfs tree: each CPU's
 * highest-level data or unified cache (instruction caches and lower levels
 * ignored), one cache counted once however many CPUs share it, caches of
 * other CPU sets each counted; a CPU without cache files adds nothing. */
static void fake_cache(const char *root, int cpu, int index, const char *type, int level, const char *size,
                       const char *shared)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/cpu%d", root, cpu);
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/cpu%d/cache", root, cpu);
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/cpu%d/cache/index%d", root, cpu, index);
    cr_assert(mkdir(path, 0700) == 0 || errno == EEXIST);
    const char *names[] = {"type", "level", "size", "shared_cpu_list"};
    char lvl[16];
    snprintf(lvl, sizeof lvl, "%d", level);
    const char *values[] = {type, lvl, size, shared};
    for (int k = 0; k < 4; ++k) {
        char file[PATH_MAX + 32];
        snprintf(file, sizeof file, "%s/%s", path, names[k]);
        FILE *f = fopen(file, "w");
        cr_assert_not_null(f, "%s", file);
        fprintf(f, "%s\n", values[k]);
        fclose(f);
    }
}

Test(cpu_blocks, last_level_cache_counts_each_cache_once)
{
    char root[] = "/tmp/hipamp-llc-XXXXXX";
    cr_assert_not_null(mkdtemp(root));
    /* CPUs 0 and 1 share a 32 MiB L3; CPU 2 has a 16 MiB one of its own
     * (and a larger L2, which a higher level beats); CPU 3 has L1 and L2
     * only; CPU 4 nothing. */
    for (int cpu = 0; cpu < 4; ++cpu) {
        fake_cache(root, cpu, 0, "Data", 1, "48K", "x");
        fake_cache(root, cpu, 1, "Instruction", 1, "32K", "x");
        fake_cache(root, cpu, 2, "Unified", 2, cpu == 2 ? "65536K" : "1024K", "y");
    }
    fake_cache(root, 0, 3, "Unified", 3, "32768K", "0-1");
    fake_cache(root, 1, 3, "Unified", 3, "32768K", "0-1");
    fake_cache(root, 2, 3, "Unified", 3, "16M", "2");
    const int all[] = {0, 1, 2, 3, 4}, pair[] = {0, 1}, one[] = {1}, l2only[] = {3}, none[] = {4};
    /* CPU 3's L2 ("y", 1 MiB) is the only cache named "y" at its level. */
    cr_assert_eq(amp__llc_bytes_in(root, all, 5), (48ull << 20) + (1ull << 20));
    cr_assert_eq(amp__llc_bytes_in(root, pair, 2), 32ull << 20);
    cr_assert_eq(amp__llc_bytes_in(root, one, 1), 32ull << 20);
    cr_assert_eq(amp__llc_bytes_in(root, l2only, 1), 1ull << 20);
    cr_assert_eq(amp__llc_bytes_in(root, none, 1), 0);
    char missing[PATH_MAX];
    snprintf(missing, sizeof missing, "%s/none", root);
    cr_assert_eq(amp__llc_bytes_in(missing, all, 5), 0);
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    cr_assert_eq(system(cmd), 0);
}

/* ------------------------------------------------ AMD metadata note reader */

amp_status amp__code_object_parse(const void *bin, size_t size, amp_kernel_resources **ks, size_t *nk);

static void le_put(unsigned char *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; ++i) p[i] = (unsigned char)(v >> (8 * i));
}

/* An ELF64 of one PT_NOTE holding an NT_AMDGPU_METADATA note of md. */
static size_t elf_with_metadata(unsigned char *out, size_t cap, const unsigned char *md, size_t mdlen)
{
    size_t noff = 120, nlen = 20 + (mdlen + 3) / 4 * 4;
    cr_assert_leq(noff + nlen, cap);
    memset(out, 0, cap);
    memcpy(out, "\x7f" "ELF", 4);
    out[4] = 2; /* 64-bit */
    out[5] = 1; /* little-endian */
    le_put(out + 32, 64, 8); /* e_phoff */
    le_put(out + 54, 56, 2); /* e_phentsize */
    le_put(out + 56, 1, 2);  /* e_phnum */
    unsigned char *ph = out + 64;
    le_put(ph, 4, 4); /* PT_NOTE */
    le_put(ph + 8, noff, 8);
    le_put(ph + 32, nlen, 8);
    le_put(ph + 48, 4, 8);
    unsigned char *n = out + noff;
    le_put(n, 7, 4);
    le_put(n + 4, mdlen, 4);
    le_put(n + 8, 32, 4); /* NT_AMDGPU_METADATA */
    memcpy(n + 12, "AMDGPU", 7);
    memcpy(n + 20, md, mdlen);
    return noff + nlen;
}

/* A top-level key that is no string (an array holding the real key) is
 * malformed: before, only its header was read and the skip of "its value"
 * took the array's element instead, losing the place in the note and
 * answering AMP_OK with no kernels. The same note with a string key is
 * read. */
Test(internal, amd_metadata_with_a_container_key_is_refused)
{
    static const unsigned char kernels[] = {
        0xae, 'a', 'm', 'd', 'h', 's', 'a', '.', 'k', 'e', 'r', 'n', 'e', 'l', 's', 0x91, 0x82, 0xa5, '.', 'n', 'a',
        'm', 'e', 0xa1, 'k', 0xb9, '.', 'g', 'r', 'o', 'u', 'p', '_', 's', 'e', 'g', 'm', 'e', 'n', 't', '_', 'f',
        'i', 'x', 'e', 'd', '_', 's', 'i', 'z', 'e', 0x40};
    unsigned char md[128], elf[512];
    amp_kernel_resources *ks = NULL;
    size_t nk = 0;
    md[0] = 0x81; /* a map of one: "amdhsa.kernels": [...] */
    memcpy(md + 1, kernels, sizeof kernels);
    size_t n = elf_with_metadata(elf, sizeof elf, md, 1 + sizeof kernels);
    ASSERT_OK(amp__code_object_parse(elf, n, &ks, &nk));
    cr_assert_eq(nk, 1);
    cr_assert_str_eq(ks[0].name, "k");
    cr_assert_eq(ks[0].lds_bytes, 64);
    free(ks);
    ks = NULL;
    md[0] = 0x82; /* a map of two whose first key is an array */
    md[1] = 0x91;
    memcpy(md + 2, kernels, sizeof kernels);
    n = elf_with_metadata(elf, sizeof elf, md, 2 + sizeof kernels);
    ASSERT_STATUS(amp__code_object_parse(elf, n, &ks, &nk), AMP_ERROR_COMPILE);
    cr_assert(strstr(amp_last_error(), "malformed"), "%s", amp_last_error());
    cr_assert_null(ks);
}

/* ------------------------------------------------------------ cache tags */

/* A backend's cache tag fits its buffer whole, or keeps its start and a
 * digest of the whole: tags that differ only past the cut (a long
 * HIPRTC_COMPILE_OPTIONS_APPEND, a long AMP_CPU_CXX) stay different, where
 * the cut made them one and shared cache entries between settings. */
Test(internal, cache_tags_that_differ_past_the_cut_stay_different)
{
    char a[600], b[600], out_a[128], out_b[128];
    memset(a, 'x', sizeof a - 1);
    a[sizeof a - 1] = 0;
    memcpy(b, a, sizeof a);
    b[sizeof b - 2] = 'y'; /* the last character only */
    amp__fit_tag(out_a, sizeof out_a, a);
    amp__fit_tag(out_b, sizeof out_b, b);
    cr_assert_eq(strlen(out_a), sizeof out_a - 1);
    cr_assert(strstr(out_a, ";sha256="), "%s", out_a);
    cr_assert_str_neq(out_a, out_b, "two tags that differ past the cut fit as one: %s", out_a);
    cr_assert_eq(strncmp(out_a, a, 40), 0, "the start kept");
    /* One that fits is kept as it is. */
    amp__fit_tag(out_a, sizeof out_a, "hip gfx90a hiprtc 6.2;HIP_PATH=9:/opt/rocm");
    cr_assert_str_eq(out_a, "hip gfx90a hiprtc 6.2;HIP_PATH=9:/opt/rocm");
}

/* A message fitted to a public field keeps its start and its end around a
 * mark of what was cut, within the field, and splits no UTF-8 sequence. */
Test(internal, a_fitted_text_keeps_its_end_and_whole_characters)
{
    char full[700], out[128];
    size_t n = 0;
    while (n + 2 < 600) { /* "é" (c3 a9) over and over, then an ASCII end */
        full[n++] = (char)0xc3;
        full[n++] = (char)0xa9;
    }
    snprintf(full + n, sizeof full - n, ": what went wrong");
    amp__fit_text(out, sizeof out, full);
    size_t k = strlen(out);
    cr_assert_lt(k, sizeof out);
    cr_assert_gt(k, sizeof out - 8, "the field's room left unused: %zu of %zu", k, sizeof out);
    cr_assert(k > 17 && !strcmp(out + k - 17, ": what went wrong"), "the end lost: %s", out);
    const char *mark = strstr(out, " [... ");
    cr_assert_not_null(mark, "no mark: %s", out);
    size_t cut = strtoul(mark + 6, NULL, 10);
    cr_assert_eq(strlen(full) - cut, k - (size_t)(strstr(mark, "...] ") + 5 - mark), "the mark's count: %s", out);
    /* whole characters on both sides of the mark */
    cr_assert_eq((mark - out) % 2, 0, "the start ends inside a character");
    for (const char *p = strstr(mark, "...] ") + 5; *p != ':'; p += 2)
        cr_assert((unsigned char)p[0] == 0xc3 && (unsigned char)p[1] == 0xa9, "the end starts inside a character");
    /* one that fits is kept as it is, to the last byte of the field */
    memset(full, 'z', sizeof out - 1);
    full[sizeof out - 1] = 0;
    amp__fit_text(out, sizeof out, full);
    cr_assert_str_eq(out, full);
}

/* amp__ancestors_pass (lib/base/trusted_path.c), the walk the shared disk
 * cache and the prebuilt packs hold the directories above them to: every
 * directory from / down, in order, the path itself only when whole; the
 * first refusal or failed stat named. */
#include "base/trusted_path.h"

typedef struct {
    ino_t refuse;
    int seen;
    ino_t order[16];
} ancestor_probe;

static bool ancestor_judge(const struct stat *sb, void *ctx, char *what, size_t n)
{
    ancestor_probe *p = ctx;
    if (p->seen < 16) p->order[p->seen] = sb->st_ino;
    ++p->seen;
    if (sb->st_ino != p->refuse) return true;
    snprintf(what, n, "refused by the probe");
    return false;
}

Test(internal, ancestors_pass_walks_from_root_down_and_names_the_first_refused)
{
    char base[] = "/tmp/amp-ancestors-XXXXXX", a[64], b[80], dir[PATH_MAX], why[128];
    cr_assert_not_null(mkdtemp(base));
    snprintf(a, sizeof a, "%s/a", base);
    snprintf(b, sizeof b, "%s/b", a);
    cr_assert_eq(mkdir(a, 0700), 0);
    cr_assert_eq(mkdir(b, 0700), 0);
    struct stat sr, sa, sb;
    cr_assert_eq(stat("/", &sr), 0);
    cr_assert_eq(stat(a, &sa), 0);
    cr_assert_eq(stat(b, &sb), 0);

    /* Whole: /, /tmp, base, a, b in that order. */
    ancestor_probe p = {.refuse = 0};
    cr_assert(amp__ancestors_pass(b, true, ancestor_judge, &p, dir, sizeof dir, why, sizeof why));
    cr_assert_eq(p.seen, 5, "judged %d directories above and at %s, want 5", p.seen, b);
    cr_assert(p.order[0] == sr.st_ino && p.order[3] == sa.st_ino && p.order[4] == sb.st_ino);
    /* Not whole: b itself is not judged. */
    p = (ancestor_probe){.refuse = sb.st_ino};
    cr_assert(amp__ancestors_pass(b, false, ancestor_judge, &p, dir, sizeof dir, why, sizeof why),
              "the path itself was judged: %s: %s", dir, why);
    cr_assert_eq(p.seen, 4);
    /* The first refusal stops the walk and is named. */
    p = (ancestor_probe){.refuse = sa.st_ino};
    cr_assert_not(amp__ancestors_pass(b, true, ancestor_judge, &p, dir, sizeof dir, why, sizeof why));
    cr_assert_str_eq(dir, a);
    cr_assert_str_eq(why, "refused by the probe");
    cr_assert_eq(p.seen, 4);
    /* / alone. */
    p = (ancestor_probe){.refuse = sr.st_ino};
    cr_assert_not(amp__ancestors_pass("/", true, ancestor_judge, &p, dir, sizeof dir, why, sizeof why));
    cr_assert_str_eq(dir, "/");
    cr_assert_eq(p.seen, 1);
    /* A directory that is not there, and a relative path. */
    char gone[96];
    snprintf(gone, sizeof gone, "%s/gone/deeper", base);
    p = (ancestor_probe){.refuse = 0};
    cr_assert_not(amp__ancestors_pass(gone, true, ancestor_judge, &p, dir, sizeof dir, why, sizeof why));
    cr_assert(strstr(dir, "/gone") && !strstr(dir, "deeper") && strstr(why, strerror(ENOENT)), "%s: %s", dir, why);
    cr_assert_not(amp__ancestors_pass("tmp/x", true, ancestor_judge, &p, dir, sizeof dir, why, sizeof why));
    cr_assert(strstr(why, "absolute"), "%s", why);
    rmdir(b);
    rmdir(a);
    rmdir(base);
}

/* amp__dep_holds (include_scan.c): after a CPU compile, a scanned header is
 * compared with the content its key holds, not only by its stamps, which a
 * rewrite of the same size within the file system's timestamp tick leaves
 * as they were (then the program, built from the new text, would have been
 * stored on disk under the old text's key). */
Test(include_scan, a_header_is_held_to_the_content_it_was_keyed_with)
{
    char dir[] = "/tmp/amp-holds-XXXXXX", path[64];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/h.h", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("#define V 1\n", f);
    fclose(f);
    amp__dep d;
    cr_assert(amp__dep_stamp(&d, path));
    const amp__header h = {"h.h", path, "#define V 1\n", 12};
    cr_assert(amp__dep_holds(&d, path, &h), "the file as keyed was not recognised");
    const amp__header other = {"h.h", path, "#define V 2\n", 12};
    cr_assert_not(amp__dep_holds(&d, path, &other), "a header of other content of the same size was taken as keyed");
    const amp__header shorter = {"h.h", path, "#define V 1", 11};
    cr_assert_not(amp__dep_holds(&d, path, &shorter));
    /* Rewritten in place, same size: other content than the key's. */
    f = fopen(path, "r+");
    cr_assert_not_null(f);
    fputs("#define V 2\n", f);
    fclose(f);
    cr_assert_not(amp__dep_holds(&d, path, &h), "a rewrite of the same size was taken as the keyed content");
    unlink(path);
    cr_assert_not(amp__dep_holds(&d, path, &h));
    free(d.path);
    rmdir(dir);
}

/* ------------------------------------------- vendor libraries (driver_load.c) */

/* path's bytes copied to dir/name, mode 0755. */
static void copy_library(const char *from, const char *dir, const char *name)
{
    char to[PATH_MAX];
    snprintf(to, sizeof to, "%s/%s", dir, name);
    int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
    cr_assert(in >= 0 && out >= 0, "copy %s to %s: %s", from, to, strerror(errno));
    char buf[8192];
    ssize_t got;
    while ((got = read(in, buf, sizeof buf)) > 0) cr_assert_eq(write(out, buf, (size_t)got), got);
    close(in);
    close(out);
}

/* A vendor library the loader is not told of (ROCm in /opt/rocm/lib with
 * no ld.so.conf entry) is found in its install directories, after the
 * loader's own search, and only where no other local user could have put
 * it there: a copy in a directory every user may write is refused, named,
 * and the next directory's copy is the one loaded. trace_probe's library
 * (an ordinary shared object with roctx's names) stands in for the
 * vendor's; the names are ones no loader path has. */
Test(vendor_load, install_directories_are_searched_after_the_loader_and_held_to_the_trusted_file_rule)
{
    static const char *const names[] = {"libamp-test-vendor.so.9", "libamp-test-vendor.so", NULL};
    char open_dir[] = "/tmp/amp-vendor-open-XXXXXX", own_dir[] = "/tmp/amp-vendor-own-XXXXXX",
         absent_dir[] = "/tmp/amp-vendor-absent-XXXXXX", why[2048];
    cr_assert_not_null(mkdtemp(open_dir));
    cr_assert_not_null(mkdtemp(own_dir));
    cr_assert_not_null(mkdtemp(absent_dir));
    cr_assert_eq(rmdir(absent_dir), 0);
    cr_assert_eq(chmod(open_dir, 0777), 0);
    copy_library(HIPAMP_TRACE_PROBE, open_dir, "libamp-test-vendor.so.9");
    copy_library(HIPAMP_TRACE_PROBE, own_dir, "libamp-test-vendor.so");

    /* Nowhere but the loader's path: not found, and where it looked. */
    cr_assert_null(amp__gpu_dlopen_first(names, NULL, why, sizeof why));
    cr_assert(strstr(why, "libamp-test-vendor.so.9, libamp-test-vendor.so not found (searched LD_LIBRARY_PATH="),
              "%s", why);
    cr_assert_null(strstr(why, "; then"), "%s", why);

    /* Only the open directory: its copy is refused, and the reason names
     * every directory searched, the file and why. */
    const char *const open_only[] = {absent_dir, open_dir, NULL};
    cr_assert_null(amp__gpu_dlopen_first(names, open_only, why, sizeof why),
                   "a library in a directory every user may write was loaded");
    char want[256];
    snprintf(want, sizeof want, "; then %s, %s)", absent_dir, open_dir);
    cr_assert(strstr(why, want), "want \"%s\" in: %s", want, why);
    snprintf(want, sizeof want, "; %s/libamp-test-vendor.so.9 is not loaded (%s is writable by every user", open_dir,
             open_dir);
    cr_assert(strstr(why, want), "want \"%s\" in: %s", want, why);

    /* The open directory first, then one of this user's: the second's copy
     * is loaded, and why is its path. */
    const char *const both[] = {open_dir, own_dir, NULL};
    void *h = amp__gpu_dlopen_first(names, both, why, sizeof why);
    cr_assert_not_null(h, "%s", why);
    snprintf(want, sizeof want, "%s/libamp-test-vendor.so", own_dir);
    cr_assert_str_eq(why, want);
    cr_assert_not_null(dlsym(h, "roctxRangePushA"), "the library loaded is not the copy");
    dlclose(h);

    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/libamp-test-vendor.so.9", open_dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/libamp-test-vendor.so", own_dir);
    unlink(path);
    rmdir(open_dir);
    rmdir(own_dir);
}

/* The CPU review's: Debian 12's libamdhip64 (ROCm 5.2) asks for an
 * executable stack, and loading it to look for AMD GPUs made every
 * thread's stack in the process executable, without a word. Now the
 * driver's report says so (hipamp-info). A copy of trace_probe's library
 * with its PT_GNU_STACK made RWX stands in (the copy without it is said
 * nothing of: the test above compares its whole reason). */
Test(vendor_load, a_library_that_makes_the_stacks_executable_is_said_to)
{
    static const char *const names[] = {"libamp-test-execstack.so", NULL};
    char dir[] = "/tmp/amp-vendor-stack-XXXXXX", path[PATH_MAX], why[2048];
    cr_assert_not_null(mkdtemp(dir));
    copy_library(HIPAMP_TRACE_PROBE, dir, names[0]);
    snprintf(path, sizeof path, "%s/%s", dir, names[0]);
    int fd = open(path, O_RDWR);
    cr_assert_geq(fd, 0);
    Elf64_Ehdr eh;
    cr_assert_eq(pread(fd, &eh, sizeof eh, 0), (ssize_t)sizeof eh);
    bool patched = false;
    for (int i = 0; i < eh.e_phnum; ++i) {
        Elf64_Phdr ph;
        off_t at = (off_t)(eh.e_phoff + (uint64_t)i * eh.e_phentsize);
        cr_assert_eq(pread(fd, &ph, sizeof ph, at), (ssize_t)sizeof ph);
        if (ph.p_type != PT_GNU_STACK) continue;
        ph.p_flags |= PF_X;
        cr_assert_eq(pwrite(fd, &ph, sizeof ph, at), (ssize_t)sizeof ph);
        patched = true;
    }
    close(fd);
    if (!patched) cr_skip_test("trace_probe's library has no PT_GNU_STACK to make executable");
    const char *const dirs[] = {dir, NULL};
    void *h = amp__gpu_dlopen_first(names, dirs, why, sizeof why);
    unlink(path);
    rmdir(dir);
    if (!h && strstr(why, "executable stack"))
        cr_skip_test("this C library refuses a library that asks for an executable stack: %s", why);
    cr_assert_not_null(h, "%s", why);
    cr_assert(strstr(why, path) && strstr(why, "asks for an executable stack") && strstr(why, "AMP_GPU_DRIVERS"),
              "%s", why);
}

/* ROCm's install directories: HIP's own variables first, /opt/rocm/lib
 * last; CUDA's: CUDA_HOME's and CUDA_PATH's, then /usr/local/cuda. */
Test(vendor_load, install_directories_follow_the_vendors_variables)
{
    cr_assert_eq(setenv("ROCM_PATH", "/site/rocm-7.1", 1), 0);
    unsetenv("HIP_PATH");
    cr_assert_eq(setenv("CUDA_PATH", "/site/cuda-13", 1), 0);
    unsetenv("CUDA_HOME");
    const char *const *rocm = amp__gpu_rocm_lib_dirs(), *const *cuda = amp__gpu_cuda_lib_dirs();
    cr_assert(rocm[0] && rocm[1] && !rocm[2]);
    cr_assert_str_eq(rocm[0], "/site/rocm-7.1/lib");
    cr_assert_str_eq(rocm[1], "/opt/rocm/lib");
    cr_assert(cuda[0] && cuda[1] && cuda[2] && !cuda[3]);
    cr_assert_str_eq(cuda[0], "/site/cuda-13/lib64");
    cr_assert_str_eq(cuda[1], "/usr/local/cuda/lib64");
    cr_assert(!strncmp(cuda[2], "/usr/local/cuda/targets/", 24), "%s", cuda[2]);
}
