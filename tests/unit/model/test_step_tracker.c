/*
 * test_step_tracker.c: the step tracker alone, told what a model would tell it: the first
 * thread to begin a step is the training thread; a step's time goes to the category open
 * until each change; a worker's batch is made once and consumed by the step whose data
 * wait ends with it, the wait after it was ready being the hand-off; loading on the
 * training thread fills a step that consumed no worker's batch; a GPU gap's cause comes
 * from the category segments; the step open at the end is dropped; two trackers side by
 * side.
 */
#include <string.h>

#include "check.h"
#include "steps.h"

#define MS 1000000LL

static const struct po_step_sample no_sample = {-1, -1, -1, -1};

static void open_step(struct po_step_tracker *tracker, int64_t step, int64_t time_ns)
{
	struct po_event event = {
	    .kind = PO_EV_STEP_BEGIN, .time_ns = time_ns, .pid = 100, .tid = 100};

	event.u.step.step = step;
	event.u.step.batch_size = -1;
	CHECK(step_tracker_claim(tracker, 100, 100));
	CHECK(step_tracker_open(tracker, &event) == PO_STATUS_OK);
}

static void test_breakdown(void)
{
	struct po_step_tracker tracker;
	const struct po_step *step;
	struct po_step_sample sample = {1, 2, 3, 4};

	CHECK(step_tracker_init(&tracker) == PO_STATUS_OK);
	open_step(&tracker, 0, 0);
	CHECK(!step_tracker_claim(&tracker, 100, 101)); /* another thread: counted only */
	CHECK_INT_EQ(tracker.steps_other_threads, 1);
	step_tracker_advance(&tracker, 10 * MS, PO_CAT_DATA_WAIT);
	step_tracker_advance(&tracker, 10 * MS, PO_CAT_FORWARD); /* nothing elapsed */
	step_tracker_advance(&tracker, 25 * MS, PO_CAT_FORWARD);
	step_tracker_advance(&tracker, 20 * MS, PO_CAT_BACKWARD); /* older: ignored */
	step = step_tracker_close(&tracker, 40 * MS, PO_CAT_BACKWARD, 32, &sample);
	CHECK_INT_EQ(step->category_ns[PO_CAT_DATA_WAIT], 10 * MS);
	CHECK_INT_EQ(step->category_ns[PO_CAT_FORWARD], 15 * MS);
	CHECK_INT_EQ(step->category_ns[PO_CAT_BACKWARD], 15 * MS);
	CHECK_INT_EQ(step->end_ns, 40 * MS);
	CHECK_INT_EQ(step->batch_size, 32);
	CHECK(step->host_live_bytes == 1 && step->gpu_live_bytes == 2 && step->rss_bytes == 3 &&
	      step->main_rss_bytes == 4);
	CHECK(!tracker.step_open && tracker.step_count == 1);
	CHECK(step_tracker_open_step(&tracker) == NULL);
	step_tracker_fini(&tracker);
}

/* A worker's batch: made at 20 ms, waited for from 10 to 25 ms: 5 ms of hand-off. */
static void test_worker_batch_and_handoff(void)
{
	struct po_step_tracker tracker;
	const struct po_step *step;
	int32_t made_by;

	CHECK(step_tracker_init(&tracker) == PO_STATUS_OK);
	open_step(&tracker, 0, 0);
	CHECK(step_tracker_loader_span(&tracker, 200, PO_STAGE_LOAD, false, 5, 8 * MS, 12 * MS,
				       &made_by) == PO_STATUS_OK);
	CHECK_INT_EQ(made_by, -1);
	CHECK(step_tracker_loader_span(&tracker, 200, PO_STAGE_COLLATE, false, 5, 1 * MS, 20 * MS,
				       &made_by) == PO_STATUS_OK);
	CHECK_INT_EQ(made_by, 200);
	step_tracker_advance(&tracker, 10 * MS, PO_CAT_FORWARD);
	step_tracker_advance(&tracker, 25 * MS, PO_CAT_DATA_WAIT);
	step_tracker_consume(&tracker, 5, 10 * MS, 25 * MS);
	step = step_tracker_close(&tracker, 30 * MS, PO_CAT_FORWARD, -1, &no_sample);
	CHECK_INT_EQ(step->worker_pid, 200);
	CHECK_INT_EQ(step->batch, 5);
	CHECK_INT_EQ(step->load_ns, 8 * MS);
	CHECK_INT_EQ(step->collate_ns, 1 * MS);
	CHECK_INT_EQ(step->preprocess_ns, -1);
	CHECK_INT_EQ(step->ready_ns, 20 * MS);
	CHECK_INT_EQ(step->category_ns[PO_CAT_DATA_WAIT], 10 * MS);
	CHECK_INT_EQ(step->category_ns[PO_CAT_HANDOFF], 5 * MS);
	CHECK(batch_tracker_find(&tracker.batches, 5) == NULL); /* consumed */
	/* a batch_ready for the same number later makes a new batch, counted again */
	{
		struct po_event ready = {.kind = PO_EV_BATCH_READY, .time_ns = 31 * MS, .pid = 201};

		ready.u.batch_ready.batch = 6;
		ready.u.batch_ready.queue_depth = 3;
		CHECK(step_tracker_batch_ready(&tracker, &ready, &made_by) == PO_STATUS_OK);
		CHECK_INT_EQ(made_by, 201);
		CHECK(step_tracker_batch_ready(&tracker, &ready, &made_by) == PO_STATUS_OK);
		CHECK_INT_EQ(made_by, -1); /* once */
		CHECK_INT_EQ(tracker.latest_queue_depth, 3);
	}
	step_tracker_fini(&tracker);
}

/* Loading on the training thread itself fills the step. */
static void test_own_loading(void)
{
	struct po_step_tracker tracker;
	const struct po_step *step;

	CHECK(step_tracker_init(&tracker) == PO_STATUS_OK);
	open_step(&tracker, 0, 0);
	step_tracker_own_loading(&tracker, PO_STAGE_LOAD, false, 9, 4 * MS, 4 * MS);
	step_tracker_own_loading(&tracker, PO_STAGE_LOAD, true, 9, 1 * MS, 4 * MS); /* nested */
	step_tracker_own_loading(&tracker, PO_STAGE_COLLATE, false, 9, 1 * MS, 5 * MS);
	step = step_tracker_close(&tracker, 10 * MS, PO_CAT_FORWARD, -1, &no_sample);
	CHECK_INT_EQ(step->load_ns, 4 * MS);
	CHECK_INT_EQ(step->collate_ns, 1 * MS);
	CHECK_INT_EQ(step->batch, 9);
	CHECK_INT_EQ(step->ready_ns, 5 * MS);
	CHECK_INT_EQ(step->worker_pid, -1);
	/* the next step starts with none of it */
	open_step(&tracker, 1, 10 * MS);
	step = step_tracker_close(&tracker, 20 * MS, PO_CAT_FORWARD, -1, &no_sample);
	CHECK_INT_EQ(step->load_ns, -1);
	CHECK_INT_EQ(step->batch, -1);
	step_tracker_fini(&tracker);
}

static void test_cause_and_drop(void)
{
	struct po_step_tracker tracker;
	int64_t cause_ns = 0;

	CHECK(step_tracker_init(&tracker) == PO_STATUS_OK);
	open_step(&tracker, 0, 0);
	step_tracker_advance(&tracker, 10 * MS, PO_CAT_FORWARD);
	step_tracker_advance(&tracker, 40 * MS, PO_CAT_DATA_WAIT);
	step_tracker_advance(&tracker, 50 * MS, PO_CAT_FORWARD);
	CHECK(step_tracker_cause(&tracker, 5 * MS, 45 * MS, &cause_ns) == PO_CAT_DATA_WAIT);
	CHECK_INT_EQ(cause_ns, 30 * MS);
	/* time past the segments (outside steps) counts as other */
	CHECK(step_tracker_cause(&tracker, 45 * MS, 100 * MS, &cause_ns) == PO_CAT_OTHER);
	CHECK_INT_EQ(cause_ns, 50 * MS);
	step_tracker_drop_open(&tracker);
	CHECK(!tracker.step_open && tracker.step_count == 0);
	CHECK_INT_EQ(po_step_store_count(tracker.steps), 0);
	step_tracker_fini(&tracker);
}

static void test_side_by_side(void)
{
	struct po_step_tracker one, two;

	CHECK(step_tracker_init(&one) == PO_STATUS_OK);
	CHECK(step_tracker_init(&two) == PO_STATUS_OK);
	open_step(&one, 0, 0);
	open_step(&two, 0, 0);
	step_tracker_advance(&one, 10 * MS, PO_CAT_FORWARD);
	step_tracker_advance(&two, 10 * MS, PO_CAT_BACKWARD);
	CHECK_INT_EQ(step_tracker_close(&one, 20 * MS, PO_CAT_FORWARD, -1, &no_sample)
			 ->category_ns[PO_CAT_FORWARD],
		     20 * MS);
	CHECK_INT_EQ(step_tracker_close(&two, 20 * MS, PO_CAT_FORWARD, -1, &no_sample)
			 ->category_ns[PO_CAT_BACKWARD],
		     10 * MS);
	step_tracker_fini(&one);
	step_tracker_fini(&two);
}

int main(void)
{
	RUN(test_breakdown);
	RUN(test_worker_batch_and_handoff);
	RUN(test_own_loading);
	RUN(test_cause_and_drop);
	RUN(test_side_by_side);
	return CHECK_SUMMARY();
}
