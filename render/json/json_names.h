/*
 * json_names.h: the JSON spellings of the result's enums, generated from the same X-macro
 * tables as the enums (result.h, event.h), so renderers do not depend on the model library.
 * Out-of-range values give "unknown".
 */
#ifndef PO_JSON_NAMES_H
#define PO_JSON_NAMES_H

#include "model/result.h"

const char *po_json_role_name(int role);
const char *po_json_category_name(int category);
const char *po_json_stage_name(int stage);
const char *po_json_counter_name(int counter);
const char *po_json_gpu_kind_name(int kind);
const char *po_json_finding_id_name(int id);
const char *po_json_severity_name(int severity);
const char *po_json_verdict_name(int verdict);
const char *po_json_run_ending_name(int ending);
const char *po_json_excluded_reason_name(int reason);
const char *po_json_missing_kind_name(int kind);
const char *po_json_kernel_class_name(int cls);
const char *po_json_precision_name(int precision);

#endif /* PO_JSON_NAMES_H */
