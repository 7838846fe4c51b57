/* hotspots.c: the hotspot tracker (hotspots.h): function-level samples per stage and role. */
#define _GNU_SOURCE /* qsort_r */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hotspots.h"
#include "saturate.h"
#include "common/text.h"

enum po_status hotspot_tracker_init(struct po_hotspot_tracker *t, struct po_strtab *strings,
				    struct po_native_namer namer)
{
	*t = (struct po_hotspot_tracker){.strings = strings, .namer = namer};
	t->seen = calloc(PO_HOTSPOT_FRAMES_MAX, sizeof(*t->seen));
	t->frames = calloc(PO_HOTSPOT_FRAMES_MAX, sizeof(*t->frames));
	return t->seen && t->frames ? PO_STATUS_OK : PO_STATUS_NOMEM;
}

void hotspot_tracker_fini(struct po_hotspot_tracker *t)
{
	free(t->functions);
	free(t->cells);
	free(t->labels);
	free(t->seen);
	free(t->frames);
	free(t->paths);
	po_map_free(&t->natives);
	po_map_free(&t->path_index);
	po_map_free(&t->label_index);
	po_map_free(&t->function_index);
	po_map_free(&t->codes);
	po_map_free(&t->cell_index);
	po_map_free(&t->sample_stamps);
}

size_t hotspot_tracker_bytes(const struct po_hotspot_tracker *t)
{
	return t->function_capacity * sizeof(*t->functions) + t->cell_capacity * sizeof(*t->cells) +
	       po_map_bytes(&t->function_index) + po_map_bytes(&t->codes) +
	       po_map_bytes(&t->cell_index) + t->label_capacity * sizeof(*t->labels) +
	       po_map_bytes(&t->label_index) + t->path_capacity * sizeof(*t->paths) +
	       po_map_bytes(&t->path_index) + po_map_bytes(&t->natives) +
	       po_map_bytes(&t->sample_stamps) + 2 * PO_HOTSPOT_FRAMES_MAX * sizeof(uint32_t);
}

static bool grow(void **items, size_t *capacity, size_t count, size_t size)
{
	size_t bigger = *capacity ? *capacity * 2 : 64;
	void *moved;

	if (count < *capacity)
		return true;
	moved = realloc(*items, bigger * size);
	if (!moved)
		return false;
	*items = moved;
	*capacity = bigger;
	return true;
}

/* The index of (function, file, line), interned texts, added on first sight. */
static enum po_status function_index(struct po_hotspot_tracker *t, const char *function,
				     const char *file, int32_t line, uint32_t *out)
{
	uint64_t b = (uint64_t)(uintptr_t)file ^ ((uint64_t)(uint16_t)line << 48);
	struct po_map_entry *entry;
	bool created;

	entry = po_map_upsert(&t->function_index, (uint64_t)(uintptr_t)function, b, &created);
	if (!entry)
		return PO_STATUS_NOMEM;
	if (!created) {
		*out = (uint32_t)entry->value;
		return PO_STATUS_OK;
	}
	if (!grow((void **)&t->functions, &t->function_capacity, t->function_count,
		  sizeof(*t->functions)))
		return PO_STATUS_NOMEM;
	entry->value = t->function_count;
	t->functions[t->function_count] = (struct hotspot_function){function, file, line};
	*out = (uint32_t)t->function_count++;
	return PO_STATUS_OK;
}

/* The index of a fixed name ("(unknown code)"), created once; UINT32_MAX when out of memory. */
static uint32_t named_function(struct po_hotspot_tracker *t, uint32_t *slot, const char *name)
{
	const char *text;
	uint32_t index;

	if (*slot)
		return *slot - 1;
	text = po_strtab_intern(t->strings, name, strlen(name));
	if (!text || function_index(t, text, text, 0, &index) != PO_STATUS_OK)
		return UINT32_MAX;
	*slot = index + 1;
	return index;
}

enum po_status hotspot_tracker_consume_code(struct po_hotspot_tracker *t, int32_t pid,
					    const struct po_event *event)
{
	const struct po_str *name = &event->u.code.function, *path = &event->u.code.file;
	struct po_map_entry *entry;
	const char *function, *file;
	bool native = event->u.code.first_line == -1;
	uint32_t index;
	bool created;

	if (t->function_count >= PO_HOTSPOT_FUNCTION_CAP) {
		index = named_function(t, &t->other_function, "(other code)");
	} else {
		function = po_strtab_intern(t->strings, name->ptr ? name->ptr : "", name->len);
		file = po_strtab_intern(t->strings, path->ptr ? path->ptr : "", path->len);
		/* a native object's code (first line -1) is the object's frame, line 0 */
		if (!function || !file ||
		    function_index(t, function, file, native ? 0 : event->u.code.first_line,
				   &index) != PO_STATUS_OK)
			return PO_STATUS_NOMEM;
	}
	if (index == UINT32_MAX)
		return PO_STATUS_NOMEM;
	entry = po_map_upsert(&t->codes, (uint32_t)pid, event->u.code.code_id, &created);
	if (!entry)
		return PO_STATUS_NOMEM;
	entry->value = (uint64_t)index + 1; /* a code id described again: the latest wins */
	entry->aux1 = native;
	return PO_STATUS_OK;
}

static struct hotspot_cell *cell_of(struct po_hotspot_tracker *t, int32_t pid, int stage,
				    uint32_t function)
{
	uint64_t a = (uint64_t)(uint32_t)pid | ((uint64_t)(stage + 1) << 32);
	struct po_map_entry *entry;
	bool created;

	entry = po_map_upsert(&t->cell_index, a, function, &created);
	if (!entry)
		return NULL;
	if (created) {
		if (!grow((void **)&t->cells, &t->cell_capacity, t->cell_count,
			  sizeof(*t->cells))) {
			po_map_remove(&t->cell_index, entry);
			return NULL;
		}
		entry->value = t->cell_count;
		t->cells[t->cell_count++] =
		    (struct hotspot_cell){.pid = pid, .stage = stage, .function = function};
	}
	return &t->cells[entry->value];
}

/* Adds one sample to a cell: self when innermost, total once per sample. */
static void add(struct hotspot_cell *cell, bool self, int64_t cpu_ns)
{
	cell->total_samples++;
	cell->total_ns = po_add_sat(cell->total_ns, cpu_ns);
	if (self) {
		cell->self_samples++;
		cell->self_ns = po_add_sat(cell->self_ns, cpu_ns);
	}
}

/* Adds a sample to its (pid, stage, label) count. */
static enum po_status add_label(struct po_hotspot_tracker *t, int32_t pid, int stage,
				const char *label, int64_t cpu_ns)
{
	uint64_t a = (uint64_t)(uint32_t)pid | ((uint64_t)(stage + 1) << 32);
	struct po_map_entry *entry;
	struct hotspot_label_cell *cell;
	bool created;

	entry = po_map_upsert(&t->label_index, a, (uint64_t)(uintptr_t)label, &created);
	if (!entry)
		return PO_STATUS_NOMEM;
	if (created) {
		if (!grow((void **)&t->labels, &t->label_capacity, t->label_count,
			  sizeof(*t->labels))) {
			po_map_remove(&t->label_index, entry);
			return PO_STATUS_NOMEM;
		}
		entry->value = t->label_count;
		t->labels[t->label_count++] =
		    (struct hotspot_label_cell){.pid = pid, .stage = stage, .label = label};
	}
	cell = &t->labels[entry->value];
	cell->samples++;
	cell->cpu_ns = po_add_sat(cell->cpu_ns, cpu_ns);
	return PO_STATUS_OK;
}

/* The call path (pid, parent, function), made on first sight; UINT32_MAX past the cap. */
static enum po_status path_of(struct po_hotspot_tracker *t, int32_t pid, uint32_t parent,
			      uint32_t function, uint32_t *out)
{
	uint64_t a = (uint64_t)(uint32_t)pid << 32 | (uint32_t)(parent + 1);
	struct po_map_entry *entry = po_map_find(&t->path_index, a, function);

	if (entry) {
		*out = (uint32_t)entry->value;
		return PO_STATUS_OK;
	}
	*out = UINT32_MAX;
	if (t->path_count >= PO_FLAME_NODE_CAP)
		return PO_STATUS_OK;
	if (!grow((void **)&t->paths, &t->path_capacity, t->path_count, sizeof(*t->paths)) ||
	    !(entry = po_map_upsert(&t->path_index, a, function, NULL)))
		return PO_STATUS_NOMEM;
	entry->value = t->path_count;
	t->paths[t->path_count] =
	    (struct flame_node){.pid = pid, .parent = parent, .function = function};
	*out = (uint32_t)t->path_count++;
	return PO_STATUS_OK;
}

/* A sample's call path, outermost frame first (functions[count - 1] .. functions[0]). */
static enum po_status add_path(struct po_hotspot_tracker *t, int32_t pid, const uint32_t *functions,
			       uint32_t count, int64_t weight_ns)
{
	uint32_t parent = UINT32_MAX, node;

	for (uint32_t i = count; i-- > 0;) {
		enum po_status status = path_of(t, pid, parent, functions[i], &node);

		if (status != PO_STATUS_OK)
			return status;
		if (node == UINT32_MAX) { /* no room: the sample ends at its parent */
			t->paths_cut++;
			break;
		}
		t->paths[node].samples++;
		t->paths[node].time_ns = po_add_sat(t->paths[node].time_ns, weight_ns);
		parent = node;
	}
	if (parent != UINT32_MAX) {
		t->paths[parent].self_samples++;
		t->paths[parent].self_time_ns =
		    po_add_sat(t->paths[parent].self_time_ns, weight_ns);
	}
	return PO_STATUS_OK;
}

/* One sample of count functions (t->frames, innermost first) taken in stage. */
static enum po_status add_sample(struct po_hotspot_tracker *t, int32_t pid, int stage,
				 const char *label, int64_t weight_ns, uint32_t count)
{
	size_t seen_count = 0;
	struct hotspot_cell *cell;

	t->sample_count++;
	for (uint32_t i = 0; i < count; i++) {
		uint32_t function = t->frames[i];
		bool repeated = false;

		for (size_t k = 0; k < seen_count && !repeated; k++)
			repeated = t->seen[k] == function;
		if (repeated) /* recursion: a function counts once per sample */
			continue;
		t->seen[seen_count++] = function;
		cell = cell_of(t, pid, stage, function);
		if (!cell)
			return PO_STATUS_NOMEM;
		add(cell, i == 0, weight_ns);
	}
	cell = cell_of(t, pid, stage, HOTSPOT_GROUP_TOTAL);
	if (!cell)
		return PO_STATUS_NOMEM;
	add(cell, true, weight_ns);
	if (add_path(t, pid, t->frames, count, weight_ns) != PO_STATUS_OK)
		return PO_STATUS_NOMEM;
	return label ? add_label(t, pid, stage, label, weight_ns) : PO_STATUS_OK;
}

/* ---- native frames ---- */

/* The frame of the object at path: "[native] NAME", the path its file. */
static enum po_status object_function(struct po_hotspot_tracker *t, const char *path, uint32_t *out)
{
	const char *slash = strrchr(path, '/');
	char name[512];
	const char *function, *file;
	int length = snprintf(name, sizeof(name), "[native] %s", slash ? slash + 1 : path);

	if (length < 0)
		return PO_STATUS_INPUT;
	po_text_trim_cut(name); /* a long path cut by snprintf: at a character boundary */
	function = po_strtab_intern(t->strings, name, strlen(name));
	file = po_strtab_intern(t->strings, path, strlen(path));
	if (!function || !file)
		return PO_STATUS_NOMEM;
	return function_index(t, function, file, 0, out);
}

/* The function at offset in the object at path, when the namer knows it; else UINT32_MAX. */
static enum po_status named_native(struct po_hotspot_tracker *t, const char *path,
				   const char *build_id, uint64_t offset, bool interrupted,
				   uint32_t *out)
{
	struct po_native_name name = {NULL, NULL, -1};
	const char *function, *file;
	enum po_status status;

	*out = UINT32_MAX;
	if (!t->namer.name)
		return PO_STATUS_OK;
	status = t->namer.name(t->namer.ctx, path, build_id, offset, interrupted, &name);
	if (status != PO_STATUS_OK || !name.function)
		return status;
	function = po_strtab_intern(t->strings, name.function, strlen(name.function));
	file = name.file ? po_strtab_intern(t->strings, name.file, strlen(name.file))
			 : po_strtab_intern(t->strings, path, strlen(path));
	if (!function || !file)
		return PO_STATUS_NOMEM;
	return function_index(t, function, file, name.file ? name.line : 0, out);
}

/*
 * The frames of a native instruction, remembered under key (a, b): *function (UINT32_MAX:
 * not named) and *object. Past the function cap both are "(other code)".
 */
static enum po_status native_frames(struct po_hotspot_tracker *t, uint64_t a, uint64_t b,
				    const char *path, const char *build_id, uint64_t offset,
				    bool interrupted, uint32_t *function, uint32_t *object)
{
	struct po_map_entry *entry = po_map_find(&t->natives, a, b);
	enum po_status status;

	if (entry) {
		*function = (uint32_t)(entry->value - 1);
		*object = (uint32_t)(entry->aux1 - 1);
		return PO_STATUS_OK;
	}
	if (t->function_count >= PO_HOTSPOT_FUNCTION_CAP) {
		*function = UINT32_MAX;
		*object = named_function(t, &t->other_function, "(other code)");
		return *object == UINT32_MAX ? PO_STATUS_NOMEM : PO_STATUS_OK;
	}
	status = object_function(t, path, object);
	if (status == PO_STATUS_OK)
		status = named_native(t, path, build_id, offset, interrupted, function);
	if (status != PO_STATUS_OK || t->natives.count >= PO_HOTSPOT_NATIVE_CACHE_CAP)
		return status;
	entry = po_map_upsert(&t->natives, a, b, NULL);
	if (!entry)
		return PO_STATUS_NOMEM;
	entry->value = (uint64_t)*function + 1;
	entry->aux1 = (int64_t)*object + 1;
	return PO_STATUS_OK;
}

/* Appends a frame to t->frames; false when full. */
static bool push(struct po_hotspot_tracker *t, uint32_t *count, uint32_t function)
{
	if (*count >= PO_HOTSPOT_FRAMES_MAX)
		return false;
	t->frames[(*count)++] = function;
	return true;
}

/* Keys of the native cache: a Python frame's (code, offset), a C sample's address. */
#define NATIVE_KEY_CODE (1ull << 62)
#define NATIVE_KEY_INTERRUPTED (1ull << 61)

/* A Python frame: its code's function, or for a native object's code, its native frames. */
static enum po_status python_frame(struct po_hotspot_tracker *t, int32_t pid,
				   struct po_stack_frame frame, uint32_t *count)
{
	const struct po_map_entry *code = po_map_find(&t->codes, (uint32_t)pid, frame.code_id);
	uint32_t function, object;
	enum po_status status;

	if (!code) {
		function = named_function(t, &t->unknown_function, "(unknown code)");
		if (function == UINT32_MAX)
			return PO_STATUS_NOMEM;
		push(t, count, function);
		return PO_STATUS_OK;
	}
	object = (uint32_t)(code->value - 1);
	if (!code->aux1 || !frame.line) { /* Python code, or a native frame without offset */
		push(t, count, object);
		return PO_STATUS_OK;
	}
	status = native_frames(t, NATIVE_KEY_CODE | (uint64_t)frame.code_id << 32 | (uint32_t)pid,
			       frame.line, t->functions[object].file, NULL, frame.line, true,
			       &function, &object);
	if (status != PO_STATUS_OK)
		return status;
	if (function != UINT32_MAX)
		push(t, count, function);
	push(t, count, object);
	return PO_STATUS_OK;
}

/* What a sample's weight may exceed the time it is bounded by (see plausible_weight). */
#define PO_SAMPLE_WEIGHT_SLACK_NS 1000000

/*
 * Whether a sample's weight (-1: unknown, taken as 0) could be physical, with the stamps of
 * the sampled thread's samples kept for the next one. The weight is the thread's CPU time,
 * or the timer periods that expired, since its previous sample was read; that one was read
 * after the sample before it was stamped (a thread's samples are taken one after the
 * other), so no weight exceeds the time since the stamp of the thread's sample before the
 * previous one (the process's first event until there is one), as for a process's CPU
 * counter (processes.c). Lost events only widen the bound. The slack (1/8 and 1 ms, as for
 * a span's CPU time) covers the clocks' granularity. One flipped bit made a sample weigh
 * hours and turned "72% in hot_decode" into "100% in hot_augment".
 */
static enum po_status plausible_weight(struct po_hotspot_tracker *t,
				       const struct po_sample_place *place, int32_t tid,
				       int64_t time_ns, int64_t *weight_ns)
{
	struct po_map_entry *entry;
	int64_t bound_ns;
	bool created;

	entry = po_map_upsert(&t->sample_stamps, (uint32_t)place->pid, (uint32_t)tid, &created);
	if (!entry)
		return PO_STATUS_NOMEM;
	if (created)
		entry->aux1 = entry->aux2 = place->first_ns < time_ns ? place->first_ns : time_ns;
	bound_ns = time_ns > entry->aux2 ? time_ns - entry->aux2 : 0;
	entry->aux2 = entry->aux1;
	entry->aux1 = time_ns;
	if (*weight_ns == -1) {
		*weight_ns = 0;
	} else if (*weight_ns < 0 ||
		   *weight_ns > bound_ns + bound_ns / 8 + PO_SAMPLE_WEIGHT_SLACK_NS) {
		t->implausible_weights++;
		*weight_ns = -1;
	}
	return PO_STATUS_OK;
}

enum po_status hotspot_tracker_consume_sample(struct po_hotspot_tracker *t,
					      const struct po_sample_place *place,
					      const struct po_event *event)
{
	uint32_t depth = event->u.stack_sample.depth, count = 0;
	int64_t cpu_ns = event->u.stack_sample.cpu_ns;
	enum po_status status;

	if (depth > PO_STACK_DEPTH_MAX ||
	    event->u.stack_sample.frames.len < depth * sizeof(struct po_stack_frame)) {
		t->malformed_samples++;
		return PO_STATUS_OK;
	}
	status = plausible_weight(t, place, event->u.stack_sample.tid, event->time_ns, &cpu_ns);
	if (status != PO_STATUS_OK || cpu_ns < 0) /* left out whole */
		return status;
	for (uint32_t i = 0; i < depth; i++) {
		status = python_frame(t, place->pid, po_stack_frame_at(event, i), &count);
		if (status != PO_STATUS_OK)
			return status;
	}
	return add_sample(t, place->pid, place->stage, place->label, cpu_ns, count);
}

/*
 * One address of a C sample: its function, and its object's frame where the object changes.
 * An address in no known object adds no frame: the vDSO's time (clock_gettime falling back
 * to a system call) is its caller's, as in Python's samples.
 */
static enum po_status native_pc(struct po_hotspot_tracker *t, int32_t pid, uint64_t pc,
				bool interrupted, int64_t time_ns, const struct po_binmap *objects,
				uint32_t *count, uint32_t *open_object)
{
	uint64_t key = (uint32_t)pid | (interrupted ? NATIVE_KEY_INTERRUPTED : 0);
	const struct po_map_entry *known = po_map_find(&t->natives, key, pc);
	struct po_binmap_hit hit;
	uint32_t function, object;
	enum po_status status;

	if (known) { /* named before: no need to place it among the objects again */
		function = (uint32_t)(known->value - 1);
		object = (uint32_t)(known->aux1 - 1);
	} else if (!po_binmap_lookup(objects, pid, pc, time_ns, &hit)) {
		t->unmapped_pcs++; /* left out: the vDSO (its time is its caller's), JIT code */
		return PO_STATUS_OK;
	} else {
		status = native_frames(t, key, pc, hit.path, hit.build_id, hit.offset, interrupted,
				       &function, &object);
		if (status != PO_STATUS_OK)
			return status;
	}
	/* the object's frame closes a run of frames in one object, seen from inside */
	if (*open_object != UINT32_MAX && *open_object != object)
		push(t, count, *open_object);
	*open_object = object;
	if (function != UINT32_MAX)
		push(t, count, function);
	return PO_STATUS_OK;
}

enum po_status hotspot_tracker_consume_native(struct po_hotspot_tracker *t,
					      const struct po_sample_place *place,
					      const struct po_event *event,
					      const struct po_binmap *objects)
{
	uint32_t depth = event->u.native_stack.depth, count = 0, object = UINT32_MAX;
	int64_t weight_ns = event->u.native_stack.weight_ns;
	enum po_status status;

	if (depth == 0 || depth > PO_STACK_DEPTH_MAX ||
	    event->u.native_stack.pcs.len < depth * sizeof(uint64_t)) {
		t->malformed_samples++;
		return PO_STATUS_OK;
	}
	status = plausible_weight(t, place, event->u.native_stack.tid, event->time_ns, &weight_ns);
	if (status != PO_STATUS_OK || weight_ns < 0) /* left out whole */
		return status;
	for (uint32_t i = 0; i < depth; i++) {
		status = native_pc(t, place->pid, po_native_pc_at(event, i), i == 0, event->time_ns,
				   objects, &count, &object);
		if (status != PO_STATUS_OK)
			return status;
	}
	if (object != UINT32_MAX)
		push(t, &count, object);
	if (!count) { /* no address in a known object */
		object = named_function(t, &t->unmapped_function, "(unmapped native code)");
		if (object == UINT32_MAX)
			return PO_STATUS_NOMEM;
		push(t, &count, object);
	}
	t->native_samples++;
	return add_sample(t, place->pid, place->stage, place->label, weight_ns, count);
}

/* ---- build ---- */

/* A cell merged over the processes of one role. */
struct merged {
	enum po_role role;
	int stage;
	uint32_t function;
	int64_t self_samples, total_samples, self_ns, total_ns;
	double self_pct, total_pct;
	int32_t total_rank; /* 0: not among the top by total */
	bool kept;
};

/* Groups by role, then stage, samples with no stage open last. */
static int compare_groups(const struct merged *a, const struct merged *b)
{
	int a_stage = a->stage < 0 ? PO_STAGE_COUNT : a->stage;
	int b_stage = b->stage < 0 ? PO_STAGE_COUNT : b->stage;

	if (a->role != b->role)
		return a->role < b->role ? -1 : 1;
	return a_stage < b_stage ? -1 : a_stage > b_stage;
}

static int compare_group_then_self(const void *left, const void *right)
{
	const struct merged *a = left, *b = right;

	if (compare_groups(a, b))
		return compare_groups(a, b);
	if (a->self_pct != b->self_pct)
		return a->self_pct > b->self_pct ? -1 : 1;
	if (a->total_pct != b->total_pct)
		return a->total_pct > b->total_pct ? -1 : 1;
	return a->function < b->function ? -1 : a->function > b->function;
}

static int compare_total(const void *left, const void *right)
{
	const struct merged *const *a = left, *const *b = right;

	if ((*a)->total_pct != (*b)->total_pct)
		return (*a)->total_pct > (*b)->total_pct ? -1 : 1;
	return (*a)->function < (*b)->function ? -1 : (*a)->function > (*b)->function;
}

/* The cells merged per (role, stage, function) into *out (owned by the caller). */
static enum po_status merge_cells(const struct po_hotspot_tracker *t,
				  const struct po_analysis *analysis,
				  enum po_role (*role_of)(const struct po_analysis *, int32_t),
				  struct merged **out, size_t *count)
{
	struct merged *merged = calloc(t->cell_count + 1, sizeof(*merged));
	struct po_map index = {0};
	size_t used = 0;

	if (!merged)
		return PO_STATUS_NOMEM;
	for (size_t i = 0; i < t->cell_count; i++) {
		const struct hotspot_cell *cell = &t->cells[i];
		enum po_role role = role_of(analysis, cell->pid);
		bool created;
		struct po_map_entry *entry =
		    po_map_upsert(&index, (uint64_t)role << 32 | (uint32_t)(cell->stage + 1),
				  cell->function, &created);
		struct merged *m;

		if (!entry) {
			po_map_free(&index);
			free(merged);
			return PO_STATUS_NOMEM;
		}
		if (created) {
			entry->value = used;
			merged[used++] = (struct merged){
			    .role = role, .stage = cell->stage, .function = cell->function};
		}
		m = &merged[entry->value];
		m->self_samples += cell->self_samples;
		m->total_samples += cell->total_samples;
		m->self_ns = po_add_sat(m->self_ns, cell->self_ns);
		m->total_ns = po_add_sat(m->total_ns, cell->total_ns);
	}
	po_map_free(&index);
	*out = merged;
	*count = used;
	return PO_STATUS_OK;
}

static double share(int64_t part, int64_t whole)
{
	return whole > 0 ? 100.0 * (double)part / (double)whole : 0.0;
}

/* The shares of a group's functions, and the top ones by total share marked kept. */
static enum po_status rank_group(struct merged *group, size_t count, const struct merged *total)
{
	bool by_time = total->total_ns > 0;
	struct merged **order = calloc(count + 1, sizeof(*order));

	if (!order)
		return PO_STATUS_NOMEM;
	for (size_t i = 0; i < count; i++) {
		struct merged *m = &group[i];

		m->self_pct = by_time ? share(m->self_ns, total->total_ns)
				      : share(m->self_samples, total->total_samples);
		m->total_pct = by_time ? share(m->total_ns, total->total_ns)
				       : share(m->total_samples, total->total_samples);
		order[i] = m;
	}
	qsort(order, count, sizeof(*order), compare_total);
	/*
	 * By total share, the functions on (nearly) every sample's stack come first: the entry
	 * chain (<module>, the worker loop, the fetch) says nothing and, deeper than the list,
	 * would push out every function below it. They are kept only by their self share.
	 */
	for (size_t i = 0, kept = 0; i < count && kept < PO_HOTSPOTS_TOP; i++) {
		if (order[i]->total_pct >= PO_HOTSPOT_EVERY_STACK_PCT)
			continue;
		order[i]->kept = true;
		order[i]->total_rank = (int32_t)++kept;
	}
	free(order);
	return PO_STATUS_OK;
}

static int compare_labels(const void *left, const void *right)
{
	const struct po_hotspot_label *a = left, *b = right;

	if (a->samples != b->samples)
		return a->samples > b->samples ? -1 : 1;
	return strcmp(a->label, b->label);
}

/* The group's labels: the label cells of its role and stage merged, most samples first. */
static enum po_status emit_labels(const struct po_hotspot_tracker *t, struct po_analysis *analysis,
				  enum po_role (*role_of)(const struct po_analysis *, int32_t),
				  struct po_hotspot_group *group)
{
	struct po_hotspot_label *labels = calloc(t->label_count + 1, sizeof(*labels));
	int64_t *cpu_ns = calloc(t->label_count + 1, sizeof(*cpu_ns));
	size_t count = 0;

	if (!labels || !cpu_ns) {
		free(labels);
		free(cpu_ns);
		return PO_STATUS_NOMEM;
	}
	for (size_t i = 0; i < t->label_count; i++) {
		const struct hotspot_label_cell *cell = &t->labels[i];
		size_t k = 0;

		if (cell->stage != group->stage || role_of(analysis, cell->pid) != group->role)
			continue;
		while (k < count && labels[k].label != cell->label)
			k++;
		count += k == count;
		labels[k].label = cell->label;
		labels[k].samples += cell->samples;
		cpu_ns[k] = po_add_sat(cpu_ns[k], cell->cpu_ns);
	}
	for (size_t k = 0; k < count; k++)
		labels[k].pct = group->cpu_ns > 0 ? share(cpu_ns[k], group->cpu_ns)
						  : share(labels[k].samples, group->samples);
	po_sort(labels, count, sizeof(*labels), compare_labels);
	group->label_count = count < PO_HOTSPOT_LABELS_TOP ? count : PO_HOTSPOT_LABELS_TOP;
	group->labels = po_arena_alloc(analysis->arena, (group->label_count + 1) * sizeof(*labels));
	if (group->labels)
		memcpy(group->labels, labels, group->label_count * sizeof(*labels));
	free(labels);
	free(cpu_ns);
	return group->labels ? PO_STATUS_OK : PO_STATUS_NOMEM;
}

static enum po_status emit_group(const struct po_hotspot_tracker *t, struct po_analysis *analysis,
				 struct merged *group, size_t count, const struct merged *total,
				 struct po_hotspot_group *out)
{
	size_t kept = 0;

	*out = (struct po_hotspot_group){.role = total->role,
					 .stage = total->stage,
					 .samples = total->total_samples,
					 .cpu_ns = total->total_ns};
	if (rank_group(group, count, total) != PO_STATUS_OK)
		return PO_STATUS_NOMEM;
	qsort(group, count, sizeof(*group), compare_group_then_self);
	for (size_t i = 0; i < count; i++)
		group[i].kept |= i < PO_HOTSPOTS_TOP;
	out->hotspots = po_arena_alloc(analysis->arena, (count + 1) * sizeof(*out->hotspots));
	if (!out->hotspots)
		return PO_STATUS_NOMEM;
	for (size_t i = 0; i < count; i++) {
		const struct hotspot_function *f = &t->functions[group[i].function];
		int32_t rank = group[i].total_rank;

		if (!group[i].kept)
			continue;
		out->hotspots[kept++] =
		    (struct po_hotspot){.function = f->function,
					.file = f->file,
					.line = f->line,
					.samples = group[i].self_samples,
					.total_samples = group[i].total_samples,
					.self_pct = group[i].self_pct,
					.total_pct = group[i].total_pct,
					.total_rank = rank,
					.listed = i < PO_HOTSPOT_LISTED_BY_SELF ||
						  (rank > 0 && rank <= PO_HOTSPOT_LISTED_BY_TOTAL)};
	}
	out->hotspot_count = kept;
	return PO_STATUS_OK;
}

/* ---- flame graphs ---- */

/* A call path merged over the processes of one role. */
struct flame_merged {
	enum po_role role;
	uint32_t parent; /* merged index; UINT32_MAX: a root */
	uint32_t function;
	int64_t samples, self_samples;
	int64_t time_ns, self_time_ns;
	uint32_t first_child, next_sibling; /* UINT32_MAX: none */
};

struct flame_build {
	const struct po_hotspot_tracker *t;
	struct flame_merged *nodes;
	size_t count;
	uint32_t *order; /* scratch: children to sort */
};

/* Functions by name, then file and line: the order of siblings in a flame graph. */
static int compare_function(const struct po_hotspot_tracker *t, uint32_t a, uint32_t b)
{
	const struct hotspot_function *x = &t->functions[a], *y = &t->functions[b];
	int order = strcmp(x->function, y->function);

	if (!order)
		order = strcmp(x->file, y->file);
	return order ? order : (x->line > y->line) - (x->line < y->line);
}

/* The paths merged per (role, merged parent, function), parents first. */
static enum po_status merge_paths(struct flame_build *b, const struct po_analysis *analysis,
				  enum po_role (*role_of)(const struct po_analysis *, int32_t))
{
	const struct po_hotspot_tracker *t = b->t;
	uint32_t *merged_of = malloc((t->path_count + 1) * sizeof(uint32_t));
	struct po_map index = {0};
	enum po_status status = PO_STATUS_OK;

	b->nodes = calloc(t->path_count + 1, sizeof(*b->nodes));
	if (!merged_of || !b->nodes) {
		free(merged_of);
		return PO_STATUS_NOMEM;
	}
	for (size_t i = 0; i < t->path_count; i++) {
		const struct flame_node *path = &t->paths[i];
		enum po_role role = role_of(analysis, path->pid);
		uint32_t parent = path->parent == UINT32_MAX ? UINT32_MAX : merged_of[path->parent];
		bool created;
		struct po_map_entry *entry =
		    po_map_upsert(&index, (uint64_t)role << 32 | (uint32_t)(parent + 1),
				  path->function, &created);

		if (!entry) {
			status = PO_STATUS_NOMEM;
			break;
		}
		if (created) {
			entry->value = b->count;
			b->nodes[b->count++] = (struct flame_merged){.role = role,
								     .parent = parent,
								     .function = path->function,
								     .first_child = UINT32_MAX,
								     .next_sibling = UINT32_MAX};
		}
		merged_of[i] = (uint32_t)entry->value;
		b->nodes[entry->value].samples += path->samples;
		b->nodes[entry->value].self_samples += path->self_samples;
		b->nodes[entry->value].time_ns =
		    po_add_sat(b->nodes[entry->value].time_ns, path->time_ns);
		b->nodes[entry->value].self_time_ns =
		    po_add_sat(b->nodes[entry->value].self_time_ns, path->self_time_ns);
	}
	po_map_free(&index);
	free(merged_of);
	return status;
}

static int compare_siblings(const void *left, const void *right, void *context)
{
	const struct flame_build *b = context;
	uint32_t x = *(const uint32_t *)left, y = *(const uint32_t *)right;

	return compare_function(b->t, b->nodes[x].function, b->nodes[y].function);
}

/*
 * Links each node's children in function order (roots too, per role, under a virtual
 * root per role: roots[role]).
 */
static void link_children(struct flame_build *b, uint32_t *roots)
{
	size_t count = 0;

	/* children in reverse sorted order, pushed to the front of their lists */
	for (size_t i = 0; i < b->count; i++)
		b->order[count++] = (uint32_t)i;
	qsort_r(b->order, count, sizeof(*b->order), compare_siblings, b);
	for (size_t k = count; k-- > 0;) {
		struct flame_merged *node = &b->nodes[b->order[k]];
		uint32_t *head = node->parent == UINT32_MAX ? &roots[node->role]
							    : &b->nodes[node->parent].first_child;

		node->next_sibling = *head;
		*head = b->order[k];
	}
}

/*
 * One role's flame graph: its paths of at least PO_FLAME_MIN_PERMILLE of the time the
 * role's samples stand for (of their count when they carry no time), depth first.
 */
static enum po_status emit_flame(struct flame_build *b, uint32_t root, enum po_role role,
				 struct po_analysis *analysis, struct po_flame *out)
{
	uint32_t *stack = b->order; /* reused: a node's depth-first successors */
	int32_t *depth_of = malloc((b->count + 1) * sizeof(int32_t));
	size_t top = 0, kept = 0;
	int64_t total = 0, total_ns = 0;

	*out = (struct po_flame){.role = role};
	for (uint32_t n = root; n != UINT32_MAX; n = b->nodes[n].next_sibling) {
		total += b->nodes[n].samples;
		total_ns = po_add_sat(total_ns, b->nodes[n].time_ns);
	}
	out->samples = total;
	out->time_ns = total_ns;
	out->nodes = po_arena_alloc(analysis->arena, (b->count + 1) * sizeof(*out->nodes));
	if (!depth_of || !out->nodes) {
		free(depth_of);
		return PO_STATUS_NOMEM;
	}
	/* push the roots last to first, so the first comes off the stack first */
	for (uint32_t n = root; n != UINT32_MAX; n = b->nodes[n].next_sibling)
		top++;
	for (uint32_t n = root, k = 0; n != UINT32_MAX; n = b->nodes[n].next_sibling, k++) {
		stack[top - 1 - k] = n;
		depth_of[n] = 0;
	}
	while (top) {
		uint32_t n = stack[--top], children = 0;
		const struct flame_merged *node = &b->nodes[n];
		const struct hotspot_function *f = &b->t->functions[node->function];

		if (total_ns > 0
			? (double)node->time_ns * 1000 < (double)total_ns * PO_FLAME_MIN_PERMILLE
			: node->samples * 1000 < total * PO_FLAME_MIN_PERMILLE)
			continue;
		out->nodes[kept++] = (struct po_flame_node){.depth = depth_of[n],
							    .function = f->function,
							    .file = f->file,
							    .line = f->line,
							    .samples = node->samples,
							    .self_samples = node->self_samples,
							    .time_ns = node->time_ns,
							    .self_time_ns = node->self_time_ns};
		if (depth_of[n] > out->max_depth)
			out->max_depth = depth_of[n];
		for (uint32_t c = node->first_child; c != UINT32_MAX; c = b->nodes[c].next_sibling)
			children++;
		for (uint32_t c = node->first_child, k = 0; c != UINT32_MAX;
		     c = b->nodes[c].next_sibling, k++) {
			stack[top + children - 1 - k] = c;
			depth_of[c] = depth_of[n] + 1;
		}
		top += children;
	}
	out->node_count = kept;
	free(depth_of);
	return PO_STATUS_OK;
}

static enum po_status build_flames(const struct po_hotspot_tracker *t, struct po_analysis *analysis,
				   enum po_role (*role_of)(const struct po_analysis *, int32_t))
{
	struct flame_build b = {.t = t};
	uint32_t roots[PO_ROLE_COUNT];
	enum po_status status;

	analysis->flames = NULL;
	analysis->flame_count = 0;
	if (!t->path_count)
		return PO_STATUS_OK;
	status = merge_paths(&b, analysis, role_of);
	b.order = malloc((b.count + 1) * sizeof(*b.order));
	if (status == PO_STATUS_OK && !b.order)
		status = PO_STATUS_NOMEM;
	if (status == PO_STATUS_OK) {
		for (int r = 0; r < PO_ROLE_COUNT; r++)
			roots[r] = UINT32_MAX;
		link_children(&b, roots);
		analysis->flames =
		    po_arena_alloc(analysis->arena, PO_ROLE_COUNT * sizeof(*analysis->flames));
		if (!analysis->flames)
			status = PO_STATUS_NOMEM;
	}
	for (int r = 0; status == PO_STATUS_OK && r < PO_ROLE_COUNT; r++) {
		if (roots[r] == UINT32_MAX)
			continue;
		status = emit_flame(&b, roots[r], (enum po_role)r, analysis,
				    &analysis->flames[analysis->flame_count]);
		analysis->flame_count += status == PO_STATUS_OK;
	}
	if (status != PO_STATUS_OK)
		analysis->flame_count = 0;
	free(b.nodes);
	free(b.order);
	return status;
}

/* Sorts so that each group's total comes first (its function is the largest index). */
static int compare_total_first(const void *left, const void *right)
{
	const struct merged *a = left, *b = right;

	if (compare_groups(a, b))
		return compare_groups(a, b);
	return a->function > b->function ? -1 : a->function < b->function;
}

enum po_status hotspot_tracker_build(const struct po_hotspot_tracker *t,
				     struct po_analysis *analysis,
				     enum po_role (*role_of)(const struct po_analysis *, int32_t))
{
	struct merged *merged;
	size_t count, groups = 0, first;
	enum po_status status;

	analysis->stack_samples = t->sample_count;
	analysis->hotspot_groups = NULL;
	analysis->hotspot_group_count = 0;
	analysis->flames = NULL;
	analysis->flame_count = 0;
	if (!t->cell_count)
		return PO_STATUS_OK;
	status = merge_cells(t, analysis, role_of, &merged, &count);
	if (status != PO_STATUS_OK)
		return status;
	qsort(merged, count, sizeof(*merged), compare_total_first);
	analysis->hotspot_groups =
	    po_arena_alloc(analysis->arena, (count + 1) * sizeof(*analysis->hotspot_groups));
	for (first = 0; status == PO_STATUS_OK && first < count;) {
		size_t end = first + 1;

		if (!analysis->hotspot_groups) {
			status = PO_STATUS_NOMEM;
			break;
		}
		while (end < count && !compare_groups(&merged[first], &merged[end]))
			end++;
		status = emit_group(t, analysis, &merged[first + 1], end - first - 1,
				    &merged[first], &analysis->hotspot_groups[groups]);
		if (status == PO_STATUS_OK)
			status =
			    emit_labels(t, analysis, role_of, &analysis->hotspot_groups[groups]);
		groups++;
		first = end;
	}
	analysis->hotspot_group_count = status == PO_STATUS_OK ? groups : 0;
	free(merged);
	return status == PO_STATUS_OK ? build_flames(t, analysis, role_of) : status;
}
