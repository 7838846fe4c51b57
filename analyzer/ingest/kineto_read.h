/*
 * kineto_read.h: a streaming reader of the JSON traces torch.profiler writes (Kineto's
 * Chrome trace format, plain or gzip). It hands each entry of "traceEvents", and the
 * top-level "deviceProperties" and "distributedInfo", to callbacks as typed records, and
 * keeps no more of the file than yajl's current token: memory does not grow with the file.
 */
#ifndef PO_KINETO_READ_H
#define PO_KINETO_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/status.h"

/* Longer names are cut (at a UTF-8 character boundary) and counted. */
#define PO_KINETO_NAME_MAX 4096

/* The categories profopt reads; every spelling PyTorch 1.8 to 2.x wrote maps to one. */
#define PO_KINETO_CATEGORIES(X)                                                                    \
	X(OTHER, "")                                                                               \
	X(CPU_OP, "cpu_op")                                                                        \
	X(USER_ANNOTATION, "user_annotation")                                                      \
	X(GPU_USER_ANNOTATION, "gpu_user_annotation")                                              \
	X(RUNTIME, "cuda_runtime")                                                                 \
	X(DRIVER, "cuda_driver")                                                                   \
	X(KERNEL, "kernel")                                                                        \
	X(MEMCPY, "gpu_memcpy")                                                                    \
	X(MEMSET, "gpu_memset")                                                                    \
	X(PYTHON_FUNCTION, "python_function")                                                      \
	X(FLOW, "ac2g")

enum po_kineto_category {
#define PO_X(name, spelling) PO_KINETO_CAT_##name,
	PO_KINETO_CATEGORIES(PO_X)
#undef PO_X
	    PO_KINETO_CAT_COUNT
};

/* One entry of "traceEvents"; absent numbers are -1 (times: INT64_MIN). */
struct po_kineto_record {
	char phase; /* 'X' complete, 'i' instant, 's'/'f' flow, 'M' metadata; 0 absent */
	enum po_kineto_category category;
	bool memory;			   /* an instant event named "[memory]" */
	char name[PO_KINETO_NAME_MAX + 1]; /* cut; "" when absent */
	int64_t pid, tid;		   /* -1 when absent or not a number */
	int64_t ts_ns, dur_ns;		   /* microseconds in the file; INT64_MIN absent */
	/* args */
	int64_t device, stream, correlation, bytes;
	int64_t grid[3], block[3], registers, shared_bytes;
	int64_t device_type, device_id, addr, alloc_bytes, total_allocated, total_reserved;
	int64_t seq, group, in_elements, out_elements, element_bytes;
	char collective[32]; /* args "Collective name" */
	char group_name[64]; /* args "Process Group Name" */
	char dtype[16];	     /* args "dtype" */
	char arg_name[64];   /* args "name": a process's name in "process_name" metadata */
};

/* One entry of "deviceProperties". */
struct po_kineto_device {
	int64_t id, memory_bytes, multiprocessors, major, minor;
	char name[128];
};

/* "distributedInfo". */
struct po_kineto_distributed {
	int64_t rank, world_size;
	char backend[32];
};

struct po_kineto_callbacks {
	enum po_status (*record)(void *ctx, const struct po_kineto_record *record);
	enum po_status (*device)(void *ctx, const struct po_kineto_device *device);
	enum po_status (*distributed)(void *ctx, const struct po_kineto_distributed *info);
	void *ctx; /* weak */
};

/* What the reader saw besides the records. */
struct po_kineto_read_stats {
	int64_t records;
	int64_t names_cut;     /* names longer than PO_KINETO_NAME_MAX */
	int64_t bytes_read;    /* of JSON text, after gunzip */
	bool has_trace_events; /* the file had a "traceEvents" array */
};

/*
 * Reads path (gzip or plain JSON) to its end, calling back for each record. Failures:
 * PO_STATUS_INPUT with "PATH: cause" for a file that cannot be opened, is not JSON, is cut
 * or damaged (the cause names the byte offset in the JSON text) or holds no "traceEvents"
 * array; a status other than OK from a callback stops the read and is returned.
 */
enum po_status po_kineto_read(const char *path, const struct po_kineto_callbacks *callbacks,
			      struct po_kineto_read_stats *stats,
			      struct po_error *err) PO_NODISCARD;

/*
 * The "distributedInfo" of path, read up to where "traceEvents" begins (PyTorch writes it
 * before them); rank -1 when it is not there. Errors as po_kineto_read()'s.
 */
enum po_status po_kineto_read_rank(const char *path, struct po_kineto_distributed *info,
				   struct po_error *err) PO_NODISCARD;

/* Whether the file name is one of a Kineto trace: *.json or *.json.gz. */
bool po_kineto_file_name(const char *name);

/*
 * The host in path's file name when it is named as tensorboard_trace_handler names its
 * files by default, HOST_PID.TIMESTAMP.pt.trace.json[.gz] (worker_name "{hostname}_{pid}"),
 * into host (size bytes with its NUL); false when the name has another form (a worker_name
 * of the user's, export_chrome_trace's own name) or the host does not fit.
 */
bool po_kineto_file_host(const char *path, char *host, size_t size);

#endif /* PO_KINETO_READ_H */
