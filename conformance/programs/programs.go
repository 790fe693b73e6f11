// Package programs runs real bash programs that nobody wrote for warren
// (the bats-core and shunit2 test frameworks, the example libraries and
// the shellmath suite shipped with bash) in host bash and in warren's
// shell, each driven by a script of ours, and compares what a user sees:
// stdout, exit status, whether anything went to stderr, files left behind.
//
// The programs are Debian's (scripts/test-packages.txt installs bats,
// shunit2 and bash-doc); the harness copies them into warren's filesystem
// at the paths the host has them, so both shells run the same files.
// Divergences found here are fixed from the bash manual, never by
// special-casing a program.
package programs

// Program is one driver script and the host paths it needs.
type Program struct {
	Name   string
	Needs  []string // host files or trees the script runs (copied into warren's base)
	Script string
}

// Needs are copied from the host; gzip's z* scripts and debianutils' which
// and savelog are on every Debian system.
const (
	batsTree     = "/usr/lib/bats-core"
	batsExec     = "/usr/libexec/bats-core"
	batsBin      = "/usr/bin/bats"
	shunit2      = "/usr/share/shunit2"
	bashExamples = "/usr/share/doc/bash/examples"
)

var batsNeeds = []string{batsBin, batsTree, batsExec}

// Programs is the list TestPrograms runs.
var Programs = []Program{
	{Name: "bats-pass", Needs: batsNeeds, Script: `cat > t.bats <<'EOF'
setup() { X=1; }
teardown() { rm -f scratch; }
helper() { echo "helper $1"; }
@test "addition" { result="$((2+2))"; [ "$result" -eq 4 ]; }
@test "run status" { run false; [ "$status" -eq 1 ]; }
@test "output and lines" {
  run printf 'a\nb\n'
  [ "$output" = "a
b" ]
  [ "${lines[1]}" = b ]
  [ "${#lines[@]}" -eq 2 ]
}
@test "setup ran" { [ "$X" = 1 ]; touch scratch; }
@test "helper" { run helper x; [ "$output" = "helper x" ]; }
@test "skip" { skip "not now"; }
EOF
bats t.bats; echo "rc=$?"
bats --tap t.bats; echo "rc=$?"
bats -c t.bats
bats -f 'add|help' t.bats; echo "rc=$?"
`},
	{Name: "bats-fail", Needs: batsNeeds, Script: `cat > f.bats <<'EOF'
check() { [ "$1" = yes ]; }
@test "passes" { true; }
@test "fails in the test" { [ 1 -eq 2 ]; }
@test "fails in a function" { check no; }
EOF
bats f.bats; echo "rc=$?"
`},
	{Name: "bats-run-flags", Needs: batsNeeds, Script: `cat > r.bats <<'EOF'
bats_require_minimum_version 1.5.0
@test "expected status" { run -1 false; run -0 true; run ! false; }
@test "status mismatch" { run -3 false; }
@test "separate stderr" { run --separate-stderr sh -c 'echo out; echo err >&2'; [ "$output" = out ]; [ "$stderr" = err ]; }
EOF
bats r.bats; echo "rc=$?"
`},
	{Name: "bats-setup-file", Needs: batsNeeds, Script: `cat > s.bats <<'EOF'
setup_file() { export SHARED=from-setup-file; }
teardown_file() { :; }
@test "sees setup_file" { [ "$SHARED" = from-setup-file ]; }
@test "BATS variables" { [ -n "$BATS_TEST_NAME" ]; [ "$BATS_TEST_NUMBER" = 2 ]; [ -d "$BATS_TMPDIR" ]; }
EOF
bats s.bats; echo "rc=$?"
`},
	{Name: "shunit2", Needs: []string{shunit2}, Script: `cat > t.sh <<'EOF'
testEquality() { assertEquals "one" 1 1; assertEquals "strings" abc "$(echo abc)"; }
testFail() { assertEquals "deliberate" 1 2; }
testTrue() { assertTrue "true" '[ 1 -eq 1 ]'; assertFalse 'false'; }
testNull() { assertNull "" ; assertNotNull "x"; }
testSame() { assertSame 1 1; assertNotSame 1 2; assertNotEquals a b; }
testContains() { assertContains "haystack" hay; assertNotContains "haystack" needle; }
testSkip() { startSkipping; assertEquals 1 2; endSkipping; }
testFailFns() { fail "by hand"; failNotEquals "ne" 1 2; }
setUp() { count=$((count+1)); }
tearDown() { :; }
oneTimeSetUp() { echo "setup once"; count=0; }
oneTimeTearDown() { echo "ran setUp $count times"; }
. /usr/share/shunit2/shunit2
EOF
bash t.sh; echo "rc=$?"
`},
	{Name: "shunit2-suite", Needs: []string{shunit2}, Script: `cat > s.sh <<'EOF'
suite() { suite_addTest one; suite_addTest two; }
one() { assertEquals 2 $((1+1)); }
two() { assertTrue "[ -n x ]"; }
three() { fail "not in the suite"; }
. /usr/share/shunit2/shunit2
EOF
bash s.sh; echo "rc=$?"
`},
	{Name: "shellmath-tests", Needs: []string{bashExamples + "/shellmath"}, Script: `cd /usr/share/doc/bash/examples/shellmath && bash runTests.sh testCases.in; echo "rc=$?"
`},
	{Name: "shellmath-e", Needs: []string{bashExamples + "/shellmath"}, Script: `cd /usr/share/doc/bash/examples/shellmath && bash faster_e_demo.sh 10; bash slower_e_demo.sh 8; bash faster_e_demo.sh; echo "rc=$?"
`},
	{Name: "functions-strings", Needs: []string{bashExamples + "/functions"}, Script: `F=/usr/share/doc/bash/examples/functions
. $F/substr; . $F/basename; . $F/dirname; . $F/array-to-string
substr -l '*.' foo.bar.baz; substr -L '*.' foo.bar.baz; substr -r '.*' foo.bar.baz; substr -R '.*' foo.bar.baz
substr foo.bar.baz '*.'; substr; echo "rc=$?"
basename /a/b/c.txt .txt; basename /a/b/; dirname /a/b/c; dirname c; dirname /
a=(x "y z" w); array_to_string a; echo
`},
	{Name: "functions-numbers", Needs: []string{bashExamples + "/functions"}, Script: `F=/usr/share/doc/bash/examples/functions
. $F/fact; . $F/isnum2; . $F/isvalidip; . $F/inetaddr; . $F/seq; . $F/seq2
fact 5; fact 10
for v in 12 -3 1.5 abc '' 0x1f; do isnum2 "$v" && echo "$v num" || echo "$v not"; isnum3 "$v" && echo "$v num3" || echo "$v not3"; done
for ip in 1.2.3.4 255.255.255.254 256.1.1.1 1.2.3 a.b.c.d 10.0.0.255; do is_validip $ip && echo "$ip ok" || echo "$ip bad"; done
inet2hex 192.168.1.10; hex2inet 0xc0a8010a
seq 1 5; seq 3; iota 4
seq2 2 6 2>/dev/null || echo "seq2 rc=$?"
`},
	{Name: "functions-arrays", Needs: []string{bashExamples + "/functions"}, Script: `F=/usr/share/doc/bash/examples/functions
. $F/arrayops.bash; . $F/sort-pos-params
declare -a A=(one two three)
apush A four five; echo "${A[@]}"
apop A; echo "${A[@]}"
aunshift A zero; echo "${A[@]}"
ashift A; echo "${A[@]}"
aset A 1 TWO; echo "${A[@]}"; aref A 1; alen A
anreverse A; echo "${A[@]}"
set -- pear apple fig banana; sort_posparams "$@"; echo "$@"
`},
	{Name: "examples-files", Needs: []string{bashExamples}, Script: `E=/usr/share/doc/bash/examples
for f in functions/array-stuff functions/array-to-string functions/arrayops.bash functions/autoload functions/autoload.v2 \
	functions/autoload.v3 functions/autoload.v4 functions/basename functions/csh-compat functions/dirname functions/dirstack \
	functions/exitstat functions/external functions/fact functions/fstty functions/func functions/inetaddr functions/inpath \
	functions/isnum2 functions/isvalidip functions/ksh-cd functions/ksh-compat-test functions/kshenv functions/login \
	functions/notify.bash functions/seq functions/seq2 functions/shcat functions/shcat2 functions/sort-pos-params \
	functions/substr functions/substr2 functions/whatis functions/whence functions/which \
	scripts/cat.sh scripts/center scripts/inpath scripts/shprompt scripts/xterm_title scripts/zprintf \
	misc/aliasconv.bash misc/aliasconv.sh misc/cshtobash startup-files/Bash_aliases startup-files/bashrc; do
	echo "== $f"; bash $E/$f </dev/null; echo "rc=$?"
done 2>&1
`},
	{Name: "examples-bcalc", Needs: []string{bashExamples}, Script: `printf '1+2\n7/2\n' | bash /usr/share/doc/bash/examples/scripts/bcalc; echo "rc=$?"
`},
	{Name: "examples-autoload", Needs: []string{bashExamples}, Script: `export FPATH=/usr/share/doc/bash/examples/functions
. $FPATH/autoload.v2
autoload fact substr; autoload -p; fact 6; substr -l '*/' /a/b/c
autoload -u substr; autoload -p; type -t fact
`},
	{Name: "gzip-scripts", Needs: []string{"/usr/bin/zgrep", "/usr/bin/zegrep", "/usr/bin/zdiff", "/usr/bin/zcmp", "/usr/bin/zforce"}, Script: `printf 'alpha\nbeta\ngamma\n' > a; printf 'alpha\nBETA\n' > b
gzip -k a b
zgrep -n beta a.gz; echo "rc=$?"; zgrep -i -c beta a.gz b.gz; zegrep 'al|ga' a.gz; zgrep -l alpha a.gz b.gz
zgrep -h -e gamma -e BETA a.gz b.gz; zgrep nope a.gz; echo "rc=$?"
zdiff a.gz b.gz; echo "rc=$?"; zcmp a.gz a; echo "rc=$?"
cp a.gz c; zforce c; ls c*
rm -f ./*.gz c*
`},
	{Name: "debianutils-scripts", Needs: []string{"/usr/bin/which", "/usr/bin/savelog"}, Script: `which ls gzip nosuch; echo "rc=$?"
printf 'l1\n' > log; savelog -l -c 3 log >/dev/null; ls log*; printf 'l2\n' > log; savelog -l -c 3 log >/dev/null; ls log*; cat log.0 log.1
`},
}
