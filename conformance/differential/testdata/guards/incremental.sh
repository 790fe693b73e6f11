# issue 23: bash reads, parses and runs one command (one line's list) at a
# time: what comes before a syntax error runs, nothing of the bad line does,
# then a script ends with 2 while source and eval return 2
exec 2>/dev/null
bash -c 'echo a
echo b )
echo c'; echo "st $?"
bash -c 'echo a; echo b )'; echo "st $?"
bash -c 'f() { echo f; }
f
if true; then
  f
  )
fi
f'; echo "st $?"
bash -c 'cat <<E
hd
E
echo b
('; echo "st $?"
bash -c 'echo a; exit 3
)'; echo "st $?"
bash -c "trap 'echo trap' EXIT
echo a
)"; echo "st $?"
bash -c 'set -e; echo a; false
)'; echo "st $?"
eval 'echo e1; )'; echo "eval $?"
eval 'echo e1
echo e2 )
echo e3'; echo "eval $?"
f() { eval 'echo in
)'; echo "in f $?"; }; f
printf 'echo s1\n)\necho s2\n' > brk.sh
. ./brk.sh; echo "source $?"
g() { . ./brk.sh; echo "in g $?"; }; g
bash -c "trap 'echo t
)' DEBUG; echo x; echo y"; echo "st $?"
bash -c "trap 'echo t
)' ERR; false; echo after \$?"; echo "st $?"
bash -c "set -e; trap 'echo t
)' ERR; false; echo after"; echo "st $?"
bash -c "trap 'echo t
exit 5
)' EXIT; echo b"; echo "st $?"
echo last
echo x; )
echo never
