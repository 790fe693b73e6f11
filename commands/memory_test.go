package commands

import (
	"errors"
	"sync"
	"testing"
)

func TestMemoryCharge(t *testing.T) {
	tests := []struct {
		name    string
		max     int64
		charges []int64
		wantErr []bool
		used    int64
	}{
		{"unlimited", 0, []int64{1 << 40, 1 << 40}, []bool{false, false}, 2 << 40},
		{"fits", 100, []int64{60, 40}, []bool{false, false}, 100},
		{"over refunds", 100, []int64{60, 41, 40}, []bool{false, true, false}, 100},
		{"non-positive", 10, []int64{0, -5, 10}, []bool{false, false, false}, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewMemory(tt.max)
			for i, n := range tt.charges {
				err := m.Charge(n)
				if (err != nil) != tt.wantErr[i] {
					t.Fatalf("charge %d of %d: err %v, want error %v", i, n, err, tt.wantErr[i])
				}
				if err != nil && !errors.Is(err, ErrMemoryLimit) {
					t.Fatalf("charge error %v does not match ErrMemoryLimit", err)
				}
			}
			if got := m.Used(); got != tt.used {
				t.Fatalf("used %d, want %d", got, tt.used)
			}
		})
	}
}

func TestMemoryErrorNamesLimit(t *testing.T) {
	err := NewMemory(64 << 20).Charge(65 << 20)
	if err == nil || err.Error() != "warren: memory limit exceeded (64 MiB)" {
		t.Fatalf("error %v", err)
	}
}

func TestMemoryNilIsUnlimited(t *testing.T) {
	var m *Memory
	if err := m.Charge(1 << 50); err != nil {
		t.Fatal(err)
	}
	m.Release(5)
	r := m.Reserve()
	if err := r.Grow(10); err != nil || r.Held() != 10 {
		t.Fatalf("grow on nil budget: %v held %d", err, r.Held())
	}
	r.Close()
	if m.Used() != 0 || m.Max() != 0 {
		t.Fatal("nil budget reports usage")
	}
}

func TestReservationReturnsEverything(t *testing.T) {
	m := NewMemory(1000)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := m.Reserve()
			defer r.Close()
			for range 100 {
				if r.Grow(10) != nil {
					return
				}
				r.Shrink(3)
			}
		}()
	}
	wg.Wait()
	if m.Used() != 0 {
		t.Fatalf("used %d after every reservation closed", m.Used())
	}
	r := m.Reserve()
	if err := r.Grow(1001); err == nil {
		t.Fatal("grow past the budget succeeded")
	}
	r.Shrink(50) // more than held: a no-op, never negative
	if r.Held() != 0 || m.Used() != 0 {
		t.Fatalf("held %d used %d", r.Held(), m.Used())
	}
}
