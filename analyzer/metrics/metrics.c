/* metrics.c: the shared figures of a step (metrics.h). */
#include "metrics.h"

int64_t po_metric_input_wait_ns(const int64_t category_ns[PO_CATEGORY_COUNT])
{
	return category_ns[PO_CAT_DATA_WAIT] + category_ns[PO_CAT_LOAD] +
	       category_ns[PO_CAT_PREPROCESS] + category_ns[PO_CAT_COLLATE];
}

bool po_metric_step_waits(const struct po_step *step, double warning_pct, bool with_handoff)
{
	int64_t input = po_metric_input_wait_ns(step->category_ns) +
			(with_handoff ? step->category_ns[PO_CAT_HANDOFF] : 0);

	return (double)input > warning_pct / 200.0 * (double)(step->end_ns - step->begin_ns);
}

int64_t po_metric_host_bytes(const struct po_analysis *analysis, const struct po_step *step)
{
	return analysis->memory.has_alloc_events ? step->host_live_bytes : step->rss_bytes;
}
