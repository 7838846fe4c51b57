/*
 * detect.h: the detectors. They read the analysis result the model built (result.h), add
 * findings with evidence, recommendations and predicted gains, sort them by severity then
 * id, and set the verdict. Thresholds come from struct po_rules (rules.h, docs/rules.md).
 */
#ifndef PO_DETECT_H
#define PO_DETECT_H

#include "common/status.h"
#include "../model/result.h"
#include "rules.h"

/*
 * Replaces analysis->findings and analysis->verdict. Everything the findings hold is
 * allocated from analysis->arena. Fails only on allocation failure (PO_STATUS_NOMEM).
 */
enum po_status po_detect_run(struct po_analysis *analysis, const struct po_rules *rules,
			     struct po_error *err) PO_NODISCARD;

#endif /* PO_DETECT_H */
