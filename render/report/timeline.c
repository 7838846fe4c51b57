/* timeline.c: the timeline of one representative step, one lane per thread, worker and stream. */
#include <stdio.h>
#include <string.h>

#include "report_priv.h"

#define MAX_LANES 32
#define LANE_LABEL_WIDTH 150.0
#define LANE_HEIGHT 20.0
#define LANE_TOP 6.0

enum lane_kind { LANE_THREAD, LANE_PROCESS, LANE_STREAM };

struct lane {
	enum lane_kind kind;
	int32_t pid;	/* thread, process */
	int32_t tid;	/* thread */
	int32_t device; /* stream */
	int32_t stream;
};

struct lanes {
	struct lane items[MAX_LANES];
	size_t count;
	size_t dropped; /* lanes past MAX_LANES, not drawn */
};

static bool is_worker_pid(const struct po_analysis *analysis, int32_t pid)
{
	for (size_t i = 0; i < analysis->process_count; i++) {
		if (analysis->processes[i].pid == pid)
			return analysis->processes[i].role == PO_ROLE_WORKER;
	}
	return false;
}

static struct lane span_lane(const struct po_analysis *analysis, const struct po_span *span)
{
	struct lane lane = {LANE_THREAD, span->pid, span->tid, -1, -1};

	if (span->kind == PO_SPAN_GPU) {
		lane.kind = LANE_STREAM;
		lane.pid = -1;
		lane.tid = -1;
		lane.device = span->device;
		lane.stream = span->stream;
	} else if (span->pid != analysis->main_pid || is_worker_pid(analysis, span->pid)) {
		lane.kind = LANE_PROCESS;
		lane.tid = -1;
	}
	return lane;
}

static bool lane_equal(const struct lane *a, const struct lane *b)
{
	return a->kind == b->kind && a->pid == b->pid && a->tid == b->tid &&
	       a->device == b->device && a->stream == b->stream;
}

/* Threads of the main process first (training loop first), then processes, then streams. */
static long long lane_rank(const struct po_analysis *analysis, const struct lane *lane)
{
	long long rank = (long long)lane->kind << 40;

	if (lane->kind == LANE_STREAM)
		return rank + ((long long)lane->device << 20) + lane->stream;
	if (lane->kind == LANE_PROCESS)
		return rank + lane->pid;
	for (size_t i = 0; i < analysis->thread_count; i++) {
		const struct po_thread *thread = &analysis->threads[i];

		if (thread->pid == lane->pid && thread->tid == lane->tid &&
		    thread->is_training_loop)
			return rank;
	}
	return rank + 1 + lane->tid;
}

static void lanes_insert(struct lanes *lanes, const struct po_analysis *analysis, struct lane lane)
{
	size_t at;

	for (size_t i = 0; i < lanes->count; i++) {
		if (lane_equal(&lanes->items[i], &lane))
			return;
	}
	if (lanes->count == MAX_LANES) {
		lanes->dropped++;
		return;
	}
	at = lanes->count;
	while (at > 0 && lane_rank(analysis, &lanes->items[at - 1]) > lane_rank(analysis, &lane)) {
		lanes->items[at] = lanes->items[at - 1];
		at--;
	}
	lanes->items[at] = lane;
	lanes->count++;
}

static void lanes_build(const struct po_analysis *analysis, const struct po_step_detail *detail,
			struct lanes *lanes)
{
	memset(lanes, 0, sizeof(*lanes));
	for (size_t i = 0; i < detail->span_count; i++) {
		if (detail->spans[i].kind != PO_SPAN_STEP)
			lanes_insert(lanes, analysis, span_lane(analysis, &detail->spans[i]));
	}
}

size_t po_timeline_lane_count(const struct po_analysis *analysis,
			      const struct po_step_detail *detail)
{
	struct lanes lanes;

	lanes_build(analysis, detail, &lanes);
	return lanes.count ? lanes.count : 1;
}

static const char *thread_name(const struct po_analysis *analysis, int32_t pid, int32_t tid)
{
	for (size_t i = 0; i < analysis->thread_count; i++) {
		if (analysis->threads[i].pid == pid && analysis->threads[i].tid == tid)
			return analysis->threads[i].name;
	}
	return NULL;
}

/*
 * A label cut by snprintf to out_size - 1 bytes ends with "..." instead, at a UTF-8
 * character boundary (the name is valid UTF-8, see po_report_clean).
 */
static void end_with_ellipsis(char *out, size_t out_size)
{
	size_t cut;

	if (out_size < 4)
		return;
	cut = out_size - 4;
	while (cut > 0 && ((unsigned char)out[cut] & 0xC0) == 0x80)
		cut--; /* out[cut] is the first byte of a character: cut before it */
	memcpy(out + cut, "...", 4);
}

static void lane_label(const struct po_analysis *analysis, const struct lane *lane, char *out,
		       size_t out_size)
{
	char name[PO_REPORT_TEXT_MAX];

	switch (lane->kind) {
	case LANE_STREAM:
		snprintf(out, out_size, "GPU %d stream %d", lane->device, lane->stream);
		break;
	case LANE_PROCESS:
		snprintf(out, out_size, "%s pid %d",
			 is_worker_pid(analysis, lane->pid) ? "worker" : "process", lane->pid);
		break;
	default:
		po_report_clean(thread_name(analysis, lane->pid, lane->tid), name, sizeof(name),
				18);
		if (snprintf(out, out_size, "%s %d%s%s", "thread", lane->tid, name[0] ? " " : "",
			     name) >= (int)out_size)
			end_with_ellipsis(out, out_size);
		break;
	}
}

static uint32_t span_color(const struct po_span *span)
{
	if (span->kind == PO_SPAN_GPU)
		return po_report_gpu_color((enum po_gpu_kind)span->sub);
	if (span->kind == PO_SPAN_SYNC)
		return po_report_category_color(PO_CAT_GPU_SYNC);
	return po_report_category_color(po_category_of_stage((enum po_stage)span->sub));
}

static void draw_span(cairo_t *cr, const struct po_chart *chart, const struct lanes *lanes,
		      const struct po_span *span)
{
	const struct po_step_detail *detail = chart->detail;
	double width = chart->width - LANE_LABEL_WIDTH - 10;
	double window = (double)(detail->end_ns - detail->begin_ns);
	struct lane lane = span_lane(chart->analysis, span);
	double left, right;

	for (size_t i = 0; i < lanes->count; i++) {
		if (!lane_equal(&lanes->items[i], &lane))
			continue;
		left = (span->begin_ns - detail->begin_ns) / window;
		right = (span->end_ns - detail->begin_ns) / window;
		left = left < 0 ? 0 : left;
		right = right > 1 ? 1 : right;
		if (right <= left)
			return;
		po_draw_rect(cr, LANE_LABEL_WIDTH + left * width, LANE_TOP + i * LANE_HEIGHT + 3,
			     (right - left) * width < 0.7 ? 0.7 : (right - left) * width,
			     LANE_HEIGHT - 6, span_color(span));
		return;
	}
}

static void draw_lanes(cairo_t *cr, const struct po_chart *chart, const struct lanes *lanes)
{
	struct po_text_style style = {8, false, PO_COLOR_INK, PO_ALIGN_RIGHT, 0};
	char label[160];

	for (size_t i = 0; i < lanes->count; i++) {
		double y = LANE_TOP + i * LANE_HEIGHT;

		if (i % 2 == 0)
			po_draw_rect(cr, LANE_LABEL_WIDTH, y, chart->width - LANE_LABEL_WIDTH - 10,
				     LANE_HEIGHT, 0xf7f8fa);
		lane_label(chart->analysis, &lanes->items[i], label, sizeof(label));
		po_draw_text(cr, LANE_LABEL_WIDTH - 8, y + 4, label, &style);
	}
}

static void draw_timeline_axis(cairo_t *cr, const struct po_chart *chart, size_t lane_count)
{
	struct po_text_style style = {7.5, false, PO_COLOR_MUTED, PO_ALIGN_CENTER, 0};
	const struct po_step_detail *detail = chart->detail;
	double window = (double)(detail->end_ns - detail->begin_ns);
	double width = chart->width - LANE_LABEL_WIDTH - 10;
	double step = po_draw_nice_step(window, 8), bottom = LANE_TOP + lane_count * LANE_HEIGHT;
	char label[32];

	for (double value = 0; value <= window * 1.0001; value += step) {
		double x = LANE_LABEL_WIDTH + value / window * width;

		po_draw_line(cr, x, LANE_TOP, x, bottom + 3, PO_COLOR_GRID, 0.5);
		if (value == 0)
			snprintf(label, sizeof(label), "0");
		else if (window >= 1e9)
			snprintf(label, sizeof(label), "%.4g s", value / 1e9);
		else
			snprintf(label, sizeof(label), "%.4g ms", value / 1e6);
		po_draw_text(cr, x, bottom + 4, label, &style);
	}
	style.align = PO_ALIGN_RIGHT;
	po_draw_text(cr, chart->width - 10, bottom + 16, "time since the step began", &style);
}

static void draw_timeline_legend(cairo_t *cr, const struct po_chart *chart, double y)
{
	bool seen[PO_CATEGORY_COUNT] = {false}, gpu_seen[PO_GPU_KIND_COUNT] = {false};
	const char *labels[PO_CATEGORY_COUNT + PO_GPU_KIND_COUNT];
	uint32_t colors[PO_CATEGORY_COUNT + PO_GPU_KIND_COUNT];
	size_t count = 0;

	for (size_t i = 0; i < chart->detail->span_count; i++) {
		const struct po_span *span = &chart->detail->spans[i];

		if (span->kind == PO_SPAN_GPU && (unsigned)span->sub < PO_GPU_KIND_COUNT)
			gpu_seen[span->sub] = true;
		else if (span->kind == PO_SPAN_SYNC)
			seen[PO_CAT_GPU_SYNC] = true;
		else if (span->kind == PO_SPAN_STAGE)
			seen[po_category_of_stage((enum po_stage)span->sub)] = true;
	}
	for (int rank = 0; rank < PO_CATEGORY_COUNT; rank++) {
		enum po_category cat = po_report_category_order[rank];

		if (seen[cat]) {
			labels[count] = po_report_category_title(cat);
			colors[count++] = po_report_category_color(cat);
		}
	}
	for (int kind = 0; kind < PO_GPU_KIND_COUNT; kind++) {
		if (gpu_seen[kind]) {
			labels[count] = po_report_gpu_kind_title(kind);
			colors[count++] = po_report_gpu_color(kind);
		}
	}
	po_draw_legend(cr, LANE_LABEL_WIDTH, y, chart->width - LANE_LABEL_WIDTH - 10, labels,
		       colors, count);
}

void po_chart_timeline(cairo_t *cr, const struct po_chart *chart)
{
	struct lanes lanes;

	if (!chart->detail || chart->detail->end_ns <= chart->detail->begin_ns) {
		po_draw_message(cr, chart, "This step has no recorded window.");
		return;
	}
	lanes_build(chart->analysis, chart->detail, &lanes);
	if (lanes.count == 0) {
		po_draw_message(cr, chart, "No span was kept for this step.");
		return;
	}
	draw_lanes(cr, chart, &lanes);
	draw_timeline_legend(cr, chart, LANE_TOP + lanes.count * LANE_HEIGHT + 34);
	draw_timeline_axis(cr, chart, lanes.count);
	for (size_t i = 0; i < chart->detail->span_count; i++) {
		if (chart->detail->spans[i].kind != PO_SPAN_STEP)
			draw_span(cr, chart, &lanes, &chart->detail->spans[i]);
	}
}
