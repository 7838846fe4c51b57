/*
 * profopt.c: the public API of libprofopt, thin wrappers over the "profopt" tracepoints.
 *
 * Each wrapper tests the tracepoint's enabled state before doing any work, so a call costs
 * a function call and a branch when nothing records. Only the data-loading stages read the
 * thread CPU clock (a system call), because their spans last milliseconds.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <ucontext.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cost.h"
#include "profopt.h"
#include "profopt_tp.h"
#include "sampler.h"

#define PO_EXPORT __attribute__((visibility("default")))

static const char *nonnull(const char *text)
{
	return text ? text : "";
}

static int64_t thread_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return -1;
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int is_loader_stage(enum profopt_stage stage)
{
	return stage == PROFOPT_STAGE_LOAD || stage == PROFOPT_STAGE_PREPROCESS ||
	       stage == PROFOPT_STAGE_COLLATE;
}

/*
 * The CPU time of an open loader span, per thread. Spans nest, so a small stack; deeper
 * loader spans than this are recorded without CPU time.
 */
#define CPU_STACK_DEPTH 8
static __thread int64_t cpu_stack[CPU_STACK_DEPTH];
static __thread int cpu_depth;

/*
 * The process announcement (profopt:process), owed before the first other event of the
 * process and again in a forked child. A race between two threads can announce twice;
 * the analyzer keeps the last announcement of a pid.
 */
static int announce_reason; /* 0: at start, 1: after a fork */
static volatile int announce_owed = 1;
static volatile int unregistered_noted;

/*
 * An event while the tracepoints are off, under profopt-record (which enables them all
 * before the command starts), means that the session daemon has not registered this
 * process yet: lttng-ust waits LTTNG_UST_REGISTER_TIMEOUT ms for that, then runs the
 * process untraced and drops its events without counting them. Said once per process in
 * profopt-record's notes file (one line: code, pid, name), so the recording can name the
 * process (docs/recording.md).
 */
static void note_unregistered(void)
{
	const char *path = getenv("PROFOPT_RECORD_NOTES");
	char name[17] = "", line[64];
	int length, fd;

	unregistered_noted = 1;
	if (!path || !*path || !getenv("PROFOPT_RECORDING"))
		return;
	prctl(PR_GET_NAME, name);
	for (char *c = name; *c; c++)
		if (*c == '\t' || *c == '\n')
			*c = ' ';
	length = snprintf(line, sizeof(line), "unregistered\t%d\t%s\n", (int)getpid(), name);
	fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return;
	if (write(fd, line, (size_t)length) != length) {
		/* the recording then cannot name this process; nothing else to do */
	}
	close(fd);
}

static void announce(void)
{
	const char *recording;

	if (!lttng_ust_tracepoint_enabled(profopt, process)) {
		if (!unregistered_noted)
			note_unregistered();
		return;
	}
	announce_owed = 0;
	recording = getenv("PROFOPT_RECORDING");
	lttng_ust_do_tracepoint(profopt, process, recording ? recording : "", (int32_t)getppid(),
				announce_reason);
	po_sampler_resume();
	po_stacks_resume();
}

#define ANNOUNCE()                                                                                 \
	do {                                                                                       \
		if (__builtin_expect(announce_owed, 0))                                            \
			announce();                                                                \
	} while (0)

bool po_announced(void)
{
	return !announce_owed;
}

void po_announce_after_fork(void)
{
	announce_reason = 1;
	announce_owed = 1;
	unregistered_noted = 0;
}

PO_EXPORT const char *profopt_version(void)
{
	return PROFOPT_VERSION_STRING;
}

PO_EXPORT int profopt_tracing_enabled(void)
{
	return lttng_ust_tracepoint_enabled(profopt, step_begin) ||
	       lttng_ust_tracepoint_enabled(profopt, stage_begin) ||
	       lttng_ust_tracepoint_enabled(profopt, gpu_activity) ||
	       lttng_ust_tracepoint_enabled(profopt, gpu_kernel);
}

PO_EXPORT int64_t profopt_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

PO_EXPORT void profopt_run_begin(const char *framework)
{
	ANNOUNCE();
	if (lttng_ust_tracepoint_enabled(profopt, run_begin)) {
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);

		lttng_ust_do_tracepoint(profopt, run_begin, nonnull(framework), (int32_t)cpus);
	}
}

PO_EXPORT void profopt_run_config(const char *key, const char *value)
{
	ANNOUNCE();
	lttng_ust_tracepoint(profopt, run_config, nonnull(key), nonnull(value));
}

PO_EXPORT void profopt_run_end(void)
{
	ANNOUNCE();
	lttng_ust_tracepoint(profopt, run_end);
}

PO_EXPORT void profopt_worker_begin(int64_t worker_id)
{
	ANNOUNCE();
	if (lttng_ust_tracepoint_enabled(profopt, worker_begin))
		lttng_ust_do_tracepoint(profopt, worker_begin, worker_id, (int32_t)getppid());
}

PO_EXPORT void profopt_worker_end(int64_t worker_id)
{
	ANNOUNCE();
	po_sampler_last_sets(); /* before worker_end: the analysis takes it out of the sums */
	if (lttng_ust_tracepoint_enabled(profopt, worker_end))
		lttng_ust_do_tracepoint(profopt, worker_end, worker_id, (int32_t)getppid());
}

PO_EXPORT void profopt_epoch_begin(int64_t epoch)
{
	ANNOUNCE();
	lttng_ust_tracepoint(profopt, epoch_begin, epoch);
}

PO_EXPORT void profopt_epoch_end(int64_t epoch)
{
	ANNOUNCE();
	lttng_ust_tracepoint(profopt, epoch_end, epoch);
}

PO_EXPORT void profopt_step_begin(int64_t step, int64_t epoch, int64_t batch_size)
{
	ANNOUNCE();
	po_stacks_note_span_thread();
	lttng_ust_tracepoint(profopt, step_begin, step, epoch, batch_size);
}

PO_EXPORT void profopt_step_end(int64_t step, int64_t epoch, int64_t batch_size)
{
	ANNOUNCE();
	lttng_ust_tracepoint(profopt, step_end, step, epoch, batch_size);
}

/*
 * The CPU stack is pushed and popped whether or not a session records, so that a session
 * starting or stopping in the middle of a span never pairs a begin with the wrong end.
 */
PO_EXPORT void profopt_stage_begin(enum profopt_stage stage, const char *label, int64_t batch,
				   int64_t sample)
{
	bool enabled = lttng_ust_tracepoint_enabled(profopt, stage_begin);

	ANNOUNCE();
	po_stacks_note_span_thread();
	if (is_loader_stage(stage)) {
		if (cpu_depth < CPU_STACK_DEPTH)
			cpu_stack[cpu_depth] = enabled ? thread_cpu_ns() : -1;
		cpu_depth++;
	}
	if (enabled)
		lttng_ust_do_tracepoint(profopt, stage_begin, (int)stage, nonnull(label), batch,
					sample, -1);
}

PO_EXPORT void profopt_stage_end(enum profopt_stage stage, const char *label, int64_t batch,
				 int64_t sample)
{
	bool enabled = lttng_ust_tracepoint_enabled(profopt, stage_end);
	int64_t cpu_ns = -1;

	ANNOUNCE();
	if (is_loader_stage(stage) && cpu_depth > 0) {
		cpu_depth--;
		if (enabled && cpu_depth < CPU_STACK_DEPTH && cpu_stack[cpu_depth] >= 0) {
			int64_t now = thread_cpu_ns();

			if (now >= 0)
				cpu_ns = now - cpu_stack[cpu_depth];
		}
	}
	if (enabled)
		lttng_ust_do_tracepoint(profopt, stage_end, (int)stage, nonnull(label), batch,
					sample, cpu_ns);
}

PO_EXPORT void profopt_batch_ready(int64_t batch, int64_t queue_depth)
{
	ANNOUNCE();
	lttng_ust_tracepoint(profopt, batch_ready, batch, queue_depth);
}

PO_EXPORT void profopt_counter(enum profopt_counter kind, int32_t device, int64_t value)
{
	ANNOUNCE();
	lttng_ust_tracepoint(profopt, counter, (int)kind, device, value);
}

PO_EXPORT void profopt_self_cost(int64_t hooks_ns, int64_t gc_ns)
{
	ANNOUNCE();
	lttng_ust_tracepoint(profopt, self_cost, hooks_ns, gc_ns, po_cost_library_threads_ns());
}

PO_EXPORT void profopt_mem_alloc(uint64_t addr, uint64_t bytes, int32_t device, const char *label)
{
	ANNOUNCE();
	if (lttng_ust_tracepoint_enabled(profopt, mem_alloc))
		lttng_ust_do_tracepoint(profopt, mem_alloc, addr, bytes, device, nonnull(label));
}

PO_EXPORT void profopt_mem_free(uint64_t addr, uint64_t bytes, int32_t device, const char *label)
{
	ANNOUNCE();
	if (lttng_ust_tracepoint_enabled(profopt, mem_free))
		lttng_ust_do_tracepoint(profopt, mem_free, addr, bytes, device, nonnull(label));
}

PO_EXPORT void profopt_gpu_launch(int32_t device, int32_t stream, uint64_t correlation_id,
				  const char *name)
{
	ANNOUNCE();
	if (lttng_ust_tracepoint_enabled(profopt, gpu_launch))
		lttng_ust_do_tracepoint(profopt, gpu_launch, device, stream, correlation_id,
					nonnull(name));
}

PO_EXPORT void profopt_gpu_activity(const struct profopt_gpu_record *record)
{
	ANNOUNCE();
	if (!record || !lttng_ust_tracepoint_enabled(profopt, gpu_activity))
		return;
	lttng_ust_do_tracepoint(profopt, gpu_activity, record->device, record->stream,
				(int)record->kind, nonnull(record->name), record->bytes,
				record->start_ns, record->end_ns, record->correlation_id);
}

PO_EXPORT void profopt_gpu_kernel(const struct profopt_gpu_record *record,
				  const struct profopt_gpu_kernel_shape *shape)
{
	static const struct profopt_gpu_kernel_shape unknown;

	ANNOUNCE();
	if (!record || !lttng_ust_tracepoint_enabled(profopt, gpu_kernel))
		return;
	lttng_ust_do_tracepoint(profopt, gpu_kernel, record, shape ? shape : &unknown);
}

PO_EXPORT void profopt_gpu_device(int32_t device, const char *name, uint64_t memory_bytes,
				  int32_t multiprocessors, int32_t capability_major,
				  int32_t capability_minor)
{
	ANNOUNCE();
	if (lttng_ust_tracepoint_enabled(profopt, gpu_device))
		lttng_ust_do_tracepoint(profopt, gpu_device, device, nonnull(name), memory_bytes,
					multiprocessors, capability_major, capability_minor);
}

PO_EXPORT void profopt_gpu_sync_begin(int32_t device, int32_t stream)
{
	ANNOUNCE();
	lttng_ust_tracepoint(profopt, gpu_sync_begin, device, stream);
}

PO_EXPORT void profopt_gpu_sync_end(int32_t device, int32_t stream)
{
	ANNOUNCE();
	lttng_ust_tracepoint(profopt, gpu_sync_end, device, stream);
}

PO_EXPORT void profopt_rank(int32_t rank, int32_t local_rank, int32_t world_size, const char *host)
{
	char name[256] = "";

	ANNOUNCE();
	if (!lttng_ust_tracepoint_enabled(profopt, rank))
		return;
	if (!host && gethostname(name, sizeof(name) - 1) == 0)
		host = name;
	lttng_ust_do_tracepoint(profopt, rank, rank, local_rank, world_size, nonnull(host));
}

PO_EXPORT void profopt_collective_begin(int32_t group, enum profopt_collective_op op,
					uint64_t bytes, int64_t seq, int32_t device)
{
	ANNOUNCE();
	lttng_ust_tracepoint(profopt, collective_begin, group, (int)op, bytes, seq, device);
}

PO_EXPORT void profopt_collective_end(int32_t group, enum profopt_collective_op op, uint64_t bytes,
				      int64_t seq, int32_t device)
{
	ANNOUNCE();
	lttng_ust_tracepoint(profopt, collective_end, group, (int)op, bytes, seq, device);
}

PO_EXPORT void profopt_code(uint32_t code_id, const char *function, const char *file,
			    int32_t first_line)
{
	ANNOUNCE();
	lttng_ust_tracepoint(profopt, code, code_id, nonnull(function), nonnull(file), first_line);
}

/* ---- native frames under a signal-driven sampler ---- */

/*
 * The code ids of native frames: one per shared object, described once per process as
 * "[native] NAME" (the object's file name) with its path and first line -1, from this base
 * up. A frame of such a code has as its line the offset of the instruction in the object,
 * which the analysis names (docs/sampling.md).
 */
#define NATIVE_CODE_BASE 0x80000000u
#define NATIVE_OBJECTS_MAX 256

static struct sigaction native_previous; /* the action the capture wraps */
static uint64_t native_pc;		 /* the main thread's latest interrupted pc; 0: none */
static struct {
	const void *base; /* the object's load address (dladdr's dli_fbase) */
	uint32_t code_id; /* 0: an interpreter object, which stands for no native frame */
} native_objects[NATIVE_OBJECTS_MAX];
static size_t native_object_count;
static pthread_once_t native_once = PTHREAD_ONCE_INIT;

static void native_forget(void)
{
	native_object_count = 0; /* a forked child describes its code again */
	native_pc = 0;
}

static void native_hooks(void)
{
	pthread_atfork(NULL, NULL, native_forget);
}

uint64_t po_interrupted_pc(const void *context)
{
	const ucontext_t *uc = context;

#if defined(__x86_64__)
	return (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
	return (uint64_t)uc->uc_mcontext.pc;
#else
	(void)uc;
	return 0;
#endif
}

/* Notes where the main thread was, then runs the action it wraps (the sampler's own). */
static void native_handler(int signo, siginfo_t *info, void *context)
{
	int saved = errno;

	if (syscall(SYS_gettid) == getpid())
		__atomic_store_n(&native_pc, po_interrupted_pc(context), __ATOMIC_RELAXED);
	errno = saved;
	if (native_previous.sa_flags & SA_SIGINFO) {
		if (native_previous.sa_sigaction)
			native_previous.sa_sigaction(signo, info, context);
	} else if (native_previous.sa_handler != SIG_DFL && native_previous.sa_handler != SIG_IGN) {
		native_previous.sa_handler(signo);
	}
}

PO_EXPORT int profopt_native_frames(int signo)
{
	struct sigaction current, ours;

#if !defined(__x86_64__) && !defined(__aarch64__)
	return -ENOTSUP;
#endif
	if (signo <= 0 || signo >= NSIG)
		return -EINVAL;
	pthread_once(&native_once, native_hooks);
	if (sigaction(signo, NULL, &current) != 0)
		return -errno;
	if ((current.sa_flags & SA_SIGINFO) && current.sa_sigaction == native_handler)
		return 0;
	if (!(current.sa_flags & SA_SIGINFO) &&
	    (current.sa_handler == SIG_DFL || current.sa_handler == SIG_IGN))
		return -EINVAL; /* nothing to wrap: the sampler's handler comes first */
	native_previous = current;
	ours = current;
	ours.sa_flags |= SA_SIGINFO;
	ours.sa_sigaction = native_handler;
	return sigaction(signo, &ours, NULL) == 0 ? 0 : -errno;
}

/*
 * Whether an object stands for no native frame: the interpreter's own (its pc means
 * "running Python code"), and the kernel's vDSO (clock_gettime and the like: the cost of
 * asking the time is the caller's own).
 */
bool po_no_native_frame(const char *path)
{
	const char *name = strrchr(path, '/');

	name = name ? name + 1 : path;
	return strncmp(name, "python", 6) == 0 || strncmp(name, "libpython", 9) == 0 ||
	       strncmp(name, "linux-vdso", 10) == 0 || strncmp(name, "linux-gate", 10) == 0;
}

/*
 * The code id of the object holding pc, described on first sight, and pc's offset in it
 * (0 past 4 GiB); 0: none to show.
 */
static uint32_t native_code(uint64_t pc, uint32_t *offset)
{
	Dl_info info;
	const char *name;
	char function[256];
	uint32_t code_id;

	if (!dladdr((const void *)(uintptr_t)pc, &info) || !info.dli_fname || !info.dli_fbase)
		return 0;
	*offset = pc - (uintptr_t)info.dli_fbase <= UINT32_MAX
		      ? (uint32_t)(pc - (uintptr_t)info.dli_fbase)
		      : 0;
	for (size_t i = 0; i < native_object_count; i++)
		if (native_objects[i].base == info.dli_fbase)
			return native_objects[i].code_id;
	if (native_object_count >= NATIVE_OBJECTS_MAX)
		return 0;
	code_id = po_no_native_frame(info.dli_fname)
		      ? 0
		      : NATIVE_CODE_BASE | (uint32_t)(native_object_count + 1);
	native_objects[native_object_count].base = info.dli_fbase;
	native_objects[native_object_count++].code_id = code_id;
	if (code_id) {
		name = strrchr(info.dli_fname, '/');
		snprintf(function, sizeof(function), "[native] %s",
			 name ? name + 1 : info.dli_fname);
		lttng_ust_tracepoint(profopt, code, code_id, function, info.dli_fname, -1);
	}
	return code_id;
}

PO_EXPORT void profopt_stack_sample(int32_t tid, int64_t cpu_ns, const uint32_t *code_ids,
				    const uint32_t *lines, uint32_t depth)
{
	uint32_t ids[PROFOPT_STACK_DEPTH_MAX], at[PROFOPT_STACK_DEPTH_MAX], native = 0, offset = 0;
	int32_t self = (int32_t)syscall(SYS_gettid);
	uint64_t pc;

	ANNOUNCE();
	if (!lttng_ust_tracepoint_enabled(profopt, stack_sample) || !code_ids || !lines)
		return;
	if (depth > PROFOPT_STACK_DEPTH_MAX)
		depth = PROFOPT_STACK_DEPTH_MAX;
	if (tid < 0)
		tid = self;
	/* the native code the main thread was in when the signal came, under its Python frame */
	if (tid == self && self == getpid() &&
	    (pc = __atomic_exchange_n(&native_pc, 0, __ATOMIC_RELAXED)))
		native = native_code(pc, &offset);
	if (!native) {
		lttng_ust_do_tracepoint(profopt, stack_sample, tid, cpu_ns, code_ids, lines, depth);
		return;
	}
	ids[0] = native;
	at[0] = offset;
	if (depth == PROFOPT_STACK_DEPTH_MAX)
		depth--; /* the outermost frame gives way */
	memcpy(&ids[1], code_ids, depth * sizeof(*ids));
	memcpy(&at[1], lines, depth * sizeof(*at));
	lttng_ust_do_tracepoint(profopt, stack_sample, tid, cpu_ns, ids, at, depth + 1);
}

/* ---- the signal timer of a wall-time sampler ---- */

static timer_t signal_timer;
static bool signal_timer_armed; /* a forked child has no timer: cleared there */
static pthread_once_t signal_timer_once = PTHREAD_ONCE_INIT;

static void signal_timer_forget(void)
{
	signal_timer_armed = false;
}

static void signal_timer_hooks(void)
{
	pthread_atfork(NULL, NULL, signal_timer_forget);
}

/*
 * The process's one signal timer: on clock, signo every period_us, to the calling thread
 * (SIGEV_THREAD_ID) or to the process (SIGEV_SIGNAL).
 */
static int signal_timer_start(clockid_t clock, int notify, int signo, uint32_t period_us)
{
	struct sigevent event = {.sigev_notify = notify, .sigev_signo = signo};
	struct itimerspec every = {
	    .it_interval = {.tv_sec = period_us / 1000000, .tv_nsec = period_us % 1000000 * 1000},
	};

	if (signo <= 0 || signo >= NSIG || period_us == 0)
		return -EINVAL;
	pthread_once(&signal_timer_once, signal_timer_hooks);
	profopt_signal_timer_stop();
	if (notify == SIGEV_THREAD_ID)
		event._sigev_un._tid = (pid_t)syscall(SYS_gettid); /* sigev_notify_thread_id */
	every.it_value = every.it_interval;
	if (timer_create(clock, &event, &signal_timer) != 0)
		return -errno;
	if (timer_settime(signal_timer, 0, &every, NULL) != 0) {
		int error = errno;

		timer_delete(signal_timer);
		return -error;
	}
	signal_timer_armed = true;
	return 0;
}

PO_EXPORT int profopt_signal_timer_start(int signo, uint32_t period_us)
{
	return signal_timer_start(CLOCK_MONOTONIC, SIGEV_THREAD_ID, signo, period_us);
}

PO_EXPORT int profopt_signal_cpu_timer_start(int signo, uint32_t period_us)
{
	return signal_timer_start(CLOCK_PROCESS_CPUTIME_ID, SIGEV_SIGNAL, signo, period_us);
}

PO_EXPORT int profopt_signal_timer_overrun(void)
{
	int overrun = signal_timer_armed ? timer_getoverrun(signal_timer) : 0;

	return overrun > 0 ? overrun : 0;
}

PO_EXPORT void profopt_signal_timer_stop(void)
{
	if (signal_timer_armed)
		timer_delete(signal_timer);
	signal_timer_armed = false;
}

/* ---- the CPU-time counter of a signal-driven sampler ---- */

static int signal_counter_fd = -1;
static pthread_once_t signal_counter_once = PTHREAD_ONCE_INIT;

/* A forked child holds a copy of the parent's counter's descriptor: closed, not stopped. */
static void signal_counter_forget(void)
{
	if (signal_counter_fd >= 0)
		close(signal_counter_fd);
	signal_counter_fd = -1;
}

static void signal_counter_hooks(void)
{
	pthread_atfork(NULL, NULL, signal_counter_forget);
}

PO_EXPORT int profopt_signal_counter_start(int signo, uint32_t period_us)
{
	if (signo <= 0 || signo >= NSIG || period_us == 0)
		return -EINVAL;
	pthread_once(&signal_counter_once, signal_counter_hooks);
	profopt_signal_counter_stop();
	signal_counter_fd =
	    po_cpu_counter_open((pid_t)syscall(SYS_gettid), (int64_t)period_us * 1000, signo);
	return signal_counter_fd >= 0 ? 0 : (errno ? -errno : -ENOTSUP);
}

PO_EXPORT void profopt_signal_counter_stop(void)
{
	signal_counter_forget();
}

PO_EXPORT int profopt_sampler_start(unsigned period_ms)
{
	return po_sampler_start(period_ms);
}

PO_EXPORT void profopt_sampler_stop(void)
{
	po_sampler_stop();
}
