/* kernel.c — kernel handles and kernel information. A user's amp_kernel * is
 * not a pointer but a slot number and a generation: destroying the program
 * bumps the slot's generation, so a later launch of the old handle is
 * reported (AMP_ERROR_INVALID_ARGUMENT) instead of running freed memory or
 * silently succeeding. A lookup is two loads; no lock. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AMP__SLOTS_PER_CHUNK 1024u
#define AMP__MAX_CHUNKS 4096u /* 4 M kernels alive at once */

typedef struct amp__kslot {
    _Atomic uint32_t gen; /* the live handle's generation; 0 while free (never handed out) */
    uint32_t last_gen;    /* the last generation handed out (guarded by the slot lock) */
    _Atomic(amp__kernel *) k;
} amp__kslot;

static _Atomic(amp__kslot *) amp__chunks[AMP__MAX_CHUNKS];
static pthread_mutex_t amp__slot_lock = PTHREAD_MUTEX_INITIALIZER; /* leaf: guards the free list and growth */
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
    amp_status st = amp__kernel_resolve(handle, &k);
    if (st != AMP_OK) return st;
    snprintf(out->name, sizeof out->name, "%s", k->name);
    snprintf(out->device_path, sizeof out->device_path, "%s", k->acc->e.info.device_path);
    out->is_tiled = k->sig.tiled != 0;
    out->rank = k->sig.rank;
    for (int d = 0; d < 3; ++d) out->tile[d] = k->sig.tile[d];
    out->nparams = k->sig.nparams;
    out->tile_static_bytes = k->tile_static_bytes;
    snprintf(out->execution, sizeof out->execution, "%s", k->execution);
    return AMP_OK;
}
