/*
 * test_machine.c: what the machine did beside the recorded processes (po_machine_load): the
 * machine's busy CPU from the machine_cpu counter against the recorded processes' own CPU
 * counters over the same span; a forked worker's CPU counts from 0 at its fork; the main
 * process's series is the one kept when several processes record one; a reading no machine
 * of the run's cores could give is refused; a trace without the counter says nothing.
 */
#include <math.h>

#include "builder.h"

#define MAIN 100
#define WORKER 101
#define LAUNCHER 99

static struct po_model *model_with_cores(int32_t cores)
{
	struct po_model *model = model_new(NULL);
	struct po_event begin = event_at(PO_EV_RUN_BEGIN, 0, MAIN, MAIN);

	begin.u.run_begin.framework = str_of("pytorch");
	begin.u.run_begin.cpu_count = cores;
	feed(model, &begin);
	return model;
}

static void announce(struct po_model *model, int64_t t, int32_t pid, int32_t parent, int reason)
{
	struct po_event event = event_at(PO_EV_PROCESS, t, pid, pid);

	event.u.process.recording = str_of("");
	event.u.process.parent_pid = parent;
	event.u.process.reason = reason;
	feed(model, &event);
}

/* Ten steps of 100 ms on the main thread, from 0 to 1 s. */
static void steps(struct po_model *model)
{
	for (int64_t i = 0; i < 10; i++) {
		step_begin(model, i * 100 * MS, MAIN, MAIN, i);
		step_end(model, (i + 1) * 100 * MS - 1, MAIN, MAIN, i);
	}
}

/*
 * 2 cores busy 1.5 s per second over 1 s (from 0 to 1 s): the main process uses 0.5 cores,
 * a worker forked at 200 ms 0.25 (its first sample, at 300 ms, already holds 25 ms since
 * the fork): other programs used the rest.
 */
static void test_others_from_busy_less_own(void)
{
	struct po_model *model = model_with_cores(2);
	struct po_analysis *analysis;
	const struct po_machine_load *machine;

	announce(model, 0, MAIN, 1, 0);
	steps(model);
	announce(model, 200 * MS, WORKER, MAIN, 1);
	for (int64_t t = 0; t <= 1000; t += 100) {
		counter(model, t * MS + 1, MAIN, PO_COUNTER_PROCESS_CPU, -1,
			10000 * MS + t * MS / 2);
		counter(model, t * MS + 2, MAIN, PO_COUNTER_MACHINE_CPU, -1,
			900000 * MS + t * MS * 3 / 2);
		if (t >= 300)
			counter(model, t * MS + 3, WORKER, PO_COUNTER_PROCESS_CPU, -1,
				(t - 200) * MS / 4);
	}
	analysis = model_done(model);
	machine = &analysis->machine;
	CHECK(machine->known);
	CHECK_INT_EQ(machine->pid, MAIN);
	CHECK_INT_EQ(machine->series, 1);
	CHECK_NEAR(machine->busy_cores, 1.5, 0.001);
	/*
	 * The main process's 500 ms and the worker's 175 ms by its sample at 900 ms (its last,
	 * at 1000 ms + 3 ns, came after the machine's last sample), 25 ms of it before its first
	 */
	CHECK_NEAR(machine->traced_cores, 0.675, 0.001);
	CHECK_NEAR(machine->others_cores, 0.825, 0.001);
	CHECK_INT_EQ(analysis->quality.implausible_values, 0);
	po_analysis_destroy(analysis);
}

/*
 * A launcher and the training process both record the machine (neither is a forked
 * worker); the launcher's series is longer, the main process's is kept. A reading past what
 * 2 cores could have been busy since the series' first sample (plus two ticks and a second a
 * core: steal time accounted late) is refused; one that grew by 500 ms in 100 ms, as a
 * virtual CPU's steal accounted at once does, is kept.
 */
static void test_main_series_kept(void)
{
	struct po_model *model = model_with_cores(2);
	struct po_analysis *analysis;

	announce(model, 0, LAUNCHER, 1, 0);
	announce(model, 0, MAIN, LAUNCHER, 0);
	steps(model);
	for (int64_t t = 0; t <= 1000; t += 100) {
		counter(model, t * MS, LAUNCHER, PO_COUNTER_MACHINE_CPU, -1, 1000 * MS + t * MS);
		if (t >= 500)
			counter(model, t * MS + 1, MAIN, PO_COUNTER_MACHINE_CPU, -1,
				2000 * MS + t * MS * 2);
	}
	counter(model, 1100 * MS, MAIN, PO_COUNTER_MACHINE_CPU, -1, 2000 * MS + 2500 * MS);
	counter(model, 1200 * MS, MAIN, PO_COUNTER_MACHINE_CPU, -1, 2000 * MS + 6500 * MS);
	analysis = model_done(model);
	CHECK(analysis->machine.known);
	CHECK_INT_EQ(analysis->machine.pid, MAIN);
	CHECK_INT_EQ(analysis->machine.series, 2);
	CHECK_NEAR(analysis->machine.busy_cores, 2.5, 0.001); /* 1500 ms in 600 ms */
	CHECK_INT_EQ(analysis->quality.implausible_values, 1);
	CHECK_INT_EQ(analysis->quality.implausible[PO_IMPLAUSIBLE_MACHINE_CPU], 1);
	po_analysis_destroy(analysis);
}

/*
 * A loader worker started with the spawn method (as under torch.multiprocessing.spawn,
 * whose ranks' DataLoaders spawn their workers too) is a fresh interpreter: it announces
 * itself (reason 0, not a fork) after importing its libraries, its clock already at 400 ms.
 * Its parent was recorded before: all of it was used while the machine was watched. The
 * main process uses 0.5 cores from 0 to 1 s, the worker 400 ms before its first sample at
 * 500 ms and 0.2 cores after, other programs 0.3; the machine is busy 1.2 cores.
 */
static void test_spawned_child_counts_from_zero(void)
{
	struct po_model *model = model_with_cores(2);
	struct po_analysis *analysis;

	announce(model, 0, MAIN, LAUNCHER, 0);
	steps(model);
	announce(model, 500 * MS, WORKER, MAIN, 0);
	for (int64_t t = 0; t <= 1000; t += 100) {
		int64_t worker_ms = t >= 500 ? 400 + (t - 500) / 5 : 0;

		counter(model, t * MS + 1, MAIN, PO_COUNTER_PROCESS_CPU, -1, t * MS / 2);
		if (t >= 500)
			counter(model, t * MS + 2, WORKER, PO_COUNTER_PROCESS_CPU, -1,
				worker_ms * MS);
		counter(model, t * MS + 3, MAIN, PO_COUNTER_MACHINE_CPU, -1,
			900000 * MS + t * MS * 3 / 10 + t * MS / 2 + worker_ms * MS);
	}
	analysis = model_done(model);
	CHECK(analysis->machine.known);
	CHECK_NEAR(analysis->machine.traced_cores, 0.5 + 0.5, 0.001); /* 500 + 500 ms in 1 s */
	CHECK_NEAR(analysis->machine.others_cores, 0.3, 0.001);
	po_analysis_destroy(analysis);
}

static void test_unknown_without_series(void)
{
	struct po_model *model = model_with_cores(2);
	struct po_analysis *analysis;

	steps(model);
	counter(model, 0, MAIN, PO_COUNTER_PROCESS_CPU, -1, 0);
	counter(model, 500 * MS, MAIN, PO_COUNTER_MACHINE_CPU, -1, 4000 * MS);
	counter(model, 900 * MS, MAIN, PO_COUNTER_PROCESS_CPU, -1, 400 * MS);
	analysis = model_done(model);
	CHECK(!analysis->machine.known); /* one sample is no span */
	CHECK_INT_EQ(analysis->machine.series, 1);
	CHECK(isnan(analysis->machine.others_cores) || analysis->machine.others_cores == 0);
	po_analysis_destroy(analysis);
}

int main(void)
{
	RUN(test_others_from_busy_less_own);
	RUN(test_main_series_kept);
	RUN(test_spawned_child_counts_from_zero);
	RUN(test_unknown_without_series);
	return CHECK_SUMMARY();
}
