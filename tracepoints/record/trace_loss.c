/*
 * trace_loss.c: counts the events the tracer discarded, from the packet indexes LTTng
 * writes next to each stream (the .idx files of index/). Each packet index records the
 * stream's running count of discarded events, so the largest count of a stream's packets
 * is its total: not always the last packet's, since a packet can carry a smaller count
 * than the one before it (seen with sub-buffers of 4 KiB filled at 10 kHz; the session
 * daemon's consumer then takes the step back for a wrap of the counter and adds 2^63 to
 * its own count, which verify.c therefore ignores). Unlike the session daemon's counters,
 * these cover processes that exited before the session stopped. verify.c reads the last
 * entry to compare a stream file with its index.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <string.h>

#include "record.h"

#define CTF_INDEX_MAGIC 0xC1F1DCC1u
#define CTF_INDEX_HEADER_BYTES 16
/* offset, packet_size, content_size, timestamp_begin, timestamp_end: 5 x 8 bytes. */
#define CTF_INDEX_END_OFFSET 32
#define CTF_INDEX_DISCARDED_OFFSET 40
#define CTF_INDEX_MIN_ENTRY_BYTES 56

static uint64_t walk_total;
static int walk_errno;

static uint64_t read_be64(const unsigned char *bytes)
{
	uint64_t value;

	memcpy(&value, bytes, sizeof(value));
	return be64toh(value);
}

static uint32_t read_be32(const unsigned char *bytes)
{
	uint32_t value;

	memcpy(&value, bytes, sizeof(value));
	return be32toh(value);
}

#define CTF_INDEX_MAX_ENTRY_BYTES 256

/*
 * Opens an index file and reads its header: the file (owned by the caller), positioned at
 * its first entry, with *entry_bytes; NULL when path is not a readable index file.
 */
static FILE *index_open(const char *path, uint32_t *entry_bytes)
{
	unsigned char header[CTF_INDEX_HEADER_BYTES];
	FILE *file = fopen(path, "rb");

	if (!file)
		return NULL;
	if (fread(header, 1, sizeof(header), file) == sizeof(header) &&
	    read_be32(header) == CTF_INDEX_MAGIC) {
		*entry_bytes = read_be32(header + 12);
		if (*entry_bytes >= CTF_INDEX_MIN_ENTRY_BYTES &&
		    *entry_bytes <= CTF_INDEX_MAX_ENTRY_BYTES)
			return file;
	}
	fclose(file);
	return NULL;
}

int rec_index_read_last(const char *path, struct rec_index_last *last)
{
	unsigned char entry[CTF_INDEX_MAX_ENTRY_BYTES];
	uint32_t entry_bytes;
	long size, offset;
	FILE *file = index_open(path, &entry_bytes);
	int ret = -1;

	*last = (struct rec_index_last){.has_packet = false};
	if (!file)
		return -1;
	if (fseek(file, 0, SEEK_END) || (size = ftell(file)) < CTF_INDEX_HEADER_BYTES)
		goto end;
	ret = 0;
	if (size < CTF_INDEX_HEADER_BYTES + (long)entry_bytes)
		goto end; /* a stream without any packet */
	offset = CTF_INDEX_HEADER_BYTES +
		 (size - CTF_INDEX_HEADER_BYTES) / entry_bytes * entry_bytes - entry_bytes;
	if (fseek(file, offset, SEEK_SET) || fread(entry, 1, entry_bytes, file) != entry_bytes) {
		ret = -1;
		goto end;
	}
	last->has_packet = true;
	last->packet_offset = read_be64(entry);
	last->packet_bits = read_be64(entry + 8);
	last->end_ns = read_be64(entry + CTF_INDEX_END_OFFSET);
	last->discarded_events = read_be64(entry + CTF_INDEX_DISCARDED_OFFSET);
end:
	fclose(file);
	return ret;
}

/*
 * The largest running count of discarded events among the packets of one index file in
 * *largest (0 without packets); -1 when path is not an index file.
 */
static int index_largest_discarded(const char *path, uint64_t *largest)
{
	unsigned char entry[CTF_INDEX_MAX_ENTRY_BYTES];
	uint32_t entry_bytes;
	FILE *file = index_open(path, &entry_bytes);
	int ret;

	*largest = 0;
	if (!file)
		return -1;
	/* a partial last entry (the consumer stopped mid-write) is not a packet */
	while (fread(entry, 1, entry_bytes, file) == entry_bytes) {
		uint64_t discarded = read_be64(entry + CTF_INDEX_DISCARDED_OFFSET);

		if (discarded > *largest)
			*largest = discarded;
	}
	ret = ferror(file) ? -1 : 0;
	fclose(file);
	return ret;
}

/* Adds the discarded count of one index file; -1 if it is not one. */
static int add_index_file(const char *path)
{
	uint64_t largest;

	if (index_largest_discarded(path, &largest) != 0)
		return -1;
	walk_total += largest;
	return 0;
}

static int visit(const char *path, const struct stat *info, int type, struct FTW *walk)
{
	size_t length = strlen(path);

	(void)info;
	(void)walk;
	if (type == FTW_F && length > 4 && !strcmp(path + length - 4, ".idx") &&
	    add_index_file(path) == -1 && !walk_errno)
		walk_errno = EINVAL;
	return 0;
}

enum rec_status rec_trace_count_discarded(const char *trace_dir, uint64_t *discarded_events,
					  struct po_error *err)
{
	walk_total = 0;
	walk_errno = 0;
	if (nftw(trace_dir, visit, 16, FTW_PHYS) == -1) {
		po_error_set(err, "Failed to read the packet indexes of %s: %s", trace_dir,
			     strerror(errno));
		return REC_STATUS_TRACING;
	}
	if (walk_errno) {
		po_error_set(err, "Failed to read the packet indexes of %s: unreadable index file",
			     trace_dir);
		return REC_STATUS_TRACING;
	}
	*discarded_events = walk_total;
	return REC_STATUS_OK;
}
