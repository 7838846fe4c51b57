/*
 * charts_ranks.c: the ranks' step-time heatmap of a distributed job: one row per rank, one
 * column per run of consecutive matched steps, the cell's shade the rank's own time per step
 * there (its step time less its wait for the others at the collectives: model/distributed.h,
 * heat_ns), so that a rank that is slow in every step, or a slow spell of some ranks, shows
 * at a glance. Only for a recording with ranks.
 */
#include <math.h>
#include <stdio.h>

#include "report_priv.h"
#include "common/text.h"

#define LABEL_WIDTH 120.0
#define HEAT_TOP 18.0
#define HEAT_ROWS_MAX_HEIGHT 480.0

/* Rows of at most 16 points, shrunk so that many ranks still fit. */
static double row_height(size_t ranks)
{
	double height = ranks ? HEAT_ROWS_MAX_HEIGHT / (double)ranks : 16;

	return height > 16 ? 16 : height;
}

double po_chart_ranks_height(const struct po_analysis *analysis)
{
	size_t ranks = analysis->distributed ? analysis->distributed->rank_count : 1;

	return HEAT_TOP + row_height(ranks) * (double)ranks + 64;
}

/* From the shortest (pale) to the longest (deep red) mean step time. */
static uint32_t heat_color(double share)
{
	static const uint32_t pale[3] = {0xfd, 0xf1, 0xe6}, deep[3] = {0xb0, 0x1d, 0x12};
	uint32_t color = 0;

	share = share < 0 ? 0 : share > 1 ? 1 : share;
	for (int c = 0; c < 3; c++)
		color = color << 8 |
			(uint32_t)lround(pale[c] + (double)((int)deep[c] - (int)pale[c]) * share);
	return color;
}

static double heat_share(const struct po_distributed *d, int64_t ns)
{
	return d->heat_high_ns > d->heat_low_ns
		   ? (double)(ns - d->heat_low_ns) / (double)(d->heat_high_ns - d->heat_low_ns)
		   : 0.5;
}

static void draw_rank_label(cairo_t *cr, const struct po_distributed *d, size_t r, double y,
			    double height)
{
	const struct po_rank_summary *rank = &d->ranks[r];
	bool straggler = d->straggler.present && d->straggler.rank == rank->rank;
	struct po_text_style style = {7.5, straggler, straggler ? PO_COLOR_ALERT : PO_COLOR_INK,
				      PO_ALIGN_RIGHT, 0};
	char text[96];

	if (height < 7.5 && r % (size_t)ceil(7.5 / height) != 0 && !straggler)
		return; /* too many rows for every label */
	snprintf(text, sizeof(text), "rank %d%s%.*s%s", (int)rank->rank, rank->host ? " (" : "",
		 po_text_precision(rank->host, 40), rank->host ? rank->host : "",
		 rank->host ? ")" : "");
	po_draw_text(cr, LABEL_WIDTH - 6, y + height / 2 - 4.5, text, &style);
}

/* The scale under the map: the shades from the shortest to the longest mean step. */
static void draw_scale(cairo_t *cr, const struct po_distributed *d, double x, double y)
{
	struct po_text_style style = {7.5, false, PO_COLOR_MUTED, PO_ALIGN_LEFT, 0};
	char low[32], high[32], text[96];
	double width = 160;

	for (int i = 0; i < 32; i++)
		po_draw_rect(cr, x + width * i / 32.0, y, width / 32.0 + 0.3, 8,
			     heat_color(i / 31.0));
	po_report_fmt_ms((double)d->heat_low_ns, low, sizeof(low));
	po_report_fmt_ms((double)d->heat_high_ns, high, sizeof(high));
	snprintf(text, sizeof(text), "%s", low);
	po_draw_text(cr, x, y + 10, text, &style);
	style.align = PO_ALIGN_RIGHT;
	po_draw_text(cr, x + width, y + 10, high, &style);
	style.align = PO_ALIGN_LEFT;
	po_draw_text(cr, x + width + 10, y,
		     "own time per step (step time less waiting for the others)", &style);
}

void po_chart_ranks(cairo_t *cr, const struct po_chart *chart)
{
	const struct po_distributed *d = chart->analysis->distributed;
	struct po_text_style axis = {7.5, false, PO_COLOR_MUTED, PO_ALIGN_LEFT, 0};
	double width = chart->width - LABEL_WIDTH - 20, height, bottom;
	char text[160];

	if (!d || !d->heat_bins || d->heat_high_ns < 0) {
		po_draw_message(cr, chart, "No step was matched across the ranks.");
		return;
	}
	height = row_height(d->rank_count);
	snprintf(
	    text, sizeof(text),
	    "Each rank's own time per step (less its wait for the others) over the %zu matched "
	    "steps, in %zu column%s",
	    d->step_count, d->heat_bins, d->heat_bins == 1 ? "" : "s");
	po_draw_text(cr, LABEL_WIDTH, 2, text, &axis);
	for (size_t r = 0; r < d->rank_count; r++) {
		double y = HEAT_TOP + height * (double)r;

		draw_rank_label(cr, d, r, y, height);
		for (size_t b = 0; b < d->heat_bins; b++) {
			int64_t ns = d->heat_ns[b * d->rank_count + r];
			double x = LABEL_WIDTH + width * (double)b / (double)d->heat_bins;

			if (ns >= 0)
				po_draw_rect(cr, x, y, width / (double)d->heat_bins + 0.3,
					     height > 2 ? height - 0.5 : height,
					     heat_color(heat_share(d, ns)));
		}
	}
	bottom = HEAT_TOP + height * (double)d->rank_count;
	snprintf(text, sizeof(text), "step %lld", (long long)d->steps[0].step);
	po_draw_text(cr, LABEL_WIDTH, bottom + 3, text, &axis);
	snprintf(text, sizeof(text), "step %lld", (long long)d->steps[d->step_count - 1].step);
	axis.align = PO_ALIGN_RIGHT;
	po_draw_text(cr, LABEL_WIDTH + width, bottom + 3, text, &axis);
	draw_scale(cr, d, LABEL_WIDTH, bottom + 22);
}
