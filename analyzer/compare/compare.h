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

#include "../common/arena.h"
#include "common/status.h"
#include "../model/result.h"

/* One run reduced to what a comparison needs. Owned arrays live in the digest's arena. */
struct po_digest {
	struct po_arena *arena;			/* owned */
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
 * effect; UNTESTED: a single number per run, no distribution to test. X(NAME, json)
 */
#define PO_CHANGE_JUDGEMENTS(X)                                                                    \
	X(NOISE, "noise")                                                                          \
	X(SIGNIFICANT, "significant")                                                              \
	X(UNTESTED, "untested")

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

struct po_metric_change {
	const char *name; /* "steps.p50_ms", "breakdown.data_wait_ms", "gpu.busy_pct", ... */
	double old_value;
	double new_value;
	double delta;	  /* new - old */
	double delta_pct; /* NaN when old is 0 */
	enum po_change_judgement judgement;
	double p_value; /* NaN when untested */
	double ci_low;	/* 95% bootstrap interval of the difference of medians; NaN */
	double ci_high;
	bool lower_is_better;
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
	const char **gates_tripped; /* the --fail-if expressions that are true */
	size_t gates_tripped_count;
};

struct po_compare_config {
	double alpha;		   /* significance level of the rank test (0.01) */
	double min_effect_pct;	   /* smaller relative changes are noise whatever the test (2%) */
	unsigned bootstrap_rounds; /* 1000; the generator has a fixed seed */
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
 * metric name of the comparison or findings.new / findings.resolved.
 */
enum po_status po_gate_check(const char *expression, struct po_error *err) PO_NODISCARD;
enum po_status po_gate_evaluate(const struct po_comparison *comparison, const char *expression,
				bool *tripped, struct po_error *err) PO_NODISCARD;

#endif /* PO_COMPARE_H */
