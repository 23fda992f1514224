/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets Direct Protocol -- zero-copy transfers: SrcAvail and RDMA Read
 * between user buffers.  sdp_zc_mr.c has the pages of a transfer, the
 * registration MR and its invalidation, and the transfers' lifetime;
 * sdp_zc_tx.c the send side (blocking, MSG_ZEROCOPY); sdp_zc_splice.c
 * pages spliced to the socket; sdp_zc_rx.c the receive side.
 *
 * Copyright (C) 2026 The SDP for Linux authors
 */
#ifndef _SDP_ZC_H
#define _SDP_ZC_H

#include <linux/dma-direction.h>
#include <linux/scatterlist.h>
#include <linux/types.h>

struct ib_cq;
struct ib_device;
struct ib_mr;
struct ib_wc;
struct iov_iter;
struct mm_struct;
struct msghdr;
struct page;
struct sk_buff;
struct sock;
struct sdp_buf;
struct sdp_sock;

#define SDP_ZC_MAX_BYTES	(1024 * 1024)
/* Pages of the largest transfer: SDP_ZC_MAX_BYTES at any page offset. */
#define SDP_ZC_MAX_PAGES	(SDP_ZC_MAX_BYTES / PAGE_SIZE + 1)
/* A peer must answer SrcAvailCancel within this, or is aborted. */
#define SDP_ZC_ANSWER_TIMEOUT	(10 * HZ)

/**
 * struct sdp_zc_pages - user pages pinned for one zero-copy transfer
 * @pages: the pinned pages
 * @npages: how many
 * @sgt: their scatterlist, covering exactly the transfer's bytes
 * @dev: device the scatterlist is DMA-mapped for, or NULL (unmapped)
 * @nents: mapped entries
 * @dir: DMA direction
 * @mm: whose pinned_vm they are charged to
 */
struct sdp_zc_pages {
	struct page **pages;
	unsigned long npages;
	struct sg_table sgt;
	struct ib_device *dev;
	int nents;
	enum dma_data_direction dir;
	struct mm_struct *mm;
};

/* sdp_zc_mr.c: what the other files call */
void sdp_zc_init(struct sdp_sock *ssk);
void sdp_zc_conn_free(struct sdp_sock *ssk);
void sdp_zc_sq_progress(struct sdp_sock *ssk);

/* sdp_zc_tx.c */
bool sdp_zc_eligible(struct sock *sk, struct msghdr *msg, long timeo);
size_t sdp_zc_send(struct sock *sk, struct msghdr *msg, long *timeo,
		   bool *fallback, int *err);
size_t sdp_zc_send_async(struct sock *sk, struct msghdr *msg,
			 struct sk_buff **note);
unsigned long sdp_zc_async_run(struct sdp_sock *ssk);
u32 sdp_zc_unsent(const struct sdp_sock *ssk);
void sdp_zc_tx_sent(struct sdp_sock *ssk);

/* sdp_zc_splice.c */
bool sdp_zc_gathering(struct sdp_sock *ssk);
size_t sdp_zc_splice(struct sock *sk, struct iov_iter *from, bool more);
void sdp_zc_gather_seal(struct sdp_sock *ssk);

/* sdp_zc_rx.c */
int sdp_zc_recv(struct sock *sk, struct msghdr *msg, struct sdp_buf *b,
		size_t len, int flags);
bool sdp_zc_rx_msg(struct sdp_sock *ssk, struct sdp_buf *b, u32 payload);
bool sdp_zc_rx_inv(struct sdp_sock *ssk, struct sdp_buf *b, u32 byte_len,
		   u32 rkey);
void sdp_zc_tx_control(struct sdp_sock *ssk);
void sdp_zc_rd_chain_done(struct sdp_sock *ssk, struct ib_wc *wc);

/* Between the three files only. */
/* sdp_zc_mr.c: pages, registration, invalidation, lifetime */
int sdp_zc_pin(struct sdp_zc_pages *zp, unsigned long base, size_t len,
	       enum dma_data_direction dir);
void sdp_zc_unpin(struct sdp_zc_pages *zp);
void sdp_zc_count_fallback_locked(struct sdp_sock *ssk);
void sdp_zc_count_fallback(struct sdp_sock *ssk);
void sdp_zc_wait_bit(struct sock *sk, int bit, unsigned long *word);
void sdp_zc_put(struct sdp_sock *ssk);
u32 sdp_zc_mr_pages(const struct sdp_sock *ssk);
struct ib_mr *sdp_zc_mr(struct sdp_sock *ssk);
int sdp_zc_map(struct sdp_sock *ssk, struct sdp_zc_pages *zp,
	       struct ib_mr *mr);
bool sdp_zc_sq_acked(const struct sdp_sock *ssk);
int sdp_zc_inv_post(struct sdp_sock *ssk);
void sdp_zc_inv_check(struct sdp_sock *ssk, int err);
void sdp_zc_invalidate(struct sock *sk);

/* sdp_zc_rx.c: the RDMA read's completion handler (sdp_zc_init()) */
void sdp_zc_rd_done(struct ib_cq *cq, struct ib_wc *wc);

#endif /* _SDP_ZC_H */
