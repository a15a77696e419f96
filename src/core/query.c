/*
 * query.c
 *		The one way mnemo functions run SQL: SPI plans prepared once per
 *		backend, executed, results copied into the caller's memory context.
 *
 * Every statement is a fixed string with $n parameters; no SQL is ever built
 * from arguments.  Plans are kept for the life of the backend (SPI_keepplan);
 * the plan cache replans them on its own after DDL.
 *
 * Callers follow one shape:
 *
 *		MemoryContext callcxt = CurrentMemoryContext;
 *		MnemoCall	call;
 *		MnemoConnect(&call);	(tenant.c: the owner's rights, then SPI_connect)
 *		... MnemoExecute(...) ...
 *		result = MnemoResultRow(fcinfo, callcxt, 0);
 *		MnemoFinish(&call);
 *
 * A set-returning function runs its statement with MnemoExecuteResult,
 * whose rows go straight into the function's result set.
 *
 * Plans are custom or generic as the plan cache decides: every statement
 * filters every table by the session id, so either plan touches one
 * session's rows (one partition, one shard).  Citus plans a statement it
 * cannot prune without its parameters' values as prohibitively costly, so
 * the plan cache keeps choosing custom plans for it.  The one exception is
 * the set-based insert (MnemoInsertRows), always generic.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/params.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "mnemo.h"

/*
 * Prepare sql into *slot unless already done, with SPI_prepare_cursor's
 * options.  The plan lives in CacheMemoryContext, so a failure here leaves
 * *slot NULL and the next call tries again.
 */
static void
Prepare(SPIPlanPtr *slot, const char *sql, int nargs, Oid *argtypes, int options)
{
	SPIPlanPtr	plan;

	if (*slot != NULL)
		return;
	plan = SPI_prepare_cursor(sql, nargs, argtypes, options);
	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed for \"%s\": %s",
			 sql, SPI_result_code_string(SPI_result));
	if (SPI_keepplan(plan) != 0)
		elog(ERROR, "SPI_keepplan failed");
	*slot = plan;
}

void
MnemoPrepare(SPIPlanPtr *slot, const char *sql, int nargs, Oid *argtypes)
{
	Prepare(slot, sql, nargs, argtypes, 0);
}

/*
 * MnemoPrepare with a generic plan always, for a statement whose parameters
 * are rows' values (insert_rows.c), which a custom plan would copy into
 * itself as constants on every call.
 */
void
MnemoPrepareGeneric(SPIPlanPtr *slot, const char *sql, int nargs, Oid *argtypes)
{
	Prepare(slot, sql, nargs, argtypes, CURSOR_OPT_GENERIC_PLAN);
}

/*
 * MnemoPrepare for a statement whose rows are handed on as they come
 * (MnemoExecuteTo): planned for its first rows (CURSOR_OPT_FAST_PLAN), so
 * that an ORDER BY an index's order reads that index, where the planner
 * would sort the rows of a bitmap scan, a copy of every row, before the
 * first came out; and planned once (CURSOR_OPT_GENERIC_PLAN): the plan
 * cache kept choosing a custom plan, the same range scan planned anew on
 * every execution, 4% of a history read (bench/profiles/reads.txt).  Not
 * over Citus tables, where a statement with a subquery is routed only with
 * its parameters' values in it (a generic plan fails: "could not create
 * distributed plan").  The caller keeps one slot per layout
 * (MnemoTablesDistributed()), since a kept plan keeps its options.
 */
void
MnemoPrepareStream(SPIPlanPtr *slot, const char *sql, int nargs, Oid *argtypes)
{
	Prepare(slot, sql, nargs, argtypes,
			CURSOR_OPT_FAST_PLAN | (MnemoTablesDistributed() ? 0 : CURSOR_OPT_GENERIC_PLAN));
}

/*
 * Whether relid is a Citus table: a row of pg_dist_partition names it.  A
 * catalog scan, not SPI (tenant.c asks inside row-level security checks);
 * pg_dist_partition has a row per distributed table, a few dozen.  Callers
 * cache the answer until a relcache invalidation (mnemo.distribute() sends
 * one).
 */
bool
MnemoCitusTable(Oid relid)
{
	Oid			catalog = get_relname_relid("pg_dist_partition", PG_CATALOG_NAMESPACE);
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	bool		found;

	if (!OidIsValid(catalog))
		return false;
	rel = table_open(catalog, AccessShareLock);
	/* logicalrelid is its first column */
	ScanKeyInit(&key, 1, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(relid));
	scan = systable_beginscan(rel, InvalidOid, false, NULL, 1, &key);
	found = HeapTupleIsValid(systable_getnext(scan));
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return found;
}

/*
 * How mnemo's tables are laid out, cached per backend until a relcache
 * invalidation (mnemo.distribute() and the partitioning send one): spread
 * over partitions or Citus shards (the log table is partitioned, or a
 * Citus table), and whether they are Citus tables.
 */
#define LAYOUT_SPREAD	1
#define LAYOUT_CITUS	2
static int	layout = -1;

static void
ForgetLayout(Datum arg, Oid relid)
{
	layout = -1;
}

static int
Layout(void)
{
	static bool callback_registered = false;
	Oid			log;

	if (layout >= 0)
		return layout;
	if (!callback_registered)
	{
		CacheRegisterRelcacheCallback(ForgetLayout, (Datum) 0);
		callback_registered = true;
	}
	log = get_relname_relid("log", get_namespace_oid("mnemo", false));
	layout = MnemoCitusTable(log) ? LAYOUT_SPREAD | LAYOUT_CITUS :
		get_rel_relkind(log) == RELKIND_PARTITIONED_TABLE ? LAYOUT_SPREAD : 0;
	return layout;
}

/* Whether mnemo's tables are partitioned or Citus tables. */
bool
MnemoTablesSpread(void)
{
	return (Layout() & LAYOUT_SPREAD) != 0;
}

/* Whether mnemo's tables are Citus tables (mnemo.distribute() ran). */
bool
MnemoTablesDistributed(void)
{
	return (Layout() & LAYOUT_CITUS) != 0;
}


/* Execute a prepared plan; returns SPI_processed. */
uint64
MnemoExecute(SPIPlanPtr plan, Datum *values, const char *nulls,
			 bool read_only, long tcount)
{
	int			rc = SPI_execute_plan(plan, values, nulls, read_only, tcount);

	if (rc < 0)
		elog(ERROR, "SPI_execute_plan failed: %s", SPI_result_code_string(rc));
	return SPI_processed;
}


/*
 * The n values (nulls: NULL or one flag each) as a one-dimensional array of
 * a built-in type, a parameter of a set-based statement (... FROM
 * unnest($k)).  The element layouts are known here, so building the array
 * looks nothing up in the catalog.
 */
Datum
MnemoArray(Oid type, Datum *values, bool *nulls, int n)
{
	int			dims[1] = {n};
	int			lbs[1] = {1};
	int16		typlen;
	bool		byval;
	char		align;

	switch (type)
	{
		case TEXTOID:
		case JSONBOID:
		case BYTEAOID:
			typlen = -1;
			byval = false;
			align = TYPALIGN_INT;
			break;
		case INT8OID:
			typlen = sizeof(int64);
			byval = FLOAT8PASSBYVAL;
			align = TYPALIGN_DOUBLE;
			break;
		case INT4OID:
			typlen = sizeof(int32);
			byval = true;
			align = TYPALIGN_INT;
			break;
		case BOOLOID:
			typlen = sizeof(bool);
			byval = true;
			align = TYPALIGN_CHAR;
			break;
		default:
			elog(ERROR, "no array layout for type %u", type);
	}
	if (n == 0)
		return PointerGetDatum(construct_empty_array(type));
	return PointerGetDatum(construct_md_array(values, nulls, 1, dims, lbs, type, typlen, byval,
											  align));
}

/*
 * A statement's row (its natts values and nulls) laid out for resdesc: the
 * statement's columns, in order, fill resdesc's live attributes; a dropped
 * one (a table's row type keeps a column an upgrade dropped) is NULL.  The
 * statement's columns must match the live attributes in number and type.
 */
static void
MapForResult(TupleDesc resdesc, int natts, const Datum *rowvalues, const bool *rownulls,
			 Datum *values, bool *nulls)
{
	int			col = 0;
	int			i;

	for (i = 0; i < resdesc->natts; i++)
	{
		if (TupleDescAttr(resdesc, i)->attisdropped)
		{
			values[i] = (Datum) 0;
			nulls[i] = true;
			continue;
		}
		if (col >= natts)
			break;
		values[i] = rowvalues[col];
		nulls[i] = rownulls[col];
		col++;
	}
	if (i != resdesc->natts || col != natts)
		elog(ERROR, "result has other columns than the statement returned (%d)", natts);
}

/* SPI row `row` laid out for resdesc (MapForResult). */
static void
DeformForResult(TupleDesc resdesc, uint64 row, Datum *values, bool *nulls)
{
	TupleDesc	spidesc = SPI_tuptable->tupdesc;
	Datum	   *spivalues = palloc(sizeof(Datum) * spidesc->natts);
	bool	   *spinulls = palloc(sizeof(bool) * spidesc->natts);

	heap_deform_tuple(SPI_tuptable->vals[row], spidesc, spivalues, spinulls);
	MapForResult(resdesc, spidesc->natts, spivalues, spinulls, values, nulls);
	pfree(spivalues);
	pfree(spinulls);
}

/* MnemoExecuteResult's receiver: each row into the function's result set */
typedef struct ResultReceiver
{
	DestReceiver pub;
	ReturnSetInfo *rsinfo;
	Datum	   *values;
	bool	   *nulls;
} ResultReceiver;

static bool
ResultReceiveSlot(TupleTableSlot *slot, DestReceiver *self)
{
	ResultReceiver *r = (ResultReceiver *) self;

	slot_getallattrs(slot);
	MapForResult(r->rsinfo->setDesc, slot->tts_tupleDescriptor->natts, slot->tts_values,
				 slot->tts_isnull, r->values, r->nulls);
	tuplestore_putvalues(r->rsinfo->setResult, r->rsinfo->setDesc, r->values, r->nulls);
	return true;
}

static void
ResultStartup(DestReceiver *self, int operation, TupleDesc typeinfo)
{
}

static void
ResultNothing(DestReceiver *self)
{
}

/*
 * Execute a prepared plan (its parameters as for MnemoExecute), each row to
 * dest as the executor hands it over rather than into an SPI tuple table.
 * Returns SPI_processed.
 */
uint64
MnemoExecuteTo(SPIPlanPtr plan, Datum *values, const char *nulls, bool read_only,
			   DestReceiver *dest)
{
	int			nargs = SPI_getargcount(plan);
	ParamListInfo params = makeParamList(nargs);
	SPIExecuteOptions options = {0};
	int			rc;
	int			i;

	for (i = 0; i < nargs; i++)
	{
		params->params[i].value = values[i];
		params->params[i].isnull = nulls != NULL && nulls[i] == 'n';
		params->params[i].pflags = PARAM_FLAG_CONST;
		params->params[i].ptype = SPI_getargtypeid(plan, i);
	}
	options.params = params;
	options.read_only = read_only;
	options.dest = dest;
	rc = SPI_execute_plan_extended(plan, &options);
	if (rc < 0)
		elog(ERROR, "SPI_execute_plan_extended failed: %s", SPI_result_code_string(rc));
	return SPI_processed;
}

/*
 * Execute a prepared plan straight into the function's result set (a
 * materialized SRF): each row goes into its tuplestore as the executor
 * hands it over, which spills to disk past work_mem, rather than first into
 * an SPI tuple table, which holds the whole result in memory until
 * SPI_finish.  Returns the number of rows.
 */
uint64
MnemoExecuteResult(FunctionCallInfo fcinfo, SPIPlanPtr plan, Datum *values, const char *nulls,
				   bool read_only)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ResultReceiver receiver = {{0}};
	uint64		rows;

	if (rsinfo->setResult == NULL)
		InitMaterializedSRF(fcinfo, 0);
	receiver.pub.receiveSlot = ResultReceiveSlot;
	receiver.pub.rStartup = ResultStartup;
	receiver.pub.rShutdown = ResultNothing;
	receiver.pub.rDestroy = ResultNothing;
	receiver.pub.mydest = DestTuplestore;
	receiver.rsinfo = rsinfo;
	receiver.values = palloc(sizeof(Datum) * rsinfo->setDesc->natts);
	receiver.nulls = palloc(sizeof(bool) * rsinfo->setDesc->natts);
	rows = MnemoExecuteTo(plan, values, nulls, read_only, &receiver.pub);
	pfree(receiver.values);
	pfree(receiver.nulls);
	return rows;
}

/*
 * Form row `row` of the last SPI result as the function's declared composite
 * result type, allocated in callcxt so that it survives SPI_finish.
 */
Datum
MnemoResultRow(FunctionCallInfo fcinfo, MemoryContext callcxt, uint64 row)
{
	MemoryContext oldcxt = MemoryContextSwitchTo(callcxt);
	TupleDesc	resdesc;
	Datum	   *values;
	bool	   *nulls;
	HeapTuple	tuple;
	Datum		result;

	if (get_call_result_type(fcinfo, NULL, &resdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "function returning a row called in a context that cannot accept one");
	resdesc = BlessTupleDesc(resdesc);
	values = palloc(sizeof(Datum) * resdesc->natts);
	nulls = palloc(sizeof(bool) * resdesc->natts);
	DeformForResult(resdesc, row, values, nulls);
	tuple = heap_form_tuple(resdesc, values, nulls);

	/*
	 * Still in callcxt: a row holding a value stored out of line (a session's
	 * metadata or system prompt of a few kB) is flattened into a new copy
	 * here, which must outlive SPI_finish as the tuple does.
	 */
	result = HeapTupleGetDatum(tuple);
	MemoryContextSwitchTo(oldcxt);
	return result;
}

/*
 * A row of natts values, a statement's columns in order, into the function's
 * result (laid out by MapForResult).
 */
void
MnemoResultPut(FunctionCallInfo fcinfo, int natts, const Datum *rowvalues, const bool *rownulls)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Datum	   *values;
	bool	   *nulls;

	if (rsinfo->setResult == NULL)
		InitMaterializedSRF(fcinfo, 0);
	values = palloc(sizeof(Datum) * rsinfo->setDesc->natts);
	nulls = palloc(sizeof(bool) * rsinfo->setDesc->natts);
	MapForResult(rsinfo->setDesc, natts, rowvalues, rownulls, values, nulls);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	pfree(values);
	pfree(nulls);
}

/* Column col (1-based) of row of the last SPI result, palloc'd in the current context. */
char *
MnemoGetText(uint64 row, int col, bool *isnull)
{
	bool		null;
	Datum		d = SPI_getbinval(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, col, &null);

	if (isnull)
		*isnull = null;
	return null ? NULL : TextDatumGetCString(d);
}

int64
MnemoGetInt64(uint64 row, int col, bool *isnull)
{
	bool		null;
	Datum		d = SPI_getbinval(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, col, &null);

	if (isnull)
		*isnull = null;
	if (null)
		return 0;
	switch (SPI_gettypeid(SPI_tuptable->tupdesc, col))
	{
		case INT4OID:
			return DatumGetInt32(d);
		case INT8OID:
			return DatumGetInt64(d);
		default:
			elog(ERROR, "column %d is not an integer", col);
	}
	return 0;					/* keep compiler quiet */
}

bool
MnemoGetBool(uint64 row, int col)
{
	bool		null;
	Datum		d = SPI_getbinval(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, col, &null);

	return !null && DatumGetBool(d);
}

/* Argument argno, which the caller documents as not null: 22004 otherwise. */
Datum
MnemoRequireArg(FunctionCallInfo fcinfo, int argno, const char *name)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be null", name)));
	return PG_GETARG_DATUM(argno);
}

char *
MnemoRequireTextArg(FunctionCallInfo fcinfo, int argno, const char *name)
{
	return TextDatumGetCString(MnemoRequireArg(fcinfo, argno, name));
}

char *
MnemoTextArgOrNull(FunctionCallInfo fcinfo, int argno)
{
	return PG_ARGISNULL(argno) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(argno));
}

/*
 * Argument argno, a text[] the caller documents as a list: 22004 if it or an
 * element is null, 22023 if it has more than one dimension.  A list's
 * elements are read in storage order, which would silently flatten
 * '{{a,b},{c,d}}' into four items.
 */
ArrayType *
MnemoTextListArg(FunctionCallInfo fcinfo, int argno, const char *name)
{
	ArrayType  *arr = DatumGetArrayTypeP(MnemoRequireArg(fcinfo, argno, name));

	if (ARR_NDIM(arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a one-dimensional array", name)));
	if (array_contains_nulls(arr))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not contain nulls", name)));
	return arr;
}

/* Wall-clock time in unix milliseconds, the unit of every mnemo timestamp. */
int64
MnemoNowMs(void)
{
	TimestampTz now = GetCurrentTimestamp();

	/* TimestampTz counts microseconds from 2000-01-01 */
	return now / 1000 +
		(int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY * 1000;
}
