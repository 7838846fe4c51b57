/*
 * sessiond.c: makes sure an LTTng session daemon answers, starting one when none does.
 * A daemon found running is left alone, unless a profopt-record that is gone started it
 * (its environment says which, leftovers.c). One started here, or by a recorder that is
 * gone, is stopped by its pid at the end, but only when no session lives in it: another
 * profopt-record (or an lttng user) may have found it running and be recording in it.
 * Every question to the daemon is a call with a deadline (ctl.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <lttng/lttng.h>

#include "record.h"

#define SESSIOND_READY_TIMEOUT_MS 10000
#define SESSIOND_STOP_TIMEOUT_MS 10000
/* A daemon that did not answer gets this long to end on SIGTERM. */
#define SESSIOND_KILL_TIMEOUT_MS 1000
#define POLL_INTERVAL_MS 50

void rec_sleep_ms(long ms)
{
	struct timespec delay = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};

	while (nanosleep(&delay, &delay) == -1 && errno == EINTR) {
	}
}

/* Where lttng-sessiond writes its pid: /run/lttng as root, else $LTTNG_HOME/.lttng. */
pid_t rec_sessiond_pid(void)
{
	char path[PATH_MAX];
	const char *home = getenv("LTTNG_HOME");
	FILE *file;
	long pid = 0;

	if (!home || !*home)
		home = getenv("HOME");
	if (geteuid() == 0)
		snprintf(path, sizeof(path), "/run/lttng/lttng-sessiond.pid");
	else
		snprintf(path, sizeof(path), "%s/.lttng/lttng-sessiond.pid", home ? home : "");
	file = fopen(path, "r");
	if (!file)
		return 0;
	if (fscanf(file, "%ld", &pid) != 1)
		pid = 0;
	fclose(file);
	return pid > 0 ? (pid_t)pid : 0;
}

/* The last non-empty line the launcher wrote, for the error message. */
static void last_line(int fd, char *line, size_t size)
{
	char buffer[4096];
	ssize_t length = read(fd, buffer, sizeof(buffer) - 1);
	char *start;

	line[0] = '\0';
	if (length <= 0)
		return;
	buffer[length] = '\0';
	while (length > 0 && (buffer[length - 1] == '\n' || buffer[length - 1] == ' '))
		buffer[--length] = '\0';
	start = strrchr(buffer, '\n');
	start = start ? start + 1 : buffer;
	if (strlen(start) >= size)
		start[size - 1] = '\0';
	memcpy(line, start, strlen(start) + 1);
}

/*
 * Runs "lttng-sessiond --daemonize --no-kernel", which returns once the daemon is ready;
 * a launcher that does not return within the deadline is killed.
 */
static enum rec_status launch_daemon(struct po_error *err)
{
	char *const argv[] = {"lttng-sessiond", "--daemonize", "--no-kernel", NULL};
	char cause[512];
	enum rec_status status;
	int output[2];
	int wait_status = 0;
	pid_t pid;

	if (pipe2(output, O_CLOEXEC) == -1) {
		po_error_set(err, "pipe: %s", strerror(errno));
		return REC_STATUS_TRACING;
	}
	pid = fork();
	if (pid == -1) {
		po_error_set(err, "fork: %s", strerror(errno));
		close(output[0]);
		close(output[1]);
		return REC_STATUS_TRACING;
	}
	if (pid == 0) {
		dup2(output[1], STDOUT_FILENO);
		dup2(output[1], STDERR_FILENO);
		/* the mark that lets a later recorder stop it if this one is killed */
		setenv(REC_SESSIOND_OWNER_ENV, rec_owner_tag(), 1);
		execvp(argv[0], argv);
		fprintf(stderr, "cannot run lttng-sessiond: %s\n", strerror(errno));
		_exit(127);
	}
	close(output[1]);
	status = rec_ctl_wait_child(pid, rec_ctl_timeout_ms(), &wait_status, err);
	if (status != REC_STATUS_OK) {
		kill(pid, SIGKILL);
		while (waitpid(pid, NULL, 0) == -1 && errno == EINTR) {
		}
		close(output[0]);
		if (status == REC_STATUS_SESSIOND_TIMEOUT)
			po_error_prepend(err, "lttng-sessiond --daemonize");
		return status;
	}
	fcntl(output[0], F_SETFL, O_NONBLOCK);
	last_line(output[0], cause, sizeof(cause));
	close(output[0]);
	if (!WIFEXITED(wait_status) || WEXITSTATUS(wait_status) != 0) {
		po_error_set(err, "lttng-sessiond exited with status %d%s%s",
			     WIFEXITED(wait_status) ? WEXITSTATUS(wait_status)
						    : 128 + WTERMSIG(wait_status),
			     cause[0] ? ": " : "", cause);
		return REC_STATUS_TRACING;
	}
	return REC_STATUS_OK;
}

struct probe {
	int session_count; /* -1: no daemon runs */
};

/* In the call's child: a round trip, so that a daemon that accepts but never answers
 * (stopped, hung) is not taken for one that works. */
static enum rec_status probe_run(void *context, struct po_error *err)
{
	struct probe *probe = context;
	struct lttng_session *sessions = NULL;
	int count;

	probe->session_count = -1;
	if (lttng_session_daemon_alive() != 1)
		return REC_STATUS_OK;
	count = lttng_list_sessions(&sessions);
	free(sessions);
	if (count == -LTTNG_ERR_NO_SESSIOND)
		return REC_STATUS_OK;
	if (count < 0) {
		po_error_set(err, "Failed to list the daemon's sessions: %s",
			     lttng_strerror(count));
		return REC_STATUS_TRACING;
	}
	probe->session_count = count;
	return REC_STATUS_OK;
}

enum rec_status rec_sessiond_probe(int *session_count, struct po_error *err)
{
	struct probe probe = {.session_count = -1};
	const struct rec_ctl_call call = {
	    .what = "list its sessions",
	    .run = probe_run,
	    .context = &probe,
	    .context_size = sizeof(probe),
	};
	enum rec_status status = rec_ctl_call(&call, err);

	*session_count = probe.session_count;
	return status;
}

/* After the launcher returned: the daemon answers, or the wait gives up. */
static enum rec_status wait_ready(struct po_error *err)
{
	enum rec_status status;
	int waited_ms, sessions = -1;

	for (waited_ms = 0;; waited_ms += POLL_INTERVAL_MS) {
		status = rec_sessiond_probe(&sessions, err);
		if (status != REC_STATUS_OK || sessions >= 0)
			return status;
		if (waited_ms >= SESSIOND_READY_TIMEOUT_MS) {
			po_error_set(err, "no answer after %d s", SESSIOND_READY_TIMEOUT_MS / 1000);
			return REC_STATUS_TRACING;
		}
		status = rec_ctl_pause(POLL_INTERVAL_MS, "start", err);
		if (status != REC_STATUS_OK)
			return status;
	}
}

/*
 * A daemon cannot start where it cannot write its sockets and pid file; lttng-sessiond
 * then says "A session daemon is already running", which is not the cause.
 */
static enum rec_status launch_daemon_where_possible(struct po_error *err)
{
	char cause[PATH_MAX + 64];

	if (rec_sessiond_dir_unwritable(cause, sizeof(cause))) {
		po_error_set(err,
			     "%s: lttng-sessiond writes its sockets and pid file there (mount it "
			     "read-write, or start a session daemon that can)",
			     cause);
		return REC_STATUS_TRACING;
	}
	return launch_daemon(err);
}

static enum rec_status ensure(struct rec_sessiond *sessiond, bool say, struct po_error *err)
{
	enum rec_status status;
	int sessions = -1;

	*sessiond = (struct rec_sessiond){0};
	status = rec_sessiond_probe(&sessions, err);
	if (status != REC_STATUS_OK || sessions >= 0)
		return status;
	if (say)
		fprintf(stderr,
			"profopt-record: no session daemon is running; starting lttng-sessiond\n");
	status = launch_daemon_where_possible(err);
	if (status == REC_STATUS_OK) {
		sessiond->started_here = true;
		sessiond->pid = rec_sessiond_pid();
		status = wait_ready(err);
	}
	if (status != REC_STATUS_OK) {
		if (status != REC_STATUS_INTERRUPTED)
			po_error_prepend(err, "Failed to start a session daemon");
		return status;
	}
	if (say)
		fprintf(stderr, "profopt-record: session daemon started (pid %ld)\n",
			(long)sessiond->pid);
	return REC_STATUS_OK;
}

enum rec_status rec_sessiond_ensure(struct rec_sessiond *sessiond, struct po_error *err)
{
	return ensure(sessiond, true, err);
}

enum rec_status rec_sessiond_ensure_quietly(struct rec_sessiond *sessiond, struct po_error *err)
{
	return ensure(sessiond, false, err);
}

/* SIGTERM, then SIGKILL after timeout_ms or at a signal; a zombie has ended. */
static void terminate(pid_t pid, int timeout_ms)
{
	struct po_error ignored = {{0}};
	int waited_ms;

	if (kill(pid, SIGTERM) == -1)
		return;
	for (waited_ms = 0; rec_process_runs(pid); waited_ms += POLL_INTERVAL_MS) {
		if (waited_ms >= timeout_ms ||
		    rec_ctl_pause(POLL_INTERVAL_MS, "stop", &ignored) != REC_STATUS_OK) {
			kill(pid, SIGKILL);
			break;
		}
	}
}

enum rec_sessiond_end rec_sessiond_stop(struct rec_sessiond *sessiond, int *other_sessions)
{
	struct po_error err = {{0}};
	int sessions = -1;
	bool orphan = false;

	*other_sessions = 0;
	if (!sessiond->started_here) {
		/* one that a recorder which is gone started is this one's to stop, when unused */
		sessiond->pid = rec_sessiond_orphaned();
		orphan = true;
	}
	if (sessiond->pid <= 0)
		return REC_SESSIOND_NOT_OURS;
	/*
	 * This recording's session is destroyed by now: any session listed is someone else's.
	 * One created between this question and SIGTERM is still cut; see docs/robustness.md.
	 */
	if (rec_sessiond_probe(&sessions, &err) != REC_STATUS_OK)
		return orphan ? REC_SESSIOND_NOT_OURS : REC_SESSIOND_UNANSWERED;
	if (sessions > 0) {
		*other_sessions = sessions;
		return orphan ? REC_SESSIOND_NOT_OURS : REC_SESSIOND_SHARED;
	}
	if (sessions == 0)
		terminate(sessiond->pid, SESSIOND_STOP_TIMEOUT_MS);
	sessiond->pid = 0;
	sessiond->started_here = false;
	return REC_SESSIOND_STOPPED;
}

void rec_sessiond_terminate(struct rec_sessiond *sessiond)
{
	if (sessiond->started_here && sessiond->pid > 0)
		terminate(sessiond->pid, SESSIOND_KILL_TIMEOUT_MS);
	sessiond->pid = 0;
	sessiond->started_here = false;
}
