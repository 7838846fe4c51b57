/*
 * summary_json.c: summary.json, the analysis result as a stable, versioned JSON document
 * (docs/summary-schema.md). Keys of every object are in byte order; times are milliseconds
 * relative to the trace's first event, so no absolute clock value appears.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_names.h"
#include "json_writer.h"
#include "render_json.h"

struct summary {
	struct po_json_writer *writer;	       /* weak */
	const struct po_analysis *analysis;    /* weak */
	int64_t base_ns;		       /* time 0 of the document */
	int category_order[PO_CATEGORY_COUNT]; /* categories by name, for keyed objects */
};

/* A trace time as milliseconds since time 0; null when unknown (negative). */
static void kv_time(struct summary *summary, const char *key, int64_t ns)
{
	po_json_write_key(summary->writer, key);
	if (ns < 0)
		po_json_write_null(summary->writer);
	else
		po_json_write_ms(summary->writer, ns - summary->base_ns);
}

static void kv_us(struct po_json_writer *writer, const char *key, int64_t us)
{
	po_json_write_key(writer, key);
	po_json_write_us_as_ms(writer, us);
}

/* part / whole in percent, 1 decimal; null when whole is not positive. */
static void kv_pct(struct po_json_writer *writer, const char *key, int64_t part, int64_t whole)
{
	po_json_write_key(writer, key);
	if (whole <= 0 || part < 0)
		po_json_write_null(writer);
	else
		po_json_write_double(writer, 100.0 * (double)part / (double)whole, 1);
}

/* total_ns / count as milliseconds; null when count is 0 or total unknown. */
static void kv_ms_per(struct po_json_writer *writer, const char *key, int64_t total_ns,
		      int64_t count)
{
	po_json_write_key(writer, key);
	if (count <= 0 || total_ns < 0)
		po_json_write_null(writer);
	else
		po_json_write_ms(writer, (total_ns + count / 2) / count);
}

static int compare_category_names(const void *left, const void *right)
{
	return strcmp(po_json_category_name(*(const int *)left),
		      po_json_category_name(*(const int *)right));
}

/* Objects keyed by category list them in name order, like every other object. */
static void sort_category_names(int order[PO_CATEGORY_COUNT])
{
	int category;

	for (category = 0; category < PO_CATEGORY_COUNT; category++)
		order[category] = category;
	qsort(order, PO_CATEGORY_COUNT, sizeof(int), compare_category_names);
}

/* {category: ms} in name order; skip_zero leaves out the categories at 0. */
static void write_category_us(struct summary *summary, const int64_t parts_us[PO_CATEGORY_COUNT],
			      bool skip_zero)
{
	struct po_json_writer *writer = summary->writer;
	int i;

	po_json_write_begin_object(writer);
	for (i = 0; i < PO_CATEGORY_COUNT; i++) {
		int category = summary->category_order[i];

		if (skip_zero && parts_us[category] == 0)
			continue;
		kv_us(writer, po_json_category_name(category), parts_us[category]);
	}
	po_json_write_end_object(writer);
}

static void write_category_ns(struct summary *summary, const int64_t ns[PO_CATEGORY_COUNT])
{
	int64_t parts_us[PO_CATEGORY_COUNT];
	int category;

	for (category = 0; category < PO_CATEGORY_COUNT; category++)
		parts_us[category] = po_json_ns_to_us(ns[category]);
	write_category_us(summary, parts_us, false);
}

static void write_breakdown(struct summary *summary)
{
	const struct po_step_stats *stats = &summary->analysis->step_stats;
	int64_t parts_us[PO_CATEGORY_COUNT];
	int64_t total_us;
	int i;

	po_json_write_key(summary->writer, "breakdown_ms");
	if (stats->clean_count > 0) {
		po_render_breakdown_us(stats, parts_us, &total_us);
		write_category_us(summary, parts_us, false);
		return;
	}
	po_json_write_begin_object(summary->writer);
	for (i = 0; i < PO_CATEGORY_COUNT; i++) {
		po_json_write_key(summary->writer,
				  po_json_category_name(summary->category_order[i]));
		po_json_write_null(summary->writer);
	}
	po_json_write_end_object(summary->writer);
}

/* ---- findings ---- */

/* One piece of evidence with its key as summary.json spells it, for sorting. */
struct named_evidence {
	char name[PO_EVIDENCE_KEY_MAX];	    /* a copy: the entries move while they are sorted */
	const struct po_evidence *evidence; /* weak: in the finding */
};

static int compare_evidence_names(const void *left, const void *right)
{
	const struct named_evidence *a = left;
	const struct named_evidence *b = right;
	int order = strcmp(a->name, b->name);

	/* Equal names keep their order in the finding, so the first one is written. */
	if (order == 0)
		order = (a->evidence > b->evidence) - (a->evidence < b->evidence);
	return order;
}

static void write_evidence_value(struct po_json_writer *writer, const struct po_evidence *evidence)
{
	switch (evidence->type) {
	case PO_EVIDENCE_NUMBER:
		po_json_write_double(writer, evidence->number, 3);
		break;
	case PO_EVIDENCE_INTEGER:
		po_json_write_int(writer, evidence->integer);
		break;
	default:
		po_json_write_string(writer, evidence->text);
		break;
	}
}

/*
 * {key: value} in the order of the keys' JSON names; of repeated names only the first is
 * written. Names, not ids, are compared: a JSON object holds each spelled name once.
 */
static enum po_status write_evidence(struct po_json_writer *writer,
				     const struct po_finding *finding, struct po_error *err)
{
	struct named_evidence *sorted;
	size_t i;

	sorted = calloc(finding->evidence_count ? finding->evidence_count : 1, sizeof(*sorted));
	if (!sorted) {
		po_error_set(err, "Failed to sort the evidence of a finding: out of memory");
		return PO_STATUS_NOMEM;
	}
	for (i = 0; i < finding->evidence_count; i++) {
		const struct po_evidence *evidence = &finding->evidence[i];
		char buffer[PO_EVIDENCE_KEY_MAX];

		sorted[i].evidence = evidence;
		snprintf(
		    sorted[i].name, sizeof(sorted[i].name), "%s",
		    po_evidence_key_name(evidence->key, evidence->param, buffer, sizeof(buffer)));
	}
	qsort(sorted, finding->evidence_count, sizeof(*sorted), compare_evidence_names);
	po_json_write_key(writer, "evidence");
	po_json_write_begin_object(writer);
	for (i = 0; i < finding->evidence_count; i++) {
		if (i > 0 && strcmp(sorted[i].name, sorted[i - 1].name) == 0)
			continue;
		po_json_write_key(writer, sorted[i].name);
		write_evidence_value(writer, sorted[i].evidence);
	}
	po_json_write_end_object(writer);
	free(sorted);
	return PO_STATUS_OK;
}

static void write_recommendation(struct po_json_writer *writer, const struct po_recommendation *rec)
{
	po_json_write_begin_object(writer);
	po_json_write_kv_string(writer, "action", rec->action);
	po_json_write_kv_string(writer, "effect", rec->effect);
	po_json_write_kv_string(writer, "knob", po_knob_name(rec->knob));
	po_json_write_kv_double(writer, "predicted_speedup", rec->predicted_speedup, 3);
	po_json_write_kv_double(writer, "predicted_step_ms", rec->predicted_step_ms, 3);
	po_json_write_kv_string(writer, "why", rec->why);
	po_json_write_end_object(writer);
}

static void write_finding_lists(struct summary *summary, const struct po_finding *finding)
{
	struct po_json_writer *writer = summary->writer;
	size_t i;

	po_json_write_key(writer, "recommendations");
	po_json_write_begin_array(writer);
	for (i = 0; i < finding->recommendation_count; i++)
		write_recommendation(writer, &finding->recommendations[i]);
	po_json_write_end_array(writer);
	po_json_write_kv_string(writer, PO_SK_SEVERITY, po_json_severity_name(finding->severity));
	po_json_write_key(writer, "steps");
	po_json_write_begin_array(writer);
	po_json_write_inline(writer);
	for (i = 0; i < finding->step_count; i++)
		po_json_write_int(writer, finding->steps[i]);
	po_json_write_end_array(writer);
	po_json_write_kv_string(writer, "summary", finding->summary);
	po_json_write_key(writer, "windows");
	po_json_write_begin_array(writer);
	po_json_write_inline_items(writer);
	for (i = 0; i < finding->window_count; i++) {
		po_json_write_begin_object(writer);
		kv_time(summary, "begin_ms", finding->windows[i].begin_ns);
		kv_time(summary, "end_ms", finding->windows[i].end_ns);
		po_json_write_end_object(writer);
	}
	po_json_write_end_array(writer);
}

static enum po_status write_findings(struct summary *summary, struct po_error *err)
{
	struct po_json_writer *writer = summary->writer;
	size_t i;

	po_json_write_key(writer, PO_SK_FINDINGS);
	po_json_write_begin_array(writer);
	for (i = 0; i < summary->analysis->diagnosis.finding_count; i++) {
		const struct po_finding *finding = &summary->analysis->diagnosis.findings[i];

		po_json_write_begin_object(writer);
		po_json_write_kv_double(writer, "confidence", finding->confidence, 2);
		if (write_evidence(writer, finding, err) != PO_STATUS_OK)
			return PO_STATUS_NOMEM;
		po_json_write_kv_string(writer, PO_SK_ID, po_json_finding_id_name(finding->id));
		write_finding_lists(summary, finding);
		po_json_write_end_object(writer);
	}
	po_json_write_end_array(writer);
	return PO_STATUS_OK;
}

enum po_status po_render_findings_json(struct po_json_writer *writer,
				       const struct po_analysis *analysis, struct po_error *err)
{
	struct summary summary = {
	    .writer = writer, .analysis = analysis, .base_ns = po_render_time_base_ns(analysis)};

	return write_findings(&summary, err);
}

/* ---- garbage collections ---- */

/* The roles by name, as keys are written: main, other, worker. */
static const enum po_role role_order[] = {PO_ROLE_MAIN, PO_ROLE_OTHER, PO_ROLE_WORKER};
_Static_assert(sizeof(role_order) / sizeof(role_order[0]) == PO_ROLE_COUNT,
	       "every role has its place in the gc member");

/* Per role with any: the collections the runtime reported and the objects they freed. */
static void write_gc(struct summary *summary)
{
	struct po_json_writer *writer = summary->writer;
	const struct po_gc_counts *gc = summary->analysis->gc;
	bool any = false;

	for (int r = 0; r < PO_ROLE_COUNT; r++)
		any |= gc[r].collections > 0 || gc[r].uncollectable > 0;
	if (!any)
		return;
	po_json_write_key(writer, "gc");
	po_json_write_begin_object(writer);
	for (size_t r = 0; r < sizeof(role_order) / sizeof(role_order[0]); r++) {
		const struct po_gc_counts *role = &gc[role_order[r]];

		if (!role->collections && !role->uncollectable)
			continue;
		po_json_write_key(writer, po_json_role_name(role_order[r]));
		po_json_write_begin_object(writer);
		po_json_write_inline(writer);
		po_json_write_kv_int(writer, "collected", role->collected);
		po_json_write_kv_int(writer, "collections", role->collections);
		po_json_write_kv_int(writer, "uncollectable", role->uncollectable);
		po_json_write_end_object(writer);
	}
	po_json_write_end_object(writer);
}

/* ---- GPU ---- */

static void write_kind_ms(struct po_json_writer *writer, const int64_t kind_ns[PO_GPU_KIND_COUNT])
{
	static const int kinds_by_name[] = {PO_GPU_KERNEL, PO_GPU_MEMCPY_D2D, PO_GPU_MEMCPY_D2H,
					    PO_GPU_MEMCPY_H2D, PO_GPU_MEMSET};
	size_t i;

	_Static_assert(sizeof(kinds_by_name) / sizeof(kinds_by_name[0]) == PO_GPU_KIND_COUNT,
		       "a GPU kind is missing from kinds_by_name");
	po_json_write_key(writer, "kind_ms");
	po_json_write_begin_object(writer);
	for (i = 0; i < PO_GPU_KIND_COUNT; i++)
		po_json_write_kv_ms(writer, po_json_gpu_kind_name(kinds_by_name[i]),
				    kind_ns[kinds_by_name[i]]);
	po_json_write_end_object(writer);
}

/* Activity time by the stage its launch was made in ("none": outside stages), by name. */
static void write_launched(struct po_json_writer *writer, const struct po_gpu_device *gpu)
{
	const char *names[PO_STAGE_COUNT + 1];
	int64_t ns[PO_STAGE_COUNT + 1];

	for (int i = 0; i <= PO_STAGE_COUNT; i++) {
		const char *name = i < PO_STAGE_COUNT ? po_json_stage_name(i) : "none";
		int64_t value = i < PO_STAGE_COUNT ? gpu->launched_ns_by_stage[i]
						   : gpu->launched_outside_stages_ns;
		int j = i;

		for (; j > 0 && strcmp(names[j - 1], name) > 0; j--) {
			names[j] = names[j - 1];
			ns[j] = ns[j - 1];
		}
		names[j] = name;
		ns[j] = value;
	}
	po_json_write_key(writer, "launched_ms_by_stage");
	po_json_write_begin_object(writer);
	for (int i = 0; i <= PO_STAGE_COUNT; i++)
		po_json_write_kv_ms(writer, names[i], ns[i]);
	po_json_write_end_object(writer);
}

static void write_streams(struct summary *summary, int32_t device)
{
	struct po_json_writer *writer = summary->writer;
	size_t i;

	po_json_write_key(writer, "streams");
	po_json_write_begin_array(writer);
	for (i = 0; i < summary->analysis->stream_count; i++) {
		const struct po_gpu_stream *stream = &summary->analysis->streams[i];

		if (stream->device != device)
			continue;
		po_json_write_begin_object(writer);
		po_json_write_kv_int(writer, "activity_count", stream->activity_count);
		po_json_write_kv_ms(writer, "busy_ms", stream->busy_ns);
		po_json_write_kv_int(writer, "bytes", stream->bytes);
		write_kind_ms(writer, stream->kind_ns);
		po_json_write_kv_int(writer, "stream", stream->stream);
		po_json_write_end_object(writer);
	}
	po_json_write_end_array(writer);
}

static void write_gaps(struct summary *summary, const struct po_gpu_device *gpu)
{
	const struct po_analysis *analysis = summary->analysis;
	struct po_json_writer *writer = summary->writer;
	size_t i;

	po_json_write_key(writer, "gaps");
	po_json_write_begin_array(writer);
	po_json_write_inline_items(writer);
	for (i = gpu->gaps_begin; i < gpu->gaps_begin + gpu->gap_count && i < analysis->gap_count;
	     i++) {
		const struct po_gpu_gap *gap = &analysis->gaps[i];
		bool in_step =
		    gap->step_index >= 0 && (size_t)gap->step_index < analysis->step_count;

		po_json_write_begin_object(writer);
		kv_time(summary, "begin_ms", gap->begin_ns);
		po_json_write_kv_string(writer, "cause", po_json_category_name(gap->cause));
		po_json_write_kv_ms(writer, "cause_ms", gap->cause_ns);
		kv_time(summary, "end_ms", gap->end_ns);
		po_json_write_kv_ms(writer, "ms", gap->end_ns - gap->begin_ns);
		po_json_write_kv_int_or_null(
		    writer, "step",
		    in_step ? po_analysis_step(analysis, (size_t)gap->step_index).index : -1);
		po_json_write_end_object(writer);
	}
	po_json_write_end_array(writer);
}

/* What the program used of the device's memory (-1: not recorded, written as null). */
static void write_gpu_memory(struct po_json_writer *writer, const struct po_gpu_memory *memory)
{
	po_json_write_key(writer, "memory");
	po_json_write_begin_object(writer);
	po_json_write_kv_int_or_null(writer, "free_min_bytes", memory->free_min_bytes);
	po_json_write_kv_int_or_null(writer, "headroom_bytes", memory->headroom_bytes);
	po_json_write_kv_int_or_null(writer, "peak_allocated_bytes", memory->peak_allocated_bytes);
	po_json_write_kv_int_or_null(writer, "reserved_max_bytes", memory->reserved_max_bytes);
	po_json_write_kv_int_or_null(writer, "resident_bytes", memory->resident_bytes);
	po_json_write_kv_int_or_null(writer, "step_bytes", memory->step_bytes);
	po_json_write_end_object(writer);
}

static void write_gpu_device(struct summary *summary, const struct po_gpu_device *gpu)
{
	struct po_json_writer *writer = summary->writer;

	po_json_write_begin_object(writer);
	po_json_write_kv_int(writer, "activity_count", gpu->activity_count);
	po_json_write_kv_ms(writer, "busy_ms", gpu->busy_ns);
	if (gpu->capability_major >= 0 && gpu->capability_minor >= 0) {
		char capability[24];

		snprintf(capability, sizeof(capability), "%d.%d", gpu->capability_major,
			 gpu->capability_minor);
		po_json_write_kv_string(writer, "capability", capability);
	} else {
		po_json_write_kv_string(writer, "capability", NULL);
	}
	po_json_write_kv_int(writer, "device", gpu->device);
	po_json_write_kv_int(writer, "gap_count", (int64_t)gpu->gap_count);
	po_json_write_key(writer, "gap_ms_by_cause");
	write_category_ns(summary, gpu->gap_ns_by_cause);
	write_gaps(summary, gpu);
	po_json_write_kv_int(writer, "gaps_not_kept", gpu->gaps_not_kept);
	po_json_write_kv_ms(writer, "idle_ms", gpu->idle_ns);
	po_json_write_kv_int(writer, "late_records", gpu->late_records);
	write_launched(writer, gpu);
	write_gpu_memory(writer, &gpu->memory);
	po_json_write_kv_int_or_null(writer, "memory_bytes", gpu->memory_bytes);
	po_json_write_kv_int_or_null(writer, "multiprocessors", gpu->multiprocessors);
	po_json_write_kv_string(writer, "name", gpu->name);
	write_streams(summary, gpu->device);
	po_json_write_kv_ms(writer, "unlaunched_ms", gpu->unlaunched_ns);
	po_json_write_key(writer, "window_busy_pct");
	if (isnan(gpu->window_busy_pct))
		po_json_write_null(writer);
	else
		po_json_write_double(writer, gpu->window_busy_pct, 1);
	po_json_write_kv_ms(writer, "window_ms", gpu->window_ns);
	po_json_write_end_object(writer);
}

static void write_gpu(struct summary *summary)
{
	size_t i;

	po_json_write_key(summary->writer, "gpu");
	po_json_write_begin_array(summary->writer);
	for (i = 0; i < summary->analysis->gpu_count; i++)
		write_gpu_device(summary, &summary->analysis->gpus[i]);
	po_json_write_end_array(summary->writer);
}

/* The steady steps' GPU work per step (result.h, struct po_gpu_work). */
static void write_gpu_work(struct summary *summary)
{
	const struct po_gpu_work *work = &summary->analysis->diagnosis.gpu_work;
	struct po_json_writer *writer = summary->writer;

	po_json_write_key(writer, "gpu_work");
	if (!work->present) {
		po_json_write_null(writer);
		return;
	}
	po_json_write_begin_object(writer);
	po_json_write_kv_double(writer, "busy_ms", work->busy_ms, 3);
	po_json_write_key(writer, "class_count");
	po_json_write_begin_object(writer);
	for (int c = 0; c < PO_KERNEL_CLASS_COUNT; c++)
		po_json_write_kv_double(writer, po_json_kernel_class_name(c), work->class_count[c],
					2);
	po_json_write_end_object(writer);
	po_json_write_key(writer, "class_ms");
	po_json_write_begin_object(writer);
	for (int c = 0; c < PO_KERNEL_CLASS_COUNT; c++)
		po_json_write_kv_double(writer, po_json_kernel_class_name(c), work->class_ms[c], 3);
	po_json_write_end_object(writer);
	po_json_write_key(writer, "class_pct");
	po_json_write_begin_object(writer);
	for (int c = 0; c < PO_KERNEL_CLASS_COUNT; c++)
		po_json_write_kv_double(writer, po_json_kernel_class_name(c), work->class_pct[c],
					2);
	po_json_write_end_object(writer);
	po_json_write_kv_double(writer, "graph_kernel_pct", work->graph_kernel_pct, 2);
	po_json_write_kv_double(writer, "host_ms", work->host_ms, 3);
	po_json_write_kv_double(writer, "host_us_per_kernel", work->host_us_per_kernel, 2);
	po_json_write_kv_double(writer, "input_ms", work->input_ms, 3);
	po_json_write_kv_double(writer, "kernel_ms", work->kernel_ms, 3);
	po_json_write_kv_double(writer, "kernels", work->kernels, 2);
	po_json_write_kv_double(writer, "launch_host_ms", work->launch_host_ms, 3);
	po_json_write_key(writer, "matrix_ms_by_precision");
	po_json_write_begin_object(writer);
	for (int p = 0; p < PO_PRECISION_COUNT; p++)
		po_json_write_kv_double(writer, po_json_precision_name(p), work->matrix_ms[p], 3);
	po_json_write_end_object(writer);
	po_json_write_key(writer, "matrix_pct_by_precision");
	po_json_write_begin_object(writer);
	for (int p = 0; p < PO_PRECISION_COUNT; p++)
		po_json_write_kv_double(writer, po_json_precision_name(p), work->matrix_pct[p], 2);
	po_json_write_end_object(writer);
	po_json_write_kv_double(writer, "mean_kernel_us", work->mean_kernel_us, 2);
	po_json_write_kv_double(writer, "short_kernel_pct", work->short_kernel_pct, 2);
	po_json_write_kv_double(writer, "small_kernel_pct", work->small_kernel_pct, 2);
	po_json_write_kv_double(writer, "work_ms", work->work_ms, 3);
	po_json_write_end_object(writer);
}

/* The longest kernels by name (result.h, struct po_gpu_kernel). */
static void write_kernels(struct summary *summary)
{
	const struct po_analysis *analysis = summary->analysis;
	struct po_json_writer *writer = summary->writer;

	po_json_write_key(writer, "kernels");
	po_json_write_begin_array(writer);
	for (size_t i = 0; i < analysis->kernel_count; i++) {
		const struct po_gpu_kernel *kernel = &analysis->kernels[i];

		po_json_write_begin_object(writer);
		po_json_write_kv_int(writer, "block_threads", kernel->block_threads);
		po_json_write_kv_string(writer, "class", po_json_kernel_class_name(kernel->cls));
		po_json_write_kv_int(writer, "count", kernel->count);
		po_json_write_kv_int(writer, "grid_blocks", kernel->grid_blocks);
		po_json_write_kv_double(writer, "mean_us", (double)kernel->mean_ns / 1e3, 2);
		po_json_write_kv_string(writer, "name", kernel->name);
		po_json_write_kv_string(writer, "precision",
					po_json_precision_name(kernel->precision));
		po_json_write_kv_string(writer, "short_name", kernel->short_name);
		po_json_write_kv_ms(writer, "total_ms", kernel->total_ns);
		po_json_write_end_object(writer);
	}
	po_json_write_end_array(writer);
}

/* ---- labels ---- */

static void write_labels(struct summary *summary)
{
	const struct po_analysis *analysis = summary->analysis;
	struct po_json_writer *writer = summary->writer;
	size_t i;

	po_json_write_kv_int(writer, "label_count", (int64_t)analysis->label_stat_count);
	po_json_write_key(writer, "labels");
	po_json_write_begin_array(writer);
	po_json_write_inline_items(writer);
	for (i = 0; i < analysis->label_stat_count && i < PO_SUMMARY_MAX_LABELS; i++) {
		const struct po_label_stat *stat = &analysis->label_stats[i];

		po_json_write_begin_object(writer);
		po_json_write_kv_int(writer, "count", stat->count);
		po_json_write_kv_ms_or_null(writer, "cpu_ms", stat->cpu_ns);
		po_json_write_kv_string(writer, "label", stat->label);
		po_json_write_kv_string(writer, "role", po_json_role_name(stat->role));
		po_json_write_kv_string(writer, "stage", po_json_stage_name(stat->stage));
		po_json_write_kv_ms(writer, "total_ms", stat->total_ns);
		po_json_write_end_object(writer);
	}
	po_json_write_end_array(writer);
}

/* ---- memory ---- */

static void write_site(struct po_json_writer *writer, const struct po_mem_site *site)
{
	char ip[24], offset[24];

	po_json_write_begin_object(writer);
	po_json_write_kv_int(writer, "alloc_bytes", site->alloc_bytes);
	po_json_write_kv_int(writer, "alloc_count", site->alloc_count);
	po_json_write_kv_int_or_null(writer, "device", site->device);
	po_json_write_kv_int_or_null(writer, "first_live_step", site->first_live_step);
	po_json_write_kv_int(writer, "free_bytes", site->free_bytes);
	po_json_write_kv_int(writer, "free_count", site->free_count);
	snprintf(ip, sizeof(ip), "0x%" PRIx64, site->ip);
	po_json_write_kv_string(writer, "ip", site->ip ? ip : NULL);
	po_json_write_kv_string(writer, "label", site->label);
	po_json_write_kv_int_or_null(writer, "last_live_step", site->last_live_step);
	po_json_write_kv_int(writer, "live_bytes", site->live_bytes);
	po_json_write_kv_int(writer, "live_count", site->live_count);
	po_json_write_kv_string(writer, "object", site->object);
	snprintf(offset, sizeof(offset), "0x%" PRIx64, site->offset);
	po_json_write_kv_string(writer, "offset", site->object ? offset : NULL);
	po_json_write_kv_int(writer, "pid", site->pid);
	po_json_write_kv_string(writer, "role", po_json_role_name(site->role));
	po_json_write_kv_string(writer, "source_file", site->source_file);
	po_json_write_kv_int_or_null(writer, "source_line",
				     site->source_line > 0 ? site->source_line : -1);
	po_json_write_kv_string(writer, "stage",
				site->stage >= 0 ? po_json_stage_name(site->stage) : NULL);
	po_json_write_kv_string(writer, "symbol", site->symbol);
	po_json_write_kv_string(writer, "symbol_note", site->symbol_note);
	po_json_write_end_object(writer);
}

static void write_memory_sources(struct po_json_writer *writer, const struct po_memory *memory)
{
	po_json_write_key(writer, "sources");
	po_json_write_begin_array(writer);
	po_json_write_inline(writer);
	if (memory->has_alloc_events)
		po_json_write_string(writer, "alloc_events");
	if (memory->has_gpu_counter)
		po_json_write_string(writer, "gpu_counter");
	if (memory->has_libc_events)
		po_json_write_string(writer, "libc_events");
	if (memory->has_rss)
		po_json_write_string(writer, "rss");
	po_json_write_end_array(writer);
}

static void write_memory(struct summary *summary)
{
	const struct po_analysis *analysis = summary->analysis;
	const struct po_memory *memory = &analysis->memory;
	struct po_json_writer *writer = summary->writer;
	size_t i;

	po_json_write_key(writer, "memory");
	po_json_write_begin_object(writer);
	po_json_write_kv_int_or_null(writer, "gpu_peak_bytes", memory->gpu_peak_bytes);
	po_json_write_kv_int_or_null(writer, "host_peak_bytes", memory->host_peak_bytes);
	po_json_write_kv_int_or_null(writer, "rss_peak_bytes", memory->rss_peak_bytes);
	po_json_write_kv_int(writer, "site_count", (int64_t)analysis->mem_site_count);
	po_json_write_key(writer, "sites");
	po_json_write_begin_array(writer);
	for (i = 0; i < analysis->mem_site_count && i < PO_SUMMARY_MAX_SITES; i++)
		write_site(writer, &analysis->mem_sites[i]);
	po_json_write_end_array(writer);
	write_memory_sources(writer, memory);
	po_json_write_kv_int(writer, "unmatched_frees", memory->unmatched_frees);
	po_json_write_end_object(writer);
}

/* ---- run and steps ---- */

static void write_run(struct summary *summary)
{
	const struct po_analysis *analysis = summary->analysis;
	struct po_json_writer *writer = summary->writer;
	size_t i;

	po_json_write_key(writer, "run");
	po_json_write_begin_object(writer);
	po_json_write_key(writer, "config");
	po_json_write_begin_object(writer);
	/* Sorted by key in the result; a key given twice keeps its first value. */
	for (i = 0; i < analysis->config_count; i++) {
		const char *key = analysis->config[i].key ? analysis->config[i].key : "";

		if (i > 0 && analysis->config[i - 1].key &&
		    strcmp(key, analysis->config[i - 1].key) == 0)
			continue;
		po_json_write_kv_string(writer, key, analysis->config[i].value);
	}
	po_json_write_end_object(writer);
	po_json_write_kv_int_or_null(writer, "cpu_count", analysis->cpu_count);
	po_json_write_kv_string(writer, "ending", po_json_run_ending_name(analysis->ending));
	po_json_write_kv_string(writer, "ending_detail", analysis->ending_detail);
	po_json_write_kv_string(writer, "framework", analysis->framework);
	po_json_write_kv_int_or_null(writer, "main_pid", analysis->main_pid);
	po_json_write_end_object(writer);
}

static void write_rate(struct po_json_writer *writer, const char *key, double rate, bool known)
{
	po_json_write_key(writer, key);
	if (known && rate >= 0)
		po_json_write_double(writer, rate, 3);
	else
		po_json_write_null(writer);
}

static void write_step_stats(struct summary *summary)
{
	const struct po_step_stats *stats = &summary->analysis->step_stats;
	struct po_json_writer *writer = summary->writer;
	int64_t parts_us[PO_CATEGORY_COUNT], mean_us;
	bool known = stats->clean_count > 0;

	po_render_breakdown_us(stats, parts_us, &mean_us);
	po_json_write_key(writer, PO_SK_STEPS);
	po_json_write_begin_object(writer);
	po_json_write_kv_int(writer, "clean_count", stats->clean_count);
	po_json_write_kv_int(writer, "count", stats->count);
	po_json_write_key(writer, "coverage_pct");
	if (stats->coverage_pct >= 0)
		po_json_write_double(writer, stats->coverage_pct, 1);
	else
		po_json_write_null(writer);
	po_json_write_kv_ms_or_null(writer, "max_ms", known ? stats->max_ns : -1);
	po_json_write_key(writer, "mean_ms");
	if (known)
		po_json_write_us_as_ms(writer, mean_us);
	else
		po_json_write_null(writer);
	po_json_write_kv_ms_or_null(writer, "min_ms", known ? stats->min_ns : -1);
	po_json_write_kv_ms_or_null(writer, "p50_ms", known ? stats->p50_ns : -1);
	po_json_write_kv_ms_or_null(writer, "p90_ms", known ? stats->p90_ns : -1);
	po_json_write_kv_ms_or_null(writer, "p95_ms", known ? stats->p95_ns : -1);
	po_json_write_kv_ms_or_null(writer, "p99_ms", known ? stats->p99_ns : -1);
	write_rate(writer, PO_SK_SAMPLES_PER_S, stats->samples_per_s, known);
	write_rate(writer, PO_SK_STEPS_PER_S, stats->steps_per_s, known);
	po_json_write_end_object(writer);
}

static void write_step_flags(struct po_json_writer *writer, uint32_t flags)
{
	po_json_write_key(writer, PO_SK_FLAGS);
	po_json_write_begin_array(writer);
	if (flags & PO_STEP_LOSSY)
		po_json_write_string(writer, PO_SK_FLAG_LOSSY);
	if (flags & PO_STEP_UNMATCHED)
		po_json_write_string(writer, "unmatched");
	po_json_write_end_array(writer);
}

static void write_step(struct summary *summary, const struct po_step *step)
{
	struct po_json_writer *writer = summary->writer;
	int64_t parts_us[PO_CATEGORY_COUNT], wall_us;

	po_render_step_parts_us(step, parts_us, &wall_us);
	po_json_write_begin_object(writer);
	po_json_write_kv_int_or_null(writer, "batch", step->batch);
	po_json_write_kv_int_or_null(writer, "batch_size", step->batch_size);
	kv_time(summary, "begin_ms", step->begin_ns);
	po_json_write_key(writer, PO_SK_CATEGORIES_MS);
	write_category_us(summary, parts_us, true);
	po_json_write_kv_ms_or_null(writer, "collate_ms", step->collate_ns);
	po_json_write_kv_int_or_null(writer, "epoch", step->epoch);
	write_step_flags(writer, step->flags);
	po_json_write_kv_ms_or_null(writer, PO_SK_GPU_BUSY_MS, step->gpu_busy_ns);
	po_json_write_kv_int_or_null(writer, "gpu_live_bytes", step->gpu_live_bytes);
	po_json_write_kv_int_or_null(writer, PO_SK_HOST_LIVE_BYTES, step->host_live_bytes);
	po_json_write_kv_int(writer, "index", step->index);
	po_json_write_kv_ms_or_null(writer, "load_ms", step->load_ns);
	po_json_write_kv_ms_or_null(writer, "preprocess_ms", step->preprocess_ns);
	po_json_write_kv_int_or_null(writer, "queue_depth", step->queue_depth);
	kv_time(summary, "ready_ms", step->ready_ns);
	po_json_write_kv_int_or_null(writer, PO_SK_RSS_BYTES, step->rss_bytes);
	kv_us(writer, PO_SK_WALL_MS, wall_us);
	po_json_write_kv_int_or_null(writer, "worker_pid", step->worker_pid);
	po_json_write_end_object(writer);
}

static void write_step_series(struct summary *summary)
{
	size_t i;

	po_json_write_key(summary->writer, PO_SK_STEP_SERIES);
	po_json_write_begin_array(summary->writer);
	po_json_write_inline_items(summary->writer);
	for (i = 0; i < summary->analysis->step_count; i++) {
		const struct po_step step = po_analysis_step(summary->analysis, i);

		write_step(summary, &step);
	}
	po_json_write_end_array(summary->writer);
}

/* ---- trace quality ---- */

static void write_discard_windows(struct summary *summary)
{
	const struct po_analysis *analysis = summary->analysis;
	struct po_json_writer *writer = summary->writer;
	size_t i;

	po_json_write_key(writer, "discard_windows");
	po_json_write_begin_array(writer);
	po_json_write_inline_items(writer);
	for (i = 0; i < analysis->quality.window_count; i++) {
		const struct po_discard_window *window = &analysis->discard_windows[i];

		po_json_write_begin_object(writer);
		kv_time(summary, "begin_ms", window->begin_ns);
		po_json_write_kv_int_or_null(writer, "count", window->count);
		kv_time(summary, "end_ms", window->end_ns);
		po_json_write_kv_string(writer, "kind",
					window->kind == PO_DISCARD_PACKETS ? "packets" : "events");
		po_json_write_kv_int_or_null(writer, "pid", window->pid);
		po_json_write_kv_int(writer, "trace_id", window->trace_id);
		po_json_write_end_object(writer);
	}
	po_json_write_end_array(writer);
}

static void write_missing_contexts(struct po_json_writer *writer, const struct po_quality *quality)
{
	po_json_write_key(writer, "missing_contexts");
	po_json_write_begin_array(writer);
	po_json_write_inline(writer);
	if (quality->missing_procname)
		po_json_write_string(writer, "procname");
	if (quality->missing_vpid)
		po_json_write_string(writer, "vpid");
	if (quality->missing_vtid)
		po_json_write_string(writer, "vtid");
	po_json_write_end_array(writer);
}

static void write_process(struct summary *summary, const struct po_process *process)
{
	struct po_json_writer *writer = summary->writer;
	bool cpu_known =
	    process->cpu_first_ns >= 0 && process->cpu_last_ns >= process->cpu_first_ns;

	po_json_write_begin_object(writer);
	po_json_write_kv_ms_or_null(writer, PO_SK_CPU_MS,
				    cpu_known ? process->cpu_last_ns - process->cpu_first_ns : -1);
	po_json_write_kv_int(writer, "event_count", process->event_count);
	kv_time(summary, "first_ms", process->first_ns);
	kv_time(summary, "last_ms", process->last_ns);
	po_json_write_kv_string(writer, "name", process->name);
	po_json_write_kv_int_or_null(writer, "parent_pid", process->parent_pid);
	po_json_write_kv_int(writer, "pid", process->pid);
	if (summary->analysis->distributed)
		po_json_write_kv_int_or_null(writer, "rank", process->rank);
	po_json_write_kv_string(writer, "role", po_json_role_name(process->role));
	po_json_write_kv_int_or_null(writer, "rss_peak_bytes", process->rss_peak_bytes);
	po_json_write_kv_ms_or_null(writer, PO_SK_RUNQ_WAIT_MS,
				    process->runq_first_ns >= 0 &&
					    process->runq_last_ns >= process->runq_first_ns
					? process->runq_last_ns - process->runq_first_ns
					: -1);
	po_json_write_kv_double(writer, "self_cost_ms_per_step",
				process->self_cost_per_step_ns / 1e6, 4);
	po_json_write_kv_int_or_null(writer, "worker_id", process->worker_id);
	po_json_write_end_object(writer);
}

static void write_processes(struct summary *summary)
{
	size_t i;

	po_json_write_key(summary->writer, PO_SK_PROCESSES);
	po_json_write_begin_array(summary->writer);
	for (i = 0; i < summary->analysis->process_count; i++)
		write_process(summary, &summary->analysis->processes[i]);
	po_json_write_end_array(summary->writer);
}

static void write_threads(struct summary *summary)
{
	const struct po_analysis *analysis = summary->analysis;
	struct po_json_writer *writer = summary->writer;
	size_t i;

	po_json_write_key(writer, "threads");
	po_json_write_begin_array(writer);
	po_json_write_inline_items(writer);
	for (i = 0; i < analysis->thread_count; i++) {
		po_json_write_begin_object(writer);
		po_json_write_kv_string(writer, "name", analysis->threads[i].name);
		po_json_write_kv_int(writer, "pid", analysis->threads[i].pid);
		po_json_write_kv_int(writer, "tid", analysis->threads[i].tid);
		po_json_write_kv_bool(writer, "training_loop",
				      analysis->threads[i].is_training_loop);
		po_json_write_end_object(writer);
	}
	po_json_write_end_array(writer);
}

static void write_warnings(struct po_json_writer *writer, const struct po_analysis *analysis)
{
	size_t i;

	po_json_write_key(writer, "warnings");
	po_json_write_begin_array(writer);
	for (i = 0; i < po_analysis_warning_count(analysis); i++) {
		po_json_write_begin_object(writer);
		po_json_write_kv_string(writer, "code", po_analysis_warning(analysis, i)->code);
		po_json_write_kv_string(writer, "text", po_analysis_warning(analysis, i)->text);
		po_json_write_end_object(writer);
	}
	po_json_write_end_array(writer);
}

/* Windows the trace is missing, found from its files (the first 64). */
static void write_missing_windows(struct summary *summary)
{
	const struct po_analysis *analysis = summary->analysis;
	struct po_json_writer *writer = summary->writer;

	po_json_write_key(writer, "missing_windows");
	po_json_write_begin_array(writer);
	for (size_t i = 0; i < analysis->missing_window_count; i++) {
		const struct po_missing_window *window = &analysis->missing_windows[i];

		po_json_write_begin_object(writer);
		kv_time(summary, "begin_ms", window->begin_ns);
		kv_time(summary, "end_ms", window->end_ns);
		po_json_write_kv_string(writer, "kind",
					po_json_missing_kind_name((int)window->kind));
		po_json_write_kv_string(writer, "path", window->path);
		po_json_write_end_object(writer);
	}
	po_json_write_end_array(writer);
}

/* The processes left out as not the recorded command's (the first 1,000). */
static void write_excluded(struct summary *summary)
{
	const struct po_analysis *analysis = summary->analysis;
	struct po_json_writer *writer = summary->writer;

	po_json_write_key(writer, "excluded_processes");
	po_json_write_begin_array(writer);
	for (size_t i = 0; i < analysis->excluded_process_count; i++) {
		const struct po_excluded_process *entry = &analysis->excluded_processes[i];

		po_json_write_begin_object(writer);
		po_json_write_kv_int(writer, "events", entry->events);
		po_json_write_kv_string(writer, "name", entry->name);
		po_json_write_kv_int(writer, "pid", entry->pid);
		po_json_write_kv_string(writer, "reason",
					po_json_excluded_reason_name((int)entry->reason));
		po_json_write_end_object(writer);
	}
	po_json_write_end_array(writer);
}

/* What the whole machine did beside the recorded processes; null without its series. */
static void write_machine(struct po_json_writer *writer, const struct po_analysis *analysis)
{
	const struct po_machine_load *machine = &analysis->machine;

	po_json_write_key(writer, PO_SK_MACHINE);
	if (!machine->known) {
		po_json_write_null(writer);
		return;
	}
	po_json_write_begin_object(writer);
	po_json_write_kv_double(writer, "busy_cores", machine->busy_cores, 3);
	po_json_write_kv_int_or_null(writer, PO_SK_CPU_COUNT,
				     analysis->cpu_count > 0 ? analysis->cpu_count : -1);
	po_json_write_kv_double(writer, PO_SK_OTHERS_CORES, machine->others_cores, 3);
	po_json_write_kv_int(writer, "pid", machine->pid);
	po_json_write_kv_int(writer, "series", machine->series);
	po_json_write_kv_ms(writer, "span_ms", machine->last_ns - machine->first_ns);
	po_json_write_kv_double(writer, "traced_cores", machine->traced_cores, 3);
	po_json_write_end_object(writer);
}

/* What the measurement cost (po_self_cost); null when nothing reported it. */
static void write_self_cost(struct po_json_writer *writer, const struct po_analysis *analysis)
{
	const struct po_self_cost *cost = &analysis->self_cost;

	po_json_write_key(writer, "self_cost");
	if (!cost->known) {
		po_json_write_null(writer);
		return;
	}
	po_json_write_begin_object(writer);
	po_json_write_kv_double(writer, "ms_per_step", cost->per_step_ns / 1e6, 4);
	po_json_write_kv_ms_or_null(writer, "processes_ms", cost->processes_ns);
	po_json_write_kv_double(writer, "processes_ms_per_step", cost->processes_per_step_ns / 1e6,
				4);
	po_json_write_kv_ms_or_null(writer, "recorder_ms", cost->recorder_ns);
	po_json_write_kv_double(writer, "recorder_ms_per_step", cost->recorder_per_step_ns / 1e6,
				4);
	po_json_write_kv_int(writer, "reporting_processes", cost->reporting_processes);
	po_json_write_kv_double(writer, "share_pct", analysis->diagnosis.self_cost_pct, 2);
	po_json_write_key(writer, "sources_ms");
	po_json_write_begin_object(writer);
#define PO_X(name, json) po_json_write_kv_ms_or_null(writer, json, cost->source_ns[PO_COST_##name]);
	PO_COST_SOURCES(PO_X)
#undef PO_X
	po_json_write_end_object(writer);
	po_json_write_kv_int(writer, "steps", cost->step_count);
	po_json_write_kv_bool(writer, "visible", analysis->diagnosis.self_cost_visible);
	po_json_write_end_object(writer);
}

static void write_trace(struct summary *summary)
{
	const struct po_quality *quality = &summary->analysis->quality;
	struct po_json_writer *writer = summary->writer;
	bool span_known = quality->first_ns >= 0 && quality->last_ns >= quality->first_ns;

	po_json_write_key(writer, "trace");
	po_json_write_begin_object(writer);
	write_discard_windows(summary);
	po_json_write_kv_int(writer, "discard_windows_not_kept", quality->windows_not_kept);
	po_json_write_kv_int(writer, "discarded_events", quality->discarded_events);
	po_json_write_kv_int(writer, "discarded_packets", quality->discarded_packets);
	po_json_write_kv_int(writer, "discarded_unknown_windows", quality->unknown_discards);
	po_json_write_kv_ms_or_null(writer, "duration_ms",
				    span_known ? quality->last_ns - quality->first_ns : -1);
	po_json_write_kv_int(writer, "events", quality->events);
	po_json_write_kv_int(writer, "excluded_events", quality->excluded_events);
	write_excluded(summary);
	po_json_write_kv_int(writer, "libc_events", quality->libc_events);
	po_json_write_kv_int(writer, "lossy_steps", quality->lossy_steps);
	write_machine(writer, summary->analysis);
	write_missing_contexts(writer, quality);
	write_missing_windows(summary);
	po_json_write_kv_int(writer, "open_at_end", quality->open_at_end);
	po_json_write_kv_bool(writer, "partial", quality->partial);
	write_processes(summary);
	po_json_write_kv_bool(writer, "processes_checked",
			      quality->recording_known && !quality->recording_unannounced);
	po_json_write_kv_int(writer, "profopt_events", quality->profopt_events);
	write_self_cost(writer, summary->analysis);
	po_json_write_kv_int(writer, "step_mismatches", quality->step_mismatches);
	write_threads(summary);
	po_json_write_kv_int(writer, "time_inversions", quality->time_inversions);
	po_json_write_kv_int(writer, "trace_count", quality->trace_count);
	po_json_write_kv_int(writer, "unmatched_begins", quality->unmatched_begins);
	po_json_write_kv_int(writer, "unmatched_ends", quality->unmatched_ends);
	write_warnings(writer, summary->analysis);
	po_json_write_end_object(writer);
}

/* ---- workers ---- */

static void write_worker(struct po_json_writer *writer, const struct po_worker *worker)
{
	int64_t lifetime_ns = worker->last_ns >= worker->first_ns && worker->first_ns >= 0
				  ? worker->last_ns - worker->first_ns
				  : -1;

	po_json_write_begin_object(writer);
	po_json_write_kv_int(writer, "batches", worker->batches);
	po_json_write_kv_ms(writer, "busy_ms", worker->busy_ns);
	kv_pct(writer, PO_SK_BUSY_PCT, worker->busy_ns, lifetime_ns);
	kv_ms_per(writer, "collate_cpu_ms", worker->stage_cpu_ns[PO_STAGE_COLLATE],
		  worker->batches);
	kv_ms_per(writer, "collate_ms", worker->stage_ns[PO_STAGE_COLLATE], worker->batches);
	po_json_write_kv_ms_or_null(writer, "lifetime_ms", lifetime_ns);
	kv_ms_per(writer, "load_cpu_ms", worker->stage_cpu_ns[PO_STAGE_LOAD], worker->batches);
	kv_ms_per(writer, "load_ms", worker->stage_ns[PO_STAGE_LOAD], worker->batches);
	po_json_write_kv_int(writer, "pid", worker->pid);
	kv_ms_per(writer, "preprocess_cpu_ms", worker->stage_cpu_ns[PO_STAGE_PREPROCESS],
		  worker->batches);
	kv_ms_per(writer, "preprocess_ms", worker->stage_ns[PO_STAGE_PREPROCESS], worker->batches);
	po_json_write_kv_int_or_null(writer, "worker_id", worker->worker_id);
	po_json_write_end_object(writer);
}

static void write_workers(struct summary *summary)
{
	size_t i;

	po_json_write_key(summary->writer, PO_SK_WORKERS);
	po_json_write_begin_array(summary->writer);
	for (i = 0; i < summary->analysis->worker_count; i++)
		write_worker(summary->writer, &summary->analysis->workers[i]);
	po_json_write_end_array(summary->writer);
}

/* ---- the document ---- */

/* The steady steps and the shares of the headline, as the detectors measured them. */
static void write_steady(struct summary *summary)
{
	const struct po_steady_stats *steady = &summary->analysis->diagnosis.steady;
	struct po_json_writer *writer = summary->writer;

	po_json_write_key(writer, PO_SK_STEADY);
	po_json_write_begin_object(writer);
	po_json_write_kv_int(writer, "count", steady->count);
	po_json_write_kv_double(writer, PO_SK_GPU_BUSY_PCT, steady->gpu_busy_pct,
				2); /* NaN: null */
	po_json_write_kv_bool(writer, "input_wait_includes_handoff", steady->handoff_is_input);
	po_json_write_kv_double(writer, "input_wait_pct", steady->input_wait_pct, 2);
	po_json_write_kv_ms_or_null(
	    writer, "mean_ms", isnan(steady->mean_ns) ? -1 : (int64_t)llround(steady->mean_ns));
	po_json_write_kv_int(writer, "startup_steps_per_epoch", steady->startup_steps);
	po_json_write_kv_double(writer, PO_SK_WORKERS_BUSY_PCT, steady->workers_busy_pct, 2);
	po_json_write_end_object(writer);
}

/*
 * The rules in effect that are not the defaults (--set, --config), so that a report can be
 * explained from its own output; every other rule has its documented default.
 */
static void write_rules(struct summary *summary)
{
	const struct po_analysis *analysis = summary->analysis;
	struct po_json_writer *writer = summary->writer;

	po_json_write_key(writer, "rules_changed");
	po_json_write_begin_array(writer);
	for (size_t i = 0; i < analysis->diagnosis.rule_change_count; i++) {
		const struct po_rule_change *change = &analysis->diagnosis.rule_changes[i];

		po_json_write_begin_object(writer);
		po_json_write_kv_double(writer, "default", change->default_value, 3);
		po_json_write_kv_string(writer, "rule", change->name);
		po_json_write_kv_double(writer, "value", change->value, 3);
		po_json_write_end_object(writer);
	}
	po_json_write_end_array(writer);
}

static enum po_status write_document(struct summary *summary, struct po_error *err)
{
	struct po_json_writer *writer = summary->writer;

	po_json_write_begin_object(writer);
	write_breakdown(summary);
	if (summary->analysis->diagnosis.comparison)
		po_render_comparison_json(writer, summary->analysis->diagnosis.comparison);
	po_render_ranks_json(writer, summary->analysis);
	if (write_findings(summary, err) != PO_STATUS_OK)
		return PO_STATUS_NOMEM;
	write_gc(summary);
	write_gpu(summary);
	write_gpu_work(summary);
	po_render_hotspots_json(writer, summary->analysis);
	write_kernels(summary);
	write_labels(summary);
	write_memory(summary);
	write_rules(summary);
	write_run(summary);
	po_json_write_kv_string(writer, PO_SK_SCHEMA, PO_SUMMARY_SCHEMA);
	write_steady(summary);
	write_step_series(summary);
	write_step_stats(summary);
	write_trace(summary);
	po_json_write_kv_string(writer, PO_SK_VERDICT,
				po_json_verdict_name(summary->analysis->diagnosis.verdict));
	po_json_write_kv_string(writer, "verdict_reason",
				summary->analysis->diagnosis.verdict_reason);
	write_workers(summary);
	po_json_write_end_object(writer);
	return po_analysis_steps_check(summary->analysis, err); /* steps read back intact */
}

enum po_status po_render_summary_json(const struct po_analysis *analysis, const char *path,
				      struct po_error *err)
{
	struct po_json_writer writer;
	struct summary summary = {
	    .writer = &writer, .analysis = analysis, .base_ns = po_render_time_base_ns(analysis)};
	enum po_status status;

	sort_category_names(summary.category_order);
	status = po_json_writer_open(&writer, path, err);
	if (status != PO_STATUS_OK)
		return status;
	status = write_document(&summary, err);
	if (status != PO_STATUS_OK) {
		po_json_writer_abandon(&writer);
		po_error_prepend(err, "Failed to write %s", path);
		return status;
	}
	return po_json_writer_close(&writer, err);
}
