/*
 * main.c: profopt-analyze. Parses the command line (cli/options.h), checks the inputs
 * (the trace, the output directory, a baseline) before anything is written, runs the
 * analysis (pipeline.h) in a resource-limited child process that writes every output into
 * a staging directory, and when the analysis completed moves the staging directory into
 * place (common/outdir.h), with every output or with all but those that failed (exit 5).
 * Errors from every level arrive here as one chain and are printed once. Several TRACE_DIRs
 * are analysed as one directory holding them: a private directory under TMPDIR of links to
 * them (the job directory), removed at the end.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/options.h"
#include "common/isolate.h"
#include "common/outdir.h"
#include "common/status.h"
#include "ingest/ingest.h"
#include "live_run.h"
#include "merge_run.h"
#include "pipeline.h"

/* realpath() of a path that may not exist yet: its deepest existing ancestor, resolved. */
static bool resolve_path(const char *path, char *resolved)
{
	char parent_copy[PATH_MAX], base_copy[PATH_MAX];
	char parent_resolved[PATH_MAX];
	const char *parent, *base;

	if (realpath(path, resolved))
		return true;
	if (errno != ENOENT || strlen(path) >= PATH_MAX)
		return false;
	strcpy(parent_copy, path);
	strcpy(base_copy, path);
	parent = dirname(parent_copy);
	base = basename(base_copy);
	if (strcmp(parent, path) == 0 || !resolve_path(parent, parent_resolved))
		return false;
	return (size_t)snprintf(resolved, PATH_MAX, "%s/%s", parent_resolved, base) < PATH_MAX;
}

static bool path_is_within(const char *inner, const char *outer)
{
	size_t len = strlen(outer);

	return strncmp(inner, outer, len) == 0 && (inner[len] == '/' || inner[len] == '\0');
}

/* OUT_DIR must not overlap a trace; what it may hold is outdir.c's to check. */
static enum po_status check_output(const struct po_cli_options *options, struct po_error *err)
{
	size_t count = options->trace_dir_count > 1 ? options->trace_dir_count : 1;
	char trace_real[PATH_MAX], out_real[PATH_MAX];

	if (!resolve_path(options->out_dir, out_real))
		return PO_STATUS_OK; /* the input check names the missing path */
	for (size_t i = 0; i < count; i++) {
		const char *trace = count > 1 ? options->trace_dirs[i] : options->trace_dir;

		if (!realpath(trace, trace_real))
			continue;
		if (path_is_within(out_real, trace_real) || path_is_within(trace_real, out_real)) {
			po_error_set(err,
				     "the output directory %s overlaps the trace directory %s; "
				     "choose another -o",
				     options->out_dir, trace);
			return PO_STATUS_USAGE;
		}
	}
	return PO_STATUS_OK;
}

/* The job directory of several TRACE_DIRs: links named NN-BASENAME to each of them. */
struct job_dir {
	char path[PATH_MAX];	     /* "" when there is none */
	char (*names)[NAME_MAX + 1]; /* owned: the links made, options->trace_dirs' order */
	size_t count;
};

/*
 * Each TRACE_DIR must be a directory that holds a trace (its own input check, whose error
 * names it), and none given twice; the job directory is checked again as a whole.
 */
static enum po_status job_dirs_check(const struct po_cli_options *options, char (*real)[PATH_MAX],
				     struct po_error *err)
{
	for (size_t i = 0; i < options->trace_dir_count; i++) {
		const char *dir = options->trace_dirs[i];
		struct stat st;

		if (stat(dir, &st) != 0) {
			po_error_set(err, "%s: %s", dir, strerror(errno));
			return PO_STATUS_INPUT;
		}
		if (!S_ISDIR(st.st_mode) || !realpath(dir, real[i])) {
			po_error_set(err, "%s: not a trace directory (%s)", dir,
				     S_ISDIR(st.st_mode) ? strerror(errno) : "not a directory");
			return PO_STATUS_INPUT;
		}
		for (size_t j = 0; j < i; j++) {
			if (strcmp(real[i], real[j]) == 0) {
				po_error_set(err, "%s and %s are the same trace directory",
					     options->trace_dirs[j], dir);
				return PO_STATUS_USAGE;
			}
		}
	}
	for (size_t i = 0; i < options->trace_dir_count; i++) {
		struct po_ingest_watch *watch = NULL; /* owned */
		enum po_status status =
		    options->salvage
			? po_ingest_check_start_salvage(options->trace_dirs[i], &watch, err)
			: po_ingest_check_start(options->trace_dirs[i], &watch, err);

		po_ingest_watch_destroy(watch);
		if (status != PO_STATUS_OK)
			return status;
	}
	return PO_STATUS_OK;
}

static void job_dir_remove(struct job_dir *job)
{
	if (job->path[0]) {
		int fd = open(job->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		for (size_t i = 0; fd >= 0 && i < job->count; i++)
			unlinkat(fd, job->names[i], 0); /* the links only, never what they name */
		if (fd >= 0)
			close(fd);
		rmdir(job->path);
	}
	free(job->names);
	*job = (struct job_dir){0};
}

/* Makes the job directory (mode 0700, a name mkdtemp chose) and points trace_dir at it. */
static enum po_status job_dir_create(struct po_cli_options *options, struct job_dir *job,
				     struct po_error *err)
{
	const char *tmp = getenv("TMPDIR");
	char(*real)[PATH_MAX] = calloc(options->trace_dir_count, sizeof(*real));
	enum po_status status;
	int fd;

	*job = (struct job_dir){0};
	job->names = calloc(options->trace_dir_count, sizeof(*job->names));
	if (!real || !job->names) {
		free(real);
		free(job->names);
		job->names = NULL;
		po_error_set(err, "out of memory");
		return PO_STATUS_NOMEM;
	}
	status = job_dirs_check(options, real, err);
	if (status == PO_STATUS_OK) {
		snprintf(job->path, sizeof(job->path), "%s/profopt-job-XXXXXX",
			 tmp && tmp[0] ? tmp : "/tmp");
		if (!mkdtemp(job->path)) {
			po_error_set(err, "Failed to create the job directory %s: %s", job->path,
				     strerror(errno));
			job->path[0] = '\0';
			status = PO_STATUS_OUTPUT;
		}
	}
	fd = status == PO_STATUS_OK
		 ? open(job->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
		 : -1;
	for (size_t i = 0; status == PO_STATUS_OK && i < options->trace_dir_count; i++) {
		snprintf(job->names[i], sizeof(job->names[i]), "%02zu-%.200s", i + 1,
			 basename(real[i]));
		if (fd < 0 || symlinkat(real[i], fd, job->names[i]) != 0) {
			po_error_set(err, "Failed to link %s into the job directory %s: %s",
				     options->trace_dirs[i], job->path, strerror(errno));
			status = PO_STATUS_OUTPUT;
			break;
		}
		job->count++;
	}
	if (fd >= 0)
		close(fd);
	free(real);
	if (status != PO_STATUS_OK) {
		job_dir_remove(job);
		return status;
	}
	options->trace_dir = job->path;
	return PO_STATUS_OK;
}

/* Replaces every from in message by to, searching on after each replacement. */
static void message_replace(struct po_error *err, const char *from, const char *to)
{
	char *message = err->message, *at = message;
	size_t from_len = strlen(from), to_len = strlen(to);

	while (from_len && (at = strstr(at, from)) != NULL) {
		char rest[sizeof(err->message)];
		size_t room = sizeof(err->message) - (size_t)(at - message);

		snprintf(rest, sizeof(rest), "%s", at + from_len);
		snprintf(at, room, "%s%s", to, rest);
		at += to_len < room ? to_len : room - 1;
	}
}

/* Puts each TRACE_DIR back in a message where its link in the job directory stands. */
static void job_dir_unname(const struct job_dir *job, const struct po_cli_options *options,
			   struct po_error *err)
{
	for (size_t i = 0; i < job->count; i++) {
		char link[PATH_MAX + NAME_MAX + 2];

		snprintf(link, sizeof(link), "%s/%s", job->path, job->names[i]);
		message_replace(err, link, options->trace_dirs[i]);
	}
	message_replace(err, job->path, "the TRACE_DIRs");
}

/*
 * The baseline is an earlier summary.json (a regular file that opens without blocking) or
 * a trace directory that passes the input checks. Like the trace's, these failures are
 * PO_STATUS_INPUT; what the baseline holds is checked by the analysis (PO_STATUS_BASELINE).
 */
static enum po_status check_baseline(const struct po_cli_options *options,
				     struct po_ingest_watch **watch, struct po_error *err)
{
	const char *baseline = options->baseline;
	enum po_status status;
	struct stat st;
	int fd;

	if (stat(baseline, &st) != 0) {
		po_error_set(err, "the baseline %s cannot be read: %s", baseline, strerror(errno));
		return PO_STATUS_INPUT;
	}
	if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
		po_error_set(err,
			     "the baseline %s is %s; give an earlier summary.json or a trace "
			     "directory",
			     baseline, po_file_type_text(st.st_mode));
		return PO_STATUS_INPUT;
	}
	if (S_ISREG(st.st_mode)) {
		fd = open(baseline, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
			po_error_set(err, "the baseline %s cannot be read: %s", baseline,
				     fd < 0 ? strerror(errno) : "it is no longer a regular file");
			status = PO_STATUS_INPUT;
		} else {
			status = PO_STATUS_OK;
		}
		if (fd >= 0)
			close(fd);
		return status;
	}
	status = options->salvage ? po_ingest_check_start_salvage(baseline, watch, err)
				  : po_ingest_check_start(baseline, watch, err);
	if (status != PO_STATUS_OK)
		po_error_prepend(err, "the baseline");
	return status;
}

/*
 * The end of the input checks, after the analysis: the trace (and a baseline trace) must
 * not have changed size while it ran. Destroys the watches.
 */
static enum po_status check_inputs_settled(struct po_ingest_watch *watch,
					   struct po_ingest_watch *baseline_watch,
					   struct po_error *err)
{
	enum po_status status = po_ingest_check_finish(watch, err);

	if (!baseline_watch)
		return status;
	if (status != PO_STATUS_OK) {
		po_ingest_watch_destroy(baseline_watch);
		return status;
	}
	status = po_ingest_check_finish(baseline_watch, err);
	if (status != PO_STATUS_OK)
		po_error_prepend(err, "the baseline");
	return status;
}

/* The input checks and the watches they start (owned by the caller on success). */
static enum po_status check_inputs(const struct po_cli_options *options,
				   struct po_ingest_watch **watch,
				   struct po_ingest_watch **baseline_watch, struct po_error *err)
{
	enum po_status status;

	*watch = NULL;
	*baseline_watch = NULL;
	status = options->salvage ? po_ingest_check_start_salvage(options->trace_dir, watch, err)
				  : po_ingest_check_start(options->trace_dir, watch, err);
	if (status == PO_STATUS_OK)
		status = check_output(options, err);
	if (status == PO_STATUS_OK && options->baseline)
		status = check_baseline(options, baseline_watch, err);
	if (status != PO_STATUS_OK) {
		po_ingest_watch_destroy(*watch);
		po_ingest_watch_destroy(*baseline_watch);
		*watch = NULL;
		*baseline_watch = NULL;
	}
	return status;
}

/*
 * PO_STATUS_INTERRUPTED once a terminating signal came (po_signals_catch()), unless status
 * is already a failure.
 */
static enum po_status check_signals(enum po_status status, struct po_error *err)
{
	if (!po_status_completed(status) || !po_signals_caught())
		return status;
	po_error_set(err, "interrupted by %s", po_signal_name(po_signals_caught()));
	return PO_STATUS_INTERRUPTED;
}

/*
 * The progress line: on a terminal, not with -q, once the analysis has run for a second
 * (PROFOPT_PROGRESS_AFTER_MS sets another delay, for tests).
 */
static void set_progress(const struct po_cli_options *options, struct po_isolate_limits *limits)
{
	const char *after = getenv("PROFOPT_PROGRESS_AFTER_MS");
	char *end;
	long ms;

	limits->progress = !options->quiet && isatty(STDERR_FILENO);
	limits->progress_after_ms = 1000;
	if (after && *after) {
		ms = strtol(after, &end, 10);
		if (*end == '\0' && ms >= 0 && ms <= 3600000)
			limits->progress_after_ms = (unsigned)ms;
	}
}

/* Runs the analysis into the staging directory; ends the watches (the settle check). */
static enum po_status analyze_isolated(const struct po_cli_options *options,
				       const struct po_live_history *live, const char *staging,
				       struct po_ingest_watch *watch,
				       struct po_ingest_watch *baseline_watch, char **text,
				       struct po_error *err)
{
	struct po_pipeline_job job = {.options = options, .staging_dir = staging, .live = live};
	struct po_isolate_limits limits;
	struct po_error settle_err = {{0}};
	enum po_status status, settled;

	job.checked_skipped.note =
	    po_ingest_watch_borrow_skipped(watch, &job.checked_skipped.count);
	status = po_isolate_limits_init(&limits, err);
	set_progress(options, &limits);
	if (status == PO_STATUS_OK)
		status = check_signals(PO_STATUS_OK, err);
	if (status == PO_STATUS_OK)
		status = po_isolate_run(po_pipeline_run, &job, &limits, text, err);
	if (status == PO_STATUS_INTERRUPTED) {
		po_ingest_watch_destroy(watch);
		po_ingest_watch_destroy(baseline_watch);
		return status;
	}
	/* A trace still being written explains a decoding failure too: say so instead. */
	settled = check_inputs_settled(watch, baseline_watch, &settle_err);
	if (settled != PO_STATUS_OK) {
		*err = settle_err;
		status = settled;
	}
	return check_signals(status, err);
}

/* Lines that do not stop the run (what po_outdir_open() left alone), one warning each. */
static void print_warnings(const char *lines)
{
	while (lines && *lines) {
		size_t len = strcspn(lines, "\n");

		fprintf(stderr, "profopt-analyze: warning: %.*s\n", (int)len, lines);
		lines += len + (lines[len] == '\n');
	}
}

/*
 * An output failed and the others were committed: the causes name the files where they are
 * now (DIR/report.pdf, not the staging directory's path) and say where the others went.
 */
static void name_committed_outputs(struct po_error *err, const char *staging, const char *out_dir)
{
	struct po_error named = {{0}};
	size_t staging_len = strlen(staging);
	const char *cursor = err->message;
	const char *found;

	while ((found = strstr(cursor, staging)) != NULL) {
		po_error_append(&named, "%.*s%s", (int)(found - cursor), cursor, out_dir);
		cursor = found + staging_len;
	}
	po_error_append(&named, "%s; the other outputs were written to %s", cursor, out_dir);
	*err = named;
}

static enum po_status run(struct po_cli_options *options, const struct po_live_history *live,
			  struct po_error *err)
{
	struct po_ingest_watch *watch = NULL, *baseline_watch = NULL; /* owned */
	struct po_outdir *outdir = NULL;			      /* owned */
	char *text = NULL;					      /* owned */
	bool kept_earlier = false; /* a partial report left the earlier one in place */
	enum po_status status;

	po_signals_catch();
	status = check_inputs(options, &watch, &baseline_watch, err);
	if (status == PO_STATUS_OK)
		status = po_outdir_open(options->out_dir, options->force, &outdir, err);
	if (status == PO_STATUS_OK && !options->quiet)
		print_warnings(po_outdir_borrow_notes(outdir));
	if (status == PO_STATUS_OK)
		status = check_signals(po_outdir_stage(outdir, err), err);
	if (status == PO_STATUS_OK) {
		status = analyze_isolated(options, live, po_outdir_borrow_staging(outdir), watch,
					  baseline_watch, &text, err);
	} else {
		po_ingest_watch_destroy(watch);
		po_ingest_watch_destroy(baseline_watch);
	}
	if (po_status_completed(status)) {
		/*
		 * A tripped gate (or one that cannot be judged) still leaves its report, to
		 * show what tripped it; an output
		 * that failed leaves the others (exit 5 all the same).
		 */
		struct po_error commit_err = {{0}};
		enum po_status committed;

		/*
		 * A partial report is not mixed into a whole earlier one: that one stays as it
		 * was (the outputs of this run that were written go with the staging directory).
		 */
		if (status == PO_STATUS_OUTPUT_PARTIAL && po_outdir_holds_report(outdir)) {
			po_error_append(err, "; the earlier report in %s was kept as it was",
					options->out_dir);
			kept_earlier = true;
			goto done;
		}
		committed = po_outdir_commit(outdir, &commit_err);
		if (committed != PO_STATUS_OK) {
			*err = commit_err;
			status = committed;
		} else if (status == PO_STATUS_OUTPUT_PARTIAL) {
			name_committed_outputs(err, po_outdir_borrow_staging(outdir),
					       options->out_dir);
		}
	}
done:
	/* After --live, stdout holds the JSON lines of the windows unless it is a terminal. */
	if (po_status_completed(status) && text && !options->quiet)
		fprintf(live && !isatty(STDOUT_FILENO) ? stderr : stdout, "%s%s%s\n", text,
			kept_earlier ? "No report written: " : "Report: ", options->out_dir);
	po_outdir_destroy(outdir);
	free(text);
	po_signals_release();
	return status;
}

/*
 * --live: the live view until the session ends; then, with TRACE_DIR, the trace's report
 * as an offline analysis makes it, with the alerts beside it.
 */
/*
 * --trace-done-fd: the live session can end before the recording does (profopt-record
 * ends it after the trace is complete, but anyone may destroy it): the trace is analysed
 * only once the recorder says "complete"; an end of file without it means it will not be.
 */
static enum po_status wait_trace_done(const struct po_cli_options *options, struct po_error *err)
{
	char said[16] = "";
	size_t got = 0;

	while (got < sizeof(said) - 1) {
		ssize_t n = read(options->trace_done_fd, said + got, sizeof(said) - 1 - got);

		if (n < 0 && errno == EINTR && !po_signals_caught())
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(options->trace_done_fd);
	if (po_signals_caught())
		return check_signals(PO_STATUS_OK, err);
	if (strncmp(said, "complete", 8) != 0) {
		po_error_set(err,
			     "%s: the recording did not complete (its recorder failed or was "
			     "stopped): no report was written; profopt-analyze %s analyses what "
			     "is there",
			     options->trace_dir, options->trace_dir);
		return PO_STATUS_INPUT;
	}
	return PO_STATUS_OK;
}

/*
 * With TRACE_DIR, the report directory is checked before the live view attaches, as it is
 * again before the report is written: a run that cannot leave its report is refused before
 * it records (profopt-record then does not start the command).
 */
static enum po_status check_live_output(const struct po_cli_options *options, struct po_error *err)
{
	struct po_outdir *outdir = NULL; /* owned */
	enum po_status status;

	if (!options->trace_dir)
		return PO_STATUS_OK;
	status = check_output(options, err);
	if (status == PO_STATUS_OK)
		status = po_outdir_open(options->out_dir, options->force, &outdir, err);
	po_outdir_destroy(outdir);
	return status;
}

static enum po_status run_live(struct po_cli_options *options, struct po_error *err)
{
	struct po_live_history history = {0};
	enum po_status status;

	po_signals_catch();
	status = check_live_output(options, err);
	if (status == PO_STATUS_OK)
		status = check_signals(po_live_run(options, &history, err), err);
	if (status == PO_STATUS_OK && options->trace_dir && options->trace_done_fd >= 0)
		status = wait_trace_done(options, err);
	po_signals_release();
	if (status == PO_STATUS_OK && options->trace_dir)
		status = run(options, &history, err);
	po_live_history_fini(&history);
	return status;
}

/* --merge: partial summaries in, the job's summary.json out (merge_run.c). */
static enum po_status run_merge(const struct po_cli_options *options, struct po_error *err)
{
	char *text = NULL; /* owned */
	enum po_status status;

	po_signals_catch();
	status = check_signals(po_merge_run(options, &text, err), err);
	if (status == PO_STATUS_OK && text && !options->quiet)
		printf("%sReport: %s\n", text, options->out_dir);
	free(text);
	po_signals_release();
	return status;
}

int main(int argc, char **argv)
{
	struct po_cli_options options;
	struct po_error err = {{0}};
	struct job_dir job = {0};
	bool exit_now = false;
	enum po_status status;

	status = po_cli_parse(argc, argv, &options, &exit_now, &err);
	if (status == PO_STATUS_OK && !exit_now) {
		struct po_isolate_limits limits; /* refused before anything is read or written */

		status = po_isolate_limits_init(&limits, &err);
	}
	if (status == PO_STATUS_OK && !exit_now && options.trace_dir_count > 1 && !options.merge)
		status = job_dir_create(&options, &job, &err);
	if (status == PO_STATUS_OK && !exit_now && options.merge)
		status = run_merge(&options, &err);
	else if (status == PO_STATUS_OK && !exit_now && options.live_url)
		status = run_live(&options, &err);
	else if (status == PO_STATUS_OK && !exit_now)
		status = run(&options, NULL, &err);
	job_dir_unname(&job, &options, &err);
	job_dir_remove(&job);
	po_cli_options_fini(&options);
	if (status != PO_STATUS_OK) {
		fprintf(stderr, "profopt-analyze: %s\n",
			err.message[0] ? err.message : po_status_description(status));
		return po_status_exit_code(status);
	}
	return 0;
}
