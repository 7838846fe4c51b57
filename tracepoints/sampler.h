/* sampler.h: the optional thread that records host RSS and process CPU time as counters. */
#ifndef PROFOPT_SAMPLER_H
#define PROFOPT_SAMPLER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Starts (or re-periods) the sampler; 0 on success, -1 on error (errno set). */
int po_sampler_start(unsigned period_ms);
/* Stops the sampler and waits for its thread; a no-op when it is not running. */
void po_sampler_stop(void);

/* In a forked child: the process announces itself again (profopt.c). */
void po_announce_after_fork(void);
/*
 * Whether the process announced itself (profopt:process) since it began or forked: the
 * analysis leaves out a process's events before its announcement, so a signal handler,
 * which cannot announce, records nothing before it (async-signal-safe).
 */
bool po_announced(void);
/* After the announcement of a forked child: starts the sampler if the parent ran one. */
void po_sampler_resume(void);
/*
 * Likewise for the native stack sampler (stacks.c): the watcher that gives the child's
 * threads their CPU-time timers, when the parent sampled on CPU time.
 */
void po_stacks_resume(void);
/*
 * The calling thread began a stage or step span (profopt.c): in a Python process sampled
 * on wall time it gets a timer of its own, as the main thread has (stacks.c).
 */
void po_stacks_note_span_thread(void);

/* The instruction a signal interrupted, from its handler's context (0: not known here). */
uint64_t po_interrupted_pc(const void *context);
/*
 * Whether a shared object (its path) stands for no native frame in a Python sample: the
 * interpreter's own (its pc means "running Python code"), and the kernel's vDSO
 * (clock_gettime: asking the time is the caller's own cost). profopt.c.
 */
bool po_no_native_frame(const char *path);
/*
 * A perf task-clock counter of thread tid (its CPU time, counted from now) that sends signal
 * signo to it every period_ns of that time, with si_code POLL_IN and si_fd the counter's
 * descriptor (close-on-exec); -1 when the kernel refuses one (perf_event_paranoid, seccomp,
 * no perf events). Its overflow comes from a high-resolution timer at the period, where a
 * POSIX CPU timer or ITIMER_PROF fires only at a scheduler tick after its expiry
 * (docs/sampling.md, "How it samples"), and only where the period ends in user mode
 * (exclude_kernel): the signal never finds the thread inside a system call, whose wait it
 * would interrupt. stacks.c.
 */
int po_cpu_counter_open(pid_t tid, int64_t period_ns, int signo);
/*
 * A loader worker ends (profopt_worker_end): when the sampler runs, records the process's
 * memory sets once more, so that a worker shorter than their period is not left with its
 * first reading only.
 */
void po_sampler_last_sets(void);

#endif /* PROFOPT_SAMPLER_H */
