/*
 * transcript.h
 *		Transcripts: mnemo's JSONL export, and the import that reads it
 *		and Claude Code session logs.
 *
 * Owns: transcript/ (export.c; import.c, the driver: lines in, format
 * detected, one transaction; import_batch.c, the builder a reader pushes
 * messages to and the batches it sends; mnemo_reader.c and claude_code.c,
 * one reader each).
 * May call: store/, events/, core/.
 *
 * A reader is an mn_reader: the driver hands it every parsed line and it
 * pushes the messages it builds through the mn_import_* functions below.
 * Readers never call each other, and the driver knows them only through its
 * table of readers, so a new format is one file and one line there.
 *
 * JSON values that the user wrote (part contents, tool inputs) travel as
 * text, cut out of the input line and pasted into what is sent, never
 * through json-c's numbers (core/json.h); json-c parses every line first,
 * so the cutting only ever walks valid JSON.
 */
#ifndef MNEMO_TRANSCRIPT_H
#define MNEMO_TRANSCRIPT_H

#include "core/json.h"
#include "store/store.h"

struct json_object;

/* ---- the import (import.c) ---- */

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
	/* whether the first non-empty line, a JSON object, is of this format */
	bool		(*detect) (struct json_object *first);
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

/* Send what is pushed and not sent yet (creating the session first when
 * no batch was sent); MNEMO_OK or the error, set on the handle. */
int			mn_import_flush(mn_import *imp);

/* The readers (mnemo_reader.c, claude_code.c); import.c lists them. */
extern const mn_reader mn_mnemo_reader;
extern const mn_reader mn_claude_code_reader;

#endif							/* MNEMO_TRANSCRIPT_H */
