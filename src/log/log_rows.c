/*
 * log_rows.c
 *		The set-based write of a call's rows of mnemo.log, shared by
 *		append_message, append_messages, append_part and a summary's append:
 *		one row per part, the message's columns on its part 0 row.
 *
 * A message without parts is one row without a part (part_type NULL), which
 * its first append_part fills in (MnemoFillFirstPart): the row keeps its
 * place, and a message keeps one row per part.  An image's base64 data is
 * stored as a blob (blobs.c), its part naming it.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"

#include "mnemo.h"
#include "log/log.h"

/* the columns of a row after session_id and tenant, in the statement's order */
enum
{
	LOG_SEQ,
	LOG_PART_INDEX,
	LOG_ID,
	LOG_ROLE,
	LOG_CREATED_AT,
	LOG_AGENT,
	LOG_MODEL_ID,
	LOG_PROVIDER_ID,
	LOG_RUN_ID,
	LOG_IS_SUMMARY,
	LOG_PART_ID,				/* the part's columns from here */
	LOG_PART_TYPE,
	LOG_CONTENT,
	LOG_TOOL_NAME,
	LOG_TOOL_CALL_ID,
	LOG_TOOL_STATE,
	LOG_TOKEN_ESTIMATE,
	LOG_NCOLS
};

static const char *const log_cols[LOG_NCOLS] = {
	"seq", "part_index", "id", "role", "created_at", "agent", "model_id", "provider_id",
	"run_id", "is_summary", "part_id", "part_type", "content", "tool_name", "tool_call_id",
	"tool_state", "token_estimate"
};
static const Oid log_col_types[LOG_NCOLS] = {
	INT8OID, INT4OID, TEXTOID, TEXTOID, INT8OID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, BOOLOID,
	TEXTOID, TEXTOID, JSONBOID, TEXTOID, TEXTOID, TEXTOID, INT4OID
};

static MnemoRowsInsert log_insert = {
	"log", LOG_NCOLS, log_cols, log_col_types, "message or part"
};

/* the rows to write and the content each part is stored with */
typedef struct Fill
{
	const MnemoLogRows *rows;
	Jsonb	  **stored;			/* a content naming its blob, or NULL (blobs.c) */
} Fill;

static Datum
TextOrNull(const char *s, bool *isnull)
{
	*isnull = s == NULL;
	return s == NULL ? (Datum) 0 : CStringGetTextDatum(s);
}

/* the part columns, from LOG_PART_ID on, of part (NULL: none) stored as stored */
static void
FillPart(const MnemoPart *part, Jsonb *stored, Datum *values, bool *nulls)
{
	int			c;

	if (part == NULL)
	{
		for (c = LOG_PART_ID; c < LOG_NCOLS; c++)
			nulls[c] = true;
		return;
	}
	values[LOG_PART_ID] = TextOrNull(part->id, &nulls[LOG_PART_ID]);
	values[LOG_PART_TYPE] = TextOrNull(part->part_type, &nulls[LOG_PART_TYPE]);
	values[LOG_CONTENT] = JsonbPGetDatum(stored ? stored : part->content);
	nulls[LOG_CONTENT] = false;
	values[LOG_TOOL_NAME] = TextOrNull(part->tool_name, &nulls[LOG_TOOL_NAME]);
	values[LOG_TOOL_CALL_ID] = TextOrNull(part->tool_call_id, &nulls[LOG_TOOL_CALL_ID]);
	values[LOG_TOOL_STATE] = TextOrNull(part->tool_state, &nulls[LOG_TOOL_STATE]);
	values[LOG_TOKEN_ESTIMATE] = Int32GetDatum(part->token_estimate);
	nulls[LOG_TOKEN_ESTIMATE] = false;
}

static void
FillRow(void *arg, int row, Datum *values, bool *nulls)
{
	Fill	   *f = arg;
	const MnemoLogMessage *m = f->rows->messages[row];
	int			c;

	values[LOG_SEQ] = Int64GetDatum(f->rows->seqs[row]);
	values[LOG_PART_INDEX] = Int32GetDatum(f->rows->part_indexes[row]);
	nulls[LOG_SEQ] = nulls[LOG_PART_INDEX] = false;
	if (m == NULL)
		for (c = LOG_ID; c < LOG_PART_ID; c++)
			nulls[c] = true;
	else
	{
		values[LOG_ID] = TextOrNull(m->id, &nulls[LOG_ID]);
		values[LOG_ROLE] = TextOrNull(m->role, &nulls[LOG_ROLE]);
		values[LOG_CREATED_AT] = Int64GetDatum(m->created_at);
		nulls[LOG_CREATED_AT] = false;
		values[LOG_AGENT] = TextOrNull(m->agent, &nulls[LOG_AGENT]);
		values[LOG_MODEL_ID] = TextOrNull(m->model_id, &nulls[LOG_MODEL_ID]);
		values[LOG_PROVIDER_ID] = TextOrNull(m->provider_id, &nulls[LOG_PROVIDER_ID]);
		values[LOG_RUN_ID] = TextOrNull(m->run_id, &nulls[LOG_RUN_ID]);
		values[LOG_IS_SUMMARY] = BoolGetDatum(m->is_summary);
		nulls[LOG_IS_SUMMARY] = false;
	}
	FillPart(f->rows->parts[row], f->stored ? f->stored[row] : NULL, values, nulls);
}

/*
 * Write rows of session_id (tenant).  The caller holds the session lock,
 * has chosen the seqs and part indexes and each part's id to store (NULL
 * for a derived one, part_ids.c); a taken id is MN004, which the caller
 * turns into one naming the id (append.c).  Only the rows of one statement
 * at a time (MnemoInsertRows) are copied into its parameters: a call of a
 * million parts holds its validated parts and no second copy of them.
 */
void
MnemoInsertLog(const char *session_id, const char *tenant, const MnemoLogRows *rows)
{
	Fill		f = {rows, NULL};

	f.stored = MnemoStoreBlobs(tenant, rows->n, rows->parts);
	MnemoInsertRows(&log_insert, session_id, tenant, rows->n, FillRow, &f);
}

/*
 * Fill in part, the first of the message at seq, whose row holds no part
 * yet (append_part).  MN004 if its id is taken.
 */
void
MnemoFillFirstPart(const char *session_id, const char *tenant, int64 seq, const MnemoPart *part)
{
	static SPIPlanPtr plan;
	Jsonb	  **stored = MnemoStoreBlobs(tenant, 1, &part);
	Datum		row[LOG_NCOLS];
	bool		rownulls[LOG_NCOLS];
	Datum		values[3 + LOG_NCOLS - LOG_PART_ID];
	char		n[3 + LOG_NCOLS - LOG_PART_ID];
	int			c;

	MnemoPrepare(&plan,
				 "UPDATE mnemo.log SET part_id = $4, part_type = $5, content = $6, "
				 "tool_name = $7, tool_call_id = $8, tool_state = $9, token_estimate = $10 "
				 "WHERE session_id = $1 AND tenant = $2 AND seq = $3 AND part_index = 0 "
				 "AND part_type IS NULL",
				 lengthof(values), (Oid[]) {TEXTOID, TEXTOID, INT8OID, TEXTOID, TEXTOID, JSONBOID,
				 TEXTOID, TEXTOID, TEXTOID, INT4OID});
	FillPart(part, stored ? stored[0] : NULL, row, rownulls);
	values[0] = CStringGetTextDatum(session_id);
	values[1] = CStringGetTextDatum(tenant);
	values[2] = Int64GetDatum(seq);
	memset(n, ' ', sizeof(n));
	for (c = LOG_PART_ID; c < LOG_NCOLS; c++)
	{
		values[3 + c - LOG_PART_ID] = row[c];
		n[3 + c - LOG_PART_ID] = rownulls[c] ? 'n' : ' ';
	}
	MnemoInsert(plan, values, n, "part", part->id);
	/* the session lock keeps the row as append_part found it */
	if (SPI_processed != 1)
		elog(ERROR, "the row of the message at seq " INT64_FORMAT " of session \"%s\" holds a part already",
			 seq, session_id);
}
