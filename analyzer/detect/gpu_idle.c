/*
 * gpu_idle.c: the gpu-idle detector. Per device it adds up the gaps of clean steps longer
 * than the threshold, splits them by what the training thread did meanwhile, and names
 * the fix for the largest cause with the time it could recover per step.
 */
#include <math.h>
#include <stdlib.h>

#include "detect_internal.h"

#define MAX_GAP_STEPS 50

struct gap_totals {
	double threshold_ns;
	double total_ns;
	double max_ns;
	double by_cause_ns[PO_CATEGORY_COUNT];
	size_t count;
	size_t *counted; /* owned: indexes into analysis->gaps */
	enum po_category cause;
};

/* Whether the step is one of the steady steps (binary search: they are in trace order). */
static bool is_steady(const struct det_ctx *ctx, size_t step_index)
{
	size_t low = 0, high = ctx->clean_count;

	while (low < high) {
		size_t mid = low + (high - low) / 2;

		if (ctx->clean[mid] == step_index)
			return true;
		if (ctx->clean[mid] < step_index)
			low = mid + 1;
		else
			high = mid;
	}
	return false;
}

/*
 * The part of a gap at least threshold long that lies inside its steady step, or 0: a gap
 * that began during start-up counts only from the step's start.
 */
static double counted_ns(const struct det_ctx *ctx, const struct po_gpu_gap *gap, double threshold)
{
	const struct po_analysis *analysis = ctx->analysis;
	struct po_step step;
	int64_t begin, end;

	if (gap->step_index < 0 || (size_t)gap->step_index >= analysis->step_count ||
	    !is_steady(ctx, (size_t)gap->step_index) ||
	    (double)(gap->end_ns - gap->begin_ns) < threshold)
		return 0;
	step = po_analysis_step(analysis, (size_t)gap->step_index);
	begin = gap->begin_ns > step.begin_ns ? gap->begin_ns : step.begin_ns;
	end = gap->end_ns < step.end_ns ? gap->end_ns : step.end_ns;
	return end > begin ? (double)(end - begin) : 0;
}

static enum po_status total_gaps(const struct det_ctx *ctx, const struct po_gpu_device *device,
				 struct gap_totals *totals)
{
	const struct po_rules *rules = ctx->rules;

	totals->threshold_ns = fmax(rules->gpu_idle_min_gap_ms * DET_NS_PER_MS,
				    rules->gpu_idle_min_gap_step_pct / 100.0 * ctx->median_step_ns);
	totals->counted = malloc((device->gap_count ? device->gap_count : 1) * sizeof(size_t));
	if (!totals->counted)
		return PO_STATUS_NOMEM;
	for (size_t i = device->gaps_begin; i < device->gaps_begin + device->gap_count; i++) {
		const struct po_gpu_gap *gap = &ctx->analysis->gaps[i];
		double length = counted_ns(ctx, gap, totals->threshold_ns);

		if (length <= 0)
			continue;
		totals->total_ns += length;
		totals->max_ns = fmax(totals->max_ns, length);
		totals->by_cause_ns[(unsigned)gap->cause < PO_CATEGORY_COUNT ? gap->cause
									     : PO_CAT_OTHER] +=
		    length;
		totals->counted[totals->count++] = i;
	}
	totals->cause = PO_CAT_OTHER;
	for (int c = 0; c < PO_CATEGORY_COUNT; c++) {
		if (totals->by_cause_ns[c] > totals->by_cause_ns[totals->cause])
			totals->cause = (enum po_category)c;
	}
	return PO_STATUS_OK;
}

struct ranked_gap {
	int64_t length_ns;
	int64_t begin_ns;
	int64_t end_ns;
};

/* Longest first; equal lengths by time. */
static int compare_ranked(const void *left, const void *right)
{
	const struct ranked_gap *a = left, *b = right;

	if (a->length_ns != b->length_ns)
		return a->length_ns < b->length_ns ? 1 : -1;
	return (a->begin_ns > b->begin_ns) - (a->begin_ns < b->begin_ns);
}

static int compare_window_begin(const void *left, const void *right)
{
	const struct po_window *a = left, *b = right;

	return (a->begin_ns > b->begin_ns) - (a->begin_ns < b->begin_ns);
}

static void add_gap_steps(struct det_ctx *ctx, struct po_finding *finding,
			  const struct gap_totals *totals)
{
	int64_t steps[MAX_GAP_STEPS];
	size_t step_count = 0;

	for (size_t i = 0; i < totals->count && step_count < MAX_GAP_STEPS; i++) {
		const struct po_gpu_gap *gap = &ctx->analysis->gaps[totals->counted[i]];
		int64_t index = po_analysis_step(ctx->analysis, (size_t)gap->step_index).index;

		if (!step_count || steps[step_count - 1] != index)
			steps[step_count++] = index;
	}
	det_set_steps(ctx, finding, steps, step_count);
}

/* The worst gaps as windows in time order, and the steps of the counted gaps. */
static void add_gap_lists(struct det_ctx *ctx, struct po_finding *finding,
			  const struct gap_totals *totals)
{
	size_t window_count = (size_t)ctx->rules->gpu_idle_max_windows;
	struct ranked_gap *ranked = malloc((totals->count ? totals->count : 1) * sizeof(*ranked));
	struct po_window *windows = malloc((totals->count ? totals->count : 1) * sizeof(*windows));

	add_gap_steps(ctx, finding, totals);
	if (!ranked || !windows) {
		ctx->nomem = true;
		goto end;
	}
	for (size_t i = 0; i < totals->count; i++) {
		const struct po_gpu_gap *gap = &ctx->analysis->gaps[totals->counted[i]];

		ranked[i] =
		    (struct ranked_gap){gap->end_ns - gap->begin_ns, gap->begin_ns, gap->end_ns};
	}
	qsort(ranked, totals->count, sizeof(*ranked), compare_ranked);
	if (window_count > totals->count)
		window_count = totals->count;
	for (size_t i = 0; i < window_count; i++)
		windows[i] = (struct po_window){ranked[i].begin_ns, ranked[i].end_ns};
	qsort(windows, window_count, sizeof(*windows), compare_window_begin);
	det_set_windows(ctx, finding, windows, window_count);
end:
	free(ranked);
	free(windows);
}

struct cause_fix {
	enum po_knob knob;
	const char *action;
	const char *why;
};

static struct cause_fix fix_for(enum po_category cause)
{
	switch (cause) {
	case PO_CAT_DATA_WAIT:
	case PO_CAT_LOAD:
	case PO_CAT_PREPROCESS:
	case PO_CAT_COLLATE:
		return (struct cause_fix){
		    PO_KNOB_NUM_WORKERS,
		    "feed the GPU faster: more loader workers "
		    "(num_workers) and prefetching (see the input-bound finding)",
		    "the GPU waits while the training thread waits for its next batch"};
	case PO_CAT_CHECKPOINT:
	case PO_CAT_EVAL:
		return (struct cause_fix){
		    PO_KNOB_CHECKPOINT,
		    "save checkpoints (or evaluate) "
		    "asynchronously in a background thread, or less often",
		    "the training thread does host work while nothing is queued on the GPU"};
	case PO_CAT_GPU_SYNC:
		return (struct cause_fix){
		    PO_KNOB_SYNC,
		    "remove the synchronization from the step "
		    "(.item(), .cpu(), torch.cuda.synchronize()); log metrics every N steps",
		    "each sync drains the GPU queue, so the GPU idles until new work is launched"};
	case PO_CAT_H2D_COPY:
		return (struct cause_fix){
		    PO_KNOB_PIN_MEMORY,
		    "set pin_memory=True and copy with "
		    "non_blocking=True so that copies overlap compute",
		    "pageable copies block the training thread and serialize with kernels"};
	default:
		return (struct cause_fix){
		    PO_KNOB_BATCH_SIZE,
		    "launch more work per step: a larger batch "
		    "size, CUDA graphs or torch.compile to cut per-kernel launch overhead",
		    "the host launches kernels more slowly than the GPU runs them"};
	}
}

static void recommend_fix(struct det_ctx *ctx, struct po_finding *finding,
			  const struct gap_totals *totals)
{
	struct cause_fix fix = fix_for(totals->cause);
	double saved_ns = totals->by_cause_ns[totals->cause] / (double)ctx->clean_count;
	double step_ns = ctx->mean_step_ns - saved_ns;

	det_recommend(ctx, finding, fix.knob, fix.action,
		      det_printf(ctx, "%s (%s: %.2f ms per step)", fix.why,
				 po_category_name(totals->cause), saved_ns / DET_NS_PER_MS),
		      det_printf(ctx, "at most %.2f ms per step recovered: step %.2f ms -> %.2f ms",
				 saved_ns / DET_NS_PER_MS, ctx->mean_step_ns / DET_NS_PER_MS,
				 step_ns / DET_NS_PER_MS),
		      step_ns / DET_NS_PER_MS, step_ns > 0 ? ctx->mean_step_ns / step_ns : NAN);
}

static void add_evidence(struct det_ctx *ctx, struct po_finding *finding,
			 const struct po_gpu_device *device, const struct gap_totals *totals,
			 double share_pct)
{
	det_ev_int(ctx, finding, PO_EVIDENCE_DEVICE, device->device);
	det_ev_number(ctx, finding, PO_EVIDENCE_IDLE_SHARE_PCT, share_pct);
	det_ev_number(ctx, finding, PO_EVIDENCE_IDLE_MS_PER_STEP,
		      totals->total_ns / (double)ctx->clean_count / DET_NS_PER_MS);
	det_ev_int(ctx, finding, PO_EVIDENCE_GAPS, (int64_t)totals->count);
	det_ev_number(ctx, finding, PO_EVIDENCE_THRESHOLD_MS, totals->threshold_ns / DET_NS_PER_MS);
	det_ev_number(ctx, finding, PO_EVIDENCE_GAP_MAX_MS, totals->max_ns / DET_NS_PER_MS);
	det_ev_text(ctx, finding, PO_EVIDENCE_CAUSE, po_category_name(totals->cause));
	det_ev_int(ctx, finding, PO_EVIDENCE_STEPS, (int64_t)ctx->clean_count);
	/* The headline's GPU busy: the steady steps' share, any GPU (po_steady_stats). */
	det_ev_number(ctx, finding, PO_EVIDENCE_GPU_BUSY_PCT, ctx->diagnosis->steady.gpu_busy_pct);
	for (int c = 0; c < PO_CATEGORY_COUNT; c++) {
		if (totals->by_cause_ns[c] > 0)
			det_ev_number_in(
			    ctx, finding, PO_EVIDENCE_CATEGORY_MS_PER_STEP, (enum po_category)c,
			    totals->by_cause_ns[c] / (double)ctx->clean_count / DET_NS_PER_MS);
	}
}

static enum po_status device_finding(struct det_ctx *ctx, const struct po_gpu_device *device)
{
	const struct po_rules *rules = ctx->rules;
	struct gap_totals totals = {0};
	struct po_finding *finding;
	enum po_severity severity;
	double share_pct;

	if (total_gaps(ctx, device, &totals) != PO_STATUS_OK)
		return PO_STATUS_NOMEM;
	share_pct = 100.0 * totals.total_ns / ctx->clean_wall_ns;
	if (share_pct < rules->gpu_idle_warning_pct || !totals.count) {
		free(totals.counted);
		return PO_STATUS_OK;
	}
	severity =
	    share_pct >= rules->gpu_idle_critical_pct ? PO_SEVERITY_CRITICAL : PO_SEVERITY_WARNING;
	finding =
	    det_finding_add(ctx, PO_FINDING_GPU_IDLE, severity, totals.count >= 5 ? 0.9 : 0.7);
	if (finding) {
		det_summary(
		    ctx, finding,
		    "GPU %d sits idle %.1f%% of the steady step time in %zu gaps of at least "
		    "%.2f ms (%.2f ms per step), mostly while the training thread is in %s.",
		    device->device, share_pct, totals.count, totals.threshold_ns / DET_NS_PER_MS,
		    totals.total_ns / (double)ctx->clean_count / DET_NS_PER_MS,
		    po_category_name(totals.cause));
		add_evidence(ctx, finding, device, &totals, share_pct);
		recommend_fix(ctx, finding, &totals);
		add_gap_lists(ctx, finding, &totals);
	}
	free(totals.counted);
	return finding ? PO_STATUS_OK : PO_STATUS_NOMEM;
}

enum po_status det_gpu_idle(struct det_ctx *ctx)
{
	if (!ctx->clean_count || ctx->clean_wall_ns <= 0)
		return PO_STATUS_OK;
	for (size_t i = 0; i < ctx->analysis->gpu_count; i++) {
		enum po_status status = device_finding(ctx, &ctx->analysis->gpus[i]);

		if (status != PO_STATUS_OK)
			return status;
	}
	return PO_STATUS_OK;
}
