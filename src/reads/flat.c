/*
 * flat.c
 *		get_messages_flat: a session's messages with their parts as plain
 *		rows, one per part with its message's columns beside it.
 *
 * get_messages_with_parts builds a jsonb array per message, and that
 * assembly is most of what it costs.  This read returns what is stored: a
 * part's content is its stored object, its status columns stand beside it,
 * and a message without parts is one row whose part columns are NULL; rows
 * come in (seq, part_index) order.  A history then loads at about the cost of
 * a SELECT of a hand-written table (bench/append, bench/profiles/reads.txt).
 *
 * Content goes out as json, printed by MnemoJsonbAppendText: jsonb_out's
 * text, without its byte-at-a-time escaping, which was the largest single
 * cost of sending parts.
 *
 * How the rows are found.  The live line is read segment by segment, as the
 * other reads do (lineage.c), and each segment in chunks of FLAT_CHUNK seqs,
 * which bounds the memory a read holds besides its result.  A chunk is two
 * statements, each filtered by the one session that holds the rows: the
 * messages of the seq range, then their parts, which are keyed by message id
 * (session_id, message_id, part_index), not by seq.  When the chunk's ids
 * ascend with its seqs (ids mnemo makes are time-ordered, and imports keep
 * them in order) its parts are one index range scan between the first and
 * the last id, in the result's order, and each goes into the result as the
 * executor hands it over (StreamParts); the range also holds the parts of
 * any other message whose id sorts between, which are skipped (none, for ids
 * that ascend with seqs throughout the session, as time-ordered ones do;
 * a chunk whose first id is below an id of the chunks before it is looked
 * up by id instead, so that no part is scanned by two ranges).
 * Otherwise the parts are looked up by id, kept and sorted by (seq,
 * part_index) (SortParts).  A hash on the message id
 * puts each part beside its message.  A join in SQL was planned as a nested
 * loop of one index descent per message, or a hash join under a sort of the
 * whole result, each costing more than the rest of the read.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/tuplestore.h"
#include "utils/varlena.h"

#include "mnemo.h"

/* seqs per chunk of a segment */
#define FLAT_CHUNK 1024

/* the message columns of message_flat, then the part columns */
#define FLAT_MESSAGE_COLUMNS 17
#define FLAT_PART_COLUMNS 8
#define FLAT_CONTENT (FLAT_MESSAGE_COLUMNS + 2)

static SPIPlanPtr messages_plan;
static SPIPlanPtr parts_range_plan;
static SPIPlanPtr parts_ids_plan;

/* the parts statements select message_id, then the part columns */
#define FLAT_PARTS_SELECT \
	"SELECT p.message_id, p.id, p.part_index, " MNEMO_PART_CONTENT ", p.tool_state, p.compacted_at, " \
	"p.started_at, p.completed_at, p.token_estimate FROM mnemo.message_parts p " \
	"WHERE p.session_id = $1 AND "

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
	MemoryContext chunkcxt;		/* reset after each chunk */
	MemoryContext rowcxt;		/* reset after each row */
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

/*
 * The message in r->values with a part as a row of the result: the part's
 * columns as its statement gives them (message_id first, FLAT_PARTS_SELECT),
 * or NULL for a message without parts.
 */
static void
PutRow(FlatResult *r, Datum *part, bool *part_nulls)
{
	MemoryContext oldcxt = MemoryContextSwitchTo(r->rowcxt);

	if (part == NULL)
		memset(r->nulls + FLAT_MESSAGE_COLUMNS, true, FLAT_PART_COLUMNS);
	else
	{
		memcpy(r->values + FLAT_MESSAGE_COLUMNS, part + 1, sizeof(Datum) * FLAT_PART_COLUMNS);
		memcpy(r->nulls + FLAT_MESSAGE_COLUMNS, part_nulls + 1, sizeof(bool) * FLAT_PART_COLUMNS);
		resetStringInfo(&r->content);
		MnemoJsonbAppendText(&r->content, DatumGetJsonbP(r->values[FLAT_CONTENT]));
		r->values[FLAT_CONTENT] = PointerGetDatum(cstring_to_text_with_len(r->content.data,
																			r->content.len));
	}
	tuplestore_putvalues(r->store, r->desc, r->values, r->nulls);
	MemoryContextSwitchTo(oldcxt);
	MemoryContextReset(r->rowcxt);
}

/* Message m of the chunk into r->values: the message columns of the next rows. */
static void
SetMessage(FlatResult *r, FlatChunk *c, int m)
{
	heap_deform_tuple(c->msgs[m].tuple, c->mt->tupdesc, r->values, r->nulls);
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

	MnemoPrepare(&parts_range_plan,
				 FLAT_PARTS_SELECT "p.message_id >= $2 AND p.message_id <= $3 "
				 "ORDER BY p.message_id, p.part_index",
				 3, (Oid[]) {TEXTOID, TEXTOID, TEXTOID});
	stream.pub.receiveSlot = StreamPart;
	stream.pub.rStartup = StreamStartup;
	stream.pub.rShutdown = StreamNothing;
	stream.pub.rDestroy = StreamNothing;
	stream.pub.mydest = DestTuplestore;	/* its rows end in one */
	stream.r = r;
	stream.c = c;
	MnemoExecuteTo(parts_range_plan,
				   (Datum[]) {owner, CStringGetTextDatum(c->msgs[0].id),
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
	MnemoPrepare(&parts_ids_plan, FLAT_PARTS_SELECT "p.message_id = ANY ($2)",
				 2, (Oid[]) {TEXTOID, TEXTARRAYOID});
	nrows = MnemoExecute(parts_ids_plan,
						 (Datum[]) {owner, MnemoArray(TEXTOID, ids, NULL, c->nmsgs)},
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
				 "SELECT m.id, m.session_id, m.seq, m.role, m.created_at, m.agent, m.model_id, "
				 "m.provider_id, m.run_id, m.is_summary, m.tokens_input, m.tokens_output, "
				 "m.tokens_cache_read, m.tokens_cache_write, m.tokens_reasoning, m.cost, "
				 "m.finish_reason FROM mnemo.messages m "
				 "WHERE m.session_id = $1 AND m.seq > $2 AND m.seq <= $3",
				 3, (Oid[]) {TEXTOID, INT8OID, INT8OID});
	c.nmsgs = (int) MnemoExecute(messages_plan,
								 (Datum[]) {owner_datum, Int64GetDatum(after), Int64GetDatum(to)},
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
	}
	SPI_freetuptable(c.mt);
	MemoryContextSwitchTo(oldcxt);
	MemoryContextReset(r->chunkcxt);
}

PG_FUNCTION_INFO_V1(mnemo_get_messages_flat);
Datum
mnemo_get_messages_flat(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	FlatResult	r;
	MnemoCall	call;
	MnemoLine	line;
	int64		since;
	int			i;

	since = MnemoOpenRead(fcinfo, &call, &line);
	InitMaterializedSRF(fcinfo, 0);
	if (rsinfo->setDesc->natts != FLAT_MESSAGE_COLUMNS + FLAT_PART_COLUMNS)
		elog(ERROR, "get_messages_flat: mnemo.message_flat has %d columns",
			 rsinfo->setDesc->natts);
	r.store = rsinfo->setResult;
	r.desc = rsinfo->setDesc;
	r.chunkcxt = AllocSetContextCreate(CurrentMemoryContext, "get_messages_flat chunk",
									   ALLOCSET_DEFAULT_SIZES);
	r.rowcxt = AllocSetContextCreate(CurrentMemoryContext, "get_messages_flat row",
									 ALLOCSET_DEFAULT_SIZES);
	initStringInfo(&r.content);
	for (i = 0; i < line.nsegs; i++)
	{
		MnemoSegment *seg = &line.segs[i];
		int64		after = Max(since, seg->from - 1);
		int64		end = Min(seg->to, line.last_seq);	/* the own segment's is open */

		r.has_top = false;		/* another session's ids */
		while (after < end)
		{
			int64		to = end - after > FLAT_CHUNK ? after + FLAT_CHUNK : end;

			ReadChunk(&r, seg->owner, after, to);
			after = to;
		}
	}
	MnemoFinish(&call);
	return (Datum) 0;
}
