/*
 * errcodes.h
 *		mnemo's own SQLSTATEs, class MN.
 *
 * One code per condition a client must branch on.  doc/errors.md's SQLSTATE table
 * and the client's error enum mirror this list one-to-one.
 */
#ifndef MNEMO_ERRCODES_H
#define MNEMO_ERRCODES_H

#include "utils/elog.h"

#define ERRCODE_MNEMO_SESSION_NOT_FOUND		MAKE_SQLSTATE('M','N','0','0','1')
#define ERRCODE_MNEMO_MESSAGE_NOT_FOUND		MAKE_SQLSTATE('M','N','0','0','2')
#define ERRCODE_MNEMO_PART_NOT_FOUND		MAKE_SQLSTATE('M','N','0','0','3')
#define ERRCODE_MNEMO_DUPLICATE_ID			MAKE_SQLSTATE('M','N','0','0','4')
#define ERRCODE_MNEMO_IMMUTABLE_FIELD		MAKE_SQLSTATE('M','N','0','0','5')
#define ERRCODE_MNEMO_INVALID_SWAP			MAKE_SQLSTATE('M','N','0','0','6')
#define ERRCODE_MNEMO_RUN_ALREADY_CLAIMED	MAKE_SQLSTATE('M','N','0','0','7')
#define ERRCODE_MNEMO_RUN_ALREADY_COMPLETED	MAKE_SQLSTATE('M','N','0','0','8')
#define ERRCODE_MNEMO_RUN_NOT_CLAIMED		MAKE_SQLSTATE('M','N','0','0','9')
#define ERRCODE_MNEMO_RUN_NOT_COMPLETED		MAKE_SQLSTATE('M','N','0','1','0')
#define ERRCODE_MNEMO_CHECKPOINT_NOT_FOUND	MAKE_SQLSTATE('M','N','0','1','1')
#define ERRCODE_MNEMO_SESSION_INACTIVE		MAKE_SQLSTATE('M','N','0','1','2')
#define ERRCODE_MNEMO_SESSION_AMBIGUOUS		MAKE_SQLSTATE('M','N','0','1','3')

#endif							/* MNEMO_ERRCODES_H */
