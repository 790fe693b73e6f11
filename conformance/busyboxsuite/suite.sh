#!/bin/bash
# Runs one applet's BusyBox test cases in the current directory (a fresh
# copy of testsuite/) and prints a PASS:/FAIL: line per case. The same
# script runs on the host and inside warren, so both see the same harness.
#   suite.sh APPLET
applet=$1
tsdir=$PWD
ECHO=echo
export ECHO
# Old-style cases: applet/NAME is a script that must exit 0 under -e
# (runtest runs them with sh -x -e in a scratch directory, $d the suite).
if [ -d "$applet" ]; then
	for t in "$applet"/*; do
		name=${t##*/}
		rm -rf ".tmp.$applet"
		mkdir ".tmp.$applet"
		if (cd ".tmp.$applet" && d=$tsdir bash -e "$tsdir/$t" </dev/null >/dev/null 2>&1); then
			echo "PASS: $name"
		else
			echo "FAIL: $name"
		fi
	done
	rm -rf ".tmp.$applet"
fi
# New-style cases: the testing function of testing.sh prints the lines.
if [ -f "$applet.tests" ]; then
	bash "./$applet.tests" </dev/null 2>/dev/null
fi
exit 0
