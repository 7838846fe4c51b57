/*
 * verify.c: after the session stopped, checks what the recording holds, so that a trace
 * that lost data for another reason than full buffers (a full disk, a consumer that could
 * not write, a process whose buffers never reached the disk) is not reported complete.
 *
 * Every trace directory LTTng made (ust/uid/UID/NN-bit, or ust/pid/NAME-PID-DATE with
 * --buffers pid) must have metadata that declares at least one event class, and stream
 * data; the file system of the trace must have room left. Each problem is one line.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "record.h"

/* Below this much room, the consumer may have failed to write: the disk counts as full. */
#define FULL_DISK_BYTES (4u * 1024 * 1024)
#define METADATA_SCAN_BYTES (1024 * 1024)

static bool join(char *out, size_t size, const char *a, const char *b)
{
	return (size_t)snprintf(out, size, "%s/%s", a, b) < size;
}

/* Whether the metadata file declares an event class ("event {", text or packetized). */
static bool declares_events(const char *path, off_t *size)
{
	static char buffer[METADATA_SCAN_BYTES];
	struct stat st;
	ssize_t got;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	*size = -1;
	if (fd < 0)
		return false;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return false;
	}
	*size = st.st_size;
	got = read(fd, buffer, sizeof(buffer));
	close(fd);
	return got > 0 && memmem(buffer, (size_t)got, "event {", 7) != NULL;
}

/* Bytes of stream data in a trace directory (files named CHANNEL_N). */
static off_t stream_bytes(const char *dir)
{
	DIR *handle = opendir(dir);
	struct dirent *entry;
	off_t total = 0;

	if (!handle)
		return 0;
	while ((entry = readdir(handle))) {
		char path[4096];
		struct stat st;

		if (entry->d_name[0] == '.' || strcmp(entry->d_name, "metadata") == 0 ||
		    !join(path, sizeof(path), dir, entry->d_name) || stat(path, &st) != 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		total += st.st_size;
	}
	closedir(handle);
	return total;
}

static void problem(struct rec_verification *result, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void problem(struct rec_verification *result, const char *fmt, ...)
{
	va_list args;

	result->problems++;
	if (result->problems > REC_VERIFY_SHOWN)
		return;
	va_start(args, fmt);
	vsnprintf(result->lines[result->problems - 1], sizeof(result->lines[0]), fmt, args);
	va_end(args);
}

static void check_trace_dir(const char *dir, struct rec_verification *result)
{
	char metadata[4096];
	off_t metadata_size;

	result->trace_dirs++;
	if (!join(metadata, sizeof(metadata), dir, "metadata"))
		return;
	if (!declares_events(metadata, &metadata_size)) {
		if (metadata_size < 0)
			problem(result, "%s: no metadata: nothing in this directory can be read",
				dir);
		else
			problem(result,
				"%s: its metadata (%lld bytes) declares no event: nothing in this "
				"directory can be read",
				metadata, (long long)metadata_size);
		return;
	}
	if (stream_bytes(dir) == 0)
		problem(result, "%s: no stream data: its events never reached the disk", dir);
}

/* Visits the trace directories below ust/ (depth 2 for pid, 3 for uid). */
static void walk(const char *dir, int depth, struct rec_verification *result)
{
	char path[4096];
	struct stat st;
	DIR *handle;
	struct dirent *entry;

	if (join(path, sizeof(path), dir, "metadata") && lstat(path, &st) == 0) {
		check_trace_dir(dir, result);
		return;
	}
	if (depth >= 4 || !(handle = opendir(dir)))
		return;
	while ((entry = readdir(handle))) {
		if (entry->d_name[0] == '.' || strcmp(entry->d_name, "index") == 0 ||
		    !join(path, sizeof(path), dir, entry->d_name) || lstat(path, &st) != 0 ||
		    !S_ISDIR(st.st_mode))
			continue;
		/* LTTng makes a process's or a user's directory before any file in it */
		walk(path, depth + 1, result);
	}
	closedir(handle);
}

void rec_verify(const char *trace_dir, struct rec_verification *result)
{
	char ust[4096];
	struct statvfs fs;

	memset(result, 0, sizeof(*result));
	result->free_bytes = -1;
	if (statvfs(trace_dir, &fs) == 0)
		result->free_bytes = (int64_t)fs.f_bavail * (int64_t)fs.f_frsize;
	if (join(ust, sizeof(ust), trace_dir, "ust"))
		walk(ust, 0, result);
	if (result->trace_dirs == 0)
		problem(result, "%s: no trace was written (no ust/ directory with metadata)",
			trace_dir);
	result->disk_full = result->free_bytes >= 0 && result->free_bytes < FULL_DISK_BYTES;
}
