/* stats.c: robust and least-squares statistics for the detectors. */
#include <math.h>
#include <stdlib.h>

#include "detect_internal.h"

static int compare_doubles(const void *left, const void *right)
{
	double a = *(const double *)left, b = *(const double *)right;

	return (a > b) - (a < b);
}

double det_median(double *values, size_t count)
{
	if (!count)
		return NAN;
	qsort(values, count, sizeof(*values), compare_doubles);
	if (count % 2)
		return values[count / 2];
	return (values[count / 2 - 1] + values[count / 2]) / 2.0;
}

double det_mad_scaled(const double *values, size_t count, double median)
{
	double *deviations = malloc((count ? count : 1) * sizeof(*deviations));
	double mad;

	if (!deviations)
		return NAN;
	for (size_t i = 0; i < count; i++)
		deviations[i] = fabs(values[i] - median);
	mad = det_median(deviations, count);
	free(deviations);
	return 1.4826 * mad;
}

bool det_linear_fit(const double *x, const double *y, size_t count, struct det_fit *fit)
{
	double mean_x = 0, mean_y = 0, sxx = 0, sxy = 0, syy = 0;

	if (count < 2)
		return false;
	for (size_t i = 0; i < count; i++) {
		mean_x += x[i];
		mean_y += y[i];
	}
	mean_x /= (double)count;
	mean_y /= (double)count;
	for (size_t i = 0; i < count; i++) {
		sxx += (x[i] - mean_x) * (x[i] - mean_x);
		sxy += (x[i] - mean_x) * (y[i] - mean_y);
		syy += (y[i] - mean_y) * (y[i] - mean_y);
	}
	if (sxx <= 0)
		return false;
	fit->slope = sxy / sxx;
	fit->intercept = mean_y - fit->slope * mean_x;
	fit->r2 = syy > 0 ? (sxy * sxy) / (sxx * syy) : 0.0;
	return true;
}

double det_clamp(double value, double low, double high)
{
	if (!(value >= low))
		return low;
	return value > high ? high : value;
}
