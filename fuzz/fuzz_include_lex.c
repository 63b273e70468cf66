/* fuzz_include_lex.c — libFuzzer harness for the include scan's lexer (lib/includes/include_lex.c): any bytes, NULs and lone carriage returns included (a header is read whole, as it is), through amp__next_include to its end; AddressSanitizer catches a read outside the text, libFuzzer's -timeout a lexer that does not end, and each directive is checked: found past the one before, its name inside the text on one line, its line no earlier than the last and no later than the text's lines, a report the scan cannot follow (computed) without a name. */
#include "includes/include_lex.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *t = malloc(size ? size : 1);
    if (!t) return 0;
    memcpy(t, data, size);
    int lines = 1;
    for (size_t i = 0; i < size; ++i) lines += t[i] == '\n' || (t[i] == '\r' && (i + 1 == size || t[i + 1] != '\n'));
    size_t pos = 0, last = 0;
    int line = 1, last_line = 1;
    amp__directive d;
    while (amp__next_include(t, size, &pos, &line, &d)) {
        if (pos > size || (pos <= last && last)) abort(); /* each call moves on */
        if (d.line < last_line || d.line > lines || line > lines) abort();
        if (d.computed) {
            if (d.name) abort();
        } else {
            if (!d.name || d.name < t || d.name + d.len > t + size || d.name + d.len > t + pos) abort();
            if (memchr(d.name, '\n', d.len)) abort();
        }
        last = pos ? pos : 1;
        last_line = d.line;
    }
    if (pos != size) abort();
    free(t);
    return 0;
}
