/*
 * evidence_keys.h: every key a finding's evidence can carry, once. The detectors write
 * evidence by these ids; summary.json spells them by their JSON names; the reports give each
 * id its words (render/report/evidence_names.c). A reader compares ids, never names.
 */
#ifndef PO_EVIDENCE_KEYS_H
#define PO_EVIDENCE_KEYS_H

/* It needs the step categories (PO_CATEGORIES): include model/result.h, which includes it. */
#ifndef PO_RESULT_H
#error "include model/result.h, not evidence_keys.h"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/*
 * What fills a key's JSON name beyond its fixed text. NUMBER keys hold "#", the number of
 * what they describe (site2_where: the second allocation site listed, from 1). CATEGORY
 * keys hold "@", the JSON name of a step category (data_wait_ms_per_step).
 */
enum po_evidence_param_kind {
	PO_EVIDENCE_PARAM_NONE,
	PO_EVIDENCE_PARAM_NUMBER,
	PO_EVIDENCE_PARAM_CATEGORY,
};

/*
 * The evidence keys. X(ID, parameter kind, JSON name); the name carries its unit
 * ("wait_share_pct", "gap_ms") and, for a parameterised key, "#" or "@" where the parameter
 * goes. Grouped by the finding that first writes them; many are shared. Every id must have
 * words in render/report/evidence_names.c and be written by some detector
 * (tests/unit/report/test_evidence_names.c checks both).
 */
#define PO_EVIDENCE_KEYS(X)                                                                        \
	/* Shared by several findings. */                                                          \
	X(STEPS, NONE, "steps")                                                                    \
	X(STEP_MS, NONE, "step_ms")                                                                \
	X(NUM_WORKERS, NONE, "num_workers")                                                        \
	X(CPU_COUNT, NONE, "cpu_count")                                                            \
	X(WORKER_BUSY_PCT, NONE, "worker_busy_pct")                                                \
	X(CPU_MS_PER_BATCH, NONE, "cpu_ms_per_batch")                                              \
	X(RECOMMENDED_NUM_WORKERS, NONE, "recommended_num_workers")                                \
	X(PREDICTED_STEP_MS, NONE, "predicted_step_ms")                                            \
	X(PREDICTED_SPEEDUP, NONE, "predicted_speedup")                                            \
	X(CAUSE, NONE, "cause")                                                                    \
	X(STAGE, NONE, "stage")                                                                    \
	X(LABEL, NONE, "label")                                                                    \
	X(THRESHOLD_MS, NONE, "threshold_ms")                                                      \
	X(LOST_SHARE_PCT, NONE, "lost_share_pct")                                                  \
	/* gpu-bound and launch-bound: the steady steps' GPU work (summary.json's gpu_work) */     \
	X(GPU_WORK_MS, NONE, "gpu_work_ms")                                                        \
	X(KERNELS_PER_STEP, NONE, "kernels_per_step")                                              \
	X(MEAN_KERNEL_US, NONE, "mean_kernel_us")                                                  \
	X(LARGEST_CLASS, NONE, "largest_class")                                                    \
	X(LARGEST_CLASS_PCT, NONE, "largest_class_pct")                                            \
	X(MATRIX_PCT, NONE, "matrix_pct")                                                          \
	X(MATRIX_PRECISION, NONE, "matrix_precision")                                              \
	X(LOW_PRECISION_MATRIX_PCT, NONE, "low_precision_matrix_pct")                              \
	X(LAYOUT_PCT, NONE, "layout_pct")                                                          \
	X(SMALL_KERNEL_PCT, NONE, "small_kernel_pct")                                              \
	X(HOST_US_PER_KERNEL, NONE, "host_us_per_kernel")                                          \
	X(LAUNCH_HOST_PCT, NONE, "launch_host_pct")                                                \
	/* input-bound */                                                                          \
	X(WAIT_SHARE_PCT, NONE, "wait_share_pct")                                                  \
	X(WAIT_MS_PER_STEP, NONE, "wait_ms_per_step")                                              \
	X(WAITING_STEPS_PCT, NONE, "waiting_steps_pct")                                            \
	X(CPU_DEMAND_CORES, NONE, "cpu_demand_cores")                                              \
	X(SERVICE_MS_PER_BATCH, NONE, "service_ms_per_batch")                                      \
	X(CPU_SOURCE, NONE, "cpu_source")                                                          \
	X(IO_WAIT_SHARE_PCT, NONE, "io_wait_share_pct")                                            \
	X(CORE_WAIT_MS_PER_BATCH, NONE, "core_wait_ms_per_batch")                                  \
	X(CORE_WAIT_SOURCE, NONE, "core_wait_source")                                              \
	X(FAIR_CORE_SHARE, NONE, "fair_core_share")                                                \
	X(LOADING, NONE, "loading")                                                                \
	X(MAIN_MS_PER_STEP, NONE, "main_ms_per_step")                                              \
	X(HANDOFF_MS, NONE, "handoff_ms")                                                          \
	X(H2D_MS_PER_STEP, NONE, "h2d_ms_per_step")                                                \
	X(MODEL_STEP_MS, NONE, "model_step_ms")                                                    \
	X(QUEUE_EMPTY_PCT, NONE, "queue_empty_pct")                                                \
	X(OTHERS_CORES, NONE, "others_cores")                                                      \
	X(AVAILABLE_CORES, NONE, "available_cores")                                                \
	X(HOTSPOT_FUNCTION, NONE, "hotspot_function")                                              \
	X(HOTSPOT_FILE, NONE, "hotspot_file")                                                      \
	X(HOTSPOT_LINE, NONE, "hotspot_line")                                                      \
	X(HOTSPOT_SELF_PCT, NONE, "hotspot_self_pct")                                              \
	/* cpu-contention */                                                                       \
	X(LOOP_MS_PER_STEP, NONE, "loop_ms_per_step")                                              \
	X(LOOP_CPU_MS_PER_STEP, NONE, "loop_cpu_ms_per_step")                                      \
	X(LOOP_CPU_SHARE_PCT, NONE, "loop_cpu_share_pct")                                          \
	X(LOST_MS_PER_STEP, NONE, "lost_ms_per_step")                                              \
	X(MAIN_CPU_CORES, NONE, "main_cpu_cores")                                                  \
	X(WORKER_CPU_CORES, NONE, "worker_cpu_cores")                                              \
	X(TRACED_CPU_CORES, NONE, "traced_cpu_cores")                                              \
	X(WORKER_CPU_CORES_EACH, NONE, "worker_cpu_cores_each")                                    \
	X(WORKER_CPU_SHARE_PCT, NONE, "worker_cpu_share_pct")                                      \
	X(DEMAND_CORES, NONE, "demand_cores")                                                      \
	X(NUM_WORKERS_STEP_MS, NONE, "num_workers_step_ms")                                        \
	X(LOOP_THREADS, NONE, "loop_threads")                                                      \
	X(MAIN_RUNQ_MS_PER_STEP, NONE, "main_runq_ms_per_step")                                    \
	X(RECOMMENDED_THREADS, NONE, "recommended_threads")                                        \
	X(THREADS_STEP_MS, NONE, "threads_step_ms")                                                \
	/* loader-handoff */                                                                       \
	X(HANDOFF_MS_PER_STEP, NONE, "handoff_ms_per_step")                                        \
	X(HANDOFF_SHARE_PCT, NONE, "handoff_share_pct")                                            \
	X(HANDOFF_CORE_WAIT_MS_PER_STEP, NONE, "handoff_core_wait_ms_per_step")                    \
	X(DATA_WAIT_MS_PER_STEP, NONE, "data_wait_ms_per_step")                                    \
	/* loader-imbalance */                                                                     \
	X(SLOW_WORKER_ID, NONE, "slow_worker_id")                                                  \
	X(SLOW_WORKER_PID, NONE, "slow_worker_pid")                                                \
	X(SLOW_MS_PER_BATCH, NONE, "slow_ms_per_batch")                                            \
	X(OTHERS_MS_PER_BATCH, NONE, "others_ms_per_batch")                                        \
	/* worker-restart */                                                                       \
	X(WORKER_GENERATIONS, NONE, "worker_generations")                                          \
	X(EPOCHS_RESTARTED, NONE, "epochs_restarted")                                              \
	X(RESTART_MS_PER_EPOCH, NONE, "restart_ms_per_epoch")                                      \
	X(LOST_MS, NONE, "lost_ms")                                                                \
	X(RUN_STEP_MS, NONE, "run_step_ms")                                                        \
	X(PREDICTED_RUN_STEP_MS, NONE, "predicted_run_step_ms")                                    \
	/* straggler */                                                                            \
	X(RANK, NONE, "rank")                                                                      \
	X(PATTERN, NONE, "pattern")                                                                \
	X(CAUSE_CATEGORY, NONE, "cause_category")                                                  \
	X(CAUSE_EXCESS_MS_PER_STEP, NONE, "cause_excess_ms_per_step")                              \
	X(LAST_PCT, NONE, "last_pct")                                                              \
	X(OTHERS_WAIT_MS_PER_STEP, NONE, "others_wait_ms_per_step")                                \
	X(LATENESS_MS_PER_STEP, NONE, "lateness_ms_per_step")                                      \
	X(JITTER_MS, NONE, "jitter_ms")                                                            \
	X(JOB_STEP_MS, NONE, "job_step_ms")                                                        \
	X(RANKS, NONE, "ranks")                                                                    \
	X(MATCHED_STEPS, NONE, "matched_steps")                                                    \
	/* host-memory-growth, gpu-memory-growth */                                                \
	X(SLOPE_BYTES_PER_STEP, NONE, "slope_bytes_per_step")                                      \
	X(R2, NONE, "r2")                                                                          \
	X(FIRST_STEP, NONE, "first_step")                                                          \
	X(LAST_STEP, NONE, "last_step")                                                            \
	X(SOURCE, NONE, "source")                                                                  \
	X(PROCESS_ROLE, NONE, "process_role")                                                      \
	X(PID, NONE, "pid")                                                                        \
	X(PYTHON_LINE, NONE, "python_line")                                                        \
	X(PYTHON_CREATED_LINE, NONE, "python_created_line")                                        \
	X(PYTHON_OBJECTS_KEPT, NONE, "python_objects_kept")                                        \
	X(LATE_GROWTH_PCT, NONE, "late_growth_pct")                                                \
	X(GROWTH_OVER_RUN_MIB, NONE, "growth_over_run_mib")                                        \
	X(HORIZON_RUNS, NONE, "horizon_runs")                                                      \
	X(HORIZON_GROWTH_MIB, NONE, "horizon_growth_mib")                                          \
	X(PEAK_MIB, NONE, "peak_mib")                                                              \
	X(PROJECTION_STEPS, NONE, "projection_steps")                                              \
	X(PROJECTED_GROWTH_MIB, NONE, "projected_growth_mib")                                      \
	X(SITE_PID, NONE, "site_pid")                                                              \
	X(SITE_ROLE, NONE, "site_role")                                                            \
	X(IP, NONE, "ip")                                                                          \
	X(SITE_LIVE_MIB, NONE, "site_live_mib")                                                    \
	X(SITE_LIVE_ALLOCATIONS, NONE, "site_live_allocations")                                    \
	/* worker-copy-on-access */                                                                \
	X(PRIVATE_GROWTH_BYTES, NONE, "private_growth_bytes")                                      \
	X(PRIVATE_GROWTH_PER_WORKER_MIB, NONE, "private_growth_per_worker_mib")                    \
	X(LARGEST_WORKER_GROWTH_MIB, NONE, "largest_worker_growth_mib")                            \
	X(UNSHARED_PCT, NONE, "unshared_pct")                                                      \
	X(WORKER_RSS_GROWTH_MIB, NONE, "worker_rss_growth_mib")                                    \
	X(MACHINE_MEMORY_MIB, NONE, "machine_memory_mib")                                          \
	X(MACHINE_PCT, NONE, "machine_pct")                                                        \
	X(JOB_PSS_MIB, NONE, "job_pss_mib")                                                        \
	X(JOB_MACHINE_PCT, NONE, "job_machine_pct")                                                \
	/* unfreed-allocations */                                                                  \
	X(LIVE_MIB, NONE, "live_mib")                                                              \
	X(LIVE_ALLOCATIONS, NONE, "live_allocations")                                              \
	X(SITES, NONE, "sites")                                                                    \
	X(SITE_N_WHERE, NUMBER, "site#_where")                                                     \
	X(SITE_N_LIVE_MIB, NUMBER, "site#_live_mib")                                               \
	X(SITE_N_DEVICE, NUMBER, "site#_device")                                                   \
	/* step-outliers */                                                                        \
	X(OUTLIERS, NONE, "outliers")                                                              \
	X(MEDIAN_MS, NONE, "median_ms")                                                            \
	X(EXCESS_MS_PER_OUTLIER, NONE, "excess_ms_per_outlier")                                    \
	X(EXCESS_SHARE_PCT, NONE, "excess_share_pct")                                              \
	X(PERIOD_STEPS, NONE, "period_steps")                                                      \
	X(CAUSE_EXCESS_MS_PER_OUTLIER, NONE, "cause_excess_ms_per_outlier")                        \
	X(GC_COLLECTIONS, NONE, "gc_collections")                                                  \
	X(GC_COLLECTED_PER_COLLECTION, NONE, "gc_collected_per_collection")                        \
	X(GC_UNCOLLECTABLE, NONE, "gc_uncollectable")                                              \
	/* level-shift */                                                                          \
	X(STEP, NONE, "step")                                                                      \
	X(EPOCH, NONE, "epoch")                                                                    \
	X(SINCE_S, NONE, "since_s")                                                                \
	X(BEFORE_MS, NONE, "before_ms")                                                            \
	X(AFTER_MS, NONE, "after_ms")                                                              \
	X(CHANGE_PCT, NONE, "change_pct")                                                          \
	X(STEPS_BEFORE, NONE, "steps_before")                                                      \
	X(STEPS_AFTER, NONE, "steps_after")                                                        \
	X(SEPARATION_PCT, NONE, "separation_pct")                                                  \
	X(CATEGORY, NONE, "category")                                                              \
	X(CATEGORY_BEFORE_MS, NONE, "category_before_ms")                                          \
	X(CATEGORY_AFTER_MS, NONE, "category_after_ms")                                            \
	/* trace-data-loss */                                                                      \
	X(DISCARDED_EVENTS, NONE, "discarded_events")                                              \
	X(DISCARDED_PACKETS, NONE, "discarded_packets")                                            \
	X(UNKNOWN_DISCARDS, NONE, "unknown_discards")                                              \
	X(DISCARDED_PCT, NONE, "discarded_pct")                                                    \
	X(UNMATCHED_SPANS, NONE, "unmatched_spans")                                                \
	X(GPU_RECORDS_DROPPED, NONE, "gpu_records_dropped")                                        \
	X(MISSING_WINDOWS, NONE, "missing_windows")                                                \
	X(LOSSY_STEPS, NONE, "lossy_steps")                                                        \
	X(LOSSY_STEPS_PCT, NONE, "lossy_steps_pct")                                                \
	/* gpu-idle */                                                                             \
	X(DEVICE, NONE, "device")                                                                  \
	X(IDLE_SHARE_PCT, NONE, "idle_share_pct")                                                  \
	X(IDLE_MS_PER_STEP, NONE, "idle_ms_per_step")                                              \
	X(GAPS, NONE, "gaps")                                                                      \
	X(GAP_MAX_MS, NONE, "gap_max_ms")                                                          \
	X(GPU_BUSY_PCT, NONE, "gpu_busy_pct")                                                      \
	X(CATEGORY_MS_PER_STEP, CATEGORY, "@_ms_per_step")

enum po_evidence_key {
#define PO_X(id, kind, json) PO_EVIDENCE_##id,
	PO_EVIDENCE_KEYS(PO_X)
#undef PO_X
	    PO_EVIDENCE_KEY_COUNT
};

/* Longest JSON name of a key with its parameter filled in, with its terminating zero. */
#define PO_EVIDENCE_KEY_MAX 64

/*
 * A key's parameter, by its kind: number for NUMBER keys (from 1), category for CATEGORY
 * keys; zero for a key without one.
 */
union po_evidence_param {
	unsigned number;
	enum po_category category;
};

/* The key's JSON name as declared, "#" or "@" left in place; "?" out of range. */
static inline const char *po_evidence_key_pattern(enum po_evidence_key key)
{
	static const char *const patterns[PO_EVIDENCE_KEY_COUNT] = {
#define PO_X(id, kind, json) json,
	    PO_EVIDENCE_KEYS(PO_X)
#undef PO_X
	};
	return (unsigned)key < PO_EVIDENCE_KEY_COUNT ? patterns[key] : "?";
}

/* The kind of parameter the key takes; NONE out of range. */
static inline enum po_evidence_param_kind po_evidence_key_param_kind(enum po_evidence_key key)
{
	static const enum po_evidence_param_kind kinds[PO_EVIDENCE_KEY_COUNT] = {
#define PO_X(id, kind, json) PO_EVIDENCE_PARAM_##kind,
	    PO_EVIDENCE_KEYS(PO_X)
#undef PO_X
	};
	return (unsigned)key < PO_EVIDENCE_KEY_COUNT ? kinds[key] : PO_EVIDENCE_PARAM_NONE;
}

/* A category's JSON name for "@"; "?" out of range. Inline: the renderers link no model. */
static inline const char *po_evidence_category_json(enum po_category category)
{
	static const char *const names[PO_CATEGORY_COUNT] = {
#define PO_X(name, json) json,
	    PO_CATEGORIES(PO_X)
#undef PO_X
	};
	return (unsigned)category < PO_CATEGORY_COUNT ? names[category] : "?";
}

/*
 * The key's JSON name with its parameter filled in, as summary.json spells it. A key
 * without a parameter returns its static name and leaves buffer alone; a parameterised one
 * is written into buffer (size bytes, PO_EVIDENCE_KEY_MAX is enough), which is returned.
 */
static inline const char *po_evidence_key_name(enum po_evidence_key key,
					       union po_evidence_param param, char *buffer,
					       size_t size)
{
	const char *pattern = po_evidence_key_pattern(key);
	const char *hole = pattern + strcspn(pattern, "#@");

	if (!*hole || size == 0)
		return pattern;
	if (*hole == '#')
		snprintf(buffer, size, "%.*s%u%s", (int)(hole - pattern), pattern, param.number,
			 hole + 1);
	else
		snprintf(buffer, size, "%.*s%s%s", (int)(hole - pattern), pattern,
			 po_evidence_category_json(param.category), hole + 1);
	return buffer;
}

/* Whether two pieces of evidence are about the same key and parameter. */
static inline bool po_evidence_same_key(enum po_evidence_key key_a, union po_evidence_param a,
					enum po_evidence_key key_b, union po_evidence_param b)
{
	if (key_a != key_b)
		return false;
	switch (po_evidence_key_param_kind(key_a)) {
	case PO_EVIDENCE_PARAM_NUMBER:
		return a.number == b.number;
	case PO_EVIDENCE_PARAM_CATEGORY:
		return a.category == b.category;
	default:
		return true;
	}
}

/*
 * The key and parameter a JSON name spells, for code that reads summary.json; false when
 * no key spells it. A name that a key without parameter spells is that key, even where a
 * parameterised key spells it too (gpu-idle's data_wait_ms_per_step, a CATEGORY instance,
 * reads back as the loader-handoff key of that name). Defined in names.c (the model).
 */
bool po_evidence_key_lookup(const char *name, enum po_evidence_key *key,
			    union po_evidence_param *param);

#endif /* PO_EVIDENCE_KEYS_H */
