package bashfmt

import (
	"strconv"
	"strings"
	"time"
)

// strftime is glibc's strftime(3) in the C locale, for bash's %(fmt)T:
// the conversions, the _ - 0 ^ # flags and a field width.
func strftime(f string, t time.Time) string {
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		if f[i] != '%' || i+1 >= len(f) {
			b.WriteByte(f[i])
			continue
		}
		start := i
		i++
		var flag byte
		upper := false
		for i < len(f) && strings.IndexByte("_-0^#", f[i]) >= 0 {
			if f[i] == '^' {
				upper = true
			} else {
				flag = f[i]
			}
			i++
		}
		width := -1
		if i < len(f) && f[i] >= '1' && f[i] <= '9' {
			width = 0
			for i < len(f) && f[i] >= '0' && f[i] <= '9' && width < 1024 {
				width = width*10 + int(f[i]-'0')
				i++
			}
		}
		for i < len(f) && (f[i] == 'E' || f[i] == 'O') {
			i++
		}
		if i >= len(f) {
			b.WriteString(f[start:])
			break
		}
		s, numeric, pad := timeField(f[i], t)
		if s == "\x00" {
			b.WriteString(f[start : i+1]) // unknown: printed as it is
			continue
		}
		if upper {
			s = strings.ToUpper(s)
		}
		if numeric {
			switch flag {
			case '-':
				s = strings.TrimLeft(s, "0 ")
				if s == "" {
					s = "0"
				}
			case '_':
				k := 0
				for k < len(s)-1 && s[k] == '0' {
					k++
				}
				s = strings.Repeat(" ", k) + s[k:]
			case '0':
				s = strings.ReplaceAll(s, " ", "0")
			}
		}
		if width > len(s) {
			p := " "
			if numeric && flag != '_' || flag == '0' {
				p = pad
			}
			s = strings.Repeat(p, width-len(s)) + s
		}
		b.WriteString(s)
	}
	return b.String()
}

var (
	cDays   = []string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}
	cMonths = []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
)

// timeField is one conversion: its text, whether it is a number (for the
// flags) and what pads it; "\x00" for an unknown one.
func timeField(c byte, t time.Time) (string, bool, string) {
	two := func(n int) string {
		if n < 10 {
			return "0" + strconv.Itoa(n)
		}
		return strconv.Itoa(n)
	}
	sp2 := func(n int) string {
		if n < 10 {
			return " " + strconv.Itoa(n)
		}
		return strconv.Itoa(n)
	}
	h12 := t.Hour() % 12
	if h12 == 0 {
		h12 = 12
	}
	isoY, isoW := t.ISOWeek()
	switch c {
	case 'a':
		return cDays[t.Weekday()][:3], false, " "
	case 'A':
		return cDays[t.Weekday()], false, " "
	case 'b', 'h':
		return cMonths[t.Month()-1][:3], false, " "
	case 'B':
		return cMonths[t.Month()-1], false, " "
	case 'c':
		return strftime("%a %b %e %H:%M:%S %Y", t), false, " "
	case 'C':
		return two(t.Year() / 100), true, "0"
	case 'd':
		return two(t.Day()), true, "0"
	case 'D', 'x':
		return strftime("%m/%d/%y", t), false, " "
	case 'e':
		return sp2(t.Day()), true, " "
	case 'F':
		return strftime("%Y-%m-%d", t), false, " "
	case 'g':
		return two(isoY % 100), true, "0"
	case 'G':
		return strconv.Itoa(isoY), true, "0"
	case 'H':
		return two(t.Hour()), true, "0"
	case 'I':
		return two(h12), true, "0"
	case 'j':
		d := strconv.Itoa(t.YearDay())
		return strings.Repeat("0", 3-len(d)) + d, true, "0"
	case 'k':
		return sp2(t.Hour()), true, " "
	case 'l':
		return sp2(h12), true, " "
	case 'm':
		return two(int(t.Month())), true, "0"
	case 'M':
		return two(t.Minute()), true, "0"
	case 'n':
		return "\n", false, " "
	case 'p':
		if t.Hour() < 12 {
			return "AM", false, " "
		}
		return "PM", false, " "
	case 'P':
		if t.Hour() < 12 {
			return "am", false, " "
		}
		return "pm", false, " "
	case 'r':
		return strftime("%I:%M:%S %p", t), false, " "
	case 'R':
		return strftime("%H:%M", t), false, " "
	case 's':
		return strconv.FormatInt(t.Unix(), 10), true, "0"
	case 'S':
		return two(t.Second()), true, "0"
	case 't':
		return "\t", false, " "
	case 'T', 'X':
		return strftime("%H:%M:%S", t), false, " "
	case 'u':
		wd := int(t.Weekday())
		if wd == 0 {
			wd = 7
		}
		return strconv.Itoa(wd), true, "0"
	case 'U':
		return two((t.YearDay() + 6 - int(t.Weekday())) / 7), true, "0"
	case 'V':
		return two(isoW), true, "0"
	case 'w':
		return strconv.Itoa(int(t.Weekday())), true, "0"
	case 'W':
		return two((t.YearDay() + 6 - (int(t.Weekday())+6)%7) / 7), true, "0"
	case 'y':
		return two(t.Year() % 100), true, "0"
	case 'Y':
		return strconv.Itoa(t.Year()), true, "0"
	case 'z':
		return t.Format("-0700"), false, " "
	case 'Z':
		return t.Format("MST"), false, " "
	case '%':
		return "%", false, " "
	}
	return "\x00", false, ""
}
