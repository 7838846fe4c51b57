/*
 * tracepoint_cost.c: what instrumenting with libprofopt costs. Measures a profopt call
 * while nothing records it (--mode idle), and while a session records (--mode recording)
 * a compute-stage span through libprofopt against the same two events emitted raw from a
 * provider compiled into this program, and a loader-stage span, which also reads the
 * thread CPU clock twice; and, idle, the /proc reads of the sampler thread (smaps_rollup
 * also with 512 MiB resident, as large as a PyTorch worker). Prints one
 * table row per case; bench/tracepoint_cost.sh runs both modes around a real session.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "tracepoint_cost_tp.h"

#include "profopt.h"

#define ROUNDS 15
#define CASE_COUNT(cases) (sizeof(cases) / sizeof((cases)[0]))

struct bench_case {
	const char *name;
	const char *unit;   /* what one iteration is */
	int64_t iterations; /* per round */
	void (*body)(int64_t iterations);
	double best_ns;	  /* per iteration, best round */
	double median_ns; /* per iteration, median round */
};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void empty_loop(int64_t iterations)
{
	for (int64_t i = 0; i < iterations; i++)
		__asm__ __volatile__("" ::: "memory");
}

static void thread_cpu_clock(int64_t iterations)
{
	struct timespec ts;

	for (int64_t i = 0; i < iterations; i++)
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
}

/* What the sampler thread reads: a small /proc file, opened, read once and closed. */
static void read_proc(const char *path, int64_t iterations)
{
	char text[256];

	for (int64_t i = 0; i < iterations; i++) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);

		if (fd >= 0) {
			if (read(fd, text, sizeof(text)) < 0)
				abort();
			close(fd);
		}
	}
}

static void read_statm(int64_t iterations)
{
	read_proc("/proc/self/statm", iterations);
}

static void read_schedstat(int64_t iterations)
{
	read_proc("/proc/self/schedstat", iterations);
}

static void read_stat(int64_t iterations)
{
	read_proc("/proc/stat", iterations);
}

/* The memory sets: the kernel walks every mapping's page tables at each reading. */
static void read_smaps_rollup(int64_t iterations)
{
	char text[2048];

	for (int64_t i = 0; i < iterations; i++) {
		int fd = open("/proc/self/smaps_rollup", O_RDONLY | O_CLOEXEC);

		if (fd >= 0) {
			while (read(fd, text, sizeof(text)) > 0)
				;
			close(fd);
		}
	}
}

/*
 * Anonymous memory of resident_mib, every page touched, so that smaps_rollup walks what a
 * PyTorch worker's does (0.4 to 0.5 GiB resident); NULL on failure. Never unmapped: the
 * program ends after the last case.
 */
static void *resident_region(size_t resident_mib)
{
	size_t bytes = resident_mib << 20;
	char *region =
	    mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (region == MAP_FAILED)
		return NULL;
	for (size_t offset = 0; offset < bytes; offset += 4096)
		region[offset] = 1;
	return region;
}

static void idle_stage_begin(int64_t iterations)
{
	for (int64_t i = 0; i < iterations; i++)
		profopt_stage_begin(PROFOPT_STAGE_FORWARD, "forward", i, -1);
}

static void idle_step_begin(int64_t iterations)
{
	for (int64_t i = 0; i < iterations; i++)
		profopt_step_begin(i, 0, 32);
}

static void profopt_compute_span(int64_t iterations)
{
	for (int64_t i = 0; i < iterations; i++) {
		profopt_stage_begin(PROFOPT_STAGE_FORWARD, "forward", i, -1);
		profopt_stage_end(PROFOPT_STAGE_FORWARD, "forward", i, -1);
	}
}

static void raw_compute_span(int64_t iterations)
{
	for (int64_t i = 0; i < iterations; i++) {
		lttng_ust_tracepoint(profopt_bench, stage_begin, 5, "forward", i, -1, -1);
		lttng_ust_tracepoint(profopt_bench, stage_end, 5, "forward", i, -1, -1);
	}
}

static void profopt_loader_span(int64_t iterations)
{
	for (int64_t i = 0; i < iterations; i++) {
		profopt_stage_begin(PROFOPT_STAGE_PREPROCESS, "preprocess", i, -1);
		profopt_stage_end(PROFOPT_STAGE_PREPROCESS, "preprocess", i, -1);
	}
}

static int compare_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void summarize(struct bench_case *c, double *per_round)
{
	qsort(per_round, ROUNDS, sizeof(per_round[0]), compare_double);
	c->best_ns = per_round[0];
	c->median_ns = per_round[ROUNDS / 2];
}

/*
 * Runs every case ROUNDS times, the cases interleaved within each round so that a busy
 * machine or a draining consumer daemon weighs on all of them alike; pauses between
 * rounds let the consumer daemon empty the buffers.
 */
static void measure(struct bench_case *cases, size_t case_count, int64_t pause_us)
{
	double per_round[8][ROUNDS];

	assert(case_count <= 8);

	for (size_t i = 0; i < case_count; i++)
		cases[i].body(cases[i].iterations / 10); /* warm caches and code paths */
	for (int r = 0; r < ROUNDS; r++) {
		for (size_t i = 0; i < case_count; i++) {
			int64_t start = now_ns();

			cases[i].body(cases[i].iterations);
			per_round[i][r] = (double)(now_ns() - start) / (double)cases[i].iterations;
		}
		if (pause_us > 0)
			usleep((useconds_t)pause_us);
	}
	for (size_t i = 0; i < case_count; i++)
		summarize(&cases[i], per_round[i]);
}

static void print_row(const char *mode, const struct bench_case *c)
{
	printf("%-9s  %-28s  %-24s  %9.2f  %9.2f\n", mode, c->name, c->unit, c->best_ns,
	       c->median_ns);
}

static int run_idle(void)
{
	struct bench_case cases[] = {
	    {"empty loop (baseline)", "iteration", 20000000, empty_loop, 0, 0},
	    {"profopt_stage_begin", "call", 20000000, idle_stage_begin, 0, 0},
	    {"profopt_step_begin", "call", 20000000, idle_step_begin, 0, 0},
	    {"thread CPU clock read", "clock_gettime", 200000, thread_cpu_clock, 0, 0},
	    /* the sampler's reads: RSS and run-queue wait every period, the machine's CPU at
	       most every 100 ms */
	    {"sampler: /proc/self/statm", "open+read+close", 20000, read_statm, 0, 0},
	    {"sampler: /proc/self/schedstat", "open+read+close", 20000, read_schedstat, 0, 0},
	    {"sampler: /proc/stat", "open+read+close", 20000, read_stat, 0, 0},
	    /* the memory sets, at the thread's start and then at most every second */
	    {"sampler: smaps_rollup", "open+read+close", 200, read_smaps_rollup, 0, 0},
	};
	struct bench_case large[] = {
	    {"sampler: smaps_rollup 512 MiB", "open+read+close", 20, read_smaps_rollup, 0, 0},
	};

	if (profopt_tracing_enabled()) {
		fprintf(stderr, "tracepoint_cost: a session records profopt events; idle mode "
				"needs none\n");
		return 1;
	}
	measure(cases, CASE_COUNT(cases), 0);
	for (size_t i = 0; i < CASE_COUNT(cases); i++)
		print_row("idle", &cases[i]);
	if (!resident_region(512)) {
		fprintf(stderr, "tracepoint_cost: cannot map 512 MiB\n");
		return 1;
	}
	measure(large, CASE_COUNT(large), 0);
	print_row("idle", &large[0]);
	return 0;
}

static int run_recording(void)
{
	/* 20000 spans = 40000 events per round: well within the session's buffers. */
	struct bench_case cases[] = {
	    {"raw LTTng-UST span", "begin+end", 20000, raw_compute_span, 0, 0},
	    {"profopt compute span", "begin+end", 20000, profopt_compute_span, 0, 0},
	    {"profopt loader span", "begin+end (+2 CPU clock)", 20000, profopt_loader_span, 0, 0},
	};

	if (!profopt_tracing_enabled() ||
	    !lttng_ust_tracepoint_enabled(profopt_bench, stage_begin)) {
		fprintf(stderr, "tracepoint_cost: recording mode needs a session recording "
				"profopt:* and profopt_bench:*\n");
		return 1;
	}
	measure(cases, CASE_COUNT(cases), 100000);
	for (size_t i = 0; i < CASE_COUNT(cases); i++)
		print_row("recording", &cases[i]);
	printf("ratio: profopt compute span / raw span = %.3f (best), %.3f (median)\n",
	       cases[1].best_ns / cases[0].best_ns, cases[1].median_ns / cases[0].median_ns);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc == 3 && strcmp(argv[1], "--mode") == 0 ? argv[2] : NULL;

	if (!mode || (strcmp(mode, "idle") != 0 && strcmp(mode, "recording") != 0)) {
		fprintf(stderr,
			"Usage: profopt-bench-tracepoints --mode idle|recording\n"
			"  idle: no session records profopt events (cost of a disabled call)\n"
			"  recording: a session records profopt:* and profopt_bench:*\n"
			"Prints: mode, case, unit, best and median ns per unit over %d rounds.\n",
			ROUNDS);
		return 2;
	}
	printf("%-9s  %-28s  %-24s  %9s  %9s\n", "mode", "case", "unit", "best ns", "median ns");
	return strcmp(mode, "idle") == 0 ? run_idle() : run_recording();
}
