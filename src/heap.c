/*
 * heap.c
 *		Direct inserts into mnemo's log tables, for the append hot path.
 *
 * An append stores a message row, its part rows and a context row.  Run as
 * SPI statements, each pays executor start-up, a plan-cache check and the
 * rebuild of its CHECK expressions; the benchmark measured those as the
 * larger part of an append's server time.  MnemoHeapInsert stores one row
 * the way logical replication's apply does (ExecSimpleRelationInsert): the
 * BEFORE triggers fire (the guard lets mnemo's writes pass), CHECK and NOT
 * NULL constraints are checked, the heap tuple and all its index entries are
 * written, AFTER triggers fire.
 *
 * What the executor would check and this path must check itself: the
 * caller's INSERT privilege on the table.  Row-level security is not applied
 * here; a table with RLS enabled is refused rather than written unchecked.
 */
#include "postgres.h"

#include "access/table.h"
#include "catalog/namespace.h"
#include "commands/trigger.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/rls.h"

#include "mnemo.h"

/*
 * Insert one row into mnemo.<table>; columns names every column in table
 * order (NULL-terminated) and values and nulls hold them.  The names are
 * checked against the table, so that a changed table definition is an error,
 * never a misplaced value.  A violation of the unique index id_index (the row's own id)
 * is reported as MN004 naming id; other errors propagate unchanged.
 */
void
MnemoHeapInsert(const char *table, const char *const *columns, Datum *values, bool *nulls,
				const char *id_index, const char *what, const char *id)
{
	Oid			relid = get_relname_relid(table, get_namespace_oid("mnemo", false));
	Relation	rel;
	EState	   *estate;
	RangeTblEntry *rte;
	ResultRelInfo *rri;
	TupleTableSlot *slot;
	TupleDesc	desc;
	AclResult	aclresult;
	MemoryContext cxt = CurrentMemoryContext;
	bool		saved = MnemoWriting;
	int			i;

	if (!OidIsValid(relid))
		elog(ERROR, "table \"mnemo.%s\" does not exist", table);
	aclresult = pg_class_aclcheck(relid, GetUserId(), ACL_INSERT);
	if (aclresult != ACLCHECK_OK)
		aclcheck_error(aclresult, OBJECT_TABLE, table);
	if (check_enable_rls(relid, InvalidOid, false) == RLS_ENABLED)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("row-level security on \"mnemo.%s\" is not supported by mnemo's appends",
						table)));

	rel = table_open(relid, RowExclusiveLock);
	/* no storage of its own: the executor's tuple routing is needed */
	if (rel->rd_rel->relkind != RELKIND_RELATION)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("partitioned \"mnemo.%s\" is not supported by mnemo's appends",
						table)));
	desc = RelationGetDescr(rel);
	for (i = 0; i < desc->natts && columns[i]; i++)
		if (strcmp(NameStr(TupleDescAttr(desc, i)->attname), columns[i]) != 0)
			break;
	if (i != desc->natts || columns[i] != NULL)
		elog(ERROR, "table \"mnemo.%s\" does not have the columns this library expects", table);

	estate = CreateExecutorState();
	rte = makeNode(RangeTblEntry);
	rte->rtekind = RTE_RELATION;
	rte->relid = relid;
	rte->relkind = rel->rd_rel->relkind;
	rte->rellockmode = RowExclusiveLock;
	ExecInitRangeTable(estate, list_make1(rte));
	rri = makeNode(ResultRelInfo);
	InitResultRelInfo(rri, rel, 1, NULL, 0);
	ExecOpenIndices(rri, false);

	slot = ExecInitExtraTupleSlot(estate, desc, &TTSOpsVirtual);
	ExecClearTuple(slot);
	memcpy(slot->tts_values, values, sizeof(Datum) * desc->natts);
	memcpy(slot->tts_isnull, nulls, sizeof(bool) * desc->natts);
	ExecStoreVirtualTuple(slot);

	AfterTriggerBeginQuery();
	MnemoWriting = true;
	PG_TRY();
	{
		ExecSimpleRelationInsert(rri, estate, slot);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MnemoWriting = saved;
		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		if (MnemoViolates(edata, id_index))
		{
			/* re-thrown at once as our own error: the transaction aborts as it would */
			FlushErrorState();
			ereport(ERROR,
					(errcode(ERRCODE_MNEMO_DUPLICATE_ID),
					 errmsg("%s \"%s\" already exists", what, id)));
		}
		FreeErrorData(edata);
		PG_RE_THROW();
	}
	PG_END_TRY();
	MnemoWriting = saved;
	AfterTriggerEndQuery(estate);

	ExecCloseIndices(rri);
	ExecResetTupleTable(estate->es_tupleTable, false);
	FreeExecutorState(estate);
	table_close(rel, NoLock);
	CommandCounterIncrement();
}
