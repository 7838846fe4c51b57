/*
 * timeline_json.c: timeline.json in the Chrome trace-event format, which Perfetto and
 * chrome://tracing open. It holds only the steps the model kept in detail (the slowest,
 * the median, stalls, requested ones), so its size is bounded whatever the trace length.
 *
 * Lanes: one process per traced process (named "main", "worker N") with its threads, and
 * one process per GPU at PO_TIMELINE_GPU_PID_BASE + device with a thread per stream.
 * Timestamps are microseconds since the trace's first event, with nanosecond decimals.
 */
#include <stdlib.h>
#include <string.h>

#include "json_names.h"
#include "json_writer.h"
#include "render_json.h"
#include "common/text.h"

/* Above any Linux pid (PID_MAX_LIMIT is 2^22), so GPU lanes never meet a process. */
#define PO_TIMELINE_GPU_PID_BASE 1000000000
#define PO_TIMELINE_SCHEMA "profopt.timeline/1"

struct timeline {
	struct po_json_writer *writer;	    /* weak */
	const struct po_analysis *analysis; /* weak */
	int64_t base_ns;
	const struct po_span **spans; /* owned array of weak pointers: every kept span, sorted */
	size_t span_count;
	const struct po_counter_sample **counters; /* owned array of weak pointers, sorted */
	size_t counter_count;
};

static int64_t gpu_lane_pid(int32_t device)
{
	return (int64_t)PO_TIMELINE_GPU_PID_BASE + (device >= 0 ? device : 0);
}

static int compare_int64(int64_t a, int64_t b)
{
	return (a > b) - (a < b);
}

/* Time order, longer spans first so that viewers nest them; then every field. */
static int compare_spans(const void *left, const void *right)
{
	const struct po_span *a = *(const struct po_span *const *)left;
	const struct po_span *b = *(const struct po_span *const *)right;
	int order;

	if ((order = compare_int64(a->begin_ns, b->begin_ns)) ||
	    (order = compare_int64(b->end_ns, a->end_ns)) ||
	    (order = compare_int64(a->pid, b->pid)) || (order = compare_int64(a->tid, b->tid)) ||
	    (order = compare_int64(a->kind, b->kind)) || (order = compare_int64(a->sub, b->sub)) ||
	    (order = compare_int64(a->device, b->device)) ||
	    (order = compare_int64(a->stream, b->stream)) ||
	    (order = compare_int64(a->batch, b->batch)))
		return order;
	return strcmp(a->label ? a->label : "", b->label ? b->label : "");
}

static int compare_counters(const void *left, const void *right)
{
	const struct po_counter_sample *a = *(const struct po_counter_sample *const *)left;
	const struct po_counter_sample *b = *(const struct po_counter_sample *const *)right;
	int order;

	if ((order = compare_int64(a->time_ns, b->time_ns)) ||
	    (order = compare_int64(a->pid, b->pid)) || (order = compare_int64(a->kind, b->kind)) ||
	    (order = compare_int64(a->device, b->device)))
		return order;
	return compare_int64(a->value, b->value);
}

/* Sorts the pointers and drops duplicates (a span kept by two neighbouring steps). */
static size_t sort_unique(const void **items, size_t count,
			  int (*compare)(const void *, const void *))
{
	size_t kept = 0, i;

	qsort(items, count, sizeof(*items), compare);
	for (i = 0; i < count; i++) {
		if (kept && compare(&items[kept - 1], &items[i]) == 0)
			continue;
		items[kept++] = items[i];
	}
	return kept;
}

/* The last value written of one counter series: a process, a kind and a device. */
struct series {
	int32_t pid;
	int kind;
	int32_t device;
	int64_t value;
};

static struct series *find_series(struct series *series, size_t *count,
				  const struct po_counter_sample *sample, bool *found)
{
	size_t i;

	for (i = 0; i < *count; i++) {
		if (series[i].pid == sample->pid && series[i].kind == (int)sample->kind &&
		    series[i].device == sample->device) {
			*found = true;
			return &series[i];
		}
	}
	*found = false;
	series[*count] = (struct series){sample->pid, (int)sample->kind, sample->device, 0};
	return &series[(*count)++];
}

/*
 * A counter lane is drawn as steps, so a sample that repeats its series' previous value
 * adds nothing but size; samplers that fire per batch repeat the RSS thousands of times.
 */
static enum po_status drop_repeated_values(struct timeline *timeline, struct po_error *err)
{
	struct series *series =
	    calloc(timeline->counter_count ? timeline->counter_count : 1, sizeof(*series));
	size_t series_count = 0, kept = 0, i;

	if (!series) {
		po_error_set(err, "Failed to collect the timeline's counters: out of memory");
		return PO_STATUS_NOMEM;
	}
	for (i = 0; i < timeline->counter_count; i++) {
		const struct po_counter_sample *sample = timeline->counters[i];
		bool found;
		struct series *last = find_series(series, &series_count, sample, &found);

		if (found && last->value == sample->value)
			continue;
		last->value = sample->value;
		timeline->counters[kept++] = sample;
	}
	timeline->counter_count = kept;
	free(series);
	return PO_STATUS_OK;
}

static enum po_status collect(struct timeline *timeline, struct po_error *err)
{
	const struct po_analysis *analysis = timeline->analysis;
	size_t spans = 0, counters = 0, i, j;

	for (i = 0; i < analysis->detail_count; i++) {
		spans += analysis->details[i].span_count;
		counters += analysis->details[i].counter_count;
	}
	timeline->spans = calloc(spans ? spans : 1, sizeof(*timeline->spans));
	timeline->counters = calloc(counters ? counters : 1, sizeof(*timeline->counters));
	if (!timeline->spans || !timeline->counters) {
		po_error_set(err, "Failed to collect the timeline's spans: out of memory");
		return PO_STATUS_NOMEM;
	}
	for (i = 0; i < analysis->detail_count; i++) {
		const struct po_step_detail *detail = &analysis->details[i];

		for (j = 0; j < detail->span_count; j++) {
			if (detail->spans[j].kind != PO_SPAN_STEP)
				timeline->spans[timeline->span_count++] = &detail->spans[j];
		}
		for (j = 0; j < detail->counter_count; j++)
			timeline->counters[timeline->counter_count++] = &detail->counters[j];
	}
	timeline->span_count =
	    sort_unique((const void **)timeline->spans, timeline->span_count, compare_spans);
	timeline->counter_count = sort_unique((const void **)timeline->counters,
					      timeline->counter_count, compare_counters);
	return drop_repeated_values(timeline, err);
}

static void kv_ts(struct timeline *timeline, int64_t ns)
{
	po_json_write_key(timeline->writer, "ts");
	po_json_write_thousandths(timeline->writer, ns - timeline->base_ns);
}

static void kv_dur(struct timeline *timeline, int64_t begin_ns, int64_t end_ns)
{
	po_json_write_key(timeline->writer, "dur");
	po_json_write_thousandths(timeline->writer, end_ns > begin_ns ? end_ns - begin_ns : 0);
}

/* An "M" event naming a process or a thread lane. */
static void write_lane_name(struct timeline *timeline, const char *what, int64_t pid, int64_t tid,
			    const char *name)
{
	struct po_json_writer *writer = timeline->writer;

	po_json_write_begin_object(writer);
	po_json_write_key(writer, "args");
	po_json_write_begin_object(writer);
	po_json_write_kv_string(writer, "name", name);
	po_json_write_end_object(writer);
	po_json_write_kv_string(writer, "name", what);
	po_json_write_kv_string(writer, "ph", "M");
	po_json_write_kv_int(writer, "pid", pid);
	po_json_write_kv_int(writer, "tid", tid);
	po_json_write_end_object(writer);
}

static void write_sort_index(struct timeline *timeline, int64_t pid, int64_t index)
{
	struct po_json_writer *writer = timeline->writer;

	po_json_write_begin_object(writer);
	po_json_write_key(writer, "args");
	po_json_write_begin_object(writer);
	po_json_write_kv_int(writer, "sort_index", index);
	po_json_write_end_object(writer);
	po_json_write_kv_string(writer, "name", "process_sort_index");
	po_json_write_kv_string(writer, "ph", "M");
	po_json_write_kv_int(writer, "pid", pid);
	po_json_write_kv_int(writer, "tid", 0);
	po_json_write_end_object(writer);
}

static void process_lane_name(const struct po_process *process, char *buf, size_t size)
{
	if (process->role == PO_ROLE_MAIN)
		snprintf(buf, size, "main (pid %d)", (int)process->pid);
	else if (process->role == PO_ROLE_WORKER && process->worker_id >= 0)
		snprintf(buf, size, "worker %lld (pid %d)", (long long)process->worker_id,
			 (int)process->pid);
	else
		snprintf(buf, size, "%.*s (pid %d)", po_text_precision(process->name, 64),
			 process->name ? process->name : "process", (int)process->pid);
}

static void write_process_lanes(struct timeline *timeline)
{
	const struct po_analysis *analysis = timeline->analysis;
	char name[128];
	size_t i;

	for (i = 0; i < analysis->process_count; i++) {
		const struct po_process *process = &analysis->processes[i];
		int64_t index = process->role == PO_ROLE_MAIN ? 0 : 1 + (int64_t)i;

		process_lane_name(process, name, sizeof(name));
		write_lane_name(timeline, "process_name", process->pid, 0, name);
		write_sort_index(timeline, process->pid, index);
	}
	for (i = 0; i < analysis->thread_count; i++) {
		const struct po_thread *thread = &analysis->threads[i];

		if (thread->is_training_loop)
			snprintf(name, sizeof(name), "training loop (tid %d)", (int)thread->tid);
		else
			snprintf(name, sizeof(name), "%.*s (tid %d)",
				 po_text_precision(thread->name, 64),
				 thread->name ? thread->name : "thread", (int)thread->tid);
		write_lane_name(timeline, "thread_name", thread->pid, thread->tid, name);
	}
}

static void write_gpu_lanes(struct timeline *timeline)
{
	const struct po_analysis *analysis = timeline->analysis;
	char name[64];
	size_t i;

	for (i = 0; i < analysis->gpu_count; i++) {
		int32_t device = analysis->gpus[i].device;

		snprintf(name, sizeof(name), "GPU %d", (int)device);
		write_lane_name(timeline, "process_name", gpu_lane_pid(device), 0, name);
		write_sort_index(timeline, gpu_lane_pid(device),
				 (int64_t)analysis->process_count + 1 + (int64_t)i);
	}
	for (i = 0; i < analysis->stream_count; i++) {
		const struct po_gpu_stream *stream = &analysis->streams[i];

		snprintf(name, sizeof(name), "stream %d", (int)stream->stream);
		write_lane_name(timeline, "thread_name", gpu_lane_pid(stream->device),
				stream->stream, name);
	}
}

/* The training thread, where step markers go: pid and tid. */
static void training_thread(const struct po_analysis *analysis, int64_t *pid, int64_t *tid)
{
	size_t i;

	*pid = analysis->main_pid >= 0 ? analysis->main_pid : 0;
	*tid = *pid;
	for (i = 0; i < analysis->thread_count; i++) {
		if (analysis->threads[i].is_training_loop) {
			*pid = analysis->threads[i].pid;
			*tid = analysis->threads[i].tid;
			if (analysis->threads[i].pid == analysis->main_pid)
				return;
		}
	}
}

static void write_reasons(struct po_json_writer *writer, uint32_t reasons)
{
	static const struct {
		uint32_t flag;
		const char *name;
	} names[] = {{PO_DETAIL_MEDIAN, "median"},
		     {PO_DETAIL_NEIGHBOR, "neighbor"},
		     {PO_DETAIL_REQUESTED, "requested"},
		     {PO_DETAIL_SLOWEST, "slowest"},
		     {PO_DETAIL_STALL, "stall"}};
	size_t i;

	po_json_write_key(writer, "reasons");
	po_json_write_begin_array(writer);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (reasons & names[i].flag)
			po_json_write_string(writer, names[i].name);
	}
	po_json_write_end_array(writer);
}

static void write_step_marker(struct timeline *timeline, const struct po_step_detail *detail,
			      int64_t pid, int64_t tid)
{
	const struct po_analysis *analysis = timeline->analysis;
	struct po_json_writer *writer = timeline->writer;
	bool known = detail->step_index < analysis->step_count;
	const struct po_step copy =
	    known ? po_analysis_step(analysis, detail->step_index) : (struct po_step){0};
	const struct po_step *step = known ? &copy : NULL;
	char name[48];

	snprintf(name, sizeof(name), "step %lld", step ? (long long)step->index : -1LL);
	po_json_write_begin_object(writer);
	po_json_write_key(writer, "args");
	po_json_write_begin_object(writer);
	po_json_write_kv_int_or_null(writer, "epoch", step ? step->epoch : -1);
	write_reasons(writer, detail->reasons);
	po_json_write_kv_bool(writer, "truncated", detail->truncated);
	po_json_write_end_object(writer);
	po_json_write_kv_string(writer, "cat", "step");
	kv_dur(timeline, detail->begin_ns, detail->end_ns);
	po_json_write_kv_string(writer, "name", name);
	po_json_write_kv_string(writer, "ph", "X");
	po_json_write_kv_int(writer, "pid", pid);
	po_json_write_kv_int(writer, "tid", tid);
	kv_ts(timeline, detail->begin_ns);
	po_json_write_end_object(writer);
}

static void write_span_args(struct po_json_writer *writer, const struct po_span *span)
{
	po_json_write_key(writer, "args");
	po_json_write_begin_object(writer);
	if (span->kind == PO_SPAN_STAGE) {
		po_json_write_kv_int_or_null(writer, "batch", span->batch);
		po_json_write_kv_string(writer, "label", span->label);
	} else if (span->kind == PO_SPAN_GPU) {
		po_json_write_kv_string(writer, "kind", po_json_gpu_kind_name(span->sub));
	} else {
		po_json_write_kv_int(writer, "device", span->device);
		po_json_write_kv_int(writer, "stream", span->stream);
	}
	po_json_write_end_object(writer);
}

static void write_span(struct timeline *timeline, const struct po_span *span)
{
	struct po_json_writer *writer = timeline->writer;
	bool gpu = span->kind == PO_SPAN_GPU;
	const char *name = "gpu_sync";

	if (span->kind == PO_SPAN_STAGE)
		name = po_json_stage_name(span->sub);
	else if (gpu)
		name =
		    span->label && span->label[0] ? span->label : po_json_gpu_kind_name(span->sub);
	po_json_write_begin_object(writer);
	write_span_args(writer, span);
	po_json_write_kv_string(writer, "cat",
				span->kind == PO_SPAN_STAGE ? "stage"
				: gpu			    ? "gpu"
							    : "sync");
	kv_dur(timeline, span->begin_ns, span->end_ns);
	po_json_write_kv_string(writer, "name", name);
	po_json_write_kv_string(writer, "ph", "X");
	po_json_write_kv_int(writer, "pid", gpu ? gpu_lane_pid(span->device) : span->pid);
	po_json_write_kv_int(writer, "tid", gpu ? span->stream : span->tid);
	kv_ts(timeline, span->begin_ns);
	po_json_write_end_object(writer);
}

static void write_counter(struct timeline *timeline, const struct po_counter_sample *sample)
{
	struct po_json_writer *writer = timeline->writer;
	char name[64];

	if (sample->device >= 0)
		snprintf(name, sizeof(name), "%s (GPU %d)", po_json_counter_name(sample->kind),
			 (int)sample->device);
	else
		snprintf(name, sizeof(name), "%s", po_json_counter_name(sample->kind));
	po_json_write_begin_object(writer);
	po_json_write_key(writer, "args");
	po_json_write_begin_object(writer);
	if (sample->kind == PO_COUNTER_PROCESS_CPU) {
		po_json_write_kv_ms(writer, "cpu_ms", sample->value);
	} else if (sample->kind == PO_COUNTER_QUEUE_DEPTH) {
		po_json_write_kv_int(writer, "batches", sample->value);
	} else {
		po_json_write_kv_int(writer, "bytes", sample->value);
	}
	po_json_write_end_object(writer);
	po_json_write_kv_string(writer, "name", name);
	po_json_write_kv_string(writer, "ph", "C");
	po_json_write_kv_int(writer, "pid", sample->pid);
	kv_ts(timeline, sample->time_ns);
	po_json_write_end_object(writer);
}

static void write_events(struct timeline *timeline)
{
	const struct po_analysis *analysis = timeline->analysis;
	int64_t pid, tid;
	size_t i;

	write_process_lanes(timeline);
	write_gpu_lanes(timeline);
	training_thread(analysis, &pid, &tid);
	for (i = 0; i < analysis->detail_count; i++)
		write_step_marker(timeline, &analysis->details[i], pid, tid);
	for (i = 0; i < timeline->span_count; i++)
		write_span(timeline, timeline->spans[i]);
	for (i = 0; i < timeline->counter_count; i++)
		write_counter(timeline, timeline->counters[i]);
}

static void write_document(struct timeline *timeline)
{
	struct po_json_writer *writer = timeline->writer;

	po_json_write_begin_object(writer);
	po_json_write_kv_string(writer, "displayTimeUnit", "ms");
	po_json_write_key(writer, "otherData");
	po_json_write_begin_object(writer);
	po_json_write_kv_string(writer, "schema", PO_TIMELINE_SCHEMA);
	po_json_write_kv_string(writer, "time_zero", "first event of the trace");
	po_json_write_end_object(writer);
	po_json_write_key(writer, "traceEvents");
	po_json_write_begin_array(writer);
	po_json_write_inline_items(writer);
	write_events(timeline);
	po_json_write_end_array(writer);
	po_json_write_end_object(writer);
}

enum po_status po_render_timeline_json(const struct po_analysis *analysis, const char *path,
				       struct po_error *err)
{
	struct po_json_writer writer;
	struct timeline timeline = {
	    .writer = &writer, .analysis = analysis, .base_ns = po_render_time_base_ns(analysis)};
	enum po_status status;

	status = collect(&timeline, err);
	if (status == PO_STATUS_OK)
		status = po_json_writer_open(&writer, path, err);
	if (status == PO_STATUS_OK) {
		write_document(&timeline);
		status = po_analysis_steps_check(analysis, err); /* steps read back intact */
		if (status == PO_STATUS_OK) {
			status = po_json_writer_close(&writer, err);
		} else {
			po_json_writer_abandon(&writer);
			po_error_prepend(err, "Failed to write the timeline");
		}
	} else {
		po_error_prepend(err, "Failed to write the timeline");
	}
	free(timeline.spans);
	free(timeline.counters);
	return status;
}
