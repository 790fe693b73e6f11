package wasm

// ModuleReads is how many module files Exec read, for the tests.
func (r *Runtime) ModuleReads() int64 { return r.reads.Load() }
