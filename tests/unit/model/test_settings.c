/* test_settings.c: the run's settings are parsed once, with one meaning (po_run_settings). */
#include "builder.h"

static void config(struct po_model *model, int64_t t, const char *key, const char *value)
{
	struct po_event event = event_at(PO_EV_RUN_CONFIG, t, 100, 100);

	event.u.run_config.key = str_of(key);
	event.u.run_config.value = str_of(value);
	feed(model, &event);
}

static struct po_analysis *run_with(const char *const *pairs)
{
	struct po_model *model = model_new(NULL);

	for (int i = 0; pairs[i]; i += 2)
		config(model, i, pairs[i], pairs[i + 1]);
	step_begin(model, 10 * MS, 100, 100, 0);
	step_end(model, 20 * MS, 100, 100, 0);
	return model_done(model);
}

static void parsed_once(void)
{
	static const char *const pairs[] = {"num_workers",
					    "4",
					    "pin_memory",
					    "TRUE",
					    "persistent_workers",
					    "False",
					    "prefetch_factor",
					    "x",
					    "batch_size",
					    "64",
					    "device",
					    "cuda:0",
					    "world_size",
					    "-2",
					    NULL};
	struct po_analysis *analysis = run_with(pairs);
	const struct po_run_settings *s = &analysis->settings;

	CHECK_INT_EQ(s->num_workers, 4);
	CHECK_INT_EQ(s->pin_memory, 1); /* any case */
	CHECK_INT_EQ(s->persistent_workers, 0);
	CHECK_INT_EQ(s->prefetch_factor, -1); /* not a number: not reported */
	CHECK_INT_EQ(s->batch_size, 64);
	CHECK(s->device && strcmp(s->device, "cuda:0") == 0);
	CHECK_INT_EQ(s->world_size, -1); /* negative: not a count */
	CHECK_INT_EQ(s->rank, -1);	 /* missing */
	po_analysis_destroy(analysis);
}

static void booleans(void)
{
	static const char *const ones[] = {"pin_memory", "1", "persistent_workers", "true", NULL};
	static const char *const others[] = {"pin_memory", "yes", "persistent_workers", "0", NULL};
	struct po_analysis *analysis = run_with(ones);

	CHECK_INT_EQ(analysis->settings.pin_memory, 1);
	CHECK_INT_EQ(analysis->settings.persistent_workers, 1);
	po_analysis_destroy(analysis);
	analysis = run_with(others);
	CHECK_INT_EQ(analysis->settings.pin_memory, -1);
	CHECK_INT_EQ(analysis->settings.persistent_workers, 0);
	po_analysis_destroy(analysis);
}

/* Fewer worker processes recorded than the run configured: said (missing-workers). */
static void missing_workers(void)
{
	struct po_model *model = model_new(NULL);
	struct po_analysis *analysis;

	config(model, 1, "num_workers", "4");
	worker_begin(model, 2, 200, 0, 100);
	step_begin(model, 10 * MS, 100, 100, 0);
	step_end(model, 20 * MS, 100, 100, 0);
	analysis = model_done(model);
	CHECK(find_warning(analysis, "missing-workers") != NULL);
	po_analysis_destroy(analysis);
	model = model_new(NULL);
	config(model, 1, "num_workers", "1");
	worker_begin(model, 2, 200, 0, 100);
	step_begin(model, 10 * MS, 100, 100, 0);
	step_end(model, 20 * MS, 100, 100, 0);
	analysis = model_done(model);
	CHECK(find_warning(analysis, "missing-workers") == NULL);
	po_analysis_destroy(analysis);
}

/* The Python module's memory lines: FILE:LINE spans and the object count, parsed once. */
static void python_lines(void)
{
	static const char *const pairs[] = {"python_growth.1",
					    "train.py:12  | 1048576 | 5000",
					    "python_kept.1",
					    "cache.py:30 | 1048576",
					    "python_growth.workers.1",
					    "dataset.py:7 | 10 | 3",
					    "python_kept.workers.1",
					    "no bar here",
					    NULL};
	struct po_analysis *analysis = run_with(pairs);
	const struct po_python_growth *main_lines = &analysis->settings.python_main;
	const struct po_python_growth *workers = &analysis->settings.python_workers;

	CHECK_INT_EQ(main_lines->created_at.length, 11);
	CHECK(strncmp(main_lines->created_at.text, "train.py:12", 11) == 0);
	CHECK_INT_EQ(main_lines->kept_at.length, 11);
	CHECK(strncmp(main_lines->kept_at.text, "cache.py:30", 11) == 0);
	CHECK_INT_EQ(main_lines->objects, 5000);
	CHECK_INT_EQ(workers->created_at.length, 12);
	CHECK_INT_EQ(workers->kept_at.length, 0); /* no FILE:LINE: the created line's */
	CHECK_INT_EQ(workers->objects, 3);
	po_analysis_destroy(analysis);
	analysis = run_with((const char *const[]){"python_growth.1", "x.py:1 | 2", NULL});
	CHECK_INT_EQ(analysis->settings.python_main.created_at.length, 0); /* no object count */
	CHECK_INT_EQ(analysis->settings.python_main.objects, -1);
	po_analysis_destroy(analysis);
}

int main(void)
{
	RUN(parsed_once);
	RUN(booleans);
	RUN(missing_workers);
	RUN(python_lines);
	return CHECK_SUMMARY();
}
