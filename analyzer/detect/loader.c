/*
 * loader.c: two costs of a multi-process data loader that are neither slow loading nor too
 * few workers. loader-handoff: the loop receives batches that were already ready in their
 * worker and still waits for them (unpickling, shared-memory handles, pinning). And
 * worker-restart: non-persistent workers (PyTorch's default) start again at every epoch,
 * and the loop waits while they do.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "detect_internal.h"

/* ---- loader-handoff ---- */

static void recommend_handoff(struct det_ctx *ctx, struct po_finding *finding, double handoff_ns)
{
	const char *bound = det_printf(ctx,
				       "up to %.2f ms per step (the whole hand-off); not "
				       "predicted",
				       handoff_ns / DET_NS_PER_MS);

	det_recommend(ctx, finding, PO_KNOB_SHARING_STRATEGY,
		      "call torch.multiprocessing.set_sharing_strategy(\"file_system\") at the "
		      "start of the training script",
		      "with the default file_descriptor strategy every tensor of a batch is "
		      "received through its own file descriptor, passed over a socket from the "
		      "worker",
		      bound, NAN, NAN);
	det_recommend(ctx, finding, PO_KNOB_BATCH_LAYOUT,
		      "return fewer, larger tensors per batch (stack per-sample tensors in "
		      "collate_fn, keep labels and small fields in one tensor)",
		      "the hand-off costs per tensor: each one is a shared-memory segment the "
		      "loop has to map",
		      bound, NAN, NAN);
	if (ctx->analysis->settings.pin_memory == 1 && ctx->analysis->settings.device &&
	    strcasecmp(ctx->analysis->settings.device, "cpu") == 0)
		det_recommend(ctx, finding, PO_KNOB_PIN_MEMORY, "set pin_memory=False",
			      "the run trains on the CPU: pinning copies every batch for no "
			      "transfer",
			      bound, NAN, NAN);
}

/* input-bound blames saturated cores: the slow hand-off is theirs, said there. */
static bool cores_blamed(const struct det_ctx *ctx)
{
	return det_find(ctx, PO_FINDING_INPUT_BOUND) &&
	       ctx->diagnosis->input_cause == PO_INPUT_CAUSE_CPU_SATURATED;
}

/*
 * The part of the hand-off that was the loop's wait for a core: the main thread is runnable
 * through its step but for its data wait, and its measured run-queue wait falls on the
 * hand-off in proportion to the hand-off's share of that time. 0 without the measurement.
 */
static double handoff_core_wait_ns(const struct det_ctx *ctx, double handoff_ns)
{
	double runq_ns = det_main_runq_per_step(ctx);
	double runnable_ns = ctx->mean_step_ns - ctx->category_mean_ns[PO_CAT_DATA_WAIT];

	if (runq_ns <= 0 || runnable_ns <= 0)
		return 0;
	return fmin(handoff_ns, runq_ns * handoff_ns / runnable_ns);
}

enum po_status det_loader_handoff(struct det_ctx *ctx)
{
	const struct po_rules *rules = ctx->rules;
	double handoff_ns = ctx->category_mean_ns[PO_CAT_HANDOFF];
	double core_wait_ns, own_ns, share_pct, busy_pct;
	enum po_severity severity;
	struct po_finding *finding;
	const char *core_wait = "";

	if (ctx->analysis->worker_count == 0 ||
	    (double)ctx->clean_count < rules->handoff_min_steps || ctx->mean_step_ns <= 0 ||
	    handoff_ns <= 0 || cores_blamed(ctx))
		return PO_STATUS_OK;
	/*
	 * What the hand-off itself costs, without the loop's wait for a core: beside other
	 * programs the hand-off doubled (workload.busy_io_workers: 6.4 ms a step against 3.5
	 * quiet), and no sharing strategy or batch layout gives back a wait for a core.
	 */
	core_wait_ns = handoff_core_wait_ns(ctx, handoff_ns);
	own_ns = handoff_ns - core_wait_ns;
	share_pct = 100 * own_ns / ctx->mean_step_ns;
	if (share_pct < rules->handoff_warning_pct)
		return PO_STATUS_OK;
	severity =
	    share_pct >= rules->handoff_critical_pct ? PO_SEVERITY_CRITICAL : PO_SEVERITY_WARNING;
	finding = det_finding_add(ctx, PO_FINDING_LOADER_HANDOFF, severity, 0.9);
	if (!finding)
		return PO_STATUS_NOMEM;
	busy_pct = det_workers_busy_pct(ctx->analysis);
	if (core_wait_ns >= DET_NS_PER_MS / 100)
		core_wait = det_printf(ctx,
				       " (%.2f ms more of the hand-off was the loop's wait for a "
				       "core, not counted here)",
				       core_wait_ns / DET_NS_PER_MS);
	det_summary(
	    ctx, finding,
	    "The training loop spends %.1f%% of each steady step (%.2f ms of %.2f ms) receiving "
	    "batches that were already ready in their worker%s: the hand-off from the %lld "
	    "workers (busy %.0f%% of their time) to the loop, not the loading, costs the "
	    "time.",
	    share_pct, own_ns / DET_NS_PER_MS, ctx->mean_step_ns / DET_NS_PER_MS,
	    core_wait ? core_wait : "", (long long)det_live_workers(ctx->analysis),
	    isnan(busy_pct) ? 0 : busy_pct);
	det_ev_number(ctx, finding, PO_EVIDENCE_HANDOFF_MS_PER_STEP, own_ns / DET_NS_PER_MS);
	det_ev_number(ctx, finding, PO_EVIDENCE_HANDOFF_CORE_WAIT_MS_PER_STEP,
		      core_wait_ns / DET_NS_PER_MS);
	det_ev_number(ctx, finding, PO_EVIDENCE_HANDOFF_SHARE_PCT, share_pct);
	det_ev_number(ctx, finding, PO_EVIDENCE_DATA_WAIT_MS_PER_STEP,
		      ctx->category_mean_ns[PO_CAT_DATA_WAIT] / DET_NS_PER_MS);
	det_ev_number(ctx, finding, PO_EVIDENCE_STEP_MS, ctx->mean_step_ns / DET_NS_PER_MS);
	det_ev_int(ctx, finding, PO_EVIDENCE_NUM_WORKERS, det_live_workers(ctx->analysis));
	if (!isnan(busy_pct))
		det_ev_number(ctx, finding, PO_EVIDENCE_WORKER_BUSY_PCT, busy_pct);
	det_ev_int(ctx, finding, PO_EVIDENCE_STEPS, (int64_t)ctx->clean_count);
	recommend_handoff(ctx, finding, own_ns);
	return PO_STATUS_OK;
}

/* ---- worker-restart ---- */

struct restarts {
	int64_t epochs;	    /* epoch starts after the first that waited for new workers */
	double excess_ns;   /* the time the loop lost at them */
	double run_ns;	    /* the range's first step begin to its last step end */
	int64_t step_count; /* steps of the analysis's range (all of the run offline) */
};

/* Load, preprocess and collate time of the batch a step consumed, in its worker. */
static double batch_service_ns(const struct po_step *step)
{
	return (double)((step->load_ns > 0 ? step->load_ns : 0) +
			(step->preprocess_ns > 0 ? step->preprocess_ns : 0) +
			(step->collate_ns > 0 ? step->collate_ns : 0));
}

/*
 * At each epoch start after the first, the first batch was ready this long after the
 * previous epoch's last step ended, beyond the time its worker spent making it: the time the
 * new workers took to start (fork, worker set-up) before they could load. A persistent
 * worker starts on that batch at once (measured on PyTorch: about 1 ms from the epoch's end
 * to its first batch, beyond making it). The first epoch is left out: persistent workers
 * start once too.
 */
static void measure_restarts(const struct po_analysis *analysis, struct restarts *out)
{
	struct po_step previous = po_analysis_step(analysis, analysis->step_first), step;

	out->run_ns =
	    (double)(po_analysis_step(analysis, analysis->step_end - 1).end_ns - previous.begin_ns);
	out->step_count = (int64_t)(analysis->step_end - analysis->step_first);
	for (size_t i = analysis->step_first + 1; i < analysis->step_end; i++, previous = step) {
		double excess;

		step = po_analysis_step(analysis, i);
		if (step.epoch == previous.epoch || step.epoch < 0 || step.ready_ns < 0 ||
		    step.worker_pid < 0)
			continue;
		excess = (double)(step.ready_ns - previous.end_ns) - batch_service_ns(&step);
		if (excess > 0) {
			out->excess_ns += excess;
			out->epochs++;
		}
	}
}

static bool workers_persistent(const struct po_analysis *analysis)
{
	return analysis->settings.persistent_workers == 1;
}

static void add_restart_evidence(struct det_ctx *ctx, struct po_finding *finding,
				 const struct restarts *restarts, double saved_step_ns)
{
	det_ev_int(ctx, finding, PO_EVIDENCE_WORKER_GENERATIONS, ctx->analysis->worker_generations);
	det_ev_int(ctx, finding, PO_EVIDENCE_EPOCHS_RESTARTED, restarts->epochs);
	det_ev_number(ctx, finding, PO_EVIDENCE_RESTART_MS_PER_EPOCH,
		      restarts->excess_ns / (double)restarts->epochs / DET_NS_PER_MS);
	det_ev_number(ctx, finding, PO_EVIDENCE_LOST_MS, restarts->excess_ns / DET_NS_PER_MS);
	det_ev_number(ctx, finding, PO_EVIDENCE_LOST_SHARE_PCT,
		      100 * restarts->excess_ns / restarts->run_ns);
	det_ev_number(ctx, finding, PO_EVIDENCE_RUN_STEP_MS,
		      restarts->run_ns / (double)restarts->step_count / DET_NS_PER_MS);
	det_ev_number(ctx, finding, PO_EVIDENCE_PREDICTED_RUN_STEP_MS,
		      saved_step_ns / DET_NS_PER_MS);
	det_ev_int(ctx, finding, PO_EVIDENCE_NUM_WORKERS, det_live_workers(ctx->analysis));
}

enum po_status det_worker_restart(struct det_ctx *ctx)
{
	const struct po_analysis *analysis = ctx->analysis;
	struct restarts restarts = {0};
	double lost_pct, run_step_ns, saved_step_ns;
	struct po_finding *finding;

	if (analysis->worker_count == 0 || workers_persistent(analysis) ||
	    (double)(analysis->worker_generations - 1) < ctx->rules->worker_restart_min_epochs ||
	    analysis->step_end < analysis->step_first + 2)
		return PO_STATUS_OK;
	measure_restarts(analysis, &restarts);
	if (restarts.run_ns <= 0 || restarts.epochs == 0)
		return PO_STATUS_OK;
	lost_pct = 100 * restarts.excess_ns / restarts.run_ns;
	if (lost_pct < ctx->rules->worker_restart_min_pct)
		return PO_STATUS_OK;
	finding = det_finding_add(ctx, PO_FINDING_WORKER_RESTART,
				  lost_pct >= 4 * ctx->rules->worker_restart_min_pct
				      ? PO_SEVERITY_CRITICAL
				      : PO_SEVERITY_WARNING,
				  0.9);
	if (!finding)
		return PO_STATUS_NOMEM;
	run_step_ns = restarts.run_ns / (double)restarts.step_count;
	saved_step_ns = (restarts.run_ns - restarts.excess_ns) / (double)restarts.step_count;
	det_summary(ctx, finding,
		    "The data-loader workers start again at every epoch (%lld sets of workers): "
		    "%lld epoch starts waited %.1f ms each for new workers, %.1f%% of the run's "
		    "step time.",
		    (long long)analysis->worker_generations, (long long)restarts.epochs,
		    restarts.excess_ns / (double)restarts.epochs / DET_NS_PER_MS, lost_pct);
	add_restart_evidence(ctx, finding, &restarts, saved_step_ns);
	det_recommend(ctx, finding, PO_KNOB_PERSISTENT_WORKERS, "set persistent_workers=True",
		      "the workers are new processes at every epoch: they fork, run "
		      "worker_init_fn and fill the prefetch queue again before the loop gets a "
		      "batch",
		      det_printf(ctx,
				 "%.1f ms saved per epoch; over the run, the mean step %.2f ms -> "
				 "%.2f ms (%.2fx), epoch starts included",
				 restarts.excess_ns / (double)restarts.epochs / DET_NS_PER_MS,
				 run_step_ns / DET_NS_PER_MS, saved_step_ns / DET_NS_PER_MS,
				 run_step_ns / saved_step_ns),
		      saved_step_ns / DET_NS_PER_MS, run_step_ns / saved_step_ns);
	return PO_STATUS_OK;
}
