/*
 * outliers.c: the step-outliers detector. Clean steps slower than median + k scaled MADs
 * (and a minimum excess) are outliers; a common distance between them makes them periodic;
 * the category with the largest excess over the median breakdown says what made them slow.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "detect_internal.h"

#define MAX_LISTED_STEPS 100

struct outliers {
	double median_ns;
	double threshold_ns;
	double median_category_ns[PO_CATEGORY_COUNT];
	size_t *items; /* owned: indexes into ctx->clean */
	size_t count;
	double excess_ns;
	double excess_by_category_ns[PO_CATEGORY_COUNT];
	enum po_category cause;
	int64_t period; /* steps; 0 when sporadic */
};

static bool measure_medians(const struct det_ctx *ctx, struct outliers *out, double *values)
{
	double mad;

	for (int c = 0; c < PO_CATEGORY_COUNT; c++) {
		for (size_t i = 0; i < ctx->clean_count; i++)
			values[i] = (double)det_clean_step(ctx, i).category_ns[c];
		out->median_category_ns[c] = po_stats_median(values, ctx->clean_count);
	}
	for (size_t i = 0; i < ctx->clean_count; i++) {
		const struct po_step step = det_clean_step(ctx, i);

		values[i] = (double)(step.end_ns - step.begin_ns);
	}
	mad = po_stats_mad_scaled(values, ctx->clean_count,
				  po_stats_median(values, ctx->clean_count));
	out->median_ns = po_stats_median(values, ctx->clean_count);
	if (isnan(mad))
		return false;
	out->threshold_ns =
	    fmax(out->median_ns + ctx->rules->step_outliers_mad_k * mad,
		 out->median_ns * (1.0 + ctx->rules->step_outliers_min_excess_pct / 100));
	return true;
}

/* Adds a step to the outliers: its index into ctx->clean and its excess per category. */
static void add_outlier(struct outliers *out, size_t item, const struct po_step *step)
{
	out->items[out->count++] = item;
	out->excess_ns += (double)(step->end_ns - step->begin_ns) - out->median_ns;
	for (int c = 0; c < PO_CATEGORY_COUNT; c++)
		out->excess_by_category_ns[c] +=
		    fmax(0, (double)step->category_ns[c] - out->median_category_ns[c]);
}

static void collect(const struct det_ctx *ctx, struct outliers *out)
{
	for (size_t i = 0; i < ctx->clean_count; i++) {
		const struct po_step step = det_clean_step(ctx, i);
		double wall = (double)(step.end_ns - step.begin_ns);

		if (wall <= out->threshold_ns)
			continue;
		add_outlier(out, i, &step);
	}
	out->cause = PO_CAT_OTHER;
	for (int c = 0; c < PO_CATEGORY_COUNT; c++) {
		if (out->excess_by_category_ns[c] > out->excess_by_category_ns[out->cause])
			out->cause = (enum po_category)c;
	}
}

#define MAX_PERIOD 1000

struct period_candidate {
	int64_t period;
	int64_t phase;
	size_t hits;
	double excess_ns;
};

/* Steady step numbers in [first, last] congruent to phase modulo period (lossy ones too). */
static int64_t members(int64_t first, int64_t last, int64_t period, int64_t phase)
{
	int64_t start = first + ((phase - first % period) % period + period) % period;

	return start > last ? 0 : (last - start) / period + 1;
}

/* What the period search reads of each outlier, taken once rather than per period. */
struct period_scan {
	int64_t first, last;	/* step numbers of the first and last clean steps */
	int64_t *indexes;	/* owned: the outliers' step numbers */
	double *excess_ns;	/* owned: each outlier's time above the median */
	size_t *hits;		/* owned: per residue slot (residue + period), 2 * MAX_PERIOD */
	double *slot_excess_ns; /* owned: the same slots */
};

/*
 * The best (period, phase) for one period: the residue holding the most excess among the
 * outliers, if most steps of that residue are outliers. Residues are tallied in slots
 * (residue + period, as step numbers may be negative) and visited in increasing order;
 * each residue's excess adds its outliers in their order. Linear in the outliers.
 */
static void best_phase(const struct det_ctx *ctx, const struct outliers *out,
		       const struct period_scan *scan, int64_t period,
		       struct period_candidate *best)
{
	size_t slot_count = (size_t)(2 * period);

	memset(scan->hits, 0, slot_count * sizeof(*scan->hits));
	memset(scan->slot_excess_ns, 0, slot_count * sizeof(*scan->slot_excess_ns));
	for (size_t k = 0; k < out->count; k++) {
		size_t slot = (size_t)(scan->indexes[k] % period + period);

		scan->hits[slot]++;
		scan->slot_excess_ns[slot] += scan->excess_ns[k];
	}
	for (size_t slot = 0; slot < slot_count; slot++) {
		int64_t phase = (int64_t)slot - period;
		size_t hits = scan->hits[slot];
		double excess = scan->slot_excess_ns[slot];

		if ((double)hits >= ctx->rules->step_outliers_period_min_hits &&
		    (double)hits >= ctx->rules->step_outliers_period_pct / 100.0 *
					(double)members(scan->first, scan->last, period, phase) &&
		    excess > best->excess_ns * 1.05)
			*best = (struct period_candidate){period, phase, hits, excess};
	}
}

/* Steps to look for a period in: their step numbers and their time above the median. */
struct period_events {
	int64_t *indexes; /* owned */
	double *excess_ns;
	size_t count;
	double total_excess_ns;
};

static bool period_scan_init(const struct det_ctx *ctx, const struct period_events *events,
			     struct period_scan *scan)
{
	scan->first = det_clean_step(ctx, 0).index;
	scan->last = det_clean_step(ctx, ctx->clean_count - 1).index;
	scan->indexes = events->indexes;
	scan->excess_ns = events->excess_ns;
	scan->hits = malloc(2 * MAX_PERIOD * sizeof(*scan->hits));
	scan->slot_excess_ns = malloc(2 * MAX_PERIOD * sizeof(*scan->slot_excess_ns));
	return scan->hits && scan->slot_excess_ns;
}

static void period_scan_fini(struct period_scan *scan)
{
	free(scan->hits);
	free(scan->slot_excess_ns);
}

/*
 * Events are periodic with period N when, for one phase, most steps numbered phase + k * N
 * are events and they hold at least half of the events' excess time. Sporadic events in
 * between (noise) do not hide the period. The shortest period wins unless a longer one
 * explains clearly more. 0 when none.
 */
static int64_t find_period_of(const struct det_ctx *ctx, const struct period_events *events,
			      int64_t *phase)
{
	struct period_candidate best = {0};
	struct period_scan scan = {0};
	struct outliers view = {.count = events->count};
	int64_t max_period = (int64_t)ctx->clean_count / 3;

	if (events->count < 3)
		return 0;
	if (max_period > MAX_PERIOD)
		max_period = MAX_PERIOD;
	if (period_scan_init(ctx, events, &scan)) {
		for (int64_t period = 2; period <= max_period; period++)
			best_phase(ctx, &view, &scan, period, &best);
	}
	period_scan_fini(&scan);
	*phase = best.phase;
	return best.period && best.excess_ns >= 0.5 * events->total_excess_ns ? best.period : 0;
}

static bool events_alloc(struct period_events *events, size_t room)
{
	events->indexes = malloc((room ? room : 1) * sizeof(*events->indexes));
	events->excess_ns = malloc((room ? room : 1) * sizeof(*events->excess_ns));
	return events->indexes && events->excess_ns;
}

static void events_free(struct period_events *events)
{
	free(events->indexes);
	free(events->excess_ns);
}

/*
 * The steps where the outliers' cause took clearly more than usual: at least half the
 * outliers' mean excess in that category above its median. A moderate stall (a checkpoint
 * every 25 steps) does not make every one of its steps an outlier, and noise makes other
 * steps outliers; the cause's own time marks its steps.
 */
static void cause_events(const struct det_ctx *ctx, const struct outliers *out,
			 struct period_events *events)
{
	enum po_category cause = out->cause;
	double limit = 0.5 * out->excess_by_category_ns[cause] / (double)out->count;

	for (size_t i = 0; i < ctx->clean_count; i++) {
		const struct po_step step = det_clean_step(ctx, i);
		double excess = (double)step.category_ns[cause] - out->median_category_ns[cause];

		if (limit <= 0 || excess < limit)
			continue;
		events->indexes[events->count] = step.index;
		events->excess_ns[events->count++] = excess;
		events->total_excess_ns += excess;
	}
}

static void outlier_events(const struct det_ctx *ctx, const struct outliers *out,
			   struct period_events *events)
{
	for (size_t k = 0; k < out->count; k++) {
		const struct po_step step = det_clean_step(ctx, out->items[k]);
		double excess = (double)(step.end_ns - step.begin_ns) - out->median_ns;

		events->indexes[events->count] = step.index;
		events->excess_ns[events->count++] = excess;
		events->total_excess_ns += excess;
	}
}

/* The period of the cause's stalls, else of the outliers themselves. */
/*
 * A period found from the cause's own time: the outliers become the steps of that period
 * and phase, so that their count, excess and cost are the periodic stall's, not diluted by
 * ordinary steps that happened to cross the threshold (nor missing the stall's steps that
 * did not).
 */
static void keep_periodic(const struct det_ctx *ctx, struct outliers *out, int64_t phase)
{
	enum po_category cause = out->cause;

	out->count = 0;
	out->excess_ns = 0;
	memset(out->excess_by_category_ns, 0, sizeof(out->excess_by_category_ns));
	for (size_t i = 0; i < ctx->clean_count; i++) {
		const struct po_step step = det_clean_step(ctx, i);
		int64_t rest = ((step.index - phase) % out->period + out->period) % out->period;

		if (rest == 0)
			add_outlier(out, i, &step);
	}
	out->cause = cause;
}

static void find_period(const struct det_ctx *ctx, struct outliers *out)
{
	struct period_events events = {0};
	int64_t phase = 0;

	if (out->count < 3 || !events_alloc(&events, ctx->clean_count))
		goto end;
	if (out->cause != PO_CAT_OTHER) {
		cause_events(ctx, out, &events);
		out->period = find_period_of(ctx, &events, &phase);
		if (out->period)
			keep_periodic(ctx, out, phase);
	}
	if (!out->period) {
		events.count = 0;
		events.total_excess_ns = 0;
		outlier_events(ctx, out, &events);
		out->period = find_period_of(ctx, &events, &phase);
	}
end:
	events_free(&events);
}

static void add_evidence(struct det_ctx *ctx, struct po_finding *finding,
			 const struct outliers *out, double share_pct)
{
	det_ev_int(ctx, finding, "outliers", (int64_t)out->count);
	det_ev_int(ctx, finding, "steps", (int64_t)ctx->clean_count);
	det_ev_number(ctx, finding, "median_ms", out->median_ns / DET_NS_PER_MS);
	det_ev_number(ctx, finding, "threshold_ms", out->threshold_ns / DET_NS_PER_MS);
	det_ev_number(ctx, finding, "excess_ms_per_outlier",
		      out->excess_ns / (double)out->count / DET_NS_PER_MS);
	det_ev_number(ctx, finding, "excess_share_pct", share_pct);
	det_ev_int(ctx, finding, "period_steps", out->period);
	det_ev_text(ctx, finding, "pattern", out->period ? "periodic" : "sporadic");
	det_ev_text(ctx, finding, "cause", po_category_name(out->cause));
	det_ev_number(ctx, finding, "cause_excess_ms_per_outlier",
		      out->excess_by_category_ns[out->cause] / (double)out->count / DET_NS_PER_MS);
}

/* Loader advice that the run's DataLoader configuration accepts. */
static const char *loader_advice(const struct det_ctx *ctx)
{
	if (det_configured_workers(ctx->analysis) <= 0)
		return "load in worker processes (num_workers > 0) or cache the slow samples";
	if (ctx->analysis->settings.persistent_workers == 1)
		return "smooth the loader: a larger prefetch_factor, or caching the slow samples";
	return "smooth the loader: a larger prefetch_factor, persistent_workers=True, or "
	       "caching the slow samples";
}

static const char *advice_for(const struct det_ctx *ctx, enum po_category cause)
{
	switch (cause) {
	case PO_CAT_CHECKPOINT:
		return "save checkpoints asynchronously or less often";
	case PO_CAT_EVAL:
		return "evaluate less often or on a separate process";
	case PO_CAT_DATA_WAIT:
	case PO_CAT_LOAD:
	case PO_CAT_PREPROCESS:
	case PO_CAT_COLLATE:
		return loader_advice(ctx);
	case PO_CAT_GPU_SYNC:
		return "remove the periodic synchronization (logging .item() calls) or do it less "
		       "often";
	default:
		return "look at the timeline of the slowest steps in the report";
	}
}

static void add_finding(struct det_ctx *ctx, struct outliers *out)
{
	double share_pct = 100.0 * out->excess_ns / ctx->clean_wall_ns;
	double step_ns = ctx->mean_step_ns - out->excess_ns / (double)ctx->clean_count;
	struct po_finding *finding;
	int64_t steps[MAX_LISTED_STEPS];
	size_t listed = out->count < MAX_LISTED_STEPS ? out->count : MAX_LISTED_STEPS;

	finding =
	    det_finding_add(ctx, PO_FINDING_STEP_OUTLIERS,
			    share_pct >= ctx->rules->step_outliers_warning_pct ? PO_SEVERITY_WARNING
									       : PO_SEVERITY_INFO,
			    out->period ? 0.9 : 0.7);
	if (!finding)
		return;
	if (out->period)
		det_summary(
		    ctx, finding,
		    "Every %lld steps a step takes %.2f ms longer than the median step "
		    "(%.2f ms; %zu of %zu steps), costing %.1f%% of the run; the extra time "
		    "is mostly %s.",
		    (long long)out->period, out->excess_ns / (double)out->count / DET_NS_PER_MS,
		    out->median_ns / DET_NS_PER_MS, out->count, ctx->clean_count, share_pct,
		    po_category_name(out->cause));
	else
		det_summary(
		    ctx, finding,
		    "%zu of %zu steps are slower than %.2f ms (median %.2f ms), at irregular "
		    "intervals, costing %.1f%% of the run; their extra time is mostly %s.",
		    out->count, ctx->clean_count, out->threshold_ns / DET_NS_PER_MS,
		    out->median_ns / DET_NS_PER_MS, share_pct, po_category_name(out->cause));
	add_evidence(ctx, finding, out, share_pct);
	for (size_t i = 0; i < listed; i++)
		steps[i] = det_clean_step(ctx, out->items[i]).index;
	det_set_steps(ctx, finding, steps, listed);
	det_recommend(
	    ctx, finding, po_category_name(out->cause), advice_for(ctx, out->cause),
	    det_printf(ctx, "the slow steps spend %.2f ms more in %s than the median step",
		       out->excess_by_category_ns[out->cause] / (double)out->count / DET_NS_PER_MS,
		       po_category_name(out->cause)),
	    det_printf(ctx, "at most step %.2f ms -> %.2f ms without the excess",
		       ctx->mean_step_ns / DET_NS_PER_MS, step_ns / DET_NS_PER_MS),
	    step_ns / DET_NS_PER_MS, step_ns > 0 ? ctx->mean_step_ns / step_ns : NAN);
}

enum po_status det_step_outliers(struct det_ctx *ctx)
{
	struct outliers out = {0};
	double *values;

	if ((double)ctx->clean_count < ctx->rules->step_outliers_min_steps || !ctx->clean_count)
		return PO_STATUS_OK;
	values = malloc(ctx->clean_count * sizeof(double));
	out.items = malloc(ctx->clean_count * sizeof(size_t));
	if (!values || !out.items) {
		free(values);
		free(out.items);
		return PO_STATUS_NOMEM;
	}
	if (measure_medians(ctx, &out, values)) {
		collect(ctx, &out);
		find_period(ctx, &out);
		if (out.count && (double)out.count >= ctx->rules->step_outliers_min_count)
			add_finding(ctx, &out);
	}
	free(values);
	free(out.items);
	return PO_STATUS_OK;
}
