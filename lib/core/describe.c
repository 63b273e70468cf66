/* describe.c — what the trace's records say of the core's objects: an
 * accelerator (its number in the registry and its info) and a storage with
 * the box a command touches. Plain reads of the objects' fields, below every
 * file that fills a record (queue.c, storage.c, program.c). */
#include "internal.h"

void amp__accelerator_describe(const amp_accelerator *a, amp__trace_rec *r)
{
    r->acc = a ? a->index : -1;
    r->acc_info = a ? &a->e.info : NULL;
}

void amp__storage_describe(const amp__storage *s, const amp__box *b, amp__trace_rec *r)
{
    r->object = (uintptr_t)s;
    r->is_array = s->is_array;
    r->elem = (uint32_t)s->elem;
    r->rank = (uint8_t)s->ext.rank;
    for (int d = 0; d < s->ext.rank; ++d) {
        r->ext[d] = s->ext.v[d];
        r->lo[d] = b ? b->lo[d] : 0;
        r->hi[d] = b ? b->hi[d] : s->ext.v[d];
    }
}
