/*
 * synth.h: synthetic analysis results for the detector tests. Everything lives in the
 * analysis arena, so synth_destroy() frees it at once.
 */
#ifndef PO_TEST_SYNTH_H
#define PO_TEST_SYNTH_H

#include <stdint.h>

#include "detect.h"
#include "step_store.h"

#define SYNTH_MS 1000000LL
#define SYNTH_MIB (1024LL * 1024LL)
/* Step i of a synthetic analysis, to change in place (one statement at a time). */
#define SYNTH_STEP(analysis, i) (*po_analysis_edit_step((analysis), (i)))

/* Mean milliseconds per category of a step. */
struct synth_breakdown {
	double ms[PO_CATEGORY_COUNT];
};

/*
 * step_count identical steps laid end to end, each with the breakdown; jitter_pct varies
 * every category deterministically by up to +-jitter_pct percent.
 */
struct po_analysis *synth_create(size_t step_count, const struct synth_breakdown *breakdown,
				 double jitter_pct);
void synth_destroy(struct po_analysis *analysis);

/* Re-lays the steps end to end after their categories changed. */
void synth_relayout(struct po_analysis *analysis);
void synth_config(struct po_analysis *analysis, const char *key, const char *value);

/* Loader stage wall and CPU milliseconds per batch (load, preprocess, collate). */
struct synth_loader {
	double wall_ms[3];
	double cpu_ms[3]; /* negative: not measured */
	const char *labels[3];
};

/* worker_count workers sharing the steps' batches, each busy busy_pct of its life. */
void synth_workers(struct po_analysis *analysis, int worker_count,
		   const struct synth_loader *loader, double busy_pct);
/* Label statistics of loading on the main thread. */
void synth_main_labels(struct po_analysis *analysis, const struct synth_loader *loader);
/* One GPU; every step busy busy_ms. */
void synth_gpu(struct po_analysis *analysis, double busy_ms);
/* Adds a gap to the GPU (gaps must be added in time order). */
void synth_gap(struct po_analysis *analysis, size_t step_index, double offset_ms, double length_ms,
	       enum po_category cause);
void synth_mem_site(struct po_analysis *analysis, int32_t pid, enum po_role role, int stage,
		    const char *label, int64_t live_bytes, int32_t device);

/* Finds the finding with the id, or NULL. */
const struct po_finding *synth_finding(const struct po_analysis *analysis, enum po_finding_id id);
const struct po_evidence *synth_evidence(const struct po_finding *finding, const char *key);
const char *synth_text(const struct po_finding *finding, const char *key);
double synth_number(const struct po_finding *finding, const char *key); /* NaN if absent */
const struct po_recommendation *synth_rec(const struct po_finding *finding, const char *knob);

#endif /* PO_TEST_SYNTH_H */
