/*
 * stacks_safety.c: what libprofopt's native stack sampler must never do to the program it
 * samples (docs/sampling.md, "What it leaves alone"), each case run in a forked child so
 * that a program the sampler kills is reported rather than ending the test:
 *
 *   sigprof-reset  the program resets SIGPROF to its default action in a loop, on wall
 *                  time and on CPU time by POSIX timers: it is not killed;
 *   waits          sleep, usleep, select, poll, nanosleep and sem_timedwait in the main
 *                  program and in a forked child, sampled at 10 kHz of CPU time (counters,
 *                  then POSIX timers): none returns early or with EINTR; on wall time each
 *                  one is interrupted, as the documentation says;
 *   takeover       the program installs its own SIGURG (then SIGPROF) handler while
 *                  sampled: the sampler stops within the watcher's period and says so, and
 *                  the handler gets at most that period's signals (none for SIGPROF);
 *   descriptors    400 threads each open 2 files under RLIMIT_NOFILE 1024 while sampled:
 *                  none fails with EMFILE (the sampler holds no descriptor per thread).
 *
 * Exits 0 when all hold; prints what did not.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "profopt.h"

static int64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static volatile uint64_t sink;

/* Burns us microseconds of this thread's CPU time (so that a CPU-time sampler fires). */
static void spin_us(int64_t us)
{
	int64_t end = clock_ns(CLOCK_THREAD_CPUTIME_ID) + us * 1000;
	uint64_t value = 1;

	do {
		for (int i = 0; i < 256; i++)
			value = value * 6364136223846793005u + 1442695040888963407u;
	} while (clock_ns(CLOCK_THREAD_CPUTIME_ID) < end);
	sink += value;
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

/* Starts the sampler at hz on clock (wall 1, CPU 0), with or without counters. */
static bool start(uint32_t hz, int wall, bool counters)
{
	int ret;

	setenv("PROFOPT_STACKS_COUNTERS", counters ? "1" : "0", 1);
	ret = profopt_stacks_start(hz, wall);
	if (ret != 0)
		fprintf(stderr, "FAIL profopt_stacks_start(%u, %d): %s\n", (unsigned)hz, wall,
			strerror(-ret));
	return ret == 0;
}

/* ---- sigprof-reset ---- */

/* A program that resets SIGPROF to SIG_DFL while sampled: exits 0 unless killed. */
static int sigprof_reset(int wall, bool counters)
{
	int64_t end;

	if (!start(1000, wall, counters))
		return 2;
	end = clock_ns(CLOCK_MONOTONIC) + 300000000;
	while (clock_ns(CLOCK_MONOTONIC) < end) {
		signal(SIGPROF, SIG_DFL);
		spin_us(500);
		usleep(500);
	}
	profopt_stacks_stop();
	return 0;
}

static void check_sigprof_reset(void)
{
	static const struct {
		int wall;
		bool counters;
		const char *name;
	} cases[] = {{1, false, "wall time"},
		     {0, false, "CPU time by POSIX timers"},
		     {0, true, "CPU time by counters"}};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		pid_t pid = fork();
		int status;

		if (pid == 0)
			_exit(sigprof_reset(cases[i].wall, cases[i].counters));
		status = wait_status(pid);
		if (status != 0)
			fprintf(stderr, "FAIL sigprof-reset on %s: status %d\n", cases[i].name,
				status);
		CHECK(status == 0);
	}
}

/* ---- waits ---- */

enum wait_call { CALL_NANOSLEEP, CALL_USLEEP, CALL_SELECT, CALL_POLL, CALL_SEM, CALL_COUNT };
static const char *const call_names[CALL_COUNT] = {"nanosleep", "usleep", "select", "poll",
						   "sem_timedwait"};

/*
 * One wait of wait_us by call: whether it returned as the call does when nothing interrupts
 * it (its whole time, no EINTR).
 */
static bool wait_once(enum wait_call call, int64_t wait_us)
{
	int64_t begin = clock_ns(CLOCK_MONOTONIC);
	struct timespec ts = {0, wait_us * 1000};
	struct timeval tv = {0, wait_us};
	struct timespec deadline;
	static sem_t never;
	static bool made;
	int ret = 0;

	if (!made)
		made = sem_init(&never, 0, 0) == 0;
	switch (call) {
	case CALL_NANOSLEEP:
		ret = nanosleep(&ts, NULL);
		break;
	case CALL_USLEEP:
		ret = usleep((useconds_t)wait_us);
		break;
	case CALL_SELECT:
		ret = select(0, NULL, NULL, NULL, &tv);
		break;
	case CALL_POLL:
		ret = poll(NULL, 0, (int)(wait_us / 1000));
		break;
	case CALL_SEM:
		clock_gettime(CLOCK_REALTIME, &deadline);
		deadline.tv_nsec += wait_us * 1000;
		deadline.tv_sec += deadline.tv_nsec / 1000000000;
		deadline.tv_nsec %= 1000000000;
		ret = sem_timedwait(&never, &deadline);
		if (ret != 0 && errno == ETIMEDOUT)
			ret = 0;
		break;
	default:
		break;
	}
	return ret == 0 && clock_ns(CLOCK_MONOTONIC) - begin >= wait_us * 1000;
}

/*
 * Each call rounds times, each after a little CPU work: how many of each returned early or
 * with EINTR (interrupted[call]); then sleep(1) once: the milliseconds it slept (glibc's
 * sleep interrupted early may say 0 s left), -1 when it said it had seconds left.
 */
static int64_t run_waits(int rounds, int64_t wait_us, int interrupted[CALL_COUNT])
{
	int64_t begin;

	for (int call = 0; call < CALL_COUNT; call++) {
		interrupted[call] = 0;
		for (int i = 0; i < rounds; i++) {
			spin_us(200);
			interrupted[call] += !wait_once((enum wait_call)call, wait_us);
		}
	}
	spin_us(200);
	begin = clock_ns(CLOCK_MONOTONIC);
	if (sleep(1) != 0)
		return -1;
	return (clock_ns(CLOCK_MONOTONIC) - begin) / 1000000;
}

/* The waits in this process and in a forked child at once: 0 when none was interrupted. */
static int waits_undisturbed(const char *clock_name)
{
	int interrupted[CALL_COUNT], bad = 0, child_status;
	int64_t slept_ms;
	pid_t child = fork();

	slept_ms = run_waits(100, 1000, interrupted);
	for (int call = 0; call < CALL_COUNT; call++)
		if (interrupted[call]) {
			fprintf(stderr, "FAIL %s in the %s, %s: %d of 100 interrupted\n",
				call_names[call], child ? "main program" : "forked child",
				clock_name, interrupted[call]);
			bad++;
		}
	if (slept_ms < 1000) {
		fprintf(stderr, "FAIL sleep(1) in the %s, %s: slept %lld ms%s\n",
			child ? "main program" : "forked child", clock_name, (long long)slept_ms,
			slept_ms < 0 ? " (seconds left)" : "");
		bad++;
	}
	if (child == 0)
		_exit(bad ? 1 : 0);
	child_status = child > 0 ? wait_status(child) : -1;
	return bad || child_status != 0;
}

/*
 * On wall time a signal comes to the sampled thread while it waits: each call returns
 * EINTR (sleep its seconds left), as docs/sampling.md says. Counted, not judged per round
 * (a wait shorter than the period can end before the signal).
 */
static void check_wall_waits(void)
{
	int interrupted[CALL_COUNT];
	int64_t slept_ms;

	if (!start(1000, 1, false))
		return;
	slept_ms = run_waits(20, 5000, interrupted);
	profopt_stacks_stop();
	for (int call = 0; call < CALL_COUNT; call++) {
		printf("note on wall time %s was interrupted %d of 20 times\n", call_names[call],
		       interrupted[call]);
		CHECK(interrupted[call] > 0);
	}
	printf("note on wall time sleep(1) returned after %lld ms\n", (long long)slept_ms);
	CHECK(slept_ms < 1000);
	fflush(stdout);
}

static void check_waits(void)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(!start(10000, 0, true) ||
		      waits_undisturbed("CPU time by counters at 10 kHz"));
	CHECK(wait_status(pid) == 0);
	pid = fork();
	if (pid == 0)
		_exit(!start(10000, 0, false) ||
		      waits_undisturbed("CPU time by POSIX timers at 10 kHz"));
	CHECK(wait_status(pid) == 0);
	pid = fork();
	if (pid == 0) {
		check_wall_waits();
		_exit(po_check_failures ? 1 : 0);
	}
	CHECK(wait_status(pid) == 0);
}

/* ---- takeover ---- */

static volatile long delivered;

static void count_signal(int signo, siginfo_t *info, void *context)
{
	(void)signo;
	(void)info;
	(void)context;
	delivered++;
}

static void own_handler(int signo)
{
	struct sigaction action;

	memset(&action, 0, sizeof(action));
	action.sa_sigaction = count_signal;
	action.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&action.sa_mask);
	sigaction(signo, &action, NULL);
}

/*
 * A program that installs its own handler for signo 100 ms into its sampling at 1 kHz and
 * works 400 ms more: 0 when the sampler stopped (within its watcher's period, 50 ms: about
 * 50 signals at 1 kHz reach the handler, more when a busy machine delays the watcher) and
 * the handler got at most max_delivered signals (0: the sampler never sends that one).
 */
static int takeover(int wall, int signo, long max_delivered)
{
	int64_t end;

	if (!start(1000, wall, true))
		return 2;
	spin_us(100000);
	own_handler(signo);
	end = clock_ns(CLOCK_MONOTONIC) + 400000000;
	while (clock_ns(CLOCK_MONOTONIC) < end)
		spin_us(1000);
	if (delivered > max_delivered) {
		fprintf(stderr, "FAIL the program's own handler of signal %d got %ld signals\n",
			signo, delivered);
		return 1;
	}
	if (signo == SIGURG && profopt_stacks_hz() != 0) {
		fprintf(stderr, "FAIL the sampler still runs after the program took SIGURG\n");
		return 1;
	}
	profopt_stacks_stop();
	return 0;
}

/* Runs takeover in a child with its stderr in errors; returns its status. */
static int run_takeover(int wall, int signo, long max_delivered, char *errors, size_t size)
{
	int pipe_fds[2];
	ssize_t length;
	size_t used = 0;
	pid_t pid;

	if (pipe(pipe_fds) != 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(pipe_fds[1], STDERR_FILENO);
		_exit(takeover(wall, signo, max_delivered));
	}
	close(pipe_fds[1]);
	while (used < size - 1 && (length = read(pipe_fds[0], errors + used, size - 1 - used)) > 0)
		used += (size_t)length;
	errors[used] = '\0';
	close(pipe_fds[0]);
	return wait_status(pid);
}

static void check_takeover(void)
{
	static const char stopped[] = "profopt: function samples stopped: the program set its "
				      "own SIGURG action while sampled";
	char errors[1024];

	for (int wall = 0; wall <= 1; wall++) {
		CHECK(run_takeover(wall, SIGURG, 150, errors, sizeof(errors)) == 0);
		CHECK(strstr(errors, stopped) != NULL);
		if (*errors)
			fprintf(stderr, "%s", errors);
		CHECK(run_takeover(wall, SIGPROF, 0, errors, sizeof(errors)) == 0);
		CHECK(strstr(errors, stopped) == NULL);
	}
}

/* ---- descriptors ---- */

#define THREADS 400

static pthread_barrier_t opened;
static volatile long emfile;
static long counter_pages = -1; /* the sampler's counters' pages mapped, with all threads up */

/* How many perf counters' pages the process maps (/proc/self/maps), -1 when unknown. */
static long count_counter_pages(void)
{
	char line[512];
	long count = 0;
	FILE *maps = fopen("/proc/self/maps", "re");

	if (!maps)
		return -1;
	while (fgets(line, sizeof(line), maps))
		count += strstr(line, "perf_event") != NULL;
	fclose(maps);
	return count;
}

static void *open_two(void *unused)
{
	int fds[2];

	(void)unused;
	usleep(150000); /* the sampler's watcher finds the thread (every 50 ms) */
	for (int i = 0; i < 2; i++) {
		fds[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (fds[i] < 0 && errno == EMFILE)
			__atomic_add_fetch(&emfile, 1, __ATOMIC_RELAXED);
	}
	if (pthread_barrier_wait(&opened) == PTHREAD_BARRIER_SERIAL_THREAD)
		counter_pages = count_counter_pages();
	pthread_barrier_wait(&opened);
	for (int i = 0; i < 2; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return NULL;
}

/* 400 threads x 2 files under RLIMIT_NOFILE 1024, sampled: 0 when none got EMFILE. */
static int descriptors(void)
{
	struct rlimit limit = {1024, 1024};
	pthread_t threads[THREADS];
	pthread_attr_t attributes;
	int made = 0;

	if (setrlimit(RLIMIT_NOFILE, &limit) != 0 || !start(100, 0, true))
		return 2;
	pthread_barrier_init(&opened, NULL, THREADS);
	pthread_attr_init(&attributes);
	pthread_attr_setstacksize(&attributes, 256 * 1024);
	for (int i = 0; i < THREADS; i++)
		made += pthread_create(&threads[i], &attributes, open_two, NULL) == 0;
	if (made != THREADS) {
		fprintf(stderr, "FAIL only %d threads\n", made);
		return 2;
	}
	for (int i = 0; i < THREADS; i++)
		pthread_join(threads[i], NULL);
	profopt_stacks_stop();
	printf("note %d threads sampled (the main one and %d), %ld of them by counters holding "
	       "no descriptor (the others by POSIX timers)\n",
	       THREADS + 1, THREADS, counter_pages);
	fflush(stdout);
	if (emfile)
		fprintf(stderr, "FAIL %ld opens failed with EMFILE\n", emfile);
	return emfile ? 1 : 0;
}

static void check_descriptors(void)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(descriptors());
	CHECK(wait_status(pid) == 0);
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*check)(void);
	} checks[] = {{"sigprof-reset", check_sigprof_reset},
		      {"waits", check_waits},
		      {"takeover", check_takeover},
		      {"descriptors", check_descriptors}};

	unsetenv("PROFOPT_STACKS_HZ");
	profopt_stacks_stop(); /* in case the environment of the test had started it */
	for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++)
		if (argc < 2 || strcmp(argv[1], checks[i].name) == 0)
			checks[i].check();
	if (!po_check_failures)
		printf("ok   the sampler leaves the program alone: SIGPROF reset, waits, its own "
		       "SIGURG and SIGPROF handlers, its descriptors\n");
	return CHECK_SUMMARY();
}
