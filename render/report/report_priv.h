/*
 * report_priv.h: what the report's modules share: text cleaning and number formatting,
 * category colors and names, the chart table, and the writers of each output.
 */
#ifndef PO_REPORT_PRIV_H
#define PO_REPORT_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cairo.h>

#include "common/status.h"
#include "model/result.h"

/* Longest label shown, in characters; longer ones end in an ellipsis. */
#define PO_REPORT_LABEL_CHARS 120
/* Rows of label tables before the rest is folded into one "other labels" row. */
#define PO_REPORT_TABLE_ROWS 12
/* Buffer large enough for any cleaned label. */
#define PO_REPORT_TEXT_MAX (PO_REPORT_LABEL_CHARS * 4 + 8)

/*
 * Copies trace-provided bytes into out as valid UTF-8 fit for XML, Pango and Graphviz:
 * invalid sequences become U+FFFD, control characters are dropped, and text longer than
 * max_chars code points is cut and ends with an ellipsis. NULL becomes "".
 */
void po_report_clean(const char *text, char *out, size_t out_size, size_t max_chars);

/* Human units: "12.4 ms", "1.52 s", "830 µs"; "n/a" for negative (unknown) values. */
void po_report_fmt_ns(int64_t ns, char *out, size_t out_size);
void po_report_fmt_ms(double ns, char *out, size_t out_size);
void po_report_fmt_bytes(int64_t bytes, char *out, size_t out_size);
void po_report_fmt_pct(double share, char *out, size_t out_size); /* share 0..1 */
/*
 * What the measurement cost (analysis->self_cost) in words for the trace quality section:
 * per step, its share of the steady step, the processes' and the recorder's parts. false
 * (out empty) when the run does not say.
 */
bool po_report_self_cost_text(const struct po_analysis *analysis, char *out, size_t out_size);

/* Names for machines (the JSON spelling) and for people. */
const char *po_report_category_key(enum po_category category);
const char *po_report_category_title(enum po_category category);
const char *po_report_stage_title(enum po_stage stage);
const char *po_report_finding_key(enum po_finding_id id);
const char *po_report_finding_title(enum po_finding_id id);
const char *po_report_run_ending_key(enum po_run_ending ending);
const char *po_report_kernel_class_title(enum po_kernel_class cls);
const char *po_report_precision_key(enum po_precision precision);
const char *po_report_severity_key(enum po_severity severity);
const char *po_report_verdict_key(enum po_verdict verdict);
const char *po_report_verdict_title(enum po_verdict verdict);
const char *po_report_verdict_sentence(enum po_verdict verdict);
const char *po_report_gpu_kind_title(enum po_gpu_kind kind);
/* "slowest, median" for PO_DETAIL_* reasons. */
void po_report_detail_reasons(uint32_t reasons, char *out, size_t out_size);
/* The finding with that id, or NULL. */
const struct po_finding *po_report_find(const struct po_analysis *analysis, enum po_finding_id id);
/* Evidence as text with its unit implied by the key ("12.5", "3", "load"). */
void po_report_fmt_evidence(const struct po_evidence *evidence, char *out, size_t out_size);

/* Colors, as 0xRRGGBB, one per category everywhere the category appears. */
struct po_rgb {
	double r, g, b;
};

uint32_t po_report_category_color(enum po_category category);
/* The order categories are shown in: the data path first, then compute, then the rest. */
extern const enum po_category po_report_category_order[PO_CATEGORY_COUNT];
uint32_t po_report_gpu_color(enum po_gpu_kind kind);
struct po_rgb po_report_rgb(uint32_t color);
/* "#rrggbb" for CSS and Graphviz. */
void po_report_color_hex(uint32_t color, char *out, size_t out_size);

/* Palette of the neutral parts of every chart. */
#define PO_COLOR_INK 0x1f2933u
#define PO_COLOR_MUTED 0x616e7cu
#define PO_COLOR_GRID 0xe4e7ebu
#define PO_COLOR_ACCENT 0x1c4e80u
#define PO_COLOR_ALERT 0xc0392bu
#define PO_COLOR_GPU 0x2e6f6eu
#define PO_COLOR_HOST 0x1c4e80u
#define PO_COLOR_RSS 0x8a6d3bu

/* The one font of every chart and page. */
#define PO_REPORT_FONT "DejaVu Sans"

/* A chart: one drawing function that renders on SVG files and on PDF pages alike. */
struct po_chart;

typedef void (*po_chart_draw_fn)(cairo_t *cr, const struct po_chart *chart);

struct po_chart {
	char file_name[64]; /* under charts/ */
	char title[160];
	double width; /* points */
	double height;
	po_chart_draw_fn draw;
	const struct po_analysis *analysis;  /* weak */
	const struct po_step_detail *detail; /* weak: the timeline's step, else NULL */
	const struct po_flame *flame;	     /* weak: a flame graph's role, else NULL */
	bool comparison; /* drawn in the comparison section, not among the charts */
};

struct po_chart_list {
	struct po_chart *charts; /* owned */
	size_t count;
};

/* Builds the list of charts the analysis calls for, in report order. */
enum po_status po_report_charts_create(const struct po_analysis *analysis,
				       struct po_chart_list *list,
				       struct po_error *err) PO_NODISCARD;
void po_report_charts_destroy(struct po_chart_list *list);

/* Chart drawing functions (charts.c, timeline.c). */
void po_chart_breakdown(cairo_t *cr, const struct po_chart *chart);
void po_chart_timeline(cairo_t *cr, const struct po_chart *chart);
void po_chart_histogram(cairo_t *cr, const struct po_chart *chart);
void po_chart_gpu(cairo_t *cr, const struct po_chart *chart);
void po_chart_memory(cairo_t *cr, const struct po_chart *chart);
void po_chart_workers(cairo_t *cr, const struct po_chart *chart);
/* ranks_words.c: the straggler's sentence, and host's clock against the first host's. */
void po_report_straggler_sentence(const struct po_distributed *d, char *text, size_t size);
void po_report_clock_sentence(const struct po_distributed *d, size_t host, char *text, size_t size);
/* charts_ranks.c: the ranks' step-time heatmap, and its height. */
void po_chart_ranks(cairo_t *cr, const struct po_chart *chart);
/* charts_flame.c: a role's flame graph of function samples, and its height. */
void po_chart_flame(cairo_t *cr, const struct po_chart *chart);
double po_chart_flame_height(const struct po_flame *flame);
double po_chart_ranks_height(const struct po_analysis *analysis);
/* Lanes a timeline needs, to size its chart. */
size_t po_timeline_lane_count(const struct po_analysis *analysis,
			      const struct po_step_detail *detail);

/* Drawing helpers shared by the charts and the PDF pages (draw.c). */
enum po_align { PO_ALIGN_LEFT, PO_ALIGN_CENTER, PO_ALIGN_RIGHT };

struct po_text_style {
	double size; /* points */
	bool bold;
	uint32_t color;
	enum po_align align;
	double wrap_width; /* points; 0: one line */
};

void po_draw_prepare(cairo_t *cr);
/* Draws text with its top at y; returns its height. */
double po_draw_text(cairo_t *cr, double x, double y, const char *text,
		    const struct po_text_style *style);
double po_draw_text_width(cairo_t *cr, const char *text, const struct po_text_style *style);
/* From the top of text drawn at y (po_draw_text) to its first line's baseline. */
double po_draw_text_baseline(cairo_t *cr, const char *text, const struct po_text_style *style);
void po_draw_set_color(cairo_t *cr, uint32_t color);
void po_draw_rect(cairo_t *cr, double x, double y, double width, double height, uint32_t color);
void po_draw_line(cairo_t *cr, double x0, double y0, double x1, double y1, uint32_t color,
		  double line_width);
void po_draw_message(cairo_t *cr, const struct po_chart *chart, const char *message);
/* A "nice" axis maximum and tick step for a value range starting at 0. */
double po_draw_nice_step(double max_value, int tick_count);
/* A legend row of colored squares with labels; returns its height. */
double po_draw_legend(cairo_t *cr, double x, double y, double max_width, const char *const *labels,
		      const uint32_t *colors, size_t count);

/* Writers (svg.c, pdf.c, pipeline.c, html.c). */
enum po_status po_report_write_svgs(const struct po_chart_list *charts, const char *out_dir,
				    struct po_error *err) PO_NODISCARD;
enum po_status po_report_write_pdf(const struct po_analysis *analysis,
				   const struct po_chart_list *charts, const char *path,
				   struct po_error *err) PO_NODISCARD;
enum po_status po_report_write_pipeline(const struct po_analysis *analysis, const char *path,
					struct po_error *err) PO_NODISCARD;
/* Draws the pipeline graph at (x, y), scaled down to max_width; *height is the height used. */
enum po_status po_report_draw_pipeline(const struct po_analysis *analysis, cairo_t *cr, double x,
				       double y, double max_width, double *height,
				       struct po_error *err) PO_NODISCARD;
enum po_status po_report_write_html(const struct po_analysis *analysis,
				    const struct po_chart_list *charts, const char *out_dir,
				    struct po_error *err) PO_NODISCARD;

/* The template, embedded at build time from templates/report.html. */
extern const char po_report_template[];
extern const size_t po_report_template_size;

/* A percentage of the result's steady statistics as a share for po_report_fmt_pct (-1: NaN). */
double po_report_steady_share(double pct);

/*
 * The population a headline figure is over, as its label names it: "of 40 steps" (the
 * step statistics' steps: "of 38 clean steps" where some were left out) or "of 38 steady
 * steps" (the steady statistics, what the findings measure).
 */
enum po_report_population { PO_REPORT_STEPS, PO_REPORT_STEADY };
void po_report_population(const struct po_analysis *analysis, enum po_report_population which,
			  char *out, size_t out_size);

#endif /* PO_REPORT_PRIV_H */
