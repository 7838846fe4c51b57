/* report.c: po_render_report(), which writes every output of the report in order. */
#include <stdlib.h>

#include "render_report.h"
#include "report_priv.h"
#include "report_file.h"

static enum po_status
write_named(const char *out_dir, const char *name, const struct po_analysis *analysis,
	    const struct po_chart_list *charts,
	    enum po_status (*writer)(const struct po_analysis *, const struct po_chart_list *,
				     const char *, struct po_error *),
	    struct po_error *err)
{
	char *path = po_report_file_path(out_dir, name);
	enum po_status status;

	if (!path) {
		po_error_set(err, "Failed to allocate a path");
		return PO_STATUS_NOMEM;
	}
	status = writer(analysis, charts, path, err);
	free(path);
	return status;
}

static enum po_status write_pipeline(const struct po_analysis *analysis,
				     const struct po_chart_list *charts, const char *path,
				     struct po_error *err)
{
	return po_report_write_pipeline(analysis, path, err);
}

/* The SVG files and pipeline.svg come first: the HTML embeds them as parsed nodes. */
static enum po_status write_all(const struct po_analysis *analysis,
				const struct po_chart_list *charts, const char *out_dir,
				struct po_error *err)
{
	enum po_status status = po_report_write_svgs(charts, out_dir, err);

	if (status == PO_STATUS_OK)
		status =
		    write_named(out_dir, "pipeline.svg", analysis, charts, write_pipeline, err);
	if (status == PO_STATUS_OK)
		status =
		    write_named(out_dir, "report.pdf", analysis, charts, po_report_write_pdf, err);
	if (status == PO_STATUS_OK)
		status = po_report_write_html(analysis, charts, out_dir, err);
	return status;
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
