/* test_stats.c: step statistics (interpolated percentiles, rates) over clean steps. */
#include "builder.h"

enum { MAIN = 100 };

/* Steps back to back, with the given durations in ms; returns the end time. */
static int64_t feed_steps(struct po_model *model, const int *durations_ms, int count,
			  int64_t batch_size)
{
	int64_t t = 0;

	for (int i = 0; i < count; i++) {
		step_begin(model, t, MAIN, MAIN, i);
		stage_begin(model, t, MAIN, MAIN, PO_STAGE_FORWARD, "", -1);
		stage_end(model, t + durations_ms[i] * MS / 2, MAIN, MAIN, PO_STAGE_FORWARD, -1);
		t += durations_ms[i] * MS;
		step_end_sized(model, t, MAIN, MAIN, i, batch_size);
	}
	return t;
}

static void percentiles_ten(void)
{
	static const int durations[] = {7, 3, 10, 1, 5, 9, 2, 8, 4, 6, 100};
	struct po_model *model = model_new(NULL);
	struct po_analysis *analysis;
	const struct po_step_stats *stats;
	int64_t end = feed_steps(model, durations, 11, 32);
	double category_total = 0;

	/* the 100 ms step lost events: it leaves the statistics */
	discard(model, PO_EV_DISCARDED_EVENTS, end, MAIN, 5, end - 50 * MS);
	analysis = model_done(model);
	stats = &analysis->step_stats;
	CHECK_INT_EQ(stats->count, 11);
	CHECK_INT_EQ(stats->clean_count, 10);
	CHECK_INT_EQ(stats->min_ns, 1 * MS);
	CHECK_INT_EQ(stats->max_ns, 10 * MS);
	/* h = q x 9 between the sorted 1..10 ms */
	CHECK_INT_EQ(stats->p50_ns, 5500 * US);
	CHECK_INT_EQ(stats->p90_ns, 9100 * US);
	CHECK_INT_EQ(stats->p95_ns, 9550 * US);
	CHECK_INT_EQ(stats->p99_ns, 9910 * US);
	CHECK_NEAR(stats->mean_ns, 5.5 * MS, 1);
	CHECK_NEAR(stats->steps_per_s, 10 / 0.055, 1e-6);
	CHECK_NEAR(stats->samples_per_s, 320 / 0.055, 1e-6);
	for (int c = 0; c < PO_CATEGORY_COUNT; c++)
		category_total += stats->category_mean_ns[c];
	CHECK_NEAR(category_total, stats->mean_ns, 1e-3);
	CHECK_NEAR(stats->category_mean_ns[PO_CAT_FORWARD], 2.75 * MS, 1);
	po_analysis_destroy(analysis);
}

static void percentiles_hundred(void)
{
	int durations[100];
	struct po_model *model = model_new(NULL);
	struct po_analysis *analysis;

	for (int i = 0; i < 100; i++)
		durations[i] = 100 - i;
	feed_steps(model, durations, 100, -1);
	analysis = model_done(model);
	CHECK_INT_EQ(analysis->step_stats.p50_ns, 50500 * US);
	CHECK_INT_EQ(analysis->step_stats.p90_ns, 90100 * US);
	CHECK_INT_EQ(analysis->step_stats.p95_ns, 95050 * US);
	CHECK_INT_EQ(analysis->step_stats.p99_ns, 99010 * US);
	CHECK_NEAR(analysis->step_stats.samples_per_s, -1, 0);
	CHECK_INT_EQ(po_analysis_step(analysis, 0).index, 0);
	CHECK_INT_EQ(po_analysis_step(analysis, 99).index, 99);
	po_analysis_destroy(analysis);
}

static void run_config(void)
{
	struct po_model *model = model_new(NULL);
	struct po_analysis *analysis;
	struct po_event event = event_at(PO_EV_RUN_BEGIN, 0, MAIN, MAIN);
	static const char *const pairs[][2] = {
	    {"num_workers", "2"}, {"batch_size", "32"}, {"num_workers", "4"}};

	event.u.run_begin.framework = str_of("pytorch");
	event.u.run_begin.cpu_count = 8;
	feed(model, &event);
	for (int i = 0; i < 3; i++) {
		event = event_at(PO_EV_RUN_CONFIG, 1, MAIN, MAIN);
		event.u.run_config.key = str_of(pairs[i][0]);
		event.u.run_config.value = str_of(pairs[i][1]);
		feed(model, &event);
	}
	analysis = model_done(model);
	CHECK_STR_EQ(analysis->framework, "pytorch");
	CHECK_INT_EQ(analysis->cpu_count, 8);
	CHECK_INT_EQ(analysis->config_count, 2);
	CHECK_STR_EQ(analysis->config[0].key, "batch_size");
	CHECK_STR_EQ(analysis->config[1].key, "num_workers");
	CHECK_STR_EQ(analysis->config[1].value, "4");
	CHECK_INT_EQ(analysis->step_count, 0);
	CHECK_INT_EQ(analysis->step_stats.p50_ns, -1);
	po_analysis_destroy(analysis);
}

/* A run ends clean, after an exception or a signal (the run_ending pair), or not at all. */
static struct po_analysis *run_ending_after(const char *said, bool ended)
{
	struct po_model *model = model_new(NULL);
	struct po_event event = event_at(PO_EV_RUN_BEGIN, 0, MAIN, MAIN);

	event.u.run_begin.framework = str_of("pytorch");
	feed(model, &event);
	if (said) {
		event = event_at(PO_EV_RUN_CONFIG, 5, MAIN, MAIN);
		event.u.run_config.key = str_of("run_ending");
		event.u.run_config.value = str_of(said);
		feed(model, &event);
	}
	if (ended) {
		event = event_at(PO_EV_RUN_END, 6, MAIN, MAIN);
		feed(model, &event);
	}
	return model_done(model);
}

static void run_endings(void)
{
	struct po_analysis *analysis = run_ending_after(NULL, true);

	CHECK_INT_EQ(analysis->ending, PO_RUN_CLEAN);
	CHECK(analysis->ending_detail == NULL);
	po_analysis_destroy(analysis);
	analysis = run_ending_after("exception: ValueError", true);
	CHECK_INT_EQ(analysis->ending, PO_RUN_EXCEPTION);
	CHECK_STR_EQ(analysis->ending_detail, "ValueError");
	po_analysis_destroy(analysis);
	analysis = run_ending_after("signal: SIGINT (KeyboardInterrupt)", true);
	CHECK_INT_EQ(analysis->ending, PO_RUN_SIGNAL);
	CHECK_STR_EQ(analysis->ending_detail, "SIGINT (KeyboardInterrupt)");
	po_analysis_destroy(analysis);
	analysis = run_ending_after(NULL, false);
	CHECK_INT_EQ(analysis->ending, PO_RUN_NO_RUN_END);
	po_analysis_destroy(analysis);
}

int main(void)
{
	RUN(percentiles_ten);
	RUN(percentiles_hundred);
	RUN(run_config);
	RUN(run_endings);
	return CHECK_SUMMARY();
}
