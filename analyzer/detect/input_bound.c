/*
 * input_bound.c: the input-bound detector. It measures how much of each clean step the
 * training thread waits for data, finds why (loading on the training thread, too few
 * workers, saturated cores, a slow stage, slow host-to-device copies), and predicts the
 * step time of the fixes with the what-if model of whatif.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/metrics.h"
#include "whatif.h"

#define LOADER_STAGES 3 /* load, preprocess, collate: PO_STAGE_LOAD + i */

struct ib_facts {
	double wait_ns; /* per clean step: data wait plus loading on the training thread */
	double
	    main_load_ns; /* per clean step: load + preprocess + collate on the training thread */
	double h2d_ns;
	double share_pct; /* wait_ns over the mean step */
	double h2d_share_pct;
	double waiting_steps_pct; /* steps waiting more than half the warning share */
	int64_t workers;	  /* num_workers: run configuration, else worker processes seen */
	bool loading_in_main;
	double stage_wall_ns[LOADER_STAGES]; /* per batch */
	double stage_cpu_ns[LOADER_STAGES];
	bool cpu_measured;
	double busy_pct;     /* workers' mean busy share; NaN without workers */
	double demand_cores; /* CPU the loader and the main loop use */
	/*
	 * The share of a core each runnable thread gets: the cores over the busy workers plus
	 * the main loop's CPU, at most 1. A batch's time off CPU beyond what this share
	 * explains is waiting for I/O; the rest is waiting for a core, which is not I/O.
	 */
	double fair_share;
	double io_ns;	/* per batch: off-CPU time that waiting for a core does not explain */
	double runq_ns; /* per batch: the workers' measured wait for a CPU; -1 unknown */
	double process_cpu_ns; /* per batch: the workers' whole CPU time (process counter) */
	bool saturated;
	double queue_empty_pct; /* clean steps that found no batch ready; NaN unknown */
	double load_cv;		/* variation of the consumed batches' service time */
	enum po_stage dominant;
	const char *label;
	/*
	 * weak: what dominates the dominant stage, or NULL: the function with the largest self
	 * share, or a native object ("[native] NAME") whose functions together take more, and
	 * hotspot_pct its share. inner: that object's function with the largest self share.
	 */
	const struct po_hotspot *hotspot, *inner;
	double hotspot_pct;
	enum po_input_cause cause;
	struct det_whatif model;
};

/* Steps whose own input time is more than half the warning share of the step. */
static double waiting_steps_pct(const struct det_ctx *ctx, bool with_handoff)
{
	size_t waiting = 0;

	for (size_t i = 0; i < ctx->clean_count; i++) {
		const struct po_step step = det_clean_step(ctx, i);

		waiting +=
		    po_metric_step_waits(&step, ctx->rules->input_bound_warning_pct, with_handoff);
	}
	return ctx->clean_count ? 100.0 * (double)waiting / (double)ctx->clean_count : 0;
}

static void measure_waits(const struct det_ctx *ctx, struct ib_facts *facts)
{
	const double *mean = ctx->category_mean_ns;

	facts->waiting_steps_pct = waiting_steps_pct(ctx, false);
	facts->main_load_ns = mean[PO_CAT_LOAD] + mean[PO_CAT_PREPROCESS] + mean[PO_CAT_COLLATE];
	facts->wait_ns = mean[PO_CAT_DATA_WAIT] + facts->main_load_ns;
	facts->h2d_ns = mean[PO_CAT_H2D_COPY];
	facts->share_pct = 100.0 * facts->wait_ns / ctx->mean_step_ns;
	facts->h2d_share_pct = 100.0 * facts->h2d_ns / ctx->mean_step_ns;
}

static int64_t worker_batches(const struct po_analysis *analysis)
{
	int64_t batches = 0;

	for (size_t i = 0; i < analysis->worker_count; i++)
		batches += analysis->workers[i].batches;
	return batches;
}

/* Per-batch stage times summed over the workers; CPU where every worker measured it. */
static bool service_from_workers(const struct det_ctx *ctx, struct ib_facts *facts)
{
	const struct po_analysis *analysis = ctx->analysis;
	int64_t batches = worker_batches(analysis);

	if (batches <= 0)
		return false;
	facts->cpu_measured = true;
	for (int s = 0; s < LOADER_STAGES; s++) {
		double wall = 0, cpu = 0;
		bool known = true;

		/* A stage a worker never ran took none of its CPU. */
		for (size_t i = 0; i < analysis->worker_count; i++) {
			int64_t stage_ns = analysis->workers[i].stage_ns[PO_STAGE_LOAD + s];
			int64_t stage_cpu_ns = analysis->workers[i].stage_cpu_ns[PO_STAGE_LOAD + s];

			wall += (double)stage_ns;
			known = known && (stage_cpu_ns >= 0 || stage_ns == 0);
			cpu += stage_cpu_ns > 0 ? (double)stage_cpu_ns : 0;
		}
		facts->stage_wall_ns[s] = wall / (double)batches;
		facts->stage_cpu_ns[s] = known ? cpu / (double)batches : NAN;
		facts->cpu_measured = facts->cpu_measured && known;
	}
	return true;
}

bool det_loader_batch(const struct det_ctx *ctx, struct det_loader_batch *batch)
{
	struct ib_facts facts = {0};

	if (!service_from_workers(ctx, &facts) || !facts.cpu_measured)
		return false;
	batch->service_ns =
	    facts.stage_wall_ns[0] + facts.stage_wall_ns[1] + facts.stage_wall_ns[2];
	batch->cpu_ns = facts.stage_cpu_ns[0] + facts.stage_cpu_ns[1] + facts.stage_cpu_ns[2];
	batch->cpu_stage_ns = facts.stage_wall_ns[1] + facts.stage_wall_ns[2];
	batch->cpu_stage_cpu_ns = facts.stage_cpu_ns[1] + facts.stage_cpu_ns[2];
	return true;
}

double *det_batch_services_create(const struct det_ctx *ctx, int32_t scaled_pid, double factor,
				  size_t *count)
{
	double *services =
	    malloc((ctx->all_clean_count ? ctx->all_clean_count : 1) * sizeof(double));

	*count = 0;
	if (!services)
		return NULL;
	for (size_t i = 0; i < ctx->all_clean_count; i++) {
		const struct po_step step = det_all_clean_step(ctx, i);
		double service_ns;

		if (step.load_ns < 0 && step.preprocess_ns < 0 && step.collate_ns < 0)
			continue;
		service_ns = (double)((step.load_ns > 0 ? step.load_ns : 0) +
				      (step.preprocess_ns > 0 ? step.preprocess_ns : 0) +
				      (step.collate_ns > 0 ? step.collate_ns : 0));
		services[(*count)++] =
		    step.worker_pid == scaled_pid ? service_ns * factor : service_ns;
	}
	return services;
}

/* Loading on the training thread: its categories per step, CPU from the label statistics. */
static void service_from_main(const struct det_ctx *ctx, struct ib_facts *facts)
{
	const struct po_analysis *analysis = ctx->analysis;

	facts->cpu_measured = true;
	for (int s = 0; s < LOADER_STAGES; s++) {
		double total = 0, cpu = 0;

		facts->stage_wall_ns[s] = ctx->category_mean_ns[PO_CAT_LOAD + s];
		for (size_t i = 0; i < analysis->label_stat_count; i++) {
			const struct po_label_stat *stat = &analysis->label_stats[i];

			if (stat->role != PO_ROLE_MAIN || (int)stat->stage != PO_STAGE_LOAD + s)
				continue;
			if (stat->cpu_ns < 0) {
				total = -1;
				break;
			}
			total += (double)stat->total_ns;
			cpu += (double)stat->cpu_ns;
		}
		facts->stage_cpu_ns[s] = total > 0 ? facts->stage_wall_ns[s] * cpu / total : NAN;
		if (total == 0 && facts->stage_wall_ns[s] == 0)
			facts->stage_cpu_ns[s] = 0;
		facts->cpu_measured = facts->cpu_measured && !isnan(facts->stage_cpu_ns[s]);
	}
}

/* The consumed batches' own stage times, when the workers' totals are missing. */
static void service_from_steps(const struct det_ctx *ctx, struct ib_facts *facts)
{
	double sums[LOADER_STAGES] = {0};
	size_t known = 0;

	for (size_t i = 0; i < ctx->clean_count; i++) {
		const struct po_step step = det_clean_step(ctx, i);

		if (step.load_ns < 0 && step.preprocess_ns < 0 && step.collate_ns < 0)
			continue;
		sums[0] += step.load_ns > 0 ? (double)step.load_ns : 0;
		sums[1] += step.preprocess_ns > 0 ? (double)step.preprocess_ns : 0;
		sums[2] += step.collate_ns > 0 ? (double)step.collate_ns : 0;
		known++;
	}
	for (int s = 0; s < LOADER_STAGES; s++) {
		facts->stage_wall_ns[s] = known ? sums[s] / (double)known : 0;
		facts->stage_cpu_ns[s] = NAN;
	}
	facts->cpu_measured = false;
}

/* Without measured CPU time, preprocess and collate count as CPU and load as waiting. */
static void fill_cpu_assumption(struct ib_facts *facts)
{
	for (int s = 0; s < LOADER_STAGES; s++) {
		if (isnan(facts->stage_cpu_ns[s]))
			facts->stage_cpu_ns[s] = s == 0 ? 0 : facts->stage_wall_ns[s];
	}
}

static void measure_service(const struct det_ctx *ctx, struct ib_facts *facts)
{
	if (facts->loading_in_main)
		service_from_main(ctx, facts);
	else if (!service_from_workers(ctx, facts))
		service_from_steps(ctx, facts);
	fill_cpu_assumption(facts);
	facts->dominant = PO_STAGE_LOAD;
	for (int s = 1; s < LOADER_STAGES; s++) {
		if (facts->stage_wall_ns[s] > facts->stage_wall_ns[facts->dominant - PO_STAGE_LOAD])
			facts->dominant = (enum po_stage)(PO_STAGE_LOAD + s);
	}
}

/*
 * The main process's whole CPU time per step, from its process CPU counter over its life;
 * -1 without two samples.
 */
static double main_process_cpu_per_step(const struct det_ctx *ctx)
{
	const struct po_process *process = det_main_process(ctx->analysis);

	if (!process || process->cpu_first_ns < 0 ||
	    process->cpu_last_ns <= process->cpu_first_ns || process->last_ns <= process->first_ns)
		return -1;
	return (double)(process->cpu_last_ns - process->cpu_first_ns) /
	       (double)(process->last_ns - process->first_ns) * ctx->mean_step_ns;
}

/*
 * The main loop's CPU per step from its process CPU counter, capped by its own time; with
 * loading on the training thread, less the loading's own CPU time.
 */
static double main_cpu_per_step(const struct det_ctx *ctx, const struct ib_facts *facts)
{
	double cpu_ns = main_process_cpu_per_step(ctx);

	if (cpu_ns < 0)
		return facts->model.main_ns;
	if (facts->loading_in_main)
		cpu_ns = fmax(0, cpu_ns - facts->model.cpu_ns);
	return fmin(facts->model.main_ns, cpu_ns);
}

/*
 * Whether the step's batch was ready when the step began: from its ready time, else from
 * the queue depth; -1 when unknown.
 */
static int batch_was_ready(const struct po_step *step)
{
	if (step->ready_ns >= 0)
		return step->ready_ns <= step->begin_ns;
	if (step->queue_depth >= 0)
		return step->queue_depth >= 1;
	return -1;
}

/*
 * The handoff's cost per step: the hand-off category (the part of each data wait after the
 * batch was ready in its worker). Traces that do not say when batches were ready have none;
 * there the data wait of steps that found their batch in the queue stands for it.
 */
static double measure_handoff(const struct det_ctx *ctx, struct ib_facts *facts)
{
	double *waits = malloc((ctx->clean_count ? ctx->clean_count : 1) * sizeof(double));
	size_t ready = 0, known = 0;
	double handoff = 0;

	if (!waits)
		return 0;
	for (size_t i = 0; i < ctx->clean_count; i++) {
		const struct po_step step = det_clean_step(ctx, i);
		int was_ready = batch_was_ready(&step);

		if (was_ready < 0)
			continue;
		known++;
		if (was_ready)
			waits[ready++] = (double)step.category_ns[PO_CAT_DATA_WAIT];
	}
	facts->queue_empty_pct = known ? 100.0 * (double)(known - ready) / (double)known : NAN;
	if (ctx->category_mean_ns[PO_CAT_HANDOFF] > 0)
		handoff = ctx->category_mean_ns[PO_CAT_HANDOFF];
	else if ((double)ready >= ctx->rules->input_bound_handoff_min_steps)
		handoff = po_stats_median(waits, ready);
	free(waits);
	return handoff;
}

/*
 * What a batch's making waited on other than a CPU, by the workers' own clocks: its stages'
 * wall time less their CPU time and their part of the measured run-queue wait (the wait
 * covers all the workers' work, pickling a batch to hand it off too: the stages' part is
 * in proportion to their share of the workers' CPU time). -1 without a measured wait.
 */
static double measured_io_ns(const struct ib_facts *facts)
{
	const struct det_whatif *model = &facts->model;

	if (facts->runq_ns < 0 || facts->process_cpu_ns <= 0)
		return -1;
	return fmax(0, model->service_ns - model->cpu_ns -
			   facts->runq_ns * fmin(1, model->cpu_ns / facts->process_cpu_ns));
}

/*
 * The cores are saturated when the loader's and the main loop's CPU demand fills them, or
 * when the workers' CPU stages (preprocess, collate) make most of a batch's time and take
 * clearly longer in wall time than on CPU: they wait for a core, whoever holds it.
 */
static bool cores_saturated(const struct det_ctx *ctx, const struct ib_facts *facts)
{
	const struct po_rules *rules = ctx->rules;
	double cores = facts->model.cores > 0 ? ctx->available_cores : 0; /* others' taken out */
	double cpu_ns = facts->stage_cpu_ns[1] + facts->stage_cpu_ns[2];
	double wall_ns = facts->stage_wall_ns[1] + facts->stage_wall_ns[2];
	double io_ns = measured_io_ns(facts);
	bool starved;

	if (cores <= 0 || facts->workers <= 0)
		return false;
	/*
	 * Workers whose own clocks show that a batch waits mostly on I/O (neither on CPU nor
	 * for a core) are not held back by the cores, however busy the machine is: a wait on
	 * I/O needs no core, and more workers overlap the waits (workload.busy_io_workers: one
	 * worker waiting 5 ms a sample beside two busy loops, 0.13 cores used by it).
	 */
	if (io_ns >= 0 && io_ns > facts->model.service_ns / 2)
		return false;
	if (facts->demand_cores >= cores * rules->input_bound_saturated_pct / 100.0)
		return true;
	/*
	 * Measured: the workers wait for a core, whoever holds it (other programs too), a
	 * quarter (starved_ratio - 1) of their whole CPU time or more, and as much of a batch's
	 * making time: a worker that sleeps on I/O and waits a little for a core when it wakes
	 * is not starved of cores.
	 */
	if (facts->runq_ns >= 0 && facts->process_cpu_ns > 0 &&
	    facts->runq_ns >= (rules->input_bound_starved_ratio - 1) * facts->process_cpu_ns &&
	    facts->runq_ns >= (rules->input_bound_starved_ratio - 1) * facts->model.service_ns)
		return true;
	starved = facts->cpu_measured && cpu_ns > 0 &&
		  wall_ns >= rules->input_bound_starved_ratio * cpu_ns;
	return starved && wall_ns >= facts->stage_wall_ns[0];
}

/*
 * Cores the loader and the main loop use: from the CPU per batch and per step, or from the
 * workers' busy share times the CPU part of their work, whichever is larger (batch counts
 * can include batches made but never consumed).
 */
static double cpu_demand(const struct det_ctx *ctx, const struct ib_facts *facts)
{
	const struct det_whatif *model = &facts->model;
	double main_cores = model->main_cpu_ns / ctx->mean_step_ns;
	double per_batch = (model->cpu_ns + model->main_cpu_ns) / ctx->mean_step_ns;
	double busy_workers;

	if (isnan(facts->busy_pct) || model->service_ns <= 0)
		return per_batch;
	busy_workers = facts->busy_pct / 100.0 * (double)det_live_workers(ctx->analysis);
	return fmax(per_batch, busy_workers * model->cpu_ns / model->service_ns + main_cores);
}

/*
 * The workers' measured run-queue wait per batch (the sampler's PROCESS_RUNQ_WAIT counter,
 * of the worker's main thread, which loads: time runnable but not running, whoever held the
 * CPU, other programs too); -1 when a worker lacks it.
 */
static double workers_runq_per_batch(const struct po_analysis *analysis, double *cpu_per_batch)
{
	double wait_ns = 0, cpu_ns = 0;
	int64_t batches = 0;

	for (size_t i = 0; i < analysis->worker_count; i++) {
		const struct po_worker *worker = &analysis->workers[i];
		const struct po_process *process = NULL;

		for (size_t p = 0; p < analysis->process_count && !process; p++)
			if (analysis->processes[p].pid == worker->pid)
				process = &analysis->processes[p];
		if (!process || process->runq_first_ns < 0 ||
		    process->runq_last_ns < process->runq_first_ns || process->cpu_first_ns < 0 ||
		    process->cpu_last_ns < process->cpu_first_ns)
			return -1;
		wait_ns += (double)(process->runq_last_ns - process->runq_first_ns);
		cpu_ns += (double)(process->cpu_last_ns - process->cpu_first_ns);
		batches += worker->batches;
	}
	if (batches <= 0)
		return -1;
	*cpu_per_batch = cpu_ns / (double)batches;
	return wait_ns / (double)batches;
}

/*
 * With loading on the training thread, the main thread's measured run-queue wait per step
 * (its PROCESS_RUNQ_WAIT counter over the process's life: time runnable but not running,
 * whoever held the CPU, other programs too); -1 without it. *cpu_per_step: the main
 * process's whole CPU time per step, which the loading's part of the wait is in proportion
 * to.
 */
static double main_runq_per_step(const struct det_ctx *ctx, double *cpu_per_step)
{
	const struct po_process *process = det_main_process(ctx->analysis);

	*cpu_per_step = main_process_cpu_per_step(ctx);
	if (!process || *cpu_per_step <= 0)
		return -1;
	return det_main_runq_per_step(ctx);
}

static void measure_io(const struct det_ctx *ctx, struct ib_facts *facts)
{
	const struct det_whatif *model = &facts->model;
	double busy = isnan(facts->busy_pct) ? 1 : facts->busy_pct / 100.0;
	double runnable = busy * (double)det_live_workers(ctx->analysis) +
			  (ctx->mean_step_ns > 0 ? model->main_cpu_ns / ctx->mean_step_ns : 1);

	facts->fair_share =
	    model->cores > 0 && runnable > 0 ? fmin(1, ctx->available_cores / runnable) : 1;
	/* Measured beats modelled: what the workers really waited for a CPU is not I/O. */
	facts->io_ns = measured_io_ns(facts);
	if (facts->io_ns < 0)
		facts->io_ns = fmax(0, model->service_ns - model->cpu_ns / facts->fair_share);
}

/* The share of a batch's making spent waiting on other than a CPU (the evidence's). */
static double io_share_pct(const struct ib_facts *facts)
{
	return facts->model.service_ns > 0 ? 100.0 * facts->io_ns / facts->model.service_ns : 0;
}

static void build_model(const struct det_ctx *ctx, struct ib_facts *facts)
{
	struct det_whatif *model = &facts->model;

	model->service_ns =
	    facts->stage_wall_ns[0] + facts->stage_wall_ns[1] + facts->stage_wall_ns[2];
	model->cpu_ns = fmin(model->service_ns, facts->stage_cpu_ns[0] + facts->stage_cpu_ns[1] +
						    facts->stage_cpu_ns[2]);
	/* Moving loading to workers adds a hand-off that a run without workers cannot show. */
	model->handoff_ns = facts->loading_in_main
				? ctx->rules->input_bound_default_handoff_ms * DET_NS_PER_MS
				: measure_handoff(ctx, facts);
	model->main_ns =
	    fmax(0, ctx->mean_step_ns - facts->wait_ns - ctx->category_mean_ns[PO_CAT_HANDOFF]);
	model->main_cpu_ns = main_cpu_per_step(ctx, facts);
	/*
	 * The cores other programs left, where they took few; on a busy machine the model
	 * counts with all of them to tell what the program's shape allows, and the prediction
	 * of a change is withheld (how much of the cores other programs would leave to more
	 * threads is not in the trace).
	 */
	model->cores = ctx->analysis->cpu_count <= 0 ? 0
		       : ctx->machine_busy	     ? ctx->analysis->cpu_count
						     : ctx->available_cores;
	model->cpu_bound = model->cpu_ns >= model->service_ns - model->cpu_ns;
	facts->demand_cores = cpu_demand(ctx, facts);
	facts->runq_ns = facts->loading_in_main
			     ? main_runq_per_step(ctx, &facts->process_cpu_ns)
			     : workers_runq_per_batch(ctx->analysis, &facts->process_cpu_ns);
	facts->saturated = cores_saturated(ctx, facts);
	measure_io(ctx, facts);
}

static double service_cv(const struct det_ctx *ctx)
{
	double sum = 0, sum_sq = 0, mean;
	size_t known = 0;

	for (size_t i = 0; i < ctx->clean_count; i++) {
		const struct po_step step = det_clean_step(ctx, i);
		double service;

		if (step.load_ns < 0 && step.preprocess_ns < 0 && step.collate_ns < 0)
			continue;
		service = (double)((step.load_ns > 0 ? step.load_ns : 0) +
				   (step.preprocess_ns > 0 ? step.preprocess_ns : 0) +
				   (step.collate_ns > 0 ? step.collate_ns : 0));
		sum += service;
		sum_sq += service * service;
		known++;
	}
	if (known < 2 || sum <= 0)
		return NAN;
	mean = sum / (double)known;
	return sqrt(fmax(0, sum_sq / (double)known - mean * mean)) / mean;
}

static const char *dominant_label(const struct po_analysis *analysis, enum po_stage stage,
				  enum po_role role)
{
	for (size_t i = 0; i < analysis->label_stat_count; i++) {
		const struct po_label_stat *stat = &analysis->label_stats[i];

		if (stat->stage == stage && stat->role == role && stat->label)
			return stat->label;
	}
	for (size_t i = 0; i < analysis->label_stat_count; i++) {
		if (analysis->label_stats[i].stage == stage && analysis->label_stats[i].label)
			return analysis->label_stats[i].label;
	}
	return "";
}

static bool native_object(const struct po_hotspot *hotspot)
{
	return strncmp(hotspot->function, "[native] ", 9) == 0;
}

/* A native object's share of the group: its frame is on the stacks of all its functions. */
static double hotspot_share(const struct po_hotspot *hotspot)
{
	return native_object(hotspot) ? hotspot->total_pct : hotspot->self_pct;
}

/*
 * The function of a native object's code with the largest self share, when it holds a
 * quarter of the object's share or more (else naming it says little), or NULL.
 */
static const struct po_hotspot *inner_function(const struct po_hotspot_group *group,
					       const struct po_hotspot *object)
{
	for (size_t i = 0; i < group->hotspot_count; i++) {
		const struct po_hotspot *h = &group->hotspots[i];

		if (h != object && !native_object(h) && strcmp(h->file, object->file) == 0)
			return h->self_pct >= object->total_pct / 4 ? h : NULL;
	}
	return NULL;
}

/*
 * What dominates a stage in the role that loads, when its group has enough samples to say
 * so: the first hotspot (largest self share) of its group, or a native object whose code
 * takes a larger share in all (a library's time spread over its functions), unless the
 * object is on (nearly) every stack.
 */
static void dominant_hotspot(const struct det_ctx *ctx, struct ib_facts *facts, enum po_role role)
{
	const struct po_analysis *analysis = ctx->analysis;

	for (size_t i = 0; i < analysis->hotspot_group_count; i++) {
		const struct po_hotspot_group *group = &analysis->hotspot_groups[i];

		if (group->role != role || group->stage != (int)facts->dominant ||
		    !group->hotspot_count ||
		    (double)group->samples < ctx->rules->input_bound_hotspot_min_samples)
			continue;
		facts->hotspot = &group->hotspots[0];
		/* an object on every stack (a C program's own) says nothing */
		for (size_t k = 1; k < group->hotspot_count; k++)
			if (native_object(&group->hotspots[k]) &&
			    group->hotspots[k].total_pct < PO_HOTSPOT_EVERY_STACK_PCT &&
			    hotspot_share(&group->hotspots[k]) > hotspot_share(facts->hotspot))
				facts->hotspot = &group->hotspots[k];
		facts->hotspot_pct = hotspot_share(facts->hotspot);
		facts->inner =
		    native_object(facts->hotspot) ? inner_function(group, facts->hotspot) : NULL;
		return;
	}
}

static enum po_input_cause choose_cause(const struct det_ctx *ctx, const struct ib_facts *facts)
{
	const struct det_whatif *model = &facts->model;

	if (facts->loading_in_main)
		return PO_INPUT_CAUSE_LOADING_IN_MAIN_PROCESS;
	if (facts->h2d_ns > facts->wait_ns)
		return PO_INPUT_CAUSE_SLOW_H2D;
	if (model->service_ns <= 0)
		return PO_INPUT_CAUSE_LOADER_NOT_TRACED;
	if (facts->saturated)
		return PO_INPUT_CAUSE_CPU_SATURATED;
	if (!isnan(facts->busy_pct) && facts->busy_pct >= ctx->rules->input_bound_worker_busy_pct)
		return PO_INPUT_CAUSE_TOO_FEW_WORKERS;
	if (facts->dominant == PO_STAGE_LOAD)
		return PO_INPUT_CAUSE_SLOW_LOAD;
	if (facts->dominant == PO_STAGE_PREPROCESS)
		return PO_INPUT_CAUSE_SLOW_PREPROCESS;
	return PO_INPUT_CAUSE_SLOW_COLLATE;
}

/*
 * On saturated cores the hand-off is slow because the loop waits for a core to take the
 * batch in, while the loader's CPU work holds the cores: then it is input time, and the
 * cause is the saturated cores, not the hand-off (loader-handoff stays silent). Only while
 * the loader's workers hold the cores (each busy input-bound.worker_busy_pct of its life, or
 * together busy long enough to fill every core left to the run): idle workers whose
 * batches wait ready in the queue hold no core, and a loop that receives them slowly on
 * cores other programs hold waits for a core, not for its input. The steady statistics'
 * input wait is the finding's: it counts the hand-off too.
 */
static bool workers_hold_cores(const struct det_ctx *ctx, const struct ib_facts *facts)
{
	if (facts->busy_pct >= ctx->rules->input_bound_worker_busy_pct)
		return true;
	/*
	 * Fewer busy each, but enough of them to fill every core the machine leaves the run:
	 * 4 workers busy 77% of their life on 2 cores hold them (workload.cpu_starved measured
	 * 75 to 79% busy on one VM and over 80% on others, with the same saturated cores).
	 */
	return facts->workers > 0 && ctx->available_cores > 0 &&
	       (double)facts->workers * facts->busy_pct / 100.0 >= ctx->available_cores;
}

static void handoff_on_saturated_cores(const struct det_ctx *ctx, struct ib_facts *facts)
{
	double handoff_ns = ctx->category_mean_ns[PO_CAT_HANDOFF];
	struct po_steady_stats *steady = &ctx->diagnosis->steady;

	if (!facts->saturated || facts->loading_in_main || handoff_ns <= 0 ||
	    !workers_hold_cores(ctx, facts))
		return;
	facts->wait_ns += handoff_ns;
	facts->share_pct = 100.0 * facts->wait_ns / ctx->mean_step_ns;
	facts->waiting_steps_pct = waiting_steps_pct(ctx, true);
	steady->input_wait_pct = facts->share_pct;
	steady->handoff_is_input = true;
}

static void measure(const struct det_ctx *ctx, struct ib_facts *facts)
{
	const struct po_analysis *analysis = ctx->analysis;

	measure_waits(ctx, facts);
	facts->workers = det_configured_workers(analysis);
	/*
	 * Loading is on the training thread only where its stages are there: a loop that marks
	 * its data wait alone, with no worker in the trace, has a loader the trace does not
	 * show (configured with num_workers=0 or not), and a batch's making time is unknown.
	 */
	facts->loading_in_main = analysis->worker_count == 0 && facts->main_load_ns > 0;
	if (facts->loading_in_main)
		facts->workers = 0;
	measure_service(ctx, facts);
	facts->busy_pct = det_workers_busy_pct(analysis);
	facts->queue_empty_pct = NAN;
	build_model(ctx, facts);
	handoff_on_saturated_cores(ctx, facts);
	facts->load_cv = service_cv(ctx);
	facts->label = dominant_label(analysis, facts->dominant,
				      facts->loading_in_main ? PO_ROLE_MAIN : PO_ROLE_WORKER);
	dominant_hotspot(ctx, facts, facts->loading_in_main ? PO_ROLE_MAIN : PO_ROLE_WORKER);
	facts->cause = choose_cause(ctx, facts);
}

/* The severity of the share, or COUNT when it does not fire. */
static enum po_severity severity_of(const struct det_ctx *ctx, const struct ib_facts *facts)
{
	const struct po_rules *rules = ctx->rules;
	double share = facts->share_pct;

	if (facts->waiting_steps_pct < rules->input_bound_waiting_steps_pct)
		share = 0; /* a few long waits: sporadic spikes, which step-outliers reports */
	if (share < rules->input_bound_warning_pct) {
		if (facts->h2d_share_pct < rules->input_bound_h2d_warning_pct ||
		    facts->h2d_ns <= facts->wait_ns)
			return PO_SEVERITY_COUNT;
		share += facts->h2d_share_pct;
	}
	if (share >= rules->input_bound_critical_pct)
		return PO_SEVERITY_CRITICAL;
	return share >= rules->input_bound_warning_pct ? PO_SEVERITY_WARNING : PO_SEVERITY_COUNT;
}

/* Native libraries whose work a loader can do less of, or elsewhere: name prefix, work. */
static const struct {
	const char *prefix;
	const char *work;
	const char *advice;
} native_work[] = {
    {"[native] libjpeg", "JPEG decoding",
     "decode less or faster: smaller stored images, PIL's Image.draft() to decode JPEGs at "
     "reduced size, a SIMD decoder (libjpeg-turbo, pillow-simd), or decoding on the GPU "
     "(torchvision.io.decode_jpeg(..., device=\"cuda\"), NVIDIA DALI)"},
    {"[native] libpng", "PNG decoding",
     "store the images in a format that decodes faster (JPEG, or decoded arrays in a "
     "memory-mapped file), or decode them once and cache the result"},
    {"[native] libwebp", "WebP decoding",
     "store the images in a format that decodes faster, or cache the decoded arrays"},
    {"[native] libz", "zlib decompression",
     "store the data uncompressed or with a faster codec (lz4, zstd), or cache it "
     "decompressed"},
    {"[native] libtiff", "TIFF decoding",
     "convert the images once to a format that decodes "
     "faster, or cache the decoded arrays"},
    {"[native] libav", "video decoding",
     "decode fewer frames (sample clips before decoding), at lower resolution, or on the GPU "
     "(NVIDIA DALI, torchvision's GPU video decoding)"},
};

/* The native library entry of a hotspot, or -1. */
static int native_work_of(const struct po_hotspot *hotspot)
{
	for (size_t i = 0; hotspot && i < sizeof(native_work) / sizeof(native_work[0]); i++)
		if (strncmp(hotspot->function, native_work[i].prefix,
			    strlen(native_work[i].prefix)) == 0)
			return (int)i;
	return -1;
}

/*
 * "; load: 71% in decode_jpeg (dataset.py:42)" when a function dominates the stage,
 * "; load: 46% in libjpeg.so.62's native code (JPEG decoding), 30% in decode_mcu" when a
 * native object does, else "".
 */
static const char *hotspot_sentence(struct det_ctx *ctx, const struct ib_facts *facts)
{
	const struct po_hotspot *hotspot = facts->hotspot;
	int work = native_work_of(hotspot);
	const char *slash;

	if (!hotspot)
		return "";
	slash = strrchr(hotspot->file, '/');
	if (native_object(hotspot))
		return det_printf(
		    ctx, "; %s: %.0f%% in %s's native code%s%s%s%s%s",
		    po_stage_name(facts->dominant), facts->hotspot_pct, hotspot->function + 9,
		    work >= 0 ? " (" : "", work >= 0 ? native_work[work].work : "",
		    work >= 0 ? ")" : "",
		    facts->inner ? det_printf(ctx, ", %.0f%% in ", facts->inner->self_pct) : "",
		    facts->inner ? facts->inner->function : "");
	if (hotspot->line <= 0) /* a native function without line information */
		return det_printf(ctx, "; %s: %.0f%% in %s (%s)", po_stage_name(facts->dominant),
				  facts->hotspot_pct, hotspot->function,
				  slash ? slash + 1 : hotspot->file);
	return det_printf(ctx, "; %s: %.0f%% in %s (%s:%d)", po_stage_name(facts->dominant),
			  facts->hotspot_pct, hotspot->function, slash ? slash + 1 : hotspot->file,
			  (int)hotspot->line);
}

/* A stage dominated by a known native library: what to do about its work. */
static void recommend_native(struct det_ctx *ctx, struct po_finding *finding,
			     const struct ib_facts *facts)
{
	int work = native_work_of(facts->hotspot);

	if (work < 0)
		return;
	det_recommend(ctx, finding, PO_KNOB_DECODER, native_work[work].advice,
		      det_printf(ctx, "%s takes %.0f%% of the %s stage's sampled CPU time in %s",
				 native_work[work].work, facts->hotspot_pct,
				 po_stage_name(facts->dominant), facts->hotspot->function + 9),
		      "less of that share of the loading; not modelled", NAN, NAN);
}

/* The recommendations, defined below. */
static void recommend(struct det_ctx *ctx, struct po_finding *finding,
		      const struct ib_facts *facts);

static void add_evidence(struct det_ctx *ctx, struct po_finding *finding,
			 const struct ib_facts *facts)
{
	const struct det_whatif *model = &facts->model;
	double io_pct = io_share_pct(facts);

	det_ev_number(ctx, finding, PO_EVIDENCE_WAIT_SHARE_PCT, facts->share_pct);
	det_ev_number(ctx, finding, PO_EVIDENCE_WAIT_MS_PER_STEP, facts->wait_ns / DET_NS_PER_MS);
	det_ev_number(ctx, finding, PO_EVIDENCE_STEP_MS, ctx->mean_step_ns / DET_NS_PER_MS);
	det_ev_number(ctx, finding, PO_EVIDENCE_WAITING_STEPS_PCT, facts->waiting_steps_pct);
	det_ev_int(ctx, finding, PO_EVIDENCE_STEPS, (int64_t)ctx->clean_count);
	det_ev_text(ctx, finding, PO_EVIDENCE_CAUSE, po_input_cause_name(facts->cause));
	ctx->diagnosis->input_cause = facts->cause;
	ctx->diagnosis->has_bottleneck = true;
	ctx->diagnosis->bottleneck = facts->cause == PO_INPUT_CAUSE_SLOW_H2D
					 ? PO_CAT_H2D_COPY
					 : po_category_of_stage(facts->dominant);
	det_ev_text(ctx, finding, PO_EVIDENCE_STAGE, po_stage_name(facts->dominant));
	det_ev_text(ctx, finding, PO_EVIDENCE_LABEL, facts->label);
	if (facts->hotspot) {
		det_ev_text(ctx, finding, PO_EVIDENCE_HOTSPOT_FUNCTION, facts->hotspot->function);
		det_ev_text(ctx, finding, PO_EVIDENCE_HOTSPOT_FILE, facts->hotspot->file);
		det_ev_int(ctx, finding, PO_EVIDENCE_HOTSPOT_LINE, facts->hotspot->line);
		det_ev_number(ctx, finding, PO_EVIDENCE_HOTSPOT_SELF_PCT, facts->hotspot_pct);
	}
	det_ev_int(ctx, finding, PO_EVIDENCE_NUM_WORKERS, facts->workers);
	det_ev_int(ctx, finding, PO_EVIDENCE_CPU_COUNT, ctx->analysis->cpu_count);
	if (!isnan(facts->busy_pct))
		det_ev_number(ctx, finding, PO_EVIDENCE_WORKER_BUSY_PCT, facts->busy_pct);
	det_ev_number(ctx, finding, PO_EVIDENCE_CPU_DEMAND_CORES, facts->demand_cores);
	det_ev_number(ctx, finding, PO_EVIDENCE_SERVICE_MS_PER_BATCH,
		      model->service_ns / DET_NS_PER_MS);
	det_ev_number(ctx, finding, PO_EVIDENCE_CPU_MS_PER_BATCH, model->cpu_ns / DET_NS_PER_MS);
	det_ev_text(ctx, finding, PO_EVIDENCE_CPU_SOURCE,
		    facts->cpu_measured ? "measured" : "assumed");
	det_ev_number(ctx, finding, PO_EVIDENCE_IO_WAIT_SHARE_PCT, io_pct);
	det_ev_number(ctx, finding, PO_EVIDENCE_CORE_WAIT_MS_PER_BATCH,
		      fmax(0, model->service_ns - model->cpu_ns - facts->io_ns) / DET_NS_PER_MS);
	det_ev_text(ctx, finding, PO_EVIDENCE_CORE_WAIT_SOURCE,
		    facts->runq_ns >= 0 ? "measured" : "modelled");
	det_ev_number(ctx, finding, PO_EVIDENCE_FAIR_CORE_SHARE, facts->fair_share);
	det_ev_text(ctx, finding, PO_EVIDENCE_LOADING,
		    io_pct >= ctx->rules->input_bound_io_share_pct ? "io-like" : "cpu-bound");
	det_ev_number(ctx, finding, PO_EVIDENCE_MAIN_MS_PER_STEP, model->main_ns / DET_NS_PER_MS);
	det_ev_number(ctx, finding, PO_EVIDENCE_HANDOFF_MS, model->handoff_ns / DET_NS_PER_MS);
	det_ev_number(ctx, finding, PO_EVIDENCE_H2D_MS_PER_STEP, facts->h2d_ns / DET_NS_PER_MS);
	det_ev_number(ctx, finding, PO_EVIDENCE_MODEL_STEP_MS,
		      facts->cause == PO_INPUT_CAUSE_LOADER_NOT_TRACED
			  ? NAN
			  : det_whatif_step_ns(model, facts->workers) / DET_NS_PER_MS);
	if (!isnan(ctx->others_cores)) {
		det_ev_number(ctx, finding, PO_EVIDENCE_OTHERS_CORES, ctx->others_cores);
		det_ev_number(ctx, finding, PO_EVIDENCE_AVAILABLE_CORES, ctx->available_cores);
	}
	if (!isnan(facts->queue_empty_pct))
		det_ev_number(ctx, finding, PO_EVIDENCE_QUEUE_EMPTY_PCT, facts->queue_empty_pct);
}

static const char *cause_sentence(const struct det_ctx *ctx, const struct ib_facts *facts)
{
	if (facts->cause == PO_INPUT_CAUSE_LOADING_IN_MAIN_PROCESS)
		return "the batches are loaded on the training thread itself (no worker processes)";
	if (facts->cause == PO_INPUT_CAUSE_SLOW_H2D)
		return "host-to-device copies take longer than the data wait";
	if (facts->cause == PO_INPUT_CAUSE_CPU_SATURATED && ctx->machine_busy)
		return det_printf((struct det_ctx *)ctx,
				  "the workers and the main loop use %.1f and other programs %.1f "
				  "of %d cores, and their CPU work waits for a core: more workers "
				  "will not help",
				  facts->demand_cores, ctx->others_cores, ctx->analysis->cpu_count);
	if (facts->cause == PO_INPUT_CAUSE_CPU_SATURATED)
		return det_printf(
		    (struct det_ctx *)ctx,
		    "the workers and the main loop use %.1f of %d cores and their CPU "
		    "work waits for a core: more workers will not help",
		    facts->demand_cores, ctx->analysis->cpu_count);
	if (facts->cause == PO_INPUT_CAUSE_LOADER_NOT_TRACED)
		return "what the loader does meanwhile is not in the trace (no load, preprocess or "
		       "collate spans), so why it is slow and what would help cannot be told";
	if (facts->cause == PO_INPUT_CAUSE_TOO_FEW_WORKERS && ctx->machine_busy &&
	    io_share_pct(facts) >= ctx->rules->input_bound_io_share_pct)
		return det_printf(
		    (struct det_ctx *)ctx,
		    "%lld worker(s) are busy %.0f%% of the time, %.0f%% of a batch's "
		    "making waiting on I/O, which needs no core: more workers overlap "
		    "the waits, though other programs use %.1f of the %d cores",
		    (long long)facts->workers, facts->busy_pct, io_share_pct(facts),
		    ctx->others_cores, ctx->analysis->cpu_count);
	if (facts->cause == PO_INPUT_CAUSE_TOO_FEW_WORKERS && ctx->machine_busy)
		return det_printf(
		    (struct det_ctx *)ctx,
		    "%lld worker(s) are busy %.0f%% of the time, and the %.1f cores "
		    "other programs leave have room: the workers and the main loop use "
		    "%.1f",
		    (long long)facts->workers, facts->busy_pct, ctx->available_cores,
		    facts->demand_cores);
	if (facts->cause == PO_INPUT_CAUSE_TOO_FEW_WORKERS)
		return det_printf((struct det_ctx *)ctx,
				  "%lld worker(s) are busy %.0f%% of the time and cores are idle",
				  (long long)facts->workers, facts->busy_pct);
	return det_printf((struct det_ctx *)ctx, "the %s stage is slow",
			  po_stage_name(facts->dominant));
}

enum po_status det_input_bound(struct det_ctx *ctx)
{
	struct ib_facts facts = {0};
	enum po_severity severity;
	struct po_finding *finding;
	double margin;

	if ((double)ctx->clean_count < ctx->rules->input_bound_min_steps || ctx->mean_step_ns <= 0)
		return PO_STATUS_OK;
	measure(ctx, &facts);
	severity = severity_of(ctx, &facts);
	if (severity == PO_SEVERITY_COUNT)
		return PO_STATUS_OK;
	if (facts.share_pct < ctx->rules->input_bound_warning_pct ||
	    facts.waiting_steps_pct < ctx->rules->input_bound_waiting_steps_pct)
		facts.cause = PO_INPUT_CAUSE_SLOW_H2D;
	margin = ctx->rules->input_bound_warning_pct > 0
		     ? (facts.share_pct + facts.h2d_share_pct) / ctx->rules->input_bound_warning_pct
		     : 2;
	finding = det_finding_add(ctx, PO_FINDING_INPUT_BOUND, severity,
				  det_clamp(0.6 + 0.2 * margin, 0, 1));
	if (!finding)
		return PO_STATUS_NOMEM;
	det_summary(
	    ctx, finding,
	    "The training loop waits for data %.1f%% of each steady step (%.2f ms of %.2f ms on "
	    "average over %zu steady steps): %s%s%s%s%s%s%s.",
	    facts.share_pct, facts.wait_ns / DET_NS_PER_MS, ctx->mean_step_ns / DET_NS_PER_MS,
	    ctx->clean_count, cause_sentence(ctx, &facts),
	    facts.model.service_ns > 0 ? ". The slowest loading stage is " : "",
	    facts.model.service_ns > 0 ? po_stage_name(facts.dominant) : "",
	    facts.model.service_ns > 0 && facts.label[0] ? " (" : "",
	    facts.model.service_ns > 0 ? facts.label : "",
	    facts.model.service_ns > 0 && facts.label[0] ? ")" : "",
	    facts.model.service_ns > 0 ? hotspot_sentence(ctx, &facts) : "");
	add_evidence(ctx, finding, &facts);
	recommend(ctx, finding, &facts);
	return PO_STATUS_OK;
}

/* ---- recommendations ---- */

static double speedup_of(const struct det_ctx *ctx, double step_ns)
{
	return step_ns > 0 ? ctx->mean_step_ns / step_ns : NAN;
}

/*
 * Saturated cores keep the current num_workers: the model's CPU limit is then a guess. More
 * workers are advised only when they beat prefetch_ns (a deeper queue's step, NaN without)
 * by more than input-bound.within_best_pct: a worker costs a core, a deeper queue none.
 */
static void recommend_workers(struct det_ctx *ctx, struct po_finding *finding,
			      const struct ib_facts *facts, double prefetch_ns)
{
	struct det_whatif moved = facts->model;
	const struct det_whatif *model = &moved;
	int64_t best;

	/*
	 * Loading on the training thread: the main thread's measured wait for a core is not
	 * work a worker repeats; a worker spends the CPU time and the I/O of a batch, and the
	 * model's CPU limit charges the cores.
	 */
	if (facts->loading_in_main && facts->runq_ns >= 0) {
		moved.service_ns = fmin(moved.service_ns, moved.cpu_ns + facts->io_ns);
		moved.cpu_bound = moved.cpu_ns >= moved.service_ns - moved.cpu_ns;
	}
	best = facts->saturated
		   ? facts->workers
		   : det_whatif_best_workers(model, (int64_t)ctx->rules->input_bound_max_workers,
					     ctx->rules->input_bound_within_best_pct,
					     ctx->rules->input_bound_worker_headroom_pct);
	/* Keeping the current setting predicts the measured step. */
	double step_ns = facts->saturated ? ctx->mean_step_ns : det_whatif_step_ns(model, best);
	double speedup = speedup_of(ctx, step_ns);

	det_ev_int(ctx, finding, PO_EVIDENCE_RECOMMENDED_NUM_WORKERS, best);
	det_ev_number(ctx, finding, PO_EVIDENCE_PREDICTED_STEP_MS,
		      ctx->machine_busy ? NAN : step_ns / DET_NS_PER_MS);
	det_ev_number(ctx, finding, PO_EVIDENCE_PREDICTED_SPEEDUP,
		      ctx->machine_busy ? NAN : speedup);
	if (best <= facts->workers ||
	    speedup < 1.0 + ctx->rules->input_bound_within_best_pct / 100 ||
	    step_ns * (1.0 + ctx->rules->input_bound_within_best_pct / 100) >= prefetch_ns)
		return;
	det_recommend_cores(
	    ctx, finding, PO_KNOB_NUM_WORKERS,
	    det_printf(ctx, "set num_workers=%lld", (long long)best),
	    det_printf(ctx,
		       "a batch takes %.2f ms to make (%.2f ms of it on CPU) and the main "
		       "loop needs a batch every %.2f ms; %lld workers keep up within %.0f%% "
		       "of the best the %d cores allow",
		       model->service_ns / DET_NS_PER_MS, model->cpu_ns / DET_NS_PER_MS,
		       model->main_ns / DET_NS_PER_MS, (long long)best,
		       ctx->rules->input_bound_within_best_pct, ctx->analysis->cpu_count),
	    det_printf(ctx, "step %.2f ms -> %.2f ms (%.2fx)", ctx->mean_step_ns / DET_NS_PER_MS,
		       step_ns / DET_NS_PER_MS, speedup),
	    step_ns / DET_NS_PER_MS, speedup);
}

/* Saturated cores: cut the CPU per batch. */
static void recommend_less_cpu(struct det_ctx *ctx, struct po_finding *finding,
			       const struct ib_facts *facts)
{
	struct det_whatif lighter = facts->model;
	enum po_stage stage = facts->stage_cpu_ns[1] >= facts->stage_cpu_ns[2] ? PO_STAGE_PREPROCESS
									       : PO_STAGE_COLLATE;
	int s = stage - PO_STAGE_LOAD;
	const char *label = dominant_label(ctx->analysis, stage,
					   facts->loading_in_main ? PO_ROLE_MAIN : PO_ROLE_WORKER);
	double now_ns = det_whatif_step_ns(&facts->model, facts->workers), step_ns, cpu_ns;

	/*
	 * More workers are no advice here: the summary says they will not help. The gain is the
	 * model's own, without the stage against with it, applied to the measured step: a
	 * stage that costs nothing gains nothing, whatever the model leaves out.
	 */
	lighter.service_ns -= facts->stage_wall_ns[s];
	lighter.cpu_ns = fmax(0, lighter.cpu_ns - facts->stage_cpu_ns[s]);
	step_ns = now_ns > 0
		      ? ctx->mean_step_ns * det_whatif_step_ns(&lighter, facts->workers) / now_ns
		      : NAN;
	/*
	 * Where the model does not explain the loop's measured wait (its step is the loop's own
	 * time while the loop still waits: the cores are shared unevenly), the stage's share of
	 * the loader's CPU time is at least its share of that wait.
	 */
	cpu_ns = facts->stage_cpu_ns[0] + facts->stage_cpu_ns[1] + facts->stage_cpu_ns[2];
	if (cpu_ns > 0 && facts->wait_ns > 0)
		step_ns =
		    fmin(isnan(step_ns) ? INFINITY : step_ns,
			 ctx->mean_step_ns - facts->wait_ns * facts->stage_cpu_ns[s] / cpu_ns);
	det_recommend_cores(
	    ctx, finding, PO_KNOB_TRANSFORM,
	    det_printf(ctx, "move the %s transform%s%s%s to the GPU or cache its output",
		       po_stage_name(stage), label[0] ? " (" : "", label, label[0] ? ")" : ""),
	    det_printf(ctx, "it costs %.2f ms of CPU per batch on saturated cores",
		       facts->stage_cpu_ns[s] / DET_NS_PER_MS),
	    det_printf(ctx, "at best step %.2f ms (%.2fx) if its CPU time left the loader",
		       step_ns / DET_NS_PER_MS, speedup_of(ctx, step_ns)),
	    step_ns / DET_NS_PER_MS, speedup_of(ctx, step_ns));
}

static void recommend_pinned(struct det_ctx *ctx, struct po_finding *finding,
			     const struct ib_facts *facts)
{
	double saved_ns = facts->h2d_ns * ctx->rules->input_bound_pinned_saving_pct / 100.0;
	double step_ns = ctx->mean_step_ns - saved_ns;
	if (ctx->analysis->settings.pin_memory == 1)
		return;
	det_recommend(ctx, finding, PO_KNOB_PIN_MEMORY,
		      "set pin_memory=True and copy with .to(device, non_blocking=True)",
		      det_printf(ctx,
				 "host-to-device copies take %.2f ms per step from pageable "
				 "memory, and the training thread waits for them",
				 facts->h2d_ns / DET_NS_PER_MS),
		      det_printf(ctx, "about %.2f ms per step saved (assumed %.0f%% of the copy)",
				 saved_ns / DET_NS_PER_MS,
				 ctx->rules->input_bound_pinned_saving_pct),
		      step_ns / DET_NS_PER_MS, speedup_of(ctx, step_ns));
}

/* The prefetch_factor the queue model advises and the step it predicts; 0 when none. */
struct ib_prefetch {
	int64_t current; /* as the run configured it, else PyTorch's default (2) */
	int64_t wanted;
	double current_ns; /* the queue model's step with the current settings */
	double step_ns;
};

/*
 * Bursty loading (batch times that vary by input-bound.burst_cv or more): the smallest
 * prefetch_factor up to input-bound.prefetch_max whose step, by the queue model, is within
 * input-bound.within_best_pct of the best. A deeper queue costs memory (a batch per worker
 * per step of depth), not cores.
 */
static struct ib_prefetch choose_prefetch(const struct det_ctx *ctx, const struct ib_facts *facts)
{
	const struct po_rules *rules = ctx->rules;
	struct ib_prefetch choice = {.current = ctx->analysis->settings.prefetch_factor > 0
						    ? ctx->analysis->settings.prefetch_factor
						    : 2};
	struct det_queue queue = {.main_ns = facts->model.main_ns,
				  .handoff_ns = facts->model.handoff_ns};
	double *services, best_ns = INFINITY, steps_ns[64];
	int64_t max = (int64_t)fmin(rules->input_bound_prefetch_max, 63);

	if (facts->workers <= 0 || isnan(facts->load_cv) ||
	    facts->load_cv < rules->input_bound_burst_cv || choice.current >= max)
		return choice;
	services = det_batch_services_create(ctx, -1, 1, &queue.batch_count);
	if (!services)
		return choice;
	queue.service_ns = services;
	choice.current_ns = det_queue_step_ns(&queue, facts->workers, choice.current);
	for (int64_t p = choice.current + 1; p <= max; p++) {
		steps_ns[p] = det_queue_step_ns(&queue, facts->workers, p);
		best_ns = fmin(best_ns, steps_ns[p]);
	}
	free(services);
	for (int64_t p = choice.current + 1; p <= max && isfinite(best_ns); p++) {
		if (steps_ns[p] <= best_ns * (1 + rules->input_bound_within_best_pct / 100)) {
			choice.wanted = p;
			choice.step_ns = steps_ns[p];
			break;
		}
	}
	return choice;
}

/*
 * The queue model's step for the advised prefetch_factor, in proportion to the measured
 * step: the model replays the recorded batch times, and what it does not model (the
 * loop's jitter, the hand-off's spread) stays as it was.
 */
static double prefetch_step_ns(const struct det_ctx *ctx, const struct ib_prefetch *choice)
{
	if (!(choice->current_ns > 0) || !(choice->step_ns > 0))
		return NAN;
	return ctx->mean_step_ns * choice->step_ns / choice->current_ns;
}

static void recommend_prefetch(struct det_ctx *ctx, struct po_finding *finding,
			       const struct ib_facts *facts, const struct ib_prefetch *choice)
{
	double step_ns = prefetch_step_ns(ctx, choice);

	if (choice->wanted <= 0 || isnan(step_ns))
		return;
	/* The measured step it scales is what other programs left of the cores. */
	det_recommend_cores(
	    ctx, finding, PO_KNOB_PREFETCH_FACTOR,
	    det_printf(ctx, "set prefetch_factor=%lld", (long long)choice->wanted),
	    det_printf(ctx,
		       "batch times vary by %.0f%%: with %lld batch(es) in flight per worker a "
		       "slow batch holds the loop up; %lld per worker cover it, at the cost of "
		       "memory for %lld more batches and no core",
		       facts->load_cv * 100, (long long)choice->current, (long long)choice->wanted,
		       (long long)((choice->wanted - choice->current) * facts->workers)),
	    det_printf(ctx,
		       "step %.2f ms -> %.2f ms (%.2fx), by replaying the recorded batch times",
		       ctx->mean_step_ns / DET_NS_PER_MS, step_ns / DET_NS_PER_MS,
		       speedup_of(ctx, step_ns)),
	    step_ns / DET_NS_PER_MS, speedup_of(ctx, step_ns));
}

static void recommend(struct det_ctx *ctx, struct po_finding *finding, const struct ib_facts *facts)
{
	struct ib_prefetch prefetch;

	if (facts->cause == PO_INPUT_CAUSE_LOADER_NOT_TRACED) {
		det_recommend(
		    ctx, finding, PO_KNOB_INSTRUMENTATION,
		    "record the loader: wrap the DataLoader with profopt.instrument(loader), "
		    "or mark load, preprocess and collate with profopt.span / "
		    "profopt_stage_begin",
		    "with its stages in the trace the analysis can tell slow loading from "
		    "too few workers or busy cores, and predict the fix",
		    "none by itself; the next analysis says what to change", NAN, NAN);
		return;
	}
	if (facts->cause == PO_INPUT_CAUSE_SLOW_H2D)
		recommend_pinned(ctx, finding, facts);
	/* The knob that helps most per core first: a deeper queue costs none. */
	prefetch = choose_prefetch(ctx, facts);
	recommend_prefetch(ctx, finding, facts, &prefetch);
	recommend_workers(ctx, finding, facts, prefetch_step_ns(ctx, &prefetch));
	if (facts->saturated)
		recommend_less_cpu(ctx, finding, facts);
	recommend_native(ctx, finding, facts);
}
