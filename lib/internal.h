/* internal.h — the core's private structures (accelerators, views, programs,
 * storage coherence state) shared between the lib/ sources. Backends never see these.
 *
 * Lock order (outermost first): storage locks (several at once only in
 * address order, inside a launch) -> program/module locks -> registry lock.
 * Backend calls may be made while holding a storage lock; backends never
 * call back into the core. */
#ifndef AMP_INTERNAL_H
#define AMP_INTERNAL_H

#include "backend.h"
#include "core.h"

#include <stdatomic.h>

struct amp_accelerator {
    amp__device_entry e; /* backend, its device handle, info */
    pthread_mutex_t lock;  /* guards default_view and key_base */
    amp_accelerator_view *default_view;
    bool key_ready;        /* key_base holds the compile-cache key of prelude,
                              backend and cache tag: the part every build shares */
    uint64_t key_base[2];
};

struct amp_accelerator_view {
    amp_accelerator *acc;
    void *queue;
    bool is_default;
    atomic_int refs; /* the user's handle + every amp__event on this queue */
    _Atomic uint64_t bytes_to_device, copies_to_device, bytes_to_host, copies_to_host, launches;
};

/* A completion point shared by everything one launch touched. The driver
 * event is recorded lazily, the first time someone waits on the point or
 * asks about it: most launches are never waited on individually, and a
 * driver event record per launch was most of the library's launch overhead.
 * A late record marks the queue's tail at that moment, which comes after
 * the launch (queues are in order), so waiting on it may also wait for work
 * queued later on the same queue, never for less. */
typedef struct amp__event {
    atomic_int refs;
    amp_accelerator_view *q;
    _Atomic(void *) ev; /* driver event; NULL until first needed */
} amp__event;
/* A point after the work queued so far on q (retains q). */
amp_status amp__event_record(amp_accelerator_view *q, amp__event **out);
amp__event *amp__event_retain(amp__event *e);
void amp__event_release(amp__event *e);
/* Block the host until e passed (NULL: nothing to wait for). */
amp_status amp__event_wait(amp__event *e);
/* Make queue `on` wait (on the device) until e passed. */
amp_status amp__event_order(amp_accelerator_view *on, amp__event *e);
amp_status amp__event_query(amp__event *e, bool *done);

/* A box [lo, hi) in storage coordinates (rank = storage rank). */
typedef struct amp__box { int lo[AMP_MAX_RANK], hi[AMP_MAX_RANK]; } amp__box;
#define AMP__MAX_BOXES 64 /* >= 2 * AMP__SIG_MAX_PARAMS: see storage_prepare */

/* What views and arrays share: the elements, where they are current, and the
 * last launch that used them. Every field below `lock` is guarded by it. */
typedef struct amp__storage {
    pthread_mutex_t lock;
    int refs;
    size_t elem;
    amp_extent ext;             /* full extent */
    int64_t stride[AMP_MAX_RANK]; /* elements */
    char *host;                 /* host memory behind views; NULL for arrays */
    bool is_array;              /* device is home: always current there */
    amp_accelerator *acc;       /* accelerator holding dptr (NULL: none yet) */
    void *dptr;                 /* device buffer or mapped host pointer */
    bool unified;               /* dptr reaches host memory: nothing is copied */
    bool registered;            /* host memory registered with acc */
    amp__box valid[AMP__MAX_BOXES]; /* device regions holding current data */
    int nvalid;
    amp__box dirty[AMP__MAX_BOXES]; /* device regions newer than host */
    int ndirty;
    amp__event *last;           /* last launch or copy that used the storage */
} amp__storage;

struct amp_array {
    amp__storage *s;
    amp_accelerator_view *q;
};

/* A view: storage box with its origin; the view's rank r addresses the
 * storage's last r dimensions (projections drop leading ones). */
struct amp_array_view {
    amp__storage *s;
    amp_index origin;  /* storage coordinates, rank = storage rank */
    amp_extent ext;    /* view extent, rank r <= storage rank */
    amp_access access;
    bool discard;      /* next launch needs no copy-in */
};

void amp__view_box(const amp_array_view *v, amp__box *b);
amp__box amp__whole_box(const amp__storage *s);
/* Element offset of origin (storage coordinates) from the storage's start. */
int64_t amp__storage_offset(const amp__storage *s, const int *origin);
/* Prepare storage for a launch on q (storage lock held): device buffer,
 * copy-in when needs_data, cross-queue ordering. *dptr = device base. */
amp_status amp__storage_prepare(amp__storage *s, amp_accelerator_view *q, const amp__box *b,
                                bool needs_data, bool discard, void **dptr);
/* After the launch was queued (storage lock held). */
void amp__storage_after_launch(amp__storage *s, amp__event *ev, const amp__box *b, bool writes);



/* lib/argument.c: the kind's name with its kernel-side C++ type; checking a
 * value argument against its parameter (position i counted as args[] is);
 * putting a checked value into the pack at the parameter's offset. */
const char *amp__kind_name(int kind);
amp_status amp__arg_check_value(const char *kernel, int i, const amp__sig_param *p, const amp_arg *a);
void amp__arg_put_value(unsigned char *pack, const amp__sig_param *p, const amp_arg *a);

/* lib/signature.c */
int amp__kind_width(int kind);
bool amp__signature_valid(const amp__signature *g, char *why, size_t n);

/* Programs: modules are shared through the in-memory cache. */
typedef struct amp__module amp__module;
struct amp_kernel {
    amp__module *m;
    char *name;
    void *fn;
    amp__signature sig;
};
amp_accelerator *amp__kernel_accelerator(const amp_kernel *k);
/* Remember ev as the module's latest launch (unload waits for it). */
void amp__module_note_launch(amp__module *m, amp__event *ev);

/* Registry */
amp_status amp__registry(amp_accelerator **list, size_t *count);
amp_status amp__default_view(amp_accelerator *a, amp_accelerator_view **out);

/* Count a copy on q's statistics. */
void amp__view_release(amp_accelerator_view *q);
void amp__count_copy(amp_accelerator_view *q, amp__copy_dir dir, uint64_t bytes);

/* Launch used by the sync and async entry points; *ev gets the launch's
 * completion (caller releases) when ev is not NULL. */
amp_status amp__run(amp_accelerator_view *q, amp_extent e, const amp_tiled_extent *t,
                       amp_kernel *k, const amp_arg *args, size_t nargs, amp__event **ev);

#endif /* AMP_INTERNAL_H */
