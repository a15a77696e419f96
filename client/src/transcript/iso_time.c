/*
 * iso_time.c
 *		The ISO 8601 times of transcripts (2025-01-31T12:00:00.123Z, with an
 *		offset or none) as unix milliseconds, without the process's time
 *		zone.
 */
#include <stdbool.h>
#include <stdint.h>

#include "transcript/transcript.h"

static bool
digits(const char **s, int n, int *out)
{
	*out = 0;
	for (int i = 0; i < n; i++, (*s)++)
	{
		if (**s < '0' || **s > '9')
			return false;
		*out = *out * 10 + (**s - '0');
	}
	return true;
}

/* Days from 1970-01-01 to the date (proleptic Gregorian; Howard Hinnant's
 * days_from_civil), so no time zone of the process gets in the way. */
static int64_t
days_from_civil(int64_t y, int m, int d)
{
	int64_t		era;
	int64_t		yoe,
				doy,
				doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

int64_t
mn_import_iso_time(const char *s)
{
	int			y, mo, d, h, mi, sec, ms = 0;
	int64_t		t;

	if (s == NULL || !digits(&s, 4, &y) || *s++ != '-' || !digits(&s, 2, &mo) || *s++ != '-' ||
		!digits(&s, 2, &d) || (*s != 'T' && *s != ' ') || !(s++, digits(&s, 2, &h)) ||
		*s++ != ':' || !digits(&s, 2, &mi) || *s++ != ':' || !digits(&s, 2, &sec))
		return 0;
	if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
		return 0;
	if (*s == '.')
	{
		int			scale = 100;

		for (s++; *s >= '0' && *s <= '9'; s++, scale /= 10)
			ms += (*s - '0') * scale;
	}
	t = ((days_from_civil(y, mo, d) * 24 + h) * 60 + mi) * 60 + sec;
	if (*s == '+' || *s == '-')
	{
		int			sign = *s++ == '-' ? -1 : 1;
		int			oh, om = 0;

		if (!digits(&s, 2, &oh))
			return 0;
		if (*s == ':')
			s++;
		if (*s != '\0' && !digits(&s, 2, &om))
			return 0;
		t -= sign * (oh * 3600 + om * 60);
	}
	else if (*s == 'Z')
		s++;
	if (*s != '\0')
		return 0;
	return t > 0 ? t * 1000 + ms : 0;
}
