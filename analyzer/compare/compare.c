/*
 * compare.c: the metrics of a comparison and whether each change exceeds run-to-run noise.
 *
 * Metrics with a per-step distribution (step time, each breakdown category, GPU busy share)
 * are judged by a Mann-Whitney rank test on the two distributions and a bootstrap interval
 * of the difference of medians (or of p95 for steps.p95_ms); a change is significant when
 * the test rejects at alpha AND the relative change is at least min_effect_pct, so tiny but
 * "significant" changes on long runs are reported as noise. Single numbers per run
 * (throughput, worker utilization, memory growth) are reported untested. When other
 * programs' load differed between the runs (compare.load_difference_pct of the cores), a
 * change in time the test would call significant is inconclusive: the rank test sees the
 * steps of each run, not what the other programs took from them.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "compare.h"
#include "stats/stats.h"

void po_compare_config_init(struct po_compare_config *config)
{
	config->alpha = 0.01;
	config->min_effect_pct = 5.0;
	config->load_difference_pct = 25.0;
	config->bootstrap_rounds = 1000;
}

struct builder {
	const struct po_digest *old_run;	/* weak */
	const struct po_digest *new_run;	/* weak */
	const struct po_compare_config *config; /* weak */
	struct po_comparison *comparison;	/* weak: in the arena */
	size_t capacity;
};

static struct po_metric_change *add_metric(struct builder *b, enum po_cmp_metric id,
					   double old_value, double new_value)
{
	struct po_metric_change *metric;

	if (b->comparison->metric_count == b->capacity)
		return NULL;
	metric = &b->comparison->metrics[b->comparison->metric_count++];
	metric->metric = id;
	metric->old_value = old_value;
	metric->new_value = new_value;
	metric->delta = new_value - old_value;
	metric->delta_pct = old_value != 0 ? 100.0 * metric->delta / fabs(old_value) : NAN;
	metric->judgement = PO_CHANGE_UNTESTED;
	metric->p_value = metric->ci_low = metric->ci_high = NAN;
	return metric;
}

/* Tests two per-step distributions; the metric's values are their q-quantiles or means. */
static void judge(struct builder *b, struct po_metric_change *metric, const double *old_values,
		  const double *new_values, double q)
{
	size_t n_old = b->old_run->step_count, n_new = b->new_run->step_count;
	unsigned rounds = b->config->bootstrap_rounds;

	if (!metric)
		return;
	metric->p_value = po_stats_mann_whitney_p(old_values, n_old, new_values, n_new);
	if (n_old + n_new > 20000)
		rounds = rounds > 200 ? 200 : rounds;
	po_stats_bootstrap_interval(old_values, n_old, new_values, n_new, q, rounds,
				    &metric->ci_low, &metric->ci_high);
	if (isnan(metric->p_value))
		return;
	metric->judgement = metric->p_value < b->config->alpha &&
				    fabs(metric->delta_pct) >= b->config->min_effect_pct
				? PO_CHANGE_SIGNIFICANT
				: PO_CHANGE_NOISE;
	if (metric->judgement == PO_CHANGE_SIGNIFICANT && b->comparison->load.differs)
		metric->judgement = PO_CHANGE_INCONCLUSIVE;
}

/* Whether other programs' load differed between the runs, and the sentence that says so. */
static bool measure_load(struct builder *b, struct po_arena *arena)
{
	struct po_compare_load *load = &b->comparison->load;
	const struct po_digest *o = b->old_run, *n = b->new_run;
	char note[320];

	double share = b->config->load_difference_pct / 100;
	bool cores_known;

	*load = (struct po_compare_load){.old_cores = o->others_cores,
					 .new_cores = n->others_cores,
					 .old_stretch = o->cpu_stretch,
					 .new_stretch = n->cpu_stretch,
					 .old_left = NAN,
					 .new_left = NAN,
					 .cpu_count = fmax(o->cpu_count, n->cpu_count)};
	cores_known = !isnan(o->others_cores) && !isnan(n->others_cores) && load->cpu_count > 0;
	load->by_stretch = o->cpu_stretch >= 1 && n->cpu_stretch >= 1;
	load->known = load->by_stretch || cores_known;
	if (cores_known) {
		/* The cores the others left each run, at least 0.1 (as the detectors take). */
		load->old_left = fmax(o->cpu_count - o->others_cores, fmin(o->cpu_count, 0.1));
		load->new_left = fmax(n->cpu_count - n->others_cores, fmin(n->cpu_count, 0.1));
	}
	if (load->by_stretch)
		load->differs = fabs(n->cpu_stretch - o->cpu_stretch) >=
				fmax(n->cpu_stretch, o->cpu_stretch) * share;
	else if (cores_known)
		load->differs = fabs(load->new_left - load->old_left) >=
				fmax(load->old_left, load->new_left) * share;
	if (!load->differs)
		return true;
	if (load->by_stretch)
		snprintf(note, sizeof(note),
			 "the recorded processes waited for a CPU %.0f%% as long as they ran in "
			 "this run and %.0f%% in the baseline (other programs' load differed): a "
			 "change in time between them may be the machine's, so changes beyond "
			 "noise are inconclusive; compare runs recorded under the same load",
			 100 * (n->cpu_stretch - 1), 100 * (o->cpu_stretch - 1));
	else
		snprintf(note, sizeof(note),
			 "other programs used %.2f of the %.0f cores while this run was recorded "
			 "and %.2f while the baseline was (%.2f cores left to it against %.2f): a "
			 "change in time between them may be theirs, so changes beyond noise are "
			 "inconclusive; compare runs recorded under the same load",
			 n->others_cores, load->cpu_count, o->others_cores, load->new_left,
			 load->old_left);
	load->note = po_arena_strdup(arena, note);
	return load->note != NULL;
}

static void add_step_metrics(struct builder *b)
{
	const double *o = b->old_run->step_ms, *n = b->new_run->step_ms;
	size_t n_old = b->old_run->step_count, n_new = b->new_run->step_count;
	struct po_metric_change *p50, *p95, *mean;

	p50 = add_metric(b, PO_CMP_STEPS_P50, po_stats_quantile(o, n_old, 0.5),
			 po_stats_quantile(n, n_new, 0.5));
	judge(b, p50, o, n, 0.5);
	p95 = add_metric(b, PO_CMP_STEPS_P95, po_stats_quantile(o, n_old, 0.95),
			 po_stats_quantile(n, n_new, 0.95));
	judge(b, p95, o, n, 0.95);
	mean = add_metric(b, PO_CMP_STEPS_MEAN, po_stats_mean(o, n_old), po_stats_mean(n, n_new));
	judge(b, mean, o, n, 0.5);
	/* Throughput is the inverse of step time: the step-time test judges it too. */
	struct po_metric_change *rate =
	    add_metric(b, PO_CMP_STEPS_PER_S, b->old_run->steps_per_s, b->new_run->steps_per_s);
	if (rate && mean) {
		rate->judgement = mean->judgement;
		rate->p_value = mean->p_value;
	}
	add_metric(b, PO_CMP_SAMPLES_PER_S, b->old_run->samples_per_s, b->new_run->samples_per_s);
}

static void add_breakdown_metrics(struct builder *b)
{
	for (int c = 0; c < PO_CATEGORY_COUNT; c++) {
		const double *o = b->old_run->category_ms[c], *n = b->new_run->category_ms[c];
		double old_mean = po_stats_mean(o, b->old_run->step_count);
		double new_mean = po_stats_mean(n, b->new_run->step_count);

		if (!(old_mean > 0.001) && !(new_mean > 0.001))
			continue;
		judge(b, add_metric(b, PO_CMP_BREAKDOWN + c, old_mean, new_mean), o, n, 0.5);
	}
}

static void add_resource_metrics(struct builder *b)
{
	const struct po_digest *o = b->old_run, *n = b->new_run;

	if (o->gpu_busy_pct && n->gpu_busy_pct)
		judge(b,
		      add_metric(b, PO_CMP_GPU_BUSY, o->gpu_busy_share_pct, n->gpu_busy_share_pct),
		      o->gpu_busy_pct, n->gpu_busy_pct, 0.5);
	if (!isnan(o->worker_busy_pct) || !isnan(n->worker_busy_pct))
		add_metric(b, PO_CMP_WORKERS_BUSY, o->worker_busy_pct, n->worker_busy_pct);
	if (o->live_bytes && n->live_bytes)
		add_metric(b, PO_CMP_MEMORY_GROWTH, po_stats_slope(o->live_bytes, o->live_count),
			   po_stats_slope(n->live_bytes, n->live_count));
}

static bool has_finding(const struct po_digest *digest, const char *id, const char **severity)
{
	for (size_t i = 0; i < digest->finding_count; i++) {
		if (strcmp(digest->finding_ids[i], id) == 0) {
			*severity = digest->finding_severities[i];
			return true;
		}
	}
	*severity = NULL;
	return false;
}

/* Findings by id: new (only in the new run), resolved (only in the old), persisting. */
static void add_findings(struct builder *b, struct po_arena *arena)
{
	const struct po_digest *runs[2] = {b->new_run, b->old_run};
	struct po_comparison *comparison = b->comparison;
	size_t capacity = b->old_run->finding_count + b->new_run->finding_count;

	comparison->findings =
	    po_arena_alloc(arena, (capacity ? capacity : 1) * sizeof(*comparison->findings));
	if (!comparison->findings)
		return;
	for (int r = 0; r < 2; r++) {
		for (size_t i = 0; i < runs[r]->finding_count; i++) {
			const char *id = runs[r]->finding_ids[i], *old_sev, *new_sev;
			bool in_old = has_finding(b->old_run, id, &old_sev);
			bool in_new = has_finding(b->new_run, id, &new_sev);
			struct po_finding_change *change;

			if (r == 1 && in_new)
				continue; /* already listed from the new run */
			for (size_t k = 0; k < comparison->finding_count; k++)
				if (strcmp(comparison->findings[k].id, id) == 0)
					goto next;
			change = &comparison->findings[comparison->finding_count++];
			change->id = id;
			change->old_severity = old_sev;
			change->new_severity = new_sev;
			change->change = in_old && in_new ? PO_FINDING_PERSISTING
					 : in_new	  ? PO_FINDING_NEW
							  : PO_FINDING_RESOLVED;
			comparison->new_findings += change->change == PO_FINDING_NEW;
			comparison->resolved_findings += change->change == PO_FINDING_RESOLVED;
		next:;
		}
	}
}

static void range_of(const double *values, size_t count, double *low, double *high)
{
	for (size_t i = 0; i < count; i++) {
		if (isnan(values[i]))
			continue;
		*low = fmin(*low, values[i]);
		*high = fmax(*high, values[i]);
	}
}

void po_compare_step_histograms(struct po_comparison *comparison)
{
	double low = INFINITY, high = -INFINITY;

	range_of(comparison->old_step_ms, comparison->old_step_count, &low, &high);
	range_of(comparison->new_step_ms, comparison->new_step_count, &low, &high);
	if (!po_stats_histogram_axis(&comparison->old_histogram, PO_COMPARE_HISTOGRAM_BINS, low,
				     high))
		return;
	comparison->new_histogram = comparison->old_histogram;
	po_stats_histogram_add(&comparison->old_histogram, comparison->old_step_ms,
			       comparison->old_step_count);
	po_stats_histogram_add(&comparison->new_histogram, comparison->new_step_ms,
			       comparison->new_step_count);
}

enum po_status po_compare(const struct po_digest *old_run, const struct po_digest *new_run,
			  const struct po_compare_config *config, struct po_arena *arena,
			  struct po_comparison **out, struct po_error *err)
{
	struct po_comparison *comparison = po_arena_alloc(arena, sizeof(*comparison));
	struct builder b = {old_run, new_run, config, comparison, 8 + PO_CATEGORY_COUNT};

	if (!comparison || !(comparison->metrics = po_arena_alloc(
				 arena, b.capacity * sizeof(*comparison->metrics)))) {
		po_error_set(err, "out of memory");
		return PO_STATUS_NOMEM;
	}
	comparison->baseline = old_run->label;
	comparison->old_verdict = old_run->verdict;
	comparison->new_verdict = new_run->verdict;
	comparison->old_step_ms = old_run->step_ms;
	comparison->old_step_count = old_run->step_count;
	comparison->new_step_ms = new_run->step_ms;
	comparison->new_step_count = new_run->step_count;
	po_compare_step_histograms(comparison);
	if (!measure_load(&b, arena)) {
		po_error_set(err, "out of memory");
		return PO_STATUS_NOMEM;
	}
	add_step_metrics(&b);
	add_breakdown_metrics(&b);
	add_resource_metrics(&b);
	add_findings(&b, arena);
	if (!comparison->findings) {
		po_error_set(err, "out of memory");
		return PO_STATUS_NOMEM;
	}
	*out = comparison;
	return PO_STATUS_OK;
}
