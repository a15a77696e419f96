/*
 * insert_direct.c
 *		A session's rows written as COPY writes them: the table AM's
 *		multi-row insert, the executor's CHECK and NOT NULL tests and its
 *		index inserts, with no statement planned or executor started
 *		(MnemoInsertRows).
 *
 * On a plain layout every row of an append went through an INSERT ...
 * SELECT unnest($k): its executor start-up, the arrays built for its
 * parameters and the projection out of them took as much of an append's
 * backend time as the heap and index inserts themselves
 * (bench/profiles/append_lock.txt).  Here the rows go from the caller's
 * Datums into slots, checked by the ExecConstraints an INSERT would call,
 * then to table_multi_insert as COPY buffers them (one WAL record and one
 * buffer lock a page of rows: 5% less backend CPU a turn and 10% a
 * 100-message call than a table_tuple_insert a row, doc/benchmarks.md),
 * and each into the indexes by ExecInsertIndexTuples.
 *
 * Only where the two ways cannot be told apart: a plain table (not
 * partitioned, not a Citus table: MnemoInsertRows asks), without
 * triggers (an operator's trigger fires for every row, as it would for an
 * INSERT), without FORCE ROW LEVEL SECURITY (the owner writes, and its
 * writes are under no policy otherwise), and whose columns the statement
 * leaves out default to constants.  Any other table gets false, and the
 * caller writes through SQL.  What a direct write does not pass through is
 * the executor's hooks: pg_stat_statements and auto_explain with their
 * nested statements tracked no longer see an append's INSERTs
 * (doc/operations.md).
 *
 * One thing an INSERT would not do: a long value in a short row is stored
 * compressed (CompressValues), which no reader can tell from a value the
 * toaster compressed.
 *
 * What the table looks like (its OID, where each column goes, the
 * constant defaults, the columns it may compress) is kept per backend until
 * a relcache invalidation of the table.
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/heaptoast.h"
#include "access/htup_details.h"
#include "access/sysattr.h"
#include "access/toast_internals.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/readfuncs.h"
#include "optimizer/optimizer.h"
#include "rewrite/rewriteHandler.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/relcache.h"

#include "mnemo.h"
#include "core/insert_direct.h"

/* a batch this large writes through a bulk-insert ring, as COPY does */
#define BULK_ROWS 1000

/* rows handed to the table at once, at most, as COPY buffers them */
#define BUFFERED_ROWS 1000
#define BUFFERED_BYTES (64 * 1024)

/*
 * A value this long of a compressible column is stored compressed
 * (CompressValues).  Shorter ones gain little past the 8 bytes of a
 * compressed value's header and the alignment a 1-byte header avoids.
 */
#define MNEMO_COMPRESS_MIN 256

typedef struct MnemoDirectInsert
{
	MnemoRowsInsert *ins;
	bool		valid;			/* false: look at the table again */
	bool		stale;			/* an invalidation came while it was looked at */
	Oid			relid;
	bool		direct;			/* the table may be written here */
	MemoryContext cxt;			/* what follows */
	int			natts;
	AttrNumber	session_att;	/* 0-based */
	AttrNumber	tenant_att;
	AttrNumber *atts;			/* ins->columns[c]'s */
	Datum	   *defaults;		/* every column's value unless set: a default or NULL */
	bool	   *default_nulls;
	int			nchecks;		/* the table's CHECK constraints, read and planned */
	Expr	  **checks;
	int			ncompress;		/* the columns CompressValues compresses */
	AttrNumber *compress;		/* 0-based */
} MnemoDirectInsert;

/* the tables looked at, for the relcache callback (two today) */
#define MAX_DIRECT 8
static MnemoDirectInsert *looked[MAX_DIRECT];
static int	nlooked = 0;

static void
ForgetTable(Datum arg, Oid relid)
{
	int			i;

	for (i = 0; i < nlooked; i++)
		if (relid == InvalidOid || relid == looked[i]->relid)
		{
			looked[i]->valid = false;
			looked[i]->stale = true;
		}
}

static MnemoDirectInsert *
Descriptor(MnemoRowsInsert *ins)
{
	MnemoDirectInsert *d;

	if (ins->direct != NULL)
		return ins->direct;
	if (nlooked == MAX_DIRECT)
		elog(ERROR, "too many tables written directly");
	if (nlooked == 0)
		CacheRegisterRelcacheCallback(ForgetTable, (Datum) 0);
	d = MemoryContextAllocZero(TopMemoryContext, sizeof(MnemoDirectInsert));
	d->ins = ins;
	d->cxt = AllocSetContextCreate(CacheMemoryContext, "mnemo direct insert",
								   ALLOCSET_SMALL_SIZES);
	looked[nlooked++] = d;
	ins->direct = d;
	return d;
}

/* attribute number (0-based) of the column name of rel, of type type */
static AttrNumber
Column(Relation rel, const char *name, Oid type)
{
	TupleDesc	desc = RelationGetDescr(rel);
	int			i;

	for (i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (!att->attisdropped && strcmp(NameStr(att->attname), name) == 0)
		{
			if (att->atttypid != type)
				elog(ERROR, "column \"%s\" of \"%s\" is of type %s, not %s", name,
					 RelationGetRelationName(rel), format_type_be(att->atttypid),
					 format_type_be(type));
			return (AttrNumber) i;
		}
	}
	elog(ERROR, "table \"%s\" has no column \"%s\"", RelationGetRelationName(rel), name);
	return InvalidAttrNumber;	/* keep the compiler quiet */
}

/*
 * Look at rel, open: where the statement's columns go, and whether every
 * other column's default is a constant (a NULL without one).
 */
static void
LookAt(MnemoDirectInsert *d, Relation rel)
{
	MnemoRowsInsert *ins = d->ins;
	TupleDesc	desc = RelationGetDescr(rel);
	bool	   *set;
	MemoryContext old;
	Bitmapset  *indexed;
	int			c;
	int			i;

	/* valid at the end, unless an error or an invalidation came meanwhile */
	d->valid = false;
	d->stale = false;
	MemoryContextReset(d->cxt);
	d->relid = RelationGetRelid(rel);
	d->direct = rel->rd_rel->relkind == RELKIND_RELATION && rel->trigdesc == NULL &&
		!rel->rd_rel->relforcerowsecurity;
	old = MemoryContextSwitchTo(d->cxt);
	d->natts = desc->natts;
	d->session_att = Column(rel, "session_id", TEXTOID);
	d->tenant_att = Column(rel, "tenant", TEXTOID);
	d->atts = palloc(sizeof(AttrNumber) * ins->ncols);
	set = palloc0(sizeof(bool) * desc->natts);
	set[d->session_att] = set[d->tenant_att] = true;
	for (c = 0; c < ins->ncols; c++)
		set[d->atts[c] = Column(rel, ins->columns[c], ins->types[c])] = true;
	d->defaults = palloc0(sizeof(Datum) * desc->natts);
	d->default_nulls = palloc(sizeof(bool) * desc->natts);
	for (i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		Node	   *expr;

		d->default_nulls[i] = true;
		if (set[i] || att->attisdropped)
			continue;
		if (att->attgenerated)
		{
			d->direct = false;
			continue;
		}
		expr = build_column_default(rel, i + 1);
		if (expr == NULL)
			continue;
		expr = (Node *) expression_planner((Expr *) expr);
		if (!IsA(expr, Const))
		{
			d->direct = false;
			continue;
		}
		d->default_nulls[i] = ((Const *) expr)->constisnull;
		if (!d->default_nulls[i])
			d->defaults[i] = datumCopy(((Const *) expr)->constvalue, att->attbyval, att->attlen);
	}

	/*
	 * ExecConstraints would read and plan each CHECK again for every call
	 * (ExecRelCheck, once per ResultRelInfo): 3% of an append's backend.
	 */
	d->nchecks = desc->constr ? desc->constr->num_check : 0;
	d->checks = palloc(sizeof(Expr *) * Max(d->nchecks, 1));
	for (i = 0; i < d->nchecks; i++)
		d->checks[i] = expression_planner(stringToNode(desc->constr->check[i].ccbin));

	/* compressible (storage extended or main), and in no index */
	indexed = RelationGetIndexAttrBitmap(rel, INDEX_ATTR_BITMAP_ALL);
	d->ncompress = 0;
	d->compress = palloc(sizeof(AttrNumber) * desc->natts);
	for (i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (!att->attisdropped && att->attlen == -1 &&
			(att->attstorage == TYPSTORAGE_EXTENDED || att->attstorage == TYPSTORAGE_MAIN) &&
			!bms_is_member(i + 1 - FirstLowInvalidHeapAttributeNumber, indexed))
			d->compress[d->ncompress++] = (AttrNumber) i;
	}
	MemoryContextSwitchTo(old);
	d->valid = !d->stale;
}

/*
 * Compress the slot's long values of the columns d->compress.  PostgreSQL
 * compresses a value only when its row passes TOAST_TUPLE_THRESHOLD (about
 * 2 kB), which most parts never reach; it keeps a compressed value in a
 * shorter row as it is, and every reader expands it, so the rows read the
 * same either way.  These values PostgreSQL would have left as they are go
 * by the column's method if it names one (ALTER TABLE ... SET COMPRESSION),
 * else by lz4 where the server has it: on the transcripts of ../shared/data
 * it kept more of them smaller than pglz and reads back faster.  Values in
 * longer rows are left to the toaster and default_toast_compression, as
 * before: on those transcripts pglz kept large tool outputs 18% smaller than
 * lz4 (doc/benchmarks.md, "Parts compressed").  A value that does not shrink
 * is kept as it was (toast_compress_datum).  Values of an indexed column are
 * left alone: an index entry would keep the compressed form, and each
 * comparison would expand it.
 */
#ifdef USE_LZ4
#define SHORT_ROW_COMPRESSION TOAST_LZ4_COMPRESSION
#else
#define SHORT_ROW_COMPRESSION InvalidCompressionMethod	/* the default */
#endif

/* the slot's value of column a if it is long enough to compress, else NULL */
static struct varlena *
LongValue(TupleTableSlot *slot, AttrNumber a)
{
	struct varlena *v;

	if (slot->tts_isnull[a])
		return NULL;
	v = (struct varlena *) DatumGetPointer(slot->tts_values[a]);
	if (VARATT_IS_EXTERNAL(v) || VARATT_IS_COMPRESSED(v) ||
		VARSIZE_ANY_EXHDR(v) < MNEMO_COMPRESS_MIN)
		return NULL;
	return v;
}

static void
CompressValues(MnemoDirectInsert *d, Relation rel, TupleTableSlot *slot)
{
	TupleDesc	desc = RelationGetDescr(rel);
	Size		len = offsetof(HeapTupleHeaderData, t_bits);
	int			i;

	/* most rows (a message's) have no long value: they are not measured */
	for (i = 0; i < d->ncompress; i++)
		if (LongValue(slot, d->compress[i]) != NULL)
			break;
	if (i == d->ncompress)
		return;

	/* the row's length as heap_prepare_insert will measure it */
	for (i = 0; i < desc->natts; i++)
		if (slot->tts_isnull[i])
		{
			len += BITMAPLEN(desc->natts);
			break;
		}
	len = MAXALIGN(len) + heap_compute_data_size(desc, slot->tts_values, slot->tts_isnull);
	if (len > TOAST_TUPLE_THRESHOLD)
		return;

	for (i = 0; i < d->ncompress; i++)
	{
		AttrNumber	a = d->compress[i];
		char		method = TupleDescAttr(desc, a)->attcompression;
		struct varlena *v = LongValue(slot, a);
		Datum		compressed;

		if (v == NULL)
			continue;
		compressed = toast_compress_datum(PointerGetDatum(v),
										  CompressionMethodIsValid(method) ? method :
										  SHORT_ROW_COMPRESSION);
		if (DatumGetPointer(compressed) != NULL)
			slot->tts_values[a] = compressed;
	}
}

/*
 * Hand the nslots rows in slots to the table at once, then put each into
 * the indexes, as COPY does (CopyMultiInsertBufferFlush): one WAL record and
 * one buffer lock per page of rows, not per row.
 */
static void
InsertBuffered(Relation rel, ResultRelInfo *rri, EState *estate, TupleTableSlot **slots,
			   int nslots, CommandId cid, BulkInsertState bistate)
{
	int			i;

	table_multi_insert(rel, slots, nslots, cid, 0, bistate);
	for (i = 0; i < nslots; i++)
	{
		if (rri->ri_NumIndices > 0)
		{
			MemoryContext old = MemoryContextSwitchTo(GetPerTupleMemoryContext(estate));

			list_free(ExecInsertIndexTuples(rri, slots[i], estate, false, false, NULL, NIL));
			MemoryContextSwitchTo(old);
			ResetPerTupleExprContext(estate);
		}
		ExecClearTuple(slots[i]);
	}
}

/*
 * Insert n rows of session_id (tenant) into ins's table, row i's other
 * columns what fill(arg, i, ...) sets, if the table may be written here;
 * false, having written nothing, if not.  The caller holds SPI and the
 * session lock; a taken id is the unique index's 23505, as from an INSERT.
 * The rows are visible to the call's next statement (CommandCounterIncrement).
 */
bool
MnemoInsertDirect(MnemoRowsInsert *ins, const char *session_id, const char *tenant, int n,
				  MnemoRowFill fill, void *arg)
{
	MnemoDirectInsert *d = Descriptor(ins);
	Oid			relid = d->valid ? d->relid :
		get_relname_relid(ins->table, get_namespace_oid("mnemo", false));
	Relation	rel;
	AclResult	acl;
	EState	   *estate;
	ResultRelInfo *rri;
	TupleTableSlot **slots;
	int			nslots;
	int			nbuffered = 0;
	MemoryContext rowscxt;
	BulkInsertState bistate;
	CommandId	cid;
	Datum	   *row;
	bool	   *rownulls;
	Datum		session;
	Datum		tenant_datum;
	int			r;
	int			c;

	if (!OidIsValid(relid))
		elog(ERROR, "table mnemo.%s does not exist", ins->table);
	/* taking the lock reads the invalidations that came before it */
	rel = table_open(relid, RowExclusiveLock);
	if (!d->valid || d->relid != relid)
		LookAt(d, rel);
	if (!d->direct)
	{
		table_close(rel, NoLock);
		return false;
	}
	/* what the executor checks of an INSERT's target (the owner's, as a rule) */
	acl = pg_class_aclcheck(relid, GetUserId(), ACL_INSERT);
	if (acl != ACLCHECK_OK)
		aclcheck_error(acl, OBJECT_TABLE, RelationGetRelationName(rel));

	estate = CreateExecutorState();
	rri = makeNode(ResultRelInfo);
	InitResultRelInfo(rri, rel, 0, NULL, 0);
	if (d->nchecks > 0)
	{
		MemoryContext old = MemoryContextSwitchTo(estate->es_query_cxt);
		int			i;

		rri->ri_ConstraintExprs = palloc(sizeof(ExprState *) * d->nchecks);
		for (i = 0; i < d->nchecks; i++)
			rri->ri_ConstraintExprs[i] = ExecInitExpr(d->checks[i], NULL);
		MemoryContextSwitchTo(old);
	}
	ExecOpenIndices(rri, false);
	nslots = Min(n, BUFFERED_ROWS);
	slots = palloc(sizeof(TupleTableSlot *) * nslots);
	for (r = 0; r < nslots; r++)
		slots[r] = table_slot_create(rel, NULL);
	/* the buffered rows' values, until the table has them */
	rowscxt = AllocSetContextCreate(CurrentMemoryContext, "mnemo direct insert rows",
									ALLOCSET_DEFAULT_SIZES);
	bistate = n >= BULK_ROWS ? GetBulkInsertState() : NULL;
	cid = GetCurrentCommandId(true);
	row = palloc(sizeof(Datum) * ins->ncols);
	rownulls = palloc(sizeof(bool) * ins->ncols);
	session = CStringGetTextDatum(session_id);
	tenant_datum = CStringGetTextDatum(tenant);

	for (r = 0; r < n; r++)
	{
		TupleTableSlot *slot = slots[nbuffered];
		MemoryContext old;

		CHECK_FOR_INTERRUPTS();
		memcpy(slot->tts_values, d->defaults, sizeof(Datum) * d->natts);
		memcpy(slot->tts_isnull, d->default_nulls, sizeof(bool) * d->natts);
		slot->tts_values[d->session_att] = session;
		slot->tts_isnull[d->session_att] = false;
		slot->tts_values[d->tenant_att] = tenant_datum;
		slot->tts_isnull[d->tenant_att] = false;
		old = MemoryContextSwitchTo(rowscxt);
		fill(arg, r, row, rownulls);
		for (c = 0; c < ins->ncols; c++)
		{
			slot->tts_values[d->atts[c]] = row[c];
			slot->tts_isnull[d->atts[c]] = rownulls[c];
		}
		ExecStoreVirtualTuple(slot);
		if (rel->rd_att->constr)
			ExecConstraints(rri, slot, estate);
		CompressValues(d, rel, slot);
		MemoryContextSwitchTo(old);
		ResetPerTupleExprContext(estate);
		if (++nbuffered == nslots || r == n - 1 ||
			MemoryContextMemAllocated(rowscxt, false) >= BUFFERED_BYTES)
		{
			InsertBuffered(rel, rri, estate, slots, nbuffered, cid, bistate);
			MemoryContextReset(rowscxt);
			nbuffered = 0;
		}
	}

	if (bistate)
	{
		FreeBulkInsertState(bistate);
		table_finish_bulk_insert(rel, 0);
	}
	for (r = 0; r < nslots; r++)
		ExecDropSingleTupleTableSlot(slots[r]);
	MemoryContextDelete(rowscxt);
	ExecCloseIndices(rri);
	FreeExecutorState(estate);
	table_close(rel, NoLock);
	pfree(slots);
	pfree(row);
	pfree(rownulls);
	CommandCounterIncrement();
	return true;
}
