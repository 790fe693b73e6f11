// A Go wasip1 program: the Go runtime's start in the WASM tier.
package main

import (
	"fmt"
	"os"
)

func main() {
	wd, _ := os.Getwd()
	data, err := os.ReadFile("/in/given.txt")
	fmt.Printf("go cwd=%s given=%q err=%v\n", wd, data, err)
	if err := os.WriteFile("from-go.txt", []byte("go\n"), 0o644); err != nil {
		fmt.Println("write:", err)
		os.Exit(1)
	}
}
