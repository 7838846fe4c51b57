/*
 * options.h: profopt-analyze's command line. One table (options.c) gives getopt its long
 * and short options, says what each does, and writes --help; this header is what the rest
 * of the program reads from it.
 */
#ifndef PO_CLI_OPTIONS_H
#define PO_CLI_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/status.h"
#include "detect/rules.h"

#define PO_CLI_MAX_GATES 16

struct po_cli_options {
	const char *trace_dir; /* weak: argv, or the job directory of several (main.c) */
	/* TRACE_DIR...: every directory given (one for most runs); weak: argv */
	const char *const *trace_dirs;
	size_t trace_dir_count;
	const char *out_dir;   /* weak: argv, or owned default_out_dir */
	char *default_out_dir; /* owned */
	bool force;
	bool salvage;
	bool all_processes; /* --all-processes: do not restrict to the recorded command */
	bool quiet;
	bool json_only;
	bool partial; /* --partial: write partial.json, the ranks as a mergeable summary */
	bool merge;   /* --merge: the arguments are partial summaries, merged into one job's */
	int decode_threads;	     /* 0: one per CPU, at most 4 */
	int64_t timeline_first_step; /* -1: none */
	int64_t timeline_last_step;
	/* --steps-in: only steps that ended in (after, until] are measured; all by default */
	int64_t steps_after_ns, steps_until_ns;
	const char *baseline;		     /* weak: argv; a trace directory or a summary.json */
	const char *gates[PO_CLI_MAX_GATES]; /* weak: argv; --fail-if expressions */
	size_t gate_count;
	struct po_rules rules;
	/* --live URL: analyse a session while it records (live_run.h); TRACE_DIR optional */
	const char *live_url;	  /* weak: argv; NULL: offline */
	double every_s;		  /* --every: seconds between windows (default 2) */
	const char *alerts_path;  /* weak: argv; --alerts FILE, appended to; NULL: none */
	const char *on_alert;	  /* weak: argv; --on-alert CMD; NULL: none */
	const char *recording_id; /* weak: argv; --recording ID: only that recording's processes */
	int ready_fd;		  /* --ready-fd N: told once attached (profopt-record); -1 */
	int trace_done_fd;	  /* --trace-done-fd N: says when TRACE_DIR is complete; -1 */
};

/*
 * Parses argv into options (initialized here). Returns PO_STATUS_OK to go on, with the
 * output directory defaulted (TRACE_DIR-report); *exit_now is set when --help or
 * --version printed what was asked. PO_STATUS_USAGE with err set for a bad command line.
 */
enum po_status po_cli_parse(int argc, char **argv, struct po_cli_options *options, bool *exit_now,
			    struct po_error *err) PO_NODISCARD;
void po_cli_options_fini(struct po_cli_options *options);

/* --help's text, generated from the table (stdout for --help). */
void po_cli_print_usage(FILE *out);

#endif /* PO_CLI_OPTIONS_H */
