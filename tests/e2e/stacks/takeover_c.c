/*
 * takeover_c.c: a C training loop sampled by libprofopt (profopt-record --stacks) that
 * installs its own SIGURG handler at its 10th step of 30: the sampler stops within its
 * watcher's period and the run's configuration says so (stacks_stopped), which the
 * analysis reports as the trace quality warning stacks-stopped (stopped.sh checks it).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "profopt.h"

static volatile uint64_t sink;

/* Burns ms of this thread's CPU time. */
static void spin_ms(int64_t ms)
{
	struct timespec now;
	int64_t end;
	uint64_t value = 1;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
	end = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec + ms * 1000000;
	do {
		for (int i = 0; i < 4096; i++)
			value = value * 6364136223846793005u + 1442695040888963407u;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
	} while ((int64_t)now.tv_sec * 1000000000 + now.tv_nsec < end);
	sink += value;
}

static void on_urgent(int signo)
{
	(void)signo;
}

int main(void)
{
	struct sigaction own;

	memset(&own, 0, sizeof(own));
	own.sa_handler = on_urgent;
	sigemptyset(&own.sa_mask);
	profopt_run_begin("c");
	profopt_run_config("num_workers", "0");
	for (int64_t step = 0; step < 30; step++) {
		if (step == 10)
			sigaction(SIGURG, &own, NULL); /* the program's own, as Go's runtime has */
		profopt_step_begin(step, 0, 1);
		profopt_stage_begin(PROFOPT_STAGE_LOAD, "record", step, step);
		spin_ms(10);
		profopt_stage_end(PROFOPT_STAGE_LOAD, "record", step, step);
		profopt_stage_begin(PROFOPT_STAGE_FORWARD, "", step, -1);
		spin_ms(5);
		profopt_stage_end(PROFOPT_STAGE_FORWARD, "", step, -1);
		profopt_step_end(step, 0, 1);
	}
	profopt_run_end();
	return 0;
}
