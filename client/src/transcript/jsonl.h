/*
 * jsonl.h
 *		What the JSONL transcript files of libmnemo share: export.c,
 *		import.c (the driver and the reader of mnemo's own export),
 *		claude_code.c (the reader of Claude Code session logs) and
 *		jsonl_text.c (JSON text in and out).
 *
 * JSON values that the user wrote (part contents, tool inputs) travel as
 * text, cut out of the input line and pasted into what is sent, never
 * through json-c's numbers: json-c turns an integer beyond 64 bits into
 * another number, and an import must store what the file says.  json-c
 * parses every line first, so the cutting below only ever walks valid JSON.
 */
#ifndef MNEMO_JSONL_H
#define MNEMO_JSONL_H

#include "internal.h"

struct json_object;

/* ---- JSON text (jsonl_text.c) ---- */

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

/* A piece of a JSON text that json-c has already accepted. */
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

/* Whether the quoted key token means name (escapes decoded). */
bool		mn_json_key_is(mn_span key, const char *name);

/* The value of the last member named key (json-c keeps the last of a
 * repeated key too); false when there is none. */
bool		mn_json_member(mn_span obj, const char *key, mn_span *value);

/* The index-th element of the array; false when there is none. */
bool		mn_json_element(mn_span arr, size_t index, mn_span *value);

/* Whether s[0..len) is valid UTF-8 (PostgreSQL refuses anything else). */
bool		mn_utf8_valid(const char *s, size_t len);

/* ---- the import (import.c) ---- */

/* Roll back the transaction after a failure and return the failure's code,
 * keeping its message and SQLSTATE rather than the rollback's. */
int			mn_jsonl_rollback(mnemo_store *st);

/* A part being built: the members of its JSON object, without the braces. */
typedef struct mn_import_part
{
	mn_buf		members;
	const char *tool_state;		/* a constant, written after the members;
								 * or NULL */
	char	   *id;				/* its id when the input names one */
	int64_t		compacted_at;	/* status columns, restored after the */
	int64_t		started_at;		/* append by update_part_status; 0: none */
	int64_t		completed_at;
} mn_import_part;

/* A message being built. */
typedef struct mn_import_msg
{
	int64_t		line;			/* where it starts in the input */
	char	   *role;
	char	   *id;				/* NULL: the server makes one */
	char	   *agent;			/* NULL: the session's */
	char	   *model_id;
	char	   *provider_id;
	char	   *run_id;
	bool		is_summary;
	bool		has_tokens;		/* restored by update_message_tokens */
	mnemo_tokens tokens;
	double		cost;			/* < 0: none */
	char	   *finish_reason;
	size_t		n_parts;
	size_t		cap_parts;
	mn_import_part *parts;		/* may move as parts are added: refer to
								 * parts by index */
	char		ref_id[MNEMO_ID_MAX + 1];	/* its id, once appended */
} mn_import_msg;

typedef struct mn_import mn_import;

/* A format: called for each non-empty line, parsed, in order. */
typedef struct mn_reader
{
	const char *name;
	void	   *(*create) (void);	/* NULL: out of memory */
	int			(*line) (mn_import *imp, void *state, int64_t lineno,
						 const char *text, size_t len, struct json_object *obj);
	/* end of input: push what is held back */
	int			(*finish) (mn_import *imp, void *state);
	/* m was appended (m->ref_id is set) and is about to be freed */
	int			(*sent) (mn_import *imp, void *state, const mn_import_msg *m);
	void		(*destroy) (void *state);
} mn_reader;

/* What the session is made of, filled in by the reader before the first
 * batch is sent (the session is created then).  All malloc'd or NULL. */
typedef struct mn_import_session
{
	char	   *want_id;		/* the transcript's own id, used if free */
	char	   *model_id;
	char	   *provider_id;
	char	   *agent;
	char	   *title;
	char	   *metadata;		/* JSON object text */
} mn_import_session;

struct mn_import
{
	mnemo_store *st;
	const mnemo_import_options *opts;
	bool		new_ids;		/* leave out the input's message/part ids */
	mn_import_session session;
	char		session_id[MNEMO_ID_MAX + 1];	/* once created */
	bool		began;			/* BEGIN sent */
	bool		created;

	mn_import_msg **batch;		/* pushed, not yet sent */
	size_t		n_batch;
	size_t		cap_batch;
	size_t		batch_bytes;	/* rough size of what the batch will send */
	mn_buf		text;			/* the batch's JSON, reused */

	const mn_reader *reader;
	void	   *rstate;
	int64_t		imported;
	uint64_t	done;			/* bytes read */
	uint64_t	total;			/* of the file, 0 when unknown */
};

mn_import_msg *mn_import_msg_new(mn_import *imp, int64_t line, const char *role);
void		mn_import_msg_free(mn_import_msg *m);

/* Add a part of the given type ("type" is its first member); NULL with
 * NOMEM set.  The pointer is good until the next part is added. */
mn_import_part *mn_import_part_new(mn_import *imp, mn_import_msg *m, const char *type);

/* Members of a part being built (keys are plain ASCII names). */
void		mn_part_put_string(mn_import_part *p, const char *key, const char *s, size_t len);
void		mn_part_put_raw(mn_import_part *p, const char *key, mn_span value);

/* A malloc'd copy of s (NULL stays NULL); false when out of memory. */
bool		mn_import_strdup(const char *s, char **dst);

/* Hand a finished message to the import (which now owns it); the batch is
 * sent when full.  m is freed on failure too. */
int			mn_import_push(mn_import *imp, mn_import_msg *m);

/* Tell the caller a record was left out (options.skipped). */
void		mn_import_skipped(mn_import *imp, int64_t line, const char *kind);

/* The Claude Code reader (claude_code.c). */
extern const mn_reader mn_claude_code_reader;

/* Whether a first record looks like a Claude Code log line. */
bool		mn_claude_code_detect(struct json_object *obj);

#endif							/* MNEMO_JSONL_H */
