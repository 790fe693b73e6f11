// Package bashfmt is the one home for bash's printf format language, echo
// and $'...' escapes and shell quoting, shared by the shell (printf, echo,
// $'...', declare -p, set, set -x, alias, trap -p, ${x@Q}) and the resident
// printf and echo commands, so that the two cannot drift apart.
//
// Two references are modelled, chosen by Dialect: bash 5.2's builtin
// printf (Bash) and GNU coreutils 9.1's printf(1) (GNU). They share glibc's
// conversions but differ in %q quoting, in which escapes they accept, in
// how they report bad numbers and in whether \c in the format stops.
//
// Nothing here prints diagnostics: they are handed to the caller as
// *Error values, to print with its own prefix ("bash: printf: " or
// "printf: "). Output goes through a Charge hook before it is written, so
// a caller that keeps it (printf -v) can hold it to a memory budget, and a
// width of a billion is streamed in small pieces, never allocated at once.
package bashfmt
