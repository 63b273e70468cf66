/* hipamp_embed.c — hipamp-embed: writes a kernel file (.hip) as a NUL-terminated C array `const char SYMBOL[]` (and optionally a header declaring it), what CMake's hipamp_embed() does, for Makefile and pkg-config builds. */
#include "tool_output.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG "hipamp-embed"

static void usage(FILE *to)
{
    fprintf(to,
            "usage: " PROG " [-o OUT.c] [-H OUT.h] INPUT SYMBOL\n"
            "Writes the bytes of INPUT (a kernel file) as a NUL-terminated C array\n"
            "  const char SYMBOL[] = {...};\n"
            "into OUT.c (standard output without -o, or with -o -), byte for byte what\n"
            "CMake's hipamp_embed() generates, and with -H a header declaring\n"
            "  extern const char SYMBOL[];\n"
            "Pass SYMBOL to amp_program_build as the kernel source. Files are written\n"
            "whole or not at all (a temporary file renamed into place; through a\n"
            "symbolic link, the file it leads to); a character device or a FIFO\n"
            "(/dev/stdout to a pipe) is written in place. Refused: an INPUT with a\n"
            "NUL byte; an output that is the input or the other output, a directory,\n"
            "or a symbolic link of another user's.\n"
            "Exit status: 0 written, 1 an input or output error, 2 a usage error\n"
            "(the refused outputs included).\n");
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

/* The header declares SYMBOL for C++ too (extern "C"), and C23 made some
 * of these keywords of C: a symbol named like one of them compiles in C11
 * but breaks every C++ (or C23) file that includes the header. */
static bool is_cxx_keyword(const char *s)
{
    static const char *const kw[] = {
        "alignas", "alignof", "and", "and_eq", "asm", "bitand", "bitor", "bool", "catch", "char8_t", "char16_t",
        "char32_t", "class", "compl", "concept", "consteval", "constexpr", "constinit", "const_cast", "co_await",
        "co_return", "co_yield", "decltype", "delete", "dynamic_cast", "explicit", "export", "false", "friend",
        "mutable", "namespace", "new", "noexcept", "not", "not_eq", "nullptr", "operator", "or", "or_eq", "private",
        "protected", "public", "reinterpret_cast", "requires", "static_assert", "static_cast", "template", "this",
        "thread_local", "throw", "true", "try", "typeid", "typename", "typeof", "typeof_unqual", "using", "virtual",
        "wchar_t", "xor", "xor_eq", "_BitInt", "_Decimal32", "_Decimal64", "_Decimal128"};
    for (size_t i = 0; i < sizeof kw / sizeof kw[0]; ++i)
        if (strcmp(s, kw[i]) == 0) return true;
    return false;
}

/* A C identifier: [A-Za-z_][A-Za-z0-9_]*, not a keyword, and not one the
 * C and C++ standards reserve for the implementation (two underscores
 * first, or an underscore and a capital: __func__, _Pragma, __LINE__ and
 * __STDC__ made output that does not compile). ASCII tests only, whatever
 * the locale. */
static bool is_identifier(const char *s)
{
    if (!*s || (s[0] == '_' && (s[1] == '_' || (s[1] >= 'A' && s[1] <= 'Z')))) return false;
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

/* The array, in the exact layout of cmake/HipampEmbedScript.cmake: 16
 * "'\xhh'," per line, then the terminating 0x00. Character constants, not
 * integers: a byte over 0x7f as the integer 0xhh overflows a signed char
 * (-Woverflow in C, a narrowing error in C++), where '\xhh' is the char
 * itself in both. */
static bool write_source(const char *text, size_t n, const char *in_path, const char *symbol, FILE *out)
{
    static const char hex[] = "0123456789abcdef";
    fputs("/* generated from ", out);
    put_comment_path(out, in_path);
    fprintf(out, "; do not edit */\nconst char %s[] = {\n", symbol);
    for (size_t i = 0; i < n; ++i) {
        unsigned char c = (unsigned char)text[i];
        char item[8] = {'\'', '\\', 'x', hex[c >> 4], hex[c & 15], '\'', ',', '\0'};
        fputs(item, out);
        if ((i + 1) % 16 == 0) fputc('\n', out);
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
        /* The symbol as it is: upper-cased, kern and KERN shared a guard,
         * and the second header included declared nothing. */
        fprintf(out, "%s HIPAMP_EMBED_%s_H\n", pass ? "#define" : "#ifndef", symbol);
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
    tool_start();
    const char *out_c = NULL, *out_h = NULL, *pos[2] = {NULL, NULL};
    size_t npos = 0;
    bool options_done = false;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (!options_done && (!strcmp(a, "-h") || !strcmp(a, "--help"))) {
            usage(stdout);
            return tool_stdout_close(PROG) ? 0 : 1;
        } else if (!options_done && (!strcmp(a, "-o") || !strcmp(a, "-H"))) {
            if (i + 1 >= argc) {
                fprintf(stderr, PROG ": %s needs a file name\n", a);
                return 2;
            }
            if (!*argv[i + 1]) {
                fprintf(stderr, PROG ": %s '' is an empty file name (give a file name, or - for standard output)\n", a);
                return 2;
            }
            const char **slot = a[1] == 'o' ? &out_c : &out_h;
            if (*slot) {
                fprintf(stderr, PROG ": %s given twice ('%s', then '%s')\n", a, *slot, argv[i + 1]);
                return 2;
            }
            *slot = argv[++i];
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
        fprintf(stderr, PROG ": '%s' is not a C identifier of yours (letters, digits and _, not starting with a "
                        "digit, not a keyword, not starting with __ or _ and a capital: those are the compiler's)\n",
                symbol);
        return 2;
    }
    if (is_cxx_keyword(symbol)) {
        fprintf(stderr, PROG ": '%s' is a keyword of C++ or C23: the header's declaration would not compile there\n",
                symbol);
        return 2;
    }

    /* Nothing is written over the input, through a device, or twice to one
     * place (-o and -H naming one file). */
    const char *inputs[] = {in_path}, *c_dest = out_c ? out_c : "-";
    if (out_h && !strcmp(c_dest, "-") && !strcmp(out_h, "-")) {
        fprintf(stderr, PROG ": the source and the header cannot both go to standard output\n");
        return 2;
    }
    if (!tool_out_allowed(PROG, c_dest, inputs, 1, NULL, 0) ||
        (out_h && !tool_out_allowed(PROG, out_h, inputs, 1, &c_dest, 1)))
        return 2;

    int rc = 1;
    size_t size = 0;
    char *text = tool_read_source(PROG, in_path, &size);
    tool_out c = {0}, h = {0};
    /* Both outputs opened before either is put in place, so a header that
     * cannot be made leaves no source behind (one whose write or rename
     * fails after the source's rename still can). Each written, then closed
     * at once, so a failed write's errno names its own cause. */
    if (!text || !tool_out_open(&c, PROG, c_dest)) goto fail;
    if (out_h && !tool_out_open(&h, PROG, out_h)) {
        (void)tool_out_close(&c, false);
        goto fail;
    }
    if (!tool_out_close(&c, write_source(text, size, in_path, symbol, c.f))) {
        if (out_h) (void)tool_out_close(&h, false);
        goto fail;
    }
    if (out_h && !tool_out_close(&h, write_header(in_path, symbol, h.f))) goto fail;
    rc = 0;
    /* Standard output may have held either file. */
    if (!tool_stdout_close(PROG)) rc = 1;
fail:
    free(text);
    return rc;
}
