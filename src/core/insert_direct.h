/*
 * insert_direct.h
 *		Rows written with the table AM, for MnemoInsertRows (insert_rows.c) alone.
 */
#ifndef MNEMO_INSERT_DIRECT_H
#define MNEMO_INSERT_DIRECT_H

#include "mnemo.h"

extern bool MnemoInsertDirect(MnemoRowsInsert *ins, const char *session_id, const char *tenant,
							  int n, MnemoRowFill fill, void *arg);

#endif							/* MNEMO_INSERT_DIRECT_H */
