/* handle_stress.c — stale handles racing their destroy and the reuse of their shells, for ThreadSanitizer in ci/fiber-tools.sh (Criterion-free, as tiled_stress.c): a thread makes views of the array another destroys and remakes in a shell the pool hands back, so a pointer the racer loaded may reach a shell published again; every call must work or say the handle is dead, and ThreadSanitizer must see the publication ordered before the fields read. Exits non-zero on a wrong status or an escaped destroy. */
#include <hipamp.h>

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

enum { ROUNDS = 1000, RACERS = 2 };

static _Atomic(amp_array *) shared_array;
static atomic_int stop, failed;
static atomic_long tries, views;

static void *racer(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop)) {
        /* Loaded once, used after the destroy may have ended it and a new
         * create taken its shell: a stale pointer, on purpose. */
        amp_array *a = atomic_load_explicit(&shared_array, memory_order_relaxed);
        atomic_fetch_add(&tries, 1);
        if (!a) continue;
        amp_array_view *v = NULL;
        amp_status st = amp_array_view_of_array(a, &v);
        if (st == AMP_OK) {
            atomic_fetch_add(&views, 1);
            amp_array_view_destroy(v);
        } else if (st != AMP_ERROR_INVALID_ARGUMENT) {
            fprintf(stderr, "handle_stress: amp_array_view_of_array: %s: %s\n", amp_status_name(st), amp_last_error());
            atomic_store(&failed, 1);
        }
    }
    return NULL;
}

int main(void)
{
    amp_accelerator *acc = NULL;
    amp_accelerator_view *q = NULL;
    if (amp_accelerator_find("cpu", &acc) != AMP_OK || amp_accelerator_default_view(acc, &q) != AMP_OK) {
        fprintf(stderr, "handle_stress: no CPU accelerator: %s\n", amp_last_error());
        return 1;
    }
    pthread_t th[RACERS];
    for (int i = 0; i < RACERS; ++i)
        if (pthread_create(&th[i], NULL, racer, NULL) != 0) return 1;
    long busy = 0;
    for (int round = 0; round < ROUNDS && !atomic_load(&failed); ++round) {
        amp_array *a = NULL;
        if (amp_array_create(q, 4, amp_extent_1d(64), NULL, &a) != AMP_OK) {
            fprintf(stderr, "handle_stress: round %d: amp_array_create: %s\n", round, amp_last_error());
            atomic_store(&failed, 1);
            break;
        }
        long t = atomic_load(&tries);
        atomic_store(&shared_array, a);
        while (atomic_load(&tries) < t + 2) sched_yield();
        amp_status st;
        while ((st = amp_array_destroy(a)) == AMP_ERROR_BUSY) ++busy;
        if (st != AMP_OK) {
            fprintf(stderr, "handle_stress: round %d: amp_array_destroy: %s\n", round, amp_last_error());
            atomic_store(&failed, 1);
        }
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < RACERS; ++i) pthread_join(th[i], NULL);
    printf("handle_stress: %d rounds, %ld views made, destroy busy %ld times\n", ROUNDS, atomic_load(&views), busy);
    return atomic_load(&failed) || atomic_load(&views) == 0;
}
