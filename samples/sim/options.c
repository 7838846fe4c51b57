/* options.c: profopt-sim's command line, its --help, and its settings as run configuration. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "profopt.h"
#include "sim.h"

enum option_kind {
	KIND_INT,
	KIND_MS,
	KIND_TEXT,
};

struct option_desc {
	const char *flag;
	const char *key; /* run_config key and JSON member */
	enum option_kind kind;
	size_t offset;
	const char *unit;
	const char *help;
};

static const struct option_desc option_descs[] = {
#define SIM_X(flag, field, kind, def, unit, help)                                                  \
	{flag, #field, KIND_##kind, offsetof(struct sim_options, field), unit, help},
    SIM_OPTIONS(SIM_X)
#undef SIM_X
};
#define OPTION_COUNT (sizeof(option_descs) / sizeof(option_descs[0]))

enum { OPT_HELP = 1000, OPT_VERSION, OPT_AFTER };

#define AFTER_CAP 32

#define SIM_DEFAULT_INT(value) (value)
#define SIM_DEFAULT_MS(value) ((int64_t)((value)*1000000.0))
#define SIM_DEFAULT_TEXT(value) (value)

static void set_defaults(struct sim_options *opts)
{
#define SIM_X(flag, field, kind, def, unit, help) opts->field = SIM_DEFAULT_##kind(def);
	SIM_OPTIONS(SIM_X)
#undef SIM_X
}

static PO_NODISCARD enum po_status parse_value(const struct option_desc *desc, const char *text,
					       struct sim_options *opts, struct po_error *err)
{
	char *end = NULL;
	void *field = (char *)opts + desc->offset;

	errno = 0;
	if (desc->kind == KIND_TEXT) {
		*(const char **)field = text;
		return PO_STATUS_OK;
	}
	if (desc->kind == KIND_INT) {
		long long value = strtoll(text, &end, 10);

		if (errno || end == text || *end || value < 0)
			goto bad;
		*(int64_t *)field = value;
		return PO_STATUS_OK;
	}
	double ms = strtod(text, &end);

	if (errno || end == text || *end || !(ms >= 0.0) || ms > 1e9)
		goto bad;
	*(int64_t *)field = (int64_t)(ms * 1000000.0 + 0.5);
	return PO_STATUS_OK;
bad:
	po_error_set(err, "Invalid value: option=--%s value=\"%s\" expected=%s", desc->flag, text,
		     desc->kind == KIND_INT ? "a non-negative integer"
					    : "non-negative milliseconds");
	return PO_STATUS_USAGE;
}

static PO_NODISCARD enum po_status check_options(const struct sim_options *opts,
						 struct po_error *err)
{
	if (opts->steps < 1 || opts->epochs < 1 || opts->prefetch < 1) {
		po_error_set(err, "--steps, --epochs and --prefetch must be at least 1");
		return PO_STATUS_USAGE;
	}
	if (opts->workers > 64) {
		po_error_set(err, "Too many workers: workers=%" PRId64 " max=64", opts->workers);
		return PO_STATUS_USAGE;
	}
	if (strcmp(opts->leak_in, "main") != 0 && strcmp(opts->leak_in, "worker") != 0) {
		po_error_set(err,
			     "Invalid value: option=--leak-in value=\"%s\" expected=main|worker",
			     opts->leak_in);
		return PO_STATUS_USAGE;
	}
	if (opts->persistent_workers > 1 || opts->kill_workers > 1) {
		po_error_set(err, "--persistent-workers and --kill-workers take 0 or 1");
		return PO_STATUS_USAGE;
	}
	if (opts->jitter_pct > 100) {
		po_error_set(err, "Invalid value: option=--jitter value=%" PRId64 " max=100",
			     opts->jitter_pct);
		return PO_STATUS_USAGE;
	}
	return PO_STATUS_OK;
}

static void fill_long_options(struct option *longopts)
{
	for (size_t i = 0; i < OPTION_COUNT; i++)
		longopts[i] =
		    (struct option){option_descs[i].flag, required_argument, NULL, (int)i};
	longopts[OPTION_COUNT] = (struct option){"help", no_argument, NULL, OPT_HELP};
	longopts[OPTION_COUNT + 1] = (struct option){"version", no_argument, NULL, OPT_VERSION};
	longopts[OPTION_COUNT + 2] = (struct option){"after", required_argument, NULL, OPT_AFTER};
	longopts[OPTION_COUNT + 3] = (struct option){NULL, 0, NULL, 0};
}

/* What may change in the middle of a run: the work of each step and of each batch. */
static bool changes_per_step(const char *flag)
{
	static const char *const flags[] = {
	    "handoff-ms", "load-ms",	    "preprocess-ms", "collate-ms", "h2d-ms",
	    "forward-ms", "backward-ms",    "optimizer-ms",  "kernels",	   "gpu-ms",
	    "leak-bytes", "gpu-leak-bytes", "stall-every",   "stall-ms"};

	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		if (strcmp(flag, flags[i]) == 0)
			return true;
	return false;
}

/* --after NAME=VALUE...: a copy of the settings with these changed, for --change-at. */
static PO_NODISCARD enum po_status parse_after(struct sim_options *opts, const char *const *after,
					       size_t count, struct po_error *err)
{
	static struct sim_options changed;

	if (count && opts->change_at <= 0) {
		po_error_set(err, "--after needs --change-at STEP (a step from 1 on)");
		return PO_STATUS_USAGE;
	}
	if (!count && opts->change_at > 0) {
		po_error_set(err, "--change-at needs at least one --after NAME=VALUE");
		return PO_STATUS_USAGE;
	}
	changed = *opts;
	for (size_t i = 0; i < count; i++) {
		const char *equals = strchr(after[i], '=');
		const struct option_desc *desc = NULL;

		for (size_t j = 0; equals && j < OPTION_COUNT; j++)
			if (strlen(option_descs[j].flag) == (size_t)(equals - after[i]) &&
			    strncmp(option_descs[j].flag, after[i], (size_t)(equals - after[i])) ==
				0)
				desc = &option_descs[j];
		if (!desc || !changes_per_step(desc->flag)) {
			po_error_set(
			    err,
			    "Invalid value: option=--after value=\"%s\" expected=NAME=VALUE "
			    "with NAME a per-step setting (load-ms, forward-ms, leak-bytes, "
			    "stall-every, ...)",
			    after[i]);
			return PO_STATUS_USAGE;
		}
		if (parse_value(desc, equals + 1, &changed, err) != PO_STATUS_OK)
			return PO_STATUS_USAGE;
	}
	changed.after = NULL;
	opts->after = count ? &changed : NULL;
	return PO_STATUS_OK;
}

enum po_status sim_options_parse(struct sim_options *opts, enum sim_action *action, int argc,
				 char **argv, struct po_error *err)
{
	struct option longopts[OPTION_COUNT + 4];
	const char *after[AFTER_CAP];
	size_t after_count = 0;
	int opt;

	set_defaults(opts);
	opts->after = NULL;
	fill_long_options(longopts);
	*action = SIM_ACTION_RUN;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "hV", longopts, NULL)) != -1) {
		if (opt == OPT_HELP || opt == 'h') {
			*action = SIM_ACTION_HELP;
		} else if (opt == OPT_VERSION || opt == 'V') {
			*action = SIM_ACTION_VERSION;
		} else if (opt == OPT_AFTER) {
			if (after_count == AFTER_CAP) {
				po_error_set(err, "Too many --after settings: max=%d", AFTER_CAP);
				return PO_STATUS_USAGE;
			}
			after[after_count++] = optarg;
		} else if (opt >= 0 && (size_t)opt < OPTION_COUNT) {
			if (parse_value(&option_descs[opt], optarg, opts, err) != PO_STATUS_OK)
				return PO_STATUS_USAGE;
		} else {
			po_error_set(err, "Unknown or incomplete option: %s (see --help)",
				     argv[optind - 1]);
			return PO_STATUS_USAGE;
		}
	}
	if (optind < argc) {
		po_error_set(err, "Unexpected argument: %s (see --help)", argv[optind]);
		return PO_STATUS_USAGE;
	}
	if (*action != SIM_ACTION_RUN)
		return PO_STATUS_OK;
	if (parse_after(opts, after, after_count, err) != PO_STATUS_OK)
		return PO_STATUS_USAGE;
	return check_options(opts, err);
}

const struct sim_options *sim_options_at(const struct sim_options *opts, int64_t step)
{
	return opts->after && opts->change_at > 0 && step >= opts->change_at ? opts->after : opts;
}

static void format_value(const struct option_desc *desc, const struct sim_options *opts, char *buf,
			 size_t size)
{
	const void *field = (const char *)opts + desc->offset;

	if (desc->kind == KIND_TEXT)
		snprintf(buf, size, "%s", *(const char *const *)field);
	else if (desc->kind == KIND_INT)
		snprintf(buf, size, "%" PRId64, *(const int64_t *)field);
	else
		snprintf(buf, size, "%.3f", (double)*(const int64_t *)field / 1e6);
}

void sim_options_print_help(FILE *out)
{
	static const char *const metavar[] = {
	    [KIND_INT] = "N", [KIND_MS] = "MS", [KIND_TEXT] = "TEXT"};
	struct sim_options defaults;
	char value[64];

	set_defaults(&defaults);
	fprintf(out, "Usage: profopt-sim [OPTION]...\n"
		     "A simulated training loop with forked data-loader workers and a simulated\n"
		     "GPU, instrumented with libprofopt. Record it with profopt-record.\n\n");
	for (size_t i = 0; i < OPTION_COUNT; i++) {
		const struct option_desc *desc = &option_descs[i];

		format_value(desc, &defaults, value, sizeof(value));
		fprintf(out, "  --%s %s\n      %s", desc->flag, metavar[desc->kind], desc->help);
		if (desc->unit[0])
			fprintf(out, "; unit: %s", desc->unit);
		fprintf(out, value[0] ? "; default: %s\n" : "\n", value);
	}
	fprintf(out,
		"  --after NAME=VALUE\n"
		"      from --change-at's step on, NAME (a per-step setting: load-ms, forward-ms,\n"
		"      gpu-ms, leak-bytes, stall-every, ...) takes VALUE; repeatable\n"
		"  --help       this text\n  --version    the version\n\n"
		"Durations are wall time (load, h2d, stalls, GPU) or CPU time spent spinning\n"
		"(preprocess, collate, forward, backward, optimizer). At the end the mean step\n"
		"time is printed; exit status 0 on success, 1 on a failure, 2 on a usage error.\n");
}

void sim_options_record(const struct sim_options *opts)
{
	char key[64], value[64];
	char workers[32], batch[32], prefetch[32];

	snprintf(workers, sizeof(workers), "%" PRId64, opts->workers);
	snprintf(batch, sizeof(batch), "%" PRId64, opts->batch_size);
	snprintf(prefetch, sizeof(prefetch), "%" PRId64, opts->prefetch);
	profopt_run_config("num_workers", workers);
	profopt_run_config("batch_size", batch);
	profopt_run_config("prefetch_factor", prefetch);
	profopt_run_config("pin_memory", "false");
	profopt_run_config("persistent_workers", opts->persistent_workers ? "true" : "false");
	profopt_run_config("device", "sim");
	profopt_run_config("precision", "fp32");
	for (size_t i = 0; i < OPTION_COUNT; i++) {
		if (strcmp(option_descs[i].flag, "report-json") == 0)
			continue;
		snprintf(key, sizeof(key), "sim.%s", option_descs[i].flag);
		format_value(&option_descs[i], opts, value, sizeof(value));
		profopt_run_config(key, value);
	}
	for (size_t i = 0; opts->after && i < OPTION_COUNT; i++) {
		char before[64];

		format_value(&option_descs[i], opts, before, sizeof(before));
		format_value(&option_descs[i], opts->after, value, sizeof(value));
		if (strcmp(before, value) == 0)
			continue;
		snprintf(key, sizeof(key), "sim.after.%s", option_descs[i].flag);
		profopt_run_config(key, value);
	}
}

static void write_json_string(FILE *out, const char *text)
{
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p < 0x20 || *p >= 0x7f)
			fprintf(out, "\\u%04x", *p);
		else
			fputc(*p, out);
	}
	fputc('"', out);
}

void sim_options_write_json(const struct sim_options *opts, FILE *out)
{
	char value[64];

	for (size_t i = 0; i < OPTION_COUNT; i++) {
		const struct option_desc *desc = &option_descs[i];

		fprintf(out, "%s\"%s\": ", i ? ", " : "", desc->flag);
		format_value(desc, opts, value, sizeof(value));
		if (desc->kind == KIND_TEXT)
			write_json_string(
			    out, *(const char *const *)((const char *)opts + desc->offset));
		else
			fputs(value, out);
	}
}

const char *sim_label(const struct sim_options *opts, const char *default_label)
{
	return opts->label[0] ? opts->label : default_label;
}
