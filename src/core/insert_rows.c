/*
 * insert_rows.c
 *		The set-based insert of a session's rows (MnemoInsertRows), in one of
 *		three forms by layout, and the naming of a taken id (MN004) for every
 *		INSERT of rows whose other keys the session lock allocated.
 *
 * On a plain layout the rows go straight into the table (insert_direct.c),
 * or, where that table may not be written so, through one INSERT ... SELECT
 * unnest($k) per 1,024 rows; where the tables are partitioned or Citus
 * tables, through multi-row INSERT ... VALUES statements (doc/scale-out.md).
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "mnemo.h"
#include "core/insert_direct.h"

/* INSERT INTO mnemo.table (session_id, tenant, the columns) */
static void
AppendHead(StringInfo sql, MnemoRowsInsert *ins)
{
	int			c;

	appendStringInfo(sql, "INSERT INTO mnemo.%s (session_id, tenant", ins->table);
	for (c = 0; c < ins->ncols; c++)
		appendStringInfo(sql, ", %s", ins->columns[c]);
	appendStringInfoChar(sql, ')');
}

/*
 * A multi-row INSERT ... VALUES of width rows, prepared once with a generic
 * plan: its parameters are the rows' values, which a custom plan would copy
 * into itself as constants on every call.  Citus prunes an INSERT ... VALUES
 * at execution (deferred pruning), so the generic plan is routable there
 * too; an INSERT ... SELECT with parameters it can plan only when custom,
 * which is why no set-based write selects from unnest($k) where the tables
 * are spread (doc/scale-out.md).
 */
static void
PrepareRows(MnemoRowsInsert *ins, int k)
{
	int			width = 1 << k;
	int			nargs = 2 + width * ins->ncols;
	Oid		   *types;
	StringInfoData sql;
	int			r;
	int			c;

	if (ins->plans[k] != NULL)
		return;
	types = palloc(sizeof(Oid) * nargs);
	types[0] = TEXTOID;
	types[1] = TEXTOID;
	initStringInfo(&sql);
	AppendHead(&sql, ins);
	appendStringInfoString(&sql, " VALUES ");
	for (r = 0; r < width; r++)
	{
		appendStringInfo(&sql, "%s($1, $2", r > 0 ? ", " : "");
		for (c = 0; c < ins->ncols; c++)
		{
			types[2 + r * ins->ncols + c] = ins->types[c];
			appendStringInfo(&sql, ", $%d", 3 + r * ins->ncols + c);
		}
		appendStringInfoChar(&sql, ')');
	}
	MnemoPrepareGeneric(&ins->plans[k], sql.data, nargs, types);
	pfree(sql.data);
	pfree(types);
}


/*
 * On a plain layout whose table insert_direct.c may not write: the rows in
 * statements INSERT ... SELECT $1, $2,
 * unnest($3), unnest($4), ..., a column an array, of up to
 * ARRAY_ROWS rows each, with a generic plan.  The unnests are in the select
 * list, not in FROM: there they run in step and stream into the insert,
 * where ROWS FROM would first copy each array into a tuplestore of its own.
 * A VALUES list initialises the expressions of each row as it scans it: 7%
 * of the backend's time in an append of 100 messages (bench/append: 0.57 of
 * COPY against 0.51), which this form does not pay.  The cap keeps one
 * statement's arrays in memory at a time, as the VALUES statements do
 * (sql/append_limits.sql checks the memory of a 300,000-part append).
 */
#define ARRAY_ROWS 1024

static void
InsertArrays(MnemoRowsInsert *ins, const char *session_id, const char *tenant, int n,
			 MnemoRowFill fill, void *arg)
{
	MemoryContext cxt = CurrentMemoryContext;
	MemoryContext chunkcxt = AllocSetContextCreate(cxt, "mnemo arrays", ALLOCSET_DEFAULT_SIZES);
	MemoryContext rowcxt = AllocSetContextCreate(cxt, "mnemo rows", ALLOCSET_DEFAULT_SIZES);
	ArrayBuildState **columns = palloc(sizeof(ArrayBuildState *) * ins->ncols);
	Datum	   *row = palloc(sizeof(Datum) * ins->ncols);
	bool	   *rownulls = palloc(sizeof(bool) * ins->ncols);
	Datum	   *values = palloc(sizeof(Datum) * (2 + ins->ncols));
	int			done;
	int			r;
	int			c;

	if (ins->arrays_plan == NULL)
	{
		Oid		   *types = palloc(sizeof(Oid) * (2 + ins->ncols));
		StringInfoData sql;

		types[0] = TEXTOID;
		types[1] = TEXTOID;
		initStringInfo(&sql);
		AppendHead(&sql, ins);
		appendStringInfoString(&sql, " SELECT $1, $2");
		for (c = 0; c < ins->ncols; c++)
		{
			types[2 + c] = get_array_type(ins->types[c]);
			appendStringInfo(&sql, ", unnest($%d)", 3 + c);
		}
		MnemoPrepareGeneric(&ins->arrays_plan, sql.data, 2 + ins->ncols, types);
		pfree(sql.data);
		pfree(types);
	}
	values[0] = CStringGetTextDatum(session_id);
	values[1] = CStringGetTextDatum(tenant);
	for (done = 0; done < n; done += ARRAY_ROWS)
	{
		CHECK_FOR_INTERRUPTS();
		for (c = 0; c < ins->ncols; c++)
			columns[c] = initArrayResult(ins->types[c], chunkcxt, false);
		for (r = done; r < n && r < done + ARRAY_ROWS; r++)
		{
			MemoryContextSwitchTo(rowcxt);
			fill(arg, r, row, rownulls);
			MemoryContextSwitchTo(cxt);
			/* copied into the arrays' own memory, so fill's can go */
			for (c = 0; c < ins->ncols; c++)
				accumArrayResult(columns[c], row[c], rownulls[c], ins->types[c], chunkcxt);
			MemoryContextReset(rowcxt);
		}
		MemoryContextSwitchTo(chunkcxt);
		for (c = 0; c < ins->ncols; c++)
			values[2 + c] = makeArrayResult(columns[c], chunkcxt);
		MemoryContextSwitchTo(cxt);
		MnemoInsert(ins->arrays_plan, values, NULL, ins->what, NULL);
		MemoryContextReset(chunkcxt);
	}
	MemoryContextDelete(rowcxt);
	MemoryContextDelete(chunkcxt);
}

/*
 * Where the tables are spread: statements of 128, 64, ..., 1 rows (the
 * binary digits of n), each a multi-row INSERT ... VALUES (PrepareRows).
 */
static void
InsertValues(MnemoRowsInsert *ins, const char *session_id, const char *tenant, int n,
			 MnemoRowFill fill, void *arg)
{
	int			maxrows = 1 << (MNEMO_ROWS_WIDTHS - 1);
	MemoryContext cxt = CurrentMemoryContext;
	MemoryContext rowcxt = AllocSetContextCreate(cxt, "mnemo rows", ALLOCSET_DEFAULT_SIZES);
	Datum	   *values = palloc(sizeof(Datum) * (2 + maxrows * ins->ncols));
	char	   *nulls = palloc(2 + maxrows * ins->ncols);
	bool	   *rownulls = palloc(sizeof(bool) * ins->ncols);
	int			done = 0;

	values[0] = CStringGetTextDatum(session_id);
	values[1] = CStringGetTextDatum(tenant);
	nulls[0] = nulls[1] = ' ';
	while (done < n)
	{
		int			k = MNEMO_ROWS_WIDTHS - 1;
		int			r;
		int			c;

		CHECK_FOR_INTERRUPTS();
		while ((1 << k) > n - done)
			k--;
		PrepareRows(ins, k);
		MemoryContextSwitchTo(rowcxt);
		for (r = 0; r < (1 << k); r++)
		{
			int			at = 2 + r * ins->ncols;

			fill(arg, done + r, values + at, rownulls);
			for (c = 0; c < ins->ncols; c++)
				nulls[at + c] = rownulls[c] ? 'n' : ' ';
		}
		MemoryContextSwitchTo(cxt);
		MnemoInsert(ins->plans[k], values, nulls, ins->what, NULL);
		MemoryContextReset(rowcxt);
		done += 1 << k;
	}
	MemoryContextDelete(rowcxt);
	pfree(values);
	pfree(nulls);
	pfree(rownulls);
}

static void NameClash(void (*write) (void *), void *arg, const char *what, const char *id);

typedef struct DirectWrite
{
	MnemoRowsInsert *ins;
	const char *session_id;
	const char *tenant;
	int			n;
	MnemoRowFill fill;
	void	   *arg;
	bool		done;
} DirectWrite;

static void
WriteDirect(void *arg)
{
	DirectWrite *w = arg;

	w->done = MnemoInsertDirect(w->ins, w->session_id, w->tenant, w->n, w->fill, w->arg);
}

/*
 * Insert n rows of session_id (tenant) with ins: row i's columns after
 * session_id and tenant are what fill(arg, i, ...) sets.  On a plain layout
 * straight into the table (insert_direct.c), or where the table may not be
 * written so, statements of arrays (InsertArrays).  Where the tables are
 * partitioned or distributed, statements of 128, 64, ..., 1 rows (the
 * binary digits of n): Citus cannot plan a generic INSERT ... SELECT with
 * parameters (the partitioned layout stands in for it in the tests), and a
 * call of one message and two parts runs two statements, an import of
 * thousands one per 128 rows, with the values of one statement at a time as
 * Datums: fill's allocations are freed after each.  MN004 if an id is taken
 * (NameClash; the caller names it).
 */
void
MnemoInsertRows(MnemoRowsInsert *ins, const char *session_id, const char *tenant, int n,
				MnemoRowFill fill, void *arg)
{
	DirectWrite w = {ins, session_id, tenant, n, fill, arg, false};

	if (MnemoTablesSpread())
	{
		InsertValues(ins, session_id, tenant, n, fill, arg);
		return;
	}
	NameClash(WriteDirect, &w, ins->what, NULL);
	if (!w.done)
		InsertArrays(ins, session_id, tenant, n, fill, arg);
}

/*
 * Run write(arg), an INSERT of rows whose other unique keys the caller
 * allocated under the session lock (seq, position, part_index), so that a
 * unique violation can only be the row's id taken within its session: MN004
 * naming what and id.  The error is re-thrown at once, so the
 * (sub)transaction aborts as it would have; matching on the SQLSTATE, not on
 * an index name, keeps this right on partitions and shards, whose indexes
 * have other names.  A set-based INSERT passes id NULL, not knowing which
 * row clashed; its caller then looks the clash up and names it (append.c).
 */
static void
NameClash(void (*write) (void *), void *arg, const char *what, const char *id)
{
	MemoryContext cxt = CurrentMemoryContext;

	PG_TRY();
	{
		write(arg);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		if (edata->sqlerrcode != ERRCODE_UNIQUE_VIOLATION)
		{
			FreeErrorData(edata);
			PG_RE_THROW();
		}
		FlushErrorState();
		if (id == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_MNEMO_DUPLICATE_ID),
					 errmsg("the id of a %s already exists", what),
					 errdetail("Ids are unique within their session.")));
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_DUPLICATE_ID),
				 errmsg("%s \"%s\" already exists", what, id),
				 errdetail("Ids are unique within their session.")));
	}
	PG_END_TRY();
}

typedef struct PlanWrite
{
	SPIPlanPtr	plan;
	Datum	   *values;
	const char *nulls;
} PlanWrite;

static void
ExecutePlanWrite(void *arg)
{
	PlanWrite  *w = arg;

	(void) MnemoExecute(w->plan, w->values, w->nulls, false, 0);
}

/* Execute a prepared INSERT, a taken id MN004 (NameClash). */
void
MnemoInsert(SPIPlanPtr plan, Datum *values, const char *nulls, const char *what,
			const char *id)
{
	PlanWrite	w = {plan, values, nulls};

	NameClash(ExecutePlanWrite, &w, what, id);
}
