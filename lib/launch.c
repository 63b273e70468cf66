/* launch.c — parallel_for_each: check the arguments against the kernel's
 * signature record, make every view's data current on the device, fill the
 * argument pack, queue the launch, and record what it touched; futures. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The view an argument refers to: a view, or a whole array. */
typedef struct amp__bound {
    amp__storage *s;
    amp__box box;
    amp_index origin;
    amp_extent ext;
    amp_access access;
    amp_array_view *view; /* NULL for an array */
    bool writes;
} amp__bound;

static amp_status amp__check_arg(const amp_kernel *k, int i, const amp_arg *a, amp__bound *b)
{
    const amp__sig_param *p = &k->sig.params[i];
    const char *kn = k->name;
    bool is_mem = p->kind == AMP_ARG_VIEW || p->kind == AMP_ARG_ARRAY;
    if (!is_mem) return amp__arg_check_value(kn, i, p, a);
    if (a->kind != AMP_ARG_VIEW && a->kind != AMP_ARG_ARRAY)
        return amp__fail(AMP_ERROR_ARGUMENT_MISMATCH, "kernel '%s' parameter %d is %s<%s, %d>; argument is %s",
                         kn, i, amp__kind_name(p->kind), p->is_const ? "const T" : "T", p->rank,
                         amp__kind_name(a->kind));
    if (p->kind == AMP_ARG_ARRAY && a->kind != AMP_ARG_ARRAY)
        return amp__fail(AMP_ERROR_ARGUMENT_MISMATCH,
                         "kernel '%s' parameter %d is amp::array; bind an amp_array (amp_arg_array)", kn, i);
    if (a->kind == AMP_ARG_VIEW) {
        amp_array_view *v = a->u.view;
        if (!v) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "kernel '%s' parameter %d: view is NULL", kn, i);
        b->s = v->s;
        b->origin = v->origin;
        b->ext = v->ext;
        b->access = v->access;
        b->view = v;
        amp__view_box(v, &b->box);
    } else {
        amp_array *arr = a->u.array;
        if (!arr) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "kernel '%s' parameter %d: array is NULL", kn, i);
        b->s = arr->s;
        b->ext = arr->s->ext;
        b->origin.rank = b->ext.rank;
        memset(b->origin.v, 0, sizeof b->origin.v);
        b->access = AMP_READ_WRITE;
        b->box = amp__whole_box(arr->s);
    }
    if (b->ext.rank != p->rank)
        return amp__fail(AMP_ERROR_ARGUMENT_MISMATCH, "kernel '%s' parameter %d has rank %d; argument has rank %d",
                         kn, i, p->rank, b->ext.rank);
    if ((int64_t)b->s->elem != p->elem_size)
        return amp__fail(AMP_ERROR_ARGUMENT_MISMATCH,
                         "kernel '%s' parameter %d has %d-byte elements; argument has %zu-byte elements", kn, i,
                         p->elem_size, b->s->elem);
    if (b->access == AMP_READ_ONLY && !p->is_const)
        return amp__fail(AMP_ERROR_ARGUMENT_MISMATCH,
                         "kernel '%s' parameter %d is not const but its view is AMP_READ_ONLY "
                         "(declare it array_view<const T, %d>)", kn, i, p->rank);
    b->writes = !p->is_const;
    return AMP_OK;
}

/* Descriptor (lib/signature.h): pointer, int64 strides, int32 extent. */
static void amp__put_view(unsigned char *pack, const amp__sig_param *p, const amp__bound *b, void *dptr)
{
    const amp__storage *s = b->s;
    int R = s->ext.rank, r = b->ext.rank;
    void *ptr = (char *)dptr + amp__storage_offset(s, b->origin.v) * (int64_t)s->elem;
    unsigned char *at = pack + p->offset;
    memcpy(at, &ptr, sizeof ptr);
    for (int d = 0; d < r; ++d) {
        int64_t stride = s->stride[R - r + d];
        memcpy(at + AMP__DESC_STRIDE_OFFSET + 8 * d, &stride, 8);
        int32_t e = b->ext.v[d];
        memcpy(at + AMP__DESC_EXTENT_OFFSET(r) + 4 * d, &e, 4);
    }
}

static int amp__storage_cmp(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)*(amp__storage *const *)a, y = (uintptr_t)*(amp__storage *const *)b;
    return x < y ? -1 : x > y;
}

static amp_status amp__check_domain(const amp_kernel *k, amp_extent e, const amp_tiled_extent *t)
{
    amp_status st;
    if (t) {
        if (!k->sig.tiled)
            return amp__fail(AMP_ERROR_INVALID_ARGUMENT,
                             "kernel '%s' is not tiled (AMP_KERNEL): launch it with amp_parallel_for_each", k->name);
        if ((st = amp_extent_validate(t->extent)) != AMP_OK) return st;
        if (t->extent.rank != k->sig.rank)
            return amp__fail(AMP_ERROR_INVALID_COMPUTE_DOMAIN, "kernel '%s' takes a rank-%d tiled_index; extent has rank %d",
                             k->name, k->sig.rank, t->extent.rank);
        for (int d = 0; d < t->extent.rank; ++d)
            if (t->tile[d] != k->sig.tile[d])
                return amp__fail(AMP_ERROR_INVALID_COMPUTE_DOMAIN,
                                 "tile dimension %d is %d but kernel '%s' was written for tile %d", d, t->tile[d],
                                 k->name, k->sig.tile[d]);
        for (int d = 0; d < t->extent.rank; ++d)
            if (t->extent.v[d] % t->tile[d])
                return amp__fail(AMP_ERROR_INVALID_COMPUTE_DOMAIN,
                                 "extent dimension %d (%d) is not divisible by tile %d: pad or truncate it", d,
                                 t->extent.v[d], t->tile[d]);
        return AMP_OK;
    }
    if (k->sig.tiled)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT,
                         "kernel '%s' is tiled (AMP_TILED_KERNEL): launch it with amp_parallel_for_each_tiled", k->name);
    if ((st = amp_extent_validate(e)) != AMP_OK) return st;
    if (e.rank != k->sig.rank)
        return amp__fail(AMP_ERROR_INVALID_EXTENT, "kernel '%s' takes amp::index<%d>; extent has rank %d", k->name,
                         k->sig.rank, e.rank);
    return AMP_OK;
}

amp_status amp__run(amp_accelerator_view *q, amp_extent e, const amp_tiled_extent *t, amp_kernel *k,
                       const amp_arg *args, size_t nargs, amp__event **out_ev)
{
    amp_status st = AMP_OK;
    amp__bound bound[AMP__SIG_MAX_PARAMS];
    amp__storage *locked[AMP__SIG_MAX_PARAMS];
    size_t nlocked = 0;
    amp__event *ev = NULL;
    _Alignas(16) unsigned char pack[AMP__MAX_PACK];
    if (out_ev) *out_ev = NULL;
    if (!k) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "parallel_for_each: kernel is NULL");
    if (!args && nargs) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "parallel_for_each: args is NULL, nargs %zu", nargs);
    amp_accelerator *acc = amp__kernel_accelerator(k);
    if (!q && (st = amp__default_view(acc, &q)) != AMP_OK) return st;
    if (q->acc != acc)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "kernel '%s' was built for %s; the accelerator view is on %s",
                         k->name, acc->e.info.device_path, q->acc->e.info.device_path);
    if ((st = amp__check_domain(k, e, t)) != AMP_OK) return st;
    if (nargs != (size_t)k->sig.nparams)
        return amp__fail(AMP_ERROR_ARGUMENT_MISMATCH, "kernel '%s' takes %d parameters; %zu arguments given", k->name,
                         k->sig.nparams, nargs);
    memset(pack, 0, (size_t)k->sig.pack_size);
    for (size_t i = 0; i < nargs; ++i) {
        memset(&bound[i], 0, sizeof bound[i]);
        if ((st = amp__check_arg(k, (int)i, &args[i], &bound[i])) != AMP_OK) return st;
        if (bound[i].s) locked[nlocked++] = bound[i].s;
        else amp__arg_put_value(pack, &k->sig.params[i], &args[i]);
    }
    /* Lock each storage once, in address order (lock order: internal.h). */
    qsort(locked, nlocked, sizeof *locked, amp__storage_cmp);
    size_t u = 0;
    for (size_t i = 0; i < nlocked; ++i)
        if (!u || locked[u - 1] != locked[i]) locked[u++] = locked[i];
    nlocked = u;
    /* The completion point exists before anything is queued: whatever a
     * failure leaves queued (copies of earlier arguments) is still covered
     * by it. Recording is lazy, so this costs no driver call. */
    if ((st = amp__event_record(q, &ev)) != AMP_OK) return st;
    for (size_t i = 0; i < nlocked; ++i) pthread_mutex_lock(&locked[i]->lock);

    size_t prepared = 0; /* arguments whose storage may have queued work */
    for (size_t i = 0; i < nargs; ++i) {
        amp__bound *b = &bound[i];
        if (!b->s) continue;
        bool discard = b->view && b->view->discard;
        void *dptr = NULL;
        prepared = i + 1; /* a failing prepare may have queued copies too */
        if ((st = amp__storage_prepare(b->s, q, &b->box, true, discard, &dptr)) != AMP_OK) goto out;
        amp__put_view(pack, &k->sig.params[i], b, dptr);
    }

    amp__launch l;
    memset(&l, 0, sizeof l);
    l.kernel_name = k->name;
    l.sig = &k->sig;
    l.tiled = t != NULL;
    l.extent = t ? t->extent : e;
    l.info.rank = l.extent.rank;
    for (int d = 0; d < l.extent.rank; ++d) l.info.ext[d] = l.extent.v[d];
    l.pack = pack;
    l.pack_size = (size_t)k->sig.pack_size;
    if ((st = acc->e.be->launch(acc->e.dev, q->queue, k->fn, &l)) != AMP_OK) goto out;
    atomic_fetch_add(&q->launches, 1);
    for (size_t i = 0; i < nargs; ++i) {
        amp__bound *b = &bound[i];
        if (!b->s) continue;
        amp__storage_after_launch(b->s, ev, &b->box, b->writes);
        if (b->view) b->view->discard = false;
    }
    amp__module_note_launch(k->m, ev);
    if (out_ev) *out_ev = amp__event_retain(ev);
out:
    if (st != AMP_OK)
        for (size_t i = 0; i < prepared; ++i)
            if (bound[i].s) amp__storage_after_launch(bound[i].s, ev, &bound[i].box, false);
    for (size_t i = nlocked; i-- > 0;) pthread_mutex_unlock(&locked[i]->lock);
    amp__event_release(ev);
    return st;
}

amp_status amp_parallel_for_each(amp_accelerator_view *q, amp_extent e, amp_kernel *k, const amp_arg *args,
                                 size_t nargs)
{
    return amp__run(q, e, NULL, k, args, nargs, NULL);
}

amp_status amp_parallel_for_each_tiled(amp_accelerator_view *q, amp_tiled_extent t, amp_kernel *k,
                                       const amp_arg *args, size_t nargs)
{
    return amp__run(q, t.extent, &t, k, args, nargs, NULL);
}

/* ---------------------------------------------------------------- futures */

struct amp_future {
    amp__event *ev;
};

static amp_status amp__run_async(amp_accelerator_view *q, amp_extent e, const amp_tiled_extent *t, amp_kernel *k,
                                 const amp_arg *args, size_t nargs, amp_future **out, const char *fn)
{
    if (!out) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: out is NULL", fn);
    *out = NULL;
    amp_future *f = calloc(1, sizeof *f);
    if (!f) return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "future: out of host memory");
    amp_status st = amp__run(q, e, t, k, args, nargs, &f->ev);
    if (st != AMP_OK) {
        free(f);
        return st;
    }
    *out = f;
    return AMP_OK;
}

amp_status amp_parallel_for_each_async(amp_accelerator_view *q, amp_extent e, amp_kernel *k, const amp_arg *args,
                                       size_t nargs, amp_future **out)
{
    return amp__run_async(q, e, NULL, k, args, nargs, out, "amp_parallel_for_each_async");
}

amp_status amp_parallel_for_each_tiled_async(amp_accelerator_view *q, amp_tiled_extent t, amp_kernel *k,
                                             const amp_arg *args, size_t nargs, amp_future **out)
{
    return amp__run_async(q, t.extent, &t, k, args, nargs, out, "amp_parallel_for_each_tiled_async");
}

amp_status amp_future_wait(amp_future *f)
{
    if (!f) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_future_wait: future is NULL");
    return amp__event_wait(f->ev);
}

amp_status amp_future_is_ready(amp_future *f, bool *done)
{
    if (!f || !done) {
        if (done) *done = false;
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_future_is_ready: %s is NULL", f ? "done" : "future");
    }
    return amp__event_query(f->ev, done);
}

amp_status amp_future_destroy(amp_future *f)
{
    if (!f) return AMP_OK;
    amp__event_release(f->ev);
    free(f);
    return AMP_OK;
}
