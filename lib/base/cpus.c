/* cpus.c — how many CPUs this process may use, how many compiler workers one build may run from them (the CPU accelerator's compiler processes, NVRTC's threads), and the last-level cache they share. */
#include "core.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int amp__usable_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* The affinity mask, not the machine's CPUs: an MPI rank bound to one core
 * gets one worker, so ranks that build at once do not each start a
 * machine's worth of threads on the same cores. */
int amp__compile_jobs(const char *env_name, int max)
{
    int cpus = amp__usable_cpus();
    unsigned dflt = (unsigned)(cpus < max ? cpus : max);
    return (int)amp__env_uint(env_name, dflt, 1, (unsigned)max);
}

/* One line of a small sysfs file, newline dropped; false where unreadable. */
static bool amp__read_line(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "re");
    if (!f) return false;
    bool ok = fgets(buf, (int)cap, f) != NULL;
    fclose(f);
    if (ok) buf[strcspn(buf, "\n")] = '\0';
    return ok;
}

/* Each of the n CPUs numbered in cpus[]: its highest-level data or unified cache (under
 * cpu_dir, sysfs's /sys/devices/system/cpu), counted once per distinct set
 * of CPUs sharing it: a VM spread over several L3s gets their sum, as the
 * work spread over its threads does. 0 where nothing there says. */
uint64_t amp__llc_bytes_in(const char *cpu_dir, const int *cpus, int n)
{
    enum { MAX_SEEN = 256, KEY = 512 };
    char (*seen)[KEY] = malloc(MAX_SEEN * sizeof *seen); /* level and shared_cpu_list of each cache counted */
    int nseen = 0;
    uint64_t total = 0;
    if (!seen) return 0;
    for (int c = 0; c < n; ++c) {
        const int cpu = cpus[c];
        int best_level = 0;
        uint64_t best_size = 0;
        char best_shared[KEY] = "";
        for (int i = 0; i < 16; ++i) {
            char path[512], line[64], shared[KEY - 16];
            snprintf(path, sizeof path, "%s/cpu%d/cache/index%d/type", cpu_dir, cpu, i);
            if (!amp__read_line(path, line, sizeof line)) break;
            if (strcmp(line, "Data") && strcmp(line, "Unified")) continue;
            snprintf(path, sizeof path, "%s/cpu%d/cache/index%d/level", cpu_dir, cpu, i);
            if (!amp__read_line(path, line, sizeof line)) continue;
            int level = atoi(line);
            if (level <= best_level) continue;
            snprintf(path, sizeof path, "%s/cpu%d/cache/index%d/size", cpu_dir, cpu, i);
            if (!amp__read_line(path, line, sizeof line)) continue;
            char *end;
            unsigned long long size = strtoull(line, &end, 10);
            if (*end == 'K') size <<= 10;
            else if (*end == 'M') size <<= 20;
            else if (*end == 'G') size <<= 30;
            if (!size || end == line) continue; /* malformed: a lower level may still say */
            snprintf(path, sizeof path, "%s/cpu%d/cache/index%d/shared_cpu_list", cpu_dir, cpu, i);
            if (!amp__read_line(path, shared, sizeof shared)) snprintf(shared, sizeof shared, "cpu %d", cpu);
            best_level = level;
            best_size = size;
            snprintf(best_shared, sizeof best_shared, "L%d %s", level, shared);
        }
        if (!best_size) continue;
        bool counted = false;
        for (int k = 0; k < nseen && !counted; ++k) counted = !strcmp(seen[k], best_shared);
        if (counted) continue;
        if (nseen == MAX_SEEN) break; /* more caches than can be told apart: count what was seen */
        memcpy(seen[nseen++], best_shared, sizeof seen[0]);
        total += best_size;
    }
    free(seen);
    return total;
}

static uint64_t amp__llc_total;
static void amp__llc_read(void)
{
    cpu_set_t set;
    static int cpus[CPU_SETSIZE]; /* under the once */
    int n = 0;
    if (sched_getaffinity(0, sizeof set, &set) != 0) CPU_ZERO(&set);
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
        if (CPU_ISSET(cpu, &set)) cpus[n++] = cpu;
    uint64_t total = amp__llc_bytes_in("/sys/devices/system/cpu", cpus, n);
#ifdef _SC_LEVEL3_CACHE_SIZE
    if (!total) {
        long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
        if (l3 > 0) total = (uint64_t)l3;
    }
#endif
    amp__llc_total = total;
}

uint64_t amp__llc_bytes(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, amp__llc_read);
    return amp__llc_total;
}
