/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets Direct Protocol -- memory: what connections charge to their
 * namespace and cgroup, and the half-open bound (sdp_mem.c).
 *
 * Copyright (C) 2026 The SDP for Linux authors
 */
#ifndef _SDP_MEM_H
#define _SDP_MEM_H

#include <linux/sched/mm.h>
#include <net/sock.h>

struct sdp_net;
struct sdp_sock;

void sdp_mem_net_init(struct sdp_net *sn);
bool sdp_mem_under_pressure(const struct net *net);
int sdp_mem_charge(struct sdp_sock *ssk, unsigned int bufs, u32 size,
		   bool force);
void sdp_mem_uncharge(struct sdp_sock *ssk, unsigned int bufs, u32 size);
void sdp_mem_uncharge_all(struct sdp_sock *ssk);
void sdp_mem_ring_bufs(const struct sock *sk, unsigned int *rx,
		       unsigned int *tx);
bool sdp_half_open_start(struct sdp_sock *child);
void sdp_half_open_done(struct sdp_sock *ssk);
void sdp_memcg_inherit(struct sock *sk, const struct sock *parent);

/* Allocations from here on are charged to @sk's memory cgroup. */
static inline struct mem_cgroup *sdp_memcg_enter(struct sock *sk)
{
	return set_active_memcg(sk->sk_memcg);
}

static inline void sdp_memcg_leave(struct mem_cgroup *old)
{
	set_active_memcg(old);
}

#endif /* _SDP_MEM_H */
