/*
 * ranks_json.c: the "distributed" member of summary.json, written only for a recording with
 * ranks (analysis->distributed): each rank's own loop, the steps matched across ranks and
 * the straggler, or null for "no straggler" (docs/summary-schema.md).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json_names.h"
#include "json_writer.h"
#include "render_json.h"

static const char *const straggler_cause_names[] = {
#define PO_X(name, json) json,
    PO_STRAGGLER_CAUSES(PO_X)
#undef PO_X
};

static const char *cause_name(enum po_straggler_cause cause)
{
	return (unsigned)cause < PO_STRAGGLER_CAUSE_COUNT ? straggler_cause_names[cause]
							  : "unknown";
}

/* A time in ns (NaN: unknown) as milliseconds with three decimals, or null. */
static void kv_ns_as_ms(struct po_json_writer *writer, const char *key, double ns)
{
	po_json_write_kv_double(writer, key, isnan(ns) ? NAN : ns / 1e6, 3);
}

static int compare_category_names(const void *left, const void *right)
{
	return strcmp(po_json_category_name(*(const int *)left),
		      po_json_category_name(*(const int *)right));
}

static void write_rank_breakdown(struct po_json_writer *writer, const struct po_rank_summary *rank)
{
	int order[PO_CATEGORY_COUNT];

	for (int c = 0; c < PO_CATEGORY_COUNT; c++)
		order[c] = c;
	qsort(order, PO_CATEGORY_COUNT, sizeof(int), compare_category_names);
	po_json_write_key(writer, "breakdown_ms");
	po_json_write_begin_object(writer);
	for (int i = 0; i < PO_CATEGORY_COUNT; i++)
		kv_ns_as_ms(writer, po_json_category_name(order[i]),
			    rank->steady_steps > 0 ? rank->category_mean_ns[order[i]] : NAN);
	po_json_write_end_object(writer);
}

static void write_rank(struct po_json_writer *writer, const struct po_rank_summary *rank)
{
	po_json_write_begin_object(writer);
	write_rank_breakdown(writer, rank);
	kv_ns_as_ms(writer, "collective_ms_per_step", rank->collective_ns_per_step);
	po_json_write_kv_int(writer, "collectives", rank->collectives);
	po_json_write_kv_string(writer, "host", rank->host);
	po_json_write_kv_double(writer, "last_pct", rank->last_pct, 1);
	po_json_write_kv_int_or_null(writer, "local_rank", rank->local_rank);
	po_json_write_kv_bool(writer, "local_rank_inferred", rank->local_rank_inferred);
	kv_ns_as_ms(writer, "mean_step_ms", rank->mean_step_ns);
	kv_ns_as_ms(writer, "p50_step_ms", rank->p50_step_ns < 0 ? NAN : (double)rank->p50_step_ns);
	po_json_write_kv_int(writer, "pid", rank->pid);
	po_json_write_kv_int(writer, "rank", rank->rank);
	po_json_write_kv_int(writer, "steady_steps", rank->steady_steps);
	po_json_write_kv_int(writer, "steps", rank->steps);
	kv_ns_as_ms(writer, "wait_ms_per_step", rank->wait_ns_per_step);
	po_json_write_kv_int_or_null(writer, "world_size", rank->world_size);
	po_json_write_end_object(writer);
}

static void write_straggler(struct po_json_writer *writer, const struct po_straggler *straggler)
{
	po_json_write_key(writer, "straggler");
	if (!straggler->present) {
		po_json_write_null(writer);
		return;
	}
	po_json_write_begin_object(writer);
	po_json_write_kv_string(writer, "cause", cause_name(straggler->cause));
	po_json_write_kv_string(writer, "cause_category",
				po_json_category_name(straggler->cause_category));
	kv_ns_as_ms(writer, "cause_excess_ms_per_step", straggler->cause_excess_ns);
	po_json_write_kv_bool(writer, "chronic", straggler->chronic);
	kv_ns_as_ms(writer, "jitter_ms", straggler->jitter_ns);
	po_json_write_kv_double(writer, "last_pct", straggler->last_pct, 1);
	kv_ns_as_ms(writer, "lateness_ms_per_step", straggler->lateness_ns_per_step);
	kv_ns_as_ms(writer, "lost_ms_per_step", straggler->lost_ns_per_step);
	kv_ns_as_ms(writer, "others_wait_ms_per_step", straggler->others_wait_ns_per_step);
	po_json_write_kv_int(writer, "rank", straggler->rank);
	po_json_write_end_object(writer);
}

/* Each matched step: the rank that arrived last, the job's loss and each rank's wait. */
static void write_steps(struct po_json_writer *writer, const struct po_distributed *d)
{
	po_json_write_key(writer, "steps");
	po_json_write_begin_array(writer);
	po_json_write_inline_items(writer);
	for (size_t s = 0; s < d->step_count; s++) {
		po_json_write_begin_object(writer);
		po_json_write_kv_int(writer, "last_rank", d->steps[s].last_rank);
		kv_ns_as_ms(writer, "lost_ms", (double)d->steps[s].lost_ns);
		po_json_write_kv_int(writer, "step", d->steps[s].step);
		po_json_write_key(writer, "waited_ms");
		po_json_write_begin_array(writer);
		for (size_t r = 0; r < d->rank_count; r++)
			po_json_write_double(writer,
					     (double)d->waited_ns[s * d->rank_count + r] / 1e6, 3);
		po_json_write_end_array(writer);
		po_json_write_end_object(writer);
	}
	po_json_write_end_array(writer);
}

static void write_hosts(struct po_json_writer *writer, const struct po_distributed *d)
{
	po_json_write_key(writer, "hosts");
	po_json_write_begin_array(writer);
	for (size_t i = 0; i < d->host_count; i++) {
		const struct po_host_clock *clock = &d->hosts[i];

		po_json_write_begin_object(writer);
		po_json_write_kv_string(writer, "host", clock->host);
		kv_ns_as_ms(writer, "offset_ms", clock->offset_ns);
		po_json_write_kv_int(writer, "ranks", clock->ranks);
		po_json_write_kv_int(writer, "recording", clock->recording);
		kv_ns_as_ms(writer, "residual_ms", clock->residual_ns);
		po_json_write_kv_int(writer, "samples", clock->samples);
		po_json_write_end_object(writer);
	}
	po_json_write_end_array(writer);
}

void po_render_ranks_json(struct po_json_writer *writer, const struct po_analysis *analysis)
{
	const struct po_distributed *d = analysis->distributed;

	if (!d)
		return;
	po_json_write_key(writer, "distributed");
	po_json_write_begin_object(writer);
	kv_ns_as_ms(writer, "clock_residual_ms", d->clock_residual_ns);
	po_json_write_kv_int(writer, "collectives", d->collectives);
	po_json_write_kv_bool(writer, "complete", d->missing_rank_count <= 0);
	write_hosts(writer, d);
	kv_ns_as_ms(writer, "lost_ms_per_step", d->lost_ns_per_step);
	po_json_write_kv_int(writer, "matched_steps", (int64_t)d->step_count);
	po_json_write_kv_int(writer, "missing_rank_count", d->missing_rank_count);
	po_json_write_key(writer, "missing_ranks");
	po_json_write_begin_array(writer);
	po_json_write_inline_items(writer);
	for (size_t i = 0; i < d->missing_listed; i++)
		po_json_write_int(writer, d->missing_ranks[i]);
	po_json_write_end_array(writer);
	po_json_write_key(writer, "ranks");
	po_json_write_begin_array(writer);
	for (size_t i = 0; i < d->rank_count; i++)
		write_rank(writer, &d->ranks[i]);
	po_json_write_end_array(writer);
	po_json_write_kv_int(writer, "ranks_present", (int64_t)d->rank_count);
	kv_ns_as_ms(writer, "shared_collective_ms_per_collective",
		    d->shared_collective_ns_per_collective);
	kv_ns_as_ms(writer, "shared_collective_ms_per_step", d->shared_collective_ns_per_step);
	po_json_write_kv_int(writer, "step_stride", d->step_stride);
	write_steps(writer, d);
	write_straggler(writer, &d->straggler);
	po_json_write_kv_int(writer, "unmatched_collectives", d->unmatched_collectives);
	po_json_write_kv_int_or_null(writer, "world_size", d->world_size);
	po_json_write_end_object(writer);
}
