/* comparison_pdf.c: the comparison with the baseline as pages of report.pdf, after the findings. */
#include <math.h>
#include <stdio.h>

#include "comparison.h"
#include "pdf_page.h"

#define TABLE_ROW_HEIGHT 15.0

/* Right edges of the metric table's numeric columns, from the left margin. */
static const double metric_columns[] = {205, 265, 322, 432, CONTENT_WIDTH};

static void table_cell(struct po_page *page, double right, const char *text, bool bold,
		       uint32_t color)
{
	struct po_text_style style = {8, bold, color, PO_ALIGN_RIGHT, 0};

	po_draw_text(page->cr, MARGIN + right, page->y, text, &style);
}

static void metric_header(struct po_page *page)
{
	static const char *const titles[] = {"BASELINE", "THIS RUN", "CHANGE", "95% INTERVAL",
					     "JUDGEMENT"};
	struct po_text_style style = {7, true, PO_COLOR_MUTED, PO_ALIGN_LEFT, 0};

	po_page_need(page, 3 * TABLE_ROW_HEIGHT);
	po_draw_text(page->cr, MARGIN, page->y, "METRIC", &style);
	for (int i = 0; i < 5; i++)
		table_cell(page, metric_columns[i], titles[i], true, PO_COLOR_MUTED);
	page->y += 11;
	po_draw_line(page->cr, MARGIN, page->y, MARGIN + CONTENT_WIDTH, page->y, PO_COLOR_INK, 1);
	page->y += 4;
}

static void metric_line(struct po_page *page, const struct po_metric_change *metric)
{
	struct po_text_style name = {8.5, false, PO_COLOR_INK, PO_ALIGN_LEFT, 175};
	enum po_cmp_badge badge = po_cmp_badge_of(metric);
	uint32_t color = po_cmp_badge_color(badge);
	char text[5][96];

	po_page_need(page, TABLE_ROW_HEIGHT);
	if (badge == PO_CMP_WORSE)
		po_draw_rect(page->cr, MARGIN, page->y - 2, CONTENT_WIDTH, TABLE_ROW_HEIGHT - 1,
			     0xfdf6ec);
	po_cmp_metric_title(metric->metric, text[0], sizeof(text[0]));
	po_draw_text(page->cr, MARGIN, page->y, text[0], &name);
	po_cmp_fmt_value(metric->metric, metric->old_value, text[1], sizeof(text[1]));
	po_cmp_fmt_value(metric->metric, metric->new_value, text[2], sizeof(text[2]));
	po_cmp_fmt_change(metric, text[3], sizeof(text[3]));
	po_cmp_fmt_interval(metric, text[4], sizeof(text[4]));
	table_cell(page, metric_columns[0], text[1], false, PO_COLOR_INK);
	table_cell(page, metric_columns[1], text[2], false, PO_COLOR_INK);
	table_cell(page, metric_columns[2], text[3],
		   badge == PO_CMP_BETTER || badge == PO_CMP_WORSE,
		   badge == PO_CMP_BETTER || badge == PO_CMP_WORSE ? color : PO_COLOR_INK);
	table_cell(page, metric_columns[3], text[4], false, PO_COLOR_MUTED);
	table_cell(page, metric_columns[4], po_cmp_badge_key(badge), true, color);
	page->y += TABLE_ROW_HEIGHT - 2;
	po_draw_line(page->cr, MARGIN, page->y - 1, MARGIN + CONTENT_WIDTH, page->y - 1,
		     PO_COLOR_GRID, 0.5);
	page->y += 2;
}

static void metric_table(struct po_page *page, const struct po_comparison *comparison)
{
	page->y += 10;
	po_page_text(page, "Metrics", 11, true, PO_COLOR_INK, 0);
	page->y += 4;
	metric_header(page);
	for (size_t i = 0; i < comparison->metric_count; i++) {
		if (po_cmp_metric_shown(&comparison->metrics[i]))
			metric_line(page, &comparison->metrics[i]);
	}
}

static void finding_lines(struct po_page *page, const struct po_comparison *comparison)
{
	static const enum po_finding_change_kind order[] = {PO_FINDING_NEW, PO_FINDING_RESOLVED,
							    PO_FINDING_PERSISTING};
	char title[PO_REPORT_TEXT_MAX], id[PO_REPORT_TEXT_MAX], text[PO_REPORT_TEXT_MAX * 2 + 64];

	page->y += 12;
	po_page_text(page, "Findings", 11, true, PO_COLOR_INK, 0);
	page->y += 4;
	if (comparison->finding_count == 0)
		po_page_text(page, "Neither run has a finding.", 9, false, PO_COLOR_MUTED, 0);
	for (size_t rank = 0; rank < 3; rank++) {
		for (size_t i = 0; i < comparison->finding_count; i++) {
			const struct po_finding_change *change = &comparison->findings[i];

			if (change->change != order[rank])
				continue;
			po_cmp_finding_title(change->id, title, sizeof(title));
			po_report_clean(change->id, id, sizeof(id), 60);
			snprintf(text, sizeof(text), "%s  \xc2\xb7  %s (%s)",
				 po_cmp_finding_change_key(change->change), title, id);
			po_page_text(page, text, 9, change->change != PO_FINDING_PERSISTING,
				     change->change == PO_FINDING_NEW	     ? PO_COLOR_WARNING
				     : change->change == PO_FINDING_RESOLVED ? PO_COLOR_OK
									     : PO_COLOR_MUTED,
				     0);
		}
	}
}

static void gate_lines(struct po_page *page, const struct po_comparison *comparison)
{
	char gate[PO_REPORT_TEXT_MAX], text[PO_REPORT_TEXT_MAX + 16];

	const char *const titles[2] = {"These --fail-if gates tripped:",
				       "These --fail-if gates cannot be judged (other programs' "
				       "load differed between the runs):"};
	const char *const *lists[2] = {comparison->gates_tripped, comparison->gates_inconclusive};
	size_t counts[2] = {comparison->gates_tripped_count, comparison->gates_inconclusive_count};

	for (int k = 0; k < 2; k++) {
		if (counts[k] == 0)
			continue;
		page->y += 8;
		po_page_text(page, titles[k], 9.5, true, PO_COLOR_WARNING, 0);
		for (size_t i = 0; i < counts[k]; i++) {
			po_report_clean(lists[k][i], gate, sizeof(gate), PO_REPORT_LABEL_CHARS);
			snprintf(text, sizeof(text), "\xe2\x80\xa2 %s", gate);
			po_page_text(page, text, 9, false, PO_COLOR_WARNING, 10);
		}
	}
}

static void summary_lines(struct po_page *page, const struct po_comparison *comparison)
{
	char label[PO_REPORT_TEXT_MAX], text[PO_REPORT_TEXT_MAX * 2 + 400];

	po_cmp_baseline_label(comparison, label, sizeof(label));
	snprintf(text, sizeof(text), "COMPARED WITH THE BASELINE: %s", label);
	po_page_text(page, text, 8, true, PO_COLOR_MUTED, 0);
	page->y += 4;
	po_cmp_headline(comparison, text, sizeof(text));
	po_page_text(page, text, 16, true, PO_COLOR_INK, 0);
	page->y += 4;
	po_cmp_summary(comparison, text, sizeof(text));
	po_page_text(page, text, 10.5, false, PO_COLOR_INK, 0);
}

void po_pdf_comparison(struct po_page *page, const struct po_chart_list *charts)
{
	const struct po_comparison *comparison = page->analysis->diagnosis.comparison;

	po_page_break(page);
	po_page_heading(page, "Comparison with the baseline");
	summary_lines(page, comparison);
	gate_lines(page, comparison);
	metric_table(page, comparison);
	finding_lines(page, comparison);
	page->y += 16;
	for (size_t i = 0; i < charts->count; i++) {
		if (charts->charts[i].comparison)
			po_page_chart(page, &charts->charts[i]);
	}
	po_page_break(page);
}
