/* trace_json.c — the Chrome trace-event text of a trace: the file's head and
 * closing text, each event as one JSON object, and the names of the tracks
 * (processes: the host, each accelerator; threads: each host thread, each
 * queue) announced before the first event on them. Strings are escaped so
 * that the text stays valid JSON whatever names it carries.
 *
 * Called under the trace's flush lock, which guards the announcements. */
#include "trace_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Track ids: host threads keep theirs (1, 2, ...), queues are 1000 + id,
 * so that no two tracks share a tid whichever viewer reads the file. */
#define AMP__HOST_PID 1
#define AMP__QUEUE_TID(id) (1000u + (id))
#define AMP__MAX_ACC 65

/* Tracks already named in the file (flush lock). */
static struct {
    bool *queue, *thread, acc[AMP__MAX_ACC], host;
    uint32_t nqueue, nthread;
} S;

static int amp__acc_pid(int acc) { return acc < 0 ? AMP__HOST_PID : 2 + acc; }

static double amp__us(uint64_t ns) { return ns >= amp__trace_epoch ? (double)(ns - amp__trace_epoch) / 1e3 : 0.0; }

/* ------------------------------------------------------------ strings */

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 if none. */
static size_t amp__utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t len;
    unsigned lo = 0x80, hi = 0xBF;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F; /* no surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else {
        return 0;
    }
    if (len > n) return 0;
    if (s[1] < lo || s[1] > hi) return 0;
    for (size_t i = 2; i < len; ++i)
        if (s[i] < 0x80 || s[i] > 0xBF) return 0;
    return len;
}

/* A JSON string: quotes and backslashes escaped, control characters as
 * \u00XX, bytes that are not UTF-8 as U+FFFD (the text must stay valid). */
static void amp__sb_str(amp__sb *b, const char *s)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    size_t n = strlen((const char *)p);
    amp__sb_put(b, "\"", 1);
    for (size_t i = 0; i < n;) {
        unsigned c = p[i];
        if (c == '"' || c == '\\') {
            char esc[2] = {'\\', (char)c};
            amp__sb_put(b, esc, 2);
            ++i;
        } else if (c < 0x20) {
            char esc[8];
            snprintf(esc, sizeof esc, "\\u%04x", c);
            amp__sb_put(b, esc, 6);
            ++i;
        } else {
            size_t len = amp__utf8_len(p + i, n - i);
            if (len) {
                amp__sb_put(b, (const char *)p + i, len);
                i += len;
            } else {
                amp__sb_put(b, "\\ufffd", 6);
                ++i;
            }
        }
    }
    amp__sb_put(b, "\"", 1);
}

/* ------------------------------------------------------------- tracks */

static bool amp__grow_bools(bool **v, uint32_t *n, uint32_t need)
{
    if (need <= *n) return true;
    bool *p = realloc(*v, need * sizeof *p);
    if (!p) return false;
    memset(p + *n, 0, (need - *n) * sizeof *p);
    *v = p;
    *n = need;
    return true;
}

static void amp__announce_host(amp__sb *b)
{
    if (S.host) return;
    S.host = true;
    amp__sb_printf(b, ",\n{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_name\",\"args\":{\"name\":\"hipamp host (pid %ld)\"}}",
                   AMP__HOST_PID, (long)amp__trace_pid);
    amp__sb_printf(b, ",\n{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_sort_index\",\"args\":{\"sort_index\":0}}",
                   AMP__HOST_PID);
}

static void amp__announce_thread(amp__sb *b, const amp__tbatch *bt, uint32_t tid)
{
    amp__announce_host(b);
    if (!tid || !amp__grow_bools(&S.thread, &S.nthread, tid + 1) || S.thread[tid]) return;
    S.thread[tid] = true;
    long os = tid <= bt->nthreads ? bt->threads[tid - 1] : 0;
    amp__sb_printf(b, ",\n{\"ph\":\"M\",\"pid\":%d,\"tid\":%u,\"name\":\"thread_name\",\"args\":{\"name\":\"host thread %u (tid %ld)\"}}",
                   AMP__HOST_PID, tid, tid, os);
}

static void amp__announce_acc(amp__sb *b, const amp__trace_rec *r)
{
    int acc = r->acc;
    if (acc < 0 || acc >= AMP__MAX_ACC || S.acc[acc]) return;
    S.acc[acc] = true;
    const amp_accelerator_info *ai = r->acc_info;
    char name[400];
    snprintf(name, sizeof name, "%s: %s", ai ? ai->device_path : "?", ai ? ai->description : "?");
    amp__sb_printf(b, ",\n{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_name\",\"args\":{\"name\":", amp__acc_pid(acc));
    amp__sb_str(b, name);
    amp__sb_printf(b, "}},\n{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_sort_index\",\"args\":{\"sort_index\":%d}}",
                   amp__acc_pid(acc), 1 + acc);
}

/* The record's queue (its accelerator first). */
static void amp__announce_queue(amp__sb *b, const amp__trace_rec *r)
{
    uint32_t qid = r->qid;
    if (!qid || !amp__grow_bools(&S.queue, &S.nqueue, qid + 1) || S.queue[qid]) return;
    S.queue[qid] = true;
    amp__announce_acc(b, r);
    amp__sb_printf(b, ",\n{\"ph\":\"M\",\"pid\":%d,\"tid\":%u,\"name\":\"thread_name\",\"args\":{\"name\":\"queue %u%s\"}}",
                   amp__acc_pid(r->acc), AMP__QUEUE_TID(qid), qid,
                   r->queue_kind == AMP__QUEUE_DEFAULT  ? " (default view)"
                   : r->queue_kind == AMP__QUEUE_NATIVE ? " (native queue)"
                                                        : "");
}

/* ------------------------------------------------------------- events */

void amp__json_head(amp__sb *b)
{
    amp__sb_puts(b, "{\"traceEvents\":[\n{\"ph\":\"M\",\"pid\":1,\"name\":\"process_labels\",\"args\":{\"labels\":\"hipamp\"}}");
}

void amp__json_tail(amp__sb *b, uint64_t written, uint64_t dropped)
{
    amp__sb_printf(b,
                   "\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":{\"library\":\"hipamp %s\",\"pid\":%ld,"
                   "\"clock\":\"CLOCK_MONOTONIC; ts in microseconds since the library was loaded\",\"epoch_ns\":%" PRIu64 ","
                   "\"device_tracks\":\"durations measured with device events; a command starts at the latest of when it "
                   "was queued, the previous command's start plus the device time between their start events, and the "
                   "previous command's end\",\"events\":%" PRIu64 ",\"dropped\":%" PRIu64 "}}\n",
                   amp_version(), (long)amp__trace_pid, amp__trace_epoch, written, dropped);
}

/* The array or view a copy moved. */
static void amp__sb_object(amp__sb *b, const amp__trace_rec *r)
{
    if (!r->object) return;
    char ext[64], box[160];
    amp__dims(ext, sizeof ext, r->ext, r->rank);
    size_t at = 0;
    box[0] = '\0';
    for (int d = 0; d < r->rank && at < sizeof box; ++d) {
        int w = snprintf(box + at, sizeof box - at, d ? "x[%d,%d)" : "[%d,%d)", r->lo[d], r->hi[d]);
        if (w < 0) break;
        at += (size_t)w;
    }
    amp__sb_printf(b, ",\"object\":\"%s\",\"storage\":\"0x%" PRIxPTR "\",\"extent\":\"%s\",\"element_bytes\":%u,\"box\":\"%s\"",
                   r->is_array ? "array" : "array_view", r->object, ext, r->elem, box);
}

void amp__json_event(amp__sb *b, const amp__tbatch *bt, const amp__tev *e, const amp__placed *p)
{
    const amp__trace_rec *r = &e->r;
    double dur = p->end > p->start ? (double)(p->end - p->start) / 1e3 : 0.0;
    const char *acc = r->acc_info ? r->acc_info->device_path : "";
    int pid = AMP__HOST_PID;
    unsigned tid = e->tid;
    /* Launches and copies avoided belong to their queue even when their
     * device time could not be read (then: the host's view of them). */
    if (p->on_device ||
        ((r->kind == AMP__REC_AVOIDED || r->kind == AMP__REC_LAUNCH || r->kind == AMP__REC_GRAPH) && r->qid)) {
        amp__announce_queue(b, r);
        pid = amp__acc_pid(r->acc);
        tid = AMP__QUEUE_TID(r->qid);
    } else {
        amp__announce_thread(b, bt, e->tid);
        if (r->qid) amp__announce_queue(b, r);
    }
    switch (r->kind) {
    case AMP__REC_LAUNCH: {
        const char *k = amp__tbatch_str(bt, e->name);
        char ext[64], tile[48] = "";
        amp__dims(ext, sizeof ext, r->ext, r->rank);
        if (r->tiled) amp__dims(tile, sizeof tile, r->tile, r->rank);
        /* A launch is never empty: a time below the clock's resolution
         * still shows as the smallest slice. */
        if (dur <= 0) dur = 0.001;
        amp__sb_put(b, ",\n{\"name\":", 10);
        amp__sb_str(b, k);
        amp__sb_printf(b, ",\"cat\":\"launch\",\"ph\":\"X\",\"pid\":%d,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"kernel\":",
                       pid, tid, amp__us(p->start), dur);
        amp__sb_str(b, k);
        amp__sb_printf(b, ",\"extent\":\"%s\",\"tile\":\"%s\",\"accelerator\":\"%s\",\"queue\":%u,\"device_timed\":%s,"
                          "\"device_ms\":%.6f,\"queued_us\":%.3f}}",
                       ext, r->tiled ? tile : "none", acc, r->qid, p->on_device ? "true" : "false",
                       p->on_device ? p->device_ms : dur / 1e3, amp__us(r->t_ns));
        break;
    }
    case AMP__REC_GRAPH: {
        const char *k = amp__tbatch_str(bt, e->name);
        char name[300];
        snprintf(name, sizeof name, "graph: %s", k);
        amp__sb_put(b, ",\n{\"name\":", 10);
        amp__sb_str(b, name);
        amp__sb_printf(b, ",\"cat\":\"graph\",\"ph\":\"X\",\"pid\":%d,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"kernels\":",
                       pid, tid, amp__us(p->start), dur > 0 ? dur : 0.001);
        amp__sb_str(b, k);
        amp__sb_printf(b, ",\"launches\":%" PRIu64 ",\"copies\":%" PRIu64 ",\"copy_bytes\":%" PRIu64
                          ",\"accelerator\":\"%s\",\"queue\":%u,\"device_timed\":%s,\"device_ms\":%.6f,\"queued_us\":%.3f}}",
                       r->launches, r->copies, r->bytes, acc, r->qid, p->on_device ? "true" : "false",
                       p->on_device ? p->device_ms : dur / 1e3, amp__us(r->t_ns));
        break;
    }
    case AMP__REC_COPY:
        amp__sb_printf(b, ",\n{\"name\":\"copy %s\",\"cat\":\"copy\",\"ph\":\"X\",\"pid\":%d,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,"
                          "\"args\":{\"direction\":\"%s\",\"bytes\":%" PRIu64 ",\"reason\":\"%s\",\"accelerator\":\"%s\","
                          "\"queue\":%u,\"device_timed\":%s",
                       amp__dir_short(r->sub), pid, tid, amp__us(p->start), dur > 0 ? dur : 0.001, amp__dir_long(r->sub),
                       r->bytes, amp__copy_why_name(r->why), acc, r->qid, p->on_device ? "true" : "false");
        if (p->on_device) amp__sb_printf(b, ",\"device_ms\":%.6f", p->device_ms);
        amp__sb_object(b, r);
        amp__sb_put(b, "}}", 2);
        break;
    case AMP__REC_AVOIDED:
        amp__sb_printf(b, ",\n{\"name\":\"discard avoided\",\"cat\":\"copy\",\"ph\":\"i\",\"s\":\"t\",\"pid\":%d,\"tid\":%u,"
                          "\"ts\":%.3f,\"args\":{\"direction\":\"%s\",\"bytes_saved\":%" PRIu64 ",\"reason\":\"%s\","
                          "\"accelerator\":\"%s\",\"queue\":%u",
                       pid, tid, amp__us(p->start), amp__dir_long(r->sub), r->bytes, amp__copy_why_name(r->why), acc,
                       r->qid);
        amp__sb_object(b, r);
        amp__sb_put(b, "}}", 2);
        break;
    case AMP__REC_BUILD: {
        const char *label = amp__tbatch_str(bt, e->name);
        amp__sb_put(b, ",\n{\"name\":", 10);
        char name[300];
        snprintf(name, sizeof name, "build %s", label);
        amp__sb_str(b, name);
        amp__sb_printf(b, ",\"cat\":\"build\",\"ph\":\"X\",\"pid\":%d,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"source\":",
                       pid, tid, amp__us(p->start), dur > 0 ? dur : 0.001);
        amp__sb_str(b, label);
        amp__sb_printf(b, ",\"accelerator\":\"%s\",\"cache\":\"%s\",\"status\":\"%s\",\"ms\":%.3f}}", acc,
                       amp__cache_name(r->sub), amp_status_name(r->st), dur / 1e3);
        break;
    }
    case AMP__REC_WAIT:
        amp__sb_printf(b, ",\n{\"name\":\"wait\",\"cat\":\"wait\",\"ph\":\"X\",\"pid\":%d,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,"
                          "\"args\":{\"accelerator\":\"%s\",\"queue\":%u,\"until\":",
                       pid, tid, amp__us(p->start), dur > 0 ? dur : 0.001, acc, r->qid);
        if (r->seq == UINT64_MAX) amp__sb_put(b, "\"all\"", 5);
        else amp__sb_printf(b, "%" PRIu64, r->seq);
        amp__sb_printf(b, ",\"status\":\"%s\"}}", amp_status_name(r->st));
        break;
    default:
        break;
    }
}
