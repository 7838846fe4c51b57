/*
 * partial_json.c: partial.json, a host's ranks as a small summary that a merge of many
 * hosts reads (profopt-analyze --partial, docs/distributed.md): each rank's own loop, and
 * the collectives and steady wall times of the sampled steps (model/distributed.h,
 * PO_PARTIAL_STEPS), so that its size does not grow with the run. Times of collectives
 * are nanoseconds from origin_ns, which is written as a string: a trace clock's value does
 * not fit a JSON number exactly. Also the merged job's summary.json (--merge).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "json_names.h"
#include "json_writer.h"
#include "render_json.h"

static void write_categories(struct po_json_writer *writer, const struct po_rank_summary *rank)
{
	po_json_write_key(writer, "category_mean_ns");
	po_json_write_begin_object(writer);
	po_json_write_inline(writer);
	for (int c = 0; c < PO_CATEGORY_COUNT; c++)
		po_json_write_kv_double(writer, po_json_category_name((enum po_category)c),
					rank->steady_steps > 0 ? rank->category_mean_ns[c] : NAN,
					1);
	po_json_write_end_object(writer);
}

/* The rank's sampled steady steps: [step, wall_ns] pairs (walls are sorted by rank). */
static void write_walls(struct po_json_writer *writer, const struct po_distributed *d, int32_t rank)
{
	po_json_write_key(writer, "walls");
	po_json_write_begin_array(writer);
	po_json_write_inline_items(writer);
	for (size_t i = 0; i < d->wall_count; i++) {
		if (d->walls[i].rank != rank)
			continue;
		po_json_write_begin_array(writer);
		po_json_write_int(writer, d->walls[i].step);
		po_json_write_int(writer, d->walls[i].wall_ns);
		po_json_write_end_array(writer);
	}
	po_json_write_end_array(writer);
}

static void write_part_rank(struct po_json_writer *writer, const struct po_distributed *d,
			    const struct po_rank_summary *rank)
{
	po_json_write_begin_object(writer);
	write_categories(writer, rank);
	po_json_write_kv_string(writer, "host", rank->host);
	po_json_write_kv_int(writer, "local_rank", rank->local_rank);
	po_json_write_kv_bool(writer, "local_rank_inferred", rank->local_rank_inferred);
	po_json_write_kv_double(writer, "mean_step_ns", rank->mean_step_ns, 1);
	po_json_write_kv_int(writer, "p50_step_ns", rank->p50_step_ns);
	po_json_write_kv_int(writer, "pid", rank->pid);
	po_json_write_kv_int(writer, "rank", rank->rank);
	po_json_write_kv_int(writer, "recording", rank->recording);
	po_json_write_kv_int(writer, "steady_steps", rank->steady_steps);
	po_json_write_kv_int(writer, "steps", rank->steps);
	write_walls(writer, d, rank->rank);
	po_json_write_kv_int(writer, "world_size", rank->world_size);
	po_json_write_end_object(writer);
}

/* The earliest begin among the records: the partial's time 0. */
static int64_t records_origin(const struct po_distributed *d)
{
	int64_t origin = 0;

	for (size_t i = 0; i < d->record_count; i++) {
		if (i == 0 || d->records[i].begin_ns < origin)
			origin = d->records[i].begin_ns;
	}
	return origin;
}

static void write_partial(struct po_json_writer *writer, const struct po_distributed *d)
{
	int64_t origin = records_origin(d);
	char text[32];

	po_json_write_begin_object(writer);
	/* [rank, group, seq, step, begin, end]: end -1 when it never ended */
	po_json_write_key(writer, "collectives");
	po_json_write_begin_array(writer);
	po_json_write_inline_items(writer);
	for (size_t i = 0; i < d->record_count; i++) {
		const struct po_rank_record *record = &d->records[i];

		po_json_write_begin_array(writer);
		po_json_write_int(writer, record->rank);
		po_json_write_int(writer, record->group);
		po_json_write_int(writer, record->seq);
		po_json_write_int(writer, record->step);
		po_json_write_int(writer, record->begin_ns - origin);
		po_json_write_int(writer, record->end_ns < 0 ? -1 : record->end_ns - origin);
		po_json_write_end_array(writer);
	}
	po_json_write_end_array(writer);
	snprintf(text, sizeof(text), "%" PRId64, origin);
	po_json_write_kv_string(writer, "origin_ns", text);
	po_json_write_key(writer, "ranks");
	po_json_write_begin_array(writer);
	for (size_t i = 0; i < d->rank_count; i++)
		write_part_rank(writer, d, &d->ranks[i]);
	po_json_write_end_array(writer);
	po_json_write_kv_int(writer, "sample_stride", d->sample_stride);
	po_json_write_kv_string(writer, "schema", PO_PARTIAL_SCHEMA);
	po_json_write_kv_int(writer, "unpaired_ends", d->unpaired_ends);
	po_json_write_end_object(writer);
}

enum po_status po_render_partial_json(const struct po_analysis *analysis, const char *path,
				      struct po_error *err)
{
	struct po_json_writer writer;
	enum po_status status;

	if (!analysis->distributed) {
		po_error_set(err, "Failed to write %s: the trace has no ranks", path);
		return PO_STATUS_INPUT;
	}
	status = po_json_writer_open(&writer, path, err);
	if (status != PO_STATUS_OK)
		return status;
	write_partial(&writer, analysis->distributed);
	return po_json_writer_close(&writer, err);
}

enum po_status po_render_merged_json(const struct po_analysis *analysis,
				     const struct po_merged_info *info, const char *path,
				     struct po_error *err)
{
	struct po_json_writer writer;
	enum po_status status = po_json_writer_open(&writer, path, err);

	if (status != PO_STATUS_OK)
		return status;
	po_json_write_begin_object(&writer);
	po_render_ranks_json(&writer, analysis);
	status = po_render_findings_json(&writer, analysis, err);
	if (status != PO_STATUS_OK) {
		po_json_writer_abandon(&writer);
		po_error_prepend(err, "Failed to write %s", path);
		return status;
	}
	po_json_write_key(&writer, "merged");
	po_json_write_begin_object(&writer);
	po_json_write_key(&writer, "partials");
	po_json_write_begin_array(&writer);
	for (size_t i = 0; i < info->partial_count; i++)
		po_json_write_string(&writer, info->partials[i]);
	po_json_write_end_array(&writer);
	po_json_write_kv_int(&writer, "step_stride", analysis->distributed->step_stride);
	po_json_write_end_object(&writer);
	po_json_write_kv_string(&writer, "schema", PO_MERGED_SCHEMA);
	po_json_write_kv_string(&writer, "verdict",
				po_json_verdict_name(analysis->diagnosis.verdict));
	po_json_write_kv_string(&writer, "verdict_reason", analysis->diagnosis.verdict_reason);
	po_json_write_key(&writer, "warnings");
	po_json_write_begin_array(&writer);
	for (size_t i = 0; i < po_analysis_warning_count(analysis); i++) {
		po_json_write_begin_object(&writer);
		po_json_write_kv_string(&writer, "code", po_analysis_warning(analysis, i)->code);
		po_json_write_kv_string(&writer, "text", po_analysis_warning(analysis, i)->text);
		po_json_write_end_object(&writer);
	}
	po_json_write_end_array(&writer);
	po_json_write_end_object(&writer);
	return po_json_writer_close(&writer, err);
}
