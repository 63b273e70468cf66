/* cpus.c — how many CPUs this process may use, and from it how many compiler workers one build may run (the CPU accelerator's compiler processes, NVRTC's threads). */
#include "core.h"

#include <sched.h>
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
