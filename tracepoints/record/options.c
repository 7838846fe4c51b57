/* options.c: the command line of profopt-record and its --help text. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "record.h"

enum {
	OPT_HEAP = 256,
	OPT_GPU,
	OPT_BUFFERS,
	OPT_SUBBUF_SIZE,
	OPT_NUM_SUBBUF,
	OPT_SAMPLE_MS,
	OPT_STACKS,
	OPT_STACKS_CLOCK,
	OPT_LIVE,
	OPT_ALERTS,
	OPT_ON_ALERT,
	OPT_EVERY,
	OPT_LIVE_TIMER,
	OPT_SET,
	OPT_CHECK,
	OPT_HELP,
	OPT_VERSION,
};

static const struct option long_options[] = {
    {"output", required_argument, NULL, 'o'},
    {"heap", no_argument, NULL, OPT_HEAP},
    {"gpu", no_argument, NULL, OPT_GPU},
    {"buffers", required_argument, NULL, OPT_BUFFERS},
    {"subbuf-size", required_argument, NULL, OPT_SUBBUF_SIZE},
    {"num-subbuf", required_argument, NULL, OPT_NUM_SUBBUF},
    {"sample-ms", required_argument, NULL, OPT_SAMPLE_MS},
    {"stacks", optional_argument, NULL, OPT_STACKS},
    {"stacks-clock", required_argument, NULL, OPT_STACKS_CLOCK},
    {"live", no_argument, NULL, OPT_LIVE},
    {"alerts", required_argument, NULL, OPT_ALERTS},
    {"on-alert", required_argument, NULL, OPT_ON_ALERT},
    {"every", required_argument, NULL, OPT_EVERY},
    {"live-timer", required_argument, NULL, OPT_LIVE_TIMER},
    {"set", required_argument, NULL, OPT_SET},
    {"check", no_argument, NULL, OPT_CHECK},
    {"help", no_argument, NULL, OPT_HELP},
    {"version", no_argument, NULL, OPT_VERSION},
    {NULL, 0, NULL, 0},
};

void rec_options_print_help(void)
{
	printf("Usage: profopt-record [OPTIONS] [--] COMMAND [ARGS...]\n"
	       "       profopt-record --check [OPTIONS]\n"
	       "Records the profopt events of COMMAND and of the processes it forks with LTTng,\n"
	       "for profopt-analyze. The trace path is printed on stdout as the last line.\n\n"
	       "Options:\n"
	       "  -o, --output DIR    trace directory (default ./profopt-trace-YYYYMMDD-HHMMSS);\n"
	       "                      it must not exist or be empty\n"
	       "      --heap          also record malloc/free (lttng_ust_libc), with the ip\n"
	       "                      context\n"
	       "      --gpu           record GPU kernels, copies, waits and device memory of\n"
	       "                      CUDA programs with the CUPTI collector (libprofopt-cupti)\n"
	       "      --buffers uid|pid  ring buffers shared by the user's processes (uid, the\n"
	       "                      default: a forked worker starts in milliseconds) or one\n"
	       "                      set per process (pid: each new process waits about\n"
	       "                      0.25 s for its buffers)\n"
	       "      --subbuf-size SIZE  sub-buffer size, a power of 2 with optional k/M suffix\n"
	       "                      (default 4M)\n"
	       "      --num-subbuf N  sub-buffers per CPU (and process with --buffers pid), a\n"
	       "                      power of 2 (default 8)\n"
	       "      --sample-ms N   RSS/CPU sampling period of libprofopt in ms, 0 to disable\n"
	       "                      (default: PROFOPT_SAMPLE_MS if set, else 20)\n"
	       "      --stacks[=HZ]   sample the stacks of every traced process HZ times per\n"
	       "                      second of CPU time (default 100; docs/sampling.md):\n"
	       "                      every thread of CPython 3.9 to 3.13 and of a C or C++\n"
	       "                      program linked with libprofopt\n"
	       "      --stacks-clock cpu|wall  with --stacks: per second of each thread's CPU\n"
	       "                      time (cpu, the default: the program's waits are left\n"
	       "                      alone), or of wall time, waiting or running (wall: where\n"
	       "                      I/O time goes; C-level waits such as sleep, poll and\n"
	       "                      select return early with EINTR)\n"
	       "      --live          also show the run while it records (profopt-analyze\n"
	       "                      --live through lttng-relayd, docs/live.md): a panel on\n"
	       "                      a terminal, else one JSON line per window on stdout;\n"
	       "                      TRACE_DIR-report is written when COMMAND ends\n"
	       "      --alerts FILE   with --live: append each alert to FILE (JSON lines): a\n"
	       "                      regular file, a FIFO that a process reads or /dev/null,\n"
	       "                      never a symbolic link\n"
	       "      --on-alert CMD  with --live: run CMD (/bin/sh -c) for each alert, with\n"
	       "                      the alert on its stdin and in PROFOPT_ALERT_* variables\n"
	       "      --every SECONDS  with --live: seconds between windows (default 2)\n"
	       "      --live-timer US  with --live: how often buffers are sent to the view, in\n"
	       "                      microseconds (default 100000: about 0.1 s of latency)\n"
	       "      --set RULE.KEY=VALUE  with --live: a rule for the view and its report\n"
	       "                      (docs/rules.md, live.* for the alerts); repeatable\n"
	       "      --check         check what a recording needs (session daemon, lttng-ust\n"
	       "                      and its wrappers, buffer memory, disk room, the Python\n"
	       "                      module) with these options, say what to fix, and exit:\n"
	       "                      0 when a recording would work, 1 otherwise\n"
	       "      --help          print this help and exit\n"
	       "      --version       print the version and exit\n\n"
	       "A session daemon is started if none is running, and stopped at the end unless\n"
	       "another session lives in it then. Each call to the daemon waits at most\n"
	       "PROFOPT_SESSIOND_TIMEOUT seconds (default 30).\n"
	       "SIGINT, SIGTERM and SIGHUP are forwarded to COMMAND; the trace is kept. Before\n"
	       "COMMAND runs, or while waiting for the daemon, they end profopt-record.\n\n"
	       "Exit status: COMMAND's exit status (128+N if it was killed by signal N),\n"
	       "1 tracing error (also a read-only /dev/shm, or a daemon directory where no\n"
	       "daemon can start, refused before COMMAND runs), 2 bad command line (with\n"
	       "--live, also an --alerts FILE or a TRACE_DIR-report the view refuses), 3 the\n"
	       "session daemon did not answer in time, 126 COMMAND not executable,\n"
	       "127 COMMAND not found, 128+N ended by signal N before COMMAND ran or while\n"
	       "waiting for the daemon.\n");
}

/* Parses "4M", "512k", "65536": binary multiples. */
static int parse_size(const char *text, uint64_t *bytes)
{
	char *end;
	unsigned long long value;
	unsigned shift = 0;

	errno = 0;
	value = strtoull(text, &end, 10);
	if (errno || end == text || text[0] == '-')
		return -1;
	if (*end == 'k' || *end == 'K')
		shift = 10;
	else if (*end == 'm' || *end == 'M')
		shift = 20;
	else if (*end == 'g' || *end == 'G')
		shift = 30;
	if (shift)
		end++;
	if (*end != '\0' || value > (UINT64_MAX >> shift))
		return -1;
	*bytes = (uint64_t)value << shift;
	return 0;
}

static bool is_power_of_two(uint64_t value)
{
	return value && !(value & (value - 1));
}

static enum rec_status parse_option(struct rec_options *options, int opt, const char *arg,
				    struct po_error *err)
{
	char *end;

	switch (opt) {
	case 'o':
		options->output_dir = arg;
		break;
	case OPT_HEAP:
		options->heap = true;
		break;
	case OPT_GPU:
		options->gpu = true;
		break;
	case OPT_BUFFERS:
		if (strcmp(arg, "uid") && strcmp(arg, "pid")) {
			po_error_set(err, "invalid --buffers '%s': uid or pid", arg);
			return REC_STATUS_USAGE;
		}
		options->per_process_buffers = !strcmp(arg, "pid");
		break;
	case OPT_SUBBUF_SIZE:
		if (parse_size(arg, &options->subbuf_bytes) || options->subbuf_bytes < 4096 ||
		    !is_power_of_two(options->subbuf_bytes)) {
			po_error_set(err, "invalid --subbuf-size '%s': a power of 2, at least 4k",
				     arg);
			return REC_STATUS_USAGE;
		}
		break;
	case OPT_NUM_SUBBUF:
		if (parse_size(arg, &options->subbuf_count) || options->subbuf_count < 2 ||
		    !is_power_of_two(options->subbuf_count)) {
			po_error_set(err, "invalid --num-subbuf '%s': a power of 2, at least 2",
				     arg);
			return REC_STATUS_USAGE;
		}
		break;
	case OPT_SAMPLE_MS:
		errno = 0;
		options->sample_ms = strtol(arg, &end, 10);
		if (errno || end == arg || *end || options->sample_ms < 0 ||
		    options->sample_ms > 3600000) {
			po_error_set(err, "invalid --sample-ms '%s': 0 to 3600000", arg);
			return REC_STATUS_USAGE;
		}
		break;
	case OPT_STACKS:
		options->stacks_hz = REC_DEFAULT_STACKS_HZ;
		if (!arg)
			break;
		errno = 0;
		options->stacks_hz = strtol(arg, &end, 10);
		if (errno || end == arg || *end || options->stacks_hz < 1 ||
		    options->stacks_hz > REC_MAX_STACKS_HZ) {
			po_error_set(err, "invalid --stacks '%s': 1 to %d samples per second", arg,
				     REC_MAX_STACKS_HZ);
			return REC_STATUS_USAGE;
		}
		break;
	case OPT_STACKS_CLOCK:
		if (strcmp(arg, "cpu") != 0 && strcmp(arg, "wall") != 0) {
			po_error_set(err, "invalid --stacks-clock '%s': cpu or wall", arg);
			return REC_STATUS_USAGE;
		}
		options->stacks_clock = arg;
		break;
	case OPT_LIVE:
		options->live = true;
		break;
	case OPT_ALERTS:
	case OPT_ON_ALERT:
		if (!*arg) {
			po_error_set(err, "invalid --%s '': it needs a %s",
				     opt == OPT_ALERTS ? "alerts" : "on-alert",
				     opt == OPT_ALERTS ? "file" : "command");
			return REC_STATUS_USAGE;
		}
		if (opt == OPT_ALERTS)
			options->live_alerts = arg;
		else
			options->live_on_alert = arg;
		break;
	case OPT_EVERY:
		errno = 0;
		options->live_every_s = strtod(arg, &end);
		if (errno || end == arg || *end || !(options->live_every_s >= 0.1) ||
		    options->live_every_s > 3600) {
			po_error_set(err, "invalid --every '%s': seconds from 0.1 to 3600", arg);
			return REC_STATUS_USAGE;
		}
		break;
	case OPT_LIVE_TIMER: {
		unsigned long value;

		errno = 0;
		value = strtoul(arg, &end, 10);
		if (errno || end == arg || *end || arg[0] == '-' || value < 1000 ||
		    value > 60000000) {
			po_error_set(err,
				     "invalid --live-timer '%s': microseconds from 1000 to "
				     "60000000",
				     arg);
			return REC_STATUS_USAGE;
		}
		options->live_timer_us = (unsigned)value;
		break;
	}
	case OPT_SET:
		if (options->live_set_count == REC_LIVE_SETS_MAX) {
			po_error_set(err, "at most %d --set", REC_LIVE_SETS_MAX);
			return REC_STATUS_USAGE;
		}
		options->live_sets[options->live_set_count++] = arg;
		break;
	case OPT_CHECK:
		options->check = true;
		break;
	case OPT_HELP:
		options->show_help = true;
		break;
	case OPT_VERSION:
		options->show_version = true;
		break;
	default:
		po_error_set(err, "invalid option (see --help)");
		return REC_STATUS_USAGE;
	}
	return REC_STATUS_OK;
}

/*
 * The ring buffers live in shared memory (/dev/shm): sub-buffer size x count x CPUs (per
 * traced process with --buffers pid). Buffers that cannot fit there record nothing (LTTng
 * fails to create them and the program runs untraced), so they are refused up front, with
 * what they need and what there is.
 */
static enum rec_status check_buffer_room(const struct rec_options *options, struct po_error *err)
{
	struct statvfs shm;
	long cpus = sysconf(_SC_NPROCESSORS_CONF);
	double need, room;

	if (statvfs("/dev/shm", &shm) != 0 || cpus <= 0)
		return REC_STATUS_OK; /* nothing to check against: LTTng will say */
	need = (double)options->subbuf_bytes * (double)options->subbuf_count * (double)cpus;
	if (options->live)
		need *= 2; /* the live session's per-user buffers come on top */
	room = (double)shm.f_bavail * (double)shm.f_frsize;
	if (need <= room / 2)
		return REC_STATUS_OK;
	po_error_set(err,
		     "buffers of --subbuf-size %lluk x --num-subbuf %llu x %ld CPUs need %.0f MiB "
		     "of shared memory%s, and /dev/shm has %.0f MiB free (at most half of it is "
		     "used): choose smaller buffers",
		     (unsigned long long)(options->subbuf_bytes >> 10),
		     (unsigned long long)options->subbuf_count, cpus, need / 1048576.0,
		     options->per_process_buffers ? " per traced process" : "", room / 1048576.0);
	return REC_STATUS_USAGE;
}

/*
 * PROFOPT_SESSIOND_TIMEOUT: seconds (a decimal number) each call to the session daemon may
 * take; unset or empty, REC_DEFAULT_SESSIOND_TIMEOUT_MS.
 */
static enum rec_status parse_sessiond_timeout(struct rec_options *options, struct po_error *err)
{
	const char *text = getenv(REC_SESSIOND_TIMEOUT_ENV);
	double seconds;
	char *end;

	options->sessiond_timeout_ms = REC_DEFAULT_SESSIOND_TIMEOUT_MS;
	if (!text || !*text)
		return REC_STATUS_OK;
	errno = 0;
	seconds = strtod(text, &end);
	if (errno || end == text || *end || !(seconds >= 0.1) || seconds > 86400) {
		po_error_set(err, "invalid %s='%s': seconds from 0.1 to 86400",
			     REC_SESSIOND_TIMEOUT_ENV, text);
		return REC_STATUS_USAGE;
	}
	options->sessiond_timeout_ms = (int)(seconds * 1000 + 0.5);
	return REC_STATUS_OK;
}

enum rec_status rec_options_parse(struct rec_options *options, int argc, char **argv,
				  struct po_error *err)
{
	enum rec_status status;
	int opt;

	*options = (struct rec_options){
	    .subbuf_bytes = REC_DEFAULT_SUBBUF_BYTES,
	    .subbuf_count = REC_DEFAULT_SUBBUF_COUNT,
	    .sample_ms = -1,
	    .live_every_s = 2,
	    .live_timer_us = REC_DEFAULT_LIVE_TIMER_US,
	};
	opterr = 0;
	optind = 0; /* GNU getopt: start over, so that parsing can be repeated */
	/* "+": options end at COMMAND, whose own options are not ours. */
	while ((opt = getopt_long(argc, argv, "+:o:", long_options, NULL)) != -1) {
		if (opt == ':') {
			po_error_set(err, "option '%s' needs a value", argv[optind - 1]);
			return REC_STATUS_USAGE;
		}
		if (opt == '?') {
			po_error_set(err, "unknown option '%s' (see --help)", argv[optind - 1]);
			return REC_STATUS_USAGE;
		}
		status = parse_option(options, opt, optarg, err);
		if (status != REC_STATUS_OK)
			return status;
	}
	if (options->show_help || options->show_version)
		return REC_STATUS_OK;
	status = parse_sessiond_timeout(options, err);
	if (status != REC_STATUS_OK || options->check)
		return status;
	if (optind >= argc) {
		po_error_set(err, "no command to record (see --help)");
		return REC_STATUS_USAGE;
	}
	if (options->output_dir && !options->output_dir[0]) {
		po_error_set(err, "empty output directory name");
		return REC_STATUS_USAGE;
	}
	if ((options->live_alerts || options->live_on_alert || options->live_set_count) &&
	    !options->live) {
		po_error_set(err, "--alerts, --on-alert and --set need --live");
		return REC_STATUS_USAGE;
	}
	if (options->stacks_clock && !options->stacks_hz) {
		po_error_set(err, "--stacks-clock needs --stacks");
		return REC_STATUS_USAGE;
	}
	options->command_argv = argv + optind;
	return check_buffer_room(options, err);
}
