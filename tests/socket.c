// SPDX-License-Identifier: GPL-2.0
/*
 * socket(): the SDP family, its types and protocols, and the behaviour of
 * a socket that has no connection.
 */
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/sdp.h>
#include <linux/seccomp.h>

#include "tap.h"
#include "util.h"

static int sdp_socket(int type, int protocol)
{
	return socket(AF_INET_SDP, type, protocol);
}

static int sockopt_int(int fd, int level, int name)
{
	socklen_t len = sizeof(int);
	int v = -1;

	CHECK_OK(getsockopt(fd, level, name, &v, &len));
	CHECK(len == sizeof(int), "optlen %u", len);
	return v;
}

/* The family is registered: it shows in /proc/net/protocols too. */
static void test_family_registered(void)
{
	char line[256];
	bool found = false;
	FILE *f;

	CHECK_OK(sdp_ensure_loaded());
	f = fopen("/proc/net/protocols", "re");
	CHECK(f, "/proc/net/protocols: %s", strerror(errno));
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "SDP ", 4))
			found = true;
	fclose(f);
	CHECK(found, "no SDP line in /proc/net/protocols");
}

static void test_stream_default_protocol(void)
{
	int fd = CHECK_OK(sdp_socket(SOCK_STREAM, 0));

	CHECK(sockopt_int(fd, SOL_SOCKET, SO_DOMAIN) == AF_INET_SDP, "domain");
	CHECK(sockopt_int(fd, SOL_SOCKET, SO_TYPE) == SOCK_STREAM, "type");
	CHECK(sockopt_int(fd, SOL_SOCKET, SO_PROTOCOL) == IPPROTO_TCP,
	      "protocol");
	close(fd);
}

static void test_stream_tcp_protocol(void)
{
	int fd = CHECK_OK(sdp_socket(SOCK_STREAM, IPPROTO_TCP));

	CHECK(sockopt_int(fd, SOL_SOCKET, SO_PROTOCOL) == IPPROTO_TCP,
	      "protocol");
	close(fd);
}

/* Other types fail like a family without that type: ESOCKTNOSUPPORT. */
static void test_other_types_refused(void)
{
	static const int types[] = { SOCK_DGRAM, SOCK_SEQPACKET, SOCK_RAW,
				     SOCK_RDM };
	size_t i;

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		CHECK_ERRNO(sdp_socket(types[i], 0), ESOCKTNOSUPPORT);
		CHECK_ERRNO(sdp_socket(types[i], IPPROTO_TCP), ESOCKTNOSUPPORT);
	}
}

/* A protocol other than 0 or TCP fails like AF_INET does: EPROTONOSUPPORT. */
static void test_other_protocols_refused(void)
{
	static const int protos[] = { IPPROTO_UDP, IPPROTO_ICMP, IPPROTO_SCTP,
				      IPPROTO_MPTCP, IPPROTO_RAW };
	size_t i;

	for (i = 0; i < sizeof(protos) / sizeof(protos[0]); i++)
		CHECK_ERRNO(sdp_socket(SOCK_STREAM, protos[i]), EPROTONOSUPPORT);
	/*
	 * The reference: TCP's family answers the same for protocols it has
	 * no stream implementation of (SCTP and MPTCP it may have).
	 */
	CHECK_ERRNO(socket(AF_INET, SOCK_STREAM, IPPROTO_UDP), EPROTONOSUPPORT);
	CHECK_ERRNO(socket(AF_INET, SOCK_STREAM, IPPROTO_ICMP), EPROTONOSUPPORT);
}

static void test_type_flags(void)
{
	int fd = CHECK_OK(sdp_socket(SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
				     0));

	CHECK(fcntl(fd, F_GETFL) & O_NONBLOCK, "O_NONBLOCK not set");
	CHECK(fcntl(fd, F_GETFD) & FD_CLOEXEC, "FD_CLOEXEC not set");
	close(fd);
}

/*
 * Calls that need a connection fail on an unconnected socket exactly as
 * they do on an unconnected TCP socket (the reference, run side by side).
 */
static void test_unconnected_ops_like_tcp(void)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	char buf[16] = "x";
	int fds[2], i;

	fds[0] = CHECK_OK(sdp_socket(SOCK_STREAM, 0));
	fds[1] = CHECK_OK(socket(AF_INET, SOCK_STREAM, 0));
	for (i = 0; i < 2; i++) {
		int fd = fds[i];

		CHECK_ERRNO(send(fd, buf, 1, MSG_NOSIGNAL), EPIPE);
		CHECK_ERRNO(recv(fd, buf, sizeof(buf), MSG_DONTWAIT), ENOTCONN);
		CHECK_ERRNO(shutdown(fd, SHUT_WR), ENOTCONN);
		len = sizeof(ss);
		CHECK_ERRNO(getpeername(fd, (struct sockaddr *)&ss, &len),
			    ENOTCONN);
		CHECK_ERRNO(accept(fd, NULL, NULL), EINVAL);
		len = sizeof(ss);
		CHECK_OK(getsockname(fd, (struct sockaddr *)&ss, &len));
		CHECK(len == sizeof(*sin) && sin->sin_family == AF_INET &&
		      sin->sin_port == 0 && sin->sin_addr.s_addr == 0,
		      "unbound getsockname: family %d len %u", sin->sin_family,
		      len);
		close(fd);
	}
}

/* socketpair() is not something a stream-over-the-network family does. */
static void test_socketpair_unsupported(void)
{
	int sv[2];

	CHECK_ERRNO(socketpair(AF_INET_SDP, SOCK_STREAM, 0, sv), EOPNOTSUPP);
}

/*
 * Unknown SOL_SDP options fail, SDP_ZCOPY_THRESH works (tests/zcopy.c
 * has the rest); TCP's options that SDP does not have fail (tests/stream.c
 * checks those it has against TCP).
 */
static void test_sockopt_levels(void)
{
	int fd = CHECK_OK(sdp_socket(SOCK_STREAM, 0));
	socklen_t len = sizeof(int);
	int one = 1, v;

	CHECK_ERRNO(setsockopt(fd, SOL_SDP, 15, &one, sizeof(one)), ENOPROTOOPT);
	CHECK_ERRNO(getsockopt(fd, SOL_SDP, 15, &v, &len), ENOPROTOOPT);
	CHECK_OK(setsockopt(fd, SOL_SDP, SDP_ZCOPY_THRESH, &one, sizeof(one)));
	CHECK(sockopt_int(fd, SOL_SDP, SDP_ZCOPY_THRESH) == 1,
	      "SDP_ZCOPY_THRESH");
	/* TCP_REPAIR has no meaning without TCP sequence numbers. */
	CHECK_ERRNO(setsockopt(fd, IPPROTO_TCP, TCP_REPAIR, &one, sizeof(one)),
		    ENOPROTOOPT);
	/* A TCP option SDP keeps is checked as TCP checks it. */
	CHECK_ERRNO(setsockopt(fd, IPPROTO_TCP, TCP_MAXSEG, &one, sizeof(one)),
		    EINVAL);
	CHECK_OK(setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)));
	CHECK(sockopt_int(fd, IPPROTO_TCP, TCP_NODELAY) == 1, "TCP_NODELAY");
	/* SOL_SOCKET options are generic and work. */
	CHECK_OK(setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one)));
	CHECK(sockopt_int(fd, SOL_SOCKET, SO_KEEPALIVE) == 1, "SO_KEEPALIVE");
	close(fd);
}

/* poll() on an unconnected socket returns at once, as TCP's does. */
static void test_poll_unconnected(void)
{
	struct pollfd p;
	int fd = CHECK_OK(sdp_socket(SOCK_STREAM, 0));
	int tcp = CHECK_OK(socket(AF_INET, SOCK_STREAM, 0));

	p = (struct pollfd){ .fd = fd, .events = POLLIN | POLLOUT };
	CHECK(poll(&p, 1, 1000) == 1, "poll did not return the socket");
	CHECK(p.revents & POLLHUP, "revents %#x", p.revents);
	CHECK(!(p.revents & POLLIN), "revents %#x", p.revents);

	/* Same bits as a fresh TCP socket. */
	{
		struct pollfd q = { .fd = tcp, .events = POLLIN | POLLOUT };

		CHECK(poll(&q, 1, 0) == 1, "tcp poll");
		CHECK(q.revents == p.revents, "sdp %#x tcp %#x", p.revents,
		      q.revents);
	}
	close(tcp);
	close(fd);
}

/* Every socket is listed in /proc/net/sdp until it is closed. */
static void test_proc_net_sdp_lists_sockets(void)
{
	int before = proc_net_sdp_count();
	int fd[3], i;
	struct stat st;

	CHECK(before >= 0, "cannot read /proc/net/sdp");
	for (i = 0; i < 3; i++)
		fd[i] = CHECK_OK(sdp_socket(SOCK_STREAM, 0));
	CHECK(proc_net_sdp_count() == before + 3, "count %d, want %d",
	      proc_net_sdp_count(), before + 3);
	for (i = 0; i < 3; i++) {
		CHECK_OK(fstat(fd[i], &st));
		CHECK(proc_net_sdp_has_inode(st.st_ino), "inode %lu missing",
		      (unsigned long)st.st_ino);
	}
	for (i = 0; i < 3; i++)
		close(fd[i]);
	CHECK(proc_net_sdp_count() == before, "count %d after close, want %d",
	      proc_net_sdp_count(), before);
	CHECK(!proc_net_sdp_has_inode(st.st_ino), "closed socket still listed");
}

/* Many sockets opened and closed: nothing accumulates. */
static void test_many_sockets(void)
{
	int before = proc_net_sdp_count();
	int fds[256], i;

	for (i = 0; i < 256; i++)
		fds[i] = CHECK_OK(sdp_socket(SOCK_STREAM, 0));
	CHECK(proc_net_sdp_count() == before + 256, "count %d",
	      proc_net_sdp_count());
	for (i = 0; i < 256; i++)
		close(fds[i]);
	CHECK(proc_net_sdp_count() == before, "count %d", proc_net_sdp_count());
}

/*
 * The filter systemd's RestrictAddressFamilies= installs for a list
 * without AF_IB (glibc's and systemd's name for 27): socket() of that
 * family fails with EAFNOSUPPORT.
 */
static int seccomp_deny_family(int family)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, family, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EAFNOSUPPORT),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]),
				   .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

/*
 * A process sandboxed as systemd's RestrictAddressFamilies= does, without
 * AF_IB, cannot make an SDP socket (EAFNOSUPPORT) and still makes TCP
 * ones; one allowed AF_IB can.  The policy is the caller's: nothing in the
 * module gets around it.
 */
static void test_seccomp_restricts_family(void)
{
	int status, fd;
	pid_t pid = fork();

	CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		if (seccomp_deny_family(AF_INET_SDP))
			_exit(2);
		fd = socket(AF_INET_SDP, SOCK_STREAM, 0);
		if (fd >= 0 || errno != EAFNOSUPPORT)
			_exit(3);
		fd = socket(AF_INET, SOCK_STREAM, 0);
		_exit(fd >= 0 ? 0 : 4);
	}
	CHECK(waitpid(pid, &status, 0) == pid, "waitpid: %s", strerror(errno));
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "sandboxed child: %s",
	      WEXITSTATUS(status) == 2 ? "no seccomp filter" :
	      WEXITSTATUS(status) == 3 ? "socket(27) was not refused" :
	      WEXITSTATUS(status) == 4 ? "socket(AF_INET) was refused" :
					 "failed");
	fd = socket(AF_INET_SDP, SOCK_STREAM, 0);
	CHECK(fd >= 0, "socket(AF_INET_SDP) outside the sandbox: %s",
	      strerror(errno));
	close(fd);
}

static const struct tap_test tests[] = {
	TAP_TEST(test_family_registered),
	TAP_TEST(test_stream_default_protocol),
	TAP_TEST(test_stream_tcp_protocol),
	TAP_TEST(test_other_types_refused),
	TAP_TEST(test_other_protocols_refused),
	TAP_TEST(test_type_flags),
	TAP_TEST(test_unconnected_ops_like_tcp),
	TAP_TEST(test_socketpair_unsupported),
	TAP_TEST(test_sockopt_levels),
	TAP_TEST(test_poll_unconnected),
	TAP_TEST(test_proc_net_sdp_lists_sockets),
	TAP_TEST(test_many_sockets),
	TAP_TEST(test_seccomp_restricts_family),
};

TAP_MAIN(tests)
