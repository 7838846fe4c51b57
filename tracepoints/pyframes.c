/*
 * pyframes.c: reads the Python stack of the thread a signal interrupted, inside the signal
 * handler of libprofopt's sampler (stacks.c), so that every thread of a Python process is
 * sampled on its own CPU clock, each sample costing microseconds (docs/sampling.md).
 *
 * A Python signal handler runs on the main thread only, between bytecodes, and its stack walk
 * costs a hundred microseconds and more in a training loop. Here the thread's state comes
 * from the interpreter's thread-specific key (PyGILState_GetThisThreadState, a
 * pthread_getspecific), its frames from the state's current frame and their links, each
 * frame's line from its code object's line-number table, all by reading memory the thread
 * itself owns: the interrupted thread is the only one that changes its frames, and it is
 * stopped in this handler. Nothing is allocated or locked, and the interpreter's only
 * function called is that thread-specific read. From 3.11 on, a frame outside the thread's
 * live stack chunks (a generator's, a C-stack entry frame, or one whose chunk was just freed
 * as the signal came) is copied by process_vm_readv(2), which fails instead of faulting on
 * memory that is gone; 3.9's and 3.10's frames are objects, which live while a thread's
 * chain of frames holds them.
 *
 * The interpreter's symbols are looked up at run time (dlsym), so libprofopt neither links
 * with libpython nor needs its headers, and loads in any program. The layouts read are
 * those of CPython 3.9 to 3.13 (pyframes_layouts.h), one chosen at po_pyframes_init from the
 * running interpreter's version; 3.13's offsets come from the interpreter itself (its
 * _Py_DebugOffsets). Another version, a debug or free-threaded build are refused.
 */
#define _GNU_SOURCE
#include "pyframes.h"

#include <errno.h>
#include <stdint.h>

/* The layouts are those of 64-bit little-endian Linux. */
#if defined(__linux__) && UINTPTR_MAX == UINT64_MAX && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__

#include "pyframes_layouts.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

/* Code objects a process describes: a power of two, beyond which samples name id 0. */
#define PO_CODES_CAP 16384
/* Frames walked at most (incomplete frames are skipped without counting toward max). */
#define PO_FRAMES_WALKED_MAX 1024
/* Stack chunks looked through at most for a frame. */
#define PO_CHUNKS_MAX 64
/* A function's or file's name as described, in bytes (UTF-8), with its terminator. */
#define PO_NAME_MAX 256
/* Bytes of a frame copied at most (a layout's frame_size, checked at init). */
#define PO_FRAME_COPY_MAX 128
/* An offset read from the interpreter beyond this is refused (a damaged table). */
#define PO_OFFSET_MAX 4096

/*
 * A code object seen in this process. key is its address; the fingerprint (name and file
 * objects, first line) tells a new code object at a freed one's address, which gets a new
 * id. id is written last: 0 while the entry is being filled. described: its profopt:code
 * was emitted (a code first seen while the process recorded nothing is described at its
 * first sight once it does).
 */
struct code_entry {
	uintptr_t key;
	uintptr_t name, file;
	int32_t first_line;
	uint32_t id;
	uint32_t described;
};

typedef void *this_thread_state_fn(void);
typedef const char *version_text_fn(void);

static struct {
	bool ready;
	const char *reason;
	/* the running interpreter's row of po_py_layouts; 3.13's from its debug offsets */
	struct po_py_layout layout;
	this_thread_state_fn *this_thread_state;
	uintptr_t code_type, str_type, bytes_type, frame_type; /* the type objects compared */
} reader;

static struct code_entry codes[PO_CODES_CAP];
static uint32_t next_code; /* ids handed out, from PO_PYFRAMES_CODE_BASE + 1 */
static bool codes_used;	   /* an entry was made since the table was last cleared */

static char refusal[160];

/* ---- fields ---- */

static inline uintptr_t word_at(uintptr_t base, uint16_t offset)
{
	return *(const uintptr_t *)(base + offset);
}

static inline int32_t int_at(uintptr_t base, uint16_t offset)
{
	return *(const int32_t *)(base + offset);
}

static inline uintptr_t type_of(uintptr_t object)
{
	return word_at(object, reader.layout.object_type);
}

/* ---- the interpreter ---- */

/* The running interpreter's version as 0xMMmm, or 0 when none is found. */
static unsigned int running_version(void)
{
	const unsigned long *hex = dlsym(RTLD_DEFAULT, "Py_Version"); /* 3.11 and later */
	version_text_fn *text = (version_text_fn *)dlsym(RTLD_DEFAULT, "Py_GetVersion");
	unsigned int major, minor;

	if (hex)
		return (unsigned int)((*hex >> 16) & 0xffff);
	if (text && sscanf(text(), "%u.%u", &major, &minor) == 2 && major < 256 && minor < 256)
		return major << 8 | minor;
	return 0;
}

static const struct po_py_layout *layout_of(unsigned int version)
{
	for (size_t i = 0; i < PO_PY_LAYOUT_COUNT; i++)
		if (version == (3u << 8 | po_py_layouts[i].minor))
			return &po_py_layouts[i];
	return NULL;
}

static int refuse(int error, const char *text)
{
	reader.reason = text;
	return error;
}

/* Sets a field from 3.13's debug offsets; false when the offset is not a plausible one. */
static bool take_offset(uint16_t *field, uint64_t offset)
{
	if (offset >= PO_OFFSET_MAX)
		return false;
	*field = (uint16_t)offset;
	return true;
}

/*
 * 3.13 says where its fields are (_PyRuntime.debug_offsets, read by out-of-process
 * debuggers): those are taken over the table's. 0, or -EPROTO with the reason set.
 */
static int take_debug_offsets(struct po_py_layout *layout)
{
	const struct po_py313_debug_offsets *offsets = dlsym(RTLD_DEFAULT, "_PyRuntime");
	bool ok;

	if (!offsets || memcmp(offsets->cookie, PO_PY313_DEBUG_COOKIE, 8) != 0 ||
	    (offsets->version >> 16) != 0x030d)
		return refuse(-EPROTO, "libprofopt found no debug offsets in CPython 3.13's "
				       "_PyRuntime");
	if (offsets->free_threaded || offsets->pyobject.ob_type != 8)
		return refuse(-EPROTO, "libprofopt reads the frames of CPython's default builds; "
				       "this 3.13 is free-threaded");
	ok = take_offset(&layout->thread_frame, offsets->thread_state.current_frame) &&
	     take_offset(&layout->thread_datastack_chunk, offsets->thread_state.datastack_chunk) &&
	     take_offset(&layout->frame_previous, offsets->interpreter_frame.previous) &&
	     take_offset(&layout->frame_code, offsets->interpreter_frame.executable) &&
	     take_offset(&layout->frame_instruction, offsets->interpreter_frame.instr_ptr) &&
	     take_offset(&layout->frame_owner, offsets->interpreter_frame.owner) &&
	     take_offset(&layout->frame_size, offsets->interpreter_frame.localsplus) &&
	     take_offset(&layout->code_name, offsets->code_object.name) &&
	     take_offset(&layout->code_qualname, offsets->code_object.qualname) &&
	     take_offset(&layout->code_filename, offsets->code_object.filename) &&
	     take_offset(&layout->code_firstlineno, offsets->code_object.firstlineno) &&
	     take_offset(&layout->code_linetable, offsets->code_object.linetable) &&
	     take_offset(&layout->code_instructions, offsets->code_object.co_code_adaptive) &&
	     take_offset(&layout->object_type, offsets->pyobject.ob_type) &&
	     take_offset(&layout->str_length, offsets->unicode_object.length) &&
	     take_offset(&layout->str_state, offsets->unicode_object.state) &&
	     take_offset(&layout->str_ascii_size, offsets->unicode_object.asciiobject_size) &&
	     take_offset(&layout->bytes_size, offsets->bytes_object.ob_size) &&
	     take_offset(&layout->bytes_data, offsets->bytes_object.ob_sval);
	if (!ok || layout->frame_size > PO_FRAME_COPY_MAX)
		return refuse(-EPROTO, "libprofopt found implausible debug offsets in CPython "
				       "3.13's _PyRuntime");
	return 0;
}

/* The version's layout in reader.layout: 0, or -EPROTO with the reason set. */
static int choose_layout(unsigned int version)
{
	const struct po_py_layout *layout = layout_of(version);

	if (!layout) {
		snprintf(refusal, sizeof(refusal),
			 "libprofopt reads the frames of CPython 3.%u to 3.%u; this is %u.%u",
			 po_py_layouts[0].minor, po_py_layouts[PO_PY_LAYOUT_COUNT - 1].minor,
			 version >> 8, version & 0xff);
		return refuse(-EPROTO, refusal);
	}
	/* a debug build's objects and frames are laid out otherwise (Py_REF_DEBUG, and
	 * Py_TRACE_REFS's two more pointers in every object) */
	if (dlsym(RTLD_DEFAULT, "_Py_NegativeRefcount") ||
	    dlsym(RTLD_DEFAULT, "_Py_PrintReferences")) {
		snprintf(refusal, sizeof(refusal),
			 "libprofopt reads the frames of CPython's release builds; this %u.%u is "
			 "a debug build",
			 version >> 8, version & 0xff);
		return refuse(-EPROTO, refusal);
	}
	reader.layout = *layout;
	if (layout->frames == PO_PY_FRAMES_CURRENT)
		return take_debug_offsets(&reader.layout);
	return 0;
}

int po_pyframes_init(void)
{
	unsigned int version;
	int ret;

	if (reader.ready)
		return 0;
	version = running_version();
	reader.this_thread_state =
	    (this_thread_state_fn *)dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState");
	reader.code_type = (uintptr_t)dlsym(RTLD_DEFAULT, "PyCode_Type");
	reader.str_type = (uintptr_t)dlsym(RTLD_DEFAULT, "PyUnicode_Type");
	reader.bytes_type = (uintptr_t)dlsym(RTLD_DEFAULT, "PyBytes_Type");
	reader.frame_type = (uintptr_t)dlsym(RTLD_DEFAULT, "PyFrame_Type");
	if (!version || !reader.this_thread_state || !reader.code_type || !reader.str_type ||
	    !reader.bytes_type || !reader.frame_type)
		return refuse(-ENOENT, "no CPython interpreter in this process");
	ret = choose_layout(version);
	if (ret != 0)
		return ret;
	reader.ready = true;
	reader.reason = NULL;
	return 0;
}

const char *po_pyframes_reason(void)
{
	return reader.reason;
}

void po_pyframes_forget(void)
{
	if (!__atomic_load_n(&codes_used, __ATOMIC_RELAXED))
		return;
	memset(codes, 0, sizeof(codes));
	next_code = 0;
	codes_used = false;
}

/* ---- reading memory that may be gone ---- */

/* Copies len bytes at from, or false when they are not mapped (async-signal-safe). */
static bool copy_out(void *to, uintptr_t from, size_t len)
{
	struct iovec local = {.iov_base = to, .iov_len = len};
	struct iovec remote = {.iov_base = (void *)from, .iov_len = len};

	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)len;
}

/* Whether frame lies in one of the thread's stack chunks, which are mapped while it runs. */
static bool in_live_chunk(uintptr_t thread, uintptr_t frame)
{
	const struct po_py_layout *layout = &reader.layout;
	uintptr_t chunk = word_at(thread, layout->thread_datastack_chunk);

	for (int i = 0; chunk && i < PO_CHUNKS_MAX; i++) {
		uintptr_t start = chunk + layout->chunk_data,
			  end = chunk + word_at(chunk, layout->chunk_size);

		if (frame >= start && frame + layout->frame_size <= end)
			return true;
		chunk = word_at(chunk, layout->chunk_previous);
	}
	return false;
}

/* ---- lines ---- */

/* A bytes object's contents, or false when object is not one. */
static bool bytes_of(uintptr_t object, const uint8_t **at, const uint8_t **end)
{
	int64_t size;

	if (!object || type_of(object) != reader.bytes_type)
		return false;
	size = (int64_t)word_at(object, reader.layout.bytes_size);
	if (size < 0)
		return false;
	*at = (const uint8_t *)(object + reader.layout.bytes_data);
	*end = *at + size;
	return true;
}

/* 3.9's co_lnotab: (byte increment, signed line increment) pairs (Objects/lnotab_notes.txt). */
static int line_from_lnotab(const uint8_t *at, const uint8_t *end, int line, int offset)
{
	int address = 0;

	for (; at + 1 < end; at += 2) {
		address += at[0];
		if (address > offset)
			break;
		line += (int8_t)at[1];
	}
	return line;
}

/*
 * 3.10's co_linetable (PEP 626): (byte length, signed line increment) pairs, -128 for
 * bytes without a line; empty ranges only move the line.
 */
static int line_from_pep626(const uint8_t *at, const uint8_t *end, int line, int offset)
{
	int address = 0;

	for (; at + 1 < end; at += 2) {
		int start = address, range_line;

		address += at[0];
		if ((int8_t)at[1] == -128) {
			range_line = -1;
		} else {
			line += (int8_t)at[1];
			range_line = line;
		}
		if (address > start && offset < address)
			return range_line < 0 ? 0 : range_line;
	}
	return 0;
}

static unsigned int read_varint(const uint8_t **at, const uint8_t *end)
{
	unsigned int value = 0, shift = 0;
	uint8_t byte;

	do {
		if (*at >= end || shift > 28)
			return value;
		byte = *(*at)++;
		value |= (unsigned int)(byte & 63) << shift;
		shift += 6;
	} while (byte & 64);
	return value;
}

static int read_signed_varint(const uint8_t **at, const uint8_t *end)
{
	unsigned int value = read_varint(at, end);

	return (value & 1) ? -(int)(value >> 1) : (int)(value >> 1);
}

/* Kinds of location-table entries (3.11's Objects/locations.md). */
enum location_kind {
	LOCATION_ONE_LINE0 = 10,
	LOCATION_ONE_LINE2 = 12,
	LOCATION_NO_COLUMNS = 13,
	LOCATION_LONG = 14,
	LOCATION_NONE = 15,
};

/* 3.11 and later: the location table, entries of (kind, code units) and operands. */
static int line_from_locations(const uint8_t *at, const uint8_t *end, int line, int index)
{
	int start = 0;

	while (at < end) {
		uint8_t first = *at++;
		int kind = (first >> 3) & 15, length = (first & 7) + 1, delta = 0;

		if (kind == LOCATION_NO_COLUMNS || kind == LOCATION_LONG) {
			const uint8_t *operand = at;

			delta = read_signed_varint(&operand, end);
		} else if (kind >= LOCATION_ONE_LINE0 && kind <= LOCATION_ONE_LINE2) {
			delta = kind - LOCATION_ONE_LINE0;
		}
		line += delta;
		if (index < start + length)
			return kind == LOCATION_NONE || line < 0 ? 0 : line;
		start += length;
		while (at < end && !(*at & 128)) /* the entry's operands, up to the next entry */
			at++;
	}
	return 0;
}

/*
 * The line of the instruction at offset bytes into code, as PyCode_Addr2Line gives it (the
 * first line before the first instruction); 0 when it has none.
 */
static int line_of(uintptr_t code, int offset)
{
	const struct po_py_layout *layout = &reader.layout;
	int first_line = int_at(code, layout->code_firstlineno);
	const uint8_t *at, *end;

	if (offset < 0)
		return first_line;
	if (!bytes_of(word_at(code, layout->code_linetable), &at, &end))
		return 0;
	switch ((enum po_py_lines)layout->lines) {
	case PO_PY_LINES_LNOTAB:
		return line_from_lnotab(at, end, first_line, offset);
	case PO_PY_LINES_PEP626:
		return line_from_pep626(at, end, first_line, offset);
	case PO_PY_LINES_LOCATIONS:
		return line_from_locations(at, end, first_line, offset / 2);
	}
	return 0;
}

int po_pyframes_line(const void *code, int index)
{
	if (!reader.ready || !code || type_of((uintptr_t)code) != reader.code_type)
		return 0;
	return line_of((uintptr_t)code, index * 2);
}

/* ---- names ---- */

/* Appends code point c to out as UTF-8 if it fits in the room left; false when full. */
static bool put_utf8(char *out, size_t *used, uint32_t c)
{
	char bytes[4];
	size_t n;

	if (c < 0x80) {
		bytes[0] = (char)c;
		n = 1;
	} else if (c < 0x800) {
		bytes[0] = (char)(0xc0 | (c >> 6));
		bytes[1] = (char)(0x80 | (c & 63));
		n = 2;
	} else if (c < 0x10000) {
		bytes[0] = (char)(0xe0 | (c >> 12));
		bytes[1] = (char)(0x80 | ((c >> 6) & 63));
		bytes[2] = (char)(0x80 | (c & 63));
		n = 3;
	} else {
		bytes[0] = (char)(0xf0 | ((c >> 18) & 7));
		bytes[1] = (char)(0x80 | ((c >> 12) & 63));
		bytes[2] = (char)(0x80 | ((c >> 6) & 63));
		bytes[3] = (char)(0x80 | (c & 63));
		n = 4;
	}
	if (*used + n >= PO_NAME_MAX)
		return false;
	memcpy(out + *used, bytes, n);
	*used += n;
	return true;
}

/* A str object's text as UTF-8 in out (PO_NAME_MAX bytes), cut at a character; "?" if none. */
static void name_of(uintptr_t object, char *out)
{
	const struct po_py_layout *layout = &reader.layout;
	uint32_t state;
	int64_t length;
	unsigned int kind;
	uintptr_t data;
	size_t used = 0;

	strcpy(out, "?");
	if (!object || type_of(object) != reader.str_type)
		return;
	state = *(const uint32_t *)(object + layout->str_state);
	if (layout->unicode_has_ready && !PO_PY_STR_READY(state))
		return;
	length = (int64_t)word_at(object, layout->str_length);
	kind = PO_PY_STR_KIND(state);
	if (PO_PY_STR_COMPACT(state))
		data = object +
		       (PO_PY_STR_ASCII(state) ? layout->str_ascii_size : layout->str_compact_size);
	else
		data = word_at(object, layout->str_compact_size); /* PyUnicodeObject.data */
	if (!data || (kind != 1 && kind != 2 && kind != 4))
		return;
	for (int64_t i = 0; i < length; i++) {
		uint32_t c = kind == 1	 ? ((const uint8_t *)data)[i]
			     : kind == 2 ? ((const uint16_t *)data)[i]
					 : ((const uint32_t *)data)[i];

		if (!put_utf8(out, &used, c))
			break;
	}
	out[used] = '\0';
}

/* The name a code object is described by: co_qualname, or co_name before 3.11. */
static uintptr_t function_name(uintptr_t code)
{
	const struct po_py_layout *layout = &reader.layout;
	uintptr_t qualname = layout->code_qualname ? word_at(code, layout->code_qualname) : 0;

	return qualname ? qualname : word_at(code, layout->code_name);
}

/* ---- code ids ---- */

/*
 * Describes code as id through describe, unless another thread does it now; nothing
 * without describe (the process records nothing now: the names are not even read).
 */
static void describe_once(struct code_entry *entry, uint32_t id, uintptr_t code,
			  po_pyframes_describe_fn *describe)
{
	char function[PO_NAME_MAX], file[PO_NAME_MAX];

	if (!describe || __atomic_exchange_n(&entry->described, 1, __ATOMIC_ACQ_REL))
		return;
	name_of(function_name(code), function);
	name_of(word_at(code, reader.layout.code_filename), file);
	if (!describe(id, function, file, int_at(code, reader.layout.code_firstlineno)))
		__atomic_store_n(&entry->described, 0, __ATOMIC_RELEASE);
}

static uint32_t describe_new(struct code_entry *entry, uintptr_t code,
			     po_pyframes_describe_fn *describe)
{
	uint32_t id = PO_PYFRAMES_CODE_BASE + __atomic_add_fetch(&next_code, 1, __ATOMIC_RELAXED);

	entry->name = function_name(code);
	entry->file = word_at(code, reader.layout.code_filename);
	entry->first_line = int_at(code, reader.layout.code_firstlineno);
	__atomic_store_n(&entry->described, 0, __ATOMIC_RELEASE);
	describe_once(entry, id, code, describe);
	__atomic_store_n(&entry->id, id, __ATOMIC_RELEASE);
	return id;
}

/*
 * The id of code, described on first sight, and at a later sight while its description was
 * not emitted (describe NULL, or it said false); 0 when the table is full or another thread
 * is describing it at this moment.
 */
static uint32_t code_id(uintptr_t code, po_pyframes_describe_fn *describe)
{
	uint32_t slot = (uint32_t)((code >> 4) * 2654435761u) & (PO_CODES_CAP - 1);

	for (uint32_t probe = 0; probe < PO_CODES_CAP; probe++) {
		struct code_entry *entry = &codes[(slot + probe) & (PO_CODES_CAP - 1)];
		uintptr_t seen = __atomic_load_n(&entry->key, __ATOMIC_ACQUIRE);
		uint32_t id;

		if (seen == 0) {
			if (!__atomic_compare_exchange_n(&entry->key, &seen, code, false,
							 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
				if (seen != code)
					continue; /* another code took the slot */
				return __atomic_load_n(&entry->id, __ATOMIC_ACQUIRE);
			}
			__atomic_store_n(&codes_used, true, __ATOMIC_RELAXED);
			return describe_new(entry, code, describe);
		}
		if (seen != code)
			continue;
		id = __atomic_load_n(&entry->id, __ATOMIC_ACQUIRE);
		if (id && (entry->name != function_name(code) ||
			   entry->file != word_at(code, reader.layout.code_filename) ||
			   entry->first_line != int_at(code, reader.layout.code_firstlineno))) {
			/* another code object at a freed one's address */
			__atomic_store_n(&entry->id, 0, __ATOMIC_RELEASE);
			return describe_new(entry, code, describe);
		}
		if (id && describe && !__atomic_load_n(&entry->described, __ATOMIC_ACQUIRE))
			describe_once(entry, id, code, describe);
		return id;
	}
	return 0;
}

/* ---- the walk ---- */

/* Where a walk writes, and how it describes what it finds. */
struct walk {
	uint32_t *code_ids, *lines;
	uint32_t max, depth;
	po_pyframes_describe_fn *describe;
};

static void add_frame(struct walk *walk, uintptr_t code, int offset)
{
	walk->code_ids[walk->depth] = code_id(code, walk->describe);
	walk->lines[walk->depth] = (uint32_t)line_of(code, offset);
	walk->depth++;
}

/* 3.9 and 3.10: frame objects, each with its code and its last instruction (f_lasti). */
static void walk_frame_objects(struct walk *walk, uintptr_t frame)
{
	const struct po_py_layout *layout = &reader.layout;

	for (int walked = 0; frame && walk->depth < walk->max && walked < PO_FRAMES_WALKED_MAX;
	     walked++) {
		uintptr_t code;
		int last;

		if (type_of(frame) != reader.frame_type)
			break;
		code = word_at(frame, layout->frame_code);
		if (!code || type_of(code) != reader.code_type)
			break;
		last = int_at(frame, layout->frame_instruction);
		/* 3.9 counts f_lasti in bytes, 3.10 in code units of 2 bytes */
		add_frame(walk, code,
			  last < 0 || layout->lines == PO_PY_LINES_LNOTAB ? last : last * 2);
		frame = word_at(frame, layout->frame_previous);
	}
}

/* Whether code is a code object; copied: read its header through copy_out first. */
static bool is_code(uintptr_t code, bool copied)
{
	unsigned char header[16];

	if (!code)
		return false;
	if (copied && (reader.layout.object_type + sizeof(uintptr_t) > sizeof(header) ||
		       !copy_out(header, code, sizeof(header))))
		return false;
	return type_of(code) == reader.code_type;
}

/* The index (code units) of a frame's instruction: prev_instr or instr_ptr from the start. */
static int instruction_index(uintptr_t frame, uintptr_t code)
{
	const struct po_py_layout *layout = &reader.layout;
	intptr_t bytes = (intptr_t)(word_at(frame, layout->frame_instruction) -
				    (code + layout->code_instructions));

	return (int)(bytes / 2);
}

/*
 * 3.11 and later: the interpreter's frames in the thread's stack chunks (or, for a
 * generator's, in the generator), linked by previous; frames still being set up, and
 * 3.12's and 3.13's entry frames on the C stack, are skipped as Python's f_back skips them.
 */
static void walk_interpreter_frames(struct walk *walk, uintptr_t thread, uintptr_t frame)
{
	const struct po_py_layout *layout = &reader.layout;
	_Alignas(8) unsigned char copy[PO_FRAME_COPY_MAX];

	for (int walked = 0; frame && walk->depth < walk->max && walked < PO_FRAMES_WALKED_MAX;
	     walked++) {
		uintptr_t at = frame, code, previous;
		int owner, index;

		if (!in_live_chunk(thread,
				   frame)) { /* a generator's, an entry frame, one just freed */
			if (!copy_out(copy, frame, layout->frame_size))
				break;
			at = (uintptr_t)copy;
		}
		owner = *(const int8_t *)(at + layout->frame_owner);
		previous = word_at(at, layout->frame_previous);
		if (owner == layout->owner_c_stack) {
			frame = previous;
			continue;
		}
		code = word_at(at, layout->frame_code);
		if (!is_code(code, at != frame))
			break;
		index = instruction_index(at, code);
		if (owner == layout->owner_generator ||
		    index >= int_at(code, layout->code_firsttraceable))
			add_frame(walk, code, index * 2);
		frame = previous;
	}
}

uint32_t po_pyframes_walk(uint32_t *code_ids, uint32_t *lines, uint32_t max,
			  po_pyframes_describe_fn *describe)
{
	const struct po_py_layout *layout = &reader.layout;
	struct walk walk = {.code_ids = code_ids, .lines = lines, .max = max, .describe = describe};
	uintptr_t thread, frame;

	if (!reader.ready || !(thread = (uintptr_t)reader.this_thread_state()))
		return 0;
	frame = word_at(thread, layout->thread_frame);
	switch ((enum po_py_frames)layout->frames) {
	case PO_PY_FRAMES_OBJECTS:
		walk_frame_objects(&walk, frame);
		break;
	case PO_PY_FRAMES_CFRAME: /* the thread's _PyCFrame, then its current frame */
		if (frame)
			walk_interpreter_frames(&walk, thread,
						word_at(frame, layout->cframe_current_frame));
		break;
	case PO_PY_FRAMES_CURRENT:
		walk_interpreter_frames(&walk, thread, frame);
		break;
	}
	return walk.depth;
}

#else /* not 64-bit little-endian Linux */

int po_pyframes_init(void)
{
	return -ENOTSUP;
}

const char *po_pyframes_reason(void)
{
	return "libprofopt reads CPython's frames on 64-bit Linux only";
}

uint32_t po_pyframes_walk(uint32_t *code_ids, uint32_t *lines, uint32_t max,
			  po_pyframes_describe_fn *describe)
{
	(void)code_ids;
	(void)lines;
	(void)max;
	(void)describe;
	return 0;
}

void po_pyframes_forget(void)
{
}

int po_pyframes_line(const void *code, int index)
{
	(void)code;
	(void)index;
	return 0;
}

#endif
