/*
 * comparison.h: the comparison with a --baseline run as the report shows it: metric names
 * and units for people, judgement badges, the summary sentence, and the section writers.
 */
#ifndef PO_REPORT_COMPARISON_H
#define PO_REPORT_COMPARISON_H

#include <stdbool.h>
#include <stddef.h>

#include "compare/compare.h"
#include "report_priv.h"

/* Colors of the two runs in every comparison chart. */
#define PO_COLOR_BASELINE 0x9aa5b1u
#define PO_COLOR_NEW 0x1c4e80u
/* The report's warning and success colors (CSS --warning, --ok). */
#define PO_COLOR_WARNING 0xc27c0eu
#define PO_COLOR_OK 0x2f7d4fu

#define PO_CMP_BADGES(X)                                                                           \
	X(BETTER, "better")                                                                        \
	X(WORSE, "worse")                                                                          \
	X(NOISE, "noise")                                                                          \
	X(UNTESTED, "untested")                                                                    \
	X(INCONCLUSIVE, "inconclusive")

enum po_cmp_badge {
#define PO_X(name, key) PO_CMP_##name,
	PO_CMP_BADGES(PO_X)
#undef PO_X
};

/* How a metric's change reads: better or worse only when beyond noise. */
enum po_cmp_badge po_cmp_badge_of(const struct po_metric_change *metric);
const char *po_cmp_badge_key(enum po_cmp_badge badge);
uint32_t po_cmp_badge_color(enum po_cmp_badge badge);
/* Whether a metric has a value in either run (rows without one are left out). */
bool po_cmp_metric_shown(const struct po_metric_change *metric);
/* "Median step time", "Data wait per step" (compare.h, PO_CMP_METRICS). */
void po_cmp_metric_title(enum po_cmp_metric metric, char *out, size_t out_size);
/* A value in the metric's unit ("12.4 ms", "83.0%", "4.20/s", "1.5 MiB/step"); "n/a" for NaN. */
void po_cmp_fmt_value(enum po_cmp_metric metric, double value, char *out, size_t out_size);
/* "+12.3%", or "n/a" when the baseline value is 0. */
void po_cmp_fmt_change(const struct po_metric_change *metric, char *out, size_t out_size);
/* The 95% interval of the change, "-3.10 to +0.42 ms"; an em dash when untested. */
void po_cmp_fmt_interval(const struct po_metric_change *metric, char *out, size_t out_size);
/* The change of a metric in a comparison (the median step sums it up), or NULL. */
const struct po_metric_change *po_cmp_find_metric(const struct po_comparison *comparison,
						  enum po_cmp_metric metric);
/* "1.52x faster than the baseline", "4.1% slower ...", "No change beyond run-to-run noise". */
void po_cmp_headline(const struct po_comparison *comparison, char *out, size_t out_size);
/* One or two sentences: faster or slower by how much, beyond noise or not, verdicts. */
void po_cmp_summary(const struct po_comparison *comparison, char *out, size_t out_size);
/* "Input-bound" for "input-bound"; the cleaned key for verdicts this build does not know. */
void po_cmp_verdict_title(const char *key, char *out, size_t out_size);
/* "Input-bound pipeline" for "input-bound", else the cleaned id. */
void po_cmp_finding_title(const char *id, char *out, size_t out_size);
const char *po_cmp_finding_change_key(int change); /* "new", "resolved", "persisting" */
/* The baseline's label, cleaned (it is user or trace text). */
void po_cmp_baseline_label(const struct po_comparison *comparison, char *out, size_t out_size);

/* The comparison charts (comparison_charts.c). */
void po_chart_compare_breakdown(cairo_t *cr, const struct po_chart *chart);
void po_chart_compare_histogram(cairo_t *cr, const struct po_chart *chart);
/* Height the paired breakdown chart needs for this comparison. */
double po_chart_compare_breakdown_height(const struct po_comparison *comparison);

#endif /* PO_REPORT_COMPARISON_H */
