/*
 * transcript.h
 *		Transcripts: mnemo's JSONL export, and the import that reads it
 *		and the session files of other agents.
 *
 * Owns: transcript/ (export.c; import.c, the driver: lines or one JSON
 * document in, records out, one transaction; import_parse.c, the input
 * parsed; import_formats.c, the table of readers and the format chosen;
 * import_sessions.c, the sessions of a file, each ended and the next
 * begun; import_message.c, the messages and parts a reader builds;
 * import_batch.c, the import they are pushed to and the batches it sends;
 * import_create.c, the session it creates; import_restore.c, the usage and
 * part times written after an append; import_summary.c, compactions
 * restored; import_checkpoints.c, checkpoints; import_update.c, a
 * transcript read again; iso_time.c, the transcripts' times; tool_calls.c,
 * calls paired with their results and images; anthropic.c, Anthropic
 * content blocks; one reader per format: mnemo_reader.c, claude_code.c
 * (with its claude_code_*.c, sharing claude_code.h), pi.c,
 * messages_reader.c (OpenAI and Anthropic message lists), swe_agent.c,
 * openhands.c, codex.c; pi_tree.c, pi's branches).
 * May call: store/, events/, core/.
 *
 * A reader is an mn_reader: the driver hands it every record (a line of
 * JSON Lines, an element of a JSON array, or an element of the array a
 * session document holds, such as SWE-agent's "history") and it pushes the
 * messages it builds through the mn_import_* functions below.
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

#include <stdio.h>
#include <sys/types.h>

#include "core/json.h"
#include "store/store.h"

struct json_object;
struct json_tokener;

/* The first line of mnemo's export and the lines of its checkpoints
 * (export.c, mnemo_reader.c). */
#define MNEMO_SESSION_HEADER "mnemo.session"
#define MNEMO_SESSION_HEADER_VERSION 2	/* 2: "parent_id", written only
											 * when set (else 1) */
#define MNEMO_CHECKPOINT_LINE "mnemo.checkpoint"

/* ---- the import (import.c and the import_*.c) ---- */

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
	int64_t		created_at;		/* ms since the epoch; 0: the server's now */
	mn_buf		meta;			/* members of what the format has and mnemo
								 * has no field for: kept as the first
								 * part's "metadata" (an empty text part is
								 * added when the message has none) */
	bool		in_flight;		/* sent, its result not read yet: no longer
								 * to be changed */
	char		ref_id[MNEMO_ID_MAX + 1];	/* its id, once appended */
	int64_t		seq;			/* and its seq */
} mn_import_msg;

typedef struct mn_import mn_import;
typedef struct mn_import_cp mn_import_cp;
typedef struct mn_tree mn_tree;

/* A session of a file of several, stored and not yet reported. */
typedef struct mn_import_done
{
	char		id[MNEMO_ID_MAX + 1];
	bool		resumed;		/* there before: messages are the new ones */
	int64_t		messages;
	int64_t		line;			/* where its session document began */
} mn_import_done;

/* A format: called for each record, parsed, in order. */
typedef struct mn_reader
{
	const char *name;
	/* whether the first record (or the document object), a JSON object, is
	 * of this format */
	bool		(*detect) (struct json_object *first);
	/* NULL, or for each top-level object (a line, the document, or an
	 * element of a top-level array): the member holding an array of records
	 * when the object is a session document (each document after the first
	 * begins a new session), "" when it begins a session whose records
	 * follow it, itself the first (a mnemo header line), or NULL when it is
	 * a record itself */
	const char *(*document) (struct json_object *obj);
	/* NULL, or called for each session document before its records: its
	 * other members describe the session */
	int			(*open) (mn_import *imp, void *state, int64_t lineno,
						 struct json_object *obj, mn_span text);
	void	   *(*create) (void);	/* NULL: out of memory */
	int			(*line) (mn_import *imp, void *state, int64_t lineno,
						 const char *text, size_t len, struct json_object *obj);
	/* end of input: push what is held back */
	int			(*finish) (mn_import *imp, void *state);
	/* m was appended (m->ref_id is set) and is about to be freed */
	int			(*sent) (mn_import *imp, void *state, const mn_import_msg *m);
	void		(*destroy) (void *state);
	/* NULL, or called once the file's last session is stored (with its
	 * state): the sessions of other records or files that belong to it
	 * (Claude Code's sub-agents), each made by mn_import_child */
	int			(*children) (mn_import *imp, void *state);
	/* NULL (detect), or whether the first record has what only this format
	 * has: a --format that names another format is warned of when this
	 * says so (a catch-all detect, OpenAI's "any role", would always) */
	bool		(*distinct) (struct json_object *first);
} mn_reader;

/* What the session is made of, filled in by the reader before the first
 * batch is sent (the session is created then).  All malloc'd or NULL. */
typedef struct mn_import_session
{
	char	   *want_id;		/* the transcript's own id, used if free */
	char	   *parent_id;		/* a child's (a sub-agent's) parent, when it
								 * exists */
	bool		derived_id;		/* want_id is made of the parent's: a child
								 * takes it under --session and --new-ids */
	char	   *model_id;
	char	   *provider_id;
	char	   *agent;
	char	   *title;
	char	   *system_prompt;
	char	   *metadata;		/* JSON object text */
	char	   *state;			/* JSON object text, restored by update_state */
	int64_t		created_at;		/* 0: the first message's time, else now */
	bool		header;			/* a mnemo session header was read: the
								 * session is worth importing empty */
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
	mn_import_msg **flight;		/* sent, result not read yet (at most one
								 * batch) */
	size_t		n_flight;
	size_t		cap_flight;
	bool		flight_open;	/* its result is still to be read */
	mn_buf		text;			/* the batch's JSON, reused */

	/* checkpoints read, restored by one statement at the end */
	mn_buf		checkpoints;	/* the elements of a JSON array */
	struct mn_import_cp
	{
		int64_t		line;
		char	   *label;
	}		   *cps;			/* each one's line and label, for errors */
	size_t		n_checkpoints;

	const mn_reader *reader;
	bool		format_checked; /* --format's reader weighed against the
								 * content */
	void	   *rstate;
	int			documents;		/* session documents opened (reader open) */
	mn_import_done *finished;	/* the sessions stored, reported after the
								 * commit */
	size_t		n_finished;
	int64_t		session_line;	/* where its session document began */
	int64_t		imported;		/* messages of this session */
	/* options.update: the session was there, read again (import_update.c) */
	bool		resumed;
	struct mnemo_messages *stored;	/* its messages, while some are not
									 * matched yet */
	size_t		n_matched;		/* the pushes matched to them */
	int64_t		records;		/* handed to the reader */
	int64_t		left_out;		/* records and blocks mn_import_skipped */
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

/* ,"key":"value" appended to the JSON object being written in b, when
 * value is set. */
void		mn_import_put_field(mn_buf *b, const char *key, const char *value);

/* A malloc'd copy of s (NULL stays NULL); false when out of memory. */
bool		mn_import_strdup(const char *s, char **dst);

/* Fail with NOMEM ("out of memory"); returns its code. */
int			mn_import_oom(mn_import *imp);

/* Hand a finished message to the import (which now owns it); the batch is
 * sent when full.  m is freed on failure too. */
int			mn_import_push(mn_import *imp, mn_import_msg *m);

/* A compaction summary of a mnemo export, as its compaction_marker says. */
typedef struct mn_import_summary
{
	const char *text;			/* the summary's text */
	int			token_count;
	const char *kind;			/* "leaf" or "condensed" */
	int			level;
	int64_t		seq_start;		/* the span of messages underneath */
	int64_t		seq_end;
	int64_t		item_count;		/* the context items it replaced; < 0:
								 * those of the span in context now */
	mn_span		metadata;		/* its text part's metadata object as
								 * exported, or {NULL, 0}: the message's
								 * meta (what the reader kept) */
} mn_import_summary;

/*
 * Restore summary message m (which the import now owns) as the compaction
 * it was: commit_summary over the context items of its span, so the
 * summary is back in context, the items it covers out of it, and the DAG
 * node and edges written.  When the context does not hold exactly the items
 * the marker counts, m is appended as a plain summary message instead (and
 * reported through options.unrestored).
 */
int			mn_import_summary_push(mn_import *imp, mn_import_msg *m, const mn_import_summary *sum);

/*
 * Another agent's compaction (pi's compaction records, Claude Code's compact
 * summaries): its summary, the JSON string text (raw, as written; decoded,
 * summary), committed at created_at as a leaf summary over the messages of
 * seqs 1 .. seq_end still in context (mn_import_summary_push).  When rec is
 * set (rec_text its JSON), its members not in known are kept in the
 * summary's metadata.
 */
int			mn_import_compaction(mn_import *imp, int64_t line, int64_t created_at, mn_span raw,
								 const char *summary, int64_t seq_end, struct json_object *rec,
								 mn_span rec_text, const char *const *known);

/*
 * A branch of the transcript (pi's tree): the session read so far is
 * stored, and the records pushed from now on go to a fork of session
 * source (stored before, in this import) at seq at (fork_session), made in
 * the same transaction and reported after it as a session of the file
 * (options.session; a reader calls this only when it is set).  line is
 * where the branch begins.
 */
int			mn_import_fork(mn_import *imp, int64_t line, const char *source, int64_t at);

/*
 * A child session of parent_id (stored before, in this import): read from
 * the file path (NULL: from the held records idx[0 .. n-1] of held) with a
 * fresh state of the import's reader, and stored, in the same transaction,
 * reported after the commit as a session of the file.  The reader sees
 * imp->session.parent_id set.  An error names path.
 */
int			mn_import_child(mn_import *imp, const char *parent_id, const char *path,
							const mn_tree *held, const size_t *idx, size_t n);

/* Tell the caller a record was left out (options.skipped): something the
 * reader did not understand, which counts towards "left out most records"
 * (an import that leaves out more than half of its records fails). */
void		mn_import_skipped(mn_import *imp, int64_t line, const char *kind);

/* A record that the format itself marks as bookkeeping (Claude Code's
 * progress lines, pi's thinking-level changes): reported like a skipped
 * one, but it does not count as a record lost. */
void		mn_import_bookkeeping(mn_import *imp, int64_t line, const char *kind);

/* A \u0000 or lone surrogate escape at line, made U+FFFD to be stored
 * (options.replaced): a change, not a record left out. */
void		mn_import_replaced(mn_import *imp, int64_t line);

/* Keep a member the format has and mnemo has no field for in the message's
 * metadata (see mn_import_msg.meta) and report it as kind (options.kept;
 * NULL: the key). */
void		mn_import_keep(mn_import *imp, mn_import_msg *m, const char *key, mn_span value,
						   const char *kind);

/* mn_import_keep for each member of obj (text: its JSON) whose key is not
 * in known (NULL-terminated). */
void		mn_import_keep_others(mn_import *imp, mn_import_msg *m, struct json_object *obj,
								  mn_span text, const char *const *known);

/* The members of obj whose keys are not in known (NULL-terminated), as a
 * JSON object's text appended to out (nothing when there are none). */
void		mn_import_others(struct json_object *obj, mn_span text, const char *const *known,
							 mn_buf *out);

/* A reader's document callback for formats whose session document holds
 * its records in "history" (a SWE-agent trajectory, an OpenHands run). */
const char *mn_history_document(struct json_object *obj);

/* The session's metadata: {"source": source} and the members of obj
 * (a session document) whose keys are not in known (NULL-terminated). */
int			mn_import_session_meta(mn_import *imp, struct json_object *obj, mn_span text,
								   const char *source, const char *const *known);

/* An ISO 8601 time ("2025-11-20T23:33:50.805Z", an offset, or none: UTC)
 * as ms since the epoch; 0 when s is NULL or not one. */
int64_t		mn_import_iso_time(const char *s);

/* Send what is pushed and not sent yet (creating the session first when
 * no batch was sent) and wait until all of it is stored; MNEMO_OK or the
 * error, set on the handle.  After it, statements may run. */
int			mn_import_flush(mn_import *imp);

/* Wait for the batch in flight, if any, and finish it (ids, usage, the
 * reader's sent()); needed before any other statement runs. */
int			mn_import_drain(mn_import *imp);

/* On failure: the result of a batch in flight read and dropped (the
 * handle's error kept), its messages freed. */
void		mn_import_abandon(mn_import *imp);

/* A checkpoint at the end of what was pushed so far (label already checked
 * to be an id); created_at 0: the time of the import. */
int			mn_import_checkpoint(mn_import *imp, int64_t line, const char *label, bool is_auto,
								 int64_t created_at);

/* After the last flush: the checkpoints restored, in one statement. */
int			mn_import_checkpoints_flush(mn_import *imp);

/* The checkpoints gathered forgotten (a session restored, or the import
 * over). */
void		mn_import_checkpoints_reset(mn_import *imp);

/* The handle's error (its message from offset skip on) as code, led by the
 * line it is about, its SQLSTATE kept; returns code. */
int			mn_import_at_line(mnemo_store *st, int code, int64_t line, size_t skip);

/* Start the import's transaction, if not begun, and create its session
 * (or, options.update, take the one of the transcript's id, made before)
 * from imp->session: import_create.c, when the first batch is ready. */
int			mn_import_begin(mn_import *imp);

/* What append_messages leaves out of the n messages appended (their ref_id
 * set): their usage, finish reason and part times, written after it
 * (update_message_tokens, update_part_status): import_restore.c. */
int			mn_import_restore(mn_import *imp, mn_import_msg *const *ms, size_t n);

/* ---- the driver's parts: the input parsed (import_parse.c), the format
 * chosen (import_formats.c), the sessions of the file (import_sessions.c) ---- */

/* Whether s holds nothing but white space. */
bool		mn_import_blank(const char *s, size_t len);

/* Whether nothing but blank lines is left in in (read to find out; a read
 * error ends it too, and shows in ferror). */
bool		mn_import_rest_is_blank(FILE *in, char **line, size_t *cap);

/* A UTF-8 byte order mark at the start of the first line dropped. */
void		mn_import_skip_bom(char *line, ssize_t *n);

/* What the first line says the file is when it is not UTF-8 text
 * (compressed, UTF-16), as a message, or NULL. */
const char *mn_import_not_text(const char *line, ssize_t n);

/* The newlines from from up to to. */
int64_t		mn_import_newlines(const char *from, const char *to);

/* text (which starts on line lineno) parsed strictly as one JSON value into
 * *out; *incomplete when it is cut short (a document's first line, or a
 * truncated last one). */
int			mn_import_parse_value(mn_import *imp, struct json_tokener *tok, int64_t lineno,
								  const char *text, size_t len, struct json_object **out,
								  bool *incomplete);

/* The reader options.format names, before anything is read. */
int			mn_import_named_reader(mn_import *imp, const char *name);

/* The reader of the first value (an object, or an array's first element),
 * or FORMAT. */
int			mn_import_detect(mn_import *imp, int64_t lineno, struct json_object *obj);

/* The first value weighed against the reader options.format named: a
 * warning when it reads as another format. */
void		mn_import_check_named(mn_import *imp, int64_t lineno, struct json_object *obj);

/* The end of the session's records: the reader finished, the session
 * judged, stored and set aside to be reported (several: the file holds
 * more than this one). */
int			mn_import_finish_session(mn_import *imp, bool several);

/* The session document at lineno begins a second session of the file:
 * the one before finished, and the import afresh. */
int			mn_import_next_session(mn_import *imp, int64_t lineno);

/* What the import holds of the session (what it is made of, its id, its
 * counts, checkpoints and stored messages) forgotten. */
void		mn_import_session_reset(mn_import *imp);

/* ---- a transcript read again (import_update.c) ---- */

/* The session (imp->session_id) exists: its messages are read, the pushes
 * to come matched to them first. */
int			mn_import_update_open(mn_import *imp);
void		mn_import_update_close(mn_import *imp);

/* Whether a stored message is still to be matched. */
bool		mn_import_update_pending(const mn_import *imp);

/* m (which the import now owns) is the next stored message: its ids taken,
 * the results it has that the stored parts wait for written, the reader
 * told (sent), m freed. */
int			mn_import_update_match(mn_import *imp, mn_import_msg *m);

/* ---- tool calls paired with their results (tool_calls.c) ---- */

typedef struct mn_pending_call mn_pending_call;

/* The calls of a transcript still waiting for their results. */
typedef struct mn_calls
{
	mn_pending_call *items;
	size_t		n;
	size_t		cap;
} mn_calls;

/* Remember that part index part of m (pushed or about to be) is call_id. */
int			mn_calls_remember(mn_import *imp, mn_calls *calls, const char *call_id,
							  mn_import_msg *m, size_t part);

/* The call remembered last is also answered by alias (a format that names
 * a call by two keys: OpenHands' event id and its tool_call_metadata's). */
int			mn_calls_alias(mn_import *imp, mn_calls *calls, const char *alias);

/* Whether call_id (or an alias) waits for its result. */
bool		mn_calls_waiting(const mn_calls *calls, const char *call_id);

/*
 * The result of call_id (NULL: the oldest call still waiting), at time at
 * (ms; 0: unknown), which becomes the part's completed_at: output is
 * a JSON value's text (a string goes to "output", or with is_error to
 * "error_message"; anything else to "output" as it is).  The result
 * completes the call's tool part, before or after its message was sent; a
 * result for no known call becomes a "tool" message of its own (tool_name
 * name, or "unknown").  meta (may be empty) is kept as the part's
 * "metadata" when its message is not sent yet.
 */
int			mn_calls_result(mn_import *imp, mn_calls *calls, int64_t line, const char *call_id,
							const char *name, bool is_error, int64_t at, mn_span output, mn_span meta);

/* For the reader's sent callback: m was appended. */
int			mn_calls_sent(mn_import *imp, mn_calls *calls, const mn_import_msg *m);
void		mn_calls_free(mn_calls *calls);

/* A tool part of m: tool_name, tool_call_id and the input object's text
 * (empty: none); the call is remembered.  NULL with the error set. */
mn_import_part *mn_import_tool_call(mn_import *imp, mn_calls *calls, mn_import_msg *m,
									const char *name, const char *call_id, mn_span input);

/* An image as a part of m: media_type (may be NULL) and either base64 data
 * or a URL (the other NULL). */
int			mn_import_image(mn_import *imp, mn_import_msg *m, const char *media_type,
							const char *data, size_t data_len, const char *url);

/* ---- Anthropic content blocks (anthropic.c), for every format built on
 * the Messages API ---- */

/* One block of a user turn into m (created on the first block that is not
 * a tool result; *m may be NULL): text, image, tool_result (result_meta, may
 * be empty, kept as the completed part's metadata); others kept. */
int			mn_anthropic_user_block(mn_import *imp, mn_calls *calls, int64_t line, size_t i,
									struct json_object *block, mn_span block_text,
									mn_span result_meta, mn_import_msg **m);

/* One block of an assistant turn into m: text, thinking (with its
 * signature), redacted_thinking, tool_use; others kept. */
int			mn_anthropic_assistant_block(mn_import *imp, mn_calls *calls, int64_t line, size_t i,
										 struct json_object *block, mn_span block_text,
										 mn_import_msg *m);

/* ---- records held until the log's end (pi_tree.c): pi's session tree,
 * Claude Code's inline sidechains ---- */

/* A record held until the log's end. */
typedef struct mn_tree_rec
{
	int64_t		line;
	char	   *text;			/* its JSON, a copy */
	size_t		len;
	struct json_object *obj;	/* a reference held */
	char	   *id;				/* or NULL */
	char	   *parent;			/* parentId, or NULL */
	ssize_t		parent_of;		/* its parent's index; -1: a root */
	size_t		children;
	bool		active;			/* on the active branch */
} mn_tree_rec;

struct mn_tree
{
	mn_tree_rec *recs;			/* in file order */
	size_t		n;
	size_t		cap;
};

int			mn_tree_hold(mn_import *imp, mn_tree *t, int64_t line, const char *text, size_t len,
						 struct json_object *obj);
void		mn_tree_free(mn_tree *t);

/* Every record's parent and children, and which are on the active branch:
 * the path to the last record that has an id (all of them when none has). */
void		mn_tree_mark(mn_tree *t);

/* The branch a leaf off the active branch ends: its records off the active
 * branch, root first, in out (room for t->n); *from the active record it
 * leaves from (-1: it shares no record with the active branch). */
size_t		mn_tree_branch(const mn_tree *t, size_t leaf, size_t *out, ssize_t *from);

/* ---- a chat message list's record (messages_reader.c), shared with
 * swe_agent.c; the state is an mn_calls ---- */
void	   *mn_chat_create(void);
void		mn_chat_destroy(void *state);
int			mn_chat_sent(mn_import *imp, void *state, const mn_import_msg *m);
int			mn_chat_line(mn_import *imp, void *state, int64_t line, const char *text, size_t len,
						 struct json_object *obj);

/* The readers; import_formats.c lists them. */
extern const mn_reader mn_mnemo_reader;
extern const mn_reader mn_claude_code_reader;
extern const mn_reader mn_pi_reader;
extern const mn_reader mn_openai_reader;
extern const mn_reader mn_anthropic_reader;
extern const mn_reader mn_swe_agent_reader;
extern const mn_reader mn_openhands_reader;
extern const mn_reader mn_codex_reader;

#endif							/* MNEMO_TRANSCRIPT_H */
