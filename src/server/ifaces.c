// SPDX-License-Identifier: MIT
/*
 * The interfaces FSCTL_QUERY_NETWORK_INTERFACE_INFO names ([MS-SMB2]
 * 2.2.32.5, 3.3.5.15.11): each address a listener serves, with its
 * interface index, link speed and capabilities. RDMA_CAPABLE where an
 * RDMA device sits on that netdev and an rdma:// listener serves the
 * address; RSS_CAPABLE where the NIC has several receive queues. The
 * "interfaces" parameter (Samba's syntax) limits the list and may set a
 * speed or capabilities, as in Samba: "eth0;speed=10000000000,capability=RSS".
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "proto/smb2.h"
#include "server/server.h"
#include "util/log.h"

static uint64_t read_u64(const char *path, bool *ok)
{
	unsigned long long v = 0;
	FILE *f = fopen(path, "r");

	*ok = false;
	if (f) {
		*ok = fscanf(f, "%llu", &v) == 1;
		fclose(f);
	}
	return v;
}

/* The RDMA device on netdev ifname, and its port rate in bits/s. */
static bool rdma_dev_on(const char *ifname, uint64_t *rate)
{
	char path[512], ndev[IFNAMSIZ + 2];
	struct dirent *de;
	bool found = false;
	DIR *d;
	FILE *f;

	d = opendir("/sys/class/infiniband");
	if (!d)
		return false;
	while (!found && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/1/gid_attrs/ndevs/0",
			 de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(ndev, sizeof(ndev), f)) {
			ndev[strcspn(ndev, "\n")] = 0;
			found = !strcmp(ndev, ifname);
		}
		fclose(f);
		if (found) {
			/* "100 Gb/sec (4X EDR)" */
			unsigned long long gb = 0;

			snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/1/rate",
				 de->d_name);
			f = fopen(path, "r");
			if (f) {
				if (fscanf(f, "%llu", &gb) != 1)
					gb = 0;
				fclose(f);
			}
			*rate = gb * 1000000000ull;
		}
	}
	closedir(d);
	return found;
}

static int rx_queues(const char *ifname)
{
	char path[256];
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/sys/class/net/%s/queues", ifname);
	d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d)))
		n += !strncmp(de->d_name, "rx-", 3);
	closedir(d);
	return n;
}

static bool same_addr(const struct sockaddr *sa, const char *text)
{
	char buf[INET6_ADDRSTRLEN];
	const void *a = sa->sa_family == AF_INET ?
			(const void *)&((const struct sockaddr_in *)sa)->sin_addr :
			(const void *)&((const struct sockaddr_in6 *)sa)->sin6_addr;

	if (!inet_ntop(sa->sa_family, a, buf, sizeof(buf)))
		return false;
	return !strcmp(buf, text) || (text[0] == '[' && !strncmp(text + 1, buf, strlen(buf)));
}

static bool any_addr(const char *a)
{
	return !strcmp(a, "0.0.0.0") || !strcmp(a, "::") || !strcmp(a, "[::]") || !*a;
}

/* Does a listener (rdma or not) serve address sa? */
static bool served(const struct srv_config *cfg, const struct sockaddr *sa, bool rdma)
{
	int i;

	for (i = 0; i < cfg->nlisten; i++) {
		const struct srv_listen *l = &cfg->listen[i];

		if (l->rdma != rdma)
			continue;
		if (same_addr(sa, l->addr))
			return true;
		/* a wildcard listener serves every address of its family */
		if (any_addr(l->addr) && !(sa->sa_family == AF_INET6 &&
					   !strcmp(l->addr, "0.0.0.0")))
			return true;
	}
	return false;
}

/* Prefix match "192.168.1.0/24", "fd00::/8". */
static bool in_net(const struct sockaddr *sa, const char *net)
{
	char addr[INET6_ADDRSTRLEN + 8], *slash;
	uint8_t want[16], have[16];
	int family = strchr(net, ':') ? AF_INET6 : AF_INET, bits, len, i;

	snprintf(addr, sizeof(addr), "%s", net);
	slash = strchr(addr, '/');
	if (!slash || sa->sa_family != family)
		return false;
	*slash = 0;
	bits = atoi(slash + 1);
	if (inet_pton(family, addr, want) != 1)
		return false;
	len = family == AF_INET ? 4 : 16;
	memcpy(have, family == AF_INET ? (const void *)&((const struct sockaddr_in *)sa)->sin_addr :
		     (const void *)&((const struct sockaddr_in6 *)sa)->sin6_addr, (size_t)len);
	if (bits < 0 || bits > len * 8)
		return false;
	for (i = 0; i < bits; i++)
		if ((want[i / 8] ^ have[i / 8]) & (0x80 >> (i % 8)))
			return false;
	return true;
}

/*
 * The "interfaces" entry that covers this address of ifname, if any:
 * its options (speed, capabilities, if_index) apply.
 */
static bool iface_allowed(const struct srv_config *cfg, const char *ifname,
			  const struct sockaddr *sa, struct srv_iface *e)
{
	char list[sizeof(cfg->interfaces)], *tok, *save = NULL, *opt, *o2, *s2;
	bool hit = false;

	if (!cfg->interfaces[0])
		return true;
	snprintf(list, sizeof(list), "%s", cfg->interfaces);
	for (tok = strtok_r(list, " \t,", &save); tok && !hit; tok = strtok_r(NULL, " \t,", &save)) {
		/* Samba's options follow ';' and are separated by ',' */
		opt = strchr(tok, ';');
		if (opt)
			*opt++ = 0;
		if (tok[0] == '"')
			tok++;
		tok[strcspn(tok, "\"")] = 0;
		hit = !strcmp(tok, ifname) || same_addr(sa, tok) || in_net(sa, tok);
		if (!hit || !opt)
			continue;
		for (o2 = strtok_r(opt, ",", &s2); o2; o2 = strtok_r(NULL, ",", &s2)) {
			if (!strncasecmp(o2, "speed=", 6))
				e->speed = strtoull(o2 + 6, NULL, 10);
			else if (!strcasecmp(o2, "capability=RSS"))
				e->caps |= SMB2_IFACE_RSS_CAPABLE;
			else if (!strcasecmp(o2, "capability=RDMA"))
				e->caps |= SMB2_IFACE_RDMA_CAPABLE;
			else if (!strncasecmp(o2, "if_index=", 9))
				e->if_index = (uint32_t)strtoul(o2 + 9, NULL, 10);
		}
	}
	return hit;
}

int srv_ifaces(const struct srv_config *cfg, struct srv_iface *out, int max)
{
	struct ifaddrs *ifs, *ifa;
	int n = 0;

	if (getifaddrs(&ifs))
		return -errno;
	for (ifa = ifs; ifa && n < max; ifa = ifa->ifa_next) {
		struct srv_iface *e = &out[n];
		uint64_t rate = 0;
		bool ok, tcp, rdma;

		if (!ifa->ifa_addr || !(ifa->ifa_flags & IFF_UP) ||
		    (ifa->ifa_addr->sa_family != AF_INET && ifa->ifa_addr->sa_family != AF_INET6))
			continue;
		tcp = served(cfg, ifa->ifa_addr, false);
		rdma = served(cfg, ifa->ifa_addr, true) && rdma_dev_on(ifa->ifa_name, &rate);
		if (!tcp && !rdma)
			continue;
		/* a wildcard listener does not make loopback worth naming */
		if (ifa->ifa_flags & IFF_LOOPBACK && !cfg->interfaces[0]) {
			bool named = false;
			int i;

			for (i = 0; i < cfg->nlisten; i++)
				named |= same_addr(ifa->ifa_addr, cfg->listen[i].addr);
			if (!named)
				continue;
		}
		memset(e, 0, sizeof(*e));
		snprintf(e->name, sizeof(e->name), "%s", ifa->ifa_name);
		e->if_index = if_nametoindex(ifa->ifa_name);
		memcpy(&e->addr, ifa->ifa_addr, ifa->ifa_addr->sa_family == AF_INET ?
		       sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6));
		if (rdma)
			e->caps |= SMB2_IFACE_RDMA_CAPABLE;
		if (rx_queues(ifa->ifa_name) > 1)
			e->caps |= SMB2_IFACE_RSS_CAPABLE;
		e->speed = rate;
		if (!e->speed) {
			char path[128];
			uint64_t mbps;

			snprintf(path, sizeof(path), "/sys/class/net/%s/speed", ifa->ifa_name);
			mbps = read_u64(path, &ok);
			/* virtual links (veth, lo) have none: say 10 Gb/s */
			e->speed = ok && mbps && mbps < 10000000 ? mbps * 1000000 : 10000000000ull;
		}
		if (!iface_allowed(cfg, ifa->ifa_name, ifa->ifa_addr, e))
			continue;
		n++;
	}
	freeifaddrs(ifs);
	return n;
}
