/*
 * model_gpu.c: the model as the GPU tracker's host (gpu.h). The tracker keeps devices,
 * streams and their unions; the model gives it the analysis window, takes the union of
 * all devices into the steps' gpu_busy_ns, attributes each idle gap to what the training
 * thread did meanwhile, and keeps GPU records as spans for the timelines.
 */
#include <limits.h>

#include "model_internal.h"

#define NAME_SPACE_GPU 1

static int64_t host_window_begin(void *ctx)
{
	const struct po_model *model = ctx;

	return model->loop.step_count ? po_step_store_borrow(model->loop.steps, 0)->begin_ns
				      : INT64_MIN;
}

/*
 * Adds the interval's overlap with every step to their gpu_busy_ns. Intervals mostly fall
 * in the latest steps; a late one edits older steps, whose chunk the store reads back.
 */
static void host_busy(void *ctx, int64_t begin_ns, int64_t end_ns)
{
	struct po_model *model = ctx;
	size_t low = po_step_store_upper_bound(model->loop.steps, begin_ns);

	for (size_t i = low ? low - 1 : 0; i < model->loop.step_count; i++) {
		const struct po_step *step = po_step_store_borrow(model->loop.steps, i);
		int64_t from = step->begin_ns > begin_ns ? step->begin_ns : begin_ns;
		int64_t to = step->end_ns < end_ns ? step->end_ns : end_ns;

		if (step->begin_ns >= end_ns)
			break;
		if (to > from)
			po_step_store_edit(model->loop.steps, i)->gpu_busy_ns += to - from;
	}
}

static enum po_status host_gap(void *ctx, struct po_gpu_gap *gap)
{
	struct po_model *model = ctx;
	int64_t step;

	gap->cause = step_tracker_cause(&model->loop, gap->begin_ns, gap->end_ns, &gap->cause_ns);
	step = model_step_at(model, gap->begin_ns, gap->end_ns);
	return step >= 0 ? detail_tracker_gap_found(&model->timeline, (size_t)step,
						    gap->end_ns - gap->begin_ns)
			 : PO_STATUS_OK;
}

static int64_t host_step_at(void *ctx, int64_t begin_ns, int64_t end_ns)
{
	return model_step_at(ctx, begin_ns, end_ns);
}

void model_gpu_init(struct po_model *model)
{
	const struct po_gpu_host host = {.ctx = model,
					 .window_begin_ns = host_window_begin,
					 .busy = host_busy,
					 .gap = host_gap,
					 .step_at = host_step_at};

	gpu_tracker_init(&model->gpu, &host, model->config.min_gap_ns, model->config.max_gaps);
}

enum po_status model_gpu_activity(struct po_model *model, const struct po_event *event)
{
	enum po_status status;
	const char *name;
	bool accepted;

	status = gpu_tracker_consume(&model->gpu, event, &accepted);
	if (status != PO_STATUS_OK)
		return status;
	if (!accepted) {
		model->quality.implausible_values++;
		return PO_STATUS_OK;
	}
	name = model_intern_capped(model, NAME_SPACE_GPU, event->u.gpu_activity.name,
				   &model->gpu_name_count, PO_NAME_CAP, model->fold_name);
	if (!name)
		return PO_STATUS_NOMEM;
	detail_tracker_push_span(&model->timeline,
				 &(struct po_span){.kind = PO_SPAN_GPU,
						   .sub = event->u.gpu_activity.kind,
						   .pid = event->pid,
						   .tid = -1,
						   .device = event->u.gpu_activity.device,
						   .stream = event->u.gpu_activity.stream,
						   .label = name,
						   .begin_ns = event->u.gpu_activity.start_ns,
						   .end_ns = event->u.gpu_activity.end_ns >
								     event->u.gpu_activity.start_ns
								 ? event->u.gpu_activity.end_ns
								 : event->u.gpu_activity.start_ns,
						   .batch = -1});
	return PO_STATUS_OK;
}

/* The analysis window is the steps': first step's begin to last step's end. */
enum po_status model_gpu_build(struct po_model *model, struct po_analysis *analysis)
{
	int64_t begin_ns = 0, end_ns = 0;

	if (model->loop.step_count) {
		begin_ns = po_step_store_borrow(model->loop.steps, 0)->begin_ns;
		end_ns =
		    po_step_store_borrow(model->loop.steps, model->loop.step_count - 1)->end_ns;
	}
	return gpu_tracker_build(&model->gpu, model->loop.step_count > 0, begin_ns, end_ns,
				 analysis);
}
