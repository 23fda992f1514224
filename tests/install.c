// SPDX-License-Identifier: GPL-2.0
/*
 * Installation: `make install` into a DESTDIR and `make uninstall`, the
 * man pages as groff and man(1) see them, and the DKMS build check.  Run
 * from the repository directory, after `make`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "net.h"
#include "ops.h"
#include "tap.h"
#include "util.h"

static bool file_exists(const char *root, const char *rel)
{
	char path[512];

	snprintf(path, sizeof(path), "%s%s", root, rel);
	return !access(path, F_OK);
}

/*
 * make install-files DESTDIR=... (the user-space half of `make install`:
 * running kbuild again in the emulated guest would take minutes) lays out
 * every file but sdp.ko, which DKMS or install-module installs, and make
 * uninstall removes them all.
 */
static void test_make_install_destdir(void)
{
	static const char *const files[] = {
		"/usr/local/include/linux/sdp.h",
		"/usr/local/include/linux/sdp_diag.h",
		"/usr/local/sbin/sdpstat",
		"/usr/local/share/man/man7/sdp.7",
		"/usr/local/share/man/man8/sdpstat.8",
		"/usr/local/share/doc/sdp/sdp.rst",
		"/usr/local/share/doc/sdp/examples/modprobe.d/sdp.conf",
		"/usr/local/share/doc/sdp/examples/systemd/sdp-service.conf",
		"/usr/local/lib/udev/rules.d/60-sdp.rules",
		"/etc/sysctl.d/60-sdp.conf",
	};
	char root[] = "/var/tmp/sdp-install.XXXXXX", cmd[512], mod[256],
	     rel[128], *out;
	struct stat st;
	size_t i;
	int status;

	CHECK(mkdtemp(root), "mkdtemp");
	CHECK_OK(read_file("/proc/sys/kernel/osrelease", rel, sizeof(rel)));
	snprintf(cmd, sizeof(cmd), "make -s install-files DESTDIR=%s 2>&1", root);
	out = run_capture(cmd, &status);
	CHECK(status == 0, "make install failed:\n%s", out);
	free(out);
	snprintf(mod, sizeof(mod), "/lib/modules/%s/extra/sdp.ko", rel);
	CHECK(!file_exists(root, mod), "install-files installed %s", mod);
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		CHECK(file_exists(root, files[i]), "no %s", files[i]);
	snprintf(cmd, sizeof(cmd), "%s/usr/local/sbin/sdpstat", root);
	CHECK_OK(stat(cmd, &st));
	CHECK((st.st_mode & 0777) == 0755, "sdpstat mode %o", st.st_mode);

	snprintf(cmd, sizeof(cmd), "make -s uninstall DESTDIR=%s 2>&1", root);
	out = run_capture(cmd, &status);
	CHECK(status == 0, "make uninstall failed:\n%s", out);
	free(out);
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		CHECK(!file_exists(root, files[i]), "%s left", files[i]);
	snprintf(cmd, sizeof(cmd), "find %s -type f | wc -l", root);
	out = run_capture(cmd, &status);
	CHECK(atoi(out) == 0, "files left after uninstall: %s", out);
	free(out);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	CHECK(system(cmd) == 0, "rm");
}

/*
 * sdp_run built for the default prefix (/usr/local) and installed with
 * PREFIX=/usr, in the library directory of a distribution
 * (/usr/lib/<multiarch>) or in /usr/lib, finds the libsdp.so installed
 * with it.
 */
static void test_sdp_run_finds_installed_library(void)
{
	static const char *const libdirs[] = { "/usr/lib/x86_64-linux-gnu",
					       "/usr/lib" };
	char root[] = "/var/tmp/sdp-install.XXXXXX", cmd[768], want[512],
	     *out;
	size_t i;
	int status;

	CHECK(!access("libsdp/sdp_run", X_OK), "libsdp/sdp_run not built");
	CHECK(mkdtemp(root), "mkdtemp");
	for (i = 0; i < sizeof(libdirs) / sizeof(libdirs[0]); i++) {
		snprintf(cmd, sizeof(cmd),
			 "rm -rf %s/* && make -s install-files DESTDIR=%s PREFIX=/usr LIBDIR=%s 2>&1",
			 root, root, libdirs[i]);
		out = run_capture(cmd, &status);
		CHECK(status == 0, "make install-files failed:\n%s", out);
		free(out);
		snprintf(cmd, sizeof(cmd),
			 "%s/usr/bin/sdp_run -r libsdp/libsdp.conf printenv LD_PRELOAD 2>&1",
			 root);
		out = run_capture(cmd, &status);
		snprintf(want, sizeof(want), "%s%s/libsdp.so\n", root,
			 libdirs[i]);
		CHECK(status == 0 && !strcmp(out, want),
		      "sdp_run in %s/usr/bin preloads '%s', not %s", root, out,
		      want);
		free(out);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	CHECK(system(cmd) == 0, "rm");
}

/* The man pages are valid man(7) roff: groff has nothing to warn about. */
static void test_man_pages_render(void)
{
	static const char *const pages[] = { "man/sdp.7", "man/sdpstat.8" };
	char cmd[256], *out;
	size_t i;
	int status;

	if (system("command -v groff > /dev/null 2>&1"))
		tap_skip("no groff");
	for (i = 0; i < sizeof(pages) / sizeof(pages[0]); i++) {
		CHECK(!access(pages[i], R_OK), "no %s", pages[i]);
		snprintf(cmd, sizeof(cmd),
			 "groff -man -ww -z -rCHECKSTYLE=3 %s 2>&1", pages[i]);
		out = run_capture(cmd, &status);
		CHECK(status == 0 && !out[0], "%s: groff says:\n%s", pages[i],
		      out);
		free(out);
		snprintf(cmd, sizeof(cmd),
			 "MANWIDTH=80 man -l %s 2>&1 | grep -c -E '^(NAME|SYNOPSIS|DESCRIPTION|SEE ALSO)$'",
			 pages[i]);
		out = run_capture(cmd, &status);
		CHECK(atoi(out) == 4, "%s lacks standard sections (%s)",
		      pages[i], out);
		free(out);
	}
}

/* DKMS: kernels without the RDMA CM, or older than 5.10, are refused. */
static void test_dkms_refuses_without_rdma_cm(void)
{
	char dir[] = "/var/tmp/sdp-dkms.XXXXXX", path[256], cmd[512], *out;
	FILE *f;
	int status;

	out = run_capture("cat dkms.conf", &status);
	CHECK(status == 0, "no dkms.conf");
	CHECK(find_line(out, "BUILD_EXCLUSIVE_CONFIG=", "CONFIG_INFINIBAND_ADDR_TRANS"),
	      "dkms.conf does not require CONFIG_INFINIBAND_ADDR_TRANS");
	CHECK(find_line(out, "PRE_BUILD=\"scripts/dkms-check", NULL),
	      "dkms.conf has no PRE_BUILD check");
	free(out);

	CHECK(mkdtemp(dir), "mkdtemp");
	snprintf(path, sizeof(path), "%s/.config", dir);
	f = fopen(path, "we");
	CHECK(f, "%s", path);
	fputs("CONFIG_MODULES=y\nCONFIG_INFINIBAND=m\n# CONFIG_INFINIBAND_ADDR_TRANS is not set\n", f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "scripts/dkms-check 6.1.0-1-amd64 %s 2>&1", dir);
	out = run_capture(cmd, &status);
	CHECK(status != 0 && strstr(out, "INFINIBAND_ADDR_TRANS"),
	      "kernel without the RDMA CM accepted: %d %s", status, out);
	free(out);

	f = fopen(path, "we");
	CHECK(f, "%s", path);
	fputs("CONFIG_MODULES=y\nCONFIG_INFINIBAND=m\nCONFIG_INFINIBAND_ADDR_TRANS=y\n", f);
	fclose(f);
	out = run_capture(cmd, &status);
	CHECK(status == 0, "kernel with the RDMA CM refused: %s", out);
	free(out);
	snprintf(cmd, sizeof(cmd), "scripts/dkms-check 5.4.0-1-amd64 %s 2>&1", dir);
	out = run_capture(cmd, &status);
	CHECK(status != 0 && strstr(out, "5.10"), "5.4 accepted: %s", out);
	free(out);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0, "rm");
}

static const struct tap_test tests[] = {
	TAP_TEST(test_make_install_destdir),
	TAP_TEST(test_sdp_run_finds_installed_library),
	TAP_TEST(test_man_pages_render),
	TAP_TEST(test_dkms_refuses_without_rdma_cm),
};

TAP_MAIN(tests)
