/* hipamp_embed.c — hipamp-embed: writes a kernel file (.hip) as a NUL-terminated C array `const char SYMBOL[]` (and optionally a header declaring it), what CMake's hipamp_embed() does, for Makefile and pkg-config builds. */
#define _POSIX_C_SOURCE 200809L /* mkstemp, fdopen, fchmod */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PROG "hipamp-embed"

static void usage(FILE *to)
{
    fprintf(to,
            "usage: " PROG " [-o OUT.c] [-H OUT.h] INPUT SYMBOL\n"
            "Writes the bytes of INPUT (a kernel file) as a NUL-terminated C array\n"
            "  const char SYMBOL[] = {...};\n"
            "into OUT.c (standard output without -o), byte for byte what CMake's\n"
            "hipamp_embed() generates, and with -H a header declaring\n"
            "  extern const char SYMBOL[];\n"
            "Pass SYMBOL to amp_program_build as the kernel source. Files are written\n"
            "whole or not at all (a temporary file renamed into place).\n"
            "Exit status: 0 written, 1 an input or output error, 2 a usage error.\n");
}

/* C11 keywords cannot name an array. */
static bool is_keyword(const char *s)
{
    static const char *const kw[] = {
        "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum",
        "extern", "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return",
        "short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void",
        "volatile", "while", "_Alignas", "_Alignof", "_Atomic", "_Bool", "_Complex", "_Generic",
        "_Imaginary", "_Noreturn", "_Static_assert", "_Thread_local"};
    for (size_t i = 0; i < sizeof kw / sizeof kw[0]; ++i)
        if (strcmp(s, kw[i]) == 0) return true;
    return false;
}

/* A C identifier: [A-Za-z_][A-Za-z0-9_]*, not a keyword. ASCII tests only,
 * whatever the locale. */
static bool is_identifier(const char *s)
{
    if (!*s) return false;
    for (const char *p = s; *p; ++p) {
        char c = *p;
        bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
        bool digit = c >= '0' && c <= '9';
        if (!alpha && !(digit && p != s)) return false;
    }
    return !is_keyword(s);
}

/* The path as it may appear inside a C comment: "*" followed by "/" and
 * line breaks would end or break the comment, so they are written as "?". */
static void put_comment_path(FILE *out, const char *path)
{
    for (const char *p = path; *p; ++p) {
        bool ends_comment = p[0] == '*' && p[1] == '/';
        fputc(ends_comment || *p == '\n' || *p == '\r' ? '?' : *p, out);
    }
}

/* Output file: either stdout or a temporary file in the destination's
 * directory, renamed over the destination once complete. */
typedef struct sink {
    FILE *f;
    const char *dest; /* NULL: stdout */
    char *tmp;        /* malloc'ed temporary path, or NULL */
} sink;

static bool sink_open(sink *s, const char *dest)
{
    s->f = NULL;
    s->dest = dest;
    s->tmp = NULL;
    if (!dest) {
        s->f = stdout;
        return true;
    }
    size_t n = strlen(dest) + sizeof ".tmp.XXXXXX";
    int fd = -1;
    if (!(s->tmp = malloc(n))) {
        fprintf(stderr, PROG ": out of memory\n");
        goto fail;
    }
    snprintf(s->tmp, n, "%s.tmp.XXXXXX", dest);
    if ((fd = mkstemp(s->tmp)) < 0) {
        fprintf(stderr, PROG ": cannot create '%s': %s\n", s->tmp, strerror(errno));
        goto fail;
    }
    /* mkstemp makes the file private (0600); give it the mode any new file
     * of this user would have. */
    mode_t mask = umask(0);
    umask(mask);
    (void)fchmod(fd, 0666 & ~mask);
    if (!(s->f = fdopen(fd, "w"))) {
        fprintf(stderr, PROG ": cannot write '%s': %s\n", s->tmp, strerror(errno));
        close(fd);
        unlink(s->tmp);
        goto fail;
    }
    return true;
fail:
    free(s->tmp);
    s->tmp = NULL;
    return false;
}

/* ok: everything was written; then flush, close and rename (any failure of
 * those is reported). Not ok: the temporary file is removed. */
static bool sink_close(sink *s, bool ok)
{
    if (!s->dest) {
        if (ok && fflush(stdout) != 0) {
            fprintf(stderr, PROG ": cannot write to standard output: %s\n", strerror(errno));
            ok = false;
        }
        return ok;
    }
    if (s->f) {
        bool err = ferror(s->f) != 0;
        if (fclose(s->f) != 0 || err) {
            if (ok) fprintf(stderr, PROG ": cannot write '%s': %s\n", s->tmp, strerror(errno ? errno : EIO));
            ok = false;
        }
        s->f = NULL;
    }
    if (ok && rename(s->tmp, s->dest) != 0) {
        fprintf(stderr, PROG ": cannot rename '%s' to '%s': %s\n", s->tmp, s->dest, strerror(errno));
        ok = false;
    }
    if (!ok) unlink(s->tmp);
    free(s->tmp);
    s->tmp = NULL;
    return ok;
}

/* The array, in the exact layout of cmake/HipampEmbedScript.cmake: 16
 * "0xhh," per line, then the terminating 0x00. */
static bool write_source(FILE *in, const char *in_path, const char *symbol, FILE *out)
{
    static const char hex[] = "0123456789abcdef";
    unsigned char buf[65536];
    unsigned long long count = 0;
    size_t n;
    fputs("/* generated from ", out);
    put_comment_path(out, in_path);
    fprintf(out, "; do not edit */\nconst char %s[] = {\n", symbol);
    while ((n = fread(buf, 1, sizeof buf, in)) > 0) {
        for (size_t i = 0; i < n; ++i) {
            char item[6] = {'0', 'x', hex[buf[i] >> 4], hex[buf[i] & 15], ',', '\0'};
            fputs(item, out);
            if (++count % 16 == 0) fputc('\n', out);
        }
    }
    if (ferror(in)) {
        fprintf(stderr, PROG ": cannot read '%s': %s\n", in_path, strerror(errno ? errno : EIO));
        return false;
    }
    fputs("0x00};\n", out);
    return ferror(out) == 0;
}

static bool write_header(const char *in_path, const char *symbol, FILE *out)
{
    fputs("/* generated from ", out);
    put_comment_path(out, in_path);
    fputs(" by " PROG "; do not edit */\n", out);
    for (int pass = 0; pass < 2; ++pass) {
        fputs(pass ? "#define HIPAMP_EMBED_" : "#ifndef HIPAMP_EMBED_", out);
        for (const char *p = symbol; *p; ++p) fputc(*p >= 'a' && *p <= 'z' ? *p - 'a' + 'A' : *p, out);
        fputs("_H\n", out);
    }
    fprintf(out,
            "\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
            "/* The file's bytes, NUL-terminated: a kernel source for amp_program_build. */\n"
            "extern const char %s[];\n\n#ifdef __cplusplus\n}\n#endif\n\n#endif\n",
            symbol);
    return ferror(out) == 0;
}

int main(int argc, char **argv)
{
    const char *out_c = NULL, *out_h = NULL, *pos[2] = {NULL, NULL};
    size_t npos = 0;
    bool options_done = false;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (!options_done && (!strcmp(a, "-h") || !strcmp(a, "--help"))) {
            usage(stdout);
            return 0;
        } else if (!options_done && (!strcmp(a, "-o") || !strcmp(a, "-H"))) {
            if (i + 1 >= argc || !*argv[i + 1]) {
                fprintf(stderr, PROG ": %s needs a file name\n", a);
                return 2;
            }
            *(a[1] == 'o' ? &out_c : &out_h) = argv[++i];
        } else if (!options_done && !strcmp(a, "--")) {
            options_done = true;
        } else if (!options_done && a[0] == '-' && a[1]) {
            fprintf(stderr, PROG ": unknown option '%s' (see --help)\n", a);
            return 2;
        } else if (npos < 2) {
            pos[npos++] = a;
        } else {
            fprintf(stderr, PROG ": unexpected argument '%s' (see --help)\n", a);
            return 2;
        }
    }
    if (npos != 2) {
        usage(stderr);
        return 2;
    }
    const char *in_path = pos[0], *symbol = pos[1];
    if (!is_identifier(symbol)) {
        fprintf(stderr, PROG ": '%s' is not a C identifier (letters, digits and _, not starting with a digit, "
                        "not a keyword)\n", symbol);
        return 2;
    }

    int rc = 1;
    FILE *in = NULL;
    sink c = {0}, h = {0};
    bool c_open = false, h_open = false;
    if (!(in = fopen(in_path, "rb"))) {
        fprintf(stderr, PROG ": cannot open '%s': %s\n", in_path, strerror(errno));
        goto fail;
    }
    if (!(c_open = sink_open(&c, out_c))) goto fail;
    bool ok = write_source(in, in_path, symbol, c.f);
    c_open = false;
    if (!sink_close(&c, ok)) goto fail;
    if (out_h) {
        if (!(h_open = sink_open(&h, out_h))) goto fail;
        ok = write_header(in_path, symbol, h.f);
        h_open = false;
        if (!sink_close(&h, ok)) goto fail;
    }
    rc = 0;
fail:
    if (c_open) sink_close(&c, false);
    if (h_open) sink_close(&h, false);
    if (in) fclose(in);
    return rc;
}
