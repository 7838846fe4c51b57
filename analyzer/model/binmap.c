/* binmap.c: per process, the mapped objects over time; an address to (object, offset). */
#include <stdlib.h>
#include <string.h>

#include "binmap.h"
#include "model_internal.h"

#define STILL_MAPPED INT64_MAX

struct bin_object {
	uint64_t base;
	uint64_t end;	      /* base + size, saturated */
	const char *path;     /* weak: interned */
	const char *build_id; /* weak: interned hex; NULL */
	int64_t open_ns;
	int64_t close_ns; /* STILL_MAPPED while mapped */
};

struct bin_process {
	int32_t pid;
	struct bin_object *objects; /* owned; in the order they were mapped */
	size_t count;
	size_t capacity;
	bool lib_events; /* lttng_ust_lib:* seen: unload says when an object goes */
};

struct po_binmap {
	struct po_strtab *strings;     /* weak */
	struct bin_process *processes; /* owned */
	size_t process_count;
	size_t process_capacity;
	struct po_map process_index; /* pid -> index into processes */
	size_t object_count;	     /* over every process */
	int64_t dropped;
};

struct po_binmap *po_binmap_create(struct po_strtab *strings)
{
	struct po_binmap *map = calloc(1, sizeof(*map));

	if (map)
		map->strings = strings;
	return map;
}

void po_binmap_destroy(struct po_binmap *map)
{
	if (!map)
		return;
	for (size_t i = 0; i < map->process_count; i++)
		free(map->processes[i].objects);
	free(map->processes);
	po_map_free(&map->process_index);
	free(map);
}

static struct bin_process *process_find(const struct po_binmap *map, int32_t pid)
{
	struct po_map_entry *entry = po_map_find(&map->process_index, (uint32_t)pid, 0);

	return entry ? &map->processes[entry->value] : NULL;
}

/* The process's entry, created when new; NULL when out of memory. */
static struct bin_process *process_get(struct po_binmap *map, int32_t pid)
{
	struct bin_process *process = process_find(map, pid);
	struct po_map_entry *entry;

	if (process)
		return process;
	if (po_array_reserve((void **)&map->processes, &map->process_capacity,
			     map->process_count + 1, sizeof(*map->processes)) != PO_STATUS_OK)
		return NULL;
	entry = po_map_upsert(&map->process_index, (uint32_t)pid, 0, NULL);
	if (!entry)
		return NULL;
	entry->value = map->process_count;
	process = &map->processes[map->process_count++];
	*process = (struct bin_process){.pid = pid};
	return process;
}

/* The object mapped now at base, or NULL. */
static struct bin_object *mapped_at(struct bin_process *process, uint64_t base)
{
	for (size_t i = process->count; i-- > 0;) {
		struct bin_object *object = &process->objects[i];

		if (object->base == base && object->close_ns == STILL_MAPPED)
			return object;
	}
	return NULL;
}

static enum po_status map_object(struct po_binmap *map, struct bin_process *process,
				 const struct po_event *event)
{
	const struct po_str *path = &event->u.bin.path;
	struct bin_object *object = mapped_at(process, event->u.bin.base);
	const char *interned;

	if (!event->u.bin.size)
		return PO_STATUS_OK; /* the vDSO: no file to read symbols from */
	interned = po_strtab_intern(map->strings, path->len ? path->ptr : "", path->len);
	if (!interned)
		return PO_STATUS_NOMEM;
	if (object && object->path == interned)
		return PO_STATUS_OK; /* the same mapping again: a dlopen of a loaded object */
	if (object)
		object->close_ns = event->time_ns;
	if (process->count >= PO_BINMAP_OBJECTS_CAP || map->object_count >= PO_BINMAP_TOTAL_CAP) {
		map->dropped++;
		return PO_STATUS_OK;
	}
	if (po_array_reserve((void **)&process->objects, &process->capacity, process->count + 1,
			     sizeof(*process->objects)) != PO_STATUS_OK)
		return PO_STATUS_NOMEM;
	process->objects[process->count++] =
	    (struct bin_object){.base = event->u.bin.base,
				.end = event->u.bin.base + event->u.bin.size < event->u.bin.base
					   ? UINT64_MAX
					   : event->u.bin.base + event->u.bin.size,
				.path = interned,
				.open_ns = event->time_ns,
				.close_ns = STILL_MAPPED};
	map->object_count++;
	return PO_STATUS_OK;
}

static enum po_status set_build_id(struct po_binmap *map, struct bin_process *process,
				   const struct po_event *event)
{
	static const char digits[] = "0123456789abcdef";
	struct bin_object *object = mapped_at(process, event->u.bin.base);
	char hex[2 * PO_BUILD_ID_MAX];
	size_t length = event->u.bin.build_id_len;

	if (!object || !length)
		return PO_STATUS_OK;
	if (length > PO_BUILD_ID_MAX)
		length = PO_BUILD_ID_MAX;
	for (size_t i = 0; i < length; i++) {
		hex[2 * i] = digits[event->u.bin.build_id[i] >> 4];
		hex[2 * i + 1] = digits[event->u.bin.build_id[i] & 0xf];
	}
	object->build_id = po_strtab_intern(map->strings, hex, 2 * length);
	return object->build_id ? PO_STATUS_OK : PO_STATUS_NOMEM;
}

static void unmap_object(struct bin_process *process, const struct po_event *event)
{
	struct bin_object *object = mapped_at(process, event->u.bin.base);

	if (object)
		object->close_ns = event->time_ns;
}

enum po_status po_binmap_consume(struct po_binmap *map, const struct po_event *event)
{
	struct bin_process *process = process_get(map, event->pid);

	if (!process)
		return PO_STATUS_NOMEM;
	switch (event->kind) {
	case PO_EV_LIB_LOAD:
		process->lib_events = true;
		/* fall through */
	case PO_EV_BIN_INFO:
	case PO_EV_DL_OPEN:
	case PO_EV_DL_MOPEN:
		return map_object(map, process, event);
	case PO_EV_LIB_BUILD_ID:
	case PO_EV_BIN_BUILD_ID:
	case PO_EV_DL_BUILD_ID:
		return set_build_id(map, process, event);
	case PO_EV_LIB_UNLOAD:
		process->lib_events = true;
		unmap_object(process, event);
		return PO_STATUS_OK;
	case PO_EV_DL_CLOSE:
		/* A dlclose unmaps only the last reference: trust lib:unload when present. */
		if (!process->lib_events)
			unmap_object(process, event);
		return PO_STATUS_OK;
	default:
		return PO_STATUS_OK;
	}
}

static void fill_hit(const struct bin_object *object, uint64_t ip, struct po_binmap_hit *hit)
{
	hit->path = object->path;
	hit->build_id = object->build_id;
	hit->offset = ip - object->base;
}

bool po_binmap_lookup(const struct po_binmap *map, int32_t pid, uint64_t ip, int64_t time_ns,
		      struct po_binmap_hit *hit)
{
	const struct bin_process *process = map ? process_find(map, pid) : NULL;
	const struct bin_object *latest = NULL;

	if (!process || !ip)
		return false;
	for (size_t i = process->count; i-- > 0;) {
		const struct bin_object *object = &process->objects[i];

		if (ip < object->base || ip >= object->end)
			continue;
		if (object->open_ns <= time_ns && time_ns < object->close_ns) {
			fill_hit(object, ip, hit);
			return true;
		}
		if (!latest)
			latest = object;
	}
	if (!latest)
		return false;
	fill_hit(latest, ip, hit);
	return true;
}

int64_t po_binmap_dropped(const struct po_binmap *map)
{
	return map ? map->dropped : 0;
}

size_t po_binmap_bytes(const struct po_binmap *map)
{
	size_t bytes;

	if (!map)
		return 0;
	bytes = sizeof(*map) + map->process_capacity * sizeof(struct bin_process) +
		po_map_bytes(&map->process_index);
	for (size_t i = 0; i < map->process_count; i++)
		bytes += map->processes[i].capacity * sizeof(struct bin_object);
	return bytes;
}
