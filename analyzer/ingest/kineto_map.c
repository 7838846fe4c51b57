/*
 * kineto_map.c: what each Kineto record becomes (docs/kineto.md has the table). Records
 * that are events at once (GPU records, launches, syncs, memory) are made as they are
 * read; the spans that make a step's stages (ProfilerStep#N, the DataLoader's __next__,
 * autograd's evaluate_function, Optimizer.step#) are kept until the end, where each step's
 * stages are cut from them so that they nest on the training thread as profopt's do.
 * python_function calls travel with the events as their begins and ends, and become stack
 * samples of each thread as the events come back in time order (po_kineto_map_next()).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/arena.h"
#include "kineto_map.h"

/* Times after this are not a clock's (year 2262 in nanoseconds since 1970). */
#define TIME_MAX_NS (INT64_MAX / 2)

static const struct po_kineto_class classes[] = {
    {PO_EV_RUN_BEGIN, 2, {{"framework", PO_KINETO_TEXT}, {"cpu_count", PO_KINETO_INT}}},
    {PO_EV_RUN_END, 0, {{NULL, PO_KINETO_INT}}},
    {PO_EV_RUN_CONFIG, 2, {{"key", PO_KINETO_TEXT}, {"value", PO_KINETO_TEXT}}},
    {PO_EV_STEP_BEGIN,
     3,
     {{"step", PO_KINETO_INT}, {"epoch", PO_KINETO_INT}, {"batch_size", PO_KINETO_INT}}},
    {PO_EV_STEP_END,
     3,
     {{"step", PO_KINETO_INT}, {"epoch", PO_KINETO_INT}, {"batch_size", PO_KINETO_INT}}},
    {PO_EV_STAGE_BEGIN,
     5,
     {{"stage", PO_KINETO_INT},
      {"label", PO_KINETO_TEXT},
      {"batch", PO_KINETO_INT},
      {"sample", PO_KINETO_INT},
      {"cpu_ns", PO_KINETO_INT}}},
    {PO_EV_STAGE_END,
     5,
     {{"stage", PO_KINETO_INT},
      {"label", PO_KINETO_TEXT},
      {"batch", PO_KINETO_INT},
      {"sample", PO_KINETO_INT},
      {"cpu_ns", PO_KINETO_INT}}},
    {PO_EV_COUNTER,
     3,
     {{"kind", PO_KINETO_INT}, {"device", PO_KINETO_INT}, {"value", PO_KINETO_INT}}},
    {PO_EV_MEM_ALLOC,
     4,
     {{"addr", PO_KINETO_UINT},
      {"bytes", PO_KINETO_UINT},
      {"device", PO_KINETO_INT},
      {"label", PO_KINETO_TEXT}}},
    {PO_EV_MEM_FREE,
     4,
     {{"addr", PO_KINETO_UINT},
      {"bytes", PO_KINETO_UINT},
      {"device", PO_KINETO_INT},
      {"label", PO_KINETO_TEXT}}},
    {PO_EV_GPU_LAUNCH,
     4,
     {{"device", PO_KINETO_INT},
      {"stream", PO_KINETO_INT},
      {"correlation_id", PO_KINETO_UINT},
      {"name", PO_KINETO_TEXT}}},
    {PO_EV_GPU_ACTIVITY,
     8,
     {{"device", PO_KINETO_INT},
      {"stream", PO_KINETO_INT},
      {"kind", PO_KINETO_INT},
      {"name", PO_KINETO_TEXT},
      {"bytes", PO_KINETO_UINT},
      {"start_ns", PO_KINETO_INT},
      {"end_ns", PO_KINETO_INT},
      {"correlation_id", PO_KINETO_UINT}}},
    {PO_EV_GPU_KERNEL,
     14,
     {{"device", PO_KINETO_INT},
      {"stream", PO_KINETO_INT},
      {"name", PO_KINETO_TEXT},
      {"start_ns", PO_KINETO_INT},
      {"end_ns", PO_KINETO_INT},
      {"correlation_id", PO_KINETO_UINT},
      {"grid_x", PO_KINETO_UINT},
      {"grid_y", PO_KINETO_UINT},
      {"grid_z", PO_KINETO_UINT},
      {"block_x", PO_KINETO_UINT},
      {"block_y", PO_KINETO_UINT},
      {"block_z", PO_KINETO_UINT},
      {"registers_per_thread", PO_KINETO_UINT},
      {"shared_bytes", PO_KINETO_UINT}}},
    {PO_EV_GPU_SYNC_BEGIN, 2, {{"device", PO_KINETO_INT}, {"stream", PO_KINETO_INT}}},
    {PO_EV_GPU_SYNC_END, 2, {{"device", PO_KINETO_INT}, {"stream", PO_KINETO_INT}}},
    {PO_EV_GPU_DEVICE,
     6,
     {{"device", PO_KINETO_INT},
      {"name", PO_KINETO_TEXT},
      {"memory_bytes", PO_KINETO_UINT},
      {"multiprocessors", PO_KINETO_INT},
      {"capability_major", PO_KINETO_INT},
      {"capability_minor", PO_KINETO_INT}}},
    {PO_EV_COLLECTIVE_BEGIN,
     5,
     {{"group", PO_KINETO_INT},
      {"op", PO_KINETO_INT},
      {"bytes", PO_KINETO_UINT},
      {"seq", PO_KINETO_INT},
      {"device", PO_KINETO_INT}}},
    {PO_EV_COLLECTIVE_END,
     5,
     {{"group", PO_KINETO_INT},
      {"op", PO_KINETO_INT},
      {"bytes", PO_KINETO_UINT},
      {"seq", PO_KINETO_INT},
      {"device", PO_KINETO_INT}}},
    {PO_EV_RANK,
     4,
     {{"rank", PO_KINETO_INT},
      {"local_rank", PO_KINETO_INT},
      {"world_size", PO_KINETO_INT},
      {"host", PO_KINETO_TEXT}}},
    {PO_EV_CODE,
     4,
     {{"code_id", PO_KINETO_UINT},
      {"function", PO_KINETO_TEXT},
      {"file", PO_KINETO_TEXT},
      {"first_line", PO_KINETO_INT}}},
    {PO_EV_STACK_SAMPLE,
     4,
     {{"tid", PO_KINETO_INT},
      {"cpu_ns", PO_KINETO_INT},
      {"code_ids", PO_KINETO_CODE_IDS},
      {"lines", PO_KINETO_LINES}}},
};

/*
 * A python_function call's begin and end, kept among the events until they come back in
 * time order, where po_kineto_map_next() turns them into stack samples; never handed on.
 * Values: the name's id (the code id), the call's number, its start and its end.
 */
#define PY_CALL_BEGIN ((enum po_event_kind)PO_EV_COUNT)
#define PY_CALL_END ((enum po_event_kind)(PO_EV_COUNT + 1))

const struct po_kineto_class *po_kineto_classes(size_t *count)
{
	*count = sizeof(classes) / sizeof(classes[0]);
	return classes;
}

/* The spans a step's stages are cut from. */
enum span_what {
	SPAN_STEP,
	SPAN_DATA_WAIT,
	SPAN_MAIN_PROCESS_LOADING, /* the data wait of a DataLoader with num_workers=0 */
	SPAN_BACKWARD_OP,
	SPAN_OPTIMIZER
};

/*
 * A collective as the host called it: record_param_comms with its "Collective name"
 * (PyTorch 2.1 and later, with Seq and the process group), else an nccl:NAME annotation.
 */
struct comm_call {
	int64_t start_ns, end_ns;
	int32_t pid, tid;
	int64_t seq, group, bytes; /* -1: not in the trace */
	enum po_collective_op op;
	bool from_record_param_comms;
};

/* A launch, to find the communication kernel a collective's call launched. */
struct launch {
	int32_t tid;
	int64_t ts_ns;
	int64_t correlation;
};

/* A communication kernel (ncclKernel*, ncclDevKernel*): when the collective completed. */
struct comm_kernel {
	int64_t correlation;
	int64_t end_ns;
	int32_t device;
};

struct span {
	int64_t start_ns, end_ns;
	int32_t pid, tid;
	int64_t number; /* the step's number; -1 */
	uint32_t label;
	enum span_what what;
};

/*
 * Events are kept as sorted runs of at most RUN_EVENTS: a full run is sorted and written to
 * an unnamed temporary file, and the runs are merged as the events are asked for, so that
 * memory does not grow with the trace (a Kineto file is not in time order: CPU records
 * first, GPU records after).
 */
#define RUN_EVENTS (1u << 16)
#define RUN_READ_EVENTS 256

struct run {
	off_t offset;			/* in the spill file; the run in memory has none */
	size_t count, taken;		/* events in the run, and handed on */
	struct po_kineto_event *buffer; /* owned, RUN_READ_EVENTS; weak: map->events in memory */
	size_t buffered, at;
	bool in_memory;
};

/* A python_function call open on a thread. */
struct py_call {
	uint32_t code; /* the name's id */
	int64_t start_ns, end_ns;
	int64_t number; /* which call: its end finds it by this */
};

/*
 * A thread's open calls, outermost first (by start, then the longer first), and the time
 * up to which its samples were made.
 */
struct py_thread {
	int32_t pid, tid;
	int64_t sampled_ns;
	struct py_call *calls; /* owned */
	size_t depth, capacity;
};

/* A set of nonzero 64-bit keys (open addressing). */
struct key_set {
	uint64_t *slots; /* owned; 0: empty */
	size_t mask, count;
};

/* A code object to describe: a python_function name seen in a process. */
struct py_code {
	int32_t pid, tid;
	uint32_t name;
};

struct text_entry {
	char *text; /* owned */
	size_t len;
	uint64_t hash;
};

struct po_kineto_map {
	struct po_kineto_event *events; /* owned: the run being made, at most RUN_EVENTS */
	size_t event_count, event_capacity;
	uint64_t events_made; /* every event, spilled or not: the next one's order */
	FILE *spill;	      /* owned: the sorted runs written so far; NULL */
	struct run *runs;     /* owned: the spilled runs, then the one in memory */
	size_t run_count, run_capacity;
	bool spill_failed;
	int32_t main_pid;   /* known at finish: the process of the GPU records */
	struct span *spans; /* owned */
	size_t span_count, span_capacity;
	struct text_entry *texts; /* owned; [0] is "" */
	size_t text_count, text_capacity;
	uint32_t *slots; /* owned: open addressing over texts, 0 empty */
	size_t slot_mask;
	struct comm_call *calls; /* owned */
	size_t call_count, call_capacity;
	struct launch *launches; /* owned */
	size_t launch_count, launch_capacity;
	struct comm_kernel *comm_kernels; /* owned */
	size_t comm_kernel_count, comm_kernel_capacity;
	struct po_kineto_map_stats stats;
	int64_t first_ns; /* the earliest time of any record; INT64_MAX */
	int32_t gpu_pid;  /* the process GPU records belong to: the first CPU record's */
	bool has_rank;
	bool single_process_loader;	  /* a _SingleProcessDataLoaderIter: num_workers=0 */
	uint32_t loader_label;		  /* interned "DataLoader.__next__" */
	struct po_kineto_device *devices; /* owned */
	size_t device_count, device_capacity;
	struct po_kineto_distributed dist;
	uint32_t host;	 /* interned: the host in the file's name; 0: none */
	int64_t last_ns; /* the latest time of any record; INT64_MIN */
	struct {
		int64_t pid;
		uint32_t name;
	} * process_names; /* owned: "process_name" metadata */
	size_t process_name_count, process_name_capacity;
	struct key_set code_keys; /* (pid, name) of the python_function records seen */
	struct py_code *codes;	  /* owned: each (pid, name) once */
	size_t code_count, code_capacity;
	struct py_thread *threads; /* owned: the threads with python_function calls */
	size_t thread_count, thread_capacity, thread_last;
	uint32_t frames[PO_STACK_DEPTH_MAX]; /* the latest sample's, innermost first */
	size_t frame_depth;
	struct po_kineto_event held; /* handed on after the sample made at its time */
	bool has_held;
};

/* ---- storage ---- */

/* po_array_reserve() as a test: whether the array has room for needed items. */
static bool grow(void **array, size_t *capacity, size_t needed, size_t size)
{
	return po_array_reserve(array, capacity, needed, size) == PO_STATUS_OK;
}

static uint64_t text_hash(const char *text, size_t len)
{
	uint64_t hash = 1469598103934665603ull;

	for (size_t i = 0; i < len; i++)
		hash = (hash ^ (unsigned char)text[i]) * 1099511628211ull;
	return hash;
}

static bool slots_rebuild(struct po_kineto_map *map, size_t slot_count)
{
	uint32_t *slots = calloc(slot_count, sizeof(*slots));

	if (!slots)
		return false;
	free(map->slots);
	map->slots = slots;
	map->slot_mask = slot_count - 1;
	for (size_t id = 1; id < map->text_count; id++) {
		size_t slot = map->texts[id].hash & map->slot_mask;

		while (map->slots[slot])
			slot = (slot + 1) & map->slot_mask;
		map->slots[slot] = (uint32_t)id;
	}
	return true;
}

/* The id of text, added on first sight; UINT32_MAX when out of memory. */
static uint32_t intern(struct po_kineto_map *map, const char *text)
{
	size_t len = strlen(text), slot;
	uint64_t hash = text_hash(text, len);

	if (len == 0)
		return 0;
	for (slot = hash & map->slot_mask; map->slots[slot]; slot = (slot + 1) & map->slot_mask) {
		const struct text_entry *entry = &map->texts[map->slots[slot]];

		if (entry->hash == hash && entry->len == len && memcmp(entry->text, text, len) == 0)
			return map->slots[slot];
	}
	if (!grow((void **)&map->texts, &map->text_capacity, map->text_count + 1,
		  sizeof(*map->texts)))
		return UINT32_MAX;
	map->texts[map->text_count] = (struct text_entry){strdup(text), len, hash};
	if (!map->texts[map->text_count].text)
		return UINT32_MAX;
	map->slots[slot] = (uint32_t)map->text_count++;
	if (map->text_count * 2 > map->slot_mask + 1 &&
	    !slots_rebuild(map, (map->slot_mask + 1) * 2))
		return UINT32_MAX;
	return (uint32_t)(map->text_count - 1);
}

const char *po_kineto_map_text(const struct po_kineto_map *map, uint32_t id, size_t *len)
{
	if (id == 0 || id >= map->text_count) {
		*len = 0;
		return "";
	}
	*len = map->texts[id].len;
	return map->texts[id].text;
}

/*
 * The order of events at one time: the run's own (its begin, the devices, the rank, which
 * must come before the first step), stage ends, step ends, step begins, stage begins, the
 * rest, and the run's end last.
 */
static uint8_t order_at_one_time(enum po_event_kind kind)
{
	switch (kind) {
	case PO_EV_RUN_BEGIN:
	case PO_EV_RUN_CONFIG:
	case PO_EV_GPU_DEVICE:
	case PO_EV_RANK:
	case PO_EV_CODE:
		return 0;
	case PO_EV_STAGE_END:
		return 1;
	case PO_EV_STEP_END:
		return 2;
	case PO_EV_STEP_BEGIN:
		return 3;
	case PO_EV_STAGE_BEGIN:
		return 4;
	case PO_EV_RUN_END:
		return 6;
	default:
		return 5;
	}
}

/* qsort() for arrays that may be empty (and NULL, which qsort() must not be given). */
static void sort(void *items, size_t count, size_t size, int (*compare)(const void *, const void *))
{
	if (count > 1)
		qsort(items, count, size, compare);
}

static int event_by_time(const void *a, const void *b)
{
	const struct po_kineto_event *x = a, *y = b;

	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static bool run_add(struct po_kineto_map *map, struct run run)
{
	if (!grow((void **)&map->runs, &map->run_capacity, map->run_count + 1, sizeof(*map->runs)))
		return false;
	map->runs[map->run_count++] = run;
	return true;
}

/* Sorts the run in memory and writes it to the spill file; false when it cannot. */
static bool run_spill(struct po_kineto_map *map)
{
	struct run run = {0};

	sort(map->events, map->event_count, sizeof(*map->events), event_by_time);
	if (!map->spill)
		map->spill = tmpfile();
	if (!map->spill || fseeko(map->spill, 0, SEEK_END) != 0 ||
	    (run.offset = ftello(map->spill)) < 0 ||
	    fwrite(map->events, sizeof(*map->events), map->event_count, map->spill) !=
		map->event_count ||
	    !(run.buffer = malloc(RUN_READ_EVENTS * sizeof(*run.buffer)))) {
		map->spill_failed = true;
		return false;
	}
	run.count = map->event_count;
	if (!run_add(map, run)) {
		free(run.buffer);
		return false;
	}
	map->event_count = 0;
	map->stats.runs_spilled++;
	return true;
}

/* A new event at time_ns; NULL when out of memory. */
static struct po_kineto_event *event_add(struct po_kineto_map *map, enum po_event_kind kind,
					 int64_t time_ns, int32_t pid, int32_t tid)
{
	struct po_kineto_event *ev;

	if (map->event_count == RUN_EVENTS && !run_spill(map))
		return NULL;
	if (!grow((void **)&map->events, &map->event_capacity, map->event_count + 1,
		  sizeof(*map->events)))
		return NULL;
	ev = &map->events[map->event_count++];
	memset(ev, 0, sizeof(*ev));
	ev->time_ns = time_ns;
	ev->order = map->events_made++;
	ev->kind = kind;
	ev->pid = pid;
	ev->tid = tid;
	ev->rank = order_at_one_time(kind);
	return ev;
}

static enum po_status span_add(struct po_kineto_map *map, enum span_what what,
			       const struct po_kineto_record *rec, int64_t number, uint32_t label)
{
	if (!grow((void **)&map->spans, &map->span_capacity, map->span_count + 1,
		  sizeof(*map->spans)))
		return PO_STATUS_NOMEM;
	map->spans[map->span_count++] = (struct span){rec->ts_ns,
						      rec->ts_ns + rec->dur_ns,
						      (int32_t)rec->pid,
						      (int32_t)rec->tid,
						      number,
						      label,
						      what};
	return PO_STATUS_OK;
}

/* ---- records ---- */

static bool starts_with(const char *text, const char *prefix)
{
	return strncmp(text, prefix, strlen(prefix)) == 0;
}

/* Whether a runtime call launches device work that a GPU record names by correlation. */
static bool is_launch(const char *name)
{
	return strstr(name, "LaunchKernel") || strstr(name, "LaunchCooperativeKernel") ||
	       strstr(name, "MemcpyAsync") || strstr(name, "MemsetAsync") ||
	       strstr(name, "GraphLaunch") || strstr(name, "ModuleLaunchKernel");
}

/* Whether a runtime call blocks the host until the device is done. */
static bool is_sync(const char *name)
{
	static const char *const syncs[] = {
	    "cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize", "cudaMemcpy",
	    "hipDeviceSynchronize",  "hipStreamSynchronize",  "hipEventSynchronize",  "hipMemcpy",
	    "cuCtxSynchronize",	     "cuStreamSynchronize",   "cuEventSynchronize",
	};

	for (size_t i = 0; i < sizeof(syncs) / sizeof(syncs[0]); i++)
		if (strcmp(name, syncs[i]) == 0)
			return true;
	return false;
}

/* The copy's direction from its name ("Memcpy HtoD (Pageable -> Device)"). */
static enum po_gpu_kind copy_kind(const char *name)
{
	if (strstr(name, "HtoD"))
		return PO_GPU_MEMCPY_H2D;
	if (strstr(name, "DtoH"))
		return PO_GPU_MEMCPY_D2H;
	return PO_GPU_MEMCPY_D2D;
}

static uint64_t unsigned_or_zero(int64_t value)
{
	return value > 0 ? (uint64_t)value : 0;
}

static enum po_status add_gpu_record(struct po_kineto_map *map, const struct po_kineto_record *rec)
{
	int64_t end_ns = rec->ts_ns + rec->dur_ns;
	uint32_t name = intern(map, rec->name);
	struct po_kineto_event *ev =
	    name == UINT32_MAX ? NULL : event_add(map, PO_EV_GPU_ACTIVITY, end_ns, -1, -1);
	int64_t *v;

	if (!ev)
		return PO_STATUS_NOMEM;
	v = ev->values;
	ev->text = name;
	if (rec->category == PO_KINETO_CAT_KERNEL && starts_with(rec->name, "nccl") &&
	    rec->correlation > 0) {
		if (!grow((void **)&map->comm_kernels, &map->comm_kernel_capacity,
			  map->comm_kernel_count + 1, sizeof(*map->comm_kernels)))
			return PO_STATUS_NOMEM;
		map->comm_kernels[map->comm_kernel_count++] =
		    (struct comm_kernel){rec->correlation, end_ns, (int32_t)rec->device};
	}
	if (rec->category == PO_KINETO_CAT_KERNEL) {
		ev->kind = PO_EV_GPU_KERNEL;
		v[0] = rec->device, v[1] = rec->stream, v[3] = rec->ts_ns, v[4] = end_ns;
		v[5] = (int64_t)unsigned_or_zero(rec->correlation);
		for (int i = 0; i < 3; i++) {
			v[6 + i] = (int64_t)unsigned_or_zero(rec->grid[i]);
			v[9 + i] = (int64_t)unsigned_or_zero(rec->block[i]);
		}
		v[12] = (int64_t)unsigned_or_zero(rec->registers);
		v[13] = (int64_t)unsigned_or_zero(rec->shared_bytes);
		return PO_STATUS_OK;
	}
	v[0] = rec->device, v[1] = rec->stream;
	v[2] = rec->category == PO_KINETO_CAT_MEMSET ? PO_GPU_MEMSET : copy_kind(rec->name);
	v[4] = (int64_t)unsigned_or_zero(rec->bytes);
	v[5] = rec->ts_ns, v[6] = end_ns;
	v[7] = (int64_t)unsigned_or_zero(rec->correlation);
	return PO_STATUS_OK;
}

static enum po_status add_runtime(struct po_kineto_map *map, const struct po_kineto_record *rec)
{
	struct po_kineto_event *ev;

	if (is_launch(rec->name) && rec->correlation > 0) {
		ev = event_add(map, PO_EV_GPU_LAUNCH, rec->ts_ns, (int32_t)rec->pid,
			       (int32_t)rec->tid);
		if (!ev || !grow((void **)&map->launches, &map->launch_capacity,
				 map->launch_count + 1, sizeof(*map->launches)))
			return PO_STATUS_NOMEM;
		map->launches[map->launch_count++] =
		    (struct launch){(int32_t)rec->tid, rec->ts_ns, rec->correlation};
		ev->values[0] = -1, ev->values[1] = -1, ev->values[2] = rec->correlation;
		return PO_STATUS_OK;
	}
	if (!is_sync(rec->name)) {
		map->stats.unknown_records++;
		return PO_STATUS_OK;
	}
	ev = event_add(map, PO_EV_GPU_SYNC_BEGIN, rec->ts_ns, (int32_t)rec->pid, (int32_t)rec->tid);
	if (ev)
		ev->values[0] = -1, ev->values[1] = -1;
	ev = ev ? event_add(map, PO_EV_GPU_SYNC_END, rec->ts_ns + rec->dur_ns, (int32_t)rec->pid,
			    (int32_t)rec->tid)
		: NULL;
	if (!ev)
		return PO_STATUS_NOMEM;
	ev->values[0] = -1, ev->values[1] = -1;
	return PO_STATUS_OK;
}

/* A "[memory]" instant: an allocation (Bytes > 0) or a free, and the device's totals. */
static enum po_status add_memory(struct po_kineto_map *map, const struct po_kineto_record *rec)
{
	bool gpu = rec->device_type == 1;
	int32_t device = gpu ? (int32_t)rec->device_id : -1;
	struct po_kineto_event *ev;

	if (rec->alloc_bytes == INT64_MIN || rec->addr < 0 || (gpu && rec->device_id < 0)) {
		map->stats.unknown_records++;
		return PO_STATUS_OK;
	}
	ev = event_add(map, rec->alloc_bytes >= 0 ? PO_EV_MEM_ALLOC : PO_EV_MEM_FREE, rec->ts_ns,
		       (int32_t)rec->pid, (int32_t)rec->tid);
	if (!ev)
		return PO_STATUS_NOMEM;
	ev->values[0] = rec->addr;
	ev->values[1] = rec->alloc_bytes >= 0 ? rec->alloc_bytes : -rec->alloc_bytes;
	ev->values[2] = device;
	if (!gpu)
		return PO_STATUS_OK;
	if (rec->total_allocated >= 0) {
		ev =
		    event_add(map, PO_EV_COUNTER, rec->ts_ns, (int32_t)rec->pid, (int32_t)rec->tid);
		if (!ev)
			return PO_STATUS_NOMEM;
		ev->values[0] = PO_COUNTER_GPU_MEM_USED, ev->values[1] = device;
		ev->values[2] = rec->total_allocated;
	}
	if (rec->total_reserved >= 0) {
		ev =
		    event_add(map, PO_EV_COUNTER, rec->ts_ns, (int32_t)rec->pid, (int32_t)rec->tid);
		if (!ev)
			return PO_STATUS_NOMEM;
		ev->values[0] = PO_COUNTER_GPU_MEM_RESERVED, ev->values[1] = device;
		ev->values[2] = rec->total_reserved;
	}
	return PO_STATUS_OK;
}

/* The operation a collective's name says ("all_reduce", "_all_gather_base", ...). */
static enum po_collective_op collective_op(const char *name)
{
	static const struct {
		const char *word;
		enum po_collective_op op;
	} ops[] = {
	    {"all_reduce", PO_COLLECTIVE_ALL_REDUCE},
	    {"allreduce", PO_COLLECTIVE_ALL_REDUCE},
	    {"all_to_all", PO_COLLECTIVE_ALL_TO_ALL},
	    {"alltoall", PO_COLLECTIVE_ALL_TO_ALL},
	    {"all_gather", PO_COLLECTIVE_ALL_GATHER},
	    {"allgather", PO_COLLECTIVE_ALL_GATHER},
	    {"reduce_scatter", PO_COLLECTIVE_REDUCE_SCATTER},
	    {"broadcast", PO_COLLECTIVE_BROADCAST},
	    {"barrier", PO_COLLECTIVE_BARRIER},
	    {"reduce", PO_COLLECTIVE_REDUCE},
	    {"send", PO_COLLECTIVE_SEND},
	    {"recv", PO_COLLECTIVE_RECV},
	};

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (strstr(name, ops[i].word))
			return ops[i].op;
	return PO_COLLECTIVE_OTHER;
}

/* Bytes of one element of a dtype as record_param_comms names it ("Float", "c10::Half"); 0. */
static int64_t dtype_bytes(const char *dtype)
{
	static const struct {
		const char *word;
		int64_t bytes;
	} sizes[] = {
	    {"Double", 8}, {"Long", 8}, {"ComplexFloat", 8}, {"Float8", 1},
	    {"Float", 4},  {"Int", 4},	{"BFloat16", 2},     {"Half", 2},
	    {"Short", 2},  {"Byte", 1}, {"Char", 1},	     {"Bool", 1},
	};

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		if (strstr(dtype, sizes[i].word))
			return sizes[i].bytes;
	return 0;
}

static enum po_status call_add(struct po_kineto_map *map, const struct po_kineto_record *rec)
{
	bool param_comms = rec->collective[0] != '\0';
	int64_t group = -1;

	if (!grow((void **)&map->calls, &map->call_capacity, map->call_count + 1,
		  sizeof(*map->calls)))
		return PO_STATUS_NOMEM;
	if (rec->group_name[0]) {
		char *end;
		long long number = strtoll(rec->group_name, &end, 10);

		group = *end || number < 0 || number > INT32_MAX ? -1 : number;
	}
	map->calls[map->call_count++] =
	    (struct comm_call){rec->ts_ns,
			       rec->ts_ns + rec->dur_ns,
			       (int32_t)rec->pid,
			       (int32_t)rec->tid,
			       rec->seq,
			       group,
			       rec->in_elements > 0 && rec->in_elements < INT64_MAX / 8
				   ? rec->in_elements * dtype_bytes(rec->dtype)
				   : -1,
			       collective_op(param_comms ? rec->collective : rec->name + 5),
			       param_comms};
	return PO_STATUS_OK;
}

/* A CPU-side span: a step, a data wait, a backward operator, an optimizer step, or none. */
static enum po_status add_cpu_span(struct po_kineto_map *map, const struct po_kineto_record *rec)
{
	const char *name = rec->name;
	const char *hash = strchr(name, '#');

	if (map->gpu_pid < 0 && rec->pid >= 0)
		map->gpu_pid = (int32_t)rec->pid;
	if (starts_with(name, "ProfilerStep#")) {
		char *end;
		long long number = strtoll(name + 13, &end, 10);

		map->stats.steps++;
		return span_add(map, SPAN_STEP, rec, *end ? -1 : number, 0);
	}
	if ((strcmp(name, "record_param_comms") == 0 && rec->collective[0]) ||
	    starts_with(name, "nccl:"))
		return call_add(map, rec);
	if (starts_with(name, "enumerate(DataLoader)#_SingleProcessDataLoaderIter")) {
		map->single_process_loader = true;
		return span_add(map, SPAN_MAIN_PROCESS_LOADING, rec, -1, 0);
	}
	if (starts_with(name, "enumerate(DataLoader)#"))
		return span_add(map, SPAN_DATA_WAIT, rec, -1, 0);
	if (starts_with(name, "autograd::engine::evaluate_function"))
		return span_add(map, SPAN_BACKWARD_OP, rec, -1, 0);
	if (starts_with(name, "Optimizer.step#")) {
		uint32_t label = intern(map, hash + 1);

		return label == UINT32_MAX ? PO_STATUS_NOMEM
					   : span_add(map, SPAN_OPTIMIZER, rec, -1, label);
	}
	return PO_STATUS_OK;
}

/* Adds key (nonzero) to the set; *added says whether it was new. false: out of memory. */
static bool key_set_add(struct key_set *set, uint64_t key, bool *added)
{
	size_t slot;

	*added = false;
	if ((set->count + 1) * 2 > set->mask + 1) {
		size_t old_size = set->slots ? set->mask + 1 : 0,
		       size = old_size ? old_size * 2 : 256;
		uint64_t *slots = calloc(size, sizeof(*slots));

		if (!slots)
			return false;
		for (size_t i = 0; i < old_size; i++) {
			if (!set->slots[i])
				continue;
			for (slot = set->slots[i] * 0x9E3779B97F4A7C15ull & (size - 1);
			     slots[slot];)
				slot = (slot + 1) & (size - 1);
			slots[slot] = set->slots[i];
		}
		free(set->slots);
		set->slots = slots;
		set->mask = size - 1;
	}
	for (slot = key * 0x9E3779B97F4A7C15ull & set->mask; set->slots[slot];
	     slot = (slot + 1) & set->mask)
		if (set->slots[slot] == key)
			return true;
	set->slots[slot] = key;
	set->count++;
	*added = true;
	return true;
}

/*
 * A python_function record (torch.profiler's with_stack=True): a call on its thread, kept
 * as its begin and end until the events come back in time order; its name, a code object
 * of its process. A call of no duration holds no time and is left out.
 */
static enum po_status add_python_call(struct po_kineto_map *map, const struct po_kineto_record *rec)
{
	uint32_t name = intern(map, rec->name);
	bool added;

	if (name == UINT32_MAX)
		return PO_STATUS_NOMEM;
	if (rec->dur_ns == 0)
		return PO_STATUS_OK;
	if (!key_set_add(&map->code_keys, ((uint64_t)(uint32_t)rec->pid << 32 | name) + 1, &added))
		return PO_STATUS_NOMEM;
	if (added) {
		if (!grow((void **)&map->codes, &map->code_capacity, map->code_count + 1,
			  sizeof(*map->codes)))
			return PO_STATUS_NOMEM;
		map->codes[map->code_count++] =
		    (struct py_code){(int32_t)rec->pid, (int32_t)rec->tid, name};
	}
	for (int end = 0; end < 2; end++) {
		struct po_kineto_event *ev = event_add(map, end ? PY_CALL_END : PY_CALL_BEGIN,
						       rec->ts_ns + (end ? rec->dur_ns : 0),
						       (int32_t)rec->pid, (int32_t)rec->tid);

		if (!ev)
			return PO_STATUS_NOMEM;
		ev->values[0] = name, ev->values[1] = map->stats.python_calls;
		ev->values[2] = rec->ts_ns, ev->values[3] = rec->ts_ns + rec->dur_ns;
	}
	map->stats.python_calls++;
	return PO_STATUS_OK;
}

/* Whether the record's times can be a clock's: a start, a duration that is not negative. */
static bool times_possible(const struct po_kineto_record *rec)
{
	if (rec->ts_ns == INT64_MIN || rec->ts_ns < 0 || rec->ts_ns > TIME_MAX_NS)
		return false;
	if (rec->phase != 'X')
		return true;
	return rec->dur_ns != INT64_MIN && rec->dur_ns >= 0 && rec->dur_ns <= TIME_MAX_NS;
}

static enum po_status process_name_add(struct po_kineto_map *map, int64_t pid, const char *name)
{
	uint32_t id = intern(map, name);

	if (id == UINT32_MAX || !grow((void **)&map->process_names, &map->process_name_capacity,
				      map->process_name_count + 1, sizeof(*map->process_names)))
		return PO_STATUS_NOMEM;
	map->process_names[map->process_name_count].pid = pid;
	map->process_names[map->process_name_count++].name = id;
	return PO_STATUS_OK;
}

static enum po_status on_record(void *ctx, const struct po_kineto_record *rec)
{
	struct po_kineto_map *map = ctx;

	map->stats.records++;
	if (rec->phase == 'M' && strcmp(rec->name, "process_name") == 0 && rec->pid >= 0 &&
	    rec->arg_name[0])
		return process_name_add(map, rec->pid, rec->arg_name);
	if (rec->phase == 'M' || rec->phase == 's' || rec->phase == 'f' || rec->phase == 0)
		return PO_STATUS_OK; /* metadata and flows: the correlation ids carry the links */
	if (rec->category == PO_KINETO_CAT_OTHER && !rec->memory) {
		map->stats.unknown_records++; /* the profiler's own spans, annotations of GPUs */
		return PO_STATUS_OK;
	}
	if (!times_possible(rec) || (rec->pid < 0 && rec->phase == 'X')) {
		map->stats.impossible_times++;
		return PO_STATUS_OK;
	}
	if (rec->ts_ns < map->first_ns)
		map->first_ns = rec->ts_ns;
	if (rec->ts_ns + (rec->phase == 'X' ? rec->dur_ns : 0) > map->last_ns)
		map->last_ns = rec->ts_ns + (rec->phase == 'X' ? rec->dur_ns : 0);
	if (rec->phase == 'i')
		return rec->memory ? add_memory(map, rec) : PO_STATUS_OK;
	if (rec->phase != 'X')
		return PO_STATUS_OK;
	switch (rec->category) {
	case PO_KINETO_CAT_KERNEL:
	case PO_KINETO_CAT_MEMCPY:
	case PO_KINETO_CAT_MEMSET:
		return add_gpu_record(map, rec);
	case PO_KINETO_CAT_RUNTIME:
	case PO_KINETO_CAT_DRIVER:
		return add_runtime(map, rec);
	case PO_KINETO_CAT_CPU_OP:
	case PO_KINETO_CAT_USER_ANNOTATION:
		return add_cpu_span(map, rec);
	case PO_KINETO_CAT_GPU_USER_ANNOTATION:
		/*
		 * Not GPU work but the span of the records launched inside a record_function
		 * range, which the records and their launches already give the model: read as
		 * activity they would count that time twice (docs/kineto.md).
		 */
		map->stats.gpu_annotations++;
		return PO_STATUS_OK;
	case PO_KINETO_CAT_PYTHON_FUNCTION:
		if (map->gpu_pid < 0 && rec->pid >= 0)
			map->gpu_pid = (int32_t)rec->pid;
		return add_python_call(map, rec);
	default:
		map->stats.unknown_records++;
		return PO_STATUS_OK;
	}
}

static enum po_status on_device(void *ctx, const struct po_kineto_device *device)
{
	struct po_kineto_map *map = ctx;

	if (device->id < 0 || device->id > INT32_MAX)
		return PO_STATUS_OK;
	if (!grow((void **)&map->devices, &map->device_capacity, map->device_count + 1,
		  sizeof(*map->devices)))
		return PO_STATUS_NOMEM;
	map->devices[map->device_count++] = *device;
	return PO_STATUS_OK;
}

static enum po_status on_distributed(void *ctx, const struct po_kineto_distributed *info)
{
	struct po_kineto_map *map = ctx;

	map->dist = *info;
	map->has_rank = info->rank >= 0 && info->world_size > 0; /* a rank of nothing: left out */
	return PO_STATUS_OK;
}

enum po_status po_kineto_map_read(struct po_kineto_map *map, const char *path, struct po_error *err)
{
	const struct po_kineto_callbacks callbacks = {on_record, on_device, on_distributed, map};
	struct po_kineto_read_stats read_stats;
	enum po_status status = po_kineto_read(path, &callbacks, &read_stats, err);
	char host[256];

	/* the trace does not name its host; tensorboard_trace_handler's file name does */
	if (status == PO_STATUS_OK && po_kineto_file_host(path, host, sizeof(host)) &&
	    (map->host = intern(map, host)) == UINT32_MAX)
		status = PO_STATUS_NOMEM;

	map->stats.names_cut += read_stats.names_cut;
	if (map->spill_failed)
		po_error_set(err,
			     "Failed to read %s: its events could not be written to a "
			     "temporary file (TMPDIR full?)",
			     path);
	else if (status == PO_STATUS_NOMEM)
		po_error_set(err, "Failed to read %s: out of memory", path);
	return status;
}

/* ---- the end: steps and their stages, the run's own events, the order ---- */

static int span_by_start(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return x->end_ns > y->end_ns ? -1 : x->end_ns < y->end_ns;
}

static enum po_status stage_add(struct po_kineto_map *map, const struct span *step,
				enum po_stage stage, int64_t begin_ns, int64_t end_ns,
				uint32_t label)
{
	struct po_kineto_event *ev;

	if (end_ns <= begin_ns)
		return PO_STATUS_OK;
	ev = event_add(map, PO_EV_STAGE_BEGIN, begin_ns, step->pid, step->tid);
	if (!ev)
		return PO_STATUS_NOMEM;
	ev->values[0] = stage, ev->text = label;
	ev->values[2] = ev->values[3] = ev->values[4] = -1;
	ev = event_add(map, PO_EV_STAGE_END, end_ns, step->pid, step->tid);
	if (!ev)
		return PO_STATUS_NOMEM;
	ev->values[0] = stage, ev->text = label;
	ev->values[2] = ev->values[3] = ev->values[4] = -1;
	return PO_STATUS_OK;
}

/*
 * A data wait; with num_workers=0 the main process loads the batch itself inside it, as
 * profopt records such a loop: a load span (the DataLoader's fetch and collate, which the
 * trace does not tell apart) nested in the data wait.
 */
static enum po_status data_wait_add(struct po_kineto_map *map, const struct span *step,
				    const struct span *wait)
{
	const enum po_stage order[4] = {PO_STAGE_DATA_WAIT, PO_STAGE_LOAD, PO_STAGE_LOAD,
					PO_STAGE_DATA_WAIT};

	if (wait->what == SPAN_DATA_WAIT)
		return stage_add(map, step, PO_STAGE_DATA_WAIT, wait->start_ns, wait->end_ns, 0);
	if (wait->end_ns <= wait->start_ns)
		return PO_STATUS_OK;
	for (int i = 0; i < 4; i++) { /* begins, then ends innermost first */
		struct po_kineto_event *ev =
		    event_add(map, i < 2 ? PO_EV_STAGE_BEGIN : PO_EV_STAGE_END,
			      i < 2 ? wait->start_ns : wait->end_ns, step->pid, step->tid);

		if (!ev)
			return PO_STATUS_NOMEM;
		ev->values[0] = order[i];
		ev->text = order[i] == PO_STAGE_LOAD ? map->loader_label : 0;
		ev->values[2] = ev->values[3] = ev->values[4] = -1;
	}
	return PO_STATUS_OK;
}

/* What lies inside one step, from the spans of its process. */
struct step_parts {
	int64_t wait_end_ns;	      /* the end of its last data wait; the step's start if none */
	const struct span *optimizer; /* weak; NULL */
	int64_t backward_begin_ns, backward_end_ns; /* INT64_MAX, INT64_MIN: none */
};

static enum po_status step_scan(struct po_kineto_map *map, const struct span *step, size_t first,
				struct step_parts *parts)
{
	enum po_status status = PO_STATUS_OK;

	*parts = (struct step_parts){step->start_ns, NULL, INT64_MAX, INT64_MIN};
	for (size_t i = first; i < map->span_count && status == PO_STATUS_OK; i++) {
		const struct span *span = &map->spans[i];

		if (span->start_ns >= step->end_ns)
			break;
		if (span->pid != step->pid || span->end_ns > step->end_ns)
			continue;
		if ((span->what == SPAN_DATA_WAIT || span->what == SPAN_MAIN_PROCESS_LOADING) &&
		    span->tid == step->tid && span->start_ns >= parts->wait_end_ns &&
		    !parts->optimizer) {
			status = data_wait_add(map, step, span);
			parts->wait_end_ns = span->end_ns;
		} else if (span->what == SPAN_OPTIMIZER && !parts->optimizer &&
			   span->tid == step->tid)
			parts->optimizer = span;
		else if (span->what == SPAN_BACKWARD_OP && !parts->optimizer) {
			if (span->start_ns < parts->backward_begin_ns)
				parts->backward_begin_ns = span->start_ns;
			if (span->end_ns > parts->backward_end_ns)
				parts->backward_end_ns = span->end_ns;
		}
	}
	return status;
}

/*
 * A step's stages on its thread, one after another: its data waits, forward until the
 * first backward operator (else the optimizer, else the step's end), backward to the
 * last backward operator (cut at the optimizer), the optimizer step.
 */
static enum po_status step_stages(struct po_kineto_map *map, const struct span *step, size_t first)
{
	struct step_parts parts;
	enum po_status status = step_scan(map, step, first, &parts);
	int64_t backward_end = parts.backward_end_ns;
	int64_t forward_end = step->end_ns;

	if (parts.optimizer && backward_end > parts.optimizer->start_ns)
		backward_end = parts.optimizer->start_ns;
	if (parts.backward_begin_ns < parts.wait_end_ns)
		parts.backward_begin_ns = parts.wait_end_ns;
	if (parts.backward_begin_ns != INT64_MAX && backward_end > parts.backward_begin_ns)
		forward_end = parts.backward_begin_ns;
	else if (parts.optimizer)
		forward_end = parts.optimizer->start_ns;
	if (status == PO_STATUS_OK)
		status = stage_add(map, step, PO_STAGE_FORWARD, parts.wait_end_ns, forward_end, 0);
	if (status == PO_STATUS_OK && parts.backward_begin_ns != INT64_MAX)
		status = stage_add(map, step, PO_STAGE_BACKWARD, parts.backward_begin_ns,
				   backward_end, 0);
	if (status == PO_STATUS_OK && parts.optimizer)
		status = stage_add(map, step, PO_STAGE_OPTIMIZER, parts.optimizer->start_ns,
				   parts.optimizer->end_ns, parts.optimizer->label);
	return status;
}

static enum po_status steps_add(struct po_kineto_map *map)
{
	enum po_status status = PO_STATUS_OK;

	map->loader_label = intern(map, "DataLoader.__next__");
	if (map->loader_label == UINT32_MAX)
		return PO_STATUS_NOMEM;
	int64_t previous_end = INT64_MIN;

	sort(map->spans, map->span_count, sizeof(*map->spans), span_by_start);
	for (size_t i = 0; i < map->span_count && status == PO_STATUS_OK; i++) {
		const struct span step = map->spans[i]; /* a copy: the events array grows */
		struct po_kineto_event *ev;

		if (step.what != SPAN_STEP || step.start_ns < previous_end)
			continue; /* steps do not nest or overlap */
		previous_end = step.end_ns;
		for (int end = 0; end < 2 && status == PO_STATUS_OK; end++) {
			ev = event_add(map, end ? PO_EV_STEP_END : PO_EV_STEP_BEGIN,
				       end ? step.end_ns : step.start_ns, step.pid, step.tid);
			if (!ev)
				return PO_STATUS_NOMEM;
			ev->values[0] = step.number, ev->values[1] = -1, ev->values[2] = -1;
		}
		status = step_stages(map, &step, i + 1);
	}
	return status;
}

/*
 * A process's name from the trace's "process_name" metadata; else "pytorch", the program
 * every torch.profiler trace comes from. UINT32_MAX: out of memory.
 */
static uint32_t process_name_of(struct po_kineto_map *map, int64_t pid)
{
	for (size_t i = 0; i < map->process_name_count; i++)
		if (map->process_names[i].pid == pid)
			return map->process_names[i].name;
	return intern(map, "pytorch");
}

/* The training thread: the first step's, else the first process's main thread. */
static void main_thread(const struct po_kineto_map *map, int32_t *pid, int32_t *tid)
{
	for (size_t i = 0; i < map->span_count; i++) {
		if (map->spans[i].what == SPAN_STEP) {
			*pid = map->spans[i].pid;
			*tid = map->spans[i].tid;
			return;
		}
	}
	*pid = map->gpu_pid >= 0 ? map->gpu_pid : 0;
	*tid = *pid;
}

/* run_begin, the devices and the rank, at the trace's first time, on the main thread. */
static enum po_status run_events_add(struct po_kineto_map *map, int32_t pid, int32_t tid)
{
	int64_t at = map->first_ns == INT64_MAX ? 0 : map->first_ns;
	struct po_kineto_event *ev = event_add(map, PO_EV_RUN_BEGIN, at, pid, tid);

	if (!ev || (ev->text = intern(map, "pytorch")) == UINT32_MAX)
		return PO_STATUS_NOMEM;
	ev->values[1] = -1;
	if (map->single_process_loader) { /* the trace's evidence of num_workers=0 */
		ev = event_add(map, PO_EV_RUN_CONFIG, at, pid, tid);
		if (!ev || (ev->text = intern(map, "num_workers")) == UINT32_MAX ||
		    (ev->text2 = intern(map, "0")) == UINT32_MAX)
			return PO_STATUS_NOMEM;
	}
	if (map->code_count) { /* the samples weigh the calls' wall time: no CPU time */
		ev = event_add(map, PO_EV_RUN_CONFIG, at, pid, tid);
		if (!ev || (ev->text = intern(map, "stacks_clock")) == UINT32_MAX ||
		    (ev->text2 = intern(map, "wall")) == UINT32_MAX)
			return PO_STATUS_NOMEM;
	}
	/* the file was written whole: the profiled window ended */
	if (!event_add(map, PO_EV_RUN_END, map->last_ns == INT64_MIN ? at : map->last_ns, pid, tid))
		return PO_STATUS_NOMEM;
	for (size_t i = 0; i < map->device_count; i++) {
		const struct po_kineto_device *device = &map->devices[i];

		ev = event_add(map, PO_EV_GPU_DEVICE, at, pid, tid);
		if (!ev || (ev->text = intern(map, device->name)) == UINT32_MAX)
			return PO_STATUS_NOMEM;
		ev->values[0] = device->id,
		ev->values[2] = (int64_t)unsigned_or_zero(device->memory_bytes);
		ev->values[3] = device->multiprocessors;
		ev->values[4] = device->major, ev->values[5] = device->minor;
	}
	if (!map->has_rank)
		return PO_STATUS_OK;
	ev = event_add(map, PO_EV_RANK, at, pid, tid);
	if (!ev)
		return PO_STATUS_NOMEM;
	ev->values[0] = map->dist.rank, ev->values[1] = -1;
	ev->values[2] = map->dist.world_size;
	ev->text = map->host;
	return PO_STATUS_OK;
}

/*
 * A python_function name's parts: "FILE(LINE): FUNCTION" (the line is the function's
 * first), else the whole name with no file ("<built-in method ...>", "nn.Module: ...").
 */
static void code_parts(const char *name, char *function, char *file, int64_t *line)
{
	const char *colon = strstr(name, "): ");
	const char *open = colon ? colon : NULL;
	char *end;

	while (open && open > name && open[-1] != '(')
		open--;
	*line = open && open > name ? strtoll(open, &end, 10) : -1;
	if (!open || open <= name + 1 || end != colon || *line < 0 || *line > INT32_MAX) {
		strcpy(function, name);
		file[0] = '\0';
		*line = 0;
		return;
	}
	strcpy(function, colon + 3);
	memcpy(file, name, (size_t)(open - 1 - name));
	file[open - 1 - name] = '\0';
}

/*
 * Each process's python_function names as code objects (profopt:code, the code id the
 * name's id), at the trace's first time: before any sample names them, and before the
 * samples' own times, against which the model checks their weights.
 */
static enum po_status codes_add(struct po_kineto_map *map, int64_t at)
{
	char *function = malloc(PO_KINETO_NAME_MAX + 1), *file = malloc(PO_KINETO_NAME_MAX + 1);
	enum po_status status = function && file ? PO_STATUS_OK : PO_STATUS_NOMEM;

	for (size_t i = 0; i < map->code_count && status == PO_STATUS_OK; i++) {
		const struct py_code *code = &map->codes[i];
		struct po_kineto_event *ev = event_add(map, PO_EV_CODE, at, code->pid, code->tid);
		size_t len;

		if (!ev) {
			status = PO_STATUS_NOMEM;
			break;
		}
		code_parts(po_kineto_map_text(map, code->name, &len), function, file,
			   &ev->values[3]);
		ev->values[0] = code->name;
		ev->text = intern(map, function);
		ev->text2 = intern(map, file);
		if (ev->text == UINT32_MAX || ev->text2 == UINT32_MAX)
			status = PO_STATUS_NOMEM;
	}
	free(function);
	free(file);
	return status;
}

static int launch_by_thread_time(const void *a, const void *b)
{
	const struct launch *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->ts_ns < y->ts_ns ? -1 : x->ts_ns > y->ts_ns;
}

static int kernel_by_correlation(const void *a, const void *b)
{
	const struct comm_kernel *x = a, *y = b;

	return x->correlation < y->correlation ? -1 : x->correlation > y->correlation;
}

static int call_by_start(const void *a, const void *b)
{
	const struct comm_call *x = a, *y = b;

	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

/* The communication kernel the call launched on its thread; NULL when none is in the trace. */
static const struct comm_kernel *call_kernel(const struct po_kineto_map *map,
					     const struct comm_call *call)
{
	size_t low = 0, high = map->launch_count;

	while (low < high) { /* the first launch of the thread at or after the call's start */
		size_t mid = (low + high) / 2;
		const struct launch *l = &map->launches[mid];

		if (l->tid < call->tid || (l->tid == call->tid && l->ts_ns < call->start_ns))
			low = mid + 1;
		else
			high = mid;
	}
	for (; low < map->launch_count && map->launches[low].tid == call->tid &&
	       map->launches[low].ts_ns <= call->end_ns;
	     low++) {
		struct comm_kernel key = {map->launches[low].correlation, 0, 0};
		const struct comm_kernel *kernel =
		    map->comm_kernel_count == 0
			? NULL
			: bsearch(&key, map->comm_kernels, map->comm_kernel_count,
				  sizeof(*map->comm_kernels), kernel_by_correlation);

		if (kernel)
			return kernel;
	}
	return NULL;
}

static enum po_status collective_add(struct po_kineto_map *map, const struct comm_call *call,
				     const struct comm_kernel *kernel, int64_t seq)
{
	for (int end = 0; end < 2; end++) {
		struct po_kineto_event *ev =
		    event_add(map, end ? PO_EV_COLLECTIVE_END : PO_EV_COLLECTIVE_BEGIN,
			      end ? kernel->end_ns : call->start_ns, call->pid, call->tid);

		if (!ev)
			return PO_STATUS_NOMEM;
		ev->values[0] = call->group >= 0 ? call->group : 0;
		ev->values[1] = call->op;
		ev->values[2] = call->bytes > 0 ? call->bytes : 0;
		ev->values[3] = seq;
		ev->values[4] = kernel->device;
	}
	return PO_STATUS_OK;
}

/*
 * Each collective whose communication kernel is in the trace: it begins when the host
 * called it and ends when its kernel ended (the result complete on this rank). Its number
 * is the trace's Seq, else its place among the calls of this file, which is the same on
 * every rank when the ranks' traces cover the same steps. A call whose kernel is not in
 * the trace is left out (counted): its end would be a guess.
 */
static enum po_status collectives_add(struct po_kineto_map *map)
{
	bool param_comms = false;
	int64_t called = 0;
	enum po_status status = PO_STATUS_OK;

	sort(map->launches, map->launch_count, sizeof(*map->launches), launch_by_thread_time);
	sort(map->comm_kernels, map->comm_kernel_count, sizeof(*map->comm_kernels),
	     kernel_by_correlation);
	sort(map->calls, map->call_count, sizeof(*map->calls), call_by_start);
	for (size_t i = 0; i < map->call_count; i++)
		param_comms |= map->calls[i].from_record_param_comms;
	for (size_t i = 0; i < map->call_count && status == PO_STATUS_OK; i++) {
		const struct comm_call *call = &map->calls[i];
		const struct comm_kernel *kernel;

		if (call->from_record_param_comms != param_comms)
			continue; /* the nccl: annotation inside record_param_comms */
		kernel = call_kernel(map, call);
		if (!kernel) {
			map->stats.collectives_without_kernel++;
			called++;
			continue;
		}
		status = collective_add(map, call, kernel, call->seq >= 0 ? call->seq : called);
		called++;
	}
	return status;
}

enum po_status po_kineto_map_finish(struct po_kineto_map *map)
{
	enum po_status status = steps_add(map);
	int32_t pid, tid;

	if (status == PO_STATUS_OK)
		status = collectives_add(map);
	main_thread(map, &pid, &tid);
	if (status == PO_STATUS_OK)
		status = run_events_add(map, pid, tid);
	if (status == PO_STATUS_OK)
		status = codes_add(map, map->first_ns == INT64_MAX ? 0 : map->first_ns);
	map->main_pid = pid;
	sort(map->events, map->event_count, sizeof(*map->events), event_by_time);
	if (status == PO_STATUS_OK &&
	    !run_add(map,
		     (struct run){0, map->event_count, 0, map->events, map->event_count, 0, true}))
		status = PO_STATUS_NOMEM;
	if (map->spill_failed)
		status = PO_STATUS_INTERNAL;
	return status;
}

/* Points the run at its next event, reading the spill file; false at its end or on error. */
static bool run_ready(struct po_kineto_map *map, struct run *run)
{
	size_t want;

	if (run->at < run->buffered)
		return true;
	if (run->in_memory || run->taken == run->count)
		return false;
	want =
	    run->count - run->taken < RUN_READ_EVENTS ? run->count - run->taken : RUN_READ_EVENTS;
	if (fseeko(map->spill, run->offset + (off_t)(run->taken * sizeof(*run->buffer)),
		   SEEK_SET) != 0 ||
	    fread(run->buffer, sizeof(*run->buffer), want, map->spill) != want) {
		map->spill_failed = true;
		return false;
	}
	run->buffered = want;
	run->at = 0;
	return true;
}

/* The next event of the merged runs, as it was made. */
static enum po_status merged_next(struct po_kineto_map *map, struct po_kineto_event *out,
				  bool *ended)
{
	struct run *best = NULL;

	for (size_t r = 0; r < map->run_count; r++) {
		struct run *run = &map->runs[r];

		if (run_ready(map, run) &&
		    (!best || event_by_time(&run->buffer[run->at], &best->buffer[best->at]) < 0))
			best = run;
	}
	*ended = best == NULL;
	if (map->spill_failed)
		return PO_STATUS_INTERNAL;
	if (!best)
		return PO_STATUS_OK;
	*out = best->buffer[best->at++];
	best->taken++;
	return PO_STATUS_OK;
}

/* The thread's open calls; created when create is set. NULL: none, or out of memory. */
static struct py_thread *py_thread_of(struct po_kineto_map *map, int32_t pid, int32_t tid,
				      bool create)
{
	struct py_thread *thread;

	if (map->thread_last < map->thread_count && map->threads[map->thread_last].pid == pid &&
	    map->threads[map->thread_last].tid == tid)
		return &map->threads[map->thread_last];
	for (size_t i = 0; i < map->thread_count; i++) {
		if (map->threads[i].pid == pid && map->threads[i].tid == tid) {
			map->thread_last = i;
			return &map->threads[i];
		}
	}
	if (!create || !grow((void **)&map->threads, &map->thread_capacity, map->thread_count + 1,
			     sizeof(*map->threads)))
		return NULL;
	thread = &map->threads[map->thread_count];
	*thread = (struct py_thread){.pid = pid, .tid = tid, .sampled_ns = INT64_MIN};
	map->thread_last = map->thread_count++;
	return thread;
}

/*
 * The sample of the thread's open calls from its last boundary to time_ns, into *out;
 * false when no call was open or no time went by. Either way time_ns is its boundary now.
 */
static bool py_sample(struct po_kineto_map *map, struct py_thread *thread, int64_t time_ns,
		      struct po_kineto_event *out)
{
	bool sampled = thread->depth > 0 && time_ns > thread->sampled_ns;

	if (sampled) {
		map->frame_depth =
		    thread->depth < PO_STACK_DEPTH_MAX ? thread->depth : PO_STACK_DEPTH_MAX;
		for (size_t i = 0; i < map->frame_depth; i++) /* innermost first */
			map->frames[i] = thread->calls[thread->depth - 1 - i].code;
		memset(out, 0, sizeof(*out));
		out->kind = PO_EV_STACK_SAMPLE;
		out->time_ns = time_ns;
		out->pid = thread->pid;
		out->tid = thread->tid;
		out->values[0] = thread->tid;
		out->values[1] = time_ns - thread->sampled_ns;
	}
	if (time_ns > thread->sampled_ns)
		thread->sampled_ns = time_ns;
	return sampled;
}

/* Whether call a is outside call b on one thread: it began first, or as it and ends later. */
static bool py_call_outside(const struct py_call *a, const struct py_call *b)
{
	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns;
	if (a->end_ns != b->end_ns)
		return a->end_ns > b->end_ns;
	return a->number < b->number;
}

/* A call's begin opens it in its place among the thread's calls; its end closes it. */
static enum po_status py_apply(struct po_kineto_map *map, struct py_thread *thread,
			       const struct po_kineto_event *ev)
{
	struct py_call call = {(uint32_t)ev->values[0], ev->values[2], ev->values[3],
			       ev->values[1]};
	size_t at = thread->depth;

	if (ev->kind == PY_CALL_END) {
		while (at > 0 && thread->calls[at - 1].number != call.number)
			at--;
		if (at > 0) { /* else it was left out when it began */
			memmove(&thread->calls[at - 1], &thread->calls[at],
				(thread->depth - at) * sizeof(call));
			thread->depth--;
		}
		return PO_STATUS_OK;
	}
	if (thread->depth >= PO_KINETO_PYTHON_DEPTH_MAX) {
		map->stats.python_calls_too_deep++;
		return PO_STATUS_OK;
	}
	if (!grow((void **)&thread->calls, &thread->capacity, thread->depth + 1, sizeof(call)))
		return PO_STATUS_NOMEM;
	while (at > 0 && py_call_outside(&call, &thread->calls[at - 1]))
		at--;
	memmove(&thread->calls[at + 1], &thread->calls[at], (thread->depth - at) * sizeof(call));
	thread->calls[at] = call;
	thread->depth++;
	return PO_STATUS_OK;
}

/* The process and its name, for an event about to be handed on. */
static void handed_on(struct po_kineto_map *map, struct po_kineto_event *out)
{
	if (out->pid < 0) { /* GPU records: the process that launched them */
		out->pid = map->main_pid;
		out->tid = map->main_pid;
	}
	out->procname = process_name_of(map, out->pid);
}

enum po_status po_kineto_map_next(struct po_kineto_map *map, struct po_kineto_event *out,
				  bool *ended)
{
	struct po_kineto_event ev;
	struct py_thread *thread;
	enum po_status status;

	*ended = false;
	if (map->has_held) {
		*out = map->held;
		map->has_held = false;
		handed_on(map, out);
		return PO_STATUS_OK;
	}
	for (;;) {
		status = merged_next(map, &ev, ended);
		if (status != PO_STATUS_OK || *ended)
			return status;
		if (ev.kind == PY_CALL_BEGIN || ev.kind == PY_CALL_END) {
			bool sampled;

			thread = py_thread_of(map, ev.pid, ev.tid, true);
			if (!thread)
				return PO_STATUS_NOMEM;
			sampled = py_sample(map, thread, ev.time_ns, out);
			status = py_apply(map, thread, &ev);
			if (status != PO_STATUS_OK)
				return status;
			if (!sampled)
				continue;
			handed_on(map, out);
			return PO_STATUS_OK;
		}
		/* a stage's begin or end cuts the samples: each sample is in one stage */
		if ((ev.kind == PO_EV_STAGE_BEGIN || ev.kind == PO_EV_STAGE_END) &&
		    (thread = py_thread_of(map, ev.pid, ev.tid, false)) &&
		    py_sample(map, thread, ev.time_ns, out)) {
			map->held = ev;
			map->has_held = true;
			handed_on(map, out);
			return PO_STATUS_OK;
		}
		*out = ev;
		handed_on(map, out);
		return PO_STATUS_OK;
	}
}

const uint32_t *po_kineto_map_borrow_frames(const struct po_kineto_map *map, size_t *depth)
{
	*depth = map->frame_depth;
	return map->frames;
}

const struct po_kineto_map_stats *po_kineto_map_borrow_stats(const struct po_kineto_map *map)
{
	return &map->stats;
}

enum po_status po_kineto_map_create(struct po_kineto_map **out)
{
	struct po_kineto_map *map = calloc(1, sizeof(*map));

	*out = NULL;
	if (!map)
		return PO_STATUS_NOMEM;
	map->first_ns = INT64_MAX;
	map->loader_label = UINT32_MAX;
	map->last_ns = INT64_MIN;
	map->gpu_pid = -1;
	map->texts = calloc(64, sizeof(*map->texts));
	map->text_capacity = 64;
	map->text_count = 1; /* [0] is "" */
	if (!map->texts || !slots_rebuild(map, 256)) {
		po_kineto_map_destroy(map);
		return PO_STATUS_NOMEM;
	}
	*out = map;
	return PO_STATUS_OK;
}

void po_kineto_map_destroy(struct po_kineto_map *map)
{
	if (!map)
		return;
	for (size_t i = 1; i < map->text_count; i++)
		free(map->texts[i].text);
	free(map->texts);
	free(map->slots);
	free(map->events);
	for (size_t r = 0; r < map->run_count; r++)
		if (!map->runs[r].in_memory)
			free(map->runs[r].buffer);
	free(map->runs);
	if (map->spill)
		fclose(map->spill);
	free(map->spans);
	free(map->devices);
	free(map->process_names);
	free(map->calls);
	free(map->launches);
	free(map->comm_kernels);
	free(map->codes);
	free(map->code_keys.slots);
	for (size_t i = 0; i < map->thread_count; i++)
		free(map->threads[i].calls);
	free(map->threads);
	free(map);
}
