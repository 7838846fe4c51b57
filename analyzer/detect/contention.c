/*
 * contention.c: the cpu-contention detector. When the loader workers and the training loop
 * need more CPU than the machine has, the loop's own CPU work (forward, backward, optimizer)
 * runs slower than its CPU time allows. It measures how much of the step the loop loses
 * waiting for a core and who holds the cores, and answers whether fewer or more workers
 * would help with a fair-share model of the cores (docs/rules.md).
 */
#include <math.h>

#include "detect_internal.h"

/* The loop's own CPU work on the training thread. */
static const enum po_category loop_categories[] = {PO_CAT_FORWARD, PO_CAT_BACKWARD,
						   PO_CAT_OPTIMIZER};

struct cc_facts {
	int32_t cores;
	int64_t workers;     /* worker processes seen */
	int64_t threads;     /* the loop's intra-op threads (run configuration); -1 unknown */
	double loop_threads; /* the threads its CPU work runs on: threads, at most the cores */
	double runq_ns;	     /* the main thread's wait for a core per step; -1 unknown */
	double step_ns;	     /* mean clean step */
	double loop_ns;	     /* F: forward + backward + optimizer wall time per step */
	double rest_ns;	     /* the loop's other time per step, data wait excluded */
	double loop_cpu_ns;  /* c: the main process's CPU time per step */
	double loop_share;   /* c / F, at most 1: the share of a core the loop gets */
	double lost_ns;	     /* F - c: time per step the loop waits for a core */
	double lost_pct;     /* of the step */
	double main_cores;   /* CPU the main process used, in cores */
	double worker_cores; /* CPU all workers used, in cores */
	double worker_share; /* CPU over wall time of the workers' CPU stages, at most 1 */
	struct det_loader_batch batch;
	double demand_cores; /* (C + c) over the step the loop would take with a full core */
	int64_t best_workers;
	double workers_step_ns; /* predicted with best_workers, scaled to the measured step */
	/* The loop's threads and the workers within the cores: threads_workers + best_threads. */
	int64_t best_threads;
	int64_t threads_workers;
	double threads_step_ns; /* NaN: not predicted (threads unknown, or they fit already) */
};

static double ratio_of(double part, double whole)
{
	return whole > 0 ? part / whole : 0;
}

/* CPU the process used over its life, in cores; -1 without two CPU counter samples. */
static double process_cores(const struct po_process *process)
{
	if (!process || process->cpu_first_ns < 0 ||
	    process->cpu_last_ns <= process->cpu_first_ns || process->last_ns <= process->first_ns)
		return -1;
	return (double)(process->cpu_last_ns - process->cpu_first_ns) /
	       (double)(process->last_ns - process->first_ns);
}

static const struct po_process *find_process(const struct po_analysis *analysis, int32_t pid)
{
	for (size_t i = 0; i < analysis->process_count; i++) {
		if (analysis->processes[i].pid == pid)
			return &analysis->processes[i];
	}
	return NULL;
}

/* A worker's cores from its process CPU counter, else from its stages' CPU time. */
static double worker_cores(const struct po_analysis *analysis, const struct po_worker *worker)
{
	double cores = process_cores(find_process(analysis, worker->pid));
	double cpu_ns = 0;

	if (cores >= 0)
		return cores;
	for (int s = 0; s < PO_STAGE_COUNT; s++)
		cpu_ns += worker->stage_cpu_ns[s] > 0 ? (double)worker->stage_cpu_ns[s] : 0;
	return ratio_of(cpu_ns, (double)(worker->last_ns - worker->first_ns));
}

/*
 * Cores the workers used together while any was alive: each worker's cores weighted by its
 * lifetime, over the time workers were alive. Workers that replaced each other (one set per
 * epoch) do not add up as if they had run at once.
 */
static double workers_cores(const struct po_analysis *analysis)
{
	double core_ns = 0, alive_ns = (double)analysis->worker_alive_ns, sum = 0;

	for (size_t i = 0; i < analysis->worker_count; i++) {
		const struct po_worker *worker = &analysis->workers[i];
		double cores = worker_cores(analysis, worker);

		sum += cores;
		core_ns += cores * (double)(worker->last_ns - worker->first_ns);
	}
	return alive_ns > 0 ? core_ns / alive_ns : sum;
}

/*
 * The main process's CPU time per step, all of it charged to the steps: CPU it spent
 * outside them (start-up, evaluation) only makes the loop look less starved, whereas a rate
 * over its life would be diluted by idle start-up and make it look more starved.
 */
static double main_cpu_per_step(const struct po_analysis *analysis)
{
	const struct po_process *main = det_main_process(analysis);

	return (double)(main->cpu_last_ns - main->cpu_first_ns) / (double)analysis->step_count;
}

/* The main thread's measured wait for a core per step, all of it charged to the steps. */
static double main_runq_per_step(const struct po_analysis *analysis)
{
	const struct po_process *main = det_main_process(analysis);

	if (main->runq_first_ns < 0 || main->runq_last_ns < main->runq_first_ns)
		return -1;
	return (double)(main->runq_last_ns - main->runq_first_ns) / (double)analysis->step_count;
}

/*
 * The time per step the loop waits for a core, and its share of its cores. The loop's CPU
 * work runs on its intra-op threads (torch.set_num_threads, the run configuration's
 * torch_num_threads): with t threads at full speed, c of CPU takes c / t, so it gets
 * s = c / (t F) of its cores. Threads that wait for each other and for a core also spin,
 * which CPU time cannot tell from work: for a loop of several threads (or of unknown
 * threads using more than a core) the main thread's measured run-queue wait bounds the
 * loss from below.
 */
static void measure_loss(struct cc_facts *facts)
{
	bool several =
	    facts->loop_threads > 1 || (facts->threads < 0 && facts->loop_cpu_ns > facts->loop_ns);

	facts->loop_share = fmin(1, facts->loop_cpu_ns / (facts->loop_threads * facts->loop_ns));
	facts->lost_ns = facts->loop_ns * (1 - facts->loop_share);
	if (several && facts->runq_ns > facts->lost_ns) {
		facts->lost_ns = fmin(facts->loop_ns, facts->runq_ns);
		facts->loop_share = 1 - facts->lost_ns / facts->loop_ns;
	}
}

/* False when the trace lacks what the detector needs: then it stays silent. */
static bool measure(const struct det_ctx *ctx, struct cc_facts *facts)
{
	const struct po_analysis *analysis = ctx->analysis;
	const double *mean = ctx->category_mean_ns;

	facts->cores = analysis->cpu_count;
	facts->workers = det_live_workers(analysis);
	facts->step_ns = ctx->mean_step_ns;
	facts->main_cores = process_cores(det_main_process(analysis));
	if (facts->cores <= 0 || facts->workers <= 0 || facts->main_cores < 0 ||
	    !det_loader_batch(ctx, &facts->batch))
		return false;
	for (size_t i = 0; i < sizeof(loop_categories) / sizeof(loop_categories[0]); i++)
		facts->loop_ns += mean[loop_categories[i]];
	if (facts->loop_ns <= 0)
		return false;
	facts->threads = analysis->settings.num_threads >= 1 ? analysis->settings.num_threads : -1;
	facts->loop_threads = facts->threads >= 1 ? fmin((double)facts->threads, facts->cores) : 1;
	facts->rest_ns = fmax(0, facts->step_ns - facts->loop_ns - mean[PO_CAT_DATA_WAIT]);
	facts->loop_cpu_ns = main_cpu_per_step(analysis);
	facts->runq_ns = main_runq_per_step(analysis);
	measure_loss(facts);
	facts->lost_pct = 100 * facts->lost_ns / facts->step_ns;
	facts->worker_cores = workers_cores(analysis);
	facts->worker_share =
	    facts->batch.cpu_stage_cpu_ns > 0
		? fmin(1, facts->batch.cpu_stage_cpu_ns / facts->batch.cpu_stage_ns)
		: 1;
	facts->demand_cores =
	    ratio_of(facts->batch.cpu_ns + facts->loop_cpu_ns, facts->step_ns - facts->lost_ns);
	return true;
}

/*
 * The model's step with workers processes on saturated cores: the loop's own time with a
 * full core, the loader's time per batch with every runnable thread (the loop and the
 * workers) at its fair share of the cores, and the CPU limit of the cores, whichever is
 * longest (docs/rules.md).
 */
static double step_with(const struct cc_facts *facts, int64_t workers)
{
	const struct det_loader_batch *batch = &facts->batch;
	double fair = fmin(1, (double)facts->cores / ((double)workers + facts->loop_threads));
	double loop_ns = facts->rest_ns + facts->loop_cpu_ns / facts->loop_threads;
	double batch_ns =
	    (batch->service_ns - batch->cpu_stage_ns + batch->cpu_stage_cpu_ns / fair) /
	    (double)workers;
	double limit_ns = (batch->cpu_ns + facts->loop_cpu_ns) / (double)facts->cores;

	return fmax(loop_ns, fmax(batch_ns, limit_ns));
}

/* The fewest workers (up to the current ones) whose step is within the rule of the best. */
static void choose_workers(const struct det_ctx *ctx, struct cc_facts *facts)
{
	double best_ns = INFINITY, now_ns = step_with(facts, facts->workers);

	for (int64_t n = 1; n <= facts->workers; n++)
		best_ns = fmin(best_ns, step_with(facts, n));
	facts->best_workers = facts->workers;
	for (int64_t n = 1; n <= facts->workers; n++) {
		if (step_with(facts, n) <=
		    best_ns * (1 + ctx->rules->input_bound_within_best_pct / 100)) {
			facts->best_workers = n;
			break;
		}
	}
	facts->workers_step_ns = facts->step_ns * step_with(facts, facts->best_workers) / now_ns;
}

/*
 * The loop's threads and the workers oversubscribe the cores: with n workers and K - n
 * threads (at most as many as now) every thread has a core; only a shorter step is advised. The
 * loop then runs as it would without its wait for a core, and a worker makes a batch in its
 * loading's CPU time plus what of its time off CPU the fair share f = min(1, K / (workers +
 * threads)) it had does not explain (I/O): the step is the longer of the two. The fewest workers
 * whose step is within input-bound.within_best_pct of the best.
 */
static void choose_threads(const struct det_ctx *ctx, struct cc_facts *facts)
{
	const struct det_loader_batch *batch = &facts->batch;
	double loop_ns = facts->step_ns - facts->lost_ns, best_ns = INFINITY;
	double fair = fmin(1, facts->cores / ((double)facts->workers + facts->loop_threads));
	double own_ns = batch->cpu_ns + fmax(0, batch->service_ns - batch->cpu_ns / fair);
	double steps_ns[64];
	int64_t most = facts->cores - 1 < 64 ? facts->cores - 1 : 64;

	facts->threads_step_ns = NAN;
	facts->best_threads =
	    facts->cores - facts->best_workers > 1 ? facts->cores - facts->best_workers : 1;
	if (facts->threads < 1 || most < 1 ||
	    facts->loop_threads + (double)facts->workers <= facts->cores)
		return;
	for (int64_t n = 1; n <= most; n++) {
		steps_ns[n - 1] = fmax(loop_ns, own_ns / (double)n);
		best_ns = fmin(best_ns, steps_ns[n - 1]);
	}
	for (int64_t n = 1; n <= most; n++) {
		if (steps_ns[n - 1] <=
		    best_ns * (1 + ctx->rules->input_bound_within_best_pct / 100)) {
			if (!(steps_ns[n - 1] < facts->step_ns))
				return; /* no gain: advised without a prediction */
			facts->threads_workers = n;
			facts->best_threads =
			    facts->cores - n < facts->threads ? facts->cores - n : facts->threads;
			facts->threads_step_ns = steps_ns[n - 1];
			return;
		}
	}
}

/*
 * The loop waits for a core, the workers' CPU stages wait too (so no core is idle), and the
 * loader and the loop would need the cores if the loop ran at full speed.
 */
static bool contended(const struct det_ctx *ctx, const struct cc_facts *facts)
{
	const struct po_rules *rules = ctx->rules;

	return 100 * facts->loop_share <= rules->cpu_contention_loop_share_pct &&
	       facts->lost_pct >= rules->cpu_contention_warning_pct &&
	       facts->worker_share * rules->input_bound_starved_ratio <= 1 &&
	       facts->demand_cores >= facts->cores * rules->input_bound_saturated_pct / 100;
}

static void add_evidence(struct det_ctx *ctx, struct po_finding *finding,
			 const struct cc_facts *facts)
{
	det_ev_int(ctx, finding, PO_EVIDENCE_CPU_COUNT, facts->cores);
	det_ev_int(ctx, finding, PO_EVIDENCE_NUM_WORKERS, facts->workers);
	det_ev_int(ctx, finding, PO_EVIDENCE_STEPS, (int64_t)ctx->clean_count);
	det_ev_number(ctx, finding, PO_EVIDENCE_STEP_MS, facts->step_ns / DET_NS_PER_MS);
	det_ev_number(ctx, finding, PO_EVIDENCE_LOOP_MS_PER_STEP, facts->loop_ns / DET_NS_PER_MS);
	det_ev_number(ctx, finding, PO_EVIDENCE_LOOP_CPU_MS_PER_STEP,
		      facts->loop_cpu_ns / DET_NS_PER_MS);
	det_ev_number(ctx, finding, PO_EVIDENCE_LOOP_CPU_SHARE_PCT, 100 * facts->loop_share);
	det_ev_number(ctx, finding, PO_EVIDENCE_LOST_MS_PER_STEP, facts->lost_ns / DET_NS_PER_MS);
	det_ev_number(ctx, finding, PO_EVIDENCE_LOST_SHARE_PCT, facts->lost_pct);
	det_ev_number(ctx, finding, PO_EVIDENCE_MAIN_CPU_CORES, facts->main_cores);
	det_ev_number(ctx, finding, PO_EVIDENCE_WORKER_CPU_CORES, facts->worker_cores);
	det_ev_number(ctx, finding, PO_EVIDENCE_TRACED_CPU_CORES,
		      facts->main_cores + facts->worker_cores);
	det_ev_number(ctx, finding, PO_EVIDENCE_WORKER_CPU_CORES_EACH,
		      facts->worker_cores / (double)facts->workers);
	det_ev_number(ctx, finding, PO_EVIDENCE_WORKER_CPU_SHARE_PCT, 100 * facts->worker_share);
	det_ev_number(ctx, finding, PO_EVIDENCE_CPU_MS_PER_BATCH,
		      facts->batch.cpu_ns / DET_NS_PER_MS);
	det_ev_number(ctx, finding, PO_EVIDENCE_DEMAND_CORES, facts->demand_cores);
	det_ev_int(ctx, finding, PO_EVIDENCE_RECOMMENDED_NUM_WORKERS, facts->best_workers);
	det_ev_number(ctx, finding, PO_EVIDENCE_NUM_WORKERS_STEP_MS,
		      ctx->machine_busy ? NAN : facts->workers_step_ns / DET_NS_PER_MS);
	if (facts->threads >= 1)
		det_ev_int(ctx, finding, PO_EVIDENCE_LOOP_THREADS, facts->threads);
	if (facts->runq_ns >= 0)
		det_ev_number(ctx, finding, PO_EVIDENCE_MAIN_RUNQ_MS_PER_STEP,
			      facts->runq_ns / DET_NS_PER_MS);
	det_ev_int(ctx, finding, PO_EVIDENCE_RECOMMENDED_THREADS, facts->best_threads);
	if (!isnan(facts->threads_step_ns))
		det_ev_number(ctx, finding, PO_EVIDENCE_THREADS_STEP_MS,
			      ctx->machine_busy ? NAN : facts->threads_step_ns / DET_NS_PER_MS);
	/* The gain if the loop had a core of its own: the time it loses now. */
	det_ev_number(ctx, finding, PO_EVIDENCE_PREDICTED_STEP_MS,
		      ctx->machine_busy ? NAN : (facts->step_ns - facts->lost_ns) / DET_NS_PER_MS);
	det_ev_number(ctx, finding, PO_EVIDENCE_PREDICTED_SPEEDUP,
		      ctx->machine_busy ? NAN : facts->step_ns / (facts->step_ns - facts->lost_ns));
}

/* The fewest workers that keep the step: more cannot help, the cores limit the step. */
static void recommend_workers(struct det_ctx *ctx, struct po_finding *finding,
			      const struct cc_facts *facts)
{
	double step_ns = facts->workers_step_ns;

	det_recommend_cores(
	    ctx, finding, PO_KNOB_NUM_WORKERS,
	    det_printf(ctx, "%s num_workers=%lld",
		       facts->best_workers < facts->workers ? "set" : "keep",
		       (long long)facts->best_workers),
	    det_printf(ctx,
		       "the %d cores, not the workers, limit the step: more workers only take "
		       "CPU from the loop, and %lld keep the loader within %.0f%% of its best "
		       "on these cores",
		       facts->cores, (long long)facts->best_workers,
		       ctx->rules->input_bound_within_best_pct),
	    det_printf(ctx, "step %.2f ms -> %.2f ms (%.2fx); no gain from more workers",
		       facts->step_ns / DET_NS_PER_MS, step_ns / DET_NS_PER_MS,
		       facts->step_ns / step_ns),
	    step_ns / DET_NS_PER_MS, facts->step_ns / step_ns);
}

/*
 * With the loop's threads known: as many threads as the cores leave beside the fewest
 * workers that keep up, with the step that gives (choose_threads).
 */
static void recommend_fitting_threads(struct det_ctx *ctx, struct po_finding *finding,
				      const struct cc_facts *facts)
{
	det_recommend_cores(
	    ctx, finding, PO_KNOB_THREADS,
	    det_printf(ctx,
		       "call torch.set_num_threads(%lld) in the training process, with "
		       "num_workers=%lld",
		       (long long)facts->best_threads, (long long)facts->threads_workers),
	    det_printf(ctx,
		       "the loop's %lld intra-op threads and %lld workers are %lld busy threads "
		       "on %d cores: they preempt each other, and the loop waits %.2f ms per "
		       "step for a core; %lld thread(s) and %lld worker(s) fit the cores",
		       (long long)facts->threads, (long long)facts->workers,
		       (long long)facts->threads + (long long)facts->workers, facts->cores,
		       facts->lost_ns / DET_NS_PER_MS, (long long)facts->best_threads,
		       (long long)facts->threads_workers),
	    det_printf(ctx, "step %.2f ms -> %.2f ms (%.2fx)", facts->step_ns / DET_NS_PER_MS,
		       facts->threads_step_ns / DET_NS_PER_MS,
		       facts->step_ns / facts->threads_step_ns),
	    facts->threads_step_ns / DET_NS_PER_MS, facts->step_ns / facts->threads_step_ns);
}

static void recommend_threads(struct det_ctx *ctx, struct po_finding *finding,
			      const struct cc_facts *facts)
{
	int64_t threads = facts->best_threads;

	if (!isnan(facts->threads_step_ns)) {
		recommend_fitting_threads(ctx, finding, facts);
		return;
	}
	det_recommend(ctx, finding, PO_KNOB_THREADS,
		      det_printf(ctx,
				 "call torch.set_num_threads(%lld) (or set OMP_NUM_THREADS=%lld) "
				 "in the training process",
				 (long long)threads, (long long)threads),
		      det_printf(ctx,
				 "the loop's intra-op threads and %lld workers then fit in the "
				 "%d cores instead of preempting each other",
				 (long long)facts->best_workers, facts->cores),
		      "fewer preemptions of the loop; not predicted", NAN, NAN);
}

static void recommend_offload(struct det_ctx *ctx, struct po_finding *finding,
			      const struct cc_facts *facts)
{
	double step_ns = facts->step_ns - facts->lost_ns;

	det_recommend_cores(
	    ctx, finding, PO_KNOB_TRANSFORM,
	    "move CPU preprocessing off the loop's cores: run the transforms on the GPU, cache "
	    "their output, or pin the workers to other cores (os.sched_setaffinity in "
	    "worker_init_fn)",
	    det_printf(ctx,
		       "the workers spend %.2f ms of CPU per batch and hold %.2f cores while "
		       "the loop gets %.0f%% of one",
		       facts->batch.cpu_ns / DET_NS_PER_MS, facts->worker_cores,
		       100 * facts->loop_share),
	    det_printf(ctx, "at best step %.2f ms (%.2fx) with the loop on a core of its own",
		       step_ns / DET_NS_PER_MS, facts->step_ns / step_ns),
	    step_ns / DET_NS_PER_MS, facts->step_ns / step_ns);
}

/*
 * The loop and the workers both wait for a core, so a core they do not use is held by
 * another program (or kept from them by a CPU affinity or quota): said so, not hidden.
 */
static const char *others_sentence(struct det_ctx *ctx, const struct cc_facts *facts)
{
	double traced = facts->main_cores + facts->worker_cores;

	if (traced >= facts->cores * ctx->rules->input_bound_saturated_pct / 100)
		return "";
	if (!isnan(ctx->others_cores))
		return det_printf(ctx,
				  " The traced processes use %.2f of the %d cores, other programs "
				  "%.2f.",
				  traced, facts->cores, ctx->others_cores);
	return det_printf(ctx,
			  " The traced processes use %.2f of the %d cores: other programs (or a "
			  "CPU affinity or quota) hold the rest.",
			  traced, facts->cores);
}

enum po_status det_cpu_contention(struct det_ctx *ctx)
{
	const struct po_rules *rules = ctx->rules;
	struct cc_facts facts = {0};
	struct po_finding *finding;

	if ((double)ctx->clean_count < rules->cpu_contention_min_steps || ctx->mean_step_ns <= 0 ||
	    !measure(ctx, &facts) || !contended(ctx, &facts))
		return PO_STATUS_OK;
	choose_workers(ctx, &facts);
	choose_threads(ctx, &facts);
	finding = det_finding_add(
	    ctx, PO_FINDING_CPU_CONTENTION,
	    facts.lost_pct >= rules->cpu_contention_critical_pct ? PO_SEVERITY_CRITICAL
								 : PO_SEVERITY_WARNING,
	    det_clamp(0.6 + 0.2 * facts.lost_pct / fmax(1, rules->cpu_contention_warning_pct), 0,
		      0.95));
	if (!finding)
		return PO_STATUS_NOMEM;
	det_summary(ctx, finding,
		    "The training loop%s waits for CPU held by %lld loader workers: forward, "
		    "backward and optimizer take %.2f ms per step but get %.0f%% of %s, so "
		    "the loop loses %.2f ms (%.1f%%) of each %.2f ms step. The workers use %.2f "
		    "cores; at full speed the loader and the loop would need %.2f of the %d "
		    "cores.%s",
		    facts.loop_threads > 1
			? det_printf(ctx, " (%lld intra-op threads)", (long long)facts.threads)
			: "",
		    (long long)facts.workers, facts.loop_ns / DET_NS_PER_MS, 100 * facts.loop_share,
		    facts.loop_threads > 1 ? "their cores" : "a core",
		    facts.lost_ns / DET_NS_PER_MS, facts.lost_pct, facts.step_ns / DET_NS_PER_MS,
		    facts.worker_cores, facts.demand_cores, facts.cores,
		    others_sentence(ctx, &facts));
	add_evidence(ctx, finding, &facts);
	recommend_offload(ctx, finding, &facts);
	recommend_workers(ctx, finding, &facts);
	recommend_threads(ctx, finding, &facts);
	return PO_STATUS_OK;
}
