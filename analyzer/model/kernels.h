/*
 * kernels.h: what a GPU record is, from its kind and name: its class of work (matrix
 * multiplication, convolution, attention, normalization, elementwise, reduction, layout
 * conversion, copy, memset) and, for the matrix classes, the precision its name shows
 * (fp32 on CUDA cores, tf32, bf16, fp16, fp8, int8). The names are the ones CUPTI gives
 * (mangled C++ or plain) and the library kernels of cuBLAS, cuDNN, CUTLASS, PyTorch and
 * Triton use; the table and its sources are in docs/gpu.md ("Kernel classes").
 *
 * Plain C, no state: the model classifies each distinct name once and caches the answer.
 */
#ifndef PO_MODEL_KERNELS_H
#define PO_MODEL_KERNELS_H

#include <stddef.h>

#include "event.h"

/* Classes of GPU work. X(NAME, json name) */
#define PO_KERNEL_CLASSES(X)                                                                       \
	X(MATMUL, "matmul")                                                                        \
	X(CONVOLUTION, "convolution")                                                              \
	X(ATTENTION, "attention")                                                                  \
	X(NORMALIZATION, "normalization")                                                          \
	X(ELEMENTWISE, "elementwise")                                                              \
	X(REDUCTION, "reduction")                                                                  \
	X(LAYOUT, "layout")                                                                        \
	X(OTHER, "other")                                                                          \
	X(COPY, "copy")                                                                            \
	X(MEMSET, "memset")

enum po_kernel_class {
#define PO_X(name, json) PO_KERNEL_##name,
	PO_KERNEL_CLASSES(PO_X)
#undef PO_X
	    PO_KERNEL_CLASS_COUNT
};

/* Precisions of the matrix classes' arithmetic, as kernel names show them. */
#define PO_PRECISIONS(X)                                                                           \
	X(UNKNOWN, "unknown")                                                                      \
	X(FP32, "fp32")                                                                            \
	X(TF32, "tf32")                                                                            \
	X(BF16, "bf16")                                                                            \
	X(FP16, "fp16")                                                                            \
	X(HALF, "16-bit")                                                                          \
	X(FP8, "fp8")                                                                              \
	X(INT8, "int8")

enum po_precision {
#define PO_X(name, json) PO_PRECISION_##name,
	PO_PRECISIONS(PO_X)
#undef PO_X
	    PO_PRECISION_COUNT
};

struct po_kernel_kind {
	enum po_kernel_class cls;
	enum po_precision precision; /* UNKNOWN outside the matrix classes */
};

/* The class and precision of a record of this kind and name (name need not end in NUL). */
struct po_kernel_kind po_kernel_classify(enum po_gpu_kind kind, const char *name, size_t length);

/* Matrix multiplication, convolution and attention: the work tensor cores do. */
static inline int po_kernel_class_is_matrix(enum po_kernel_class cls)
{
	return cls == PO_KERNEL_MATMUL || cls == PO_KERNEL_CONVOLUTION ||
	       cls == PO_KERNEL_ATTENTION;
}

const char *po_kernel_class_name(enum po_kernel_class cls);
const char *po_precision_name(enum po_precision precision);

/*
 * A kernel's name for people: demangled when it is a mangled C++ name, without its
 * return type, template arguments and parameters ("at::native::reduce_kernel"); plain
 * names as they are. Writes at most size bytes (NUL included) into out; returns out.
 */
char *po_kernel_short_name(const char *name, char *out, size_t size);

#endif /* PO_MODEL_KERNELS_H */
