/* compare_text.c: the comparison as text for the terminal, and copying its step series. */
#include <math.h>
#include <string.h>

#include "compare.h"

static const double *copy_series(const double *values, size_t count, struct po_arena *arena)
{
	double *copy = po_arena_alloc(arena, (count ? count : 1) * sizeof(*copy));

	if (copy && count)
		memcpy(copy, values, count * sizeof(*copy));
	return copy;
}

/* A copy in arena of a digest's string; NULL stays NULL. Sets *failed when out of memory. */
static const char *copy_text(const char *text, struct po_arena *arena, bool *failed)
{
	char *copy = text ? po_arena_strdup(arena, text) : NULL;

	*failed |= text && !copy;
	return copy;
}

enum po_status po_comparison_take_series(struct po_comparison *comparison, struct po_arena *arena)
{
	bool failed = false;

	comparison->old_step_ms =
	    copy_series(comparison->old_step_ms, comparison->old_step_count, arena);
	comparison->new_step_ms =
	    copy_series(comparison->new_step_ms, comparison->new_step_count, arena);
	/* The label, verdicts and finding ids live in the digests' arenas too. */
	comparison->baseline = copy_text(comparison->baseline, arena, &failed);
	comparison->old_verdict = copy_text(comparison->old_verdict, arena, &failed);
	comparison->new_verdict = copy_text(comparison->new_verdict, arena, &failed);
	for (size_t i = 0; i < comparison->finding_count; i++) {
		struct po_finding_change *change = &comparison->findings[i];

		change->id = copy_text(change->id, arena, &failed);
		change->old_severity = copy_text(change->old_severity, arena, &failed);
		change->new_severity = copy_text(change->new_severity, arena, &failed);
	}
	return comparison->old_step_ms && comparison->new_step_ms && !failed ? PO_STATUS_OK
									     : PO_STATUS_NOMEM;
}

static const char *judgement_text(const struct po_metric_change *metric)
{
	bool better;

	if (metric->judgement == PO_CHANGE_UNTESTED)
		return "untested";
	if (metric->judgement == PO_CHANGE_NOISE)
		return "noise";
	if (metric->judgement == PO_CHANGE_INCONCLUSIVE)
		return "inconclusive";
	better =
	    po_cmp_metric_lower_is_better(metric->metric) ? metric->delta < 0 : metric->delta > 0;
	return better ? "better" : "WORSE";
}

static const char *finding_change_text(int change)
{
	return change == PO_FINDING_NEW	       ? "new"
	       : change == PO_FINDING_RESOLVED ? "resolved"
					       : "still there";
}

void po_comparison_print(const struct po_comparison *comparison, FILE *out)
{
	fprintf(out, "\nCompared with %s (verdict %s -> %s):\n", comparison->baseline,
		comparison->old_verdict, comparison->new_verdict);
	fprintf(out, "  %-34s %12s %12s %9s  %s\n", "metric", "baseline", "new", "change", "");
	for (size_t i = 0; i < comparison->metric_count; i++) {
		const struct po_metric_change *m = &comparison->metrics[i];

		if (isnan(m->old_value) && isnan(m->new_value))
			continue;
		fprintf(out, "  %-34s %12.3f %12.3f ", po_cmp_metric_name(m->metric), m->old_value,
			m->new_value);
		if (isnan(m->delta_pct))
			fprintf(out, "%9s  %s\n", "-", judgement_text(m));
		else
			fprintf(out, "%+8.1f%%  %s\n", m->delta_pct, judgement_text(m));
	}
	for (size_t i = 0; i < comparison->finding_count; i++)
		fprintf(out, "  finding %s: %s\n", comparison->findings[i].id,
			finding_change_text(comparison->findings[i].change));
	if (comparison->load.note)
		fprintf(out, "  Inconclusive: %s\n", comparison->load.note);
	for (size_t i = 0; i < comparison->gates_tripped_count; i++)
		fprintf(out, "  GATE TRIPPED: %s\n", comparison->gates_tripped[i]);
	for (size_t i = 0; i < comparison->gates_inconclusive_count; i++)
		fprintf(out, "  GATE INCONCLUSIVE: %s\n", comparison->gates_inconclusive[i]);
}
