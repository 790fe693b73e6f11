package main

import "github.com/warren-sandbox/warren/native"

// The native tier re-executes this binary as each workspace's namespace
// init (argv[0] "warren-native-init"); MaybeInit takes over such a process
// before cobra sees its arguments, and returns at once otherwise.
func init() { native.MaybeInit() }
