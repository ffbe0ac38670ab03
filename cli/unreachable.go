package cli

import (
	"context"
	"errors"
	"net"
	"net/url"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

// wordUnreachable makes every command that calls a running server (those with --server)
// say plainly that the server could not be reached. The HTTP client's own message is a
// Go error chain (`Get "http://localhost:8080/api/v1/jobs?per_page=100": dial tcp
// 127.0.0.1:8080: connect: connection refused`) naming a request the user never wrote.
func wordUnreachable(root *cobra.Command) {
	for _, cmd := range root.Commands() {
		wordUnreachable(cmd)
		if cmd.RunE == nil || cmd.Flags().Lookup("server") == nil {
			continue
		}
		run := cmd.RunE
		cmd.RunE = func(cmd *cobra.Command, args []string) error {
			return unreachableError(run(cmd, args))
		}
	}
}

// unreachableError rewords a request that got no answer (refused, no such host, timed
// out, TLS) as "cannot reach the server at URL: why", keeping what the command wrapped
// around it (an export's --cursor to continue with) and the error itself for errors.Is.
// Errors the server answered, and an interrupt, pass as they are.
func unreachableError(err error) error {
	var ue *url.Error
	if err == nil || !errors.As(err, &ue) || errors.Is(err, context.Canceled) {
		return err
	}
	server := ue.URL
	if u, perr := url.Parse(ue.URL); perr == nil {
		server = u.Scheme + "://" + u.Host
	}
	why := ue.Err.Error()
	var dns *net.DNSError
	var errno syscall.Errno
	switch {
	case errors.As(ue.Err, &dns):
		why = "no host is named " + dns.Name
		if !dns.IsNotFound {
			why = "looking up " + dns.Name + " failed: " + dns.Err
		}
	case ue.Timeout():
		why = "no answer in time"
	case errors.As(ue.Err, &errno):
		why = errno.Error()
	}
	plain := "cannot reach the server at " + server + " (" + why + "): is it running, and is that its address (--server, VOICEAPI_SERVER)?"
	return &reworded{msg: strings.Replace(err.Error(), ue.Error(), plain, 1), err: err}
}

// reworded is an error with a message of its own in place of err's.
type reworded struct {
	msg string
	err error
}

func (r *reworded) Error() string { return r.msg }
func (r *reworded) Unwrap() error { return r.err }
