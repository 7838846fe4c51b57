/* test_compare.c: the JSON reader, the statistics, comparisons and --fail-if gates. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "compare/compare.h"
#include "compare/json_read.h"
#include "stats/stats.h"

static void test_json_reader(void)
{
	struct po_arena *arena = po_arena_create();
	struct po_json_value *root = NULL;
	struct po_error err = {{0}};
	const char *text = "{\"a\": [1, 2.5, -3e2], \"s\": \"x\\u00e9\\n\\\"\", \"t\": true, "
			   "\"f\": false, \"n\": null, \"o\": {}}";

	CHECK(po_json_parse(text, strlen(text), arena, &root, &err) == PO_STATUS_OK);
	CHECK_INT_EQ(po_json_get(root, "a")->count, 3);
	CHECK_NEAR(po_json_number(po_json_get(root, "a")->items[2], 0), -300, 1e-9);
	CHECK_STR_EQ(po_json_string(po_json_get(root, "s"), ""), "x\xc3\xa9\n\"");
	CHECK(po_json_get(root, "t")->boolean && !po_json_get(root, "f")->boolean);
	CHECK(po_json_get(root, "n")->type == PO_JSON_NULL);
	CHECK(po_json_get(root, "missing") == NULL);
	CHECK(po_json_parse("{\"a\": }", 7, arena, &root, &err) == PO_STATUS_INPUT);
	CHECK(strstr(err.message, "byte") != NULL);
	CHECK(po_json_parse("[1, 2] x", 8, arena, &root, &err) == PO_STATUS_INPUT);
	CHECK(po_json_parse("\"abc", 4, arena, &root, &err) == PO_STATUS_INPUT);
	po_arena_destroy(arena);
}

static void test_statistics(void)
{
	double a[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
	double b[] = {11, 12, 13, 14, 15, 16, 17, 18, 19, 20};
	double lo, hi;

	CHECK_NEAR(po_stats_quantile(a, 10, 0.5), 5.5, 1e-9);
	CHECK_NEAR(po_stats_quantile(a, 10, 0.95), 9.55, 1e-9);
	CHECK(po_stats_mann_whitney_p(a, 10, b, 10) < 0.001);
	CHECK(po_stats_mann_whitney_p(a, 10, a, 10) > 0.9);
	CHECK(isnan(po_stats_mann_whitney_p(a, 1, b, 10)));
	{
		double tied[] = {5, 1, 5, 3}, ranks[4];

		CHECK(po_stats_ranks(tied, 4, ranks));
		CHECK(ranks[0] == 3.5 && ranks[1] == 1 && ranks[2] == 3.5 && ranks[3] == 2);
	}
	po_stats_bootstrap_interval(a, 10, b, 10, 0.5, 500, &lo, &hi);
	CHECK(lo > 5 && hi < 15 && lo <= 10 && hi >= 10);
	CHECK_NEAR(po_stats_slope(a, 10), 1.0, 1e-9);
}

/*
 * Samples larger than PO_BOOTSTRAP_SAMPLE_MAX (a baseline of 100,000 steps): the interval of
 * the medians' difference holds the true shift, centred on the whole samples' difference,
 * narrower than a small sample's, and the same for the same input. The cost is a benchmark
 * (bench/), not timed here.
 */
static void test_bootstrap_large_samples(void)
{
	size_t n = 100000, small = 1000;
	double *a = malloc(n * sizeof(*a)), *b = malloc(n * sizeof(*b));
	double lo, hi, again_lo, again_hi, small_lo, small_hi;
	uint64_t state = 12345;

	for (size_t i = 0; i < n; i++) { /* uniform noise of width 10, then b shifted by 2 */
		state = state * 6364136223846793005ULL + 1442695040888963407ULL;
		a[i] = 100 + (double)(state >> 11) / 9007199254740992.0 * 10;
		state = state * 6364136223846793005ULL + 1442695040888963407ULL;
		b[i] = 102 + (double)(state >> 11) / 9007199254740992.0 * 10;
	}
	po_stats_bootstrap_interval(a, n, b, n, 0.5, 1000, &lo, &hi);
	CHECK(lo < 2 && hi > 2 && hi - lo < 0.2);
	po_stats_bootstrap_interval(a, n, b, n, 0.5, 1000, &again_lo, &again_hi);
	CHECK(lo == again_lo && hi == again_hi);
	po_stats_bootstrap_interval(a, small, b, small, 0.5, 1000, &small_lo, &small_hi);
	CHECK(small_hi - small_lo > 3 * (hi - lo));
	CHECK(small_lo < 2 && small_hi > 2);
	free(a);
	free(b);
}

/* A summary.json with steps around mean_ms (a deterministic wobble) and some findings. */
/* A summary.json whose machine member says other programs used others_cores of 2 cores
 * (no machine member when negative), and whose one process waited runq_ms for a CPU while
 * it ran 1000 ms (no processes when negative). */
static void write_summary_runq(const char *path, double mean_ms, size_t steps, const char *finding,
			       double others_cores, double runq_ms)
{
	FILE *file = fopen(path, "w");

	fprintf(file, "{\"schema\": \"profopt.summary/1\", \"verdict\": \"%s\", ",
		finding ? "input-bound" : "balanced");
	if (others_cores >= 0)
		fprintf(file, "\"machine\": {\"cpu_count\": 2, \"others_cores\": %.3f}, ",
			others_cores);
	if (runq_ms >= 0)
		fprintf(file,
			"\"processes\": [{\"pid\": 1, \"cpu_ms\": 1000, \"runq_wait_ms\": %.1f}], ",
			runq_ms);
	fprintf(file, "\"findings\": [");
	if (finding)
		fprintf(file, "{\"id\": \"%s\", \"severity\": \"critical\"}", finding);
	fprintf(file,
		"], \"steps\": {\"steps_per_s\": %f}, \"workers\": [{\"busy_pct\": 50}], "
		"\"step_series\": [",
		1000.0 / mean_ms);
	for (size_t i = 0; i < steps; i++) {
		double wall = mean_ms * (1.0 + 0.04 * sin((double)i * 1.7));

		fprintf(file,
			"%s{\"wall_ms\": %.4f, \"flags\": [], \"categories_ms\": "
			"{\"forward\": %.4f, \"data_wait\": %.4f}, \"rss_bytes\": %zu}",
			i ? ", " : "", wall, wall * 0.6, wall * 0.4, 1000000 + i);
	}
	fprintf(file, "]}\n");
	fclose(file);
}

static void write_summary_load(const char *path, double mean_ms, size_t steps, const char *finding,
			       double others_cores)
{
	write_summary_runq(path, mean_ms, steps, finding, others_cores, -1);
}

static void write_summary(const char *path, double mean_ms, size_t steps, const char *finding)
{
	write_summary_load(path, mean_ms, steps, finding, -1);
}

static struct po_comparison *compare_files(struct po_arena *arena, const char *old_path,
					   const char *new_path)
{
	struct po_digest *old_run = NULL, *new_run = NULL;
	struct po_comparison *comparison = NULL;
	struct po_compare_config config;
	struct po_error err = {{0}};

	po_compare_config_init(&config);
	CHECK(po_digest_from_summary(old_path, &old_run, &err) == PO_STATUS_OK);
	CHECK(po_digest_from_summary(new_path, &new_run, &err) == PO_STATUS_OK);
	if (old_run && new_run) {
		CHECK(po_compare(old_run, new_run, &config, arena, &comparison, &err) ==
		      PO_STATUS_OK);
		CHECK(po_comparison_take_series(comparison, arena) == PO_STATUS_OK);
	}
	po_digest_destroy(old_run);
	po_digest_destroy(new_run);
	return comparison;
}

static const struct po_metric_change *metric(const struct po_comparison *c, const char *name)
{
	for (size_t i = 0; c && i < c->metric_count; i++)
		if (strcmp(po_cmp_metric_name(c->metrics[i].metric), name) == 0)
			return &c->metrics[i];
	return NULL;
}

static enum po_gate_outcome gate_outcome(const struct po_comparison *c, const char *expression)
{
	struct po_error err = {{0}};
	enum po_gate_outcome outcome = PO_GATE_FALSE;

	CHECK(po_gate_evaluate(c, expression, &outcome, &err) == PO_STATUS_OK);
	return outcome;
}

static bool gate(const struct po_comparison *c, const char *expression)
{
	return gate_outcome(c, expression) == PO_GATE_TRUE;
}

static void test_comparisons_and_gates(void)
{
	char dir[] = "/tmp/profopt-compare-test.XXXXXX";
	char base[256], same[256], slow[256];
	struct po_arena *arena = po_arena_create();
	struct po_comparison *repeat, *slower;
	struct po_error err = {{0}};
	enum po_gate_outcome tripped;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(base, sizeof(base), "%s/base.json", dir);
	snprintf(same, sizeof(same), "%s/same.json", dir);
	snprintf(slow, sizeof(slow), "%s/slow.json", dir);
	write_summary(base, 10.0, 200, "input-bound");
	write_summary(same, 10.05, 200, "input-bound");
	write_summary(slow, 13.0, 200, "gpu-idle");

	repeat = compare_files(arena, base, same);
	CHECK(metric(repeat, "steps.p50_ms") &&
	      metric(repeat, "steps.p50_ms")->judgement == PO_CHANGE_NOISE);
	CHECK(!gate(repeat, "steps.p50_ms>+10%"));
	CHECK(!gate(repeat, "findings.new>0"));
	CHECK_INT_EQ(repeat->new_findings, 0);

	slower = compare_files(arena, base, slow);
	CHECK(metric(slower, "steps.p50_ms")->judgement == PO_CHANGE_SIGNIFICANT);
	CHECK_NEAR(metric(slower, "steps.p50_ms")->delta_pct, 30, 3);
	CHECK(metric(slower, "breakdown.data_wait_ms") != NULL);
	CHECK(gate(slower, "steps.p50_ms>+10%"));
	CHECK(!gate(slower, "steps.p50_ms>+50%"));
	CHECK(gate(slower, "steps.p95_ms>+2"));
	CHECK(gate(slower, "steps.p50_ms>12"));
	CHECK(gate(slower, "findings.new>0"));
	CHECK(gate(slower, "findings.resolved>=1"));
	CHECK_INT_EQ(slower->new_findings, 1);
	CHECK_INT_EQ(slower->resolved_findings, 1);
	CHECK(slower->old_step_count == 200 && slower->new_step_ms[0] > 12);

	CHECK(po_gate_check("steps.p50_ms>+10%", &err) == PO_STATUS_OK);
	CHECK(po_gate_check("steps.p50_ms", &err) == PO_STATUS_USAGE);
	CHECK(po_gate_check("steps.p50_ms>10%", &err) == PO_STATUS_USAGE);
	CHECK(po_gate_check(">5", &err) == PO_STATUS_USAGE);
	CHECK(po_gate_evaluate(slower, "no.such_metric>1", &tripped, &err) == PO_STATUS_USAGE);
	CHECK(po_gate_check("findings.new>+0", &err) == PO_STATUS_USAGE);
	CHECK(po_gate_check("breakdown.data_wait_ms>+5%", &err) == PO_STATUS_OK);
	CHECK(po_gate_check("breakdown.nonsense_ms>+5%", &err) == PO_STATUS_USAGE);
	tripped = PO_GATE_TRUE;
	CHECK(po_gate_evaluate(slower, "breakdown.checkpoint_ms>+1%", &tripped, &err) ==
	      PO_STATUS_OK);
	CHECK(tripped == PO_GATE_FALSE);
	CHECK(po_digest_from_summary(dir, &(struct po_digest *){NULL}, &err) != PO_STATUS_OK);
	unlink(base);
	unlink(same);
	unlink(slow);
	rmdir(dir);
	po_arena_destroy(arena);
}

/* Position of the quantile h = q (n - 1), snapped when whole up to rounding. */
static bool position_is(size_t n, double q, size_t lower, double fraction)
{
	size_t got_lower;
	double got_fraction;

	po_stats_quantile_position(n, q, &got_lower, &got_fraction);
	return got_lower == lower && fabs(got_fraction - fraction) < 1e-9;
}

/*
 * One quantile definition: linear between the closest ranks; the median is its 0.5
 * quantile, the running median too.
 */
static void test_ranks_and_fits(void)
{
	double values[] = {4, 1, 3, 2}, x[] = {0, 1, 2, 3}, y[] = {1, 3, 5, 7};
	const double ten[] = {10, 1, 9, 2, 8, 3, 7, 4, 6, 5};
	struct po_stats_running_median running = {0};
	struct po_stats_fit fit;

	CHECK(position_is(11, 0.9, 9, 0));   /* 0.9 x 10 is 9.000000000000002 */
	CHECK(position_is(21, 0.95, 19, 0)); /* 18.999999999999996 */
	CHECK(position_is(59, 0.9, 52, 0.2));
	CHECK(position_is(1, 0.5, 0, 0));
	CHECK(position_is(7, 0, 0, 0));
	CHECK(position_is(7, 1, 6, 0));
	CHECK(fabs(po_stats_quantile(ten, 10, 0.9) - 9.1) < 1e-12);
	CHECK(po_stats_quantile(ten, 10, 0.5) == 5.5);
	CHECK(po_stats_quantile(ten, 10, 1) == 10 && po_stats_quantile(ten, 10, 0) == 1);
	for (size_t i = 0; i < 10; i++) {
		CHECK(po_stats_running_median_add(&running, ten[i]));
		CHECK(po_stats_running_median_value(&running) ==
		      po_stats_quantile(ten, i + 1, 0.5));
	}
	po_stats_running_median_fini(&running);
	CHECK(po_stats_median(values, 4) == 2.5); /* midpoint of 2 and 3 */
	CHECK(po_stats_linear_fit(x, y, 4, &fit) && fit.slope == 2 && fit.intercept == 1 &&
	      fit.r2 == 1);
	CHECK(!po_stats_linear_fit(x, y, 1, &fit));
	CHECK(po_stats_slope(y, 4) == 2);
}

/* Round steps and histogram bounds; NaN left out; the ends take what lies outside. */
static void test_histograms(void)
{
	const double values[] = {12, 17, 18.5, NAN, 29.9, 30, 31};
	struct po_stats_histogram histogram;

	CHECK(po_stats_nice_step(80, 8) == 10);
	CHECK(po_stats_nice_step(19, 8) == 2.5);
	CHECK(po_stats_nice_step(0.7, 8) == 0.1);
	CHECK(po_stats_nice_step(0, 8) == 1);
	/* 12..31: a step of 2.5, bounds 10 and 32.5, bins of 2.25 */
	CHECK(po_stats_histogram_axis(&histogram, 10, 12, 31));
	CHECK(histogram.low == 10 && histogram.high == 32.5);
	po_stats_histogram_add(&histogram, values, 7);
	CHECK_INT_EQ(histogram.total, 6);
	CHECK_INT_EQ(histogram.counts[0], 1); /* 12 */
	CHECK_INT_EQ(histogram.counts[3], 2); /* 17 and 18.5: [16.75, 19) */
	CHECK_INT_EQ(histogram.counts[8], 2); /* 29.9 and 30: [28, 30.25) */
	CHECK_INT_EQ(histogram.counts[9], 1); /* 31 */
	CHECK_INT_EQ(histogram.highest, 2);
	/* values outside the bounds go to the end bins */
	po_stats_histogram_add(&histogram, (const double[]){-100, 1000}, 2);
	CHECK(histogram.counts[0] == 2 && histogram.counts[9] == 2);
	/* one value: an axis of its own scale around it */
	CHECK(po_stats_histogram_axis(&histogram, 60, 5, 5) && histogram.low <= 5 &&
	      histogram.high > 5);
	CHECK(!po_stats_histogram_axis(&histogram, 60, INFINITY, -INFINITY));
	CHECK(!po_stats_histogram_axis(&histogram, 60, NAN, 1));
	CHECK(!po_stats_histogram_axis(&histogram, PO_STATS_HISTOGRAM_MAX_BINS + 1, 0, 1));
}

/*
 * A run 30% slower while other programs took 0.83 of the 2 cores, against a baseline
 * recorded while they took 0.05: the change is inconclusive, not significant, and a gate on
 * it is neither true nor false. Under the same load it is significant; a gate on the new
 * value alone still trips; a repeat under different load stays noise.
 */
static void test_load_difference(void)
{
	char dir[] = "/tmp/profopt-compare-load.XXXXXX";
	char base[256], busy[256], busy_base[256], same_busy[256], plain[256];
	struct po_arena *arena = po_arena_create();
	struct po_comparison *c;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(base, sizeof(base), "%s/base.json", dir);
	snprintf(busy, sizeof(busy), "%s/busy.json", dir);
	snprintf(busy_base, sizeof(busy_base), "%s/busy-base.json", dir);
	snprintf(same_busy, sizeof(same_busy), "%s/same-busy.json", dir);
	snprintf(plain, sizeof(plain), "%s/plain.json", dir);
	write_summary_load(base, 10.0, 200, "input-bound", 0.05);
	write_summary_load(busy, 13.0, 200, "input-bound", 0.83);
	write_summary_load(busy_base, 10.0, 200, "input-bound", 0.70);
	write_summary_load(same_busy, 10.05, 200, "input-bound", 0.83);
	write_summary(plain, 13.0, 200, "input-bound");

	c = compare_files(arena, base, busy);
	CHECK(c && c->load.known && c->load.differs && c->load.note);
	CHECK(metric(c, "steps.p50_ms")->judgement == PO_CHANGE_INCONCLUSIVE);
	CHECK(metric(c, "steps.steps_per_s")->judgement == PO_CHANGE_INCONCLUSIVE);
	CHECK(gate_outcome(c, "steps.p50_ms>+10%") == PO_GATE_INCONCLUSIVE);
	CHECK(gate_outcome(c, "steps.p50_ms<-10%") == PO_GATE_FALSE);
	CHECK(gate_outcome(c, "steps.p50_ms>12") == PO_GATE_TRUE);
	CHECK(c->load.note && strstr(c->load.note, "0.83 of the 2 cores") &&
	      strstr(c->load.note, "0.05"));

	c = compare_files(arena, busy_base, busy); /* 0.70 -> 0.83: the same load */
	CHECK(c && c->load.known && !c->load.differs && !c->load.note);
	CHECK(metric(c, "steps.p50_ms")->judgement == PO_CHANGE_SIGNIFICANT);
	CHECK(gate_outcome(c, "steps.p50_ms>+10%") == PO_GATE_TRUE);

	c = compare_files(arena, base, same_busy);
	CHECK(c && c->load.differs);
	CHECK(metric(c, "steps.p50_ms")->judgement == PO_CHANGE_NOISE);
	CHECK(gate_outcome(c, "steps.p50_ms>+10%") == PO_GATE_FALSE);

	c = compare_files(arena, base, plain); /* no machine member: judged as before */
	CHECK(c && !c->load.known && !c->load.differs);
	CHECK(metric(c, "steps.p50_ms")->judgement == PO_CHANGE_SIGNIFICANT);

	/* Both saturated (1.5 of 2 cores used by others in both), but the recorded process
	 * waited 20 ms per 1000 ms of CPU in one and 900 ms in the other: the stretch of its
	 * CPU work tells, not the cores others used. */
	write_summary_runq(base, 10.0, 200, "input-bound", 1.5, 20);
	write_summary_runq(busy, 13.0, 200, "input-bound", 1.5, 900);
	c = compare_files(arena, base, busy);
	CHECK(c && c->load.by_stretch && c->load.differs);
	CHECK_NEAR(c->load.new_stretch, 1.9, 1e-9);
	CHECK(metric(c, "steps.p50_ms")->judgement == PO_CHANGE_INCONCLUSIVE);
	CHECK(c->load.note && strstr(c->load.note, "90%") && strstr(c->load.note, "2%"));
	write_summary_runq(busy, 13.0, 200, "input-bound", 0.05, 60); /* 1.02 -> 1.06 */
	c = compare_files(arena, base, busy);
	CHECK(c && c->load.by_stretch && !c->load.differs);
	CHECK(metric(c, "steps.p50_ms")->judgement == PO_CHANGE_SIGNIFICANT);

	unlink(base);
	unlink(busy);
	unlink(busy_base);
	unlink(same_busy);
	unlink(plain);
	rmdir(dir);
	po_arena_destroy(arena);
}

int main(void)
{
	RUN(test_json_reader);
	RUN(test_statistics);
	RUN(test_bootstrap_large_samples);
	RUN(test_ranks_and_fits);
	RUN(test_histograms);
	RUN(test_comparisons_and_gates);
	RUN(test_load_difference);
	return CHECK_SUMMARY();
}
