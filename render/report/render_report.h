/*
 * render_report.h: the published face of an analysis: an HTML report, a PDF report, SVG
 * charts and the pipeline graph, all drawn from the analysis result alone.
 */
#ifndef PO_RENDER_REPORT_H
#define PO_RENDER_REPORT_H

#include "common/status.h"
#include "model/result.h"

/*
 * Writes index.html, report.pdf, charts/ (one SVG per chart) and pipeline.svg into out_dir,
 * an existing, empty directory. The output depends only on the analysis: no generation
 * time, no absolute path, stable ordering. Fails with PO_STATUS_OUTPUT ("Failed to write
 * <path>: <cause>") when a file cannot be written completely; the file is removed and the
 * other files are still written (each further failure's cause is appended after "; ").
 */
enum po_status po_render_report(const struct po_analysis *analysis /* weak */, const char *out_dir,
				struct po_error *err) PO_NODISCARD;

#endif /* PO_RENDER_REPORT_H */
