/* processes.c: the process tracker (processes.h). */
#include <stdlib.h>
#include <string.h>

#include "processes.h"
#include "saturate.h"

static void process_rejoins(struct po_process_tracker *t, struct process *process);

void process_tracker_init(struct po_process_tracker *t, struct po_strtab *strings,
			  struct po_memory_tracker *memory)
{
	*t = (struct po_process_tracker){
	    .rss_sum_bytes = -1, .machine_memory_bytes = -1, .strings = strings, .memory = memory};
}

void process_tracker_fini(struct po_process_tracker *t)
{
	for (size_t i = 0; i < t->thread_count; i++)
		free(t->threads[i].stack);
	free(t->threads);
	free(t->processes);
	po_map_free(&t->process_index);
	po_map_free(&t->thread_index);
}

size_t process_tracker_bytes(const struct po_process_tracker *t)
{
	size_t bytes = t->thread_capacity * sizeof(struct thread);

	for (size_t i = 0; i < t->thread_count; i++)
		bytes += t->threads[i].capacity * sizeof(struct open_span);
	bytes += t->process_capacity * sizeof(struct process);
	return bytes + po_map_bytes(&t->process_index) + po_map_bytes(&t->thread_index);
}

static struct process *process_get(struct po_process_tracker *t, int32_t pid)
{
	bool created;
	struct po_map_entry *entry = po_map_upsert(&t->process_index, (uint32_t)pid, 0, &created);
	struct process *process;

	if (!entry)
		return NULL;
	if (!created)
		return &t->processes[entry->value];
	if (po_array_reserve((void **)&t->processes, &t->process_capacity, t->process_count + 1,
			     sizeof(*process)) != PO_STATUS_OK) {
		po_map_remove(&t->process_index, entry);
		return NULL;
	}
	entry->value = t->process_count;
	process = &t->processes[t->process_count++];
	*process = (struct process){
	    .pid = pid,
	    .worker_id = -1,
	    .parent_pid = -1,
	    .first_ns = -1,
	    .last_ns = -1,
	    .rss_first_bytes = -1,
	    .rss_last_bytes = -1,
	    .rss_peak_bytes = -1,
	    .cpu_first_ns = -1,
	    .cpu_last_ns = -1,
	    .runq_first_ns = -1,
	    .runq_last_ns = -1,
	    .sets = PO_MEMORY_SETS_UNKNOWN,
	    .cpu_since_ns = -1,
	    .cpu_prev_ns = -1,
	    .runq_since_ns = -1,
	    .runq_prev_ns = -1,
	    .main_last_ns = -1,
	    .machine = {.first_at_ns = -1, .last_at_ns = -1, .first_ns = -1, .last_ns = -1}};
	for (int i = 0; i < PO_DEVICE_SLOTS; i++)
		process->gpu_used_bytes[i] = -1;
	for (int i = 0; i < PO_STAGE_COUNT; i++)
		process->stage_cpu_ns[i] = -1;
	for (int i = 0; i < PO_COST_SOURCE_COUNT; i++)
		process->self_cost_ns[i] = -1;
	return process;
}

static struct thread *thread_get(struct po_process_tracker *t, int32_t pid, int32_t tid,
				 size_t process)
{
	bool created;
	struct po_map_entry *entry =
	    po_map_upsert(&t->thread_index, (uint32_t)pid, (uint32_t)tid, &created);
	struct thread *thread;

	if (!entry)
		return NULL;
	if (!created)
		return &t->threads[entry->value];
	if (po_array_reserve((void **)&t->threads, &t->thread_capacity, t->thread_count + 1,
			     sizeof(*thread)) != PO_STATUS_OK) {
		po_map_remove(&t->thread_index, entry);
		return NULL;
	}
	entry->value = t->thread_count;
	thread = &t->threads[t->thread_count++];
	*thread = (struct thread){.pid = pid, .tid = tid, .process = process, .last_ns = INT64_MIN};
	return thread;
}

/* The process of the event, through the one-entry cache of the last event's thread. */
static struct process *process_of(struct po_process_tracker *t, const struct po_event *event)
{
	if (t->last_valid && t->last_pid == event->pid && t->last_tid == event->tid)
		return &t->processes[t->last_process];
	return process_get(t, event->pid);
}

static struct thread *thread_of(struct po_process_tracker *t, const struct po_event *event,
				size_t process)
{
	struct thread *thread;

	if (t->last_valid && t->last_pid == event->pid && t->last_tid == event->tid)
		return &t->threads[t->last_thread];
	thread = thread_get(t, event->pid, event->tid, process);
	if (thread) {
		t->last_valid = true;
		t->last_pid = event->pid;
		t->last_tid = event->tid;
		t->last_process = process;
		t->last_thread = (size_t)(thread - t->threads);
	}
	return thread;
}

/*
 * Whether event names its process anew. The procname context is the emitting thread's
 * name: a process is named by its main thread (tid = pid) as of its latest event, else by
 * the first thread seen. A launcher that execs the program (bash, then python3) keeps its
 * pid and renames its main thread; lttng-ust's own threads are "NAME-ust", after the name
 * the process had when they started (bash-ust under a bash launcher).
 */
static bool renamed(const struct process *process, const struct po_event *event)
{
	if (!process->name)
		return true;
	return event->tid == event->pid &&
	       (process->name_len != event->procname.len ||
		memcmp(process->name, event->procname.ptr, event->procname.len) != 0);
}

static enum po_status note_process(struct po_process_tracker *t, const struct po_event *event,
				   struct process **out)
{
	struct process *process = process_of(t, event);

	if (!process)
		return PO_STATUS_NOMEM;
	if (event->procname.len && renamed(process, event)) {
		process->name =
		    po_strtab_intern(t->strings, event->procname.ptr, event->procname.len);
		if (!process->name)
			return PO_STATUS_NOMEM;
		process->name_len = event->procname.len;
	}
	if (process->first_ns < 0)
		process->first_ns = event->time_ns;
	if (event->time_ns > process->last_ns)
		process->last_ns = event->time_ns;
	if (event->tid == event->pid && event->time_ns > process->main_last_ns)
		process->main_last_ns = event->time_ns;
	if (process->silent && !process->ended)
		process_rejoins(t, process);
	process->event_count++;
	*out = process;
	return PO_STATUS_OK;
}

int64_t process_tracker_rss_sum(const struct po_process_tracker *t)
{
	return t->rss_sum_bytes;
}

static void on_rss(struct po_process_tracker *t, struct process *process, int64_t value)
{
	int64_t old = process->rss_last_bytes;

	if (process->ended)
		return; /* a sample of the exit path: the process left the sum at worker_end */

	if (process->rss_first_bytes < 0)
		process->rss_first_bytes = value;
	process->rss_last_bytes = value;
	if (value > process->rss_peak_bytes)
		process->rss_peak_bytes = value;
	t->rss_sum_bytes = po_add_sat(
	    po_add_sat(t->rss_sum_bytes < 0 ? 0 : t->rss_sum_bytes, value), old < 0 ? 0 : -old);
	memory_tracker_rss_sum(t->memory, t->rss_sum_bytes);
}

static void on_gpu_counter(struct po_process_tracker *t, struct process *process, int32_t device,
			   int64_t value)
{
	int64_t old;

	if (device < 0 || device >= PO_DEVICE_SLOTS || process->ended)
		return;
	old = process->gpu_used_bytes[device];
	process->gpu_used_bytes[device] = value;
	memory_tracker_gpu_sample(t->memory, value, old);
}

/* Largest resident or device memory believed: 1 PiB. */
#define PO_MEMORY_LIMIT_BYTES (INT64_C(1) << 50)
/* Slack of a cumulative time counter over the time that passed (sampling jitter). */
#define PO_COUNTER_SLACK_NS 20000000LL
/* The longest clock tick /proc/stat counts in (USER_HZ is 100 on Linux). */
#define PO_MACHINE_TICK_NS 10000000LL
/* Busy time per core the kernel may account late, all at once (steal: see below). */
#define PO_MACHINE_LUMP_NS 1000000000LL

/*
 * A cumulative time counter (CPU time, run-queue wait) may only grow, and by at most the
 * time that passed times the threads that could accumulate it (the cores for CPU time, one
 * thread for the main thread's run-queue wait).
 */
static bool cumulative_plausible(int64_t value, int64_t time_ns, int64_t last_value,
				 int64_t last_time_ns, int64_t parallel)
{
	double allowed;

	if (value < 0)
		return false;
	if (last_value < 0 || last_time_ns < 0)
		return true;
	if (value < last_value || time_ns < last_time_ns)
		return false;
	allowed = (double)(time_ns - last_time_ns) * (double)parallel + PO_COUNTER_SLACK_NS;
	return (double)(value - last_value) <= allowed;
}

/*
 * The machine's busy time (/proc/stat) never goes down, and over its whole series it grows
 * by no more than the cores could be busy since the first sample, plus two ticks a core
 * (/proc/stat counts whole ticks) and a lump a core. Not bounded between two samples: on a
 * virtual machine the time the hypervisor took from a virtual CPU (steal, counted busy) is
 * accounted when that CPU next ticks, all at once, so it can land in a later interval than
 * the one it passed in. One CI run on a loaded virtual machine found one implausible value in
 * an undamaged recording under the bound between two samples (which kind was not yet said).
 */
static bool machine_plausible(const struct machine_series *series, int64_t value, int64_t time_ns,
			      int64_t cores)
{
	double allowed;

	if (value < 0)
		return false;
	if (!series->samples)
		return true;
	if (value < series->last_ns || time_ns < series->last_at_ns)
		return false;
	allowed = (double)(time_ns - series->first_at_ns + 2 * PO_MACHINE_TICK_NS) * (double)cores +
		  (double)PO_MACHINE_LUMP_NS * (double)cores;
	return (double)(value - series->first_ns) <= allowed;
}

static bool counter_plausible(const struct process *process, const struct po_event *event,
			      int32_t cpu_count)
{
	int64_t value = event->u.counter.value;
	int64_t cores = cpu_count > 0 ? cpu_count : 1024;

	switch (event->u.counter.kind) {
	case PO_COUNTER_HOST_RSS:
	case PO_COUNTER_HOST_PSS:
	case PO_COUNTER_HOST_USS:
	case PO_COUNTER_MACHINE_MEMORY:
	case PO_COUNTER_GPU_MEM_USED:
	case PO_COUNTER_GPU_MEM_RESERVED:
		return value >= 0 && value <= PO_MEMORY_LIMIT_BYTES;
	case PO_COUNTER_PROCESS_CPU:
		return cumulative_plausible(value, event->time_ns, process->cpu_last_ns,
					    process->cpu_since_ns, cores);
	case PO_COUNTER_PROCESS_RUNQ_WAIT:
		return cumulative_plausible(value, event->time_ns, process->runq_last_ns,
					    process->runq_since_ns, 1);
	case PO_COUNTER_MACHINE_CPU:
		return machine_plausible(&process->machine, value, event->time_ns, cores);
	default:
		return true;
	}
}

/*
 * Moves the bounds of a cumulative counter on at one of its samples (see struct process):
 * an accepted value is bounded from the previous sample's stamp, and this sample's stamp
 * (for the run-queue wait, the main thread's latest event before it) bounds the next.
 */
static void note_sample_stamp(struct process *process, const struct po_event *event, bool accepted)
{
	int64_t main_ran_ns;

	switch (event->u.counter.kind) {
	case PO_COUNTER_PROCESS_CPU:
		if (accepted)
			process->cpu_since_ns =
			    process->cpu_prev_ns >= 0 ? process->cpu_prev_ns : process->first_ns;
		process->cpu_prev_ns = event->time_ns;
		break;
	case PO_COUNTER_PROCESS_RUNQ_WAIT:
		if (accepted)
			process->runq_since_ns =
			    process->runq_prev_ns >= 0 ? process->runq_prev_ns : process->first_ns;
		main_ran_ns = process->main_last_ns < 0 ? process->first_ns : process->main_last_ns;
		process->runq_prev_ns = main_ran_ns < event->time_ns ? main_ran_ns : event->time_ns;
		break;
	default:
		break;
	}
}

/*
 * The process's CPU time; its growth adds to the recorded processes' sum. A forked child's
 * clock started at 0 at the fork, after its parent's first sample, and a spawned child's at
 * its start, after its parent was recorded: all of it counts. Any other process's first
 * sample only sets where its growth starts.
 */
static void on_process_cpu(struct po_process_tracker *t, struct process *process, int64_t value)
{
	int64_t from = process->cpu_last_ns >= 0 ? process->cpu_last_ns
		       : process->cpu_from_zero	 ? 0
						 : value;

	t->traced_cpu_ns = po_add_sat(t->traced_cpu_ns, value - from);
	if (process->cpu_first_ns < 0)
		process->cpu_first_ns = value;
	process->cpu_last_ns = value;
}

/* A sample of the machine's busy CPU, beside the recorded processes' CPU at that moment. */
static void on_machine_cpu(struct po_process_tracker *t, struct process *process, int64_t time_ns,
			   int64_t value)
{
	struct machine_series *series = &process->machine;

	if (!series->samples++) {
		series->first_at_ns = time_ns;
		series->first_ns = value;
		series->traced_first_ns = po_add_sat(t->traced_cpu_ns, t->elsewhere_cpu_ns);
	}
	series->last_at_ns = time_ns;
	series->last_ns = value;
	series->traced_last_ns = po_add_sat(t->traced_cpu_ns, t->elsewhere_cpu_ns);
}

/*
 * A proportional or unique set sample. The resident set beside a unique set is the latest
 * RSS sample: the sampler reads both in one pass and records RSS first.
 */
static void on_memory_set(struct process *process, enum po_counter kind, int64_t value)
{
	struct po_memory_sets *sets = &process->sets;

	if (kind == PO_COUNTER_HOST_PSS) {
		if (sets->pss_first_bytes < 0)
			sets->pss_first_bytes = value;
		sets->pss_last_bytes = value;
		if (value > sets->pss_peak_bytes)
			sets->pss_peak_bytes = value;
		return;
	}
	if (sets->uss_first_bytes < 0) {
		sets->uss_first_bytes = value;
		sets->rss_at_uss_first_bytes = process->rss_last_bytes;
	}
	sets->uss_last_bytes = value;
	if (value > sets->uss_peak_bytes) {
		sets->uss_peak_bytes = value;
		sets->rss_at_uss_peak_bytes = process->rss_last_bytes;
	}
}

bool process_tracker_counter(struct po_process_tracker *t, struct process *process,
			     const struct po_event *event, int32_t cpu_count)
{
	int64_t value = event->u.counter.value;
	bool plausible = counter_plausible(process, event, cpu_count);

	note_sample_stamp(process, event, plausible);
	if (!plausible)
		return false;
	switch (event->u.counter.kind) {
	case PO_COUNTER_HOST_RSS:
		on_rss(t, process, value);
		break;
	case PO_COUNTER_GPU_MEM_USED:
		on_gpu_counter(t, process, event->u.counter.device, value);
		break;
	case PO_COUNTER_PROCESS_CPU:
		on_process_cpu(t, process, value);
		break;
	case PO_COUNTER_PROCESS_RUNQ_WAIT:
		if (process->runq_first_ns < 0)
			process->runq_first_ns = value;
		process->runq_last_ns = value;
		break;
	case PO_COUNTER_MACHINE_CPU:
		on_machine_cpu(t, process, event->time_ns, value);
		break;
	case PO_COUNTER_HOST_PSS:
	case PO_COUNTER_HOST_USS:
		on_memory_set(process, event->u.counter.kind, value);
		break;
	case PO_COUNTER_MACHINE_MEMORY:
		if (value > t->machine_memory_bytes)
			t->machine_memory_bytes = value;
		break;
	default:
		break;
	}
	return true;
}

enum po_status process_tracker_continue_cpu(struct po_process_tracker *t,
					    const struct process *from)
{
	struct process *to;

	if (from->cpu_last_ns < 0)
		return PO_STATUS_OK;
	to = process_get(t, from->pid);
	if (!to)
		return PO_STATUS_NOMEM;
	if (to->cpu_last_ns >= 0)
		return PO_STATUS_OK;
	to->cpu_first_ns = from->cpu_first_ns;
	to->cpu_last_ns = from->cpu_last_ns;
	to->cpu_since_ns = from->cpu_since_ns;
	to->cpu_prev_ns = from->cpu_prev_ns;
	return PO_STATUS_OK;
}

void process_tracker_announced(const struct po_process_tracker *t, struct process *process,
			       const struct po_event *event)
{
	int32_t parent_pid = event->u.process.parent_pid;
	const struct process *parent = parent_pid >= 0 && parent_pid != process->pid
					   ? process_tracker_find(t, parent_pid)
					   : NULL;

	process->cpu_from_zero =
	    event->u.process.reason == 1 ||
	    (parent && parent->first_ns >= 0 && parent->first_ns < event->time_ns);
}

void process_tracker_self_cost(struct process *process, const struct po_event *event)
{
	const int64_t reported[PO_COST_SOURCE_COUNT] = {
	    [PO_COST_HOOKS] = event->u.self_cost.hooks_ns,
	    [PO_COST_GC] = event->u.self_cost.gc_ns,
	    [PO_COST_THREADS] = event->u.self_cost.threads_ns,
	};

	for (int i = 0; i < PO_COST_SOURCE_COUNT; i++)
		if (reported[i] > process->self_cost_ns[i])
			process->self_cost_ns[i] = reported[i];
}

void process_tracker_worker_begin(struct process *process, const struct po_event *event)
{
	process->worker_begin = true;
	process->worker_id = event->u.worker.worker_id;
	process->parent_pid = event->u.worker.parent_pid;
}

/* Takes a process's resident and device memory out of the run's sums (sign -1), or back. */
static void move_sums(struct po_process_tracker *t, struct process *process, int sign)
{
	if (process->rss_last_bytes > 0 && t->rss_sum_bytes >= 0)
		t->rss_sum_bytes = po_add_sat(t->rss_sum_bytes, sign * process->rss_last_bytes);
	for (int device = 0; device < PO_DEVICE_SLOTS; device++) {
		if (process->gpu_used_bytes[device] > 0)
			memory_tracker_gpu_move(t->memory, sign * process->gpu_used_bytes[device]);
	}
}

/* A silent process spoke again: it was quiet, not gone. */
static void process_rejoins(struct po_process_tracker *t, struct process *process)
{
	process->silent = false;
	move_sums(t, process, +1);
}

void process_tracker_expire_silent(struct po_process_tracker *t, int64_t time_ns)
{
	if (time_ns - t->silent_scan_ns < PO_SILENT_SCAN_NS)
		return;
	t->silent_scan_ns = time_ns;
	for (size_t i = 0; i < t->process_count; i++) {
		struct process *process = &t->processes[i];

		if (process->ended || process->silent || process->rss_last_bytes < 0 ||
		    process->last_ns >= time_ns - PO_SILENT_NS)
			continue;
		process->silent = true;
		move_sums(t, process, -1);
	}
}

/*
 * A worker ends (a DataLoader worker exits at the end of every epoch unless its workers are
 * persistent): its resident and device memory leave the sums, so the memory of a run is
 * that of the processes alive, not of every process ever started.
 */
void process_tracker_worker_end(struct po_process_tracker *t, struct process *process)
{
	if (process->ended)
		return;
	process->ended = true;
	if (!process->silent)
		move_sums(t, process, -1);
}

enum po_status process_tracker_consume(struct po_process_tracker *t, const struct po_event *event,
				       struct process **process, struct thread **thread)
{
	enum po_status status = note_process(t, event, process);

	if (status != PO_STATUS_OK)
		return status;
	*thread = thread_of(t, event, (size_t)(*process - t->processes));
	return *thread ? PO_STATUS_OK : PO_STATUS_NOMEM;
}

struct process *process_tracker_find(const struct po_process_tracker *t, int32_t pid)
{
	struct po_map_entry *entry = po_map_find(&t->process_index, (uint32_t)pid, 0);

	return entry ? &t->processes[entry->value] : NULL;
}

const struct thread *process_tracker_find_thread(const struct po_process_tracker *t, int32_t pid,
						 int32_t tid)
{
	struct po_map_entry *entry = po_map_find(&t->thread_index, (uint32_t)pid, (uint32_t)tid);

	return entry ? &t->threads[entry->value] : NULL;
}
