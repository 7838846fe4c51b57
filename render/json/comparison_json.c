/*
 * comparison_json.c: the "comparison" member of summary.json, written when profopt-analyze
 * ran with --baseline. Keys are sorted, like the rest of the document.
 */
#include <math.h>

#include "compare/compare.h"
#include "render_json.h"

static void write_metric(struct po_json_writer *writer, const struct po_metric_change *metric)
{
	bool better =
	    po_cmp_metric_lower_is_better(metric->metric) ? metric->delta < 0 : metric->delta > 0;

	po_json_write_begin_object(writer);
	po_json_write_inline(writer);
	if (metric->judgement == PO_CHANGE_SIGNIFICANT)
		po_json_write_kv_bool(writer, "better", better);
	else
		po_json_write_kv_string(writer, "better", NULL);
	po_json_write_kv_double(writer, "ci_high", metric->ci_high, 3);
	po_json_write_kv_double(writer, "ci_low", metric->ci_low, 3);
	po_json_write_kv_double(writer, "delta", metric->delta, 3);
	po_json_write_kv_double(writer, "delta_pct", metric->delta_pct, 2);
	po_json_write_kv_string(writer, "judgement", po_change_judgement_name(metric->judgement));
	po_json_write_kv_string(writer, "name", po_cmp_metric_name(metric->metric));
	po_json_write_kv_double(writer, "new", metric->new_value, 3);
	po_json_write_kv_double(writer, "old", metric->old_value, 3);
	po_json_write_kv_double(writer, "p_value", metric->p_value, 6);
	po_json_write_end_object(writer);
}

static void write_finding_change(struct po_json_writer *writer,
				 const struct po_finding_change *change)
{
	po_json_write_begin_object(writer);
	po_json_write_inline(writer);
	po_json_write_kv_string(writer, "change", po_finding_change_name(change->change));
	po_json_write_kv_string(writer, "id", change->id);
	po_json_write_kv_string(writer, "new_severity", change->new_severity);
	po_json_write_kv_string(writer, "old_severity", change->old_severity);
	po_json_write_end_object(writer);
}

void po_render_comparison_json(struct po_json_writer *writer,
			       const struct po_comparison *comparison)
{
	po_json_write_key(writer, "comparison");
	po_json_write_begin_object(writer);
	po_json_write_kv_string(writer, "baseline", comparison->baseline);
	po_json_write_key(writer, "findings");
	po_json_write_begin_array(writer);
	for (size_t i = 0; i < comparison->finding_count; i++)
		write_finding_change(writer, &comparison->findings[i]);
	po_json_write_end_array(writer);
	po_json_write_key(writer, "gates_tripped");
	po_json_write_begin_array(writer);
	po_json_write_inline(writer);
	for (size_t i = 0; i < comparison->gates_tripped_count; i++)
		po_json_write_string(writer, comparison->gates_tripped[i]);
	po_json_write_end_array(writer);
	po_json_write_key(writer, "metrics");
	po_json_write_begin_array(writer);
	for (size_t i = 0; i < comparison->metric_count; i++)
		write_metric(writer, &comparison->metrics[i]);
	po_json_write_end_array(writer);
	po_json_write_kv_int(writer, "new_findings", (int64_t)comparison->new_findings);
	po_json_write_kv_string(writer, "new_verdict", comparison->new_verdict);
	po_json_write_kv_string(writer, "old_verdict", comparison->old_verdict);
	po_json_write_kv_int(writer, "resolved_findings", (int64_t)comparison->resolved_findings);
	po_json_write_end_object(writer);
}
