# examples in the style of the bash manual's
for i in 1 2 3; do printf '%s ' "$i"; done; echo
x=abcdef; echo ${x:2:3} ${x#a*c} ${x%e*} ${x/cd/CD}
arr=(one two three); echo "${#arr[@]} ${arr[1]} ${arr[@]:1}"
f() { local v=$1; echo "${v^^}"; }; f hello
case foo.tar.gz in *.tar.gz) echo tarball;; *) echo other;; esac
echo $(( (3 + 4) * 2 ** 3 % 5 ))
while read -r a b; do echo "$b $a"; done <<EOF2
one two
three four
EOF2
[[ abc =~ ^a(b)c$ ]] && echo "${BASH_REMATCH[1]}"
set -- "a b" c; echo $#; for w in "$@"; do echo "[$w]"; done
{ echo out; echo err >&2; } 2>/dev/null
printf '%5s|%-5s|%05d\n' ab cd 42
