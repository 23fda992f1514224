// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol -- the memory connections hold: where it is
 * charged, the limits, and half-open connections.
 *
 * Copyright (C) 2026 The SDP for Linux authors
 *
 * Most of a connection's memory is its message buffers, 32 KiB each
 * (SDP_BUF_SIZE; the first receive buffers 4 KiB, SDP_BUF_SMALL): by
 * default 16 to receive and 16 to send.  A local user
 * or a peer must not be able to make the kernel hold them without bound,
 * so they are
 *
 *  - allocated when needed: a connection posts net.sdp.rx_init_bufs
 *    receive buffers (a passive one SDP_HALF_OPEN_BUFS while half open)
 *    and the rest of its ring once the peer runs short of credits
 *    (sdp_rx_grow(), announced to the peer with a credit update), and
 *    go back to rx_init_bufs small ones after net.sdp.rx_idle_ms
 *    without data (sdp_rx_ring_idle(), when the peer can be told); the
 *    send buffers come one at a time, when a send needs a slot and no
 *    slot out of use has one (sdp_tx_slot_ready()), so a connection has
 *    as many as it ever had messages in flight at once, and go after
 *    net.sdp.tx_idle_ms without a send (sdp_tx_ring_idle());
 *  - charged to the socket's memory cgroup: allocated with __GFP_ACCOUNT
 *    while the socket's memcg is the active one (the CM handler runs in a
 *    kernel thread, and a socket may be used by another process than the
 *    one that made it); a passive socket takes its listener's memcg;
 *  - counted per network namespace against net.sdp.mem, three page
 *    counts as tcp_mem: above "pressure" the namespace is under memory
 *    pressure until usage falls below "min" again, and meanwhile new
 *    connections get SDP_MIN_BUFS buffers each way and a passive one does
 *    not grow beyond its half-open ring; above "max" new connections are
 *    refused (connect() fails with ENOBUFS, a connection request is
 *    rejected), while established ones keep working (a first send still
 *    gets its send buffers);
 *  - for connection requests a listener holds before the peer completes
 *    the handshake (half open), bounded per namespace by
 *    net.sdp.max_half_open, on top of each listener's backlog.
 *
 * Pages spliced to a socket (sendfile(), splice()) that it holds to send
 * zero-copy count against net.sdp.mem too, a page each, refused above
 * max (they then go buffered); they stay charged to the memory cgroup
 * that allocated them (sdp_zc_tx.c, sdp_zc_splice()).
 *
 * Refusals and the pages in use are in /proc/net/sdp_stats (MemPages,
 * MemRefused, MemPressureConns, HalfOpen, HalfOpenRefused).  The QP and
 * CQ memory belongs to the device driver and is not counted here.
 */
#include <linux/cgroup.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>

#include "sdp.h"
#include "sdp_conn.h"
#include "sdp_mem.h"
#include "sdp_net.h"
#include "sdp_stats.h"

/* Pages @bufs message buffers of @size bytes count for. */
static long sdp_buf_pages(unsigned int bufs, u32 size)
{
	return (long)bufs * DIV_ROUND_UP(size, PAGE_SIZE);
}

/* Defaults of net.sdp.mem: a quarter of RAM at most, as max. */
void sdp_mem_net_init(struct sdp_net *sn)
{
	unsigned long max = totalram_pages() / 4;

	sn->mem[0] = max / 2;
	sn->mem[1] = max / 4 * 3;
	sn->mem[2] = max;
	atomic_long_set(&sn->mem_pages, 0);
	atomic_set(&sn->half_open, 0);
	sn->mem_pressure = false;
}

/* Is @net under memory pressure (see above)? */
bool sdp_mem_under_pressure(const struct net *net)
{
	struct sdp_net *sn = sdp_net(net);
	long used = atomic_long_read(&sn->mem_pages);

	if (used > READ_ONCE(sn->mem[1]))
		WRITE_ONCE(sn->mem_pressure, true);
	else if (used < READ_ONCE(sn->mem[0]))
		WRITE_ONCE(sn->mem_pressure, false);
	return READ_ONCE(sn->mem_pressure);
}

/**
 * sdp_mem_charge() - count @bufs message buffers of @ssk in its namespace
 * @ssk: the socket
 * @bufs: buffers about to be allocated
 * @size: bytes each (a small buffer counts for a page)
 * @force: charge even above net.sdp.mem's max (an established connection)
 *
 * Return: 0, or -ENOBUFS (counted in MemRefused) if that would take the
 * namespace above its max.
 */
int sdp_mem_charge(struct sdp_sock *ssk, unsigned int bufs, u32 size,
		   bool force)
{
	struct net *net = sock_net(&ssk->sk);
	struct sdp_net *sn = sdp_net(net);
	long pages = sdp_buf_pages(bufs, size);

	if (atomic_long_add_return(pages, &sn->mem_pages) >
	    READ_ONCE(sn->mem[2]) && !force) {
		atomic_long_sub(pages, &sn->mem_pages);
		SDP_INC_STATS(net, SDP_MIB_MEM_REFUSED);
		return -ENOBUFS;
	}
	ssk->mem_pages += pages;
	return 0;
}

/* Give back what sdp_mem_charge() counted for @bufs buffers of @size. */
void sdp_mem_uncharge(struct sdp_sock *ssk, unsigned int bufs, u32 size)
{
	long pages = sdp_buf_pages(bufs, size);

	atomic_long_sub(pages, &sdp_net(sock_net(&ssk->sk))->mem_pages);
	ssk->mem_pages -= pages;
}

/* The connection's buffers are freed: give back all it counted. */
void sdp_mem_uncharge_all(struct sdp_sock *ssk)
{
	atomic_long_sub(ssk->mem_pages,
			&sdp_net(sock_net(&ssk->sk))->mem_pages);
	ssk->mem_pages = 0;
}

/*
 * The ring sizes of a new connection: as asked, or at most SDP_MIN_BUFS
 * each under memory pressure (counted in MemPressureConns).
 */
void sdp_mem_ring_bufs(const struct sock *sk, unsigned int *rx,
		       unsigned int *tx)
{
	struct net *net = sock_net(sk);

	if ((*rx <= SDP_MIN_BUFS && *tx <= SDP_MIN_BUFS) ||
	    !sdp_mem_under_pressure(net))
		return;
	*rx = min_t(unsigned int, *rx, SDP_MIN_BUFS);
	*tx = min_t(unsigned int, *tx, SDP_MIN_BUFS);
	SDP_INC_STATS(net, SDP_MIB_MEM_PRESSURE_CONNS);
}

/*
 * A listener takes a connection request: one half-open connection more
 * in @child's namespace, unless net.sdp.max_half_open are already there
 * (then false, counted in HalfOpenRefused).  sdp_half_open_done() ends it.
 */
bool sdp_half_open_start(struct sdp_sock *child)
{
	struct net *net = sock_net(&child->sk);
	struct sdp_net *sn = sdp_net(net);

	if (atomic_inc_return(&sn->half_open) > READ_ONCE(sn->max_half_open)) {
		atomic_dec(&sn->half_open);
		SDP_INC_STATS(net, SDP_MIB_HALF_OPEN_REFUSED);
		return false;
	}
	set_bit(SDP_F_HALF_OPEN, &child->flags);
	return true;
}

/* The half-open connection was established, or is gone. */
void sdp_half_open_done(struct sdp_sock *ssk)
{
	if (test_and_clear_bit(SDP_F_HALF_OPEN, &ssk->flags))
		atomic_dec(&sdp_net(sock_net(&ssk->sk))->half_open);
}

/*
 * A passive socket is charged to its listener's memory cgroup: it is
 * made in the CM's kernel thread, whose memcg is not the application's.
 */
void sdp_memcg_inherit(struct sock *sk, const struct sock *parent)
{
#ifdef CONFIG_MEMCG
	if (!sk->sk_memcg && parent->sk_memcg) {
		css_get(&parent->sk_memcg->css);
		sk->sk_memcg = parent->sk_memcg;
	}
#endif
}
