/*
 * charts_flame.c: a flame graph of one role's function samples (model/result.h, struct
 * po_flame): one bar per function on a call path, its width the share of the role's
 * sampled time (of its samples where they carry no time) whose stack holds that path, the
 * functions it called stacked above it, siblings in name order. Drawn from the nodes'
 * depth-first order: a bar begins where its parent's previous children ended. For a run
 * recorded with --stacks, or a torch.profiler trace with python_function calls.
 */
#include <stdio.h>
#include <string.h>

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

void po_chart_flame(cairo_t *cr, const struct po_chart *chart)
{
	const struct po_flame *flame = chart->flame;
	struct po_text_style label = {7, false, PO_COLOR_INK, PO_ALIGN_LEFT, 0};
	struct po_text_style axis = {7.5, false, PO_COLOR_MUTED, PO_ALIGN_LEFT, 0};
	double width = chart->width - 2 * FLAME_LEFT, bottom, next_x[FLAME_DEPTH_MAX + 1];
	char text[200];

	if (!flame || flame->samples <= 0 || !flame->node_count) {
		po_draw_message(cr, chart, "No function samples.");
		return;
	}
	bottom = chart->height - 22;
	next_x[0] = FLAME_LEFT;
	for (size_t i = 0; i < flame->node_count; i++) {
		const struct po_flame_node *node = &flame->nodes[i];
		double w = flame->time_ns > 0
			       ? width * (double)node->time_ns / (double)flame->time_ns
			       : width * (double)node->samples / (double)flame->samples,
		       x, y;

		if (node->depth >= FLAME_DEPTH_MAX)
			continue;
		x = next_x[node->depth];
		next_x[node->depth] = x + w;
		next_x[node->depth + 1] = x; /* its children begin where it does */
		y = bottom - FLAME_ROW * (node->depth + 1);
		po_draw_rect(cr, x, y, w > 0.6 ? w - 0.3 : w, FLAME_ROW - 1,
			     flame_color(node->function));
		if (w < 30)
			continue;
		snprintf(text, sizeof(text), "%s", node->function);
		po_text_trim_cut(text);
		/* the name, shortened from its end (never inside a character) until it fits */
		for (size_t kept = strlen(text), shown = kept;
		     shown > 3 && po_draw_text_width(cr, text, &label) > w - 4; shown = kept + 2) {
			kept = po_text_boundary(text, kept, shown - 3);
			snprintf(text + kept, sizeof(text) - kept, "..");
		}
		if (po_draw_text_width(cr, text, &label) <= w - 4)
			po_draw_text(cr, x + 2, y + 2, text, &label);
	}
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
