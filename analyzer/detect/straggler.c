/*
 * straggler.c: the straggler finding: the rank whose late arrival at the synchronising
 * collectives makes the other ranks wait, how much the job loses per step, and why the
 * rank is late, from its own breakdown.
 *
 * Arrival times, not phase durations: a collective ends on every rank within microseconds,
 * so the ranks' steps take the same wall time whoever is slow; only when each rank entered
 * the collective tells them apart (model/ranks.c matches the collectives by group and
 * sequence number). The loss of a step is the sum over its collectives of the longest less
 * the shortest wait; the straggler is the rank that arrived last in the steps whose losses
 * sum highest, and its cause the category of its own steps that exceeds the other ranks'
 * median most (the others' extra time is waiting in backward, never the straggler's).
 *
 * Every step loses the ranks' arrival spread, jitter included, and someone is always last:
 * balanced ranks on shared cores lose 13-16% of their step to it. So that rank is a
 * straggler only when it stands out of the run's own jitter: its mean lateness (what would
 * go if it kept the others' pace) is a share of the step and lies several standard errors
 * of that mean above zero.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "detect_internal.h"
#include "rules.h"
#include "stats/stats.h"

static enum po_straggler_cause cause_of_category(enum po_category category)
{
	switch (category) {
	case PO_CAT_DATA_WAIT:
	case PO_CAT_LOAD:
	case PO_CAT_PREPROCESS:
	case PO_CAT_COLLATE:
	case PO_CAT_HANDOFF:
	case PO_CAT_H2D_COPY:
		return PO_STRAGGLER_CAUSE_INPUT;
	case PO_CAT_FORWARD:
	case PO_CAT_BACKWARD:
	case PO_CAT_OPTIMIZER:
		return PO_STRAGGLER_CAUSE_COMPUTE;
	case PO_CAT_GPU_SYNC:
		return PO_STRAGGLER_CAUSE_GPU;
	case PO_CAT_CHECKPOINT:
		return PO_STRAGGLER_CAUSE_CHECKPOINT;
	case PO_CAT_EVAL:
		return PO_STRAGGLER_CAUSE_EVAL;
	default:
		return PO_STRAGGLER_CAUSE_OTHER;
	}
}

/* The ranks' median mean step: the step the job takes. */
static double job_step_ns(const struct po_distributed *d, double *scratch)
{
	size_t count = 0;

	for (size_t r = 0; r < d->rank_count; r++) {
		if (!isnan(d->ranks[r].mean_step_ns))
			scratch[count++] = d->ranks[r].mean_step_ns;
	}
	return po_stats_median(scratch, count);
}

/*
 * The steps per synchronising step. With gradient accumulation (DDP's no_sync() in all but
 * the last of k micro-steps) only every k-th step holds the collectives, and only those are
 * matched: a loss per matched step is a loss per k steps. The median gap between
 * consecutive matched step numbers, in sampling strides (a partial summary keeps every
 * stride-th step); 1 for a job that synchronises every step.
 */
static double steps_per_sync(const struct po_distributed *d)
{
	double *gaps = d->step_count > 1 ? malloc((d->step_count - 1) * sizeof(*gaps)) : NULL;
	int64_t stride = d->step_stride > 0 ? d->step_stride : 1;
	double median;

	if (!gaps)
		return 1;
	for (size_t s = 1; s < d->step_count; s++)
		gaps[s - 1] = (double)(d->steps[s].step - d->steps[s - 1].step) / (double)stride;
	median = po_stats_median(gaps, d->step_count - 1);
	free(gaps);
	return isnan(median) || median < 1 ? 1 : round(median);
}

/* The rank the most lost time is owed to, and that time summed over the matched steps. */
static size_t lost_owner(const struct po_distributed *d, double *lost_by_rank)
{
	size_t best = 0;

	for (size_t r = 0; r < d->rank_count; r++)
		lost_by_rank[r] = 0;
	for (size_t s = 0; s < d->step_count; s++) {
		for (size_t r = 0; r < d->rank_count; r++) {
			if (d->ranks[r].rank == d->steps[s].last_rank)
				lost_by_rank[r] += (double)d->steps[s].lost_ns;
		}
	}
	for (size_t r = 1; r < d->rank_count; r++) {
		if (lost_by_rank[r] > lost_by_rank[best])
			best = r;
	}
	return best;
}

/* The category of the straggler's own step that exceeds the other ranks' median most. */
static void find_cause(const struct po_distributed *d, size_t straggler, double *scratch,
		       struct po_straggler *out)
{
	double best_excess = -INFINITY;
	enum po_category best = PO_CAT_OTHER;

	for (int c = 0; c < PO_CATEGORY_COUNT; c++) {
		size_t count = 0;
		double excess;

		for (size_t r = 0; r < d->rank_count; r++) {
			if (r != straggler && !isnan(d->ranks[r].mean_step_ns))
				scratch[count++] = d->ranks[r].category_mean_ns[c];
		}
		excess = d->ranks[straggler].category_mean_ns[c] - po_stats_median(scratch, count);
		if (excess > best_excess) {
			best_excess = excess;
			best = (enum po_category)c;
		}
	}
	out->cause_category = best;
	out->cause_excess_ns = best_excess;
	out->cause = best_excess > 0 ? cause_of_category(best) : PO_STRAGGLER_CAUSE_OTHER;
}

/*
 * The lateness of the rank at position r in each matched step (the other ranks' median wait
 * less its own: a rank that arrives last waits least), into lateness; returns how many.
 * others: scratch for rank_count values.
 */
static size_t lateness_per_step(const struct po_distributed *d, size_t r, double *others,
				double *lateness)
{
	size_t count = 0;

	for (size_t s = 0; s < d->step_count; s++) {
		const int64_t *waited = &d->waited_ns[s * d->rank_count];
		size_t other_count = 0;

		if (waited[r] < 0)
			continue;
		for (size_t o = 0; o < d->rank_count; o++) {
			if (o != r && waited[o] >= 0)
				others[other_count++] = (double)waited[o];
		}
		if (other_count)
			lateness[count++] =
			    po_stats_median(others, other_count) - (double)waited[r];
	}
	return count;
}

/*
 * The rank's mean lateness and the run's jitter of it (1.4826 MADs about the median: an
 * occasional straggler's few late steps do not widen it); false without two steps.
 */
static bool measure_lateness(const struct po_distributed *d, size_t r, struct po_straggler *out)
{
	double *lateness = malloc((d->step_count + d->rank_count) * sizeof(*lateness));
	size_t count;
	bool known;

	out->lateness_ns_per_step = NAN;
	out->jitter_ns = NAN;
	if (!lateness || !d->waited_ns) {
		free(lateness);
		return false;
	}
	count = lateness_per_step(d, r, lateness + d->step_count, lateness);
	known = count >= 2;
	if (known) {
		out->lateness_ns_per_step = po_stats_mean(lateness, count);
		out->jitter_ns =
		    po_stats_mad_scaled(lateness, count, po_stats_median(lateness, count));
	}
	free(lateness);
	return known;
}

/*
 * Whether the rank stands out of the run's jitter: its mean lateness at least
 * straggler.stand_out standard errors above zero, and large enough to matter.
 */
static bool stands_out(const struct det_ctx *ctx, const struct po_distributed *d,
		       const struct po_straggler *s, double step_ns)
{
	double standard_error = s->jitter_ns / sqrt((double)d->step_count);
	double lateness = s->lateness_ns_per_step;

	return !isnan(lateness) && !isnan(step_ns) && step_ns > 0 &&
	       lateness >= ctx->rules->straggler_min_lost_ms * DET_NS_PER_MS &&
	       100 * lateness / step_ns >= ctx->rules->straggler_min_lost_pct &&
	       lateness >= ctx->rules->straggler_stand_out * standard_error;
}

static double others_wait_ns(const struct po_distributed *d, size_t straggler)
{
	double sum = 0;
	size_t count = 0;

	for (size_t r = 0; r < d->rank_count; r++) {
		if (r != straggler && !isnan(d->ranks[r].wait_ns_per_step)) {
			sum += d->ranks[r].wait_ns_per_step;
			count++;
		}
	}
	return count ? sum / (double)count : NAN;
}

static const char *cause_words(enum po_straggler_cause cause)
{
	switch (cause) {
	case PO_STRAGGLER_CAUSE_INPUT:
		return "its input: it waits longer for its batches";
	case PO_STRAGGLER_CAUSE_COMPUTE:
		return "its compute: its forward, backward or optimizer takes longer";
	case PO_STRAGGLER_CAUSE_GPU:
		return "its GPU: it waits longer for its device";
	case PO_STRAGGLER_CAUSE_CHECKPOINT:
		return "its checkpoints";
	case PO_STRAGGLER_CAUSE_EVAL:
		return "its evaluation";
	default:
		return "time outside the marked stages";
	}
}

/*
 * The job's step if the straggler kept the others' pace: never shorter than the work the
 * others still do, the step less their wait for it (the loss also holds the jitter among
 * them, which stays).
 */
static double step_at_pace_ns(const struct po_straggler *s, double step_ns)
{
	double gain_ns = s->lost_ns_per_step;

	if (!isnan(s->others_wait_ns_per_step) && s->others_wait_ns_per_step < gain_ns)
		gain_ns = s->others_wait_ns_per_step;
	return gain_ns > 0 ? step_ns - gain_ns : step_ns;
}

static void recommend(struct det_ctx *ctx, struct po_finding *finding, const struct po_straggler *s,
		      double step_ns)
{
	double saved_ns = step_at_pace_ns(s, step_ns);
	const char *effect = det_printf(
	    ctx, "the job's step %.1f ms -> %.1f ms (%.2fx) when rank %d keeps up",
	    step_ns / DET_NS_PER_MS, saved_ns / DET_NS_PER_MS, step_ns / saved_ns, (int)s->rank);

	if (s->cause == PO_STRAGGLER_CAUSE_INPUT)
		det_recommend(ctx, finding, PO_KNOB_NUM_WORKERS,
			      det_printf(ctx, "speed up rank %d's input pipeline", (int)s->rank),
			      det_printf(ctx,
					 "rank %d spends %.1f ms per step more than the others in "
					 "%s: give its DataLoader more workers, or move its data "
					 "to faster storage",
					 (int)s->rank, s->cause_excess_ns / DET_NS_PER_MS,
					 po_category_name(s->cause_category)),
			      effect, saved_ns / DET_NS_PER_MS, step_ns / saved_ns);
	else
		det_recommend(ctx, finding, PO_KNOB_BALANCE,
			      det_printf(ctx, "balance rank %d's work", (int)s->rank),
			      det_printf(ctx,
					 "rank %d spends %.1f ms per step more than the others in "
					 "%s: give it less work, or find what slows its host",
					 (int)s->rank, s->cause_excess_ns / DET_NS_PER_MS,
					 po_category_name(s->cause_category)),
			      effect, saved_ns / DET_NS_PER_MS, step_ns / saved_ns);
}

static enum po_status add_finding(struct det_ctx *ctx, const struct po_distributed *d,
				  const struct po_straggler *s, double step_ns, double per_sync)
{
	const char *step_words =
	    per_sync > 1 ? det_printf(ctx, "synchronising step (%.0f steps)", per_sync) : "step";
	double lost_pct = 100 * s->lost_ns_per_step / step_ns;
	double late_pct = 100 * s->lateness_ns_per_step / step_ns;
	char missing[256], tail[320] = "";
	struct po_finding *finding =
	    det_finding_add(ctx, PO_FINDING_STRAGGLER,
			    late_pct >= ctx->rules->straggler_critical_pct ? PO_SEVERITY_CRITICAL
									   : PO_SEVERITY_WARNING,
			    s->chronic ? 0.9 : 0.6);

	if (!finding)
		return PO_STATUS_NOMEM;
	if (d->missing_rank_count > 0) {
		po_distributed_missing_words(d, missing, sizeof(missing));
		snprintf(tail, sizeof(tail),
			 " Of the present ranks only: %s, and the job may lose more to them.",
			 missing);
	}
	det_summary(ctx, finding,
		    "Rank %d holds the job back (%s): it arrived last at the collectives in "
		    "%.0f%% of %zu steps, %.1f ms after the others on average against the run's "
		    "jitter of %.1f ms, the other ranks waited %.1f ms per step for it, and the "
		    "job loses %.1f ms of each %.1f ms %s (%.0f%%). Cause: %s (%s %.1f ms per "
		    "step beyond the other ranks').%s",
		    (int)s->rank, s->chronic ? "chronic" : "occasional", s->last_pct, d->step_count,
		    s->lateness_ns_per_step / DET_NS_PER_MS, s->jitter_ns / DET_NS_PER_MS,
		    s->others_wait_ns_per_step / DET_NS_PER_MS, s->lost_ns_per_step / DET_NS_PER_MS,
		    step_ns / DET_NS_PER_MS, step_words, lost_pct, cause_words(s->cause),
		    po_category_name(s->cause_category), s->cause_excess_ns / DET_NS_PER_MS, tail);
	det_ev_int(ctx, finding, PO_EVIDENCE_RANK, s->rank);
	det_ev_text(ctx, finding, PO_EVIDENCE_PATTERN, s->chronic ? "chronic" : "occasional");
	det_ev_text(ctx, finding, PO_EVIDENCE_CAUSE, po_straggler_cause_name(s->cause));
	det_ev_text(ctx, finding, PO_EVIDENCE_CAUSE_CATEGORY, po_category_name(s->cause_category));
	det_ev_number(ctx, finding, PO_EVIDENCE_CAUSE_EXCESS_MS_PER_STEP,
		      s->cause_excess_ns / DET_NS_PER_MS);
	det_ev_number(ctx, finding, PO_EVIDENCE_LAST_PCT, s->last_pct);
	det_ev_number(ctx, finding, PO_EVIDENCE_LOST_MS_PER_STEP,
		      s->lost_ns_per_step / DET_NS_PER_MS);
	det_ev_number(ctx, finding, PO_EVIDENCE_OTHERS_WAIT_MS_PER_STEP,
		      s->others_wait_ns_per_step / DET_NS_PER_MS);
	det_ev_number(ctx, finding, PO_EVIDENCE_LATENESS_MS_PER_STEP,
		      s->lateness_ns_per_step / DET_NS_PER_MS);
	det_ev_number(ctx, finding, PO_EVIDENCE_JITTER_MS, s->jitter_ns / DET_NS_PER_MS);
	det_ev_number(ctx, finding, PO_EVIDENCE_JOB_STEP_MS, step_ns / DET_NS_PER_MS);
	det_ev_int(ctx, finding, PO_EVIDENCE_RANKS, (int64_t)d->rank_count);
	det_ev_int(ctx, finding, PO_EVIDENCE_MATCHED_STEPS, (int64_t)d->step_count);
	recommend(ctx, finding, s, step_ns);
	return PO_STATUS_OK;
}

enum po_status det_straggler(struct det_ctx *ctx)
{
	struct po_distributed *d = ctx->analysis->distributed;
	struct po_straggler s = {.rank = -1,
				 .cause_category = PO_CAT_OTHER,
				 .lateness_ns_per_step = NAN,
				 .jitter_ns = NAN};
	double *scratch, *lost_by_rank, step_ns, per_sync;
	size_t owner;
	enum po_status status = PO_STATUS_OK;

	if (!d || d->rank_count < 2 || (double)d->step_count < ctx->rules->straggler_min_steps)
		return PO_STATUS_OK;
	scratch = malloc(2 * d->rank_count * sizeof(*scratch));
	if (!scratch)
		return PO_STATUS_NOMEM;
	lost_by_rank = scratch + d->rank_count;
	per_sync = steps_per_sync(d);
	step_ns = job_step_ns(d, scratch) * per_sync; /* the job's synchronising step */
	owner = lost_owner(d, lost_by_rank);
	if (measure_lateness(d, owner, &s) && stands_out(ctx, d, &s, step_ns)) {
		s.present = true;
		s.rank = d->ranks[owner].rank;
		s.last_pct = d->ranks[owner].last_pct;
		s.chronic = s.last_pct >= ctx->rules->straggler_chronic_pct;
		s.lost_ns_per_step = d->lost_ns_per_step;
		s.others_wait_ns_per_step = others_wait_ns(d, owner);
		find_cause(d, owner, scratch, &s);
		status = add_finding(ctx, d, &s, step_ns, per_sync);
	}
	d->straggler = s;
	free(scratch);
	return status;
}
