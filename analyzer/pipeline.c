/*
 * pipeline.c: one analysis, from the trace directory to the report's files in the staging
 * directory (pipeline.h). The trace's own files are read first (profopt-recording.txt, the
 * stream survey), then its events feed the model; what the files and the decoder found
 * becomes the result's trace-quality warnings; symbols, detectors, the baseline
 * comparison and the renderers follow.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/isolate.h"
#include "common/text.h"
#include "compare/compare.h"
#include "detect/detect.h"
#include "ingest/ingest.h"
#include "model/model.h"
#include "pipeline.h"
#include "live/panel.h"
#include "symbols/symbols.h"
#include "../render/json/render_json.h"
#include "../render/report/render_report.h"

static enum po_status make_path(const char *dir, const char *name, char *path, size_t size,
				struct po_error *err)
{
	if ((size_t)snprintf(path, size, "%s/%s", dir, name) >= size) {
		po_error_set(err, "path too long: %s/%s", dir, name);
		return PO_STATUS_OUTPUT;
	}
	return PO_STATUS_OK;
}

/*
 * alerts.json after a live run: {"schema":"profopt-alerts/1","windows":N,"origin_ns":T,
 * "alerts":[...]}, each alert as --alerts FILE has it (docs/live.md).
 */
static enum po_status write_alerts(const struct po_live_history *live, const char *path,
				   struct po_error *err)
{
	FILE *out = fopen(path, "w");
	bool ok = out != NULL;

	if (ok)
		fprintf(out,
			"{\"schema\":\"profopt-alerts/1\",\"windows\":%lld,\"origin_ns\":%lld,"
			"\"alerts\":[\n",
			(long long)live->windows, (long long)live->origin_ns);
	for (size_t i = 0; ok && i < live->count; i++) {
		if (i)
			fputc(',', out);
		ok = po_live_alert_write_json(out, &live->alerts[i]);
	}
	if (ok)
		ok = fputs("]}\n", out) >= 0;
	if (out && fclose(out) != 0)
		ok = false;
	if (!ok) {
		po_error_set(err, "Failed to write %s: %s", path, strerror(errno));
		return PO_STATUS_OUTPUT;
	}
	return PO_STATUS_OK;
}

/* The partial summary, the one output of --partial. */
static enum po_status render_partial(const struct po_analysis *analysis,
				     const struct po_pipeline_job *job, struct po_error *err)
{
	char path[PATH_MAX];
	enum po_status status;

	po_isolate_progress("writing partial.json", job->staging_dir);
	status = make_path(job->staging_dir, "partial.json", path, sizeof(path), err);
	if (status == PO_STATUS_OK && !analysis->distributed) {
		po_error_set(err,
			     "%s: no process of the trace said its rank (profopt.run in a "
			     "torch.distributed job, or profopt_rank()): --partial has "
			     "nothing to summarise",
			     job->options->trace_dir);
		return PO_STATUS_INPUT;
	}
	return status == PO_STATUS_OK ? po_render_partial_json(analysis, path, err) : status;
}

/* A JSON output of the analysis (summary.json, timeline.json) or of the live run (alerts). */
typedef enum po_status (*json_writer_fn)(const struct po_analysis *analysis,
					 const struct po_live_history *live, const char *path,
					 struct po_error *err);

static enum po_status summary_json(const struct po_analysis *analysis,
				   const struct po_live_history *live, const char *path,
				   struct po_error *err)
{
	return po_render_summary_json(analysis, path, err);
}

static enum po_status timeline_json(const struct po_analysis *analysis,
				    const struct po_live_history *live, const char *path,
				    struct po_error *err)
{
	return po_render_timeline_json(analysis, path, err);
}

static enum po_status alerts_json(const struct po_analysis *analysis,
				  const struct po_live_history *live, const char *path,
				  struct po_error *err)
{
	return write_alerts(live, path, err);
}

/* One JSON output; a failed one is removed (nothing half-written). */
static void write_json(const struct po_analysis *analysis, const struct po_pipeline_job *job,
		       const char *phase, const char *name, json_writer_fn writer,
		       struct po_outcome *outputs, struct po_error *err)
{
	char path[PATH_MAX];
	struct po_error cause = {{0}};
	enum po_status status;

	po_isolate_progress(phase, job->staging_dir);
	status = make_path(job->staging_dir, name, path, sizeof(path), &cause);
	if (status == PO_STATUS_OK) {
		status = writer(analysis, job->live, path, &cause);
		if (status != PO_STATUS_OK)
			unlink(path);
	}
	po_outcome_add(outputs, status, &cause, err);
}

/*
 * Every output is tried: one renderer's failure (a full disk, a cairo error) takes no other
 * output with it. PO_STATUS_OUTPUT_PARTIAL when some failed and others were written, with
 * every failure's cause in err; the first failure's status when none was written.
 */
static enum po_status render_all(const struct po_analysis *analysis,
				 const struct po_pipeline_job *job, struct po_error *err)
{
	struct po_outcome outputs = {0, 0, PO_STATUS_OK};
	struct po_error cause = {{0}};

	if (job->options->partial)
		return render_partial(analysis, job, err);
	write_json(analysis, job, "writing summary.json", "summary.json", summary_json, &outputs,
		   err);
	if (job->live)
		write_json(analysis, job, "writing alerts.json", "alerts.json", alerts_json,
			   &outputs, err);
	write_json(analysis, job, "writing timeline.json", "timeline.json", timeline_json, &outputs,
		   err);
	if (!job->options->json_only) {
		po_isolate_progress("writing the report", job->staging_dir);
		po_outcome_add(&outputs, po_render_report(analysis, job->staging_dir, &cause),
			       &cause, err);
	}
	if (!outputs.failures)
		return PO_STATUS_OK;
	return outputs.failures < outputs.tried ? PO_STATUS_OUTPUT_PARTIAL : outputs.first;
}

struct feed {
	struct po_model *model; /* weak */
	int64_t events;
	int64_t end_ns; /* the streams' end (the survey), for the progress line; -1 */
};

/* Events between two updates of the progress line's count. */
#define PROGRESS_EVERY 65536

static enum po_status feed_event(void *ctx, const struct po_event *event)
{
	struct feed *feed = ctx;

	if (feed->events++ == 0)
		po_isolate_time_range(event->time_ns, feed->end_ns);
	if (feed->events % PROGRESS_EVERY == 0)
		po_isolate_count(feed->events, event->time_ns);
	return po_model_consume(feed->model, event);
}

/* The model's native frames, named by the symbolizer (ctx). */
static enum po_status name_native(void *ctx, const char *path, const char *build_id,
				  uint64_t offset, bool interrupted, struct po_native_name *out)
{
	struct po_symbol symbol;
	enum po_status status =
	    po_symbolizer_function(ctx, path, build_id, offset, interrupted, &symbol);

	*out = (struct po_native_name){symbol.function, symbol.file, (int32_t)symbol.line};
	return status;
}

/* The model's allocation sites, named by the symbolizer (ctx). */
static enum po_status name_call(void *ctx, const char *path, const char *build_id, uint64_t offset,
				struct po_native_call *out)
{
	struct po_symbol symbol;
	enum po_status status = po_symbolizer_lookup(ctx, path, build_id, offset, &symbol);

	*out = (struct po_native_call){symbol.function, symbol.file, symbol.line, symbol.note};
	return status;
}

static void init_model_config(const struct po_cli_options *options, struct po_model_config *config)
{
	po_model_config_init(config);
	/* Clamped: a huge --set value must not overflow the nanosecond threshold. */
	config->min_gap_ns = options->rules.gpu_idle_min_gap_ms >= 9e12
				 ? INT64_MAX
				 : (int64_t)(options->rules.gpu_idle_min_gap_ms * 1e6);
	config->timeline_first_step = options->timeline_first_step;
	config->timeline_last_step = options->timeline_last_step;
	/* --steps-in: the statistics and detectors cover those steps, as a live window's */
	config->steps_after_ns = options->steps_after_ns;
	config->steps_until_ns = options->steps_until_ns;
}

/* A warning for the model, its text formatted (po_model_add_warning). */
static enum po_status warn_model(struct po_model *model, const char *code, const char *fmt, ...)
    PO_PRINTF(3, 4);
static enum po_status warn_model(struct po_model *model, const char *code, const char *fmt, ...)
{
	va_list args;
	char *text = NULL;
	int length;
	enum po_status status;

	va_start(args, fmt);
	length = vsnprintf(NULL, 0, fmt, args);
	va_end(args);
	if (length < 0 || !(text = malloc((size_t)length + 1)))
		return PO_STATUS_NOMEM;
	va_start(args, fmt);
	vsnprintf(text, (size_t)length + 1, fmt, args);
	va_end(args);
	status = po_model_add_warning(model, code, text);
	free(text);
	return status;
}

/* The traces left out by the input check and by the decoder, in one warning. */
static enum po_status add_skipped_warning(struct po_model *model,
					  const struct po_skipped_traces *checked,
					  const struct po_ingest_stats *stats)
{
	int64_t checked_count = checked ? checked->count : 0;
	const char *checked_note = checked_count ? checked->note : "";
	char text[2 * PO_ERROR_MAX + 64];

	if (checked_count + stats->skipped_traces == 0)
		return PO_STATUS_OK;
	snprintf(text, sizeof(text), "--salvage left out %lld damaged trace(s): %s%s%s",
		 (long long)(checked_count + stats->skipped_traces), checked_note,
		 checked_count && stats->skipped_traces ? "; " : "", stats->skipped_note);
	po_model_note_partial(model);
	return po_model_add_warning(model, "skipped-traces", text);
}

/*
 * A torch.profiler trace: what it does not hold, said once, and what its reader left out
 * (docs/kineto.md).
 */
static enum po_status add_kineto_warnings(struct po_model *model,
					  const struct po_ingest_stats *stats)
{
	char text[PO_ERROR_MAX];
	enum po_status status;

	if (stats->kineto_traces == 0)
		return PO_STATUS_OK;
	status = po_model_add_warning(
	    model, "kineto-not-recorded",
	    "a torch.profiler trace holds no DataLoader worker processes, no CPU time, no "
	    "run-queue waits, no resident memory and no batch sizes: the findings that need "
	    "them are not made, and loading shows only as the training thread's data wait");
	if (status == PO_STATUS_OK && stats->kineto_records_left_out > 0) {
		snprintf(text, sizeof(text),
			 "%lld torch.profiler records had impossible times (a negative duration, a "
			 "time before 0 or after 2262, no process) and were left out",
			 (long long)stats->kineto_records_left_out);
		po_model_note_partial(model);
		status = po_model_add_warning(model, "kineto-records-left-out", text);
	}
	if (status == PO_STATUS_OK && stats->kineto_python_calls_left_out > 0) {
		snprintf(
		    text, sizeof(text),
		    "%lld torch.profiler python_function calls were nested deeper than 4096 on "
		    "their thread and were left out: their time counts for the call they were "
		    "in",
		    (long long)stats->kineto_python_calls_left_out);
		po_model_note_partial(model);
		status = po_model_add_warning(model, "kineto-python-calls-left-out", text);
	}
	if (status == PO_STATUS_OK && stats->kineto_names_cut > 0) {
		snprintf(text, sizeof(text),
			 "%lld torch.profiler strings were longer than the reader keeps (64 KiB; "
			 "names 4 KiB) and were cut",
			 (long long)stats->kineto_names_cut);
		status = po_model_add_warning(model, "kineto-names-cut", text);
	}
	if (status == PO_STATUS_OK && stats->kineto_collectives_without_kernel > 0) {
		snprintf(text, sizeof(text),
			 "%lld collectives called on the host have no communication kernel in the "
			 "trace and were left out (when they completed is not known)",
			 (long long)stats->kineto_collectives_without_kernel);
		status = po_model_add_warning(model, "kineto-collectives-without-kernel", text);
	}
	return status;
}

/* What the decoder dropped or left out goes into the trace-quality warnings. */
static enum po_status add_ingest_warnings(struct po_model *model,
					  const struct po_skipped_traces *checked,
					  const struct po_ingest_stats *stats)
{
	char text[PO_ERROR_MAX + 64];
	enum po_status status = PO_STATUS_OK;

	if (stats->malformed_events > 0) {
		snprintf(text, sizeof(text),
			 "%lld profopt events had out-of-range values or "
			 "missing fields and were skipped",
			 (long long)stats->malformed_events);
		status = po_model_add_warning(model, "malformed-events", text);
	}
	if (status == PO_STATUS_OK && stats->unknown_profopt_events > 0) {
		snprintf(text, sizeof(text),
			 "%lld events of %.*s and other classes named like profopt events but "
			 "unknown to this analyzer were ignored: the trace's metadata may be "
			 "damaged, or another profopt version recorded it",
			 (long long)stats->unknown_profopt_events,
			 po_text_precision(stats->unknown_profopt_name, 100),
			 stats->unknown_profopt_name);
		status = po_model_add_warning(model, "unknown-profopt-events", text);
	}
	if (status == PO_STATUS_OK && stats->no_clock_events > 0) {
		snprintf(text, sizeof(text), "%lld events had no timestamp and were skipped",
			 (long long)stats->no_clock_events);
		status = po_model_add_warning(model, "events-without-time", text);
	}
	if (status == PO_STATUS_OK)
		status = add_kineto_warnings(model, stats);
	if (status == PO_STATUS_OK)
		status = add_skipped_warning(model, checked, stats);
	return status;
}

/*
 * A trace without profopt events, recorded by profopt-record: its notes
 * (profopt-record-notes.txt, written by the Python module through profopt-record) may say
 * why, such as a module that could not load libprofopt. Appends that reason to err. Opens
 * nothing that could block and reads a bounded amount.
 */
static void explain_no_events(const char *trace_dir, struct po_error *err)
{
	static const char code[] = "libprofopt-not-loaded\t";
	char path[PATH_MAX], text[2048], previous[PO_ERROR_MAX];
	struct stat info;
	ssize_t length;
	char *reason, *end;
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/profopt-record-notes.txt", trace_dir) >=
	    sizeof(path))
		return;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return;
	length =
	    fstat(fd, &info) == 0 && S_ISREG(info.st_mode) ? read(fd, text, sizeof(text) - 1) : -1;
	close(fd);
	if (length <= 0)
		return;
	text[length] = '\0';
	if (strncmp(text, code, sizeof(code) - 1) != 0 ||
	    !(reason = strchr(text + sizeof(code) - 1, '\t')))
		return;
	reason++;
	end = reason + strcspn(reason, "\n");
	*end = '\0';
	memcpy(previous, err->message, sizeof(previous));
	po_error_set(err,
		     "%.200s: the profopt Python module could not load libprofopt (%.300s%s); set "
		     "PROFOPT_LIBRARY to the path of libprofopt.so and record again",
		     previous, reason, strlen(reason) > 300 ? "..." : "");
}

/* What the trace's files say besides its events: its recording and its streams. */
struct trace_files {
	struct po_recording recording;
	struct po_error recording_err; /* why profopt-recording.txt was not used; "" if it was */
	struct po_stream_survey survey;
	const char **skip; /* owned array; the paths belong to survey */
	size_t skip_count;
	struct po_repair repair; /* --salvage: streams cut to what decodes */
};

/*
 * The decoder keeps every stream file of the trace open while it merges them. Raises the
 * soft open-file limit to the hard one when the streams need it; refuses, before decoding,
 * when even that is too few (a trace of thousands of process directories).
 */
static enum po_status ensure_open_files(const char *trace_dir, size_t streams, struct po_error *err)
{
	rlim_t needed = (rlim_t)streams + 64; /* metadata, indexes, the outputs, the libraries */
	struct rlimit limit;

	if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= needed)
		return PO_STATUS_OK;
	if (limit.rlim_cur < limit.rlim_max) {
		limit.rlim_cur = limit.rlim_max;
		setrlimit(RLIMIT_NOFILE, &limit);
		getrlimit(RLIMIT_NOFILE, &limit);
	}
	if (limit.rlim_cur >= needed)
		return PO_STATUS_OK;
	po_error_set(err,
		     "%s holds %zu stream files, which the decoder keeps open together, and this "
		     "process may open %llu files (ulimit -n; its hard limit is %llu): raise the "
		     "limit to at least %llu",
		     trace_dir, streams, (unsigned long long)limit.rlim_cur,
		     (unsigned long long)limit.rlim_max, (unsigned long long)needed);
	return PO_STATUS_INTERNAL;
}

static enum po_status read_trace_files(const char *trace_dir, struct trace_files *files,
				       struct po_error *err)
{
	enum po_status status;

	memset(files, 0, sizeof(*files));
	if (po_recording_read(trace_dir, &files->recording, &files->recording_err) != PO_STATUS_OK)
		files->recording.present = false;
	status = po_ingest_survey(trace_dir, &files->survey, err);
	if (status == PO_STATUS_OK)
		status = ensure_open_files(trace_dir, files->survey.stream_count, err);
	if (status != PO_STATUS_OK)
		return status;
	files->skip = calloc(files->survey.duplicate_count + 1, sizeof(*files->skip));
	if (!files->skip) {
		po_error_set(err, "out of memory");
		return PO_STATUS_NOMEM;
	}
	for (size_t i = 0; i < files->survey.trace_count; i++)
		if (files->survey.duplicate_of[i] >= 0)
			files->skip[files->skip_count++] = files->survey.trace_paths[i];
	return PO_STATUS_OK;
}

static void trace_files_fini(struct trace_files *files)
{
	po_repair_fini(&files->repair);
	free(files->skip);
	po_stream_survey_fini(&files->survey);
}

/*
 * The windows the trace is missing: streams cut short, and a recording whose last event
 * is well before its command ended (profopt-recording.txt).
 */
static enum po_status note_missing(struct po_model *model, const struct trace_files *files)
{
	static const enum po_missing_kind kinds[] = {
	    [PO_CUT_SHORTER_THAN_INDEX] = PO_MISSING_STREAM_SHORTER_THAN_INDEX,
	    [PO_CUT_ENDS_EARLY] = PO_MISSING_STREAM_ENDS_EARLY,
	};
	const struct po_stream_survey *survey = &files->survey;
	enum po_status status = PO_STATUS_OK;

	for (size_t i = 0; i < survey->cut_count && status == PO_STATUS_OK; i++)
		status =
		    po_model_note_missing(model, kinds[survey->cuts[i].kind], survey->cuts[i].path,
					  survey->cuts[i].begin_ns, survey->cuts[i].end_ns);
	for (size_t i = 0; i < files->repair.window_count && status == PO_STATUS_OK; i++) {
		const struct po_repair_window *window = &files->repair.windows[i];
		int64_t end_ns = window->end_ns; /* -1: to the trace's end */

		if (end_ns < 0)
			end_ns =
			    survey->end_ns > window->begin_ns ? survey->end_ns : window->begin_ns;
		status = po_model_note_missing(model, PO_MISSING_STREAM_DAMAGED,
					       files->repair.streams[window->stream].path,
					       window->begin_ns, end_ns);
	}
	if (status == PO_STATUS_OK && files->recording.present && files->recording.end_ns > 0 &&
	    survey->end_ns >= 0 && files->recording.end_ns - survey->end_ns > PO_CUT_TOLERANCE_NS)
		status = po_model_note_missing(model, PO_MISSING_RECORDING_ENDS_EARLY, NULL,
					       survey->end_ns, files->recording.end_ns);
	return status;
}

/* path below the trace directory, without it; path itself when it is not below. */
static const char *relative_path(const char *path, const char *trace_dir)
{
	size_t length = strlen(trace_dir);

	while (length > 1 && trace_dir[length - 1] == '/')
		length--;
	if (strncmp(path, trace_dir, length) == 0 && path[length] == '/')
		return path + length + 1;
	return path;
}

/* Warnings about the trace's files: copies left out, a damaged profopt-recording.txt. */
static enum po_status add_file_warnings(struct po_model *model, const struct trace_files *files,
					const char *trace_dir)
{
	const struct po_stream_survey *survey = &files->survey;
	enum po_status status = PO_STATUS_OK;

	for (size_t i = 0; i < survey->trace_count && status == PO_STATUS_OK; i++) {
		if (survey->duplicate_of[i] < 0)
			continue;
		status = warn_model(
		    model, "duplicate-traces",
		    "%zu trace directories are copies of another (the same trace "
		    "UUID) and were left out, so that no event counts twice: %s "
		    "copies %s",
		    survey->duplicate_count, relative_path(survey->trace_paths[i], trace_dir),
		    relative_path(survey->trace_paths[survey->duplicate_of[i]], trace_dir));
		break;
	}
	if (status == PO_STATUS_OK && files->repair.count) {
		const struct po_repaired_stream *first = &files->repair.streams[0];

		po_model_note_partial(model);
		status = warn_model(
		    model, "salvaged-streams",
		    "--salvage kept the readable packets of %zu damaged stream(s) "
		    "instead of leaving out the trace directory that holds them "
		    "(one process, or with per-user buffers every process): %s keeps "
		    "%zu of %zu packets (%lld of %lld bytes); the packets left out "
		    "are damaged and are missing windows",
		    files->repair.count, first->path, first->kept_packets, first->packets,
		    (long long)first->kept_bytes, (long long)first->bytes);
	}
	if (status == PO_STATUS_OK && files->recording_err.message[0])
		status = warn_model(model, "recording-file",
				    "%s; processes of other programs that recorded at the same "
				    "time could not be told from the command's",
				    files->recording_err.message);
	return status;
}

/*
 * What the model is told about the trace before it finishes: the windows the trace is
 * missing, and the warnings about what the decoder and the input check (checked, or NULL)
 * left out and about its files. The result is then complete when the model finishes.
 */
static enum po_status note_trace(struct po_model *model, const struct trace_files *files,
				 const struct po_skipped_traces *checked,
				 const struct po_ingest_stats *stats, const char *trace_dir)
{
	enum po_status status = note_missing(model, files);

	if (status == PO_STATUS_OK && stats->partial)
		po_model_note_partial(model);
	if (status == PO_STATUS_OK)
		status = add_ingest_warnings(model, checked, stats);
	if (status == PO_STATUS_OK)
		status = add_file_warnings(model, files, trace_dir);
	return status;
}

/*
 * Runs the model over the trace's events; the result in *out. The events come from
 * files->repair's shadow directory when --salvage repaired streams.
 */
/* The ingest options of the analysis of trace_dir. */
static struct po_ingest_options ingest_options_for(const struct po_cli_options *options,
						   const struct trace_files *files)
{
	return (struct po_ingest_options){.salvage = options->salvage,
					  .decode_threads = options->decode_threads,
					  .skip_traces = files->skip,
					  .skip_trace_count = files->skip_count};
}

/* PO_STATUS_DECODE (and the error) when the decoder crashes on the trace (--salvage). */
static enum po_status survives(const struct po_cli_options *options, const char *trace_dir,
			       const struct trace_files *files, struct po_error *err)
{
	struct po_ingest_options ingest_options = ingest_options_for(options, files);

	po_isolate_progress("decoding", trace_dir);
	return po_ingest_survives(trace_dir, &ingest_options, err);
}

/*
 * A directory of several recordings (one per host): each recording's own processes, by
 * its profopt-recording.txt, in its own pid space (config->recordings; *members owned).
 */
static enum po_status member_recordings(const char *trace_dir, const struct trace_files *files,
					struct po_member_recording **members,
					struct po_model_config *config, struct po_error *err)
{
	struct po_recording *recordings = NULL;
	size_t count = 0;
	enum po_status status = po_recordings_list(trace_dir, &recordings, &count, err);

	if (status != PO_STATUS_OK || !count)
		return status;
	*members = calloc(count, sizeof(**members));
	if (!*members) {
		free(recordings);
		po_error_set(err, "out of memory");
		return PO_STATUS_NOMEM;
	}
	for (size_t k = 0; k < count; k++) {
		snprintf((*members)[k].id, sizeof((*members)[k].id), "%s",
			 recordings[k].present ? recordings[k].id : "");
		(*members)[k].command_pid = recordings[k].present ? recordings[k].command_pid : -1;
	}
	free(recordings);
	config->recordings = *members;
	config->recording_count = count;
	config->keep_unannounced = files->repair.count > 0 || files->survey.cut_count > 0;
	return PO_STATUS_OK;
}

static enum po_status model_trace(const struct po_cli_options *options, const char *trace_dir,
				  const struct trace_files *files,
				  const struct po_skipped_traces *checked,
				  struct po_ingest_stats *stats, struct po_analysis **out,
				  struct po_error *err)
{
	struct po_ingest_options ingest_options = ingest_options_for(options, files);
	struct po_member_recording *members = NULL; /* owned */
	struct po_model_config config;
	struct po_model *model = NULL;
	struct po_arena *names = po_arena_create(); /* owned: the symbolizer's strings */
	/* owned: native frames and allocation sites */
	struct po_symbolizer *symbolizer = names ? po_symbolizer_create(names) : NULL;
	struct feed feed;
	enum po_status status;

	if (!symbolizer) {
		po_arena_destroy(names);
		po_error_set(err, "out of memory");
		return PO_STATUS_NOMEM;
	}
	init_model_config(options, &config);
	config.native_namer = (struct po_native_namer){
	    .name = name_native, .name_call = name_call, .ctx = symbolizer};
	if (files->recording.present)
		config.recorder_cpu_ns = files->recording.recorder_cpu_ns;
	if (files->recording.present && !options->all_processes) {
		snprintf(config.recording_id, sizeof(config.recording_id), "%s",
			 files->recording.id);
		config.command_pid = files->recording.command_pid;
		config.command_exit = files->recording.exit_status;
		/* packets are missing: they may have held processes' announcements */
		config.keep_unannounced = files->repair.count > 0 || files->survey.cut_count > 0;
	}
	if (!files->recording.present && !options->all_processes) {
		status = member_recordings(trace_dir, files, &members, &config, err);
		if (status != PO_STATUS_OK) {
			po_symbolizer_destroy(symbolizer);
			po_arena_destroy(names);
			return status;
		}
	}
	status = po_model_create(&config, &model, err);
	if (status != PO_STATUS_OK) {
		po_symbolizer_destroy(symbolizer);
		po_arena_destroy(names);
		free(members);
		return status;
	}
	feed = (struct feed){.model = model, .end_ns = files->survey.end_ns};
	status = po_ingest_run(files->repair.shadow_root[0] ? files->repair.shadow_root : trace_dir,
			       &ingest_options, feed_event, &feed, stats, err);
	if (status == PO_STATUS_OK &&
	    note_trace(model, files, checked, stats, trace_dir) != PO_STATUS_OK) {
		po_error_set(err, "out of memory");
		status = PO_STATUS_NOMEM;
	}
	if (status == PO_STATUS_OK) {
		po_isolate_progress("analysing", trace_dir);
		status = po_model_finish(model, out, err);
		if (status == PO_STATUS_INPUT && po_model_excluded_processes(model) > 0)
			po_error_append(
			    err,
			    "; the %lld processes that recorded did not announce themselves as the "
			    "recorded command's (another program's, or a libprofopt older than "
			    "profopt-record): --all-processes analyses them",
			    (long long)po_model_excluded_processes(model));
		else if (status == PO_STATUS_INPUT)
			explain_no_events(trace_dir, err);
		if (status != PO_STATUS_OK)
			po_error_prepend(err, "%s", trace_dir);
	}
	po_model_destroy(model);
	po_symbolizer_destroy(symbolizer);
	po_arena_destroy(names);
	free(members);
	return status;
}

/*
 * --salvage, when the decoder left whole traces out (first: OK, with the analysis of the
 * others in *out) or could decode none (first: DECODE, the per-user layout's one trace,
 * with its error in err): repairs them stream by stream and packet by packet, and when
 * that kept anything, analyses again from the repaired trace (*out replaced). When nothing
 * could be repaired, or the repaired trace cannot be analysed either, the first outcome
 * stays: its message names the trace, not the scratch copy.
 */
static enum po_status salvage_streams(const struct po_cli_options *options, const char *trace_dir,
				      const struct po_skipped_traces *checked, enum po_status first,
				      struct trace_files *files, struct po_ingest_stats *stats,
				      struct po_analysis **out, struct po_error *err)
{
	struct po_ingest_stats repaired_stats = {0};
	struct po_analysis *repaired = NULL;
	struct po_error repair_err = {{0}};
	enum po_status status;

	po_isolate_progress("decoding", trace_dir);
	status = po_ingest_repair(trace_dir, files->skip, files->skip_count, &files->repair,
				  &repair_err);
	if (status != PO_STATUS_OK) {
		*err = repair_err;
		return status;
	}
	if (!files->repair.count)
		return first;
	status = model_trace(options, trace_dir, files, checked, &repaired_stats, &repaired,
			     &repair_err);
	if (status == PO_STATUS_NOMEM) {
		*err = repair_err;
		return status;
	}
	if (status != PO_STATUS_OK) {
		po_repair_fini(&files->repair);
		return first;
	}
	po_analysis_destroy(*out);
	*out = repaired;
	*stats = repaired_stats;
	return PO_STATUS_OK;
}

/*
 * Decodes one trace and runs the model and the detectors on it. checked: what the input
 * check left out of it (--salvage), NULL for none.
 */
static enum po_status analyze_trace(const struct po_cli_options *options, const char *trace_dir,
				    const struct po_skipped_traces *checked,
				    struct po_analysis **out, struct po_error *err)
{
	struct po_ingest_stats stats = {0};
	struct trace_files files;
	enum po_status status;

	*out = NULL;
	status = read_trace_files(trace_dir, &files, err);
	/* --salvage goes on past a decoder that aborts on the damage: asked first, aside. */
	if (status == PO_STATUS_OK && options->salvage)
		status = survives(options, trace_dir, &files, err);
	if (status == PO_STATUS_OK)
		status = model_trace(options, trace_dir, &files, checked, &stats, out, err);
	/* A decoder failure with --salvage left nothing to analyse: one per-user trace. */
	if (options->salvage &&
	    ((status == PO_STATUS_OK && stats.skipped_traces > 0) || status == PO_STATUS_DECODE))
		status =
		    salvage_streams(options, trace_dir, checked, status, &files, &stats, out, err);
	trace_files_fini(&files);
	if (status != PO_STATUS_OK)
		return status;
	return po_detect_run_steps(*out, &options->rules, options->steps_after_ns,
				   options->steps_until_ns, err);
}

/* The live run's alerts, for the report's renderers (result.h, po_live_alert_note). */
static enum po_status note_live_alerts(struct po_analysis *analysis,
				       const struct po_live_history *live, struct po_error *err)
{
	analysis->diagnosis.live = true;
	if (!live->count)
		return PO_STATUS_OK;
	analysis->diagnosis.live_alerts =
	    po_arena_alloc(analysis->arena, live->count * sizeof(*analysis->diagnosis.live_alerts));
	if (!analysis->diagnosis.live_alerts) {
		po_error_set(err, "out of memory");
		return PO_STATUS_NOMEM;
	}
	for (size_t i = 0; i < live->count; i++) {
		const struct po_live_alert *alert = &live->alerts[i];
		struct po_live_alert_note *note = &analysis->diagnosis.live_alerts[i];

		note->kind = po_live_alert_kind_name(alert->kind);
		note->raised = alert->raised;
		note->at_s = (double)(alert->at_ns - live->origin_ns) / 1e9;
		note->evidence =
		    po_arena_strndup(analysis->arena, alert->evidence,
				     strnlen(alert->evidence, sizeof(alert->evidence)));
		if (!note->evidence) {
			po_error_set(err, "out of memory");
			return PO_STATUS_NOMEM;
		}
	}
	analysis->diagnosis.live_alert_count = live->count;
	return PO_STATUS_OK;
}

/* A failure that is the baseline's, not the trace's, has its own exit status. */
static enum po_status baseline_status(enum po_status status)
{
	return status == PO_STATUS_OK || status == PO_STATUS_NOMEM ||
		       status == PO_STATUS_INTERRUPTED
		   ? status
		   : PO_STATUS_BASELINE;
}

static bool is_regular_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The baseline as a digest: from an earlier summary.json, or by analysing its trace. */
static enum po_status baseline_digest(const struct po_cli_options *options, struct po_digest **out,
				      struct po_error *err)
{
	struct po_analysis *old_analysis = NULL;
	enum po_status status;

	if (is_regular_file(options->baseline)) {
		po_isolate_progress("reading the baseline", options->baseline);
		return baseline_status(po_digest_from_summary(options->baseline, out, err));
	}
	po_isolate_progress("decoding the baseline", options->baseline);
	status = analyze_trace(options, options->baseline, NULL, &old_analysis, err);
	if (status == PO_STATUS_OK)
		status = po_digest_from_analysis(old_analysis, options->baseline, out, err);
	else
		po_error_prepend(err, "Failed to analyse the baseline");
	po_analysis_destroy(old_analysis);
	return baseline_status(status);
}

/* Evaluates the --fail-if gates, recording the tripped ones in the comparison. */
static enum po_status evaluate_gates(const struct po_cli_options *options,
				     struct po_analysis *analysis, struct po_comparison *comparison,
				     struct po_error *err)
{
	comparison->gates_tripped =
	    po_arena_alloc(analysis->arena, (options->gate_count + 1) * sizeof(const char *));
	comparison->gates_inconclusive =
	    po_arena_alloc(analysis->arena, (options->gate_count + 1) * sizeof(const char *));
	if (!comparison->gates_tripped || !comparison->gates_inconclusive)
		return PO_STATUS_NOMEM;
	for (size_t i = 0; i < options->gate_count; i++) {
		enum po_gate_outcome outcome = PO_GATE_FALSE;
		enum po_status status =
		    po_gate_evaluate(comparison, options->gates[i], &outcome, err);

		if (status != PO_STATUS_OK)
			return status;
		if (outcome == PO_GATE_TRUE)
			comparison->gates_tripped[comparison->gates_tripped_count++] =
			    options->gates[i];
		else if (outcome == PO_GATE_INCONCLUSIVE)
			comparison->gates_inconclusive[comparison->gates_inconclusive_count++] =
			    options->gates[i];
	}
	return PO_STATUS_OK;
}

/* Compares the analysis with the baseline's digest (old_run, weak). */
static enum po_status compare_with_baseline(const struct po_cli_options *options,
					    const struct po_digest *old_run,
					    struct po_analysis *analysis, struct po_error *err)
{
	struct po_digest *new_run = NULL;
	struct po_compare_config config;
	struct po_comparison *comparison = NULL;
	enum po_status status;

	po_compare_config_init(&config);
	config.min_effect_pct = options->rules.compare_min_effect_pct;
	config.load_difference_pct = options->rules.compare_load_difference_pct;
	status = po_digest_from_analysis(analysis, options->trace_dir, &new_run, err);
	if (status == PO_STATUS_OK)
		status = po_compare(old_run, new_run, &config, analysis->arena, &comparison, err);
	if (status == PO_STATUS_OK)
		status = evaluate_gates(options, analysis, comparison, err);
	if (status == PO_STATUS_OK) {
		/* The step series the comparison points to must outlive the digests. */
		status = po_comparison_take_series(comparison, analysis->arena);
		analysis->diagnosis.comparison = comparison;
	}
	po_digest_destroy(new_run);
	return status;
}

enum po_status po_pipeline_run(void *ctx, FILE *output, struct po_error *err)
{
	const struct po_pipeline_job *job = ctx;
	const struct po_cli_options *options = job->options;
	struct po_analysis *analysis = NULL;
	struct po_digest *old_run = NULL; /* owned */
	enum po_status status = PO_STATUS_OK;

	/* A bad baseline summary.json fails before the trace is decoded. */
	if (options->baseline && is_regular_file(options->baseline))
		status = baseline_digest(options, &old_run, err);
	if (status == PO_STATUS_OK)
		status = analyze_trace(options, options->trace_dir, &job->checked_skipped,
				       &analysis, err);
	if (status == PO_STATUS_OK && options->baseline && !old_run)
		status = baseline_digest(options, &old_run, err);
	if (status == PO_STATUS_OK && old_run)
		status = compare_with_baseline(options, old_run, analysis, err);
	if (status == PO_STATUS_OK && job->live)
		status = note_live_alerts(analysis, job->live, err);
	po_digest_destroy(old_run);
	if (status == PO_STATUS_OK)
		status = render_all(analysis, job, err);
	/* One output that failed leaves the summary of the others (render_all). */
	if (status == PO_STATUS_OK && !options->quiet && options->partial) {
		size_t ranks = analysis->distributed->rank_count;

		fprintf(output,
			"Partial summary: %zu rank%s, step numbers sampled every %" PRId64 "\n",
			ranks, ranks == 1 ? "" : "s", analysis->distributed->sample_stride);
	} else if ((status == PO_STATUS_OK || status == PO_STATUS_OUTPUT_PARTIAL) &&
		   !options->quiet) {
		po_render_text_summary(analysis, output);
		if (analysis->diagnosis.comparison)
			po_comparison_print(analysis->diagnosis.comparison, output);
		if (job->live)
			po_live_alerts_section(output, job->live->alerts, job->live->count,
					       job->live->origin_ns);
	}
	if (status == PO_STATUS_OK && analysis->diagnosis.comparison &&
	    analysis->diagnosis.comparison->gates_tripped_count) {
		po_error_set(err, "--fail-if %s is true",
			     analysis->diagnosis.comparison->gates_tripped[0]);
		status = PO_STATUS_GATE;
	} else if (status == PO_STATUS_OK && analysis->diagnosis.comparison &&
		   analysis->diagnosis.comparison->gates_inconclusive_count) {
		po_error_set(err, "--fail-if %s cannot be judged: %s",
			     analysis->diagnosis.comparison->gates_inconclusive[0],
			     analysis->diagnosis.comparison->load.note);
		status = PO_STATUS_GATE_INCONCLUSIVE;
	}
	po_analysis_destroy(analysis);
	return status;
}
