/*
 * level_shift.c: the level-shift detector. Steady steps whose time moves to a new level and
 * stays there (a backbone unfrozen part-way, a cache that stops fitting, another job on the
 * machine) are a change in the run, not slow steps. The steps are taken in blocks of
 * min_steps / 10 and each block counts as its mean, so that steps that take turns (two
 * workers, one slow) count as what they take together. The blocks split where least
 * squares fit them best, or else where Pettitt's rank statistic says (which a few huge
 * blocks do not move); the split is kept when the medians on its two sides differ enough,
 * the sides hardly overlap and the change is abrupt (a drift is no level), and each side is
 * searched again, up to DET_MAX_LEVELS levels. The step where the level changes is then
 * found among the steps near its block. step-outliers judges each step against its level.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "detect_internal.h"

/* What the search reads of the steady steps, taken once, and room to work. */
struct shift_scan {
	size_t block_steps; /* steps per block */
	size_t block_count; /* whole blocks of the steady steps */
	double *walls_ns;   /* owned: each steady step's wall time, in clean order */
	double *blocks_ns;  /* owned: each block's mean wall time */
	double *values;	    /* owned: scratch, one value per steady step */
	double *series;	    /* owned: a category's time per steady step, where needed */
	double *ranks;	    /* owned: scratch, as many */
};

/* One shift between the levels [from, at) and [at, to), in blocks while searched. */
struct shift {
	size_t from, at, to;
	double before_ns, after_ns; /* the two levels' medians */
	double separation;	    /* share of (before, after) pairs ordered as the shift */
};

static double median_of(const struct shift_scan *scan, const double *series, size_t from, size_t to)
{
	memcpy(scan->values, series + from, (to - from) * sizeof(double));
	return po_stats_median(scan->values, to - from);
}

/*
 * The share of pairs (a value of [from, at), a value of [at, to)) of series ordered as the
 * medians say: the Mann-Whitney effect size, from the ranks of [from, to); NaN without
 * memory.
 */
static double separation_of(const struct shift_scan *scan, const double *series,
			    const struct shift *shift)
{
	size_t left = shift->at - shift->from, right = shift->to - shift->at;
	double rank_sum = 0, above;

	if (!po_stats_ranks(series + shift->from, left + right, scan->ranks))
		return NAN;
	for (size_t k = 0; k < left; k++)
		rank_sum += scan->ranks[k];
	above = rank_sum - (double)left * ((double)left + 1) / 2; /* pairs before > after */
	above /= (double)left * (double)right;
	return shift->after_ns > shift->before_ns ? 1 - above : above;
}

static void measure_blocks(const struct shift_scan *scan, struct shift *shift)
{
	shift->before_ns = median_of(scan, scan->blocks_ns, shift->from, shift->at);
	shift->after_ns = median_of(scan, scan->blocks_ns, shift->at, shift->to);
	shift->separation = separation_of(scan, scan->blocks_ns, shift);
}

static size_t least_blocks(const struct det_ctx *ctx, const struct shift_scan *scan)
{
	return (size_t)fmax(1, ceil(ctx->rules->level_shift_min_steps / (double)scan->block_steps));
}

/*
 * Where blocks [from, to) split best, each side at least min_steps long, by two measures:
 * the largest between-sides sum of squares (least squares: the split that fits the blocks'
 * means best) and the largest rank statistic |2 R_k - k (n + 1)| (R_k the sum of the first
 * k ranks: Pettitt's, which a few huge blocks do not move). False without room or memory.
 */
static bool split_points(const struct det_ctx *ctx, const struct shift_scan *scan, size_t from,
			 size_t to, size_t *squares_at, size_t *ranks_at)
{
	size_t n = to - from, least = least_blocks(ctx, scan);
	double rank_sum = 0, sum = 0, total = 0, best_rank = -1, best_squares = -1;

	if (n < 2 * least || !po_stats_ranks(scan->blocks_ns + from, n, scan->ranks))
		return false;
	for (size_t k = 0; k < n; k++)
		total += scan->blocks_ns[from + k];
	for (size_t k = 1; k + least <= n; k++) {
		double statistic, squares, gap;

		rank_sum += scan->ranks[k - 1];
		sum += scan->blocks_ns[from + k - 1];
		if (k < least)
			continue;
		statistic = fabs(2 * rank_sum - (double)k * ((double)n + 1));
		gap = sum / (double)k - (total - sum) / (double)(n - k);
		squares = (double)k * (double)(n - k) / (double)n * gap * gap;
		if (statistic > best_rank) {
			best_rank = statistic;
			*ranks_at = from + k;
		}
		if (squares > best_squares) {
			best_squares = squares;
			*squares_at = from + k;
		}
	}
	return true;
}

/*
 * Blocks [from, to) change level at `at` when the medians differ by min_change_pct of the
 * earlier one, the sides are separated, and the change is abrupt: half of min_steps (at
 * least 2 blocks) on either side of it differ by at least half the change, in its direction.
 */
static bool is_level(const struct det_ctx *ctx, const struct shift_scan *scan,
		     const struct shift *shift)
{
	const struct po_rules *rules = ctx->rules;
	double change = shift->after_ns - shift->before_ns, near_change;
	size_t width = (size_t)fmax(2, (double)least_blocks(ctx, scan) / 2);

	if (!(fabs(change) >= rules->level_shift_min_change_pct / 100 * shift->before_ns) ||
	    !(shift->separation >= rules->level_shift_min_separation_pct / 100))
		return false;
	if (width > shift->at - shift->from)
		width = shift->at - shift->from;
	if (width > shift->to - shift->at)
		width = shift->to - shift->at;
	near_change = median_of(scan, scan->blocks_ns, shift->at, shift->at + width) -
		      median_of(scan, scan->blocks_ns, shift->at - width, shift->at);
	return near_change * change > 0 && fabs(near_change) >= 0.5 * fabs(change);
}

/* The split of blocks [from, to) where their level changes; false where there is none. */
static bool level_split(const struct det_ctx *ctx, const struct shift_scan *scan, size_t from,
			size_t to, struct shift *shift)
{
	size_t at[2];

	if (!split_points(ctx, scan, from, to, &at[0], &at[1]))
		return false;
	for (int i = 0; i < 2; i++) {
		*shift = (struct shift){.from = from, .at = at[i], .to = to};
		measure_blocks(scan, shift);
		if (is_level(ctx, scan, shift))
			return true;
	}
	return false;
}

/* Searches blocks [from, to) and, where they split, each side again; notes the splits. */
static void find_levels(struct det_ctx *ctx, const struct shift_scan *scan, size_t from, size_t to)
{
	struct det_levels *levels = &ctx->levels;
	struct shift shift;

	if (levels->count >= DET_MAX_LEVELS || !level_split(ctx, scan, from, to, &shift))
		return;
	levels->begin[levels->count++] = shift.at;
	find_levels(ctx, scan, from, shift.at);
	find_levels(ctx, scan, shift.at, to);
}

/* The shift between level i - 1 and level i; `to` is `end` for the last level. */
static struct shift between(const struct det_levels *levels, size_t i, size_t end)
{
	size_t to = i + 1 < levels->count ? levels->begin[i + 1] : end;

	return (struct shift){.from = levels->begin[i - 1], .at = levels->begin[i], .to = to};
}

/*
 * Each side of a split was searched alone; once all are found, two neighbouring levels may
 * no longer differ as levels must (a later split took blocks from one of them). Merges the
 * first such pair; false when there is none.
 */
static bool merge_one(struct det_ctx *ctx, const struct shift_scan *scan)
{
	struct det_levels *levels = &ctx->levels;

	for (size_t i = 1; i < levels->count; i++) {
		struct shift shift = between(levels, i, scan->block_count);

		measure_blocks(scan, &shift);
		if (is_level(ctx, scan, &shift))
			continue;
		memmove(&levels->begin[i], &levels->begin[i + 1],
			(levels->count - i - 1) * sizeof(levels->begin[0]));
		levels->count--;
		return true;
	}
	return false;
}

static int compare_sizes(const void *left, const void *right)
{
	size_t a = *(const size_t *)left, b = *(const size_t *)right;

	return (a > b) - (a < b);
}

/* The sum of squared deviations of series [from, to) from their mean. */
static double squares(const double *series, size_t from, size_t to)
{
	double sum = 0, mean, total = 0;

	for (size_t i = from; i < to; i++)
		sum += series[i];
	mean = sum / (double)(to - from);
	for (size_t i = from; i < to; i++)
		total += (series[i] - mean) * (series[i] - mean);
	return total;
}

/*
 * The step where the level changes, near the start of block `block`: of the splits within a
 * block of it, the one that fits series (the time per step of the category that moved, so
 * that a stall of another beside it does not move it) two blocks either side best, by least
 * squares.
 */
static size_t change_step(const struct shift_scan *scan, const double *series, size_t block,
			  size_t low, size_t high)
{
	size_t width = 2 * scan->block_steps, first = block * scan->block_steps, best_at = first;
	size_t from = first >= low + width ? first - width : low;
	size_t to = first + width > high ? high : first + width;
	double best = INFINITY;

	for (size_t at = first - scan->block_steps; at <= first + scan->block_steps; at++) {
		double cost;

		if (at <= from || at >= to)
			continue;
		cost = squares(series, from, at) + squares(series, at, to);
		if (cost < best) {
			best = cost;
			best_at = at;
		}
	}
	return best_at;
}

/*
 * The means of the consecutive blocks of series [from, to), a shorter last block left out,
 * into out; returns their count (at least one, of the whole range when it is shorter).
 */
static size_t block_means(const struct shift_scan *scan, const double *series, size_t from,
			  size_t to, double *out)
{
	size_t block = to - from < scan->block_steps ? to - from : scan->block_steps, count = 0;

	for (size_t first = from; first + block <= to; first += block) {
		double sum = 0;

		for (size_t i = first; i < first + block; i++)
			sum += series[i];
		out[count++] = sum / (double)block;
	}
	return count;
}

/* What a level of a series takes: the median of its block means. */
static double level_value(const struct shift_scan *scan, const double *series, size_t from,
			  size_t to)
{
	return po_stats_median(scan->ranks, block_means(scan, series, from, to, scan->ranks));
}

/* A shift between two levels of steady steps: their block means' medians and separation. */
static void measure_steps(const struct shift_scan *scan, struct shift *shift)
{
	size_t before = block_means(scan, scan->walls_ns, shift->from, shift->at, scan->values);
	size_t after =
	    block_means(scan, scan->walls_ns, shift->at, shift->to, scan->values + before);
	struct shift blocks = {.from = 0, .at = before, .to = before + after};

	blocks.before_ns = shift->before_ns = po_stats_median(scan->values, before);
	blocks.after_ns = shift->after_ns = po_stats_median(scan->values + before, after);
	shift->separation = separation_of(scan, scan->values, &blocks);
}

/* A category's time per step, of the steady steps [from, to), into scan->series. */
static void category_series(const struct det_ctx *ctx, const struct shift_scan *scan,
			    enum po_category category, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++)
		scan->series[i] = (double)det_clean_step(ctx, i).category_ns[category];
}

/* The category whose level moved most in the direction of the shift, and its levels. */
static enum po_category moved_category(const struct det_ctx *ctx, const struct shift_scan *scan,
				       const struct shift *shift, double *before_ns,
				       double *after_ns)
{
	enum po_category moved = PO_CAT_OTHER;
	double sign = shift->after_ns > shift->before_ns ? 1 : -1, most = -INFINITY;

	for (int c = 0; c < PO_CATEGORY_COUNT; c++) {
		double before, after;

		category_series(ctx, scan, (enum po_category)c, shift->from, shift->to);
		before = level_value(scan, scan->series, shift->from, shift->at);
		after = level_value(scan, scan->series, shift->at, shift->to);
		if (sign * (after - before) > most) {
			most = sign * (after - before);
			moved = (enum po_category)c;
			*before_ns = before;
			*after_ns = after;
		}
	}
	return moved;
}

static void recommend(struct det_ctx *ctx, struct po_finding *finding, const struct po_step *step,
		      enum po_category moved, double moved_ns, double lost_ns)
{
	double step_ns = ctx->mean_step_ns - lost_ns / (double)ctx->clean_count;

	det_recommend(
	    ctx, finding, PO_KNOB_CATEGORY + moved,
	    det_printf(ctx,
		       "find what changed at step %lld: the report's timeline of the steps "
		       "around it shows where the %s time goes",
		       (long long)step->index, po_category_name(moved)),
	    det_printf(ctx, "%s takes %.2f ms more per step from step %lld on",
		       po_category_name(moved), moved_ns / DET_NS_PER_MS, (long long)step->index),
	    det_printf(ctx, "at most step %.2f ms -> %.2f ms at the earlier level",
		       ctx->mean_step_ns / DET_NS_PER_MS, step_ns / DET_NS_PER_MS),
	    step_ns / DET_NS_PER_MS, step_ns > 0 ? ctx->mean_step_ns / step_ns : NAN);
}

static void add_evidence(struct det_ctx *ctx, struct po_finding *finding,
			 const struct po_step *step, const struct shift *shift, double since_s,
			 double lost_pct)
{
	det_ev_int(ctx, finding, PO_EVIDENCE_STEP, step->index);
	det_ev_int(ctx, finding, PO_EVIDENCE_EPOCH, step->epoch);
	det_ev_number(ctx, finding, PO_EVIDENCE_SINCE_S, since_s);
	det_ev_number(ctx, finding, PO_EVIDENCE_BEFORE_MS, shift->before_ns / DET_NS_PER_MS);
	det_ev_number(ctx, finding, PO_EVIDENCE_AFTER_MS, shift->after_ns / DET_NS_PER_MS);
	det_ev_number(ctx, finding, PO_EVIDENCE_CHANGE_PCT,
		      100 * (shift->after_ns - shift->before_ns) / shift->before_ns);
	det_ev_int(ctx, finding, PO_EVIDENCE_STEPS_BEFORE, (int64_t)(shift->at - shift->from));
	det_ev_int(ctx, finding, PO_EVIDENCE_STEPS_AFTER, (int64_t)(shift->to - shift->at));
	det_ev_number(ctx, finding, PO_EVIDENCE_SEPARATION_PCT, 100 * shift->separation);
	det_ev_number(ctx, finding, PO_EVIDENCE_LOST_SHARE_PCT, lost_pct);
}

/* A finding for a shift between two levels, in steady steps, measured. */
static void add_finding(struct det_ctx *ctx, const struct shift_scan *scan,
			const struct shift *shift)
{
	const struct po_step step = det_clean_step(ctx, shift->at);
	double lost_ns =
	    fmax(0, shift->after_ns - shift->before_ns) * (double)(shift->to - shift->at);
	double lost_pct = 100 * lost_ns / ctx->clean_wall_ns, moved_before = 0, moved_after = 0;
	double since_s =
	    (double)(step.begin_ns - po_analysis_step(ctx->analysis, 0).begin_ns) / 1e9;
	enum po_category moved = moved_category(ctx, scan, shift, &moved_before, &moved_after);
	int64_t around[2] = {det_clean_step(ctx, shift->at - 1).index, step.index};
	struct po_finding *finding;

	finding =
	    det_finding_add(ctx, PO_FINDING_LEVEL_SHIFT,
			    lost_pct >= ctx->rules->level_shift_warning_pct ? PO_SEVERITY_WARNING
									    : PO_SEVERITY_INFO,
			    shift->separation);
	if (!finding)
		return;
	det_summary(
	    ctx, finding,
	    "From step %lld (epoch %lld, %.1f s after the first step) the steady steps take "
	    "%.2f ms instead of %.2f ms (%+.0f%%), for the %zu steps of the new level: a "
	    "change in the run, not slow steps. It is in %s: %.2f ms per step before, "
	    "%.2f ms after.",
	    (long long)step.index, (long long)step.epoch, since_s, shift->after_ns / DET_NS_PER_MS,
	    shift->before_ns / DET_NS_PER_MS,
	    100 * (shift->after_ns - shift->before_ns) / shift->before_ns, shift->to - shift->at,
	    po_category_name(moved), moved_before / DET_NS_PER_MS, moved_after / DET_NS_PER_MS);
	add_evidence(ctx, finding, &step, shift, since_s, lost_pct);
	det_ev_text(ctx, finding, PO_EVIDENCE_CATEGORY, po_category_name(moved));
	det_ev_number(ctx, finding, PO_EVIDENCE_CATEGORY_BEFORE_MS, moved_before / DET_NS_PER_MS);
	det_ev_number(ctx, finding, PO_EVIDENCE_CATEGORY_AFTER_MS, moved_after / DET_NS_PER_MS);
	det_set_steps(ctx, finding, around, 2);
	if (lost_ns > 0)
		recommend(ctx, finding, &step, moved, moved_after - moved_before, lost_ns);
}

static bool scan_init(const struct det_ctx *ctx, struct shift_scan *scan)
{
	size_t room = ctx->clean_count ? ctx->clean_count : 1;

	scan->block_steps = (size_t)fmax(1, ctx->rules->level_shift_min_steps / 10);
	scan->block_count = ctx->clean_count / scan->block_steps;
	scan->walls_ns = malloc(room * sizeof(double));
	scan->blocks_ns = malloc(room * sizeof(double));
	scan->values = malloc(room * sizeof(double));
	scan->ranks = malloc(room * sizeof(double));
	scan->series = malloc(room * sizeof(double));
	if (!scan->walls_ns || !scan->blocks_ns || !scan->values || !scan->ranks || !scan->series)
		return false;
	for (size_t i = 0; i < ctx->clean_count; i++) {
		const struct po_step step = det_clean_step(ctx, i);

		scan->walls_ns[i] = (double)(step.end_ns - step.begin_ns);
	}
	for (size_t b = 0; b < scan->block_count; b++) {
		double sum = 0;

		for (size_t i = b * scan->block_steps; i < (b + 1) * scan->block_steps; i++)
			sum += scan->walls_ns[i];
		scan->blocks_ns[b] = sum / (double)scan->block_steps;
	}
	return true;
}

static void scan_fini(struct shift_scan *scan)
{
	free(scan->walls_ns);
	free(scan->blocks_ns);
	free(scan->values);
	free(scan->ranks);
	free(scan->series);
}

/*
 * The levels' starts, found in blocks, as the steady steps where they change: found in the
 * time of the category that moved most between the two levels.
 */
static void levels_in_steps(struct det_ctx *ctx, const struct shift_scan *scan)
{
	struct det_levels *levels = &ctx->levels;
	size_t starts[DET_MAX_LEVELS];

	for (size_t i = 1; i < levels->count; i++) {
		struct shift shift = between(levels, i, scan->block_count);
		double before, after;
		enum po_category moved;

		shift.from *= scan->block_steps;
		shift.at *= scan->block_steps;
		shift.to = i + 1 < levels->count ? shift.to * scan->block_steps : ctx->clean_count;
		measure_steps(scan, &shift);
		moved = moved_category(ctx, scan, &shift, &before, &after);
		category_series(ctx, scan, moved, shift.from, shift.to);
		starts[i] = change_step(scan, scan->series, levels->begin[i], shift.from, shift.to);
	}
	for (size_t i = 1; i < levels->count; i++)
		levels->begin[i] = starts[i];
}

/* Sets ctx->levels (one level without a shift) and adds a finding per shift. */
enum po_status det_level_shift(struct det_ctx *ctx)
{
	struct shift_scan scan = {0};
	struct det_levels *levels = &ctx->levels;

	levels->count = 1;
	levels->begin[0] = 0;
	if (!ctx->clean_count)
		return PO_STATUS_OK;
	if (!scan_init(ctx, &scan)) {
		scan_fini(&scan);
		return PO_STATUS_NOMEM;
	}
	find_levels(ctx, &scan, 0, scan.block_count);
	qsort(levels->begin, levels->count, sizeof(levels->begin[0]), compare_sizes);
	while (merge_one(ctx, &scan))
		;
	levels_in_steps(ctx, &scan);
	for (size_t i = 1; i < levels->count; i++) {
		struct shift shift = between(levels, i, ctx->clean_count);

		measure_steps(&scan, &shift);
		add_finding(ctx, &scan, &shift);
	}
	scan_fini(&scan);
	return PO_STATUS_OK;
}
