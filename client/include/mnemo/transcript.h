/*
 * mnemo/transcript.h
 *		JSONL export and import (mnemo and Claude Code transcripts).
 *
 * A part of the public API: include <mnemo.h>, which includes every part
 * (the conventions of every call are at its head).
 */
#ifndef MNEMO_API_TRANSCRIPT_H
#define MNEMO_API_TRANSCRIPT_H

#include "store.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * JSONL transcripts
 *
 * The export format is mnemo's take on mantis JSONL: one message a line,
 * a JSON object with the message's fields and its parts, keys in a fixed
 * order, so that export(import(export(s))) == export(s) byte for byte.
 * Import also reads the transcripts of other agents (doc/wire-formats.md):
 * Claude Code and pi session logs, OpenAI Chat Completions and Anthropic
 * Messages message lists (a JSON array or JSON Lines), SWE-agent
 * trajectories and OpenHands event streams, and detects the format from
 * the first record.
 * ------------------------------------------------------------------------ */

/* Write the whole session to out: a header line (its fields, state and
 * created time), every message with its parts, and a line for each
 * checkpoint after the message it labels.  Errors:
 * INVALID_ARGUMENT (session_id or out NULL), SESSION_NOT_FOUND, IO (a write
 * failed). */
MNEMO_API int mnemo_export_jsonl(mnemo_store *st, const char *session_id, FILE *out);

/* The same header, then the messages resumes discarded from the session's
 * live line (mnemo_discarded_list), in seq order: what mantis keeps in a
 * sister file.  The same errors. */
MNEMO_API int mnemo_export_discarded_jsonl(mnemo_store *st, const char *session_id, FILE *out);

typedef struct mnemo_import_options
{
	const char *session_id;		/* NULL: the transcript's own, else a new id */
	/* called after each batch: bytes read so far of total (0 if unknown) */
	void		(*progress) (uint64_t done, uint64_t total, void *arg);
	void	   *progress_arg;	/* passed to every callback */
	/* mnemo exports: leave out the file's message and part ids and let the
	 * server make new ones, to copy a session within one database */
	bool		new_ids;
	/* called for each record left out (Claude Code's progress, system, ...
	 * lines; blocks of unknown types): its line number and kind */
	void		(*skipped) (int64_t line, const char *kind, void *arg);
	/* NULL: detect the format from the first record; else one of "mnemo",
	 * "claude-code", "pi", "openai", "anthropic", "swe-agent", "openhands",
	 * "codex" */
	const char *format;
	/* skip a last line cut short (reported through skipped as "truncated
	 * last line") instead of failing */
	bool		lenient;
	/* called for each field or block the format has and mnemo has no place
	 * for, kept in the message's metadata: its line and kind */
	void		(*kept) (int64_t line, const char *kind, void *arg);
	/* a file of several sessions (OpenHands resolver output, one run a
	 * line; a tau-bench results file; request bodies, one a line): NULL
	 * refuses it (FORMAT, naming the line where the second begins); else
	 * each becomes a session of its own, all in the one transaction, and
	 * this is called for each after the commit, in file order, with its id
	 * and message count.  A file of one session is reported through it too. */
	void		(*session) (const char *session_id, int64_t messages, void *arg);
	/* called for each value the import had to change to store it (a
	 * \u0000 or a lone surrogate escape, which PostgreSQL's text cannot
	 * hold, made U+FFFD): its line and kind; nothing is left out */
	void		(*replaced) (int64_t line, const char *kind, void *arg);
	/* called for each summary of a compaction (a mnemo export's compaction
	 * marker, a pi or Claude Code compaction) that could not be restored as
	 * one, because the context does not hold what it covered: it is stored
	 * as a plain summary message instead, so it is not left out and never
	 * goes to skipped; its line and kind (why) */
	void		(*unrestored) (int64_t line, const char *kind, void *arg);
	/* the file's path, or NULL: where a reader finds what belongs beside
	 * it (a Claude Code log's SESSION/subagents/agent-*.jsonl, imported as
	 * child sessions of it when options.session is set) */
	const char *path;
	/* called when something is read as asked but looks wrong: a format
	 * that --format (options.format) names where the content reads as
	 * another; its line and the message */
	void		(*warning) (int64_t line, const char *message, void *arg);
	/* an agent's log (not a mnemo export) whose session is there already,
	 * under the id the log names, is read again into it: the messages it
	 * holds are matched, in order, to what the log makes, results they
	 * waited for are written to them, and only what is new is appended
	 * (its count is what *imported and session give); without it, such a
	 * log is DUPLICATE_ID (imported before) */
	bool		update;
	/* called (after the commit) for each session read again (update),
	 * with the count of its new messages */
	void		(*updated) (const char *session_id, int64_t added, void *arg);
} mnemo_import_options;

/* Initialises import options: the transcript's own id, no callbacks. */
#define MNEMO_IMPORT_OPTIONS_INIT { 0 }

/*
 * Read a transcript from in and append it to a new session, in batches, all
 * in one transaction: an error leaves nothing behind.  session_id_out (may
 * be NULL) gets the session's id, *imported (may be NULL) the message count
 * (of a file of several sessions: the first one's id, and the messages of
 * all; options.session names each).
 * A transcript with no message, or one that leaves out more than half of its
 * records (the wrong format), fails and stores nothing.
 * Errors: FORMAT (with the line number in the message), DUPLICATE_ID, IO,
 * INVALID_ARGUMENT (an unknown options.format).
 */
/* The names options.format takes, for a message: "mnemo, claude-code, ...". */
MNEMO_API const char *mnemo_import_formats(void);

/* Whether name is one of them (NULL is not), so that a caller can refuse a
 * wrong name before it opens anything. */
MNEMO_API bool mnemo_import_format_known(const char *name);

MNEMO_API int mnemo_import_jsonl(mnemo_store *st, FILE *in, const mnemo_import_options *opts,
								 char session_id_out[MNEMO_ID_MAX + 1], int64_t *imported);

#ifdef __cplusplus
}
#endif

#endif							/* MNEMO_API_TRANSCRIPT_H */
