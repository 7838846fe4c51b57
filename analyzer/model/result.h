/*
 * result.h: the analysis result, what the model builds from the typed events and what the
 * detectors, the JSON writer and every renderer read. Renderers never see the trace.
 *
 * Ownership: struct po_analysis owns every array and string reachable from it (strings live
 * in its arena); pointers inside it are weak and valid until po_analysis_destroy(). Times
 * are int64_t nanoseconds of the trace clock; -1 means unknown.
 */
#ifndef PO_RESULT_H
#define PO_RESULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/arena.h"
#include "common/status.h"
#include "model/event.h"
#include "model/kernels.h"
#include "stats/stats.h"

/* Roles of processes. X(NAME, json name) */
#define PO_ROLES(X)                                                                                \
	X(MAIN, "main")                                                                            \
	X(WORKER, "worker")                                                                        \
	X(OTHER, "other")

enum po_role {
#define PO_X(name, json) PO_ROLE_##name,
	PO_ROLES(PO_X)
#undef PO_X
	    PO_ROLE_COUNT
};

/*
 * Categories of the main loop's time within a step, in priority order: where spans on the
 * training thread overlap, the instant goes to the first category in this list that is
 * active. So loading inside a data wait (num_workers=0) counts as load, and a GPU sync
 * inside the optimizer counts as gpu_sync. Time covered by no span is "other".
 * handoff is no stage: it is the part of a data wait after the consumed batch was ready in
 * its worker (moving a finished batch to the loop: unpickling, shared-memory handles,
 * pinning), split off the data wait when the wait ends.
 * X(NAME, json name)
 */
#define PO_CATEGORIES(X)                                                                           \
	X(LOAD, "load")                                                                            \
	X(PREPROCESS, "preprocess")                                                                \
	X(COLLATE, "collate")                                                                      \
	X(GPU_SYNC, "gpu_sync")                                                                    \
	X(H2D_COPY, "h2d_copy")                                                                    \
	X(OPTIMIZER, "optimizer")                                                                  \
	X(BACKWARD, "backward")                                                                    \
	X(FORWARD, "forward")                                                                      \
	X(CHECKPOINT, "checkpoint")                                                                \
	X(EVAL, "eval")                                                                            \
	X(CUSTOM, "custom")                                                                        \
	X(DATA_WAIT, "data_wait")                                                                  \
	X(HANDOFF, "handoff")                                                                      \
	X(GC, "gc")                                                                                \
	X(OTHER, "other")

enum po_category {
#define PO_X(name, json) PO_CAT_##name,
	PO_CATEGORIES(PO_X)
#undef PO_X
	    PO_CATEGORY_COUNT
};

const char *po_role_name(enum po_role role);

/*
 * The kinds of values that cannot be physical (po_quality.implausible), each with what the
 * implausible-values warning says of it.
 */
#define PO_IMPLAUSIBLE_KINDS(X)                                                                    \
	X(PROCESS_CPU, "a process's CPU time going down or growing faster than the cores")         \
	X(RUNQ_WAIT, "a run-queue wait going down or growing faster than the time that passed")    \
	X(MACHINE_CPU, "the machine's busy CPU time going down or growing faster than its cores")  \
	X(MEMORY_SIZE, "a negative or absurd memory size")                                         \
	X(SPAN_CPU, "a loader span's CPU time longer than the span")                               \
	X(GPU_RECORD, "GPU work ending before it starts, lasting over an hour, ending after its "  \
		      "record was written or overlapping the work before it on its stream")        \
	X(KERNEL_SHAPE, "a kernel launch shape past what CUDA allows")                             \
	X(COUNT_VALUE, "a negative count (collected objects, dropped GPU records)")                \
	X(SAMPLE_WEIGHT, "a stack sample weighing more time than its thread could have run")

enum po_implausible {
#define PO_X(name, text) PO_IMPLAUSIBLE_##name,
	PO_IMPLAUSIBLE_KINDS(PO_X)
#undef PO_X
	    PO_IMPLAUSIBLE_COUNT
};

/* What the warning says of a kind; "?" if invalid. */
const char *po_implausible_text(enum po_implausible kind);
const char *po_category_name(enum po_category category);
/*
 * The category a stage's time counts as on the training thread: the category of the same
 * name, generated from PO_STAGES so the two lists cannot drift. Inline, so renderers need
 * no model library for it.
 */
static inline enum po_category po_category_of_stage(enum po_stage stage)
{
	switch (stage) {
#define PO_X(name, json)                                                                           \
	case PO_STAGE_##name:                                                                      \
		return PO_CAT_##name;
		PO_STAGES(PO_X)
#undef PO_X
	default:
		return PO_CAT_OTHER;
	}
}

/*
 * How the run ended. X(NAME, json name) */
#define PO_RUN_ENDINGS(X)                                                                          \
	X(CLEAN, "clean")	      /* run_end, no error reported */                             \
	X(EXCEPTION, "exception")     /* run_end after an exception (run_ending config) */         \
	X(SIGNAL, "signal")	      /* interrupted by a signal (run_ending config) */            \
	X(NO_RUN_END, "no-run-end")   /* run_begin without run_end: crashed or killed */           \
	X(NO_RUN, "no-run")	      /* no run_begin: the program marks no run */                 \
	X(FAILED_EXIT, "failed-exit") /* run_end, but the recorded command exited with a failure   \
					 status (profopt-recording.txt) */

enum po_run_ending {
#define PO_X(name, json) PO_RUN_##name,
	PO_RUN_ENDINGS(PO_X)
#undef PO_X
	    PO_RUN_ENDING_COUNT
};

const char *po_run_ending_name(enum po_run_ending ending);

/*
 * A process's memory sets, sampled from /proc/PID/smaps_rollup (the host_pss and host_uss
 * counters): the proportional set (each page divided by the processes that map it) and the
 * unique set (pages only it maps), first, latest and largest; and its resident set (the
 * latest host_rss sample) when the unique set was first sampled and when it peaked, to
 * tell pages it un-shared from memory it allocated. -1 without samples.
 */
struct po_memory_sets {
	int64_t pss_first_bytes;
	int64_t pss_last_bytes;
	int64_t pss_peak_bytes;
	int64_t uss_first_bytes;
	int64_t uss_last_bytes;
	int64_t uss_peak_bytes;
	int64_t rss_at_uss_first_bytes;
	int64_t rss_at_uss_peak_bytes;
};

#define PO_MEMORY_SETS_UNKNOWN ((struct po_memory_sets){-1, -1, -1, -1, -1, -1, -1, -1})

/*
 * Where profopt's own CPU time in a process went (profopt:self_cost): its hooks on the
 * program's threads, its garbage-collection callbacks, libprofopt's own threads.
 * X(NAME, json name)
 */
#define PO_COST_SOURCES(X)                                                                         \
	X(GC, "gc_callbacks")                                                                      \
	X(HOOKS, "hooks")                                                                          \
	X(THREADS, "library_threads")

enum po_cost_source {
#define PO_X(name, json) PO_COST_##name,
	PO_COST_SOURCES(PO_X)
#undef PO_X
	    PO_COST_SOURCE_COUNT
};

struct po_process {
	int32_t pid;
	const char *name; /* procname */
	enum po_role role;
	int64_t worker_id;  /* from worker_begin; -1 */
	int32_t parent_pid; /* from worker_begin; -1 */
	int64_t first_ns;
	int64_t last_ns;
	int64_t event_count;
	int64_t rss_first_bytes; /* first/last/peak host RSS counter; -1 without samples */
	int64_t rss_last_bytes;
	int64_t rss_peak_bytes;
	int64_t cpu_first_ns; /* first/last PROCESS_CPU counter; -1 */
	int64_t cpu_last_ns;
	int64_t runq_first_ns; /* first/last PROCESS_RUNQ_WAIT counter (waiting for a CPU); -1 */
	int64_t runq_last_ns;
	struct po_memory_sets sets;
	/* profopt's own CPU time in it, by source: the latest cumulative report; -1 none */
	int64_t self_cost_ns[PO_COST_SOURCE_COUNT];
	int64_t self_cost_total_ns;   /* the sources summed; -1 when none reported */
	double self_cost_per_step_ns; /* that over the run's steps; NaN without either */
	/*
	 * The rank it belongs to (its own rank event, or its parent's for a loader worker); -1
	 * without one. other_rank: its events after its rank event were analysed in its rank's
	 * own model (the ranks table), not in this analysis's loop; it is still the recorded
	 * program's, its CPU time counted as such.
	 */
	int32_t rank;
	bool other_rank;
};

struct po_thread {
	int32_t pid;
	int32_t tid;
	const char *name;
	bool is_training_loop; /* the thread that emits step_begin/step_end */
};

/* Step flags. */
#define PO_STEP_LOSSY 0x1u     /* overlaps a window of discarded events or packets */
#define PO_STEP_UNMATCHED 0x2u /* a span inside it had no begin or no end */

struct po_step {
	int64_t index; /* step number from the trace */
	int64_t epoch;
	int64_t batch_size; /* samples; -1 */
	int64_t begin_ns;
	int64_t end_ns;
	int64_t category_ns[PO_CATEGORY_COUNT]; /* sums exactly to end_ns - begin_ns */
	int64_t batch;				/* batch index consumed (data_wait's batch); -1 */
	int32_t worker_pid;  /* process that produced that batch; -1 main or unknown */
	int64_t ready_ns;    /* when that batch was ready (batch_ready, else collate end) */
	int64_t queue_depth; /* latest queue depth seen at the data wait's end; -1 */
	int64_t load_ns;     /* the consumed batch's time in its producer, per stage; -1 */
	int64_t preprocess_ns;
	int64_t collate_ns;
	int64_t gpu_busy_ns;	 /* union of GPU activity of all devices within the step */
	int64_t host_live_bytes; /* live host bytes (alloc/free events) at the end; -1 */
	int64_t gpu_live_bytes;	 /* live GPU bytes (alloc/free events or counter); -1 */
	int64_t rss_bytes;	 /* sum of the latest RSS of every live process; -1 */
	int64_t main_rss_bytes;	 /* the training loop's process alone; -1 */
	uint32_t flags;
	/*
	 * The GPU work that began in the step (a record belongs to the step its start falls
	 * in; records are summed, not merged: work overlapping on two streams counts twice):
	 * time and count by class; the matrix classes' (matmul, convolution, attention) time
	 * by precision; time in kernels of fewer blocks than the device has multiprocessors
	 * (they leave part of it unused); kernels shorter than PO_SHORT_KERNEL_NS.
	 */
	int64_t gpu_class_ns[PO_KERNEL_CLASS_COUNT];
	int32_t gpu_class_count[PO_KERNEL_CLASS_COUNT];
	int64_t gpu_matrix_ns[PO_PRECISION_COUNT];
	int64_t gpu_small_kernel_ns;
	int32_t gpu_short_kernels;
	int32_t gpu_graph_kernels; /* kernels of a launch that started several: CUDA graphs */
};

#define PO_SHORT_KERNEL_NS 10000 /* kernels shorter than this cost less than their launch */

#define PO_STEP_HISTOGRAM_BINS 60

/* Summary statistics over the steps not flagged lossy. */
struct po_step_stats {
	int64_t count;	     /* all steps */
	int64_t clean_count; /* steps used for the statistics */
	double mean_ns;
	int64_t min_ns;
	int64_t p50_ns;
	int64_t p90_ns;
	int64_t p95_ns;
	int64_t p99_ns;
	int64_t max_ns;
	/*
	 * Throughput from the step period: clean steps over their summed wall time, times the
	 * coverage, so time between steps (loading outside the step marker, evaluation) counts.
	 */
	double steps_per_s;
	double samples_per_s; /* -1 when batch sizes are unknown */
	/*
	 * Share of the time from the first step's begin to the last step's end that is inside a
	 * step (all steps); what lies outside is in no breakdown. -1 without steps.
	 */
	double coverage_pct;
	int64_t span_ns;			    /* first step begin to last step end; -1 */
	double category_mean_ns[PO_CATEGORY_COUNT]; /* sums to mean_ns */
	/* The same steps' durations (ns) in PO_STEP_HISTOGRAM_BINS bins; total 0 without any. */
	struct po_stats_histogram histogram;
};

struct po_worker {
	int32_t pid;
	int64_t worker_id;		      /* -1 */
	int64_t batches;		      /* batches it finished (collate end or batch_ready) */
	int64_t stage_ns[PO_STAGE_COUNT];     /* wall time per stage, top-level spans */
	int64_t stage_cpu_ns[PO_STAGE_COUNT]; /* thread CPU time of loader stages; -1 */
	int64_t busy_ns;		      /* time inside any top-level span */
	int64_t first_ns;		      /* first and last event of the process */
	int64_t last_ns;
};

/* Time per (role, stage, label), to name the stage and label that dominate. */
struct po_label_stat {
	enum po_role role;
	enum po_stage stage;
	const char *label; /* "(other labels)" once too many distinct labels were seen */
	int64_t count;
	int64_t total_ns;
	int64_t cpu_ns; /* -1 when unknown */
};

/*
 * A function's share of the sampled CPU time of one (role, stage) (docs/sampling.md): self,
 * in the samples whose innermost frame it was, and total, in those whose stack it was in.
 * Shares are of the group's sampled CPU time (each sample weighs the CPU time it stands
 * for; by count when the samples carry none).
 */
/*
 * On this share of a group's stacks or more, a function is not listed by its total share,
 * and a native object does not dominate its stage (docs/sampling.md).
 */
#define PO_HOTSPOT_EVERY_STACK_PCT 99.0

/*
 * The report's tables list a group's first functions by self share and, below them, the
 * first by total share that are not on (nearly) every stack: a user's function whose time
 * is spent in a library it calls (65% total, 1% self) is listed as well (po_hotspot's
 * listed).
 */
#define PO_HOTSPOT_LISTED_BY_SELF 5
#define PO_HOTSPOT_LISTED_BY_TOTAL 3

struct po_hotspot {
	const char *function; /* qualified name, as the sampler described it */
	const char *file;
	int32_t line;	       /* first line of the function */
	int64_t samples;       /* samples in which it was innermost */
	int64_t total_samples; /* samples in whose stack it was */
	double self_pct;       /* of the group's sampled CPU time */
	double total_pct;
	int32_t total_rank; /* 1 for the largest total share under PO_HOTSPOT_EVERY_STACK_PCT, ...;
			       0 when not among the top by total */
	bool listed;	    /* in the report's tables (PO_HOTSPOT_LISTED_BY_SELF, _BY_TOTAL) */
};

/* The samples of a (role, stage) taken in the spans of one label, and their share. */
struct po_hotspot_label {
	const char *label; /* the span's label ("(other labels)" past the model's cap) */
	int64_t samples;
	double pct; /* of the group's sampled CPU time */
};

/*
 * A flame graph of one role's function samples (docs/sampling.md): each node a function on
 * a call path, in depth-first order, the children of a node after it by function name. A
 * node's samples are those whose stack holds its call path; its own, those in which it was
 * innermost; its times, the CPU (or wall) time those samples stand for. Paths in less than
 * PO_FLAME_MIN_PERMILLE of the role's time (of its samples when they carry no time) are
 * left out.
 */
#define PO_FLAME_MIN_PERMILLE 1

struct po_flame_node {
	int32_t depth; /* 0: the outermost sampled frame */
	const char *function;
	const char *file;
	int32_t line;
	int64_t samples;
	int64_t self_samples;
	int64_t time_ns, self_time_ns;
};

struct po_flame {
	enum po_role role;
	int64_t samples; /* every sample of the role */
	int64_t time_ns; /* the time they stand for; 0: not measured (widths by count) */
	int32_t max_depth;
	struct po_flame_node *nodes; /* in the arena */
	size_t node_count;
};

/* The function samples of one (role, stage): its hotspots, largest self share first. */
struct po_hotspot_group {
	enum po_role role;
	int stage;		     /* enum po_stage; -1: samples taken with no stage open */
	int64_t samples;	     /* in the group */
	int64_t cpu_ns;		     /* the CPU time they stand for; 0 when not measured */
	struct po_hotspot *hotspots; /* in the arena: the top by self and by total time */
	size_t hotspot_count;
	struct po_hotspot_label *labels; /* in the arena: the labels of the innermost spans */
	size_t label_count;		 /* open at the samples, most samples first */
};

struct po_gpu_stream {
	int32_t device;
	int32_t stream;
	int64_t busy_ns; /* union within the stream */
	int64_t activity_count;
	int64_t kind_ns[PO_GPU_KIND_COUNT]; /* summed durations per kind */
	int64_t bytes;
};

/* An interval of a device with no activity on any stream, at least the model's minimum. */
struct po_gpu_gap {
	int32_t device;
	int64_t begin_ns;
	int64_t end_ns;
	int64_t step_index;	/* index of the step it falls in (po_analysis_step()); -1 */
	enum po_category cause; /* what the training thread did for most of the gap */
	int64_t cause_ns;	/* how long it did that within the gap */
};

/*
 * A device's memory as the program used it, from the counters a caching allocator's
 * program records (PyTorch through the profopt module: gpu_mem_used, gpu_mem_reserved,
 * gpu_mem_peak at step ends, gpu_mem_free at most once a second), summed over the
 * processes using the device; -1 when not recorded.
 */
struct po_gpu_memory {
	int64_t peak_allocated_bytes; /* the most in use at once (peak, else the largest used) */
	int64_t resident_bytes;	      /* in use at step ends: the median (weights, gradients, the
					 optimizer's state: what stays between steps) */
	int64_t reserved_max_bytes;   /* the most the allocator held */
	int64_t free_min_bytes;	      /* the least the device had free, all processes counted */
	/*
	 * Memory one step needs beyond what stays between steps (activations, workspace):
	 * peak_allocated - resident; and what the allocator could still get: what it holds
	 * unused at the peak plus the device's free memory (without a free-memory sample,
	 * the device's memory less what was reserved: an upper bound).
	 */
	int64_t step_bytes;
	int64_t headroom_bytes;
};

/* One GPU kernel, by name, over the records that began in a step. */
struct po_gpu_kernel {
	const char *name;	/* weak: interned, as recorded (CUPTI's are mangled) */
	const char *short_name; /* weak: in the arena, for people (po_kernel_short_name) */
	enum po_kernel_class cls;
	enum po_precision precision;
	int64_t count;
	int64_t total_ns;
	int64_t mean_ns;
	int64_t grid_blocks;   /* of its latest record; 0 when unknown */
	int64_t block_threads; /* likewise */
};

#define PO_TOP_KERNELS 20 /* the kernels the result lists, by total time */

struct po_gpu_device {
	int32_t device;
	int64_t first_ns; /* first activity start, last activity end */
	int64_t last_ns;
	int64_t activity_count;
	int64_t busy_ns;   /* union over streams within the analysis window */
	int64_t window_ns; /* the analysis window: first step begin to last step end */
	int64_t idle_ns;   /* window_ns - busy_ns */
	/*
	 * busy_ns over window_ns, in %: the device's share of the whole analysis window, start-up
	 * and lossy steps included; NaN without a window. Not "GPU busy", which is the steady
	 * steps' share (po_steady_stats.gpu_busy_pct): everywhere it appears it is named "busy
	 * over the window" (window_busy_pct).
	 */
	double window_busy_pct;
	int64_t gap_ns_by_cause[PO_CATEGORY_COUNT]; /* recorded gaps only */
	size_t gaps_begin; /* this device's gaps: po_analysis.gaps[gaps_begin .. +gap_count) */
	size_t gap_count;
	int64_t gaps_not_kept; /* gaps past the model's cap, counted only */
	int64_t late_records;  /* records older than the merge window, merged approximately */
	/*
	 * Activity time (records summed, not their union) by the stage open on the thread
	 * that launched it (gpu_launch with the record's correlation id); launched outside
	 * any stage; and with no launch recorded.
	 */
	int64_t launched_ns_by_stage[PO_STAGE_COUNT];
	int64_t launched_outside_stages_ns;
	int64_t unlaunched_ns;
	/* What the device is (profopt:gpu_device); name NULL, the numbers -1 when unknown. */
	const char *name;	 /* weak: in the analysis arena */
	int64_t memory_bytes;	 /* the device's memory */
	int32_t multiprocessors; /* streaming multiprocessors */
	int32_t capability_major, capability_minor;
	struct po_gpu_memory memory; /* what the program used of it */
};

/* Memory allocated at one site and what remained at the end. */
struct po_mem_site {
	int32_t pid;
	enum po_role role;
	int32_t device;	   /* -1 host */
	int stage;	   /* enum po_stage active on the thread, or -1 for none */
	const char *label; /* profopt mem label, or NULL */
	uint64_t ip;	   /* allocation site from the ip context (libc events), or 0 */
	int64_t alloc_count;
	int64_t alloc_bytes;
	int64_t free_count;
	int64_t free_bytes;
	int64_t live_count; /* still allocated at the end of the trace */
	int64_t live_bytes;
	int64_t first_live_step; /* step number of the oldest/newest still-live allocation; -1 */
	int64_t last_live_step;
	/*
	 * Where ip lies (from the trace's mapped objects): the object's path and ip's offset
	 * from its base address; object NULL when no mapped object holds ip. build_id: the
	 * object's recorded build id (lower-case hex), NULL when the trace has none.
	 */
	const char *object; /* weak: in the analysis arena */
	uint64_t offset;
	const char *build_id; /* weak: in the analysis arena */
	/*
	 * Filled by analyzer/symbols from the object's ELF symbols and DWARF lines: the
	 * function holding the call (NULL when unresolved), its source file and line (NULL
	 * and -1 without line information), and, when symbol is NULL for a known object,
	 * why, in words ("object changed since the recording"). Zeroed (source_line 0 or -1:
	 * unknown) for sites made without a trace.
	 */
	const char *symbol;	 /* weak: in the analysis arena */
	const char *source_file; /* weak: in the analysis arena */
	int64_t source_line;
	const char *symbol_note; /* weak: static text */
	bool pinned;		 /* host memory pinned for the devices (a pinned-memory pool's) */
};

struct po_memory {
	bool has_alloc_events; /* profopt mem_alloc/mem_free */
	bool has_libc_events;  /* lttng_ust_libc */
	bool has_rss;
	bool has_gpu_counter;
	int64_t host_peak_bytes; /* peak live host bytes (events), else peak summed RSS; -1 */
	int64_t gpu_peak_bytes;	 /* -1 */
	int64_t rss_peak_bytes;	 /* -1 */
	int64_t unmatched_frees; /* frees of addresses never seen allocated */
	int64_t machine_bytes;	 /* physical memory of the machine (machine_memory); -1 */
};

#define PO_DISCARD_EVENTS 0
#define PO_DISCARD_PACKETS 1

struct po_discard_window {
	int kind; /* PO_DISCARD_EVENTS or PO_DISCARD_PACKETS */
	uint32_t trace_id;
	int32_t pid;	  /* -1 */
	int64_t begin_ns; /* -1 when unknown */
	int64_t end_ns;
	int64_t count; /* PO_COUNT_UNKNOWN when the tracer could not tell */
};

struct po_quality {
	int64_t events; /* all events read */
	int64_t profopt_events;
	int64_t libc_events;
	int64_t discarded_events; /* sum of the known counts */
	int64_t discarded_packets;
	int64_t unknown_discards; /* windows whose count is unknown */
	size_t window_count;	  /* windows kept in po_analysis.discard_windows */
	int64_t windows_not_kept;
	int64_t unmatched_begins; /* begins whose end never came while their thread went on */
	int64_t unmatched_ends;	  /* ends with no open begin */
	int64_t open_at_end;	  /* spans (and a step) still open when their process's events
				     end: cut off by the program's end, not lost by the tracer */
	int64_t time_inversions;  /* events older than the previous one of their thread */
	int64_t step_mismatches;  /* step_end whose step number is not the open step's */
	/*
	 * Values that cannot be physical and were ignored: a process's CPU time growing faster
	 * than all the cores, cumulative counters going down, a run-queue wait longer than the
	 * time that passed, negative or absurd memory sizes, GPU work ending before it starts
	 * or lasting over an hour. A damaged trace gives them; each is said in the warnings.
	 * implausible counts them by kind (the warning names the kinds seen).
	 */
	int64_t implausible_values;
	int64_t implausible[PO_IMPLAUSIBLE_COUNT];
	/*
	 * profopt mem_free events whose address had no live allocation: freed twice, allocated
	 * before the recording, or a damaged address (then an allocation looks unfreed).
	 */
	int64_t unmatched_mem_frees;
	/* GPU activity records the CUPTI collector lost (its gpu_records_dropped counters). */
	int64_t gpu_records_dropped;
	bool missing_vpid;
	bool missing_vtid;
	bool missing_procname;
	int64_t lossy_steps;
	int64_t trace_count;
	int64_t first_ns;
	int64_t last_ns;
	bool partial; /* --salvage analysed only what was readable */
	/*
	 * Processes left out because they are not the recorded command's (membership.c),
	 * and their events; po_analysis.excluded_processes lists the first ones.
	 */
	int64_t excluded_processes;
	int64_t excluded_events;
	int64_t missing_windows; /* noted; more than po_analysis.missing_window_count when capped */
	int64_t late_announced_events; /* of processes that announced late: lost, not left out */
	int64_t unannounced_kept;      /* processes kept without an announcement (packets lost) */
	bool recording_known;	       /* the trace names its recording: processes were checked */
	bool recording_unannounced;    /* ... but no process announced itself (old libprofopt) */
};

/*
 * How busy the whole machine was beside the recorded processes: the sampler's machine_cpu
 * counter (the busy time of all CPUs from /proc/stat, every program counted; one series per
 * host, recorded by processes that are not forked workers) against the recorded processes'
 * own CPU counters over the same span. What is left is what other programs used (and the
 * kernel's work for nobody in particular). known is false without a series of two samples.
 */
struct po_machine_load {
	bool known;
	int32_t pid;	  /* the process whose series is used: the main one where it has one */
	int64_t series;	  /* processes that recorded a series */
	int64_t first_ns; /* the series' first and last sample */
	int64_t last_ns;
	double busy_cores;   /* all CPUs' busy time over the span, in cores */
	double traced_cores; /* the recorded processes' CPU time over the span, in cores */
	double others_cores; /* busy less recorded, at least 0: what other programs used */
};

/*
 * What the measurement itself cost (docs/accuracy.md, "What a recording costs"): profopt's
 * own CPU time in the recorded processes (their self_cost events: the Python module's hooks
 * and gc callbacks, libprofopt's threads) and the recorder's (profopt-record and the LTTng
 * daemons it started, from profopt-recording.txt), spread over the run's steps. known is
 * false when neither was reported.
 */
struct po_self_cost {
	bool known;
	int64_t source_ns[PO_COST_SOURCE_COUNT]; /* summed over the processes; -1 none reported */
	int64_t processes_ns;			 /* all sources of all processes; -1 none */
	int64_t recorder_ns;			 /* -1 when not known */
	int64_t reporting_processes;		 /* processes that reported their cost */
	int64_t step_count;			 /* the steps it is spread over: the run's */
	double processes_per_step_ns;		 /* NaN without steps or reports */
	double recorder_per_step_ns;		 /* NaN without steps or a recorder figure */
	double per_step_ns;			 /* the two summed, those known; NaN */
};

/*
 * Windows of time a stream or the whole recording is missing, found from the trace's files
 * rather than reported by the tracer (ingest's stream survey): X(NAME, json name)
 */
#define PO_MISSING_KINDS(X)                                                                        \
	X(STREAM_SHORTER_THAN_INDEX, "stream-shorter-than-index")                                  \
	X(STREAM_ENDS_EARLY, "stream-ends-early")                                                  \
	X(RECORDING_ENDS_EARLY, "recording-ends-early")                                            \
	X(STREAM_DAMAGED, "stream-damaged")

enum po_missing_kind {
#define PO_X(name, json) PO_MISSING_##name,
	PO_MISSING_KINDS(PO_X)
#undef PO_X
	    PO_MISSING_KIND_COUNT
};

struct po_missing_window {
	enum po_missing_kind kind;
	const char
	    *path; /* the stream file relative to the trace directory; NULL for the recording */
	int64_t begin_ns;
	int64_t end_ns;
};

/*
 * The steps every verdict and finding is measured on: clean steps (not lossy) past each
 * epoch's start-up (its first max(1, workers) steps, while workers start and caches fill),
 * and the shares the report's headline shows, defined once here (detect.c fills them).
 */
/*
 * The GPU work of the steady steps, per step (detect.c fills it from the steps' GPU work
 * by class, result.h's struct po_step): what the gpu-bound and launch-bound findings and
 * every renderer read. present is false without GPU records in the steady steps.
 */
struct po_gpu_work {
	bool present;
	double work_ms;				 /* every record, summed (not their union) */
	double kernel_ms;			 /* kernels alone */
	double kernels;				 /* kernels per step */
	double class_ms[PO_KERNEL_CLASS_COUNT];	 /* by class */
	double class_pct[PO_KERNEL_CLASS_COUNT]; /* of work_ms */
	double class_count[PO_KERNEL_CLASS_COUNT];
	double matrix_ms[PO_PRECISION_COUNT];  /* matmul, convolution and attention by precision */
	double matrix_pct[PO_PRECISION_COUNT]; /* of the matrix classes' time */
	double small_kernel_pct; /* of kernel time: kernels of fewer blocks than multiprocessors;
				    NaN when no launch shape or device size is known */
	double short_kernel_pct; /* of kernels: shorter than PO_SHORT_KERNEL_NS */
	double graph_kernel_pct; /* of kernels: launched from CUDA graphs */
	double mean_kernel_us;
	double busy_ms;		   /* the union of GPU activity (steady.gpu_busy_pct's) */
	double host_ms;		   /* the step less gpu_sync: the training thread not waiting */
	double launch_host_ms;	   /* forward, backward and optimizer on the training thread */
	double host_us_per_kernel; /* launch_host_ms over the kernels */
	double input_ms;	   /* data_wait, load, preprocess, collate and handoff */
};

struct po_steady_stats {
	int64_t count;
	int64_t startup_steps; /* left out at the start of each epoch */
	double mean_ns;	       /* mean wall time; NaN without steady steps */
	double gpu_busy_pct;   /* share of their time with any GPU busy; NaN without GPU */
	/*
	 * data wait and loading in the main process, and the hand-off where input-bound counts
	 * it (handoff_is_input: saturated cores and busy workers); NaN without
	 */
	double input_wait_pct;
	double workers_busy_pct; /* mean busy share of the workers' lifetimes; NaN without */
	bool handoff_is_input;
};

/*
 * The run_config settings the analysis understands, resolved once from the run's key and
 * value text (finish.c), so that every detector reads one meaning: integers must be whole
 * decimal numbers, booleans true/false or 1/0 in any case. -1 (NULL) when the run did not
 * report the setting or reported something else.
 */
/* Part of a run config value (not NUL-terminated): print it with "%.*s". */
struct po_text_span {
	const char *text; /* weak: in the config value; NULL when absent */
	int length;
};

/*
 * One of the Python module's memory lines (python_memory=True, docs/python.md), as the run
 * config reports it: where the Python objects that grew most since warm-up were created
 * ("python_growth.1" = "FILE:LINE | BYTES | OBJECTS") and what keeps them ("python_kept.1" =
 * "FILE:LINE | BYTES"), parsed once here.
 */
struct po_python_growth {
	struct po_text_span created_at; /* FILE:LINE; length 0: no such line */
	struct po_text_span kept_at;	/* FILE:LINE of the holder; length 0: created_at's */
	int64_t objects;		/* how many more since warm-up; -1 unknown */
};

struct po_run_settings {
	int64_t num_workers;
	int64_t prefetch_factor;
	int64_t batch_size;
	int pin_memory; /* 0, 1; -1 */
	int persistent_workers;
	int64_t num_threads; /* the training process's intra-op threads (torch_num_threads) */
	const char *device;  /* "cpu", "cuda:0", ...; NULL */
	int64_t rank;
	int64_t world_size;
	/* The Python memory lines of the training loop's process and of the loader workers */
	struct po_python_growth python_main, python_workers;
};

/*
 * Fills analysis->settings from analysis->config (the one parse of the run's settings);
 * the model calls it, and so may a program that builds a result by hand.
 */
struct po_analysis;
void po_run_settings_resolve(struct po_analysis *analysis);

/* The per-step memory series a growth was fitted on. */
enum po_growth_series {
	PO_GROWTH_HOST_ALLOCS, /* host live bytes from allocation events */
	PO_GROWTH_RSS_ALL,     /* resident set of every process */
	PO_GROWTH_RSS_MAIN,    /* resident set of the training loop's process */
	PO_GROWTH_RSS_WORKERS, /* resident sets of the loader workers alive at each step */
	PO_GROWTH_GPU_ALLOCS,  /* GPU live bytes */
};

/*
 * The line of a memory-growth finding, as the detector fitted it: from the first to the
 * last fitted step (positions in the step store) and its bytes there. The memory chart
 * draws this line, so it shows the finding's trend, not one of its own.
 */
struct po_growth_line {
	bool present;
	enum po_growth_series series;
	size_t first_position;
	size_t last_position;
	double first_bytes;
	double last_bytes;
};

/* A detection rule whose value differs from its default (--set, --config). */
struct po_rule_change {
	const char *name; /* "input-bound.max_workers"; weak: static */
	double value;
	double default_value;
};

/* Why a process was left out of the analysis. X(NAME, json name) */
#define PO_EXCLUDED_REASONS(X)                                                                     \
	X(OTHER_RECORDING, "another-recording")                                                    \
	X(OUTSIDE_COMMAND, "outside-command")                                                      \
	X(NO_ANNOUNCEMENT, "no-announcement")

enum po_excluded_reason {
#define PO_X(name, json) PO_EXCLUDED_##name,
	PO_EXCLUDED_REASONS(PO_X)
#undef PO_X
	    PO_EXCLUDED_REASON_COUNT
};

struct po_excluded_process {
	int32_t pid;
	enum po_excluded_reason reason;
	const char *name; /* procname; NULL when the trace lacks it */
	int64_t first_ns;
	int64_t events;
};

struct po_kv {
	const char *key;
	const char *value;
};

/* A completed span or activity kept for the timelines of representative steps. */
enum po_span_kind {
	PO_SPAN_STAGE, /* a stage span; sub is its enum po_stage */
	PO_SPAN_GPU,   /* a GPU record; sub is its enum po_gpu_kind */
	PO_SPAN_SYNC,  /* the host waiting for the GPU */
	PO_SPAN_STEP,  /* a whole step */
	PO_SPAN_KIND_COUNT
};

struct po_span {
	enum po_span_kind kind;
	int sub; /* stage for STAGE, gpu kind for GPU */
	int32_t pid;
	int32_t tid;	/* -1 for GPU */
	int32_t device; /* GPU and SYNC; else -1 */
	int32_t stream;
	const char *label; /* stage label, kernel name; weak: in the analysis arena */
	int64_t begin_ns;
	int64_t end_ns;
	int64_t batch; /* -1 */
};

struct po_counter_sample {
	int32_t pid;
	enum po_counter kind;
	int32_t device;
	int64_t time_ns;
	int64_t value;
};

/* Why a step's timeline was kept. */
#define PO_DETAIL_SLOWEST 0x1u
#define PO_DETAIL_MEDIAN 0x2u
#define PO_DETAIL_STALL 0x4u	  /* a GPU gap or an outlier */
#define PO_DETAIL_NEIGHBOR 0x8u	  /* next to a slowest step, for the timeline window */
#define PO_DETAIL_REQUESTED 0x10u /* inside --timeline-steps */

struct po_step_detail {
	size_t step_index; /* the step's index (po_analysis_step()) */
	uint32_t reasons;
	int64_t begin_ns; /* the step's window */
	int64_t end_ns;
	struct po_span *spans; /* every process, thread and stream, sorted by begin */
	size_t span_count;
	struct po_counter_sample *counters;
	size_t counter_count;
	bool truncated; /* more spans than the per-step cap */
};

/* Findings, filled by the detectors. X(NAME, json id) */
#define PO_FINDING_IDS(X)                                                                          \
	X(INPUT_BOUND, "input-bound")                                                              \
	X(GPU_IDLE, "gpu-idle")                                                                    \
	X(HOST_MEMORY_GROWTH, "host-memory-growth")                                                \
	X(GPU_MEMORY_GROWTH, "gpu-memory-growth")                                                  \
	X(UNFREED_ALLOCATIONS, "unfreed-allocations")                                              \
	X(WORKER_COPY_ON_ACCESS, "worker-copy-on-access")                                          \
	X(STEP_OUTLIERS, "step-outliers")                                                          \
	X(LEVEL_SHIFT, "level-shift")                                                              \
	X(TRACE_DATA_LOSS, "trace-data-loss")                                                      \
	X(CPU_CONTENTION, "cpu-contention")                                                        \
	X(LOADER_HANDOFF, "loader-handoff")                                                        \
	X(WORKER_RESTART, "worker-restart")                                                        \
	X(LOADER_IMBALANCE, "loader-imbalance")                                                    \
	X(GPU_BOUND, "gpu-bound")                                                                  \
	X(LAUNCH_BOUND, "launch-bound")                                                            \
	X(STRAGGLER, "rank-straggler")

enum po_finding_id {
#define PO_X(name, json) PO_FINDING_##name,
	PO_FINDING_IDS(PO_X)
#undef PO_X
	    PO_FINDING_ID_COUNT
};

/*
 * Why the training loop waits for its input: the input-bound finding's cause, its
 * "cause" evidence in summary.json. NONE without the finding. X(NAME, json id)
 */
#define PO_INPUT_CAUSES(X)                                                                         \
	X(NONE, "")                                                                                \
	X(LOADING_IN_MAIN_PROCESS, "loading-in-main-process")                                      \
	X(SLOW_H2D, "slow-h2d")                                                                    \
	X(LOADER_NOT_TRACED, "loader-not-traced")                                                  \
	X(CPU_SATURATED, "cpu-saturated")                                                          \
	X(TOO_FEW_WORKERS, "too-few-workers")                                                      \
	X(SLOW_LOAD, "slow-load")                                                                  \
	X(SLOW_PREPROCESS, "slow-preprocess")                                                      \
	X(SLOW_COLLATE, "slow-collate")

enum po_input_cause {
#define PO_X(name, json) PO_INPUT_CAUSE_##name,
	PO_INPUT_CAUSES(PO_X)
#undef PO_X
	    PO_INPUT_CAUSE_COUNT
};

const char *po_input_cause_name(enum po_input_cause cause);

#define PO_SEVERITIES(X)                                                                           \
	X(CRITICAL, "critical")                                                                    \
	X(WARNING, "warning")                                                                      \
	X(INFO, "info")

enum po_severity {
#define PO_X(name, json) PO_SEVERITY_##name,
	PO_SEVERITIES(PO_X)
#undef PO_X
	    PO_SEVERITY_COUNT
};

#define PO_VERDICTS(X)                                                                             \
	X(INPUT_BOUND, "input-bound")                                                              \
	X(HOST_BOUND, "host-bound")                                                                \
	X(GPU_BOUND, "gpu-bound")                                                                  \
	X(BALANCED, "balanced")                                                                    \
	X(UNKNOWN, "unknown")

enum po_verdict {
#define PO_X(name, json) PO_VERDICT_##name,
	PO_VERDICTS(PO_X)
#undef PO_X
	    PO_VERDICT_COUNT
};

const char *po_finding_id_name(enum po_finding_id id);
const char *po_severity_name(enum po_severity severity);
const char *po_verdict_name(enum po_verdict verdict);

/* The evidence keys, here because their "@" needs the step categories above. */
#include "model/evidence_keys.h"

enum po_evidence_type {
	PO_EVIDENCE_NUMBER,  /* number, a double; NaN is written as null */
	PO_EVIDENCE_INTEGER, /* integer */
	PO_EVIDENCE_TEXT,    /* text, in the analysis arena */
	PO_EVIDENCE_TYPE_COUNT
};

/*
 * One measured fact under one key of evidence_keys.h; the key's JSON name carries its unit
 * ("wait_share_pct", "gap_max_ms"). param fills a parameterised key's "#" or "@" and is zero
 * for the others.
 */
struct po_evidence {
	enum po_evidence_key key;
	enum po_evidence_type type;
	double number;
	int64_t integer;
	const char *text;
	union po_evidence_param param;
};

/*
 * What a recommendation changes, each named once: X(ID, JSON name), summary.json's
 * recommendations[].knob (docs/summary-schema.md lists them). Then one per step category
 * (PO_KNOB_CATEGORY + category, named as the category): the time to look into where
 * step-outliers or level-shift point at one category.
 */
#define PO_KNOBS(X)                                                                                \
	X(NUM_WORKERS, "num_workers")                                                              \
	X(PREFETCH_FACTOR, "prefetch_factor")                                                      \
	X(PIN_MEMORY, "pin_memory")                                                                \
	X(PERSISTENT_WORKERS, "persistent_workers")                                                \
	X(BATCH_SIZE, "batch_size")                                                                \
	X(LOADER_BALANCE, "loader_balance")                                                        \
	X(BALANCE, "balance")                                                                      \
	X(TRANSFORM, "transform")                                                                  \
	X(DECODER, "decoder")                                                                      \
	X(DATASET_STORAGE, "dataset_storage")                                                      \
	X(SHARING_STRATEGY, "sharing_strategy")                                                    \
	X(THREADS, "threads")                                                                      \
	X(TRANSFER, "transfer")                                                                    \
	X(BATCH_LAYOUT, "batch_layout")                                                            \
	X(ALLOCATION, "allocation")                                                                \
	X(INSTRUMENTATION, "instrumentation")                                                      \
	X(TRACE_BUFFERS, "trace_buffers")                                                          \
	X(CUPTI_BUFFERS, "cupti_buffers")                                                          \
	X(CHECKPOINT, "checkpoint")                                                                \
	X(SYNC, "sync")                                                                            \
	X(PRECISION, "precision")                                                                  \
	X(TF32, "tf32")                                                                            \
	X(CHANNELS_LAST, "channels_last")                                                          \
	X(CUDA_GRAPHS, "cuda_graphs")

enum po_knob {
#define PO_X(id, json) PO_KNOB_##id,
	PO_KNOBS(PO_X)
#undef PO_X
	    PO_KNOB_CATEGORY, /* + enum po_category */
	PO_KNOB_COUNT = PO_KNOB_CATEGORY + PO_CATEGORY_COUNT
};

/* The knob's JSON name; "?" out of range. Inline: the renderers link no model. */
static inline const char *po_knob_name(enum po_knob knob)
{
	static const char *const names[PO_KNOB_COUNT] = {
#define PO_X(id, json) json,
	    PO_KNOBS(PO_X)
#undef PO_X
#define PO_X(name, json) json,
		PO_CATEGORIES(PO_X)
#undef PO_X
	};

	return (unsigned)knob < PO_KNOB_COUNT ? names[knob] : "?";
}

struct po_recommendation {
	enum po_knob knob;
	const char *action; /* "set num_workers=4" */
	const char *why;
	const char *effect;	  /* the predicted effect in words */
	double predicted_step_ms; /* NaN when not predicted */
	double predicted_speedup; /* NaN when not predicted */
};

struct po_window {
	int64_t begin_ns;
	int64_t end_ns;
};

struct po_finding {
	enum po_finding_id id;
	enum po_severity severity;
	double confidence; /* 0..1 */
	const char *summary;
	struct po_evidence *evidence;
	size_t evidence_count;
	struct po_recommendation *recommendations;
	size_t recommendation_count;
	int64_t *steps; /* step numbers involved (capped) */
	size_t step_count;
	struct po_window *windows; /* time windows involved (capped) */
	size_t window_count;
};

/*
 * The numbers of the pipeline graph, defined once (model/finish.c): the workers' time per
 * batch in each loader stage, the batches they made and their rate over the steps'
 * window, and the mean number of batches ready at a data wait.
 */
struct po_pipeline_stats {
	double loader_stage_mean_ns[3]; /* load, preprocess, collate per batch; -1 without */
	int64_t worker_batches;		/* made by the worker processes */
	double window_s;		/* first step's begin to last step's end; -1 without */
	double mean_queue_depth;	/* over the steps that reported one; -1 without */
};

struct po_comparison; /* analyzer/compare/compare.h */
struct po_step_store; /* step_store.h */

struct po_warning {
	const char *code; /* "missing-context", "unmatched-spans", ... */
	const char *text;
};

/*
 * An alert of profopt-analyze --live, in the report written when the live run ends (the
 * pipeline copies them from the live view; the renderers show them).
 */
struct po_live_alert_note {
	const char *kind;     /* "input-bound", ...; weak: in the analysis arena */
	bool raised;	      /* false: cleared */
	double at_s;	      /* seconds since the live run's first window */
	const char *evidence; /* weak: in the analysis arena */
};

#include "model/distributed.h"

/*
 * The diagnosis of a run: what the detectors (analyzer/detect, po_detect_run) conclude from
 * the model's result, and what the program adds to it afterwards (the comparison with a
 * baseline, the live view's alerts). The detectors write this and nothing else of the
 * analysis: they see the model's result as const (det_ctx). Every string and array in it is
 * in the analysis arena, except rule_changes (owned, freed by po_analysis_destroy).
 */
struct po_diagnosis {
	struct po_steady_stats steady; /* the steady steps' statistics */
	struct po_gpu_work gpu_work;   /* the steady steps' GPU work */
	/*
	 * The input-bound finding's cause and the category of the pipeline stage it names
	 * as the bottleneck (the copy for slow-h2d, else the slowest loader stage), for the
	 * pipeline graph; PO_INPUT_CAUSE_NONE and has_bottleneck false without the finding.
	 */
	enum po_input_cause input_cause;
	bool has_bottleneck;
	enum po_category bottleneck;
	struct po_growth_line growth_lines[2]; /* host, GPU: growth findings' lines */
	struct po_rule_change *rule_changes;   /* the rules in effect that are not the defaults */
	size_t rule_change_count;
	/*
	 * profopt's own CPU time per step (po_self_cost.per_step_ns) as a share of the steady
	 * mean step (NaN when either is unknown), and whether it is self_cost.visible_pct or
	 * more: then the step times and shares of the report include a visible part of it.
	 */
	double self_cost_pct;
	bool self_cost_visible;
	/* Warnings of the detectors' own (busy-machine), after the model's (analysis->warnings) */
	struct po_warning *warnings;
	size_t warning_count;

	struct po_finding *findings; /* sorted by severity, then id */
	size_t finding_count;
	enum po_verdict verdict;
	/* weak: in the arena; the verdict's cause in words when a finding names it, else NULL */
	const char *verdict_reason;

	/* weak: in the arena; set by --baseline (analyzer/compare/compare.h), else NULL */
	const struct po_comparison *comparison;
	/* After profopt-analyze --live: its alerts, in order; live false offline. */
	bool live;
	struct po_live_alert_note *live_alerts; /* in the arena */
	size_t live_alert_count;
};

/*
 * An analysis: the model's result, which po_model_finish() (analyzer/model) builds and
 * nothing changes afterwards, and its diagnosis (struct po_diagnosis), which the detectors
 * and the program write. The renderers read both and write neither.
 */
struct po_analysis {
	struct po_arena *arena; /* owned: every string below */

	/* run */
	const char *framework; /* NULL when no run_begin */
	enum po_run_ending ending;
	const char *ending_detail; /* the program's words (exception type, signal), or NULL */
	int32_t cpu_count;	   /* online CPUs of the traced machine; -1 */
	struct po_kv *config;	   /* sorted by key */
	size_t config_count;
	struct po_run_settings settings; /* the settings of config the analysis understands */

	struct po_quality quality;
	struct po_machine_load machine; /* what the machine did beside the recording */
	struct po_self_cost self_cost;	/* what the measurement cost */
	struct po_discard_window *discard_windows;
	struct po_warning *warnings;
	size_t warning_count;

	struct po_pipeline_stats pipeline;	   /* the pipeline graph's numbers (finish.c) */
	struct po_missing_window *missing_windows; /* in the order they were noted */
	size_t missing_window_count;
	struct po_excluded_process *excluded_processes; /* in the order they appeared */
	size_t excluded_process_count;
	struct po_process *processes; /* sorted by pid */
	size_t process_count;
	struct po_thread *threads; /* sorted by pid, tid */
	size_t thread_count;
	int32_t main_pid; /* -1 */

	/*
	 * owned: the steps in trace order, mostly in a temporary file (step_store.h); read
	 * them with po_analysis_step(), never by pointer.
	 */
	struct po_step_store *step_store;
	size_t step_count;
	/*
	 * The steps the statistics cover (step_stats, pipeline, the detectors): indices
	 * [step_first, step_end), those that ended in the model config's steps range (a live
	 * window, --steps-in); [0, step_count) by default. Found by a binary search, so that a
	 * window of a long run reads only its own steps.
	 */
	size_t step_first, step_end;
	/* Steps before the first whose epoch differs from its predecessor's; SIZE_MAX: none */
	size_t first_epoch_steps;
	struct po_step_stats step_stats;

	struct po_worker *workers; /* sorted by worker_id, then pid */
	size_t worker_count;	   /* every worker process of the run, alive or not */
	/*
	 * Worker lifetimes (first to last event, worker_end included): the most alive at once,
	 * which is what uses cores and memory together, and how many times a set of workers was
	 * started after none was alive (one per epoch with non-persistent DataLoader workers).
	 */
	int64_t concurrent_workers;
	int64_t worker_generations;
	int64_t worker_alive_ns;	   /* union of the workers' lifetimes */
	struct po_label_stat *label_stats; /* sorted by total_ns, descending */
	size_t label_stat_count;
	/* function samples per (role, stage), by role then stage (-1 last); in the arena */
	struct po_hotspot_group *hotspot_groups;
	size_t hotspot_group_count;
	/* One flame graph per role with samples, in role order (in the arena). */
	struct po_flame *flames;
	size_t flame_count;
	int64_t stack_samples; /* every stack sample of the analysed processes */
	/*
	 * The garbage collections the runtime reported (the Python module: generations 1 and
	 * 2, or every one with PROFOPT_GC=all), per role: how many, and the objects they freed
	 * and found uncollectable. Zero where none was reported.
	 */
	struct po_gc_counts {
		int64_t collections;
		int64_t collected;
		int64_t uncollectable;
	} gc[PO_ROLE_COUNT];
	/* The samples count wall time, not CPU time (run config stacks_clock=wall). */
	bool stacks_wall;

	struct po_gpu_device *gpus; /* sorted by device */
	size_t gpu_count;
	struct po_gpu_stream *streams; /* sorted by device, stream */
	struct po_gpu_kernel *kernels; /* the PO_TOP_KERNELS longest, by total time */
	size_t kernel_count;
	size_t stream_count;
	struct po_gpu_gap *gaps; /* grouped by device, each group by begin */
	size_t gap_count;

	struct po_memory memory;
	struct po_mem_site *mem_sites; /* sorted by live_bytes, descending */
	size_t mem_site_count;

	struct po_step_detail *details; /* sorted by step_index */
	size_t detail_count;

	/*
	 * The training loop when the events ended (for a live snapshot: now): whether a step
	 * was open, and what its thread was doing since when, e.g. waiting for data since the
	 * batch that never came. step_open false between steps and after a clean end.
	 */
	struct {
		bool step_open;
		enum po_category category;
		int64_t since_ns;
	} loop_at_end;

	/* The ranks of a distributed job (distributed.h), in the arena; NULL without any. */
	struct po_distributed *distributed;

	struct po_diagnosis diagnosis; /* po_detect_run's, and the program's */
};

/*
 * Fills analysis->pipeline from its workers and steps. po_model_finish() calls it; code
 * that builds an analysis by hand (the renderers' test fixtures) calls it after setting
 * the workers and the steps.
 */
void po_analysis_build_pipeline(struct po_analysis *analysis);

void po_analysis_destroy(struct po_analysis *analysis);

/*
 * A copy of the step at index (< step_count). Steps live mostly on disk, so no pointer to
 * one is handed out. A read that fails (the temporary file, see step_store.h) gives a zeroed
 * step and is recorded: whoever read steps calls po_analysis_steps_check() before it
 * reports success.
 */
struct po_step po_analysis_step(const struct po_analysis *analysis, size_t index);
/* PO_STATUS_OK, or the first failure of the steps' temporary file with its cause in err. */
enum po_status po_analysis_steps_check(const struct po_analysis *analysis,
				       struct po_error *err) PO_NODISCARD;

/* Appends a trace-quality warning; code and text are copied into the analysis arena. */
enum po_status po_analysis_add_warning(struct po_analysis *analysis, const char *code,
				       const char *text);
/* The same for the detectors' own warnings (diagnosis->warnings), into arena. */
enum po_status po_diagnosis_add_warning(struct po_diagnosis *diagnosis, struct po_arena *arena,
					const char *code, const char *text);
/*
 * Every warning of an analysis, the model's then the diagnosis's: what the reports list.
 * po_analysis_warning(analysis, i) for i < po_analysis_warning_count(analysis).
 */
size_t po_analysis_warning_count(const struct po_analysis *analysis);
const struct po_warning *po_analysis_warning(const struct po_analysis *analysis, size_t i);

#endif /* PO_RESULT_H */
