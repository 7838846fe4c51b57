/*
 * render_json.h: the machine-readable outputs of profopt-analyze (summary.json, the
 * Perfetto/Chrome timeline.json) and the short human summary printed on stdout. They read
 * only the analysis result, never the trace, and give the same bytes for the same result.
 *
 * The files are written to path directly; the caller stages them in a temporary directory
 * and renames it into place. A failed write or close gives PO_STATUS_OUTPUT with
 * "Failed to write <path>: <strerror>".
 */
#ifndef PO_RENDER_JSON_H
#define PO_RENDER_JSON_H

#include <stdio.h>

#include "common/status.h"
#include "common/summary_keys.h"
#include "json_writer.h"
#include "model/result.h"

/* Memory sites listed in summary.json; the rest are counted in memory.site_count. */
#define PO_SUMMARY_MAX_SITES 20
/* (role, stage, label) times listed in summary.json; the rest are counted in label_count. */
#define PO_SUMMARY_MAX_LABELS 20
/* Findings listed by the text summary. */
#define PO_TEXT_MAX_FINDINGS 5

enum po_status po_render_summary_json(const struct po_analysis *analysis, const char *path,
				      struct po_error *err) PO_NODISCARD;
enum po_status po_render_timeline_json(const struct po_analysis *analysis, const char *path,
				       struct po_error *err) PO_NODISCARD;
/*
 * The short human summary: trace-quality warnings first, then the verdict, the step
 * statistics, the per-step breakdown and the top findings with their first recommendation.
 */
void po_render_text_summary(const struct po_analysis *analysis, FILE *out);

/*
 * The per-step mean of each category in microseconds, rounded so that the parts sum to
 * *total_us, the rounded mean step time (largest-remainder rounding, see breakdown.c).
 * Shared by summary.json and the text summary so both show the same numbers.
 */
void po_render_breakdown_us(const struct po_step_stats *stats, int64_t parts_us[PO_CATEGORY_COUNT],
			    int64_t *total_us);
/* The same for one step's category times and wall time. */
void po_render_step_parts_us(const struct po_step *step, int64_t parts_us[PO_CATEGORY_COUNT],
			     int64_t *total_us);
/* The rounding rule behind both. */
void po_render_round_parts_us(const double parts_ns[PO_CATEGORY_COUNT], double total_ns,
			      int64_t parts_us[PO_CATEGORY_COUNT], int64_t *total_us);
/*
 * The "comparison" member of summary.json (comparison_json.c): how this run differs from
 * the --baseline run. Written only when analysis->diagnosis.comparison is set.
 */
struct po_comparison;
void po_render_comparison_json(struct po_json_writer *writer,
			       const struct po_comparison *comparison);

/*
 * The "ranks" member of summary.json (ranks_json.c): the ranks of a distributed job and
 * the straggler. Written only when analysis->distributed is set.
 */
void po_render_ranks_json(struct po_json_writer *writer, const struct po_analysis *analysis);
/*
 * The findings array of summary.json, alone (the merged job's summary writes it too).
 */
enum po_status po_render_findings_json(struct po_json_writer *writer,
				       const struct po_analysis *analysis,
				       struct po_error *err) PO_NODISCARD;
/*
 * partial.json (partial_json.c): the ranks of the analysis as a mergeable summary
 * (profopt-analyze --partial); PO_STATUS_INPUT when the analysis has no ranks.
 */
enum po_status po_render_partial_json(const struct po_analysis *analysis, const char *path,
				      struct po_error *err) PO_NODISCARD;
/* The merged job's summary.json (profopt-analyze --merge): its ranks and findings. */
struct po_merged_info {
	const char *const *partials; /* weak: the partial summaries merged, as given */
	size_t partial_count;
};
enum po_status po_render_merged_json(const struct po_analysis *analysis,
				     const struct po_merged_info *info, const char *path,
				     struct po_error *err) PO_NODISCARD;
/* The ranks table and the straggler in the stdout summary (ranks_text.c); likewise. */
void po_render_ranks_text(const struct po_analysis *analysis, FILE *out);

/*
 * The "hotspots" member of summary.json and the stdout summary's hotspots table
 * (hotspots_json.c). Written only when the run has function samples.
 */
void po_render_hotspots_json(struct po_json_writer *writer, const struct po_analysis *analysis);
void po_render_hotspots_text(const struct po_analysis *analysis, FILE *out);

/*
 * Time 0 of the outputs: the trace's first event, else the first step's begin. Times are
 * written relative to it so that no absolute clock value appears.
 */
int64_t po_render_time_base_ns(const struct po_analysis *analysis);

#endif /* PO_RENDER_JSON_H */
