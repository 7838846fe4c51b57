/* report.c: po_render_report(), which writes every output of the report in order. */
#include <stdlib.h>
#include <unistd.h>

#include "render_report.h"
#include "report_priv.h"
#include "report_file.h"

/* A failed output is removed (nothing half-written); its cause joins the others. */
static void note(struct po_outcome *outcome, enum po_status status, const char *path,
		 const struct po_error *cause, struct po_error *err)
{
	if (status != PO_STATUS_OK && path)
		unlink(path);
	po_outcome_add(outcome, status, cause, err);
}

static void write_named(const char *out_dir, const char *name, const struct po_analysis *analysis,
			const struct po_chart_list *charts,
			enum po_status (*writer)(const struct po_analysis *,
						 const struct po_chart_list *, const char *,
						 struct po_error *),
			struct po_outcome *outcome, struct po_error *err)
{
	char *path = po_report_file_path(out_dir, name);
	struct po_error cause = {{0}};

	if (!path) {
		po_error_set(&cause, "Failed to allocate a path");
		note(outcome, PO_STATUS_NOMEM, NULL, &cause, err);
		return;
	}
	note(outcome, writer(analysis, charts, path, &cause), path, &cause, err);
	free(path);
}

static enum po_status write_pipeline(const struct po_analysis *analysis,
				     const struct po_chart_list *charts, const char *path,
				     struct po_error *err)
{
	return po_report_write_pipeline(analysis, path, err);
}

/*
 * Every output is tried, so that one that fails (a full disk, a cairo error) takes no other
 * with it. The SVG files and pipeline.svg come first: the HTML embeds them as parsed nodes.
 */
static enum po_status write_all(const struct po_analysis *analysis,
				const struct po_chart_list *charts, const char *out_dir,
				struct po_error *err)
{
	struct po_outcome outcome = {0, 0, PO_STATUS_OK};
	struct po_error cause = {{0}};
	char *html_path = po_report_file_path(out_dir, "index.html");

	note(&outcome, po_report_write_svgs(charts, out_dir, &cause), NULL, &cause, err);
	write_named(out_dir, "pipeline.svg", analysis, charts, write_pipeline, &outcome, err);
	write_named(out_dir, "report.pdf", analysis, charts, po_report_write_pdf, &outcome, err);
	note(&outcome, po_report_write_html(analysis, charts, out_dir, &cause), html_path, &cause,
	     err);
	free(html_path);
	return outcome.first;
}

enum po_status po_render_report(const struct po_analysis *analysis, const char *out_dir,
				struct po_error *err)
{
	struct po_chart_list charts;
	enum po_status status = po_report_charts_create(analysis, &charts, err);

	if (status == PO_STATUS_OK) {
		status = write_all(analysis, &charts, out_dir, err);
		po_report_charts_destroy(&charts);
	}
	if (status == PO_STATUS_OK)
		status = po_analysis_steps_check(analysis, err); /* steps read back intact */
	if (status != PO_STATUS_OK)
		po_error_prepend(err, "Failed to render the report");
	return status;
}
