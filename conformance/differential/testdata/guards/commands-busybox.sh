# command divergences the BusyBox suite found (issue 23), fixed from GNU's behaviour
printf 'the cat\nThe Dog\ncat\n' > words; grep -F -E '\bcat' words; echo $?; grep -E -E cat words; echo $?
echo '0Zp 0.000Zp 100Zp 0.01Zp 0.00120Zp 0.0012 0.0012 - Zp' | dc
echo '0 0 1|p 1 0 1|p _3 3 5|p _3 2 5|p 7 0 _4|p' | dc
printf ' \n2\n\n4\n\n 6 6 \n \v \t 7\n\t\n\v\n' | xargs -I% echo '[%]'
for d in '1999-1-2 3:4:5Z' '1999-1-2 3:4:5 +0600' '1999-1-2 3:4:5 -0600' '2024-2-9' '2024-02-29T1:2'; do TZ=UTC0 date -d "$d"; done
mkdir dl && cd dl && head -c 65536 /dev/zero > f1 && ln f1 f1.1 && head -c 16384 /dev/zero > f2 && du -l . && du . && du -al . | sort -k2 && cd ..
echo Ok > input; ln input input_hard; tar cf t.tar input_hard; echo WRONG > input; tar xf t.tar --overwrite && cat input; rm t.tar
echo 'ZZ; 0Z; 00Z; 1Z; Z.1; ibase=16; 0G; FZ' | bc
echo 'x=1; (x=2)+1; ((x += 3)); x=5; (scale = 0); x' | bc
printf 'define p(*a[], n) { auto i; for (i = 0; i < n; i++) a[i] *= 2 }\ndefine v(a[]) { a[0] = 99 }\nb[0]=1; b[1]=4; z=p(b[], 2); z=v(b[]); b[0]; b[1]\n' | bc
# found by the cmd:datefmt, cmd:findpred, cmd:stat, cmd:du and cmd:seqfmt producers
date -u -d '2024-02-29 13:04:05.123456789' '+%#p %#a %#A %#b %#Z %^p|%3N|%6N|%12N|%-3N'
mkdir -p nt/u && touch -d '2024-03-04 05:06:07' nt && touch -d '2020-01-01' nt/u; find nt -newermt '2023-01-01'; find nt -newermt 'bogus xx' 2>/dev/null; echo $?
touch -d '2023-06-07 08:09:10.5' zz && stat -c '%y|%.3Y|%.9Y|%.Y|%15.2Y|%-14.1Y|%.0Y|' zz
mkdir -p dd/e && head -c 5000 /dev/zero > dd/a && head -c 100 /dev/zero > dd/e/b && ln dd/a dd/e/h && du -ab dd/a dd/e/b dd/e/h
for f in %x %% %d 'a%gb%gc' '%5.1f|' '%' '%5%'; do seq -f "$f" 2 2>/dev/null; echo $?; done
sha224sum s1 2>/dev/null || { printf 'a\n' > s1; sha224sum s1; sha384sum s1; }
