/*
 * mnemo.h
 *		Declarations of core, the room every other room stands on.
 *
 * Every SQL function's C body is named mnemo_<sqlname> and lives in the file
 * named for its concept, in the room of src/ for its concern (log/append.c,
 * lifecycle/sessions.c, context/swap.c, ...; each room's README.md says what
 * it owns and what it may call).  The helpers below are the one way each of
 * those files talks to SPI and allocates ids.  Every other room declares
 * what it offers in a header of its own (tenancy/tenancy.h, log/log.h,
 * reads/reads.h and reads/search.h, lifecycle/lifecycle.h,
 * context/context.h, maps/maps.h), and a file includes the headers of the
 * rooms it uses.
 */
#ifndef MNEMO_H
#define MNEMO_H

#include "postgres.h"

#include "executor/spi.h"
#include "fmgr.h"
#include "utils/array.h"
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
extern int	mnemo_max_parts_per_message;
extern int	mnemo_max_part_bytes;
extern int	mnemo_max_messages_per_batch;
extern char *mnemo_tenant_setting;	/* mnemo.tenant: tenancy/tenant.c reads it */

/* query.c: SPI with plans prepared once per backend; insert_rows.c: set-based inserts */
extern void MnemoPrepare(SPIPlanPtr *slot, const char *sql, int nargs, Oid *argtypes);
extern void MnemoPrepareStream(SPIPlanPtr *slot, const char *sql, int nargs, Oid *argtypes);
extern void MnemoPrepareGeneric(SPIPlanPtr *slot, const char *sql, int nargs, Oid *argtypes);
extern uint64 MnemoExecute(SPIPlanPtr plan, Datum *values, const char *nulls,
						   bool read_only, long tcount);
extern bool MnemoCitusTable(Oid relid);
extern bool MnemoTablesSpread(void);
extern bool MnemoTablesDistributed(void);
extern void MnemoInsert(SPIPlanPtr plan, Datum *values, const char *nulls,
						const char *what, const char *id);

/* a set-based INSERT ... VALUES of a session's rows (MnemoInsertRows) */
#define MNEMO_ROWS_WIDTHS 8		/* statements of 1, 2, 4, ..., 128 rows */
typedef struct MnemoRowsInsert
{
	const char *table;			/* in schema mnemo */
	int			ncols;			/* the columns after session_id and tenant */
	const char *const *columns; /* their names */
	const Oid  *types;			/* their types */
	const char *what;			/* a row, for MN004 */
	SPIPlanPtr	plans[MNEMO_ROWS_WIDTHS];	/* by log2 of the width */
	SPIPlanPtr	arrays_plan;	/* the SQL statement of a plain layout */
	struct MnemoDirectInsert *direct;	/* the table as insert_direct.c saw it */
} MnemoRowsInsert;
typedef void (*MnemoRowFill) (void *arg, int row, Datum *values, bool *nulls);
extern void MnemoInsertRows(MnemoRowsInsert *ins, const char *session_id, const char *tenant,
							int n, MnemoRowFill fill, void *arg);
extern Datum MnemoArray(Oid type, Datum *values, bool *nulls, int n);
extern Datum MnemoResultRow(FunctionCallInfo fcinfo, MemoryContext callcxt, uint64 row);
extern uint64 MnemoExecuteTo(SPIPlanPtr plan, Datum *values, const char *nulls, bool read_only,
							 DestReceiver *dest);
extern uint64 MnemoExecuteResult(FunctionCallInfo fcinfo, SPIPlanPtr plan, Datum *values,
								 const char *nulls, bool read_only);
extern void MnemoResultPut(FunctionCallInfo fcinfo, int natts, const Datum *rowvalues,
						   const bool *rownulls);
extern char *MnemoGetText(uint64 row, int col, bool *isnull);
extern int64 MnemoGetInt64(uint64 row, int col, bool *isnull);
extern bool MnemoGetBool(uint64 row, int col);
extern Datum MnemoRequireArg(FunctionCallInfo fcinfo, int argno, const char *name);
extern char *MnemoRequireTextArg(FunctionCallInfo fcinfo, int argno, const char *name);
extern char *MnemoTextArgOrNull(FunctionCallInfo fcinfo, int argno);
extern ArrayType *MnemoTextListArg(FunctionCallInfo fcinfo, int argno, const char *name);
extern int64 MnemoNowMs(void);

/* jsonb_text.c: jsonb_out's text of jb, appended to out */
extern void MnemoJsonbAppendText(StringInfo out, Jsonb *jb);

/* ids.c: every id (session, message, part, label, ...) is 1 to MNEMO_ID_MAX bytes */
#define MNEMO_ID_MAX 256
extern char *MnemoNewId(const char *prefix);
extern void MnemoCheckId(const char *id, const char *what);

/* sha256.c: the sha256 of parts, one after the other (PG_SHA256_DIGEST_LENGTH bytes) */
extern void MnemoSha256(int n, const void *const *parts, const size_t *lens, uint8 *digest);

/* tokens.c */
extern int32 MnemoEstimateTokens(const char *text, int len);

/*
 * How deep a part (or session metadata) may nest: the part object is level
 * 1, a scalar in it level 2 (json-c's count); the client checks the same
 * limit (MNEMO_MAX_JSON_DEPTH in client/include/mnemo.h).  doc/limits.md.
 */
#define MNEMO_MAX_JSON_DEPTH 512
/* json_depth.c: 22023 if jb nests deeper than MNEMO_MAX_JSON_DEPTH */
extern void MnemoCheckJsonDepth(Jsonb *jb, const char *where);

/* The token estimate of an image part (parts.c), shown in its placeholder
 * (render.c): about what OpenAI and Anthropic charge for a 1-megapixel image. */
#define MNEMO_IMAGE_TOKENS 1600

#endif							/* MNEMO_H */
