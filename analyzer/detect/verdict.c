/*
 * verdict.c: the verdict, from the mean breakdown of clean steps (docs/rules.md):
 * input-bound when the input-bound finding is a warning or worse; else gpu-bound when the
 * GPU is busy most of the step; else host-bound when host compute dominates, or the loop
 * waits for CPU held by the loader workers (cpu-contention), while the GPU is mostly idle;
 * else balanced. Unknown with too few clean steps, when the steps cover too little of the
 * run, or when almost all of a step is in no span: then the reason says what is not known.
 * On a busy machine the reason also says what other programs used meanwhile.
 */
#include <math.h>

#include "detect_internal.h"

/* Categories of host work on the training thread that keep the GPU waiting for launches. */
static double host_compute_ns(const struct det_ctx *ctx)
{
	static const enum po_category host[] = {
	    PO_CAT_FORWARD, PO_CAT_BACKWARD, PO_CAT_OPTIMIZER, PO_CAT_CHECKPOINT,
	    PO_CAT_EVAL,    PO_CAT_CUSTOM,   PO_CAT_GC,	       PO_CAT_OTHER};
	double total = 0;

	for (size_t i = 0; i < sizeof(host) / sizeof(host[0]); i++)
		total += ctx->category_mean_ns[host[i]];
	return total;
}

bool det_uncovered(const struct det_ctx *ctx)
{
	double coverage = ctx->analysis->step_stats.coverage_pct;

	return coverage >= 0 && coverage < ctx->rules->verdict_min_coverage_pct;
}

bool det_unmarked(const struct det_ctx *ctx)
{
	return ctx->mean_step_ns > 0 &&
	       100 * ctx->category_mean_ns[PO_CAT_OTHER] / ctx->mean_step_ns >
		   ctx->rules->verdict_max_unmarked_pct;
}

enum po_verdict det_verdict(const struct det_ctx *ctx)
{
	const struct po_rules *rules = ctx->rules;
	const struct po_finding *input = det_find(ctx, PO_FINDING_INPUT_BOUND);
	const struct po_finding *contention = det_find(ctx, PO_FINDING_CPU_CONTENTION);
	const struct po_finding *launch = det_find(ctx, PO_FINDING_LAUNCH_BOUND);
	double busy_pct, host_pct;

	if (!ctx->clean_count || (double)ctx->clean_count < rules->verdict_min_steps ||
	    ctx->mean_step_ns <= 0 || det_uncovered(ctx) || det_unmarked(ctx))
		return PO_VERDICT_UNKNOWN;
	/* launches take more of the step than the wait for input: the host holds it back */
	if (launch &&
	    (!input || ctx->diagnosis->gpu_work.launch_host_ms * DET_NS_PER_MS >
			   ctx->diagnosis->steady.input_wait_pct / 100 * ctx->mean_step_ns))
		return PO_VERDICT_HOST_BOUND;
	if (input && input->severity <= PO_SEVERITY_WARNING)
		return PO_VERDICT_INPUT_BOUND;
	busy_pct = ctx->analysis->gpu_count && !isnan(ctx->diagnosis->steady.gpu_busy_pct)
		       ? ctx->diagnosis->steady.gpu_busy_pct
		       : 0;
	if (busy_pct >= rules->verdict_gpu_bound_pct)
		return PO_VERDICT_GPU_BOUND;
	host_pct = 100.0 * host_compute_ns(ctx) / ctx->mean_step_ns;
	if (busy_pct < rules->verdict_host_gpu_pct &&
	    (host_pct >= rules->verdict_host_compute_pct ||
	     (contention && contention->severity <= PO_SEVERITY_WARNING)))
		return PO_VERDICT_HOST_BOUND;
	return PO_VERDICT_BALANCED;
}

/*
 * Most of each step is in no span: what is marked, what is not, and how to mark the rest.
 * Asking for what is already instrumented sends the user to do it twice.
 */
static const char *unmarked_cause(struct det_ctx *ctx)
{
	const double *mean = ctx->category_mean_ns;
	double other_pct = 100 * mean[PO_CAT_OTHER] / ctx->mean_step_ns;
	bool loader = mean[PO_CAT_DATA_WAIT] + mean[PO_CAT_HANDOFF] + mean[PO_CAT_LOAD] +
			  mean[PO_CAT_PREPROCESS] + mean[PO_CAT_COLLATE] >
		      0;
	bool model = mean[PO_CAT_FORWARD] + mean[PO_CAT_BACKWARD] + mean[PO_CAT_OPTIMIZER] > 0;

	if (loader && model)
		return det_printf(
		    ctx,
		    "%.0f%% of each step (%.2f ms) is in no span, though the data wait and the "
		    "model are marked: the loop's own code between them takes it; mark its "
		    "parts with profopt.span(\"name\"), or record with --stacks to see its "
		    "functions",
		    other_pct, mean[PO_CAT_OTHER] / DET_NS_PER_MS);
	if (loader)
		return det_printf(ctx,
				  "%.0f%% of each step is in no span: the data wait is marked but "
				  "not the model; instrument it (profopt.run(model=..., "
				  "optimizer=...)) or mark its parts with profopt.span(\"name\")",
				  other_pct);
	if (model)
		return det_printf(
		    ctx,
		    "%.0f%% of each step is in no span: the model is marked but not "
		    "the data wait; instrument the loader (profopt.instrument(loader)) "
		    "or mark the rest with profopt.span(\"name\")",
		    other_pct);
	return det_printf(ctx,
			  "%.0f%% of each step is in no span: the steps are marked but not what "
			  "happens inside them; instrument the loader and the model "
			  "(profopt.instrument, profopt.run(model=..., optimizer=...))",
			  other_pct);
}

static const char *verdict_cause(struct det_ctx *ctx, enum po_verdict verdict)
{
	const struct po_finding *contention = det_find(ctx, PO_FINDING_CPU_CONTENTION);

	if (verdict == PO_VERDICT_UNKNOWN && ctx->clean_count && det_uncovered(ctx))
		return det_printf(
		    ctx,
		    "steps cover only %.0f%% of the time from the first step to the "
		    "last: what the program does outside them is not measured; mark the "
		    "whole loop as the step (profopt.instrument does)",
		    ctx->analysis->step_stats.coverage_pct);
	if (verdict == PO_VERDICT_UNKNOWN && ctx->clean_count && det_unmarked(ctx))
		return unmarked_cause(ctx);
	if (verdict == PO_VERDICT_HOST_BOUND && det_find(ctx, PO_FINDING_LAUNCH_BOUND))
		return det_printf(ctx,
				  "the training thread launches %.0f kernels per step, %.1f us of "
				  "its time each, more slowly than the GPU runs them",
				  ctx->diagnosis->gpu_work.kernels,
				  ctx->diagnosis->gpu_work.host_us_per_kernel);
	if (verdict != PO_VERDICT_HOST_BOUND || !contention ||
	    contention->severity > PO_SEVERITY_WARNING)
		return NULL;
	return det_printf(ctx, "the training loop waits for CPU held by %lld loader workers",
			  (long long)det_live_workers(ctx->analysis));
}

/* The cause, and on a busy machine what other programs took meanwhile. */
const char *det_verdict_reason(struct det_ctx *ctx, enum po_verdict verdict)
{
	const char *cause = verdict_cause(ctx, verdict);

	if (!ctx->machine_busy)
		return cause;
	return det_printf(ctx, "%s%sother programs used %.1f of the %d cores while it ran",
			  cause ? cause : "", cause ? "; " : "", ctx->others_cores,
			  ctx->analysis->cpu_count);
}
