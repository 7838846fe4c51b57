/*
 * check.h: the assertions of profopt's C unit tests. A test program runs its cases,
 * counts failed checks, prints "N passed, N failed" and exits non-zero on any failure.
 */
#ifndef PO_CHECK_H
#define PO_CHECK_H

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static int po_check_failures;
static int po_check_passes;

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (cond) {                                                                        \
			po_check_passes++;                                                         \
		} else {                                                                           \
			po_check_failures++;                                                       \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);   \
		}                                                                                  \
	} while (0)

#define CHECK_INT_EQ(actual, expected)                                                             \
	do {                                                                                       \
		long long po_a_ = (long long)(actual), po_e_ = (long long)(expected);              \
		if (po_a_ == po_e_) {                                                              \
			po_check_passes++;                                                         \
		} else {                                                                           \
			po_check_failures++;                                                       \
			fprintf(stderr, "%s:%d: %s == %lld, expected %lld\n", __FILE__, __LINE__,  \
				#actual, po_a_, po_e_);                                            \
		}                                                                                  \
	} while (0)

#define CHECK_NEAR(actual, expected, tolerance)                                                    \
	do {                                                                                       \
		double po_a_ = (double)(actual), po_e_ = (double)(expected);                       \
		if (fabs(po_a_ - po_e_) <= (tolerance)) {                                          \
			po_check_passes++;                                                         \
		} else {                                                                           \
			po_check_failures++;                                                       \
			fprintf(stderr, "%s:%d: %s == %g, expected %g +- %g\n", __FILE__,          \
				__LINE__, #actual, po_a_, po_e_, (double)(tolerance));             \
		}                                                                                  \
	} while (0)

#define CHECK_STR_EQ(actual, expected)                                                             \
	do {                                                                                       \
		const char *po_a_ = (actual), *po_e_ = (expected);                                 \
		if (po_a_ && po_e_ && strcmp(po_a_, po_e_) == 0) {                                 \
			po_check_passes++;                                                         \
		} else {                                                                           \
			po_check_failures++;                                                       \
			fprintf(stderr, "%s:%d: %s == \"%s\", expected \"%s\"\n", __FILE__,        \
				__LINE__, #actual, po_a_ ? po_a_ : "(null)",                       \
				po_e_ ? po_e_ : "(null)");                                         \
		}                                                                                  \
	} while (0)

/* Runs one case by name; a test program calls RUN(case) for each, then CHECK_SUMMARY(). */
#define RUN(test_fn)                                                                               \
	do {                                                                                       \
		int po_before_ = po_check_failures;                                                \
		test_fn();                                                                         \
		fprintf(stderr, "%s %s\n", po_check_failures == po_before_ ? "ok  " : "FAIL",      \
			#test_fn);                                                                 \
	} while (0)

#define CHECK_SUMMARY()                                                                            \
	(printf("%d passed, %d failed\n", po_check_passes, po_check_failures),                     \
	 po_check_failures ? 1 : 0)

#endif /* PO_CHECK_H */
