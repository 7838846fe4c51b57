/*
 * work.c: the simulator's notion of work. CPU work spins on the thread's CPU clock, so on
 * a busy machine it takes longer in wall time, as real preprocessing would; I/O-like work
 * sleeps. Durations vary by a seeded random factor.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "profopt.h"
#include "sim.h"

void sim_random_seed(struct sim_random *rng, int64_t seed, int64_t stream)
{
	/* splitmix64 of seed and stream, never zero */
	uint64_t z = (uint64_t)seed * 0x9e3779b97f4a7c15ULL + (uint64_t)stream + 1;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	rng->state = (z ^ (z >> 31)) | 1;
}

static uint64_t next_random(struct sim_random *rng)
{
	/* xorshift64* */
	rng->state ^= rng->state >> 12;
	rng->state ^= rng->state << 25;
	rng->state ^= rng->state >> 27;
	return rng->state * 0x2545f4914f6cdd1dULL;
}

int64_t sim_jitter(struct sim_random *rng, int64_t duration_ns, int64_t jitter_pct)
{
	double unit; /* uniform in [-1, 1) */

	if (jitter_pct <= 0 || duration_ns <= 0)
		return duration_ns;
	unit = (double)(next_random(rng) >> 11) / (double)(1ULL << 52) - 1.0;
	duration_ns += (int64_t)((double)duration_ns * unit * (double)jitter_pct / 100.0);
	return duration_ns > 0 ? duration_ns : 0;
}

static int64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t sim_thread_cpu_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

void sim_burn_cpu(int64_t cpu_ns)
{
	int64_t deadline = sim_thread_cpu_ns() + cpu_ns;
	volatile uint64_t sink = 0;

	if (cpu_ns <= 0)
		return;
	while (sim_thread_cpu_ns() < deadline) {
		for (int i = 0; i < 2000; i++)
			sink += (uint64_t)i * 2654435761u;
	}
}

void sim_sleep(int64_t duration_ns)
{
	struct timespec deadline;
	int64_t end = clock_ns(CLOCK_MONOTONIC) + duration_ns;

	if (duration_ns <= 0)
		return;
	deadline.tv_sec = end / 1000000000;
	deadline.tv_nsec = end % 1000000000;
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, NULL) == EINTR) {
	}
}

/*
 * Leaked blocks stay reachable through this chain (each block starts with a pointer to the
 * one leaked before it), so that a sanitizer build does not fail on the leak the
 * simulator is asked to make; for the trace they are never freed all the same.
 */
static void *leak_chain; /* owned: the last block leaked */

void sim_leak_host_memory(int64_t bytes)
{
	char *block;

	if (bytes <= 0)
		return;
	block = malloc((size_t)bytes);
	if (!block)
		return;
	memset(block, 0xa5, (size_t)bytes); /* touched, so that RSS grows */
	if ((size_t)bytes >= sizeof(void *)) {
		memcpy(block, &leak_chain, sizeof(void *));
		leak_chain = block;
	}
	profopt_mem_alloc((uint64_t)(uintptr_t)block, (uint64_t)bytes, PROFOPT_DEVICE_HOST, "leak");
}
