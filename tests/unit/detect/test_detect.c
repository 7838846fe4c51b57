/*
 * test_detect.c: the detectors on synthetic analyses, one per scenario: what fires, with
 * which severity, cause and predicted numbers, and that clean runs give no finding.
 */
#include <math.h>
#include <string.h>
#include <stdlib.h>

#include "check.h"
#include "synth.h"

static struct po_rules rules;

/* With PO_DETECT_DUMP set, prints the findings, to see what a scenario gives. */
static void dump(const struct po_analysis *analysis)
{
	fprintf(stderr, "verdict %s\n", po_verdict_name(analysis->diagnosis.verdict));
	for (size_t i = 0; i < analysis->diagnosis.finding_count; i++) {
		const struct po_finding *f = &analysis->diagnosis.findings[i];

		fprintf(stderr, "  %s %s %.2f: %s\n", po_finding_id_name(f->id),
			po_severity_name(f->severity), f->confidence, f->summary);
		for (size_t e = 0; e < f->evidence_count; e++) {
			const struct po_evidence *ev = &f->evidence[e];
			char buffer[PO_EVIDENCE_KEY_MAX];
			const char *key =
			    po_evidence_key_name(ev->key, ev->param, buffer, sizeof(buffer));

			if (ev->type == PO_EVIDENCE_TEXT)
				fprintf(stderr, "    %s=%s\n", key, ev->text);
			else if (ev->type == PO_EVIDENCE_INTEGER)
				fprintf(stderr, "    %s=%lld\n", key, (long long)ev->integer);
			else
				fprintf(stderr, "    %s=%g\n", key, ev->number);
		}
		for (size_t r = 0; r < f->recommendation_count; r++)
			fprintf(stderr, "    -> [%s] %s; %s; %s (%g ms, %gx)\n",
				po_knob_name(f->recommendations[r].knob),
				f->recommendations[r].action, f->recommendations[r].why,
				f->recommendations[r].effect,
				f->recommendations[r].predicted_step_ms,
				f->recommendations[r].predicted_speedup);
	}
}

static void run_detect(struct po_analysis *analysis)
{
	struct po_error err = {{0}};

	CHECK_INT_EQ(po_detect_run(analysis, &rules, &err), PO_STATUS_OK);
	if (getenv("PO_DETECT_DUMP"))
		dump(analysis);
}

static void check_sorted(const struct po_analysis *analysis)
{
	for (size_t i = 1; i < analysis->diagnosis.finding_count; i++) {
		const struct po_finding *a = &analysis->diagnosis.findings[i - 1],
					*b = &analysis->diagnosis.findings[i];

		CHECK(a->severity < b->severity || (a->severity == b->severity && a->id <= b->id));
	}
	for (size_t i = 0; i < analysis->diagnosis.finding_count; i++) {
		CHECK(analysis->diagnosis.findings[i].confidence >= 0 &&
		      analysis->diagnosis.findings[i].confidence <= 1);
		CHECK(analysis->diagnosis.findings[i].summary &&
		      analysis->diagnosis.findings[i].summary[0]);
	}
}

static const struct synth_breakdown main_loading = {.ms = {[PO_CAT_LOAD] = 10,
							   [PO_CAT_PREPROCESS] = 5,
							   [PO_CAT_COLLATE] = 1,
							   [PO_CAT_H2D_COPY] = 0.5,
							   [PO_CAT_FORWARD] = 4,
							   [PO_CAT_BACKWARD] = 4,
							   [PO_CAT_OPTIMIZER] = 1}};

static void test_loading_in_main_process(void)
{
	struct synth_loader loader = {{10, 5, 1}, {1, 5, 1}, {"read_file", "decode_jpeg", "stack"}};
	struct po_analysis *analysis = synth_create(100, &main_loading, 0);
	const struct po_finding *finding;
	const struct po_recommendation *rec;

	synth_config(analysis, "num_workers", "0");
	synth_main_labels(analysis, &loader);
	run_detect(analysis);
	finding = synth_finding(analysis, PO_FINDING_INPUT_BOUND);
	CHECK(finding != NULL);
	if (!finding)
		goto end;
	CHECK_INT_EQ(finding->severity, PO_SEVERITY_CRITICAL);
	CHECK_STR_EQ(synth_text(finding, "cause"), "loading-in-main-process");
	CHECK_STR_EQ(synth_text(finding, "stage"), "load");
	CHECK_STR_EQ(synth_text(finding, "label"), "read_file");
	CHECK_NEAR(synth_number(finding, "wait_share_pct"), 100.0 * 16 / 25.5, 0.01);
	CHECK_NEAR(synth_number(finding, "wait_ms_per_step"), 16, 0.001);
	CHECK_NEAR(synth_number(finding, "cpu_ms_per_batch"), 7, 0.001);
	/*
	 * S = 16, M = 9.5, C = 7, K = 8: two workers keep up with the main loop (8 ms per
	 * batch), but with only 16% headroom; three leave the 20% the rule asks for. With
	 * workers each batch is handed off to the loop (input-bound.default_handoff_ms, 1.2 ms):
	 * nothing in a run without workers measures it.
	 */
	rec = synth_rec(finding, "num_workers");
	CHECK(rec != NULL);
	if (rec) {
		CHECK_STR_EQ(rec->action, "set num_workers=3");
		CHECK_NEAR(rec->predicted_step_ms, 9.5 + 1.2, 0.01);
		CHECK_NEAR(rec->predicted_speedup, 25.5 / 10.7, 0.01);
	}
	CHECK_INT_EQ(analysis->diagnosis.verdict, PO_VERDICT_INPUT_BOUND);
	check_sorted(analysis);
end:
	synth_destroy(analysis);
}

static const struct synth_breakdown worker_wait = {.ms = {[PO_CAT_DATA_WAIT] = 12,
							  [PO_CAT_H2D_COPY] = 0.5,
							  [PO_CAT_FORWARD] = 4,
							  [PO_CAT_BACKWARD] = 4,
							  [PO_CAT_OPTIMIZER] = 1.5}};

static struct po_analysis *too_few_workers(void)
{
	struct synth_loader loader = {
	    {20, 1.5, 0.5}, {0.5, 1.5, 0.5}, {"read_file", "resize", "stack"}};
	struct po_analysis *analysis = synth_create(200, &worker_wait, 2);

	synth_config(analysis, "num_workers", "1");
	synth_config(analysis, "persistent_workers", "true");
	synth_config(analysis, "prefetch_factor", "2");
	synth_workers(analysis, 1, &loader, 98);
	for (size_t i = 0; i < analysis->step_count; i++)
		SYNTH_STEP(analysis, i).queue_depth = 0;
	return analysis;
}

static void test_too_few_workers(void)
{
	struct po_analysis *analysis = too_few_workers();
	const struct po_finding *finding;
	const struct po_recommendation *rec;

	run_detect(analysis);
	finding = synth_finding(analysis, PO_FINDING_INPUT_BOUND);
	CHECK(finding != NULL);
	if (!finding)
		goto end;
	CHECK_INT_EQ(finding->severity, PO_SEVERITY_CRITICAL);
	CHECK_STR_EQ(synth_text(finding, "cause"), "too-few-workers");
	CHECK_STR_EQ(synth_text(finding, "stage"), "load");
	CHECK_STR_EQ(synth_text(finding, "label"), "read_file");
	CHECK_STR_EQ(synth_text(finding, "cpu_source"), "measured");
	CHECK_NEAR(synth_number(finding, "service_ms_per_batch"), 22, 0.01);
	/* S = 22, M = 10, C = 2.5, K = 8: P(2) = 11 is more than 5% above P(3) = 10. */
	CHECK_NEAR(synth_number(finding, "recommended_num_workers"), 3, 0);
	rec = synth_rec(finding, "num_workers");
	CHECK(rec != NULL);
	if (rec) {
		CHECK_STR_EQ(rec->action, "set num_workers=3");
		CHECK_NEAR(rec->predicted_step_ms, 10, 0.3);
		CHECK(rec->predicted_speedup > 2.0 && rec->predicted_speedup < 2.4);
	}
	CHECK(synth_rec(finding, "persistent_workers") == NULL);
	CHECK_INT_EQ(analysis->diagnosis.verdict, PO_VERDICT_INPUT_BOUND);
	CHECK(synth_finding(analysis, PO_FINDING_TRACE_DATA_LOSS) == NULL);
	check_sorted(analysis);
end:
	synth_destroy(analysis);
}

/* Two workers whose CPU-heavy augment stage fills the 2 cores; the loop waits 1.8 ms. */
static struct po_analysis *cpu_saturated_loader(void)
{
	static const struct synth_breakdown breakdown = {.ms = {[PO_CAT_DATA_WAIT] = 1.8,
								[PO_CAT_FORWARD] = 3,
								[PO_CAT_BACKWARD] = 3,
								[PO_CAT_OPTIMIZER] = 1}};
	struct synth_loader loader = {{0.5, 10, 0.5}, {0.1, 10, 0.5}, {"open", "augment", "stack"}};
	struct po_analysis *analysis = synth_create(200, &breakdown, 2);

	analysis->cpu_count = 2;
	synth_config(analysis, "num_workers", "2");
	synth_workers(analysis, 2, &loader, 95);
	return analysis;
}

static void test_cpu_saturated(void)
{
	struct po_analysis *analysis = cpu_saturated_loader();
	const struct po_finding *finding;

	run_detect(analysis);
	finding = synth_finding(analysis, PO_FINDING_INPUT_BOUND);
	CHECK(finding != NULL);
	if (!finding)
		goto end;
	CHECK_STR_EQ(synth_text(finding, "cause"), "cpu-saturated");
	CHECK_STR_EQ(synth_text(finding, "stage"), "preprocess");
	CHECK_STR_EQ(synth_text(finding, "label"), "augment");
	CHECK(synth_number(finding, "cpu_demand_cores") >= 1.8);
	/* No promise of gains from more workers. */
	CHECK_NEAR(synth_number(finding, "recommended_num_workers"), 2, 0);
	CHECK(synth_number(finding, "predicted_speedup") <= 1.05);
	for (size_t i = 0; i < finding->recommendation_count; i++) {
		const struct po_recommendation *rec = &finding->recommendations[i];

		if (rec->knob == PO_KNOB_NUM_WORKERS)
			CHECK(!(rec->predicted_speedup > 1.05));
	}
	CHECK(synth_rec(finding, "transform") != NULL);
	CHECK(strstr(finding->summary, "more workers will not help") != NULL);
	CHECK_INT_EQ(analysis->diagnosis.verdict, PO_VERDICT_INPUT_BOUND);
end:
	synth_destroy(analysis);
}

static const struct synth_breakdown host_steps = {.ms = {[PO_CAT_DATA_WAIT] = 0.1,
							 [PO_CAT_H2D_COPY] = 0.2,
							 [PO_CAT_FORWARD] = 4,
							 [PO_CAT_BACKWARD] = 4,
							 [PO_CAT_OPTIMIZER] = 1}};

/* Host live bytes: base plus per_step after every step, with a noisy warm-up. */
static void grow_memory(struct po_analysis *analysis, int64_t base, int64_t per_step)
{
	analysis->memory.has_alloc_events = true;
	for (size_t i = 0; i < analysis->step_count; i++)
		SYNTH_STEP(analysis, i).host_live_bytes =
		    base + per_step * (int64_t)i + (i < 3 ? (int64_t)(3 - i) * SYNTH_MIB : 0);
	analysis->memory.host_peak_bytes = base + per_step * (int64_t)analysis->step_count;
}

static void test_leak_in_workers(void)
{
	struct po_analysis *analysis = synth_create(100, &host_steps, 2);
	const struct po_finding *growth, *unfreed;

	grow_memory(analysis, 20 * SYNTH_MIB, 65536);
	synth_mem_site(analysis, 201, PO_ROLE_WORKER, PO_STAGE_PREPROCESS, "leak", 100 * 65536, -1);
	synth_mem_site(analysis, 100, PO_ROLE_MAIN, PO_STAGE_FORWARD, "activations", 0, -1);
	run_detect(analysis);
	growth = synth_finding(analysis, PO_FINDING_HOST_MEMORY_GROWTH);
	CHECK(growth != NULL);
	if (growth) {
		CHECK_INT_EQ(growth->severity, PO_SEVERITY_CRITICAL);
		CHECK_NEAR(synth_number(growth, "slope_bytes_per_step"), 65536, 1);
		CHECK(synth_number(growth, "r2") > 0.99);
		CHECK_STR_EQ(synth_text(growth, "site_role"), "worker");
		CHECK_STR_EQ(synth_text(growth, "stage"), "preprocess");
		CHECK_STR_EQ(synth_text(growth, "label"), "leak");
		CHECK_NEAR(synth_number(growth, "projected_growth_mib"),
			   10000 * 65536.0 / SYNTH_MIB, 0.01);
		CHECK(synth_rec(growth, "allocation") != NULL);
	}
	unfreed = synth_finding(analysis, PO_FINDING_UNFREED_ALLOCATIONS);
	CHECK(unfreed != NULL);
	if (unfreed)
		CHECK_INT_EQ(unfreed->severity, PO_SEVERITY_WARNING);
	CHECK(synth_finding(analysis, PO_FINDING_GPU_MEMORY_GROWTH) == NULL);
	CHECK(synth_finding(analysis, PO_FINDING_INPUT_BOUND) == NULL);
	CHECK_INT_EQ(analysis->diagnosis.verdict, PO_VERDICT_HOST_BOUND);
	check_sorted(analysis);
	synth_destroy(analysis);
}

/*
 * Memory still held at the end of a run cut short is that of the step it was in: no
 * unfreed-allocations then, and device and pinned memory (held by caching allocators) never.
 */
static void test_unfreed_only_after_a_clean_end(void)
{
	static const enum po_run_ending cut[] = {PO_RUN_SIGNAL, PO_RUN_EXCEPTION, PO_RUN_NO_RUN_END,
						 PO_RUN_FAILED_EXIT};
	struct po_analysis *analysis = synth_create(100, &host_steps, 2);

	synth_mem_site(analysis, 100, PO_ROLE_MAIN, PO_STAGE_FORWARD, "buffer", 8 * SYNTH_MIB, -1);
	synth_mem_site(analysis, 100, PO_ROLE_MAIN, PO_STAGE_FORWARD, "cache", 64 * SYNTH_MIB, 0);
	analysis->ending = PO_RUN_CLEAN;
	run_detect(analysis);
	CHECK(synth_finding(analysis, PO_FINDING_UNFREED_ALLOCATIONS) != NULL);
	CHECK_NEAR(
	    synth_number(synth_finding(analysis, PO_FINDING_UNFREED_ALLOCATIONS), "live_mib"), 8,
	    0.01);
	for (size_t i = 0; i < sizeof(cut) / sizeof(cut[0]); i++) {
		analysis->ending = cut[i];
		run_detect(analysis);
		CHECK(synth_finding(analysis, PO_FINDING_UNFREED_ALLOCATIONS) == NULL);
	}
	synth_destroy(analysis);
}

static void test_leak_in_main(void)
{
	struct po_analysis *analysis = synth_create(200, &host_steps, 2);
	const struct po_finding *growth;

	grow_memory(analysis, 200 * SYNTH_MIB, SYNTH_MIB);
	synth_mem_site(analysis, 100, PO_ROLE_MAIN, PO_STAGE_OPTIMIZER, "history", 200 * SYNTH_MIB,
		       -1);
	run_detect(analysis);
	growth = synth_finding(analysis, PO_FINDING_HOST_MEMORY_GROWTH);
	CHECK(growth != NULL);
	if (growth) {
		CHECK_INT_EQ(growth->severity, PO_SEVERITY_CRITICAL);
		CHECK_STR_EQ(synth_text(growth, "site_role"), "main");
		CHECK_STR_EQ(synth_text(growth, "stage"), "optimizer");
		CHECK_NEAR(synth_number(growth, "growth_over_run_mib"), 200, 0.5);
	}
	synth_destroy(analysis);
}

/*
 * Resident sets only (no allocation events): main_mib_step and worker_mib_step of growth per
 * step in the main process and in the workers; with restart_every, the workers' sum drops
 * back at every restart (non-persistent workers).
 */
static struct po_analysis *rss_run(double main_mib_step, double worker_mib_step,
				   size_t restart_every)
{
	struct po_analysis *analysis = synth_create(200, &host_steps, 2);

	analysis->memory.has_rss = true;
	for (size_t i = 0; i < analysis->step_count; i++) {
		struct po_step *step = &SYNTH_STEP(analysis, i);
		size_t age = restart_every ? i % restart_every : i;

		step->main_rss_bytes = (int64_t)((300 + main_mib_step * (double)i) * SYNTH_MIB);
		step->rss_bytes = step->main_rss_bytes +
				  (int64_t)((400 + worker_mib_step * (double)age) * SYNTH_MIB);
	}
	return analysis;
}

static void test_rss_growth_attributed(void)
{
	struct po_analysis *analysis = rss_run(1, 0, 0);
	const struct po_finding *growth;

	run_detect(analysis);
	growth = synth_finding(analysis, PO_FINDING_HOST_MEMORY_GROWTH);
	CHECK(growth != NULL);
	if (growth) {
		CHECK_STR_EQ(synth_text(growth, "process_role"), "main");
		CHECK_NEAR(synth_number(growth, "pid"), 100, 0);
		CHECK_NEAR(synth_number(growth, "slope_bytes_per_step"), SYNTH_MIB, 1);
		CHECK(strstr(growth->summary, "main process (pid 100") != NULL);
		CHECK(strstr(growth->recommendations[0].action, "--heap") != NULL);
	}
	synth_destroy(analysis);
	analysis = rss_run(0, 0.5, 0);
	run_detect(analysis);
	growth = synth_finding(analysis, PO_FINDING_HOST_MEMORY_GROWTH);
	CHECK(growth != NULL && strcmp(synth_text(growth, "process_role"), "workers") == 0);
	synth_destroy(analysis);
}

/*
 * A run that ended in the middle of spans (workers terminated at shutdown, a crash): spans
 * open at the end are how it ended, not data the tracer lost.
 */
static void test_open_at_end_is_no_loss(void)
{
	struct po_analysis *analysis = synth_create(100, &host_steps, 2);

	analysis->quality.open_at_end = 7;
	analysis->ending = PO_RUN_NO_RUN_END;
	run_detect(analysis);
	CHECK(synth_finding(analysis, PO_FINDING_TRACE_DATA_LOSS) == NULL);
	synth_destroy(analysis);
	analysis = synth_create(100, &host_steps, 2);
	analysis->quality.unmatched_ends = 3;
	run_detect(analysis);
	CHECK(synth_finding(analysis, PO_FINDING_TRACE_DATA_LOSS) != NULL &&
	      synth_rec(synth_finding(analysis, PO_FINDING_TRACE_DATA_LOSS), "trace_buffers") ==
		  NULL);
	synth_destroy(analysis);
}

/* GPU records the CUPTI collector dropped are a loss, with advice for its buffers only. */
static void test_gpu_records_dropped(void)
{
	struct po_analysis *analysis = synth_create(100, &host_steps, 2);
	const struct po_finding *loss;

	analysis->quality.gpu_records_dropped = 1234;
	run_detect(analysis);
	loss = synth_finding(analysis, PO_FINDING_TRACE_DATA_LOSS);
	CHECK(loss != NULL && loss->severity == PO_SEVERITY_WARNING);
	CHECK(loss && strstr(loss->summary, "dropped 1234 GPU activity records") != NULL);
	CHECK(loss && synth_rec(loss, "cupti_buffers") != NULL &&
	      synth_rec(loss, "trace_buffers") == NULL);
	synth_destroy(analysis);
}

/* Steps that cover little of the run, or hold no spans, give no verdict, and say why. */
static void test_verdict_knows_what_it_cannot_know(void)
{
	static const struct synth_breakdown unmarked = {.ms = {[PO_CAT_OTHER] = 20}};
	static const struct synth_breakdown loop_code = {.ms = {[PO_CAT_DATA_WAIT] = 0.5,
								[PO_CAT_FORWARD] = 0.7,
								[PO_CAT_BACKWARD] = 0.5,
								[PO_CAT_OTHER] = 18.2}};
	static const struct synth_breakdown model_only = {
	    .ms = {[PO_CAT_FORWARD] = 1, [PO_CAT_OTHER] = 19}};
	struct po_analysis *analysis = synth_create(100, &host_steps, 2);

	analysis->step_stats.coverage_pct = 30;
	run_detect(analysis);
	CHECK_INT_EQ(analysis->diagnosis.verdict, PO_VERDICT_UNKNOWN);
	CHECK(analysis->diagnosis.verdict_reason &&
	      strstr(analysis->diagnosis.verdict_reason, "cover only 30%"));
	synth_destroy(analysis);
	analysis = synth_create(100, &unmarked, 2);
	run_detect(analysis);
	CHECK_INT_EQ(analysis->diagnosis.verdict, PO_VERDICT_UNKNOWN);
	CHECK(analysis->diagnosis.verdict_reason &&
	      strstr(analysis->diagnosis.verdict_reason, "in no span") &&
	      strstr(analysis->diagnosis.verdict_reason, "instrument the loader and the model"));
	synth_destroy(analysis);
	/* Both the data wait and the model are marked (91% of the step is the loop's own
	 * code): the reason names what is not marked, not what already is. */
	analysis = synth_create(100, &loop_code, 2);
	run_detect(analysis);
	CHECK_INT_EQ(analysis->diagnosis.verdict, PO_VERDICT_UNKNOWN);
	CHECK(
	    analysis->diagnosis.verdict_reason &&
	    strstr(analysis->diagnosis.verdict_reason, "91% of each step") &&
	    strstr(analysis->diagnosis.verdict_reason, "the data wait and the model are marked") &&
	    !strstr(analysis->diagnosis.verdict_reason, "instrument"));
	synth_destroy(analysis);
	analysis = synth_create(100, &model_only, 2);
	run_detect(analysis);
	CHECK(analysis->diagnosis.verdict_reason &&
	      strstr(analysis->diagnosis.verdict_reason,
		     "the model is marked but not the data wait"));
	synth_destroy(analysis);
}

/*
 * A moderate checkpoint every 25 steps (3 ms on steps of about 10 ms that vary by 25%):
 * only some of the checkpoint steps cross the outlier threshold (the outliers alone gave
 * 'every 75 steps'), but the checkpoint's own time gives the period. PyTorch rejects
 * prefetch_factor and persistent_workers with num_workers=0: loader advice must not name them then.
 */
static void test_moderate_periodic_checkpoint(void)
{
	static const struct synth_breakdown steps = {
	    .ms = {[PO_CAT_FORWARD] = 4, [PO_CAT_BACKWARD] = 5, [PO_CAT_OTHER] = 1}};
	struct po_analysis *analysis = synth_create(400, &steps, 25);
	const struct po_finding *finding;

	for (size_t i = 7; i < analysis->step_count; i += 25)
		SYNTH_STEP(analysis, i).category_ns[PO_CAT_CHECKPOINT] = 3000000;
	synth_relayout(analysis);
	run_detect(analysis);
	finding = synth_finding(analysis, PO_FINDING_STEP_OUTLIERS);
	CHECK(finding != NULL);
	if (finding) {
		CHECK_NEAR(synth_number(finding, "period_steps"), 25, 0);
		CHECK_STR_EQ(synth_text(finding, "cause"), "checkpoint");
	}
	synth_destroy(analysis);
}

static void test_outlier_loader_advice_fits_config(void)
{
	static const struct synth_breakdown steps = {
	    .ms = {[PO_CAT_FORWARD] = 4, [PO_CAT_LOAD] = 5, [PO_CAT_OTHER] = 1}};
	struct po_analysis *analysis = synth_create(200, &steps, 2);
	const struct po_finding *finding;

	synth_config(analysis, "num_workers", "0");
	for (size_t i = 5; i < analysis->step_count; i += 10)
		SYNTH_STEP(analysis, i).category_ns[PO_CAT_LOAD] = 30000000;
	synth_relayout(analysis);
	run_detect(analysis);
	finding = synth_finding(analysis, PO_FINDING_STEP_OUTLIERS);
	CHECK(finding != NULL && finding->recommendation_count > 0);
	if (finding && finding->recommendation_count) {
		CHECK(strstr(finding->recommendations[0].action, "prefetch_factor") == NULL);
		CHECK(strstr(finding->recommendations[0].action, "persistent_workers") == NULL);
	}
	synth_destroy(analysis);
}

/* A resident set that settles by a fraction of a MiB over the run is no leak. */
static void test_rss_small_growth_silent(void)
{
	struct po_analysis *analysis = rss_run(0.002, 0, 0);

	run_detect(analysis);
	CHECK(synth_finding(analysis, PO_FINDING_HOST_MEMORY_GROWTH) == NULL);
	synth_destroy(analysis);
}

/* Workers that start again every 16 steps: their sum is a sawtooth, not a leak. */
static void test_rss_restarting_workers_no_growth(void)
{
	struct po_analysis *analysis = rss_run(0, 2, 16);

	run_detect(analysis);
	CHECK(synth_finding(analysis, PO_FINDING_HOST_MEMORY_GROWTH) == NULL);
	synth_destroy(analysis);
}

static void test_gpu_memory_growth(void)
{
	struct po_analysis *analysis = synth_create(100, &host_steps, 2);
	const struct po_finding *growth;

	for (size_t i = 0; i < analysis->step_count; i++)
		SYNTH_STEP(analysis, i).gpu_live_bytes =
		    512 * SYNTH_MIB + 4 * SYNTH_MIB * (int64_t)i;
	synth_mem_site(analysis, 100, PO_ROLE_MAIN, PO_STAGE_FORWARD, "cache", 400 * SYNTH_MIB, 0);
	run_detect(analysis);
	growth = synth_finding(analysis, PO_FINDING_GPU_MEMORY_GROWTH);
	CHECK(growth != NULL);
	if (growth) {
		CHECK_INT_EQ(growth->severity, PO_SEVERITY_CRITICAL);
		CHECK_STR_EQ(synth_text(growth, "label"), "cache");
	}
	CHECK(synth_finding(analysis, PO_FINDING_HOST_MEMORY_GROWTH) == NULL);
	synth_destroy(analysis);
}

static void test_gpu_idle_periodic_stall(void)
{
	static const struct synth_breakdown breakdown = {.ms = {[PO_CAT_DATA_WAIT] = 0.2,
								[PO_CAT_H2D_COPY] = 0.3,
								[PO_CAT_FORWARD] = 3,
								[PO_CAT_BACKWARD] = 4,
								[PO_CAT_OPTIMIZER] = 1,
								[PO_CAT_GPU_SYNC] = 1.5}};
	struct po_analysis *analysis = synth_create(100, &breakdown, 0);
	const struct po_finding *idle, *outliers;
	const struct po_recommendation *rec;

	for (size_t i = 9; i < 100; i += 10)
		SYNTH_STEP(analysis, i).category_ns[PO_CAT_CHECKPOINT] = 50 * SYNTH_MS;
	/* Sporadic slow steps between the stalls must not hide the period. */
	SYNTH_STEP(analysis, 23).category_ns[PO_CAT_FORWARD] += 6 * SYNTH_MS;
	SYNTH_STEP(analysis, 57).category_ns[PO_CAT_BACKWARD] += 7 * SYNTH_MS;
	SYNTH_STEP(analysis, 64).category_ns[PO_CAT_OTHER] += 5 * SYNTH_MS;
	synth_relayout(analysis);
	synth_gpu(analysis, 7);
	for (size_t i = 0; i < 100; i++) {
		synth_gap(analysis, i, 0, 0.5, PO_CAT_DATA_WAIT);
		if (i % 10 == 9)
			synth_gap(analysis, i, 10, 50, PO_CAT_CHECKPOINT);
	}
	run_detect(analysis);
	idle = synth_finding(analysis, PO_FINDING_GPU_IDLE);
	CHECK(idle != NULL);
	if (idle) {
		CHECK_INT_EQ(idle->severity, PO_SEVERITY_CRITICAL);
		CHECK_STR_EQ(synth_text(idle, "cause"), "checkpoint");
		CHECK_NEAR(synth_number(idle, "gaps"), 10, 0);
		/* 500 ms of stalls over the 99 steady steps (step 0 opens the epoch). */
		CHECK_NEAR(synth_number(idle, "idle_ms_per_step"), 500.0 / 99, 0.01);
		CHECK_INT_EQ(idle->window_count, 10);
		CHECK_INT_EQ(idle->step_count, 10);
		if (idle->step_count)
			CHECK_INT_EQ(idle->steps[0], 9);
		rec = synth_rec(idle, "checkpoint");
		CHECK(rec != NULL);
		if (rec)
			CHECK_NEAR(rec->predicted_step_ms, 10 + 18.0 / 99, 0.01);
	}
	outliers = synth_finding(analysis, PO_FINDING_STEP_OUTLIERS);
	CHECK(outliers != NULL);
	if (outliers) {
		CHECK_INT_EQ(outliers->severity, PO_SEVERITY_WARNING);
		CHECK_NEAR(synth_number(outliers, "period_steps"), 10, 0);
		/* The stall's own 10 steps: the 3 sporadic slow steps are not part of it. */
		CHECK_NEAR(synth_number(outliers, "outliers"), 10, 0);
		CHECK_NEAR(synth_number(outliers, "excess_ms_per_outlier"), 50, 0.5);
		CHECK_STR_EQ(synth_text(outliers, "cause"), "checkpoint");
	}
	CHECK(synth_finding(analysis, PO_FINDING_INPUT_BOUND) == NULL);
	CHECK_INT_EQ(analysis->diagnosis.verdict, PO_VERDICT_HOST_BOUND);
	check_sorted(analysis);
	synth_destroy(analysis);
}

/* Memory that settles after warm-up: no growth finding. */
static void flat_memory(struct po_analysis *analysis)
{
	analysis->memory.has_alloc_events = true;
	for (size_t i = 0; i < analysis->step_count; i++)
		SYNTH_STEP(analysis, i).host_live_bytes =
		    (i < 5 ? (int64_t)i * 8 : 40) * SYNTH_MIB + (int64_t)((i * 7919) % 5) * 1000;
}

/*
 * A GPU idle while the loop waits for a loader on saturated cores: input-bound says more
 * workers will not help, and gpu-idle gives the same answer for that knob (its advice is
 * input-bound's first one), not "more loader workers".
 */
static void test_gpu_idle_defers_to_input_bound(void)
{
	struct po_analysis *analysis = cpu_saturated_loader();
	const struct po_finding *input, *idle;

	flat_memory(analysis);
	synth_gpu(analysis, 3);
	for (size_t i = 0; i < analysis->step_count; i++)
		synth_gap(analysis, i, 0, 1.8, PO_CAT_DATA_WAIT);
	run_detect(analysis);
	input = synth_finding(analysis, PO_FINDING_INPUT_BOUND);
	idle = synth_finding(analysis, PO_FINDING_GPU_IDLE);
	CHECK(input != NULL && idle != NULL);
	if (!input || !idle)
		goto end;
	CHECK_STR_EQ(synth_text(input, "cause"), "cpu-saturated");
	CHECK(idle->recommendation_count > 0);
	for (size_t i = 0; i < idle->recommendation_count; i++) {
		const struct po_recommendation *rec = &idle->recommendations[i];

		CHECK(strstr(rec->action, "more loader workers") == NULL);
		if (input->recommendation_count > 0 && i == 0) {
			CHECK_INT_EQ(rec->knob, input->recommendations[0].knob);
			CHECK(strstr(rec->action, input->recommendations[0].action) != NULL);
		}
	}
end:
	synth_destroy(analysis);
}

static void test_compute_bound(void)
{
	static const struct synth_breakdown breakdown = {.ms = {[PO_CAT_DATA_WAIT] = 0.1,
								[PO_CAT_H2D_COPY] = 0.2,
								[PO_CAT_FORWARD] = 2,
								[PO_CAT_BACKWARD] = 2,
								[PO_CAT_OPTIMIZER] = 0.5,
								[PO_CAT_GPU_SYNC] = 15.2}};
	struct po_analysis *analysis = synth_create(150, &breakdown, 3);

	synth_config(analysis, "num_workers", "4");
	flat_memory(analysis);
	synth_gpu(analysis, 19);
	for (size_t i = 0; i < analysis->step_count; i++)
		synth_gap(analysis, i, 0, 0.4, PO_CAT_DATA_WAIT);
	run_detect(analysis);
	CHECK_INT_EQ(analysis->diagnosis.finding_count, 0);
	CHECK_INT_EQ(analysis->diagnosis.verdict, PO_VERDICT_GPU_BOUND);
	synth_destroy(analysis);
}

static void test_balanced(void)
{
	static const struct synth_breakdown breakdown = {.ms = {[PO_CAT_DATA_WAIT] = 0.3,
								[PO_CAT_H2D_COPY] = 0.5,
								[PO_CAT_FORWARD] = 4,
								[PO_CAT_BACKWARD] = 4,
								[PO_CAT_OPTIMIZER] = 1,
								[PO_CAT_GPU_SYNC] = 2.2}};
	struct synth_loader loader = {{3, 2, 0.5}, {0.2, 2, 0.5}, {"read", "crop", "stack"}};
	struct po_analysis *analysis = synth_create(150, &breakdown, 4);

	synth_config(analysis, "num_workers", "4");
	synth_workers(analysis, 4, &loader, 40);
	flat_memory(analysis);
	synth_gpu(analysis, 8);
	for (size_t i = 0; i < analysis->step_count; i++)
		synth_gap(analysis, i, 0, 0.8, PO_CAT_OPTIMIZER);
	synth_mem_site(analysis, 100, PO_ROLE_MAIN, PO_STAGE_FORWARD, "small", 4096, -1);
	run_detect(analysis);
	CHECK_INT_EQ(analysis->diagnosis.finding_count, 0);
	CHECK_INT_EQ(analysis->diagnosis.verdict, PO_VERDICT_BALANCED);
	synth_destroy(analysis);
}

static void test_few_steps(void)
{
	struct po_analysis *analysis = synth_create(15, &main_loading, 0);

	synth_config(analysis, "num_workers", "0");
	run_detect(analysis);
	CHECK(synth_finding(analysis, PO_FINDING_INPUT_BOUND) == NULL);
	CHECK(synth_finding(analysis, PO_FINDING_STEP_OUTLIERS) == NULL);
	CHECK_INT_EQ(analysis->diagnosis.verdict, PO_VERDICT_UNKNOWN);
	synth_destroy(analysis);
}

static void test_no_steps(void)
{
	struct po_analysis *analysis = synth_create(0, &main_loading, 0);

	run_detect(analysis);
	CHECK_INT_EQ(analysis->diagnosis.finding_count, 0);
	CHECK_INT_EQ(analysis->diagnosis.verdict, PO_VERDICT_UNKNOWN);
	synth_destroy(analysis);
}

static void test_lossy_data(void)
{
	struct po_analysis *clean = too_few_workers();
	struct po_analysis *lossy = too_few_workers();
	const struct po_finding *loss, *input_clean, *input_lossy;

	for (size_t i = 50; i < 80; i++) {
		SYNTH_STEP(lossy, i).flags |= PO_STEP_LOSSY;
		SYNTH_STEP(lossy, i).category_ns[PO_CAT_DATA_WAIT] = 900 * SYNTH_MS;
	}
	synth_relayout(lossy);
	lossy->quality =
	    (struct po_quality){.events = 100000, .discarded_events = 500, .lossy_steps = 30};
	run_detect(clean);
	run_detect(lossy);
	loss = synth_finding(lossy, PO_FINDING_TRACE_DATA_LOSS);
	CHECK(loss != NULL);
	if (loss) {
		CHECK_INT_EQ(loss->severity, PO_SEVERITY_CRITICAL);
		CHECK_NEAR(synth_number(loss, "discarded_events"), 500, 0);
		CHECK_NEAR(synth_number(loss, "lossy_steps"), 30, 0);
		CHECK(synth_rec(loss, "trace_buffers") != NULL &&
		      strstr(synth_rec(loss, "trace_buffers")->action, "--subbuf-size 8M") != NULL);
	}
	input_clean = synth_finding(clean, PO_FINDING_INPUT_BOUND);
	input_lossy = synth_finding(lossy, PO_FINDING_INPUT_BOUND);
	CHECK(input_clean && input_lossy);
	if (input_clean && input_lossy) {
		CHECK(input_lossy->confidence < input_clean->confidence - 0.1);
		/* The lossy steps' long waits are kept out. */
		CHECK_NEAR(synth_number(input_lossy, "wait_ms_per_step"), 12, 0.5);
		CHECK_NEAR(synth_number(input_lossy, "steps"), 200 - 30 - 1, 0);
	}
	CHECK(synth_finding(lossy, PO_FINDING_STEP_OUTLIERS) == NULL);
	CHECK_INT_EQ(lossy->diagnosis.verdict, PO_VERDICT_INPUT_BOUND);
	check_sorted(lossy);
	synth_destroy(clean);
	synth_destroy(lossy);
}

static void test_slow_h2d(void)
{
	static const struct synth_breakdown breakdown = {.ms = {[PO_CAT_DATA_WAIT] = 0.2,
								[PO_CAT_H2D_COPY] = 4,
								[PO_CAT_FORWARD] = 4,
								[PO_CAT_BACKWARD] = 4,
								[PO_CAT_OPTIMIZER] = 1}};
	struct synth_loader loader = {{1, 1, 0.2}, {0.1, 1, 0.2}, {"read", "crop", "stack"}};
	struct po_analysis *analysis = synth_create(100, &breakdown, 1);
	const struct po_finding *finding;
	const struct po_recommendation *rec;

	synth_config(analysis, "num_workers", "2");
	synth_config(analysis, "pin_memory", "false");
	synth_workers(analysis, 2, &loader, 20);
	run_detect(analysis);
	finding = synth_finding(analysis, PO_FINDING_INPUT_BOUND);
	CHECK(finding != NULL);
	if (!finding)
		goto end;
	CHECK_STR_EQ(synth_text(finding, "cause"), "slow-h2d");
	rec = synth_rec(finding, "pin_memory");
	CHECK(rec != NULL);
	if (rec)
		CHECK_NEAR(rec->predicted_step_ms, 13.2 - 2, 0.1);
	CHECK(synth_rec(finding, "num_workers") == NULL);
end:
	synth_destroy(analysis);
}

/* A few long waits (10% of the steps) are spikes for step-outliers, not input-bound. */
static void test_wait_spikes(void)
{
	struct po_analysis *analysis = synth_create(200, &host_steps, 2);

	synth_config(analysis, "num_workers", "2");
	for (size_t i = 5; i < 200; i += 10)
		SYNTH_STEP(analysis, i).category_ns[PO_CAT_DATA_WAIT] = 12 * SYNTH_MS;
	synth_relayout(analysis);
	run_detect(analysis);
	CHECK(synth_finding(analysis, PO_FINDING_INPUT_BOUND) == NULL);
	CHECK(synth_finding(analysis, PO_FINDING_STEP_OUTLIERS) != NULL);
	CHECK(analysis->diagnosis.verdict != PO_VERDICT_INPUT_BOUND);
	synth_destroy(analysis);
}

static void test_rules_change_outcome(void)
{
	struct po_analysis *analysis = too_few_workers();
	struct po_error err = {{0}};

	CHECK_INT_EQ(po_rules_set(&rules, "input-bound.warning_pct=60", &err), PO_STATUS_OK);
	CHECK_INT_EQ(po_rules_set(&rules, "input-bound.critical_pct=70", &err), PO_STATUS_OK);
	run_detect(analysis);
	CHECK(synth_finding(analysis, PO_FINDING_INPUT_BOUND) == NULL);
	CHECK(analysis->diagnosis.verdict != PO_VERDICT_INPUT_BOUND);
	po_rules_init(&rules);
	synth_destroy(analysis);
}

int main(void)
{
	po_rules_init(&rules);
	RUN(test_loading_in_main_process);
	RUN(test_too_few_workers);
	RUN(test_cpu_saturated);
	RUN(test_leak_in_workers);
	RUN(test_leak_in_main);
	RUN(test_unfreed_only_after_a_clean_end);
	RUN(test_rss_growth_attributed);
	RUN(test_rss_restarting_workers_no_growth);
	RUN(test_rss_small_growth_silent);
	RUN(test_open_at_end_is_no_loss);
	RUN(test_gpu_records_dropped);
	RUN(test_verdict_knows_what_it_cannot_know);
	RUN(test_moderate_periodic_checkpoint);
	RUN(test_outlier_loader_advice_fits_config);
	RUN(test_gpu_memory_growth);
	RUN(test_gpu_idle_periodic_stall);
	RUN(test_gpu_idle_defers_to_input_bound);
	RUN(test_compute_bound);
	RUN(test_balanced);
	RUN(test_few_steps);
	RUN(test_no_steps);
	RUN(test_lossy_data);
	RUN(test_slow_h2d);
	RUN(test_wait_spikes);
	RUN(test_rules_change_outcome);
	return CHECK_SUMMARY();
}
