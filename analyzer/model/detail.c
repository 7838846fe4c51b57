/* detail.c: the timeline tracker (detail.h). */
#include <stdlib.h>
#include <string.h>

#include "detail.h"
#include "map.h"

void detail_tracker_push_span(struct po_detail_tracker *t, const struct po_span *span)
{
	t->span_ring[t->span_ring_next] = *span;
	t->span_ring_next = (t->span_ring_next + 1) % PO_SPAN_RING_CAP;
	if (t->span_ring_count < PO_SPAN_RING_CAP)
		t->span_ring_count++;
}

void detail_tracker_push_counter(struct po_detail_tracker *t,
				 const struct po_counter_sample *sample)
{
	t->counter_ring[t->counter_ring_next] = *sample;
	t->counter_ring_next = (t->counter_ring_next + 1) % PO_COUNTER_RING_CAP;
	if (t->counter_ring_count < PO_COUNTER_RING_CAP)
		t->counter_ring_count++;
}

static int64_t step_ns(const struct po_detail_tracker *t, size_t index)
{
	const struct po_step *step = po_step_store_borrow(t->loop->steps, index);

	return step->end_ns - step->begin_ns;
}

static bool in_list(const size_t *list, size_t count, size_t index)
{
	for (size_t i = 0; i < count; i++)
		if (list[i] == index)
			return true;
	return false;
}

static size_t slowest_min(const struct po_detail_tracker *t)
{
	size_t best = 0;

	for (size_t i = 1; i < t->slowest_count; i++)
		if (t->slowest_ns[i] < t->slowest_ns[best])
			best = i;
	return best;
}

/* Whether a step not yet decided would enter the slowest set now. */
static bool would_be_slowest(const struct po_detail_tracker *t, size_t index)
{
	if (!t->config.slowest_steps_kept)
		return false;
	if (t->slowest_count < t->config.slowest_steps_kept)
		return true;
	return step_ns(t, index) > t->slowest_ns[slowest_min(t)];
}

static bool is_slowest(const struct po_detail_tracker *t, size_t index)
{
	return in_list(t->slowest, t->slowest_count, index);
}

static bool requested(const struct po_detail_tracker *t, size_t index)
{
	int64_t number;

	if (t->config.timeline_first_step < 0)
		return false;
	number = po_step_store_borrow(t->loop->steps, index)->index;
	return number >= t->config.timeline_first_step && number <= t->config.timeline_last_step;
}

static long detail_find(const struct po_detail_tracker *t, size_t index)
{
	for (size_t i = 0; i < t->detail_count; i++)
		if (t->details[i].step_index == index)
			return (long)i;
	return -1;
}

/* Why a decided step's timeline is wanted now; the next step may still be undecided. */
static uint32_t reasons_now(const struct po_detail_tracker *t, size_t index)
{
	uint32_t reasons = 0;
	long existing = detail_find(t, index);

	if (is_slowest(t, index))
		reasons |= PO_DETAIL_SLOWEST;
	if ((index > 0 && is_slowest(t, index - 1)) ||
	    (index + 1 < t->loop->step_count && is_slowest(t, index + 1)) ||
	    (index + 1 < t->loop->step_count && index + 1 >= t->finalized_steps &&
	     po_step_store_borrow(t->loop->steps, index + 1)->end_ns != INT64_MAX &&
	     would_be_slowest(t, index + 1)))
		reasons |= PO_DETAIL_NEIGHBOR;
	if (in_list(t->reservoir, t->reservoir_count, index))
		reasons |= PO_DETAIL_MEDIAN;
	if (in_list(t->stall_steps, t->stall_count, index))
		reasons |= PO_DETAIL_STALL;
	if (requested(t, index) &&
	    ((existing >= 0 && (t->details[existing].reasons & PO_DETAIL_REQUESTED)) ||
	     t->requested_count < PO_REQUESTED_CAP))
		reasons |= PO_DETAIL_REQUESTED;
	return reasons;
}

static void detail_drop(struct po_detail_tracker *t, size_t position)
{
	struct detail_state *detail = &t->details[position];

	if (detail->reasons & PO_DETAIL_REQUESTED)
		t->requested_count--;
	free(detail->out.spans);
	free(detail->out.counters);
	t->details[position] = t->details[--t->detail_count];
}

/* Re-decides a step whose reason may have gone away. */
static void recheck(struct po_detail_tracker *t, size_t index)
{
	long position = detail_find(t, index);
	uint32_t reasons;

	if (position < 0 || index >= t->finalized_steps)
		return;
	reasons = reasons_now(t, index);
	if (!reasons)
		detail_drop(t, (size_t)position);
	else
		t->details[position].reasons = reasons;
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

static const struct po_span *ring_span(const struct po_detail_tracker *t, size_t logical)
{
	size_t first =
	    (t->span_ring_next + PO_SPAN_RING_CAP - t->span_ring_count) % PO_SPAN_RING_CAP;

	return &t->span_ring[(first + logical) % PO_SPAN_RING_CAP];
}

/*
 * Copies the ring's spans overlapping the step (two passes: exact allocation). The first
 * pass also notes where the matches lie, so the second reads only that stretch.
 */
static enum po_status copy_spans(const struct po_detail_tracker *t, struct po_step_detail *out)
{
	size_t wanted = 0, first = 0, end = 0;

	for (size_t i = 0; i < t->span_ring_count; i++) {
		const struct po_span *span = ring_span(t, i);

		if (!overlaps(span->begin_ns, span->end_ns, out->begin_ns, out->end_ns))
			continue;
		if (!wanted)
			first = i;
		end = i + 1;
		wanted++;
	}
	if (wanted > t->config.detail_span_cap) {
		wanted = t->config.detail_span_cap;
		out->truncated = true;
	}
	out->spans = calloc(wanted + 1, sizeof(*out->spans));
	if (!out->spans)
		return PO_STATUS_NOMEM;
	for (size_t i = first; i < end && out->span_count < wanted; i++) {
		const struct po_span *span = ring_span(t, i);

		if (overlaps(span->begin_ns, span->end_ns, out->begin_ns, out->end_ns))
			out->spans[out->span_count++] = *span;
	}
	/* The ring forgot older spans: the step's beginning may be missing. */
	if (t->span_ring_count == PO_SPAN_RING_CAP && ring_span(t, 0)->end_ns > out->begin_ns)
		out->truncated = true;
	po_sort(out->spans, out->span_count, sizeof(*out->spans), compare_spans);
	return PO_STATUS_OK;
}

static const struct po_counter_sample *ring_counter(const struct po_detail_tracker *t,
						    size_t logical)
{
	size_t first = (t->counter_ring_next + PO_COUNTER_RING_CAP - t->counter_ring_count) %
		       PO_COUNTER_RING_CAP;

	return &t->counter_ring[(first + logical) % PO_COUNTER_RING_CAP];
}

static enum po_status copy_counters(const struct po_detail_tracker *t, struct po_step_detail *out)
{
	size_t wanted = 0;

	for (size_t i = 0; i < t->counter_ring_count; i++) {
		int64_t time_ns = ring_counter(t, i)->time_ns;

		wanted += time_ns >= out->begin_ns && time_ns <= out->end_ns;
	}
	out->counters = calloc(wanted + 1, sizeof(*out->counters));
	if (!out->counters)
		return PO_STATUS_NOMEM;
	for (size_t i = 0; i < t->counter_ring_count; i++) {
		const struct po_counter_sample *sample = ring_counter(t, i);

		if (sample->time_ns >= out->begin_ns && sample->time_ns <= out->end_ns)
			out->counters[out->counter_count++] = *sample;
	}
	return PO_STATUS_OK;
}

/* Copies the step's spans out of the rings, or adds reasons to its existing detail. */
static enum po_status capture(struct po_detail_tracker *t, size_t index, uint32_t reasons)
{
	long position = detail_find(t, index);
	const struct po_step *step;
	struct detail_state *detail;
	enum po_status status;

	if (position >= 0) {
		if ((reasons & PO_DETAIL_REQUESTED) &&
		    !(t->details[position].reasons & PO_DETAIL_REQUESTED))
			t->requested_count++;
		t->details[position].reasons |= reasons;
		return PO_STATUS_OK;
	}
	if (po_array_reserve((void **)&t->details, &t->detail_capacity, t->detail_count + 1,
			     sizeof(*detail)) != PO_STATUS_OK)
		return PO_STATUS_NOMEM;
	step = po_step_store_borrow(t->loop->steps, index);
	detail = &t->details[t->detail_count++];
	*detail = (struct detail_state){
	    .step_index = index,
	    .reasons = reasons,
	    .out = {.step_index = index, .begin_ns = step->begin_ns, .end_ns = step->end_ns}};
	if (reasons & PO_DETAIL_REQUESTED)
		t->requested_count++;
	status = copy_spans(t, &detail->out);
	if (status == PO_STATUS_OK)
		status = copy_counters(t, &detail->out);
	return status;
}

static void slowest_insert(struct po_detail_tracker *t, size_t index)
{
	size_t position, evicted;

	if (!would_be_slowest(t, index))
		return;
	if (t->slowest_count < t->config.slowest_steps_kept) {
		t->slowest_ns[t->slowest_count] = step_ns(t, index);
		t->slowest[t->slowest_count++] = index;
		return;
	}
	position = slowest_min(t);
	evicted = t->slowest[position];
	t->slowest[position] = index;
	t->slowest_ns[position] = step_ns(t, index);
	recheck(t, evicted);
	if (evicted > 0)
		recheck(t, evicted - 1);
	recheck(t, evicted + 1);
}

/* Algorithm R with a fixed-seed generator, so that output is deterministic. */
static void reservoir_insert(struct po_detail_tracker *t, size_t index)
{
	uint64_t pick;

	t->reservoir_seen++;
	if (t->reservoir_count < PO_RESERVOIR_CAP) {
		t->reservoir[t->reservoir_count++] = index;
		return;
	}
	t->random_state = t->random_state * 6364136223846793005ULL + 1442695040888963407ULL;
	pick = (t->random_state >> 33) % t->reservoir_seen;
	if (pick < PO_RESERVOIR_CAP) {
		size_t evicted = t->reservoir[pick];

		t->reservoir[pick] = index;
		recheck(t, evicted);
	}
}

/*
 * A start-up step: the run's first, or one that consumed the first batch of a worker
 * (worker processes start; non-persistent workers start again each epoch with new pids).
 * Its slowness is start-up cost, so it is not offered as one of the slowest steps.
 */
static bool is_startup(struct po_detail_tracker *t, size_t index)
{
	int32_t producer = po_step_store_borrow(t->loop->steps, index)->worker_pid;

	if (index == 0)
		return true;
	if (producer < 0)
		return false;
	for (size_t i = 0; i < t->producer_count; i++)
		if (t->producers_seen[i] == producer)
			return false;
	if (t->producer_count < PO_PRODUCERS_CAP)
		t->producers_seen[t->producer_count++] = producer;
	return true;
}

static enum po_status finalize(struct po_detail_tracker *t, size_t index)
{
	uint32_t reasons;
	enum po_status status = PO_STATUS_OK;

	t->finalized_steps = index + 1;
	if (!is_startup(t, index))
		slowest_insert(t, index);
	reservoir_insert(t, index);
	reasons = reasons_now(t, index);
	if (reasons)
		status = capture(t, index, reasons);
	if (index > 0)
		recheck(t, index - 1);
	return status;
}

enum po_status detail_tracker_step_ended(struct po_detail_tracker *t)
{
	while (t->finalized_steps + PO_FINALIZE_LAG < t->loop->step_count) {
		enum po_status status = finalize(t, t->finalized_steps);

		if (status != PO_STATUS_OK)
			return status;
	}
	return PO_STATUS_OK;
}

/* Puts the step among the PO_STALL_KEPT steps with the longest gaps; false when it is not. */
static bool stall_insert(struct po_detail_tracker *t, size_t index, int64_t gap_ns)
{
	size_t position = 0, evicted;

	for (size_t i = 0; i < t->stall_count; i++) {
		if (t->stall_steps[i] == index) {
			if (gap_ns > t->stall_gap_ns[i])
				t->stall_gap_ns[i] = gap_ns;
			return true;
		}
	}
	if (t->stall_count < PO_STALL_KEPT) {
		t->stall_steps[t->stall_count] = index;
		t->stall_gap_ns[t->stall_count++] = gap_ns;
		return true;
	}
	for (size_t i = 1; i < PO_STALL_KEPT; i++)
		if (t->stall_gap_ns[i] < t->stall_gap_ns[position])
			position = i;
	if (gap_ns <= t->stall_gap_ns[position])
		return false;
	evicted = t->stall_steps[position];
	t->stall_steps[position] = index;
	t->stall_gap_ns[position] = gap_ns;
	recheck(t, evicted);
	return true;
}

enum po_status detail_tracker_gap_found(struct po_detail_tracker *t, size_t index, int64_t gap_ns)
{
	if (stall_insert(t, index, gap_ns) && index < t->finalized_steps)
		return capture(t, index, PO_DETAIL_STALL);
	return PO_STATUS_OK;
}

/* The reservoir step closest to the median step time. */
static long median_pick(const struct po_detail_tracker *t, int64_t median_ns)
{
	long best = -1;
	int64_t best_distance = INT64_MAX;

	for (size_t i = 0; i < t->reservoir_count; i++) {
		size_t index = t->reservoir[i];
		int64_t distance = step_ns(t, index) - median_ns;

		if (po_step_store_borrow(t->loop->steps, index)->flags & PO_STEP_LOSSY)
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

static uint32_t final_reasons(const struct po_detail_tracker *t, size_t index, uint32_t had,
			      long median, const size_t *stalls, size_t stall_count)
{
	uint32_t reasons = had & PO_DETAIL_REQUESTED;

	if (is_slowest(t, index))
		reasons |= PO_DETAIL_SLOWEST;
	if ((index > 0 && is_slowest(t, index - 1)) ||
	    (index + 1 < t->loop->step_count && is_slowest(t, index + 1)))
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

enum po_status detail_tracker_build(struct po_detail_tracker *t, struct po_analysis *analysis)
{
	size_t stalls[PO_STALL_KEPT];
	size_t stall_count = final_stalls(analysis, stalls);
	long median;

	while (t->finalized_steps < t->loop->step_count)
		if (finalize(t, t->finalized_steps) != PO_STATUS_OK)
			return PO_STATUS_NOMEM;
	median = median_pick(t, analysis->step_stats.p50_ns);
	analysis->details = calloc(t->detail_count + 1, sizeof(*analysis->details));
	if (!analysis->details)
		return PO_STATUS_NOMEM;
	for (size_t i = t->detail_count; i-- > 0;) {
		struct detail_state *detail = &t->details[i];
		uint32_t reasons = final_reasons(t, detail->step_index, detail->reasons, median,
						 stalls, stall_count);

		if (!reasons) {
			detail_drop(t, i);
			continue;
		}
		detail->out.reasons = reasons;
		analysis->details[analysis->detail_count++] = detail->out;
	}
	t->detail_count = 0; /* the spans now belong to the analysis */
	po_sort(analysis->details, analysis->detail_count, sizeof(*analysis->details),
		compare_details);
	return PO_STATUS_OK;
}

enum po_status detail_tracker_init(struct po_detail_tracker *t,
				   const struct po_detail_config *config,
				   const struct po_step_tracker *loop)
{
	*t = (struct po_detail_tracker){
	    .config = *config, .loop = loop, .random_state = 0x853c49e6748fea9bULL};
	t->span_ring = calloc(PO_SPAN_RING_CAP, sizeof(*t->span_ring));
	t->counter_ring = calloc(PO_COUNTER_RING_CAP, sizeof(*t->counter_ring));
	t->slowest = calloc(config->slowest_steps_kept + 1, sizeof(size_t));
	t->slowest_ns = calloc(config->slowest_steps_kept + 1, sizeof(int64_t));
	if (!t->span_ring || !t->counter_ring || !t->slowest || !t->slowest_ns)
		return PO_STATUS_NOMEM;
	return PO_STATUS_OK;
}

void detail_tracker_fini(struct po_detail_tracker *t)
{
	for (size_t i = 0; i < t->detail_count; i++) {
		free(t->details[i].out.spans);
		free(t->details[i].out.counters);
	}
	free(t->details);
	free(t->span_ring);
	free(t->counter_ring);
	free(t->slowest);
	free(t->slowest_ns);
}

size_t detail_tracker_bytes(const struct po_detail_tracker *t)
{
	size_t bytes = t->detail_capacity * sizeof(struct detail_state);

	bytes += PO_SPAN_RING_CAP * sizeof(struct po_span);
	bytes += PO_COUNTER_RING_CAP * sizeof(struct po_counter_sample);

	for (size_t i = 0; i < t->detail_count; i++)
		bytes += (t->details[i].out.span_count * sizeof(struct po_span)) +
			 t->details[i].out.counter_count * sizeof(struct po_counter_sample);
	return bytes;
}
