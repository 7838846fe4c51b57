/*
 * options.c: profopt-analyze's options, from one table. Each row names an option, its short
 * letter, its argument, its --help text and the function that applies it; getopt's long
 * options, its short-option string, the dispatch and the option lines of --help are all
 * built from the rows, so an option cannot be parsed without being documented, or the
 * other way round.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compare/compare.h"
#include "options.h"

#ifndef PROFOPT_VERSION
#define PROFOPT_VERSION "0.0.0"
#endif

/* A --config file larger than this is not a rules file. */
#define PO_CONFIG_MAX_BYTES (1024 * 1024)
/* --help: option names are padded to this width, then two spaces and the text. */
#define USAGE_NAME_WIDTH 24

typedef enum po_status (*apply_fn)(struct po_cli_options *options, const char *value,
				   bool *exit_now, struct po_error *err);

struct option_row {
	const char *name;     /* the long option, without "--" */
	char letter;	      /* the short option; 0 for none */
	const char *argument; /* its argument's name in --help; NULL: takes none */
	const char *help;     /* --help's text; each '\n' starts a continuation line */
	apply_fn apply;
};

static const char usage_head[] =
    "Usage: profopt-analyze [OPTIONS] TRACE_DIR\n"
    "       profopt-analyze [OPTIONS] -o DIR TRACE_DIR TRACE_DIR...\n"
    "       profopt-analyze --live URL [OPTIONS] [TRACE_DIR]\n"
    "       profopt-analyze --partial -o DIR TRACE_DIR...\n"
    "       profopt-analyze --merge -o DIR PARTIAL...\n"
    "\n"
    "Reads an LTTng trace of a program instrumented with profopt (recorded with\n"
    "profopt-record, or any lttng session that enabled the profopt events with the vpid,\n"
    "vtid and procname contexts), rebuilds every training step across the main process\n"
    "and its data-loader workers, diagnoses stalls, GPU idle gaps and memory growth, and\n"
    "writes a report. Several TRACE_DIRs (the recordings of one job's hosts) make one\n"
    "report, as one directory holding them would. On many hosts, --partial reduces each\n"
    "host's trace to a small summary where it was recorded, and --merge makes the job's\n"
    "ranks, clocks and straggler from them. TRACE_DIR may also be a torch.profiler\n"
    "(Kineto) trace, FILE.json or FILE.json.gz, or a directory of them (docs/kineto.md).\n"
    "\n"
    "Options:\n";

static const char usage_tail[] =
    "\n"
    "Outputs (in DIR): summary.json, timeline.json (Perfetto / chrome://tracing),\n"
    "index.html, report.pdf, pipeline.svg, charts/*.svg, and .profopt-report, the list of\n"
    "the files written (--force replaces only those). They are written to a temporary\n"
    "directory beside DIR and moved into place when the analysis succeeded; an output\n"
    "that could not be written is left out (exit 5) and the others are moved into place.\n"
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
    "  5    an output could not be written; when others were, they are in DIR (the\n"
    "       message names the one that failed and its cause)\n"
    "  6    a --fail-if condition is true (the report is written)\n"
    "  7    the --baseline could not be used: not a profopt summary.json, a number in\n"
    "       it not finite or out of range, or its trace could not be analysed\n"
    "  8    no --fail-if condition is true but one cannot be judged: its change is\n"
    "       inconclusive, the runs got different shares of the CPU (the report is\n"
    "       written and says why)\n"
    "  130  interrupted (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGALRM, SIGUSR1,\n"
    "       SIGUSR2); no output was left behind\n"
    "With --live, 2 also for an --alerts FILE it refuses (a symbolic link, not a\n"
    "regular file, FIFO with a reader or /dev/null, or a mode that forbids writing),\n"
    "3 also when the relay has no such session (or it ended before a\n"
    "profopt event came), and 4 when the live stream failed (the relay could not be\n"
    "reached or went away); the windows shown until then stand.\n";

static enum po_status apply_output(struct po_cli_options *options, const char *value,
				   bool *exit_now, struct po_error *err)
{
	if (!*value) {
		po_error_set(err, "-o needs a directory, got an empty string");
		return PO_STATUS_USAGE;
	}
	options->out_dir = value;
	return PO_STATUS_OK;
}

static enum po_status apply_force(struct po_cli_options *options, const char *value, bool *exit_now,
				  struct po_error *err)
{
	options->force = true;
	return PO_STATUS_OK;
}

static enum po_status apply_set(struct po_cli_options *options, const char *value, bool *exit_now,
				struct po_error *err)
{
	return po_rules_set(&options->rules, value, err);
}

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

static enum po_status apply_config(struct po_cli_options *options, const char *value,
				   bool *exit_now, struct po_error *err)
{
	enum po_status status = check_config_file(value, err);

	return status == PO_STATUS_OK ? po_rules_load(&options->rules, value, err) : status;
}

static enum po_status apply_timeline_steps(struct po_cli_options *options, const char *value,
					   bool *exit_now, struct po_error *err)
{
	const char *text = value;
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
	po_error_set(err, "--timeline-steps wants A:B with 0 <= A <= B, got \"%s\"", value);
	return PO_STATUS_USAGE;
}

static enum po_status apply_steps_in(struct po_cli_options *options, const char *value,
				     bool *exit_now, struct po_error *err)
{
	const char *text = value;
	char *end;
	long long after, until;

	errno = 0;
	after = strtoll(text, &end, 10);
	if (errno || end == text || *end != ':')
		goto error;
	text = end + 1;
	until = strtoll(text, &end, 10);
	if (errno || end == text || *end != '\0' || until <= after)
		goto error;
	options->steps_after_ns = after;
	options->steps_until_ns = until;
	return PO_STATUS_OK;
error:
	po_error_set(err,
		     "--steps-in wants AFTER:UNTIL, trace-clock nanoseconds with AFTER < UNTIL, "
		     "got \"%s\"",
		     value);
	return PO_STATUS_USAGE;
}

static enum po_status apply_salvage(struct po_cli_options *options, const char *value,
				    bool *exit_now, struct po_error *err)
{
	options->salvage = true;
	return PO_STATUS_OK;
}

static enum po_status apply_all_processes(struct po_cli_options *options, const char *value,
					  bool *exit_now, struct po_error *err)
{
	options->all_processes = true;
	return PO_STATUS_OK;
}

static enum po_status apply_json_only(struct po_cli_options *options, const char *value,
				      bool *exit_now, struct po_error *err)
{
	options->json_only = true;
	return PO_STATUS_OK;
}

static enum po_status apply_partial(struct po_cli_options *options, const char *value,
				    bool *exit_now, struct po_error *err)
{
	options->partial = true;
	return PO_STATUS_OK;
}

static enum po_status apply_merge(struct po_cli_options *options, const char *value, bool *exit_now,
				  struct po_error *err)
{
	options->merge = true;
	return PO_STATUS_OK;
}

static enum po_status apply_jobs(struct po_cli_options *options, const char *value, bool *exit_now,
				 struct po_error *err)
{
	char *end;
	long jobs;

	errno = 0;
	jobs = strtol(value, &end, 10);
	if (errno || end == value || *end != '\0' || jobs < 1 || jobs > 4) {
		po_error_set(err, "--jobs wants a number from 1 to 4, got \"%s\"", value);
		return PO_STATUS_USAGE;
	}
	options->decode_threads = (int)jobs;
	return PO_STATUS_OK;
}

static enum po_status apply_baseline(struct po_cli_options *options, const char *value,
				     bool *exit_now, struct po_error *err)
{
	options->baseline = value;
	return PO_STATUS_OK;
}

static enum po_status apply_fail_if(struct po_cli_options *options, const char *value,
				    bool *exit_now, struct po_error *err)
{
	if (options->gate_count == PO_CLI_MAX_GATES) {
		po_error_set(err, "at most %d --fail-if conditions", PO_CLI_MAX_GATES);
		return PO_STATUS_USAGE;
	}
	options->gates[options->gate_count++] = value;
	return po_gate_check(value, err);
}

static enum po_status apply_live(struct po_cli_options *options, const char *value, bool *exit_now,
				 struct po_error *err)
{
	if (strncmp(value, "net://", 6) != 0 && strncmp(value, "net4://", 7) != 0 &&
	    strncmp(value, "net6://", 7) != 0) {
		po_error_set(err,
			     "--live wants a relay URL, net://HOST[:PORT]/host/HOSTNAME/SESSION, "
			     "got \"%s\"",
			     value);
		return PO_STATUS_USAGE;
	}
	options->live_url = value;
	return PO_STATUS_OK;
}

static enum po_status apply_every(struct po_cli_options *options, const char *value, bool *exit_now,
				  struct po_error *err)
{
	char *end;
	double seconds;

	errno = 0;
	seconds = strtod(value, &end);
	if (errno || end == value || *end != '\0' || !(seconds >= 0.1 && seconds <= 3600)) {
		po_error_set(err, "--every wants seconds from 0.1 to 3600, got \"%s\"", value);
		return PO_STATUS_USAGE;
	}
	options->every_s = seconds;
	return PO_STATUS_OK;
}

static enum po_status apply_alerts(struct po_cli_options *options, const char *value,
				   bool *exit_now, struct po_error *err)
{
	if (!*value) {
		po_error_set(err, "--alerts needs a file, got an empty string");
		return PO_STATUS_USAGE;
	}
	options->alerts_path = value;
	return PO_STATUS_OK;
}

static enum po_status apply_on_alert(struct po_cli_options *options, const char *value,
				     bool *exit_now, struct po_error *err)
{
	if (!*value) {
		po_error_set(err, "--on-alert needs a command, got an empty string");
		return PO_STATUS_USAGE;
	}
	options->on_alert = value;
	return PO_STATUS_OK;
}

static enum po_status apply_recording(struct po_cli_options *options, const char *value,
				      bool *exit_now, struct po_error *err)
{
	size_t length = strlen(value);

	if (!length || length > 64 || strspn(value, "0123456789abcdef") != length) {
		po_error_set(err, "--recording wants a recording id (hexadecimal), got \"%s\"",
			     value);
		return PO_STATUS_USAGE;
	}
	options->recording_id = value;
	return PO_STATUS_OK;
}

/* An open descriptor above the standard three, for --ready-fd and --trace-done-fd. */
static enum po_status parse_fd(const char *option, const char *value, int *fd_out,
			       struct po_error *err)
{
	char *end;
	long fd;

	errno = 0;
	fd = strtol(value, &end, 10);
	if (errno || end == value || *end != '\0' || fd < 3 || fd > 65535 ||
	    fcntl((int)fd, F_GETFD) < 0) {
		po_error_set(err, "%s wants an open descriptor above 2, got \"%s\"", option, value);
		return PO_STATUS_USAGE;
	}
	*fd_out = (int)fd;
	return PO_STATUS_OK;
}

static enum po_status apply_ready_fd(struct po_cli_options *options, const char *value,
				     bool *exit_now, struct po_error *err)
{
	return parse_fd("--ready-fd", value, &options->ready_fd, err);
}

static enum po_status apply_trace_done_fd(struct po_cli_options *options, const char *value,
					  bool *exit_now, struct po_error *err)
{
	return parse_fd("--trace-done-fd", value, &options->trace_done_fd, err);
}

static enum po_status apply_quiet(struct po_cli_options *options, const char *value, bool *exit_now,
				  struct po_error *err)
{
	options->quiet = true;
	return PO_STATUS_OK;
}

static enum po_status apply_help(struct po_cli_options *options, const char *value, bool *exit_now,
				 struct po_error *err)
{
	po_cli_print_usage(stdout);
	*exit_now = true;
	return PO_STATUS_OK;
}

/* --list-rules: RULE.KEY, default, unit and valid range, one rule a line (shell completion). */
static enum po_status apply_list_rules(struct po_cli_options *options, const char *value,
				       bool *exit_now, struct po_error *err)
{
	size_t count;
	const struct po_rule_info *infos = po_rule_infos(&count);

	for (size_t i = 0; i < count; i++)
		printf("%s.%s\t%g\t%s\t%g..%g\t%s\n", infos[i].rule, infos[i].key,
		       infos[i].default_value, infos[i].unit, infos[i].lowest, infos[i].highest,
		       infos[i].doc);
	*exit_now = true;
	return PO_STATUS_OK;
}

static enum po_status apply_version(struct po_cli_options *options, const char *value,
				    bool *exit_now, struct po_error *err)
{
	printf("profopt-analyze %s\n", PROFOPT_VERSION);
	*exit_now = true;
	return PO_STATUS_OK;
}

/* The options, in the order of --help. */
static const struct option_row option_table[] = {
    {"output", 'o', "DIR",
     "where to write the report (default: TRACE_DIR-report);\n"
     "it must not lie inside TRACE_DIR",
     apply_output},
    {"force", 'f', NULL,
     "replace an earlier profopt report in DIR (only the files\n"
     "its .profopt-report manifest lists)",
     apply_force},
    {"set", 0, "RULE.KEY=VAL", "change a detection rule (see docs/rules.md); repeatable",
     apply_set},
    {"config", 0, "FILE", "read RULE.KEY=VALUE lines from FILE", apply_config},
    {"timeline-steps", 0, "A:B", "keep the timelines of steps A to B (step numbers)",
     apply_timeline_steps},
    {"steps-in", 0, "AFTER:UNTIL",
     "measure only the steps that ended in (AFTER, UNTIL], trace-clock\n"
     "nanoseconds (a live window's begin_ns:now_ns): the findings\n"
     "and verdict of that window",
     apply_steps_in},
    {"salvage", 0, NULL,
     "analyse the readable part of a damaged trace; the report\n"
     "is marked partial",
     apply_salvage},
    {"all-processes", 0, NULL,
     "analyse every process in the trace, not only the recorded\n"
     "command's (see profopt-recording.txt)",
     apply_all_processes},
    {"json-only", 0, NULL, "write summary.json and timeline.json only", apply_json_only},
    {"partial", 0, NULL,
     "write only partial.json: this host's ranks as a small summary\n"
     "that --merge reads (docs/distributed.md)",
     apply_partial},
    {"merge", 0, NULL,
     "the arguments are partial summaries (partial.json, or the\n"
     "directories holding them): write the job's ranks, clocks and\n"
     "straggler to -o DIR/summary.json (exit 3 for a damaged\n"
     "partial, 2 for a DIR that holds one)",
     apply_merge},
    {"jobs", 'j', "N", "decode with N threads (default: one per CPU, at most 4)", apply_jobs},
    {"baseline", 0, "OLD",
     "compare with an earlier run: a trace directory or the\n"
     "summary.json of an earlier report",
     apply_baseline},
    {"fail-if", 0, "EXPR",
     "with --baseline: exit with status 6 when EXPR is true, e.g.\n"
     "steps.p50_ms>+10%, breakdown.data_wait_ms>+2, findings.new>0;\n"
     "a change counts only when it is beyond run-to-run noise",
     apply_fail_if},
    {"live", 0, "URL",
     "analyse a session while it records, from lttng-relayd:\n"
     "net://HOST[:PORT]/host/HOSTNAME/SESSION (docs/live.md); with\n"
     "TRACE_DIR, the trace's report follows when the session ends",
     apply_live},
    {"every", 0, "SECONDS", "with --live: seconds between windows (default 2)", apply_every},
    {"alerts", 0, "FILE", "with --live: append each alert to FILE as a JSON line", apply_alerts},
    {"on-alert", 0, "CMD",
     "with --live: run CMD (with /bin/sh) for each alert, the alert\n"
     "on its stdin and in PROFOPT_ALERT_* variables",
     apply_on_alert},
    {"recording", 0, "ID",
     "with --live: analyse only the processes of this recording\n"
     "(profopt-record's id; default: every process)",
     apply_recording},
    {"ready-fd", 0, "N",
     "with --live: write a newline to descriptor N once attached\n"
     "(a viewer sees only what is recorded after it attached)",
     apply_ready_fd},
    {"trace-done-fd", 0, "N",
     "with --live and TRACE_DIR: after the session ends, wait until\n"
     "descriptor N says \"complete\" before analysing TRACE_DIR\n"
     "(profopt-record, whose recording outlives the live session)",
     apply_trace_done_fd},
    {"quiet", 'q', NULL, "print nothing on success", apply_quiet},
    {"list-rules", 0, NULL,
     "list the rules --set takes: RULE.KEY, default, unit, valid\n"
     "range and meaning, tab-separated",
     apply_list_rules},
    {"help", 'h', NULL, "show this help", apply_help},
    {"version", 'V', NULL, "show the version", apply_version},
};

#define OPTION_COUNT (sizeof(option_table) / sizeof(option_table[0]))
/* getopt's value for a row without a short letter: this plus the row's index. */
#define LONG_ONLY_BASE 1000

void po_cli_print_usage(FILE *out)
{
	fputs(usage_head, out);
	for (size_t i = 0; i < OPTION_COUNT; i++) {
		const struct option_row *row = &option_table[i];
		const char *line = row->help;
		char name[64];
		int width;

		if (row->letter)
			width = snprintf(name, sizeof(name), "  -%c, --%s", row->letter, row->name);
		else
			width = snprintf(name, sizeof(name), "      --%s", row->name);
		if (row->argument)
			width += snprintf(name + width, sizeof(name) - (size_t)width, " %s",
					  row->argument);
		fprintf(out, "%-*s  ", USAGE_NAME_WIDTH, name);
		for (;;) {
			size_t length = strcspn(line, "\n");

			fprintf(out, "%.*s\n", (int)length, line);
			if (!line[length])
				break;
			line += length + 1;
			fprintf(out, "%*s", USAGE_NAME_WIDTH + 2, "");
		}
	}
	fputs(usage_tail, out);
}

/* The row getopt's value stands for; NULL for '?' and ':'. */
static const struct option_row *row_of(int value)
{
	if (value >= LONG_ONLY_BASE && (size_t)(value - LONG_ONLY_BASE) < OPTION_COUNT)
		return &option_table[value - LONG_ONLY_BASE];
	for (size_t i = 0; i < OPTION_COUNT; i++)
		if (option_table[i].letter && option_table[i].letter == value)
			return &option_table[i];
	return NULL;
}

/* The default output directory: TRACE_DIR-report, beside the trace. */
static enum po_status default_output(struct po_cli_options *options, struct po_error *err)
{
	size_t len = strlen(options->trace_dir);

	while (len > 1 && options->trace_dir[len - 1] == '/')
		len--;
	if (asprintf(&options->default_out_dir, "%.*s-report", (int)len, options->trace_dir) < 0) {
		options->default_out_dir = NULL;
		po_error_set(err, "out of memory");
		return PO_STATUS_NOMEM;
	}
	options->out_dir = options->default_out_dir;
	return PO_STATUS_OK;
}

/* The bad option getopt stopped at (value '?' or ':', a missing argument), in one line. */
static void explain_bad_option(int value, char **argv, struct po_error *err)
{
	const char *typed = argv[optind - 1];

	if (value == ':' && strncmp(typed, "--", 2) == 0)
		po_error_set(err, "%s needs an argument (see profopt-analyze --help)", typed);
	else if (value == ':')
		po_error_set(err, "-%c needs an argument (see profopt-analyze --help)", optopt);
	else
		po_error_set(err,
			     "unknown option or missing argument: %s (see profopt-analyze --help)",
			     typed);
}

enum po_status po_cli_parse(int argc, char **argv, struct po_cli_options *options, bool *exit_now,
			    struct po_error *err)
{
	struct option long_options[OPTION_COUNT + 1];
	char short_options[2 * OPTION_COUNT + 2];
	enum po_status status = PO_STATUS_OK;
	size_t short_length = 0;
	int value;

	*options = (struct po_cli_options){.timeline_first_step = -1,
					   .timeline_last_step = -1,
					   .steps_after_ns = INT64_MIN,
					   .steps_until_ns = INT64_MAX,
					   .every_s = 2,
					   .ready_fd = -1,
					   .trace_done_fd = -1};
	po_rules_init(&options->rules);
	*exit_now = false;
	short_options[short_length++] = ':'; /* a missing argument is ':', told from '?' */
	for (size_t i = 0; i < OPTION_COUNT; i++) {
		const struct option_row *row = &option_table[i];

		long_options[i] =
		    (struct option){row->name, row->argument ? required_argument : no_argument,
				    NULL, row->letter ? row->letter : LONG_ONLY_BASE + (int)i};
		if (row->letter) {
			short_options[short_length++] = row->letter;
			if (row->argument)
				short_options[short_length++] = ':';
		}
	}
	long_options[OPTION_COUNT] = (struct option){NULL, 0, NULL, 0};
	short_options[short_length] = '\0';

	opterr = 0; /* one message, ours */
	while (status == PO_STATUS_OK && !*exit_now &&
	       (value = getopt_long(argc, argv, short_options, long_options, NULL)) != -1) {
		const struct option_row *row = value == '?' || value == ':' ? NULL : row_of(value);

		if (!row) {
			explain_bad_option(value, argv, err);
			return PO_STATUS_USAGE;
		}
		status = row->apply(options, optarg, exit_now, err);
	}
	if (status != PO_STATUS_OK)
		return status == PO_STATUS_INPUT ? PO_STATUS_USAGE : status;
	if (*exit_now)
		return PO_STATUS_OK;
	if ((options->alerts_path || options->on_alert || options->recording_id ||
	     options->ready_fd >= 0 || options->trace_done_fd >= 0) &&
	    !options->live_url) {
		po_error_set(err,
			     "--alerts, --on-alert, --recording, --ready-fd and --trace-done-fd "
			     "need --live");
		return PO_STATUS_USAGE;
	}
	if (options->merge &&
	    (options->partial || options->live_url || options->baseline || options->salvage ||
	     options->steps_after_ns != INT64_MIN || options->timeline_first_step >= 0)) {
		po_error_set(err, "--merge reads partial summaries: --partial, --live, --baseline, "
				  "--salvage, --steps-in and --timeline-steps do not apply");
		return PO_STATUS_USAGE;
	}
	if (options->partial && (options->live_url || options->baseline)) {
		po_error_set(err,
			     "--partial writes partial.json only: --live and --baseline do not "
			     "apply");
		return PO_STATUS_USAGE;
	}
	if (options->merge && optind >= argc) {
		po_error_set(err, "--merge needs PARTIAL... (see profopt-analyze --help)");
		return PO_STATUS_USAGE;
	}
	if (options->merge && !options->out_dir) {
		po_error_set(err, "--merge needs -o DIR: the merged job's report has no trace "
				  "directory to sit beside");
		return PO_STATUS_USAGE;
	}
	if (options->live_url && optind == argc) {
		if (options->out_dir || options->baseline) {
			po_error_set(err, "--live writes a report only with a TRACE_DIR to analyse "
					  "when the session ends");
			return PO_STATUS_USAGE;
		}
		return PO_STATUS_OK;
	}
	if (optind >= argc) {
		po_error_set(err, "missing TRACE_DIR (see profopt-analyze --help)");
		return PO_STATUS_USAGE;
	}
	if (argc - optind > 1 && options->live_url) {
		po_error_set(err, "--live takes one TRACE_DIR");
		return PO_STATUS_USAGE;
	}
	if (argc - optind > 1 && !options->out_dir) {
		po_error_set(err, "several TRACE_DIRs need -o DIR: no report is written beside one "
				  "of them by default");
		return PO_STATUS_USAGE;
	}
	options->trace_dir = argv[optind];
	options->trace_dirs = (const char *const *)&argv[optind];
	options->trace_dir_count = (size_t)(argc - optind);
	if (options->gate_count && !options->baseline) {
		po_error_set(err, "--fail-if needs --baseline");
		return PO_STATUS_USAGE;
	}
	return options->out_dir ? PO_STATUS_OK : default_output(options, err);
}

void po_cli_options_fini(struct po_cli_options *options)
{
	free(options->default_out_dir);
	options->default_out_dir = NULL;
}
