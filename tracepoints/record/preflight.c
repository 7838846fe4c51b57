/*
 * preflight.c: what keeps a recording from working that can be seen before the command
 * runs, each named in one line: a /dev/shm where lttng-ust cannot make its ring buffers
 * (the command would run untraced, and the registration would be blamed afterwards), and a
 * session daemon directory where no daemon can start (lttng-sessiond then says "A session
 * daemon is already running"). --check reports the same causes (check.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "record.h"

bool rec_shm_unusable(char *cause, size_t size)
{
	struct statvfs shm;

	if (statvfs("/dev/shm", &shm) != 0)
		snprintf(cause, size, "/dev/shm: %s", strerror(errno));
	else if (shm.f_flag & ST_RDONLY)
		snprintf(cause, size, "/dev/shm is mounted read-only");
	else if (access("/dev/shm", W_OK | X_OK) != 0)
		snprintf(cause, size, "/dev/shm is not writable");
	else
		return false;
	return true;
}

/* The daemon's directory: /run/lttng as root, else $LTTNG_HOME/.lttng ($HOME's). */
static void sessiond_dir(char *path, size_t size)
{
	const char *home = getenv("LTTNG_HOME");

	if (!home || !*home)
		home = getenv("HOME");
	if (geteuid() == 0)
		snprintf(path, size, "/run/lttng");
	else
		snprintf(path, size, "%s/.lttng", home ? home : "");
}

bool rec_sessiond_dir_unwritable(char *cause, size_t size)
{
	char dir[PATH_MAX], existing[PATH_MAX];
	struct statvfs fs;
	char *slash;

	sessiond_dir(dir, sizeof(dir));
	/* a directory not there yet is made by the daemon in its nearest parent */
	snprintf(existing, sizeof(existing), "%s", dir);
	while (access(existing, F_OK) != 0 && (slash = strrchr(existing, '/')) && slash != existing)
		*slash = '\0';
	if (statvfs(existing, &fs) == 0 && (fs.f_flag & ST_RDONLY))
		snprintf(cause, size, "%s is on a read-only file system", dir);
	else if (access(existing, W_OK | X_OK) != 0)
		snprintf(cause, size, "%s is not writable (%s)", existing, strerror(errno));
	else
		return false;
	return true;
}

enum rec_status rec_preflight(struct po_error *err)
{
	char cause[256];

	if (!rec_shm_unusable(cause, sizeof(cause)))
		return REC_STATUS_OK;
	po_error_set(err,
		     "cannot record: %s: lttng-ust keeps its ring buffers there, so the command "
		     "would run untraced; mount it read-write (mount -o remount,rw /dev/shm)",
		     cause);
	return REC_STATUS_TRACING;
}
