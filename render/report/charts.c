/* charts.c: the summary charts (breakdown, histogram, GPU, memory, workers) and their list. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comparison.h"
#include "metrics/metrics.h"
#include "report_priv.h"

#define CHART_WIDTH 760.0

/* The plotting area of a chart, inside its margins. */
struct plot {
	double x, y, width, height;
	double max_value;
	double step;
};

typedef void (*fmt_fn)(double value, char *out, size_t out_size);

static void fmt_axis_ms(double ns, char *out, size_t out_size)
{
	if (ns == 0)
		snprintf(out, out_size, "0");
	else if (ns >= 1e9)
		snprintf(out, out_size, "%.4g s", ns / 1e9);
	else if (ns >= 1e6)
		snprintf(out, out_size, "%.4g ms", ns / 1e6);
	else
		snprintf(out, out_size, "%.4g \xc2\xb5s", ns / 1e3);
}

static void fmt_axis_bytes(double bytes, char *out, size_t out_size)
{
	po_report_fmt_bytes((int64_t)bytes, out, out_size);
}

static void fmt_axis_count(double count, char *out, size_t out_size)
{
	snprintf(out, out_size, "%.0f", count);
}

static void fmt_axis_pct(double share, char *out, size_t out_size)
{
	snprintf(out, out_size, "%.0f%%", share * 100);
}

static void plot_scale(struct plot *plot, double max_value, int tick_count)
{
	plot->step = po_draw_nice_step(max_value, tick_count);
	plot->max_value = plot->step * ceil(max_value / plot->step);
	if (plot->max_value <= 0)
		plot->max_value = plot->step;
}

/* Byte axes step in round binary units: 256 MiB, 1 GiB, 2 GiB. */
static void plot_scale_bytes(struct plot *plot, double max_bytes, int tick_count)
{
	double unit = 1;

	while (max_bytes / unit >= 1024 && unit < 1099511627776.0)
		unit *= 1024;
	plot_scale(plot, max_bytes / unit, tick_count);
	plot->step *= unit;
	plot->max_value *= unit;
}

static double plot_y(const struct plot *plot, double value)
{
	return plot->y + plot->height - value / plot->max_value * plot->height;
}

/* Horizontal grid lines and labels of a value axis on the left. */
static void draw_value_axis(cairo_t *cr, const struct plot *plot, fmt_fn fmt)
{
	struct po_text_style style = {7.5, false, PO_COLOR_MUTED, PO_ALIGN_RIGHT, 0};
	char label[32];

	for (double value = 0; value <= plot->max_value * 1.0001; value += plot->step) {
		double y = plot_y(plot, value);

		po_draw_line(cr, plot->x, y, plot->x + plot->width, y,
			     value == 0 ? PO_COLOR_MUTED : PO_COLOR_GRID, value == 0 ? 0.8 : 0.5);
		fmt(value, label, sizeof(label));
		po_draw_text(cr, plot->x - 5, y - 5, label, &style);
	}
}

/* Tick labels under a horizontal axis spanning 0..max_value. */
static void draw_time_axis(cairo_t *cr, double x, double y, double width, double max_value,
			   fmt_fn fmt, bool grid_up, double grid_height)
{
	struct po_text_style style = {7.5, false, PO_COLOR_MUTED, PO_ALIGN_CENTER, 0};
	double step = po_draw_nice_step(max_value, 8);

	if (fmt == fmt_axis_count && step < 1)
		step = 1; /* counts have no fractional ticks */
	char label[32];

	for (double value = 0; value <= max_value * 1.0001 && max_value > 0; value += step) {
		double tick_x = x + value / max_value * width;

		if (grid_up)
			po_draw_line(cr, tick_x, y - grid_height, tick_x, y, PO_COLOR_GRID, 0.5);
		po_draw_line(cr, tick_x, y, tick_x, y + 3, PO_COLOR_MUTED, 0.6);
		fmt(value, label, sizeof(label));
		po_draw_text(cr, tick_x, y + 4, label, &style);
	}
}

static void draw_axis_title(cairo_t *cr, double x, double y, const char *text, enum po_align align)
{
	struct po_text_style style = {7.5, false, PO_COLOR_MUTED, align, 0};

	po_draw_text(cr, x, y, text, &style);
}

void po_chart_breakdown(cairo_t *cr, const struct po_chart *chart)
{
	const struct po_step_stats *stats = &chart->analysis->step_stats;
	struct po_text_style inside = {7.5, true, 0xffffff, PO_ALIGN_CENTER, 0};
	const char *labels[PO_CATEGORY_COUNT];
	uint32_t colors[PO_CATEGORY_COUNT];
	char names[PO_CATEGORY_COUNT][80];
	double x = 20, bar_y = 18, width = chart->width - 40, bar_height = 34;
	size_t legend_count = 0;

	if (!(stats->mean_ns > 0)) {
		po_draw_message(cr, chart, "No complete step was recorded.");
		return;
	}
	draw_axis_title(cr, x, 2, "Mean step time by category", PO_ALIGN_LEFT);
	for (int rank = 0; rank < PO_CATEGORY_COUNT; rank++) {
		enum po_category cat = po_report_category_order[rank];
		double share = stats->category_mean_ns[cat] / stats->mean_ns;
		double segment = share * width;
		char value[32], pct[16];

		if (!(stats->category_mean_ns[cat] > 0))
			continue;
		po_draw_rect(cr, x, bar_y, segment, bar_height, po_report_category_color(cat));
		po_report_fmt_pct(share, pct, sizeof(pct));
		if (segment > 34)
			po_draw_text(cr, x + segment / 2, bar_y + bar_height / 2 - 5, pct, &inside);
		x += segment;
		po_report_fmt_ms(stats->category_mean_ns[cat], value, sizeof(value));
		snprintf(names[legend_count], sizeof(names[0]), "%s %s (%s)",
			 po_report_category_title(cat), value, pct);
		labels[legend_count] = names[legend_count];
		colors[legend_count++] = po_report_category_color(cat);
	}
	draw_time_axis(cr, 20, bar_y + bar_height, width, stats->mean_ns, fmt_axis_ms, false, 0);
	po_draw_legend(cr, 20, bar_y + bar_height + 22, width, labels, colors, legend_count);
}

/* The duration axis of the histogram: the analysis's round bounds around the clean steps. */
struct duration_axis {
	double low_ns;
	double high_ns;
};

static double axis_x(const struct plot *plot, const struct duration_axis *axis, double ns)
{
	return plot->x + (ns - axis->low_ns) / (axis->high_ns - axis->low_ns) * plot->width;
}

static void draw_percentile(cairo_t *cr, const struct plot *plot, const struct duration_axis *axis,
			    int64_t value_ns, const char *name, int slot)
{
	struct po_text_style style = {7.5, true, PO_COLOR_ALERT, PO_ALIGN_LEFT, 0};
	double x = axis_x(plot, axis, (double)value_ns);
	char label[48], value[24];

	if (value_ns < 0)
		return;
	cairo_save(cr);
	cairo_set_dash(cr, (const double[]){3, 2}, 2, 0);
	po_draw_line(cr, x, plot->y, x, plot->y + plot->height, PO_COLOR_ALERT, 0.9);
	cairo_restore(cr);
	po_report_fmt_ns(value_ns, value, sizeof(value));
	snprintf(label, sizeof(label), "%s %s", name, value);
	if (x + 70 > plot->x + plot->width) {
		style.align = PO_ALIGN_RIGHT;
		x -= 6;
	}
	po_draw_text(cr, x + 3, plot->y + slot * 11, label, &style);
}

static void draw_duration_ticks(cairo_t *cr, const struct plot *plot,
				const struct duration_axis *axis)
{
	struct po_text_style style = {7.5, false, PO_COLOR_MUTED, PO_ALIGN_CENTER, 0};
	double step = po_draw_nice_step(axis->high_ns - axis->low_ns, 8);
	double bottom = plot->y + plot->height;
	char label[32];

	for (double value = axis->low_ns; value <= axis->high_ns * 1.0001; value += step) {
		double x = axis_x(plot, axis, value);

		po_draw_line(cr, x, bottom, x, bottom + 3, PO_COLOR_MUTED, 0.6);
		fmt_axis_ms(value, label, sizeof(label));
		po_draw_text(cr, x, bottom + 4, label, &style);
	}
}

void po_chart_histogram(cairo_t *cr, const struct po_chart *chart)
{
	const struct po_step_stats *stats = &chart->analysis->step_stats;
	const struct po_stats_histogram *histogram = &stats->histogram;
	struct plot plot = {60, 14, chart->width - 80, chart->height - 50, 0, 0};
	struct duration_axis axis = {histogram->low, histogram->high};
	size_t bins = histogram->bin_count;

	if (histogram->total == 0 || bins == 0) {
		po_draw_message(cr, chart, "No clean step to measure.");
		return;
	}
	plot_scale(&plot, fmax(4, (double)histogram->highest), 4);
	draw_value_axis(cr, &plot, fmt_axis_count);
	for (size_t bin = 0; bin < bins; bin++) {
		double bar_width = plot.width / (double)bins;
		double top = plot_y(&plot, (double)histogram->counts[bin]);

		if (histogram->counts[bin] > 0)
			po_draw_rect(cr, plot.x + bin * bar_width + 0.5, top, bar_width - 1,
				     plot.y + plot.height - top, PO_COLOR_ACCENT);
	}
	draw_percentile(cr, &plot, &axis, stats->p50_ns, "p50", 0);
	draw_percentile(cr, &plot, &axis, stats->p95_ns, "p95", 1);
	draw_percentile(cr, &plot, &axis, stats->p99_ns, "p99", 2);
	draw_duration_ticks(cr, &plot, &axis);
	draw_axis_title(cr, plot.x + plot.width, chart->height - 12, "step duration",
			PO_ALIGN_RIGHT);
	draw_axis_title(cr, 4, 0, "steps", PO_ALIGN_LEFT);
}

/* The window the per-step charts span: first step begin to last step end. */
static bool step_window(const struct po_analysis *analysis, int64_t *begin_ns, int64_t *end_ns)
{
	if (analysis->step_count == 0)
		return false;
	*begin_ns = po_analysis_step(analysis, 0).begin_ns;
	*end_ns = po_analysis_step(analysis, analysis->step_count - 1).end_ns;
	return *end_ns > *begin_ns;
}

static void draw_gap_bar(cairo_t *cr, double left, double right, double y, enum po_category cause)
{
	po_draw_rect(cr, left, y, right - left < 0.8 ? 0.8 : right - left, 14,
		     po_report_category_color(cause));
}

static void draw_gap_strip(cairo_t *cr, const struct po_analysis *analysis, double x, double y,
			   double width, int64_t begin_ns, int64_t span_ns, bool *causes_seen)
{
	struct po_text_style style = {7.5, false, PO_COLOR_MUTED, PO_ALIGN_RIGHT, 0};

	double run_left = 0, run_right = 0;
	enum po_category run_cause = PO_CAT_OTHER;
	bool open = false;

	po_draw_rect(cr, x, y, width, 14, 0xf3f5f7);
	po_draw_text(cr, x - 5, y + 1, "idle gaps", &style);
	/* Gaps of one cause that touch the same pixel column are drawn as one bar. */
	for (size_t i = 0; i < analysis->gap_count; i++) {
		const struct po_gpu_gap *gap = &analysis->gaps[i];
		double left = x + (double)(gap->begin_ns - begin_ns) / span_ns * width;
		double right = x + (double)(gap->end_ns - begin_ns) / span_ns * width;

		if (right < x || left > x + width)
			continue;
		left = left < x ? x : left;
		right = right > x + width ? x + width : right;
		if ((unsigned)gap->cause < PO_CATEGORY_COUNT)
			causes_seen[gap->cause] = true;
		if (open && run_cause == gap->cause && left >= run_left &&
		    floor(left) <= floor(run_right) + 1) {
			run_right = right > run_right ? right : run_right;
			continue;
		}
		if (open)
			draw_gap_bar(cr, run_left, run_right, y, run_cause);
		run_left = left;
		run_right = right;
		run_cause = gap->cause;
		open = true;
	}
	if (open)
		draw_gap_bar(cr, run_left, run_right, y, run_cause);
}

static void draw_gpu_legend(cairo_t *cr, double x, double y, double width, const bool *causes_seen)
{
	const char *labels[PO_CATEGORY_COUNT + 1] = {"GPU busy share of the step"};
	uint32_t colors[PO_CATEGORY_COUNT + 1] = {PO_COLOR_GPU};
	char names[PO_CATEGORY_COUNT][64];
	size_t count = 1;

	for (int rank = 0; rank < PO_CATEGORY_COUNT; rank++) {
		enum po_category cat = po_report_category_order[rank];

		if (!causes_seen[cat])
			continue;
		snprintf(names[cat], sizeof(names[0]), "gap during %s",
			 po_report_category_title(cat));
		labels[count] = names[cat];
		colors[count++] = po_report_category_color(cat);
	}
	po_draw_legend(cr, x, y, width, labels, colors, count);
}

/* Steps that start in the same pixel column, drawn as one bar of their pooled busy share. */
struct gpu_column {
	double left, right;
	int64_t busy_ns, wall_ns;
};

static void gpu_column_draw(cairo_t *cr, const struct plot *plot, const struct gpu_column *column)
{
	double share = column->wall_ns > 0 ? (double)column->busy_ns / column->wall_ns : 0;
	double top = plot_y(plot, share > 1 ? 1 : share);
	double width = column->right - column->left;

	po_draw_rect(cr, column->left, top, width > 0.6 ? width : 0.6, plot->y + plot->height - top,
		     PO_COLOR_GPU);
}

/*
 * One bar per step, or per pixel column where steps are narrower than a pixel: what is
 * drawn stays bounded by the chart's width however many steps the trace holds.
 */
static void draw_gpu_columns(cairo_t *cr, const struct po_analysis *analysis,
			     const struct plot *plot, int64_t begin_ns, int64_t span_ns)
{
	struct gpu_column column = {0};
	bool open = false;

	for (size_t i = 0; i < analysis->step_count; i++) {
		const struct po_step step = po_analysis_step(analysis, i);
		double left = plot->x + (double)(step.begin_ns - begin_ns) / span_ns * plot->width;
		double right = plot->x + (double)(step.end_ns - begin_ns) / span_ns * plot->width;
		int64_t wall_ns = step.end_ns > step.begin_ns ? step.end_ns - step.begin_ns : 0;
		int64_t busy_ns = wall_ns > 0 && step.gpu_busy_ns > 0 ? step.gpu_busy_ns : 0;

		if (open && floor(left) == floor(column.left)) {
			column.right = right > column.right ? right : column.right;
			column.busy_ns += busy_ns;
			column.wall_ns += wall_ns;
			continue;
		}
		if (open)
			gpu_column_draw(cr, plot, &column);
		column = (struct gpu_column){left, right, busy_ns, wall_ns};
		open = true;
	}
	if (open)
		gpu_column_draw(cr, plot, &column);
}

void po_chart_gpu(cairo_t *cr, const struct po_chart *chart)
{
	const struct po_analysis *analysis = chart->analysis;
	struct plot plot = {60, 14, chart->width - 80, chart->height - 96, 1, 0.25};
	bool causes_seen[PO_CATEGORY_COUNT] = {false};
	int64_t begin_ns, end_ns, span_ns;

	if (analysis->gpu_count == 0 || !step_window(analysis, &begin_ns, &end_ns)) {
		po_draw_message(cr, chart, "No GPU activity was recorded.");
		return;
	}
	span_ns = end_ns - begin_ns;
	draw_value_axis(cr, &plot, fmt_axis_pct);
	draw_gpu_columns(cr, analysis, &plot, begin_ns, span_ns);
	draw_gap_strip(cr, analysis, plot.x, plot.y + plot.height + 6, plot.width, begin_ns,
		       span_ns, causes_seen);
	draw_time_axis(cr, plot.x, plot.y + plot.height + 22, plot.width, (double)span_ns,
		       fmt_axis_ms, false, 0);
	draw_axis_title(cr, 4, 0, "GPU busy", PO_ALIGN_LEFT);
	draw_axis_title(cr, plot.x + plot.width, plot.y + plot.height + 36,
			"time since the first step", PO_ALIGN_RIGHT);
	draw_gpu_legend(cr, plot.x, chart->height - 28, plot.width, causes_seen);
}

/* The series a growth line can lie on; the last two only when a finding's line does. */
enum mem_series { MEM_HOST, MEM_RSS, MEM_GPU, MEM_RSS_MAIN, MEM_RSS_WORKERS, MEM_SERIES_COUNT };

/* The memory series each chart series draws (metrics.h gives a step's value in it). */
static const enum po_growth_series series_of[MEM_SERIES_COUNT] = {
    [MEM_HOST] = PO_GROWTH_HOST_ALLOCS,	       [MEM_RSS] = PO_GROWTH_RSS_ALL,
    [MEM_GPU] = PO_GROWTH_GPU_ALLOCS,	       [MEM_RSS_MAIN] = PO_GROWTH_RSS_MAIN,
    [MEM_RSS_WORKERS] = PO_GROWTH_RSS_WORKERS,
};

static int64_t mem_value(const struct po_step *step, enum mem_series series)
{
	return po_metric_series_bytes(step, series_of[series]);
}

static int64_t step_mem_value(const struct po_analysis *analysis, size_t index,
			      enum mem_series series)
{
	const struct po_step step = po_analysis_step(analysis, index);

	return mem_value(&step, series);
}

static const uint32_t mem_colors[MEM_SERIES_COUNT] = {PO_COLOR_HOST, PO_COLOR_RSS, PO_COLOR_GPU,
						      PO_COLOR_HOST, PO_COLOR_HOST};
static const char *const mem_labels[MEM_SERIES_COUNT] = {
    "host live bytes (allocations)", "resident set size (all processes)", "GPU live bytes",
    "resident set size (main process)", "resident set size (loader workers)"};

/* The chart series each kind of growth line lies on. */
static const enum mem_series line_series[] = {
    [PO_GROWTH_HOST_ALLOCS] = MEM_HOST,	 [PO_GROWTH_RSS_ALL] = MEM_RSS,
    [PO_GROWTH_RSS_MAIN] = MEM_RSS_MAIN, [PO_GROWTH_RSS_WORKERS] = MEM_RSS_WORKERS,
    [PO_GROWTH_GPU_ALLOCS] = MEM_GPU,
};

static void draw_mem_series(cairo_t *cr, const struct po_analysis *analysis,
			    const struct plot *plot, enum mem_series series)
{
	bool started = false;
	double divisor = analysis->step_count > 1 ? analysis->step_count - 1 : 1;

	for (size_t i = 0; i < analysis->step_count; i++) {
		int64_t value = step_mem_value(analysis, i, series);
		double x = plot->x + i / divisor * plot->width;

		if (value < 0)
			continue;
		if (started)
			cairo_line_to(cr, x, plot_y(plot, (double)value));
		else
			cairo_move_to(cr, x, plot_y(plot, (double)value));
		started = true;
		if (analysis->step_count < 30) /* few steps: mark each measurement */
			cairo_rectangle(cr, x - 1.5, plot_y(plot, (double)value) - 1.5, 3, 3);
	}
	po_draw_set_color(cr, mem_colors[series]);
	cairo_set_line_width(cr, 1.4);
	cairo_stroke(cr);
}

/* A growth finding's line, between the first and last steps it fitted. */
static void draw_growth_line(cairo_t *cr, const struct po_analysis *analysis,
			     const struct plot *plot, const struct po_growth_line *line)
{
	double divisor = analysis->step_count > 1 ? analysis->step_count - 1.0 : 1;
	double first_y = fmax(0, fmin(plot->max_value, line->first_bytes));
	double last_y = fmax(0, fmin(plot->max_value, line->last_bytes));

	cairo_save(cr);
	cairo_set_dash(cr, (const double[]){5, 3}, 2, 0);
	po_draw_line(cr, plot->x + (double)line->first_position / divisor * plot->width,
		     plot_y(plot, first_y),
		     plot->x + (double)line->last_position / divisor * plot->width,
		     plot_y(plot, last_y), PO_COLOR_ALERT, 1.2);
	cairo_restore(cr);
}

/* The highest value of the series drawn; present says which have values. */
static int64_t mem_max(const struct po_analysis *analysis, bool *present, const bool *wanted)
{
	int64_t highest = 0;

	for (size_t i = 0; i < analysis->step_count; i++) {
		for (int series = 0; series < MEM_SERIES_COUNT; series++) {
			if (!wanted[series])
				continue;
			int64_t value = step_mem_value(analysis, i, series);

			present[series] |= value >= 0;
			highest = value > highest ? value : highest;
		}
	}
	return highest;
}

void po_chart_memory(cairo_t *cr, const struct po_chart *chart)
{
	const struct po_analysis *analysis = chart->analysis;
	struct plot plot = {70, 14, chart->width - 90, chart->height - 70, 0, 0};
	bool present[MEM_SERIES_COUNT] = {false};
	bool wanted[MEM_SERIES_COUNT] = {true, true, true, false, false};
	const struct po_growth_line *lines[MEM_SERIES_COUNT] = {NULL};
	const char *labels[MEM_SERIES_COUNT + 1];
	uint32_t colors[MEM_SERIES_COUNT + 1];
	size_t legend_count = 0;
	bool any_line = false;
	int64_t highest;

	for (int i = 0; i < 2; i++) {
		const struct po_growth_line *line = &analysis->diagnosis.growth_lines[i];

		if (!line->present || (unsigned)line->series > PO_GROWTH_GPU_ALLOCS)
			continue;
		lines[line_series[line->series]] = line;
		wanted[line_series[line->series]] = true;
	}
	highest = mem_max(analysis, present, wanted);

	if (highest <= 0) {
		po_draw_message(cr, chart, "No memory measurement was recorded.");
		return;
	}
	plot_scale_bytes(&plot, (double)highest, 4);
	draw_value_axis(cr, &plot, fmt_axis_bytes);
	for (int series = 0; series < MEM_SERIES_COUNT; series++) {
		if (!present[series])
			continue;
		draw_mem_series(cr, analysis, &plot, series);
		if (lines[series]) {
			draw_growth_line(cr, analysis, &plot, lines[series]);
			any_line = true;
		}
		labels[legend_count] = mem_labels[series];
		colors[legend_count++] = mem_colors[series];
	}
	if (any_line) {
		labels[legend_count] = "growth the finding fitted (least squares)";
		colors[legend_count++] = PO_COLOR_ALERT;
	}
	draw_time_axis(cr, plot.x, plot.y + plot.height, plot.width,
		       analysis->step_count > 1 ? analysis->step_count - 1.0 : 1, fmt_axis_count,
		       false, 0);
	draw_axis_title(cr, plot.x + plot.width, plot.y + plot.height + 16, "step (trace order)",
			PO_ALIGN_RIGHT);
	draw_axis_title(cr, 4, 0, "bytes", PO_ALIGN_LEFT);
	po_draw_legend(cr, plot.x, chart->height - 16, plot.width, labels, colors, legend_count);
}

static void draw_worker_row(cairo_t *cr, const struct po_worker *worker, double y, double width)
{
	struct po_text_style label = {8, false, PO_COLOR_INK, PO_ALIGN_RIGHT, 0};
	double x = 130, life = (double)(worker->last_ns - worker->first_ns);
	char text[64], pct[16];

	if (worker->worker_id >= 0)
		snprintf(text, sizeof(text), "worker %lld (pid %d)", (long long)worker->worker_id,
			 worker->pid);
	else
		snprintf(text, sizeof(text), "worker pid %d", worker->pid);
	po_draw_text(cr, x - 8, y + 3, text, &label);
	po_draw_rect(cr, x, y, width, 16, 0xf3f5f7);
	for (int stage = 0; stage < PO_STAGE_COUNT && life > 0; stage++) {
		double segment = worker->stage_ns[stage] / life * width;

		if (worker->stage_ns[stage] <= 0)
			continue;
		po_draw_rect(cr, x, y, segment, 16,
			     po_report_category_color(po_category_of_stage(stage)));
		x += segment;
	}
	po_report_fmt_pct(life > 0 ? worker->busy_ns / life : -1, pct, sizeof(pct));
	snprintf(text, sizeof(text), "%s busy", pct);
	label.align = PO_ALIGN_LEFT;
	po_draw_text(cr, 130 + width + 6, y + 3, text, &label);
}

static void draw_worker_legend(cairo_t *cr, const struct po_analysis *analysis, double y,
			       double width)
{
	bool seen[PO_STAGE_COUNT] = {false};
	const char *labels[PO_STAGE_COUNT + 1];
	uint32_t colors[PO_STAGE_COUNT + 1];
	size_t count = 0;

	for (size_t i = 0; i < analysis->worker_count; i++) {
		for (int stage = 0; stage < PO_STAGE_COUNT; stage++)
			seen[stage] |= analysis->workers[i].stage_ns[stage] > 0;
	}
	for (int stage = 0; stage < PO_STAGE_COUNT; stage++) {
		if (!seen[stage])
			continue;
		labels[count] = po_report_stage_title(stage);
		colors[count++] = po_report_category_color(po_category_of_stage(stage));
	}
	labels[count] = "idle";
	colors[count++] = 0xf3f5f7;
	po_draw_legend(cr, 130, y, width, labels, colors, count);
}

void po_chart_workers(cairo_t *cr, const struct po_chart *chart)
{
	const struct po_analysis *analysis = chart->analysis;
	double width = chart->width - 130 - 80;

	if (analysis->worker_count == 0) {
		po_draw_message(cr, chart,
				"No data-loader worker was traced: loading ran in the training "
				"process.");
		return;
	}
	draw_axis_title(cr, 130, 0, "share of each worker's lifetime", PO_ALIGN_LEFT);
	for (size_t i = 0; i < analysis->worker_count; i++)
		draw_worker_row(cr, &analysis->workers[i], 14 + i * 22.0, width);
	draw_worker_legend(cr, analysis, 14 + analysis->worker_count * 22.0 + 6, width);
}

static struct po_chart *chart_add(struct po_chart_list *list, const struct po_analysis *analysis,
				  const char *file_name, const char *title, double height,
				  po_chart_draw_fn draw)
{
	struct po_chart *chart = &list->charts[list->count++];

	memset(chart, 0, sizeof(*chart));
	snprintf(chart->file_name, sizeof(chart->file_name), "%s", file_name);
	snprintf(chart->title, sizeof(chart->title), "%s", title);
	chart->width = CHART_WIDTH;
	chart->height = height;
	chart->draw = draw;
	chart->analysis = analysis;
	return chart;
}

static void timeline_charts_add(struct po_chart_list *list, const struct po_analysis *analysis)
{
	for (size_t i = 0; i < analysis->detail_count; i++) {
		const struct po_step_detail *detail = &analysis->details[i];
		bool known = detail->step_index < analysis->step_count;
		const struct po_step copy =
		    known ? po_analysis_step(analysis, detail->step_index) : (struct po_step){0};
		const struct po_step *step = known ? &copy : NULL;
		char file_name[64], title[160], reasons[96];
		struct po_chart *chart;
		size_t lanes = po_timeline_lane_count(analysis, detail);

		po_report_detail_reasons(detail->reasons, reasons, sizeof(reasons));
		snprintf(file_name, sizeof(file_name), "timeline-%zu.svg", i + 1);
		snprintf(title, sizeof(title), "Step %lld timeline (%s)",
			 step ? (long long)step->index : -1LL, reasons);
		chart = chart_add(list, analysis, file_name, title, 92 + lanes * 20.0,
				  po_chart_timeline);
		chart->detail = detail;
	}
}

/* Only with a --baseline: reports without one keep exactly their charts. */
static void comparison_charts_add(struct po_chart_list *list, const struct po_analysis *analysis)
{
	chart_add(list, analysis, "comparison-breakdown.svg",
		  "Step time breakdown: baseline and this run",
		  po_chart_compare_breakdown_height(analysis->diagnosis.comparison),
		  po_chart_compare_breakdown)
	    ->comparison = true;
	chart_add(list, analysis, "comparison-latency.svg", "Step latency: baseline and this run",
		  250, po_chart_compare_histogram)
	    ->comparison = true;
}

enum po_status po_report_charts_create(const struct po_analysis *analysis,
				       struct po_chart_list *list, struct po_error *err)
{
	double workers_height = 50 + (analysis->worker_count ? analysis->worker_count : 1) * 22.0;

	list->count = 0;
	list->charts =
	    calloc(analysis->detail_count + analysis->flame_count + 10, sizeof(*list->charts));
	if (!list->charts) {
		po_error_set(err, "Failed to allocate the chart list");
		return PO_STATUS_NOMEM;
	}
	chart_add(list, analysis, "breakdown.svg", "Step time breakdown", 118, po_chart_breakdown);
	timeline_charts_add(list, analysis);
	chart_add(list, analysis, "histogram.svg", "Step latency distribution", 230,
		  po_chart_histogram);
	/* A CPU-only run gets no GPU panel: an empty full-size chart says nothing. */
	if (analysis->gpu_count)
		chart_add(list, analysis, "gpu.svg", "GPU busy and idle over time", 250,
			  po_chart_gpu);
	chart_add(list, analysis, "memory.svg", "Memory over time", 250, po_chart_memory);
	chart_add(list, analysis, "workers.svg", "Data-loader worker utilization", workers_height,
		  po_chart_workers);
	if (analysis->distributed)
		chart_add(list, analysis, "ranks.svg", "Each rank's own time per step",
			  po_chart_ranks_height(analysis), po_chart_ranks);
	for (size_t i = 0; i < analysis->flame_count; i++) {
		const struct po_flame *flame = &analysis->flames[i];
		char file_name[64], title[160];

		snprintf(file_name, sizeof(file_name), "flame-%s.svg", po_role_name(flame->role));
		snprintf(title, sizeof(title), "Where %s %s goes: function samples",
			 flame->role == PO_ROLE_MAIN	 ? "the training loop's"
			 : flame->role == PO_ROLE_WORKER ? "the data-loader workers'"
							 : "other processes'",
			 analysis->stacks_wall ? "time" : "CPU");
		chart_add(list, analysis, file_name, title, po_chart_flame_height(flame),
			  po_chart_flame)
		    ->flame = flame;
	}
	if (analysis->diagnosis.comparison)
		comparison_charts_add(list, analysis);
	return PO_STATUS_OK;
}

void po_report_charts_destroy(struct po_chart_list *list)
{
	free(list->charts);
	list->charts = NULL;
	list->count = 0;
}
