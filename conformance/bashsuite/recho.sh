#!/bin/bash
# bash's support/recho.c as a script: argv[N] = <arg>, control bytes as ^X
i=0
for a; do
	i=$((i+1))
	if [[ $a == *[[:cntrl:]]* ]]; then
		for ((c = 1; c < 32; c++)); do
			printf -v ch "\\$(printf %03o $c)"
			printf -v rep "^\\$(printf %03o $((c + 64)))"
			a=${a//"$ch"/"$rep"}
		done
		a=${a//$'\177'/^?}
	fi
	printf 'argv[%d] = <%s>\n' "$i" "$a"
done
