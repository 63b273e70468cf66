/* test_alg_device.c — the algorithms' device code for GPUs on a machine without one: every program family (every element type of the basic one, every type and every operator of the scan) generated as a GPU build would generate it and compiled with NVRTC for sm_90 (every one, and the programs accumulating in a wider type) and hipRTC for gfx90a (64-wide waves) and gfx1030 (32-wide) (a selection: each compile takes seconds), where installed; no scratch memory (spills, or a shape indexed in private memory); tile_static within 48 KiB, and on AMD a barrier instruction in every code object (their tiles span several waves); the same kernels where hipRTC's wave-size macro is undefined (the target family's wave size, gfx8 to gfx10). Linked with the library's objects (the generator is internal). */
#include "support.h"

#include "alg/alg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool target_known(const char *target)
{
    const char *list[512];
    size_t n = 0;
    if (amp_compile_targets(list, 512, &n) != AMP_OK) return false;
    if (n > 512) n = 512;
    for (size_t i = 0; i < n; ++i)
        if (!strcmp(list[i], target)) return true;
    return false;
}

/* s_barrier (SOPP, opcode 10) as stored: the same word on gfx9 and gfx10. */
static bool has_s_barrier(const void *data, size_t size)
{
    static const unsigned char word[4] = {0x00, 0x00, 0x8a, 0xbf};
    const unsigned char *p = data;
    for (size_t i = 0; i + 4 <= size; i += 4)
        if (!memcmp(p + i, word, 4)) return true;
    return false;
}

/* Compile src for target; false when the target's compiler is missing.
 * barriers: the program's kernels hold tile barriers. */
static bool compile(const char *target, const char *src, const char *what, bool barriers)
{
    if (!target_known(target)) return false;
    amp_code_object *co = NULL;
    amp_status st = amp_compile_for_target(target, src, NULL, &co);
    cr_assert_eq(st, AMP_OK, "%s for %s: %s: %.3000s", what, target, amp_status_name(st), amp_last_error());
    size_t nk = amp_code_object_kernel_count(co);
    for (size_t i = 0; i < nk; ++i) {
        amp_kernel_resources r;
        ASSERT_OK(amp_code_object_kernel_resources(co, i, &r));
        cr_assert_leq(r.lds_bytes, 48u * 1024, "%s for %s: kernel %s uses %u bytes of tile_static memory", what,
                      target, r.name, r.lds_bytes);
        cr_assert_eq(r.private_bytes, 0, "%s for %s: kernel %s spills to scratch (%u bytes an item)", what, target,
                     r.name, r.private_bytes);
    }
    if (target[0] == 'g' && barriers) {
        const void *data;
        size_t size;
        ASSERT_OK(amp_code_object_data(co, &data, &size));
        cr_assert(has_s_barrier(data, size), "%s for %s: no s_barrier in the code object", what, target);
    }
    amp_code_object_destroy(co);
    return true;
}

/* Targets a case compiles for (CI's compile time: each compile takes
 * seconds, so every type goes through NVRTC and a few through hipRTC). */
enum { SM90 = 1, GFX90A = 2, GFX1030 = 4, ALL = 7 };
typedef struct family_case {
    const char *what;
    int family;
    amp_type t;
    amp_map map;
    int op; /* scan: the operator (-1: every one); predicate: AMP__ALG_PRED_COUNT or _SELECT */
    size_t size;
    const char *predicate;
    int targets;
    amp_type acc, out; /* basic, scan: accumulator and output types (0: t) */
} family_case;

static void compile_case(const family_case *c, const amp__alg_user *u)
{
    char *src = amp__alg_source_for(true, c->family, c->t, c->map, c->op, c->size, c->predicate, u, c->acc, c->out);
    cr_assert_not_null(src);
    const char *targets[] = {"sm_90", "gfx90a", "gfx1030"};
    int done = 0;
    for (int i = 0; i < 3; ++i)
        if (c->targets & (1 << i)) done += compile(targets[i], src, c->what, c->family != AMP__ALG_FAM_FILL);
    free(src);
    if (!done) cr_skip_test("neither NVRTC nor hipRTC is installed");
}

Test(alg_device, basic_every_type)
{
    static const amp_type types[] = {AMP_TYPE_INT32, AMP_TYPE_UINT32, AMP_TYPE_INT64,
                                     AMP_TYPE_UINT64, AMP_TYPE_FLOAT32, AMP_TYPE_FLOAT64};
    for (size_t i = 0; i < 6; ++i) {
        char what[64];
        snprintf(what, sizeof what, "basic %s", amp_type_name(types[i]));
        int targets = types[i] == AMP_TYPE_FLOAT32 ? ALL : types[i] == AMP_TYPE_INT64 ? SM90 | GFX90A : SM90;
        family_case c = {what, AMP__ALG_FAM_BASIC, types[i], AMP_MAP_IDENTITY, -1, 0, NULL, targets};
        compile_case(&c, NULL);
    }
}

/* A GPU's scan program holds one operator: every type and every operator
 * once through NVRTC, 4- and 8-byte elements through hipRTC for both wave
 * sizes. */
Test(alg_device, scan_every_type_and_operator)
{
    family_case cases[] = {
        {"scan int32 sum", AMP__ALG_FAM_SCAN, AMP_TYPE_INT32, AMP_MAP_IDENTITY, AMP_OP_SUM, 0, NULL, ALL},
        {"scan uint32 or", AMP__ALG_FAM_SCAN, AMP_TYPE_UINT32, AMP_MAP_IDENTITY, AMP_OP_OR, 0, NULL, SM90},
        {"scan int64 xor", AMP__ALG_FAM_SCAN, AMP_TYPE_INT64, AMP_MAP_IDENTITY, AMP_OP_XOR, 0, NULL, SM90 | GFX90A},
        {"scan uint64 and", AMP__ALG_FAM_SCAN, AMP_TYPE_UINT64, AMP_MAP_IDENTITY, AMP_OP_AND, 0, NULL, SM90},
        {"scan float32 min", AMP__ALG_FAM_SCAN, AMP_TYPE_FLOAT32, AMP_MAP_IDENTITY, AMP_OP_MIN, 0, NULL, SM90 | GFX1030},
        {"scan float64 max", AMP__ALG_FAM_SCAN, AMP_TYPE_FLOAT64, AMP_MAP_IDENTITY, AMP_OP_MAX, 0, NULL, SM90 | GFX90A},
        {"scan int32 product", AMP__ALG_FAM_SCAN, AMP_TYPE_INT32, AMP_MAP_IDENTITY, AMP_OP_PRODUCT, 0, NULL, SM90},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) compile_case(&cases[i], NULL);
}

/* The programs that accumulate in a wider type than the elements': a
 * float32 product in float64 with a float32 result (the reduction's result
 * a parameter of its own, the scan's output narrower than its tile values),
 * and the wide accumulations amp_alg_options asks for. */
Test(alg_device, wide_accumulation)
{
    family_case cases[] = {
        {"reduce float32 product in float64", AMP__ALG_FAM_BASIC, AMP_TYPE_FLOAT32, AMP_MAP_IDENTITY, AMP_OP_PRODUCT,
         0, NULL, SM90 | GFX90A, AMP_TYPE_FLOAT64, AMP_TYPE_FLOAT32},
        {"scan float32 product in float64", AMP__ALG_FAM_SCAN, AMP_TYPE_FLOAT32, AMP_MAP_IDENTITY, AMP_OP_PRODUCT, 0,
         NULL, SM90 | GFX90A, AMP_TYPE_FLOAT64, AMP_TYPE_FLOAT32},
        {"reduce int32 in int64", AMP__ALG_FAM_BASIC, AMP_TYPE_INT32, AMP_MAP_IDENTITY, -1, 0, NULL, SM90 | GFX90A,
         AMP_TYPE_INT64, AMP_TYPE_INT64},
        {"dot float32 in float64", AMP__ALG_FAM_BASIC, AMP_TYPE_FLOAT32, AMP_MAP_PRODUCT, -1, 0, NULL, SM90,
         AMP_TYPE_FLOAT64, AMP_TYPE_FLOAT64},
        {"scan uint32 sum in uint64", AMP__ALG_FAM_SCAN, AMP_TYPE_UINT32, AMP_MAP_IDENTITY, AMP_OP_SUM, 0, NULL,
         SM90 | GFX90A, AMP_TYPE_UINT64, AMP_TYPE_UINT64},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) compile_case(&cases[i], NULL);
}

Test(alg_device, transform_maps)
{
    family_case c1 = {"dot float32", AMP__ALG_FAM_BASIC, AMP_TYPE_FLOAT32, AMP_MAP_PRODUCT, -1, 0, NULL, SM90 | GFX90A};
    compile_case(&c1, NULL);
    family_case c2 = {"abs int64", AMP__ALG_FAM_BASIC, AMP_TYPE_INT64, AMP_MAP_ABS, -1, 0, NULL, SM90};
    compile_case(&c2, NULL);
}

Test(alg_device, predicate)
{
    /* Its two programs: the count's and the compaction's. */
    family_case c = {"predicate count", AMP__ALG_FAM_PREDICATE, AMP_TYPE_FLOAT64, 0, AMP__ALG_PRED_COUNT, 0,
                     "x > arg && (i & 1) == 0", SM90 | GFX1030};
    compile_case(&c, NULL);
    family_case c2 = {"predicate compaction", AMP__ALG_FAM_PREDICATE, AMP_TYPE_FLOAT64, 0, AMP__ALG_PRED_SELECT, 0,
                      "x > arg && (i & 1) == 0", SM90 | GFX1030};
    compile_case(&c2, NULL);
}

Test(alg_device, sort)
{
    family_case cases[] = {
        {"sort uint32 keys", AMP__ALG_FAM_SORT, AMP_TYPE_UINT32, 0, -1, 0, NULL, ALL},
        {"sort float32 by key, 4-byte values", AMP__ALG_FAM_SORT, AMP_TYPE_FLOAT32, 0, -1, 4, NULL, SM90 | GFX90A},
        {"sort float64 by key, 8-byte values", AMP__ALG_FAM_SORT, AMP_TYPE_FLOAT64, 0, -1, 8, NULL, SM90},
        {"sort int64 by key, 16-byte values", AMP__ALG_FAM_SORT, AMP_TYPE_INT64, 0, -1, 16, NULL, SM90 | GFX1030},
        {"sort int32 by key, 1-byte values", AMP__ALG_FAM_SORT, AMP_TYPE_INT32, 0, -1, 1, NULL, SM90},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) compile_case(&cases[i], NULL);
}

Test(alg_device, fill)
{
    family_case c1 = {"fill 4 bytes", AMP__ALG_FAM_FILL, 0, 0, -1, 4, NULL, SM90 | GFX90A};
    compile_case(&c1, NULL);
    family_case c2 = {"fill 12 bytes", AMP__ALG_FAM_FILL, 0, 0, -1, 12, NULL, SM90};
    compile_case(&c2, NULL);
}

Test(alg_device, user_reduction)
{
    amp__alg_user u;
    memset(&u, 0, sizeof u);
    u.label = "norm";
    u.ninputs = 2;
    u.in_type[0] = AMP_TYPE_FLOAT32;
    u.in_type[1] = AMP_TYPE_FLOAT64;
    strcpy(u.in_name[0], "x");
    strcpy(u.in_name[1], "w");
    u.nscalars = 1;
    u.sc_type[0] = AMP_TYPE_FLOAT64;
    strcpy(u.sc_name[0], "scale");
    u.type = AMP_TYPE_FLOAT64;
    u.map = "w * x * x * scale";
    u.reduce = "a + b";
    u.identity = "0";
    u.post = "sqrt(a)";
    u.preamble = "__device__ double twice(double v) { return 2 * v; }";
    family_case r = {"user reduce", AMP__ALG_FAM_USER_REDUCE, AMP_TYPE_FLOAT64, 0, -1, 0, NULL, SM90 | GFX90A};
    compile_case(&r, &u);
    u.ninputs = 1;
    u.map = "twice(x)";
    u.reduce = "max(a, b)";
    u.identity = "-1e300";
    family_case s = {"user scan", AMP__ALG_FAM_USER_SCAN, AMP_TYPE_FLOAT64, 0, -1, 0, NULL, SM90 | GFX1030};
    compile_case(&s, &u);
}

/* A compiler that no longer says the wave size in a macro (LLVM 20
 * deprecated __AMDGCN_WAVEFRONT_SIZE; ROCm 7.2's compiler has none), played
 * by hipRTC with the macros undefined: the algorithms take the target
 * family's wave size, and build the same kernels as with the macro, for a
 * wave64 target of each family hipRTC knows (gfx8, gfx9) and a wave32 one
 * (gfx10). The scan's tile_static partials are one per wave, so a wrong
 * wave size shows in its size, and anywhere in the machine code. */
Test(alg_device, wave_size_without_the_compilers_macro)
{
    static const char *const targets[] = {"gfx803", "gfx90a", "gfx1030"};
    static const char *const unset = "-U__AMDGCN_WAVEFRONT_SIZE -U__AMDGCN_WAVEFRONT_SIZE__";
    static const char probe[] = "#if defined(__AMDGCN_WAVEFRONT_SIZE) || defined(__AMDGCN_WAVEFRONT_SIZE__)\n"
                                "#error the wave size macro is still defined\n#endif\n"
                                "AMP_KERNEL(k, amp::index<1> i, amp::array_view<int, 1> v) { v[i] = 1; }\n";
    char *src = amp__alg_source_for(true, AMP__ALG_FAM_SCAN, AMP_TYPE_INT32, AMP_MAP_IDENTITY, AMP_OP_SUM, 0, NULL,
                                    NULL, 0, 0);
    cr_assert_not_null(src);
    int done = 0;
    for (size_t t = 0; t < 3; ++t) {
        if (!target_known(targets[t])) continue;
        amp_code_object *with = NULL, *without = NULL, *p = NULL;
        ASSERT_OK(amp_compile_for_target(targets[t], probe, unset, &p));
        amp_code_object_destroy(p);
        ASSERT_OK(amp_compile_for_target(targets[t], src, NULL, &with));
        ASSERT_OK(amp_compile_for_target(targets[t], src, unset, &without));
        size_t n = amp_code_object_kernel_count(with);
        cr_assert_eq(amp_code_object_kernel_count(without), n);
        for (size_t k = 0; k < n; ++k) {
            amp_kernel_resources a, b;
            ASSERT_OK(amp_code_object_kernel_resources(with, k, &a));
            ASSERT_OK(amp_code_object_kernel_resources(without, k, &b));
            cr_assert_eq(a.lds_bytes, b.lds_bytes, "%s: %s: %u bytes of tile_static memory with the macro, %u without",
                         targets[t], a.name, a.lds_bytes, b.lds_bytes);
        }
        const void *da, *db;
        size_t sa, sb;
        ASSERT_OK(amp_code_object_data(with, &da, &sa));
        ASSERT_OK(amp_code_object_data(without, &db, &sb));
        cr_assert(sa == sb && !memcmp(da, db, sa), "%s: the code object without the macro differs (%zu bytes, %zu with)",
                  targets[t], sb, sa);
        amp_code_object_destroy(with);
        amp_code_object_destroy(without);
        ++done;
    }
    free(src);
    if (!done) cr_skip_test("hipRTC is not installed (or knows none of gfx803, gfx90a, gfx1030)");
}
