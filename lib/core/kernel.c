/* kernel.c — kernel handles, the launches in flight that use them, and
 * kernel information. A user's amp_kernel * is not a pointer but a slot
 * number and a generation: destroying the program bumps the slot's
 * generation, so a later launch of the old handle is reported
 * (AMP_ERROR_INVALID_ARGUMENT) instead of running freed memory or silently
 * succeeding, and the destroy waits for launches that resolved a handle
 * before. A lookup is two loads; no lock. */
#include "internal.h"
#include "base/fork_guard.h"

#include <linux/membarrier.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define AMP__SLOTS_PER_CHUNK 1024u
#define AMP__MAX_CHUNKS 4096u /* 4 M kernels alive at once */

typedef struct amp__kslot {
    _Atomic uint32_t gen; /* the live handle's generation; 0 while free (never handed out) */
    uint32_t last_gen;    /* the last generation handed out (guarded by the slot lock) */
    _Atomic(amp__kernel *) k;
} amp__kslot;

static _Atomic(amp__kslot *) amp__chunks[AMP__MAX_CHUNKS];
AMP__FORK_GUARDED_MUTEX(amp__slot_lock) /* leaf: guards the free list and growth; taken across fork() */
static uint32_t *amp__free_slots;
static size_t amp__nfree, amp__free_cap;
static uint32_t amp__nslots; /* slots ever made */

/* A handle: slot in the high 32 bits, generation (31 bits) above bit 0,
 * bit 0 set so that no handle is a valid aligned pointer or NULL. */
static amp_kernel *amp__encode(uint32_t slot, uint32_t gen)
{
    return (amp_kernel *)(uintptr_t)(((uint64_t)slot << 32) | ((uint64_t)gen << 1) | 1u);
}

amp_status amp__kernel_handle_new(amp__kernel *k)
{
    amp_status st = AMP_OK;
    uint32_t slot;
    pthread_mutex_lock(&amp__slot_lock);
    if (amp__nfree) {
        slot = amp__free_slots[--amp__nfree];
    } else {
        if (amp__nslots == AMP__SLOTS_PER_CHUNK * AMP__MAX_CHUNKS) {
            st = amp__fail(AMP_ERROR_OUT_OF_MEMORY, "more than %u kernels alive at once",
                           AMP__SLOTS_PER_CHUNK * AMP__MAX_CHUNKS);
            goto out;
        }
        slot = amp__nslots;
        uint32_t c = slot / AMP__SLOTS_PER_CHUNK;
        if (!atomic_load_explicit(&amp__chunks[c], memory_order_relaxed)) {
            amp__kslot *chunk = calloc(AMP__SLOTS_PER_CHUNK, sizeof *chunk);
            if (!chunk) {
                st = amp__fail(AMP_ERROR_OUT_OF_MEMORY, "no memory for kernel handles");
                goto out;
            }
            atomic_store_explicit(&amp__chunks[c], chunk, memory_order_release);
        }
        amp__nslots++;
    }
    amp__kslot *s = &atomic_load_explicit(&amp__chunks[slot / AMP__SLOTS_PER_CHUNK],
                                          memory_order_relaxed)[slot % AMP__SLOTS_PER_CHUNK];
    /* Every use of a slot gets a generation it never had before (until the
     * 31 bits wrap), so old handles of the slot stay stale. */
    uint32_t gen = (s->last_gen + 1) & 0x7fffffffu;
    if (!gen) gen = 1;
    s->last_gen = gen;
    atomic_store_explicit(&s->k, k, memory_order_relaxed);
    atomic_store_explicit(&s->gen, gen, memory_order_release);
    k->handle = amp__encode(slot, gen);
out:
    pthread_mutex_unlock(&amp__slot_lock);
    return st;
}

void amp__kernel_handle_free(amp__kernel *k)
{
    if (!k || !k->handle) return;
    uint64_t h = (uint64_t)(uintptr_t)k->handle;
    uint32_t slot = (uint32_t)(h >> 32);
    amp__kslot *s = &atomic_load(&amp__chunks[slot / AMP__SLOTS_PER_CHUNK])[slot % AMP__SLOTS_PER_CHUNK];
    pthread_mutex_lock(&amp__slot_lock);
    /* The next user of the slot gets a new generation; until then no
     * generation matches a handed-out handle (0 is never handed out). */
    atomic_store_explicit(&s->gen, 0, memory_order_release);
    atomic_store_explicit(&s->k, NULL, memory_order_relaxed);
    if (amp__nfree == amp__free_cap) {
        size_t cap = amp__free_cap ? 2 * amp__free_cap : 64;
        uint32_t *p = realloc(amp__free_slots, cap * sizeof *p);
        if (!p) goto out; /* the slot is lost, not reused: still safe */
        amp__free_slots = p;
        amp__free_cap = cap;
    }
    amp__free_slots[amp__nfree++] = slot;
out:
    pthread_mutex_unlock(&amp__slot_lock);
    k->handle = NULL;
}

amp_status amp__kernel_resolve(amp_kernel *handle, amp__kernel **out)
{
    uint64_t h = (uint64_t)(uintptr_t)handle;
    *out = NULL;
    if (!handle) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "kernel is NULL");
    uint32_t slot = (uint32_t)(h >> 32), gen = (uint32_t)(h >> 1) & 0x7fffffffu;
    amp__kslot *chunk = (h & 1) && slot < AMP__SLOTS_PER_CHUNK * AMP__MAX_CHUNKS
                            ? atomic_load_explicit(&amp__chunks[slot / AMP__SLOTS_PER_CHUNK], memory_order_acquire)
                            : NULL;
    if (!chunk || gen == 0)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%p is not a kernel handle (from amp_program_get_kernel)",
                         (void *)handle);
    amp__kslot *s = &chunk[slot % AMP__SLOTS_PER_CHUNK];
    if (atomic_load_explicit(&s->gen, memory_order_acquire) != gen)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT,
                         "kernel handle %p is stale: the program it came from was destroyed", (void *)handle);
    amp__kernel *k = atomic_load_explicit(&s->k, memory_order_relaxed);
    if (!k) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "kernel handle %p is stale", (void *)handle);
    *out = k;
    return AMP_OK;
}

amp_status amp_kernel_get_info(amp_kernel *handle, amp_kernel_info *out)
{
    AMP__CLEAR_OUT(out);
    AMP__NOT_NULL(out);
    amp__kernel *k;
    /* Read under the same protection as a launch: a destroy racing this
     * call waits for it. */
    amp__launcher *me = amp__launch_enter();
    if (!me) return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "amp_kernel_get_info: no memory for this thread's record");
    amp_status st = amp__kernel_resolve(handle, &k);
    if (st != AMP_OK) {
        amp__launch_leave(me);
        return st;
    }
    snprintf(out->name, sizeof out->name, "%s", k->name);
    snprintf(out->device_path, sizeof out->device_path, "%s", k->acc->e.info.device_path);
    out->is_tiled = k->sig.tiled != 0;
    out->rank = k->sig.rank;
    for (int d = 0; d < 3; ++d) out->tile[d] = k->sig.tile[d];
    out->nparams = k->sig.nparams;
    out->tile_static_bytes = k->tile_static_bytes;
    snprintf(out->execution, sizeof out->execution, "%s", k->execution);
    amp__launch_leave(me);
    return AMP_OK;
}

/* ------------------------------------------------- launches in flight
 * A launch uses its kernel (name, signature record, code) from the
 * handle's resolution until it returns. amp_program_destroy ends the
 * handles first, then waits (amp__launches_quiesce) until no launch that
 * may have resolved one before is still inside, and only then frees the
 * kernels and releases the module: a launch racing the destroy either
 * resolved in time and finishes on live memory, or says "stale".
 *
 * Each launching thread has a record whose count is odd while it is inside
 * a launch. The launch path changes it with plain stores (no locked
 * instruction); the destroying thread's membarrier(2) makes every running
 * thread pass a full barrier, so after it either a launch's odd count is
 * visible, or that launch's resolution sees the ended handle. Where the
 * kernel offers no membarrier, launches fence themselves instead. */

_Thread_local amp__launcher *amp__me __attribute__((tls_model("initial-exec")));
atomic_bool amp__launch_fence;

static _Atomic(amp__launcher *) amp__launchers; /* every record made; never freed */
static pthread_once_t amp__launch_once = PTHREAD_ONCE_INIT;
static pthread_key_t amp__launch_key;
static bool amp__membarrier_ok;

static long amp__membarrier(int cmd) { return syscall(SYS_membarrier, cmd, 0, 0); }

static bool amp__membarrier_register(void)
{
    long cmds = amp__membarrier(MEMBARRIER_CMD_QUERY);
    return cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
           amp__membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
}

/* A thread that exits gives its record to the next thread that launches,
 * and lets go of it: a launch from a key destructor of the
 * program's that runs after this one registers again rather than share
 * the record with the thread that took it. */
static void amp__launcher_exit(void *p)
{
    amp__launcher *r = p;
    if (amp__me == r) amp__me = NULL;
    atomic_store_explicit(&r->used, false, memory_order_release);
}

/* In a forked child only the forking thread exists: no other record is in
 * a launch, whatever its count said in the parent. */
static void amp__launch_child(void)
{
    for (amp__launcher *r = atomic_load(&amp__launchers); r; r = r->next) {
        if (r == amp__me) continue;
        uint64_t s = atomic_load_explicit(&r->seq, memory_order_relaxed);
        atomic_store_explicit(&r->seq, s + (s & 1), memory_order_relaxed);
        atomic_store_explicit(&r->used, false, memory_order_relaxed);
    }
    amp__membarrier_ok = amp__membarrier_register();
    atomic_store(&amp__launch_fence, !amp__membarrier_ok);
}

static void amp__launch_init(void)
{
    (void)pthread_key_create(&amp__launch_key, amp__launcher_exit);
    amp__membarrier_ok = amp__membarrier_register();
    atomic_store(&amp__launch_fence, !amp__membarrier_ok);
    pthread_atfork(NULL, NULL, amp__launch_child);
}

amp__launcher *amp__launcher_register(void)
{
    pthread_once(&amp__launch_once, amp__launch_init);
    amp__launcher *r = atomic_load(&amp__launchers);
    for (; r; r = r->next) {
        bool free_rec = false;
        if (atomic_compare_exchange_strong(&r->used, &free_rec, true)) break;
    }
    if (!r) {
        if (!(r = amp__calloc_lines(sizeof *r))) return NULL;
        atomic_init(&r->used, true);
        amp__launcher *head = atomic_load(&amp__launchers);
        do r->next = head;
        while (!atomic_compare_exchange_weak(&amp__launchers, &head, r));
    }
    if (pthread_setspecific(amp__launch_key, r) != 0) {
        /* Without the key the record would stay taken at the thread's exit:
         * a leak of one record, harmless. */
    }
    amp__me = r;
    return r;
}

void amp__launches_quiesce(void)
{
    pthread_once(&amp__launch_once, amp__launch_init);
    if (!amp__membarrier_ok || amp__membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0) {
        /* Launches fence themselves, or (a kernel that refuses now what it
         * accepted at registration) the slower global barrier does it. */
        if (amp__membarrier_ok) (void)amp__membarrier(MEMBARRIER_CMD_GLOBAL);
        atomic_thread_fence(memory_order_seq_cst);
    }
    for (amp__launcher *r = atomic_load(&amp__launchers); r; r = r->next) {
        if (r == amp__me) continue; /* this thread is in no launch: it is destroying */
        uint64_t s = atomic_load_explicit(&r->seq, memory_order_acquire);
        /* Wait for that launch to return (a CPU launch may run its kernel
         * for long): spin a little, then sleep, up to 1 ms at a time. */
        for (long ns = 1000; (s & 1) && atomic_load_explicit(&r->seq, memory_order_acquire) == s;) {
            if (ns < 64000) {
                sched_yield();
            } else {
                struct timespec ts = {0, ns};
                nanosleep(&ts, NULL);
            }
            if (ns < 1000000) ns *= 2;
        }
    }
}
