/*
 * spans.c: stage and sync spans matched per thread; what they say goes to the trackers:
 * the training loop's steps, breakdown and batches (steps.h), the labels (labels.h), the
 * producers' statistics (processes.h) and the timelines (detail.c).
 */
#include <limits.h>
#include <stdlib.h>

#include "model_internal.h"

/* What a span's thread CPU time may exceed its wall time by (see plausible_cpu_ns). */
#define PO_SPAN_CPU_SLACK_NS 1000000

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
	return step_tracker_is_training(&model->loop, thread->pid, thread->tid);
}

enum po_category spans_open_category(const struct thread *thread)
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

/* The training thread's open category may change now: the time until now goes to it. */
static void training_flush(struct po_model *model, const struct thread *thread, int64_t time_ns)
{
	step_tracker_advance(&model->loop, time_ns, spans_open_category(thread));
}

/* A producer made one more batch. */
static void batch_made(struct po_model *model, int32_t pid)
{
	struct process *producer = pid >= 0 ? process_tracker_find(&model->procs, pid) : NULL;

	if (producer)
		producer->batches++;
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
	if ((begins || ends) && spans_is_training(model, thread) && model->loop.step_open)
		model->loop.step_unmatched = true;
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
		training_flush(model, thread, event->time_ns);
	return push_open(model, thread, &span);
}

enum po_status spans_batch_ready(struct po_model *model, const struct po_event *event)
{
	int32_t made_by;
	enum po_status status = step_tracker_batch_ready(&model->loop, event, &made_by);

	batch_made(model, made_by);
	return status;
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

/*
 * A loader span's thread CPU time (read just before each of its two tracepoints), or -1
 * where it is unknown or could not be physical: one thread cannot run longer than the
 * span lasts. The slack covers the begin tracepoint's own cost inside the CPU window.
 */
static int64_t plausible_cpu_ns(struct po_model *model, int64_t cpu_ns, int64_t wall_ns)
{
	if (cpu_ns == -1)
		return -1;
	if (cpu_ns < 0 || cpu_ns > wall_ns + wall_ns / 8 + PO_SPAN_CPU_SLACK_NS) {
		model_implausible(model, PO_IMPLAUSIBLE_SPAN_CPU, 1);
		return -1;
	}
	return cpu_ns;
}

static enum po_status complete_stage(struct po_model *model, struct thread *thread,
				     const struct open_span *span, bool bottom,
				     const struct po_event *event)
{
	int64_t wall_ns = event->time_ns > span->begin_ns ? event->time_ns - span->begin_ns : 0;
	int64_t cpu_ns = plausible_cpu_ns(model, event->u.stage.cpu_ns, wall_ns);
	int64_t batch = event->u.stage.batch >= 0 ? event->u.stage.batch : span->batch;
	bool training = spans_is_training(model, thread);
	enum po_status status = PO_STATUS_OK;
	int32_t made_by = -1;

	label_tracker_consume(&model->labels, span->label_index, wall_ns, cpu_ns);
	producer_stats(&model->procs.processes[thread->process], span, bottom, wall_ns, cpu_ns);
	if (is_loader_stage(span->stage) && training)
		step_tracker_own_loading(&model->loop, span->stage, span->same_below, batch,
					 wall_ns, event->time_ns);
	else if (is_loader_stage(span->stage))
		status = step_tracker_loader_span(&model->loop, thread->pid, span->stage,
						  span->same_below, batch, wall_ns, event->time_ns,
						  &made_by);
	batch_made(model, made_by);
	if (status != PO_STATUS_OK)
		return status;
	/* A data wait's begin names the batch expected, its end the one received (or -1). */
	if (training && span->stage == PO_STAGE_DATA_WAIT)
		step_tracker_consume(&model->loop, event->u.stage.batch, span->begin_ns,
				     event->time_ns);
	detail_tracker_push_span(&model->timeline,
				 &(struct po_span){.kind = PO_SPAN_STAGE,
						   .sub = span->stage,
						   .pid = thread->pid,
						   .tid = thread->tid,
						   .device = -1,
						   .stream = -1,
						   .label = span->label,
						   .begin_ns = span->begin_ns,
						   .end_ns = span->begin_ns + wall_ns,
						   .batch = batch});
	return PO_STATUS_OK;
}

/* Matches an end to its open span (index), popping mismatched spans above it. */
static const struct open_span *close_open(struct po_model *model, struct thread *thread, long index,
					  int64_t time_ns)
{
	if (spans_is_training(model, thread))
		training_flush(model, thread, time_ns);
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
			training_flush(model, thread, event->time_ns);
		return push_open(model, thread, &open);
	}
	index = find_open(thread, OPEN_SYNC, 0);
	if (index < 0) {
		note_unmatched(model, thread, 0, 1);
		return PO_STATUS_OK;
	}
	span = close_open(model, thread, index, event->time_ns);
	detail_tracker_push_span(&model->timeline,
				 &(struct po_span){.kind = PO_SPAN_SYNC,
						   .pid = thread->pid,
						   .tid = thread->tid,
						   .device = span->device,
						   .stream = span->stream,
						   .begin_ns = span->begin_ns,
						   .end_ns = event->time_ns > span->begin_ns
								 ? event->time_ns
								 : span->begin_ns,
						   .batch = -1});
	return PO_STATUS_OK;
}

/* Ends the open step at time_ns on the training thread: the tracker's part, memory, timelines. */
static enum po_status close_step(struct po_model *model, const struct thread *thread,
				 int64_t time_ns, int64_t batch_size)
{
	struct po_step_sample sample = {.host_live_bytes = memory_tracker_host_live(&model->memory),
					.gpu_live_bytes = memory_tracker_gpu_live(&model->memory)};
	const struct po_step *step;

	process_tracker_expire_silent(&model->procs, time_ns);
	sample.rss_bytes = process_tracker_rss_sum(&model->procs);
	sample.main_rss_bytes = model->procs.processes[thread->process].rss_last_bytes;
	step = step_tracker_close(&model->loop, time_ns, spans_open_category(thread), batch_size,
				  &sample);
	detail_tracker_push_span(&model->timeline, &(struct po_span){.kind = PO_SPAN_STEP,
								     .pid = thread->pid,
								     .tid = thread->tid,
								     .device = -1,
								     .stream = -1,
								     .begin_ns = step->begin_ns,
								     .end_ns = step->end_ns,
								     .batch = step->batch});
	return detail_tracker_step_ended(&model->timeline);
}

enum po_status spans_step_begin(struct po_model *model, struct thread *thread,
				const struct po_event *event)
{
	enum po_status status;

	thread->step_count++;
	model->procs.processes[thread->process].step_count++;
	if (!step_tracker_claim(&model->loop, thread->pid, thread->tid))
		return PO_STATUS_OK;
	if (model->loop.step_open) { /* no step_end: the open step ends here */
		note_unmatched(model, thread, 1, 0);
		status = close_step(model, thread, event->time_ns, -1);
		if (status != PO_STATUS_OK)
			return status;
	}
	return step_tracker_open(&model->loop, event);
}

enum po_status spans_step_end(struct po_model *model, struct thread *thread,
			      const struct po_event *event)
{
	if (!spans_is_training(model, thread))
		return PO_STATUS_OK;
	if (!model->loop.step_open) {
		model->quality.unmatched_ends++;
		return PO_STATUS_OK;
	}
	if (step_tracker_open_step(&model->loop)->index != event->u.step.step)
		model->quality.step_mismatches++;
	if (event->u.step.batch_size == 0) { /* it consumed no batch: no loop body ran */
		step_tracker_drop_open(&model->loop);
		return PO_STATUS_OK;
	}
	return close_step(model, thread, event->time_ns, event->u.step.batch_size);
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
