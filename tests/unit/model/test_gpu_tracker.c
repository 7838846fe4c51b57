/*
 * test_gpu_tracker.c: the GPU activity tracker alone, with a host that records what it is
 * told: unions per device and of all devices from records out of start order, idle gaps
 * and their window, late and implausible records, the gap cap, and two trackers side by
 * side. A property test checks the busy time against a brute-force union of shuffled
 * records.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gpu.h"

#define MS 1000000LL

struct fake_host {
	int64_t window_begin_ns;
	int64_t busy_ns; /* sum of the all-devices intervals */
	size_t busy_count;
	struct po_gpu_gap gaps[64];
	size_t gap_count;
};

static int64_t fake_window_begin(void *ctx)
{
	return ((struct fake_host *)ctx)->window_begin_ns;
}

static void fake_busy(void *ctx, int64_t begin_ns, int64_t end_ns)
{
	struct fake_host *host = ctx;

	host->busy_ns += end_ns - begin_ns;
	host->busy_count++;
}

static enum po_status fake_gap(void *ctx, struct po_gpu_gap *gap)
{
	struct fake_host *host = ctx;

	gap->cause = PO_CAT_DATA_WAIT;
	gap->cause_ns = gap->end_ns - gap->begin_ns;
	if (host->gap_count < 64)
		host->gaps[host->gap_count++] = *gap;
	return PO_STATUS_OK;
}

static int64_t fake_step_at(void *ctx, int64_t begin_ns, int64_t end_ns)
{
	(void)ctx;
	return begin_ns < end_ns ? begin_ns / (100 * MS) : -1; /* steps of 100 ms */
}

static void tracker_init(struct po_gpu_tracker *tracker, struct fake_host *host, size_t max_gaps)
{
	const struct po_gpu_host callbacks = {.ctx = host,
					      .window_begin_ns = fake_window_begin,
					      .busy = fake_busy,
					      .gap = fake_gap,
					      .step_at = fake_step_at};

	memset(host, 0, sizeof(*host));
	host->window_begin_ns = INT64_MIN;
	gpu_tracker_init(tracker, &callbacks, 5 * MS, max_gaps);
}

static bool add(struct po_gpu_tracker *tracker, int32_t device, int32_t stream, int64_t begin_ns,
		int64_t end_ns)
{
	struct po_event event = {.kind = PO_EV_GPU_ACTIVITY, .time_ns = end_ns};
	bool accepted = false;

	event.u.gpu_activity.device = device;
	event.u.gpu_activity.stream = stream;
	event.u.gpu_activity.kind = PO_GPU_KERNEL;
	event.u.gpu_activity.start_ns = begin_ns;
	event.u.gpu_activity.end_ns = end_ns;
	CHECK(gpu_tracker_consume(tracker, &event, &accepted) == PO_STATUS_OK);
	return accepted;
}

static void free_result(struct po_analysis *analysis)
{
	free(analysis->gpus);
	free(analysis->streams);
	free(analysis->gaps);
}

/* Two streams overlap on device 0; records arrive out of start order. */
static void test_unions_and_gaps(void)
{
	struct po_gpu_tracker tracker;
	struct fake_host host;
	struct po_analysis analysis = {0};

	tracker_init(&tracker, &host, 100);
	CHECK(add(&tracker, 0, 1, 10 * MS, 20 * MS));
	CHECK(add(&tracker, 0, 2, 15 * MS, 30 * MS));
	CHECK(add(&tracker, 0, 1, 50 * MS, 60 * MS));
	CHECK(add(&tracker, 0, 2, 40 * MS, 45 * MS)); /* earlier than the last one */
	CHECK(add(&tracker, 1, 7, 0, 100 * MS));      /* another device: busy all along */
	CHECK(gpu_tracker_flush(&tracker) == PO_STATUS_OK);
	CHECK(gpu_tracker_build(&tracker, false, 0, 0, &analysis) == PO_STATUS_OK);

	CHECK(analysis.gpu_count == 2 && analysis.gpus[0].device == 0);
	CHECK_INT_EQ(analysis.gpus[0].activity_count, 4);
	/* device 0: [10,30) [40,45) [50,60) = 35 ms in its own span [10,60) */
	CHECK_INT_EQ(analysis.gpus[0].busy_ns, 35 * MS);
	CHECK_INT_EQ(analysis.gpus[0].window_ns, 50 * MS);
	CHECK_INT_EQ(analysis.gpus[0].idle_ns, 15 * MS);
	/* gaps of 5 ms or more: [30,40) and [45,50) */
	CHECK_INT_EQ(analysis.gpus[0].gap_count, 2);
	CHECK_INT_EQ(analysis.gaps[0].begin_ns, 30 * MS);
	CHECK_INT_EQ(analysis.gaps[0].end_ns, 40 * MS);
	CHECK_INT_EQ(analysis.gaps[1].begin_ns, 45 * MS);
	CHECK_INT_EQ(analysis.gpus[0].gap_ns_by_cause[PO_CAT_DATA_WAIT], 15 * MS);
	/* all devices: device 1 covers everything */
	CHECK_INT_EQ(host.busy_ns, 100 * MS);
	CHECK_INT_EQ(host.busy_count, 1);
	/* streams, sorted: (0,1) 20 ms, (0,2) 20 ms, (1,7) 100 ms */
	CHECK(analysis.stream_count == 3);
	CHECK_INT_EQ(analysis.streams[0].busy_ns, 20 * MS);
	CHECK_INT_EQ(analysis.streams[1].busy_ns, 20 * MS);
	CHECK_INT_EQ(analysis.streams[2].busy_ns, 100 * MS);
	free_result(&analysis);
	gpu_tracker_fini(&tracker);
}

/* The window begins at 20 ms and ends at 100 ms: busy time and gaps are clipped to it. */
static void test_window(void)
{
	struct po_gpu_tracker tracker;
	struct fake_host host;
	struct po_analysis analysis = {0};

	tracker_init(&tracker, &host, 100);
	host.window_begin_ns = 20 * MS;
	CHECK(add(&tracker, 0, 0, 0, 10 * MS));
	CHECK(add(&tracker, 0, 0, 15 * MS, 30 * MS));
	CHECK(add(&tracker, 0, 0, 60 * MS, 120 * MS));
	CHECK(gpu_tracker_flush(&tracker) == PO_STATUS_OK);
	CHECK(gpu_tracker_build(&tracker, true, 20 * MS, 100 * MS, &analysis) == PO_STATUS_OK);
	/* busy in [20,100): [20,30) and [60,100) */
	CHECK_INT_EQ(analysis.gpus[0].busy_ns, 50 * MS);
	CHECK_INT_EQ(analysis.gpus[0].window_ns, 80 * MS);
	/* the gap [10,15) lies before the window; [30,60) is inside */
	CHECK_INT_EQ(analysis.gpus[0].gap_count, 1);
	CHECK_INT_EQ(analysis.gaps[0].begin_ns, 30 * MS);
	CHECK_INT_EQ(analysis.gaps[0].end_ns, 60 * MS);
	CHECK_INT_EQ(analysis.gaps[0].step_index, 0);
	free_result(&analysis);
	gpu_tracker_fini(&tracker);
}

/* Idle stretches at the window's edges are gaps too: nothing later could close them. */
static void test_edge_gaps(void)
{
	struct po_gpu_tracker tracker;
	struct fake_host host;
	struct po_analysis analysis = {0};

	tracker_init(&tracker, &host, 100);
	host.window_begin_ns = 0;
	CHECK(add(&tracker, 0, 0, 30 * MS, 40 * MS));
	CHECK(gpu_tracker_flush(&tracker) == PO_STATUS_OK);
	CHECK(gpu_tracker_build(&tracker, true, 0, 100 * MS, &analysis) == PO_STATUS_OK);
	CHECK_INT_EQ(analysis.gpus[0].gap_count, 2);
	CHECK_INT_EQ(analysis.gaps[0].end_ns, 30 * MS);
	CHECK_INT_EQ(analysis.gaps[1].begin_ns, 40 * MS);
	CHECK_INT_EQ(analysis.gaps[1].end_ns, 100 * MS);
	CHECK_INT_EQ(analysis.gaps[1].step_index, 0);
	free_result(&analysis);
	gpu_tracker_fini(&tracker);
}

/* Damaged records are refused and counted; a record older than the merged part is late. */
static void test_implausible_and_late(void)
{
	struct po_gpu_tracker tracker;
	struct fake_host host;
	struct po_analysis analysis = {0};

	tracker_init(&tracker, &host, 100);
	CHECK(!add(&tracker, 0, 0, 20 * MS, 10 * MS));		    /* ends first */
	CHECK(!add(&tracker, 0, 0, 0, PO_GPU_RECORD_LIMIT_NS + 1)); /* too long */
	CHECK(add(&tracker, 0, 0, 10 * MS, 20 * MS));
	CHECK(!add(&tracker, 0, 0, 9 * MS, 25 * MS));  /* begins first and overlaps its stream's */
	CHECK(!add(&tracker, 0, 0, 10 * MS, 12 * MS)); /* the same begin */
	CHECK(add(&tracker, 0, 1, 12 * MS, 25 * MS));  /* another stream may */
	CHECK_INT_EQ(tracker.implausible_records, 4);
	/*
	 * A record at 13 s merges every record that begins the horizon (100 ms, as no record
	 * came late) before it (those of 10 and 12 ms); one that begins at 11 ms comes too late
	 * to be placed.
	 */
	CHECK(add(&tracker, 0, 2, 11000 * MS, 11001 * MS));
	CHECK(add(&tracker, 0, 3, 13000 * MS, 13001 * MS));
	CHECK(add(&tracker, 0, 4, 11 * MS, 11 * MS + MS / 2));
	CHECK(gpu_tracker_flush(&tracker) == PO_STATUS_OK);
	CHECK(gpu_tracker_build(&tracker, false, 0, 0, &analysis) == PO_STATUS_OK);
	CHECK_INT_EQ(analysis.gpus[0].late_records, 1);
	CHECK_INT_EQ(analysis.gpus[0].activity_count, 5);
	free_result(&analysis);
	gpu_tracker_fini(&tracker);
}

/* A record written at time_ns (its batch's flush), for the lateness the tracker sees. */
static bool add_written(struct po_gpu_tracker *tracker, int32_t stream, int64_t begin_ns,
			int64_t end_ns, int64_t written_ns)
{
	struct po_event event = {.kind = PO_EV_GPU_ACTIVITY, .time_ns = written_ns};
	bool accepted = false;

	event.u.gpu_activity.device = 0;
	event.u.gpu_activity.stream = stream;
	event.u.gpu_activity.kind = PO_GPU_KERNEL;
	event.u.gpu_activity.start_ns = begin_ns;
	event.u.gpu_activity.end_ns = end_ns;
	CHECK(gpu_tracker_consume(tracker, &event, &accepted) == PO_STATUS_OK);
	return accepted;
}

/*
 * As CUPTI delivers them: kernels in one buffer, the copies of the same time in another
 * written after it, thousands of records a flush period (here 12 s) late; on Hopper a
 * kernel of a stream may begin before the previous one ends. Nothing is late and nothing
 * is refused, and the busy time is the union's.
 */
static void test_batches_from_an_activity_api(void)
{
	struct po_gpu_tracker tracker;
	struct fake_host host;
	struct po_analysis analysis = {0};
	const int64_t kernels = 5000, flush_ns = 12000 * MS;

	tracker_init(&tracker, &host, 100);
	for (int64_t batch = 0; batch < 3; batch++) {
		int64_t base = batch * flush_ns, written = base + flush_ns;

		for (int64_t i = 0; i < kernels; i++) /* 2 ms apart, 1.5 ms long, 0.1 ms overlap */
			CHECK(add_written(&tracker, 7, base + i * 2 * MS,
					  base + i * 2 * MS + 2100000, written));
		for (int64_t i = 0; i < kernels; i += 10) /* copies inside the kernels' time */
			CHECK(add_written(&tracker, 8, base + i * 2 * MS + 100000,
					  base + i * 2 * MS + 200000, written + MS));
	}
	CHECK(tracker.horizon_ns >= 2 * flush_ns);
	CHECK(gpu_tracker_flush(&tracker) == PO_STATUS_OK);
	CHECK(gpu_tracker_build(&tracker, false, 0, 0, &analysis) == PO_STATUS_OK);
	CHECK_INT_EQ(analysis.gpus[0].late_records, 0);
	CHECK_INT_EQ(tracker.implausible_records, 0);
	CHECK_INT_EQ(analysis.gpus[0].activity_count, 3 * (kernels + kernels / 10));
	/* each batch is one busy stretch of 5000 kernels laid end to end */
	CHECK_INT_EQ(analysis.gpus[0].busy_ns, 3 * ((kernels - 1) * 2 * MS + 2100000));
	free_result(&analysis);
	gpu_tracker_fini(&tracker);
}

/*
 * A record is written after its work ended: one whose end lies past the moment it was
 * written (one flipped bit in an end time) is refused alone, and the records after it on
 * its stream are kept; the device's busy time is the good records' (20 of 2 ms each).
 */
static void test_end_after_written(void)
{
	struct po_gpu_tracker tracker;
	struct fake_host host;
	struct po_analysis analysis = {0};

	tracker_init(&tracker, &host, 100);
	for (int64_t i = 0; i < 21; i++) {
		int64_t begin = i * 10 * MS, end = begin + 2 * MS;

		if (i == 5) /* bit 34 of the end: 17 s later */
			CHECK(!add_written(&tracker, 7, begin, end | (INT64_C(1) << 34), end + MS));
		else
			CHECK(add_written(&tracker, 7, begin, end, end + MS));
	}
	CHECK(add_written(&tracker, 7, 300 * MS, 302 * MS, 302 * MS - 50 * MS)); /* clock slack */
	CHECK_INT_EQ(tracker.implausible_records, 1);
	CHECK(gpu_tracker_flush(&tracker) == PO_STATUS_OK);
	CHECK(gpu_tracker_build(&tracker, false, 0, 0, &analysis) == PO_STATUS_OK);
	CHECK_INT_EQ(analysis.gpus[0].activity_count, 21);
	CHECK_INT_EQ(analysis.gpus[0].busy_ns, 21 * 2 * MS);
	free_result(&analysis);
	gpu_tracker_fini(&tracker);
}

/* Past max_gaps, gaps are counted, not kept. */
static void test_gap_cap(void)
{
	struct po_gpu_tracker tracker;
	struct fake_host host;
	struct po_analysis analysis = {0};

	tracker_init(&tracker, &host, 3);
	for (int64_t i = 0; i < 10; i++)
		CHECK(add(&tracker, 0, 0, i * 20 * MS, i * 20 * MS + 10 * MS));
	CHECK(gpu_tracker_flush(&tracker) == PO_STATUS_OK);
	CHECK(gpu_tracker_build(&tracker, false, 0, 0, &analysis) == PO_STATUS_OK);
	CHECK_INT_EQ(analysis.gpus[0].gap_count, 3);
	CHECK_INT_EQ(analysis.gpus[0].gaps_not_kept, 6);
	free_result(&analysis);
	gpu_tracker_fini(&tracker);
}

/* Two trackers fed in turns keep their own devices and hosts. */
static void test_side_by_side(void)
{
	struct po_gpu_tracker one, two;
	struct fake_host host_one, host_two;

	tracker_init(&one, &host_one, 100);
	tracker_init(&two, &host_two, 100);
	for (int64_t i = 0; i < 100; i++) {
		CHECK(add(&one, 0, 0, i * 10 * MS, i * 10 * MS + 5 * MS));
		CHECK(add(&two, 3, 1, i * 10 * MS, i * 10 * MS + 1 * MS));
	}
	CHECK(gpu_tracker_flush(&one) == PO_STATUS_OK);
	CHECK(gpu_tracker_flush(&two) == PO_STATUS_OK);
	CHECK_INT_EQ(host_one.busy_ns, 500 * MS);
	CHECK_INT_EQ(host_two.busy_ns, 100 * MS);
	CHECK(one.device_count == 1 && one.devices[0].out.device == 0);
	CHECK(two.device_count == 1 && two.devices[0].out.device == 3);
	gpu_tracker_fini(&one);
	gpu_tracker_fini(&two);
}

/* A small seeded generator, the same on every libc. */
static uint32_t next_random(uint32_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 17;
	*state ^= *state << 5;
	return *state;
}

struct interval {
	int64_t begin_ns, end_ns;
};

static int compare_intervals(const void *left, const void *right)
{
	const struct interval *a = left, *b = right;

	return (a->begin_ns > b->begin_ns) - (a->begin_ns < b->begin_ns);
}

static int64_t brute_union(struct interval *items, size_t count)
{
	int64_t total = 0, begin = 0, end = INT64_MIN;

	qsort(items, count, sizeof(*items), compare_intervals);
	for (size_t i = 0; i < count; i++) {
		if (items[i].begin_ns > end) {
			if (end != INT64_MIN)
				total += end - begin;
			begin = items[i].begin_ns;
			end = items[i].end_ns;
		} else if (items[i].end_ns > end) {
			end = items[i].end_ns;
		}
	}
	return end == INT64_MIN ? total : total + end - begin;
}

/*
 * Seeded runs of 5,000 records on 4 streams, each stream in order, the streams
 * interleaved in emission order up to 50 ms apart (inside the reorder window): the
 * device's busy time is the exact union, and no record is late.
 */
static void test_property_union(void)
{
	enum { STREAMS = 4, RECORDS = 5000 };
	static struct interval all[RECORDS];

	for (unsigned seed = 1; seed <= 20; seed++) {
		struct po_gpu_tracker tracker;
		struct fake_host host;
		struct po_analysis analysis = {0};
		int64_t next_ns[STREAMS] = {0};
		uint32_t state = seed * 2654435761u;

		tracker_init(&tracker, &host, 1000000);
		for (size_t i = 0; i < RECORDS; i++) {
			int stream = (int)(next_random(&state) % STREAMS);
			int64_t begin =
			    next_ns[stream] + (int64_t)(next_random(&state) % 4000) * 1000;
			int64_t end = begin + 1000 + (int64_t)(next_random(&state) % 3000) * 1000;

			/* keep the streams within 50 ms of each other */
			for (int s = 0; s < STREAMS; s++)
				if (begin - next_ns[s] > 50 * MS)
					begin = next_ns[s] + 50 * MS, end = begin + 1000;
			if (begin < next_ns[stream])
				begin = next_ns[stream], end = begin + 1000;
			next_ns[stream] = end;
			all[i] = (struct interval){begin, end};
			CHECK(add(&tracker, 0, stream, begin, end));
		}
		CHECK(gpu_tracker_flush(&tracker) == PO_STATUS_OK);
		CHECK(gpu_tracker_build(&tracker, false, 0, 0, &analysis) == PO_STATUS_OK);
		CHECK_INT_EQ(analysis.gpus[0].late_records, 0);
		CHECK_INT_EQ(analysis.gpus[0].busy_ns, brute_union(all, RECORDS));
		CHECK_INT_EQ(host.busy_ns, analysis.gpus[0].busy_ns);
		free_result(&analysis);
		gpu_tracker_fini(&tracker);
	}
}

int main(void)
{
	RUN(test_unions_and_gaps);
	RUN(test_window);
	RUN(test_edge_gaps);
	RUN(test_implausible_and_late);
	RUN(test_gap_cap);
	RUN(test_batches_from_an_activity_api);
	RUN(test_end_after_written);
	RUN(test_side_by_side);
	RUN(test_property_union);
	return CHECK_SUMMARY();
}
