#!/bin/bash
# bash's support/xcase.c
op=
while getopts lnu c; do
	case $c in
	u) op=u ;; l) op=l ;; n) ;;
	*) echo "casemod: usage: casemod [-lnu] [file]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] && [ "$1" != - ] && exec < "$1"
case $op in
u) tr a-z A-Z ;; l) tr A-Z a-z ;; *) cat ;;
esac
