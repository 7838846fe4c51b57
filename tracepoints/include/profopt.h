/*
 * profopt.h: the public C API of libprofopt, which marks what an ML training or serving
 * loop is doing (steps, data-loading stages, GPU activity, memory) as LTTng-UST events.
 *
 * This header includes no LTTng header. Every function is thread-safe and may be called
 * from forked data-loader workers. When no tracing session records the profopt events, a
 * call costs a function call and one predictable branch.
 *
 * Times passed in (GPU activity start and end) are nanoseconds of CLOCK_MONOTONIC, the
 * clock LTTng-UST stamps events with. Strings are copied into the trace; NULL is recorded
 * as an empty string. Unknown integer values are passed as -1.
 */
#ifndef PROFOPT_H
#define PROFOPT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PROFOPT_VERSION_MAJOR 0
#define PROFOPT_VERSION_MINOR 1
#define PROFOPT_VERSION_PATCH 0
#define PROFOPT_VERSION_STRING "0.1.0"

/* Pipeline stages; the numeric values are part of the trace format and never change. */
enum profopt_stage {
	PROFOPT_STAGE_DATA_WAIT = 0,  /* the loop blocks until the next batch is ready */
	PROFOPT_STAGE_LOAD = 1,	      /* reading samples (I/O, decoding) */
	PROFOPT_STAGE_PREPROCESS = 2, /* per-sample transforms */
	PROFOPT_STAGE_COLLATE = 3,    /* assembling samples into a batch */
	PROFOPT_STAGE_H2D_COPY = 4,   /* host-to-device copy of the batch */
	PROFOPT_STAGE_FORWARD = 5,
	PROFOPT_STAGE_BACKWARD = 6,
	PROFOPT_STAGE_OPTIMIZER = 7,
	PROFOPT_STAGE_EVAL = 8,
	PROFOPT_STAGE_CHECKPOINT = 9,
	PROFOPT_STAGE_CUSTOM = 10,
	PROFOPT_STAGE_GC = 11, /* the language runtime's garbage collector (Python's gc) */
};

/* Counter kinds; values are part of the trace format. */
enum profopt_counter {
	PROFOPT_COUNTER_QUEUE_DEPTH = 0,	 /* batches ready and not yet consumed */
	PROFOPT_COUNTER_HOST_RSS = 1,		 /* bytes, resident set of the process */
	PROFOPT_COUNTER_GPU_MEM_USED = 2,	 /* bytes in use on the device */
	PROFOPT_COUNTER_PROCESS_CPU = 3,	 /* nanoseconds of CPU used by the process so far */
	PROFOPT_COUNTER_GPU_MEM_RESERVED = 4,	 /* bytes held by a caching allocator */
	PROFOPT_COUNTER_PROCESS_RUNQ_WAIT = 5,	 /* nanoseconds the process's main thread waited
						    for a CPU so far (run queue, schedstat) */
	PROFOPT_COUNTER_GPU_RECORDS_DROPPED = 6, /* GPU activity records the collector lost
						    since its last sample (CUPTI's count) */
	PROFOPT_COUNTER_GPU_MEM_PEAK = 7,	 /* bytes: the most a caching allocator has had in
						    use at once since the process started */
	PROFOPT_COUNTER_GPU_MEM_FREE = 8,	 /* bytes the device has free, all processes
						    counted (cudaMemGetInfo) */
	PROFOPT_COUNTER_MACHINE_CPU = 9,	 /* nanoseconds all CPUs of the machine were busy
						    since boot, every program counted (/proc/stat) */
	PROFOPT_COUNTER_HOST_PSS = 10,		 /* bytes, proportional set of the process: each
						    page divided by the processes mapping it */
	PROFOPT_COUNTER_HOST_USS = 11,		 /* bytes, unique set of the process: the pages
						    only it maps (Private_Clean + Private_Dirty) */
	PROFOPT_COUNTER_MACHINE_MEMORY = 12,	 /* bytes of physical memory of the machine */
	PROFOPT_COUNTER_GC_COLLECTED = 13,	 /* objects a garbage collection that ends on
						    this thread freed (device: its generation) */
	PROFOPT_COUNTER_GC_UNCOLLECTABLE = 14,	 /* objects it found unreachable and could not
						    free (gc.garbage) */
};

/* Kinds of GPU activity records; values are part of the trace format. */
enum profopt_gpu_kind {
	PROFOPT_GPU_KERNEL = 0,
	PROFOPT_GPU_MEMCPY_H2D = 1,
	PROFOPT_GPU_MEMCPY_D2H = 2,
	PROFOPT_GPU_MEMCPY_D2D = 3,
	PROFOPT_GPU_MEMSET = 4,
};

/* Collective operations; values are part of the trace format. */
enum profopt_collective_op {
	PROFOPT_COLLECTIVE_ALL_REDUCE = 0,
	PROFOPT_COLLECTIVE_BROADCAST = 1,
	PROFOPT_COLLECTIVE_REDUCE = 2,
	PROFOPT_COLLECTIVE_ALL_GATHER = 3,
	PROFOPT_COLLECTIVE_REDUCE_SCATTER = 4,
	PROFOPT_COLLECTIVE_ALL_TO_ALL = 5,
	PROFOPT_COLLECTIVE_BARRIER = 6,
	PROFOPT_COLLECTIVE_SEND = 7,
	PROFOPT_COLLECTIVE_RECV = 8,
	PROFOPT_COLLECTIVE_OTHER = 9,
};

/* Device number of host memory in profopt_mem_alloc()/profopt_mem_free(). */
#define PROFOPT_DEVICE_HOST (-1)
/*
 * Host memory pinned for the devices (cudaHostAlloc): the host's memory, which pinned-memory
 * pools (PyTorch's pin_memory) keep for the whole run, so none of it is a leak at the end.
 */
#define PROFOPT_DEVICE_PINNED (-2)

/* One completed piece of GPU work, as a device-side activity API reports it. */
struct profopt_gpu_record {
	int32_t device;
	int32_t stream;
	enum profopt_gpu_kind kind;
	const char *name;	 /* kernel name or copy description */
	uint64_t bytes;		 /* bytes moved or set; 0 for kernels */
	int64_t start_ns;	 /* CLOCK_MONOTONIC */
	int64_t end_ns;		 /* CLOCK_MONOTONIC */
	uint64_t correlation_id; /* matches profopt_gpu_launch() on the host; 0 if none */
};

/*
 * How a kernel was launched, where the activity API says it (CUPTI does): a grid of
 * grid_x * grid_y * grid_z blocks of block_x * block_y * block_z threads. 0 where unknown.
 */
struct profopt_gpu_kernel_shape {
	uint32_t grid_x, grid_y, grid_z;
	uint32_t block_x, block_y, block_z;
	uint32_t registers_per_thread;
	uint32_t shared_bytes; /* static and dynamic shared memory per block */
};

/* Library version, "MAJOR.MINOR.PATCH". */
const char *profopt_version(void);

/* Nonzero when a session currently records at least one profopt event. */
int profopt_tracing_enabled(void);

/*
 * Run: the whole job. run_begin also records the number of online CPUs of the machine.
 * Configuration pairs (num_workers, batch_size, prefetch_factor, pin_memory, device, ...)
 * follow run_begin, one call each.
 */
void profopt_run_begin(const char *framework);
void profopt_run_config(const char *key, const char *value);
void profopt_run_end(void);

/* A data-loader worker process or thread announces itself (worker_id from 0). */
void profopt_worker_begin(int64_t worker_id);
void profopt_worker_end(int64_t worker_id);

void profopt_epoch_begin(int64_t epoch);
void profopt_epoch_end(int64_t epoch);

/*
 * One training step; batch_size in samples (-1 if unknown). A step that ends with
 * batch_size 0 consumed no batch (the end of the data, or a loop left before it trained):
 * profopt-analyze does not count it.
 */
void profopt_step_begin(int64_t step, int64_t epoch, int64_t batch_size);
void profopt_step_end(int64_t step, int64_t epoch, int64_t batch_size);

/*
 * A stage span. Begin and end must be called on the same thread with the same stage;
 * spans nest. batch is the batch index the work belongs to (the same index in the worker
 * that loads it and in the main loop's data wait that receives it), sample the sample
 * index; -1 where unknown. For the data-loading stages (load, preprocess, collate) the
 * end event also records the thread's CPU time spent in the span.
 */
void profopt_stage_begin(enum profopt_stage stage, const char *label, int64_t batch,
			 int64_t sample);
void profopt_stage_end(enum profopt_stage stage, const char *label, int64_t batch, int64_t sample);

/* A worker has put batch into the queue; queue_depth after the put (-1 if unknown). */
void profopt_batch_ready(int64_t batch, int64_t queue_depth);

/* A counter sample; device is -1 for host counters. */
void profopt_counter(enum profopt_counter kind, int32_t device, int64_t value);

/*
 * profopt's own CPU time in this process so far, so that the report can state what the
 * measurement cost (docs/accuracy.md, "What a recording costs"): hooks_ns, the time the
 * caller's instrumentation spent on the program's threads (the Python module's loader,
 * model and step hooks), and gc_ns, its garbage-collection callbacks, both cumulative
 * nanoseconds of thread CPU time the caller counted (-1: not counted). libprofopt adds the
 * CPU time of its own threads (the sampler, the stacks watcher). Call it every second or so
 * and at the end; each call records one profopt:self_cost event.
 */
void profopt_self_cost(int64_t hooks_ns, int64_t gc_ns);

/* Explicit memory accounting (device PROFOPT_DEVICE_HOST or a GPU number). */
void profopt_mem_alloc(uint64_t addr, uint64_t bytes, int32_t device, const char *label);
void profopt_mem_free(uint64_t addr, uint64_t bytes, int32_t device, const char *label);

/* The host launches GPU work; correlation_id links it to its activity record. */
void profopt_gpu_launch(int32_t device, int32_t stream, uint64_t correlation_id, const char *name);
void profopt_gpu_activity(const struct profopt_gpu_record *record);
/* A completed kernel (record->kind PROFOPT_GPU_KERNEL) with its launch shape. */
void profopt_gpu_kernel(const struct profopt_gpu_record *record,
			const struct profopt_gpu_kernel_shape *shape);
/*
 * What a device is: its name, memory in bytes, streaming multiprocessors and compute
 * capability (9.0: major 9, minor 0). Recorded once per device and process; -1 or 0 where
 * unknown.
 */
void profopt_gpu_device(int32_t device, const char *name, uint64_t memory_bytes,
			int32_t multiprocessors, int32_t capability_major,
			int32_t capability_minor);

/* The host blocks until the device (stream -1: all streams) has finished. */
void profopt_gpu_sync_begin(int32_t device, int32_t stream);
void profopt_gpu_sync_end(int32_t device, int32_t stream);

/*
 * Distributed jobs (docs/distributed.md). profopt_rank() says which rank of the job this
 * process is: rank (0 .. world_size - 1), local_rank (its rank on this host), world_size
 * and host (the host's name; NULL: gethostname()); -1 where unknown. Call it once, before
 * the first step; loader workers forked afterwards belong to the same rank.
 */
void profopt_rank(int32_t rank, int32_t local_rank, int32_t world_size, const char *host);

/*
 * A collective operation: begin when this rank enters it (calls it, or hands its buffer to
 * the communication library), end when its result is complete on this rank; the end may
 * be called on another thread. group identifies the process group (0: the default group),
 * seq numbers the collectives of the group from 0 in call order, the same on every rank:
 * (group, seq) pairs one collective across ranks. bytes: the data each rank contributes;
 * device: where the data lives (-1: host memory).
 */
void profopt_collective_begin(int32_t group, enum profopt_collective_op op, uint64_t bytes,
			      int64_t seq, int32_t device);
void profopt_collective_end(int32_t group, enum profopt_collective_op op, uint64_t bytes,
			    int64_t seq, int32_t device);

/*
 * Sampler thread: every period_ms, records host RSS, process CPU time and the main
 * thread's run-queue wait as counters, and at most every 100 ms the whole machine's busy
 * CPU time (not in forked children: their parent records it). The proportional and unique
 * set sizes (/proc/self/smaps_rollup, costlier) are read when the thread starts, then at
 * most every second and less often in large processes, and once more at
 * profopt_worker_end(); the machine's physical memory with them (not in forked children).
 * Off unless started here or
 * by the environment variable PROFOPT_SAMPLE_MS=N at load. Restarted in forked children
 * when it runs in the parent. Returns 0, or -1 on error.
 */
int profopt_sampler_start(unsigned period_ms);
void profopt_sampler_stop(void);

/*
 * Function-level samples (docs/sampling.md), written by a sampler such as the Python
 * module's (profopt._stacks). profopt_code() describes a code object once per process:
 * code_id (the sampler's own number for it, unique in the process), its function, file and
 * first line. profopt_stack_sample() records the stack of thread tid (-1: the calling
 * thread) at one sample, innermost frame first: code_ids[i] ran line lines[i], and the CPU
 * time the thread used since its previous sample, which the sample stands for (-1: unknown).
 * At most PROFOPT_STACK_DEPTH_MAX frames are kept (the innermost). With
 * profopt_native_frames() the main thread's samples may gain a native innermost frame.
 */
#define PROFOPT_STACK_DEPTH_MAX 128
void profopt_code(uint32_t code_id, const char *function, const char *file, int32_t first_line);
void profopt_stack_sample(int32_t tid, int64_t cpu_ns, const uint32_t *code_ids,
			  const uint32_t *lines, uint32_t depth);

/*
 * The clock of a signal-driven sampler that counts wall time (the Python module's
 * --stacks-clock=wall): signal signo is sent to the calling thread every period_us
 * microseconds of CLOCK_MONOTONIC (a POSIX timer, SIGEV_THREAD_ID), until
 * profopt_signal_timer_stop() or exec. One timer per process; starting again replaces it.
 * A forked child has none: it starts its own. Returns 0, or -errno.
 */
int profopt_signal_timer_start(int signo, uint32_t period_us);
/*
 * The timer's expirations that came while its signal was pending (merged into the one
 * delivered), as of the signal last delivered: a sample stands for 1 + this many periods.
 */
int profopt_signal_timer_overrun(void);
void profopt_signal_timer_stop(void);
/*
 * The same timer on the process's CPU time (CLOCK_PROCESS_CPUTIME_ID, all its threads),
 * its signal sent to the process, as ITIMER_PROF's is, but any signal (ITIMER_PROF can only
 * send SIGPROF, which ends a program that reset it to its default action) and deleted at
 * exec (an interval timer survives it). The CPU-time sampler's clock where no counter is
 * allowed; stopped by profopt_signal_timer_stop(). Returns 0, or -errno.
 */
int profopt_signal_cpu_timer_start(int signo, uint32_t period_us);

/*
 * The clock of a signal-driven sampler that counts CPU time (the Python module's
 * --stacks): signal signo is sent to the calling thread every period_us microseconds of its
 * own CPU time, from a perf task-clock counter (its overflows come at the period, not at
 * the scheduler's tick as ITIMER_PROF's do), until profopt_signal_counter_stop() or exec.
 * One per process; starting again replaces it. A forked child has none: it starts its own.
 * Returns 0, or -errno when the kernel allows no such counter (perf_event_paranoid,
 * seccomp): the caller then uses ITIMER_PROF.
 */
int profopt_signal_counter_start(int signo, uint32_t period_us);
void profopt_signal_counter_stop(void);

/*
 * Native frames under a signal-driven sampler: wraps the current action of signal signo
 * (the sampler's handler, installed first) so that each signal that interrupts the main
 * thread notes the instruction it interrupted. The next profopt_stack_sample() of the main
 * thread then gets the shared object holding it as its innermost frame, a code described
 * once per object as "[native] NAME" (its path as the file); an interpreter's own object
 * (python*, libpython*) stands for running Python code and adds none, nor does the
 * kernel's vDSO (clock_gettime: the caller's own time). x86-64 and aarch64.
 * Returns 0, or -errno (-EINVAL when signo has no handler to wrap).
 */
int profopt_native_frames(int signo);

/*
 * libprofopt's own function-level sampler for C and C++ programs (docs/sampling.md):
 * samples the calling process hz times per second (1 to PROFOPT_STACKS_HZ_MAX) of each
 * thread's CPU time (wall == 0: every thread has a perf task-clock counter of its own that
 * signals it with SIGURG at each period, or where the kernel refuses counters, or
 * PROFOPT_STACKS_COUNTERS=0 is set, or the program has a SIGURG handler of its own, a POSIX
 * timer on its CPU clock, SIGEV_THREAD_ID, SIGPROF; a watcher thread gives threads started
 * later theirs within 50 ms) or of wall time (wall != 0: CLOCK_MONOTONIC, the calling thread
 * alone, running or waiting, SIGPROF; in a Python process, after profopt_stacks_python, each
 * process's main thread and every thread that began a stage or step span, each on a timer
 * of its own). Each sample is a profopt:native_stack event: the
 * thread's instruction addresses innermost first (the one interrupted, then the return
 * addresses of its callers, at most PROFOPT_STACK_DEPTH_MAX) and the time it stands for:
 * the thread's CPU time since its previous sample (a counter's), or one period per
 * expiration of the timer. The kernel checks a CPU-time timer at its scheduler tick (100 to
 * 1000 Hz), merging the expirations since into one signal: at most that many samples per
 * CPU second, and a thread's CPU time after its last checked tick is not sampled when it
 * ends; a counter fires at the period. The run config gets stacks_clock ("cpu" or "wall"),
 * stacks_hz and stacks_timer ("counter", "cpu-timer" or "timer"). While it runs, SIGPROF's
 * action (and SIGURG's with counters) is libprofopt's; a signal that is not its timer's or
 * counter's is ignored, and system calls it interrupts restart where they can (SA_RESTART;
 * some, such as nanosleep and poll, fail with EINTR, mostly on wall time).
 *
 * Returns 0 when sampling; -EINVAL for hz out of range; -EBUSY when SIGPROF already has a
 * handler or ITIMER_PROF runs (the program's own profiler, the Python module's sampler),
 * which are left as they are; -ENOTSUP on an architecture other than x86-64 and aarch64;
 * -errno when the timers cannot be made (or /proc/self/task cannot be read). Starting
 * again while it runs replaces the timers with ones of the new rate and clock (on wall
 * time, aimed at the new caller); if that fails, sampling stops. A forked child samples
 * again at the same rate: its forking thread at once, on CPU time its later threads once it
 * announces itself (its first profopt event); exec ends sampling (POSIX timers do not
 * survive it, counters are closed on exec, and a counter's SIGURG still pending is ignored
 * by the program exec'd). profopt_stacks_stop() deletes the timers and counters and gives
 * SIGPROF and SIGURG their previous actions back, unless the program installed its own
 * since; harmless when not sampling.
 *
 * Started when libprofopt is loaded if PROFOPT_STACKS_HZ=HZ is set (profopt-record
 * --stacks[=HZ]: 0 or empty is off), on the clock PROFOPT_STACKS_CLOCK=cpu|wall names
 * (profopt-record --stacks-clock, default cpu), except in a Python interpreter, whose
 * module (profopt._stacks) samples from the same variables. A value out of range says so
 * in one line on stderr and samples nothing.
 */
#define PROFOPT_STACKS_HZ_MAX 10000
int profopt_stacks_start(uint32_t hz, int wall);
void profopt_stacks_stop(void);

/*
 * Makes libprofopt's sampler record Python stacks in this process (the Python module calls
 * it before profopt_stacks_start on CPU time): each sample is then the interrupted thread's
 * Python frames, read in the signal handler from the interpreter's frame structures, as a
 * profopt:stack_sample event (code ids from 0x40000000 up, each described once by
 * profopt:code), under the shared object the thread was interrupted in (a "[native] NAME"
 * code whose line is the instruction's offset in it; none for the interpreter's own code).
 * Every thread that runs Python is sampled on its own CPU clock; one that runs none (a
 * native library's pool thread) records nothing. Returns 0; -ENOTSUP when libprofopt was
 * built without CPython's headers, -ENOENT when no interpreter runs in the process, -EPROTO
 * when it is another CPython version than the headers': profopt_stacks_python_error() then
 * says why in one line.
 */
int profopt_stacks_python(void);
const char *profopt_stacks_python_error(void);

/*
 * What the sampler did in this process since it first started here (a forked child counts
 * from 0): the samples it took, and in *weight_ns (when not NULL) the time they stand for.
 * A Python process's samples are taken traced or not; a C program's only when traced.
 */
uint64_t profopt_stacks_taken(int64_t *weight_ns);
/*
 * How the sampler measures CPU time now: 1 by perf task-clock counters, 0 by POSIX timers
 * on the threads' CPU clocks, -1 when it is not running on CPU time.
 */
int profopt_stacks_counters(void);
/* The rate the sampler runs at in this process (samples per second), 0 when it is stopped. */
uint32_t profopt_stacks_hz(void);

/* Monotonic clock in nanoseconds, the same clock the trace uses. */
int64_t profopt_now_ns(void);

#ifdef __cplusplus
}
#endif

#endif /* PROFOPT_H */
