/*
 * streams.c: what the stream files and their indexes say about the recording, read
 * without babeltrace2 from LTTng's packet headers and index files: streams cut short (at
 * a packet boundary, as a full disk or a killed consumer leaves them, so that the decoder
 * accepts them as complete), and traces that are copies of another (the same trace UUID).
 *
 * LTTng-UST packets start with a fixed header and context (lttng-ust's metadata declares
 * them; docs/trace-format.md): magic 0xC1FC1FC1 (4 bytes, in the trace's byte order),
 * trace UUID (16), stream_id (4), stream_instance_id (8), timestamp_begin (8),
 * timestamp_end (8), content_size (8, bits), packet_size (8, bits), packet_seq_num (8),
 * events_discarded (8), cpu_id (4). A stream file whose first packet does not have this
 * layout is not surveyed (the decoder alone judges it). Index files (index/NAME.idx, CTF
 * index 1.x, big-endian) list each packet's offset, size and times.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/arena.h"
#include "ingest.h"
#include "ingest_internal.h"

#define PACKET_MAGIC 0xC1FC1FC1u
#define INDEX_MAGIC 0xC1F1DCC1u
#define HEADER_BYTES 84	     /* header and context up to cpu_id */
#define INDEX_ENTRY_MIN 72   /* the fields of index 1.0/1.1 read here */
#define MAX_PACKETS 10000000 /* a bound on a damaged file's walk */

struct stream_info {
	char path[PATH_MAX];
	bool surveyed;
	uint8_t uuid[16];
	uint64_t stream_id;
	int64_t first_ns; /* timestamp_begin of the first packet */
	int64_t last_ns;  /* timestamp_end of the last whole packet */
	uint64_t packets;
	off_t walked_bytes; /* where the last whole packet ends */
	off_t file_bytes;
	off_t packet_bytes_max; /* its largest whole packet */
	int64_t index_first_ns; /* the index's first timestamp_begin; -1 without an index */
	int64_t index_last_ns;	/* the index's last timestamp_end; -1 without an index */
	off_t index_bytes;	/* where the index's last packet ends */
	uint64_t index_packets;
};

static uint64_t load_u64(const unsigned char *bytes, bool big_endian)
{
	uint64_t value = 0;

	for (int i = 0; i < 8; i++)
		value |= (uint64_t)bytes[big_endian ? 7 - i : i] << (8 * i);
	return value;
}

static uint32_t load_u32(const unsigned char *bytes, bool big_endian)
{
	uint32_t value = 0;

	for (int i = 0; i < 4; i++)
		value |= (uint32_t)bytes[big_endian ? 3 - i : i] << (8 * i);
	return value;
}

/* Walks the packets of a stream file; leaves surveyed false for a file of another layout. */
static void walk_stream(int fd, off_t size, struct stream_info *info)
{
	unsigned char header[HEADER_BYTES];
	bool big_endian;
	off_t offset = 0;

	if (size < HEADER_BYTES || pread(fd, header, sizeof(header), 0) != sizeof(header))
		return;
	if (load_u32(header, false) == PACKET_MAGIC)
		big_endian = false;
	else if (load_u32(header, true) == PACKET_MAGIC)
		big_endian = true;
	else
		return;
	memcpy(info->uuid, header + 4, sizeof(info->uuid));
	info->stream_id = load_u32(header + 20, big_endian);
	info->first_ns = (int64_t)load_u64(header + 32, big_endian);
	info->surveyed = true;
	while (offset + HEADER_BYTES <= size && info->packets < MAX_PACKETS) {
		uint64_t packet_bits, end_ns;

		if (pread(fd, header, sizeof(header), offset) != sizeof(header) ||
		    load_u32(header, big_endian) != PACKET_MAGIC)
			break;
		packet_bits = load_u64(header + 56, big_endian);
		end_ns = load_u64(header + 40, big_endian);
		if (packet_bits % 8 || packet_bits / 8 < HEADER_BYTES ||
		    packet_bits / 8 > (uint64_t)(size - offset) || end_ns > INT64_MAX)
			break;
		offset += (off_t)(packet_bits / 8);
		if ((off_t)(packet_bits / 8) > info->packet_bytes_max)
			info->packet_bytes_max = (off_t)(packet_bits / 8);
		info->last_ns = (int64_t)end_ns;
		info->packets++;
	}
	info->walked_bytes = offset;
}

enum po_status po_index_read(const char *trace, const char *name, struct po_index_packet **packets,
			     size_t *count)
{
	char path[PATH_MAX];
	unsigned char header[16], entry[INDEX_ENTRY_MIN];
	struct po_error ignored = {{0}};
	size_t capacity = 0;
	uint32_t entry_size;
	struct stat st;
	off_t offset;
	int fd;

	*packets = NULL;
	*count = 0;
	if ((size_t)snprintf(path, sizeof(path), "%s/index/%s.idx", trace, name) >= sizeof(path))
		return PO_STATUS_OK;
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return PO_STATUS_OK;
	fd = po_trace_file_open(path, &ignored);
	if (fd < 0)
		return PO_STATUS_OK;
	if (pread(fd, header, sizeof(header), 0) != sizeof(header) ||
	    load_u32(header, true) != INDEX_MAGIC ||
	    (entry_size = load_u32(header + 12, true)) < INDEX_ENTRY_MIN || entry_size > 4096) {
		close(fd);
		return PO_STATUS_OK;
	}
	for (offset = sizeof(header); offset + entry_size <= st.st_size; offset += entry_size) {
		uint64_t packet_offset, packet_bits, begin_ns, end_ns;

		if (pread(fd, entry, sizeof(entry), offset) != sizeof(entry))
			break;
		packet_offset = load_u64(entry, true);
		packet_bits = load_u64(entry + 8, true);
		begin_ns = load_u64(entry + 24, true);
		end_ns = load_u64(entry + 32, true);
		if (packet_bits % 8 || packet_offset > INT64_MAX / 2 ||
		    packet_bits / 8 > INT64_MAX / 2 || end_ns > INT64_MAX || begin_ns > end_ns)
			break;
		if (po_array_reserve((void **)packets, &capacity, *count + 1, sizeof(**packets)) !=
		    PO_STATUS_OK) {
			close(fd);
			free(*packets);
			*packets = NULL;
			*count = 0;
			return PO_STATUS_NOMEM;
		}
		(*packets)[(*count)++] = (struct po_index_packet){.offset = (off_t)packet_offset,
								  .bytes = (off_t)(packet_bits / 8),
								  .begin_ns = (int64_t)begin_ns,
								  .end_ns = (int64_t)end_ns};
	}
	close(fd);
	return PO_STATUS_OK;
}

/* Reads index/NAME.idx next to the stream, when there is one that can be read. */
static enum po_status read_index(const char *trace, const char *name, struct stream_info *info)
{
	struct po_index_packet *packets;
	size_t count;

	info->index_first_ns = info->index_last_ns = -1;
	if (po_index_read(trace, name, &packets, &count) != PO_STATUS_OK)
		return PO_STATUS_NOMEM;
	if (count) {
		info->index_first_ns = packets[0].begin_ns;
		info->index_last_ns = packets[count - 1].end_ns;
		info->index_bytes = packets[count - 1].offset + packets[count - 1].bytes;
		info->index_packets = count;
	}
	free(packets);
	return PO_STATUS_OK;
}

static enum po_status add_cut(struct po_stream_survey *survey, enum po_cut_kind kind,
			      const char *path, const char *root, int64_t begin_ns, int64_t end_ns)
{
	struct po_stream_cut *cut;
	size_t root_length = strlen(root);

	if (survey->cut_count >= PO_CUTS_KEPT) {
		survey->cuts_not_kept++;
		return PO_STATUS_OK;
	}
	if (po_array_reserve((void **)&survey->cuts, &survey->cut_capacity, survey->cut_count + 1,
			     sizeof(*survey->cuts)) != PO_STATUS_OK)
		return PO_STATUS_NOMEM;
	cut = &survey->cuts[survey->cut_count++];
	*cut = (struct po_stream_cut){.kind = kind, .begin_ns = begin_ns, .end_ns = end_ns};
	if (strncmp(path, root, root_length) == 0 && path[root_length] == '/')
		path += root_length + 1;
	snprintf(cut->path, sizeof(cut->path), "%s", path);
	return PO_STATUS_OK;
}

/* Surveys every stream file of one trace directory into streams (grown as needed). */
static enum po_status survey_trace(const char *trace, struct stream_info **streams, size_t *count,
				   size_t *capacity)
{
	struct dirent **entries = NULL;
	int entry_count = scandir(trace, &entries, NULL, alphasort);
	enum po_status status = PO_STATUS_OK;

	*count = 0;
	if (entry_count < 0)
		return PO_STATUS_OK; /* the input check says why */
	for (int i = 0; i < entry_count; i++) {
		const char *name = entries[i]->d_name;
		struct po_error ignored = {{0}};
		struct stream_info *info;
		struct stat st;
		char path[PATH_MAX];
		int fd;

		if (status != PO_STATUS_OK || name[0] == '.' || !po_trace_is_stream_name(name) ||
		    (size_t)snprintf(path, sizeof(path), "%s/%s", trace, name) >= sizeof(path) ||
		    stat(path, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		if (po_array_reserve((void **)streams, capacity, *count + 1, sizeof(**streams)) !=
		    PO_STATUS_OK) {
			status = PO_STATUS_NOMEM;
			continue;
		}
		info = &(*streams)[(*count)++];
		memset(info, 0, sizeof(*info));
		snprintf(info->path, sizeof(info->path), "%s", path);
		info->first_ns = info->last_ns = -1;
		info->file_bytes = st.st_size;
		fd = po_trace_file_open(path, &ignored);
		if (fd >= 0) {
			walk_stream(fd, st.st_size, info);
			close(fd);
		}
		status = read_index(trace, name, info);
	}
	for (int i = 0; i < entry_count; i++)
		free(entries[i]);
	free(entries);
	return status;
}

/* The cuts of one trace's streams, against their indexes and against each other. */
static enum po_status find_cuts(struct po_stream_survey *survey, const char *root,
				const struct stream_info *streams, size_t count)
{
	int64_t trace_end_ns = -1;
	enum po_status status = PO_STATUS_OK;

	for (size_t i = 0; i < count; i++) {
		if (streams[i].last_ns > trace_end_ns)
			trace_end_ns = streams[i].last_ns;
		if (streams[i].index_last_ns > trace_end_ns)
			trace_end_ns = streams[i].index_last_ns;
	}
	if (trace_end_ns > survey->end_ns)
		survey->end_ns = trace_end_ns;
	for (size_t i = 0; i < count && status == PO_STATUS_OK; i++) {
		const struct stream_info *info = &streams[i];

		if (info->index_packets > info->packets && info->index_bytes > info->file_bytes) {
			/*
			 * the index lists packets the stream file no longer holds (a walk that
			 * stops at a damaged header in a file long enough is the decoder's)
			 */
			status = add_cut(survey, PO_CUT_SHORTER_THAN_INDEX, info->path, root,
					 info->packets ? info->last_ns : info->index_first_ns,
					 info->index_last_ns);
		} else if (info->surveyed && info->packets > 0 && count > 1 &&
			   info->file_bytes - info->walked_bytes < HEADER_BYTES &&
			   trace_end_ns - info->last_ns > PO_CUT_TOLERANCE_NS) {
			/* every stream of a trace ends when the session stops or the process exits
			 */
			status = add_cut(survey, PO_CUT_ENDS_EARLY, info->path, root, info->last_ns,
					 trace_end_ns);
		}
	}
	return status;
}

/* The trace's UUID, from its first surveyed stream; false when none was surveyed. */
static bool trace_uuid(const struct stream_info *streams, size_t count, uint8_t uuid[16])
{
	for (size_t i = 0; i < count; i++) {
		if (streams[i].surveyed) {
			memcpy(uuid, streams[i].uuid, 16);
			return true;
		}
	}
	return false;
}

/*
 * Claims the trace's UUID in the table: -1 when it is the first with it, else the index of
 * the trace that has it already (this one is a copy).
 */
static long uuid_claim(long *slots, size_t mask, const uint8_t (*uuids)[16], size_t trace)
{
	uint64_t hash = 1469598103934665603u;

	for (int i = 0; i < 16; i++)
		hash = (hash ^ uuids[trace][i]) * 1099511628211u;
	for (size_t slot = hash & mask;; slot = (slot + 1) & mask) {
		if (slots[slot] < 0) {
			slots[slot] = (long)trace;
			return -1;
		}
		if (memcmp(uuids[slots[slot]], uuids[trace], 16) == 0)
			return slots[slot];
	}
}

enum po_status po_ingest_survey(const char *trace_dir, struct po_stream_survey *survey,
				struct po_error *err)
{
	struct po_trace_list traces = {0};
	struct stream_info *streams = NULL;
	size_t stream_count = 0, stream_capacity = 0;
	uint8_t(*uuids)[16] = NULL;
	long *slots = NULL; /* open addressing over uuids: trace index, -1 empty */
	size_t slot_mask = 15;
	enum po_status status;

	*survey = (struct po_stream_survey){.end_ns = -1};
	status = po_trace_list_find(trace_dir, &traces, err);
	if (status != PO_STATUS_OK)
		return status;
	while (slot_mask + 1 < 2 * traces.count)
		slot_mask = 2 * slot_mask + 1;
	slots = malloc((slot_mask + 1) * sizeof(*slots));
	if (slots)
		memset(slots, 0xff, (slot_mask + 1) * sizeof(*slots));
	uuids = calloc(traces.count + 1, sizeof(*uuids));
	survey->duplicate_of = calloc(traces.count + 1, sizeof(*survey->duplicate_of));
	survey->trace_paths = calloc(traces.count + 1, sizeof(*survey->trace_paths));
	if (!slots || !uuids || !survey->duplicate_of || !survey->trace_paths)
		status = PO_STATUS_NOMEM;
	for (size_t t = 0; t < traces.count && status == PO_STATUS_OK; t++) {
		bool has_uuid;

		survey->trace_paths[t] = traces.paths[t];
		traces.paths[t] = NULL;
		survey->trace_count++;
		survey->duplicate_of[t] = -1;
		status =
		    survey_trace(survey->trace_paths[t], &streams, &stream_count, &stream_capacity);
		if (status != PO_STATUS_OK)
			break;
		has_uuid = trace_uuid(streams, stream_count, uuids[t]);
		if (has_uuid)
			survey->duplicate_of[t] = uuid_claim(slots, slot_mask, uuids, t);
		if (survey->duplicate_of[t] >= 0)
			survey->duplicate_count++;
		if (survey->duplicate_of[t] < 0) {
			survey->stream_count += stream_count;
			status = find_cuts(survey, trace_dir, streams, stream_count);
		}
	}
	if (status == PO_STATUS_NOMEM)
		po_error_set(err, "out of memory");
	free(slots);
	free(uuids);
	free(streams);
	po_trace_list_fini(&traces);
	return status;
}

uint64_t po_trace_packet_bytes_max(const struct po_trace_list *traces)
{
	struct stream_info *streams = NULL;
	size_t count = 0, capacity = 0;
	uint64_t most = 0;

	for (size_t t = 0; t < traces->count; t++) {
		if (survey_trace(traces->paths[t], &streams, &count, &capacity) != PO_STATUS_OK) {
			most = UINT64_MAX;
			break;
		}
		for (size_t i = 0; i < count; i++) {
			/* what the walk did not reach may be one packet to the decoder */
			off_t rest = streams[i].file_bytes - streams[i].walked_bytes;
			off_t largest =
			    streams[i].packet_bytes_max > rest ? streams[i].packet_bytes_max : rest;

			if ((uint64_t)largest > most)
				most = (uint64_t)largest;
		}
	}
	free(streams);
	return most;
}

void po_stream_survey_fini(struct po_stream_survey *survey)
{
	for (size_t i = 0; i < survey->trace_count; i++)
		free(survey->trace_paths[i]);
	free(survey->trace_paths);
	free(survey->duplicate_of);
	free(survey->cuts);
	*survey = (struct po_stream_survey){.end_ns = -1};
}
