/* stats.h: the statistics of run comparisons: ranks, quantiles, bootstrap, least squares. */
#ifndef PO_STATS_H
#define PO_STATS_H

#include <stddef.h>
#include <stdint.h>

/* Nearest-rank quantile q in [0, 1] of n values (copied and sorted); NaN when n is 0. */
double po_stats_quantile(const double *values, size_t n, double q);
double po_stats_mean(const double *values, size_t n);

/*
 * Two-sided p-value of the Mann-Whitney U test (normal approximation with tie correction
 * and continuity correction); NaN when either sample has fewer than 2 values.
 */
double po_stats_mann_whitney_p(const double *a, size_t n_a, const double *b, size_t n_b);

/*
 * 95% bootstrap interval of quantile_q(b) - quantile_q(a), with a fixed-seed generator so
 * results are reproducible. NaN bounds when a sample is empty.
 */
void po_stats_bootstrap_interval(const double *a, size_t n_a, const double *b, size_t n_b, double q,
				 unsigned rounds, double *low, double *high);

/* Least-squares slope of values against their index; NaN with fewer than 2 values. */
double po_stats_slope(const double *values, size_t n);

#endif /* PO_STATS_H */
