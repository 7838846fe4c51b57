/*
 * test_snapshot.c: a model can be asked for its result at any moment without changing
 * what it gives at the end, and several models run side by side in one process.
 *
 * One run of events (a training thread with stages, GPU syncs and steps; two workers that
 * load and collate batches, die and are replaced; GPU kernels and copies on two streams;
 * allocations with a slow leak; RSS and GPU memory counters) is built once. Then:
 * - one model consumes it in one go; another in 1,000 slices with a snapshot after each:
 *   both final summary.json files are the same bytes;
 * - snapshots taken after some slices are the same bytes as a fresh model given only the
 *   events up to there and finished;
 * - two models fed alternately (each its own run, one shifted in time and pids) give each
 *   the summary.json it gives alone.
 * summary.json is the comparison because it holds every number of the result that a user
 * sees (findings included, as the detectors run on each result).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <unistd.h>

#include "builder.h"
#include "detect.h"
#include "render_json.h"

/*
 * More steps than the step store keeps in memory (8 x 1,024): snapshots read the file. A
 * snapshot every 36 steps (250 slices), every 23rd compared with the result so far.
 */
enum { MAIN = 100, STEPS = 9000, SLICES = 250, CHECKED_EVERY = 23 };

static struct po_event *events;
static size_t event_count, event_capacity;
static char work[] = "/tmp/profopt-snapshot-XXXXXX";

static void add(struct po_event event)
{
	if (event_count == event_capacity) {
		event_capacity = event_capacity ? 2 * event_capacity : 4096;
		events = realloc(events, event_capacity * sizeof(*events));
		CHECK(events != NULL);
	}
	events[event_count++] = event;
}

static struct po_event stage_event(enum po_event_kind kind, int64_t t, int32_t pid,
				   enum po_stage which, const char *label, int64_t batch)
{
	struct po_event event = event_at(kind, t, pid, pid);

	event.u.stage.stage = which;
	event.u.stage.label = str_of(label);
	event.u.stage.batch = batch;
	event.u.stage.sample = -1;
	event.u.stage.cpu_ns = -1;
	return event;
}

static void span(int64_t begin, int64_t end, int32_t pid, enum po_stage which, const char *label,
		 int64_t batch)
{
	add(stage_event(PO_EV_STAGE_BEGIN, begin, pid, which, label, batch));
	add(stage_event(PO_EV_STAGE_END, end, pid, which, "", batch));
}

static void worker_event(enum po_event_kind kind, int64_t t, int32_t pid, int64_t id)
{
	struct po_event event = event_at(kind, t, pid, pid);

	event.u.worker.worker_id = id;
	event.u.worker.parent_pid = kind == PO_EV_WORKER_BEGIN ? MAIN : -1;
	add(event);
}

static void gpu(int64_t t, int32_t stream, enum po_gpu_kind kind, const char *name, int64_t start,
		int64_t end)
{
	struct po_event event = event_at(PO_EV_GPU_ACTIVITY, t, MAIN, MAIN);

	event.u.gpu_activity.device = 0;
	event.u.gpu_activity.stream = stream;
	event.u.gpu_activity.kind = kind;
	event.u.gpu_activity.name = str_of(name);
	event.u.gpu_activity.start_ns = start;
	event.u.gpu_activity.end_ns = end;
	event.u.gpu_activity.bytes = kind == PO_GPU_KERNEL ? 0 : 1 << 20;
	add(event);
}

static void counter_event(int64_t t, int32_t pid, enum po_counter kind, int32_t device,
			  int64_t value)
{
	struct po_event event = event_at(PO_EV_COUNTER, t, pid, pid);

	event.u.counter.kind = kind;
	event.u.counter.device = device;
	event.u.counter.value = value;
	add(event);
}

static void libc_event(enum po_event_kind kind, int64_t t, uint64_t ptr, uint64_t size)
{
	struct po_event event = event_at(kind, t, MAIN, MAIN);

	event.u.libc.ptr = ptr;
	event.u.libc.size = size;
	event.ip = 0x401000 + size % 3;
	add(event);
}

static int compare_time(const void *a, const void *b)
{
	const struct po_event *x = a, *y = b;

	return (x->time_ns > y->time_ns) - (x->time_ns < y->time_ns);
}

/* The run: per step 3 ms of data wait, 4 ms forward, 5 ms backward; workers of 10 steps. */
static void build_run(void)
{
	int64_t t = 10 * MS;
	struct po_event event = event_at(PO_EV_RUN_BEGIN, t - MS, MAIN, MAIN);

	event.u.run_begin.framework = str_of("pytorch");
	add(event);
	for (int64_t step = 0; step < STEPS; step++) {
		int32_t worker = (int32_t)(200 + step / 10 % 2 + 2 * (step / 100));
		int64_t wait = (step % 50 == 7 ? 12 : 3) * MS;

		if (step % 10 == 0 && step / 10 % 2 == 0)
			worker_event(PO_EV_WORKER_BEGIN, t - 2 * MS, worker, step / 10 % 2);
		span(t - 2 * MS, t - MS, worker, PO_STAGE_LOAD, step % 3 ? "jpeg" : "png", step);
		span(t - MS, t - MS / 2, worker, PO_STAGE_COLLATE, "default", step);
		event = event_at(PO_EV_STEP_BEGIN, t, MAIN, MAIN);
		event.u.step.step = step;
		event.u.step.epoch = step / 100;
		event.u.step.batch_size = 32;
		add(event);
		span(t, t + wait, MAIN, PO_STAGE_DATA_WAIT, "", step);
		span(t + wait, t + wait + 4 * MS, MAIN, PO_STAGE_FORWARD, "model", step);
		gpu(t + wait + MS, 1, PO_GPU_MEMCPY_H2D, "copy", t + wait, t + wait + MS / 2);
		gpu(t + wait + 5 * MS, 0, PO_GPU_KERNEL, step % 2 ? "gemm" : "conv", t + wait + MS,
		    t + wait + 4 * MS);
		span(t + wait + 4 * MS, t + wait + 9 * MS, MAIN, PO_STAGE_BACKWARD, "model", step);
		libc_event(PO_EV_LIBC_MALLOC, t + wait + 5 * MS, 0x100000 + (uint64_t)step * 64,
			   4096);
		if (step % 4)
			libc_event(PO_EV_LIBC_FREE, t + wait + 8 * MS,
				   0x100000 + (uint64_t)step * 64, 0);
		counter_event(t + wait + 8 * MS, MAIN, PO_COUNTER_HOST_RSS, -1,
			      (1 << 28) + step * 8192);
		counter_event(t + wait + 8 * MS, MAIN, PO_COUNTER_GPU_MEM_USED, 0,
			      (1 << 30) + step * 4096);
		event = event_at(PO_EV_STEP_END, t + wait + 9 * MS, MAIN, MAIN);
		event.u.step.step = step;
		event.u.step.epoch = step / 100;
		event.u.step.batch_size = 32;
		add(event);
		if (step % 10 == 9 && step / 10 % 2 == 1)
			worker_event(PO_EV_WORKER_END, t + wait + 9 * MS, worker - 1, 0);
		t += wait + 9 * MS + MS / 4;
	}
	event = event_at(PO_EV_RUN_END, t, MAIN, MAIN);
	add(event);
	/* The generator writes some events ahead of time; a trace gives them in time order. */
	qsort(events, event_count, sizeof(*events), compare_time);
}

/* The run shifted in time and to other pids, for a second, independent model. */
static struct po_event shifted(const struct po_event *event)
{
	struct po_event copy = *event;

	copy.time_ns += 5 * MS;
	copy.pid += 1000;
	copy.tid += 1000;
	copy.trace_id += 1000;
	if (copy.kind == PO_EV_GPU_ACTIVITY) {
		copy.u.gpu_activity.start_ns += 5 * MS;
		copy.u.gpu_activity.end_ns += 5 * MS;
	}
	if (copy.kind == PO_EV_WORKER_BEGIN)
		copy.u.worker.parent_pid += 1000;
	return copy;
}

/* Detects and writes summary.json to path. */
static enum po_status write_summary(struct po_analysis *analysis, const char *path,
				    struct po_error *err)
{
	struct po_rules rules;
	enum po_status status;

	po_rules_init(&rules);
	status = po_detect_run(analysis, &rules, err);
	if (status == PO_STATUS_OK)
		status = po_render_summary_json(analysis, path, err);
	return status;
}

/* context: the path, or NULL to only run the detectors (the snapshots not compared). */
static enum po_status snapshot_to_file(struct po_analysis *analysis, void *context,
				       struct po_error *err)
{
	struct po_rules rules;

	if (context)
		return write_summary(analysis, context, err);
	po_rules_init(&rules);
	return po_detect_run(analysis, &rules, err);
}

static void finish_to_file(struct po_model *model, const char *path)
{
	struct po_analysis *analysis = model_done(model);
	struct po_error err = {{0}};

	CHECK(write_summary(analysis, path, &err) == PO_STATUS_OK);
	po_analysis_destroy(analysis);
}

static char *slurp(const char *path, size_t *size)
{
	FILE *file = fopen(path, "rb");
	char *bytes;
	long length;

	CHECK(file != NULL);
	fseek(file, 0, SEEK_END);
	length = ftell(file);
	rewind(file);
	bytes = malloc((size_t)length + 1);
	CHECK(bytes != NULL);
	CHECK(fread(bytes, 1, (size_t)length, file) == (size_t)length);
	fclose(file);
	*size = (size_t)length;
	return bytes;
}

static bool same_file(const char *a, const char *b, bool say)
{
	size_t size_a, size_b;
	char *bytes_a = slurp(a, &size_a), *bytes_b = slurp(b, &size_b);
	bool same = size_a == size_b && memcmp(bytes_a, bytes_b, size_a) == 0;

	if (!same && say)
		fprintf(stderr, "differ: %s (%zu bytes) and %s (%zu bytes)\n", a, size_a, b,
			size_b);
	free(bytes_a);
	free(bytes_b);
	return same;
}

static void path_of(char *path, size_t size, const char *name, size_t index)
{
	snprintf(path, size, "%s/%s-%zu.json", work, name, index);
}

/* A fresh model given events [0, count) and finished, compared with a snapshot's file. */
static void check_prefix(size_t count, const char *snapshot_path)
{
	char path[256];
	struct po_model *model = model_new(NULL);

	for (size_t i = 0; i < count; i++)
		feed(model, &events[i]);
	path_of(path, sizeof(path), "prefix", count);
	finish_to_file(model, path);
	CHECK(same_file(snapshot_path, path, true));
}

static void test_slices(void)
{
	struct po_model *whole = model_new(NULL), *sliced = model_new(NULL);
	struct po_error err = {{0}};
	char path[256], whole_path[256], sliced_path[256];
	size_t fed = 0, checked = 0;

	for (size_t i = 0; i < event_count; i++)
		feed(whole, &events[i]);
	path_of(whole_path, sizeof(whole_path), "whole", 0);
	finish_to_file(whole, whole_path);

	for (size_t slice = 1; slice <= SLICES; slice++) {
		size_t end = event_count * slice / SLICES;
		enum po_status status;

		for (; fed < end; fed++)
			feed(sliced, &events[fed]);
		bool compared = slice % CHECKED_EVERY == 0 || slice == 1 || slice == SLICES;

		path_of(path, sizeof(path), "snapshot", slice);
		status = po_model_snapshot(sliced, INT64_MIN, snapshot_to_file,
					   compared ? path : NULL, &err);
		if (status != PO_STATUS_OK)
			fprintf(stderr, "snapshot %zu: %s\n", slice, err.message);
		CHECK(status == PO_STATUS_OK);
		if (compared) {
			check_prefix(fed, path);
			checked++;
			if (getenv("KEEP") == NULL)
				remove(path);
		}
	}
	path_of(sliced_path, sizeof(sliced_path), "sliced", 0);
	finish_to_file(sliced, sliced_path);
	CHECK(same_file(whole_path, sliced_path, true));
	printf("%zu events in %d slices: the final result and %zu snapshots checked\n", event_count,
	       SLICES, checked);
}

/* Before any profopt event, a snapshot says so; a finished model refuses one. */
static void test_empty_and_finished(void)
{
	struct po_model *model = model_new(NULL);
	struct po_error err = {{0}};

	CHECK(po_model_snapshot(model, INT64_MIN, snapshot_to_file, "/nonexistent/x", &err) ==
	      PO_STATUS_INPUT);
	CHECK(strstr(err.message, "no profopt events") != NULL);
	for (size_t i = 0; i < event_count / 2; i++)
		feed(model, &events[i]);
	/* fn's failure comes back with its message */
	CHECK(po_model_snapshot(model, INT64_MIN, snapshot_to_file, "/nonexistent/x", &err) ==
	      PO_STATUS_OUTPUT);
	CHECK(strstr(err.message, "/nonexistent/x") != NULL);
	po_analysis_destroy(model_done(model));
}

static void test_two_models(void)
{
	struct po_model *first = model_new(NULL), *second = model_new(NULL),
			*alone = model_new(NULL);
	char first_path[256], second_path[256], alone_path[256], whole_path[256];

	for (size_t i = 0; i < event_count; i++) {
		struct po_event copy = shifted(&events[i]);

		feed(first, &events[i]);
		feed(second, &copy);
		feed(alone, &copy);
	}
	path_of(first_path, sizeof(first_path), "first", 0);
	path_of(second_path, sizeof(second_path), "second", 0);
	path_of(alone_path, sizeof(alone_path), "alone", 0);
	path_of(whole_path, sizeof(whole_path), "whole", 0);
	finish_to_file(first, first_path);
	finish_to_file(second, second_path);
	finish_to_file(alone, alone_path);
	CHECK(same_file(first_path, whole_path, true));
	CHECK(same_file(second_path, alone_path, true));
	CHECK(
	    !same_file(first_path, second_path, false)); /* the shift shows: not one shared state */
}

int main(void)
{
	CHECK(mkdtemp(work) != NULL);
	build_run();
	RUN(test_slices);
	RUN(test_empty_and_finished);
	RUN(test_two_models);
	free(events);
	{
		char command[300];

		snprintf(command, sizeof(command), "rm -rf '%s'", work);
		if (getenv("KEEP") == NULL)
			CHECK(system(command) == 0);
	}
	return CHECK_SUMMARY();
}
