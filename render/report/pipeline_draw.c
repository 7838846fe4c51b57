/*
 * pipeline_draw.c: the pipeline graph drawn from Graphviz's layout with the report's own
 * cairo primitives, so it sits on a PDF page like any chart (vector shapes and text).
 */
#include <stdlib.h>
#include <string.h>

#include "pipeline_draw.h"
#include "report_priv.h"
#include "common/text.h"

#define GRAPH_MARGIN 4.0 /* points */

/* Maps layout coordinates (points, y up) to the page (y down). */
struct placement {
	double x, y; /* page position of the top-left corner */
	double scale;
	boxf bounds; /* the layout's bounding box */
};

static double page_x(const struct placement *at, double layout_x)
{
	return at->x + (layout_x - at->bounds.LL.x + GRAPH_MARGIN) * at->scale;
}

static double page_y(const struct placement *at, double layout_y)
{
	return at->y + (at->bounds.UR.y - layout_y + GRAPH_MARGIN) * at->scale;
}

void po_pipeline_size(Agraph_t *graph, double *width, double *height)
{
	*width = GD_bb(graph).UR.x - GD_bb(graph).LL.x + 2 * GRAPH_MARGIN;
	*height = GD_bb(graph).UR.y - GD_bb(graph).LL.y + 2 * GRAPH_MARGIN;
}

/* "#rrggbb" attributes, else the fallback. */
static uint32_t attr_color(void *object, const char *name, uint32_t fallback)
{
	const char *value = agget(object, (char *)name);

	if (!value || value[0] != '#' || strlen(value) != 7)
		return fallback;
	return (uint32_t)strtoul(value + 1, NULL, 16);
}

static void rounded_rect(cairo_t *cr, double x, double y, double width, double height,
			 double radius)
{
	cairo_new_sub_path(cr);
	cairo_arc(cr, x + width - radius, y + radius, radius, -1.5708, 0);
	cairo_arc(cr, x + width - radius, y + height - radius, radius, 0, 1.5708);
	cairo_arc(cr, x + radius, y + height - radius, radius, 1.5708, 3.14159);
	cairo_arc(cr, x + radius, y + radius, radius, 3.14159, 4.71239);
	cairo_close_path(cr);
}

/* Centered lines of a label, split at newlines. */
static void draw_label(cairo_t *cr, const char *text, double center_x, double center_y, double size,
		       uint32_t color)
{
	struct po_text_style style = {size, false, color, PO_ALIGN_CENTER, 0};
	char line[256];
	int line_count = 1, index = 0;

	for (const char *c = text; *c; c++)
		line_count += *c == '\n';
	while (*text) {
		size_t length = strcspn(text, "\n");

		snprintf(line, sizeof(line), "%.*s", (int)length, text);
		po_text_trim_cut(line); /* a long line: cut between characters */
		po_draw_text(cr, center_x, center_y + (index++ - line_count / 2.0) * size * 1.2,
			     line, &style);
		text += length + (text[length] == '\n');
	}
}

static void draw_clusters(cairo_t *cr, Agraph_t *graph, const struct placement *at)
{
	for (int i = 1; i <= GD_n_cluster(graph); i++) {
		Agraph_t *cluster = GD_clust(graph)[i];
		boxf box = GD_bb(cluster);
		double left = page_x(at, box.LL.x), top = page_y(at, box.UR.y);

		cairo_save(cr);
		cairo_set_dash(cr, (const double[]){4, 2}, 2, 0);
		rounded_rect(cr, left, top, page_x(at, box.UR.x) - left, page_y(at, box.LL.y) - top,
			     4);
		po_draw_set_color(cr, 0x9aa5b1);
		cairo_set_line_width(cr, 0.8);
		cairo_stroke(cr);
		cairo_restore(cr);
		if (GD_label(cluster))
			draw_label(
			    cr, GD_label(cluster)->text, page_x(at, GD_label(cluster)->pos.x),
			    page_y(at, GD_label(cluster)->pos.y), 10 * at->scale, PO_COLOR_MUTED);
	}
}

static void draw_arrowhead(cairo_t *cr, const struct placement *at, pointf from, pointf tip)
{
	double tip_x = page_x(at, tip.x), tip_y = page_y(at, tip.y);
	double dx = tip_x - page_x(at, from.x), dy = tip_y - page_y(at, from.y);

	cairo_move_to(cr, tip_x, tip_y);
	cairo_line_to(cr, tip_x - dx + dy * 0.35, tip_y - dy - dx * 0.35);
	cairo_line_to(cr, tip_x - dx - dy * 0.35, tip_y - dy + dx * 0.35);
	cairo_close_path(cr);
	cairo_fill(cr);
}

static void draw_edge(cairo_t *cr, Agedge_t *edge, const struct placement *at)
{
	po_draw_set_color(cr, 0x616e7c);
	cairo_set_line_width(cr, 0.9 * at->scale);
	for (int i = 0; ED_spl(edge) && i < ED_spl(edge)->size; i++) {
		const bezier *curve = &ED_spl(edge)->list[i];

		cairo_move_to(cr, page_x(at, curve->list[0].x), page_y(at, curve->list[0].y));
		for (int p = 1; p + 2 < curve->size; p += 3)
			cairo_curve_to(
			    cr, page_x(at, curve->list[p].x), page_y(at, curve->list[p].y),
			    page_x(at, curve->list[p + 1].x), page_y(at, curve->list[p + 1].y),
			    page_x(at, curve->list[p + 2].x), page_y(at, curve->list[p + 2].y));
		cairo_stroke(cr);
		if (curve->eflag)
			draw_arrowhead(cr, at, curve->list[curve->size - 1], curve->ep);
	}
	if (ED_label(edge))
		draw_label(cr, ED_label(edge)->text, page_x(at, ED_label(edge)->pos.x),
			   page_y(at, ED_label(edge)->pos.y), 9 * at->scale, PO_COLOR_MUTED);
}

static void draw_node(cairo_t *cr, Agnode_t *node, const struct placement *at)
{
	double width = ND_width(node) * 72 * at->scale, height = ND_height(node) * 72 * at->scale;
	double left = page_x(at, ND_coord(node).x) - width / 2;
	double top = page_y(at, ND_coord(node).y) - height / 2;
	const char *pen = agget(node, "penwidth");

	rounded_rect(cr, left, top, width, height, 5 * at->scale);
	po_draw_set_color(cr, attr_color(node, "fillcolor", 0xffffff));
	cairo_fill_preserve(cr);
	po_draw_set_color(cr, attr_color(node, "color", PO_COLOR_INK));
	cairo_set_line_width(cr, (pen ? atof(pen) : 1.0) * at->scale);
	cairo_stroke(cr);
	draw_label(cr, ND_label(node)->text, left + width / 2, top + height / 2, 10 * at->scale,
		   attr_color(node, "fontcolor", PO_COLOR_INK));
	if (ND_xlabel(node) && ND_xlabel(node)->set)
		draw_label(cr, ND_xlabel(node)->text, page_x(at, ND_xlabel(node)->pos.x),
			   page_y(at, ND_xlabel(node)->pos.y), 10 * at->scale, PO_COLOR_ALERT);
}

void po_pipeline_draw(cairo_t *cr, Agraph_t *graph, double x, double y, double scale)
{
	struct placement at = {x, y, scale, GD_bb(graph)};

	cairo_save(cr);
	draw_clusters(cr, graph, &at);
	for (Agnode_t *node = agfstnode(graph); node; node = agnxtnode(graph, node)) {
		for (Agedge_t *edge = agfstout(graph, node); edge; edge = agnxtout(graph, edge))
			draw_edge(cr, edge, &at);
	}
	for (Agnode_t *node = agfstnode(graph); node; node = agnxtnode(graph, node))
		draw_node(cr, node, &at);
	cairo_restore(cr);
}
