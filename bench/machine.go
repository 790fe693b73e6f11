package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Machine is the fingerprint printed with every run: the same fields as the
// peer harness's "machine" plus Go's own (version, GOMAXPROCS).
func Machine(now time.Time) Object {
	var o Object
	o.Set("runtime", runtime.Version())
	o.Set("go", runtime.Version())
	o.Set("cpu_model", cpuModel())
	o.Set("cores", runtime.NumCPU())
	o.Set("gomaxprocs", runtime.GOMAXPROCS(0))
	o.Set("total_mem_bytes", totalMem())
	o.Set("os", osName())
	o.Set("date", now.UTC().Format("2006-01-02T15:04:05.000Z"))
	o.Set("loadavg_at_start", LoadAvg())
	return o
}

// cpuModel reads the first "model name" of /proc/cpuinfo (the peer uses
// os.cpus()[0].model, which is the same string on Linux).
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

func totalMem() int64 {
	var si syscall.Sysinfo_t
	if err := syscall.Sysinfo(&si); err != nil {
		return 0
	}
	return int64(si.Totalram) * int64(si.Unit)
}

func osName() string {
	var u syscall.Utsname
	if err := syscall.Uname(&u); err != nil {
		return runtime.GOOS + " " + runtime.GOARCH
	}
	str := func(a [65]int8) string {
		b := make([]byte, 0, len(a))
		for _, c := range a {
			if c == 0 {
				break
			}
			b = append(b, byte(c))
		}
		return string(b)
	}
	return fmt.Sprintf("%s %s %s", str(u.Sysname), str(u.Release), runtime.GOARCH)
}

// LoadAvg returns the 1, 5 and 15 minute load averages (nil if unknown).
func LoadAvg() []float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return nil
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return nil
	}
	out := make([]float64, 3)
	for i := range 3 {
		x, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return nil
		}
		out[i] = math.Round(x*100) / 100
	}
	return out
}

// sysCPU is the whole machine's busy and steal CPU seconds from /proc/stat,
// to show whether something else competed during a phase.
type sysCPU struct{ busy, steal float64 }

func readSysCPU() (sysCPU, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return sysCPU{}, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return sysCPU{}, false
	}
	v := make([]float64, 8)
	for i := range v {
		v[i], _ = strconv.ParseFloat(f[i+1], 64)
	}
	// user nice system idle iowait irq softirq steal, in USER_HZ (100/s)
	return sysCPU{busy: (v[0] + v[1] + v[2] + v[5] + v[6]) / 100, steal: v[7] / 100}, true
}

// processCPU is this process's user+system CPU time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rssBytes is the process's resident set from /proc/self/statm.
func rssBytes() (int64, error) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, fmt.Errorf("cannot read RSS: %w", err)
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, fmt.Errorf("cannot read RSS: /proc/self/statm has %d fields", len(f))
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("cannot read RSS: %w", err)
	}
	return pages * int64(os.Getpagesize()), nil
}
