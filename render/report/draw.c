/* draw.c: colors, text and primitives shared by every chart and the PDF pages. */
#include <math.h>
#include <stdio.h>

#include <pango/pangocairo.h>

#include "report_priv.h"

#define PO_FONT_FAMILY PO_REPORT_FONT

/* A restrained palette: data-side stages in blues and greens, compute in warm tones. */
static const uint32_t category_colors[PO_CATEGORY_COUNT] = {
    [PO_CAT_LOAD] = 0x4e79a7,	  [PO_CAT_PREPROCESS] = 0x76b7b2, [PO_CAT_COLLATE] = 0x59a14f,
    [PO_CAT_GPU_SYNC] = 0xedc948, [PO_CAT_H2D_COPY] = 0xb07aa1,	  [PO_CAT_OPTIMIZER] = 0xff9da7,
    [PO_CAT_BACKWARD] = 0x9c755f, [PO_CAT_FORWARD] = 0xf28e2b,	  [PO_CAT_CHECKPOINT] = 0x8c8c8c,
    [PO_CAT_EVAL] = 0x8cd17d,	  [PO_CAT_CUSTOM] = 0xd4a6c8,	  [PO_CAT_DATA_WAIT] = 0xe15759,
    [PO_CAT_HANDOFF] = 0xf1a3a4,  [PO_CAT_GC] = 0x6b5b95,	  [PO_CAT_OTHER] = 0xcfd4da,
};

const enum po_category po_report_category_order[PO_CATEGORY_COUNT] = {
    PO_CAT_DATA_WAIT,  PO_CAT_HANDOFF, PO_CAT_LOAD,	PO_CAT_PREPROCESS, PO_CAT_COLLATE,
    PO_CAT_H2D_COPY,   PO_CAT_FORWARD, PO_CAT_BACKWARD, PO_CAT_OPTIMIZER,  PO_CAT_GPU_SYNC,
    PO_CAT_CHECKPOINT, PO_CAT_EVAL,    PO_CAT_CUSTOM,	PO_CAT_GC,	   PO_CAT_OTHER,
};

uint32_t po_report_category_color(enum po_category category)
{
	return (unsigned)category < PO_CATEGORY_COUNT ? category_colors[category] : 0xcfd4da;
}

uint32_t po_report_gpu_color(enum po_gpu_kind kind)
{
	switch (kind) {
	case PO_GPU_KERNEL:
		return PO_COLOR_GPU;
	case PO_GPU_MEMCPY_H2D:
		return category_colors[PO_CAT_H2D_COPY];
	case PO_GPU_MEMCPY_D2H:
	case PO_GPU_MEMCPY_D2D:
		return 0x7f5a83;
	default:
		return 0x9aa5b1;
	}
}

struct po_rgb po_report_rgb(uint32_t color)
{
	struct po_rgb rgb = {((color >> 16) & 0xff) / 255.0, ((color >> 8) & 0xff) / 255.0,
			     (color & 0xff) / 255.0};

	return rgb;
}

void po_report_color_hex(uint32_t color, char *out, size_t out_size)
{
	snprintf(out, out_size, "#%06x", (unsigned)(color & 0xffffff));
}

void po_draw_set_color(cairo_t *cr, uint32_t color)
{
	struct po_rgb rgb = po_report_rgb(color);

	cairo_set_source_rgb(cr, rgb.r, rgb.g, rgb.b);
}

/* Unhinted metrics keep layouts identical on every surface and machine. */
void po_draw_prepare(cairo_t *cr)
{
	cairo_font_options_t *options = cairo_font_options_create();

	cairo_font_options_set_hint_metrics(options, CAIRO_HINT_METRICS_OFF);
	cairo_font_options_set_hint_style(options, CAIRO_HINT_STYLE_NONE);
	cairo_set_font_options(cr, options);
	cairo_font_options_destroy(options);
}

static PangoLayout *text_layout(cairo_t *cr, const char *text, const struct po_text_style *style)
{
	PangoLayout *layout = pango_cairo_create_layout(cr);
	PangoFontDescription *font = pango_font_description_new();

	pango_font_description_set_family(font, PO_FONT_FAMILY);
	pango_font_description_set_absolute_size(font, style->size * PANGO_SCALE);
	pango_font_description_set_weight(font,
					  style->bold ? PANGO_WEIGHT_BOLD : PANGO_WEIGHT_NORMAL);
	pango_layout_set_font_description(layout, font);
	pango_font_description_free(font);
	if (style->wrap_width > 0) {
		pango_layout_set_width(layout, (int)(style->wrap_width * PANGO_SCALE));
		pango_layout_set_wrap(layout, PANGO_WRAP_WORD_CHAR);
	}
	pango_layout_set_text(layout, text, -1);
	return layout;
}

double po_draw_text_width(cairo_t *cr, const char *text, const struct po_text_style *style)
{
	PangoLayout *layout = text_layout(cr, text, style);
	int width, height;

	pango_layout_get_size(layout, &width, &height);
	g_object_unref(layout);
	return (double)width / PANGO_SCALE;
}

double po_draw_text_baseline(cairo_t *cr, const char *text, const struct po_text_style *style)
{
	PangoLayout *layout = text_layout(cr, text, style);
	int baseline = pango_layout_get_baseline(layout);

	g_object_unref(layout);
	return (double)baseline / PANGO_SCALE;
}

double po_draw_text(cairo_t *cr, double x, double y, const char *text,
		    const struct po_text_style *style)
{
	PangoLayout *layout = text_layout(cr, text, style);
	int width, height;
	double left = x;

	pango_layout_get_size(layout, &width, &height);
	if (style->align == PO_ALIGN_CENTER)
		left = x - (double)width / PANGO_SCALE / 2;
	else if (style->align == PO_ALIGN_RIGHT)
		left = x - (double)width / PANGO_SCALE;
	po_draw_set_color(cr, style->color);
	cairo_move_to(cr, left, y);
	pango_cairo_show_layout(cr, layout);
	g_object_unref(layout);
	return (double)height / PANGO_SCALE;
}

void po_draw_rect(cairo_t *cr, double x, double y, double width, double height, uint32_t color)
{
	po_draw_set_color(cr, color);
	cairo_rectangle(cr, x, y, width, height);
	cairo_fill(cr);
}

void po_draw_line(cairo_t *cr, double x0, double y0, double x1, double y1, uint32_t color,
		  double line_width)
{
	po_draw_set_color(cr, color);
	cairo_set_line_width(cr, line_width);
	cairo_move_to(cr, x0, y0);
	cairo_line_to(cr, x1, y1);
	cairo_stroke(cr);
}

void po_draw_message(cairo_t *cr, const struct po_chart *chart, const char *message)
{
	struct po_text_style style = {10, false, PO_COLOR_MUTED, PO_ALIGN_CENTER, 0};

	cairo_set_source_rgb(cr, 0.97, 0.975, 0.98);
	cairo_rectangle(cr, 0, 0, chart->width, chart->height);
	cairo_fill(cr);
	po_draw_text(cr, chart->width / 2, chart->height / 2 - 7, message, &style);
}

double po_draw_nice_step(double max_value, int tick_count)
{
	return po_stats_nice_step(max_value, tick_count);
}

double po_draw_legend(cairo_t *cr, double x, double y, double max_width, const char *const *labels,
		      const uint32_t *colors, size_t count)
{
	struct po_text_style style = {8, false, PO_COLOR_INK, PO_ALIGN_LEFT, 0};
	double cursor_x = x, cursor_y = y, row_height = 13;

	for (size_t i = 0; i < count; i++) {
		double item_width = 14 + po_draw_text_width(cr, labels[i], &style) + 14;

		if (cursor_x > x && cursor_x + item_width > x + max_width) {
			cursor_x = x;
			cursor_y += row_height;
		}
		po_draw_rect(cr, cursor_x, cursor_y + 2, 8, 8, colors[i]);
		po_draw_text(cr, cursor_x + 12, cursor_y, labels[i], &style);
		cursor_x += item_width;
	}
	return cursor_y + row_height - y;
}
