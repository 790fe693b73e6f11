package sysinfo

import (
	"context"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/warren-sandbox/warren/commands"
)

// Location is the sandbox's time zone: $TZ resolved against the sandbox's
// own /usr/share/zoneinfo (never the host's), POSIX "ABC-3" offsets, else UTC.
func Location(inv *commands.Invocation) *time.Location {
	tz, ok := inv.LookupEnv("TZ")
	if !ok {
		return time.UTC
	}
	return LoadZone(inv, tz)
}

var posixTZ = regexp.MustCompile(`^([A-Za-z]{3,})([+-]?)(\d{1,2})(?::(\d{2}))?`)

// posixRules reads a POSIX TZ string with its daylight-saving rules
// ("EST5EDT", "CET-1CEST,M3.5.0,M10.5.0/3", "<+0530>-5:30") the way the C
// library does: Go's time package applies such a string as the footer of a
// TZif file, so it is wrapped in one holding no transitions. nil when Go
// does not take it.
func posixRules(tz string) *time.Location {
	// a zone file's name (Etc/GMT+2) has a / but no rules after a comma
	if tz == "" || strings.Contains(tz, "\n") || strings.Contains(tz, "/") && !strings.Contains(tz, ",") ||
		!strings.ContainsAny(tz, "0123456789") {
		return nil
	}
	// One zone type (UTC; the footer's rules take over) and no
	// transitions, so the 4- and 8-byte blocks are the same bytes.
	block := []byte{0, 0, 0, 0, 0, 0, 'U', 'T', 'C', 0}
	header := func(version byte) []byte {
		h := []byte("TZif")
		h = append(h, version)
		h = append(h, make([]byte, 15)...)
		for _, n := range []uint32{0, 0, 0, 0, 1, 4} { // isut, isstd, leap, time, type, char
			h = append(h, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
		}
		return h
	}
	var data []byte
	data = append(data, header('2')...)
	data = append(data, block...)
	data = append(data, header('2')...)
	data = append(data, block...)
	data = append(data, '\n')
	data = append(data, tz...)
	data = append(data, '\n')
	loc, err := time.LoadLocationFromTZData(tz, data)
	if err != nil {
		return nil
	}
	// Go ignores a footer it cannot read: a zone that is still UTC at two
	// far-apart instants was not understood.
	if _, off := time.Unix(0, 0).In(loc).Zone(); off == 0 {
		if name, off2 := time.Unix(1720000000, 0).In(loc).Zone(); off2 == 0 && name == "UTC" {
			return nil
		}
	}
	return loc
}

// LoadZone resolves a TZ value inside the sandbox.
func LoadZone(inv *commands.Invocation, tz string) *time.Location {
	tz = strings.TrimPrefix(tz, ":")
	switch tz {
	case "", "UTC", "UTC0", "GMT", "GMT0", "Etc/UTC", "Z", "Universal", "Zulu":
		return time.UTC
	}
	if inv.FS != nil && !strings.Contains(tz, "..") {
		name := tz
		if !strings.HasPrefix(name, "/") {
			name = path.Join("/usr/share/zoneinfo", tz)
		}
		if data, err := inv.FS.ReadFile(name); err == nil {
			if loc, err := time.LoadLocationFromTZData(tz, data); err == nil {
				return loc
			}
		}
	}
	if loc := posixRules(tz); loc != nil {
		return loc
	}
	if m := posixTZ.FindStringSubmatch(tz); m != nil {
		h, _ := strconv.Atoi(m[3])
		mins, _ := strconv.Atoi(m[4])
		off := h*3600 + mins*60
		if m[2] != "-" {
			off = -off // POSIX offsets are west of Greenwich
		}
		return time.FixedZone(m[1], off)
	}
	return time.FixedZone(tz, 0)
}

// Strftime formats t with GNU date's directives (%Y %m %d %H %M %S %N %s
// %z %:z %Z %a %A %b %B %e %j %u %w %p ...) and flags (- _ 0 ^ #, width).
func Strftime(format string, t time.Time) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i+1 >= len(format) {
			b.WriteByte(c)
			continue
		}
		i++
		pad := byte(0)
		upper, swap := false, false
		for i < len(format) && strings.IndexByte("-_0^#", format[i]) >= 0 {
			switch format[i] {
			case '^':
				upper = true
			case '#':
				swap = true
			default:
				pad = format[i]
			}
			i++
		}
		width := -1
		for i < len(format) && format[i] >= '0' && format[i] <= '9' {
			if width < 0 {
				width = 0
			}
			width = width*10 + int(format[i]-'0')
			i++
		}
		colons := 0
		for i < len(format) && format[i] == ':' {
			colons++
			i++
		}
		if i >= len(format) {
			b.WriteString(format[strings.LastIndexByte(format, '%'):])
			break
		}
		s, num, defPad, defWidth := directive(format[i], colons, t)
		if s == "\x00" {
			b.WriteByte('%')
			b.WriteByte(format[i])
			continue
		}
		if format[i] == 'N' && width > 0 {
			// %3N is a precision: the leading digits of the nanoseconds,
			// zeros after the ninth (%12N)
			if width < len(s) {
				s = s[:width]
			} else {
				s += strings.Repeat("0", min(width, 4096)-len(s))
			}
			width = -1
		}
		switch {
		case upper:
			s = strings.ToUpper(s)
		case swap && strings.IndexByte("pZ", format[i]) >= 0:
			// GNU's # is "the opposite case": names go up, AM/PM and
			// the zone (already upper) come down
			s = strings.ToLower(s)
		case swap && strings.IndexByte("aAbBh", format[i]) >= 0:
			s = strings.ToUpper(s)
		}
		if width < 0 {
			width = defWidth
		}
		if pad == 0 {
			pad = defPad
		}
		if num {
			s = strings.TrimLeft(s, " 0")
			if s == "" {
				s = "0"
			}
			neg := strings.HasPrefix(s, "-")
			if pad != '-' && len(s) < width {
				p := "0"
				if pad == '_' {
					p = " "
				}
				if neg && p == "0" {
					s = "-" + strings.Repeat(p, width-len(s)) + s[1:]
				} else {
					s = strings.Repeat(p, width-len(s)) + s
				}
			}
		} else if pad != '-' && len(s) < width {
			p := " "
			if pad == '0' {
				p = "0"
			}
			s = strings.Repeat(p, width-len(s)) + s
		}
		b.WriteString(s)
	}
	return b.String()
}

// directive returns the expansion of %c, whether it is numeric, and its
// default padding and width. "\x00" means unknown (printed literally).
func directive(c byte, colons int, t time.Time) (string, bool, byte, int) {
	n := func(v, w int) (string, bool, byte, int) { return strconv.Itoa(v), true, '0', w }
	sp := func(v, w int) (string, bool, byte, int) { return strconv.Itoa(v), true, '_', w }
	str := func(s string) (string, bool, byte, int) { return s, false, 0, 0 }
	switch c {
	case 'a':
		return str(t.Format("Mon"))
	case 'A':
		return str(t.Format("Monday"))
	case 'b', 'h':
		return str(t.Format("Jan"))
	case 'B':
		return str(t.Format("January"))
	case 'c':
		return str(Strftime("%a %b %e %H:%M:%S %Y", t))
	case 'C':
		return n(t.Year()/100, 2)
	case 'd':
		return n(t.Day(), 2)
	case 'D':
		return str(Strftime("%m/%d/%y", t))
	case 'e':
		return sp(t.Day(), 2)
	case 'F':
		return str(Strftime("%Y-%m-%d", t))
	case 'g':
		y, _ := t.ISOWeek()
		return n(y%100, 2)
	case 'G':
		y, _ := t.ISOWeek()
		return n(y, 4)
	case 'H':
		return n(t.Hour(), 2)
	case 'I':
		return n((t.Hour()+11)%12+1, 2)
	case 'j':
		return n(t.YearDay(), 3)
	case 'k':
		return sp(t.Hour(), 2)
	case 'l':
		return sp((t.Hour()+11)%12+1, 2)
	case 'm':
		return n(int(t.Month()), 2)
	case 'M':
		return n(t.Minute(), 2)
	case 'n':
		return str("\n")
	case 'N':
		return fmt.Sprintf("%09d", t.Nanosecond()), false, 0, 0
	case 'p':
		if t.Hour() < 12 {
			return str("AM")
		}
		return str("PM")
	case 'P':
		if t.Hour() < 12 {
			return str("am")
		}
		return str("pm")
	case 'q': // GNU's quarter of the year
		return n((int(t.Month())+2)/3, 1)
	case 'r':
		return str(Strftime("%I:%M:%S %p", t))
	case 'R':
		return str(Strftime("%H:%M", t))
	case 's':
		return n(int(t.Unix()), 1)
	case 'S':
		return n(t.Second(), 2)
	case 't':
		return str("\t")
	case 'T':
		return str(Strftime("%H:%M:%S", t))
	case 'u':
		wd := int(t.Weekday())
		if wd == 0 {
			wd = 7
		}
		return n(wd, 1)
	case 'U':
		return n((t.YearDay()+6-int(t.Weekday()))/7, 2)
	case 'V':
		_, w := t.ISOWeek()
		return n(w, 2)
	case 'w':
		return n(int(t.Weekday()), 1)
	case 'W':
		return n((t.YearDay()+6-(int(t.Weekday())+6)%7)/7, 2)
	case 'x':
		return str(Strftime("%m/%d/%y", t))
	case 'X':
		return str(Strftime("%H:%M:%S", t))
	case 'y':
		return n(t.Year()%100, 2)
	case 'Y':
		return n(t.Year(), 1)
	case 'z':
		_, off := t.Zone()
		sign := '+'
		if off < 0 {
			sign, off = '-', -off
		}
		switch colons {
		case 1:
			return str(fmt.Sprintf("%c%02d:%02d", sign, off/3600, off/60%60))
		case 2:
			return str(fmt.Sprintf("%c%02d:%02d:%02d", sign, off/3600, off/60%60, off%60))
		}
		return str(fmt.Sprintf("%c%02d%02d", sign, off/3600, off/60%60))
	case 'Z':
		name, _ := t.Zone()
		return str(name)
	case '%':
		return str("%")
	}
	return "\x00", false, 0, 0
}

var relUnit = regexp.MustCompile(`(?i)([+-]?\s*\d+)?\s*(sec|second|min|minute|hour|day|week|fortnight|month|year)s?\b(\s+ago)?`)

// ParseDate understands the date strings agents pass to date -d and
// touch -d: "@EPOCH", ISO 8601 dates and times, RFC 2822, the default
// date(1) output, "now", "today", "yesterday", "tomorrow", and relative
// items like "2 days ago", "+3 hours", "next week", "last month".
func ParseDate(s string, now time.Time, loc *time.Location) (time.Time, error) {
	orig := s
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "@") {
		f, err := strconv.ParseFloat(strings.TrimSpace(s[1:]), 64)
		if err != nil {
			return time.Time{}, fmt.Errorf("invalid date %s", quoteArg(orig))
		}
		sec := int64(f)
		return time.Unix(sec, int64((f-float64(sec))*1e9)).In(loc), nil
	}
	base := now.In(loc)
	lower := strings.ToLower(s)
	// relative items
	var rel []func(time.Time) time.Time
	lower = strings.ReplaceAll(lower, "next ", "+1 ")
	lower = strings.ReplaceAll(lower, "last ", "-1 ")
	lower = relUnit.ReplaceAllStringFunc(lower, func(m string) string {
		sub := relUnit.FindStringSubmatch(m)
		k := 1
		if sub[1] != "" {
			k, _ = strconv.Atoi(strings.ReplaceAll(sub[1], " ", ""))
		}
		if sub[3] != "" {
			k = -k
		}
		unit := strings.ToLower(sub[2])
		rel = append(rel, func(t time.Time) time.Time {
			switch unit {
			case "sec", "second":
				return t.Add(time.Duration(k) * time.Second)
			case "min", "minute":
				return t.Add(time.Duration(k) * time.Minute)
			case "hour":
				return t.Add(time.Duration(k) * time.Hour)
			case "day":
				return t.AddDate(0, 0, k)
			case "week":
				return t.AddDate(0, 0, 7*k)
			case "fortnight":
				return t.AddDate(0, 0, 14*k)
			case "month":
				return t.AddDate(0, k, 0)
			}
			return t.AddDate(k, 0, 0)
		})
		return " "
	})
	rest := strings.TrimSpace(lower)
	t := base
	switch rest {
	case "", "now":
	case "today":
	case "yesterday":
		t = t.AddDate(0, 0, -1)
	case "tomorrow":
		t = t.AddDate(0, 0, 1)
	case "midnight":
		t = time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc)
	case "noon":
		t = time.Date(t.Year(), t.Month(), t.Day(), 12, 0, 0, 0, loc)
	default:
		// parse the absolute part from the original text (case matters for
		// month names in Go layouts)
		abs := strings.TrimSpace(s)
		if len(rel) > 0 {
			abs = strings.TrimSpace(relUnit.ReplaceAllString(strings.ReplaceAll(strings.ReplaceAll(abs, "next ", ""), "last ", ""), ""))
		}
		var ok bool
		t, ok = parseAbsolute(abs, base, loc)
		if !ok {
			return time.Time{}, fmt.Errorf("invalid date %s", quoteArg(orig))
		}
	}
	for _, f := range rel {
		t = f(t)
	}
	return t, nil
}

var absLayouts = []string{
	"2006-01-02T15:04:05.999999999Z07:00",
	"2006-01-02T15:04:05Z07:00",
	"2006-01-02T15:04:05Z0700",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05Z07:00",
	"2006-01-02 15:04:05 Z07:00",
	"2006-01-02 15:04:05 -0700",
	"2006-01-02 15:04:05 MST",
	"Mon Jan _2 15:04:05 MST 2006",
	"Mon Jan _2 15:04:05 2006",
	"Mon, 02 Jan 2006 15:04:05 -0700",
	"Mon, 2 Jan 2006 15:04:05 -0700",
	"Mon, 02 Jan 2006 15:04:05 MST",
	"02 Jan 2006 15:04:05 -0700",
}

var localLayouts = []string{
	"2006-01-02T15:04:05.999999999",
	"2006-01-02T15:04:05",
	"2006-01-02T15:04",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02 15:04:05",
	"2006-01-02 15:04",
	"2006-01-02",
	"2006/01/02 15:04:05",
	"2006/01/02",
	"01/02/2006",
	"01/02/2006 15:04:05",
	"20060102",
	"20060102 15:04",
	"20060102 15:04:05",
	"Jan 2 2006",
	"Jan 2, 2006",
	"January 2 2006",
	"January 2, 2006",
	"2 Jan 2006",
	"2 January 2006",
	"Jan 2 2006 15:04:05",
	"2 Jan 2006 15:04:05",
	"2 Jan 2006 15:04",
	"Jan 2 2006 15:04",
	"Jan 2 15:04:05 2006",
	"Mon Jan 2 15:04:05 2006",
}

// isoLoose is an ISO date and time with unpadded fields (1999-1-2 3:4:5)
// and a zone letter glued on (…5Z), which GNU's parser takes too.
var isoLoose = regexp.MustCompile(`^(\d{4})-(\d{1,2})-(\d{1,2})(?:([ T])(\d{1,2}):(\d{1,2})(?::(\d{1,2})(\.\d+)?)?(Z)?)?( .*)?$`)

// padISO rewrites isoLoose text into the zero-padded form the layouts read.
func padISO(s string) string {
	m := isoLoose.FindStringSubmatch(s)
	if m == nil {
		return s
	}
	pad := func(x string) string {
		if len(x) == 1 {
			return "0" + x
		}
		return x
	}
	out := m[1] + "-" + pad(m[2]) + "-" + pad(m[3])
	if m[4] != "" {
		out += m[4] + pad(m[5]) + ":" + pad(m[6])
		if m[7] != "" {
			out += ":" + pad(m[7]) + m[8]
		}
		if m[9] != "" {
			out += " Z"
		}
	}
	return out + m[10]
}

func parseAbsolute(s string, base time.Time, loc *time.Location) (time.Time, bool) {
	s = padISO(strings.Join(strings.Fields(s), " "))
	for _, l := range absLayouts {
		if t, err := time.ParseInLocation(l, s, loc); err == nil {
			return t, true
		}
	}
	// "2024-01-02 10:00 UTC" / "... +0200"
	if i := strings.LastIndexByte(s, ' '); i > 0 {
		zone := s[i+1:]
		var zl *time.Location
		switch {
		case zone == "UTC" || zone == "GMT" || zone == "Z":
			zl = time.UTC
		case (zone[0] == '+' || zone[0] == '-') && len(zone) >= 3:
			if zt, err := time.Parse("-0700", zone); err == nil {
				_, off := zt.Zone()
				zl = time.FixedZone("", off)
			} else if zt, err := time.Parse("-07:00", zone); err == nil {
				_, off := zt.Zone()
				zl = time.FixedZone("", off)
			}
		}
		if zl != nil {
			if t, ok := parseLocal(s[:i], base.In(zl), zl); ok {
				return t.In(loc), true
			}
		}
	}
	return parseLocal(s, base, loc)
}

func parseLocal(s string, base time.Time, loc *time.Location) (time.Time, bool) {
	for _, l := range localLayouts {
		if t, err := time.ParseInLocation(l, s, loc); err == nil {
			return t, true
		}
	}
	// time of day only: today at that time
	for _, l := range []string{"15:04:05", "15:04", "3:04pm", "3pm", "15:04:05.999999999"} {
		if t, err := time.ParseInLocation(l, strings.ToLower(s), loc); err == nil {
			return time.Date(base.Year(), base.Month(), base.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), loc), true
		}
	}
	return time.Time{}, false
}

var dateOpts = newOpts("d:uRIr:f:s:", "date=:d", "utc:u", "universal:u", "rfc-2822:R",
	"rfc-email:R", "iso-8601?:I", "rfc-3339=", "reference=:r", "file=:f", "set=:s", "debug")

func date(ctx context.Context, inv *commands.Invocation) int {
	// -I takes its optional argument attached (-Iseconds)
	raw := append([]string(nil), inv.Args[1:]...)
	for i, a := range raw {
		if strings.HasPrefix(a, "-I") && len(a) > 2 {
			raw[i] = "--iso-8601=" + a[2:]
		}
	}
	opts, args, err := dateOpts.Parse(raw)
	if err != nil {
		return badUsage(inv, err, 1)
	}
	loc := Location(inv)
	now := inv.Now()
	t := now.In(loc)
	var format string
	var dates []string
	var dateFile string
	for _, o := range opts {
		switch o.Key {
		case "d":
			dates = []string{o.Val}
		case "f":
			dateFile = o.Val
		case "u":
			loc = time.UTC
		case "R":
			format = "%a, %d %b %Y %H:%M:%S %z"
		case "I":
			switch o.Val {
			case "", "date", "d":
				format = "%Y-%m-%d"
			case "hours", "h":
				format = "%Y-%m-%dT%H%:z"
			case "minutes", "m":
				format = "%Y-%m-%dT%H:%M%:z"
			case "seconds", "s":
				format = "%Y-%m-%dT%H:%M:%S%:z"
			case "ns":
				format = "%Y-%m-%dT%H:%M:%S,%N%:z"
			default:
				inv.Errorf("invalid argument %s for '--iso-8601'", quoteArg(o.Val))
				return 1
			}
		case "rfc-3339":
			switch o.Val {
			case "date":
				format = "%Y-%m-%d"
			case "seconds":
				format = "%Y-%m-%d %H:%M:%S%:z"
			case "ns":
				format = "%Y-%m-%d %H:%M:%S.%N%:z"
			default:
				inv.Errorf("invalid argument %s for '--rfc-3339'", quoteArg(o.Val))
				return 1
			}
		case "r":
			fi, err := inv.FS.Stat(inv.Abs(o.Val))
			if err != nil {
				inv.Errorf("%s", commands.Describe(relabel(err, o.Val)))
				return 1
			}
			t = fi.ModTime()
		case "s":
			inv.Errorf("cannot set date: Operation not permitted")
			return 1
		}
	}
	for _, a := range args {
		if strings.HasPrefix(a, "+") {
			if format != "" && !strings.HasPrefix(format, "+") {
				inv.Errorf("multiple output formats specified")
				return 1
			}
			format = a
			continue
		}
		inv.Errorf("invalid date %s", quoteArg(a))
		return 1
	}
	format = strings.TrimPrefix(format, "+")
	if format == "" {
		format = "%a %b %e %H:%M:%S %Z %Y"
	}
	if dateFile != "" {
		rc, err := inv.Open(dateFile)
		if err != nil {
			inv.Errorf("%s", commands.Describe(err))
			return 1
		}
		data, _ := readAllLimited(rc, 1<<20)
		rc.Close()
		dates = strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	}
	if dates == nil {
		fmt.Fprintln(inv.Stdout, Strftime(format, t.In(loc)))
		return 0
	}
	status := 0
	for _, d := range dates {
		pt, err := ParseDate(d, now, Location(inv))
		if err != nil {
			inv.Errorf("%s", err.Error())
			status = 1
			continue
		}
		fmt.Fprintln(inv.Stdout, Strftime(format, pt.In(loc)))
	}
	return status
}
