/*
 * test_self_cost.c: what the measurement cost (po_self_cost). Each process's cumulative
 * self_cost reports keep their latest value per source, are summed over the processes and
 * with the recorder's figure spread over the run's steps; the detectors set the result
 * against the steady mean step and, from self-cost.visible_pct, the trace quality warns
 * (profiler-cost); a trace without reports says nothing.
 */
#include <math.h>
#include <string.h>

#include "builder.h"
#include "detect/detect.h"
#include "detect/rules.h"

#define MAIN 100
#define WORKER 101

/* Forty steps of 10 ms on the main thread. */
static void steps(struct po_model *model)
{
	for (int64_t i = 0; i < 40; i++) {
		step_begin(model, i * 10 * MS, MAIN, MAIN, i);
		step_end(model, (i + 1) * 10 * MS - 1, MAIN, MAIN, i);
	}
}

static void self_cost(struct po_model *model, int64_t t, int32_t pid, int64_t hooks_ns,
		      int64_t gc_ns, int64_t threads_ns)
{
	struct po_event event = event_at(PO_EV_SELF_COST, t, pid, pid);

	event.u.self_cost.hooks_ns = hooks_ns;
	event.u.self_cost.gc_ns = gc_ns;
	event.u.self_cost.threads_ns = threads_ns;
	feed(model, &event);
}

static const struct po_process *process_of(const struct po_analysis *analysis, int32_t pid)
{
	for (size_t i = 0; i < analysis->process_count; i++)
		if (analysis->processes[i].pid == pid)
			return &analysis->processes[i];
	CHECK(false);
	return &analysis->processes[0];
}

static bool has_warning(const struct po_analysis *analysis, const char *code)
{
	for (size_t i = 0; i < po_analysis_warning_count(analysis); i++)
		if (strcmp(po_analysis_warning(analysis, i)->code, code) == 0)
			return true;
	return false;
}

static void detect(struct po_analysis *analysis)
{
	struct po_rules rules;
	struct po_error err = {{0}};

	po_rules_init(&rules);
	CHECK_INT_EQ(po_detect_run(analysis, &rules, &err), PO_STATUS_OK);
}

/*
 * The main process reports twice (the later report holds the earlier), a worker once
 * without gc callbacks counted; the recorder took 8 ms: 12 + 4 + 8 = 24 ms over 40 steps.
 */
static void test_summed_and_spread(void)
{
	struct po_model_config config;
	struct po_model *model;
	struct po_analysis *analysis;
	const struct po_self_cost *cost;

	po_model_config_init(&config);
	config.recorder_cpu_ns = 8 * MS;
	model = model_new(&config);
	steps(model);
	self_cost(model, 100 * MS, MAIN, 2 * MS, 1 * MS, 3 * MS);
	self_cost(model, 300 * MS, MAIN, 6 * MS, 2 * MS, 4 * MS);
	self_cost(model, 200 * MS, WORKER, 3 * MS, -1, 1 * MS);
	analysis = model_done(model);
	cost = &analysis->self_cost;
	CHECK(cost->known);
	CHECK_INT_EQ(cost->source_ns[PO_COST_HOOKS], 9 * MS);
	CHECK_INT_EQ(cost->source_ns[PO_COST_GC], 2 * MS);
	CHECK_INT_EQ(cost->source_ns[PO_COST_THREADS], 5 * MS);
	CHECK_INT_EQ(cost->processes_ns, 16 * MS);
	CHECK_INT_EQ(cost->reporting_processes, 2);
	CHECK_INT_EQ(cost->step_count, 40);
	CHECK_NEAR(cost->processes_per_step_ns, 0.4 * MS, 1);
	CHECK_NEAR(cost->recorder_per_step_ns, 0.2 * MS, 1);
	CHECK_NEAR(cost->per_step_ns, 0.6 * MS, 1);
	CHECK_INT_EQ(process_of(analysis, MAIN)->self_cost_total_ns, 12 * MS);
	CHECK_NEAR(process_of(analysis, WORKER)->self_cost_per_step_ns, 0.1 * MS, 1);
	detect(analysis);
	/* 0.6 ms of a 10 ms step: 6%, a visible share */
	CHECK_NEAR(analysis->diagnosis.self_cost_pct, 6.0, 0.01);
	CHECK(analysis->diagnosis.self_cost_visible);
	CHECK(has_warning(analysis, "profiler-cost"));
	po_analysis_destroy(analysis);
}

/* 0.5% of the step: stated, not warned about. */
static void test_small_cost_stated_only(void)
{
	struct po_model *model = model_new(NULL);
	struct po_analysis *analysis;

	steps(model);
	self_cost(model, 390 * MS, MAIN, 1 * MS, 0, 1 * MS);
	analysis = model_done(model);
	CHECK(analysis->self_cost.known);
	CHECK_INT_EQ(analysis->self_cost.recorder_ns, -1);
	CHECK(isnan(analysis->self_cost.recorder_per_step_ns));
	CHECK_NEAR(analysis->self_cost.per_step_ns, 0.05 * MS, 1);
	detect(analysis);
	CHECK_NEAR(analysis->diagnosis.self_cost_pct, 0.5, 0.01);
	CHECK(!analysis->diagnosis.self_cost_visible);
	CHECK(!has_warning(analysis, "profiler-cost"));
	po_analysis_destroy(analysis);
}

static void test_unknown_without_reports(void)
{
	struct po_model *model = model_new(NULL);
	struct po_analysis *analysis;

	steps(model);
	analysis = model_done(model);
	CHECK(!analysis->self_cost.known);
	CHECK_INT_EQ(analysis->self_cost.processes_ns, -1);
	CHECK(isnan(analysis->self_cost.per_step_ns));
	CHECK_INT_EQ(process_of(analysis, MAIN)->self_cost_total_ns, -1);
	detect(analysis);
	CHECK(isnan(analysis->diagnosis.self_cost_pct));
	CHECK(!analysis->diagnosis.self_cost_visible);
	po_analysis_destroy(analysis);
}

int main(void)
{
	RUN(test_summed_and_spread);
	RUN(test_small_cost_stated_only);
	RUN(test_unknown_without_reports);
	return CHECK_SUMMARY();
}
