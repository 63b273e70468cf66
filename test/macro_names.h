/* macro_names.h — the kernels and build options of the tests that build options may define short uppercase names (test_program.c on each accelerator, test_codeobject.c for gfx90a and sm_90): options that define short names, those the GPU compilers' own headers use themselves (T, F, R, V, B, U) among them, and kernels that use the macros, plain, tiled and with the device library. */
#ifndef TEST_MACRO_NAMES_H
#define TEST_MACRO_NAMES_H

#define MACRO_NAME_OPTIONS                                                                                   \
    "-DN=4 -DI=1 -DA=2 -DH=3 -DD0=5 -DK=7 -DP=9 -DM=10 -DS=11 -DX=13 -DY=14 -DC=16 -DD=17 -DD1=18 -DD2=19 " \
    "-DE=20 -DJ=21 -DL=22 -DW=24 -DFn=25 -DKernel=26 -DMask=27 -DPosition=28 -DBytes=29 -DBody=30 -DTI=31 "  \
    "-DLoopsOnly=32 -DK_VIEW=33 -DK_ARRAY=34 -DK_INT32=35 -DT=float -DF=6 -DR=8 -DV=12 -DB=15 -DU=23"

static const char macro_names_src[] =
    "AMP_KERNEL(uses_n, amp::index<1> i, amp::array_view<int, 1> a, int k) { a[i] = a[i] * N + k + X - Y; }\n"
    "AMP_TILED_KERNEL(tiled_n, amp::tiled_index<N> t, amp::array_view<int, 1> a) {\n"
    "    tile_static int s[N];\n"
    "    s[t.local[0]] = a[t.global];\n"
    "    t.barrier.wait();\n"
    "    int2 v = make_int2(A, H);\n"
    "    a[t.global] = s[N - 1 - t.local[0]] + v.x * v.y;\n"
    "}\n"
    "AMP_KERNEL(count_n, amp::index<1> i, amp::array_view<int, 1> c) {\n"
    "    amp::atomic_fetch_add(&c[0], I + (int)((T)0 * (F + R + V + B + U)));\n"
    "}\n";

#endif
