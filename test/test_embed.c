/* test_embed.c — the hipamp-embed tool: the array it writes holds the input's bytes plus a NUL, is byte for byte what CMake's hipamp_embed() writes, its header declares the symbol, and every bad input fails with a message and leaves no file behind; hipamp-embed and hipamp-compile refuse to write over their input, through a device, twice to one file or through a planted symbolic link (anywhere on a chain of links), and refuse NUL bytes; an output through one of the tool's descriptors appends as the shell opened it, and a replaced file keeps its mode. */
#include <criterion/criterion.h>

#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef HIPAMP_EMBED_TOOL
#error "HIPAMP_EMBED_TOOL (path of the built hipamp-embed) must be defined by the build"
#endif

static char dir[256];

static void make_dir(void)
{
    snprintf(dir, sizeof dir, "%s/hipamp-embed-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    cr_assert_not_null(mkdtemp(dir), "mkdtemp(%s) failed", dir);
}

static void remove_dir(void)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    char p[512];
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
    closedir(d);
    rmdir(dir);
}

TestSuite(embed, .init = make_dir, .fini = remove_dir);

static char *path_in_dir(const char *name)
{
    static char bufs[4][512];
    static int next;
    char *p = bufs[next++ % 4];
    snprintf(p, sizeof bufs[0], "%s/%s", dir, name);
    return p;
}

static void write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "cannot create %s", path);
    cr_assert_eq(fwrite(data, 1, n, f), n);
    cr_assert_eq(fclose(f), 0);
}

/* The whole file, NUL-terminated; *n its size. NULL when it does not exist. */
static char *read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap + 1);
    cr_assert_not_null(buf);
    size_t got;
    while ((got = fread(buf + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) {
            cap *= 2;
            buf = realloc(buf, cap + 1);
            cr_assert_not_null(buf);
        }
    }
    fclose(f);
    buf[len] = '\0';
    if (n) *n = len;
    return buf;
}

/* Runs cmd through the shell with stderr into dir/stderr.txt; returns the
 * exit status (or -1 when it did not exit normally). */
static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int run(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(cmd, sizeof cmd - 64, fmt, ap);
    va_end(ap);
    cr_assert(n > 0 && (size_t)n < sizeof cmd - 64, "command too long");
    snprintf(cmd + n, sizeof cmd - (size_t)n, " 2>'%s/stderr.txt'", dir);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char *stderr_text(void)
{
    char *s = read_file(path_in_dir("stderr.txt"), NULL);
    cr_assert_not_null(s, "no stderr captured");
    return s;
}

/* Parses the generated source back into bytes: after the symbol's "= {",
 * every 0xhh item up to "};". Asserts the declaration line names symbol. */
static unsigned char *parse_array(const char *src, const char *symbol, size_t *n)
{
    char decl[256];
    snprintf(decl, sizeof decl, "\nconst char %s[] = {\n", symbol);
    const char *p = strstr(src, decl);
    cr_assert_not_null(p, "no '%s' declaration in:\n%.200s", symbol, src);
    cr_assert(strncmp(src, "/* generated from ", 18) == 0, "first line is not the generated-from comment");
    p += strlen(decl);
    unsigned char *out = malloc(strlen(p) / 5 + 1);
    cr_assert_not_null(out);
    size_t len = 0;
    while (*p && *p != '}') {
        if (*p == '\n') { ++p; continue; }
        unsigned v = 0;
        int used = 0;
        /* '\xhh' items, and the 0x00 that ends the array */
        cr_assert((sscanf(p, "'\\x%2x'%n", &v, &used) == 1 && used == 6) ||
                      (sscanf(p, "0x%2x%n", &v, &used) == 1 && used == 4 && v == 0 && p[4] == '}'),
                  "bad item at '%.10s'", p);
        p += used;
        out[len++] = (unsigned char)v;
        if (*p == ',') ++p;
    }
    cr_assert_str_eq(p, "};\n", "the array does not end with '};'");
    *n = len;
    return out;
}

/* Random bytes with every byte value but NUL present at least once
 * (quotes, backslashes and high bytes included): a NUL is refused. */
static unsigned char *sample(size_t n, unsigned seed)
{
    unsigned char *b = malloc(n);
    cr_assert_not_null(b);
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; ++i) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        b[i] = i < 255 ? (unsigned char)(255 - i) : (unsigned char)(x >> 24);
        if (!b[i]) b[i] = 1;
    }
    return b;
}

Test(embed, bytes_round_trip_with_terminating_nul)
{
    size_t sizes[] = {0, 1, 16, 17, 1000, 70000}; /* 70000 > the tool's read buffer */
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
        unsigned char *in = sample(sizes[s], (unsigned)s + 7);
        write_file(path_in_dir("in.hip"), in, sizes[s]);
        remove(path_in_dir("out.c"));
        cr_assert_eq(run("'%s' -o '%s' '%s' kernel_src", HIPAMP_EMBED_TOOL, path_in_dir("out.c"), path_in_dir("in.hip")),
                     0, "hipamp-embed failed on %zu bytes: %s", sizes[s], stderr_text());
        char *src = read_file(path_in_dir("out.c"), NULL);
        cr_assert_not_null(src, "no output for %zu bytes", sizes[s]);
        size_t n = 0;
        unsigned char *got = parse_array(src, "kernel_src", &n);
        cr_assert_eq(n, sizes[s] + 1, "%zu items for %zu input bytes (want the bytes + NUL)", n, sizes[s]);
        for (size_t i = 0; i < sizes[s]; ++i)
            cr_assert_eq(got[i], in[i], "byte %zu of %zu: 0x%02x, want 0x%02x", i, sizes[s], got[i], in[i]);
        cr_assert_eq(got[sizes[s]], 0, "the array does not end with a NUL");
        free(got);
        free(src);
        free(in);
    }
}

/* Session 105's: a byte over 0x7f (UTF-8 in a kernel's comment) was
 * written as the integer 0xhh, which overflows a signed char: a warning per
 * byte in C (-Woverflow, fatal with -Werror) and a narrowing error in C++.
 * Now the generated file compiles cleanly as C and as C++ under strict
 * warnings, and a program built from it gives the input back byte for
 * byte. */
Test(embed, generated_source_compiles_cleanly_as_c_and_cpp_with_every_byte, .timeout = 120)
{
    const char *cc = getenv("CC") && *getenv("CC") ? getenv("CC") : "cc";
    const char *cxx = getenv("CXX") && *getenv("CXX") ? getenv("CXX") : "c++";
    unsigned char *in = sample(700, 7); /* every byte but NUL, 255 down to 1 first */
    write_file(path_in_dir("bytes.hip"), in, 700);
    cr_assert_eq(run("'%s' -o '%s' -H '%s' '%s' all_bytes", HIPAMP_EMBED_TOOL, path_in_dir("bytes.c"),
                     path_in_dir("bytes.h"), path_in_dir("bytes.hip")),
                 0, "hipamp-embed: %s", stderr_text());
    static const char prog[] = "#include <stdio.h>\n#include <string.h>\n#include \"bytes.h\"\n"
                               "int main(void) { return fwrite(all_bytes, 1, strlen(all_bytes), stdout) "
                               "== strlen(all_bytes) ? 0 : 1; }\n";
    write_file(path_in_dir("main.c"), prog, strlen(prog));
    cr_assert_eq(run("cd '%s' && %s -std=c11 -Wall -Wextra -pedantic -Wconversion -Werror -c bytes.c -o bytes.o", dir,
                     cc),
                 0, "the generated C does not compile cleanly: %.600s", stderr_text());
    cr_assert_eq(run("cd '%s' && %s -x c++ -std=c++17 -Wall -Wextra -pedantic -Wconversion -Werror -c bytes.c -o "
                     "bytes_cpp.o",
                     dir, cxx),
                 0, "the generated C does not compile as C++: %.600s", stderr_text());
    cr_assert_eq(run("cd '%s' && %s -std=c11 main.c bytes.o -o roundtrip && ./roundtrip > out.bin", dir, cc), 0,
                 "%s", stderr_text());
    size_t n = 0;
    char *back = read_file(path_in_dir("out.bin"), &n);
    cr_assert_not_null(back);
    cr_assert_eq(n, 700, "%zu bytes came back, want 700", n);
    cr_assert(memcmp(back, in, 700) == 0, "the bytes differ");
    free(back);
    free(in);
}

#ifdef HIPAMP_EMBED_SCRIPT
/* The tool and cmake/HipampEmbedScript.cmake (what hipamp_embed() runs)
 * agree byte for byte, so a Makefile build embeds what a CMake build does. */
Test(embed, same_output_as_cmake_hipamp_embed)
{
    size_t sizes[] = {0, 15, 16, 33, 4099};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
        unsigned char *in = sample(sizes[s], (unsigned)s + 100);
        write_file(path_in_dir("k.hip"), in, sizes[s]);
        cr_assert_eq(run("'%s' -o '%s' '%s' my_kernels", HIPAMP_EMBED_TOOL, path_in_dir("tool.c"), path_in_dir("k.hip")), 0,
                     "hipamp-embed: %s", stderr_text());
        cr_assert_eq(run("'%s' -DIN='%s' -DOUT='%s' -DSYMBOL=my_kernels -P '%s'", HIPAMP_CMAKE_COMMAND,
                         path_in_dir("k.hip"), path_in_dir("cmake.c"), HIPAMP_EMBED_SCRIPT),
                     0, "cmake -P HipampEmbedScript.cmake: %s", stderr_text());
        size_t na = 0, nb = 0;
        char *a = read_file(path_in_dir("tool.c"), &na), *b = read_file(path_in_dir("cmake.c"), &nb);
        cr_assert(a && b, "an output is missing");
        cr_assert_eq(na, nb, "%zu input bytes: tool wrote %zu bytes, CMake %zu", sizes[s], na, nb);
        cr_assert(memcmp(a, b, na) == 0, "%zu input bytes: the outputs differ:\n%.300s\n---\n%.300s", sizes[s], a, b);
        free(a);
        free(b);
        free(in);
    }
}
#endif

Test(embed, header_declares_the_symbol)
{
    write_file(path_in_dir("saxpy.hip"), "AMP_KERNEL(k, amp::index<1> i) {}\n", 34);
    cr_assert_eq(run("'%s' -o '%s' -H '%s' '%s' saxpy_source", HIPAMP_EMBED_TOOL, path_in_dir("s.c"), path_in_dir("s.h"),
                     path_in_dir("saxpy.hip")),
                 0, "%s", stderr_text());
    char *h = read_file(path_in_dir("s.h"), NULL);
    cr_assert_not_null(h, "no header written");
    cr_assert_not_null(strstr(h, "\nextern const char saxpy_source[];\n"), "no declaration in:\n%s", h);
    /* The guard holds the symbol as it is: upper-cased, saxpy_source's and
     * SAXPY_SOURCE's headers shared one, and the second declared nothing. */
    cr_assert_not_null(strstr(h, "#ifndef HIPAMP_EMBED_saxpy_source_H\n#define HIPAMP_EMBED_saxpy_source_H\n"),
                       "no include guard in:\n%s", h);
    cr_assert_eq(run("'%s' -o '%s' -H '%s' '%s' SAXPY_SOURCE", HIPAMP_EMBED_TOOL, path_in_dir("S.c"), path_in_dir("S.h"),
                     path_in_dir("saxpy.hip")),
                 0, "%s", stderr_text());
    char *upper = read_file(path_in_dir("S.h"), NULL);
    cr_assert(upper && strstr(upper, "#ifndef HIPAMP_EMBED_SAXPY_SOURCE_H\n"), "%s", upper ? upper : "(none)");
    free(upper);
    unlink(path_in_dir("S.c"));
    unlink(path_in_dir("S.h"));
    cr_assert_not_null(strstr(h, "extern \"C\""), "no C++ linkage block in:\n%s", h);
    char *c = read_file(path_in_dir("s.c"), NULL);
    cr_assert_not_null(c, "no source written with -H");
    size_t n = 0;
    unsigned char *got = parse_array(c, "saxpy_source", &n);
    cr_assert_eq(n, 35);
    cr_assert(memcmp(got, "AMP_KERNEL(k, amp::index<1> i) {}\n", 35) == 0);
    free(got);
    free(c);
    free(h);
}

Test(embed, standard_output_without_o)
{
    write_file(path_in_dir("a.hip"), "xyz", 3);
    cr_assert_eq(run("'%s' '%s' abc > '%s'", HIPAMP_EMBED_TOOL, path_in_dir("a.hip"), path_in_dir("stdout.c")), 0, "%s",
                 stderr_text());
    char *c = read_file(path_in_dir("stdout.c"), NULL);
    size_t n = 0;
    unsigned char *got = parse_array(c, "abc", &n);
    cr_assert_eq(n, 4);
    cr_assert(memcmp(got, "xyz", 4) == 0);
    free(got);
    free(c);
}

/* Only the files the test made itself may be in dir: a failed run leaves
 * no output and no temporary file. */
static void assert_dir_holds_only(const char *const *names, size_t n)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || !strcmp(e->d_name, "stderr.txt")) continue;
        bool known = false;
        for (size_t i = 0; i < n; ++i) known |= strcmp(e->d_name, names[i]) == 0;
        cr_expect(known, "a failed run left '%s' behind", e->d_name);
    }
    closedir(d);
}

Test(embed, bad_symbols_are_refused)
{
    write_file(path_in_dir("k.hip"), "k", 1);
    /* Reserved names too: __func__, _Pragma, __LINE__ made output that does
     * not compile. */
    const char *bad[] = {"1abc", "a-b", "int", "_Bool", "x.y", "caf\xc3\xa9", "\"\"", "__func__", "_Pragma",
                         "__LINE__", "__STDC__", "_Xy"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        cr_expect_eq(run("'%s' -o '%s' '%s' '%s'", HIPAMP_EMBED_TOOL, path_in_dir("out.c"), path_in_dir("k.hip"), bad[i]), 2,
                     "symbol '%s' was accepted", bad[i]);
        char *err = stderr_text();
        cr_expect_not_null(strstr(err, "is not a C identifier"), "symbol '%s': message '%s'", bad[i], err);
        free(err);
    }
    /* Named like a keyword of C++ (or C23), whose files include the header
     * too (extern "C"): accepted, and the header broke them. */
    const char *cxx[] = {"class", "new", "this", "template", "bool", "nullptr", "typeof"};
    for (size_t i = 0; i < sizeof cxx / sizeof cxx[0]; ++i) {
        cr_expect_eq(run("'%s' -o '%s' -H '%s' '%s' '%s'", HIPAMP_EMBED_TOOL, path_in_dir("out.c"),
                         path_in_dir("out.h"), path_in_dir("k.hip"), cxx[i]),
                     2, "symbol '%s' was accepted", cxx[i]);
        char *err = stderr_text();
        cr_expect_not_null(strstr(err, "is a keyword of C++ or C23"), "symbol '%s': message '%s'", cxx[i], err);
        free(err);
    }
    const char *only[] = {"k.hip"};
    assert_dir_holds_only(only, 1);
}

Test(embed, missing_input_fails_and_keeps_the_old_output)
{
    write_file(path_in_dir("out.c"), "old", 3);
    cr_assert_eq(run("'%s' -o '%s' '%s' sym", HIPAMP_EMBED_TOOL, path_in_dir("out.c"), path_in_dir("absent.hip")), 1);
    char *err = stderr_text();
    cr_expect_not_null(strstr(err, "cannot open") && strstr(err, "absent.hip") ? err : NULL,
                       "message does not name the file: '%s'", err);
    free(err);
    char *c = read_file(path_in_dir("out.c"), NULL);
    cr_assert_str_eq(c, "old", "the previous output was touched");
    free(c);
    const char *only[] = {"out.c"};
    assert_dir_holds_only(only, 1);
}

Test(embed, unwritable_output_fails)
{
    write_file(path_in_dir("k.hip"), "k", 1);
    cr_assert_eq(run("'%s' -o '%s/no/such/dir/out.c' '%s' sym", HIPAMP_EMBED_TOOL, dir, path_in_dir("k.hip")), 1);
    char *err = stderr_text();
    cr_expect_not_null(strstr(err, "cannot create"), "message: '%s'", err);
    free(err);
    /* A header that cannot be written fails the run too, naming it, and
     * leaves no source behind (it was written and put in place first). */
    cr_assert_eq(run("'%s' -o '%s' -H '%s/no/dir/k.h' '%s' sym", HIPAMP_EMBED_TOOL, path_in_dir("k.c"), dir,
                     path_in_dir("k.hip")),
                 1);
    err = stderr_text();
    cr_expect_not_null(strstr(err, "cannot create") && strstr(err, "k.h") ? err : NULL, "message: '%s'", err);
    free(err);
    const char *only[] = {"k.hip"};
    assert_dir_holds_only(only, 1);
}

/* An output whose name is near NAME_MAX (255 bytes) is written, new or
 * replaced: the temporary file beside it gets a name that fits (it was the
 * output's name plus ".tmp.XXXXXXXX", too long, and the run failed). */
Test(embed, output_names_near_name_max_are_written)
{
    write_file(path_in_dir("k.hip"), "xyz", 3);
    for (size_t len = 243; len <= 255; len += 6) {
        char leaf[256];
        memset(leaf, 'a', len);
        leaf[len] = '\0';
        memcpy(leaf + len - 2, ".c", 2);
        for (int pass = 0; pass < 2; ++pass) { /* new, then replaced */
            cr_assert_eq(run("'%s' -o '%s' '%s' sym", HIPAMP_EMBED_TOOL, path_in_dir(leaf), path_in_dir("k.hip")), 0,
                         "a %zu-byte output name: %s", len, stderr_text());
            size_t n = 0;
            char *src = read_file(path_in_dir(leaf), NULL);
            cr_assert_not_null(src, "no %zu-byte output", len);
            unsigned char *bytes = parse_array(src, "sym", &n);
            cr_assert(n == 4 && !memcmp(bytes, "xyz", 4), "the array does not hold the input");
            free(bytes);
            free(src);
        }
        unlink(path_in_dir(leaf));
    }
    const char *only[] = {"k.hip"};
    assert_dir_holds_only(only, 1);
}

static void assert_stderr_has(const char *what);

Test(embed, usage_errors)
{
    write_file(path_in_dir("k.hip"), "k", 1);
    cr_expect_eq(run("'%s'", HIPAMP_EMBED_TOOL), 2, "no arguments accepted");
    cr_expect_eq(run("'%s' '%s'", HIPAMP_EMBED_TOOL, path_in_dir("k.hip")), 2, "no symbol accepted");
    cr_expect_eq(run("'%s' '%s' a b", HIPAMP_EMBED_TOOL, path_in_dir("k.hip")), 2, "an extra argument accepted");
    cr_expect_eq(run("'%s' --bogus '%s' a", HIPAMP_EMBED_TOOL, path_in_dir("k.hip")), 2, "an unknown option accepted");
    cr_expect_eq(run("'%s' '%s' a -o", HIPAMP_EMBED_TOOL, path_in_dir("k.hip")), 2, "-o without a file accepted");
    cr_expect_eq(run("'%s' --help > /dev/null", HIPAMP_EMBED_TOOL), 0, "--help failed");
    /* An option given twice is an error, not the last one winning. */
    cr_expect_eq(run("'%s' -o '%s' -o '%s' '%s' a", HIPAMP_EMBED_TOOL, path_in_dir("a.c"), path_in_dir("b.c"),
                     path_in_dir("k.hip")),
                 2, "-o twice accepted");
    assert_stderr_has("-o given twice");
    cr_expect_eq(run("'%s' --target sm_90 --target gfx90a -o '%s' '%s'", HIPAMP_COMPILE_TOOL, path_in_dir("k.co"),
                     path_in_dir("k.hip")),
                 2, "--target twice accepted");
    assert_stderr_has("--target given twice ('sm_90', then 'gfx90a')");
    cr_expect_eq(run("'%s' --options=-DA --target gfx90a --options -DB '%s'", HIPAMP_COMPILE_TOOL, path_in_dir("k.hip")),
                 2, "--options twice accepted");
    assert_stderr_has("--options given twice");
    cr_expect_eq(run("'%s' --warm --options -DA --options -DB", HIPAMP_COMPILE_TOOL), 2, "--warm: --options twice");
    assert_stderr_has("--options given twice");
    /* The = forms in warm mode too, as the compile mode takes them (they
     * were "unknown option"). */
    cr_expect_eq(run("'%s' --warm --options=-DA --options -DB", HIPAMP_COMPILE_TOOL), 2, "--warm: --options= twice");
    assert_stderr_has("--options given twice ('-DA', then '-DB')");
    cr_expect_eq(run("'%s' --warm --accelerator=tpu:9 '%s'", HIPAMP_COMPILE_TOOL, path_in_dir("k.hip")), 1,
                 "--warm: --accelerator=");
    assert_stderr_has("--accelerator tpu:9");
    const char *only[] = {"k.hip"};
    assert_dir_holds_only(only, 1);
}

/* ------------------------------------------- careless use (issue 20, item 6) */

/* The file at path holds exactly text. */
static void assert_file_is(const char *path, const char *text)
{
    char *c = read_file(path, NULL);
    cr_assert_not_null(c, "%s is gone", path);
    cr_assert_str_eq(c, text, "%s was changed", path);
    free(c);
}

static void assert_stderr_has(const char *what)
{
    char *err = stderr_text();
    cr_expect_not_null(strstr(err, what), "want '%s' in the message: '%s'", what, err);
    free(err);
}

/* A closed pipe is a write error the tool reports (exit 1, "write error"),
 * not a silent death by SIGPIPE (141); a run ended by a signal mid-write
 * (here the file size limit's SIGXFSZ, as SIGTERM or SIGINT) removes its
 * temporary file (a 48 MB one was left behind); the standard output
 * appending to the input ("sym >> in.hip") is refused as "-o in.hip" is. */
Test(embed, closed_pipes_signals_and_the_input_as_standard_output)
{
    size_t n = 2u << 20;
    char *big = malloc(n);
    cr_assert_not_null(big);
    memset(big, 'a', n);
    write_file(path_in_dir("big.hip"), big, n);
    free(big);
    cr_assert_eq(run("('%s' '%s' sym 2>'%s'; echo $? > '%s') | head -c 10 > /dev/null", HIPAMP_EMBED_TOOL,
                     path_in_dir("big.hip"), path_in_dir("pipe_err.txt"), path_in_dir("pipe_rc.txt")),
                 0);
    char *rc = read_file(path_in_dir("pipe_rc.txt"), NULL), *err = read_file(path_in_dir("pipe_err.txt"), NULL);
    cr_assert(rc && err);
    cr_assert_eq(atoi(rc), 1, "a closed pipe: exit %s (141: SIGPIPE)", rc);
    cr_assert(strstr(err, "hipamp-embed: write error: Broken pipe"), "%s", err);
    free(rc);
    free(err);
    unlink(path_in_dir("pipe_rc.txt"));
    unlink(path_in_dir("pipe_err.txt"));
    int st = run("ulimit -f 64; '%s' -o '%s' '%s' sym", HIPAMP_EMBED_TOOL, path_in_dir("out.c"),
                 path_in_dir("big.hip"));
    cr_assert_eq(st, 128 + SIGXFSZ, "past the file size limit: exit %d", st);
    const char *only[] = {"big.hip"};
    assert_dir_holds_only(only, 1);
    const char *text = "AMP_KERNEL(k, amp::index<1> i, amp::array_view<int, 1> a) { a[i] = 1; }\n";
    write_file(path_in_dir("in.hip"), text, strlen(text));
    cr_assert_eq(run("'%s' '%s' sym >> '%s'", HIPAMP_EMBED_TOOL, path_in_dir("in.hip"), path_in_dir("in.hip")), 2);
    assert_stderr_has("the standard output is the input");
    size_t got = 0;
    char *now = read_file(path_in_dir("in.hip"), &got);
    cr_assert(now && got == strlen(text) && !memcmp(now, text, got), "the input was written into");
    free(now);
#ifdef HIPAMP_COMPILE_TOOL
    cr_assert_eq(run("'%s' --target sm_90 -o - '%s' >> '%s'", HIPAMP_COMPILE_TOOL, path_in_dir("in.hip"),
                     path_in_dir("in.hip")),
                 2);
    assert_stderr_has("the standard output is the input");
#endif
    unlink(path_in_dir("in.hip"));
    unlink(path_in_dir("big.hip"));
}


Test(embed, output_that_is_the_input_is_refused)
{
    const char *text = "AMP_KERNEL(k, amp::index<1> i) {}\n";
    write_file(path_in_dir("k.hip"), text, strlen(text));
    cr_assert_eq(run("'%s' -o '%s' '%s' sym", HIPAMP_EMBED_TOOL, path_in_dir("k.hip"), path_in_dir("k.hip")), 2);
    assert_stderr_has("is the input");
    assert_file_is(path_in_dir("k.hip"), text);
    /* Another name for it: "./", a hard link, a symbolic link it is reached by. */
    cr_assert_eq(run("cd '%s' && '%s' -o ./k.hip k.hip sym", dir, HIPAMP_EMBED_TOOL), 2);
    cr_assert_eq(link(path_in_dir("k.hip"), path_in_dir("hard.hip")), 0);
    cr_assert_eq(run("'%s' -o '%s' '%s' sym", HIPAMP_EMBED_TOOL, path_in_dir("hard.hip"), path_in_dir("k.hip")), 2);
    cr_assert_eq(symlink(path_in_dir("k.hip"), path_in_dir("via.hip")), 0);
    cr_assert_eq(run("'%s' -o '%s' '%s' sym", HIPAMP_EMBED_TOOL, path_in_dir("k.hip"), path_in_dir("via.hip")), 2);
    /* The header may not replace it either. */
    cr_assert_eq(run("'%s' -o '%s' -H '%s' '%s' sym", HIPAMP_EMBED_TOOL, path_in_dir("k.c"), path_in_dir("k.hip"),
                     path_in_dir("k.hip")),
                 2);
    assert_file_is(path_in_dir("k.hip"), text);
    const char *only[] = {"k.hip", "hard.hip", "via.hip"};
    assert_dir_holds_only(only, 3);
}

Test(embed, source_and_header_in_one_file_are_refused)
{
    write_file(path_in_dir("k.hip"), "k", 1);
    write_file(path_in_dir("x.h"), "old", 3);
    cr_assert_eq(run("'%s' -o '%s' -H '%s' '%s' sym", HIPAMP_EMBED_TOOL, path_in_dir("x.h"), path_in_dir("x.h"),
                     path_in_dir("k.hip")),
                 2);
    assert_stderr_has("the same file");
    cr_assert_eq(run("cd '%s' && '%s' -o x.h -H ./x.h k.hip sym", dir, HIPAMP_EMBED_TOOL), 2);
    /* Not there yet: the same place all the same. */
    cr_assert_eq(run("cd '%s' && '%s' -o new.h -H ./new.h k.hip sym", dir, HIPAMP_EMBED_TOOL), 2);
    cr_assert_eq(run("'%s' -H - k.hip sym", HIPAMP_EMBED_TOOL), 2, "both outputs to standard output accepted");
    assert_file_is(path_in_dir("x.h"), "old");
    const char *only[] = {"k.hip", "x.h"};
    assert_dir_holds_only(only, 2);
}

/* A device of the test's own, as root: /dev/full's twin (char 1:7) in the
 * test's directory, so that a tool that replaces devices (as hipamp-embed
 * did with /dev/full) harms nothing outside it. NULL when not root. */
static const char *private_device(void)
{
    if (geteuid() != 0) return NULL;
    const char *path = path_in_dir("full");
    cr_assert_eq(mknod(path, S_IFCHR | 0666, makedev(1, 7)), 0, "mknod: %s", strerror(errno));
    return path;
}

static void assert_still_device(const char *path)
{
    struct stat st;
    cr_assert_eq(lstat(path, &st), 0);
    cr_assert(S_ISCHR(st.st_mode), "the device node %s was replaced by a regular file", path);
    unlink(path);
}

/* The generated array of "xyz" with symbol abc, as text. */
static void assert_is_xyz_array(const char *text, size_t len, const char *where)
{
    cr_assert_not_null(text, "%s: nothing arrived", where);
    cr_assert_eq(strlen(text), len, "%s: a NUL byte in the output", where);
    size_t n = 0;
    unsigned char *got = parse_array(text, "abc", &n);
    cr_assert(n == 4 && memcmp(got, "xyz", 4) == 0, "%s: the array is not \"xyz\"", where);
    free(got);
}

/* What a FIFO's reader gets from hipamp-embed writing out (the FIFO or a
 * link to it): the FIFO opened for reading first (without
 * waiting for a writer), the tool run, then everything it wrote (the
 * output is far below a pipe's buffer). */
static char *embed_into_fifo(const char *fifo, int *rc, const char *out, const char *in)
{
    int fd = open(fifo, O_RDONLY | O_NONBLOCK);
    cr_assert(fd >= 0, "open %s: %s", fifo, strerror(errno));
    *rc = run("'%s' -o '%s' '%s' abc", HIPAMP_EMBED_TOOL, out, in);
    size_t cap = 65536, len = 0;
    char *buf = malloc(cap + 1);
    cr_assert_not_null(buf);
    for (;;) {
        ssize_t got = read(fd, buf + len, cap - len);
        if (got <= 0) break;
        len += (size_t)got;
        cr_assert(len < cap, "too much output");
    }
    close(fd);
    buf[len] = '\0';
    return buf;
}

/* A character device or a FIFO at an output's name is written in place,
 * never replaced by a regular file (as root, /dev/full was once); a FIFO
 * that no process reads is refused rather than waited on forever; a
 * directory is refused; "-o -" is standard output. */
Test(embed, device_and_fifo_outputs_are_written_in_place, .timeout = 60)
{
    write_file(path_in_dir("k.hip"), "xyz", 3);
    struct stat st;
    const char *dev = private_device();
    if (dev) {
        cr_assert_eq(run("'%s' -o '%s' '%s' abc", HIPAMP_EMBED_TOOL, dev, path_in_dir("k.hip")), 1);
        assert_stderr_has("No space left on device");
        assert_still_device(dev);
    }
    cr_assert_eq(run("'%s' -o /dev/null '%s' abc", HIPAMP_EMBED_TOOL, path_in_dir("k.hip")), 0, "%s", stderr_text());
    cr_assert_eq(stat("/dev/null", &st), 0);
    cr_assert(S_ISCHR(st.st_mode), "/dev/null is no longer a device");

    cr_assert_eq(mkfifo(path_in_dir("fifo.c"), 0600), 0);
    cr_assert_eq(run("'%s' -o '%s' '%s' abc", HIPAMP_EMBED_TOOL, path_in_dir("fifo.c"), path_in_dir("k.hip")), 1);
    assert_stderr_has("no process is reading");
    int rc = 0;
    char *got = embed_into_fifo(path_in_dir("fifo.c"), &rc, path_in_dir("fifo.c"), path_in_dir("k.hip"));
    cr_assert_eq(rc, 0, "writing a FIFO with a reader: %s", stderr_text());
    assert_is_xyz_array(got, strlen(got), "the FIFO");
    free(got);
    cr_assert_eq(lstat(path_in_dir("fifo.c"), &st), 0);
    cr_assert(S_ISFIFO(st.st_mode), "the FIFO was replaced");

    cr_assert_eq(mkdir(path_in_dir("d.c"), 0700), 0);
    cr_assert_eq(run("'%s' -o '%s' '%s' abc", HIPAMP_EMBED_TOOL, path_in_dir("d.c"), path_in_dir("k.hip")), 2);
    assert_stderr_has("a directory");
    rmdir(path_in_dir("d.c"));
    cr_assert_eq(run("'%s' -o - '%s' abc > '%s'", HIPAMP_EMBED_TOOL, path_in_dir("k.hip"), path_in_dir("stdout.c")), 0,
                 "%s", stderr_text());
    size_t n = 0;
    char *c = read_file(path_in_dir("stdout.c"), &n);
    assert_is_xyz_array(c, n, "-o -");
    free(c);
    unlink(path_in_dir("fifo.c"));
    unlink(path_in_dir("stdout.c"));
}

/* "-o /dev/stdout": a symbolic link, to the process's standard output. As
 * root the tool renamed its temporary file over the link (and wrote nothing
 * to standard output). The link here is a private one with /dev/stdout's
 * target, so a tool that replaces links harms nothing outside the test's
 * directory: links are followed, to a regular file (replaced whole, the
 * link kept), a FIFO (a pipe: written in place) or a device. */
Test(embed, outputs_through_symbolic_links, .timeout = 60)
{
    write_file(path_in_dir("k.hip"), "xyz", 3);
    struct stat st;
    cr_assert_eq(symlink("/proc/self/fd/1", path_in_dir("stdout")), 0);
    /* Standard output a file. */
    cr_assert_eq(run("'%s' -o '%s' '%s' abc > '%s'", HIPAMP_EMBED_TOOL, path_in_dir("stdout"), path_in_dir("k.hip"),
                     path_in_dir("redirected.c")),
                 0, "%s", stderr_text());
    cr_assert_eq(lstat(path_in_dir("stdout"), &st), 0);
    cr_assert(S_ISLNK(st.st_mode), "the link to standard output was replaced");
    size_t n = 0;
    char *c = read_file(path_in_dir("redirected.c"), &n);
    assert_is_xyz_array(c, n, "standard output redirected to a file");
    free(c);
    /* Standard output a pipe. */
    cr_assert_eq(run("'%s' -o '%s' '%s' abc 2>'%s' | cat > '%s'", HIPAMP_EMBED_TOOL, path_in_dir("stdout"),
                     path_in_dir("k.hip"), path_in_dir("tool-err.txt"), path_in_dir("piped.c")),
                 0, "%s", read_file(path_in_dir("tool-err.txt"), NULL));
    unlink(path_in_dir("tool-err.txt"));
    c = read_file(path_in_dir("piped.c"), &n);
    assert_is_xyz_array(c, n, "standard output a pipe");
    free(c);
    cr_assert_eq(lstat(path_in_dir("stdout"), &st), 0);
    cr_assert(S_ISLNK(st.st_mode), "the link to standard output was replaced");
    /* A link to a FIFO with a reader; to /dev/null. */
    cr_assert_eq(mkfifo(path_in_dir("fifo"), 0600), 0);
    cr_assert_eq(symlink(path_in_dir("fifo"), path_in_dir("to-fifo.c")), 0);
    int rc = 0;
    char *got = embed_into_fifo(path_in_dir("fifo"), &rc, path_in_dir("to-fifo.c"), path_in_dir("k.hip"));
    cr_assert_eq(rc, 0, "%s", stderr_text());
    assert_is_xyz_array(got, strlen(got), "a link to a FIFO");
    free(got);
    cr_assert_eq(lstat(path_in_dir("to-fifo.c"), &st), 0);
    cr_assert(S_ISLNK(st.st_mode), "the link to the FIFO was replaced");
    cr_assert_eq(symlink("/dev/null", path_in_dir("null.c")), 0);
    cr_assert_eq(run("'%s' -o '%s' '%s' abc", HIPAMP_EMBED_TOOL, path_in_dir("null.c"), path_in_dir("k.hip")), 0, "%s",
                 stderr_text());
    cr_assert_eq(lstat(path_in_dir("null.c"), &st), 0);
    cr_assert(S_ISLNK(st.st_mode), "the link to /dev/null was replaced");
    /* A link to a regular file: the file gets the output, the link stays. */
    write_file(path_in_dir("real.c"), "old", 3);
    cr_assert_eq(symlink("real.c", path_in_dir("to-real.c")), 0);
    cr_assert_eq(run("'%s' -o '%s' -H '%s' '%s' abc", HIPAMP_EMBED_TOOL, path_in_dir("to-real.c"), path_in_dir("k.h"),
                     path_in_dir("k.hip")),
                 0, "%s", stderr_text());
    cr_assert_eq(lstat(path_in_dir("to-real.c"), &st), 0);
    cr_assert(S_ISLNK(st.st_mode), "the link to a regular file was replaced");
    c = read_file(path_in_dir("real.c"), &n);
    assert_is_xyz_array(c, n, "the file behind a link");
    free(c);
    /* Refused: the link and its file as the two outputs; a link to
     * nothing; a link to a directory. */
    cr_assert_eq(run("'%s' -o '%s' -H '%s' '%s' abc", HIPAMP_EMBED_TOOL, path_in_dir("to-real.c"), path_in_dir("real.c"),
                     path_in_dir("k.hip")),
                 2);
    assert_stderr_has("the same file");
    cr_assert_eq(symlink("absent.c", path_in_dir("dangling.c")), 0);
    cr_assert_eq(run("'%s' -o '%s' '%s' abc", HIPAMP_EMBED_TOOL, path_in_dir("dangling.c"), path_in_dir("k.hip")), 2);
    assert_stderr_has("leads nowhere");
    cr_assert_eq(lstat(path_in_dir("dangling.c"), &st), 0);
    cr_assert(S_ISLNK(st.st_mode), "the dangling link was replaced");
    cr_assert_eq(symlink("/", path_in_dir("root.c")), 0);
    cr_assert_eq(run("'%s' -o '%s' '%s' abc", HIPAMP_EMBED_TOOL, path_in_dir("root.c"), path_in_dir("k.hip")), 2);
    assert_stderr_has("a directory");
    /* A new file in a directory reached through one's own link is made
     * there (before, refused as "a symbolic link that leads nowhere"). */
    cr_assert_eq(mkdir(path_in_dir("sub"), 0755), 0);
    cr_assert_eq(symlink("sub", path_in_dir("to-sub")), 0);
    char through[1200];
    snprintf(through, sizeof through, "%s/new.c", path_in_dir("to-sub"));
    cr_assert_eq(run("'%s' -o '%s' '%s' abc", HIPAMP_EMBED_TOOL, through, path_in_dir("k.hip")), 0, "%s",
                 stderr_text());
    char made[1200];
    snprintf(made, sizeof made, "%s/new.c", path_in_dir("sub"));
    c = read_file(made, &n);
    assert_is_xyz_array(c, n, "a new file through a directory's link");
    free(c);
    unlink(made);
    rmdir(path_in_dir("sub"));
    const char *only[] = {"k.hip", "stdout", "redirected.c", "piped.c", "fifo", "to-fifo.c", "null.c",
                          "real.c",  "to-real.c", "k.h", "dangling.c", "root.c", "to-sub"};
    assert_dir_holds_only(only, sizeof only / sizeof only[0]);
}

/* Output through one of the tool's own descriptors (/dev/stdout,
 * /dev/fd/N, or a name of the file a standard descriptor writes) goes
 * through that descriptor as the shell opened it: ">>" appends, the file
 * keeps what it held and is never replaced under the descriptor. */
Test(embed, output_through_a_descriptor_appends_in_place, .timeout = 60)
{
    write_file(path_in_dir("k.hip"), "xyz", 3);
    const char *prior = "earlier build output\n";
    size_t plen = strlen(prior);
    /* -o /dev/stdout >> log; -o /dev/fd/3 3>> log; -o log >> log. */
    const char *cases[] = {"/dev/stdout", "/dev/fd/3", ""};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        write_file(path_in_dir("build.log"), prior, plen);
        struct stat before, after;
        cr_assert_eq(stat(path_in_dir("build.log"), &before), 0);
        const char *out = cases[i][0] ? cases[i] : path_in_dir("build.log");
        int rc = i == 1 ? run("'%s' -o '%s' '%s' abc 3>>'%s'", HIPAMP_EMBED_TOOL, out, path_in_dir("k.hip"),
                              path_in_dir("build.log"))
                        : run("'%s' -o '%s' '%s' abc >>'%s'", HIPAMP_EMBED_TOOL, out, path_in_dir("k.hip"),
                              path_in_dir("build.log"));
        cr_assert_eq(rc, 0, "-o %s: %s", out, stderr_text());
        size_t n = 0;
        char *log = read_file(path_in_dir("build.log"), &n);
        cr_assert(log && n > plen && !memcmp(log, prior, plen), "-o %s: the log lost what it held: '%s'", out, log);
        assert_is_xyz_array(log + plen, n - plen, out);
        free(log);
        cr_assert_eq(stat(path_in_dir("build.log"), &after), 0);
        cr_assert(before.st_ino == after.st_ino, "-o %s: the log was replaced by another file", out);
        unlink(path_in_dir("build.log"));
    }
    /* A descriptor open only for reading is not an output. */
    write_file(path_in_dir("ro.txt"), "ro", 2);
    cr_assert_eq(run("'%s' -o /dev/fd/3 '%s' abc 3<'%s'", HIPAMP_EMBED_TOOL, path_in_dir("k.hip"), path_in_dir("ro.txt")),
                 2);
    assert_stderr_has("not open for writing");
    assert_file_is(path_in_dir("ro.txt"), "ro");
    unlink(path_in_dir("ro.txt"));
    const char *only[] = {"k.hip"};
    assert_dir_holds_only(only, 1);
}

/* A regular file replaced whole keeps its permission bits (a private file
 * stays private, not 0666 less the umask) and, as root, its owner. */
Test(embed, replaced_file_keeps_its_mode_and_owner)
{
    write_file(path_in_dir("k.hip"), "xyz", 3);
    mode_t old_mask = umask(022);
    write_file(path_in_dir("private.c"), "old", 3);
    cr_assert_eq(chmod(path_in_dir("private.c"), 0600), 0);
    bool root = geteuid() == 0;
    if (root) cr_assert_eq(chown(path_in_dir("private.c"), 65534, 65534), 0);
    write_file(path_in_dir("shared.c"), "old", 3);
    cr_assert_eq(chmod(path_in_dir("shared.c"), 0640), 0);
    cr_assert_eq(symlink("shared.c", path_in_dir("to-shared.c")), 0);
    int rc1 = run("'%s' -o '%s' '%s' abc", HIPAMP_EMBED_TOOL, path_in_dir("private.c"), path_in_dir("k.hip"));
    int rc2 = run("'%s' -o '%s' '%s' abc", HIPAMP_EMBED_TOOL, path_in_dir("to-shared.c"), path_in_dir("k.hip"));
    umask(old_mask);
    cr_assert_eq(rc1, 0, "%s", stderr_text());
    cr_assert_eq(rc2, 0, "%s", stderr_text());
    struct stat st;
    cr_assert_eq(stat(path_in_dir("private.c"), &st), 0);
    cr_assert_eq(st.st_mode & 07777, 0600, "a 0600 output became %04o", (unsigned)(st.st_mode & 07777));
    if (root) cr_assert(st.st_uid == 65534 && st.st_gid == 65534, "the owner became %lu:%lu",
                        (unsigned long)st.st_uid, (unsigned long)st.st_gid);
    size_t n = 0;
    char *c = read_file(path_in_dir("private.c"), &n);
    assert_is_xyz_array(c, n, "the private file");
    free(c);
    cr_assert_eq(stat(path_in_dir("shared.c"), &st), 0);
    cr_assert_eq(st.st_mode & 07777, 0640, "a 0640 output behind a link became %04o", (unsigned)(st.st_mode & 07777));
    c = read_file(path_in_dir("shared.c"), &n);
    assert_is_xyz_array(c, n, "the file behind the link");
    free(c);
    /* A new file: 0666 less the umask, as before. */
    old_mask = umask(027);
    int rc3 = run("'%s' -o '%s' '%s' abc", HIPAMP_EMBED_TOOL, path_in_dir("new.c"), path_in_dir("k.hip"));
    umask(old_mask);
    cr_assert_eq(rc3, 0, "%s", stderr_text());
    cr_assert_eq(stat(path_in_dir("new.c"), &st), 0);
    cr_assert_eq(st.st_mode & 07777, 0640, "a new output is %04o", (unsigned)(st.st_mode & 07777));
}

/* Session 105's: a file of another group of the user's (a project's,
 * 664) replaced by a user who is not root became the user's primary
 * group's with the same 664: the group-write bit meant for the project now
 * let the primary group (on many sites "users": everyone) change a source
 * or code object that is later compiled or run. Now the group is kept
 * where the user is in it, and where it cannot be, the group's bits go. */
static int embed_as_nobody(gid_t extra_group, const char *out, const char *in)
{
    fflush(NULL);
    pid_t c = fork();
    if (c == 0) {
        gid_t groups[1] = {extra_group};
        if (setgroups(1, groups) != 0 || setgid(65534) != 0 || setuid(65534) != 0) _exit(111);
        int nul = open("/dev/null", O_WRONLY);
        if (nul >= 0) dup2(nul, 2);
        execl(HIPAMP_EMBED_TOOL, HIPAMP_EMBED_TOOL, "-o", out, in, "abc", (char *)NULL);
        _exit(112);
    }
    int ws = 0;
    cr_assert_eq(waitpid(c, &ws, 0), c);
    return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

Test(embed, a_replaced_file_keeps_its_group_or_loses_the_groups_bits)
{
    if (geteuid() != 0) cr_skip_test("needs root to act as another user");
    char sub[600], in[700], member[700], stranger[700];
    snprintf(sub, sizeof sub, "%s/nobody", dir);
    snprintf(in, sizeof in, "%s/k.hip", sub);
    snprintf(member, sizeof member, "%s/member.c", sub);
    snprintf(stranger, sizeof stranger, "%s/stranger.c", sub);
    cr_assert_eq(chmod(dir, 0711), 0);
    cr_assert_eq(mkdir(sub, 0700), 0);
    write_file(in, "xyz", 3);
    write_file(member, "old", 3);
    write_file(stranger, "old", 3);
    cr_assert(chown(sub, 65534, 65534) == 0 && chown(in, 65534, 65534) == 0 && chown(member, 65534, 4321) == 0 &&
              chown(stranger, 65534, 4322) == 0);
    cr_assert(chmod(member, 0664) == 0 && chmod(stranger, 0664) == 0);
    int rc1 = embed_as_nobody(4321, member, in), rc2 = embed_as_nobody(4321, stranger, in);
    struct stat a, b;
    int sa = stat(member, &a), sb = stat(stranger, &b);
    unlink(in);
    unlink(member);
    unlink(stranger);
    rmdir(sub);
    cr_assert(rc1 == 0 && rc2 == 0, "hipamp-embed as uid 65534: exit %d and %d", rc1, rc2);
    cr_assert(sa == 0 && sb == 0);
    cr_assert(a.st_gid == 4321 && (a.st_mode & 07777) == 0664, "a group of the user's: %lu, %04o, want 4321, 0664",
              (unsigned long)a.st_gid, (unsigned)(a.st_mode & 07777));
    cr_assert(b.st_gid == 65534 && (b.st_mode & 07777) == 0604,
              "a group the user is not in: %lu, %04o, want the user's own 65534 and 0604 (no group bits)",
              (unsigned long)b.st_gid, (unsigned)(b.st_mode & 07777));
}

/* A file another user may have put in a sticky directory others may write
 * (/tmp) is replaced as a new file: as root, its owner is not kept (it
 * would own root's output, which the sticky bit otherwise keeps it from
 * touching), nor its mode bits (0666: anyone could change the output). */
Test(embed, file_planted_in_a_sticky_directory_is_replaced_as_new)
{
    if (geteuid() != 0) cr_skip_test("needs root: only root replaces another user's file in a sticky directory");
    write_file(path_in_dir("k.hip"), "xyz", 3);
    char sticky[512];
    snprintf(sticky, sizeof sticky, "%s/sticky", dir);
    cr_assert_eq(mkdir(sticky, 0700), 0);
    cr_assert_eq(chmod(sticky, 01777), 0);
    char planted[600];
    snprintf(planted, sizeof planted, "%s/out.c", sticky);
    write_file(planted, "planted", 7);
    cr_assert_eq(chown(planted, 65534, 65534), 0);
    cr_assert_eq(chmod(planted, 0666), 0);
    mode_t old_mask = umask(022);
    int rc = run("'%s' -o '%s' '%s' abc", HIPAMP_EMBED_TOOL, planted, path_in_dir("k.hip"));
    umask(old_mask);
    cr_assert_eq(rc, 0, "%s", stderr_text());
    struct stat st;
    cr_assert_eq(stat(planted, &st), 0);
    bool ok = st.st_uid == 0 && st.st_gid == 0 && (st.st_mode & 07777) == 0644;
    unlink(planted);
    rmdir(sticky);
    cr_assert(ok, "root's output in a sticky directory is %lu:%lu, mode %04o (the planted file's owner and mode kept)",
              (unsigned long)st.st_uid, (unsigned long)st.st_gid, (unsigned)(st.st_mode & 07777));
}

/* Every link on the way to an output is checked, not the first alone: one's
 * own link to another user's link (root's, as a link's owner, is trusted)
 * is refused, and what it leads to is left alone; a loop of links is
 * refused too. */
Test(embed, every_link_of_a_chain_is_checked, .timeout = 60)
{
    write_file(path_in_dir("k.hip"), "xyz", 3);
    cr_assert_eq(symlink("b.c", path_in_dir("a.c")), 0);
    cr_assert_eq(symlink("a.c", path_in_dir("b.c")), 0);
    cr_assert_eq(run("'%s' -o '%s' '%s' abc", HIPAMP_EMBED_TOOL, path_in_dir("a.c"), path_in_dir("k.hip")), 2);
    struct stat st;
    cr_assert(lstat(path_in_dir("a.c"), &st) == 0 && S_ISLNK(st.st_mode), "a link of the loop was replaced");
    /* A chain of one's own: followed to the end. */
    write_file(path_in_dir("real.c"), "old", 3);
    cr_assert_eq(symlink("mid.c", path_in_dir("top.c")), 0);
    cr_assert_eq(symlink(path_in_dir("real.c"), path_in_dir("mid.c")), 0);
    cr_assert_eq(run("'%s' -o '%s' '%s' abc", HIPAMP_EMBED_TOOL, path_in_dir("top.c"), path_in_dir("k.hip")), 0, "%s",
                 stderr_text());
    size_t n = 0;
    char *c = read_file(path_in_dir("real.c"), &n);
    assert_is_xyz_array(c, n, "the end of a chain of one's own links");
    free(c);
    cr_assert(lstat(path_in_dir("top.c"), &st) == 0 && S_ISLNK(st.st_mode), "the chain's first link was replaced");
    cr_assert(lstat(path_in_dir("mid.c"), &st) == 0 && S_ISLNK(st.st_mode), "the chain's second link was replaced");
    if (geteuid() != 0) cr_skip_test("not root: cannot give a link to another user");
    write_file(path_in_dir("victim"), "precious", 8);
    cr_assert_eq(symlink(path_in_dir("victim"), path_in_dir("planted")), 0);
    cr_assert_eq(lchown(path_in_dir("planted"), 65534, 65534), 0);
    cr_assert_eq(symlink("planted", path_in_dir("mine.c")), 0);
    cr_assert_eq(run("'%s' -o '%s' '%s' abc", HIPAMP_EMBED_TOOL, path_in_dir("mine.c"), path_in_dir("k.hip")), 2);
    assert_stderr_has("a symbolic link of another user (uid 65534)");
    assert_file_is(path_in_dir("victim"), "precious");
    cr_assert(lstat(path_in_dir("planted"), &st) == 0 && S_ISLNK(st.st_mode), "another user's link was replaced");
    /* A root-owned link first (as /dev/stdout is) does not make the rest trusted. */
    cr_assert_eq(lchown(path_in_dir("mine.c"), 0, 0), 0);
    cr_assert_eq(run("'%s' -o '%s' -H '%s' '%s' abc", HIPAMP_EMBED_TOOL, path_in_dir("out.c"), path_in_dir("mine.c"),
                     path_in_dir("k.hip")),
                 2);
    assert_file_is(path_in_dir("victim"), "precious");
}

/* A link is followed only where no other user could have put it there:
 * its owner does not say who did, since whoever may write its directory
 * can rename a link of ours into it. One of one's own in a directory
 * others may write (0777), at the output's name or on the way to it, is
 * refused and what it leads to left alone (it was followed, and the file
 * replaced); a link of another user on the way (a directory's name) is
 * refused (it was followed unchecked); one's own in a sticky directory is
 * still followed. */
Test(embed, links_another_user_could_have_planted_are_refused)
{
    write_file(path_in_dir("k.hip"), "xyz", 3);
    write_file(path_in_dir("victim"), "precious", 8);
    cr_assert_eq(mkdir(path_in_dir("shared"), 0700), 0);
    cr_assert_eq(chmod(path_in_dir("shared"), 0777), 0);
    cr_assert_eq(mkdir(path_in_dir("real"), 0700), 0);
    cr_assert_eq(symlink(path_in_dir("victim"), path_in_dir("shared/out.c")), 0);
    cr_assert_eq(run("'%s' -o '%s' '%s' abc", HIPAMP_EMBED_TOOL, path_in_dir("shared/out.c"), path_in_dir("k.hip")), 2);
    assert_stderr_has("another user could have put it there");
    assert_stderr_has("mode 0777");
    assert_file_is(path_in_dir("victim"), "precious");
    struct stat st;
    cr_assert(lstat(path_in_dir("shared/out.c"), &st) == 0 && S_ISLNK(st.st_mode), "the link was replaced");
    /* On the way: shared/sub -> real. */
    cr_assert_eq(symlink(path_in_dir("real"), path_in_dir("shared/sub")), 0);
    cr_assert_eq(run("'%s' -o '%s' '%s' abc", HIPAMP_EMBED_TOOL, path_in_dir("shared/sub/out.c"), path_in_dir("k.hip")), 2);
    assert_stderr_has("another user could have put it there");
    cr_assert_neq(access(path_in_dir("real/out.c"), F_OK), 0, "written through a link on the way");
    /* A sticky directory: one's own link there is followed. */
    cr_assert_eq(mkdir(path_in_dir("sticky"), 0700), 0);
    cr_assert_eq(chmod(path_in_dir("sticky"), 01777), 0);
    write_file(path_in_dir("mine.c"), "old", 3);
    cr_assert_eq(symlink(path_in_dir("mine.c"), path_in_dir("sticky/out.c")), 0);
    cr_assert_eq(run("'%s' -o '%s' '%s' abc", HIPAMP_EMBED_TOOL, path_in_dir("sticky/out.c"), path_in_dir("k.hip")), 0,
                 "%s", stderr_text());
    size_t n = 0;
    char *c = read_file(path_in_dir("mine.c"), &n);
    assert_is_xyz_array(c, n, "the file behind one's own link in a sticky directory");
    free(c);
    if (geteuid() == 0) {
        /* Another user's link as a directory on the way: evil -> real. */
        cr_assert_eq(symlink(path_in_dir("real"), path_in_dir("evil")), 0);
        cr_assert_eq(lchown(path_in_dir("evil"), 65534, 65534), 0);
        cr_assert_eq(run("'%s' -o '%s' '%s' abc", HIPAMP_EMBED_TOOL, path_in_dir("evil/out.c"), path_in_dir("k.hip")), 2);
        assert_stderr_has("a symbolic link of another user (uid 65534)");
        cr_assert_neq(access(path_in_dir("real/out.c"), F_OK), 0, "written through another user's link on the way");
    }
    unlink(path_in_dir("real/out.c"));
    unlink(path_in_dir("shared/out.c"));
    unlink(path_in_dir("shared/sub"));
    unlink(path_in_dir("sticky/out.c"));
    rmdir(path_in_dir("shared"));
    rmdir(path_in_dir("sticky"));
    rmdir(path_in_dir("real"));
}

/* A FIFO at the output's name in a directory others may write may be
 * another user's, reading the output or stalling the run: refused (it was
 * written to whoever read it). */
Test(embed, fifo_another_user_could_have_made_is_refused, .timeout = 30)
{
    write_file(path_in_dir("k.hip"), "xyz", 3);
    cr_assert_eq(mkdir(path_in_dir("shared"), 0700), 0);
    cr_assert_eq(chmod(path_in_dir("shared"), 0777), 0);
    cr_assert_eq(mkfifo(path_in_dir("shared/f.c"), 0666), 0);
    if (geteuid() == 0) cr_assert_eq(chown(path_in_dir("shared/f.c"), 65534, 65534), 0);
    int rc = 0;
    char *got = embed_into_fifo(path_in_dir("shared/f.c"), &rc, path_in_dir("shared/f.c"), path_in_dir("k.hip"));
    cr_expect_eq(rc, 2, "a FIFO in a 0777 directory was written: '%s'", got);
    cr_expect_str_eq(got, "", "the FIFO's reader got the output");
    assert_stderr_has("another user could have put it there");
    free(got);
    unlink(path_in_dir("shared/f.c"));
    rmdir(path_in_dir("shared"));
}

/* ------------------------------------- write errors and usage (issue 38) */

static bool have_dev_full(void) { return access("/dev/full", W_OK) == 0; }

/* Output lost to a full device is a failure with a message, whatever the
 * tool printed; so are unknown options and arguments. */
Test(embed, hipamp_info_write_errors_and_usage, .timeout = 120)
{
    cr_assert_eq(run("'%s' > /dev/null", HIPAMP_INFO_TOOL), 0, "%s", stderr_text());
    cr_assert_eq(run("'%s' --bogus > '%s'", HIPAMP_INFO_TOOL, path_in_dir("out.txt")), 2, "an unknown option accepted");
    assert_stderr_has("unknown option '--bogus'");
    assert_stderr_has("usage:");
    cr_assert_eq(run("'%s' extra > /dev/null", HIPAMP_INFO_TOOL), 2, "an argument accepted");
    assert_stderr_has("unexpected argument 'extra'");
    cr_assert_eq(run("'%s' --help > /dev/null", HIPAMP_INFO_TOOL), 0, "--help failed");
    if (!have_dev_full()) cr_skip_test("no /dev/full here for the write errors");
    cr_assert_eq(run("'%s' > /dev/full", HIPAMP_INFO_TOOL), 1, "a write error exited 0");
    assert_stderr_has("hipamp-info: write error: No space left on device");
    cr_assert_eq(run("'%s' --help > /dev/full", HIPAMP_INFO_TOOL), 1, "--help's write error exited 0");
    assert_stderr_has("hipamp-info: write error: No space left on device");
}

/* hipamp-info says an accelerator's pack is present only when a pack of
 * its exact target is: a pack whose name merely starts with it (sm_90a
 * beside a device's sm_90; here "<the CPU's target>-old") is not it; and
 * one the library would refuse as another user's to change is said to be
 * refused. */
Test(embed, hipamp_info_pack_present_means_the_exact_target, .timeout = 120)
{
    cr_assert_eq(run("'%s' > '%s'", HIPAMP_INFO_TOOL, path_in_dir("info.txt")), 0, "%s", stderr_text());
    char *info = read_file(path_in_dir("info.txt"), NULL);
    cr_assert_not_null(info);
    char target[128] = "";
    const char *at = strstr(info, "prebuilt_target");
    if (at) sscanf(at, "prebuilt_target %127s", target);
    free(info);
    if (strncmp(target, "cpu-", 4)) cr_skip_test("the CPU accelerator loads no pack here ('%s')", target);
    char pack[512];
    snprintf(pack, sizeof pack, "%s-old.hpk", target);
    write_file(path_in_dir(pack), "x", 1);
    cr_assert_eq(run("AMP_PREBUILT_DIR='%s' '%s' > '%s'", dir, HIPAMP_INFO_TOOL, path_in_dir("info.txt")), 0, "%s",
                 stderr_text());
    info = read_file(path_in_dir("info.txt"), NULL);
    cr_assert(info && strstr(info, "-old"), "the pack is not listed: %s", info);
    char line[512] = "";
    at = strstr(info, "prebuilt_target");
    if (at) sscanf(at, "%511[^\n]", line);
    cr_assert(strstr(line, "(no pack:"), "a pack of another name taken for %s's: %s", target, line);
    free(info);
    snprintf(pack, sizeof pack, "%s.hpk", target);
    write_file(path_in_dir(pack), "x", 1);
    cr_assert_eq(run("AMP_PREBUILT_DIR='%s' '%s' > '%s'", dir, HIPAMP_INFO_TOOL, path_in_dir("info.txt")), 0, "%s",
                 stderr_text());
    info = read_file(path_in_dir("info.txt"), NULL);
    at = info ? strstr(info, "prebuilt_target") : NULL;
    if (at) sscanf(at, "%511[^\n]", line);
    cr_assert(at && strstr(line, "(pack present:"), "%s's own pack not seen: %s", target, line);
    free(info);
    /* One every user may write is refused when opened: said so, not
     * "present". */
    cr_assert_eq(chmod(path_in_dir(pack), 0666), 0);
    cr_assert_eq(run("AMP_PREBUILT_DIR='%s' '%s' > '%s'", dir, HIPAMP_INFO_TOOL, path_in_dir("info.txt")), 0, "%s",
                 stderr_text());
    info = read_file(path_in_dir("info.txt"), NULL);
    at = info ? strstr(info, "prebuilt_target") : NULL;
    if (at) sscanf(at, "%511[^\n]", line);
    cr_assert(at && strstr(line, "(pack present but refused:") && strstr(line, "writable by every user"),
              "a pack every user may write was called present: %s", line);
    free(info);
}

Test(embed, hipamp_embed_and_compile_write_errors, .timeout = 120)
{
    if (!have_dev_full()) cr_skip_test("no /dev/full here");
    write_file(path_in_dir("k.hip"), "xyz", 3);
    cr_assert_eq(run("'%s' '%s' abc > /dev/full", HIPAMP_EMBED_TOOL, path_in_dir("k.hip")), 1);
    assert_stderr_has("hipamp-embed: write error: No space left on device");
    cr_assert_eq(run("'%s' --help > /dev/full", HIPAMP_EMBED_TOOL), 1);
    assert_stderr_has("hipamp-embed: write error: No space left on device");
    cr_assert_eq(run("'%s' -o - -H '%s' '%s' abc > /dev/full", HIPAMP_EMBED_TOOL, path_in_dir("k.h"),
                     path_in_dir("k.hip")),
                 1);
    cr_assert_eq(run("'%s' --help > /dev/full", HIPAMP_COMPILE_TOOL), 1);
    assert_stderr_has("hipamp-compile: write error: No space left on device");
    cr_assert_neq(run("'%s' --list-targets > /dev/full", HIPAMP_COMPILE_TOOL), 0);
    cr_assert_eq(run("'%s' --bogus", HIPAMP_COMPILE_TOOL), 2);
    assert_stderr_has("unknown option '--bogus'");
    /* A code object that does not fit where it goes: said, naming the
     * file (before, exit 1 and not a word). */
    const char *text = "AMP_KERNEL(k, amp::index<1> i, amp::array_view<int, 1> a) { a[i] = 1; }\n";
    write_file(path_in_dir("k.hip"), text, strlen(text));
    int rc = run("'%s' --target sm_90 -o /dev/full '%s'", HIPAMP_COMPILE_TOOL, path_in_dir("k.hip"));
    char *said = stderr_text();
    bool no_nvrtc = rc == 1 && strstr(said, "NVRTC");
    free(said);
    if (no_nvrtc) cr_skip_test("no NVRTC here");
    cr_assert_eq(rc, 1, "%s", stderr_text());
    assert_stderr_has("hipamp-compile: cannot write '/dev/full': No space left on device");
    cr_assert_eq(run("'%s' --target sm_90 -o - '%s' > /dev/full", HIPAMP_COMPILE_TOOL, path_in_dir("k.hip")), 1);
    assert_stderr_has("hipamp-compile: write error: No space left on device");
    cr_assert_eq(run("'%s' -o /dev/full '%s' abc", HIPAMP_EMBED_TOOL, path_in_dir("k.hip")), 1);
    assert_stderr_has("hipamp-embed: cannot write '/dev/full': No space left on device");
}

#ifdef HIPAMP_COMPILE_TOOL
/* hipamp-compile --target: a word not spelt as a target name is a usage
 * error (exit 2, the word named, nothing written); a well-formed name no
 * compiler here knows is the library's refusal (exit 1, UNSUPPORTED). */
Test(embed, hipamp_compile_target_names)
{
    const char *text = "AMP_KERNEL(k, amp::index<1> i, amp::array_view<int, 1> a) { a[i] = 1; }\n";
    write_file(path_in_dir("t.hip"), text, strlen(text));
    /* --list-targets stands alone: beside a compile's arguments it listed,
     * exited 0 and compiled nothing; beside an unknown option, too. */
    cr_assert_eq(run("'%s' --list-targets --bogus > /dev/null", HIPAMP_COMPILE_TOOL), 2);
    assert_stderr_has("--list-targets takes no other argument");
    cr_assert_eq(run("'%s' --target sm_90 -o '%s' '%s' --list-targets > /dev/null", HIPAMP_COMPILE_TOOL,
                     path_in_dir("t.co"), path_in_dir("t.hip")),
                 2);
    cr_assert_eq(access(path_in_dir("t.co"), F_OK), -1);
    static const char *const bad[] = {"bogus", "sm_", "sm_9x0", "sm_90ab", "gfx", "gfx-90a", "gfx90a:", "gfx90a:xnack",
                                      "gfx90a:+", "gfx90a--generic", "SM_90", "sm_90 ", "cpu"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        cr_assert_eq(run("'%s' --target '%s' -o '%s' '%s'", HIPAMP_COMPILE_TOOL, bad[i], path_in_dir("t.co"),
                         path_in_dir("t.hip")),
                     2, "--target '%s'", bad[i]);
        char want[96];
        snprintf(want, sizeof want, "'%s' is not a target name", bad[i]);
        assert_stderr_has(want);
        cr_assert(access(path_in_dir("t.co"), F_OK) != 0, "--target '%s' wrote a file", bad[i]);
    }
    /* Spelt as targets but known to no compiler: refused by the library. */
    static const char *const unknown[] = {"gfx9999", "gfx90a:bogus+", "gfx10-3-bogus"};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; ++i) {
        cr_assert_eq(run("'%s' --target=%s -o '%s' '%s'", HIPAMP_COMPILE_TOOL, unknown[i], path_in_dir("t.co"),
                         path_in_dir("t.hip")),
                     1, "--target=%s", unknown[i]);
        assert_stderr_has("AMP_ERROR_UNSUPPORTED");
        cr_assert(access(path_in_dir("t.co"), F_OK) != 0, "--target=%s wrote a file", unknown[i]);
    }
}
#endif

/* An LD_PRELOAD shim, built into so: it logs each fsync (of a file or a
 * directory) and rename to $SHIM_LOG, and fails fsync with EIO for the kind
 * $SHIM_FAIL_FSYNC names ("file" or "dir"). */
static void fsync_shim(char *so, size_t n)
{
    const char *text =
        "#define _GNU_SOURCE\n#include <dlfcn.h>\n#include <errno.h>\n#include <fcntl.h>\n#include <stdlib.h>\n"
        "#include <string.h>\n#include <sys/stat.h>\n#include <unistd.h>\n"
        "static void note(const char *w) { const char *l = getenv(\"SHIM_LOG\"); if (!l) return;\n"
        "  int fd = open(l, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);\n"
        "  if (fd >= 0) { (void)!write(fd, w, strlen(w)); close(fd); } }\n"
        "int fsync(int fd) { static int (*real)(int); if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, \"fsync\");\n"
        "  struct stat st; const char *k = fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) ? \"dir\" : \"file\";\n"
        "  note(k[0] == 'd' ? \"fsync-dir\\n\" : \"fsync-file\\n\");\n"
        "  const char *f = getenv(\"SHIM_FAIL_FSYNC\"); if (f && !strcmp(f, k)) { errno = EIO; return -1; }\n"
        "  return real(fd); }\n"
        "int renameat(int a, const char *b, int c, const char *d) { static int (*real)(int, const char *, int, const "
        "char *);\n  if (!real) real = (int (*)(int, const char *, int, const char *))dlsym(RTLD_NEXT, \"renameat\");\n"
        "  note(\"rename\\n\"); return real(a, b, c, d); }\n"
        "int rename(const char *a, const char *b) { static int (*real)(const char *, const char *);\n"
        "  if (!real) real = (int (*)(const char *, const char *))dlsym(RTLD_NEXT, \"rename\");\n"
        "  note(\"rename\\n\"); return real(a, b); }\n";
    char src[512], cmd[2048];
    snprintf(src, sizeof src, "%s/shim.c", dir);
    snprintf(so, n, "%s/shim.so", dir);
    write_file(src, text, strlen(text));
    const char *cc = getenv("CC") && *getenv("CC") ? getenv("CC") : "cc";
    snprintf(cmd, sizeof cmd, "%s -shared -fPIC -o '%s' '%s' -ldl", cc, so, src);
    cr_assert_eq(system(cmd), 0, "could not build the fsync shim: %s", cmd);
    unlink(src);
}

/* A file output reaches the disk before it is renamed over the old one,
 * and the rename after it (its directory synced): a crash could otherwise
 * leave an empty or partial file under the output's name. An fsync that
 * fails is reported naming the output, the old file kept. (ASan's runtime
 * would refuse another library ahead of it: the shim intercepts nothing of
 * its own, so the order is not checked.) */
Test(embed, file_outputs_are_synced_before_and_after_the_rename)
{
    char so[512], env[1200];
    fsync_shim(so, sizeof so);
    snprintf(env, sizeof env, "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 LD_PRELOAD='%s' "
             "SHIM_LOG='%s'", so, path_in_dir("log"));
    write_file(path_in_dir("k.hip"), "xyz", 3);
    cr_assert_eq(run("%s '%s' -o '%s' '%s' sym", env, HIPAMP_EMBED_TOOL, path_in_dir("k.c"), path_in_dir("k.hip")), 0,
                 "%s", stderr_text());
    char *log = read_file(path_in_dir("log"), NULL);
    cr_assert_str_eq(log ? log : "(none)", "fsync-file\nrename\nfsync-dir\n", "the output was not synced around "
                     "its rename");
    free(log);
    unlink(path_in_dir("log"));
    char *good = read_file(path_in_dir("k.c"), NULL);
    cr_assert_not_null(good);

    write_file(path_in_dir("k.hip"), "abc", 3);
    cr_assert_eq(run("SHIM_FAIL_FSYNC=file %s '%s' -o '%s' '%s' sym", env, HIPAMP_EMBED_TOOL, path_in_dir("k.c"),
                     path_in_dir("k.hip")),
                 1);
    char want[600];
    snprintf(want, sizeof want, "cannot write '%s' to disk (fsync of '%s/k.c.tmp.", path_in_dir("k.c"), dir);
    assert_stderr_has(want);
    assert_stderr_has("Input/output error");
    assert_file_is(path_in_dir("k.c"), good); /* the old file, and no temporary left */
    free(good);
    unlink(path_in_dir("log"));

    cr_assert_eq(run("SHIM_FAIL_FSYNC=dir %s '%s' -o '%s' '%s' sym", env, HIPAMP_EMBED_TOOL, path_in_dir("k.c"),
                     path_in_dir("k.hip")),
                 1);
    snprintf(want, sizeof want, "'%s' was written, but its directory could not be written to disk (fsync): "
             "Input/output error", path_in_dir("k.c"));
    assert_stderr_has(want);
    char *now = read_file(path_in_dir("k.c"), NULL);
    size_t n = 0;
    unsigned char *bytes = parse_array(now, "sym", &n);
    cr_assert(n == 4 && !memcmp(bytes, "abc", 4), "the new output is not in place");
    free(bytes);
    free(now);
    unlink(path_in_dir("log"));
    unlink(so);
    const char *only[] = {"k.hip", "k.c"};
    assert_dir_holds_only(only, 2);
}

/* With no standard output open (">&-"), a run whose outputs are all files
 * succeeds: it failed with "write error: Bad file descriptor" from closing
 * the descriptor that was never open, both files written. What was meant
 * for standard output is still a write error. */
Test(embed, closed_standard_output_fails_only_a_run_that_writes_to_it)
{
    write_file(path_in_dir("k.hip"), "xyz", 3);
    cr_assert_eq(run("'%s' -o '%s' -H '%s' '%s' sym >&-", HIPAMP_EMBED_TOOL, path_in_dir("k.c"), path_in_dir("k.h"),
                     path_in_dir("k.hip")),
                 0, "%s", stderr_text());
    char *src = read_file(path_in_dir("k.c"), NULL), *hdr = read_file(path_in_dir("k.h"), NULL);
    cr_assert(src && strstr(src, "const char sym[]") && hdr && strstr(hdr, "extern const char sym[];"),
              "the outputs were not written");
    free(src);
    free(hdr);
    cr_assert_eq(run("'%s' -o - '%s' sym >&-", HIPAMP_EMBED_TOOL, path_in_dir("k.hip")), 1);
    assert_stderr_has("hipamp-embed: write error: Bad file descriptor");
    cr_assert_eq(run("'%s' --help >&-", HIPAMP_EMBED_TOOL), 1);
    assert_stderr_has("hipamp-embed: write error: Bad file descriptor");
    unlink(path_in_dir("k.c"));
    unlink(path_in_dir("k.h"));
}

/* A NUL byte in the input is refused, by the tool and by CMake's
 * hipamp_embed() alike (amp_program_build_file refuses it too): the array
 * is a C string that would end there. */
Test(embed, nul_byte_in_input_is_refused)
{
    write_file(path_in_dir("n.hip"), "ab\0cd", 5);
    cr_assert_eq(run("'%s' -o '%s' '%s' sym", HIPAMP_EMBED_TOOL, path_in_dir("n.c"), path_in_dir("n.hip")), 1);
    assert_stderr_has("NUL byte (at offset 2)");
#ifdef HIPAMP_EMBED_SCRIPT
    cr_assert_neq(run("'%s' -DIN='%s' -DOUT='%s' -DSYMBOL=sym -P '%s'", HIPAMP_CMAKE_COMMAND, path_in_dir("n.hip"),
                      path_in_dir("cmake.c"), HIPAMP_EMBED_SCRIPT),
                  0, "CMake's hipamp_embed() embedded a NUL byte");
#endif
    const char *only[] = {"n.hip"};
    assert_dir_holds_only(only, 1);
}

/* A source larger than amp_program_build_file takes (64 MiB) is refused
 * from its size, before it is read (a sparse file: nothing is written). */
Test(embed, a_source_over_the_limit_is_refused_by_its_size)
{
    int fd = open(path_in_dir("huge.hip"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    cr_assert_geq(fd, 0);
    cr_assert_eq(ftruncate(fd, (off_t)(65u << 20)), 0);
    close(fd);
    cr_assert_eq(run("'%s' -o '%s' '%s' sym", HIPAMP_EMBED_TOOL, path_in_dir("huge.c"), path_in_dir("huge.hip")), 1);
    assert_stderr_has("is larger than a kernel source may be (64 MiB)");
    unlink(path_in_dir("huge.hip"));
}

#ifdef HIPAMP_COMPILE_TOOL
/* hipamp-compile: "x.co" as input would be its own default output; -o
 * through a symbolic link of another user's (planted at the output's name,
 * as root) is refused, the link and what it leads to left alone; one's own
 * link is followed (the file behind it replaced, the link kept); a device
 * is written in place; a NUL byte is refused; with standard output the
 * code object (-o and a link to it), the kernel table goes to stderr. */
Test(embed, hipamp_compile_output_refusals, .timeout = 300)
{
    const char *text = "AMP_KERNEL(k, amp::index<1> i, amp::array_view<int, 1> a) { a[i] = 1; }\n";
    write_file(path_in_dir("x.co"), text, strlen(text));
    cr_assert_eq(run("'%s' --target sm_90 '%s'", HIPAMP_COMPILE_TOOL, path_in_dir("x.co")), 2);
    assert_stderr_has("is the input");
    assert_file_is(path_in_dir("x.co"), text);
    const char *dev = private_device();
    if (dev) {
        cr_assert_eq(run("'%s' --target sm_90 -o '%s' '%s'", HIPAMP_COMPILE_TOOL, dev, path_in_dir("x.co")), 1);
        assert_still_device(dev);
    }
    write_file(path_in_dir("n.hip"), "a\0b", 3);
    cr_assert_eq(run("'%s' --target sm_90 -o '%s' '%s'", HIPAMP_COMPILE_TOOL, path_in_dir("n.co"), path_in_dir("n.hip")), 1);
    assert_stderr_has("NUL byte");
    /* Session 105's: an OUT.co in a directory that does not exist is said
     * before the compile (a kernel that would not compile shows it: no
     * compiler's message), not after a long one. */
    write_file(path_in_dir("bad.hip"), "AMP_KERNEL(k, amp::index<1> i) { not C++ }\n", 43);
    cr_assert_eq(run("'%s' --target sm_90 -o '%s' '%s'", HIPAMP_COMPILE_TOOL, path_in_dir("nodir/bad.co"),
                     path_in_dir("bad.hip")),
                 1);
    assert_stderr_has("cannot write");
    assert_stderr_has("nodir/bad.co': No such file or directory");
    char *why = stderr_text();
    cr_assert(!strstr(why, "AMP_ERROR"), "it compiled first: %s", why);
    free(why);
    unlink(path_in_dir("bad.hip"));

    write_file(path_in_dir("k.hip"), text, strlen(text));
    write_file(path_in_dir("victim"), "precious", 8);
    cr_assert_eq(symlink(path_in_dir("victim"), path_in_dir("out.co")), 0);
    struct stat st;
    if (geteuid() == 0) {
        cr_assert_eq(lchown(path_in_dir("out.co"), 65534, 65534), 0);
        cr_assert_eq(run("'%s' --target sm_90 -o '%s' '%s' > /dev/null", HIPAMP_COMPILE_TOOL, path_in_dir("out.co"),
                         path_in_dir("k.hip")),
                     2);
        assert_stderr_has("a symbolic link of another user (uid 65534)");
        assert_file_is(path_in_dir("victim"), "precious");
        cr_assert_eq(lstat(path_in_dir("out.co"), &st), 0);
        cr_assert(S_ISLNK(st.st_mode), "another user's link was replaced");
        cr_assert_eq(lchown(path_in_dir("out.co"), 0, 0), 0);
    }
    int rc = run("'%s' --target sm_90 -o '%s' '%s' > '%s'", HIPAMP_COMPILE_TOOL, path_in_dir("out.co"),
                 path_in_dir("k.hip"), path_in_dir("table.txt"));
    char *err = stderr_text();
    if (rc == 1 && strstr(err, "AMP_ERROR_UNSUPPORTED")) {
        free(err);
        cr_skip_test("no NVRTC here for the symbolic link cases");
    }
    cr_assert_eq(rc, 0, "hipamp-compile: %s", err);
    free(err);
    cr_assert_eq(lstat(path_in_dir("out.co"), &st), 0);
    cr_assert(S_ISLNK(st.st_mode), "one's own link was replaced");
    size_t n = 0;
    char *co = read_file(path_in_dir("victim"), &n);
    cr_assert(co && n > 4 && !memcmp(co, "\x7f" "ELF", 4), "the file behind the link holds no code object");
    free(co);
    char *table = read_file(path_in_dir("table.txt"), NULL);
    cr_assert(table && strstr(table, "bytes for sm_90"), "no kernel table on standard output: '%s'", table);
    free(table);
    /* Standard output through a link of its own: the code object there,
     * the table on stderr. */
    cr_assert_eq(symlink("/proc/self/fd/1", path_in_dir("stdout")), 0);
    /* (run's 2> applies to cat: the tool's goes to a file of its own.) */
    cr_assert_eq(run("'%s' --target sm_90 -o '%s' '%s' 2>'%s' | cat > '%s'", HIPAMP_COMPILE_TOOL,
                     path_in_dir("stdout"), path_in_dir("k.hip"), path_in_dir("tool-err.txt"), path_in_dir("piped.co")),
                 0, "%s", read_file(path_in_dir("tool-err.txt"), NULL));
    co = read_file(path_in_dir("piped.co"), &n);
    cr_assert(co && n > 4 && !memcmp(co, "\x7f" "ELF", 4), "no code object on standard output");
    for (size_t i = 0; i + 15 <= n; ++i)
        cr_assert(memcmp(co + i, "bytes for sm_90", 15) != 0, "the kernel table went into the code object");
    free(co);
    char *tool_err = read_file(path_in_dir("tool-err.txt"), NULL);
    cr_assert(tool_err && strstr(tool_err, "bytes for sm_90"), "no kernel table on stderr: '%s'", tool_err);
    free(tool_err);
    unlink(path_in_dir("tool-err.txt"));
    cr_assert_eq(lstat(path_in_dir("stdout"), &st), 0);
    cr_assert(S_ISLNK(st.st_mode), "the link to standard output was replaced");
    unlink(path_in_dir("stdout"));
    /* "-o /dev/stdout >> log": the code object appended to the log (not
     * the log replaced, the table then lost to its unlinked inode), the
     * table on stderr. */
    write_file(path_in_dir("build.log"), "prior\n", 6);
    cr_assert_eq(run("'%s' --target sm_90 -o /dev/stdout '%s' >> '%s'", HIPAMP_COMPILE_TOOL, path_in_dir("k.hip"),
                     path_in_dir("build.log")),
                 0, "%s", stderr_text());
    co = read_file(path_in_dir("build.log"), &n);
    cr_assert(co && n > 10 && !memcmp(co, "prior\n\x7f" "ELF", 10), "the log lost what it held or got no code object");
    free(co);
    assert_stderr_has("bytes for sm_90");
    unlink(path_in_dir("build.log"));
    unlink(path_in_dir("piped.co"));
    unlink(path_in_dir("table.txt"));
    const char *only[] = {"x.co", "n.hip", "k.hip", "victim", "out.co"};
    assert_dir_holds_only(only, 5);
}

/* An empty output name is refused by name, before anything is compiled or
 * written: it was walked as the working directory, and hipamp-compile said
 * "is a directory" (naming neither the empty value nor the mistake). */
Test(embed, empty_output_names_are_refused)
{
    const char *text = "AMP_KERNEL(k, amp::index<1> i, amp::array_view<int, 1> a) { a[i] = 1; }\n";
    write_file(path_in_dir("k.hip"), text, strlen(text));
    cr_assert_eq(run("'%s' --target sm_90 -o '' '%s'", HIPAMP_COMPILE_TOOL, path_in_dir("k.hip")), 2);
    char *err = stderr_text();
    cr_expect_not_null(strstr(err, "'' is an empty output name"), "message: '%s'", err);
    cr_expect_null(strstr(err, "directory"), "message: '%s'", err);
    free(err);
    cr_assert_eq(run("'%s' -o '' '%s' sym", HIPAMP_EMBED_TOOL, path_in_dir("k.hip")), 2);
    assert_stderr_has("-o '' is an empty file name");
    cr_assert_eq(run("'%s' -o - -H '' '%s' sym > /dev/null", HIPAMP_EMBED_TOOL, path_in_dir("k.hip")), 2);
    assert_stderr_has("-H '' is an empty file name");
    const char *only[] = {"k.hip"};
    assert_dir_holds_only(only, 1);
}

/* A kernel file whose name holds a '"' or a backslash compiles, and its
 * diagnostics name it (the library's #line marker escapes them: the tool's
 * own, unescaped, ended the string literal or was a bad escape, and every
 * such file failed to compile). */
Test(embed, hipamp_compile_file_names_with_quotes_and_backslashes, .timeout = 300)
{
    const char *good = "AMP_KERNEL(k, amp::index<1> i, amp::array_view<int, 1> a) { a[i] = 1; }\n";
    const char *bad = "AMP_KERNEL(k, amp::index<1> i, amp::array_view<int, 1> a) { a[i] = 1 }\n";
    write_file(path_in_dir("q\"k\\x.hip"), good, strlen(good));
    int rc = run("'%s' --target sm_90 -o '%s' '%s' > /dev/null", HIPAMP_COMPILE_TOOL, path_in_dir("q.co"),
                 path_in_dir("q\"k\\x.hip"));
    char *err = stderr_text();
    if (rc == 1 && strstr(err, "AMP_ERROR_UNSUPPORTED")) {
        free(err);
        cr_skip_test("no NVRTC here");
    }
    cr_assert_eq(rc, 0, "a name with a quote and a backslash did not compile: %s", err);
    free(err);
    write_file(path_in_dir("b\"a\\d.hip"), bad, strlen(bad));
    cr_assert_eq(run("'%s' --target sm_90 -o '%s' '%s' > /dev/null", HIPAMP_COMPILE_TOOL, path_in_dir("b.co"),
                     path_in_dir("b\"a\\d.hip")),
                 1);
    assert_stderr_has("b\"a\\d.hip:1: error");
    unlink(path_in_dir("q.co"));
    unlink(path_in_dir("q\"k\\x.hip"));
    unlink(path_in_dir("b\"a\\d.hip"));
}

/* hipamp-compile --target finds quoted includes beside the file as
 * amp_program_build_file does: in a directory whose name holds a space
 * (the tool's -iquote was dropped there, and the include not found), and
 * not where another user could have put the header (another user's header
 * beside the user's file in a sticky directory every user may write: the
 * tool's -iquote made it a directory of the user's choosing, and the
 * planted header was compiled in; root only, to own a file as another). */
Test(embed, hipamp_compile_finds_includes_beside_the_file_under_its_rule, .timeout = 300)
{
    char dir[PATH_MAX], open_dir[PATH_MAX], path[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path_in_dir("with space"));
    snprintf(open_dir, sizeof open_dir, "%s", path_in_dir("open"));
    cr_assert_eq(mkdir(dir, 0700), 0);
    cr_assert_eq(mkdir(open_dir, 0700), 0);
    cr_assert_eq(chmod(open_dir, 01777), 0);
    const char *inc = "#define V 3\n", *k = "#include \"inc.h\"\nAMP_KERNEL(k, amp::index<1> i, amp::array_view<int, 1> a) { a[i] = V; }\n";
    snprintf(path, sizeof path, "%s/inc.h", dir);
    write_file(path, inc, strlen(inc));
    snprintf(path, sizeof path, "%s/my k.hip", dir);
    write_file(path, k, strlen(k));
    int rc = run("'%s' --target sm_90 -o '%s' '%s' > /dev/null", HIPAMP_COMPILE_TOOL, path_in_dir("s.co"), path);
    char *err = stderr_text();
    if (rc == 1 && strstr(err, "AMP_ERROR_UNSUPPORTED")) {
        free(err);
        cr_skip_test("no NVRTC here");
    }
    cr_assert_eq(rc, 0, "an include beside a file in a directory with a space was not found: %s", err);
    free(err);
    snprintf(path, sizeof path, "%s/inc.h", open_dir);
    write_file(path, inc, strlen(inc));
    bool planted = geteuid() == 0 && chown(path, 65534, 65534) == 0;
    snprintf(path, sizeof path, "%s/k.hip", open_dir);
    write_file(path, k, strlen(k));
    if (planted) cr_assert_eq(run("'%s' --target sm_90 -o '%s' '%s' > /dev/null", HIPAMP_COMPILE_TOOL, path_in_dir("o.co"), path),
                 1);
    if (planted) {
        assert_stderr_has("#include \"inc.h\" is refused: another user could have put it there");
        cr_assert_eq(access(path_in_dir("o.co"), F_OK), -1, "a code object was written");
    } else {
        cr_log_warn("not root: the planted header's half is not run (a file of another user's cannot be made)");
    }
    unlink(path_in_dir("s.co"));
    snprintf(path, sizeof path, "%s/inc.h", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/my k.hip", dir);
    unlink(path);
    rmdir(dir);
    snprintf(path, sizeof path, "%s/inc.h", open_dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/k.hip", open_dir);
    unlink(path);
    rmdir(open_dir);
}
#endif
