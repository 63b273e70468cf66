/* trace_state.c — the trace's process-wide state, below every part of the
 * trace that reads it: what is on (amp__trace_flags, AMP__TRACE_*), the host
 * clock's zero for event times, and the process the trace belongs to (a
 * forked child does not write its parent's file). Set by the library's
 * constructor (trace.c); the vendor ranges' flag is cleared where no
 * vendor tool is found (trace_vendor.c). */
#include "trace_internal.h"

_Atomic unsigned amp__trace_flags;
uint64_t amp__trace_epoch;
pid_t amp__trace_pid;
