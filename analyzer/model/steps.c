/* steps.c: the step tracker (steps.h). */
#include <limits.h>
#include <stdlib.h>

#include "saturate.h"
#include "steps.h"

#define LOADER_SLOT(stage) ((int)(stage) - (int)PO_STAGE_LOAD) /* load, preprocess, collate */

/* A total that starts unknown (-1); CPU times come from the trace and may be anything. */
static int64_t add_known(int64_t total, int64_t value)
{
	return po_add_sat(total < 0 ? 0 : total, value);
}

static void reset_own_loading(struct po_step_tracker *t)
{
	for (int i = 0; i < 3; i++)
		t->own_stage_ns[i] = -1;
	t->own_batch = -1;
	t->own_ready_ns = -1;
	t->step_unmatched = false;
}

enum po_status step_tracker_init(struct po_step_tracker *t)
{
	*t = (struct po_step_tracker){
	    .current_step_number = -1, .latest_queue_depth = -1, .first_epoch_steps = SIZE_MAX};
	reset_own_loading(t);
	t->segments = calloc(PO_SEGMENT_RING_CAP, sizeof(*t->segments));
	if (!t->segments || po_step_store_create(&t->steps) != PO_STATUS_OK ||
	    batch_tracker_init(&t->batches) != PO_STATUS_OK)
		return PO_STATUS_NOMEM;
	return PO_STATUS_OK;
}

void step_tracker_fini(struct po_step_tracker *t)
{
	if (!t->steps_given)
		po_step_store_destroy(t->steps);
	free(t->segments);
	batch_tracker_fini(&t->batches);
}

size_t step_tracker_bytes(const struct po_step_tracker *t)
{
	return po_step_store_bytes(t->steps) + PO_SEGMENT_RING_CAP * sizeof(struct segment) +
	       batch_tracker_bytes(&t->batches);
}

bool step_tracker_is_training(const struct po_step_tracker *t, int32_t pid, int32_t tid)
{
	return t->has_training && t->training_pid == pid && t->training_tid == tid;
}

static int32_t main_pid(const struct po_step_tracker *t)
{
	return t->has_training ? t->training_pid : -1;
}

struct po_step *step_tracker_open_step(struct po_step_tracker *t)
{
	return t->step_open ? po_step_store_edit(t->steps, t->step_count - 1) : NULL;
}

static void push_segment(struct po_step_tracker *t, int64_t begin_ns, int64_t end_ns,
			 enum po_category category)
{
	size_t last = (t->segment_next + PO_SEGMENT_RING_CAP - 1) % PO_SEGMENT_RING_CAP;
	struct segment *previous = t->segment_count ? &t->segments[last] : NULL;

	if (previous && previous->category == category && previous->end_ns == begin_ns) {
		previous->end_ns = end_ns;
		return;
	}
	t->segments[t->segment_next] = (struct segment){begin_ns, end_ns, category};
	t->segment_next = (t->segment_next + 1) % PO_SEGMENT_RING_CAP;
	if (t->segment_count < PO_SEGMENT_RING_CAP)
		t->segment_count++;
}

void step_tracker_advance(struct po_step_tracker *t, int64_t time_ns, enum po_category category)
{
	struct po_step *step = step_tracker_open_step(t);

	if (!step)
		return;
	if (time_ns <= t->last_change_ns)
		return; /* nothing elapsed, or an older event: no time to give */
	step->category_ns[category] += time_ns - t->last_change_ns;
	push_segment(t, t->last_change_ns, time_ns, category);
	t->last_change_ns = time_ns;
}

static const struct segment *segment_at(const struct po_step_tracker *t, size_t logical)
{
	size_t first =
	    (t->segment_next + PO_SEGMENT_RING_CAP - t->segment_count) % PO_SEGMENT_RING_CAP;

	return &t->segments[(first + logical) % PO_SEGMENT_RING_CAP];
}

enum po_category step_tracker_cause(const struct po_step_tracker *t, int64_t begin_ns,
				    int64_t end_ns, int64_t *cause_ns)
{
	int64_t per_category[PO_CATEGORY_COUNT] = {0};
	int64_t covered_ns = 0;
	size_t low = 0, high = t->segment_count;
	enum po_category best = PO_CAT_OTHER;

	while (low < high) { /* the first segment ending after begin_ns */
		size_t mid = low + (high - low) / 2;

		if (segment_at(t, mid)->end_ns <= begin_ns)
			low = mid + 1;
		else
			high = mid;
	}
	for (size_t i = low; i < t->segment_count; i++) {
		const struct segment *segment = segment_at(t, i);
		int64_t from = segment->begin_ns > begin_ns ? segment->begin_ns : begin_ns;
		int64_t to = segment->end_ns < end_ns ? segment->end_ns : end_ns;

		if (segment->begin_ns >= end_ns)
			break;
		if (to > from) {
			per_category[segment->category] += to - from;
			covered_ns += to - from;
		}
	}
	per_category[PO_CAT_OTHER] += (end_ns - begin_ns) - covered_ns; /* outside steps */
	for (int c = 0; c < PO_CATEGORY_COUNT; c++)
		if (per_category[c] > per_category[best])
			best = (enum po_category)c;
	*cause_ns = per_category[best];
	return best;
}

/* The batch is made: its producer has made one more (counted once). */
static void batch_finished(struct batch_record *record, int32_t *made_by)
{
	if (batch_record_made(record))
		*made_by = record->producer_pid;
}

enum po_status step_tracker_loader_span(struct po_step_tracker *t, int32_t pid, enum po_stage stage,
					bool same_below, int64_t batch, int64_t wall_ns,
					int64_t end_ns, int32_t *made_by)
{
	struct batch_record *record;
	int slot = LOADER_SLOT(stage);

	*made_by = -1;
	if (batch < 0)
		return PO_STATUS_OK;
	record = batch_tracker_get(&t->batches, batch, pid);
	if (!record)
		return PO_STATUS_NOMEM;
	if (!same_below)
		record->stage_ns[slot] = add_known(record->stage_ns[slot], wall_ns);
	if (stage == PO_STAGE_COLLATE) {
		if (!record->ready_from_event)
			record->ready_ns = end_ns;
		batch_finished(record, made_by);
	}
	return PO_STATUS_OK;
}

enum po_status step_tracker_batch_ready(struct po_step_tracker *t, const struct po_event *event,
					int32_t *made_by)
{
	int64_t batch = event->u.batch_ready.batch;
	struct batch_record *record;

	*made_by = -1;
	if (event->u.batch_ready.queue_depth >= 0)
		t->latest_queue_depth = event->u.batch_ready.queue_depth;
	if (batch < 0)
		return PO_STATUS_OK;
	record = batch_tracker_find(&t->batches, batch);
	if (!record && event->pid == main_pid(t)) {
		if (t->step_open)
			t->own_ready_ns = event->time_ns; /* loaded by the main process */
		return PO_STATUS_OK;
	}
	record = batch_tracker_get(&t->batches, batch, event->pid);
	if (!record)
		return PO_STATUS_NOMEM;
	record->ready_ns = event->time_ns;
	record->ready_from_event = true;
	batch_finished(record, made_by);
	return PO_STATUS_OK;
}

/*
 * The last time_ns - from_ns of the training thread went to the data wait, but the batch
 * was ready in its worker from from_ns on: that part is the hand-off. Moves it, in the step
 * and in the segment ring, when the latest segment is the data wait that covers it.
 */
static void split_handoff(struct po_step_tracker *t, struct po_step *step, int64_t from_ns,
			  int64_t time_ns)
{
	size_t last = (t->segment_next + PO_SEGMENT_RING_CAP - 1) % PO_SEGMENT_RING_CAP;
	struct segment *segment = &t->segments[last];
	int64_t handoff_ns;

	if (!t->segment_count || segment->category != PO_CAT_DATA_WAIT ||
	    segment->end_ns != time_ns)
		return;
	if (from_ns < segment->begin_ns)
		from_ns = segment->begin_ns;
	handoff_ns = time_ns - from_ns;
	if (handoff_ns <= 0 || handoff_ns > step->category_ns[PO_CAT_DATA_WAIT])
		return;
	step->category_ns[PO_CAT_DATA_WAIT] -= handoff_ns;
	step->category_ns[PO_CAT_HANDOFF] += handoff_ns;
	if (from_ns == segment->begin_ns) {
		segment->category = PO_CAT_HANDOFF;
		return;
	}
	segment->end_ns = from_ns;
	push_segment(t, from_ns, time_ns, PO_CAT_HANDOFF);
}

void step_tracker_consume(struct po_step_tracker *t, int64_t batch, int64_t begin_ns,
			  int64_t end_ns)
{
	struct po_step *step = step_tracker_open_step(t);
	struct batch_record *record = batch >= 0 ? batch_tracker_find(&t->batches, batch) : NULL;

	if (!step)
		return;
	step->batch = batch;
	step->queue_depth = t->latest_queue_depth;
	if (!record)
		return;
	step->worker_pid = record->producer_pid == main_pid(t) ? -1 : record->producer_pid;
	step->ready_ns = record->ready_ns;
	step->load_ns = record->stage_ns[0];
	step->preprocess_ns = record->stage_ns[1];
	step->collate_ns = record->stage_ns[2];
	if (step->worker_pid >= 0 && record->ready_ns >= 0 && record->ready_ns < end_ns)
		split_handoff(t, step, record->ready_ns > begin_ns ? record->ready_ns : begin_ns,
			      end_ns);
	batch_tracker_drop(&t->batches, record);
}

void step_tracker_own_loading(struct po_step_tracker *t, enum po_stage stage, bool same_below,
			      int64_t batch, int64_t wall_ns, int64_t end_ns)
{
	int slot = LOADER_SLOT(stage);

	if (!t->step_open)
		return;
	if (!same_below)
		t->own_stage_ns[slot] = add_known(t->own_stage_ns[slot], wall_ns);
	if (batch >= 0)
		t->own_batch = batch;
	if (stage == PO_STAGE_COLLATE)
		t->own_ready_ns = end_ns;
}

static void fill_own_loading(const struct po_step_tracker *t, struct po_step *step)
{
	if (step->load_ns >= 0 || step->preprocess_ns >= 0 || step->collate_ns >= 0)
		return; /* a worker's batch already filled them */
	step->load_ns = t->own_stage_ns[0];
	step->preprocess_ns = t->own_stage_ns[1];
	step->collate_ns = t->own_stage_ns[2];
	if (step->batch < 0)
		step->batch = t->own_batch;
	if (step->ready_ns < 0)
		step->ready_ns = t->own_ready_ns;
}

const struct po_step *step_tracker_close(struct po_step_tracker *t, int64_t time_ns,
					 enum po_category category, int64_t batch_size,
					 const struct po_step_sample *sample)
{
	struct po_step *step;

	step_tracker_advance(t, time_ns, category);
	step = step_tracker_open_step(t);
	step->end_ns = t->last_change_ns;
	/* GPU time counted while the end was not known yet (model_gpu.c) fits in the step. */
	if (step->gpu_busy_ns > step->end_ns - step->begin_ns)
		step->gpu_busy_ns = step->end_ns - step->begin_ns;
	if (step->batch_size < 0)
		step->batch_size = batch_size;
	fill_own_loading(t, step);
	step->host_live_bytes = sample->host_live_bytes;
	step->gpu_live_bytes = sample->gpu_live_bytes;
	step->rss_bytes = sample->rss_bytes;
	step->main_rss_bytes = sample->main_rss_bytes;
	if (t->step_unmatched)
		step->flags |= PO_STEP_UNMATCHED;
	t->step_open = false;
	return step;
}

bool step_tracker_claim(struct po_step_tracker *t, int32_t pid, int32_t tid)
{
	if (!t->has_training) {
		t->has_training = true;
		t->training_pid = pid;
		t->training_tid = tid;
	}
	if (step_tracker_is_training(t, pid, tid))
		return true;
	t->steps_other_threads++;
	return false;
}

enum po_status step_tracker_open(struct po_step_tracker *t, const struct po_event *event)
{
	struct po_step step = {.index = event->u.step.step,
			       .epoch = event->u.step.epoch,
			       .batch_size = event->u.step.batch_size,
			       .begin_ns = event->time_ns,
			       .end_ns = INT64_MAX,
			       .batch = -1,
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

	if (t->first_epoch_steps == SIZE_MAX && t->step_count &&
	    po_step_store_borrow(t->steps, t->step_count - 1)->epoch != step.epoch)
		t->first_epoch_steps = t->step_count;
	if (po_step_store_append(t->steps, &step) != PO_STATUS_OK)
		return PO_STATUS_NOMEM;
	t->step_count++;
	t->step_open = true;
	t->last_change_ns = event->time_ns;
	t->current_step_number = event->u.step.step;
	reset_own_loading(t);
	return PO_STATUS_OK;
}

void step_tracker_drop_open(struct po_step_tracker *t)
{
	if (!t->step_open)
		return;
	t->step_open = false;
	t->step_count--;
	po_step_store_truncate(t->steps, t->step_count);
}
