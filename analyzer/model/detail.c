/*
 * detail.c: the timelines of representative steps. Completed spans and counter samples of
 * every process go into bounded rings; a step's detail is decided PO_FINALIZE_LAG steps
 * after its end, when the worker spans and GPU records that overlap it have arrived, and
 * copied out of the rings if the step is (so far) one of the slowest, next to one, a
 * median candidate (a small uniform reservoir), holds one of the longest GPU gaps, or lies
 * in the requested range. Details whose reason went away are freed at once.
 */
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"

enum po_status detail_push_span(struct po_model *model, const struct po_span *span)
{
	model->span_ring[model->span_ring_next] = *span;
	model->span_ring_next = (model->span_ring_next + 1) % PO_SPAN_RING_CAP;
	if (model->span_ring_count < PO_SPAN_RING_CAP)
		model->span_ring_count++;
	return PO_STATUS_OK;
}

void detail_push_counter(struct po_model *model, const struct po_counter_sample *sample)
{
	model->counter_ring[model->counter_ring_next] = *sample;
	model->counter_ring_next = (model->counter_ring_next + 1) % PO_COUNTER_RING_CAP;
	if (model->counter_ring_count < PO_COUNTER_RING_CAP)
		model->counter_ring_count++;
}

static int64_t step_ns(const struct po_model *model, size_t index)
{
	const struct po_step *step = po_step_store_borrow(model->loop.steps, index);

	return step->end_ns - step->begin_ns;
}

static bool in_list(const size_t *list, size_t count, size_t index)
{
	for (size_t i = 0; i < count; i++)
		if (list[i] == index)
			return true;
	return false;
}

static size_t slowest_min(const struct po_model *model)
{
	size_t best = 0;

	for (size_t i = 1; i < model->slowest_count; i++)
		if (model->slowest_ns[i] < model->slowest_ns[best])
			best = i;
	return best;
}

/* Whether a step not yet decided would enter the slowest set now. */
static bool would_be_slowest(const struct po_model *model, size_t index)
{
	if (!model->config.slowest_steps_kept)
		return false;
	if (model->slowest_count < model->config.slowest_steps_kept)
		return true;
	return step_ns(model, index) > model->slowest_ns[slowest_min(model)];
}

static bool is_slowest(const struct po_model *model, size_t index)
{
	return in_list(model->slowest, model->slowest_count, index);
}

static bool requested(const struct po_model *model, size_t index)
{
	int64_t number;

	if (model->config.timeline_first_step < 0)
		return false;
	number = po_step_store_borrow(model->loop.steps, index)->index;
	return number >= model->config.timeline_first_step &&
	       number <= model->config.timeline_last_step;
}

static long detail_find(const struct po_model *model, size_t index)
{
	for (size_t i = 0; i < model->detail_count; i++)
		if (model->details[i].step_index == index)
			return (long)i;
	return -1;
}

/* Why a decided step's timeline is wanted now; the next step may still be undecided. */
static uint32_t reasons_now(const struct po_model *model, size_t index)
{
	uint32_t reasons = 0;
	long existing = detail_find(model, index);

	if (is_slowest(model, index))
		reasons |= PO_DETAIL_SLOWEST;
	if ((index > 0 && is_slowest(model, index - 1)) ||
	    (index + 1 < model->loop.step_count && is_slowest(model, index + 1)) ||
	    (index + 1 < model->loop.step_count && index + 1 >= model->finalized_steps &&
	     po_step_store_borrow(model->loop.steps, index + 1)->end_ns != INT64_MAX &&
	     would_be_slowest(model, index + 1)))
		reasons |= PO_DETAIL_NEIGHBOR;
	if (in_list(model->reservoir, model->reservoir_count, index))
		reasons |= PO_DETAIL_MEDIAN;
	if (in_list(model->stall_steps, model->stall_count, index))
		reasons |= PO_DETAIL_STALL;
	if (requested(model, index) &&
	    ((existing >= 0 && (model->details[existing].reasons & PO_DETAIL_REQUESTED)) ||
	     model->requested_count < PO_REQUESTED_CAP))
		reasons |= PO_DETAIL_REQUESTED;
	return reasons;
}

static void detail_drop(struct po_model *model, size_t position)
{
	struct detail_state *detail = &model->details[position];

	if (detail->reasons & PO_DETAIL_REQUESTED)
		model->requested_count--;
	free(detail->out.spans);
	free(detail->out.counters);
	model->details[position] = model->details[--model->detail_count];
}

/* Re-decides a step whose reason may have gone away. */
static void recheck(struct po_model *model, size_t index)
{
	long position = detail_find(model, index);
	uint32_t reasons;

	if (position < 0 || index >= model->finalized_steps)
		return;
	reasons = reasons_now(model, index);
	if (!reasons)
		detail_drop(model, (size_t)position);
	else
		model->details[position].reasons = reasons;
}

static int compare_spans(const void *left, const void *right)
{
	const struct po_span *a = left, *b = right;

	if (a->begin_ns != b->begin_ns)
		return a->begin_ns < b->begin_ns ? -1 : 1;
	if (a->end_ns != b->end_ns)
		return a->end_ns > b->end_ns ? -1 : 1; /* enclosing spans first */
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	if (a->stream != b->stream)
		return a->stream < b->stream ? -1 : 1;
	return (a->sub > b->sub) - (a->sub < b->sub);
}

static bool overlaps(int64_t begin_ns, int64_t end_ns, int64_t from_ns, int64_t to_ns)
{
	return begin_ns < to_ns && end_ns > from_ns ? true
						    : begin_ns >= from_ns && begin_ns < to_ns;
}

static const struct po_span *ring_span(const struct po_model *model, size_t logical)
{
	size_t first =
	    (model->span_ring_next + PO_SPAN_RING_CAP - model->span_ring_count) % PO_SPAN_RING_CAP;

	return &model->span_ring[(first + logical) % PO_SPAN_RING_CAP];
}

/*
 * Copies the ring's spans overlapping the step (two passes: exact allocation). The first
 * pass also notes where the matches lie, so the second reads only that stretch.
 */
static enum po_status copy_spans(const struct po_model *model, struct po_step_detail *out)
{
	size_t wanted = 0, first = 0, end = 0;

	for (size_t i = 0; i < model->span_ring_count; i++) {
		const struct po_span *span = ring_span(model, i);

		if (!overlaps(span->begin_ns, span->end_ns, out->begin_ns, out->end_ns))
			continue;
		if (!wanted)
			first = i;
		end = i + 1;
		wanted++;
	}
	if (wanted > model->config.detail_span_cap) {
		wanted = model->config.detail_span_cap;
		out->truncated = true;
	}
	out->spans = calloc(wanted + 1, sizeof(*out->spans));
	if (!out->spans)
		return PO_STATUS_NOMEM;
	for (size_t i = first; i < end && out->span_count < wanted; i++) {
		const struct po_span *span = ring_span(model, i);

		if (overlaps(span->begin_ns, span->end_ns, out->begin_ns, out->end_ns))
			out->spans[out->span_count++] = *span;
	}
	/* The ring forgot older spans: the step's beginning may be missing. */
	if (model->span_ring_count == PO_SPAN_RING_CAP &&
	    ring_span(model, 0)->end_ns > out->begin_ns)
		out->truncated = true;
	po_sort(out->spans, out->span_count, sizeof(*out->spans), compare_spans);
	return PO_STATUS_OK;
}

static const struct po_counter_sample *ring_counter(const struct po_model *model, size_t logical)
{
	size_t first =
	    (model->counter_ring_next + PO_COUNTER_RING_CAP - model->counter_ring_count) %
	    PO_COUNTER_RING_CAP;

	return &model->counter_ring[(first + logical) % PO_COUNTER_RING_CAP];
}

static enum po_status copy_counters(const struct po_model *model, struct po_step_detail *out)
{
	size_t wanted = 0;

	for (size_t i = 0; i < model->counter_ring_count; i++) {
		int64_t time_ns = ring_counter(model, i)->time_ns;

		wanted += time_ns >= out->begin_ns && time_ns <= out->end_ns;
	}
	out->counters = calloc(wanted + 1, sizeof(*out->counters));
	if (!out->counters)
		return PO_STATUS_NOMEM;
	for (size_t i = 0; i < model->counter_ring_count; i++) {
		const struct po_counter_sample *sample = ring_counter(model, i);

		if (sample->time_ns >= out->begin_ns && sample->time_ns <= out->end_ns)
			out->counters[out->counter_count++] = *sample;
	}
	return PO_STATUS_OK;
}

/* Copies the step's spans out of the rings, or adds reasons to its existing detail. */
static enum po_status capture(struct po_model *model, size_t index, uint32_t reasons)
{
	long position = detail_find(model, index);
	const struct po_step *step;
	struct detail_state *detail;
	enum po_status status;

	if (position >= 0) {
		if ((reasons & PO_DETAIL_REQUESTED) &&
		    !(model->details[position].reasons & PO_DETAIL_REQUESTED))
			model->requested_count++;
		model->details[position].reasons |= reasons;
		return PO_STATUS_OK;
	}
	if (po_array_reserve((void **)&model->details, &model->detail_capacity,
			     model->detail_count + 1, sizeof(*detail)) != PO_STATUS_OK)
		return PO_STATUS_NOMEM;
	step = po_step_store_borrow(model->loop.steps, index);
	detail = &model->details[model->detail_count++];
	*detail = (struct detail_state){
	    .step_index = index,
	    .reasons = reasons,
	    .out = {.step_index = index, .begin_ns = step->begin_ns, .end_ns = step->end_ns}};
	if (reasons & PO_DETAIL_REQUESTED)
		model->requested_count++;
	status = copy_spans(model, &detail->out);
	if (status == PO_STATUS_OK)
		status = copy_counters(model, &detail->out);
	return status;
}

static void slowest_insert(struct po_model *model, size_t index)
{
	size_t position, evicted;

	if (!would_be_slowest(model, index))
		return;
	if (model->slowest_count < model->config.slowest_steps_kept) {
		model->slowest_ns[model->slowest_count] = step_ns(model, index);
		model->slowest[model->slowest_count++] = index;
		return;
	}
	position = slowest_min(model);
	evicted = model->slowest[position];
	model->slowest[position] = index;
	model->slowest_ns[position] = step_ns(model, index);
	recheck(model, evicted);
	if (evicted > 0)
		recheck(model, evicted - 1);
	recheck(model, evicted + 1);
}

/* Algorithm R with a fixed-seed generator, so that output is deterministic. */
static void reservoir_insert(struct po_model *model, size_t index)
{
	uint64_t pick;

	model->reservoir_seen++;
	if (model->reservoir_count < PO_RESERVOIR_CAP) {
		model->reservoir[model->reservoir_count++] = index;
		return;
	}
	model->random_state = model->random_state * 6364136223846793005ULL + 1442695040888963407ULL;
	pick = (model->random_state >> 33) % model->reservoir_seen;
	if (pick < PO_RESERVOIR_CAP) {
		size_t evicted = model->reservoir[pick];

		model->reservoir[pick] = index;
		recheck(model, evicted);
	}
}

/*
 * A start-up step: the run's first, or one that consumed the first batch of a worker
 * (worker processes start; non-persistent workers start again each epoch with new pids).
 * Its slowness is start-up cost, so it is not offered as one of the slowest steps.
 */
static bool is_startup(struct po_model *model, size_t index)
{
	int32_t producer = po_step_store_borrow(model->loop.steps, index)->worker_pid;

	if (index == 0)
		return true;
	if (producer < 0)
		return false;
	for (size_t i = 0; i < model->producer_count; i++)
		if (model->producers_seen[i] == producer)
			return false;
	if (model->producer_count < PO_PRODUCERS_CAP)
		model->producers_seen[model->producer_count++] = producer;
	return true;
}

static enum po_status finalize(struct po_model *model, size_t index)
{
	uint32_t reasons;
	enum po_status status = PO_STATUS_OK;

	model->finalized_steps = index + 1;
	if (!is_startup(model, index))
		slowest_insert(model, index);
	reservoir_insert(model, index);
	reasons = reasons_now(model, index);
	if (reasons)
		status = capture(model, index, reasons);
	if (index > 0)
		recheck(model, index - 1);
	return status;
}

enum po_status detail_step_ended(struct po_model *model)
{
	while (model->finalized_steps + PO_FINALIZE_LAG < model->loop.step_count) {
		enum po_status status = finalize(model, model->finalized_steps);

		if (status != PO_STATUS_OK)
			return status;
	}
	return PO_STATUS_OK;
}

/* Puts the step among the PO_STALL_KEPT steps with the longest gaps; false when it is not. */
static bool stall_insert(struct po_model *model, size_t index, int64_t gap_ns)
{
	size_t position = 0, evicted;

	for (size_t i = 0; i < model->stall_count; i++) {
		if (model->stall_steps[i] == index) {
			if (gap_ns > model->stall_gap_ns[i])
				model->stall_gap_ns[i] = gap_ns;
			return true;
		}
	}
	if (model->stall_count < PO_STALL_KEPT) {
		model->stall_steps[model->stall_count] = index;
		model->stall_gap_ns[model->stall_count++] = gap_ns;
		return true;
	}
	for (size_t i = 1; i < PO_STALL_KEPT; i++)
		if (model->stall_gap_ns[i] < model->stall_gap_ns[position])
			position = i;
	if (gap_ns <= model->stall_gap_ns[position])
		return false;
	evicted = model->stall_steps[position];
	model->stall_steps[position] = index;
	model->stall_gap_ns[position] = gap_ns;
	recheck(model, evicted);
	return true;
}

enum po_status detail_gap_found(struct po_model *model, size_t index, int64_t gap_ns)
{
	if (stall_insert(model, index, gap_ns) && index < model->finalized_steps)
		return capture(model, index, PO_DETAIL_STALL);
	return PO_STATUS_OK;
}

/* The reservoir step closest to the median step time. */
static long median_pick(const struct po_model *model, int64_t median_ns)
{
	long best = -1;
	int64_t best_distance = INT64_MAX;

	for (size_t i = 0; i < model->reservoir_count; i++) {
		size_t index = model->reservoir[i];
		int64_t distance = step_ns(model, index) - median_ns;

		if (po_step_store_borrow(model->loop.steps, index)->flags & PO_STEP_LOSSY)
			continue;
		if (distance < 0)
			distance = -distance;
		if (distance < best_distance ||
		    (distance == best_distance && index < (size_t)best)) {
			best_distance = distance;
			best = (long)index;
		}
	}
	return best;
}

/* The steps holding the PO_STALL_KEPT longest recorded gaps of any device. */
static size_t final_stalls(const struct po_analysis *analysis, size_t *steps)
{
	int64_t longest[PO_STALL_KEPT];
	size_t count = 0;

	for (size_t i = 0; i < analysis->gap_count; i++) {
		const struct po_gpu_gap *gap = &analysis->gaps[i];
		int64_t gap_ns = gap->end_ns - gap->begin_ns;
		size_t position = count;

		if (gap->step_index < 0 || in_list(steps, count, (size_t)gap->step_index))
			continue;
		if (count == PO_STALL_KEPT) {
			position = 0;
			for (size_t j = 1; j < count; j++)
				if (longest[j] < longest[position])
					position = j;
			if (gap_ns <= longest[position])
				continue;
		} else {
			count++;
		}
		steps[position] = (size_t)gap->step_index;
		longest[position] = gap_ns;
	}
	return count;
}

static uint32_t final_reasons(const struct po_model *model, size_t index, uint32_t had, long median,
			      const size_t *stalls, size_t stall_count)
{
	uint32_t reasons = had & PO_DETAIL_REQUESTED;

	if (is_slowest(model, index))
		reasons |= PO_DETAIL_SLOWEST;
	if ((index > 0 && is_slowest(model, index - 1)) ||
	    (index + 1 < model->loop.step_count && is_slowest(model, index + 1)))
		reasons |= PO_DETAIL_NEIGHBOR;
	if ((long)index == median)
		reasons |= PO_DETAIL_MEDIAN;
	if (in_list(stalls, stall_count, index))
		reasons |= PO_DETAIL_STALL;
	return reasons;
}

static int compare_details(const void *left, const void *right)
{
	const struct po_step_detail *a = left, *b = right;

	return (a->step_index > b->step_index) - (a->step_index < b->step_index);
}

enum po_status detail_finish(struct po_model *model, struct po_analysis *analysis)
{
	size_t stalls[PO_STALL_KEPT];
	size_t stall_count = final_stalls(analysis, stalls);
	long median;

	while (model->finalized_steps < model->loop.step_count)
		if (finalize(model, model->finalized_steps) != PO_STATUS_OK)
			return PO_STATUS_NOMEM;
	median = median_pick(model, analysis->step_stats.p50_ns);
	analysis->details = calloc(model->detail_count + 1, sizeof(*analysis->details));
	if (!analysis->details)
		return PO_STATUS_NOMEM;
	for (size_t i = model->detail_count; i-- > 0;) {
		struct detail_state *detail = &model->details[i];
		uint32_t reasons = final_reasons(model, detail->step_index, detail->reasons, median,
						 stalls, stall_count);

		if (!reasons) {
			detail_drop(model, i);
			continue;
		}
		detail->out.reasons = reasons;
		analysis->details[analysis->detail_count++] = detail->out;
	}
	model->detail_count = 0; /* the spans now belong to the analysis */
	po_sort(analysis->details, analysis->detail_count, sizeof(*analysis->details),
		compare_details);
	return PO_STATUS_OK;
}

void detail_free(struct po_model *model)
{
	for (size_t i = 0; i < model->detail_count; i++) {
		free(model->details[i].out.spans);
		free(model->details[i].out.counters);
	}
	free(model->details);
}

size_t detail_bytes(const struct po_model *model)
{
	size_t bytes = model->detail_capacity * sizeof(struct detail_state);

	for (size_t i = 0; i < model->detail_count; i++)
		bytes += (model->details[i].out.span_count * sizeof(struct po_span)) +
			 model->details[i].out.counter_count * sizeof(struct po_counter_sample);
	return bytes;
}
