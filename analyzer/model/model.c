/*
 * model.c: the model's entry points, and the bookkeeping of processes, threads, the run,
 * counters and trace quality.
 *
 * Semantics (docs/model.md says the same for users):
 * - Events come in time order across processes. Nothing is kept per event: open spans per
 *   thread, one compact struct po_step per step, live allocations and bounded rings.
 * - The training thread is the first thread that emits step_begin; its process is the main
 *   process. Steps emitted by other threads are counted (a warning) but not modelled.
 *   Roles: main; worker = worker_begin seen, or loader-stage spans and no steps; else other.
 * - Breakdown: on the training thread, at every change of the set of open stage spans and
 *   GPU syncs while a step is open, the time since the previous change goes to the open
 *   category first in PO_CATEGORIES (OTHER when none is open), so a step's category_ns sum
 *   exactly to end_ns - begin_ns. Spans of other threads count for label statistics only.
 * - Span matching: per thread a stack; an end matches the innermost open span of its stage
 *   (or the innermost sync), popping mismatched spans above it (unmatched begins); an end
 *   with nothing to match is an unmatched end; spans open at the end are unmatched begins.
 * - Batches: loader-stage spans off the training thread build per-batch records (bounded,
 *   oldest evicted) that the training thread's data_wait end with the same batch consumes.
 * - GPU: per device, the union of activity over streams through a bounded reorder buffer
 *   sorted by begin; busy, idle and gaps within the analysis window (first step begin to
 *   last step end, else the activity span); each gap's cause is the category the training
 *   thread spent most of the gap in, from a bounded ring of its recent segments.
 * - Memory: live allocations keyed by (pid, device, address) for profopt and libc events,
 *   folded into allocation sites; per-step live bytes at each step end.
 * - Quality: discard windows flag the steps they overlap as lossy; time inversions per
 *   thread; missing contexts and unmatched spans produce warnings.
 * - Timelines: the spans of recently completed work sit in a bounded ring; a step's detail
 *   is decided PO_FINALIZE_LAG steps after its end (slowest, neighbours, median candidates,
 *   longest GPU gaps, requested range).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "binmap.h"
#include "model_internal.h"

#define NS_PER_MS 1000000LL

void po_model_config_init(struct po_model_config *config)
{
	*config = (struct po_model_config){
	    .min_gap_ns = 1 * NS_PER_MS,
	    .max_gaps = 10000,
	    .max_labels = 64,
	    .max_sites = 4096,
	    .detail_span_cap = 20000,
	    .slowest_steps_kept = 3,
	    .timeline_first_step = -1,
	    .timeline_last_step = -1,
	    .command_pid = -1,
	    .command_exit = -1,
	    .recorder_cpu_ns = -1,
	    .steps_after_ns = INT64_MIN,
	    .steps_until_ns = INT64_MAX,
	};
}

static enum po_status alloc_rings(struct po_model *model)
{
	const struct po_detail_config detail = {
	    .detail_span_cap = model->config.detail_span_cap,
	    .slowest_steps_kept = model->config.slowest_steps_kept,
	    .timeline_first_step = model->config.timeline_first_step,
	    .timeline_last_step = model->config.timeline_last_step};

	model->windows = calloc(PO_WINDOW_CAP, sizeof(*model->windows));
	if (!model->windows)
		return PO_STATUS_NOMEM;
	if (step_tracker_init(&model->loop) != PO_STATUS_OK)
		return PO_STATUS_NOMEM;
	return detail_tracker_init(&model->timeline, &detail, &model->loop);
}

static enum po_status init_strings(struct po_model *model)
{
	model->arena = po_arena_create();
	if (!model->arena)
		return PO_STATUS_NOMEM;
	model->strings = po_strtab_create(model->arena);
	if (!model->strings)
		return PO_STATUS_NOMEM;
	model->fold_label = po_strtab_intern(model->strings, "(other labels)", 14);
	model->fold_site_label = po_strtab_intern(model->strings, "(other sites)", 13);
	model->fold_name = po_strtab_intern(model->strings, "(other names)", 13);
	if (!model->fold_label || !model->fold_site_label || !model->fold_name)
		return PO_STATUS_NOMEM;
	memory_tracker_init(&model->memory, model->config.max_sites, model->fold_site_label,
			    model->strings);
	label_tracker_init(&model->labels, model->config.max_labels, model->fold_label,
			   model->strings);
	process_tracker_init(&model->procs, model->strings, &model->memory);
	rank_tracker_init(&model->ranks, &model->config, model->strings, &model->procs);
	return hotspot_tracker_init(&model->hotspots, model->strings, model->config.native_namer);
}

static void init_state(struct po_model *model)
{
	model->cpu_count = -1;
	model->quality.first_ns = -1;
	model->quality.last_ns = -1;
}

enum po_status po_model_create(const struct po_model_config *config, struct po_model **out,
			       struct po_error *err)
{
	struct po_model *model = calloc(1, sizeof(*model));
	enum po_status status;

	*out = NULL;
	if (!model) {
		po_error_set(err, "Failed to allocate the model");
		return PO_STATUS_NOMEM;
	}
	model->config = *config;
	init_state(model);
	model_gpu_init(model);
	status = init_strings(model);
	if (status == PO_STATUS_OK)
		status = alloc_rings(model);
	if (status != PO_STATUS_OK) {
		po_model_destroy(model);
		po_error_set(err, "Failed to allocate the model's buffers");
		return status;
	}
	*out = model;
	return PO_STATUS_OK;
}

void po_model_destroy(struct po_model *model)
{
	if (!model)
		return;
	process_tracker_fini(&model->procs);
	po_map_free(&model->membership);
	free(model->excluded);
	free(model->missing);
	free(model->given_warnings);
	po_map_free(&model->names);
	po_map_free(&model->traces);
	memory_tracker_fini(&model->memory);
	free(model->run_config);
	free(model->windows);
	step_tracker_fini(&model->loop);
	label_tracker_fini(&model->labels);
	hotspot_tracker_fini(&model->hotspots);
	model_gpu_fini(model);
	detail_tracker_fini(&model->timeline);
	rank_tracker_fini(&model->ranks);
	po_strtab_destroy(model->strings);
	po_arena_destroy(model->arena); /* NULL once handed to the analysis */
	free(model);
}

/*
 * Interns text unless `cap` distinct strings of this name space were interned already, in
 * which case it returns `fold`. Strings are told apart by a 64-bit hash, checked before
 * interning so that folded strings cost no memory.
 */
const char *model_intern_capped(struct po_model *model, uint64_t name_space, struct po_str text,
				size_t *count, size_t cap, const char *fold)
{
	uint64_t hash = po_hash_bytes(text.ptr, text.len);
	struct po_map_entry *entry = po_map_find(&model->names, name_space, hash);
	const char *interned;

	if (entry)
		return (const char *)(uintptr_t)entry->value;
	if (*count >= cap)
		return fold;
	interned = po_strtab_intern(model->strings, text.len ? text.ptr : "", text.len);
	if (!interned)
		return NULL;
	entry = po_map_upsert(&model->names, name_space, hash, NULL);
	if (!entry)
		return NULL;
	entry->value = (uint64_t)(uintptr_t)interned;
	(*count)++;
	return interned;
}

static void note_quality(struct po_model *model, const struct po_event *event)
{
	struct po_quality *quality = &model->quality;

	if (event->kind == PO_EV_DISCARDED_EVENTS || event->kind == PO_EV_DISCARDED_PACKETS)
		return; /* not events: windows of lost ones */
	quality->events++;
	if (event->kind >= PO_EV_LIBC_MALLOC && event->kind <= PO_EV_LIBC_FREE)
		quality->libc_events++;
	else if (event->kind < PO_EV_LIBC_MALLOC)
		quality->profopt_events++;
	if (quality->first_ns < 0 || event->time_ns < quality->first_ns)
		quality->first_ns = event->time_ns;
	if (event->time_ns > quality->last_ns)
		quality->last_ns = event->time_ns;
	if (event->pid < 0)
		quality->missing_vpid = true;
	if (event->tid < 0)
		quality->missing_vtid = true;
	if (!event->procname.len)
		quality->missing_procname = true;
}

/* Flags the steps overlapping [begin_ns, end_ns] as lossy. */
static void flag_lossy(struct po_model *model, int64_t begin_ns, int64_t end_ns)
{
	for (size_t i = model->loop.step_count; i-- > 0;) {
		const struct po_step *step = po_step_store_borrow(model->loop.steps, i);

		if (step->end_ns < begin_ns)
			break;
		if (step->begin_ns <= end_ns && !(step->flags & PO_STEP_LOSSY)) {
			po_step_store_edit(model->loop.steps, i)->flags |= PO_STEP_LOSSY;
			model->quality.lossy_steps++;
		}
	}
}

static void on_discard(struct po_model *model, const struct po_event *event, int64_t previous_ns)
{
	struct po_quality *quality = &model->quality;
	bool packets = event->kind == PO_EV_DISCARDED_PACKETS;
	int64_t begin_ns = event->u.discarded.begin_ns;

	if (event->u.discarded.count == PO_COUNT_UNKNOWN || event->u.discarded.count < 0)
		quality->unknown_discards++;
	else if (packets)
		quality->discarded_packets =
		    po_add_sat(quality->discarded_packets, event->u.discarded.count);
	else
		quality->discarded_events =
		    po_add_sat(quality->discarded_events, event->u.discarded.count);
	if (quality->window_count < PO_WINDOW_CAP)
		model->windows[quality->window_count++] = (struct po_discard_window){
		    .kind = packets ? PO_DISCARD_PACKETS : PO_DISCARD_EVENTS,
		    .trace_id = event->trace_id,
		    .pid = event->pid,
		    .begin_ns = begin_ns,
		    .end_ns = event->time_ns,
		    .count = event->u.discarded.count};
	else
		quality->windows_not_kept++;
	if (begin_ns < 0)
		begin_ns = previous_ns >= 0 ? previous_ns : INT64_MIN;
	/*
	 * A window with no end time (a tracer that stamps neither end) lies somewhere up to
	 * now, when the message arrives: every step from its start so far is suspect.
	 */
	flag_lossy(model, begin_ns, event->time_ns >= 0 ? event->time_ns : INT64_MAX);
}

#define MISSING_KEPT 64

enum po_status po_model_note_missing(struct po_model *model, enum po_missing_kind kind,
				     const char *path, int64_t begin_ns, int64_t end_ns)
{
	struct po_missing_window *window;

	if (begin_ns < 0 || end_ns < begin_ns)
		return PO_STATUS_OK;
	model->quality.missing_windows++;
	model->quality.partial = true;
	flag_lossy(model, begin_ns, end_ns);
	if (model->missing_count >= MISSING_KEPT)
		return PO_STATUS_OK;
	if (po_array_reserve((void **)&model->missing, &model->missing_capacity,
			     model->missing_count + 1, sizeof(*model->missing)) != PO_STATUS_OK)
		return PO_STATUS_NOMEM;
	window = &model->missing[model->missing_count++];
	*window = (struct po_missing_window){kind, NULL, begin_ns, end_ns};
	if (path && !(window->path = po_strtab_intern(model->strings, path, strlen(path))))
		return PO_STATUS_NOMEM;
	return PO_STATUS_OK;
}

/* The traces map's entries: trace id -> the time of the trace's last event, read and
 * written only through these two. */
static int64_t trace_last_ns(const struct po_map_entry *entry)
{
	return entry->aux1;
}

static void trace_set_last_ns(struct po_map_entry *entry, int64_t time_ns)
{
	entry->aux1 = time_ns;
}

/* Updates the trace's last event time; returns the previous one (-1 for a new trace). */
static enum po_status note_trace(struct po_model *model, const struct po_event *event,
				 int64_t *previous_ns)
{
	bool created = false;
	struct po_map_entry *entry = model->last_trace;

	/* Only this function inserts into traces, so the cached entry stays valid. */
	if (!entry || entry->a != event->trace_id || entry->b != 0)
		entry = po_map_upsert(&model->traces, event->trace_id, 0, &created);
	if (!entry)
		return PO_STATUS_NOMEM;
	model->last_trace = entry;
	*previous_ns = created ? -1 : trace_last_ns(entry);
	if (created)
		model->quality.trace_count++;
	if (created || event->time_ns > trace_last_ns(entry))
		trace_set_last_ns(entry, event->time_ns);
	return PO_STATUS_OK;
}

static enum po_status on_run_config(struct po_model *model, const struct po_event *event)
{
	const char *key = po_strtab_intern(model->strings, event->u.run_config.key.ptr,
					   event->u.run_config.key.len);
	const char *value = po_strtab_intern(model->strings, event->u.run_config.value.ptr,
					     event->u.run_config.value.len);
	size_t i;

	if (!key || !value)
		return PO_STATUS_NOMEM;
	for (i = 0; i < model->run_config_count; i++) {
		if (model->run_config[i].key == key) {
			model->run_config[i].value = value; /* the last value wins */
			return PO_STATUS_OK;
		}
	}
	if (i >= PO_CONFIG_CAP)
		return PO_STATUS_OK;
	if (po_array_reserve((void **)&model->run_config, &model->run_config_capacity, i + 1,
			     sizeof(struct po_kv)) != PO_STATUS_OK)
		return PO_STATUS_NOMEM;
	model->run_config[model->run_config_count++] = (struct po_kv){key, value};
	return PO_STATUS_OK;
}

/* What a refused sample of a counter was. */
static enum po_implausible implausible_counter(enum po_counter kind)
{
	switch (kind) {
	case PO_COUNTER_PROCESS_CPU:
		return PO_IMPLAUSIBLE_PROCESS_CPU;
	case PO_COUNTER_PROCESS_RUNQ_WAIT:
		return PO_IMPLAUSIBLE_RUNQ_WAIT;
	case PO_COUNTER_MACHINE_CPU:
		return PO_IMPLAUSIBLE_MACHINE_CPU;
	default:
		return PO_IMPLAUSIBLE_MEMORY_SIZE;
	}
}

/* A sample of a process (its memory, CPU time, run-queue wait) or of the loader's queue. */
static void on_counter(struct po_model *model, struct process *process,
		       const struct po_event *event)
{
	if (event->u.counter.kind == PO_COUNTER_GPU_RECORDS_DROPPED) {
		if (event->u.counter.value < 0)
			model_implausible(model, PO_IMPLAUSIBLE_COUNT_VALUE, 1);
		else
			model->quality.gpu_records_dropped =
			    po_add_sat(model->quality.gpu_records_dropped, event->u.counter.value);
		return; /* a loss, not a sample to draw */
	}
	if (event->u.counter.kind == PO_COUNTER_GC_COLLECTED ||
	    event->u.counter.kind == PO_COUNTER_GC_UNCOLLECTABLE) {
		bool collected = event->u.counter.kind == PO_COUNTER_GC_COLLECTED;

		if (event->u.counter.value < 0) {
			model_implausible(model, PO_IMPLAUSIBLE_COUNT_VALUE, 1);
			return;
		}
		process->gc_collections += collected;
		if (collected)
			process->gc_collected =
			    po_add_sat(process->gc_collected, event->u.counter.value);
		else
			process->gc_uncollectable =
			    po_add_sat(process->gc_uncollectable, event->u.counter.value);
		return; /* counts of collections, not a sample to draw */
	}
	if (event->u.counter.kind == PO_COUNTER_QUEUE_DEPTH) {
		model->loop.latest_queue_depth = event->u.counter.value;
	} else if (!process_tracker_counter(&model->procs, process, event, model->cpu_count)) {
		model_implausible(model, implausible_counter(event->u.counter.kind), 1);
		return;
	}
	detail_tracker_push_counter(&model->timeline,
				    &(struct po_counter_sample){.pid = event->pid,
								.kind = event->u.counter.kind,
								.device = event->u.counter.device,
								.time_ns = event->time_ns,
								.value = event->u.counter.value});
}

static enum po_status on_run_begin(struct po_model *model, const struct po_event *event)
{
	model->framework = po_strtab_intern(model->strings, event->u.run_begin.framework.ptr,
					    event->u.run_begin.framework.len);
	model->cpu_count = event->u.run_begin.cpu_count;
	model->run_begun = true;
	return model->framework ? PO_STATUS_OK : PO_STATUS_NOMEM;
}

/* The flat dispatch of events that belong to a process and thread. */

#define NAME_SPACE_MEM_LABEL 2

/*
 * An allocation event for the memory tracker, with what the model knows beyond it: the
 * thread's process and open stage, the current step, the label interned (and capped).
 */
static enum po_status memory_event(struct po_model *model, struct thread *thread,
				   const struct po_event *event)
{
	struct po_alloc_context context = {.pid = thread->pid,
					   .stage = spans_innermost_stage(thread),
					   .step_number = model->loop.current_step_number};
	int64_t unmatched = model->memory.unmatched_profopt_frees;
	int64_t implausible = model->memory.implausible_sizes;
	enum po_status status;

	if (event->kind == PO_EV_MEM_ALLOC) {
		context.label = model_intern_capped(model, NAME_SPACE_MEM_LABEL, event->u.mem.label,
						    &model->mem_label_count, PO_NAME_CAP,
						    model->fold_site_label);
		if (!context.label)
			return PO_STATUS_NOMEM;
	}
	status = memory_tracker_consume(&model->memory, event, &context);
	model->quality.unmatched_mem_frees += model->memory.unmatched_profopt_frees - unmatched;
	model_implausible(model, PO_IMPLAUSIBLE_MEMORY_SIZE,
			  model->memory.implausible_sizes - implausible);
	return status;
}

/*
 * A stack sample for the hotspot tracker, with the innermost stage span open on the sampled
 * thread: the emitting one (a CPU-time sample, taken by the thread's own signal handler),
 * or another of its process (a wall-time sample, taken by a sampler thread); a thread
 * never seen has no span open.
 */
static enum po_status stack_sample(struct po_model *model, const struct process *process,
				   const struct thread *thread, const struct po_event *event)
{
	bool native = event->kind == PO_EV_NATIVE_STACK;
	int32_t tid = native ? event->u.native_stack.tid : event->u.stack_sample.tid;
	int64_t implausible = model->hotspots.implausible_weights;
	const struct open_span *stage = NULL;
	struct po_sample_place place = {.pid = event->pid, .first_ns = process->first_ns};
	enum po_status status;

	if (tid >= 0 && tid != event->tid)
		thread = process_tracker_find_thread(&model->procs, event->pid, tid);
	for (size_t i = thread ? thread->depth : 0; i-- > 0 && !stage;)
		if (thread->stack[i].kind == OPEN_STAGE)
			stage = &thread->stack[i];
	place.stage = stage ? (int)stage->stage : -1;
	place.label = stage ? stage->label : NULL;
	if (native)
		status = hotspot_tracker_consume_native(&model->hotspots, &place, event,
							model->memory.binmap);
	else
		status = hotspot_tracker_consume_sample(&model->hotspots, &place, event);
	model_implausible(model, PO_IMPLAUSIBLE_SAMPLE_WEIGHT,
			  model->hotspots.implausible_weights - implausible);
	return status;
}

static enum po_status dispatch(struct po_model *model, struct process *process,
			       struct thread *thread, const struct po_event *event)
{
	switch (event->kind) {
	case PO_EV_RUN_BEGIN:
		return on_run_begin(model, event);
	case PO_EV_RUN_CONFIG:
		return on_run_config(model, event);
	case PO_EV_WORKER_BEGIN:
		process_tracker_worker_begin(process, event);
		return PO_STATUS_OK;
	case PO_EV_WORKER_END:
		process_tracker_worker_end(&model->procs, process);
		return PO_STATUS_OK;
	case PO_EV_PROCESS:
		process_tracker_announced(&model->procs, process, event);
		return PO_STATUS_OK;
	case PO_EV_SELF_COST:
		process_tracker_self_cost(process, event);
		return PO_STATUS_OK;
	case PO_EV_RUN_END:
		model->run_ended = true;
		return PO_STATUS_OK;
	case PO_EV_STEP_BEGIN:
		return spans_step_begin(model, thread, event);
	case PO_EV_STEP_END:
		return spans_step_end(model, thread, event);
	case PO_EV_STAGE_BEGIN:
		return spans_stage_begin(model, thread, event);
	case PO_EV_STAGE_END:
		return spans_stage_end(model, thread, event);
	case PO_EV_BATCH_READY:
		return spans_batch_ready(model, event);
	case PO_EV_COUNTER:
		on_counter(model, process, event);
		return model_gpu_memory(model, event);
	case PO_EV_GPU_ACTIVITY:
		return model_gpu_activity(model, event);
	case PO_EV_GPU_DEVICE:
		return model_gpu_device(model, event);
	case PO_EV_GPU_LAUNCH:
		return model_gpu_launch(model, thread, event);
	case PO_EV_GPU_SYNC_BEGIN:
	case PO_EV_GPU_SYNC_END:
		return spans_sync(model, thread, event);
	case PO_EV_CODE:
		return hotspot_tracker_consume_code(&model->hotspots, event->pid, event);
	case PO_EV_STACK_SAMPLE:
	case PO_EV_NATIVE_STACK:
		return stack_sample(model, process, thread, event);
	case PO_EV_MEM_ALLOC:
	case PO_EV_MEM_FREE:
	case PO_EV_LIBC_MALLOC:
	case PO_EV_LIBC_CALLOC:
	case PO_EV_LIBC_REALLOC:
	case PO_EV_LIBC_MEMALIGN:
	case PO_EV_LIBC_POSIX_MEMALIGN:
	case PO_EV_LIBC_FREE:
	case PO_EV_BIN_INFO:
	case PO_EV_BIN_BUILD_ID:
	case PO_EV_LIB_LOAD:
	case PO_EV_LIB_BUILD_ID:
	case PO_EV_LIB_UNLOAD:
	case PO_EV_DL_OPEN:
	case PO_EV_DL_MOPEN:
	case PO_EV_DL_BUILD_ID:
	case PO_EV_DL_CLOSE:
		return memory_event(model, thread, event);
	default:
		return PO_STATUS_OK; /* epochs: nothing to keep */
	}
}

/* Whether every time the event carries is in range (a window start may be -1: unknown). */
static bool event_times_valid(const struct po_event *event)
{
	if (!po_time_valid(event->time_ns))
		return false;
	switch (event->kind) {
	case PO_EV_GPU_ACTIVITY:
		return po_time_valid(event->u.gpu_activity.start_ns) &&
		       po_time_valid(event->u.gpu_activity.end_ns);
	case PO_EV_DISCARDED_EVENTS:
	case PO_EV_DISCARDED_PACKETS:
		return event->u.discarded.begin_ns == -1 ||
		       po_time_valid(event->u.discarded.begin_ns);
	default:
		return true;
	}
}

/*
 * A process of another rank than the one this model analyses: what it did before (its
 * announcement, the sampler's first samples before its rank event) stays here, but it is
 * no longer one of the live processes whose memory the steps sum.
 */
static void leave_to_rank(struct po_model *model, int32_t pid)
{
	struct process *process = process_tracker_find(&model->procs, pid);

	if (process)
		process_tracker_worker_end(&model->procs, process);
}

enum po_status po_model_consume(struct po_model *model, const struct po_event *event)
{
	struct process *process;
	struct thread *thread;
	int64_t previous_ns;
	enum po_status status;

	if ((unsigned)event->kind >= PO_EV_COUNT)
		return PO_STATUS_OK;
	if (!event_times_valid(event)) {
		model->quality.time_inversions++;
		return PO_STATUS_OK;
	}
	if (event->kind < PO_EV_DISCARDED_EVENTS && !model_admits(model, event))
		return model->deferred;
	if (!model->rank_lane && event->kind < PO_EV_DISCARDED_EVENTS) {
		bool to_this = true, leaves = false;

		status = rank_tracker_consume(&model->ranks, event, model->loop.step_count > 0,
					      &to_this, &leaves);
		if (status != PO_STATUS_OK)
			return status;
		if (leaves)
			leave_to_rank(model, event->pid);
		model->procs.elsewhere_cpu_ns = model->ranks.other_ranks_cpu_ns;
		if (!to_this)
			return model->deferred;
	}
	note_quality(model, event);
	status = note_trace(model, event, &previous_ns);
	if (status != PO_STATUS_OK)
		return status;
	if (event->kind == PO_EV_DISCARDED_EVENTS || event->kind == PO_EV_DISCARDED_PACKETS) {
		on_discard(model, event, previous_ns);
		return PO_STATUS_OK;
	}
	status = process_tracker_consume(&model->procs, event, &process, &thread);
	if (status != PO_STATUS_OK)
		return status;
	if (event->time_ns < thread->last_ns)
		model->quality.time_inversions++;
	else
		thread->last_ns = event->time_ns;
	status = dispatch(model, process, thread, event);
	return status != PO_STATUS_OK ? status : model->deferred;
}

/*
 * The step with the largest overlap with [begin_ns, end_ns), or, for an instant
 * (begin_ns == end_ns), the step containing it; -1 when none.
 */
int64_t model_step_at(const struct po_model *model, int64_t begin_ns, int64_t end_ns)
{
	size_t low = po_step_store_upper_bound(model->loop.steps, begin_ns);
	int64_t best = -1, best_ns = 0;

	for (size_t i = low ? low - 1 : 0; i < model->loop.step_count; i++) {
		const struct po_step *step = po_step_store_borrow(model->loop.steps, i);
		int64_t from = step->begin_ns > begin_ns ? step->begin_ns : begin_ns;
		int64_t to = step->end_ns < end_ns ? step->end_ns : end_ns;

		if (begin_ns == end_ns)
			return step->begin_ns <= begin_ns && begin_ns < step->end_ns ? (int64_t)i
										     : -1;
		if (step->begin_ns >= end_ns)
			break;
		if (to - from > best_ns) {
			best_ns = to - from;
			best = (int64_t)i;
		}
	}
	return best;
}

size_t po_model_bytes(const struct po_model *model)
{
	size_t bytes = sizeof(*model);

	bytes += process_tracker_bytes(&model->procs);
	bytes += step_tracker_bytes(&model->loop);
	bytes += label_tracker_bytes(&model->labels);
	bytes += hotspot_tracker_bytes(&model->hotspots);
	bytes += model->run_config_capacity * sizeof(struct po_kv);
	bytes += PO_WINDOW_CAP * sizeof(struct po_discard_window);
	bytes += po_map_bytes(&model->names) + po_map_bytes(&model->traces);
	bytes += memory_tracker_bytes(&model->memory);
	bytes += model_gpu_bytes(model) + detail_tracker_bytes(&model->timeline);
	bytes += rank_tracker_bytes(&model->ranks);
	if (model->arena)
		bytes += po_arena_bytes(model->arena);
	return bytes;
}

enum po_status po_model_finish(struct po_model *model, struct po_analysis **out,
			       struct po_error *err)
{
	struct po_analysis *analysis;
	enum po_status status, store_status;

	*out = NULL;
	if (model->finished) {
		po_error_set(err, "Failed to finish the model: it was finished already");
		return PO_STATUS_INTERNAL;
	}
	model->finished = true;
	if (model->quality.profopt_events == 0) {
		po_error_set(err, "no profopt events found in the trace");
		return PO_STATUS_INPUT;
	}
	analysis = calloc(1, sizeof(*analysis));
	if (!analysis) {
		po_error_set(err, "Failed to allocate the analysis");
		return PO_STATUS_NOMEM;
	}
	status = finish_build(model, analysis);
	if (status == PO_STATUS_OK)
		status = rank_tracker_build(&model->ranks, analysis);
	for (size_t i = 0; status == PO_STATUS_OK && i < model->given_warning_count; i++)
		status = po_analysis_add_warning(analysis, model->given_warnings[i].code,
						 model->given_warnings[i].text);
	if (status != PO_STATUS_OK)
		po_error_set(err, "Failed to build the analysis: %s",
			     po_status_description(status));
	store_status = po_step_store_check(model->loop.steps, err); /* the root cause, if any */
	if (store_status != PO_STATUS_OK)
		status = store_status;
	if (status != PO_STATUS_OK) {
		po_analysis_destroy(analysis);
		return status;
	}
	*out = analysis;
	return PO_STATUS_OK;
}

enum po_status po_model_add_warning(struct po_model *model, const char *code, const char *text)
{
	struct po_warning *grown =
	    realloc(model->given_warnings, (model->given_warning_count + 1) * sizeof(*grown));
	const char *code_copy, *text_copy;

	if (!grown)
		return PO_STATUS_NOMEM;
	model->given_warnings = grown;
	code_copy = po_arena_strdup(model->arena, code);
	text_copy = po_arena_strdup(model->arena, text);
	if (!code_copy || !text_copy)
		return PO_STATUS_NOMEM;
	grown[model->given_warning_count++] = (struct po_warning){code_copy, text_copy};
	return PO_STATUS_OK;
}

void po_model_note_partial(struct po_model *model)
{
	model->quality.partial = true;
}

int64_t po_model_newest_ns(const struct po_model *model)
{
	int64_t newest = 0;

	for (size_t i = 0; i < model->procs.process_count; i++)
		if (model->procs.processes[i].last_ns > newest)
			newest = model->procs.processes[i].last_ns;
	return newest;
}

size_t po_model_steps_ended(const struct po_model *model)
{
	return model->loop.step_count - (model->loop.step_open ? 1 : 0);
}

struct po_step po_model_step(struct po_model *model, size_t index)
{
	return po_step_store_get(model->loop.steps, index);
}
