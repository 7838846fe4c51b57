/*
 * pyframes.c: reads the Python stack of the thread a signal interrupted, inside the signal
 * handler of libprofopt's sampler (stacks.c), so that every thread of a Python process is
 * sampled on its own CPU clock, each sample costing microseconds (docs/sampling.md).
 *
 * A Python signal handler runs on the main thread only, between bytecodes, and its stack walk
 * costs a hundred microseconds and more in a training loop. Here the thread's state comes
 * from the interpreter's thread-specific key (PyGILState_GetThisThreadState, a
 * pthread_getspecific), its frames from the state's current frame and their links, each
 * frame's line from its code object's location table (the 3.11 format), all by reading
 * memory the thread itself owns: the interrupted thread is the only one that changes its
 * frames, and it is stopped in this handler. Nothing is allocated or locked, and the
 * interpreter's only function called is that thread-specific read. A frame outside the
 * thread's live stack chunks (a generator's, or one whose chunk was just freed as the
 * signal came) is copied by process_vm_readv(2), which fails instead of faulting on memory
 * that is gone.
 *
 * The interpreter's symbols are looked up at run time (dlsym), so libprofopt does not link
 * with libpython and loads in any program; the layouts are those of the headers the build
 * found, and po_pyframes_init refuses an interpreter of another version.
 */
#define _GNU_SOURCE
#include "pyframes.h"

#include <errno.h>

#ifdef PO_HAVE_PYFRAMES

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define Py_BUILD_CORE 1
#include <internal/pycore_frame.h>
#undef Py_BUILD_CORE

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

typedef PyThreadState *this_thread_state_fn(void);

static struct {
	bool ready;
	const char *reason;
	this_thread_state_fn *this_thread_state;
	const PyTypeObject *code_type, *unicode_type, *bytes_type;
} reader;

static struct code_entry codes[PO_CODES_CAP];
static uint32_t next_code; /* ids handed out, from PO_PYFRAMES_CODE_BASE + 1 */
static bool codes_used;	   /* an entry was made since the table was last cleared */

static char unsupported_version[128];

int po_pyframes_init(void)
{
	const unsigned long *version;

	if (reader.ready)
		return 0;
	version = dlsym(RTLD_DEFAULT, "Py_Version");
	reader.this_thread_state =
	    (this_thread_state_fn *)dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState");
	reader.code_type = dlsym(RTLD_DEFAULT, "PyCode_Type");
	reader.unicode_type = dlsym(RTLD_DEFAULT, "PyUnicode_Type");
	reader.bytes_type = dlsym(RTLD_DEFAULT, "PyBytes_Type");
	if (!version || !reader.this_thread_state || !reader.code_type || !reader.unicode_type ||
	    !reader.bytes_type) {
		reader.reason = "no CPython interpreter in this process";
		return -ENOENT;
	}
	if ((*version >> 16) != ((unsigned long)PY_VERSION_HEX >> 16)) {
		snprintf(unsupported_version, sizeof(unsupported_version),
			 "libprofopt reads the frames of CPython %d.%d; this is %lu.%lu",
			 PY_MAJOR_VERSION, PY_MINOR_VERSION, *version >> 24,
			 (*version >> 16) & 0xff);
		reader.reason = unsupported_version;
		return -EPROTO;
	}
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
static bool copy_out(void *to, const void *from, size_t len)
{
	struct iovec local = {.iov_base = to, .iov_len = len};
	struct iovec remote = {.iov_base = (void *)from, .iov_len = len};

	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)len;
}

/* Whether frame lies in one of the thread's stack chunks, which are mapped while it runs. */
static bool in_live_chunk(const PyThreadState *state, const _PyInterpreterFrame *frame)
{
	const _PyStackChunk *chunk = state->datastack_chunk;

	for (int i = 0; chunk && i < PO_CHUNKS_MAX; i++, chunk = chunk->previous) {
		const char *start = (const char *)chunk->data,
			   *end = (const char *)chunk + chunk->size;

		if ((const char *)frame >= start && (const char *)(frame + 1) <= end)
			return true;
	}
	return false;
}

/* ---- lines, from the 3.11 location table (Objects/locations.md) ---- */

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

static int line_of(const PyCodeObject *code, int index, const PyTypeObject *bytes_type)
{
	const PyBytesObject *table = (const PyBytesObject *)code->co_linetable;
	const uint8_t *at, *end;
	int line = code->co_firstlineno, start = 0;

	if (!table || Py_TYPE(table) != bytes_type || index < 0)
		return 0;
	at = (const uint8_t *)table->ob_sval;
	end = at + Py_SIZE(table);
	while (at < end) {
		uint8_t first = *at++;
		int kind = (first >> 3) & 15, length = (first & 7) + 1, delta = 0;

		if (kind == PY_CODE_LOCATION_INFO_NO_COLUMNS ||
		    kind == PY_CODE_LOCATION_INFO_LONG) {
			const uint8_t *operand = at;

			delta = read_signed_varint(&operand, end);
		} else if (kind >= PY_CODE_LOCATION_INFO_ONE_LINE0 &&
			   kind <= PY_CODE_LOCATION_INFO_ONE_LINE2) {
			delta = kind - PY_CODE_LOCATION_INFO_ONE_LINE0;
		}
		line += delta;
		if (index < start + length)
			return kind == PY_CODE_LOCATION_INFO_NONE || line < 0 ? 0 : line;
		start += length;
		while (at < end && !(*at & 128)) /* the entry's operands, up to the next entry */
			at++;
	}
	return 0;
}

int po_pyframes_line(const void *code, int index)
{
	const PyTypeObject *bytes_type = dlsym(RTLD_DEFAULT, "PyBytes_Type");

	return code && bytes_type ? line_of(code, index, bytes_type) : 0;
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
static void name_of(const PyObject *object, char *out)
{
	const PyASCIIObject *ascii = (const PyASCIIObject *)object;
	const void *data;
	size_t used = 0;
	Py_ssize_t length;
	unsigned int kind;

	strcpy(out, "?");
	if (!object || Py_TYPE(object) != reader.unicode_type || !ascii->state.ready)
		return;
	length = ascii->length;
	kind = ascii->state.kind;
	if (ascii->state.compact)
		data = ascii->state.ascii
			   ? (const void *)(ascii + 1)
			   : (const void *)((const PyCompactUnicodeObject *)object + 1);
	else
		data = ((const PyUnicodeObject *)object)->data.any;
	if (!data || (kind != 1 && kind != 2 && kind != 4))
		return;
	for (Py_ssize_t i = 0; i < length; i++) {
		uint32_t c = kind == 1	 ? ((const uint8_t *)data)[i]
			     : kind == 2 ? ((const uint16_t *)data)[i]
					 : ((const uint32_t *)data)[i];

		if (!put_utf8(out, &used, c))
			break;
	}
	out[used] = '\0';
}

/* ---- code ids ---- */

/*
 * Describes code as id through describe, unless another thread does it now; nothing
 * without describe (the process records nothing now: the names are not even read).
 */
static void describe_once(struct code_entry *entry, uint32_t id, const PyCodeObject *code,
			  po_pyframes_describe_fn *describe)
{
	char function[PO_NAME_MAX], file[PO_NAME_MAX];

	if (!describe || __atomic_exchange_n(&entry->described, 1, __ATOMIC_ACQ_REL))
		return;
	name_of(code->co_qualname ? code->co_qualname : code->co_name, function);
	name_of(code->co_filename, file);
	if (!describe(id, function, file, code->co_firstlineno))
		__atomic_store_n(&entry->described, 0, __ATOMIC_RELEASE);
}

static uint32_t describe_new(struct code_entry *entry, const PyCodeObject *code,
			     po_pyframes_describe_fn *describe)
{
	uint32_t id = PO_PYFRAMES_CODE_BASE + __atomic_add_fetch(&next_code, 1, __ATOMIC_RELAXED);

	entry->name = (uintptr_t)code->co_qualname;
	entry->file = (uintptr_t)code->co_filename;
	entry->first_line = code->co_firstlineno;
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
static uint32_t code_id(const PyCodeObject *code, po_pyframes_describe_fn *describe)
{
	uintptr_t key = (uintptr_t)code;
	uint32_t slot = (uint32_t)((key >> 4) * 2654435761u) & (PO_CODES_CAP - 1);

	for (uint32_t probe = 0; probe < PO_CODES_CAP; probe++) {
		struct code_entry *entry = &codes[(slot + probe) & (PO_CODES_CAP - 1)];
		uintptr_t seen = __atomic_load_n(&entry->key, __ATOMIC_ACQUIRE);
		uint32_t id;

		if (seen == 0) {
			if (!__atomic_compare_exchange_n(&entry->key, &seen, key, false,
							 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
				if (seen != key)
					continue; /* another code took the slot */
				return __atomic_load_n(&entry->id, __ATOMIC_ACQUIRE);
			}
			__atomic_store_n(&codes_used, true, __ATOMIC_RELAXED);
			return describe_new(entry, code, describe);
		}
		if (seen != key)
			continue;
		id = __atomic_load_n(&entry->id, __ATOMIC_ACQUIRE);
		if (id && (entry->name != (uintptr_t)code->co_qualname ||
			   entry->file != (uintptr_t)code->co_filename ||
			   entry->first_line != code->co_firstlineno)) {
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

uint32_t po_pyframes_walk(uint32_t *code_ids, uint32_t *lines, uint32_t max,
			  po_pyframes_describe_fn *describe)
{
	PyThreadState *state;
	const _PyInterpreterFrame *frame;
	_PyInterpreterFrame copy;
	uint32_t depth = 0;

	if (!reader.ready || !(state = reader.this_thread_state()) || !state->cframe)
		return 0;
	frame = state->cframe->current_frame;
	for (int walked = 0; frame && depth < max && walked < PO_FRAMES_WALKED_MAX; walked++) {
		const PyCodeObject *code;
		PyObject header;
		int index;

		if (!in_live_chunk(state, frame)) { /* a generator's frame, or one just freed */
			if (!copy_out(&copy, frame, offsetof(_PyInterpreterFrame, localsplus)))
				break;
			frame = &copy;
			if (!frame->f_code || !copy_out(&header, frame->f_code, sizeof(header)) ||
			    header.ob_type != reader.code_type)
				break;
		}
		code = frame->f_code;
		if (!code || Py_TYPE(code) != reader.code_type)
			break;
		index = (int)(frame->prev_instr - _PyCode_CODE(code));
		/* a frame still being set up, which Python's own f_back skips too */
		if (frame->owner == FRAME_OWNED_BY_GENERATOR || index >= code->_co_firsttraceable) {
			code_ids[depth] = code_id(code, describe);
			lines[depth] = (uint32_t)line_of(code, index, reader.bytes_type);
			depth++;
		}
		frame = frame->previous;
	}
	return depth;
}

#else /* !PO_HAVE_PYFRAMES */

int po_pyframes_init(void)
{
	return -ENOTSUP;
}

const char *po_pyframes_reason(void)
{
	return "libprofopt was built without CPython's headers";
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
