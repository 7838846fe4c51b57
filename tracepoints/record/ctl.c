/*
 * ctl.c: every call into liblttng-ctl, with a deadline.
 *
 * liblttng-ctl waits for the session daemon's answer in a blocking recvmsg() with no
 * timeout, restarted on EINTR: a daemon that is stopped (SIGSTOP) or hung holds its caller
 * forever, and a signal only runs its handler. So each call runs in a child process forked
 * for it, which makes the liblttng-ctl calls and writes its result on a pipe; profopt-record
 * waits for that pipe with ppoll(), until a deadline and with SIGINT, SIGTERM and SIGHUP let
 * in, and then kills the child, which SIGKILL ends whatever it is blocked in.
 *
 * Why not the alternatives: a thread blocked in recvmsg() cannot be abandoned safely
 * (liblttng-ctl is not cancellation-safe, and the thread would hold its socket and heap),
 * and probing the daemon's client socket before each call proves nothing: connect()
 * succeeds on a stopped daemon (the kernel queues the connection in the listen backlog),
 * and a daemon can stop answering after any probe. liblttng-ctl opens a new connection for
 * each command, so nothing is lost between children; a fork costs about a millisecond and
 * a recording makes a few dozen calls.
 *
 * A call that timed out gives the daemon up: later calls fail at once with the same cause,
 * so a recorder facing a dead daemon waits once, not once per call left. A signal ends the
 * wait it arrives in (the caller then cleans up with further calls); a second signal gives
 * the daemon up too. Signals received while the command ran were for it: see
 * rec_ctl_signals_handled().
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "record.h"

#define CHILD_POLL_MS 50
#define REPLY_TAG_ACCEPTED 'a'
#define REPLY_TAG_RESULT 'r'

static struct {
	int timeout_ms;
	unsigned signals_seen; /* signals that already ended a wait, or were the command's */
	int interruptions;
	enum rec_status given_up; /* REC_STATUS_OK while the daemon is still asked */
	char given_up_cause[PO_ERROR_MAX];
} ctl = {.timeout_ms = REC_DEFAULT_SESSIOND_TIMEOUT_MS};

static int reply_fd = -1; /* in a call's child: its end of the pipe */

void rec_ctl_init(int timeout_ms)
{
	ctl.timeout_ms = timeout_ms > 0 ? timeout_ms : REC_DEFAULT_SESSIOND_TIMEOUT_MS;
}

int rec_ctl_timeout_ms(void)
{
	return ctl.timeout_ms;
}

void rec_ctl_signals_handled(void)
{
	ctl.signals_seen = rec_signals_count();
}

enum rec_status rec_ctl_given_up(void)
{
	return ctl.given_up;
}

void rec_ctl_daemon_name(char *text, size_t size)
{
	pid_t pid = rec_sessiond_pid();

	if (pid > 0)
		snprintf(text, size, "the session daemon (pid %ld)", (long)pid);
	else
		snprintf(text, size, "the session daemon (its pid file is missing)");
}

static int64_t now_ns(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

static bool new_signal(void)
{
	return rec_signals_count() != ctl.signals_seen;
}

enum wait_result { WAIT_READY, WAIT_TIMEOUT, WAIT_SIGNAL };

/*
 * Waits until fd (none when -1) is readable, deadline_ns passes or a new signal arrives.
 * The signals are blocked but between the check and ppoll(), which lets them in
 * atomically, so none is missed.
 */
static enum wait_result wait_readable(int fd, int64_t deadline_ns)
{
	struct pollfd readable = {.fd = fd, .events = POLLIN};
	sigset_t blocked, previous;
	enum wait_result result;

	sigemptyset(&blocked);
	sigaddset(&blocked, SIGINT);
	sigaddset(&blocked, SIGTERM);
	sigaddset(&blocked, SIGHUP);
	sigprocmask(SIG_BLOCK, &blocked, &previous);
	for (;;) {
		int64_t left_ns = deadline_ns - now_ns();
		struct timespec left = {.tv_sec = left_ns / 1000000000,
					.tv_nsec = left_ns % 1000000000};
		int ready;

		if (new_signal()) {
			result = WAIT_SIGNAL;
			break;
		}
		if (left_ns <= 0) {
			result = WAIT_TIMEOUT;
			break;
		}
		ready = ppoll(fd >= 0 ? &readable : NULL, fd >= 0 ? 1 : 0, &left, &previous);
		if (ready > 0 || (ready < 0 && errno != EINTR)) {
			result = WAIT_READY; /* an error is the read's to report */
			break;
		}
	}
	sigprocmask(SIG_SETMASK, &previous, NULL);
	return result;
}

/* A signal ended a wait: it is consumed; the second one gives the daemon up. */
static enum rec_status interrupted(const char *what, struct po_error *err)
{
	int signal_number = rec_signals_received();
	char daemon[128];

	const char *signal_name = sigabbrev_np(signal_number);

	rec_ctl_daemon_name(daemon, sizeof(daemon));
	po_error_set(err, "interrupted by SIG%s while waiting for %s to %s",
		     signal_name ? signal_name : "?", daemon, what);
	ctl.signals_seen = rec_signals_count();
	if (++ctl.interruptions >= 2 && ctl.given_up == REC_STATUS_OK) {
		ctl.given_up = REC_STATUS_INTERRUPTED;
		snprintf(ctl.given_up_cause, sizeof(ctl.given_up_cause), "%s", err->message);
	}
	return REC_STATUS_INTERRUPTED;
}

static enum rec_status timed_out(const char *what, struct po_error *err)
{
	char daemon[128];

	rec_ctl_daemon_name(daemon, sizeof(daemon));
	po_error_set(
	    err,
	    "%s did not answer within %g s when asked to %s: it is stopped or hung (resume "
	    "or restart it; %s sets the wait)",
	    daemon, ctl.timeout_ms / 1000.0, what, REC_SESSIOND_TIMEOUT_ENV);
	ctl.given_up = REC_STATUS_SESSIOND_TIMEOUT;
	snprintf(ctl.given_up_cause, sizeof(ctl.given_up_cause), "%s did not answer before",
		 daemon);
	return REC_STATUS_SESSIOND_TIMEOUT;
}

enum rec_status rec_ctl_pause(int ms, const char *what, struct po_error *err)
{
	if (wait_readable(-1, now_ns() + (int64_t)ms * 1000000) == WAIT_SIGNAL)
		return interrupted(what, err);
	return REC_STATUS_OK;
}

enum rec_status rec_ctl_wait_child(pid_t pid, int timeout_ms, int *wait_status,
				   struct po_error *err)
{
	int64_t deadline_ns = now_ns() + (int64_t)timeout_ms * 1000000;

	while (waitpid(pid, wait_status, WNOHANG) == 0) {
		int64_t next_ns = now_ns() + CHILD_POLL_MS * 1000000;

		switch (wait_readable(-1, next_ns < deadline_ns ? next_ns : deadline_ns)) {
		case WAIT_SIGNAL:
			return interrupted("start", err);
		case WAIT_TIMEOUT:
			if (now_ns() >= deadline_ns) {
				po_error_set(err, "no answer within %g s", timeout_ms / 1000.0);
				return REC_STATUS_SESSIOND_TIMEOUT;
			}
			break;
		case WAIT_READY:
			break;
		}
	}
	return REC_STATUS_OK;
}

void rec_ctl_accepted(void)
{
	char tag = REPLY_TAG_ACCEPTED;

	if (reply_fd >= 0 && write(reply_fd, &tag, 1) != 1) {
		/* The parent then waits for the result under the first deadline. */
	}
}

static void write_all(int fd, const void *data, size_t size)
{
	const char *bytes = data;

	while (size > 0) {
		ssize_t written = write(fd, bytes, size);

		if (written < 0 && errno == EINTR)
			continue;
		if (written <= 0)
			_exit(1);
		bytes += written;
		size -= (size_t)written;
	}
}

/*
 * In the child: the signals are the parent's to act on, and the child dies with the
 * parent, even one killed by SIGKILL.
 */
static void run_child(const struct rec_ctl_call *call, int fd, pid_t parent)
{
	struct po_error err = {{0}};
	int status;
	char tag = REPLY_TAG_RESULT;

	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1);
	reply_fd = fd;
	status = (int)call->run(call->context, &err);
	write_all(fd, &tag, 1);
	write_all(fd, &status, sizeof(status));
	write_all(fd, &err, sizeof(err));
	write_all(fd, call->context, call->context_size);
	_exit(0);
}

/* Reads size bytes before the deadline; a tag byte may move the deadline. */
static enum wait_result read_reply(int fd, void *data, size_t size, int64_t deadline_ns,
				   bool *ended)
{
	char *bytes = data;

	*ended = false;
	while (size > 0) {
		enum wait_result result = wait_readable(fd, deadline_ns);
		ssize_t got;

		if (result != WAIT_READY)
			return result;
		got = read(fd, bytes, size);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			*ended = true;
			return WAIT_READY;
		}
		bytes += got;
		size -= (size_t)got;
	}
	return WAIT_READY;
}

struct reply {
	int status;
	struct po_error err;
};

/* The child's answer: the accepted tag (optional), then the result and the context. */
static enum rec_status await_reply(const struct rec_ctl_call *call, int fd, struct po_error *err)
{
	int64_t deadline_ns = now_ns() + (int64_t)ctl.timeout_ms * 1000000;
	struct reply reply;
	enum wait_result result;
	bool ended = false;
	char tag = 0;

	for (;;) {
		result = read_reply(fd, &tag, 1, deadline_ns, &ended);
		if (result != WAIT_READY || ended || tag != REPLY_TAG_ACCEPTED)
			break;
		deadline_ns =
		    now_ns() + ((int64_t)call->accepted_wait_ms + ctl.timeout_ms) * 1000000;
	}
	if (result == WAIT_READY && !ended)
		result = read_reply(fd, &reply, sizeof(reply), deadline_ns, &ended);
	if (result == WAIT_READY && !ended)
		result = read_reply(fd, call->context, call->context_size, deadline_ns, &ended);
	if (result == WAIT_SIGNAL)
		return interrupted(call->what, err);
	if (result == WAIT_TIMEOUT)
		return timed_out(call->what, err);
	if (ended || tag != REPLY_TAG_RESULT) {
		po_error_set(err, "Failed to %s: the process that asked the daemon ended early",
			     call->what);
		return REC_STATUS_TRACING;
	}
	*err = reply.err;
	err->message[PO_ERROR_MAX - 1] = '\0';
	return (enum rec_status)reply.status;
}

enum rec_status rec_ctl_call(const struct rec_ctl_call *call, struct po_error *err)
{
	pid_t parent = getpid(), child;
	enum rec_status status;
	int reply[2];

	if (ctl.given_up != REC_STATUS_OK) {
		po_error_set(err, "Failed to %s: %s", call->what, ctl.given_up_cause);
		return ctl.given_up;
	}
	if (new_signal())
		return interrupted(call->what, err);
	if (pipe2(reply, O_CLOEXEC) == -1) {
		po_error_set(err, "Failed to %s: pipe: %s", call->what, strerror(errno));
		return REC_STATUS_TRACING;
	}
	child = fork();
	if (child == 0) {
		close(reply[0]);
		run_child(call, reply[1], parent);
	}
	close(reply[1]);
	if (child < 0) {
		close(reply[0]);
		po_error_set(err, "Failed to %s: fork: %s", call->what, strerror(errno));
		return REC_STATUS_TRACING;
	}
	status = await_reply(call, reply[0], err);
	close(reply[0]);
	kill(child, SIGKILL); /* it has answered and is exiting, or is abandoned */
	while (waitpid(child, NULL, 0) == -1 && errno == EINTR) {
	}
	return status;
}
