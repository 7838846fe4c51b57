/* model_internal.h: the private state of the model, shared by the files of analyzer/model. */
#ifndef PO_MODEL_INTERNAL_H
#define PO_MODEL_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "batches.h"
#include "gpu.h"
#include "labels.h"
#include "map.h"
#include "saturate.h"
#include "memory.h"
#include "model.h"
#include "step_store.h"

/* Bounds that keep the model's memory independent of the trace's length. */
#define PO_SPAN_STACK_CAP 256	  /* open spans per thread */
#define PO_SEGMENT_RING_CAP 65536 /* training thread's recent category segments */
#define PO_SPAN_RING_CAP 65536	  /* recently completed spans, for the timelines */
#define PO_COUNTER_RING_CAP 8192  /* recent counter samples, for the timelines */
#define PO_WINDOW_CAP 1024	  /* discard windows kept */
#define PO_REQUESTED_CAP 256	  /* --timeline-steps details kept */
#define PO_RESERVOIR_CAP 16	  /* median candidates */
#define PO_STALL_KEPT 3		  /* steps kept for the longest GPU gaps */
#define PO_NAME_CAP 4096	  /* distinct GPU activity names interned */
#define PO_CONFIG_CAP 1024	  /* run_config keys */
#define PO_DEVICE_SLOTS 16	  /* GPU devices whose memory counter is summed */
#define PO_FINALIZE_LAG 2	  /* steps after its end before a step's detail is decided */
#define PO_COVERAGE_WARN_PCT 90.0 /* steps covering less of their span get a warning */
/*
 * A process that sampled its memory and then went silent this long has exited (its
 * sampler would speak every PROFOPT_SAMPLE_MS): forked workers that never announce
 * themselves end without worker_end. Silent processes are looked for this often.
 */
#define PO_SILENT_NS 1000000000LL
#define PO_SILENT_SCAN_NS 250000000LL

/*
 * Times outside [0, PO_TIME_LIMIT_NS] come only from corrupted traces; events carrying
 * them are dropped (counted as time inversions), so that no difference or sum of two
 * times can overflow.
 */
#define PO_TIME_LIMIT_NS (INT64_C(1) << 61)

static inline bool po_time_valid(int64_t time_ns)
{
	return time_ns >= 0 && time_ns <= PO_TIME_LIMIT_NS;
}

#define OPEN_STAGE 0
#define OPEN_SYNC 1

/* A span begun and not yet ended on a thread. */
struct open_span {
	int kind; /* OPEN_STAGE or OPEN_SYNC */
	enum po_stage stage;
	int64_t begin_ns;
	const char *label;  /* weak: interned (or the fold label) */
	size_t label_index; /* the label tracker's entry */
	int64_t batch;
	int32_t device;
	int32_t stream;
	bool same_below; /* a span of the same stage is open below this one */
};

struct thread {
	int32_t pid;
	int32_t tid;
	size_t process; /* index into model->processes */
	int64_t last_ns;
	struct open_span *stack; /* owned */
	size_t depth;
	size_t capacity;
	int64_t step_count;
};

struct process {
	int32_t pid;
	const char *name; /* weak: interned; NULL until seen */
	int64_t worker_id;
	int32_t parent_pid;
	int64_t first_ns;
	int64_t last_ns;
	int64_t event_count;
	int64_t rss_first_bytes;
	int64_t rss_last_bytes;
	int64_t rss_peak_bytes;
	int64_t cpu_first_ns;
	int64_t cpu_last_ns;
	int64_t runq_first_ns; /* PROCESS_RUNQ_WAIT counter, first and last; -1 */
	int64_t runq_last_ns;
	int64_t cpu_sample_ns;	/* when the last PROCESS_CPU sample was taken; -1 */
	int64_t runq_sample_ns; /* when the last PROCESS_RUNQ_WAIT sample was taken; -1 */
	int64_t gpu_used_bytes[PO_DEVICE_SLOTS]; /* latest GPU_MEM_USED per device; -1 */
	bool worker_begin;
	bool ended;  /* worker_end seen: the process no longer holds memory or cores */
	bool silent; /* no event for PO_SILENT_NS: left the memory sums until it speaks again */
	bool loader_spans;
	int64_t step_count;
	/* producer statistics, reported for worker processes */
	int64_t batches;
	int64_t stage_ns[PO_STAGE_COUNT];
	int64_t stage_cpu_ns[PO_STAGE_COUNT];
	int64_t busy_ns;
};

struct segment {
	int64_t begin_ns;
	int64_t end_ns;
	enum po_category category;
};

struct detail_state {
	size_t step_index;
	uint32_t reasons;
	struct po_step_detail out; /* spans and counters owned */
};

#define PO_PRODUCERS_CAP 256

struct po_model {
	struct po_model_config config;
	struct po_arena *arena;	     /* owned until finish hands it to the analysis */
	struct po_strtab *strings;   /* owned */
	struct po_map names;	     /* (namespace, hash) -> interned pointer, with caps */
	const char *fold_label;	     /* weak: "(other labels)" */
	const char *fold_site_label; /* weak: "(other sites)" */
	const char *fold_name;	     /* weak: "(other names)" */

	/* run */
	const char *framework;
	bool run_begun;
	bool run_ended;
	int32_t cpu_count;
	struct po_kv *run_config; /* owned */
	size_t run_config_count;
	size_t run_config_capacity;

	struct po_quality quality;
	struct po_discard_window *windows; /* owned */
	size_t window_capacity;
	struct po_map traces;		 /* trace_id -> last event time */
	struct po_map_entry *last_trace; /* weak: the last event's entry in traces; NULL */
	int64_t steps_other_threads;

	struct po_missing_window *missing; /* owned; paths interned */
	size_t missing_count;
	size_t missing_capacity;

	/* membership.c: pid -> state, and the processes left out (owned) */
	struct po_map membership;
	bool any_announced;
	struct po_excluded_process *excluded;
	size_t excluded_count;
	size_t excluded_capacity;

	struct process *processes; /* owned */
	size_t process_count;
	size_t process_capacity;
	struct po_map process_index; /* pid -> index */
	struct thread *threads;	     /* owned */
	size_t thread_count;
	size_t thread_capacity;
	struct po_map thread_index; /* (pid, tid) -> index */
	/* The last event's thread: consecutive events mostly share one (no map lookup). */
	bool last_valid;
	int32_t last_pid, last_tid;
	size_t last_process, last_thread; /* indexes into processes and threads */

	/* the training thread and its steps */
	bool has_training;
	size_t training; /* index into threads */
	/* owned until finish hands it to the analysis; the open step is the last, end_ns
	 * INT64_MAX. step_count is the store's count. */
	struct po_step_store *steps;
	size_t step_count;
	bool steps_given; /* finish handed the store to the analysis: weak from then on */
	bool step_open;
	bool step_unmatched;
	int64_t last_change_ns;
	int64_t own_stage_ns[3]; /* training thread's own loading in the open step; -1 */
	int64_t own_batch;
	int64_t own_ready_ns;
	int64_t current_step_number; /* for allocations; -1 */
	int64_t latest_queue_depth;
	struct segment *segments; /* owned ring, PO_SEGMENT_RING_CAP */
	size_t segment_count;
	size_t segment_next;

	/* batches made off the training thread and not yet consumed (batches.h) */
	struct po_batch_tracker batches;

	/* the stage spans' labels: the tracker (labels.h) */
	struct po_label_tracker labels;

	/* GPU activity: the tracker (gpu.h), whose host is the model (model_gpu.c) */
	struct po_gpu_tracker gpu;

	/* memory: the tracker (memory.h), and the processes' RSS sum it is told about */
	struct po_memory_tracker memory;
	int64_t rss_sum_bytes;	/* sum of the latest RSS of every live process; -1 */
	int64_t silent_scan_ns; /* when silent processes were last looked for */

	/* timelines */
	struct po_span *span_ring; /* owned, PO_SPAN_RING_CAP */
	size_t span_ring_count;
	size_t span_ring_next;
	struct po_counter_sample *counter_ring; /* owned, PO_COUNTER_RING_CAP */
	size_t counter_ring_count;
	size_t counter_ring_next;
	size_t finalized_steps; /* steps whose detail was decided */
	size_t *slowest;	/* owned; step indexes, config.slowest_steps_kept */
	int64_t *slowest_ns;	/* owned; their durations, so that no old step is read back */
	size_t slowest_count;
	/* Producer pids whose first batch a step has consumed: later batches are steady. */
	int32_t producers_seen[PO_PRODUCERS_CAP];
	size_t producer_count;
	size_t reservoir[PO_RESERVOIR_CAP];
	size_t reservoir_count;
	uint64_t reservoir_seen;
	uint64_t random_state;
	size_t stall_steps[PO_STALL_KEPT]; /* steps of the longest gaps so far */
	int64_t stall_gap_ns[PO_STALL_KEPT];
	size_t stall_count;
	size_t requested_count;
	struct detail_state *details; /* owned */
	size_t detail_count;
	size_t detail_capacity;

	size_t gpu_name_count;
	size_t mem_label_count;
	enum po_status deferred; /* a failure inside a merge, returned by the next call */
	bool finished;
};

/* model.c */
const char *model_intern_capped(struct po_model *model, uint64_t name_space, struct po_str text,
				size_t *count, size_t cap, const char *fold);
int64_t model_current_rss_sum(const struct po_model *model);
/* Whether the event's process belongs to the recorded command (membership.c). */
bool model_admits(struct po_model *model, const struct po_event *event);
/* Takes processes silent since before time_ns - PO_SILENT_NS out of the memory sums. */
void model_expire_silent(struct po_model *model, int64_t time_ns);

/* spans.c: stage and sync spans, steps, the breakdown and batches */
enum po_status spans_stage_begin(struct po_model *model, struct thread *thread,
				 const struct po_event *event) PO_NODISCARD;
enum po_status spans_stage_end(struct po_model *model, struct thread *thread,
			       const struct po_event *event) PO_NODISCARD;
enum po_status spans_sync(struct po_model *model, struct thread *thread,
			  const struct po_event *event) PO_NODISCARD;
enum po_status spans_step_begin(struct po_model *model, struct thread *thread,
				const struct po_event *event) PO_NODISCARD;
enum po_status spans_step_end(struct po_model *model, struct thread *thread,
			      const struct po_event *event) PO_NODISCARD;
enum po_status spans_batch_ready(struct po_model *model, const struct po_event *event) PO_NODISCARD;
int spans_innermost_stage(const struct thread *thread);
bool spans_is_training(const struct po_model *model, const struct thread *thread);
/* Per category, the training thread's time within [begin, end) from the segment ring. */
enum po_category spans_cause(const struct po_model *model, int64_t begin_ns, int64_t end_ns,
			     int64_t *cause_ns);

/* model_gpu.c: the model as the GPU tracker's host */
void model_gpu_init(struct po_model *model);
enum po_status model_gpu_activity(struct po_model *model,
				  const struct po_event *event) PO_NODISCARD;
enum po_status model_gpu_build(struct po_model *model, struct po_analysis *analysis) PO_NODISCARD;

/* detail.c */
enum po_status detail_push_span(struct po_model *model, const struct po_span *span) PO_NODISCARD;
void detail_push_counter(struct po_model *model, const struct po_counter_sample *sample);
enum po_status detail_step_ended(struct po_model *model) PO_NODISCARD;
enum po_status detail_gap_found(struct po_model *model, size_t step_index,
				int64_t gap_ns) PO_NODISCARD;
enum po_status detail_finish(struct po_model *model, struct po_analysis *analysis) PO_NODISCARD;
void detail_free(struct po_model *model);
size_t detail_bytes(const struct po_model *model);
/* Index of the step with the largest overlap with [begin, end), or -1. */
int64_t model_step_at(const struct po_model *model, int64_t begin_ns, int64_t end_ns);

/* finish.c */
enum po_role finish_role_of(const struct po_analysis *analysis, int32_t pid);
enum po_status finish_build(struct po_model *model, struct po_analysis *analysis) PO_NODISCARD;

#endif /* PO_MODEL_INTERNAL_H */
