/*
 * stacks.c: libprofopt's own function-level sampler for C and C++ programs
 * (profopt_stacks_start, docs/sampling.md): perf task-clock counters or POSIX timers signal
 * hz times per second of each thread's CPU time (or a POSIX timer of the calling thread's
 * wall time), always with SIGURG, and the handler records the interrupted thread's
 * instruction addresses as a profopt:native_stack event. In a Python process
 * (profopt_stacks_python) it records the thread's Python frames instead (pyframes.c),
 * under the shared object it interrupted, as a profopt:stack_sample event; on wall time
 * there the main thread and every thread that began a profopt span (a prefetch thread's
 * preprocess) have a timer of their own on CLOCK_MONOTONIC: the threads that only wait for
 * the runtime (multiprocessing's queue feeders, a native library's pool) would fill a
 * wall-time profile with their waiting, and their blocking calls are never interrupted.
 *
 * On CPU time every thread has a counter of its own, aimed at it (F_SETOWN_EX): its
 * overflow comes from a high-resolution timer at the period, where a POSIX CPU timer fires
 * at the scheduler tick after its expiry, and on a shared core a thread's samples then
 * drift toward the code it resumes in. Where the kernel refuses counters, each thread gets
 * a POSIX timer on its own CPU clock (SIGEV_THREAD_ID). A watcher thread lists the
 * process's threads (/proc/self/task) every PO_WATCH_MS, gives each new one its counter or
 * timer and deletes those of threads gone. One timer on
 * the process's CPU clock would not do: the kernel sends its signal to the process, which
 * gives it to the main thread whenever that one can take it, and another thread's CPU time
 * then goes to the main thread's stack or is not seen at all.
 *
 * SIGURG, never SIGPROF: its default action is to ignore it, so that no signal of the
 * sampler can end the program (one pending at exec, or after the program reset the action
 * to its default). POSIX timers, never setitimer(ITIMER_PROF): an interval timer survives
 * execve, whereas a POSIX timer is deleted at exec and is not inherited at fork (a forked
 * child makes its own here, in a pthread_atfork handler). The program's own SIGPROF or
 * SIGURG handler or ITIMER_PROF timer is never touched: the sampler refuses to start next to
 * them, and the watcher stops it when the program sets its own SIGURG action later.
 *
 * On CPU time nothing interrupts the program's waits: a counter signals only where its
 * period ends in user mode (exclude_kernel), so the signal comes on the thread's way back
 * to user mode, never inside a system call; a POSIX CPU timer fires as task work on the
 * return to user mode. On wall time the timer's signal comes to a thread blocked in a wait,
 * which then returns EINTR: wall time is asked for explicitly, and says so.
 *
 * The handler is async-signal-safe: it reads the interrupted pc from the ucontext, walks
 * the stack with glibc's backtrace() (made to load libgcc_s's unwinder at start, outside any
 * handler) and emits the tracepoint, which LTTng-UST 2.13 allows in a signal handler. It
 * does nothing but return when the event is not enabled (an untraced process).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <lttng/ust-thread.h>

#include "cost.h"
#include "profopt.h"
#include "profopt_tp.h"
#include "pyframes.h"
#include "sampler.h"
#include "stacks_internal.h"

#define PO_EXPORT __attribute__((visibility("default")))

#if defined(__x86_64__) || defined(__aarch64__)
#define PO_STACKS_SUPPORTED 1
#else
#define PO_STACKS_SUPPORTED 0
#endif

/*
 * Frames that backtrace() gives above the interrupted one when called in the handler: the
 * handler's own and the kernel's signal trampoline. A few spare, never fewer than there are.
 */
#define PO_HANDLER_FRAMES_MAX 16

/* How often the watcher looks for new threads: a thread's first milliseconds go unsampled. */
#define PO_WATCH_MS 50

/* Shared objects a Python process's samples can name as their innermost native frame. */
#define PO_OBJECTS_MAX 512

/* Code ids of those objects ("[native] NAME", first line -1), from this base up. */
#define PO_OBJECT_CODE_BASE 0x90000000u

/* Threads noted for beginning a span at most (those past it get no wall-time timer). */
#define PO_SPAN_THREADS_MAX 1024

/*
 * A thread's own sampler: a perf task-clock counter (counter_page, the mapping of its user
 * page that keeps it alive with no descriptor held), or where the kernel refuses one, a
 * POSIX timer on the thread's CPU clock (counter_page NULL); on wall time (a Python
 * process's main thread and its threads that began a span) a POSIX timer on
 * CLOCK_MONOTONIC aimed at the thread.
 */
struct thread_timer {
	pid_t tid;
	void *counter_page;
	timer_t timer;
	bool seen; /* listed by the latest look at the threads */
};

struct stacks {
	pthread_mutex_t control; /* serializes start, stop and fork */
	/*
	 * SIGURG's action is on_sigurg, installed by start, the one before kept here: every
	 * counter and timer of the sampler signals SIGURG, whose default action is to ignore
	 * it, so that a signal of the sampler can never end the program (docs/sampling.md).
	 */
	struct sigaction previous_urg;
	bool handler_ours;
	bool counters; /* CPU time by perf counters where the kernel allows (else timers) */
	bool armed;    /* timer exists in this process (not after fork: remade) */
	timer_t timer; /* wall time in a C program: the starting thread's */
	uint32_t hz;   /* the rate while running, else 0; atomic (the watcher clears it) */
	/*
	 * CLOCK_MONOTONIC: in a C program the starting thread's, in a Python process the main
	 * thread's and those of the threads that began a span; else each thread's CPU clock.
	 */
	bool wall;
	int64_t period_ns;	      /* what one expiration stands for; read by the handler */
	struct thread_timer *threads; /* owned, one per thread sampled; the watcher's */
	size_t thread_count, thread_capacity;
	pthread_t watcher;
	bool watching;		    /* the watcher runs */
	bool resume_watch;	    /* a forked child starts its watcher at its announcement */
	pthread_mutex_t watch_lock; /* guards watch_stop and watch_running */
	pthread_cond_t watch_wake;
	bool watch_stop, watch_running;
	/*
	 * A Python process (profopt_stacks_python): samples are the thread's Python frames
	 * (pyframes.c), under the shared object the signal interrupted, as profopt:stack_sample.
	 */
	bool python;
	unsigned long long objects_adds; /* dl_iterate_phdr's count of loads at the last look */
};

/*
 * A shared object of a Python process, mapped at [start, end), its offsets counted from base
 * (dladdr's dli_fbase); code_id 0 for the interpreter's own and the vDSO, which stand for no
 * native frame (their time is the Python code's). Entries are only appended: the handler
 * reads the first object_count without a lock, the newest first (an object loaded where an
 * unloaded one was).
 */
struct native_object {
	uint64_t start, end, base;
	const char *path; /* the loader's name for it, valid while it is loaded */
	uint32_t code_id;
	uint32_t described; /* its profopt:code was emitted (by the first sample naming it) */
};

static struct native_object objects[PO_OBJECTS_MAX];
static uint32_t object_count;

/* Samples this process took since the sampler started in it, and the time they stand for. */
static uint64_t taken_count;
static int64_t taken_ns;

static void count_sample(int64_t weight_ns)
{
	__atomic_add_fetch(&taken_count, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&taken_ns, weight_ns, __ATOMIC_RELAXED);
}

/*
 * The threads other than the main one that began a stage or step span (profopt.c calls
 * po_stacks_note_span_thread): the threads of a Python process that get wall-time timers
 * besides the main one. Appended by the threads themselves, read by the watcher.
 */
static pid_t span_threads[PO_SPAN_THREADS_MAX];
static uint32_t span_thread_count;
static __thread bool span_thread_noted __attribute__((tls_model("initial-exec")));

void po_stacks_note_span_thread(void)
{
	pid_t tid;
	uint32_t slot;

	if (span_thread_noted)
		return;
	span_thread_noted = true;
	tid = (pid_t)syscall(SYS_gettid);
	if (tid == getpid())
		return;
	slot = __atomic_fetch_add(&span_thread_count, 1, __ATOMIC_RELAXED);
	if (slot < PO_SPAN_THREADS_MAX)
		__atomic_store_n(&span_threads[slot], tid, __ATOMIC_RELEASE);
}

/* Whether thread tid gets a wall-time timer in a Python process. */
static bool wall_sampled(pid_t tid)
{
	uint32_t count = __atomic_load_n(&span_thread_count, __ATOMIC_RELAXED);

	if (tid == getpid())
		return true;
	for (uint32_t i = 0; i < count && i < PO_SPAN_THREADS_MAX; i++)
		if (__atomic_load_n(&span_threads[i], __ATOMIC_ACQUIRE) == tid)
			return true;
	return false;
}

static struct stacks the_stacks = {.control = PTHREAD_MUTEX_INITIALIZER,
				   .watch_lock = PTHREAD_MUTEX_INITIALIZER,
				   .watch_wake = PTHREAD_COND_INITIALIZER};

po_stacks_hook_fn *po_stacks_test_hook;

/* A sample in progress on this thread: a signal nested in it records nothing. */
static __thread int in_sample __attribute__((tls_model("initial-exec")));
/*
 * The thread's CPU clock at its previous sample of the sampler's generation cpu_generation
 * (which each arm() advances: a thread's first sample after a start has no previous one).
 */
static __thread int64_t cpu_seen_ns __attribute__((tls_model("initial-exec")));
static __thread uint32_t cpu_seen_generation __attribute__((tls_model("initial-exec")));
static uint32_t cpu_generation = 1;

/* ---- the signal handler (async-signal-safe only) ---- */

/*
 * Keeps of backtrace()'s frames the interrupted one (the entry equal to pc) and its callers,
 * at most PROFOPT_STACK_DEPTH_MAX, in pcs; the pc alone when no entry equals it (the
 * unwinder could not cross the signal frame). Returns the depth kept.
 */
static uint32_t keep_interrupted(void *const *frames, int count, uint64_t pc, uint64_t *pcs)
{
	uint32_t depth = 0;
	int first = 0;

	while (first < count && (uint64_t)(uintptr_t)frames[first] != pc)
		first++;
	if (first == count) {
		pcs[0] = pc;
		return 1;
	}
	for (int i = first; i < count && depth < PROFOPT_STACK_DEPTH_MAX; i++)
		pcs[depth++] = (uint64_t)(uintptr_t)frames[i];
	return depth;
}

/*
 * One period per expiration of the thread's timer: 1 + the expirations merged into this
 * signal while it was pending (si_overrun, what timer_getoverrun() returns for it, without
 * a system call).
 */
static int64_t sample_weight_ns(const siginfo_t *info)
{
	int64_t period_ns = __atomic_load_n(&the_stacks.period_ns, __ATOMIC_RELAXED), now_ns;
	struct timespec now;
	uint32_t generation;

	if (info->si_code == SI_TIMER)
		return period_ns * (1 + (info->si_overrun > 0 ? info->si_overrun : 0));
	/*
	 * A counter's signal: the thread's CPU time since its previous sample, read from its
	 * CPU clock (a signal merged into one pending is not lost time, and the periods that
	 * ended in the kernel, where the counter does not signal, go to this sample); one
	 * period for the thread's first sample, or when the clock cannot be read. The counter
	 * itself has no descriptor to read (make_counter).
	 */
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now) != 0)
		return period_ns;
	now_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
	generation = __atomic_load_n(&cpu_generation, __ATOMIC_RELAXED);
	if (cpu_seen_generation == generation && now_ns > cpu_seen_ns)
		period_ns = now_ns - cpu_seen_ns;
	cpu_seen_generation = generation;
	cpu_seen_ns = now_ns;
	return period_ns;
}

/*
 * Emits profopt:code for a Python function seen for the first time (pyframes.c); false
 * while the process records nothing (before its announcement, or untraced), and the
 * function is then described at a later sight.
 */
static bool describe_code(uint32_t code_id, const char *function, const char *file,
			  int32_t first_line)
{
	if (!po_announced() || !lttng_ust_tracepoint_enabled(profopt, code))
		return false;
	lttng_ust_do_tracepoint(profopt, code, code_id, function, file, first_line);
	return true;
}

/* Emits profopt:code for an object: "[native] NAME", its path, first line -1. */
static void describe_object(const struct native_object *object)
{
	const char *name = strrchr(object->path, '/');
	char function[256] = "[native] ";
	size_t used = strlen(function);

	name = name ? name + 1 : object->path;
	for (size_t i = 0; name[i] && used + 1 < sizeof(function); i++)
		function[used++] = name[i];
	function[used] = '\0';
	describe_code(object->code_id, function, object->path, -1);
}

/* The shared object holding pc, NULL when none is known. */
static const struct native_object *object_of(uint64_t pc)
{
	for (uint32_t i = __atomic_load_n(&object_count, __ATOMIC_ACQUIRE); i-- > 0;)
		if (pc >= objects[i].start && pc < objects[i].end)
			return &objects[i];
	return NULL;
}

/*
 * A Python process's sample: the thread's Python frames, under the shared object it was
 * interrupted in (libjpeg under PIL's decode) as a frame whose line is the offset of the
 * instruction in it, which the analysis names. A thread without Python frames (a pool
 * thread of a native library) records nothing. Counted always, recorded only once the
 * process announced itself with its events on: a code object or shared object described
 * before (a forked child's first samples on wall time, before its first call to profopt
 * or its registration with the session daemon) would be lost to the analysis, and every
 * later sample naming it unknown; it is described at its first recorded sample instead.
 */
static void python_sample(const siginfo_t *info, const void *context)
{
	uint32_t ids[PROFOPT_STACK_DEPTH_MAX], lines[PROFOPT_STACK_DEPTH_MAX], native = 0, depth;
	int64_t weight_ns = sample_weight_ns(info);
	uint64_t pc = po_interrupted_pc(context);
	const struct native_object *object = object_of(pc);
	bool announced = po_announced();
	bool recorded = announced && lttng_ust_tracepoint_enabled(profopt, stack_sample);

	if (object && object->code_id) {
		if (recorded &&
		    !__atomic_exchange_n((uint32_t *)&object->described, 1, __ATOMIC_RELAXED))
			describe_object(object);
		ids[0] = object->code_id;
		lines[0] = pc - object->base <= UINT32_MAX ? (uint32_t)(pc - object->base) : 0;
		native = 1;
	}
	depth = po_pyframes_walk(
	    ids + native, lines + native, PROFOPT_STACK_DEPTH_MAX - native,
	    announced && lttng_ust_tracepoint_enabled(profopt, code) ? describe_code : NULL);
	if (depth)
		count_sample(weight_ns);
	if (depth && recorded)
		lttng_ust_do_tracepoint(profopt, stack_sample, (int32_t)syscall(SYS_gettid),
					weight_ns, ids, lines, depth + native);
}

static void sample(const siginfo_t *info, const void *context)
{
	void *frames[PO_HANDLER_FRAMES_MAX + PROFOPT_STACK_DEPTH_MAX];
	uint64_t pcs[PROFOPT_STACK_DEPTH_MAX];
	int count;
	uint32_t depth;
	int32_t tid;
	int64_t weight_ns;
	po_stacks_hook_fn *hook = __atomic_load_n(&po_stacks_test_hook, __ATOMIC_RELAXED);

	if (__atomic_load_n(&the_stacks.python, __ATOMIC_RELAXED)) {
		python_sample(info, context);
		return;
	}
	count = backtrace(frames, (int)(sizeof(frames) / sizeof(frames[0])));
	depth = keep_interrupted(frames, count, po_interrupted_pc(context), pcs);
	tid = (int32_t)syscall(SYS_gettid);
	weight_ns = sample_weight_ns(info);
	count_sample(weight_ns);
	if (lttng_ust_tracepoint_enabled(profopt, native_stack))
		lttng_ust_do_tracepoint(profopt, native_stack, tid, weight_ns, pcs, depth);
	if (hook)
		hook(tid, weight_ns, pcs, depth);
}

/*
 * A SIGURG of the sampler's timer (si_value is the sampler's address), not one of another
 * sender (kill, a socket's urgent data, another timer), which the handler drops as
 * SIGURG's default action does.
 */
static bool from_our_timer(const siginfo_t *info)
{
	return info && info->si_code == SI_TIMER && info->si_value.sival_ptr == &the_stacks;
}

/*
 * A SIGURG of one of the sampler's counters: POLL_IN, as the kernel sends it for a
 * descriptor whose owner asked for SIGURG (F_SETSIG). A program's own descriptor set to
 * signal SIGURG would need a SIGURG handler of its own, which the sampler never runs beside
 * (take_sigurg, action_still_ours).
 */
static bool from_our_counter(const siginfo_t *info)
{
	return info && info->si_code == POLL_IN;
}

static void sample_if_traced(siginfo_t *info, void *context)
{
	/*
	 * A Python process reads its frames traced or not, as the module's handler does: the
	 * program runs the same either way, and its tests count samples without a session.
	 */
	if (!in_sample && (lttng_ust_tracepoint_enabled(profopt, native_stack) ||
			   __atomic_load_n(&the_stacks.python, __ATOMIC_RELAXED) ||
			   __atomic_load_n(&po_stacks_test_hook, __ATOMIC_RELAXED))) {
		in_sample = 1;
		sample(info, context);
		in_sample = 0;
	}
}

/*
 * The signal of every counter and timer of the sampler. SIGURG's action before ours was its
 * default or ignore (start refuses a handler of the program's), both of which drop a SIGURG
 * of another sender, as this does.
 */
static void on_sigurg(int signo, siginfo_t *info, void *context)
{
	int saved_errno = errno;

	(void)signo;
	if (from_our_counter(info) || from_our_timer(info))
		sample_if_traced(info, context);
	errno = saved_errno;
}

/* ---- the SIGURG action and the timers (called with the control lock held) ---- */

static bool is_handler(const struct sigaction *action)
{
	if (action->sa_flags & SA_SIGINFO)
		return action->sa_sigaction != NULL;
	return action->sa_handler != SIG_DFL && action->sa_handler != SIG_IGN;
}

static bool is_ours(const struct sigaction *action)
{
	return (action->sa_flags & SA_SIGINFO) && action->sa_sigaction == on_sigurg;
}

/* Whether the program runs its own ITIMER_PROF (with SIGPROF ignored or fatal). */
static bool prof_itimer_running(void)
{
	struct itimerval prof;

	return getitimer(ITIMER_PROF, &prof) == 0 &&
	       (prof.it_value.tv_sec != 0 || prof.it_value.tv_usec != 0);
}

/*
 * -EBUSY when the program profiles itself: a SIGPROF handler or an ITIMER_PROF timer of its
 * own (another profiler), which the sampler leaves alone and does not run beside. The
 * sampler itself never uses SIGPROF.
 */
static int check_sigprof(void)
{
	struct sigaction current;

	if (sigaction(SIGPROF, NULL, &current) != 0)
		return -errno;
	return is_handler(&current) || prof_itimer_running() ? -EBUSY : 0;
}

/*
 * Installs on_sigurg, keeping the action it replaces; -EBUSY when SIGURG has a handler of
 * the program's (also when it replaced ours since the sampler started).
 */
static int take_sigurg(void)
{
	struct sigaction current, ours;

	if (sigaction(SIGURG, NULL, &current) != 0)
		return -errno;
	if (the_stacks.handler_ours && is_ours(&current))
		return 0;
	the_stacks.handler_ours = false; /* the program's handler replaced ours: keep it */
	if (is_handler(&current))
		return -EBUSY;
	memset(&ours, 0, sizeof(ours));
	ours.sa_sigaction = on_sigurg;
	ours.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&ours.sa_mask);
	if (sigaction(SIGURG, &ours, &the_stacks.previous_urg) != 0)
		return -errno;
	the_stacks.handler_ours = true;
	return 0;
}

/* Gives SIGURG its previous action back, unless the program installed its own since. */
static void release_sigurg(void)
{
	struct sigaction current;

	if (!the_stacks.handler_ours)
		return;
	the_stacks.handler_ours = false;
	if (sigaction(SIGURG, NULL, &current) == 0 && is_ours(&current))
		sigaction(SIGURG, &the_stacks.previous_urg, NULL);
}

/*
 * A timer sending SIGURG to thread tid every period of clock; false when it cannot be made
 * (the thread is gone).
 */
static bool make_timer(clockid_t clock, pid_t tid, timer_t *timer)
{
	int64_t period_ns = __atomic_load_n(&the_stacks.period_ns, __ATOMIC_RELAXED);
	struct sigevent event = {.sigev_signo = SIGURG,
				 .sigev_notify = SIGEV_THREAD_ID,
				 .sigev_value.sival_ptr = &the_stacks};
	struct itimerspec every = {
	    .it_interval = {.tv_sec = period_ns / 1000000000, .tv_nsec = period_ns % 1000000000},
	};

	event._sigev_un._tid = tid; /* sigev_notify_thread_id */
	every.it_value = every.it_interval;
	if (timer_create(clock, &event, timer) != 0)
		return false;
	if (timer_settime(*timer, 0, &every, NULL) != 0) {
		timer_delete(*timer);
		return false;
	}
	return true;
}

int po_cpu_counter_open(pid_t tid, int64_t period_ns, int signo)
{
	struct perf_event_attr attr = {.size = sizeof(attr),
				       .type = PERF_TYPE_SOFTWARE,
				       .config = PERF_COUNT_SW_TASK_CLOCK,
				       .sample_period = (uint64_t)period_ns,
				       .wakeup_events = 1,
				       /* overflows only where the period ends in user mode */
				       .exclude_kernel = 1,
				       .exclude_hv = 1};
	struct f_owner_ex owner = {.type = F_OWNER_TID, .pid = tid};
	int fd = (int)syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);

	if (fd < 0)
		return -1;
	if (fcntl(fd, F_SETSIG, signo) != 0 || fcntl(fd, F_SETOWN_EX, &owner) != 0 ||
	    fcntl(fd, F_SETFL, O_ASYNC) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Thread tid's counter (po_cpu_counter_open), sending SIGURG, whose default action is to
 * ignore it: a signal the counter sent while the thread blocked it stays pending through
 * execve (it is not the counter's, as a POSIX timer's is), and the program exec'd must not
 * die of it. The counter holds no descriptor of the program's: the mapping of its user
 * page (one page, not inherited at fork, gone at exec) keeps it alive and signalling, and
 * its descriptor is closed at once (a program with many threads would otherwise run short
 * of descriptors under its RLIMIT_NOFILE). NULL when there is none (the thread then gets a
 * POSIX timer, which holds no descriptor either).
 */
static void *make_counter(pid_t tid)
{
	int fd = po_cpu_counter_open(tid, __atomic_load_n(&the_stacks.period_ns, __ATOMIC_RELAXED),
				     SIGURG);
	long page_bytes = sysconf(_SC_PAGESIZE);
	void *page;

	if (fd < 0)
		return NULL;
	page = mmap(NULL, (size_t)page_bytes, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (page == MAP_FAILED) /* locked memory refused: perf_event_mlock_kb, RLIMIT_MEMLOCK */
		return NULL;
	if (madvise(page, (size_t)page_bytes, MADV_DONTFORK) != 0) {
		munmap(page, (size_t)page_bytes); /* a child would keep the parent's counter */
		return NULL;
	}
	return page;
}

/* Ends a thread's sampler: its counter (unmapping its page ends it) or its timer. */
static void thread_timer_delete(const struct thread_timer *thread)
{
	if (thread->counter_page)
		munmap(thread->counter_page, (size_t)sysconf(_SC_PAGESIZE));
	else
		timer_delete(thread->timer);
}

/* The kernel's id of thread tid's CPU clock (MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)). */
static clockid_t thread_cpu_clock(pid_t tid)
{
	return (clockid_t)((~(unsigned)tid << 3) | 6u);
}

static struct thread_timer *find_thread(pid_t tid)
{
	for (size_t i = 0; i < the_stacks.thread_count; i++)
		if (the_stacks.threads[i].tid == tid)
			return &the_stacks.threads[i];
	return NULL;
}

/* Gives thread tid its counter or timer. */
static void add_thread(pid_t tid)
{
	struct thread_timer *grown;
	size_t capacity = the_stacks.thread_capacity ? 2 * the_stacks.thread_capacity : 16;
	timer_t timer = 0;
	void *counter_page;

	if (the_stacks.thread_count == the_stacks.thread_capacity) {
		grown = realloc(the_stacks.threads, capacity * sizeof(*grown));
		if (!grown)
			return;
		the_stacks.threads = grown;
		the_stacks.thread_capacity = capacity;
	}
	counter_page = the_stacks.counters && !the_stacks.wall ? make_counter(tid) : NULL;
	if (counter_page ||
	    make_timer(the_stacks.wall ? CLOCK_MONOTONIC : thread_cpu_clock(tid), tid, &timer))
		the_stacks.threads[the_stacks.thread_count++] = (struct thread_timer){
		    .tid = tid, .counter_page = counter_page, .timer = timer, .seen = true};
}

/* Keeps the calling thread's counter or timer, made already (a forked child's). */
static void add_thread_timer(void *counter_page, timer_t timer)
{
	struct thread_timer *grown = the_stacks.thread_capacity
					 ? the_stacks.threads
					 : realloc(the_stacks.threads, 16 * sizeof(*grown));

	if (!grown) {
		thread_timer_delete(
		    &(struct thread_timer){.counter_page = counter_page, .timer = timer});
		return;
	}
	the_stacks.threads = grown;
	the_stacks.thread_capacity = the_stacks.thread_capacity ? the_stacks.thread_capacity : 16;
	the_stacks.threads[the_stacks.thread_count++] =
	    (struct thread_timer){.tid = (pid_t)syscall(SYS_gettid),
				  .counter_page = counter_page,
				  .timer = timer,
				  .seen = true};
}

/*
 * One look at the process's threads (but skip, the watcher): a timer for each new one,
 * those of threads gone deleted; on wall time (a Python process), only the main thread and
 * the threads that began a span. false when the threads cannot be listed.
 */
static bool watch_threads(pid_t skip)
{
	DIR *dir = opendir("/proc/self/task");
	struct dirent *entry;

	if (!dir)
		return false;
	for (size_t i = 0; i < the_stacks.thread_count; i++)
		the_stacks.threads[i].seen = false;
	while ((entry = readdir(dir)) != NULL) {
		pid_t tid = (pid_t)strtol(entry->d_name, NULL, 10);
		struct thread_timer *known;

		if (tid <= 0 || tid == skip || (the_stacks.wall && !wall_sampled(tid)))
			continue;
		known = find_thread(tid);
		if (known)
			known->seen = true;
		else
			add_thread(tid);
	}
	closedir(dir);
	for (size_t i = the_stacks.thread_count; i-- > 0;) {
		if (the_stacks.threads[i].seen)
			continue;
		thread_timer_delete(&the_stacks.threads[i]);
		the_stacks.threads[i] = the_stacks.threads[--the_stacks.thread_count];
	}
	return true;
}

/* ---- the shared objects of a Python process (outside the handler) ---- */

static pthread_mutex_t objects_lock = PTHREAD_MUTEX_INITIALIZER;

static bool object_known(uint64_t start, uint64_t end)
{
	for (uint32_t i = 0; i < object_count; i++)
		if (objects[i].start == start && objects[i].end == end)
			return true;
	return false;
}

/* Appends an object not seen before; the first sample that names it describes it. */
/* One look at the loaded objects: whether the count of loads was checked yet. */
struct objects_look {
	bool checked;
};

static int add_object(struct dl_phdr_info *info, size_t size, void *data)
{
	struct objects_look *look = data;
	uint64_t start = UINT64_MAX, end = 0, page = (uint64_t)sysconf(_SC_PAGESIZE);
	const char *path =
	    info->dlpi_name && *info->dlpi_name ? info->dlpi_name : program_invocation_name;
	struct native_object *object;

	/* each object carries the count of loads: none since the last look, nothing new */
	if (!look->checked && size >= offsetof(struct dl_phdr_info, dlpi_subs)) {
		look->checked = true;
		if (the_stacks.objects_adds == info->dlpi_adds && object_count)
			return 1;
		the_stacks.objects_adds = info->dlpi_adds;
	}
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *segment = &info->dlpi_phdr[i];

		if (segment->p_type != PT_LOAD)
			continue;
		if (info->dlpi_addr + segment->p_vaddr < start)
			start = info->dlpi_addr + segment->p_vaddr;
		if (info->dlpi_addr + segment->p_vaddr + segment->p_memsz > end)
			end = info->dlpi_addr + segment->p_vaddr + segment->p_memsz;
	}
	if (start >= end || object_known(start, end) || object_count >= PO_OBJECTS_MAX)
		return 0;
	object = &objects[object_count];
	object->start = start;
	object->end = end;
	object->base = start & ~(page - 1);
	object->path = path;
	object->described = 0;
	object->code_id = po_no_native_frame(path) ? 0 : PO_OBJECT_CODE_BASE + object_count + 1;
	__atomic_store_n(&object_count, object_count + 1, __ATOMIC_RELEASE);
	return 0;
}

/* Looks for objects loaded since the last look (dl_iterate_phdr counts the loads). */
static void refresh_objects(void)
{
	struct objects_look look = {.checked = false};

	pthread_mutex_lock(&objects_lock);
	dl_iterate_phdr(add_object, &look);
	pthread_mutex_unlock(&objects_lock);
}

static bool one_wall_timer(void);

/* Ends every counter and timer of the sampler in this process (the watcher's, or stopped). */
static void delete_timers(void)
{
	for (size_t i = 0; i < the_stacks.thread_count; i++)
		thread_timer_delete(&the_stacks.threads[i]);
	the_stacks.thread_count = 0;
	if (the_stacks.armed)
		timer_delete(the_stacks.timer);
	the_stacks.armed = false;
}

/*
 * Whether SIGURG's action is still the sampler's. The program may set its own at any time
 * (a handler, or SIG_DFL or SIG_IGN back): the sampler's signals would then go to the
 * program's handler, or be dropped, and the profile would hold almost nothing without a
 * word.
 */
static bool action_still_ours(void)
{
	struct sigaction current;

	return sigaction(SIGURG, NULL, &current) != 0 || is_ours(&current);
}

/*
 * The program took SIGURG over: every counter and timer ends (the program's action is left
 * as it is), and the run's configuration says so (stacks_stopped), which the analysis
 * reports as a trace quality warning. Called by the watcher, which then ends.
 */
static void stop_for_program(void)
{
	delete_timers();
	__atomic_store_n(&the_stacks.hz, 0, __ATOMIC_RELAXED);
}

static void note_stopped(void)
{
	static const char reason[] = "the program set its own SIGURG action while sampled";

	fprintf(stderr, "profopt: function samples stopped: %s\n", reason);
	profopt_run_config("stacks_stopped", reason);
}

static void *watcher_main(void *unused)
{
	pid_t self = (pid_t)syscall(SYS_gettid);
	struct po_cost_meter meter = po_cost_meter_start(PO_COST_SLOT_STACKS_WATCHER);
	struct timespec next;
	sigset_t all;
	bool stopped = false;

	(void)unused;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	pthread_mutex_lock(&the_stacks.watch_lock);
	the_stacks.watch_running = true;
	pthread_cond_broadcast(&the_stacks.watch_wake);
	while (!the_stacks.watch_stop) {
		if (!action_still_ours()) {
			stop_for_program();
			stopped = true;
			break;
		}
		if (!one_wall_timer())
			watch_threads(self);
		if (__atomic_load_n(&the_stacks.python, __ATOMIC_RELAXED))
			refresh_objects();
		po_cost_meter_note(&meter);
		clock_gettime(CLOCK_REALTIME, &next);
		next.tv_nsec += PO_WATCH_MS * 1000000L;
		next.tv_sec += next.tv_nsec / 1000000000L;
		next.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&the_stacks.watch_wake, &the_stacks.watch_lock, &next);
	}
	pthread_mutex_unlock(&the_stacks.watch_lock);
	if (stopped)
		note_stopped();
	return NULL;
}

/*
 * Starts the watcher and returns once it runs (a fork right after must not find it still
 * setting up); false when it cannot be started.
 */
static bool watch_start(void)
{
	pthread_mutex_lock(&the_stacks.watch_lock);
	the_stacks.watch_stop = false;
	the_stacks.watch_running = false;
	if (pthread_create(&the_stacks.watcher, NULL, watcher_main, NULL) != 0) {
		pthread_mutex_unlock(&the_stacks.watch_lock);
		return false;
	}
	while (!the_stacks.watch_running)
		pthread_cond_wait(&the_stacks.watch_wake, &the_stacks.watch_lock);
	pthread_mutex_unlock(&the_stacks.watch_lock);
	the_stacks.watching = true;
	return true;
}

static void watch_stop(void)
{
	if (!the_stacks.watching)
		return;
	pthread_mutex_lock(&the_stacks.watch_lock);
	the_stacks.watch_stop = true;
	pthread_cond_broadcast(&the_stacks.watch_wake);
	pthread_mutex_unlock(&the_stacks.watch_lock);
	pthread_join(the_stacks.watcher, NULL);
	the_stacks.watching = false;
}

static void disarm(void)
{
	watch_stop();
	the_stacks.resume_watch = false;
	delete_timers();
	__atomic_store_n(&the_stacks.hz, 0, __ATOMIC_RELAXED);
}

/* Wall time in a C program: one timer, the starting thread's (the_stacks.timer). */
static bool one_wall_timer(void)
{
	return the_stacks.wall && !__atomic_load_n(&the_stacks.python, __ATOMIC_RELAXED);
}

/* Whether any thread's CPU time is sampled by a counter (the others have timers). */
static bool any_counter(void)
{
	for (size_t i = 0; i < the_stacks.thread_count; i++)
		if (the_stacks.threads[i].counter_page)
			return true;
	return false;
}

/*
 * Makes the timers: SIGURG every 1/hz s of each thread's CPU time to that thread (the
 * threads there now, then those the watcher finds), or of wall time to the calling thread
 * (in a Python process, to the main thread and to each thread that began a span, found
 * likewise). Replaces the timers already there. The watcher runs in every case: it also
 * stops the sampler when the program takes SIGURG over (action_still_ours).
 */
static int arm(uint32_t hz, bool wall)
{
	disarm();
	__atomic_store_n(&the_stacks.period_ns, 1000000000 / hz, __ATOMIC_RELAXED);
	__atomic_add_fetch(&cpu_generation, 1, __ATOMIC_RELAXED);
	the_stacks.wall = wall;
	if (one_wall_timer()) {
		if (!make_timer(CLOCK_MONOTONIC, (pid_t)syscall(SYS_gettid), &the_stacks.timer))
			return -errno;
		the_stacks.armed = true;
	} else if (!watch_threads(0)) {
		return errno ? -errno : -ENOENT;
	}
	if (the_stacks.counters && !wall && !any_counter())
		the_stacks.counters = false; /* the kernel refused them: POSIX timers sample */
	if (!watch_start()) {
		disarm();
		return -EAGAIN;
	}
	__atomic_store_n(&the_stacks.hz, hz, __ATOMIC_RELAXED);
	return 0;
}

static void stop_locked(void)
{
	disarm();
	release_sigurg();
}

/* PROFOPT_STACKS_COUNTERS=0: POSIX timers on CPU time, never perf counters. */
static bool counters_wanted(void)
{
	const char *text = getenv("PROFOPT_STACKS_COUNTERS");

	return !text || strcmp(text, "0") != 0;
}

/* Starts, or restarts at a new rate and clock; stopped on failure. */
static int start_locked(uint32_t hz, bool wall)
{
	int ret = check_sigprof();

	if (ret == 0)
		ret = take_sigurg();
	the_stacks.counters = !wall && counters_wanted();
	if (ret == 0)
		ret = arm(hz, wall);
	if (ret != 0)
		stop_locked();
	return ret;
}

/* ---- the public API ---- */

/*
 * What the run config says of the samples: their clock, which the analysis reads to say
 * "wall time", and their rate.
 */
static void note_config(uint32_t hz, bool wall, bool counters)
{
	char text[16];

	snprintf(text, sizeof(text), "%u", (unsigned)hz);
	profopt_run_config("stacks_clock", wall ? "wall" : "cpu");
	profopt_run_config("stacks_hz", text);
	/* what fires the samples: perf task-clock counters, or POSIX timers (at the tick) */
	profopt_run_config("stacks_timer", wall ? "timer" : counters ? "counter" : "cpu-timer");
}

PO_EXPORT int profopt_stacks_start(uint32_t hz, int wall)
{
	void *warm_up[4];
	bool counters;
	int ret;

	if (!PO_STACKS_SUPPORTED)
		return -ENOTSUP;
	if (hz < 1 || hz > PROFOPT_STACKS_HZ_MAX)
		return -EINVAL;
	/*
	 * backtrace() loads libgcc_s and its unwinder on first use, which a signal handler must
	 * not do; LTTng-UST's thread-local state is made here too, for the same reason. Both
	 * before the lock: loading may emit events (LTTng-UST's dl wrapper), and an event must
	 * never wait for a fork while the lock is held (the fork handlers take the lock).
	 */
	backtrace(warm_up, 4);
	lttng_ust_init_thread();
	pthread_mutex_lock(&the_stacks.control);
	ret = start_locked(hz, wall != 0);
	counters = the_stacks.counters;
	pthread_mutex_unlock(&the_stacks.control);
	if (ret == 0)
		note_config(hz, wall != 0, counters);
	return ret;
}

PO_EXPORT void profopt_stacks_stop(void)
{
	pthread_mutex_lock(&the_stacks.control);
	stop_locked();
	pthread_mutex_unlock(&the_stacks.control);
}

PO_EXPORT int profopt_stacks_python(void)
{
	int ret = po_pyframes_init();

	if (ret != 0)
		return ret;
	/* the thread's LTTng-UST state before the first event a handler may emit */
	lttng_ust_init_thread();
	__atomic_store_n(&the_stacks.python, true, __ATOMIC_RELAXED);
	refresh_objects();
	return 0;
}

PO_EXPORT const char *profopt_stacks_python_error(void)
{
	return po_pyframes_reason();
}

PO_EXPORT uint64_t profopt_stacks_taken(int64_t *weight_ns)
{
	if (weight_ns)
		*weight_ns = __atomic_load_n(&taken_ns, __ATOMIC_RELAXED);
	return __atomic_load_n(&taken_count, __ATOMIC_RELAXED);
}

PO_EXPORT int profopt_stacks_counters(void)
{
	int counters;

	pthread_mutex_lock(&the_stacks.control);
	if (!__atomic_load_n(&the_stacks.hz, __ATOMIC_RELAXED) || the_stacks.wall)
		counters = -1;
	else
		counters = the_stacks.counters ? 1 : 0;
	pthread_mutex_unlock(&the_stacks.control);
	return counters;
}

PO_EXPORT uint32_t profopt_stacks_hz(void)
{
	uint32_t hz;

	pthread_mutex_lock(&the_stacks.control);
	hz = __atomic_load_n(&the_stacks.hz, __ATOMIC_RELAXED); /* 0 once the watcher stopped */
	pthread_mutex_unlock(&the_stacks.control);
	return hz;
}

int po_stacks_test_counters(void)
{
	return profopt_stacks_counters();
}

/* ---- fork, load and unload ---- */

static void before_fork(void)
{
	pthread_mutex_lock(&the_stacks.control);
}

static void after_fork_parent(void)
{
	pthread_mutex_unlock(&the_stacks.control);
}

/*
 * The child has the parent's SIGURG action but no timer: a new one is made with the same
 * rate and clock (on wall time, aimed at the forking thread, the child's only one; a Python
 * child's watcher then gives its later Python threads theirs). Only
 * system calls here, no event: LTTng-UST registers the child after this handler (its fork
 * wrapper blocks signals until it tore down the parent's state), and samples taken before
 * that are not recorded.
 */
static void after_fork_child(void)
{
	uint32_t hz = __atomic_load_n(&the_stacks.hz, __ATOMIC_RELAXED);
	pid_t self = (pid_t)syscall(SYS_gettid);
	timer_t timer = 0;
	void *counter_page = NULL;

	memset(&the_stacks.control, 0, sizeof(the_stacks.control));
	pthread_mutex_init(&the_stacks.control, NULL);
	memset(&the_stacks.watch_lock, 0, sizeof(the_stacks.watch_lock));
	pthread_mutex_init(&the_stacks.watch_lock, NULL);
	memset(&the_stacks.watch_wake, 0, sizeof(the_stacks.watch_wake));
	pthread_cond_init(&the_stacks.watch_wake, NULL);
	/* the parent's timers, counters (their pages are not inherited) and watcher, not this
	 * process's; this thread's CPU clock begins again */
	__atomic_add_fetch(&cpu_generation, 1, __ATOMIC_RELAXED);
	span_thread_count = 0; /* the parent's threads, none of this process's */
	taken_count = 0;
	taken_ns = 0;
	/* a Python process's code objects and shared objects are described again here */
	po_pyframes_forget();
	memset(&objects_lock, 0, sizeof(objects_lock));
	pthread_mutex_init(&objects_lock, NULL);
	object_count = 0;
	the_stacks.objects_adds = 0;
	the_stacks.armed = the_stacks.watching = false;
	the_stacks.thread_count = 0;
	the_stacks.hz = 0;
	if (!hz)
		return;
	lttng_ust_init_thread();
	if (!the_stacks.wall && the_stacks.counters)
		counter_page = make_counter(self);
	if (!counter_page &&
	    !make_timer(the_stacks.wall ? CLOCK_MONOTONIC : CLOCK_THREAD_CPUTIME_ID, self,
			&timer)) {
		release_sigurg();
		return;
	}
	the_stacks.hz = hz;
	if (one_wall_timer()) {
		the_stacks.timer = timer;
		the_stacks.armed = true;
	} else {
		add_thread_timer(counter_page, timer);
	}
	the_stacks.resume_watch = true; /* the watcher, at the child's announcement */
}

/*
 * After the announcement of a forked child (profopt.c): the watcher that gives the child's
 * later threads their timers, started outside the fork handler.
 */
void po_stacks_resume(void)
{
	if (!__atomic_load_n(&the_stacks.resume_watch, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&the_stacks.control);
	if (the_stacks.resume_watch && __atomic_load_n(&the_stacks.hz, __ATOMIC_RELAXED) &&
	    !the_stacks.watching) {
		the_stacks.resume_watch = false;
		watch_start();
	}
	pthread_mutex_unlock(&the_stacks.control);
}

/* Whether this process is a Python interpreter, whose module samples its stacks itself. */
static bool in_python(void)
{
	return dlsym(RTLD_DEFAULT, "Py_IsInitialized") != NULL ||
	       strncmp(program_invocation_short_name, "python", 6) == 0;
}

/* The rate PROFOPT_STACKS_HZ asks for: 0 when unset, empty or 0; -1 when malformed. */
static long hz_from_environment(const char *text)
{
	char *end;
	unsigned long hz;

	if (!text || !*text)
		return 0;
	if (*text < '0' || *text > '9')
		return -1;
	errno = 0;
	hz = strtoul(text, &end, 10);
	if (*end != '\0' || errno != 0 || hz > PROFOPT_STACKS_HZ_MAX)
		return -1;
	return (long)hz;
}

/* The clock PROFOPT_STACKS_CLOCK names: 0 cpu (also when unset or empty), 1 wall, -1 other. */
static int wall_from_environment(const char *text)
{
	if (!text || !*text || strcasecmp(text, "cpu") == 0)
		return 0;
	return strcasecmp(text, "wall") == 0 ? 1 : -1;
}

static const char *start_failure(int ret)
{
	switch (ret) {
	case -EBUSY:
		return "the program uses SIGPROF, ITIMER_PROF or SIGURG itself, left as they are";
	case -ENOTSUP:
		return "native stacks are sampled on x86-64 and aarch64 only";
	default:
		return strerror(-ret);
	}
}

/* profopt-record --stacks[=HZ] [--stacks-clock cpu|wall] sets both for every process. */
static void start_from_environment(void)
{
	const char *hz_text = getenv("PROFOPT_STACKS_HZ");
	const char *clock_text = getenv("PROFOPT_STACKS_CLOCK");
	long hz = hz_from_environment(hz_text);
	int wall = wall_from_environment(clock_text), ret;

	if (hz == 0 || in_python())
		return;
	if (hz < 0) {
		fprintf(stderr,
			"profopt: function samples off: PROFOPT_STACKS_HZ='%s' is not 1 to %d\n",
			hz_text, PROFOPT_STACKS_HZ_MAX);
		return;
	}
	if (wall < 0) {
		fprintf(
		    stderr,
		    "profopt: function samples off: PROFOPT_STACKS_CLOCK='%s' is not cpu or wall\n",
		    clock_text);
		return;
	}
	ret = profopt_stacks_start((uint32_t)hz, wall);
	if (ret != 0)
		fprintf(stderr, "profopt: function samples off: %s\n", start_failure(ret));
	else if (wall)
		/* what asking for wall time costs a C program (docs/sampling.md, Limits) */
		fprintf(stderr, "profopt: wall-time samples interrupt the sampled thread's waits "
				"(sleep, poll, select, nanosleep, timed waits return early with "
				"EINTR); CPU time (the default) does not\n");
}

__attribute__((constructor)) static void stacks_init(void)
{
	pthread_atfork(before_fork, after_fork_parent, after_fork_child);
	start_from_environment();
}

/* The handler must not outlive the library's code (a dlclose), nor run in its destructors. */
__attribute__((destructor)) static void stacks_fini(void)
{
	profopt_stacks_stop();
}
