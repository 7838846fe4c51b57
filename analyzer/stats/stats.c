/* stats.c: the statistics of stats.h, one definition each. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

static int compare_doubles(const void *left, const void *right)
{
	double a = *(const double *)left, b = *(const double *)right;

	return (a > b) - (a < b);
}

void po_stats_quantile_position(size_t n, double q, size_t *lower, double *fraction)
{
	double exact = q * (double)(n - 1), whole = floor(exact + 0.5);

	if (fabs(exact - whole) <= 1e-9 * fmax(1.0, exact))
		exact = whole;
	*lower = exact > 0 ? (size_t)floor(exact) : 0;
	*fraction = exact - (double)*lower;
	if (*lower >= n - 1) {
		*lower = n - 1;
		*fraction = 0;
	}
}

double po_stats_sorted_quantile(const double *sorted, size_t n, double q)
{
	size_t lower;
	double fraction;

	if (!n)
		return NAN;
	po_stats_quantile_position(n, q, &lower, &fraction);
	if (fraction == 0)
		return sorted[lower];
	return sorted[lower] + fraction * (sorted[lower + 1] - sorted[lower]);
}

double po_stats_median(double *values, size_t n)
{
	if (!n)
		return NAN;
	qsort(values, n, sizeof(*values), compare_doubles);
	return po_stats_sorted_quantile(values, n, 0.5);
}

double po_stats_mad_scaled(const double *values, size_t n, double median)
{
	double *deviations = malloc((n ? n : 1) * sizeof(*deviations));
	double mad;

	if (!deviations)
		return NAN;
	for (size_t i = 0; i < n; i++)
		deviations[i] = fabs(values[i] - median);
	mad = po_stats_median(deviations, n);
	free(deviations);
	return 1.4826 * mad;
}

bool po_stats_linear_fit(const double *x, const double *y, size_t n, struct po_stats_fit *fit)
{
	double mean_x = 0, mean_y = 0, sxx = 0, sxy = 0, syy = 0;

	if (n < 2)
		return false;
	for (size_t i = 0; i < n; i++) {
		mean_x += x[i];
		mean_y += y[i];
	}
	mean_x /= (double)n;
	mean_y /= (double)n;
	for (size_t i = 0; i < n; i++) {
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

double po_stats_quantile(const double *values, size_t n, double q)
{
	double *copy;
	double result;

	if (n == 0)
		return NAN;
	copy = malloc(n * sizeof(*copy));
	if (!copy)
		return NAN;
	memcpy(copy, values, n * sizeof(*copy));
	qsort(copy, n, sizeof(*copy), compare_doubles);
	result = po_stats_sorted_quantile(copy, n, q);
	free(copy);
	return result;
}

double po_stats_mean(const double *values, size_t n)
{
	double sum = 0;

	if (n == 0)
		return NAN;
	for (size_t i = 0; i < n; i++)
		sum += values[i];
	return sum / (double)n;
}

struct ranked {
	double value;
	int sample; /* 0: a, 1: b */
};

static int compare_ranked(const void *left, const void *right)
{
	return compare_doubles(&((const struct ranked *)left)->value,
			       &((const struct ranked *)right)->value);
}

/* An index into the values po_stats_ranks() ranks; sorted by value. */
struct indexed {
	double value;
	size_t index;
};

static int compare_indexed(const void *left, const void *right)
{
	return compare_doubles(&((const struct indexed *)left)->value,
			       &((const struct indexed *)right)->value);
}

bool po_stats_ranks(const double *values, size_t n, double *ranks)
{
	struct indexed *order = malloc((n ? n : 1) * sizeof(*order));

	if (!order)
		return false;
	for (size_t i = 0; i < n; i++)
		order[i] = (struct indexed){values[i], i};
	qsort(order, n, sizeof(*order), compare_indexed);
	for (size_t i = 0; i < n;) {
		size_t j = i;

		while (j < n && order[j].value == order[i].value)
			j++;
		for (size_t k = i; k < j; k++)
			ranks[order[k].index] = ((double)i + 1 + (double)j) / 2.0;
		i = j;
	}
	free(order);
	return true;
}

double po_stats_mann_whitney_p(const double *a, size_t n_a, const double *b, size_t n_b)
{
	size_t n = n_a + n_b;
	struct ranked *all;
	double rank_sum_a = 0, tie_term = 0, u, mean, sigma, z;

	if (n_a < 2 || n_b < 2)
		return NAN;
	all = malloc(n * sizeof(*all));
	if (!all)
		return NAN;
	for (size_t i = 0; i < n_a; i++)
		all[i] = (struct ranked){a[i], 0};
	for (size_t i = 0; i < n_b; i++)
		all[n_a + i] = (struct ranked){b[i], 1};
	qsort(all, n, sizeof(*all), compare_ranked);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		double average_rank, ties;

		while (j < n && all[j].value == all[i].value)
			j++;
		average_rank = ((double)i + 1 + (double)j) / 2.0;
		ties = (double)(j - i);
		tie_term += ties * ties * ties - ties;
		for (size_t k = i; k < j; k++)
			if (all[k].sample == 0)
				rank_sum_a += average_rank;
		i = j;
	}
	free(all);
	u = rank_sum_a - (double)n_a * ((double)n_a + 1) / 2.0;
	mean = (double)n_a * (double)n_b / 2.0;
	sigma = sqrt((double)n_a * (double)n_b / 12.0 *
		     (((double)n + 1) - tie_term / ((double)n * ((double)n - 1))));
	if (!(sigma > 0))
		return 1.0;
	z = (fabs(u - mean) - 0.5) / sigma;
	if (z < 0)
		z = 0;
	return erfc(z / sqrt(2.0));
}

/* xorshift64*: a small generator with a fixed seed, so intervals are reproducible. */
static uint64_t next_random(uint64_t *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * 2685821657736338717ULL;
}

/*
 * The value of rank k (0-based) of values, partly reordering them: Hoare's selection with a
 * median-of-three pivot, linear on average where sorting is n log n.
 */
static double select_rank(double *values, size_t n, size_t k)
{
	size_t left = 0, right = n - 1;

	while (left < right) {
		size_t mid = left + (right - left) / 2, i = left, j = right;
		double x = values[left], y = values[mid], z = values[right];
		double pivot =
		    x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));

		while (i <= j) {
			while (values[i] < pivot)
				i++;
			while (values[j] > pivot)
				j--;
			if (i <= j) {
				double swap = values[i];

				values[i++] = values[j];
				values[j] = swap;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			right = j;
		else if (k >= i)
			left = i;
		else
			return values[k];
	}
	return values[k];
}

/*
 * The quantile q of values (po_stats_quantile_position), partly reordering them: the
 * selection leaves every value after rank k at or above it, so rank k + 1 is their least.
 */
static double select_quantile(double *values, size_t n, double q)
{
	size_t lower;
	double fraction, value, next;

	po_stats_quantile_position(n, q, &lower, &fraction);
	value = select_rank(values, n, lower);
	if (fraction == 0)
		return value;
	next = values[lower + 1];
	for (size_t i = lower + 2; i < n; i++)
		next = fmin(next, values[i]);
	return value + fraction * (next - value);
}

static double resampled_quantile(const double *values, size_t n, double q, double *scratch,
				 uint64_t *state)
{
	for (size_t i = 0; i < n; i++)
		scratch[i] = values[next_random(state) % n];
	return select_quantile(scratch, n, q);
}

/* The quantile of a copy of values (values stay as they are); NaN when out of memory. */
static double quantile_of_copy(const double *values, size_t n, double q)
{
	double *copy = malloc(n * sizeof(*copy)), value;

	if (!copy)
		return NAN;
	memcpy(copy, values, n * sizeof(*copy));
	value = select_quantile(copy, n, q);
	free(copy);
	return value;
}

static void bootstrap_small(const double *a, size_t n_a, const double *b, size_t n_b, double q,
			    unsigned rounds, double *low, double *high)
{
	uint64_t state = 0x9E3779B97F4A7C15ULL;
	double *differences = malloc(rounds * sizeof(*differences));
	double *scratch = malloc((n_a > n_b ? n_a : n_b) * sizeof(*scratch));

	if (differences && scratch) {
		for (unsigned r = 0; r < rounds; r++)
			differences[r] = resampled_quantile(b, n_b, q, scratch, &state) -
					 resampled_quantile(a, n_a, q, scratch, &state);
		qsort(differences, rounds, sizeof(*differences), compare_doubles);
		*low = po_stats_sorted_quantile(differences, rounds, 0.025);
		*high = po_stats_sorted_quantile(differences, rounds, 0.975);
	}
	free(differences);
	free(scratch);
}

/* Every (n / m)-th value of values, m of them, in their order. */
static double *every_nth(const double *values, size_t n, size_t m)
{
	double *out = malloc(m * sizeof(*out));

	for (size_t i = 0; out && i < m; i++)
		out[i] = values[(size_t)((double)i * (double)n / (double)m)];
	return out;
}

void po_stats_bootstrap_interval(const double *a, size_t n_a, const double *b, size_t n_b, double q,
				 unsigned rounds, double *low, double *high)
{
	size_t m_a = n_a < PO_BOOTSTRAP_SAMPLE_MAX ? n_a : PO_BOOTSTRAP_SAMPLE_MAX;
	size_t m_b = n_b < PO_BOOTSTRAP_SAMPLE_MAX ? n_b : PO_BOOTSTRAP_SAMPLE_MAX;
	double *sub_a, *sub_b, sub_low = NAN, sub_high = NAN, center, sub_center, scale;

	*low = *high = NAN;
	if (n_a == 0 || n_b == 0 || rounds == 0)
		return;
	if (m_a == n_a && m_b == n_b) {
		bootstrap_small(a, n_a, b, n_b, q, rounds, low, high);
		return;
	}
	sub_a = every_nth(a, n_a, m_a);
	sub_b = every_nth(b, n_b, m_b);
	if (sub_a && sub_b) {
		bootstrap_small(sub_a, m_a, sub_b, m_b, q, rounds, &sub_low, &sub_high);
		sub_center = quantile_of_copy(sub_b, m_b, q) - quantile_of_copy(sub_a, m_a, q);
		center = quantile_of_copy(b, n_b, q) - quantile_of_copy(a, n_a, q);
		scale = sqrt((1.0 / (double)n_a + 1.0 / (double)n_b) /
			     (1.0 / (double)m_a + 1.0 / (double)m_b));
		*low = center + (sub_low - sub_center) * scale;
		*high = center + (sub_high - sub_center) * scale;
	}
	free(sub_a);
	free(sub_b);
}

double po_stats_slope(const double *values, size_t n)
{
	double *index = malloc((n ? n : 1) * sizeof(*index));
	struct po_stats_fit fit;
	bool fitted;

	if (!index)
		return NAN;
	for (size_t i = 0; i < n; i++)
		index[i] = (double)i;
	fitted = po_stats_linear_fit(index, values, n, &fit);
	free(index);
	return fitted ? fit.slope : NAN;
}

double po_stats_nice_step(double max_value, int tick_count)
{
	double raw, magnitude, fraction;

	if (!(max_value > 0))
		return 1;
	raw = max_value / tick_count;
	magnitude = pow(10, floor(log10(raw)));
	fraction = raw / magnitude;
	if (fraction <= 1)
		return magnitude;
	if (fraction <= 2)
		return 2 * magnitude;
	if (fraction <= 2.5)
		return 2.5 * magnitude;
	if (fraction <= 5)
		return 5 * magnitude;
	return 10 * magnitude;
}

bool po_stats_histogram_axis(struct po_stats_histogram *histogram, size_t bin_count, double low,
			     double high)
{
	double step;

	*histogram = (struct po_stats_histogram){0};
	if (!isfinite(low) || !isfinite(high) || high < low || bin_count == 0 ||
	    bin_count > PO_STATS_HISTOGRAM_MAX_BINS)
		return false;
	step = po_stats_nice_step(high - low > 0 ? high - low : fmax(high, 1), 8);
	histogram->bin_count = bin_count;
	histogram->low = floor(low / step) * step;
	histogram->high = ceil(high / step) * step;
	if (histogram->high <= histogram->low)
		histogram->high = histogram->low + step;
	return true;
}

void po_stats_histogram_add(struct po_stats_histogram *histogram, const double *values, size_t n)
{
	double span = histogram->high - histogram->low;

	for (size_t i = 0; i < n && histogram->bin_count; i++) {
		double position = (values[i] - histogram->low) / span;
		size_t bin;

		if (isnan(values[i]))
			continue;
		bin = position <= 0   ? 0
		      : position >= 1 ? histogram->bin_count - 1
				      : (size_t)(position * (double)histogram->bin_count);
		if (bin >= histogram->bin_count)
			bin = histogram->bin_count - 1;
		histogram->total++;
		if (++histogram->counts[bin] > histogram->highest)
			histogram->highest = histogram->counts[bin];
	}
}

/* Sifts heap[i] up; a max-heap when sign is 1, a min-heap when -1. */
static void heap_up(double *heap, size_t i, double sign)
{
	while (i) {
		size_t parent = (i - 1) / 2;
		double held = heap[i];

		if (!(sign * heap[parent] < sign * held))
			return;
		heap[i] = heap[parent];
		heap[parent] = held;
		i = parent;
	}
}

static void heap_down(double *heap, size_t count, double sign)
{
	size_t i = 0;

	for (;;) {
		size_t left = 2 * i + 1, right = left + 1, top = i;
		double held;

		if (left < count && sign * heap[left] > sign * heap[top])
			top = left;
		if (right < count && sign * heap[right] > sign * heap[top])
			top = right;
		if (top == i)
			return;
		held = heap[i];
		heap[i] = heap[top];
		heap[top] = held;
		i = top;
	}
}

static bool heap_room(double **heap, size_t count, size_t *capacity)
{
	size_t grown;
	double *moved;

	if (count < *capacity)
		return true;
	grown = *capacity ? 2 * *capacity : 64;
	moved = realloc(*heap, grown * sizeof(**heap));
	if (!moved)
		return false;
	*heap = moved;
	*capacity = grown;
	return true;
}

/* Pops a heap's top into the other heap. */
static void heap_move(double *from, size_t *from_count, double from_sign, double *to,
		      size_t *to_count, double to_sign)
{
	double top = from[0];

	from[0] = from[--*from_count];
	heap_down(from, *from_count, from_sign);
	to[(*to_count)++] = top;
	heap_up(to, *to_count - 1, to_sign);
}

bool po_stats_running_median_add(struct po_stats_running_median *m, double value)
{
	if (isnan(value))
		return true;
	/* Room for the value and for one move between the heaps, before anything changes. */
	if (!heap_room(&m->low, m->low_count + 1, &m->low_capacity) ||
	    !heap_room(&m->high, m->high_count + 1, &m->high_capacity))
		return false;
	if (!m->low_count || value <= m->low[0]) {
		m->low[m->low_count++] = value;
		heap_up(m->low, m->low_count - 1, 1);
	} else {
		m->high[m->high_count++] = value;
		heap_up(m->high, m->high_count - 1, -1);
	}
	/* The lower heap holds ceil(n / 2) values: its top is the median's lower middle. */
	if (m->low_count > m->high_count + 1)
		heap_move(m->low, &m->low_count, 1, m->high, &m->high_count, -1);
	else if (m->high_count > m->low_count)
		heap_move(m->high, &m->high_count, -1, m->low, &m->low_count, 1);
	return true;
}

double po_stats_running_median_value(const struct po_stats_running_median *m)
{
	if (!m->low_count)
		return NAN;
	if (m->low_count == m->high_count)
		return (m->low[0] + m->high[0]) / 2.0;
	return m->low[0];
}

void po_stats_running_median_fini(struct po_stats_running_median *m)
{
	free(m->low);
	free(m->high);
	*m = (struct po_stats_running_median){0};
}
