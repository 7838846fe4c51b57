/*
 * test_bounded.c: a million synthetic events (steps, four workers with ever-new labels,
 * allocations, GPU records with ever-new names, counters) keep the model's memory bounded:
 * only the per-step records grow with the trace.
 */
#include <stdio.h>

#include "builder.h"
#include "step_store.h"

enum { MAIN = 100, WORKERS = 4, TOTAL_EVENTS = 1000000 };

static int64_t events_fed;

static void count(int64_t events)
{
	events_fed += events;
}

static void worker_batch(struct po_model *model, int64_t t, int64_t batch)
{
	int32_t pid = 200 + (int32_t)(batch % WORKERS);
	char label[32];

	snprintf(label, sizeof(label), "sample-%lld", (long long)batch);
	stage_begin(model, t, pid, pid, PO_STAGE_LOAD, label, batch);
	stage(model, PO_EV_STAGE_END, t + 2000, pid, pid, PO_STAGE_LOAD, "", batch, 1500);
	stage_begin(model, t + 2000, pid, pid, PO_STAGE_COLLATE, "default", batch);
	stage_end(model, t + 3000, pid, pid, PO_STAGE_COLLATE, batch);
	batch_ready(model, t + 3100, pid, batch, 2);
	count(5);
}

static void allocations(struct po_model *model, int64_t t, int64_t step)
{
	for (int i = 0; i < 8; i++)
		libc_call(model, PO_EV_LIBC_MALLOC, t + i, MAIN, 0x10000 + (uint64_t)i * 64, 0, 64,
			  0, 0x400000 + (uint64_t)i);
	for (int i = 0; i < 8; i++)
		libc_call(model, PO_EV_LIBC_FREE, t + 8 + i, MAIN, 0x10000 + (uint64_t)i * 64, 0, 0,
			  0, 0x500000);
	if (step % 100 == 0) /* a slow leak */
		libc_call(model, PO_EV_LIBC_MALLOC, t + 20, MAIN, 0x90000000 + (uint64_t)step, 0,
			  4096, 0, 0x600000);
	count(16 + (step % 100 == 0));
}

static void gpu_work(struct po_model *model, int64_t t, int64_t step)
{
	struct po_event event;
	char name[32];

	for (int i = 0; i < 6; i++) {
		snprintf(name, sizeof(name), "kernel_%lld_%d", (long long)step, i);
		event = event_at(PO_EV_GPU_ACTIVITY, t + 10, MAIN, MAIN);
		event.u.gpu_activity.device = 0;
		event.u.gpu_activity.stream = i % 2;
		event.u.gpu_activity.name = str_of(name);
		event.u.gpu_activity.start_ns = t - 50000 + i * 7000 + (i % 3) * 1000;
		event.u.gpu_activity.end_ns = event.u.gpu_activity.start_ns + 5000;
		feed(model, &event);
	}
	count(6);
}

/* One step: about 50 events, 60 us. */
static int64_t one_step(struct po_model *model, int64_t t, int64_t step)
{
	step_begin(model, t, MAIN, MAIN, step);
	stage_begin(model, t, MAIN, MAIN, PO_STAGE_DATA_WAIT, "next", -1);
	worker_batch(model, t + 100, step + 2);
	stage_end(model, t + 5000, MAIN, MAIN, PO_STAGE_DATA_WAIT, step);
	stage_begin(model, t + 5000, MAIN, MAIN, PO_STAGE_FORWARD, "model", -1);
	allocations(model, t + 6000, step);
	stage_end(model, t + 20000, MAIN, MAIN, PO_STAGE_FORWARD, -1);
	stage_begin(model, t + 20000, MAIN, MAIN, PO_STAGE_BACKWARD, "model", -1);
	sync_span(model, PO_EV_GPU_SYNC_BEGIN, t + 30000, MAIN, MAIN);
	sync_span(model, PO_EV_GPU_SYNC_END, t + 35000, MAIN, MAIN);
	stage_end(model, t + 40000, MAIN, MAIN, PO_STAGE_BACKWARD, -1);
	gpu_work(model, t + 40000, step);
	counter(model, t + 45000, MAIN, PO_COUNTER_HOST_RSS, -1, 1000000 + step);
	counter(model, t + 45000, MAIN, PO_COUNTER_QUEUE_DEPTH, -1, 2);
	if (step % 1000 == 999)
		discard(model, PO_EV_DISCARDED_EVENTS, t + 46000, MAIN, PO_COUNT_UNKNOWN, -1);
	step_end(model, t + 60000, MAIN, MAIN, step);
	count(14 + (step % 1000 == 999));
	return t + 60000;
}

static void million_events(void)
{
	struct po_model *model = model_new(NULL);
	struct po_analysis *analysis;
	size_t quarter_bytes = 0, bytes;
	int64_t t = 1000000, step = 0;

	while (events_fed < TOTAL_EVENTS) {
		t = one_step(model, t, step++);
		if (!quarter_bytes && events_fed >= TOTAL_EVENTS / 4)
			quarter_bytes = po_model_bytes(model);
	}
	bytes = po_model_bytes(model);
	printf("steps %lld, bytes after 1/4: %zu, at the end: %zu\n", (long long)step,
	       quarter_bytes, bytes);
	/*
	 * Steps live in a temporary file: the only growth is the step store's cache filling up
	 * (at most PO_STEP_CACHE_CHUNKS chunks) and its 8 bytes per chunk of steps.
	 */
	CHECK(step > 2 * PO_STEP_CACHE_CHUNKS * PO_STEP_CHUNK_STEPS);
	CHECK(bytes - quarter_bytes <
	      (size_t)PO_STEP_CACHE_CHUNKS * PO_STEP_CHUNK_STEPS * sizeof(struct po_step) + 65536);
	CHECK(bytes < 40u * 1024 * 1024);
	analysis = model_done(model);
	CHECK_INT_EQ(analysis->step_count, step);
	CHECK_INT_EQ(analysis->worker_count, WORKERS);
	CHECK(analysis->label_stat_count < 2 * 64 + 16);
	CHECK_INT_EQ(po_analysis_step(analysis, step - 1).worker_pid, 200 + (step - 1) % WORKERS);
	CHECK_INT_EQ(po_analysis_step(analysis, step - 1).load_ns, 2000);
	CHECK_INT_EQ(po_analysis_step(analysis, 10).category_ns[PO_CAT_GPU_SYNC], 5000);
	CHECK_INT_EQ(step_category_sum(analysis, 10), 60000);
	CHECK(analysis->detail_count > 0 && analysis->detail_count < 64);
	CHECK_INT_EQ(analysis->quality.unknown_discards, step / 1000);
	CHECK(analysis->mem_site_count <= 16);
	po_analysis_destroy(analysis);
}

int main(void)
{
	RUN(million_events);
	return CHECK_SUMMARY();
}
