// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol -- resuming a connection after an outage
 * (Documentation/networking/sdp-resume.rst; the rules are the pure
 * functions of sdp_resume_wire.h).
 *
 * Copyright (C) 2026 The SDP for Linux authors
 *
 * Built so far: the capability (SDP_HF_RESUME, with net.sdp.resume),
 * each resumable connection's name and secret (the passive side makes
 * them, the HelloAck carries them), and the namespace's resume listener,
 * which checks every Resume in the design's order and refuses it.  A
 * Resume that passes every check is refused too, since no connection
 * suspends yet: its QP failing ends it as before, and its name is gone
 * with its socket.
 *
 * The listener (struct sdp_rsm_net: a CM id per IP version) is there
 * while a resumable connection we named is: the first one's request
 * has it made (sdp_rsm_offer()), and it is destroyed once the last
 * socket is gone, since its CM ids hold a reference to the namespace.
 * Only listen_work, on the system workqueue, makes and destroys it, and
 * with no lock held: a CM handler must do neither (over iWARP, destroying
 * a listener flushes the iWARP CM's ordered workqueue, which runs every
 * connection request, this one's included), nor wait for a lock held
 * across either.  So a request never waits for the listener: the first
 * connections are named and offered the capability while it is being
 * made; if it cannot be, they keep a port nobody listens at (their
 * Resumes go unanswered, as to a host that went away), and no connection
 * is offered the capability for SDP_RSM_RETRY.
 */
#include <crypto/algapi.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/random.h>
#include <linux/siphash.h>
#include <linux/string.h>
#include <net/ipv6.h>
#include <rdma/ib_cm.h>
#include <rdma/rdma_cm.h>

#include "sdp.h"
#include "sdp_dev.h"
#include "sdp_filter.h"
#include "sdp_net.h"
#include "sdp_proto.h"
#include "sdp_resume.h"
#include "sdp_resume_wire.h"
#include "sdp_stats.h"
#include "sdp_wire.h"

/* Connection requests the resume listener holds before refusing them. */
#define SDP_RSM_BACKLOG		16
/* Attempts at a conn_id nobody in the namespace has. */
#define SDP_RSM_ID_TRIES	8
/* A listener that could not be made is tried again after this. */
#define SDP_RSM_RETRY		(10 * HZ)

/*
 * tag(dir, gen) = SipHash-2-4(secret; conn_id << 32 | gen, dir, 0) ||
 *		   SipHash-2-4(secret; conn_id << 32 | gen, dir, 1),
 * each half little-endian; dir 0 in a Resume, 1 in a ResumeAck.
 */
static void sdp_rsm_tag(const struct sdp_rsm *rs, u32 gen, u64 dir,
			u8 tag[SDP_RESUME_TAG_LEN])
{
	u64 a = (u64)rs->conn_id << 32 | gen;
	siphash_key_t key;
	__le64 w[2];

	static_assert(sizeof(w) == SDP_RESUME_TAG_LEN);
	static_assert(sizeof(w) == sizeof(rs->secret));
	memcpy(w, rs->secret, sizeof(w));
	key.key[0] = le64_to_cpu(w[0]);
	key.key[1] = le64_to_cpu(w[1]);
	w[0] = cpu_to_le64(siphash_3u64(a, dir, 0, &key));
	w[1] = cpu_to_le64(siphash_3u64(a, dir, 1, &key));
	memcpy(tag, w, sizeof(w));
	memzero_explicit(&key, sizeof(key));
}

static void sdp_rsm_in6(const struct sockaddr_storage *ss,
			struct in6_addr *a)
{
	if (ss->ss_family == AF_INET)
		ipv6_addr_set_v4mapped(((const struct sockaddr_in *)ss)->sin_addr.s_addr,
				       a);
	else
		*a = ((const struct sockaddr_in6 *)ss)->sin6_addr;
}

/*
 * Did the peer announce @src?  So far it announces the address of the
 * connection alone (Addrs is a later step).  Under sdp_sock::lock.
 */
static bool sdp_rsm_addr_ok(const struct sdp_sock *ssk,
			    const struct sockaddr_storage *src)
{
	struct in6_addr a, b;

	sdp_rsm_in6(&ssk->daddr, &a);
	sdp_rsm_in6(src, &b);
	return ipv6_addr_equal(&a, &b);
}

/* The connection named @conn_id, with a reference, or NULL. */
static struct sdp_sock *sdp_rsm_get(struct sdp_rsm_net *rn, u32 conn_id)
{
	struct sdp_sock *ssk;

	xa_lock_bh(&rn->conns);
	ssk = xa_load(&rn->conns, conn_id);
	if (ssk && !refcount_inc_not_zero(&ssk->sk.sk_refcnt))
		ssk = NULL;
	xa_unlock_bh(&rn->conns);
	return ssk;
}

static const char * const sdp_rsm_why[] = {
	[SDP_RR_NONE] = "no connection suspends yet",
	[SDP_RR_FORMAT] = "malformed",
	[SDP_RR_UNKNOWN] = "no such connection",
	[SDP_RR_STALE] = "not the generation due",
	[SDP_RR_TAG] = "wrong tag",
	[SDP_RR_ADDR] = "from an address the peer did not announce",
};

static void sdp_rsm_count(struct net *net, enum sdp_resume_refusal why)
{
	static const enum sdp_mib_field mib[] = {
		[SDP_RR_NONE] = SDP_MIB_RESUME_REFUSED,
		[SDP_RR_FORMAT] = SDP_MIB_RESUME_BAD_FORMAT,
		[SDP_RR_UNKNOWN] = SDP_MIB_RESUME_BAD_CONN,
		[SDP_RR_STALE] = SDP_MIB_RESUME_BAD_GEN,
		[SDP_RR_TAG] = SDP_MIB_RESUME_BAD_TAG,
		[SDP_RR_ADDR] = SDP_MIB_RESUME_BAD_ADDR,
	};

	SDP_INC_STATS(net, SDP_MIB_RESUME_REFUSED);
	if (why != SDP_RR_NONE)
		SDP_INC_STATS(net, mib[why]);
}

/*
 * The refusal reason of a Resume: the design's checks in order
 * (sdp_resume_refusal()), the tag compared in constant time.
 */
static enum sdp_resume_refusal
sdp_rsm_judge(struct sdp_rsm_net *rn, struct rdma_cm_id *id,
	      const struct sdp_resume *r, u32 len)
{
	enum sdp_resume_msg_verdict msg;
	bool found = false, tag_ok = false, addr_ok = false;
	struct sdp_sock *ssk = NULL;
	u8 tag[SDP_RESUME_TAG_LEN];
	u32 gen = 0, done = 0;

	msg = sdp_resume_msg_check(r, len, SDP_MID_RESUME);
	if (msg == SDP_RESUME_MSG_OK) {
		gen = be32_to_cpu(r->gen);
		ssk = sdp_rsm_get(rn, be32_to_cpu(r->conn_id));
	}
	if (ssk) {
		spin_lock_bh(&ssk->lock);
		/* Only an established connection ever suspends. */
		found = (1 << ssk->sk.sk_state) &
			(TCPF_ESTABLISHED | TCPF_CLOSE_WAIT | TCPF_FIN_WAIT1 |
			 TCPF_FIN_WAIT2 | TCPF_CLOSING | TCPF_LAST_ACK);
		done = ssk->rsm.done;
		if (found && sdp_resume_gen_ok(gen, done)) {
			sdp_rsm_tag(&ssk->rsm, gen, 0, tag);
			tag_ok = !crypto_memneq(tag, r->tag, sizeof(tag));
			memzero_explicit(tag, sizeof(tag));
			addr_ok = sdp_rsm_addr_ok(ssk, &id->route.addr.dst_addr);
		}
		spin_unlock_bh(&ssk->lock);
		sock_put(&ssk->sk);
	}
	return sdp_resume_refusal(msg, found, gen, done, tag_ok, addr_ok);
}

/*
 * CONNECT_REQUEST at the resume listener: what the host's firewall would
 * not let in as TCP stays out, as at any listener (sdp_filter.c counts
 * and logs it), with a reject that says nothing, as a host without the
 * listener would give (the peer tries again until its bound, rather than
 * take it for the connection's end); the rest is judged and, for now,
 * always refused, with one answer whatever the reason.  Returning 1 has
 * the CM destroy @id.
 */
static int sdp_rsm_request(struct sdp_rsm_net *rn, struct rdma_cm_id *id,
			   struct rdma_cm_event *ev)
{
	struct net *net = id->route.addr.dev_addr.net;
	enum sdp_resume_refusal why;
	struct sdp_bsdh refused;

	if (!sdp_filter_request(net, id)) {
		rdma_reject(id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
		return 1;
	}
	why = sdp_rsm_judge(rn, id, ev->param.conn.private_data,
			    ev->param.conn.private_data_len);
	sdp_rsm_count(net, why);
	net_info_ratelimited("%pISc: Resume refused: %s\n",
			     &id->route.addr.dst_addr, sdp_rsm_why[why]);
	sdp_bsdh_init(&refused, SDP_MID_RESUME_REFUSED, sizeof(refused), 0, 0,
		      0);
	rdma_reject(id, &refused, sizeof(refused), IB_CM_REJ_CONSUMER_DEFINED);
	return 1;
}

static int sdp_rsm_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		return sdp_rsm_request(id->context, id, ev);
	return 0;
}

/* A listening CM id of the resume listener: @family's wildcard, @port. */
static struct rdma_cm_id *sdp_rsm_listen_one(struct net *net,
					     struct sdp_rsm_net *rn,
					     sa_family_t family, u16 port)
{
	struct sockaddr_storage ss = {};
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct rdma_cm_id *id;
	int err;

	id = rdma_create_id(net, sdp_rsm_cm_handler, rn, RDMA_PS_TCP,
			    IB_QPT_RC);
	if (IS_ERR(id))
		return id;
	if (family == AF_INET) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
	} else {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		err = rdma_set_afonly(id, 1);
		if (err)
			goto err_id;
	}
	err = rdma_bind_addr(id, (struct sockaddr *)&ss);
	if (err)
		goto err_id;
	err = rdma_listen(id, SDP_RSM_BACKLOG);
	if (err)
		goto err_id;
	return id;

err_id:
	rdma_destroy_id(id);
	return ERR_PTR(err);
}

static void sdp_rsm_unlisten(struct sdp_rsm_net *rn)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(rn->lid); i++) {
		if (rn->lid[i])
			rdma_destroy_id(rn->lid[i]);
		rn->lid[i] = NULL;
	}
}

/* Make the listener at @port; 0 or the error.  listen_work. */
static int sdp_rsm_listen(struct net *net, struct sdp_rsm_net *rn, u16 port)
{
	struct rdma_cm_id *id;

	id = sdp_rsm_listen_one(net, rn, AF_INET, port);
	if (IS_ERR(id))
		return PTR_ERR(id);
	rn->lid[0] = id;
	if (ipv6_mod_enabled()) {
		id = sdp_rsm_listen_one(net, rn, AF_INET6, port);
		if (IS_ERR(id)) {
			sdp_rsm_unlisten(rn);
			return PTR_ERR(id);
		}
		rn->lid[1] = id;
	}
	return 0;
}

/*
 * Make the listener while the namespace has resumable connections, and
 * destroy it once it has none, no lock held across either (above).  One
 * run at a time (a work item is not reentrant), and one more after any
 * change of @users that needs it.
 */
static void sdp_rsm_listen_work(struct work_struct *work)
{
	struct sdp_rsm_net *rn = container_of(work, struct sdp_rsm_net,
					      listen_work);
	bool want, up;
	u16 port;
	int err;

	xa_lock_bh(&rn->conns);
	want = rn->users && rn->state == SDP_RSM_DOWN;
	up = !rn->users && rn->state == SDP_RSM_UP;
	if (up)
		rn->state = SDP_RSM_DOWN;
	/* @port stays what the HelloAcks announce meanwhile. */
	if (want)
		rn->state = SDP_RSM_MAKING;
	/* A user's socket holds the namespace until it leaves @conns. */
	if (want)
		get_net(rn->net);
	port = rn->port;
	xa_unlock_bh(&rn->conns);
	if (up)
		sdp_rsm_unlisten(rn);
	if (!want)
		return;
	err = sdp_rsm_listen(rn->net, rn, port);
	xa_lock_bh(&rn->conns);
	rn->state = err ? SDP_RSM_FAILED : SDP_RSM_UP;
	rn->failed_at = jiffies;
	/* The last user went meanwhile: destroy it again. */
	if (!err && !rn->users)
		schedule_work(&rn->listen_work);
	xa_unlock_bh(&rn->conns);
	if (err) {
		net_warn_ratelimited("resume listener at port %u: error %d; connections are made without resume for %u s\n",
				     port, err, SDP_RSM_RETRY / HZ);
		SDP_INC_STATS(rn->net, SDP_MIB_RESUME_LISTEN_FAILED);
	}
	put_net(rn->net);
}

void sdp_rsm_net_init(struct net *net, struct sdp_rsm_net *rn)
{
	rn->net = net;
	xa_init_flags(&rn->conns, XA_FLAGS_LOCK_BH);
	INIT_WORK(&rn->listen_work, sdp_rsm_listen_work);
}

/*
 * The namespace goes: its sockets went, and the listener with the last
 * (its CM ids held the namespace).
 */
void sdp_rsm_net_exit(struct sdp_rsm_net *rn)
{
	flush_work(&rn->listen_work);
	WARN_ON_ONCE(rn->lid[0] || rn->lid[1] || rn->users ||
		     !xa_empty(&rn->conns));
	xa_destroy(&rn->conns);
}

/*
 * Not over iWARP: a Send completes there once the local TCP took it, so
 * snd_una and the send slots retired on completions may be ahead of what
 * the peer has, and a resume would lose those bytes (sdp-resume.rst,
 * "Stream positions").  Both sides check, each for its own device.
 */
static bool sdp_rsm_possible(const struct sdp_sock *ssk)
{
	return sdp_sysctl_resume(sock_net(&ssk->sk)) && !ssk->conn.sdev->iwarp;
}

/* Active side: our Hello's flag, and whether we offered it. */
u8 sdp_rsm_hello_flag(struct sdp_sock *ssk)
{
	memset(&ssk->rsm, 0, sizeof(ssk->rsm));
	ssk->rsm.offered = sdp_rsm_possible(ssk);
	return ssk->rsm.offered ? SDP_HF_RESUME : 0;
}

/*
 * Passive side, a Hello with @hello_flags: name the connection and fill
 * the HelloAck's extension @x if both sides offer the capability.  The
 * child is not visible yet.  Returns true if it is resumable.
 */
bool sdp_rsm_offer(struct sdp_sock *child, u8 hello_flags,
		   struct sdp_hello_ack_resume *x)
{
	struct net *net = sock_net(&child->sk);
	struct sdp_rsm_net *rn = &sdp_net(net)->rsm;
	bool make = false;
	int err, tries;
	u32 conn_id;

	if (!(hello_flags & SDP_HF_RESUME) || !sdp_rsm_possible(child))
		return false;
	/* Name and secret first: the table makes the child findable. */
	get_random_bytes(child->rsm.secret, sizeof(child->rsm.secret));
	err = -EBUSY;
	xa_lock_bh(&rn->conns);
	if (rn->state == SDP_RSM_FAILED &&
	    time_before(jiffies, rn->failed_at + SDP_RSM_RETRY)) {
		err = -EAGAIN;
		goto out;
	}
	for (tries = 0; tries < SDP_RSM_ID_TRIES && err == -EBUSY; tries++) {
		conn_id = get_random_u32();
		if (!conn_id)
			continue;
		child->rsm.conn_id = conn_id;
		err = __xa_insert(&rn->conns, conn_id, child, GFP_KERNEL);
	}
	if (err)
		goto out;
	/*
	 * No listener, and none being made: this request has it made, at
	 * the port set now (after a failure too: the admin may have moved
	 * it off a port something else holds).
	 */
	if (rn->state == SDP_RSM_FAILED ||
	    (rn->state == SDP_RSM_DOWN && !rn->users)) {
		rn->state = SDP_RSM_DOWN;
		rn->port = sdp_sysctl_resume_port(net);
	}
	rn->users++;
	make = rn->state == SDP_RSM_DOWN;
	child->rsm.passive = true;
	x->conn_id = cpu_to_be32(conn_id);
	x->port = cpu_to_be16(rn->port);
	x->rsvd = 0;
	memcpy(x->secret, child->rsm.secret, sizeof(x->secret));
out:
	xa_unlock_bh(&rn->conns);
	if (err) {
		memzero_explicit(&child->rsm, sizeof(child->rsm));
		return false;
	}
	if (make)
		schedule_work(&rn->listen_work);
	SDP_INC_STATS(net, SDP_MIB_RESUME_OFFERED);
	return true;
}

/*
 * Active side, a HelloAck of @len bytes: keep the extension if both
 * sides offered the capability.  Returns false if it is malformed.
 */
bool sdp_rsm_hello_ack(struct sdp_sock *ssk, const struct sdp_hello_ack *ha,
		       u32 len)
{
	const struct sdp_hello_ack_resume *x = (const void *)(ha + 1);

	if (!(ha->flags & SDP_HF_RESUME) || !ssk->rsm.offered)
		return true;
	if (!sdp_hello_ack_resume_ok(ha, len))
		return false;
	ssk->rsm.conn_id = be32_to_cpu(x->conn_id);
	ssk->rsm.port = x->port;
	memcpy(ssk->rsm.secret, x->secret, sizeof(ssk->rsm.secret));
	return true;
}

/* The socket goes (its destructor, any context): forget its name. */
void sdp_rsm_forget(struct sdp_sock *ssk)
{
	struct sdp_rsm_net *rn;
	bool last;

	if (ssk->rsm.passive) {
		rn = &sdp_net(sock_net(&ssk->sk))->rsm;
		xa_lock_bh(&rn->conns);
		WARN_ON_ONCE(__xa_erase(&rn->conns, ssk->rsm.conn_id) != ssk);
		last = !--rn->users;
		xa_unlock_bh(&rn->conns);
		if (last)
			schedule_work(&rn->listen_work);
	}
	memzero_explicit(&ssk->rsm, sizeof(ssk->rsm));
}
