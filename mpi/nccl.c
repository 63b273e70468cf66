/* nccl.c — hipamp::mpi's NCCL/RCCL transport: the library loaded with dlopen (no build-time dependency: nccl_abi.h declares what is used), a communicator bootstrapped over the exchanger's MPI communicator, grouped point-to-point operations and in-place all-reduces on a hipamp queue's native stream, with the stream's device current around each call (native.c). */
#include "nccl_transport.h"
#include "native.h"
#include "nccl_abi.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- loading */

typedef struct amp_mpi__nccl_lib {
    void *dl;
    int version;
#define AMP__NCCL_PTR(name, ret, args) ret(*name) args;
    NCCL_FUNCS(AMP__NCCL_PTR)
    NCCL_OPTIONAL(AMP__NCCL_PTR)
#undef AMP__NCCL_PTR
} amp_mpi__nccl_lib;

/* Libraries tried, once each per process (a process of one vendor asks for
 * one; AMP_MPI_NCCL_LIBRARY adds a third), never unloaded: a communicator
 * may outlive any one exchanger. Guarded by amp__nccl_lock. */
#define AMP__NCCL_LIBS 4
/* A name is kept whole (a path as long as Linux allows), so that the next
 * call finds its slot again. */
#define AMP__NCCL_NAME_MAX 4096
static struct {
    char name[AMP__NCCL_NAME_MAX];
    bool tried, ok;
    char why[1024];
    amp_mpi__nccl_lib lib;
} amp__nccl_libs[AMP__NCCL_LIBS];
static pthread_mutex_t amp__nccl_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *amp__nccl_soname(char vendor)
{
    const char *env = amp_mpi__env("AMP_MPI_NCCL_LIBRARY");
    if (env) return env;
    return vendor == 'h' ? "librccl.so.1" : "libnccl.so.2";
}

/* The loaded library of this vendor, or NULL with *why. Lock held. */
static amp_mpi__nccl_lib *amp__nccl_load_locked(char vendor, const char **why)
{
    const char *name = amp__nccl_soname(vendor);
    int slot = -1;
    if (strlen(name) >= AMP__NCCL_NAME_MAX) {
        static _Thread_local char too_long[160];
        snprintf(too_long, sizeof too_long,
                 "AMP_MPI_NCCL_LIBRARY is %zu characters long, more than the %d a library's name may have",
                 strlen(name), AMP__NCCL_NAME_MAX - 1);
        *why = too_long;
        return NULL;
    }
    for (int i = 0; i < AMP__NCCL_LIBS; ++i)
        if (amp__nccl_libs[i].tried && !strcmp(amp__nccl_libs[i].name, name)) {
            slot = i;
            break;
        }
    if (slot < 0) {
        for (int i = 0; i < AMP__NCCL_LIBS && slot < 0; ++i)
            if (!amp__nccl_libs[i].tried) slot = i;
        if (slot < 0) {
            *why = "too many NCCL library names tried in this process";
            return NULL;
        }
        __typeof__(amp__nccl_libs[0]) *e = &amp__nccl_libs[slot];
        e->tried = true;
        snprintf(e->name, sizeof e->name, "%s", name);
        /* Loaded into this process: a path (only AMP_MPI_NCCL_LIBRARY has
         * one) is held to the core's rule for what hipamp loads; a soname
         * is the loader's to find, as the GPU runtimes' are. */
        void *dl = NULL;
        if (strchr(name, '/') && amp_check_trusted_file(name) != AMP_OK) {
            snprintf(e->why, sizeof e->why, "AMP_MPI_NCCL_LIBRARY is not loaded: %s", amp_last_error());
        } else if (!(dl = dlopen(name, RTLD_NOW | RTLD_LOCAL))) {
            const char *d = dlerror();
            snprintf(e->why, sizeof e->why, "%s does not load (%s)", name, d ? d : "dlopen failed");
        } else {
            bool all = true;
#define AMP__NCCL_SYM(sym, ret, args)                                                                  \
    if (all && !(*(void **)&e->lib.sym = dlsym(dl, #sym))) {                                         \
        snprintf(e->why, sizeof e->why, "%s has no %s: not an NCCL/RCCL library", name, #sym);      \
        all = false;                                                                                 \
    }
            NCCL_FUNCS(AMP__NCCL_SYM)
#undef AMP__NCCL_SYM
#define AMP__NCCL_OPT(sym, ret, args) *(void **)&e->lib.sym = dlsym(dl, #sym);
            NCCL_OPTIONAL(AMP__NCCL_OPT)
#undef AMP__NCCL_OPT
            int v = 0;
            if (all && e->lib.ncclGetVersion(&v) != ncclSuccess) {
                snprintf(e->why, sizeof e->why, "%s: ncclGetVersion failed", name);
                all = false;
            }
            if (!all) {
                dlclose(dl);
            } else {
                e->lib.dl = dl;
                e->lib.version = v;
                e->ok = true;
                /* NCCL_VERSION: 2.8.x and earlier are X*1000+Y*100+Z,
                 * later ones X*10000+Y*100+Z. */
                int major = v >= 10000 ? v / 10000 : v / 1000, minor = v >= 10000 ? v / 100 % 100 : v / 100 % 10,
                    patch = v % 100;
                snprintf(e->why, sizeof e->why, "%s (%s %d.%d.%d)", name, vendor == 'h' ? "RCCL" : "NCCL", major,
                         minor, patch);
            }
        }
    }
    *why = amp__nccl_libs[slot].why;
    return amp__nccl_libs[slot].ok ? &amp__nccl_libs[slot].lib : NULL;
}

bool amp_mpi__nccl_available(char vendor, char *what, size_t n)
{
    const char *why = "";
    pthread_mutex_lock(&amp__nccl_lock);
    amp_mpi__nccl_lib *lib = amp__nccl_load_locked(vendor, &why);
    if (what && n) snprintf(what, n, "%s", why);
    pthread_mutex_unlock(&amp__nccl_lock);
    return lib != NULL;
}

/* ------------------------------------------------------- communicators */

struct amp_mpi__nccl {
    amp_mpi__nccl_lib *lib;
    ncclComm_t comm;
    void *stream;
    char vendor;
};

/* NCCL's words for r (and its last error where it keeps one). */
static amp_status amp__nccl_fail(const amp_mpi__nccl_lib *lib, ncclComm_t comm, ncclResult_t r, const char *what,
                                 const char *call)
{
    const char *s = lib->ncclGetErrorString ? lib->ncclGetErrorString(r) : NULL;
    const char *last = lib->ncclGetLastError ? lib->ncclGetLastError(comm) : NULL;
    return amp_mpi__fail(AMP_ERROR_DEVICE, "%s: %s failed: %s (ncclResult_t %d)%s%s", what, call, s ? s : "?", (int)r,
                         last && *last ? ": " : "", last && *last ? last : "");
}

amp_status amp_mpi__nccl_open(MPI_Comm comm, char vendor, void *stream, amp_mpi__nccl **out)
{
    static const char what[] = "amp_mpi_exchange_create: the NCCL communicator";
    amp_status st = AMP_OK;
    amp_mpi__nccl *c = NULL;
    int rank = 0, size = 0, rc;
    const char *why = "";
    *out = NULL;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    pthread_mutex_lock(&amp__nccl_lock);
    amp_mpi__nccl_lib *lib = amp__nccl_load_locked(vendor, &why);
    pthread_mutex_unlock(&amp__nccl_lock);
    /* Rank 0's id and whether it has one travel together, so that every
     * rank leaves here the same way when rank 0 could not make one. */
    struct {
        ncclUniqueId id;
        int ok;
    } boot;
    memset(&boot, 0, sizeof boot);
    if (rank == 0 && lib) {
        ncclResult_t r = lib->ncclGetUniqueId(&boot.id);
        boot.ok = r == ncclSuccess;
        if (!boot.ok) st = amp__nccl_fail(lib, NULL, r, what, "ncclGetUniqueId");
    } else if (rank == 0) {
        st = amp_mpi__fail(AMP_ERROR_UNSUPPORTED, "%s: %s", what, why);
    }
    if ((rc = MPI_Bcast(&boot, (int)sizeof boot, MPI_BYTE, 0, comm)) != MPI_SUCCESS)
        return amp_mpi__mpi(rc, "amp_mpi_exchange_create: MPI_Bcast of the NCCL unique id");
    /* This rank's own preparation for ncclCommInitRank, which waits for
     * every rank of the communicator: a rank that gives up before it (no
     * id from rank 0, no library, no memory, its device not made current)
     * would leave the others in it for ever, so the ranks agree first (one
     * MPI_Allreduce of "ready" with the lowest rank that is not). */
    amp_mpi__ctx_saved saved = {0};
    bool entered = false;
    if (st == AMP_OK && !boot.ok)
        st = amp_mpi__fail(AMP_ERROR_DEVICE, "%s: rank 0 could not make an NCCL unique id", what);
    else if (st == AMP_OK && !lib)
        st = amp_mpi__fail(AMP_ERROR_UNSUPPORTED, "%s: %s", what, why);
    else if (st == AMP_OK && (amp_mpi__fault("nccl_open") || !(c = calloc(1, sizeof *c))))
        st = amp_mpi__fail(AMP_ERROR_OUT_OF_MEMORY, "%s: no memory", what);
    else if (st == AMP_OK)
        entered = (st = amp_mpi__ctx_enter(vendor, stream, &saved, what)) == AMP_OK;
    struct {
        int value;
        int rank;
    } ready = {st == AMP_OK, rank}, least;
    if ((rc = MPI_Allreduce(&ready, &least, 1, MPI_2INT, MPI_MINLOC, comm)) != MPI_SUCCESS) {
        if (st == AMP_OK) st = amp_mpi__mpi(rc, "amp_mpi_exchange_create: MPI_Allreduce before ncclCommInitRank");
        goto fail;
    }
    /* Another rank gave up: none calls ncclCommInitRank, and this one has
     * no communicator and no failure of its own (the caller's agreement
     * names that rank). */
    if (st != AMP_OK || !least.value) goto fail;
    c->lib = lib;
    c->stream = stream;
    c->vendor = vendor;
    ncclResult_t r = lib->ncclCommInitRank(&c->comm, size, boot.id, rank);
    if (r != ncclSuccess) {
        st = amp__nccl_fail(lib, NULL, r, what, "ncclCommInitRank");
        c->comm = NULL;
        goto fail;
    }
    amp_mpi__ctx_leave(&saved);
    *out = c;
    return AMP_OK;
fail:
    if (entered) amp_mpi__ctx_leave(&saved);
    free(c);
    return st;
}

void amp_mpi__nccl_close(amp_mpi__nccl *c, bool abort)
{
    if (!c) return;
    if (c->comm) {
        amp_mpi__ctx_saved saved;
        bool in = amp_mpi__ctx_enter(c->vendor, c->stream, &saved, "amp_mpi_exchange_destroy") == AMP_OK;
        if (abort) c->lib->ncclCommAbort(c->comm);
        else c->lib->ncclCommDestroy(c->comm);
        if (in) amp_mpi__ctx_leave(&saved);
    }
    free(c);
}

amp_status amp_mpi__nccl_group(amp_mpi__nccl *c, const amp_mpi__nccl_op *ops, size_t n, const char *what)
{
    amp_status st = AMP_OK;
    amp_mpi__ctx_saved saved;
    if ((st = amp_mpi__ctx_enter(c->vendor, c->stream, &saved, what)) != AMP_OK) return st;
    ncclResult_t r = c->lib->ncclGroupStart();
    if (r != ncclSuccess) {
        st = amp__nccl_fail(c->lib, c->comm, r, what, "ncclGroupStart");
        goto done;
    }
    for (size_t i = 0; i < n && st == AMP_OK; ++i) {
        /* Bytes (ncclUint8): the views' element types are the caller's. */
        r = ops[i].send ? c->lib->ncclSend(ops[i].addr, ops[i].bytes, ncclUint8, ops[i].peer, c->comm, c->stream)
                        : c->lib->ncclRecv(ops[i].addr, ops[i].bytes, ncclUint8, ops[i].peer, c->comm, c->stream);
        if (r != ncclSuccess) st = amp__nccl_fail(c->lib, c->comm, r, what, ops[i].send ? "ncclSend" : "ncclRecv");
    }
    /* The group is ended even after a failed call, so that NCCL's group
     * state is clean for the next one. */
    r = c->lib->ncclGroupEnd();
    if (st == AMP_OK && r != ncclSuccess) st = amp__nccl_fail(c->lib, c->comm, r, what, "ncclGroupEnd");
done:
    amp_mpi__ctx_leave(&saved);
    return st;
}

amp_status amp_mpi__nccl_allreduce(amp_mpi__nccl *c, void *addr, size_t count, int dtype, int op, const char *what)
{
    amp_mpi__ctx_saved saved;
    amp_status st = amp_mpi__ctx_enter(c->vendor, c->stream, &saved, what);
    if (st != AMP_OK) return st;
    ncclResult_t r = c->lib->ncclAllReduce(addr, addr, count, dtype, op, c->comm, c->stream);
    amp_mpi__ctx_leave(&saved);
    return r == ncclSuccess ? AMP_OK : amp__nccl_fail(c->lib, c->comm, r, what, "ncclAllReduce");
}

amp_status amp_mpi__nccl_check(amp_mpi__nccl *c, const char *what)
{
    ncclResult_t async = ncclSuccess;
    ncclResult_t r = c->lib->ncclCommGetAsyncError(c->comm, &async);
    if (r != ncclSuccess) return amp__nccl_fail(c->lib, c->comm, r, what, "ncclCommGetAsyncError");
    if (async != ncclSuccess && async != ncclInProgress)
        return amp__nccl_fail(c->lib, c->comm, async, what, "an NCCL operation");
    return AMP_OK;
}
