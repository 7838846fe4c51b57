/*
 * imbalance.c: the loader-imbalance detector. A DataLoader hands its batches to the loop in
 * order, batch i from worker i mod num_workers, so one worker much slower than the others
 * paces the loop whatever the others do, and more workers only dilute it. It names the
 * slow worker, its slowest stage and that stage's label, and predicts the step with that
 * worker as fast as the others by the queue model of whatif.h.
 */
#include <math.h>
#include <stdlib.h>

#include "whatif.h"

struct imbalance {
	const struct po_worker *slow; /* weak: the analysis's */
	double slow_ns;		      /* its making time per batch (load + preprocess + collate) */
	double others_ns;	      /* the other workers' together, per batch */
	enum po_stage stage;	      /* its slowest stage */
	const char *label;	      /* weak: that stage's costliest label in the workers */
	double main_ns;		      /* the loop's own time per step */
	double handoff_ns;	      /* taking a ready batch, per step */
	double balanced_ns;	      /* the step with it as fast as the others */
	double lost_ns;		      /* the measured step less balanced_ns */
};

static double making_ns(const struct po_worker *worker)
{
	return (double)(worker->stage_ns[PO_STAGE_LOAD] + worker->stage_ns[PO_STAGE_PREPROCESS] +
			worker->stage_ns[PO_STAGE_COLLATE]);
}

/* The slowest worker per batch against the others together; false without two of them. */
static bool find_slow(const struct det_ctx *ctx, struct imbalance *found)
{
	const struct po_analysis *analysis = ctx->analysis;
	double others_ns = 0, others_batches = 0;

	for (size_t i = 0; i < analysis->worker_count; i++) {
		const struct po_worker *worker = &analysis->workers[i];

		if ((double)worker->batches < ctx->rules->loader_imbalance_min_batches)
			continue;
		if (!found->slow || making_ns(worker) / (double)worker->batches > found->slow_ns)
			found->slow = worker;
		if (found->slow == worker)
			found->slow_ns = making_ns(worker) / (double)worker->batches;
	}
	for (size_t i = 0; found->slow && i < analysis->worker_count; i++) {
		const struct po_worker *worker = &analysis->workers[i];

		if (worker == found->slow ||
		    (double)worker->batches < ctx->rules->loader_imbalance_min_batches)
			continue;
		others_ns += making_ns(worker);
		others_batches += (double)worker->batches;
	}
	if (others_batches <= 0 || others_ns <= 0)
		return false;
	found->others_ns = others_ns / others_batches;
	return true;
}

static const char *stage_label(const struct po_analysis *analysis, enum po_stage stage)
{
	for (size_t i = 0; i < analysis->label_stat_count; i++) {
		const struct po_label_stat *stat = &analysis->label_stats[i];

		if (stat->role == PO_ROLE_WORKER && stat->stage == stage && stat->label &&
		    stat->label[0])
			return stat->label;
	}
	return "";
}

/*
 * The step with the slow worker's batches as fast as the others', by the queue model, in
 * proportion to the measured step (the model replays the recorded batch times; what it
 * does not model stays as it was); NaN when the model cannot run.
 */
static double balanced_step_ns(const struct det_ctx *ctx, const struct imbalance *found)
{
	const struct po_analysis *analysis = ctx->analysis;
	int64_t prefetch = analysis->settings.prefetch_factor > 0
			       ? analysis->settings.prefetch_factor
			       : 2; /* PyTorch's default */
	int64_t workers = det_configured_workers(analysis);
	struct det_queue queue = {.main_ns = found->main_ns, .handoff_ns = found->handoff_ns};
	double *now, *balanced, now_ns, balanced_ns;

	now = det_batch_services_create(ctx, -1, 1, &queue.batch_count);
	balanced = det_batch_services_create(ctx, found->slow->pid,
					     found->others_ns / found->slow_ns, &queue.batch_count);
	queue.service_ns = now;
	now_ns = now && balanced ? det_queue_step_ns(&queue, workers, prefetch) : NAN;
	queue.service_ns = balanced;
	balanced_ns = now && balanced ? det_queue_step_ns(&queue, workers, prefetch) : NAN;
	free(now);
	free(balanced);
	return now_ns > 0 ? ctx->mean_step_ns * balanced_ns / now_ns : NAN;
}

static bool measure(const struct det_ctx *ctx, struct imbalance *found)
{
	const struct po_worker *slow;

	if (!find_slow(ctx, found) ||
	    found->slow_ns < ctx->rules->loader_imbalance_ratio * found->others_ns)
		return false;
	slow = found->slow;
	found->stage = PO_STAGE_LOAD;
	for (int s = PO_STAGE_PREPROCESS; s <= PO_STAGE_COLLATE; s++) {
		if (slow->stage_ns[s] > slow->stage_ns[found->stage])
			found->stage = (enum po_stage)s;
	}
	found->label = stage_label(ctx->analysis, found->stage);
	found->handoff_ns = ctx->category_mean_ns[PO_CAT_HANDOFF];
	found->main_ns = fmax(0, ctx->mean_step_ns - ctx->category_mean_ns[PO_CAT_DATA_WAIT] -
				     found->handoff_ns);
	found->balanced_ns = balanced_step_ns(ctx, found);
	found->lost_ns = ctx->mean_step_ns - found->balanced_ns;
	return found->lost_ns >= ctx->rules->loader_imbalance_warning_pct / 100 * ctx->mean_step_ns;
}

static void add_evidence(struct det_ctx *ctx, struct po_finding *finding,
			 const struct imbalance *found)
{
	det_ev_int(ctx, finding, PO_EVIDENCE_SLOW_WORKER_ID, found->slow->worker_id);
	det_ev_int(ctx, finding, PO_EVIDENCE_SLOW_WORKER_PID, found->slow->pid);
	det_ev_text(ctx, finding, PO_EVIDENCE_STAGE, po_stage_name(found->stage));
	det_ev_text(ctx, finding, PO_EVIDENCE_LABEL, found->label);
	det_ev_number(ctx, finding, PO_EVIDENCE_SLOW_MS_PER_BATCH, found->slow_ns / DET_NS_PER_MS);
	det_ev_number(ctx, finding, PO_EVIDENCE_OTHERS_MS_PER_BATCH,
		      found->others_ns / DET_NS_PER_MS);
	det_ev_number(ctx, finding, PO_EVIDENCE_LOST_MS_PER_STEP, found->lost_ns / DET_NS_PER_MS);
	det_ev_number(ctx, finding, PO_EVIDENCE_LOST_SHARE_PCT,
		      100 * found->lost_ns / ctx->mean_step_ns);
	det_ev_number(ctx, finding, PO_EVIDENCE_STEP_MS, ctx->mean_step_ns / DET_NS_PER_MS);
	det_ev_number(ctx, finding, PO_EVIDENCE_MAIN_MS_PER_STEP, found->main_ns / DET_NS_PER_MS);
	det_ev_number(ctx, finding, PO_EVIDENCE_HANDOFF_MS, found->handoff_ns / DET_NS_PER_MS);
	det_ev_number(ctx, finding, PO_EVIDENCE_PREDICTED_STEP_MS,
		      ctx->machine_busy ? NAN : found->balanced_ns / DET_NS_PER_MS);
	det_ev_int(ctx, finding, PO_EVIDENCE_NUM_WORKERS, det_configured_workers(ctx->analysis));
	det_ev_int(ctx, finding, PO_EVIDENCE_STEPS, (int64_t)ctx->clean_count);
}

static void recommend(struct det_ctx *ctx, struct po_finding *finding,
		      const struct imbalance *found)
{
	const char *label = found->label[0] ? det_printf(ctx, " (%s)", found->label) : "";

	/* The measured step it scales is what other programs left of the cores. */
	det_recommend_cores(
	    ctx, finding, PO_KNOB_LOADER_BALANCE,
	    det_printf(ctx,
		       "make worker %lld's %s%s as fast as the other workers': look at what "
		       "differs in it (its share of the files, their storage or cache, what "
		       "worker_init_fn sets up in it)",
		       (long long)found->slow->worker_id, po_stage_name(found->stage), label),
	    det_printf(ctx,
		       "it takes %.2f ms per batch against %.2f ms in the others, and the loop "
		       "takes the batches in order: it waits for that worker whatever the others "
		       "have ready; more workers only make its turn come less often",
		       found->slow_ns / DET_NS_PER_MS, found->others_ns / DET_NS_PER_MS),
	    det_printf(ctx,
		       "step %.2f ms -> %.2f ms (%.2fx) with that worker as fast as the others",
		       ctx->mean_step_ns / DET_NS_PER_MS, found->balanced_ns / DET_NS_PER_MS,
		       ctx->mean_step_ns / found->balanced_ns),
	    found->balanced_ns / DET_NS_PER_MS, ctx->mean_step_ns / found->balanced_ns);
}

enum po_status det_loader_imbalance(struct det_ctx *ctx)
{
	const struct po_rules *rules = ctx->rules;
	struct imbalance found = {0};
	struct po_finding *finding;
	double lost_pct;

	if (ctx->analysis->worker_count < 2 ||
	    (double)ctx->clean_count < rules->input_bound_min_steps || ctx->mean_step_ns <= 0 ||
	    !measure(ctx, &found))
		return PO_STATUS_OK;
	lost_pct = 100 * found.lost_ns / ctx->mean_step_ns;
	finding =
	    det_finding_add(ctx, PO_FINDING_LOADER_IMBALANCE,
			    lost_pct >= rules->loader_imbalance_critical_pct ? PO_SEVERITY_CRITICAL
									     : PO_SEVERITY_WARNING,
			    0.9);
	if (!finding)
		return PO_STATUS_NOMEM;
	det_summary(ctx, finding,
		    "Loader worker %lld (pid %d) takes %.2f ms to make a batch, %.1fx the other "
		    "workers' %.2f ms, mostly in %s%s%s%s: the loop takes the batches in order and "
		    "loses %.2f ms of each %.2f ms step (%.1f%%) waiting for it.",
		    (long long)found.slow->worker_id, found.slow->pid,
		    found.slow_ns / DET_NS_PER_MS, found.slow_ns / found.others_ns,
		    found.others_ns / DET_NS_PER_MS, po_stage_name(found.stage),
		    found.label[0] ? " (" : "", found.label, found.label[0] ? ")" : "",
		    found.lost_ns / DET_NS_PER_MS, ctx->mean_step_ns / DET_NS_PER_MS, lost_pct);
	add_evidence(ctx, finding, &found);
	recommend(ctx, finding, &found);
	return PO_STATUS_OK;
}
