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

#include "result.h"

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
 * The host memory of a step: the live bytes of the allocation events when the run has
 * them (po_memory_stats.has_alloc_events), else the resident sets' sum; -1 unknown. One
 * series for the whole run: steps never mix the two.
 */
int64_t po_metric_host_bytes(const struct po_analysis *analysis, const struct po_step *step);

#endif /* PO_METRICS_H */
