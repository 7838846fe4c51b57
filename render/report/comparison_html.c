/*
 * comparison_html.c: the "Comparison with the baseline" section of index.html. Without a
 * comparison the section, its navigation link and its style are taken out of the template,
 * so a report without --baseline is the same, byte for byte, as one from before the section.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "comparison.h"
#include "html.h"

static bool has_class(xmlNodePtr node, const char *class_name)
{
	xmlChar *value = xmlGetProp(node, BAD_CAST "class");
	bool found = value && strcmp((const char *)value, class_name) == 0;

	xmlFree(value);
	return found;
}

/* Numbers the sections' headings 1, 2, ... in document order. */
static void number_sections(struct po_html *html, xmlNodePtr node, int *number)
{
	for (; node; node = node->next) {
		xmlNodePtr first = node->children;
		char text[16];

		if (node->type != XML_ELEMENT_NODE)
			continue;
		if (xmlStrcmp(node->name, BAD_CAST "h2") == 0 && first &&
		    first->type == XML_ELEMENT_NODE && has_class(first, "num")) {
			snprintf(text, sizeof(text), "%d", ++*number);
			xmlNodeSetContent(first, BAD_CAST text);
			continue;
		}
		number_sections(html, node->children, number);
	}
}

static void fill_card(struct po_html *html, xmlNodePtr parent,
		      const struct po_comparison *comparison)
{
	const struct po_metric_change *p50 = po_cmp_find_metric(comparison, PO_CMP_STEPS_P50);
	enum po_cmp_badge badge = p50 ? po_cmp_badge_of(p50) : PO_CMP_UNTESTED;
	char class_name[64], label[PO_REPORT_TEXT_MAX], text[PO_REPORT_TEXT_MAX * 2 + 400];
	xmlNodePtr card;

	snprintf(class_name, sizeof(class_name), "comparison-card cmp-%s", po_cmp_badge_key(badge));
	card = po_html_el(html, parent, "div", class_name, NULL);
	po_cmp_baseline_label(comparison, label, sizeof(label));
	po_html_el(html, po_html_el(html, card, "p", "eyebrow", "Compared with the baseline: "),
		   "span", "cmp-label", label);
	po_cmp_headline(comparison, text, sizeof(text));
	po_html_el(html, card, "p", "cmp-headline", text);
	po_cmp_summary(comparison, text, sizeof(text));
	po_html_el(html, card, "p", NULL, text);
}

static void metric_row(struct po_html *html, xmlNodePtr body, const struct po_metric_change *metric)
{
	enum po_cmp_badge badge = po_cmp_badge_of(metric);
	char title[96], old_value[48], new_value[48], change[32], interval[64], class_name[32];
	const char *cells[6] = {title, old_value, new_value, change, interval, ""};
	xmlNodePtr row;

	po_cmp_metric_title(metric->metric, title, sizeof(title));
	po_cmp_fmt_value(metric->metric, metric->old_value, old_value, sizeof(old_value));
	po_cmp_fmt_value(metric->metric, metric->new_value, new_value, sizeof(new_value));
	po_cmp_fmt_change(metric, change, sizeof(change));
	po_cmp_fmt_interval(metric, interval, sizeof(interval));
	row = po_html_row(html, body, cells, 6, 0x1e);
	snprintf(class_name, sizeof(class_name), "cmp-%s", po_cmp_badge_key(badge));
	po_html_attr(html, row, "class", class_name);
	if (row->children && row->children->next && row->children->next->next &&
	    row->children->next->next->next)
		po_html_attr(html, row->children->next->next->next, "class", "num cmp-change");
	snprintf(class_name, sizeof(class_name), "cmp-badge cmp-%s", po_cmp_badge_key(badge));
	po_html_el(html, xmlGetLastChild(row), "span", class_name, po_cmp_badge_key(badge));
}

static void fill_metrics(struct po_html *html, xmlNodePtr parent,
			 const struct po_comparison *comparison)
{
	static const char *const headers[] = {"Metric", "Baseline",	"This run",
					      "Change", "95% interval", "Judgement"};
	xmlNodePtr body;

	po_html_el(html, parent, "h3", NULL, "Metrics");
	body = po_html_table(html, parent, "data cmp", headers, 6, 0x1e);
	for (size_t i = 0; i < comparison->metric_count; i++) {
		if (po_cmp_metric_shown(&comparison->metrics[i]))
			metric_row(html, body, &comparison->metrics[i]);
	}
}

static void finding_row(struct po_html *html, xmlNodePtr body,
			const struct po_finding_change *change)
{
	const char *key = po_cmp_finding_change_key(change->change);
	char title[PO_REPORT_TEXT_MAX], class_name[48];
	const char *cells[5] = {title, change->id, "",
				change->old_severity ? change->old_severity : "\xe2\x80\x94",
				change->new_severity ? change->new_severity : "\xe2\x80\x94"};
	xmlNodePtr row;

	po_cmp_finding_title(change->id, title, sizeof(title));
	row = po_html_row(html, body, cells, 5, 0);
	snprintf(class_name, sizeof(class_name), "cmp-badge cmp-%s", key);
	if (row->children && row->children->next && row->children->next->next)
		po_html_el(html, row->children->next->next, "span", class_name, key);
}

static void fill_findings(struct po_html *html, xmlNodePtr parent,
			  const struct po_comparison *comparison)
{
	static const char *const headers[] = {"Finding", "Id", "Change", "Baseline severity",
					      "This run's severity"};
	static const enum po_finding_change_kind order[] = {PO_FINDING_NEW, PO_FINDING_RESOLVED,
							    PO_FINDING_PERSISTING};
	char text[160];
	xmlNodePtr body;

	po_html_el(html, parent, "h3", NULL, "Findings");
	snprintf(text, sizeof(text), "%zu new, %zu resolved, %zu still there.",
		 comparison->new_findings, comparison->resolved_findings,
		 comparison->finding_count - comparison->new_findings -
		     comparison->resolved_findings);
	if (comparison->finding_count == 0) {
		po_html_el(html, parent, "p", "empty", "Neither run has a finding.");
		return;
	}
	po_html_el(html, parent, "p", NULL, text);
	body = po_html_table(html, parent, "data cmp-findings", headers, 5, 0);
	for (size_t rank = 0; rank < 3; rank++) {
		for (size_t i = 0; i < comparison->finding_count; i++) {
			if (comparison->findings[i].change == order[rank])
				finding_row(html, body, &comparison->findings[i]);
		}
	}
}

static void fill_gates(struct po_html *html, xmlNodePtr parent,
		       const struct po_comparison *comparison)
{
	xmlNodePtr note, list;

	if (comparison->gates_tripped_count > 0) {
		note = po_html_el(html, parent, "div", "note note-warn cmp-gates", NULL);
		po_html_el(html, note, "p", NULL, "These --fail-if gates tripped:");
		list = po_html_el(html, note, "ul", NULL, NULL);
		for (size_t i = 0; i < comparison->gates_tripped_count; i++)
			po_html_label(html, po_html_el(html, list, "li", NULL, NULL), "code", NULL,
				      comparison->gates_tripped[i], PO_REPORT_LABEL_CHARS);
	}
	if (comparison->gates_inconclusive_count > 0) {
		note = po_html_el(html, parent, "div", "note note-warn cmp-gates", NULL);
		po_html_el(html, note, "p", NULL,
			   "These --fail-if gates cannot be judged (other programs' load differed "
			   "between the runs):");
		list = po_html_el(html, note, "ul", NULL, NULL);
		for (size_t i = 0; i < comparison->gates_inconclusive_count; i++)
			po_html_label(html, po_html_el(html, list, "li", NULL, NULL), "code", NULL,
				      comparison->gates_inconclusive[i], PO_REPORT_LABEL_CHARS);
	}
}

static enum po_status fill_charts(struct po_html *html, xmlNodePtr parent, struct po_error *err)
{
	for (size_t i = 0; i < html->charts->count; i++) {
		const struct po_chart *chart = &html->charts->charts[i];
		enum po_status status;

		if (!chart->comparison)
			continue;
		po_html_el(html, parent, "h3", NULL, chart->title);
		status = po_html_embed_chart(html, parent, chart, err);
		if (status != PO_STATUS_OK)
			return status;
	}
	return PO_STATUS_OK;
}

enum po_status po_html_fill_comparison(struct po_html *html, struct po_error *err)
{
	const struct po_comparison *comparison = html->analysis->diagnosis.comparison;
	xmlNodePtr parent = po_html_find(html, "comparison");
	enum po_status status = PO_STATUS_OK;
	int number = 0;

	if (!comparison) {
		po_html_remove(html, "comparison-style");
		po_html_remove(html, "comparison-link");
		po_html_remove(html, "comparison-section");
	} else if (parent) {
		fill_card(html, parent, comparison);
		fill_gates(html, parent, comparison);
		fill_metrics(html, parent, comparison);
		fill_findings(html, parent, comparison);
		status = fill_charts(html, parent, err);
	}
	number_sections(html, xmlDocGetRootElement(html->doc), &number);
	return status;
}
