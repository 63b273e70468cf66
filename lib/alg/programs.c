/* alg/programs.c — the algorithms' programs: their source generated from the
 * configuration (types, tile geometry, tuning knobs) and the built-in or
 * user's expressions around hip_kernels/amp_algorithms_lib.hip and the
 * kernels of hip_kernels/alg/ (one algorithm a file), built through
 * amp_program_build (so the in-memory and disk caches apply) on first use
 * per accelerator and kept in a table; compile logs of user expressions
 * led by a line naming the expression at fault. */
#include "alg.h"
#include "base/diag.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char amp__embedded_algorithms_lib[]; /* hip_kernels/amp_algorithms_lib.hip */
/* hip_kernels/alg/: the kernels, one algorithm a file, joined in this order. */
extern const char amp__embedded_alg_layout[], amp__embedded_alg_reduce[], amp__embedded_alg_fill[],
    amp__embedded_alg_scan[], amp__embedded_alg_select[], amp__embedded_alg_sort[];

static const char *const amp__alg_kernel_names[AMP__ALG_NKERNELS] = {
    "amp_alg_reduce", "amp_alg_reduce_final", "amp_alg_scan",      "amp_alg_clear",        "amp_alg_iota",
    "amp_alg_fill",   "amp_alg_select",       "amp_alg_sort_hist", "amp_alg_sort_offsets", "amp_alg_sort_pass",
};

const char *amp__alg_ctype(amp_type t)
{
    switch (t) {
    case AMP_TYPE_INT32: return "int";
    case AMP_TYPE_UINT32: return "unsigned";
    case AMP_TYPE_INT64: return "long long";
    case AMP_TYPE_UINT64: return "unsigned long long";
    case AMP_TYPE_FLOAT32: return "float";
    case AMP_TYPE_FLOAT64: return "double";
    }
    return "void";
}

static bool amp__alg_is_float(amp_type t) { return t == AMP_TYPE_FLOAT32 || t == AMP_TYPE_FLOAT64; }

/* ---------------------------------------------------------- the table */

typedef struct amp__alg_entry {
    amp_accelerator *acc;
    amp__alg_spec spec;      /* what it holds; its predicate owned, no user */
    bool building;           /* a thread is compiling it (others wait on amp__alg_cond) */
    int building_gen;        /* amp__lock_fork_gen of the builder's process */
    bool ready;
    amp__alg_prog prog;
    struct amp__alg_entry *next;
} amp__alg_entry;

/* Guards the list and the entries' state; never held while building.
 * Taken across fork() (the handlers below), so that a child finds it free
 * and the list whole; the child's condition variable is a new one (no
 * thread of the parent waits on it there). An entry a thread of the
 * parent was building at fork is built again by the child's first caller
 * (building_gen). */
static pthread_mutex_t amp__alg_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t amp__alg_cond = PTHREAD_COND_INITIALIZER;
static amp__alg_entry *amp__alg_table;

static void amp__alg_fork_prepare(void) { pthread_mutex_lock(&amp__alg_lock); }
static void amp__alg_fork_parent(void) { pthread_mutex_unlock(&amp__alg_lock); }
static void amp__alg_fork_child(void)
{
    pthread_cond_init(&amp__alg_cond, NULL);
    pthread_mutex_unlock(&amp__alg_lock);
}

__attribute__((constructor)) static void amp__alg_fork_register(void)
{
    (void)pthread_atfork(amp__alg_fork_prepare, amp__alg_fork_parent, amp__alg_fork_child);
}

/* ------------------------------------------------- generating the source */

/* A #line marker naming a user string or a generated part (quotes and
 * backslashes escaped, as lib/base/prelude.c does for file names). */
static void amp__alg_marker(amp__sb *b, int line, const char *name)
{
    amp__sb_printf(b, "\n#line %d \"", line);
    for (const char *p = name; *p; ++p) {
        if (*p == '"' || *p == '\\') amp__sb_put(b, "\\", 1);
        amp__sb_put(b, *p == '\n' ? " " : p, 1);
    }
    amp__sb_puts(b, "\"\n");
}

static int amp__alg_lines(const amp__sb *b)
{
    int n = 1;
    for (size_t i = 0; i < b->n; ++i) n += b->p[i] == '\n';
    return n;
}

#define AMP__ALG_GENERATED "<hipamp algorithms: code generated around the expressions>"

/* A user expression on lines of its own (so the compiler's line and column
 * are the string's), returning to the generated text afterwards. */
static void amp__alg_expr(amp__sb *b, const char *label, const char *what, const char *expr)
{
    char name[192];
    snprintf(name, sizeof name, "<%s: %s>", label, what);
    amp__alg_marker(b, 1, name);
    amp__sb_puts(b, expr);
    amp__alg_marker(b, amp__alg_lines(b) + 1, AMP__ALG_GENERATED);
}

/* The inputs struct, the parameter macros and the map. */
static void amp__alg_inputs(amp__sb *b, int nin, const amp_type *in_type, const char (*in_name)[64], int nsc,
                            const amp_type *sc_type, const char (*sc_name)[64])
{
    amp__sb_puts(b, "struct amp__alg_in {");
    for (int i = 0; i < nin; ++i)
        amp__sb_printf(b, " const %s *x%d; amp::alg::shape s%d;", amp__alg_ctype(in_type[i]), i, i);
    for (int i = 0; i < nsc; ++i) amp__sb_printf(b, " %s c%d;", amp__alg_ctype(sc_type[i]), i);
    amp__sb_puts(b, " };\n#define AMP_ALG_IN_PARAMS");
    for (int i = 0; i < nin; ++i)
        amp__sb_printf(b, "%s amp::array_view<const %s, 1> amp__x%d, amp::alg::shape amp__s%d", i ? "," : "",
                       amp__alg_ctype(in_type[i]), i, i);
    for (int i = 0; i < nsc; ++i) amp__sb_printf(b, ", %s amp__c%d", amp__alg_ctype(sc_type[i]), i);
    amp__sb_puts(b, "\n#define AMP_ALG_IN_MAKE {");
    for (int i = 0; i < nin; ++i) amp__sb_printf(b, "%samp__x%d.data(), amp__s%d", i ? ", " : "", i, i);
    for (int i = 0; i < nsc; ++i) amp__sb_printf(b, ", amp__c%d", i);
    amp__sb_puts(b, "}\n#define AMP_ALG_IN_CONTIG(in) (true");
    for (int i = 0; i < nin; ++i) amp__sb_printf(b, " && (in).s%d.contiguous", i);
    /* Vector loads (a GPU reduction's contiguous inputs): AMP_ALG_IN_VEC
     * elements of every input at once, 16 bytes of the widest;
     * AMP_ALG_IN_ALIGNED(in): every input's first element at a multiple of
     * its vector's size; AMP_ALG_IN_ASSUME_ALIGNED(in) tells the compiler. */
    size_t widest = 1;
    for (int i = 0; i < nin; ++i)
        if (amp_type_size(in_type[i]) > widest) widest = amp_type_size(in_type[i]);
    int vec = widest <= 16 ? (int)(16 / widest) : 1;
    amp__sb_printf(b, ")\n#define AMP_ALG_IN_VEC %d\n#define AMP_ALG_IN_ALIGNED(in) (true", vec);
    for (int i = 0; i < nin; ++i)
        amp__sb_printf(b, " && (unsigned long long)(in).x%d %% %zu == 0", i, (size_t)vec * amp_type_size(in_type[i]));
    amp__sb_puts(b, ")\n#define AMP_ALG_IN_ASSUME_ALIGNED(in) ((void)0");
    for (int i = 0; i < nin; ++i)
        amp__sb_printf(b, ", (in).x%d = (const %s *)__builtin_assume_aligned((in).x%d, %zu)", i,
                       amp__alg_ctype(in_type[i]), i, (size_t)vec * amp_type_size(in_type[i]));
    amp__sb_puts(b, ")\n");
    (void)in_name;
    (void)sc_name;
}

/* The locals a user expression sees: each input's element, each scalar
 * (in a function template over bool amp__C). Each declaration is under a
 * marker naming its parameter list (label's; NULL: the built-in names,
 * generated), its line the parameter's place in it, so that a name the
 * declaration cannot take (a macro of the device language) is reported as
 * the user's. amp is the user's to name: the library is reached as ::amp. */
static void amp__alg_locals(amp__sb *b, const char *label, int nin, const amp_type *in_type,
                            const char (*in_name)[64], int nsc, const amp_type *sc_type, const char (*sc_name)[64])
{
    char name[192];
    for (int i = 0; i < nin; ++i) {
        if (label) {
            snprintf(name, sizeof name, "<%s: inputs>", label);
            amp__alg_marker(b, i + 1, name);
        }
        amp__sb_printf(b, "    const %s %s = ::amp::alg::get<amp__C>(amp__in.x%d, amp__in.s%d, i); (void)%s;\n",
                       amp__alg_ctype(in_type[i]), in_name[i], i, i, in_name[i]);
    }
    for (int i = 0; i < nsc; ++i) {
        if (label) {
            snprintf(name, sizeof name, "<%s: scalars>", label);
            amp__alg_marker(b, i + 1, name);
        }
        amp__sb_printf(b, "    const %s %s = amp__in.c%d; (void)%s;\n", amp__alg_ctype(sc_type[i]), sc_name[i], i,
                       sc_name[i]);
    }
    if (label) amp__alg_marker(b, amp__alg_lines(b) + 1, AMP__ALG_GENERATED);
    amp__sb_puts(b, "    (void)i;\n");
}

/* Computed in the accumulator type (a wide accumulation's products and
 * differences are those of the wide values). */
static const char *amp__alg_builtin_map(amp_map m)
{
    switch (m) {
    case AMP_MAP_IDENTITY: return "(AMP_ALG_R)x";
    case AMP_MAP_ABS: return "amp::alg::absval((AMP_ALG_R)x)";
    case AMP_MAP_SQUARE: return "amp::alg::mul((AMP_ALG_R)x, (AMP_ALG_R)x)";
    case AMP_MAP_PRODUCT: return "amp::alg::mul((AMP_ALG_R)x, (AMP_ALG_R)y)";
    case AMP_MAP_SQUARED_DIFFERENCE:
        return "amp::alg::mul(amp::alg::sub((AMP_ALG_R)x, (AMP_ALG_R)y), amp::alg::sub((AMP_ALG_R)x, (AMP_ALG_R)y))";
    }
    return "(AMP_ALG_R)x";
}

/* AMP_ALG_OPS: the operators a program accepts at run time, every one of
 * type t (only, where only >= 0: an amp_op value that suits t) or the
 * user's. */
static void amp__alg_ops(amp__sb *b, amp_type t, bool user, int only)
{
    /* amp_op's numbers (hipamp.h), as amp::alg's OP_ constants. */
    static const struct { int op; const char *name; bool integral; } ops[] = {
        {AMP_OP_SUM, "op_sum", false}, {AMP_OP_PRODUCT, "op_product", false}, {AMP_OP_MIN, "op_min", false},
        {AMP_OP_MAX, "op_max", false}, {AMP_OP_AND, "op_and", true},         {AMP_OP_OR, "op_or", true},
        {AMP_OP_XOR, "op_xor", true},
    };
    amp__sb_puts(b, "#define AMP_ALG_OPS(X)");
    if (user) {
        amp__sb_puts(b, " X(100, amp::alg::op_user)\n");
        return;
    }
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; ++i)
        if ((only < 0 || ops[i].op == only) && (!ops[i].integral || !amp__alg_is_float(t)))
            amp__sb_printf(b, " X(%d, amp::alg::%s)", ops[i].op, ops[i].name);
    amp__sb_puts(b, "\n");
}

static const char *amp__alg_word(size_t size)
{
    switch (size) {
    case 1: return "unsigned char";
    case 2: return "unsigned short";
    case 4: return "unsigned";
    case 8: return "unsigned long long";
    case 16: return "amp::alg::word16";
    }
    return NULL;
}

/* The kernels sp's program holds (bits 1 << AMP__ALG_K_...). Its
 * AMP_ALG_WITH_* macros are made from them, and the build looks up exactly
 * these: no lookup of a kernel that is not there, whose failure would
 * leave its message as the caller's last error after a success. */
static unsigned amp__alg_kernels(const amp__alg_spec *sp)
{
#define AMP__K(x) (1u << AMP__ALG_K_##x)
    switch (sp->family) {
    case AMP__ALG_FAM_BASIC:
        /* iota in the narrow programs only (a wide one's results are not its type's) */
        return AMP__K(REDUCE) | AMP__K(REDUCE_FINAL) |
               (sp->map == AMP_MAP_IDENTITY && amp__alg_acc_type(sp) == sp->type ? AMP__K(IOTA) : 0u);
    case AMP__ALG_FAM_SCAN:
    case AMP__ALG_FAM_USER_SCAN: return AMP__K(SCAN) | AMP__K(CLEAR);
    case AMP__ALG_FAM_PREDICATE:
        return sp->op == AMP__ALG_PRED_SELECT ? AMP__K(SELECT) | AMP__K(CLEAR) : AMP__K(REDUCE) | AMP__K(REDUCE_FINAL);
    case AMP__ALG_FAM_SORT: return AMP__K(SORT_HIST) | AMP__K(SORT_OFFSETS) | AMP__K(SORT_PASS) | AMP__K(CLEAR);
    case AMP__ALG_FAM_FILL: return AMP__K(FILL);
    case AMP__ALG_FAM_USER_REDUCE: return AMP__K(REDUCE) | AMP__K(REDUCE_FINAL);
    }
    return 0;
#undef AMP__K
}

static void amp__alg_config(amp__sb *b, const amp__alg_spec *sp, const amp__alg_prog *g)
{
    amp__alg_marker(b, 1, "<hipamp algorithms: configuration>");
    amp__sb_printf(b, "#define AMP_ALG_TILE %d\n#define AMP_ALG_REDUCE_ITEMS %d\n#define AMP_ALG_SCAN_ITEMS %d\n"
                      "#define AMP_ALG_REDUCE_VECTOR %d\n#define AMP_ALG_SCAN_GUESS %d\n",
                   g->tile, g->reduce_items, g->scan_items, g->reduce_vector, g->scan_guess);
    unsigned k = amp__alg_kernels(sp);
    amp__sb_printf(b, "#define AMP_ALG_WITH_REDUCE %d\n#define AMP_ALG_WITH_SCAN %d\n#define AMP_ALG_WITH_SELECT %d\n"
                      "#define AMP_ALG_WITH_IOTA %d\n#define AMP_ALG_WITH_FILL %d\n#define AMP_ALG_WITH_SORT %d\n"
                      "#define AMP_ALG_WITH_CLEAR %d\n",
                   !!(k & (1u << AMP__ALG_K_REDUCE)), !!(k & (1u << AMP__ALG_K_SCAN)),
                   !!(k & (1u << AMP__ALG_K_SELECT)), !!(k & (1u << AMP__ALG_K_IOTA)), !!(k & (1u << AMP__ALG_K_FILL)),
                   !!(k & (1u << AMP__ALG_K_SORT_PASS)), !!(k & (1u << AMP__ALG_K_CLEAR)));
    switch (sp->family) {
    case AMP__ALG_FAM_BASIC:
    case AMP__ALG_FAM_SCAN: {
        amp_type r = amp__alg_acc_type(sp), o = amp__alg_out_type(sp);
        amp__sb_printf(b, "#define AMP_ALG_T %s\n#define AMP_ALG_R %s\n", amp__alg_ctype(sp->type), amp__alg_ctype(r));
        if (o != r) amp__sb_printf(b, "#define AMP_ALG_O %s\n#define AMP_ALG_SPLIT_OUT 1\n", amp__alg_ctype(o));
        amp__alg_ops(b, sp->type, false, sp->op);
        break;
    }
    case AMP__ALG_FAM_PREDICATE:
        amp__sb_printf(b, "#define AMP_ALG_T %s\n#define AMP_ALG_R unsigned long long\n", amp__alg_ctype(sp->type));
        amp__sb_puts(b, "#define AMP_ALG_OPS(X) X(0, amp::alg::op_sum)\n");
        break;
    case AMP__ALG_FAM_SORT: {
        bool wide = amp_type_size(sp->type) == 8;
        amp__sb_printf(b, "#define AMP_ALG_R unsigned long long\n#define AMP_ALG_K %s\n#define AMP_ALG_KU %s\n"
                          "#define AMP_ALG_SORT_ITEMS %d\n#define AMP_ALG_RADIX_BITS %d\n#define AMP_ALG_PASSES %d\n"
                          "#define AMP_ALG_SORT_VALUES %d\n"
                          "#define AMP_ALG_SORT_MIN_TILES %d\n",
                       amp__alg_ctype(sp->type), wide ? "unsigned long long" : "unsigned", g->sort_items,
                       g->radix_bits, g->passes, sp->size > 0, g->sort_min_tiles > 1 ? g->sort_min_tiles : 0);
        if (sp->size) amp__sb_printf(b, "#define AMP_ALG_V %s\n", amp__alg_word(sp->size));
        break;
    }
    case AMP__ALG_FAM_FILL:
        amp__sb_puts(b, "#define AMP_ALG_R unsigned long long\n");
        if (amp__alg_word(sp->size)) amp__sb_printf(b, "#define AMP_ALG_E %s\n", amp__alg_word(sp->size));
        else amp__sb_printf(b, "struct amp__alg_elem { unsigned char b[%zu]; };\n#define AMP_ALG_E amp__alg_elem\n", sp->size);
        break;
    case AMP__ALG_FAM_USER_REDUCE:
    case AMP__ALG_FAM_USER_SCAN:
        amp__sb_printf(b, "#define AMP_ALG_R %s\n#define AMP_ALG_USER 1\n", amp__alg_ctype(sp->user->type));
        amp__alg_ops(b, sp->user->type, true, -1);
        break;
    }
}

/* The whole source of a program. */
static char *amp__alg_source(const amp__alg_spec *sp, const amp__alg_prog *g)
{
    amp__sb b = {0};
    amp__alg_config(&b, sp, g);
    amp__alg_marker(&b, 1, "amp_algorithms_lib.hip");
    amp__sb_puts(&b, amp__embedded_algorithms_lib);
    amp__alg_marker(&b, amp__alg_lines(&b) + 1, AMP__ALG_GENERATED);
    static const char names[2][64] = {"x", "y"};
    amp_type types[2] = {sp->type, sp->type};
    switch (sp->family) {
    case AMP__ALG_FAM_BASIC:
    case AMP__ALG_FAM_SCAN: {
        int nin = sp->map == AMP_MAP_PRODUCT || sp->map == AMP_MAP_SQUARED_DIFFERENCE ? 2 : 1;
        amp__alg_inputs(&b, nin, types, names, 0, NULL, NULL);
        amp__sb_puts(&b, "template <bool amp__C> AMP_FI AMP_ALG_R amp__alg_map(const amp__alg_in &amp__in, long long i) {\n");
        amp__alg_locals(&b, NULL, nin, types, names, 0, NULL, NULL);
        amp__sb_printf(&b, "    return %s;\n}\nAMP_FI AMP_ALG_R amp__alg_post(AMP_ALG_R a) { return a; }\n",
                       amp__alg_builtin_map(sp->map));
        break;
    }
    case AMP__ALG_FAM_PREDICATE: {
        static const char argname[1][64] = {"arg"};
        amp__alg_inputs(&b, 1, types, names, 1, types, argname);
        amp__sb_printf(&b, "AMP_FI bool amp__alg_pred(const %s x, long long i, const amp__alg_in &amp__in) {\n"
                           "    const %s arg = amp__in.c0; (void)arg; (void)x; (void)i;\n    return (bool)(",
                       amp__alg_ctype(sp->type), amp__alg_ctype(sp->type));
        amp__alg_expr(&b, "predicate", "predicate", sp->predicate);
        amp__sb_printf(&b, ");\n}\ntemplate <bool C, bool Call = !C> AMP_FI %s amp__alg_elem(const amp__alg_in &amp__in, "
                           "long long i) { return amp::alg::get<C, Call>(amp__in.x0, amp__in.s0, i); }\n"
                           "template <bool C> AMP_FI AMP_ALG_R amp__alg_map(const amp__alg_in &amp__in, long long i) "
                           "{ return amp__alg_pred(amp__alg_elem<C>(amp__in, i), i, amp__in) ? 1ull : 0ull; }\n"
                           "AMP_FI AMP_ALG_R amp__alg_post(AMP_ALG_R a) { return a; }\n",
                       amp__alg_ctype(sp->type));
        break;
    }
    case AMP__ALG_FAM_USER_REDUCE:
    case AMP__ALG_FAM_USER_SCAN: {
        const amp__alg_user *u = sp->user;
        amp__alg_inputs(&b, u->ninputs, u->in_type, u->in_name, u->nscalars, u->sc_type, u->sc_name);
        if (u->preamble) {
            /* The preamble must end at file scope, which its lexical check
             * cannot see through a macro (glibc's __BEGIN_DECLS opens an
             * extern "C" block, libstdc++'s _GLIBCXX_BEGIN_NAMESPACE_CXX11 a
             * namespace) or a declaration left unfinished ("int x =",
             * "template <class T>"). Lines of its own, under its marker,
             * fail there where it does not: a template (not in extern "C",
             * not after a template head or an open declaration) and a
             * function redeclared, which is ::'s only at file scope. */
            char name[192];
            snprintf(name, sizeof name, "<%s: preamble>", u->label);
            amp__sb_puts(&b, "__host__ __device__ void amp__alg_scope_mark();");
            amp__alg_marker(&b, 1, name);
            amp__sb_puts(&b, u->preamble);
            amp__sb_puts(&b, "\ntemplate <int> struct amp__alg_preamble_end;\n__host__ __device__ void amp__alg_scope_mark();\n"
                             "static_assert(&amp__alg_scope_mark == &::amp__alg_scope_mark, \"the preamble ends inside a "
                             "namespace, an extern \\\"C\\\" block or a declaration\");");
            amp__alg_marker(&b, amp__alg_lines(&b) + 1, AMP__ALG_GENERATED);
            amp__sb_puts(&b, "\n");
        }
        amp__sb_puts(&b, "template <bool amp__C> AMP_FI AMP_ALG_R amp__alg_map(const amp__alg_in &amp__in, long long i) {\n");
        amp__alg_locals(&b, u->label, u->ninputs, u->in_type, u->in_name, u->nscalars, u->sc_type, u->sc_name);
        amp__sb_puts(&b, "    return (AMP_ALG_R)(");
        amp__alg_expr(&b, u->label, "map expression", u->map);
        /* reduce and identity are compiled at file scope, as every other
         * string: in a body of namespace amp::alg the library's names
         * would hide the preamble's. */
        amp__sb_puts(&b, ");\n}\nAMP_FI AMP_ALG_R amp__alg_reduce_expr(AMP_ALG_R a, AMP_ALG_R b) {\n"
                         "    (void)a; (void)b;\n    return (AMP_ALG_R)(");
        amp__alg_expr(&b, u->label, "reduce expression", u->reduce);
        amp__sb_puts(&b, ");\n}\nAMP_FI AMP_ALG_R amp__alg_identity_expr() {\n    return (AMP_ALG_R)(");
        amp__alg_expr(&b, u->label, "identity", u->identity);
        amp__sb_puts(&b, ");\n}\nAMP_FI AMP_ALG_R amp__alg_post(AMP_ALG_R a) {\n    (void)a;\n    return (AMP_ALG_R)(");
        amp__alg_expr(&b, u->label, "post expression", u->post ? u->post : "a");
        amp__sb_puts(&b, ");\n}\nAMP_FI AMP_ALG_R amp::alg::amp__alg_user_reduce(AMP_ALG_R a, AMP_ALG_R b) "
                         "{ return amp__alg_reduce_expr(a, b); }\n"
                         "AMP_FI AMP_ALG_R amp::alg::amp__alg_user_identity() { return amp__alg_identity_expr(); }\n");
        break;
    }
    default: break;
    }
    static const struct {
        const char *name, *text;
    } kernels[] = {{"alg/layout.hip", amp__embedded_alg_layout}, {"alg/reduce.hip", amp__embedded_alg_reduce},
                   {"alg/fill.hip", amp__embedded_alg_fill},     {"alg/scan.hip", amp__embedded_alg_scan},
                   {"alg/select.hip", amp__embedded_alg_select}, {"alg/sort.hip", amp__embedded_alg_sort}};
    for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; ++i) {
        amp__alg_marker(&b, 1, kernels[i].name);
        amp__sb_puts(&b, kernels[i].text);
    }
    if (b.oom) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

/* For test/test_alg_device.c: the source of a program as it would be built
 * for a GPU (gpu) or the CPU accelerator, with the default tuning. */
char *amp__alg_source_for(bool gpu, int family, amp_type t, amp_map map, int op, size_t size, const char *predicate,
                          const amp__alg_user *user, amp_type acc, amp_type out)
{
    amp_accelerator fake;
    memset(&fake, 0, sizeof fake);
    fake.e.info.is_emulated = !gpu;
    fake.e.info.compute_units = gpu ? 132 : 2;
    /* The largest GPU geometry (amp__alg_items), whatever the target
     * the caller compiles for: its tile_static use is the one to check. */
    snprintf(fake.e.info.arch, sizeof fake.e.info.arch, "%s", gpu ? "sm_90" : "x86_64");
    amp__alg_spec sp = {.family = family, .type = t, .map = map, .op = op, .size = size, .predicate = predicate,
                        .user = user, .acc = acc, .out = out};
    amp__alg_prog g;
    memset(&g, 0, sizeof g);
    amp__alg_geometry(&fake, &sp, &g);
    return amp__alg_source(&sp, &g);
}

/* --------------------------------------------------------------- building */

/* After a failed build whose source holds user strings: put a line first
 * that says which string the first error is in (its marker's name), or
 * that it is in the code around them. */
static amp_status amp__alg_explain(amp_status st, const char *what)
{
    if (st != AMP_ERROR_COMPILE) return st;
    const char *log = amp_last_error();
    size_t elen;
    const char *err = amp__diag_first_error(log, &elen);
    char *copy = amp__strdup(log);
    if (!copy) return st;
    /* The message is written over the log: quote the copy. */
    if (err) err = copy + (err - log);
    char where[256] = "";
    if (err && err[0] == '<') {
        const char *end = strchr(err, '>');
        if (end && end - err < (long)sizeof where) snprintf(where, sizeof where, "%.*s", (int)(end - err + 1), err);
    }
    size_t wlen = strlen(where);
    bool params = (wlen > 9 && !strcmp(where + wlen - 9, ": inputs>")) ||
                  (wlen > 10 && !strcmp(where + wlen - 10, ": scalars>"));
    if (params)
        amp__fail(st, "%s does not compile: the first error is in %s, the declaration hipamp makes of a parameter "
                  "named there (line n: the n-th), which the name does not fit (a macro of the device language?):\n"
                  "  %.*s\n(the compiler's log follows)\n%s", what, where, (int)elen, err, copy);
    else if (where[0] && strcmp(where, AMP__ALG_GENERATED) != 0)
        amp__fail(st, "%s does not compile: the first error is in %s:\n  %.*s\n(the compiler's log follows; lines "
                  "and columns in <...> are those of that string)\n%s", what, where, (int)elen, err, copy);
    else if (!err)
        /* No diagnostic to place (a compile stopped by AMP_COMPILE_TIMEOUT,
         * a compiler that did not start): nothing to blame, the log says. */
        amp__fail(st, "%s could not be compiled:\n%s", what, copy);
    else
        amp__fail(st, "%s does not compile: the first error is in the code hipamp generated around the expressions "
                  "(%s), most likely from a type the expressions give that does not fit:\n  %.*s\n(the compiler's "
                  "log follows)\n%s", what, where[0] ? where : "hip_kernels/alg/*.hip", (int)elen, err ? err : "",
                  copy);
    free(copy);
    return st;
}

static amp_status amp__alg_build(amp_accelerator *acc, const amp__alg_spec *sp, const char *what, amp__alg_prog *g)
{
    memset(g, 0, sizeof *g);
    amp__alg_geometry(acc, sp, g);
    switch (sp->family) {
    case AMP__ALG_FAM_BASIC:
    case AMP__ALG_FAM_SCAN: g->rtype = amp__alg_acc_type(sp); break;
    case AMP__ALG_FAM_USER_REDUCE:
    case AMP__ALG_FAM_USER_SCAN: g->rtype = sp->user->type; break;
    default: g->rtype = AMP_TYPE_UINT64; break; /* counts */
    }
    g->rsize = amp_type_size(g->rtype);
    bool typed = sp->family == AMP__ALG_FAM_BASIC || sp->family == AMP__ALG_FAM_SCAN;
    g->osize = typed ? amp_type_size(amp__alg_out_type(sp)) : g->rsize;
    g->split_out = typed && amp__alg_out_type(sp) != g->rtype;
    char *src = amp__alg_source(sp, g);
    if (!src) return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "%s: no memory for the program's source", what);
    /* The built-in families' programs may come from a pack; a predicate's
     * or a user reduction's never does (their strings are the user's). */
    bool builtin = !sp->predicate && !sp->user;
    amp_status st = builtin ? amp__program_build_builtin(acc, src, &g->p) : amp_program_build(acc, src, NULL, &g->p);
    free(src);
    if (st != AMP_OK) {
        if (sp->predicate || sp->user) return amp__alg_explain(st, what);
        return st;
    }
    unsigned want = amp__alg_kernels(sp);
    for (int k = 0; k < AMP__ALG_NKERNELS; ++k) {
        if (!(want & (1u << k))) continue;
        amp_status ks = amp_program_get_kernel(g->p, amp__alg_kernel_names[k], &g->k[k]);
        if (ks != AMP_OK) {
            amp_program_destroy(g->p);
            g->p = NULL;
            return ks;
        }
    }
    return AMP_OK;
}

void amp__alg_prog_release(amp__alg_prog *p)
{
    if (p && p->p) amp_program_destroy(p->p);
    if (p) memset(p, 0, sizeof *p);
}

int amp__alg_prog_graphs(const amp__alg_prog *p)
{
    int n = 0;
    for (int i = 0; p->p && i < AMP__ALG_NKERNELS; ++i) {
        amp__kernel *k = NULL;
        if (p->k[i] && amp__kernel_resolve(p->k[i], &k) == AMP_OK) n += amp__graph_uses(k);
    }
    return n;
}

amp_status amp__alg_build_user(amp_accelerator *acc, const amp__alg_user *u, bool scan, amp__alg_prog *out)
{
    amp__alg_spec sp = {.family = scan ? AMP__ALG_FAM_USER_SCAN : AMP__ALG_FAM_USER_REDUCE, .type = u->type, .user = u};
    /* The reduce program is built by amp_reduction_create, the scan program
     * by the first amp_reduction_scan. */
    const char *fn = scan ? "amp_reduction_scan" : "amp_reduction_create";
    memset(out, 0, sizeof *out);
    amp_status st = amp__alg_check_user(fn, u);
    if (st != AMP_OK) return st;
    char what[160];
    snprintf(what, sizeof what, "%s: reduction '%s'%s", fn, u->label, scan ? " (its scan)" : "");
    return amp__alg_build(acc, &sp, what, out);
}

static bool amp__alg_match(const amp__alg_entry *e, amp_accelerator *acc, const amp__alg_spec *sp)
{
    const amp__alg_spec *k = &e->spec;
    return e->acc == acc && k->family == sp->family && k->type == sp->type && k->map == sp->map &&
           k->op == sp->op && k->size == sp->size && k->acc == sp->acc && k->out == sp->out &&
           (!sp->predicate || !strcmp(k->predicate, sp->predicate));
}

/* The program for sp on acc, built by the first caller; others wait for it.
 * A failed build is not kept: the next call tries again. */
static amp_status amp__alg_get(amp_accelerator *acc, const amp__alg_spec *sp, const char *what,
                               const amp__alg_prog **out)
{
    amp_status st = AMP_OK;
    *out = NULL;
    if (!acc->e.info.is_available)
        return amp__fail(AMP_ERROR_UNSUPPORTED, "%s: accelerator %s cannot build programs: %s", what,
                         acc->e.info.device_path, acc->e.info.unavailable_reason);
    pthread_mutex_lock(&amp__alg_lock);
    amp__alg_entry *e;
    for (;;) {
        for (e = amp__alg_table; e; e = e->next)
            if (amp__alg_match(e, acc, sp)) break;
        if (!e || !e->building) break;
        /* Its builder is a thread of the parent the fork left behind: this
         * process builds it. */
        if (e->building_gen != atomic_load_explicit(&amp__lock_fork_gen, memory_order_relaxed)) break;
        pthread_cond_wait(&amp__alg_cond, &amp__alg_lock);
    }
    if (e && e->ready) {
        pthread_mutex_unlock(&amp__alg_lock);
        *out = &e->prog;
        return AMP_OK;
    }
    if (!e) {
        char *pred = NULL;
        if (!(e = calloc(1, sizeof *e)) || (sp->predicate && !(pred = amp__strdup(sp->predicate)))) {
            free(e);
            pthread_mutex_unlock(&amp__alg_lock);
            return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "%s: out of host memory", what);
        }
        e->acc = acc;
        e->spec = *sp;
        e->spec.predicate = pred;
        e->spec.user = NULL;
        e->next = amp__alg_table;
        amp__alg_table = e;
    }
    e->building = true;
    e->building_gen = atomic_load_explicit(&amp__lock_fork_gen, memory_order_relaxed);
    pthread_mutex_unlock(&amp__alg_lock);

    amp__alg_prog g;
    st = amp__alg_build(acc, sp, what, &g);

    pthread_mutex_lock(&amp__alg_lock);
    e->building = false;
    if (st == AMP_OK) {
        e->prog = g;
        e->ready = true;
        *out = &e->prog;
    } else {
        /* Not kept: a process that tries many predicates that do not
         * compile does not grow. A waiter holds no pointer to e across its
         * wait (it looks the table up again), and a ready entry is never
         * removed (callers hold &e->prog). */
        amp__alg_entry **at = &amp__alg_table;
        while (*at != e) at = &(*at)->next;
        *at = e->next;
        free((char *)e->spec.predicate);
        free(e);
    }
    pthread_cond_broadcast(&amp__alg_cond);
    pthread_mutex_unlock(&amp__alg_lock);
    return st;
}

/* The specs the getters below ask for: one place, so that the list of
 * every built-in program (amp__alg_builtin_specs) is exactly what the
 * algorithms ask for. emulated: the CPU accelerator. */
static amp__alg_spec amp__alg_spec_basic(amp_type t, amp_map map, int op, amp_type r, amp_type o)
{
    if (r == t && o == t) return (amp__alg_spec){.family = AMP__ALG_FAM_BASIC, .type = t, .map = map, .op = -1};
    return (amp__alg_spec){.family = AMP__ALG_FAM_BASIC, .type = t, .map = map, .op = op, .acc = r, .out = o};
}

static amp__alg_spec amp__alg_spec_scan(bool emulated, amp_type t, amp_op op, amp_type r, amp_type o)
{
    /* A GPU scan program holds one operator: its helpers are unrolled over
     * a thread's 32 or 64 items once for each operator the program takes.
     * With all seven, NVRTC took 38 s over the int32 scan for sm_90 (1.7 MB
     * of cubin) and hipRTC 24 s for gfx90a, with the sum alone 5 to 8 s
     * (bench_alg_compile on a 2-core machine like CI's), and every first
     * reduction of a type waited for it, the scan then being part of the
     * reduction's program. On the CPU accelerator a program's compile is
     * mostly fixed cost (its loops are not unrolled): 1.4 s for the int32
     * scan with one operator, 1.5 s with all seven (float32: 1.7 and 2.5 s
     * with four), so there one program serves every operator, except where
     * the output is narrower than the accumulator (a float32 product: only
     * that operator needs it), as on a GPU. */
    if (r == t && o == t) return (amp__alg_spec){.family = AMP__ALG_FAM_SCAN, .type = t, .op = emulated ? -1 : (int)op};
    return (amp__alg_spec){.family = AMP__ALG_FAM_SCAN, .type = t, .op = emulated && o == r ? -1 : (int)op, .acc = r,
                           .out = o};
}

amp_status amp__alg_basic(amp_accelerator *acc, amp_type t, amp_map map, const amp__alg_prog **out)
{
    amp__alg_spec sp = amp__alg_spec_basic(t, map, -1, t, t);
    char what[96];
    snprintf(what, sizeof what, "the %s algorithms", amp_type_name(t));
    return amp__alg_get(acc, &sp, what, out);
}

amp_status amp__alg_basic_wide(amp_accelerator *acc, amp_type t, amp_map map, int op, amp_type r, amp_type o,
                               const amp__alg_prog **out)
{
    if (r == t && o == t) return amp__alg_basic(acc, t, map, out);
    amp__alg_spec sp = amp__alg_spec_basic(t, map, op, r, o);
    char what[128];
    snprintf(what, sizeof what, "the %s reductions in %s", amp_type_name(t), amp_type_name(r));
    return amp__alg_get(acc, &sp, what, out);
}

amp_status amp__alg_scanner(amp_accelerator *acc, amp_type t, amp_op op, const amp__alg_prog **out)
{
    amp__alg_spec sp = amp__alg_spec_scan(acc->e.info.is_emulated, t, op, t, t);
    char what[96];
    snprintf(what, sizeof what, "the %s scan", amp_type_name(t));
    return amp__alg_get(acc, &sp, what, out);
}

amp_status amp__alg_scanner_wide(amp_accelerator *acc, amp_type t, amp_op op, amp_type r, amp_type o,
                                 const amp__alg_prog **out)
{
    if (r == t && o == t) return amp__alg_scanner(acc, t, op, out);
    amp__alg_spec sp = amp__alg_spec_scan(acc->e.info.is_emulated, t, op, r, o);
    char what[128];
    snprintf(what, sizeof what, "the %s scan in %s", amp_type_name(t), amp_type_name(r));
    return amp__alg_get(acc, &sp, what, out);
}

amp_status amp__alg_predicate(const char *fn, amp_accelerator *acc, amp_type t, const char *predicate, int part,
                              const amp__alg_prog **out)
{
    amp__alg_spec sp = {.family = AMP__ALG_FAM_PREDICATE, .type = t, .op = part, .predicate = predicate};
    *out = NULL;
    amp_status st = amp__alg_check_text(fn, "predicate", predicate, true);
    if (st != AMP_OK) return st;
    char quoted[300], what[400];
    amp__alg_quote(quoted, sizeof quoted, predicate, 200);
    snprintf(what, sizeof what, "%s: predicate \"%s\" (on %s)", fn, quoted, amp_type_name(t));
    return amp__alg_get(acc, &sp, what, out);
}

amp_status amp__alg_sorter(amp_accelerator *acc, amp_type t, size_t vsize, const amp__alg_prog **out)
{
    amp__alg_spec sp = {.family = AMP__ALG_FAM_SORT, .type = t, .size = vsize};
    char what[96];
    snprintf(what, sizeof what, "the %s sort", amp_type_name(t));
    return amp__alg_get(acc, &sp, what, out);
}

amp_status amp__alg_filler(amp_accelerator *acc, size_t elem, const amp__alg_prog **out)
{
    amp__alg_spec sp = {.family = AMP__ALG_FAM_FILL, .size = elem};
    return amp__alg_get(acc, &sp, "amp_fill", out);
}

/* ----------------------------------------- every built-in program (packs) */

/* Value sizes amp_sort_by_key moves (lib/alg/sort.c) and element sizes
 * whose fill programs are built ahead (others, up to 64 bytes, are built
 * on first use): the scalar types, pairs and triples of them, short
 * vectors. */
static const size_t amp__alg_sort_values[] = {0, 1, 2, 4, 8, 16};
static const size_t amp__alg_fill_sizes[] = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64};

static bool amp__alg_same_spec(const amp__alg_spec *a, const amp__alg_spec *b)
{
    return a->family == b->family && a->type == b->type && a->map == b->map && a->op == b->op && a->size == b->size &&
           a->acc == b->acc && a->out == b->out;
}

static void amp__alg_add(amp__alg_spec *list, size_t cap, size_t *n, amp__alg_spec sp)
{
    for (size_t i = 0; i < *n && i < cap; ++i)
        if (amp__alg_same_spec(&list[i], &sp)) return;
    if (*n < cap) list[*n] = sp;
    ++*n;
}

/* Every built-in program the algorithms can ask for on a GPU or (emulated)
 * the CPU accelerator, in a fixed order, into list[0..cap); returns how
 * many there are. Predicates and user reductions are not among them. */
static size_t amp__alg_builtin_specs(bool emulated, amp__alg_spec *list, size_t cap)
{
    static const amp_type types[] = {AMP_TYPE_INT32,   AMP_TYPE_UINT32,  AMP_TYPE_INT64,
                                     AMP_TYPE_UINT64,  AMP_TYPE_FLOAT32, AMP_TYPE_FLOAT64};
    static const struct { amp_type t, r; } wide[] = {
        {AMP_TYPE_INT32, AMP_TYPE_INT64}, {AMP_TYPE_UINT32, AMP_TYPE_UINT64}, {AMP_TYPE_FLOAT32, AMP_TYPE_FLOAT64}};
    static const amp_op ops[] = {AMP_OP_SUM, AMP_OP_PRODUCT, AMP_OP_MIN, AMP_OP_MAX, AMP_OP_AND, AMP_OP_OR, AMP_OP_XOR};
    const int nt = (int)(sizeof types / sizeof types[0]), nw = (int)(sizeof wide / sizeof wide[0]);
    size_t n = 0;
    for (int i = 0; i < nt; ++i)
        for (int m = AMP_MAP_IDENTITY; m <= AMP_MAP_SQUARED_DIFFERENCE; ++m)
            amp__alg_add(list, cap, &n, amp__alg_spec_basic(types[i], (amp_map)m, -1, types[i], types[i]));
    for (int i = 0; i < nw; ++i)
        for (int m = AMP_MAP_IDENTITY; m <= AMP_MAP_SQUARED_DIFFERENCE; ++m)
            amp__alg_add(list, cap, &n, amp__alg_spec_basic(wide[i].t, (amp_map)m, -1, wide[i].r, wide[i].r));
    for (int m = AMP_MAP_IDENTITY; m <= AMP_MAP_SQUARED_DIFFERENCE; ++m)
        amp__alg_add(list, cap, &n,
                     amp__alg_spec_basic(AMP_TYPE_FLOAT32, (amp_map)m, AMP_OP_PRODUCT, AMP_TYPE_FLOAT64, AMP_TYPE_FLOAT32));
    for (int i = 0; i < nt; ++i)
        for (size_t k = 0; k < sizeof ops / sizeof ops[0]; ++k)
            if (!amp__alg_is_float(types[i]) || ops[k] <= AMP_OP_MAX)
                amp__alg_add(list, cap, &n, amp__alg_spec_scan(emulated, types[i], ops[k], types[i], types[i]));
    for (int i = 0; i < nw; ++i)
        for (size_t k = 0; k < sizeof ops / sizeof ops[0]; ++k)
            if (!amp__alg_is_float(wide[i].t) || ops[k] <= AMP_OP_MAX)
                amp__alg_add(list, cap, &n, amp__alg_spec_scan(emulated, wide[i].t, ops[k], wide[i].r, wide[i].r));
    amp__alg_add(list, cap, &n,
                 amp__alg_spec_scan(emulated, AMP_TYPE_FLOAT32, AMP_OP_PRODUCT, AMP_TYPE_FLOAT64, AMP_TYPE_FLOAT32));
    for (int i = 0; i < nt; ++i)
        for (size_t v = 0; v < sizeof amp__alg_sort_values / sizeof amp__alg_sort_values[0]; ++v)
            amp__alg_add(list, cap, &n,
                         (amp__alg_spec){.family = AMP__ALG_FAM_SORT, .type = types[i], .size = amp__alg_sort_values[v]});
    for (size_t e = 0; e < sizeof amp__alg_fill_sizes / sizeof amp__alg_fill_sizes[0]; ++e)
        amp__alg_add(list, cap, &n, (amp__alg_spec){.family = AMP__ALG_FAM_FILL, .size = amp__alg_fill_sizes[e]});
    return n;
}

#define AMP__ALG_MAX_BUILTIN 256

/* A name for a built-in program in messages ("the int32 scan (AMP_OP_MIN)"). */
static void amp__alg_spec_name(const amp__alg_spec *sp, char *buf, size_t size)
{
    static const char *const fam[] = {"reductions", "predicate", "sort", "fill", "user reduction", "user scan", "scan"};
    if (sp->family == AMP__ALG_FAM_FILL) {
        snprintf(buf, size, "the fill of %zu-byte elements", sp->size);
        return;
    }
    int k = snprintf(buf, size, "the %s %s", amp_type_name(sp->type), fam[sp->family]);
    if (sp->family == AMP__ALG_FAM_BASIC && k > 0 && (size_t)k < size)
        k += snprintf(buf + k, size - (size_t)k, " (map %d)", (int)sp->map);
    if (sp->op >= 0 && sp->family != AMP__ALG_FAM_SORT && k > 0 && (size_t)k < size)
        k += snprintf(buf + k, size - (size_t)k, " (%s)", amp_op_name((amp_op)sp->op));
    if (sp->acc && k > 0 && (size_t)k < size) k += snprintf(buf + k, size - (size_t)k, " in %s", amp_type_name(sp->acc));
    if (sp->family == AMP__ALG_FAM_SORT && sp->size && k > 0 && (size_t)k < size)
        snprintf(buf + k, size - (size_t)k, " with %zu-byte values", sp->size);
}

/* Whether what holds one of only's strings (only NULL: everything). */
static bool amp__alg_wanted(const char *what, const char *const *only)
{
    if (!only) return true;
    for (; *only; ++only)
        if (strstr(what, *only)) return true;
    return false;
}

amp_status amp__alg_prepare(amp_accelerator *acc, size_t first, size_t stride, const char *const *only, size_t *count)
{
    amp__alg_spec list[AMP__ALG_MAX_BUILTIN];
    size_t n = amp__alg_builtin_specs(acc->e.info.is_emulated, list, AMP__ALG_MAX_BUILTIN);
    if (count) *count = n;
    if (n > AMP__ALG_MAX_BUILTIN)
        return amp__fail(AMP_ERROR_UNSUPPORTED, "%zu built-in programs, more than the %d listed", n, AMP__ALG_MAX_BUILTIN);
    for (size_t i = first; i < n; i += stride ? stride : 1) {
        char what[160];
        amp__alg_spec_name(&list[i], what, sizeof what);
        if (!amp__alg_wanted(what, only)) continue;
        const amp__alg_prog *p;
        amp_status st = amp__alg_get(acc, &list[i], what, &p);
        if (st != AMP_OK) return st;
    }
    return AMP_OK;
}

AMP_API amp_status amp_algorithms_prepare(amp_accelerator *acc)
{
    amp_status st = AMP_OK;
    if (!acc && (st = amp_accelerator_default(&acc)) != AMP_OK) return st;
    AMP__ACCEL_OK(acc);
    return amp__alg_prepare(acc, 0, 1, NULL, NULL);
}

char *amp__alg_builtin_source(const char *target, size_t i, char *name, size_t name_size)
{
    amp__alg_spec list[AMP__ALG_MAX_BUILTIN];
    size_t n = amp__alg_builtin_specs(false, list, AMP__ALG_MAX_BUILTIN);
    if (i >= n || i >= AMP__ALG_MAX_BUILTIN) return NULL;
    amp_accelerator fake;
    memset(&fake, 0, sizeof fake);
    fake.e.info.compute_units = 1;
    snprintf(fake.e.info.arch, sizeof fake.e.info.arch, "%s", target);
    amp__alg_prog g;
    memset(&g, 0, sizeof g);
    amp__alg_geometry(&fake, &list[i], &g);
    if (name) amp__alg_spec_name(&list[i], name, name_size);
    return amp__alg_source(&list[i], &g);
}
