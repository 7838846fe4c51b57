/*
 * session.c: the LTTng tracing session of profopt-record, through liblttng-ctl: one UST
 * channel in discard mode with per-user buffers (per-process with --buffers pid), the
 * profopt events (and libc's with --heap) and the contexts profopt-analyze needs to tell
 * processes and threads apart.
 *
 * Per-user buffers by default because they do not change the traced program: with
 * per-process buffers every new process waits in lttng-ust's constructor until the session
 * and consumer daemons have created its buffers (about 0.25 s measured here per forked
 * DataLoader worker, against 7 ms per-user), which a loader with non-persistent workers
 * pays at every epoch.
 *
 * Every liblttng-ctl call runs through rec_ctl_call() (ctl.c): in a child process, with a
 * deadline. What a call needs is in a small context struct, copied into the child by fork.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <lttng/lttng.h>

#include "record.h"

#define CHANNEL_NAME "profopt"
/* How often to ask whether the trace is written, after stopping (lttng's own period). */
#define PENDING_POLL_MS 200

static struct lttng_domain ust_domain_of(const struct rec_options *options)
{
	return (struct lttng_domain){
	    .type = LTTNG_DOMAIN_UST,
	    .buf_type = options->per_process_buffers ? LTTNG_BUFFER_PER_PID : LTTNG_BUFFER_PER_UID,
	};
}

/* For handles on an existing session, where the buffer type does not matter. */
static const struct lttng_domain ust_domain = {
    .type = LTTNG_DOMAIN_UST,
    .buf_type = LTTNG_BUFFER_PER_UID,
};

/* 0: missing, 1: empty directory, -1: anything else (errno or ENOTEMPTY/ENOTDIR). */
static int output_dir_state(const char *path)
{
	struct stat info;
	struct dirent *entry;
	DIR *dir;
	int state = 1;

	if (stat(path, &info) == -1)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(info.st_mode)) {
		errno = ENOTDIR;
		return -1;
	}
	dir = opendir(path);
	if (!dir)
		return -1;
	while ((entry = readdir(dir))) {
		if (strcmp(entry->d_name, ".") && strcmp(entry->d_name, "..")) {
			errno = ENOTEMPTY;
			state = -1;
			break;
		}
	}
	closedir(dir);
	return state;
}

/* The absolute trace path: DIR, or ./profopt-trace-YYYYMMDD-HHMMSS. */
static enum rec_status make_output_path(struct rec_session *session, const char *dir,
					struct po_error *err)
{
	char cwd[PATH_MAX];
	char dated[64];
	time_t now = time(NULL);
	struct tm local;

	if (!dir) {
		localtime_r(&now, &local);
		strftime(dated, sizeof(dated), "profopt-trace-%Y%m%d-%H%M%S", &local);
		dir = dated;
	}
	if (dir[0] == '/') {
		session->output_dir = strdup(dir);
	} else {
		if (!getcwd(cwd, sizeof(cwd))) {
			po_error_set(err, "Failed to get the current directory: %s",
				     strerror(errno));
			return REC_STATUS_TRACING;
		}
		if (asprintf(&session->output_dir, "%s/%s", cwd, dir) == -1)
			session->output_dir = NULL;
	}
	if (!session->output_dir) {
		po_error_set(err, "out of memory");
		return REC_STATUS_NOMEM;
	}
	return REC_STATUS_OK;
}

static enum rec_status check_output_dir(struct rec_session *session, const char *shown,
					struct po_error *err)
{
	int state = output_dir_state(session->output_dir);

	if (state == -1) {
		po_error_set(err, "cannot write the trace into %s: %s", shown,
			     errno == ENOTEMPTY ? "directory not empty" : strerror(errno));
		return REC_STATUS_USAGE;
	}
	session->output_existed = state == 1;
	session->output_checked = true;
	return REC_STATUS_OK;
}

static enum rec_status ctl_failed(struct po_error *err, int code, const char *what)
{
	po_error_set(err, "%s: %s", what, lttng_strerror(code));
	return REC_STATUS_TRACING;
}

static enum rec_status enable_channel(struct lttng_handle *handle,
				      const struct rec_options *options, struct po_error *err)
{
	struct lttng_domain domain = ust_domain_of(options);
	struct lttng_channel *channel = lttng_channel_create(&domain);
	int ret;

	if (!channel) {
		po_error_set(err, "out of memory");
		return REC_STATUS_NOMEM;
	}
	snprintf(channel->name, sizeof(channel->name), "%s", CHANNEL_NAME);
	channel->attr.overwrite = 0;
	channel->attr.subbuf_size = options->subbuf_bytes;
	channel->attr.num_subbuf = options->subbuf_count;
	channel->attr.switch_timer_interval = REC_SWITCH_TIMER_US;
	channel->attr.output = LTTNG_EVENT_MMAP;
	ret = lttng_channel_set_blocking_timeout(channel, 0);
	if (ret >= 0)
		ret = lttng_enable_channel(handle, channel);
	lttng_channel_destroy(channel);
	if (ret < 0)
		return ctl_failed(err, ret, "Failed to create channel " CHANNEL_NAME);
	return REC_STATUS_OK;
}

static enum rec_status enable_events(struct lttng_handle *handle, const char *pattern,
				     struct po_error *err)
{
	struct lttng_event *event = lttng_event_create();
	int ret;

	if (!event) {
		po_error_set(err, "out of memory");
		return REC_STATUS_NOMEM;
	}
	event->type = LTTNG_EVENT_TRACEPOINT;
	event->loglevel_type = LTTNG_EVENT_LOGLEVEL_ALL;
	snprintf(event->name, sizeof(event->name), "%s", pattern);
	ret = lttng_enable_event_with_exclusions(handle, event, CHANNEL_NAME, NULL, 0, NULL);
	lttng_event_destroy(event);
	if (ret < 0) {
		po_error_set(err, "Failed to enable events %s: %s", pattern, lttng_strerror(ret));
		return REC_STATUS_TRACING;
	}
	return REC_STATUS_OK;
}

static enum rec_status add_context(struct lttng_handle *handle, enum lttng_event_context_type type,
				   const char *name, struct po_error *err)
{
	struct lttng_event_context context;
	int ret;

	memset(&context, 0, sizeof(context));
	context.ctx = type;
	ret = lttng_add_context(handle, &context, NULL, CHANNEL_NAME);
	if (ret < 0) {
		po_error_set(err, "Failed to add context %s: %s", name, lttng_strerror(ret));
		return REC_STATUS_TRACING;
	}
	return REC_STATUS_OK;
}

static enum rec_status configure(struct lttng_handle *handle, const struct rec_options *options,
				 struct po_error *err)
{
	enum rec_status status = enable_channel(handle, options, err);

	if (status == REC_STATUS_OK)
		status = enable_events(handle, "profopt:*", err);
	if (status == REC_STATUS_OK && options->heap)
		status = enable_events(handle, "lttng_ust_libc:*", err);
	if (status == REC_STATUS_OK && options->heap) /* each allocation's callers */
		status = enable_events(handle, "profopt_heap:*", err);
	/*
	 * Where each process's objects are mapped: allocation sites and the addresses of C
	 * programs' function samples become object + offset.
	 */
	if (status == REC_STATUS_OK && (options->heap || options->stacks_hz > 0))
		status = enable_events(handle, "lttng_ust_statedump:*", err);
	if (status == REC_STATUS_OK && (options->heap || options->stacks_hz > 0))
		status = enable_events(handle, "lttng_ust_lib:*", err);
	if (status == REC_STATUS_OK && (options->heap || options->stacks_hz > 0))
		status = enable_events(handle, "lttng_ust_dl:*", err);
	if (status == REC_STATUS_OK)
		status = add_context(handle, LTTNG_EVENT_CONTEXT_VPID, "vpid", err);
	if (status == REC_STATUS_OK)
		status = add_context(handle, LTTNG_EVENT_CONTEXT_VTID, "vtid", err);
	if (status == REC_STATUS_OK)
		status = add_context(handle, LTTNG_EVENT_CONTEXT_PROCNAME, "procname", err);
	if (status == REC_STATUS_OK && options->heap)
		status = add_context(handle, LTTNG_EVENT_CONTEXT_IP, "ip", err);
	return status;
}

struct create_call {
	const char *name; /* weak: the session's */
	const char *url;  /* weak */
};

static enum rec_status create_run(void *context, struct po_error *err)
{
	const struct create_call *call = context;
	int ret = lttng_create_session(call->name, call->url);

	if (ret < 0) {
		po_error_set(err, "Failed to create session %s writing to %s: %s", call->name,
			     call->url + strlen("file://"), lttng_strerror(ret));
		return REC_STATUS_TRACING;
	}
	return REC_STATUS_OK;
}

enum rec_status rec_session_create(struct rec_session *session, const struct rec_options *options,
				   struct po_error *err)
{
	char name[sizeof(session->name)], stamp[32];
	time_t now = time(NULL);
	struct tm local;

	localtime_r(&now, &local);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &local);
	/* The owner's tag lets the next recorder destroy it if this one is killed. */
	snprintf(name, sizeof(name), "profopt-record-%s-%s", rec_owner_tag(), stamp);
	return rec_session_create_named(session, options, name, err);
}

enum rec_status rec_session_create_named(struct rec_session *session,
					 const struct rec_options *options, const char *name,
					 struct po_error *err)
{
	enum rec_status status;
	char url[PATH_MAX + 16], what[200];
	struct create_call create = {.name = session->name, .url = url};
	const struct rec_ctl_call call = {
	    .what = what, .run = create_run, .context = &create, .context_size = sizeof(create)};

	*session = (struct rec_session){0};
	status = make_output_path(session, options->output_dir, err);
	if (status == REC_STATUS_OK)
		status = check_output_dir(
		    session, options->output_dir ? options->output_dir : session->output_dir, err);
	if (status != REC_STATUS_OK)
		return status;
	snprintf(session->name, sizeof(session->name), "%s", name);
	snprintf(url, sizeof(url), "file://%s", session->output_dir);
	snprintf(what, sizeof(what), "create the session %s", session->name);
	status = rec_ctl_call(&call, err);
	/* A call abandoned midway may have created it: destroying it then is harmless. */
	session->created = status != REC_STATUS_TRACING;
	if (status != REC_STATUS_OK)
		return status;
	return rec_session_configure(session->name, options, err);
}

struct configure_call {
	const char *name;		   /* weak */
	const struct rec_options *options; /* weak */
};

static enum rec_status configure_run(void *context, struct po_error *err)
{
	const struct configure_call *call = context;
	struct lttng_domain domain = ust_domain_of(call->options);
	struct lttng_handle *handle = lttng_create_handle(call->name, &domain);
	enum rec_status status;

	if (!handle) {
		po_error_set(err, "Failed to get a handle on session %s", call->name);
		return REC_STATUS_TRACING;
	}
	status = configure(handle, call->options, err);
	lttng_destroy_handle(handle);
	return status;
}

enum rec_status rec_session_configure(const char *name, const struct rec_options *options,
				      struct po_error *err)
{
	struct configure_call configure_call = {.name = name, .options = options};
	char what[200];
	const struct rec_ctl_call call = {.what = what,
					  .run = configure_run,
					  .context = &configure_call,
					  .context_size = sizeof(configure_call)};

	snprintf(what, sizeof(what), "configure the session %s", name);
	return rec_ctl_call(&call, err);
}

static enum rec_status start_run(void *context, struct po_error *err)
{
	int ret = lttng_start_tracing(context);

	if (ret < 0)
		return ctl_failed(err, ret, "Failed to start tracing");
	return REC_STATUS_OK;
}

enum rec_status rec_session_start(struct rec_session *session, struct po_error *err)
{
	const struct rec_ctl_call call = {
	    .what = "start tracing", .run = start_run, .context = session->name, .context_size = 0};
	enum rec_status status = rec_ctl_call(&call, err);

	/* Abandoned midway, tracing may have started: stopping it then is harmless. */
	session->started = status != REC_STATUS_TRACING;
	return status;
}

/*
 * The tracer's own counters; with per-process buffers they cover only the processes alive
 * now (the trace's packet indexes cover every one, see trace_loss.c).
 */
struct loss_counters {
	char name[128];
	uint64_t discarded_events;
	uint64_t lost_packets;
	bool known;
};

static enum rec_status loss_counters_run(void *context, struct po_error *err)
{
	struct loss_counters *counters = context;
	struct lttng_domain domain = ust_domain;
	struct lttng_handle *handle = lttng_create_handle(counters->name, &domain);
	struct lttng_channel *channels = NULL;
	int count, i;

	(void)err;
	if (!handle)
		return REC_STATUS_OK;
	count = lttng_list_channels(handle, &channels);
	for (i = 0; i < count; i++) {
		if (strcmp(channels[i].name, CHANNEL_NAME))
			continue;
		if (lttng_channel_get_discarded_event_count(&channels[i],
							    &counters->discarded_events) == 0 &&
		    lttng_channel_get_lost_packet_count(&channels[i], &counters->lost_packets) == 0)
			counters->known = true;
	}
	free(channels);
	lttng_destroy_handle(handle);
	return REC_STATUS_OK;
}

/* The counters are a second opinion: only a daemon that does not answer is an error. */
static enum rec_status read_loss_counters(struct rec_session *session, struct po_error *err)
{
	struct loss_counters counters = {.known = false};
	const struct rec_ctl_call call = {.what = "read the loss counters",
					  .run = loss_counters_run,
					  .context = &counters,
					  .context_size = sizeof(counters)};
	enum rec_status status;

	snprintf(counters.name, sizeof(counters.name), "%s", session->name);
	status = rec_ctl_call(&call, err);
	if (status == REC_STATUS_SESSIOND_TIMEOUT || status == REC_STATUS_INTERRUPTED)
		return status;
	session->discarded_events = counters.discarded_events;
	session->lost_packets = counters.lost_packets;
	session->counts_known = status == REC_STATUS_OK && counters.known;
	return REC_STATUS_OK;
}

static enum rec_status stop_run(void *context, struct po_error *err)
{
	int ret = lttng_stop_tracing_no_wait(context);

	if (ret < 0 && ret != -LTTNG_ERR_TRACE_ALREADY_STOPPED)
		return ctl_failed(err, ret, "Failed to stop tracing");
	return REC_STATUS_OK;
}

struct pending_call {
	char name[128];
	bool pending;
};

static enum rec_status pending_run(void *context, struct po_error *err)
{
	struct pending_call *call = context;
	int ret = lttng_data_pending(call->name);

	if (ret < 0)
		return ctl_failed(err, ret, "Failed to stop tracing");
	call->pending = ret > 0;
	return REC_STATUS_OK;
}

/*
 * lttng_stop_tracing() asks whether data is pending in a loop of its own, which would put
 * the whole flush (seconds for large buffers on a slow disk) under one deadline: here each
 * question has the deadline, and the flush lasts as long as the daemon says it goes on.
 */
enum rec_status rec_stop_tracing(const char *name, struct po_error *err)
{
	struct pending_call pending = {.pending = true};
	const struct rec_ctl_call stop = {
	    .what = "stop tracing", .run = stop_run, .context = (void *)name, .context_size = 0};
	const struct rec_ctl_call ask = {.what = "say whether the trace is written",
					 .run = pending_run,
					 .context = &pending,
					 .context_size = sizeof(pending)};
	enum rec_status status = rec_ctl_call(&stop, err);

	snprintf(pending.name, sizeof(pending.name), "%s", name);
	while (status == REC_STATUS_OK) {
		status = rec_ctl_call(&ask, err);
		if (status != REC_STATUS_OK || !pending.pending)
			break;
		status = rec_ctl_pause(PENDING_POLL_MS, "write the trace", err);
	}
	return status;
}

enum rec_status rec_session_stop(struct rec_session *session, struct po_error *err)
{
	enum rec_status status;

	if (!session->started)
		return REC_STATUS_OK;
	/* Waits until the consumer daemon has written every buffer. */
	status = rec_stop_tracing(session->name, err);
	if (status != REC_STATUS_OK)
		return status;
	session->started = false;
	return read_loss_counters(session, err);
}

struct destroy_call {
	char name[128];
	bool timed_out;
};

/*
 * Destroying waits until the consumer daemon released every buffer; a traced process that
 * hangs can hold that up forever, so that wait is REC_DESTROY_TIMEOUT_MS, reported, and
 * begins when the daemon accepted the request (rec_ctl_accepted()).
 */
static enum rec_status destroy_run(void *context, struct po_error *err)
{
	struct destroy_call *call = context;
	struct lttng_destruction_handle *handle = NULL;
	enum lttng_destruction_handle_status wait_status;
	enum lttng_error_code result = LTTNG_OK;
	enum lttng_error_code code = lttng_destroy_session_ext(call->name, &handle);

	if (code == LTTNG_ERR_SESS_NOT_FOUND)
		return REC_STATUS_OK;
	if (code != LTTNG_OK)
		return ctl_failed(err, -(int)code, "Failed to destroy the session");
	rec_ctl_accepted();
	wait_status = lttng_destruction_handle_wait_for_completion(handle, REC_DESTROY_TIMEOUT_MS);
	if (wait_status == LTTNG_DESTRUCTION_HANDLE_STATUS_TIMEOUT)
		call->timed_out = true;
	else if (wait_status != LTTNG_DESTRUCTION_HANDLE_STATUS_COMPLETED ||
		 lttng_destruction_handle_get_result(handle, &result) !=
		     LTTNG_DESTRUCTION_HANDLE_STATUS_OK)
		result = LTTNG_ERR_UNK;
	lttng_destruction_handle_destroy(handle);
	if (result != LTTNG_OK)
		return ctl_failed(err, -(int)result, "Failed to destroy the session");
	return REC_STATUS_OK;
}

enum rec_status rec_destroy_session(const char *name, bool *timed_out, struct po_error *err)
{
	struct destroy_call destroy = {.timed_out = false};
	const struct rec_ctl_call call = {.what = "destroy the session",
					  .run = destroy_run,
					  .context = &destroy,
					  .context_size = sizeof(destroy),
					  .accepted_wait_ms = REC_DESTROY_TIMEOUT_MS};
	enum rec_status status;

	snprintf(destroy.name, sizeof(destroy.name), "%s", name);
	status = rec_ctl_call(&call, err);
	*timed_out = destroy.timed_out;
	return status;
}

enum rec_status rec_session_destroy(struct rec_session *session, struct po_error *err)
{
	enum rec_status status = REC_STATUS_OK;

	if (session->created) {
		status = rec_destroy_session(session->name, &session->destroy_timed_out, err);
		session->created = false;
	}
	return status;
}

static int remove_entry(const char *path, const struct stat *info, int type, struct FTW *walk)
{
	(void)info;
	(void)walk;
	return type == FTW_DP ? rmdir(path) : unlink(path);
}

void rec_session_remove_output(struct rec_session *session)
{
	DIR *dir;
	struct dirent *entry;
	char path[PATH_MAX];

	if (!session->output_dir || !session->output_checked)
		return;
	if (!session->output_existed) {
		nftw(session->output_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
		return;
	}
	dir = opendir(session->output_dir);
	if (!dir)
		return;
	while ((entry = readdir(dir))) {
		if (!strcmp(entry->d_name, ".") || !strcmp(entry->d_name, ".."))
			continue;
		/* A truncated path could name something else: never remove one. */
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", session->output_dir,
				     entry->d_name) >= sizeof(path))
			continue;
		nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	}
	closedir(dir);
}

void rec_session_fini(struct rec_session *session)
{
	free(session->output_dir);
	session->output_dir = NULL;
}

/*
 * The per-user channel, and its metadata, are made when the first process registers. The
 * command's programs load lttng-ust only when they use it (fork_hooks.c), so a command
 * that records nothing (a Python program whose module could not load libprofopt) would
 * leave a directory that is no trace, where profopt-analyze can only say "not a trace"
 * rather than why it holds no event. A child of profopt-record that loads lttng-ust, which
 * registers in its constructor, makes the trace; it emits nothing. Best effort: a failure
 * only leaves that directory without metadata, as before.
 */
/*
 * The child's environment: profopt-record's own, with lttng-ust's state dumps off, so that
 * the registration adds no event (with --stacks they are on for the command, and the child
 * would be a process of the trace). Made before the fork: the child only assigns it.
 */
static char **register_self_environment(void)
{
	static char *const quiet[] = {"LTTNG_UST_WITHOUT_BADDR_STATEDUMP=1",
				      "LTTNG_UST_WITHOUT_PROCNAME_STATEDUMP=1"};
	size_t count = 0, kept = 0;
	char **copy;

	while (environ[count])
		count++;
	copy = calloc(count + 3, sizeof(*copy));
	if (!copy)
		return NULL;
	for (size_t i = 0; i < count; i++)
		if (strncmp(environ[i], "LTTNG_UST_WITHOUT_", 18) != 0)
			copy[kept++] = environ[i];
	copy[kept++] = quiet[0];
	copy[kept++] = quiet[1];
	return copy;
}

enum rec_status rec_session_register_self(struct po_error *err)
{
	char **child_environment = register_self_environment();
	int wait_status = 0;
	enum rec_status status;
	pid_t pid;

	if (!child_environment)
		return REC_STATUS_OK; /* best effort, as below */
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		free(child_environment);
		return REC_STATUS_OK;
	}
	if (pid == 0) {
		environ = child_environment;
		_exit(dlopen("liblttng-ust.so.1", RTLD_NOW) ? 0 : 1);
	}
	free(child_environment);
	status = rec_ctl_wait_child(pid, rec_ctl_timeout_ms(), &wait_status, err);
	if (status == REC_STATUS_OK)
		return REC_STATUS_OK;
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) == -1 && errno == EINTR) {
	}
	return status == REC_STATUS_INTERRUPTED ? status : REC_STATUS_OK;
}
