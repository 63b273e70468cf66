/* alg/user.c — user-defined reductions (amp_reduction_*): a reduction
 * compiled from the user's expressions and parameter lists (checked by
 * alg/text.c's rule before any code is generated around them), applied to
 * the host or (_async) into a one-element array or view, and the state its
 * scans (alg/scan.c) build on first use. */
#include "alg.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct amp_reduction {
    amp__handle h;           /* AMP__HANDLE_REDUCTION */
    amp_accelerator *acc;
    amp__alg_user u;         /* its strings point into the copies below */
    char label[64];
    char *map, *reduce, *identity, *post, *preamble;
    amp__alg_prog prog;      /* reduce kernels */
    /* Guards scan (a leaf), held while the scan builds: in a child forked
     * then, never released. */
    amp__lock lock;
    amp__alg_prog scan;      /* built at the first amp_reduction_scan */
};

/* The amp_type of a parameter's type as written ("float", "unsigned int",
 * "int64_t", ...), 0 when none. */
static amp_type amp__alg_type_named(const char *s)
{
    static const struct {
        const char *name;
        amp_type t;
    } names[] = {
        {"int", AMP_TYPE_INT32},
        {"int32_t", AMP_TYPE_INT32},
        {"signed", AMP_TYPE_INT32},
        {"signed int", AMP_TYPE_INT32},
        {"unsigned", AMP_TYPE_UINT32},
        {"unsigned int", AMP_TYPE_UINT32},
        {"uint32_t", AMP_TYPE_UINT32},
        {"long long", AMP_TYPE_INT64},
        {"long long int", AMP_TYPE_INT64},
        {"int64_t", AMP_TYPE_INT64},
        {"unsigned long long", AMP_TYPE_UINT64},
        {"unsigned long long int", AMP_TYPE_UINT64},
        {"uint64_t", AMP_TYPE_UINT64},
        {"float", AMP_TYPE_FLOAT32},
        {"double", AMP_TYPE_FLOAT64},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i)
        if (!strcmp(s, names[i].name)) return names[i].t;
    return (amp_type)0;
}

static bool amp__alg_ident(const char *s, size_t n)
{
    if (n == 0 || n > 63 || !(isalpha((unsigned char)s[0]) || s[0] == '_')) return false;
    for (size_t i = 1; i < n; ++i)
        if (!(isalnum((unsigned char)s[i]) || s[i] == '_')) return false;
    return true;
}

/* Parse "type name, type name" into types and names (at most max); what
 * names the list in messages. */
static amp_status amp__alg_params(const char *what, const char *list, int max, amp_type *types, char (*names)[64],
                                  int *count)
{
    *count = 0;
    const char *p = list;
    while (p && *p) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        /* Words of the entry, spaces collapsed; "const" dropped. */
        char words[8][64];
        int nw = 0;
        for (size_t i = 0; i < len;) {
            while (i < len && isspace((unsigned char)p[i])) ++i;
            size_t j = i;
            while (j < len && !isspace((unsigned char)p[j])) ++j;
            if (j > i) {
                if (nw == 8 || j - i >= 64)
                    return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_reduction_create: %s: \"%.*s\" is not "
                                     "\"type name\"", what, (int)len, p);
                memcpy(words[nw], p + i, j - i);
                words[nw][j - i] = '\0';
                if (strcmp(words[nw], "const")) ++nw;
            }
            i = j;
        }
        if (nw < 2)
            return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_reduction_create: %s: \"%.*s\" is not \"type name\"",
                             what, (int)len, p);
        /* At most 7 words of 63 characters and their spaces: it fits. */
        char type[sizeof words] = "";
        for (int w = 0, at = 0; w < nw - 1; ++w)
            at += snprintf(type + at, sizeof type - (size_t)at, "%s%s", w ? " " : "", words[w]);
        const char *name = words[nw - 1];
        amp_type t = amp__alg_type_named(type);
        if (!t)
            return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_reduction_create: %s: type \"%s\" of '%s' is not one "
                             "of int32_t, uint32_t, int64_t, uint64_t, float, double", what, type, name);
        if (!amp__alg_ident(name, strlen(name)) || !strcmp(name, "i") || !strcmp(name, "a") || !strcmp(name, "b") ||
            !strncmp(name, "amp__", 5))
            return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_reduction_create: %s: '%s' cannot name a parameter (an "
                             "identifier other than i, a, b and amp__...)", what, name);
        if (*count == max)
            return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_reduction_create: %s: more than %d parameters", what,
                             max);
        types[*count] = t;
        snprintf(names[*count], 64, "%.63s", name);
        ++*count;
        p = end ? end + 1 : NULL;
        /* A comma that ends the list stands before an entry that is not
         * there: refused as an empty entry elsewhere in the list is. */
        if (p && !*p)
            return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_reduction_create: %s: \"%s\" ends in a comma (an "
                             "entry \"type name\" missing after it)", what, list);
    }
    return AMP_OK;
}

/* Release what r holds and give its shell back (a failed create's, or one
 * its destroy ended). */
static void amp__alg_reduction_free(amp_reduction *r)
{
    if (!r) return;
    amp__alg_prog_release(&r->prog);
    amp__alg_prog_release(&r->scan);
    free(r->map);
    free(r->reduce);
    free(r->identity);
    free(r->post);
    free(r->preamble);
    amp__handle_free(r, AMP__HANDLE_REDUCTION);
}

amp_status amp_reduction_create(amp_accelerator *a, const amp_reduction_desc *d, amp_reduction **out)
{
    amp_status st = AMP_OK;
    amp_reduction *r = NULL;
    AMP__NOT_NULL(out);
    *out = NULL;
    AMP__NOT_NULL(d);
    static const char *const fields[] = {"inputs", "map", "reduce", "identity"};
    const char *const given[] = {d->inputs, d->map, d->reduce, d->identity};
    for (int i = 0; i < 4; ++i)
        if (!given[i] || !*given[i])
            return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_reduction_create: %s is %s", fields[i],
                             given[i] ? "empty" : "NULL");
    if ((st = amp__alg_type_ok("amp_reduction_create", d->type)) != AMP_OK) return st;
    const char *name = d->name ? d->name : "reduction";
    if (!amp__alg_ident(name, strlen(name)))
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_reduction_create: name \"%.80s\" is not letters, digits and "
                         "'_' (at most 63)", name);
    if (!a && (st = amp_accelerator_default(&a)) != AMP_OK) return st;
    AMP__ACCEL_OK(a); /* before the build reads its geometry */
    if (!(r = amp__handle_new_unpublished(AMP__HANDLE_REDUCTION, sizeof *r)))
        return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "amp_reduction_create: out of host memory");
    amp__lock_init(&r->lock);
    r->acc = a;
    snprintf(r->label, sizeof r->label, "%s", name);
    amp__alg_user *u = &r->u;
    if ((st = amp__alg_params("inputs", d->inputs, AMP__ALG_MAX_PARAMS, u->in_type, u->in_name, &u->ninputs)) !=
        AMP_OK)
        goto fail;
    if (u->ninputs == 0) {
        st = amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_reduction_create: inputs lists no parameter");
        goto fail;
    }
    if (d->scalars &&
        (st = amp__alg_params("scalars", d->scalars, AMP__ALG_MAX_PARAMS, u->sc_type, u->sc_name, &u->nscalars)) !=
            AMP_OK)
        goto fail;
    for (int i = 0; i < u->ninputs + u->nscalars; ++i)
        for (int j = 0; j < i; ++j) {
            const char *x = i < u->ninputs ? u->in_name[i] : u->sc_name[i - u->ninputs];
            const char *y = j < u->ninputs ? u->in_name[j] : u->sc_name[j - u->ninputs];
            if (!strcmp(x, y)) {
                st = amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_reduction_create: '%s' names two parameters", x);
                goto fail;
            }
        }
    r->map = amp__strdup(d->map);
    r->reduce = amp__strdup(d->reduce);
    r->identity = amp__strdup(d->identity);
    r->post = d->post ? amp__strdup(d->post) : NULL;
    r->preamble = d->preamble ? amp__strdup(d->preamble) : NULL;
    if (!r->map || !r->reduce || !r->identity || (d->post && !r->post) || (d->preamble && !r->preamble)) {
        st = amp__fail(AMP_ERROR_OUT_OF_MEMORY, "amp_reduction_create: out of host memory");
        goto fail;
    }
    u->label = r->label;
    u->type = d->type;
    u->map = r->map;
    u->reduce = r->reduce;
    u->identity = r->identity;
    u->post = r->post;
    u->preamble = r->preamble;
    if ((st = amp__alg_build_user(a, u, false, &r->prog)) != AMP_OK) goto fail;
    amp__handle_publish(r, AMP__HANDLE_REDUCTION); /* whole only now: the build took seconds */
    *out = r;
    return AMP_OK;
fail:
    amp__alg_reduction_free(r);
    return st;
}

/* A reduction whose scan another thread of the parent was building when
 * this process forked: its lock stays held in the child. */
static amp_status amp__alg_reduction_forked(const amp_reduction *r, const char *fn)
{
    return amp__fail(AMP_ERROR_DEVICE,
                     "%s: the scan of reduction '%s' was being built by another thread when this process was "
                     "forked; in this process the reduction can neither scan nor be destroyed (it is kept)", fn,
                     r->label);
}

amp_status amp_reduction_destroy(amp_reduction *r)
{
    if (!r) return AMP_OK;
    AMP__HANDLE_OK(r, AMP__HANDLE_REDUCTION);
    if (!amp__lock_acquire_or_forked(&r->lock)) return amp__alg_reduction_forked(r, __func__);
    int graphs = amp__alg_prog_graphs(&r->prog) + amp__alg_prog_graphs(&r->scan);
    amp__lock_release(&r->lock);
    if (graphs)
        return amp__fail(AMP_ERROR_BUSY, "amp_reduction_destroy: launch graphs launch the kernels of reduction '%s' "
                         "(%d binding(s)): destroy them first", r->label, graphs);
    amp_status st = amp__handle_end(r, AMP__HANDLE_REDUCTION, __func__, "r");
    if (st != AMP_OK) return st;
    amp__alg_reduction_free(r);
    return AMP_OK;
}

/* Check args against r's parameters (ninputs_used of its inputs: scans use
 * its one input) and resolve the inputs into d; the kernel's input
 * parameters into in (each input's span and shape, then the scalars). */
static amp_status amp__alg_user_args(const char *fn, amp_reduction *r, const amp_arg *args, size_t nargs,
                                     amp__alg_data *d, amp_arg *in, size_t *nin)
{
    static const amp_arg_kind kinds[] = {0, AMP_ARG_INT32, AMP_ARG_UINT32, AMP_ARG_INT64, AMP_ARG_UINT64,
                                         AMP_ARG_FLOAT32, AMP_ARG_FLOAT64};
    const amp__alg_user *u = &r->u;
    amp_status st;
    size_t want = (size_t)(u->ninputs + u->nscalars);
    if (!args && nargs) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: args is NULL, nargs %zu", fn, nargs);
    if (nargs != want)
        return amp__fail(AMP_ERROR_ARGUMENT_MISMATCH, "%s: reduction '%s' takes %d inputs and %d scalars (%zu "
                         "arguments); %zu given", fn, r->label, u->ninputs, u->nscalars, want, nargs);
    size_t k = 0;
    for (int i = 0; i < u->ninputs; ++i) {
        char what[96];
        snprintf(what, sizeof what, "input %d ('%s')", i, u->in_name[i]);
        if (args[i].kind != AMP_ARG_VIEW && args[i].kind != AMP_ARG_ARRAY)
            return amp__fail(AMP_ERROR_ARGUMENT_MISMATCH, "%s: %s of reduction '%s' must be a view or an array, not "
                             "%s", fn, what, r->label, args[i].kind ? amp__kind_name(args[i].kind) : "empty");
        st = amp__alg_resolve(fn, what, args[i], amp_type_size(u->in_type[i]), amp_type_name(u->in_type[i]), &d[i]);
        if (st == AMP_ERROR_INVALID_ARGUMENT && d[i].s) st = AMP_ERROR_ARGUMENT_MISMATCH; /* the element size */
        if (st != AMP_OK) return st;
        if (d[i].shape.n != d[0].shape.n)
            return amp__fail(AMP_ERROR_INVALID_EXTENT, "%s: input 0 ('%s') holds %lld elements and %s %lld", fn,
                             u->in_name[0], (long long)d[0].shape.n, what, (long long)d[i].shape.n);
        in[k++] = amp__alg_span(&d[i], false);
        in[k++] = amp__alg_shape_arg(&d[i]);
    }
    for (int i = 0; i < u->nscalars; ++i) {
        const amp_arg *x = &args[u->ninputs + i];
        if (x->kind != kinds[u->sc_type[i]])
            return amp__fail(AMP_ERROR_ARGUMENT_MISMATCH, "%s: scalar '%s' of reduction '%s' is %s; argument is %s",
                             fn, u->sc_name[i], r->label, amp__kind_name(kinds[u->sc_type[i]]),
                             x->kind ? amp__kind_name(x->kind) : "empty");
        in[k++] = *x;
    }
    *nin = k;
    return AMP_OK;
}

static amp_status amp__alg_user_apply(const char *fn, amp_accelerator_view *q, amp_reduction *r, const amp_arg *args,
                                      size_t nargs, void *host, const amp_arg *result, amp_future **out)
{
    amp__alg_data d[AMP__ALG_MAX_PARAMS + 1];
    amp_arg in[2 * AMP__ALG_MAX_PARAMS + AMP__ALG_MAX_PARAMS];
    size_t nin = 0;
    amp_status st;
    if (out) *out = NULL;
    if (q && (st = amp__handle_check(q, AMP__HANDLE_QUEUE, fn, "q")) != AMP_OK) return st;
    if ((st = amp__handle_check(r, AMP__HANDLE_REDUCTION, fn, "r")) != AMP_OK) return st;
    size_t rsize = amp_type_size(r->u.type);
    if ((st = amp__alg_user_args(fn, r, args, nargs, d, in, &nin)) != AMP_OK) return st;
    amp__alg_data *res = &d[r->u.ninputs];
    if (result && (st = amp__alg_result(fn, *result, rsize, amp_type_name(r->u.type), res)) != AMP_OK) return st;
    for (int i = 0; result && i < r->u.ninputs; ++i) {
        char what[96];
        snprintf(what, sizeof what, "input %d ('%s')", i, r->u.in_name[i]);
        if ((st = amp__alg_apart(fn, "result", res, what, &d[i])) != AMP_OK) return st;
    }
    if (!q && (st = amp__accelerator_queue(r->acc, &q)) != AMP_OK) return st;
    if (host && (st = amp__alg_not_recording(fn, q, true)) != AMP_OK) return st;
    for (int i = 0; host && i < r->u.ninputs; ++i) {
        char what[96];
        snprintf(what, sizeof what, "input %d ('%s')", i, r->u.in_name[i]);
        if ((st = amp__alg_data_not_recorded(fn, what, &d[i])) != AMP_OK) return st;
    }
    if (q->acc != r->acc)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: reduction '%s' was built for %s; the accelerator view is on "
                         "%s", fn, r->label, r->acc->e.info.device_path, q->acc->e.info.device_path);
    if (host) return amp__alg_reduce_to_host(q, &r->prog, in, nin, d[0].shape.n, AMP__ALG_OP_USER, r->prog.osize, host);
    amp__alg_run run;
    if ((st = amp__alg_run_begin(&run, q, true, out != NULL)) != AMP_OK) return st;
    st = amp__alg_reduce_into(&run, &r->prog, in, nin, d[0].shape.n, AMP__ALG_OP_USER, NULL, amp__alg_span(res, true));
    return amp__alg_run_end(&run, st, out);
}

amp_status amp_reduction_apply(amp_accelerator_view *q, amp_reduction *r, const amp_arg *args, size_t nargs,
                               void *result)
{
    AMP__NOT_NULL(result);
    amp_status st = amp__alg_user_apply(__func__, q, r, args, nargs, result, NULL, NULL);
    /* On failure *result is zeroed (hipamp.h's out-parameters), as many
     * bytes as r's type has: none where r is no live reduction. */
    if (st != AMP_OK && amp__handle_alive(r, AMP__HANDLE_REDUCTION)) memset(result, 0, amp_type_size(r->u.type));
    return st;
}

amp_status amp_reduction_apply_async(amp_accelerator_view *q, amp_reduction *r, const amp_arg *args, size_t nargs,
                                     amp_arg result, amp_future **out)
{
    return amp__alg_user_apply(__func__, q, r, args, nargs, NULL, &result, out);
}

/* Used by lib/alg/scan.c: r's checked arguments, then (once out is
 * checked too, so that a refused call compiles nothing) its scan program,
 * built at the first call. */
amp_status amp__alg_user_scan_prepare(amp_accelerator_view **q, amp_reduction *r, const amp_arg *args, size_t nargs,
                                      amp__alg_data *d, amp_arg *in, size_t *nin, amp_type *type,
                                      amp_type *in_type)
{
    const char *fn = "amp_reduction_scan";
    amp_status st;
    if (*q && (st = amp__handle_check(*q, AMP__HANDLE_QUEUE, fn, "q")) != AMP_OK) return st;
    if ((st = amp__handle_check(r, AMP__HANDLE_REDUCTION, fn, "r")) != AMP_OK) return st;
    if (r->u.ninputs != 1)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: reduction '%s' has %d inputs; a scan takes one", fn,
                         r->label, r->u.ninputs);
    if ((st = amp__alg_user_args(fn, r, args, nargs, d, in, nin)) != AMP_OK) return st;
    if (!*q && (st = amp__accelerator_queue(r->acc, q)) != AMP_OK) return st;
    if ((*q)->acc != r->acc)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: reduction '%s' was built for %s; the accelerator view is on "
                         "%s", fn, r->label, r->acc->e.info.device_path, (*q)->acc->e.info.device_path);
    *type = r->u.type;
    *in_type = r->u.in_type[0];
    return AMP_OK;
}

amp_status amp__alg_user_scan_program(amp_reduction *r, const char *fn, const amp__alg_prog **p)
{
    amp_status st = AMP_OK;
    if (!amp__lock_acquire_or_forked(&r->lock)) return amp__alg_reduction_forked(r, fn);
    if (!r->scan.p) st = amp__alg_build_user(r->acc, &r->u, true, &r->scan);
    amp__lock_release(&r->lock);
    if (st != AMP_OK) return st;
    *p = &r->scan;
    return AMP_OK;
}
