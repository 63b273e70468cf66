/* loops.h — the one header of the CPU accelerator's loop transformation (lib/cpu/loops/): what the rest of the back end calls, then the model its passes share. */
#ifndef AMP_CPU_LOOPS_H
#define AMP_CPU_LOOPS_H

/* The transformation is "deep fission" at the source level: it parses the
 * assembled translation unit with libclang, and for each tiled kernel whose
 * barriers sit in work-item-uniform control flow writes a second version
 * that runs a whole tile as loops over its work-items between barriers,
 * inserted after the kernel; other kernels keep the fiber path with the
 * reason recorded.
 *
 * What a transformed kernel looks like (generated text, after the body of
 * NAME__amp_body, under a #line that restores the user's numbering):
 *
 *   static AMP_FI bool NAME__amp_loops(amp__cpu_item *amp__it, const P1 a, ...)
 *   {
 *       tile_static arrays, hoisted to plain locals (the function runs one tile;
 *                                         a rank-2 one stored transposed: layout.c)
 *       ctx<T, tile threads> amp__c_x;   one slot per work-item for each
 *                                         variable a later region still reads
 *       uniform control flow of the body (loops and ifs holding barriers)
 *       around "regions": the code between two barriers, each wrapped in
 *       loops over the tile's work-items, contiguous dimension innermost
 *       (the next one out where the region's stores run along it: order.c;
 *       a tile_static array written along the tile's rows and read down its
 *       columns, as the GPU's padded transpose does, stored transposed so
 *       that both phases run along memory: layout.c).
 *   }
 *   extern "C" void NAME__amp_tiles(amp__cpu_item *);  runs tiles [begin, end)
 *                                         (in groups of tile rows for a transpose
 *                                         whose launch outgrows the cache: tiles.c)
 *   extern "C" const char NAME__amp_cpu_path[] = "loops" | "fibers: <why>";
 *
 * Variables that cross a barrier are sorted into three kinds (MCUDA's
 * "selective replication", PoCL's context arrays and uniformity analysis):
 *   uniform  the same value in every work-item (its initialiser and updates
 *            read only kernel parameters, constants, tile coordinates and
 *            other uniform variables, and read no memory): computed once per
 *            tile in the outer control flow; regions see a const copy.
 *   remat    never modified, initialiser a pure function of the work-item's
 *            index and uniform values: recomputed at the top of each region
 *            that uses it (as a const, so a missed modification cannot
 *            compile rather than silently diverge).
 *   private  anything else: stored at the end of the region that declares
 *            it into its context slot; later regions bind a reference to it.
 * Conditions of control flow that holds a barrier are used directly when
 * uniform; otherwise every work-item evaluates its own and they must agree,
 * else the tile stops with a divergent-barrier error (GPUs hang or misbehave).
 * A return, break or continue under a uniform condition, and updates of a
 * variable that stay uniform (stride *= 2), move to the outer flow too (a
 * second planning pass, after the first classification found them).
 * Returns after the last barrier end the work-item (a goto to the end of its
 * loop iteration).
 *
 * A grid-stride loop inside a region (each work-item starting at its own
 * index, stepping by a uniform stride: BabelStream's CUDA dot) is split out
 * of its region like a loop holding a barrier, and run in lockstep across
 * the tile's work-items (interchange.c says when that is sound): its
 * variable and everything it carries get context slots, and each step runs
 * every work-item whose condition still holds, so one step's accesses of
 * consecutive work-items are neighbours in memory:
 *
 *       for work-items: init                      (per work-item, saved)
 *       for (;;) { any = false;
 *           for work-items: if (!active) continue;
 *               copy its variables in from their slots
 *               for up to lockstep_steps (4) steps:   (the prelude's)
 *                   if (!(cond)) { active = false; break; }
 *                   body; increment;
 *               save them back; any |= active;
 *           if (!any) break; }
 *
 * (several steps of a work-item at once keep several runs of memory
 * streaming; the steps stay a loop over copies so that a sum carried from
 * step to step is compiled as it was before, fused multiply-adds included).
 * Where the loop's variable is a private integer changed only by its
 * increment and the condition has no effect, a vector fast path comes first
 * (emit.c, emit_lockstep_fast): while the work-items' variables are
 * consecutive and in range and all take the step, each step is one
 * vectorised pass over the work-items' bodies (where the compiler may fuse
 * a multiply and an add that the usual path keeps apart: a float sum's
 * last bit may then differ from the fiber path's).
 *
 * Soundness: anything not understood keeps the kernel on fibers (a barrier
 * under a call the analysis cannot see through, under a macro that spans
 * several statements, in a switch, a jump crossing a barrier under a
 * condition that differs between work-items, references or lambdas or
 * addresses living across a barrier, ...). Where a classification could be
 * wrong, the generated code declares the copy const so the mistake fails to
 * compile, and a loop version that does not compile is turned off
 * (cpu_compile.c, which runs the transformation in a child process, under
 * the compile deadline: child.c).
 *
 * The passes, one file each, in the order they run on a kernel (passes.c
 * drives them; transform.c runs them over the unit's tiled kernels):
 *   cursor.c    the clang cursor layer: positions, tokens, the node tree
 *   refs.c      the kernel's variables, and what each reference does to one
 *   barriers.c  which calls reach a barrier (through the user's functions)
 *   plan.c      barrier-region planning: the body cut into units
 *   jumps.c     jumps that leave a region, and promotion to the outer flow
 *   purity.c    whether an expression is uniform or a pure function of the
 *               work-item's index
 *   interchange.c  grid-stride loops to run in lockstep across work-items
 *               (after a first classification; planned and classified again)
 *   classify.c  variables as uniform / remat / private, conditions as uniform
 *   layout.c    which rank-2 tile_static arrays are stored transposed
 *   tiles.c     the order of the launch's tiles (grouped for a transpose)
 *   order.c     which work-item loop of a region runs innermost (asked by
 *               emit.c as it writes each region)
 *   emit.c      the loop version's text
 * Files here include only this header, ../cpu_internal.h, ../cpu_clang.h
 * and core.h; they call nothing above them in the back end (cpu_compile.c
 * hands in where the library's text ends). */

#include "../cpu_clang.h"
#include "base/core.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ========================================== for the rest of the back end */

typedef struct amp__cpu_loops_job {
    const char *source; /* the assembled unit (NUL-terminated) */
    size_t len;
    size_t user_start;  /* where the library's own text ends in it: what comes
                         * before is trusted, what follows is analysed */
    const char *path;   /* the file it is parsed as (its directory matters for includes; a parse with
                         * pch needs it on the disk, as a build writes it: transform.c) */
    const char *const *args; /* compiler arguments for libclang (language, -D, -I, ...) */
    int nargs;
    const char *pch;  /* the library's part as libclang precompiled it (amp__cpu_loops_make_pch), a file
                       * of this process's private directory; NULL: none, the whole text is parsed */
} amp__cpu_loops_job;

/* The name the library's part has for libclang when it is precompiled, and
 * when a parse uses that: a file libclang is handed (never read from the
 * disk), so that the precompiled form does not depend on where it was
 * made. */
#define AMP__LOOPS_LIBRARY_PART "/hipamp/library-part.hpp"

/* What the transformation made of each tiled kernel, in source order. */
typedef struct amp__cpu_loops_kernel {
    char name[256];
    unsigned at;       /* offset just after the kernel's body */
    char *loops;       /* its loop version (malloc'ed), or NULL */
    char why[256];     /* when NULL: why the kernel stays on fibers */
    char *line;        /* the #line that restores the user's numbering after it */
    bool off;          /* the caller turned the loop version off (off_why) */
    char off_why[256];
} amp__cpu_loops_kernel;
typedef struct amp__cpu_loops_result {
    amp__cpu_loops_kernel *k;
    int n;
    bool pch_used;    /* the parse read the library's part from job->pch */
    bool pch_refused; /* job->pch was not read, and the text parsed whole without an error: the part, not
                       * the user's text, was what failed (a child that died reading it included) */
    char *read;       /* the files the parse read, one a line, as libclang named them (malloc'ed; NULL when
                       * none): the loop versions hold what it made of them (a type's spelling), so the build
                       * checks them as it checks its compiler's (a line beginning '?': a name it could not
                       * hold); the unit itself, the library's part and libclang's own headers left out */
} amp__cpu_loops_result;

/* How a run in a child process ended, besides its result. */
typedef struct amp__cpu_loops_outcome {
    bool late;      /* stopped at its time limit (or the deadline), or taken for stuck */
    bool transient; /* it did not finish for a reason that may not recur (late,
                     * or no pipe or process for it): a build made without its
                     * loop versions must not be stored */
} amp__cpu_loops_outcome;

/* Run the transformation in a child process (child.c: libclang reads every
 * file the source includes, may crash, and cannot be interrupted), bounded
 * by deadline (monotonic ns) and by its own limit. true with res filled;
 * false (note: "fibers: <why>", res empty) when it did not run or not to
 * the end; *how says how it ended. Blocks until the
 * child ends or is stopped. Never fails the build: a caller compiles the
 * source as it is then. */
bool amp__cpu_loops_run(const amp__cpu_loops_job *job, uint64_t deadline, amp__cpu_loops_result *res, char *note,
                        size_t cap, amp__cpu_loops_outcome *how);
/* The same, in this process (transform.c): parse the unit with libclang and
 * write a loop version for each tiled kernel that can have one. false
 * (note: "fibers: <why>", res empty) when the transformation could not run
 * at all. Blocks while libclang parses (a few hundred ms). */
bool amp__cpu_loops_transform(const amp__cpu_loops_job *job, amp__cpu_loops_result *res, char *note, size_t cap);
/* Precompile the library's part (job->source up to job->user_start, with
 * job->args) for libclang into the file path (a new file of a private
 * directory), in a child process as amp__cpu_loops_run runs the
 * transformation, bounded by deadline; *inputs (malloc'ed): the files it
 * read, a line each, "path\tsize\tseconds\tnanoseconds" of their
 * modification time. false (note says why) when it was not made. Blocks
 * until the child ends (about as long as a parse). */
bool amp__cpu_loops_make_pch(const amp__cpu_loops_job *job, const char *path, uint64_t deadline, char **inputs,
                             char *note, size_t cap);
/* The same in this process (transform.c). */
bool amp__cpu_loops_save_pch(const amp__cpu_loops_job *job, const char *path, char **inputs, char *note, size_t cap);
/* The source with each kernel's loop version (or its fiber note) after it,
 * and the list of kernels whose fiber version is left out. malloc'ed; NULL
 * when out of memory. */
char *amp__cpu_loops_assemble(const char *source, const amp__cpu_loops_result *res);
void amp__cpu_loops_free(amp__cpu_loops_result *res);

/* ======================================= between the passes (only here) */

/* One AST node of a kernel body: offsets are file positions in the source
 * (where a macro's expansion starts, for nodes written in a macro body). */
typedef struct amp__loops_node {
    amp__cx_cursor c;
    int kind;
    unsigned b, e;   /* file range [b, e) */
    unsigned sb;     /* spelling position of the first token */
    bool macro;      /* spelled in a macro body (its text is not at [b, e)) */
    int parent, first, next;
    int var;         /* DeclRefExpr/VarDecl/ParmDecl: index in vars, else -1 */
    bool barrier;    /* subtree calls a barrier (lambda bodies excluded) */
    bool promoted;   /* a uniform jump or update moved to the outer flow */
    bool candidate;  /* a jump planning would have refused: promoted if uniform */
    bool interchange; /* ForStmt: runs in lockstep across the work-items (interchange.c) */
} amp__loops_node;

/* Classes of variables (classify.c). */
enum { AMP__VAR_LOCAL = 0, AMP__VAR_UNIFORM, AMP__VAR_REMAT, AMP__VAR_PRIVATE, AMP__VAR_TILE_STATIC, AMP__VAR_PARAM };

typedef struct amp__loops_var {
    int node;        /* its VarDecl / ParmDecl */
    int decl;        /* DeclStmt node holding it (structure variables), else -1 */
    int unit;        /* unit declaring it (structure variables), else -1 */
    int loop;        /* ForStmt whose init declares it, else -1 */
    int inc;         /* that loop's increment expression, else -1 */
    char name[128];
    char type[512];  /* canonical type spelling */
    bool is_const, is_volatile, is_ref, is_array, is_param, is_tidx, structure, has_init;
    bool modified, addr_taken, mod_outside_inc;
    bool cross;      /* referenced outside its declaring unit */
    bool transposed; /* a rank-2 tile_static array the loop version stores transposed (layout.c) */
    int mods[16];    /* the operators that modify it (nmods > 16: too many to promote) */
    int nmods;
    int cls;
    long long size;
} amp__loops_var;

/* Kinds of units (plan.c). */
enum { AMP__UNIT_REGION, AMP__UNIT_COND, AMP__UNIT_INIT, AMP__UNIT_INC, AMP__UNIT_STMT };
/* Shapes of statements that can move to the outer flow. */
enum { AMP__JUMP_NONE, AMP__JUMP_RETURN, AMP__JUMP_BREAK, AMP__JUMP_CONTINUE, AMP__JUMP_UPDATE };

typedef struct amp__loops_unit {
    int kind;
    unsigned b, e;      /* span of its text */
    int owner;          /* structure node (for/while/if/do) for COND/INIT/INC */
    int first, last;    /* REGION: first and last child node of the run */
    bool final;         /* REGION: nothing runs after it in the kernel */
    bool uniform;       /* COND/INIT/INC: evaluated once in the outer flow */
} amp__loops_unit;

typedef struct amp__loops_edit {
    unsigned b, e;
    char *text; /* malloc'ed replacement */
} amp__loops_edit;

/* Function classification memo (barriers.c): does calling it possibly
 * reach a barrier? */
typedef struct amp__loops_memo {
    char *usr;
    int cls;
    char why[160];
} amp__loops_memo;

/* The translation unit, shared by its kernels. */
typedef struct amp__loops_tu {
    const amp__clang *cx;
    amp__cx_tu tu;
    amp__cx_file file;
    amp__cx_file lib_file; /* the precompiled library part's (AMP__LOOPS_LIBRARY_PART), or NULL: its
                            * positions count as the main file's library text (amp__loops_loc_offset) */
    const char *src;
    size_t len;
    unsigned user_start;
    amp__cx_token *toks;
    unsigned ntoks;
    unsigned *tb, *te; /* token offsets */
    amp__loops_memo *memo;
    int nmemo, cmemo;
    /* user macro definitions (name, offset, text range) */
    struct amp__loops_mdef { char name[96]; unsigned b, e; } *mdefs;
    int nmdefs, cmdefs;
    /* macro expansions in the user's part: where, and which definition */
    struct amp__loops_mexp { unsigned off, def; } *mexps;
    int nmexps, cmexps;
    bool oom;
} amp__loops_tu;

/* One tiled kernel under transformation. */
typedef struct amp__loops_ctx {
    amp__loops_tu *t;
    const amp__clang *cx;
    char name[256];
    amp__cx_cursor fn;
    amp__loops_node *n;
    int nn, cn;
    amp__loops_var *v;
    int nv, cv;
    amp__loops_unit *u;
    int nu, cu;
    amp__loops_edit *ed;
    int ned, ced;
    int body;      /* CompoundStmt node */
    int tidx;      /* var index of the tiled_index parameter */
    int dims[3];
    int threads;
    bool needs_local;
    char why[256];
    int hoist[64]; /* structure-level declarations of types only: hoisted */
    int nhoist;
    int emit_unit; /* emit pass: next unit */
    bool cont_ok[64]; /* emit pass: does `continue` in the innermost loop emitted so far do what it did */
    int ncont;
    int label;
    bool no_interchange; /* transform.c's second try: no loop runs in lockstep */
    int nmarked;         /* loops interchange.c marked */
    int nlockstep;       /* of those, loops the plan split out (in lockstep) */
    int nfast;           /* emit pass: of those, loops with the vector fast path (emit.c) */
    int nswapped;        /* emit pass: regions whose work-item loops run interchanged (order.c) */
    int ntransposed;     /* tile_static arrays stored transposed (layout.c) */
    int tile_group;      /* tile rows a group of the launch's tiles (tiles.c): 1, the launch's own order */
    amp__sb out;
} amp__loops_ctx;

/* passes.c: analyse and generate one tiled kernel (k->fn, k->name): its
 * loop version in k->out, or why it has none in k->why. */
void amp__loops_kernel(amp__loops_ctx *k);
void amp__loops_kernel_free(amp__loops_ctx *k);

/* cursor.c */
/* Double the array *pp (elem-byte elements, *cap of them; first when
 * empty). false, with *oom set and the array unchanged, when out of memory.
 * pp is the address of the array pointer (of any element type). */
bool amp__loops_grow(void *pp, int *cap, size_t elem, int first, bool *oom);
/* Keep the kernel on fibers, saying why (the first reason given wins). */
void amp__loops_fallback(amp__loops_ctx *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void amp__loops_loc_offset(const amp__loops_tu *t, amp__cx_loc l, unsigned *off, bool *in_main);
void amp__loops_cursor_span(const amp__loops_tu *t, amp__cx_cursor c, unsigned *b, unsigned *e, bool *in_main);
void amp__loops_cursor_name(const amp__clang *cx, amp__cx_cursor c, char *buf, size_t cap);
bool amp__loops_cursor_null(const amp__clang *cx, amp__cx_cursor c);
unsigned amp__loops_tok_find(const amp__loops_tu *t, unsigned off);
bool amp__loops_tok_is(const amp__loops_tu *t, unsigned i, const char *s);
bool amp__loops_is_assign_op(const amp__loops_tu *t, unsigned i);
void amp__loops_build_tree(amp__loops_ctx *k);
int amp__loops_nth_child(const amp__loops_ctx *k, int n, int i);
int amp__loops_nchildren(const amp__loops_ctx *k, int n);
int amp__loops_strip(const amp__loops_ctx *k, int n);
bool amp__loops_inside(const amp__loops_ctx *k, int n, int anc);
const char *amp__loops_unary_op(const amp__loops_ctx *k, int p);
unsigned amp__loops_binary_op(const amp__loops_ctx *k, int p);
bool amp__loops_is_amp_class(const amp__loops_ctx *k, amp__cx_cursor cls, const char *which);
int amp__loops_arg_index(const amp__loops_ctx *k, int c, int a);
/* The node of variable vi's initialiser, -1 when it has none to use. */
int amp__loops_var_init(amp__loops_ctx *k, int vi);

/* refs.c */
int amp__loops_var_add(amp__loops_ctx *k, int n);
int amp__loops_var_of_cursor(amp__loops_ctx *k, amp__cx_cursor c);
bool amp__loops_promoted_update_of(const amp__loops_ctx *k, int p, int vi);
void amp__loops_ref_effect(amp__loops_ctx *k, amp__loops_var *v, int r);

/* barriers.c */
void amp__loops_mark_barriers(amp__loops_ctx *k);
bool amp__loops_is_barrier_stmt(const amp__loops_ctx *k, int s);

/* plan.c */
void amp__loops_plan_seq(amp__loops_ctx *k, int compound, bool top);
bool amp__loops_is_structure(const amp__loops_ctx *k, int s);
bool amp__loops_for_parts(const amp__loops_ctx *k, int f, int *init, int *cond, int *inc, int *body, unsigned *lp,
                          unsigned *rp, unsigned *s1, unsigned *s2);
int amp__loops_seq_first(const amp__loops_ctx *k, int compound);
int amp__loops_seq_next(const amp__loops_ctx *k, int compound, int s);

/* jumps.c */
int amp__loops_jump_shape(const amp__loops_ctx *k, int s, int *cond, int *target);
const char *amp__loops_jump_word(int shape); /* "return", "break" or "continue" */
void amp__loops_check_jumps(amp__loops_ctx *k, int root, bool final);
bool amp__loops_promote(amp__loops_ctx *k);

/* purity.c */
enum { AMP__PURE_NO = 0, AMP__PURE_REMAT = 1, AMP__PURE_UNIFORM = 2 };
int amp__loops_purity(amp__loops_ctx *k, int n, int self);

/* interchange.c: mark the loops to run in lockstep across the work-items
 * (after a first classification: it reads variables' classes); how many. */
int amp__loops_mark_interchange(amp__loops_ctx *k);
/* After the marked loops were split out and the kernel planned and
 * classified again: false (k->why says why) when a marked loop would not
 * keep its meaning (a variable of it hoisted ahead of its steps, a
 * work-item's array it uses); transform.c then redoes the kernel without
 * lockstep loops. */
bool amp__loops_interchange_sound(amp__loops_ctx *k);

/* order.c: whether region unit ui runs its work-item loops interchanged
 * (the next dimension out innermost): every store it can place runs along
 * that dimension. Reads variables' classes (after classify.c) and their
 * layouts (after layout.c). */
bool amp__loops_region_order_swaps(amp__loops_ctx *k, int ui);
/* The dimension d of the tile that the index expression at node n is
 * T.local[d] of (directly or through an unmodified variable initialised
 * so), -1 when it is not one. */
int amp__loops_local_dim(amp__loops_ctx *k, int n);
/* Fields of the kernel's tiled_index T. */
enum { AMP__IDX_LOCAL = 1, AMP__IDX_GLOBAL = 2, AMP__IDX_TILE = 4, AMP__IDX_TILE_ORIGIN = 8 };
/* The dimension d that the expression at node n is T.F[d] of, for a field
 * F among fields (*field, when not NULL: which), directly or through an
 * unmodified variable initialised so; 3 for the whole index (T, T.global or
 * T.local, when fields has AMP__IDX_LOCAL or AMP__IDX_GLOBAL); -1 when it
 * is neither. */
int amp__loops_index_dim(amp__loops_ctx *k, int n, unsigned fields, unsigned *field);
/* The rank of the kernel's tile (its tiled_index's extents given). */
int amp__loops_tile_rank(const amp__loops_ctx *k);

/* layout.c: choose which rank-2 tile_static arrays the loop version stores
 * transposed (v->transposed, k->ntransposed): those a transpose writes
 * along the tile's rows and reads down its columns, where the region
 * writing them then runs interchanged. After classify.c, before emit.c. */
void amp__loops_choose_layouts(amp__loops_ctx *k);

/* tiles.c: the order the loop version runs a launch's tiles in (k->tile_group,
 * the prelude's tiles<>::run): in groups of tile rows where the kernel
 * builds an index with its tile's coordinates swapped. Before emit.c. */
void amp__loops_choose_tile_order(amp__loops_ctx *k);

/* classify.c */
void amp__loops_classify(amp__loops_ctx *k);
bool amp__loops_type_is_local(amp__loops_ctx *k, amp__cx_type can);

/* emit.c */
void amp__loops_edit_add(amp__loops_ctx *k, unsigned b, unsigned e, const char *text);
void amp__loops_emit_remat_decl(amp__loops_ctx *k, int d, amp__sb *s, const bool *want);
void amp__loops_emit(amp__loops_ctx *k);

#endif /* AMP_CPU_LOOPS_H */
