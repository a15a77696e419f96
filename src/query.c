/*
 * query.c
 *		The one way mnemo functions run SQL: SPI plans prepared once per
 *		backend, executed with the guard's write flag raised, results copied
 *		into the caller's memory context.
 *
 * Every statement is a fixed string with $n parameters; no SQL is ever built
 * from arguments.  Plans are kept for the life of the backend (SPI_keepplan);
 * the plan cache replans them on its own after DDL.
 *
 * Callers follow one shape:
 *
 *		MemoryContext callcxt = CurrentMemoryContext;
 *		SPI_connect();
 *		... MnemoExecute(...) ...
 *		result = MnemoResultRow(fcinfo, callcxt, 0);
 *		SPI_finish();
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "mnemo.h"

/*
 * Prepare sql into *slot unless already done.  The plan lives in
 * CacheMemoryContext, so a failure here leaves *slot NULL and the next call
 * tries again.
 */
void
MnemoPrepare(SPIPlanPtr *slot, const char *sql, int nargs, Oid *argtypes)
{
	SPIPlanPtr	plan;

	if (*slot != NULL)
		return;
	plan = SPI_prepare(sql, nargs, argtypes);
	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed for \"%s\": %s",
			 sql, SPI_result_code_string(SPI_result));
	if (SPI_keepplan(plan) != 0)
		elog(ERROR, "SPI_keepplan failed");
	*slot = plan;
}

/*
 * Execute a prepared plan.  Writes (read_only = false) run with MnemoWriting
 * raised so that the append-only guard lets them through; the flag is
 * restored on error as well, so a failed call cannot leave the guard open.
 * Returns SPI_processed.
 */
uint64
MnemoExecute(SPIPlanPtr plan, Datum *values, const char *nulls,
			 bool read_only, long tcount)
{
	bool		saved = MnemoWriting;
	int			rc;

	if (read_only)
		rc = SPI_execute_plan(plan, values, nulls, true, tcount);
	else
	{
		MnemoWriting = true;
		PG_TRY();
		{
			rc = SPI_execute_plan(plan, values, nulls, false, tcount);
		}
		PG_FINALLY();
		{
			MnemoWriting = saved;
		}
		PG_END_TRY();
	}
	if (rc < 0)
		elog(ERROR, "SPI_execute_plan failed: %s", SPI_result_code_string(rc));
	return SPI_processed;
}

/*
 * Form row `row` of the last SPI result as the function's declared composite
 * result type, allocated in callcxt so that it survives SPI_finish.  The
 * statement's columns must match the result type in number and type.
 */
Datum
MnemoResultRow(FunctionCallInfo fcinfo, MemoryContext callcxt, uint64 row)
{
	MemoryContext oldcxt = MemoryContextSwitchTo(callcxt);
	TupleDesc	resdesc;
	TupleDesc	spidesc = SPI_tuptable->tupdesc;
	Datum	   *values;
	bool	   *nulls;
	HeapTuple	tuple;

	if (get_call_result_type(fcinfo, NULL, &resdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "function returning a row called in a context that cannot accept one");
	resdesc = BlessTupleDesc(resdesc);
	if (resdesc->natts != spidesc->natts)
		elog(ERROR, "result has %d columns, statement returned %d",
			 resdesc->natts, spidesc->natts);

	values = palloc(sizeof(Datum) * spidesc->natts);
	nulls = palloc(sizeof(bool) * spidesc->natts);
	heap_deform_tuple(SPI_tuptable->vals[row], spidesc, values, nulls);
	tuple = heap_form_tuple(resdesc, values, nulls);
	MemoryContextSwitchTo(oldcxt);
	return HeapTupleGetDatum(tuple);
}

/*
 * Return every row of the last SPI result as the function's result set.  The
 * tuplestore lives in the per-query context, so this may be called before
 * SPI_finish.
 */
void
MnemoResultSet(FunctionCallInfo fcinfo)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	TupleDesc	spidesc = SPI_tuptable->tupdesc;
	Datum	   *values;
	bool	   *nulls;
	uint64		i;

	InitMaterializedSRF(fcinfo, 0);
	if (rsinfo->setDesc->natts != spidesc->natts)
		elog(ERROR, "result has %d columns, statement returned %d",
			 rsinfo->setDesc->natts, spidesc->natts);

	values = palloc(sizeof(Datum) * spidesc->natts);
	nulls = palloc(sizeof(bool) * spidesc->natts);
	for (i = 0; i < SPI_processed; i++)
	{
		heap_deform_tuple(SPI_tuptable->vals[i], spidesc, values, nulls);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
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

/* Wall-clock time in unix milliseconds, the unit of every mnemo timestamp. */
int64
MnemoNowMs(void)
{
	TimestampTz now = GetCurrentTimestamp();

	/* TimestampTz counts microseconds from 2000-01-01 */
	return now / 1000 +
		(int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY * 1000;
}

/*
 * Whether edata is a unique violation of the key named key: of its index, or
 * of the index a partition (<key>_p<i>, doc/scale-out.md) or a Citus shard
 * (<key>_<shard id>) holds for it.
 */
bool
MnemoViolates(const ErrorData *edata, const char *key)
{
	size_t		len = strlen(key);
	const char *rest;

	if (edata->sqlerrcode != ERRCODE_UNIQUE_VIOLATION || edata->constraint_name == NULL ||
		strncmp(edata->constraint_name, key, len) != 0)
		return false;
	rest = edata->constraint_name + len;
	if (*rest == '\0')
		return true;
	if (*rest++ != '_')
		return false;
	if (*rest == 'p')
		rest++;
	if (*rest == '\0')
		return false;
	while (*rest >= '0' && *rest <= '9')
		rest++;
	return *rest == '\0';
}
