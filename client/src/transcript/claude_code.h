/*
 * claude_code.h
 *		The state of the Claude Code reader, which its files share:
 *		claude_code.c, the records and the session they describe;
 *		claude_code_messages.c, user and assistant records as messages;
 *		claude_code_compaction.c, Claude Code's compactions;
 *		claude_code_subagents.c, the sub-agents as child sessions;
 *		claude_code_uuids.c, the uuids read.
 */
#ifndef MNEMO_CLAUDE_CODE_H
#define MNEMO_CLAUDE_CODE_H

#include "transcript/transcript.h"

/* The uuids of the user and assistant records read: open addressing. */
typedef struct cc_uuid_set
{
	char	  **slots;
	size_t		cap;			/* a power of two, or 0 */
	size_t		n;
} cc_uuid_set;

typedef struct cc_state
{
	mn_import_msg *held;		/* the assistant message being assembled */
	char	   *held_api_id;	/* its message.id */
	mn_calls	calls;
	cc_uuid_set seen;
	bool		described;		/* the session's metadata is set */
	bool		sub;			/* a sub-agent's log: its sidechain records
								 * are its conversation */
	mn_tree		side;			/* the sidechain records of a main log (older
								 * logs write sub-agents inline) */
	mn_buf		link;			/* a Task result's metadata: its sub-agent */
} cc_state;

/* Add uuid to the set: *added false when it was there already. */
int			mn_cc_uuid_add(mn_import *imp, cc_uuid_set *set, const char *uuid, bool *added);
void		mn_cc_uuids_free(cc_uuid_set *set);

/* Push the held assistant message, if any. */
int			mn_cc_release(mn_import *imp, cc_state *cc);

/* The "message" object of a record and its text. */
int			mn_cc_message_of(mn_import *imp, int64_t line, struct json_object *rec, mn_span text,
							 struct json_object **msg, mn_span *msg_text);

/* A user record: a message of its own, or the tool results of the held one. */
int			mn_cc_user_record(mn_import *imp, cc_state *cc, int64_t line,
							  struct json_object *rec, mn_span text);

/* An assistant record: a block of the response held, or a new one. */
int			mn_cc_assistant_record(mn_import *imp, cc_state *cc, int64_t line,
								   struct json_object *rec, mn_span text);

/* A user record with isCompactSummary committed as a summary; false in
 * *done when it is not one, or has nothing before it to summarise (the
 * record is then an ordinary user message). */
int			mn_cc_compact_summary(mn_import *imp, cc_state *cc, int64_t line,
								  struct json_object *rec, mn_span text, bool *done);

/* A microcompact_boundary system record: the tool parts it cleared
 * tombstoned. */
int			mn_cc_microcompact(mn_import *imp, cc_state *cc, struct json_object *rec);

/* The id of the session of sub-agent agent_id of session parent (NULL when
 * agent_id is NULL or out of memory): malloc'd. */
char	   *mn_cc_subagent_id(const char *parent, const char *agent_id);

/* The reader's children callback: the sub-agents as child sessions. */
int			mn_cc_children(mn_import *imp, void *state);

#endif							/* MNEMO_CLAUDE_CODE_H */
