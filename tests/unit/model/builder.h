/* builder.h: small helpers that build typed events and feed them to a model, for the tests. */
#ifndef PO_TEST_MODEL_BUILDER_H
#define PO_TEST_MODEL_BUILDER_H

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "model.h"

#define MS 1000000LL
#define US 1000LL

static inline struct po_str str_of(const char *text)
{
	return (struct po_str){text, text ? strlen(text) : 0};
}

static inline struct po_event event_at(enum po_event_kind kind, int64_t time_ns, int32_t pid,
				       int32_t tid)
{
	return (struct po_event){.kind = kind,
				 .time_ns = time_ns,
				 .pid = pid,
				 .tid = tid,
				 .procname = str_of("python"),
				 .trace_id = (uint32_t)pid};
}

static inline struct po_model *model_new(const struct po_model_config *config)
{
	struct po_model_config defaults;
	struct po_model *model = NULL;
	struct po_error err = {{0}};

	po_model_config_init(&defaults);
	CHECK(po_model_create(config ? config : &defaults, &model, &err) == PO_STATUS_OK);
	return model;
}

static inline void feed(struct po_model *model, const struct po_event *event)
{
	CHECK(po_model_consume(model, event) == PO_STATUS_OK);
}

/* Finishes and destroys the model; the analysis must be destroyed by the caller. */
static inline struct po_analysis *model_done(struct po_model *model)
{
	struct po_analysis *analysis = NULL;
	struct po_error err = {{0}};
	enum po_status status = po_model_finish(model, &analysis, &err);

	if (status != PO_STATUS_OK)
		fprintf(stderr, "finish: %s\n", err.message);
	CHECK(status == PO_STATUS_OK);
	po_model_destroy(model);
	return analysis;
}

static inline void step_begin(struct po_model *model, int64_t t, int32_t pid, int32_t tid,
			      int64_t step)
{
	struct po_event event = event_at(PO_EV_STEP_BEGIN, t, pid, tid);

	event.u.step.step = step;
	event.u.step.epoch = 0;
	event.u.step.batch_size = -1;
	feed(model, &event);
}

static inline void step_end_sized(struct po_model *model, int64_t t, int32_t pid, int32_t tid,
				  int64_t step, int64_t batch_size)
{
	struct po_event event = event_at(PO_EV_STEP_END, t, pid, tid);

	event.u.step.step = step;
	event.u.step.epoch = 0;
	event.u.step.batch_size = batch_size;
	feed(model, &event);
}

static inline void step_end(struct po_model *model, int64_t t, int32_t pid, int32_t tid,
			    int64_t step)
{
	step_end_sized(model, t, pid, tid, step, -1);
}

static inline void stage(struct po_model *model, enum po_event_kind kind, int64_t t, int32_t pid,
			 int32_t tid, enum po_stage which, const char *label, int64_t batch,
			 int64_t cpu_ns)
{
	struct po_event event = event_at(kind, t, pid, tid);

	event.u.stage.stage = which;
	event.u.stage.label = str_of(label);
	event.u.stage.batch = batch;
	event.u.stage.sample = -1;
	event.u.stage.cpu_ns = cpu_ns;
	feed(model, &event);
}

static inline void stage_begin(struct po_model *model, int64_t t, int32_t pid, int32_t tid,
			       enum po_stage which, const char *label, int64_t batch)
{
	stage(model, PO_EV_STAGE_BEGIN, t, pid, tid, which, label, batch, -1);
}

static inline void stage_end(struct po_model *model, int64_t t, int32_t pid, int32_t tid,
			     enum po_stage which, int64_t batch)
{
	stage(model, PO_EV_STAGE_END, t, pid, tid, which, "", batch, -1);
}

static inline void sync_span(struct po_model *model, enum po_event_kind kind, int64_t t,
			     int32_t pid, int32_t tid)
{
	struct po_event event = event_at(kind, t, pid, tid);

	event.u.gpu_sync.device = 0;
	event.u.gpu_sync.stream = 0;
	feed(model, &event);
}

static inline void gpu_record(struct po_model *model, int64_t t, int32_t pid, int32_t device,
			      int32_t stream, int64_t start_ns, int64_t end_ns)
{
	struct po_event event = event_at(PO_EV_GPU_ACTIVITY, t, pid, pid);

	event.u.gpu_activity.device = device;
	event.u.gpu_activity.stream = stream;
	event.u.gpu_activity.kind = PO_GPU_KERNEL;
	event.u.gpu_activity.name = str_of("gemm");
	event.u.gpu_activity.start_ns = start_ns;
	event.u.gpu_activity.end_ns = end_ns;
	feed(model, &event);
}

static inline void counter(struct po_model *model, int64_t t, int32_t pid, enum po_counter kind,
			   int32_t device, int64_t value)
{
	struct po_event event = event_at(PO_EV_COUNTER, t, pid, pid);

	event.u.counter.kind = kind;
	event.u.counter.device = device;
	event.u.counter.value = value;
	feed(model, &event);
}

static inline void batch_ready(struct po_model *model, int64_t t, int32_t pid, int64_t batch,
			       int64_t depth)
{
	struct po_event event = event_at(PO_EV_BATCH_READY, t, pid, pid);

	event.u.batch_ready.batch = batch;
	event.u.batch_ready.queue_depth = depth;
	feed(model, &event);
}

static inline void worker_begin(struct po_model *model, int64_t t, int32_t pid, int64_t worker_id,
				int32_t parent)
{
	struct po_event event = event_at(PO_EV_WORKER_BEGIN, t, pid, pid);

	event.u.worker.worker_id = worker_id;
	event.u.worker.parent_pid = parent;
	feed(model, &event);
}

static inline void worker_end(struct po_model *model, int64_t t, int32_t pid, int64_t worker_id)
{
	struct po_event event = event_at(PO_EV_WORKER_END, t, pid, pid);

	event.u.worker.worker_id = worker_id;
	event.u.worker.parent_pid = -1;
	feed(model, &event);
}

static inline void libc_call(struct po_model *model, enum po_event_kind kind, int64_t t,
			     int32_t pid, uint64_t ptr, uint64_t in_ptr, uint64_t size,
			     int32_t result, uint64_t ip)
{
	struct po_event event = event_at(kind, t, pid, pid);

	event.ip = ip;
	event.u.libc.ptr = ptr;
	event.u.libc.in_ptr = in_ptr;
	event.u.libc.size = size;
	event.u.libc.result = result;
	feed(model, &event);
}

static inline void mem_event(struct po_model *model, enum po_event_kind kind, int64_t t,
			     int32_t pid, uint64_t addr, uint64_t bytes, int32_t device,
			     const char *label)
{
	struct po_event event = event_at(kind, t, pid, pid);

	event.u.mem.addr = addr;
	event.u.mem.bytes = bytes;
	event.u.mem.device = device;
	event.u.mem.label = str_of(label);
	feed(model, &event);
}

static inline void discard(struct po_model *model, enum po_event_kind kind, int64_t t,
			   uint32_t trace_id, int64_t count, int64_t begin_ns)
{
	struct po_event event = event_at(kind, t, -1, -1);

	event.procname = str_of(NULL);
	event.trace_id = trace_id;
	event.u.discarded.count = count;
	event.u.discarded.begin_ns = begin_ns;
	feed(model, &event);
}

static inline int64_t category_sum(const struct po_step *step)
{
	int64_t sum = 0;

	for (int c = 0; c < PO_CATEGORY_COUNT; c++)
		sum += step->category_ns[c];
	return sum;
}

static inline int64_t step_category_sum(const struct po_analysis *analysis, size_t index)
{
	const struct po_step step = po_analysis_step(analysis, index);

	return category_sum(&step);
}

static inline const struct po_warning *find_warning(const struct po_analysis *analysis,
						    const char *code)
{
	for (size_t i = 0; i < analysis->warning_count; i++)
		if (strcmp(analysis->warnings[i].code, code) == 0)
			return &analysis->warnings[i];
	return NULL;
}

static inline enum po_role finish_role(const struct po_analysis *analysis, int32_t pid)
{
	for (size_t i = 0; i < analysis->process_count; i++)
		if (analysis->processes[i].pid == pid)
			return analysis->processes[i].role;
	return PO_ROLE_COUNT;
}

#endif /* PO_TEST_MODEL_BUILDER_H */
