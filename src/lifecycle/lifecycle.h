/*
 * lifecycle.h
 *		A session from creation to erasure: the columns the session
 *		functions return (sessions.c), the view as of a point that fork and
 *		resume rebuild (rebuild.c, fork.c), and runs (runs.c).
 */
#ifndef MNEMO_LIFECYCLE_H
#define MNEMO_LIFECYCLE_H

#include "mnemo.h"
#include "tenancy/tenancy.h"
#include "reads/reads.h"

/*
 * The columns of mnemo.session, what the session functions return, from
 * the session row s named by the expression id (its parameter, so that
 * the messages' look-ups are pruned to the session's partition): its
 * columns, last_seq, and updated_at as the later of the row's last change
 * and its newest message's created_at.
 */
#define MNEMO_SESSION_COLUMNS(s, id) \
	s ".id, " s ".parent_id, " s ".created_at, " \
	"greatest(" s ".updated_at, (SELECT l_.created_at FROM mnemo.messages l_ " \
	"WHERE l_.session_id = " id " AND l_.tenant = " s ".tenant ORDER BY l_.seq DESC LIMIT 1)), " \
	s ".model_id, " s ".provider_id, " s ".agent, " s ".title, " s ".is_active, " \
	s ".metadata, " s ".system_prompt, " s ".state, " s ".watched, " \
	MNEMO_LAST_SEQ(s, id) ", " s ".tenant, " s ".context_generation, " \
	s ".context_dead, " s ".fork_seq, " s ".fork_run, " s ".forks, " s ".discards, " \
	s ".context_tail_seq"

/*
 * rebuild.c, fork.c: a context view as of a point of the line, and the
 * points fork_session and resume_session are given
 */
typedef struct MnemoViewItem
{
	char	   *item_type;
	char	   *item_id;
	int64		seq;
} MnemoViewItem;

extern MnemoViewItem *MnemoViewAsOf(MnemoLine *source, MnemoLine *keep, int *nitems);
extern void MnemoWriteView(const char *session_id, const char *tenant, int64 generation,
						   MnemoViewItem *items, int n);
extern int64 MnemoFindCheckpoint(MnemoLine *line, const char *label);
extern void MnemoClipLine(MnemoLine *line, int64 upto, int64 *excluded, int nexcluded,
						  MnemoLine *out);

/* runs.c */
extern bool MnemoFindRun(const char *session_id, const char *tenant, const char *run_id,
						 bool fresh, int64 *completion_seq);

#endif							/* MNEMO_LIFECYCLE_H */
