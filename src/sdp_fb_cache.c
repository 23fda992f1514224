// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol -- in-kernel fallback to TCP: the negative
 * cache (the fallback itself is in sdp_fallback.c).
 *
 * Copyright (C) 2026 The SDP for Linux authors
 *
 * The negative cache: destinations (address and port) a connect() fell
 * back to TCP for, so that the next connect() to one goes to TCP at once
 * (SDP_FB_CACHED) instead of waiting for the SDP attempt to fail again.
 * One per network namespace, net.sdp.tcp_fallback_cache_s long (0: off),
 * at most SDP_FB_CACHE_SIZE: when full, the oldest entry goes.  Listed
 * in /proc/net/sdp_fallback.
 */
#include <linux/mm.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/spinlock.h>
#include <net/net_namespace.h>

#include "sdp.h"
#include "sdp_fallback.h"
#include "sdp_net.h"

#define SDP_FB_CACHE_SIZE	256

/**
 * struct sdp_fb_dest - one destination of the negative cache
 * @expires: jiffies when it goes (never 0); 0: a free slot
 * @family: AF_INET or AF_INET6
 * @reason: enum sdp_fallback_reason of the fallback that put it here
 * @port: the destination port
 * @addr: the destination address (4 bytes for IPv4)
 */
struct sdp_fb_dest {
	unsigned long expires;
	u8 family;
	u8 reason;
	__be16 port;
	u8 addr[16];
};

/**
 * struct sdp_fb_cache - a namespace's negative cache
 * @lock: protects the rest
 * @next: the slot taken next when none is free (round robin: the oldest)
 * @d: the destinations
 */
struct sdp_fb_cache {
	spinlock_t lock;	/* protects next and d */
	unsigned int next;
	struct sdp_fb_dest d[SDP_FB_CACHE_SIZE];
};

/* @ss as a cache key in @k (expires, reason left alone). */
static void sdp_fb_key(const struct sockaddr_storage *ss,
		       struct sdp_fb_dest *k)
{
	memset(k->addr, 0, sizeof(k->addr));
	k->family = ss->ss_family;
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)ss;

		memcpy(k->addr, &sin->sin_addr, sizeof(sin->sin_addr));
		k->port = sin->sin_port;
	} else {
		const struct sockaddr_in6 *sin6 =
			(const struct sockaddr_in6 *)ss;

		memcpy(k->addr, &sin6->sin6_addr, sizeof(sin6->sin6_addr));
		k->port = sin6->sin6_port;
	}
}

static bool sdp_fb_dest_live(const struct sdp_fb_dest *d)
{
	return d->expires && time_before(jiffies, d->expires);
}

/* The live entry for @k, or NULL.  cache->lock held. */
static struct sdp_fb_dest *sdp_fb_find(struct sdp_fb_cache *c,
				       const struct sdp_fb_dest *k)
{
	unsigned int i;

	for (i = 0; i < SDP_FB_CACHE_SIZE; i++) {
		struct sdp_fb_dest *d = &c->d[i];

		if (sdp_fb_dest_live(d) && d->family == k->family &&
		    d->port == k->port && !memcmp(d->addr, k->addr, 16))
			return d;
	}
	return NULL;
}

/* Is @ss a destination a connect() recently fell back to TCP for? */
bool sdp_fb_cached(struct net *net, const struct sockaddr_storage *ss)
{
	struct sdp_fb_cache *c = sdp_net(net)->fb_cache;
	struct sdp_fb_dest k;
	bool hit;

	if (!c || !sdp_sysctl_tcp_fallback_cache(net))
		return false;
	sdp_fb_key(ss, &k);
	spin_lock_bh(&c->lock);
	hit = sdp_fb_find(c, &k);
	spin_unlock_bh(&c->lock);
	return hit;
}

/* A connect() to @ss fell back to TCP for @why: remember it. */
void sdp_fb_cache_add(struct net *net, const struct sockaddr_storage *ss,
		      u8 why)
{
	unsigned long ttl = sdp_sysctl_tcp_fallback_cache(net);
	struct sdp_fb_cache *c = sdp_net(net)->fb_cache;
	struct sdp_fb_dest k, *d;
	unsigned int i;

	if (!c || !ttl)
		return;
	sdp_fb_key(ss, &k);
	spin_lock_bh(&c->lock);
	d = sdp_fb_find(c, &k);
	for (i = 0; !d && i < SDP_FB_CACHE_SIZE; i++)
		if (!sdp_fb_dest_live(&c->d[i]))
			d = &c->d[i];
	if (!d) {
		d = &c->d[c->next];
		c->next = (c->next + 1) % SDP_FB_CACHE_SIZE;
	}
	*d = k;
	d->reason = why;
	d->expires = (jiffies + ttl) | 1;
	spin_unlock_bh(&c->lock);
}

/*
 * The cache sent a connect() to @ss straight to TCP (SDP_FB_CACHED), and
 * TCP failed too: the next connect() tries SDP again.  Any context.
 */
void sdp_fb_cache_forget(struct net *net, const struct sockaddr_storage *ss)
{
	struct sdp_fb_cache *c = sdp_net(net)->fb_cache;
	struct sdp_fb_dest k, *d;

	if (!c)
		return;
	sdp_fb_key(ss, &k);
	spin_lock_bh(&c->lock);
	d = sdp_fb_find(c, &k);
	if (d)
		d->expires = 0;
	spin_unlock_bh(&c->lock);
}

/*
 * Whether a fallback for @why tells every socket of the namespace where
 * SDP is not to be had: what the destination decided (it rejected us, it
 * has no RDMA address or route, no RDMA device reaches it), or an attempt
 * that got no answer within the namespace's own timeout.  Not an attempt
 * that a socket gave up sooner (its SDP_TCP_FALLBACK_TIMEOUT shorter than
 * net.sdp.tcp_fallback_timeout_ms): any user could otherwise send every
 * other user's connections to a working SDP service over TCP.
 */
bool sdp_fb_cacheable(const struct sdp_sock *ssk, enum sdp_fallback_reason why)
{
	switch (why) {
	case SDP_FB_NO_DEVICE:
	case SDP_FB_ADDR_ERROR:
	case SDP_FB_ROUTE_ERROR:
	case SDP_FB_REJECTED:
		return true;
	case SDP_FB_UNREACHABLE:
		return !test_bit(SDP_O_FB_TMO_SET, &ssk->opts) ||
		       ssk->fb.timeout_ms >=
		       sdp_sysctl_tcp_fallback_timeout_ms(sock_net(&ssk->sk));
	default:
		return false;
	}
}

#ifdef CONFIG_PROC_FS
/* /proc/net/sdp_fallback: "address port reason expires_ms" per entry. */
static int sdp_fb_cache_show(struct seq_file *seq, void *v)
{
	struct sdp_fb_cache *c = sdp_net(seq_file_single_net(seq))->fb_cache;
	unsigned int i;

	seq_puts(seq, "address port reason expires_ms\n");
	if (!c)
		return 0;
	spin_lock_bh(&c->lock);
	for (i = 0; i < SDP_FB_CACHE_SIZE; i++) {
		const struct sdp_fb_dest *d = &c->d[i];

		if (!sdp_fb_dest_live(d))
			continue;
		if (d->family == AF_INET)
			seq_printf(seq, "%pI4", d->addr);
		else
			seq_printf(seq, "%pI6c", d->addr);
		seq_printf(seq, " %u %u %u\n", ntohs(d->port), d->reason,
			   jiffies_to_msecs(d->expires - jiffies));
	}
	spin_unlock_bh(&c->lock);
	return 0;
}
#endif

/* A namespace comes: its negative cache and /proc/net/sdp_fallback. */
int sdp_fb_net_init(struct net *net)
{
	struct sdp_fb_cache *c = kvzalloc(sizeof(*c), GFP_KERNEL);

	if (!c)
		return -ENOMEM;
	spin_lock_init(&c->lock);
	sdp_net(net)->fb_cache = c;
#ifdef CONFIG_PROC_FS
	if (!proc_create_net_single("sdp_fallback", 0444, net->proc_net,
				    sdp_fb_cache_show, NULL)) {
		sdp_net(net)->fb_cache = NULL;
		kvfree(c);
		return -ENOMEM;
	}
#endif
	return 0;
}

void sdp_fb_net_exit(struct net *net)
{
#ifdef CONFIG_PROC_FS
	remove_proc_entry("sdp_fallback", net->proc_net);
#endif
	kvfree(sdp_net(net)->fb_cache);
	sdp_net(net)->fb_cache = NULL;
}
