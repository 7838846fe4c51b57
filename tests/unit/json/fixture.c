/* fixture.c: the synthetic analysis of fixture.h, everything allocated in its arena. */
#include <math.h>
#include <string.h>

#include "compare/compare.h"
#include "fixture.h"
#include "step_store.h"

#define MS (1000 * 1000LL)
#define T(ms_offset) (FIXTURE_FIRST_NS + (int64_t)((ms_offset)*MS))

#define ALLOC(analysis, type, count) po_arena_alloc((analysis)->arena, sizeof(type) * (count))

static void fill_run(struct po_analysis *analysis)
{
	struct po_kv *config = ALLOC(analysis, struct po_kv, 3);

	analysis->framework = "pytorch";
	analysis->cpu_count = 8;
	config[0] = (struct po_kv){"batch_size", "32"};
	config[1] = (struct po_kv){"dataset", FIXTURE_NASTY};
	config[2] = (struct po_kv){"num_workers", "2"};
	analysis->config = config;
	analysis->config_count = 3;
	analysis->main_pid = 100;
	analysis->diagnosis.steady = (struct po_steady_stats){3, 1, 105e6, 42.5, 30.25, NAN, false};
	analysis->self_cost = (struct po_self_cost){.known = true,
						    .source_ns = {MS, 4 * MS, 3 * MS},
						    .processes_ns = 8 * MS,
						    .recorder_ns = 32 * MS,
						    .reporting_processes = 1,
						    .step_count = 40,
						    .processes_per_step_ns = 0.2 * MS,
						    .recorder_per_step_ns = 0.8 * MS,
						    .per_step_ns = 1.0 * MS};
	analysis->diagnosis.self_cost_pct = 100.0 * 1.0 * MS / 105e6;
	analysis->diagnosis.self_cost_visible = false;
}

static void fill_quality(struct po_analysis *analysis)
{
	struct po_quality *quality = &analysis->quality;
	struct po_discard_window *windows = ALLOC(analysis, struct po_discard_window, 2);
	struct po_warning *warnings = ALLOC(analysis, struct po_warning, 2);
	struct po_excluded_process *excluded = ALLOC(analysis, struct po_excluded_process, 1);
	struct po_missing_window *missing = ALLOC(analysis, struct po_missing_window, 1);

	*quality = (struct po_quality){.events = 12345,
				       .profopt_events = 12000,
				       .libc_events = 345,
				       .discarded_events = 10,
				       .discarded_packets = 1,
				       .unknown_discards = 1,
				       .window_count = 2,
				       .unmatched_begins = 1,
				       .time_inversions = 2,
				       .step_mismatches = 1,
				       .missing_procname = true,
				       .lossy_steps = 1,
				       .trace_count = 3,
				       .excluded_processes = 1,
				       .missing_windows = 1,
				       .excluded_events = 42,
				       .recording_known = true,
				       .first_ns = T(0),
				       .last_ns = T(500.25)};
	windows[0] = (struct po_discard_window){PO_DISCARD_EVENTS, 1, 101, T(120), T(125), 10};
	windows[1] =
	    (struct po_discard_window){PO_DISCARD_PACKETS, 2, -1, -1, T(130), PO_COUNT_UNKNOWN};
	warnings[0] =
	    (struct po_warning){"trace-data-loss", "10 events and 1 packet were discarded"};
	warnings[1] = (struct po_warning){"missing-context", "no procname context: " FIXTURE_NASTY};
	analysis->discard_windows = windows;
	excluded[0] =
	    (struct po_excluded_process){900, PO_EXCLUDED_OTHER_RECORDING, "python3", T(10), 42};
	missing[0] = (struct po_missing_window){PO_MISSING_STREAM_ENDS_EARLY,
						"ust/uid/0/64-bit/profopt_1", T(400), T(500.25)};
	analysis->missing_windows = missing;
	analysis->missing_window_count = 1;
	analysis->excluded_processes = excluded;
	analysis->excluded_process_count = 1;
	analysis->warnings = warnings;
	analysis->warning_count = 2;
}

static void fill_processes(struct po_analysis *analysis)
{
	struct po_process *processes = ALLOC(analysis, struct po_process, 3);
	struct po_thread *threads = ALLOC(analysis, struct po_thread, 4);

	processes[0] = (struct po_process){100,
					   "python",
					   PO_ROLE_MAIN,
					   -1,
					   -1,
					   T(0),
					   T(500.25),
					   9000,
					   100 << 20,
					   140 << 20,
					   150 << 20,
					   0,
					   400 * MS,
					   0,
					   3 * MS,
					   PO_MEMORY_SETS_UNKNOWN,
					   {MS, 4 * MS, 3 * MS},
					   8 * MS,
					   0.2 * MS,
					   -1,
					   false};
	processes[1] = (struct po_process){101,
					   "pt_data_worker",
					   PO_ROLE_WORKER,
					   0,
					   100,
					   T(1),
					   T(499),
					   1500,
					   50 << 20,
					   60 << 20,
					   61 << 20,
					   -1,
					   -1,
					   -1,
					   -1,
					   PO_MEMORY_SETS_UNKNOWN,
					   {-1, -1, -1},
					   -1,
					   NAN,
					   -1,
					   false};
	processes[2] = (struct po_process){102,
					   "worker\xff\"1",
					   PO_ROLE_WORKER,
					   1,
					   100,
					   T(1.5),
					   T(498),
					   1500,
					   -1,
					   -1,
					   -1,
					   10 * MS,
					   90 * MS,
					   -1,
					   -1,
					   PO_MEMORY_SETS_UNKNOWN,
					   {-1, -1, -1},
					   -1,
					   NAN,
					   -1,
					   false};
	threads[0] = (struct po_thread){100, 100, "python", true};
	threads[1] = (struct po_thread){100, 105, "pin_memory", false};
	threads[2] = (struct po_thread){101, 101, "pt_data_worker", false};
	threads[3] = (struct po_thread){102, 102, FIXTURE_NASTY, false};
	analysis->processes = processes;
	analysis->process_count = 3;
	analysis->threads = threads;
	analysis->thread_count = 4;
}

/* Steps of 100.0004 ms whose parts round up together: the renderers must fix the sum. */
static void fill_step(struct po_step *step, int64_t index, double begin_ms, int64_t wait_ns)
{
	int64_t wall_ns = 100 * MS + 400;
	int64_t rest_ns = wall_ns - wait_ns;

	*step = (struct po_step){.index = index,
				 .epoch = 0,
				 .batch_size = 32,
				 .begin_ns = T(begin_ms),
				 .end_ns = T(begin_ms) + wall_ns,
				 .batch = index,
				 .worker_pid = 101 + (int32_t)(index % 2),
				 .ready_ns = T(begin_ms) + wait_ns - 500,
				 .queue_depth = 0,
				 .load_ns = 30 * MS,
				 .preprocess_ns = 20 * MS,
				 .collate_ns = 5 * MS + 1,
				 .gpu_busy_ns = 40 * MS,
				 .host_live_bytes = 1000 * (index + 1),
				 .gpu_live_bytes = -1,
				 .rss_bytes = 300 << 20};
	step->category_ns[PO_CAT_DATA_WAIT] = wait_ns;
	step->category_ns[PO_CAT_FORWARD] = rest_ns / 3 + 500;
	step->category_ns[PO_CAT_BACKWARD] = rest_ns / 3 + 500;
	step->category_ns[PO_CAT_OPTIMIZER] = rest_ns / 3 / 2 + 500;
	step->category_ns[PO_CAT_OTHER] = rest_ns - step->category_ns[PO_CAT_FORWARD] -
					  step->category_ns[PO_CAT_BACKWARD] -
					  step->category_ns[PO_CAT_OPTIMIZER];
}

static void fill_stats(struct po_analysis *analysis)
{
	struct po_step_stats *stats = &analysis->step_stats;
	size_t i, category;

	*stats = (struct po_step_stats){.count = 4,
					.clean_count = 3,
					.min_ns = 100 * MS + 400,
					.p50_ns = 100 * MS + 400,
					.p90_ns = 100 * MS + 400,
					.p95_ns = 100 * MS + 400,
					.p99_ns = 100 * MS + 400,
					.max_ns = 100 * MS + 400,
					.coverage_pct = 99.6};
	for (i = 0; i < analysis->step_count; i++) {
		const struct po_step step = po_analysis_step(analysis, i);

		if (step.flags & PO_STEP_LOSSY)
			continue;
		stats->mean_ns += (double)(step.end_ns - step.begin_ns) / 3;
		for (category = 0; category < PO_CATEGORY_COUNT; category++)
			stats->category_mean_ns[category] += (double)step.category_ns[category] / 3;
	}
	stats->steps_per_s = 1e9 / stats->mean_ns;
	stats->samples_per_s = 32 * stats->steps_per_s;
}

static bool fill_steps(struct po_analysis *analysis)
{
	struct po_step steps[4];

	fill_step(&steps[0], 0, 10, 60 * MS + 333);
	fill_step(&steps[1], 1, 110.5, 61 * MS + 777);
	fill_step(&steps[2], 2, 211, 59 * MS + 1499);
	fill_step(&steps[3], 3, 312, 62 * MS);
	steps[2].flags = PO_STEP_LOSSY | PO_STEP_UNMATCHED;
	steps[2].batch_size = -1;
	steps[3].worker_pid = -1;
	if (po_analysis_set_steps(analysis, steps, 4) != PO_STATUS_OK)
		return false;
	fill_stats(analysis);
	return true;
}

static void fill_workers(struct po_analysis *analysis)
{
	struct po_worker *workers = ALLOC(analysis, struct po_worker, 2);
	struct po_label_stat *labels = ALLOC(analysis, struct po_label_stat, 2);
	int i;

	for (i = 0; i < 2; i++) {
		workers[i] = (struct po_worker){.pid = 101 + i,
						.worker_id = i,
						.batches = 2 + i,
						.busy_ns = 300 * MS + i,
						.first_ns = T(1),
						.last_ns = T(499)};
		workers[i].stage_ns[PO_STAGE_LOAD] = 60 * MS + 1;
		workers[i].stage_ns[PO_STAGE_PREPROCESS] = 40 * MS;
		workers[i].stage_ns[PO_STAGE_COLLATE] = 10 * MS;
		memset(workers[i].stage_cpu_ns, 0xff, sizeof(workers[i].stage_cpu_ns));
	}
	workers[0].stage_cpu_ns[PO_STAGE_LOAD] = 20 * MS;
	labels[0] = (struct po_label_stat){PO_ROLE_WORKER, PO_STAGE_LOAD, "decode_jpeg", 5,
					   120 * MS,	   40 * MS};
	labels[1] =
	    (struct po_label_stat){PO_ROLE_MAIN, PO_STAGE_FORWARD, FIXTURE_NASTY, 4, 80 * MS, -1};
	analysis->workers = workers;
	analysis->worker_count = 2;
	analysis->label_stats = labels;
	analysis->label_stat_count = 2;
}

static void fill_gpu(struct po_analysis *analysis)
{
	struct po_gpu_device *gpu = ALLOC(analysis, struct po_gpu_device, 1);
	struct po_gpu_stream *streams = ALLOC(analysis, struct po_gpu_stream, 2);
	struct po_gpu_gap *gaps = ALLOC(analysis, struct po_gpu_gap, 2);

	*gpu = (struct po_gpu_device){.device = 0,
				      .first_ns = T(12),
				      .last_ns = T(410),
				      .activity_count = 40,
				      .busy_ns = 160 * MS,
				      .window_ns = 400 * MS + 1600,
				      .idle_ns = 240 * MS + 1600,
				      .window_busy_pct = 100.0 * (160 * MS) / (400 * MS + 1600),
				      .gaps_begin = 0,
				      .gap_count = 2,
				      .gaps_not_kept = 3,
				      .late_records = 0};
	gpu->launched_ns_by_stage[PO_STAGE_FORWARD] = 90 * MS + 1;
	gpu->launched_ns_by_stage[PO_STAGE_BACKWARD] = 50 * MS;
	gpu->launched_outside_stages_ns = 2 * MS;
	gpu->unlaunched_ns = 18 * MS;
	gpu->gap_ns_by_cause[PO_CAT_DATA_WAIT] = 120 * MS;
	gpu->gap_ns_by_cause[PO_CAT_OPTIMIZER] = 5 * MS;
	streams[0] = (struct po_gpu_stream){0, 7, 150 * MS, 30, {140 * MS, 10 * MS}, 1 << 20};
	streams[1] = (struct po_gpu_stream){0, 13, 20 * MS, 10, {0, 0, 20 * MS}, 4096};
	gaps[0] = (struct po_gpu_gap){0, T(10), T(70), 0, PO_CAT_DATA_WAIT, 60 * MS};
	gaps[1] = (struct po_gpu_gap){0, T(300), T(305), -1, PO_CAT_OPTIMIZER, 5 * MS};
	analysis->gpus = gpu;
	analysis->gpu_count = 1;
	analysis->streams = streams;
	analysis->stream_count = 2;
	analysis->gaps = gaps;
	analysis->gap_count = 2;
}

static void fill_memory(struct po_analysis *analysis)
{
	struct po_mem_site *sites = ALLOC(analysis, struct po_mem_site, 2);

	analysis->memory =
	    (struct po_memory){true, true, true, false, 64 << 20, -1, 150 << 20, 2, -1};
	sites[0] = (struct po_mem_site){101,
					PO_ROLE_WORKER,
					-1,
					PO_STAGE_LOAD,
					FIXTURE_NASTY,
					0x7f00deadbeefULL,
					40,
					4 << 20,
					10,
					1 << 20,
					30,
					3 << 20,
					0,
					3,
					NULL,
					0,
					NULL,
					NULL,
					NULL,
					-1,
					NULL,
					false};
	sites[1] = (struct po_mem_site){100,  PO_ROLE_MAIN, 0,	  -1, NULL, 0,	  4,	4096,
					4,    4096,	    0,	  0,  -1,   -1,	  NULL, 0,
					NULL, NULL,	    NULL, -1, NULL, false};
	analysis->mem_sites = sites;
	analysis->mem_site_count = 2;
}

/* Step 1's kept timeline; *shared is a span step 2's timeline keeps too. */
static void fill_detail(struct po_analysis *analysis, struct po_step_detail *detail, size_t index,
			uint32_t reasons)
{
	const struct po_step copy = po_analysis_step(analysis, index);
	const struct po_step *step = &copy;
	struct po_span *spans = ALLOC(analysis, struct po_span, 5);
	struct po_counter_sample *counters = ALLOC(analysis, struct po_counter_sample, 2);
	int64_t begin = step->begin_ns;

	spans[0] =
	    (struct po_span){PO_SPAN_STEP, 0, 100, 100, -1, -1, NULL, begin, step->end_ns, -1};
	spans[1] = (struct po_span){
	    PO_SPAN_STAGE, PO_STAGE_DATA_WAIT,	100,	    100, -1, -1, FIXTURE_NASTY,
	    begin,	   begin + 60 * MS + 7, step->batch};
	spans[2] = (struct po_span){PO_SPAN_GPU,     PO_GPU_KERNEL,   100, -1, 0, 7, "sgemm_128x64",
				    begin + 61 * MS, begin + 80 * MS, -1};
	spans[3] = (struct po_span){PO_SPAN_SYNC,    0, 100, 100, 0, 7, NULL, begin + 95 * MS,
				    begin + 99 * MS, -1};
	/* A loader span that runs across both kept steps: written once. */
	spans[4] = (struct po_span){PO_SPAN_STAGE, PO_STAGE_LOAD, 101,	  101, -1, -1,
				    "decode_jpeg", T(150),	  T(250), 3};
	/* The RSS changes between the two steps, the GPU memory does not (written once). */
	counters[0] = (struct po_counter_sample){100, PO_COUNTER_HOST_RSS, -1, begin + 1,
						 (300 << 20) + (int64_t)index * 4096};
	counters[1] =
	    (struct po_counter_sample){100, PO_COUNTER_GPU_MEM_USED, 0, begin + 2, 1 << 30};
	*detail = (struct po_step_detail){index, reasons,  begin, step->end_ns, spans,
					  5,	 counters, 2,	  index == 2};
}

static void fill_details(struct po_analysis *analysis)
{
	struct po_step_detail *details = ALLOC(analysis, struct po_step_detail, 2);

	fill_detail(analysis, &details[0], 1, PO_DETAIL_SLOWEST | PO_DETAIL_MEDIAN);
	fill_detail(analysis, &details[1], 2, PO_DETAIL_NEIGHBOR | PO_DETAIL_STALL);
	analysis->details = details;
	analysis->detail_count = 2;
}

static void fill_findings(struct po_analysis *analysis)
{
	struct po_finding *findings = ALLOC(analysis, struct po_finding, 2);
	struct po_evidence *evidence = ALLOC(analysis, struct po_evidence, 4);
	struct po_recommendation *recs = ALLOC(analysis, struct po_recommendation, 2);
	int64_t *steps = ALLOC(analysis, int64_t, 2);
	struct po_window *windows = ALLOC(analysis, struct po_window, 1);

	evidence[0] = (struct po_evidence){
	    PO_EVIDENCE_WAIT_SHARE_PCT, PO_EVIDENCE_NUMBER, 60.4567, 0, NULL, {0}};
	evidence[1] =
	    (struct po_evidence){PO_EVIDENCE_LABEL, PO_EVIDENCE_TEXT, 0, 0, FIXTURE_NASTY, {0}};
	evidence[2] =
	    (struct po_evidence){PO_EVIDENCE_NUM_WORKERS, PO_EVIDENCE_INTEGER, 0, 2, NULL, {0}};
	evidence[3] =
	    (struct po_evidence){PO_EVIDENCE_LABEL, PO_EVIDENCE_TEXT, 0, 0, "repeated", {0}};
	recs[0] = (struct po_recommendation){PO_KNOB_NUM_WORKERS,
					     "set num_workers=6",
					     "workers are busy 99% of the time",
					     "step 40 ms",
					     40.0,
					     2.5};
	recs[1] = (struct po_recommendation){
	    PO_KNOB_PIN_MEMORY, "set pin_memory=True", "copies wait", "unknown", NAN, NAN};
	steps[0] = 1;
	steps[1] = 3;
	windows[0] = (struct po_window){T(110.5), T(171)};
	findings[0] = (struct po_finding){PO_FINDING_INPUT_BOUND,
					  PO_SEVERITY_CRITICAL,
					  0.9,
					  "The training loop waits for data 60% of each step",
					  evidence,
					  4,
					  recs,
					  2,
					  steps,
					  2,
					  windows,
					  1};
	findings[1] = (struct po_finding){PO_FINDING_GPU_IDLE,
					  PO_SEVERITY_WARNING,
					  0.756,
					  "GPU 0 is idle 60% of the time",
					  NULL,
					  0,
					  NULL,
					  0,
					  NULL,
					  0,
					  NULL,
					  0};
	analysis->diagnosis.findings = findings;
	analysis->diagnosis.finding_count = 2;
	analysis->diagnosis.verdict = PO_VERDICT_INPUT_BOUND;
}

/* As if run with --baseline: one significant change, one untested, one finding resolved. */
static void fill_comparison(struct po_analysis *analysis)
{
	struct po_comparison *comparison = ALLOC(analysis, struct po_comparison, 1);
	struct po_metric_change *metrics = ALLOC(analysis, struct po_metric_change, 2);
	struct po_finding_change *findings = ALLOC(analysis, struct po_finding_change, 1);
	const char **gates = ALLOC(analysis, const char *, 1);

	metrics[0] =
	    (struct po_metric_change){PO_CMP_STEPS_P50,	     80.0,	100.0004, 20.0004, 25.0005,
				      PO_CHANGE_SIGNIFICANT, 0.0001234, 18.5,	  21.5};
	metrics[1] = (struct po_metric_change){PO_CMP_STEPS_PER_S, 12.5, 10.0, -2.5, -20.0,
					       PO_CHANGE_UNTESTED, NAN,	 NAN,  NAN};
	findings[0] =
	    (struct po_finding_change){"step-outliers", PO_FINDING_RESOLVED, "info", NULL};
	gates[0] = "steps.p50_ms > +10%";
	*comparison = (struct po_comparison){.baseline = "baseline/" FIXTURE_NASTY,
					     .old_verdict = "balanced",
					     .new_verdict = "input-bound",
					     .metrics = metrics,
					     .metric_count = 2,
					     .findings = findings,
					     .finding_count = 1,
					     .resolved_findings = 1,
					     .gates_tripped = gates,
					     .gates_tripped_count = 1};
	analysis->diagnosis.comparison = comparison;
}

struct po_analysis *fixture_create(void)
{
	struct po_arena *arena = po_arena_create();
	struct po_analysis *analysis;

	if (!arena)
		return NULL;
	analysis = po_arena_alloc(arena, sizeof(*analysis));
	if (!analysis) {
		po_arena_destroy(arena);
		return NULL;
	}
	analysis->arena = arena;
	fill_run(analysis);
	fill_quality(analysis);
	fill_processes(analysis);
	if (!fill_steps(analysis)) {
		po_arena_destroy(arena);
		return NULL;
	}
	fill_workers(analysis);
	fill_gpu(analysis);
	fill_memory(analysis);
	fill_details(analysis);
	fill_findings(analysis);
	fill_comparison(analysis);
	return analysis;
}

void fixture_destroy(struct po_analysis *analysis)
{
	if (analysis) {
		po_step_store_destroy(analysis->step_store);
		po_arena_destroy(analysis->arena);
	}
}
