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

/* Other programs' load in each run; null where either run did not measure it. */
static void write_load(struct po_json_writer *writer, const struct po_compare_load *load)
{
	po_json_write_key(writer, "load");
	if (!load->known) {
		po_json_write_null(writer);
		return;
	}
	po_json_write_begin_object(writer);
	po_json_write_inline(writer);
	po_json_write_kv_string(writer, "by", load->by_stretch ? "cpu_stretch" : "cores_left");
	po_json_write_kv_double(writer, "cpu_count", load->cpu_count, 0);
	po_json_write_kv_bool(writer, "differs", load->differs);
	po_json_write_kv_double(writer, "new_cores_left", load->new_left, 3);
	po_json_write_kv_double(writer, "new_cpu_stretch", load->new_stretch, 3);
	po_json_write_kv_double(writer, "new_others_cores", load->new_cores, 3);
	po_json_write_kv_string(writer, "note", load->note);
	po_json_write_kv_double(writer, "old_cores_left", load->old_left, 3);
	po_json_write_kv_double(writer, "old_cpu_stretch", load->old_stretch, 3);
	po_json_write_kv_double(writer, "old_others_cores", load->old_cores, 3);
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
	po_json_write_key(writer, "gates_inconclusive");
	po_json_write_begin_array(writer);
	po_json_write_inline(writer);
	for (size_t i = 0; i < comparison->gates_inconclusive_count; i++)
		po_json_write_string(writer, comparison->gates_inconclusive[i]);
	po_json_write_end_array(writer);
	po_json_write_key(writer, "gates_tripped");
	po_json_write_begin_array(writer);
	po_json_write_inline(writer);
	for (size_t i = 0; i < comparison->gates_tripped_count; i++)
		po_json_write_string(writer, comparison->gates_tripped[i]);
	po_json_write_end_array(writer);
	write_load(writer, &comparison->load);
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
