/*
 * alerts_file.c: --alerts FILE (alerts_file.h): the checks of the target, and one alert
 * line at a time written with write(2), so that every failure has its errno.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "alerts_file.h"

struct po_live_alerts_file {
	char *path; /* owned: as given, for messages */
	int fd;
	bool regular; /* synced after each alert */
};

#define OPEN_FLAGS (O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)

static bool is_dev_null(const struct stat *st)
{
	return S_ISCHR(st->st_mode) && st->st_rdev == makedev(1, 3);
}

static bool in_group(gid_t gid)
{
	gid_t groups[NGROUPS_MAX];
	int count = getgroups(NGROUPS_MAX, groups);

	if (gid == getegid())
		return true;
	for (int i = 0; i < count; i++)
		if (groups[i] == gid)
			return true;
	return false;
}

/* Whether st's permission bits let this process write it; root's override is not used. */
static bool mode_allows_writing(const struct stat *st)
{
	if (st->st_uid == geteuid())
		return st->st_mode & S_IWUSR;
	if (in_group(st->st_gid))
		return st->st_mode & S_IWGRP;
	return st->st_mode & S_IWOTH;
}

/* What is there may take alerts: a regular file, a FIFO or /dev/null that this user may
 * write by its mode. */
static enum po_status check_target(const char *path, const struct stat *st, struct po_error *err)
{
	if (S_ISLNK(st->st_mode)) {
		po_error_set(err,
			     "--alerts %s: a symbolic link; alerts are written into the file "
			     "itself, never through a link: name the file it points to",
			     path);
		return PO_STATUS_USAGE;
	}
	if (!S_ISREG(st->st_mode) && !S_ISFIFO(st->st_mode) && !is_dev_null(st)) {
		po_error_set(err,
			     "--alerts %s: %s; --alerts takes a regular file, a FIFO or /dev/null",
			     path, po_file_type_text(st->st_mode));
		return PO_STATUS_USAGE;
	}
	if (!mode_allows_writing(st)) {
		po_error_set(err,
			     "--alerts %s: its mode (%04o, owner uid %ld) does not let uid %ld "
			     "write it; profopt writes no file past its permissions, even as root",
			     path, (unsigned)(st->st_mode & 07777), (long)st->st_uid,
			     (long)geteuid());
		return PO_STATUS_USAGE;
	}
	return PO_STATUS_OK;
}

/*
 * Opens what is at path for writing. It is first opened O_PATH | O_NOFOLLOW, which opens
 * nothing that a device's open would act on, checked, and then reopened through
 * /proc/self/fd, which reaches that same inode whatever path now names.
 */
static enum po_status open_existing(const char *path, int *fd, struct po_error *err)
{
	char reopen[64];
	struct stat st;
	enum po_status status;
	int held = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);

	if (held < 0 || fstat(held, &st) != 0) {
		po_error_set(err, "--alerts %s: %s", path, strerror(errno));
		if (held >= 0)
			close(held);
		return PO_STATUS_USAGE;
	}
	status = check_target(path, &st, err);
	snprintf(reopen, sizeof(reopen), "/proc/self/fd/%d", held);
	if (status == PO_STATUS_OK) {
		*fd = open(reopen, OPEN_FLAGS);
		if (*fd < 0 && errno == ENXIO && S_ISFIFO(st.st_mode))
			po_error_set(
			    err,
			    "--alerts %s: a FIFO (named pipe) that no process reads; start "
			    "its reader first",
			    path);
		else if (*fd < 0)
			po_error_set(err, "--alerts %s: %s", path, strerror(errno));
		if (*fd < 0)
			status = PO_STATUS_USAGE;
	}
	close(held);
	return status;
}

/* Creates the file, or opens what is there already; *regular says which it is. */
static enum po_status open_target(const char *path, int *fd, bool *regular, struct po_error *err)
{
	struct stat st;
	enum po_status status;

	*fd = open(path, OPEN_FLAGS | O_CREAT | O_EXCL | O_NOFOLLOW, 0644);
	if (*fd < 0 && errno != EEXIST) {
		po_error_set(err, "--alerts %s: cannot be created: %s", path,
			     errno == ENOENT ? "its directory does not exist" : strerror(errno));
		return PO_STATUS_USAGE;
	}
	if (*fd < 0) {
		status = open_existing(path, fd, err);
		if (status != PO_STATUS_OK)
			return status;
	}
	if (fstat(*fd, &st) != 0) {
		po_error_set(err, "--alerts %s: %s", path, strerror(errno));
		close(*fd);
		return PO_STATUS_USAGE;
	}
	*regular = S_ISREG(st.st_mode);
	return PO_STATUS_OK;
}

enum po_status po_live_alerts_file_create(const char *path, struct po_live_alerts_file **out,
					  struct po_error *err)
{
	struct po_live_alerts_file *file = calloc(1, sizeof(*file));
	enum po_status status;

	*out = NULL;
	if (!file || !(file->path = strdup(path))) {
		free(file);
		po_error_set(err, "out of memory");
		return PO_STATUS_NOMEM;
	}
	status = open_target(path, &file->fd, &file->regular, err);
	if (status != PO_STATUS_OK) {
		free(file->path);
		free(file);
		return status;
	}
	*out = file;
	return PO_STATUS_OK;
}

static int64_t monotonic_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Writes all of text, or returns the errno that stopped it: a short write is followed by
 * another, which says why (ENOSPC, EDQUOT, EFBIG, EIO). A full FIFO is waited on until
 * the deadline (ETIMEDOUT then).
 */
static int write_all(int fd, const char *text, size_t size)
{
	int64_t deadline = monotonic_ms() + PO_LIVE_ALERTS_FILE_WAIT_MS;

	while (size > 0) {
		ssize_t written = write(fd, text, size);
		struct pollfd room = {.fd = fd, .events = POLLOUT};

		if (written > 0) {
			text += written;
			size -= (size_t)written;
			continue;
		}
		if (written == 0)
			return ENOSPC; /* nothing written and no error: no room */
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN)
			return errno;
		if (monotonic_ms() >= deadline)
			return ETIMEDOUT;
		poll(&room, 1, 50);
	}
	return 0;
}

/* write_all() with SIGPIPE held back: a FIFO whose reader left gives EPIPE, no signal. */
static int write_quietly(int fd, const char *text, size_t size)
{
	sigset_t pipe_signal, previous, pending;
	struct timespec none = {0, 0};
	int error;

	sigemptyset(&pipe_signal);
	sigaddset(&pipe_signal, SIGPIPE);
	sigprocmask(SIG_BLOCK, &pipe_signal, &previous);
	error = write_all(fd, text, size);
	sigpending(&pending);
	if (error == EPIPE && sigismember(&pending, SIGPIPE) && !sigismember(&previous, SIGPIPE))
		sigtimedwait(&pipe_signal, NULL, &none);
	sigprocmask(SIG_SETMASK, &previous, NULL);
	return error;
}

enum po_status po_live_alerts_file_append(struct po_live_alerts_file *file,
					  const struct po_live_alert *alert, struct po_error *err)
{
	char *line = NULL; /* owned */
	size_t size = 0;
	FILE *text = open_memstream(&line, &size);
	bool formatted = text && po_live_alert_write_json(text, alert);
	int error;

	if (text)
		fclose(text);
	if (!formatted) {
		free(line);
		po_error_set(err, "out of memory");
		return PO_STATUS_NOMEM;
	}
	error = write_quietly(file->fd, line, size);
	free(line);
	if (!error && file->regular && fsync(file->fd) != 0)
		error = errno;
	if (error) {
		if (error == ETIMEDOUT)
			po_error_set(err,
				     "--alerts %s: its reader did not take the alert within %d s",
				     file->path, PO_LIVE_ALERTS_FILE_WAIT_MS / 1000);
		else
			po_error_set(err, "--alerts %s: %s", file->path, strerror(error));
		return PO_STATUS_OUTPUT;
	}
	return PO_STATUS_OK;
}

void po_live_alerts_file_destroy(struct po_live_alerts_file *file)
{
	if (!file)
		return;
	close(file->fd);
	free(file->path);
	free(file);
}
