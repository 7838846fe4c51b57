/* synth.c: the synthetic analysis results of synth.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "synth.h"

#define FIRST_NS (1000 * SYNTH_MS)
#define MAX_ITEMS 512

static void *alloc(struct po_analysis *analysis, size_t size)
{
	return po_arena_alloc(analysis->arena, size);
}

/* A deterministic factor in [1 - pct/100, 1 + pct/100]. */
static double jitter(size_t step, int category, double pct)
{
	uint64_t x = (uint64_t)step * 2654435761u + (uint64_t)category * 40503u + 12345u;

	x ^= x >> 13;
	x *= 0x5bd1e995u;
	x ^= x >> 15;
	return 1.0 + pct / 100.0 * ((double)(x % 2001) / 1000.0 - 1.0);
}

void synth_relayout(struct po_analysis *analysis)
{
	int64_t time_ns = FIRST_NS;

	for (size_t i = 0; i < analysis->step_count; i++) {
		struct po_step *step = po_analysis_edit_step(analysis, i);
		int64_t wall = 0;

		for (int c = 0; c < PO_CATEGORY_COUNT; c++)
			wall += step->category_ns[c];
		step->begin_ns = time_ns;
		step->end_ns = time_ns + wall;
		time_ns = step->end_ns;
	}
}

struct po_analysis *synth_create(size_t step_count, const struct synth_breakdown *breakdown,
				 double jitter_pct)
{
	struct po_analysis *analysis = calloc(1, sizeof(*analysis));
	struct po_step *steps = calloc(step_count + 1, sizeof(*steps));

	analysis->arena = po_arena_create();
	analysis->cpu_count = 8;
	analysis->main_pid = 100;
	analysis->config = alloc(analysis, MAX_ITEMS * sizeof(struct po_kv));
	po_run_settings_resolve(analysis);
	for (size_t i = 0; i < step_count; i++) {
		struct po_step *step = &steps[i];

		*step = (struct po_step){.index = (int64_t)i,
					 .batch_size = 32,
					 .batch = (int64_t)i,
					 .worker_pid = -1,
					 .ready_ns = -1,
					 .queue_depth = -1,
					 .load_ns = -1,
					 .preprocess_ns = -1,
					 .collate_ns = -1,
					 .host_live_bytes = -1,
					 .gpu_live_bytes = -1,
					 .rss_bytes = -1,
					 .main_rss_bytes = -1};
		for (int c = 0; c < PO_CATEGORY_COUNT; c++)
			step->category_ns[c] =
			    (int64_t)(breakdown->ms[c] * jitter(i, c, jitter_pct) * SYNTH_MS);
	}
	if (po_analysis_set_steps(analysis, steps, step_count) != PO_STATUS_OK)
		abort(); /* the tests cannot go on without their steps */
	free(steps);
	synth_relayout(analysis);
	analysis->processes = alloc(analysis, MAX_ITEMS * sizeof(struct po_process));
	analysis->processes[0] = (struct po_process){.pid = 100,
						     .role = PO_ROLE_MAIN,
						     .worker_id = -1,
						     .parent_pid = -1,
						     .first_ns = FIRST_NS,
						     .cpu_first_ns = -1,
						     .cpu_last_ns = -1,
						     .runq_first_ns = -1,
						     .runq_last_ns = -1,
						     .rss_first_bytes = -1,
						     .rss_last_bytes = -1,
						     .rss_peak_bytes = -1};
	analysis->process_count = 1;
	analysis->mem_sites = alloc(analysis, MAX_ITEMS * sizeof(struct po_mem_site));
	analysis->label_stats = alloc(analysis, MAX_ITEMS * sizeof(struct po_label_stat));
	analysis->diagnosis.verdict = PO_VERDICT_UNKNOWN;
	analysis->step_stats.coverage_pct = 100; /* steps back to back (synth_relayout) */
	return analysis;
}

void synth_destroy(struct po_analysis *analysis)
{
	po_step_store_destroy(analysis->step_store);
	free(analysis->diagnosis.rule_changes); /* the detectors' */
	free(analysis->diagnosis.warnings);
	po_arena_destroy(analysis->arena);
	free(analysis);
}

void synth_config(struct po_analysis *analysis, const char *key, const char *value)
{
	analysis->config[analysis->config_count++] = (struct po_kv){key, value};
	po_run_settings_resolve(analysis);
}

static int64_t run_end_ns(const struct po_analysis *analysis)
{
	return analysis->step_count ? po_analysis_step(analysis, analysis->step_count - 1).end_ns
				    : FIRST_NS;
}

void synth_workers(struct po_analysis *analysis, int worker_count,
		   const struct synth_loader *loader, double busy_pct)
{
	int64_t life_ns = run_end_ns(analysis) - FIRST_NS;

	analysis->workers = alloc(analysis, (size_t)worker_count * sizeof(struct po_worker));
	analysis->worker_count = (size_t)worker_count;
	for (int w = 0; w < worker_count; w++) {
		struct po_worker *worker = &analysis->workers[w];
		int64_t batches = (int64_t)analysis->step_count / worker_count;

		*worker = (struct po_worker){.pid = 200 + w,
					     .worker_id = w,
					     .batches = batches,
					     .first_ns = FIRST_NS,
					     .last_ns = FIRST_NS + life_ns};
		for (int s = 0; s < PO_STAGE_COUNT; s++)
			worker->stage_cpu_ns[s] = -1;
		for (int s = 0; s < 3; s++) {
			worker->stage_ns[PO_STAGE_LOAD + s] =
			    (int64_t)(loader->wall_ms[s] * SYNTH_MS) * batches;
			if (loader->cpu_ms[s] >= 0)
				worker->stage_cpu_ns[PO_STAGE_LOAD + s] =
				    (int64_t)(loader->cpu_ms[s] * SYNTH_MS) * batches;
		}
		worker->busy_ns = (int64_t)(busy_pct / 100.0 * (double)life_ns);
		analysis->processes[analysis->process_count++] =
		    (struct po_process){.pid = 200 + w,
					.role = PO_ROLE_WORKER,
					.worker_id = w,
					.parent_pid = 100,
					.cpu_first_ns = -1,
					.cpu_last_ns = -1,
					.runq_first_ns = -1,
					.runq_last_ns = -1};
	}
	for (size_t i = 0; i < analysis->step_count; i++) {
		SYNTH_STEP(analysis, i).load_ns = (int64_t)(loader->wall_ms[0] * SYNTH_MS);
		SYNTH_STEP(analysis, i).preprocess_ns = (int64_t)(loader->wall_ms[1] * SYNTH_MS);
		SYNTH_STEP(analysis, i).collate_ns = (int64_t)(loader->wall_ms[2] * SYNTH_MS);
		SYNTH_STEP(analysis, i).worker_pid = 200 + (int32_t)(i % (size_t)worker_count);
	}
	for (int s = 0; s < 3; s++) {
		analysis->label_stats[analysis->label_stat_count++] =
		    (struct po_label_stat){.role = PO_ROLE_WORKER,
					   .stage = (enum po_stage)(PO_STAGE_LOAD + s),
					   .label = loader->labels[s],
					   .count = (int64_t)analysis->step_count,
					   .total_ns = (int64_t)(loader->wall_ms[s] * SYNTH_MS) *
						       (int64_t)analysis->step_count,
					   .cpu_ns = -1};
	}
}

void synth_main_labels(struct po_analysis *analysis, const struct synth_loader *loader)
{
	for (int s = 0; s < 3; s++) {
		int64_t count = (int64_t)analysis->step_count;

		analysis->label_stats[analysis->label_stat_count++] = (struct po_label_stat){
		    .role = PO_ROLE_MAIN,
		    .stage = (enum po_stage)(PO_STAGE_LOAD + s),
		    .label = loader->labels[s],
		    .count = count,
		    .total_ns = (int64_t)(loader->wall_ms[s] * SYNTH_MS) * count,
		    .cpu_ns = loader->cpu_ms[s] < 0
				  ? -1
				  : (int64_t)(loader->cpu_ms[s] * SYNTH_MS) * count};
	}
}

void synth_gpu(struct po_analysis *analysis, double busy_ms)
{
	struct po_gpu_device *device = alloc(analysis, sizeof(*device));

	analysis->gpus = device;
	analysis->gpu_count = 1;
	analysis->gaps = alloc(analysis, MAX_ITEMS * sizeof(struct po_gpu_gap));
	device->device = 0;
	device->window_ns = run_end_ns(analysis) - FIRST_NS;
	device->busy_ns = (int64_t)(busy_ms * SYNTH_MS) * (int64_t)analysis->step_count;
	device->idle_ns = device->window_ns - device->busy_ns;
	for (size_t i = 0; i < analysis->step_count; i++)
		SYNTH_STEP(analysis, i).gpu_busy_ns = (int64_t)(busy_ms * SYNTH_MS);
}

void synth_gap(struct po_analysis *analysis, size_t step_index, double offset_ms, double length_ms,
	       enum po_category cause)
{
	struct po_gpu_gap *gap = &analysis->gaps[analysis->gap_count++];
	int64_t begin = SYNTH_STEP(analysis, step_index).begin_ns + (int64_t)(offset_ms * SYNTH_MS);

	*gap = (struct po_gpu_gap){.device = 0,
				   .begin_ns = begin,
				   .end_ns = begin + (int64_t)(length_ms * SYNTH_MS),
				   .step_index = (int64_t)step_index,
				   .cause = cause,
				   .cause_ns = (int64_t)(length_ms * SYNTH_MS)};
	analysis->gpus[0].gap_count = analysis->gap_count;
	analysis->gpus[0].gap_ns_by_cause[cause] += gap->end_ns - gap->begin_ns;
}

void synth_mem_site(struct po_analysis *analysis, int32_t pid, enum po_role role, int stage,
		    const char *label, int64_t live_bytes, int32_t device)
{
	analysis->mem_sites[analysis->mem_site_count++] = (struct po_mem_site){
	    .pid = pid,
	    .role = role,
	    .device = device,
	    .stage = stage,
	    .label = label,
	    .alloc_count = 100,
	    .alloc_bytes = live_bytes,
	    .live_count = live_bytes ? 100 : 0,
	    .live_bytes = live_bytes,
	    .first_live_step = live_bytes ? 0 : -1,
	    .last_live_step = live_bytes ? (int64_t)analysis->step_count - 1 : -1};
}

const struct po_finding *synth_finding(const struct po_analysis *analysis, enum po_finding_id id)
{
	for (size_t i = 0; i < analysis->diagnosis.finding_count; i++) {
		if (analysis->diagnosis.findings[i].id == id)
			return &analysis->diagnosis.findings[i];
	}
	return NULL;
}

/* By the JSON name, as summary.json's readers find it: a category's data_wait_ms_per_step too. */
const struct po_evidence *synth_evidence(const struct po_finding *finding, const char *key)
{
	for (size_t i = 0; finding && i < finding->evidence_count; i++) {
		const struct po_evidence *evidence = &finding->evidence[i];
		char buffer[PO_EVIDENCE_KEY_MAX];

		if (strcmp(po_evidence_key_name(evidence->key, evidence->param, buffer,
						sizeof(buffer)),
			   key) == 0)
			return evidence;
	}
	return NULL;
}

const char *synth_text(const struct po_finding *finding, const char *key)
{
	const struct po_evidence *evidence = synth_evidence(finding, key);

	return evidence && evidence->type == PO_EVIDENCE_TEXT ? evidence->text : NULL;
}

double synth_number(const struct po_finding *finding, const char *key)
{
	const struct po_evidence *evidence = synth_evidence(finding, key);

	if (!evidence)
		return NAN;
	if (evidence->type == PO_EVIDENCE_INTEGER)
		return (double)evidence->integer;
	return evidence->type == PO_EVIDENCE_NUMBER ? evidence->number : NAN;
}

const struct po_recommendation *synth_rec(const struct po_finding *finding, const char *knob)
{
	for (size_t i = 0; finding && i < finding->recommendation_count; i++) {
		if (strcmp(po_knob_name(finding->recommendations[i].knob), knob) == 0)
			return &finding->recommendations[i];
	}
	return NULL;
}
