/*
 * text.h: text that comes from a trace (function, file and process names, labels, host
 * names, paths, native symbols) made safe for every output, once, where it enters the
 * analyzer (ingest, symbols, --merge's partial.json).
 *
 * Clean text is valid UTF-8 holding no C0 or C1 control character, no DEL and no Unicode
 * noncharacter (U+FDD0..U+FDEF, U+xFFFE and U+xFFFF of every plane): what a terminal shows
 * as text, what XML 1.0, JSON and Pango take, and what a cut at a character boundary keeps
 * clean. docs/robustness.md ("Text from traces") says what becomes of each bad byte.
 */
#ifndef PO_TEXT_H
#define PO_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* U+FFFD REPLACEMENT CHARACTER, what every bad byte and unshown character becomes. */
#define PO_TEXT_REPLACEMENT "\xef\xbf\xbd"
#define PO_TEXT_REPLACEMENT_BYTES 3
/* The most bytes po_text_clean() writes for len bytes of input (each may become U+FFFD). */
#define PO_TEXT_CLEAN_BYTES_MAX(len) ((len)*PO_TEXT_REPLACEMENT_BYTES)

/*
 * The length (1 to 4) of the well-formed UTF-8 sequence at the start of text (avail bytes,
 * avail > 0), with its code point in *code_point; 0 when it is ill-formed: a stray
 * continuation byte, a lead byte C0, C1 or F5..FF, a sequence cut short, an overlong
 * encoding, a surrogate (U+D800..U+DFFF) or a value above U+10FFFF.
 */
size_t po_text_decode(const unsigned char *text, size_t avail, uint32_t *code_point);

/* Whether a code point stays as it is in clean text (not a control, DEL or noncharacter). */
bool po_text_is_shown(uint32_t code_point);

/* Whether text (len bytes) is clean already, so that po_text_clean() would copy it as is. */
bool po_text_is_clean(const char *text, size_t len);

/*
 * Writes the clean form of text (len bytes; NULL when len is 0) to out and a NUL after it;
 * returns the bytes written before the NUL. Each byte that starts no well-formed sequence
 * becomes U+FFFD, and so does each (whole) control character, DEL and noncharacter. When out_size
 * cannot take it all, the text is cut before the first character that does not fit (never
 * inside one) and *cut (when not NULL) is set; otherwise *cut is cleared. out_size >= 1.
 */
size_t po_text_clean(const char *text, size_t len, char *out, size_t out_size, bool *cut);

/*
 * The length of the longest start of text (len bytes) of at most max_bytes that ends at a
 * character boundary: an incomplete sequence that a cut at max_bytes (or an earlier cut,
 * such as snprintf()'s) left at the end is dropped whole. For clean text, or text that is
 * clean but for its cut end.
 */
size_t po_text_boundary(const char *text, size_t len, size_t max_bytes);

/*
 * The precision for printf's "%.*s" that prints at most max_bytes of text (NUL-terminated;
 * NULL prints nothing) and cuts it at a character boundary: "%.40s" may cut inside one.
 */
int po_text_precision(const char *text, size_t max_bytes);

struct po_arena;

/* A clean copy of text (NUL-terminated) in arena (owned by it); NULL when out of memory. */
char *po_text_clean_strdup(struct po_arena *arena /* weak */, const char *text);

/* Cuts a NUL-terminated string that a fixed buffer may have cut inside a character. */
void po_text_trim_cut(char *text);

#endif /* PO_TEXT_H */
