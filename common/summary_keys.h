/*
 * summary_keys.h: the names of summary.json that its writer (render/json/summary_json.c)
 * and its reader (a --baseline summary.json, analyzer/compare/digest.c) both use, so that
 * a key renamed on one side is renamed on the other, or the build fails. The whole schema
 * is docs/summary-schema.md.
 */
#ifndef PO_SUMMARY_KEYS_H
#define PO_SUMMARY_KEYS_H

/* The schema string written as "schema"; a reader refuses other schemas. */
#define PO_SUMMARY_SCHEMA "profopt.summary/1"
/* A host's ranks as a mergeable summary (--partial) and the merged job's (--merge). */
#define PO_PARTIAL_SCHEMA "profopt.partial/1"
#define PO_MERGED_SCHEMA "profopt.merged/1"

/* Top level. */
#define PO_SK_SCHEMA "schema"
#define PO_SK_VERDICT "verdict"
#define PO_SK_STEPS "steps"		/* step statistics */
#define PO_SK_STEP_SERIES "step_series" /* one object per step */
#define PO_SK_FINDINGS "findings"
#define PO_SK_WORKERS "workers"
#define PO_SK_STEADY "steady"
#define PO_SK_MACHINE "machine" /* other programs' load */
#define PO_SK_PROCESSES "processes"

/* In "steps". */
#define PO_SK_STEPS_PER_S "steps_per_s"
#define PO_SK_SAMPLES_PER_S "samples_per_s"

/* In each "step_series" item. */
#define PO_SK_WALL_MS "wall_ms"
#define PO_SK_CATEGORIES_MS "categories_ms" /* keyed by po_category_name() */
#define PO_SK_GPU_BUSY_MS "gpu_busy_ms"
#define PO_SK_HOST_LIVE_BYTES "host_live_bytes"
#define PO_SK_RSS_BYTES "rss_bytes"
#define PO_SK_FLAGS "flags"
#define PO_SK_FLAG_LOSSY "lossy" /* a value of "flags" */

/* In each "findings" item. */
#define PO_SK_ID "id"
#define PO_SK_SEVERITY "severity"

/* In each "workers" item. */
#define PO_SK_BUSY_PCT "busy_pct"

/* In "machine". */
#define PO_SK_CPU_COUNT "cpu_count"
#define PO_SK_OTHERS_CORES "others_cores"

/* In each "processes" item. */
#define PO_SK_CPU_MS "cpu_ms"
#define PO_SK_RUNQ_WAIT_MS "runq_wait_ms"

/* In "steady". */
#define PO_SK_GPU_BUSY_PCT "gpu_busy_pct"
#define PO_SK_WORKERS_BUSY_PCT "workers_busy_pct"

#endif /* PO_SUMMARY_KEYS_H */
