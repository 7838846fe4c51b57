/*
 * html_ranks.c: the ranks of a distributed job in index.html, after the findings: one row
 * per rank (its own loop and its collectives) and the straggler, or "no straggler". Only
 * for a recording with ranks: a single-process report is unchanged. Every number is a
 * field of the result (model/distributed.h).
 */
#include <math.h>
#include <stdio.h>

#include "html.h"

static void fmt_ms(double ns, char *text, size_t size)
{
	if (isnan(ns))
		snprintf(text, size, "-");
	else
		snprintf(text, size, "%.3f ms", ns / 1e6);
}

static void rank_row(struct po_html *html, xmlNodePtr body, const struct po_rank_summary *rank)
{
	char number[16], steps[24], step[32], wait[32], forward[32], backward[32], coll[32],
	    waiting[32], last[16];
	const char *cells[10] = {number,   rank->host ? rank->host : "?",
				 steps,	   step,
				 wait,	   forward,
				 backward, coll,
				 waiting,  last};
	bool steady = rank->steady_steps > 0;

	snprintf(number, sizeof(number), "%d", (int)rank->rank);
	snprintf(steps, sizeof(steps), "%lld", (long long)rank->steady_steps);
	fmt_ms(rank->mean_step_ns, step, sizeof(step));
	fmt_ms(steady ? rank->category_mean_ns[PO_CAT_DATA_WAIT] : NAN, wait, sizeof(wait));
	fmt_ms(steady ? rank->category_mean_ns[PO_CAT_FORWARD] : NAN, forward, sizeof(forward));
	fmt_ms(steady ? rank->category_mean_ns[PO_CAT_BACKWARD] : NAN, backward, sizeof(backward));
	fmt_ms(rank->collective_ns_per_step, coll, sizeof(coll));
	fmt_ms(rank->wait_ns_per_step, waiting, sizeof(waiting));
	if (isnan(rank->last_pct))
		snprintf(last, sizeof(last), "-");
	else
		snprintf(last, sizeof(last), "%.1f%%", rank->last_pct);
	po_html_row(html, body, cells, 10, PO_HTML_NUMERIC_TAIL & ~PO_HTML_COLUMN(1));
}

static void straggler_note(struct po_html *html, xmlNodePtr parent, const struct po_distributed *d)
{
	char text[400];

	po_report_straggler_sentence(d, text, sizeof(text));
	po_html_el(html, parent, "p", d->straggler.present ? "note" : "note note-ok", text);
}

enum po_status po_html_fill_ranks(struct po_html *html, struct po_error *err)
{
	static const char *const headers[] = {"Rank",	   "Host",    "Steady steps", "Step",
					      "Data wait", "Forward", "Backward",     "Collectives",
					      "Waiting",   "Last"};
	const struct po_distributed *d = html->analysis->distributed;
	xmlNodePtr parent = po_html_find(html, "findings"), body;

	const struct po_chart *heatmap = po_html_chart(html, "ranks.svg");

	if (!d || !parent)
		return PO_STATUS_OK;
	po_html_el(html, parent, "h3", NULL, "Ranks");
	body = po_html_table(html, parent, "data", headers, 10,
			     PO_HTML_NUMERIC_TAIL & ~PO_HTML_COLUMN(1));
	for (size_t i = 0; i < d->rank_count && i < 1024; i++)
		rank_row(html, body, &d->ranks[i]);
	for (size_t i = 1; i < d->host_count && i < 1024; i++) {
		char text[300];

		po_report_clock_sentence(d, i, text, sizeof(text));
		po_html_el(html, parent, "p", "note", text);
	}
	straggler_note(html, parent, d);
	return heatmap ? po_html_embed_chart(html, parent, heatmap, err) : PO_STATUS_OK;
}
