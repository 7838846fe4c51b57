/*
 * html_hotspots.c: the function samples in index.html, after the findings: per (role,
 * stage), its top functions by self share. Only for a recording with function samples
 * (--stacks): other reports are unchanged. Every number is a field of the result
 * (analysis->hotspot_groups).
 */
#include <stdio.h>

#include "html.h"

static void hotspot_row(struct po_html *html, xmlNodePtr body, const struct po_hotspot_group *group,
			const struct po_hotspot *hotspot, bool first)
{
	char samples[24], self[16], total[16], where[512];
	const char *cells[7] = {first ? po_role_name(group->role) : "",
				first ? (group->stage < 0 ? "none" : po_stage_name(group->stage))
				      : "",
				hotspot->function,
				where,
				self,
				total,
				samples};

	if (hotspot->line > 0)
		snprintf(where, sizeof(where), "%s:%d", hotspot->file, (int)hotspot->line);
	else /* a native frame: its file is its object */
		snprintf(where, sizeof(where), "%s", hotspot->file);
	snprintf(self, sizeof(self), "%.1f%%", hotspot->self_pct);
	snprintf(total, sizeof(total), "%.1f%%", hotspot->total_pct);
	snprintf(samples, sizeof(samples), "%lld", (long long)hotspot->samples);
	po_html_row(html, body, cells, 7,
		    PO_HTML_COLUMN(4) | PO_HTML_COLUMN(5) | PO_HTML_COLUMN(6));
}

enum po_status po_html_fill_hotspots(struct po_html *html, struct po_error *err)
{
	static const char *const headers[] = {"Role", "Stage", "Function", "Where",
					      "Self", "Total", "Samples"};
	const struct po_analysis *analysis = html->analysis;
	xmlNodePtr parent = po_html_find(html, "findings"), body;
	char text[200];

	if (!analysis->hotspot_group_count || !parent)
		return PO_STATUS_OK;
	po_html_el(html, parent, "h3", NULL, "Hotspots");
	snprintf(text, sizeof(text),
		 "Function samples (%lld): each function's share of its stage's sampled %s "
		 "time, in its own code (self) and below it (total); the first by self share, "
		 "then those with the largest total share.",
		 (long long)analysis->stack_samples, analysis->stacks_wall ? "wall" : "CPU");
	po_html_el(html, parent, "p", "note", text);
	body = po_html_table(html, parent, "data", headers, 7,
			     PO_HTML_COLUMN(4) | PO_HTML_COLUMN(5) | PO_HTML_COLUMN(6));
	for (size_t i = 0; i < analysis->hotspot_group_count; i++) {
		const struct po_hotspot_group *group = &analysis->hotspot_groups[i];

		for (size_t k = 0, shown = 0; k < group->hotspot_count; k++)
			if (group->hotspots[k].listed)
				hotspot_row(html, body, group, &group->hotspots[k], shown++ == 0);
	}
	/* Each role's flame graph under its title (charts_flame.c). */
	for (size_t i = 0; i < html->charts->count; i++) {
		const struct po_chart *chart = &html->charts->charts[i];
		enum po_status status;

		if (!chart->flame)
			continue;
		po_html_el(html, parent, "h4", NULL, chart->title);
		status = po_html_embed_chart(html, parent, chart, err);
		if (status != PO_STATUS_OK)
			return status;
	}
	return PO_STATUS_OK;
}
