// SPDX-License-Identifier: MIT
/*
 * The rdaxd configuration: the input is an smb.conf file for
 * srv_config_load (inih), and each of its lines is also a listen URL for
 * srv_config_parse_listen. Everything is freed with srv_config_free, so
 * LeakSanitizer sees any leak. Share paths are never opened.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "server/server.h"
#include "util/log.h"

static int memfd = -1;
static char path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* warnings about unknown parameters would flood the output */
	log_threshold = -1;
	memfd = memfd_create("fuzz-config", 0);
	if (memfd < 0) {
		perror("memfd_create");
		abort();
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", memfd);
	return 0;
}

static void check_config(const struct srv_config *cfg)
{
	int i, j;

	FUZZ_ASSERT(cfg->nlisten >= 0 && cfg->nlisten <= SRV_MAX_LISTEN);
	for (i = 0; i < cfg->nlisten; i++) {
		FUZZ_ASSERT(cfg->listen[i].port >= 1 &&
			    cfg->listen[i].port <= 65535);
		FUZZ_ASSERT(memchr(cfg->listen[i].addr, 0,
				   sizeof(cfg->listen[i].addr)));
	}
	for (i = 0; i < cfg->nshares; i++) {
		const struct srv_share *sh = cfg->shares[i];

		FUZZ_ASSERT(sh->name[0]);
		FUZZ_ASSERT(memchr(sh->name, 0, sizeof(sh->name)));
		FUZZ_ASSERT(memchr(sh->path, 0, sizeof(sh->path)));
		FUZZ_ASSERT(memchr(sh->comment, 0, sizeof(sh->comment)));
		FUZZ_ASSERT(!strpbrk(sh->name, "\\/:*?\"<>|[]"));
		FUZZ_ASSERT(srv_share_find(cfg, sh->name) == sh);
		for (j = 0; j < sh->nvalid; j++)
			FUZZ_ASSERT(sh->valid_users[j] && sh->valid_users[j][0]);
	}
	FUZZ_ASSERT(memchr(cfg->netbios_name, 0, sizeof(cfg->netbios_name)));
	FUZZ_ASSERT(memchr(cfg->workgroup, 0, sizeof(cfg->workgroup)));
	FUZZ_ASSERT(memchr(cfg->passdb_path, 0, sizeof(cfg->passdb_path)));
}

static void listen_lines(const uint8_t *data, size_t size)
{
	struct srv_config cfg;
	char *s, *line, *save = NULL;

	s = malloc(size + 1);
	if (!s)
		return;
	memcpy(s, data, size);
	s[size] = 0;
	srv_config_init(&cfg);
	for (line = strtok_r(s, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		int before = cfg.nlisten, rc;

		rc = srv_config_parse_listen(&cfg, line);
		FUZZ_ASSERT(rc ? cfg.nlisten == before : cfg.nlisten == before + 1);
		if (cfg.nlisten == SRV_MAX_LISTEN)
			cfg.nlisten = 0;
	}
	check_config(&cfg);
	srv_config_free(&cfg);
	free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct srv_config cfg;
	int rc;

	if (ftruncate(memfd, 0) || pwrite(memfd, data, size, 0) != (ssize_t)size)
		abort();
	srv_config_init(&cfg);
	rc = srv_config_load(&cfg, path);
	FUZZ_ASSERT(rc == 0 || rc == -EINVAL || rc == -EIO);
	check_config(&cfg);
	srv_config_free(&cfg);
	listen_lines(data, size);
	return 0;
}
