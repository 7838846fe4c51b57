/* ingest_internal.h: what the files of analyzer/ingest share: finding the CTF traces. */
#ifndef PO_INGEST_INTERNAL_H
#define PO_INGEST_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

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
 * opens for reading: metadata, the stream files and the files of index/. Nothing that can
 * block is opened (a FIFO is refused from its type; files are opened with O_NONBLOCK).
 * PO_STATUS_INPUT with "PATH: cause" naming the first file that is not.
 */
enum po_status po_trace_dir_check_files(const char *trace, struct po_error *err) PO_NODISCARD;

/*
 * Opens a trace file for reading without blocking (a FIFO, socket or device is refused
 * from its type, and O_NONBLOCK covers one swapped in meanwhile). Returns the descriptor,
 * or -1 with "PATH: cause" in err.
 */
int po_trace_file_open(const char *path, struct po_error *err);

/* Whether a file name follows LTTng's naming of stream files, CHANNEL_N. */
bool po_trace_is_stream_name(const char *name);

#endif /* PO_INGEST_INTERNAL_H */
