/* include_scan.c — finds the headers a kernel source includes, the way the
 * compiler will look for them, and reads them whole, so that the compile
 * cache is keyed on their content (an edited header rebuilds) and compilers
 * that take named headers compile exactly what was keyed. A header that is
 * not a regular file (a FIFO, a device) is refused before anything could
 * block on it. Over-approximating is harmless (a header that a false #if
 * skips is still keyed); what cannot be tracked marks the scan incomplete. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define AMP__SCAN_MAX_HEADERS 4096
#define AMP__SCAN_MAX_BYTES (64u << 20) /* one header; and all of them together */

/* Search directories in the order a compiler uses them. */
typedef struct amp__dirs {
    char **v;
    size_t n, cap;
    size_t quote_end;  /* [0, quote_end): -iquote, searched for "x" only */
} amp__dirs;

static bool amp__dirs_add(amp__dirs *d, const char *dir, size_t len)
{
    if (len == 0) return true;
    if (d->n == d->cap) {
        size_t cap = d->cap ? 2 * d->cap : 16;
        char **p = realloc(d->v, cap * sizeof *p);
        if (!p) return false;
        d->v = p;
        d->cap = cap;
    }
    char *s = malloc(len + 1);
    if (!s) return false;
    memcpy(s, dir, len);
    s[len] = '\0';
    d->v[d->n++] = s;
    return true;
}

static void amp__dirs_free(amp__dirs *d)
{
    for (size_t i = 0; i < d->n; ++i) free(d->v[i]);
    free(d->v);
}

/* Directories and forced includes from the options, in the compiler's
 * order: -iquote first (quoted only), then -I / --include-path, then the
 * backend's environment variables, then -isystem / -idirafter. */
static amp_status amp__collect_dirs(const char *options, const char *const *env_vars, amp__dirs *dirs,
                                    amp__dirs *forced)
{
    amp_status st = AMP_OK;
    char **argv = NULL, *words = NULL;
    size_t argc = 0;
    amp__dirs quote = {0}, plain = {0}, late = {0};
    if ((st = amp__split_options(options, 0, 0, &argv, &argc, &words)) != AMP_OK) return st;
    bool ok = true;
    for (size_t i = 0; i < argc && ok; ++i) {
        const char *w = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
        static const struct { const char *flag; int where; } flags[] = {
            {"-iquote", 0}, {"-I", 1}, {"--include-path=", 1}, {"--include-path", 1}, {"-isystem", 2},
            {"-idirafter", 2}, {"-include", 3}, {"--pre-include=", 3}, {"--pre-include", 3},
        };
        for (size_t f = 0; f < sizeof flags / sizeof flags[0]; ++f) {
            size_t n = strlen(flags[f].flag);
            if (strncmp(w, flags[f].flag, n)) continue;
            const char *arg = w[n] ? w + n : NULL;
            if (!arg && flags[f].flag[n - 1] != '=') {
                if (!next) break;
                arg = next;
                ++i;
            }
            if (!arg) break;
            amp__dirs *to = flags[f].where == 0 ? &quote : flags[f].where == 1 ? &plain : flags[f].where == 2 ? &late : forced;
            ok = amp__dirs_add(to, arg, strlen(arg));
            break;
        }
    }
    for (size_t i = 0; ok && i < quote.n; ++i) ok = amp__dirs_add(dirs, quote.v[i], strlen(quote.v[i]));
    dirs->quote_end = dirs->n;
    for (size_t i = 0; ok && i < plain.n; ++i) ok = amp__dirs_add(dirs, plain.v[i], strlen(plain.v[i]));
    for (size_t e = 0; ok && env_vars && env_vars[e]; ++e) {
        const char *v = amp__env(env_vars[e]);
        while (ok && v && *v) {
            const char *colon = strchr(v, ':');
            size_t n = colon ? (size_t)(colon - v) : strlen(v);
            ok = amp__dirs_add(dirs, v, n);
            v = colon ? colon + 1 : NULL;
        }
    }
    for (size_t i = 0; ok && i < late.n; ++i) ok = amp__dirs_add(dirs, late.v[i], strlen(late.v[i]));
    if (!ok) st = amp__fail(AMP_ERROR_OUT_OF_MEMORY, "no memory for the include search path");
    amp__dirs_free(&quote);
    amp__dirs_free(&plain);
    amp__dirs_free(&late);
    free(argv);
    free(words);
    return st;
}

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
    if (stat(d->path, &sb) != 0) return false;
    amp__dep now;
    amp__stamp(&now, &sb);
    return now.dev == d->dev && now.ino == d->ino && now.size == d->size && now.mtime_ns == d->mtime_ns &&
           now.ctime_ns == d->ctime_ns;
}

/* One include directive found in a text. */
typedef struct amp__directive {
    const char *name; /* inside the text (not NUL-terminated) */
    size_t len;
    bool angled;
    bool computed;
    int line;
} amp__directive;

/* Next #include directive at or after *pos; false at the end. Skips
 * comments; a directive is '#' first on a line (after blanks). */
static bool amp__next_include(const char *t, size_t n, size_t *pos, int *line, amp__directive *out)
{
    size_t i = *pos;
    bool line_start = i == 0 || t[i - 1] == '\n';
    while (i < n) {
        char c = t[i];
        if (c == '\n') {
            ++*line;
            line_start = true;
            ++i;
            continue;
        }
        if (c == '/' && i + 1 < n && t[i + 1] == '*') {
            i += 2;
            while (i + 1 < n && !(t[i] == '*' && t[i + 1] == '/')) {
                if (t[i] == '\n') ++*line;
                ++i;
            }
            i += 2;
            continue;
        }
        if (c == '/' && i + 1 < n && t[i + 1] == '/') {
            while (i < n && t[i] != '\n') ++i;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
            ++i;
            continue;
        }
        if (c == '#' && line_start) {
            size_t j = i + 1;
            while (j < n && (t[j] == ' ' || t[j] == '\t')) ++j;
            size_t k = j;
            while (k < n && ((t[k] >= 'a' && t[k] <= 'z') || t[k] == '_')) ++k;
            bool inc = (k - j == 7 && !memcmp(t + j, "include", 7)) || (k - j == 12 && !memcmp(t + j, "include_next", 12)) ||
                       (k - j == 6 && !memcmp(t + j, "import", 6));
            if (inc) {
                while (k < n && (t[k] == ' ' || t[k] == '\t')) ++k;
                memset(out, 0, sizeof *out);
                out->line = *line;
                char open = k < n ? t[k] : 0, close = open == '<' ? '>' : '"';
                size_t e = k + 1;
                while (e < n && t[e] != close && t[e] != '\n') ++e;
                if ((open == '<' || open == '"') && e < n && t[e] == close) {
                    out->name = t + k + 1;
                    out->len = e - k - 1;
                    out->angled = open == '<';
                } else {
                    out->computed = true;
                }
                while (e < n && t[e] != '\n') ++e;
                *pos = e;
                return true;
            }
        }
        line_start = false;
        /* Skip string and character literals so a quote cannot hide a
         * comment start. */
        if (c == '"' || c == '\'') {
            ++i;
            while (i < n && t[i] != c && t[i] != '\n') i += t[i] == '\\' ? 2 : 1;
        }
        ++i;
    }
    *pos = n;
    return false;
}

typedef struct amp__scanner {
    amp__scan *out;
    size_t cap;
    size_t total_bytes;
    amp__dirs dirs;
} amp__scanner;

static void amp__incomplete(amp__scan *s, const char *fmt, const char *a, int line)
{
    if (!s->complete) return;
    s->complete = false;
    snprintf(s->why, sizeof s->why, fmt, a, line);
}

/* Open path as a header: a regular file, read whole. 1 = found and added
 * (or already there), 0 = absent, <0 = failure (status set). */
static int amp__add_header(amp__scanner *sc, const char *name, size_t name_len, const char *path, size_t *index)
{
    amp__scan *s = sc->out;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) return errno == ENOENT || errno == ENOTDIR ? 0 : (amp__fail(AMP_ERROR_COMPILE, "cannot open header %s: %s", path, strerror(errno)), -1);
    struct stat sb;
    char *content = NULL, *pathcopy = NULL, *namecopy = NULL;
    int rc = -1;
    if (fstat(fd, &sb) != 0) {
        amp__fail(AMP_ERROR_COMPILE, "cannot stat header %s: %s", path, strerror(errno));
        goto out;
    }
    if (!S_ISREG(sb.st_mode)) {
        amp__fail(AMP_ERROR_COMPILE, "header '%.*s' resolves to %s, which is not a regular file (a FIFO, device or "
                  "directory cannot be a header)", (int)name_len, name, path);
        goto out;
    }
    for (size_t i = 0; i < s->n; ++i)
        if (s->deps[i].dev == (uint64_t)sb.st_dev && s->deps[i].ino == (uint64_t)sb.st_ino) {
            /* The same file under another name: compilers that take named
             * headers need both names. */
            if (strlen(s->headers[i].name) != name_len || memcmp(s->headers[i].name, name, name_len))
                amp__incomplete(s, "header %s is included under two names (line %d)", path, 0);
            *index = i;
            rc = 1;
            goto out;
        }
    for (size_t i = 0; i < s->n; ++i)
        if (strlen(s->headers[i].name) == name_len && !memcmp(s->headers[i].name, name, name_len)) {
            /* One name, two files (from two including directories): a
             * named-header compiler can be given only one. */
            amp__incomplete(s, "the include name of %s resolves to two different files (line %d)", path, 0);
            break;
        }
    if ((uint64_t)sb.st_size > AMP__SCAN_MAX_BYTES || sc->total_bytes + (size_t)sb.st_size > AMP__SCAN_MAX_BYTES) {
        amp__fail(AMP_ERROR_COMPILE, "header %s is too large (%lld bytes; headers may total %u MiB)", path,
                  (long long)sb.st_size, AMP__SCAN_MAX_BYTES >> 20);
        goto out;
    }
    if (s->n == AMP__SCAN_MAX_HEADERS) {
        amp__fail(AMP_ERROR_COMPILE, "more than %d headers included", AMP__SCAN_MAX_HEADERS);
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
    size_t size = (size_t)sb.st_size, got = 0;
    content = malloc(size + 1);
    pathcopy = amp__strdup(path);
    namecopy = malloc(name_len + 1);
    if (!content || !pathcopy || !namecopy) {
        amp__fail(AMP_ERROR_OUT_OF_MEMORY, "no memory to read header %s", path);
        goto out;
    }
    while (got < size) {
        ssize_t r = read(fd, content + got, size - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += (size_t)r;
    }
    if (got != size) {
        amp__fail(AMP_ERROR_COMPILE, "cannot read header %s (%zu of %zu bytes)", path, got, size);
        goto out;
    }
    content[size] = '\0';
    memcpy(namecopy, name, name_len);
    namecopy[name_len] = '\0';
    s->headers[s->n] = (amp__header){namecopy, pathcopy, content, size};
    memset(&s->deps[s->n], 0, sizeof s->deps[s->n]);
    amp__stamp(&s->deps[s->n], &sb);
    s->deps[s->n].path = amp__strdup(path);
    if (!s->deps[s->n].path) {
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

/* Resolve one directive of a file in directory `from` (NULL: none).
 * 1 found, 0 not found, -1 failure. */
static int amp__resolve(amp__scanner *sc, const amp__directive *d, const char *from, size_t *index)
{
    char path[4096];
    if (d->len == 0 || d->len >= sizeof path / 2) return 0;
    if (d->name[0] == '/') {
        snprintf(path, sizeof path, "%.*s", (int)d->len, d->name);
        return amp__add_header(sc, d->name, d->len, path, index);
    }
    if (!d->angled && from) {
        snprintf(path, sizeof path, "%s/%.*s", from, (int)d->len, d->name);
        int rc = amp__add_header(sc, d->name, d->len, path, index);
        if (rc) return rc;
    }
    for (size_t i = d->angled ? sc->dirs.quote_end : 0; i < sc->dirs.n; ++i) {
        snprintf(path, sizeof path, "%s/%.*s", sc->dirs.v[i], (int)d->len, d->name);
        int rc = amp__add_header(sc, d->name, d->len, path, index);
        if (rc) return rc;
    }
    return 0;
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

static amp_status amp__scan_text(amp__scanner *sc, const char *text, size_t n, const char *dir, const char *file)
{
    size_t pos = 0;
    int line = 1;
    amp__directive d;
    while (amp__next_include(text, n, &pos, &line, &d)) {
        if (d.computed) {
            amp__incomplete(sc->out, "%s:%d has a computed #include the cache cannot track", file, d.line);
            continue;
        }
        size_t idx;
        int rc = amp__resolve(sc, &d, dir, &idx);
        if (rc < 0) return AMP_ERROR_COMPILE;
        /* Not found: a system header (the compiler's own), or an error
         * the compiler will report. */
    }
    return AMP_OK;
}

amp_status amp__scan_includes(const amp__build_input *in, const char *const *env_vars, amp__scan *out)
{
    amp_status st = AMP_OK;
    amp__scanner sc;
    amp__dirs forced = {0};
    memset(out, 0, sizeof *out);
    memset(&sc, 0, sizeof sc);
    out->complete = true;
    sc.out = out;
    if ((st = amp__collect_dirs(in->options, env_vars, &sc.dirs, &forced)) != AMP_OK) goto fail;
    /* Forced includes come first, as if named on the source's first line. */
    for (size_t i = 0; i < forced.n; ++i) {
        amp__directive d = {forced.v[i], strlen(forced.v[i]), false, false, 0};
        size_t idx;
        int rc = amp__resolve(&sc, &d, ".", &idx);
        if (rc < 0) {
            st = AMP_ERROR_COMPILE;
            goto fail;
        }
    }
    const char *main_name = in->source_name ? in->source_name : AMP__SOURCE_NAME;
    if ((st = amp__scan_text(&sc, in->source, in->source_len, in->source_dir, main_name)) != AMP_OK) goto fail;
    /* Headers found so far are scanned in turn; the list grows as they go. */
    for (size_t i = 0; i < out->n; ++i) {
        char *dir = amp__dirname(out->headers[i].path);
        if (!dir) {
            st = amp__fail(AMP_ERROR_OUT_OF_MEMORY, "no memory for the include scan");
            goto fail;
        }
        st = amp__scan_text(&sc, out->headers[i].content, out->headers[i].size, dir, out->headers[i].path);
        free(dir);
        if (st != AMP_OK) goto fail;
    }
    amp__dirs_free(&sc.dirs);
    amp__dirs_free(&forced);
    return AMP_OK;
fail:
    amp__dirs_free(&sc.dirs);
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
    free(s->headers);
    free(s->deps);
    memset(s, 0, sizeof *s);
    s->complete = true;
}
