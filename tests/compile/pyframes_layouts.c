/*
 * pyframes_layouts.c: the row of pyframes_layouts.h for the CPython whose headers this is
 * compiled against (pyframes_layouts.sh), field by field against those headers' offsetof
 * and sizeof, and for 3.13 the reader's copy of _Py_DebugOffsets against the real one: a
 * wrong offset in the table fails here before it misreads a frame.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <frameobject.h>
#if PY_VERSION_HEX >= 0x030b0000
#define Py_BUILD_CORE 1
#include <internal/pycore_frame.h>
#if PY_VERSION_HEX >= 0x030d0000
#include <internal/pycore_runtime.h>
#endif
#undef Py_BUILD_CORE
#endif

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "pyframes_layouts.h"

static int failures, compared;

static void same(const char *what, long table, long headers)
{
	compared++;
	if (table != headers) {
		failures++;
		printf("FAIL %s: %ld in pyframes_layouts.h, %ld in CPython %d.%d's headers\n", what,
		       table, headers, PY_MAJOR_VERSION, PY_MINOR_VERSION);
	}
}

#define SAME(field, headers) same(#field, (long)layout->field, (long)(headers))
#define SIZE_OF(type, member) sizeof(((type *)0)->member)

static void check_objects(const struct po_py_layout *layout)
{
	PyASCIIObject text;
	uint32_t state;

	SAME(object_type, offsetof(PyObject, ob_type));
	SAME(str_length, offsetof(PyASCIIObject, length));
	SAME(str_state, offsetof(PyASCIIObject, state));
	SAME(str_ascii_size, sizeof(PyASCIIObject));
	SAME(str_compact_size, sizeof(PyCompactUnicodeObject));
	same("PyUnicodeObject.data", layout->str_compact_size, offsetof(PyUnicodeObject, data));
	SAME(bytes_size, offsetof(PyVarObject, ob_size));
	SAME(bytes_data, offsetof(PyBytesObject, ob_sval));
	SAME(code_name, offsetof(PyCodeObject, co_name));
	SAME(code_filename, offsetof(PyCodeObject, co_filename));
	SAME(code_firstlineno, offsetof(PyCodeObject, co_firstlineno));
	same("sizeof co_firstlineno", 4, SIZE_OF(PyCodeObject, co_firstlineno));
	/* the state word's bits, as PO_PY_STR_* read them */
	memset(&text, 0, sizeof(text));
	text.state.kind = 4;
	text.state.compact = 1;
	text.state.ascii = 1;
#if PY_VERSION_HEX < 0x030c0000
	text.state.ready = 1;
	same("the ready bit", layout->unicode_has_ready, 1);
#else
	same("the ready bit", layout->unicode_has_ready, 0);
#endif
	memcpy(&state, (const char *)&text + offsetof(PyASCIIObject, state), sizeof(state));
	same("the kind bits", PO_PY_STR_KIND(state), 4);
	same("the compact bit", PO_PY_STR_COMPACT(state), 1);
	same("the ascii bit", PO_PY_STR_ASCII(state), 1);
	same("the ready bit's value", PO_PY_STR_READY(state), layout->unicode_has_ready);
}

#if PY_VERSION_HEX < 0x030b0000
static void check_frames(const struct po_py_layout *layout)
{
	SAME(frames, PO_PY_FRAMES_OBJECTS);
	SAME(lines, PY_VERSION_HEX < 0x030a0000 ? PO_PY_LINES_LNOTAB : PO_PY_LINES_PEP626);
	SAME(thread_frame, offsetof(PyThreadState, frame));
	SAME(frame_previous, offsetof(PyFrameObject, f_back));
	SAME(frame_code, offsetof(PyFrameObject, f_code));
	SAME(frame_instruction, offsetof(PyFrameObject, f_lasti));
	same("sizeof f_lasti", 4, SIZE_OF(PyFrameObject, f_lasti));
#if PY_VERSION_HEX < 0x030a0000
	SAME(code_linetable, offsetof(PyCodeObject, co_lnotab));
#else
	SAME(code_linetable, offsetof(PyCodeObject, co_linetable));
#endif
	SAME(code_qualname, 0);
}
#else
static void check_frames(const struct po_py_layout *layout)
{
	SAME(lines, PO_PY_LINES_LOCATIONS);
#if PY_VERSION_HEX < 0x030d0000
	SAME(frames, PO_PY_FRAMES_CFRAME);
	SAME(thread_frame, offsetof(PyThreadState, cframe));
	SAME(cframe_current_frame, offsetof(_PyCFrame, current_frame));
	SAME(frame_code, offsetof(_PyInterpreterFrame, f_code));
	SAME(frame_instruction, offsetof(_PyInterpreterFrame, prev_instr));
#else
	SAME(frames, PO_PY_FRAMES_CURRENT);
	SAME(thread_frame, offsetof(PyThreadState, current_frame));
	SAME(frame_code, offsetof(_PyInterpreterFrame, f_executable));
	SAME(frame_instruction, offsetof(_PyInterpreterFrame, instr_ptr));
#endif
#if PY_VERSION_HEX < 0x030c0000
	SAME(owner_c_stack, -1);
#else
	SAME(owner_c_stack, FRAME_OWNED_BY_CSTACK);
#endif
	SAME(owner_generator, FRAME_OWNED_BY_GENERATOR);
	SAME(thread_datastack_chunk, offsetof(PyThreadState, datastack_chunk));
	SAME(chunk_previous, offsetof(_PyStackChunk, previous));
	SAME(chunk_size, offsetof(_PyStackChunk, size));
	SAME(chunk_data, offsetof(_PyStackChunk, data));
	SAME(frame_previous, offsetof(_PyInterpreterFrame, previous));
	SAME(frame_owner, offsetof(_PyInterpreterFrame, owner));
	same("sizeof owner", 1, SIZE_OF(_PyInterpreterFrame, owner));
	SAME(frame_size, offsetof(_PyInterpreterFrame, localsplus));
	same("frame_size within the copy", layout->frame_size <= 128, 1);
	SAME(code_qualname, offsetof(PyCodeObject, co_qualname));
	SAME(code_linetable, offsetof(PyCodeObject, co_linetable));
	SAME(code_firsttraceable, offsetof(PyCodeObject, _co_firsttraceable));
	same("sizeof _co_firsttraceable", 4, SIZE_OF(PyCodeObject, _co_firsttraceable));
	SAME(code_instructions, offsetof(PyCodeObject, co_code_adaptive));
}
#endif

#if PY_VERSION_HEX >= 0x030d0000
#define SAME_DEBUG(member)                                                                         \
	same("_Py_DebugOffsets." #member, offsetof(struct po_py313_debug_offsets, member),         \
	     offsetof(_Py_DebugOffsets, member))

/* The reader's copy of 3.13's _Py_DebugOffsets, where it reads it. */
static void check_debug_offsets(void)
{
	same("the cookie", memcmp(PO_PY313_DEBUG_COOKIE, _Py_Debug_Cookie, 8), 0);
	SAME_DEBUG(version);
	SAME_DEBUG(free_threaded);
	SAME_DEBUG(thread_state.current_frame);
	SAME_DEBUG(thread_state.datastack_chunk);
	SAME_DEBUG(interpreter_frame.previous);
	SAME_DEBUG(interpreter_frame.executable);
	SAME_DEBUG(interpreter_frame.instr_ptr);
	SAME_DEBUG(interpreter_frame.localsplus);
	SAME_DEBUG(interpreter_frame.owner);
	SAME_DEBUG(code_object.filename);
	SAME_DEBUG(code_object.name);
	SAME_DEBUG(code_object.qualname);
	SAME_DEBUG(code_object.linetable);
	SAME_DEBUG(code_object.firstlineno);
	SAME_DEBUG(code_object.co_code_adaptive);
	SAME_DEBUG(pyobject.ob_type);
	SAME_DEBUG(bytes_object.ob_size);
	SAME_DEBUG(bytes_object.ob_sval);
	SAME_DEBUG(unicode_object.state);
	SAME_DEBUG(unicode_object.length);
	SAME_DEBUG(unicode_object.asciiobject_size);
}
#endif

int main(void)
{
	const struct po_py_layout *layout = NULL;

	for (size_t i = 0; i < PO_PY_LAYOUT_COUNT; i++)
		if (po_py_layouts[i].minor == PY_MINOR_VERSION)
			layout = &po_py_layouts[i];
	if (PY_MAJOR_VERSION != 3 || !layout) {
		printf("FAIL no row for CPython %d.%d in pyframes_layouts.h\n", PY_MAJOR_VERSION,
		       PY_MINOR_VERSION);
		return 1;
	}
	check_objects(layout);
	check_frames(layout);
#if PY_VERSION_HEX >= 0x030d0000
	check_debug_offsets();
#endif
	printf("%s %d fields of CPython %s's layout as its headers say\n",
	       failures ? "FAIL" : "ok  ", compared, PY_VERSION);
	return failures ? 1 : 0;
}
