/*
 * detect.h: the detectors. They read the analysis result the model built (result.h), add
 * findings with evidence, recommendations and predicted gains, sort them by severity then
 * id, and set the verdict. Thresholds come from struct po_rules (rules.h, docs/rules.md).
 */
#ifndef PO_DETECT_H
#define PO_DETECT_H

#include "common/status.h"
#include "model/result.h"
#include "detect/rules.h"

/*
 * Replaces analysis->diagnosis.findings and analysis->diagnosis.verdict. Everything the findings
 * hold is allocated from analysis->arena. Fails only on allocation failure (PO_STATUS_NOMEM).
 */
enum po_status po_detect_run(struct po_analysis *analysis, const struct po_rules *rules,
			     struct po_error *err) PO_NODISCARD;

/*
 * po_detect_run over the steps that ended in (after_ns, until_ns] (trace clock): their
 * steady steps are the population every detector measures, as the whole run's are for
 * po_detect_run (which is this over every step); start-up steps are still counted from each
 * epoch's first step. What the model keeps per process rather than per step (the workers'
 * stage totals, the processes' CPU, memory lines) is the run's so far. A live window is
 * this over its steps (analyzer/live); profopt-analyze --steps-in too.
 */
enum po_status po_detect_run_steps(struct po_analysis *analysis, const struct po_rules *rules,
				   int64_t after_ns, int64_t until_ns,
				   struct po_error *err) PO_NODISCARD;

/*
 * The findings of a job whose ranks were merged from partial summaries (analyzer/merge):
 * only analysis->distributed is there, so only the straggler detector runs, and the
 * verdict is unknown with its reason.
 */
enum po_status po_detect_distributed(struct po_analysis *analysis, const struct po_rules *rules,
				     struct po_error *err) PO_NODISCARD;

#endif /* PO_DETECT_H */
