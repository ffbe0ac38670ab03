package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/voiceapi/voiceapi/client"
)

// wordRemoteErrors makes every command that calls a running server (those with --server)
// say plainly that the server could not be reached, or that what answered is not
// voiceapi. The HTTP client's own message for the first is a Go error chain (`Get
// "http://localhost:8080/api/v1/jobs?per_page=100": dial tcp 127.0.0.1:8080: connect:
// connection refused`) naming a request the user never wrote; for the second, the
// first 200 bytes of a proxy's HTML page.
func wordRemoteErrors(root *cobra.Command) {
	for _, cmd := range root.Commands() {
		wordRemoteErrors(cmd)
		server := cmd.Flags().Lookup("server")
		if cmd.RunE == nil || server == nil {
			continue
		}
		run := cmd.RunE
		cmd.RunE = func(cmd *cobra.Command, args []string) error {
			return notVoiceapiError(unreachableError(run(cmd, args)), server.Value.String())
		}
	}
}

// notVoiceapiError rewords an answer that is not in voiceapi's error shape (a proxy's
// 502 page, another program on the port: the client's code http_<status>) as what it is,
// with the page's text on one line.
func notVoiceapiError(err error, server string) error {
	var ce *client.Error
	if !errors.As(err, &ce) || !strings.HasPrefix(ce.Code, "http_") {
		return err
	}
	text := oneLine(htmlTag.ReplaceAllString(ce.Message, " "), 100)
	msg := fmt.Sprintf("the server at %s answered %d %s with a page that is not voiceapi's (%s): is that the address of a voiceapi server (--server, VOICEAPI_SERVER), and is it up?",
		strings.TrimRight(server, "/"), ce.StatusCode, http.StatusText(ce.StatusCode), text)
	return &reworded{msg: strings.Replace(err.Error(), ce.Error(), msg, 1), err: err}
}

var htmlTag = regexp.MustCompile(`<[^>]*>`)

// unreachableError rewords a request that got no answer (refused, no such host, timed
// out, TLS) as "cannot reach the server at URL: why", keeping what the command wrapped
// around it (an export's --cursor to continue with) and the error itself for errors.Is.
// Errors the server answered, an interrupt and a command's own --timeout pass as they are.
func unreachableError(err error) error {
	var ue *url.Error
	if err == nil || !errors.As(err, &ue) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
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
