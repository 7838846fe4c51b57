/*
 * stats.h: the statistics of the analysis, one definition each: the quantile (linearly
 * interpolated; step percentiles, comparisons, the live view), the median as its 0.5
 * quantile, the scaled median absolute deviation (robust scales for the detectors), least
 * squares (memory growth, comparison slopes), the rank test and bootstrap of run
 * comparisons, and histograms with round bounds (step times, in the report and the
 * comparison). Plain C, no allocation beyond what a function says.
 */
#ifndef PO_STATS_H
#define PO_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Where the quantile q in [0, 1] of n sorted values lies (n > 0): between the values at
 * *lower and *lower + 1, *fraction of the way (linear interpolation between the closest
 * ranks, h = q (n - 1): numpy's and R's default). *fraction is 0 at the last value and
 * when h is whole up to rounding. The one quantile definition of the analysis: step
 * percentiles, medians, comparisons and the live view's figures all come from it.
 */
void po_stats_quantile_position(size_t n, double q, size_t *lower, double *fraction);

/* The quantile q of n sorted values (po_stats_quantile_position); NaN when n is 0. */
double po_stats_sorted_quantile(const double *sorted, size_t n, double q);

/*
 * The median of n values, which it sorts in place: the quantile 0.5 (the midpoint of the
 * two middle values when n is even); NaN when n is 0.
 */
double po_stats_median(double *values, size_t n);

/* 1.4826 x the median absolute deviation from median (a normal sigma); NaN on failure. */
double po_stats_mad_scaled(const double *values, size_t n, double median);

struct po_stats_fit {
	double slope;
	double intercept;
	double r2; /* 0 when y is constant */
};

/* Least-squares line of y on x; false with fewer than 2 points or constant x. */
bool po_stats_linear_fit(const double *x, const double *y, size_t n, struct po_stats_fit *fit);

/* The quantile q in [0, 1] of n values (copied and sorted); NaN when n is 0. */
double po_stats_quantile(const double *values, size_t n, double q);
double po_stats_mean(const double *values, size_t n);

/*
 * The 1-based ranks of n values into ranks (tied values share their average rank), for the
 * rank statistics; false when its temporary array (16 bytes a value) cannot be allocated.
 */
bool po_stats_ranks(const double *values, size_t n, double *ranks);

/*
 * Two-sided p-value of the Mann-Whitney U test (normal approximation with tie correction
 * and continuity correction); NaN when either sample has fewer than 2 values.
 */
double po_stats_mann_whitney_p(const double *a, size_t n_a, const double *b, size_t n_b);

/*
 * 95% bootstrap interval of quantile_q(b) - quantile_q(a), with a fixed-seed generator so
 * results are reproducible. NaN bounds when a sample is empty. Past PO_BOOTSTRAP_SAMPLE_MAX
 * values, a sample is resampled through every (n / max)-th of its values, and the interval
 * is moved onto the whole samples' difference and narrowed by the square root of the sizes'
 * ratio (a quantile's spread falls as one over the square root of n): the cost stays
 * rounds x max, not rounds x n log n (a baseline of 100,000 steps took 9 s before).
 */
#define PO_BOOTSTRAP_SAMPLE_MAX 2048
void po_stats_bootstrap_interval(const double *a, size_t n_a, const double *b, size_t n_b, double q,
				 unsigned rounds, double *low, double *high);

/* Least-squares slope of values against their index; NaN with fewer than 2 values. */
double po_stats_slope(const double *values, size_t n);

/*
 * A round step for an axis over [0, max_value] with about tick_count ticks: 1, 2, 2.5 or 5
 * times a power of ten; 1 when max_value is not positive.
 */
double po_stats_nice_step(double max_value, int tick_count);

#define PO_STATS_HISTOGRAM_MAX_BINS 64

/* Counts of values in bin_count equal bins over [low, high). */
struct po_stats_histogram {
	double low; /* round bounds around the values (po_stats_histogram_axis) */
	double high;
	size_t bin_count;
	int64_t counts[PO_STATS_HISTOGRAM_MAX_BINS];
	int64_t total;	 /* values counted */
	int64_t highest; /* the largest count */
};

/*
 * An empty histogram of bin_count bins (at most PO_STATS_HISTOGRAM_MAX_BINS) whose bounds
 * are multiples of po_stats_nice_step(high - low, 8) around [low, high] (of high, at least
 * 1, when low == high). False when high < low or either is not finite.
 */
bool po_stats_histogram_axis(struct po_stats_histogram *histogram, size_t bin_count, double low,
			     double high);

/* Counts n values (NaN ones left out); values outside the bounds go to the end bins. */
void po_stats_histogram_add(struct po_stats_histogram *histogram, const double *values, size_t n);

/*
 * The median (po_stats_quantile(values, n, 0.5), the same value) of values
 * that keep coming: two heaps, the lower half's largest on top of one and the upper half's
 * smallest on top of the other. Adding a value takes O(log n); the median is read in O(1);
 * it holds 8 bytes a value. Zero-initialised is empty.
 */
struct po_stats_running_median {
	double *low;  /* owned: max-heap of the lower ceil(n / 2) values */
	double *high; /* owned: min-heap of the others */
	size_t low_count, high_count, low_capacity, high_capacity;
};

/* Adds a value (NaN is left out); false when a heap could not grow (nothing added). */
bool po_stats_running_median_add(struct po_stats_running_median *median, double value);
/* NaN when empty. */
double po_stats_running_median_value(const struct po_stats_running_median *median);
void po_stats_running_median_fini(struct po_stats_running_median *median);

#endif /* PO_STATS_H */
