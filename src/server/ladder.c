// SPDX-License-Identifier: MIT
/*
 * Each share's registration rung, chosen once at start: a probe file per
 * DAX share (made before the capability drop), then the rung every RDMA
 * device the listeners use allows (mem_ladder_rung, mem/mem.c, does the
 * verbs part).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "server/server.h"
#include "util/log.h"

#define LADDER_MAX_DEV 16

/*
 * A 2 MiB unnamed file in each DAX share, mapped as files are, for the
 * direct rung's probe. Made at start before the capability drop, with
 * every capability rdaxd started with: the share root may belong to a
 * user (0755), and nothing after the drop should depend on it. A share
 * without one (it could not be made) ends on the bounce or odp rung,
 * with the reason.
 */
void srv_ladder_prepare(struct srv *s)
{
	char why[256];
	int i, fd;

	for (i = 0; i < s->cfg->nlisten && !s->cfg->listen[i].rdma; i++)
		;
	if (i == s->cfg->nlisten)
		return;
	for (i = 0; i < s->cfg->nshares; i++) {
		struct srv_share *sh = s->cfg->shares[i];

		if (sh->ipc || sh->store != SRV_STORE_DAX || sh->devdax ||
		    sh->rung_want == MEM_RUNG_BOUNCE)
			continue;
		fd = openat(sh->root.fd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
		if (fd < 0) {
			pr_warn("share [%s]: no registration probe file in %s: %s", sh->name,
				sh->path, strerror(errno));
			continue;
		}
		if (ftruncate(fd, 2 << 20))
			pr_warn("share [%s]: sizing the registration probe file: %s", sh->name,
				strerror(errno));
		else if (dax_open(fd, &sh->rung_probe, why, sizeof(why)))
			pr_warn("share [%s]: mapping the registration probe file: %s", sh->name, why);
		close(fd);
	}
}

void srv_ladder_done(struct srv *s)
{
	int i;

	for (i = 0; i < s->cfg->nshares; i++)
		dax_close(&s->cfg->shares[i]->rung_probe);
}

/* One share on one device. */
static int share_rung(struct srv_share *sh, struct ibv_context *v, enum mem_rung *out,
		      char *why, size_t len)
{
	struct mem_ladder_in in = {
		.want = sh->rung_want,
		.pmem = sh->store == SRV_STORE_DAX,
		.kind = sh->devdax ? "device-DAX" : "DAX file",
		.where = sh->path,
	};
	int ret;

	if (in.pmem && in.want != MEM_RUNG_BOUNCE) {
		if (sh->devdax)
			in.probe = dax_base(sh->devdax, &in.probe_len);
		else if (sh->rung_probe)
			in.probe = dax_window(sh->rung_probe, 0, in.probe_len = 2 << 20, true);
	}
	ret = mem_ladder_rung(v, &in, out, why, len);
	if (in.probe && !sh->devdax)
		dax_window_put(sh->rung_probe);
	return ret;
}

/*
 * Once, at start: each share's rung on the devices the RDMA listeners
 * use (a wildcard listener: every device). With several devices the
 * share takes the lowest rung any of them allows.
 */
int srv_ladder_select(struct srv *s)
{
	struct srv_config *cfg = s->cfg;
	struct ibv_context *devs[LADDER_MAX_DEV];
	int ndev, i, j, ret = 0;

	ndev = smbd_listener_devices(s->rdma_listen, s->nrdma_listen, devs, LADDER_MAX_DEV);
	for (i = 0; i < cfg->nshares; i++) {
		struct srv_share *sh = cfg->shares[i];

		if (sh->ipc)
			continue;
		if (!ndev) {
			sh->rung = MEM_RUNG_NONE;
			snprintf(sh->rung_why, sizeof(sh->rung_why), "no RDMA listener");
			if (sh->rung_want == MEM_RUNG_DIRECT || sh->rung_want == MEM_RUNG_ODP)
				pr_warn("[%s] rdma registration = %s has no effect without an rdma:// listener",
					sh->name, mem_rung_name(sh->rung_want));
			continue;
		}
		sh->rung = MEM_RUNG_DIRECT;
		for (j = 0; j < ndev; j++) {
			enum mem_rung r;
			char why[sizeof(sh->rung_why)];

			ret = share_rung(sh, devs[j], &r, why, sizeof(why));
			if (ret) {
				pr_err("share [%s]: %s", sh->name, why);
				return ret;
			}
			if (r >= sh->rung) {
				sh->rung = r;
				snprintf(sh->rung_why, sizeof(sh->rung_why), "%s", why);
			}
		}
	}
	return 0;
}
