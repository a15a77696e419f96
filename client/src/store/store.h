/*
 * store.h
 *		The typed wrappers of the SQL API: what store/ shares inside itself
 *		and gives the rooms above it (chat/, transcript/).
 *
 * Owns: store/ (one file per concept of the SQL API: sessions.c,
 * messages.c, parts.c, context.c, summary.c, search.c, files.c, util.c,
 * checkpoints.c, runs.c, pending.c, state.c;
 * and what they share: convert.c and part_json.c, rows to structs; specs.c,
 * specs to JSON; lists.c, results to lists; free.c, releasing rows).
 * May call: core/ and events/ (a write publishes its event after the
 * server answered).  Never calls stream/, chat/ or transcript/.
 */
#ifndef MNEMO_STORE_H
#define MNEMO_STORE_H

#include "core/core.h"

struct json_object;

/*
 * The calls a chat turn batches (chat/), each with the reader of its
 * result.  A builder fills *call in place (see mn_call) and returns
 * MNEMO_OK or the argument error; a reader takes call->res, leaving NULL.
 */
int			mn_message_append_call(mnemo_store *st, const char *session_id,
								   const mnemo_new_message *msg, mn_call *call);
int			mn_message_ref_of(mnemo_store *st, mn_call *call, mnemo_message_ref *ref);
int			mn_message_update_tokens_call(mnemo_store *st, const char *session_id,
										  const char *message_id,
										  const mnemo_tokens *tokens, double cost,
										  const char *finish_reason, mn_call *call);
int			mn_part_append_call(mnemo_store *st, const char *session_id, const char *message_id,
								const mnemo_new_part *part, mn_call *call);
int			mn_context_build_call(mnemo_store *st, const char *session_id, int budget_tokens,
								  mn_call *call);
int			mn_context_of(mnemo_store *st, mn_call *call, mnemo_context **out);
int			mn_context_report_call(mnemo_store *st, const char *session_id, int budget_tokens,
								   mn_call *call);
int			mn_context_report_of(mnemo_store *st, mn_call *call, mnemo_context_budget *out);
/* turn_context: the context within budget_tokens (as mn_context_of), its
 * assistant messages with their parts in context order (id, role and parts
 * only), and the report (as mn_context_report_of), from one assembly. */
int			mn_turn_context_call(mnemo_store *st, const char *session_id, int budget_tokens,
								 mn_call *call);
int			mn_turn_context_of(mnemo_store *st, mn_call *call, mnemo_context **ctx,
							   mnemo_messages **msgs, mnemo_context_budget *report);

/* add_checkpoint (checkpoints.c): the turn's auto checkpoint; the call
 * keeps pointers to session_id and label, which must outlive it. */
int			mn_checkpoint_add_call(mnemo_store *st, const char *session_id, const char *label,
								   bool is_auto, mn_call *call);

/* ---- values (convert.c) ---- */

/* Column getters for a row of a text-format result; name must exist. */
int			mn_col(const PGresult *res, const char *name);
char	   *mn_get_str(const PGresult *res, int row, int col);	/* malloc'd, NULL
																 * for SQL NULL */
int64_t		mn_get_i64(const PGresult *res, int row, int col);	/* 0 for NULL */
bool		mn_get_bool(const PGresult *res, int row, int col);
double		mn_get_f64(const PGresult *res, int row, int col);

/* Column col of row as a malloc'd string in *dst (NULL for SQL NULL); false
 * only when out of memory. */
bool		mn_str_into(const PGresult *res, int row, int col, char **dst);

/* A PostgreSQL text[] literal of the items, malloc'd; NULL if out of memory
 * (the handle's error is then set). */
char	   *mn_text_array(mnemo_store *st, const char *const *items, size_t n);

/*
 * Row converters: fill *out from row `row` of res, whose columns are those of
 * the named SQL row type (looked up by name, so extra columns do no harm).
 * They return MNEMO_OK or set the handle's error (NOMEM, PROTOCOL), leaving
 * *out cleared.
 */
int			mn_session_from_row(mnemo_store *st, const PGresult *res, int row,
								mnemo_session *out);	/* mnemo.sessions */
int			mn_message_from_row(mnemo_store *st, const PGresult *res, int row,
								mnemo_message *out);	/* mnemo.messages, or
														 * message_with_parts:
														 * a "parts" column is
														 * parsed when present */
int			mn_part_from_row(mnemo_store *st, const PGresult *res, int row,
							 mnemo_part *out);	/* mnemo.message_parts */

/* Read a part's stored content (the JSON object text) into part's type,
 * text, tool fields and error message (part_json.c). */
int			mn_part_scan(mnemo_store *st, const char *content, mnemo_part *part);

/*
 * Read a part's stored content as an element of a parts array is read
 * (overlaid), with the status fields the caller already set from the row's
 * columns winning over the content's keys of the same names, as the server's
 * overlay makes them win: id and tool_state when not NULL, the others named
 * in columns (MN_PART_*).  get_messages_flat rows (convert.c).
 */
#define MN_PART_INDEX			0x01
#define MN_PART_TOKEN_ESTIMATE	0x02
#define MN_PART_COMPACTED_AT	0x04
#define MN_PART_STARTED_AT		0x08
#define MN_PART_COMPLETED_AT	0x10
int			mn_part_scan_over(mnemo_store *st, const char *content, unsigned columns,
							  mnemo_part *part);

/* A get_messages_flat result (one row per part beside its message's
 * columns) as messages with their parts (convert.c). */
int			mn_messages_from_flat(mnemo_store *st, const PGresult *res, mnemo_messages **out);

/* message_with_parts rows as messages (messages.c); res is cleared. */
int			mn_messages_from_rows(mnemo_store *st, PGresult *res, mnemo_messages **out);

/* Parse a jsonb array of parts (message_with_parts.parts). */
int			mn_parts_from_json(mnemo_store *st, const char *json, size_t *n,
							   mnemo_part **parts);

/* The part object a spec describes (see mnemo_new_part), or NULL with the
 * handle's error set (INVALID_ARGUMENT, FORMAT, NOMEM). */
struct json_object *mn_part_to_json(mnemo_store *st, const mnemo_new_part *part);

/* The message object of append_messages for a spec, or NULL as above. */
struct json_object *mn_message_to_json(mnemo_store *st, const mnemo_new_message *msg);

/* Release what a struct holds, leaving it zeroed (not the struct itself). */
void		mn_session_clear(mnemo_session *s);
void		mn_part_clear(mnemo_part *p);
void		mn_message_clear(mnemo_message *m);


/* ---- specs as JSON (specs.c) ---- */

/* The JSON array of parts a message spec carries (specs.c), or NULL with
 * the handle's error set (INVALID_ARGUMENT, FORMAT, NOMEM). */
struct json_object *mn_parts_to_json(mnemo_store *st, const mnemo_new_part *parts, size_t n);

/* The compact JSON text of obj, owned by obj; NULL with NOMEM set. */
const char *mn_json_text(mnemo_store *st, struct json_object *obj);

/* ---- parts read back (convert.c, part_json.c) ---- */

/*
 * What mnemo_part.content holds, by where the part was read from (see the
 * head of convert.c):
 *	- a mnemo.message_parts row (mn_part_from_row, mnemo_parts_get): the
 *	  stored jsonb column verbatim, as the server prints it: the object as
 *	  appended, with update_part_status's "output"/"error_message" merged;
 *	- an element of a "parts" array (mn_parts_from_json: message_with_parts,
 *	  expand_summary): that object less the keys the reads lay over it (id,
 *	  part_index, tool_state, compacted_at, started_at, completed_at,
 *	  token_estimate), whose values are in the struct's fields; the other
 *	  members keep the server's text and order, so numbers of any size
 *	  survive.
 * The two differ only for a part appended with one of those keys in its
 * content (mn_part_to_json writes "id" when the spec has one).
 */

/* Set every part's message_id to a copy of message_id: the parts array of
 * message_with_parts does not carry it, so mn_parts_from_json leaves it ""
 * (convert.c; mn_message_from_row calls this itself). */
int			mn_parts_set_message_id(mnemo_store *st, mnemo_part *parts, size_t n,
									const char *message_id);

/* ---- list and row helpers (lists.c) ---- */

/*
 * Start a public call: a NULL handle is INVALID_ARGUMENT (there is nowhere
 * to say more); otherwise the handle's error is cleared and, unless
 * args_ok, INVALID_ARGUMENT is set with the message `required`.
 */
int			mn_begin(mnemo_store *st, bool args_ok, const char *required);

/* Convert row `row` of res into *item (the caller's item type); MNEMO_OK or
 * the error set on the handle, with the item left for its clear function. */
typedef int (*mn_row_fn) (mnemo_store *st, const PGresult *res, int row, void *item);

/*
 * A new zeroed list struct (list_size bytes) for the rows of res, and in
 * *items its zeroed array of item_size-byte items, NULL when there are no
 * rows; the caller stores *items in the list.  NULL when out of memory:
 * res is then cleared and NOMEM set.
 */
void	   *mn_list_alloc(mnemo_store *st, PGresult *res, size_t list_size, size_t item_size,
						  void **items);

/* Fill items from the rows of res with fn, counting each in *count before
 * it is filled so that the list's free function releases a half-filled
 * one; res is cleared.  MNEMO_OK or the first error. */
int			mn_list_fill(mnemo_store *st, PGresult *res, void *items, size_t item_size,
						 size_t *count, mn_row_fn fn);

/*
 * Define `static int name(mnemo_store *st, PGresult *res, list_type **out)`:
 * the rows of res converted by row_fn into a new list_type (a struct of
 * count and items); res is cleared.  A NULL res (mn_exec failed) returns
 * the handle's error; a failed row frees the half-filled list with free_fn
 * and leaves *out alone.  A macro because the list types differ only in
 * their item type, which a function could not name without type punning.
 */
#define MN_LIST_RESULT(name, list_type, row_fn, free_fn) \
static int \
name(mnemo_store *st, PGresult *res, list_type **out) \
{ \
	list_type  *list; \
	void	   *items; \
	int			rc; \
	\
	if (res == NULL) \
		return st->errcode; \
	list = mn_list_alloc(st, res, sizeof(*list), sizeof(*list->items), &items); \
	if (list == NULL) \
		return st->errcode; \
	list->items = items; \
	rc = mn_list_fill(st, res, items, sizeof(*list->items), &list->count, row_fn); \
	if (rc != MNEMO_OK) \
		free_fn(list); \
	else \
		*out = list; \
	return rc; \
}

/*
 * The single row of res converted by fn into a new zeroed struct of size
 * bytes in *out (fn must leave it cleared when it fails); res is cleared,
 * and a NULL res (mn_exec failed) returns the handle's error.
 * Not one row is PROTOCOL ("expected one <what> row").  When key names a
 * column that is NULL (a function returning a NULL composite: nothing
 * found), *out = NULL and MNEMO_OK.
 */
int			mn_row_new(mnemo_store *st, PGresult *res, const char *what, const char *key,
					   size_t size, mn_row_fn fn, void **out);

/* The integer in column col of the single row of res, in *out unless out is
 * NULL; res is cleared (NULL: mn_exec failed, its error is returned).  No
 * row or a NULL value is PROTOCOL with `missing`. */
int			mn_i64_result(mnemo_store *st, PGresult *res, const char *col,
						  const char *missing, int64_t *out);

/* Copy an id the server returned into dst; longer than MNEMO_ID_MAX is
 * PROTOCOL ("<what> id of N bytes"). */
int			mn_id_copy(mnemo_store *st, const char *id, const char *what,
					   char dst[MNEMO_ID_MAX + 1]);

/* The text[] literal of n ids (mn_text_array), or NULL with the error set:
 * a NULL id is INVALID_ARGUMENT ("<what>[i] is NULL"). */
char	   *mn_id_array(mnemo_store *st, const char *const *ids, size_t n, const char *what);


#endif							/* MNEMO_STORE_H */
