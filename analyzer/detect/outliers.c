/*
 * outliers.c: the step-outliers detector. Steady steps slower than their level's median + k
 * scaled MADs (and a minimum excess) are outliers (a run whose steps moved to a new level has
 * a level per part, level_shift.c); a stall at a common distance in one category's time, or
 * between the outliers, makes them periodic; the category with the largest excess over the
 * level's median breakdown says what made them slow.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "detect_internal.h"

#define MAX_LISTED_STEPS 100

/* One level of the steady steps (ctx->levels) and what a step of it usually takes. */
struct level {
	size_t from, to; /* indexes into ctx->clean */
	double median_ns;
	double threshold_ns;
	double median_category_ns[PO_CATEGORY_COUNT];
	double mad_category_ns[PO_CATEGORY_COUNT]; /* scaled */
};

struct outliers {
	struct level levels[DET_MAX_LEVELS];
	size_t level_count;
	double median_ns;    /* of all steady steps */
	double threshold_ns; /* of the longest level */
	size_t *items;	     /* owned: indexes into ctx->clean */
	size_t count;
	double excess_ns;
	double excess_by_category_ns[PO_CATEGORY_COUNT];
	enum po_category cause;
	int64_t period; /* steps; 0 when sporadic */
};

static const struct level *level_of(const struct outliers *out, size_t item)
{
	size_t i = 0;

	while (i + 1 < out->level_count && item >= out->levels[i + 1].from)
		i++;
	return &out->levels[i];
}

static double excess_of(const struct outliers *out, size_t item, const struct po_step *step)
{
	return (double)(step->end_ns - step->begin_ns) - level_of(out, item)->median_ns;
}

/* The medians, scaled MADs and outlier threshold of one level; false on failure. */
static bool measure_level(const struct det_ctx *ctx, struct level *level, double *values)
{
	size_t count = level->to - level->from;
	double median, mad;

	for (int c = 0; c < PO_CATEGORY_COUNT; c++) {
		for (size_t i = level->from; i < level->to; i++)
			values[i - level->from] = (double)det_clean_step(ctx, i).category_ns[c];
		median = po_stats_median(values, count);
		level->median_category_ns[c] = median;
		level->mad_category_ns[c] = po_stats_mad_scaled(values, count, median);
	}
	for (size_t i = level->from; i < level->to; i++) {
		const struct po_step step = det_clean_step(ctx, i);

		values[i - level->from] = (double)(step.end_ns - step.begin_ns);
	}
	median = po_stats_median(values, count);
	mad = po_stats_mad_scaled(values, count, median);
	level->median_ns = median;
	if (isnan(mad))
		return false;
	level->threshold_ns = fmax(median + ctx->rules->step_outliers_mad_k * mad,
				   median * (1.0 + ctx->rules->step_outliers_min_excess_pct / 100));
	return true;
}

static bool measure_medians(const struct det_ctx *ctx, struct outliers *out, double *values)
{
	const struct det_levels *levels = &ctx->levels;
	size_t longest = 0;

	out->level_count = levels->count ? levels->count : 1;
	for (size_t i = 0; i < out->level_count; i++) {
		struct level *level = &out->levels[i];

		level->from = levels->count ? levels->begin[i] : 0;
		level->to = i + 1 < out->level_count ? levels->begin[i + 1] : ctx->clean_count;
		if (!measure_level(ctx, level, values))
			return false;
		if (level->to - level->from > out->levels[longest].to - out->levels[longest].from)
			longest = i;
	}
	out->threshold_ns = out->levels[longest].threshold_ns;
	for (size_t i = 0; i < ctx->clean_count; i++) {
		const struct po_step step = det_clean_step(ctx, i);

		values[i] = (double)(step.end_ns - step.begin_ns);
	}
	out->median_ns = po_stats_median(values, ctx->clean_count);
	return true;
}

/* Adds a step to the outliers: its index into ctx->clean and its excess per category. */
static void add_outlier(struct outliers *out, size_t item, const struct po_step *step)
{
	const struct level *level = level_of(out, item);

	out->items[out->count++] = item;
	out->excess_ns += excess_of(out, item, step);
	for (int c = 0; c < PO_CATEGORY_COUNT; c++)
		out->excess_by_category_ns[c] +=
		    fmax(0, (double)step->category_ns[c] - level->median_category_ns[c]);
}

/* The category with the largest excess in the outliers. */
static void find_cause(struct outliers *out)
{
	out->cause = PO_CAT_OTHER;
	for (int c = 0; c < PO_CATEGORY_COUNT; c++) {
		if (out->excess_by_category_ns[c] > out->excess_by_category_ns[out->cause])
			out->cause = (enum po_category)c;
	}
}

static void collect(const struct det_ctx *ctx, struct outliers *out)
{
	for (size_t i = 0; i < ctx->clean_count; i++) {
		const struct po_step step = det_clean_step(ctx, i);
		double wall = (double)(step.end_ns - step.begin_ns);

		if (wall <= level_of(out, i)->threshold_ns)
			continue;
		add_outlier(out, i, &step);
	}
	find_cause(out);
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
	double rate;		/* events per step of [first, last] */
	int64_t max_period;
	bool by_chance; /* a phase must also be no accident (chance_of) */
};

/*
 * The chance that events falling on the steps at random, at the run's rate, give some phase
 * of some period up to max_period this many hits among its members: the binomial tail of
 * one phase, times the phases tried.
 */
static double chance_of(size_t hits, int64_t count, double rate, int64_t max_period)
{
	double tail = 0, phases = (double)max_period * ((double)max_period + 1) / 2 - 1;

	if (rate <= 0)
		return 0;
	if (rate >= 1)
		return 1;
	for (int64_t k = (int64_t)hits; k <= count; k++)
		tail += exp(lgamma((double)count + 1) - lgamma((double)k + 1) -
			    lgamma((double)(count - k) + 1) + (double)k * log(rate) +
			    (double)(count - k) * log1p(-rate));
	return tail * phases;
}

/* Most of the phase's members are events, and (when asked) not by accident. */
static bool phase_holds(const struct det_ctx *ctx, const struct period_scan *scan, size_t hits,
			int64_t count)
{
	const struct po_rules *rules = ctx->rules;

	if ((double)hits < rules->step_outliers_period_min_hits ||
	    (double)hits < rules->step_outliers_period_pct / 100.0 * (double)count)
		return false;
	return !scan->by_chance || chance_of(hits, count, scan->rate, scan->max_period) <=
				       rules->step_outliers_period_chance_pct / 100;
}

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

		if (excess > best->excess_ns * 1.05 &&
		    phase_holds(ctx, scan, hits, members(scan->first, scan->last, period, phase)))
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

/* The best (period, phase) of the events, by the scan's rules; period 0 without one. */
static struct period_candidate scan_periods(const struct det_ctx *ctx,
					    const struct period_events *events,
					    const struct period_scan *scan)
{
	struct period_candidate best = {0};
	struct outliers view = {.count = events->count};

	for (int64_t period = 2; period <= scan->max_period; period++)
		best_phase(ctx, &view, scan, period, &best);
	return best;
}

/*
 * Events are periodic with period N when, for one phase, most steps numbered phase + k * N
 * are events and they hold at least half of the events' excess time; sporadic events in
 * between (noise) do not hide the period. Where noise holds more (other programs slowing
 * steps at random), a phase whose events are too many to fall there by chance at the run's
 * rate of events still makes a period. The shortest period wins unless a longer one
 * explains clearly more. Period 0 when none.
 */
static struct period_candidate find_period_of(const struct det_ctx *ctx,
					      const struct period_events *events)
{
	struct period_candidate best = {0};
	struct period_scan scan = {0};

	if (events->count < 3)
		return best;
	scan.max_period = (int64_t)ctx->clean_count / 3;
	if (scan.max_period > MAX_PERIOD)
		scan.max_period = MAX_PERIOD;
	if (period_scan_init(ctx, events, &scan)) {
		scan.rate = (double)events->count / (double)(scan.last - scan.first + 1);
		best = scan_periods(ctx, events, &scan);
		if (best.excess_ns < 0.5 * events->total_excess_ns) {
			scan.by_chance = true;
			best = scan_periods(ctx, events, &scan);
		}
	}
	period_scan_fini(&scan);
	return best;
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

static void add_event(struct period_events *events, int64_t index, double excess_ns)
{
	events->indexes[events->count] = index;
	events->excess_ns[events->count++] = excess_ns;
	events->total_excess_ns += excess_ns;
}

/*
 * The steps where one category took clearly more than usual in its level: by at least
 * step-outliers.min_excess_pct of the level's median step and mad_k of the category's own
 * scaled MADs. A stall's own time marks its steps, whether or not they crossed the
 * threshold of the whole step (a moderate checkpoint every 25 steps does not always), and
 * noise in the other categories (a busy machine) does not mark any.
 */
static void category_events(const struct det_ctx *ctx, const struct outliers *out,
			    enum po_category category, struct period_events *events)
{
	const struct po_rules *rules = ctx->rules;

	events->count = 0;
	events->total_excess_ns = 0;
	for (size_t i = 0; i < ctx->clean_count; i++) {
		const struct level *level = level_of(out, i);
		const struct po_step step = det_clean_step(ctx, i);
		double excess =
		    (double)step.category_ns[category] - level->median_category_ns[category];

		if (excess > 0 &&
		    excess >= rules->step_outliers_min_excess_pct / 100 * level->median_ns &&
		    excess >= rules->step_outliers_mad_k * level->mad_category_ns[category])
			add_event(events, step.index, excess);
	}
}

static void outlier_events(const struct det_ctx *ctx, const struct outliers *out,
			   struct period_events *events)
{
	events->count = 0;
	events->total_excess_ns = 0;
	for (size_t k = 0; k < out->count; k++) {
		const struct po_step step = det_clean_step(ctx, out->items[k]);

		add_event(events, step.index, excess_of(out, out->items[k], &step));
	}
}

/*
 * A period found: the outliers become the steps of that period and phase, so that their
 * count, excess, cost and cause are the periodic stall's, not diluted by ordinary steps that
 * happened to cross the threshold (nor missing the stall's steps that did not).
 */
static void keep_periodic(const struct det_ctx *ctx, struct outliers *out, int64_t phase)
{
	out->count = 0;
	out->excess_ns = 0;
	memset(out->excess_by_category_ns, 0, sizeof(out->excess_by_category_ns));
	for (size_t i = 0; i < ctx->clean_count; i++) {
		const struct po_step step = det_clean_step(ctx, i);
		int64_t rest = ((step.index - phase) % out->period + out->period) % out->period;

		if (rest == 0)
			add_outlier(out, i, &step);
	}
	find_cause(out);
}

/*
 * The period of a stall in one category's own time (the one whose periodic steps hold the
 * most excess), else of the outliers themselves.
 */
static void find_period(const struct det_ctx *ctx, struct outliers *out)
{
	struct period_events events = {0};
	struct period_candidate best = {0};

	if (!events_alloc(&events, ctx->clean_count))
		goto end;
	for (int c = 0; c < PO_CATEGORY_COUNT; c++) {
		struct period_candidate found;

		category_events(ctx, out, (enum po_category)c, &events);
		found = find_period_of(ctx, &events);
		if (found.period && found.excess_ns > best.excess_ns)
			best = found;
	}
	if (!best.period && out->count >= 3) {
		outlier_events(ctx, out, &events);
		best = find_period_of(ctx, &events);
	}
	out->period = best.period;
	if (out->period)
		keep_periodic(ctx, out, best.phase);
end:
	events_free(&events);
}

static void add_evidence(struct det_ctx *ctx, struct po_finding *finding,
			 const struct outliers *out, double share_pct)
{
	det_ev_int(ctx, finding, PO_EVIDENCE_OUTLIERS, (int64_t)out->count);
	det_ev_int(ctx, finding, PO_EVIDENCE_STEPS, (int64_t)ctx->clean_count);
	det_ev_number(ctx, finding, PO_EVIDENCE_MEDIAN_MS, out->median_ns / DET_NS_PER_MS);
	det_ev_number(ctx, finding, PO_EVIDENCE_THRESHOLD_MS, out->threshold_ns / DET_NS_PER_MS);
	det_ev_number(ctx, finding, PO_EVIDENCE_EXCESS_MS_PER_OUTLIER,
		      out->excess_ns / (double)out->count / DET_NS_PER_MS);
	det_ev_number(ctx, finding, PO_EVIDENCE_EXCESS_SHARE_PCT, share_pct);
	det_ev_int(ctx, finding, PO_EVIDENCE_PERIOD_STEPS, out->period);
	det_ev_text(ctx, finding, PO_EVIDENCE_PATTERN, out->period ? "periodic" : "sporadic");
	det_ev_text(ctx, finding, PO_EVIDENCE_CAUSE, po_category_name(out->cause));
	det_ev_number(ctx, finding, PO_EVIDENCE_CAUSE_EXCESS_MS_PER_OUTLIER,
		      out->excess_by_category_ns[out->cause] / (double)out->count / DET_NS_PER_MS);
	if (out->cause == PO_CAT_GC && ctx->analysis->gc[PO_ROLE_MAIN].collections > 0) {
		const struct po_gc_counts *gc = &ctx->analysis->gc[PO_ROLE_MAIN];

		det_ev_int(ctx, finding, PO_EVIDENCE_GC_COLLECTIONS, gc->collections);
		det_ev_number(ctx, finding, PO_EVIDENCE_GC_COLLECTED_PER_COLLECTION,
			      (double)gc->collected / (double)gc->collections);
		det_ev_int(ctx, finding, PO_EVIDENCE_GC_UNCOLLECTABLE, gc->uncollectable);
	}
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

/*
 * Collections that free fewer objects than this each spend their time walking the objects
 * that stay alive (gc.freeze() helps); more, and the loop makes reference cycles.
 */
#define GC_FEW_FREED 1000.0

/* The collector's advice, from what the training loop's collections freed. */
static const char *gc_advice(struct det_ctx *ctx)
{
	const struct po_gc_counts *gc = &ctx->analysis->gc[PO_ROLE_MAIN];
	double freed = gc->collections ? (double)gc->collected / (double)gc->collections : 0;
	const char *uncollectable =
	    gc->uncollectable ? det_printf(ctx, "; %lld objects were uncollectable (gc.garbage)",
					   (long long)gc->uncollectable)
			      : "";

	if (!gc->collections)
		return "spare the garbage collector the long-lived objects: gc.freeze() once the "
		       "dataset and model are built, higher thresholds (gc.set_threshold), or "
		       "fewer Python objects in the dataset (NumPy arrays instead of lists)";
	if (freed < GC_FEW_FREED)
		return det_printf(
		    ctx,
		    "the training loop's %lld collections freed %.0f objects each: their time "
		    "goes to walking the objects that stay alive; gc.freeze() once the dataset "
		    "and model are built takes those out of the collector's view (or higher "
		    "thresholds, gc.set_threshold, or fewer Python objects in the dataset: NumPy "
		    "arrays instead of lists)%s",
		    (long long)gc->collections, freed, uncollectable);
	return det_printf(ctx,
			  "each of the training loop's %lld collections freed %.0f objects: the "
			  "loop makes reference cycles (objects that refer to each other, such as "
			  "an exception kept with its traceback, or a batch held by a closure) "
			  "that only the collector frees; break them so that reference counting "
			  "frees them at once, or collect less often (gc.set_threshold)%s",
			  (long long)gc->collections, freed, uncollectable);
}

static const char *advice_for(struct det_ctx *ctx, enum po_category cause)
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
	case PO_CAT_GC:
		return gc_advice(ctx);
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
		    "Every %lld steps a step takes %.2f ms longer than the median step%s "
		    "(%.2f ms; %zu of %zu steps), costing %.1f%% of the run; the extra time "
		    "is mostly %s.",
		    (long long)out->period, out->excess_ns / (double)out->count / DET_NS_PER_MS,
		    out->level_count > 1 ? " of its level" : "", out->median_ns / DET_NS_PER_MS,
		    out->count, ctx->clean_count, share_pct, po_category_name(out->cause));
	else if (out->level_count > 1)
		det_summary(ctx, finding,
			    "%zu of %zu steps are clearly slower than the median step of their "
			    "level (the run has %zu levels, see level-shift), at irregular "
			    "intervals, costing %.1f%% of the run; their extra time is mostly %s.",
			    out->count, ctx->clean_count, out->level_count, share_pct,
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
	    ctx, finding, PO_KNOB_CATEGORY + out->cause, advice_for(ctx, out->cause),
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
