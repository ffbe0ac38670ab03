package main

import (
	"os"
	"testing"
	"time"
)

// TestParseStatCPU: utime and stime are read after the command name, whatever it holds.
func TestParseStatCPU(t *testing.T) {
	line := "4242 (pocket base) (x)) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 75 0 0 20 0 9 0 123 456 789\n"
	got, err := parseStatCPU(line)
	if err != nil || got != 325*clockTick {
		t.Errorf("parseStatCPU = %v, %v; want %v", got, err, 325*clockTick)
	}
	if _, err := parseStatCPU("4242 (short) S 1 2"); err == nil {
		t.Error("a short line parsed")
	}
	// This process's own line reads, and its CPU time does not go backwards.
	a, err := processCPU(os.Getpid())
	for end := time.Now().Add(30 * time.Millisecond); time.Now().Before(end); {
	}
	b, err2 := processCPU(os.Getpid())
	if err != nil || err2 != nil || b < a {
		t.Errorf("own CPU: %v then %v (%v, %v)", a, b, err, err2)
	}
}

func TestCPUPerRequest(t *testing.T) {
	rs := []result{
		{Requests: 1000, CPU: 500 * time.Millisecond}, // 500µs
		{Requests: 2000, CPU: 400 * time.Millisecond}, // 200µs
		{Requests: 0, CPU: time.Second},               // not counted
		{Requests: 100, CPU: 30 * time.Millisecond},   // 300µs
	}
	if got := cpuPerRequest(rs); got != 300*time.Microsecond {
		t.Errorf("median CPU per request = %v, want 300µs", got)
	}
	if got := cpuPerRequest(nil); got != 0 {
		t.Errorf("no rounds: %v", got)
	}
}
