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

/*
 * What the metadata file declares ("stream {", "event {"; text or packetized metadata
 * alike): bit 1 a stream class, bit 2 an event class. *size is -1 when it cannot be read.
 */
#define DECLARES_STREAM 1
#define DECLARES_EVENT 2
static int metadata_declares(const char *path, off_t *size)
{
	static char buffer[METADATA_SCAN_BYTES];
	struct stat st;
	ssize_t got;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	*size = -1;
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return 0;
	}
	*size = st.st_size;
	got = read(fd, buffer, sizeof(buffer));
	close(fd);
	if (got <= 0)
		return 0;
	return (memmem(buffer, (size_t)got, "stream {", 8) ? DECLARES_STREAM : 0) |
	       (memmem(buffer, (size_t)got, "event {", 7) ? DECLARES_EVENT : 0);
}

#define PACKET_MAGIC 0xC1FC1FC1u
/* lttng-ust's packet header and context end before this: more content is events. */
#define PACKET_HEADER_BYTES 96

static uint64_t load(const unsigned char *bytes, int size, bool big_endian)
{
	uint64_t value = 0;

	for (int i = 0; i < size; i++)
		value |= (uint64_t)bytes[big_endian ? size - 1 - i : i] << (8 * i);
	return value;
}

/* Whether a stream file holds a packet with events (lttng-ust's packet layout). */
static bool stream_has_events(const char *path)
{
	unsigned char header[64];
	struct stat st;
	off_t offset = 0;
	bool big_endian = false, found = false;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return false;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return false;
	}
	while (!found && offset + (off_t)sizeof(header) <= st.st_size &&
	       pread(fd, header, sizeof(header), offset) == (ssize_t)sizeof(header)) {
		uint64_t content_bits, packet_bits;

		if (offset == 0)
			big_endian = load(header, 4, false) != PACKET_MAGIC;
		if (load(header, 4, big_endian) != PACKET_MAGIC)
			break;
		content_bits = load(header + 48, 8, big_endian);
		packet_bits = load(header + 56, 8, big_endian);
		found = content_bits / 8 > PACKET_HEADER_BYTES;
		if (packet_bits / 8 < sizeof(header) || packet_bits % 8)
			break;
		offset += (off_t)(packet_bits / 8);
	}
	close(fd);
	return found;
}

/* Whether a trace directory holds stream files (anything but metadata and index/). */
static bool has_streams(const char *dir)
{
	DIR *handle = opendir(dir);
	struct dirent *entry;
	bool found = false;

	if (!handle)
		return false;
	while (!found && (entry = readdir(handle)))
		found = entry->d_name[0] != '.' && strcmp(entry->d_name, "metadata") != 0 &&
			strcmp(entry->d_name, "index") != 0;
	closedir(handle);
	return found;
}

/* Whether any stream file of a trace directory (files named CHANNEL_N) holds events. */
static bool streams_have_events(const char *dir)
{
	DIR *handle = opendir(dir);
	struct dirent *entry;
	bool found = false;

	if (!handle)
		return false;
	while (!found && (entry = readdir(handle))) {
		char path[4096];

		if (entry->d_name[0] == '.' || strcmp(entry->d_name, "metadata") == 0 ||
		    !join(path, sizeof(path), dir, entry->d_name))
			continue;
		found = stream_has_events(path);
	}
	closedir(handle);
	return found;
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

/*
 * A directory whose metadata declares no event and whose streams hold none recorded
 * nothing (a process that registered with the tracer and emitted no profopt event): not
 * a loss, unless the disk filled up. Events without metadata to read them are.
 */
static void check_trace_dir(const char *dir, struct rec_verification *result)
{
	char metadata[4096];
	off_t metadata_size;
	bool declared, streamed, events;
	int declares;

	result->trace_dirs++;
	if (!join(metadata, sizeof(metadata), dir, "metadata"))
		return;
	declares = metadata_declares(metadata, &metadata_size);
	declared = declares & DECLARES_EVENT;
	streamed = declares & DECLARES_STREAM;
	events = streams_have_events(dir);
	if (declared || events)
		result->recorded_dirs++;
	if (metadata_size < 0)
		problem(result, "%s: no metadata: nothing in this directory can be read", dir);
	else if (metadata_size == 0)
		problem(result, "%s: its metadata is empty: nothing in this directory can be read",
			metadata);
	else if (!streamed && has_streams(dir))
		problem(
		    result,
		    "%s: its metadata (%lld bytes) declares no stream, so its streams cannot be "
		    "read: the process registered too late to be recorded",
		    metadata, (long long)metadata_size);
	else if (!declared && (events || result->disk_full))
		problem(result,
			"%s: its metadata (%lld bytes) declares no event%s: nothing in this "
			"directory can be read",
			metadata, (long long)metadata_size,
			events ? ", and its streams hold events" : "");
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
	result->disk_full = result->free_bytes >= 0 && result->free_bytes < FULL_DISK_BYTES;
	if (join(ust, sizeof(ust), trace_dir, "ust"))
		walk(ust, 0, result);
}
