/*
 * guard.c
 *		mnemo._guard(): the append-only trigger on every mnemo table.
 *
 * Invariant 1 of the design: no row of the log is ever deleted or has its
 * content changed, except through mnemo's own functions.  Those functions
 * run their statements through MnemoExecute(), which raises MnemoWriting for
 * exactly the duration of the statement; the trigger lets such writes pass.
 * Anything else -- a psql INSERT, DELETE or TRUNCATE, even by the table owner
 * or a superuser -- fails with MN005.  A direct UPDATE is refused only when
 * it changes a column outside the table's short list of status columns, so
 * that the refusal names the exact column.
 *
 * The trigger is ENABLEd in the ordinary way, so it stands aside under
 * session_replication_role = replica: logical replication and the documented
 * restore procedure load rows that were already validated once.
 *
 * A plain pg_restore (or psql's \copy) loads each table with one COPY FROM
 * into the table a fresh CREATE EXTENSION made.  So a top-level COPY FROM
 * into a table that had no pages when the statement began may insert: a
 * restore works without superuser settings, and no row already stored can
 * be outnumbered by forged ones.  Rows are checked by the table's CHECK
 * constraints and unique keys as they load.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "commands/trigger.h"
#include "storage/bufmgr.h"
#include "storage/proc.h"
#include "tcop/pquery.h"
#include "utils/datum.h"
#include "utils/rel.h"

#include "mnemo.h"

bool		MnemoWriting = false;

typedef struct GuardedTable
{
	const char *name;
	const char *const *mutable_columns;	/* NULL-terminated */
	const char *set_once_column;	/* mutable only while NULL, or NULL */
	const char *hint;
} GuardedTable;

static const char *const sessions_mutable[] = {
	"updated_at", "model_id", "provider_id", "agent", "title", "is_active",
	"metadata", "system_prompt", "state", "watched", NULL
};
static const char *const messages_mutable[] = {
	"tokens_input", "tokens_output", "tokens_cache_read", "tokens_cache_write",
	"tokens_reasoning", "cost", "finish_reason", NULL
};
static const char *const parts_mutable[] = {
	"tool_state", "compacted_at", "started_at", "completed_at", NULL
};
static const char *const summary_nodes_mutable[] = {"superseded_by", NULL};
static const char *const none_mutable[] = {NULL};

static const GuardedTable guarded_tables[] = {
	{"sessions", sessions_mutable, NULL,
	"Use mnemo.create_session(), mnemo.soft_delete_session() or mnemo.purge_session()."},
	{"messages", messages_mutable, NULL,
	"Use mnemo.append_message() and mnemo.update_message_tokens()."},
	{"message_parts", parts_mutable, "compacted_at",
	"Use mnemo.append_part(), mnemo.update_part_status() or mnemo.tombstone_part()."},
	{"context_items", none_mutable, NULL,
	"Use mnemo.swap_context_items(); appends add context items themselves."},
	{"summary_nodes", summary_nodes_mutable, "superseded_by",
	"Summary nodes are written by mnemo's compaction functions."},
	{"summary_edges", none_mutable, NULL,
	"Summary edges are written by mnemo.commit_summary()."},
	{"file_references", none_mutable, NULL,
	"Use mnemo.store_file_reference()."},
};

static const GuardedTable *
FindGuardedTable(Relation rel)
{
	const char *name = RelationGetRelationName(rel);
	int			i;

	for (i = 0; i < lengthof(guarded_tables); i++)
		if (strcmp(guarded_tables[i].name, name) == 0)
			return &guarded_tables[i];
	elog(ERROR, "mnemo._guard() is attached to unexpected table \"%s\"", name);
	return NULL;				/* keep compiler quiet */
}

static bool
IsMutable(const GuardedTable *table, const char *column)
{
	const char *const *c;

	for (c = table->mutable_columns; *c; c++)
		if (strcmp(*c, column) == 0)
			return true;
	return false;
}

/*
 * MN005 naming the first immutable column whose value the update changes.
 * A set-once column (the tombstone, the supersession) may go from NULL to a
 * value, never back or to another value.
 */
static void
CheckUpdate(const GuardedTable *table, TupleDesc desc, HeapTuple oldtup, HeapTuple newtup)
{
	int			i;

	for (i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		bool		oldnull;
		bool		newnull;
		Datum		oldval;
		Datum		newval;
		bool		set_once;

		if (att->attisdropped)
			continue;
		set_once = table->set_once_column &&
			strcmp(table->set_once_column, NameStr(att->attname)) == 0;
		if (!set_once && IsMutable(table, NameStr(att->attname)))
			continue;
		oldval = heap_getattr(oldtup, i + 1, desc, &oldnull);
		newval = heap_getattr(newtup, i + 1, desc, &newnull);
		if (set_once && oldnull)
			continue;
		if (oldnull != newnull ||
			(!oldnull && !datum_image_eq(oldval, newval, att->attbyval, att->attlen)))
			ereport(ERROR,
					(errcode(ERRCODE_MNEMO_IMMUTABLE_FIELD),
					 errmsg("column \"%s\" of table \"mnemo.%s\" is immutable",
							NameStr(att->attname), table->name),
					 errhint("%s", table->hint)));
	}
}

/*
 * Whether this INSERT is a row of a restore: a top-level COPY into a table
 * that was empty when the statement began.  Decided at the statement's first
 * row (later rows find the pages the first ones filled) and remembered for
 * the statement, which one transaction's statement start time identifies.
 */
static bool
RestoringCopy(Relation rel)
{
	static Oid	relid = InvalidOid;
	static LocalTransactionId lxid = InvalidLocalTransactionId;
	static TimestampTz started = 0;
	static bool allowed = false;

	if (ActivePortal == NULL || ActivePortal->commandTag != CMDTAG_COPY)
		return false;
	if (relid != RelationGetRelid(rel) || lxid != MyProc->lxid ||
		started != GetCurrentStatementStartTimestamp())
	{
		relid = RelationGetRelid(rel);
		lxid = MyProc->lxid;
		started = GetCurrentStatementStartTimestamp();
		allowed = RelationGetNumberOfBlocks(rel) == 0;
	}
	return allowed;
}

PG_FUNCTION_INFO_V1(mnemo_guard);
Datum
mnemo_guard(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;
	const GuardedTable *table;
	const char *op;

	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("mnemo._guard() must be called as a trigger")));

	table = FindGuardedTable(trigdata->tg_relation);

	if (TRIGGER_FIRED_BY_TRUNCATE(trigdata->tg_event))
		op = "TRUNCATE";
	else if (MnemoWriting)
		return PointerGetDatum(TRIGGER_FIRED_BY_UPDATE(trigdata->tg_event) ?
							   trigdata->tg_newtuple : trigdata->tg_trigtuple);
	else if (TRIGGER_FIRED_BY_UPDATE(trigdata->tg_event))
	{
		CheckUpdate(table, RelationGetDescr(trigdata->tg_relation),
					trigdata->tg_trigtuple, trigdata->tg_newtuple);
		return PointerGetDatum(trigdata->tg_newtuple);
	}
	else if (TRIGGER_FIRED_BY_INSERT(trigdata->tg_event))
	{
		if (RestoringCopy(trigdata->tg_relation))
			return PointerGetDatum(trigdata->tg_trigtuple);
		op = "INSERT";
	}
	else
		op = "DELETE";

	ereport(ERROR,
			(errcode(ERRCODE_MNEMO_IMMUTABLE_FIELD),
			 errmsg("table \"mnemo.%s\" is append-only: direct %s is not allowed",
					table->name, op),
			 errhint("%s", table->hint)));
	return PointerGetDatum(NULL);	/* keep compiler quiet */
}
