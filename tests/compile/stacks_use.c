/*
 * stacks_use.c: libprofopt's native stack sampler (profopt_stacks_start) run for real,
 * without a tracing session: it refuses a bad rate and a SIGPROF that the program uses
 * (leaving the program's handler in place) or SIGURG (its own signal), samples a CPU-bound
 * loop and a sleeping thread on wall time, gives SIGURG back as it found it, leaves the
 * program's own SIGALRM timer alone, samples again in a forked child, never kills a
 * program exec'd from a sampled
 * process (a pending tick included), and starts from PROFOPT_STACKS_HZ except in a Python
 * interpreter. Built twice: test_stacks links libprofopt.so; test_stacks_internal links the
 * same sources statically and also counts and checks the samples the handler takes
 * (stacks_internal.h): their stacks cross the signal frame into the interrupted function's
 * callers, and their weights add up to the time sampled. Exits 0 when all hold; prints
 * what did not.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "profopt.h"
#ifdef PO_STACKS_HOOKS
#include "stacks_internal.h"
#endif

static int failures;

#define EXPECT(condition)                                                                          \
	do {                                                                                       \
		if (!(condition)) {                                                                \
			fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #condition);       \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

#define HZ 1000
#define PERIOD_NS (1000000000 / HZ)

/* ---- what the handler saw (test_stacks_internal only) ---- */

static struct {
	volatile long samples;
	volatile long deep;	   /* depth > 1: the walk crossed the signal frame */
	volatile long with_caller; /* spin()'s return address among the callers */
	volatile long in_spin;	   /* and first of them: pcs[0] was in spin() itself */
	volatile long bad_weight;  /* not positive, or on wall time no multiple of the period */
	volatile long other_tid;   /* on another thread than the one expected */
	volatile int64_t weight_ns;
	volatile int64_t other_weight_ns; /* of samples on another thread than expected */
} seen;
static volatile bool wall_weights;    /* the weights are timer periods (wall time) */
static volatile uint64_t spin_return; /* where spin() returns to, in its caller */
static volatile pid_t expected_tid;

static void reset_seen(void)
{
	memset((void *)&seen, 0, sizeof(seen));
	expected_tid = (pid_t)syscall(SYS_gettid);
}

#ifdef PO_STACKS_HOOKS
static void on_sample(int32_t tid, int64_t weight_ns, const uint64_t *pcs, uint32_t depth)
{
	seen.samples++;
	seen.weight_ns += weight_ns;
	seen.deep += depth > 1;
	seen.bad_weight += weight_ns <= 0 || (wall_weights && weight_ns % PERIOD_NS != 0);
	seen.other_tid += tid != expected_tid;
	if (tid != expected_tid)
		seen.other_weight_ns += weight_ns;
	seen.in_spin += depth > 1 && pcs[1] == spin_return;
	for (uint32_t i = 1; i < depth; i++)
		if (pcs[i] == spin_return) {
			seen.with_caller++;
			break;
		}
}
#define HOOKS 1
#else
#define HOOKS 0
#endif

/* ---- helpers ---- */

static int64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Burns cpu_ns of this thread's CPU time; returns a value so the loop is kept. */
__attribute__((noinline)) static uint64_t spin(int64_t cpu_ns)
{
	int64_t end = clock_ns(CLOCK_THREAD_CPUTIME_ID) + cpu_ns;
	uint64_t value = 1;

	spin_return = (uint64_t)(uintptr_t)__builtin_return_address(0);
	do {
		for (int i = 0; i < 4096; i++)
			value = value * 6364136223846793005u + 1442695040888963407u;
	} while (clock_ns(CLOCK_THREAD_CPUTIME_ID) < end);
	return value;
}

static volatile uint64_t sink;

static void spin_ms(long ms)
{
	sink += spin((int64_t)ms * 1000000);
}

static void sleep_ms(long ms)
{
	struct timespec rest = {ms / 1000, ms % 1000 * 1000000L};

	while (nanosleep(&rest, &rest) != 0 && errno == EINTR)
		;
}

/* A thread's spin: ms asked, then the CPU and wall time it took. */
struct spin_times {
	int64_t ms, cpu_ns, wall_ns;
};

static void spin_timed(struct spin_times *times)
{
	int64_t cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID), wall = clock_ns(CLOCK_MONOTONIC);

	spin_ms((long)times->ms);
	times->cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu;
	times->wall_ns = clock_ns(CLOCK_MONOTONIC) - wall;
}

/*
 * Whether a thread's sampled weight is its CPU time: above it by at most a few periods, and
 * below it by little when the thread had its core to itself (its spin took at most a
 * quarter more wall time than CPU time). A thread that shares its core runs slices that the
 * kernel's tick can miss, and a CPU-time timer is checked only at a tick of its own thread:
 * what it ran after the last such tick is lost when it ends (a third of a 150 ms spin and
 * more were seen beside two busy loops). The lower bound is then not checked. The upper one
 * allows 6% more than the CPU time: a perf task clock counts from the thread's switch in to
 * its switch out, a little more than the thread's CPU clock when it is switched often
 * (beside unit.python.stacks: 312 ms of samples against 300 ms of CPU in 701 ms, and
 * 106 ms against 100 ms in 122 ms).
 */
static bool weight_fits(int64_t weight_ns, const struct spin_times *times, const char *name)
{
	bool alone = times->wall_ns <= times->cpu_ns * 5 / 4;

	if (!alone)
		printf("note the %s thread shared its core (%lld ms of CPU in %lld ms): its weight "
		       "(%lld ms) is checked against its CPU time from above only\n",
		       name, (long long)(times->cpu_ns / 1000000),
		       (long long)(times->wall_ns / 1000000), (long long)(weight_ns / 1000000));
	if (weight_ns <= times->cpu_ns + PERIOD_NS * 5 + times->cpu_ns * 6 / 100 &&
	    (!alone || weight_ns >= times->cpu_ns * 9 / 10))
		return true;
	printf("note the %s thread's samples weigh %lld us against %lld us of CPU in %lld us "
	       "(%s)\n",
	       name, (long long)(weight_ns / 1000), (long long)(times->cpu_ns / 1000),
	       (long long)(times->wall_ns / 1000), alone ? "alone on its core" : "shared");
	return false;
}

static void set_action(int signo, void (*handler)(int), int flags)
{
	struct sigaction action;

	memset(&action, 0, sizeof(action));
	action.sa_handler = handler;
	action.sa_flags = flags;
	sigemptyset(&action.sa_mask);
	sigaction(signo, &action, NULL);
}

static struct sigaction current_action(int signo)
{
	struct sigaction action;

	sigaction(signo, NULL, &action);
	return action;
}

static int is_default(int signo)
{
	struct sigaction action = current_action(signo);

	return !(action.sa_flags & SA_SIGINFO) && action.sa_handler == SIG_DFL;
}

/* The exit status of child pid, or 128 + the signal that ended it. */
static int wait_status(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* ---- the checks ---- */

static void check_rates(void)
{
	EXPECT(profopt_stacks_start(0, 0) == -EINVAL);
	EXPECT(profopt_stacks_start(PROFOPT_STACKS_HZ_MAX + 1, 0) == -EINVAL);
	EXPECT(profopt_stacks_start(PROFOPT_STACKS_HZ_MAX + 1, 1) == -EINVAL);
	EXPECT(is_default(SIGPROF));
}

static void own_handler(int signo)
{
	(void)signo;
}

/* The program's own SIGPROF handler or ITIMER_PROF: refused, and left as they are. */
static void check_busy(void)
{
	struct itimerval prof = {.it_value = {3600, 0}};
	struct sigaction after;

	set_action(SIGPROF, own_handler, SA_RESTART);
	EXPECT(profopt_stacks_start(HZ, 0) == -EBUSY);
	EXPECT(profopt_stacks_start(HZ, 1) == -EBUSY);
	after = current_action(SIGPROF);
	EXPECT(!(after.sa_flags & SA_SIGINFO) && after.sa_handler == own_handler);
	set_action(SIGPROF, SIG_IGN, 0);
	setitimer(ITIMER_PROF, &prof, NULL);
	EXPECT(profopt_stacks_start(HZ, 0) == -EBUSY);
	EXPECT(current_action(SIGPROF).sa_handler == SIG_IGN);
	memset(&prof, 0, sizeof(prof));
	setitimer(ITIMER_PROF, &prof, NULL);
	set_action(SIGPROF, SIG_DFL, 0);
}

/* 200 ms of CPU sampled at 1000 Hz, then nothing after the stop. */
static void check_cpu(void)
{
	struct spin_times times = {.ms = 200};
	long after_stop;
	int counters = 0;
	uint64_t taken_before, taken_after;
	int64_t taken_ns_before = 0, taken_ns_after = 0;

	EXPECT(profopt_stacks_counters() == -1); /* not running */
	EXPECT(profopt_stacks_start(HZ, 0) == 0);
	EXPECT(!is_default(SIGURG) && is_default(SIGPROF)); /* every sampler signal is SIGURG */
	EXPECT(profopt_stacks_counters() == 0 || profopt_stacks_counters() == 1);
#ifdef PO_STACKS_HOOKS
	/* perf task-clock counters where the kernel allows them, else POSIX timers */
	counters = po_stacks_test_counters() == 1;
	printf("note CPU time by %s\n", counters
					    ? "perf task-clock counters (SIGURG)"
					    : "POSIX timers on the threads' CPU clocks (SIGURG)");
#endif
	reset_seen();
	taken_before = profopt_stacks_taken(&taken_ns_before);
	spin_timed(&times);
	profopt_stacks_stop();
	taken_after = profopt_stacks_taken(&taken_ns_after);
	EXPECT(is_default(SIGPROF) && is_default(SIGURG));
	if (HOOKS) {
		/* what the process counted is what the hook saw (a sample may fall between the
		 * reset and the first count) */
		EXPECT(taken_after - taken_before + 1 >= (uint64_t)seen.samples &&
		       taken_after - taken_before <= (uint64_t)seen.samples);
		/* 1000 Hz: as many as the kernel's ticks, fewer when a busy machine merges them */
		EXPECT(seen.samples >= 2);
		/* a counter fires at the rate asked: 1000 per CPU second, not the tick's 250 */
		if (counters)
			EXPECT(seen.samples >= (long)(times.cpu_ns / PERIOD_NS) * 6 / 10);
		EXPECT(seen.deep >= seen.samples * 9 / 10);
		EXPECT(seen.with_caller >= seen.samples * 9 / 10);
		EXPECT(seen.in_spin >= seen.samples / 2); /* its loop, mostly */
		EXPECT(seen.bad_weight == 0 && seen.other_tid == 0);
		/* the weights add up to the CPU time sampled */
		EXPECT(weight_fits(seen.weight_ns, &times, "main"));
	}
	after_stop = seen.samples;
	spin_ms(50);
	EXPECT(seen.samples == after_stop);
	profopt_stacks_stop(); /* twice: harmless */
	EXPECT(is_default(SIGURG));
}

/* Starting again replaces the timer: the new rate's weights, the handler installed once. */
static void check_restart(void)
{
	struct spin_times times = {.ms = 100};

	EXPECT(profopt_stacks_start(HZ / 2, 0) == 0);
	EXPECT(profopt_stacks_start(HZ, 0) == 0);
	reset_seen();
	spin_timed(&times);
	/* on a busy machine expirations merge into few signals: their weights still add up */
	if (HOOKS)
		EXPECT(seen.samples >= 1 && seen.bad_weight == 0 &&
		       weight_fits(seen.weight_ns, &times, "main"));
	profopt_stacks_stop();
	EXPECT(is_default(SIGURG));
}

static volatile sig_atomic_t alarms;

static void on_alarm(int signo)
{
	(void)signo;
	alarms++;
}

/* The program's own SIGALRM timer fires as often while its CPU time is sampled. */
static void check_own_alarm(void)
{
	struct itimerval every_20ms = {{0, 20000}, {0, 20000}}, off;

	memset(&off, 0, sizeof(off));
	set_action(SIGALRM, on_alarm, SA_RESTART);
	alarms = 0;
	EXPECT(profopt_stacks_start(HZ, 0) == 0);
	setitimer(ITIMER_REAL, &every_20ms, NULL);
	spin_ms(200);
	setitimer(ITIMER_REAL, &off, NULL);
	profopt_stacks_stop();
	EXPECT(alarms >= 5);
	set_action(SIGALRM, SIG_DFL, 0);
}

static volatile long urgent;

static void on_urgent(int signo)
{
	(void)signo;
	urgent++;
}

/*
 * The program's own SIGURG handler is left alone: the sampler, whose counters and timers
 * all signal SIGURG, does not start (-EBUSY), and the handler is the program's after.
 */
static void check_own_urg(void)
{
	struct sigaction current;

	set_action(SIGURG, on_urgent, SA_RESTART);
	EXPECT(profopt_stacks_start(HZ, 0) == -EBUSY);
	EXPECT(profopt_stacks_start(HZ, 1) == -EBUSY);
	spin_ms(50);
	EXPECT(urgent == 0);
	EXPECT(sigaction(SIGURG, NULL, &current) == 0 && current.sa_handler == on_urgent);
	set_action(SIGURG, SIG_DFL, 0);
}

/* A forked child samples again (its own timer) and is not killed by it. */
static void check_fork(void)
{
	pid_t pid;

	EXPECT(profopt_stacks_start(HZ, 0) == 0);
	pid = fork();
	if (pid == 0) {
		reset_seen();
		spin_ms(200);
		if (HOOKS && (seen.weight_ns < 100000000 || seen.other_tid != 0)) {
			fprintf(
			    stderr,
			    "FAIL forked child: %ld samples of %lld ns, %ld on another thread\n",
			    seen.samples, (long long)seen.weight_ns, seen.other_tid);
			_exit(2);
		}
		_exit(0);
	}
	EXPECT(pid > 0 && wait_status(pid) == 0);
	profopt_stacks_stop();
}

/* In the child exec'd by check_exec: a tick left pending by the sampler would kill it. */
static int exec_spin(void)
{
	sigset_t pending, profiling;

	sigpending(&pending);
	if (sigismember(&pending, SIGPROF)) {
		fprintf(stderr, "FAIL a SIGPROF is pending after exec\n");
		return 4;
	}
	sigemptyset(&profiling);
	sigaddset(&profiling, SIGPROF);
	sigaddset(&profiling, SIGURG); /* a counter's, pending: ignored by default */
	sigprocmask(SIG_UNBLOCK, &profiling, NULL);
	spin_ms(100); /* an interval timer still running would kill it now */
	return 0;
}

/*
 * A sampled child execs /bin/true; another blocks SIGPROF and SIGURG while it burns CPU
 * (the samplers' signals are then pending, not delivered) and execs this program, which
 * unblocks them and spins.
 */
static void check_exec(const char *self)
{
	sigset_t profiling;
	pid_t pid;

	EXPECT(profopt_stacks_start(HZ, 0) == 0);
	pid = fork();
	if (pid == 0) {
		spin_ms(20);
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	EXPECT(pid > 0 && wait_status(pid) == 0);
	pid = fork();
	if (pid == 0) {
		sigemptyset(&profiling);
		sigaddset(&profiling, SIGPROF);
		sigaddset(&profiling, SIGURG);
		sigprocmask(SIG_BLOCK, &profiling, NULL);
		spin_ms(50);
		execl(self, self, "--exec-spin", (char *)NULL);
		_exit(127);
	}
	EXPECT(pid > 0 && wait_status(pid) == 0);
	profopt_stacks_stop();
}

static void *spin_thread(void *times)
{
	sleep_ms(150); /* the watcher finds the thread (every 50 ms) before it works */
	spin_timed(times);
	return NULL;
}

/*
 * Two threads, one busy twice as long as the other: on CPU time each thread has its own
 * timer, so each thread's weights add up to its own CPU time (one timer on the process's
 * CPU clock gave the other thread none to half of its time: the kernel gives that timer's
 * signal to the main thread).
 */
static void check_threads(void)
{
	struct spin_times main_times = {.ms = 300}, other_times = {.ms = 150};
	pthread_t other;

	EXPECT(profopt_stacks_start(HZ, 0) == 0);
	reset_seen();
	EXPECT(pthread_create(&other, NULL, spin_thread, &other_times) == 0);
	sleep_ms(150);
	spin_timed(&main_times);
	pthread_join(other, NULL);
	profopt_stacks_stop();
	if (HOOKS) {
		EXPECT(seen.bad_weight == 0);
		EXPECT(weight_fits(seen.weight_ns - seen.other_weight_ns, &main_times, "main"));
		EXPECT(weight_fits(seen.other_weight_ns, &other_times, "other"));
	}
}

/* On wall time, the calling thread is sampled while it sleeps. */
static void check_wall(void)
{
	int64_t wall_ns = clock_ns(CLOCK_MONOTONIC);

	wall_weights = true;
	EXPECT(profopt_stacks_start(HZ, 1) == 0);
	EXPECT(!is_default(SIGURG));
	reset_seen();
	sleep_ms(100);
	profopt_stacks_stop();
	wall_ns = clock_ns(CLOCK_MONOTONIC) - wall_ns;
	EXPECT(is_default(SIGURG));
	if (HOOKS) {
		EXPECT(seen.samples >= 2 && seen.other_tid == 0 && seen.bad_weight == 0);
		/* the weights add up to the time slept: expirations merged count as many */
		EXPECT(seen.weight_ns >= wall_ns / 2 && seen.weight_ns <= wall_ns + 2000000);
	}
	wall_weights = false;
}

/* In the child of run_probe: 0 when a sampler started at load (SIGURG has a handler). */
static int autostart_probe(void)
{
	return is_default(SIGURG) ? 3 : 0;
}

/*
 * Runs this program as argv0 with PROFOPT_STACKS_HZ=hz and PROFOPT_STACKS_CLOCK=clock (NULL:
 * unset); returns its status, and its stderr in errors.
 */
static int run_probe(const char *self, const char *argv0, const char *hz, const char *clock,
		     char *errors, size_t size)
{
	int pipe_fds[2];
	ssize_t length;
	pid_t pid;

	if (pipe(pipe_fds) != 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(pipe_fds[1], STDERR_FILENO);
		setenv("PROFOPT_STACKS_HZ", hz, 1);
		if (clock)
			setenv("PROFOPT_STACKS_CLOCK", clock, 1);
		execl(self, argv0, "--autostart-probe", (char *)NULL);
		_exit(127);
	}
	close(pipe_fds[1]);
	length = read(pipe_fds[0], errors, size - 1);
	errors[length > 0 ? length : 0] = '\0';
	close(pipe_fds[0]);
	return wait_status(pid);
}

/* PROFOPT_STACKS_HZ starts the sampler at load, except in Python; a bad value says so. */
static void check_autostart(const char *self)
{
	char errors[512];

	EXPECT(run_probe(self, "stacks", "500", NULL, errors, sizeof(errors)) == 0);
	EXPECT(run_probe(self, "stacks", "500", "wall", errors, sizeof(errors)) == 0);
	/* wall time interrupts the program's waits, and says so (docs/sampling.md, Limits) */
	EXPECT(strstr(errors, "profopt: wall-time samples interrupt the sampled thread's waits") !=
	       NULL);
	EXPECT(run_probe(self, "stacks", "500", NULL, errors, sizeof(errors)) == 0 && !*errors);
	EXPECT(run_probe(self, "stacks", "0", NULL, errors, sizeof(errors)) == 3);
	EXPECT(run_probe(self, "python3", "500", NULL, errors, sizeof(errors)) == 3);
	EXPECT(run_probe(self, "stacks", "x", NULL, errors, sizeof(errors)) == 3);
	EXPECT(strstr(errors, "profopt: function samples off: PROFOPT_STACKS_HZ='x' is not 1 to "
			      "10000") != NULL);
	EXPECT(run_probe(self, "stacks", "10001", NULL, errors, sizeof(errors)) == 3);
	EXPECT(strstr(errors, "PROFOPT_STACKS_HZ='10001' is not 1 to 10000") != NULL);
	EXPECT(run_probe(self, "stacks", "100", "gpu", errors, sizeof(errors)) == 3);
	EXPECT(strstr(errors, "PROFOPT_STACKS_CLOCK='gpu'") != NULL);
}

int main(int argc, char **argv)
{
	char self[4096];
	ssize_t length;

	if (argc > 1 && strcmp(argv[1], "--autostart-probe") == 0)
		return autostart_probe();
	if (argc > 1 && strcmp(argv[1], "--exec-spin") == 0)
		return exec_spin();
	length = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (length <= 0)
		return 1;
	self[length] = '\0';
	unsetenv("PROFOPT_STACKS_HZ");
	profopt_stacks_stop(); /* in case the environment of the test had started it */
#ifdef PO_STACKS_HOOKS
	po_stacks_test_hook = on_sample;
#endif
	/* no interpreter here: libprofopt's reader of Python stacks says so */
	EXPECT(profopt_stacks_python() == -ENOENT || profopt_stacks_python() == -ENOTSUP);
	EXPECT(profopt_stacks_python_error() && *profopt_stacks_python_error());
	check_rates();
	check_busy();
	check_cpu();
	check_restart();
	check_own_alarm();
	check_own_urg();
	check_fork();
	check_exec(self);
	check_threads();
	check_wall();
	check_autostart(self);
	if (!failures)
		printf("ok   the native stack sampler%s: rates, a busy SIGPROF left alone, CPU and "
		       "wall time, threads' weights, the program's SIGALRM and SIGURG, fork, exec, "
		       "PROFOPT_STACKS_HZ\n",
		       HOOKS ? " (its samples checked)" : "");
	return failures ? 1 : 0;
}
