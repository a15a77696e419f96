/*
 * compat.c
 *		Entry points of earlier versions' SQL objects that this library no
 *		longer implements.
 *
 * PostgreSQL checks at CREATE FUNCTION that a C symbol exists, so a 0.1.0
 * schema -- CREATE EXTENSION mnemo VERSION '0.1.0', or a restored 0.1.0 dump
 * -- loads against this library only if the symbols its script names are
 * here.  Each refuses to run: ALTER EXTENSION mnemo UPDATE drops the object.
 */
#include "postgres.h"

#include "fmgr.h"

#include "mnemo.h"

/* 0.1.0's append-only trigger, replaced by privileges in 0.2.0 */
PG_FUNCTION_INFO_V1(mnemo_guard);
Datum
mnemo_guard(PG_FUNCTION_ARGS)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("the mnemo 0.1.0 schema needs ALTER EXTENSION mnemo UPDATE before it can be written"),
			 errhint("This library is mnemo %s.", MNEMO_VERSION)));
	PG_RETURN_NULL();
}
