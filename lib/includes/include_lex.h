/* include_lex.h — finding the #include directives (and __has_include
 * probes) of a text as the compiler's preprocessor reads them
 * (include_lex.c), for the include scan (include_scan.c). */
#ifndef AMP_INCLUDE_LEX_H
#define AMP_INCLUDE_LEX_H

#include <stdbool.h>
#include <stddef.h>

/* One include directive found in a text. */
typedef struct amp__directive {
    const char *name; /* inside the text (not NUL-terminated) */
    size_t len;
    bool angled;
    bool computed;
    bool next; /* #include_next, __has_include_next */
    const char *unsure; /* with computed: why the text cannot be read as every compiler reads it */
    int line;
} amp__directive;

/* The next #include, #include_next or #import directive (or
 * __has_include probe) at or after *pos of t (n bytes), *line counting the
 * lines of t up to it (start both at 0 and 1); false at the end. */
bool amp__next_include(const char *t, size_t n, size_t *pos, int *line, amp__directive *out);

#endif /* AMP_INCLUDE_LEX_H */
