/*
 * main.c: profopt-record, which records the profopt events of a command and of the
 * processes it forks into one LTTng trace, for profopt-analyze. Only this file prints.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "record.h"

static const int status_exit_codes[REC_STATUS_COUNT] = {
#define REC_X(name, text, exit_status) [REC_STATUS_##name] = exit_status,
    REC_STATUSES(REC_X)
#undef REC_X
};

int rec_status_exit_code(enum rec_status status)
{
	return (unsigned)status < REC_STATUS_COUNT ? status_exit_codes[status] : 1;
}

/* A signal ends profopt-record as it would have ended a shell's command: 128+N. */
static int exit_code_of(enum rec_status status)
{
	if (status == REC_STATUS_INTERRUPTED && rec_signals_received() > 0)
		return 128 + rec_signals_received();
	return rec_status_exit_code(status);
}

static int fail(enum rec_status status, const struct po_error *err)
{
	fprintf(stderr, "profopt-record: %s\n", err->message);
	return exit_code_of(status);
}

/* The daemon did not answer, or a signal ended the wait: its one line is said already. */
static bool daemon_gone(enum rec_status status)
{
	return status == REC_STATUS_SESSIOND_TIMEOUT || status == REC_STATUS_INTERRUPTED;
}

/*
 * Notes: a file whose path the traced processes find in PROFOPT_RECORD_NOTES, where the
 * Python module writes what kept a process from recording (libprofopt not loaded), and
 * libprofopt which processes emitted events before they were registered (verify.c), one
 * tab-separated line per note: code, pid, text. After the command, each note is said once
 * and kept in the trace directory (profopt-record-notes.txt) for profopt-analyze. It lives
 * in the scratch directory, which the next recorder removes if this one is killed.
 */
#define NOTES_NAME "profopt-record-notes.txt"

static char notes_path[700];

static void notes_create(void)
{
	int fd = -1;

	if (rec_scratch_dir()) {
		snprintf(notes_path, sizeof(notes_path), "%s/notes", rec_scratch_dir());
		fd = open(notes_path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	}
	if (fd < 0 || setenv("PROFOPT_RECORD_NOTES", notes_path, 1) != 0) {
		if (fd >= 0)
			unlink(notes_path);
		notes_path[0] = '\0';
	}
	if (fd >= 0)
		close(fd);
}

/* Says the first note of each code, with the number of processes that wrote one. */
static void notes_report(FILE *notes, const char *trace_dir)
{
	char line[1200], first[1200] = "", copy_path[4096];
	long count = 0;
	FILE *copy;

	snprintf(copy_path, sizeof(copy_path), "%s/" NOTES_NAME, trace_dir);
	copy = fopen(copy_path, "w");
	while (fgets(line, sizeof(line), notes)) {
		if (copy)
			fputs(line, copy);
		if (strncmp(line, "libprofopt-not-loaded\t", 22) != 0)
			continue;
		if (!count++)
			snprintf(first, sizeof(first), "%s", strchr(line + 22, '\t') + 1);
	}
	if (copy)
		fclose(copy);
	first[strcspn(first, "\n")] = '\0';
	if (count)
		fprintf(
		    stderr,
		    "profopt-record: warning: the profopt Python module could not load libprofopt "
		    "in %ld process(es), which recorded nothing (%s); set PROFOPT_LIBRARY to the "
		    "path of libprofopt.so\n",
		    count, first);
}

static void notes_finish(const char *trace_dir)
{
	FILE *notes;

	if (!notes_path[0])
		return;
	notes = trace_dir ? fopen(notes_path, "r") : NULL;
	if (notes) {
		notes_report(notes, trace_dir);
		fclose(notes);
	}
	unlink(notes_path);
	notes_path[0] = '\0';
}

/*
 * Says what the recording holds, one line each (verify.c); true when it lost data besides
 * discarded events. The trace stays: what was written is still readable, and
 * profopt-analyze says what is missing from it. Reads the notes, so call it before
 * notes_finish().
 */
static bool report_recording(const struct rec_session *session,
			     const struct rec_recording *recording, bool sessiond_ended)
{
	struct rec_verification result;
	const struct rec_verify_input input = {
	    .trace_dir = session->output_dir,
	    .notes_path = notes_path[0] ? notes_path : NULL,
	    .command_pid = recording->command_pid,
	    .command_end_ns = recording->end_ns,
	    .daemon_discarded = session->discarded_events,
	    .daemon_discarded_known = session->counts_known,
	    .sessiond_ended = sessiond_ended,
	};

	rec_verify(&input, &result);
	for (int i = 0; i < result.line_count; i++)
		fprintf(stderr, "profopt-record: %s\n", result.lines[i]);
	return result.incomplete;
}

/* Stops and destroys the session; the trace stays unless the command never ran. */
static enum rec_status finish_session(struct rec_session *session, bool keep_trace,
				      struct po_error *err)
{
	enum rec_status status = rec_session_stop(session, err);
	struct po_error destroy_err = {{0}};
	enum rec_status destroy_status = rec_session_destroy(session, &destroy_err);

	if (status == REC_STATUS_OK && destroy_status != REC_STATUS_OK) {
		*err = destroy_err;
		status = destroy_status;
	}
	if (!keep_trace)
		rec_session_remove_output(session);
	return status;
}

/*
 * The live view ends with its session, after the trace is complete, and then writes the
 * trace's report. Its failure does not change the exit status (the command's): the trace
 * is whole, and profopt-analyze can be run on it again.
 */
static void finish_live(struct rec_live *live, bool trace_complete)
{
	int view = rec_live_finish(live, trace_complete);

	/* With an incomplete trace the view said itself that it wrote no report. */
	if (view > 0 && trace_complete)
		fprintf(stderr,
			"profopt-record: warning: the live view ended with status %d (its message "
			"is above); the trace is complete: profopt-analyze TRACE_DIR writes its "
			"report\n",
			view);
}

/*
 * The daemon failed to finish the trace. Where the cause is known, it is said instead of
 * liblttng-ctl's words: a daemon that ended ("No session daemon is available"), or a full
 * file system under the trace ("Rotation failure on consumer").
 */
static void say_finish_failure(const struct po_error *err, bool sessiond_ended, pid_t daemon_pid,
			       const char *trace_dir)
{
	struct statvfs room;

	if (sessiond_ended)
		fprintf(stderr,
			"profopt-record: error: the session daemon (pid %ld) ended while the "
			"command ran (killed, or it crashed): the trace in %s holds only what its "
			"consumer wrote before\n",
			(long)daemon_pid, trace_dir);
	else if (statvfs(trace_dir, &room) == 0 &&
		 (double)room.f_bavail * (double)room.f_frsize < REC_ROOM_LOW_BYTES)
		fprintf(stderr,
			"profopt-record: error: the session daemon could not finish writing the "
			"trace: the file system of %s is full (%.0f bytes left)\n",
			trace_dir, (double)room.f_bavail * (double)room.f_frsize);
	else
		fprintf(stderr, "profopt-record: %s\n", err->message);
}

/*
 * The recorder's CPU time while the command ran: profopt-record's and the session daemon's
 * with its consumer daemons, since the command started; unknown (-1) when either reading
 * failed (the daemon gone).
 */
static void recorder_cost(struct rec_recording *recording, pid_t daemon_pid)
{
	int64_t end_ns = rec_recorder_cpu_ns(daemon_pid);

	recording->recorder_cpu_ns =
	    recording->cpu_start_ns >= 0 && end_ns >= recording->cpu_start_ns
		? end_ns - recording->cpu_start_ns
		: -1;
}

/* Session, command, teardown; returns the command's exit status or profopt-record's own. */
static int record(const struct rec_options *options, struct rec_command *command,
		  struct rec_recording *recording)
{
	struct rec_session session;
	struct rec_live live = {.done_fd = -1};
	struct po_error err = {{0}}, finish_err = {{0}};
	enum rec_status status;
	int exit_code;

	pid_t daemon_pid = rec_sessiond_pid(); /* the daemon that records */
	pid_t recording_daemon;

	status = rec_session_create(&session, options, &err);
	if (status == REC_STATUS_OK)
		status = rec_session_start(&session, &err);
	if (status == REC_STATUS_OK && options->live)
		status = rec_live_start(&live, options, recording->id, session.output_dir, &err);
	if (status == REC_STATUS_OK && !options->per_process_buffers)
		status = rec_session_register_self(&err);
	if (status == REC_STATUS_OK && rec_signals_received()) {
		po_error_set(&err, "interrupted by SIG%s before the command started",
			     sigabbrev_np(rec_signals_received()));
		status = REC_STATUS_INTERRUPTED;
	}
	if (status == REC_STATUS_OK)
		status = rec_command_spawn(command, options, &err);
	if (status != REC_STATUS_OK) {
		enum rec_status finish_status = finish_session(&session, false, &finish_err);

		if (finish_status != REC_STATUS_OK && !daemon_gone(finish_status))
			fprintf(stderr, "profopt-record: %s\n", finish_err.message);
		if (options->live)
			rec_live_finish(&live, false);
		rec_session_fini(&session);
		return fail(status, &err);
	}
	recording->command_pid = command->pid;
	recording->start_ns = rec_monotonic_ns();
	recording_daemon = rec_sessiond_pid(); /* the session started it if none ran */
	recording->cpu_start_ns = rec_recorder_cpu_ns(recording_daemon);
	rec_recording_write(recording, session.output_dir);
	if (rec_signals_received())
		kill(command->pid, rec_signals_received());
	rec_command_wait(command);
	rec_ctl_signals_handled(); /* they were forwarded to the command */
	if (options->live)
		rec_live_hold_messages(&live); /* until the panel's last frame */
	exit_code = command->exit_status;
	recording->end_ns = rec_monotonic_ns();
	recording->exit_status = command->exit_status;
	recorder_cost(recording, recording_daemon);
	rec_recording_write(recording, session.output_dir);
	status = finish_session(&session, true, &err);
	if (daemon_gone(status)) {
		po_error_append(&err, "; the trace in %s may lack its end", session.output_dir);
		exit_code = fail(status, &err);
		notes_finish(session.output_dir);
	} else if (status != REC_STATUS_OK) {
		bool ended = daemon_pid > 0 && !rec_process_runs(daemon_pid);

		exit_code = rec_status_exit_code(status);
		say_finish_failure(&err, ended, daemon_pid, session.output_dir);
		/* the daemon failed to finish the trace: say what of it is there */
		report_recording(&session, recording, ended);
		notes_finish(session.output_dir);
	} else {
		if (session.destroy_timed_out)
			fprintf(stderr,
				"profopt-record: warning: the session daemon did not finish "
				"writing the trace within %d s (is a traced process hung?); the "
				"last packets may be missing\n",
				REC_DESTROY_TIMEOUT_MS / 1000);
		if (report_recording(&session, recording, false) && exit_code == 0)
			exit_code = rec_status_exit_code(REC_STATUS_TRACING);
		notes_finish(session.output_dir);
		/* With --live, stdout is the live view's (JSON lines when not a terminal). */
		fprintf(options->live ? stderr : stdout, "%s%s\n",
			options->live ? "profopt-record: trace: " : "", session.output_dir);
	}
	if (options->live)
		finish_live(&live, status == REC_STATUS_OK);
	rec_session_fini(&session);
	return exit_code;
}

/* What recorders that were killed left (leftovers.c): one line for each. */
static enum rec_status clean_leftovers(struct po_error *err)
{
	struct rec_leftovers leftovers;
	enum rec_status status = rec_leftovers_clean(&leftovers, err);

	for (int i = 0; i < leftovers.line_count; i++)
		fprintf(stderr, "profopt-record: %s\n", leftovers.lines[i]);
	return status;
}

/*
 * A daemon started here is stopped unless a session lives in it (another recording found
 * it running): then it is left running, in one line. One that did not answer in time was
 * named in the error line already.
 */
static void stop_sessiond(struct rec_sessiond *sessiond)
{
	pid_t pid = sessiond->pid;
	int sessions = 0;

	switch (rec_sessiond_stop(sessiond, &sessions)) {
	case REC_SESSIOND_SHARED:
		fprintf(stderr,
			"profopt-record: left the session daemon it started (pid %ld) running: %d "
			"other session(s) live in it\n",
			(long)pid, sessions);
		break;
	case REC_SESSIOND_UNANSWERED:
		if (rec_ctl_given_up() == REC_STATUS_SESSIOND_TIMEOUT)
			break;
		fprintf(stderr,
			"profopt-record: left the session daemon it started (pid %ld) running: it "
			"did not say whether other sessions live in it\n",
			(long)pid);
		break;
	case REC_SESSIOND_NOT_OURS:
	case REC_SESSIOND_STOPPED:
		break;
	}
}

int main(int argc, char **argv)
{
	struct rec_options options;
	struct rec_command command = {0};
	struct rec_sessiond sessiond;
	struct rec_recording recording;
	struct po_error err = {{0}};
	enum rec_status status;
	int exit_code;

	status = rec_options_parse(&options, argc, argv, &err);
	if (status != REC_STATUS_OK)
		return fail(status, &err);
	if (options.show_help) {
		rec_options_print_help();
		return 0;
	}
	if (options.show_version) {
		printf("profopt-record %s\n", PROFOPT_VERSION);
		return 0;
	}
	rec_ctl_init(options.sessiond_timeout_ms);
	if (options.check)
		return rec_check(&options);
	if (rec_scratch_create(&err) != REC_STATUS_OK)
		fprintf(stderr, "profopt-record: warning: %s; the processes cannot leave notes\n",
			err.message);
	notes_create();
	/*
	 * lttng-ust's base-address state dump lists every loaded object (with its build id)
	 * at each process's registration; a forked worker waits for it before it runs: 27-45 ms
	 * for a process that imported torch, against 8-17 ms without it. Only --heap (to
	 * symbolize allocation sites) and --stacks of a program that is no Python interpreter
	 * (to name a C program's sampled addresses; Python's samples name their objects
	 * themselves) need the addresses (rec_objects_named). A user's own setting is kept.
	 */
	if (!rec_objects_named(&options))
		setenv("LTTNG_UST_WITHOUT_BADDR_STATEDUMP", "1", 0);
	status = rec_recording_init(&recording, &err);
	if (status == REC_STATUS_OK)
		status = rec_command_resolve(&command, &options, &err);
	if (status == REC_STATUS_OK)
		status = rec_signals_install(&err);
	if (status == REC_STATUS_OK)
		status = rec_preflight(&err);
	if (status == REC_STATUS_OK)
		status = rec_sessiond_ensure(&sessiond, &err);
	if (status == REC_STATUS_OK) {
		status = clean_leftovers(&err);
		if (status != REC_STATUS_OK)
			stop_sessiond(&sessiond);
	}
	if (status != REC_STATUS_OK) {
		notes_finish(NULL);
		rec_scratch_remove();
		rec_command_fini(&command);
		return fail(status, &err);
	}
	exit_code = record(&options, &command, &recording);
	notes_finish(NULL); /* removes the notes file when record() did not */
	rec_scratch_remove();
	stop_sessiond(&sessiond);
	rec_command_fini(&command);
	fflush(stdout);
	return exit_code;
}
