/* json_names.c: JSON spellings generated from the result's X-macro tables. */
#include "json_names.h"

#define PO_JSON_NAME_FN(fn, table_macro, count)                                                    \
	const char *fn(int value)                                                                  \
	{                                                                                          \
		static const char *const names[] = {table_macro(PO_JSON_X)};                       \
		_Static_assert(sizeof(names) / sizeof(names[0]) == (count),                        \
			       #table_macro " and its enum differ");                               \
		return value >= 0 && value < (count) ? names[value] : "unknown";                   \
	}

#define PO_JSON_X(name, json) json,
PO_JSON_NAME_FN(po_json_role_name, PO_ROLES, PO_ROLE_COUNT)
PO_JSON_NAME_FN(po_json_category_name, PO_CATEGORIES, PO_CATEGORY_COUNT)
PO_JSON_NAME_FN(po_json_stage_name, PO_STAGES, PO_STAGE_COUNT)
PO_JSON_NAME_FN(po_json_counter_name, PO_COUNTERS, PO_COUNTER_COUNT)
PO_JSON_NAME_FN(po_json_gpu_kind_name, PO_GPU_KINDS, PO_GPU_KIND_COUNT)
PO_JSON_NAME_FN(po_json_finding_id_name, PO_FINDING_IDS, PO_FINDING_ID_COUNT)
PO_JSON_NAME_FN(po_json_severity_name, PO_SEVERITIES, PO_SEVERITY_COUNT)
PO_JSON_NAME_FN(po_json_verdict_name, PO_VERDICTS, PO_VERDICT_COUNT)
PO_JSON_NAME_FN(po_json_run_ending_name, PO_RUN_ENDINGS, PO_RUN_ENDING_COUNT)
PO_JSON_NAME_FN(po_json_excluded_reason_name, PO_EXCLUDED_REASONS, PO_EXCLUDED_REASON_COUNT)
PO_JSON_NAME_FN(po_json_missing_kind_name, PO_MISSING_KINDS, PO_MISSING_KIND_COUNT)
PO_JSON_NAME_FN(po_json_kernel_class_name, PO_KERNEL_CLASSES, PO_KERNEL_CLASS_COUNT)
PO_JSON_NAME_FN(po_json_precision_name, PO_PRECISIONS, PO_PRECISION_COUNT)
#undef PO_JSON_X
