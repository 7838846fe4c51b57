/*
 * merge_run.c: profopt-analyze --merge -o DIR PARTIAL...: the partial summaries merged
 * (merge/merge.h) into DIR/summary.json, written through the staging directory as every
 * report is, and the ranks' table on stdout.
 */
#define _GNU_SOURCE
#include <stdio.h>

#include "common/outdir.h"
#include "merge/merge.h"
#include "merge_run.h"
#include "render_json.h"

enum po_status po_merge_run(const struct po_cli_options *options, char **text, struct po_error *err)
{
	struct po_analysis *analysis = NULL; /* owned */
	struct po_outdir *outdir = NULL;     /* owned */
	const struct po_merged_info info = {.partials = options->trace_dirs,
					    .partial_count = options->trace_dir_count};
	char path[4096];
	size_t size = 0;
	FILE *out;
	enum po_status status;

	*text = NULL;
	status = po_merge_partials(options->trace_dirs, options->trace_dir_count, &options->rules,
				   &analysis, err);
	if (status == PO_STATUS_OK)
		status = po_outdir_open(options->out_dir, options->force, &outdir, err);
	if (status == PO_STATUS_OK)
		status = po_outdir_stage(outdir, err);
	if (status == PO_STATUS_OK) {
		snprintf(path, sizeof(path), "%s/summary.json", po_outdir_borrow_staging(outdir));
		status = po_render_merged_json(analysis, &info, path, err);
	}
	if (status == PO_STATUS_OK)
		status = po_outdir_commit(outdir, err);
	if (status == PO_STATUS_OK && (out = open_memstream(text, &size))) {
		fprintf(out,
			"Merged %zu partial summaries: %zu ranks on %zu clocks, %zu steps "
			"matched (step numbers sampled every %lld)\n",
			options->trace_dir_count, analysis->distributed->rank_count,
			analysis->distributed->host_count, analysis->distributed->step_count,
			(long long)analysis->distributed->step_stride);
		po_render_ranks_text(analysis, out);
		fclose(out);
	}
	po_outdir_destroy(outdir);
	po_analysis_destroy(analysis);
	return status;
}
