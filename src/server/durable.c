// SPDX-License-Identifier: MIT
/*
 * Durable handles ([MS-SMB2] 3.3.5.9.6-3.3.5.9.12).
 */
#include "server/server.h"

/* Disconnected durable opens a conflicting open had to end. */
void srv_durable_purge(struct srv *srv, struct list_head *purge)
{
	(void)srv;
	(void)purge;
}

/* Disconnected durable opens whose time is up. */
void srv_durable_timer(struct srv *srv)
{
	(void)srv;
}
