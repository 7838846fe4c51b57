/* test_gpu.c: GPU unions over streams and devices, gaps and their causes, late records. */
#include "builder.h"

enum { MAIN = 100 };

static void span(struct po_model *model, int64_t begin_ms, int64_t end_ms, enum po_stage which)
{
	stage_begin(model, begin_ms * MS, MAIN, MAIN, which, "", -1);
	stage_end(model, end_ms * MS, MAIN, MAIN, which, -1);
}

static void gpu_ms(struct po_model *model, int64_t at_ns, int32_t device, int32_t stream,
		   int64_t begin_ms, int64_t end_ms)
{
	gpu_record(model, at_ns, MAIN, device, stream, begin_ms * MS, end_ms * MS);
}

static struct po_analysis *two_steps(void)
{
	struct po_model *model = model_new(NULL);

	step_begin(model, 0, MAIN, MAIN, 0);
	span(model, 0, 30, PO_STAGE_DATA_WAIT);
	span(model, 30, 60, PO_STAGE_FORWARD);
	span(model, 60, 90, PO_STAGE_BACKWARD);
	stage_begin(model, 90 * MS, MAIN, MAIN, PO_STAGE_OPTIMIZER, "", -1);
	/* records come after their activity, not in start order */
	gpu_ms(model, 96 * MS, 0, 0, 62, 88);
	gpu_ms(model, 96 * MS, 1, 0, 10, 20);
	gpu_ms(model, 96 * MS, 0, 0, 32, 58);
	gpu_ms(model, 96 * MS, 0, 1, 91, 95);
	gpu_ms(model, 96 * MS, 0, 1, 50, 70);
	stage_end(model, 100 * MS, MAIN, MAIN, PO_STAGE_OPTIMIZER, -1);
	step_end(model, 100 * MS, MAIN, MAIN, 0);
	step_begin(model, 100 * MS, MAIN, MAIN, 1);
	span(model, 100, 150, PO_STAGE_DATA_WAIT);
	span(model, 150, 180, PO_STAGE_FORWARD);
	stage_begin(model, 180 * MS, MAIN, MAIN, PO_STAGE_BACKWARD, "", -1);
	gpu_ms(model, 199 * MS + 500000, 0, 0, 182, 199);
	gpu_ms(model, 199 * MS + 500000, 0, 0, 152, 178);
	stage_end(model, 200 * MS, MAIN, MAIN, PO_STAGE_BACKWARD, -1);
	step_end(model, 200 * MS, MAIN, MAIN, 1);
	return model_done(model);
}

static void check_gap(const struct po_gpu_gap *gap, int64_t begin_ms, int64_t end_ms,
		      enum po_category cause, int64_t cause_ms, int64_t step_index)
{
	CHECK_INT_EQ(gap->begin_ns, begin_ms * MS);
	CHECK_INT_EQ(gap->end_ns, end_ms * MS);
	CHECK_INT_EQ(gap->cause, cause);
	CHECK_INT_EQ(gap->cause_ns, cause_ms * MS);
	CHECK_INT_EQ(gap->step_index, step_index);
}

static void union_and_gaps(void)
{
	struct po_analysis *analysis = two_steps();
	const struct po_gpu_device *gpu;

	CHECK_INT_EQ(analysis->gpu_count, 2);
	gpu = &analysis->gpus[0];
	CHECK_INT_EQ(gpu->device, 0);
	CHECK_INT_EQ(gpu->activity_count, 6);
	CHECK_INT_EQ(gpu->window_ns, 200 * MS);
	CHECK_INT_EQ(gpu->busy_ns, 103 * MS);
	CHECK_INT_EQ(gpu->idle_ns, 97 * MS);
	CHECK_INT_EQ(gpu->late_records, 0);
	CHECK_INT_EQ(gpu->gaps_begin, 0);
	CHECK_INT_EQ(gpu->gap_count, 5);
	CHECK_INT_EQ(analysis->gap_count, 7);
	if (analysis->gap_count == 7) {
		check_gap(&analysis->gaps[0], 0, 32, PO_CAT_DATA_WAIT, 30, 0);
		check_gap(&analysis->gaps[1], 88, 91, PO_CAT_BACKWARD, 2, 0);
		check_gap(&analysis->gaps[2], 95, 152, PO_CAT_DATA_WAIT, 50, 1);
		check_gap(&analysis->gaps[3], 178, 182, PO_CAT_BACKWARD, 2, 1);
		check_gap(&analysis->gaps[4], 199, 200, PO_CAT_BACKWARD, 1, 1);
		check_gap(&analysis->gaps[5], 0, 10, PO_CAT_DATA_WAIT, 10, 0);
		/* forward and data_wait tie at 60 ms: the category first in priority wins */
		check_gap(&analysis->gaps[6], 20, 200, PO_CAT_FORWARD, 60, 1);
	}
	CHECK_INT_EQ(gpu->gap_ns_by_cause[PO_CAT_DATA_WAIT], 89 * MS);
	CHECK_INT_EQ(gpu->gap_ns_by_cause[PO_CAT_BACKWARD], 8 * MS);
	gpu = &analysis->gpus[1];
	CHECK_INT_EQ(gpu->device, 1);
	CHECK_INT_EQ(gpu->busy_ns, 10 * MS);
	CHECK_INT_EQ(gpu->idle_ns, 190 * MS);
	CHECK_INT_EQ(gpu->gaps_begin, 5);
	CHECK_INT_EQ(gpu->gap_count, 2);
	/* each step's busy time is the union over every device */
	CHECK_INT_EQ(po_analysis_step(analysis, 0).gpu_busy_ns, 70 * MS);
	CHECK_INT_EQ(po_analysis_step(analysis, 1).gpu_busy_ns, 43 * MS);
	CHECK_INT_EQ(analysis->stream_count, 3);
	CHECK_INT_EQ(analysis->streams[0].stream, 0);
	CHECK_INT_EQ(analysis->streams[0].activity_count, 4);
	CHECK_INT_EQ(analysis->streams[0].busy_ns, 95 * MS);
	CHECK_INT_EQ(analysis->streams[0].kind_ns[PO_GPU_KERNEL], 95 * MS);
	CHECK_INT_EQ(analysis->streams[1].stream, 1);
	CHECK_INT_EQ(analysis->streams[1].busy_ns, 24 * MS);
	CHECK_INT_EQ(analysis->streams[2].device, 1);
	po_analysis_destroy(analysis);
}

/* Short gaps are not recorded, and past max_gaps they are only counted. */
static void gap_limits(void)
{
	struct po_model_config config;
	struct po_model *model;
	struct po_analysis *analysis;

	po_model_config_init(&config);
	config.min_gap_ns = 6 * MS;
	config.max_gaps = 2;
	model = model_new(&config);
	step_begin(model, 0, MAIN, MAIN, 0);
	for (int i = 0; i < 10; i++) /* idle 5 ms after even records, 9 ms after odd ones */
		gpu_ms(model, (15 * i + 12) * MS, 0, 0, 15 * i, 15 * i + 10 - (i % 2 ? 4 : 0));
	step_end(model, 150 * MS, MAIN, MAIN, 0);
	analysis = model_done(model);
	CHECK_INT_EQ(analysis->gpus[0].gap_count, 2);
	CHECK_INT_EQ(analysis->gpus[0].gaps_not_kept, 3);
	CHECK_INT_EQ(analysis->gaps[0].end_ns - analysis->gaps[0].begin_ns, 9 * MS);
	po_analysis_destroy(analysis);
}

/* A record older than the merged part is merged approximately and counted. */
static void late_records(void)
{
	struct po_model *model = model_new(NULL);
	struct po_analysis *analysis;
	int64_t t = 0;

	step_begin(model, 0, MAIN, MAIN, 0);
	for (int i = 0; i < 3000;
	     i++, t += 100000) /* 300 ms: more than the 100 ms a record waits */
		gpu_record(model, t + 9000, MAIN, 0, 0, t, t + 5000);
	gpu_record(model, t, MAIN, 0, 0, 1000, 2000);
	step_end(model, t, MAIN, MAIN, 0);
	analysis = model_done(model);
	CHECK_INT_EQ(analysis->gpus[0].late_records, 1);
	CHECK_INT_EQ(analysis->gpus[0].activity_count, 3001);
	CHECK_INT_EQ(analysis->gpus[0].busy_ns, 3000 * 5000);
	CHECK_INT_EQ(po_analysis_step(analysis, 0).gpu_busy_ns, 3000 * 5000);
	CHECK(find_warning(analysis, "late-gpu-records") != NULL);
	po_analysis_destroy(analysis);
}

/* Records far older than the newest one are merged without waiting for the buffer. */
static void stale_records_flush(void)
{
	struct po_model *model = model_new(NULL);
	struct po_analysis *analysis;
	const int64_t s = 1000 * MS;

	gpu_record(model, 6 * s, MAIN, 0, 0, 5 * s, 6 * s);
	gpu_record(model, 17 * s, MAIN, 0, 0, 16 * s, 17 * s); /* merges the first one */
	gpu_record(model, 17 * s, MAIN, 0, 0, 3 * s, 4 * s);   /* older than what was merged */
	gpu_record(model, 18 * s, MAIN, 0, 0, 15 * s, 16 * s); /* still waiting: exact */
	analysis = model_done(model);
	CHECK_INT_EQ(analysis->gpus[0].late_records, 1);
	CHECK_INT_EQ(analysis->gpus[0].activity_count, 4);
	po_analysis_destroy(analysis);
}

/* Without steps the window is the activity span. */
static void no_steps_window(void)
{
	struct po_model *model = model_new(NULL);
	struct po_analysis *analysis;

	gpu_ms(model, 30 * MS, 0, 0, 10, 20);
	gpu_ms(model, 50 * MS, 0, 0, 30, 40);
	analysis = model_done(model);
	CHECK_INT_EQ(analysis->gpus[0].window_ns, 30 * MS);
	CHECK_INT_EQ(analysis->gpus[0].busy_ns, 20 * MS);
	CHECK_INT_EQ(analysis->gap_count, 1);
	CHECK_INT_EQ(analysis->gaps[0].cause, PO_CAT_OTHER);
	CHECK_INT_EQ(analysis->gaps[0].step_index, -1);
	po_analysis_destroy(analysis);
}

static void launch(struct po_model *model, int64_t t, int32_t pid, uint64_t correlation)
{
	struct po_event event = event_at(PO_EV_GPU_LAUNCH, t, pid, pid);

	event.u.gpu_launch.device = -1;
	event.u.gpu_launch.stream = -1;
	event.u.gpu_launch.correlation_id = correlation;
	event.u.gpu_launch.name = str_of("gemm");
	feed(model, &event);
}

static void record(struct po_model *model, int64_t t, int32_t pid, uint64_t correlation,
		   int64_t start_ms, int64_t end_ms)
{
	struct po_event event = event_at(PO_EV_GPU_ACTIVITY, t, pid, pid);

	event.u.gpu_activity.device = 0;
	event.u.gpu_activity.kind = PO_GPU_KERNEL;
	event.u.gpu_activity.name = str_of("gemm");
	event.u.gpu_activity.start_ns = start_ms * MS;
	event.u.gpu_activity.end_ns = end_ms * MS;
	event.u.gpu_activity.correlation_id = correlation;
	feed(model, &event);
}

/*
 * A record's time goes to the stage open on the thread that launched it (matched by
 * process and correlation id), to none when no stage was open, and to unlaunched when
 * no launch carries its id, even the same id in another process.
 */
static void launching_stage(void)
{
	struct po_model *model = model_new(NULL);
	struct po_analysis *analysis;

	step_begin(model, 0, MAIN, MAIN, 0);
	stage_begin(model, 1 * MS, MAIN, MAIN, PO_STAGE_FORWARD, "", -1);
	launch(model, 2 * MS, MAIN, 7);
	stage_end(model, 3 * MS, MAIN, MAIN, PO_STAGE_FORWARD, -1);
	stage_begin(model, 4 * MS, MAIN, MAIN, PO_STAGE_BACKWARD, "", -1);
	launch(model, 5 * MS, MAIN, 8);
	stage_end(model, 6 * MS, MAIN, MAIN, PO_STAGE_BACKWARD, -1);
	launch(model, 7 * MS, MAIN, 9);
	record(model, 8 * MS, MAIN, 7, 2, 5);
	record(model, 9 * MS, MAIN, 8, 5, 6);
	record(model, 10 * MS, MAIN, 9, 7, 9);
	record(model, 11 * MS, MAIN, 0, 9, 10);
	record(model, 12 * MS, MAIN + 1, 7, 10, 14);
	step_end(model, 20 * MS, MAIN, MAIN, 0);
	analysis = model_done(model);
	CHECK(analysis->gpu_count == 1);
	CHECK_INT_EQ(analysis->gpus[0].launched_ns_by_stage[PO_STAGE_FORWARD], 3 * MS);
	CHECK_INT_EQ(analysis->gpus[0].launched_ns_by_stage[PO_STAGE_BACKWARD], 1 * MS);
	CHECK_INT_EQ(analysis->gpus[0].launched_outside_stages_ns, 2 * MS);
	CHECK_INT_EQ(analysis->gpus[0].unlaunched_ns, 5 * MS);
	po_analysis_destroy(analysis);
}

int main(void)
{
	RUN(launching_stage);
	RUN(union_and_gaps);
	RUN(gap_limits);
	RUN(late_records);
	RUN(stale_records_flush);
	RUN(no_steps_window);
	return CHECK_SUMMARY();
}
