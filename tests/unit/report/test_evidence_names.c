/*
 * test_evidence_names.c: keeps the evidence keys, their words and the detectors in step.
 * test_evidence_names DETECT_DIR reads every .c file of DETECT_DIR (analyzer/detect) and
 * fails when a det_ev_*() call names no key of evidence_keys.h (or one of the wrong kind of
 * parameter for that call), when a key has no words in the table, or when a key is written
 * by no detector. It also checks that every key's JSON name reads back through the lookup
 * and is spelled by no other key, and the words and values a person reads.
 */
#include <ctype.h>
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "evidence_names.h"
#include "report_priv.h"

#define MAX_ARG 512

/* The keys' identifiers as the detectors spell them. */
static const char *const key_identifiers[PO_EVIDENCE_KEY_COUNT] = {
#define PO_X(id, kind, json) "PO_EVIDENCE_" #id,
    PO_EVIDENCE_KEYS(PO_X)
#undef PO_X
};

/* How often the detectors' sources write each key. */
static size_t written[PO_EVIDENCE_KEY_COUNT];
static size_t call_count;
static int scan_errors;

static char *read_file(const char *path)
{
	FILE *file = fopen(path, "rb");
	char *text = NULL;
	long size;

	if (!file)
		return NULL;
	if (fseek(file, 0, SEEK_END) == 0 && (size = ftell(file)) >= 0 &&
	    fseek(file, 0, SEEK_SET) == 0 && (text = malloc((size_t)size + 1))) {
		if (fread(text, 1, (size_t)size, file) != (size_t)size) {
			free(text);
			text = NULL;
		} else {
			text[size] = '\0';
		}
	}
	fclose(file);
	return text;
}

/* Appends c to arg unless it is leading space or arg is full. */
static void append(char *arg, size_t *used, char c)
{
	if ((*used > 0 || !isspace((unsigned char)c)) && *used + 1 < MAX_ARG)
		arg[(*used)++] = c;
	arg[*used] = '\0';
}

/*
 * Splits the arguments of the call whose "(" is at open into args, trimmed; returns their
 * count. Commas inside parentheses and string literals do not split.
 */
static size_t split_args(const char *open, char args[][MAX_ARG], size_t max_args)
{
	int depth = 0;
	bool in_string = false;
	size_t count = 0, used = 0;

	args[0][0] = '\0';
	for (const char *c = open + 1; *c && count < max_args; c++) {
		bool ends = !in_string && depth == 0 && (*c == ',' || *c == ')');

		if (ends) {
			while (used && isspace((unsigned char)args[count][used - 1]))
				args[count][--used] = '\0';
			count++;
			used = 0;
			if (*c == ')' || count == max_args)
				break;
			args[count][0] = '\0';
			continue;
		}
		if (in_string && *c == '\\' && c[1])
			append(args[count], &used, *c++);
		else if (*c == '"')
			in_string = !in_string;
		else if (!in_string && *c == '(')
			depth++;
		else if (!in_string && *c == ')')
			depth--;
		append(args[count], &used, *c);
	}
	return count;
}

/* The key whose identifier is arg, or PO_EVIDENCE_KEY_COUNT. */
static enum po_evidence_key key_of(const char *arg)
{
	for (int k = 0; k < PO_EVIDENCE_KEY_COUNT; k++) {
		if (strcmp(arg, key_identifiers[k]) == 0)
			return (enum po_evidence_key)k;
	}
	return PO_EVIDENCE_KEY_COUNT;
}

/* The kind of parameter a det_ev_ function takes, by its name's tail after "det_ev_". */
static enum po_evidence_param_kind kind_of_call(const char *tail, size_t length)
{
	if (length > 3 && strncmp(tail + length - 3, "_at", 3) == 0)
		return PO_EVIDENCE_PARAM_NUMBER;
	if (length > 3 && strncmp(tail + length - 3, "_in", 3) == 0)
		return PO_EVIDENCE_PARAM_CATEGORY;
	return PO_EVIDENCE_PARAM_NONE;
}

/* The key argument of one det_ev_*() call: a key of the right kind for the call, or an error. */
static void take_key(const char *file, const char *key_arg, enum po_evidence_param_kind kind)
{
	enum po_evidence_key key = key_of(key_arg);

	call_count++;
	if (key == PO_EVIDENCE_KEY_COUNT) {
		fprintf(stderr, "%s: evidence key %s is no PO_EVIDENCE_ key of evidence_keys.h\n",
			file, key_arg);
		scan_errors++;
		return;
	}
	if (po_evidence_key_param_kind(key) != kind) {
		fprintf(stderr, "%s: %s takes another kind of parameter than its call gives\n",
			file, key_arg);
		scan_errors++;
	}
	written[key]++;
}

/* Every det_ev_*() call of one source file (declarations left out). */
static void scan_file(const char *dir, const char *name)
{
	char path[1024], args[4][MAX_ARG];
	char *text;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	text = read_file(path);
	if (!text) {
		fprintf(stderr, "cannot read %s\n", path);
		scan_errors++;
		return;
	}
	for (char *call = strstr(text, "det_ev_"); call; call = strstr(call + 1, "det_ev_")) {
		size_t length = strspn(call + 7, "abcdefghijklmnopqrstuvwxyz_");
		char *open = call + 7 + length;

		if (*open != '(' || split_args(open, args, 4) < 3 ||
		    strncmp(args[0], "struct ", 7) == 0)
			continue;
		take_key(name, args[2], kind_of_call(call + 7, length));
	}
	free(text);
}

static bool scan_dir(const char *dir)
{
	DIR *handle = opendir(dir);
	struct dirent *entry;

	if (!handle)
		return false;
	while ((entry = readdir(handle))) {
		size_t length = strlen(entry->d_name);

		if (length > 2 && strcmp(entry->d_name + length - 2, ".c") == 0)
			scan_file(dir, entry->d_name);
	}
	closedir(handle);
	return true;
}

/* Whether a name reads as words: not empty, and no raw key or wildcard left in it. */
static bool reads_as_words(const char *name)
{
	return name[0] && !strpbrk(name, "_#@");
}

/*
 * Whether an entry's words are whole: a name without underscores whose "#" or "@" is the
 * key's kind of parameter, a meaning, and a unit the name does not repeat.
 */
static bool entry_well_formed(const struct po_evidence_entry *entry)
{
	enum po_evidence_param_kind kind = po_evidence_key_param_kind(entry->key);
	const char *hole = strpbrk(entry->name, "#@");
	char hole_wanted = kind == PO_EVIDENCE_PARAM_NUMBER	? '#'
			   : kind == PO_EVIDENCE_PARAM_CATEGORY ? '@'
								: '\0';

	return entry->name[0] && !strchr(entry->name, '_') &&
	       (hole ? *hole : '\0') == hole_wanted && (!hole || !strpbrk(hole + 1, "#@")) &&
	       entry->meaning[0] != '\0' && entry->unit != NULL &&
	       !strstr(entry->name, entry->unit[0] ? entry->unit : "\x01");
}

/* (a) Every key has general words, whole, and some detector writes it. */
static void every_key_named_and_written(void)
{
	for (int k = 0; k < PO_EVIDENCE_KEY_COUNT; k++) {
		const struct po_evidence_entry *entry =
		    po_evidence_entry_of((enum po_evidence_key)k);

		CHECK(entry != NULL);
		if (!entry) {
			fprintf(stderr,
				"%s has no words: add it to PO_EVIDENCE_NAMES in "
				"render/report/evidence_names.c\n",
				key_identifiers[k]);
			continue;
		}
		CHECK(entry_well_formed(entry));
		CHECK(written[k] > 0);
		if (written[k] == 0)
			fprintf(stderr, "%s is written by no detector\n", key_identifiers[k]);
	}
}

/* (b) A finding's own words are whole, once per finding and key. */
static void overrides_in_step(void)
{
	for (size_t i = 0; i < po_evidence_override_count(); i++) {
		const struct po_evidence_entry *entry = po_evidence_override_at(i);

		CHECK(entry->finding < PO_FINDING_ID_COUNT);
		CHECK(entry_well_formed(entry));
		for (size_t j = 0; j < i; j++) {
			const struct po_evidence_entry *other = po_evidence_override_at(j);

			CHECK(other->finding != entry->finding || other->key != entry->key);
		}
	}
}

/* The parameters a key is tried with: numbers 1, 2 and 10, or every category. */
static size_t params_of(enum po_evidence_key key, union po_evidence_param *params)
{
	static const unsigned numbers[] = {1, 2, 10};
	size_t count = 0;

	switch (po_evidence_key_param_kind(key)) {
	case PO_EVIDENCE_PARAM_NUMBER:
		for (size_t n = 0; n < sizeof(numbers) / sizeof(numbers[0]); n++)
			params[count++] = (union po_evidence_param){.number = numbers[n]};
		return count;
	case PO_EVIDENCE_PARAM_CATEGORY:
		for (int c = 0; c < PO_CATEGORY_COUNT; c++)
			params[count++] =
			    (union po_evidence_param){.category = (enum po_category)c};
		return count;
	default:
		params[0] = (union po_evidence_param){0};
		return 1;
	}
}

/*
 * (c) Every key, with every parameter tried, reads in words and reads back through the
 * lookup as itself; a category's instance that spells a key without parameter
 * (data_wait_ms_per_step) reads back as that key, as the lookup promises.
 */
static void names_round_trip(void)
{
	for (int k = 0; k < PO_EVIDENCE_KEY_COUNT; k++) {
		union po_evidence_param params[PO_CATEGORY_COUNT + 3];
		size_t count = params_of((enum po_evidence_key)k, params);

		for (size_t p = 0; p < count; p++) {
			char buffer[PO_EVIDENCE_KEY_MAX];
			const char *name = po_evidence_key_name((enum po_evidence_key)k, params[p],
								buffer, sizeof(buffer));
			enum po_evidence_key key = PO_EVIDENCE_KEY_COUNT;
			union po_evidence_param param;
			struct po_evidence_words words;

			CHECK(strlen(name) + 1 < sizeof(buffer));
			CHECK(po_evidence_key_lookup(name, &key, &param));
			CHECK(
			    po_evidence_same_key(key, param, (enum po_evidence_key)k, params[p]) ||
			    (po_evidence_key_param_kind(key) == PO_EVIDENCE_PARAM_NONE &&
			     strcmp(po_evidence_key_pattern(key), name) == 0));
			po_evidence_words(PO_EVIDENCE_ANY_FINDING, (enum po_evidence_key)k,
					  params[p], &words);
			CHECK(reads_as_words(words.name));
			if (!reads_as_words(words.name))
				fprintf(stderr, "key %s reads \"%s\"\n", name, words.name);
		}
	}
}

/* (d) No two keys share a JSON name; names the keys do not spell are not found. */
static void names_unique(void)
{
	static const char *const strangers[] = {
	    "",
	    "busiest_label",
	    "site_where",
	    "sitex_where",
	    "site0_where",
	    "site02_where",
	    "site1_where_",
	    "nowhere_ms_per_step",
	    "_ms_per_step",
	    "steps ",
	};
	enum po_evidence_key key;
	union po_evidence_param param;

	for (int k = 0; k < PO_EVIDENCE_KEY_COUNT; k++) {
		const char *pattern = po_evidence_key_pattern((enum po_evidence_key)k);

		CHECK(pattern[0] && strlen(pattern) < PO_EVIDENCE_KEY_MAX);
		CHECK((strpbrk(pattern, "#@") != NULL) ==
		      (po_evidence_key_param_kind((enum po_evidence_key)k) !=
		       PO_EVIDENCE_PARAM_NONE));
		for (int j = 0; j < k; j++)
			CHECK(strcmp(pattern, po_evidence_key_pattern((enum po_evidence_key)j)) !=
			      0);
	}
	for (size_t i = 0; i < sizeof(strangers) / sizeof(strangers[0]); i++) {
		CHECK(!po_evidence_key_lookup(strangers[i], &key, &param));
		if (po_evidence_key_lookup(strangers[i], &key, &param))
			fprintf(stderr, "\"%s\" is found as a key\n", strangers[i]);
	}
	CHECK(!po_evidence_key_lookup(NULL, &key, &param));
	CHECK(po_evidence_key_lookup("site12_live_mib", &key, &param));
	CHECK(key == PO_EVIDENCE_SITE_N_LIVE_MIB && param.number == 12);
	CHECK(po_evidence_key_lookup("gc_ms_per_step", &key, &param));
	CHECK(key == PO_EVIDENCE_CATEGORY_MS_PER_STEP && param.category == PO_CAT_GC);
	CHECK(po_evidence_key_lookup("data_wait_ms_per_step", &key, &param));
	CHECK(key == PO_EVIDENCE_DATA_WAIT_MS_PER_STEP);
}

static void check_words(enum po_finding_id finding, enum po_evidence_key key,
			union po_evidence_param param, const char *name, const char *unit)
{
	struct po_evidence_words words;

	po_evidence_words(finding, key, param, &words);
	CHECK_STR_EQ(words.name, name);
	CHECK_STR_EQ(words.unit, unit);
}

/* Overrides per finding, parameters, and a key out of range. */
static void words_cases(void)
{
	const union po_evidence_param none = {0};
	struct po_evidence_words words;

	check_words(PO_FINDING_GPU_IDLE, PO_EVIDENCE_THRESHOLD_MS, none, "Shortest gap counted",
		    "ms");
	check_words(PO_FINDING_STEP_OUTLIERS, PO_EVIDENCE_THRESHOLD_MS, none, "Slow-step threshold",
		    "ms");
	check_words(PO_FINDING_INPUT_BOUND, PO_EVIDENCE_THRESHOLD_MS, none, "Threshold", "ms");
	check_words(PO_FINDING_INPUT_BOUND, PO_EVIDENCE_WAIT_SHARE_PCT, none, "Input wait share",
		    "%");
	check_words(PO_FINDING_UNFREED_ALLOCATIONS, PO_EVIDENCE_SITE_N_WHERE,
		    (union po_evidence_param){.number = 2}, "Site 2: allocated in", "");
	check_words(PO_FINDING_UNFREED_ALLOCATIONS, PO_EVIDENCE_SITE_N_LIVE_MIB,
		    (union po_evidence_param){.number = 12}, "Site 12: memory held", "MiB");
	check_words(PO_FINDING_GPU_IDLE, PO_EVIDENCE_CATEGORY_MS_PER_STEP,
		    (union po_evidence_param){.category = PO_CAT_DATA_WAIT}, "GPU idle: Data wait",
		    "ms/step");
	check_words(PO_FINDING_GPU_IDLE, PO_EVIDENCE_CATEGORY_MS_PER_STEP,
		    (union po_evidence_param){.category = PO_CAT_HANDOFF},
		    "GPU idle: Batch hand-off", "ms/step");
	check_words(PO_FINDING_LOADER_HANDOFF, PO_EVIDENCE_DATA_WAIT_MS_PER_STEP, none, "Data wait",
		    "ms/step");
	check_words(PO_FINDING_GPU_IDLE, PO_EVIDENCE_IDLE_MS_PER_STEP, none, "GPU idle time",
		    "ms/step");
	check_words(PO_EVIDENCE_ANY_FINDING, PO_EVIDENCE_KEY_COUNT, none, "Value", "");
	po_evidence_words(PO_EVIDENCE_ANY_FINDING, PO_EVIDENCE_KEY_COUNT, none, &words);
	CHECK_STR_EQ(words.meaning, "");
}

static void check_format(struct po_evidence evidence, const char *unit, const char *expected)
{
	char out[64];

	po_evidence_format(&evidence, unit, out, sizeof(out));
	CHECK_STR_EQ(out, expected);
}

static void format_cases(void)
{
	const enum po_evidence_key k = PO_EVIDENCE_STEP_MS;

	check_format((struct po_evidence){k, PO_EVIDENCE_NUMBER, 41.3, 0, NULL, {0}}, "%", "41.3%");
	check_format((struct po_evidence){k, PO_EVIDENCE_NUMBER, 12.5, 0, NULL, {0}}, "ms/step",
		     "12.5 ms/step");
	check_format((struct po_evidence){k, PO_EVIDENCE_NUMBER, 1.64, 0, NULL, {0}}, "\xc3\x97",
		     "1.64\xc3\x97");
	check_format((struct po_evidence){k, PO_EVIDENCE_NUMBER, NAN, 0, NULL, {0}}, "\xc3\x97",
		     "n/a");
	check_format((struct po_evidence){k, PO_EVIDENCE_NUMBER, 123456.7, 0, NULL, {0}}, "B/step",
		     "123457 B/step");
	check_format((struct po_evidence){k, PO_EVIDENCE_NUMBER, 0.25, 0, NULL, {0}}, "", "0.25");
	check_format((struct po_evidence){k, PO_EVIDENCE_INTEGER, 0, 2, NULL, {0}}, "", "2");
	check_format((struct po_evidence){k, PO_EVIDENCE_INTEGER, 0, 10, NULL, {0}}, "steps",
		     "10 steps");
	check_format((struct po_evidence){k, PO_EVIDENCE_TEXT, 0, 0, "load", {0}}, "ms", "load");
}

int main(int argc, char **argv)
{
	if (argc != 2 || !scan_dir(argv[1])) {
		fprintf(stderr, "usage: test_evidence_names DETECT_DIR (a readable directory)\n");
		return 2;
	}
	/* A scan that finds (almost) nothing means the scanner, not the table, is wrong. */
	CHECK(call_count >= 50);
	CHECK_INT_EQ(scan_errors, 0);
	RUN(every_key_named_and_written);
	RUN(overrides_in_step);
	RUN(names_round_trip);
	RUN(names_unique);
	RUN(words_cases);
	RUN(format_cases);
	return CHECK_SUMMARY();
}
