package wasm

import "crypto/rand"

// randReader gives modules real randomness (random_get): the sandbox's
// own, never a fixed seed shared between sandboxes.
type randReader struct{}

func (randReader) Read(p []byte) (int, error) { return rand.Read(p) }
