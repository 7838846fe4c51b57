/* test_quality.c: discarded events, time inversions, missing contexts, names, no input. */
#include "builder.h"

enum { MAIN = 100, WORKER = 7 };

static void discards_flag_steps(void)
{
	struct po_model *model = model_new(NULL);
	struct po_analysis *analysis;

	for (int i = 0; i < 5; i++) {
		step_begin(model, i * 10 * MS, MAIN, MAIN, i);
		if (i == 3)
			discard(model, PO_EV_DISCARDED_EVENTS, 33 * MS, MAIN, 5, 22 * MS);
		if (i == 4) {
			counter(model, 41 * MS, WORKER, PO_COUNTER_QUEUE_DEPTH, -1, 1);
			discard(model, PO_EV_DISCARDED_PACKETS, 45 * MS, WORKER, PO_COUNT_UNKNOWN,
				-1);
		}
		step_end(model, (i + 1) * 10 * MS, MAIN, MAIN, i);
	}
	analysis = model_done(model);
	CHECK_INT_EQ(analysis->step_count, 5);
	CHECK(!(po_analysis_step(analysis, 0).flags & PO_STEP_LOSSY));
	CHECK(!(po_analysis_step(analysis, 1).flags & PO_STEP_LOSSY));
	CHECK(po_analysis_step(analysis, 2).flags & PO_STEP_LOSSY);
	CHECK(po_analysis_step(analysis, 3).flags & PO_STEP_LOSSY);
	CHECK(po_analysis_step(analysis, 4).flags & PO_STEP_LOSSY);
	CHECK_INT_EQ(analysis->quality.lossy_steps, 3);
	CHECK_INT_EQ(analysis->quality.discarded_events, 5);
	CHECK_INT_EQ(analysis->quality.discarded_packets, 0);
	CHECK_INT_EQ(analysis->quality.unknown_discards, 1);
	CHECK_INT_EQ(analysis->quality.window_count, 2);
	CHECK_INT_EQ(analysis->discard_windows[0].kind, PO_DISCARD_EVENTS);
	CHECK_INT_EQ(analysis->discard_windows[0].begin_ns, 22 * MS);
	CHECK_INT_EQ(analysis->discard_windows[1].kind, PO_DISCARD_PACKETS);
	CHECK_INT_EQ(analysis->discard_windows[1].begin_ns, -1);
	CHECK_INT_EQ(analysis->discard_windows[1].trace_id, WORKER);
	CHECK_INT_EQ(analysis->step_stats.clean_count, 2);
	CHECK_INT_EQ(analysis->quality.trace_count, 2);
	CHECK_INT_EQ(analysis->quality.events, 11); /* discard windows are not events */
	CHECK_INT_EQ(analysis->quality.profopt_events, 11);
	po_analysis_destroy(analysis);
}

/* A window with unknown begin reaches back to the trace's previous event only. */
static void unknown_begin_window(void)
{
	struct po_model *model = model_new(NULL);
	struct po_analysis *analysis;

	step_begin(model, 0, MAIN, MAIN, 0);
	step_end(model, 10 * MS, MAIN, MAIN, 0);
	step_begin(model, 10 * MS, MAIN, MAIN, 1);
	counter(model, 15 * MS, WORKER, PO_COUNTER_QUEUE_DEPTH, -1, 1);
	step_end(model, 20 * MS, MAIN, MAIN, 1);
	step_begin(model, 20 * MS, MAIN, MAIN, 2);
	discard(model, PO_EV_DISCARDED_EVENTS, 25 * MS, WORKER, 3, -1);
	step_end(model, 30 * MS, MAIN, MAIN, 2);
	analysis = model_done(model);
	CHECK(!(po_analysis_step(analysis, 0).flags & PO_STEP_LOSSY));
	CHECK(po_analysis_step(analysis, 1).flags & PO_STEP_LOSSY);
	CHECK(po_analysis_step(analysis, 2).flags & PO_STEP_LOSSY);
	po_analysis_destroy(analysis);
}

static void time_inversion(void)
{
	struct po_model *model = model_new(NULL);
	struct po_analysis *analysis;

	counter(model, 10, MAIN, PO_COUNTER_QUEUE_DEPTH, -1, 1);
	counter(model, 5, WORKER, PO_COUNTER_QUEUE_DEPTH, -1, 1); /* another thread: fine */
	counter(model, 8, MAIN, PO_COUNTER_QUEUE_DEPTH, -1, 1);	  /* older than 10 */
	counter(model, 12, MAIN, PO_COUNTER_QUEUE_DEPTH, -1, 1);
	analysis = model_done(model);
	CHECK_INT_EQ(analysis->quality.time_inversions, 1);
	CHECK(find_warning(analysis, "time-inversions") != NULL);
	CHECK(find_warning(analysis, "missing-context") == NULL);
	CHECK(!analysis->quality.missing_vpid);
	po_analysis_destroy(analysis);
}

static void missing_context(void)
{
	struct po_model *model = model_new(NULL);
	struct po_analysis *analysis;
	struct po_event event = event_at(PO_EV_COUNTER, 1, -1, -1);
	const struct po_warning *warning;

	event.procname = str_of(NULL);
	event.u.counter.kind = PO_COUNTER_QUEUE_DEPTH;
	feed(model, &event);
	feed(model, &event);
	analysis = model_done(model);
	CHECK(analysis->quality.missing_vpid);
	CHECK(analysis->quality.missing_vtid);
	CHECK(analysis->quality.missing_procname);
	warning = find_warning(analysis, "missing-context");
	CHECK(warning != NULL);
	CHECK(warning && strstr(warning->text, "add-context -u -t vpid -t vtid -t procname"));
	CHECK_INT_EQ(analysis->warning_count, 1);
	CHECK_INT_EQ(analysis->process_count, 1);
	CHECK_STR_EQ(analysis->processes[0].name, "");
	po_analysis_destroy(analysis);
}

static void no_profopt_events(void)
{
	struct po_model *model = model_new(NULL);
	struct po_analysis *analysis = NULL;
	struct po_error err = {{0}};

	libc_call(model, PO_EV_LIBC_MALLOC, 1, MAIN, 0x10, 0, 10, 0, 0);
	CHECK(po_model_finish(model, &analysis, &err) == PO_STATUS_INPUT);
	CHECK(analysis == NULL);
	CHECK_STR_EQ(err.message, "no profopt events found in the trace");
	po_model_destroy(model);

	model = model_new(NULL);
	CHECK(po_model_finish(model, &analysis, &err) == PO_STATUS_INPUT);
	po_model_destroy(model);
}

static void names(void)
{
	CHECK_STR_EQ(po_stage_name(PO_STAGE_LOAD), "load");
	CHECK_STR_EQ(po_stage_name(PO_STAGE_COUNT), "?");
	CHECK_STR_EQ(po_counter_name(PO_COUNTER_GPU_MEM_RESERVED), "gpu_mem_reserved");
	CHECK_STR_EQ(po_gpu_kind_name(PO_GPU_MEMCPY_H2D), "memcpy_h2d");
	CHECK_STR_EQ(po_event_kind_name(PO_EV_LIBC_FREE), "lttng_ust_libc:free");
	CHECK_STR_EQ(po_event_kind_name(PO_EV_STEP_BEGIN), "profopt:step_begin");
	CHECK_STR_EQ(po_role_name(PO_ROLE_WORKER), "worker");
	CHECK_STR_EQ(po_category_name(PO_CAT_GPU_SYNC), "gpu_sync");
	CHECK_STR_EQ(po_category_name(PO_CAT_OTHER), "other");
	CHECK_STR_EQ(po_finding_id_name(PO_FINDING_TRACE_DATA_LOSS), "trace-data-loss");
	CHECK_STR_EQ(po_severity_name(PO_SEVERITY_INFO), "info");
	CHECK_STR_EQ(po_verdict_name(PO_VERDICT_GPU_BOUND), "gpu-bound");
	CHECK_STR_EQ(po_verdict_name((enum po_verdict) - 1), "?");
	for (int s = 0; s < PO_STAGE_COUNT; s++)
		CHECK_STR_EQ(po_category_name(po_category_of_stage((enum po_stage)s)),
			     po_stage_name((enum po_stage)s));
}

/*
 * Values no machine can produce are ignored and counted: a CPU counter that jumps by more
 * than the cores can run (one flipped byte claimed 90,673 cores on 2), one that goes down,
 * a run-queue wait longer than the time that passed, a negative RSS, GPU work that ends
 * before it starts (no GPU appears for it).
 */
static void implausible_values(void)
{
	struct po_model *model = model_new(NULL);
	struct po_analysis *analysis;
	struct po_event begin = event_at(PO_EV_RUN_BEGIN, 0, MAIN, MAIN);
	const int64_t ms = 1000000;

	begin.u.run_begin.framework = str_of("c");
	begin.u.run_begin.cpu_count = 2;
	feed(model, &begin);
	counter(model, 10 * ms, MAIN, PO_COUNTER_PROCESS_CPU, -1, 5 * ms);
	counter(model, 30 * ms, MAIN, PO_COUNTER_PROCESS_CPU, -1, 40 * ms); /* 2 cores: fine */
	counter(model, 50 * ms, MAIN, PO_COUNTER_PROCESS_CPU, -1, INT64_C(1) << 50);
	counter(model, 70 * ms, MAIN, PO_COUNTER_PROCESS_CPU, -1, 30 * ms); /* goes down */
	counter(model, 90 * ms, MAIN, PO_COUNTER_PROCESS_CPU, -1, 60 * ms);
	counter(model, 10 * ms, MAIN, PO_COUNTER_PROCESS_RUNQ_WAIT, -1, 1 * ms);
	counter(model, 90 * ms, MAIN, PO_COUNTER_PROCESS_RUNQ_WAIT, -1, 900 * ms);
	counter(model, 91 * ms, MAIN, PO_COUNTER_HOST_RSS, -1, -4096);
	gpu_record(model, 92 * ms, MAIN, 0, 0, 50 * ms, 40 * ms);
	step_begin(model, 95 * ms, MAIN, MAIN, 0);
	step_end(model, 96 * ms, MAIN, MAIN, 0);
	analysis = model_done(model);

	CHECK_INT_EQ(analysis->quality.implausible_values, 5);
	CHECK_INT_EQ(analysis->processes[0].cpu_last_ns, 60 * ms);
	CHECK_INT_EQ(analysis->processes[0].runq_last_ns, 1 * ms);
	CHECK_INT_EQ(analysis->processes[0].rss_last_bytes, -1);
	CHECK_INT_EQ(analysis->gpu_count, 0);
	CHECK(find_warning(analysis, "implausible-values") != NULL);
	CHECK(analysis->quality.partial);
	po_analysis_destroy(analysis);
}

/*
 * A loader span's thread CPU time beyond its wall time could not be physical (one flipped
 * bit once made 3 ms of CPU 148,434 s and a cpu-contention finding): it is left out of the
 * label and the worker's CPU time, and counted. A negative value other than -1 (unknown)
 * too. A span that used about all its wall time is kept.
 */
static void implausible_span_cpu(void)
{
	struct po_model *model = model_new(NULL);
	struct po_analysis *analysis;
	const int64_t ms = 1000000;
	int64_t cpu[] = {3 * ms, INT64_C(148434072) * ms, -5, 10 * ms, -1};
	int64_t kept = 0;

	worker_begin(model, 0, WORKER, 0, MAIN);
	for (int i = 0; i < 5; i++) {
		stage_begin(model, (10 + 10 * i) * ms, WORKER, WORKER, PO_STAGE_LOAD, "read", i);
		stage(model, PO_EV_STAGE_END, (20 + 10 * i) * ms, WORKER, WORKER, PO_STAGE_LOAD, "",
		      i, cpu[i]);
	}
	step_begin(model, 70 * ms, MAIN, MAIN, 0);
	step_end(model, 80 * ms, MAIN, MAIN, 0);
	analysis = model_done(model);
	CHECK_INT_EQ(analysis->quality.implausible_values, 2);
	for (size_t i = 0; i < analysis->label_stat_count; i++)
		if (analysis->label_stats[i].stage == PO_STAGE_LOAD) {
			CHECK_INT_EQ(analysis->label_stats[i].cpu_ns, 13 * ms);
			kept++;
		}
	CHECK_INT_EQ(kept, 1);
	CHECK_INT_EQ(analysis->worker_count, 1);
	CHECK_INT_EQ(analysis->workers[0].stage_cpu_ns[PO_STAGE_LOAD], 13 * ms);
	/* counted by kind, and the warning names the kind with its count */
	CHECK_INT_EQ(analysis->quality.implausible[PO_IMPLAUSIBLE_SPAN_CPU], 2);
	for (int kind = 0; kind < PO_IMPLAUSIBLE_COUNT; kind++)
		CHECK(kind == PO_IMPLAUSIBLE_SPAN_CPU || !analysis->quality.implausible[kind]);
	CHECK(find_warning(analysis, "implausible-values") != NULL);
	CHECK(strstr(find_warning(analysis, "implausible-values")->text,
		     "(2: a loader span's CPU time longer than the span)") != NULL);
	CHECK(analysis->quality.partial);
	po_analysis_destroy(analysis);
}

/*
 * A kernel's launch shape past CUDA's limits (a flipped bit made 256 threads a block
 * 65,792) is left unknown and counted; the kernel and its time are kept.
 */
static void implausible_launch_shape(void)
{
	struct po_model *model = model_new(NULL);
	struct po_analysis *analysis;
	struct po_event event = event_at(PO_EV_GPU_ACTIVITY, 5 * MS, MAIN, MAIN);

	event.u.gpu_activity.kind = PO_GPU_KERNEL;
	event.u.gpu_activity.name = str_of("gemm");
	event.u.gpu_activity.start_ns = 1 * MS;
	event.u.gpu_activity.end_ns = 3 * MS;
	event.u.gpu_activity.grid_blocks = 40;
	event.u.gpu_activity.block_threads = 256 | (1u << 16);
	step_begin(model, 0, MAIN, MAIN, 0);
	feed(model, &event);
	step_end(model, 20 * MS, MAIN, MAIN, 0);
	analysis = model_done(model);
	CHECK_INT_EQ(analysis->quality.implausible_values, 1);
	CHECK_INT_EQ(analysis->kernel_count, 1);
	CHECK_INT_EQ(analysis->kernels[0].count, 1);
	CHECK_INT_EQ(analysis->kernels[0].block_threads, 0);
	CHECK_INT_EQ(analysis->kernels[0].grid_blocks, 0);
	CHECK_INT_EQ(analysis->gpus[0].busy_ns, 2 * MS);
	po_analysis_destroy(analysis);
}

/* The collector's gpu_records_dropped counters add up to a loss the warnings state. */
static void gpu_records_dropped(void)
{
	struct po_model *model = model_new(NULL);
	struct po_analysis *analysis;
	const int64_t ms = 1000000;

	counter(model, 10 * ms, MAIN, PO_COUNTER_GPU_RECORDS_DROPPED, -1, 100);
	counter(model, 20 * ms, MAIN, PO_COUNTER_GPU_RECORDS_DROPPED, -1, 23);
	counter(model, 30 * ms, MAIN, PO_COUNTER_GPU_RECORDS_DROPPED, -1, -5); /* damaged */
	step_begin(model, 40 * ms, MAIN, MAIN, 0);
	step_end(model, 50 * ms, MAIN, MAIN, 0);
	analysis = model_done(model);
	CHECK_INT_EQ(analysis->quality.gpu_records_dropped, 123);
	CHECK_INT_EQ(analysis->quality.implausible_values, 1);
	CHECK(find_warning(analysis, "gpu-records-dropped") != NULL &&
	      strstr(find_warning(analysis, "gpu-records-dropped")->text,
		     "123 GPU activity records") != NULL);
	po_analysis_destroy(analysis);
}

int main(void)
{
	RUN(gpu_records_dropped);
	RUN(implausible_values);
	RUN(implausible_span_cpu);
	RUN(implausible_launch_shape);
	RUN(discards_flag_steps);
	RUN(unknown_begin_window);
	RUN(time_inversion);
	RUN(missing_context);
	RUN(no_profopt_events);
	RUN(names);
	return CHECK_SUMMARY();
}
