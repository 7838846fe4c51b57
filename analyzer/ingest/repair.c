/*
 * repair.c: --salvage per stream and per packet. A trace directory that the decoder
 * cannot read whole used to be left out entirely: with per-process buffers the process
 * with the training loop in it, with per-user buffers (one trace directory for every
 * process) the whole recording, when only one packet was bad. Here each of its streams is
 * decoded alone; a stream that fails keeps the packets that decode: the longest run of
 * packets that decodes after those kept is found by a binary search, the packet after it
 * is left out, and the search goes on after it (at most PO_REPAIR_BAD_PACKETS times). The
 * packets come from their headers, or from the stream's index where a header is damaged.
 * A shadow trace directory (under TMPDIR, made and removed here, never in the trace) holds
 * the repaired trace: links to the good files, and copies of the bad streams without their
 * bad packets. The analysis then reads the shadow. Each probe decodes in a child process:
 * libbabeltrace2 aborts on some damaged packets, and such a packet is one that does not
 * decode, not the end of the repair.
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
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/arena.h"
#include "../common/isolate.h"
#include "ingest.h"
#include "ingest_internal.h"

#define HEADER_BYTES 64
#define PACKET_MAGIC 0xC1FC1FC1u
#define MAX_PACKETS 10000000 /* a bound on a damaged file's walk */

/* One packet of a stream file: where it lies, and its times (from its header or index). */
struct packet {
	off_t offset;
	off_t bytes;
	int64_t begin_ns;
	int64_t end_ns;
};

/* The packets of a stream file, in file order; past listed_bytes, nothing is a packet. */
struct packets {
	struct packet *items;
	size_t count;
	size_t capacity;
	off_t listed_bytes;
	off_t file_bytes;
};

/*
 * The packets a probe decodes: those of `keep` before `start`, and every one from `start`
 * to `end`. A NULL packets is the whole stream file, as it is.
 */
struct selection {
	const struct packets *packets;
	const bool *keep;
	size_t start;
	size_t end;
};

static uint64_t load(const unsigned char *bytes, int size, bool big_endian)
{
	uint64_t value = 0;

	for (int i = 0; i < size; i++)
		value |= (uint64_t)bytes[big_endian ? size - 1 - i : i] << (8 * i);
	return value;
}

static bool join(char *out, size_t size, const char *a, const char *b)
{
	return (size_t)snprintf(out, size, "%s/%s", a, b) < size;
}

/* The index's packet that starts at offset, from *next on (entries are in file order). */
static const struct po_index_packet *index_at(const struct po_index_packet *index, size_t count,
					      size_t *next, off_t offset)
{
	while (*next < count && index[*next].offset < offset)
		(*next)++;
	return *next < count && index[*next].offset == offset ? &index[*next] : NULL;
}

static enum po_status add_packet(struct packets *packets, struct packet packet)
{
	if (po_array_reserve((void **)&packets->items, &packets->capacity, packets->count + 1,
			     sizeof(*packets->items)) != PO_STATUS_OK)
		return PO_STATUS_NOMEM;
	packets->items[packets->count++] = packet;
	return PO_STATUS_OK;
}

/*
 * Whether a packet of `bytes` at offset fits in the file and is followed by its end or
 * by another packet's magic.
 */
static bool packet_fits(int fd, off_t size, off_t offset, uint64_t bytes, bool big_endian)
{
	unsigned char magic[4];

	if (bytes < HEADER_BYTES || bytes > (uint64_t)(size - offset))
		return false;
	return offset + (off_t)bytes == size ||
	       (pread(fd, magic, sizeof(magic), offset + (off_t)bytes) == sizeof(magic) &&
		load(magic, 4, big_endian) == PACKET_MAGIC);
}

/*
 * Lists the packets of trace/name (lttng-ust layout: magic, then the packet context's
 * timestamp_begin at byte 32, timestamp_end at 40, packet_size in bits at 56). The size a
 * packet's header gives is taken when the next packet starts there (or the file ends);
 * else the size its index gives for that offset, on the same terms; else the header's
 * when it fits in the file. A packet whose size neither gives ends the walk.
 */
static enum po_status list_packets(const char *trace, const char *name, struct packets *packets)
{
	unsigned char header[HEADER_BYTES];
	struct po_index_packet *index = NULL;
	struct po_error ignored = {{0}};
	char path[PATH_MAX];
	size_t index_count = 0, next = 0;
	enum po_status status;
	struct stat st;
	bool big_endian = false;
	off_t offset = 0;
	int fd;

	if (!join(path, sizeof(path), trace, name) || (fd = po_trace_file_open(path, &ignored)) < 0)
		return PO_STATUS_INPUT;
	if (fstat(fd, &st) != 0) {
		close(fd);
		return PO_STATUS_INPUT;
	}
	status = po_index_read(trace, name, &index, &index_count);
	packets->file_bytes = st.st_size;
	if (pread(fd, header, 4, 0) == 4)
		big_endian =
		    load(header, 4, false) != PACKET_MAGIC && load(header, 4, true) == PACKET_MAGIC;
	while (status == PO_STATUS_OK && offset < st.st_size && packets->count < MAX_PACKETS) {
		const struct po_index_packet *listed = index_at(index, index_count, &next, offset);
		struct packet packet = {.offset = offset, .bytes = 0, .begin_ns = -1, .end_ns = -1};
		uint64_t bits = 0;

		bool from_header, from_index;

		if (offset + HEADER_BYTES <= st.st_size &&
		    pread(fd, header, sizeof(header), offset) == sizeof(header) &&
		    load(header, 4, big_endian) == PACKET_MAGIC)
			bits = load(header + 56, 8, big_endian);
		from_header =
		    bits % 8 == 0 && packet_fits(fd, st.st_size, offset, bits / 8, big_endian);
		from_index =
		    !from_header && listed &&
		    packet_fits(fd, st.st_size, offset, (uint64_t)listed->bytes, big_endian);
		if (!from_header && !from_index && bits % 8 == 0 && bits / 8 >= HEADER_BYTES &&
		    bits / 8 <= (uint64_t)(st.st_size - offset))
			from_header = true; /* the next packet is damaged too, or the file's end */
		if (from_header) {
			packet.bytes = (off_t)(bits / 8);
			packet.begin_ns = (int64_t)(load(header + 32, 8, big_endian) & INT64_MAX);
			packet.end_ns = (int64_t)(load(header + 40, 8, big_endian) & INT64_MAX);
		} else if (from_index) {
			packet.bytes = listed->bytes;
			packet.begin_ns = listed->begin_ns;
			packet.end_ns = listed->end_ns;
		} else {
			break;
		}
		status = add_packet(packets, packet);
		offset += packet.bytes;
	}
	packets->listed_bytes = offset;
	free(index);
	close(fd);
	return status;
}

/* Copies length bytes at offset of in to the end of out. */
static bool copy_range(int in, int out, off_t offset, off_t length)
{
	char buffer[65536];

	while (length > 0) {
		ssize_t got = copy_file_range(in, &offset, out, NULL, (size_t)length, 0);

		if (got < 0 &&
		    (errno == ENOSYS || errno == EXDEV || errno == EINVAL || errno == EOPNOTSUPP)) {
			got =
			    pread(in, buffer,
				  length < (off_t)sizeof(buffer) ? (size_t)length : sizeof(buffer),
				  offset);
			if (got > 0 && write(out, buffer, (size_t)got) != got)
				return false;
			offset += got > 0 ? got : 0;
		}
		if (got <= 0)
			return false;
		length -= got;
	}
	return true;
}

static bool selected(const struct selection *selection, size_t i)
{
	return (i < selection->start && selection->keep[i]) ||
	       (i >= selection->start && i < selection->end);
}

/* Writes the selected packets of from into a new file to (from is opened only for some). */
static bool write_selection(const char *from, const char *to, const struct selection *selection)
{
	const struct packets *packets = selection->packets;
	struct po_error ignored = {{0}};
	int out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	int in = -1;
	bool ok = out >= 0;

	for (size_t i = 0; ok && i < packets->count; i++) {
		if (!selected(selection, i))
			continue;
		if (in < 0 && (in = po_trace_file_open(from, &ignored)) < 0)
			ok = false;
		else
			ok = copy_range(in, out, packets->items[i].offset, packets->items[i].bytes);
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

/* Removes a probe's directory inside the scratch directory, without following links. */
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
 * Decodes a directory in a child process, its stderr on /dev/null (the library's log lines
 * before an abort). Returns 1 when it decodes whole, 0 when it fails with an error, -1 when
 * the child died (a crash of the decoder) or could not be started; the signal in *signo.
 */
static int decodes_in_child(const char *trace, const struct po_ingest_options *options, int *signo)
{
	int wstatus = 0;
	pid_t child;

	*signo = 0;
	fflush(NULL);
	child = fork();
	if (child < 0)
		return -1;
	if (child == 0) {
		struct po_ingest_stats stats;
		struct po_error err = {{0}};
		int64_t events = 0;
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

		if (null >= 0)
			dup2(null, STDERR_FILENO);
		po_isolate_detach(); /* a probe's files are not the analysis's */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)
			_exit(3);
		_exit(po_ingest_run(trace, options, count_event, &events, &stats, &err) ==
			      PO_STATUS_OK
			  ? 0
			  : 1);
	}
	while (waitpid(child, &wstatus, 0) < 0) {
		if (errno != EINTR)
			return -1;
	}
	if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) <= 1)
		return WEXITSTATUS(wstatus) == 0;
	if (WIFSIGNALED(wstatus))
		*signo = WTERMSIG(wstatus);
	return -1;
}

/* Whether a directory decodes whole; a crash of the decoder is a no. */
static bool decodes_whole(const char *trace)
{
	struct po_ingest_options options = {.decode_threads = 1};
	int signo;

	return decodes_in_child(trace, &options, &signo) == 1;
}

enum po_status po_ingest_survives(const char *trace_dir, const struct po_ingest_options *options,
				  struct po_error *err)
{
	int signo;

	if (decodes_in_child(trace_dir, options, &signo) >= 0 || signo == 0)
		return PO_STATUS_OK;
	po_error_set(err, "the trace decoder crashed (%s) on %s; the trace is malformed",
		     po_signal_name(signo), trace_dir);
	return PO_STATUS_DECODE;
}

/*
 * Whether a trace made of `trace`'s metadata and the selected packets of its stream
 * stream_name decodes; a scratch directory below work is made and removed.
 */
static bool decodes(const char *work, const char *trace, const char *stream_name,
		    const struct selection *selection)
{
	char dir[PATH_MAX], from[PATH_MAX], to[PATH_MAX];
	bool ok;

	if (!join(dir, sizeof(dir), work, "probe") || mkdir(dir, 0700) != 0)
		return false;
	ok = join(from, sizeof(from), trace, "metadata") && join(to, sizeof(to), dir, "metadata") &&
	     symlink(from, to) == 0 && join(from, sizeof(from), trace, stream_name) &&
	     join(to, sizeof(to), dir, stream_name) &&
	     (selection->packets ? write_selection(from, to, selection) : symlink(from, to) == 0);
	ok = ok && decodes_whole(dir);
	remove_tree(dir);
	return ok;
}

/*
 * Marks in keep the packets of a stream that does not decode whole to keep: after those
 * kept, the longest run that decodes with them (a binary search), then the packet after
 * it is left out, and so on from the next one. After PO_REPAIR_BAD_PACKETS packets left
 * out, the rest of the stream goes too.
 */
static void select_packets(const char *work, const char *trace, const char *name,
			   const struct packets *packets, bool *keep)
{
	size_t start = 0, left_out = 0, count = packets->count;

	while (start < count && left_out < PO_REPAIR_BAD_PACKETS) {
		struct selection probe = {packets, keep, start, count};
		size_t good = start, bad = count; /* decodes up to `good`, not up to `bad` */

		/* The whole stream is known not to decode; with a damaged end, its packets may. */
		if ((start > 0 || packets->listed_bytes < packets->file_bytes) &&
		    decodes(work, trace, name, &probe)) {
			good = count;
		} else {
			while (bad - good > 1) {
				probe.end = good + (bad - good) / 2;
				if (decodes(work, trace, name, &probe))
					good = probe.end;
				else
					bad = probe.end;
			}
		}
		for (size_t i = start; i < good; i++)
			keep[i] = true;
		start = good + 1; /* packet `good`, if any, is left out */
		left_out += good < count;
	}
}

static enum po_status add_window(struct po_repair *repair, int64_t begin_ns, int64_t end_ns)
{
	if (po_array_reserve((void **)&repair->windows, &repair->window_capacity,
			     repair->window_count + 1, sizeof(*repair->windows)) != PO_STATUS_OK)
		return PO_STATUS_NOMEM;
	repair->windows[repair->window_count++] = (struct po_repair_window){
	    .stream = repair->count - 1, .begin_ns = begin_ns, .end_ns = end_ns};
	return PO_STATUS_OK;
}

/*
 * The windows of time a repaired stream lost: each run of packets left out, from the end
 * of the packet kept before it (its own begin for the first packets) to the begin of the
 * next kept one (the trace's end after the last), and a damaged end of the file.
 */
static enum po_status note_windows(struct po_repair *repair, const struct packets *packets,
				   const bool *keep)
{
	const struct packet *items = packets->items;
	enum po_status status = PO_STATUS_OK;
	size_t count = packets->count;

	for (size_t i = 0; i < count && status == PO_STATUS_OK;) {
		size_t end = i;
		int64_t begin_ns;

		if (keep[i]) {
			i++;
			continue;
		}
		while (end < count && !keep[end])
			end++;
		if (i > 0)
			begin_ns = items[i - 1].end_ns;
		else /* the first packet's own time, unless its header is plainly damaged */
			begin_ns = end == count || items[0].begin_ns <= items[end].begin_ns
				       ? items[0].begin_ns
				       : -1;
		status = add_window(repair, begin_ns, end < count ? items[end].begin_ns : -1);
		i = end;
	}
	if (status == PO_STATUS_OK && packets->listed_bytes < packets->file_bytes &&
	    (count == 0 || keep[count - 1]))
		status = add_window(repair, count ? items[count - 1].end_ns : -1, -1);
	return status;
}

static enum po_status note_repair(struct po_repair *repair, const char *root, const char *path,
				  const struct packets *packets, const bool *keep)
{
	struct po_repaired_stream *entry;
	size_t root_length = strlen(root);

	if (po_array_reserve((void **)&repair->streams, &repair->capacity, repair->count + 1,
			     sizeof(*repair->streams)) != PO_STATUS_OK)
		return PO_STATUS_NOMEM;
	entry = &repair->streams[repair->count++];
	*entry = (struct po_repaired_stream){
	    .packets = packets->count + (packets->listed_bytes < packets->file_bytes),
	    .bytes = packets->file_bytes};
	for (size_t i = 0; i < packets->count; i++) {
		entry->kept_packets += keep[i];
		entry->kept_bytes += keep[i] ? packets->items[i].bytes : 0;
	}
	if (strncmp(path, root, root_length) == 0 && path[root_length] == '/')
		path += root_length + 1;
	/* A path longer than the warning keeps is shown cut, and says so. */
	if (snprintf(entry->path, sizeof(entry->path), "%s", path) >= (int)sizeof(entry->path))
		memcpy(entry->path + sizeof(entry->path) - 4, "...", 4);
	return note_windows(repair, packets, keep);
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

/* Repairs one stream that does not decode alone into shadow/name, and notes it. */
static enum po_status repair_stream(struct po_repair *repair, const char *root, const char *trace,
				    const char *name, const char *shadow, const char *work)
{
	struct packets packets = {0};
	char from[PATH_MAX], to[PATH_MAX];
	enum po_status status = list_packets(trace, name, &packets);
	bool *keep = NULL;

	if (status == PO_STATUS_OK && !(keep = calloc(packets.count + 1, sizeof(*keep))))
		status = PO_STATUS_NOMEM;
	if (status == PO_STATUS_OK) {
		struct selection kept = {&packets, keep, packets.count, packets.count};

		select_packets(work, trace, name, &packets, keep);
		if (!join(from, sizeof(from), trace, name) || !join(to, sizeof(to), shadow, name) ||
		    !write_selection(from, to, &kept))
			status = PO_STATUS_INPUT;
	}
	if (status == PO_STATUS_OK)
		status = note_repair(repair, root, from, &packets, keep);
	free(keep);
	free(packets.items);
	return status;
}

/*
 * Mirrors one trace directory into shadow: links to its metadata, streams and index files,
 * and for each stream that fails alone, a copy of the packets that decode (without its
 * index, which would list the packets left out). A trace whose metadata does not decode
 * with an empty stream has nothing to repair: it is mirrored as it is, for the analysis
 * to leave out and name again.
 */
static enum po_status repair_trace(struct po_repair *repair, const char *root, const char *trace,
				   const char *shadow, const char *work)
{
	static const struct packets no_packets = {0};
	const struct selection empty = {&no_packets, NULL, 0, 0};
	struct dirent **entries = NULL;
	char from[PATH_MAX], to[PATH_MAX], index_dir[PATH_MAX];
	enum po_status status = PO_STATUS_OK;
	int entry_count;

	if (!decodes(work, trace, "probe_0", &empty))
		return link_trace(trace, shadow);
	entry_count = scandir(trace, &entries, NULL, alphasort);
	if (entry_count < 0 || !join(index_dir, sizeof(index_dir), shadow, "index") ||
	    mkdir(index_dir, 0700) != 0)
		status = PO_STATUS_INPUT;
	for (int i = 0; i < entry_count; i++) {
		const char *name = entries[i]->d_name;
		const struct selection whole = {NULL, NULL, 0, 0};
		char index_from[PATH_MAX], index_to[PATH_MAX], idx[300];

		if (status != PO_STATUS_OK || name[0] == '.' || strcmp(name, "index") == 0 ||
		    !join(from, sizeof(from), trace, name) || !join(to, sizeof(to), shadow, name)) {
			free(entries[i]);
			continue;
		}
		if (!po_trace_is_stream_name(name)) {
			if (symlink(from, to) != 0)
				status = PO_STATUS_INPUT;
		} else if (!decodes(work, trace, name, &whole)) {
			status = repair_stream(repair, root, trace, name, shadow, work);
		} else if (symlink(from, to) != 0) {
			status = PO_STATUS_INPUT;
		} else {
			snprintf(idx, sizeof(idx), "index/%s.idx", name);
			if (join(index_from, sizeof(index_from), trace, idx) &&
			    access(index_from, F_OK) == 0 &&
			    join(index_to, sizeof(index_to), shadow, idx))
				(void)!symlink(index_from, index_to);
		}
		free(entries[i]);
	}
	free(entries);
	return status;
}

/* mkdir -p of the shadow's copy of `path` (below root, or root itself); the result in out. */
static bool shadow_dir(const char *root, const char *path, const char *shadow_root, char *out,
		       size_t size)
{
	size_t root_length = strlen(root);
	const char *relative = path + root_length;

	if (strncmp(path, root, root_length) != 0 || (*relative && *relative != '/') ||
	    (size_t)snprintf(out, size, "%s%s", shadow_root, relative) >= size)
		return false;
	for (char *slash = out + strlen(shadow_root); (slash = strchr(slash, '/')); slash++) {
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

/* Whether trace (below absolute) is one of skip (below given, as the caller named it). */
static bool is_skipped(const char *trace, const char *absolute, const char *given,
		       const char *const *skip, size_t skip_count)
{
	const char *relative = po_trace_relative_path(trace, absolute);

	for (size_t s = 0; s < skip_count; s++) {
		if (strcmp(po_trace_relative_path(skip[s], given), relative) == 0)
			return true;
	}
	return false;
}

/* Removes the scratch directory, and forgets it. */
static void remove_scratch(struct po_repair *repair)
{
	po_isolate_scratch_remove(repair->work_dir);
	repair->work_dir[0] = repair->shadow_root[0] = '\0';
}

/*
 * Makes the scratch directory TMPDIR/profopt-salvage-XXXXXX with profopt's mark, which the
 * parent of the analysis removes if the analysis dies while it is there, and which has it
 * name the shadow's files as the trace's (given) (po_isolate_scratch_make()).
 */
static enum po_status make_scratch(struct po_repair *repair, const char *given,
				   struct po_error *err)
{
	const char *tmp = getenv("TMPDIR");
	char shown[PATH_MAX];
	size_t shown_len;

	if (!tmp || !*tmp)
		tmp = "/tmp";
	snprintf(shown, sizeof(shown), "%s", given);
	for (shown_len = strlen(shown); shown_len > 1 && shown[shown_len - 1] == '/';)
		shown[--shown_len] = '\0';
	if ((size_t)snprintf(repair->work_dir, sizeof(repair->work_dir),
			     "%s/profopt-salvage-XXXXXX", tmp) >= sizeof(repair->work_dir) - 8 ||
	    po_isolate_scratch_make(repair->work_dir, "trace", shown) != 0) {
		po_error_set(err, "--salvage: cannot make a scratch directory in %s: %s", tmp,
			     strerror(errno));
		repair->work_dir[0] = '\0';
		return PO_STATUS_INTERNAL;
	}
	if (snprintf(repair->shadow_root, sizeof(repair->shadow_root), "%s/trace",
		     repair->work_dir) >= (int)sizeof(repair->shadow_root)) {
		po_error_set(err, "--salvage: the scratch directory's path is too long: %s",
			     repair->work_dir);
		remove_scratch(repair);
		return PO_STATUS_INTERNAL;
	}
	return PO_STATUS_OK;
}

enum po_status po_ingest_repair(const char *trace_dir, const char *const *skip, size_t skip_count,
				struct po_repair *repair, struct po_error *err)
{
	struct po_trace_list traces = {0};
	char shadow[PATH_MAX], absolute[PATH_MAX];
	const char *work = repair->work_dir;
	enum po_status status;

	memset(repair, 0, sizeof(*repair));
	status = make_scratch(repair, trace_dir, err);
	if (status != PO_STATUS_OK)
		return status;
	/* The links must name absolute paths: they are followed from the shadow. */
	if (!realpath(trace_dir, absolute)) {
		po_error_set(err, "--salvage: %s: %s", trace_dir, strerror(errno));
		remove_scratch(repair);
		return PO_STATUS_INPUT;
	}
	status = po_trace_list_find(absolute, &traces, err);
	if (status == PO_STATUS_OK && mkdir(repair->shadow_root, 0700) != 0)
		status = PO_STATUS_INTERNAL;
	for (size_t t = 0; t < traces.count && status == PO_STATUS_OK; t++) {
		if (is_skipped(traces.paths[t], absolute, trace_dir, skip, skip_count))
			continue;
		if (!shadow_dir(absolute, traces.paths[t], repair->shadow_root, shadow,
				sizeof(shadow))) {
			status = PO_STATUS_INTERNAL;
			break;
		}
		status = decodes_whole(traces.paths[t])
			     ? link_trace(traces.paths[t], shadow)
			     : repair_trace(repair, absolute, traces.paths[t], shadow, work);
	}
	if (status == PO_STATUS_OK)
		link_top_files(absolute, repair->shadow_root);
	if (status == PO_STATUS_NOMEM)
		po_error_set(err, "out of memory");
	else if (status != PO_STATUS_OK && !err->message[0])
		po_error_set(err, "--salvage: cannot build the repaired trace in %s", work);
	po_trace_list_fini(&traces);
	if (status != PO_STATUS_OK || repair->count == 0)
		remove_scratch(repair);
	return status;
}

void po_repair_fini(struct po_repair *repair)
{
	if (repair->work_dir[0])
		remove_scratch(repair);
	free(repair->streams);
	free(repair->windows);
	memset(repair, 0, sizeof(*repair));
}
