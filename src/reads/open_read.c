/*
 * open_read.c
 *		How a read of one session begins, for reads.c and flat.c alike: the
 *		call's frame, the session checked (MN001) and its live line read
 *		(lineage.c), and where on the line to start (MN002 for a message
 *		not on it).
 */
#include "postgres.h"

#include "mnemo.h"
#include "tenancy/tenancy.h"
#include "reads/reads.h"

/*
 * Open the frame of a read of one session: argument 0 is the session id,
 * checked to exist and be visible (MN001); its live line into *line.
 * Returns the id.
 */
char *
MnemoConnectRead(FunctionCallInfo fcinfo, MnemoCall *call, MnemoLine *line)
{
	char	   *session_id = MnemoRequireTextArg(fcinfo, 0, "session_id");

	MnemoConnect(call);
	MnemoReadLine(session_id, PG_INT64_MAX, false, false, line);
	return session_id;
}

/* MN002 for message_id in the session. */
void
MnemoMessageNotFound(const char *message_id, const char *session_id)
{
	ereport(ERROR,
			(errcode(ERRCODE_MNEMO_MESSAGE_NOT_FOUND),
			 errmsg("message \"%s\" does not exist in session \"%s\"", message_id, session_id)));
}

/*
 * The seq after which to read: 0, or the seq of since_message_id (argument
 * argno) on the line, MN002 if that message is not on it.
 */
static int64
SinceSeq(FunctionCallInfo fcinfo, int argno, MnemoLine *line)
{
	char	   *since = MnemoTextArgOrNull(fcinfo, argno);
	char	   *owner;
	int64		seq;

	if (since == NULL)
		return 0;
	if (!MnemoLineFindMessage(line, since, &owner, &seq))
		MnemoMessageNotFound(since, line->session_id);
	return seq;
}

/*
 * Open the frame of a read of a session's line after a message: argument 0
 * is the session (MN001), argument 1 the message after which to read, or
 * NULL (MN002 if not on the line).  Returns the seq after which to read.
 */
int64
MnemoOpenRead(FunctionCallInfo fcinfo, MnemoCall *call, MnemoLine *line)
{
	(void) MnemoConnectRead(fcinfo, call, line);
	return SinceSeq(fcinfo, 1, line);
}
