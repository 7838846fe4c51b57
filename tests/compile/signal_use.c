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

static void sleep_ms(long ms)
{
	struct timespec rest = {ms / 1000, ms % 1000 * 1000000L};

	while (nanosleep(&rest, &rest) != 0 && errno == EINTR)
		;
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
	calls = 0;
	EXPECT(profopt_signal_timer_start(SIGPROF, 5000) == 0);
	sleep_ms(200);
	profopt_signal_timer_stop();
	EXPECT(calls >= 10);
	{
		sig_atomic_t after_stop = calls;

		sleep_ms(50);
		EXPECT(calls == after_stop);
	}
	EXPECT(profopt_signal_timer_start(SIGPROF, 0) == -EINVAL);
	EXPECT(profopt_signal_timer_start(-1, 1000) == -EINVAL);
	profopt_signal_timer_stop(); /* twice: harmless */
	if (!failures)
		printf(
		    "ok   the signal helpers: native frames wrap and chain, the wall-time timer\n");
	return failures ? 1 : 0;
}
