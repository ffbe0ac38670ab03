package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// buildVoiceapi compiles the module's binary into dir.
func buildVoiceapi(dir string) (string, error) {
	bin := filepath.Join(dir, "voiceapi")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build (run the harness from the module root): %w", err)
	}
	return bin, nil
}

// freeAddr returns a loopback address with a free port.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// serverProc is a running `voiceapi serve`.
type serverProc struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed when the process has ended
	addr   string
	ready  time.Duration // from process start to the first 200 on /readyz
	// bootstrap holds the first-start credentials printed on stdout (fresh directory).
	email, password, token string
}

// startServer runs `voiceapi serve` on dir with rate limits off and waits until /readyz
// answers 200. Logs (one JSON line a request) go to logPath, or nowhere when it is "".
func startServer(bin, dir, logPath string, extra ...string) (*serverProc, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	args := append([]string{"serve", "--data", dir, "--addr", addr, "--rate-limit", "0", "--login-rate-limit", "0"}, extra...)
	cmd := exec.Command(bin, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if logPath != "" {
		f, err := os.Create(logPath)
		if err != nil {
			return nil, err
		}
		defer f.Close() // the child keeps its own descriptor
		cmd.Stderr = f
	}
	p := &serverProc{cmd: cmd, addr: addr}
	start := time.Now()
	if p.exited, err = startReaped(cmd); err != nil {
		return nil, err
	}
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		io.Copy(io.Discard, stdout)
	}()
	hc := &http.Client{Timeout: time.Second}
	deadline := start.Add(2 * time.Minute)
	for {
		if time.Now().After(deadline) {
			p.stop()
			return nil, fmt.Errorf("voiceapi on %s was not ready within 2 minutes", dir)
		}
		select {
		case <-p.exited:
			return nil, fmt.Errorf("voiceapi serve %s exited before it was ready (%s; -keep-logs keeps its log)", strings.Join(args, " "), cmd.ProcessState)
		default:
		}
		resp, err := hc.Get("http://" + addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				p.ready = time.Since(start)
				break
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	// The bootstrap lines are printed before the listener opens, so they are in by now.
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				return p, nil
			}
			key, val, _ := strings.Cut(strings.TrimSpace(l), ":")
			switch strings.TrimSpace(key) {
			case "email":
				p.email = strings.TrimSpace(val)
			case "password":
				p.password = strings.TrimSpace(val)
			case "api token":
				p.token = strings.TrimSpace(val)
			}
		case <-time.After(200 * time.Millisecond):
			return p, nil
		}
	}
}

func (p *serverProc) url() string { return "http://" + p.addr }

// stopGrace is how long stop waits after the interrupt before it kills the process.
var stopGrace = 30 * time.Second

// stop sends SIGINT and waits for the drain (p.exited, from startReaped).
func (p *serverProc) stop() {
	p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.exited:
	case <-time.After(stopGrace):
		p.cmd.Process.Kill()
		<-p.exited
	}
}

// mem is the process's resident memory from /proc/<pid>/status, in MiB.
type mem struct {
	RSS, HWM float64 // VmRSS now, VmHWM its peak
	// Anon is the process's own memory (Go heap, stacks); File is pages of mapped files
	// (the binary, and the bbolt database, which bbolt reads through mmap). File pages
	// are the kernel's page cache: shared, and dropped under memory pressure.
	Anon, File float64
}

func memory(pid int) (mem, error) {
	var m mem
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return m, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		fields := strings.Fields(val)
		if len(fields) != 2 || fields[1] != "kB" {
			continue
		}
		kb, _ := strconv.ParseFloat(fields[0], 64)
		switch key {
		case "VmHWM":
			m.HWM = kb / 1024
		case "VmRSS":
			m.RSS = kb / 1024
		case "RssAnon":
			m.Anon = kb / 1024
		case "RssFile":
			m.File = kb / 1024
		}
	}
	return m, nil
}
