/* text.c: the one cleaning of trace text (text.h): valid, printable UTF-8, cut whole. */
#include <limits.h>
#include <string.h>

#include "arena.h"
#include "text.h"

size_t po_text_decode(const unsigned char *text, size_t avail, uint32_t *code_point)
{
	/* The second byte's range narrows for E0, ED, F0 and F4 (Unicode 15, Table 3-7). */
	unsigned char lead = text[0], low = 0x80, high = 0xbf;
	uint32_t value;
	size_t len;

	if (lead < 0x80) {
		*code_point = lead;
		return 1;
	}
	if (lead >= 0xc2 && lead <= 0xdf) {
		len = 2;
		value = lead & 0x1f;
	} else if (lead >= 0xe0 && lead <= 0xef) {
		len = 3;
		value = lead & 0x0f;
		low = lead == 0xe0 ? 0xa0 : 0x80;  /* overlong */
		high = lead == 0xed ? 0x9f : 0xbf; /* surrogates */
	} else if (lead >= 0xf0 && lead <= 0xf4) {
		len = 4;
		value = lead & 0x07;
		low = lead == 0xf0 ? 0x90 : 0x80;  /* overlong */
		high = lead == 0xf4 ? 0x8f : 0xbf; /* above U+10FFFF */
	} else {
		return 0; /* a continuation byte, C0, C1 or F5..FF */
	}
	if (avail < len || text[1] < low || text[1] > high)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if (i > 1 && (text[i] < 0x80 || text[i] > 0xbf))
			return 0;
		value = (value << 6) | (text[i] & 0x3f);
	}
	*code_point = value;
	return len;
}

bool po_text_is_shown(uint32_t code_point)
{
	if (code_point < 0x20 || (code_point >= 0x7f && code_point <= 0x9f))
		return false; /* C0, DEL, C1 */
	if (code_point >= 0xfdd0 && code_point <= 0xfdef)
		return false;
	return (code_point & 0xfffe) != 0xfffe; /* U+xFFFE, U+xFFFF */
}

/*
 * The length of the character at text (avail > 0 bytes); *shown is false where U+FFFD
 * replaces it: one byte that starts no well-formed sequence, or a whole well-formed one
 * that is a control character or a noncharacter.
 */
static size_t next_character(const unsigned char *text, size_t avail, bool *shown)
{
	uint32_t code_point;
	size_t len = po_text_decode(text, avail, &code_point);

	*shown = len && po_text_is_shown(code_point);
	return len ? len : 1;
}

bool po_text_is_clean(const char *text, size_t len)
{
	const unsigned char *cursor = (const unsigned char *)text;
	size_t i = 0;

	while (i < len) {
		bool shown;

		if (cursor[i] >= 0x20 && cursor[i] < 0x7f) { /* printable ASCII: most text */
			i++;
			continue;
		}
		i += next_character(cursor + i, len - i, &shown);
		if (!shown)
			return false;
	}
	return true;
}

size_t po_text_clean(const char *text, size_t len, char *out, size_t out_size, bool *cut)
{
	const unsigned char *cursor = (const unsigned char *)text;
	size_t used = 0, i = 0;
	bool was_cut = false;

	while (i < len) {
		bool shown;
		size_t step = next_character(cursor + i, len - i, &shown);
		const char *bytes = shown ? text + i : PO_TEXT_REPLACEMENT;
		size_t byte_count = shown ? step : PO_TEXT_REPLACEMENT_BYTES;

		if (used + byte_count >= out_size) {
			was_cut = true;
			break;
		}
		memcpy(out + used, bytes, byte_count);
		used += byte_count;
		i += step;
	}
	out[used] = '\0';
	if (cut)
		*cut = was_cut;
	return used;
}

size_t po_text_boundary(const char *text, size_t len, size_t max_bytes)
{
	const unsigned char *bytes = (const unsigned char *)text;
	size_t end = len < max_bytes ? len : max_bytes;
	size_t start = end;
	size_t expected;

	/* The last character's first byte: at most three continuation bytes back. */
	while (start > 0 && end - start < 4 && (bytes[start - 1] & 0xc0) == 0x80)
		start--;
	if (start == 0 || bytes[start - 1] < 0xc0)
		return end; /* ends with ASCII or with continuation bytes of no lead */
	start--;
	expected = bytes[start] >= 0xf0 ? 4 : bytes[start] >= 0xe0 ? 3 : 2;
	return end - start < expected ? start : end;
}

void po_text_trim_cut(char *text)
{
	size_t len = strlen(text);

	text[po_text_boundary(text, len, len)] = '\0';
}

int po_text_precision(const char *text, size_t max_bytes)
{
	size_t len = 0;
	size_t kept;

	while (text && len <= max_bytes && text[len])
		len++;
	kept = text ? po_text_boundary(text, len, max_bytes) : 0;

	return kept > INT_MAX ? INT_MAX : (int)kept;
}

char *po_text_clean_strdup(struct po_arena *arena, const char *text)
{
	size_t len = strlen(text);
	size_t size = PO_TEXT_CLEAN_BYTES_MAX(len) + 1;
	char *copy;

	if (po_text_is_clean(text, len))
		return po_arena_strndup(arena, text, len);
	copy = po_arena_alloc(arena, size);
	if (copy)
		po_text_clean(text, len, copy, size, NULL);
	return copy;
}
