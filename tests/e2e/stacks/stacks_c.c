/*
 * stacks_c.c: a C training loop with designed CPU costs, the ground truth of libprofopt's
 * own function samples (docs/sampling.md, "C and C++ programs"). Each step loads a batch on
 * the main thread in three functions that spend 60%, 30% and 10% of the loading's CPU time
 * (each spins to a deadline of its thread's CPU clock), then runs forward in a fourth; a
 * second thread preprocesses in a function of its own, in its own preprocess spans. The
 * program measures what each function spent on its thread's CPU clock, and the loop's CPU
 * and wall time on the main thread (whether it had its core to itself), and writes them to
 * TRUTH as JSON. Usage: stacks_c STEPS TRUTH
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <profopt.h>

/* Per-step CPU costs, in microseconds: 6.6 + 3.3 + 1.1 ms of loading, 2 ms of forward. */
#define DECODE_US 6600
#define AUGMENT_US 3300
#define NORMALIZE_US 1100
#define FORWARD_US 2000
#define RESIZE_US 3000

static int64_t wall_ns(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

static int64_t thread_cpu_ns(void)
{
	struct timespec now;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
	return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

/*
 * Each costed function spins in its own frame (a shared helper would take the samples) and
 * returns the CPU time it spent. The thread's CPU clock is a system call (the vDSO does not
 * serve it), read every 16,384 rounds (tens of microseconds) so that its own time stays a
 * small part of the function's.
 */
#define SPIN(us, mix)                                                                              \
	int64_t start = thread_cpu_ns(), deadline = start + (int64_t)(us)*1000;                    \
	volatile uint32_t value = seed;                                                            \
	while (thread_cpu_ns() < deadline)                                                         \
		for (int i = 0; i < 16384; i++)                                                    \
			value = value * (mix) + (uint32_t)i;                                       \
	return thread_cpu_ns() - start

__attribute__((noinline)) static int64_t decode_record(uint32_t seed)
{
	SPIN(DECODE_US, 31u);
}

__attribute__((noinline)) static int64_t augment_record(uint32_t seed)
{
	SPIN(AUGMENT_US, 17u);
}

__attribute__((noinline)) static int64_t normalize_record(uint32_t seed)
{
	SPIN(NORMALIZE_US, 13u);
}

__attribute__((noinline)) static int64_t forward_pass(uint32_t seed)
{
	SPIN(FORWARD_US, 7u);
}

__attribute__((noinline)) static int64_t resize_record(uint32_t seed)
{
	SPIN(RESIZE_US, 5u);
}

static atomic_bool stopping;
static int64_t resize_ns; /* the preprocessing thread's, read after join */

static void *preprocess_thread(void *unused)
{
	(void)unused;
	for (uint32_t batch = 0; !atomic_load(&stopping); batch++) {
		profopt_stage_begin(PROFOPT_STAGE_PREPROCESS, "resize", batch, -1);
		resize_ns += resize_record(batch);
		profopt_stage_end(PROFOPT_STAGE_PREPROCESS, "resize", batch, -1);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int64_t spent[4] = {0}; /* decode, augment, normalize, forward */
	int64_t loop_cpu_ns, loop_wall_ns;
	long steps = argc == 3 ? strtol(argv[1], NULL, 10) : 0;
	pthread_t preprocess;
	FILE *truth;

	if (steps <= 0) {
		fprintf(stderr, "usage: stacks_c STEPS TRUTH\n");
		return 2;
	}
	profopt_run_begin("c");
	profopt_run_config("num_workers", "0");
	if (pthread_create(&preprocess, NULL, preprocess_thread, NULL) != 0)
		return 1;
	loop_cpu_ns = thread_cpu_ns();
	loop_wall_ns = wall_ns();
	for (long step = 0; step < steps; step++) {
		profopt_step_begin(step, 0, 1);
		profopt_stage_begin(PROFOPT_STAGE_LOAD, "record", step, step);
		spent[0] += decode_record((uint32_t)step);
		spent[1] += augment_record((uint32_t)step);
		spent[2] += normalize_record((uint32_t)step);
		profopt_stage_end(PROFOPT_STAGE_LOAD, "record", step, step);
		profopt_stage_begin(PROFOPT_STAGE_FORWARD, "", step, -1);
		spent[3] += forward_pass((uint32_t)step);
		profopt_stage_end(PROFOPT_STAGE_FORWARD, "", step, -1);
		profopt_step_end(step, 0, 1);
	}
	loop_cpu_ns = thread_cpu_ns() - loop_cpu_ns;
	loop_wall_ns = wall_ns() - loop_wall_ns;
	atomic_store(&stopping, true);
	pthread_join(preprocess, NULL);
	profopt_run_end();
	truth = fopen(argv[2], "w");
	if (!truth)
		return 1;
	fprintf(truth,
		"{\"decode_record_ns\": %lld, \"augment_record_ns\": %lld, "
		"\"normalize_record_ns\": %lld, \"forward_pass_ns\": %lld, "
		"\"resize_record_ns\": %lld, \"loop_cpu_ns\": %lld, \"loop_wall_ns\": %lld}\n",
		(long long)spent[0], (long long)spent[1], (long long)spent[2], (long long)spent[3],
		(long long)resize_ns, (long long)loop_cpu_ns, (long long)loop_wall_ns);
	return fclose(truth) == 0 ? 0 : 1;
}
