// SPDX-License-Identifier: GPL-2.0-only
/*
 * fio external ioengine for rdax: files on an SMB3 server, over TCP or
 * SMB-Direct, through librdax's asynchronous API. fio's I/O buffers are
 * registered (pinned) once, so over RDMA the server moves data straight
 * into and out of them, and iodepth maps onto the SMB2 credit window.
 *
 * This file includes fio headers, which are GPL-2.0, so it is GPL-2.0;
 * it uses only librdax's public API (include/rdax.h, MIT).
 *
 *   ioengine=external:build/fio-rdax.so
 *   hostname=10.0.0.1 share=data transport=rdma user=bob password_file=pw
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fio.h"
#include "optgroup.h"

#include "rdax.h"

struct rdax_fio_options {
	void *pad;			/* fio: option offsets must not be 0 */
	char *hostname;
	unsigned int port;
	char *share;
	char *transport;
	char *user;
	char *password_file;
	unsigned int guest;
	unsigned int sign;
	unsigned int encrypt;
	unsigned int rdma_transform;
	unsigned int register_buffers;
	unsigned int channels;
	char *rdma_channels;
	char *poll;
	unsigned int poll_spin;
	unsigned int rdma_threshold;
};

struct rdax_fio_data {
	struct rdax_conn *conn;
	struct rdax_tree *tree;
	struct rdax_ioq *q;
	struct rdax_buf *buf;
	struct rdax_cqe *cqes;
	struct io_u **events;
	unsigned int depth;
};

static struct fio_option options[] = {
	{
		.name = "hostname",
		.lname = "rdax server",
		.type = FIO_OPT_STR_STORE,
		.off1 = offsetof(struct rdax_fio_options, hostname),
		.help = "SMB server to connect to",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "port",
		.lname = "rdax port",
		.type = FIO_OPT_INT,
		.off1 = offsetof(struct rdax_fio_options, port),
		.def = "445",
		.minval = 1,
		.maxval = 65535,
		.help = "SMB port (445; SMB-Direct on iWARP uses 5445)",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "share",
		.lname = "rdax share",
		.type = FIO_OPT_STR_STORE,
		.off1 = offsetof(struct rdax_fio_options, share),
		.help = "share name; filename= is the path inside it",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "transport",
		.lname = "rdax transport",
		.type = FIO_OPT_STR_STORE,
		.off1 = offsetof(struct rdax_fio_options, transport),
		.def = "tcp",
		.help = "tcp or rdma (SMB-Direct)",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "user",
		.lname = "rdax user",
		.type = FIO_OPT_STR_STORE,
		.off1 = offsetof(struct rdax_fio_options, user),
		.help = "user name (DOMAIN\\user or user@domain)",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "password_file",
		.lname = "rdax password file",
		.type = FIO_OPT_STR_STORE,
		.off1 = offsetof(struct rdax_fio_options, password_file),
		.help = "file whose first line is the password (mode 0600)",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "guest",
		.lname = "rdax guest",
		.type = FIO_OPT_STR_SET,
		.off1 = offsetof(struct rdax_fio_options, guest),
		.help = "anonymous guest logon",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "sign",
		.lname = "rdax signing",
		.type = FIO_OPT_STR_SET,
		.off1 = offsetof(struct rdax_fio_options, sign),
		.help = "require a signed session",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "encrypt",
		.lname = "rdax encryption",
		.type = FIO_OPT_STR_SET,
		.off1 = offsetof(struct rdax_fio_options, encrypt),
		.help = "require an encrypted session",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "rdma_transform",
		.lname = "rdax RDMA transform",
		.type = FIO_OPT_STR_SET,
		.off1 = offsetof(struct rdax_fio_options, rdma_transform),
		.help = "offer the SMB 3.1.1 RDMA transform (signed/encrypted I/O by RDMA)",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "register_buffers",
		.lname = "rdax register buffers",
		.type = FIO_OPT_BOOL,
		.off1 = offsetof(struct rdax_fio_options, register_buffers),
		.def = "1",
		.help = "pin fio's I/O buffers once (SMB-Direct)",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "poll",
		.lname = "rdax completion polling",
		.type = FIO_OPT_STR_STORE,
		.off1 = offsetof(struct rdax_fio_options, poll),
		.help = "SMB-Direct waits: event, adaptive (the library's default) or busy",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "rdma_threshold",
		.lname = "rdax RDMA threshold",
		.type = FIO_OPT_INT,
		.off1 = offsetof(struct rdax_fio_options, rdma_threshold),
		.def = "0",
		.help = "SMB-Direct: I/O of at least this many bytes moves by RDMA, smaller inline (0: the library's)",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "poll_spin",
		.lname = "rdax adaptive spin",
		.type = FIO_OPT_INT,
		.off1 = offsetof(struct rdax_fio_options, poll_spin),
		.def = "0",
		.minval = 0,
		.maxval = 100000,
		.help = "poll=adaptive: microseconds to spin before sleeping (0: the library's)",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "channels",
		.lname = "rdax channels",
		.type = FIO_OPT_INT,
		.off1 = offsetof(struct rdax_fio_options, channels),
		.def = "1",
		.minval = 1,
		.maxval = 16,
		.help = "SMB3 multichannel: channels to bind to the session (1-16)",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "rdma_channels",
		.lname = "rdax SMB-Direct channels",
		.type = FIO_OPT_STR_STORE,
		.off1 = offsetof(struct rdax_fio_options, rdma_channels),
		.def = "auto",
		.help = "with channels>1: SMB-Direct channels first: auto (with an RDMA device), 1, 0 (TCP only)",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = NULL,
	},
};

/* librdax's notices: channels skipped or lost */
static void rdax_fio_notice(void *arg, const char *msg)
{
	(void)arg;
	log_info("fio-rdax: %s\n", msg);
}

static int rdax_fio_fail(struct thread_data *td, struct rdax_fio_data *d,
			 int ret, const char *what)
{
	int err = ret < 0 ? -ret : ret;

	log_err("fio-rdax: %s: %s\n", what,
		rdax_conn_errmsg(d ? d->conn : NULL)[0] ? rdax_conn_errmsg(d ? d->conn : NULL) :
		strerror(err));
	/* the job's error: fio exits non-zero (an open_file hook's return alone does not) */
	td_verror(td, err, what);
	return err;
}

static int rdax_fio_init(struct thread_data *td)
{
	struct rdax_fio_options *o = td->eo;
	struct rdax_fio_data *d;
	struct rdax_cfg *cfg;
	int ret;

	if (!o->hostname || !o->share) {
		log_err("fio-rdax: hostname= and share= are required\n");
		return 1;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return 1;
	td->io_ops_data = d;
	d->depth = td->o.iodepth ? td->o.iodepth : 1;
	d->cqes = calloc(d->depth, sizeof(*d->cqes));
	d->events = calloc(d->depth, sizeof(*d->events));
	if (!d->cqes || !d->events)
		return 1;
	ret = rdax_cfg_new(&cfg);
	if (ret)
		return rdax_fio_fail(td, NULL, ret, "config");
	if (o->transport && !strcmp(o->transport, "rdma")) {
		rdax_cfg_set_transport(cfg, RDAX_TRANSPORT_RDMA);
	} else if (o->transport && strcmp(o->transport, "tcp")) {
		log_err("fio-rdax: transport=%s: use tcp or rdma\n", o->transport);
		rdax_cfg_delete(&cfg);
		return 1;
	}
	rdax_cfg_set_log(cfg, rdax_fio_notice, NULL);
	ret = rdax_cfg_set_channels(cfg, o->channels ? o->channels : 1);
	if (ret) {
		log_err("fio-rdax: channels=%u: 1 to 16\n", o->channels);
		rdax_cfg_delete(&cfg);
		return 1;
	}
	if (o->rdma_channels && strcmp(o->rdma_channels, "auto")) {
		bool on = !strcmp(o->rdma_channels, "1") || !strcmp(o->rdma_channels, "yes");

		if (!on && strcmp(o->rdma_channels, "0") && strcmp(o->rdma_channels, "no")) {
			log_err("fio-rdax: rdma_channels=%s: auto, 1 or 0\n", o->rdma_channels);
			rdax_cfg_delete(&cfg);
			return 1;
		}
		rdax_cfg_set_rdma_channels(cfg, on);
	}
	if (o->rdma_threshold)
		rdax_cfg_set_rdma_threshold(cfg, o->rdma_threshold);
	rdax_cfg_set_signing(cfg, o->sign);
	rdax_cfg_set_encryption(cfg, o->encrypt);
	rdax_cfg_set_rdma_transform(cfg, o->rdma_transform);
	if (o->poll || o->poll_spin) {
		static const char *const modes[] = {
			[RDAX_POLL_EVENT] = "event", [RDAX_POLL_ADAPTIVE] = "adaptive",
			[RDAX_POLL_BUSY] = "busy",
		};
		int m = RDAX_POLL_ADAPTIVE;

		if (o->poll) {
			for (m = 0; m < 3 && strcmp(o->poll, modes[m]); m++)
				;
		}
		if (m == 3 || rdax_cfg_set_poll(cfg, (enum rdax_poll)m, o->poll_spin)) {
			log_err("fio-rdax: poll=%s: event, adaptive or busy\n", o->poll);
			rdax_cfg_delete(&cfg);
			return 1;
		}
	}
	if (o->guest) {
		rdax_cfg_set_guest(cfg, true);
	} else if (o->user && o->password_file) {
		rdax_cfg_set_credentials(cfg, o->user, NULL);
		ret = rdax_cfg_set_password_file(cfg, o->password_file);
		if (ret) {
			log_err("fio-rdax: password_file=%s: %s\n", o->password_file,
				ret == -EPERM ? "readable by group or others (chmod 600)" :
				strerror(-ret));
			rdax_cfg_delete(&cfg);
			return 1;
		}
	} else {
		log_err("fio-rdax: give guest, or user= and password_file=\n");
		rdax_cfg_delete(&cfg);
		return 1;
	}
	ret = rdax_connect(&d->conn, o->hostname, o->port, cfg);
	rdax_cfg_delete(&cfg);
	if (ret)
		return rdax_fio_fail(td, NULL, ret, o->hostname);
	ret = rdax_tree_connect(d->conn, o->share, &d->tree);
	if (ret)
		return rdax_fio_fail(td, d, ret, o->share);
	ret = rdax_ioq_new(d->conn, d->depth, &d->q);
	if (ret)
		return rdax_fio_fail(td, d, ret, "queue");
	if (td->o.max_bs[DDIR_READ] > rdax_ioq_max_io(d->q) ||
	    td->o.max_bs[DDIR_WRITE] > rdax_ioq_max_io(d->q)) {
		log_err("fio-rdax: bs above the server's %zu-byte maximum I/O\n",
			rdax_ioq_max_io(d->q));
		return 1;
	}
	return 0;
}

/* After fio allocated its buffers: pin them once. */
static int rdax_fio_post_init(struct thread_data *td)
{
	struct rdax_fio_options *o = td->eo;
	struct rdax_fio_data *d = td->io_ops_data;
	int ret;

	if (!o->register_buffers || !td->orig_buffer)
		return 0;
	ret = rdax_buf_reg(d->conn, td->orig_buffer, td->orig_buffer_size, &d->buf);
	if (ret)
		return rdax_fio_fail(td, d, ret, "registering the I/O buffers");
	return 0;
}

/* With channels>1: what each channel carried, in librdax's words. */
static void rdax_fio_channel_report(struct thread_data *td, struct rdax_fio_data *d)
{
	struct rdax_fio_options *o = td->eo;
	struct rdax_channel_info ch;
	unsigned int i;

	if (!d->conn || o->channels <= 1)
		return;
	for (i = 0; rdax_conn_channel_info(d->conn, i, &ch) == 0; i++)
		log_info("fio-rdax: channel %u: %s %s, %s, %llu bytes sent, %llu received, "
			 "%llu by RDMA, %llu requests (%llu resent)%s%s\n", ch.index,
			 ch.transport, ch.peer, ch.alive ? "alive" : "failed",
			 (unsigned long long)ch.bytes_sent,
			 (unsigned long long)ch.bytes_received,
			 (unsigned long long)ch.rdma_bytes,
			 (unsigned long long)ch.requests, (unsigned long long)ch.replays,
			 ch.error[0] ? ": " : "", ch.error);
}

/* A connection that was set up again (librdax's durable reconnect). */
static void rdax_fio_reconnect_report(struct rdax_fio_data *d)
{
	struct rdax_stats st;

	if (!d->conn || rdax_conn_stats(d->conn, &st) || !st.reconnects)
		return;
	log_info("fio-rdax: reconnects %llu: %llu durable handles back, %llu lost\n",
		 (unsigned long long)st.reconnects, (unsigned long long)st.durable_reopens,
		 (unsigned long long)st.handles_lost);
}

static void rdax_fio_cleanup(struct thread_data *td)
{
	struct rdax_fio_data *d = td->io_ops_data;

	if (!d)
		return;
	rdax_ioq_delete(&d->q);
	rdax_fio_channel_report(td, d);
	rdax_fio_reconnect_report(d);
	rdax_buf_dereg(&d->buf);
	rdax_tree_disconnect(&d->tree);
	rdax_disconnect(&d->conn);
	free(d->cqes);
	free(d->events);
	free(d);
	td->io_ops_data = NULL;
}

/*
 * A read job on a missing or short file: write it out first, as fio does
 * for local files ("Laying out IO file"), so reads return data.
 */
static int rdax_fio_layout(struct thread_data *td, struct fio_file *f)
{
	struct rdax_fio_data *d = td->io_ops_data;
	const size_t chunk = 1 << 20;
	uint64_t want = f->real_file_size, off = 0, x = 0x9e3779b97f4a7c15ull;
	struct rdax_file *rf;
	struct rdax_stat st;
	uint64_t *buf;
	size_t i;
	int ret;

	if (!want || td->o.read_iolog_file)
		return 0;
	ret = rdax_stat(d->tree, f->file_name, &st);
	if (!ret && st.size >= want)
		return 0;
	if (ret && ret != -ENOENT)
		return rdax_fio_fail(td, d, ret, f->file_name);
	if (!ret)
		off = st.size;	/* extend a short file */
	ret = rdax_open(d->tree, f->file_name, O_RDWR | O_CREAT, &rf);
	if (ret)
		return rdax_fio_fail(td, d, ret, f->file_name);
	buf = malloc(chunk);
	if (!buf) {
		rdax_close(&rf);
		return ENOMEM;
	}
	for (i = 0; i < chunk / sizeof(*buf); i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		buf[i] = x;
	}
	log_info("fio-rdax: laying out %s (%llu KiB)\n", f->file_name,
		 (unsigned long long)(want >> 10));
	for (ret = 0; off < want && !ret; ) {
		size_t n = want - off < chunk ? want - off : chunk;
		ssize_t w = rdax_pwrite(rf, buf, n, off);

		if (w < 0)
			ret = (int)w;
		else
			off += (uint64_t)w;
	}
	free(buf);
	rdax_close(&rf);
	return ret ? rdax_fio_fail(td, d, ret, f->file_name) : 0;
}

static int rdax_fio_open_file(struct thread_data *td, struct fio_file *f)
{
	struct rdax_fio_data *d = td->io_ops_data;
	struct rdax_file *rf;
	int flags = O_RDWR | O_CREAT, ret;

	if (td_read(td) && !td_write(td)) {
		flags = O_RDONLY;
		if (!read_only) {
			ret = rdax_fio_layout(td, f);
			if (ret)
				return ret;
		}
	}
	ret = rdax_open(d->tree, f->file_name, flags, &rf);
	if (ret)
		return rdax_fio_fail(td, d, ret, f->file_name);
	FILE_SET_ENG_DATA(f, rf);
	return 0;
}

static int rdax_fio_close_file(struct thread_data *td, struct fio_file *f)
{
	struct rdax_fio_data *d = td->io_ops_data;
	struct rdax_file *rf = FILE_ENG_DATA(f);

	FILE_SET_ENG_DATA(f, NULL);
	if (!rf)
		return 0;
	/* a CLOSE the server failed leaves its message on the connection */
	rdax_close(&rf);
	return *rdax_conn_errmsg(d->conn) ? EIO : 0;
}

static int rdax_fio_get_file_size(struct thread_data *td, struct fio_file *f)
{
	struct rdax_fio_data *d = td->io_ops_data;
	uint64_t want = td->o.size && td->o.nr_files ? td->o.size / td->o.nr_files : 0;
	struct rdax_stat st;

	if (fio_file_size_known(f))
		return 0;
	/* an existing file keeps its size; a missing one is as big as the job */
	if (d && !rdax_stat(d->tree, f->file_name, &st) && st.size >= want)
		f->real_file_size = st.size;
	else
		f->real_file_size = want;
	fio_file_set_size_known(f);
	return 0;
}

static enum fio_q_status rdax_fio_queue(struct thread_data *td, struct io_u *io_u)
{
	struct rdax_fio_data *d = td->io_ops_data;
	struct rdax_io io = {
		.file = FILE_ENG_DATA(io_u->file),
		.buf = io_u->xfer_buf,
		.len = io_u->xfer_buflen,
		.offset = io_u->offset,
		.user_data = (uintptr_t)io_u,
		/* fio's buffers, registered once (register_buffers): no lookup */
		.reg = d->buf,
	};
	int ret;

	fio_ro_check(td, io_u);
	switch (io_u->ddir) {
	case DDIR_READ:
		io.opcode = RDAX_OP_READ;
		break;
	case DDIR_WRITE:
		io.opcode = RDAX_OP_WRITE;
		break;
	case DDIR_SYNC:
	case DDIR_DATASYNC:
		io.opcode = RDAX_OP_FSYNC;
		io.buf = NULL;
		io.len = 0;
		io.reg = NULL;
		break;
	default:
		io_u->error = EINVAL;
		return FIO_Q_COMPLETED;
	}
	ret = rdax_ioq_submit(d->q, &io, 1);
	if (ret == 1)
		return FIO_Q_QUEUED;
	if (ret == 0)
		return FIO_Q_BUSY;
	io_u->error = -ret;
	td_verror(td, io_u->error, "rdax_ioq_submit");
	return FIO_Q_COMPLETED;
}

static int rdax_fio_getevents(struct thread_data *td, unsigned int min,
			      unsigned int max, const struct timespec *t)
{
	struct rdax_fio_data *d = td->io_ops_data;
	int timeout = t ? (int)(t->tv_sec * 1000 + t->tv_nsec / 1000000) : -1;
	int n, i;

	if (max > d->depth)
		max = d->depth;
	if (min > max)
		min = max;
	n = rdax_ioq_reap(d->q, d->cqes, min, max, timeout);
	if (n < 0) {
		td_verror(td, -n, "rdax_ioq_reap");
		return n;
	}
	for (i = 0; i < n; i++) {
		struct io_u *io_u = (struct io_u *)(uintptr_t)d->cqes[i].user_data;
		int64_t res = d->cqes[i].res;

		if (res < 0) {
			io_u->error = (int)-res;
		} else if (io_u->ddir == DDIR_READ || io_u->ddir == DDIR_WRITE) {
			io_u->error = 0;
			io_u->resid = io_u->xfer_buflen - (unsigned long long)res;
		} else {
			io_u->error = 0;
		}
		d->events[i] = io_u;
	}
	return n;
}

static struct io_u *rdax_fio_event(struct thread_data *td, int event)
{
	struct rdax_fio_data *d = td->io_ops_data;

	return d->events[event];
}

/* fio's external loader looks this symbol up by name */
struct ioengine_ops ioengine = {
	.name = "rdax",
	.version = FIO_IOOPS_VERSION,
	.flags = FIO_DISKLESSIO | FIO_NOEXTEND | FIO_NODISKUTIL,
	.init = rdax_fio_init,
	.post_init = rdax_fio_post_init,
	.queue = rdax_fio_queue,
	.getevents = rdax_fio_getevents,
	.event = rdax_fio_event,
	.cleanup = rdax_fio_cleanup,
	.open_file = rdax_fio_open_file,
	.close_file = rdax_fio_close_file,
	.get_file_size = rdax_fio_get_file_size,
	.options = options,
	.option_struct_size = sizeof(struct rdax_fio_options),
};

/* LD_PRELOAD=fio-rdax.so fio --ioengine=rdax ... also works */
static void fio_init rdax_fio_register(void)
{
	register_ioengine(&ioengine);
}

static void fio_exit rdax_fio_unregister(void)
{
	unregister_ioengine(&ioengine);
}
