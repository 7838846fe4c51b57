/*
 * event.h: the typed events that ingest hands to the model, one at a time, in time order.
 *
 * This is the only contract between the trace decoder (analyzer/ingest, the only code that
 * sees babeltrace2) and the model and detectors, which are plain C and are unit-tested by
 * feeding arrays of these structs. Strings are weak: they point into the decoder's buffers
 * and are valid only during the po_model_consume() call that receives them; they are not
 * NUL-terminated (use len). Text members (names, labels, paths, the host, procname) are
 * clean as common/text.h defines it: ingest cleans them once; a unit test's arrays should
 * hold clean text too. stack_sample.frames and native_stack.pcs are packed numbers.
 * Integers the trace lacks are -1.
 */
#ifndef PO_EVENT_H
#define PO_EVENT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* A weak, length-delimited byte string. */
struct po_str {
	const char *ptr; /* weak; may be NULL when len is 0 */
	size_t len;
};

/* Pipeline stages, in the trace's numbering (enum profopt_stage). X(NAME, json name) */
#define PO_STAGES(X)                                                                               \
	X(DATA_WAIT, "data_wait")                                                                  \
	X(LOAD, "load")                                                                            \
	X(PREPROCESS, "preprocess")                                                                \
	X(COLLATE, "collate")                                                                      \
	X(H2D_COPY, "h2d_copy")                                                                    \
	X(FORWARD, "forward")                                                                      \
	X(BACKWARD, "backward")                                                                    \
	X(OPTIMIZER, "optimizer")                                                                  \
	X(EVAL, "eval")                                                                            \
	X(CHECKPOINT, "checkpoint")                                                                \
	X(CUSTOM, "custom")                                                                        \
	X(GC, "gc")

enum po_stage {
#define PO_X(name, json) PO_STAGE_##name,
	PO_STAGES(PO_X)
#undef PO_X
	    PO_STAGE_COUNT
};

/* Counter kinds, in the trace's numbering (enum profopt_counter). */
#define PO_COUNTERS(X)                                                                             \
	X(QUEUE_DEPTH, "queue_depth")                                                              \
	X(HOST_RSS, "host_rss")                                                                    \
	X(GPU_MEM_USED, "gpu_mem_used")                                                            \
	X(PROCESS_CPU, "process_cpu")                                                              \
	X(GPU_MEM_RESERVED, "gpu_mem_reserved")                                                    \
	X(PROCESS_RUNQ_WAIT, "process_runq_wait")                                                  \
	X(GPU_RECORDS_DROPPED, "gpu_records_dropped")                                              \
	X(GPU_MEM_PEAK, "gpu_mem_peak")                                                            \
	X(GPU_MEM_FREE, "gpu_mem_free")                                                            \
	X(MACHINE_CPU, "machine_cpu")                                                              \
	X(HOST_PSS, "host_pss")                                                                    \
	X(HOST_USS, "host_uss")                                                                    \
	X(MACHINE_MEMORY, "machine_memory")                                                        \
	X(GC_COLLECTED, "gc_collected")                                                            \
	X(GC_UNCOLLECTABLE, "gc_uncollectable")

enum po_counter {
#define PO_X(name, json) PO_COUNTER_##name,
	PO_COUNTERS(PO_X)
#undef PO_X
	    PO_COUNTER_COUNT
};

/* GPU activity kinds, in the trace's numbering (enum profopt_gpu_kind). */
#define PO_GPU_KINDS(X)                                                                            \
	X(KERNEL, "kernel")                                                                        \
	X(MEMCPY_H2D, "memcpy_h2d")                                                                \
	X(MEMCPY_D2H, "memcpy_d2h")                                                                \
	X(MEMCPY_D2D, "memcpy_d2d")                                                                \
	X(MEMSET, "memset")

enum po_gpu_kind {
#define PO_X(name, json) PO_GPU_##name,
	PO_GPU_KINDS(PO_X)
#undef PO_X
	    PO_GPU_KIND_COUNT
};

/* Collective operations, in the trace's numbering (enum profopt_collective_op). */
#define PO_COLLECTIVE_OPS(X)                                                                       \
	X(ALL_REDUCE, "all_reduce")                                                                \
	X(BROADCAST, "broadcast")                                                                  \
	X(REDUCE, "reduce")                                                                        \
	X(ALL_GATHER, "all_gather")                                                                \
	X(REDUCE_SCATTER, "reduce_scatter")                                                        \
	X(ALL_TO_ALL, "all_to_all")                                                                \
	X(BARRIER, "barrier")                                                                      \
	X(SEND, "send")                                                                            \
	X(RECV, "recv")                                                                            \
	X(OTHER, "other")

enum po_collective_op {
#define PO_X(name, json) PO_COLLECTIVE_##name,
	PO_COLLECTIVE_OPS(PO_X)
#undef PO_X
	    PO_COLLECTIVE_OP_COUNT
};

/*
 * Event kinds. The profopt:* events map one to one; LIBC_* come from the lttng_ust_libc
 * provider (liblttng-ust-libc-wrapper.so); BIN_* are lttng-ust's base-address state dump of
 * the objects a process had loaded when it registered, LIB_* the objects mapped and unmapped
 * later and DL_* the dlopen/dlclose calls (both from liblttng-ust-dl.so): together they
 * locate allocation sites; DISCARDED_* are babeltrace2's discarded-events and
 * discarded-packets messages. X(NAME, trace event name)
 */
#define PO_EVENT_KINDS(X)                                                                          \
	X(RUN_BEGIN, "profopt:run_begin")                                                          \
	X(RUN_CONFIG, "profopt:run_config")                                                        \
	X(RUN_END, "profopt:run_end")                                                              \
	X(WORKER_BEGIN, "profopt:worker_begin")                                                    \
	X(WORKER_END, "profopt:worker_end")                                                        \
	X(EPOCH_BEGIN, "profopt:epoch_begin")                                                      \
	X(EPOCH_END, "profopt:epoch_end")                                                          \
	X(STEP_BEGIN, "profopt:step_begin")                                                        \
	X(STEP_END, "profopt:step_end")                                                            \
	X(STAGE_BEGIN, "profopt:stage_begin")                                                      \
	X(STAGE_END, "profopt:stage_end")                                                          \
	X(BATCH_READY, "profopt:batch_ready")                                                      \
	X(COUNTER, "profopt:counter")                                                              \
	X(MEM_ALLOC, "profopt:mem_alloc")                                                          \
	X(MEM_FREE, "profopt:mem_free")                                                            \
	X(GPU_LAUNCH, "profopt:gpu_launch")                                                        \
	X(GPU_ACTIVITY, "profopt:gpu_activity")                                                    \
	X(GPU_SYNC_BEGIN, "profopt:gpu_sync_begin")                                                \
	X(GPU_SYNC_END, "profopt:gpu_sync_end")                                                    \
	X(PROCESS, "profopt:process")                                                              \
	X(GPU_KERNEL, "profopt:gpu_kernel")                                                        \
	X(GPU_DEVICE, "profopt:gpu_device")                                                        \
	X(RANK, "profopt:rank")                                                                    \
	X(COLLECTIVE_BEGIN, "profopt:collective_begin")                                            \
	X(COLLECTIVE_END, "profopt:collective_end")                                                \
	X(CODE, "profopt:code")                                                                    \
	X(STACK_SAMPLE, "profopt:stack_sample")                                                    \
	X(NATIVE_STACK, "profopt:native_stack")                                                    \
	X(SELF_COST, "profopt:self_cost")                                                          \
	X(LIBC_MALLOC, "lttng_ust_libc:malloc")                                                    \
	X(LIBC_CALLOC, "lttng_ust_libc:calloc")                                                    \
	X(LIBC_REALLOC, "lttng_ust_libc:realloc")                                                  \
	X(LIBC_MEMALIGN, "lttng_ust_libc:memalign")                                                \
	X(LIBC_POSIX_MEMALIGN, "lttng_ust_libc:posix_memalign")                                    \
	X(LIBC_FREE, "lttng_ust_libc:free")                                                        \
	X(BIN_INFO, "lttng_ust_statedump:bin_info")                                                \
	X(BIN_BUILD_ID, "lttng_ust_statedump:build_id")                                            \
	X(LIB_LOAD, "lttng_ust_lib:load")                                                          \
	X(LIB_BUILD_ID, "lttng_ust_lib:build_id")                                                  \
	X(LIB_UNLOAD, "lttng_ust_lib:unload")                                                      \
	X(DL_OPEN, "lttng_ust_dl:dlopen")                                                          \
	X(DL_MOPEN, "lttng_ust_dl:dlmopen")                                                        \
	X(DL_BUILD_ID, "lttng_ust_dl:build_id")                                                    \
	X(DL_CLOSE, "lttng_ust_dl:dlclose")                                                        \
	X(DISCARDED_EVENTS, "(discarded events)")                                                  \
	X(DISCARDED_PACKETS, "(discarded packets)")

enum po_event_kind {
#define PO_X(name, trace_name) PO_EV_##name,
	PO_EVENT_KINDS(PO_X)
#undef PO_X
	    PO_EV_COUNT
};

const char *po_stage_name(enum po_stage stage); /* "load", ... ; "?" if invalid */
const char *po_counter_name(enum po_counter counter);
const char *po_gpu_kind_name(enum po_gpu_kind kind);
const char *po_event_kind_name(enum po_event_kind kind); /* the trace event name */
const char *po_collective_op_name(enum po_collective_op op);

/* Pids are below 2^22 (pid_max); above it, the recording a pid belongs to. */
#define PO_RECORDING_PID_SHIFT 22

/* The longest build id kept (GNU build ids are 20 bytes: SHA-1). */
#define PO_BUILD_ID_MAX 32

/* The deepest stack a sample keeps (PROFOPT_STACK_DEPTH_MAX), innermost frames first. */
#define PO_STACK_DEPTH_MAX 128

/* One frame of a stack sample: the process's code id and the line it ran. */
struct po_stack_frame {
	uint32_t code_id;
	uint32_t line;
};

/* Marks a discarded count that is not known (lttng-ust 2.13 reports 2^63 or more). */
#define PO_COUNT_UNKNOWN (-1)

struct po_event {
	enum po_event_kind kind;
	/*
	 * Nanoseconds of the trace clock (CLOCK_MONOTONIC for LTTng-UST), the same base as
	 * GPU activity start_ns/end_ns. For DISCARDED_*, the end of the window.
	 */
	int64_t time_ns;
	/*
	 * vpid context; -1 when the trace lacks it. When the trace directory holds several
	 * recordings (hosts), the k-th one's pids are moved by k << PO_RECORDING_PID_SHIFT
	 * (ingest, pid_spaces.c), so processes of two hosts never share a pid; parent pids
	 * likewise.
	 */
	int32_t pid;
	int32_t tid;		/* vtid context; -1 when missing */
	struct po_str procname; /* procname context; len 0 when missing */
	uint64_t ip;		/* ip context (allocation site), 0 when missing */
	uint32_t trace_id;	/* which trace of the directory (one per process buffer) */
	union {
		struct {
			struct po_str framework;
			int32_t cpu_count;
		} run_begin;
		struct {
			struct po_str key;
			struct po_str value;
		} run_config;
		struct {
			int64_t worker_id;
			int32_t parent_pid;
		} worker; /* WORKER_BEGIN, WORKER_END */
		struct {
			int64_t epoch;
		} epoch;
		struct {
			int64_t step;
			int64_t epoch;
			int64_t batch_size;
		} step; /* STEP_BEGIN, STEP_END */
		struct {
			enum po_stage stage; /* validated by ingest: < PO_STAGE_COUNT */
			struct po_str label;
			int64_t batch;
			int64_t sample;
			int64_t cpu_ns; /* end of loader stages only; else -1 */
		} stage;		/* STAGE_BEGIN, STAGE_END */
		struct {
			int64_t batch;
			int64_t queue_depth;
		} batch_ready;
		struct {
			enum po_counter kind;
			int32_t device;
			int64_t value;
		} counter;
		struct {
			uint64_t addr;
			uint64_t bytes;
			int32_t device; /* -1: host */
			struct po_str label;
		} mem; /* MEM_ALLOC, MEM_FREE */
		struct {
			int32_t device;
			int32_t stream;
			uint64_t correlation_id;
			struct po_str name;
		} gpu_launch;
		struct {
			int32_t device;
			int32_t stream;
			enum po_gpu_kind kind;
			struct po_str name;
			uint64_t bytes;
			int64_t start_ns;
			int64_t end_ns;
			uint64_t correlation_id;
			/* Kernels recorded as profopt:gpu_kernel: the launch shape; else 0. */
			uint64_t grid_blocks;
			uint32_t block_threads;
			uint32_t shared_bytes;
			uint16_t registers_per_thread;
		} gpu_activity; /* GPU_ACTIVITY; profopt:gpu_kernel is decoded as one too */
		struct {
			int32_t device;
			struct po_str name;
			uint64_t memory_bytes;			    /* 0 when unknown */
			int32_t multiprocessors;		    /* -1 when unknown */
			int16_t capability_major, capability_minor; /* -1 when unknown */
		} gpu_device;
		struct {
			int32_t device;
			int32_t stream;
		} gpu_sync; /* GPU_SYNC_BEGIN, GPU_SYNC_END */
		/* RANK: the process's place in a distributed job; -1 where unknown. */
		struct {
			int32_t rank;
			int32_t local_rank;
			int32_t world_size;
			struct po_str host;
		} rank;
		struct {
			int32_t group;
			enum po_collective_op op; /* validated by ingest */
			uint64_t bytes;
			int64_t seq;
			int32_t device;
		} collective; /* COLLECTIVE_BEGIN, COLLECTIVE_END */
		/* CODE: a code object of the event's process, described once (docs/sampling.md). */
		struct {
			uint32_t code_id;
			struct po_str function;
			struct po_str file;
			int32_t first_line;
		} code;
		/*
		 * STACK_SAMPLE: thread tid's stack, depth frames innermost first, packed in frames
		 * as struct po_stack_frame (read them with po_stack_frame_at: the bytes may be
		 * unaligned), and the thread's CPU time since its previous sample (-1: unknown).
		 */
		struct {
			int32_t tid;
			int64_t cpu_ns;
			struct po_str frames;
			uint32_t depth;
		} stack_sample;
		/*
		 * NATIVE_STACK: libprofopt's own sample of thread tid (a C or C++ program):
		 * depth instruction addresses innermost first, packed in pcs as uint64_t (read
		 * them with po_native_pc_at: the bytes may be unaligned), and the time the
		 * sample stands for.
		 */
		struct {
			int32_t tid;
			int64_t weight_ns;
			struct po_str pcs;
			uint32_t depth;
		} native_stack;
		/*
		 * SELF_COST: profopt's own CPU time in the process so far, cumulative: on the
		 * program's threads (hooks_ns), in gc callbacks (gc_ns) and in libprofopt's
		 * threads (threads_ns); -1 where not counted.
		 */
		struct {
			int64_t hooks_ns;
			int64_t gc_ns;
			int64_t threads_ns;
		} self_cost;
		/*
		 * PROCESS: the recording the process belongs to (empty outside one), its
		 * parent, and why it announced itself (0 at start, 1 after a fork).
		 */
		struct {
			struct po_str recording;
			int32_t parent_pid;
			int32_t reason;
		} process;
		/*
		 * LIBC_*: one shape for every allocation call. ptr is the result (0 on
		 * failure), in_ptr realloc's input, size the bytes asked (nmemb * size for
		 * calloc). posix_memalign: ptr is *out_ptr, result its return value.
		 */
		struct {
			uint64_t ptr;
			uint64_t in_ptr;
			uint64_t size;
			int32_t result;
		} libc;
		/*
		 * BIN_INFO, LIB_LOAD, DL_OPEN, DL_MOPEN: an object of size bytes mapped at
		 * base, from path; LIB_UNLOAD: the object at base unmapped; DL_CLOSE: the
		 * object at base closed (unmapped unless still open elsewhere). *_BUILD_ID:
		 * the build id of the object at base, build_id_len (<= PO_BUILD_ID_MAX) bytes.
		 */
		struct {
			struct po_str path;
			uint64_t base;
			uint64_t size;
			uint8_t build_id[PO_BUILD_ID_MAX];
			uint8_t build_id_len;
		} bin;
		struct {
			int64_t count;	  /* PO_COUNT_UNKNOWN when not known */
			int64_t begin_ns; /* window start; -1 when the trace gives none */
		} discarded; /* DISCARDED_EVENTS, DISCARDED_PACKETS; time_ns is the window end */
	} u;
};

/* Frame i (< depth) of a STACK_SAMPLE event. */
static inline struct po_stack_frame po_stack_frame_at(const struct po_event *event, size_t i)
{
	struct po_stack_frame frame;

	memcpy(&frame, event->u.stack_sample.frames.ptr + i * sizeof(frame), sizeof(frame));
	return frame;
}

/* Address i (< depth) of a NATIVE_STACK event. */
static inline uint64_t po_native_pc_at(const struct po_event *event, size_t i)
{
	uint64_t pc;

	memcpy(&pc, event->u.native_stack.pcs.ptr + i * sizeof(pc), sizeof(pc));
	return pc;
}

#endif /* PO_EVENT_H */
