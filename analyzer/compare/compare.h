/*
 * compare.h: compares two runs (a baseline and a new one): what changed, by how much, and
 * whether the change exceeds run-to-run noise, judged on the per-step distributions (a
 * Mann-Whitney rank test and a bootstrap interval of the difference of medians), plus the
 * findings that appeared and were resolved; and the --fail-if gates for CI.
 *
 * Both runs are first reduced to a digest, from an analysis or from a summary.json, so a
 * baseline can be an earlier trace or an earlier report.
 */
#ifndef PO_COMPARE_H
#define PO_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "common/arena.h"
#include "common/status.h"
#include "model/result.h"

/*
 * One run reduced to what a comparison needs: about 17 doubles a step (136 bytes). The
 * per-step series are owned (malloc'd, grown while a baseline is read); the rest lives in
 * the digest's arena.
 */
struct po_digest {
	struct po_arena *arena;			/* owned */
	size_t capacity;			/* steps the series below can hold */
	const char *label;			/* "baseline" / "new", or a path */
	double *step_ms;			/* clean steps' wall times, in trace order */
	double *category_ms[PO_CATEGORY_COUNT]; /* per clean step */
	double *gpu_busy_pct;			/* per clean step; NULL when no GPU activity */
	double *live_bytes; /* per step host live bytes, else RSS; NULL when none */
	size_t step_count;
	size_t live_count;
	double steps_per_s;
	double samples_per_s;	   /* NaN when unknown */
	double worker_busy_pct;	   /* the run's steady workers_busy_pct; NaN with none */
	double gpu_busy_share_pct; /* the run's steady gpu_busy_pct; NaN without GPU */
	double others_cores;	   /* what other programs used of the machine; NaN unknown */
	double cpu_count;	   /* the machine's cores; NaN unknown */
	/* (CPU time + run-queue wait) / CPU time of the recorded processes: how much longer
	 * their CPU work took for waiting on a CPU (1: never waited); NaN unknown. */
	double cpu_stretch;
	const char *verdict;
	const char **finding_ids; /* "input-bound", ... */
	const char **finding_severities;
	size_t finding_count;
};

enum po_status po_digest_from_analysis(const struct po_analysis *analysis, const char *label,
				       struct po_digest **out, struct po_error *err) PO_NODISCARD;
/* Reads a summary.json written by profopt-analyze (schema profopt.summary/1). */
enum po_status po_digest_from_summary(const char *path, struct po_digest **out,
				      struct po_error *err) PO_NODISCARD;
/* The same from the text of a summary.json (len bytes); label names it in the digest. */
enum po_status po_digest_from_summary_text(const char *text, size_t len, const char *label,
					   struct po_digest **out,
					   struct po_error *err) PO_NODISCARD;
void po_digest_destroy(struct po_digest *digest);

/*
 * How a metric's change is judged; the names are comparison.json's "judgement".
 * NOISE: within run-to-run noise; SIGNIFICANT: beyond noise and beyond the minimum
 * effect; UNTESTED: a single number per run, no distribution to test; INCONCLUSIVE: it
 * would be significant, but other programs' load differed between the runs (struct
 * po_compare_load), so the change may be theirs. X(NAME, json)
 */
#define PO_CHANGE_JUDGEMENTS(X)                                                                    \
	X(NOISE, "noise")                                                                          \
	X(SIGNIFICANT, "significant")                                                              \
	X(UNTESTED, "untested")                                                                    \
	X(INCONCLUSIVE, "inconclusive")

enum po_change_judgement {
#define PO_X(name, json) PO_CHANGE_##name,
	PO_CHANGE_JUDGEMENTS(PO_X)
#undef PO_X
	    PO_CHANGE_JUDGEMENT_COUNT
};

/* Inline, so that the renderers need no compare library for a name. */
static inline const char *po_change_judgement_name(enum po_change_judgement judgement)
{
	static const char *const names[] = {
#define PO_X(name, json) json,
	    PO_CHANGE_JUDGEMENTS(PO_X)
#undef PO_X
	};

	return (unsigned)judgement < PO_CHANGE_JUDGEMENT_COUNT ? names[judgement] : "?";
}

/* The unit a comparison metric is in, which says how it is written. */
enum po_cmp_unit {
	PO_CMP_UNIT_MS,		    /* milliseconds */
	PO_CMP_UNIT_PER_S,	    /* a rate per second */
	PO_CMP_UNIT_PCT,	    /* a share, in percent */
	PO_CMP_UNIT_BYTES_PER_STEP, /* memory growth */
};

/*
 * The metrics a comparison can hold, each defined once: X(ID, JSON name, title, unit, lower
 * is better). Then one per step category (enum po_category), PO_CMP_BREAKDOWN + category:
 * "breakdown.<category>_ms", the mean time per step in it, in ms, lower is better (its
 * title is the category's, "... per step", which the renderers name). The names are what
 * summary.json's comparison and --fail-if say (docs/summary-schema.md).
 */
#define PO_CMP_METRICS(X)                                                                          \
	X(STEPS_P50, "steps.p50_ms", "Median step time", MS, true)                                 \
	X(STEPS_P95, "steps.p95_ms", "p95 step time", MS, true)                                    \
	X(STEPS_MEAN, "steps.mean_ms", "Mean step time", MS, true)                                 \
	X(STEPS_PER_S, "steps.steps_per_s", "Steps per second", PER_S, false)                      \
	X(SAMPLES_PER_S, "steps.samples_per_s", "Samples per second", PER_S, false)                \
	X(GPU_BUSY, "gpu.busy_pct", "GPU busy share of each step", PCT, false)                     \
	X(WORKERS_BUSY, "workers.busy_pct", "Data-loader worker busy share", PCT, false)           \
	X(MEMORY_GROWTH, "memory.growth_bytes_per_step", "Live memory growth per step",            \
	  BYTES_PER_STEP, true)

enum po_cmp_metric {
#define PO_X(id, json, title, unit, lower) PO_CMP_##id,
	PO_CMP_METRICS(PO_X)
#undef PO_X
	    PO_CMP_BREAKDOWN, /* + enum po_category */
	PO_CMP_METRIC_COUNT = PO_CMP_BREAKDOWN + PO_CATEGORY_COUNT
};

/* The metric's name in summary.json and --fail-if; "?" out of range. Inline, as below. */
static inline const char *po_cmp_metric_name(enum po_cmp_metric metric)
{
	static const char *const names[PO_CMP_METRIC_COUNT] = {
#define PO_X(id, json, title, unit, lower) json,
	    PO_CMP_METRICS(PO_X)
#undef PO_X
#define PO_X(name, json) "breakdown." json "_ms",
		PO_CATEGORIES(PO_X)
#undef PO_X
	};

	return (unsigned)metric < PO_CMP_METRIC_COUNT ? names[metric] : "?";
}

/* The title of a metric that is not a category's; NULL for a category's. */
static inline const char *po_cmp_metric_plain_title(enum po_cmp_metric metric)
{
	static const char *const titles[PO_CMP_BREAKDOWN] = {
#define PO_X(id, json, title, unit, lower) title,
	    PO_CMP_METRICS(PO_X)
#undef PO_X
	};

	return (unsigned)metric < PO_CMP_BREAKDOWN ? titles[metric] : NULL;
}

static inline enum po_cmp_unit po_cmp_metric_unit(enum po_cmp_metric metric)
{
	static const enum po_cmp_unit units[PO_CMP_BREAKDOWN] = {
#define PO_X(id, json, title, unit, lower) PO_CMP_UNIT_##unit,
	    PO_CMP_METRICS(PO_X)
#undef PO_X
	};

	return (unsigned)metric < PO_CMP_BREAKDOWN ? units[metric] : PO_CMP_UNIT_MS;
}

static inline bool po_cmp_metric_lower_is_better(enum po_cmp_metric metric)
{
	static const bool lower[PO_CMP_BREAKDOWN] = {
#define PO_X(id, json, title, unit, lower) lower,
	    PO_CMP_METRICS(PO_X)
#undef PO_X
	};

	return (unsigned)metric < PO_CMP_BREAKDOWN ? lower[metric] : true;
}

/* The category a breakdown metric is about, or -1. */
static inline int po_cmp_metric_category(enum po_cmp_metric metric)
{
	return metric >= PO_CMP_BREAKDOWN && metric < PO_CMP_METRIC_COUNT
		   ? (int)(metric - PO_CMP_BREAKDOWN)
		   : -1;
}

/* The metric a name names (po_cmp_metric_name), or -1. */
static inline int po_cmp_metric_by_name(const char *name)
{
	for (int metric = 0; name && metric < PO_CMP_METRIC_COUNT; metric++)
		if (strcmp(name, po_cmp_metric_name((enum po_cmp_metric)metric)) == 0)
			return metric;
	return -1;
}

struct po_metric_change {
	enum po_cmp_metric metric;
	double old_value;
	double new_value;
	double delta;	  /* new - old */
	double delta_pct; /* NaN when old is 0 */
	enum po_change_judgement judgement;
	double p_value; /* NaN when untested */
	double ci_low;	/* 95% bootstrap interval of the difference of medians; NaN */
	double ci_high;
};

/* A finding in one run and not the other, or in both. X(NAME, json) */
#define PO_FINDING_CHANGES(X)                                                                      \
	X(NEW, "new")                                                                              \
	X(RESOLVED, "resolved")                                                                    \
	X(PERSISTING, "persisting")

enum po_finding_change_kind {
#define PO_X(name, json) PO_FINDING_##name,
	PO_FINDING_CHANGES(PO_X)
#undef PO_X
	    PO_FINDING_CHANGE_COUNT
};

static inline const char *po_finding_change_name(enum po_finding_change_kind change)
{
	static const char *const names[] = {
#define PO_X(name, json) json,
	    PO_FINDING_CHANGES(PO_X)
#undef PO_X
	};

	return (unsigned)change < PO_FINDING_CHANGE_COUNT ? names[change] : "?";
}

struct po_finding_change {
	const char *id;
	enum po_finding_change_kind change;
	const char *old_severity; /* NULL when absent */
	const char *new_severity;
};

#define PO_COMPARE_HISTOGRAM_BINS 40

/*
 * What each run got of the CPU. Where both runs recorded their processes' CPU time and
 * run-queue waits, the stretch of their CPU work (struct po_digest's cpu_stretch); else
 * what other programs used of the machine (summary.json's machine.others_cores) and the
 * cores that left to the recorded program. When the stretch or the cores left differ by
 * compare.load_difference_pct of the larger or more, a change in time that would be
 * significant is inconclusive.
 */
struct po_compare_load {
	bool known;	    /* both runs measured it */
	bool by_stretch;    /* judged by cpu_stretch (else by the cores left) */
	double old_stretch; /* NaN unknown */
	double new_stretch;
	bool differs;	  /* by the rule's share of the cores or more */
	double old_cores; /* NaN unknown */
	double new_cores; /* NaN unknown */
	double cpu_count; /* the larger of the two runs' */
	double old_left;  /* cores the others left to each run, at least 0.1 */
	double new_left;
	const char *note; /* one sentence for every output when it differs; else NULL */
};

struct po_comparison {
	const char *baseline; /* the baseline's label */
	const char *old_verdict;
	const char *new_verdict;
	struct po_metric_change *metrics;
	size_t metric_count;
	struct po_finding_change *findings;
	size_t finding_count;
	size_t new_findings;
	size_t resolved_findings;
	const double *old_step_ms; /* weak: the baseline digest's, for overlaid histograms */
	size_t old_step_count;
	const double *new_step_ms;
	size_t new_step_count;
	/* Both runs' step times (ms) in PO_COMPARE_HISTOGRAM_BINS bins over one axis; totals 0
	 * when neither run has a step. */
	struct po_stats_histogram old_histogram;
	struct po_stats_histogram new_histogram;
	struct po_compare_load load;
	const char **gates_tripped; /* the --fail-if expressions that are true */
	size_t gates_tripped_count;
	/* The --fail-if expressions whose change holds but is inconclusive (struct
	 * po_compare_load): neither true nor false. */
	const char **gates_inconclusive;
	size_t gates_inconclusive_count;
};

struct po_compare_config {
	double alpha;		    /* significance level of the rank test (0.01) */
	double min_effect_pct;	    /* smaller relative changes are noise whatever the test (5%) */
	double load_difference_pct; /* compare.load_difference_pct (25%) */
	unsigned bootstrap_rounds;  /* 1000; the generator has a fixed seed */
};

void po_compare_config_init(struct po_compare_config *config);

/* Builds the comparison in arena (owned by the caller's analysis); old/new stay alive. */
enum po_status po_compare(const struct po_digest *old_run, const struct po_digest *new_run,
			  const struct po_compare_config *config, struct po_arena *arena,
			  struct po_comparison **out, struct po_error *err) PO_NODISCARD;

/* Fills old_histogram and new_histogram from the two step series, over one axis. */
void po_compare_step_histograms(struct po_comparison *comparison);

/* Copies the step series, label, verdicts and finding ids the comparison points to into
 * arena, so the digests can go. */
enum po_status po_comparison_take_series(struct po_comparison *comparison,
					 struct po_arena *arena) PO_NODISCARD;

/* The comparison for a terminal: significant changes, findings new and resolved, gates. */
void po_comparison_print(const struct po_comparison *comparison, FILE *out);

/*
 * A --fail-if gate: METRIC OP VALUE, OP one of > >= < <=. VALUE "+10%"/"-5%" compares the
 * relative change, "+2"/"-2" the absolute change, a plain number the new value. A gate on
 * a change trips only when the change is also significant (beyond noise). METRIC is a
 * metric name of the comparison or findings.new / findings.resolved. A gate on a change
 * judged inconclusive (other programs' load differed between the runs) is neither true nor
 * false: PO_GATE_INCONCLUSIVE.
 */
enum po_gate_outcome {
	PO_GATE_FALSE,
	PO_GATE_TRUE,
	PO_GATE_INCONCLUSIVE,
};

enum po_status po_gate_check(const char *expression, struct po_error *err) PO_NODISCARD;
enum po_status po_gate_evaluate(const struct po_comparison *comparison, const char *expression,
				enum po_gate_outcome *outcome, struct po_error *err) PO_NODISCARD;

#endif /* PO_COMPARE_H */
