/* pdf.c: report.pdf, laid out as a published report: title page, findings, data, charts. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cairo-pdf.h>

#include "evidence_names.h"
#include "pdf_page.h"
#include "report_file.h"

static void page_footer(struct po_page *page)
{
	struct po_text_style style = {7.5, false, PO_COLOR_MUTED, PO_ALIGN_LEFT, 0};
	char text[32];

	po_draw_line(page->cr, MARGIN, PAGE_HEIGHT - 42, PAGE_WIDTH - MARGIN, PAGE_HEIGHT - 42,
		     PO_COLOR_GRID, 0.6);
	po_draw_text(page->cr, MARGIN, PAGE_HEIGHT - 36, "profopt performance report", &style);
	snprintf(text, sizeof(text), "Page %d", page->number);
	style.align = PO_ALIGN_RIGHT;
	po_draw_text(page->cr, PAGE_WIDTH - MARGIN, PAGE_HEIGHT - 36, text, &style);
}

void po_page_break(struct po_page *page)
{
	page_footer(page);
	cairo_show_page(page->cr);
	page->number++;
	page->y = MARGIN;
}

void po_page_need(struct po_page *page, double height)
{
	if (page->y + height > CONTENT_BOTTOM && page->y > MARGIN)
		po_page_break(page);
}

void po_page_text(struct po_page *page, const char *text, double size, bool bold, uint32_t color,
		  double indent)
{
	struct po_text_style style = {size, bold, color, PO_ALIGN_LEFT, CONTENT_WIDTH - indent};

	po_page_need(page, size * 1.6);
	page->y += po_draw_text(page->cr, MARGIN + indent, page->y, text, &style);
}

void po_page_heading(struct po_page *page, const char *text)
{
	po_page_need(page, 80);
	page->y += 8;
	po_page_text(page, text, 15, true, PO_COLOR_ACCENT, 0);
	po_draw_line(page->cr, MARGIN, page->y + 3, PAGE_WIDTH - MARGIN, page->y + 3,
		     PO_COLOR_ACCENT, 1);
	page->y += 12;
}

/* A label/value row, as in a two-column table. */
void po_page_row(struct po_page *page, const char *label, const char *value)
{
	struct po_text_style left = {9, false, PO_COLOR_MUTED, PO_ALIGN_LEFT, 200};
	struct po_text_style right = {9, false, PO_COLOR_INK, PO_ALIGN_LEFT, CONTENT_WIDTH - 215};
	double height;

	po_page_need(page, 14);
	height = po_draw_text(page->cr, MARGIN, page->y, label, &left);
	height = fmax(height, po_draw_text(page->cr, MARGIN + 215, page->y, value, &right));
	page->y += height + 3;
}

static void key_number(struct po_page *page, double x, double y, const char *label,
		       const char *value)
{
	struct po_text_style value_style = {18, true, PO_COLOR_INK, PO_ALIGN_LEFT, 0};
	struct po_text_style label_style = {8, false, PO_COLOR_MUTED, PO_ALIGN_LEFT, 150};

	po_draw_rect(page->cr, x, y, 2, 40, PO_COLOR_ACCENT);
	po_draw_text(page->cr, x + 10, y, value, &value_style);
	po_draw_text(page->cr, x + 10, y + 25, label, &label_style);
}

static void title_numbers(struct po_page *page)
{
	const struct po_step_stats *stats = &page->analysis->step_stats;
	char values[6][32], steps[48], steady[48], labels[6][96];
	bool measured = stats->clean_count > 0;

	po_report_population(page->analysis, PO_REPORT_STEPS, steps, sizeof(steps));
	po_report_population(page->analysis, PO_REPORT_STEADY, steady, sizeof(steady));
	snprintf(labels[0], sizeof(labels[0]), "median step time %s", steps);
	snprintf(labels[1], sizeof(labels[1]), "p95 step time %s", steps);
	snprintf(labels[2], sizeof(labels[2]), "steps per second");
	snprintf(labels[3], sizeof(labels[3]), "samples per second");
	snprintf(labels[4], sizeof(labels[4]), "GPU busy %s", steady);
	snprintf(labels[5], sizeof(labels[5]), "waiting for input %s", steady);
	po_report_fmt_ns(measured ? stats->p50_ns : -1, values[0], sizeof(values[0]));
	po_report_fmt_ns(measured ? stats->p95_ns : -1, values[1], sizeof(values[1]));
	if (measured)
		snprintf(values[2], sizeof(values[2]), "%.2f", stats->steps_per_s);
	else
		snprintf(values[2], sizeof(values[2]), "n/a");
	if (stats->samples_per_s >= 0)
		snprintf(values[3], sizeof(values[3]), "%.1f", stats->samples_per_s);
	else
		snprintf(values[3], sizeof(values[3]), "n/a");
	po_report_fmt_pct(po_report_steady_share(page->analysis->diagnosis.steady.gpu_busy_pct),
			  values[4], sizeof(values[4]));
	po_report_fmt_pct(po_report_steady_share(page->analysis->diagnosis.steady.input_wait_pct),
			  values[5], sizeof(values[5]));
	for (int i = 0; i < 6; i++)
		key_number(page, MARGIN + (i % 3) * 170, page->y + (i / 3) * 58, labels[i],
			   values[i]);
	page->y += 2 * 58 + 10;
}

static void title_page(struct po_page *page)
{
	const struct po_analysis *analysis = page->analysis;
	char text[PO_REPORT_TEXT_MAX + 160], framework[PO_REPORT_TEXT_MAX];

	page->y = 90;
	po_page_text(page, "PROFOPT PERFORMANCE REPORT", 9, true, PO_COLOR_MUTED, 0);
	page->y += 6;
	po_report_clean(analysis->framework ? analysis->framework : "unknown framework", framework,
			sizeof(framework), 40);
	snprintf(text, sizeof(text), "%zu steps, %s, %lld traced processes", analysis->step_count,
		 framework, (long long)analysis->process_count);
	po_page_text(page, text, 10, false, PO_COLOR_MUTED, 0);
	page->y += 40;
	po_page_text(page, "Verdict", 10, true, PO_COLOR_MUTED, 0);
	page->y += 4;
	po_page_text(page, po_report_verdict_title(analysis->diagnosis.verdict), 34, true,
		     PO_COLOR_ACCENT, 0);
	page->y += 8;
	po_page_text(page, po_report_verdict_sentence(analysis->diagnosis.verdict), 12, false,
		     PO_COLOR_INK, 0);
	page->y += 36;
	title_numbers(page);
	page->y += 20;
}

static void title_findings(struct po_page *page)
{
	char text[PO_REPORT_TEXT_MAX * 4];

	po_page_text(page, "Top findings", 12, true, PO_COLOR_INK, 0);
	page->y += 6;
	if (page->analysis->diagnosis.finding_count == 0)
		po_page_text(page, "No finding: nothing crossed a detection threshold.", 10, false,
			     PO_COLOR_MUTED, 0);
	for (size_t i = 0; i < page->analysis->diagnosis.finding_count && i < 5; i++) {
		const struct po_finding *finding = &page->analysis->diagnosis.findings[i];

		snprintf(text, sizeof(text), "%s  [%s]", po_report_finding_title(finding->id),
			 po_report_severity_key(finding->severity));
		po_page_text(page, text, 10, true, PO_COLOR_INK, 0);
		po_report_clean(finding->summary, text, sizeof(text), TEXT_CHARS);
		po_page_text(page, text, 9, false, PO_COLOR_MUTED, 0);
		page->y += 6;
	}
}

static void finding_recommendation(struct po_page *page, const struct po_recommendation *rec)
{
	char clean[PO_REPORT_TEXT_MAX * 4], text[PO_REPORT_TEXT_MAX * 5];

	po_report_clean(rec->action, clean, sizeof(clean), TEXT_CHARS);
	snprintf(text, sizeof(text), "\xe2\x86\x92 %s", clean);
	po_page_text(page, text, 9.5, true, PO_COLOR_ACCENT, 12);
	if (rec->why) {
		po_report_clean(rec->why, text, sizeof(text), TEXT_CHARS);
		po_page_text(page, text, 9, false, PO_COLOR_INK, 24);
	}
	if (rec->effect) {
		po_report_clean(rec->effect, clean, sizeof(clean), TEXT_CHARS);
		snprintf(text, sizeof(text), "Expected effect: %s", clean);
		po_page_text(page, text, 9, false, PO_COLOR_INK, 24);
	}
	if (!isnan(rec->predicted_step_ms) || !isnan(rec->predicted_speedup)) {
		snprintf(text, sizeof(text), "Predicted step time %.1f ms, speed-up %.2f\xc3\x97",
			 rec->predicted_step_ms, rec->predicted_speedup);
		po_page_text(page, text, 9, false, PO_COLOR_MUTED, 24);
	}
}

/* Where the columns of an evidence row begin, in points from the margin. */
#define EVIDENCE_VALUE_X 168.0
#define EVIDENCE_MEANING_X 296.0

/*
 * One evidence row in three columns: the plain name, the value with its unit, and the
 * meaning in small type, wrapped in the room left of the line.
 */
static void evidence_row(struct po_page *page, const struct po_finding *finding,
			 const struct po_evidence *evidence)
{
	struct po_text_style name_style = {9, false, PO_COLOR_MUTED, PO_ALIGN_LEFT,
					   EVIDENCE_VALUE_X - 8};
	struct po_text_style value_style = {9, false, PO_COLOR_INK, PO_ALIGN_LEFT,
					    EVIDENCE_MEANING_X - EVIDENCE_VALUE_X - 10};
	struct po_text_style meaning_style = {7.5, false, PO_COLOR_MUTED, PO_ALIGN_LEFT,
					      CONTENT_WIDTH - EVIDENCE_MEANING_X};
	char name[PO_REPORT_TEXT_MAX], value[PO_REPORT_TEXT_MAX + PO_EVIDENCE_UNIT_MAX];
	char meaning[PO_REPORT_TEXT_MAX * 2];
	struct po_evidence_words words;
	double height;

	po_evidence_words(finding->id, evidence->key, evidence->param, &words);
	po_report_clean(words.name, name, sizeof(name), 60);
	po_evidence_format(evidence, words.unit, value, sizeof(value));
	po_report_clean(words.meaning, meaning, sizeof(meaning), PO_REPORT_LABEL_CHARS * 2);
	po_page_need(page, 22);
	height = po_draw_text(page->cr, MARGIN, page->y, name, &name_style);
	height = fmax(height, po_draw_text(page->cr, MARGIN + EVIDENCE_VALUE_X, page->y, value,
					   &value_style));
	if (meaning[0])
		height = fmax(height, po_draw_text(page->cr, MARGIN + EVIDENCE_MEANING_X,
						   page->y + 1, meaning, &meaning_style));
	page->y += height + 3;
}

static void finding_block(struct po_page *page, const struct po_finding *finding)
{
	char text[PO_REPORT_TEXT_MAX * 4];

	po_page_need(page, 90);
	snprintf(text, sizeof(text), "%s \xc2\xb7 %s \xc2\xb7 confidence %.0f%%",
		 po_report_severity_key(finding->severity), po_report_finding_key(finding->id),
		 finding->confidence * 100);
	po_page_text(page, text, 8, true,
		     finding->severity == PO_SEVERITY_CRITICAL ? PO_COLOR_ALERT : PO_COLOR_MUTED,
		     0);
	po_page_text(page, po_report_finding_title(finding->id), 12, true, PO_COLOR_INK, 0);
	po_report_clean(finding->summary, text, sizeof(text), TEXT_CHARS);
	po_page_text(page, text, 9.5, false, PO_COLOR_INK, 0);
	page->y += 4;
	for (size_t i = 0; i < finding->evidence_count; i++)
		evidence_row(page, finding, &finding->evidence[i]);
	page->y += 4;
	for (size_t i = 0; i < finding->recommendation_count; i++)
		finding_recommendation(page, &finding->recommendations[i]);
	page->y += 14;
}

static void quality_section(struct po_page *page)
{
	const struct po_quality *quality = &page->analysis->quality;
	char text[PO_REPORT_TEXT_MAX * 2];

	po_page_heading(page, "Trace quality");
	snprintf(text, sizeof(text), "%lld", (long long)quality->events);
	po_page_row(page, "events read", text);
	snprintf(text, sizeof(text), "%lld events, %lld packets%s",
		 (long long)quality->discarded_events, (long long)quality->discarded_packets,
		 quality->unknown_discards ? " (some counts unknown)" : "");
	po_page_row(page, "discarded by the tracer", text);
	snprintf(text, sizeof(text), "%lld of %zu", (long long)quality->lossy_steps,
		 page->analysis->step_count);
	po_page_row(page, "steps overlapping a loss", text);
	snprintf(text, sizeof(text), "%lld begins, %lld ends", (long long)quality->unmatched_begins,
		 (long long)quality->unmatched_ends);
	po_page_row(page, "unmatched spans", text);
	snprintf(text, sizeof(text), "%lld", (long long)quality->open_at_end);
	po_page_row(page, "spans open when their process ended", text);
	snprintf(text, sizeof(text), "%s%s%s%s", po_report_run_ending_key(page->analysis->ending),
		 page->analysis->ending_detail ? " (" : "",
		 page->analysis->ending_detail ? page->analysis->ending_detail : "",
		 page->analysis->ending_detail ? ")" : "");
	po_page_row(page, "how the run ended", text);
	if (po_report_self_cost_text(page->analysis, text, sizeof(text)))
		po_page_row(page, "profopt's own CPU time", text);
	for (size_t i = 0; i < po_analysis_warning_count(page->analysis); i++) {
		po_report_clean(po_analysis_warning(page->analysis, i)->text, text, sizeof(text),
				TEXT_CHARS);
		po_page_text(page, text, 9, false, PO_COLOR_ALERT, 0);
	}
}

/* The steady steps' GPU work by class, the devices and the longest kernels. */
static void gpu_work_section(struct po_page *page)
{
	const struct po_analysis *analysis = page->analysis;
	const struct po_gpu_work *work = &analysis->diagnosis.gpu_work;
	char text[PO_REPORT_TEXT_MAX * 2], value[3][32];

	if (!work->present)
		return;
	po_page_heading(page, "What the GPU works on (steady steps)");
	for (size_t i = 0; i < analysis->gpu_count; i++) {
		const struct po_gpu_device *gpu = &analysis->gpus[i];
		char name[PO_REPORT_TEXT_MAX];

		po_report_clean(gpu->name ? gpu->name : "unknown", name, sizeof(name), 60);
		po_report_fmt_bytes(gpu->memory_bytes, value[0], sizeof(value[0]));
		po_report_fmt_bytes(gpu->memory.peak_allocated_bytes, value[1], sizeof(value[1]));
		po_report_fmt_bytes(gpu->memory.headroom_bytes, value[2], sizeof(value[2]));
		snprintf(text, sizeof(text), "%s, %s; at most %s in use, %s to spare", name,
			 value[0], value[1], value[2]);
		snprintf(value[0], sizeof(value[0]), "GPU %d", gpu->device);
		po_page_row(page, value[0], text);
	}
	for (int c = 0; c < PO_KERNEL_CLASS_COUNT; c++) {
		if (work->class_ms[c] <= 0)
			continue;
		po_report_fmt_ms(work->class_ms[c] * 1e6, value[0], sizeof(value[0]));
		snprintf(text, sizeof(text), "%s per step, %.0f%%, %.1f per step", value[0],
			 work->class_pct[c], work->class_count[c]);
		po_page_row(page, po_report_kernel_class_title(c), text);
	}
	snprintf(text, sizeof(text), "%.0f per step, %.1f us on average; %.1f us of host time each",
		 work->kernels, work->mean_kernel_us, work->host_us_per_kernel);
	po_page_row(page, "kernels", text);
	for (size_t i = 0; i < analysis->kernel_count && i < 8; i++) {
		char name[PO_REPORT_TEXT_MAX];

		po_report_clean(analysis->kernels[i].short_name, name, sizeof(name), 70);
		po_report_fmt_ns(analysis->kernels[i].total_ns, value[0], sizeof(value[0]));
		snprintf(text, sizeof(text), "%s: %lld, %s", name,
			 (long long)analysis->kernels[i].count, value[0]);
		po_page_text(page, text, 9, false, PO_COLOR_INK, 0);
	}
}

static void config_section(struct po_page *page)
{
	char key[PO_REPORT_TEXT_MAX], value[PO_REPORT_TEXT_MAX];

	po_page_heading(page, "Run configuration");
	po_report_clean(page->analysis->framework ? page->analysis->framework : "unknown", value,
			sizeof(value), PO_REPORT_LABEL_CHARS);
	po_page_row(page, "framework", value);
	for (size_t i = 0; i < page->analysis->config_count && i < 40; i++) {
		po_report_clean(page->analysis->config[i].key, key, sizeof(key), 60);
		po_report_clean(page->analysis->config[i].value, value, sizeof(value),
				PO_REPORT_LABEL_CHARS);
		po_page_row(page, key, value);
	}
}

void po_page_chart(struct po_page *page, const struct po_chart *chart)
{
	struct po_chart sized = *chart;

	sized.width = CONTENT_WIDTH;
	po_page_need(page, sized.height + 30);
	po_page_text(page, chart->title, 10.5, true, PO_COLOR_INK, 0);
	page->y += 6;
	cairo_save(page->cr);
	cairo_translate(page->cr, MARGIN, page->y);
	sized.draw(page->cr, &sized);
	cairo_restore(page->cr);
	page->y += sized.height + 18;
}

static enum po_status pipeline_section(struct po_page *page, struct po_error *err)
{
	double height = 0;
	enum po_status status;

	po_page_break(page);
	po_page_heading(page, "Pipeline");
	po_page_text(
	    page,
	    "The path of a batch from the loader stages to the GPU, with the mean time per "
	    "batch; the bottleneck is outlined in red.",
	    9.5, false, PO_COLOR_MUTED, 0);
	page->y += 12;
	status = po_report_draw_pipeline(page->analysis, page->cr, MARGIN, page->y, CONTENT_WIDTH,
					 &height, err);
	page->y += height + 24;
	return status;
}

static enum po_status draw_pages(struct po_page *page, const struct po_chart_list *charts,
				 struct po_error *err)
{
	enum po_status status;

	title_page(page);
	title_findings(page);
	po_page_break(page);
	po_page_heading(page, "Findings and recommendations");
	for (size_t i = 0; i < page->analysis->diagnosis.finding_count; i++)
		finding_block(page, &page->analysis->diagnosis.findings[i]);
	if (page->analysis->diagnosis.comparison)
		po_pdf_comparison(page, charts);
	po_pdf_ranks(page);
	po_pdf_hotspots(page);
	quality_section(page);
	gpu_work_section(page);
	po_page_break(page);
	po_page_heading(page, "Charts");
	for (size_t i = 0; i < charts->count; i++) {
		if (!charts->charts[i].comparison)
			po_page_chart(page, &charts->charts[i]);
	}
	status = pipeline_section(page, err);
	if (status != PO_STATUS_OK)
		return status;
	config_section(page);
	page_footer(page);
	return PO_STATUS_OK;
}

enum po_status po_report_write_pdf(const struct po_analysis *analysis,
				   const struct po_chart_list *charts, const char *path,
				   struct po_error *err)
{
	struct po_report_file out;
	struct po_page page = {NULL, analysis, MARGIN, 1};
	cairo_surface_t *surface;
	enum po_status status = po_report_file_open(&out, path, err);

	if (status != PO_STATUS_OK)
		return status;
	surface = cairo_pdf_surface_create_for_stream(po_report_file_cairo_write, &out, PAGE_WIDTH,
						      PAGE_HEIGHT);
	cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_TITLE,
				       "profopt performance report");
	cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_CREATOR, "profopt");
	/* A fixed date keeps the file a function of the analysis alone (no generation time). */
	cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_CREATE_DATE,
				       "1970-01-01T00:00:00Z");
	page.cr = cairo_create(surface);
	po_draw_prepare(page.cr);
	status = draw_pages(&page, charts, err);
	if (status != PO_STATUS_OK) {
		cairo_destroy(page.cr);
		cairo_surface_destroy(surface);
		fclose(out.file);
		return status;
	}
	return po_report_file_finish_drawing(page.cr, surface, &out, err);
}
