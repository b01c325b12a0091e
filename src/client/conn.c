// SPDX-License-Identifier: MIT
/* librdax connection: configuration, NEGOTIATE, SESSION_SETUP and the
 * request engine (credits, signing, encryption, compounds). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client/client.h"
#include "crypto/auth.h"
#include "proto/ntstatus.h"
#include "transport/smbdirect.h"
#include "transport/transport.h"
#include "util/utf16.h"

#define CLI_MAX_MSG (SMB2_MAX_IO_SIZE + (1u << 20))
#define CLI_AUTH_MAX AUTH_TOKEN_MAX

/* ---- calls without a connection: a message per thread ---- */

static __thread char cli_thread_msg[512];
static __thread uint32_t cli_thread_status;

const char *rdax_errormsg(void)
{
	return cli_thread_msg;
}

void cli_thread_begin(void)
{
	cli_thread_msg[0] = 0;
	cli_thread_status = 0;
}

int cli_thread_err(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cli_thread_msg, sizeof(cli_thread_msg), fmt, ap);
	va_end(ap);
	cli_thread_status = 0;
	return err < 0 ? err : -err;
}

/* ---- configuration ---- */

int rdax_cfg_new(struct rdax_cfg **out)
{
	struct rdax_cfg *cfg;

	cli_thread_begin();
	if (!out)
		return cli_thread_err(-EINVAL, "rdax_cfg_new: no result pointer");
	cfg = calloc(1, sizeof(*cfg));
	if (!cfg)
		return cli_thread_err(-ENOMEM, "rdax_cfg_new: out of memory");
	cfg->transport = RDAX_TRANSPORT_TCP;
	cfg->min_dialect = RDAX_SMB_2_1;
	cfg->max_dialect = RDAX_SMB_3_1_1;
	cfg->timeout_ms = 60000;
	cfg->rdma_threshold = 32768;	/* by measurement: docs/testbed.md, the sweep */
	cfg->mr_cache_bytes = 1ull << 30;
	cfg->channels = 1;
	cfg->rdma_channels = -1;
	cfg->leases = true;
	cfg->poll = RDAX_POLL_ADAPTIVE;
	cfg->poll_spin_us = RDAX_POLL_SPIN_DEFAULT;
	cfg->durable = true;
	*out = cfg;
	return 0;
}

void rdax_cfg_delete(struct rdax_cfg **cfg)
{
	if (!*cfg)
		return;
	explicit_bzero((*cfg)->password, sizeof((*cfg)->password));
	free(*cfg);
	*cfg = NULL;
}

int rdax_cfg_set_transport(struct rdax_cfg *cfg, enum rdax_transport t)
{
	cli_thread_begin();
	if (t != RDAX_TRANSPORT_TCP && t != RDAX_TRANSPORT_RDMA)
		return cli_thread_err(-EINVAL, "rdax_cfg_set_transport: unknown transport %d", (int)t);
	cfg->transport = t;
	return 0;
}

int rdax_cfg_set_credentials(struct rdax_cfg *cfg, const char *user,
			     const char *password)
{
	const char *sep;

	cli_thread_begin();
	if (!user)
		return cli_thread_err(-EINVAL, "rdax_cfg_set_credentials: no user name");
	if (strlen(user) >= sizeof(cfg->user))
		return cli_thread_err(-EINVAL, "rdax_cfg_set_credentials: user name longer than %zu bytes",
				      sizeof(cfg->user) - 1);
	if (password && strlen(password) >= sizeof(cfg->password))
		return cli_thread_err(-EINVAL, "rdax_cfg_set_credentials: password longer than %zu bytes",
				      sizeof(cfg->password) - 1);
	cfg->domain[0] = 0;
	sep = strchr(user, '\\');
	if (sep) {
		snprintf(cfg->domain, sizeof(cfg->domain), "%.*s",
			 (int)(sep - user), user);
		snprintf(cfg->user, sizeof(cfg->user), "%s", sep + 1);
	} else if ((sep = strchr(user, '@'))) {
		snprintf(cfg->user, sizeof(cfg->user), "%.*s", (int)(sep - user), user);
		snprintf(cfg->domain, sizeof(cfg->domain), "%s", sep + 1);
	} else {
		snprintf(cfg->user, sizeof(cfg->user), "%s", user);
	}
	if (password) {
		snprintf(cfg->password, sizeof(cfg->password), "%s", password);
		cfg->have_password = true;
	}
	cfg->guest = false;
	return 0;
}

int rdax_cfg_set_password_file(struct rdax_cfg *cfg, const char *path)
{
	char buf[sizeof(cfg->password) + 2];
	struct stat st;
	ssize_t n;
	int fd, ret = 0;
	char *nl;

	cli_thread_begin();
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return cli_thread_err(-errno, "password file %s: %s", path, strerror(errno));
	if (fstat(fd, &st)) {
		ret = cli_thread_err(-errno, "password file %s: %s", path, strerror(errno));
		goto out_close;
	}
	if (st.st_mode & 077) {
		ret = cli_thread_err(-EPERM, "password file %s: group or others may read it (mode %04o)",
				     path, (unsigned int)(st.st_mode & 07777));
		goto out_close;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0) {
		ret = cli_thread_err(-errno, "password file %s: %s", path, strerror(errno));
		goto out_close;
	}
	buf[n] = 0;
	nl = strpbrk(buf, "\r\n");
	if (nl)
		*nl = 0;
	if (strlen(buf) >= sizeof(cfg->password)) {
		ret = cli_thread_err(-ENAMETOOLONG, "password file %s: password longer than %zu bytes",
				     path, sizeof(cfg->password) - 1);
		goto out_wipe;
	}
	strcpy(cfg->password, buf);
	cfg->have_password = true;
out_wipe:
	explicit_bzero(buf, sizeof(buf));
out_close:
	close(fd);
	return ret;
}

int rdax_cfg_set_guest(struct rdax_cfg *cfg, bool guest)
{
	cli_thread_begin();
	cfg->guest = guest;
	return 0;
}

int rdax_cfg_set_signing(struct rdax_cfg *cfg, bool required)
{
	cli_thread_begin();
	cfg->sign_required = required;
	return 0;
}

int rdax_cfg_set_encryption(struct rdax_cfg *cfg, bool required)
{
	cli_thread_begin();
	cfg->encrypt_required = required;
	return 0;
}

int rdax_cfg_set_dialects(struct rdax_cfg *cfg, uint16_t min, uint16_t max)
{
	cli_thread_begin();
	if (min > max || min < RDAX_SMB_2_1 || max > RDAX_SMB_3_1_1)
		return cli_thread_err(-EINVAL, "rdax_cfg_set_dialects: 0x%04x..0x%04x is not a range within 0x%04x..0x%04x",
				      min, max, RDAX_SMB_2_1, RDAX_SMB_3_1_1);
	cfg->min_dialect = min;
	cfg->max_dialect = max;
	return 0;
}

int rdax_cfg_set_timeout(struct rdax_cfg *cfg, int ms)
{
	/* 0 would time every request out at once; -1 is "no timeout" */
	cli_thread_begin();
	if (ms <= 0 && ms != -1)
		return cli_thread_err(-EINVAL, "rdax_cfg_set_timeout: %d ms (a positive count or -1)", ms);
	cfg->timeout_ms = ms;
	return 0;
}

int rdax_cfg_set_rdma_threshold(struct rdax_cfg *cfg, uint32_t bytes)
{
	cli_thread_begin();
	cfg->rdma_threshold = bytes;
	return 0;
}

int rdax_cfg_set_rdma_transform(struct rdax_cfg *cfg, bool on)
{
	cli_thread_begin();
	cfg->rdma_transform = on;
	return 0;
}

int rdax_cfg_set_mr_cache(struct rdax_cfg *cfg, size_t bytes)
{
	cli_thread_begin();
	cfg->mr_cache_bytes = bytes;
	return 0;
}

int rdax_cfg_set_channels(struct rdax_cfg *cfg, unsigned int n)
{
	cli_thread_begin();
	if (n < 1 || n > CLI_MAX_CHANNELS)
		return cli_thread_err(-EINVAL, "rdax_cfg_set_channels: %u (1..%u)", n, CLI_MAX_CHANNELS);
	cfg->channels = n;
	return 0;
}

int rdax_cfg_set_rdma_channels(struct rdax_cfg *cfg, bool on)
{
	cli_thread_begin();
	cfg->rdma_channels = on ? 1 : 0;
	return 0;
}

int rdax_cfg_set_leases(struct rdax_cfg *cfg, bool on)
{
	cli_thread_begin();
	cfg->leases = on;
	return 0;
}

int rdax_cfg_set_durable(struct rdax_cfg *cfg, bool on)
{
	cli_thread_begin();
	cfg->durable = on;
	return 0;
}

int rdax_cfg_set_poll(struct rdax_cfg *cfg, enum rdax_poll mode, unsigned int spin_us)
{
	cli_thread_begin();
	if (mode != RDAX_POLL_EVENT && mode != RDAX_POLL_ADAPTIVE && mode != RDAX_POLL_BUSY)
		return cli_thread_err(-EINVAL, "rdax_cfg_set_poll: mode %d (event, adaptive, busy)",
				      (int)mode);
	if (spin_us > 100000)
		return cli_thread_err(-EINVAL, "rdax_cfg_set_poll: spin %u us (0..100000)", spin_us);
	cfg->poll = mode;
	cfg->poll_spin_us = spin_us ? spin_us : RDAX_POLL_SPIN_DEFAULT;
	return 0;
}

int rdax_cfg_set_log(struct rdax_cfg *cfg, void (*fn)(void *arg, const char *msg),
		     void *arg)
{
	cli_thread_begin();
	cfg->log = fn;
	cfg->log_arg = arg;
	return 0;
}

/* ---- errors ---- */

void cli_begin(struct rdax_conn *c)
{
	/* what the transports log in this call goes to c's callback */
	log_set_thread_sink(c->cfg.log, c->cfg.log_arg);
	c->errmsg[0] = 0;
	c->last_status = 0;
	if (c->ncached)
		cli_leases_expire(c);
}

int cli_err(struct rdax_conn *c, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->errmsg, sizeof(c->errmsg), fmt, ap);
	va_end(ap);
	return err < 0 ? err : -err;
}

int cli_done(struct rdax_conn *c, int ret, const char *op, const char *path)
{
	if (ret >= 0 || c->errmsg[0])
		return ret;
	return cli_err(c, ret, "%s%s%s: %s", op, path ? " " : "", path ? path : "",
		       strerror(-ret));
}

int cli_status(struct rdax_conn *c, uint32_t status, const char *op,
	       const char *path)
{
	c->last_status = status;
	return cli_err(c, -ntstatus_to_errno(status), "%s%s%s: %s", op,
		       path ? " " : "", path ? path : "", rdax_status_str(status));
}

const char *rdax_conn_errmsg(const struct rdax_conn *c)
{
	return c ? c->errmsg : cli_thread_msg;
}

uint32_t rdax_conn_last_status(const struct rdax_conn *c)
{
	return c ? c->last_status : cli_thread_status;
}

const char *rdax_status_str(uint32_t status)
{
	static __thread char buf[160];
	const char *name = ntstatus_name(status);

	if (name)
		snprintf(buf, sizeof(buf), "%s (%s)", name, ntstatus_text(status));
	else
		snprintf(buf, sizeof(buf), "NTSTATUS 0x%08x", status);
	return buf;
}

int rdax_conn_info(const struct rdax_conn *c, struct rdax_conn_info *info)
{
	memset(info, 0, sizeof(*info));
	info->dialect = c->dialect;
	info->signing = c->signing;
	info->encryption = c->encrypt;
	info->guest = c->guest;
	info->max_read = c->max_read;
	info->max_write = c->max_write;
	info->channels = (uint8_t)cli_chans_alive(c);
	info->channels_total = (uint8_t)c->nchan;
	snprintf(info->transport, sizeof(info->transport), "%s",
		 c->nchan && c->chans[0].rdma ? "smbdirect" : "tcp");
	return 0;
}

int rdax_conn_channel_info(const struct rdax_conn *c, unsigned int index,
			   struct rdax_channel_info *info)
{
	const struct cli_chan *chan;

	if (!c || !info)
		return -EINVAL;
	memset(info, 0, sizeof(*info));
	if (index >= c->nchan)
		return -ENOENT;
	chan = &c->chans[index];
	info->index = index;
	info->alive = chan->bound && !chan->dead;
	snprintf(info->transport, sizeof(info->transport), "%s",
		 chan->rdma ? "smbdirect" : "tcp");
	snprintf(info->peer, sizeof(info->peer), "%s", chan->peer);
	info->rdma_bytes = chan->rdma_bytes;
	info->bytes_sent = chan->bytes_sent;
	info->bytes_received = chan->bytes_received;
	info->requests = chan->requests;
	info->replays = chan->replays;
	info->credits = info->alive ? chan->cr.held : 0;
	snprintf(info->error, sizeof(info->error), "%s", chan->error);
	return 0;
}

static void stats_fill(const struct rdax_conn *c, struct rdax_stats *st)
{
	struct mr_cache_stats ms;
	struct smbd_info si;
	const struct list_head *pos;
	unsigned int i;

	*st = c->stats;
	st->cached_handles = 0;
	st->leases = 0;
	for (pos = c->leases.next; pos != &c->leases; pos = pos->next) {
		const struct cli_lease *l = list_entry(pos, struct cli_lease, link);

		st->leases += !!l->state;
		st->cached_handles += l->cached;
	}
	st->credits = cli_credits_total(c);
	st->rdma_bytes = c->rdma_bytes;
	st->inline_bytes = c->inline_bytes;
	for (i = 0; i < c->nrdev; i++) {
		if (!c->rdevs[i].mrc)
			continue;
		mr_cache_get_stats(c->rdevs[i].mrc, &ms);
		st->mr_cache_hits += ms.hits;
		st->mr_cache_misses += ms.misses;
	}
	for (i = 0; i < c->nchan; i++) {
		const struct cli_chan *chan = &c->chans[i];

		if (chan->x && chan->bound && !chan->dead) {
			smbd_get_info(chan->x, &si);
			st->smbd_send_credits += si.send_credits;
		}
	}
}

int rdax_conn_stats(const struct rdax_conn *c, struct rdax_stats *st)
{
	stats_fill(c, st);
	return 0;
}

int rdax_conn_fd(const struct rdax_conn *c)
{
	return c->epfd;
}

/* Handle what has arrived, at most a bounded number of events. */
int rdax_conn_service(struct rdax_conn *c)
{
	int i, ret = 0;

	cli_begin(c);
	for (i = 0; i < 64 && !ret; i++)
		ret = cli_progress(c, 0);
	return ret == -ETIMEDOUT ? 0 : ret;
}

void rdax_conn_stats_reset(struct rdax_conn *c)
{
	unsigned int i;

	memset(&c->stats, 0, sizeof(c->stats));
	for (i = 0; i < c->nchan; i++) {
		c->chans[i].bytes_sent = 0;
		c->chans[i].bytes_received = 0;
		c->chans[i].requests = 0;
		c->chans[i].replays = 0;
		c->chans[i].rdma_bytes = 0;
	}
	c->rdma_bytes = 0;
	c->inline_bytes = 0;
	for (i = 0; i < c->nrdev; i++)
		if (c->rdevs[i].mrc)
			mr_cache_reset_stats(c->rdevs[i].mrc);
}

int cli_path16(const char *path, uint8_t *out, size_t cap)
{
	int n, i, o;

	while (*path == '/')
		path++;
	n = utf8_to_utf16le(path, out, cap);
	if (n < 0)
		return n;
	/* '/' becomes '\\'; "a//b" is "a\\b" (servers refuse empty components) */
	for (i = 0, o = 0; i + 1 < n; i += 2) {
		bool sep = (out[i] == '/' || out[i] == '\\') && out[i + 1] == 0;

		if (sep && o >= 2 && out[o - 2] == '\\' && out[o - 1] == 0)
			continue;
		out[o] = sep ? '\\' : out[i];
		out[o + 1] = out[i + 1];
		o += 2;
	}
	n = o;
	/* no trailing separator */
	while (n >= 2 && out[n - 2] == '\\' && out[n - 1] == 0)
		n -= 2;
	return n;
}

/* ---- SMB-Direct ---- */

#define CLI_MR_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | \
		       IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_MW_BIND)

/*
 * With more than one channel, or durable handles to reconnect, a link
 * that stops answering must fail its channel soon (its requests go again
 * on another, or on a new connection), not after TCP's retransmissions
 * give up: data left unacknowledged this long aborts the connection, and
 * so do keepalive probes left unanswered, which start after a second
 * without data from the server (requests sent, answers lost: nothing of
 * ours is unacknowledged then).
 */
bool cli_fail_fast(const struct rdax_conn *c)
{
	return c->cfg.channels > 1 || c->cfg.durable;
}

#define CLI_MC_USER_TIMEOUT_MS 5000
#define CLI_MC_KEEPIDLE_S 1
#define CLI_MC_KEEPINTVL_S 1
/* SMB-Direct: a keep-alive after this long without a message, answered within as long */
#define CLI_MC_SMBD_KEEPALIVE_MS 2500

static void mc_socket_opts(const struct rdax_conn *c, int fd)
{
	unsigned int uto = CLI_MC_USER_TIMEOUT_MS;
	int on = 1, idle = CLI_MC_KEEPIDLE_S, intvl = CLI_MC_KEEPINTVL_S;

	if (c->cfg.timeout_ms > 0 && (unsigned int)c->cfg.timeout_ms < uto)
		uto = (unsigned int)c->cfg.timeout_ms;
	setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &uto, sizeof(uto));
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
}

int cli_tcp_open(struct rdax_conn *c, const char *host, unsigned int port,
		 int timeout_ms, struct xprt **out)
{
	const char *why = NULL;
	struct xprt *x;
	int fd, ret;

	fd = tcp_connect(host, port, timeout_ms, &why);
	if (fd < 0 && why)
		return cli_err(c, fd, "cannot resolve host %s: %s", host, why);
	if (fd < 0)
		return cli_err(c, fd, "connect to %s:%u: %s", host, port, strerror(-fd));
	if (cli_fail_fast(c))
		mc_socket_opts(c, fd);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	ret = tcp_xprt_new(fd, c->epfd, &x);
	if (ret) {
		close(fd);
		return cli_err(c, ret, "connect to %s:%u: %s", host, port, strerror(-ret));
	}
	x->max_msg = CLI_MAX_MSG;
	*out = x;
	return 0;
}

/*
 * A reconnect tries again and again within its window, so one attempt
 * must not use the whole of it: a connect across a link still down
 * waits for the connection manager's timeouts.
 */
#define CLI_RECON_CONNECT_MS 5000

static int connect_timeout(const struct rdax_conn *c)
{
	if (c->reconnecting &&
	    (c->cfg.timeout_ms < 0 || c->cfg.timeout_ms > CLI_RECON_CONNECT_MS))
		return CLI_RECON_CONNECT_MS;
	return c->cfg.timeout_ms;
}

int cli_tcp_connect(struct rdax_conn *c)
{
	struct xprt *x;
	int ret;

	ret = cli_tcp_open(c, c->host, c->port, connect_timeout(c), &x);
	if (ret)
		return ret;
	return cli_engine_start(c, x);
}

/*
 * The protection domain for a new SMB-Direct connection on a device:
 * the one the session's channels on that device share, made (with its
 * MR cache) for the first. NULL: the transport makes one of its own,
 * and cli_rdma_adopt refuses the channel.
 */
static struct ibv_pd *cli_pd_for(void *arg, struct ibv_context *verbs)
{
	struct rdax_conn *c = arg;
	struct cli_rdev *rdev;
	unsigned int i;

	for (i = 0; i < c->nrdev; i++)
		if (c->rdevs[i].verbs == verbs)
			return c->rdevs[i].pd;
	if (c->nrdev == CLI_MAX_RDEV)
		return NULL;
	rdev = &c->rdevs[c->nrdev];
	rdev->pd = ibv_alloc_pd(verbs);
	if (!rdev->pd)
		return NULL;
	if (mr_cache_new(rdev->pd, c->cfg.mr_cache_bytes, CLI_MR_ACCESS, &rdev->mrc)) {
		ibv_dealloc_pd(rdev->pd);
		rdev->pd = NULL;
		return NULL;
	}
	rdev->verbs = verbs;
	c->nrdev++;
	return rdev->pd;
}

int cli_rdma_open(struct rdax_conn *c, const char *host, unsigned int port,
		  int timeout_ms, struct xprt **out)
{
	struct smbd_params prm;
	struct xprt *x;
	int ret;

	smbd_params_default(&prm);
	if (cli_fail_fast(c)) {
		/* a channel on a dead link fails within seconds, as TCP's do */
		prm.keepalive_ms = CLI_MC_SMBD_KEEPALIVE_MS;
		if (c->cfg.timeout_ms > 0 && c->cfg.timeout_ms < prm.keepalive_ms)
			prm.keepalive_ms = c->cfg.timeout_ms;
	}
	ret = smbd_connect_pd(host, port, &prm, timeout_ms, cli_pd_for, c, &x);
	if (ret == -ENXIO || ret == -EAGAIN) {
		const char *why = NULL;

		if (xprt_resolve_check(host, port, &why) && why)
			return cli_err(c, ret, "cannot resolve host %s: %s", host, why);
	}
	if (ret)
		return cli_err(c, ret, "SMB-Direct connect to rdma://%s:%u: %s", host,
			       port, ret == -ENODEV || ret == -EHOSTUNREACH ?
			       "no RDMA route to the server" : strerror(-ret));
	ret = smbd_attach(x, c->epfd);
	if (ret) {
		smbd_client_destroy(x);
		return cli_err(c, ret, "SMB-Direct event loop: %s", strerror(-ret));
	}
	*out = x;
	return 0;
}

/*
 * A channel on SMB-Direct uses the protection domain of its device,
 * shared by the session's channels on that device: what is registered
 * there serves each of them.
 */
int cli_rdma_adopt(struct rdax_conn *c, struct cli_chan *chan)
{
	struct ibv_pd *pd = smbd_pd(chan->x);
	struct smbd_info info;
	uint32_t inl;
	unsigned int i;

	for (i = 0; i < c->nrdev; i++)
		if (c->rdevs[i].pd == pd)
			break;
	if (i == c->nrdev)
		return cli_err(c, -ENOSPC, "SMB-Direct to %s: more than %d RDMA devices or no "
			       "registration cache", chan->peer, CLI_MAX_RDEV);
	chan->rdev = &c->rdevs[i];
	smbd_get_info(chan->x, &info);
	/* an inline READ/WRITE and its headers fit one fragmented message */
	inl = (info.max_fragmented_send < info.max_fragmented_recv ?
	       info.max_fragmented_send : info.max_fragmented_recv) - 1024;
	/* I/O is sized so that every channel can carry it */
	if (!c->rdma || info.max_read_write < c->rdma_max)
		c->rdma_max = info.max_read_write;
	if (!c->rdma || inl < c->inline_max)
		c->inline_max = inl;
	c->rdma = true;
	/* type 2 windows let the server invalidate exactly one I/O's access */
	chan->use_mw = smbd_mw_supported(chan->x);
	return 0;
}

int cli_rdma_connect(struct rdax_conn *c)
{
	struct xprt *x;
	int ret;

	ret = cli_rdma_open(c, c->host, c->port, connect_timeout(c), &x);
	if (ret)
		return ret;
	ret = cli_engine_start(c, x);
	if (ret) {
		x->ops->destroy(x);
		return cli_err(c, ret, "SMB-Direct channel: %s", strerror(-ret));
	}
	return cli_rdma_adopt(c, &c->chans[0]);
}

void cli_rdma_teardown(struct rdax_conn *c)
{
	struct rdax_buf *b;
	unsigned int i;

	while ((b = c->bufs)) {
		c->bufs = b->next;
		for (i = 0; i < CLI_MAX_RDEV; i++) {
			if (b->mr[i])
				ibv_dereg_mr(b->mr[i]);
			b->mr[i] = NULL;
		}
		b->c = NULL;
	}
	for (i = 0; i < c->nchan; i++)
		cli_chan_mw_free(&c->chans[i]);
	for (i = 0; i < c->nrdev; i++)
		mr_cache_free(&c->rdevs[i].mrc);
}

void cli_rdev_free(struct rdax_conn *c)
{
	unsigned int i;

	for (i = 0; i < c->nrdev; i++) {
		if (c->rdevs[i].mrc)
			mr_cache_free(&c->rdevs[i].mrc);
		if (c->rdevs[i].pd)
			ibv_dealloc_pd(c->rdevs[i].pd);
		c->rdevs[i].pd = NULL;
	}
	c->nrdev = 0;
}

void cli_chan_mw_free(struct cli_chan *chan)
{
	while (chan->nmw_free)
		ibv_dealloc_mw(chan->mw_free[--chan->nmw_free]);
	free(chan->mw_free);
	chan->mw_free = NULL;
	chan->mw_cap = 0;
}

/* windows stay with the QP they were used on (invalidations are ordered there) */
static struct ibv_mw *mw_get(struct cli_chan *chan)
{
	if (chan->nmw_free)
		return chan->mw_free[--chan->nmw_free];
	return ibv_alloc_mw(chan->rdev->pd, IBV_MW_TYPE_2);
}

static void mw_put(struct cli_chan *chan, struct ibv_mw *mw)
{
	if (chan->nmw_free == chan->mw_cap) {
		int cap = chan->mw_cap ? chan->mw_cap * 2 : 16;
		struct ibv_mw **v = realloc(chan->mw_free, sizeof(*v) * (size_t)cap);

		if (!v) {
			ibv_dealloc_mw(mw);
			return;
		}
		chan->mw_free = v;
		chan->mw_cap = cap;
	}
	chan->mw_free[chan->nmw_free++] = mw;
}

int cli_xform_type(const struct rdax_conn *c)
{
	if (c->encrypt)
		return c->xform_enc ? SMB2_RDMA_XFORM_TYPE_ENCRYPTION : -1;
	if (c->signing)
		return c->xform_sign ? SMB2_RDMA_XFORM_TYPE_SIGNING : -1;
	return 0;
}

bool cli_io_bulk(const struct rdax_conn *c, size_t len)
{
	return c->rdma && cli_xform_type(c) >= 0 && len >= c->cfg.rdma_threshold;
}

void cli_xform_offer(const struct rdax_conn *c, struct smb2_negotiate_req *r)
{
	if (!c->cfg.rdma_transform)
		return;
	r->ctx.nxform = 2;
	r->ctx.xforms[0] = SMB2_RDMA_TRANSFORM_ENCRYPTION;
	r->ctx.xforms[1] = SMB2_RDMA_TRANSFORM_SIGNING;
}

void cli_xform_fallback_log(struct rdax_conn *c)
{
	if (!c->rdma || c->xform_logged || cli_xform_type(c) >= 0)
		return;
	c->xform_logged = true;
	pr_notice("%s: %s session over SMB-Direct: the server %s; its file data goes inline",
		  c->host, c->encrypt ? "encrypted" : "signed",
		  !c->cfg.rdma_transform ? "was not offered the RDMA transform" :
		  c->dialect != SMB2_DIALECT_311 ? "speaks no SMB 3.1.1 (no RDMA transform)" :
		  "offers no RDMA transform for it");
}

uint32_t cli_io_chunk(struct rdax_conn *c, bool write, size_t want)
{
	struct cli_credits best = { .held = cli_credits_best(c) };
	uint64_t by_credits = cli_credits_io_max(&best);
	uint64_t n = want, max = write ? c->max_write : c->max_read;

	if (n > max)
		n = max;
	if (c->dialect > SMB2_DIALECT_202 && n > by_credits)
		n = by_credits;
	if (c->rdma) {
		bool rdma = cli_io_bulk(c, n);

		if (rdma && n > c->rdma_max)
			n = c->rdma_max;
		if (!rdma && n > c->inline_max)
			n = c->inline_max;
	}
	return (uint32_t)n;
}

/* The MR of a registered buffer in rdev's PD, registered on first use there. */
static int buf_mr(struct rdax_conn *c, struct rdax_buf *b, struct cli_rdev *rdev,
		  struct ibv_mr **mr)
{
	unsigned int i = (unsigned int)(rdev - c->rdevs);
	int ret;

	if (!b->mr[i]) {
		ret = mem_reg(rdev->pd, b->addr, b->len, CLI_MR_ACCESS, &b->mr[i],
			      c->errmsg, sizeof(c->errmsg));
		if (ret)
			return ret;
	}
	*mr = b->mr[i];
	return 0;
}

bool cli_buf_holds(const struct rdax_buf *b, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	return p >= b->addr && len <= b->len && (size_t)(p - b->addr) <= b->len - len;
}

int cli_rdma_prepare(struct rdax_conn *c, struct cli_chan *chan, struct rdax_buf *reg,
		     void *buf, size_t len, bool server_writes, struct cli_rdma *r)
{
	struct ibv_mr *mr = NULL;
	struct rdax_buf *b = reg;
	uint32_t rkey;
	int ret;

	memset(r, 0, sizeof(*r));
	if (!chan->rdma || !chan->rdev || !chan->x || !cli_io_bulk(c, len))
		return 0;
	/* named by the request, else looked up by address */
	if (!b)
		for (b = c->bufs; b && !cli_buf_holds(b, buf, len); b = b->next)
			;
	if (b) {
		ret = buf_mr(c, b, chan->rdev, &mr);
		if (ret)
			return ret;
	} else {
		ret = mr_cache_get(chan->rdev->mrc, buf, len, &mr, c->errmsg, sizeof(c->errmsg));
		if (ret)
			return ret;
		r->cached = mr;
		r->rdev = chan->rdev;
	}
	r->desc.offset = (uintptr_t)buf;
	r->desc.length = (uint32_t)len;
	r->chan = chan;
	if (!chan->use_mw) {
		r->desc.token = mr->rkey;
		r->channel = SMB2_CHANNEL_RDMA_V1;
		return 0;
	}
	r->mw = mw_get(chan);
	if (!r->mw) {
		ret = cli_err(c, -errno, "memory window: %s", strerror(errno));
		goto out_put;
	}
	ret = smbd_mw_bind(chan->x, r->mw, mr, buf, len,
			   server_writes ? IBV_ACCESS_REMOTE_WRITE : IBV_ACCESS_REMOTE_READ,
			   &rkey);
	if (ret) {
		ibv_dealloc_mw(r->mw);
		r->mw = NULL;
		ret = cli_err(c, ret, "memory window bind: %s", strerror(-ret));
		goto out_put;
	}
	r->desc.token = rkey;
	r->channel = c->dialect >= SMB2_DIALECT_302 ? SMB2_CHANNEL_RDMA_V1_INVALIDATE
						    : SMB2_CHANNEL_RDMA_V1;
	return 0;
out_put:
	if (r->cached)
		mr_cache_put(r->rdev->mrc, r->cached);
	r->cached = NULL;
	return ret;
}

void cli_rdma_finish(struct rdax_conn *c, struct cli_rdma *r)
{
	if (r->mw) {
		struct cli_chan *chan = r->chan;
		/* a window must be invalid before it is bound again */
		bool gone = c->broken || chan->dead || !chan->x;

		if (!gone && !smbd_was_invalidated(chan->x, r->mw->rkey))
			smbd_mw_invalidate(chan->x, r->mw->rkey);
		if (gone)
			ibv_dealloc_mw(r->mw);
		else
			mw_put(chan, r->mw);
		r->mw = NULL;
	}
	if (r->cached && r->rdev->mrc)
		mr_cache_put(r->rdev->mrc, r->cached);
	r->cached = NULL;
	r->channel = 0;
}

int rdax_buf_reg(struct rdax_conn *c, void *addr, size_t len, struct rdax_buf **out)
{
	struct rdax_buf *b;
	struct ibv_mr *mr;
	unsigned int i;
	int ret;

	cli_begin(c);
	if (!addr || !len)
		return cli_err(c, -EINVAL, "rdax_buf_reg: no buffer");
	b = calloc(1, sizeof(*b));
	if (!b)
		return cli_err(c, -ENOMEM, "rdax_buf_reg: out of memory");
	b->c = c;
	b->addr = addr;
	b->len = len;
	/* in every device's PD now: nothing is registered on the data path */
	for (i = 0; i < c->nrdev; i++) {
		ret = buf_mr(c, b, &c->rdevs[i], &mr);
		if (ret)
			goto out_dereg;
	}
	/* listed even without one: a later device registers it too */
	b->next = c->bufs;
	c->bufs = b;
	*out = b;
	return 0;
out_dereg:
	while (i--)
		ibv_dereg_mr(b->mr[i]);
	free(b);
	return ret;
}

/*
 * Encrypted WRITEs: the ciphertext goes in a buffer of the library's,
 * never in the application's. Registered as rdax_buf_reg's are (listed
 * in c->bufs, so every device's PD gets it on first use) and kept until
 * the connection goes: memory freed while registered would leave a
 * registration naming pages no longer there.
 */
int cli_xbuf_get(struct rdax_conn *c, size_t len, struct rdax_buf **out)
{
	size_t cap = ((size_t)c->rdma_max + 4095) & ~(size_t)4095;
	struct rdax_buf *b, **all, **fr;
	unsigned int n = c->nxbufs + 1;

	if (len > cap)
		return cli_err(c, -EINVAL, "RDMA transform: %zu bytes over the RDMA size", len);
	if (c->nxfree) {
		*out = c->xfree[--c->nxfree];
		return 0;
	}
	all = realloc(c->xbufs, sizeof(*all) * n);
	if (!all)
		return cli_err(c, -ENOMEM, "RDMA transform buffers");
	c->xbufs = all;
	fr = realloc(c->xfree, sizeof(*fr) * n);
	if (!fr)
		return cli_err(c, -ENOMEM, "RDMA transform buffers");
	c->xfree = fr;
	b = calloc(1, sizeof(*b));
	if (!b)
		return cli_err(c, -ENOMEM, "RDMA transform buffers");
	b->addr = aligned_alloc(4096, cap);
	if (!b->addr) {
		free(b);
		return cli_err(c, -ENOMEM, "RDMA transform buffers");
	}
	b->c = c;
	b->len = cap;
	b->next = c->bufs;
	c->bufs = b;
	c->xbufs[c->nxbufs++] = b;
	*out = b;
	return 0;
}

void cli_xbuf_put(struct rdax_conn *c, struct rdax_buf *b)
{
	c->xfree[c->nxfree++] = b;
}

void cli_xbuf_free(struct rdax_conn *c)
{
	unsigned int i;

	for (i = 0; i < c->nxbufs; i++) {
		free(c->xbufs[i]->addr);
		free(c->xbufs[i]);
	}
	free(c->xbufs);
	free(c->xfree);
	c->xbufs = c->xfree = NULL;
	c->nxbufs = c->nxfree = 0;
}

void rdax_buf_dereg(struct rdax_buf **bp)
{
	struct rdax_buf *b = *bp, **pp;
	unsigned int i;

	if (!b)
		return;
	if (b->c) {
		for (pp = &b->c->bufs; *pp; pp = &(*pp)->next) {
			if (*pp == b) {
				*pp = b->next;
				break;
			}
		}
	}
	for (i = 0; i < CLI_MAX_RDEV; i++)
		if (b->mr[i])
			ibv_dereg_mr(b->mr[i]);
	free(b);
	*bp = NULL;
}

void rdax_mem_forget(struct rdax_conn *c, void *addr, size_t len)
{
	unsigned int i;

	for (i = 0; i < c->nrdev; i++)
		if (c->rdevs[i].mrc)
			mr_cache_invalidate(c->rdevs[i].mrc, addr, len);
}

/* ---- NEGOTIATE and SESSION_SETUP ---- */

void cli_negotiate_req(const struct rdax_conn *c, struct smb2_negotiate_req *r)
{
	static const uint16_t all[] = { SMB2_DIALECT_210, SMB2_DIALECT_300,
					SMB2_DIALECT_302, SMB2_DIALECT_311 };
	size_t i;

	memset(r, 0, sizeof(*r));
	r->security_mode = SMB2_NEGOTIATE_SIGNING_ENABLED |
			   (c->cfg.sign_required ? SMB2_NEGOTIATE_SIGNING_REQUIRED : 0);
	r->capabilities = SMB2_GLOBAL_CAP_LARGE_MTU | SMB2_GLOBAL_CAP_ENCRYPTION;
	if (c->cfg.channels > 1)
		r->capabilities |= SMB2_GLOBAL_CAP_MULTI_CHANNEL;
	r->ctx.posix = true;	/* asked for always; used where answered */
	if (c->cfg.leases)
		r->capabilities |= SMB2_GLOBAL_CAP_LEASING | SMB2_GLOBAL_CAP_DIRECTORY_LEASING;
	if (c->cfg.durable)
		r->capabilities |= SMB2_GLOBAL_CAP_PERSISTENT_HANDLES;
	memcpy(r->client_guid, c->client_guid, 16);
	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (all[i] >= c->cfg.min_dialect && all[i] <= c->cfg.max_dialect)
			r->dialects[r->ndialects++] = all[i];
	crypto_random(r->ctx.salt, 32);
	r->ctx.ciphers[r->ctx.ncipher++] = SMB2_CIPHER_AES128_GCM;
	r->ctx.ciphers[r->ctx.ncipher++] = SMB2_CIPHER_AES128_CCM;
	r->ctx.ciphers[r->ctx.ncipher++] = SMB2_CIPHER_AES256_GCM;
	r->ctx.ciphers[r->ctx.ncipher++] = SMB2_CIPHER_AES256_CCM;
	r->ctx.signs[r->ctx.nsign++] = SMB2_SIGNING_AES_GMAC;
	r->ctx.signs[r->ctx.nsign++] = SMB2_SIGNING_AES_CMAC;
}

static int negotiate(struct rdax_conn *c, uint8_t *hint, size_t *hint_len)
{
	struct smb2_negotiate_req r;
	struct smb2_negotiate_rsp rsp;
	uint8_t *preauth = c->chans[0].preauth;
	struct cli_chain ch;
	struct iovec iov;
	struct wcur w;
	size_t i;
	int ret;

	cli_negotiate_req(c, &r);
	if (c->chans[0].rdma)
		cli_xform_offer(c, &r);
	c->client_caps = r.capabilities;
	cli_chain_init(c, &ch);
	ret = cli_chain_add(c, &ch, SMB2_NEGOTIATE, 0, false, 0, 512, &w);
	if (ret)
		return ret;
	smb2_negotiate_req_encode(&w, &r);
	cli_chain_end(c, &ch, &w);
	memset(preauth, 0, 64);
	ch.preauth = preauth;
	ret = cli_chain_run(c, &ch);
	if (ret)
		return ret;
	if (ch.rsp[0].status)
		return cli_status(c, ch.rsp[0].status, "negotiate", NULL);
	if (smb2_negotiate_rsp_decode(ch.rsp[0].pdu, ch.rsp[0].len, &rsp))
		return cli_err(c, -EPROTO, "malformed NEGOTIATE response from %s", c->host);
	for (i = 0; i < r.ndialects; i++)
		if (r.dialects[i] == rsp.dialect)
			break;
	if (i == r.ndialects)
		return cli_err(c, -EPROTO, "server chose dialect 0x%04x we did not offer",
			       rsp.dialect);
	c->dialect = rsp.dialect;
	c->posix = rsp.dialect == SMB2_DIALECT_311 && rsp.posix;
	c->server_secmode = rsp.security_mode;
	c->server_caps = rsp.capabilities;
	memcpy(c->server_guid, rsp.server_guid, 16);
	c->max_read = rsp.max_read < SMB2_MAX_IO_SIZE ? rsp.max_read : SMB2_MAX_IO_SIZE;
	c->max_write = rsp.max_write < SMB2_MAX_IO_SIZE ? rsp.max_write : SMB2_MAX_IO_SIZE;
	c->max_trans = rsp.max_transact;
	if (c->max_read < 65536 || c->max_write < 65536)
		return cli_err(c, -EPROTO, "server offers I/O sizes below 64 KiB");
	c->xform_enc = c->xform_sign = false;
	if (c->dialect == SMB2_DIALECT_311) {
		c->cipher = rsp.cipher;
		c->sign_alg = rsp.sign_ctx ? rsp.signing : SMB2_SIGN_AES_CMAC;
		/* only what was offered, on the connection it was offered on */
		for (i = 0; i < rsp.nxform && c->cfg.rdma_transform && c->chans[0].rdma; i++) {
			if (rsp.xforms[i] == SMB2_RDMA_TRANSFORM_ENCRYPTION)
				c->xform_enc = c->cipher != 0;
			else if (rsp.xforms[i] == SMB2_RDMA_TRANSFORM_SIGNING)
				c->xform_sign = true;
		}
		if (c->xform_enc || c->xform_sign) {
			ret = smb2_nonce_gen_init(&c->xform_nonce);
			if (ret)
				return cli_err(c, ret, "RDMA transform nonce");
			memset(&c->xform_seen, 0, sizeof(c->xform_seen));
		}
		iov.iov_base = (void *)ch.rsp[0].pdu;
		iov.iov_len = ch.rsp[0].len;
		crypto_preauth_update(preauth, &iov, 1);
	} else if (c->dialect >= SMB2_DIALECT_300) {
		c->cipher = rsp.capabilities & SMB2_GLOBAL_CAP_ENCRYPTION ?
			    SMB2_CIPHER_AES128_CCM : 0;
		c->sign_alg = SMB2_SIGN_AES_CMAC;
	} else {
		c->sign_alg = SMB2_SIGN_HMAC_SHA256;
	}
	*hint_len = rsp.security.len < CLI_AUTH_MAX ? rsp.security.len : 0;
	memcpy(hint, rsp.security.p, *hint_len);
	return 0;
}

static int session_setup(struct rdax_conn *c, const uint8_t *hint, size_t hint_len,
			 uint64_t prev_session_id)
{
	struct auth_client_cfg acfg = {
		.user = c->cfg.user,
		.domain = c->cfg.domain,
		.password = c->cfg.password,
		.anonymous = c->cfg.guest,
		.workstation = "RDAX",
		.spnego = true,
	};
	struct smb2_sess_setup_req r = { 0 };
	struct smb2_sess_setup_rsp rsp;
	struct auth_client *auth;
	uint8_t in[CLI_AUTH_MAX], out[CLI_AUTH_MAX], preauth[64];
	size_t in_len = hint_len, out_len;
	struct cli_chain ch;
	struct iovec iov;
	struct wcur w;
	uint8_t session_key[16];
	int ret, step;

	ret = auth_client_new(&auth, &acfg);
	if (ret)
		return cli_err(c, ret, "authentication setup failed");
	memcpy(in, hint, hint_len);
	memcpy(preauth, c->chans[0].preauth, sizeof(preauth));
	for (;;) {
		step = auth_client_step(auth, in_len ? in : NULL, in_len, out,
					sizeof(out), &out_len);
		if (step < 0) {
			ret = cli_err(c, step, "authentication to %s failed: %s",
				      c->host, strerror(-step));
			goto out_free;
		}
		r.security_mode = SMB2_NEGOTIATE_SIGNING_ENABLED |
				  (c->cfg.sign_required ? SMB2_NEGOTIATE_SIGNING_REQUIRED : 0);
		/* a reconnect: the server ends the session the connection lost */
		r.prev_session_id = prev_session_id;
		r.security.p = out;
		r.security.len = (uint32_t)out_len;
		cli_chain_init(c, &ch);
		ret = cli_chain_add(c, &ch, SMB2_SESSION_SETUP, 0, false, 0,
				    32 + out_len, &w);
		if (ret)
			goto out_free;
		smb2_sess_setup_req_encode(&w, &r);
		cli_chain_end(c, &ch, &w);
		if (c->dialect == SMB2_DIALECT_311)
			ch.preauth = preauth;
		ret = cli_chain_run(c, &ch);
		if (ret)
			goto out_free;
		c->session_id = ch.rsp[0].hdr.session_id;
		if (ch.rsp[0].status == STATUS_MORE_PROCESSING_REQUIRED) {
			if (c->dialect == SMB2_DIALECT_311) {
				iov.iov_base = (void *)ch.rsp[0].pdu;
				iov.iov_len = ch.rsp[0].len;
				crypto_preauth_update(preauth, &iov, 1);
			}
			if (smb2_sess_setup_rsp_decode(ch.rsp[0].pdu, ch.rsp[0].len, &rsp) ||
			    rsp.security.len > sizeof(in)) {
				ret = cli_err(c, -EPROTO, "malformed SESSION_SETUP response");
				goto out_free;
			}
			memcpy(in, rsp.security.p, rsp.security.len);
			in_len = rsp.security.len;
			continue;
		}
		if (ch.rsp[0].status) {
			ret = cli_status(c, ch.rsp[0].status, "session setup for user",
					 c->cfg.guest ? "(guest)" : c->cfg.user);
			goto out_free;
		}
		break;
	}
	if (smb2_sess_setup_rsp_decode(ch.rsp[0].pdu, ch.rsp[0].len, &rsp)) {
		ret = cli_err(c, -EPROTO, "malformed SESSION_SETUP response");
		goto out_free;
	}
	ret = auth_client_finish(auth, rsp.security.p, rsp.security.len);
	if (ret) {
		ret = cli_err(c, ret, "server %s failed mutual authentication", c->host);
		goto out_free;
	}
	c->guest = rsp.session_flags & (SMB2_SESSION_FLAG_IS_GUEST |
					SMB2_SESSION_FLAG_IS_NULL);
	if (!c->guest && !auth_client_session_key(auth, session_key)) {
		ret = smb3_derive_keys(c->dialect, session_key,
				       c->dialect == SMB2_DIALECT_311 ? preauth : NULL,
				       c->cipher, &c->keys);
		explicit_bzero(session_key, sizeof(session_key));
		if (ret) {
			ret = cli_err(c, ret, "key derivation failed");
			goto out_free;
		}
		c->have_key = true;
		memcpy(c->chans[0].signing_key, c->keys.signing, 16);
		c->signing = c->cfg.sign_required ||
			     (c->server_secmode & SMB2_NEGOTIATE_SIGNING_REQUIRED);
		/* the final response of an authenticated 3.1.1 session is signed */
		if ((ch.rsp[0].hdr.flags & SMB2_FLAGS_SIGNED || c->dialect == SMB2_DIALECT_311) &&
		    smb2_sign_verify(&c->kept, c->sign_alg, c->keys.signing, ch.rsp[0].pdu,
				     ch.rsp[0].len)) {
			ret = cli_err(c, -EBADMSG, "SESSION_SETUP response from %s has a bad signature",
				      c->host);
			goto out_free;
		}
		if (c->cfg.encrypt_required ||
		    rsp.session_flags & SMB2_SESSION_FLAG_ENCRYPT_DATA) {
			if (!c->cipher) {
				ret = cli_err(c, -EPROTONOSUPPORT,
					      "%s cannot encrypt (no common cipher)", c->host);
				goto out_free;
			}
			c->encrypt = true;
		}
		cli_xform_fallback_log(c);
	} else if (c->cfg.sign_required || c->cfg.encrypt_required) {
		ret = cli_err(c, -EACCES, "a guest session on %s cannot be signed or encrypted",
			      c->host);
		goto out_free;
	}
	ret = 0;
out_free:
	auth_client_delete(&auth);
	return ret;
}

int cli_session_start(struct rdax_conn *c, uint64_t prev_session_id)
{
	uint8_t hint[CLI_AUTH_MAX];
	size_t hint_len = 0;
	int ret;

	ret = negotiate(c, hint, &hint_len);
	if (!ret)
		ret = session_setup(c, hint, hint_len, prev_session_id);
	return ret;
}

int rdax_connect(struct rdax_conn **out, const char *host, unsigned int port,
		 const struct rdax_cfg *cfg)
{
	struct rdax_conn *c;
	int ret;

	/* a new call reports its own failure only */
	cli_thread_begin();
	if (!out || !host || !*host || !cfg)
		return cli_thread_err(-EINVAL, "rdax_connect: no %s", !out ? "result pointer" :
				   !cfg ? "configuration" : "host");
	ret = crypto_init();
	if (ret)
		return cli_thread_err(ret, "OpenSSL (libcrypto) is unavailable: %s%s",
				   strerror(-ret), ret == -ENOMEM ? "" :
				   " (are its default and legacy providers installed?)");
	if (!cfg->guest && !cfg->user[0])
		return cli_thread_err(-EINVAL, "connect to %s: no user name (set credentials or guest)",
				   host);
	if (!cfg->guest && !cfg->have_password)
		return cli_thread_err(-EINVAL, "connect to %s: no password for user %s",
				   host, cfg->user);
	if (strlen(host) >= sizeof(c->host))
		return cli_thread_err(-ENAMETOOLONG, "connect: host name too long");
	c = calloc(1, sizeof(*c));
	if (!c)
		return cli_thread_err(-ENOMEM, "connect to %s: out of memory", host);
	c->cfg = *cfg;
	log_set_thread_sink(cfg->log, cfg->log_arg);
	c->epfd = -1;
	list_init(&c->sendq);
	list_init(&c->delayq);
	list_init(&c->trees);
	cli_leases_init(c);
	c->port = port ? port : 445;
	snprintf(c->host, sizeof(c->host), "%s", host);
	crypto_random(c->client_guid, sizeof(c->client_guid));
	c->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (c->epfd < 0) {
		ret = cli_err(c, -errno, "connect to %s: epoll: %s", host, strerror(errno));
		goto out_fail;
	}
	if (cfg->transport == RDAX_TRANSPORT_RDMA) {
		ret = cli_rdma_connect(c);
		if (ret)
			goto out_fail;
	} else {
		ret = cli_tcp_connect(c);
		if (ret)
			goto out_fail;
	}
	ret = cli_session_start(c, 0);
	if (ret)
		goto out_fail;
	cli_mc_grow(c);
	c->established = true;
	*out = c;
	return 0;
out_fail:
	/* keep the message for the caller through a static buffer */
	cli_thread_err(ret, "%s", c->errmsg[0] ? c->errmsg : strerror(-ret));
	cli_thread_status = c->last_status;
	rdax_disconnect(&c);
	return ret;
}

void rdax_disconnect(struct rdax_conn **cp)
{
	struct rdax_conn *c = *cp;
	struct cli_chain ch;
	struct wcur w;

	if (!c)
		return;
	c->closing = true;
	if (!c->broken && cli_chans_alive(c) && c->session_id) {
		cli_chain_init(c, &ch);
		if (!cli_chain_add(c, &ch, SMB2_LOGOFF, 0, false, 0, 8, &w)) {
			smb2_simple_encode(&w);
			cli_chain_end(c, &ch, &w);
			cli_chain_run(c, &ch);
		}
	}
	/* what is in flight gives back its windows and cache entries first */
	cli_engine_stop_inflight(c, -ESHUTDOWN);
	cli_rdma_teardown(c);
	cli_xbuf_free(c);
	cli_engine_stop(c);
	cli_leases_free(c);
	/* the trees the application still holds no longer name a connection */
	while (!list_empty(&c->trees))
		list_del(c->trees.next);
	crypto_kept_free(&c->kept);
	explicit_bzero(&c->keys, sizeof(c->keys));
	explicit_bzero(c->chans, sizeof(c->chans));
	explicit_bzero(&c->cfg, sizeof(c->cfg));
	free(c);
	*cp = NULL;
	log_set_thread_sink(NULL, NULL);
}
