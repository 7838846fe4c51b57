/* pdf_page.h: the flowing page of report.pdf, shared by its sections (pdf.c, comparison_pdf.c). */
#ifndef PO_REPORT_PDF_PAGE_H
#define PO_REPORT_PDF_PAGE_H

#include "report_priv.h"

#define PAGE_WIDTH 595.0 /* A4 in points */
#define PAGE_HEIGHT 842.0
#define MARGIN 50.0
#define CONTENT_WIDTH (PAGE_WIDTH - 2 * MARGIN)
#define CONTENT_BOTTOM (PAGE_HEIGHT - 60.0)
#define TEXT_CHARS 600

/* Where the next block goes: sections draw from y down and break pages as they fill. */
struct po_page {
	cairo_t *cr;			    /* weak */
	const struct po_analysis *analysis; /* weak */
	double y;
	int number;
};

/* Ends the page (with its footer) and starts the next one. */
void po_page_break(struct po_page *page);
/* Breaks the page unless height points still fit on it. */
void po_page_need(struct po_page *page, double height);
void po_page_text(struct po_page *page, const char *text, double size, bool bold, uint32_t color,
		  double indent);
void po_page_heading(struct po_page *page, const char *text);
void po_page_row(struct po_page *page, const char *label, const char *value);
/* A chart with its title, drawn at the content width. */
void po_page_chart(struct po_page *page, const struct po_chart *chart);

/* A distributed job's ranks and the function samples, when the result has them
 * (pdf_tables.c). */
void po_pdf_ranks(struct po_page *page);
void po_pdf_hotspots(struct po_page *page);

/* The comparison with the baseline, on its own pages (comparison_pdf.c). */
void po_pdf_comparison(struct po_page *page, const struct po_chart_list *charts);

#endif /* PO_REPORT_PDF_PAGE_H */
