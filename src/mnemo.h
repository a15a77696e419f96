/*
 * mnemo.h
 *		Declarations shared by the mnemo extension's source files.
 *
 * Every SQL function's C body is named mnemo_<sqlname> and lives in the file
 * named for its concept (sessions.c, append.c, swap.c, ...).  The helpers
 * below are the one way each of those files talks to SPI, allocates ids,
 * locks a session and sends notifications.
 */
#ifndef MNEMO_H
#define MNEMO_H

#include "postgres.h"

#include "executor/spi.h"
#include "fmgr.h"
#include "utils/jsonb.h"

#include "errcodes.h"

/* Settings (mnemo.c) */
typedef enum MnemoNotifyMode
{
	MNEMO_NOTIFY_OFF,
	MNEMO_NOTIFY_WATCHED,
	MNEMO_NOTIFY_ALL
} MnemoNotifyMode;

extern int	mnemo_notify_mode;

/*
 * guard.c: true while a mnemo function executes one of its own statements;
 * the append-only trigger lets exactly those writes through.
 */
extern bool MnemoWriting;

/* query.c: SPI with plans prepared once per backend */
extern void MnemoPrepare(SPIPlanPtr *slot, const char *sql, int nargs, Oid *argtypes);
extern uint64 MnemoExecute(SPIPlanPtr plan, Datum *values, const char *nulls,
						   bool read_only, long tcount);
extern Datum MnemoResultRow(FunctionCallInfo fcinfo, MemoryContext callcxt, uint64 row);
extern void MnemoResultSet(FunctionCallInfo fcinfo);
extern char *MnemoGetText(uint64 row, int col, bool *isnull);
extern int64 MnemoGetInt64(uint64 row, int col, bool *isnull);
extern bool MnemoGetBool(uint64 row, int col);
extern Datum MnemoRequireArg(FunctionCallInfo fcinfo, int argno, const char *name);
extern char *MnemoRequireTextArg(FunctionCallInfo fcinfo, int argno, const char *name);
extern char *MnemoTextArgOrNull(FunctionCallInfo fcinfo, int argno);
extern int64 MnemoNowMs(void);

/* ids.c */
extern char *MnemoNewId(const char *prefix);
extern void MnemoCheckId(const char *id, const char *what);

/* tokens.c */
extern int32 MnemoEstimateTokens(const char *text, int len);

/* sessions.c: the per-session row lock that orders every write */
typedef struct MnemoSessionLock
{
	int64		last_seq;		/* after reserving */
	int64		last_position;	/* after reserving */
	bool		watched;
	char	   *agent;			/* the session's, the default for its messages */
	char	   *model_id;
	char	   *provider_id;
} MnemoSessionLock;

extern void MnemoLockSession(const char *session_id, int64 add_seq, int64 add_positions,
							 bool require_active, MnemoSessionLock *lock);
extern void MnemoCheckSessionExists(const char *session_id);

/* notify.c */
extern void MnemoNotify(bool watched, const char *event, const char *session_id,
						const char *id, int64 seq);
extern bool MnemoSessionWatched(const char *session_id);

/* parts.c: validation and storage of one part object */
typedef struct MnemoPart
{
	Jsonb	   *content;		/* the part object exactly as given */
	char	   *id;
	char	   *part_type;
	char	   *tool_name;
	char	   *tool_call_id;
	char	   *tool_state;
	int32		token_estimate;
} MnemoPart;

extern void MnemoParsePart(JsonbValue *part, const char *where, MnemoPart *out);

/*
 * The append statements share one parameter layout, so that the message
 * insert and the part insert can run as one statement:
 *	$1 session_id, $2 seq, $3 message id, $4 role, $5 created_at, $6 agent,
 *	$7 model_id, $8 provider_id, $9 run_id, $10 is_summary, $11 position,
 *	$12..$18 the parts' ids, types, contents, tool names, tool call ids, tool
 *	states and token estimates as arrays, $19 the first part_index.
 * MNEMO_PARTS_INSERT stores the parts and returns a row for each one stored;
 * a part whose id is taken is skipped, for MnemoReportDuplicatePart to name.
 * Its argument is a FROM item ("m, ") that must yield a row for the parts to
 * be stored at all, or "".
 */
#define MNEMO_APPEND_NPARAMS 19
extern const Oid MnemoAppendParamTypes[MNEMO_APPEND_NPARAMS];

#define MNEMO_PARTS_INSERT(from_guard) \
	"INSERT INTO mnemo.message_parts (session_id, message_id, part_index, id, part_type, " \
	"content, tool_name, tool_call_id, tool_state, token_estimate) " \
	"SELECT $1, $3, $19 + u.ord::int - 1, u.id, u.part_type, u.content, u.tool_name, " \
	"u.tool_call_id, u.tool_state, u.token_estimate " \
	"FROM " from_guard "unnest($12::text[], $13::text[], $14::jsonb[], $15::text[], $16::text[], " \
	"$17::text[], $18::int[]) WITH ORDINALITY " \
	"AS u(id, part_type, content, tool_name, tool_call_id, tool_state, token_estimate, ord) " \
	"ON CONFLICT (id) DO NOTHING RETURNING 1"

extern void MnemoPartParams(MnemoPart *parts, int nparts, int32 first_index,
							Datum *values, char *nulls);
extern void MnemoReportDuplicatePart(Datum *values);
extern char *MnemoJsonbString(JsonbContainer *obj, const char *key, const char *where,
							  bool required);
extern int64 MnemoJsonbCount(JsonbContainer *obj, const char *key, const char *where,
							 int64 max);
extern void MnemoCheckToolState(const char *state, const char *where);

/* render.c: the one textual rendering of a part, for estimates and context */
extern char *MnemoRenderPart(const char *part_type, Jsonb *content, int64 compacted_at,
							 bool has_compacted_at);

#endif							/* MNEMO_H */
