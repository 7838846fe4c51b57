/*
 * charts_flame.c: a flame graph of one role's function samples (model/result.h, struct
 * po_flame): one bar per function on a call path, its width the share of the role's
 * sampled time (of its samples where they carry no time) whose stack holds that path, the
 * functions it called stacked above it, siblings in name order. Drawn from the nodes'
 * depth-first order: a bar begins where its parent's previous children ended. For a run
 * recorded with --stacks, or a torch.profiler trace with python_function calls.
 *
 * On a PDF page the names are drawn with the bars. In an SVG (the chart's file, and the
 * HTML report that embeds it) they are SVG text instead of cairo's glyph outlines, so that
 * a reader can search and select them, and every bar has a tooltip with its whole name,
 * its file and line and its share (po_chart_flame_svg_text).
 */
#include <stdio.h>
#include <string.h>

#include <cairo.h>

#include "charts_flame.h"
#include "report_priv.h"
#include "common/text.h"

#define FLAME_TOP 16.0
#define FLAME_ROW 13.0
#define FLAME_DEPTH_MAX 40 /* deeper frames are left out of the picture */
#define FLAME_LEFT 10.0

double po_chart_flame_height(const struct po_flame *flame)
{
	int32_t depth = flame->max_depth + 1;

	return FLAME_TOP + FLAME_ROW * (depth < FLAME_DEPTH_MAX ? depth : FLAME_DEPTH_MAX) + 22;
}

/* Warm colours, the same for a function name in every graph. */
static uint32_t flame_color(const char *function)
{
	uint32_t hash = 2166136261u;

	for (const char *c = function; *c; c++)
		hash = (hash ^ (uint8_t)*c) * 16777619u;
	return 0xe0u << 16 | (0x70u + hash % 0x70u) << 8 | (0x30u + (hash >> 8) % 0x40u);
}

/* One bar of the graph, where it is drawn and the name it shows (NULL: too narrow). */
struct flame_bar {
	const struct po_flame_node *node;
	double x, y, w, h;
	const char *label;
};

typedef enum po_status (*flame_bar_fn)(void *closure, const struct flame_bar *bar);

static const struct po_text_style flame_label = {7, false, PO_COLOR_INK, PO_ALIGN_LEFT, 0};

/*
 * Each bar of the chart's graph in depth-first order, with its name shortened from its end
 * (never inside a character) until it fits the bar, measured on cr. Stops at fn's first
 * failure.
 */
static enum po_status flame_walk(cairo_t *cr, const struct po_chart *chart, flame_bar_fn fn,
				 void *closure)
{
	const struct po_flame *flame = chart->flame;
	double width = chart->width - 2 * FLAME_LEFT, bottom = chart->height - 22;
	double next_x[FLAME_DEPTH_MAX + 1];
	char text[PO_REPORT_TEXT_MAX];

	next_x[0] = FLAME_LEFT;
	for (size_t i = 0; i < flame->node_count; i++) {
		const struct po_flame_node *node = &flame->nodes[i];
		double w = flame->time_ns > 0
			       ? width * (double)node->time_ns / (double)flame->time_ns
			       : width * (double)node->samples / (double)flame->samples;
		struct flame_bar bar = {node, 0, 0, w > 0.6 ? w - 0.3 : w, FLAME_ROW - 1, NULL};
		enum po_status status;

		if (node->depth >= FLAME_DEPTH_MAX)
			continue;
		bar.x = next_x[node->depth];
		next_x[node->depth] = bar.x + w;
		next_x[node->depth + 1] = bar.x; /* its children begin where it does */
		bar.y = bottom - FLAME_ROW * (node->depth + 1);
		if (w >= 30) {
			/* the trace's bytes as valid UTF-8 fit for Pango and XML */
			po_report_clean(node->function, text, sizeof(text), PO_REPORT_LABEL_CHARS);
			for (size_t kept = strlen(text), shown = kept;
			     shown > 3 && po_draw_text_width(cr, text, &flame_label) > w - 4;
			     shown = kept + 2) {
				kept = po_text_boundary(text, kept, shown - 3);
				snprintf(text + kept, sizeof(text) - kept, "..");
			}
			if (po_draw_text_width(cr, text, &flame_label) <= w - 4)
				bar.label = text;
		}
		status = fn(closure, &bar);
		if (status != PO_STATUS_OK)
			return status;
	}
	return PO_STATUS_OK;
}

/* The bars, and their names where they are not to be SVG text. */
static enum po_status draw_bar(void *closure, const struct flame_bar *bar)
{
	cairo_t *cr = closure;

	po_draw_rect(cr, bar->x, bar->y, bar->w, bar->h, flame_color(bar->node->function));
	if (bar->label && cairo_surface_get_type(cairo_get_target(cr)) != CAIRO_SURFACE_TYPE_SVG)
		po_draw_text(cr, bar->x + 2, bar->y + 2, bar->label, &flame_label);
	return PO_STATUS_OK;
}

void po_chart_flame(cairo_t *cr, const struct po_chart *chart)
{
	const struct po_flame *flame = chart->flame;
	struct po_text_style axis = {7.5, false, PO_COLOR_MUTED, PO_ALIGN_LEFT, 0};
	double bottom = chart->height - 22;
	char text[200];

	if (!flame || flame->samples <= 0 || !flame->node_count) {
		po_draw_message(cr, chart, "No function samples.");
		return;
	}
	(void)flame_walk(cr, chart, draw_bar, cr);
	if (flame->time_ns > 0)
		snprintf(text, sizeof(text),
			 "%lld samples, %.1f ms; a bar's width is its share of that time with that "
			 "call path on the stack, the functions it called above it",
			 (long long)flame->samples, (double)flame->time_ns / 1e6);
	else
		snprintf(text, sizeof(text),
			 "%lld samples; a bar's width is its share of them with that call path on "
			 "the stack, the functions it called above it",
			 (long long)flame->samples);
	po_draw_text(cr, FLAME_LEFT, 2, text, &axis);
	if (flame->max_depth >= FLAME_DEPTH_MAX) {
		snprintf(text, sizeof(text), "frames deeper than %d are not drawn",
			 FLAME_DEPTH_MAX);
		po_draw_text(cr, FLAME_LEFT, bottom + 6, text, &axis);
	}
}

/* ---- the SVG's text layer ---- */

struct svg_text {
	xmlNodePtr layer;
	double baseline; /* from a bar's top to its name's baseline */
};

static xmlNodePtr svg_child(xmlNodePtr parent, const char *name, const char *content)
{
	return xmlNewTextChild(parent, NULL, BAD_CAST name, content ? BAD_CAST content : NULL);
}

static bool svg_number(xmlNodePtr node, const char *name, double value)
{
	char text[32];

	return snprintf(text, sizeof(text), "%.2f", value) > 0 &&
	       xmlNewProp(node, BAD_CAST name, BAD_CAST text) != NULL;
}

static enum po_status svg_bar(void *closure, const struct flame_bar *bar)
{
	struct svg_text *svg = closure;
	const struct po_flame_node *node = bar->node;
	xmlNodePtr rect = svg_child(svg->layer, "rect", NULL), title, label;
	char tip[1200], where[600] = "", function[PO_REPORT_TEXT_MAX], file[PO_REPORT_TEXT_MAX];

	/* transparent over the drawn bar: it carries the tooltip */
	if (!rect || !svg_number(rect, "x", bar->x) || !svg_number(rect, "y", bar->y) ||
	    !svg_number(rect, "width", bar->w) || !svg_number(rect, "height", bar->h) ||
	    !xmlNewProp(rect, BAD_CAST "fill-opacity", BAD_CAST "0"))
		return PO_STATUS_NOMEM;
	po_report_clean(node->function, function, sizeof(function), PO_REPORT_LABEL_CHARS);
	po_report_clean(node->file, file, sizeof(file), PO_REPORT_LABEL_CHARS);
	if (file[0] && snprintf(where, sizeof(where), " (%s:%d)", file, (int)node->line) < 0)
		where[0] = '\0';
	if (snprintf(tip, sizeof(tip), "%s%s: %lld samples", function, where,
		     (long long)node->samples) < 0)
		tip[0] = '\0';
	if (node->time_ns > 0 && snprintf(tip + strlen(tip), sizeof(tip) - strlen(tip), ", %.2f ms",
					  node->time_ns / 1e6) < 0)
		return PO_STATUS_INTERNAL;
	title = svg_child(rect, "title", tip);
	if (!title)
		return PO_STATUS_NOMEM;
	if (!bar->label)
		return PO_STATUS_OK;
	label = svg_child(svg->layer, "text", bar->label);
	if (!label || !svg_number(label, "x", bar->x + 2) ||
	    !svg_number(label, "y", bar->y + 2 + svg->baseline) ||
	    !xmlNewProp(label, BAD_CAST "pointer-events", BAD_CAST "none"))
		return PO_STATUS_NOMEM;
	return PO_STATUS_OK;
}

enum po_status po_chart_flame_svg_text(const struct po_chart *chart, xmlNodePtr root,
				       struct po_error *err)
{
	cairo_surface_t *surface;
	cairo_t *cr;
	struct svg_text svg = {NULL, 0};
	enum po_status status;
	char color[16];

	if (!chart->flame || chart->flame->samples <= 0 || !chart->flame->node_count)
		return PO_STATUS_OK;
	/* names are measured as the SVG surface measured them: unhinted, 1 unit a point */
	surface = cairo_recording_surface_create(CAIRO_CONTENT_COLOR_ALPHA, NULL);
	cr = cairo_create(surface);
	po_draw_prepare(cr);
	svg.baseline = po_draw_text_baseline(cr, "Ag", &flame_label);
	svg.layer = svg_child(root, "g", NULL);
	po_report_color_hex(flame_label.color, color, sizeof(color));
	status = svg.layer && xmlNewProp(svg.layer, BAD_CAST "class", BAD_CAST "flame-text") &&
			 xmlNewProp(svg.layer, BAD_CAST "font-family", BAD_CAST PO_REPORT_FONT) &&
			 xmlNewProp(svg.layer, BAD_CAST "font-size", BAD_CAST "7") &&
			 xmlNewProp(svg.layer, BAD_CAST "fill", BAD_CAST color)
		     ? flame_walk(cr, chart, svg_bar, &svg)
		     : PO_STATUS_NOMEM;
	cairo_destroy(cr);
	cairo_surface_destroy(surface);
	if (status != PO_STATUS_OK)
		po_error_set(err, "Failed to write the flame graph's names: out of memory");
	return status;
}
