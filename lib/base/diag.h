/* diag.h — which line of a compiler's log is its first error: GCC's, clang's and NVRTC's diagnostic forms, shared by the CPU accelerator's build (the loop version that failed) and the algorithms' messages (the user string the error is in). */
#ifndef AMP_DIAG_H
#define AMP_DIAG_H

#include <stdbool.h>
#include <stddef.h>

/* Whether a log line of len bytes is an error diagnostic: "error:" or
 * "fatal error:" at its start, or after its location and ": " — a file's
 * "f:1:2", "f:1", NVRTC's "f(1)", or a program's name without spaces
 * ("g++", "cc1plus", "collect2": letters, digits and ._-+/). The first location in the line decides:
 * a warning whose text says ": error: " is no error, nor is a line that
 * merely holds the word (a kernel or file named error_sum). */
bool amp__diag_error_line(const char *line, size_t len);

/* The first error line of a log (its length in *len, no newline), or NULL. */
const char *amp__diag_first_error(const char *log, size_t *len);

#endif
