/*
 * pyframes_layouts.h: where CPython 3.9 to 3.13 keep what libprofopt's reader of Python
 * stacks (pyframes.c) reads, per minor version, for 64-bit Linux release builds (no
 * Py_DEBUG, no Py_TRACE_REFS, not free-threaded). One row per version, written from that
 * version's headers and checked against them by unit.lib.pyframes.layouts.py3X
 * (tests/compile/pyframes_layouts.c, compiled where the headers are).
 */
#ifndef PROFOPT_PYFRAMES_LAYOUTS_H
#define PROFOPT_PYFRAMES_LAYOUTS_H

#include <stdint.h>

/* How a thread state leads to the thread's innermost frame. */
enum po_py_frames {
	/* PyThreadState.frame: a PyFrameObject, linked by f_back (3.9, 3.10) */
	PO_PY_FRAMES_OBJECTS,
	/* PyThreadState.cframe->current_frame: a _PyInterpreterFrame (3.11, 3.12) */
	PO_PY_FRAMES_CFRAME,
	/* PyThreadState.current_frame: a _PyInterpreterFrame (3.13) */
	PO_PY_FRAMES_CURRENT,
};

/* A code object's line-number table. */
enum po_py_lines {
	PO_PY_LINES_LNOTAB,    /* co_lnotab: (bytes, lines) increments (3.9) */
	PO_PY_LINES_PEP626,    /* co_linetable: (bytes, lines or -128) ranges (3.10) */
	PO_PY_LINES_LOCATIONS, /* co_linetable: the location table (3.11 and later) */
};

/* Byte offsets of the fields read, 0 where the version has no such field. */
struct po_py_layout {
	uint8_t minor;		   /* 3.minor */
	uint8_t frames;		   /* enum po_py_frames */
	uint8_t lines;		   /* enum po_py_lines */
	uint8_t unicode_has_ready; /* the str state's bit 7 is "ready" (3.9 to 3.11) */
	/* PyThreadState: frame (OBJECTS), cframe (CFRAME) or current_frame (CURRENT) */
	uint16_t thread_frame;
	uint16_t cframe_current_frame;	 /* _PyCFrame.current_frame (CFRAME) */
	uint16_t thread_datastack_chunk; /* the thread's stack chunks (3.11 and later) */
	uint16_t chunk_previous, chunk_size, chunk_data; /* _PyStackChunk */
	/* the frame: PyFrameObject (f_back, f_code, f_lasti) or _PyInterpreterFrame (previous,
	 * f_code or f_executable, prev_instr or instr_ptr, owner) */
	uint16_t frame_previous, frame_code, frame_instruction, frame_owner;
	uint16_t frame_size; /* bytes copied of a frame that may be gone (up to localsplus) */
	int8_t owner_generator, owner_c_stack; /* owner values; -1: none */
	/* PyCodeObject; code_qualname 0 before 3.11 (co_name is read) */
	uint16_t code_name, code_qualname, code_filename, code_firstlineno, code_linetable;
	uint16_t code_firsttraceable, code_instructions; /* 3.11 and later: co_code_adaptive */
	uint16_t object_type;				 /* PyObject.ob_type */
	uint16_t str_length, str_state, str_ascii_size, str_compact_size; /* PyASCIIObject */
	uint16_t bytes_size, bytes_data; /* PyBytesObject: ob_size, ob_sval */
};

/* The versions read, oldest first. */
static const struct po_py_layout po_py_layouts[] = {
    {
	.minor = 9,
	.frames = PO_PY_FRAMES_OBJECTS,
	.lines = PO_PY_LINES_LNOTAB,
	.unicode_has_ready = 1,
	.thread_frame = 24,
	.frame_previous = 24,
	.frame_code = 32,
	.frame_instruction = 104,
	.owner_generator = -1,
	.owner_c_stack = -1,
	.code_name = 112,
	.code_filename = 104,
	.code_firstlineno = 40,
	.code_linetable = 120,
	.object_type = 8,
	.str_length = 16,
	.str_state = 32,
	.str_ascii_size = 48,
	.str_compact_size = 72,
	.bytes_size = 16,
	.bytes_data = 32,
    },
    {
	.minor = 10,
	.frames = PO_PY_FRAMES_OBJECTS,
	.lines = PO_PY_LINES_PEP626,
	.unicode_has_ready = 1,
	.thread_frame = 24,
	.frame_previous = 24,
	.frame_code = 32,
	.frame_instruction = 96,
	.owner_generator = -1,
	.owner_c_stack = -1,
	.code_name = 112,
	.code_filename = 104,
	.code_firstlineno = 40,
	.code_linetable = 120,
	.object_type = 8,
	.str_length = 16,
	.str_state = 32,
	.str_ascii_size = 48,
	.str_compact_size = 72,
	.bytes_size = 16,
	.bytes_data = 32,
    },
    {
	.minor = 11,
	.frames = PO_PY_FRAMES_CFRAME,
	.lines = PO_PY_LINES_LOCATIONS,
	.unicode_has_ready = 1,
	.thread_frame = 56,
	.cframe_current_frame = 8,
	.thread_datastack_chunk = 296,
	.chunk_previous = 0,
	.chunk_size = 8,
	.chunk_data = 24,
	.frame_previous = 48,
	.frame_code = 32,
	.frame_instruction = 56,
	.frame_owner = 69,
	.frame_size = 72,
	.owner_generator = 1,
	.owner_c_stack = -1,
	.code_name = 120,
	.code_qualname = 128,
	.code_filename = 112,
	.code_firstlineno = 72,
	.code_linetable = 136,
	.code_firsttraceable = 168,
	.code_instructions = 184,
	.object_type = 8,
	.str_length = 16,
	.str_state = 32,
	.str_ascii_size = 48,
	.str_compact_size = 72,
	.bytes_size = 16,
	.bytes_data = 32,
    },
    {
	.minor = 12,
	.frames = PO_PY_FRAMES_CFRAME,
	.lines = PO_PY_LINES_LOCATIONS,
	.unicode_has_ready = 0,
	.thread_frame = 56,
	.cframe_current_frame = 0,
	.thread_datastack_chunk = 232,
	.chunk_previous = 0,
	.chunk_size = 8,
	.chunk_data = 24,
	.frame_previous = 8,
	.frame_code = 0,
	.frame_instruction = 56,
	.frame_owner = 70,
	.frame_size = 72,
	.owner_generator = 1,
	.owner_c_stack = 3,
	.code_name = 120,
	.code_qualname = 128,
	.code_filename = 112,
	.code_firstlineno = 68,
	.code_linetable = 136,
	.code_firsttraceable = 176,
	.code_instructions = 192,
	.object_type = 8,
	.str_length = 16,
	.str_state = 32,
	.str_ascii_size = 40,
	.str_compact_size = 56,
	.bytes_size = 16,
	.bytes_data = 32,
    },
    {
	.minor = 13,
	.frames = PO_PY_FRAMES_CURRENT,
	.lines = PO_PY_LINES_LOCATIONS,
	.unicode_has_ready = 0,
	.thread_frame = 72,
	.thread_datastack_chunk = 232,
	.chunk_previous = 0,
	.chunk_size = 8,
	.chunk_data = 24,
	.frame_previous = 8,
	.frame_code = 0,
	.frame_instruction = 56,
	.frame_owner = 70,
	.frame_size = 72,
	.owner_generator = 1,
	.owner_c_stack = 3,
	.code_name = 120,
	.code_qualname = 128,
	.code_filename = 112,
	.code_firstlineno = 68,
	.code_linetable = 136,
	.code_firsttraceable = 184,
	.code_instructions = 200,
	.object_type = 8,
	.str_length = 16,
	.str_state = 32,
	.str_ascii_size = 40,
	.str_compact_size = 56,
	.bytes_size = 16,
	.bytes_data = 32,
    },
};

#define PO_PY_LAYOUT_COUNT (sizeof(po_py_layouts) / sizeof(po_py_layouts[0]))

/* Bits of a str object's state word (the same from 3.9 to 3.13). */
#define PO_PY_STR_KIND(state) (((state) >> 2) & 7u)
#define PO_PY_STR_COMPACT(state) (((state) >> 5) & 1u)
#define PO_PY_STR_ASCII(state) (((state) >> 6) & 1u)
#define PO_PY_STR_READY(state) (((state) >> 7) & 1u)

/*
 * CPython 3.13's _Py_DebugOffsets, the first member of _PyRuntime (Include/internal/
 * pycore_runtime.h), up to the members read: where 3.13 itself says its fields are. Its
 * layout is fixed within a minor version only; the cookie and version are checked first.
 */
#define PO_PY313_DEBUG_COOKIE "xdebugpy"
struct po_py313_debug_offsets {
	char cookie[8];
	uint64_t version; /* PY_VERSION_HEX */
	uint64_t free_threaded;
	struct {
		uint64_t size, finalizing, interpreters_head;
	} runtime_state;
	struct {
		uint64_t size, id, next, threads_head, gc, imports_modules, sysdict, builtins,
		    ceval_gil, gil_runtime_state, gil_runtime_state_enabled,
		    gil_runtime_state_locked, gil_runtime_state_holder;
	} interpreter_state;
	struct {
		uint64_t size, prev, next, interp, current_frame, thread_id, native_thread_id,
		    datastack_chunk, status;
	} thread_state;
	struct {
		uint64_t size, previous, executable, instr_ptr, localsplus, owner;
	} interpreter_frame;
	struct {
		uint64_t size, filename, name, qualname, linetable, firstlineno, argcount,
		    localsplusnames, localspluskinds, co_code_adaptive;
	} code_object;
	struct {
		uint64_t size, ob_type;
	} pyobject;
	struct {
		uint64_t size, tp_name, tp_repr, tp_flags;
	} type_object;
	struct {
		uint64_t size, ob_item, ob_size;
	} tuple_object, list_object;
	struct {
		uint64_t size, ma_keys, ma_values;
	} dict_object;
	struct {
		uint64_t size, ob_fval;
	} float_object;
	struct {
		uint64_t size, lv_tag, ob_digit;
	} long_object;
	struct {
		uint64_t size, ob_size, ob_sval;
	} bytes_object;
	struct {
		uint64_t size, state, length, asciiobject_size;
	} unicode_object;
};

#endif /* PROFOPT_PYFRAMES_LAYOUTS_H */
