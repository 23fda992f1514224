// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol -- socket layer and module entry points.
 *
 * Copyright (C) 2026 The SDP for Linux authors
 *
 * Implementation notes
 * ====================
 *
 * Files: af_sdp.c (this file) is the socket family: socket(), the
 * proto_ops table, module init/exit.  sdp_dev.c tracks RDMA devices
 * through an ib_client and owns the per-device resources.  sdp_diag.c
 * keeps the list of live sockets and /proc/net/sdp.
 *
 * Lifecycle: sdp_create() allocates the struct sock (one reference, owned
 * by the struct socket) and links it on the diagnostics list.
 * sdp_release() orphans the socket and drops that reference; the socket
 * leaves the diagnostics list in its destructor, when the last reference
 * is gone.
 *
 * Module references: proto_ops::owner pins the module while any struct
 * socket exists, and struct proto::owner while any struct sock exists, so
 * rmmod fails with EWOULDBLOCK ("in use") until the last socket is freed.
 *
 * Lock order (outermost first): sk_lock (lock_sock) -> sdp_sock_list_lock
 * -> sk_callback_lock (read by the /proc listing).  sdp_dev_lock is a
 * leaf.  The list locks are never held across a call that can sleep.
 *
 * Not implemented yet: every operation that needs a connection (bind,
 * connect, listen, accept, data transfer, shutdown, getname) fails with
 * EOPNOTSUPP, and SDP/TCP-level socket options with ENOPROTOOPT.
 */
#include <linux/module.h>
#include <linux/net.h>
#include <linux/poll.h>
#include <net/sock.h>
#include <uapi/linux/sdp.h>

#include "sdp.h"

int sdp_family = AF_INET_SDP;
module_param_named(family, sdp_family, int, 0444);
MODULE_PARM_DESC(family,
		 "address family number to register (default 27, range 1..AF_MAX-1; must be free)");

static struct proto sdp_proto = {
	.name = "SDP",
	.owner = THIS_MODULE,
	.obj_size = sizeof(struct sdp_sock),
};

static void sdp_sock_destruct(struct sock *sk)
{
	sdp_sock_unlink(sdp_sk(sk));
}

static int sdp_release(struct socket *sock)
{
	struct sock *sk = sock->sk;

	if (!sk)
		return 0;

	lock_sock(sk);
	sk->sk_shutdown = SHUTDOWN_MASK;
	sock_orphan(sk);
	release_sock(sk);

	sock->sk = NULL;
	sock_put(sk);
	return 0;
}

/*
 * An unconnected socket reports what an unconnected TCP socket reports:
 * writable (so a writer is not left waiting; the write itself fails) and
 * hung up.
 */
static __poll_t sdp_poll(struct file *file, struct socket *sock,
			 poll_table *wait)
{
	struct sock *sk = sock->sk;
	__poll_t mask = 0;

	sock_poll_wait(file, sock, wait);
	if (sk->sk_state == SDP_CLOSE)
		mask |= EPOLLOUT | EPOLLWRNORM | EPOLLHUP;
	if (sk->sk_err)
		mask |= EPOLLERR;
	return mask;
}

static int sdp_setsockopt(struct socket *sock, int level, int optname,
			  sockptr_t optval, unsigned int optlen)
{
	return -ENOPROTOOPT;
}

static int sdp_getsockopt(struct socket *sock, int level, int optname,
			  char __user *optval, int __user *optlen)
{
	return -ENOPROTOOPT;
}

/*
 * proto_ops::family is informational (the socket core dispatches on
 * net_proto_family and sk_family, which follow the module parameter).
 */
static const struct proto_ops sdp_stream_ops = {
	.family = PF_INET_SDP,
	.owner = THIS_MODULE,
	.release = sdp_release,
	.bind = sock_no_bind,
	.connect = sock_no_connect,
	.socketpair = sock_no_socketpair,
	.accept = sock_no_accept,
	.getname = sock_no_getname,
	.poll = sdp_poll,
	.ioctl = sock_no_ioctl,
	.listen = sock_no_listen,
	.shutdown = sock_no_shutdown,
	.setsockopt = sdp_setsockopt,
	.getsockopt = sdp_getsockopt,
	.sendmsg = sock_no_sendmsg,
	.recvmsg = sock_no_recvmsg,
	.mmap = sock_no_mmap,
	.sendpage = sock_no_sendpage,
};

/*
 * socket(AF_INET_SDP, type, protocol): only byte streams, and only the
 * protocol numbers a TCP program would pass.  The error codes are the
 * ones inet_create() gives for a type it has no protocol for, and for a
 * protocol that does not match the type.
 */
static int sdp_create(struct net *net, struct socket *sock, int protocol,
		      int kern)
{
	struct sock *sk;

	if (sock->type != SOCK_STREAM)
		return -ESOCKTNOSUPPORT;
	if (protocol != 0 && protocol != IPPROTO_TCP)
		return -EPROTONOSUPPORT;

	sk = sk_alloc(net, sdp_family, GFP_KERNEL, &sdp_proto, kern);
	if (!sk)
		return -ENOBUFS;

	sock->state = SS_UNCONNECTED;
	sock->ops = &sdp_stream_ops;
	sock_init_data(sock, sk);
	sk->sk_protocol = IPPROTO_TCP;
	sk->sk_state = SDP_CLOSE;
	sk->sk_destruct = sdp_sock_destruct;
	sdp_sock_link(sdp_sk(sk));
	return 0;
}

static struct net_proto_family sdp_family_ops __ro_after_init = {
	.create = sdp_create,
	.owner = THIS_MODULE,
};

static int __init sdp_init(void)
{
	int err;

	if (sdp_family <= 0 || sdp_family >= NPROTO) {
		pr_err("family=%d is out of range 1..%d\n", sdp_family,
		       NPROTO - 1);
		return -EINVAL;
	}
	sdp_family_ops.family = sdp_family;

	err = proto_register(&sdp_proto, 1);
	if (err)
		return err;

	err = sdp_diag_init();
	if (err)
		goto err_proto;

	err = sdp_dev_init();
	if (err)
		goto err_diag;

	err = sock_register(&sdp_family_ops);
	if (err) {
		if (err == -EEXIST)
			pr_err("address family %d is already registered by another protocol; load with family=N to use a free one\n",
			       sdp_family);
		goto err_dev;
	}

	pr_info("registered address family %d\n", sdp_family);
	return 0;

err_dev:
	sdp_dev_exit();
err_diag:
	sdp_diag_exit();
err_proto:
	proto_unregister(&sdp_proto);
	return err;
}

static void __exit sdp_exit(void)
{
	sock_unregister(sdp_family);
	sdp_dev_exit();
	sdp_diag_exit();
	proto_unregister(&sdp_proto);
}

module_init(sdp_init);
module_exit(sdp_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Sockets Direct Protocol: stream sockets over RDMA");
MODULE_AUTHOR("The SDP for Linux authors");
MODULE_ALIAS_NETPROTO(AF_INET_SDP);
