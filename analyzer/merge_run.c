/*
 * merge_run.c: profopt-analyze --merge -o DIR PARTIAL...: the partial summaries merged
 * (merge/merge.h) into DIR/summary.json, written through the staging directory as every
 * report is, and the ranks' table on stdout.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/outdir.h"
#include "merge/merge.h"
#include "merge_run.h"
#include "render_json.h"

/*
 * Whether the directory dir (an open descriptor, closed here) or one of its ancestors is
 * the directory out: compared by device and inode, walking "..", so that no link, bind
 * mount or relative spelling hides it.
 */
static bool directory_within(int dir, const struct stat *out)
{
	struct stat here, parent;

	while (dir >= 0 && fstat(dir, &here) == 0) {
		int up;

		if (here.st_dev == out->st_dev && here.st_ino == out->st_ino) {
			close(dir);
			return true;
		}
		up = openat(dir, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (up < 0 || fstat(up, &parent) != 0 ||
		    (parent.st_dev == here.st_dev && parent.st_ino == here.st_ino)) {
			if (up >= 0)
				close(up);
			break; /* the root */
		}
		close(dir);
		dir = up;
	}
	if (dir >= 0)
		close(dir);
	return false;
}

/*
 * The directory that holds a PARTIAL argument's file, open: itself if a directory, else
 * the directory of the file a link names; -1 when it cannot be read (the merge names it).
 */
static int partial_directory(const char *partial)
{
	char real[PATH_MAX];
	struct stat st;

	if (stat(partial, &st) != 0)
		return -1;
	if (S_ISDIR(st.st_mode))
		return open(partial, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (!realpath(partial, real))
		return -1;
	return open(dirname(real), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/*
 * -o DIR must not hold a partial summary: the report replaces DIR (with --force), and the
 * input with it. Nothing to check while DIR does not exist.
 */
static enum po_status check_output(const struct po_cli_options *options, struct po_error *err)
{
	struct stat out;

	if (stat(options->out_dir, &out) != 0 || !S_ISDIR(out.st_mode))
		return PO_STATUS_OK;
	for (size_t i = 0; i < options->trace_dir_count; i++) {
		if (directory_within(partial_directory(options->trace_dirs[i]), &out)) {
			po_error_set(err,
				     "the output directory %s holds the partial summary %s, which "
				     "writing the report would delete; choose another -o",
				     options->out_dir, options->trace_dirs[i]);
			return PO_STATUS_USAGE;
		}
	}
	return PO_STATUS_OK;
}

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
	status = check_output(options, err);
	if (status == PO_STATUS_OK)
		status = po_merge_partials(options->trace_dirs, options->trace_dir_count,
					   &options->rules, &analysis, err);
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
		for (size_t i = 0; i < po_analysis_warning_count(analysis); i++)
			fprintf(out, "Warning (%s): %s\n", po_analysis_warning(analysis, i)->code,
				po_analysis_warning(analysis, i)->text);
		po_render_ranks_text(analysis, out);
		fclose(out);
	}
	po_outdir_destroy(outdir);
	po_analysis_destroy(analysis);
	return status;
}
