/*
 * test_binmap.c: an instruction address to (object, offset) across the base-address state
 * dump, dlopen, dlclose and lib unload; overlapping and unknown addresses; the caps; and a
 * libc allocation site of the model placed in its object.
 */
#include "../model/builder.h"
#include "binmap.h"

#define PID 100
#define LIBC_BASE 0x7f0000000000ull
#define PLUGIN_BASE 0x7f1000000000ull

static struct po_event bin_event(enum po_event_kind kind, int64_t t, uint64_t base, uint64_t size,
				 const char *path)
{
	struct po_event event = event_at(kind, t, PID, PID);

	event.u.bin.base = base;
	event.u.bin.size = size;
	event.u.bin.path = str_of(path);
	return event;
}

static void consume(struct po_binmap *map, struct po_event event)
{
	CHECK(po_binmap_consume(map, &event) == PO_STATUS_OK);
}

/* The object's path at (ip, t), or NULL; *offset set when found. */
static const char *where(struct po_binmap *map, uint64_t ip, int64_t t, uint64_t *offset)
{
	struct po_binmap_hit hit;

	if (!po_binmap_lookup(map, PID, ip, t, &hit))
		return NULL;
	*offset = hit.offset;
	return hit.path;
}

static void test_dlopen_dlclose(void)
{
	struct po_arena *arena = po_arena_create();
	struct po_strtab *strings = po_strtab_create(arena);
	struct po_binmap *map = po_binmap_create(strings);
	struct po_event build_id = bin_event(PO_EV_BIN_BUILD_ID, 1, LIBC_BASE, 0, NULL);
	struct po_binmap_hit hit;
	uint64_t offset = 0;
	const char *path;

	consume(map, bin_event(PO_EV_BIN_INFO, 1, LIBC_BASE, 0x200000, "/lib/libc.so.6"));
	build_id.u.bin.build_id[0] = 0xab;
	build_id.u.bin.build_id[1] = 0x01;
	build_id.u.bin.build_id_len = 2;
	consume(map, build_id);
	consume(map, bin_event(PO_EV_BIN_INFO, 1, 0x7fff0000, 0, "[linux-vdso.so.1]"));
	path = where(map, LIBC_BASE + 0x1234, 5, &offset);
	CHECK(path && strcmp(path, "/lib/libc.so.6") == 0);
	CHECK_INT_EQ(offset, 0x1234);
	CHECK(po_binmap_lookup(map, PID, LIBC_BASE + 1, 5, &hit) && hit.build_id &&
	      strcmp(hit.build_id, "ab01") == 0);
	/* unknown: past the end, another process, the vDSO (no size), address 0 */
	CHECK(!where(map, LIBC_BASE + 0x200000, 5, &offset));
	CHECK(!po_binmap_lookup(map, PID + 1, LIBC_BASE + 0x10, 5, &hit));
	CHECK(!where(map, 0x7fff0010, 5, &offset));
	CHECK(!where(map, 0, 5, &offset));

	/* a plugin opened at 10, closed at 20 (no lib events: dlclose unmaps) */
	consume(map, bin_event(PO_EV_DL_OPEN, 10, PLUGIN_BASE, 0x4000, "/opt/a/libplug.so"));
	consume(map, bin_event(PO_EV_DL_OPEN, 11, PLUGIN_BASE, 0x4000, "/opt/a/libplug.so"));
	path = where(map, PLUGIN_BASE + 0x1a2b, 15, &offset);
	CHECK(path && strcmp(path, "/opt/a/libplug.so") == 0);
	CHECK_INT_EQ(offset, 0x1a2b);
	consume(map, bin_event(PO_EV_DL_CLOSE, 20, PLUGIN_BASE, 0, NULL));
	/* another object mapped at the same address later: each time gets its own */
	consume(map,
		bin_event(PO_EV_DL_OPEN, 30, PLUGIN_BASE - 0x1000, 0x8000, "/opt/b/libother.so"));
	path = where(map, PLUGIN_BASE + 0x10, 15, &offset);
	CHECK(path && strcmp(path, "/opt/a/libplug.so") == 0);
	CHECK_INT_EQ(offset, 0x10);
	path = where(map, PLUGIN_BASE + 0x10, 35, &offset);
	CHECK(path && strcmp(path, "/opt/b/libother.so") == 0);
	CHECK_INT_EQ(offset, 0x1010);
	/* between the two: nothing mapped, the latest object covering the address is named */
	path = where(map, PLUGIN_BASE + 0x10, 25, &offset);
	CHECK(path && strcmp(path, "/opt/b/libother.so") == 0);
	CHECK_INT_EQ(po_binmap_dropped(map), 0);
	CHECK(po_binmap_bytes(map) > 0);
	po_binmap_destroy(map);
	po_strtab_destroy(strings);
	po_arena_destroy(arena);
}

/* With lib events, a dlclose of an object still referenced leaves it mapped. */
static void test_lib_unload(void)
{
	struct po_arena *arena = po_arena_create();
	struct po_strtab *strings = po_strtab_create(arena);
	struct po_binmap *map = po_binmap_create(strings);
	uint64_t offset = 0;
	const char *path;

	consume(map, bin_event(PO_EV_LIB_LOAD, 10, PLUGIN_BASE, 0x4000, "/opt/a/libplug.so"));
	consume(map, bin_event(PO_EV_DL_OPEN, 10, PLUGIN_BASE, 0x4000, "/opt/a/libplug.so"));
	consume(map, bin_event(PO_EV_DL_CLOSE, 20, PLUGIN_BASE, 0, NULL));
	consume(map,
		bin_event(PO_EV_LIB_LOAD, 30, PLUGIN_BASE + 0x2000, 0x4000, "/opt/c/libover.so"));
	/* the overlapping newer object and the still-mapped older one: the newer wins */
	path = where(map, PLUGIN_BASE + 0x2100, 35, &offset);
	CHECK(path && strcmp(path, "/opt/c/libover.so") == 0);
	CHECK_INT_EQ(offset, 0x100);
	path = where(map, PLUGIN_BASE + 0x100, 35, &offset);
	CHECK(path && strcmp(path, "/opt/a/libplug.so") == 0);
	consume(map, bin_event(PO_EV_LIB_UNLOAD, 40, PLUGIN_BASE + 0x2000, 0, NULL));
	path = where(map, PLUGIN_BASE + 0x2100, 45, &offset);
	CHECK(path && strcmp(path, "/opt/a/libplug.so") == 0);
	CHECK_INT_EQ(offset, 0x2100);
	po_binmap_destroy(map);
	po_strtab_destroy(strings);
	po_arena_destroy(arena);
}

/* Past the per-process cap, objects are counted and not kept. */
static void test_cap(void)
{
	struct po_arena *arena = po_arena_create();
	struct po_strtab *strings = po_strtab_create(arena);
	struct po_binmap *map = po_binmap_create(strings);
	uint64_t offset = 0;

	for (uint64_t i = 0; i < PO_BINMAP_OBJECTS_CAP + 10; i++)
		consume(map, bin_event(PO_EV_DL_OPEN, (int64_t)i, 0x10000000ull + i * 0x1000,
				       0x1000, i % 2 ? "/odd.so" : "/even.so"));
	CHECK_INT_EQ(po_binmap_dropped(map), 10);
	CHECK(where(map, 0x10000000ull + 5 * 0x1000 + 1, 100000, &offset) != NULL);
	CHECK(
	    !where(map, 0x10000000ull + (PO_BINMAP_OBJECTS_CAP + 5) * 0x1000ull, 100000, &offset));
	po_binmap_destroy(map);
	po_strtab_destroy(strings);
	po_arena_destroy(arena);
}

static struct po_event libc_malloc(int64_t t, uint64_t ip, uint64_t ptr, uint64_t size)
{
	struct po_event event = event_at(PO_EV_LIBC_MALLOC, t, PID, PID);

	event.ip = ip;
	event.u.libc.ptr = ptr;
	event.u.libc.size = size;
	event.u.libc.result = -1;
	return event;
}

static const struct po_mem_site *site_of(const struct po_analysis *analysis, uint64_t ip)
{
	for (size_t i = 0; i < analysis->mem_site_count; i++) {
		if (analysis->mem_sites[i].ip == ip)
			return &analysis->mem_sites[i];
	}
	return NULL;
}

/* The model's sites carry object and offset, whichever order the map arrived in. */
static void test_model_sites(void)
{
	struct po_model *model = model_new(NULL);
	struct po_event begin = event_at(PO_EV_RUN_BEGIN, 1, PID, PID);
	struct po_event first = libc_malloc(2, LIBC_BASE + 0x99, 0x5000, 64);
	struct po_event plugin = libc_malloc(5, PLUGIN_BASE + 0x1121, 0x6000, 100);
	struct po_event unknown = libc_malloc(6, 0x1234, 0x7000, 100);
	struct po_analysis *analysis;
	const struct po_mem_site *site;

	begin.u.run_begin.framework = str_of("c");
	feed(model, &begin);
	/* allocated before the state dump arrives */
	feed(model, &first);
	{
		struct po_event dump =
		    bin_event(PO_EV_BIN_INFO, 3, LIBC_BASE, 0x200000, "/lib/libc.so.6");
		feed(model, &dump);
	}
	{
		struct po_event open =
		    bin_event(PO_EV_DL_OPEN, 4, PLUGIN_BASE, 0x4000, "/opt/a/libplug.so");
		feed(model, &open);
	}
	feed(model, &plugin);
	feed(model, &unknown);
	{
		struct po_event close = bin_event(PO_EV_DL_CLOSE, 7, PLUGIN_BASE, 0, NULL);
		feed(model, &close);
	}
	analysis = model_done(model);
	site = site_of(analysis, PLUGIN_BASE + 0x1121);
	CHECK(site && site->object && strcmp(site->object, "/opt/a/libplug.so") == 0);
	CHECK(site && site->offset == 0x1121);
	site = site_of(analysis, LIBC_BASE + 0x99);
	CHECK(site && site->object && strcmp(site->object, "/lib/libc.so.6") == 0);
	CHECK(site && site->offset == 0x99);
	site = site_of(analysis, 0x1234);
	CHECK(site && !site->object);
	po_analysis_destroy(analysis);
}

int main(void)
{
	RUN(test_dlopen_dlclose);
	RUN(test_lib_unload);
	RUN(test_cap);
	RUN(test_model_sites);
	return CHECK_SUMMARY();
}
