/*
 * stacks_internal.h: what the tests see inside the native stack sampler (stacks.c), through
 * a static build of libprofopt's sources (profopt_internal); libprofopt.so exports none of it.
 */
#ifndef PROFOPT_STACKS_INTERNAL_H
#define PROFOPT_STACKS_INTERNAL_H

#include <stdint.h>

/*
 * Called from the SIGPROF handler with every sample it takes, traced or not, after the
 * event (if any) was recorded: pcs[0..depth) innermost first, as in profopt:native_stack.
 * It runs in a signal handler, so it may do only what is async-signal-safe. NULL (the
 * default, and always in libprofopt.so): the handler records only when tracing.
 */
typedef void po_stacks_hook_fn(int32_t tid, int64_t weight_ns, const uint64_t *pcs, uint32_t depth);
extern po_stacks_hook_fn *po_stacks_test_hook;

/*
 * How the running sampler measures CPU time: 1 when by perf task-clock counters (SIGURG),
 * 0 when by POSIX timers on the threads' CPU clocks (SIGPROF), -1 when it is not running on
 * CPU time.
 */
int po_stacks_test_counters(void);

#endif /* PROFOPT_STACKS_INTERNAL_H */
