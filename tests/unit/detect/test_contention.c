/*
 * test_contention.c: the cpu-contention detector on synthetic analyses: it fires when the
 * loop gets too little of a core (of its cores, with intra-op threads) on saturated cores,
 * stays silent with idle cores, without CPU counters or without a slowed loop, and computes
 * the recommended num_workers and threads and the predicted steps as docs/rules.md
 * documents them.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "synth.h"

static struct po_rules rules;

/* 29 ms steps: 27 ms of forward, backward and optimizer, 1 ms of data wait. */
static const struct synth_breakdown cpu_loop = {.ms = {[PO_CAT_FORWARD] = 12,
						       [PO_CAT_BACKWARD] = 12,
						       [PO_CAT_OPTIMIZER] = 3,
						       [PO_CAT_DATA_WAIT] = 1,
						       [PO_CAT_H2D_COPY] = 0.5,
						       [PO_CAT_OTHER] = 0.5}};

/* Per batch: 56 ms of preprocess wall time for 29 ms of CPU: the workers wait for a core. */
static const struct synth_loader starved_loader = {
    {0.5, 56, 2}, {0.02, 29, 1}, {"read_file", "augment", "stack"}};

/* Gives the main process a CPU counter: loop_cpu_ms of CPU per step over its life. */
static void main_cpu(struct po_analysis *analysis, double loop_cpu_ms)
{
	struct po_process *main = &analysis->processes[0];
	int64_t end_ns = po_analysis_step(analysis, analysis->step_count - 1).end_ns;
	double life_ns = (double)(end_ns - main->first_ns);
	double step_ns = life_ns / (double)analysis->step_count;

	main->last_ns = end_ns;
	main->cpu_first_ns = 5 * SYNTH_MS;
	main->cpu_last_ns =
	    main->cpu_first_ns + (int64_t)(loop_cpu_ms * SYNTH_MS / step_ns * life_ns);
}

/* 100 steps of the CPU loop with worker_count starved workers on cpu_count cores. */
static struct po_analysis *workers_run(int32_t cpu_count, double loop_cpu_ms,
				       const struct synth_loader *loader, int worker_count)
{
	struct po_analysis *analysis = synth_create(100, &cpu_loop, 0);

	analysis->cpu_count = cpu_count;
	synth_workers(analysis, worker_count, loader, 60);
	main_cpu(analysis, loop_cpu_ms);
	return analysis;
}

static struct po_analysis *contended_run(int32_t cpu_count, double loop_cpu_ms,
					 const struct synth_loader *loader)
{
	return workers_run(cpu_count, loop_cpu_ms, loader, 3);
}

static void run_detect(struct po_analysis *analysis)
{
	struct po_error err = {{0}};

	CHECK_INT_EQ(po_detect_run(analysis, &rules, &err), PO_STATUS_OK);
}

/*
 * The documented model: T(n) = max(R + c, (S - W + W_cpu / f(n)) / n, (C + c) / K) with
 * f(n) = min(1, K / (n + 1)), here K = 2.
 */
static double model_step(int64_t workers)
{
	const double c = 15, rest = 1, service = 58.5, cpu = 30.02;
	double fair = fmin(1, 2.0 / (double)(workers + 1));
	double batch = (service - 58 + 30 / fair) / (double)workers;

	return fmax(rest + c, fmax(batch, (cpu + c) / 2));
}

static void test_fires_on_saturated_cores(void)
{
	struct po_analysis *analysis = contended_run(2, 15, &starved_loader);
	const struct po_finding *finding;
	const struct po_recommendation *rec;
	double workers_ms = 29 * model_step(2) / model_step(3);

	run_detect(analysis);
	finding = synth_finding(analysis, PO_FINDING_CPU_CONTENTION);
	CHECK(finding != NULL);
	if (finding) {
		CHECK_INT_EQ(finding->severity, PO_SEVERITY_CRITICAL); /* 12 of 29 ms lost */
		CHECK_NEAR(synth_number(finding, "loop_cpu_share_pct"), 100.0 * 15 / 27, 0.5);
		CHECK_NEAR(synth_number(finding, "lost_ms_per_step"), 12, 0.1);
		CHECK_NEAR(synth_number(finding, "lost_share_pct"), 100.0 * 12 / 29, 0.5);
		CHECK_NEAR(synth_number(finding, "demand_cores"), (30.02 + 15) / 17, 0.02);
		CHECK_NEAR(synth_number(finding, "worker_cpu_share_pct"), 100.0 * 30 / 58, 0.5);
		CHECK(synth_number(finding, "worker_cpu_cores") > 0.9);
		/* T(3) = 22.51 (the cores), T(2) = 22.75 within 5%, T(1) = 30.5. */
		CHECK_INT_EQ(synth_evidence(finding, "recommended_num_workers")->integer, 2);
		CHECK_NEAR(workers_ms, 29 * 22.75 / 22.51, 0.02);
		CHECK_NEAR(synth_number(finding, "num_workers_step_ms"), workers_ms, 0.05);
		/* The loop on a core of its own: the step less the 12 ms lost. */
		CHECK_NEAR(synth_number(finding, "predicted_step_ms"), 17, 0.05);
		CHECK_NEAR(synth_number(finding, "predicted_speedup"), 29.0 / 17, 0.01);
		CHECK(finding->recommendation_count >= 1 &&
		      finding->recommendations[0].knob == PO_KNOB_TRANSFORM);
		rec = synth_rec(finding, "transform");
		CHECK(rec && fabs(rec->predicted_step_ms - 17) < 0.05);
		/* Two workers keep the step, no faster: evidence, no advice. */
		CHECK(synth_rec(finding, "num_workers") == NULL);
		rec = synth_rec(finding, "threads");
		CHECK(rec && strstr(rec->action, "torch.set_num_threads(1)") != NULL);
		CHECK(strstr(finding->summary, "held by 3 loader workers") != NULL);
	}
	CHECK_INT_EQ(analysis->diagnosis.verdict, PO_VERDICT_HOST_BOUND);
	CHECK(analysis->diagnosis.verdict_reason &&
	      strcmp(analysis->diagnosis.verdict_reason,
		     "the training loop waits for CPU held by 3 loader workers") == 0);
	synth_destroy(analysis);
}

/*
 * The loop also waits for data (8 ms per step): input-bound fires beside cpu-contention, and
 * the report gives one num_workers answer, the one that models the cores.
 */
static void test_one_answer_per_knob(void)
{
	static const struct synth_breakdown waiting = {.ms = {[PO_CAT_FORWARD] = 12,
							      [PO_CAT_BACKWARD] = 12,
							      [PO_CAT_OPTIMIZER] = 3,
							      [PO_CAT_DATA_WAIT] = 8,
							      [PO_CAT_OTHER] = 1}};
	struct po_analysis *analysis = synth_create(100, &waiting, 0);
	const struct po_finding *input, *contention;
	const struct po_recommendation *a, *b;

	analysis->cpu_count = 2;
	synth_workers(analysis, 6, &starved_loader, 95);
	main_cpu(analysis, 15);
	run_detect(analysis);
	input = synth_finding(analysis, PO_FINDING_INPUT_BOUND);
	contention = synth_finding(analysis, PO_FINDING_CPU_CONTENTION);
	CHECK(input != NULL && contention != NULL);
	a = input ? synth_rec(input, "num_workers") : NULL;
	b = contention ? synth_rec(contention, "num_workers") : NULL;
	CHECK((a == NULL) == (b == NULL));
	if (a && b)
		CHECK_STR_EQ(a->action, b->action);
	synth_destroy(analysis);
}

/*
 * Decoding that waits for a core most of its time (80 ms of wall time for 29 ms of CPU, six
 * busy workers on 2 cores) is CPU-starved, not I/O: waiting for a core is not waiting for I/O.
 */
static void test_core_wait_is_not_io(void)
{
	static const struct synth_breakdown waiting = {.ms = {[PO_CAT_FORWARD] = 12,
							      [PO_CAT_BACKWARD] = 12,
							      [PO_CAT_OPTIMIZER] = 3,
							      [PO_CAT_DATA_WAIT] = 8,
							      [PO_CAT_OTHER] = 1}};
	static const struct synth_loader starved = {
	    {0.5, 80, 2}, {0.02, 29, 1}, {"read_file", "decode", "stack"}};
	struct po_analysis *analysis = synth_create(100, &waiting, 0);
	const struct po_finding *input;

	analysis->cpu_count = 2;
	synth_workers(analysis, 6, &starved, 95);
	main_cpu(analysis, 15);
	run_detect(analysis);
	input = synth_finding(analysis, PO_FINDING_INPUT_BOUND);
	CHECK(input != NULL);
	if (input) {
		CHECK_STR_EQ(synth_text(input, "loading"), "cpu-bound");
		CHECK(synth_number(input, "core_wait_ms_per_batch") > 40);
		CHECK_STR_EQ(synth_text(input, "core_wait_source"), "modelled");
	}
	synth_destroy(analysis);
}

/*
 * Other programs hold the cores, which the fair share of our own threads cannot see: the
 * workers' measured run-queue wait (50 ms of a batch's 80) says the decoding waited for a
 * core, not for I/O. Without it the same batch would look io-like.
 */
static void test_measured_core_wait_is_not_io(void)
{
	static const struct synth_breakdown waiting = {.ms = {[PO_CAT_FORWARD] = 12,
							      [PO_CAT_BACKWARD] = 12,
							      [PO_CAT_OPTIMIZER] = 3,
							      [PO_CAT_DATA_WAIT] = 8,
							      [PO_CAT_OTHER] = 1}};
	static const struct synth_loader starved = {
	    {0.5, 80, 2}, {0.02, 29, 1}, {"read_file", "decode", "stack"}};
	struct po_analysis *analysis = synth_create(100, &waiting, 0);
	const struct po_finding *input;

	analysis->cpu_count = 16; /* our threads alone would never fill these cores */
	synth_workers(analysis, 2, &starved, 95);
	main_cpu(analysis, 15);
	for (size_t p = 1; p < analysis->process_count; p++) {
		int64_t batches = analysis->workers[p - 1].batches;

		analysis->processes[p].runq_first_ns = 0;
		analysis->processes[p].runq_last_ns = 50 * SYNTH_MS * batches;
		analysis->processes[p].cpu_first_ns = 0;
		analysis->processes[p].cpu_last_ns = (int64_t)(30.02 * SYNTH_MS) * batches;
	}
	run_detect(analysis);
	input = synth_finding(analysis, PO_FINDING_INPUT_BOUND);
	CHECK(input != NULL);
	if (input) {
		CHECK_STR_EQ(synth_text(input, "loading"), "cpu-bound");
		CHECK_STR_EQ(synth_text(input, "core_wait_source"), "measured");
		CHECK_NEAR(synth_number(input, "core_wait_ms_per_batch"), 50, 0.5);
	}
	synth_destroy(analysis);
}

/*
 * Decoding that saturates the cores makes taking a ready batch in slow too (the loop waits
 * for a core to unpickle it): input-bound blames the saturated cores, hand-off included,
 * and loader-handoff does not send the user to the sharing strategy.
 */
static void test_handoff_on_saturated_cores(void)
{
	static const struct synth_breakdown slow_handoff = {.ms = {[PO_CAT_FORWARD] = 12,
								   [PO_CAT_BACKWARD] = 12,
								   [PO_CAT_OPTIMIZER] = 3,
								   [PO_CAT_DATA_WAIT] = 0.5,
								   [PO_CAT_HANDOFF] = 9,
								   [PO_CAT_OTHER] = 1}};
	struct po_analysis *analysis = synth_create(100, &slow_handoff, 0);
	const struct po_finding *input;

	analysis->cpu_count = 2;
	synth_workers(analysis, 6, &starved_loader, 95);
	main_cpu(analysis, 15);
	run_detect(analysis);
	input = synth_finding(analysis, PO_FINDING_INPUT_BOUND);
	CHECK(input != NULL);
	if (input)
		CHECK_STR_EQ(synth_text(input, "cause"), "cpu-saturated");
	CHECK(synth_finding(analysis, PO_FINDING_LOADER_HANDOFF) == NULL);
	synth_destroy(analysis);
}

/*
 * Workers that spend most of their CPU outside the loading stages (pickling large batches
 * of many tensors to hand them off) and wait for a core now and then: 0.5 ms of run-queue
 * wait per batch is little against their 18 ms of CPU per batch, whatever the stages' own
 * 0.6 ms: the cores are not saturated.
 */
static void test_core_wait_against_all_worker_cpu(void)
{
	static const struct synth_breakdown waits = {.ms = {[PO_CAT_FORWARD] = 11,
							    [PO_CAT_BACKWARD] = 14,
							    [PO_CAT_DATA_WAIT] = 8,
							    [PO_CAT_OTHER] = 2}};
	static const struct synth_loader light = {
	    {0.55, 0.01, 0.04}, {0.52, 0.01, 0.04}, {"read", "none", "stack"}};
	struct po_analysis *analysis = synth_create(100, &waits, 0);
	const struct po_finding *input;

	analysis->cpu_count = 2;
	synth_workers(analysis, 2, &light, 5);
	main_cpu(analysis, 25);
	for (size_t p = 1; p < analysis->process_count; p++) {
		int64_t batches = analysis->workers[p - 1].batches;

		analysis->processes[p].runq_first_ns = 0;
		analysis->processes[p].runq_last_ns = SYNTH_MS / 2 * batches;
		analysis->processes[p].cpu_first_ns = 0;
		analysis->processes[p].cpu_last_ns = 18 * SYNTH_MS * batches;
	}
	run_detect(analysis);
	input = synth_finding(analysis, PO_FINDING_INPUT_BOUND);
	CHECK(input == NULL || strcmp(synth_text(input, "cause"), "cpu-saturated") != 0);
	synth_destroy(analysis);
}

/*
 * One worker that sleeps 40 ms on I/O per batch and waits 1 ms for a core when it wakes,
 * against its 2 ms of CPU: not starved of cores (the wait is nothing against the batch's 41.5
 * ms): too few workers, and more are recommended.
 */
static void test_short_core_wait_of_an_io_worker(void)
{
	static const struct synth_breakdown waits = {.ms = {[PO_CAT_FORWARD] = 4,
							    [PO_CAT_BACKWARD] = 4,
							    [PO_CAT_OPTIMIZER] = 1,
							    [PO_CAT_DATA_WAIT] = 32,
							    [PO_CAT_OTHER] = 0.5}};
	static const struct synth_loader io = {
	    {40, 1, 0.5}, {0.05, 1, 0.5}, {"read", "augment", "stack"}};
	struct po_analysis *analysis = synth_create(150, &waits, 0);
	const struct po_finding *input;

	analysis->cpu_count = 2;
	synth_workers(analysis, 1, &io, 99);
	main_cpu(analysis, 9);
	for (size_t p = 1; p < analysis->process_count; p++) {
		int64_t batches = analysis->workers[p - 1].batches;

		analysis->processes[p].runq_first_ns = 0;
		analysis->processes[p].runq_last_ns = 1 * SYNTH_MS * batches;
		analysis->processes[p].cpu_first_ns = 0;
		analysis->processes[p].cpu_last_ns = 2 * SYNTH_MS * batches;
	}
	run_detect(analysis);
	input = synth_finding(analysis, PO_FINDING_INPUT_BOUND);
	CHECK(input != NULL);
	if (input) {
		CHECK_STR_EQ(synth_text(input, "cause"), "too-few-workers");
		CHECK(synth_rec(input, "num_workers") != NULL &&
		      strstr(synth_rec(input, "num_workers")->action, "set num_workers=") != NULL);
	}
	synth_destroy(analysis);
}

/* Six workers on 2 cores: two keep the step (T(2) = 22.75 ms, T(n >= 3) = 22.51 ms). */
static void test_fewer_workers_keep_the_step(void)
{
	struct po_analysis *analysis = workers_run(2, 15, &starved_loader, 6);
	const struct po_finding *finding;

	run_detect(analysis);
	finding = synth_finding(analysis, PO_FINDING_CPU_CONTENTION);
	CHECK(finding != NULL);
	if (finding) {
		CHECK_INT_EQ(synth_evidence(finding, "num_workers")->integer, 6);
		CHECK_INT_EQ(synth_evidence(finding, "recommended_num_workers")->integer, 2);
		CHECK_NEAR(synth_number(finding, "num_workers_step_ms"), 29 * 22.75 / 22.51, 0.05);
		/* The step is kept, not shortened: no recommendation predicts no gain. */
		CHECK(synth_rec(finding, "num_workers") == NULL);
		CHECK(strstr(finding->summary, "held by 6 loader workers") != NULL);
	}
	synth_destroy(analysis);
}

/*
 * One worker on 2 cores: fewer is not possible, and keeping it is no advice (it predicts no
 * gain): the evidence says it.
 */
static void test_single_worker_is_kept(void)
{
	struct synth_loader heavy = starved_loader;
	struct po_analysis *analysis;
	const struct po_finding *finding;

	heavy.cpu_ms[1] = 40; /* 41 ms of CPU per batch for 20 ms of loop CPU: cores full */
	heavy.wall_ms[1] = 70;
	analysis = workers_run(2, 15, &heavy, 1);
	run_detect(analysis);
	finding = synth_finding(analysis, PO_FINDING_CPU_CONTENTION);
	CHECK(finding != NULL);
	CHECK(finding && synth_rec(finding, "num_workers") == NULL);
	CHECK(finding && synth_evidence(finding, "recommended_num_workers")->integer == 1);
	synth_destroy(analysis);
}

static void test_warning_when_less_is_lost(void)
{
	struct po_analysis *analysis = contended_run(2, 20, &starved_loader);
	const struct po_finding *finding;

	run_detect(analysis);
	finding = synth_finding(analysis, PO_FINDING_CPU_CONTENTION);
	CHECK(finding != NULL);
	if (finding) {
		CHECK_INT_EQ(finding->severity, PO_SEVERITY_WARNING); /* 7 of 29 ms lost */
		CHECK_NEAR(synth_number(finding, "lost_share_pct"), 100.0 * 7 / 29, 0.5);
	}
	synth_destroy(analysis);
}

static void test_silent_with_idle_cores(void)
{
	struct po_analysis *analysis = contended_run(8, 15, &starved_loader);

	run_detect(analysis);
	CHECK(synth_finding(analysis, PO_FINDING_CPU_CONTENTION) == NULL);
	CHECK(analysis->diagnosis.verdict_reason == NULL);
	synth_destroy(analysis);
}

static void test_silent_without_cpu_counters(void)
{
	struct po_analysis *analysis = contended_run(2, 15, &starved_loader);
	struct synth_loader unmeasured = starved_loader;

	analysis->processes[0].cpu_first_ns = -1;
	analysis->processes[0].cpu_last_ns = -1;
	run_detect(analysis);
	CHECK(synth_finding(analysis, PO_FINDING_CPU_CONTENTION) == NULL);
	synth_destroy(analysis);

	for (int s = 0; s < 3; s++)
		unmeasured.cpu_ms[s] = -1;
	analysis = contended_run(2, 15, &unmeasured);
	run_detect(analysis);
	CHECK(synth_finding(analysis, PO_FINDING_CPU_CONTENTION) == NULL);
	synth_destroy(analysis);
}

static void test_silent_when_loop_keeps_its_core(void)
{
	struct po_analysis *analysis = contended_run(2, 28, &starved_loader);

	run_detect(analysis);
	CHECK(synth_finding(analysis, PO_FINDING_CPU_CONTENTION) == NULL);
	synth_destroy(analysis);
}

/* Workers that get all the CPU they ask for do not wait for a core: no core is contended. */
static void test_silent_when_workers_run_freely(void)
{
	struct synth_loader free_loader = starved_loader;
	struct po_analysis *analysis;

	free_loader.cpu_ms[1] = free_loader.wall_ms[1];
	analysis = contended_run(2, 15, &free_loader);
	run_detect(analysis);
	CHECK(synth_finding(analysis, PO_FINDING_CPU_CONTENTION) == NULL);
	synth_destroy(analysis);
}

static void test_rules_change_outcome(void)
{
	struct po_analysis *analysis = contended_run(2, 15, &starved_loader);
	struct po_error err = {{0}};

	CHECK_INT_EQ(po_rules_set(&rules, "cpu-contention.loop_share_pct=50", &err), PO_STATUS_OK);
	run_detect(analysis);
	CHECK(synth_finding(analysis, PO_FINDING_CPU_CONTENTION) == NULL);
	po_rules_init(&rules);
	synth_destroy(analysis);
}

/* Per batch: 24 ms of preprocess wall time for 12 ms of CPU: the workers wait for a core. */
static const struct synth_loader threads_loader = {
    {0.5, 24, 0.5}, {0.02, 12, 0.5}, {"read_file", "augment", "stack"}};

/*
 * The loop computes on 2 intra-op threads (torch_num_threads) beside 2 starved workers on 2
 * cores: 37.8 ms of CPU per 27 ms of forward, backward and optimizer, more than a core, yet
 * 70% of its two: it loses 8.1 ms per step. With 1 thread and 1 worker each has a core:
 * the loop takes 20.9 ms, a worker makes a batch in its 12.52 ms of CPU.
 */
static void test_intra_op_threads_are_demand(void)
{
	struct po_analysis *analysis = workers_run(2, 37.8, &threads_loader, 2);
	const struct po_finding *finding;
	const struct po_recommendation *rec;

	synth_config(analysis, "torch_num_threads", "2");
	run_detect(analysis);
	finding = synth_finding(analysis, PO_FINDING_CPU_CONTENTION);
	CHECK(finding != NULL);
	if (!finding)
		goto end;
	CHECK_INT_EQ(synth_evidence(finding, "loop_threads")->integer, 2);
	CHECK_NEAR(synth_number(finding, "loop_cpu_share_pct"), 70, 0.5);
	CHECK_NEAR(synth_number(finding, "lost_ms_per_step"), 8.1, 0.05);
	CHECK_INT_EQ(synth_evidence(finding, "recommended_threads")->integer, 1);
	CHECK_NEAR(synth_number(finding, "threads_step_ms"), 20.9, 0.05);
	CHECK(strstr(finding->summary, "(2 intra-op threads)") != NULL);
	rec = synth_rec(finding, "threads");
	CHECK(rec && strcmp(rec->action, "call torch.set_num_threads(1) in the training process, "
					 "with num_workers=1") == 0);
	CHECK(rec && fabs(rec->predicted_step_ms - 20.9) < 0.05);
end:
	synth_destroy(analysis);

	/* Without the threads: one thread's share is over a core, nothing to report. */
	analysis = workers_run(2, 37.8, &threads_loader, 2);
	run_detect(analysis);
	CHECK(synth_finding(analysis, PO_FINDING_CPU_CONTENTION) == NULL);
	synth_destroy(analysis);
}

/*
 * Threads not in the run configuration, but the main process uses more than a core: the
 * main thread's measured wait for a core, 8 ms per step, is what the loop loses. The advice
 * on threads is then not predicted.
 */
static void test_unknown_threads_use_measured_wait(void)
{
	struct po_analysis *analysis = workers_run(2, 37.8, &threads_loader, 2);
	struct po_process *main = &analysis->processes[0];
	const struct po_finding *finding;
	const struct po_recommendation *rec;

	main->runq_first_ns = 0;
	main->runq_last_ns = 8 * SYNTH_MS * (int64_t)analysis->step_count;
	run_detect(analysis);
	finding = synth_finding(analysis, PO_FINDING_CPU_CONTENTION);
	CHECK(finding != NULL);
	if (finding) {
		CHECK_NEAR(synth_number(finding, "lost_ms_per_step"), 8, 0.05);
		CHECK_NEAR(synth_number(finding, "main_runq_ms_per_step"), 8, 0.05);
		CHECK(isnan(synth_number(finding, "threads_step_ms")));
		rec = synth_rec(finding, "threads");
		CHECK(rec && isnan(rec->predicted_step_ms));
	}
	synth_destroy(analysis);
}

int main(void)
{
	po_rules_init(&rules);
	RUN(test_fires_on_saturated_cores);
	RUN(test_fewer_workers_keep_the_step);
	RUN(test_single_worker_is_kept);
	RUN(test_warning_when_less_is_lost);
	RUN(test_silent_with_idle_cores);
	RUN(test_silent_without_cpu_counters);
	RUN(test_silent_when_loop_keeps_its_core);
	RUN(test_silent_when_workers_run_freely);
	RUN(test_rules_change_outcome);
	RUN(test_one_answer_per_knob);
	RUN(test_core_wait_is_not_io);
	RUN(test_handoff_on_saturated_cores);
	RUN(test_measured_core_wait_is_not_io);
	RUN(test_core_wait_against_all_worker_cpu);
	RUN(test_short_core_wait_of_an_io_worker);
	RUN(test_intra_op_threads_are_demand);
	RUN(test_unknown_threads_use_measured_wait);
	return CHECK_SUMMARY();
}
