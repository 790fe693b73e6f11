package awk

// MeterLayoutOK reports whether the meter can read GoAWK's state.
func MeterLayoutOK() bool { return layout.ok }

// SetMaxPipeBytes sets the bound on output held for commands and returns
// a function restoring it.
func SetMaxPipeBytes(n int) func() {
	old := maxPipeBytes
	maxPipeBytes = n
	return func() { maxPipeBytes = old }
}

// FieldLayoutOK reports whether the field hook can reach GoAWK's record
// state (fields.go).
func FieldLayoutOK() bool { return fieldLayout.ok }
