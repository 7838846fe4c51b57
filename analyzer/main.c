/*
 * main.c: profopt-analyze, the command line. Checks the input, runs ingest -> model ->
 * detect -> render in a resource-limited child process that writes every output into a
 * staging directory, and only when all of it succeeded moves the staging directory into
 * place (common/outdir.h). Errors from every level arrive here as one chain and are printed
 * once.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/isolate.h"
#include "common/outdir.h"
#include "common/status.h"
#include "compare/compare.h"
#include "detect/detect.h"
#include "ingest/ingest.h"
#include "model/model.h"
#include "symbols/symbols.h"
#include "../render/json/render_json.h"
#include "../render/report/render_report.h"

#ifndef PROFOPT_VERSION
#define PROFOPT_VERSION "0.0.0"
#endif

struct options {
	const char *trace_dir; /* weak: argv */
	const char *out_dir;   /* weak: argv, or owned default_out_dir */
	char *default_out_dir; /* owned */
	bool force;
	bool salvage;
	bool all_processes; /* --all-processes: do not restrict to the recorded command */
	bool quiet;
	bool json_only;
	int decode_threads; /* 0: one per CPU, at most 4 */
	int64_t timeline_first_step;
	int64_t timeline_last_step;
	const char *baseline;  /* weak: argv; a trace directory or a summary.json */
	const char *gates[16]; /* weak: argv; --fail-if expressions */
	size_t gate_count;
	struct po_rules rules;
};

/* Trace directories the input check left out (--salvage), for the result's warnings. */
struct skipped_traces {
	const char *note; /* weak: belongs to the watch */
	int64_t count;
};

/* What the isolated child needs; it writes only below staging_dir. */
struct job {
	const struct options *options;	       /* weak */
	const char *staging_dir;	       /* weak */
	struct skipped_traces checked_skipped; /* of the trace, not of the baseline */
};

static const char usage_text[] =
    "Usage: profopt-analyze [OPTIONS] TRACE_DIR\n"
    "\n"
    "Reads an LTTng trace of a program instrumented with profopt (recorded with\n"
    "profopt-record, or any lttng session that enabled the profopt events with the vpid,\n"
    "vtid and procname contexts), rebuilds every training step across the main process\n"
    "and its data-loader workers, diagnoses stalls, GPU idle gaps and memory growth, and\n"
    "writes a report.\n"
    "\n"
    "Options:\n"
    "  -o, --output DIR        where to write the report (default: TRACE_DIR-report);\n"
    "                          it must not lie inside TRACE_DIR\n"
    "  -f, --force             replace an earlier profopt report in DIR (only the files\n"
    "                          its .profopt-report manifest lists)\n"
    "      --set RULE.KEY=VAL  change a detection rule (see docs/rules.md); repeatable\n"
    "      --config FILE       read RULE.KEY=VALUE lines from FILE\n"
    "      --timeline-steps A:B  keep the timelines of steps A to B (step numbers)\n"
    "      --salvage           analyse the readable part of a damaged trace; the report\n"
    "                          is marked partial\n"
    "      --all-processes     analyse every process in the trace, not only the recorded\n"
    "                          command's (see profopt-recording.txt)\n"
    "      --json-only         write summary.json and timeline.json only\n"
    "  -j, --jobs N            decode with N threads (default: one per CPU, at most 4)\n"
    "      --baseline OLD      compare with an earlier run: a trace directory or the\n"
    "                          summary.json of an earlier report\n"
    "      --fail-if EXPR      with --baseline: exit with status 6 when EXPR is true, e.g.\n"
    "                          steps.p50_ms>+10%, breakdown.data_wait_ms>+2, findings.new>0;\n"
    "                          a change counts only when it is beyond run-to-run noise\n"
    "  -q, --quiet             print nothing on success\n"
    "  -h, --help              show this help\n"
    "  -V, --version           show the version\n"
    "\n"
    "Outputs (in DIR): summary.json, timeline.json (Perfetto / chrome://tracing),\n"
    "index.html, report.pdf, pipeline.svg, charts/*.svg, and .profopt-report, the list of\n"
    "the files written (--force replaces only those). They are written to a temporary\n"
    "directory beside DIR and moved into place only when all of them succeeded.\n"
    "\n"
    "Exit status:\n"
    "  0    success\n"
    "  1    internal error or out of memory\n"
    "  2    bad command line, or DIR is unusable (inside the trace, not empty and no\n"
    "       profopt report, an earlier report without --force), or --config FILE is\n"
    "       not a readable regular file\n"
    "  3    the input is not a usable profopt trace (missing, not a trace, empty,\n"
    "       still being recorded, foreign files, a file that is not a regular file, a\n"
    "       process directory without readable metadata, no profopt events), or the\n"
    "       --baseline path is missing or neither a file nor a usable trace\n"
    "  4    the trace could not be decoded (malformed, or the decoder crashed, hung or\n"
    "       ran out of memory; it runs in a separate process with limits)\n"
    "  5    an output could not be written\n"
    "  6    a --fail-if condition is true (the report is written)\n"
    "  7    the --baseline could not be used: not a profopt summary.json, a number in\n"
    "       it not finite or out of range, or its trace could not be analysed\n"
    "  130  interrupted (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGALRM, SIGUSR1,\n"
    "       SIGUSR2); no output was left behind\n";

static enum po_status parse_step_range(const char *text, struct options *options,
				       struct po_error *err)
{
	const char *original = text;
	char *end;
	long long first, last;

	errno = 0;
	first = strtoll(text, &end, 10);
	if (errno || end == text || *end != ':')
		goto error;
	text = end + 1;
	last = strtoll(text, &end, 10);
	if (errno || end == text || *end != '\0' || first < 0 || last < first)
		goto error;
	options->timeline_first_step = first;
	options->timeline_last_step = last;
	return PO_STATUS_OK;
error:
	po_error_set(err, "--timeline-steps wants A:B with 0 <= A <= B, got \"%s\"", original);
	return PO_STATUS_USAGE;
}

static enum po_status add_gate(struct options *options, const char *expression,
			       struct po_error *err)
{
	size_t capacity = sizeof(options->gates) / sizeof(options->gates[0]);

	if (options->gate_count == capacity) {
		po_error_set(err, "at most %zu --fail-if conditions", capacity);
		return PO_STATUS_USAGE;
	}
	options->gates[options->gate_count++] = expression;
	return po_gate_check(expression, err);
}

/* A --config file larger than this is not a rules file. */
#define PO_CONFIG_MAX_BYTES (1024 * 1024)

/*
 * --config FILE must be a regular file of a rules file's size, checked without blocking:
 * a FIFO, a terminal or a device would make reading it wait, or never end.
 */
static enum po_status check_config_file(const char *path, struct po_error *err)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	enum po_status status = PO_STATUS_OK;
	struct stat st;

	if (fd < 0 || fstat(fd, &st) != 0) {
		po_error_set(err, "--config %s: %s", path, strerror(errno));
		status = PO_STATUS_USAGE;
	} else if (!S_ISREG(st.st_mode)) {
		po_error_set(err, "--config %s: %s, not a regular file", path,
			     po_file_type_text(st.st_mode));
		status = PO_STATUS_USAGE;
	} else if (st.st_size > PO_CONFIG_MAX_BYTES) {
		po_error_set(err, "--config %s: %lld bytes, more than a rules file may hold (%d)",
			     path, (long long)st.st_size, PO_CONFIG_MAX_BYTES);
		status = PO_STATUS_USAGE;
	}
	if (fd >= 0)
		close(fd);
	return status;
}

enum {
	OPT_SET = 1000,
	OPT_CONFIG,
	OPT_TIMELINE_STEPS,
	OPT_SALVAGE,
	OPT_ALL_PROCESSES,
	OPT_JSON_ONLY,
	OPT_BASELINE,
	OPT_FAIL_IF,
};

static enum po_status parse_jobs(const char *text, struct options *options, struct po_error *err)
{
	char *end;
	long jobs;

	errno = 0;
	jobs = strtol(text, &end, 10);
	if (errno || end == text || *end != '\0' || jobs < 1 || jobs > 4) {
		po_error_set(err, "--jobs wants a number from 1 to 4, got \"%s\"", text);
		return PO_STATUS_USAGE;
	}
	options->decode_threads = (int)jobs;
	return PO_STATUS_OK;
}

static const struct option long_options[] = {
    {"output", required_argument, NULL, 'o'},
    {"force", no_argument, NULL, 'f'},
    {"set", required_argument, NULL, OPT_SET},
    {"config", required_argument, NULL, OPT_CONFIG},
    {"timeline-steps", required_argument, NULL, OPT_TIMELINE_STEPS},
    {"salvage", no_argument, NULL, OPT_SALVAGE},
    {"all-processes", no_argument, NULL, OPT_ALL_PROCESSES},
    {"json-only", no_argument, NULL, OPT_JSON_ONLY},
    {"baseline", required_argument, NULL, OPT_BASELINE},
    {"fail-if", required_argument, NULL, OPT_FAIL_IF},
    {"jobs", required_argument, NULL, 'j'},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
};

/* Returns OK to go on, or a status; *exit_now is set for --help and --version. */
static enum po_status parse_options(int argc, char **argv, struct options *options, bool *exit_now,
				    struct po_error *err)
{
	enum po_status status = PO_STATUS_OK;
	int opt;

	opterr = 0; /* one message, ours */
	while (status == PO_STATUS_OK &&
	       (opt = getopt_long(argc, argv, "o:fj:qhV", long_options, NULL)) != -1) {
		switch (opt) {
		case 'o':
			if (!*optarg) {
				po_error_set(err, "-o needs a directory, got an empty string");
				return PO_STATUS_USAGE;
			}
			options->out_dir = optarg;
			break;
		case 'f':
			options->force = true;
			break;
		case 'q':
			options->quiet = true;
			break;
		case 'j':
			status = parse_jobs(optarg, options, err);
			break;
		case OPT_SET:
			status = po_rules_set(&options->rules, optarg, err);
			break;
		case OPT_CONFIG:
			status = check_config_file(optarg, err);
			if (status == PO_STATUS_OK)
				status = po_rules_load(&options->rules, optarg, err);
			break;
		case OPT_TIMELINE_STEPS:
			status = parse_step_range(optarg, options, err);
			break;
		case OPT_SALVAGE:
			options->salvage = true;
			break;
		case OPT_ALL_PROCESSES:
			options->all_processes = true;
			break;
		case OPT_JSON_ONLY:
			options->json_only = true;
			break;
		case OPT_BASELINE:
			options->baseline = optarg;
			break;
		case OPT_FAIL_IF:
			status = add_gate(options, optarg, err);
			break;
		case 'h':
			fputs(usage_text, stdout);
			*exit_now = true;
			return PO_STATUS_OK;
		case 'V':
			printf("profopt-analyze %s\n", PROFOPT_VERSION);
			*exit_now = true;
			return PO_STATUS_OK;
		default:
			if (optopt && strchr("o", optopt))
				po_error_set(err,
					     "-%c needs an argument (see profopt-analyze --help)",
					     optopt);
			else
				po_error_set(err,
					     "unknown option or missing argument: %s "
					     "(see profopt-analyze --help)",
					     argv[optind - 1]);
			return PO_STATUS_USAGE;
		}
	}
	if (status != PO_STATUS_OK)
		return status == PO_STATUS_INPUT ? PO_STATUS_USAGE : status;
	if (optind != argc - 1) {
		po_error_set(err, optind >= argc
				      ? "missing TRACE_DIR (see profopt-analyze --help)"
				      : "too many arguments (see profopt-analyze --help)");
		return PO_STATUS_USAGE;
	}
	options->trace_dir = argv[optind];
	if (options->gate_count && !options->baseline) {
		po_error_set(err, "--fail-if needs --baseline");
		return PO_STATUS_USAGE;
	}
	return PO_STATUS_OK;
}

/* The default output directory: TRACE_DIR-report, beside the trace. */
static enum po_status default_output(struct options *options, struct po_error *err)
{
	size_t len = strlen(options->trace_dir);

	while (len > 1 && options->trace_dir[len - 1] == '/')
		len--;
	if (asprintf(&options->default_out_dir, "%.*s-report", (int)len, options->trace_dir) < 0) {
		po_error_set(err, "out of memory");
		return PO_STATUS_NOMEM;
	}
	options->out_dir = options->default_out_dir;
	return PO_STATUS_OK;
}

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

/* OUT_DIR must not overlap the trace; what it may hold is outdir.c's to check. */
static enum po_status check_output(const struct options *options, struct po_error *err)
{
	char trace_real[PATH_MAX], out_real[PATH_MAX];

	if (!realpath(options->trace_dir, trace_real) || !resolve_path(options->out_dir, out_real))
		return PO_STATUS_OK; /* the input check names the missing path */
	if (path_is_within(out_real, trace_real) || path_is_within(trace_real, out_real)) {
		po_error_set(err,
			     "the output directory %s overlaps the trace directory %s; "
			     "choose another -o",
			     options->out_dir, options->trace_dir);
		return PO_STATUS_USAGE;
	}
	return PO_STATUS_OK;
}

static enum po_status make_path(const char *dir, const char *name, char *path, size_t size,
				struct po_error *err)
{
	if ((size_t)snprintf(path, size, "%s/%s", dir, name) >= size) {
		po_error_set(err, "path too long: %s/%s", dir, name);
		return PO_STATUS_OUTPUT;
	}
	return PO_STATUS_OK;
}

static enum po_status render_all(const struct po_analysis *analysis, const struct job *job,
				 struct po_error *err)
{
	char path[PATH_MAX];
	enum po_status status;

	po_isolate_progress("writing summary.json", job->staging_dir);
	status = make_path(job->staging_dir, "summary.json", path, sizeof(path), err);
	if (status == PO_STATUS_OK)
		status = po_render_summary_json(analysis, path, err);
	if (status != PO_STATUS_OK)
		return status;
	po_isolate_progress("writing timeline.json", job->staging_dir);
	status = make_path(job->staging_dir, "timeline.json", path, sizeof(path), err);
	if (status == PO_STATUS_OK)
		status = po_render_timeline_json(analysis, path, err);
	if (status != PO_STATUS_OK || job->options->json_only)
		return status;
	po_isolate_progress("writing the report", job->staging_dir);
	return po_render_report(analysis, job->staging_dir, err);
}

struct feed {
	struct po_model *model; /* weak */
};

static enum po_status feed_event(void *ctx, const struct po_event *event)
{
	struct feed *feed = ctx;

	return po_model_consume(feed->model, event);
}

static void init_model_config(const struct options *options, struct po_model_config *config)
{
	po_model_config_init(config);
	/* Clamped: a huge --set value must not overflow the nanosecond threshold. */
	config->min_gap_ns = options->rules.gpu_idle_min_gap_ms >= 9e12
				 ? INT64_MAX
				 : (int64_t)(options->rules.gpu_idle_min_gap_ms * 1e6);
	config->timeline_first_step = options->timeline_first_step;
	config->timeline_last_step = options->timeline_last_step;
}

/* The traces left out by the input check and by the decoder, in one warning. */
static enum po_status add_skipped_warning(struct po_analysis *analysis,
					  const struct skipped_traces *checked,
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
	analysis->quality.partial = true;
	return po_analysis_add_warning(analysis, "skipped-traces", text);
}

/* What the decoder dropped or left out goes into the trace-quality warnings. */
static enum po_status add_ingest_warnings(struct po_analysis *analysis,
					  const struct skipped_traces *checked,
					  const struct po_ingest_stats *stats)
{
	char text[PO_ERROR_MAX + 64];
	enum po_status status = PO_STATUS_OK;

	if (stats->malformed_events > 0) {
		snprintf(text, sizeof(text),
			 "%lld profopt events had out-of-range values or "
			 "missing fields and were skipped",
			 (long long)stats->malformed_events);
		status = po_analysis_add_warning(analysis, "malformed-events", text);
	}
	if (status == PO_STATUS_OK && stats->unknown_profopt_events > 0) {
		snprintf(text, sizeof(text),
			 "%lld events of %.100s and other classes named like profopt events but "
			 "unknown to this analyzer were ignored: the trace's metadata may be "
			 "damaged, or another profopt version recorded it",
			 (long long)stats->unknown_profopt_events, stats->unknown_profopt_name);
		status = po_analysis_add_warning(analysis, "unknown-profopt-events", text);
	}
	if (status == PO_STATUS_OK && stats->no_clock_events > 0) {
		snprintf(text, sizeof(text), "%lld events had no timestamp and were skipped",
			 (long long)stats->no_clock_events);
		status = po_analysis_add_warning(analysis, "events-without-time", text);
	}
	if (status == PO_STATUS_OK)
		status = add_skipped_warning(analysis, checked, stats);
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
	for (size_t i = 0; i < files->repair.count && status == PO_STATUS_OK; i++)
		status = po_model_note_missing(model, PO_MISSING_STREAM_DAMAGED,
					       files->repair.streams[i].path,
					       files->repair.streams[i].begin_ns,
					       survey->end_ns > files->repair.streams[i].begin_ns
						   ? survey->end_ns
						   : files->repair.streams[i].begin_ns);
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
static enum po_status add_file_warnings(struct po_analysis *analysis,
					const struct trace_files *files, const char *trace_dir)
{
	const struct po_stream_survey *survey = &files->survey;
	enum po_status status = PO_STATUS_OK;

	for (size_t i = 0; i < survey->trace_count && status == PO_STATUS_OK; i++) {
		if (survey->duplicate_of[i] < 0)
			continue;
		status = po_analysis_add_warning(
		    analysis, "duplicate-traces",
		    po_arena_printf(
			analysis->arena,
			"%zu trace directories are copies of another (the same trace "
			"UUID) and were left out, so that no event counts twice: %s "
			"copies %s",
			survey->duplicate_count, relative_path(survey->trace_paths[i], trace_dir),
			relative_path(survey->trace_paths[survey->duplicate_of[i]], trace_dir)));
		break;
	}
	if (status == PO_STATUS_OK && files->repair.count) {
		const struct po_repaired_stream *first = &files->repair.streams[0];

		status = po_analysis_add_warning(
		    analysis, "salvaged-streams",
		    po_arena_printf(analysis->arena,
				    "--salvage kept the readable part of %zu damaged stream(s) "
				    "instead of leaving their process out: %s keeps %zu of %zu "
				    "packets; the rest is damaged and is a missing window",
				    files->repair.count, first->path, first->kept_packets,
				    first->packets));
	}
	if (status == PO_STATUS_OK && files->recording_err.message[0])
		status = po_analysis_add_warning(
		    analysis, "recording-file",
		    po_arena_printf(analysis->arena,
				    "%s; processes of other programs that recorded at the same "
				    "time could not be told from the command's",
				    files->recording_err.message));
	return status;
}

/*
 * Runs the model over the trace's events; the result in *out. The events come from
 * files->repair's shadow directory when --salvage repaired streams.
 */
static enum po_status model_trace(const struct options *options, const char *trace_dir,
				  const struct trace_files *files, struct po_ingest_stats *stats,
				  struct po_analysis **out, struct po_error *err)
{
	struct po_ingest_options ingest_options = {.salvage = options->salvage,
						   .decode_threads = options->decode_threads,
						   .skip_traces = files->skip,
						   .skip_trace_count = files->skip_count};
	struct po_model_config config;
	struct po_model *model = NULL;
	struct feed feed;
	enum po_status status;

	init_model_config(options, &config);
	if (files->recording.present && !options->all_processes) {
		snprintf(config.recording_id, sizeof(config.recording_id), "%s",
			 files->recording.id);
		config.command_pid = files->recording.command_pid;
	}
	status = po_model_create(&config, &model, err);
	if (status != PO_STATUS_OK)
		return status;
	feed.model = model;
	status = po_ingest_run(files->repair.shadow_root[0] ? files->repair.shadow_root : trace_dir,
			       &ingest_options, feed_event, &feed, stats, err);
	if (status == PO_STATUS_OK && note_missing(model, files) != PO_STATUS_OK) {
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
	return status;
}

/*
 * --salvage left whole traces out: repairs them stream by stream and packet by packet, and
 * when that kept anything, analyses again from the repaired trace (*out replaced).
 */
static enum po_status salvage_streams(const struct options *options, const char *trace_dir,
				      struct trace_files *files, struct po_ingest_stats *stats,
				      struct po_analysis **out, struct po_error *err)
{
	enum po_status status;

	po_isolate_progress("decoding", trace_dir);
	status = po_ingest_repair(trace_dir, files->skip, files->skip_count, &files->repair, err);
	if (status != PO_STATUS_OK || !files->repair.count)
		return status;
	po_analysis_destroy(*out);
	*out = NULL;
	return model_trace(options, trace_dir, files, stats, out, err);
}

/*
 * Decodes one trace and runs the model and the detectors on it. checked: what the input
 * check left out of it (--salvage), NULL for none.
 */
static enum po_status analyze_trace(const struct options *options, const char *trace_dir,
				    const struct skipped_traces *checked, struct po_analysis **out,
				    struct po_error *err)
{
	struct po_ingest_stats stats = {0};
	struct trace_files files;
	enum po_status status;

	*out = NULL;
	status = read_trace_files(trace_dir, &files, err);
	if (status == PO_STATUS_OK)
		status = model_trace(options, trace_dir, &files, &stats, out, err);
	if (status == PO_STATUS_OK && options->salvage && stats.skipped_traces > 0)
		status = salvage_streams(options, trace_dir, &files, &stats, out, err);
	if (status == PO_STATUS_OK) {
		(*out)->quality.partial = (*out)->quality.partial || stats.partial;
		status = add_ingest_warnings(*out, checked, &stats);
		if (status == PO_STATUS_OK)
			status = add_file_warnings(*out, &files, trace_dir);
		if (status != PO_STATUS_OK)
			po_error_set(err, "out of memory");
	}
	trace_files_fini(&files);
	if (status != PO_STATUS_OK)
		return status;
	status = po_symbols_resolve(*out, err);
	if (status != PO_STATUS_OK)
		return status;
	return po_detect_run(*out, &options->rules, err);
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
static enum po_status baseline_digest(const struct options *options, struct po_digest **out,
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
static enum po_status evaluate_gates(const struct options *options, struct po_analysis *analysis,
				     struct po_comparison *comparison, struct po_error *err)
{
	comparison->gates_tripped =
	    po_arena_alloc(analysis->arena, (options->gate_count + 1) * sizeof(const char *));
	if (!comparison->gates_tripped)
		return PO_STATUS_NOMEM;
	for (size_t i = 0; i < options->gate_count; i++) {
		bool tripped = false;
		enum po_status status =
		    po_gate_evaluate(comparison, options->gates[i], &tripped, err);

		if (status != PO_STATUS_OK)
			return status;
		if (tripped)
			comparison->gates_tripped[comparison->gates_tripped_count++] =
			    options->gates[i];
	}
	return PO_STATUS_OK;
}

/* Compares the analysis with the baseline's digest (old_run, weak). */
static enum po_status compare_with_baseline(const struct options *options,
					    const struct po_digest *old_run,
					    struct po_analysis *analysis, struct po_error *err)
{
	struct po_digest *new_run = NULL;
	struct po_compare_config config;
	struct po_comparison *comparison = NULL;
	enum po_status status;

	po_compare_config_init(&config);
	status = po_digest_from_analysis(analysis, options->trace_dir, &new_run, err);
	if (status == PO_STATUS_OK)
		status = po_compare(old_run, new_run, &config, analysis->arena, &comparison, err);
	if (status == PO_STATUS_OK)
		status = evaluate_gates(options, analysis, comparison, err);
	if (status == PO_STATUS_OK) {
		/* The step series the comparison points to must outlive the digests. */
		status = po_comparison_take_series(comparison, analysis->arena);
		analysis->comparison = comparison;
	}
	po_digest_destroy(new_run);
	return status;
}

/* Runs in the isolated child: decode, model, detect, render into the staging directory. */
static enum po_status analyze(void *ctx, FILE *output, struct po_error *err)
{
	const struct job *job = ctx;
	const struct options *options = job->options;
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
	po_digest_destroy(old_run);
	if (status == PO_STATUS_OK)
		status = render_all(analysis, job, err);
	if (status == PO_STATUS_OK && !options->quiet) {
		po_render_text_summary(analysis, output);
		if (analysis->comparison)
			po_comparison_print(analysis->comparison, output);
	}
	if (status == PO_STATUS_OK && analysis->comparison &&
	    analysis->comparison->gates_tripped_count) {
		po_error_set(err, "--fail-if %s is true", analysis->comparison->gates_tripped[0]);
		status = PO_STATUS_GATE;
	}
	po_analysis_destroy(analysis);
	return status;
}

/*
 * The baseline is an earlier summary.json (a regular file that opens without blocking) or
 * a trace directory that passes the input checks. Like the trace's, these failures are
 * PO_STATUS_INPUT; what the baseline holds is checked by the analysis (PO_STATUS_BASELINE).
 */
static enum po_status check_baseline(const struct options *options, struct po_ingest_watch **watch,
				     struct po_error *err)
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
static enum po_status check_inputs(const struct options *options, struct po_ingest_watch **watch,
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
	if ((status != PO_STATUS_OK && status != PO_STATUS_GATE) || !po_signals_caught())
		return status;
	po_error_set(err, "interrupted by %s", po_signal_name(po_signals_caught()));
	return PO_STATUS_INTERRUPTED;
}

/* Runs the analysis into the staging directory; ends the watches (the settle check). */
static enum po_status analyze_isolated(const struct options *options, const char *staging,
				       struct po_ingest_watch *watch,
				       struct po_ingest_watch *baseline_watch, char **text,
				       struct po_error *err)
{
	struct job job = {.options = options, .staging_dir = staging};
	struct po_isolate_limits limits;
	struct po_error settle_err = {{0}};
	enum po_status status, settled;

	job.checked_skipped.note =
	    po_ingest_watch_borrow_skipped(watch, &job.checked_skipped.count);
	po_isolate_limits_init(&limits);
	status = check_signals(PO_STATUS_OK, err);
	if (status == PO_STATUS_OK)
		status = po_isolate_run(analyze, &job, &limits, text, err);
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

static enum po_status run(struct options *options, struct po_error *err)
{
	struct po_ingest_watch *watch = NULL, *baseline_watch = NULL; /* owned */
	struct po_outdir *outdir = NULL;			      /* owned */
	char *text = NULL;					      /* owned */
	enum po_status status;

	po_signals_catch();
	status = check_inputs(options, &watch, &baseline_watch, err);
	if (status == PO_STATUS_OK)
		status = po_outdir_open(options->out_dir, options->force, &outdir, err);
	if (status == PO_STATUS_OK)
		status = check_signals(po_outdir_stage(outdir, err), err);
	if (status == PO_STATUS_OK) {
		status = analyze_isolated(options, po_outdir_borrow_staging(outdir), watch,
					  baseline_watch, &text, err);
	} else {
		po_ingest_watch_destroy(watch);
		po_ingest_watch_destroy(baseline_watch);
	}
	if (status == PO_STATUS_OK || status == PO_STATUS_GATE) {
		/* A tripped gate still leaves its report, to show what tripped it. */
		struct po_error commit_err = {{0}};
		enum po_status committed = po_outdir_commit(outdir, &commit_err);

		if (committed != PO_STATUS_OK) {
			*err = commit_err;
			status = committed;
		}
	}
	if ((status == PO_STATUS_OK || status == PO_STATUS_GATE) && text && !options->quiet)
		printf("%sReport: %s\n", text, options->out_dir);
	po_outdir_destroy(outdir);
	free(text);
	po_signals_release();
	return status;
}

int main(int argc, char **argv)
{
	struct options options = {.timeline_first_step = -1, .timeline_last_step = -1};
	struct po_error err = {{0}};
	bool exit_now = false;
	enum po_status status;

	po_rules_init(&options.rules);
	status = parse_options(argc, argv, &options, &exit_now, &err);
	if (status == PO_STATUS_OK && exit_now)
		return 0;
	if (status == PO_STATUS_OK && !options.out_dir)
		status = default_output(&options, &err);
	if (status == PO_STATUS_OK)
		status = run(&options, &err);
	free(options.default_out_dir);
	if (status != PO_STATUS_OK) {
		fprintf(stderr, "profopt-analyze: %s\n",
			err.message[0] ? err.message : po_status_description(status));
		return po_status_exit_code(status);
	}
	return 0;
}
