package main

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// clockTick is the unit of /proc/<pid>/stat's CPU times (USER_HZ, 100 on Linux).
const clockTick = 10 * time.Millisecond

// processCPU is the CPU time (user and system) that process pid has used so far.
func processCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseStatCPU(string(b))
}

// parseStatCPU reads utime and stime, the 14th and 15th fields of a /proc/<pid>/stat
// line, counted after the command name (in parentheses, which may hold spaces).
func parseStatCPU(stat string) (time.Duration, error) {
	end := strings.LastIndexByte(stat, ')')
	if end < 0 {
		return 0, fmt.Errorf("/proc stat line: %q", stat)
	}
	f := strings.Fields(stat[end+1:]) // f[0] is field 3 (state)
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc stat line: %q", stat)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc stat line: %q", stat)
	}
	return time.Duration(utime+stime) * clockTick, nil
}

// cpuPerRequest is the median over rounds of the server's CPU time per request: unlike
// the throughput, it hardly moves with what else the machine runs.
func cpuPerRequest(rs []result) time.Duration {
	var per []time.Duration
	for _, r := range rs {
		if r.Requests > 0 && r.CPU > 0 {
			per = append(per, r.CPU/time.Duration(r.Requests))
		}
	}
	if len(per) == 0 {
		return 0
	}
	sort.Slice(per, func(i, j int) bool { return per[i] < per[j] })
	return per[len(per)/2]
}
