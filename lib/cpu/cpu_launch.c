/* cpu_launch.c — how a CPU-accelerator launch is handed to threads: on the width its kernel learned for its size (cpu_width.c), through the pool or a graph replay's team. */
#include "cpu_internal.h"

#include <string.h>

/* A direct launch runs on the width its kernel learned for its size
 * (cpu_width.c), searched downwards from every thread: a big kernel's
 * first launches run as they would unlearned, on every thread, and the
 * search narrows a launch only while half the threads take a tenth off
 * its time. Each thread a launch through the pool involves adds a
 * hand-off of microseconds to it, more than a small launch's share of
 * work, so a small launch on every thread is mostly hand-off and runs
 * faster on a few (docs/architecture.md, the CPU accelerator). Above
 * AMP__CPU_WIDTH_POINTS points a launch's work outweighs the pool's
 * cost, and it runs on every thread unlearned. */
amp_status amp__cpu_job_run_learning(amp__cpu_device *d, amp__cpu_job *j, amp__cpu_team *team)
{
    int64_t points = amp__cpu_job_points(j);
    if (d->nthreads < 2) return amp__cpu_job_run_on(d, j, 0);
    bool timed;
    amp__cpu_handoff how = team ? AMP__CPU_HANDOFF_TEAM : AMP__CPU_HANDOFF_POOL;
    /* A team is at most the threads the pool started (amp__cpu_team_begin
     * started it): a search from more would ask for a width no team has. */
    int threads = team && amp__cpu_pool_threads() < d->nthreads ? amp__cpu_pool_threads() : d->nthreads;
    int width = amp__cpu_widths_pick(j->widths, points, how, threads, &timed);
    /* A team narrower than the width asked for runs the launch on all of
     * it; the time, taken at another width, is not counted, and the next
     * replay's team is wide enough (amp__cpu_team_end). */
    if (team) width = amp__cpu_team_width(team, width);
    uint64_t t0 = timed ? amp__now_ns() : 0;
    amp_status st = team ? amp__cpu_team_run(d, team, j, width) : amp__cpu_job_run_on(d, j, width);
    if (timed && st == AMP_OK) amp__cpu_widths_took(j->widths, points, how, width, amp__now_ns() - t0);
    return st;
}

amp_status amp__cpu_job_run(amp__cpu_device *d, amp__cpu_job *j)
{
    if (d->learn_widths && amp__cpu_job_points(j) <= AMP__CPU_WIDTH_POINTS) return amp__cpu_job_run_learning(d, j, NULL);
    return amp__cpu_job_run_on(d, j, 0);
}

amp_status amp__cpu_run(amp__cpu_device *d, const amp__cpu_kernel *kernel, const amp__launch *l)
{
    /* Within the call: the job lives on this stack and borrows l. */
    amp__cpu_job j;
    memset(&j, 0, sizeof j);
    amp__cpu_job_init(&j, kernel, l);
    amp_status st = amp__cpu_job_run(d, &j);
    amp__cpu_job_fini(&j);
    return st;
}

