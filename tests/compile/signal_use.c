/*
 * signal_use.c: the signal helpers of libprofopt's public API, as a sampler uses them
 * (docs/sampling.md): profopt_native_frames() wraps a handler that is there and still
 * calls it (with the signal number and, for an SA_SIGINFO handler, its siginfo), once
 * however often it is asked, and refuses a signal without a handler; the wall-time timer
 * of profopt_signal_timer_start() sends its signal to the calling thread on
 * CLOCK_MONOTONIC, also while it sleeps, until profopt_signal_timer_stop(), and refuses
 * a bad signal or period. Exits 0 when all hold; prints what did not.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "profopt.h"

static volatile sig_atomic_t calls, last_signo, with_info;
static int failures;

#define EXPECT(condition)                                                                          \
	do {                                                                                       \
		if (!(condition)) {                                                                \
			fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #condition);       \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

static void plain_handler(int signo)
{
	calls++;
	last_signo = signo;
}

static void info_handler(int signo, siginfo_t *info, void *context)
{
	(void)context;
	calls++;
	last_signo = signo;
	with_info = info && info->si_signo == signo;
}

/* Burns ms of the process's CPU time. */
static void spin_ms(long ms)
{
	struct timespec now;
	long long end;
	volatile unsigned long value = 1;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
	end = (long long)now.tv_sec * 1000000000 + now.tv_nsec + ms * 1000000LL;
	do {
		for (int i = 0; i < 1024; i++)
			value = value * 3 + 1;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
	} while ((long long)now.tv_sec * 1000000000 + now.tv_nsec < end);
}

static void sleep_ms(long ms)
{
	struct timespec rest = {ms / 1000, ms % 1000 * 1000000L};

	while (nanosleep(&rest, &rest) != 0 && errno == EINTR)
		;
}

/*
 * A signal timer started by start, SIGPROF every 5 ms of the clock pass_ms lets pass: 200 ms
 * of it bring 10 signals at least, none after profopt_signal_timer_stop(); a period of 0 is
 * refused.
 */
static void check_timer(int (*start)(int, uint32_t), void (*pass_ms)(long))
{
	sig_atomic_t after_stop;

	calls = 0;
	EXPECT(start(SIGPROF, 5000) == 0);
	pass_ms(200);
	profopt_signal_timer_stop();
	EXPECT(calls >= 10);
	after_stop = calls;
	pass_ms(50);
	EXPECT(calls == after_stop);
	EXPECT(start(SIGPROF, 0) == -EINVAL);
}

int main(void)
{
	struct sigaction action;

	memset(&action, 0, sizeof(action));
	action.sa_handler = plain_handler;
	action.sa_flags = SA_RESTART;
	sigaction(SIGPROF, &action, NULL);
	EXPECT(profopt_native_frames(SIGPROF) == 0);
	EXPECT(profopt_native_frames(SIGPROF) == 0); /* once: no handler wraps itself */
	raise(SIGPROF);
	EXPECT(calls == 1 && last_signo == SIGPROF);

	memset(&action, 0, sizeof(action));
	action.sa_sigaction = info_handler;
	action.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGPROF, &action, NULL);
	EXPECT(profopt_native_frames(SIGPROF) == 0);
	raise(SIGPROF);
	EXPECT(calls == 2 && with_info);

	signal(SIGUSR2, SIG_DFL);
	EXPECT(profopt_native_frames(SIGUSR2) == -EINVAL); /* nothing to wrap */
	EXPECT(profopt_native_frames(0) == -EINVAL);

	/* 5 ms of wall time a signal: a 200 ms sleep takes about 40 */
	check_timer(profopt_signal_timer_start, sleep_ms);
	EXPECT(profopt_signal_timer_start(-1, 1000) == -EINVAL);
	profopt_signal_timer_stop(); /* twice: harmless */
	/* 5 ms of the process's CPU time a signal, any signal: 200 ms of work take about 40 */
	check_timer(profopt_signal_cpu_timer_start, spin_ms);
	if (!failures)
		printf("ok   the signal helpers: native frames wrap and chain, the wall-time and "
		       "CPU-time timers\n");
	return failures ? 1 : 0;
}
