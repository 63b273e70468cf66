/* include_scan.h — the include scan (lib/includes/include_scan.c): the headers a
 * kernel source includes, found as its compiler finds them, refused where
 * another user could have put them, keyed, and the #include lines rewritten
 * so that the compiler reads what was found. A layer of its own between the
 * backend contract and its two users, the core's builds and
 * amp_compile_for_target (lib/gpu/amd_target.c): ci/check-layers.py. */
#ifndef AMP_INCLUDE_SCAN_H
#define AMP_INCLUDE_SCAN_H

#include "backend.h"
#include "base/core.h"

/* What identifies a build (the in-memory cache's key, lib/core/compile_cache.c)
 * and what the scan reads: the exact inputs. */
typedef struct amp__build_input {
    const char *source;
    size_t source_len;
    const char *options;     /* NULL: none */
    const char *source_name; /* for diagnostics and __FILE__ */
    const char *source_dir;  /* where quoted includes resolve (NULL: none) */
    const char *search;      /* what else decides where headers are found (amp__scan_context; NULL: nothing) */
} amp__build_input;

/* A header a build depended on, as it was when keyed; or (absent) a place
 * the scan looked for a header and found nothing, where one appearing would
 * change what the compiler reads. */
typedef struct amp__dep {
    char *path;
    uint64_t dev, ino, size;
    int64_t mtime_ns, ctime_ns;
    bool absent;
} amp__dep;


/* Where one #include of a scanned text points: text 0 is the source, text
 * i + 1 header i; open and close are the offsets of the name's delimiters
 * ('"' or '<', '"' or '>'); header is the header's index, or: */
#define AMP__SITE_MISSING (-1)  /* found nowhere the scan looked */
#define AMP__SITE_COMPILER (-2) /* in the compiler's own directories: not keyed */
typedef struct amp__include_site {
    size_t text, open, close;
    long header;
    bool angled;
} amp__include_site;

/* The headers a source includes, found the way the compiler would look for
 * them (an absolute name as it is; a quoted one beside the file that
 * includes it, then beside the kernel file, then in -iquote directories;
 * then -I / --include-path, the backend's -I-like include-path variables,
 * -isystem, its -isystem-like ones, the compiler's own directories (sys; those of kind COMPILER end the
 * search unkeyed) and -idirafter), read whole. A name found beside its
 * includer (or absolute) where someone who could not have changed the
 * includer could have put it fails the scan with AMP_ERROR_COMPILE saying
 * who. complete is false when something could not be tracked (a computed
 * #include): the build then skips the disk cache, and why says so. forced
 * counts -include options (their headers are keyed too). */
typedef struct amp__scan {
    amp__header *headers; /* flat name, path, content (owned) */
    amp__dep *deps;       /* stamps of the same files, same order */
    size_t n;
    amp__include_site *sites; /* every #include of every text, in order */
    size_t nsites;
    size_t forced;
    amp__dep *absent; /* where a lookup found nothing (before a find, or none), and other paths of a header */
    size_t nabsent;
    bool complete;
    char why[256];
    size_t probes; /* entries compared to find a header or a place already noted (each lookup O(1): tests) */
} amp__scan;
/* The compiler's default include directories, asked for (get(ctx)) only
 * when a lookup reaches them: finding them may run the compiler (the CPU
 * backend's `-E -v`), which a source that includes nothing, or only files
 * beside it, should not wait for. get NULL, or a NULL or empty list: none. */
typedef struct amp__sys_dirs_query {
    const amp__sys_dir *(*get)(void *ctx);
    void *ctx;
} amp__sys_dirs_query;
amp_status amp__scan_includes(const amp__build_input *in, const amp__include_env *env_vars, amp__sys_dirs_query sys,
                              amp__scan *out);
void amp__scan_free(amp__scan *s);
/* What besides a build's inputs decides where its headers are found, for
 * the in-memory cache's key (*out malloc'ed, NULL when nothing): the
 * values of the include-path variables env names, and the working
 * directory where the options or those values name a directory or a
 * forced include relatively (the compiler takes it from there). */
amp_status amp__scan_context(const char *options, const amp__include_env *env, char **out);
/* The source with its #include lines rewritten (*out, malloc'ed) so that
 * the compiler looks for no header where the scan did not: for a
 * named-header compiler (named) every header by its flat name, and, in
 * *headers (may be NULL; malloc'ed, n entries sharing the scan's names and
 * paths, freed with amp__scan_rewrite_free), each header's content after a
 * #line naming its file, rewritten the same way; for a compiler that reads
 * files (the CPU's), quoted names in the source by the path the scan found,
 * unfound ones as <name>. */
amp_status amp__scan_rewrite(const amp__scan *s, const char *source, size_t len, bool named, char **out,
                             amp__header **headers);
void amp__scan_rewrite_free(amp__header *headers, size_t n);
/* AMP_OK when a named-header compiler can be given what s found: no
 * computed #include, no -include option (AMP_ERROR_COMPILE saying why). */
amp_status amp__named_check(const amp__scan *s);
/* A dep's file still has the stamp it had. */
bool amp__dep_fresh(const amp__dep *d);
/* Whether the file at path is still d's (device, inode, size) and holds,
 * byte for byte, the content h was read with: a rewrite of the same size
 * within the file system's timestamp tick leaves amp__dep_fresh's stamps
 * as they were. Reads the file; false when it cannot. */
bool amp__dep_holds(const amp__dep *d, const char *path, const amp__header *h);
/* Stamp the file at path now (d->path a malloc'ed copy); false when it
 * cannot be stat'ed or no memory. */
bool amp__dep_stamp(amp__dep *d, const char *path);


/* A source ready for a compiler that takes headers by name (hipRTC, NVRTC)
 * outside a build (amp_compile_for_target, amp_compile_file_for_target):
 * its includes found as a build finds them (quoted names beside the kernel
 * file source_dir, under the rule for headers beside their includer, then
 * through -iquote and -I; source_name and source_dir NULL for a string),
 * the #include lines rewritten to the headers' flat names.
 * sys: the compiler's default directories (may be NULL). Free with
 * amp__named_unit_free. AMP_ERROR_COMPILE for what cannot be given by name
 * (a computed #include, -include) or a refused header. */
typedef struct amp__named_unit {
    char *source;
    char *options; /* the options without -iquote (amp__named_options) */
    amp__header *headers;
    size_t nheaders;
} amp__named_unit;
amp_status amp__named_unit_make(const char *source, const char *source_name, const char *source_dir,
                                const char *options, const amp__sys_dir *sys,
                                amp__named_unit *out);
void amp__named_unit_free(amp__named_unit *u);
/* options (may be NULL: *out NULL) without its -iquote words, malloc'ed: a
 * named-header compiler needs none (every quoted #include is rewritten) and
 * NVRTC refuses them, but the scan honours them on every accelerator. */
amp_status amp__named_options(const char *options, char **out);
/* Whether a unit's text names anything of the device library
 * (amp__device_lib_wanted): its source, each of its nheaders headers, its
 * options (a -D may name one). A GPU build compiles a unit that names
 * nothing of it without it (amp__compile_on_demand). */
bool amp__unit_wants_device_lib(const char *source, const amp__header *headers, size_t nheaders,
                                const char *options);

#endif /* AMP_INCLUDE_SCAN_H */
