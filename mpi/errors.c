/* errors.c — hipamp::mpi's own per-thread error message (amp_mpi_last_error) and the helpers every file of the component reports through (mpi_private.h). */
#include "mpi_private.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/auxv.h>

static _Thread_local char amp_mpi__err[AMP_MPI__ERR_SIZE];

const char *amp_mpi_last_error(void) { return amp_mpi__err; }

amp_status amp_mpi__fail(amp_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(amp_mpi__err, sizeof amp_mpi__err, fmt, ap);
    va_end(ap);
    return s;
}

amp_status amp_mpi__hipamp(amp_status s, const char *what)
{
    return amp_mpi__fail(s, "%s: %s (%s)", what, amp_last_error(), amp_status_name(s));
}

amp_status amp_mpi__mpi(int rc, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) snprintf(msg, sizeof msg, "MPI error %d", rc);
    return amp_mpi__fail(AMP_ERROR_DEVICE, "%s failed: %s", what, msg);
}

amp_status amp_mpi__need_mpi(const char *fn)
{
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (!init || fin)
        return amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: MPI is %s", fn,
                             fin ? "finalized" : "not initialized (call MPI_Init first)");
    return AMP_OK;
}

amp_status amp_mpi__intra(MPI_Comm comm, const char *fn)
{
    int inter = 0, rc, local = 0, remote = 0;
    if (comm == MPI_COMM_NULL) return amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: comm is MPI_COMM_NULL", fn);
    if ((rc = MPI_Comm_test_inter(comm, &inter)) != MPI_SUCCESS) {
        char what[128];
        snprintf(what, sizeof what, "%s: MPI_Comm_test_inter of comm", fn);
        return amp_mpi__mpi(rc, what);
    }
    if (!inter) return AMP_OK;
    /* Every rank of both groups gets here alike, before any collective
     * call: an intercommunicator's collectives hand each group the other
     * group's values, and its ranks (the peers of halos) are the remote
     * group's, so none of the component's calls would mean what it says. */
    MPI_Comm_size(comm, &local);
    MPI_Comm_remote_size(comm, &remote);
    return amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT,
                         "%s: comm is an intercommunicator (a local group of %d ranks, a remote group of %d): "
                         "hipamp::mpi needs an intracommunicator (MPI_Intercomm_merge makes one of both groups)",
                         fn, local, remote);
}

/* Whether name was not said yet in *said: a bit a name (by a hash of
 * it), so a name is said once (rarely never, where two names share a bit). */
static bool amp_mpi__first_time(_Atomic unsigned *said, const char *name)
{
    unsigned h = 2166136261u;
    for (const char *p = name; *p; ++p) h = (h ^ (unsigned char)*p) * 16777619u;
    const unsigned bit = 1u << (h % 32);
    return !(atomic_fetch_or(said, bit) & bit);
}

/* A set-uid, set-gid or file-capability program (the kernel's AT_SECURE)
 * takes nothing from the environment of whoever started it, as the core's
 * amp__env: AMP_MPI_NCCL_LIBRARY names a library this process would load.
 * There every variable reads as unset. amp_mpi__fault("AT_SECURE") lets a
 * test program take that branch (it can only make more variables unset). */
const char *amp_mpi__env(const char *name)
{
    static _Atomic unsigned said;
    const char *v = getenv(name);
    if (!v || !*v) return NULL;
    if (getauxval(AT_SECURE) || amp_mpi__fault("AT_SECURE")) {
        if (amp_mpi__first_time(&said, name))
            fprintf(stderr, "hipamp::mpi: %s is ignored: this is a set-uid, set-gid or file-capability program, "
                            "which takes no setting from the environment of whoever started it; using the default\n",
                    name);
        return NULL;
    }
    return v;
}

bool amp_mpi__env_off(const char *name)
{
    static const char *const off[] = {"0", "off", "no", "false"}, *const on[] = {"1", "on", "yes", "true"};
    static _Atomic unsigned said;
    const char *v = amp_mpi__env(name);
    if (!v) return false;
    for (int i = 0; i < 4; ++i) {
        if (!strcasecmp(v, off[i])) return true;
        if (!strcasecmp(v, on[i])) return false;
    }
    /* A misspelt "of" or "disable" read as on without a word made a
     * comparison run the default while saying it did not. */
    if (amp_mpi__first_time(&said, name))
        fprintf(stderr, "hipamp::mpi: %s=\"%.64s\" is not a flag (1, on, yes, true; 0, off, no, false); using "
                        "the default, on\n", name, v);
    return false;
}

/* Resolved only where the program defines it (default visibility, so that
 * the executable's definition binds to this library's reference). */
extern int amp_mpi_test_fault(const char *where) __attribute__((weak, visibility("default")));

bool amp_mpi__fault(const char *where) { return amp_mpi_test_fault && amp_mpi_test_fault(where); }
