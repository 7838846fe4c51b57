/*
 * pdf_tables.c: the report.pdf sections of index.html's tables that the PDF lacked: the
 * function samples (--stacks) and a distributed job's ranks. Each is there only when the
 * result has it, so other reports keep their pages; every number is a field of the result.
 */
#include <math.h>
#include <stdio.h>

#include "pdf_page.h"
#include "common/text.h"

/* Functions per (role, stage), as in index.html; summary.json has every kept function. */

static void fmt_ms_or_dash(double ns, char *text, size_t size)
{
	if (isnan(ns))
		snprintf(text, size, "-");
	else
		po_report_fmt_ms(ns, text, size);
}

void po_pdf_hotspots(struct po_page *page)
{
	const struct po_analysis *analysis = page->analysis;
	char text[TEXT_CHARS + 2 * PO_REPORT_TEXT_MAX], function[PO_REPORT_TEXT_MAX],
	    file[PO_REPORT_TEXT_MAX];

	if (!analysis->hotspot_group_count)
		return;
	po_page_heading(page, "Hotspots");
	snprintf(text, sizeof(text),
		 "Function samples (%lld): each function's share of its stage's sampled %s time, "
		 "in its own code (self) and below it (total); the first by self share, then those "
		 "with the largest total share.",
		 (long long)analysis->stack_samples, analysis->stacks_wall ? "wall" : "CPU");
	po_page_text(page, text, 9, false, PO_COLOR_MUTED, 0);
	for (size_t i = 0; i < analysis->hotspot_group_count; i++) {
		const struct po_hotspot_group *group = &analysis->hotspot_groups[i];
		char label[96];
		size_t listed = 0;

		snprintf(label, sizeof(label), "%s, %s", po_role_name(group->role),
			 group->stage < 0 ? "no stage" : po_stage_name(group->stage));
		for (size_t k = 0; k < group->hotspot_count; k++)
			listed += group->hotspots[k].listed;
		po_page_need(page, 14.0 * ((double)listed + 1));
		po_page_text(page, label, 9.5, true, PO_COLOR_INK, 0);
		for (size_t k = 0; k < group->hotspot_count; k++) {
			const struct po_hotspot *hotspot = &group->hotspots[k];

			if (!hotspot->listed)
				continue;

			po_report_clean(hotspot->function, function, sizeof(function), 60);
			po_report_clean(hotspot->file, file, sizeof(file), 60);
			char line[16] = ""; /* none for a native frame: its file is its object */

			if (hotspot->line > 0)
				snprintf(line, sizeof(line), ":%d", (int)hotspot->line);
			snprintf(text, sizeof(text),
				 "%s (%s%s): self %.1f%%, total %.1f%%, %lld samples", function,
				 file, line, hotspot->self_pct, hotspot->total_pct,
				 (long long)hotspot->samples);
			po_page_text(page, text, 9, false, PO_COLOR_INK, 10);
		}
	}
	page->y += 6;
}

void po_pdf_ranks(struct po_page *page)
{
	const struct po_distributed *d = page->analysis->distributed;
	char text[TEXT_CHARS], label[96], step[32], wait[32], coll[32], waiting[32];

	if (!d)
		return;
	po_page_heading(page, "Ranks");
	for (size_t i = 0; i < d->rank_count && i < 1024; i++) {
		const struct po_rank_summary *rank = &d->ranks[i];
		bool steady = rank->steady_steps > 0;

		snprintf(label, sizeof(label), "rank %d%s%.*s%s", (int)rank->rank,
			 rank->host ? " (" : "", po_text_precision(rank->host, 40),
			 rank->host ? rank->host : "", rank->host ? ")" : "");
		fmt_ms_or_dash(rank->mean_step_ns, step, sizeof(step));
		fmt_ms_or_dash(steady ? rank->category_mean_ns[PO_CAT_DATA_WAIT] : NAN, wait,
			       sizeof(wait));
		fmt_ms_or_dash(rank->collective_ns_per_step, coll, sizeof(coll));
		fmt_ms_or_dash(rank->wait_ns_per_step, waiting, sizeof(waiting));
		snprintf(text, sizeof(text),
			 "%lld steady steps of %s; data wait %s, collectives %s, of which waiting "
			 "for the others %s per step; last in %.1f%% of the steps",
			 (long long)rank->steady_steps, step, wait, coll, waiting,
			 isnan(rank->last_pct) ? 0.0 : rank->last_pct);
		po_page_row(page, label, text);
	}
	for (size_t i = 1; i < d->host_count && i < 1024; i++) {
		po_report_clock_sentence(d, i, text, sizeof(text));
		po_page_text(page, text, 9, false, PO_COLOR_MUTED, 0);
	}
	po_report_straggler_sentence(d, text, sizeof(text));
	po_page_text(page, text, 9.5, d->straggler.present,
		     d->straggler.present ? PO_COLOR_ALERT : PO_COLOR_INK, 0);
	page->y += 6;
}
