/*
 * live_run.c: profopt-analyze --live (live_run.h).
 *
 * The model consumes every event on this thread as the relay delivers it. A window is a
 * snapshot: a forked copy of the model finishes, runs the detectors and computes the
 * window's numbers, and sends them back as one fixed-size struct through a pipe, so the
 * consuming model is never changed by it and memory stays what the model holds. Alerts,
 * the panel and the JSON lines are the parent's, from that struct.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "detect/detect.h"
#include "ingest/ingest.h"
#include "live/alerts_file.h"
#include "live/panel.h"
#include "live/window.h"
#include "live_run.h"
#include "model/model.h"

/* --on-alert commands still running, reaped between windows; more are not started. */
#define ON_ALERT_RUNNING_MAX 16
/* How long the end of a live run waits for --on-alert commands before it kills them. */
#define ON_ALERT_END_WAIT_MS 10000

struct live {
	const struct po_cli_options *options; /* weak */
	struct po_model *model;		      /* owned */
	struct po_live_alerts *alerts;	      /* owned */
	struct po_live_history *history;      /* weak */
	struct po_live_tally tally;	      /* every step that ended, as they end */
	struct po_live_panel panel;	      /* when stdout is a terminal */
	bool terminal;
	struct po_live_alerts_file *alerts_file; /* owned; NULL: no --alerts, or it failed */
	int64_t alerts_unwritten;		 /* alerts it did not get: it failed */
	int64_t events;				 /* events consumed */
	int64_t host_limit_bytes;
	int64_t next_window_ns; /* CLOCK_MONOTONIC: no window before (live.snapshot_cpu_pct) */
	pid_t on_alert[ON_ALERT_RUNNING_MAX];
	size_t on_alert_count;
	int64_t on_alert_skipped; /* alerts whose command was not started: too many running */
	bool any_window;
};

/* What the snapshot's copy needs, and where it sends the window. */
struct window_job {
	const struct po_rules *rules;
	struct po_live_window_config config;
	int fd; /* write end of the pipe */
};

static int64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static enum po_status feed(void *ctx, const struct po_event *event)
{
	struct live *live = ctx;

	live->events++;
	return po_model_consume(live->model, event);
}

/* In the snapshot's copy: the detectors on the result so far, then the window. */
static enum po_status window_in_copy(struct po_analysis *analysis, void *context,
				     struct po_error *err)
{
	struct window_job *job = context;
	struct po_live_window window;
	enum po_status status = po_live_window_detect(analysis, &job->config, err);
	size_t done = 0;

	if (status == PO_STATUS_OK)
		status = po_live_window_compute(analysis, &job->config, &window, err);
	if (status != PO_STATUS_OK)
		return status;
	while (done < sizeof(window)) {
		ssize_t moved = write(job->fd, (const char *)&window + done, sizeof(window) - done);

		if (moved < 0 && errno == EINTR)
			continue;
		if (moved <= 0) {
			po_error_set(err, "Failed to hand the window back: %s", strerror(errno));
			return PO_STATUS_INTERNAL;
		}
		done += (size_t)moved;
	}
	return PO_STATUS_OK;
}

/* A snapshot's window; PO_STATUS_INPUT when no profopt event of the recording came yet. */
static enum po_status take_window(struct live *live, struct po_live_window *window,
				  struct po_error *err)
{
	struct window_job job = {.rules = &live->options->rules};
	enum po_status status;
	size_t got = 0;
	int fds[2];

	job.config = (struct po_live_window_config){.rules = &live->options->rules,
						    .tally = &live->tally,
						    .now_ns = po_model_newest_ns(live->model),
						    .host_limit_bytes = live->host_limit_bytes,
						    .gpu_limit_bytes = -1,
						    .events = live->events};
	/* The steps that ended since the last window, read once each. */
	for (size_t i = (size_t)live->tally.steps; i < po_model_steps_ended(live->model); i++) {
		struct po_step step = po_model_step(live->model, i);

		if (!po_live_tally_add(&live->tally, &step)) {
			po_error_set(err, "out of memory");
			return PO_STATUS_NOMEM;
		}
	}
	/* The window (about 1.5 KiB) fits a pipe's buffer: the copy never waits to write it. */
	if (pipe2(fds, O_CLOEXEC) != 0) {
		po_error_set(err, "Failed to take a window: pipe: %s", strerror(errno));
		return PO_STATUS_INTERNAL;
	}
	job.fd = fds[1];
	/* The copy's analysis covers the window's steps: its cost does not grow with the run. */
	status = po_model_snapshot(
	    live->model, job.config.now_ns - (int64_t)(live->options->rules.live_window_s * 1e9),
	    window_in_copy, &job, err);
	close(fds[1]);
	while (status == PO_STATUS_OK && got < sizeof(*window)) {
		ssize_t moved = read(fds[0], (char *)window + got, sizeof(*window) - got);

		if (moved < 0 && errno == EINTR)
			continue;
		if (moved <= 0) {
			po_error_set(err,
				     "Failed to take a window: its process sent %zu of %zu bytes",
				     got, sizeof(*window));
			status = PO_STATUS_INTERNAL;
			break;
		}
		got += (size_t)moved;
	}
	close(fds[0]);
	if (status == PO_STATUS_OK)
		po_live_tally_keep(&live->tally, window);
	return status;
}

static bool history_add(struct po_live_history *history, const struct po_live_alert *alert)
{
	if (history->count == history->capacity) {
		size_t capacity = history->capacity ? 2 * history->capacity : 16;
		struct po_live_alert *grown =
		    realloc(history->alerts, capacity * sizeof(*history->alerts));

		if (!grown)
			return false;
		history->alerts = grown;
		history->capacity = capacity;
	}
	history->alerts[history->count++] = *alert;
	return true;
}

/*
 * --alerts FILE: one JSON line per alert, on disk before the next window. A file that
 * fails (a full disk, a FIFO whose reader left) is said once and written no more; the
 * windows, --on-alert and the report's alerts.json still get every alert.
 */
static void append_alert(struct live *live, const struct po_live_alert *alert)
{
	struct po_error err = {{0}};

	if (!live->alerts_file) {
		live->alerts_unwritten += live->options->alerts_path != NULL;
		return;
	}
	if (po_live_alerts_file_append(live->alerts_file, alert, &err) == PO_STATUS_OK)
		return;
	po_live_alerts_file_destroy(live->alerts_file);
	live->alerts_file = NULL;
	live->alerts_unwritten++;
	fprintf(stderr,
		"profopt-analyze: warning: %s: it gets no more alerts (the windows, --on-alert "
		"and the report still do)\n",
		err.message);
	if (live->terminal)
		po_live_panel_keep(&live->panel); /* the next panel goes below the warning */
}

static void reap_on_alert(struct live *live, bool block)
{
	size_t kept = 0;

	for (size_t i = 0; i < live->on_alert_count; i++) {
		int wait_status;
		pid_t done;

		do
			done = waitpid(live->on_alert[i], &wait_status, block ? 0 : WNOHANG);
		while (done < 0 && errno == EINTR);
		if (done == 0)
			live->on_alert[kept++] = live->on_alert[i];
	}
	live->on_alert_count = kept;
}

/* The alert's text as an environment variable's value: NUL cannot be in one. */
static void set_number(const char *name, double value)
{
	char text[64];

	if (isfinite(value))
		snprintf(text, sizeof(text), "%.6g", value);
	else
		text[0] = '\0';
	setenv(name, text, 1);
}

/*
 * --on-alert CMD: the user's own command line, run by /bin/sh; the alert reaches it only
 * as data (its stdin, a file holding the JSON line, and PROFOPT_ALERT_* variables), never
 * inside a command line, so nothing in a trace can make the shell run anything.
 */
static void run_on_alert(struct live *live, const struct po_live_alert *alert)
{
	FILE *input;
	pid_t pid;

	reap_on_alert(live, false);
	if (!live->options->on_alert)
		return;
	if (live->on_alert_count == ON_ALERT_RUNNING_MAX) {
		live->on_alert_skipped++;
		return;
	}
	input = tmpfile();
	if (!input || !po_live_alert_write_json(input, alert) || fflush(input) != 0) {
		if (input)
			fclose(input);
		live->on_alert_skipped++;
		return;
	}
	rewind(input);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		sigset_t none;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		for (int s = 1; s < NSIG; s++)
			if (s != SIGKILL && s != SIGSTOP)
				signal(s, SIG_DFL);
		if (dup2(fileno(input), STDIN_FILENO) < 0)
			_exit(127);
		setenv("PROFOPT_ALERT", po_live_alert_kind_name(alert->kind), 1);
		setenv("PROFOPT_ALERT_STATE", alert->raised ? "raised" : "cleared", 1);
		setenv("PROFOPT_ALERT_EVIDENCE", alert->evidence, 1);
		setenv("PROFOPT_ALERT_UNIT", alert->unit ? alert->unit : "", 1);
		set_number("PROFOPT_ALERT_VALUE", alert->value);
		set_number("PROFOPT_ALERT_THRESHOLD", alert->threshold);
		set_number("PROFOPT_ALERT_WINDOW", (double)alert->seq);
		execl("/bin/sh", "sh", "-c", live->options->on_alert, (char *)NULL);
		_exit(127);
	}
	fclose(input);
	if (pid < 0)
		live->on_alert_skipped++;
	else
		live->on_alert[live->on_alert_count++] = pid;
}

/* The end: the commands still running get ON_ALERT_END_WAIT_MS, then are killed. */
static void end_on_alert(struct live *live)
{
	for (int waited = 0; live->on_alert_count && waited < ON_ALERT_END_WAIT_MS; waited += 20) {
		struct timespec pause = {0, 20 * 1000000L};

		reap_on_alert(live, false);
		if (live->on_alert_count)
			nanosleep(&pause, NULL);
	}
	for (size_t i = 0; i < live->on_alert_count; i++)
		kill(live->on_alert[i], SIGKILL);
	reap_on_alert(live, true);
}

static int terminal_columns(void)
{
	struct winsize size;

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col >= 20)
		return size.ws_col;
	return 80;
}

static enum po_status show(struct live *live, const struct po_live_window *window,
			   struct po_error *err)
{
	struct po_live_alert open[PO_LIVE_ALERT_KIND_COUNT];
	size_t open_count = po_live_alerts_open(live->alerts, open);

	if (live->terminal) {
		po_live_panel_draw(&live->panel, stdout, window, open, open_count,
				   terminal_columns());
		fflush(stdout);
		return PO_STATUS_OK;
	}
	if (!po_live_window_write_json(stdout, window, open, open_count)) {
		po_error_set(err, "Failed to write a window to standard output: %s",
			     strerror(errno));
		return PO_STATUS_OUTPUT;
	}
	return PO_STATUS_OK;
}

static enum po_status tick(void *ctx, bool ended, struct po_error *err)
{
	struct live *live = ctx;
	struct po_live_alert changes[PO_LIVE_ALERT_KIND_COUNT];
	struct po_live_window window;
	enum po_status status;
	int64_t started_ns;
	size_t count;

	reap_on_alert(live, false);
	started_ns = monotonic_ns();
	if (!ended && started_ns < live->next_window_ns)
		return PO_STATUS_OK;
	status = take_window(live, &window, err);
	window.snapshot_ms = (double)(monotonic_ns() - started_ns) / 1e6;
	/*
	 * Snapshots are spaced so that they take at most live.snapshot_cpu_pct of a core,
	 * whatever a window costs (its steps, and the fork of a larger model).
	 */
	live->next_window_ns =
	    started_ns + (int64_t)((double)(monotonic_ns() - started_ns) * 100.0 /
				   live->options->rules.live_snapshot_cpu_pct);
	if (status == PO_STATUS_INPUT) /* nothing of the recording yet */
		return PO_STATUS_OK;
	if (status != PO_STATUS_OK)
		return status;
	if (ended && !window.ended) {
		/* The session ended without the program's run_end: it crashed, was killed, or
		 * the session was destroyed under it. */
		window.ended = true;
		snprintf(window.ending, sizeof(window.ending), "%s",
			 po_run_ending_name(PO_RUN_NO_RUN_END));
	}
	window.seq = ++live->history->windows;
	if (!live->any_window)
		live->history->origin_ns = window.now_ns;
	live->any_window = true;
	count = po_live_alerts_update(live->alerts, &window, changes);
	for (size_t i = 0; i < count && status == PO_STATUS_OK; i++) {
		if (!history_add(live->history, &changes[i])) {
			po_error_set(err, "out of memory");
			return PO_STATUS_NOMEM;
		}
		append_alert(live, &changes[i]);
		run_on_alert(live, &changes[i]);
	}
	if (status == PO_STATUS_OK)
		status = show(live, &window, err);
	return status;
}

/* Physical memory, for the projected time to out-of-memory; -1 when unknown. */
static int64_t host_memory_bytes(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);

	return pages > 0 && size > 0 ? (int64_t)pages * size : -1;
}

static enum po_status live_open(struct live *live, const struct po_cli_options *options,
				struct po_live_history *history, struct po_error *err)
{
	struct po_model_config config;
	enum po_status status;

	*live = (struct live){.options = options, .history = history};
	po_live_tally_init(&live->tally);
	live->host_limit_bytes = host_memory_bytes();
	/* Checked before the view attaches: a target it refuses is a bad command line. */
	if (options->alerts_path) {
		status = po_live_alerts_file_create(options->alerts_path, &live->alerts_file, err);
		if (status != PO_STATUS_OK)
			return status;
	}
	po_model_config_init(&config);
	config.min_gap_ns = options->rules.gpu_idle_min_gap_ms >= 9e12
				? INT64_MAX
				: (int64_t)(options->rules.gpu_idle_min_gap_ms * 1e6);
	if (options->recording_id)
		snprintf(config.recording_id, sizeof(config.recording_id), "%s",
			 options->recording_id);
	status = po_model_create(&config, &live->model, err);
	if (status == PO_STATUS_OK)
		status = po_live_alerts_create(&options->rules, &live->alerts, err);
	live->terminal = isatty(STDOUT_FILENO);
	return status;
}

static void live_close(struct live *live)
{
	end_on_alert(live);
	po_live_alerts_file_destroy(live->alerts_file);
	po_live_alerts_destroy(live->alerts);
	po_model_destroy(live->model);
	po_live_tally_fini(&live->tally);
}

enum po_status po_live_run(const struct po_cli_options *options, struct po_live_history *history,
			   struct po_error *err)
{
	struct po_ingest_live_options ingest = {.url = options->live_url,
						.tick_ns = (int64_t)(options->every_s * 1e9),
						.ready_fd = options->ready_fd};
	struct po_ingest_stats stats;
	struct live live;
	enum po_status status;

	*history = (struct po_live_history){0};
	status = live_open(&live, options, history, err);
	if (status == PO_STATUS_OK) {
		ingest.tick = tick;
		ingest.tick_ctx = &live;
		status = po_ingest_live_run(&ingest, feed, &live, &stats, err);
	}
	if (status == PO_STATUS_OK && !live.any_window) {
		po_error_set(err,
			     "%s: no profopt event came before the session ended (no such session "
			     "on the relay, or nothing instrumented ran in it)",
			     options->live_url);
		status = PO_STATUS_INPUT;
	}
	live_close(&live);
	if (live.terminal && live.any_window)
		po_live_panel_keep(&live.panel);
	if (live.alerts_unwritten)
		fprintf(stderr, "profopt-analyze: warning: %lld alert(s) are not in --alerts %s\n",
			(long long)live.alerts_unwritten, options->alerts_path);
	if (live.on_alert_skipped)
		fprintf(stderr,
			"profopt-analyze: warning: %lld alerts did not run --on-alert (%d of its "
			"commands were still running, or one could not be started)\n",
			(long long)live.on_alert_skipped, ON_ALERT_RUNNING_MAX);
	return status;
}

void po_live_history_fini(struct po_live_history *history)
{
	free(history->alerts);
	*history = (struct po_live_history){0};
}
