// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol -- diagnostics: the list of live sockets and
 * /proc/net/sdp.
 *
 * Copyright (C) 2026 The SDP for Linux authors
 *
 * /proc/net/sdp has one header line and then one line per SDP socket of
 * the reader's network namespace, in the layout of /proc/net/tcp:
 *
 *   local_address rem_address   st tx_queue rx_queue uid inode
 *   00000000:0000 00000000:0000 07 00000000:00000000 0 12345
 *
 * Addresses are printed as in /proc/net/tcp, or /proc/net/tcp6 for IPv6
 * ones (hex, as stored); an unbound socket shows zeros.  st is the TCP
 * state number; tx_queue is payload written and not yet delivered,
 * rx_queue payload received and not yet read.
 */
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/spinlock.h>
#include <net/net_namespace.h>

#include "sdp.h"

/*
 * sdp_sock_list_lock protects sdp_sock_list.  Sockets are unlinked from
 * their destructor, which can run in softirq context, hence the _bh.
 */
static DEFINE_SPINLOCK(sdp_sock_list_lock);
static LIST_HEAD(sdp_sock_list);

void sdp_sock_link(struct sdp_sock *ssk)
{
	spin_lock_bh(&sdp_sock_list_lock);
	list_add_tail(&ssk->node, &sdp_sock_list);
	spin_unlock_bh(&sdp_sock_list_lock);
}

void sdp_sock_unlink(struct sdp_sock *ssk)
{
	spin_lock_bh(&sdp_sock_list_lock);
	list_del(&ssk->node);
	spin_unlock_bh(&sdp_sock_list_lock);
}

/**
 * sdp_sock_scan() - act on the sockets that match a condition
 * @match: called under the list lock; true selects the socket (it should
 *	also mark it, so that the next scan does not select it again)
 * @fn: called for each selected socket, without locks, holding a reference
 * @arg: passed to both
 *
 * Selects at most SDP_SCAN_BATCH sockets.  Return: how many it selected;
 * call again while that is SDP_SCAN_BATCH.
 */
int sdp_sock_scan(bool (*match)(struct sdp_sock *ssk, void *arg),
		  void (*fn)(struct sdp_sock *ssk, void *arg), void *arg)
{
	struct sdp_sock *batch[SDP_SCAN_BATCH], *ssk;
	int i, n = 0;

	spin_lock_bh(&sdp_sock_list_lock);
	list_for_each_entry(ssk, &sdp_sock_list, node) {
		/*
		 * The memory stays valid while we hold the lock (the
		 * destructor unlinks under it), but a socket whose last
		 * reference is gone is being freed: skip it.
		 */
		if (!match(ssk, arg) ||
		    !refcount_inc_not_zero(&ssk->sk.sk_refcnt))
			continue;
		batch[n++] = ssk;
		if (n == SDP_SCAN_BATCH)
			break;
	}
	spin_unlock_bh(&sdp_sock_list_lock);

	for (i = 0; i < n; i++) {
		fn(batch[i], arg);
		sock_put(&batch[i]->sk);
	}
	return n;
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
static void sdp_seq_addr(struct seq_file *seq,
			 const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const void *)ss;
		const __be32 *a = sin6->sin6_addr.s6_addr32;

		seq_printf(seq, "%08X%08X%08X%08X:%04X", a[0], a[1], a[2], a[3],
			   ntohs(sin6->sin6_port));
	} else {
		const struct sockaddr_in *sin = (const void *)ss;

		seq_printf(seq, "%08X:%04X",
			   ss->ss_family == AF_INET ? sin->sin_addr.s_addr : 0,
			   ss->ss_family == AF_INET ? ntohs(sin->sin_port) : 0);
	}
}

static int sdp_seq_show(struct seq_file *seq, void *v)
{
	struct sdp_sock *ssk;
	struct sock *sk;

	if (v == &sdp_sock_list) {
		seq_puts(seq,
			 "local_address rem_address   st tx_queue rx_queue uid inode\n");
		return 0;
	}

	ssk = list_entry(v, struct sdp_sock, node);
	sk = &ssk->sk;
	if (!net_eq(sock_net(sk), seq_file_net(seq)))
		return 0;

	sdp_seq_addr(seq, &ssk->saddr);
	seq_putc(seq, ' ');
	sdp_seq_addr(seq, &ssk->daddr);
	seq_printf(seq, " %02X %08X:%08X %u %lu\n", sk->sk_state,
		   READ_ONCE(ssk->tx_bytes), READ_ONCE(ssk->rx_bytes),
		   from_kuid_munged(seq_user_ns(seq), sock_i_uid(sk)),
		   sock_i_ino(sk));
	return 0;
}

static const struct seq_operations sdp_seq_ops = {
	.start = sdp_seq_start,
	.next = sdp_seq_next,
	.stop = sdp_seq_stop,
	.show = sdp_seq_show,
};

static int __net_init sdp_net_init(struct net *net)
{
	if (!proc_create_net("sdp", 0444, net->proc_net, &sdp_seq_ops,
			     sizeof(struct seq_net_private)))
		return -ENOMEM;
	return 0;
}

static void __net_exit sdp_net_exit(struct net *net)
{
	remove_proc_entry("sdp", net->proc_net);
}

static struct pernet_operations sdp_net_ops = {
	.init = sdp_net_init,
	.exit = sdp_net_exit,
};

int sdp_diag_init(void)
{
	return register_pernet_subsys(&sdp_net_ops);
}

void sdp_diag_exit(void)
{
	unregister_pernet_subsys(&sdp_net_ops);
}
#else
int sdp_diag_init(void)
{
	return 0;
}

void sdp_diag_exit(void)
{
}
#endif /* CONFIG_PROC_FS */
