/*
 * json.h
 *		The one byte buffer and the one JSON helper set of libmnemo, used by
 *		every room that reads or writes JSON text (store/, stream/,
 *		transcript/, chat/).
 *
 * JSON values a user wrote travel as text (mn_span), cut out of their input
 * and pasted into what is sent, never through json-c's numbers, which turn
 * an integer beyond 64 bits into another number.  json-c objects are read
 * through the mn_js_* getters.
 */
#ifndef MNEMO_JSON_H
#define MNEMO_JSON_H

#include "core/core.h"

struct json_object;

/* ---- the buffer (buf.c) ---- */

/*
 * A growable buffer.  A failed growth sets oom and every later write does
 * nothing, so a writer checks once, at the end.
 */
typedef struct mn_buf
{
	char	   *data;			/* NUL-terminated when len > 0 */
	size_t		len;
	size_t		cap;
	bool		oom;
} mn_buf;

/* false once out of memory */
bool		mn_buf_put(mn_buf *b, const char *s, size_t len);
void		mn_buf_puts(mn_buf *b, const char *s);
void		mn_buf_put_i64(mn_buf *b, int64_t v);

/* The shortest decimal that reads back as v ('.' whatever the locale);
 * v must be finite. */
void		mn_buf_put_double(mn_buf *b, double v);

/* s as a JSON string literal, escaped the way PostgreSQL prints jsonb. */
void		mn_buf_put_jstr(mn_buf *b, const char *s, size_t len);
void		mn_buf_reset(mn_buf *b);
void		mn_buf_free(mn_buf *b);

/* ---- the walker (json.c) ---- */

/* A piece of a JSON text that json-c (or the server) has already accepted. */
typedef struct mn_span
{
	const char *p;
	size_t		len;
} mn_span;

/*
 * Walk the members of the object (or the elements of the array) at span:
 * *pos starts at 0; each call gives the next key (the quoted token, for
 * mn_json_key_is) and value, false at the end.
 */
bool		mn_json_next_member(mn_span obj, size_t *pos, mn_span *key, mn_span *value);
bool		mn_json_next_element(mn_span arr, size_t *pos, mn_span *value);

/*
 * Whether jsonb keeps the key order of the value at s: in every object its
 * keys shorter first, then bytewise, none repeated, as jsonb stores them
 * (a key with an escape counts as out of order).  Where it does not, the
 * text as written is what keeps the order (a tool part's "input_text").
 */
bool		mn_json_jsonb_order(mn_span s);

/* Whether the quoted key token means name (escapes decoded). */
bool		mn_json_key_is(mn_span key, const char *name);

/* The value of the last member named key (json-c keeps the last of a
 * repeated key too); false when there is none. */
bool		mn_json_member(mn_span obj, const char *key, mn_span *value);

/* The index-th element of the array; false when there is none. */
bool		mn_json_element(mn_span arr, size_t index, mn_span *value);

/*
 * Whether s holds one JSON value (RFC 8259), so that the walker can trust
 * its structure and PostgreSQL takes it as json: strings terminated, with
 * no raw control character and only the grammar's escapes; brackets
 * matched, members "key": value, commas between items; numbers and
 * literals as the grammar spells them; nothing after the value.  For text
 * no parser has accepted (the server's jsonb output), and after json-c's
 * strict mode, which lets through single-quoted keys, NaN, Infinity, "1."
 * and raw control characters in strings.
 */
bool		mn_json_well_formed(mn_span s);

/*
 * The decoded text of the JSON string token s (quotes included), malloc'd;
 * \u0000 and lone surrogates are malformed, as PostgreSQL's text cannot hold
 * them.  NULL when *malformed, or else when out of memory.
 */
char	   *mn_json_unescape(mn_span s, bool *malformed);

/*
 * mnemo's one policy for what PostgreSQL's text cannot hold (doc/wire-
 * formats.md): a NUL character becomes U+FFFD, as chat does with a NUL in a
 * streamed delta.  This applies it to JSON text in place: each \u0000
 * escape and each lone surrogate escape is rewritten as \ufffd (the same
 * length).  Returns how many were.
 */
size_t		mn_json_scrub(char *s, size_t len);

/* ---- json-c objects (json.c) ---- */

/* The member key of obj as a string (NULL when absent, null or not a
 * string); *len (may be NULL) gets its length. */
const char *mn_js_str(struct json_object *obj, const char *key, size_t *len);

/* The member as an object / array (NULL when absent or another type). */
struct json_object *mn_js_obj(struct json_object *obj, const char *key);
struct json_object *mn_js_arr(struct json_object *obj, const char *key);

/* An integer member (a JSON number with no fraction, in int64 range);
 * false when absent or not one. */
bool		mn_js_int(struct json_object *obj, const char *key, int64_t *out);

/* A usage count: an integer member clamped at 0, -1 (keep the last) when
 * absent or not an integer. */
int64_t		mn_js_count(struct json_object *obj, const char *key);

/* A member as text: a string as is, a number in decimal, NULL for absent,
 * null or anything else; malloc'd, or NULL (also when out of memory). */
char	   *mn_js_text(struct json_object *obj, const char *key);

#endif							/* MNEMO_JSON_H */
