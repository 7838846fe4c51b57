/*
 * verify.c: after the session stopped, checks what the recording holds, so that a trace
 * that lost data for another reason than full buffers is not reported complete, and a
 * complete one is not reported cut.
 *
 * What lost data looks like, and nothing else counts:
 *  - a trace directory LTTng made (ust/uid/UID/NN-bit, or ust/pid/NAME-PID-DATE with
 *    --buffers pid) without metadata, with metadata cut inside a packet, or with metadata
 *    that declares no stream or no event although its streams hold events;
 *  - a stream file cut inside a packet, or shorter than its index says;
 *  - a trace that ends before the command did (LTTng writes a last packet on every stream
 *    when its process exits or the session stops, so a whole trace ends after the command);
 *  - a process that libprofopt noted as unregistered (notes file, code "unregistered"): it
 *    emitted profopt events before the session daemon had registered it, which lttng-ust
 *    drops without counting them. With --buffers pid, one that has no trace directory lost
 *    everything.
 * Little room left on the file system is the cause named when something was cut, never a
 * loss by itself: a trace that filled most of a small file system can be whole.
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

#define METADATA_SCAN_BYTES (1024 * 1024)
/*
 * How much earlier than the command the trace may end: the last packets are written after
 * it, but a process's own last packet can be written just before profopt-record sees it end.
 */
#define END_TOLERANCE_NS 1000000000LL
#define NOTE_UNREGISTERED "unregistered\t"
#define NOTES_MAX 65536
#define PIDS_NAMED 4

static bool join(char *out, size_t size, const char *a, const char *b)
{
	return (size_t)snprintf(out, size, "%s/%s", a, b) < size;
}

static void add_line(struct rec_verification *result, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void add_line(struct rec_verification *result, const char *fmt, ...)
{
	va_list args;

	if (result->line_count >= REC_VERIFY_LINES)
		return;
	va_start(args, fmt);
	vsnprintf(result->lines[result->line_count++], sizeof(result->lines[0]), fmt, args);
	va_end(args);
}

static uint64_t load(const unsigned char *bytes, int size, bool big_endian)
{
	uint64_t value = 0;

	for (int i = 0; i < size; i++)
		value |= (uint64_t)bytes[big_endian ? size - 1 - i : i] << (8 * i);
	return value;
}

/*
 * The metadata: its size (-1 when it is missing or not a regular file), what it declares
 * ("stream {", "event {"), and whether its last packet runs past the end of the file
 * (packetized metadata, as LTTng writes it to disk; text metadata cannot tell).
 */
#define DECLARES_STREAM 1
#define DECLARES_EVENT 2
#define METADATA_MAGIC 0x75D11D57u
#define METADATA_HEADER_BYTES 37

struct metadata_survey {
	off_t size;
	int declares;
	bool cut;
};

static bool metadata_cut(int fd, off_t size)
{
	unsigned char header[32];
	off_t offset = 0;
	bool big_endian;

	if (pread(fd, header, sizeof(header), 0) != (ssize_t)sizeof(header))
		return false;
	big_endian = load(header, 4, false) != METADATA_MAGIC;
	if (load(header, 4, big_endian) != METADATA_MAGIC)
		return false; /* text metadata */
	while (offset < size) {
		uint64_t packet_bits;

		if (pread(fd, header, sizeof(header), offset) != (ssize_t)sizeof(header) ||
		    load(header, 4, big_endian) != METADATA_MAGIC)
			return true;
		packet_bits = load(header + 28, 4, big_endian);
		if (packet_bits % 8 || packet_bits / 8 < METADATA_HEADER_BYTES ||
		    packet_bits / 8 > (uint64_t)(size - offset))
			return true;
		offset += (off_t)(packet_bits / 8);
	}
	return false;
}

static void survey_metadata(const char *path, struct metadata_survey *survey)
{
	static char buffer[METADATA_SCAN_BYTES];
	struct stat st;
	ssize_t got;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	*survey = (struct metadata_survey){.size = -1};
	if (fd < 0)
		return;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return;
	}
	survey->size = st.st_size;
	got = read(fd, buffer, sizeof(buffer));
	if (got > 0)
		survey->declares =
		    (memmem(buffer, (size_t)got, "stream {", 8) ? DECLARES_STREAM : 0) |
		    (memmem(buffer, (size_t)got, "event {", 7) ? DECLARES_EVENT : 0);
	survey->cut = metadata_cut(fd, st.st_size);
	close(fd);
}

#define PACKET_MAGIC 0xC1FC1FC1u
/* lttng-ust's packet header and context end before this: more content is events. */
#define PACKET_HEADER_BYTES 96

/* One stream file: its packets walked by their headers (lttng-ust's packet layout). */
struct stream_survey {
	bool events;	   /* a packet holds events */
	int64_t end_ns;	   /* the last whole packet's timestamp_end; -1 if none */
	off_t file_bytes;  /* the file's size */
	off_t whole_bytes; /* the bytes of its whole packets, from the start */
};

static void walk_packets(int fd, struct stream_survey *survey)
{
	unsigned char header[64];
	off_t offset = 0;
	bool big_endian = false;

	while (offset + (off_t)sizeof(header) <= survey->file_bytes &&
	       pread(fd, header, sizeof(header), offset) == (ssize_t)sizeof(header)) {
		uint64_t content_bits, packet_bits, end_ns;

		if (offset == 0)
			big_endian = load(header, 4, false) != PACKET_MAGIC;
		if (load(header, 4, big_endian) != PACKET_MAGIC)
			break;
		end_ns = load(header + 40, 8, big_endian);
		content_bits = load(header + 48, 8, big_endian);
		packet_bits = load(header + 56, 8, big_endian);
		if (packet_bits % 8 || packet_bits / 8 < sizeof(header) ||
		    packet_bits / 8 > (uint64_t)(survey->file_bytes - offset))
			break;
		survey->events = survey->events || content_bits / 8 > PACKET_HEADER_BYTES;
		if (end_ns <= INT64_MAX && (int64_t)end_ns > survey->end_ns)
			survey->end_ns = (int64_t)end_ns;
		offset += (off_t)(packet_bits / 8);
	}
	survey->whole_bytes = offset;
}

static bool survey_stream(const char *path, struct stream_survey *survey)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	*survey = (struct stream_survey){.end_ns = -1};
	if (fd < 0)
		return false;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return false;
	}
	survey->file_bytes = st.st_size;
	walk_packets(fd, survey);
	close(fd);
	return true;
}

static void problem(struct rec_verification *result, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The first REC_VERIFY_SHOWN problems are said; the others are counted. */
static void problem(struct rec_verification *result, const char *fmt, ...)
{
	va_list args;
	char text[sizeof(result->lines[0]) - 16];

	result->problems++;
	if (result->problems > REC_VERIFY_SHOWN)
		return;
	va_start(args, fmt);
	vsnprintf(text, sizeof(text), fmt, args);
	va_end(args);
	add_line(result, "error: %s", text);
}

/*
 * A stream file is whole when it holds only whole packets, at least as many bytes as its
 * index lists.
 */
static void check_stream(const char *dir, const char *name, struct stream_survey *survey,
			 struct rec_verification *result)
{
	char path[4096], index[4096];
	struct rec_index_last last;
	uint64_t indexed = 0;
	int length;

	*survey = (struct stream_survey){.end_ns = -1};
	if (!join(path, sizeof(path), dir, name) || !survey_stream(path, survey))
		return;
	length = snprintf(index, sizeof(index), "%s/index/%s.idx", dir, name);
	if (length > 0 && (size_t)length < sizeof(index) &&
	    rec_index_read_last(index, &last) == 0 && last.has_packet)
		indexed = last.packet_offset + last.packet_bits / 8;
	if (survey->whole_bytes < survey->file_bytes)
		problem(result,
			"%s: cut inside a packet at byte %lld of %lld: the consumer could not "
			"write it whole",
			path, (long long)survey->whole_bytes, (long long)survey->file_bytes);
	else if ((uint64_t)survey->file_bytes < indexed)
		problem(result,
			"%s: holds %lld bytes, and its index lists %llu: the consumer could not "
			"write its last packets",
			path, (long long)survey->file_bytes, (unsigned long long)indexed);
}

/* The stream files of a trace directory (files named CHANNEL_N): events, end, cuts. */
static void check_streams(const char *dir, bool *streams, bool *events, int64_t *end_ns,
			  struct rec_verification *result)
{
	DIR *handle = opendir(dir);
	struct dirent *entry;

	*streams = *events = false;
	*end_ns = -1;
	if (!handle)
		return;
	while ((entry = readdir(handle))) {
		struct stream_survey survey;

		if (entry->d_name[0] == '.' || strcmp(entry->d_name, "metadata") == 0 ||
		    strcmp(entry->d_name, "index") == 0)
			continue;
		*streams = true;
		check_stream(dir, entry->d_name, &survey, result);
		*events = *events || survey.events;
		if (survey.end_ns > *end_ns)
			*end_ns = survey.end_ns;
	}
	closedir(handle);
}

/* The pid in a per-process directory's name, NAME-PID-YYYYMMDD-HHMMSS; -1 if none. */
static long dir_pid(const char *name)
{
	const char *end = name + strlen(name);
	int dashes = 0;
	long pid;
	char *after;

	while (end > name && dashes < 3)
		if (*--end == '-')
			dashes++;
	if (dashes < 3)
		return -1;
	pid = strtol(end + 1, &after, 10);
	return after > end + 1 && *after == '-' && pid > 0 ? pid : -1;
}

/*
 * The trace's end: every stream of a user's buffers gets a last packet when the session
 * stops, after the command ended; with --buffers pid, a process's streams end when it
 * exits, so only the command's own process must reach the command's end (its children
 * may end earlier, and a process that is not traced has no directory).
 */
static bool ends_with_command(const char *dir, const struct rec_verify_input *input)
{
	const char *slash = strrchr(dir, '/');
	const char *parent = slash ? slash - 1 : dir;

	while (parent > dir && *parent != '/')
		parent--;
	if (strncmp(parent, "/pid/", 5) != 0)
		return true;
	return input->command_pid > 0 && dir_pid(slash + 1) == input->command_pid;
}

/*
 * What is wrong with metadata that is there, or NULL. A directory whose metadata declares
 * no event and whose streams hold none recorded nothing (a process that registered with the
 * tracer and emitted no profopt event): not a loss. Events without metadata to read them are.
 */
static const char *metadata_problem(const struct metadata_survey *survey, bool streams, bool events,
				    bool sessiond_ended)
{
	if (survey->cut)
		return "ends inside a packet: the consumer could not write it whole, and what it "
		       "lacks cannot be read";
	if (!(survey->declares & DECLARES_STREAM) && streams)
		return sessiond_ended ? "declares no stream, so its streams cannot be read: the "
					"session daemon ended before it wrote them"
				      : "declares no stream, so its streams cannot be read: the "
					"process registered too late to be recorded";
	if (!(survey->declares & DECLARES_EVENT) && events)
		return "declares no event, and its streams hold events: nothing in this directory "
		       "can be read";
	return NULL;
}

/* One trace directory: its metadata, its streams, and its end. */
static void check_trace_dir(const char *dir, const struct rec_verify_input *input,
			    struct rec_verification *result)
{
	char metadata[4096];
	struct metadata_survey survey;
	bool streams, events;
	const char *why;
	int64_t end_ns;

	result->trace_dirs++;
	if (!join(metadata, sizeof(metadata), dir, "metadata"))
		return;
	survey_metadata(metadata, &survey);
	check_streams(dir, &streams, &events, &end_ns, result);
	if (end_ns > result->trace_end_ns && ends_with_command(dir, input))
		result->trace_end_ns = end_ns;
	if ((survey.declares & DECLARES_EVENT) || events)
		result->recorded_dirs++;
	if (survey.size < 0)
		problem(result, "%s: no metadata: nothing in this directory can be read", dir);
	else if (survey.size == 0)
		problem(result, "%s: its metadata is empty: nothing in this directory can be read",
			metadata);
	else if ((why = metadata_problem(&survey, streams, events, input->sessiond_ended)))
		problem(result, "%s: its metadata (%lld bytes) %s", metadata,
			(long long)survey.size, why);
}

/* Visits the trace directories below ust/ (depth 2 for pid, 3 for uid). */
static void walk(const char *dir, int depth, const struct rec_verify_input *input,
		 struct rec_verification *result)
{
	char path[4096];
	struct stat st;
	DIR *handle;
	struct dirent *entry;

	if (join(path, sizeof(path), dir, "metadata") && lstat(path, &st) == 0) {
		check_trace_dir(dir, input, result);
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
		walk(path, depth + 1, input, result);
	}
	closedir(handle);
}

/* A process that libprofopt noted as unregistered. */
struct noted_process {
	long pid;
	char name[32];
	bool has_dir;
};

static int compare_pids(const void *a, const void *b)
{
	long left = ((const struct noted_process *)a)->pid;
	long right = ((const struct noted_process *)b)->pid;

	return (left > right) - (left < right);
}

/* The "unregistered" notes, sorted by pid, each pid once. NULL when there are none. */
static struct noted_process *read_notes(const char *path, int *count)
{
	struct noted_process *noted = NULL;
	char line[1200];
	int capacity = 0, kept = 0;
	FILE *notes = path ? fopen(path, "r") : NULL;

	*count = 0;
	if (!notes)
		return NULL;
	while (fgets(line, sizeof(line), notes) && *count < NOTES_MAX) {
		const char *fields = line + strlen(NOTE_UNREGISTERED);
		struct noted_process process = {0};
		int name_at = 0;

		if (strncmp(line, NOTE_UNREGISTERED, strlen(NOTE_UNREGISTERED)) != 0 ||
		    sscanf(fields, "%ld\t%n", &process.pid, &name_at) != 1 || process.pid <= 0)
			continue;
		snprintf(process.name, sizeof(process.name), "%.*s",
			 (int)strcspn(fields + name_at, "\t\n"), fields + name_at);
		if (*count == capacity) {
			struct noted_process *grown;

			capacity = capacity ? 2 * capacity : 16;
			grown = realloc(noted, (size_t)capacity * sizeof(*noted));
			if (!grown)
				break;
			noted = grown;
		}
		noted[(*count)++] = process;
	}
	fclose(notes);
	if (!noted)
		return NULL;
	qsort(noted, (size_t)*count, sizeof(*noted), compare_pids);
	for (int i = 0; i < *count; i++)
		if (kept == 0 || noted[kept - 1].pid != noted[i].pid)
			noted[kept++] = noted[i];
	*count = kept;
	return noted;
}

/*
 * Marks the noted processes that have a directory under TRACE/ust/pid; false when there is
 * no such directory (per-user buffers).
 */
static bool find_process_dirs(const char *trace_dir, struct noted_process *noted, int count)
{
	char pid_dir[4096];
	struct dirent *entry;
	DIR *handle;

	if (!join(pid_dir, sizeof(pid_dir), trace_dir, "ust/pid") || !(handle = opendir(pid_dir)))
		return false;
	while ((entry = readdir(handle))) {
		struct noted_process key = {.pid = dir_pid(entry->d_name)};
		struct noted_process *found =
		    key.pid > 0 ? bsearch(&key, noted, (size_t)count, sizeof(*noted), compare_pids)
				: NULL;

		if (found)
			found->has_dir = true;
	}
	closedir(handle);
	return true;
}

/* "pid 12 (name), pid 13 (name) and 4 more": the noted processes with has_dir == which. */
static void name_processes(const struct noted_process *noted, int count, bool which, char *text,
			   size_t size)
{
	size_t used = 0;
	int total = 0;

	text[0] = '\0';
	for (int i = 0; i < count; i++) {
		if (noted[i].has_dir != which)
			continue;
		if (total++ < PIDS_NAMED && used < size)
			used +=
			    (size_t)snprintf(text + used, size - used, "%spid %ld (%s)",
					     total > 1 ? ", " : "", noted[i].pid, noted[i].name);
	}
	if (total > PIDS_NAMED && used < size)
		snprintf(text + used, size - used, " and %d more", total - PIDS_NAMED);
}

/*
 * The processes that emitted profopt events before the session daemon registered them.
 * With per-process buffers, those without a directory lost every event; with per-user
 * buffers, which events they lost cannot be told.
 */
static void check_registrations(const struct rec_verify_input *input,
				struct rec_verification *result)
{
	char names[400];
	int count;
	struct noted_process *noted = read_notes(input->notes_path, &count);
	bool per_process;
	int late;

	if (!noted)
		return;
	per_process = find_process_dirs(input->trace_dir, noted, count);
	result->unregistered = count;
	for (int i = 0; per_process && i < count; i++)
		result->missing_dirs += !noted[i].has_dir;
	late = count - result->missing_dirs;
	if (input->sessiond_ended) {
		name_processes(noted, count, false, names, sizeof(names));
		add_line(result,
			 "error: %d of the command's processes emitted profopt events that were "
			 "not recorded, the session daemon being gone: %s",
			 count, names);
		free(noted);
		return;
	}
	if (result->missing_dirs) {
		name_processes(noted, count, false, names, sizeof(names));
		add_line(
		    result,
		    "error: %d of the command's processes have no trace directory: they emitted "
		    "profopt events before the session daemon had registered them, and none of "
		    "their events was recorded: %s",
		    result->missing_dirs, names);
	}
	if (late) {
		/* with per-user buffers, has_dir is false for all of them */
		name_processes(noted, count, per_process, names, sizeof(names));
		add_line(result,
			 "error: %d of the command's processes emitted profopt events before the "
			 "session daemon had registered them, and those events were lost: %s",
			 late, names);
	}
	free(noted);
}

/* The trace ends when the last stream does; it must not end before the command did. */
static void check_end(const struct rec_verify_input *input, struct rec_verification *result)
{
	int64_t early_ns;

	if (input->command_end_ns <= 0 || result->trace_end_ns < 0)
		return;
	early_ns = input->command_end_ns - result->trace_end_ns;
	if (early_ns <= END_TOLERANCE_NS)
		return;
	problem(result,
		"%s: the trace ends %.1f s before the command did: the consumer did not write "
		"the last packets",
		input->trace_dir, (double)early_ns / 1e9);
}

/*
 * lttng-tools' consumer takes a packet whose running count of discarded events is smaller
 * than the one before for a wrap of the counter, and adds 2^63 to its channel's count; no
 * recording discards 2^63 events, so a count at or above it is that, not a count.
 */
#define REC_DAEMON_DISCARDED_WRAPPED (UINT64_C(1) << 63)

/* The events the tracer discarded: the packet indexes', or the daemon's count if larger. */
static void count_discarded(const struct rec_verify_input *input, struct rec_verification *result)
{
	struct po_error err = {{0}};
	uint64_t discarded = 0;
	bool daemon_known =
	    input->daemon_discarded_known && input->daemon_discarded < REC_DAEMON_DISCARDED_WRAPPED;

	if (rec_trace_count_discarded(input->trace_dir, &discarded, &err) != REC_STATUS_OK &&
	    !daemon_known) {
		add_line(result, "warning: cannot tell whether events were lost: %s", err.message);
		return;
	}
	if (daemon_known && input->daemon_discarded > discarded)
		discarded = input->daemon_discarded;
	result->discarded_events = discarded;
	if (discarded)
		add_line(result,
			 "warning: the tracer discarded %llu events (buffers full); the trace is "
			 "incomplete: record again with a larger --subbuf-size or --num-subbuf",
			 (unsigned long long)discarded);
}

/* The last line: what the problems above come to, and what to do. */
static void conclude(const struct rec_verify_input *input, struct rec_verification *result)
{
	if (result->problems > REC_VERIFY_SHOWN)
		add_line(result, "error: and %d more problems like these",
			 result->problems - REC_VERIFY_SHOWN);
	if (result->problems && result->room_low)
		add_line(result,
			 "error: %s: the file system has %lld bytes left: the consumer could not "
			 "write everything, the end of the recording is missing; record to a file "
			 "system with room (-o DIR)",
			 input->trace_dir, (long long)result->free_bytes);
	else if (input->sessiond_ended)
		add_line(result, "error: the recording is incomplete: the session daemon ended "
				 "while the command ran; record again");
	else if (result->unregistered)
		add_line(
		    result,
		    "error: the recording is incomplete: lttng-ust lets a process run untraced "
		    "once it waited LTTNG_UST_REGISTER_TIMEOUT ms (3000 by default) for the "
		    "session daemon; record again, with the default per-user buffers (a process "
		    "registers in milliseconds) or a longer LTTNG_UST_REGISTER_TIMEOUT");
	else if (result->problems)
		add_line(
		    result,
		    "error: the recording is incomplete: record again; with --buffers pid, "
		    "processes that start while the machine is busy can miss their registration "
		    "(the default per-user buffers do not)");
	if (!result->incomplete && result->discarded_events == 0 &&
	    result->line_count < REC_VERIFY_LINES)
		add_line(result, "no events were discarded");
	if (!result->incomplete && result->recorded_dirs == 0)
		add_line(result, "warning: no process recorded a profopt event: is the program "
				 "instrumented (the profopt Python module, or libprofopt)?");
}

void rec_verify(const struct rec_verify_input *input, struct rec_verification *result)
{
	char ust[4096];
	struct statvfs fs;

	memset(result, 0, sizeof(*result));
	result->free_bytes = -1;
	result->trace_end_ns = -1;
	if (statvfs(input->trace_dir, &fs) == 0)
		result->free_bytes = (int64_t)fs.f_bavail * (int64_t)fs.f_frsize;
	result->room_low = result->free_bytes >= 0 && result->free_bytes < REC_ROOM_LOW_BYTES;
	count_discarded(input, result);
	if (join(ust, sizeof(ust), input->trace_dir, "ust"))
		walk(ust, 0, input, result);
	check_end(input, result);
	check_registrations(input, result);
	result->incomplete = result->problems > 0 || result->unregistered > 0;
	conclude(input, result);
}
