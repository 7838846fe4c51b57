/*
 * sampler.c: a thread that records host RSS, process CPU time and the process's run-queue
 * wait every period_ms, the whole machine's busy CPU time at most every
 * PO_MACHINE_PERIOD_MS, so that the analysis can tell what other programs took, and the
 * process's proportional and unique set sizes (with the machine's physical memory) at its
 * start and then as their cost allows, so that it can tell pages a worker un-shared from
 * its parent's from memory it allocated.
 *
 * Off by default. PROFOPT_SAMPLE_MS=N in the environment starts it when the library is
 * loaded. When it ran in the parent, a forked child restarts it at its first profopt
 * event, just after the child announced itself (profopt.c): a sample taken earlier, while
 * lttng-ust's fork wrapper is still registering the child, could be the child's first
 * event and is not recorded reliably, so the announcement must come first.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

#include "cost.h"
#include "profopt.h"
#include "sampler.h"

/*
 * The machine's busy CPU time is the same for every process of the run: one series per
 * host is enough. A forked child (a DataLoader worker) leaves it to the parent it was
 * forked from; a process that started its own sampler (not a fork) records it. Reading
 * /proc/stat costs about 8 us of CPU on 2 cores and grows with the CPUs (a line each), so
 * it is read at most this often.
 */
#define PO_MACHINE_PERIOD_MS 100

/*
 * The proportional and unique set sizes come from /proc/self/smaps_rollup, which the kernel
 * sums by walking the page tables of every mapping and weighing each resident page by the
 * processes that map it: about 5 us of CPU per MiB resident (0.02 ms for a small C
 * program, 1.3 to 2.1 ms for a PyTorch process of 0.2 to 0.4 GiB), against 3 us for statm
 * (README, "Costs of the tracepoints"). So the sets are read when the sampler thread starts
 * (a forked worker's starter waits for that first reading, which is the baseline of what
 * the worker un-shares later), then at most every PO_SETS_PERIOD_MS, and never sooner than
 * PO_SETS_COST_RATIO times the CPU time the last reading took: whatever the process's size,
 * reading them costs at most 0.5% of a core (a reading of 10 ms, a process of 2 GiB, waits
 * 2 s for the next).
 */
#define PO_SETS_PERIOD_MS 1000
#define PO_SETS_COST_RATIO 200

struct sampler {
	pthread_mutex_t control; /* serializes start and stop, so two stops never join twice */
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t thread;
	unsigned period_ms; /* 0: not running */
	unsigned resume_ms; /* a forked child: the period to start at its announcement */
	int stop_requested;
	int running;	  /* the thread has started: its start-up allocations are done */
	int forked_child; /* a child forked from a sampling parent: no machine series */
	unsigned tick;	  /* samples since the thread started */
};

static struct sampler the_sampler = {
    .control = PTHREAD_MUTEX_INITIALIZER,
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .wake = PTHREAD_COND_INITIALIZER,
};

/* Resident bytes from /proc/self/statm, read with plain system calls (no allocation). */
static int64_t rss_bytes(void)
{
	char text[128];
	ssize_t len;
	char *cursor, *end;
	long resident_pages;
	int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	len = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (len <= 0)
		return -1;
	text[len] = '\0';
	strtol(text, &cursor, 10); /* total program size, then the resident set */
	resident_pages = strtol(cursor, &end, 10);
	if (end == cursor || resident_pages < 0)
		return -1;
	return (int64_t)resident_pages * sysconf(_SC_PAGESIZE);
}

/* What one reading of the memory sets gave; -1 for what was not read. */
struct memory_sets {
	int64_t pss_bytes;
	int64_t uss_bytes;
	int64_t machine_bytes; /* physical memory of the machine */
};

#define PO_NO_SETS ((struct memory_sets){-1, -1, -1})

static int64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	if (clock_gettime(clock, &ts) != 0)
		return -1;
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The kB value of the smaps_rollup line that begins with field (its colon included). */
static int64_t rollup_kib(const char *text, const char *field)
{
	size_t length = strlen(field);
	const char *line = text;

	while (*line) {
		if (strncmp(line, field, length) == 0) {
			char *end;
			long long kib = strtoll(line + length, &end, 10);

			return end == line + length || kib < 0 ? -1 : (int64_t)kib;
		}
		line = strchr(line, '\n');
		if (!line)
			break;
		line++;
	}
	return -1;
}

/*
 * The proportional set (Pss) and the unique set (Private_Clean + Private_Dirty) from
 * /proc/self/smaps_rollup, read with plain system calls (no allocation); -1 each when the
 * kernel has no such file (before Linux 4.14) or it reads short.
 */
static void read_sets(struct memory_sets *sets)
{
	char text[2048];
	size_t used = 0;
	ssize_t len;
	int64_t clean, dirty;
	int fd = open("/proc/self/smaps_rollup", O_RDONLY | O_CLOEXEC);

	sets->pss_bytes = sets->uss_bytes = -1;
	if (fd < 0)
		return;
	while (used < sizeof(text) - 1 &&
	       (len = read(fd, text + used, sizeof(text) - 1 - used)) > 0)
		used += (size_t)len;
	close(fd);
	text[used] = '\0';
	clean = rollup_kib(text, "Private_Clean:");
	dirty = rollup_kib(text, "Private_Dirty:");
	sets->pss_bytes = rollup_kib(text, "Pss:");
	if (sets->pss_bytes >= 0)
		sets->pss_bytes *= 1024;
	if (clean >= 0 && dirty >= 0)
		sets->uss_bytes = (clean + dirty) * 1024;
}

/* Physical memory of the machine (sysinfo: no allocation, no file); -1 on error. */
static int64_t machine_memory_bytes(void)
{
	struct sysinfo info;

	if (sysinfo(&info) != 0 || info.mem_unit == 0)
		return -1;
	return (int64_t)info.totalram * (int64_t)info.mem_unit;
}

/*
 * Reads the sets when they are due (*due_ns on the monotonic clock; 0: now), and sets when
 * they are due next (PO_SETS_PERIOD_MS, PO_SETS_COST_RATIO). Called only by the sampler
 * thread, which owns *due_ns.
 */
static struct memory_sets sets_if_due(int64_t *due_ns)
{
	struct memory_sets sets = PO_NO_SETS;
	int64_t now = clock_ns(CLOCK_MONOTONIC), cpu_before, cost_ns, wait_ns;

	if (now < *due_ns)
		return sets;
	cpu_before = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	read_sets(&sets);
	cost_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu_before;
	wait_ns = (int64_t)PO_SETS_PERIOD_MS * 1000000;
	if (cost_ns * PO_SETS_COST_RATIO > wait_ns)
		wait_ns = cost_ns * PO_SETS_COST_RATIO;
	*due_ns = now + wait_ns;
	sets.machine_bytes = machine_memory_bytes();
	return sets;
}

/* The machine's memory, like its CPU, is left to the parent in a forked child. */
static void sets_emit(const struct memory_sets *sets, int forked_child)
{
	if (sets->pss_bytes >= 0)
		profopt_counter(PROFOPT_COUNTER_HOST_PSS, PROFOPT_DEVICE_HOST, sets->pss_bytes);
	if (sets->uss_bytes >= 0)
		profopt_counter(PROFOPT_COUNTER_HOST_USS, PROFOPT_DEVICE_HOST, sets->uss_bytes);
	if (sets->machine_bytes >= 0 && !forked_child)
		profopt_counter(PROFOPT_COUNTER_MACHINE_MEMORY, PROFOPT_DEVICE_HOST,
				sets->machine_bytes);
}

static int64_t process_cpu_ns(void)
{
	return clock_ns(CLOCK_PROCESS_CPUTIME_ID);
}

/*
 * The run-queue wait of the process's main thread (the second number of
 * /proc/self/schedstat): time it was runnable but not running, whoever held the CPU. The
 * main thread is the one that loads in a DataLoader worker and trains in the main process;
 * it lives as long as the process, so the figure only grows. Read with plain system calls
 * (no allocation); -1 where the kernel keeps no schedstat.
 */
static int64_t process_runq_ns(void)
{
	char text[96];
	ssize_t len;
	char *cursor, *end;
	long long wait;
	int fd = open("/proc/self/schedstat", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	len = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (len <= 0)
		return -1;
	text[len] = '\0';
	strtoll(text, &cursor, 10); /* CPU time, then the run-queue wait */
	wait = strtoll(cursor, &end, 10);
	return end == cursor || wait < 0 ? -1 : (int64_t)wait;
}

/*
 * The time all CPUs of the machine were busy since boot, every program counted: user, nice,
 * system, irq, softirq and steal (time the hypervisor gave to other machines) of the first
 * line of /proc/stat, in nanoseconds. Read with plain system calls (no allocation); -1 when
 * unreadable.
 */
static int64_t machine_cpu_ns(void)
{
	char text[256];
	ssize_t len;
	char *cursor;
	long long ticks[8], busy;
	long per_second = sysconf(_SC_CLK_TCK);
	int fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	len = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (len <= 4 || strncmp(text, "cpu ", 4) != 0 || per_second <= 0)
		return -1;
	text[len] = '\0';
	cursor = text + 4;
	for (int i = 0; i < 8; i++) { /* user nice system idle iowait irq softirq steal */
		char *end;

		ticks[i] = strtoll(cursor, &end, 10);
		if (end == cursor || ticks[i] < 0)
			return -1;
		cursor = end;
	}
	busy = ticks[0] + ticks[1] + ticks[2] + ticks[5] + ticks[6] + ticks[7];
	return (int64_t)(busy / per_second) * 1000000000 +
	       (int64_t)(busy % per_second) * 1000000000 / per_second;
}

static void sample_emit(int64_t rss, int64_t runq, int64_t machine)
{
	if (rss >= 0)
		profopt_counter(PROFOPT_COUNTER_HOST_RSS, PROFOPT_DEVICE_HOST, rss);
	profopt_counter(PROFOPT_COUNTER_PROCESS_CPU, PROFOPT_DEVICE_HOST, process_cpu_ns());
	if (runq >= 0)
		profopt_counter(PROFOPT_COUNTER_PROCESS_RUNQ_WAIT, PROFOPT_DEVICE_HOST, runq);
	if (machine >= 0)
		profopt_counter(PROFOPT_COUNTER_MACHINE_CPU, PROFOPT_DEVICE_HOST, machine);
}

/* Whether this sample also reads the machine: not in a forked child, one in every 100 ms. */
static int machine_due(void)
{
	unsigned every = PO_MACHINE_PERIOD_MS / (the_sampler.period_ms ? the_sampler.period_ms : 1);

	return !the_sampler.forked_child && the_sampler.tick++ % (every ? every : 1) == 0;
}

static void sample_once(void)
{
	sample_emit(rss_bytes(), process_runq_ns(),
		    the_sampler.forked_child ? -1 : machine_cpu_ns());
}

void po_sampler_last_sets(void)
{
	struct memory_sets sets = PO_NO_SETS;
	unsigned period_ms;

	pthread_mutex_lock(&the_sampler.lock);
	period_ms = the_sampler.period_ms;
	pthread_mutex_unlock(&the_sampler.lock);
	if (!period_ms)
		return;
	read_sets(&sets);
	sets_emit(&sets, 1);
}

static void deadline_after(struct timespec *deadline, unsigned period_ms)
{
	clock_gettime(CLOCK_MONOTONIC, deadline);
	deadline->tv_nsec += (long)(period_ms % 1000) * 1000000L;
	deadline->tv_sec += period_ms / 1000 + deadline->tv_nsec / 1000000000L;
	deadline->tv_nsec %= 1000000000L;
}

static void *sampler_main(void *unused)
{
	struct timespec deadline;
	int64_t sets_due_ns = 0;
	/*
	 * The first sets are read before the thread says it runs: the thread that started it
	 * (in a forked worker, at its announcement) waits for them, so they are taken before
	 * the worker reads any data.
	 */
	struct po_cost_meter meter = po_cost_meter_start(PO_COST_SLOT_SAMPLER);
	struct memory_sets sets = sets_if_due(&sets_due_ns);

	(void)unused;
	pthread_mutex_lock(&the_sampler.lock);
	the_sampler.running = 1;
	pthread_cond_broadcast(&the_sampler.wake);
	while (!the_sampler.stop_requested) {
		/*
		 * RSS is read with plain system calls (no allocation) under the lock. The
		 * tracepoints are emitted without it: LTTng-UST's fork wrapper holds its RCU
		 * registry lock across fork(), whose prepare handler takes this lock, and a
		 * thread's first tracepoint takes that registry lock: holding both here would
		 * deadlock a fork. The sets are read without it too: a long reading must not
		 * hold up a fork.
		 */
		int64_t rss = rss_bytes();
		int64_t runq = process_runq_ns();
		int64_t machine = machine_due() ? machine_cpu_ns() : -1;
		int forked_child = the_sampler.forked_child;

		pthread_mutex_unlock(&the_sampler.lock);
		if (sets.pss_bytes < 0 && sets.uss_bytes < 0 && sets.machine_bytes < 0)
			sets = sets_if_due(&sets_due_ns);
		sample_emit(rss, runq, machine);
		sets_emit(&sets, forked_child);
		sets = PO_NO_SETS;
		po_cost_meter_note(&meter);
		pthread_mutex_lock(&the_sampler.lock);
		deadline_after(&deadline, the_sampler.period_ms);
		while (!the_sampler.stop_requested &&
		       pthread_cond_timedwait(&the_sampler.wake, &the_sampler.lock, &deadline) == 0)
			;
	}
	pthread_mutex_unlock(&the_sampler.lock);
	sample_once();
	return NULL;
}

/*
 * (Re)initializes the condition variable on the monotonic clock. Its memory is cleared
 * first, never destroyed: after fork() the parent's sampler thread may have been waiting
 * on it, and pthread_cond_destroy() would then wait forever in the child.
 */
static void init_wake(void)
{
	pthread_condattr_t attr;

	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	memset(&the_sampler.wake, 0, sizeof(the_sampler.wake));
	pthread_cond_init(&the_sampler.wake, &attr);
	pthread_condattr_destroy(&attr);
}

/* Called with the lock held. */
static int start_locked(unsigned period_ms)
{
	int ret;

	the_sampler.stop_requested = 0;
	the_sampler.period_ms = period_ms;
	the_sampler.running = 0;
	the_sampler.tick = 0;
	ret = pthread_create(&the_sampler.thread, NULL, sampler_main, NULL);
	if (ret != 0) {
		the_sampler.period_ms = 0;
		errno = ret;
		return -1;
	}
	/*
	 * Return only once the thread runs. A program that forks right after starting the
	 * sampler would otherwise fork while the new thread may still be allocating its
	 * start-up state: glibc's malloc survives that, a sanitizer's allocator (GCC 12's
	 * AddressSanitizer) stays locked forever in the child.
	 */
	while (!the_sampler.running)
		pthread_cond_wait(&the_sampler.wake, &the_sampler.lock);
	return 0;
}

int po_sampler_start(unsigned period_ms)
{
	int ret = 0;

	if (period_ms == 0) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&the_sampler.control);
	pthread_mutex_lock(&the_sampler.lock);
	if (the_sampler.period_ms)
		the_sampler.period_ms = period_ms;
	else
		ret = start_locked(period_ms);
	pthread_mutex_unlock(&the_sampler.lock);
	pthread_mutex_unlock(&the_sampler.control);
	return ret;
}

void po_sampler_stop(void)
{
	pthread_t thread;

	pthread_mutex_lock(&the_sampler.control);
	pthread_mutex_lock(&the_sampler.lock);
	if (!the_sampler.period_ms) {
		pthread_mutex_unlock(&the_sampler.lock);
		pthread_mutex_unlock(&the_sampler.control);
		return;
	}
	the_sampler.stop_requested = 1;
	thread = the_sampler.thread;
	pthread_cond_signal(&the_sampler.wake);
	pthread_mutex_unlock(&the_sampler.lock);
	pthread_join(thread, NULL);
	pthread_mutex_lock(&the_sampler.lock);
	the_sampler.period_ms = 0;
	pthread_mutex_unlock(&the_sampler.lock);
	pthread_mutex_unlock(&the_sampler.control);
}

static void before_fork(void)
{
	pthread_mutex_lock(&the_sampler.lock);
}

static void after_fork_parent(void)
{
	pthread_mutex_unlock(&the_sampler.lock);
}

/* The child has no sampler thread: a fresh one starts at its announcement. */
static void after_fork_child(void)
{
	unsigned period_ms = the_sampler.period_ms;

	po_announce_after_fork();
	memset(&the_sampler.control, 0, sizeof(the_sampler.control));
	pthread_mutex_init(&the_sampler.control, NULL);
	memset(&the_sampler.lock, 0, sizeof(the_sampler.lock));
	pthread_mutex_init(&the_sampler.lock, NULL);
	init_wake();
	the_sampler.period_ms = 0;
	the_sampler.resume_ms = period_ms;
	the_sampler.forked_child = the_sampler.forked_child || period_ms != 0;
}

void po_sampler_resume(void)
{
	unsigned period_ms = the_sampler.resume_ms;

	if (!period_ms)
		return;
	the_sampler.resume_ms = 0;
	pthread_mutex_lock(&the_sampler.control);
	pthread_mutex_lock(&the_sampler.lock);
	if (!the_sampler.period_ms)
		start_locked(period_ms);
	pthread_mutex_unlock(&the_sampler.lock);
	pthread_mutex_unlock(&the_sampler.control);
}

__attribute__((constructor)) static void sampler_init(void)
{
	const char *text = getenv("PROFOPT_SAMPLE_MS");
	char *end;
	unsigned long period_ms;

	init_wake();
	pthread_atfork(before_fork, after_fork_parent, after_fork_child);
	if (!text || !*text)
		return;
	period_ms = strtoul(text, &end, 10);
	if (*end == '\0' && period_ms > 0 && period_ms <= 3600000)
		po_sampler_start((unsigned)period_ms);
}

__attribute__((destructor)) static void sampler_fini(void)
{
	po_sampler_stop();
}
