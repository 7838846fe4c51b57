/*
 * model_gpu.c: the model as the GPU tracker's host (gpu.h). The tracker keeps devices,
 * streams and their unions; the model gives it the analysis window, takes the union of
 * all devices into the steps' gpu_busy_ns, attributes each idle gap to what the training
 * thread did meanwhile, and keeps GPU records as spans for the timelines.
 */
#include <limits.h>
#include <stdlib.h>

#include "model_internal.h"

#define NAME_SPACE_GPU 1

static int64_t host_window_begin(void *ctx)
{
	const struct po_model *model = ctx;

	return model->loop.step_count ? po_step_store_borrow(model->loop.steps, 0)->begin_ns
				      : INT64_MIN;
}

/*
 * Adds the interval's overlap with every step to their gpu_busy_ns, which never exceeds an
 * ended step's length (the open step's is clamped when it ends, steps.c). Intervals mostly
 * fall in the latest steps; a late one edits older steps, whose chunk the store reads back.
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
		if (to > from) {
			struct po_step *edited = po_step_store_edit(model->loop.steps, i);

			edited->gpu_busy_ns += to - from;
			if (edited->end_ns != INT64_MAX &&
			    edited->gpu_busy_ns > edited->end_ns - edited->begin_ns)
				edited->gpu_busy_ns = edited->end_ns - edited->begin_ns;
		}
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

/*
 * A gap that ended before the steps the analysis covers (the config's steps range: a live
 * window's) is in none of them: looking its step up would read the run's older steps.
 */
static int64_t host_step_at(void *ctx, int64_t begin_ns, int64_t end_ns)
{
	const struct po_model *model = ctx;

	if (end_ns <= model->config.steps_after_ns)
		return -1;
	return model_step_at(model, begin_ns, end_ns);
}

void model_gpu_init(struct po_model *model)
{
	const struct po_gpu_host host = {.ctx = model,
					 .window_begin_ns = host_window_begin,
					 .busy = host_busy,
					 .gap = host_gap,
					 .step_at = host_step_at};

	gpu_tracker_init(&model->gpu, &host, model->config.min_gap_ns, model->config.max_gaps);
	kernel_tracker_init(&model->kernels);
}

void model_gpu_fini(struct po_model *model)
{
	gpu_tracker_fini(&model->gpu);
	kernel_tracker_fini(&model->kernels);
	po_map_free(&model->launches);
	free(model->launch_ring);
}

size_t model_gpu_bytes(const struct po_model *model)
{
	return gpu_tracker_bytes(&model->gpu) + kernel_tracker_bytes(&model->kernels) +
	       po_map_bytes(&model->launches) +
	       (model->launch_ring ? PO_LAUNCH_CAP * sizeof(struct launch_key) : 0);
}

enum po_status model_gpu_launch(struct po_model *model, const struct thread *thread,
				const struct po_event *event)
{
	struct launch_key key = {(uint32_t)event->pid, event->u.gpu_launch.correlation_id};
	struct po_map_entry *entry;

	if (key.correlation == 0)
		return PO_STATUS_OK; /* no record will name it */
	if (!model->launch_ring &&
	    !(model->launch_ring = calloc(PO_LAUNCH_CAP, sizeof(*model->launch_ring))))
		return PO_STATUS_NOMEM;
	if (model->launch_count == PO_LAUNCH_CAP) { /* the oldest launch is forgotten */
		const struct launch_key *oldest = &model->launch_ring[model->launch_next];

		entry = po_map_find(&model->launches, oldest->pid, oldest->correlation);
		if (entry)
			po_map_remove(&model->launches, entry);
		model->launch_count--;
	}
	entry = po_map_upsert(&model->launches, key.pid, key.correlation, NULL);
	if (!entry)
		return PO_STATUS_NOMEM;
	entry->value = (uint64_t)(spans_innermost_stage(thread) + 2);
	model->launch_ring[model->launch_next] = key;
	model->launch_next = (model->launch_next + 1) % PO_LAUNCH_CAP;
	model->launch_count++;
	return PO_STATUS_OK;
}

/* The stage the record's launch was made in: -1 none, -2 no launch recorded. */
static int launching_stage(const struct po_model *model, const struct po_event *event)
{
	const struct po_map_entry *entry;

	if (event->u.gpu_activity.correlation_id == 0)
		return -2;
	entry = po_map_find(&model->launches, (uint32_t)event->pid,
			    event->u.gpu_activity.correlation_id);
	return entry ? (int)entry->value - 2 : -2;
}

/* The step the record began in: the last step to begin no later, if it had not ended. */
static int64_t step_of_start(struct po_model *model, int64_t start_ns)
{
	size_t after = po_step_store_upper_bound(model->loop.steps, start_ns);

	if (!after || po_step_store_borrow(model->loop.steps, after - 1)->end_ns <= start_ns)
		return -1;
	return (int64_t)(after - 1);
}

/* Whether a kernel launched fewer blocks than the device has multiprocessors. */
static bool kernel_is_small(const struct po_model *model, const struct po_event *event)
{
	int32_t multiprocessors =
	    gpu_tracker_multiprocessors(&model->gpu, event->u.gpu_activity.device);

	return multiprocessors > 0 && event->u.gpu_activity.grid_blocks &&
	       event->u.gpu_activity.grid_blocks < (uint64_t)multiprocessors;
}

/*
 * Kernels that share their launch's correlation id with others ran from one launch of
 * several: a CUDA graph (CUPTI gives a graph's kernels the id of cudaGraphLaunch). The
 * second kernel of a launch counts for the first too.
 */
static int graph_kernels(struct po_model *model, const struct po_event *event)
{
	struct po_map_entry *entry;

	if (event->u.gpu_activity.correlation_id == 0)
		return 0;
	entry = po_map_find(&model->launches, (uint32_t)event->pid,
			    event->u.gpu_activity.correlation_id);
	if (!entry)
		return 0;
	entry->aux1++;
	return entry->aux1 == 2 ? 2 : entry->aux1 > 2 ? 1 : 0;
}

/* Adds the record to its step's GPU work by class (result.h) and a kernel to its name's. */
static enum po_status account_in_step(struct po_model *model, const struct po_event *event,
				      const char *name)
{
	int64_t duration_ns = event->u.gpu_activity.end_ns - event->u.gpu_activity.start_ns;
	int64_t index = step_of_start(model, event->u.gpu_activity.start_ns);
	struct po_kernel_kind kind;
	struct po_step *step;

	if (index < 0)
		return PO_STATUS_OK;
	if (kernel_tracker_kind(&model->kernels, event, &kind) != PO_STATUS_OK)
		return PO_STATUS_NOMEM;
	step = po_step_store_edit(model->loop.steps, (size_t)index);
	step->gpu_class_ns[kind.cls] += duration_ns;
	step->gpu_class_count[kind.cls]++;
	if (po_kernel_class_is_matrix(kind.cls))
		step->gpu_matrix_ns[kind.precision] += duration_ns;
	if (event->u.gpu_activity.kind != PO_GPU_KERNEL)
		return PO_STATUS_OK;
	if (kernel_is_small(model, event))
		step->gpu_small_kernel_ns += duration_ns;
	step->gpu_graph_kernels += graph_kernels(model, event);
	if (duration_ns < PO_SHORT_KERNEL_NS)
		step->gpu_short_kernels++;
	return kernel_tracker_consume(&model->kernels, name, kind, event);
}

enum po_status model_gpu_device(struct po_model *model, const struct po_event *event)
{
	const char *name = NULL;

	if (event->u.gpu_device.name.len) {
		name = model_intern_capped(model, NAME_SPACE_GPU, event->u.gpu_device.name,
					   &model->gpu_name_count, PO_NAME_CAP, model->fold_name);
		if (!name)
			return PO_STATUS_NOMEM;
	}
	return gpu_tracker_describe(&model->gpu, event, name);
}

enum po_status model_gpu_memory(struct po_model *model, const struct po_event *event)
{
	switch (event->u.counter.kind) {
	case PO_COUNTER_GPU_MEM_USED:
	case PO_COUNTER_GPU_MEM_RESERVED:
	case PO_COUNTER_GPU_MEM_PEAK:
	case PO_COUNTER_GPU_MEM_FREE:
		return gpu_tracker_memory(&model->gpu, event);
	default:
		return PO_STATUS_OK;
	}
}

/*
 * A kernel's launch shape past what CUDA allows (1024 threads a block; a grid of at most
 * 2^31 - 1 by 65535 by 65535 blocks) is a damaged one: the kernel is kept, its shape left
 * unknown.
 */
#define PO_BLOCK_THREADS_MAX 1024u
#define PO_GRID_BLOCKS_MAX (UINT64_C(2147483647) * 65535u * 65535u)

enum po_status model_gpu_activity(struct po_model *model, const struct po_event *activity)
{
	struct po_event shaped;
	const struct po_event *event = activity;
	enum po_status status;
	const char *name;
	bool accepted;

	if (activity->u.gpu_activity.block_threads > PO_BLOCK_THREADS_MAX ||
	    activity->u.gpu_activity.grid_blocks > PO_GRID_BLOCKS_MAX) {
		model_implausible(model, PO_IMPLAUSIBLE_KERNEL_SHAPE, 1);
		shaped = *activity;
		shaped.u.gpu_activity.grid_blocks = 0;
		shaped.u.gpu_activity.block_threads = 0;
		event = &shaped;
	}
	status = gpu_tracker_consume(&model->gpu, event, &accepted);
	if (status != PO_STATUS_OK)
		return status;
	if (!accepted) {
		model_implausible(model, PO_IMPLAUSIBLE_GPU_RECORD, 1);
		return PO_STATUS_OK;
	}
	gpu_tracker_launched_by(&model->gpu, event->u.gpu_activity.device,
				launching_stage(model, event),
				event->u.gpu_activity.end_ns - event->u.gpu_activity.start_ns);
	name = model_intern_capped(model, NAME_SPACE_GPU, event->u.gpu_activity.name,
				   &model->gpu_name_count, PO_NAME_CAP, model->fold_name);
	if (!name)
		return PO_STATUS_NOMEM;
	status = account_in_step(model, event, name);
	if (status != PO_STATUS_OK)
		return status;
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
	if (gpu_tracker_build(&model->gpu, model->loop.step_count > 0, begin_ns, end_ns,
			      analysis) != PO_STATUS_OK)
		return PO_STATUS_NOMEM;
	return kernel_tracker_build(&model->kernels, analysis);
}
