/*
 * test_loader.c: the loader-handoff and worker-restart detectors on synthetic analyses. The
 * hand-off is a finding of its own and never makes the run input-bound; workers that start
 * again every epoch give worker-restart with the run-level prediction of docs/rules.md, and
 * persistent workers or a single restart give none; the steady steps exclude the same
 * start-up steps per epoch however many epochs started new workers.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "synth.h"
#include "whatif.h"

static struct po_rules rules;

static void run_detect(struct po_analysis *analysis)
{
	struct po_error err = {{0}};

	CHECK_INT_EQ(po_detect_run(analysis, &rules, &err), PO_STATUS_OK);
}

/* A compute-bound loop: 20 ms of forward and backward, 2.5 ms of hand-off, no data wait. */
static const struct synth_breakdown handoff_loop = {.ms = {[PO_CAT_FORWARD] = 8,
							   [PO_CAT_BACKWARD] = 12,
							   [PO_CAT_HANDOFF] = 2.5,
							   [PO_CAT_DATA_WAIT] = 0.05,
							   [PO_CAT_OTHER] = 0.45}};
static const struct synth_loader idle_loader = {
    {1, 1, 0.5}, {0.5, 1, 0.5}, {"read_file", "augment", "stack"}};

static void test_handoff_not_input_bound(void)
{
	struct po_analysis *analysis = synth_create(200, &handoff_loop, 2);
	const struct po_finding *finding;

	synth_config(analysis, "num_workers", "2");
	synth_config(analysis, "persistent_workers", "true");
	synth_workers(analysis, 2, &idle_loader, 10);
	run_detect(analysis);
	finding = synth_finding(analysis, PO_FINDING_LOADER_HANDOFF);
	CHECK(finding != NULL);
	if (finding) {
		CHECK_INT_EQ(finding->severity, PO_SEVERITY_WARNING);
		CHECK_NEAR(synth_number(finding, "handoff_ms_per_step"), 2.5, 0.05);
		CHECK_NEAR(synth_number(finding, "handoff_share_pct"), 10.9, 0.3);
		CHECK(synth_rec(finding, "sharing_strategy") != NULL);
		CHECK(synth_rec(finding, "batch_layout") != NULL);
		CHECK(synth_rec(finding, "pin_memory") == NULL);
	}
	CHECK(synth_finding(analysis, PO_FINDING_INPUT_BOUND) == NULL);
	CHECK(analysis->diagnosis.verdict != PO_VERDICT_INPUT_BOUND);
	synth_destroy(analysis);
}

static void test_handoff_pinning_on_cpu(void)
{
	struct po_analysis *analysis = synth_create(200, &handoff_loop, 2);
	const struct po_finding *finding;

	synth_config(analysis, "num_workers", "2");
	synth_config(analysis, "pin_memory", "true");
	synth_config(analysis, "device", "cpu");
	synth_workers(analysis, 2, &idle_loader, 10);
	run_detect(analysis);
	finding = synth_finding(analysis, PO_FINDING_LOADER_HANDOFF);
	CHECK(finding != NULL && synth_rec(finding, "pin_memory") != NULL);
	synth_destroy(analysis);
}

static void test_small_handoff_silent(void)
{
	static const struct synth_breakdown small = {.ms = {[PO_CAT_FORWARD] = 8,
							    [PO_CAT_BACKWARD] = 12,
							    [PO_CAT_HANDOFF] = 1,
							    [PO_CAT_OTHER] = 1}};
	struct po_analysis *analysis = synth_create(200, &small, 2);

	synth_config(analysis, "num_workers", "2");
	synth_workers(analysis, 2, &idle_loader, 10);
	run_detect(analysis);
	CHECK(synth_finding(analysis, PO_FINDING_LOADER_HANDOFF) == NULL);
	synth_destroy(analysis);
}

/*
 * epochs of 20 steps of 10 ms; each epoch after the first starts with new workers whose first
 * batch is ready restart_ms after the previous epoch ended, plus its 2.5 ms of loading.
 */
static struct po_analysis *restarting_run(int epochs, double restart_ms, int generations)
{
	static const struct synth_breakdown step = {.ms = {[PO_CAT_FORWARD] = 4,
							   [PO_CAT_BACKWARD] = 5,
							   [PO_CAT_DATA_WAIT] = 0.2,
							   [PO_CAT_OTHER] = 0.8}};
	struct po_analysis *analysis = synth_create((size_t)epochs * 20, &step, 0);

	for (size_t i = 0; i < analysis->step_count; i++) {
		struct po_step *edit = po_analysis_edit_step(analysis, i);

		edit->epoch = (int64_t)i / 20;
		edit->worker_pid = 200 + (int32_t)(i % 2);
		if (i % 20 == 0 && i > 0)
			edit->category_ns[PO_CAT_DATA_WAIT] += (int64_t)(restart_ms * SYNTH_MS);
	}
	synth_relayout(analysis);
	for (size_t i = 0; i < analysis->step_count; i++) {
		struct po_step *edit = po_analysis_edit_step(analysis, i);

		edit->ready_ns =
		    edit->begin_ns + edit->category_ns[PO_CAT_DATA_WAIT] - SYNTH_MS / 2;
	}
	synth_config(analysis, "num_workers", "2");
	synth_workers(analysis, 2, &idle_loader, 20);
	analysis->concurrent_workers = 2;
	analysis->worker_generations = generations;
	return analysis;
}

static void test_worker_restart(void)
{
	struct po_analysis *analysis = restarting_run(10, 50, 10);
	const struct po_finding *finding;
	const struct po_recommendation *rec;
	/*
	 * 200 steps of 10 ms and 9 restarts of 50 ms: 2450 ms. Each restart: the batch was ready
	 * 50 + 0.2 - 0.5 ms after the epoch's start, 2.5 ms of it spent loading it.
	 */
	double lost_ms = 9 * (50 + 0.2 - 0.5 - 2.5);

	synth_config(analysis, "persistent_workers", "false");
	run_detect(analysis);
	finding = synth_finding(analysis, PO_FINDING_WORKER_RESTART);
	CHECK(finding != NULL);
	if (finding) {
		CHECK_NEAR(synth_number(finding, "epochs_restarted"), 9, 0);
		CHECK_NEAR(synth_number(finding, "lost_ms"), lost_ms, 0.01);
		CHECK_NEAR(synth_number(finding, "run_step_ms"), 2450.0 / 200, 0.01);
		rec = synth_rec(finding, "persistent_workers");
		CHECK(rec != NULL);
		if (rec) {
			CHECK_NEAR(rec->predicted_step_ms, (2450.0 - lost_ms) / 200, 0.01);
			CHECK(rec->predicted_speedup > 1 && rec->predicted_speedup < 1.3);
		}
	}
	/* Restarts are start-up, not steady input time: the loop is not input-bound. */
	CHECK(synth_finding(analysis, PO_FINDING_INPUT_BOUND) == NULL);
	synth_destroy(analysis);
}

static void test_persistent_or_single_restart_silent(void)
{
	struct po_analysis *analysis = restarting_run(10, 50, 1);

	synth_config(analysis, "persistent_workers", "true");
	run_detect(analysis);
	CHECK(synth_finding(analysis, PO_FINDING_WORKER_RESTART) == NULL);
	synth_destroy(analysis);
	analysis = restarting_run(2, 50, 2);
	run_detect(analysis);
	CHECK(synth_finding(analysis, PO_FINDING_WORKER_RESTART) == NULL);
	synth_destroy(analysis);
}

/* Every generation of 2 workers is one set alive at once, not 2 x generations workers. */
static void test_live_workers_not_generations(void)
{
	struct po_analysis *analysis = restarting_run(10, 50, 10);
	const struct po_finding *finding;

	synth_config(analysis, "persistent_workers", "false");
	run_detect(analysis);
	finding = synth_finding(analysis, PO_FINDING_LOADER_HANDOFF);
	CHECK(finding == NULL);
	finding = synth_finding(analysis, PO_FINDING_WORKER_RESTART);
	CHECK(finding != NULL && synth_number(finding, "num_workers") == 2);
	synth_destroy(analysis);
}

/*
 * Only the data wait is marked (a loop with its own loader, no stage spans): the loop waits,
 * but nothing says why, so no stage is blamed and no num_workers is predicted from a batch
 * assumed to cost nothing; the advice is to record the loader.
 */
static void test_untraced_loader(void)
{
	static const struct synth_breakdown waits = {
	    .ms = {[PO_CAT_FORWARD] = 10, [PO_CAT_DATA_WAIT] = 10}};
	struct po_analysis *analysis = synth_create(100, &waits, 2);
	const struct po_finding *finding;

	synth_config(analysis, "num_workers", "2");
	run_detect(analysis);
	finding = synth_finding(analysis, PO_FINDING_INPUT_BOUND);
	CHECK(finding != NULL);
	if (finding) {
		CHECK_STR_EQ(synth_text(finding, "cause"), "loader-not-traced");
		CHECK(strstr(finding->summary, "slowest loading stage") == NULL);
		CHECK(synth_rec(finding, "num_workers") == NULL);
		CHECK(synth_rec(finding, "instrumentation") != NULL);
	}
	synth_destroy(analysis);
}

/*
 * The same loop with no run configuration and no worker in the trace: nothing says the
 * loader runs on the training thread either, so the cause is still loader-not-traced, and
 * no step time is predicted from a batch that seems to take 0 ms to make.
 */
static void test_untraced_loader_no_config(void)
{
	static const struct synth_breakdown waits = {
	    .ms = {[PO_CAT_FORWARD] = 10, [PO_CAT_DATA_WAIT] = 10}};
	struct po_analysis *analysis = synth_create(100, &waits, 2);
	const struct po_finding *finding;

	run_detect(analysis);
	finding = synth_finding(analysis, PO_FINDING_INPUT_BOUND);
	CHECK(finding != NULL);
	if (finding) {
		CHECK_STR_EQ(synth_text(finding, "cause"), "loader-not-traced");
		CHECK(strstr(finding->summary, "training thread itself") == NULL);
		CHECK(isnan(synth_number(finding, "model_step_ms")));
		CHECK(synth_rec(finding, "num_workers") == NULL);
		for (size_t i = 0; i < finding->recommendation_count; i++)
			CHECK(isnan(finding->recommendations[i].predicted_step_ms));
	}
	synth_destroy(analysis);
}

/* The queue model replays batch times: steady ones, bursts, one slow worker. */
static void test_queue_model(void)
{
	double services[400];
	struct det_queue queue = {.service_ns = services, .batch_count = 400, .main_ns = 15e6};

	for (size_t i = 0; i < 400; i++)
		services[i] = 10e6;
	/* Two workers make a batch every 5 ms: the loop's own 15 ms set the step. */
	CHECK_NEAR(det_queue_step_ns(&queue, 2, 1) / 1e6, 15, 0.01);
	/* A 50 ms batch every 5th: one in flight per worker stalls the loop, two do not. */
	for (size_t i = 0; i < 400; i++)
		services[i] = i % 5 == 0 ? 50e6 : 4e6;
	CHECK_NEAR(det_queue_step_ns(&queue, 2, 1) / 1e6, 19, 0.1);
	CHECK_NEAR(det_queue_step_ns(&queue, 2, 2) / 1e6, 15, 0.01);
	/* Worker 1 takes 80 ms a batch, worker 0 16 ms: it paces the loop at 40 ms a step. */
	for (size_t i = 0; i < 400; i++)
		services[i] = i % 2 ? 80e6 : 16e6;
	CHECK_NEAR(det_queue_step_ns(&queue, 2, 2) / 1e6, 40, 0.1);
	CHECK(isnan(det_queue_step_ns(&queue, 0, 2)));
}

/* Worker 1 of 2 five times slower than worker 0: loader-imbalance names it. */
static void test_loader_imbalance(void)
{
	static const struct synth_breakdown waits = {
	    .ms = {[PO_CAT_FORWARD] = 15, [PO_CAT_DATA_WAIT] = 25}};
	static const struct synth_loader loader = {
	    .wall_ms = {16, 0, 0}, .cpu_ms = {-1, -1, -1}, .labels = {"shard", NULL, NULL}};
	struct po_analysis *analysis = synth_create(200, &waits, 0);
	const struct po_finding *finding;

	synth_config(analysis, "num_workers", "2");
	synth_workers(analysis, 2, &loader, 90);
	analysis->workers[1].stage_ns[PO_STAGE_LOAD] *= 5;
	for (size_t i = 1; i < 200; i += 2)
		SYNTH_STEP(analysis, i).load_ns = 80 * SYNTH_MS;
	run_detect(analysis);
	finding = synth_finding(analysis, PO_FINDING_LOADER_IMBALANCE);
	CHECK(finding != NULL);
	if (finding) {
		CHECK_INT_EQ(synth_evidence(finding, "slow_worker_id")->integer, 1);
		CHECK_STR_EQ(synth_text(finding, "stage"), "load");
		CHECK_STR_EQ(synth_text(finding, "label"), "shard");
		CHECK_NEAR(synth_number(finding, "slow_ms_per_batch"), 80, 0.01);
		CHECK_NEAR(synth_number(finding, "others_ms_per_batch"), 16, 0.01);
		/* The queue model's 40 ms now, 15 balanced: the measured 40 ms becomes 15. */
		CHECK_NEAR(synth_number(finding, "predicted_step_ms"), 15, 0.1);
		CHECK_NEAR(synth_number(finding, "lost_ms_per_step"), 25, 0.1);
		CHECK(synth_rec(finding, "loader_balance") != NULL);
	}
	synth_destroy(analysis);
}

/* Workers within loader-imbalance.ratio of each other: silent. */
static void test_balanced_loader_silent(void)
{
	static const struct synth_breakdown waits = {
	    .ms = {[PO_CAT_FORWARD] = 15, [PO_CAT_DATA_WAIT] = 25}};
	static const struct synth_loader loader = {
	    .wall_ms = {80, 0, 0}, .cpu_ms = {-1, -1, -1}, .labels = {"shard", NULL, NULL}};
	struct po_analysis *analysis = synth_create(200, &waits, 0);

	synth_config(analysis, "num_workers", "2");
	synth_workers(analysis, 2, &loader, 90);
	run_detect(analysis);
	CHECK(synth_finding(analysis, PO_FINDING_LOADER_IMBALANCE) == NULL);
	synth_destroy(analysis);
}

/*
 * One gate for every recommendation: a predicted slowdown or no change is not listed, on a
 * quiet machine or a busy one; a prediction withheld on a busy machine is listed without it.
 */
static void test_advice_predicts_gain(void)
{
	static const struct synth_breakdown steps = {.ms = {[PO_CAT_FORWARD] = 10}};
	struct po_analysis *analysis = synth_create(10, &steps, 0);
	struct det_ctx ctx = {.analysis = analysis,
			      .rules = &rules,
			      .quality_factor = 1,
			      .steps_factor = 1,
			      .others_cores = NAN};
	struct po_finding *finding =
	    det_finding_add(&ctx, PO_FINDING_INPUT_BOUND, PO_SEVERITY_WARNING, 1);

	CHECK(finding != NULL);
	if (!finding) {
		synth_destroy(analysis);
		return;
	}
	det_recommend(&ctx, finding, PO_KNOB_TRANSFORM, "slower", "", "", 13.9, 0.72);
	det_recommend(&ctx, finding, PO_KNOB_NUM_WORKERS, "keep", "", "", 10, 1.0);
	det_recommend(&ctx, finding, PO_KNOB_PIN_MEMORY, "not predicted", "", "", NAN, NAN);
	det_recommend(&ctx, finding, PO_KNOB_NUM_WORKERS, "faster", "", "", 8, 1.25);
	CHECK_INT_EQ(finding->recommendation_count, 2);
	CHECK_STR_EQ(finding->recommendations[0].action, "not predicted");
	CHECK_STR_EQ(finding->recommendations[1].action, "faster");
	analysis->cpu_count = 2;
	ctx.machine_busy = true;
	ctx.others_cores = 1.4;
	det_recommend_cores(&ctx, finding, PO_KNOB_TRANSFORM, "busy slower", "", "", 13.9, 0.72);
	det_recommend_cores(&ctx, finding, PO_KNOB_NUM_WORKERS, "busy faster", "", "", 8, 1.25);
	CHECK_INT_EQ(finding->recommendation_count, 3);
	CHECK_STR_EQ(finding->recommendations[2].action, "busy faster");
	CHECK(isnan(finding->recommendations[2].predicted_step_ms));
	CHECK(strstr(finding->recommendations[2].effect, "not predicted: other programs") != NULL);
	synth_destroy(analysis);
}

int main(void)
{
	po_rules_init(&rules);
	RUN(test_handoff_not_input_bound);
	RUN(test_handoff_pinning_on_cpu);
	RUN(test_small_handoff_silent);
	RUN(test_worker_restart);
	RUN(test_persistent_or_single_restart_silent);
	RUN(test_live_workers_not_generations);
	RUN(test_untraced_loader);
	RUN(test_untraced_loader_no_config);
	RUN(test_advice_predicts_gain);
	RUN(test_queue_model);
	RUN(test_loader_imbalance);
	RUN(test_balanced_loader_silent);
	return CHECK_SUMMARY();
}
