/*
 * spans.c: stage and sync spans per thread, the training thread's steps and their time
 * breakdown, the batches that loader processes hand to the steps, and label statistics.
 */
#include <limits.h>
#include <stdlib.h>

#include "model_internal.h"

#define LOADER_SLOT(stage) ((int)(stage) - (int)PO_STAGE_LOAD) /* load, preprocess, collate */

static bool is_loader_stage(enum po_stage stage)
{
	return stage == PO_STAGE_LOAD || stage == PO_STAGE_PREPROCESS || stage == PO_STAGE_COLLATE;
}

/* A total that starts unknown (-1); CPU times come from the trace and may be anything. */
static int64_t add_known(int64_t total, int64_t value)
{
	return po_add_sat(total < 0 ? 0 : total, value);
}

bool spans_is_training(const struct po_model *model, const struct thread *thread)
{
	return model->has_training && &model->procs.threads[model->training] == thread;
}

/* The open step, to change in place until the next call on the step store. */
static struct po_step *open_step(struct po_model *model)
{
	return model->step_open ? po_step_store_edit(model->steps, model->step_count - 1) : NULL;
}

static struct process *process_by_pid(struct po_model *model, int32_t pid)
{
	return process_tracker_find(&model->procs, pid);
}

static int32_t main_pid(const struct po_model *model)
{
	return model->has_training ? model->procs.threads[model->training].pid : -1;
}

/* The open category of highest priority on a thread; OTHER when nothing is open. */
static enum po_category open_category(const struct thread *thread)
{
	enum po_category best = PO_CAT_OTHER;

	for (size_t i = 0; i < thread->depth; i++) {
		const struct open_span *span = &thread->stack[i];
		enum po_category category =
		    span->kind == OPEN_SYNC ? PO_CAT_GPU_SYNC : po_category_of_stage(span->stage);

		if (category < best)
			best = category;
	}
	return best;
}

static void push_segment(struct po_model *model, int64_t begin_ns, int64_t end_ns,
			 enum po_category category)
{
	size_t last = (model->segment_next + PO_SEGMENT_RING_CAP - 1) % PO_SEGMENT_RING_CAP;
	struct segment *previous = model->segment_count ? &model->segments[last] : NULL;

	if (previous && previous->category == category && previous->end_ns == begin_ns) {
		previous->end_ns = end_ns;
		return;
	}
	model->segments[model->segment_next] = (struct segment){begin_ns, end_ns, category};
	model->segment_next = (model->segment_next + 1) % PO_SEGMENT_RING_CAP;
	if (model->segment_count < PO_SEGMENT_RING_CAP)
		model->segment_count++;
}

/* Gives the time since the last change on the training thread to its open category. */
static void training_flush(struct po_model *model, int64_t time_ns)
{
	struct po_step *step = open_step(model);
	enum po_category category;

	if (!step)
		return;
	if (time_ns <= model->last_change_ns)
		return; /* nothing elapsed, or an older event: no time to give */
	category = open_category(&model->procs.threads[model->training]);
	step->category_ns[category] += time_ns - model->last_change_ns;
	push_segment(model, model->last_change_ns, time_ns, category);
	model->last_change_ns = time_ns;
}

static const struct segment *segment_at(const struct po_model *model, size_t logical)
{
	size_t first = (model->segment_next + PO_SEGMENT_RING_CAP - model->segment_count) %
		       PO_SEGMENT_RING_CAP;

	return &model->segments[(first + logical) % PO_SEGMENT_RING_CAP];
}

enum po_category spans_cause(const struct po_model *model, int64_t begin_ns, int64_t end_ns,
			     int64_t *cause_ns)
{
	int64_t per_category[PO_CATEGORY_COUNT] = {0};
	int64_t covered_ns = 0;
	size_t low = 0, high = model->segment_count;
	enum po_category best = PO_CAT_OTHER;

	while (low < high) { /* the first segment ending after begin_ns */
		size_t mid = low + (high - low) / 2;

		if (segment_at(model, mid)->end_ns <= begin_ns)
			low = mid + 1;
		else
			high = mid;
	}
	for (size_t i = low; i < model->segment_count; i++) {
		const struct segment *segment = segment_at(model, i);
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

static enum po_status push_open(struct po_model *model, struct thread *thread,
				const struct open_span *span)
{
	if (thread->depth >= PO_SPAN_STACK_CAP) {
		model->quality.unmatched_begins++; /* too deep to track: dropped */
		return PO_STATUS_OK;
	}
	if (po_array_reserve((void **)&thread->stack, &thread->capacity, thread->depth + 1,
			     sizeof(*span)) != PO_STATUS_OK)
		return PO_STATUS_NOMEM;
	thread->stack[thread->depth++] = *span;
	return PO_STATUS_OK;
}

/* The innermost open span of this kind (and stage), or -1. */
static long find_open(const struct thread *thread, int kind, enum po_stage stage)
{
	for (size_t i = thread->depth; i-- > 0;) {
		const struct open_span *span = &thread->stack[i];

		if (span->kind == kind && (kind == OPEN_SYNC || span->stage == stage))
			return (long)i;
	}
	return -1;
}

/* Counts an end without a begin, and the spans popped through to match an end. */
static void note_unmatched(struct po_model *model, struct thread *thread, int64_t begins,
			   int64_t ends)
{
	model->quality.unmatched_begins += begins;
	model->quality.unmatched_ends += ends;
	if ((begins || ends) && spans_is_training(model, thread) && model->step_open)
		model->step_unmatched = true;
}

enum po_status spans_stage_begin(struct po_model *model, struct thread *thread,
				 const struct po_event *event)
{
	struct process *process = &model->procs.processes[thread->process];
	struct open_span span = {.kind = OPEN_STAGE,
				 .stage = event->u.stage.stage,
				 .begin_ns = event->time_ns,
				 .batch = event->u.stage.batch,
				 .device = -1,
				 .stream = -1};
	enum po_status status;

	if ((unsigned)span.stage >= PO_STAGE_COUNT)
		return PO_STATUS_OK;
	if (is_loader_stage(span.stage))
		process->loader_spans = true;
	status = label_tracker_resolve(&model->labels, process->pid, span.stage,
				       event->u.stage.label, &span.label_index);
	if (status != PO_STATUS_OK)
		return status;
	span.label = label_tracker_text(&model->labels, span.label_index);
	span.same_below = find_open(thread, OPEN_STAGE, span.stage) >= 0;
	if (spans_is_training(model, thread))
		training_flush(model, event->time_ns);
	return push_open(model, thread, &span);
}

/* The batch is made: its producer has made one more (counted once). */
static void batch_finished(struct po_model *model, struct batch_record *record)
{
	struct process *producer;

	if (!batch_tracker_finish(record))
		return;
	producer = process_by_pid(model, record->producer_pid);
	if (producer)
		producer->batches++;
}

static enum po_status batch_span(struct po_model *model, const struct thread *thread,
				 const struct open_span *span, int64_t batch, int64_t wall_ns,
				 int64_t end_ns)
{
	struct batch_record *record;
	int slot = LOADER_SLOT(span->stage);

	if (batch < 0)
		return PO_STATUS_OK;
	record = batch_tracker_get(&model->batches, batch, thread->pid);
	if (!record)
		return PO_STATUS_NOMEM;
	if (!span->same_below)
		record->stage_ns[slot] = add_known(record->stage_ns[slot], wall_ns);
	if (span->stage == PO_STAGE_COLLATE) {
		if (!record->ready_from_event)
			record->ready_ns = end_ns;
		batch_finished(model, record);
	}
	return PO_STATUS_OK;
}

enum po_status spans_batch_ready(struct po_model *model, const struct po_event *event)
{
	int64_t batch = event->u.batch_ready.batch;
	struct batch_record *record;

	if (event->u.batch_ready.queue_depth >= 0)
		model->latest_queue_depth = event->u.batch_ready.queue_depth;
	if (batch < 0)
		return PO_STATUS_OK;
	record = batch_tracker_find(&model->batches, batch);
	if (!record && event->pid == main_pid(model)) {
		if (model->step_open)
			model->own_ready_ns = event->time_ns; /* loaded by the main process */
		return PO_STATUS_OK;
	}
	record = batch_tracker_get(&model->batches, batch, event->pid);
	if (!record)
		return PO_STATUS_NOMEM;
	record->ready_ns = event->time_ns;
	record->ready_from_event = true;
	batch_finished(model, record);
	return PO_STATUS_OK;
}

/*
 * The last time_ns - from_ns of the training thread went to the data wait, but the batch
 * was ready in its worker from from_ns on: that part is the hand-off. Moves it, in the step
 * and in the segment ring, when the latest segment is the data wait that covers it.
 */
static void split_handoff(struct po_model *model, struct po_step *step, int64_t from_ns,
			  int64_t time_ns)
{
	size_t last = (model->segment_next + PO_SEGMENT_RING_CAP - 1) % PO_SEGMENT_RING_CAP;
	struct segment *segment = &model->segments[last];
	int64_t handoff_ns;

	if (!model->segment_count || segment->category != PO_CAT_DATA_WAIT ||
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
	push_segment(model, from_ns, time_ns, PO_CAT_HANDOFF);
}

/* The training thread's data wait [begin_ns, end_ns) ended: the step consumed this batch. */
static void consume_batch(struct po_model *model, struct po_step *step, int64_t batch,
			  int64_t begin_ns, int64_t end_ns)
{
	struct batch_record *record =
	    batch >= 0 ? batch_tracker_find(&model->batches, batch) : NULL;

	step->batch = batch;
	step->queue_depth = model->latest_queue_depth;
	if (!record)
		return;
	step->worker_pid = record->producer_pid == main_pid(model) ? -1 : record->producer_pid;
	step->ready_ns = record->ready_ns;
	step->load_ns = record->stage_ns[0];
	step->preprocess_ns = record->stage_ns[1];
	step->collate_ns = record->stage_ns[2];
	if (step->worker_pid >= 0 && record->ready_ns >= 0 && record->ready_ns < end_ns)
		split_handoff(model, step,
			      record->ready_ns > begin_ns ? record->ready_ns : begin_ns, end_ns);
	batch_tracker_drop(&model->batches, record);
}

static void producer_stats(struct process *process, const struct open_span *span, bool bottom,
			   int64_t wall_ns, int64_t cpu_ns)
{
	if (!span->same_below) {
		process->stage_ns[span->stage] =
		    po_add_sat(process->stage_ns[span->stage], wall_ns);
		if (cpu_ns >= 0 && is_loader_stage(span->stage))
			process->stage_cpu_ns[span->stage] =
			    add_known(process->stage_cpu_ns[span->stage], cpu_ns);
	}
	if (bottom)
		process->busy_ns = po_add_sat(process->busy_ns, wall_ns);
}

static void own_loading(struct po_model *model, const struct open_span *span, int64_t batch,
			int64_t wall_ns, int64_t end_ns)
{
	int slot = LOADER_SLOT(span->stage);

	if (!model->step_open)
		return;
	if (!span->same_below)
		model->own_stage_ns[slot] = add_known(model->own_stage_ns[slot], wall_ns);
	if (batch >= 0)
		model->own_batch = batch;
	if (span->stage == PO_STAGE_COLLATE)
		model->own_ready_ns = end_ns;
}

static enum po_status complete_stage(struct po_model *model, struct thread *thread,
				     const struct open_span *span, bool bottom,
				     const struct po_event *event)
{
	int64_t wall_ns = event->time_ns > span->begin_ns ? event->time_ns - span->begin_ns : 0;
	int64_t cpu_ns = event->u.stage.cpu_ns;
	int64_t batch = event->u.stage.batch >= 0 ? event->u.stage.batch : span->batch;
	bool training = spans_is_training(model, thread);
	enum po_status status = PO_STATUS_OK;

	label_tracker_add(&model->labels, span->label_index, wall_ns, cpu_ns);
	producer_stats(&model->procs.processes[thread->process], span, bottom, wall_ns, cpu_ns);
	if (is_loader_stage(span->stage) && training)
		own_loading(model, span, batch, wall_ns, event->time_ns);
	else if (is_loader_stage(span->stage))
		status = batch_span(model, thread, span, batch, wall_ns, event->time_ns);
	if (status != PO_STATUS_OK)
		return status;
	/* A data wait's begin names the batch expected, its end the one received (or -1). */
	if (training && span->stage == PO_STAGE_DATA_WAIT && model->step_open)
		consume_batch(model, open_step(model), event->u.stage.batch, span->begin_ns,
			      event->time_ns);
	return detail_push_span(model, &(struct po_span){.kind = PO_SPAN_STAGE,
							 .sub = span->stage,
							 .pid = thread->pid,
							 .tid = thread->tid,
							 .device = -1,
							 .stream = -1,
							 .label = span->label,
							 .begin_ns = span->begin_ns,
							 .end_ns = span->begin_ns + wall_ns,
							 .batch = batch});
}

/* Matches an end to its open span (index), popping mismatched spans above it. */
static const struct open_span *close_open(struct po_model *model, struct thread *thread, long index,
					  int64_t time_ns)
{
	if (spans_is_training(model, thread))
		training_flush(model, time_ns);
	note_unmatched(model, thread, (int64_t)thread->depth - index - 1, 0);
	thread->depth = (size_t)index; /* the entry stays readable until the next push */
	return &thread->stack[index];
}

enum po_status spans_stage_end(struct po_model *model, struct thread *thread,
			       const struct po_event *event)
{
	long index = find_open(thread, OPEN_STAGE, event->u.stage.stage);
	const struct open_span *span;

	if (index < 0) {
		note_unmatched(model, thread, 0, 1);
		return PO_STATUS_OK;
	}
	span = close_open(model, thread, index, event->time_ns);
	return complete_stage(model, thread, span, index == 0, event);
}

enum po_status spans_sync(struct po_model *model, struct thread *thread,
			  const struct po_event *event)
{
	struct open_span open = {.kind = OPEN_SYNC,
				 .begin_ns = event->time_ns,
				 .batch = -1,
				 .device = event->u.gpu_sync.device,
				 .stream = event->u.gpu_sync.stream};
	const struct open_span *span;
	long index;

	if (event->kind == PO_EV_GPU_SYNC_BEGIN) {
		if (spans_is_training(model, thread))
			training_flush(model, event->time_ns);
		return push_open(model, thread, &open);
	}
	index = find_open(thread, OPEN_SYNC, 0);
	if (index < 0) {
		note_unmatched(model, thread, 0, 1);
		return PO_STATUS_OK;
	}
	span = close_open(model, thread, index, event->time_ns);
	return detail_push_span(model, &(struct po_span){.kind = PO_SPAN_SYNC,
							 .pid = thread->pid,
							 .tid = thread->tid,
							 .device = span->device,
							 .stream = span->stream,
							 .begin_ns = span->begin_ns,
							 .end_ns = event->time_ns > span->begin_ns
								       ? event->time_ns
								       : span->begin_ns,
							 .batch = -1});
}

static void fill_own_loading(struct po_model *model, struct po_step *step)
{
	if (step->load_ns >= 0 || step->preprocess_ns >= 0 || step->collate_ns >= 0)
		return; /* a worker's batch already filled them */
	step->load_ns = model->own_stage_ns[0];
	step->preprocess_ns = model->own_stage_ns[1];
	step->collate_ns = model->own_stage_ns[2];
	if (step->batch < 0)
		step->batch = model->own_batch;
	if (step->ready_ns < 0)
		step->ready_ns = model->own_ready_ns;
}

/* Ends the open step at time_ns: breakdown, loading, memory, flags, timelines. */
static enum po_status close_step(struct po_model *model, int64_t time_ns, int64_t batch_size)
{
	struct po_step *step;
	enum po_status status;

	training_flush(model, time_ns);
	step = open_step(model);
	step->end_ns = model->last_change_ns;
	if (step->batch_size < 0)
		step->batch_size = batch_size;
	fill_own_loading(model, step);
	step->host_live_bytes = memory_tracker_host_live(&model->memory);
	step->gpu_live_bytes = memory_tracker_gpu_live(&model->memory);
	process_tracker_expire_silent(&model->procs, time_ns);
	step->rss_bytes = process_tracker_rss_sum(&model->procs);
	step->main_rss_bytes =
	    model->procs.processes[model->procs.threads[model->training].process].rss_last_bytes;
	if (model->step_unmatched)
		step->flags |= PO_STEP_UNMATCHED;
	model->step_open = false;
	status = detail_push_span(
	    model, &(struct po_span){.kind = PO_SPAN_STEP,
				     .pid = model->procs.threads[model->training].pid,
				     .tid = model->procs.threads[model->training].tid,
				     .device = -1,
				     .stream = -1,
				     .begin_ns = step->begin_ns,
				     .end_ns = step->end_ns,
				     .batch = step->batch});
	return status != PO_STATUS_OK ? status : detail_step_ended(model);
}

static void reset_own_loading(struct po_model *model)
{
	for (int i = 0; i < 3; i++)
		model->own_stage_ns[i] = -1;
	model->own_batch = -1;
	model->own_ready_ns = -1;
	model->step_unmatched = false;
}

/* Opens a step on the training thread; it stays last in the store, end_ns INT64_MAX. */
static enum po_status open_new_step(struct po_model *model, const struct po_event *event)
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

	if (po_step_store_append(model->steps, &step) != PO_STATUS_OK)
		return PO_STATUS_NOMEM;
	model->step_count++;
	model->step_open = true;
	model->last_change_ns = event->time_ns;
	model->current_step_number = event->u.step.step;
	reset_own_loading(model);
	return PO_STATUS_OK;
}

enum po_status spans_step_begin(struct po_model *model, struct thread *thread,
				const struct po_event *event)
{
	enum po_status status;

	thread->step_count++;
	model->procs.processes[thread->process].step_count++;
	if (!model->has_training) {
		model->has_training = true;
		model->training = (size_t)(thread - model->procs.threads);
	}
	if (!spans_is_training(model, thread)) {
		model->steps_other_threads++;
		return PO_STATUS_OK;
	}
	if (model->step_open) { /* no step_end: the open step ends here */
		note_unmatched(model, thread, 1, 0);
		status = close_step(model, event->time_ns, -1);
		if (status != PO_STATUS_OK)
			return status;
	}
	return open_new_step(model, event);
}

enum po_status spans_step_end(struct po_model *model, struct thread *thread,
			      const struct po_event *event)
{
	if (!spans_is_training(model, thread))
		return PO_STATUS_OK;
	if (!model->step_open) {
		model->quality.unmatched_ends++;
		return PO_STATUS_OK;
	}
	if (open_step(model)->index != event->u.step.step)
		model->quality.step_mismatches++;
	return close_step(model, event->time_ns, event->u.step.batch_size);
}

int spans_innermost_stage(const struct thread *thread)
{
	long index = -1;

	for (size_t i = thread->depth; i-- > 0;) {
		if (thread->stack[i].kind == OPEN_STAGE) {
			index = (long)i;
			break;
		}
	}
	return index < 0 ? -1 : (int)thread->stack[index].stage;
}
