# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# scripts/host-claim.sh: sourced by scripts/dkms-test and
# scripts/check-packages, the two checks that change this machine (a DKMS
# tree, installed packages).  Before changing anything, a check claims the
# machine by writing a mark: its name and its PID.  The mark goes when the
# check has undone its changes.
#
# A mark left by a check that was killed (a CI job cancelled, a machine
# stopped mid-run) names a PID that is gone: the run that wrote it had
# found no sdp on the machine, so whatever sdp is there now is its, and
# host_recover removes it (host_undo) and goes on.  A mark whose PID is
# alive is another run in progress: host_recover refuses.  State that no
# mark covers (sdp installed by an admin) is left alone: the callers
# refuse to run over it.

host_claim_mark=${SDP_HOST_CLAIM_MARK:-/var/lib/sdp-host-check/claim}

# host_undo VERSION: remove all that either check installs.
host_undo() {
	local ver=$1 p there=()
	for p in sdp-dkms sdp-tools sdp-dev; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q . && there+=("$p")
	done
	[ ${#there[@]} = 0 ] ||
		DEBIAN_FRONTEND=noninteractive apt-get purge -y -q "${there[@]}" >/dev/null
	if [ -n "$(dkms status "sdp/$ver" 2>/dev/null)" ]; then
		dkms remove "sdp/$ver" --all >/dev/null 2>&1 || true
	fi
	rm -rf "/usr/src/sdp-$ver"
}

# host_recover NAME VERSION: before check NAME looks at the machine, remove
# what a killed run left.  Returns 1, saying why, when another run is in
# progress.
host_recover() {
	local name=$1 ver=$2 who pid
	[ -f "$host_claim_mark" ] || return 0
	read -r who pid <"$host_claim_mark" || true
	if [ -n "$pid" ] && [ -n "$who" ] && kill -0 "$pid" 2>/dev/null &&
		grep -qa "$who" "/proc/$pid/cmdline" 2>/dev/null; then
		echo "$name: $who (PID $pid) is running and changing this machine; not touching it" >&2
		return 1
	fi
	echo "$name: $who (PID ${pid:-?}) was killed before it cleaned up; removing what it left"
	host_undo "$ver"
	rm -f "$host_claim_mark"
}

# host_claim NAME: the machine has no sdp; check NAME is about to change
# that.
host_claim() {
	mkdir -p "$(dirname "$host_claim_mark")"
	echo "$1 $$" >"$host_claim_mark"
}

# host_release: the changes are undone; drop the mark.
host_release() {
	rm -f "$host_claim_mark"
	rmdir "$(dirname "$host_claim_mark")" 2>/dev/null || true
}
