/* test_trace.c — AMP_TRACE, AMP_TRACE_SUMMARY, amp_trace_flush and vendor ranges: runs trace_helper (a fixed workload) and the demo study in child processes, parses the trace files with a strict JSON parser of its own, and checks every event against the statistics and the workload's known bytes. */
#include "support.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#ifndef HIPAMP_TRACE_HELPER
#error "HIPAMP_TRACE_HELPER (path of the trace_helper executable) must be defined by the build"
#endif
#ifndef HIPAMP_TRACE_PROBE
#error "HIPAMP_TRACE_PROBE (path of the trace_probe library) must be defined by the build"
#endif

/* A library built with -DHIPAMP_TRACE=OFF traces nothing: the tests that
 * need the hooks skip, and one checks that it says so. */
#ifdef HIPAMP_TRACE_OFF
#define NEEDS_HOOKS() cr_skip_test("the library was built with -DHIPAMP_TRACE=OFF")
#else
#define NEEDS_HOOKS() ((void)0)
#endif

/* The helper's workload (test/trace_helper.c). */
#define HN 4096
#define HM 1024
#define HA (32 * 48)
#define F4 4ull

/* ================================================================ JSON */

typedef enum jkind { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ } jkind;
typedef struct jv {
    jkind k;
    bool b;
    double num;
    char *str;        /* J_STR: decoded UTF-8 */
    struct jv **items; /* J_ARR, J_OBJ values */
    char **keys;       /* J_OBJ */
    size_t n;
} jv;

typedef struct jparser {
    const char *p, *start;
    char err[160];
    int depth;
} jparser;

static void jfree(jv *v)
{
    if (!v) return;
    for (size_t i = 0; i < v->n; ++i) {
        jfree(v->items[i]);
        if (v->keys) free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->str);
    free(v);
}

static bool jfail(jparser *ps, const char *what)
{
    if (!ps->err[0]) snprintf(ps->err, sizeof ps->err, "%s at byte %ld", what, (long)(ps->p - ps->start));
    return false;
}

static void jws(jparser *ps)
{
    while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r') ps->p++;
}

static jv *jvalue(jparser *ps);

static bool jpush(jv *v, jv *item, char *key)
{
    jv **items = realloc(v->items, (v->n + 1) * sizeof *items);
    if (!items) return false;
    v->items = items;
    if (v->k == J_OBJ) {
        char **keys = realloc(v->keys, (v->n + 1) * sizeof *keys);
        if (!keys) return false;
        v->keys = keys;
        v->keys[v->n] = key;
    }
    v->items[v->n++] = item;
    return true;
}

static void jput_utf8(char **o, unsigned cp)
{
    char *d = *o;
    if (cp < 0x80) *d++ = (char)cp;
    else if (cp < 0x800) {
        *d++ = (char)(0xC0 | (cp >> 6));
        *d++ = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        *d++ = (char)(0xE0 | (cp >> 12));
        *d++ = (char)(0x80 | ((cp >> 6) & 0x3F));
        *d++ = (char)(0x80 | (cp & 0x3F));
    } else {
        *d++ = (char)(0xF0 | (cp >> 18));
        *d++ = (char)(0x80 | ((cp >> 12) & 0x3F));
        *d++ = (char)(0x80 | ((cp >> 6) & 0x3F));
        *d++ = (char)(0x80 | (cp & 0x3F));
    }
    *o = d;
}

static int jhex4(const char *s)
{
    int v = 0;
    for (int i = 0; i < 4; ++i) {
        char c = s[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0) return -1;
        v = v * 16 + d;
    }
    return v;
}

/* Bytes of the valid UTF-8 sequence at s, 0 if not valid. */
static size_t jutf8(const unsigned char *s)
{
    unsigned c = s[0];
    if (c < 0x80) return 1;
    size_t len = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    if (!len) return 0;
    unsigned lo = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80, hi = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
    if (s[1] < lo || s[1] > hi) return 0;
    for (size_t i = 2; i < len; ++i)
        if (s[i] < 0x80 || s[i] > 0xBF) return 0;
    return len;
}

static char *jstring(jparser *ps)
{
    if (*ps->p != '"') return jfail(ps, "expected a string"), NULL;
    const char *s = ++ps->p;
    size_t cap = 16;
    for (const char *q = s; *q && *q != '"'; ++q) cap++;
    char *out = malloc(cap * 4), *o = out;
    if (!out) return jfail(ps, "no memory"), NULL;
    for (;;) {
        unsigned char c = (unsigned char)*ps->p;
        if (c == '"') {
            ps->p++;
            break;
        }
        if (c < 0x20) {
            free(out);
            return jfail(ps, c ? "raw control character in a string" : "unterminated string"), NULL;
        }
        if (c == '\\') {
            char e = ps->p[1];
            ps->p += 2;
            switch (e) {
            case '"': *o++ = '"'; break;
            case '\\': *o++ = '\\'; break;
            case '/': *o++ = '/'; break;
            case 'b': *o++ = '\b'; break;
            case 'f': *o++ = '\f'; break;
            case 'n': *o++ = '\n'; break;
            case 'r': *o++ = '\r'; break;
            case 't': *o++ = '\t'; break;
            case 'u': {
                int u = jhex4(ps->p);
                if (u < 0) {
                    free(out);
                    return jfail(ps, "bad \\u escape"), NULL;
                }
                ps->p += 4;
                unsigned cp = (unsigned)u;
                if (cp >= 0xD800 && cp <= 0xDBFF) {
                    int lo = ps->p[0] == '\\' && ps->p[1] == 'u' ? jhex4(ps->p + 2) : -1;
                    if (lo < 0xDC00 || lo > 0xDFFF) {
                        free(out);
                        return jfail(ps, "unpaired surrogate"), NULL;
                    }
                    ps->p += 6;
                    cp = 0x10000 + ((cp - 0xD800) << 10) + ((unsigned)lo - 0xDC00);
                } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                    free(out);
                    return jfail(ps, "unpaired surrogate"), NULL;
                }
                jput_utf8(&o, cp);
                break;
            }
            default:
                free(out);
                return jfail(ps, "bad escape"), NULL;
            }
            continue;
        }
        size_t len = jutf8((const unsigned char *)ps->p);
        if (!len) {
            free(out);
            return jfail(ps, "invalid UTF-8 in a string"), NULL;
        }
        memcpy(o, ps->p, len);
        o += len;
        ps->p += len;
    }
    *o = '\0';
    return out;
}

static bool jnumber(jparser *ps, double *out)
{
    const char *s = ps->p, *q = s;
    if (*q == '-') ++q;
    if (*q == '0') ++q;
    else if (*q >= '1' && *q <= '9')
        while (*q >= '0' && *q <= '9') ++q;
    else return jfail(ps, "bad number");
    if (*q == '.') {
        ++q;
        if (!(*q >= '0' && *q <= '9')) return jfail(ps, "bad fraction");
        while (*q >= '0' && *q <= '9') ++q;
    }
    if (*q == 'e' || *q == 'E') {
        ++q;
        if (*q == '+' || *q == '-') ++q;
        if (!(*q >= '0' && *q <= '9')) return jfail(ps, "bad exponent");
        while (*q >= '0' && *q <= '9') ++q;
    }
    char buf[64];
    if ((size_t)(q - s) >= sizeof buf) return jfail(ps, "number too long");
    memcpy(buf, s, (size_t)(q - s));
    buf[q - s] = '\0';
    *out = strtod(buf, NULL);
    ps->p = q;
    return true;
}

static jv *jvalue(jparser *ps)
{
    jws(ps);
    if (++ps->depth > 64) return jfail(ps, "nested too deeply"), NULL;
    jv *v = calloc(1, sizeof *v);
    if (!v) return jfail(ps, "no memory"), NULL;
    char c = *ps->p;
    if (c == '{' || c == '[') {
        v->k = c == '{' ? J_OBJ : J_ARR;
        char close = c == '{' ? '}' : ']';
        ps->p++;
        jws(ps);
        if (*ps->p == close) {
            ps->p++;
            goto ok;
        }
        for (;;) {
            char *key = NULL;
            if (v->k == J_OBJ) {
                jws(ps);
                if (!(key = jstring(ps))) goto bad;
                jws(ps);
                if (*ps->p != ':') {
                    free(key);
                    jfail(ps, "expected ':'");
                    goto bad;
                }
                ps->p++;
            }
            jv *item = jvalue(ps);
            if (!item || !jpush(v, item, key)) {
                jfree(item);
                free(key);
                goto bad;
            }
            jws(ps);
            if (*ps->p == ',') {
                ps->p++;
                continue;
            }
            if (*ps->p == close) {
                ps->p++;
                goto ok;
            }
            jfail(ps, "expected ',' or a closing bracket");
            goto bad;
        }
    } else if (c == '"') {
        v->k = J_STR;
        if (!(v->str = jstring(ps))) goto bad;
    } else if (!strncmp(ps->p, "true", 4) || !strncmp(ps->p, "false", 5)) {
        v->k = J_BOOL;
        v->b = c == 't';
        ps->p += v->b ? 4 : 5;
    } else if (!strncmp(ps->p, "null", 4)) {
        v->k = J_NULL;
        ps->p += 4;
    } else {
        v->k = J_NUM;
        if (!jnumber(ps, &v->num)) goto bad;
    }
ok:
    ps->depth--;
    return v;
bad:
    jfree(v);
    return NULL;
}

/* The whole text is one JSON value (and nothing else). */
static jv *jparse(const char *text, char *err, size_t n)
{
    jparser ps = {text, text, "", 0};
    jv *v = jvalue(&ps);
    if (v) {
        jws(&ps);
        if (*ps.p) {
            jfail(&ps, "text after the value");
            jfree(v);
            v = NULL;
        }
    }
    snprintf(err, n, "%s", ps.err);
    return v;
}

static const jv *jget(const jv *o, const char *key)
{
    if (!o || o->k != J_OBJ) return NULL;
    for (size_t i = 0; i < o->n; ++i)
        if (!strcmp(o->keys[i], key)) return o->items[i];
    return NULL;
}
static const char *jstr(const jv *o, const char *key)
{
    const jv *v = jget(o, key);
    return v && v->k == J_STR ? v->str : NULL;
}
static double jnum(const jv *o, const char *key, double dflt)
{
    const jv *v = jget(o, key);
    return v && v->k == J_NUM ? v->num : dflt;
}
static bool jis(const jv *o, const char *key, const char *want)
{
    const char *s = jstr(o, key);
    return s && !strcmp(s, want);
}

Test(trace, json_parser_is_strict)
{
    static const char *const bad[] = {
        "{\"a\":1,}", "[1 2]", "{\"a\" 1}", "\"\x01\"", "\"\\x\"", "[01]", "[1.]", "{} {}", "\"\xff\"",
        "\"\\ud800\"", "[", "{\"a\":tru}", "[-]"};
    static const char *const good[] = {"{}", "[]", "{\"a\":[1,-2.5e3,true,false,null,\"\\u00e9\\ud83d\\ude00\"]}",
                                       " [0, 0.5, \"\\\"\\\\\\/\\b\\f\\n\\r\\t\"] "};
    char err[160];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        jv *v = jparse(bad[i], err, sizeof err);
        cr_expect_null(v, "accepted invalid JSON %s", bad[i]);
        jfree(v);
    }
    for (size_t i = 0; i < sizeof good / sizeof good[0]; ++i) {
        jv *v = jparse(good[i], err, sizeof err);
        cr_expect_not_null(v, "rejected valid JSON %s: %s", good[i], err);
        jfree(v);
    }
    jv *v = jparse("{\"s\":\"\\u00e9\\ud83d\\ude00x\"}", err, sizeof err);
    cr_assert_not_null(v);
    cr_expect_str_eq(jstr(v, "s"), "\xc3\xa9\xf0\x9f\x98\x80x");
    jfree(v);
}

/* ======================================================== processes */

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *s = malloc(cap);
    size_t r;
    while (s && (r = fread(s + n, 1, cap - n - 1, f)) > 0) {
        n += r;
        if (cap - n < 2) {
            char *g = realloc(s, cap *= 2);
            if (!g) {
                free(s);
                s = NULL;
            }
            s = g;
        }
    }
    fclose(f);
    if (s) s[n] = '\0';
    return s;
}

typedef struct tdir { char path[64]; } tdir;

static void tdir_make(tdir *d)
{
    snprintf(d->path, sizeof d->path, "/tmp/hipamp-trace-XXXXXX");
    cr_assert_not_null(mkdtemp(d->path), "mkdtemp: %s", strerror(errno));
}

static void tdir_remove(tdir *d) { test_remove_tree(d->path); }

typedef struct run {
    int code;
    char *out, *err;
} run;

static void run_free(run *r)
{
    free(r->out);
    free(r->err);
}

/* Variables the child must not inherit from whoever runs the suite: the
 * test decides them. LD_LIBRARY_PATH is inherited (the vendor runtime may
 * live there: HIP on NVIDIA's test runtime does) unless a test sets it. */
static bool env_dropped(const char *kv)
{
    static const char *const names[] = {"AMP_TRACE=", "AMP_TRACE_SUMMARY=", "AMP_TRACE_VENDOR=", "AMP_TRACE_MAX_EVENTS=",
                                        "NVTX_INJECTION64_PATH=", "HSA_TOOLS_LIB=", "ROCP_TOOL_LIB=",
                                        "ROCP_TOOL_LIBRARIES=", "AMP_PROBE_LOG=", "AMP_CACHE_DIR=",
                                        "AMP_CPU_THREADS="};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i)
        if (!strncmp(kv, names[i], strlen(names[i]))) return true;
    return false;
}

/* Whether kv names a variable that add[] (NULL-terminated) sets. */
static bool env_overridden(const char *kv, const char *const *add)
{
    const char *eq = strchr(kv, '=');
    size_t n = eq ? (size_t)(eq - kv) + 1 : strlen(kv);
    for (size_t i = 0; add && add[i]; ++i)
        if (!strncmp(kv, add[i], n)) return true;
    return false;
}

/* Run argv with the environment minus the trace variables plus add[]
 * (NULL-terminated; it overrides what the environment has), stdout and
 * stderr into files of d. The CPU accelerator runs on one thread: in the
 * sanitizer build, LeakSanitizer's exit scan crashes now and then on the
 * dynamic TLS a CPU worker thread holds of a kernel module (its DTLS range
 * is garbage), which is not the trace's business; the hooks all run on the
 * calling thread anyway. A child still running after timeout_s seconds (0:
 * no limit) is killed and reported as code -1. */
static run run_child_within(const tdir *d, char *const argv[], const char *const *add, unsigned timeout_s)
{
    size_t n = 0, m = 0;
    while (environ[n]) ++n;
    char **env = calloc(n + 16, sizeof *env);
    cr_assert_not_null(env);
    for (size_t i = 0; i < n; ++i)
        if (!env_dropped(environ[i]) && !env_overridden(environ[i], add)) env[m++] = environ[i];
    for (size_t i = 0; add && add[i] && m < n + 14; ++i) env[m++] = (char *)add[i];
    env[m++] = "AMP_CPU_THREADS=1";
    env[m] = NULL;
    char out[128], err[128];
    snprintf(out, sizeof out, "%s/stdout", d->path);
    snprintf(err, sizeof err, "%s/stderr", d->path);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&fa, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    pid_t pid;
    int e = posix_spawn(&pid, argv[0], &fa, NULL, argv, env);
    posix_spawn_file_actions_destroy(&fa);
    free(env);
    cr_assert_eq(e, 0, "posix_spawn(%s): %s", argv[0], strerror(e));
    int ws = 0;
    bool killed = false;
    for (long waited_ms = 0;; waited_ms += 20) {
        pid_t w = waitpid(pid, &ws, timeout_s ? WNOHANG : 0);
        if (w == pid) break;
        cr_assert(w == 0 || errno == EINTR, "waitpid: %s", strerror(errno));
        if (timeout_s && waited_ms >= 1000L * timeout_s && !killed) {
            kill(pid, SIGKILL);
            killed = true;
        }
        usleep(20000);
    }
    run r = {killed ? -1 : WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + (WIFSIGNALED(ws) ? WTERMSIG(ws) : 0), read_file(out),
             read_file(err)};
    cr_assert_not_null(r.out);
    cr_assert_not_null(r.err);
    return r;
}

static run run_child(const tdir *d, char *const argv[], const char *const *add) { return run_child_within(d, argv, add, 0); }

/* trace_helper on acc with extra variables and arguments (args
 * NULL-terminated, may be NULL). Its cache directory is fresh (under d),
 * so that its first build compiles, unless shared_cache and the suite
 * names one (AMP_CACHE_DIR, as ctest sets it): a test that reads no
 * build's cache result then costs no compile after the suite's first
 * (each build is three to four compiler runs on the CPU accelerator,
 * most of this file's time). timeout_s as for run_child_within. */
static run run_helper_in(const tdir *d, amp_accelerator *acc, bool shared_cache, const char *const *add,
                         const char *const *args, unsigned timeout_s)
{
    amp_accelerator_info info;
    ASSERT_OK(amp_accelerator_get_info(acc, &info));
    const char *suite_cache = shared_cache ? getenv("AMP_CACHE_DIR") : NULL;
    char cache[1200];
    if (suite_cache && *suite_cache) snprintf(cache, sizeof cache, "AMP_CACHE_DIR=%s", suite_cache);
    else snprintf(cache, sizeof cache, "AMP_CACHE_DIR=%s/cache", d->path);
    const char *env[16];
    size_t k = 0;
    env[k++] = cache;
    for (size_t i = 0; add && add[i] && k < 15; ++i) env[k++] = add[i];
    env[k] = NULL;
    char *argv[16] = {HIPAMP_TRACE_HELPER, info.device_path};
    for (size_t i = 0; args && args[i] && i < 13; ++i) argv[2 + i] = (char *)args[i];
    return run_child_within(d, argv, env, timeout_s);
}

static run run_helper_args(const tdir *d, amp_accelerator *acc, const char *const *add, const char *const *args,
                           unsigned timeout_s)
{
    return run_helper_in(d, acc, false, add, args, timeout_s);
}

/* trace_helper with the suite's cache (run_helper_in): for the tests
 * that read no build's cache result (hit or miss). */
static run run_helper_shared(const tdir *d, amp_accelerator *acc, const char *const *add, const char *const *args)
{
    return run_helper_in(d, acc, true, add, args, 0);
}

static run run_helper(const tdir *d, amp_accelerator *acc, const char *const *add, const char *arg, const char *arg2)
{
    const char *args[] = {arg, arg2, NULL};
    return run_helper_args(d, acc, add, args, 0);
}

/* The helper's printed values. */
typedef struct hstats {
    unsigned long long v[9]; /* h2d bytes, copies, d2h bytes, copies, d2d bytes, copies, h2h bytes, copies, launches */
    bool found;
} hstats;
typedef struct hout {
    int unified, disk;
    hstats def, second;
    double launch_ms, copy_ms; /* copy_ms < 0: unsupported */
    char flush[64];
    bool ok;
} hout;

static hout parse_helper(const run *r)
{
    hout h;
    memset(&h, 0, sizeof h);
    h.unified = h.disk = -1;
    h.launch_ms = h.copy_ms = -2;
    for (const char *line = r->out; line && *line;) {
        char name[32], what[64];
        hstats s;
        memset(&s, 0, sizeof s);
        if (sscanf(line, "queue %31s %llu %llu %llu %llu %llu %llu %llu %llu %llu", name, &s.v[0], &s.v[1], &s.v[2],
                   &s.v[3], &s.v[4], &s.v[5], &s.v[6], &s.v[7], &s.v[8]) == 10) {
            s.found = true;
            if (!strcmp(name, "default")) h.def = s;
            else h.second = s;
        } else if (sscanf(line, "unified %d", &h.unified) == 1 || sscanf(line, "disk_cache %d", &h.disk) == 1 ||
                   sscanf(line, "elapsed_launch_ms %lf", &h.launch_ms) == 1) {
        } else if (sscanf(line, "elapsed_copy_ms %63s", what) == 1) {
            h.copy_ms = strcmp(what, "unsupported") ? atof(what) : -1;
        } else if (sscanf(line, "flush %63s", what) == 1) {
            snprintf(h.flush, sizeof h.flush, "%s", what);
        } else if (!strncmp(line, "ok\n", 3)) {
            h.ok = true;
        }
        const char *nl = strchr(line, '\n');
        line = nl ? nl + 1 : NULL;
    }
    return h;
}

/* ============================================================ trace */

typedef struct trace {
    jv *root;
    const jv *events;
    char *text;
} trace;

static trace load_trace(const char *path)
{
    trace t;
    memset(&t, 0, sizeof t);
    t.text = read_file(path);
    cr_assert_not_null(t.text, "no trace file %s", path);
    char err[160];
    t.root = jparse(t.text, err, sizeof err);
    cr_assert_not_null(t.root, "%s is not valid JSON: %s", path, err);
    t.events = jget(t.root, "traceEvents");
    cr_assert(t.events && t.events->k == J_ARR, "%s has no traceEvents array", path);
    /* otherData counts the events written (metadata aside). */
    size_t n = 0;
    for (size_t i = 0; i < t.events->n; ++i) {
        const jv *e = t.events->items[i];
        cr_assert(e->k == J_OBJ, "event %zu is not an object", i);
        const char *ph = jstr(e, "ph");
        cr_assert_not_null(ph, "event %zu has no ph", i);
        cr_assert(jget(e, "pid") && jget(e, "name"), "event %zu has no pid or name", i);
        if (strcmp(ph, "M")) {
            n++;
            cr_assert(jnum(e, "ts", -1) >= 0, "event %zu (%s) has no ts >= 0", i, jstr(e, "name"));
            cr_assert(jget(e, "tid"), "event %zu has no tid", i);
            if (!strcmp(ph, "X")) cr_assert(jnum(e, "dur", -1) > 0, "event %zu (%s) has dur <= 0", i, jstr(e, "name"));
            else cr_assert(!strcmp(ph, "i"), "event %zu has phase %s", i, ph);
        }
    }
    const jv *other = jget(t.root, "otherData");
    cr_assert_not_null(other, "no otherData");
    cr_expect_eq((size_t)jnum(other, "events", -1), n, "otherData.events %g, %zu events in the file",
                 jnum(other, "events", -1), n);
    return t;
}

static void trace_free(trace *t)
{
    jfree(t->root);
    free(t->text);
}

/* The name of the track (pid, tid) from the metadata events ("" if none). */
static const char *track_name(const trace *t, double pid, double tid)
{
    for (size_t i = 0; i < t->events->n; ++i) {
        const jv *e = t->events->items[i];
        if (jis(e, "ph", "M") && jis(e, "name", tid < 0 ? "process_name" : "thread_name") && jnum(e, "pid", -1) == pid &&
            (tid < 0 || jnum(e, "tid", -1) == tid))
            return jstr(jget(e, "args"), "name") ? jstr(jget(e, "args"), "name") : "";
    }
    return "";
}

/* Queue id of the track named "queue N (default view)" (want_default) or
 * of another queue track; 0 when none. */
static int queue_id(const trace *t, bool want_default)
{
    for (size_t i = 0; i < t->events->n; ++i) {
        const jv *e = t->events->items[i];
        const char *name = jstr(jget(e, "args"), "name");
        if (!jis(e, "ph", "M") || !jis(e, "name", "thread_name") || !name || strncmp(name, "queue ", 6)) continue;
        bool is_default = strstr(name, "(default view)") != NULL;
        if (is_default == want_default) return atoi(name + 6);
    }
    return 0;
}

typedef struct sums {
    unsigned long long bytes[5], copies[5], launches, avoided[5], avoided_n[5];
} sums;

static int dir_of(const char *d)
{
    return !d ? 0 : !strcmp(d, "host->device") ? 1 : !strcmp(d, "device->host") ? 2 : !strcmp(d, "device->device") ? 3
                   : !strcmp(d, "host->host") ? 4 : 0;
}

static sums sum_queue(const trace *t, int qid)
{
    sums s;
    memset(&s, 0, sizeof s);
    for (size_t i = 0; i < t->events->n; ++i) {
        const jv *e = t->events->items[i], *a = jget(e, "args");
        if ((int)jnum(a, "queue", -1) != qid) continue;
        if (jis(e, "cat", "launch")) s.launches++;
        if (jis(e, "cat", "copy") && jis(e, "ph", "X")) {
            int d = dir_of(jstr(a, "direction"));
            cr_assert(d, "copy without a direction");
            s.bytes[d] += (unsigned long long)jnum(a, "bytes", 0);
            s.copies[d]++;
        }
        if (jis(e, "cat", "copy") && jis(e, "ph", "i")) {
            int d = dir_of(jstr(a, "direction"));
            s.avoided[d] += (unsigned long long)jnum(a, "bytes_saved", 0);
            s.avoided_n[d]++;
        }
    }
    return s;
}

static void expect_sums_match(const sums *s, const hstats *h, const char *queue)
{
    cr_assert(h->found, "the helper printed no statistics for the %s queue", queue);
    static const char *const names[5] = {"", "host->device", "device->host", "device->device", "host->host"};
    for (int d = 1; d <= 4; ++d) {
        cr_expect_eq(s->bytes[d], h->v[2 * (d - 1)], "%s queue %s: the trace's copies sum to %llu bytes, the stats say %llu",
                     queue, names[d], s->bytes[d], h->v[2 * (d - 1)]);
        cr_expect_eq(s->copies[d], h->v[2 * (d - 1) + 1], "%s queue %s: %llu copies in the trace, %llu in the stats",
                     queue, names[d], s->copies[d], h->v[2 * (d - 1) + 1]);
    }
    cr_expect_eq(s->launches, h->v[8], "%s queue: %llu launches in the trace, %llu in the stats", queue, s->launches,
                 h->v[8]);
}

/* Bytes of the copies of direction dir and reason why on queue qid (ph X),
 * and how many. */
static unsigned long long reason_bytes(const trace *t, int qid, const char *dir, const char *why, int *count)
{
    unsigned long long b = 0;
    *count = 0;
    for (size_t i = 0; i < t->events->n; ++i) {
        const jv *e = t->events->items[i], *a = jget(e, "args");
        if (!jis(e, "cat", "copy") || (int)jnum(a, "queue", -1) != qid || !jis(a, "direction", dir) || !jis(a, "reason", why))
            continue;
        b += (unsigned long long)jnum(a, jis(e, "ph", "i") ? "bytes_saved" : "bytes", 0);
        (*count)++;
    }
    return b;
}

#define EXPECT_REASON(t, qid, dir, why, want_bytes, want_count)                                               \
    do {                                                                                                     \
        int n_;                                                                                              \
        unsigned long long b_ = reason_bytes((t), (qid), (dir), (why), &n_);                                 \
        cr_expect(b_ == (unsigned long long)(want_bytes) && n_ == (want_count),                              \
                  "queue %d %s '%s': %llu bytes in %d events, want %llu in %d", (qid), (dir), (why), b_, n_,   \
                  (unsigned long long)(want_bytes), (int)(want_count));                                      \
    } while (0)

static int count_cat(const trace *t, const char *cat, const char *name)
{
    int n = 0;
    for (size_t i = 0; i < t->events->n; ++i) {
        const jv *e = t->events->items[i];
        if (jis(e, "cat", cat) && (!name || jis(e, "name", name))) n++;
    }
    return n;
}

/* No two slices of one track overlap (ts and dur are printed to 1 ns). */
static void expect_tracks_ordered(const trace *t)
{
    for (size_t i = 0; i < t->events->n; ++i) {
        const jv *a = t->events->items[i];
        if (!jis(a, "ph", "X") || jnum(a, "tid", 0) < 1000) continue; /* queue tracks */
        double a0 = jnum(a, "ts", 0), a1 = a0 + jnum(a, "dur", 0);
        for (size_t j = i + 1; j < t->events->n; ++j) {
            const jv *b = t->events->items[j];
            if (!jis(b, "ph", "X") || jnum(b, "tid", 0) != jnum(a, "tid", 0) || jnum(b, "pid", 0) != jnum(a, "pid", 0))
                continue;
            double b0 = jnum(b, "ts", 0), b1 = b0 + jnum(b, "dur", 0);
            cr_expect(a1 <= b0 + 0.002 || b1 <= a0 + 0.002, "%s [%.3f, %.3f) and %s [%.3f, %.3f) overlap on queue track %g",
                      jstr(a, "name"), a0, a1, jstr(b, "name"), b0, b1, jnum(a, "tid", 0));
        }
    }
}

/* ======================================================== the tests */

ACCEL_TEST(trace, helper_events_match_stats)
{
    NEEDS_HOOKS();
    amp_accelerator_info info;
    ASSERT_OK(amp_accelerator_get_info(acc, &info));
    tdir d;
    tdir_make(&d);
    char var[256], path[128];
    snprintf(path, sizeof path, "%s/trace.json", d.path);
    snprintf(var, sizeof var, "AMP_TRACE=%s", path);
    const char *env[] = {var, NULL};
    run r = run_helper(&d, acc, env, NULL, NULL);
    cr_assert_eq(r.code, 0, "trace_helper exited %d:\n%s", r.code, r.err);
    hout h = parse_helper(&r);
    cr_assert(h.ok && h.unified >= 0 && h.disk >= 0, "trace_helper's output is incomplete:\n%s", r.out);
    cr_expect_str_eq(h.flush, "AMP_OK", "the mid-run amp_trace_flush failed:\n%s", r.err);
    trace t = load_trace(path);

    /* Tracks: the host, the default queue and the second queue. */
    cr_expect(strstr(track_name(&t, 1, -1), "hipamp host"), "no host process track");
    cr_expect(strstr(track_name(&t, 1, 1), "host thread 1"), "no host thread track");
    int qd = queue_id(&t, true), q2 = queue_id(&t, false);
    cr_assert(qd > 0 && q2 > 0 && qd != q2, "want a default-view queue track and another (got %d, %d)", qd, q2);

    /* Every copy and launch of each queue, summed, is what its statistics
     * counted; and what the workload makes them (independent of both). */
    sums sd = sum_queue(&t, qd), s2 = sum_queue(&t, q2);
    expect_sums_match(&sd, &h.def, "default");
    expect_sums_match(&s2, &h.second, "second");
    const unsigned long long xb = HN * F4, zb = HM * F4, ab = HA * F4;
    if (h.unified) {
        /* Views run in place: only the arrays' own copies move bytes. An
         * array's memory is its accelerator's (the CPU accelerator's too), so
         * the array-to-array amp_copy is device->device. */
        unsigned long long want_d[5] = {0, ab, ab, ab, 0}, want_2[5] = {0};
        for (int k = 1; k <= 4; ++k) {
            cr_expect_eq(sd.bytes[k], want_d[k], "default queue direction %d: %llu bytes, want %llu", k, sd.bytes[k], want_d[k]);
            cr_expect_eq(s2.bytes[k], want_2[k], "second queue direction %d: %llu bytes, want %llu", k, s2.bytes[k], want_2[k]);
            cr_expect_eq(sd.avoided_n[k] + s2.avoided_n[k], 0, "no copy can be avoided on a unified accelerator");
        }
        EXPECT_REASON(&t, qd, "device->device", "amp_copy", ab, 1);
    } else {
        EXPECT_REASON(&t, qd, "host->device", "first use", xb, 1);
        EXPECT_REASON(&t, qd, "host->device", "stale after refresh", xb, 1);
        EXPECT_REASON(&t, qd, "host->device", "array init", ab, 1);
        EXPECT_REASON(&t, qd, "device->host", "synchronize", xb, 1);
        EXPECT_REASON(&t, qd, "device->host", "amp_array_copy_to_host", ab, 1);
        EXPECT_REASON(&t, qd, "device->device", "amp_copy", ab, 1);
        EXPECT_REASON(&t, q2, "host->device", "first use", zb, 1);
        EXPECT_REASON(&t, q2, "device->host", "synchronize", zb, 1);
        /* y is write-only: its copy-in was avoided; discard_data dropped
         * its second result instead of copying it back. */
        cr_expect(sd.avoided[1] == xb && sd.avoided_n[1] == 1, "avoided copy-in: %llu bytes in %llu, want %llu in 1",
                  sd.avoided[1], sd.avoided_n[1], xb);
        cr_expect(sd.avoided[2] == xb && sd.avoided_n[2] == 1, "avoided copy-back: %llu bytes in %llu, want %llu in 1",
                  sd.avoided[2], sd.avoided_n[2], xb);
        EXPECT_REASON(&t, qd, "host->device", "discard avoided", xb, 1);
        EXPECT_REASON(&t, qd, "device->host", "discard avoided", xb, 1);
        unsigned long long want_d[5] = {0, 2 * xb + ab, xb + ab, ab, 0};
        for (int k = 1; k <= 4; ++k)
            cr_expect_eq(sd.bytes[k], want_d[k], "default queue direction %d: %llu bytes, want %llu", k, sd.bytes[k], want_d[k]);
    }
    cr_expect_eq(sd.launches, 3);
    cr_expect_eq(s2.launches, 1);

    /* Launches: names, domains, tiles, device times. */
    int scale = 0, flip = 0, add = 0;
    for (size_t i = 0; i < t.events->n; ++i) {
        const jv *e = t.events->items[i], *a = jget(e, "args");
        if (!jis(e, "cat", "launch")) continue;
        cr_expect(jis(a, "accelerator", info.device_path), "launch on %s, want %s", jstr(a, "accelerator"), info.device_path);
        cr_expect(jget(a, "device_timed") && jget(a, "device_timed")->b, "launch %s not timed on the device", jstr(e, "name"));
        cr_expect(jnum(e, "dur", 0) > 0 && jnum(a, "device_ms", 0) > 0, "launch %s has no positive device time", jstr(e, "name"));
        cr_expect(jnum(e, "tid", 0) == 1000 + jnum(a, "queue", 0), "launch %s is not on its queue's track", jstr(e, "name"));
        cr_expect(!strcmp(track_name(&t, jnum(e, "pid", 0), -1), "") == false, "launch on an unnamed process track");
        if (jis(e, "name", "trace_scale")) {
            scale++;
            cr_expect(jis(a, "extent", "4096") && jis(a, "tile", "none") && (int)jnum(a, "queue", 0) == qd);
        } else if (jis(e, "name", "trace_tile_flip")) {
            flip++;
            cr_expect(jis(a, "extent", "1024") && jis(a, "tile", "64") && (int)jnum(a, "queue", 0) == q2,
                      "tiled launch: extent %s tile %s queue %g", jstr(a, "extent"), jstr(a, "tile"), jnum(a, "queue", 0));
        } else if (jis(e, "name", "trace_add_one")) {
            add++;
            cr_expect(jis(a, "extent", "32x48") && jis(a, "tile", "none"));
            /* Its future's events bracket the trace's own pair. */
            double us = jnum(e, "dur", 0);
            cr_expect(us <= h.launch_ms * 1e3 + 1.0, "the trace's device time %.3f us exceeds the future's %.3f us", us,
                      h.launch_ms * 1e3);
        } else {
            cr_expect_fail("unexpected launch %s", jstr(e, "name"));
        }
    }
    cr_expect(scale == 2 && flip == 1 && add == 1, "launches: trace_scale %d, trace_tile_flip %d, trace_add_one %d", scale,
              flip, add);
    expect_tracks_ordered(&t);

    /* Builds: compiled, memory hit, disk hit; each names the source's kernels. */
    const char *want_cache[3] = {"miss", "memory", h.disk ? "disk" : "miss"};
    int nb = 0;
    for (size_t i = 0; i < t.events->n; ++i) {
        const jv *e = t.events->items[i], *a = jget(e, "args");
        if (!jis(e, "cat", "build")) continue;
        cr_assert(nb < 3, "more than three builds traced");
        cr_expect(jis(a, "cache", want_cache[nb]), "build %d: cache %s, want %s", nb, jstr(a, "cache"), want_cache[nb]);
        cr_expect(jis(a, "status", "AMP_OK") && jis(a, "accelerator", info.device_path));
        cr_expect(jis(a, "source", "kernel.hip [trace_scale +2]"), "build source label '%s'", jstr(a, "source"));
        cr_expect(jnum(e, "pid", 0) == 1, "builds belong on the host track");
        nb++;
    }
    cr_expect_eq(nb, 3, "%d builds traced, want 3", nb);
    /* Waits: synchronize, future, destroy. A wait that found its point
     * passed is not traced, so which of them blocked depends on the
     * accelerator; each one traced is a good wait of one of the helper's
     * queues, and the second queue's (z's destroy, which waits for its
     * tiled launch: nothing waited on that queue before) and a wait of the
     * default queue for a point of it are among them. */
    int waits = 0, on_second = 0, default_points = 0;
    for (size_t i = 0; i < t.events->n; ++i) {
        const jv *e = t.events->items[i], *a = jget(e, "args");
        if (!jis(e, "cat", "wait")) continue;
        waits++;
        const int queue = (int)jnum(a, "queue", -1);
        const jv *until = jget(a, "until");
        cr_expect(jis(a, "accelerator", info.device_path), "wait on %s, want %s", jstr(a, "accelerator"),
                  info.device_path);
        cr_expect(jis(a, "status", "AMP_OK"), "wait %d: status %s", waits, jstr(a, "status"));
        cr_expect(queue == qd || queue == q2, "wait %d on queue %d, not the helper's %d or %d", waits, queue, qd, q2);
        cr_expect(until && ((until->k == J_STR && !strcmp(until->str, "all")) || (until->k == J_NUM && until->num >= 1)),
                  "wait %d: until is neither \"all\" nor a command's number", waits);
        on_second += queue == q2;
        default_points += queue == qd && until && until->k == J_NUM;
    }
    cr_expect(waits >= 2, "only %d waits traced", waits);
    cr_expect(on_second >= 1, "no wait of the second queue traced (z's destroy waits for its launch)");
    cr_expect(default_points >= 1, "no wait of the default queue for a point of it traced");
    trace_free(&t);
    run_free(&r);
    tdir_remove(&d);
}

ACCEL_TEST(trace, summary_table)
{
    NEEDS_HOOKS();
    tdir d;
    tdir_make(&d);
    const char *env[] = {"AMP_TRACE_SUMMARY=1", NULL};
    run r = run_helper(&d, acc, env, NULL, NULL);
    cr_assert_eq(r.code, 0, "trace_helper exited %d:\n%s", r.code, r.err);
    hout h = parse_helper(&r);
    cr_assert(h.ok, "trace_helper's output is incomplete:\n%s", r.out);
    const char *s = strstr(r.err, "hipamp trace summary");
    cr_assert_not_null(s, "no summary on stderr:\n%s", r.err);
    struct { const char *name; unsigned long long launches; } want[3] = {{"trace_scale", 2}, {"trace_tile_flip", 1}, {"trace_add_one", 1}};
    for (int k = 0; k < 3; ++k) {
        char key[64];
        snprintf(key, sizeof key, "\n  %s ", want[k].name);
        const char *line = strstr(s, key);
        cr_assert_not_null(line, "no summary row for %s:\n%s", want[k].name, s);
        unsigned long long n = 0;
        double ms = -1;
        cr_assert_eq(sscanf(line + strlen(key), "%llu %lf", &n, &ms), 2, "bad row for %s", want[k].name);
        cr_expect_eq(n, want[k].launches, "%s: %llu launches in the summary, want %llu", want[k].name, n, want[k].launches);
        cr_expect(ms > 0, "%s: device time %g ms", want[k].name, ms);
    }
    cr_expect(strstr(s, "4 launches of 3 kernels"), "no launch total:\n%s", s);
    unsigned long long h2d = h.def.v[0] + h.second.v[0], d2h = h.def.v[2] + h.second.v[2];
    char line[128];
    snprintf(line, sizeof line, "%-16s %16llu %8llu", "host->device", h2d, h.def.v[1] + h.second.v[1]);
    cr_expect(strstr(s, line), "want '%s' in:\n%s", line, s);
    snprintf(line, sizeof line, "%-16s %16llu %8llu", "device->host", d2h, h.def.v[3] + h.second.v[3]);
    cr_expect(strstr(s, line), "want '%s' in:\n%s", line, s);
    snprintf(line, sizeof line, "builds 3: %d compiled, 1 memory-cache hits, %d disk-cache hits, 0 prebuilt, 0 failed", h.disk ? 1 : 2,
             h.disk ? 1 : 0);
    cr_expect(strstr(s, line), "want '%s' in:\n%s", line, s);
    if (!h.unified) {
        snprintf(line, sizeof line, "%-16s %16llu %8d", "avoided h->d", HN * F4, 1);
        cr_expect(strstr(s, line), "want '%s' in:\n%s", line, s);
    }
    cr_expect_null(strstr(s, "trace:"), "no trace file was asked for, but the summary names one");
    run_free(&r);
    tdir_remove(&d);
}

ACCEL_TEST(trace, flush_mid_run_leaves_a_complete_file)
{
    NEEDS_HOOKS();
    tdir d;
    tdir_make(&d);
    char var[256], path[128];
    snprintf(path, sizeof path, "%s/trace.json", d.path);
    snprintf(var, sizeof var, "AMP_TRACE=%s", path);
    const char *env[] = {var, NULL};
    /* The helper flushes, then leaves with _exit: no exit-time flush. */
    const char *args[] = {"--flush-exit", NULL};
    run r = run_helper_shared(&d, acc, env, args);
    cr_assert_eq(r.code, 0, "trace_helper exited %d:\n%s", r.code, r.err);
    hout h = parse_helper(&r);
    cr_expect_str_eq(h.flush, "AMP_OK");
    trace t = load_trace(path);
    cr_expect_eq(count_cat(&t, "launch", "trace_scale"), 2);
    cr_expect_eq(count_cat(&t, "launch", NULL), 2, "launches after the flush must not be in the file");
    cr_expect_eq(count_cat(&t, "build", NULL), 3);
    sums sd = sum_queue(&t, queue_id(&t, true));
    expect_sums_match(&sd, &h.def, "default");
    trace_free(&t);
    run_free(&r);
    tdir_remove(&d);
}

/* A graph's replay (issue 24) is one span on its queue, "graph: <its
 * kernels>", with its launches inside where the backend times them (the
 * CPU accelerator's synchronous replays: each launch a span within the
 * replay's, on the same track); a GPU driver runs a graph as a whole. The
 * summary counts the replays. */
ACCEL_TEST(trace, graph_replays_are_spans_with_their_launches)
{
    NEEDS_HOOKS();
    tdir d;
    tdir_make(&d);
    char var[256], path[128];
    snprintf(path, sizeof path, "%s/trace.json", d.path);
    snprintf(var, sizeof var, "AMP_TRACE=%s", path);
    const char *env[] = {var, "AMP_TRACE_SUMMARY=1", NULL};
    const char *args[] = {"--graph", NULL};
    run r = run_helper_shared(&d, acc, env, args);
    cr_assert_eq(r.code, 0, "trace_helper exited %d:\n%s", r.code, r.err);
    cr_assert(strstr(r.out, "graph_replays 3"), "%s", r.out);
    cr_expect(strstr(r.err, "graph replays 3 (6 launches in them)") || strstr(r.out, "graph replays 3 (6 launches in them)"),
              "no summary line for the replays:\n%s\n%s", r.out, r.err);
    trace t = load_trace(path);
    cr_assert_eq(count_cat(&t, "graph", "graph: trace_add_one"), 3);
    amp_accelerator_info info;
    ASSERT_OK(amp_accelerator_get_info(acc, &info));
    int inside = 0;
    for (size_t i = 0; i < t.events->n; ++i) {
        const jv *e = t.events->items[i];
        if (!jis(e, "cat", "launch") || !jis(e, "name", "trace_add_one")) continue;
        double ts = jnum(e, "ts", -1), end = ts + jnum(e, "dur", 0);
        for (size_t k = 0; k < t.events->n; ++k) {
            const jv *g = t.events->items[k];
            if (!jis(g, "cat", "graph") || jnum(g, "pid", -1) != jnum(e, "pid", -2) ||
                jnum(g, "tid", -1) != jnum(e, "tid", -2))
                continue;
            double g0 = jnum(g, "ts", -1), g1 = g0 + jnum(g, "dur", 0);
            if (ts >= g0 - 0.001 && end <= g1 + 0.001) {
                inside++;
                break;
            }
        }
    }
    cr_expect_eq(inside, info.is_emulated ? 6 : 0, "%d launches inside the replays' spans", inside);
    cr_expect_eq(count_cat(&t, "launch", "trace_add_one"), info.is_emulated ? 6 : 0);
    trace_free(&t);
    run_free(&r);
    tdir_remove(&d);
}

/* The demo: the study's transposes. On a discrete GPU each variant copies
 * A and At in (At is read-write) and At back once. */
ACCEL_TEST(trace, demo_study)
{
    NEEDS_HOOKS();
#ifndef HIPAMP_STUDY
    cr_skip_test("examples/study was not built (HIPAMP_BUILD_EXAMPLES=OFF)");
#else
    amp_accelerator_info info;
    ASSERT_OK(amp_accelerator_get_info(acc, &info));
    tdir d;
    tdir_make(&d);
    char var[256], path[128];
    snprintf(path, sizeof path, "%s/study.json", d.path);
    snprintf(var, sizeof var, "AMP_TRACE=%s", path);
    const char *cache = getenv("AMP_CACHE_DIR");
    char cvar[1100];
    snprintf(cvar, sizeof cvar, "AMP_CACHE_DIR=%s", cache ? cache : "");
    const char *env[] = {var, cache ? cvar : NULL, NULL};
    char *argv[] = {HIPAMP_STUDY, "--quick", "--only", "transpose", "--budget", "0.02", "--accelerator", info.device_path, NULL};
    run r = run_child(&d, argv, env);
    cr_assert_eq(r.code, 0, "study exited %d:\n%s\n%s", r.code, r.out, r.err);
    trace t = load_trace(path);
    static const char *const kernels[] = {"transpose_simple", "transpose_tiled_pad", "transpose_tiled_truncate",
                                          "transpose_tiled_even", "transpose_tuned"};
    for (size_t k = 0; k < 5; ++k)
        cr_expect(count_cat(&t, "launch", kernels[k]) >= 1, "no launch of %s in the study's trace", kernels[k]);
    int builds = 0;
    bool tsrc = false, msrc = false;
    for (size_t i = 0; i < t.events->n; ++i) {
        const jv *e = t.events->items[i], *a = jget(e, "args");
        if (!jis(e, "cat", "build")) continue;
        builds++;
        tsrc |= strstr(jstr(a, "source"), "[transpose_simple") != NULL;
        msrc |= strstr(jstr(a, "source"), "[matmul_simple") != NULL;
        cr_expect(jis(a, "status", "AMP_OK"));
    }
    cr_expect(builds == 2 && tsrc && msrc, "want the transpose and matmul builds (%d builds)", builds);
    int qd = queue_id(&t, true);
    cr_assert(qd > 0, "no default-view queue track");
    sums s = sum_queue(&t, qd);
    const unsigned long long mn = 999ull * 666ull * F4;
    unsigned long long want_h2d = info.is_unified_memory ? 0 : 5 * 2 * mn, want_d2h = info.is_unified_memory ? 0 : 5 * mn;
    cr_expect_eq(s.bytes[1], want_h2d, "the study's copies in: %llu bytes, want %llu", s.bytes[1], want_h2d);
    cr_expect_eq(s.bytes[2], want_d2h, "the study's copies back: %llu bytes, want %llu", s.bytes[2], want_d2h);
    if (!info.is_unified_memory) EXPECT_REASON(&t, qd, "host->device", "first use", want_h2d, 10 + 2 * 2);
    expect_tracks_ordered(&t);
    trace_free(&t);
    run_free(&r);
    tdir_remove(&d);
#endif
}

/* ------------------------------------------------- error paths, options */

Test(trace, unwritable_file_reported)
{
    NEEDS_HOOKS();
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    tdir d;
    tdir_make(&d);
    char var[160];
    snprintf(var, sizeof var, "AMP_TRACE=%s/no/such/dir/trace.json", d.path);
    const char *env[] = {var, NULL};
    run r = run_helper_shared(&d, acc, env, NULL);
    cr_assert_eq(r.code, 0, "tracing must not break the program (exit %d):\n%s", r.code, r.err);
    hout h = parse_helper(&r);
    cr_expect_str_eq(h.flush, "AMP_ERROR_INVALID_ARGUMENT");
    cr_expect(strstr(r.err, "/no/such/dir/trace.json: cannot write the trace: No such file or directory"),
              "the message must name the file and why:\n%s", r.err);
    run_free(&r);
    tdir_remove(&d);
}

/* ----------------------------------------------- the trace file's rules
 * README, "Tracing": a new file, or a regular file of our own with one
 * link; never through a link, never into another user's file, never
 * blocked by a FIFO, never inherited by the compilers the library runs, and
 * a name too long for a path is said. The attacks are played by a second
 * local user, uid 65534, as root only: its entries are made by a child that
 * became uid 65534, in a directory both users may write that is not sticky
 * (the kernel's protected_symlinks / protected_regular guard only sticky
 * world-writable directories, and not every machine turns them on). */

static const char *const flush_only[] = {"--flush-only", NULL};

typedef struct arena {
    tdir d;
    char shared[96]; /* 0777, owned by uid 65534 */
    char precious[96]; /* a file of ours the attacker wants overwritten */
} arena;

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s: %s", path, strerror(errno));
    cr_assert_eq(fputs(text, f) >= 0 && fclose(f) == 0, true, "%s: %s", path, strerror(errno));
}

static void arena_make(arena *a)
{
    if (geteuid() != 0) cr_skip_test("needs root to play a second local user (uid 65534)");
    tdir_make(&a->d);
    cr_assert_eq(chmod(a->d.path, 0755), 0);
    snprintf(a->shared, sizeof a->shared, "%s/shared", a->d.path);
    cr_assert_eq(mkdir(a->shared, 0700), 0);
    cr_assert_eq(chmod(a->shared, 0777), 0);
    cr_assert_eq(chown(a->shared, 65534, 65534), 0, "chown: %s", strerror(errno));
    snprintf(a->precious, sizeof a->precious, "%s/precious", a->d.path);
    write_text(a->precious, "precious\n");
}

/* As uid 65534, in a child: 's' a symbolic link path -> arg, 'f' a file of
 * mode 0666 holding arg, 'p' a FIFO of mode 0666. */
static void as_nobody(char what, const char *path, const char *arg)
{
    pid_t c = fork();
    cr_assert_geq(c, 0, "fork: %s", strerror(errno));
    if (c == 0) {
        if (setgid(65534) != 0 || setuid(65534) != 0) _exit(2);
        umask(0);
        bool ok = false;
        if (what == 's') {
            ok = symlink(arg, path) == 0;
        } else if (what == 'p') {
            ok = mkfifo(path, 0666) == 0;
        } else {
            int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0666);
            ok = fd >= 0 && write(fd, arg, strlen(arg)) == (ssize_t)strlen(arg) && close(fd) == 0;
        }
        _exit(ok ? 0 : 1);
    }
    int ws = 0;
    cr_assert_eq(waitpid(c, &ws, 0), c);
    cr_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "uid 65534 could not make %s", path);
}

/* The victim's run with AMP_TRACE=name: it works, does not hang (a FIFO),
 * and both its flush and its exit say the file was refused and why. */
static void expect_refused(arena *a, const char *name, const char *why, const char *const *args)
{
    char var[256];
    snprintf(var, sizeof var, "AMP_TRACE=%s", name);
    const char *env[] = {var, NULL};
    run r = run_helper_args(&a->d, test_accel(TEST_ACCEL_CPU), env, args ? args : flush_only, 120);
    cr_assert_neq(r.code, -1, "the victim still hung on AMP_TRACE=%s after 120 s", name);
    cr_assert_eq(r.code, 0, "tracing must not break the program (exit %d):\n%s", r.code, r.err);
    hout h = parse_helper(&r);
    cr_expect(h.ok, "the helper did not finish:\n%s", r.out);
    cr_expect_str_eq(h.flush, "AMP_ERROR_INVALID_ARGUMENT");
    cr_expect(strstr(r.err, "cannot write the trace") && strstr(r.err, why), "stderr must say why (\"%s\"):\n%s", why,
              r.err);
    run_free(&r);
}

static void expect_text(const char *path, const char *want, const char *what)
{
    char *t = read_file(path);
    cr_assert_not_null(t, "%s: %s", path, strerror(errno));
    cr_expect_str_eq(t, want, "%s", what);
    free(t);
}

/* One attack on the victim's AMP_TRACE=shared/file: uid 65534 first makes
 * what there (as_nobody: 's' a link to our precious file, 'f' a file of its
 * own, 'p' a FIFO; 0: the helper plants the link itself, at the name its
 * pid gives %p). The victim's run is refused with why; our precious file
 * and the attacker's file keep their text. */
static void attack(char what, const char *file, const char *why)
{
    static const char theirs[] = "the attacker's\n";
    arena a;
    arena_make(&a);
    char name[160];
    snprintf(name, sizeof name, "%s/%s", a.shared, file);
    const char *plant[] = {"--plant-as-nobody", a.precious, "--flush-only", NULL};
    if (what) as_nobody(what, name, what == 's' ? a.precious : theirs);
    expect_refused(&a, name, why, what ? NULL : plant);
    expect_text(a.precious, "precious\n", "the trace was written through another user's link");
    if (what == 'f') expect_text(name, theirs, "the trace went into a file another user made (and can read)");
    tdir_remove(&a.d);
}

Test(trace, file_link_of_another_user_is_not_followed)
{
    NEEDS_HOOKS();
    attack('s', "trace.json", "a symbolic link (owned by uid 65534)");
}

/* With %p the attacker plants for pids to come; here the helper plants for
 * its own pid (as uid 65534), which the test cannot know in advance. */
Test(trace, file_link_at_the_pid_name_is_not_followed)
{
    NEEDS_HOOKS();
    attack(0, "trace-%p.json", "a symbolic link (owned by uid 65534)");
}

Test(trace, file_made_by_another_user_is_not_written)
{
    NEEDS_HOOKS();
    attack('f', "trace.json", "belongs to uid 65534");
}

Test(trace, fifo_at_the_name_does_not_block)
{
    NEEDS_HOOKS();
    attack('p', "trace.json", "a FIFO");
}

/* The name a process writes instead of another process's trace,
 * NAME.<pid>.EXT beside it: pids are easy to guess, so uid 65534 may have
 * put a link or a FIFO there first. Here AMP_TRACE=shared/t.json is a file
 * of ours written "after" the helper started (its mtime an hour ahead), so
 * the helper goes to its own name, where it finds what the attacker
 * planted for its pid (the helper plants it, as uid 65534, for its own
 * pid). Refused without writing through it or blocking, the message
 * names the file asked for and why the other name was tried; t.json and
 * our precious file keep their text. */
static void attack_own_name(const char *const *plant, const char *why)
{
    arena a;
    arena_make(&a);
    char name[160];
    snprintf(name, sizeof name, "%s/t.json", a.shared);
    write_text(name, "ours, written since\n");
    struct timespec later[2] = {{time(NULL) + 3600, 0}, {time(NULL) + 3600, 0}};
    cr_assert_eq(utimensat(AT_FDCWD, name, later, 0), 0, "utimensat: %s", strerror(errno));
    char var[256], asked[256];
    snprintf(var, sizeof var, "AMP_TRACE=%s", name);
    snprintf(asked, sizeof asked, "AMP_TRACE=%s: cannot write the trace: it was written since this process started",
             name);
    const char *env[] = {var, NULL};
    run r = run_helper_args(&a.d, test_accel(TEST_ACCEL_CPU), env, plant, 120);
    cr_assert_neq(r.code, -1, "the victim still hung after 120 s");
    cr_assert_eq(r.code, 0, "tracing must not break the program (exit %d):\n%s", r.code, r.err);
    cr_expect_str_eq(parse_helper(&r).flush, "AMP_ERROR_INVALID_ARGUMENT");
    cr_expect(strstr(r.err, why), "stderr must say why (\"%s\"):\n%s", why, r.err);
    cr_expect(strstr(r.err, asked) && strstr(r.err, "this process's name for it"),
              "the refusal must name the file asked for and why another name was tried:\n%s", r.err);
    run_free(&r);
    expect_text(a.precious, "precious\n", "the trace was written through another user's link");
    expect_text(name, "ours, written since\n", "the other process's trace was cut");
    tdir_remove(&a.d);
}

Test(trace, link_at_this_process_own_name_is_not_followed)
{
    NEEDS_HOOKS();
    /* Relative to the link's directory (shared/): the arena's precious file. */
    const char *plant[] = {"--plant-own-as-nobody", "../precious", "--flush-only", NULL};
    attack_own_name(plant, "a symbolic link (owned by uid 65534)");
}

Test(trace, fifo_at_this_process_own_name_does_not_block)
{
    NEEDS_HOOKS();
    const char *plant[] = {"--plant-own-fifo-as-nobody", "--flush-only", NULL};
    attack_own_name(plant, "a FIFO");
}

/* Links on the way to the file: a symbolic link among AMP_TRACE's
 * directories is followed only where no other user could have put it, in
 * a directory of ours or root's that no group or other may write, or, in a
 * sticky one they may, a link of ours or of the directory's owner (the
 * kernel's protected_symlinks rule, which guards only sticky directories
 * and may be off). Each test leads the links to d/victim. */

static void make_dir(const tdir *d, const char *name, mode_t mode, char *out, size_t n)
{
    snprintf(out, n, "%s/%s", d->path, name);
    cr_assert_eq(mkdir(out, 0700), 0, "mkdir %s: %s", out, strerror(errno));
    cr_assert_eq(chmod(out, mode), 0, "chmod %s: %s", out, strerror(errno));
}

static void make_link(const char *target, const char *path)
{
    cr_assert_eq(symlink(target, path), 0, "symlink %s: %s", path, strerror(errno));
}

/* AMP_TRACE=name: refused, stderr and the flush naming the link and why,
 * and nothing written in d/victim. */
static void expect_dir_link_refused(const tdir *d, const char *name, const char *link, const char *why)
{
    char var[256], said[256], victim[160];
    snprintf(var, sizeof var, "AMP_TRACE=%s", name);
    snprintf(said, sizeof said, "%s is a symbolic link", link);
    const char *env[] = {var, NULL};
    run r = run_helper_args(d, test_accel(TEST_ACCEL_CPU), env, flush_only, 120);
    cr_assert_eq(r.code, 0, "tracing must not break the program (exit %d):\n%s", r.code, r.err);
    hout h = parse_helper(&r);
    cr_expect(h.ok, "the helper did not finish:\n%s", r.out);
    cr_expect_str_eq(h.flush, "AMP_ERROR_INVALID_ARGUMENT", "AMP_TRACE=%s was not refused:\n%s", name, r.err);
    cr_expect(strstr(r.err, "cannot write the trace") && strstr(r.err, said) && strstr(r.err, why),
              "stderr must name the link and why (\"%s\", \"%s\"):\n%s", said, why, r.err);
    snprintf(victim, sizeof victim, "%s/victim/trace.json", d->path);
    cr_expect_neq(access(victim, F_OK), 0, "the trace was written through %s", link);
    unlink(victim);
    run_free(&r);
}

/* AMP_TRACE=name: written, as d/victim/trace.json (then removed). */
static void expect_dir_link_followed(const tdir *d, const char *name)
{
    char var[256], victim[160];
    snprintf(var, sizeof var, "AMP_TRACE=%s", name);
    const char *env[] = {var, NULL};
    run r = run_helper_args(d, test_accel(TEST_ACCEL_CPU), env, flush_only, 120);
    cr_assert_eq(r.code, 0, "exit %d:\n%s", r.code, r.err);
    cr_expect_str_eq(parse_helper(&r).flush, "AMP_OK", "AMP_TRACE=%s: %s", name, r.err);
    snprintf(victim, sizeof victim, "%s/victim/trace.json", d->path);
    trace t = load_trace(victim);
    trace_free(&t);
    cr_assert_eq(unlink(victim), 0);
    run_free(&r);
}

/* The directory holding the link may be written by a group or by others
 * (and is not sticky): someone else could have put the link there. The
 * same link is followed once the directory is ours alone. */
Test(trace, dir_link_where_others_may_write_is_not_followed)
{
    NEEDS_HOOKS();
    tdir d;
    tdir_make(&d);
    char victim[128], open[128], link[160], name[192], target[160];
    make_dir(&d, "victim", 0755, victim, sizeof victim);
    make_dir(&d, "open", 0777, open, sizeof open);
    snprintf(link, sizeof link, "%s/link", open);
    snprintf(name, sizeof name, "%s/trace.json", link);
    snprintf(target, sizeof target, "%s", victim);
    make_link(target, link);
    expect_dir_link_refused(&d, name, link, "a group or others may write (mode 0777)");
    cr_assert_eq(chmod(open, 0770), 0);
    expect_dir_link_refused(&d, name, link, "a group or others may write (mode 0770)");
    cr_assert_eq(chmod(open, 0755), 0);
    expect_dir_link_followed(&d, name);
    tdir_remove(&d);
}

/* The reviewer's case: a directory of another user (mode 0755, only it may
 * write there) holding its link to a directory of ours. */
Test(trace, dir_link_in_another_users_directory_is_not_followed)
{
    NEEDS_HOOKS();
    if (geteuid() != 0) cr_skip_test("needs root to play a second local user (uid 65534)");
    tdir d;
    tdir_make(&d);
    cr_assert_eq(chmod(d.path, 0755), 0);
    char victim[128], att[128], link[160], name[192];
    make_dir(&d, "victim", 0755, victim, sizeof victim);
    make_dir(&d, "att", 0755, att, sizeof att);
    cr_assert_eq(chown(att, 65534, 65534), 0, "chown: %s", strerror(errno));
    snprintf(link, sizeof link, "%s/link", att);
    snprintf(name, sizeof name, "%s/trace.json", link);
    as_nobody('s', link, victim);
    expect_dir_link_refused(&d, name, link, "a directory of uid 65534");
    /* Further on, after a link of ours that leads there. */
    char mine[160], name2[224];
    snprintf(mine, sizeof mine, "%s/to-att", d.path);
    make_link("att", mine);
    snprintf(name2, sizeof name2, "%s/link/trace.json", mine);
    expect_dir_link_refused(&d, name2, link, "a directory of uid 65534");
    tdir_remove(&d);
}

/* A directory of ours its group may write (umask 002 with a group per
 * user): the link is refused (no one can tell that the group has no other
 * member), and the message says so and how to trace there. */
Test(trace, dir_link_in_our_group_writable_directory_says_why_and_how)
{
    NEEDS_HOOKS();
    tdir d;
    tdir_make(&d);
    char victim[128], grp[128], link[160], name[192], how[320];
    make_dir(&d, "victim", 0755, victim, sizeof victim);
    make_dir(&d, "grp", 02775, grp, sizeof grp);
    snprintf(link, sizeof link, "%s/link", grp);
    snprintf(name, sizeof name, "%s/trace.json", link);
    make_link(victim, link);
    snprintf(how, sizeof how, "hipamp cannot tell that no other user is in that group. To trace there, make %s "
             "writable by you alone (chmod g-w), or give AMP_TRACE the path the link leads to", grp);
    expect_dir_link_refused(&d, name, link, how);
    tdir_remove(&d);
}

/* In a sticky directory others may write (/tmp's mode), a link of ours is
 * followed. */
Test(trace, dir_link_of_ours_in_a_sticky_directory_is_followed)
{
    NEEDS_HOOKS();
    tdir d;
    tdir_make(&d);
    char victim[128], sticky[128], link[160], name[192];
    make_dir(&d, "victim", 0755, victim, sizeof victim);
    make_dir(&d, "sticky", 01777, sticky, sizeof sticky);
    snprintf(link, sizeof link, "%s/mine", sticky);
    snprintf(name, sizeof name, "%s/trace.json", link);
    make_link(victim, link);
    expect_dir_link_followed(&d, name);
    tdir_remove(&d);
}

/* There, a link of another user (neither ours nor the directory's owner's)
 * is not. */
Test(trace, dir_link_of_another_user_in_a_sticky_directory_is_not_followed)
{
    NEEDS_HOOKS();
    if (geteuid() != 0) cr_skip_test("needs root to play a second local user (uid 65534)");
    tdir d;
    tdir_make(&d);
    cr_assert_eq(chmod(d.path, 0755), 0);
    char victim[128], sticky[128], link[160], name[192];
    make_dir(&d, "victim", 0755, victim, sizeof victim);
    make_dir(&d, "sticky", 01777, sticky, sizeof sticky);
    snprintf(link, sizeof link, "%s/theirs", sticky);
    snprintf(name, sizeof name, "%s/trace.json", link);
    as_nobody('s', link, victim);
    expect_dir_link_refused(&d, name, link, "the link is not this user's (uid 0)");
    tdir_remove(&d);
}

/* Links where only we may write are followed as the kernel follows them:
 * relative ones from where they are, with "..", ".", "//" on the way, one
 * leading to another (the /home -> /data/home of a real machine). */
Test(trace, dir_links_only_we_may_write_are_followed)
{
    NEEDS_HOOKS();
    tdir d;
    tdir_make(&d);
    char victim[128], b[128], a[128], c[160], name[256];
    make_dir(&d, "victim", 0755, victim, sizeof victim);
    make_dir(&d, "b", 0755, b, sizeof b);
    snprintf(a, sizeof a, "%s/a", d.path);
    make_link("b", a);
    snprintf(c, sizeof c, "%s/c", b);
    make_link("../victim/", c);
    snprintf(name, sizeof name, "%s//a/./c/trace.json", d.path);
    expect_dir_link_followed(&d, name);
    snprintf(name, sizeof name, "%s/a/c/../b/../victim/trace.json", d.path);
    expect_dir_link_followed(&d, name);
    char abs[160];
    snprintf(abs, sizeof abs, "%s/abs", d.path);
    make_link(a, abs); /* absolute, to a link */
    snprintf(name, sizeof name, "%s/abs/c/trace.json", d.path);
    expect_dir_link_followed(&d, name);
    tdir_remove(&d);
}

/* A relative AMP_TRACE names a file in the directory the program started
 * in, though it has gone elsewhere by the first flush. */
Test(trace, relative_path_is_where_the_program_started)
{
    NEEDS_HOOKS();
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    amp_accelerator_info info;
    ASSERT_OK(amp_accelerator_get_info(acc, &info));
    tdir d;
    tdir_make(&d);
    char start[128], other[128], cache[160], there[160], not_there[160];
    make_dir(&d, "start", 0755, start, sizeof start);
    make_dir(&d, "other", 0755, other, sizeof other);
    snprintf(cache, sizeof cache, "AMP_CACHE_DIR=%s/cache", d.path);
    const char *env[] = {"AMP_TRACE=rel.json", cache, NULL};
    char *argv[] = {"/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", start, HIPAMP_TRACE_HELPER, info.device_path,
                    "--chdir", other, "--flush-only", NULL};
    run r = run_child(&d, argv, env);
    cr_assert_eq(r.code, 0, "exit %d:\n%s", r.code, r.err);
    cr_expect_str_eq(parse_helper(&r).flush, "AMP_OK", "%s", r.err);
    snprintf(there, sizeof there, "%s/rel.json", start);
    snprintf(not_there, sizeof not_there, "%s/rel.json", other);
    cr_expect_neq(access(not_there, F_OK), 0, "the trace went to the directory of the first flush");
    trace t = load_trace(there);
    trace_free(&t);
    run_free(&r);
    tdir_remove(&d);
}

/* A relative AMP_TRACE's "%p" is its own: one in the name of the directory
 * the program started in is that directory's (it was replaced by the pid,
 * and the trace refused: "No such file or directory"). */
Test(trace, percent_p_in_the_current_directory_is_kept)
{
    NEEDS_HOOKS();
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    amp_accelerator_info info;
    ASSERT_OK(amp_accelerator_get_info(acc, &info));
    tdir d;
    tdir_make(&d);
    char start[128], cache[160], there[200];
    make_dir(&d, "100%pure", 0755, start, sizeof start);
    snprintf(cache, sizeof cache, "AMP_CACHE_DIR=%s/cache", d.path);
    const char *env[] = {"AMP_TRACE=rel.json", cache, NULL};
    char *argv[] = {"/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", start, HIPAMP_TRACE_HELPER, info.device_path,
                    "--flush-only", NULL};
    run r = run_child(&d, argv, env);
    cr_assert_eq(r.code, 0, "exit %d:\n%s", r.code, r.err);
    cr_expect_str_eq(parse_helper(&r).flush, "AMP_OK", "%s", r.err);
    snprintf(there, sizeof there, "%s/rel.json", start);
    trace t = load_trace(there);
    trace_free(&t);
    run_free(&r);
    tdir_remove(&d);
}

/* A flush that cannot write its events (here: the file may not grow past
 * its size after the first flush plus 64 bytes) fails, and the file is
 * still the complete trace the first flush left, not a document cut off
 * where the write stopped. */
Test(trace, failed_flush_keeps_the_last_complete_trace)
{
    NEEDS_HOOKS();
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    tdir d;
    tdir_make(&d);
    char path[128], var[160];
    snprintf(path, sizeof path, "%s/trace.json", d.path);
    snprintf(var, sizeof var, "AMP_TRACE=%s", path);
    const char *env[] = {var, NULL};
    const char *args[] = {"--limited-second-flush", NULL};
    run r = run_helper_shared(&d, acc, env, args);
    cr_assert_eq(r.code, 0, "exit %d:\n%s", r.code, r.err);
    hout h = parse_helper(&r);
    cr_expect(h.ok, "the helper did not finish:\n%s", r.out);
    cr_expect_str_eq(h.flush, "AMP_ERROR_INVALID_ARGUMENT", "the second flush must fail:\n%s", r.err);
    cr_expect(strstr(r.err, "File too large"), "stderr must say why:\n%s", r.err);
    trace t = load_trace(path);
    /* The first flush's two launches, none of the twenty after it. */
    cr_expect_eq(count_cat(&t, "launch", "trace_scale"), 2, "%d launches in the file",
                 count_cat(&t, "launch", "trace_scale"));
    trace_free(&t);
    run_free(&r);
    tdir_remove(&d);
}

/* A first flush that cannot write its events (the file may not pass 300
 * bytes) left the file cut off mid-event, a document no viewer reads; it is
 * left empty now, and the flush says so. */
Test(trace, failed_first_flush_leaves_no_cut_off_trace)
{
    NEEDS_HOOKS();
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    tdir d;
    tdir_make(&d);
    char path[128], var[160];
    snprintf(path, sizeof path, "%s/trace.json", d.path);
    snprintf(var, sizeof var, "AMP_TRACE=%s", path);
    const char *env[] = {var, NULL};
    const char *args[] = {"--limited-first-flush", NULL};
    run r = run_helper_shared(&d, acc, env, args);
    cr_assert_eq(r.code, 0, "exit %d:\n%s", r.code, r.err);
    hout h = parse_helper(&r);
    cr_expect(h.ok, "the helper did not finish:\n%s", r.out);
    cr_expect_str_eq(h.flush, "AMP_ERROR_INVALID_ARGUMENT", "the flush must fail:\n%s", r.err);
    cr_expect(strstr(r.err, "File too large") && strstr(r.err, "the file is left empty"), "stderr must say why:\n%s",
              r.err);
    expect_text(path, "", "a trace cut off mid-event was left");
    run_free(&r);
    tdir_remove(&d);
}

/* The same under `ulimit -f` as a program has it, SIGXFSZ's default
 * action left as it is: the write past the limit raises SIGXFSZ, which
 * ended the program (at the flush, or at exit); the flush fails instead,
 * the program runs on and exits 0. */
Test(trace, file_size_limit_does_not_end_the_program)
{
    NEEDS_HOOKS();
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    tdir d;
    tdir_make(&d);
    char path[128], var[160];
    snprintf(path, sizeof path, "%s/trace.json", d.path);
    snprintf(var, sizeof var, "AMP_TRACE=%s", path);
    const char *env[] = {var, NULL};
    const char *args[] = {"--limited-second-flush", "--keep-sigxfsz", NULL};
    run r = run_helper_shared(&d, acc, env, args);
    cr_assert_eq(r.code, 0, "exit %d (%d: SIGXFSZ):\n%s", r.code, 128 + SIGXFSZ, r.err);
    hout h = parse_helper(&r);
    cr_expect(h.ok, "the helper did not finish:\n%s", r.out);
    cr_expect_str_eq(h.flush, "AMP_ERROR_INVALID_ARGUMENT", "the second flush must fail:\n%s", r.err);
    cr_expect(strstr(r.err, "File too large"), "stderr must say why:\n%s", r.err);
    trace t = load_trace(path);
    cr_expect_eq(count_cat(&t, "launch", "trace_scale"), 2, "%d launches in the file",
                 count_cat(&t, "launch", "trace_scale"));
    trace_free(&t);
    run_free(&r);
    tdir_remove(&d);
}

/* A program that closes the trace's descriptor (closing all it does not
 * know of, as a daemon does) and opens a file of its own at that number:
 * the next flush wrote the trace's closing text over that file and cut it
 * to the trace's length, and the exit closed it. Now the flush fails,
 * saying why; the program's file keeps its text and the trace file holds
 * the first flush's complete trace. */
Test(trace, descriptor_the_program_reused_is_not_written)
{
    NEEDS_HOOKS();
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    tdir d;
    tdir_make(&d);
    char path[128], var[160], mine[128];
    snprintf(path, sizeof path, "%s/trace.json", d.path);
    snprintf(var, sizeof var, "AMP_TRACE=%s", path);
    snprintf(mine, sizeof mine, "%s/programs-own", d.path);
    const char *env[] = {var, NULL};
    const char *args[] = {"--reuse-trace-fd", mine, NULL};
    run r = run_helper_shared(&d, acc, env, args);
    cr_assert_eq(r.code, 0, "exit %d:\n%s", r.code, r.err);
    hout h = parse_helper(&r);
    cr_expect(h.ok, "the helper did not finish:\n%s", r.out);
    cr_expect_str_eq(h.flush, "AMP_ERROR_INVALID_ARGUMENT", "the second flush must fail:\n%s", r.err);
    cr_expect(strstr(r.err, "was closed by the program") && strstr(r.err, "refers to another file"),
              "stderr must say why:\n%s", r.err);
    expect_text(mine, "precious\n", "the trace was written into the program's own file");
    trace t = load_trace(path);
    cr_expect_eq(count_cat(&t, "launch", "trace_scale"), 2, "%d launches in the file",
                 count_cat(&t, "launch", "trace_scale"));
    trace_free(&t);
    run_free(&r);
    tdir_remove(&d);
}

/* Our own file from an earlier run is rewritten whole; one with a second
 * link (someone linked it elsewhere) is left alone. */
Test(trace, file_of_our_own_is_reused_unless_linked)
{
    NEEDS_HOOKS();
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    tdir d;
    tdir_make(&d);
    char name[128], var[160], other[128];
    snprintf(name, sizeof name, "%s/trace.json", d.path);
    snprintf(var, sizeof var, "AMP_TRACE=%s", name);
    char junk[8192];
    memset(junk, 'x', sizeof junk - 1);
    junk[sizeof junk - 1] = '\0';
    write_text(name, junk);
    const char *env[] = {var, NULL};
    run r = run_helper_args(&d, acc, env, flush_only, 0);
    cr_assert_eq(r.code, 0, "exit %d:\n%s", r.code, r.err);
    cr_expect_str_eq(parse_helper(&r).flush, "AMP_OK", "%s", r.err);
    trace t = load_trace(name); /* complete JSON: the old text is gone */
    trace_free(&t);
    run_free(&r);

    snprintf(other, sizeof other, "%s/elsewhere", d.path);
    write_text(name, "linked\n");
    cr_assert_eq(link(name, other), 0, "link: %s", strerror(errno));
    r = run_helper_args(&d, acc, env, flush_only, 0);
    cr_assert_eq(r.code, 0, "exit %d:\n%s", r.code, r.err);
    cr_expect_str_eq(parse_helper(&r).flush, "AMP_ERROR_INVALID_ARGUMENT");
    cr_expect(strstr(r.err, "has 2 hard links"), "stderr must say why:\n%s", r.err);
    expect_text(other, "linked\n", "a file with a second link was written");
    run_free(&r);
    tdir_remove(&d);
}

/* ------------------------------- two processes given one AMP_TRACE
 * MPI ranks, or two runs at once, given one AMP_TRACE without %p: a
 * process never cuts another's trace, whether that one is writing it still
 * (it holds it locked) or wrote it after this one started (it finished
 * first); it writes NAME.<pid>.json instead and says so, naming both. One
 * helper is held in a build (AMP_CXX: a script that waits for d/release,
 * then fails the compile) while the other runs. */

/* The script, AMP_CXX for the held helper: d/in-build once it is held. */
static void held_compiler(const tdir *d, char *cxx, size_t n)
{
    char wrapper[128], script[1024];
    const char *real = getenv("AMP_CXX") && *getenv("AMP_CXX") ? getenv("AMP_CXX")
                       : getenv("CXX") && *getenv("CXX")       ? getenv("CXX")
                                                               : "c++";
    snprintf(wrapper, sizeof wrapper, "%s/held.sh", d->path);
    snprintf(script, sizeof script,
             "#!/bin/sh\ncase \" $* \" in *\" -shared \"*) touch '%s/in-build'; i=0; while [ ! -e '%s/release' ] && "
             "[ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done; exit 1 ;; esac\nexec %s \"$@\"\n",
             d->path, d->path, real);
    write_text(wrapper, script);
    cr_assert_eq(chmod(wrapper, 0755), 0);
    snprintf(cxx, n, "AMP_CXX=%s", wrapper);
}

/* trace_helper started (not waited for) with add[] and args, its stdout
 * and stderr in d/<tag>.out and .err, its cache d/cache-<tag>; returns
 * once the held compiler runs in it. */
static pid_t start_held_helper(const tdir *d, const char *tag, const char *const *add, const char *const *args)
{
    size_t n = 0, m = 0;
    while (environ[n]) ++n;
    char **env = calloc(n + 16, sizeof *env);
    cr_assert_not_null(env);
    char cache[128], out[128], err[128], held[128];
    snprintf(cache, sizeof cache, "AMP_CACHE_DIR=%s/cache-%s", d->path, tag);
    for (size_t i = 0; i < n; ++i)
        if (!env_dropped(environ[i]) && !env_overridden(environ[i], add)) env[m++] = environ[i];
    for (size_t i = 0; add && add[i] && m < n + 12; ++i) env[m++] = (char *)add[i];
    env[m++] = cache;
    env[m++] = "AMP_CPU_THREADS=1";
    env[m++] = "AMP_CPU_PCH=0";
    env[m] = NULL;
    char *argv[8] = {HIPAMP_TRACE_HELPER, "cpu"};
    for (size_t i = 0; args && args[i] && i < 5; ++i) argv[2 + i] = (char *)args[i];
    snprintf(out, sizeof out, "%s/%s.out", d->path, tag);
    snprintf(err, sizeof err, "%s/%s.err", d->path, tag);
    snprintf(held, sizeof held, "%s/in-build", d->path);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&fa, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    pid_t pid;
    int e = posix_spawn(&pid, argv[0], &fa, NULL, argv, env);
    posix_spawn_file_actions_destroy(&fa);
    free(env);
    cr_assert_eq(e, 0, "posix_spawn(%s): %s", argv[0], strerror(e));
    for (int i = 0; access(held, F_OK) != 0; ++i) {
        int ws;
        if (i > 2400 || waitpid(pid, &ws, WNOHANG) == pid) {
            char *t = read_file(err);
            if (i > 2400) kill(pid, SIGKILL);
            cr_assert_fail("the %s helper never reached its build:\n%s", tag, t ? t : "");
        }
        usleep(50000);
    }
    return pid;
}

/* Lets the held helper go and waits for it (its build fails: exit 3). */
static void release_held_helper(const tdir *d, pid_t pid)
{
    char release[128];
    snprintf(release, sizeof release, "%s/release", d->path);
    write_text(release, "");
    int ws = 0;
    cr_assert_eq(waitpid(pid, &ws, 0), pid);
    cr_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 3, "the held helper's build did not fail as held ones do (exit 3): "
              "status %#x", ws);
}

/* The file whose trace is the helper of pid's: "hipamp host (pid N)". */
static bool trace_of(const char *path, long pid)
{
    char want[64];
    snprintf(want, sizeof want, "\"hipamp host (pid %ld)\"", pid);
    trace t = load_trace(path); /* a complete document */
    bool is = strstr(t.text, want) != NULL;
    trace_free(&t);
    return is;
}

/* What the second process said: the file it wrote instead (in out), named
 * after the asked-for one. */
static void said_instead(const char *err, const char *asked, char *out, size_t n)
{
    char prefix[200];
    snprintf(prefix, sizeof prefix, "hipamp: AMP_TRACE=%s is another process's trace", asked);
    const char *at = strstr(err, prefix), *to = at ? strstr(at, "writes its trace to ") : NULL;
    cr_assert(at && to, "the second process did not say where its trace went instead of %s:\n%s", asked, err);
    to += strlen("writes its trace to ");
    size_t len = strcspn(to, " \n");
    cr_assert_lt(len, n);
    memcpy(out, to, len);
    out[len] = '\0';
}

/* The first is still writing (held in a build after its first flush). */
Test(trace, file_another_process_is_writing_is_not_cut, .timeout = 180)
{
    NEEDS_HOOKS();
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    tdir d;
    tdir_make(&d);
    char name[128], var[160], cxx[200], kernel[128], other[256];
    snprintf(name, sizeof name, "%s/t.json", d.path);
    snprintf(var, sizeof var, "AMP_TRACE=%s", name);
    snprintf(kernel, sizeof kernel, "%s/late.hip", d.path);
    write_text(kernel, "AMP_KERNEL(trace_late, amp::index<1> i, amp::array_view<float, 1> v) { v[i] = 1.0f; }\n");
    held_compiler(&d, cxx, sizeof cxx);
    const char *held_env[] = {var, cxx, NULL};
    const char *held_args[] = {"--flush-only", "--then-build", kernel, NULL};
    pid_t first = start_held_helper(&d, "first", held_env, held_args);
    const char *env[] = {var, NULL};
    run r = run_helper_args(&d, acc, env, flush_only, 120);
    cr_assert_eq(r.code, 0, "exit %d:\n%s", r.code, r.err);
    cr_expect_str_eq(parse_helper(&r).flush, "AMP_OK", "%s", r.err);
    release_held_helper(&d, first);
    cr_assert(trace_of(name, first), "%s is not the first process's complete trace", name);
    said_instead(r.err, name, other, sizeof other);
    cr_assert(strncmp(other, d.path, strlen(d.path)) == 0 && strstr(other, "/t.") && strstr(other, ".json"),
              "the second process's own name %s is not t.<pid>.json beside %s", other, name);
    trace t = load_trace(other);
    trace_free(&t);
    cr_expect(!trace_of(other, first), "%s holds the first process's trace", other);
    run_free(&r);
    tdir_remove(&d);
}

/* The first finished, and wrote the file, while the second ran (held in a
 * build): the second, flushing at exit, leaves it alone. */
Test(trace, file_written_while_this_process_ran_is_not_cut, .timeout = 180)
{
    NEEDS_HOOKS();
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    tdir d;
    tdir_make(&d);
    char name[128], var[160], cxx[200], other[256], err[128];
    snprintf(name, sizeof name, "%s/t.json", d.path);
    snprintf(var, sizeof var, "AMP_TRACE=%s", name);
    held_compiler(&d, cxx, sizeof cxx);
    const char *held_env[] = {var, cxx, NULL};
    pid_t second = start_held_helper(&d, "second", held_env, NULL);
    const char *env[] = {var, NULL};
    run r = run_helper_args(&d, acc, env, flush_only, 120);
    cr_assert_eq(r.code, 0, "exit %d:\n%s", r.code, r.err);
    cr_expect_str_eq(parse_helper(&r).flush, "AMP_OK", "%s", r.err);
    run_free(&r);
    release_held_helper(&d, second);
    cr_assert(!trace_of(name, second), "the second process cut the trace the first wrote while it ran");
    snprintf(err, sizeof err, "%s/second.err", d.path);
    char *said = read_file(err);
    cr_assert_not_null(said);
    said_instead(said, name, other, sizeof other);
    cr_assert(trace_of(other, second), "%s is not the second process's trace", other);
    free(said);
    tdir_remove(&d);
}

/* A compiler the library runs after the trace file was opened does not
 * inherit its descriptor: AMP_CXX is a script that lists its open files when
 * asked to compile, then runs the real compiler. */
Test(trace, file_not_inherited_by_the_compiler)
{
    NEEDS_HOOKS();
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    amp_accelerator_info info;
    ASSERT_OK(amp_accelerator_get_info(acc, &info));
    if (!info.is_available) cr_skip_test("the CPU accelerator is unavailable: %s", info.unavailable_reason);
    tdir d;
    tdir_make(&d);
    char name[128], var[160], log[128], wrapper[128], cxx[200], kernel[128];
    snprintf(name, sizeof name, "%s/trace.json", d.path);
    snprintf(var, sizeof var, "AMP_TRACE=%s", name);
    snprintf(log, sizeof log, "%s/fds.log", d.path);
    snprintf(wrapper, sizeof wrapper, "%s/cxx.sh", d.path);
    snprintf(kernel, sizeof kernel, "%s/late.hip", d.path);
    const char *real = getenv("AMP_CXX") && *getenv("AMP_CXX") ? getenv("AMP_CXX")
                       : getenv("CXX") && *getenv("CXX")       ? getenv("CXX")
                                                               : "c++";
    char script[1024];
    snprintf(script, sizeof script,
             "#!/bin/sh\ncase \" $* \" in *\" -shared \"*) { echo compile; ls -l /proc/$$/fd; } >>'%s' 2>&1 ;; esac\n"
             "exec %s \"$@\"\n",
             log, real);
    write_text(wrapper, script);
    cr_assert_eq(chmod(wrapper, 0755), 0);
    write_text(kernel, "AMP_KERNEL(trace_late, amp::index<1> i, amp::array_view<float, 1> v) { v[i] = 1.0f; }\n");
    snprintf(cxx, sizeof cxx, "AMP_CXX=%s", wrapper);
    const char *env[] = {var, cxx, NULL};
    const char *args[] = {"--flush-only", "--then-build", kernel, NULL};
    run r = run_helper_args(&d, acc, env, args, 0);
    cr_assert_eq(r.code, 0, "exit %d:\n%s", r.code, r.err);
    cr_expect_str_eq(parse_helper(&r).flush, "AMP_OK", "%s", r.err);
    char *fds = read_file(log);
    cr_assert(fds && strstr(fds, "compile\n"), "the compiler was not run after the trace was opened:\n%s",
              fds ? fds : "(no log)");
    cr_expect_null(strstr(fds, name), "the compiler inherited the trace file:\n%s", fds);
    free(fds);
    run_free(&r);
    tdir_remove(&d);
}

/* A name of 4096 characters or more cannot be a path: said at load and by
 * amp_trace_flush, never silently ignored. */
Test(trace, path_too_long_is_said)
{
    NEEDS_HOOKS();
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    tdir d;
    tdir_make(&d);
    enum { LEN = 5000 };
    char *var = malloc(LEN + 16);
    cr_assert_not_null(var);
    int at = snprintf(var, LEN + 16, "AMP_TRACE=%s/", d.path);
    memset(var + at, 'a', LEN - (at - 10));
    var[10 + LEN] = '\0';
    const char *env[] = {var, NULL};
    run r = run_helper_args(&d, acc, env, flush_only, 0);
    cr_assert_eq(r.code, 0, "exit %d:\n%s", r.code, r.err);
    cr_expect_str_eq(parse_helper(&r).flush, "AMP_ERROR_INVALID_ARGUMENT");
    cr_expect(strstr(r.err, "AMP_TRACE is 5000 characters long"), "stderr must say why:\n%s", r.err);
    free(var);
    run_free(&r);
    tdir_remove(&d);
}

Test(trace, event_limit_drops_and_says_so)
{
    NEEDS_HOOKS();
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    tdir d;
    tdir_make(&d);
    char var[256], path[128];
    snprintf(path, sizeof path, "%s/trace.json", d.path);
    snprintf(var, sizeof var, "AMP_TRACE=%s", path);
    const char *env[] = {var, "AMP_TRACE_MAX_EVENTS=2", "AMP_TRACE_SUMMARY=1", NULL};
    run r = run_helper_shared(&d, acc, env, NULL);
    cr_assert_eq(r.code, 0, "exit %d:\n%s", r.code, r.err);
    trace t = load_trace(path);
    const jv *other = jget(t.root, "otherData");
    double dropped = jnum(other, "dropped", -1), events = jnum(other, "events", -1);
    cr_expect(dropped > 0, "otherData.dropped is %g", dropped);
    /* At most 2 a flush; the helper flushes once midway, then at exit. */
    cr_expect(events >= 1 && events <= 4, "%g events written with a limit of 2 between flushes", events);
    cr_expect(strstr(r.err, "were not recorded"), "the summary must say events were dropped:\n%s", r.err);
    trace_free(&t);
    run_free(&r);
    tdir_remove(&d);
}

/* A file name with a quote, a backslash, a control character and a byte
 * that is not UTF-8 still gives a valid file, the name escaped. */
Test(trace, names_are_escaped)
{
    NEEDS_HOOKS();
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    tdir d;
    tdir_make(&d);
    char src[256], var[128], path[128];
    snprintf(src, sizeof src, "%s/we\"ird\\na\x01me\xff.hip", d.path);
    FILE *f = fopen(src, "w");
    cr_assert_not_null(f, "cannot create %s", src);
    fputs("AMP_KERNEL(trace_extra, amp::index<1> i, amp::array_view<int, 1> v) { v[i] = 1; }\n", f);
    fclose(f);
    snprintf(path, sizeof path, "%s/trace.json", d.path);
    snprintf(var, sizeof var, "AMP_TRACE=%s", path);
    const char *env[] = {var, NULL};
    run r = run_helper(&d, acc, env, "--build-file", src);
    cr_assert_eq(r.code, 0, "exit %d:\n%s", r.code, r.err);
    trace t = load_trace(path);
    bool found = false;
    for (size_t i = 0; i < t.events->n; ++i) {
        const jv *a = jget(t.events->items[i], "args");
        if (jis(t.events->items[i], "cat", "build") && jis(a, "source", "we\"ird\\na\x01me\xef\xbf\xbd.hip [trace_extra]"))
            found = true;
    }
    cr_expect(found, "no build event with the escaped file name");
    cr_expect(strstr(t.text, "we\\\"ird\\\\na\\u0001me\\ufffd.hip"), "the name is not escaped as expected");
    trace_free(&t);
    run_free(&r);
    tdir_remove(&d);
}

/* Nsight Systems' side of NVTX, played by trace_probe: it is loaded as the
 * injection library and receives hipamp's ranges in a "hipamp" domain. */
static void check_probe_log(const char *log, const char *push, const char *pop, bool nvtx)
{
    cr_assert_not_null(log, "the probe wrote no log");
    if (nvtx) {
        cr_expect(strstr(log, "init nvtx version 3\n"), "the probe was not initialised:\n%s", log);
        cr_expect(strstr(log, "domain hipamp\n"), "no hipamp domain:\n%s", log);
        cr_expect_null(strstr(log, "module 0 accepted"), "module 0 must be refused");
    }
    long pushes = 0, pops = 0;
    bool build = false, launch = false, tiled = false, copy = false, wait = false;
    for (const char *l = log; l && *l;) {
        const char *nl = strchr(l, '\n');
        char line[1024];
        snprintf(line, sizeof line, "%.*s", nl ? (int)(nl - l) : (int)strlen(l), l);
        if (!strncmp(line, push, strlen(push))) {
            pushes++;
            build |= strstr(line, "hipamp build kernel.hip [trace_scale +2]") != NULL;
            launch |= strstr(line, "hipamp launch trace_scale 4096") != NULL;
            tiled |= strstr(line, "hipamp launch trace_tile_flip 1024") != NULL;
            wait |= strstr(line, "hipamp wait ") != NULL;
            if (strstr(line, "hipamp copy H2D 6144 B (array init)")) {
                copy = true;
                /* Copies: red, category 2, the bytes as the payload. */
                if (nvtx)
                    cr_expect(strstr(line, " v3 size48 cat2 colorffd8453b payload1:6144 msgtype1 "),
                              "copy range attributes: %s", line);
            }
        } else if (!strncmp(line, pop, strlen(pop))) {
            pops++;
        }
        l = nl ? nl + 1 : NULL;
    }
    cr_expect(pushes > 0 && pushes == pops, "%ld ranges opened, %ld closed:\n%s", pushes, pops, log);
    cr_expect(build && launch && tiled && copy && wait, "missing ranges (build %d launch %d tiled %d copy %d wait %d):\n%s",
              build, launch, tiled, copy, wait, log);
}

/* Runs the helper with the trace probe standing in for a profiler: its
 * NVTX injection at tool (NULL: the probe as built; or, roctx, its
 * libroctx64.so on the library path), its log at log (room for 128) in d,
 * and AMP_TRACE_VENDOR=vendor unless NULL; the helper must exit 0. */
static run probe_run(tdir *d, amp_accelerator *acc, bool roctx, const char *vendor, const char *tool, char *log)
{
    char lib[600], logv[256], ven[64];
    if (roctx) {
        snprintf(lib, sizeof lib, "LD_LIBRARY_PATH=%s", HIPAMP_TRACE_PROBE);
        *strrchr(lib, '/') = '\0'; /* the probe's directory: it is named libroctx64.so */
    } else {
        if (!tool) test_skip_unless_trusted(tool = HIPAMP_TRACE_PROBE, "the trace probe (an NVTX tool)");
        snprintf(lib, sizeof lib, "NVTX_INJECTION64_PATH=%s", tool);
    }
    snprintf(log, 128, "%s/probe.log", d->path);
    snprintf(logv, sizeof logv, "AMP_PROBE_LOG=%s", log);
    snprintf(ven, sizeof ven, "AMP_TRACE_VENDOR=%s", vendor ? vendor : "");
    const char *env[] = {lib, logv, vendor ? ven : NULL, NULL};
    run r = run_helper_shared(d, acc, env, NULL);
    cr_assert_eq(r.code, 0, "exit %d:\n%s", r.code, r.err);
    return r;
}

Test(trace, nvtx_ranges)
{
    NEEDS_HOOKS();
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    tdir d;
    tdir_make(&d);
    char log[128];
    run r = probe_run(&d, acc, false, NULL, NULL, log);
    char *text = read_file(log);
    check_probe_log(text, "push ", "pop ", true);
    free(text);
    run_free(&r);
    tdir_remove(&d);
}

/* The NVTX tool is loaded into the process: one another local user could
 * have changed (here the probe reached through a directory anyone may
 * write) is not loaded, and stderr says so naming the variable, the path
 * and the directory; the workload still runs. The same probe through a
 * directory of ours is loaded (nvtx_ranges above). */
Test(trace, an_nvtx_tool_others_could_change_is_not_loaded)
{
    NEEDS_HOOKS();
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    tdir d;
    tdir_make(&d);
    char open_dir[128], tool[256], log[128];
    snprintf(open_dir, sizeof open_dir, "%s/open", d.path);
    cr_assert_eq(mkdir(open_dir, 0700), 0);
    cr_assert_eq(chmod(open_dir, 0777), 0);
    snprintf(tool, sizeof tool, "%s/libtool.so", open_dir);
    cr_assert_eq(symlink(HIPAMP_TRACE_PROBE, tool), 0, "symlink: %s", strerror(errno));
    run r = probe_run(&d, acc, false, NULL, tool, log);
    cr_expect_eq(access(log, F_OK), -1, "the tool at %s was loaded", tool);
    char says[400];
    snprintf(says, sizeof says, "hipamp: NVTX_INJECTION64_PATH=%s is not loaded (no NVTX ranges): %s is writable by every user (mode 0777)",
             tool, open_dir);
    cr_expect(strstr(r.err, says), "stderr does not say '%s':\n%s", says, r.err);
    run_free(&r);
    tdir_remove(&d);
}

Test(trace, roctx_ranges)
{
    NEEDS_HOOKS();
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    tdir d;
    tdir_make(&d);
    char log[128];
    run r = probe_run(&d, acc, true, "1", NULL, log);
    char *text = read_file(log);
    check_probe_log(text, "rpush ", "rpop ", false);
    free(text);
    run_free(&r);
    tdir_remove(&d);
}

/* AMP_TRACE_VENDOR=0 wins over a profiler's variable: no range at all. */
Test(trace, vendor_ranges_can_be_turned_off)
{
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    tdir d;
    tdir_make(&d);
    char log[128];
    run r = probe_run(&d, acc, false, "0", NULL, log);
    cr_expect_eq(access(log, F_OK), -1, "the probe was loaded although AMP_TRACE_VENDOR=0");
    run_free(&r);
    tdir_remove(&d);
}

/* A value of AMP_TRACE_VENDOR that is no flag keeps the default (ranges
 * when a profiler is attached) and says so; it turned them off before. */
Test(trace, a_misspelt_vendor_setting_keeps_the_default)
{
    NEEDS_HOOKS();
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    tdir d;
    tdir_make(&d);
    char log[128];
    run r = probe_run(&d, acc, false, "onn", NULL, log);
    cr_expect(strstr(r.err, "AMP_TRACE_VENDOR=\"onn\"") && strstr(r.err, "auto"),
              "the misspelt value was not said with the default kept:\n%s", r.err);
    char *text = read_file(log);
    cr_assert_not_null(text, "no ranges went to the profiler under AMP_TRACE_VENDOR=onn (the default is on with one)");
    check_probe_log(text, "push ", "pop ", true);
    free(text);
    run_free(&r);
    tdir_remove(&d);
}

/* Without AMP_TRACE nothing is written and amp_trace_flush is a no-op. */
Test(trace, off_by_default)
{
    if (getenv("AMP_TRACE") || getenv("AMP_TRACE_SUMMARY")) cr_skip_test("the suite itself runs with AMP_TRACE set");
    cr_expect_eq(amp_trace_flush(), AMP_OK);
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    tdir d;
    tdir_make(&d);
    run r = run_helper_shared(&d, acc, NULL, NULL);
    cr_assert_eq(r.code, 0, "exit %d:\n%s", r.code, r.err);
    hout h = parse_helper(&r);
    cr_expect_str_eq(h.flush, "AMP_OK");
    cr_expect_null(strstr(r.err, "hipamp trace summary"), "a summary without AMP_TRACE_SUMMARY");
    run_free(&r);
    /* Nothing written: the helper's launches and flush, run in an empty
     * directory of their own, leave it empty. */
    amp_accelerator_info info;
    ASSERT_OK(amp_accelerator_get_info(acc, &info));
    char start[128], cache[160];
    make_dir(&d, "start", 0755, start, sizeof start);
    snprintf(cache, sizeof cache, "AMP_CACHE_DIR=%s/cache", d.path);
    const char *env[] = {cache, NULL};
    char *argv[] = {"/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", start, HIPAMP_TRACE_HELPER, info.device_path, NULL};
    r = run_child(&d, argv, env);
    cr_assert_eq(r.code, 0, "exit %d:\n%s", r.code, r.err);
    cr_expect_str_eq(parse_helper(&r).flush, "AMP_OK", "%s", r.err);
    DIR *dir = opendir(start);
    cr_assert_not_null(dir);
    for (struct dirent *e; (e = readdir(dir));)
        cr_assert(!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."), "%s written with AMP_TRACE unset",
                  e->d_name);
    closedir(dir);
    run_free(&r);
    tdir_remove(&d);
}

/* Built with -DHIPAMP_TRACE=OFF: AMP_TRACE set is reported, never silently
 * ignored (a warning at load, AMP_ERROR_UNSUPPORTED from amp_trace_flush). */
Test(trace, built_without_hooks_says_so)
{
#ifndef HIPAMP_TRACE_OFF
    cr_skip_test("the library has its trace hooks (the default build)");
#else
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    tdir d;
    tdir_make(&d);
    char var[128];
    snprintf(var, sizeof var, "AMP_TRACE=%s/trace.json", d.path);
    const char *env[] = {var, NULL};
    run r = run_helper(&d, acc, env, NULL, NULL);
    cr_assert_eq(r.code, 0, "exit %d:\n%s", r.code, r.err);
    hout h = parse_helper(&r);
    cr_expect_str_eq(h.flush, "AMP_ERROR_UNSUPPORTED");
    cr_expect(strstr(r.err, "built with -DHIPAMP_TRACE=OFF"), "no warning:\n%s", r.err);
    char path[160];
    snprintf(path, sizeof path, "%s/trace.json", d.path);
    cr_expect_eq(access(path, F_OK), -1, "a trace file was written by a library without hooks");
    run_free(&r);
    tdir_remove(&d);
#endif
}
