/*
 * mnemo.c
 *		Module entry: PG_MODULE_MAGIC, settings, and mnemo.version().
 *
 * Everything else lives in a file named for its concept; see mnemo.h.
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/guc.h"

#include "mnemo.h"

PG_MODULE_MAGIC;

int			mnemo_notify_mode = MNEMO_NOTIFY_WATCHED;
int			mnemo_max_parts_per_message = 10000;
int			mnemo_max_part_bytes = 16 * 1024 * 1024;
int			mnemo_max_messages_per_batch = 10000;
char	   *mnemo_tenant_setting = NULL;

/* read by the install script only (sql/mnemo--*.sql, doc/scale-out.md) */
static int	mnemo_partitions = 0;

static const struct config_enum_entry notify_options[] = {
	{"off", MNEMO_NOTIFY_OFF, false},
	{"watched", MNEMO_NOTIFY_WATCHED, false},
	{"all", MNEMO_NOTIFY_ALL, false},
	{NULL, 0, false}
};

void		_PG_init(void);

void
_PG_init(void)
{
	DefineCustomEnumVariable("mnemo.notify",
							 "Which sessions send NOTIFY mnemo on committed writes.",
							 "watched: sessions marked with mnemo.watch(); all: every session "
							 "(every notifying commit is serialised cluster-wide); off: none.",
							 &mnemo_notify_mode,
							 MNEMO_NOTIFY_WATCHED,
							 notify_options,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);
	DefineCustomIntVariable("mnemo.partitions",
							"Hash partitions per table for CREATE EXTENSION mnemo (0: plain tables).",
							"Read when the extension is created: each table with a session column "
							"is then partitioned by it, the layout on which the test suite "
							"proves that every call touches one partition (doc/scale-out.md).",
							&mnemo_partitions,
							0, 0, 1024,
							PGC_USERSET,
							0,
							NULL, NULL, NULL);
	/*
	 * Limits on what one call may append.  Superuser-only: an application
	 * role must not be able to raise the memory and time one call of its
	 * takes.
	 */
	DefineCustomIntVariable("mnemo.max_parts_per_message",
							"The most parts one message may have in an append.",
							"Larger appends fail with 54000 and write nothing.",
							&mnemo_max_parts_per_message,
							10000, 1, INT_MAX,
							PGC_SUSET, 0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("mnemo.max_part_bytes",
							"The largest part, in bytes of its stored JSON, an append accepts.",
							"Larger parts fail with 54000 and nothing is written.",
							&mnemo_max_part_bytes,
							16 * 1024 * 1024, 1, INT_MAX,
							PGC_SUSET, GUC_UNIT_BYTE,
							NULL, NULL, NULL);
	DefineCustomIntVariable("mnemo.max_messages_per_batch",
							"The most messages one append_messages call may store.",
							"Larger batches fail with 54000 and write nothing.",
							&mnemo_max_messages_per_batch,
							10000, 1, INT_MAX,
							PGC_SUSET, 0,
							NULL, NULL, NULL);
	DefineCustomStringVariable("mnemo.tenant",
							   "The tenant (a role) new sessions and file references belong to.",
							   "Empty: the calling role.  The caller must have the privileges of "
							   "the role named; a pooled role sets it per request.",
							   &mnemo_tenant_setting,
							   "",
							   PGC_USERSET,
							   0,
							   NULL, NULL, NULL);
	MarkGUCPrefixReserved("mnemo");
}

PG_FUNCTION_INFO_V1(mnemo_version);
Datum
mnemo_version(PG_FUNCTION_ARGS)
{
	PG_RETURN_TEXT_P(cstring_to_text(MNEMO_VERSION));
}
