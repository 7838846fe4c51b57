/*
 * kernels.c: the class and precision of a GPU record from its name (kernels.h). Names
 * are matched in lower case against the word lists below, first the classes whose names
 * also hold another class's words (a convolution kernel's name says "implicit_gemm").
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"

#define NAME_CHARS 2048 /* of a name, the part matched: the words come early */

struct rule {
	enum po_kernel_class cls;
	const char *const *words; /* NULL-terminated */
};

static const char *const attention_words[] = {"fmha", "flash", "sdpa", "attention", "attn", NULL};
static const char *const convolution_words[] = {
    "convolution", "convolve", "conv1d",	"conv2d",   "conv3d", "_conv",	"conv_", "fprop",
    "dgrad",	   "wgrad",    "implicit_gemm", "winograd", "im2col", "col2im", NULL};
static const char *const matmul_words[] = {"gemm", "gemv",	   "nvjet",  "matmul",	   "wmma",
					   "bmm",  "splitkreduce", "cublas", "triton_tem", NULL};
static const char *const layout_words[] = {"nchwtonhwc", "nhwctonchw", "nchw2nhwc",
					   "nhwc2nchw",	 "transpose",  NULL};
static const char *const normalization_words[] = {
    "batch_norm", "batchnorm", "bn_fw",	  "bn_bw",	   "layer_norm", "layernorm", "group_norm",
    "groupnorm",  "rms_norm",  "rmsnorm", "instance_norm", "gammabeta",	 "welford",   NULL};
static const char *const reduction_words[] = {"reduce", "softmax",    "nll_loss",   "cross_entropy",
					      "argmax", "argmin",     "topk",	    "cumsum",
					      "scan",	"triton_red", "triton_per", NULL};
static const char *const elementwise_words[] = {
    "elementwise", "copy_kernel",  "fillfunctor", "fill_kernel",  "multi_tensor_apply",
    "foreach",	   "pointwise",	   "triton_poi",  "index_kernel", "gather",
    "scatter",	   "catarray",	   "dropout",	  "where_kernel", "masked",
    "arange",	   "distribution", NULL};

static const struct rule rules[] = {
    {PO_KERNEL_ATTENTION, attention_words},
    {PO_KERNEL_CONVOLUTION, convolution_words},
    {PO_KERNEL_MATMUL, matmul_words},
    {PO_KERNEL_LAYOUT, layout_words},
    {PO_KERNEL_NORMALIZATION, normalization_words},
    {PO_KERNEL_REDUCTION, reduction_words},
    {PO_KERNEL_ELEMENTWISE, elementwise_words},
};

struct precision_rule {
	enum po_precision precision;
	const char *const *words;
};

/*
 * In this order: "tf32" and "bf16" hold "f32" and "f16". A plain "f16" (cuDNN's fused
 * attention, "wgmma_f16") or cuBLASLt's "_h_" names 16-bit inputs without saying which.
 */
static const char *const fp8_words[] = {"e4m3", "e5m2", "fp8", "f8f6f4", "qmma", NULL};
static const char *const int8_words[] = {"imma", "int8", "i8i8", "s8s8", NULL};
static const char *const tf32_words[] = {"tf32", NULL};
static const char *const bf16_words[] = {"bf16", "bfloat16", NULL};
static const char *const fp16_words[] = {"fp16", "__half", "halfe",  "f16f16", "hgemm",
					 "h884", "h1688",  "h16816", NULL};
static const char *const half_words[] = {"f16", "_h_", NULL};
static const char *const fp32_words[] = {"sgemm", "ffma", "f32f32_f32f32", "simt", "fp32",
					 "_f32_", NULL};

static const struct precision_rule precision_rules[] = {
    {PO_PRECISION_FP8, fp8_words},   {PO_PRECISION_INT8, int8_words},
    {PO_PRECISION_TF32, tf32_words}, {PO_PRECISION_BF16, bf16_words},
    {PO_PRECISION_FP16, fp16_words}, {PO_PRECISION_HALF, half_words},
    {PO_PRECISION_FP32, fp32_words},
};

static bool has_any(const char *text, const char *const *words)
{
	for (size_t i = 0; words[i]; i++)
		if (strstr(text, words[i]))
			return true;
	return false;
}

static enum po_precision precision_of(const char *lower)
{
	for (size_t i = 0; i < sizeof(precision_rules) / sizeof(precision_rules[0]); i++)
		if (has_any(lower, precision_rules[i].words))
			return precision_rules[i].precision;
	return PO_PRECISION_UNKNOWN;
}

struct po_kernel_kind po_kernel_classify(enum po_gpu_kind kind, const char *name, size_t length)
{
	struct po_kernel_kind out = {PO_KERNEL_OTHER, PO_PRECISION_UNKNOWN};
	char lower[NAME_CHARS + 1];

	if (kind == PO_GPU_MEMSET)
		return (struct po_kernel_kind){PO_KERNEL_MEMSET, PO_PRECISION_UNKNOWN};
	if (kind != PO_GPU_KERNEL)
		return (struct po_kernel_kind){PO_KERNEL_COPY, PO_PRECISION_UNKNOWN};
	if (length > NAME_CHARS)
		length = NAME_CHARS;
	for (size_t i = 0; i < length; i++)
		lower[i] = (char)tolower((unsigned char)name[i]);
	lower[length] = '\0';
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		if (has_any(lower, rules[i].words)) {
			out.cls = rules[i].cls;
			break;
		}
	}
	if (po_kernel_class_is_matrix(out.cls))
		out.precision = precision_of(lower);
	return out;
}

/* ---- short names ---- */

struct writer {
	char *out;
	size_t size;
	size_t used;
};

static void put(struct writer *w, const char *text, size_t length)
{
	for (size_t i = 0; i < length && w->used + 1 < w->size; i++)
		w->out[w->used++] = text[i];
	w->out[w->used] = '\0';
}

/* <length><identifier> at *p: the identifier, or false. */
static bool source_name(const char **p, const char **id, size_t *length)
{
	char *end;
	unsigned long value;

	if (!isdigit((unsigned char)**p))
		return false;
	value = strtoul(*p, &end, 10);
	if (!value || memchr(end, '\0', value))
		return false;
	*id = end;
	*length = value;
	*p = end + value;
	return true;
}

/* A component of an unnamed namespace: nothing a person needs to read. */
static bool anonymous(const char *id, size_t length)
{
	return length >= 10 && strncmp(id, "_GLOBAL__N", 10) == 0;
}

/* Template arguments "I...": the first one when it is a plain name ("<name>"). */
static void first_template_argument(struct writer *w, const char *p)
{
	const char *id;
	size_t length;

	if (*p != 'I')
		return;
	p++;
	if (source_name(&p, &id, &length) && !anonymous(id, length)) {
		put(w, "<", 1);
		put(w, id, length);
		put(w, ">", 1);
	}
}

/* _Z followed by a nested name N...E or a plain name: the qualified name, else false. */
static bool demangle_prefix(const char *name, struct writer *w)
{
	const char *p = name + 2, *id;
	size_t length, parts = 0;
	bool nested = *p == 'N';

	if (nested)
		p++;
	if (nested && p[0] == 'S' && p[1] == 't') {
		put(w, "std", 3);
		parts++;
		p += 2;
	}
	while (source_name(&p, &id, &length)) {
		if (anonymous(id, length))
			continue;
		if (parts++)
			put(w, "::", 2);
		put(w, id, length);
		if (!nested)
			break;
	}
	if (!parts)
		return false;
	first_template_argument(w, p);
	return true;
}

/*
 * A name already readable ("void at::native::f<float, 4>(int, float*)", or a plain one):
 * without the return type and the parameters, and without template arguments when they
 * make it long.
 */
#define READABLE_MAX 80

static void readable_name(struct writer *w, const char *name)
{
	const char *paren, *angle;
	size_t length;

	if (strncmp(name, "void ", 5) == 0)
		name += 5;
	paren = strchr(name, '(');
	length = paren && paren > name ? (size_t)(paren - name) : strlen(name);
	angle = memchr(name, '<', length);
	if (length > READABLE_MAX && angle && angle > name)
		length = (size_t)(angle - name);
	put(w, name, length);
}

char *po_kernel_short_name(const char *name, char *out, size_t size)
{
	struct writer w = {out, size, 0};

	if (!size)
		return out;
	out[0] = '\0';
	if (!name)
		return out;
	if (strncmp(name, "_Z", 2) == 0 && demangle_prefix(name, &w))
		return out;
	w.used = 0;
	readable_name(&w, name);
	return out;
}
