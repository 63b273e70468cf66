/* tool_output.h — what hipamp-embed, hipamp-compile and hipamp-info share
 * about their files: an input read whole (a regular file without NUL bytes);
 * an output that is a regular file (or none yet) written whole or not at
 * all, to a temporary file renamed over it, the file's permission bits (as
 * root, its owner too) kept, except for another user's file in a sticky
 * directory others may write (replaced as a new file); an output that is a
 * character device or a FIFO (/dev/null, a terminal, a pipe) written in
 * place, never replaced; one of
 * the process's descriptors (/dev/stdout, /dev/fd/N, /proc/self/fd/N, or the
 * file a standard descriptor writes) written through that descriptor as it
 * was opened (">>" appends); symbolic links followed, never replaced, every
 * one on the way (at the name or a directory's) this user's or root's and
 * in a directory where no other user could have put it (otherwise refused:
 * a link planted to make the tool write elsewhere); never over an input or another
 * output of the same run; and standard output checked for write errors. */
#ifndef HIPAMP_TOOL_OUTPUT_H
#define HIPAMP_TOOL_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* An output: standard output ("-"); a device, FIFO or descriptor written
 * in place; or a temporary file renamed over target (dest, or the regular
 * file the links at dest lead to) by tool_out_close. */
typedef struct tool_out {
    const char *prog;  /* for messages */
    const char *dest;  /* NULL: standard output */
    char *target;      /* malloc'ed: the regular file replaced; NULL when written in place */
    char *tmp;         /* malloc'ed temporary path (for messages), or NULL */
    int dir;           /* the directory target is replaced in (O_PATH), or -1 */
    char leaf[256];    /* target's name in dir */
    char tmp_leaf[256]; /* the temporary file's name in dir */
    FILE *f;
    bool to_stdout;    /* the output is this process's standard output ("-", /dev/stdout, its file's name) */
} tool_out;

/* Whether dest ("-": standard output, fine unless it is one of the inputs,
 * as "-o - >> in.hip" makes it) may be written by this
 * run: false, with a message on stderr, when it is (or a link at it leads
 * to) a directory, a block device, a socket or nothing (a dangling link);
 * when a symbolic link on the way to it (at its name, a directory's, or
 * further along a chain of links) is owned by a user other than this one
 * and root, or sits in a directory another user could have put it in (one
 * not this user's or root's, or that a group or others may write, unless
 * sticky with the link this user's or the directory owner's), or the
 * chain is a loop;
 * when it names a descriptor not open for writing;
 * when it is one of the inputs (same device and inode, whatever the names);
 * or when it is the same file or place as one of the other outputs. */
bool tool_out_allowed(const char *prog, const char *dest, const char *const *inputs, size_t ninputs,
                      const char *const *others, size_t nothers);
/* Whether the way to dest can be walked (each directory on it exists and
 * may be searched): false, with a message on stderr naming dest and why,
 * where it cannot, so that a tool can say so before a long compile whose
 * output would have nowhere to go (a writable directory is the open's to
 * find). Also false where tool_out_allowed's walk refuses dest. */
bool tool_out_reachable(const char *prog, const char *dest);
/* Open an output (dest NULL or "-": standard output). false after a message
 * (a FIFO that no process reads is one: opening it would block forever). */
bool tool_out_open(tool_out *o, const char *prog, const char *dest);
/* ok: everything was written; flush and close (a file: fsync it, rename
 * it into place and fsync its directory, so that a crash leaves the old
 * file or the whole new one); failures are reported, naming the file, and
 * so is a write of the caller's that failed (the stream's error flag, with
 * errno as the write left it: call this right after writing). Not ok: a
 * temporary file is removed. Returns whether the output is now complete. */
bool tool_out_close(tool_out *o, bool ok);

/* Whether t is spelt as a GPU target name: sm_NN (a letter may follow:
 * sm_90a), gfxNNN with :feature+ or :feature- words (gfx90a:xnack+). */
bool tool_target_shaped(const char *t);

/* The first thing a tool does: a closed pipe becomes a write error the
 * tool reports (SIGPIPE ignored), and SIGINT, SIGTERM, SIGHUP and
 * SIGXFSZ (a file size limit) remove the temporary files of outputs being
 * written before they end the tool
 * (the old output stays whole, as ever). */
void tool_start(void);

/* Standard output flushed and closed, the last thing a tool does: false
 * after "PROG: write error: REASON" on stderr when anything written to it
 * was lost (a full disk, /dev/full, a closed pipe, a closed descriptor);
 * true when nothing was written to it, even where none was open (">&-"). */
bool tool_stdout_close(const char *prog);

/* The whole of the regular file at path, NUL-terminated (*size bytes before
 * the terminator), or NULL after a message: it cannot be read, is not a
 * regular file, or contains a NUL byte (a kernel source is text, and
 * amp_program_build would stop at it). */
char *tool_read_source(const char *prog, const char *path, size_t *size);
/* The largest kernel source the tools read: amp_program_build_file's. */
#define TOOL_SOURCE_MAX (64u << 20)

#endif
