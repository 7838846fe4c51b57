/*
 * detect_internal.h: what the detectors share: the context of one run (clean steps and
 * their means, the data-quality factor), the finding builder and the statistics helpers.
 */
#ifndef PO_DETECT_INTERNAL_H
#define PO_DETECT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "detect.h"
#include "stats/stats.h"

#define DET_MAX_EVIDENCE 40
#define DET_MAX_RECOMMENDATIONS 6
#define DET_NS_PER_MS 1e6
#define DET_MIB (1024.0 * 1024.0)

/*
 * The levels of the steady steps: runs of them between level shifts (level_shift.c), each
 * judged on its own by step-outliers. One level without a shift.
 */
#define DET_MAX_LEVELS 4
struct det_levels {
	size_t count;
	size_t begin[DET_MAX_LEVELS]; /* the first steady step (index into clean) of each */
};

struct det_ctx {
	/*
	 * weak: the caller's. The model's result is const here: the detectors write the
	 * diagnosis alone (and allocate from analysis->arena).
	 */
	const struct po_analysis *analysis;
	struct po_diagnosis *diagnosis; /* weak: &analysis->diagnosis */
	const struct po_rules *rules;	/* weak */
	/*
	 * owned: indexes of the steady clean steps: not flagged lossy, and not among the first
	 * max(1, workers) steps of an epoch (start-up: workers starting, caches filling),
	 * which only the epoch-start checks and the memory trend see (all_clean).
	 */
	size_t *clean;
	size_t clean_count;
	size_t *all_clean; /* owned: every step not flagged lossy */
	size_t all_clean_count;
	double clean_wall_ns; /* summed wall time of the clean steps */
	double mean_step_ns;  /* over clean steps; 0 without */
	double median_step_ns;
	double category_mean_ns[PO_CATEGORY_COUNT];
	int64_t category_sum_ns[PO_CATEGORY_COUNT]; /* over the steady steps */
	/*
	 * What other programs used of the machine while it was recorded (po_machine_load):
	 * others_cores (NaN unknown), the cores they left to this program (the machine's cores
	 * when unknown), and machine_busy when they used machine.others_pct of the cores or more:
	 * then what a change of this program's threads gains depends on them, and the detectors
	 * withhold such predictions (det_withheld_why).
	 */
	double others_cores;
	double available_cores;
	bool machine_busy;
	struct det_levels levels; /* set by det_level_shift, before step-outliers */
	/* Only steps that ended in (steps_after_ns, steps_until_ns] are measured. */
	int64_t steps_after_ns, steps_until_ns;
	double quality_factor;	     /* 0..1: how much the trace data can be trusted */
	double steps_factor;	     /* 0.5..1: lowered for few clean steps */
	struct po_finding *findings; /* weak: in the analysis arena */
	size_t finding_count;
	size_t finding_capacity;
	bool nomem; /* an arena allocation failed */
};

/* detect.c */
/* Copies of the i-th clean (steady) step and of the i-th step not flagged lossy. */
struct po_step det_clean_step(const struct det_ctx *ctx, size_t i);
struct po_step det_all_clean_step(const struct det_ctx *ctx, size_t i);
/* The training loop's process, or NULL. */
const struct po_process *det_main_process(const struct po_analysis *analysis);
/*
 * The main thread's measured run-queue wait per mean steady step (its PROCESS_RUNQ_WAIT
 * counter over the process's life: time runnable but not running, whoever held the CPU,
 * other programs too); -1 without it.
 */
double det_main_runq_per_step(const struct det_ctx *ctx);
/*
 * Worker processes alive at the same time (what shares the cores and the memory), not every
 * worker the run started: non-persistent DataLoader workers are new processes each epoch.
 */
int64_t det_live_workers(const struct po_analysis *analysis);
/* The workers' mean busy share of their own lifetimes, in percent; NaN without workers. */
double det_workers_busy_pct(const struct po_analysis *analysis);
/* A run_config value, or NULL. */
const char *det_config(const struct po_analysis *analysis, const char *key);
/* A run_config value as an integer, or fallback. */
/* num_workers as the run configured it (settings), else the workers seen alive at once. */
int64_t det_configured_workers(const struct po_analysis *analysis);

/*
 * On a busy machine (machine_busy), why a prediction that depends on the cores the program
 * gets is withheld, in the arena; NULL when it is not.
 */
const char *det_withheld_why(struct det_ctx *ctx);

/* finding.c: a new finding with confidence own * the context's factors, or NULL. */
struct po_finding *det_finding_add(struct det_ctx *ctx, enum po_finding_id id,
				   enum po_severity severity, double own_confidence);
void det_summary(struct det_ctx *ctx, struct po_finding *finding, const char *fmt, ...)
    PO_PRINTF(3, 4);
/*
 * Evidence under a key of evidence_keys.h. The plain ones take a key without a parameter;
 * the _at ones a NUMBER key and its number ("site#_where" with 2 is site2_where), the _in
 * one a CATEGORY key and its category ("@_ms_per_step" with PO_CAT_DATA_WAIT is
 * data_wait_ms_per_step). Text is copied into the arena. A finding keeps its first
 * DET_MAX_EVIDENCE pieces.
 */
void det_ev_number(struct det_ctx *ctx, struct po_finding *finding, enum po_evidence_key key,
		   double value);
void det_ev_int(struct det_ctx *ctx, struct po_finding *finding, enum po_evidence_key key,
		int64_t value);
void det_ev_text(struct det_ctx *ctx, struct po_finding *finding, enum po_evidence_key key,
		 const char *value);
void det_ev_number_at(struct det_ctx *ctx, struct po_finding *finding, enum po_evidence_key key,
		      unsigned number, double value);
void det_ev_text_at(struct det_ctx *ctx, struct po_finding *finding, enum po_evidence_key key,
		    unsigned number, const char *value);
void det_ev_number_in(struct det_ctx *ctx, struct po_finding *finding, enum po_evidence_key key,
		      enum po_category category, double value);
/* Adds a recommendation; action, why and effect are copied into the arena. */
void det_recommend(struct det_ctx *ctx, struct po_finding *finding, enum po_knob knob,
		   const char *action, const char *why, const char *effect, double step_ms,
		   double speedup);
/*
 * A recommendation whose effect depends on how many cores the program gets (more or fewer
 * workers or threads, less CPU work): on a busy machine its prediction is withheld, and the
 * effect says why (det_withheld_why); one the model itself predicts no gain for is not listed.
 */
void det_recommend_cores(struct det_ctx *ctx, struct po_finding *finding, enum po_knob knob,
			 const char *action, const char *why, const char *effect, double step_ms,
			 double speedup);
/* Copies step numbers and windows into the finding. */
void det_set_steps(struct det_ctx *ctx, struct po_finding *finding, const int64_t *steps,
		   size_t count);
void det_set_windows(struct det_ctx *ctx, struct po_finding *finding,
		     const struct po_window *windows, size_t count);
char *det_printf(struct det_ctx *ctx, const char *fmt, ...) PO_PRINTF(2, 3);
const struct po_finding *det_find(const struct det_ctx *ctx, enum po_finding_id id);

/* value within [low, high]; low for NaN */
double det_clamp(double value, double low, double high);

/* input_bound.c: one batch of the worker processes, per stage summed over the workers. */
struct det_loader_batch {
	double service_ns;	 /* load + preprocess + collate wall time per batch */
	double cpu_ns;		 /* their thread CPU time per batch */
	double cpu_stage_ns;	 /* wall time of the CPU stages (preprocess, collate) per batch */
	double cpu_stage_cpu_ns; /* their CPU time per batch */
};
/* The workers' batch from their stage totals; false without batches or measured CPU time. */
bool det_loader_batch(const struct det_ctx *ctx, struct det_loader_batch *batch);
/*
 * Each consumed batch's making time in its worker (load + preprocess + collate), in the
 * order the steps not flagged lossy took them, for the queue model (whatif.h); the batches
 * of scaled_pid times factor (-1: none). *count of them; NULL when memory runs out. The
 * caller frees the array.
 */
double *det_batch_services_create(const struct det_ctx *ctx, int32_t scaled_pid, double factor,
				  size_t *count);

/* The detectors, each a pure function of the analysis and its rules. */
enum po_status det_trace_data_loss(struct det_ctx *ctx);
enum po_status det_input_bound(struct det_ctx *ctx);
enum po_status det_gpu_idle(struct det_ctx *ctx);
enum po_status det_gpu_bound(struct det_ctx *ctx);
enum po_status det_launch_bound(struct det_ctx *ctx);
/* gpu_work.c: analysis->diagnosis.gpu_work from the steady steps (after the steady statistics). */
void det_fill_gpu_work(struct det_ctx *ctx);
enum po_status det_memory_growth(struct det_ctx *ctx);
enum po_status det_unfreed(struct det_ctx *ctx);
/* copy_on_access.c */
enum po_status det_copy_on_access(struct det_ctx *ctx);
/* level_shift.c: sets ctx->levels, which det_step_outliers reads. */
enum po_status det_level_shift(struct det_ctx *ctx);
enum po_status det_step_outliers(struct det_ctx *ctx);
enum po_status det_cpu_contention(struct det_ctx *ctx);
enum po_status det_loader_handoff(struct det_ctx *ctx);
enum po_status det_worker_restart(struct det_ctx *ctx);
/* imbalance.c */
enum po_status det_loader_imbalance(struct det_ctx *ctx);
/* straggler.c: sets analysis->distributed->straggler, and the finding when there is one. */
enum po_status det_straggler(struct det_ctx *ctx);
enum po_verdict det_verdict(const struct det_ctx *ctx);
/* The steps cover too little of their span, or hold almost nothing but unmarked time. */
bool det_uncovered(const struct det_ctx *ctx);
bool det_unmarked(const struct det_ctx *ctx);
/* The verdict's cause in words when a finding names it (in the arena), else NULL. */
const char *det_verdict_reason(struct det_ctx *ctx, enum po_verdict verdict);

#endif /* PO_DETECT_INTERNAL_H */
