/* html_sections.c: the report's narrative sections: header, verdict, findings, quality, run. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "evidence_names.h"
#include "html.h"

/* html_data.c */
enum po_status po_html_fill_data(struct po_html *html, struct po_error *err) PO_NODISCARD;

static void fill_subtitle(struct po_html *html)
{
	const struct po_analysis *analysis = html->analysis;
	xmlNodePtr node = po_html_find(html, "subtitle");
	char framework[PO_REPORT_TEXT_MAX], text[PO_REPORT_TEXT_MAX + 160], span[32];
	int64_t window = analysis->step_count
			     ? po_analysis_step(analysis, analysis->step_count - 1).end_ns -
				   po_analysis_step(analysis, 0).begin_ns
			     : -1;

	if (!node)
		return;
	po_report_clean(analysis->framework ? analysis->framework : "unknown framework", framework,
			sizeof(framework), 40);
	po_report_fmt_ns(window, span, sizeof(span));
	snprintf(text, sizeof(text),
		 "%s \xc2\xb7 %zu step%s over %s \xc2\xb7 %zu process%s \xc2\xb7 %zu data-loader "
		 "worker%s",
		 framework, analysis->step_count, analysis->step_count == 1 ? "" : "s", span,
		 analysis->process_count, analysis->process_count == 1 ? "" : "es",
		 analysis->worker_count, analysis->worker_count == 1 ? "" : "s");
	xmlNodeAddContent(node, BAD_CAST text);
}

static void add_kpi(struct po_html *html, xmlNodePtr parent, const char *value, const char *label)
{
	xmlNodePtr kpi = po_html_el(html, parent, "div", "kpi", NULL);

	po_html_el(html, kpi, "div", "kpi-value", value);
	po_html_el(html, kpi, "div", "kpi-label", label);
}

static void fill_kpis(struct po_html *html, xmlNodePtr parent)
{
	const struct po_step_stats *stats = &html->analysis->step_stats;
	xmlNodePtr kpis = po_html_el(html, parent, "div", "kpis", NULL);
	bool measured = stats->clean_count > 0;
	char value[48], steps[48], steady[48], label[96];

	po_report_population(html->analysis, PO_REPORT_STEPS, steps, sizeof(steps));
	po_report_population(html->analysis, PO_REPORT_STEADY, steady, sizeof(steady));
	po_report_fmt_ns(measured ? stats->p50_ns : -1, value, sizeof(value));
	snprintf(label, sizeof(label), "median step time %s", steps);
	add_kpi(html, kpis, value, label);
	po_report_fmt_ns(measured ? stats->p95_ns : -1, value, sizeof(value));
	snprintf(label, sizeof(label), "p95 step time %s", steps);
	add_kpi(html, kpis, value, label);
	if (measured)
		snprintf(value, sizeof(value), "%.2f/s", stats->steps_per_s);
	else
		snprintf(value, sizeof(value), "n/a");
	add_kpi(html, kpis, value, "steps per second");
	if (stats->samples_per_s >= 0)
		snprintf(value, sizeof(value), "%.1f/s", stats->samples_per_s);
	else
		snprintf(value, sizeof(value), "n/a");
	add_kpi(html, kpis, value, "samples per second");
	po_report_fmt_pct(po_report_steady_share(html->analysis->diagnosis.steady.gpu_busy_pct),
			  value, sizeof(value));
	snprintf(label, sizeof(label), "GPU busy %s", steady);
	add_kpi(html, kpis, value, label);
	po_report_fmt_pct(po_report_steady_share(html->analysis->diagnosis.steady.input_wait_pct),
			  value, sizeof(value));
	snprintf(label, sizeof(label), "waiting for input %s", steady);
	add_kpi(html, kpis, value, label);
}

static void fill_verdict(struct po_html *html)
{
	xmlNodePtr section = po_html_find(html, "verdict");
	xmlNodePtr card;
	char class_name[64];

	if (!section)
		return;
	snprintf(class_name, sizeof(class_name), "verdict-card verdict-%s",
		 po_report_verdict_key(html->analysis->diagnosis.verdict));
	card = po_html_el(html, section, "div", class_name, NULL);
	po_html_el(html, card, "p", "eyebrow", "Verdict");
	po_html_el(html, card, "p", "verdict-title",
		   po_report_verdict_title(html->analysis->diagnosis.verdict));
	po_html_el(html, card, "p", "verdict-text",
		   po_report_verdict_sentence(html->analysis->diagnosis.verdict));
	if (html->analysis->diagnosis.verdict_reason) {
		char reason[256];

		snprintf(reason, sizeof(reason), "Here %s.",
			 html->analysis->diagnosis.verdict_reason);
		po_html_el(html, card, "p", "verdict-text", reason);
	}
	fill_kpis(html, section);
}

/*
 * One evidence row: the key's plain name (the JSON key in its title, to find it in
 * summary.json), the value with its unit, and what the measure means.
 */
static void evidence_row(struct po_html *html, xmlNodePtr body, const struct po_finding *finding,
			 const struct po_evidence *evidence)
{
	struct po_evidence_words words;
	char value[PO_REPORT_TEXT_MAX + PO_EVIDENCE_UNIT_MAX], key[PO_REPORT_TEXT_MAX];
	char title[PO_REPORT_TEXT_MAX + 16], buffer[PO_EVIDENCE_KEY_MAX];
	xmlNodePtr row = po_html_el(html, body, "tr", NULL, NULL);
	xmlNodePtr name;

	po_evidence_words(finding->id, evidence->key, evidence->param, &words);
	po_evidence_format(evidence, words.unit, value, sizeof(value));
	name = po_html_label(html, row, "td", NULL, words.name, PO_REPORT_LABEL_CHARS);
	po_report_clean(
	    po_evidence_key_name(evidence->key, evidence->param, buffer, sizeof(buffer)), key,
	    sizeof(key), PO_REPORT_LABEL_CHARS);
	snprintf(title, sizeof(title), "summary.json: %s", key);
	po_html_attr(html, name, "title", title);
	po_html_label(html, row, "td", "num", value, PO_REPORT_LABEL_CHARS);
	po_html_label(html, row, "td", NULL, words.meaning, PO_REPORT_LABEL_CHARS * 2);
}

static void fill_evidence(struct po_html *html, xmlNodePtr parent, const struct po_finding *finding)
{
	static const char *const headers[] = {"Evidence", "Value", "Meaning"};
	xmlNodePtr body;

	if (finding->evidence_count == 0)
		return;
	body = po_html_table(html, parent, "evidence", headers, 3, PO_HTML_COLUMN(1));
	for (size_t i = 0; i < finding->evidence_count; i++)
		evidence_row(html, body, finding, &finding->evidence[i]);
}

static void fill_prediction(struct po_html *html, xmlNodePtr item,
			    const struct po_recommendation *rec)
{
	char text[128];

	if (isnan(rec->predicted_step_ms) && isnan(rec->predicted_speedup))
		return;
	if (isnan(rec->predicted_speedup))
		snprintf(text, sizeof(text), "Predicted step time %.1f ms", rec->predicted_step_ms);
	else if (isnan(rec->predicted_step_ms))
		snprintf(text, sizeof(text), "Predicted speed-up %.2f\xc3\x97",
			 rec->predicted_speedup);
	else
		snprintf(text, sizeof(text), "Predicted step time %.1f ms (%.2f\xc3\x97 faster)",
			 rec->predicted_step_ms, rec->predicted_speedup);
	po_html_el(html, item, "p", "prediction", text);
}

static void fill_recommendations(struct po_html *html, xmlNodePtr parent,
				 const struct po_finding *finding)
{
	xmlNodePtr list;

	if (finding->recommendation_count == 0)
		return;
	list = po_html_el(html, parent, "ol", "recs", NULL);
	for (size_t i = 0; i < finding->recommendation_count; i++) {
		const struct po_recommendation *rec = &finding->recommendations[i];
		xmlNodePtr item = po_html_el(html, list, "li", NULL, NULL);

		po_html_label(html, item, "p", "rec-action", rec->action, 300);
		if (rec->why)
			po_html_label(html, item, "p", "rec-why", rec->why, 600);
		if (rec->effect)
			po_html_label(html, item, "p", "rec-effect", rec->effect, 600);
		fill_prediction(html, item, rec);
	}
}

static void fill_finding(struct po_html *html, xmlNodePtr parent, const struct po_finding *finding)
{
	char class_name[64], text[96];
	xmlNodePtr article, header;

	snprintf(class_name, sizeof(class_name), "finding sev-%s",
		 po_report_severity_key(finding->severity));
	article = po_html_el(html, parent, "article", class_name, NULL);
	header = po_html_el(html, article, "div", "finding-head", NULL);
	po_html_el(html, header, "span", "badge", po_report_severity_key(finding->severity));
	po_html_el(html, header, "code", "finding-id", po_report_finding_key(finding->id));
	snprintf(text, sizeof(text), "confidence %.0f%%", finding->confidence * 100);
	po_html_el(html, header, "span", "confidence", text);
	po_html_el(html, article, "h3", NULL, po_report_finding_title(finding->id));
	po_html_label(html, article, "p", "summary", finding->summary, 600);
	fill_evidence(html, article, finding);
	fill_recommendations(html, article, finding);
}

static void fill_findings(struct po_html *html)
{
	xmlNodePtr parent = po_html_find(html, "findings");

	if (!parent)
		return;
	if (html->analysis->diagnosis.finding_count == 0)
		po_html_el(html, parent, "p", "empty",
			   "No finding: no rule crossed its detection threshold.");
	for (size_t i = 0; i < html->analysis->diagnosis.finding_count; i++)
		fill_finding(html, parent, &html->analysis->diagnosis.findings[i]);
}

static void quality_row(struct po_html *html, xmlNodePtr body, const char *what, const char *value)
{
	const char *cells[2] = {what, value};

	po_html_row(html, body, cells, 2, PO_HTML_NUMERIC_TAIL);
}

/* What the measurement cost per step (po_self_cost) and its share of the steady step. */
static void fill_self_cost_row(struct po_html *html, xmlNodePtr body)
{
	char text[192];

	if (po_report_self_cost_text(html->analysis, text, sizeof(text)))
		quality_row(html, body, "profopt's own CPU time", text);
}

static void fill_quality_table(struct po_html *html, xmlNodePtr parent)
{
	static const char *const headers[] = {"Measure", "Value"};
	const struct po_quality *quality = &html->analysis->quality;
	xmlNodePtr body = po_html_table(html, parent, "kv", headers, 2, PO_HTML_NUMERIC_TAIL);
	char text[128];

	snprintf(text, sizeof(text), "%lld (%lld profopt, %lld libc)", (long long)quality->events,
		 (long long)quality->profopt_events, (long long)quality->libc_events);
	quality_row(html, body, "Events read", text);
	snprintf(text, sizeof(text), "%lld events, %lld packets%s",
		 (long long)quality->discarded_events, (long long)quality->discarded_packets,
		 quality->unknown_discards ? ", some counts unknown" : "");
	quality_row(html, body, "Discarded by the tracer", text);
	snprintf(text, sizeof(text), "%lld of %zu", (long long)quality->lossy_steps,
		 html->analysis->step_count);
	quality_row(html, body, "Steps overlapping lost data (excluded from statistics)", text);
	snprintf(text, sizeof(text), "%lld begins, %lld ends", (long long)quality->unmatched_begins,
		 (long long)quality->unmatched_ends);
	quality_row(html, body, "Unmatched spans", text);
	snprintf(text, sizeof(text), "%lld", (long long)quality->open_at_end);
	quality_row(html, body, "Spans open when their process ended (not a loss)", text);
	snprintf(text, sizeof(text), "%s%s%s%s", po_report_run_ending_key(html->analysis->ending),
		 html->analysis->ending_detail ? " (" : "",
		 html->analysis->ending_detail ? html->analysis->ending_detail : "",
		 html->analysis->ending_detail ? ")" : "");
	quality_row(html, body, "How the run ended", text);
	snprintf(text, sizeof(text), "%lld", (long long)quality->time_inversions);
	quality_row(html, body, "Time inversions", text);
	snprintf(text, sizeof(text), "%lld", (long long)quality->step_mismatches);
	quality_row(html, body, "Step ends that did not match the open step", text);
	snprintf(text, sizeof(text), "%s%s%s", quality->missing_vpid ? "vpid " : "",
		 quality->missing_vtid ? "vtid " : "", quality->missing_procname ? "procname" : "");
	quality_row(html, body, "Missing contexts", text[0] ? text : "none");
	fill_self_cost_row(html, body);
}

static void fill_quality(struct po_html *html)
{
	const struct po_quality *quality = &html->analysis->quality;
	xmlNodePtr parent = po_html_find(html, "quality");
	bool lossy =
	    quality->discarded_events || quality->discarded_packets || quality->unknown_discards;

	if (!parent)
		return;
	if (lossy)
		po_html_el(html, parent, "p", "note note-warn",
			   "The tracer lost data: steps that overlap a loss are excluded from the "
			   "statistics, and verdicts on them carry less confidence.");
	else if (!quality->partial)
		po_html_el(html, parent, "p", "note note-ok",
			   "The trace is complete: the tracer reported no lost events or packets.");
	if (quality->partial)
		po_html_el(html, parent, "p", "note note-warn",
			   "Part of the trace was left out, unreadable or damaged (see the "
			   "warnings); this report covers the rest.");
	if (quality->gpu_records_dropped)
		po_html_el(html, parent, "p", "note note-warn",
			   "The GPU collector dropped activity records (see the warnings): GPU "
			   "busy time is a lower bound.");
	if (html->analysis->diagnosis.self_cost_visible)
		po_html_el(html, parent, "p", "note note-warn",
			   "profopt's own CPU time is a visible share of the step (see the "
			   "warnings): the step times and shares in this report include it.");
	fill_quality_table(html, parent);
	if (po_analysis_warning_count(html->analysis) == 0)
		return;
	parent = po_html_el(html, parent, "ul", "warnings", NULL);
	for (size_t i = 0; i < po_analysis_warning_count(html->analysis) && i < 50; i++) {
		xmlNodePtr item = po_html_el(html, parent, "li", NULL, NULL);

		po_html_label(html, item, "code", NULL,
			      po_analysis_warning(html->analysis, i)->code, 40);
		po_html_label(html, item, "span", NULL,
			      po_analysis_warning(html->analysis, i)->text, 400);
	}
}

static void fill_processes(struct po_html *html, xmlNodePtr parent)
{
	static const char *const headers[] = {"Process", "Role", "PID", "Events", "Peak RSS"};
	static const char *const roles[PO_ROLE_COUNT] = {
#define PO_X(name, json) [PO_ROLE_##name] = json,
	    PO_ROLES(PO_X)
#undef PO_X
	};
	xmlNodePtr body = po_html_table(html, parent, "data", headers, 5, 0x1c);

	for (size_t i = 0; i < html->analysis->process_count && i < 64; i++) {
		const struct po_process *process = &html->analysis->processes[i];
		const char *role =
		    (unsigned)process->role < PO_ROLE_COUNT ? roles[process->role] : "?";
		char pid[16], events[24], rss[24], role_rank[48];
		const char *cells[5] = {process->name ? process->name : "", role_rank, pid, events,
					rss};

		if (html->analysis->distributed && process->rank >= 0)
			snprintf(role_rank, sizeof(role_rank), "%s (rank %d)", role, process->rank);
		else
			snprintf(role_rank, sizeof(role_rank), "%s", role);
		snprintf(pid, sizeof(pid), "%d", process->pid);
		snprintf(events, sizeof(events), "%lld", (long long)process->event_count);
		po_report_fmt_bytes(process->rss_peak_bytes, rss, sizeof(rss));
		po_html_row(html, body, cells, 5, 0x1c);
	}
}

static void fill_config(struct po_html *html)
{
	static const char *const headers[] = {"Setting", "Value"};
	const struct po_analysis *analysis = html->analysis;
	xmlNodePtr parent = po_html_find(html, "config");
	xmlNodePtr body;
	char cpus[24];
	const char *framework_cells[2] = {"framework",
					  analysis->framework ? analysis->framework : "unknown"};
	const char *cpu_cells[2] = {"online CPUs", cpus};

	if (!parent)
		return;
	body = po_html_table(html, parent, "kv", headers, 2, 0);
	if (analysis->cpu_count > 0)
		snprintf(cpus, sizeof(cpus), "%d", analysis->cpu_count);
	else
		snprintf(cpus, sizeof(cpus), "unknown");
	po_html_row(html, body, framework_cells, 2, 0);
	po_html_row(html, body, cpu_cells, 2, 0);
	for (size_t i = 0; i < analysis->config_count && i < 100; i++) {
		const char *cells[2] = {analysis->config[i].key, analysis->config[i].value};

		po_html_row(html, body, cells, 2, 0);
	}
	if (analysis->config_count > 100)
		po_html_el(html, parent, "p", "note", "More settings were recorded than shown.");
	if (analysis->process_count == 0)
		return;
	po_html_el(html, parent, "h3", NULL, "Traced processes");
	fill_processes(html, parent);
}

/*
 * After a live run, the alerts it raised and cleared; an offline analysis has no such
 * section (taken out of the template, so its page is what it was before the section).
 */
void po_html_fill_alerts(struct po_html *html)
{
	static const char *const headers[] = {"Time", "State", "Alert", "Evidence"};
	const struct po_analysis *analysis = html->analysis;
	xmlNodePtr parent = po_html_find(html, "alerts"), body;
	char text[32];

	if (!analysis->diagnosis.live) {
		po_html_remove(html, "alerts-link");
		po_html_remove(html, "alerts-section");
		return;
	}
	if (!parent)
		return;
	if (!analysis->diagnosis.live_alert_count) {
		po_html_el(html, parent, "p", "note note-ok",
			   "No alert was raised while the run recorded.");
		return;
	}
	body = po_html_table(html, parent, "data", headers, 4, 0x1);
	for (size_t i = 0; i < analysis->diagnosis.live_alert_count && i < 500; i++) {
		const struct po_live_alert_note *note = &analysis->diagnosis.live_alerts[i];
		xmlNodePtr row = po_html_el(html, body, "tr", NULL, NULL);

		snprintf(text, sizeof(text), "+%.1f s", note->at_s);
		po_html_el(html, row, "td", NULL, text);
		po_html_el(html, row, "td", NULL, note->raised ? "raised" : "cleared");
		po_html_label(html, row, "td", NULL, note->kind, 40);
		po_html_label(html, row, "td", NULL, note->evidence, 400);
	}
}

enum po_status po_html_fill_sections(struct po_html *html, struct po_error *err)
{
	enum po_status status;

	fill_subtitle(html);
	fill_verdict(html);
	fill_findings(html);
	status = po_html_fill_ranks(html, err);
	if (status == PO_STATUS_OK)
		status = po_html_fill_hotspots(html, err);
	if (status != PO_STATUS_OK)
		return status;
	po_html_fill_alerts(html);
	status = po_html_fill_comparison(html, err);
	if (status != PO_STATUS_OK)
		return status;
	fill_quality(html);
	fill_config(html);
	return po_html_fill_data(html, err);
}
