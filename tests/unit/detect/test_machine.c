/*
 * test_machine.c: the detectors on a machine other programs share, and the loop's wait for
 * its input as one definition. A compute-bound loop with idle workers that receives ready
 * batches slowly on cores other programs hold is not input-bound, and the trace quality and
 * the verdict say what the others used; busy workers on saturated cores make the hand-off
 * input time, in the finding and in the steady statistics alike; loading on the training
 * thread uses the main thread's measured wait for a core; predictions that depend on the
 * cores are withheld on a busy machine, and a lightly shared one counts with the cores left.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "synth.h"

static struct po_rules rules;

/* A compute-bound loop: 20 ms of forward and backward, 2.5 ms of hand-off, no data wait. */
static const struct synth_breakdown handoff_loop = {.ms = {[PO_CAT_FORWARD] = 8,
							   [PO_CAT_BACKWARD] = 12,
							   [PO_CAT_HANDOFF] = 2.5,
							   [PO_CAT_DATA_WAIT] = 0.05,
							   [PO_CAT_OTHER] = 0.45}};
static const struct synth_loader idle_loader = {
    {1, 1, 0.5}, {0.5, 1, 0.5}, {"read_file", "augment", "stack"}};

static void run_detect(struct po_analysis *analysis)
{
	struct po_error err = {{0}};

	CHECK_INT_EQ(po_detect_run(analysis, &rules, &err), PO_STATUS_OK);
}

static void destroy(struct po_analysis *analysis)
{
	synth_destroy(analysis);
}

/* Other programs used others of the machine's cores while the trace was recorded. */
static void share_machine(struct po_analysis *analysis, double others, double traced)
{
	analysis->machine = (struct po_machine_load){.known = true,
						     .pid = analysis->main_pid,
						     .series = 1,
						     .first_ns = 0,
						     .last_ns = 10000 * SYNTH_MS,
						     .busy_cores = others + traced,
						     .traced_cores = traced,
						     .others_cores = others};
}

/*
 * Each worker process waited wait_ms for a core per ms of its CPU time (its schedstat):
 * the workers' CPU counters and run-queue wait, over their life.
 */
static void workers_wait(struct po_analysis *analysis, double cpu_ms, double wait_ms)
{
	for (size_t i = 1; i < analysis->process_count; i++) {
		struct po_process *process = &analysis->processes[i];

		process->cpu_first_ns = 0;
		process->cpu_last_ns = (int64_t)(cpu_ms * SYNTH_MS);
		process->runq_first_ns = 0;
		process->runq_last_ns = (int64_t)(wait_ms * SYNTH_MS);
	}
}

static bool has_warning(const struct po_analysis *analysis, const char *code)
{
	for (size_t i = 0; i < po_analysis_warning_count(analysis); i++)
		if (strcmp(po_analysis_warning(analysis, i)->code, code) == 0)
			return true;
	return false;
}

/*
 * Two workers busy 2% of their time wait for a core (other programs hold 1.4 of 2 cores),
 * so the cores count as saturated; the loop finds every batch ready and takes 2.5 ms to
 * receive it. That is no wait for input: the finding stays silent, the steady input wait
 * is the data wait alone, and the verdict is host-bound with the others' load in its reason.
 */
static void test_busy_machine_idle_workers(void)
{
	struct po_analysis *analysis = synth_create(200, &handoff_loop, 2);
	const char *reason;

	analysis->cpu_count = 2;
	synth_config(analysis, "num_workers", "2");
	synth_workers(analysis, 2, &idle_loader, 2);
	workers_wait(analysis, 100, 400);
	share_machine(analysis, 1.4, 0.6);
	run_detect(analysis);
	CHECK(synth_finding(analysis, PO_FINDING_INPUT_BOUND) == NULL);
	CHECK(!analysis->diagnosis.steady.handoff_is_input);
	CHECK_NEAR(analysis->diagnosis.steady.input_wait_pct, 100 * 0.05 / 23, 0.05);
	CHECK_INT_EQ(analysis->diagnosis.verdict, PO_VERDICT_HOST_BOUND);
	reason = analysis->diagnosis.verdict_reason;
	CHECK(reason && strstr(reason, "other programs used 1.4 of the 2 cores") != NULL);
	CHECK(has_warning(analysis, "busy-machine"));
	destroy(analysis);
}

/*
 * Busy workers on saturated cores: the loop waits for batches the loader is still handing
 * over, so the hand-off is input time, in the finding and in the steady statistics alike.
 */
static void test_busy_workers_handoff_is_input(void)
{
	static const struct synth_loader heavy = {
	    {20, 1, 0.5}, {8, 1, 0.5}, {"decode", "augment", "stack"}};
	struct po_analysis *analysis = synth_create(200, &handoff_loop, 2);
	const struct po_finding *finding;

	analysis->cpu_count = 2;
	synth_config(analysis, "num_workers", "4");
	synth_workers(analysis, 4, &heavy, 95);
	workers_wait(analysis, 1000, 1500);
	run_detect(analysis);
	finding = synth_finding(analysis, PO_FINDING_INPUT_BOUND);
	CHECK(finding != NULL);
	if (finding) {
		CHECK_STR_EQ(synth_text(finding, "cause"), "cpu-saturated");
		CHECK_NEAR(synth_number(finding, "wait_share_pct"),
			   analysis->diagnosis.steady.input_wait_pct, 1e-9);
	}
	CHECK(analysis->diagnosis.steady.handoff_is_input);
	CHECK_NEAR(analysis->diagnosis.steady.input_wait_pct, 100 * 2.55 / 23, 0.05);
	CHECK(!has_warning(analysis, "busy-machine"));
	destroy(analysis);
}

/*
 * One worker whose batch takes 30 ms to make, 1.5 ms of it on CPU and 0.5 ms waiting for a
 * core (its schedstat): the rest is I/O, which needs no core. Other programs hold 1.4 of
 * the 2 cores and the training loop's compute most of the rest, yet the loader is short
 * of workers, not of cores: the cause is too few workers, the loading I/O-like, the
 * hand-off no input time, and the sentence says why more workers help
 * (workload.busy_io_workers measured the same on a real loop).
 */
static void test_busy_machine_io_workers(void)
{
	static const struct synth_breakdown waiting_loop = {.ms = {[PO_CAT_FORWARD] = 8,
								   [PO_CAT_BACKWARD] = 12,
								   [PO_CAT_HANDOFF] = 2,
								   [PO_CAT_DATA_WAIT] = 10,
								   [PO_CAT_OTHER] = 0.5}};
	static const struct synth_loader io = {
	    {29, 0.5, 0.5}, {0.5, 0.5, 0.5}, {"read_file", "augment", "stack"}};
	struct po_analysis *analysis = synth_create(200, &waiting_loop, 1);
	const struct po_finding *finding;

	analysis->cpu_count = 2;
	synth_config(analysis, "num_workers", "1");
	synth_workers(analysis, 1, &io, 97);
	workers_wait(analysis, 300, 100);
	share_machine(analysis, 1.4, 0.6);
	run_detect(analysis);
	finding = synth_finding(analysis, PO_FINDING_INPUT_BOUND);
	CHECK(finding != NULL);
	if (finding) {
		CHECK_STR_EQ(synth_text(finding, "cause"), "too-few-workers");
		CHECK_STR_EQ(synth_text(finding, "loading"), "io-like");
		CHECK(strstr(finding->summary, "waiting on I/O, which needs no core") != NULL);
		CHECK(strstr(finding->summary, "cores are idle") == NULL);
	}
	CHECK(!analysis->diagnosis.steady.handoff_is_input);
	CHECK(has_warning(analysis, "busy-machine"));
	destroy(analysis);
}

/* Loading on the training thread: 4 ms of CPU decoding per batch, 30 steps per second. */
static const struct synth_breakdown main_loop = {.ms = {[PO_CAT_LOAD] = 12,
							[PO_CAT_DATA_WAIT] = 0.2,
							[PO_CAT_FORWARD] = 2,
							[PO_CAT_BACKWARD] = 2.5,
							[PO_CAT_OPTIMIZER] = 0.5}};
static const struct synth_loader main_decode = {{12, 0, 0}, {4, 0, 0}, {"decode", "", ""}};

/*
 * The training thread decodes in 12 ms of wall time with 4 ms of CPU; its schedstat says it
 * waited 9 ms per step for a core. Its time off CPU is the wait for a core, not I/O.
 */
static struct po_analysis *main_decoding(double others)
{
	struct po_analysis *analysis = synth_create(200, &main_loop, 0);
	struct po_process *main = &analysis->processes[0];
	int64_t end_ns = po_analysis_step(analysis, 199).end_ns;

	analysis->cpu_count = 2;
	synth_config(analysis, "num_workers", "0");
	synth_main_labels(analysis, &main_decode);
	main->last_ns = end_ns;
	/* 8 ms of CPU per 17.2 ms step: 4 decoding, 4 training; 9 ms of waiting */
	main->cpu_first_ns = 0;
	main->cpu_last_ns = (int64_t)((double)(end_ns - main->first_ns) * 8 / 17.2);
	main->runq_first_ns = 0;
	main->runq_last_ns = (int64_t)((double)(end_ns - main->first_ns) * 9 / 17.2);
	if (others >= 0)
		share_machine(analysis, others, 0.5);
	return analysis;
}

static void test_main_loading_core_wait_measured(void)
{
	struct po_analysis *analysis = main_decoding(1.5);
	const struct po_finding *finding;
	const struct po_recommendation *rec;

	run_detect(analysis);
	finding = synth_finding(analysis, PO_FINDING_INPUT_BOUND);
	CHECK(finding != NULL);
	if (finding) {
		CHECK_STR_EQ(synth_text(finding, "cause"), "loading-in-main-process");
		CHECK_STR_EQ(synth_text(finding, "core_wait_source"), "measured");
		CHECK_STR_EQ(synth_text(finding, "loading"), "cpu-bound");
		/* the main thread's 9 ms, in proportion to the decoding's half of its CPU */
		CHECK_NEAR(synth_number(finding, "core_wait_ms_per_batch"), 4.5, 0.05);
		CHECK(isnan(synth_number(finding, "predicted_step_ms")));
		CHECK_NEAR(synth_number(finding, "others_cores"), 1.5, 1e-9);
		CHECK_NEAR(synth_number(finding, "available_cores"), 0.5, 1e-9);
		rec = synth_rec(finding, "num_workers");
		CHECK(rec && isnan(rec->predicted_step_ms));
		CHECK(rec &&
		      strncmp(rec->effect, "not predicted: other programs used 1.50", 39) == 0);
	}
	destroy(analysis);
}

/*
 * Other programs took 0.3 of 2 cores: too few to withhold anything, and the model counts
 * with the 1.7 cores they left. Without the counter, with all of them.
 */
static void test_light_load_counts_cores_left(void)
{
	struct po_analysis *light = main_decoding(0.3), *unknown = main_decoding(-1);
	const struct po_finding *a, *b;

	run_detect(light);
	run_detect(unknown);
	a = synth_finding(light, PO_FINDING_INPUT_BOUND);
	b = synth_finding(unknown, PO_FINDING_INPUT_BOUND);
	CHECK(a != NULL && b != NULL);
	if (a && b) {
		CHECK_NEAR(synth_number(a, "available_cores"), 1.7, 1e-9);
		CHECK(isnan(synth_number(b, "available_cores")));
		CHECK(synth_number(a, "predicted_step_ms") > 0);
		CHECK(synth_number(b, "predicted_step_ms") > 0);
		CHECK(synth_rec(a, "num_workers") &&
		      synth_rec(a, "num_workers")->predicted_step_ms > 0);
	}
	CHECK(!has_warning(light, "busy-machine"));
	CHECK(light->diagnosis.verdict_reason == NULL ||
	      !strstr(light->diagnosis.verdict_reason, "other programs"));
	destroy(light);
	destroy(unknown);
}

int main(void)
{
	po_rules_init(&rules);
	RUN(test_busy_machine_idle_workers);
	RUN(test_busy_workers_handoff_is_input);
	RUN(test_busy_machine_io_workers);
	RUN(test_main_loading_core_wait_measured);
	RUN(test_light_load_counts_cores_left);
	return CHECK_SUMMARY();
}
