package awk

// MeterLayoutOK reports whether the meter can read GoAWK's state.
func MeterLayoutOK() bool { return layout.ok }
