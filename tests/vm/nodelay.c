// SPDX-License-Identifier: GPL-2.0
/*
 * tests/vm/nodelay.c: preloaded into the two QEMUs of tests/vm/wire
 * (tests/bin/nodelay.so).
 *
 * QEMU's socket netdev carries the wire's Ethernet frames over a TCP
 * connection on the host's loopback, one write per frame, and leaves
 * Nagle's algorithm on.  A second small frame in the same direction then
 * waits until the first one is acknowledged, and the host delays that
 * acknowledgement by up to 40 ms unless a frame goes the other way first.
 * TCP between the guests rarely sends two frames in a row and hardly
 * notices; RDMA does all the time (an RC ACK, then the reply), and its
 * round trip took 44 ms, for raw verbs as for SDP.  A real wire has no
 * such delay: every TCP socket QEMU connects or accepts gets TCP_NODELAY.
 */
#include <dlfcn.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

static void nodelay(int fd)
{
	int one = 1, saved = errno;

	/* Fails, harmlessly, on a socket that is not TCP. */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	errno = saved;
}

int connect(int fd, const struct sockaddr *sa, socklen_t len)
{
	static int (*real)(int, const struct sockaddr *, socklen_t);

	if (!real)
		real = (int (*)(int, const struct sockaddr *, socklen_t))
			dlsym(RTLD_NEXT, "connect");
	if (sa && (sa->sa_family == AF_INET || sa->sa_family == AF_INET6))
		nodelay(fd);
	return real(fd, sa, len);
}

int accept4(int fd, struct sockaddr *sa, socklen_t *len, int flags)
{
	static int (*real)(int, struct sockaddr *, socklen_t *, int);
	int ret;

	if (!real)
		real = (int (*)(int, struct sockaddr *, socklen_t *, int))
			dlsym(RTLD_NEXT, "accept4");
	ret = real(fd, sa, len, flags);
	if (ret >= 0)
		nodelay(ret);
	return ret;
}

int accept(int fd, struct sockaddr *sa, socklen_t *len)
{
	return accept4(fd, sa, len, 0);
}
