/*
 * mnemo/lifecycle.h
 *		A session's lifecycle beside its log: checkpoints, runs, the pending
 *		human-in-the-loop request, and state.
 *
 * A part of the public API: include <mnemo.h>, which includes every part
 * (the conventions of every call are at its head).  Each call is one
 * statement over the SQL function it names (doc/sql.md).
 */
#ifndef MNEMO_API_LIFECYCLE_H
#define MNEMO_API_LIFECYCLE_H

#include "rows.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * Checkpoints (add_checkpoint, list_checkpoints)
 *
 * A checkpoint labels the session's end when it was added: it covers seqs
 * 1 .. seq.  mnemo_session_send adds one after each completed assistant
 * turn, labelled "turn-<seq of the assistant message>", with is_auto set.
 * ------------------------------------------------------------------------ */
typedef struct mnemo_checkpoint
{
	char	   *session_id;
	char	   *label;
	int64_t		seq;			/* the session's last seq when added */
	int64_t		created_at;		/* unix ms */
	bool		is_auto;		/* added by the runtime, not by a user */
} mnemo_checkpoint;

typedef struct mnemo_checkpoints
{
	size_t		count;
	mnemo_checkpoint *items;	/* in log order */
} mnemo_checkpoints;

/* Add a checkpoint at the session's current end; out may be NULL.
 * MNEMO_ERR_DUPLICATE_ID if the label is taken in the session,
 * MNEMO_ERR_SESSION_INACTIVE if the session was soft-deleted. */
MNEMO_API int mnemo_checkpoint_add(mnemo_store *st, const char *session_id, const char *label,
								   bool is_auto, mnemo_checkpoint **out);

/* The session's checkpoints in log order (an empty list when none). */
MNEMO_API int mnemo_checkpoints_list(mnemo_store *st, const char *session_id,
									 mnemo_checkpoints **out);

MNEMO_API void mnemo_checkpoint_free(mnemo_checkpoint *c);
MNEMO_API void mnemo_checkpoints_free(mnemo_checkpoints *list);

/* ------------------------------------------------------------------------
 * Fork and resume (fork_session, resume_session, list_discarded)
 *
 * A fork continues another session's live line from a point without
 * copying its history: it reads the inherited messages in place, has the
 * source's context view as of that point as its own, and takes seqs from
 * the fork point on.  A resume returns a session's live line and view to a
 * checkpoint; the messages after it are discarded (kept, listed apart) and
 * new appends take fresh seqs.  doc/sql.md#fork-and-resume.
 * ------------------------------------------------------------------------ */

/* Fork source_id at "at": a checkpoint label, a seq written as an integer,
 * or "run:<run id>" (exactly what mnemo_run_snapshot gives after that
 * completed run).  new_id may be NULL (a generated id).  *out is the new
 * session (its last_seq is the fork point).  MNEMO_ERR_DUPLICATE_ID if
 * new_id exists, MNEMO_ERR_CHECKPOINT_NOT_FOUND, MNEMO_ERR_RUN_NOT_COMPLETED,
 * MNEMO_ERR_INVALID_ARGUMENT for a seq past the end or discarded,
 * MNEMO_ERR_SESSION_INACTIVE for a soft-deleted source. */
MNEMO_API int mnemo_session_fork(mnemo_store *st, const char *source_id, const char *at,
								 const char *new_id, mnemo_session **out);

/* Resume the session at a checkpoint; *discarded (unless NULL) is the
 * number of messages it discarded (0 at the line's end).
 * MNEMO_ERR_CHECKPOINT_NOT_FOUND, MNEMO_ERR_INVALID_ARGUMENT for a
 * checkpoint before a fork's fork point or already discarded. */
MNEMO_API int mnemo_session_resume(mnemo_store *st, const char *session_id,
								   const char *checkpoint, int64_t *discarded);

/* The session's discarded messages with their parts, in seq order. */
MNEMO_API int mnemo_discarded_list(mnemo_store *st, const char *session_id,
								   mnemo_messages **out);

/* ------------------------------------------------------------------------
 * Runs (claim_run, complete_run, snapshot)
 *
 * A run is claimed once and completed once; the messages it writes carry
 * its id (mnemo_new_message.run_id).  Of several processes claiming one run
 * id, exactly one succeeds.
 * ------------------------------------------------------------------------ */
typedef struct mnemo_run
{
	char	   *session_id;
	char	   *run_id;
	int64_t		claimed_at;		/* unix ms */
	int64_t		completed_at;	/* unix ms; 0 while in flight */
	int64_t		completion_seq; /* 1, 2, ... in completion order; 0 while
								 * in flight */
} mnemo_run;

/* Claim a run; out may be NULL.  MNEMO_ERR_RUN_ALREADY_CLAIMED while
 * another claim of it is in flight, MNEMO_ERR_RUN_ALREADY_COMPLETED once it
 * completed. */
MNEMO_API int mnemo_run_claim(mnemo_store *st, const char *session_id, const char *run_id,
							  mnemo_run **out);

/* Complete a claimed run, giving it the session's next completion_seq;
 * idempotent (a completed run comes back unchanged); out may be NULL.
 * MNEMO_ERR_RUN_NOT_CLAIMED if it never was. */
MNEMO_API int mnemo_run_complete(mnemo_store *st, const char *session_id, const char *run_id,
								 mnemo_run **out);

/* The messages, with their parts, without a run or of runs completed at or
 * before after_run_id completed, in seq order (summaries left out).
 * MNEMO_ERR_RUN_NOT_COMPLETED if after_run_id is not completed. */
MNEMO_API int mnemo_run_snapshot(mnemo_store *st, const char *session_id,
								 const char *after_run_id, mnemo_messages **out);

MNEMO_API void mnemo_run_free(mnemo_run *r);

/* ------------------------------------------------------------------------
 * The pending human-in-the-loop request (set_pending_request,
 * clear_pending_request, load_pending_request): at most one per session,
 * a JSON object with the id of the run that asked it.
 * ------------------------------------------------------------------------ */
typedef struct mnemo_pending
{
	char	   *request;		/* JSON object */
	char	   *run_id;			/* or NULL */
	int64_t		created_at;		/* unix ms */
} mnemo_pending;

/* Set the request (JSON object text) and its run id (may be NULL),
 * replacing any pending one. */
MNEMO_API int mnemo_pending_set(mnemo_store *st, const char *session_id, const char *request,
								const char *run_id);

/* Clear it; *cleared (unless NULL) tells whether one was pending. */
MNEMO_API int mnemo_pending_clear(mnemo_store *st, const char *session_id, bool *cleared);

/* The pending request with its run id, read together; *out = NULL when
 * none is pending. */
MNEMO_API int mnemo_pending_load(mnemo_store *st, const char *session_id, mnemo_pending **out);

MNEMO_API void mnemo_pending_free(mnemo_pending *p);

/* ------------------------------------------------------------------------
 * State (update_state, get_state): a JSON object per session.
 * ------------------------------------------------------------------------ */

/* Merge patch (JSON object text) into the state: its top-level keys replace
 * the state's.  Atomic: concurrent patches are all kept.  *merged (unless
 * merged is NULL) is the state after it, freed with mnemo_state_free. */
MNEMO_API int mnemo_state_update(mnemo_store *st, const char *session_id, const char *patch,
								 char **merged);

/* The state (JSON object text, "{}" until the first update). */
MNEMO_API int mnemo_state_get(mnemo_store *st, const char *session_id, char **state);

MNEMO_API void mnemo_state_free(char *state);

#ifdef __cplusplus
}
#endif

#endif							/* MNEMO_API_LIFECYCLE_H */
