/* test_detail.c: the timelines kept for the slowest, median, stalled and requested steps. */
#include "builder.h"

enum { MAIN = 100, WORKER = 200, STEPS = 20 };

/* Steps with the given durations (ms); each with a forward span, a worker span, GPU work
 * covering the step except a gap in steps 3 (5 ms) and 18 (8 ms), and a counter sample. */
static struct po_analysis *run(const struct po_model_config *config, const int *durations_ms)
{
	struct po_model *model = model_new(config);
	int64_t t = 0;

	for (int i = 0; i < STEPS; i++) {
		int64_t end = t + durations_ms[i] * MS;
		int64_t gap_ms = i == 3 ? 5 : i == 18 ? 8 : 0;

		step_begin(model, t, MAIN, MAIN, i);
		stage_begin(model, t + 1, MAIN, MAIN, PO_STAGE_FORWARD, "fw", -1);
		stage_begin(model, t + 2, WORKER, WORKER, PO_STAGE_LOAD, "ds", i + 1);
		counter(model, t + 3, MAIN, PO_COUNTER_HOST_RSS, -1, 1000 + i);
		stage_end(model, t + 4, WORKER, WORKER, PO_STAGE_LOAD, i + 1);
		stage_end(model, end - 2, MAIN, MAIN, PO_STAGE_FORWARD, -1);
		if (gap_ms) {
			gpu_record(model, end - 1, MAIN, 0, 0, t, t + 1 * MS);
			gpu_record(model, end - 1, MAIN, 0, 0, t + (1 + gap_ms) * MS, end);
		} else {
			gpu_record(model, end - 1, MAIN, 0, 0, t, end);
		}
		step_end(model, end, MAIN, MAIN, i);
		t = end;
	}
	return model_done(model);
}

static const struct po_step_detail *detail_of(const struct po_analysis *analysis, size_t step)
{
	for (size_t i = 0; i < analysis->detail_count; i++)
		if (analysis->details[i].step_index == step)
			return &analysis->details[i];
	return NULL;
}

static void check_sorted(const struct po_analysis *analysis)
{
	for (size_t i = 1; i < analysis->detail_count; i++)
		CHECK(analysis->details[i - 1].step_index < analysis->details[i].step_index);
	for (size_t i = 0; i < analysis->detail_count; i++) {
		const struct po_step_detail *detail = &analysis->details[i];

		CHECK(detail->reasons != 0);
		for (size_t j = 1; j < detail->span_count; j++)
			CHECK(detail->spans[j - 1].begin_ns <= detail->spans[j].begin_ns);
	}
}

static void slowest_neighbors_median_stall(void)
{
	int durations[STEPS];
	struct po_analysis *analysis;
	const struct po_step_detail *detail;
	int kinds[4] = {0};

	for (int i = 0; i < STEPS; i++)
		durations[i] = i == 7 ? 50 : i == 12 ? 40 : i == 15 ? 30 : 10;
	analysis = run(NULL, durations);
	CHECK_INT_EQ(analysis->detail_count, 12);
	check_sorted(analysis);
	detail = detail_of(analysis, 7);
	CHECK(detail && (detail->reasons & PO_DETAIL_SLOWEST));
	if (detail) {
		CHECK_INT_EQ(detail->begin_ns, po_analysis_step(analysis, 7).begin_ns);
		CHECK_INT_EQ(detail->end_ns, po_analysis_step(analysis, 7).end_ns);
		CHECK(!detail->truncated);
		for (size_t j = 0; j < detail->span_count; j++)
			kinds[detail->spans[j].kind]++;
		CHECK_INT_EQ(kinds[PO_SPAN_STAGE], 2); /* forward and the worker's load */
		CHECK_INT_EQ(kinds[PO_SPAN_GPU], 1);
		CHECK_INT_EQ(kinds[PO_SPAN_STEP], 1);
		CHECK_INT_EQ(detail->counter_count, 1);
		CHECK(detail->counter_count && detail->counters[0].value == 1007);
	}
	CHECK(detail_of(analysis, 12) && (detail_of(analysis, 12)->reasons & PO_DETAIL_SLOWEST));
	CHECK(detail_of(analysis, 15) && (detail_of(analysis, 15)->reasons & PO_DETAIL_SLOWEST));
	CHECK(detail_of(analysis, 6) && detail_of(analysis, 6)->reasons == PO_DETAIL_NEIGHBOR);
	CHECK(detail_of(analysis, 16) && detail_of(analysis, 16)->reasons == PO_DETAIL_NEIGHBOR);
	for (size_t i = 0; i < analysis->detail_count; i++) {
		detail = &analysis->details[i];
		if (!(detail->reasons & PO_DETAIL_MEDIAN))
			continue;
		kinds[0] = -100; /* one median step, as long as the median */
		CHECK_INT_EQ(detail->end_ns - detail->begin_ns, 10 * MS);
		CHECK_INT_EQ(detail->reasons, PO_DETAIL_MEDIAN);
	}
	CHECK_INT_EQ(kinds[0], -100);
	CHECK(detail_of(analysis, 3) && detail_of(analysis, 3)->reasons == PO_DETAIL_STALL);
	CHECK(detail_of(analysis, 18) && detail_of(analysis, 18)->reasons == PO_DETAIL_STALL);
	CHECK(detail_of(analysis, 5) == NULL);
	CHECK_INT_EQ(analysis->gap_count, 2);
	po_analysis_destroy(analysis);
}

/* Slower and slower steps: details of steps that stop being slowest are dropped. */
static void slowest_replaced(void)
{
	int durations[STEPS];
	struct po_analysis *analysis;
	int slowest = 0, median = 0;

	for (int i = 0; i < STEPS; i++)
		durations[i] = 10 + i;
	analysis = run(NULL, durations);
	check_sorted(analysis);
	for (size_t i = 0; i < analysis->detail_count; i++) {
		const struct po_step_detail *detail = &analysis->details[i];

		if (detail->reasons & PO_DETAIL_SLOWEST) {
			slowest++;
			CHECK(detail->step_index >= 17);
		}
		median += (detail->reasons & PO_DETAIL_MEDIAN) != 0;
	}
	CHECK_INT_EQ(slowest, 3);
	CHECK_INT_EQ(median, 1);
	CHECK(detail_of(analysis, 16) && (detail_of(analysis, 16)->reasons & PO_DETAIL_NEIGHBOR));
	CHECK(analysis->detail_count <= 7);
	po_analysis_destroy(analysis);
}

static void requested_and_truncated(void)
{
	int durations[STEPS];
	struct po_model_config config;
	struct po_analysis *analysis;
	const struct po_step_detail *detail;

	for (int i = 0; i < STEPS; i++)
		durations[i] = 10;
	po_model_config_init(&config);
	config.timeline_first_step = 9;
	config.timeline_last_step = 11;
	config.detail_span_cap = 2;
	config.slowest_steps_kept = 0;
	analysis = run(&config, durations);
	check_sorted(analysis);
	for (size_t step = 9; step <= 11; step++) {
		detail = detail_of(analysis, step);
		CHECK(detail && (detail->reasons & PO_DETAIL_REQUESTED));
		CHECK(detail && detail->truncated && detail->span_count == 2);
	}
	CHECK(detail_of(analysis, 8) == NULL ||
	      !(detail_of(analysis, 8)->reasons & PO_DETAIL_REQUESTED));
	po_analysis_destroy(analysis);
}

/* The first step carries start-up cost: the slowest timeline is the slowest steady step. */
static void startup_step_not_slowest(void)
{
	struct po_model_config config;
	int durations[STEPS];
	struct po_analysis *analysis;
	const struct po_step_detail *detail;

	po_model_config_init(&config);
	config.slowest_steps_kept = 1;
	for (int i = 0; i < STEPS; i++)
		durations[i] = 10;
	durations[0] = 50;
	durations[7] = 30;
	analysis = run(&config, durations);
	detail = detail_of(analysis, 7);
	CHECK(detail && (detail->reasons & PO_DETAIL_SLOWEST));
	detail = detail_of(analysis, 0);
	CHECK(!detail || !(detail->reasons & PO_DETAIL_SLOWEST));
	po_analysis_destroy(analysis);
}

int main(void)
{
	RUN(slowest_neighbors_median_stall);
	RUN(startup_step_not_slowest);
	RUN(slowest_replaced);
	RUN(requested_and_truncated);
	return CHECK_SUMMARY();
}
