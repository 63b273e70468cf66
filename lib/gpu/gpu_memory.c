/* gpu_memory.c — the GPU backend's memory (lib/backend.h's mem_*, host_register, copy, copy_peer, peer_info): device buffers, host ranges registered for zero-copy views and shared between storages, copies with their size checks, and peer access between two GPUs of one driver, looked up once and turned on both ways before the first copy that crosses the pair. */
#include "gpu_dev.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

amp_status amp__gpu_mem_alloc(void *dev, size_t bytes, void **dptr)
{
    gpu_dev *d = GPU_DEV(dev);
    amp_status st;
    *dptr = NULL;
    /* Both drivers refuse a 0-byte allocation; an empty buffer still needs a
     * distinct, freeable address. */
    ON_DEVICE(d, st, st = d->drv->mem_alloc(bytes ? bytes : 1, dptr));
    return st;
}

void amp__gpu_mem_free(void *dev, void *dptr)
{
    gpu_dev *d = GPU_DEV(dev);
    if (!dptr) return;
    ON_DEVICE_VOID(d, d->drv->mem_free(dptr));
}

/* The unified path maps each storage's host memory (lib/core/storage.c). Views may
 * share host memory (two views of one C array, a view of a part of another's
 * range, views of one array on two GPUs), and the user may have pinned or
 * registered it already, so: a range inside one we registered shares that
 * registration (counted, whichever device uses it); memory the driver
 * reports as already registered or managed is used through its own mapping
 * and never unregistered by us; only ranges we registered are unregistered,
 * when their last user on any device goes.
 *
 * One table for the process, not one a device: the drivers register host
 * memory for every device at once (portable; HIP's NVIDIA platform through
 * CUDA's registrations), so a range GPU 0 registered is "already
 * registered" for GPU 1, which maps it through that registration; were it
 * unregistered when GPU 0's last view went, GPU 1's kernels would read
 * unmapped memory (an illegal address: the context lost). Each region
 * counts its users a device, so that a device's release drops only a use
 * that device's registration took (a device that recorded nothing, for
 * memory the user pinned or that it reads pageable, drops nothing).
 * host_regions_lock is held across the drivers' register and unregister
 * calls (a registration never races with the unregistration of the same
 * range) and is taken before entering a device; nothing else is taken
 * under it. */
typedef struct host_region_user {
    gpu_dev *dev;
    size_t refs; /* its storages inside the region */
} host_region_user;
typedef struct host_region {
    char *host;
    size_t bytes;
    gpu_dev *owner; /* registered it, and unregisters it */
    char *dptr;     /* owner's address of host */
    host_region_user *users;
    size_t nusers, users_cap; /* unregistered when the last user goes */
} host_region;
static pthread_mutex_t host_regions_lock = PTHREAD_MUTEX_INITIALIZER;
static host_region *host_regions;
static size_t host_nregions, host_regions_cap;

static host_region_user *region_user(host_region *r, const gpu_dev *d)
{
    for (size_t i = 0; i < r->nusers; ++i)
        if (r->users[i].dev == d) return &r->users[i];
    return NULL;
}

/* The region holding [lo, hi) for d: one d registered, else one another
 * device of its driver did, else one of another driver (HIP's NVIDIA
 * platform over CUDA's registrations); with `using`, only regions where d
 * has a use. NULL where none holds it whole. */
static host_region *region_holding(const gpu_dev *d, const char *lo, const char *hi, bool using)
{
    host_region *same_driver = NULL, *other = NULL;
    for (size_t i = 0; i < host_nregions; ++i) {
        host_region *r = &host_regions[i];
        if (lo < r->host || hi > r->host + r->bytes) continue;
        if (using && !region_user(r, d)) continue;
        if (r->owner == d) return r;
        if (r->owner->drv == d->drv) {
            if (!same_driver) same_driver = r;
        } else if (!other) {
            other = r;
        }
    }
    return same_driver ? same_driver : other;
}

/* Room for one more user of r (d's entry, refs 0, where it had none). */
static amp_status region_add_user(host_region *r, gpu_dev *d)
{
    if (region_user(r, d)) return AMP_OK;
    if (r->nusers == r->users_cap) {
        size_t cap = r->users_cap ? r->users_cap * 2 : 4;
        host_region_user *u = realloc(r->users, cap * sizeof *u);
        if (!u) return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "cannot grow a host registration's user list to %zu", cap);
        r->users = u;
        r->users_cap = cap;
    }
    r->users[r->nusers++] = (host_region_user){d, 0};
    return AMP_OK;
}

/* Drops d's entry from r where it has no use left; true when r has no
 * user left (the caller unregisters and removes it). */
static bool region_drop_unused(host_region *r, const gpu_dev *d)
{
    host_region_user *u = region_user(r, d);
    if (u && u->refs == 0) *u = r->users[--r->nusers];
    return r->nusers == 0;
}

static void region_remove(host_region *r)
{
    free(r->users);
    *r = host_regions[--host_nregions];
}

amp_status amp__gpu_host_register(void *dev, void *host, size_t bytes, void **dptr)
{
    gpu_dev *d = GPU_DEV(dev);
    amp_status st = AMP_OK;
    *dptr = NULL;
    if (!host || bytes == 0 || bytes > UINTPTR_MAX - (uintptr_t)host)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "cannot register host memory %p of %zu bytes", host, bytes);
    /* The device reads pageable memory at its own address (an APU such as
     * MI300A, or HMM): registering would only pin pages. Nothing is recorded,
     * so host_unregister leaves it alone. */
    if (d->di.pageable_access) {
        *dptr = host;
        return AMP_OK;
    }
    char *lo = host, *hi = lo + bytes;
    void *p = NULL;
    bool owned = false;
    host_region_user *fresh = NULL;
    host_region *in = NULL;
    pthread_mutex_lock(&host_regions_lock);
    /* Room first (a table slot, a user list for a new region), so that a
     * registration we made is always recorded; the table may move, so the
     * region is looked up after. */
    if (host_nregions == host_regions_cap) {
        size_t cap = host_regions_cap ? host_regions_cap * 2 : 16;
        host_region *grown = realloc(host_regions, cap * sizeof *grown);
        if (!grown) {
            st = amp__fail(AMP_ERROR_OUT_OF_MEMORY, "cannot grow the host registration table to %zu entries", cap);
            goto done;
        }
        host_regions = grown;
        host_regions_cap = cap;
    }
    if (!(fresh = malloc(4 * sizeof *fresh))) {
        st = amp__fail(AMP_ERROR_OUT_OF_MEMORY, "no memory for a host registration's user list");
        goto done;
    }
    in = region_holding(d, lo, hi, false);
    if (in && (st = region_add_user(in, d)) != AMP_OK) goto done;
    if (in && in->owner == d) {
        region_user(in, d)->refs++;
        *dptr = in->dptr + (lo - in->host);
        goto done;
    }
    if (!in) {
        for (size_t i = 0; i < host_nregions; ++i) {
            const host_region *r = &host_regions[i];
            /* Another driver's registration is its own (a driver of the
             * same stack refuses the overlap itself, below). */
            if (r->owner->drv == d->drv && lo < r->host + r->bytes && hi > r->host) {
                /* The driver cannot extend a registration, and the part
                 * outside r would have no mapping. */
                st = amp__fail(AMP_ERROR_UNSUPPORTED,
                               "host memory %p (%zu bytes) partly overlaps host memory %p (%zu bytes) already mapped "
                               "for another view on %s:%d; on the mapped-memory path, views that share host memory "
                               "must lie inside the first one mapped",
                               host, bytes, (void *)r->host, r->bytes, r->owner->drv->platform, r->owner->ordinal);
                goto done;
            }
        }
    }
    /* Inside another device's registration: the driver finds the range
     * registered and gives this device's address of it (owned stays false:
     * a use of that region); a driver of another stack may register it
     * anew (owned: a region of this device's). */
    ON_DEVICE(d, st, st = d->drv->host_register(host, bytes, &p, &owned));
    if (st != AMP_OK) goto done;
    if (owned) {
        fresh[0] = (host_region_user){d, 1};
        host_regions[host_nregions++] = (host_region){lo, bytes, d, p, fresh, 1, 4};
        fresh = NULL;
    } else if (in) {
        region_user(in, d)->refs++;
    }
    *dptr = p;
done:
    /* A user entry added for a use that did not happen goes again (in has
     * other users: it is never left empty here). */
    if (in) (void)region_drop_unused(in, d);
    pthread_mutex_unlock(&host_regions_lock);
    free(fresh);
    return st;
}

void amp__gpu_host_unregister(void *dev, void *host)
{
    gpu_dev *d = GPU_DEV(dev);
    char *h = host;
    if (!host || d->di.pageable_access) return;
    pthread_mutex_lock(&host_regions_lock);
    host_region *r = region_holding(d, h, h + 1, true);
    if (r) {
        region_user(r, d)->refs--;
        if (region_drop_unused(r, d)) {
            gpu_dev *owner = r->owner;
            ON_DEVICE_VOID(owner, owner->drv->host_unregister(r->host));
            region_remove(r);
        }
    }
    pthread_mutex_unlock(&host_regions_lock);
}

static bool mul_overflows(size_t a, size_t b, size_t *out)
{
    if (a && b > SIZE_MAX / a) return true;
    *out = a * b;
    return false;
}

/* A box copy becomes the fewest driver copies that describe it: one linear
 * copy when both sides are dense, one 2D copy when only rows are padded but
 * slices follow each other (slice pitch == row pitch * height), else one 2D
 * copy per slice. 2D copies take pageable host memory on both drivers, unlike
 * 3D ones on HIP 5.2 (whose HIP_MEMCPY3D has 32-bit fields and an enum that
 * ROCm 6 renumbered). */
amp_status amp__gpu_copy(void *dev, void *queue, const amp__copy *c)
{
    gpu_dev *d = GPU_DEV(dev);
    amp_status st;
    if (!c || !c->dst || !c->src)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "copy with NULL %s", !c ? "descriptor" : !c->dst ? "dst" : "src");
    if (c->dir != AMP__H2D && c->dir != AMP__D2H && c->dir != AMP__D2D)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "copy direction %d is not H2D/D2H/D2D on a GPU", (int)c->dir);
    size_t w = c->width_bytes, h = c->height, z = c->depth;
    if (w == 0 || h == 0 || z == 0) return AMP_OK;
    /* A single row needs no pitch; a single slice needs no slice pitch. */
    size_t sp = h > 1 ? c->src_pitch : w, dp = h > 1 ? c->dst_pitch : w;
    if (sp < w || dp < w)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "copy row of %zu bytes exceeds its pitch (src %zu, dst %zu)", w,
                         c->src_pitch, c->dst_pitch);
    size_t sslab = 0, dslab = 0, total = 0, rows = 0;
    if (mul_overflows(sp, h, &sslab) || mul_overflows(dp, h, &dslab) || mul_overflows(h, z, &rows) ||
        mul_overflows(w, rows, &total))
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "copy box %zu x %zu x %zu bytes overflows", z, h, w);
    size_t ss = z > 1 ? c->src_slice_pitch : sslab, ds = z > 1 ? c->dst_slice_pitch : dslab;
    if (ss < sslab || ds < dslab)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "copy slice of %zu rows exceeds its slice pitch (src %zu, dst %zu)",
                         h, c->src_slice_pitch, c->dst_slice_pitch);
    bool slices_follow = ss == sslab && ds == dslab;
    /* CUDA refuses a 2-D copy whose pitch passes the device's largest
     * (2^31 - 1 bytes on every GPU so far): a section of an array whose rows
     * are longer than that goes a row at a time. */
    bool wide = (sp > (size_t)INT_MAX || dp > (size_t)INT_MAX) && !(slices_follow && sp == w && dp == w);
    ON_DEVICE(d, st, {
        if (slices_follow && sp == w && dp == w) {
            st = d->drv->memcpy_1d(c->dir, c->dst, c->src, total, queue);
        } else if (wide) {
            for (size_t k = 0; k < z && st == AMP_OK; ++k)
                for (size_t r = 0; r < h && st == AMP_OK; ++r)
                    st = d->drv->memcpy_1d(c->dir, (char *)c->dst + k * ds + r * dp,
                                           (const char *)c->src + k * ss + r * sp, w, queue);
        } else if (slices_follow) {
            st = d->drv->memcpy_2d(c->dir, c->dst, dp, c->src, sp, w, rows, queue);
        } else {
            for (size_t k = 0; k < z && st == AMP_OK; ++k)
                st = d->drv->memcpy_2d(c->dir, (char *)c->dst + k * ds, dp, (const char *)c->src + k * ss, sp, w, h,
                                       queue);
        }
    });
    return st;
}


/* d's entry for peer t, looked up (the driver asked both ways) on first
 * use. peer_lock held. NULL when the table is full. */
static gpu_peer *peer_entry(gpu_dev *d, gpu_dev *t)
{
    for (size_t i = 0; i < d->npeers; ++i)
        if (d->peers[i].dev == t) return &d->peers[i];
    if (d->npeers == GPU_MAX_PEERS) return NULL;
    gpu_peer *p = &d->peers[d->npeers++];
    memset(p, 0, sizeof *p);
    p->dev = t;
    char there[128] = "", back[128] = "";
    bool to = false, from = false;
    amp_status st = d->drv->peer_possible(d->ordinal, t->ordinal, &to, there, sizeof there);
    if (st == AMP_OK) st = d->drv->peer_possible(t->ordinal, d->ordinal, &from, back, sizeof back);
    p->possible = st == AMP_OK && to && from;
    if (st != AMP_OK)
        snprintf(p->why, sizeof p->why, "through host memory: asking the driver failed: %s", amp_last_error());
    else if (p->possible)
        snprintf(p->why, sizeof p->why, "peer access possible both ways (%s; %s)", there, back);
    else
        snprintf(p->why, sizeof p->why, "through host memory: no peer access both ways (%s; %s)", there, back);
    return p;
}

/* Peer access between d and t, turned on both ways once, before the first
 * copy between them. A failure is kept (why) and the copies go on through
 * the driver's staged path, as without peer access. */
static void peer_prepare(gpu_dev *d, gpu_dev *t)
{
    pthread_mutex_lock(&d->peer_lock);
    gpu_peer *p = peer_entry(d, t);
    if (p && p->possible && !p->tried) {
        amp_status st, st2 = AMP_OK;
        ON_DEVICE(d, st, st = d->drv->peer_enable(t->ctx, t->ordinal));
        if (st == AMP_OK) ON_DEVICE(t, st2, st2 = t->drv->peer_enable(d->ctx, d->ordinal));
        p->tried = true;
        p->enabled = st == AMP_OK && st2 == AMP_OK;
        char was[sizeof p->why];
        snprintf(was, sizeof was, "%s", p->why);
        if (p->enabled)
            snprintf(p->why, sizeof p->why, "peer access on both ways (%.200s)", was);
        else
            snprintf(p->why, sizeof p->why, "through host memory: turning peer access on failed: %s", amp_last_error());
    }
    pthread_mutex_unlock(&d->peer_lock);
}

/* A copy to another device of the same driver: over the peer link once
 * peer access is on (the first copy between the two turns it on where the
 * driver allows), through host memory by the driver otherwise. */
amp_status amp__gpu_copy_peer(void *dev, void *queue, void *dst_dev, void *dst, const void *src, size_t bytes)
{
    gpu_dev *d = GPU_DEV(dev), *t = GPU_DEV(dst_dev);
    amp_status st;
    if (t->drv != d->drv)
        return amp__fail(AMP_ERROR_UNSUPPORTED, "no peer copy between %s:%d and %s:%d", d->drv->platform, d->ordinal,
                         t->drv->platform, t->ordinal);
    if (!bytes) return AMP_OK;
    if (t != d) peer_prepare(d, t);
    ON_DEVICE(d, st, st = d->drv->memcpy_peer(dst, t->ctx, src, d->ctx, bytes, queue));
    return st;
}

amp_status amp__gpu_peer_info(void *dev, void *dst_dev, bool *direct, bool *enabled, char *why, size_t n)
{
    gpu_dev *d = GPU_DEV(dev), *t = GPU_DEV(dst_dev);
    *direct = *enabled = false;
    if (t->drv != d->drv) {
        snprintf(why, n, "through host memory: %s:%d and %s:%d are GPUs of two drivers", d->drv->platform,
                 d->ordinal, t->drv->platform, t->ordinal);
        return AMP_OK;
    }
    if (t == d) {
        snprintf(why, n, "one device: copies stay in its memory");
        return AMP_OK;
    }
    pthread_mutex_lock(&d->peer_lock);
    gpu_peer *p = peer_entry(d, t);
    if (p) {
        *direct = p->possible && (!p->tried || p->enabled);
        *enabled = p->enabled;
        snprintf(why, n, "%s%s", p->why, p->possible && !p->tried ? "; turned on before the first copy" : "");
    } else {
        snprintf(why, n, "through host memory: more than %d peers", GPU_MAX_PEERS);
    }
    pthread_mutex_unlock(&d->peer_lock);
    return AMP_OK;
}
