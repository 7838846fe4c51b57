/*
 * decode.c: babeltrace2 messages to typed events. An event class is resolved once (its
 * kind from the name, the indexes of the members each kind reads); every later event of
 * the class is decoded through those indexes, with no string compare and no allocation.
 */
#include <stdlib.h>
#include <string.h>

#include "../common/isolate.h"
#include "decode.h"

/* The trace event names, generated from the one table of event kinds. */
static const char *const kind_trace_names[PO_EV_COUNT] = {
#define PO_X(name, trace_name) [PO_EV_##name] = trace_name,
    PO_EVENT_KINDS(PO_X)
#undef PO_X
};

/* The payload members each kind reads; the fill functions use the same positions. */
static const char *const kind_members[PO_EV_COUNT][PO_MEMBERS_MAX] = {
    [PO_EV_RUN_BEGIN] = {"framework", "cpu_count"},
    [PO_EV_RUN_CONFIG] = {"key", "value"},
    [PO_EV_WORKER_BEGIN] = {"worker_id", "parent_pid"},
    [PO_EV_WORKER_END] = {"worker_id", "parent_pid"},
    [PO_EV_EPOCH_BEGIN] = {"epoch"},
    [PO_EV_EPOCH_END] = {"epoch"},
    [PO_EV_STEP_BEGIN] = {"step", "epoch", "batch_size"},
    [PO_EV_STEP_END] = {"step", "epoch", "batch_size"},
    [PO_EV_STAGE_BEGIN] = {"stage", "label", "batch", "sample", "cpu_ns"},
    [PO_EV_STAGE_END] = {"stage", "label", "batch", "sample", "cpu_ns"},
    [PO_EV_BATCH_READY] = {"batch", "queue_depth"},
    [PO_EV_COUNTER] = {"kind", "device", "value"},
    [PO_EV_MEM_ALLOC] = {"addr", "bytes", "device", "label"},
    [PO_EV_MEM_FREE] = {"addr", "bytes", "device", "label"},
    [PO_EV_GPU_LAUNCH] = {"device", "stream", "correlation_id", "name"},
    [PO_EV_GPU_ACTIVITY] = {"device", "stream", "kind", "name", "bytes", "start_ns", "end_ns",
			    "correlation_id"},
    [PO_EV_GPU_SYNC_BEGIN] = {"device", "stream"},
    [PO_EV_GPU_SYNC_END] = {"device", "stream"},
    [PO_EV_PROCESS] = {"recording", "parent_pid", "reason"},
    [PO_EV_GPU_KERNEL] = {"device", "stream", "name", "start_ns", "end_ns", "correlation_id",
			  "grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z",
			  "registers_per_thread", "shared_bytes"},
    [PO_EV_GPU_DEVICE] = {"device", "name", "memory_bytes", "multiprocessors", "capability_major",
			  "capability_minor"},
    [PO_EV_RANK] = {"rank", "local_rank", "world_size", "host"},
    [PO_EV_COLLECTIVE_BEGIN] = {"group", "op", "bytes", "seq", "device"},
    [PO_EV_COLLECTIVE_END] = {"group", "op", "bytes", "seq", "device"},
    [PO_EV_CODE] = {"code_id", "function", "file", "first_line"},
    [PO_EV_STACK_SAMPLE] = {"tid", "cpu_ns", "code_ids", "lines"},
    [PO_EV_NATIVE_STACK] = {"tid", "weight_ns", "pcs"},
    [PO_EV_SELF_COST] = {"hooks_ns", "gc_ns", "threads_ns"},
    [PO_EV_LIBC_MALLOC] = {"size", "ptr"},
    [PO_EV_LIBC_CALLOC] = {"nmemb", "size", "ptr"},
    [PO_EV_LIBC_REALLOC] = {"in_ptr", "size", "ptr"},
    [PO_EV_LIBC_MEMALIGN] = {"alignment", "size", "ptr"},
    [PO_EV_LIBC_POSIX_MEMALIGN] = {"out_ptr", "alignment", "size", "result"},
    [PO_EV_LIBC_FREE] = {"ptr"},
    [PO_EV_BIN_INFO] = {"baddr", "memsz", "path"},
    [PO_EV_BIN_BUILD_ID] = {"baddr", "build_id"},
    [PO_EV_LIB_LOAD] = {"baddr", "memsz", "path"},
    [PO_EV_LIB_BUILD_ID] = {"baddr", "build_id"},
    [PO_EV_LIB_UNLOAD] = {"baddr"},
    [PO_EV_DL_OPEN] = {"baddr", "memsz", "path"},
    [PO_EV_DL_MOPEN] = {"baddr", "memsz", "path"},
    [PO_EV_DL_BUILD_ID] = {"baddr", "build_id"},
    [PO_EV_DL_CLOSE] = {"baddr"},
};

/* ---- resolution, once per event class ---- */

static enum po_member_type member_type(const bt_field_class *field_class)
{
	bt_field_class_type type = bt_field_class_get_type(field_class);

	if (bt_field_class_type_is(type, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER))
		return PO_MEMBER_SIGNED;
	if (bt_field_class_type_is(type, BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER))
		return PO_MEMBER_UNSIGNED;
	if (type == BT_FIELD_CLASS_TYPE_STRING)
		return PO_MEMBER_STRING;
	if (bt_field_class_type_is(type, BT_FIELD_CLASS_TYPE_ARRAY) &&
	    bt_field_class_type_is(
		bt_field_class_get_type(
		    bt_field_class_array_borrow_element_field_class_const(field_class)),
		BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER))
		return PO_MEMBER_ARRAY;
	return PO_MEMBER_ABSENT;
}

/* Finds a member by name; CTF 1.8 names may keep a leading underscore ("_vpid"). */
static struct po_member find_member(const bt_field_class *structure, const char *name)
{
	struct po_member member = {0, PO_MEMBER_ABSENT};
	uint64_t count;

	if (!structure || !name)
		return member;
	count = bt_field_class_structure_get_member_count(structure);
	for (uint64_t i = 0; i < count; i++) {
		const bt_field_class_structure_member *entry =
		    bt_field_class_structure_borrow_member_by_index_const(structure, i);
		const char *entry_name = bt_field_class_structure_member_get_name(entry);

		if (strcmp(entry_name, name) == 0 ||
		    (entry_name[0] == '_' && strcmp(entry_name + 1, name) == 0)) {
			member.index = (uint32_t)i;
			member.type = member_type(
			    bt_field_class_structure_member_borrow_field_class_const(entry));
			return member;
		}
	}
	return member;
}

static int kind_of_name(const char *name)
{
	if (!name)
		return PO_EV_COUNT;
	for (int kind = 0; kind < PO_EV_DISCARDED_EVENTS; kind++) {
		if (strcmp(kind_trace_names[kind], name) == 0)
			return kind;
	}
	return PO_EV_COUNT;
}

/* A foreign class named like a profopt event: see po_ingest_stats.unknown_profopt_events. */
static bool named_like_profopt(const char *name)
{
	static const char provider[] = "profopt";
	const char *colon = name ? strchr(name, ':') : NULL;
	int differences = 0;

	if (!colon || colon - name != (ptrdiff_t)(sizeof(provider) - 1))
		return false;
	for (size_t i = 0; i < sizeof(provider) - 1; i++)
		differences += name[i] != provider[i];
	return differences <= 1;
}

static int32_t trace_env_pid(const bt_trace *trace)
{
	const bt_value *value =
	    bt_trace_borrow_environment_entry_value_by_name_const(trace, "vpid");

	if (value && bt_value_get_type(value) == BT_VALUE_TYPE_SIGNED_INTEGER)
		return (int32_t)bt_value_integer_signed_get(value);
	if (value && bt_value_get_type(value) == BT_VALUE_TYPE_UNSIGNED_INTEGER)
		return (int32_t)bt_value_integer_unsigned_get(value);
	return -1;
}

/*
 * ingest.c names each trace object after its index in the directory's trace list; for an
 * LTTng trace, src.ctf.fs puts the environment's hostname in front ("HOST/INDEX").
 */
static uint32_t trace_id_of(const struct po_decoder *decoder, const bt_trace *trace)
{
	const char *name = bt_trace_get_name(trace);
	const char *slash = name ? strrchr(name, '/') : NULL;
	unsigned long id = name ? strtoul(slash ? slash + 1 : name, NULL, 10) : 0;

	return id < decoder->trace_count ? (uint32_t)id : 0;
}

static inline int64_t cycles_to_ns(uint64_t cycles, uint64_t frequency)
{
	if (frequency == 1000000000u)
		return (int64_t)cycles;
	return (int64_t)((unsigned __int128)cycles * 1000000000u / frequency);
}

/* The clock's offset from its origin: what the lanes add to an event's time to merge. */
static int64_t clock_offset_ns(const bt_clock_class *clock, uint64_t frequency)
{
	int64_t seconds;
	uint64_t cycles;

	if (!clock || !frequency)
		return 0;
	bt_clock_class_get_offset(clock, &seconds, &cycles);
	return seconds * 1000000000 + cycles_to_ns(cycles, frequency);
}

static void resolve_class(const struct po_decoder *decoder, struct po_class_entry *entry,
			  const bt_event *event)
{
	const bt_event_class *event_class = entry->event_class;
	const bt_stream_class *stream_class = bt_event_class_borrow_stream_class_const(event_class);
	const bt_field_class *payload =
	    bt_event_class_borrow_payload_field_class_const(event_class);
	const bt_field_class *context =
	    bt_stream_class_borrow_event_common_context_field_class_const(stream_class);
	const bt_clock_class *clock =
	    bt_stream_class_borrow_default_clock_class_const(stream_class);
	const bt_trace *trace = bt_stream_borrow_trace_const(bt_event_borrow_stream_const(event));

	entry->kind = kind_of_name(bt_event_class_get_name(event_class));
	entry->profopt_like =
	    entry->kind == PO_EV_COUNT && named_like_profopt(bt_event_class_get_name(event_class));
	if (entry->profopt_like && !decoder->stats->unknown_profopt_name[0]) {
		const char *name = bt_event_class_get_name(event_class);

		/* The metadata's text, shown in a warning: clean, cut between characters. */
		po_text_clean(name, strlen(name), decoder->stats->unknown_profopt_name,
			      sizeof(decoder->stats->unknown_profopt_name), NULL);
	}
	entry->trace_id = trace_id_of(decoder, trace);
	entry->env_pid = trace_env_pid(trace);
	entry->frequency = clock ? bt_clock_class_get_frequency(clock) : 0;
	entry->offset_ns = clock_offset_ns(clock, entry->frequency);
	if (entry->kind == PO_EV_COUNT)
		return;
	for (int i = 0; i < PO_MEMBERS_MAX; i++)
		entry->payload[i] = find_member(payload, kind_members[entry->kind][i]);
	entry->vpid = find_member(context, "vpid");
	entry->vtid = find_member(context, "vtid");
	entry->procname = find_member(context, "procname");
	entry->ip = find_member(context, "ip");
}

static size_t class_slot(const struct po_decoder *decoder, const bt_event_class *event_class)
{
	uintptr_t key = (uintptr_t)event_class;
	size_t mask = decoder->class_capacity - 1;
	size_t slot = (size_t)((key >> 4) * 0x9E3779B97F4A7C15ull >> 20) & mask;

	while (decoder->classes[slot].event_class &&
	       decoder->classes[slot].event_class != event_class)
		slot = (slot + 1) & mask;
	return slot;
}

static bool classes_grow(struct po_decoder *decoder)
{
	struct po_class_entry *old = decoder->classes;
	size_t old_capacity = decoder->class_capacity;
	struct po_class_entry *bigger = calloc(old_capacity * 2, sizeof(*bigger));

	if (!bigger)
		return false;
	decoder->classes = bigger;
	decoder->class_capacity = old_capacity * 2;
	for (size_t i = 0; i < old_capacity; i++) {
		if (old[i].event_class)
			decoder->classes[class_slot(decoder, old[i].event_class)] = old[i];
	}
	free(old);
	decoder->last = NULL;
	return true;
}

/* The entry of an event's class, resolved on first sight; NULL when out of memory. */
static struct po_class_entry *class_entry(struct po_decoder *decoder, const bt_event *event)
{
	const bt_event_class *event_class = bt_event_borrow_class_const(event);
	struct po_class_entry *entry;

	if (decoder->last && decoder->last->event_class == event_class)
		return decoder->last;
	entry = &decoder->classes[class_slot(decoder, event_class)];
	if (!entry->event_class) {
		if ((decoder->class_count + 1) * 2 > decoder->class_capacity) {
			if (!classes_grow(decoder))
				return NULL;
			entry = &decoder->classes[class_slot(decoder, event_class)];
		}
		entry->event_class = event_class;
		resolve_class(decoder, entry, event);
		decoder->class_count++;
	}
	decoder->last = entry;
	return entry;
}

/* ---- reading members through resolved indexes ---- */

static inline const bt_field *member_field(const bt_field *structure, const struct po_member *m)
{
	return bt_field_structure_borrow_member_field_by_index_const(structure, m->index);
}

static inline int64_t member_int(const bt_field *structure, const struct po_member *m)
{
	if (!structure)
		return -1;
	if (m->type == PO_MEMBER_SIGNED)
		return bt_field_integer_signed_get_value(member_field(structure, m));
	if (m->type == PO_MEMBER_UNSIGNED)
		return (int64_t)bt_field_integer_unsigned_get_value(member_field(structure, m));
	return -1;
}

static inline uint64_t member_u64(const bt_field *structure, const struct po_member *m)
{
	if (!structure)
		return 0;
	if (m->type == PO_MEMBER_UNSIGNED)
		return bt_field_integer_unsigned_get_value(member_field(structure, m));
	if (m->type == PO_MEMBER_SIGNED)
		return (uint64_t)bt_field_integer_signed_get_value(member_field(structure, m));
	return 0;
}

/*
 * A string by its length: babeltrace2 2.0.4 may return the previous event's text for an
 * empty string field, so the length decides. Raw bytes: po_decoder_handle() cleans every
 * text member of the event before it is handed on (event_text.h).
 */
static inline struct po_str member_str(const bt_field *structure, const struct po_member *m)
{
	struct po_str text = {NULL, 0};
	const bt_field *field;

	if (!structure || m->type != PO_MEMBER_STRING)
		return text;
	field = member_field(structure, m);
	text.len = (size_t)bt_field_string_get_length(field);
	if (text.len)
		text.ptr = bt_field_string_get_value(field);
	return text;
}

/* An array of bytes, at most max of them kept; returns how many. */
static uint8_t member_bytes(const bt_field *structure, const struct po_member *m, uint8_t *out,
			    uint8_t max)
{
	const bt_field *array;
	uint64_t length;

	if (!structure || m->type != PO_MEMBER_ARRAY)
		return 0;
	array = member_field(structure, m);
	length = bt_field_array_get_length(array);
	if (length > max)
		length = max;
	for (uint64_t i = 0; i < length; i++)
		out[i] = (uint8_t)bt_field_integer_unsigned_get_value(
		    bt_field_array_borrow_element_field_by_index_const(array, i));
	return (uint8_t)length;
}

/* An enum member in [0, count); false when absent or out of range (a malformed event). */
static inline bool member_enum(const bt_field *structure, const struct po_member *m, int count,
			       int *value)
{
	int64_t raw;

	if (m->type != PO_MEMBER_SIGNED && m->type != PO_MEMBER_UNSIGNED)
		return false;
	raw = member_int(structure, m);
	if (raw < 0 || raw >= count)
		return false;
	*value = (int)raw;
	return true;
}

/* ---- filling the typed event ---- */

static bool fill_stage(const bt_field *p, const struct po_member *m, struct po_event *ev)
{
	int stage;

	if (!member_enum(p, &m[0], PO_STAGE_COUNT, &stage))
		return false;
	ev->u.stage.stage = (enum po_stage)stage;
	ev->u.stage.label = member_str(p, &m[1]);
	ev->u.stage.batch = member_int(p, &m[2]);
	ev->u.stage.sample = member_int(p, &m[3]);
	ev->u.stage.cpu_ns = member_int(p, &m[4]);
	return true;
}

static bool fill_counter(const bt_field *p, const struct po_member *m, struct po_event *ev)
{
	int kind;

	if (!member_enum(p, &m[0], PO_COUNTER_COUNT, &kind))
		return false;
	ev->u.counter.kind = (enum po_counter)kind;
	ev->u.counter.device = (int32_t)member_int(p, &m[1]);
	ev->u.counter.value = member_int(p, &m[2]);
	return true;
}

static bool fill_gpu_activity(const bt_field *p, const struct po_member *m, struct po_event *ev)
{
	int kind;

	if (!member_enum(p, &m[2], PO_GPU_KIND_COUNT, &kind))
		return false;
	ev->u.gpu_activity.device = (int32_t)member_int(p, &m[0]);
	ev->u.gpu_activity.stream = (int32_t)member_int(p, &m[1]);
	ev->u.gpu_activity.kind = (enum po_gpu_kind)kind;
	ev->u.gpu_activity.name = member_str(p, &m[3]);
	ev->u.gpu_activity.bytes = member_u64(p, &m[4]);
	ev->u.gpu_activity.start_ns = member_int(p, &m[5]);
	ev->u.gpu_activity.end_ns = member_int(p, &m[6]);
	ev->u.gpu_activity.correlation_id = member_u64(p, &m[7]);
	ev->u.gpu_activity.grid_blocks = 0;
	ev->u.gpu_activity.block_threads = 0;
	ev->u.gpu_activity.shared_bytes = 0;
	ev->u.gpu_activity.registers_per_thread = 0;
	return true;
}

/* A launch dimension: 0 (unknown) when out of range. */
static uint64_t dimension(const bt_field *p, const struct po_member *m)
{
	uint64_t value = member_u64(p, m);

	return value <= UINT32_MAX ? value : 0;
}

/* profopt:gpu_kernel, decoded as a kernel's GPU_ACTIVITY with its launch shape. */
static bool fill_gpu_kernel(const bt_field *p, const struct po_member *m, struct po_event *ev)
{
	uint64_t grid = dimension(p, &m[6]) * dimension(p, &m[7]) * dimension(p, &m[8]);
	uint64_t block = dimension(p, &m[9]) * dimension(p, &m[10]) * dimension(p, &m[11]);
	uint64_t registers = member_u64(p, &m[12]), shared = member_u64(p, &m[13]);

	ev->kind = PO_EV_GPU_ACTIVITY;
	ev->u.gpu_activity.device = (int32_t)member_int(p, &m[0]);
	ev->u.gpu_activity.stream = (int32_t)member_int(p, &m[1]);
	ev->u.gpu_activity.kind = PO_GPU_KERNEL;
	ev->u.gpu_activity.name = member_str(p, &m[2]);
	ev->u.gpu_activity.bytes = 0;
	ev->u.gpu_activity.start_ns = member_int(p, &m[3]);
	ev->u.gpu_activity.end_ns = member_int(p, &m[4]);
	ev->u.gpu_activity.correlation_id = member_u64(p, &m[5]);
	ev->u.gpu_activity.grid_blocks = grid;
	ev->u.gpu_activity.block_threads = block <= UINT32_MAX ? (uint32_t)block : 0;
	ev->u.gpu_activity.shared_bytes = shared <= UINT32_MAX ? (uint32_t)shared : 0;
	ev->u.gpu_activity.registers_per_thread = registers <= UINT16_MAX ? (uint16_t)registers : 0;
	return true;
}

static int16_t small_int(const bt_field *p, const struct po_member *m)
{
	int64_t value = member_int(p, m);

	return value >= 0 && value <= INT16_MAX ? (int16_t)value : -1;
}

static bool fill_gpu_device(const bt_field *p, const struct po_member *m, struct po_event *ev)
{
	int64_t multiprocessors = member_int(p, &m[3]);

	ev->u.gpu_device.device = (int32_t)member_int(p, &m[0]);
	ev->u.gpu_device.name = member_str(p, &m[1]);
	ev->u.gpu_device.memory_bytes = member_u64(p, &m[2]);
	ev->u.gpu_device.multiprocessors =
	    multiprocessors > 0 && multiprocessors <= INT32_MAX ? (int32_t)multiprocessors : -1;
	ev->u.gpu_device.capability_major = small_int(p, &m[4]);
	ev->u.gpu_device.capability_minor = small_int(p, &m[5]);
	return true;
}

static bool fill_collective(const bt_field *p, const struct po_member *m, struct po_event *ev)
{
	int op;

	if (!member_enum(p, &m[1], PO_COLLECTIVE_OP_COUNT, &op))
		return false;
	ev->u.collective.group = (int32_t)member_int(p, &m[0]);
	ev->u.collective.op = (enum po_collective_op)op;
	ev->u.collective.bytes = member_u64(p, &m[2]);
	ev->u.collective.seq = member_int(p, &m[3]);
	ev->u.collective.device = (int32_t)member_int(p, &m[4]);
	return true;
}

static void fill_libc(int kind, const bt_field *p, const struct po_member *m, struct po_event *ev)
{
	ev->u.libc.in_ptr = 0;
	ev->u.libc.result = -1;
	switch (kind) {
	case PO_EV_LIBC_MALLOC:
		ev->u.libc.size = member_u64(p, &m[0]);
		ev->u.libc.ptr = member_u64(p, &m[1]);
		break;
	case PO_EV_LIBC_CALLOC:
		/* An overflowing calloc fails in libc; saturate rather than wrap. */
		if (__builtin_mul_overflow(member_u64(p, &m[0]), member_u64(p, &m[1]),
					   &ev->u.libc.size))
			ev->u.libc.size = UINT64_MAX;
		ev->u.libc.ptr = member_u64(p, &m[2]);
		break;
	case PO_EV_LIBC_REALLOC:
		ev->u.libc.in_ptr = member_u64(p, &m[0]);
		ev->u.libc.size = member_u64(p, &m[1]);
		ev->u.libc.ptr = member_u64(p, &m[2]);
		break;
	case PO_EV_LIBC_MEMALIGN:
		ev->u.libc.size = member_u64(p, &m[1]);
		ev->u.libc.ptr = member_u64(p, &m[2]);
		break;
	case PO_EV_LIBC_POSIX_MEMALIGN:
		ev->u.libc.ptr = member_u64(p, &m[0]);
		ev->u.libc.size = member_u64(p, &m[2]);
		ev->u.libc.result = (int32_t)member_int(p, &m[3]);
		break;
	default: /* PO_EV_LIBC_FREE */
		ev->u.libc.ptr = member_u64(p, &m[0]);
		ev->u.libc.size = 0;
		break;
	}
}

/* The mapped objects: lttng-ust's base-address state dump and liblttng-ust-dl's events. */
static void fill_bin(int kind, const bt_field *p, const struct po_member *m, struct po_event *ev)
{
	memset(&ev->u.bin, 0, sizeof(ev->u.bin));
	ev->u.bin.base = member_u64(p, &m[0]);
	switch (kind) {
	case PO_EV_BIN_INFO:
	case PO_EV_LIB_LOAD:
	case PO_EV_DL_OPEN:
	case PO_EV_DL_MOPEN:
		ev->u.bin.size = member_u64(p, &m[1]);
		ev->u.bin.path = member_str(p, &m[2]);
		break;
	case PO_EV_BIN_BUILD_ID:
	case PO_EV_LIB_BUILD_ID:
	case PO_EV_DL_BUILD_ID:
		ev->u.bin.build_id_len =
		    member_bytes(p, &m[1], ev->u.bin.build_id, PO_BUILD_ID_MAX);
		break;
	default: /* PO_EV_LIB_UNLOAD, PO_EV_DL_CLOSE */
		break;
	}
}

/*
 * A stack sample's frames, packed into the decoder's buffer (the event points there until
 * it is delivered); false when the two arrays differ in length or a value is out of range.
 */
static bool fill_stack_sample(struct po_decoder *decoder, const bt_field *p,
			      const struct po_member *m, struct po_event *ev)
{
	const bt_field *ids, *lines;
	uint64_t depth;

	if (m[2].type != PO_MEMBER_ARRAY || m[3].type != PO_MEMBER_ARRAY)
		return false;
	ids = member_field(p, &m[2]);
	lines = member_field(p, &m[3]);
	depth = bt_field_array_get_length(ids);
	if (depth != bt_field_array_get_length(lines) || depth > PO_STACK_DEPTH_MAX)
		return false;
	for (uint64_t i = 0; i < depth; i++) {
		uint64_t id = bt_field_integer_unsigned_get_value(
		    bt_field_array_borrow_element_field_by_index_const(ids, i));
		uint64_t line = bt_field_integer_unsigned_get_value(
		    bt_field_array_borrow_element_field_by_index_const(lines, i));

		if (id > UINT32_MAX || line > UINT32_MAX)
			return false;
		decoder->frames[i] = (struct po_stack_frame){(uint32_t)id, (uint32_t)line};
	}
	ev->u.stack_sample.tid = (int32_t)member_int(p, &m[0]);
	ev->u.stack_sample.cpu_ns = member_int(p, &m[1]);
	ev->u.stack_sample.depth = (uint32_t)depth;
	ev->u.stack_sample.frames.ptr = (const char *)decoder->frames;
	ev->u.stack_sample.frames.len = depth * sizeof(decoder->frames[0]);
	return true;
}

/* A native stack's addresses, packed like a stack sample's frames; false when too deep. */
static bool fill_native_stack(struct po_decoder *decoder, const bt_field *p,
			      const struct po_member *m, struct po_event *ev)
{
	const bt_field *pcs;
	uint64_t depth;

	if (m[2].type != PO_MEMBER_ARRAY)
		return false;
	pcs = member_field(p, &m[2]);
	depth = bt_field_array_get_length(pcs);
	if (depth > PO_STACK_DEPTH_MAX)
		return false;
	for (uint64_t i = 0; i < depth; i++)
		decoder->pcs[i] = bt_field_integer_unsigned_get_value(
		    bt_field_array_borrow_element_field_by_index_const(pcs, i));
	ev->u.native_stack.tid = (int32_t)member_int(p, &m[0]);
	ev->u.native_stack.weight_ns = member_int(p, &m[1]);
	ev->u.native_stack.depth = (uint32_t)depth;
	ev->u.native_stack.pcs.ptr = (const char *)decoder->pcs;
	ev->u.native_stack.pcs.len = depth * sizeof(decoder->pcs[0]);
	return true;
}

/* The payload of an event of a known kind; false for a malformed one. */
static bool fill_payload(int kind, const bt_field *p, const struct po_member *m,
			 struct po_event *ev)
{
	switch (kind) {
	case PO_EV_RUN_BEGIN:
		ev->u.run_begin.framework = member_str(p, &m[0]);
		ev->u.run_begin.cpu_count = (int32_t)member_int(p, &m[1]);
		return true;
	case PO_EV_RUN_CONFIG:
		ev->u.run_config.key = member_str(p, &m[0]);
		ev->u.run_config.value = member_str(p, &m[1]);
		return true;
	case PO_EV_RUN_END:
		return true;
	case PO_EV_WORKER_BEGIN:
	case PO_EV_WORKER_END:
		ev->u.worker.worker_id = member_int(p, &m[0]);
		ev->u.worker.parent_pid = (int32_t)member_int(p, &m[1]);
		return true;
	case PO_EV_EPOCH_BEGIN:
	case PO_EV_EPOCH_END:
		ev->u.epoch.epoch = member_int(p, &m[0]);
		return true;
	case PO_EV_STEP_BEGIN:
	case PO_EV_STEP_END:
		ev->u.step.step = member_int(p, &m[0]);
		ev->u.step.epoch = member_int(p, &m[1]);
		ev->u.step.batch_size = member_int(p, &m[2]);
		return true;
	case PO_EV_STAGE_BEGIN:
	case PO_EV_STAGE_END:
		return fill_stage(p, m, ev);
	case PO_EV_BATCH_READY:
		ev->u.batch_ready.batch = member_int(p, &m[0]);
		ev->u.batch_ready.queue_depth = member_int(p, &m[1]);
		return true;
	case PO_EV_COUNTER:
		return fill_counter(p, m, ev);
	case PO_EV_MEM_ALLOC:
	case PO_EV_MEM_FREE:
		ev->u.mem.addr = member_u64(p, &m[0]);
		ev->u.mem.bytes = member_u64(p, &m[1]);
		ev->u.mem.device = (int32_t)member_int(p, &m[2]);
		ev->u.mem.label = member_str(p, &m[3]);
		return true;
	case PO_EV_GPU_LAUNCH:
		ev->u.gpu_launch.device = (int32_t)member_int(p, &m[0]);
		ev->u.gpu_launch.stream = (int32_t)member_int(p, &m[1]);
		ev->u.gpu_launch.correlation_id = member_u64(p, &m[2]);
		ev->u.gpu_launch.name = member_str(p, &m[3]);
		return true;
	case PO_EV_GPU_ACTIVITY:
		return fill_gpu_activity(p, m, ev);
	case PO_EV_GPU_KERNEL:
		return fill_gpu_kernel(p, m, ev);
	case PO_EV_GPU_DEVICE:
		return fill_gpu_device(p, m, ev);
	case PO_EV_GPU_SYNC_BEGIN:
	case PO_EV_GPU_SYNC_END:
		ev->u.gpu_sync.device = (int32_t)member_int(p, &m[0]);
		ev->u.gpu_sync.stream = (int32_t)member_int(p, &m[1]);
		return true;
	case PO_EV_RANK:
		ev->u.rank.rank = (int32_t)member_int(p, &m[0]);
		ev->u.rank.local_rank = (int32_t)member_int(p, &m[1]);
		ev->u.rank.world_size = (int32_t)member_int(p, &m[2]);
		ev->u.rank.host = member_str(p, &m[3]);
		return true;
	case PO_EV_COLLECTIVE_BEGIN:
	case PO_EV_COLLECTIVE_END:
		return fill_collective(p, m, ev);
	case PO_EV_CODE:
		ev->u.code.code_id = (uint32_t)member_u64(p, &m[0]);
		ev->u.code.function = member_str(p, &m[1]);
		ev->u.code.file = member_str(p, &m[2]);
		ev->u.code.first_line = (int32_t)member_int(p, &m[3]);
		return true;
	case PO_EV_SELF_COST:
		ev->u.self_cost.hooks_ns = member_int(p, &m[0]);
		ev->u.self_cost.gc_ns = member_int(p, &m[1]);
		ev->u.self_cost.threads_ns = member_int(p, &m[2]);
		return true;
	case PO_EV_PROCESS:
		ev->u.process.recording = member_str(p, &m[0]);
		ev->u.process.parent_pid = (int32_t)member_int(p, &m[1]);
		ev->u.process.reason = (int32_t)member_int(p, &m[2]);
		return true;
	case PO_EV_BIN_INFO:
	case PO_EV_BIN_BUILD_ID:
	case PO_EV_LIB_LOAD:
	case PO_EV_LIB_BUILD_ID:
	case PO_EV_LIB_UNLOAD:
	case PO_EV_DL_OPEN:
	case PO_EV_DL_MOPEN:
	case PO_EV_DL_BUILD_ID:
	case PO_EV_DL_CLOSE:
		fill_bin(kind, p, m, ev);
		return true;
	default:
		fill_libc(kind, p, m, ev);
		return true;
	}
}

/* The payload of any event; false for a malformed one. */
static bool fill_event(struct po_decoder *decoder, int kind, const bt_field *p,
		       const struct po_member *m, struct po_event *ev)
{
	if (kind == PO_EV_STACK_SAMPLE)
		return fill_stack_sample(decoder, p, m, ev);
	if (kind == PO_EV_NATIVE_STACK)
		return fill_native_stack(decoder, p, m, ev);
	return fill_payload(kind, p, m, ev);
}

/*
 * Hands an event to its lane's queue (the merge key orders it among the lanes), or to the
 * callback when there are no lanes; drops it when salvage replays what was delivered.
 */
static bool deliver(struct po_decoder *decoder, const struct po_event *event, int64_t key)
{
	struct po_trace_state *state = &decoder->traces[event->trace_id];
	enum po_status status;

	if (state->to_skip > 0) {
		state->to_skip--;
		return true;
	}
	if (decoder->pipe)
		return po_pipe_push(decoder->pipe, event, key, &decoder->nomem);
	state->delivered++;
	status = decoder->callback(decoder->callback_ctx, event);
	if (status != PO_STATUS_OK) {
		decoder->callback_status = status;
		return false;
	}
	return true;
}

/* A pid of a trace in its recording's pid space (pid_spaces.c); -1 stays unknown. */
static inline int32_t in_pid_space(const struct po_decoder *decoder, uint32_t trace_id, int32_t pid)
{
	return pid >= 0 ? pid + decoder->traces[trace_id].pid_base : pid;
}

static bool handle_event(struct po_decoder *decoder, const bt_message *message)
{
	const bt_event *event = bt_message_event_borrow_event_const(message);
	struct po_class_entry *entry = class_entry(decoder, event);
	const bt_field *context;
	struct po_event ev;

	if (!entry) {
		decoder->nomem = true;
		return false;
	}
	decoder->stats->events++;
	if (entry->kind == PO_EV_COUNT) {
		decoder->stats->foreign_events++;
		decoder->stats->unknown_profopt_events += entry->profopt_like;
		return true;
	}
	if (entry->kind < PO_EV_LIBC_MALLOC)
		decoder->stats->profopt_events++;
	if (!entry->frequency) {
		decoder->stats->no_clock_events++;
		return true;
	}
	ev.kind = (enum po_event_kind)entry->kind;
	ev.time_ns =
	    cycles_to_ns(bt_clock_snapshot_get_value(
			     bt_message_event_borrow_default_clock_snapshot_const(message)),
			 entry->frequency);
	ev.trace_id = entry->trace_id;
	context = bt_event_borrow_common_context_field_const(event);
	ev.pid = entry->vpid.type != PO_MEMBER_ABSENT ? (int32_t)member_int(context, &entry->vpid)
						      : entry->env_pid;
	ev.pid = in_pid_space(decoder, ev.trace_id, ev.pid);
	ev.tid = (int32_t)member_int(context, &entry->vtid);
	ev.procname = member_str(context, &entry->procname);
	ev.ip = member_u64(context, &entry->ip);
	if (!fill_event(decoder, entry->kind, bt_event_borrow_payload_field_const(event),
			entry->payload, &ev)) {
		decoder->stats->malformed_events++;
		return true;
	}
	if (ev.kind == PO_EV_PROCESS)
		ev.u.process.parent_pid =
		    in_pid_space(decoder, ev.trace_id, ev.u.process.parent_pid);
	else if (ev.kind == PO_EV_WORKER_BEGIN || ev.kind == PO_EV_WORKER_END)
		ev.u.worker.parent_pid = in_pid_space(decoder, ev.trace_id, ev.u.worker.parent_pid);
	if (!po_event_clean_text(&decoder->text, &ev)) {
		decoder->nomem = true;
		return false;
	}
	return deliver(decoder, &ev, entry->offset_ns + ev.time_ns);
}

/* ---- discarded events and packets ---- */

struct po_discarded_view {
	const bt_stream *stream; /* weak */
	bt_property_availability availability;
	uint64_t count;
	bool has_snapshots;
	const bt_clock_snapshot *begin, *end; /* weak; valid when has_snapshots */
};

static void view_discarded_events(const bt_message *message, struct po_discarded_view *view)
{
	const bt_stream_class *sc;

	view->stream = bt_message_discarded_events_borrow_stream_const(message);
	sc = bt_stream_borrow_class_const(view->stream);
	view->availability = bt_message_discarded_events_get_count(message, &view->count);
	view->has_snapshots = bt_stream_class_borrow_default_clock_class_const(sc) &&
			      bt_stream_class_discarded_events_have_default_clock_snapshots(sc);
	if (!view->has_snapshots)
		return;
	view->begin =
	    bt_message_discarded_events_borrow_beginning_default_clock_snapshot_const(message);
	view->end = bt_message_discarded_events_borrow_end_default_clock_snapshot_const(message);
}

static void view_discarded_packets(const bt_message *message, struct po_discarded_view *view)
{
	const bt_stream_class *sc;

	view->stream = bt_message_discarded_packets_borrow_stream_const(message);
	sc = bt_stream_borrow_class_const(view->stream);
	view->availability = bt_message_discarded_packets_get_count(message, &view->count);
	view->has_snapshots = bt_stream_class_borrow_default_clock_class_const(sc) &&
			      bt_stream_class_discarded_packets_have_default_clock_snapshots(sc);
	if (!view->has_snapshots)
		return;
	view->begin =
	    bt_message_discarded_packets_borrow_beginning_default_clock_snapshot_const(message);
	view->end = bt_message_discarded_packets_borrow_end_default_clock_snapshot_const(message);
}

static int64_t snapshot_ns(const bt_clock_snapshot *snapshot)
{
	const bt_clock_class *clock = bt_clock_snapshot_borrow_clock_class_const(snapshot);

	return cycles_to_ns(bt_clock_snapshot_get_value(snapshot),
			    bt_clock_class_get_frequency(clock));
}

/* time_ns is the window's end, -1 when the stream gives no clock snapshots. */
static bool handle_discarded(struct po_decoder *decoder, const bt_message *message, bool packets)
{
	struct po_discarded_view view = {0};
	const bt_trace *trace;
	struct po_event ev;
	int64_t key;

	if (packets)
		view_discarded_packets(message, &view);
	else
		view_discarded_events(message, &view);
	decoder->stats->discarded_messages++;
	trace = bt_stream_borrow_trace_const(view.stream);
	memset(&ev, 0, sizeof(ev));
	ev.kind = packets ? PO_EV_DISCARDED_PACKETS : PO_EV_DISCARDED_EVENTS;
	ev.tid = -1;
	ev.trace_id = trace_id_of(decoder, trace);
	ev.pid = in_pid_space(decoder, ev.trace_id, trace_env_pid(trace));
	ev.u.discarded.count = view.availability == BT_PROPERTY_AVAILABILITY_AVAILABLE &&
				       view.count < (UINT64_C(1) << 63)
				   ? (int64_t)view.count
				   : PO_COUNT_UNKNOWN;
	ev.u.discarded.begin_ns = view.has_snapshots ? snapshot_ns(view.begin) : -1;
	ev.time_ns = view.has_snapshots ? snapshot_ns(view.end) : -1;
	if (!view.has_snapshots || bt_clock_snapshot_get_ns_from_origin(view.begin, &key) !=
				       BT_CLOCK_SNAPSHOT_GET_NS_FROM_ORIGIN_STATUS_OK)
		key = INT64_MIN;
	return deliver(decoder, &ev, key);
}

bool po_decoder_handle(struct po_decoder *decoder, const bt_message *message)
{
	if (decoder->probing)
		return true;
	switch (bt_message_get_type(message)) {
	case BT_MESSAGE_TYPE_EVENT:
		return handle_event(decoder, message);
	case BT_MESSAGE_TYPE_STREAM_BEGINNING:
		decoder->stats->streams++;
		po_isolate_progress(
		    "decoding",
		    bt_stream_get_name(bt_message_stream_beginning_borrow_stream_const(message)));
		return true;
	case BT_MESSAGE_TYPE_DISCARDED_EVENTS:
		return handle_discarded(decoder, message, false);
	case BT_MESSAGE_TYPE_DISCARDED_PACKETS:
		return handle_discarded(decoder, message, true);
	default:
		return true;
	}
}

/* The sink's consuming function: one batch of messages per call. */
bt_graph_simple_sink_component_consume_func_status po_decoder_consume(bt_message_iterator *iterator,
								      void *data)
{
	struct po_decoder *decoder = data;
	bt_message_array_const messages;
	uint64_t count;
	bool go_on = true;

	switch (bt_message_iterator_next(iterator, &messages, &count)) {
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_OK:
		break;
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_END:
		return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_END;
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_AGAIN:
		return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_AGAIN;
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_MEMORY_ERROR:
		return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_MEMORY_ERROR;
	default:
		return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR;
	}
	for (uint64_t i = 0; i < count; i++) {
		if (go_on)
			go_on = po_decoder_handle(decoder, messages[i]);
		bt_message_put_ref(messages[i]);
	}
	return go_on ? BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_OK
		     : BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR;
}

/* ---- lifetime ---- */

enum po_status po_decoder_init(struct po_decoder *decoder, size_t trace_count, struct po_error *err)
{
	memset(decoder, 0, sizeof(*decoder));
	decoder->class_capacity = 256;
	decoder->classes = calloc(decoder->class_capacity, sizeof(*decoder->classes));
	decoder->traces = calloc(trace_count ? trace_count : 1, sizeof(*decoder->traces));
	decoder->trace_count = trace_count ? trace_count : 1;
	if (!decoder->classes || !decoder->traces) {
		po_decoder_fini(decoder);
		po_error_set(err, "Failed to set up the trace decoder: out of memory");
		return PO_STATUS_NOMEM;
	}
	return PO_STATUS_OK;
}

void po_decoder_reset_classes(struct po_decoder *decoder)
{
	memset(decoder->classes, 0, decoder->class_capacity * sizeof(*decoder->classes));
	decoder->class_count = 0;
	decoder->last = NULL;
}

void po_decoder_fini(struct po_decoder *decoder)
{
	free(decoder->classes);
	free(decoder->traces);
	po_text_scratch_fini(&decoder->text);
	decoder->classes = NULL;
	decoder->traces = NULL;
}
