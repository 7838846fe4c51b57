/* model_internal.h: the private state of the model, shared by the files of analyzer/model. */
#ifndef PO_MODEL_INTERNAL_H
#define PO_MODEL_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "batches.h"
#include "detail.h"
#include "gpu.h"
#include "hotspots.h"
#include "kernel_tracker.h"
#include "labels.h"
#include "map.h"
#include "processes.h"
#include "ranks.h"
#include "saturate.h"
#include "memory.h"
#include "model.h"
#include "step_store.h"
#include "steps.h"

/* Bounds that keep the model's memory independent of the trace's length. */
#define PO_WINDOW_CAP 1024	  /* discard windows kept */
#define PO_NAME_CAP 4096	  /* distinct GPU activity names interned */
#define PO_CONFIG_CAP 1024	  /* run_config keys */
#define PO_COVERAGE_WARN_PCT 90.0 /* steps covering less of their span get a warning */

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

#define PO_LAUNCH_CAP 65536 /* GPU launches remembered until their records come */

struct launch_key {
	uint64_t pid;
	uint64_t correlation;
};

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

	struct po_missing_window *missing; /* owned; paths interned */
	size_t missing_count;
	size_t missing_capacity;

	/* membership.c: pid -> state, and the processes left out (owned) */
	struct po_map membership;
	bool any_announced;
	struct po_excluded_process *excluded;
	size_t excluded_count;
	size_t excluded_capacity;

	/* the processes and threads: the tracker (processes.h) */
	struct po_process_tracker procs;

	/* the training loop: steps, breakdown, batches (steps.h) */
	struct po_step_tracker loop;

	/* the stage spans' labels: the tracker (labels.h) */
	struct po_label_tracker labels;

	/* function-level samples per process, stage and function (hotspots.h) */
	struct po_hotspot_tracker hotspots;

	/* GPU activity: the tracker (gpu.h), whose host is the model (model_gpu.c) */
	struct po_gpu_tracker gpu;
	struct po_kernel_tracker kernels; /* the kernels by name (kernel_tracker.h) */

	/* memory: the tracker (memory.h), told of the processes' sums by procs */
	struct po_memory_tracker memory;

	/* the timelines of representative steps: the tracker (detail.h) */
	struct po_detail_tracker timeline;

	/* (pid, correlation id) -> the launching thread's stage + 2 (1: none), the newest
	 * PO_LAUNCH_CAP launches; the ring holds their keys, oldest first to go */
	struct po_map launches;
	struct launch_key *launch_ring; /* owned, PO_LAUNCH_CAP; NULL before a launch */
	size_t launch_next;
	size_t launch_count;
	size_t gpu_name_count;
	size_t mem_label_count;
	enum po_status deferred; /* a failure inside a merge, returned by the next call */
	/* The program's warnings (po_model_add_warning), strings in arena; owned array */
	struct po_warning *given_warnings;
	size_t given_warning_count;
	bool finished;

	/* the ranks of a distributed job and their own models (ranks.h) */
	struct po_rank_tracker ranks;
	bool rank_lane; /* this model is one rank's, inside another model's rank tracker */
};

/* model.c */
const char *model_intern_capped(struct po_model *model, uint64_t name_space, struct po_str text,
				size_t *count, size_t cap, const char *fold);
/* Whether the event's process belongs to the recorded command (membership.c). */
bool model_admits(struct po_model *model, const struct po_event *event);

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
/* The open category of highest priority on a thread; OTHER when nothing is open. */
enum po_category spans_open_category(const struct thread *thread);

/* model_gpu.c: the model as the GPU tracker's host */
/* A value that cannot be physical was ignored: count adds to its kind and the total. */
static inline void model_implausible(struct po_model *model, enum po_implausible kind,
				     int64_t count)
{
	model->quality.implausible[kind] += count;
	model->quality.implausible_values += count;
}

void model_gpu_init(struct po_model *model);
void model_gpu_fini(struct po_model *model);
size_t model_gpu_bytes(const struct po_model *model);
/* A gpu_launch on thread: its correlation id will name the stage it was launched in. */
enum po_status model_gpu_launch(struct po_model *model, const struct thread *thread,
				const struct po_event *event) PO_NODISCARD;
enum po_status model_gpu_activity(struct po_model *model,
				  const struct po_event *event) PO_NODISCARD;
/* A profopt:gpu_device event, and a GPU memory counter sample. */
enum po_status model_gpu_device(struct po_model *model, const struct po_event *event) PO_NODISCARD;
enum po_status model_gpu_memory(struct po_model *model, const struct po_event *event) PO_NODISCARD;
enum po_status model_gpu_build(struct po_model *model, struct po_analysis *analysis) PO_NODISCARD;

/* Index of the step with the largest overlap with [begin, end), or -1. */
int64_t model_step_at(const struct po_model *model, int64_t begin_ns, int64_t end_ns);

/* finish.c */
enum po_role finish_role_of(const struct po_analysis *analysis, int32_t pid);
enum po_status finish_build(struct po_model *model, struct po_analysis *analysis) PO_NODISCARD;

#endif /* PO_MODEL_INTERNAL_H */
