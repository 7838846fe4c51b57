/*
 * heap.c: libprofopt-heap, which profopt-record --heap preloads right after
 * liblttng-ust-libc-wrapper. For each allocation that wrapper records (malloc, calloc,
 * realloc, memalign, posix_memalign), it records the return addresses on the allocating
 * thread's stack (profopt_heap:alloc_callers, the block's address and up to
 * HEAP_CALLERS_MAX addresses, the innermost first: the wrapper's own ip, then its callers),
 * so that profopt-analyze can name the code that asked for the memory past the allocators
 * it went through (c10::alloc_cpu, operator new, PyMem_Malloc).
 *
 * The next definitions (libc's, or a malloc the user preloads after profopt's) are found
 * with dlsym(RTLD_NEXT); what dlsym allocates meanwhile comes from a static bootstrap
 * block that free and realloc recognise. An allocation made while this thread records
 * (the unwinder's or the tracer's own) is not recorded again.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unwind.h>

#include "heap_tp.h"

#define HEAP_CALLERS_MAX 16
#define HEAP_EXPORT __attribute__((visibility("default")))
#define HEAP_TLS __attribute__((tls_model("initial-exec"))) __thread

static struct {
	void *(*malloc)(size_t);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	void (*free)(void *);
	void *(*memalign)(size_t, size_t);
	int (*posix_memalign)(void **, size_t, size_t);
} next;

/* Code whose frames are not callers: this library's and the libc wrapper's before it. */
struct code_range {
	uintptr_t begin;
	uintptr_t end;
};
static struct code_range skipped[2];

static HEAP_TLS bool resolving; /* this thread is in dlsym: serve from the bootstrap block */
static HEAP_TLS bool recording; /* this thread records an allocation's callers */

static char bootstrap[16384] __attribute__((aligned(64)));
static size_t bootstrap_used;

static bool in_bootstrap(const void *ptr)
{
	return (const char *)ptr >= bootstrap && (const char *)ptr < bootstrap + sizeof(bootstrap);
}

/* Never freed, zeroed (the block starts zeroed and is never reused); NULL when full. */
static void *bootstrap_alloc(size_t size, size_t alignment)
{
	size_t used = __atomic_load_n(&bootstrap_used, __ATOMIC_RELAXED), start;

	if (alignment < 16)
		alignment = 16;
	do {
		start = (used + alignment - 1) & ~(alignment - 1);
		if (start + size > sizeof(bootstrap) || start + size < start)
			return NULL;
	} while (!__atomic_compare_exchange_n(&bootstrap_used, &used, start + size, true,
					      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	return bootstrap + start;
}

/* Finds the next definitions; false while this thread is already finding them. */
static bool resolve(void)
{
	if (resolving)
		return false;
	resolving = true;
	next.calloc = dlsym(RTLD_NEXT, "calloc");
	next.realloc = dlsym(RTLD_NEXT, "realloc");
	next.free = dlsym(RTLD_NEXT, "free");
	next.memalign = dlsym(RTLD_NEXT, "memalign");
	next.posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
	__atomic_store_n(&next.malloc, dlsym(RTLD_NEXT, "malloc"), __ATOMIC_RELEASE);
	resolving = false;
	return next.malloc && next.calloc && next.realloc && next.free && next.memalign &&
	       next.posix_memalign;
}

static bool ready(void)
{
	return __atomic_load_n(&next.malloc, __ATOMIC_ACQUIRE) || resolve();
}

static bool skipped_frame(uintptr_t ip)
{
	for (size_t i = 0; i < sizeof(skipped) / sizeof(skipped[0]); i++)
		if (ip >= skipped[i].begin && ip < skipped[i].end)
			return true;
	return false;
}

struct capture {
	uint64_t callers[HEAP_CALLERS_MAX];
	uint8_t count;
};

static _Unwind_Reason_Code capture_frame(struct _Unwind_Context *context, void *argument)
{
	struct capture *capture = argument;
	uintptr_t ip = _Unwind_GetIP(context);

	if (!ip)
		return _URC_END_OF_STACK;
	if (!capture->count && skipped_frame(ip))
		return _URC_NO_REASON;
	capture->callers[capture->count++] = ip;
	return capture->count == HEAP_CALLERS_MAX ? _URC_END_OF_STACK : _URC_NO_REASON;
}

/* Records the callers of the allocation that returned ptr. */
static void record(void *ptr)
{
	struct capture capture;

	if (!ptr || recording || !lttng_ust_tracepoint_enabled(profopt_heap, alloc_callers))
		return;
	recording = true;
	capture.count = 0;
	_Unwind_Backtrace(capture_frame, &capture);
	if (capture.count)
		lttng_ust_do_tracepoint(profopt_heap, alloc_callers, (uint64_t)(uintptr_t)ptr,
					capture.callers, capture.count);
	recording = false;
}

HEAP_EXPORT void *malloc(size_t size)
{
	void *ptr;

	if (!ready())
		return bootstrap_alloc(size, 16);
	ptr = next.malloc(size);
	record(ptr);
	return ptr;
}

HEAP_EXPORT void *calloc(size_t count, size_t size)
{
	void *ptr;

	if (!ready()) {
		size_t bytes;

		return __builtin_mul_overflow(count, size, &bytes) ? NULL
								   : bootstrap_alloc(bytes, 16);
	}
	ptr = next.calloc(count, size);
	record(ptr);
	return ptr;
}

HEAP_EXPORT void free(void *ptr)
{
	if (!ptr || in_bootstrap(ptr))
		return;
	if (ready())
		next.free(ptr);
}

HEAP_EXPORT void *realloc(void *ptr, size_t size)
{
	void *moved;

	if (in_bootstrap(ptr)) { /* its size is not kept: copy what the block can hold */
		size_t room = (size_t)(bootstrap + sizeof(bootstrap) - (char *)ptr);

		moved = malloc(size);
		if (moved)
			memcpy(moved, ptr, size < room ? size : room);
		return moved;
	}
	if (!ready())
		return ptr ? NULL : bootstrap_alloc(size, 16);
	moved = next.realloc(ptr, size);
	if (size)
		record(moved);
	return moved;
}

HEAP_EXPORT void *memalign(size_t alignment, size_t size)
{
	void *ptr;

	if (!ready())
		return bootstrap_alloc(size, alignment);
	ptr = next.memalign(alignment, size);
	record(ptr);
	return ptr;
}

HEAP_EXPORT int posix_memalign(void **out, size_t alignment, size_t size)
{
	int result;

	if (!ready()) {
		*out = bootstrap_alloc(size, alignment);
		return *out ? 0 : ENOMEM;
	}
	result = next.posix_memalign(out, alignment, size);
	if (result == 0)
		record(*out);
	return result;
}

struct range_search {
	uintptr_t base;
	struct code_range *range;
};

/* The executable segments of the object loaded at search->base. */
static int find_range(struct dl_phdr_info *info, size_t size, void *argument)
{
	struct range_search *search = argument;

	(void)size;
	if (info->dlpi_addr != search->base)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *header = &info->dlpi_phdr[i];
		uintptr_t begin = info->dlpi_addr + header->p_vaddr;

		if (header->p_type != PT_LOAD || !(header->p_flags & PF_X))
			continue;
		if (!search->range->begin || begin < search->range->begin)
			search->range->begin = begin;
		if (begin + header->p_memsz > search->range->end)
			search->range->end = begin + header->p_memsz;
	}
	return 1;
}

/* The base address of the object holding address, or 0. */
static uintptr_t object_base(const void *address)
{
	Dl_info info;

	return address && dladdr(address, &info) ? (uintptr_t)info.dli_fbase : 0;
}

static void skip_object(uintptr_t base, struct code_range *range)
{
	struct range_search search = {.base = base, .range = range};

	if (base)
		dl_iterate_phdr(find_range, &search);
}

/*
 * Before the program runs: the next definitions, and where the frames to skip lie (the
 * first malloc in the program's search order is the libc wrapper's, preloaded before this).
 */
__attribute__((constructor)) static void heap_init(void)
{
	uintptr_t self = object_base((const void *)&capture_frame);
	uintptr_t wrapper = object_base(dlsym(RTLD_DEFAULT, "malloc"));

	ready();
	skip_object(self, &skipped[0]);
	if (wrapper != self)
		skip_object(wrapper, &skipped[1]);
}
