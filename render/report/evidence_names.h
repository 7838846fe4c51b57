/*
 * evidence_names.h: what a person reads in place of a finding's evidence keys: a plain
 * name, a unit and a one-line meaning for every key of analyzer/model/evidence_keys.h.
 * summary.json keeps the keys' JSON names; only the HTML and PDF reports show these words.
 */
#ifndef PO_REPORT_EVIDENCE_NAMES_H
#define PO_REPORT_EVIDENCE_NAMES_H

#include <stddef.h>

#include "model/result.h"

/* For a key that does not depend on the finding (and for tests): no finding's override. */
#define PO_EVIDENCE_ANY_FINDING PO_FINDING_ID_COUNT

/* Longest name and unit, with their terminating zero. */
#define PO_EVIDENCE_NAME_MAX 96
#define PO_EVIDENCE_UNIT_MAX 32

/*
 * One key in words. name never carries the unit: the value does ("41.3%", not
 * "share pct: 41.3 %").
 */
struct po_evidence_words {
	char name[PO_EVIDENCE_NAME_MAX];
	char unit[PO_EVIDENCE_UNIT_MAX]; /* "%", "ms/step", "MiB", ...; "" for counts and text */
	const char *meaning;		 /* weak: static text */
};

/*
 * The words for an evidence key, with its parameter, of a finding of that id
 * (PO_EVIDENCE_ANY_FINDING for none). The finding's own words win over the general ones,
 * where a key means something else there (threshold_ms of gpu-idle is the shortest gap
 * counted, of step-outliers the time of a slow step). A parameterised key's number or
 * category's title is put in the name ("Site 2: allocated in", "GPU idle: Data wait"). A
 * key out of range reads "Value", without unit or meaning.
 */
void po_evidence_words(enum po_finding_id finding, enum po_evidence_key key,
		       union po_evidence_param param, struct po_evidence_words *words);

/*
 * The value as a person reads it, with its unit: "41.3%", "12.5 ms/step", "1.64x" (with a
 * multiplication sign), "2", "load". Numbers that are not finite read "n/a"; numbers of
 * 10000 and more are written without an exponent. Text values are cleaned (see
 * po_report_clean) and carry no unit.
 */
void po_evidence_format(const struct po_evidence *evidence, const char *unit, char *out,
			size_t out_size);

/* The table itself, for the test that keeps it in step with the detectors. */
struct po_evidence_entry {
	enum po_finding_id finding; /* PO_EVIDENCE_ANY_FINDING for the general words */
	enum po_evidence_key key;
	const char *name; /* "#" stands for the key's number, "@" for its category's title */
	const char *unit;
	const char *meaning;
};

/* The general words of key; NULL when the table has none (or key is out of range). */
const struct po_evidence_entry *po_evidence_entry_of(enum po_evidence_key key);
/* The findings' own words, in the table's order. */
size_t po_evidence_override_count(void);
const struct po_evidence_entry *po_evidence_override_at(size_t index);

#endif /* PO_REPORT_EVIDENCE_NAMES_H */
