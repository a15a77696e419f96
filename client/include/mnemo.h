/*
 * mnemo.h
 *		libmnemo: the C client of the mnemo PostgreSQL extension.
 *
 * The one public header.  It includes its parts, the headers of mnemo/
 * installed beside it, each of one area of the API, and only standard
 * headers: no libpq, curl or json-c type appears.  Every exported symbol
 * starts with mnemo_.
 *
 * Conventions, which hold for every call below unless its comment says
 * otherwise:
 *
 *	- A store handle (mnemo_store) owns one libpq connection.  It may be used
 *	  by one thread at a time; different handles from different threads.
 *	  There is no global state.
 *	- Calls return int: MNEMO_OK (0) on success, a negative mnemo_err on
 *	  failure.  The last error's code, message and SQLSTATE are then readable
 *	  with mnemo_errcode(), mnemo_errmsg() and mnemo_sqlstate() until the next
 *	  call on the same handle.  A failed call leaves its out-parameters as
 *	  they were (pointers: NULL) and writes nothing to the database.
 *	- Strings passed in are UTF-8 and NUL-terminated; JSON arguments are JSON
 *	  text.  The library copies what it keeps; nothing passed in is retained.
 *	- Everything returned through an out-parameter is owned by the caller and
 *	  freed by exactly one matching _free call; freeing a parent frees its
 *	  children (a message's parts, a list's items); _free(NULL) does nothing.
 *	- Times are unix milliseconds (int64_t); 0 means "not set".
 *	- Nothing is sent as SQL text built from arguments: every statement is
 *	  parameterised and the hot ones are prepared once per connection.
 *	- Every options or spec struct (mnemo_new_*, mnemo_*_options,
 *	  mnemo_session_filter, mnemo_part_status) has an _INIT macro: start from
 *	  it, then set fields, so that fields added later keep their defaults
 *	  (mnemo/version.h says how the structs grow).
 */
#ifndef MNEMO_H
#define MNEMO_H

#include "mnemo/version.h"
#include "mnemo/store.h"
#include "mnemo/rows.h"
#include "mnemo/log.h"
#include "mnemo/context.h"
#include "mnemo/search.h"
#include "mnemo/recall.h"
#include "mnemo/lifecycle.h"
#include "mnemo/events.h"
#include "mnemo/transcript.h"
#include "mnemo/chat.h"
#include "mnemo/compact.h"
#include "mnemo/map.h"

#endif							/* MNEMO_H */
