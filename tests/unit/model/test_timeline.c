/*
 * test_timeline.c: the timeline tracker alone, over a step tracker: of 40 steps of 10 ms
 * with one of 50 ms, the slow one is kept with its neighbours and exactly the spans that
 * overlap it; a requested range is kept; a step with a long GPU gap is kept; the first
 * step (start-up) is never one of the slowest; two trackers side by side keep their own.
 * The analysis's step statistics and gaps, which the tracker reads at the end, are set by
 * hand.
 */
#include <stdlib.h>

#include "check.h"
#include "detail.h"

#define MS 1000000LL

static const struct po_step_sample no_sample = {-1, -1, -1, -1};

/* Steps of 10 ms from 0, step `slow` 50 ms and step 0 100 ms; one span per step. */
static void run(struct po_step_tracker *loop, struct po_detail_tracker *timeline, size_t slow,
		size_t gap_step)
{
	int64_t time_ns = 0;

	for (size_t i = 0; i < 40; i++) {
		struct po_event begin = {
		    .kind = PO_EV_STEP_BEGIN, .time_ns = time_ns, .pid = 1, .tid = 1};
		int64_t length = i == 0 ? 100 * MS : i == slow ? 50 * MS : 10 * MS;

		begin.u.step.step = (int64_t)i;
		begin.u.step.batch_size = -1;
		CHECK(step_tracker_claim(loop, 1, 1));
		CHECK(step_tracker_open(loop, &begin) == PO_STATUS_OK);
		detail_tracker_push_span(timeline,
					 &(struct po_span){.kind = PO_SPAN_STAGE,
							   .sub = PO_STAGE_FORWARD,
							   .pid = 1,
							   .tid = 1,
							   .begin_ns = time_ns + MS,
							   .end_ns = time_ns + length - MS,
							   .batch = -1});
		if (i == gap_step)
			CHECK(detail_tracker_gap_found(timeline, i, 8 * MS) == PO_STATUS_OK);
		time_ns += length;
		step_tracker_close(loop, time_ns, PO_CAT_FORWARD, -1, &no_sample);
		CHECK(detail_tracker_step_ended(timeline) == PO_STATUS_OK);
	}
}

static const struct po_step_detail *detail_of(const struct po_analysis *analysis, size_t index)
{
	for (size_t i = 0; i < analysis->detail_count; i++)
		if (analysis->details[i].step_index == index)
			return &analysis->details[i];
	return NULL;
}

static void free_details(struct po_analysis *analysis)
{
	for (size_t i = 0; i < analysis->detail_count; i++) {
		free(analysis->details[i].spans);
		free(analysis->details[i].counters);
	}
	free(analysis->details);
}

static void test_kept_steps(void)
{
	const struct po_detail_config config = {.detail_span_cap = 100,
						.slowest_steps_kept = 1,
						.timeline_first_step = 30,
						.timeline_last_step = 31};
	struct po_step_tracker loop;
	struct po_detail_tracker timeline;
	/* the analysis's gaps decide the stall details in the end: the one of step 25 */
	struct po_gpu_gap gap = {.begin_ns = 0, .end_ns = 8 * MS, .step_index = 25};
	struct po_analysis analysis = {
	    .step_stats = {.p50_ns = 10 * MS}, .gaps = &gap, .gap_count = 1};
	const struct po_step_detail *detail;

	CHECK(step_tracker_init(&loop) == PO_STATUS_OK);
	CHECK(detail_tracker_init(&timeline, &config, &loop) == PO_STATUS_OK);
	run(&loop, &timeline, 20, 25);
	CHECK(detail_tracker_build(&timeline, &analysis) == PO_STATUS_OK);

	detail = detail_of(&analysis, 20);
	CHECK(detail && (detail->reasons & PO_DETAIL_SLOWEST));
	CHECK(detail && detail->span_count == 1 && !detail->truncated);
	CHECK(detail_of(&analysis, 0) == NULL ||
	      !(detail_of(&analysis, 0)->reasons & PO_DETAIL_SLOWEST));
	CHECK(detail_of(&analysis, 19) && (detail_of(&analysis, 19)->reasons & PO_DETAIL_NEIGHBOR));
	CHECK(detail_of(&analysis, 21) && (detail_of(&analysis, 21)->reasons & PO_DETAIL_NEIGHBOR));
	CHECK(detail_of(&analysis, 30) &&
	      (detail_of(&analysis, 30)->reasons & PO_DETAIL_REQUESTED));
	CHECK(detail_of(&analysis, 31) &&
	      (detail_of(&analysis, 31)->reasons & PO_DETAIL_REQUESTED));
	CHECK(detail_of(&analysis, 32) == NULL ||
	      !(detail_of(&analysis, 32)->reasons & PO_DETAIL_REQUESTED));
	CHECK(detail_of(&analysis, 25) && (detail_of(&analysis, 25)->reasons & PO_DETAIL_STALL));
	for (size_t i = 1; i < analysis.detail_count; i++)
		CHECK(analysis.details[i - 1].step_index < analysis.details[i].step_index);
	free_details(&analysis);
	detail_tracker_fini(&timeline);
	step_tracker_fini(&loop);
}

static void test_side_by_side(void)
{
	const struct po_detail_config config = {.detail_span_cap = 100,
						.slowest_steps_kept = 1,
						.timeline_first_step = -1,
						.timeline_last_step = -1};
	struct po_step_tracker loop_one, loop_two;
	struct po_detail_tracker one, two;
	struct po_analysis first = {.step_stats = {.p50_ns = 10 * MS}};
	struct po_analysis second = {.step_stats = {.p50_ns = 10 * MS}};

	CHECK(step_tracker_init(&loop_one) == PO_STATUS_OK);
	CHECK(step_tracker_init(&loop_two) == PO_STATUS_OK);
	CHECK(detail_tracker_init(&one, &config, &loop_one) == PO_STATUS_OK);
	CHECK(detail_tracker_init(&two, &config, &loop_two) == PO_STATUS_OK);
	run(&loop_one, &one, 10, 40);
	run(&loop_two, &two, 33, 40);
	CHECK(detail_tracker_build(&one, &first) == PO_STATUS_OK);
	CHECK(detail_tracker_build(&two, &second) == PO_STATUS_OK);
	CHECK(detail_of(&first, 10) && (detail_of(&first, 10)->reasons & PO_DETAIL_SLOWEST));
	CHECK(detail_of(&second, 33) && (detail_of(&second, 33)->reasons & PO_DETAIL_SLOWEST));
	CHECK(detail_of(&first, 33) == NULL ||
	      !(detail_of(&first, 33)->reasons & PO_DETAIL_SLOWEST));
	free_details(&first);
	free_details(&second);
	detail_tracker_fini(&one);
	detail_tracker_fini(&two);
	step_tracker_fini(&loop_one);
	step_tracker_fini(&loop_two);
}

int main(void)
{
	RUN(test_kept_steps);
	RUN(test_side_by_side);
	return CHECK_SUMMARY();
}
