/*
 * live.c: profopt-record --live. Besides the recording session (session.c), a second
 * session streams the same events through lttng-relayd to profopt-analyze --live, which
 * shows the run while it records and raises alerts (docs/live.md).
 *
 * Two sessions rather than one: the live session must use per-user buffers (with
 * per-process buffers, LTTng 2.13's live viewer loses the processes that start after it
 * attached), while the recording keeps whatever --buffers asks for, and the trace
 * directory stays the same as without --live.
 *
 * The relay is always a private one, started here on three ports of 127.0.0.1 that the
 * kernel chose, writing its own copy of the stream into a scratch directory, and stopped by
 * its pid at the end. Whatever listens on the standard ports (5342-5344), another user's
 * relay or any other program, is never used: the stream goes to a relay only once every
 * listener on its ports is proved to be a socket of the relay started here (/proc). Both
 * children die with profopt-record (PR_SET_PDEATHSIG), so even a profopt-record killed by
 * SIGKILL leaves neither behind. Every wait has a deadline, and a signal ends it.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <lttng/lttng.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "record.h"

enum { RELAY_CONTROL, RELAY_DATA, RELAY_LIVE };
#define RELAY_START_TRIES 3
#define RELAY_READY_TIMEOUT_MS 10000
#define RELAY_STOP_TIMEOUT_MS 10000
/* The relay's sockets looked at when telling its listeners from others. */
#define RELAY_SOCKETS_MAX 512
/* How long the live view may take to attach before the command starts without it. */
#define VIEWER_READY_TIMEOUT_MS 15000
/*
 * How long the view may take to end once it was sent a signal, or when it has no report to
 * write (the recording did not complete), before it is killed.
 */
#define VIEWER_SIGNALED_TIMEOUT_MS 10000
#define VIEWER_NO_REPORT_TIMEOUT_MS 30000
#define POLL_INTERVAL_MS 20

static int64_t monotonic_ms(void)
{
	return rec_monotonic_ns() / 1000000;
}

static int remove_entry(const char *path, const struct stat *info, int type, struct FTW *walk)
{
	(void)info;
	(void)walk;
	return type == FTW_DP ? rmdir(path) : unlink(path);
}

/* Stops a child: SIGTERM, then SIGKILL after timeout_ms; reaps it. */
static int stop_child(pid_t pid, int timeout_ms)
{
	int wait_status = 0, waited;

	if (pid <= 0)
		return -1;
	kill(pid, SIGTERM);
	for (waited = 0; waitpid(pid, &wait_status, WNOHANG) == 0; waited += POLL_INTERVAL_MS) {
		if (waited >= timeout_ms) {
			kill(pid, SIGKILL);
			while (waitpid(pid, &wait_status, 0) == -1 && errno == EINTR) {
			}
			break;
		}
		rec_sleep_ms(POLL_INTERVAL_MS);
	}
	return wait_status;
}

/* Three distinct free ports of 127.0.0.1, chosen by the kernel (a bind to port 0). */
static enum rec_status choose_ports(int ports[REC_RELAY_PORTS], struct po_error *err)
{
	int fds[REC_RELAY_PORTS] = {-1, -1, -1};
	enum rec_status status = REC_STATUS_OK;

	for (int i = 0; i < REC_RELAY_PORTS && status == REC_STATUS_OK; i++) {
		struct sockaddr_in address = {.sin_family = AF_INET};
		socklen_t length = sizeof(address);

		address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fds[i] < 0 || bind(fds[i], (struct sockaddr *)&address, sizeof(address)) != 0 ||
		    getsockname(fds[i], (struct sockaddr *)&address, &length) != 0) {
			po_error_set(err, "--live: cannot choose a port of 127.0.0.1: %s",
				     strerror(errno));
			status = REC_STATUS_TRACING;
		} else {
			ports[i] = ntohs(address.sin_port);
		}
	}
	for (int i = 0; i < REC_RELAY_PORTS; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return status;
}

/* The inodes of the sockets process pid holds (/proc/PID/fd); their number. */
static size_t socket_inodes(pid_t pid, unsigned long *inodes, size_t capacity)
{
	char path[64];
	struct dirent *entry;
	size_t count = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%ld/fd", (long)pid);
	dir = opendir(path);
	if (!dir)
		return 0;
	while ((entry = readdir(dir)) && count < capacity) {
		char target[64];
		ssize_t length = readlinkat(dirfd(dir), entry->d_name, target, sizeof(target) - 1);

		if (length <= 0)
			continue;
		target[length] = '\0';
		if (sscanf(target, "socket:[%lu]", &inodes[count]) == 1)
			count++;
	}
	closedir(dir);
	return count;
}

/* A TCP socket listening on a port of the relay's (/proc/net/tcp, tcp6). */
struct listener {
	int port_index; /* in relay_ports */
	unsigned long inode;
};

/* The listeners on the relay's ports in this network namespace, at most capacity. */
static size_t relay_port_listeners(const struct rec_live *live, struct listener *listeners,
				   size_t capacity)
{
	static const char *const tables[] = {"/proc/net/tcp", "/proc/net/tcp6"};
	size_t count = 0;

	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++) {
		FILE *table = fopen(tables[t], "re");
		char line[512];

		while (table && count < capacity && fgets(line, sizeof(line), table)) {
			unsigned port, state;
			unsigned long inode;

			if (sscanf(
				line,
				" %*u: %*[0-9A-Fa-f]:%X %*[0-9A-Fa-f]:%*X %X %*X:%*X %*X:%*X %*X "
				"%*u %*u %lu",
				&port, &state, &inode) != 3 ||
			    state != 0x0A /* LISTEN */)
				continue;
			for (int i = 0; i < REC_RELAY_PORTS; i++)
				if (port == (unsigned)live->relay_ports[i])
					listeners[count++] = (struct listener){i, inode};
		}
		if (table)
			fclose(table);
	}
	return count;
}

enum port_holder { PORT_FREE, PORT_RELAY, PORT_OTHER };

/*
 * Who listens on the relay's ports: the relay on all three (every listener there is one of
 * its sockets), another process on one, or not yet the relay on all. The listeners are read
 * before the relay's sockets: a socket is the relay's before it listens, so a listener of
 * the relay's is never taken for another's.
 */
static enum port_holder relay_listening(const struct rec_live *live, int *listening)
{
	struct listener listeners[RELAY_SOCKETS_MAX];
	unsigned long inodes[RELAY_SOCKETS_MAX];
	size_t listener_count = relay_port_listeners(live, listeners, RELAY_SOCKETS_MAX);
	size_t inode_count = socket_inodes(live->relay_pid, inodes, RELAY_SOCKETS_MAX);
	bool port_held[REC_RELAY_PORTS] = {false};

	*listening = 0;
	for (size_t l = 0; l < listener_count; l++) {
		bool ours = false;

		for (size_t i = 0; i < inode_count && !ours; i++)
			ours = inodes[i] == listeners[l].inode;
		if (!ours)
			return PORT_OTHER;
		*listening += !port_held[listeners[l].port_index];
		port_held[listeners[l].port_index] = true;
	}
	return *listening == REC_RELAY_PORTS ? PORT_RELAY : PORT_FREE;
}

static void relay_log_path(const struct rec_live *live, char *path, size_t size)
{
	snprintf(path, size, "%s/relayd.log", live->relay_dir);
}

static enum rec_status spawn_relay(struct rec_live *live, struct po_error *err)
{
	char url[REC_RELAY_PORTS][64], log_path[PATH_MAX + 16];
	int log_fd;
	pid_t pid;

	for (int i = 0; i < REC_RELAY_PORTS; i++)
		snprintf(url[i], sizeof(url[i]), "tcp://127.0.0.1:%d", live->relay_ports[i]);
	relay_log_path(live, log_path, sizeof(log_path));
	log_fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	pid = fork();
	if (pid < 0) {
		po_error_set(err, "--live: fork: %s", strerror(errno));
		if (log_fd >= 0)
			close(log_fd);
		return REC_STATUS_TRACING;
	}
	if (pid == 0) {
		char output[PATH_MAX + 16];

		prctl(PR_SET_PDEATHSIG, SIGTERM);
		setpgid(0, 0); /* a Ctrl-C for the command is not the relay's */
		if (log_fd >= 0) {
			dup2(log_fd, STDOUT_FILENO);
			dup2(log_fd, STDERR_FILENO);
		}
		snprintf(output, sizeof(output), "%s/streams", live->relay_dir);
		execlp("lttng-relayd", "lttng-relayd", "-C", url[RELAY_CONTROL], "-D",
		       url[RELAY_DATA], "-L", url[RELAY_LIVE], "-o", output, (char *)NULL);
		fprintf(stderr, "cannot run lttng-relayd: %s\n", strerror(errno));
		_exit(127);
	}
	if (log_fd >= 0)
		close(log_fd);
	live->relay_pid = pid;
	return REC_STATUS_OK;
}

/* The relay exited before it listened: *again unless it could not be run at all. */
static enum rec_status relay_exited(struct rec_live *live, int wait_status, bool *again,
				    struct po_error *err)
{
	char log_path[PATH_MAX + 16];
	int code = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + WTERMSIG(wait_status);

	relay_log_path(live, log_path, sizeof(log_path));
	live->relay_pid = 0;
	*again = code != 127;
	po_error_set(
	    err,
	    "--live: lttng-relayd exited with status %d before it listened (see its log, %s%s)",
	    code, log_path, code == 127 ? "; is lttng-relayd installed?" : "");
	return REC_STATUS_TRACING;
}

/*
 * Waits until the relay listens on its three ports, and no other process on any of them.
 * *again: it failed in a way that other ports may not (a port was taken between the choice
 * and the relay's bind: the relay then exits, or another process listens there too).
 */
static enum rec_status wait_relay_listening(struct rec_live *live, bool *again,
					    struct po_error *err)
{
	int64_t deadline = monotonic_ms() + RELAY_READY_TIMEOUT_MS;
	int listening, wait_status;

	*again = false;
	for (;;) {
		enum port_holder holder = relay_listening(live, &listening);

		if (holder == PORT_RELAY)
			return REC_STATUS_OK;
		*again = holder == PORT_OTHER;
		if (holder == PORT_OTHER) {
			po_error_set(err,
				     "--live: another process listens on a port chosen for "
				     "lttng-relayd (127.0.0.1:%d, %d, %d)",
				     live->relay_ports[0], live->relay_ports[1],
				     live->relay_ports[2]);
			return REC_STATUS_TRACING;
		}
		if (waitpid(live->relay_pid, &wait_status, WNOHANG) == live->relay_pid)
			return relay_exited(live, wait_status, again, err);
		if (rec_signals_received()) {
			po_error_set(err, "interrupted by SIG%s while waiting for lttng-relayd",
				     sigabbrev_np(rec_signals_received()));
			return REC_STATUS_INTERRUPTED;
		}
		if (monotonic_ms() >= deadline) {
			char log_path[PATH_MAX + 16];

			relay_log_path(live, log_path, sizeof(log_path));
			po_error_set(err,
				     "--live: lttng-relayd (pid %ld) listened on %d of its 3 ports "
				     "within %d s (see its log, %s)",
				     (long)live->relay_pid, listening,
				     RELAY_READY_TIMEOUT_MS / 1000, log_path);
			return REC_STATUS_TRACING;
		}
		rec_sleep_ms(POLL_INTERVAL_MS);
	}
}

/*
 * A private relay on ports the kernel chose; a port taken by another process meanwhile
 * makes it try again on others, RELAY_START_TRIES times in all.
 */
static enum rec_status start_relay(struct rec_live *live, struct po_error *err)
{
	enum rec_status status = REC_STATUS_OK;
	bool again = true;

	/* in the scratch directory, which the next recorder removes if this one is killed */
	snprintf(live->relay_dir, sizeof(live->relay_dir), "%.600s/relayd",
		 rec_scratch_dir() ? rec_scratch_dir() : "");
	if (!rec_scratch_dir() || mkdir(live->relay_dir, 0700) != 0) {
		po_error_set(err, "--live: cannot make a directory for lttng-relayd: %s",
			     rec_scratch_dir() ? strerror(errno) : "no scratch directory");
		live->relay_dir[0] = '\0';
		return REC_STATUS_TRACING;
	}
	for (int tries = 0; again && tries < RELAY_START_TRIES; tries++) {
		if (live->relay_pid > 0)
			stop_child(live->relay_pid, RELAY_STOP_TIMEOUT_MS);
		live->relay_pid = 0;
		status = choose_ports(live->relay_ports, err);
		if (status == REC_STATUS_OK)
			status = spawn_relay(live, err);
		if (status != REC_STATUS_OK)
			return status;
		status = wait_relay_listening(live, &again, err);
		if (status == REC_STATUS_OK) {
			fprintf(stderr,
				"profopt-record: lttng-relayd started on 127.0.0.1:%d, %d, %d (pid "
				"%ld)\n",
				live->relay_ports[RELAY_CONTROL], live->relay_ports[RELAY_DATA],
				live->relay_ports[RELAY_LIVE], (long)live->relay_pid);
			return REC_STATUS_OK;
		}
	}
	live->keep_relay_dir = status != REC_STATUS_INTERRUPTED;
	return status;
}

struct live_create_call {
	const char *name; /* weak: the live session's */
	unsigned timer_us;
	int control_port, data_port;
};

/* In the call's child (ctl.c). */
static enum rec_status live_create_run(void *context, struct po_error *err)
{
	const struct live_create_call *call = context;
	struct lttng_session_descriptor *descriptor;
	char control[64], data[64];
	enum lttng_error_code code;

	snprintf(control, sizeof(control), "tcp://127.0.0.1:%d", call->control_port);
	snprintf(data, sizeof(data), "tcp://127.0.0.1:%d", call->data_port);
	descriptor =
	    lttng_session_descriptor_live_network_create(call->name, control, data, call->timer_us);
	if (!descriptor) {
		po_error_set(err, "--live: out of memory");
		return REC_STATUS_NOMEM;
	}
	code = lttng_create_session_ext(descriptor);
	lttng_session_descriptor_destroy(descriptor);
	if (code != LTTNG_OK) {
		po_error_set(err,
			     "--live: cannot create the live session (relay at 127.0.0.1:%d): %s",
			     call->control_port, lttng_strerror(-(int)code));
		return REC_STATUS_TRACING;
	}
	return REC_STATUS_OK;
}

static enum rec_status live_start_run(void *context, struct po_error *err)
{
	if (lttng_start_tracing(context) < 0) {
		po_error_set(err, "--live: cannot start the live session");
		return REC_STATUS_TRACING;
	}
	return REC_STATUS_OK;
}

static enum rec_status create_session(struct rec_live *live, const struct rec_options *options,
				      struct po_error *err)
{
	struct rec_options live_options = *options;
	struct live_create_call create = {.name = live->session,
					  .timer_us = options->live_timer_us,
					  .control_port = live->relay_ports[RELAY_CONTROL],
					  .data_port = live->relay_ports[RELAY_DATA]};
	const struct rec_ctl_call create_call = {.what = "create the live session",
						 .run = live_create_run,
						 .context = &create,
						 .context_size = sizeof(create)};
	const struct rec_ctl_call start_call = {.what = "start the live session",
						.run = live_start_run,
						.context = live->session,
						.context_size = 0};
	char host[HOST_NAME_MAX + 1] = "";
	enum rec_status status;

	snprintf(live->session, sizeof(live->session), "profopt-live-%s", rec_owner_tag());
	status = rec_ctl_call(&create_call, err);
	/* A call abandoned midway may have created it: destroying it then is harmless. */
	live->session_created = status != REC_STATUS_TRACING && status != REC_STATUS_NOMEM;
	if (status != REC_STATUS_OK)
		return status;
	live_options.per_process_buffers = false;
	status = rec_session_configure(live->session, &live_options, err);
	if (status != REC_STATUS_OK) {
		po_error_prepend(err, "--live");
		return status;
	}
	status = rec_ctl_call(&start_call, err);
	if (status != REC_STATUS_OK)
		return status;
	gethostname(host, sizeof(host) - 1);
	snprintf(live->url, sizeof(live->url), "net://127.0.0.1:%d/host/%s/%s",
		 live->relay_ports[RELAY_LIVE], host, live->session);
	return REC_STATUS_OK;
}

/* profopt-analyze beside this program, or else the one on PATH. */
static void analyzer_path(char *path, size_t size)
{
	char self[PATH_MAX];
	ssize_t length = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (length > 0) {
		self[length] = '\0';
		slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			if ((size_t)snprintf(path, size, "%s/profopt-analyze", self) < size &&
			    access(path, X_OK) == 0)
				return;
		}
	}
	snprintf(path, size, "profopt-analyze");
}

/*
 * The view closed its ready pipe without attaching: it ended, or is about to. A view that
 * refused what it was given (a bad --set, its --alerts target, a TRACE-report it may not
 * write: exit 2) stops the recording before the command runs; otherwise recording goes on.
 */
static enum rec_status view_ended_first(struct rec_live *live, struct po_error *err)
{
	int wait_status = 0;
	pid_t done = 0;

	for (int waited = 0; waited < 1000 && done == 0; waited += POLL_INTERVAL_MS) {
		done = waitpid(live->viewer_pid, &wait_status, WNOHANG);
		if (done == 0)
			rec_sleep_ms(POLL_INTERVAL_MS);
	}
	if (done != live->viewer_pid) {
		fprintf(stderr, "profopt-record: warning: the live view did not attach (it says "
				"why above); recording goes on\n");
		return REC_STATUS_OK;
	}
	live->viewer_pid = 0;
	if (WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 2) {
		po_error_set(err, "--live: the live view refused to start (its message is above); "
				  "the command was not run");
		return REC_STATUS_USAGE;
	}
	fprintf(stderr,
		"profopt-record: warning: the live view ended with status %d before it attached "
		"(its message is above); recording goes on without it\n",
		WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + WTERMSIG(wait_status));
	return REC_STATUS_OK;
}

/* Waits for the view's byte on the ready pipe (it attached), a deadline or a signal. */
static enum rec_status wait_attached(struct rec_live *live, int ready_fd, struct po_error *err)
{
	int64_t deadline = monotonic_ms() + VIEWER_READY_TIMEOUT_MS;
	struct pollfd waiting = {.fd = ready_fd, .events = POLLIN};
	char byte;

	for (;;) {
		if (poll(&waiting, 1, 5 * POLL_INTERVAL_MS) > 0)
			return read(ready_fd, &byte, 1) == 1 ? REC_STATUS_OK
							     : view_ended_first(live, err);
		if (rec_signals_received()) {
			po_error_set(err, "interrupted by SIG%s while waiting for the live view",
				     sigabbrev_np(rec_signals_received()));
			return REC_STATUS_INTERRUPTED;
		}
		if (monotonic_ms() >= deadline) {
			fprintf(
			    stderr,
			    "profopt-record: warning: the live view did not attach within %d s; "
			    "recording goes on\n",
			    VIEWER_READY_TIMEOUT_MS / 1000);
			return REC_STATUS_OK;
		}
	}
}

static enum rec_status start_viewer(struct rec_live *live, const struct rec_options *options,
				    const char *recording_id, const char *trace_dir,
				    struct po_error *err)
{
	char path[PATH_MAX], every[32], ready[16], done[16];
	const char *argv[28 + 2 * REC_LIVE_SETS_MAX];
	int ready_pipe[2], done_pipe[2], argc = 0;
	enum rec_status status;
	pid_t pid;

	if (pipe2(ready_pipe, O_CLOEXEC) != 0) {
		po_error_set(err, "--live: pipe: %s", strerror(errno));
		return REC_STATUS_TRACING;
	}
	if (pipe2(done_pipe, O_CLOEXEC) != 0) {
		po_error_set(err, "--live: pipe: %s", strerror(errno));
		close(ready_pipe[0]);
		close(ready_pipe[1]);
		return REC_STATUS_TRACING;
	}
	analyzer_path(path, sizeof(path));
	snprintf(every, sizeof(every), "%g", options->live_every_s);
	argv[argc++] = "profopt-analyze";
	argv[argc++] = "--live";
	argv[argc++] = live->url;
	argv[argc++] = "--recording";
	argv[argc++] = recording_id;
	argv[argc++] = "--every";
	argv[argc++] = every;
	argv[argc++] = "--ready-fd";
	argv[argc++] = ready;
	argv[argc++] = "--trace-done-fd";
	argv[argc++] = done;
	if (options->live_alerts) {
		argv[argc++] = "--alerts";
		argv[argc++] = options->live_alerts;
	}
	for (int i = 0; i < options->live_set_count; i++) {
		argv[argc++] = "--set";
		argv[argc++] = options->live_sets[i];
	}
	if (options->live_on_alert) {
		argv[argc++] = "--on-alert";
		argv[argc++] = options->live_on_alert;
	}
	argv[argc++] = "-o";
	argv[argc++] = live->report_dir;
	argv[argc++] = trace_dir;
	argv[argc] = NULL;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		po_error_set(err, "--live: fork: %s", strerror(errno));
		close(ready_pipe[0]);
		close(ready_pipe[1]);
		close(done_pipe[0]);
		close(done_pipe[1]);
		return REC_STATUS_TRACING;
	}
	if (pid == 0) {
		int fd = fcntl(ready_pipe[1], F_DUPFD, 3); /* without O_CLOEXEC */

		snprintf(done, sizeof(done), "%d", fcntl(done_pipe[0], F_DUPFD, 3));

		prctl(PR_SET_PDEATHSIG, SIGTERM);
		/* Its own process group: Ctrl-C is for the command; the view ends with the
		 * session, after the command. */
		setpgid(0, 0);
		snprintf(ready, sizeof(ready), "%d", fd);
		unsetenv("LD_PRELOAD");
		execvp(path, (char *const *)argv);
		fprintf(stderr, "profopt-record: cannot run %s: %s\n", path, strerror(errno));
		_exit(127);
	}
	close(ready_pipe[1]);
	close(done_pipe[0]);
	live->done_fd = done_pipe[1];
	live->viewer_pid = pid;
	status = wait_attached(live, ready_pipe[0], err);
	close(ready_pipe[0]);
	return status;
}

enum rec_status rec_live_start(struct rec_live *live, const struct rec_options *options,
			       const char *recording_id, const char *trace_dir,
			       struct po_error *err)
{
	enum rec_status status = REC_STATUS_OK;
	size_t length = strlen(trace_dir);

	*live = (struct rec_live){.done_fd = -1};
	while (length > 1 && trace_dir[length - 1] == '/')
		length--;
	if ((size_t)snprintf(live->report_dir, sizeof(live->report_dir), "%.*s-report", (int)length,
			     trace_dir) >= sizeof(live->report_dir)) {
		po_error_set(err, "--live: the trace path is too long");
		return REC_STATUS_USAGE;
	}
	status = start_relay(live, err);
	if (status == REC_STATUS_OK)
		status = create_session(live, options, err);
	if (status == REC_STATUS_OK)
		status = start_viewer(live, options, recording_id, trace_dir, err);
	return status;
}

/* Tells the view whether the trace is complete (it writes the report only if it is). */
static void tell_trace_done(struct rec_live *live, bool complete)
{
	struct sigaction ignore = {.sa_handler = SIG_IGN}, previous;
	ssize_t written;

	if (live->done_fd < 0)
		return;
	/* A view that has ended already closed its end: EPIPE, not a signal. */
	sigaction(SIGPIPE, &ignore, &previous);
	if (complete) {
		do
			written = write(live->done_fd, "complete\n", 9);
		while (written < 0 && errno == EINTR);
	}
	close(live->done_fd);
	live->done_fd = -1;
	sigaction(SIGPIPE, &previous, NULL);
}

/*
 * Stopping flushes what is left to the relay; the view ends with the session. A failure is
 * the recording's to report (it asked the same daemon), but a daemon that did not answer
 * leaves the session, and the view waiting on it: the view is then told to stop.
 */
static void end_session(struct rec_live *live)
{
	struct po_error ignored = {{0}};
	enum rec_status stopped = rec_stop_tracing(live->session, &ignored);
	bool timed_out;
	enum rec_status destroyed = rec_destroy_session(live->session, &timed_out, &ignored);

	live->session_created = false;
	if (live->viewer_pid <= 0)
		return;
	if (stopped == REC_STATUS_SESSIOND_TIMEOUT || stopped == REC_STATUS_INTERRUPTED ||
	    destroyed == REC_STATUS_SESSIOND_TIMEOUT || destroyed == REC_STATUS_INTERRUPTED)
		kill(live->viewer_pid, SIGTERM);
}

/*
 * Waits for the view. It writes the report of a complete trace, which takes as long as the
 * analysis; without one to write, and once a signal was passed on to it, it has a deadline
 * and is then killed: a view stuck on a relay that stopped answering does not hold
 * profopt-record.
 */
static int wait_viewer(struct rec_live *live, bool trace_complete)
{
	unsigned signals_seen = rec_signals_count();
	int64_t deadline =
	    trace_complete ? INT64_MAX : monotonic_ms() + VIEWER_NO_REPORT_TIMEOUT_MS;
	int wait_status = 0;
	pid_t done;

	while ((done = waitpid(live->viewer_pid, &wait_status, WNOHANG)) == 0) {
		int64_t now = monotonic_ms();

		if (rec_signals_count() != signals_seen) {
			signals_seen = rec_signals_count();
			kill(live->viewer_pid, rec_signals_received());
			if (deadline > now + VIEWER_SIGNALED_TIMEOUT_MS)
				deadline = now + VIEWER_SIGNALED_TIMEOUT_MS;
		}
		if (now >= deadline) {
			kill(live->viewer_pid, SIGKILL);
			while (waitpid(live->viewer_pid, &wait_status, 0) == -1 && errno == EINTR) {
			}
			break;
		}
		rec_sleep_ms(POLL_INTERVAL_MS);
	}
	live->viewer_pid = 0;
	if (done < 0)
		return -1;
	return WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + WTERMSIG(wait_status);
}

void rec_live_hold_messages(struct rec_live *live)
{
	int memory, held;

	if (live->viewer_pid <= 0 || live->held_messages > 0 || !isatty(STDOUT_FILENO) ||
	    !isatty(STDERR_FILENO))
		return;
	memory = memfd_create("profopt-record-messages", MFD_CLOEXEC);
	if (memory < 0)
		return;
	held = fcntl(memory, F_DUPFD_CLOEXEC, 3); /* never 0, which means none */
	close(memory);
	fflush(stderr);
	live->saved_stderr = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
	if (held < 0 || live->saved_stderr < 0 || dup2(held, STDERR_FILENO) < 0) {
		if (held >= 0)
			close(held);
		if (live->saved_stderr >= 0)
			close(live->saved_stderr);
		return;
	}
	live->held_messages = held;
}

/* Puts stderr back and writes what was held there. */
static void release_messages(struct rec_live *live)
{
	char buffer[4096];
	ssize_t got;

	if (live->held_messages <= 0)
		return;
	fflush(stderr);
	dup2(live->saved_stderr, STDERR_FILENO);
	close(live->saved_stderr);
	lseek(live->held_messages, 0, SEEK_SET);
	while ((got = read(live->held_messages, buffer, sizeof(buffer))) > 0)
		fwrite(buffer, 1, (size_t)got, stderr);
	close(live->held_messages);
	live->held_messages = 0;
}

int rec_live_finish(struct rec_live *live, bool trace_complete)
{
	int exit_code = -1;

	tell_trace_done(live, trace_complete);
	if (live->session_created)
		end_session(live);
	if (live->viewer_pid > 0)
		exit_code = wait_viewer(live, trace_complete);
	if (live->relay_pid > 0) {
		stop_child(live->relay_pid, RELAY_STOP_TIMEOUT_MS);
		live->relay_pid = 0;
	}
	if (live->relay_dir[0] && !live->keep_relay_dir)
		nftw(live->relay_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	live->relay_dir[0] = '\0';
	release_messages(live);
	return exit_code;
}
