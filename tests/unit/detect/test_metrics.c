/*
 * test_metrics.c: the shared figures of a step (analyzer/metrics): the input wait is the
 * data wait and the main process's loading, the waiting-step test is strict at half the
 * warning share, and the host memory series is chosen once for the run.
 */
#include "check.h"
#include "metrics.h"

static struct po_step step_of(int64_t wall_ns)
{
	struct po_step step = {.begin_ns = 1000, .end_ns = 1000 + wall_ns};

	return step;
}

static void test_input_wait(void)
{
	struct po_step step = step_of(100);

	step.category_ns[PO_CAT_DATA_WAIT] = 1;
	step.category_ns[PO_CAT_LOAD] = 2;
	step.category_ns[PO_CAT_PREPROCESS] = 4;
	step.category_ns[PO_CAT_COLLATE] = 8;
	step.category_ns[PO_CAT_HANDOFF] = 16;
	step.category_ns[PO_CAT_FORWARD] = 32;
	CHECK_INT_EQ(po_metric_input_wait_ns(step.category_ns), 15);
}

static void test_step_waits(void)
{
	struct po_step step = step_of(1000);

	/* warning 5%: a step waits from more than 2.5% of its time */
	step.category_ns[PO_CAT_DATA_WAIT] = 25;
	CHECK(!po_metric_step_waits(&step, 5, false));
	step.category_ns[PO_CAT_DATA_WAIT] = 26;
	CHECK(po_metric_step_waits(&step, 5, false));
	step.category_ns[PO_CAT_DATA_WAIT] = 10;
	step.category_ns[PO_CAT_HANDOFF] = 20;
	CHECK(!po_metric_step_waits(&step, 5, false));
	CHECK(po_metric_step_waits(&step, 5, true));
}

static void test_host_series(void)
{
	struct po_analysis analysis = {0};
	struct po_step step = step_of(10);

	step.host_live_bytes = -1;
	step.rss_bytes = 4096;
	CHECK_INT_EQ(po_metric_host_bytes(&analysis, &step), 4096);
	/* With allocation events the run's series is their live bytes, never a step's RSS. */
	analysis.memory.has_alloc_events = true;
	CHECK_INT_EQ(po_metric_host_bytes(&analysis, &step), -1);
	step.host_live_bytes = 512;
	CHECK_INT_EQ(po_metric_host_bytes(&analysis, &step), 512);
}

int main(void)
{
	RUN(test_input_wait);
	RUN(test_step_waits);
	RUN(test_host_series);
	return CHECK_SUMMARY();
}
