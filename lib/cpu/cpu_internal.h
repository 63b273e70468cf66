/* cpu_internal.h — private interfaces of the CPU accelerator backend: the ABI shared with hip_kernels/amp_cpu_prelude.hpp, the device record, fibers and the launch runner. */
#ifndef AMP_CPU_INTERNAL_H
#define AMP_CPU_INTERNAL_H

#include "backend.h"
#include "base/core.h"
#include "base/lock.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ----------------------------------------------------------------- ABI
 * Mirrors amp__cpu_launch / amp__cpu_item in amp_cpu_prelude.hpp byte for
 * byte (both sides assert the layout). A compiled module exports
 * `int amp__cpu_abi(void)` returning AMP__CPU_ABI, each kernel NAME as
 * `void NAME__amp_entry(amp__cpu_item *)` (AMP__CPU_ENTRY_SUFFIX; NAME may
 * be a C function of the C library: div, rand), and NAME__amp_sig. A tiled
 * kernel the loop transformation handled (lib/cpu/loops/) also exports
 * `void NAME__amp_tiles(amp__cpu_item *)`, which runs every work-item of
 * the tiles with linear ids [begin, end) (it sets item.tile to the one
 * running), and `const char NAME__amp_cpu_path[]`, "loops" or
 * "fibers: <why>" (and, where some of its loops run in lockstep across
 * the work-items, `const int NAME__amp_lockstep`, how many: AMP_CPU_VERBOSE
 * says it; where its tiles may run in groups of tile rows,
 * `const int NAME__amp_tile_group`, how many rows of tiles a group); a module
 * the transformation did not run on exports
 * `const char amp__cpu_loops_note[]` saying why. */
#define AMP__CPU_ABI 8
#define AMP__CPU_ENTRY_SUFFIX "__amp_entry"
/* The most tile rows NAME__amp_tile_group gives (lib/cpu/loops/tiles.c);
 * the back end takes a larger value for none. */
#define AMP__CPU_MAX_TILE_GROUP 64

typedef struct amp__cpu_item amp__cpu_item;
typedef struct amp__cpu_launch {
    int32_t abi;
    int32_t tiled;
    int32_t rank;
    int32_t ext[AMP__LAUNCH_MAX_RANK];
    int32_t tile[3];  /* index order; 1 where unused */
    int32_t tiles[3]; /* tiles per dimension, index order; 1 where unused */
    int32_t tile_threads;
    const void *pack;
    void (*barrier)(amp__cpu_item *it);
    void (*oob)(amp__cpu_item *it, const void *data, const int32_t *idx, const int32_t *ext,
                int32_t rank);
    void (*fault)(amp__cpu_item *it, const char *what);
    /* Loop path: work-item `local` (linear id) of tile it->tile decided the
     * condition of control flow holding a barrier (`what`: "if", "for", ...)
     * differently from work-item 0. */
    void (*diverge)(amp__cpu_item *it, int32_t local, const char *what);
    /* 1: no view or array the kernel may write overlaps another view or
     * array of the launch, and it has no struct parameter
     * (amp__cpu_views_disjoint): a simple kernel's entry and a tiled
     * kernel's loop version then run the work-items with every view's
     * pointer restrict. Fibers ignore it. */
    int32_t noalias;
    /* 1: a simple kernel's entry writes the views it declares streamed
     * (NAME__amp_streams, AMP_KERNEL_STREAMING_STORES) through a buffer and
     * streaming stores. Set only with noalias, when every streamed view
     * covers the launch's extent and the recent streamed launches' memory
     * reaches AMP_CPU_STREAM_MIN (amp__cpu_stream_launch, cpu_run.c). */
    int32_t stream;
    /* Of a streamed launch, the first stream_keep/256 of each block of
     * stream_block work-items (the threads' home blocks; the whole launch
     * where there are none) are written with plain stores, so that they
     * stay in the caches: where the recent launches' memory is a little
     * more than the threshold, part of it still fits (cpu_run.c). */
    int32_t stream_keep;
    int64_t stream_block;
    /* 1: a tiled kernel's loop version that groups its tiles (NAME__amp_tile_group,
     * lib/cpu/loops/tiles.c) runs them in groups; set where the launch's views
     * cover the caches' size (stream_min) or more (amp__cpu_job_init):
     * below, they run in the launch's order. */
    int32_t group_tiles;
} amp__cpu_launch;

/* One call of an entry: simple kernels run linear indices [begin, end) of the
 * extent; tiled kernels run local work-items [begin, end) of tile `tile`. */
struct amp__cpu_item {
    const amp__cpu_launch *launch;
    int64_t begin, end;
    int32_t tile[3];
    int32_t cur_local; /* written by the entry: the work-item running now */
    void *worker;      /* amp__cpu_worker of the thread running it */
    void *fiber;       /* amp__cpu_fiber, or NULL outside fibers */
};

_Static_assert(sizeof(void *) == 8, "the CPU accelerator needs a 64-bit host");
_Static_assert(offsetof(amp__cpu_launch, pack) == 72, "amp__cpu_launch layout");
_Static_assert(offsetof(amp__cpu_launch, noalias) == 112, "amp__cpu_launch layout");
_Static_assert(offsetof(amp__cpu_launch, stream_block) == 128, "amp__cpu_launch layout");
_Static_assert(offsetof(amp__cpu_launch, group_tiles) == 136, "amp__cpu_launch layout");
_Static_assert(sizeof(amp__cpu_launch) == 144, "amp__cpu_launch layout");
_Static_assert(offsetof(amp__cpu_item, tile) == 24, "amp__cpu_item layout");
_Static_assert(sizeof(amp__cpu_item) == 56, "amp__cpu_item layout");

typedef void (*amp__cpu_entry_fn)(amp__cpu_item *it);

/* -------------------------------------------------------------- device
 * One per process, filled once by amp__cpu_enumerate and read-only after. */
/* AMP_CPU_GRAPH_ALONE's default and largest value (cpu_graph.c). */
#define AMP__CPU_GRAPH_ALONE_POINTS 262144u
#define AMP__CPU_GRAPH_ALONE_MAX (1u << 30)
/* AMP_CPU_SPIN_US's default and largest value: how long an idle pool
 * thread (and a launcher waiting for pool threads to leave its job) spins
 * before it sleeps (cpu_pool.c says why). */
#define AMP__CPU_SPIN_US_DEFAULT 100u
#define AMP__CPU_SPIN_US_MAX 1000000u
/* Fewer threads than this (the launching one included), or more than the
 * cores this process may run on, and the default is 0: no spinning. */
#define AMP__CPU_SPIN_MIN_THREADS 4

typedef struct amp__cpu_device {
    int nthreads;         /* pool size, the launching thread included */
    unsigned queue_depth; /* launches a queue holds at most (AMP_QUEUE_DEPTH) */
    size_t stack_size;    /* bytes per fiber stack, guard page excluded */
    bool debug;           /* compile kernels with AMP_DEBUG_CHECKS */
    bool native;          /* compile with -march=native (the cache tag names the processor) */
    bool as_deps;         /* the compiler runs GNU as (GCC; clang told to, clang_gnu_as): -Wa,--MD,FILE lists
                           * what a kernel's inline asm read (.include, .incbin), which the preprocessor's
                           * list never names */
    bool clang_gnu_as;    /* clang, given -fno-integrated-as: its own assembler lists nothing it reads, so
                           * GNU as assembles (and lists); the user's -fintegrated-as and -flto (whose
                           * link-time assembler is clang's own) are refused */
    bool stack_clash;     /* compile with -fstack-clash-protection (GCC 8, clang 11 on): every page of a
                           * large frame is touched in turn, so a fiber's overflow meets its guard page
                           * (ends the process) instead of writing into the next fiber's stack */
    bool available;
    char reason[256];     /* why not available */
    char **cxx;           /* compiler argv prefix (resolved program + extra words) */
    int ncxx;
    /* "PATH=..." the compiler runs with (amp__cpu_compiler_environ): the
     * directories of PATH, as discovery found it, that no one outside the
     * trusted set could add a program to; compiler_libpath the same of
     * LD_LIBRARY_PATH (NULL: none set or kept), compiler_ccache_path of
     * CCACHE_PATH; path_left_out names the first directory of any left out
     * and why ("" when none was). */
    char *compiler_path;
    char *compiler_libpath;
    char *compiler_ccache_path;
    char path_left_out[256];
    char cxx_text[512];   /* the compiler command as the user gave it */
    char cache_tag[1536];
    char prebuilt[40]; /* "cpu-" and a hash of cache_tag: its pack's name (lib/core/prebuilt.c) */
    char machine[64];
    /* AMP_CPU_TILED: how tiled kernels run. AUTO: the loop version where the
     * module has one, fibers elsewhere; FIBERS: always fibers; LOOPS: as
     * AUTO, but a tiled kernel without a loop version is refused
     * (kernel_get says why). */
    enum { AMP__CPU_TILED_AUTO, AMP__CPU_TILED_FIBERS, AMP__CPU_TILED_LOOPS } tiled;
    /* A graph's replay runs a launch of at most this many index points on
     * the width its kernel learned, a bigger one on every thread
     * (AMP_CPU_GRAPH_ALONE; cpu_graph.c says why). */
    unsigned graph_alone_points;
    /* Microseconds a pool thread that finds no work polls for it before it
     * sleeps, 0: never (AMP_CPU_SPIN_US; cpu_pool.c). */
    unsigned spin_us;
    /* Direct launches of at most AMP__CPU_WIDTH_POINTS points run on the
     * width learned for their kernel and size (AMP_CPU_LEARN_WIDTHS;
     * cpu_launch.c), else on every thread. */
    bool learn_widths;
    /* A graph's replay hands its launches to a team of pool threads
     * engaged for the whole replay (AMP_CPU_GRAPH_TEAM; cpu_team.c), else
     * publishes each to the pool as a direct launch does. */
    bool graph_team;
    /* Launches whose writable views overlap no other view run on the
     * entries' restrict path (amp__cpu_launch.noalias); AMP_CPU_RESTRICT=0:
     * never. */
    bool restrict_views;
    /* Simple kernels that declare streamed views stream them in launches
     * where the memory the thread's recent streamed launches covered
     * reaches stream_min bytes (AMP_CPU_STREAM_MIN; UINT64_MAX: the default,
     * from the last-level cache, read when a kernel first needs it;
     * cpu_run.c), unless AMP_CPU_STREAM_STORES=0. */
    bool stream_stores;
    uint64_t stream_min;
} amp__cpu_device;
/* The default streaming threshold is the last-level cache the system
 * reports, but not below this: the H200 machine's 16-vCPU guest reports
 * far less than the cache that holds BabelStream's 2^23-float arrays. */
#define AMP__CPU_STREAM_MIN_FLOOR (256ull << 20)

/* ------------------------------------------- the host C++ compiler
 * Discovery (cpu_toolchain.c): fills cxx, available, reason and the cache
 * tag. Never fails: an unusable compiler leaves available false. */
void amp__cpu_find_compiler(amp__cpu_device *d);
/* The fixed flags every build passes after the compiler's words
 * (cpu_toolchain.c: part of the cache tag). */
extern const char *const amp__cpu_flags[];
extern const size_t amp__cpu_nflags;
/* The sanitizers whose runtime must be in the process before a module
 * built with them is loaded (loaded later by dlopen, it ends the process):
 * the -fsanitize= value, the library such a module needs (its DT_NEEDED
 * prefix), and a symbol of the runtime (cpu_options.c). */
typedef struct amp__cpu_sanitizer {
    const char *option, *lib, *init;
} amp__cpu_sanitizer;
#define AMP__CPU_NSANITIZERS 4
extern const amp__cpu_sanitizer amp__cpu_sanitizers[AMP__CPU_NSANITIZERS];
/* Whether an environment entry ("NAME=value") is kept from the compiler:
 * one that changes what it does yet is in no cache tag (where it finds its
 * programs and libraries, C's include path, an edit of its command line, a
 * file it writes on the side); CPATH and CPLUS_INCLUDE_PATH stay, their
 * headers are tracked (backend.h). cpu_toolchain.c. */
bool amp__cpu_env_dropped(const char *entry);
/* The environment the compiler runs with: this process's without what
 * amp__cpu_env_dropped names and the entries starting with a prefix of
 * also_drop (NULL-terminated; may be NULL), PATH replaced by
 * d->compiler_path; lead empty slots first for the caller to fill. The
 * array is malloc'ed, its entries borrowed (environ's, d's); NULL on no
 * memory. */
char **amp__cpu_compiler_environ(const amp__cpu_device *d, const char *const *also_drop, size_t lead);
/* The compiler's default include directories (backend.h), asked of it on
 * first use; never NULL (cpu_toolchain.c). */
const amp__sys_dir *amp__cpu_system_dirs(amp__cpu_device *d);
/* The directory the CPU accelerator makes its files in (cpu_compile.c):
 * TMPDIR, else /tmp, resolved into root (no links left), and only where
 * no other user could rename or replace it or any directory above it
 * (each owned by this user or root, and writable by nobody else unless
 * sticky). AMP_OK, else code with the directory at fault named. */
amp_status amp__cpu_tmp_dir(amp_status code, char root[PATH_MAX]);
/* (cpu_files.c) Writes the parts to name relative to dirfd (path: its name
 * in messages), no link followed where nofollow; reads name back from the
 * build directory dirfd (a regular file of this user's, malloc'ed,
 * NUL-terminated); removes a build directory and what is in it; sweeps,
 * once a process, the directories and files of processes that died. */
amp_status amp__cpu_write_file(int dirfd, const char *name, const char *path, bool nofollow,
                               const char *const *parts, size_t nparts);
amp_status amp__cpu_read_file(int dirfd, const char *name, const char *path, void **data, size_t *size);
void amp__cpu_remove_dir(const char *path);
void amp__cpu_sweep_once(void);
/* (cpu_files.c) Marks the directory fd (just made by mkdtemp and opened)
 * as this process's while fd, or a duplicate of it, stays open: an
 * exclusive flock, which the sweep of another process tries first. false,
 * errno set, when another process holds it (sweeping it) or it was removed
 * before the lock was taken: the directory is not to be used. */
bool amp__cpu_dir_claim(int fd);

/* Temporary directories: <TMPDIR>/hipamp-cpu-<pid>-XXXXXX, so that those of
 * dead processes can be recognised and swept (cpu_compile.c). */
#define AMP__CPU_TMP_PREFIX "hipamp-cpu-"
/* The precompiled header's directory (cpu_pch.c): one a process, removed
 * when the library is unloaded or the process exits; swept as the build
 * directories are when its process died. */
#define AMP__CPU_PCH_PREFIX "hipamp-pch-"
/* The header's text there, which the header is compiled from. */
#define AMP__CPU_PCH_NAME "amp_lib.hpp"

/* The files a make-style dependency file (text) lists after its targets,
 * one a line (malloc'ed; "" when none; NULL: no memory), skipping skip and
 * what is in skip_dir (NULL: none) (cpu_files.c): as absolute paths with
 * symbolic links resolved where resolve (the precompiled header's, all in
 * the compiler's own directories), else as the compiler named them, made
 * absolute and tidied (amp__path_tidy): the way it took is what
 * lib/core/program.c judges, not where that way leads after it read the
 * file. A name too long to hold is a line starting with '?', and so is a
 * relative name where relative_unnamed (the assembler's list: a relative
 * .incbin or .include is read from the working directory, which hipamp
 * never reads from; the caller names it). Where pch_origin (a clang build
 * that used the precompiled header), the first file of a target that is an
 * amp_lib.hpp in a hipamp-pch- directory is dropped too: clang names there
 * the file the header was made from, in the private directory of the
 * process that made it (gone once that process ended), whose text the
 * header holds (cpu_pch.c: -fmodules-embed-all-files); a file the unit
 * itself includes is never a target's first. */
char *amp__cpu_deps(const char *text, const char *skip, const char *skip_dir, bool resolve, bool relative_unnamed,
                    bool pch_origin);
/* deps (amp__cpu_deps's list, freed here) with names appended (one a line:
 * the loop transformation's, amp__cpu_loops_result.read), made absolute and
 * tidied the same way, a line beginning '?' kept as it is; NULL when no
 * memory. */
char *amp__cpu_deps_join(char *deps, const char *names);
/* The precompiled header (cpu_pch.c) of the library's part of a source
 * (text, len bytes: the same in every build of a process), for a build
 * whose compiler command starts with words (the compiler, its flags, up to
 * the user's options) and whose job has no options and a disk cache: the
 * path to hand the compiler as -include (the header's text, its compiled
 * form beside it, in a private directory that lives as long as the
 * process), or NULL: AMP_CPU_PCH=0, options given, no disk cache, it is
 * being made, or it could not be had; the build then compiles the whole
 * text. Loads it from the disk cache (blocks for that); where it is not
 * there, starts making it with the compiler on a thread of its own (it
 * stores it in the disk cache) and says so in *making: the caller must
 * then call amp__cpu_pch_wait before words, envp or job go away.
 * Thread-safe. */
const char *amp__cpu_pch_prepare(amp__cpu_device *d, const amp__compile_job *job, const char *text,
                                 size_t len, char *const *words, size_t nwords, char *const *envp, uint64_t deadline,
                                 bool *making);
void amp__cpu_pch_wait(void);
/* The directory of the header amp__cpu_pch_prepare handed out (NULL: none
 * yet): a build's dependency list leaves out what is in it. */
const char *amp__cpu_pch_dir(void);
/* The library's part precompiled by libclang for the loop transformation
 * of lj (cpu_pch.c), under the same conditions as amp__cpu_pch_prepare's
 * header: the path to hand the transformation (lj->pch), or NULL (it is
 * then parsed whole). Loads it from the disk cache or the pack (blocks for
 * that); where it is not there and can be kept, starts making it in a
 * child process on a thread of its own, which stores it, and says so in
 * *making: the caller must then call amp__cpu_loops_pch_wait before job
 * goes away (lj is copied). Thread-safe. */
struct amp__cpu_loops_job;
const char *amp__cpu_loops_pch_prepare(const amp__cpu_device *d, const amp__compile_job *job,
                                       const struct amp__cpu_loops_job *lj, uint64_t deadline, bool *making);
void amp__cpu_loops_pch_wait(void);
/* The part handed out was refused (libclang would not read it, or a child
 * died reading it, while the text parsed whole): it is not handed out
 * again in this process. A failure of the user's text does not count. */
void amp__cpu_loops_pch_refused(void);
/* Whether every file of a part's list (text, size bytes: lines
 * "path\tsize\tseconds\tnanoseconds") is a regular file of that size and
 * modification time now (an empty or malformed list is not). */
bool amp__cpu_loops_pch_inputs_ok(const char *text, size_t size);

/* A build (cpu_compile.c): the backend's compile operation (backend.h). */
amp_status amp__cpu_compile(amp__cpu_device *d, const amp__compile_job *job, amp__compile_output *out);
/* In a child process after fork (cpu_spawn.c): every descriptor from 3 up
 * closed but keep (a thread of the parent that forked at the same time
 * left its pipe ends here, and a program's descriptors that are not
 * close-on-exec would reach what the child runs). Async-signal-safe. */
void amp__cpu_close_fds_except(int keep);

/* Child processes (cpu_spawn.c). Run argv[0] (a path, not searched for)
 * with envp, stdin from /dev/null and stdout + stderr captured into *out
 * (malloc'ed, the caller's to free; NUL-terminated; the first 48 KiB, the
 * rest read and dropped). Blocks until the program ends or the deadline
 * (monotonic ns, amp__now_ns; 0: none) passes: then the program and every
 * process it started are killed and *timed_out is set. *wstatus: the
 * guardian's wait status, whose exit status is the program's, or 128 + N
 * when signal N killed it (amp__cpu_describe_exit words it). A program
 * that cannot be exec'ed exits 127: that is no failure of this call.
 * AMP_ERROR_OUT_OF_MEMORY, AMP_ERROR_DEVICE (no pipe, or waitpid failed),
 * AMP_ERROR_UNSUPPORTED (fork failed); then *out is NULL. Thread-safe. */
amp_status amp__cpu_run_capture(char *const argv[], char *const envp[], uint64_t deadline, char **out,
                                int *wstatus, bool *timed_out);
/* A wait status of amp__cpu_run_capture in words ("exit status 1",
 * "killed by signal 9", ...) into buf (cap bytes). */
void amp__cpu_describe_exit(int ws, char *buf, size_t cap);

/* What kernel_get hands the core as the kernel's function: the entry point,
 * and the loop version when the kernel has one and may use it. Owned by the
 * module (freed at unload). */
/* Launches of a module queued or running on a queue's thread: unloading the
 * module waits until there are none (backend.h). */
typedef struct amp__cpu_inflight {
    pthread_mutex_t mu; /* leaf */
    pthread_cond_t cv;
    int n;
} amp__cpu_inflight;

/* ------------------------------------------ launch widths (cpu_width.c)
 * How many threads a repeated launch runs on, learned from its times: a
 * kernel keeps one per recent launch size, for its direct launches and
 * its graphs' replays alike. */
#define AMP__CPU_WIDTH_TIMED 3          /* launches timed at each width */
#define AMP__CPU_WIDTH_HEAVY_NS 50000   /* settled alone under this: never checked */
#define AMP__CPU_WIDTH_WIDE_NS 30000    /* a thread: on every thread over this, not searched */
#define AMP__CPU_WIDTH_RECHECK 256      /* launches between the checks of a searched width */
typedef struct amp__cpu_width {
    int width;      /* threads the next launch runs on, 1 (alone) to the pool's */
    bool settled;   /* the search is over */
    bool all;       /* it searches every halving (amp__cpu_width_down_all) */
    int timed;      /* launches timed at this width */
    uint64_t best;  /* the fastest of them, ns */
    int prev_width; /* the width searched before (all: the fastest so far; 0: none, so
                       never checked) and its fastest */
    uint64_t prev_best;
    /* A settled width's checks: launches since the last; during one
     * (ncand > 0) the widths tried (cand[0] the settled one, then twice
     * and half it, and a team's alone), the fastest launch at each, and
     * the launches of the check so far. */
    int since;
    int ncand, step;
    int cand[4];
    uint64_t cand_best[4];
} amp__cpu_width;
/* A search down from `threads` (the pool's, the launching one included),
 * halving while half the threads take a tenth off. */
amp__cpu_width amp__cpu_width_down(int threads);
/* The same through every halving down to alone, keeping the fastest
 * (stopping where a width took twice its time): a replay team's. */
amp__cpu_width amp__cpu_width_down_all(int threads);
/* The width the next launch runs on, and whether to time it (then pass
 * its time to amp__cpu_width_took, with the width it ran on: a time taken
 * at another width than the one asked for, as when two threads launch
 * at once, is not counted). threads: the pool's, the launching one
 * included. */
int amp__cpu_width_pick(amp__cpu_width *w, int threads, bool *timed);
void amp__cpu_width_took(amp__cpu_width *w, int width, uint64_t ns);

/* A kernel's launches, direct and replayed: the widths of its last
 * AMP__CPU_WIDTH_SIZES launch sizes (index points) and hand-offs. Direct
 * launches of more than AMP__CPU_WIDTH_POINTS points run on every thread
 * unlearned: their work outweighs the pool's cost (cpu_launch.c); a
 * graph's, of more than d->graph_alone_points.
 * A launch handed to a replay team costs a thread far less than one
 * published to the pool, so more threads can pay: the two are learned
 * apart. */
#define AMP__CPU_WIDTH_POINTS 262144
enum { AMP__CPU_WIDTH_SIZES = 4 };
typedef enum { AMP__CPU_HANDOFF_POOL, AMP__CPU_HANDOFF_TEAM } amp__cpu_handoff;
typedef struct amp__cpu_widths {
    amp__lock mu; /* leaf (in a forked child, one a parent's thread held stays held: widths not learned) */
    int64_t points[AMP__CPU_WIDTH_SIZES]; /* 0: a free slot */
    amp__cpu_handoff how[AMP__CPU_WIDTH_SIZES];
    amp__cpu_width w[AMP__CPU_WIDTH_SIZES];
    int next; /* the slot a new size takes (the oldest) */
} amp__cpu_widths;
/* NULL without memory (amp__fail says so). */
amp__cpu_widths *amp__cpu_widths_new(void);
void amp__cpu_widths_free(amp__cpu_widths *t);
int amp__cpu_widths_pick(amp__cpu_widths *t, int64_t points, amp__cpu_handoff how, int threads, bool *timed);
void amp__cpu_widths_took(amp__cpu_widths *t, int64_t points, amp__cpu_handoff how, int width, uint64_t ns);

typedef struct amp__cpu_kernel {
    amp__cpu_entry_fn entry;
    amp__cpu_entry_fn tiles; /* NULL: fibers */
    amp__cpu_inflight *inflight; /* its module's */
    amp__cpu_widths *widths;     /* its launches' widths, direct and replayed (owned) */
    bool restrict_views;         /* its device's */
    unsigned streams;            /* parameters it may stream (NAME__amp_streams), 0 when streaming is off */
    uint64_t stream_min;         /* its device's threshold, resolved: streaming, and grouped tiles */
    int tile_group;              /* tile rows a group of its loop version's tiles (NAME__amp_tile_group,
                                  * 2 to AMP__CPU_MAX_TILE_GROUP), 1: none */
    struct amp__cpu_kernel *next;
    /* The record and name as kernel_get handed them to the core: queued
     * launches refer to these instead of copying them (the module outlives
     * its launches in flight). */
    amp__signature sig;
    char name[];
} amp__cpu_kernel;

/* ------------------------------------------------------------- launches
 * A job is one launch. Several run at once (launches from different threads,
 * and each queue's thread), sharing the pool's threads. Four files, each
 * calling only the ones below it:
 *   cpu_launch.c  a launch's hand-off: on the width its kernel learned
 *                 (cpu_width.c), through the pool or a replay team
 *   cpu_team.c    a graph replay's team of pool threads
 *   cpu_pool.c    the pool's threads: publishing a job, joining it,
 *                 waiting for them to leave it
 *   cpu_run.c     a job's record, and its chunks on one thread: fibers,
 *                 loop versions, the kernels' callbacks
 * A lower file reaches a higher one only through a job's function
 * pointers (join, take), which the higher one sets. Their shared
 * structures are at the end of this header (launch internals). */
typedef struct amp__cpu_job amp__cpu_job;
typedef struct amp__cpu_worker amp__cpu_worker;
/* A replay team (cpu_team.c): pool threads engaged for a graph's whole
 * replay, each launch handed to them without the pool's lock. One replay
 * at a time uses a team; NULL where a function takes one: no team. */
typedef struct amp__cpu_team amp__cpu_team;
/* A job for a queue's thread (it runs after the call that made it
 * returns): it keeps a copy of the argument pack, refers to the kernel's
 * name and signature, and holds the kernel's module in flight. About 350
 * bytes and the pack, in one allocation (cpu_run.c). */
amp_status amp__cpu_job_new(const amp__cpu_kernel *k, const amp__launch *l, amp__cpu_job **out);
/* Run to completion on the calling thread and the pool; the kernel's
 * failure (debug checks, divergent barrier, exception) is the status, its
 * message in amp_last_error() (cpu_launch.c). */
amp_status amp__cpu_job_run(amp__cpu_device *d, amp__cpu_job *j);
/* The same on the calling thread and at most width - 1 pool threads
 * (width 0: all of them, as amp__cpu_job_run; 1: alone, no pool thread
 * woken, which for a small launch costs more than the work it would
 * share; cpu_pool.c). */
amp_status amp__cpu_job_run_on(amp__cpu_device *d, amp__cpu_job *j, int width);
/* j on the width its kernel learned for its size, timed where the search
 * or a check wants it (cpu_width.c): what amp__cpu_job_run does for a
 * launch of at most AMP__CPU_WIDTH_POINTS points (unless
 * AMP_CPU_LEARN_WIDTHS=0), and a graph's replay for one of at most
 * d->graph_alone_points (cpu_launch.c). */
amp_status amp__cpu_job_run_learning(amp__cpu_device *d, amp__cpu_job *j, amp__cpu_team *team);
/* NULL without memory (no error is set: a replay runs without a team). */
amp__cpu_team *amp__cpu_team_new(void);
void amp__cpu_team_free(amp__cpu_team *t);
/* Engage up to size - 1 pool threads (the replaying thread is the
 * team's first) until amp__cpu_team_end, which returns the widest launch
 * asked for meanwhile (the next replay's size). Threads come as they are
 * free: any number, none included, and a launch runs whole whoever came. */
amp_status amp__cpu_team_begin(amp__cpu_device *d, amp__cpu_team *t, int size);
int amp__cpu_team_end(amp__cpu_team *t);
/* The width a launch asking for `width` threads (0: every thread) runs
 * on in t, its size at most; amp__cpu_team_run runs j on that many. */
int amp__cpu_team_width(amp__cpu_team *t, int width);
amp_status amp__cpu_team_run(amp__cpu_device *d, amp__cpu_team *t, amp__cpu_job *j, int width);
/* A launch's work in one block a thread (cpu_run.c): blocks_alloc makes
 * room for n blocks (NULL: no memory); blocks_arm cuts j's work into nt
 * blocks in parts and points j at them; take_blocks hands out the next
 * chunk to a thread whose own block is home, its own block's first. */
struct amp__cpu_block *amp__cpu_blocks_alloc(int n);
void amp__cpu_blocks_arm(amp__cpu_job *j, struct amp__cpu_block *parts, int nt);
bool amp__cpu_take_blocks(amp__cpu_job *j, int home, int64_t *b, int64_t *e);
/* The index points j runs (work-items: tiles times a tile's threads). */
int64_t amp__cpu_job_points(const amp__cpu_job *j);
void amp__cpu_job_free(amp__cpu_job *j);
/* Before a job runs again (a graph's replay list runs its jobs at every
 * replay): nothing of an earlier run counts. */
void amp__cpu_job_rearm(amp__cpu_job *j);
/* Run l in the calling thread (a job on its stack, borrowing l). */
amp_status amp__cpu_run(amp__cpu_device *d, const amp__cpu_kernel *k, const amp__launch *l);
/* Bumped in a forked child (pthread_atfork, cpu_pool.c): the pool, and
 * queues made before the fork, see that their threads and queued work
 * stayed in the parent. */
extern unsigned amp__cpu_fork_generation;

/* -------------------------------------------- queues and events (cpu_queue.c)
 * Launches through amp_parallel_for_each* run in the calling thread (their
 * failure is the call's status); asynchronous ones (amp__launch.async) go
 * to the queue's own thread, so launches on different queues overlap.
 * Everything else on a queue (copies, waits) first lets its queued
 * launches finish, and events complete when the queue reaches them. */
amp_status amp__cpu_queue_create(void *dev, void **queue);
void amp__cpu_queue_destroy(void *dev, void *queue);
amp_status amp__cpu_queue_wait(void *dev, void *queue);
amp_status amp__cpu_queue_wait_for(void *dev, void *queue, uint32_t ms);
amp_status amp__cpu_queue_wait_event(void *dev, void *queue, void *event);
/* end: backend.h's (attached to the queued item before it is queued). */
amp_status amp__cpu_queue_launch(void *dev, void *queue, void *fn, const amp__launch *l, void **end);
/* Wait (host side) until what the queue holds now has run (an event at its
 * tail: work queued meanwhile by other threads is not waited for). */
void amp__cpu_queue_drain(void *queue);
amp_status amp__cpu_event_record(void *dev, void *queue, void **event);
amp_status amp__cpu_event_record_timed(void *dev, void *queue, void **event);
amp_status amp__cpu_event_elapsed(void *dev, void *start, void *end, float *ms);
amp_status amp__cpu_event_wait(void *dev, void *event);
amp_status amp__cpu_event_wait_for(void *dev, void *event, uint32_t ms);
amp_status amp__cpu_event_query(void *dev, void *event, bool *done);
void amp__cpu_event_release(void *dev, void *event);

/* ------------------------------------------- launch graphs (cpu_graph.c)
 * A replay list: launches recorded on a queue (graph_begin..graph_end,
 * backend.h) as jobs set up once, copies as their bytes; a replay runs
 * them in order (a job may run any number of times), on a team of pool
 * threads engaged for the replay where they spin (d->graph_team,
 * cpu_team.c), small launches on their learned width
 * (d->graph_alone_points; cpu_graph.c). */
typedef struct amp__cpu_graph amp__cpu_graph;
amp_status amp__cpu_graph_new(amp__cpu_graph **out);
amp_status amp__cpu_graph_add_launch(amp__cpu_device *d, amp__cpu_graph *g, const amp__cpu_kernel *k,
                                     const amp__launch *l);
amp_status amp__cpu_graph_add_copy(amp__cpu_graph *g, const amp__copy *c);
size_t amp__cpu_graph_size(const amp__cpu_graph *g);
/* Run every command in order on the calling thread and the pool (or the
 * replay's team); the first failure ends the replay and is its status. node_ns (may be NULL):
 * each command's start and end (backend.h). */
amp_status amp__cpu_graph_run(amp__cpu_device *d, amp__cpu_graph *g, uint64_t *node_ns);
void amp__cpu_graph_free(amp__cpu_graph *g);
/* The queue's recording (NULL when it is not recording). */
amp__cpu_graph *amp__cpu_queue_recording(void *queue);
/* The backend's graph operations (cpu_queue.c). */
amp_status amp__cpu_graph_begin(void *dev, void *queue);
amp_status amp__cpu_graph_end(void *dev, void *queue, bool keep, void **graph);
amp_status amp__cpu_graph_launch(void *dev, void *queue, void *graph, bool async, uint64_t *node_ns, void **end);
void amp__cpu_graph_destroy(void *dev, void *graph);
/* A copy's bytes, now, on the calling thread: a replay's copy, and the
 * backend's copy op (cpu_graph.c). */
void amp__cpu_copy_bytes(const amp__copy *c);

/* ------------------------------------------------------- loop version
 * Largest tile_static + work-item context a loop version may keep on its
 * stack (the loop transformation, lib/cpu/loops/, refuses larger kernels;
 * cpu_run.c sizes the loop runner's stack for it). */
#define AMP__CPU_LOOP_FRAME_MAX (1024 * 1024)

/* ------------------------------------------------------- module images
 * tile_static memory is static thread_local in a module (amp_cpu_prelude.hpp)
 * and a plain local of a loop version; cpu_elf.c reads the former from the
 * module's symbol table. */
typedef struct amp__cpu_tls_sym {
    char *name;
    size_t size;
    bool anywhere; /* referenced from code outside every function the graph knows: counted for every kernel */
} amp__cpu_tls_sym;
/* A function of the module's call graph: [addr, addr + size) of its code,
 * what it references (edges[edge0, edge0 + nedges): e >= 0 the function
 * fns[e], e < 0 the thread-local syms[-1 - e]) and what is known of it. */
enum {
    AMP__CPU_FN_ESCAPED = 1, /* its address is taken (data, or code that does not call it): any kernel may call it */
    AMP__CPU_FN_UNKNOWN = 2  /* references code or thread-local memory the graph cannot name: may reach any */
};
typedef struct amp__cpu_fn {
    uint64_t addr, size;
    uint32_t edge0, nedges;
    unsigned flags;
} amp__cpu_fn;
typedef struct amp__cpu_export { char *name; uint32_t fn; } amp__cpu_export; /* NAME__amp_entry, __amp_tiles */
typedef struct amp__cpu_tls {
    amp__cpu_tls_sym *syms; /* defined STT_TLS symbols */
    size_t n, cap;
    size_t segment;         /* the PT_TLS segment's size */
    bool have_symbols;      /* a symbol table was found */
    /* The call graph, from the relocations the link kept (-ffunction-sections
     * makes every call between two functions a relocation; -Wl,--emit-relocs
     * keeps them in the module). Without it (have_graph false: another
     * architecture than x86-64 and AArch64, a module without them, a
     * relocation the reader cannot follow) every thread-local no kernel's
     * body declares counts for every kernel. */
    bool have_graph;
    amp__cpu_fn *fns;       /* by address */
    size_t nfns;
    int32_t *edges;
    size_t nedges;
    amp__cpu_export *exports;
    size_t nexports;
} amp__cpu_tls;

/* Read the thread-local symbols of an ELF image and, where it can, its call graph (bounds-checked: it
 * may come from the disk cache; nothing read is trusted to be consistent, only to lie inside the
 * image). AMP_ERROR_DEVICE when it is not a 64-bit ELF file; AMP_ERROR_OUT_OF_MEMORY. */
amp_status amp__cpu_elf_tls(const void *bin, size_t size, amp__cpu_tls *out);
void amp__cpu_elf_tls_free(amp__cpu_tls *t);
/* Whether the module's image names a needed library (DT_NEEDED) starting with prefix ("libasan");
 * its name into name[cap]. False where the image has no dynamic section it can read (every offset
 * bounds-checked). And whether it is a 64-bit ELF shared object at all (what a build gives). */
bool amp__cpu_elf_needs(const void *bin, size_t size, const char *prefix, char *name, size_t cap);
bool amp__cpu_elf_is_shared_object(const void *bin, size_t size);
/* A build split across compiler processes (cpu_split.c). */
typedef struct amp__cpu_split_job {
    char *const *words;   /* the compiler and every option before the outputs: argv[0, nwords) */
    size_t nwords;
    size_t user_from;     /* the user's options: words[user_from, nwords) */
    char *const *envp;
    int dirfd;            /* the private build directory, held open */
    const char *dir;      /* and its path */
    const char *src;      /* the unit, written there */
    const char *pch;      /* -include this precompiled header (NULL: none) */
    const char *dep;      /* the dependency file: every part's, made one */
    const char *as_dep;   /* the assembler's dependency file, every part's made one (NULL: none asked) */
    const char *so;       /* the module to link */
    const char *user;     /* the user's part of the unit: its kernels are looked for there */
    uint64_t deadline;    /* monotonic ns */
    int jobs;             /* compiler processes at most (amp__cpu_split_jobs) */
} amp__cpu_split_job;
/* AMP_CPU_COMPILE_JOBS, 1..8; by default the CPUs this process may run on,
 * at most 8. */
int amp__cpu_split_jobs(void);
/* Compiles the unit in parts (at most job->jobs, no more than its
 * kernels) at once and links them into job->so. 1: linked; note says in how
 * many parts. 0: not split (fewer than two kernels or jobs, or a source
 * amp__cpu_split_allowed refuses), or a part did not compile, or two parts
 * would each have a copy of one writable variable of internal linkage, or
 * the link failed: note says which; the caller compiles the unit whole
 * (which reports any error). -1: the deadline passed. Blocks; threads of
 * its own wait for the compilers. */
int amp__cpu_split_build(const amp__cpu_split_job *job, char *note, size_t cap);
/* Whether a source may be compiled in parts (cpu_split_scan.c): every
 * top-level declaration of the user's part one a part's copy of cannot
 * change (kernels, templates, types, aliases, static assertions, constexpr,
 * inline functions, static functions without local statics, const
 * arithmetic constants), #includes of standard headers only, no #define
 * that declares, no option or variable adding include paths. Returns the
 * part's code (lines spliced; comments, literals and directives blanked;
 * the caller frees it), or NULL with why set. Any text is input:
 * fuzz/fuzz_split_scan.c. */
char *amp__cpu_split_allowed(const char *user, char *const *options, size_t noptions, char *why, size_t cap);
/* A kernel of a split build: its name (malloc'ed), the define that leaves
 * it out of other parts (cpu_split.c), its weight (a tiled kernel's code
 * about twice a simple one's) and its part. */
typedef struct amp__cpu_split_kernel {
    char *name, *define;
    int weight, part;
} amp__cpu_split_kernel;
/* The kernels of that code: AMP_KERNEL( name and AMP_TILED_KERNEL( name,
 * as whole words, each once, into k (names and weights). One that a macro
 * hides is defined in every part and fails the link. The count, or -1:
 * more than max, or no memory (the names made so far are the caller's). */
int amp__cpu_split_kernels(const char *code, amp__cpu_split_kernel *k, int max);
/* Calls fn(ctx, name) for each symbol of an object file (ET_REL) that is a
 * local (internal linkage) variable in writable memory, thread-local ones
 * included (not constant data relocated at load, .data.rel.ro); stops
 * when fn returns false. The count seen, or -1: not an ELF file whose
 * section and symbol tables it can read. */
typedef bool (*amp__cpu_name_fn)(void *ctx, const char *name);
int amp__cpu_elf_local_data(const void *bin, size_t size, amp__cpu_name_fn fn, void *ctx);
/* cpu_options.c: AMP_ERROR_INVALID_ARGUMENT, naming the word, where one of
 * the user's option words (n of them) is one the CPU accelerator refuses
 * (see there); AMP_OK otherwise. */
amp_status amp__cpu_refuse_user_options(const amp__cpu_device *d, char *const *words, size_t n);
/* tile_static bytes of kernel: own (what its loop version declares, 0 for a
 * fiber kernel) + the thread-locals of its body + the other thread-locals
 * (a helper's tile_static, a thread_local of the user's) that its entry
 * points reach through the call graph (any function whose address is taken
 * counted as reached), or every one of them where the graph cannot say
 * (*traced false; traced may be NULL); the library's own and the C++
 * runtime's are not counted. Without a symbol table, the whole
 * thread-local segment. others (cap bytes, may be NULL) gets the names and
 * sizes of the other thread-locals counted. */
size_t amp__cpu_tile_static_bytes(const amp__cpu_tls *t, const char *kernel, size_t own, char *others, size_t cap,
                                  bool *traced);

/* -------------------------------------------------------------- fibers
 * A saved execution context. amp__cpu_ctx_switch stores the running context
 * in *from and resumes *to; it returns when something switches back to
 * *from. A context's function never returns, and a context, once started,
 * is never abandoned: every switch away from it is resumed later (fibers and
 * the loop runner park between tiles, cpu_run.c). The tools keep state per
 * context (ThreadSanitizer a shadow stack of the calls in progress, ASan a
 * fake stack), and a context left mid-call and started afresh would leave
 * that state behind at each launch until it overflowed.
 * AMP_CPU_FORCE_UCONTEXT (build define) selects the portable path anywhere,
 * to test it.
 *
 * Stack switches are invisible to AddressSanitizer, ThreadSanitizer and
 * valgrind unless announced: builds with those sanitizers (their macros)
 * annotate every switch, and stacks are registered with valgrind when its
 * client-request header is present (a no-op outside valgrind). */
#if defined(__SANITIZE_ADDRESS__)
#define AMP__CPU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define AMP__CPU_ASAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define AMP__CPU_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define AMP__CPU_TSAN 1
#endif
#endif
#ifndef AMP__CPU_ASAN
#define AMP__CPU_ASAN 0
#endif
#ifndef AMP__CPU_TSAN
#define AMP__CPU_TSAN 0
#endif
#if AMP__CPU_ASAN
void __sanitizer_start_switch_fiber(void **fake_stack_save, const void *bottom, size_t size);
void __sanitizer_finish_switch_fiber(void *fake_stack_save, const void **bottom_old, size_t *size_old);
#endif
#if AMP__CPU_TSAN
void *__tsan_get_current_fiber(void);
void *__tsan_create_fiber(unsigned flags);
void __tsan_destroy_fiber(void *fiber);
void __tsan_switch_to_fiber(void *fiber, unsigned flags);
#endif

/* What the tools need to know of a context: the stack it runs on (NULL: a
 * thread's own, learnt when a context it switched to resumes), ASan's fake
 * stack while it is suspended, the context that switched to it last (ASan),
 * TSan's fiber. */
struct amp__cpu_ctx;
typedef struct amp__cpu_ctx_tools {
    const void *lo;
    size_t size;
    void *fake;
    struct amp__cpu_ctx *resumer;
    void *tsan;
} amp__cpu_ctx_tools;

#if (defined(__x86_64__) || defined(__aarch64__)) && !defined(AMP_CPU_FORCE_UCONTEXT)
#define AMP__CPU_ASM_SWITCH 1
typedef struct amp__cpu_ctx { void *sp; amp__cpu_ctx_tools t; } amp__cpu_ctx;
/* cpu_switch.S */
void amp__cpu_switch_asm(void **save_sp, void *new_sp);
#define AMP__CPU_RAW_SWITCH(from, to) amp__cpu_switch_asm(&(from)->sp, (to)->sp)
#else
#define AMP__CPU_ASM_SWITCH 0
#include <ucontext.h>
typedef struct amp__cpu_ctx { ucontext_t uc; amp__cpu_ctx_tools t; } amp__cpu_ctx;
#define AMP__CPU_RAW_SWITCH(from, to) swapcontext(&(from)->uc, &(to)->uc)
#endif

/* A thread's own context, before its first switch: records what the tools
 * need (TSan's fiber of the thread; its stack's bounds are learnt again). */
static inline void amp__cpu_ctx_thread(amp__cpu_ctx *c)
{
    c->t.lo = NULL;
    c->t.size = 0;
    c->t.fake = NULL;
    c->t.resumer = NULL;
#if AMP__CPU_TSAN
    c->t.tsan = __tsan_get_current_fiber();
#endif
}

#if AMP__CPU_ASAN
/* ASan, in self as it resumes (fake: its fake stack, NULL when it just
 * started): finish the switch, and learn the bounds of the stack that
 * switched to it when that is a thread's own (still unknown). */
static inline void amp__cpu_ctx_resumed(amp__cpu_ctx *self, void *fake)
{
    const void *lo = NULL;
    size_t size = 0;
    __sanitizer_finish_switch_fiber(fake, &lo, &size);
    struct amp__cpu_ctx *r = self->t.resumer;
    if (r && !r->t.lo) {
        r->t.lo = lo;
        r->t.size = size;
    }
}
#endif

static inline void amp__cpu_ctx_switch(amp__cpu_ctx *from, amp__cpu_ctx *to)
{
#if AMP__CPU_ASAN
    to->t.resumer = from;
    __sanitizer_start_switch_fiber(&from->t.fake, to->t.lo, to->t.size);
#endif
#if AMP__CPU_TSAN
    __tsan_switch_to_fiber(to->t.tsan, 0);
#endif
    AMP__CPU_RAW_SWITCH(from, to);
#if AMP__CPU_ASAN
    amp__cpu_ctx_resumed(from, from->t.fake); /* back in `from` */
#endif
}

/* First thing a context's function does (self just started). */
static inline void amp__cpu_ctx_entered(amp__cpu_ctx *self)
{
#if AMP__CPU_ASAN
    amp__cpu_ctx_resumed(self, NULL);
#else
    (void)self;
#endif
}

/* A fiber stack: mmap'ed, with a PROT_NONE guard page below it (always:
 * amp__cpu_stack_alloc fails where the guard cannot be made); registered
 * with the tools. */
typedef struct amp__cpu_stack {
    void *map;
    size_t map_size;
    void *lo;
    size_t size;
    unsigned vg_id;  /* valgrind's id for it */
    void *tsan;      /* TSan's fiber for contexts on it */
} amp__cpu_stack;
amp_status amp__cpu_stack_alloc(size_t size, amp__cpu_stack *s);
void amp__cpu_stack_free(amp__cpu_stack *s);
/* mprotect(lo, len, PROT_NONE); AMP_ERROR_OUT_OF_MEMORY (naming
 * vm.max_map_count and the process's mappings where that is why) when it
 * fails. */
amp_status amp__cpu_stack_guard(void *lo, size_t len);

/* Prepare ctx to run fn(arg) on stack s at the next switch to it. */
void amp__cpu_ctx_make(amp__cpu_ctx *ctx, const amp__cpu_stack *s, void (*fn)(void *), void *arg);

/* ---------------------------------------------------- launch internals
 * Shared by cpu_run.c, cpu_pool.c, cpu_team.c and cpu_launch.c (the
 * launches section says which calls which); nothing else uses them. */

/* A block of a launch's work: [next, end), taken from the front, and (a
 * team's) whether a member holds the rank it belongs to. Each on a line
 * of its own. */
typedef struct amp__cpu_block {
    _Alignas(64) _Atomic int64_t next;
    int64_t end;
    atomic_bool taken;
} amp__cpu_block;

struct amp__cpu_job {
    amp__cpu_launch launch; /* what the kernel reads */
    amp__cpu_entry_fn entry;
    amp__cpu_entry_fn tiles; /* the loop version, or NULL: fibers */
    const amp__launch *l;    /* the core's, or own_l for a job that outlives the call */
    amp__launch own_l;       /* a queued job's: the kernel's name and signature (its
                                module's, which outlives the job), the pack after the job */
    amp__cpu_inflight *inflight; /* its module's count (queued jobs) */
    amp__cpu_widths *widths;     /* its kernel's launch widths (cpu_width.c) */
    /* A replay team's recruiting job: the thread that picks it runs join
     * instead of taking chunks, and is a member of team while join runs
     * (cpu_team.c); NULL: an ordinary job. */
    void (*join)(amp__cpu_job *recruit, amp__cpu_worker *w, size_t stack_size);
    amp__cpu_team *team;
    /* A launch on a team: take hands out its work in nparts blocks, the
     * rank's own first (cpu_team.c); NULL: one counter, next. Set and
     * cleared by the team's leader while no member is inside the launch. */
    bool (*take)(amp__cpu_job *j, const amp__cpu_worker *w, int64_t *b, int64_t *e);
    amp__cpu_block *parts;
    int nparts;
    int64_t total; /* simple: work-items; tiled: tiles */
    int64_t min_chunk;
    int nthreads;  /* threads that may take chunks */
    _Atomic int64_t next;
    atomic_int stop; /* a failure was recorded: take no more chunks */
    pthread_mutex_t err_lock; /* leaf lock: guards status and msg */
    amp_status status;
    char *msg;    /* made with the first failure (NULL: no memory for it) */
    /* Pool threads inside this job: changed only under the pool's mu, read
     * without it by the launcher waiting for them to leave (acquire: it
     * then sees what they wrote; cpu_pool.c gives the invariants). */
    atomic_int refs;
    bool closing; /* the launcher sleeps on the pool's idle until refs is 0; guarded by its mu */
};

/* Per-thread run state. Only the thread owning the slot touches it while a
 * job runs; slots persist across launches so fibers and their stacks are
 * reused. Each pool thread has one, each launching thread its own
 * (cpu_pool.c). */
struct amp__cpu_worker {
    amp__cpu_job *job;
    int rank; /* in the replay team it is in (0: its leader) */
    /* Its block of a direct launch (cpu_pool.c's amp__cpu_take_home): a
     * pool thread's slot, 0 for a launching thread. */
    int home;
    /* A launching thread's blocks for its direct launches (room for
     * home_cap), made at its first launch on more than one thread. */
    amp__cpu_block *home_parts;
    int home_cap;
    struct amp__cpu_fiber **fibers; /* cpu_run.c's, each allocated alone: a parked
                                       context's address stays */
    int nfibers; /* fibers with a stack */
    amp__cpu_ctx main; /* the thread's own context while its fibers run */
    /* The tile running now. Invariant while fibers run: arrived counts the
     * live fibers suspended at the current barrier; it returns to 0 when the
     * last one arrives, and fibers are resumed in round-robin order, so a
     * fiber is resumed only after its barrier was released. */
    int n, arrived, done;
    bool saw_barrier; /* some work-item of this tile met a barrier */
    bool loop_mode;   /* work-items 1..n-1 run as a plain loop */
    bool broken;      /* divergent barrier found: barriers are no-ops now */
    /* The work-item the plain loop was running when it met a barrier; it
     * then takes its turns through main (cpu_run.c amp__cpu_loop_to_fibers).
     * -1: none. */
    int loop_id;
    amp__cpu_item loop_item;
    /* Loop versions run on their own stack: their frame holds the tile's
     * tile_static memory and work-item context (up to
     * AMP__CPU_LOOP_FRAME_MAX), more than a caller's thread may have. */
    amp__cpu_stack tiles_stack;
    amp__cpu_ctx tiles_ctx;
    bool tiles_started; /* tiles_ctx runs amp__cpu_tiles_main (parked between chunks) */
    amp__cpu_item tiles_item;
    bool in_tiles; /* a loop version runs: a barrier call is an error */
};

/* A job and its chunks on one thread (cpu_run.c). */
/* Fill j (zeroed) for launch l of kernel; j borrows l. */
void amp__cpu_job_init(amp__cpu_job *j, const amp__cpu_kernel *kernel, const amp__launch *l);
/* Whether every view or array of l's pack that the kernel may write reaches
 * bytes no other view or array of the pack reaches (read-only ones may
 * share), and l has no struct parameter (which may carry an address): the
 * condition for the restrict path (amp__cpu_launch.noalias).
 * Reads l->sig and l->pack only. */
bool amp__cpu_views_disjoint(const amp__launch *l);
/* The 256ths of each block of a streamed launch written with plain stores
 * where the recent launches cover `bytes` against the threshold `min`; -1:
 * the launch is not streamed (cpu_run.c). */
int amp__cpu_stream_keep(uint64_t bytes, uint64_t min);
/* What job_free and a job on the stack both let go of. */
void amp__cpu_job_fini(amp__cpu_job *j);
/* j made ready to run on nt threads (the launcher's included); its chunks. */
int64_t amp__cpu_job_arm(amp__cpu_job *j, int nt);
/* j's own status, moved to the calling thread's last error. */
amp_status amp__cpu_job_status(amp__cpu_job *j);
/* Thread w takes chunks of j until none is left or j failed (or runs
 * j->join for it). The caller sets w->job to NULL afterwards. */
void amp__cpu_run_chunks(amp__cpu_job *j, amp__cpu_worker *w, size_t stack_size);
/* A slot's fibers and stacks, and the slot (the pool's pthread key
 * destructor). */
void amp__cpu_worker_free(void *w);

/* The pool (cpu_pool.c). */
/* A bounded spin: amp__cpu_spin_more pauses the core once and says whether
 * to go on (cpu_pool.c says when it stops early). own: a replay team
 * member's wait, which being descheduled ends for it alone. */
typedef struct amp__cpu_spin {
    uint64_t ns, deadline, last; /* deadline 0: no clock read yet */
    unsigned polls;
    bool own;
} amp__cpu_spin;
bool amp__cpu_spin_more(amp__cpu_spin *s);
/* The calling thread's slot, the pool started (on first use, and again in
 * a forked child). */
amp_status amp__cpu_launcher(amp__cpu_device *d, amp__cpu_worker **me);
/* The pool's one-time set-up: its locks, its thread key and the fork
 * handlers that bump amp__cpu_fork_generation (before any queue exists). */
void amp__cpu_pool_init(void);
/* A pool slot whose thread did not survive a fork: its fibers' and loop
 * stack's parked contexts are dropped (made again at their next use; the
 * stacks are kept). */
void amp__cpu_worker_abandon_contexts(amp__cpu_worker *w);
/* The calling thread's own slot (its fibers and stacks persist across its
 * launches), or NULL without memory. */
amp__cpu_worker *amp__cpu_my_worker(void);
/* Threads a job may use: the pool's started ones and the launching one.
 * Read without a lock: it changes only while the pool starts, before the
 * launch that starts it reads it. */
int amp__cpu_pool_threads(void);
/* How long an idle pool thread spins (AMP_CPU_SPIN_US), 0: never; set
 * before the threads start. */
uint64_t amp__cpu_pool_spin_ns(void);
/* The index of pool thread w's slot (1 to the pool's threads - 1). */
int amp__cpu_pool_slot(const amp__cpu_worker *w);
/* Put j (armed) in the pool's table for up to nwake pool threads to join
 * (busy threads find it when they finish theirs); false with the table
 * full: the caller runs it alone. */
bool amp__cpu_job_publish(amp__cpu_job *j, int64_t nwake);
/* Published j, every chunk of which is taken, out of the table; returns
 * once the pool threads inside it left: their writes are seen, and j may
 * be reused or freed. */
void amp__cpu_job_close(amp__cpu_job *j);

#endif /* AMP_CPU_INTERNAL_H */
