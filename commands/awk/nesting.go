package awk

import "github.com/warren-sandbox/warren/commands"

const (
	// maxNesting bounds bracket nesting in a program: GoAWK's parser,
	// resolver and compiler recurse once per level (about fifteen frames
	// for a parenthesis), and a Go stack overflow is fatal to the whole
	// process, not just this sandbox.
	maxNesting = 1000
	// maxChain bounds the operators of one statement: a+a+...+a parses
	// into a tree as deep as it is long, and the compiler recurses over it.
	maxChain = 10000
	// meterFunc is the native function the metered program calls first.
	meterFunc = "__warren_meter"
)

// checkNesting refuses a program nested deeper than GoAWK can safely
// recurse over, before GoAWK parses it. String literals and comments are
// skipped; regular expressions are scanned as code, which can only
// overcount.
func checkNesting(src string) error {
	depth, chain := 0, 0
	for i := 0; i < len(src); i++ {
		switch c := src[i]; c {
		case '"':
			for i++; i < len(src) && src[i] != '"' && src[i] != '\n'; i++ {
				if src[i] == '\\' {
					i++
				}
			}
		case '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			chain = 0
		case '(', '[', '{':
			if depth++; depth > maxNesting {
				return &commands.DepthError{Limit: maxNesting}
			}
			if c == '{' {
				chain = 0
			}
		case ')', ']', '}':
			depth--
			if c == '}' {
				chain = 0
			}
		case ';', '\n':
			chain = 0
		case '_', 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm', 'n', 'o', 'p', 'q',
			'r', 's', 't', 'u', 'v', 'w', 'x', 'y', 'z', 'A', 'B', 'C', 'D', 'E', 'F', 'G', 'H', 'I', 'J',
			'K', 'L', 'M', 'N', 'O', 'P', 'Q', 'R', 'S', 'T', 'U', 'V', 'W', 'X', 'Y', 'Z',
			'0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '.':
			// A word or number is one term of a chain (juxtaposition
			// concatenates, and parses as deep as it is long).
			for i+1 < len(src) && isWordByte(src[i+1]) {
				i++
			}
			if chain++; chain > maxChain {
				return &commands.DepthError{Limit: maxChain}
			}
		case '=', '?', ':', '+', '-', '*', '/', '%', '^', '!', '<', '>', '|', '&', '~', '$', ',':
			if chain++; chain > maxChain {
				return &commands.DepthError{Limit: maxChain}
			}
		}
	}
	return nil
}

func isWordByte(c byte) bool {
	return c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
