/*
 * pyframes.h: the Python frames of the sampled thread, read by libprofopt's sampler in its
 * signal handler (pyframes.c, docs/sampling.md "How it samples"). Reads CPython 3.9 to
 * 3.13's release builds (pyframes_layouts.h) on 64-bit Linux; elsewhere every call says
 * -ENOTSUP.
 */
#ifndef PROFOPT_PYFRAMES_H
#define PROFOPT_PYFRAMES_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Code ids of the Python functions the sampler describes: from this base up, apart from
 * those the module's own signal handler gives (from 1) and libprofopt's native objects.
 */
#define PO_PYFRAMES_CODE_BASE 0x40000000u

/*
 * Emits profopt:code for a code object seen for the first time (async-signal-safe); false
 * when it could not (the process records nothing yet): the code is described again at its
 * next sight (as when the walk is given no describe at all).
 */
typedef bool po_pyframes_describe_fn(uint32_t code_id, const char *function, const char *file,
				     int32_t first_line);

/*
 * Makes the reader ready in this process, outside any signal handler, for the version of
 * the interpreter that runs here: 0, or -ENOTSUP on a platform whose layouts it does not
 * know, -ENOENT when no interpreter runs here, -EPROTO when the interpreter is a version
 * it does not read, a debug or a free-threaded build (reason() says which, in one line).
 */
int po_pyframes_init(void);

/* One line of why po_pyframes_init failed, or NULL. */
const char *po_pyframes_reason(void);

/*
 * The calling thread's Python frames, innermost first, as (code id, line) pairs: at most
 * max, 0 when the thread runs no Python. Code objects not seen before are described
 * through describe first; with describe NULL (the process records nothing now) they get
 * their ids, and their descriptions wait for a walk with describe. Async-signal-safe: only reads,
 * and process_vm_readv(2) for memory that may have gone (a generator's frame, a frame popped as the
 * signal came).
 */
uint32_t po_pyframes_walk(uint32_t *code_ids, uint32_t *lines, uint32_t max,
			  po_pyframes_describe_fn *describe);

/* A forked child describes its code objects again (its trace is its own). */
void po_pyframes_forget(void);

/*
 * The line of the instruction at index (in code units) of a code object (a PyCodeObject),
 * from its line-number table, as PyCode_Addr2Line gives it; 0 when it has none or the
 * reader is not ready. For tests.
 */
int po_pyframes_line(const void *code, int index);

#endif /* PROFOPT_PYFRAMES_H */
