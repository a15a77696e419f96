/*
 * flat.c
 *		get_messages_flat: a session's messages with their parts as plain
 *		rows, one per part with its message's columns beside it; and the
 *		same scan for get_messages_with_parts and history, which put each
 *		message's parts into a jsonb array instead (MnemoResultMessages).
 *
 * get_messages_flat returns what is stored: a part's content is its stored
 * object, its status columns stand beside it, and a message without parts is
 * one row whose part columns are NULL; rows come in (seq, part_index) order.
 * Content goes out as json, printed by MnemoJsonbAppendText: jsonb_out's
 * text, without its byte-at-a-time escaping, which was the largest single
 * cost of sending parts.  get_messages_with_parts builds each message's
 * array in C as MNEMO_PARTS_JSON defines it (the stored object with the
 * live columns laid over it), from the same rows, as a jsonb value built
 * once: a correlated jsonb_agg per message cost twice the flat read, and the
 * array's jsonb_out is now most of what the read costs over the flat one
 * (bench/profiles/reads.txt).
 *
 * How the rows are found.  The live line is read segment by segment, as the
 * other reads do (lineage.c), and each segment in chunks of FLAT_CHUNK seqs,
 * which bounds the memory a read holds besides its result.  A chunk is two
 * statements, each filtered by the one session that holds the rows (its id
 * and the line's tenant, which is every segment owner's): the messages of
 * the seq range, then their parts, which are keyed by message id
 * (session_id, tenant, message_id, part_index), not by seq.  When the
 * chunk's ids ascend with its seqs (ids mnemo makes are time-ordered, and
 * imports keep them in order) its parts are one index range scan between
 * the first and the last id, in the result's order (planned for its first
 * rows, so the index gives the order rather than a sort of every row), and
 * each goes into the result as the executor hands it over (StreamParts);
 * the range also holds the parts of any other message whose id sorts
 * between, which are skipped (none, for ids that ascend with seqs
 * throughout the session, as time-ordered ones do; a chunk whose first id
 * is below an id of the chunks before it is looked up by id instead, so
 * that no part is scanned by two ranges).  Otherwise the parts are looked up by id, kept and sorted
 * by (seq, part_index) (SortParts).  A hash on the message id puts each part
 * beside its message.  A join in SQL was planned as a nested loop of one
 * index descent per message, or a hash join under a sort of the whole
 * result, each costing more than the rest of the read.
 *
 * The result is the function's tuplestore, the one copy of the rows a set
 * in FROM is read from; its rows are kept in a generation context
 * (InitResult), so that work_mem counts their bytes, not powers of two.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
#include "utils/tuplestore.h"
#include "utils/varlena.h"

#include "mnemo.h"
#include "tenancy/tenancy.h"
#include "reads/reads.h"

/* seqs per chunk of a segment */
#define FLAT_CHUNK 1024

/* the message columns of message_flat, then the part columns */
#define FLAT_MESSAGE_COLUMNS 17
#define FLAT_PART_COLUMNS 8
#define FLAT_CONTENT (FLAT_MESSAGE_COLUMNS + 2)

static SPIPlanPtr messages_plan;
static SPIPlanPtr parts_range_plan;
static SPIPlanPtr parts_ids_plan;

/*
 * the parts statements select message_id, then the part columns; $1 and $2
 * are the owner and its tenant
 */
#define FLAT_PARTS_SELECT \
	"SELECT p.message_id, p.id, p.part_index, " MNEMO_PART_CONTENT ", p.tool_state, p.compacted_at, " \
	"p.started_at, p.completed_at, p.token_estimate FROM mnemo.message_parts p " \
	"WHERE p.session_id = $1 AND p.tenant = $2 AND "

typedef struct FlatMessage
{
	HeapTuple	tuple;
	int64		seq;
	char	   *id;
} FlatMessage;

/* a part row SortParts keeps */
typedef struct FlatPart
{
	int			message;		/* index in the chunk's messages, seq order */
	int32		part_index;
	HeapTuple	tuple;
} FlatPart;

/* message id -> index in the chunk's messages */
typedef struct FlatIdEntry
{
	const char *id;
	int			message;
	char		status;
} FlatIdEntry;

#define SH_PREFIX flat_ids
#define SH_ELEMENT_TYPE FlatIdEntry
#define SH_KEY_TYPE const char *
#define SH_KEY id
#define SH_HASH_KEY(tb, key) hash_bytes((const unsigned char *) (key), strlen(key))
#define SH_EQUAL(tb, a, b) (strcmp(a, b) == 0)
#define SH_SCOPE static inline
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"

/* What every chunk of a read writes into. */
typedef struct FlatResult
{
	Tuplestorestate *store;
	TupleDesc	desc;
	Datum		tenant;			/* the line's, every segment owner's */
	MemoryContext chunkcxt;		/* reset after each chunk */
	MemoryContext rowcxt;		/* reset after each row (as_json: message) */
	bool		as_json;		/* a row per message, its parts a jsonb array */
	bool		pending;		/* as_json: the message in values is not put yet */
	JsonbParseState *parts;		/* as_json: its parts so far, in rowcxt */
	StringInfoData content;
	bool		has_top;
	char		top_id[MNEMO_ID_MAX + 1];	/* the greatest message id of the
											 * segment's chunks so far */
	Datum		values[FLAT_MESSAGE_COLUMNS + FLAT_PART_COLUMNS];
	bool		nulls[FLAT_MESSAGE_COLUMNS + FLAT_PART_COLUMNS];
} FlatResult;

/* A chunk's messages, in seq order, and the index of their ids. */
typedef struct FlatChunk
{
	SPITupleTable *mt;
	FlatMessage *msgs;
	int			nmsgs;
	flat_ids_hash *ids;
} FlatChunk;

static int
CompareSeq(const void *a, const void *b)
{
	int64		x = ((const FlatMessage *) a)->seq;
	int64		y = ((const FlatMessage *) b)->seq;

	return (x > y) - (x < y);
}

static int
ComparePart(const void *a, const void *b)
{
	const FlatPart *x = a;
	const FlatPart *y = b;

	if (x->message != y->message)
		return x->message - y->message;
	return (x->part_index > y->part_index) - (x->part_index < y->part_index);
}

/* Compare two ids as the index on message_parts orders them. */
static int
CompareIds(const char *a, const char *b)
{
	return varstr_cmp(a, strlen(a), b, strlen(b), DEFAULT_COLLATION_OID);
}

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
 * A part (as PutRow takes it) into the jsonb array of the message in
 * r->values, as MNEMO_PARTS_JSON makes it: the stored object with the live
 * columns laid over it, content || jsonb_strip_nulls(jsonb_build_object(
 * ...)).  The object's members are pushed, then the columns' (the later
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
	JsonbIterator *it;
	JsonbIteratorToken tok;
	JsonbValue	v;

	if (!JB_ROOT_IS_OBJECT(content))
		elog(ERROR, "the content of part \"%s\" is not an object", TextDatumGetCString(part[1]));
	it = JsonbIteratorInit(&content->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_END_OBJECT)
		pushJsonbValue(&r->parts, tok, tok == WJB_BEGIN_OBJECT ? NULL : &v);
	PushText(r, "id", part[1]);
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
 * columns as its statement gives them (message_id first, FLAT_PARTS_SELECT),
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
 * Message m of the chunk into r->values: the message columns of the next
 * rows; as_json, once the message before it is put, with an empty array.
 */
static void
SetMessage(FlatResult *r, FlatChunk *c, int m)
{
	FlushMessage(r);
	heap_deform_tuple(c->msgs[m].tuple, c->mt->tupdesc, r->values, r->nulls);
	if (r->as_json)
	{
		MemoryContext oldcxt = MemoryContextSwitchTo(r->rowcxt);

		pushJsonbValue(&r->parts, WJB_BEGIN_ARRAY, NULL);
		MemoryContextSwitchTo(oldcxt);
		r->pending = true;
	}
}

/*
 * The parts statement's receiver when its rows come in the result's order
 * (the chunk's ids ascend with its seqs, and the statement orders by
 * message_id, part_index): each row goes into the result as it comes, after
 * the messages without parts before its own.  No copy of the parts is kept.
 */
typedef struct FlatStream
{
	DestReceiver pub;
	FlatResult *r;
	FlatChunk  *c;
	int			next;			/* the first message not yet in the result */
} FlatStream;

static bool
StreamPart(TupleTableSlot *slot, DestReceiver *self)
{
	FlatStream *s = (FlatStream *) self;
	FlatIdEntry *e;

	slot_getallattrs(slot);
	e = flat_ids_lookup(s->c->ids, TextDatumGetCString(slot->tts_values[0]));
	if (e == NULL)
		return true;			/* another message's, within the range of ids */
	if (e->message < s->next - 1)
		elog(ERROR, "get_messages_flat: parts out of order");
	for (; s->next <= e->message; s->next++)
	{
		SetMessage(s->r, s->c, s->next);
		if (s->next < e->message)
			PutRow(s->r, NULL, NULL);
	}
	PutRow(s->r, slot->tts_values, slot->tts_isnull);
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
 * The chunk's parts, ordered by message_id and part_index (its ids ascend,
 * so that is the result's order), straight into the result; then the
 * messages without parts after the last with one.
 */
static void
StreamParts(FlatResult *r, FlatChunk *c, Datum owner)
{
	FlatStream	stream = {{0}};

	MnemoPrepareStream(&parts_range_plan,
					   FLAT_PARTS_SELECT "p.message_id >= $3 AND p.message_id <= $4 "
					   "ORDER BY p.message_id, p.part_index",
					   4, (Oid[]) {TEXTOID, TEXTOID, TEXTOID, TEXTOID});
	stream.pub.receiveSlot = StreamPart;
	stream.pub.rStartup = StreamStartup;
	stream.pub.rShutdown = StreamNothing;
	stream.pub.rDestroy = StreamNothing;
	stream.pub.mydest = DestTuplestore;	/* its rows end in one */
	stream.r = r;
	stream.c = c;
	MnemoExecuteTo(parts_range_plan,
				   (Datum[]) {owner, r->tenant, CStringGetTextDatum(c->msgs[0].id),
				   CStringGetTextDatum(c->msgs[c->nmsgs - 1].id)},
				   NULL, true, &stream.pub);
	for (; stream.next < c->nmsgs; stream.next++)
	{
		SetMessage(r, c, stream.next);
		PutRow(r, NULL, NULL);
	}
}

/*
 * The chunk's parts looked up by id, when its ids do not ascend with its
 * seqs: kept, sorted by (seq, part_index), then put into the result.
 */
static void
SortParts(FlatResult *r, FlatChunk *c, Datum owner)
{
	Datum	   *ids = palloc(sizeof(Datum) * c->nmsgs);
	Datum		part[FLAT_PART_COLUMNS + 1];
	bool		part_nulls[FLAT_PART_COLUMNS + 1];
	SPITupleTable *pt;
	FlatPart   *parts;
	uint64		nrows;
	int			nparts = 0;
	int			i;
	int			k;

	for (i = 0; i < c->nmsgs; i++)
		ids[i] = CStringGetTextDatum(c->msgs[i].id);
	MnemoPrepare(&parts_ids_plan, FLAT_PARTS_SELECT "p.message_id = ANY ($3)",
				 3, (Oid[]) {TEXTOID, TEXTOID, TEXTARRAYOID});
	nrows = MnemoExecute(parts_ids_plan,
						 (Datum[]) {owner, r->tenant, MnemoArray(TEXTOID, ids, NULL, c->nmsgs)},
						 NULL, true, 0);
	MemoryContextSwitchTo(r->chunkcxt);
	pt = SPI_tuptable;
	parts = palloc(sizeof(FlatPart) * Max(nrows, 1));
	for (i = 0; i < (int) nrows; i++)
	{
		bool		isnull;
		char	   *message_id = TextDatumGetCString(heap_getattr(pt->vals[i], 1, pt->tupdesc,
																  &isnull));
		FlatIdEntry *e = flat_ids_lookup(c->ids, message_id);

		if (e == NULL)
			continue;
		parts[nparts].message = e->message;
		parts[nparts].part_index = DatumGetInt32(heap_getattr(pt->vals[i], 3, pt->tupdesc,
															  &isnull));
		parts[nparts].tuple = pt->vals[i];
		nparts++;
	}
	qsort(parts, nparts, sizeof(FlatPart), ComparePart);
	for (i = 0, k = 0; i < c->nmsgs; i++)
	{
		SetMessage(r, c, i);
		if (k == nparts || parts[k].message != i)
			PutRow(r, NULL, NULL);
		for (; k < nparts && parts[k].message == i; k++)
		{
			heap_deform_tuple(parts[k].tuple, pt->tupdesc, part, part_nulls);
			PutRow(r, part, part_nulls);
		}
	}
	SPI_freetuptable(pt);
}

/*
 * The rows of owner's messages after < seq <= to, with their parts, into the
 * result; inside SPI.  Every SPI call returns to SPI's procedure context, so
 * each is followed by a switch back to the chunk's.
 */
static void
ReadChunk(FlatResult *r, const char *owner, int64 after, int64 to)
{
	MemoryContext oldcxt = MemoryContextSwitchTo(r->chunkcxt);
	Datum		owner_datum = CStringGetTextDatum(owner);
	FlatChunk	c;
	bool		ascending = true;
	int			top = 0;
	int			i;

	MnemoPrepare(&messages_plan,
				 "SELECT " MNEMO_MESSAGE_FIELDS " FROM mnemo.messages m "
				 "WHERE m.session_id = $1 AND m.tenant = $2 AND m.seq > $3 AND m.seq <= $4",
				 4, (Oid[]) {TEXTOID, TEXTOID, INT8OID, INT8OID});
	c.nmsgs = (int) MnemoExecute(messages_plan,
								 (Datum[]) {owner_datum, r->tenant, Int64GetDatum(after),
								 Int64GetDatum(to)},
								 NULL, true, 0);
	MemoryContextSwitchTo(r->chunkcxt);
	c.mt = SPI_tuptable;
	if (c.nmsgs > 0)
	{
		c.msgs = palloc(sizeof(FlatMessage) * c.nmsgs);
		for (i = 0; i < c.nmsgs; i++)
		{
			bool		isnull;

			c.msgs[i].tuple = c.mt->vals[i];
			c.msgs[i].id = TextDatumGetCString(heap_getattr(c.mt->vals[i], 1, c.mt->tupdesc,
															&isnull));
			c.msgs[i].seq = DatumGetInt64(heap_getattr(c.mt->vals[i], 3, c.mt->tupdesc, &isnull));
		}
		qsort(c.msgs, c.nmsgs, sizeof(FlatMessage), CompareSeq);
		c.ids = flat_ids_create(CurrentMemoryContext, c.nmsgs, NULL);
		for (i = 0; i < c.nmsgs; i++)
		{
			bool		found;

			flat_ids_insert(c.ids, c.msgs[i].id, &found)->message = i;
			if (ascending && i > 0 && CompareIds(c.msgs[i - 1].id, c.msgs[i].id) >= 0)
				ascending = false;
			if (CompareIds(c.msgs[top].id, c.msgs[i].id) < 0)
				top = i;
		}

		/*
		 * The range of the chunk's ids holds no other chunk's parts when its
		 * ids ascend and start above every id of the chunks before it: the
		 * ranges scanned are then disjoint, and a session whose ids
		 * interleave across chunks is not scanned whole for each of them.
		 */
		if (ascending && (!r->has_top || CompareIds(r->top_id, c.msgs[0].id) < 0))
			StreamParts(r, &c, owner_datum);
		else
			SortParts(r, &c, owner_datum);
		if (!r->has_top || CompareIds(r->top_id, c.msgs[top].id) < 0)
			strlcpy(r->top_id, c.msgs[top].id, sizeof(r->top_id));
		r->has_top = true;
		FlushMessage(r);
	}
	SPI_freetuptable(c.mt);
	MemoryContextSwitchTo(oldcxt);
	MemoryContextReset(r->chunkcxt);
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
void
MnemoResultMessages(FunctionCallInfo fcinfo, MnemoLine *line, const int64 *after, bool as_json)
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
	r.chunkcxt = AllocSetContextCreate(CurrentMemoryContext, "mnemo messages chunk",
									   ALLOCSET_DEFAULT_SIZES);
	r.rowcxt = AllocSetContextCreate(CurrentMemoryContext, "mnemo messages row",
									 ALLOCSET_DEFAULT_SIZES);
	initStringInfo(&r.content);
	for (i = 0; i < line->nsegs; i++)
	{
		MnemoSegment *seg = &line->segs[i];
		int64		from = Max(after[i], seg->from - 1);
		int64		end = Min(seg->to, line->last_seq);	/* the own segment's is open */

		r.has_top = false;		/* another session's ids */
		while (from < end)
		{
			int64		to = end - from > FLAT_CHUNK ? from + FLAT_CHUNK : end;

			ReadChunk(&r, seg->owner, from, to);
			from = to;
		}
	}
	MemoryContextDelete(r.chunkcxt);
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
	MnemoResultMessages(fcinfo, &line, after, false);
	MnemoFinish(&call);
	return (Datum) 0;
}
