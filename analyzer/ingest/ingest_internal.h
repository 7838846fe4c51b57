/* ingest_internal.h: what the files of analyzer/ingest share: finding the CTF traces. */
#ifndef PO_INGEST_INTERNAL_H
#define PO_INGEST_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/status.h"

/* The CTF traces below a directory: every directory that holds a "metadata" file. */
struct po_trace_list {
	char **paths; /* owned, each owned; sorted */
	size_t count;
	size_t capacity;
};

/*
 * Fills list (empty on entry) with the trace directories below root that can be decoded
 * (po_trace_dir_check_files()), sorted.
 */
enum po_status po_trace_list_find(const char *root, struct po_trace_list *list,
				  struct po_error *err) PO_NODISCARD;
/*
 * The same, also listing the directories that should hold a trace and cannot be decoded:
 * one with a "metadata" entry of any kind, with an index/ directory, that cannot be read,
 * or that LTTng made for a process or a user's buffers (ust/pid/NAME-PID-DATE,
 * ust/uid/UID/NN-bit) and that holds no subdirectory with the trace.
 */
enum po_status po_trace_list_find_all(const char *root, struct po_trace_list *list,
				      struct po_error *err) PO_NODISCARD;
void po_trace_list_fini(struct po_trace_list *list);

/*
 * Whether every file the decoder opens in trace directory `trace` is a regular file that
 * opens for reading: metadata, the stream files and the files of index/; and then whether
 * its metadata can be read (po_trace_metadata_check()). Nothing that can block is opened
 * (a FIFO is refused from its type; files are opened with O_NONBLOCK). PO_STATUS_INPUT
 * with "PATH: cause" naming the first file that is not.
 */
enum po_status po_trace_dir_check_files(const char *trace, struct po_error *err) PO_NODISCARD;

/*
 * Whether the metadata of trace directory `trace` can be read: CTF text or packetized
 * metadata whose last packet is whole, and, when data_streams of its stream files hold
 * data, that declares the stream class they name and an event class if they hold events
 * (check.c). PO_STATUS_INPUT with "PATH: cause".
 */
enum po_status po_trace_metadata_check(const char *trace, size_t data_streams,
				       struct po_error *err) PO_NODISCARD;

/*
 * Opens a trace file for reading without blocking (a FIFO, socket or device is refused
 * from its type, and O_NONBLOCK covers one swapped in meanwhile). Returns the descriptor,
 * or -1 with "PATH: cause" in err.
 */
int po_trace_file_open(const char *path, struct po_error *err);

/* One packet that a stream's index lists (index/NAME.idx, CTF index 1.x). */
struct po_index_packet {
	off_t offset;
	off_t bytes;
	int64_t begin_ns;
	int64_t end_ns;
};

/*
 * The packets that trace/index/name.idx lists, up to its first entry that cannot be right
 * (streams.c); *packets (owned by the caller) NULL and *count 0 without a readable index.
 * Fails only for memory.
 */
enum po_status po_index_read(const char *trace, const char *name, struct po_index_packet **packets,
			     size_t *count) PO_NODISCARD;

/*
 * Where path lies below root, as the report names traces and files: "." for root itself,
 * path itself when it is not below root.
 */
const char *po_trace_relative_path(const char *path, const char *root);

/*
 * What each trace of the list adds to its pids (pid_spaces.c): 0, or, when root holds
 * several recordings, the trace's recording's index << PO_RECORDING_PID_SHIFT. bases has
 * traces->count entries.
 */
enum po_status po_trace_list_pid_bases(const char *root, const struct po_trace_list *traces,
				       int32_t *bases, struct po_error *err) PO_NODISCARD;

/*
 * The largest packet of the stream files of traces, in bytes (streams.c): each file's
 * whole packets by their headers, and what its walk did not reach (a damaged header, a file
 * of another layout) as one packet; UINT64_MAX when they cannot be listed (memory).
 */
uint64_t po_trace_packet_bytes_max(const struct po_trace_list *traces);

/*
 * The most elements a CTF sequence may have while the traces are decoded (sequences.c),
 * UINT64_MAX for none: a longer one fails the decoding with "a sequence of N elements where
 * the largest packet of the trace holds M bytes: its length field is damaged".
 */
void po_sequence_bound_set(uint64_t max_elements);

/*
 * Whether path is a torch.profiler (Kineto) trace file to decode with source.profopt.kineto
 * (kineto_source.h): not a directory, named *.json or *.json.gz. A directory that holds
 * no CTF trace lists the ones directly in it as its traces.
 */
bool po_trace_is_kineto(const char *path);

/* Whether a file name follows LTTng's naming of stream files, CHANNEL_N. */
bool po_trace_is_stream_name(const char *name);

#endif /* PO_INGEST_INTERNAL_H */
