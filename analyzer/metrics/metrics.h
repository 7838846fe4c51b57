/*
 * metrics.h: the figures of a step that more than one part of profopt shows, each defined
 * once. The detectors (steady statistics, input-bound), the live windows, the comparison's
 * digest and the charts read them from here; nothing else adds up these categories or
 * picks these series.
 */
#ifndef PO_METRICS_H
#define PO_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include "model/result.h"

/*
 * The input wait of a step (or a sum of steps) from its category times: the data wait and
 * loading in the main process (load, preprocess, collate), in ns. The hand-off is not in
 * it; the input-bound finding adds it where it counts it (po_steady_stats).
 */
int64_t po_metric_input_wait_ns(const int64_t category_ns[PO_CATEGORY_COUNT]);

/*
 * A step that waits for its input: its input wait (with its hand-off when with_handoff) is
 * over half of warning_pct of its wall time (input-bound.warning_pct): the waiting steps
 * of input-bound's waiting_steps_pct.
 */
bool po_metric_step_waits(const struct po_step *step, double warning_pct, bool with_handoff);

/*
 * The bytes of a step in a memory series (result.h): the memory detector's growth lines,
 * the memory chart, the live windows and the comparison read them from here. -1 when
 * the step has no value in it (for the workers' series: a resident-set sum without the
 * main process's).
 */
int64_t po_metric_series_bytes(const struct po_step *step, enum po_growth_series series);

/*
 * The run's host memory series: the live bytes of the allocation events when the run has
 * them (po_memory_stats.has_alloc_events), else the resident sets' sum. One series for
 * the whole run: steps never mix the two.
 */
enum po_growth_series po_metric_host_series(const struct po_analysis *analysis);

/* The host memory of a step in the run's host series; -1 unknown. */
int64_t po_metric_host_bytes(const struct po_analysis *analysis, const struct po_step *step);

/*
 * The loader workers alive at once (the largest number seen), or every worker process
 * when that was not measured.
 */
int64_t po_metric_live_workers(const struct po_analysis *analysis);

/*
 * The steps of an epoch's start-up: until every worker has delivered its first batch
 * (max(1, workers) steps, workers the larger of those configured and those alive at once),
 * workers start and caches fill. The same number each epoch; with persistent workers only
 * the first epoch starts them.
 */
size_t po_metric_startup_steps(const struct po_analysis *analysis);

/*
 * The steady steps, one definition for the detectors' statistics and the live windows:
 * a walk over the analysis's range of steps (step_first to step_end) that says of each
 * whether it is steady: not lossy, and past its epoch's start-up steps (or, with
 * persistent workers, in an epoch after the first). A range that begins mid-run reads
 * at most po_metric_startup_steps() steps before it.
 */
struct po_metric_steady_walk {
	const struct po_analysis *analysis; /* weak */
	size_t next, end;
	size_t startup, in_epoch;
	int64_t previous_epoch;
	bool persistent;
};

void po_metric_steady_walk_init(struct po_metric_steady_walk *walk,
				const struct po_analysis *analysis);
/* The next step of the range and its index; false after the last. */
bool po_metric_steady_walk_next(struct po_metric_steady_walk *walk, struct po_step *step,
				size_t *index, bool *steady);

/*
 * profopt's own CPU time per step (po_self_cost.per_step_ns) as a percentage of a mean
 * step's wall time; NaN when either is unknown. CPU time over wall time: on a machine whose
 * cores the program fills, what the measurement took is what it delayed at most.
 */
double po_metric_self_cost_pct(const struct po_self_cost *cost, double mean_step_ns);

#endif /* PO_METRICS_H */
