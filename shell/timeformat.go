package shell

import (
	"fmt"
	"strings"
	"time"
)

// timeFormat expands bash's TIMEFORMAT for a command that took real: %R
// %U %S with an optional precision digit (default 3) and l for the
// MmS.FFFs form, %P, %%. User and system time are not measured for the
// resident tier (in-process work), so they are 0. bad is a format
// character bash refuses.
func timeFormat(f string, real time.Duration) (out string, bad byte) {
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			b.WriteByte(f[i])
			continue
		}
		i++
		if i >= len(f) {
			b.WriteByte('%')
			break
		}
		prec, long := 3, false
		if f[i] >= '0' && f[i] <= '9' {
			prec = min(int(f[i]-'0'), 3)
			i++
		}
		if i < len(f) && f[i] == 'l' {
			long = true
			i++
		}
		if i >= len(f) {
			break
		}
		var d time.Duration
		switch f[i] {
		case '%':
			b.WriteByte('%')
			continue
		case 'P':
			b.WriteString("0.00")
			continue
		case 'R':
			d = real
		case 'U', 'S':
		default:
			return "", f[i]
		}
		secs := d.Seconds()
		if long {
			m := int(secs / 60)
			fmt.Fprintf(&b, "%dm%.*fs", m, prec, secs-60*float64(m))
		} else {
			fmt.Fprintf(&b, "%.*f", prec, secs)
		}
	}
	return b.String(), 0
}
