/*
 * breakdown.c: numbers every renderer of this folder shows alike: the time base, and category
 * times rounded so that the parts sum to the rounded total.
 */
#include <math.h>
#include <stdbool.h>

#include "json_writer.h"
#include "render_json.h"

static int64_t round_ns_to_us(double ns)
{
	if (!isfinite(ns))
		return 0;
	return (int64_t)llround(ns / 1000.0);
}

/* The part not yet rounded up with the largest remainder; the first in category order. */
static int largest_remainder(const double remainder[PO_CATEGORY_COUNT],
			     const bool rounded_up[PO_CATEGORY_COUNT])
{
	int best = -1, category;

	for (category = 0; category < PO_CATEGORY_COUNT; category++) {
		if (!rounded_up[category] && (best < 0 || remainder[category] > remainder[best]))
			best = category;
	}
	return best;
}

/*
 * Largest-remainder rounding: every part is rounded down to the microsecond, then the parts
 * with the largest remainders get one more microsecond each until they sum to the rounded
 * total. Parts whose sum differs from the total by more than rounding (an inconsistent
 * result) have the difference added to the largest part.
 */
void po_render_round_parts_us(const double parts_ns[PO_CATEGORY_COUNT], double total_ns,
			      int64_t parts_us[PO_CATEGORY_COUNT], int64_t *total_us)
{
	double remainder[PO_CATEGORY_COUNT];
	bool rounded_up[PO_CATEGORY_COUNT] = {false};
	int64_t sum_us = 0;
	int largest = 0, category;

	*total_us = round_ns_to_us(total_ns);
	for (category = 0; category < PO_CATEGORY_COUNT; category++) {
		double us = isfinite(parts_ns[category]) ? parts_ns[category] / 1000.0 : 0.0;

		parts_us[category] = (int64_t)floor(us);
		remainder[category] = us - floor(us);
		sum_us += parts_us[category];
		if (parts_us[category] > parts_us[largest])
			largest = category;
	}
	while (sum_us < *total_us) {
		category = largest_remainder(remainder, rounded_up);
		if (category < 0)
			break;
		rounded_up[category] = true;
		parts_us[category]++;
		sum_us++;
	}
	parts_us[largest] += *total_us - sum_us;
}

void po_render_breakdown_us(const struct po_step_stats *stats, int64_t parts_us[PO_CATEGORY_COUNT],
			    int64_t *total_us)
{
	po_render_round_parts_us(stats->category_mean_ns, stats->mean_ns, parts_us, total_us);
}

void po_render_step_parts_us(const struct po_step *step, int64_t parts_us[PO_CATEGORY_COUNT],
			     int64_t *total_us)
{
	double parts_ns[PO_CATEGORY_COUNT];
	int category;

	for (category = 0; category < PO_CATEGORY_COUNT; category++)
		parts_ns[category] = (double)step->category_ns[category];
	po_render_round_parts_us(parts_ns, (double)(step->end_ns - step->begin_ns), parts_us,
				 total_us);
}

int64_t po_render_time_base_ns(const struct po_analysis *analysis)
{
	if (analysis->quality.first_ns >= 0)
		return analysis->quality.first_ns;
	if (analysis->step_count && po_analysis_step(analysis, 0).begin_ns >= 0)
		return po_analysis_step(analysis, 0).begin_ns;
	return 0;
}
