/*
 * sessiond.c: makes sure an LTTng session daemon answers, starting one when none does.
 * A daemon found running is left alone; one started here is stopped by its pid at the end.
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
#define POLL_INTERVAL_MS 50

void rec_sleep_ms(long ms)
{
	struct timespec delay = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};

	while (nanosleep(&delay, &delay) == -1 && errno == EINTR) {
	}
}

/* Where lttng-sessiond writes its pid: /run/lttng as root, else $LTTNG_HOME/.lttng. */
static pid_t read_daemon_pid(void)
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

/* Runs "lttng-sessiond --daemonize --no-kernel", which returns once the daemon is ready. */
static enum rec_status launch_daemon(struct po_error *err)
{
	char *const argv[] = {"lttng-sessiond", "--daemonize", "--no-kernel", NULL};
	char cause[512];
	int output[2];
	int wait_status;
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
		execvp(argv[0], argv);
		fprintf(stderr, "cannot run lttng-sessiond: %s\n", strerror(errno));
		_exit(127);
	}
	close(output[1]);
	while (waitpid(pid, &wait_status, 0) == -1 && errno == EINTR) {
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

enum rec_status rec_sessiond_ensure(struct rec_sessiond *sessiond, struct po_error *err)
{
	enum rec_status status;
	int waited_ms;

	*sessiond = (struct rec_sessiond){0};
	if (lttng_session_daemon_alive() == 1)
		return REC_STATUS_OK;
	fprintf(stderr, "profopt-record: no session daemon is running; starting lttng-sessiond\n");
	status = launch_daemon(err);
	if (status != REC_STATUS_OK) {
		po_error_prepend(err, "Failed to start a session daemon");
		return status;
	}
	sessiond->started_here = true;
	sessiond->pid = read_daemon_pid();
	for (waited_ms = 0; lttng_session_daemon_alive() != 1; waited_ms += POLL_INTERVAL_MS) {
		if (waited_ms >= SESSIOND_READY_TIMEOUT_MS) {
			po_error_set(err, "Failed to start a session daemon: no answer after %d s",
				     SESSIOND_READY_TIMEOUT_MS / 1000);
			return REC_STATUS_TRACING;
		}
		rec_sleep_ms(POLL_INTERVAL_MS);
	}
	fprintf(stderr, "profopt-record: session daemon started (pid %ld)\n", (long)sessiond->pid);
	return REC_STATUS_OK;
}

void rec_sessiond_stop(struct rec_sessiond *sessiond)
{
	int waited_ms;

	if (!sessiond->started_here || sessiond->pid <= 0)
		return;
	if (kill(sessiond->pid, SIGTERM) == -1)
		return;
	for (waited_ms = 0; kill(sessiond->pid, 0) == 0; waited_ms += POLL_INTERVAL_MS) {
		if (waited_ms >= SESSIOND_STOP_TIMEOUT_MS) {
			kill(sessiond->pid, SIGKILL);
			break;
		}
		rec_sleep_ms(POLL_INTERVAL_MS);
	}
	sessiond->pid = 0;
	sessiond->started_here = false;
}
