# the number one-liners agents write: bc, dc, numfmt, dd (GNU/Debian tools)
echo 'scale=2; 10/3' | bc
echo '2^100' | bc
echo 'scale=20; 4*a(1)' | bc -l
echo 'define f(n) { if (n < 2) return 1; return n * f(n-1) }; f(25)' | bc
echo 'obase=16; ibase=10; 48879' | bc
x=$(echo "1.5 * 4" | bc); echo "x=$x"
echo '5 k 2 v p' | dc
echo '2 3 ^ 4 * p' | dc
numfmt --to=iec 1048576 1536 10
numfmt --to=si --suffix=B 1234567
echo 'size 2048' | numfmt --field=2 --to=iec-i
printf 'hello world\n' > f; dd if=f bs=1 skip=6 count=5 2>/dev/null; echo
dd if=f of=g bs=4 count=1 status=none; od -c g
head -c 32 /dev/zero | hexdump -C
printf 'abc' | hexdump -e '16/1 "%02x " "\n"'
printf 'a,b c,d\ne,f g\n' | awk '{FS=","; print $1}'
seq -w 003 10 | tr '\n' ' '; echo
printf 'hello\n' | xxd -i | xxd -r | od -c; echo $?
