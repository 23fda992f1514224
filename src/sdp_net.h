/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets Direct Protocol -- SDP's state in a network namespace: the
 * counters' per-CPU storage (filled by sdp_stats.c), the net.sdp sysctls
 * (listed in sdp_sysctls.h, registered by sdp_sysctl.c) and the memory
 * accounting (sdp_mem.c), and the accessors the rest of the module reads
 * the sysctls through.
 *
 * Copyright (C) 2026 The SDP for Linux authors
 */
#ifndef _SDP_NET_H
#define _SDP_NET_H

#include <linux/atomic.h>
#include <linux/compiler.h>
#include <linux/jiffies.h>
#include <linux/types.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>

#include "sdp_resume.h"

struct ctl_table;
struct ctl_table_header;
struct sdp_mib;
struct sdp_fb_cache;

/**
 * struct sdp_net - SDP's state in one network namespace
 * @mib: per-CPU counters
 * @sysctl_hdr: the registered /proc/sys/net/sdp table
 * @sysctl_table: its copy for this namespace
 * @recv_poll: net.sdp.recv_poll, microseconds
 * @fin_timeout: net.sdp.fin_timeout, seconds
 * @resolve_timeout_ms: net.sdp.resolve_timeout_ms
 * @zcopy_thresh: net.sdp.zcopy_thresh, bytes (0: no zero-copy)
 * @mem: net.sdp.mem, pages: min, pressure, max (sdp_mem.c)
 * @max_half_open: net.sdp.max_half_open
 * @rx_init_bufs: net.sdp.rx_init_bufs
 * @tx_idle_ms: net.sdp.tx_idle_ms (0: send buffers kept)
 * @rx_idle_ms: net.sdp.rx_idle_ms (0: a receive ring that grew stays)
 * @tcp_fallback: net.sdp.tcp_fallback (1: a connect() that cannot be
 *	made over SDP goes on over TCP, sdp_fallback.c)
 * @tcp_fallback_cache_s: net.sdp.tcp_fallback_cache_s, seconds a
 *	destination stays in the negative cache (0: no cache)
 * @tcp_fallback_timeout_ms: net.sdp.tcp_fallback_timeout_ms, how long an
 *	SDP attempt with fallback on may take (0: as long as the CM tries)
 * @fb_cache: the negative cache of fallbacks (sdp_fb_cache.c)
 * @mem_pages: pages of connection buffers held in the namespace
 * @half_open: passive connections not yet established
 * @mem_pressure: under memory pressure (between @mem[1] and @mem[0])
 *
 * The sysctl values are written by proc_do*vec_minmax(); readers use
 * READ_ONCE() (through the sdp_sysctl_*() accessors).
 */
struct sdp_net {
	struct sdp_mib __percpu *mib;
	struct ctl_table_header *sysctl_hdr;
	struct ctl_table *sysctl_table;
	int recv_poll;
	int fin_timeout;
	int resolve_timeout_ms;
	int zcopy_thresh;
	unsigned long mem[3];
	int max_half_open;
	int rx_init_bufs;
	int tx_idle_ms;
	int rx_idle_ms;
	int tcp_fallback;
	int tcp_fallback_cache_s;
	int tcp_fallback_timeout_ms;
	int netfilter;
	int resume;
	int resume_port;
	struct sdp_fb_cache *fb_cache;
	struct sdp_rsm_net rsm;
	atomic_long_t mem_pages;
	atomic_t half_open;
	bool mem_pressure;
};

/* sdp_net.c */
extern unsigned int sdp_net_id;
int sdp_net_register(void);
void sdp_net_unregister(void);

static inline struct sdp_net *sdp_net(const struct net *net)
{
	return net_generic(net, sdp_net_id);
}

/* sdp_sysctl.c: /proc/sys/net/sdp and the defaults it starts from */
int sdp_sysctl_net_init(struct net *net, struct sdp_net *sn);
void sdp_sysctl_net_exit(struct sdp_net *sn);

static inline bool sdp_sysctl_tcp_fallback(const struct net *net)
{
	return READ_ONCE(sdp_net(net)->tcp_fallback);
}

static inline unsigned long sdp_sysctl_tcp_fallback_cache(const struct net *net)
{
	return READ_ONCE(sdp_net(net)->tcp_fallback_cache_s) * HZ;
}

static inline unsigned int sdp_sysctl_tcp_fallback_timeout_ms(const struct net *net)
{
	return READ_ONCE(sdp_net(net)->tcp_fallback_timeout_ms);
}

static inline bool sdp_sysctl_resume(const struct net *net)
{
	return READ_ONCE(sdp_net(net)->resume);
}

static inline u16 sdp_sysctl_resume_port(const struct net *net)
{
	return READ_ONCE(sdp_net(net)->resume_port);
}

static inline bool sdp_sysctl_netfilter(const struct net *net)
{
	return READ_ONCE(sdp_net(net)->netfilter);
}

static inline unsigned int sdp_sysctl_recv_poll(const struct net *net)
{
	return READ_ONCE(sdp_net(net)->recv_poll);
}

static inline unsigned long sdp_sysctl_fin_timeout(const struct net *net)
{
	return READ_ONCE(sdp_net(net)->fin_timeout) * HZ;
}

static inline unsigned int sdp_sysctl_rx_init_bufs(const struct net *net)
{
	return READ_ONCE(sdp_net(net)->rx_init_bufs);
}

/* net.sdp.tx_idle_ms in jiffies, 0 for never. */
static inline unsigned long sdp_sysctl_tx_idle(const struct net *net)
{
	return msecs_to_jiffies(READ_ONCE(sdp_net(net)->tx_idle_ms));
}

/* net.sdp.rx_idle_ms in jiffies, 0 for never. */
static inline unsigned long sdp_sysctl_rx_idle(const struct net *net)
{
	return msecs_to_jiffies(READ_ONCE(sdp_net(net)->rx_idle_ms));
}

static inline int sdp_sysctl_resolve_timeout_ms(const struct net *net)
{
	return READ_ONCE(sdp_net(net)->resolve_timeout_ms);
}

/* Smallest send that goes zero-copy; 0: zero-copy is off. */
static inline unsigned int sdp_sysctl_zcopy_thresh(const struct net *net)
{
	return READ_ONCE(sdp_net(net)->zcopy_thresh);
}

#endif /* _SDP_NET_H */
