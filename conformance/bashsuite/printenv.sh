#!/bin/bash
# bash's support/printenv.c
if [ $# -eq 0 ]; then
	env
	exit
elif eval [ "\${$1-unset}" = "unset" ]; then
	exit 1
else
	eval 'printf "%s\n" "$'"$1"'"'
	exit 0
fi
