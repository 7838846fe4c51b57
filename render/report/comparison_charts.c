/* comparison_charts.c: the baseline and the new run side by side: breakdown and latency. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "comparison.h"

#define BREAKDOWN_LABEL_WIDTH 150.0
#define BREAKDOWN_VALUE_WIDTH 140.0
#define BREAKDOWN_ROW_HEIGHT 34.0
#define BREAKDOWN_BAR_HEIGHT 12.0
#define HISTOGRAM_BINS PO_COMPARE_HISTOGRAM_BINS

/* Breakdown metrics with a value, in the report's category order; returns their count. */
static size_t breakdown_rows(const struct po_comparison *comparison,
			     const struct po_metric_change **rows)
{
	size_t count = 0;

	for (int rank = 0; rank < PO_CATEGORY_COUNT; rank++) {
		for (size_t i = 0; i < comparison->metric_count; i++) {
			const struct po_metric_change *metric = &comparison->metrics[i];

			if (po_cmp_metric_category(metric->metric) ==
				(int)po_report_category_order[rank] &&
			    po_cmp_metric_shown(metric)) {
				rows[count++] = metric;
				break;
			}
		}
	}
	return count;
}

double po_chart_compare_breakdown_height(const struct po_comparison *comparison)
{
	const struct po_metric_change *rows[PO_CATEGORY_COUNT];
	size_t count = comparison ? breakdown_rows(comparison, rows) : 0;

	return 56 + (count ? count : 1) * BREAKDOWN_ROW_HEIGHT;
}

static double finite_or_zero(double value)
{
	return isnan(value) || value < 0 ? 0 : value;
}

static void draw_pair_bar(cairo_t *cr, double x, double y, double width, double value, double scale,
			  uint32_t color, enum po_cmp_metric metric)
{
	struct po_text_style style = {7.5, false, PO_COLOR_INK, PO_ALIGN_LEFT, 0};
	double length = finite_or_zero(value) / scale * width;
	char text[48];

	po_draw_rect(cr, x, y, fmax(length, 0.8), BREAKDOWN_BAR_HEIGHT, color);
	po_cmp_fmt_value(metric, value, text, sizeof(text));
	po_draw_text(cr, x + length + 4, y + 1, text, &style);
}

static void draw_breakdown_row(cairo_t *cr, const struct po_chart *chart,
			       const struct po_metric_change *metric, double y, double scale)
{
	struct po_text_style label = {8.5, false, PO_COLOR_INK, PO_ALIGN_RIGHT, 0};
	struct po_text_style change = {8, true, PO_COLOR_MUTED, PO_ALIGN_RIGHT, 0};
	double bar_x = BREAKDOWN_LABEL_WIDTH + 8;
	double bar_width = chart->width - bar_x - BREAKDOWN_VALUE_WIDTH;
	enum po_category cat = po_cmp_metric_category(metric->metric);
	char text[64];

	po_draw_rect(cr, BREAKDOWN_LABEL_WIDTH - 9, y + 9, 8, 8, po_report_category_color(cat));
	po_draw_text(cr, BREAKDOWN_LABEL_WIDTH - 14, y + 6, po_report_category_title(cat), &label);
	draw_pair_bar(cr, bar_x, y, bar_width, metric->old_value, scale, PO_COLOR_BASELINE,
		      metric->metric);
	draw_pair_bar(cr, bar_x, y + BREAKDOWN_BAR_HEIGHT + 1, bar_width, metric->new_value, scale,
		      PO_COLOR_NEW, metric->metric);
	po_cmp_fmt_change(metric, text, sizeof(text));
	snprintf(text + strlen(text), sizeof(text) - strlen(text), " %s",
		 po_cmp_badge_key(po_cmp_badge_of(metric)));
	change.color = po_cmp_badge_color(po_cmp_badge_of(metric));
	po_draw_text(cr, chart->width - 4, y + 6, text, &change);
}

/* "baseline: LABEL (N steps)" and "this run (N steps)" in the runs' colors. */
static void draw_run_legend(cairo_t *cr, const struct po_chart *chart, double x, double y)
{
	const struct po_comparison *comparison = chart->analysis->diagnosis.comparison;
	char label[PO_REPORT_TEXT_MAX], baseline[PO_REPORT_TEXT_MAX + 48], current[48];
	const char *labels[2] = {baseline, current};
	const uint32_t colors[2] = {PO_COLOR_BASELINE, PO_COLOR_NEW};

	po_report_clean(comparison->baseline ? comparison->baseline : "", label, sizeof(label), 60);
	snprintf(baseline, sizeof(baseline), "baseline: %s (%zu steps)", label,
		 comparison->old_step_count);
	snprintf(current, sizeof(current), "this run (%zu steps)", comparison->new_step_count);
	po_draw_legend(cr, x, y, chart->width - x, labels, colors, 2);
}

void po_chart_compare_breakdown(cairo_t *cr, const struct po_chart *chart)
{
	const struct po_comparison *comparison = chart->analysis->diagnosis.comparison;
	struct po_text_style title = {7.5, false, PO_COLOR_MUTED, PO_ALIGN_LEFT, 0};
	const struct po_metric_change *rows[PO_CATEGORY_COUNT];
	size_t count = comparison ? breakdown_rows(comparison, rows) : 0;
	double highest = 0, scale, y = 22;

	if (count == 0) {
		po_draw_message(cr, chart, "Neither run has a step time breakdown to compare.");
		return;
	}
	for (size_t i = 0; i < count; i++)
		highest = fmax(highest, fmax(finite_or_zero(rows[i]->old_value),
					     finite_or_zero(rows[i]->new_value)));
	scale = highest > 0 ? highest : 1;
	po_draw_text(cr, BREAKDOWN_LABEL_WIDTH + 8, 2,
		     "Mean time per step, by category (top bar: baseline, bottom bar: this run)",
		     &title);
	title.align = PO_ALIGN_RIGHT;
	po_draw_text(cr, chart->width - 4, 2, "change", &title);
	for (size_t i = 0; i < count; i++, y += BREAKDOWN_ROW_HEIGHT) {
		if (i > 0)
			po_draw_line(cr, 0, y - 5, chart->width, y - 5, PO_COLOR_GRID, 0.5);
		draw_breakdown_row(cr, chart, rows[i], y, scale);
	}
	draw_run_legend(cr, chart, BREAKDOWN_LABEL_WIDTH + 8, y + 2);
}

/* The overlaid histograms' shared axes: duration bins and the share of each run's steps. */
struct latency_axes {
	double x, y, width, height; /* the plotting area */
	double low_ms, high_ms;
	double share_max, share_step;
	double old_share[HISTOGRAM_BINS];
	double new_share[HISTOGRAM_BINS];
};

/* Each run's share of its steps per bin of the comparison's histograms, and the axes. */
static bool latency_axes_init(struct latency_axes *axes, const struct po_comparison *comparison)
{
	const struct po_stats_histogram *old_run = &comparison->old_histogram;
	const struct po_stats_histogram *new_run = &comparison->new_histogram;
	double highest = 0;

	if (old_run->bin_count != HISTOGRAM_BINS || new_run->bin_count != HISTOGRAM_BINS)
		return false;
	axes->low_ms = old_run->low;
	axes->high_ms = old_run->high;
	for (int bin = 0; bin < HISTOGRAM_BINS; bin++) {
		axes->old_share[bin] =
		    old_run->total ? (double)old_run->counts[bin] / (double)old_run->total : 0;
		axes->new_share[bin] =
		    new_run->total ? (double)new_run->counts[bin] / (double)new_run->total : 0;
		highest = fmax(highest, fmax(axes->old_share[bin], axes->new_share[bin]));
	}
	axes->share_step = po_draw_nice_step(highest, 4);
	axes->share_max = axes->share_step * ceil(highest / axes->share_step);
	if (axes->share_max <= 0)
		axes->share_max = axes->share_step;
	return true;
}

static double latency_x(const struct latency_axes *axes, double ms)
{
	return axes->x + (ms - axes->low_ms) / (axes->high_ms - axes->low_ms) * axes->width;
}

static void draw_share_axis(cairo_t *cr, const struct latency_axes *axes)
{
	struct po_text_style style = {7.5, false, PO_COLOR_MUTED, PO_ALIGN_RIGHT, 0};
	char label[32];

	for (double share = 0; share <= axes->share_max * 1.0001; share += axes->share_step) {
		double y = axes->y + axes->height - share / axes->share_max * axes->height;

		po_draw_line(cr, axes->x, y, axes->x + axes->width, y,
			     share == 0 ? PO_COLOR_MUTED : PO_COLOR_GRID, share == 0 ? 0.8 : 0.5);
		snprintf(label, sizeof(label), "%.0f%%", share * 100);
		po_draw_text(cr, axes->x - 5, y - 5, label, &style);
	}
}

static void draw_duration_axis(cairo_t *cr, const struct latency_axes *axes)
{
	struct po_text_style style = {7.5, false, PO_COLOR_MUTED, PO_ALIGN_CENTER, 0};
	double step = po_draw_nice_step(axes->high_ms - axes->low_ms, 8);
	double bottom = axes->y + axes->height;
	char label[32];

	for (double ms = axes->low_ms; ms <= axes->high_ms + step * 1e-4; ms += step) {
		double x = latency_x(axes, ms);

		po_draw_line(cr, x, bottom, x, bottom + 3, PO_COLOR_MUTED, 0.6);
		snprintf(label, sizeof(label), "%.4g ms", ms);
		po_draw_text(cr, x, bottom + 4, label, &style);
	}
}

static void draw_shares(cairo_t *cr, const struct latency_axes *axes, const double *shares,
			uint32_t color, double alpha)
{
	struct po_rgb rgb = po_report_rgb(color);
	double bin_width = axes->width / HISTOGRAM_BINS;

	cairo_set_source_rgba(cr, rgb.r, rgb.g, rgb.b, alpha);
	for (int bin = 0; bin < HISTOGRAM_BINS; bin++) {
		double height = shares[bin] / axes->share_max * axes->height;

		if (shares[bin] <= 0)
			continue;
		cairo_rectangle(cr, axes->x + bin * bin_width + 0.5,
				axes->y + axes->height - height, bin_width - 1, height);
	}
	cairo_fill(cr);
}

static void draw_median(cairo_t *cr, const struct latency_axes *axes, double ms, uint32_t color,
			const char *name, int slot)
{
	struct po_text_style style = {7.5, true, color, PO_ALIGN_LEFT, 0};
	double x = latency_x(axes, ms), width, left;
	char label[64];

	if (isnan(ms))
		return;
	cairo_save(cr);
	cairo_set_dash(cr, (const double[]){4, 2}, 2, 0);
	po_draw_line(cr, x, axes->y - 4, x, axes->y + axes->height, color, 1.2);
	cairo_restore(cr);
	snprintf(label, sizeof(label), "%s p50 %.2f ms", name, ms);
	width = po_draw_text_width(cr, label, &style);
	left = x + 3;
	if (x + width + 6 > axes->x + axes->width)
		left = x - 3 - width;
	/* A light backing keeps the label readable over the bars. */
	cairo_set_source_rgba(cr, 1, 1, 1, 0.85);
	cairo_rectangle(cr, left - 1, axes->y + slot * 11, width + 2, 10);
	cairo_fill(cr);
	po_draw_text(cr, left, axes->y + slot * 11, label, &style);
}

void po_chart_compare_histogram(cairo_t *cr, const struct po_chart *chart)
{
	const struct po_comparison *comparison = chart->analysis->diagnosis.comparison;
	const struct po_metric_change *p50 =
	    comparison ? po_cmp_find_metric(comparison, PO_CMP_STEPS_P50) : NULL;
	struct latency_axes axes = {
	    .x = 60, .y = 16, .width = chart->width - 80, .height = chart->height - 74};
	struct po_text_style title = {7.5, false, PO_COLOR_MUTED, PO_ALIGN_LEFT, 0};

	if (!comparison || !latency_axes_init(&axes, comparison)) {
		po_draw_message(cr, chart, "Neither run has clean steps to compare.");
		return;
	}
	draw_share_axis(cr, &axes);
	draw_shares(cr, &axes, axes.old_share, PO_COLOR_BASELINE, 0.75);
	draw_shares(cr, &axes, axes.new_share, PO_COLOR_NEW, 0.6);
	draw_duration_axis(cr, &axes);
	if (p50) {
		draw_median(cr, &axes, p50->old_value, 0x616e7cu, "baseline", 0);
		draw_median(cr, &axes, p50->new_value, PO_COLOR_NEW, "this run", 1);
	}
	po_draw_text(cr, 4, 0, "share of steps", &title);
	title.align = PO_ALIGN_RIGHT;
	po_draw_text(cr, axes.x + axes.width, axes.y + axes.height + 16, "step duration", &title);
	draw_run_legend(cr, chart, axes.x, chart->height - 16);
}
