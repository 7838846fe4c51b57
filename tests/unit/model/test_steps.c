/* test_steps.c: the per-step breakdown, span matching, batch following and roles. */
#include "builder.h"

enum { MAIN = 100, HELPER = 101, W0 = 201, W1 = 202, OTHER_PID = 300 };

static void breakdown_priority(void)
{
	struct po_model *model = model_new(NULL);
	struct po_analysis *analysis;
	struct po_step copy;
	const struct po_step *step = &copy;

	step_begin(model, 0, MAIN, MAIN, 0);
	stage_begin(model, 0, MAIN, MAIN, PO_STAGE_DATA_WAIT, "next", -1);
	stage_begin(model, 2 * MS, MAIN, MAIN, PO_STAGE_LOAD, "read", 7);
	stage_begin(model, 5 * MS, MAIN, HELPER, PO_STAGE_FORWARD, "fw", -1);
	stage_end(model, 8 * MS, MAIN, MAIN, PO_STAGE_LOAD, 7);
	stage_end(model, 10 * MS, MAIN, MAIN, PO_STAGE_DATA_WAIT, 7);
	stage_begin(model, 10 * MS, MAIN, MAIN, PO_STAGE_FORWARD, "fw", -1);
	stage_end(model, 30 * MS, MAIN, MAIN, PO_STAGE_FORWARD, -1);
	stage_begin(model, 30 * MS, MAIN, MAIN, PO_STAGE_BACKWARD, "bw", -1);
	sync_span(model, PO_EV_GPU_SYNC_BEGIN, 40 * MS, MAIN, MAIN);
	sync_span(model, PO_EV_GPU_SYNC_END, 45 * MS, MAIN, MAIN);
	stage_end(model, 50 * MS, MAIN, MAIN, PO_STAGE_BACKWARD, -1);
	stage_begin(model, 50 * MS, MAIN, MAIN, PO_STAGE_OPTIMIZER, "adam", -1);
	stage_end(model, 60 * MS, MAIN, MAIN, PO_STAGE_OPTIMIZER, -1);
	stage_end(model, 65 * MS, MAIN, HELPER, PO_STAGE_FORWARD, -1);
	step_end(model, 70 * MS, MAIN, MAIN, 0);
	analysis = model_done(model);

	CHECK_INT_EQ(analysis->step_count, 1);
	copy = po_analysis_step(analysis, 0);
	CHECK_INT_EQ(step->end_ns - step->begin_ns, 70 * MS);
	CHECK_INT_EQ(category_sum(step), 70 * MS);
	CHECK_INT_EQ(step->category_ns[PO_CAT_LOAD], 6 * MS);
	CHECK_INT_EQ(step->category_ns[PO_CAT_DATA_WAIT], 4 * MS);
	CHECK_INT_EQ(step->category_ns[PO_CAT_FORWARD], 20 * MS);
	CHECK_INT_EQ(step->category_ns[PO_CAT_BACKWARD], 15 * MS);
	CHECK_INT_EQ(step->category_ns[PO_CAT_GPU_SYNC], 5 * MS);
	CHECK_INT_EQ(step->category_ns[PO_CAT_OPTIMIZER], 10 * MS);
	CHECK_INT_EQ(step->category_ns[PO_CAT_OTHER], 10 * MS);
	/* loading on the training thread fills the step's loader fields */
	CHECK_INT_EQ(step->batch, 7);
	CHECK_INT_EQ(step->worker_pid, -1);
	CHECK_INT_EQ(step->load_ns, 6 * MS);
	CHECK_INT_EQ(step->collate_ns, -1);
	CHECK_INT_EQ(step->flags, 0);
	/* the helper thread's forward counts for labels only */
	CHECK_INT_EQ(analysis->label_stat_count, 5);
	for (size_t i = 0; i < analysis->label_stat_count; i++) {
		const struct po_label_stat *stat = &analysis->label_stats[i];

		if (stat->stage == PO_STAGE_FORWARD) {
			CHECK_STR_EQ(stat->label, "fw");
			CHECK_INT_EQ(stat->count, 2);
			CHECK_INT_EQ(stat->total_ns, 80 * MS);
			CHECK_INT_EQ(stat->role, PO_ROLE_MAIN);
		}
	}
	CHECK_INT_EQ(analysis->label_stats[0].total_ns, 80 * MS); /* sorted by total */
	CHECK_INT_EQ(analysis->thread_count, 2);
	CHECK(analysis->threads[0].is_training_loop);
	CHECK(!analysis->threads[1].is_training_loop);
	CHECK_INT_EQ(analysis->diagnosis.verdict, PO_VERDICT_UNKNOWN);
	CHECK(analysis->diagnosis.findings == NULL);
	po_analysis_destroy(analysis);
}

static void worker_stage(struct po_model *model, int64_t begin, int64_t end, int32_t pid,
			 enum po_stage which, int64_t batch, int64_t cpu_ns)
{
	stage(model, PO_EV_STAGE_BEGIN, begin, pid, pid, which, "ds", batch, -1);
	stage(model, PO_EV_STAGE_END, end, pid, pid, which, "", batch, cpu_ns);
}

static void batches_from_two_workers(void)
{
	struct po_model *model = model_new(NULL);
	struct po_analysis *analysis;
	struct po_step steps[2] = {{0}};

	worker_begin(model, 0, W0, 0, MAIN);
	worker_begin(model, 0, W1, 1, MAIN);
	stage_begin(model, 0, W0, W0, PO_STAGE_LOAD, "ds", 0);
	stage_begin(model, 1 * MS, W1, W1, PO_STAGE_LOAD, "ds", 1);
	stage(model, PO_EV_STAGE_END, 4 * MS, W0, W0, PO_STAGE_LOAD, "", 0, 3 * MS);
	step_begin(model, 5 * MS, MAIN, MAIN, 0);
	stage_begin(model, 5 * MS, MAIN, MAIN, PO_STAGE_DATA_WAIT, "", 0);
	worker_stage(model, 4 * MS + 1, 6 * MS + 1, W0, PO_STAGE_PREPROCESS, 0, -1);
	stage_end(model, 6 * MS + 2, W1, W1, PO_STAGE_LOAD, 1);
	worker_stage(model, 6 * MS + 3, 7 * MS + 3, W0, PO_STAGE_COLLATE, 0, -1);
	stage_end(model, 7 * MS + 500000, MAIN, MAIN, PO_STAGE_DATA_WAIT, 0);
	worker_stage(model, 8 * MS, 10 * MS, W1, PO_STAGE_COLLATE, 1, -1);
	step_end(model, 10 * MS, MAIN, MAIN, 0);
	step_begin(model, 10 * MS, MAIN, MAIN, 1);
	stage_begin(model, 10 * MS, MAIN, MAIN, PO_STAGE_DATA_WAIT, "", -1);
	batch_ready(model, 10 * MS + 5, W1, 1, 2);
	stage_end(model, 11 * MS, MAIN, MAIN, PO_STAGE_DATA_WAIT, 1);
	counter(model, 11 * MS, OTHER_PID, PO_COUNTER_HOST_RSS, -1, 1000);
	step_end(model, 12 * MS, MAIN, MAIN, 1);
	analysis = model_done(model);

	CHECK_INT_EQ(analysis->step_count, 2);
	for (size_t i = 0; i < analysis->step_count && i < 2; i++)
		steps[i] = po_analysis_step(analysis, i);
	CHECK_INT_EQ(steps[0].batch, 0);
	CHECK_INT_EQ(steps[0].worker_pid, W0);
	CHECK_INT_EQ(steps[0].ready_ns, 7 * MS + 3);
	CHECK_INT_EQ(steps[0].load_ns, 4 * MS);
	CHECK_INT_EQ(steps[0].preprocess_ns, 2 * MS);
	CHECK_INT_EQ(steps[0].collate_ns, 1 * MS);
	CHECK_INT_EQ(steps[1].batch, 1);
	CHECK_INT_EQ(steps[1].worker_pid, W1);
	CHECK_INT_EQ(steps[1].ready_ns, 10 * MS + 5);
	CHECK_INT_EQ(steps[1].load_ns, 5 * MS + 2);
	CHECK_INT_EQ(steps[1].preprocess_ns, -1);
	CHECK_INT_EQ(steps[1].collate_ns, 2 * MS);
	CHECK_INT_EQ(steps[1].queue_depth, 2);
	/* The data wait until the batch was ready; the hand-off from then on. */
	CHECK_INT_EQ(steps[1].category_ns[PO_CAT_DATA_WAIT], 5);
	CHECK_INT_EQ(steps[1].category_ns[PO_CAT_HANDOFF], 1 * MS - 5);
	CHECK_INT_EQ(steps[0].category_ns[PO_CAT_DATA_WAIT], 2 * MS + 3);
	CHECK_INT_EQ(steps[0].category_ns[PO_CAT_HANDOFF], MS / 2 - 3);

	CHECK_INT_EQ(analysis->worker_count, 2);
	CHECK_INT_EQ(analysis->workers[0].pid, W0);
	CHECK_INT_EQ(analysis->workers[1].pid, W1);
	CHECK_INT_EQ(analysis->workers[0].batches, 1);
	CHECK_INT_EQ(analysis->workers[1].batches, 1);
	CHECK_INT_EQ(analysis->workers[0].stage_ns[PO_STAGE_LOAD], 4 * MS);
	CHECK_INT_EQ(analysis->workers[0].stage_cpu_ns[PO_STAGE_LOAD], 3 * MS);
	CHECK_INT_EQ(analysis->workers[1].stage_cpu_ns[PO_STAGE_LOAD], -1);
	CHECK_INT_EQ(analysis->workers[0].busy_ns, 7 * MS);

	CHECK_INT_EQ(analysis->main_pid, MAIN);
	CHECK_INT_EQ(analysis->process_count, 4);
	CHECK_INT_EQ(analysis->processes[0].pid, MAIN);
	CHECK_INT_EQ(analysis->processes[0].role, PO_ROLE_MAIN);
	CHECK_INT_EQ(analysis->processes[1].role, PO_ROLE_WORKER);
	CHECK_INT_EQ(analysis->processes[1].worker_id, 0);
	CHECK_INT_EQ(analysis->processes[1].parent_pid, MAIN);
	CHECK_INT_EQ(analysis->processes[2].role, PO_ROLE_WORKER);
	CHECK_INT_EQ(analysis->processes[3].role, PO_ROLE_OTHER);
	CHECK_INT_EQ(analysis->processes[3].rss_last_bytes, 1000);
	CHECK_STR_EQ(analysis->processes[0].name, "python");
	po_analysis_destroy(analysis);
}

/* A process with loader spans and no worker_begin is a worker too. */
static void worker_role_from_spans(void)
{
	struct po_model *model = model_new(NULL);
	struct po_analysis *analysis;

	step_begin(model, 0, MAIN, MAIN, 0);
	worker_stage(model, 1 * MS, 2 * MS, W0, PO_STAGE_LOAD, 5, -1);
	worker_stage(model, 1 * MS, 3 * MS, OTHER_PID, PO_STAGE_FORWARD, -1, -1);
	step_end(model, 4 * MS, MAIN, MAIN, 0);
	analysis = model_done(model);
	CHECK_INT_EQ(analysis->process_count, 3);
	CHECK_INT_EQ(finish_role(analysis, W0), PO_ROLE_WORKER);
	CHECK_INT_EQ(finish_role(analysis, OTHER_PID), PO_ROLE_OTHER);
	CHECK_INT_EQ(analysis->worker_count, 1);
	po_analysis_destroy(analysis);
}

static void unmatched_spans(void)
{
	struct po_model *model = model_new(NULL);
	struct po_analysis *analysis;

	step_begin(model, 0, MAIN, MAIN, 0);
	stage_begin(model, 1 * MS, MAIN, MAIN, PO_STAGE_FORWARD, "", -1);
	stage_begin(model, 2 * MS, MAIN, MAIN, PO_STAGE_BACKWARD, "", -1);
	stage_end(model, 5 * MS, MAIN, MAIN, PO_STAGE_FORWARD, -1);   /* pops backward */
	stage_end(model, 6 * MS, MAIN, MAIN, PO_STAGE_OPTIMIZER, -1); /* never begun */
	step_end(model, 10 * MS, MAIN, MAIN, 0);
	step_begin(model, 10 * MS, MAIN, MAIN, 1);
	stage_begin(model, 11 * MS, MAIN, MAIN, PO_STAGE_FORWARD, "", -1);
	stage_end(model, 12 * MS, MAIN, MAIN, PO_STAGE_FORWARD, -1);
	step_end(model, 13 * MS, MAIN, MAIN, 99); /* names another step */
	step_begin(model, 13 * MS, MAIN, MAIN, 2);
	stage_begin(model, 14 * MS, MAIN, MAIN, PO_STAGE_FORWARD, "", -1); /* trace ends */
	analysis = model_done(model);

	CHECK_INT_EQ(analysis->step_count, 2);
	CHECK(po_analysis_step(analysis, 0).flags & PO_STEP_UNMATCHED);
	CHECK(!(po_analysis_step(analysis, 1).flags & PO_STEP_UNMATCHED));
	CHECK_INT_EQ(po_analysis_step(analysis, 0).category_ns[PO_CAT_FORWARD], 1 * MS);
	CHECK_INT_EQ(po_analysis_step(analysis, 0).category_ns[PO_CAT_BACKWARD], 3 * MS);
	CHECK_INT_EQ(po_analysis_step(analysis, 0).category_ns[PO_CAT_OTHER], 6 * MS);
	CHECK_INT_EQ(step_category_sum(analysis, 0), 10 * MS);
	/* Backward was popped mid-stream; forward and step 2, open at the end, were cut off. */
	CHECK_INT_EQ(analysis->quality.unmatched_begins, 1);
	CHECK_INT_EQ(analysis->quality.open_at_end, 2);
	CHECK_INT_EQ(analysis->quality.unmatched_ends, 1);
	CHECK_INT_EQ(analysis->quality.step_mismatches, 1);
	CHECK(find_warning(analysis, "unmatched-spans") != NULL);
	CHECK(find_warning(analysis, "open-at-end") != NULL);
	CHECK_INT_EQ(analysis->ending, PO_RUN_NO_RUN);
	CHECK(find_warning(analysis, "step-mismatch") != NULL);
	po_analysis_destroy(analysis);
}

/* Labels past max_labels in one (role, stage) fold into one entry. */
static void label_folding(void)
{
	struct po_model_config config;
	struct po_model *model;
	struct po_analysis *analysis;
	char label[32];
	int64_t total = 0;

	po_model_config_init(&config);
	config.max_labels = 4;
	model = model_new(&config);
	step_begin(model, 0, MAIN, MAIN, 0);
	for (int i = 0; i < 10; i++) {
		snprintf(label, sizeof(label), "layer%d", i);
		stage_begin(model, (2 * i + 1) * MS, MAIN, MAIN, PO_STAGE_FORWARD, label, -1);
		stage_end(model, (2 * i + 2) * MS, MAIN, MAIN, PO_STAGE_FORWARD, -1);
	}
	step_end(model, 30 * MS, MAIN, MAIN, 0);
	analysis = model_done(model);
	CHECK_INT_EQ(analysis->label_stat_count, 5);
	for (size_t i = 0; i < analysis->label_stat_count; i++)
		total += analysis->label_stats[i].count;
	CHECK_INT_EQ(total, 10);
	CHECK_STR_EQ(analysis->label_stats[0].label, "(other labels)");
	CHECK_INT_EQ(analysis->label_stats[0].count, 6);
	po_analysis_destroy(analysis);
}

/* What the loop was doing when the events ended: waiting for data since 112 ms. */
static void loop_at_end(void)
{
	struct po_model *model = model_new(NULL);
	struct po_analysis *analysis;

	step_begin(model, 0, MAIN, MAIN, 0);
	stage_begin(model, 0, MAIN, MAIN, PO_STAGE_FORWARD, "fw", -1);
	stage_end(model, 10 * MS, MAIN, MAIN, PO_STAGE_FORWARD, -1);
	step_end(model, 100 * MS, MAIN, MAIN, 0);
	step_begin(model, 110 * MS, MAIN, MAIN, 1);
	stage_begin(model, 112 * MS, MAIN, MAIN, PO_STAGE_DATA_WAIT, "next", -1);
	stage_begin(model, 150 * MS, W0, W0, PO_STAGE_LOAD, "read", 1); /* another thread */
	analysis = model_done(model);
	CHECK(analysis->loop_at_end.step_open);
	CHECK_INT_EQ(analysis->loop_at_end.category, PO_CAT_DATA_WAIT);
	CHECK_INT_EQ(analysis->loop_at_end.since_ns, 112 * MS);
	CHECK_INT_EQ(analysis->step_count, 1); /* the open step is dropped, as before */
	po_analysis_destroy(analysis);

	/* between steps: nothing open */
	model = model_new(NULL);
	step_begin(model, 0, MAIN, MAIN, 0);
	step_end(model, 100 * MS, MAIN, MAIN, 0);
	analysis = model_done(model);
	CHECK(!analysis->loop_at_end.step_open);
	po_analysis_destroy(analysis);
}

/*
 * A step that ends with batch size 0 consumed no batch (the end of the data, or the batch
 * fetched before the loop was left): it is no step, and the next step may reuse its number.
 */
static void step_without_batch(void)
{
	struct po_model *model = model_new(NULL);
	struct po_analysis *analysis;

	step_begin(model, 0, MAIN, MAIN, 0);
	stage_begin(model, 0, MAIN, MAIN, PO_STAGE_FORWARD, "fw", -1);
	stage_end(model, 10 * MS, MAIN, MAIN, PO_STAGE_FORWARD, -1);
	step_end_sized(model, 12 * MS, MAIN, MAIN, 0, 8);
	step_begin(model, 12 * MS, MAIN, MAIN, 1);
	stage_begin(model, 12 * MS, MAIN, MAIN, PO_STAGE_DATA_WAIT, "next", -1);
	stage_end(model, 20 * MS, MAIN, MAIN, PO_STAGE_DATA_WAIT, 1);
	step_end_sized(model, 20 * MS, MAIN, MAIN, 1, 0);
	step_begin(model, 30 * MS, MAIN, MAIN, 1);
	step_end_sized(model, 40 * MS, MAIN, MAIN, 1, 8);
	analysis = model_done(model);
	CHECK_INT_EQ(analysis->step_count, 2);
	CHECK_INT_EQ(po_analysis_step(analysis, 1).begin_ns, 30 * MS);
	CHECK_INT_EQ(analysis->quality.open_at_end, 0);
	CHECK_INT_EQ(analysis->quality.step_mismatches, 0);
	po_analysis_destroy(analysis);
}

int main(void)
{
	RUN(breakdown_priority);
	RUN(loop_at_end);
	RUN(step_without_batch);
	RUN(batches_from_two_workers);
	RUN(worker_role_from_spans);
	RUN(unmatched_spans);
	RUN(label_folding);
	return CHECK_SUMMARY();
}
