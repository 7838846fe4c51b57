/*
 * record_workload.c: the program the profopt-record tests record.
 *
 *   record_workload pipeline   a main process that forks 2 workers; each worker emits
 *                              worker_begin and load/preprocess/collate spans, the main
 *                              process run_begin, steps and data_wait spans
 *   record_workload exit N     emits run_begin and exits with status N
 *   record_workload wait FILE  emits run_begin, creates FILE, emits a step every 10 ms
 *                              until SIGINT or SIGTERM, then emits run_end and exits 42
 *   record_workload heap       allocates 16 blocks and frees 8 of them
 *   record_workload flood S [R]  emits stage_begin/end pairs for S seconds, in a tight
 *                              loop or paced at R events/s, and prints how many it emitted
 */
#define _DEFAULT_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <profopt.h>

#define WORKER_COUNT 2
#define BATCHES_PER_WORKER 4
#define STEP_COUNT 6

static void run_worker(int64_t worker_id)
{
	int64_t i, batch;

	profopt_worker_begin(worker_id);
	for (i = 0; i < BATCHES_PER_WORKER; i++) {
		batch = i * WORKER_COUNT + worker_id;
		profopt_stage_begin(PROFOPT_STAGE_LOAD, "load", batch, -1);
		usleep(1000);
		profopt_stage_end(PROFOPT_STAGE_LOAD, "load", batch, -1);
		profopt_stage_begin(PROFOPT_STAGE_PREPROCESS, "preprocess", batch, -1);
		usleep(1000);
		profopt_stage_end(PROFOPT_STAGE_PREPROCESS, "preprocess", batch, -1);
		profopt_stage_begin(PROFOPT_STAGE_COLLATE, "collate", batch, -1);
		profopt_stage_end(PROFOPT_STAGE_COLLATE, "collate", batch, -1);
		profopt_batch_ready(batch, -1);
	}
	profopt_worker_end(worker_id);
}

static int run_pipeline(void)
{
	pid_t workers[WORKER_COUNT];
	int64_t step;
	int i, status, failed = 0;

	profopt_run_begin("record-test");
	profopt_run_config("num_workers", "2");
	for (i = 0; i < WORKER_COUNT; i++) {
		workers[i] = fork();
		if (workers[i] == -1)
			return 1;
		if (workers[i] == 0) {
			run_worker(i);
			_exit(0);
		}
	}
	for (step = 0; step < STEP_COUNT; step++) {
		profopt_step_begin(step, 0, 8);
		profopt_stage_begin(PROFOPT_STAGE_DATA_WAIT, "", step, -1);
		usleep(2000);
		profopt_stage_end(PROFOPT_STAGE_DATA_WAIT, "", step, -1);
		profopt_step_end(step, 0, 8);
	}
	for (i = 0; i < WORKER_COUNT; i++) {
		if (waitpid(workers[i], &status, 0) == -1 || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0)
			failed = 1;
	}
	profopt_run_end();
	return failed;
}

/* Sleeps while more than 1 ms ahead of RATE events/s. */
static void pace(int64_t start_ns, int64_t events, double rate)
{
	int64_t ahead_ns;

	if (!(rate > 0))
		return; /* no rate: as fast as it goes */
	ahead_ns = start_ns + (int64_t)(events / rate * 1e9) - profopt_now_ns();
	if (ahead_ns > 1000000)
		usleep((useconds_t)(ahead_ns / 1000));
}

static int run_flood(double seconds, double rate)
{
	int64_t start_ns = profopt_now_ns();
	int64_t end_ns = start_ns + (int64_t)(seconds * 1e9);
	int64_t pairs = 0, i;

	profopt_run_begin("record-flood");
	while (profopt_now_ns() < end_ns) {
		pace(start_ns, pairs * 2, rate);
		/* Checking the clock every 64 pairs keeps its cost out of the rate. */
		for (i = 0; i < 64; i++, pairs++) {
			profopt_stage_begin(PROFOPT_STAGE_FORWARD, "x", pairs, -1);
			profopt_stage_end(PROFOPT_STAGE_FORWARD, "x", pairs, -1);
		}
	}
	profopt_run_end();
	printf("emitted %lld events in %.1f s: %.0f events/s\n", (long long)(pairs * 2 + 2),
	       seconds, (pairs * 2 + 2) / seconds);
	return 0;
}

static volatile sig_atomic_t stop_requested;

static void on_stop(int signal_number)
{
	(void)signal_number;
	stop_requested = 1;
}

static int run_until_signal(const char *ready_path)
{
	struct sigaction action = {.sa_handler = on_stop};
	FILE *ready;
	int64_t step = 0;

	sigemptyset(&action.sa_mask);
	sigaction(SIGINT, &action, NULL);
	sigaction(SIGTERM, &action, NULL);
	profopt_run_begin("record-wait");
	ready = fopen(ready_path, "w");
	if (!ready)
		return 1;
	fclose(ready);
	while (!stop_requested) {
		profopt_step_begin(step, 0, -1);
		usleep(10000);
		profopt_step_end(step++, 0, -1);
	}
	profopt_run_end();
	return 42;
}

static int run_heap(void)
{
	void *blocks[16];
	int i;

	profopt_run_begin("record-heap");
	for (i = 0; i < 16; i++) {
		blocks[i] = malloc(1000 + i);
		if (!blocks[i])
			return 1;
		memset(blocks[i], i, 1000 + i);
	}
	for (i = 0; i < 8; i++)
		free(blocks[i]);
	profopt_run_end();
	/* The other 8 blocks are left allocated on purpose: the trace shows them live. */
	return blocks[8] == NULL;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "wait"))
		return run_until_signal(argv[2]);
	if (argc == 2 && !strcmp(argv[1], "heap"))
		return run_heap();
	if (argc == 2 && !strcmp(argv[1], "pipeline"))
		return run_pipeline();
	if (argc == 3 && !strcmp(argv[1], "exit")) {
		profopt_run_begin("record-exit");
		return atoi(argv[2]);
	}
	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "flood"))
		return run_flood(atof(argv[2]), argc == 4 ? atof(argv[3]) : 0);
	fprintf(
	    stderr,
	    "usage: record_workload pipeline | exit N | wait FILE | heap | flood SECONDS [RATE]\n");
	return 2;
}
