/*
 * check.c: po_ingest_check(), the input checks made before decoding, without babeltrace2.
 *
 * Decisions: an empty (0-byte) stream file is accepted, because babeltrace2 skips it and
 * LTTng leaves one behind for a CPU or a process that recorded nothing; a trace directory
 * with no stream file at all is "metadata only" and refused, and so is a directory whose
 * stream files are all empty (nothing to analyze). A regular file that does not start
 * with the CTF packet magic, in a trace whose metadata declares a magic field, is foreign
 * (babeltrace2 would try to decode it and fail), unless it is named like an LTTng stream file
 * (CHANNEL_N): that is a damaged stream, for the decoder to report and --salvage to leave out.
 * Packetized metadata must be whole: babeltrace2 2.0.4 loops forever on a last packet cut
 * short, so the packet headers are walked here (one 37-byte read per 4 KiB packet).
 * A session still recording is detected by watching the sizes of every stream and metadata
 * file for PO_CHECK_SETTLE_MS: LTTng's consumer daemon appends whole packets as they fill or
 * at each flush period, so a growing file means the session is active. A session that is
 * started but idle for the whole interval is not detected.
 * Before any of this, every file the decoder will open must be a regular file that opens
 * (po_trace_dir_check_files()): babeltrace2 would wait forever on a FIFO, and a process
 * directory whose metadata is gone would be skipped without a word. Nothing here opens a
 * file that could block. With --salvage, such a trace directory is left out and named.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ingest.h"
#include "ingest_internal.h"
#include "kineto_read.h"

#define PO_CHECK_SETTLE_MS 300
#define PO_CTF_PACKET_MAGIC 0xC1FC1FC1u
#define PO_CTF_METADATA_MAGIC 0x75D11D57u

static uint32_t read_u32_le(const unsigned char *bytes)
{
	return (uint32_t)bytes[0] | (uint32_t)bytes[1] << 8 | (uint32_t)bytes[2] << 16 |
	       (uint32_t)bytes[3] << 24;
}

static bool is_magic(const unsigned char *bytes, uint32_t magic)
{
	uint32_t value = read_u32_le(bytes);

	return value == magic || __builtin_bswap32(value) == magic;
}

/* Whether the text of a metadata file declares a packet magic field. */
static bool mentions_magic(FILE *file)
{
	char chunk[8192 + 8];
	size_t kept = 0, got;

	rewind(file);
	while ((got = fread(chunk + kept, 1, sizeof(chunk) - 1 - kept, file)) > 0) {
		size_t len = kept + got;

		chunk[len] = '\0';
		/* The text may hold NUL bytes (packetized metadata): search piecewise. */
		for (size_t at = 0; at < len; at += strlen(chunk + at) + 1) {
			if (strstr(chunk + at, "magic"))
				return true;
		}
		kept = len < 8 ? len : 8;
		memmove(chunk, chunk + len - kept, kept);
	}
	return false;
}

/* CTF packetized metadata: each packet starts with this header (CTF 1.8, section 7.1). */
#define PO_METADATA_HEADER_BYTES 37
#define PO_METADATA_CONTENT_SIZE_AT 24
#define PO_METADATA_PACKET_SIZE_AT 28

static uint32_t read_u32(const unsigned char *bytes, bool swap)
{
	uint32_t value = read_u32_le(bytes);

	return swap ? __builtin_bswap32(value) : value;
}

/*
 * Walks the packet headers of packetized metadata and refuses a file whose last packet is
 * cut short or whose sizes are inconsistent: babeltrace2 may wait forever for the rest of
 * such a packet instead of failing. Costs one small read per packet.
 */
static enum po_status check_metadata_packets(FILE *file, const char *path, struct po_error *err)
{
	unsigned char header[PO_METADATA_HEADER_BYTES];
	struct stat st;
	uint64_t offset = 0;
	bool swap;

	if (fstat(fileno(file), &st) != 0)
		return PO_STATUS_OK; /* the decoder reports an unreadable file */
	while (offset < (uint64_t)st.st_size) {
		uint32_t content_bits, packet_bits;

		if (fseeko(file, (off_t)offset, SEEK_SET) != 0 ||
		    fread(header, 1, sizeof(header), file) != sizeof(header))
			goto truncated;
		swap = read_u32_le(header) != PO_CTF_METADATA_MAGIC;
		content_bits = read_u32(header + PO_METADATA_CONTENT_SIZE_AT, swap);
		packet_bits = read_u32(header + PO_METADATA_PACKET_SIZE_AT, swap);
		if (!is_magic(header, PO_CTF_METADATA_MAGIC) || packet_bits % 8 != 0 ||
		    packet_bits / 8 <= sizeof(header) || content_bits < sizeof(header) * 8 ||
		    content_bits > packet_bits) {
			po_error_set(err,
				     "%s: corrupted metadata packet header at byte %" PRIu64
				     " (magic, content size or packet size out of range)",
				     path, offset);
			return PO_STATUS_INPUT;
		}
		if (offset + packet_bits / 8 > (uint64_t)st.st_size)
			goto truncated;
		offset += packet_bits / 8;
	}
	return PO_STATUS_OK;
truncated:
	po_error_set(err,
		     "%s: truncated metadata: the packet at byte %" PRIu64 " is cut short "
		     "(the trace was not written completely)",
		     path, offset);
	return PO_STATUS_INPUT;
}

/* Metadata text larger than this is not searched for its stream classes. */
#define PO_METADATA_SEARCHED_BYTES (64 * 1024 * 1024)

static bool is_word_char(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

/* Whether text holds word as a whole word, followed (after blanks) by `then` if not 0. */
static bool has_word(const char *text, size_t length, const char *word, char then)
{
	size_t word_length = strlen(word);

	for (const char *at = text;
	     (at = memmem(at, length - (size_t)(at - text), word, word_length)); at++) {
		const char *after = at + word_length;

		if ((at > text && is_word_char((unsigned char)at[-1])) ||
		    (after < text + length && is_word_char((unsigned char)*after)))
			continue;
		while (then && after < text + length && strchr(" \t\r\n", *after))
			after++;
		if (!then || (after < text + length && *after == then))
			return true;
	}
	return false;
}

/* What metadata text declares (po_metadata_declarations()). */
#define DECLARES_STREAM_CLASS 1
#define DECLARES_EVENT_CLASS 2
#define NAMES_STREAM_ID 4 /* its packet header names a stream class */

/*
 * What the metadata declares, from its text or the content of each of its packets
 * (checked whole by check_metadata_packets() before); -1 for a file that cannot be read
 * again, or is very large: the decoder judges it.
 */
static int metadata_declarations(FILE *file, bool packetized)
{
	struct stat st;
	char *text;
	size_t length = 0;
	uint64_t offset = 0;
	int declares = -1;

	if (fstat(fileno(file), &st) != 0 || st.st_size > PO_METADATA_SEARCHED_BYTES ||
	    !(text = malloc((size_t)st.st_size + 1)))
		return -1;
	while (offset < (uint64_t)st.st_size) {
		size_t content = (size_t)st.st_size - offset, packet = content;

		if (packetized) {
			unsigned char header[PO_METADATA_HEADER_BYTES];
			bool swap;

			if (fseeko(file, (off_t)offset, SEEK_SET) != 0 ||
			    fread(header, 1, sizeof(header), file) != sizeof(header))
				break;
			swap = read_u32_le(header) != PO_CTF_METADATA_MAGIC;
			content = read_u32(header + PO_METADATA_CONTENT_SIZE_AT, swap) / 8 -
				  sizeof(header);
			packet = read_u32(header + PO_METADATA_PACKET_SIZE_AT, swap) / 8;
		} else if (fseeko(file, 0, SEEK_SET) != 0) {
			break;
		}
		if (fread(text + length, 1, content, file) != content)
			break;
		length += content;
		offset += packet;
	}
	if (offset >= (uint64_t)st.st_size)
		declares = (has_word(text, length, "stream", '{') ? DECLARES_STREAM_CLASS : 0) |
			   (has_word(text, length, "event", '{') ? DECLARES_EVENT_CLASS : 0) |
			   (has_word(text, length, "stream_id", 0) ? NAMES_STREAM_ID : 0);
	free(text);
	return declares;
}

/* lttng-ust's packet header and context end before this: more content is events. */
#define PO_PACKET_CONTEXT_BYTES 96

/* Whether a stream file of the trace holds a packet with events (lttng-ust's layout). */
static bool streams_hold_events(const char *trace)
{
	struct dirent *entry;
	DIR *handle = opendir(trace); /* owned */
	bool found = false;

	while (handle && !found && (entry = readdir(handle))) {
		struct po_error ignored = {{0}};
		unsigned char header[64];
		char path[4096];
		struct stat st;
		off_t offset = 0;
		bool swap = false;
		int fd;

		if (!po_trace_is_stream_name(entry->d_name) ||
		    (size_t)snprintf(path, sizeof(path), "%s/%s", trace, entry->d_name) >=
			sizeof(path) ||
		    (fd = po_trace_file_open(path, &ignored)) < 0)
			continue;
		while (!found && fstat(fd, &st) == 0 &&
		       offset + (off_t)sizeof(header) <= st.st_size &&
		       pread(fd, header, sizeof(header), offset) == (ssize_t)sizeof(header)) {
			uint64_t content, packet;

			if (offset == 0)
				swap = read_u32_le(header) != PO_CTF_PACKET_MAGIC;
			if (read_u32(header, swap) != PO_CTF_PACKET_MAGIC)
				break;
			content = (uint64_t)read_u32(header + 48, swap) |
				  (uint64_t)read_u32(header + 52, swap) << 32;
			packet = (uint64_t)read_u32(header + 56, swap) |
				 (uint64_t)read_u32(header + 60, swap) << 32;
			if (swap) { /* big-endian 64-bit fields: the halves swap too */
				content = content << 32 | content >> 32;
				packet = packet << 32 | packet >> 32;
			}
			found = content / 8 > PO_PACKET_CONTEXT_BYTES;
			if (packet % 8 || packet / 8 < sizeof(header))
				break;
			offset += (off_t)(packet / 8);
		}
		close(fd);
	}
	if (handle)
		closedir(handle);
	return found;
}

/* Opens a file that po_trace_dir_check_files() accepted, without blocking; NULL with err. */
static FILE *open_trace_file(const char *path, struct po_error *err)
{
	int fd = po_trace_file_open(path, err);
	FILE *file = fd >= 0 ? fdopen(fd, "rb") : NULL;

	if (fd >= 0 && !file) {
		po_error_set(err, "%s: cannot be read: %s", path, strerror(errno));
		close(fd);
	}
	return file;
}

/*
 * The metadata file is CTF: "/ * CTF" text or packetized metadata, whole, and, when
 * data_streams of its stream files hold data, it declares the stream class their packets
 * name and, when they hold events, an event class (a process that registered with the
 * tracer too late leaves metadata without them, which the decoder cannot read).
 * *needs_magic: it declares a packet magic; NULL: not asked.
 */
static enum po_status check_metadata(const char *trace, size_t data_streams, bool *needs_magic,
				     struct po_error *err)
{
	char path[4096];
	unsigned char head[8];
	size_t got;
	FILE *file; /* owned */
	bool packetized;
	struct stat st;
	long long size;
	int declares;

	snprintf(path, sizeof(path), "%s/metadata", trace);
	file = open_trace_file(path, err);
	if (!file)
		return PO_STATUS_INPUT;
	got = fread(head, 1, sizeof(head), file);
	if (got == 0) {
		fclose(file);
		po_error_set(err, "%s: empty metadata file; the trace was not written completely",
			     path);
		return PO_STATUS_INPUT;
	}
	packetized = got >= 4 && is_magic(head, PO_CTF_METADATA_MAGIC);
	if (!(got >= 6 && memcmp(head, "/* CTF", 6) == 0) && !packetized) {
		fclose(file);
		po_error_set(err,
			     "%s: not a CTF metadata file (no \"/* CTF\" header or packet magic)",
			     path);
		return PO_STATUS_INPUT;
	}
	if (packetized && check_metadata_packets(file, path, err) != PO_STATUS_OK) {
		fclose(file);
		return PO_STATUS_INPUT;
	}
	declares = data_streams > 0 ? metadata_declarations(file, packetized) : -1;
	size = fstat(fileno(file), &st) == 0 ? (long long)st.st_size : -1;
	if (declares >= 0 && (declares & NAMES_STREAM_ID) && !(declares & DECLARES_STREAM_CLASS)) {
		po_error_set(err,
			     "%s: declares no stream class (%lld bytes), so the %zu stream file(s) "
			     "beside it cannot be read: the metadata is incomplete (a process that "
			     "registered with the tracer too late to be recorded, or a file cut "
			     "short)",
			     path, size, data_streams);
		fclose(file);
		return PO_STATUS_INPUT;
	}
	if (declares >= 0 && !(declares & DECLARES_EVENT_CLASS) && streams_hold_events(trace)) {
		po_error_set(
		    err,
		    "%s: declares no event class (%lld bytes), and the stream files beside "
		    "it hold events, which cannot be read: the metadata is incomplete (a "
		    "file cut short)",
		    path, size);
		fclose(file);
		return PO_STATUS_INPUT;
	}
	if (needs_magic)
		*needs_magic = mentions_magic(file);
	fclose(file);
	return PO_STATUS_OK;
}

enum po_status po_trace_metadata_check(const char *trace, size_t data_streams, struct po_error *err)
{
	return check_metadata(trace, data_streams, NULL, err);
}

/* One regular file of a trace directory other than "metadata". */
static enum po_status check_stream_file(const char *path, off_t size, bool needs_magic,
					size_t *data_files, struct po_error *err)
{
	unsigned char head[4];
	FILE *file; /* owned */
	size_t got;

	if (size == 0)
		return PO_STATUS_OK;
	if (!needs_magic) {
		(*data_files)++;
		return PO_STATUS_OK;
	}
	file = open_trace_file(path, err);
	if (!file)
		return PO_STATUS_INPUT;
	got = fread(head, 1, sizeof(head), file);
	fclose(file);
	/* A file named like a stream with a bad packet magic is a damaged stream, left to the
	 * decoder (and to --salvage), not a foreign file. */
	if ((got < sizeof(head) || !is_magic(head, PO_CTF_PACKET_MAGIC)) &&
	    !po_trace_is_stream_name(strrchr(path, '/') + 1)) {
		po_error_set(err,
			     "%s: not a CTF stream file (foreign file in a trace directory; "
			     "move it out)",
			     path);
		return PO_STATUS_INPUT;
	}
	(*data_files)++;
	return PO_STATUS_OK;
}

/* Adds to *data_files the trace's non-empty stream files. */
static enum po_status check_trace_files(const char *trace, bool needs_magic, size_t *data_files,
					struct po_error *err)
{
	enum po_status status = PO_STATUS_OK;
	size_t stream_files = 0;
	struct dirent *entry;
	DIR *handle = opendir(trace); /* owned */

	if (!handle) {
		po_error_set(err, "%s: cannot be read: %s", trace, strerror(errno));
		return PO_STATUS_INPUT;
	}
	while (status == PO_STATUS_OK && (entry = readdir(handle))) {
		char path[4096];
		struct stat st;

		if (entry->d_name[0] == '.' || strcmp(entry->d_name, "metadata") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", trace, entry->d_name);
		if (stat(path, &st) != 0 || S_ISDIR(st.st_mode))
			continue;
		if (!S_ISREG(st.st_mode)) {
			po_error_set(err,
				     "%s: not a regular file (foreign file in a trace "
				     "directory; move it out)",
				     path);
			status = PO_STATUS_INPUT;
			break;
		}
		stream_files++;
		status = check_stream_file(path, st.st_size, needs_magic, data_files, err);
	}
	closedir(handle);
	if (status == PO_STATUS_OK && stream_files == 0) {
		po_error_set(err,
			     "%s: metadata only, no stream data (nothing was recorded, or "
			     "the buffers were never flushed)",
			     trace);
		status = PO_STATUS_INPUT;
	}
	return status;
}

/* The size of every file of the traces, to tell whether a session still writes into them. */
struct po_size_entry {
	ino_t inode;
	off_t size;
};

struct po_size_snapshot {
	struct po_size_entry *entries; /* owned */
	size_t count;
	size_t capacity;
	char grown[4096]; /* a file whose size changed, found by the second pass */
};

static off_t snapshot_size_of(const struct po_size_snapshot *snap, ino_t inode)
{
	for (size_t i = 0; i < snap->count; i++) {
		if (snap->entries[i].inode == inode)
			return snap->entries[i].size;
	}
	return -1;
}

static void snapshot_add(struct po_size_snapshot *snap, ino_t inode, off_t size)
{
	if (snap->count == snap->capacity) {
		size_t capacity = snap->capacity ? snap->capacity * 2 : 64;
		struct po_size_entry *entries = realloc(snap->entries, capacity * sizeof(*entries));

		if (!entries)
			return; /* the heuristic then sees fewer files */
		snap->entries = entries;
		snap->capacity = capacity;
	}
	snap->entries[snap->count++] = (struct po_size_entry){inode, size};
}

/* First pass (compare NULL): records sizes; second pass: notes a file whose size changed. */
static void snapshot_trace(const char *trace, struct po_size_snapshot *snap,
			   const struct po_size_snapshot *compare)
{
	struct dirent *entry;
	DIR *handle = opendir(trace); /* owned */

	while (handle && (entry = readdir(handle)) && !snap->grown[0]) {
		char path[4096];
		struct stat st;

		if (entry->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", trace, entry->d_name);
		if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		if (!compare)
			snapshot_add(snap, st.st_ino, st.st_size);
		else if (snapshot_size_of(compare, st.st_ino) != st.st_size)
			snprintf(snap->grown, sizeof(snap->grown), "%s", path);
	}
	if (handle)
		closedir(handle);
}

/* The sizes taken by po_ingest_check_start(), compared by po_ingest_check_finish(). */
struct po_ingest_watch {
	struct po_trace_list traces; /* owned: the traces to decode */
	struct po_size_snapshot before;
	struct timespec taken; /* CLOCK_MONOTONIC */
	int64_t skipped_count; /* trace directories left out (salvage) */
	char skipped_note[PO_ERROR_MAX];
};

void po_ingest_watch_destroy(struct po_ingest_watch *watch)
{
	if (!watch)
		return;
	po_trace_list_fini(&watch->traces);
	free(watch->before.entries);
	free(watch);
}

/* Sleeps until PO_CHECK_SETTLE_MS have passed since `since`. */
static void wait_settle(const struct timespec *since)
{
	struct timespec now, pause = {0, 0};
	int64_t elapsed_ns;

	clock_gettime(CLOCK_MONOTONIC, &now);
	elapsed_ns =
	    (int64_t)(now.tv_sec - since->tv_sec) * 1000000000 + (now.tv_nsec - since->tv_nsec);
	if (elapsed_ns >= PO_CHECK_SETTLE_MS * 1000000L)
		return;
	pause.tv_nsec = PO_CHECK_SETTLE_MS * 1000000L - elapsed_ns;
	while (nanosleep(&pause, &pause) != 0 && errno == EINTR)
		;
}

enum po_status po_ingest_check_finish(struct po_ingest_watch *watch, struct po_error *err)
{
	struct po_size_snapshot after = {0};
	enum po_status status = PO_STATUS_OK;

	wait_settle(&watch->taken);
	for (size_t i = 0; i < watch->traces.count && !after.grown[0]; i++)
		snapshot_trace(watch->traces.paths[i], &after, &watch->before);
	if (after.grown[0]) {
		po_error_set(err,
			     "%s: still being written (a tracing session is recording into this "
			     "directory; stop it with `lttng stop` or `lttng destroy` first)",
			     after.grown);
		status = PO_STATUS_INPUT;
	}
	po_ingest_watch_destroy(watch);
	return status;
}

static enum po_status check_root(const char *trace_dir, struct po_error *err)
{
	struct stat st;

	if (stat(trace_dir, &st) != 0) {
		po_error_set(err, "%s: %s", trace_dir, strerror(errno));
		return PO_STATUS_INPUT;
	}
	if (!S_ISDIR(st.st_mode)) {
		po_error_set(err,
			     "%s: not a directory (give the directory that profopt-record "
			     "or lttng wrote)",
			     trace_dir);
		return PO_STATUS_INPUT;
	}
	return PO_STATUS_OK;
}

/* Notes a trace directory left out by the salvage check, with its cause (relative paths). */
static void note_skipped(struct po_ingest_watch *watch, const char *trace_dir, const char *trace,
			 const char *cause)
{
	size_t used = strlen(watch->skipped_note);
	size_t trace_len = strlen(trace);

	/* The cause starts with the file's path: the part below the trace directory stays. */
	if (strncmp(cause, trace, trace_len) == 0 && cause[trace_len] == '/')
		cause += trace_len + 1;
	snprintf(watch->skipped_note + used, sizeof(watch->skipped_note) - used,
		 "%sskipped trace path=%s: %s", used ? "; " : "",
		 po_trace_relative_path(trace, trace_dir), cause);
	watch->skipped_count++;
}

/*
 * Checks one trace directory; with salvage, one whose files cannot be opened or whose
 * metadata cannot be read is noted and *kept set to false instead of failing.
 */
static enum po_status check_one_trace(struct po_ingest_watch *watch, const char *trace_dir,
				      const char *trace, bool salvage, size_t *data_files,
				      bool *kept, struct po_error *err)
{
	struct po_error files_err = {{0}};
	enum po_status status = po_trace_dir_check_files(trace, &files_err);
	bool needs_magic = false;

	*kept = status == PO_STATUS_OK;
	if (status == PO_STATUS_INPUT && salvage) {
		note_skipped(watch, trace_dir, trace, files_err.message);
		return PO_STATUS_OK;
	}
	if (status != PO_STATUS_OK) {
		*err = files_err;
		return status;
	}
	status = check_metadata(trace, 0, &needs_magic, err);
	if (status == PO_STATUS_OK)
		status = check_trace_files(trace, needs_magic, data_files, err);
	return status;
}

/* Checks every trace directory found; the ones left out leave watch->traces. */
static enum po_status check_traces(struct po_ingest_watch *watch, const char *trace_dir,
				   bool salvage, size_t *data_files, struct po_error *err)
{
	enum po_status status = PO_STATUS_OK;
	size_t kept_count = 0;

	for (size_t i = 0; i < watch->traces.count; i++) {
		bool kept = true;

		if (status == PO_STATUS_OK)
			status = check_one_trace(watch, trace_dir, watch->traces.paths[i], salvage,
						 data_files, &kept, err);
		if (kept)
			watch->traces.paths[kept_count++] = watch->traces.paths[i];
		else
			free(watch->traces.paths[i]);
	}
	watch->traces.count = kept_count;
	if (status == PO_STATUS_OK && kept_count == 0) {
		po_error_set(err, "%s: no trace can be decoded: %s", trace_dir,
			     watch->skipped_note);
		status = PO_STATUS_INPUT;
	}
	return status;
}

/*
 * Several torch.profiler traces are one job's ranks, one file each: a rank that two files
 * claim (a copy, or two runs in one directory) is refused, naming both.
 */
static enum po_status check_kineto_ranks(const struct po_trace_list *traces, struct po_error *err)
{
	int64_t *ranks = calloc(traces->count, sizeof(*ranks));
	enum po_status status = ranks ? PO_STATUS_OK : PO_STATUS_NOMEM;

	for (size_t i = 0; status == PO_STATUS_OK && i < traces->count; i++) {
		struct po_kineto_distributed info;

		status = po_kineto_read_rank(traces->paths[i], &info, err);
		ranks[i] = info.rank;
		for (size_t j = 0; status == PO_STATUS_OK && info.rank >= 0 && j < i; j++) {
			if (ranks[j] != info.rank)
				continue;
			po_error_set(err,
				     "%s: rank %lld again (%s is rank %lld): a directory of "
				     "torch.profiler traces holds one file per rank of one run",
				     traces->paths[i], (long long)info.rank, traces->paths[j],
				     (long long)ranks[j]);
			status = PO_STATUS_INPUT;
		}
	}
	if (status == PO_STATUS_NOMEM)
		po_error_set(err, "Failed to check the traces: out of memory");
	free(ranks);
	return status;
}

/* torch.profiler traces: each opens as a regular file; *data_files counts those not empty. */
static enum po_status check_kineto_files(const struct po_trace_list *traces, size_t *data_files,
					 struct po_error *err)
{
	for (size_t i = 0; i < traces->count; i++) {
		struct stat st;
		int fd = po_trace_file_open(traces->paths[i], err);

		if (fd < 0)
			return PO_STATUS_INPUT;
		*data_files += fstat(fd, &st) == 0 && st.st_size > 0;
		close(fd);
	}
	return traces->count > 1 ? check_kineto_ranks(traces, err) : PO_STATUS_OK;
}

static enum po_status check_start(const char *trace_dir, bool salvage, struct po_ingest_watch **out,
				  struct po_error *err)
{
	struct po_ingest_watch *watch = calloc(1, sizeof(*watch)); /* owned */
	size_t data_files = 0;
	enum po_status status =
	    po_trace_is_kineto(trace_dir) ? PO_STATUS_OK : check_root(trace_dir, err);

	*out = NULL;
	if (!watch) {
		po_error_set(err, "Failed to check the trace: out of memory");
		return PO_STATUS_NOMEM;
	}
	if (status == PO_STATUS_OK)
		status = po_trace_list_find_all(trace_dir, &watch->traces, err);
	if (status == PO_STATUS_OK && watch->traces.count == 0) {
		po_error_set(err, "%s: not a trace (no CTF \"metadata\" file below it)", trace_dir);
		status = PO_STATUS_INPUT;
	}
	if (status == PO_STATUS_OK && po_trace_is_kineto(watch->traces.paths[0]))
		status = check_kineto_files(&watch->traces, &data_files, err);
	else if (status == PO_STATUS_OK)
		status = check_traces(watch, trace_dir, salvage, &data_files, err);
	if (status == PO_STATUS_OK && data_files == 0) {
		po_error_set(err, "%s: every stream file is empty (0 bytes): nothing was recorded",
			     trace_dir);
		status = PO_STATUS_INPUT;
	}
	if (status != PO_STATUS_OK) {
		po_ingest_watch_destroy(watch);
		return status;
	}
	for (size_t i = 0; i < watch->traces.count; i++)
		snapshot_trace(watch->traces.paths[i], &watch->before, NULL);
	clock_gettime(CLOCK_MONOTONIC, &watch->taken);
	*out = watch;
	return PO_STATUS_OK;
}

enum po_status po_ingest_check_start(const char *trace_dir, struct po_ingest_watch **out,
				     struct po_error *err)
{
	return check_start(trace_dir, false, out, err);
}

enum po_status po_ingest_check_start_salvage(const char *trace_dir, struct po_ingest_watch **out,
					     struct po_error *err)
{
	return check_start(trace_dir, true, out, err);
}

const char *po_ingest_watch_borrow_skipped(const struct po_ingest_watch *watch, int64_t *count)
{
	*count = watch->skipped_count;
	return watch->skipped_note;
}

enum po_status po_ingest_check(const char *trace_dir, struct po_error *err)
{
	struct po_ingest_watch *watch;
	enum po_status status = po_ingest_check_start(trace_dir, &watch, err);

	return status == PO_STATUS_OK ? po_ingest_check_finish(watch, err) : status;
}
