/*
 * model.h: rebuilds steps, workers, GPU activity, memory and trace quality from typed
 * events (event.h) and produces the analysis result (result.h).
 *
 * Events must come in time order across all processes, as babeltrace2's muxer gives them.
 * Memory stays bounded on long traces: nothing is stored per event, only compact per-step
 * records, open spans, live allocations, and the spans of a bounded set of steps kept for
 * the timelines.
 */
#ifndef PO_MODEL_H
#define PO_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/status.h"
#include "model/event.h"
#include "model/result.h"

#define PO_RECORDING_ID_MAX 64

/*
 * Names native code for the function samples (docs/sampling.md): the function holding the
 * instruction at offset in the object at path (build_id: lower-case hex, NULL: unchecked),
 * interrupted (the instruction a signal interrupted) or a return address (the call before
 * it), with the file and line where the function begins (NULL, -1 when not known). The
 * strings stay valid until the next call. out->function NULL: not known; the object then
 * stands for it. Fails only when out of memory.
 */
struct po_native_name {
	const char *function;
	const char *file;
	int32_t line;
};

/*
 * An allocation site's call (result.h, po_mem_site), named: the function holding the call
 * whose return address lies at offset, the call's source file and line (NULL, -1 without
 * line information), and when the function is not known, why (note: static text, or NULL
 * when the object has no symbol there). Strings as for po_native_name.
 */
struct po_native_call {
	const char *function;
	const char *file;
	int64_t line;
	const char *note;
};

struct po_native_namer {
	enum po_status (*name)(void *ctx, const char *path, const char *build_id, uint64_t offset,
			       bool interrupted, struct po_native_name *out);
	/* Allocation sites, when finish builds them; NULL: sites keep their object only. */
	enum po_status (*name_call)(void *ctx, const char *path, const char *build_id,
				    uint64_t offset, struct po_native_call *out);
	void *ctx; /* weak: the caller's, alive until the model is finished */
};

/* One recording of a directory that holds several: see po_model_config.recordings. */
struct po_member_recording {
	char id[PO_RECORDING_ID_MAX + 1];
	int32_t command_pid; /* in the recording's own pid space; -1 */
};

struct po_model_config {
	int64_t min_gap_ns;	   /* GPU gaps shorter than this are not recorded */
	size_t max_gaps;	   /* gaps kept per device; more are counted only */
	size_t max_labels;	   /* distinct labels per (role, stage) before folding to "other" */
	size_t max_sites;	   /* distinct memory sites before folding */
	size_t detail_span_cap;	   /* spans kept per detailed step */
	size_t slowest_steps_kept; /* slowest steps whose timelines are kept */
	int64_t timeline_first_step; /* --timeline-steps A:B, step numbers; -1: none */
	int64_t timeline_last_step;
	/*
	 * The recording's id (profopt-recording.txt) and its command's pid: only processes
	 * of this recording are analysed. Empty: every process is (membership.c).
	 */
	char recording_id[PO_RECORDING_ID_MAX + 1];
	int32_t command_pid; /* -1 */
	int command_exit;    /* the command's exit status, 128+N for signal N; -1 when not known */
	/* The recorder's CPU time (profopt-record and its daemons, profopt-recording.txt); -1 */
	int64_t recorder_cpu_ns;
	/*
	 * Packets are missing from the trace (streams cut short, damaged packets --salvage
	 * left out), which may have held processes' announcements: a process whose
	 * announcement is not found is kept as the command's, not left out.
	 */
	bool keep_unannounced;
	/*
	 * A directory of several recordings (one per host): the k-th recording's id and
	 * command pid (its own pid space, event.h), whose processes alone are analysed of
	 * those with pids of that space; an empty id keeps every process of its space. NULL
	 * (count 0): recording_id and command_pid above apply. Weak: the caller's, alive
	 * until the model is finished.
	 */
	const struct po_member_recording *recordings;
	size_t recording_count;
	/*
	 * The steps the analysis's statistics cover: those that ended in (steps_after_ns,
	 * steps_until_ns], trace clock (result.h, po_analysis.step_first). Every step by
	 * default (INT64_MIN, INT64_MAX).
	 */
	int64_t steps_after_ns, steps_until_ns;
	/*
	 * Names native frames and allocation sites by function; name and name_call NULL (the
	 * default): by their object only.
	 */
	struct po_native_namer native_namer;
};

/* Fills the defaults (from detect/rules.h where a rule sets them). */
void po_model_config_init(struct po_model_config *config);

struct po_model;

enum po_status po_model_create(const struct po_model_config *config, struct po_model **out,
			       struct po_error *err) PO_NODISCARD;
void po_model_destroy(struct po_model *model);

/* The hot path. Fails only on allocation failure. */
enum po_status po_model_consume(struct po_model *model, const struct po_event *event) PO_NODISCARD;

/*
 * A trace-quality warning of the program that reads the trace (what the decoder dropped,
 * damaged or duplicate files), given before po_model_finish(): the result lists it after
 * the model's own warnings. code and text are copied. Fails only when out of memory.
 */
enum po_status po_model_add_warning(struct po_model *model, const char *code,
				    const char *text) PO_NODISCARD;
/* Marks the result partial: part of the trace was left out or damaged (--salvage). */
void po_model_note_partial(struct po_model *model);

/*
 * Ends the stream and builds the result (owned by the caller). The model can only be
 * destroyed afterwards. Fails with PO_STATUS_INPUT when no profopt event was seen.
 */
enum po_status po_model_finish(struct po_model *model, struct po_analysis **out,
			       struct po_error *err) PO_NODISCARD;

/*
 * A consistent result of everything consumed so far, without ending the stream: fn gets
 * the analysis that po_model_finish() would give now, its statistics over the steps that
 * ended after steps_after_ns (the config's steps range; INT64_MIN: all), in a forked copy
 * of the process (snapshot.c), and returns PO_STATUS_OK or a status with err set. Whatever
 * fn keeps must leave that process in a file or a pipe; the analysis is freed with the
 * copy. Waits for fn; the model is unchanged, and consuming goes on. Returns fn's status
 * and message, or PO_STATUS_INPUT when no profopt event was seen yet. What it costs grows
 * with the steps after steps_after_ns and with what the model holds, not with the steps
 * before.
 */
typedef enum po_status (*po_snapshot_fn)(struct po_analysis *analysis, void *context,
					 struct po_error *err);
enum po_status po_model_snapshot(struct po_model *model, int64_t steps_after_ns, po_snapshot_fn fn,
				 void *context, struct po_error *err) PO_NODISCARD;

/* The newest event of any process consumed so far (trace clock); 0 before any. */
int64_t po_model_newest_ns(const struct po_model *model);

/*
 * The training loop's steps that ended so far, and one of them by index (< that count),
 * as a finish would give them; a step still open is not among them. For a live view's
 * running figures, read once each as they end.
 */
size_t po_model_steps_ended(const struct po_model *model);
struct po_step po_model_step(struct po_model *model, size_t index);

/*
 * A window of time the trace is missing, found from its files after the events were
 * consumed (a stream cut short, a recording that ends before its command): the steps it
 * overlaps are flagged lossy and the result is partial. path: the stream, or NULL for the
 * whole recording (copied). Call before po_model_finish().
 */
enum po_status po_model_note_missing(struct po_model *model, enum po_missing_kind kind,
				     const char *path, int64_t begin_ns,
				     int64_t end_ns) PO_NODISCARD;

/* Processes left out so far as not the recorded command's (membership.c). */
int64_t po_model_excluded_processes(const struct po_model *model);

/* Memory the model holds now, for the benchmark's accounting. */
size_t po_model_bytes(const struct po_model *model);

#endif /* PO_MODEL_H */
