/*
 * stacks_c_load.c (profopt-bench-stacks-c): the CPU-bound C program of bench/stacks_c.sh. It
 * links libprofopt, so profopt-record --stacks samples it (PROFOPT_STACKS_HZ), and for
 * SECONDS of wall time (default 2) calls a leaf function of fixed work through a chain of
 * DEPTH calls (a stack as deep as a library's), one thread. Prints the work
 * units done per CPU second of the process, the sampler's handler included, and per wall
 * second:
 *
 *     units_per_cpu_s N units_per_s N cpu_s N
 *
 * With --alternate HZ [ROUNDS [wall]] it starts and stops the sampler itself
 * (profopt_stacks_start, on CPU time or with wall on wall time), in ROUNDS rounds of 0.25 s
 * (default 24) that alternate between sampling at HZ and not, in this one process: the two medians
 * then differ by the sampler's cost alone, not by what differs between processes (where the code
 * and stack fall in the caches, another program's load). Prints
 *
 *     alternate_hz HZ off_units_per_cpu_s N on_units_per_cpu_s N
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "profopt.h"

#define LEAF_ROUNDS 4000 /* about 4 us of work per unit */

static volatile uint64_t sink;

static int64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

__attribute__((noinline)) static uint64_t leaf(uint64_t seed)
{
	for (int i = 0; i < LEAF_ROUNDS; i++)
		seed = seed * 6364136223846793005u + 1442695040888963407u;
	return seed;
}

/* depth calls deep, then the leaf; not a tail call, so every frame stays on the stack. */
__attribute__((noinline)) static uint64_t descend(int depth, uint64_t seed)
{
	uint64_t value;

	if (depth == 0)
		return leaf(seed);
	value = descend(depth - 1, seed + 1);
	return value ^ (uint64_t)depth;
}

#define DEPTH 24

/* Works for seconds of wall time; returns the units done, and the CPU time they took. */
static long work(double seconds, int64_t *cpu_ns)
{
	int64_t cpu_start = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	int64_t wall_end = clock_ns(CLOCK_MONOTONIC) + (int64_t)(seconds * 1e9);
	long units = 0;

	do {
		for (int i = 0; i < 64; i++, units++)
			sink += descend(DEPTH, (uint64_t)units);
	} while (clock_ns(CLOCK_MONOTONIC) < wall_end);
	*cpu_ns = clock_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu_start;
	return units;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *values, int count)
{
	qsort(values, (size_t)count, sizeof(*values), by_value);
	return count % 2 ? values[count / 2] : (values[count / 2 - 1] + values[count / 2]) / 2;
}

#define ROUNDS_MAX 200

static int alternate(uint32_t hz, int rounds, int wall)
{
	double off[ROUNDS_MAX / 2], on[ROUNDS_MAX / 2];
	int64_t cpu_ns;
	long units;

	rounds = rounds < 2 ? 2 : rounds > ROUNDS_MAX ? ROUNDS_MAX : rounds;
	for (int round = 0; round < rounds / 2 * 2; round++) {
		int sampling = round % 2;

		if (sampling && profopt_stacks_start(hz, wall) != 0) {
			fprintf(stderr, "profopt-bench-stacks-c: the sampler did not start\n");
			return 1;
		}
		units = work(0.25, &cpu_ns);
		if (sampling)
			profopt_stacks_stop();
		(sampling ? on : off)[round / 2] = units * 1e9 / (double)cpu_ns;
	}
	printf("alternate_hz %u off_units_per_cpu_s %.1f on_units_per_cpu_s %.1f\n", (unsigned)hz,
	       median(off, rounds / 2), median(on, rounds / 2));
	return 0;
}

int main(int argc, char **argv)
{
	int64_t wall_start = clock_ns(CLOCK_MONOTONIC), cpu_ns;
	long units;
	int ret = 0;

	profopt_run_begin("bench");
	if (argc > 2 && strcmp(argv[1], "--alternate") == 0) {
		ret = alternate((uint32_t)atoi(argv[2]), argc > 3 ? atoi(argv[3]) : 24,
				argc > 4 && strcmp(argv[4], "wall") == 0);
	} else {
		units = work(argc > 1 ? atof(argv[1]) : 2.0, &cpu_ns);
		printf("units_per_cpu_s %.1f units_per_s %.1f cpu_s %.4f\n",
		       units * 1e9 / (double)cpu_ns,
		       units * 1e9 / (double)(clock_ns(CLOCK_MONOTONIC) - wall_start),
		       cpu_ns / 1e9);
	}
	profopt_run_end();
	return ret;
}
