/*
 * flat.c
 *		A history read whole.  get_messages_flat: a session's messages with
 *		their parts as plain rows, one per part with its message's columns
 *		beside it; and the same scan for get_messages_with_parts and history
 *		(the last "limit" messages), which put each message's parts into a
 *		jsonb array instead (ResultMessages); and those arrays for messages
 *		named by id (MnemoPartsByIds) or read by another statement
 *		(MnemoPutMessagesWithParts): turn_context, get_messages_with_parts_by_ids,
 *		expand_summary, snapshot and list_discarded.  This file is the one
 *		place a parts array is built (reads.h says what it holds).
 *
 * get_messages_flat returns what is stored: a part's content is its stored
 * object, its status columns stand beside it, and a message without parts is
 * one row whose part columns are NULL; rows come in (seq, part_index) order.
 * Content goes out as json, printed by MnemoJsonbAppendText: jsonb_out's
 * text, without its byte-at-a-time escaping, which was the largest single
 * cost of sending parts.  get_messages_with_parts builds each message's
 * array in C (AddPart: the stored object with the live columns laid over
 * it), from the same rows, as a jsonb value built once: a correlated
 * jsonb_agg per message cost twice the flat read, and the
 * array's jsonb_out is now most of what the read costs over the flat one
 * (bench/profiles/reads.txt).
 *
 * How the rows are found.  The live line is read segment by segment, as the
 * other reads do (lineage.c), and each segment in chunks of MNEMO_READ_CHUNK seqs,
 * which bounds the memory a read holds besides its result.  A chunk is one
 * statement over a range of mnemo.log's key (session_id, tenant, seq,
 * part_index), filtered by the one session that holds the rows (its id and
 * the line's tenant, which is every segment owner's): the rows come in the
 * result's order, a message's columns on its part 0 row, and each goes into
 * the result as the executor hands it over (StreamRow), with no hash, no
 * sort and no copy but of each message's columns.  The statement is planned
 * for its first rows, so that the index gives the order rather than a sort
 * of every row.  Before 0.13.0 a chunk was two statements, the messages
 * then their parts, merged here; a join in SQL had been planned as a nested
 * loop of one index descent per message, or a hash join under a sort of
 * the whole result, each costing more than the rest of the read.
 *
 * The result is the function's tuplestore, the one copy of the rows a set
 * in FROM is read from; its rows are kept in a generation context
 * (InitResult), so that work_mem counts their bytes, not powers of two.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
#include "utils/tuplestore.h"

#include "mnemo.h"
#include "tenancy/tenancy.h"
#include "reads/reads.h"

/* the message columns of message_flat, then the part columns */
#define FLAT_MESSAGE_COLUMNS 17
#define FLAT_PART_COLUMNS 8
#define FLAT_CONTENT (FLAT_MESSAGE_COLUMNS + 2)

/* [MnemoTablesDistributed()]: a generic plan, or a custom one for Citus */
static SPIPlanPtr rows_plan[2];
static SPIPlanPtr history_first_plan;
static SPIPlanPtr by_ids_plan;
static SPIPlanPtr by_seqs_plan;

/* What every chunk of a read writes into. */
typedef struct FlatResult
{
	Tuplestorestate *store;
	TupleDesc	desc;
	Datum		tenant;			/* the line's, every segment owner's */
	MemoryContext msgcxt;		/* the message in values; reset at the next */
	MemoryContext rowcxt;		/* reset after each row (as_json: message) */
	bool		as_json;		/* a row per message, its parts a jsonb array */
	bool		pending;		/* as_json: the message in values is not put yet */
	JsonbParseState *parts;		/* as_json: its parts so far, in rowcxt */
	StringInfoData content;
	Datum		values[FLAT_MESSAGE_COLUMNS + FLAT_PART_COLUMNS];
	bool		nulls[FLAT_MESSAGE_COLUMNS + FLAT_PART_COLUMNS];
} FlatResult;

/* a key of a part's object into r->parts */
static void
PushKey(FlatResult *r, const char *key)
{
	JsonbValue	v;

	v.type = jbvString;
	v.val.string.val = (char *) key;
	v.val.string.len = strlen(key);
	pushJsonbValue(&r->parts, WJB_KEY, &v);
}

static void
PushNumber(FlatResult *r, const char *key, int64 value)
{
	JsonbValue	v;

	PushKey(r, key);
	v.type = jbvNumeric;
	v.val.numeric = int64_to_numeric(value);
	pushJsonbValue(&r->parts, WJB_VALUE, &v);
}

static void
PushText(FlatResult *r, const char *key, Datum value)
{
	text	   *t = DatumGetTextPCopy(value);	/* its row is gone before the
												 * array is built */
	JsonbValue	v;

	PushKey(r, key);
	v.type = jbvString;
	v.val.string.val = VARDATA_ANY(t);
	v.val.string.len = VARSIZE_ANY_EXHDR(t);
	pushJsonbValue(&r->parts, WJB_VALUE, &v);
}

/*
 * The id of a part (as PutRow takes it) of the message in r->values: the
 * stored one, or else its derived one (part_ids.c), in the current context.
 */
static Datum
PartId(FlatResult *r, Datum *part, bool *part_nulls)
{
	text	   *message_id;
	text	   *id;

	if (!part_nulls[1])
		return part[1];
	message_id = DatumGetTextPP(r->values[0]);
	id = MnemoDerivedPartIdText(VARDATA_ANY(message_id), VARSIZE_ANY_EXHDR(message_id),
								DatumGetInt32(part[2]));
	if (id == NULL)
		elog(ERROR, "part %d of seq " INT64_FORMAT " has no id", DatumGetInt32(part[2]),
			 DatumGetInt64(part[0]));
	return PointerGetDatum(id);
}

/*
 * A part (as PutRow takes it) into the jsonb array of the message in
 * r->values: the stored object with the live columns laid over it, as
 * content || jsonb_strip_nulls(jsonb_build_object(...)) would make it.  The object's members are pushed, then the columns' (the later
 * member of a key wins when the object is closed, as in ||), nested values
 * unpacked from their binary form: nothing is printed or parsed.  The
 * content is copied (into rowcxt, reset when the message is put): the array
 * points into it until then, and the executor's slot would not keep it.
 */
static void
AddPart(FlatResult *r, Datum *part, bool *part_nulls)
{
	MemoryContext oldcxt = MemoryContextSwitchTo(r->rowcxt);
	Jsonb	   *content = (Jsonb *) PG_DETOAST_DATUM_COPY(part[3]);
	Datum		id = PartId(r, part, part_nulls);
	JsonbIterator *it;
	JsonbIteratorToken tok;
	JsonbValue	v;

	if (!JB_ROOT_IS_OBJECT(content))
		elog(ERROR, "the content of part \"%s\" is not an object", TextDatumGetCString(id));
	it = JsonbIteratorInit(&content->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_END_OBJECT)
		pushJsonbValue(&r->parts, tok, tok == WJB_BEGIN_OBJECT ? NULL : &v);
	PushText(r, "id", id);
	PushNumber(r, "part_index", DatumGetInt32(part[2]));
	if (!part_nulls[4])
		PushText(r, "tool_state", part[4]);
	if (!part_nulls[5])
		PushNumber(r, "compacted_at", DatumGetInt64(part[5]));
	if (!part_nulls[6])
		PushNumber(r, "started_at", DatumGetInt64(part[6]));
	if (!part_nulls[7])
		PushNumber(r, "completed_at", DatumGetInt64(part[7]));
	if (!part_nulls[8])
		PushNumber(r, "token_estimate", DatumGetInt32(part[8]));
	pushJsonbValue(&r->parts, WJB_END_OBJECT, NULL);
	MemoryContextSwitchTo(oldcxt);
}

/* as_json: the message in r->values, its array closed, as a row of the result */
static void
FlushMessage(FlatResult *r)
{
	MemoryContext oldcxt;
	JsonbValue *array;

	if (!r->pending)
		return;
	oldcxt = MemoryContextSwitchTo(r->rowcxt);
	array = pushJsonbValue(&r->parts, WJB_END_ARRAY, NULL);
	r->values[FLAT_MESSAGE_COLUMNS] = JsonbPGetDatum(JsonbValueToJsonb(array));
	r->nulls[FLAT_MESSAGE_COLUMNS] = false;
	tuplestore_putvalues(r->store, r->desc, r->values, r->nulls);
	MemoryContextSwitchTo(oldcxt);
	MemoryContextReset(r->rowcxt);
	r->parts = NULL;
	r->pending = false;
}

/*
 * The message in r->values with a part: a row of the result, the part's
 * columns as its statement gives them (seq first, ReadParts),
 * or NULL for a message without parts.  The content goes out as the text of
 * a json value, printed once behind the varlena header it is given.
 * as_json, the part goes into the message's array instead.
 */
static void
PutRow(FlatResult *r, Datum *part, bool *part_nulls)
{
	MemoryContext oldcxt;

	if (r->as_json)
	{
		if (part != NULL)
			AddPart(r, part, part_nulls);
		return;
	}
	oldcxt = MemoryContextSwitchTo(r->rowcxt);
	if (part == NULL)
		memset(r->nulls + FLAT_MESSAGE_COLUMNS, true, FLAT_PART_COLUMNS);
	else
	{
		memcpy(r->values + FLAT_MESSAGE_COLUMNS, part + 1, sizeof(Datum) * FLAT_PART_COLUMNS);
		memcpy(r->nulls + FLAT_MESSAGE_COLUMNS, part_nulls + 1, sizeof(bool) * FLAT_PART_COLUMNS);
		r->values[FLAT_MESSAGE_COLUMNS] = PartId(r, part, part_nulls);
		r->nulls[FLAT_MESSAGE_COLUMNS] = false;
		resetStringInfo(&r->content);
		appendStringInfoSpaces(&r->content, VARHDRSZ);
		MnemoJsonbAppendText(&r->content, DatumGetJsonbP(r->values[FLAT_CONTENT]));
		SET_VARSIZE(r->content.data, r->content.len);
		r->values[FLAT_CONTENT] = PointerGetDatum(r->content.data);
	}
	tuplestore_putvalues(r->store, r->desc, r->values, r->nulls);
	MemoryContextSwitchTo(oldcxt);
	MemoryContextReset(r->rowcxt);
}

/*
 * The message columns of a part 0 row (values, nulls: the statement's
 * first FLAT_MESSAGE_COLUMNS) into r->values, copied: the rows of its
 * other parts follow; as_json, once the message before it is put, with an
 * empty array.
 */
static void
SetMessage(FlatResult *r, Datum *values, bool *nulls)
{
	MemoryContext oldcxt;
	int			i;

	FlushMessage(r);
	MemoryContextReset(r->msgcxt);
	oldcxt = MemoryContextSwitchTo(r->msgcxt);
	for (i = 0; i < FLAT_MESSAGE_COLUMNS; i++)
	{
		Form_pg_attribute att = TupleDescAttr(r->desc, i);

		r->nulls[i] = nulls[i];
		r->values[i] = nulls[i] ? (Datum) 0 : datumCopy(values[i], att->attbyval, att->attlen);
	}
	MemoryContextSwitchTo(oldcxt);
	if (r->as_json)
	{
		oldcxt = MemoryContextSwitchTo(r->rowcxt);
		pushJsonbValue(&r->parts, WJB_BEGIN_ARRAY, NULL);
		MemoryContextSwitchTo(oldcxt);
		r->pending = true;
	}
}

/*
 * The rows statement's receiver: its rows come in the result's order, by
 * (seq, part_index), and each goes into the result as it comes.  A part 0
 * row starts a message; a row without a part (no content) is a message
 * without parts.  No copy of the parts is kept.
 */
typedef struct FlatStream
{
	DestReceiver pub;
	FlatResult *r;
} FlatStream;

static bool
StreamRow(TupleTableSlot *slot, DestReceiver *self)
{
	FlatResult *r = ((FlatStream *) self)->r;
	Datum	   *part = slot->tts_values + FLAT_MESSAGE_COLUMNS;
	bool	   *part_nulls = slot->tts_isnull + FLAT_MESSAGE_COLUMNS;

	slot_getallattrs(slot);
	if (DatumGetInt32(part[2]) == 0)
		SetMessage(r, slot->tts_values, slot->tts_isnull);
	else if (r->nulls[0])
		elog(ERROR, "part %d of seq " INT64_FORMAT " has no message", DatumGetInt32(part[2]),
			 DatumGetInt64(part[0]));
	if (part_nulls[3])
		PutRow(r, NULL, NULL);
	else
		PutRow(r, part, part_nulls);
	return true;
}

static void
StreamStartup(DestReceiver *self, int operation, TupleDesc typeinfo)
{
}

static void
StreamNothing(DestReceiver *self)
{
}

/*
 * The rows of owner's messages after < seq <= to, with their parts, into
 * the result, from one range of mnemo.log's key, planned for its first
 * rows so that the index gives the order; inside SPI.
 */
static void
ReadChunk(FlatResult *r, const char *owner, int64 after, int64 to)
{
	FlatStream	stream = {{0}};
	SPIPlanPtr *plan = &rows_plan[MnemoTablesDistributed() ? 1 : 0];

	MnemoPrepareStream(plan,
					   "SELECT " MNEMO_MESSAGE_FIELDS_OF("p.") ", "
					   "p.seq, p.part_id, p.part_index, " MNEMO_PART_CONTENT ", p.tool_state, "
					   "p.compacted_at, p.started_at, p.completed_at, p.token_estimate "
					   "FROM mnemo.log p "
					   "WHERE p.session_id = $1 AND p.tenant = $2 AND p.seq > $3 AND p.seq <= $4 "
					   "ORDER BY p.seq, p.part_index",
					   4, (Oid[]) {TEXTOID, TEXTOID, INT8OID, INT8OID});
	stream.pub.receiveSlot = StreamRow;
	stream.pub.rStartup = StreamStartup;
	stream.pub.rShutdown = StreamNothing;
	stream.pub.rDestroy = StreamNothing;
	stream.pub.mydest = DestTuplestore;	/* its rows end in one */
	stream.r = r;
	r->nulls[0] = true;			/* no message yet */
	MnemoExecuteTo(*plan,
				   (Datum[]) {CStringGetTextDatum(owner), r->tenant, Int64GetDatum(after),
				   Int64GetDatum(to)},
				   NULL, true, &stream.pub);
	FlushMessage(r);
}

/*
 * The rows of the messages of session owner of tenant that MnemoPartsByIds
 * or MnemoPartsOfRows names ($3, ids or seqs), each message's in one range
 * of the log's key: ordinal, message id (on the first row of each message,
 * part 0), seq, then the part's columns as AddPart takes them.  Each key is
 * its own probes, whatever the planner thinks of the session's size: as
 * joins, 2,000 ids of a session it underestimated took 0.7 s, each id
 * reading the session (bench/profiles/by_ids.txt).  OFFSET 0 fences the
 * range as LIMIT 1 does an id's probe (MNEMO_MESSAGE_OF_ID).
 */
#define PARTS_ROWS(message_id) \
	"SELECT u.ord, " message_id ", p.seq, p.part_id, p.part_index, " \
	"CASE WHEN p.part_type IS NOT NULL THEN " MNEMO_PART_CONTENT " END, " \
	"p.tool_state, p.compacted_at, p.started_at, p.completed_at, p.token_estimate "
#define PARTS_RANGE(seq) \
	"CROSS JOIN LATERAL (SELECT * FROM mnemo.log p_ WHERE p_.session_id = $1 " \
	"AND p_.tenant = $2 AND p_.seq = " seq " OFFSET 0) p ORDER BY u.ord, p.part_index"

/*
 * The parts arrays of the first `rows` rows of SPI_tuptable (PARTS_ROWS)
 * into parts[ordinal - 1], in cxt, where none is there yet (nkeys: the
 * ordinals' bound); returns how many it set.  Frees SPI_tuptable.
 */
static int
BuildPartsArrays(uint64 rows, int nkeys, Datum *parts, MemoryContext cxt)
{
	FlatResult	r = {0};
	uint64		row;
	int64		current = 0;
	int			set = 0;

	r.rowcxt = AllocSetContextCreate(CurrentMemoryContext, "mnemo parts by id",
									 ALLOCSET_DEFAULT_SIZES);
	for (row = 0; row <= rows; row++)
	{
		Datum		values[11];
		bool		nulls[11];
		MemoryContext oldcxt;

		if (row < rows)
			heap_deform_tuple(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, values, nulls);
		/* a message's rows are done: its array into parts */
		if (current > 0 && (row == rows || DatumGetInt64(values[0]) != current))
		{
			Jsonb	   *array;

			oldcxt = MemoryContextSwitchTo(r.rowcxt);
			array = JsonbValueToJsonb(pushJsonbValue(&r.parts, WJB_END_ARRAY, NULL));
			MemoryContextSwitchTo(cxt);
			parts[current - 1] = datumCopy(JsonbPGetDatum(array), false, -1);
			MemoryContextSwitchTo(oldcxt);
			MemoryContextReset(r.rowcxt);
			r.parts = NULL;
			set++;
			current = 0;
		}
		if (row == rows)
			break;
		if (current == 0)
		{
			int64		ord = DatumGetInt64(values[0]);

			if (ord < 1 || ord > nkeys || parts[ord - 1] != (Datum) 0)
				continue;
			current = ord;
			r.values[0] = values[1];	/* the message id, for derived part ids */
			oldcxt = MemoryContextSwitchTo(r.rowcxt);
			pushJsonbValue(&r.parts, WJB_BEGIN_ARRAY, NULL);
			MemoryContextSwitchTo(oldcxt);
		}
		/* a message without parts has one row without a part: [] */
		if (!nulls[5])
			AddPart(&r, values + 2, nulls + 2);
	}
	MemoryContextDelete(r.rowcxt);
	SPI_freetuptable(SPI_tuptable);
	return set;
}

/*
 * The parts arrays of the messages of session owner of tenant whose ids are
 * the text[] ids: parts[i], in cxt, for the message of the ids' element
 * i + 1 that has none yet there; messages not found are left alone.
 * Returns how many it set.  Inside SPI.
 */
int
MnemoPartsByIds(const char *owner, const char *tenant, Datum ids, int nids, Datum *parts,
				MemoryContext cxt)
{
	MnemoPrepare(&by_ids_plan,
				 PARTS_ROWS("m.id")
				 "FROM unnest($3::text[]) WITH ORDINALITY AS u(id, ord) "
				 MNEMO_MESSAGE_OF_ID("u.id", "$2", "")
				 PARTS_RANGE("m.seq"),
				 3, (Oid[]) {TEXTOID, TEXTOID, TEXTARRAYOID});
	return BuildPartsArrays(MnemoExecute(by_ids_plan,
										 (Datum[]) {CStringGetTextDatum(owner),
										 CStringGetTextDatum(tenant), ids},
										 NULL, true, 0),
							nids, parts, cxt);
}

/*
 * The parts arrays of rows 0 .. n - 1 of t, an SPI result of session owner's
 * messages whose first column is the id (MNEMO_MESSAGE_FIELDS): element i
 * for row i, in the current context.  Inside SPI.
 */
Datum *
MnemoPartsOfRows(SPITupleTable *t, uint64 n, const char *owner, const char *tenant)
{
	Datum	   *parts = palloc0(sizeof(Datum) * Max(n, 1));
	Datum	   *seqs;
	uint64		i;

	if (n == 0)
		return parts;
	if (n > (uint64) MaxAllocSize / sizeof(Datum))
		elog(ERROR, "too many messages for one read of parts: " UINT64_FORMAT, n);
	seqs = palloc(sizeof(Datum) * n);
	for (i = 0; i < n; i++)
	{
		bool		isnull;

		seqs[i] = SPI_getbinval(t->vals[i], t->tupdesc, MNEMO_MESSAGE_SEQ_COLUMN, &isnull);
		if (isnull)
			elog(ERROR, "a message row without a seq");
	}
	/* the rows give their seqs: a range of the key each, no probe of the id */
	MnemoPrepare(&by_seqs_plan,
				 PARTS_ROWS("p.id")
				 "FROM unnest($3::bigint[]) WITH ORDINALITY AS u(seq, ord) "
				 PARTS_RANGE("u.seq"),
				 3, (Oid[]) {TEXTOID, TEXTOID, INT8ARRAYOID});
	BuildPartsArrays(MnemoExecute(by_seqs_plan,
								  (Datum[]) {CStringGetTextDatum(owner), CStringGetTextDatum(tenant),
								  PointerGetDatum(construct_array(seqs, (int) n, INT8OID, 8,
																  FLOAT8PASSBYVAL, TYPALIGN_DOUBLE))},
								  NULL, true, 0),
					 (int) n, parts, CurrentMemoryContext);
	for (i = 0; i < n; i++)
		if (parts[i] == (Datum) 0)
			elog(ERROR, "message at seq " INT64_FORMAT " of session \"%s\" has no rows in the log",
				 DatumGetInt64(seqs[i]), owner);
	pfree(seqs);
	return parts;
}

/*
 * Row `row` of t (MNEMO_MESSAGE_FIELDS) beside its parts array as a row of
 * mnemo.message_with_parts into the function's result.
 */
void
MnemoPutWithParts(FunctionCallInfo fcinfo, SPITupleTable *t, uint64 row, Datum parts)
{
	Datum		values[FLAT_MESSAGE_COLUMNS + 1];
	bool		nulls[FLAT_MESSAGE_COLUMNS + 1];

	if (t->tupdesc->natts != FLAT_MESSAGE_COLUMNS)
		elog(ERROR, "a message row of %d columns where %d are read", t->tupdesc->natts,
			 FLAT_MESSAGE_COLUMNS);
	heap_deform_tuple(t->vals[row], t->tupdesc, values, nulls);
	values[FLAT_MESSAGE_COLUMNS] = parts;
	nulls[FLAT_MESSAGE_COLUMNS] = false;
	MnemoResultPut(fcinfo, FLAT_MESSAGE_COLUMNS + 1, values, nulls);
}

/*
 * Rows 0 .. n - 1 of t (MNEMO_MESSAGE_FIELDS), session owner's messages,
 * each beside its parts array into the function's result; t is freed.  A
 * caller reads a range in chunks of MNEMO_READ_CHUNK seqs, so that what it holds
 * besides the result is bounded.
 */
void
MnemoPutMessagesWithParts(FunctionCallInfo fcinfo, SPITupleTable *t, uint64 n, const char *owner,
						  const char *tenant)
{
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "mnemo messages with parts",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext oldcxt = MemoryContextSwitchTo(cxt);
	Datum	   *parts = MnemoPartsOfRows(t, n, owner, tenant);
	uint64		row;

	for (row = 0; row < n; row++)
		MnemoPutWithParts(fcinfo, t, row, parts[row]);
	MemoryContextSwitchTo(oldcxt);
	MemoryContextDelete(cxt);
	SPI_freetuptable(t);
}

/*
 * InitMaterializedSRF, but with the tuplestore's rows in a generation
 * context.  A tuplestore counts what its rows take against work_mem, and
 * an allocation set rounds each up to a power of two: a row of 4.2 kB (a
 * tool result) takes 8 kB, so the 2,333 rows of a history of 2,000
 * messages went past the default 4 MB into a temporary file, written and
 * read back (16% of the read's time, bench/profiles/reads.txt).  A
 * generation context takes each row's size, and every row lives as long
 * as the result.
 */
static void
InitResult(FunctionCallInfo fcinfo)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemoryContext storecxt;
	MemoryContext oldcxt;
	TupleDesc	desc;

	if (rsinfo == NULL || !IsA(rsinfo, ReturnSetInfo))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("set-valued function called in context that cannot accept a set")));
	if (!(rsinfo->allowedModes & SFRM_Materialize))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("materialize mode required, but it is not allowed in this context")));
	storecxt = GenerationContextCreate(rsinfo->econtext->ecxt_per_query_memory,
									  "mnemo messages result", ALLOCSET_DEFAULT_SIZES);
	oldcxt = MemoryContextSwitchTo(storecxt);
	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	rsinfo->setResult = tuplestore_begin_heap((rsinfo->allowedModes & SFRM_Materialize_Random) != 0,
											  false, work_mem);
	rsinfo->returnMode = SFRM_Materialize;
	rsinfo->setDesc = desc;
	MemoryContextSwitchTo(oldcxt);
}

/*
 * The messages of the line with their parts into the function's result:
 * each segment i from after[i] (exclusive; PG_INT64_MAX reads none of it)
 * to its end, in chunks.  Rows of mnemo.message_flat, or as_json rows of
 * mnemo.message_with_parts.  Inside the call's SPI frame (MnemoConnect).
 */
static void
ResultMessages(FunctionCallInfo fcinfo, MnemoLine *line, const int64 *after, bool as_json)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			natts = as_json ? FLAT_MESSAGE_COLUMNS + 1 : FLAT_MESSAGE_COLUMNS + FLAT_PART_COLUMNS;
	FlatResult	r = {0};
	int			i;

	InitResult(fcinfo);
	if (rsinfo->setDesc->natts != natts)
		elog(ERROR, "a message row of %d columns where %d are read", rsinfo->setDesc->natts, natts);
	r.store = rsinfo->setResult;
	r.desc = rsinfo->setDesc;
	r.as_json = as_json;
	r.tenant = CStringGetTextDatum(line->tenant);
	r.msgcxt = AllocSetContextCreate(CurrentMemoryContext, "mnemo messages message",
									 ALLOCSET_DEFAULT_SIZES);
	r.rowcxt = AllocSetContextCreate(CurrentMemoryContext, "mnemo messages row",
									 ALLOCSET_DEFAULT_SIZES);
	initStringInfo(&r.content);
	for (i = 0; i < line->nsegs; i++)
	{
		MnemoSegment *seg = &line->segs[i];
		int64		from = Max(after[i], seg->from - 1);
		int64		end = Min(seg->to, line->last_seq);	/* the own segment's is open */

		while (from < end)
		{
			int64		to = end - from > MNEMO_READ_CHUNK ? from + MNEMO_READ_CHUNK : end;

			ReadChunk(&r, seg->owner, from, to);
			from = to;
		}
	}
	MemoryContextDelete(r.msgcxt);
	MemoryContextDelete(r.rowcxt);
}

PG_FUNCTION_INFO_V1(mnemo_get_messages_flat);
Datum
mnemo_get_messages_flat(PG_FUNCTION_ARGS)
{
	MnemoCall	call;
	MnemoLine	line;
	int64		since;
	int64	   *after;
	int			i;

	since = MnemoOpenRead(fcinfo, &call, &line);
	after = palloc(sizeof(int64) * Max(line.nsegs, 1));
	for (i = 0; i < line.nsegs; i++)
		after[i] = since;
	ResultMessages(fcinfo, &line, after, false);
	MnemoFinish(&call);
	return (Datum) 0;
}

/*
 * The messages with their parts as a jsonb array each, built in C from the
 * rows get_messages_flat reads: a correlated jsonb_agg per message cost
 * twice the flat read.
 */
PG_FUNCTION_INFO_V1(mnemo_get_messages_with_parts);
Datum
mnemo_get_messages_with_parts(PG_FUNCTION_ARGS)
{
	MnemoCall	call;
	MnemoLine	line;
	int64		since;
	int64	   *after;
	int			i;

	since = MnemoOpenRead(fcinfo, &call, &line);
	after = palloc(sizeof(int64) * Max(line.nsegs, 1));
	for (i = 0; i < line.nsegs; i++)
		after[i] = since;
	ResultMessages(fcinfo, &line, after, true);
	MnemoFinish(&call);
	return (Datum) 0;
}

/*
 * The last "limit" messages of the line (all when NULL), oldest first: the
 * segments newest first, each asked for what is still missing.
 */
PG_FUNCTION_INFO_V1(mnemo_history);
Datum
mnemo_history(PG_FUNCTION_ARGS)
{
	Oid			types[5] = {TEXTOID, TEXTOID, INT8OID, INT8OID, INT8OID};
	MnemoCall	call;
	MnemoLine	line;
	int64		remaining;
	int64	   *firsts;
	int			i;

	if (!PG_ARGISNULL(1) && PG_GETARG_INT32(1) < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("limit must not be negative")));
	remaining = PG_ARGISNULL(1) ? PG_INT64_MAX : PG_GETARG_INT32(1);

	(void) MnemoConnectRead(fcinfo, &call, &line);

	/*
	 * Newest segment first, where the last "limit" messages begin: the
	 * first seq each segment gives (an index-only look at seqs).  Then the
	 * messages themselves, oldest segment first, straight into the result.
	 */
	MnemoPrepare(&history_first_plan,
				 "SELECT min(seq), count(*) FROM (SELECT m.seq FROM mnemo.messages m "
				 "WHERE m.session_id = $1 AND m.tenant = $2 AND m.seq >= $3 AND m.seq <= $4 "
				 "ORDER BY m.seq DESC LIMIT $5) h",
				 5, types);
	firsts = palloc(sizeof(int64) * Max(line.nsegs, 1));
	for (i = line.nsegs; i-- > 0;)
	{
		MnemoSegment *seg = &line.segs[i];
		bool		none;

		firsts[i] = 0;
		if (remaining == 0)
			continue;
		MnemoExecute(history_first_plan,
					 (Datum[]) {CStringGetTextDatum(seg->owner), CStringGetTextDatum(line.tenant),
					 Int64GetDatum(seg->from), Int64GetDatum(seg->to), Int64GetDatum(remaining)},
					 NULL, true, 0);
		firsts[i] = MnemoGetInt64(0, 1, &none);
		if (none)
			firsts[i] = 0;
		remaining -= MnemoGetInt64(0, 2, NULL);
	}
	for (i = 0; i < line.nsegs; i++)
		firsts[i] = firsts[i] > 0 ? firsts[i] - 1 : PG_INT64_MAX;
	ResultMessages(fcinfo, &line, firsts, true);
	MnemoFinish(&call);
	return (Datum) 0;
}
