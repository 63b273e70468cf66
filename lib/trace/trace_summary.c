/* trace_summary.c — the table AMP_TRACE_SUMMARY=1 prints at exit: the top
 * kernels by device time with their launch counts, bytes moved per
 * direction and reason, copies avoided, builds with their cache outcomes,
 * and time blocked in waits. Events are summed as each flush writes them.
 *
 * Called under the trace's flush lock, which guards the sums. */
#include "trace_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define AMP__TOP_KERNELS 10

typedef struct amp__kagg {
    const char *name; /* interned: lives as long as the process */
    uint64_t launches, device_ns, untimed;
} amp__kagg;

static struct {
    amp__kagg *k; /* by the name's interned id; launches 0: not a kernel seen */
    uint32_t nk;
    uint64_t bytes[5][AMP__WHY_COUNT], copies[5][AMP__WHY_COUNT];
    uint64_t avoided_bytes[5], avoided[5];
    uint64_t builds[4], build_ns, build_failed;
    uint64_t waits, wait_ns;
    uint64_t replays, replay_launches, replay_ns, replay_untimed;
} U;

/* The sums of kernel id (NULL when out of memory or not a string of bt). */
static amp__kagg *amp__kernel_sums(const amp__tbatch *bt, uint32_t id)
{
    if (id >= bt->nstrs) return NULL;
    if (id >= U.nk) {
        uint32_t n = bt->nstrs;
        amp__kagg *k = realloc(U.k, n * sizeof *k);
        if (!k) return NULL;
        memset(k + U.nk, 0, (n - U.nk) * sizeof *k);
        U.k = k;
        U.nk = n;
    }
    U.k[id].name = bt->strs[id];
    return &U.k[id];
}

void amp__summary_add(const amp__tev *e, const amp__tbatch *bt, const amp__placed *p)
{
    const amp__trace_rec *r = &e->r;
    uint64_t ns = p->end > p->start ? p->end - p->start : 0;
    switch (r->kind) {
    case AMP__REC_LAUNCH: {
        amp__kagg *k = amp__kernel_sums(bt, e->name);
        if (!k) break;
        k->launches++;
        if (p->on_device) k->device_ns += (uint64_t)(p->device_ms * 1e6);
        else k->untimed++;
        break;
    }
    case AMP__REC_COPY:
        if (r->sub >= 1 && r->sub <= 4 && r->why < AMP__WHY_COUNT) {
            U.bytes[r->sub][r->why] += r->bytes;
            U.copies[r->sub][r->why]++;
        }
        break;
    case AMP__REC_AVOIDED:
        if (r->sub >= 1 && r->sub <= 4) {
            U.avoided_bytes[r->sub] += r->bytes;
            U.avoided[r->sub]++;
        }
        break;
    case AMP__REC_BUILD:
        if (r->st == AMP_OK && r->sub < 4) U.builds[r->sub]++;
        else if (r->st != AMP_OK) U.build_failed++;
        U.build_ns += ns;
        break;
    case AMP__REC_WAIT:
        U.waits++;
        U.wait_ns += ns;
        break;
    case AMP__REC_GRAPH:
        U.replays++;
        U.replay_launches += r->launches;
        if (p->on_device) U.replay_ns += (uint64_t)(p->device_ms * 1e6);
        else U.replay_untimed++, U.replay_ns += p->end > p->start ? p->end - p->start : 0;
        break;
    default:
        break;
    }
}

static void amp__bytes_text(char *out, size_t n, uint64_t bytes)
{
    if (bytes >= (1ULL << 30)) snprintf(out, n, "%.2f GiB", (double)bytes / (double)(1ULL << 30));
    else if (bytes >= (1ULL << 20)) snprintf(out, n, "%.2f MiB", (double)bytes / (double)(1ULL << 20));
    else if (bytes >= (1ULL << 10)) snprintf(out, n, "%.2f KiB", (double)bytes / 1024.0);
    else snprintf(out, n, "%" PRIu64 " B", bytes);
}

static void amp__print_kernels(FILE *o)
{
    uint32_t order[AMP__TOP_KERNELS];
    int shown = 0;
    uint64_t rest_launches = 0, rest_ns = 0, total_launches = 0;
    uint32_t kernels = 0;
    for (uint32_t i = 0; i < U.nk; ++i)
        if (U.k[i].launches) {
            kernels++;
            total_launches += U.k[i].launches;
        }
    /* Top kernels by device time (selection: the list is short). */
    bool *taken = calloc(U.nk ? U.nk : 1, sizeof *taken);
    while (taken && shown < AMP__TOP_KERNELS) {
        int64_t best = -1;
        for (uint32_t i = 0; i < U.nk; ++i)
            if (!taken[i] && U.k[i].launches &&
                (best < 0 || U.k[i].device_ns > U.k[best].device_ns ||
                 (U.k[i].device_ns == U.k[best].device_ns && U.k[i].launches > U.k[best].launches)))
                best = i;
        if (best < 0) break;
        taken[best] = true;
        order[shown++] = (uint32_t)best;
    }
    for (uint32_t i = 0; taken && i < U.nk; ++i)
        if (!taken[i] && U.k[i].launches) {
            rest_launches += U.k[i].launches;
            rest_ns += U.k[i].device_ns;
        }
    free(taken);
    fprintf(o, "  %-36s %10s %14s %12s\n", "kernel (by device time)", "launches", "device ms", "mean us");
    for (int r = 0; r < shown; ++r) {
        const amp__kagg *k = &U.k[order[r]];
        uint64_t timed = k->launches - k->untimed;
        fprintf(o, "  %-36.36s %10" PRIu64 " %14.3f %12.3f%s\n", k->name, k->launches, (double)k->device_ns / 1e6,
                timed ? (double)k->device_ns / 1e3 / (double)timed : 0.0, k->untimed ? " (some untimed)" : "");
    }
    if (rest_launches)
        fprintf(o, "  %-36s %10" PRIu64 " %14.3f\n", "(other kernels)", rest_launches, (double)rest_ns / 1e6);
    fprintf(o, "  %" PRIu64 " launches of %u kernels\n", total_launches, kernels);
}

static void amp__print_bytes(FILE *o)
{
    fprintf(o, "  %-16s %16s %8s  %s\n", "bytes moved", "bytes", "copies", "by reason");
    for (int d = 1; d <= 4; ++d) {
        uint64_t bytes = 0, copies = 0;
        for (int w = 0; w < AMP__WHY_COUNT; ++w) {
            bytes += U.bytes[d][w];
            copies += U.copies[d][w];
        }
        char total[32];
        amp__bytes_text(total, sizeof total, bytes);
        fprintf(o, "  %-16s %16" PRIu64 " %8" PRIu64 "  (%s)", amp__dir_long(d), bytes, copies, total);
        const char *sep = ": ";
        for (int w = 0; w < AMP__WHY_COUNT; ++w)
            if (U.copies[d][w]) {
                fprintf(o, "%s%s %" PRIu64 " B in %" PRIu64, sep, amp__copy_why_name(w), U.bytes[d][w], U.copies[d][w]);
                sep = ", ";
            }
        fputc('\n', o);
    }
    for (int d = 1; d <= 2; ++d) {
        char t[32];
        amp__bytes_text(t, sizeof t, U.avoided_bytes[d]);
        fprintf(o, "  %-16s %16" PRIu64 " %8" PRIu64 "  (%s not copied %s: discard_data / AMP_WRITE_ONLY)\n",
                d == AMP__H2D ? "avoided h->d" : "avoided d->h", U.avoided_bytes[d], U.avoided[d], t, amp__dir_long(d));
    }
}

void amp__summary_print(FILE *o, uint64_t dropped, uint64_t max_events, const char *file_note)
{
    fprintf(o, "\nhipamp trace summary (pid %ld, %.3f s since the library was loaded)\n", (long)amp__trace_pid,
            (double)(amp__now_ns() - amp__trace_epoch) / 1e9);
    amp__print_kernels(o);
    amp__print_bytes(o);
    fprintf(o, "  builds %" PRIu64 ": %" PRIu64 " compiled, %" PRIu64 " memory-cache hits, %" PRIu64 " disk-cache hits, %" PRIu64
               " prebuilt, %" PRIu64 " failed; %.3f ms\n",
            U.builds[0] + U.builds[1] + U.builds[2] + U.builds[3] + U.build_failed, U.builds[AMP__BUILD_COMPILED],
            U.builds[AMP__BUILD_MEMORY], U.builds[AMP__BUILD_DISK], U.builds[AMP__BUILD_PREBUILT], U.build_failed,
            (double)U.build_ns / 1e6);
    fprintf(o, "  waits %" PRIu64 ": %.3f ms blocked\n", U.waits, (double)U.wait_ns / 1e6);
    if (U.replays)
        fprintf(o, "  graph replays %" PRIu64 " (%" PRIu64 " launches in them): %.3f ms%s\n", U.replays,
                U.replay_launches, (double)U.replay_ns / 1e6,
                U.replay_untimed ? " (device time; on the host clock where the device did not time them)" : " device");
    if (dropped)
        fprintf(o, "  %" PRIu64 " events were not recorded (more than AMP_TRACE_MAX_EVENTS=%" PRIu64
                   " between flushes): call amp_trace_flush() more often or raise it\n",
                dropped, max_events);
    if (file_note) fprintf(o, "  trace: %s\n", file_note);
}
