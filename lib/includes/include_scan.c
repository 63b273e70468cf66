/* include_scan.c — finds the headers a kernel source includes, the way its
 * compiler looks for them, and reads them whole: the compile cache is keyed
 * on their content, and compilers that take named headers are handed
 * exactly what was keyed. A header found relative to the file that includes
 * it is refused when a user who could not have changed that file could have
 * put it, or a directory on its way, there. amp__scan_rewrite then rewrites
 * the #include lines so that no compiler looks for a header anywhere the
 * scan did not (include_rewrite.c): not beside a temporary file (the CPU
 * compiler's unit, hipRTC's), not in the process's working directory
 * (NVRTC's). The directives are found as the preprocessor reads them
 * (include_lex.c). A header that is not a regular file (a FIFO, a device)
 * is refused before anything could block on it. Over-approximating is harmless (a header that a false
 * #if skips is still keyed); what cannot be tracked (a computed #include)
 * marks the scan incomplete. */
#include "include_scan.h"
#include "include_lex.h"
#include "base/trusted_path.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define AMP__SCAN_MAX_HEADERS 4096
#define AMP__SCAN_MAX_ABSENT 4096
#define AMP__SCAN_MAX_BYTES (64u << 20) /* one header; and all of them together */
#define AMP__RESOLVE_FAILED (-3)        /* amp__resolve: the status is set (AMP__SITE_* are -1, -2) */

/* ------------------------------------------------- search directories */

typedef struct amp__dir {
    char *path;
    int kind; /* 0: named in the options or the environment; else AMP__DIR_* */
} amp__dir;

/* Search directories in the order a compiler uses them. */
typedef struct amp__dirs {
    amp__dir *v;
    size_t n, cap;
    size_t quote_end;   /* [0, quote_end): -iquote, searched for "x" only */
    size_t bracket_end; /* [quote_end, bracket_end): -I and CPATH-like; the system chain after */
    size_t sys_at;      /* where the compiler's own go: after -isystem, before -idirafter */
} amp__dirs;

/* A relative directory is taken from the working directory, as the compiler
 * takes it (as_is: kept as written): named absolutely, a rewritten #include
 * means the same file. */
static bool amp__dirs_add(amp__dirs *d, const char *dir, size_t len, int kind, bool as_is)
{
    if (len == 0) return true;
    if (d->n == d->cap) {
        size_t cap = d->cap ? 2 * d->cap : 16;
        amp__dir *p = realloc(d->v, cap * sizeof *p);
        if (!p) return false;
        d->v = p;
        d->cap = cap;
    }
    char cwd[PATH_MAX] = "";
    if (!as_is && dir[0] != '/' && !getcwd(cwd, sizeof cwd)) cwd[0] = '\0';
    size_t cl = cwd[0] ? strlen(cwd) + 1 : 0;
    char *s = malloc(cl + len + 1);
    if (!s) return false;
    if (cl) {
        memcpy(s, cwd, cl - 1);
        s[cl - 1] = '/';
    }
    memcpy(s + cl, dir, len);
    s[cl + len] = '\0';
    d->v[d->n++] = (amp__dir){s, kind};
    return true;
}

static void amp__dirs_free(amp__dirs *d)
{
    for (size_t i = 0; i < d->n; ++i) free(d->v[i].path);
    free(d->v);
    memset(d, 0, sizeof *d);
}

static bool amp__dirs_append(amp__dirs *to, const amp__dirs *from)
{
    bool ok = true;
    for (size_t i = 0; ok && i < from->n; ++i) ok = amp__dirs_add(to, from->v[i].path, strlen(from->v[i].path), from->v[i].kind, true);
    return ok;
}

/* The directories of the environment variables of env that are (system)
 * -isystem-like or not, in order; an empty element is the working
 * directory, as the compiler takes it. */
static bool amp__env_dirs(amp__dirs *dirs, const amp__include_env *env, bool system)
{
    bool ok = true;
    for (size_t e = 0; ok && env && env[e].name; ++e) {
        const char *v = env[e].system == system ? amp__env(env[e].name) : NULL;
        while (ok && v) {
            const char *colon = strchr(v, ':');
            size_t n = colon ? (size_t)(colon - v) : strlen(v);
            ok = n ? amp__dirs_add(dirs, v, n, 0, false) : amp__dirs_add(dirs, ".", 1, 0, false);
            v = colon ? colon + 1 : NULL;
        }
    }
    return ok;
}

/* Options that move the compiler's own directories or add ones the scan
 * does not model (matched as prefixes, before the options below): with
 * one, the scan cannot say where the compiler looks. */
static const char *const amp__unfollowed_options[] = {
    "-iprefix",     "-iwithprefix", "-isysroot",     "--sysroot", "-nostdinc", "-nostdlibinc",  "-nobuiltininc",
    "-cxx-isystem", "-isystem-after", "-iwithsysroot", "-iframework", "-include-pch", "--system-header-prefix", "-F",
};

static bool amp__unfollowed_option(const char *w)
{
    if (!strcmp(w, "-I-")) return true;
    for (size_t f = 0; f < sizeof amp__unfollowed_options / sizeof amp__unfollowed_options[0]; ++f)
        if (!strncmp(w, amp__unfollowed_options[f], strlen(amp__unfollowed_options[f]))) return true;
    return false;
}

/* The argument of the include option at argv[*i] (*i moved past a separate
 * argument) and, in *where, its kind (0 -iquote, 1 -I, 2 -isystem, 3
 * -idirafter, 4 -include or -imacros: a header read first); NULL when
 * argv[*i] is none. A short option takes its argument joined or as the
 * next word, a long one (--) after '=' or as the next word. */
static const char *amp__include_option(char **argv, size_t argc, size_t *i, int *where)
{
    static const struct {
        const char *flag;
        int where;
    } flags[] = {
        {"-iquote", 0},           {"-I", 1},           {"--include-path", 1},  {"--include-directory", 1},
        {"-isystem", 2},          {"-idirafter", 3},   {"--include-directory-after", 3}, {"-include", 4},
        {"--pre-include", 4},     {"--include", 4},    {"-imacros", 4},        {"--imacros", 4},
    };
    const char *w = argv[*i];
    if (amp__unfollowed_option(w)) return NULL;
    for (size_t f = 0; f < sizeof flags / sizeof flags[0]; ++f) {
        size_t n = strlen(flags[f].flag);
        bool dashes = flags[f].flag[1] == '-';
        if (strncmp(w, flags[f].flag, n) || (dashes && w[n] && w[n] != '=')) continue;
        *where = flags[f].where;
        if (w[n]) return dashes ? (w[n + 1] ? w + n + 1 : NULL) : w + n;
        if (*i + 1 >= argc) return NULL;
        return argv[++*i];
    }
    return NULL;
}

/* Whether option w may make the compiler read trigraphs (??/ a backslash,
 * ??' a caret: a line splice, a quote that is none), which the scan does
 * not: -trigraphs in any spelling or through -Wp, -ansi, and the ISO
 * dialects before C++17 (g++ and clang read them there). */
static bool amp__trigraph_option(const char *w)
{
    if (strstr(w, "trigraphs") && strcmp(w, "-Wtrigraphs") && strcmp(w, "-Wno-trigraphs") &&
        strcmp(w, "-fno-trigraphs"))
        return true;
    if (strstr(w, "-ansi")) return true;
    static const char *const iso[] = {"c++98", "c++03", "c++0x", "c++11", "c++1y", "c++14"};
    for (const char *p = strstr(w, "std="); p; p = strstr(p + 4, "std="))
        for (size_t k = 0; k < sizeof iso / sizeof iso[0]; ++k)
            if (!strncmp(p + 4, iso[k], 5) && (p[9] == '\0' || p[9] == ',')) return true;
    return false;
}

/* Directories and forced includes from the options, in the compiler's
 * order: -iquote first (quoted only), then -I / --include-path, the
 * backend's -I-like environment variables, -isystem, its -isystem-like
 * ones, (the compiler's own directories, added at sys_at when a lookup
 * first reaches them: amp__add_system_dirs), then -idirafter. */
static amp_status amp__collect_dirs(const char *options, const amp__include_env *env_vars, amp__dirs *dirs,
                                    amp__dirs *forced, amp__scan *out, char *trigraphs, size_t cap)
{
    amp_status st = AMP_OK;
    char **argv = NULL, *words = NULL;
    size_t argc = 0;
    amp__dirs quote = {0}, plain = {0}, system = {0}, late = {0};
    if ((st = amp__split_options(options, 0, 0, &argv, &argc, &words)) != AMP_OK) return st;
    bool ok = true;
    for (size_t i = 0; i < argc && ok; ++i) {
        int where = 0;
        if (!trigraphs[0] && amp__trigraph_option(argv[i])) snprintf(trigraphs, cap, "%s", argv[i]);
        if (amp__unfollowed_option(argv[i]) && out->complete) {
            out->complete = false;
            snprintf(out->why, sizeof out->why, "compiler option '%.64s' changes where the compiler looks for "
                     "headers in a way the include scan does not follow", argv[i]);
        }
        const char *arg = amp__include_option(argv, argc, &i, &where);
        if (!arg) continue;
        amp__dirs *to = (amp__dirs *[]){&quote, &plain, &system, &late, forced}[where];
        /* A forced include's name is kept as written (looked up below). */
        ok = amp__dirs_add(to, arg, strlen(arg), 0, to == forced);
    }
    ok = ok && amp__dirs_append(dirs, &quote);
    dirs->quote_end = dirs->n;
    ok = ok && amp__dirs_append(dirs, &plain);
    ok = ok && amp__env_dirs(dirs, env_vars, false);
    dirs->bracket_end = dirs->n;
    ok = ok && amp__dirs_append(dirs, &system);
    ok = ok && amp__env_dirs(dirs, env_vars, true);
    dirs->sys_at = dirs->n;
    ok = ok && amp__dirs_append(dirs, &late);
    if (!ok) st = amp__fail(AMP_ERROR_OUT_OF_MEMORY, "no memory for the include search path");
    amp__dirs_free(&quote);
    amp__dirs_free(&plain);
    amp__dirs_free(&system);
    amp__dirs_free(&late);
    free(argv);
    free(words);
    return st;
}

amp_status amp__scan_context(const char *options, const amp__include_env *env, char **out)
{
    char **argv = NULL, *words = NULL;
    size_t argc = 0;
    bool relative = false;
    *out = NULL;
    amp_status st = amp__split_options(options, 0, 0, &argv, &argc, &words);
    if (st != AMP_OK) return st;
    for (size_t i = 0; i < argc && !relative; ++i) {
        int where;
        const char *arg = amp__include_option(argv, argc, &i, &where);
        relative = arg && arg[0] != '/';
    }
    free(argv);
    free(words);
    amp__sb b = {0};
    for (size_t e = 0; env && env[e].name; ++e) {
        const char *v = amp__env(env[e].name);
        if (!v) continue;
        amp__sb_printf(&b, "%s=%s\n", env[e].name, v);
        for (const char *p = v; p; p = strchr(p, ':') ? strchr(p, ':') + 1 : NULL) relative |= p[0] != '/';
    }
    char cwd[PATH_MAX];
    if (relative && getcwd(cwd, sizeof cwd)) amp__sb_printf(&b, "cwd=%s\n", cwd);
    if (b.oom) {
        free(b.p);
        return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "no memory for a build's include search path");
    }
    *out = b.p;
    return AMP_OK;
}

/* ------------------------------------------------------- directives */

static void amp__stamp(amp__dep *d, const struct stat *sb)
{
    d->dev = (uint64_t)sb->st_dev;
    d->ino = (uint64_t)sb->st_ino;
    d->size = (uint64_t)sb->st_size;
    d->mtime_ns = (int64_t)sb->st_mtim.tv_sec * 1000000000LL + sb->st_mtim.tv_nsec;
    d->ctime_ns = (int64_t)sb->st_ctim.tv_sec * 1000000000LL + sb->st_ctim.tv_nsec;
}

bool amp__dep_fresh(const amp__dep *d)
{
    struct stat sb;
    if (d->absent) return stat(d->path, &sb) != 0 && (errno == ENOENT || errno == ENOTDIR);
    if (stat(d->path, &sb) != 0) return false;
    amp__dep now;
    amp__stamp(&now, &sb);
    return now.dev == d->dev && now.ino == d->ino && now.size == d->size && now.mtime_ns == d->mtime_ns &&
           now.ctime_ns == d->ctime_ns;
}

bool amp__dep_holds(const amp__dep *d, const char *path, const amp__header *h)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return false;
    struct stat sb;
    bool same = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && (uint64_t)sb.st_dev == d->dev &&
                (uint64_t)sb.st_ino == d->ino && (uint64_t)sb.st_size == h->size;
    char buf[16384];
    for (size_t at = 0; same && at < h->size;) {
        size_t n = h->size - at < sizeof buf ? h->size - at : sizeof buf;
        same = amp__fd_read_all(fd, buf, n) && !memcmp(buf, h->content + at, n);
        at += n;
    }
    close(fd);
    return same;
}

bool amp__dep_stamp(amp__dep *d, const char *path)
{
    struct stat sb;
    memset(d, 0, sizeof *d);
    if (stat(path, &sb) != 0 || !(d->path = amp__strdup(path))) return false;
    amp__stamp(d, &sb);
    return true;
}

/* --------------------------------------------------------- the scan */

/* An index of a table's entries by a hash of their key: open addressing,
 * kept at most half full, so that a lookup compares a few entries where a
 * scan of the table compared them all (with thousands of headers or
 * misses, every #include paid for all of them). Its size follows the
 * table's, itself bounded (AMP__SCAN_MAX_HEADERS, AMP__SCAN_MAX_ABSENT). */
typedef struct amp__slot {
    uint64_t hash;
    size_t entry; /* the table's index + 1; 0: empty */
} amp__slot;
typedef struct amp__index {
    amp__slot *v;
    size_t cap, n; /* cap a power of two */
} amp__index;

static uint64_t amp__hash(const void *p, size_t n, uint64_t h)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211u; /* FNV-1a */
    return h;
}

/* The first slot to look at for hash h, then the next ones (amp__index_next)
 * until an empty one. */
static size_t amp__index_first(const amp__index *x, uint64_t h)
{
    return x->cap ? (size_t)(h ^ h >> 32) & (x->cap - 1) : 0;
}
static size_t amp__index_next(const amp__index *x, size_t j) { return (j + 1) & (x->cap - 1); }

/* Record entry (hash h), growing the index first if need be; false when no
 * memory. */
static bool amp__index_add(amp__index *x, uint64_t h, size_t entry)
{
    if (2 * (x->n + 1) > x->cap) {
        size_t cap = x->cap ? 2 * x->cap : 64;
        amp__slot *v = calloc(cap, sizeof *v);
        if (!v) return false;
        amp__index bigger = {v, cap, x->n};
        for (size_t i = 0; i < x->cap; ++i) {
            if (!x->v[i].entry) continue;
            size_t j = amp__index_first(&bigger, x->v[i].hash);
            while (v[j].entry) j = amp__index_next(&bigger, j);
            v[j] = x->v[i];
        }
        free(x->v);
        *x = bigger;
    }
    size_t j = amp__index_first(x, h);
    while (x->v[j].entry) j = amp__index_next(x, j);
    x->v[j] = (amp__slot){h, entry + 1};
    x->n++;
    return true;
}

static uint64_t amp__file_hash(uint64_t dev, uint64_t ino)
{
    uint64_t k[2] = {dev, ino};
    return amp__hash(k, sizeof k, 14695981039346656037u);
}

typedef struct amp__scanner {
    amp__scan *out;
    size_t cap, sites_cap, absent_cap;
    size_t total_bytes;
    amp__dirs dirs;         /* without the compiler's own until sys_added */
    amp__sys_dirs_query sys;
    bool sys_added;         /* sys asked for (dirs remade with its list) */
    const char *source_dir; /* the kernel file's real directory, or NULL */
    size_t *found_in;       /* header i was found in dirs.v[found_in[i] - 1]; 0: not on the search path */
    size_t found_cap;
    amp__index by_file;     /* out->deps by device and inode */
    amp__index by_place;    /* out->absent by path */
    amp__trust main_trust;  /* for lookups from source_dir and absolute names in the source */
    char trigraphs[64];     /* the option that may turn trigraphs on, or "" */
} amp__scanner;

/* The first reason the scan cannot be trusted whole is the one said. */
static void amp__incomplete(amp__scan *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void amp__incomplete(amp__scan *s, const char *fmt, ...)
{
    if (!s->complete) return;
    s->complete = false;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->why, sizeof s->why, fmt, ap);
    va_end(ap);
}

/* The flat name a named-header compiler gets for header i: "hipamp-<i>-"
 * and the file's own name with anything but [A-Za-z0-9._-] as '_'. */
static char *amp__flat_name(size_t i, const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t bl = strlen(base);
    if (bl > 64) base += bl - 64;
    char *s = malloc(96);
    if (!s) return NULL;
    int k = snprintf(s, 96, "hipamp-%zu-", i);
    for (const char *p = base; *p && k < 95; ++p) {
        char c = *p;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                  c == '_' || c == '-';
        s[k++] = ok ? c : '_';
    }
    s[k] = '\0';
    return s;
}

/* Remember that path held no header (sb NULL), or held one read under
 * another path (sb its stamp): the memory cache re-checks it, since a
 * header put there later, or the name made a header of its own, would be
 * read instead (the disk key changes by itself: the next scan finds the
 * header). 0, or <0 (status set). Past AMP__SCAN_MAX_ABSENT places the
 * scan is marked incomplete instead. */
static int amp__note_place(amp__scanner *sc, const char *path, const struct stat *sb)
{
    amp__scan *s = sc->out;
    uint64_t h = amp__hash(path, strlen(path), 14695981039346656037u);
    amp__index *x = &sc->by_place;
    for (size_t j = amp__index_first(x, h); x->cap && x->v[j].entry; j = amp__index_next(x, j))
        if (++s->probes, x->v[j].hash == h && !strcmp(s->absent[x->v[j].entry - 1].path, path)) return 0;
    if (s->nabsent == AMP__SCAN_MAX_ABSENT) {
        amp__incomplete(s, "%s (and %d other places a header was looked for and not found) cannot all be watched",
                        path, AMP__SCAN_MAX_ABSENT);
        return 0;
    }
    if (s->nabsent == sc->absent_cap) {
        size_t cap = sc->absent_cap ? 2 * sc->absent_cap : 16;
        amp__dep *a = realloc(s->absent, cap * sizeof *a);
        if (!a) return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "no memory for the include scan"), -1;
        s->absent = a;
        sc->absent_cap = cap;
    }
    amp__dep *d = &s->absent[s->nabsent];
    memset(d, 0, sizeof *d);
    d->absent = !sb;
    if (sb) amp__stamp(d, sb);
    if (!(d->path = amp__strdup(path)) || !amp__index_add(x, h, s->nabsent)) {
        free(d->path);
        return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "no memory for the include scan"), -1;
    }
    ++s->nabsent;
    return 0;
}

/* Where directive d of file is, for a message: "file:line" ("file" for a
 * forced include, which has no line). */
static const char *amp__where(char *buf, size_t n, const char *file, const amp__directive *d)
{
    if (d->line > 0) snprintf(buf, n, "%s:%d", file, d->line);
    else snprintf(buf, n, "%s", file);
    return buf;
}

/* Whether path leads through /proc or /dev/fd: a process's open file
 * (#include "/dev/stdin", /dev/fd/N, /proc/self/fd/N, /proc/PID/fd/N),
 * which is a regular file when stdin is one, yet another file (or none) in
 * the compiler, and none the key could name. Symbolic links are followed
 * one at a time, as the kernel does, up to the magic link itself (realpath
 * would follow it to whatever file it stands for now). */
static bool amp__via_proc(const char *path)
{
    char cur[PATH_MAX], done[PATH_MAX], link[PATH_MAX], next[PATH_MAX];
    if (!amp__path_tidy(path, cur, sizeof cur)) return false;
    for (int hops = 0; hops < 40; ++hops) {
        size_t dl = 0;
        const char *p = cur;
        bool relinked = false;
        done[0] = '\0';
        while (*p && !relinked) {
            while (*p == '/') ++p;
            size_t cl = strcspn(p, "/");
            if (!cl || (cl == 1 && p[0] == '.')) {
                p += cl;
                continue;
            }
            if (cl == 2 && p[0] == '.' && p[1] == '.') { /* the parent of a prefix with no links left */
                while (dl && done[dl - 1] != '/') --dl;
                dl -= dl > 0;
                done[dl] = '\0';
                p += cl;
                continue;
            }
            if (dl + 1 + cl >= sizeof done) return false;
            done[dl++] = '/';
            memcpy(done + dl, p, cl);
            dl += cl;
            done[dl] = '\0';
            p += cl;
            if (!strcmp(done, "/proc") || !strcmp(done, "/dev/fd")) return true;
            struct stat sb;
            if (lstat(done, &sb) != 0 || !S_ISLNK(sb.st_mode)) continue;
            ssize_t ll = readlink(done, link, sizeof link - 1);
            if (ll < 0) return false;
            link[ll] = '\0';
            while (dl && done[dl - 1] != '/') --dl; /* the link's directory, '/' kept */
            done[dl] = '\0';
            int w = snprintf(next, sizeof next, "%s%s%s", link[0] == '/' ? "" : done, link, p);
            if (w < 0 || (size_t)w >= sizeof next) return false;
            memcpy(cur, next, (size_t)w + 1);
            relinked = true;
        }
        if (!relinked) return false;
    }
    return false;
}

/* Open path as the header directive d of file names: a regular file, read
 * whole. 1 = found and added (or already there), 0 = absent, <0 = failure
 * (status set, naming d's file and line). */
static int amp__add_header(amp__scanner *sc, const char *file, const amp__directive *d, const char *path,
                           size_t *index)
{
    amp__scan *s = sc->out;
    char at[PATH_MAX + 32];
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT || errno == ENOTDIR
                   ? amp__note_place(sc, path, NULL)
                   : (amp__fail(AMP_ERROR_COMPILE, "%s: cannot open header %s: %s", amp__where(at, sizeof at, file, d),
                                path, strerror(errno)),
                      -1);
    struct stat sb;
    char *content = NULL, *pathcopy = NULL, *namecopy = NULL;
    int rc = -1;
    if (fstat(fd, &sb) != 0) {
        amp__fail(AMP_ERROR_COMPILE, "%s: cannot stat header %s: %s", amp__where(at, sizeof at, file, d), path,
                  strerror(errno));
        goto out;
    }
    /* The compiler passes over a directory and looks on. */
    if (S_ISDIR(sb.st_mode)) {
        rc = 0;
        goto out;
    }
    if (!S_ISREG(sb.st_mode)) {
        amp__fail(AMP_ERROR_COMPILE, "%s: header '%.*s' resolves to %s, which is not a regular file (a FIFO or a "
                  "device cannot be a header)", amp__where(at, sizeof at, file, d), (int)d->len, d->name, path);
        goto out;
    }
    if (amp__via_proc(path)) {
        amp__fail(AMP_ERROR_COMPILE, "%s: header '%.*s' resolves to %s, which is not a regular file but a process's "
                  "open file (through /proc or /dev/fd: /dev/stdin, /dev/fd/N, /proc/self/fd/N mean another file in "
                  "the compiler, and none hipamp could key)", amp__where(at, sizeof at, file, d), (int)d->len,
                  d->name, path);
        goto out;
    }
    /* The same file under another name or path: one header, watched
     * under both (either name may become a file of its own). */
    uint64_t fh = amp__file_hash((uint64_t)sb.st_dev, (uint64_t)sb.st_ino);
    amp__index *x = &sc->by_file;
    for (size_t j = amp__index_first(x, fh); x->cap && x->v[j].entry; j = amp__index_next(x, j)) {
        size_t i = x->v[j].entry - 1;
        if (++s->probes, s->deps[i].dev == (uint64_t)sb.st_dev && s->deps[i].ino == (uint64_t)sb.st_ino) {
            *index = i;
            rc = strcmp(s->deps[i].path, path) && amp__note_place(sc, path, &sb) < 0 ? -1 : 1;
            goto out;
        }
    }
    if ((uint64_t)sb.st_size > AMP__SCAN_MAX_BYTES || sc->total_bytes + (size_t)sb.st_size > AMP__SCAN_MAX_BYTES) {
        amp__fail(AMP_ERROR_COMPILE, "%s: header %s is too large (%lld bytes; headers may total %u MiB)",
                  amp__where(at, sizeof at, file, d), path, (long long)sb.st_size, AMP__SCAN_MAX_BYTES >> 20);
        goto out;
    }
    if (s->n == AMP__SCAN_MAX_HEADERS) {
        amp__fail(AMP_ERROR_COMPILE, "%s: more than %d headers included (%s the one past them)",
                  amp__where(at, sizeof at, file, d), AMP__SCAN_MAX_HEADERS, path);
        goto out;
    }
    if (s->n == sc->cap) {
        size_t cap = sc->cap ? 2 * sc->cap : 16;
        amp__header *h = realloc(s->headers, cap * sizeof *h);
        if (h) s->headers = h;
        amp__dep *d = h ? realloc(s->deps, cap * sizeof *d) : NULL;
        if (d) s->deps = d;
        if (!h || !d) {
            amp__fail(AMP_ERROR_OUT_OF_MEMORY, "no memory for the header list");
            goto out;
        }
        sc->cap = cap;
    }
    size_t size = (size_t)sb.st_size;
    content = malloc(size + 1);
    pathcopy = amp__strdup(path);
    namecopy = amp__flat_name(s->n, path);
    if (!content || !pathcopy || !namecopy) {
        amp__fail(AMP_ERROR_OUT_OF_MEMORY, "no memory to read header %s", path);
        goto out;
    }
    if (!amp__fd_read_all(fd, content, size)) {
        amp__fail(AMP_ERROR_COMPILE, "%s: cannot read header %s (its %zu bytes: an I/O error, or it shrank while "
                  "read)", amp__where(at, sizeof at, file, d), path, size);
        goto out;
    }
    content[size] = '\0';
    s->headers[s->n] = (amp__header){namecopy, pathcopy, content, size};
    memset(&s->deps[s->n], 0, sizeof s->deps[s->n]);
    amp__stamp(&s->deps[s->n], &sb);
    s->deps[s->n].path = amp__strdup(path);
    if (!s->deps[s->n].path || !amp__index_add(x, fh, s->n)) {
        free(s->deps[s->n].path);
        amp__fail(AMP_ERROR_OUT_OF_MEMORY, "no memory to read header %s", path);
        goto out;
    }
    *index = s->n++;
    sc->total_bytes += size;
    content = pathcopy = namecopy = NULL;
    rc = 1;
out:
    free(content);
    free(pathcopy);
    free(namecopy);
    close(fd);
    return rc;
}

/* A lookup relative to a file's directory: base_path as the compiler names
 * it, base_real the same directory with links resolved, t who may have put
 * things there. 1 found (added), 0 nothing there, -1 failure. */
static int amp__resolve_from(amp__scanner *sc, const amp__directive *d, const char *file, const char *base_path,
                             const char *base_real, const amp__trust *t, size_t *index)
{
    char why[PATH_MAX + 128], path[2 * PATH_MAX];
    if (d->name[0] == '/') snprintf(path, sizeof path, "%.*s", (int)d->len, d->name);
    else snprintf(path, sizeof path, "%s%s%.*s", base_path, strcmp(base_path, "/") ? "/" : "", (int)d->len, d->name);
    int w = amp__trusted_walk(t, base_real, d->name, d->len, why, sizeof why);
    if (w == AMP__WALK_DIR) return 0; /* a directory is no header: the compiler looks on */
    if (w == AMP__WALK_NOTHING) return amp__note_place(sc, path, NULL);
    if (w == AMP__WALK_UNTRUSTED) {
        char at[PATH_MAX + 32];
        amp__fail(AMP_ERROR_COMPILE, "%s: #include \"%.*s\" is refused: another user could have put it there (%s)",
                  amp__where(at, sizeof at, file, d), (int)d->len, d->name, why);
        return -1;
    }
    return amp__add_header(sc, file, d, path, index);
}

/* A directory named twice, as GCC and clang both take it: a -I (or CPATH)
 * directory that is also on the system chain (-isystem, the -isystem-like
 * variables, the compiler's own, -idirafter) is searched only where the
 * system one is ("-I/a -I/b -isystem /a" looks in /b first), and one
 * already earlier on its own chain is not searched again (an #include_next
 * from the first would otherwise find its own header there). The same
 * directory is the same device and inode; one that does not exist matches
 * none. An -iquote directory is dropped only as a repeat of an earlier
 * -iquote one: GCC also drops one that is a system directory, clang does
 * not, and the first lookup finds the same file either way. */
static bool amp__dirs_dedup(amp__dirs *d)
{
    if (d->n < 2) return true;
    struct stat *id = malloc(d->n * sizeof *id);
    bool *gone = calloc(d->n, sizeof *gone);
    if (!id || !gone) {
        free(id);
        free(gone);
        return false;
    }
    for (size_t i = 0; i < d->n; ++i)
        if (stat(d->v[i].path, &id[i]) != 0 || !S_ISDIR(id[i].st_mode)) id[i].st_ino = 0, id[i].st_dev = 0;
#define AMP__SAME_DIR(i, j) (id[i].st_ino && id[i].st_dev == id[j].st_dev && id[i].st_ino == id[j].st_ino)
    /* The chains, each [from, to); a bracket directory is checked against
     * the whole system chain, every directory against its own chain's
     * earlier ones. */
    const size_t from[3] = {0, d->quote_end, d->bracket_end}, to[3] = {d->quote_end, d->bracket_end, d->n};
    for (int c = 0; c < 3; ++c)
        for (size_t i = from[c]; i < to[c]; ++i) {
            for (size_t j = from[c]; j < i && !gone[i]; ++j) gone[i] = !gone[j] && AMP__SAME_DIR(i, j);
            for (size_t j = d->bracket_end; c == 1 && j < d->n && !gone[i]; ++j) gone[i] = AMP__SAME_DIR(i, j);
        }
#undef AMP__SAME_DIR
    size_t kept = 0, quote_end = 0, bracket_end = 0;
    for (size_t i = 0; i < d->n; ++i) {
        if (gone[i]) free(d->v[i].path);
        else d->v[kept++] = d->v[i];
        if (i + 1 == d->quote_end) quote_end = kept;
        if (i + 1 == d->bracket_end) bracket_end = kept;
    }
    d->quote_end = d->quote_end ? quote_end : 0;
    d->bracket_end = d->bracket_end ? bracket_end : 0;
    d->n = kept;
    free(id);
    free(gone);
    return true;
}

/* The compiler's own directories put in their place in the search path
 * (sys_at), asked for when a lookup first reaches the search path
 * (amp__sys_dirs_query); then every directory named twice is searched once
 * (amp__dirs_dedup), the rest of the path as the scan made it. */
static amp_status amp__add_system_dirs(amp__scanner *sc)
{
    sc->sys_added = true;
    const amp__sys_dir *sys = sc->sys.get ? sc->sys.get(sc->sys.ctx) : NULL;
    amp__dirs *d = &sc->dirs;
    size_t before = d->n, at = d->sys_at;
    for (size_t i = 0; sys && sys[i].path; ++i)
        if (!amp__dirs_add(d, sys[i].path, strlen(sys[i].path), sys[i].kind, true))
            return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "no memory for the include search path");
    size_t added = d->n - before;
    if (added && before != at) {
        /* Appended after the -idirafter ones: rotate them to sys_at. */
        amp__dir *moved = malloc(added * sizeof *moved);
        if (!moved) return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "no memory for the include search path");
        memcpy(moved, d->v + before, added * sizeof *moved);
        memmove(d->v + at + added, d->v + at, (before - at) * sizeof *moved);
        memcpy(d->v + at, moved, added * sizeof *moved);
        free(moved);
    }
    if (!amp__dirs_dedup(d)) return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "no memory for the include search path");
    return AMP_OK;
}

/* Record where the headers added since the scan had `before` were found
 * (amp__scanner.found_in); false when no memory. */
static bool amp__note_found(amp__scanner *sc, size_t before, size_t where)
{
    size_t n = sc->out->n;
    if (n > sc->found_cap) {
        size_t cap = sc->out->n < 16 ? 16 : 2 * n;
        size_t *f = realloc(sc->found_in, cap * sizeof *f);
        if (!f) return false;
        sc->found_in = f;
        sc->found_cap = cap;
    }
    for (size_t i = before; i < n; ++i) sc->found_in[i] = where;
    return true;
}

/* Resolve one directive of file (header number self, -1 for the source or
 * a forced include; its directory from: as the compiler names it, and
 * from_real with links resolved; NULL: none) as the compiler would: an
 * absolute name as it is; a quoted one beside its includer, then beside
 * the kernel file, then in the -iquote directories; then the -I,
 * environment, -isystem, the compiler's own and -idirafter directories.
 * An #include_next in a header looks on after the directory where that
 * header was found (from the kernel file's when it was found beside its
 * includer: that is the first of the compiler's quote directories), quoted
 * or angled; elsewhere it is an #include. Returns AMP__SITE_* or the
 * header's index (>= 0); AMP__RESOLVE_FAILED on failure. */
static long amp__resolve(amp__scanner *sc, const amp__directive *d, long self, const char *file, const char *from,
                         const char *from_real, const amp__trust *from_trust)
{
    char path[2 * PATH_MAX];
    size_t idx = 0, before = sc->out->n;
    int rc = 0;
    if (d->len == 0 || d->len >= PATH_MAX) return AMP__SITE_MISSING;
    if (memchr(d->name, '\0', d->len)) return AMP__SITE_MISSING;
    if (d->name[0] == '/') {
        rc = amp__resolve_from(sc, d, file, "/", "/", from_trust ? from_trust : &sc->main_trust, &idx);
        goto beside;
    }
    bool next = d->next && self >= 0;
    size_t found = next ? sc->found_in[self] : 0;
    if (!next && !d->angled && from && from_real) {
        rc = amp__resolve_from(sc, d, file, from, from_real, from_trust, &idx);
        if (rc) goto beside;
    }
    if (next ? !found && sc->source_dir
             : !d->angled && sc->source_dir && (!from_real || strcmp(from_real, sc->source_dir))) {
        rc = amp__resolve_from(sc, d, file, sc->source_dir, sc->source_dir, &sc->main_trust, &idx);
        if (rc) goto beside;
    }
    if (!sc->sys_added && amp__add_system_dirs(sc) != AMP_OK) return AMP__RESOLVE_FAILED;
    for (size_t i = next ? found : d->angled ? sc->dirs.quote_end : 0; i < sc->dirs.n; ++i) {
        snprintf(path, sizeof path, "%s/%.*s", sc->dirs.v[i].path, (int)d->len, d->name);
        if (sc->dirs.v[i].kind == AMP__DIR_COMPILER) {
            struct stat sb;
            if (stat(path, &sb) == 0 && !S_ISDIR(sb.st_mode)) return AMP__SITE_COMPILER;
            continue;
        }
        if ((rc = amp__add_header(sc, file, d, path, &idx)) < 0) return AMP__RESOLVE_FAILED;
        if (!rc) continue;
        if (!amp__note_found(sc, before, i + 1))
            return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "no memory for the include scan"), AMP__RESOLVE_FAILED;
        return (long)idx;
    }
    return AMP__SITE_MISSING;
beside:
    if (rc < 0) return AMP__RESOLVE_FAILED;
    if (!amp__note_found(sc, before, 0))
        return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "no memory for the include scan"), AMP__RESOLVE_FAILED;
    return rc ? (long)idx : AMP__SITE_MISSING;
}

/* The directory part of path (malloc'ed), "." for a bare name. */
static char *amp__dirname(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash) return amp__strdup(".");
    size_t n = slash == path ? 1 : (size_t)(slash - path);
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, path, n);
        d[n] = '\0';
    }
    return d;
}

static bool amp__add_site(amp__scanner *sc, amp__include_site site)
{
    amp__scan *s = sc->out;
    if (s->nsites == sc->sites_cap) {
        size_t cap = sc->sites_cap ? 2 * sc->sites_cap : 32;
        amp__include_site *p = realloc(s->sites, cap * sizeof *p);
        if (!p) return false;
        s->sites = p;
        sc->sites_cap = cap;
    }
    s->sites[s->nsites++] = site;
    return true;
}

/* The first trigraph (??= ??/ ??' ??( ??) ??! ??< ??> ??-) in t, or NULL. */
static const char *amp__find_trigraph(const char *t, size_t n)
{
    for (size_t i = 0; i + 2 < n; ++i)
        if (t[i] == '?' && t[i + 1] == '?' && t[i + 2] && strchr("=/'()!<>-", t[i + 2])) return t + i;
    return NULL;
}

/* The line of offset at in t (from 1), lines ended as the lexer ends them
 * (LF, CRLF, a lone CR). */
static int amp__line_of(const char *t, size_t at)
{
    int line = 1;
    /* t[i + 1] exists: i < at, and t[at] is the character asked about. */
    for (size_t i = 0; i < at; ++i) line += t[i] == '\n' || (t[i] == '\r' && t[i + 1] != '\n');
    return line;
}

/* Scan text number `text` (0: the source; i + 1: header i), of file `file`,
 * in directory from (NULL: none; from_real, trust as for amp__resolve). */
static amp_status amp__scan_text(amp__scanner *sc, size_t text, const char *t, size_t n, const char *file,
                                 const char *from, const char *from_real, const amp__trust *trust)
{
    size_t pos = 0;
    int line = 1;
    amp__directive d;
    /* What compilers read otherwise than the lexer, or than each other. */
    const char *nul = memchr(t, '\0', n), *tri = sc->trigraphs[0] ? amp__find_trigraph(t, n) : NULL;
    if (nul)
        amp__incomplete(sc->out, "%s:%d has a NUL byte, which g++ and clang read differently", file,
                        amp__line_of(t, (size_t)(nul - t)));
    else if (tri)
        amp__incomplete(sc->out, "%s:%d has a trigraph, which option '%s' may make the compiler read (the include "
                        "scan does not)", file, amp__line_of(t, (size_t)(tri - t)), sc->trigraphs);
    while (amp__next_include(t, n, &pos, &line, &d)) {
        if (d.computed && d.unsure) {
            amp__incomplete(sc->out, "%s:%d has %s; the cache cannot track what it includes", file, d.line, d.unsure);
            continue;
        }
        if (d.computed) {
            amp__incomplete(sc->out, "%s:%d has a computed #include the cache cannot track", file, d.line);
            continue;
        }
        long r = amp__resolve(sc, &d, (long)text - 1, file, from, from_real, trust);
        if (r == AMP__RESOLVE_FAILED) return AMP_ERROR_COMPILE;
        amp__include_site site = {text, (size_t)(d.name - t) - 1, (size_t)(d.name - t) + d.len, r, d.angled};
        if (!amp__add_site(sc, site)) return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "no memory for the include scan");
    }
    return AMP_OK;
}

amp_status amp__scan_includes(const amp__build_input *in, const amp__include_env *env_vars, amp__sys_dirs_query sys,
                              amp__scan *out)
{
    amp_status st = AMP_OK;
    amp__scanner sc;
    amp__dirs forced = {0};
    char *dir = NULL, *real = NULL;
    memset(out, 0, sizeof *out);
    memset(&sc, 0, sizeof sc);
    out->complete = true;
    sc.out = out;
    sc.sys = sys;
    sc.source_dir = in->source_dir;
    struct stat kernel_file;
    bool have_file = in->source_name && in->source_dir && stat(in->source_name, &kernel_file) == 0;
    amp__trust_init(&sc.main_trust, in->source_dir, have_file ? &kernel_file : NULL);
    if ((st = amp__collect_dirs(in->options, env_vars, &sc.dirs, &forced, out, sc.trigraphs, sizeof sc.trigraphs)) !=
        AMP_OK)
        goto fail;
    /* Forced includes come first, as if named on the source's first line,
     * looked up from the working directory first (as the compiler does). */
    out->forced = forced.n;
    char cwd[PATH_MAX], cwd_real[PATH_MAX];
    bool have_cwd = getcwd(cwd, sizeof cwd) && realpath(cwd, cwd_real);
    amp__trust cwd_trust;
    amp__trust_init(&cwd_trust, have_cwd ? cwd_real : NULL, NULL);
    for (size_t i = 0; i < forced.n; ++i) {
        amp__directive d = {.name = forced.v[i].path, .len = strlen(forced.v[i].path)};
        if (amp__resolve(&sc, &d, -1, "-include", have_cwd ? cwd : NULL, have_cwd ? cwd_real : NULL, &cwd_trust) ==
            AMP__RESOLVE_FAILED) {
            st = AMP_ERROR_COMPILE;
            goto fail;
        }
    }
    const char *main_name = in->source_name ? in->source_name : AMP__SOURCE_NAME;
    if ((st = amp__scan_text(&sc, 0, in->source, in->source_len, main_name, in->source_dir, in->source_dir,
                             &sc.main_trust)) != AMP_OK)
        goto fail;
    /* Headers found so far are scanned in turn; the list grows as they go. */
    for (size_t i = 0; i < out->n; ++i) {
        dir = amp__dirname(out->headers[i].path);
        if (!dir) {
            st = amp__fail(AMP_ERROR_OUT_OF_MEMORY, "no memory for the include scan");
            goto fail;
        }
        real = realpath(dir, NULL);
        struct stat hs;
        amp__trust t;
        amp__trust_init(&t, real, stat(out->headers[i].path, &hs) == 0 ? &hs : NULL);
        st = amp__scan_text(&sc, i + 1, out->headers[i].content, out->headers[i].size, out->headers[i].path, dir,
                            real, &t);
        free(dir);
        free(real);
        dir = real = NULL;
        if (st != AMP_OK) goto fail;
    }
    amp__dirs_free(&sc.dirs);
    free(sc.found_in);
    free(sc.by_file.v);
    free(sc.by_place.v);
    amp__dirs_free(&forced);
    return AMP_OK;
fail:
    free(dir);
    free(real);
    amp__dirs_free(&sc.dirs);
    free(sc.found_in);
    free(sc.by_file.v);
    free(sc.by_place.v);
    amp__dirs_free(&forced);
    amp__scan_free(out);
    return st;
}

void amp__scan_free(amp__scan *s)
{
    for (size_t i = 0; i < s->n; ++i) {
        free((char *)s->headers[i].name);
        free((char *)s->headers[i].path);
        free((char *)s->headers[i].content);
        free(s->deps[i].path);
    }
    for (size_t i = 0; i < s->nabsent; ++i) free(s->absent[i].path);
    free(s->headers);
    free(s->deps);
    free(s->absent);
    free(s->sites);
    memset(s, 0, sizeof *s);
    s->complete = true;
}
