/*
 * search_words.c
 *		What a search asks of a document, whose words may be stored
 *		without their positions (a short part's: search_index.c).
 *
 * A tsvector without positions never matches a phrase ('a' <-> 'b'): it
 * cannot say the words are adjacent.  So the documents are filtered by the
 * query with every phrase loosened to the AND of its words, which matches
 * every document the query matches and perhaps more; search.c checks what
 * the loosened query finds against the part's words with their positions
 * (SEARCH_RECHECK).
 * A phrase under a NOT turns the other way: the part must not hold the
 * phrase, and a document without positions cannot show that it does not,
 * so such a term constrains nothing.  A query with no phrase is its own
 * loosened form and needs no check.
 */
#include "postgres.h"

#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "tsearch/ts_type.h"
#include "utils/builtins.h"

#include "reads/search.h"

/*
 * The loosened form of the subtree at item, as tsquery text, into out.
 * Where positive, what it writes matches at least what the subtree matches;
 * under an odd number of NOTs, at most.  Returns false where no query can
 * say that: the subtree constrains nothing (true, where positive) or
 * matches nothing that could be shown (false, under a NOT); the caller
 * drops it from its AND or OR accordingly, and nothing is written.
 */
static bool
Loosen(QueryItem *item, char *operands, bool positive, bool *phrase, StringInfo out)
{
	QueryOperator *op = &item->qoperator;
	StringInfoData left;
	StringInfoData right;
	bool		has_left;
	bool		has_right;

	check_stack_depth();
	if (item->type == QI_VAL)
	{
		char	   *word = operands + item->qoperand.distance;
		int			i;

		appendStringInfoChar(out, '\'');
		for (i = 0; i < item->qoperand.length; i++)
		{
			if (word[i] == '\'' || word[i] == '\\')
				appendStringInfoChar(out, word[i]);
			appendStringInfoChar(out, word[i]);
		}
		appendStringInfoChar(out, '\'');
		if (item->qoperand.prefix)
			appendStringInfoString(out, ":*");
		return true;
	}

	if (op->oper == OP_NOT)
	{
		initStringInfo(&left);
		if (!Loosen(item + 1, operands, !positive, phrase, &left))
			return false;		/* NOT true is false; NOT false, true: both unsayable */
		appendStringInfo(out, "!(%s)", left.data);
		return true;
	}

	if (op->oper == OP_PHRASE)
		*phrase = true;
	initStringInfo(&left);
	initStringInfo(&right);
	has_left = Loosen(item + op->left, operands, positive, phrase, &left);
	has_right = Loosen(item + 1, operands, positive, phrase, &right);

	/* a phrase is at most the AND of its words, and nothing less can be said */
	if (op->oper == OP_PHRASE && !positive)
		return false;
	if (op->oper == OP_OR ? positive : !positive)
	{
		/* an OR with a true side is true; an AND under a NOT with a false one, false */
		if (!has_left || !has_right)
			return false;
	}
	else if (!has_left || !has_right)
	{
		/* an AND drops a true side; an OR under a NOT a false one */
		if (has_left || has_right)
			appendStringInfoString(out, has_left ? left.data : right.data);
		return has_left || has_right;
	}
	appendStringInfo(out, "(%s %s %s)", left.data,
					 op->oper == OP_OR ? "|" : "&", right.data);
	return true;
}

/*
 * Fill run->words and run->exact from query, a tsquery: the text of the
 * query a document is filtered by (NULL: every document), and whether what
 * it finds needs no check.
 */
void
MnemoSearchLoosen(MnemoSearchRun *run, TSQuery query)
{
	StringInfoData out;
	bool		phrase = false;

	initStringInfo(&out);
	if (query->size > 0 && Loosen(GETQUERY(query), GETOPERAND(query), true, &phrase, &out))
		run->words = CStringGetTextDatum(out.data);
	else
		run->words = (Datum) 0;
	run->exact = !phrase;
}
