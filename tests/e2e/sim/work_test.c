/* work_test.c: unit tests of profopt-sim's durations: jitter bounds, seeding, CPU burn, sleep. */
#define _GNU_SOURCE
#include <time.h>

#include "check.h"
#include "sim.h"

static int64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void test_jitter_bounds(void)
{
	struct sim_random rng;
	int64_t low = INT64_MAX, high = 0;

	sim_random_seed(&rng, 42, 0);
	for (int i = 0; i < 10000; i++) {
		int64_t d = sim_jitter(&rng, 1000000, 20);

		low = d < low ? d : low;
		high = d > high ? d : high;
	}
	CHECK(low >= 800000 && high <= 1200000);
	CHECK(low < 810000 && high > 1190000); /* the whole range is used */
	CHECK_INT_EQ(sim_jitter(&rng, 1000000, 0), 1000000);
	CHECK_INT_EQ(sim_jitter(&rng, 0, 50), 0);
	for (int i = 0; i < 1000; i++)
		CHECK(sim_jitter(&rng, 1000, 100) >= 0);
}

static void test_seeding(void)
{
	struct sim_random a, b, c;
	int same = 1, differ = 0;

	sim_random_seed(&a, 7, 1);
	sim_random_seed(&b, 7, 1);
	sim_random_seed(&c, 7, 2);
	for (int i = 0; i < 100; i++) {
		int64_t x = sim_jitter(&a, 1000000, 30), y = sim_jitter(&b, 1000000, 30);

		same &= x == y;
		differ |= x != sim_jitter(&c, 1000000, 30);
	}
	CHECK(same);
	CHECK(differ);
}

static void test_burn_and_sleep(void)
{
	int64_t cpu0 = sim_thread_cpu_ns(), wall0 = monotonic_ns();

	sim_burn_cpu(20000000);
	CHECK(sim_thread_cpu_ns() - cpu0 >= 20000000);
	CHECK(monotonic_ns() - wall0 >= 20000000);
	cpu0 = sim_thread_cpu_ns();
	wall0 = monotonic_ns();
	sim_sleep(20000000);
	CHECK(monotonic_ns() - wall0 >= 20000000);
	CHECK(sim_thread_cpu_ns() - cpu0 < 10000000); /* sleeping is not CPU work */
}

int main(void)
{
	RUN(test_jitter_bounds);
	RUN(test_seeding);
	RUN(test_burn_and_sleep);
	return CHECK_SUMMARY();
}
