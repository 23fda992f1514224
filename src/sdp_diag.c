// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol -- diagnostics: /proc/net/sdp and the
 * sock_diag netlink dump, both from the socket list (sdp_sock_list.c).
 *
 * Copyright (C) 2026 The SDP for Linux authors
 *
 * /proc/net/sdp has one header line and then one line per SDP socket of
 * the reader's network namespace, in the layout of /proc/net/tcp with
 * the socket's transfer counters after the inode:
 *
 *   local_address rem_address   st tx_queue rx_queue uid inode tx_bcopy ...
 *   0100370A:D580 0100370A:E1F6 01 00000000:00000000 0 12345 1048576 ...
 *
 * Addresses are printed as in /proc/net/tcp, or as in /proc/net/tcp6
 * (32 hex digits, IPv4 v4-mapped) for a socket its owner addresses
 * through AF_INET6; an unbound socket shows zeros.  st is the TCP state
 * number; tx_queue is payload written and not yet delivered, rx_queue
 * payload received and not yet read (for a listener: the backlog, and
 * the connections waiting for accept(), as /proc/net/tcp shows them).
 * The eight counters are, in decimal: bytes sent and received through
 * the buffered-copy path, then through the zero-copy path, then the
 * messages of each (struct sdp_sock_stats).
 *
 * The sock_diag dump (include/uapi/linux/sdp_diag.h) gives the same and
 * more, one netlink message per socket.
 */
#include <linux/module.h>
#include <linux/net.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/sock_diag.h>
#include <linux/spinlock.h>
#include <net/net_namespace.h>
#include <net/netlink.h>
#include <uapi/linux/sdp.h>
#include <uapi/linux/sdp_diag.h>

#include "sdp.h"
#include "sdp_diag.h"
#include "sdp_stats.h"
#include "sdp_wire.h"

/*
 * The addresses of @ssk as its owner sees them: IPv4 ones of a socket
 * used through AF_INET6 become v4-mapped IPv6 ones.  @addr gets 4 words
 * (network order), the return value is AF_INET or AF_INET6.
 */
static int sdp_diag_addr(const struct sdp_sock *ssk,
			 const struct sockaddr_storage *ss, __be32 *addr,
			 __be16 *port)
{
	bool v6 = test_bit(SDP_O_V6, &ssk->opts);

	memset(addr, 0, 4 * sizeof(*addr));
	*port = 0;
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const void *)ss;

		memcpy(addr, &sin6->sin6_addr, sizeof(sin6->sin6_addr));
		*port = sin6->sin6_port;
		return AF_INET6;
	}
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *sin = (const void *)ss;

		*port = sin->sin_port;
		if (!v6) {
			addr[0] = sin->sin_addr.s_addr;
			return AF_INET;
		}
		addr[2] = htonl(0xffff);
		addr[3] = sin->sin_addr.s_addr;
	}
	return v6 ? AF_INET6 : AF_INET;
}

/* The queue columns: as /proc/net/tcp, the backlog for a listener. */
static void sdp_diag_queues(const struct sdp_sock *ssk, u32 *rq, u32 *wq)
{
	const struct sock *sk = &ssk->sk;

	if (READ_ONCE(sk->sk_state) == TCP_LISTEN) {
		*rq = READ_ONCE(sk->sk_ack_backlog);
		*wq = READ_ONCE(sk->sk_max_ack_backlog);
	} else {
		*rq = READ_ONCE(ssk->conn.rx_bytes);
		*wq = READ_ONCE(ssk->conn.tx_bytes);
	}
}

#ifdef CONFIG_PROC_FS
static void *sdp_seq_start(struct seq_file *seq, loff_t *pos)
	__acquires(&sdp_sock_list_lock)
{
	spin_lock_bh(&sdp_sock_list_lock);
	return seq_list_start_head(&sdp_sock_list, *pos);
}

static void *sdp_seq_next(struct seq_file *seq, void *v, loff_t *pos)
{
	return seq_list_next(v, &sdp_sock_list, pos);
}

static void sdp_seq_stop(struct seq_file *seq, void *v)
	__releases(&sdp_sock_list_lock)
{
	spin_unlock_bh(&sdp_sock_list_lock);
}

/* An address as /proc/net/tcp (IPv4) or /proc/net/tcp6 (IPv6) print it. */
static void sdp_seq_addr(struct seq_file *seq, const struct sdp_sock *ssk,
			 const struct sockaddr_storage *ss)
{
	__be32 a[4];
	__be16 port;

	if (sdp_diag_addr(ssk, ss, a, &port) == AF_INET6)
		seq_printf(seq, "%08X%08X%08X%08X:%04X", a[0], a[1], a[2], a[3],
			   ntohs(port));
	else
		seq_printf(seq, "%08X:%04X", a[0], ntohs(port));
}

static int sdp_seq_show(struct seq_file *seq, void *v)
{
	const struct sdp_sock_stats *st;
	struct sdp_sock *ssk;
	struct sock *sk;
	u32 rq, wq;

	if (v == &sdp_sock_list) {
		seq_puts(seq,
			 "local_address rem_address   st tx_queue rx_queue uid inode tx_bcopy rx_bcopy tx_zcopy rx_zcopy tx_bcopy_msgs rx_bcopy_msgs tx_zcopy_msgs rx_zcopy_msgs fallback\n");
		return 0;
	}

	ssk = list_entry(v, struct sdp_sock, node);
	sk = &ssk->sk;
	if (!net_eq(sock_net(sk), seq_file_net(seq)))
		return 0;

	st = &ssk->stats;
	sdp_diag_queues(ssk, &rq, &wq);
	sdp_seq_addr(seq, ssk, &ssk->saddr);
	seq_putc(seq, ' ');
	sdp_seq_addr(seq, ssk, &ssk->daddr);
	seq_printf(seq, " %02X %08X:%08X %u %lu", READ_ONCE(sk->sk_state),
		   wq, rq,
		   from_kuid_munged(seq_user_ns(seq), sock_i_uid(sk)),
		   sock_i_ino(sk));
	seq_printf(seq, " %llu %llu %llu %llu %llu %llu %llu %llu %u\n",
		   sdp_sk_counter(st, BCOPY_TX_BYTES),
		   sdp_sk_counter(st, BCOPY_RX_BYTES),
		   sdp_sk_counter(st, ZCOPY_TX_BYTES),
		   sdp_sk_counter(st, ZCOPY_RX_BYTES),
		   sdp_sk_counter(st, BCOPY_TX_MSGS),
		   sdp_sk_counter(st, BCOPY_RX_MSGS),
		   sdp_sk_counter(st, ZCOPY_TX_MSGS),
		   sdp_sk_counter(st, ZCOPY_RX_MSGS),
		   sdp_fb_reason(ssk));
	return 0;
}

static const struct seq_operations sdp_seq_ops = {
	.start = sdp_seq_start,
	.next = sdp_seq_next,
	.stop = sdp_seq_stop,
	.show = sdp_seq_show,
};

/* /proc/net/sdp of a new namespace (sdp_net.c). */
int sdp_proc_net_init(struct net *net)
{
	if (!proc_create_net("sdp", 0444, net->proc_net, &sdp_seq_ops,
			     sizeof(struct seq_net_private)))
		return -ENOMEM;
	return 0;
}

void sdp_proc_net_exit(struct net *net)
{
	remove_proc_entry("sdp", net->proc_net);
}
#else
int sdp_proc_net_init(struct net *net)
{
	return 0;
}

void sdp_proc_net_exit(struct net *net)
{
}
#endif /* CONFIG_PROC_FS */

/* The uapi abort reasons are the module's. */
/* No hole the compiler could leave unset: every byte is a field. */
static_assert(sizeof(struct sdp_diag_conn) ==
	      offsetof(struct sdp_diag_conn, snd_nxt) + sizeof(__u64));
static_assert(offsetof(struct sdp_diag_conn, rx_seq) % sizeof(__u64) == 0);

/* A lockless snapshot: the fields may be from slightly different times. */
static void sdp_diag_get_conn(const struct sdp_sock *ssk,
			      struct sdp_diag_conn *c)
{
	u32 last = READ_ONCE(ssk->conn.rx_mseq_last);

	c->tx_credits = READ_ONCE(ssk->conn.tx_credits);
	c->peer_credits = sdp_peer_credits(last, READ_ONCE(ssk->conn.rx_mseq_limit));
	c->tx_max = READ_ONCE(ssk->conn.tx_max);
	c->rx_bufs = READ_ONCE(ssk->conn.rx_count);
	c->tx_bufs = READ_ONCE(ssk->conn.tx_count);
	c->rx_posted = READ_ONCE(ssk->conn.rx_posted);
	c->tx_mseq_next = READ_ONCE(ssk->conn.tx_mseq_next);
	c->rx_mseq_last = last;
	c->abort_reason = READ_ONCE(ssk->stats.abort_reason);
	if (READ_ONCE(ssk->conn.cq))
		c->comp_vector = READ_ONCE(ssk->conn.comp_vector);
	c->rx_alloc = READ_ONCE(ssk->conn.rx_alloc);
	c->tx_alloc = READ_ONCE(ssk->conn.tx_alloc);
	c->mem_pages = READ_ONCE(ssk->mem_pages);
	c->rx_seq = READ_ONCE(ssk->conn.rx_seq);
	c->snd_una = READ_ONCE(ssk->conn.snd_una);
	c->snd_nxt = READ_ONCE(ssk->conn.snd_nxt);
	if (sdp_fb(ssk)) {
		c->transport = SDP_TRANSPORT_TCP;
		c->fallback_reason = sdp_fb_reason(ssk);
	}
}

#define SDP_DIAG_WANT(req, attr)	((req)->sdiag_ext & (1U << ((attr) - 1)))

/* One socket into @skb; sdp_sock_list_lock held. */
static int sdp_diag_fill(struct sk_buff *skb, struct sdp_sock *ssk,
			 const struct sdp_diag_req *req,
			 struct user_namespace *user_ns, u32 portid, u32 seq)
{
	struct sock *sk = &ssk->sk;
	struct sdp_diag_msg *r;
	struct nlmsghdr *nlh;
	u64 cookie;

	lockdep_assert_held(&sdp_sock_list_lock);
	nlh = nlmsg_put(skb, portid, seq, SOCK_DIAG_BY_FAMILY, sizeof(*r),
			NLM_F_MULTI);
	if (!nlh)
		return -EMSGSIZE;
	r = nlmsg_data(nlh);
	memset(r, 0, sizeof(*r));
	r->sdiag_family = sdp_diag_addr(ssk, &ssk->saddr, r->sdiag_src,
					&r->sdiag_sport);
	sdp_diag_addr(ssk, &ssk->daddr, r->sdiag_dst, &r->sdiag_dport);
	r->sdiag_state = READ_ONCE(sk->sk_state);
	r->sdiag_uid = from_kuid_munged(user_ns, sock_i_uid(sk));
	r->sdiag_inode = sock_i_ino(sk);
	sdp_diag_queues(ssk, &r->sdiag_rqueue, &r->sdiag_wqueue);
	cookie = ssk->stats.id;
	r->sdiag_cookie[0] = lower_32_bits(cookie);
	r->sdiag_cookie[1] = upper_32_bits(cookie);

	if (SDP_DIAG_WANT(req, SDP_DIAG_STATS)) {
		struct sdp_diag_stats st;

		sdp_stats_to_diag(&ssk->stats, &st);
		if (nla_put(skb, SDP_DIAG_STATS, sizeof(st), &st))
			goto cancel;
	}
	if (SDP_DIAG_WANT(req, SDP_DIAG_CONN)) {
		struct sdp_diag_conn c = {};

		sdp_diag_get_conn(ssk, &c);
		if (nla_put(skb, SDP_DIAG_CONN, sizeof(c), &c))
			goto cancel;
	}
	nlmsg_end(skb, nlh);
	return 0;

cancel:
	nlmsg_cancel(skb, nlh);
	return -EMSGSIZE;
}

/*
 * netlink_dump_control::dump: fill @skb with the sockets of the
 * requester's namespace that match, from where the last call stopped
 * (cb->args[0]: sockets of the namespace already looked at).  Sockets
 * opened or closed between two calls may be missed or listed twice, as
 * with /proc/net/tcp.
 */
static int sdp_diag_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	const struct sdp_diag_req *req = nlmsg_data(cb->nlh);
	struct user_namespace *user_ns = sk_user_ns(NETLINK_CB(cb->skb).sk);
	struct net *net = sock_net(skb->sk);
	long idx = 0, start = cb->args[0];
	struct sdp_sock *ssk;

	spin_lock_bh(&sdp_sock_list_lock);
	list_for_each_entry(ssk, &sdp_sock_list, node) {
		struct sock *sk = &ssk->sk;

		if (!net_eq(sock_net(sk), net))
			continue;
		if (idx++ < start)
			continue;
		if (!(req->sdiag_states & (1U << READ_ONCE(sk->sk_state))))
			continue;
		if (req->sdiag_ino && sock_i_ino(sk) != req->sdiag_ino)
			continue;
		if (sdp_diag_fill(skb, ssk, req, user_ns,
				  NETLINK_CB(cb->skb).portid,
				  cb->nlh->nlmsg_seq) < 0) {
			idx--;	/* again in the next call */
			break;
		}
	}
	spin_unlock_bh(&sdp_sock_list_lock);
	cb->args[0] = idx;
	return skb->len;
}

static int sdp_diag_handler_dump(struct sk_buff *skb, struct nlmsghdr *h)
{
	struct net *net = sock_net(skb->sk);
	struct netlink_dump_control c = {
		.dump = sdp_diag_dump,
	};

	if (nlmsg_len(h) < sizeof(struct sdp_diag_req))
		return -EINVAL;
	if (!(h->nlmsg_flags & NLM_F_DUMP))
		return -EOPNOTSUPP;
	return netlink_dump_start(net->diag_nlsk, skb, h, &c);
}

static struct sock_diag_handler sdp_diag_handler __ro_after_init = {
#ifdef SDP_HAVE_DIAG_OWNER
	.owner = THIS_MODULE,
#endif
	.dump = sdp_diag_handler_dump,
};

int sdp_diag_init(void)
{
	sdp_diag_handler.family = sdp_family;
	return sock_diag_register(&sdp_diag_handler);
}

void sdp_diag_exit(void)
{
	sock_diag_unregister(&sdp_diag_handler);
}

/* A sock_diag request for family 27 loads the module. */
MODULE_ALIAS_NET_PF_PROTO_TYPE(PF_NETLINK, NETLINK_SOCK_DIAG, AF_INET_SDP);
