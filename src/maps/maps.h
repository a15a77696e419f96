/*
 * maps.h
 *		Durable maps owned by a session and their items (maps.c,
 *		map_items.c).
 */
#ifndef MNEMO_MAPS_H
#define MNEMO_MAPS_H

#include "mnemo.h"

/* maps.c */
extern void MnemoCheckMapExists(const char *session_id, const char *tenant, const char *map_id);

#endif							/* MNEMO_MAPS_H */
