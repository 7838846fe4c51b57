/*
 * repair.c: --salvage per stream and per packet. A trace directory that the decoder
 * cannot read whole used to be left out entirely, with the training loop in it, when only
 * its last packet was bad. Here each of its streams is decoded alone; a stream that fails
 * is cut to its longest prefix of whole packets that decodes (a binary search over packet
 * counts), and a shadow trace directory (under TMPDIR) holds the repaired trace: links to
 * the good files, and prefixes of the bad streams. The analysis then reads the shadow.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/arena.h"
#include "ingest.h"
#include "ingest_internal.h"

#define HEADER_BYTES 64
#define PACKET_MAGIC 0xC1FC1FC1u

/* Where each whole packet of a stream file ends, and when it begins (lttng-ust layout). */
struct packets {
	off_t *ends;
	int64_t *begins;
	size_t count;
	size_t capacity;
};

static uint64_t load(const unsigned char *bytes, int size, bool big_endian)
{
	uint64_t value = 0;

	for (int i = 0; i < size; i++)
		value |= (uint64_t)bytes[big_endian ? size - 1 - i : i] << (8 * i);
	return value;
}

static enum po_status list_packets(const char *path, struct packets *packets)
{
	unsigned char header[HEADER_BYTES];
	struct po_error ignored = {{0}};
	struct stat st;
	bool big_endian = false;
	off_t offset = 0;
	int fd = po_trace_file_open(path, &ignored);

	if (fd < 0)
		return PO_STATUS_INPUT;
	if (fstat(fd, &st) != 0) {
		close(fd);
		return PO_STATUS_INPUT;
	}
	while (offset + HEADER_BYTES <= st.st_size &&
	       pread(fd, header, sizeof(header), offset) == sizeof(header)) {
		uint64_t bits;

		if (offset == 0)
			big_endian = load(header, 4, false) != PACKET_MAGIC;
		if (load(header, 4, big_endian) != PACKET_MAGIC)
			break;
		bits = load(header + 56, 8, big_endian);
		if (bits % 8 || bits / 8 < HEADER_BYTES ||
		    bits / 8 > (uint64_t)(st.st_size - offset))
			break;
		if (po_array_reserve((void **)&packets->ends, &packets->capacity,
				     packets->count + 1, sizeof(*packets->ends)) != PO_STATUS_OK ||
		    !(packets->begins =
			  realloc(packets->begins, packets->capacity * sizeof(*packets->begins)))) {
			close(fd);
			return PO_STATUS_NOMEM;
		}
		packets->begins[packets->count] = (int64_t)load(header + 32, 8, big_endian);
		offset += (off_t)(bits / 8);
		packets->ends[packets->count++] = offset;
	}
	close(fd);
	return PO_STATUS_OK;
}

static bool join(char *out, size_t size, const char *a, const char *b)
{
	return (size_t)snprintf(out, size, "%s/%s", a, b) < size;
}

/* Copies the first `bytes` bytes of from into a new file to. */
static bool copy_prefix(const char *from, const char *to, off_t bytes)
{
	struct po_error ignored = {{0}};
	int in = po_trace_file_open(from, &ignored);
	int out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	char buffer[65536];
	bool ok = in >= 0 && out >= 0;

	while (ok && bytes > 0) {
		ssize_t got = read(in, buffer,
				   bytes < (off_t)sizeof(buffer) ? (size_t)bytes : sizeof(buffer));

		ok = got > 0 && write(out, buffer, (size_t)got) == got;
		bytes -= got > 0 ? got : 0;
	}
	if (in >= 0)
		close(in);
	if (out >= 0 && close(out) != 0)
		ok = false;
	return ok;
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	remove(path);
	return 0;
}

/* Removes a scratch directory made here, without following links out of it. */
static void remove_tree(const char *path)
{
	nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static enum po_status count_event(void *ctx, const struct po_event *event)
{
	(void)event;
	(*(int64_t *)ctx)++;
	return PO_STATUS_OK;
}

/*
 * Whether a trace made of `trace`'s metadata and the first `bytes` of one stream (all of
 * it for -1) decodes; a scratch directory below work is made and removed.
 */
static bool decodes(const char *work, const char *trace, const char *stream_name, off_t bytes)
{
	char dir[PATH_MAX], from[PATH_MAX], to[PATH_MAX];
	struct po_ingest_options options = {.decode_threads = 1};
	struct po_ingest_stats stats;
	struct po_error err = {{0}};
	int64_t events = 0;
	bool ok;

	if (!join(dir, sizeof(dir), work, "probe") || mkdir(dir, 0700) != 0)
		return false;
	ok = join(from, sizeof(from), trace, "metadata") && join(to, sizeof(to), dir, "metadata") &&
	     symlink(from, to) == 0 && join(from, sizeof(from), trace, stream_name) &&
	     join(to, sizeof(to), dir, stream_name) &&
	     (bytes < 0 ? symlink(from, to) == 0 : copy_prefix(from, to, bytes));
	ok = ok && po_ingest_run(dir, &options, count_event, &events, &stats, &err) == PO_STATUS_OK;
	remove_tree(dir);
	return ok;
}

/* Whether a whole trace directory decodes on its own. */
static bool decodes_whole(const char *trace)
{
	struct po_ingest_options options = {.decode_threads = 1};
	struct po_ingest_stats stats;
	struct po_error err = {{0}};
	int64_t events = 0;

	return po_ingest_run(trace, &options, count_event, &events, &stats, &err) == PO_STATUS_OK;
}

/* The number of leading packets of a stream that decode (0 to count - 1). */
static size_t decodable_prefix(const char *work, const char *trace, const char *name,
			       const struct packets *packets)
{
	size_t good = 0, bad = packets->count; /* decodes with `good`, not with `bad` */

	while (bad - good > 1) {
		size_t middle = good + (bad - good) / 2;

		if (decodes(work, trace, name, packets->ends[middle - 1]))
			good = middle;
		else
			bad = middle;
	}
	return good;
}

static enum po_status note_repair(struct po_repair *repair, const char *root, const char *path,
				  const struct packets *packets, size_t kept)
{
	struct po_repaired_stream *entry;
	size_t root_length = strlen(root);

	if (po_array_reserve((void **)&repair->streams, &repair->capacity, repair->count + 1,
			     sizeof(*repair->streams)) != PO_STATUS_OK)
		return PO_STATUS_NOMEM;
	entry = &repair->streams[repair->count++];
	*entry = (struct po_repaired_stream){
	    .kept_packets = kept,
	    .packets = packets->count,
	    .begin_ns = kept < packets->count ? packets->begins[kept] : -1};
	if (strncmp(path, root, root_length) == 0 && path[root_length] == '/')
		path += root_length + 1;
	/* A path longer than the warning keeps is shown cut, and says so. */
	if (snprintf(entry->path, sizeof(entry->path), "%s", path) >= (int)sizeof(entry->path))
		memcpy(entry->path + sizeof(entry->path) - 4, "...", 4);
	return PO_STATUS_OK;
}

/*
 * Mirrors one trace directory into shadow: links to its metadata, streams and index files,
 * and for each stream that fails alone, the prefix of it that decodes (without its index,
 * which would list the packets cut off).
 */
static enum po_status repair_trace(struct po_repair *repair, const char *root, const char *trace,
				   const char *shadow, const char *work)
{
	struct dirent **entries = NULL;
	int entry_count = scandir(trace, &entries, NULL, alphasort);
	char from[PATH_MAX], to[PATH_MAX], index_dir[PATH_MAX];
	enum po_status status = PO_STATUS_OK;

	if (entry_count < 0 || !join(index_dir, sizeof(index_dir), shadow, "index") ||
	    mkdir(index_dir, 0700) != 0)
		status = PO_STATUS_INPUT;
	for (int i = 0; i < entry_count; i++) {
		const char *name = entries[i]->d_name;
		struct packets packets = {0};
		bool whole;

		if (status != PO_STATUS_OK || name[0] == '.' || strcmp(name, "index") == 0 ||
		    !join(from, sizeof(from), trace, name) || !join(to, sizeof(to), shadow, name))
			goto next;
		if (!po_trace_is_stream_name(name)) {
			if (symlink(from, to) != 0)
				status = PO_STATUS_INPUT;
			goto next;
		}
		whole = decodes(work, trace, name, -1);
		if (!whole && (status = list_packets(from, &packets)) == PO_STATUS_OK) {
			size_t kept = decodable_prefix(work, trace, name, &packets);

			if (!copy_prefix(from, to, kept ? packets.ends[kept - 1] : 0))
				status = PO_STATUS_INPUT;
			else
				status = note_repair(repair, root, from, &packets, kept);
		} else if (whole) {
			char index_from[PATH_MAX], index_to[PATH_MAX], idx[300];

			snprintf(idx, sizeof(idx), "index/%s.idx", name);
			if (symlink(from, to) != 0)
				status = PO_STATUS_INPUT;
			else if (join(index_from, sizeof(index_from), trace, idx) &&
				 access(index_from, F_OK) == 0 &&
				 join(index_to, sizeof(index_to), shadow, idx))
				(void)!symlink(index_from, index_to);
		}
		free(packets.ends);
		free(packets.begins);
	next:
		free(entries[i]);
	}
	free(entries);
	return status;
}

/* Mirrors a trace directory that needs no repair: its entries, linked. */
static enum po_status link_trace(const char *trace, const char *shadow)
{
	struct dirent **entries = NULL;
	int entry_count = scandir(trace, &entries, NULL, alphasort);
	enum po_status status = entry_count < 0 ? PO_STATUS_INPUT : PO_STATUS_OK;

	for (int i = 0; i < entry_count; i++) {
		char from[PATH_MAX], to[PATH_MAX];

		if (status == PO_STATUS_OK && entries[i]->d_name[0] != '.' &&
		    (!join(from, sizeof(from), trace, entries[i]->d_name) ||
		     !join(to, sizeof(to), shadow, entries[i]->d_name) || symlink(from, to) != 0))
			status = PO_STATUS_INPUT;
		free(entries[i]);
	}
	free(entries);
	return status;
}

/* mkdir -p of the shadow's copy of `path` (below root); the result in out. */
static bool shadow_dir(const char *root, const char *path, const char *shadow_root, char *out,
		       size_t size)
{
	size_t root_length = strlen(root);
	const char *relative = path + root_length;

	if (strncmp(path, root, root_length) != 0 || (*relative && *relative != '/') ||
	    (size_t)snprintf(out, size, "%s%s", shadow_root, relative) >= size)
		return false;
	for (char *slash = out + strlen(shadow_root) + 1; (slash = strchr(slash, '/')); slash++) {
		*slash = '\0';
		if (mkdir(out, 0700) != 0 && errno != EEXIST)
			return false;
		*slash = '/';
	}
	return mkdir(out, 0700) == 0 || errno == EEXIST;
}

/* Links the trace directory's own top-level files (profopt-recording.txt, notes). */
static void link_top_files(const char *trace_dir, const char *shadow_root)
{
	static const char *const names[] = {"profopt-recording.txt", "profopt-record-notes.txt"};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char from[PATH_MAX], to[PATH_MAX];

		if (join(from, sizeof(from), trace_dir, names[i]) && access(from, F_OK) == 0 &&
		    join(to, sizeof(to), shadow_root, names[i]))
			(void)!symlink(from, to);
	}
}

enum po_status po_ingest_repair(const char *trace_dir, const char *const *skip, size_t skip_count,
				struct po_repair *repair, struct po_error *err)
{
	struct po_trace_list traces = {0};
	const char *tmp = getenv("TMPDIR");
	char work[PATH_MAX], shadow[PATH_MAX], absolute[PATH_MAX];
	enum po_status status;

	memset(repair, 0, sizeof(*repair));
	snprintf(work, sizeof(work), "%s/profopt-salvage-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(work)) {
		po_error_set(err, "--salvage: cannot make a scratch directory in %s: %s",
			     tmp && *tmp ? tmp : "/tmp", strerror(errno));
		return PO_STATUS_INTERNAL;
	}
	if (snprintf(repair->work_dir, sizeof(repair->work_dir), "%s", work) >=
		(int)sizeof(repair->work_dir) ||
	    snprintf(repair->shadow_root, sizeof(repair->shadow_root), "%s/trace", work) >=
		(int)sizeof(repair->shadow_root)) {
		po_error_set(err, "--salvage: the scratch directory's path is too long: %s", work);
		remove_tree(work);
		return PO_STATUS_INTERNAL;
	}
	/* The links must name absolute paths: they are followed from the shadow. */
	if (!realpath(trace_dir, absolute)) {
		po_error_set(err, "--salvage: %s: %s", trace_dir, strerror(errno));
		remove_tree(work);
		return PO_STATUS_INPUT;
	}
	trace_dir = absolute;
	status = po_trace_list_find(trace_dir, &traces, err);
	if (status == PO_STATUS_OK && mkdir(repair->shadow_root, 0700) != 0)
		status = PO_STATUS_INTERNAL;
	for (size_t t = 0; t < traces.count && status == PO_STATUS_OK; t++) {
		bool skipped = false;

		for (size_t s = 0; s < skip_count; s++)
			skipped = skipped || strcmp(skip[s], traces.paths[t]) == 0;
		if (skipped)
			continue;
		if (!shadow_dir(trace_dir, traces.paths[t], repair->shadow_root, shadow,
				sizeof(shadow))) {
			status = PO_STATUS_INTERNAL;
			break;
		}
		status = decodes_whole(traces.paths[t])
			     ? link_trace(traces.paths[t], shadow)
			     : repair_trace(repair, trace_dir, traces.paths[t], shadow, work);
	}
	if (status == PO_STATUS_OK)
		link_top_files(trace_dir, repair->shadow_root);
	if (status == PO_STATUS_NOMEM)
		po_error_set(err, "out of memory");
	else if (status != PO_STATUS_OK && !err->message[0])
		po_error_set(err, "--salvage: cannot build the repaired trace in %s", work);
	po_trace_list_fini(&traces);
	if (status != PO_STATUS_OK || repair->count == 0) {
		remove_tree(work);
		repair->work_dir[0] = repair->shadow_root[0] = '\0';
	}
	return status;
}

void po_repair_fini(struct po_repair *repair)
{
	if (repair->work_dir[0])
		remove_tree(repair->work_dir);
	free(repair->streams);
	memset(repair, 0, sizeof(*repair));
}
