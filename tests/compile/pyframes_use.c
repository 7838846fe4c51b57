/*
 * pyframes_use.c: libprofopt's reader of Python stacks (tracepoints/pyframes.c), run in an
 * embedded CPython. The line of every instruction of every code object the standard
 * library's modules hold, against PyCode_Addr2Line; and the stack it reads from inside
 * Python (a function with a non-ASCII name, a generator, a thread, recursion) against
 * Python's own view of it (sys._getframe), names, files and lines.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdio.h>
#include <string.h>

#include "pyframes.h"
#include "pyframes_described.h"

static int failures;

/*
 * The interpreter keeps memory until the process ends (interned strings, static types):
 * LeakSanitizer, in the sanitizers' build, is told not to report what libpython allocated.
 */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libpython3.11.so\n";
}

#define EXPECT(cond, ...)                                                                          \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			failures++;                                                                \
			printf("FAIL " __VA_ARGS__);                                               \
			printf("\n");                                                              \
		}                                                                                  \
	} while (0)

/* ---- lines ---- */

/* Compares every instruction's line of code, and of the code objects among its constants. */
static void check_lines(PyCodeObject *code, long *codes, long *instructions)
{
	PyObject *bytes = PyCode_GetCode(code);
	PyObject *consts = code->co_consts;
	Py_ssize_t units;

	if (!bytes)
		return;
	units = PyBytes_GET_SIZE(bytes) / 2;
	Py_DECREF(bytes);
	(*codes)++;
	for (Py_ssize_t i = 0; i < units; i++) {
		int expected = PyCode_Addr2Line(code, (int)(i * 2));
		int got = po_pyframes_line(code, (int)i);

		(*instructions)++;
		if (expected < 0)
			expected = 0;
		EXPECT(got == expected, "line of %s instruction %zd: %d, PyCode_Addr2Line %d",
		       PyUnicode_AsUTF8(code->co_qualname), i, got, expected);
		if (got != expected)
			return;
	}
	for (Py_ssize_t i = 0; consts && i < PyTuple_GET_SIZE(consts); i++)
		if (PyCode_Check(PyTuple_GET_ITEM(consts, i)))
			check_lines((PyCodeObject *)PyTuple_GET_ITEM(consts, i), codes,
				    instructions);
}

static void test_lines(void)
{
	static const char *modules[] = {"json.decoder", "argparse", "email.message", "asyncio",
					"dataclasses",	"typing",   "unittest.case", "http.client"};
	long codes = 0, instructions = 0;

	for (size_t m = 0; m < sizeof(modules) / sizeof(modules[0]); m++) {
		PyObject *module = PyImport_ImportModule(modules[m]);
		PyObject *loader = NULL, *code = NULL;

		EXPECT(module != NULL, "import %s", modules[m]);
		if (!module) {
			PyErr_Clear();
			continue;
		}
		/* the module's code object, compiled again from its source (with its functions) */
		loader = PyObject_GetAttrString(module, "__loader__");
		if (loader)
			code = PyObject_CallMethod(loader, "get_code", "s", modules[m]);
		EXPECT(code && PyCode_Check(code), "the code of %s", modules[m]);
		if (code && PyCode_Check(code))
			check_lines((PyCodeObject *)code, &codes, &instructions);
		PyErr_Clear();
		Py_XDECREF(code);
		Py_XDECREF(loader);
		Py_DECREF(module);
	}
	EXPECT(instructions > 10000, "only %ld instructions compared", instructions);
	printf(
	    "ok   lines of %ld instructions in %ld code objects as PyCode_Addr2Line gives them\n",
	    instructions, codes);
}

/* ---- the walk ---- */

static uint32_t refused_ids[128], refused_depth;

/* walk(): the calling thread's stack as the reader sees it, [(function, file, line), ...]. */
static PyObject *walk(PyObject *self, PyObject *unused)
{
	uint32_t ids[128], lines[128];
	uint32_t depth = po_pyframes_walk(ids, lines, 128, describe);
	PyObject *list = PyList_New(0);

	(void)self;
	(void)unused;
	for (uint32_t i = 0; list && i < depth; i++) {
		const struct described *code = find(ids[i]);
		PyObject *item = Py_BuildValue("(ssI)", code ? code->function : "?",
					       code ? code->file : "?", lines[i]);

		if (!item || PyList_Append(list, item) != 0) {
			Py_XDECREF(item);
			Py_DECREF(list);
			return NULL;
		}
		Py_DECREF(item);
	}
	return list;
}

/* walk_refused(): walks while descriptions are refused; the number of frames. */
static PyObject *walk_refused(PyObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	refused_depth = po_pyframes_walk(refused_ids, (uint32_t[128]){0}, 128, refuse);
	return PyLong_FromUnsignedLong(refused_depth);
}

/* walk_silent(): walks without describe (nothing recorded); the number of frames. */
static PyObject *walk_silent(PyObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	refused_depth = po_pyframes_walk(refused_ids, (uint32_t[128]){0}, 128, NULL);
	return PyLong_FromUnsignedLong(refused_depth);
}

/* described_since(): how many of walk_refused()'s codes have been described since. */
static PyObject *described_since(PyObject *self, PyObject *unused)
{
	uint32_t found = 0;

	(void)self;
	(void)unused;
	for (uint32_t i = 0; i < refused_depth; i++)
		found += find(refused_ids[i]) != NULL;
	return PyLong_FromUnsignedLong(found);
}

static PyMethodDef methods[] = {
    {"walk", walk, METH_NOARGS, "the reader's view of this stack"},
    {"walk_refused", walk_refused, METH_NOARGS, "a walk whose descriptions are refused"},
    {"walk_silent", walk_silent, METH_NOARGS, "a walk without descriptions"},
    {"described_since", described_since, METH_NOARGS, "walk_refused's codes described since"},
    {NULL, NULL, 0, NULL}};
static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "pyframes_probe", NULL, -1, methods, NULL, NULL, NULL, NULL};

static PyObject *init_probe(void)
{
	return PyModule_Create(&module_def);
}

/* Python's own view next to the reader's, for each situation; prints ok/FAIL lines. */
static const char *script =
    "import sys, threading\n"
    "from pyframes_probe import walk\n"
    "def python_view():\n"
    "    frame, view = sys._getframe(1), []\n"
    "    while frame is not None:\n"
    "        view.append((frame.f_code.co_qualname, frame.f_code.co_filename, frame.f_lineno))\n"
    "        frame = frame.f_back\n"
    "    return view\n"
    "def both():\n"
    "    return walk(), python_view()\n"
    "results = []\n"
    "def fünf():\n"
    "    return both()\n"
    "def gen():\n"
    "    yield both()\n"
    "class Deep:\n"
    "    def down(self, n):\n"
    "        return both() if n == 0 else self.down(n - 1)\n"
    "results.append(('a function named in UTF-8', fünf()))\n"
    "results.append(('a generator', next(gen())))\n"
    "results.append(('a list comprehension', [both() for _ in range(1)][0]))\n"
    "results.append(('recursion 100 deep', Deep().down(100)))\n"
    "box = []\n"
    "thread = threading.Thread(target=lambda: box.append(fünf()))\n"
    "thread.start(); thread.join()\n"
    "results.append(('a thread', box[0]))\n"
    "for what, (reader, python) in results:\n"
    "    same = reader == python and reader[0][0] == 'both'\n"
    "    print(('ok   ' if same else 'FAIL ') + what + ': ' + str(len(reader)) + ' frames as '\n"
    "          'Python sees them' + ('' if same else ' ' + repr(reader[:4]) + ' vs ' + "
    "repr(python[:4])))\n"
    "    if not same: sys.exit(1)\n"
    "from pyframes_probe import walk_refused, walk_silent, described_since\n"
    "def first_seen_refused():\n"
    "    depth = walk_refused()\n"
    "    walk()\n"
    "    return depth, described_since()\n"
    "def first_seen_silent():\n"
    "    depth = walk_silent()\n"
    "    walk()\n"
    "    return depth, described_since()\n"
    "for how, first_seen in (('refused', first_seen_refused), ('not asked for', "
    "first_seen_silent)):\n"
    "    depth, found = first_seen()\n"
    "    ok = depth > 0 and found == depth\n"
    "    print(('ok   ' if ok else 'FAIL ') + 'a code first seen with its description ' + how +\n"
    "          ' is described at its next sight: ' + str(found) + ' of ' + str(depth))\n"
    "    if not ok: sys.exit(1)\n";

static void test_walk(void)
{
	PyObject *main_module = PyImport_AddModule("__main__");
	PyObject *globals = PyModule_GetDict(main_module);
	PyObject *result;

	EXPECT(po_pyframes_walk((uint32_t[4]){0}, (uint32_t[4]){0}, 4, describe) == 0,
	       "no frames outside Python code");
	result = PyRun_String(script, Py_file_input, globals, globals);
	if (!result) {
		PyErr_Print();
		failures++;
		return;
	}
	Py_DECREF(result);
}

int main(void)
{
	int ret;

	PyImport_AppendInittab("pyframes_probe", init_probe);
	Py_Initialize();
	ret = po_pyframes_init();
	EXPECT(ret == 0, "po_pyframes_init: %d (%s)", ret,
	       po_pyframes_reason() ? po_pyframes_reason() : "");
	if (ret == 0) {
		test_lines();
		test_walk();
	}
	if (Py_FinalizeEx() < 0)
		failures++;
	printf("%s\n", failures ? "FAILED" : "all passed");
	return failures ? 1 : 0;
}
