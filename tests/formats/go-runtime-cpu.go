// The program that wrote go-runtime-cpu.pprof (Go 1.19's runtime/pprof, as
// Debian's golang-go ships it): a real CPU profile from another tool, which
// tests/0910-formats-import.bats imports. `go run go-runtime-cpu.go` writes
// a new one as cpu.pprof.
package main

import (
	"os"
	"runtime/pprof"
)

//go:noinline
func spin(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i * i % 7
	}
	return s
}

func main() {
	f, _ := os.Create("cpu.pprof")
	pprof.StartCPUProfile(f)
	t := 0
	for i := 0; i < 300; i++ {
		t += spin(3000000)
	}
	pprof.StopCPUProfile()
	f.Close()
	println(t)
}
