package shell

import "testing"

// declare -f and type print a function in bash 5.2's layout (recorded):
// one command a line, bodies of if, loops and case items indented, elif as
// a nested if, subshells inline, redirections after the words with a
// duplication's default descriptor spelled out, backquotes kept, and
// here-document bodies unindented after their line, so that eval of the
// output defines the same function.
func TestFunctionLayout(t *testing.T) {
	checkRecorded(t, []recorded{
		{"f() { local x=1 y; if [ -n \"$x\" ]; then echo a; elif true; then echo c; else echo b; fi; }; declare -f f", "f () \n{ \n    local x=1 y;\n    if [ -n \"$x\" ]; then\n        echo a;\n    else\n        if true; then\n            echo c;\n        else\n            echo b;\n        fi;\n    fi\n}\n", ""},
		{"f() { for i in 1 2; do echo $i; done; while false; do :; done; until true; do :; b; done; for i; do :; done; }; declare -f f", "f () \n{ \n    for i in 1 2;\n    do\n        echo $i;\n    done;\n    while false; do\n        :;\n    done;\n    until true; do\n        :;\n        b;\n    done;\n    for i in \"$@\";\n    do\n        :;\n    done\n}\n", ""},
		{"f() { case $x in a|b) echo ab;; c) ;; *) echo def;& esac; }; declare -f f", "f () \n{ \n    case $x in \n        a | b)\n            echo ab\n        ;;\n        c)\n\n        ;;\n        *)\n            echo def\n        ;&\n    esac\n}\n", ""},
		{"f() { ( cd /; ls ) > /dev/null 2>&1; { echo g; echo h; } & [[ -n $x && $x == 1 ]]; ! true; }; declare -f f", "f () \n{ \n    ( cd /;\n    ls ) > /dev/null 2>&1;\n    { \n        echo g;\n        echo h\n    } & [[ -n $x && $x == 1 ]];\n    ! true\n}\n", ""},
		{"f() { echo a > f 2>> g < h &> i >| j 3<&0 4>&- <> k 2>&1 >&2; cat <<< \"x\"; }; declare -f f", "f () \n{ \n    echo a > f 2>> g < h &> i >| j 3<&0 4>&- 0<> k 2>&1 1>&2;\n    cat <<< \"x\"\n}\n", ""},
		{"f() { sleep 1 & echo x; a && b & c; echo \"`echo \\`x\\``\" `pwd`; }; declare -f f", "f () \n{ \n    sleep 1 & echo x;\n    a && b & c;\n    echo \"`echo \\`x\\``\" `pwd`\n}\n", ""},
		{"f() ( echo sub ); g() { echo x; } > /dev/null; declare -f f g; type g", "f () \n{ \n    ( echo sub )\n}\ng () \n{ \n    echo x\n} > /dev/null\ng is a function\ng () \n{ \n    echo x\n} > /dev/null\n", ""},
		{"f() { g() { echo in g; }; coproc cat; x=1 y=2 env; declare -a z=(1 2); time sleep 0; select v in a b; do break; done; }; declare -f f", "f () \n{ \n    function g () \n    { \n        echo in g\n    };\n    coproc COPROC cat;\n    x=1 y=2 env;\n    declare -a z=(1 2);\n    time sleep 0;\n    select v in a b;\n    do\n        break;\n    done\n}\n", ""},
		{"f() { cat <<EOT\nhello $x\nEOT\ncat <<-'E'; echo after\n\ty\n\tE\n}; declare -f f; eval \"$(declare -f f)\"; x=X f", "f () \n{ \n    cat <<EOT\nhello $x\nEOT\n\n    cat <<-'E'\ny\nE\n\n    echo after\n}\nhello X\ny\nafter\n", ""},
	}, true)
}

// Command substitutions in bash's layout, a here-document ending a body
// or a subshell (no ";" after it, the ")" after the body), a subshell
// body's redirections (recorded from bash 5.2).
func TestFunctionLayoutBodies(t *testing.T) {
	checkRecorded(t, []recorded{
		{"f(){ x=$(a|b); y=\"$(echo \"x\">f)\"; z=$(<x1); w=$(a;b); v=$( (a) ); u=$(if a; then b; fi); t=$(a && b); local q=$(date) r; }; declare -f f", "f () \n{ \n    x=$(a | b);\n    y=\"$(echo \"x\" > f)\";\n    z=$(< x1);\n    w=$(a; b);\n    v=$( ( a ));\n    u=$(if a; then\n    b;\nfi);\n    t=$(a && b);\n    local q=$(date) r\n}\n", ""},
		{"foo() {\n\tfor f in a b c; do\n\t\tcat <<-EOF >> ${f}\n\t\tfile\n\t\tEOF\n\tdone\n\tgrep . a b c\n}\ntype foo", "foo is a function\nfoo () \n{ \n    for f in a b c;\n    do\n        cat <<-EOF >> ${f}\nfile\nEOF\n\n    done\n    grep . a b c\n}\n", ""},
		{"bb() {\n( cat <<EOF\nfoo\nEOF\n)\necho after\n{ cat <<E2\nx\nE2\n}\necho end\n}\ndeclare -f bb", "bb () \n{ \n    ( cat <<EOF\nfoo\nEOF\n )\n    echo after;\n    { \n        cat <<E2\nx\nE2\n\n    }\n    echo end\n}\n", ""},
		{"f() ( echo sub ) 2>&1; declare -f f", "f () \n{ \n    ( echo sub ) 2>&1\n}\n", ""},
		{"type -r x; command -x ls; echo $?", "2\n", "bash: line 1: type: -r: invalid option\ntype: usage: type [-afptP] name [name ...]\nbash: line 1: command: -x: invalid option\ncommand: usage: command [-pVv] command [arg ...]\n"},
	}, true)
}

// A command substitution inside ${...}, or holding a here-document, is
// printed by the parser's printer (the layout recursed forever on both).
func TestFunctionLayoutNested(t *testing.T) {
	checkRecorded(t, []recorded{
		{"f(){ echo ${b[$(echo 2)]} \"${x:-$(date)}\"; }; declare -f f", "f () \n{ \n    echo ${b[$(echo 2)]} \"${x:-$(date)}\"\n}\n", ""},
	}, true)
	sh := newTestShell(t, Limits{})
	out, _, _ := runScript(t, sh, "f() { x=$(cat <<E\nhi\nE\n); echo $x; }; eval \"$(declare -f f)\"; f")
	if out != "hi\n" {
		t.Errorf("here-document in a command substitution after eval of declare -f: %q", out)
	}
}
