/*
 * test_window.c: the numbers of a live window from synthetic analyses: which steps are
 * in the window, shares with the offline definitions, rates and medians, the run's first
 * steady window, memory slopes and projections, silent workers, and the run's ending.
 */
#define _GNU_SOURCE
#include <math.h>
#include <string.h>

#include "check.h"
#include "synth.h"
#include "window.h"

#define STEPS 1000

/* 1000 steps of 10 ms: 2 ms data wait, 8 ms forward; the run lasts 10 s. */
static struct po_analysis *ten_second_run(void)
{
	struct synth_breakdown breakdown = {{0}};
	struct po_analysis *analysis;

	breakdown.ms[PO_CAT_DATA_WAIT] = 2;
	breakdown.ms[PO_CAT_FORWARD] = 8;
	analysis = synth_create(STEPS, &breakdown, 0);
	analysis->ending = PO_RUN_NO_RUN_END; /* still running */
	return analysis;
}

/* Two doubles that are the same number, or both NaN. */
static bool same(double a, double b)
{
	return (isnan(a) && isnan(b)) || a == b;
}

/*
 * The window of an analysis of every step, as a test builds it; checked against the same
 * window computed as the view computes it, from an analysis whose range is the window's
 * steps (a snapshot's, po_model_snapshot) and a tally of the run: every figure the same.
 */
static struct po_live_window compute(const struct po_analysis *analysis,
				     const struct po_rules *rules, int64_t now_ns)
{
	struct po_live_tally tally;
	struct po_live_window_config config = {.rules = rules,
					       .tally = &tally,
					       .now_ns = now_ns,
					       .host_limit_bytes = -1,
					       .gpu_limit_bytes = -1,
					       .events = 12345};
	struct po_live_window window, ranged;
	struct po_error err = {{0}};
	struct po_analysis *view = (struct po_analysis *)analysis;
	size_t first = 0;

	po_live_tally_init(&tally);
	for (size_t i = 0; i < analysis->step_count; i++) {
		struct po_step step = po_analysis_step(analysis, i);

		CHECK(po_live_tally_add(&tally, &step));
	}
	CHECK_INT_EQ(po_live_window_compute(analysis, &config, &window, &err), PO_STATUS_OK);

	while (first < analysis->step_count &&
	       po_analysis_step(analysis, first).end_ns <= window.begin_ns)
		first++;
	view->step_first = first;
	CHECK_INT_EQ(po_live_window_compute(view, &config, &ranged, &err), PO_STATUS_OK);
	view->step_first = 0;
	CHECK_INT_EQ(ranged.window_steps, window.window_steps);
	CHECK_INT_EQ(ranged.steps, window.steps);
	CHECK(same(ranged.step_rate, window.step_rate));
	CHECK(same(ranged.step_rate_all, window.step_rate_all));
	CHECK(same(ranged.p50_ms, window.p50_ms));
	CHECK(same(ranged.p50_all_ms, window.p50_all_ms));
	CHECK(same(ranged.baseline_p50_ms, window.baseline_p50_ms));
	CHECK_INT_EQ(ranged.baseline_end_ns, window.baseline_end_ns);
	for (int c = 0; c < PO_CATEGORY_COUNT; c++)
		CHECK(same(ranged.category_pct[c], window.category_pct[c]));
	CHECK(same(ranged.data_wait_pct, window.data_wait_pct));
	CHECK(same(ranged.waiting_steps_pct, window.waiting_steps_pct));
	CHECK(same(ranged.gpu_busy_pct, window.gpu_busy_pct));
	CHECK(same(ranged.host_slope_bps, window.host_slope_bps));
	CHECK(same(ranged.gpu_slope_bps, window.gpu_slope_bps));
	CHECK_INT_EQ(ranged.host_bytes, window.host_bytes);

	/* A tally that holds the baseline gives it without reading the run's first steps. */
	po_live_tally_keep(&tally, &window);
	if (window.baseline_final) {
		CHECK_INT_EQ(po_live_window_compute(view, &config, &ranged, &err), PO_STATUS_OK);
		CHECK(same(ranged.baseline_p50_ms, window.baseline_p50_ms));
		CHECK_INT_EQ(ranged.baseline_end_ns, window.baseline_end_ns);
	}
	po_live_tally_fini(&tally);
	return window;
}

static int64_t step_end(const struct po_analysis *analysis, size_t i)
{
	return po_analysis_step(analysis, i).end_ns;
}

static void test_steps_and_shares(void)
{
	struct po_analysis *analysis = ten_second_run();
	struct po_rules rules;
	struct po_live_window window;
	int64_t now = step_end(analysis, STEPS - 1);

	po_rules_init(&rules);
	CHECK(po_rules_set(&rules, "live.window_s=2", &(struct po_error){{0}}) == PO_STATUS_OK);
	window = compute(analysis, &rules, now);
	CHECK_INT_EQ(window.now_ns, now);
	CHECK_INT_EQ(window.begin_ns, now - 2000000000LL);
	CHECK_INT_EQ(window.steps, STEPS);
	CHECK_INT_EQ(window.window_steps, 200); /* the last 2 s of 10 ms steps */
	CHECK_NEAR(window.step_rate, 100, 1e-6);
	CHECK_NEAR(window.step_rate_all, 100, 1e-6);
	CHECK_NEAR(window.p50_ms, 10, 1e-9);
	CHECK_NEAR(window.p50_all_ms, 10, 1e-9);
	CHECK_NEAR(window.elapsed_s, 10, 1e-9);
	CHECK_NEAR(window.category_pct[PO_CAT_DATA_WAIT], 20, 1e-9);
	CHECK_NEAR(window.category_pct[PO_CAT_FORWARD], 80, 1e-9);
	CHECK_NEAR(window.data_wait_pct, 20, 1e-9);
	CHECK_NEAR(window.waiting_steps_pct, 100, 1e-9); /* 20% > half of the 5% warning */
	CHECK_INT_EQ(window.events, 12345);
	CHECK(!window.has_gpu && isnan(window.gpu_busy_pct));
	CHECK(isnan(window.workers_busy_pct));
	CHECK_INT_EQ(window.silent_worker_pid, -1);
	CHECK(!window.ended);
	CHECK_STR_EQ(window.ending, "");
	CHECK_STR_EQ(window.verdict, "unknown");
	synth_destroy(analysis);
}

/*
 * Where the detectors counted the hand-off as input time (saturated cores held by the
 * workers), the window's data wait counts it too: the offline steady input wait of the
 * same steps, one definition.
 */
static void test_handoff_counted_as_input(void)
{
	struct synth_breakdown breakdown = {{0}};
	struct po_analysis *analysis;
	struct po_rules rules;
	struct po_live_window window;
	int64_t now;

	breakdown.ms[PO_CAT_DATA_WAIT] = 0.2;
	breakdown.ms[PO_CAT_HANDOFF] = 0.8;
	breakdown.ms[PO_CAT_FORWARD] = 9;
	analysis = synth_create(STEPS, &breakdown, 0);
	analysis->ending = PO_RUN_NO_RUN_END;
	now = step_end(analysis, STEPS - 1);
	po_rules_init(&rules);
	window = compute(analysis, &rules, now);
	CHECK(!window.handoff_is_input);
	CHECK_NEAR(window.data_wait_pct, 2, 1e-9);
	CHECK_NEAR(window.waiting_steps_pct, 0, 1e-9); /* 2% < half of the 5% warning */

	analysis->diagnosis.steady.handoff_is_input = true;
	window = compute(analysis, &rules, now);
	CHECK(window.handoff_is_input);
	CHECK_NEAR(window.data_wait_pct, 10, 1e-9);
	CHECK_NEAR(window.waiting_steps_pct, 100, 1e-9);
	synth_destroy(analysis);
}

/* A window that starts before the first step covers only the time since. */
static void test_early_window(void)
{
	struct po_analysis *analysis = ten_second_run();
	struct po_rules rules;
	struct po_live_window window;

	po_rules_init(&rules);					    /* live.window_s = 10 */
	window = compute(analysis, &rules, step_end(analysis, 99)); /* 1 s into the run */
	CHECK_INT_EQ(window.window_steps, 99); /* the first step is the epoch's start-up */
	CHECK_NEAR(window.elapsed_s, 1, 1e-9);
	CHECK_NEAR(window.step_rate, 100, 1e-6);
	synth_destroy(analysis);
}

/* Start-up steps of each epoch and lossy steps are in the rate, not in the shares. */
static void test_steady_steps_only(void)
{
	struct po_analysis *analysis = ten_second_run();
	struct po_rules rules;
	struct po_live_window window;

	for (size_t i = 500; i < STEPS; i++)
		SYNTH_STEP(analysis, i).epoch = 1;
	/* the epoch's first step waits 100 ms for its batch; a lossy step 50 ms */
	SYNTH_STEP(analysis, 500).category_ns[PO_CAT_DATA_WAIT] = 100 * SYNTH_MS;
	SYNTH_STEP(analysis, 700).category_ns[PO_CAT_DATA_WAIT] = 50 * SYNTH_MS;
	SYNTH_STEP(analysis, 700).flags = PO_STEP_LOSSY;
	synth_relayout(analysis);
	po_rules_init(&rules);
	CHECK(po_rules_set(&rules, "live.window_s=20", &(struct po_error){{0}}) == PO_STATUS_OK);
	window = compute(analysis, &rules, step_end(analysis, STEPS - 1));
	CHECK_INT_EQ(window.window_steps, STEPS - 3); /* the two start-ups and the lossy one */
	CHECK_NEAR(window.data_wait_pct, 20, 1e-9);
	CHECK_NEAR(window.p50_ms, 10, 1e-9);
	synth_destroy(analysis);
}

/* The data wait changes at step 600: the window sees the new share, the run a mix. */
static void test_change_shows_in_window(void)
{
	struct po_analysis *analysis = ten_second_run();
	struct po_rules rules;
	struct po_live_window window;

	for (size_t i = 600; i < STEPS; i++) {
		SYNTH_STEP(analysis, i).category_ns[PO_CAT_DATA_WAIT] = 0;
		SYNTH_STEP(analysis, i).category_ns[PO_CAT_FORWARD] = 10 * SYNTH_MS;
	}
	synth_relayout(analysis);
	po_rules_init(&rules);
	CHECK(po_rules_set(&rules, "live.window_s=1", &(struct po_error){{0}}) == PO_STATUS_OK);
	window = compute(analysis, &rules, step_end(analysis, STEPS - 1));
	CHECK_NEAR(window.data_wait_pct, 0, 1e-9);
	CHECK_NEAR(window.waiting_steps_pct, 0, 1e-9);
	window = compute(analysis, &rules, step_end(analysis, 599));
	CHECK_NEAR(window.data_wait_pct, 20, 1e-9);
	synth_destroy(analysis);
}

/*
 * The baseline: the window_s seconds after the start-up steps (one here, no workers),
 * known once that much of the run has passed; steps slower later leave it as it was.
 */
static void test_baseline(void)
{
	struct po_analysis *analysis = ten_second_run();
	struct po_rules rules;
	struct po_live_window window;
	int64_t baseline_end;

	for (size_t i = 500; i < STEPS; i++)
		SYNTH_STEP(analysis, i).category_ns[PO_CAT_FORWARD] = 18 * SYNTH_MS; /* 20 ms */
	synth_relayout(analysis);
	po_rules_init(&rules);
	CHECK(po_rules_set(&rules, "live.window_s=2", &(struct po_error){{0}}) == PO_STATUS_OK);
	baseline_end = step_end(analysis, 0) + 2000000000LL;
	window = compute(analysis, &rules, step_end(analysis, 100));
	CHECK(isnan(window.baseline_p50_ms)); /* 1 s passed: too early */
	CHECK_INT_EQ(window.baseline_end_ns, -1);
	window = compute(analysis, &rules, step_end(analysis, STEPS - 1));
	CHECK_NEAR(window.baseline_p50_ms, 10, 1e-9);
	CHECK_INT_EQ(window.baseline_end_ns, baseline_end);
	CHECK_NEAR(window.p50_ms, 20, 1e-9);
	synth_destroy(analysis);
}

/* Host memory growing 1 MiB per step of 10 ms: 100 MiB/s, and the time to a limit. */
static void test_memory_slope(void)
{
	struct po_analysis *analysis = ten_second_run();
	struct po_live_tally tally;
	struct po_live_window_config config;
	struct po_live_window window;
	struct po_rules rules;
	struct po_error err = {{0}};
	int64_t last;

	for (size_t i = 0; i < STEPS; i++)
		SYNTH_STEP(analysis, i).rss_bytes = (int64_t)(i + 100) * SYNTH_MIB;
	po_rules_init(&rules);
	po_live_tally_init(&tally); /* the figures since the first step are not checked here */
	config = (struct po_live_window_config){.rules = &rules,
						.tally = &tally,
						.host_limit_bytes = 2000 * SYNTH_MIB,
						.gpu_limit_bytes = -1};
	config.now_ns = step_end(analysis, STEPS - 1);
	CHECK_INT_EQ(po_live_window_compute(analysis, &config, &window, &err), PO_STATUS_OK);
	last = (int64_t)(STEPS - 1 + 100) * SYNTH_MIB;
	CHECK_INT_EQ(window.host_bytes, last);
	CHECK_NEAR(window.host_slope_bps, 100.0 * SYNTH_MIB, 1e-3 * SYNTH_MIB);
	CHECK_NEAR(window.host_oom_s, (double)(2000 * SYNTH_MIB - last) / (100.0 * SYNTH_MIB),
		   1e-3);
	CHECK_INT_EQ(window.gpu_bytes, -1);
	CHECK(isnan(window.gpu_slope_bps) && isnan(window.gpu_oom_s));
	/* flat memory: no projection */
	for (size_t i = 0; i < STEPS; i++)
		SYNTH_STEP(analysis, i).rss_bytes = 500 * SYNTH_MIB;
	CHECK_INT_EQ(po_live_window_compute(analysis, &config, &window, &err), PO_STATUS_OK);
	CHECK_NEAR(window.host_slope_bps, 0, 1e-6);
	CHECK(isnan(window.host_oom_s));
	synth_destroy(analysis);
}

/* A worker that went quiet at 3 s while the other went on to the end is silent. */
static void test_silent_worker(void)
{
	struct po_analysis *analysis = ten_second_run();
	struct synth_loader loader = {{1, 1, 1}, {-1, -1, -1}, {"a", "b", "c"}};
	struct po_rules rules;
	struct po_live_window window;
	int64_t now;

	synth_workers(analysis, 2, &loader, 50);
	now = step_end(analysis, STEPS - 1);
	po_rules_init(&rules);
	window = compute(analysis, &rules, now);
	CHECK_INT_EQ(window.workers_seen, 2);
	CHECK_INT_EQ(window.workers_alive, 2);
	CHECK_NEAR(window.workers_busy_pct, 50, 1e-6);
	CHECK_INT_EQ(window.silent_worker_pid, -1);

	CHECK(po_rules_set(&rules, "live.window_s=2", &(struct po_error){{0}}) == PO_STATUS_OK);
	analysis->workers[1].last_ns = step_end(analysis, 299);
	window = compute(analysis, &rules, now);
	CHECK_INT_EQ(window.workers_alive, 1);
	CHECK_INT_EQ(window.silent_worker_pid, analysis->workers[1].pid);
	CHECK_NEAR(window.silent_worker_s, 7, 1e-6);

	/* both ended together (an epoch's end): neither is silent */
	analysis->workers[0].last_ns = step_end(analysis, 299);
	window = compute(analysis, &rules, now);
	CHECK_INT_EQ(window.workers_alive, 0);
	CHECK_INT_EQ(window.silent_worker_pid, -1);
	synth_destroy(analysis);
}

static void test_gpu_and_ending(void)
{
	struct po_analysis *analysis = ten_second_run();
	struct po_rules rules;
	struct po_live_window window;

	synth_gpu(analysis, 6); /* 6 ms of every 10 ms step */
	analysis->ending = PO_RUN_CLEAN;
	analysis->diagnosis.verdict = PO_VERDICT_INPUT_BOUND;
	analysis->diagnosis.verdict_reason = "slow \"loading\"";
	analysis->quality.discarded_events = 7;
	analysis->quality.window_count = 1;
	po_rules_init(&rules);
	window = compute(analysis, &rules, step_end(analysis, STEPS - 1));
	CHECK(window.has_gpu);
	CHECK_NEAR(window.gpu_busy_pct, 60, 1e-6);
	CHECK(window.ended);
	CHECK_STR_EQ(window.ending, "clean");
	CHECK_STR_EQ(window.verdict, "input-bound");
	CHECK_STR_EQ(window.verdict_reason, "slow \"loading\"");
	CHECK_INT_EQ(window.discarded_events, 7);
	CHECK_INT_EQ(window.discard_windows, 1);
	/* a run still going has no ending yet */
	analysis->ending = PO_RUN_NO_RUN_END;
	window = compute(analysis, &rules, step_end(analysis, STEPS - 1));
	CHECK(!window.ended);
	synth_destroy(analysis);
}

/* No step yet: nothing to show but the counts. */
static void test_no_steps(void)
{
	struct synth_breakdown breakdown = {{0}};
	struct po_analysis *analysis = synth_create(0, &breakdown, 0);
	struct po_rules rules;
	struct po_live_window window;

	po_rules_init(&rules);
	window = compute(analysis, &rules, 5000000000LL);
	CHECK_INT_EQ(window.steps, 0);
	CHECK_INT_EQ(window.window_steps, 0);
	CHECK(isnan(window.step_rate) && isnan(window.p50_ms) && isnan(window.data_wait_pct));
	CHECK(isnan(window.waiting_steps_pct) && isnan(window.baseline_p50_ms));
	CHECK_NEAR(window.elapsed_s, 0, 0);
	synth_destroy(analysis);
}

int main(void)
{
	RUN(test_steps_and_shares);
	RUN(test_handoff_counted_as_input);
	RUN(test_early_window);
	RUN(test_steady_steps_only);
	RUN(test_change_shows_in_window);
	RUN(test_baseline);
	RUN(test_memory_slope);
	RUN(test_silent_worker);
	RUN(test_gpu_and_ending);
	RUN(test_no_steps);
	return CHECK_SUMMARY();
}
