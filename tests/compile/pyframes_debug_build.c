/*
 * pyframes_debug_build.c: preloaded (LD_PRELOAD) into a release CPython, makes it look like
 * a debug build to libprofopt's reader, which looks for the function a Py_REF_DEBUG build
 * has (unit.lib.pyframes.refused.debug): the reader must refuse it in one line.
 */
#define PROBE_EXPORT __attribute__((visibility("default")))

PROBE_EXPORT void _Py_NegativeRefcount(const char *filename, int lineno, const void *op);
PROBE_EXPORT void _Py_NegativeRefcount(const char *filename, int lineno, const void *op)
{
	(void)filename;
	(void)lineno;
	(void)op;
}
