/*
 * main.c: profopt-analyze, the command line. Checks the input, runs ingest -> model ->
 * detect -> render in a resource-limited child process that writes every output into a
 * staging directory, and only when all of it succeeded moves the staging directory into
 * place. Errors from every level arrive here as one chain and are printed once.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/isolate.h"
#include "common/status.h"
#include "compare/compare.h"
#include "detect/detect.h"
#include "ingest/ingest.h"
#include "model/model.h"
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

/* What the isolated child needs; it writes only below staging_dir. */
struct job {
	const struct options *options; /* weak */
	const char *staging_dir;       /* weak */
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
    "  -f, --force             replace an earlier profopt report in DIR\n"
    "      --set RULE.KEY=VAL  change a detection rule (see docs/rules.md); repeatable\n"
    "      --config FILE       read RULE.KEY=VALUE lines from FILE\n"
    "      --timeline-steps A:B  keep the timelines of steps A to B (step numbers)\n"
    "      --salvage           analyse the readable part of a damaged trace; the report\n"
    "                          is marked partial\n"
    "      --json-only         write summary.json and timeline.json only\n"
    "  -j, --jobs N            decode with N threads (default: one per CPU, at most 4)\n"
    "      --baseline OLD      compare with an earlier run: a trace directory or the\n"
    "                          summary.json of an earlier report\n"
    "      --fail-if EXPR      with --baseline: exit with status 6 when EXPR is true, e.g.\n"
    "                          steps.p50_ms>+10%%, breakdown.data_wait_ms>+2, findings.new>0;\n"
    "                          a change counts only when it is beyond run-to-run noise\n"
    "  -q, --quiet             print nothing on success\n"
    "  -h, --help              show this help\n"
    "  -V, --version           show the version\n"
    "\n"
    "Outputs (in DIR): summary.json, timeline.json (Perfetto / chrome://tracing),\n"
    "index.html, report.pdf, pipeline.svg, charts/*.svg. They are written to a temporary\n"
    "directory beside DIR and moved into place only when all of them succeeded.\n"
    "\n"
    "Exit status:\n"
    "  0    success\n"
    "  1    internal error or out of memory\n"
    "  2    bad command line, or DIR is unusable (inside the trace, not a report)\n"
    "  3    the input is not a usable profopt trace (missing, not a trace, empty,\n"
    "       still being recorded, foreign files, no profopt events)\n"
    "  4    the trace could not be decoded (malformed, or the decoder crashed, hung or\n"
    "       ran out of memory; it runs in a separate process with limits)\n"
    "  5    an output could not be written\n"
    "  6    a --fail-if condition is true (the report is written)\n"
    "  130  interrupted; no output was left behind\n";

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

enum {
	OPT_SET = 1000,
	OPT_CONFIG,
	OPT_TIMELINE_STEPS,
	OPT_SALVAGE,
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
			status = po_rules_load(&options->rules, optarg, err);
			break;
		case OPT_TIMELINE_STEPS:
			status = parse_step_range(optarg, options, err);
			break;
		case OPT_SALVAGE:
			options->salvage = true;
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

static bool directory_is_empty(const char *path)
{
	DIR *dir = opendir(path);
	struct dirent *entry;
	bool empty = true;

	if (!dir)
		return false;
	while (empty && (entry = readdir(dir)))
		empty = strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0;
	closedir(dir);
	return empty;
}

/* OUT_DIR must not be inside the trace, and may only replace an earlier report. */
static enum po_status check_output(const struct options *options, struct po_error *err)
{
	char trace_real[PATH_MAX], out_real[PATH_MAX], summary[PATH_MAX];
	struct stat st;

	if (!realpath(options->trace_dir, trace_real) || !resolve_path(options->out_dir, out_real))
		return PO_STATUS_OK; /* the input check names the missing path */
	if (path_is_within(out_real, trace_real) || path_is_within(trace_real, out_real)) {
		po_error_set(err,
			     "the output directory %s overlaps the trace directory %s; "
			     "choose another -o",
			     options->out_dir, options->trace_dir);
		return PO_STATUS_USAGE;
	}
	if (stat(options->out_dir, &st) != 0)
		return PO_STATUS_OK;
	if (!S_ISDIR(st.st_mode)) {
		po_error_set(err, "the output path %s exists and is not a directory",
			     options->out_dir);
		return PO_STATUS_USAGE;
	}
	snprintf(summary, sizeof(summary), "%s/summary.json", options->out_dir);
	if (access(summary, F_OK) == 0) {
		if (options->force)
			return PO_STATUS_OK;
		po_error_set(err, "%s holds an earlier report; pass --force to replace it",
			     options->out_dir);
		return PO_STATUS_USAGE;
	}
	if (!directory_is_empty(options->out_dir)) {
		po_error_set(err,
			     "%s is not empty and holds no profopt report; "
			     "choose another -o",
			     options->out_dir);
		return PO_STATUS_USAGE;
	}
	return PO_STATUS_OK;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

static void remove_tree(const char *path)
{
	nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* mkdir -p: creates dir and its missing ancestors. */
static int make_directories(const char *dir)
{
	char path[PATH_MAX];

	if ((size_t)snprintf(path, sizeof(path), "%s", dir) >= sizeof(path))
		return -1;
	for (char *slash = strchr(path + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if (mkdir(path, 0755) != 0 && errno != EEXIST)
			return -1;
		*slash = '/';
	}
	return mkdir(path, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

/* A staging directory beside out_dir, on the same file system, so rename() works. */
static enum po_status create_staging(const char *out_dir, char **staging, struct po_error *err)
{
	char *copy = strdup(out_dir);
	char *copy2 = strdup(out_dir);
	enum po_status status = PO_STATUS_OK;

	if (copy && make_directories(dirname(copy)) != 0) {
		po_error_set(err, "Failed to create the parent directories of %s: %s", out_dir,
			     strerror(errno));
		free(copy);
		free(copy2);
		return PO_STATUS_OUTPUT;
	}
	free(copy);
	copy = strdup(out_dir);
	if (!copy || !copy2 ||
	    asprintf(staging, "%s/.%s.profopt-XXXXXX", dirname(copy), basename(copy2)) < 0) {
		po_error_set(err, "out of memory");
		status = PO_STATUS_NOMEM;
		*staging = NULL;
	} else if (!mkdtemp(*staging)) {
		po_error_set(err, "Failed to create a temporary directory beside %s: %s", out_dir,
			     strerror(errno));
		free(*staging);
		*staging = NULL;
		status = PO_STATUS_OUTPUT;
	}
	free(copy);
	free(copy2);
	return status;
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

/* What the decoder dropped or left out goes into the trace-quality warnings. */
static enum po_status add_ingest_warnings(struct po_analysis *analysis,
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
	if (status == PO_STATUS_OK && stats->no_clock_events > 0) {
		snprintf(text, sizeof(text), "%lld events had no timestamp and were skipped",
			 (long long)stats->no_clock_events);
		status = po_analysis_add_warning(analysis, "events-without-time", text);
	}
	if (status == PO_STATUS_OK && stats->skipped_traces > 0) {
		snprintf(text, sizeof(text), "--salvage left out %lld damaged trace(s): %s",
			 (long long)stats->skipped_traces, stats->skipped_note);
		status = po_analysis_add_warning(analysis, "skipped-traces", text);
	}
	return status;
}

/* Decodes one trace and runs the model and the detectors on it. */
static enum po_status analyze_trace(const struct options *options, const char *trace_dir,
				    struct po_analysis **out, struct po_error *err)
{
	struct po_ingest_options ingest_options = {.salvage = options->salvage,
						   .decode_threads = options->decode_threads};
	struct po_ingest_stats stats = {0};
	struct po_model_config config;
	struct po_model *model = NULL;
	struct feed feed;
	enum po_status status;

	*out = NULL;
	init_model_config(options, &config);
	status = po_model_create(&config, &model, err);
	if (status != PO_STATUS_OK)
		return status;
	feed.model = model;
	status = po_ingest_run(trace_dir, &ingest_options, feed_event, &feed, &stats, err);
	if (status == PO_STATUS_OK) {
		po_isolate_progress("analysing", trace_dir);
		status = po_model_finish(model, out, err);
		if (status != PO_STATUS_OK)
			po_error_prepend(err, "%s", trace_dir);
	}
	po_model_destroy(model);
	if (status != PO_STATUS_OK)
		return status;
	(*out)->quality.partial = (*out)->quality.partial || stats.partial;
	status = add_ingest_warnings(*out, &stats);
	if (status != PO_STATUS_OK) {
		po_error_set(err, "out of memory");
		return status;
	}
	return po_detect_run(*out, &options->rules, err);
}

/* The baseline as a digest: from an earlier summary.json, or by analysing its trace. */
static enum po_status baseline_digest(const struct options *options, struct po_digest **out,
				      struct po_error *err)
{
	struct po_analysis *old_analysis = NULL;
	struct stat st;
	enum po_status status;

	if (stat(options->baseline, &st) == 0 && S_ISREG(st.st_mode))
		return po_digest_from_summary(options->baseline, out, err);
	po_isolate_progress("decoding the baseline", options->baseline);
	status = analyze_trace(options, options->baseline, &old_analysis, err);
	if (status == PO_STATUS_OK)
		status = po_digest_from_analysis(old_analysis, options->baseline, out, err);
	else
		po_error_prepend(err, "Failed to analyse the baseline");
	po_analysis_destroy(old_analysis);
	return status;
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

static enum po_status compare_with_baseline(const struct options *options,
					    struct po_analysis *analysis, struct po_error *err)
{
	struct po_digest *old_run = NULL, *new_run = NULL;
	struct po_compare_config config;
	struct po_comparison *comparison = NULL;
	enum po_status status;

	po_compare_config_init(&config);
	status = baseline_digest(options, &old_run, err);
	if (status == PO_STATUS_OK)
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
	po_digest_destroy(old_run);
	po_digest_destroy(new_run);
	return status;
}

/* Runs in the isolated child: decode, model, detect, render into the staging directory. */
static enum po_status analyze(void *ctx, FILE *output, struct po_error *err)
{
	const struct job *job = ctx;
	const struct options *options = job->options;
	struct po_analysis *analysis = NULL;
	enum po_status status;

	status = analyze_trace(options, options->trace_dir, &analysis, err);
	if (status == PO_STATUS_OK && options->baseline)
		status = compare_with_baseline(options, analysis, err);
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
 * Moves the staging directory to out_dir. An earlier report there is first moved aside
 * and removed only after the new one is in place, so a failure leaves the old one intact.
 */
static enum po_status commit_output(const char *staging, const char *out_dir, struct po_error *err)
{
	char *aside = NULL;
	enum po_status status = PO_STATUS_OK;
	sigset_t block, previous;

	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &previous);
	if (access(out_dir, F_OK) == 0) {
		if (asprintf(&aside, "%s.profopt-old", staging) < 0 ||
		    rename(out_dir, aside) != 0) {
			po_error_set(err, "Failed to move the earlier report %s aside: %s", out_dir,
				     strerror(errno));
			status = PO_STATUS_OUTPUT;
			goto end;
		}
	}
	if (rename(staging, out_dir) != 0) {
		po_error_set(err, "Failed to move the report into %s: %s", out_dir,
			     strerror(errno));
		status = PO_STATUS_OUTPUT;
		if (aside)
			rename(aside, out_dir);
		goto end;
	}
	chmod(out_dir, 0755);
	if (aside)
		remove_tree(aside);
end:
	free(aside);
	sigprocmask(SIG_SETMASK, &previous, NULL);
	return status;
}

/* The baseline is an earlier summary.json or a trace directory that passes the input checks. */
static enum po_status check_baseline(const char *baseline, struct po_ingest_watch **watch,
				     struct po_error *err)
{
	struct stat st;
	enum po_status status;

	if (stat(baseline, &st) != 0) {
		po_error_set(err, "the baseline %s cannot be read: %s", baseline, strerror(errno));
		return PO_STATUS_INPUT;
	}
	if (S_ISREG(st.st_mode))
		return PO_STATUS_OK;
	status = po_ingest_check_start(baseline, watch, err);
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

/* Set by SIGINT or SIGTERM once a staging directory may exist: run() then removes it. */
static volatile sig_atomic_t interrupted;

static void on_interrupt(int signo)
{
	(void)signo;
	interrupted = 1;
}

static void catch_interrupts(void)
{
	struct sigaction action;

	memset(&action, 0, sizeof(action));
	action.sa_handler = on_interrupt;
	sigemptyset(&action.sa_mask);
	sigaction(SIGINT, &action, NULL);
	sigaction(SIGTERM, &action, NULL);
}

static enum po_status run(struct options *options, struct po_error *err)
{
	struct po_isolate_limits limits;
	struct job job = {.options = options};
	struct po_ingest_watch *watch = NULL, *baseline_watch = NULL; /* owned */
	char *staging = NULL;
	char *text = NULL;
	enum po_status status;

	status = po_ingest_check_start(options->trace_dir, &watch, err);
	if (status == PO_STATUS_OK)
		status = check_output(options, err);
	if (status == PO_STATUS_OK && options->baseline)
		status = check_baseline(options->baseline, &baseline_watch, err);
	if (status == PO_STATUS_OK) {
		catch_interrupts();
		status = create_staging(options->out_dir, &staging, err);
	}
	if (status != PO_STATUS_OK) {
		po_ingest_watch_destroy(watch);
		po_ingest_watch_destroy(baseline_watch);
		return status;
	}
	job.staging_dir = staging;
	po_isolate_limits_init(&limits);
	if (!interrupted)
		status = po_isolate_run(analyze, &job, &limits, &text, err);
	if (interrupted && status == PO_STATUS_OK) {
		po_error_set(err, "interrupted");
		status = PO_STATUS_INTERRUPTED;
	}
	if (status != PO_STATUS_INTERRUPTED) {
		/* A trace still being written explains a decoding failure too: say so instead. */
		struct po_error settle_err = {{0}};
		enum po_status settled = check_inputs_settled(watch, baseline_watch, &settle_err);

		if (settled != PO_STATUS_OK) {
			*err = settle_err;
			status = settled;
		}
	} else {
		po_ingest_watch_destroy(watch);
		po_ingest_watch_destroy(baseline_watch);
	}
	if (status == PO_STATUS_OK || status == PO_STATUS_GATE) {
		/* A tripped gate still leaves its report, to show what tripped it. */
		struct po_error commit_err = {{0}};
		enum po_status committed = commit_output(staging, options->out_dir, &commit_err);

		if (committed != PO_STATUS_OK) {
			*err = commit_err;
			status = committed;
		}
	}
	if (status != PO_STATUS_OK && status != PO_STATUS_GATE)
		remove_tree(staging);
	else if (text && !options->quiet)
		printf("%sReport: %s\n", text, options->out_dir);
	free(text);
	free(staging);
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
