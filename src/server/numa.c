// SPDX-License-Identifier: MIT
/*
 * NUMA placement of the workers (libnuma): each worker, its completion
 * queues, pools and bounce buffers live on the node of the RDMA device
 * or NIC rdaxd serves, read from sysfs; `numa node` overrides it, and a
 * binding rdaxd was started with (numactl) is kept.
 */
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <numa.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/server.h"
#include "util/log.h"

/* A test hook for machines whose devices report no node (rxe, veth). */
static const char *sysfs_root(void)
{
	const char *r = getenv("RDAX_SYSFS_ROOT");

	return r && *r ? r : "/sys";
}

static int read_node(const char *path)
{
	FILE *f = fopen(path, "r");
	int node = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%d", &node) != 1)
		node = -1;
	fclose(f);
	return node;
}

static int rdma_dev_node(struct ibv_context *v, char *name, size_t len)
{
	char path[512];
	int node;

	snprintf(name, len, "%s", smbd_dev_name(v));
	snprintf(path, sizeof(path), "%s/class/infiniband/%s/device/numa_node", sysfs_root(), name);
	node = read_node(path);
	if (node < 0) {
		/* Soft-RoCE and friends: the node of the network device below */
		char parent[IF_NAMESIZE + 1] = "";
		FILE *f;

		snprintf(path, sizeof(path), "%s/class/infiniband/%s/parent", sysfs_root(), name);
		f = fopen(path, "r");
		if (f) {
			if (fscanf(f, "%16s", parent) != 1)
				parent[0] = 0;
			fclose(f);
		}
		if (parent[0]) {
			snprintf(path, sizeof(path), "%s/class/net/%s/device/numa_node",
				 sysfs_root(), parent);
			node = read_node(path);
		}
	}
	return node;
}

/* The interface that owns a listen address ("0.0.0.0": none). */
static int addr_node(const char *addr, char *name, size_t len)
{
	struct ifaddrs *ifa, *i;
	char buf[INET6_ADDRSTRLEN], path[512];
	int node = -1;

	if (!strcmp(addr, "0.0.0.0") || !strcmp(addr, "::") || getifaddrs(&ifa))
		return -1;
	for (i = ifa; i; i = i->ifa_next) {
		void *a;

		if (!i->ifa_addr)
			continue;
		if (i->ifa_addr->sa_family == AF_INET)
			a = &((struct sockaddr_in *)i->ifa_addr)->sin_addr;
		else if (i->ifa_addr->sa_family == AF_INET6)
			a = &((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr;
		else
			continue;
		if (!inet_ntop(i->ifa_addr->sa_family, a, buf, sizeof(buf)) || strcmp(buf, addr))
			continue;
		snprintf(name, len, "%s", i->ifa_name);
		snprintf(path, sizeof(path), "%s/class/net/%s/device/numa_node", sysfs_root(),
			 i->ifa_name);
		node = read_node(path);
		break;
	}
	freeifaddrs(ifa);
	return node;
}

/*
 * Once, before the workers start: the node they run and allocate on,
 * and how many of them by default (the CPUs of that node).
 */
int srv_numa_plan(struct srv *s)
{
	struct srv_config *cfg = s->cfg;
	struct bitmask *run;
	char why[256] = "", name[64];
	int node = -1, i, n, other = -1;
	bool mixed = false;

	s->numa_node = -1;
	if (numa_available() < 0) {
		s->numa_cpus = 0;
		return 0;
	}
	run = numa_get_run_node_mask();
	n = numa_num_configured_nodes();
	if (run && (int)numa_bitmask_weight(run) < n && cfg->numa_node == SRV_NUMA_AUTO) {
		/* numactl --cpunodebind/--membind around rdaxd: keep it */
		pr_notice("NUMA: keeping the binding rdaxd was started with (%d of %d nodes)",
			  numa_bitmask_weight(run), n);
		numa_bitmask_free(run);
		return 0;
	}
	numa_bitmask_free(run);
	if (cfg->numa_node == SRV_NUMA_OFF)
		return 0;
	if (cfg->numa_node >= 0) {
		if (cfg->numa_node > numa_max_node() || numa_bitmask_weight(numa_all_nodes_ptr) == 0 ||
		    !numa_bitmask_isbitset(numa_all_nodes_ptr, (unsigned int)cfg->numa_node)) {
			pr_err("numa node = %d: this machine has nodes 0-%d", cfg->numa_node,
			       numa_max_node());
			return -EINVAL;
		}
		node = cfg->numa_node;
		snprintf(why, sizeof(why), "numa node = %d", node);
	} else {
		for (i = 0; i < s->nrdma_listen; i++) {
			struct ibv_context *v = smbd_listener_verbs(s->rdma_listen[i]);
			int d;

			if (!v)
				continue;
			d = rdma_dev_node(v, name, sizeof(name));
			if (d < 0)
				continue;
			if (node >= 0 && d != node)
				mixed = true;
			node = d;
			snprintf(why, sizeof(why), "%s is on node %d", name, d);
		}
		for (i = 0; i < cfg->nlisten && node < 0; i++) {
			if (cfg->listen[i].rdma)
				continue;
			other = addr_node(cfg->listen[i].addr, name, sizeof(name));
			if (other >= 0) {
				node = other;
				snprintf(why, sizeof(why), "%s (%s) is on node %d", name,
					 cfg->listen[i].addr, other);
			}
		}
		if (mixed) {
			pr_notice("NUMA: RDMA devices on several nodes: workers are not bound");
			return 0;
		}
		if (node < 0) {
			if (n > 1)
				pr_notice("NUMA: no listener device reports a node: workers are not bound");
			return 0;
		}
	}
	s->numa_node = node;
	s->numa_cpus = 0;
	{
		struct bitmask *cpus = numa_allocate_cpumask();

		if (!numa_node_to_cpus(node, cpus))
			s->numa_cpus = (int)numa_bitmask_weight(cpus);
		numa_free_cpumask(cpus);
	}
	if (s->numa_cpus <= 0) {
		pr_warn("NUMA: node %d has no CPUs: workers are not bound", node);
		s->numa_node = -1;
		return 0;
	}
	pr_notice("NUMA: workers, their queues and buffers on node %d (%s; %d CPUs)", node, why,
		  s->numa_cpus);
	return 0;
}

/* In the worker thread, before it allocates anything. */
void srv_numa_enter(struct srv_worker *w)
{
	int node = w->srv->numa_node;

	w->cpu = -1;
	w->node = -1;
	if (node >= 0) {
		if (numa_run_on_node(node))
			pr_warn("worker %d: cannot run on node %d: %s", w->idx, node, strerror(errno));
		numa_set_preferred(node);
	}
	w->cpu = sched_getcpu();
	w->node = w->cpu >= 0 && numa_available() >= 0 ? numa_node_of_cpu(w->cpu) : -1;
}
