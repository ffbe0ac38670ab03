package bolt

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// LockHolder names the process holding the lock on the file at path, such as
// "process 3313 (voiceapi serve --data /var/lib/voiceapi)", from /proc/locks (bbolt
// locks with flock); "" when it cannot tell. An operator told only "locked" has to hunt
// for the process; its id and command line say which to stop.
func LockHolder(path string) string {
	info, err := os.Stat(path)
	if err != nil {
		return ""
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	f, err := os.Open("/proc/locks")
	if err != nil {
		return ""
	}
	defer f.Close()
	// A line: "1: FLOCK  ADVISORY  WRITE 3313 fe:00:9995591 0 EOF"; the device is
	// major:minor in hex, then the inode. Blocked waiters ("1: -> FLOCK …") are skipped.
	dev := fmt.Sprintf("%02x:%02x:%d", (st.Dev>>8)&0xfff|(st.Dev>>32)&^0xfff, st.Dev&0xff|(st.Dev>>12)&^0xff, st.Ino)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[1] == "->" || fields[1] != "FLOCK" || !strings.EqualFold(fields[5], dev) {
			continue
		}
		pid, err := strconv.Atoi(fields[4])
		if err != nil || pid <= 0 {
			continue
		}
		cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if line := strings.TrimSpace(strings.ReplaceAll(string(cmd), "\x00", " ")); line != "" {
			return fmt.Sprintf("process %d (%s)", pid, line)
		}
		return fmt.Sprintf("process %d", pid)
	}
	return ""
}
