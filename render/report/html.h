/* html.h: building blocks of index.html over libxml2; every text goes in escaped and cleaned. */
#ifndef PO_REPORT_HTML_H
#define PO_REPORT_HTML_H

#include <libxml/tree.h>

#include "report_priv.h"

/* What the section writers need: the document, the analysis and the charts on disk. */
struct po_html {
	xmlDocPtr doc;			    /* owned */
	const struct po_analysis *analysis; /* weak */
	const struct po_chart_list *charts; /* weak */
	const char *out_dir;		    /* weak */
	int svg_count;			    /* SVGs embedded so far, to keep their ids apart */
	bool failed; /* an allocation failed somewhere: the document is incomplete */
};

/* A child element with an optional class and text (cleaned, escaped on output). */
xmlNodePtr po_html_el(struct po_html *html, xmlNodePtr parent, const char *tag,
		      const char *class_name, const char *text);
/* Like po_html_el, for trace-provided text: cleaned and cut to max_chars. */
xmlNodePtr po_html_label(struct po_html *html, xmlNodePtr parent, const char *tag,
			 const char *class_name, const char *text, size_t max_chars);
void po_html_attr(struct po_html *html, xmlNodePtr node, const char *name, const char *value);
/* The template's element with that id, or NULL. */
xmlNodePtr po_html_find(struct po_html *html, const char *id);
/* Bit of a numeric (right-aligned) column in the masks below. */
#define PO_HTML_COLUMN(index) (1u << (index))
/* Every column but the first. */
#define PO_HTML_NUMERIC_TAIL (~1u)
/* A table with a header row; returns the table body. */
xmlNodePtr po_html_table(struct po_html *html, xmlNodePtr parent, const char *class_name,
			 const char *const *headers, size_t column_count, uint32_t numeric);
/* A row of cells, each cleaned; numeric columns are right aligned. */
xmlNodePtr po_html_row(struct po_html *html, xmlNodePtr body, const char *const *cells,
		       size_t column_count, uint32_t numeric);
/* A colored square in front of a cell's text. */
void po_html_swatch(struct po_html *html, xmlNodePtr parent, uint32_t color);
/* Parses an SVG file and appends its root element, ids made unique, scripts removed. */
enum po_status po_html_embed_svg(struct po_html *html, xmlNodePtr parent, const char *path,
				 const char *title, struct po_error *err) PO_NODISCARD;
/* A chart of the list, by file name, inside a figure with its caption. */
enum po_status po_html_embed_chart(struct po_html *html, xmlNodePtr parent,
				   const struct po_chart *chart, struct po_error *err) PO_NODISCARD;
const struct po_chart *po_html_chart(struct po_html *html, const char *file_name);

/* The sections (html_sections.c, html_data.c), filling the template's insertion points. */
enum po_status po_html_fill_sections(struct po_html *html, struct po_error *err) PO_NODISCARD;
/* Unlinks the element with that id and the whitespace that followed it in the template. */
void po_html_remove(struct po_html *html, const char *id);
/* The ranks of a distributed job after the findings (html_ranks.c); nothing without ranks. */
enum po_status po_html_fill_ranks(struct po_html *html, struct po_error *err) PO_NODISCARD;
/* The function samples' hotspots after the findings (html_hotspots.c); nothing without. */
enum po_status po_html_fill_hotspots(struct po_html *html, struct po_error *err) PO_NODISCARD;
/* The live run's alerts (html_sections.c); removes the section after an offline analysis. */
void po_html_fill_alerts(struct po_html *html);
/* The comparison section (comparison_html.c); removes it from the page without a baseline. */
enum po_status po_html_fill_comparison(struct po_html *html, struct po_error *err) PO_NODISCARD;

#endif /* PO_REPORT_HTML_H */
