/*
 * text_summary.c: the short summary profopt-analyze prints on stdout: trace-quality warnings
 * first (a verdict on lossy data must say so), then the verdict, the step statistics, where
 * a step's time goes, and the top findings with every recommendation.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json_names.h"
#include "json_writer.h"
#include "render_json.h"

/*
 * Text from the trace, made safe for a terminal: control characters (and the U+2028/U+2029
 * line separators) are shown as '?', invalid UTF-8 bytes as U+FFFD.
 */
static void put_text(FILE *out, const char *text)
{
	if (!text)
		fputs("-", out);
	else
		po_json_put_terminal_text(out, text, strlen(text), SIZE_MAX);
}

static void put_ms(FILE *out, int64_t us, int width)
{
	char buf[32];

	po_json_format_us_as_ms(buf, sizeof(buf), us);
	fprintf(out, "%*s", width, buf);
}

/* What the measurement cost, per step (po_self_cost), and its share of the steady step. */
static void print_self_cost(const struct po_analysis *analysis, FILE *out)
{
	const struct po_self_cost *cost = &analysis->self_cost;

	fprintf(out, "  profopt's own CPU time: %.3f ms per step", cost->per_step_ns / 1e6);
	if (!isnan(analysis->diagnosis.self_cost_pct))
		fprintf(out, " (%.1f%% of the mean steady step)",
			analysis->diagnosis.self_cost_pct);
	if (!isnan(cost->processes_per_step_ns))
		fprintf(out, "; %.3f ms in %lld recorded processes",
			cost->processes_per_step_ns / 1e6, (long long)cost->reporting_processes);
	if (!isnan(cost->recorder_per_step_ns))
		fprintf(out, "; %.3f ms in the recorder", cost->recorder_per_step_ns / 1e6);
	fputc('\n', out);
}

static void print_quality(const struct po_analysis *analysis, FILE *out)
{
	const struct po_quality *quality = &analysis->quality;
	bool cost_known = analysis->self_cost.known && !isnan(analysis->self_cost.per_step_ns);
	size_t i;

	if (!po_analysis_warning_count(analysis) && !quality->partial && !cost_known)
		return;
	fputs("Trace quality:\n", out);
	if (cost_known)
		print_self_cost(analysis, out);
	if (quality->partial)
		fputs("  partial: part of the trace was left out, unreadable or damaged\n", out);
	for (i = 0; i < po_analysis_warning_count(analysis); i++) {
		fputs("  ", out);
		put_text(out, po_analysis_warning(analysis, i)->code);
		fputs(": ", out);
		put_text(out, po_analysis_warning(analysis, i)->text);
		fputc('\n', out);
	}
}

/*
 * The steady steps every finding and the verdict measure (clean steps past each epoch's
 * start-up), with the figures the findings and the report's headline quote: the same
 * numbers as summary.json's steady object.
 */
static void print_steady(const struct po_analysis *analysis, FILE *out)
{
	const struct po_steady_stats *steady = &analysis->diagnosis.steady;

	if (steady->count <= 0 || isnan(steady->mean_ns))
		return;
	fprintf(out, "Steady steps (what the findings measure): %lld, mean ",
		(long long)steady->count);
	put_ms(out, po_json_ns_to_us((int64_t)llround(steady->mean_ns)), 0);
	fputs(" ms", out);
	if (!isnan(steady->gpu_busy_pct))
		fprintf(out, "; GPU busy %.1f%%", steady->gpu_busy_pct);
	if (!isnan(steady->input_wait_pct))
		fprintf(out, "; waiting for input %.1f%%", steady->input_wait_pct);
	fputc('\n', out);
}

static void print_steps(const struct po_analysis *analysis, FILE *out)
{
	const struct po_step_stats *stats = &analysis->step_stats;
	int64_t parts_us[PO_CATEGORY_COUNT], mean_us;

	fprintf(out, "Steps: %lld (%lld clean)", (long long)stats->count,
		(long long)stats->clean_count);
	if (stats->clean_count <= 0) {
		fputs("; no clean step to measure\n", out);
		return;
	}
	po_render_breakdown_us(stats, parts_us, &mean_us);
	fputs(": mean ", out);
	put_ms(out, mean_us, 0);
	fputs(" ms, p50 ", out);
	put_ms(out, po_json_ns_to_us(stats->p50_ns), 0);
	fputs(" ms, p90 ", out);
	put_ms(out, po_json_ns_to_us(stats->p90_ns), 0);
	fputs(" ms, max ", out);
	put_ms(out, po_json_ns_to_us(stats->max_ns), 0);
	fprintf(out, " ms; %.1f steps/s", isfinite(stats->steps_per_s) ? stats->steps_per_s : 0.0);
	if (isfinite(stats->samples_per_s) && stats->samples_per_s >= 0)
		fprintf(out, ", %.1f samples/s", stats->samples_per_s);
	if (stats->coverage_pct >= 0 && stats->coverage_pct < 99.5)
		fprintf(out, "; steps cover %.1f%% of their span", stats->coverage_pct);
	fputc('\n', out);
	print_steady(analysis, out);
}

struct part {
	int category;
	int64_t us;
};

/* Largest first; equal parts in category order. */
static int compare_parts(const void *left, const void *right)
{
	const struct part *a = left, *b = right;

	if (a->us != b->us)
		return a->us < b->us ? 1 : -1;
	return a->category - b->category;
}

static void print_breakdown(const struct po_analysis *analysis, FILE *out)
{
	const struct po_step_stats *stats = &analysis->step_stats;
	int64_t parts_us[PO_CATEGORY_COUNT], mean_us;
	struct part parts[PO_CATEGORY_COUNT];
	int i;

	if (stats->clean_count <= 0)
		return;
	po_render_breakdown_us(stats, parts_us, &mean_us);
	for (i = 0; i < PO_CATEGORY_COUNT; i++)
		parts[i] = (struct part){i, parts_us[i]};
	qsort(parts, PO_CATEGORY_COUNT, sizeof(parts[0]), compare_parts);
	fputs("Time per step (mean):\n", out);
	for (i = 0; i < PO_CATEGORY_COUNT && parts[i].us > 0; i++) {
		fprintf(out, "  %-11s", po_json_category_name(parts[i].category));
		put_ms(out, parts[i].us, 10);
		fprintf(out, " ms  %5.1f%%\n", mean_us > 0 ? 100.0 * parts[i].us / mean_us : 0.0);
	}
}

static void print_recommendation(const struct po_recommendation *rec, FILE *out)
{
	fputs("      -> ", out);
	put_text(out, rec->action);
	if (isfinite(rec->predicted_step_ms))
		fprintf(out, " (predicted %.3f ms/step", rec->predicted_step_ms);
	if (isfinite(rec->predicted_step_ms) && isfinite(rec->predicted_speedup))
		fprintf(out, ", %.2fx", rec->predicted_speedup);
	if (isfinite(rec->predicted_step_ms))
		fputc(')', out);
	fputc('\n', out);
}

static void print_findings(const struct po_analysis *analysis, FILE *out)
{
	size_t i;

	if (!analysis->diagnosis.finding_count) {
		fputs("Findings: none\n", out);
		return;
	}
	fprintf(out, "Findings (%zu):\n", analysis->diagnosis.finding_count);
	for (i = 0; i < analysis->diagnosis.finding_count && i < PO_TEXT_MAX_FINDINGS; i++) {
		const struct po_finding *finding = &analysis->diagnosis.findings[i];

		fprintf(out,
			"  %-8s %s (confidence %.2f): ", po_json_severity_name(finding->severity),
			po_json_finding_id_name(finding->id),
			isfinite(finding->confidence) ? finding->confidence : 0.0);
		put_text(out, finding->summary);
		fputc('\n', out);
		for (size_t r = 0; r < finding->recommendation_count; r++)
			print_recommendation(&finding->recommendations[r], out);
	}
	if (analysis->diagnosis.finding_count > PO_TEXT_MAX_FINDINGS)
		fprintf(out, "  ... %zu more in summary.json\n",
			analysis->diagnosis.finding_count - PO_TEXT_MAX_FINDINGS);
}

/* How the run ended, when it did not end cleanly: said before the verdict it qualifies. */
static void print_ending(const struct po_analysis *analysis, FILE *out)
{
	if (analysis->ending == PO_RUN_CLEAN || analysis->ending == PO_RUN_NO_RUN)
		return;
	fprintf(out, "Run ended: %s", po_json_run_ending_name(analysis->ending));
	if (analysis->ending_detail) {
		fputs(" (", out);
		put_text(out, analysis->ending_detail);
		fputc(')', out);
	}
	if (analysis->ending == PO_RUN_NO_RUN_END)
		fputs(" (run_begin without run_end: the program crashed, was killed or did not "
		      "end its run)",
		      out);
	fputc('\n', out);
}

void po_render_text_summary(const struct po_analysis *analysis, FILE *out)
{
	print_quality(analysis, out);
	print_ending(analysis, out);
	fprintf(out, "Verdict: %s", po_json_verdict_name(analysis->diagnosis.verdict));
	if (analysis->diagnosis.verdict_reason)
		fprintf(out, " (%s)", analysis->diagnosis.verdict_reason);
	fputc('\n', out);
	print_steps(analysis, out);
	print_breakdown(analysis, out);
	po_render_ranks_text(analysis, out);
	po_render_hotspots_text(analysis, out);
	print_findings(analysis, out);
}
