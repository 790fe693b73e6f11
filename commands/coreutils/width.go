package coreutils

import "unicode"

// wideRanges are the East Asian Wide and Fullwidth blocks that take two
// terminal cells (as glibc's wcwidth in a UTF-8 locale, which GNU wc -L and
// util-linux column measure with).
var wideRanges = [][2]rune{
	{0x1100, 0x115F}, {0x231A, 0x231B}, {0x2329, 0x232A}, {0x23E9, 0x23EC},
	{0x2E80, 0x303E}, {0x3041, 0x33FF}, {0x3400, 0x4DBF}, {0x4E00, 0x9FFF},
	{0xA000, 0xA4CF}, {0xA960, 0xA97F}, {0xAC00, 0xD7A3}, {0xF900, 0xFAFF},
	{0xFE10, 0xFE19}, {0xFE30, 0xFE6F}, {0xFF00, 0xFF60}, {0xFFE0, 0xFFE6},
	{0x1F300, 0x1F64F}, {0x1F900, 0x1F9FF}, {0x20000, 0x2FFFD}, {0x30000, 0x3FFFD},
}

// cellWidth is the number of terminal cells r takes: 0 for control
// characters and combining marks, 2 for wide ones, else 1.
func cellWidth(r rune) int {
	switch {
	case r < ' ' || r == 0x7F || r >= 0x80 && r < 0xA0:
		return 0
	case r < 0x1100:
		if r >= 0x300 && unicode.In(r, unicode.Mn, unicode.Me) {
			return 0
		}
		return 1
	case r == 0x200B || unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf):
		return 0
	}
	for _, w := range wideRanges {
		if r < w[0] {
			break
		}
		if r <= w[1] {
			return 2
		}
	}
	return 1
}

// runeWidth is the display width of s in terminal cells.
func runeWidth(s string) int {
	n := 0
	for _, r := range s {
		n += cellWidth(r)
	}
	return n
}
